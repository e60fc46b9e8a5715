"""Control flow with many values: Loop with N carried values, If with N outputs, Scan with N states,
Einsum with many operands (N = 255, 256, 300, 1000)."""
import os, sys, numpy as np, onnx
from onnx import helper as oh, numpy_helper as nh, TensorProto as TP
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib10 import save_case
F = TP.FLOAT
def vi(n, t=F, s=None): return oh.make_tensor_value_info(n, t, s)
for N in (255, 256, 300, 1000):
    body = oh.make_graph([oh.make_node('Identity', ['ci'], ['co'])] + [oh.make_node('Add', [f'v{i}', 'x'], [f'w{i}']) for i in range(N)], 'b',
                         [vi('i', TP.INT64, []), vi('ci', TP.BOOL, [])] + [vi(f'v{i}', F, [2]) for i in range(N)],
                         [vi('co', TP.BOOL, [])] + [vi(f'w{i}', F, [2]) for i in range(N)])
    nodes = [oh.make_node('Loop', ['M', ''] + [f'x{i}' for i in range(N)], [f'y{i}' for i in range(N)], body=body),
             oh.make_node('Sum', [f'y{i}' for i in range(N)], ['s'])]
    m = oh.make_model(oh.make_graph(nodes, 'g', [vi('x', F, [2])], [vi('s'), vi('y0'), vi(f'y{N-1}')],
                      [nh.from_array(np.array(3, np.int64), 'M')] + [nh.from_array(np.array([i, -i], np.float32), f'x{i}') for i in range(N)]),
                      opset_imports=[oh.make_opsetid('', 17)], ir_version=9)
    save_case(f'wide_loop_{N}', m, {'x': np.array([0.5, 1.5], np.float32)})
    th = oh.make_graph([oh.make_node('Mul', ['x', f'c{i}'], [f't{i}']) for i in range(N)], 't', [], [vi(f't{i}') for i in range(N)])
    el = oh.make_graph([oh.make_node('Sub', ['x', f'c{i}'], [f'e{i}']) for i in range(N)], 'e', [], [vi(f'e{i}') for i in range(N)])
    nodes = [oh.make_node('If', ['cond'], [f'y{i}' for i in range(N)], then_branch=th, else_branch=el), oh.make_node('Mean', [f'y{i}' for i in range(min(N, 200))], ['s'])]
    m = oh.make_model(oh.make_graph(nodes, 'g', [vi('x', F, [2]), vi('cond', TP.BOOL, [])], [vi('s'), vi(f'y{N-1}')],
                      [nh.from_array(np.array([i, 1], np.float32), f'c{i}') for i in range(N)]), opset_imports=[oh.make_opsetid('', 17)], ir_version=9)
    save_case(f'wide_if_{N}', m, {'x': np.array([0.5, 1.5], np.float32), 'cond': np.array(False)})
    sb = oh.make_graph([oh.make_node('Add', [f's{i}', 'xi'], [f'so{i}']) for i in range(N)] + [oh.make_node('Identity', ['xi'], ['yo'])], 'sb',
                       [vi(f's{i}', F, [2]) for i in range(N)] + [vi('xi', F, [2])], [vi(f'so{i}', F, [2]) for i in range(N)] + [vi('yo', F, [2])])
    nodes = [oh.make_node('Scan', [f'x{i}' for i in range(N)] + ['xs'], [f'y{i}' for i in range(N)] + ['ys'], body=sb, num_scan_inputs=1),
             oh.make_node('Sum', [f'y{i}' for i in range(N)], ['s'])]
    m = oh.make_model(oh.make_graph(nodes, 'g', [vi('xs', F, [4, 2])], [vi('s'), vi('ys')],
                      [nh.from_array(np.array([i, -i], np.float32), f'x{i}') for i in range(N)]), opset_imports=[oh.make_opsetid('', 17)], ir_version=9)
    save_case(f'wide_scan_{N}', m, {'xs': np.arange(8, dtype=np.float32).reshape(4, 2)})
    print(N, flush=True)
