"""RotaryEmbedding-23 with a negative position id: ref refuses, cpu / vulkan run and return numbers.
usage: python rope_negpos.py  (writes /tmp/rt13/cases/rope_negpos/, prints each backend's result)"""
import sys, numpy as np, onnx
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from h import *
X = np.ones((1, 1, 3, 4), np.float32)                    # [B, H, S, D], D = 4 -> cache width 2
C = (np.arange(10 * 2, dtype=np.float32).reshape(10, 2) + 1) / 100   # cos cache rows 0..9: 0.01.. 0.2
S = -C                                                   # sin cache
P = np.array([[0, -1, 2]], np.int64)                     # position -1
m = model([oh.make_node('RotaryEmbedding', ['X', 'C', 'S', 'P'], ['Y'])],
          [vi('X', TP.FLOAT, [1, 1, 3, 4]), vi('C', TP.FLOAT, [10, 2]), vi('S', TP.FLOAT, [10, 2]), vi('P', TP.INT64, [1, 3])],
          [vi('Y', TP.FLOAT, None)], opset=23)
d = '/tmp/rt13/cases/rope_negpos'; feeds = dict(X=X, C=C, S=S, P=P); save(d, m, feeds)
try: print('ORT:', ort_run(m, feeds)[0][0, 0])
except Exception as ex: print('ORT error:', str(ex)[:160])
for b in ['ref', 'cpu', 'vulkan']:
    rc, err, outs, _ = run_fusor(d, b)
    print(f'fusor {b}: rc={rc}', outs[0][0, 0].tolist() if rc == 0 else err)
for big in [10, 2**31, -11, -(2**40)]:
    P2 = np.array([[0, big, 2]], np.int64); feeds['P'] = P2; save(d + f'_{big}', m, feeds)
    print('pos', big, [(b, (lambda r: (r[0], r[2][0][0, 0, 1].tolist() if r[0] == 0 else r[1][-90:]))(run_fusor(d + f'_{big}', b))) for b in ['ref', 'cpu', 'vulkan']])
