"""embedding lookup through Reshape then scaled and fed to MatMul (tied weights: logits = h @ W^T)"""
import sys, numpy as np, onnx
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from h import *
from mm import G
F = TP.FLOAT
n = 0
for V, E_, B, S in [(50, 16, 2, 7), (1000, 64, 1, 65), (7, 3, 3, 1), (300, 80, 2, 33)]:
    for idt in [TP.INT64, TP.INT32]:
        for dt, npd in [(TP.FLOAT, np.float32), (TP.FLOAT16, np.float16)]:
            for ax in [0, 1]:
                n += 1; R = np.random.default_rng(n)
                g = G(R)
                W = R.standard_normal((V, E_) if ax == 0 else (E_, V)).astype(npd)
                wn = g.c(W, 'W')
                ids_flat = g.node('Reshape', ['ids', g.c(np.array([-1], np.int64))])
                e = g.node('Gather', [wn, ids_flat], axis=ax)               # [B*S, E] or [E, B*S]
                if ax == 1: e = g.node('Transpose', [e], perm=[1, 0])
                e = g.node('Reshape', [e, g.c(np.array([B, S, E_], np.int64))])
                h = g.node('Mul', [e, g.c(np.array(np.sqrt(E_), npd))])
                wt = g.node('Transpose', [wn], perm=[1, 0]) if ax == 0 else wn
                logits = g.node('MatMul', [h, wt])
                p = g.node('Softmax', [logits], axis=-1)
                m = model(g.nodes, [vi('ids', idt, [B, S])], [vi(p, dt, None), vi(logits, dt, None)], g.inits, opset=17)
                ids = R.integers(-V, V, (B, S)).astype(np.int64 if idt == TP.INT64 else np.int32)
                feeds = dict(ids=ids)
                if dt == TP.FLOAT: exp, extra = oracle64(m, feeds, k=8); tol = (1e-5, 1e-6)
                else: exp, extra = ort_run(m, feeds), None; tol = (4e-3, 2e-3)
                f, _ = check(f'emb_{n}', m, feeds, exp=exp, extra=extra, tol=tol, quiet=True)
                if f: print('   ', V, E_, B, S, idt, dt, ax)
print('done', n)
