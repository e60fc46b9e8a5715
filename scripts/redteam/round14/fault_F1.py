# F1: InstanceNormalization of a rank-2 input [N, C] (no spatial axes).
# Spec: mean/var over the spatial axes of each (n, c) -> each element alone -> y = B[c].
# fusor ref gives B; the decomposition (ir/decompose.cpp) builds ReduceMean with axes_from(2, 2) = {} which,
# with noop_with_empty_axes=0, reduces EVERY axis -> cpu / vulkan normalise over the whole tensor.
import numpy as np, onnx
from onnx import helper as oh, numpy_helper as nh, TensorProto as TP
x = np.array([[1., 2.], [3., 5.], [-4., 0.5]], np.float32)
g = oh.make_graph([oh.make_node('InstanceNormalization', ['x', 's', 'b'], ['y'], epsilon=1e-5)], 'g',
                  [oh.make_tensor_value_info('x', TP.FLOAT, [3, 2])], [oh.make_tensor_value_info('y', TP.FLOAT, [3, 2])],
                  [nh.from_array(np.array([2.0, -0.5], np.float32), 's'), nh.from_array(np.array([1.5, 0.25], np.float32), 'b')])
m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 17)]); m.ir_version = 8
onnx.checker.check_model(m, full_check=True)
import os; d = os.path.dirname(os.path.abspath(__file__))
onnx.save(m, f'{d}/model.onnx'); os.makedirs(f'{d}/inputs', exist_ok=True)
open(f'{d}/inputs/input_0.pb', 'wb').write(nh.from_array(x, 'x').SerializeToString())
