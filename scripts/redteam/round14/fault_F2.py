# F2: Pad mode='wrap' (opset 19) with a negative pad on one side of an axis and a positive pad on the other.
# x = [[1,2,3,4]], pads = [0, 3, 0, -2] (axis 1: begin +3, end -2): output [1, 5].
# onnxruntime 1.32 (and torch's circular pad, up to its uninitialised column) crop first, then wrap the cropped [1, 2]:
#   [2, 1, 2, 1, 2]
# fusor (ref, cpu, vulkan) wraps over the uncropped axis (index (j - 3) mod 4): [2, 3, 4, 1, 2]
# onnx.reference refuses negative wrap pads; the spec text ("as if the data tensor forms a torus", negative pads
# "remove" elements) does not fix the order.
import numpy as np, onnx, os
from onnx import helper as oh, numpy_helper as nh, TensorProto as TP
x = np.array([[1, 2, 3, 4]], np.float32)
g = oh.make_graph([oh.make_node('Pad', ['x', 'p'], ['y'], mode='wrap')], 'g', [oh.make_tensor_value_info('x', TP.FLOAT, [1, 4])],
                  [oh.make_tensor_value_info('y', TP.FLOAT, [1, 5])], [nh.from_array(np.array([0, 3, 0, -2], np.int64), 'p')])
m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 19)]); m.ir_version = 9
d = os.path.dirname(os.path.abspath(__file__)); onnx.save(m, f'{d}/model.onnx'); os.makedirs(f'{d}/inputs', exist_ok=True)
open(f'{d}/inputs/input_0.pb', 'wb').write(nh.from_array(x, 'x').SerializeToString())
import onnxruntime as ort
so = ort.SessionOptions(); so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
print('onnxruntime:', ort.InferenceSession(f'{d}/model.onnx', so).run(None, {'x': x})[0].tolist())
# same kind, mode='reflect': x [[1,2,3,4]], pads [0, 1, 0, -2] -> onnxruntime reflects the cropped [1, 2]: [2, 1, 2];
# pads [0, 3, 0, -2]: onnxruntime refuses ("pre-pad (3) exceeds maximum allowed (1)"), fusor gives [4, 3, 2, 1, 2].
for tag, pads in [('reflect1', [0, 1, 0, -2]), ('reflect3', [0, 3, 0, -2])]:
    g = oh.make_graph([oh.make_node('Pad', ['x', 'p'], ['y'], mode='reflect')], 'g', [oh.make_tensor_value_info('x', TP.FLOAT, [1, 4])],
                      [oh.make_tensor_value_info('y', TP.FLOAT, None)], [nh.from_array(np.array(pads, np.int64), 'p')])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 19)]); m.ir_version = 9
    dd = f'{d}/{tag}'; os.makedirs(f'{dd}/inputs', exist_ok=True); onnx.save(m, f'{dd}/model.onnx')
    open(f'{dd}/inputs/input_0.pb', 'wb').write(nh.from_array(x, 'x').SerializeToString())
    try: print(tag, 'onnxruntime:', ort.InferenceSession(f'{dd}/model.onnx', so).run(None, {'x': x})[0].tolist())
    except Exception as ex: print(tag, 'onnxruntime error:', str(ex).split('Status Message:')[-1][:90])
