"""usage: fuzz.py KIND SEED0 N [backends]  -> appends lines to /tmp/rt12/results_KIND.tsv; failing cases kept in /tmp/rt12/fz/"""
import os, sys, shutil, subprocess, warnings, json, time, numpy as np, onnx
warnings.filterwarnings('ignore')
sys.path.insert(0, os.path.dirname(__file__))
import rgen, ml_dtypes
from onnx import numpy_helper as nh
ROOT = '/tmp/rt12'
FUSOR = os.environ.get('FUSOR', '/tmp/rt12/fusor')
ENV = dict(os.environ, VK_DRIVER_FILES='/usr/share/vulkan/icd.d/lvp_icd.x86_64.json')
TOL = {'f32': (1e-4, 1e-5), 'f64': (1e-7, 1e-10), 'f16': (4e-3, 2e-3), 'bf16': (2.4e-2, 1.6e-2)}


def ort_run(m, feeds):
    import onnxruntime as ort
    so = ort.SessionOptions(); so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 4
    s = ort.InferenceSession(m.SerializeToString(), so, providers=['CPUExecutionProvider'])
    return s.run(None, feeds)


def refev(m, feeds):
    from onnx.reference import ReferenceEvaluator
    return ReferenceEvaluator(m).run(None, feeds)


def oracle(m, feeds):
    try: return ort_run(m, feeds), 'ort'
    except Exception as e:
        try: return refev(m, feeds), 'onnxref'
        except Exception as e2: return None, f'ORTERR {str(e)[:150]} | REFERR {str(e2)[:150]}'


def save(d, m, feeds, exp=None):
    if os.path.exists(d): shutil.rmtree(d)
    os.makedirs(os.path.join(d, 'inputs'))
    onnx.save(m, os.path.join(d, 'model.onnx'))
    for k, i in enumerate(m.graph.input):
        with open(os.path.join(d, 'inputs', f'input_{k}.pb'), 'wb') as f:
            f.write(nh.from_array(np.asarray(feeds[i.name]), i.name).SerializeToString())
    if exp is not None: np.savez(os.path.join(d, 'expected.npz'), *[np.asarray(e) for e in exp])


def run_fusor(d, backend):
    out = os.path.join(d, 'out_' + backend)
    if os.path.exists(out): shutil.rmtree(out)
    os.makedirs(out)
    cmd = ['timeout', '-s', 'KILL', '60', 'prlimit', f'--as={6 * 1024 ** 3}', FUSOR, 'run', d, '--backend', backend,
           '--inputs', os.path.join(d, 'inputs'), '--out', out]
    t = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True, env=ENV, errors='replace')
    outs = []; k = 0
    while os.path.exists(os.path.join(out, f'output_{k}.pb')):
        tp = onnx.TensorProto(); tp.ParseFromString(open(os.path.join(out, f'output_{k}.pb'), 'rb').read())
        outs.append(nh.to_array(tp)); k += 1
    return r.returncode, r.stderr.strip(), outs, time.time() - t


def f64(a):
    a = np.asarray(a)
    return a.astype(np.float64)


def cmp_float(got, ref, rtol, atol, extra=None):
    """extra: elementwise allowance (e.g. 4*|ort-ref64|)."""
    g = f64(got); r = f64(ref)
    if g.shape != r.shape: return f'shape {list(g.shape)} vs {list(r.shape)}'
    if g.size == 0: return None
    if np.any(np.isnan(g) != np.isnan(r)): return f'NaN mismatch ({int(np.isnan(g).sum())} vs {int(np.isnan(r).sum())})'
    m = ~np.isnan(r)
    fin = np.isfinite(r) & np.isfinite(g)
    if np.any((~fin & m) & (g != r)): return 'inf mismatch'
    mx = np.abs(r[fin]).max() if fin.any() else 0
    thr = atol * max(1.0, mx) + rtol * np.abs(r)
    if extra is not None: thr = thr + extra
    err = np.where(fin, np.abs(g - r), 0)
    bad = err > thr
    if bad.any():
        j = np.unravel_index(np.argmax(np.where(bad, err - thr, -1)), err.shape)
        return f'{int(bad.sum())}/{g.size} off, worst at {tuple(int(x) for x in j)}: {g[j]:.7g} vs {r[j]:.7g} (maxabs {mx:.3g})'
    return None


def cmp_exact(got, ref):
    g = np.asarray(got); r = np.asarray(ref)
    if g.shape != r.shape: return f'shape {list(g.shape)} vs {list(r.shape)}'
    if g.dtype != r.dtype: return f'dtype {g.dtype} vs {r.dtype}'
    bad = g != r
    if bad.any():
        j = tuple(int(x[0]) for x in np.nonzero(np.atleast_1d(bad)))
        return f'{int(bad.sum())}/{g.size} differ at {j}: {np.atleast_1d(g)[j]} vs {np.atleast_1d(r)[j]}'
    return None


def check_case(d, kind, m, feeds, exp, exp64, backends=('ref', 'cpu', 'vulkan')):
    """returns list of (backend, status, msg)"""
    res = {}; lines = []
    for b in backends:
        rc, err, outs, dt = run_fusor(d, b)
        if rc != 0:
            nl = len(err.splitlines())
            st = 'err' if (rc in (1, 2) and nl == 1) else 'FAULT'
            lines.append((b, st, f'rc={rc} nl={nl} {err[-250:]!r}')); continue
        res[b] = outs
        if len(outs) != len(m.graph.output): lines.append((b, 'WRONG', f'{len(outs)} outputs')); continue
        for k, o in enumerate(outs):
            if kind in ('i32', 'i64'):
                c = cmp_exact(o, exp[k])
            else:
                if o.dtype != rgen.NP[kind] and m.graph.output[k].type.tensor_type.elem_type == rgen.DT[kind]:
                    lines.append((b, 'WRONG', f'out{k} dtype {o.dtype}')); continue
                rt, at = TOL[kind]
                extra = None
                if exp is not None and kind != 'f64':
                    e = f64(exp[k]); r = f64(exp64[k])
                    if e.shape == r.shape: extra = 4 * np.nan_to_num(np.abs(e - r), nan=0, posinf=0)
                c = cmp_float(o, exp64[k], rt, at, extra)
            if c: lines.append((b, 'WRONG', f'out{k}: {c}'))
    bs = list(res)
    for b in bs:
        if b == 'ref' or 'ref' not in res: continue
        for k, (o, e) in enumerate(zip(res[b], res['ref'])):
            if kind in ('i32', 'i64'): c = cmp_exact(o, e)
            else:
                rt, at = TOL[kind]
                c = cmp_float(o, e, rt, at)
            if c: lines.append((b, 'DISAGREE', f'out{k} vs ref: {c}'))
    return lines


def one(kind, seed, backends=('ref', 'cpu', 'vulkan'), keep_ok=False):
    s = rgen.gen(seed, kind)
    m, feeds = rgen.build(s, kind)
    try: onnx.checker.check_model(m, full_check=True)
    except Exception as e: return [('-', 'GENBAD', f'checker: {str(e)[:200]}')], s
    d = os.path.join(ROOT, 'fz', f'{kind}_{seed}')
    exp = exp64 = None; src = ''
    if kind in ('i32', 'i64'):
        exp, src = oracle(m, feeds)
        if exp is None: return [('-', 'GENBAD', src)], s
    else:
        m64, f64d = rgen.build(s, 'f64')
        exp64, src = oracle(m64, f64d)
        if exp64 is None: return [('-', 'GENBAD', 'f64 ' + src)], s
        if kind != 'bf16':
            exp, src2 = oracle(m, feeds)
            if exp is None and kind != 'f16': return [('-', 'GENBAD', src2)], s
            # conditioning: ORT (kind) vs f64 oracle must roughly agree, else skip
            if exp is not None and kind == 'f32':
                for e, r in zip(exp, exp64):
                    c = cmp_float(e, r, 1e-2, 1e-3)
                    if c: return [('-', 'ILLCOND', c)], s
        if any(not np.all(np.isfinite(f64(r))) for r in exp64):
            return [('-', 'NONFINITE', '')], s
    save(d, m, feeds, exp if exp is not None else exp64)
    if exp64 is not None: np.savez(os.path.join(d, 'expected64.npz'), *[np.asarray(e) for e in exp64])
    lines = check_case(d, kind, m, feeds, exp, exp64, backends)
    if not lines and not keep_ok: shutil.rmtree(d)
    return lines or [('all', 'ok', '')], s


if __name__ == '__main__':
    kind, s0, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    bks = tuple(sys.argv[4].split(',')) if len(sys.argv) > 4 else ('ref', 'cpu', 'vulkan')
    with open(f'{ROOT}/results_{kind}.tsv', 'a') as f:
        for seed in range(s0, s0 + n):
            t = time.time()
            try: lines, s = one(kind, seed, bks)
            except Exception as e:
                lines = [('-', 'HARNESS', repr(e)[:200])]; s = None
            ops = ','.join(sorted({n.op_type for n in s.nodes})) if s else ''
            for b, st, msg in lines:
                l = f'{kind}\t{seed}\t{b}\t{st}\t{msg}\t{len(s.nodes) if s else 0}n op{s.opset if s else 0}\t{ops}'
                f.write(l + '\n'); f.flush()
                if st not in ('ok',): print(l, flush=True)
            print(f'# {kind} {seed} {time.time() - t:.1f}s', file=sys.stderr, flush=True)
