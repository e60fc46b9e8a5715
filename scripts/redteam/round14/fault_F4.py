# F4: Compress with a condition LONGER than the axis whose extra entries are all False.
# axis=0, x [3, 5], condition [1, 0, 1, 0, 0]: onnxruntime 1.32, numpy.compress and onnx.reference give rows 0 and 2;
# fusor refuses on every backend: "[shape] node 'Compress_0' (Compress): condition has 5 entries, axis has 3",
# while the same over-long condition WITHOUT axis (flattened, 17 entries for 15 elements) is accepted.
import numpy as np, onnx, os
from onnx import helper as oh, numpy_helper as nh, TensorProto as TP
d = os.path.dirname(os.path.abspath(__file__))
x = np.arange(15, dtype=np.float32).reshape(3, 5)
for name, kw, c in [('axis0', dict(axis=0), [1, 0, 1, 0, 0]), ('flat', {}, [1] + [0] * 16)]:
    g = oh.make_graph([oh.make_node('Compress', ['x', 'c'], ['y'], **kw)], 'g', [oh.make_tensor_value_info('x', TP.FLOAT, [3, 5])],
                      [oh.make_tensor_value_info('y', TP.FLOAT, None)], [nh.from_array(np.array(c, bool), 'c')])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 11)]); m.ir_version = 7
    dd = f'{d}/{name}'; os.makedirs(f'{dd}/inputs', exist_ok=True); onnx.save(m, f'{dd}/model.onnx')
    open(f'{dd}/inputs/input_0.pb', 'wb').write(nh.from_array(x, 'x').SerializeToString())
    import onnxruntime as ort
    so = ort.SessionOptions(); so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    print(name, 'onnxruntime:', ort.InferenceSession(f'{dd}/model.onnx', so).run(None, {'x': x})[0].tolist())
