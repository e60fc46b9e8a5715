"""Graph-structure stress: deep chains, wide fan-out/in, odd output lists, empty dims, scalars."""
import os, sys, numpy as np, onnx
from onnx import helper as oh, numpy_helper as nh, TensorProto as TP
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib10 import save_case
rng = np.random.default_rng(10)
F = TP.FLOAT
def vi(n, t=F, s=None): return oh.make_tensor_value_info(n, t, s)
def model(nodes, ins, outs, inits=(), opset=18):
    g = oh.make_graph(nodes, 'g', ins, outs, initializer=list(inits))
    return oh.make_model(g, opset_imports=[oh.make_opsetid('', opset)], ir_version=9)
def R(*s): return rng.uniform(-1, 1, s).astype(np.float32)
C = []
def case(name, m, feeds, run_ort=True):
    C.append(name); save_case(name, m, feeds, run_ort=run_ort); print(name, flush=True)

# deep chains of element-wise ops
ops = ['Neg', 'Abs', 'Sin', 'Tanh', 'Sigmoid', 'Cos', 'Relu']
for n in (5000, 20000):
    for kind in ('unary', 'binary_const', 'mixed'):
        nodes = []; inits = []; cur = 'x'
        cst = nh.from_array(np.array([0.999], np.float32), 'c'); inits.append(cst)
        for i in range(n):
            o = f'v{i}'
            if kind == 'unary': nodes.append(oh.make_node(ops[i % len(ops)], [cur], [o]))
            elif kind == 'binary_const': nodes.append(oh.make_node('Mul' if i % 2 else 'Add', [cur, 'c'], [o]))
            else:
                op = ['Add', 'Mul', 'Tanh', 'Sub', 'Sin'][i % 5]
                nodes.append(oh.make_node(op, [cur, 'x'] if op in ('Add', 'Mul', 'Sub') else [cur], [o]))
            cur = o
        nodes.append(oh.make_node('Identity', [cur], ['y']))
        case(f'deep_{kind}_{n}', model(nodes, [vi('x', F, [3, 5])], [vi('y')], inits), {'x': R(3, 5)})
# deep chain with a reduction/broadcast every 10 nodes (fusion boundaries)
nodes = []; cur = 'x'
for i in range(3000):
    o = f'v{i}'
    if i % 10 == 9:
        nodes.append(oh.make_node('ReduceMean', [cur], [o + 'r'], axes=[1], keepdims=1))
        nodes.append(oh.make_node('Sub', [cur, o + 'r'], [o]))
    else: nodes.append(oh.make_node('Tanh' if i % 2 else 'Sin', [cur], [o]))
    cur = o
case('deep_reduce_3000', model(nodes + [oh.make_node('Identity', [cur], ['y'])], [vi('x', F, [4, 6])], [vi('y')], opset=17), {'x': R(4, 6)})
# deep MatMul chain
W = nh.from_array((np.eye(8) * 0.99 + R(8, 8) * 0.05).astype(np.float32), 'W')
nodes = []; cur = 'x'
for i in range(2000):
    nodes.append(oh.make_node('MatMul', [cur, 'W'], [f'v{i}'])); cur = f'v{i}'
case('deep_matmul_2000', model(nodes + [oh.make_node('Identity', [cur], ['y'])], [vi('x', F, [2, 8])], [vi('y')], [W]), {'x': R(2, 8)})
# wide fan-out 2000 consumers summed by a Sum of 2000 inputs
for n in (2000, 5000):
    nodes = [oh.make_node('Mul', ['x', f'c{i}'], [f'f{i}']) for i in range(n)]
    inits = [nh.from_array(np.array(1 + i * 1e-4, np.float32), f'c{i}') for i in range(n)]
    nodes.append(oh.make_node('Sum', [f'f{i}' for i in range(n)], ['y']))
    case(f'fan_sum_{n}', model(nodes, [vi('x', F, [3, 4])], [vi('y')], inits), {'x': R(3, 4)})
    nodes = [oh.make_node('Sin' if i % 2 else 'Cos', ['x'], [f'f{i}']) for i in range(n)]
    nodes.append(oh.make_node('Concat', [f'f{i}' for i in range(n)], ['y'], axis=1))
    case(f'fan_concat_{n}', model(nodes, [vi('x', F, [3, 2])], [vi('y')]), {'x': R(3, 2)})
    # Max / Min / Mean variadic
    nodes = [oh.make_node('Add', ['x', f'c{i}'], [f'f{i}']) for i in range(n)]
    nodes.append(oh.make_node('Max', [f'f{i}' for i in range(n)], ['y']))
    nodes.append(oh.make_node('Mean', [f'f{i}' for i in range(n)], ['z']))
    inits = [nh.from_array(R(4), f'c{i}') for i in range(n)]
    case(f'fan_maxmean_{n}', model(nodes, [vi('x', F, [3, 4])], [vi('y'), vi('z')], inits), {'x': R(3, 4)})
# binary tree fan-in of depth 11 (2048 leaves of Slice)
nodes = []; leaves = []
for i in range(1024):
    nodes.append(oh.make_node('Mul', ['x', 'x'] if i % 3 else ['x', 'c'], [f'l{i}'])); leaves.append(f'l{i}')
lvl = 0
while len(leaves) > 1:
    nl = []
    for j in range(0, len(leaves), 2):
        o = f't{lvl}_{j}'; nodes.append(oh.make_node('Add' if lvl % 2 else 'Sub', [leaves[j], leaves[j + 1]], [o])); nl.append(o)
    leaves = nl; lvl += 1
nodes.append(oh.make_node('Identity', leaves, ['y']))
case('fanin_tree_1024', model(nodes, [vi('x', F, [5])], [vi('y')], [nh.from_array(np.float32(1.5), 'c')]), {'x': R(5)})
# 1000 graph outputs
n = 1000
nodes = [oh.make_node('Mul', ['x', f'c{i}'], [f'y{i}']) for i in range(n)]
inits = [nh.from_array(np.array(i, np.float32), f'c{i}') for i in range(n)]
case('outs_1000', model(nodes, [vi('x', F, [2, 3])], [vi(f'y{i}') for i in range(n)], inits), {'x': R(2, 3)})
# 1000 outputs each a slice of one Split
nodes = [oh.make_node('Split', ['x'], [f'y{i}' for i in range(n)], axis=0, num_outputs=n)]
case('split_outs_1000', model(nodes, [vi('x', F, [n, 2])], [vi(f'y{i}') for i in range(n)]), {'x': R(n, 2)})
# odd output lists
case('out_is_input', model([oh.make_node('Relu', ['x'], ['y'])], [vi('x', F, [2, 3])], [vi('x'), vi('y')]), {'x': R(2, 3)})
case('out_only_input', model([], [vi('x', F, [2, 3])], [vi('x')]), {'x': R(2, 3)})
case('out_twice', model([oh.make_node('Relu', ['x'], ['y'])], [vi('x', F, [2, 3])], [vi('y'), vi('y')]), {'x': R(2, 3)})
case('out_input_twice', model([], [vi('x', F, [2, 3])], [vi('x'), vi('x')]), {'x': R(2, 3)})
case('out_init', model([oh.make_node('Relu', ['x'], ['y'])], [vi('x', F, [2, 3])], [vi('y'), vi('w')], [nh.from_array(R(4, 2), 'w')]), {'x': R(2, 3)})
case('out_init_only', model([], [vi('x', F, [2, 3])], [vi('w')], [nh.from_array(R(4, 2), 'w')]), {'x': R(2, 3)})
case('out_init_noinput', model([], [], [vi('w')], [nh.from_array(R(4, 2), 'w')]), {})
case('out_const', model([oh.make_node('Constant', [], ['y'], value=nh.from_array(R(3, 2))), oh.make_node('Relu', ['x'], ['z'])],
                        [vi('x', F, [2, 3])], [vi('y'), vi('z')]), {'x': R(2, 3)})
case('out_const_only', model([oh.make_node('Constant', [], ['y'], value_floats=[1.0, 2.5, -3.0])], [], [vi('y')]), {})
case('out_const_scalar_int', model([oh.make_node('Constant', [], ['y'], value_int=7)], [], [vi('y', TP.INT64)]), {})
case('out_const_twice', model([oh.make_node('Constant', [], ['y'], value_float=2.5)], [], [vi('y'), vi('y')]), {})
case('zero_outputs', model([oh.make_node('Relu', ['x'], ['y'])], [vi('x', F, [2, 3])], []), {'x': R(2, 3)}, run_ort=True)
case('two_outs_of_node', model([oh.make_node('TopK', ['x', 'k'], ['v', 'i'], axis=1)], [vi('x', F, [3, 7])], [vi('i', TP.INT64), vi('v')],
                               [nh.from_array(np.array([3], np.int64), 'k')]), {'x': R(3, 7)})
case('split_outs_both', model([oh.make_node('Split', ['x'], ['a', 'b'], axis=1, num_outputs=2), oh.make_node('Add', ['a', 'b'], ['c'])],
                              [vi('x', F, [3, 8])], [vi('b'), vi('a'), vi('c')]), {'x': R(3, 8)})
case('unused_inputs', model([oh.make_node('Relu', ['x'], ['y'])], [vi('u', TP.INT64, [5]), vi('x', F, [2, 3]), vi('v', TP.BOOL, [0])], [vi('y')]),
     {'u': np.arange(5), 'x': R(2, 3), 'v': np.zeros(0, bool)})
case('out_intermediate_and_fused', model([oh.make_node('Exp', ['x'], ['a']), oh.make_node('Mul', ['a', 'x'], ['b']), oh.make_node('ReduceSum', ['b'], ['c'], keepdims=0)],
                                       [vi('x', F, [4, 5])], [vi('c'), vi('a'), vi('b'), vi('x')]), {'x': R(4, 5)})
# empty dims into reductions
for op in ('ReduceMax', 'ReduceMin', 'ReduceSum', 'ReduceProd', 'ReduceMean', 'ReduceLogSumExp', 'ReduceL1', 'ReduceL2', 'ReduceSumSquare', 'ReduceLogSum'):
    for kd in (0, 1):
        for ax in ([1], [0], None):
            ins = [vi('x', F, [3, 0, 2])]
            inits = [nh.from_array(np.array(ax, np.int64), 'ax')] if ax else []
            nd = oh.make_node(op, ['x', 'ax'] if ax else ['x'], ['y'], keepdims=kd)
            case(f'empty_{op}_kd{kd}_ax{ax[0] if ax else "all"}', model([nd], ins, [vi('y')], inits), {'x': np.zeros((3, 0, 2), np.float32)})
for op in ('ArgMax', 'ArgMin'):
    for ax in (0, 1):
        case(f'empty_{op}_ax{ax}', model([oh.make_node(op, ['x'], ['y'], axis=ax, keepdims=1)], [vi('x', F, [3, 0])], [vi('y', TP.INT64)]), {'x': np.zeros((3, 0), np.float32)})
for op, kw in (('Softmax', dict(axis=1)), ('TopK', {}), ('CumSum', {}), ('LayerNormalization', dict(axis=-1)), ('Hardmax', dict(axis=1)), ('LogSoftmax', dict(axis=0))):
    if op == 'TopK':
        nd = oh.make_node('TopK', ['x', 'k'], ['y', 'yi'], axis=1); inits = [nh.from_array(np.array([0], np.int64), 'k')]; outs = [vi('y'), vi('yi', TP.INT64)]
    elif op == 'CumSum':
        nd = oh.make_node('CumSum', ['x', 'ax'], ['y']); inits = [nh.from_array(np.array(1, np.int64), 'ax')]; outs = [vi('y')]
    elif op == 'LayerNormalization':
        nd = oh.make_node(op, ['x', 's', 'b'], ['y'], **kw); inits = [nh.from_array(np.ones(0, np.float32), 's'), nh.from_array(np.ones(0, np.float32), 'b')]; outs = [vi('y')]
    else: nd = oh.make_node(op, ['x'], ['y'], **kw); inits = []; outs = [vi('y')]
    case(f'empty_{op}', model([nd], [vi('x', F, [3, 0])], outs, inits), {'x': np.zeros((3, 0), np.float32)})
# MatMul with K=0 (sum over empty -> zeros), Gemm K=0 with C
case('empty_matmul_k0', model([oh.make_node('MatMul', ['a', 'b'], ['y'])], [vi('a', F, [3, 0]), vi('b', F, [0, 4])], [vi('y')]), {'a': np.zeros((3, 0), np.float32), 'b': np.zeros((0, 4), np.float32)})
case('empty_gemm_k0', model([oh.make_node('Gemm', ['a', 'b', 'c'], ['y'], beta=2.0)], [vi('a', F, [3, 0]), vi('b', F, [0, 4]), vi('c', F, [4])], [vi('y')]),
     {'a': np.zeros((3, 0), np.float32), 'b': np.zeros((0, 4), np.float32), 'c': R(4)})
case('empty_conv_cin0', model([oh.make_node('Conv', ['x', 'w', 'b'], ['y'])], [vi('x', F, [1, 0, 5, 5]), vi('w', F, [2, 0, 3, 3]), vi('b', F, [2])], [vi('y')]),
     {'x': np.zeros((1, 0, 5, 5), np.float32), 'w': np.zeros((2, 0, 3, 3), np.float32), 'b': R(2)})
case('empty_einsum_k0', model([oh.make_node('Einsum', ['a', 'b'], ['y'], equation='ij,jk->ik')], [vi('a', F, [3, 0]), vi('b', F, [0, 4])], [vi('y')]), {'a': np.zeros((3, 0), np.float32), 'b': np.zeros((0, 4), np.float32)})
case('empty_concat', model([oh.make_node('Concat', ['a', 'b', 'a'], ['y'], axis=0)], [vi('a', F, [0, 4]), vi('b', F, [2, 4])], [vi('y')]), {'a': np.zeros((0, 4), np.float32), 'b': R(2, 4)})
# rank-0 everywhere
sc = lambda v: np.array(v, np.float32)
nodes = [oh.make_node('Add', ['a', 'b'], ['s1']), oh.make_node('Mul', ['s1', 'a'], ['s2']), oh.make_node('ReduceSum', ['s2'], ['s3'], keepdims=1),
         oh.make_node('Softmax', ['s3'], ['s4'], axis=0) if False else oh.make_node('Exp', ['s3'], ['s4']), oh.make_node('Unsqueeze', ['s4', 'ax0'], ['s5']),
         oh.make_node('Squeeze', ['s5', 'ax0'], ['s6']), oh.make_node('Cast', ['s6'], ['s7'], to=TP.INT32), oh.make_node('Where', ['cnd', 'a', 'b'], ['s8']),
         oh.make_node('Max', ['a', 'b', 's6'], ['s9']), oh.make_node('Expand', ['a', 'shp'], ['s10']), oh.make_node('Reshape', ['s10', 'shp0'], ['s11']) if False else oh.make_node('ReduceMax', ['s10'], ['s11'], keepdims=0),
         oh.make_node('Pow', ['a', 'b'], ['s12']), oh.make_node('MatMul', ['v', 'v'], ['s13']), oh.make_node('Gather', ['v', 'i0'], ['s14']),
         oh.make_node('CumSum', ['v', 'z0'], ['s15']), oh.make_node('ArgMax', ['v'], ['s16'], keepdims=0), oh.make_node('Size', ['a'], ['s17']), oh.make_node('Shape', ['a'], ['s18'])]
inits = [nh.from_array(np.array([0], np.int64), 'ax0'), nh.from_array(np.array(True), 'cnd'), nh.from_array(np.array([2, 3], np.int64), 'shp'), nh.from_array(np.array(1, np.int64), 'i0'), nh.from_array(np.array(0, np.int64), 'z0')]
outs = ['s1', 's2', 's3', 's4', 's6', 's8', 's9', 's10', 's11', 's12', 's13', 's14', 's15', 's16', 's17', 's18']
dts = {'s7': TP.INT32, 's16': TP.INT64, 's17': TP.INT64, 's18': TP.INT64}
case('scalars', model(nodes, [vi('a', F, []), vi('b', F, []), vi('v', F, [4])], [vi(o, dts.get(o, F)) for o in outs + ['s7']], inits),
     {'a': sc(1.5), 'b': sc(-0.25), 'v': R(4)})
print(len(C), 'cases')
