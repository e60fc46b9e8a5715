"""Deeply nested subgraphs (If in If ..., Loop in Loop ...) and very long names: C++ recursion."""
import os, sys, numpy as np, onnx
from onnx import helper as oh, numpy_helper as nh, TensorProto as TP
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib10 import save_case
F = TP.FLOAT
def nested_if(depth):
    # innermost: y = x + 1 ; each level: If(c) then <inner> else Neg(x)
    g = oh.make_graph([oh.make_node('Add', ['x', 'one'], ['y0'])], 'g0', [], [oh.make_tensor_value_info('y0', F, None)])
    for i in range(1, depth + 1):
        other = oh.make_graph([oh.make_node('Neg', ['x'], [f'n{i}'])], f'e{i}', [], [oh.make_tensor_value_info(f'n{i}', F, None)])
        node = oh.make_node('If', ['c'], [f'y{i}'], then_branch=g, else_branch=other)
        g = oh.make_graph([node], f'g{i}', [], [oh.make_tensor_value_info(f'y{i}', F, None)])
    top = oh.make_graph(list(g.node), 'top', [oh.make_tensor_value_info('x', F, [3]), oh.make_tensor_value_info('c', TP.BOOL, [])],
                        [oh.make_tensor_value_info(f'y{depth}', F, None)], [nh.from_array(np.array([1], np.float32), 'one')])
    return oh.make_model(top, opset_imports=[oh.make_opsetid('', 17)], ir_version=9)
for dpt in (50, 200, 1000):
    m = nested_if(dpt)
    try: save_case(f'nest_if_{dpt}', m, {'x': np.array([1, 2, 3], np.float32), 'c': np.array(True)})
    except Exception as e: print(dpt, 'save failed', str(e)[:100])
    print('if', dpt, flush=True)
def nested_loop(depth):
    # each level: Loop M=1 with carried v: body calls the inner loop; innermost body: v+1
    body = oh.make_graph([oh.make_node('Identity', ['cond_in'], ['cond_out']), oh.make_node('Add', ['v_in', 'one'], ['v_out'])], 'b0',
                         [oh.make_tensor_value_info('i', TP.INT64, []), oh.make_tensor_value_info('cond_in', TP.BOOL, []), oh.make_tensor_value_info('v_in', F, None)],
                         [oh.make_tensor_value_info('cond_out', TP.BOOL, []), oh.make_tensor_value_info('v_out', F, None)])
    for i in range(1, depth + 1):
        node = oh.make_node('Loop', ['M', '', f'w_in'], [f'w_out'], body=body)
        body = oh.make_graph([oh.make_node('Identity', ['cond_in'], ['cond_out']), oh.make_node('Identity', ['v_in'], ['w_in']), node, oh.make_node('Identity', ['w_out'], ['v_out'])], f'b{i}',
                             [oh.make_tensor_value_info('i', TP.INT64, []), oh.make_tensor_value_info('cond_in', TP.BOOL, []), oh.make_tensor_value_info('v_in', F, None)],
                             [oh.make_tensor_value_info('cond_out', TP.BOOL, []), oh.make_tensor_value_info('v_out', F, None)])
    top = oh.make_graph([oh.make_node('Loop', ['M', '', 'x'], ['y'], body=body)], 'top', [oh.make_tensor_value_info('x', F, [3])], [oh.make_tensor_value_info('y', F, None)],
                        [nh.from_array(np.array(1, np.int64), 'M'), nh.from_array(np.array([1], np.float32), 'one')])
    return oh.make_model(top, opset_imports=[oh.make_opsetid('', 17)], ir_version=9)
for dpt in (20, 100, 400):
    try: save_case(f'nest_loop_{dpt}', nested_loop(dpt), {'x': np.array([1, 2, 3], np.float32)})
    except Exception as e: print(dpt, 'save failed', str(e)[:100])
    print('loop', dpt, flush=True)
# very long names (100 KB value / node names)
nm = 'v' * 100000
g = oh.make_graph([oh.make_node('Relu', ['x'], [nm], name='n' * 100000), oh.make_node('Neg', [nm], ['y'])], 'g', [oh.make_tensor_value_info('x', F, [3])], [oh.make_tensor_value_info('y', F, None)])
save_case('long_names', oh.make_model(g, opset_imports=[oh.make_opsetid('', 17)], ir_version=9), {'x': np.array([1, -2, 3], np.float32)})
