"""Out-of-range Gather index: the error names an internal node / the wrong layer.
Gather(d[4,2], Reshape(ids[6] -> [2,3]), axis=1) with an index 2 (dim is 2)"""
import sys, numpy as np, onnx
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from h import *
m = model([oh.make_node('Reshape', ['ids', 'shp'], ['r']), oh.make_node('Gather', ['d', 'r'], ['y'], axis=1, name='my_gather')],
          [vi('d', TP.FLOAT, [4, 2]), vi('ids', TP.INT64, [6])], [vi('y', TP.FLOAT, None)], [nh.from_array(np.array([2, 3], np.int64), 'shp')], opset=13)
d = '/tmp/rt13/cases/gather_oob_msg'; save(d, m, dict(d=np.ones((4, 2), np.float32), ids=np.array([0, 1, -1, 2, 0, 0], np.int64)))
for b in ['ref', 'cpu', 'vulkan']:
    rc, err, _, _ = run_fusor(d, b); print(b, rc, err.splitlines()[-1])
