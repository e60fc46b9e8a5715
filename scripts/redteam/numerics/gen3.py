# Round 3 of the red team (docs/redteam.md): ONNX models of special values per dtype, written to $NUMRT/models (default /tmp/numrt).
import sys, math, numpy as np
import os; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import *
from vals import *
inf, nan = np.inf, np.nan
# F. float reductions with special rows
def rows(dt):
    R = [[1, 2, 3, 4, 5, 6, 7, 8], [nan, 1, 2, 3, 4, 5, 6, 7], [1, 2, 3, nan, 4, 5, 6, nan], [inf, 1, 2, 3, 4, 5, 6, 7],
         [-inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf], [inf, -inf, 1, 2, 3, 4, 5, 6], [5, 5, 5, 5, 5, 5, 5, 5],
         [-0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0], [-0.0] * 8, [3, 1, 3, 1, 3, 2, 3, 0], [-1, -3, -1, -3, -2, -3, -1, -3],
         [1e4, 2e4, 3e4, 6e4, 6e4, 6e4, 6e4, 6e4], [300, 300, 300, 300, 300, 300, 300, 300], [2**-24] * 8, [-2**-24] * 8,
         [100, 100, 90, 80, 70, 60, 50, 40], [-100, -200, -300, -400, -500, -600, -700, -800], [nan, nan, 1, 1, 1, 1, 1, 1],
         [inf, inf, 1, 1, 1, 1, 1, 1], [-inf, 3, -inf, 3, 0, 0, 0, 0]]
    x = np.array(R, dtype=np.float64)
    x = np.concatenate([x, rng.uniform(-3, 3, (12, 8))])
    if np.dtype(dt) == np.dtype(np.float32) or np.dtype(dt) == np.dtype(np.float64):
        x = np.concatenate([x, np.array([[1e20, -1e20, 1e20, -1e20, 3e38, 3e38, 1, 1], [1e30] * 8, [1e-40] * 8, [200, 100, 150, 120, 110, 90, 95, 99]])])
    return x.astype(dt)
for dn, dt in FD.items():
    x = rows(dt)
    nodes = []; outs = []
    for op in ['ReduceSum', 'ReduceMean', 'ReduceMax', 'ReduceMin', 'ReduceProd', 'ReduceL1', 'ReduceL2', 'ReduceLogSumExp', 'ReduceSumSquare', 'ReduceLogSum']:
        nodes.append(oh.make_node(op, ['x', 'ax'], [op], keepdims=0)); outs.append((op, dt))
    for op in ['ArgMax', 'ArgMin']:
        nodes.append(oh.make_node(op, ['x'], [op], axis=1, keepdims=0)); outs.append((op, np.int64))
        nodes.append(oh.make_node(op, ['x'], [op + 'L'], axis=1, keepdims=0, select_last_index=1)); outs.append((op + 'L', np.int64))
    case(f'red_{dn}', nodes, [('x', x)], outs, inits=[('ax', np.array([1], np.int64))])
    # each reduction alone (fusion of one reduction per kernel) on axis 0 too (column reductions)
    for op in ['ReduceSum', 'ReduceMax', 'ReduceLogSumExp', 'ReduceL2', 'ReduceMean', 'ReduceProd']:
        case(f'red1_{op}_{dn}', [oh.make_node(op, ['x', 'ax'], ['y'], keepdims=1)], [('x', x)], [('y', dt)], inits=[('ax', np.array([1], np.int64))])
        case(f'red0_{op}_{dn}', [oh.make_node(op, ['x', 'ax'], ['y'], keepdims=1)], [('x', x)], [('y', dt)], inits=[('ax', np.array([0], np.int64))])
    # softmax / logsoftmax
    for op in ['Softmax', 'LogSoftmax']:
        case(f'sm_{op}_{dn}', [oh.make_node(op, ['x'], ['y'], axis=-1)], [('x', x)], [('y', dt)])
        case(f'sm0_{op}_{dn}', [oh.make_node(op, ['x'], ['y'], axis=0)], [('x', x)], [('y', dt)])
    # sum of many small values (accumulation dtype)
    small = np.full((4, 4096), 0.01).astype(dt); small[1] = 1e-4; small[2, ::2] = 1; small[2, 1::2] = 2**-11; small[3] = rng.uniform(0, 1, 4096)
    case(f'red_many_{dn}', [oh.make_node('ReduceSum', ['x', 'ax'], ['s'], keepdims=0), oh.make_node('ReduceMean', ['x', 'ax'], ['m'], keepdims=0)],
         [('x', small)], [('s', dt), ('m', dt)], inits=[('ax', np.array([1], np.int64))])
    # cumsum
    case(f'cumsum_{dn}', [oh.make_node('CumSum', ['x', 'a'], ['y'])], [('x', small)], [('y', dt)], inits=[('a', np.array(1, np.int64))])
    case(f'cumsum_sp_{dn}', [oh.make_node('CumSum', ['x', 'a'], ['y'], exclusive=1, reverse=1)], [('x', x)], [('y', dt)], inits=[('a', np.array(1, np.int64))])
    # layernorm and RMS chains
    ln_rows = np.concatenate([x[:20], rng.normal(0, 1, (8, 8)), 1 + rng.normal(0, 1e-3, (4, 8))]).astype(dt)
    sc = rng.uniform(0.5, 1.5, 8).astype(dt); bi = rng.uniform(-0.5, 0.5, 8).astype(dt)
    case(f'ln_{dn}', [oh.make_node('LayerNormalization', ['x', 's', 'b'], ['y'], axis=-1, epsilon=1e-5)], [('x', ln_rows)], [('y', dt)], inits=[('s', sc), ('b', bi)], opset=17)
    case(f'rms_{dn}', [oh.make_node('Mul', ['x', 'x'], ['sq']), oh.make_node('ReduceMean', ['sq', 'ax'], ['ms'], keepdims=1),
                      oh.make_node('Add', ['ms', 'eps'], ['mse']), oh.make_node('Sqrt', ['mse'], ['rt']), oh.make_node('Div', ['x', 'rt'], ['n']), oh.make_node('Mul', ['n', 's'], ['y'])],
         [('x', ln_rows)], [('y', dt)], inits=[('s', sc), ('eps', np.array(1e-5, dt)), ('ax', np.array([-1], np.int64))])
    # topk
    tk = x
    case(f'topk_{dn}', [oh.make_node('TopK', ['x', 'k'], ['v', 'i'], axis=-1, largest=1, sorted=1), oh.make_node('TopK', ['x', 'k'], ['v2', 'i2'], axis=-1, largest=0, sorted=1)],
         [('x', tk)], [('v', dt), ('i', np.int64), ('v2', dt), ('i2', np.int64)], inits=[('k', np.array([3], np.int64))])
    # matmul / gemm accumulation
    K = 4096
    A = np.full((4, K), 0.01).astype(dt); A[1] = 1; A[2] = rng.uniform(-1, 1, K); A[3, :] = 2**-11
    B = np.ones((K, 8)).astype(dt); B[:, 1] = rng.uniform(-1, 1, K); B[:, 2] = 300; B[:, 3] = -1
    case(f'mm_{dn}', [oh.make_node('MatMul', ['a', 'b'], ['y'])], [('a', A), ('b', B)], [('y', dt)])
    case(f'mmc_{dn}', [oh.make_node('MatMul', ['a', 'b'], ['y'])], [('a', A)], [('y', dt)], inits=[('b', B)])
    bias = rng.uniform(-1, 1, 8).astype(dt); k = np.array(1e-3 if dn == 'f16' else 1e-3, dt)
    case(f'mm_epi_{dn}', [oh.make_node('MatMul', ['a', 'b'], ['p']), oh.make_node('Add', ['p', 'bias'], ['q']), oh.make_node('Mul', ['q', 'k'], ['y'])],
         [('a', A), ('b', B)], [('y', dt)], inits=[('bias', bias), ('k', k)])
    case(f'gemm_{dn}', [oh.make_node('Gemm', ['a', 'b', 'c'], ['y'], alpha=0.5, beta=2.0)], [('a', A), ('b', B)], [('y', dt)], inits=[('c', bias)])
    case(f'gemmT_{dn}', [oh.make_node('Gemm', ['a', 'bt', 'c'], ['y'], transB=1)], [('a', A), ('bt', np.ascontiguousarray(B.T))], [('y', dt)], inits=[('c', bias)], opset=13)
    # small matmul with special values
    A2 = np.array([[nan, 1, 2, 3], [inf, 1, 1, 1], [-0.0, -0.0, -0.0, -0.0], [1, 2, 3, 4]]).astype(dt)
    B2 = np.array([[1, 0], [1, 0], [1, 0], [1, -0.0]]).astype(dt)
    case(f'mm_sp_{dn}', [oh.make_node('MatMul', ['a', 'b'], ['y'])], [('a', A2), ('b', B2)], [('y', dt)])
    # conv
    X = rng.uniform(-1, 1, (1, 64, 8, 8)).astype(dt); X[0, :, 0, 0] = 0.01; X[0, :, 1, 1] = 300
    W = rng.uniform(-1, 1, (4, 64, 3, 3)).astype(dt); W[0] = 1; W[1] = 0.01
    case(f'conv_{dn}', [oh.make_node('Conv', ['x', 'w', 'b'], ['y'], pads=[1, 1, 1, 1])], [('x', X)], [('y', dt)], inits=[('w', W), ('b', rng.uniform(-1, 1, 4).astype(dt))])
    case(f'conv_relu_{dn}', [oh.make_node('Conv', ['x', 'w'], ['c'], pads=[1, 1, 1, 1]), oh.make_node('Mul', ['c', 'k'], ['m']), oh.make_node('Relu', ['m'], ['y'])], [('x', X), ('w', W)], [('y', dt)], inits=[('k', k)])
