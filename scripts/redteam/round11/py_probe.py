"""Python-face probes with old-opset models: IR-3 initializer override, strides, dtypes, names."""
import sys, numpy as np, onnx, fusor, onnxruntime as ort
from onnx import helper as oh, numpy_helper as nh, TensorProto as TP
F = TP.FLOAT
def vi(n, s=None, t=F): return oh.make_tensor_value_info(n, t, s)
W = np.arange(12, dtype=np.float32).reshape(4, 3)
g = oh.make_graph([oh.make_node('Gemm', ['a', 'w', 'b'], ['y'], transB=1)], 'g', [vi('a', [2, 3]), vi('w', [4, 3]), vi('b', [4])], [vi('y')], [nh.from_array(W, 'w'), nh.from_array(np.ones(4, np.float32), 'b')])
m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 7)], ir_version=3)
mb = m.SerializeToString()
so = ort.SessionOptions(); so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
a = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
W2 = -np.ones((4, 3), np.float32)
def show(tag, f):
    try: r = f(); print(tag, 'OK', [np.asarray(x).ravel()[:4] for x in r])
    except Exception as e: print(tag, type(e).__name__, str(e)[:200])
oi = ort.InferenceSession(mb, so, providers=['CPUExecutionProvider'])
print('ort inputs', [i.name for i in oi.get_inputs()])
show('ort default', lambda: oi.run(None, {'a': a}))
show('ort override w', lambda: oi.run(None, {'a': a, 'w': W2}))
for bk in ('ref', 'cpu', 'vulkan'):
    s = fusor.Session(mb, backend=bk)
    print(bk, 'inputs', [getattr(i, 'name', i) for i in s.get_inputs()] if hasattr(s, 'get_inputs') else '?')
    show(f'{bk} default', lambda: s.run(None, {'a': a}))
    show(f'{bk} override w', lambda: s.run(None, {'a': a, 'w': W2}))
    show(f'{bk} f-order', lambda: s.run(None, {'a': np.asfortranarray(a)}))
    show(f'{bk} strided', lambda: s.run(None, {'a': np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)[::2, ::2]}))
    show(f'{bk} float64', lambda: s.run(None, {'a': a.astype(np.float64)}))
    show(f'{bk} wrong shape', lambda: s.run(None, {'a': np.zeros((3, 3), np.float32)}))
    show(f'{bk} bad name', lambda: s.run(['nope'], {'a': a}))
    show(f'{bk} missing', lambda: s.run(None, {}))
