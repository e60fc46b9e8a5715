"""harness for round 13: build -> save -> run ref/cpu/vulkan -> compare"""
import os, sys, shutil, subprocess, warnings, time, numpy as np, onnx, ml_dtypes
from onnx import helper as oh, numpy_helper as nh, TensorProto as TP
warnings.filterwarnings('ignore')
ROOT = os.environ.get('RT14_ROOT', '/tmp/rt14')
FUSOR = os.environ.get('FUSOR_BIN', '/tmp/rt14/bin/fusor')
ENV = dict(os.environ, VK_DRIVER_FILES='/usr/share/vulkan/icd.d/lvp_icd.x86_64.json')
BACKENDS = ['ref', 'cpu', 'vulkan']


def ort_run(m, feeds):
    import onnxruntime as ort
    so = ort.SessionOptions(); so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 4; so.intra_op_num_threads = 1
    s = ort.InferenceSession(m.SerializeToString(), so, providers=['CPUExecutionProvider'])
    return s.run(None, feeds)


def save(d, m, feeds):
    if os.path.exists(d): shutil.rmtree(d)
    os.makedirs(os.path.join(d, 'inputs'))
    onnx.save(m, os.path.join(d, 'model.onnx'))
    for k, i in enumerate(m.graph.input):
        with open(os.path.join(d, 'inputs', f'input_{k}.pb'), 'wb') as f:
            f.write(nh.from_array(np.asarray(feeds[i.name]), i.name).SerializeToString())


def run_fusor(d, backend, timeout=120):
    out = os.path.join(d, 'out_' + backend)
    if os.path.exists(out): shutil.rmtree(out)
    os.makedirs(out)
    cmd = ['timeout', '-s', 'KILL', str(timeout), 'prlimit', f'--as={6 * 1024 ** 3}', FUSOR, 'run', d, '--backend', backend,
           '--out', out] + (['--inputs', os.path.join(d, 'inputs')] if os.listdir(os.path.join(d, 'inputs')) else [])
    t = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True, env=ENV, errors='replace')
    outs = []; k = 0
    while os.path.exists(os.path.join(out, f'output_{k}.pb')):
        tp = onnx.TensorProto(); tp.ParseFromString(open(os.path.join(out, f'output_{k}.pb'), 'rb').read())
        outs.append(nh.to_array(tp)); k += 1
    return r.returncode, r.stderr.strip(), outs, time.time() - t


def cmp(got, exp, rtol, atol, extra=None):
    g = np.asarray(got); e = np.asarray(exp)
    if g.shape != e.shape: return f'shape {list(g.shape)} vs {list(e.shape)}'
    if g.dtype != e.dtype and not (g.dtype.kind == e.dtype.kind == 'f'):
        if str(g.dtype) != str(e.dtype): return f'dtype {g.dtype} vs {e.dtype}'
    if g.size == 0: return None
    if g.dtype.kind in 'iub':
        bad = g != e
        if bad.any():
            j = np.unravel_index(np.argmax(bad), g.shape)
            return f'{int(bad.sum())}/{g.size} differ, first at {j}: {g[j]} vs {e[j]}'
        return None
    g = g.astype(np.float64); e = e.astype(np.float64)
    if np.any(np.isnan(g) != np.isnan(e)): return f'NaN mismatch ({int(np.isnan(g).sum())} vs {int(np.isnan(e).sum())})'
    fin = np.isfinite(e) & np.isfinite(g)
    m = ~np.isnan(e)
    if np.any((~fin & m) & (g != e)): return 'inf mismatch'
    mx = np.abs(e[fin]).max() if fin.any() else 0
    thr = atol * max(1.0, mx) + rtol * np.abs(e)
    if extra is not None: thr = thr + extra
    err = np.where(fin, np.abs(g - e), 0)
    bad = err > thr
    if bad.any():
        j = np.unravel_index(np.argmax(np.where(bad, err - thr, -1)), err.shape)
        return f'{int(bad.sum())}/{g.size} off, worst at {tuple(int(x) for x in j)}: {g[j]:.7g} vs {e[j]:.7g} (maxabs {mx:.3g})'
    return None


def check(name, m, feeds, exp=None, tol=(1e-5, 1e-6), btol=None, backends=BACKENDS, quiet=False, expect_error=False, extra=None, vs_ref=False):
    """exp: list of expected arrays (oracle); if None use ORT. tol: ref vs oracle; btol: backend vs ref."""
    d = os.path.join(ROOT, 'runs', name)
    save(d, m, feeds)
    if exp is None:
        try: exp = ort_run(m, feeds)
        except Exception as ex: exp = None; orterr = str(ex)[:200]
    btol = btol or tol
    faults = []
    res = {}
    for b in backends:
        rc, err, outs, dt = run_fusor(d, b)
        res[b] = (rc, err, outs)
        if rc != 0:
            if expect_error:
                if rc not in (1, 2) or len(err.splitlines()) > 3 or 'internal' in err:
                    faults.append(f'{b}: rc={rc} unclear error: {err[:300]}')
                continue
            faults.append(f'{b}: rc={rc} err={err[:400]}')
            continue
        if expect_error:
            faults.append(f'{b}: ran OK, expected an error (outs {[o.shape for o in outs]})')
            continue
        if b == 'ref':
            if exp is not None:
                for k, (o, e) in enumerate(zip(outs, exp)):
                    c = cmp(o, e, *tol, extra=extra[k] if extra else None)
                    if c: faults.append(f'ref vs oracle out{k}: {c}')
        else:
            if res['ref'][0] == 0 and (exp is None or vs_ref):
                for k, (o, e) in enumerate(zip(outs, res['ref'][2])):
                    c = cmp(o, e, *btol, extra=extra[k] if extra else None)
                    if c: faults.append(f'{b} vs ref out{k}: {c}')
            elif exp is not None:
                for k, (o, e) in enumerate(zip(outs, exp)):
                    c = cmp(o, e, *tol, extra=extra[k] if extra else None)
                    if c: faults.append(f'{b} vs oracle out{k}: {c}')
    tag = 'FAULT' if faults else 'ok'
    if faults or not quiet:
        print(f'[{tag}] {name}', *faults, sep='\n    ', flush=True)
    return faults, res


def vi(name, dt, shape):
    return oh.make_tensor_value_info(name, dt, shape)


def model(nodes, inputs, outputs, inits=(), opset=17, name='g'):
    g = oh.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = oh.make_model(g, opset_imports=[oh.make_opsetid('', opset)])
    m.ir_version = 8 if opset < 21 else 10
    return m


def to_f64(m):
    """copy of an f32 model computed in float64"""
    m2 = onnx.ModelProto(); m2.CopyFrom(m)
    g = m2.graph
    for v in list(g.input) + list(g.output) + list(g.value_info):
        if v.type.tensor_type.elem_type == TP.FLOAT: v.type.tensor_type.elem_type = TP.DOUBLE
    for t in g.initializer:
        if t.data_type == TP.FLOAT:
            t.CopyFrom(nh.from_array(nh.to_array(t).astype(np.float64), t.name))
    for n in g.node:
        for a in n.attribute:
            if a.name == 'to' and a.i == TP.FLOAT: a.i = TP.DOUBLE
            if a.name == 'value' and a.t.data_type == TP.FLOAT:
                a.t.CopyFrom(nh.from_array(nh.to_array(a.t).astype(np.float64)))
    return m2


def oracle64(m, feeds, k=4.0, floor=1e-6):
    """returns (exp64 as f32-typed arrays, extra allowance list)"""
    e32 = ort_run(m, feeds)
    f64 = {n: (v.astype(np.float64) if v.dtype == np.float32 else v) for n, v in feeds.items()}
    e64 = ort_run(to_f64(m), f64)
    extra = []
    for a, b in zip(e32, e64):
        if a.dtype.kind == 'f':
            d = np.abs(a.astype(np.float64) - b); d[~np.isfinite(d)] = 0
            mx = np.abs(b[np.isfinite(b)]).max() if np.isfinite(b).any() else 0
            extra.append(k * (d.max() if d.size else 0) + floor * max(1, mx))
        else: extra.append(None)
    return [b.astype(np.float32) if b.dtype == np.float64 else b for b in e64], extra
