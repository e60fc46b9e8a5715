import sys, numpy as np
sys.path.insert(0, '/tmp/rt14/gen')
from h import *
rng = np.random.default_rng(3)
for dt, T in [(np.float32, TP.FLOAT), (np.float16, TP.FLOAT16)]:
    for shp, G in [((2, 6), 3), ((2, 6, 1), 2), ((2, 4, 3), 4), ((2, 4, 3), 1), ((1, 4, 2, 2, 2), 2)]:
        C = shp[1]
        x = (rng.standard_normal(shp) * 2 + 1).astype(dt)
        m = model([oh.make_node('GroupNormalization', ['x', 's', 'b'], ['y'], num_groups=G, epsilon=1e-3)], [vi('x', T, list(shp))], [vi('y', T, list(shp))],
                  [nh.from_array(rng.standard_normal(C).astype(dt), 's'), nh.from_array(rng.standard_normal(C).astype(dt), 'b')], opset=21)
        check(f'GN21_{np.dtype(dt).name}_{shp}_G{G}'.replace(' ', ''), m, {'x': x}, tol=(1e-4, 1e-5) if dt == np.float32 else (3e-3, 1e-3), vs_ref=True)
x = rng.standard_normal((2, 1, 3, 4)).astype(np.float32); y = rng.standard_normal((3, 4, 2)).astype(np.float32)
m = model([oh.make_node('Einsum', ['a', 'b'], ['y'], equation='...ij,...jk->...ik')], [vi('a', TP.FLOAT, [2, 1, 3, 4]), vi('b', TP.FLOAT, [3, 4, 2])], [vi('y', TP.FLOAT, [2, 3, 3, 2])], opset=12)
check('Einsum_ellipsis_bcast', m, {'a': x, 'b': y})
