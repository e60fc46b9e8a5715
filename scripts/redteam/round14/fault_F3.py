# F3: ScatterElements / ScatterND reduction='min'/'max' with NaN: order-dependent, not propagated.
# data [1, NaN, 3], updates [NaN, 2], indices [0, 1]:
#   fusor (ref, cpu, vulkan, = onnx.reference): [1, NaN, 3]  (a NaN update is dropped, a NaN datum kept)
#   onnxruntime 1.32:                           [NaN, 2, 3]  (the reverse)
#   fusor's own Min / ReduceMin propagate NaN (DESIGN: "NaN propagates"): min(1, NaN) = NaN, min(NaN, 2) = NaN.
import numpy as np, onnx, os
from onnx import helper as oh, numpy_helper as nh, TensorProto as TP
d = os.path.dirname(os.path.abspath(__file__))
for red in ['min', 'max']:
    for op in ['ScatterElements', 'ScatterND']:
        ind = np.array([0, 1], np.int64) if op == 'ScatterElements' else np.array([[0], [1]], np.int64)
        g = oh.make_graph([oh.make_node(op, ['x', 'i', 'u'], ['y'], reduction=red)], 'g',
                          [oh.make_tensor_value_info('x', TP.FLOAT, [3]), oh.make_tensor_value_info('u', TP.FLOAT, [2])],
                          [oh.make_tensor_value_info('y', TP.FLOAT, [3])], [nh.from_array(ind, 'i')])
        m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 18)]); m.ir_version = 8
        dd = f'{d}/{op}_{red}'; os.makedirs(f'{dd}/inputs', exist_ok=True); onnx.save(m, f'{dd}/model.onnx')
        open(f'{dd}/inputs/input_0.pb', 'wb').write(nh.from_array(np.array([1, np.nan, 3], np.float32), 'x').SerializeToString())
        open(f'{dd}/inputs/input_1.pb', 'wb').write(nh.from_array(np.array([np.nan, 2], np.float32), 'u').SerializeToString())
        import onnxruntime as ort
        so = ort.SessionOptions(); so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        print(op, red, 'onnxruntime:', ort.InferenceSession(f'{dd}/model.onnx', so).run(None, {'x': np.array([1, np.nan, 3], np.float32), 'u': np.array([np.nan, 2], np.float32)})[0].tolist())
