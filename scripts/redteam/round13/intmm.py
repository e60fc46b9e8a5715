"""integer MatMul with wrapping values, unsigned dtypes, Cast prologues"""
import sys, numpy as np, onnx
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from h import *
from mm import G
R = np.random.default_rng(1)
only = sys.argv[1:]

def np_mm(a, b, dt):
    # exact wrapping matmul via python ints
    a = a.astype(object); b = b.astype(object)
    r = np.matmul(a, b)
    bits = np.dtype(dt).itemsize * 8
    signed = np.dtype(dt).kind == 'i'
    def w(x):
        x = int(x) % (1 << bits)
        if signed and x >= 1 << (bits - 1): x -= 1 << bits
        return x
    return np.vectorize(w, otypes=[object])(r).astype(dt)

NPT = {TP.INT32: np.int32, TP.INT64: np.int64, TP.UINT32: np.uint32, TP.UINT64: np.uint64}
for dt in [TP.INT32, TP.INT64, TP.UINT32, TP.UINT64]:
    npd = NPT[dt]
    info = np.iinfo(npd)
    for (M, K, N), rng in [((3, 5, 4), 'big'), ((17, 33, 9), 'big'), ((1, 64, 1), 'mid'), ((65, 7, 65), 'big'), ((2, 3, 2), 'edge')]:
        name = f'intmm_{np.dtype(npd).name}_{M}_{K}_{N}_{rng}'
        if only and name not in only: continue
        if rng == 'big':
            a = R.integers(info.min, info.max, (M, K), dtype=npd, endpoint=True); b = R.integers(info.min, info.max, (K, N), dtype=npd, endpoint=True)
        elif rng == 'mid':
            a = R.integers(0, 70000, (M, K)).astype(npd); b = R.integers(0, 70000, (K, N)).astype(npd)
        else:
            a = np.array([[info.max, info.min, 1], [info.min, info.min, info.max]], npd)[:M, :K]; b = np.array([[info.max, 2], [info.min, 1], [info.max - 1, info.max]], dtype=object).astype(npd)[:K, :N] if info.min == 0 else np.array([[info.max, 2], [info.min, 1], [-1, info.max]], npd)[:K, :N]
        g = G(R)
        # prologue: a + 1 (wraps at max), b * 3
        ap = g.node('Add', ['a', g.c(np.array(1, npd))]); bp = g.node('Mul', ['b', g.c(np.array([3], npd))])
        y = g.node('MatMul', [ap, bp])
        y2 = g.node('MatMul', ['a', 'b'])
        m = model(g.nodes, [vi('a', dt, [M, K]), vi('b', dt, [K, N])], [vi(y, dt, None), vi(y2, dt, None)], g.inits, opset=17)
        a1 = (a.astype(object) + 1); b3 = b.astype(object) * 3
        bits = np.dtype(npd).itemsize * 8
        def wrap(x):
            x = np.vectorize(lambda v: int(v) % (1 << bits), otypes=[object])(x)
            if info.min < 0: x = np.vectorize(lambda v: v - (1 << bits) if v >= 1 << (bits - 1) else v, otypes=[object])(x)
            return x.astype(npd)
        exp = [np_mm(wrap(a1), wrap(b3), npd), np_mm(a, b, npd)]
        try:
            o = ort_run(m, dict(a=a, b=b))
            for k in range(2):
                if not np.array_equal(o[k], exp[k]): print('   (ORT differs from wrap oracle on', name, 'out', k, ')')
        except Exception as ex: print('   (ORT fail', name, str(ex)[:100], ')')
        check(name, m, dict(a=a, b=b), exp=exp, tol=(0, 0))

# Cast prologues: float -> int32 matmul (trunc toward zero), bool -> float, int8 -> float
for M, K, N in [(3, 5, 4), (33, 65, 17)]:
    g = G(R)
    ins = [vi('a', TP.FLOAT, [M, K]), vi('b', TP.INT32, [K, N]), vi('c', TP.BOOL, [M, K]), vi('d', TP.INT8, [K, N])]
    y1 = g.node('MatMul', [g.node('Cast', ['a'], to=TP.INT32), 'b'])
    y2 = g.node('MatMul', [g.node('Cast', ['c'], to=TP.FLOAT), g.node('Cast', ['d'], to=TP.FLOAT)])
    y3 = g.node('MatMul', [g.node('Cast', [g.node('Neg', ['d'])], to=TP.INT64), g.node('Cast', [g.node('Transpose', ['b'], perm=[1, 0])], to=TP.INT64)]) if M == N else None
    m = model(g.nodes, ins, [vi(y1, TP.INT32, None), vi(y2, TP.FLOAT, None)], g.inits, opset=17)
    f = dict(a=(R.standard_normal((M, K)) * 5).astype(np.float32), b=R.integers(-9, 9, (K, N)).astype(np.int32), c=R.random((M, K)) < .5, d=R.integers(-128, 128, (K, N)).astype(np.int8))
    f['d'][0, 0] = -128
    check(f'castpro_{M}_{K}_{N}', m, f, exp=ort_run(m, f), tol=(0, 0))

# Neg of int8 -128 into Cast -> matmul (wrap in int8 before widening)
g = G(R)
y = g.node('MatMul', [g.node('Cast', [g.node('Neg', ['d'])], to=TP.INT32), g.c(np.ones((4, 2), np.int32))])
m = model(g.nodes, [vi('d', TP.INT8, [3, 4])], [vi(y, TP.INT32, None)], g.inits, opset=17)
f = dict(d=np.array([[-128, 127, -1, 0], [5, -128, -128, 1], [0, 0, 0, -128]], np.int8))
check('negint8_cast_mm', m, f, exp=ort_run(m, f), tol=(0, 0))
g = G(R)
y = g.node('MatMul', [g.node('Cast', [g.node('Abs', ['d'])], to=TP.INT32), g.c(np.ones((4, 2), np.int32))])
m = model(g.nodes, [vi('d', TP.INT8, [3, 4])], [vi(y, TP.INT32, None)], g.inits, opset=17)
check('absint8_cast_mm', m, f, exp=ort_run(m, f), tol=(0, 0))
