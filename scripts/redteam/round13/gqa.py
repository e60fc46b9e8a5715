"""GQA as Llama exports it: repeat_kv = Unsqueeze -> Expand -> Reshape, then attention; torch SDPA-style runtime scale"""
import sys, numpy as np, onnx
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from h import *
from mm import G
F = TP.FLOAT
only = sys.argv[1:]

def build(B, Hq, Hkv, S, T, D, variant, R):
    g = G(R)
    rep = Hq // Hkv
    ins = [vi('q', F, [B, Hq, S, D]), vi('k', F, [B, Hkv, T, D]), vi('v', F, [B, Hkv, T, D])]
    def repeat(x):
        if variant['rk'] == 'expand':
            u = g.node('Unsqueeze', [x, g.c(np.array([2], np.int64))])
            e = g.node('Expand', [u, g.c(np.array([B, Hkv, rep, T, D], np.int64))])
            return g.node('Reshape', [e, g.c(np.array([B, Hq, T, D], np.int64))])
        elif variant['rk'] == 'tile':   # interleave differently: Tile then reshape -> (rep, Hkv) order differs! use Concat-repeat semantic of torch repeat_interleave
            u = g.node('Unsqueeze', [x, g.c(np.array([2], np.int64))])
            t = g.node('Tile', [u, g.c(np.array([1, 1, rep, 1, 1], np.int64))])
            return g.node('Reshape', [t, g.c(np.array([B, Hq, T, D], np.int64))])
        else:  # Expand with the repeat axis before Hkv (MQA-like broadcast with [B,1,...])
            u = g.node('Unsqueeze', [x, g.c(np.array([1], np.int64))])
            e = g.node('Expand', [u, g.c(np.array([B, rep, Hkv, T, D], np.int64))])
            return g.node('Reshape', [e, g.c(np.array([B, Hq, T, D], np.int64))])
    kr = repeat('k'); vr = repeat('v')
    if variant['scale'] == 'runtime':  # torch sdpa: scale = 1/sqrt(Shape(q)[-1]) applied sqrt on both sides
        sh = g.node('Shape', ['q']); last = g.node('Slice', [sh, g.c(np.array([-1], np.int64)), g.c(np.array([2 ** 62], np.int64))])
        cf = g.node('Cast', [last], to=F); sc = g.node('Sqrt', [g.node('Div', [g.c(np.array([1.0], np.float32)), g.node('Sqrt', [cf])])])
        qs = g.node('Mul', ['q', sc]); kt = g.node('Mul', [g.node('Transpose', [kr], perm=[0, 1, 3, 2]), sc])
    else:
        qs = 'q'; kt = g.node('Mul', [g.node('Transpose', [kr], perm=[0, 1, 3, 2]), g.c(np.array(1 / np.sqrt(D), np.float32))])
    s = g.node('MatMul', [qs, kt])
    if variant['mask']:
        cm = np.tril(np.ones((S, T), bool), T - S)
        bm = g.node('Expand', [g.c(cm), g.c(np.array([B, 1, S, T], np.int64))])
        add = g.node('Where', [bm, g.c(np.array(0., np.float32)), g.c(np.array(-np.inf, np.float32))])
        s = g.node('Add', [s, add])
    p = g.node('Softmax', [s], axis=-1)
    y = g.node('MatMul', [p, vr])
    y = g.node('Reshape', [g.node('Transpose', [y], perm=[0, 2, 1, 3]), g.c(np.array([B, S, Hq * D], np.int64))])
    outs = [y]
    if variant['kout']: outs.append(kr)
    m = model(g.nodes, ins, [vi(o, F, None) for o in outs], g.inits, opset=17)
    feeds = dict(q=R.standard_normal((B, Hq, S, D)).astype(np.float32), k=R.standard_normal((B, Hkv, T, D)).astype(np.float32), v=R.standard_normal((B, Hkv, T, D)).astype(np.float32))
    return m, feeds

n = 0
for B, Hq, Hkv, S, T, D in [(1, 4, 2, 7, 7, 8), (2, 6, 2, 5, 9, 16), (1, 8, 1, 1, 33, 64), (2, 4, 4, 3, 3, 3), (1, 6, 3, 65, 65, 80), (1, 32, 8, 17, 17, 128)]:
    for rk in ['expand', 'tile', 'expand_outer']:
        for scale in ['const', 'runtime']:
            for mask in [False, True]:
                if S > T and mask: continue
                n += 1
                R = np.random.default_rng(n)
                var = dict(rk=rk, scale=scale, mask=mask, kout=bool(n % 3 == 0))
                name = f'gqa_{n}'
                if only and name not in only: continue
                m, f = build(B, Hq, Hkv, S, T, D, var, R)
                exp, extra = oracle64(m, f, k=8)
                fl, _ = check(name, m, f, exp=exp, extra=extra, tol=(1e-5, 1e-6), quiet=True)
                if fl: print('   ', B, Hq, Hkv, S, T, D, var)
print('done', n)
