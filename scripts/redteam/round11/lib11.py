"""Round-10 red-team harness: save a case (model + inputs + onnxruntime's outputs), run fusor
on ref/cpu/vulkan through the CLI (timeout 60 s, 6 GiB), compare."""
import os, sys, json, subprocess, warnings, numpy as np, onnx
warnings.filterwarnings('ignore')
from onnx import numpy_helper as nh
ROOT = os.environ.get('RT11', '/tmp/rt11')
FUSOR = os.environ.get('FUSOR', '/work/main/build/fusor')
ENV = dict(os.environ, VK_DRIVER_FILES='/usr/share/vulkan/icd.d/lvp_icd.x86_64.json')

def ort_run(path, feeds):
    import onnxruntime as ort
    so = ort.SessionOptions(); so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    s = ort.InferenceSession(path, so, providers=['CPUExecutionProvider'])
    names = [i.name for i in s.get_inputs()]
    return s.run(None, {n: feeds[n] for n in names})

def save_case(name, model, feeds, expected=None, run_ort=True):
    """model: ModelProto or path. feeds: dict name->array in graph-input order."""
    d = os.path.join(ROOT, 'models', name); os.makedirs(os.path.join(d, 'inputs'), exist_ok=True)
    p = os.path.join(d, 'model.onnx')
    if isinstance(model, str):
        if os.path.abspath(model) != p: import shutil; shutil.copy(model, p)
        m = onnx.load(p, load_external_data=False)
    else:
        m = model
        if m.ByteSize() > 1.8e9: onnx.save(m, p, save_as_external_data=True)
        else: onnx.save(m, p)
    inits = {i.name for i in m.graph.initializer}
    gin = [i.name for i in m.graph.input if i.name not in inits]
    for k, n in enumerate(gin):
        with open(os.path.join(d, 'inputs', f'input_{k}.pb'), 'wb') as f:
            f.write(nh.from_array(np.asarray(feeds[n]), n).SerializeToString())
    if expected is None and run_ort:
        try: expected = ort_run(p, feeds)
        except Exception as e:
            open(os.path.join(d, 'ort_error.txt'), 'w').write(str(e)); expected = None
            try:
                from onnx.reference import ReferenceEvaluator
                mm = onnx.load(p); expected = ReferenceEvaluator(mm).run(None, {k: feeds[k] for k in gin})
                open(os.path.join(d, 'expected_from_onnx_reference'), 'w').write('onnx.reference')
            except Exception as e2: expected = None
    if expected is not None:
        np.savez(os.path.join(d, 'expected.npz'), *[np.asarray(e) for e in expected])
    return d

def run_fusor(d, backend, extra=(), outname=None):
    out = os.path.join(ROOT, 'out', os.path.basename(d), outname or backend)
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out): os.remove(os.path.join(out, f))
    ind = os.path.join(d, 'inputs')
    inp = ['--inputs', ind] if os.path.isdir(ind) and os.listdir(ind) else []
    cmd = ['timeout', '-s', 'KILL', '60', 'prlimit', f'--as={6*1024**3}', FUSOR, 'run', d,
           '--backend', backend, *inp, '--out', out, *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, env=ENV, errors='replace')
    outs = []
    k = 0
    while os.path.exists(os.path.join(out, f'output_{k}.pb')):
        t = onnx.TensorProto(); t.ParseFromString(open(os.path.join(out, f'output_{k}.pb'), 'rb').read())
        outs.append(nh.to_array(t)); k += 1
    return r.returncode, r.stderr.strip(), outs

def tol_for(dt):
    dt = np.dtype(dt)
    if dt == np.float64: return 1e-9, 1e-12
    if dt == np.float32: return 2e-4, 2e-5
    if dt == np.float16: return 4e-3, 2e-3
    if dt.name == 'bfloat16': return 3e-2, 1e-2
    return 0, 0

def compare(a, b, rtol=None, atol=None):
    """None when equal within tolerance, else a short string."""
    a = np.asarray(a); b = np.asarray(b)
    if a.shape != b.shape: return f'shape {list(a.shape)} vs {list(b.shape)}'
    if a.dtype != b.dtype: return f'dtype {a.dtype} vs {b.dtype}'
    if a.size == 0: return None
    if a.dtype.kind in 'biu' or a.dtype == bool:
        a = np.atleast_1d(a); b = np.atleast_1d(b); bad = np.nonzero(a != b)
        if len(bad[0]): i = tuple(x[0] for x in bad); return f'{len(bad[0])} of {a.size} differ, at {i}: {a[i]} vs {b[i]}'
        return None
    r0, a0 = tol_for(a.dtype); rtol = r0 if rtol is None else rtol; atol = a0 if atol is None else atol
    af = a.astype(np.float64); bf = b.astype(np.float64)
    if np.any(np.isnan(af) != np.isnan(bf)): return f'NaN positions differ ({np.isnan(af).sum()} vs {np.isnan(bf).sum()})'
    m = ~np.isnan(af)
    err = np.abs(af - bf)[m]; scale = np.maximum(np.abs(af[m]), np.abs(bf[m]))
    inf_bad = np.isinf(af[m]) | np.isinf(bf[m])
    err = np.where(inf_bad, np.where(af[m] == bf[m], 0, np.inf), err)
    bad = err > atol + rtol * np.where(inf_bad, 0, scale)
    if bad.any():
        j = np.argmax(np.where(bad, err / (scale + 1e-30), -1))
        return f'{bad.sum()} of {a.size} off, max abs {err.max():.3g} (at {af[m].ravel()[j]:.6g} vs {bf[m].ravel()[j]:.6g}), range {np.abs(af[m]).max():.3g}'
    return None

def check(d, backends=('ref', 'cpu', 'vulkan'), rtol=None, atol=None, extra=()):
    """Run every backend, compare with expected.npz and with each other. Returns list of lines."""
    name = os.path.basename(d); lines = []
    exp = None
    if os.path.exists(os.path.join(d, 'expected.npz')):
        z = np.load(os.path.join(d, 'expected.npz'), allow_pickle=True); exp = [z[f'arr_{i}'] for i in range(len(z.files))]
    res = {}
    for b in backends:
        rc, err, outs = run_fusor(d, b, extra)
        nl = len(err.splitlines())
        if rc != 0:
            kind = 'FAULT' if (rc != 2 or nl != 1) else 'err'
            lines.append(f'{name}\t{b}\t{kind}\trc={rc} nl={nl}\t{err[-300:]!r}')
            continue
        res[b] = outs
        if exp is not None:
            if len(outs) != len(exp): lines.append(f'{name}\t{b}\tWRONG\t{len(outs)} outputs, ort {len(exp)}'); continue
            for k, (o, e) in enumerate(zip(outs, exp)):
                e = np.asarray(e)
                if e.dtype.kind == 'V' and e.dtype.itemsize == 2:
                    import ml_dtypes; e = e.view(ml_dtypes.bfloat16)
                if o.dtype.name in ('bfloat16', 'float16') and e.dtype.name in ('bfloat16', 'float32'):
                    o = o.astype(np.float32); e = e.astype(np.float32)
                c = compare(o, e, rtol, atol)
                if c: lines.append(f'{name}\t{b}\tWRONG\tout{k} vs ort: {c}')
    bs = list(res)
    for b in bs[1:]:
        for k, (o, e) in enumerate(zip(res[b], res[bs[0]])):
            if o.dtype.name == 'bfloat16': o = o.astype(np.float32); e = e.astype(np.float32)
            c = compare(o, e, rtol, atol)
            if c: lines.append(f'{name}\t{b}\tDISAGREE\tout{k} vs {bs[0]}: {c}')
    if not lines: lines.append(f'{name}\tall\tok\t' + ','.join(bs) + (' (no ort)' if exp is None else ''))
    return lines

if __name__ == '__main__':
    # usage: lib10.py DIR... : check each case folder; prints TSV lines
    import concurrent.futures as cf
    dirs = sys.argv[1:]
    with cf.ThreadPoolExecutor(2) as ex:
        for ls in ex.map(check, dirs):
            for l in ls: print(l, flush=True)
