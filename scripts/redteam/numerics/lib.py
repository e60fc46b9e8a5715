import os, numpy as np, onnx, ml_dtypes
from onnx import helper as oh, numpy_helper as nh, TensorProto as TP
BF16 = ml_dtypes.bfloat16
NP2TP = {np.float16: TP.FLOAT16, np.float32: TP.FLOAT, np.float64: TP.DOUBLE, BF16: TP.BFLOAT16,
         np.int8: TP.INT8, np.uint8: TP.UINT8, np.int16: TP.INT16, np.uint16: TP.UINT16, np.int32: TP.INT32,
         np.uint32: TP.UINT32, np.int64: TP.INT64, np.uint64: TP.UINT64, np.bool_: TP.BOOL}
def tp(dt):
    dt = np.dtype(dt)
    for k, v in NP2TP.items():
        if np.dtype(k) == dt: return v
    raise KeyError(dt)
ROOT = os.path.join(os.environ.get('NUMRT', '/tmp/numrt'), 'models')
CASES = []
def case(name, nodes, inputs, outputs, inits=(), opset=18, expected=None):
    """inputs: list of (name, array); outputs: list of (name, np dtype); inits: list of (name, array)"""
    d = os.path.join(ROOT, name); os.makedirs(os.path.join(d, 'test_data_set_0'), exist_ok=True)
    g = oh.make_graph(nodes, name,
        [oh.make_tensor_value_info(n, tp(a.dtype), list(a.shape)) for n, a in inputs],
        [oh.make_tensor_value_info(n, tp(dt), None) for n, dt in outputs],
        initializer=[nh.from_array(np.asarray(a), n) for n, a in inits])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid('', opset)], ir_version=10)
    onnx.save(m, os.path.join(d, 'model.onnx'))
    for i, (n, a) in enumerate(inputs):
        with open(os.path.join(d, 'test_data_set_0', f'input_{i}.pb'), 'wb') as f:
            f.write(nh.from_array(np.asarray(a), n).SerializeToString())
    if expected is not None:
        np.save(os.path.join(d, 'expected.npy'), np.array(expected, dtype=object), allow_pickle=True)
    CASES.append(name)
