import sys, numpy as np
sys.path.insert(0, '/tmp/rt14/gen')
from h import *
x = np.arange(15, dtype=np.float32).reshape(3, 5)
for ax, c in [(0, [1, 0, 1, 0, 0]), (None, [0] * 15 + [0, 0])]:
    kw = {} if ax is None else dict(axis=ax)
    m = model([oh.make_node('Compress', ['x', 'c'], ['y'], **kw)], [vi('x', TP.FLOAT, [3, 5]), vi('c', TP.BOOL, [len(c)])], [vi('y', TP.FLOAT, None)], opset=11)
    f, res = check(f'Compress_long_false_ax{ax}', m, {'x': x, 'c': np.array(c, bool)})
    for b in res: print('  ', b, res[b][0], res[b][1][:150])
