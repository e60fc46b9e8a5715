import sys, os, glob, numpy as np, onnx, ml_dtypes
# Compares each backend's outputs (run.sh) with ref: ints exactly, floats by NaN, sign of zero and ulp (ULP=-1: 2 for fp16/bf16, 8 f32, 4 f64).
from onnx import numpy_helper as nh
BF16 = np.dtype(ml_dtypes.bfloat16)
_D = os.environ.get('NUMRT', '/tmp/numrt'); OUT = _D + '/out'; MOD = _D + '/models'
def load(d):
    fs = sorted(glob.glob(d + '/output_*.pb'), key=lambda p: int(p.split('_')[-1][:-3]))
    r = []
    for f in fs:
        t = onnx.TensorProto(); t.ParseFromString(open(f, 'rb').read()); r.append(nh.to_array(t))
    return r
IT = {2: np.int16, 4: np.int32, 8: np.int64}
def ordered(a):
    a = np.ascontiguousarray(a)
    i = a.view(IT[a.dtype.itemsize]).astype(np.int64)
    sz = a.dtype.itemsize * 8
    return np.where(i < 0, -(i & ((1 << (sz - 1)) - 1)), i)
def subn(a):
    if a.dtype.kind != 'f' and a.dtype != BF16: return np.zeros(a.shape, bool)
    f = np.abs(a.astype(np.float64)); mn = {2: (2.**-14 if a.dtype == np.float16 else 2.**-126), 4: 2.**-126, 8: 2.**-1022}[a.dtype.itemsize]
    return (f > 0) & (f < mn)
def cmp(r, t, tol_ulp, mask=None):
    """returns list of problems"""
    p = []
    if mask is not None and r.size == mask.size and r.dtype.kind not in 'iub':
        r = r.copy(); t = t.copy(); r.ravel()[mask] = 0; t.ravel()[mask] = 0
    if r.dtype != t.dtype: return [f'dtype {t.dtype} != {r.dtype}']
    if r.shape != t.shape: return [f'shape {t.shape} != {r.shape}']
    if r.dtype.kind in 'iub':
        bad = np.nonzero(r.ravel() != t.ravel())[0]
        if len(bad): p.append(f'{len(bad)} int mismatches, e.g. at {bad[:4]}: ref {r.ravel()[bad[:4]]} got {t.ravel()[bad[:4]]}')
        return p
    rf = r.ravel().astype(np.float64); tf = t.ravel().astype(np.float64)
    rn, tn = np.isnan(rf), np.isnan(tf)
    if (rn != tn).any():
        bad = np.nonzero(rn != tn)[0]; p.append(f'NaN mismatch at {len(bad)}: e.g. idx {bad[:4]} ref {rf[bad[:4]]} got {tf[bad[:4]]}')
    ok = ~rn & ~tn
    zs = ok & (rf == 0) & (tf == 0) & (np.signbit(rf) != np.signbit(tf))
    if zs.any():
        bad = np.nonzero(zs)[0]; p.append(f'sign-of-zero mismatch at {len(bad)}: idx {bad[:6]} ref {rf[bad[:6]]}')
    u = np.abs(ordered(r.ravel()) - ordered(t.ravel()))
    u[~ok] = 0
    if u.max(initial=0) > tol_ulp:
        bad = np.argsort(-u)[:4]
        bad = bad[u[bad] > tol_ulp]
        p.append(f'max ulp {u.max()} (>{tol_ulp}) at {len(np.nonzero(u > tol_ulp)[0])} elems: e.g. idx {bad} ref {rf[bad]} got {tf[bad]}')
    return p
def inputs_of(name):
    d = f'{MOD}/{name}/test_data_set_0'
    r = []
    for f in sorted(glob.glob(d + '/input_*.pb')):
        t = onnx.TensorProto(); t.ParseFromString(open(f, 'rb').read()); r.append(nh.to_array(t))
    return r
def main():
    tol = int(os.environ.get('ULP', '-1'))
    names = sys.argv[1:] or sorted(os.listdir(OUT))
    for n in names:
        res = {}
        for b in ['ref', 'cpu', 'vulkan']:
            rcf = f'{OUT}/{n}/{b}.rc'
            if not os.path.exists(rcf): continue
            rc = int(open(rcf).read().strip() or 99)
            if rc != 0:
                last = open(f'{OUT}/{n}/{b}.log').read().strip().splitlines()[-1:] 
                print(f'{n} {b}: rc={rc} {last}'); continue
            res[b] = load(f'{OUT}/{n}/{b}')
        if 'ref' not in res: continue
        ins = inputs_of(n)
        for b in ['cpu', 'vulkan']:
            if b not in res: continue
            for k, (r, t) in enumerate(zip(res['ref'], res[b])):
                mask = None
                if b == 'vulkan' and os.environ.get('NOSUB', '1') == '1':
                    mask = subn(r).ravel()
                    for a in ins:
                        if a.size == r.size: mask |= subn(a).ravel()
                tl = tol
                if r.dtype.kind == 'f' or r.dtype == BF16:
                    tl = {2: 2, 4: 8, 8: 4}[r.dtype.itemsize] if tol < 0 else tol
                for pr in cmp(r, t, tl, mask): print(f'{n} {b} out{k}: {pr}')
main()
