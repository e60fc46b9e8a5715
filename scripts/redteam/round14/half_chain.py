import sys, numpy as np, ml_dtypes
sys.path.insert(0, '/tmp/rt14/gen')
from h import *
rng = np.random.default_rng(31)
for dt, T in [(np.float16, TP.FLOAT16), (ml_dtypes.bfloat16, TP.BFLOAT16)]:
    for g, pads, st in [(1, [1, 1, 1, 1], [1, 1]), (4, [0, 1, 2, 0], [2, 1]), (2, [1, 0, 0, 1], [1, 2])]:
        x = rng.standard_normal((1, 4, 7, 6)).astype(dt); w = (rng.standard_normal((4, 4 // g, 3, 3)) * 0.5).astype(dt); b = rng.standard_normal(4).astype(dt)
        c = rng.standard_normal((4, 1, 1)).astype(dt)
        nodes = [oh.make_node('Conv', ['x', 'w', 'b'], ['cv'], group=g, pads=pads, strides=st), oh.make_node('Add', ['cv', 'c'], ['a']), oh.make_node('Relu', ['a'], ['r']),
                 oh.make_node('Mul', ['r', 'cv'], ['m']), oh.make_node('MaxPool', ['m'], ['mp', 'idx'], kernel_shape=[2, 2], pads=[0, 0, 1, 1], strides=[2, 2], ceil_mode=1),
                 oh.make_node('AveragePool', ['cv'], ['ap'], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=0), oh.make_node('Sigmoid', ['ap'], ['y2'])]
        m = model(nodes, [vi('x', T, list(x.shape))], [vi('mp', T, None), vi('idx', TP.INT64, None), vi('y2', T, None), vi('cv', T, None)],
                  [nh.from_array(w, 'w'), nh.from_array(b, 'b'), nh.from_array(c, 'c')], opset=19)
        # backend vs ref: allow 2 ulp-ish (fp16 1e-3 rel, bf16 8e-3)
        tol = (2e-3, 1e-3) if dt == np.float16 else (1.6e-2, 8e-3)
        check(f'halfchain_{np.dtype(dt).name}_g{g}', m, {'x': x}, exp=None, tol=tol, vs_ref=True)
