import numpy as np, onnx, fusor, sys
x = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)[::2, ::2]
W = np.arange(12, dtype=np.float32).reshape(4, 3)
print('strided numpy', (x @ W.T + 1).ravel()[:4])
m = onnx.load('/tmp/rt11/repro/R11-F7/small/model.onnx')
s = fusor.Session(m.SerializeToString(), backend=sys.argv[1])
r = s.run(None, {'s0': np.random.default_rng(0).standard_normal((1000, 3)).astype(np.float32), 'xs': np.ones((1, 4, 3), np.float32)})
print('scan8 small: rows past batch 1 of sf (should be an error):', r[0][1:3])
