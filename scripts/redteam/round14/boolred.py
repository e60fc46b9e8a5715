import sys, numpy as np
sys.path.insert(0, '/tmp/rt14/gen')
from h import *
from hb import I
rng = np.random.default_rng(8)
for op in ['ReduceMax', 'ReduceMin']:
    for shp, axes in [((3, 4), [1]), ((3, 4), [0]), ((3, 4), None), ((3, 0), [1]), ((0, 4), [0]), ((2, 3, 4), [0, 2]), ((3, 4), [])]:
        for kd in [0, 1]:
            x = rng.integers(0, 2, shp).astype(bool)
            if shp == (3, 4): x[1] = True; x[2] = False
            ins = ['xn'] + (['ax'] if axes is not None else [])
            nodes = [oh.make_node('Not', ['x'], ['xn']), oh.make_node(op, ins, ['r'], keepdims=kd), oh.make_node('Not', ['r'], ['y'])]
            f = np.max if op == 'ReduceMax' else np.min
            xn = ~x
            if x.size == 0 or (axes is not None and any(shp[a] == 0 for a in axes)):
                ident = False if op == 'ReduceMax' else True
                ax = tuple(axes) if axes else None
                e = np.full(np.sum(np.zeros(shp), axis=ax, keepdims=bool(kd)).shape, ident)
            else:
                e = f(xn, axis=tuple(axes) if axes else None, keepdims=bool(kd))
            e = ~np.asarray(e)
            m = model(nodes, [vi('x', TP.BOOL, list(shp))], [vi('y', TP.BOOL, None)], [I('ax', axes)] if axes is not None else [], opset=20)
            check(f'bool_{op}_{shp}_{axes}_kd{kd}'.replace(' ', ''), m, {'x': x}, exp=[e])
