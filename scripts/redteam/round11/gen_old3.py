"""Round 11 part 3: training-form outputs, dynamic old-opset patterns, pooling ceil edges, error paths."""
import os, sys, numpy as np, onnx
from onnx import helper as oh, numpy_helper as nh, TensorProto as TP
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib11 import save_case
exec(''.join(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'gen_old.py')).readlines()[:18]))
def c(n, a):
    a = np.asarray(a); return nh.from_array(a.astype(np.float32) if a.dtype == np.float64 else a, n)
rng = np.random.default_rng(13)
S = save_case
x = R(2, 3, 4, 5)
bn_in = [c('s', R(3)), c('b', R(3)), c('m', R(3)), c('v', np.abs(R(3)) + .2)]
S('bn7_5out', mk([oh.make_node('BatchNormalization', ['x', 's', 'b', 'm', 'v'], ['y', 'om', 'ov', 'sm', 'sv'], momentum=0.8)], [vi('x', F, x.shape)], [vi('y'), vi('om'), vi('ov'), vi('sm'), vi('sv')], bn_in, opset=7), {'x': x})
S('bn9_3out', mk([oh.make_node('BatchNormalization', ['x', 's', 'b', 'm', 'v'], ['y', 'om', 'ov'], momentum=0.8)], [vi('x', F, x.shape)], [vi('y'), vi('om'), vi('ov')], bn_in, opset=9), {'x': x})
S('bn14_train', mk([oh.make_node('BatchNormalization', ['x', 's', 'b', 'm', 'v'], ['y', 'om', 'ov'], momentum=0.8, training_mode=1)], [vi('x', F, x.shape)], [vi('y'), vi('om'), vi('ov')], bn_in, opset=14), {'x': x})
S('drop12_train_r0', mk([oh.make_node('Dropout', ['x', 'r', 't'], ['y', 'm'])], [vi('x', F, [3, 4])], [vi('y'), vi('m', TP.BOOL)], [c('r', np.array(0.0, np.float32)), c('t', np.array(True))], opset=12), {'x': R(3, 4)})
S('drop12_train_r1', mk([oh.make_node('Dropout', ['x', 'r', 't'], ['y', 'm'])], [vi('x', F, [3, 4])], [vi('y'), vi('m', TP.BOOL)], [c('r', np.array(1.0, np.float32)), c('t', np.array(True))], opset=12), {'x': R(3, 4)})
# YOLOv3/pytorch-1.x opset-9 export: scales computed from Shape
nodes = [oh.make_node('Shape', ['x'], ['sh']), oh.make_node('Gather', ['sh', 'i2'], ['h'], axis=0), oh.make_node('Cast', ['h'], ['hf'], to=TP.FLOAT), oh.make_node('Mul', ['hf', 'two'], ['h2']),
         oh.make_node('Div', ['h2', 'hf'], ['sc']), oh.make_node('Unsqueeze', ['sc'], ['scu'], axes=[0]), oh.make_node('Concat', ['ones', 'scu', 'scu'], ['scales'], axis=0),
         oh.make_node('Upsample', ['x', 'scales'], ['y'], mode='nearest')]
S('up9_shape_scales', mk(nodes, [vi('x', F, [1, 2, 3, 4])], [vi('y')], [c('i2', np.array(2, np.int64)), c('two', np.array(2.0, np.float32)), c('ones', np.array([1, 1], np.float32))], opset=9), {'x': R(1, 2, 3, 4)})
S('up9_linear_rank3', mk([oh.make_node('Upsample', ['x', 's'], ['y'], mode='linear')], [vi('x', F, [2, 3, 4])], [vi('y')], [c('s', np.array([1, 2, 2], np.float32))], opset=9), {'x': R(2, 3, 4)})
S('up9_linear_all', mk([oh.make_node('Upsample', ['x', 's'], ['y'], mode='linear')], [vi('x', F, [2, 3, 4, 5])], [vi('y')], [c('s', np.array([2, 2, 2, 2], np.float32))], opset=9), {'x': R(2, 3, 4, 5)})
S('up9_nearest_down', mk([oh.make_node('Upsample', ['x', 's'], ['y'], mode='nearest')], [vi('x', F, [1, 1, 4, 6])], [vi('y')], [c('s', np.array([1, 1, 0.5, 0.7], np.float32))], opset=9), {'x': R(1, 1, 4, 6)})
S('up7_1d', mk([oh.make_node('Upsample', ['x'], ['y'], mode='nearest', scales=[2.0])], [vi('x', F, [5])], [vi('y')], opset=7), {'x': R(5)})
S('rs10_linear_down', mk([oh.make_node('Resize', ['x', 's'], ['y'], mode='linear')], [vi('x', F, [1, 1, 4, 6])], [vi('y')], [c('s', np.array([1, 1, 0.5, 0.7], np.float32))], opset=10), {'x': R(1, 1, 4, 6)})
S('rs10_linear_up3', mk([oh.make_node('Resize', ['x', 's'], ['y'], mode='linear')], [vi('x', F, [1, 1, 2, 3])], [vi('y')], [c('s', np.array([1, 1, 3, 2.5], np.float32))], opset=10), {'x': R(1, 1, 2, 3)})
# Mask-RCNN-ish NonZero -> Transpose -> GatherND, NonZero empty
S('nonzero_gathernd', mk([oh.make_node('Greater', ['x', 'z'], ['g']), oh.make_node('NonZero', ['g'], ['nz']), oh.make_node('Transpose', ['nz'], ['t']), oh.make_node('GatherND', ['x', 't'], ['y'])],
                         [vi('x', F, [4, 5])], [vi('y')], [c('z', np.array(0.5, np.float32))], opset=11), {'x': R(4, 5)})
S('nonzero_empty', mk([oh.make_node('Greater', ['x', 'z'], ['g']), oh.make_node('NonZero', ['g'], ['nz']), oh.make_node('Transpose', ['nz'], ['t']), oh.make_node('GatherND', ['x', 't'], ['y'])],
                      [vi('x', F, [4, 5])], [vi('y')], [c('z', np.array(50, np.float32))], opset=11), {'x': R(4, 5)})
# MaxPool/AvgPool ceil windows starting in the padding
for op, extra in (('MaxPool', {}), ('AveragePool', {'count_include_pad': 1}), ('AveragePool', {'count_include_pad': 0})):
    for L, k, s, p in ((5, 2, 2, 1), (6, 3, 2, 1), (4, 3, 3, 1), (7, 2, 3, 1), (5, 1, 2, 0)):
        S(f'ceil_{op}{extra.get("count_include_pad", "")}_{L}_{k}_{s}_{p}', mk([oh.make_node(op, ['x'], ['y'], kernel_shape=[k], strides=[s], pads=[p, p], ceil_mode=1, **extra)], [vi('x', F, [1, 2, L])], [vi('y')], opset=10), {'x': R(1, 2, L)})
S('maxpool12_int8', mk([oh.make_node('MaxPool', ['x'], ['y'], kernel_shape=[2, 2], strides=[1, 1], pads=[1, 1, 0, 0])], [vi('x', TP.INT8, [1, 1, 3, 3])], [vi('y', TP.INT8)], opset=12), {'x': rng.integers(-128, -100, (1, 1, 3, 3)).astype(np.int8)})
S('maxpool12_uint8_dil', mk([oh.make_node('MaxPool', ['x'], ['y', 'i'], kernel_shape=[2, 2], dilations=[2, 2], pads=[1, 1, 1, 1])], [vi('x', TP.UINT8, [1, 1, 4, 4])], [vi('y', TP.UINT8), vi('i', I)], opset=12), {'x': rng.integers(0, 255, (1, 1, 4, 4)).astype(np.uint8)})
S('maxpool_idx_neginf', mk([oh.make_node('MaxPool', ['x'], ['y', 'i'], kernel_shape=[2, 2], pads=[1, 1, 1, 1])], [vi('x', F, [1, 1, 2, 2])], [vi('y'), vi('i', I)], opset=10), {'x': np.full((1, 1, 2, 2), -np.inf, np.float32)})
S('maxpool_idx_nan', mk([oh.make_node('MaxPool', ['x'], ['y', 'i'], kernel_shape=[2, 2])], [vi('x', F, [1, 1, 2, 3])], [vi('y'), vi('i', I)], opset=10), {'x': np.array([[[[np.nan, 1, 2], [0, 3, np.nan]]]], np.float32)})
# Constant-11 sparse, Constant-12 value_floats/value_ints/value_string-less
sp = oh.make_sparse_tensor(c('vals', np.array([5.0, -2.0], np.float32)), c('idx', np.array([1, 6], np.int64)), [2, 4])
S('const11_sparse', mk([oh.make_node('Constant', [], ['k'], sparse_value=sp), oh.make_node('Add', ['x', 'k'], ['y'])], [vi('x', F, [2, 4])], [vi('y')], opset=11), {'x': R(2, 4)})
sp2 = oh.make_sparse_tensor(c('vals', np.array([5.0, -2.0], np.float32)), c('idx', np.array([[0, 1], [1, 2]], np.int64)), [2, 4])
S('const11_sparse_2d', mk([oh.make_node('Constant', [], ['k'], sparse_value=sp2), oh.make_node('Add', ['x', 'k'], ['y'])], [vi('x', F, [2, 4])], [vi('y')], opset=11), {'x': R(2, 4)})
S('const12_floats', mk([oh.make_node('Constant', [], ['k'], value_floats=[1.0, 2.0, 3.0, 4.0]), oh.make_node('Add', ['x', 'k'], ['y'])], [vi('x', F, [2, 4])], [vi('y')], opset=12), {'x': R(2, 4)})
S('const12_int', mk([oh.make_node('Constant', [], ['k'], value_int=3), oh.make_node('Unsqueeze', ['k'], ['ku'], axes=[0]), oh.make_node('TopK', ['x', 'ku'], ['y', 'i'])], [vi('x', F, [2, 4])], [vi('y'), vi('i', I)], opset=12), {'x': R(2, 4)})
S('flatten1_rank1', mk([oh.make_node('Flatten', ['x'], ['y'], axis=0)], [vi('x', F, [5])], [vi('y')], opset=1), {'x': R(5)})
S('flatten11_scalarish', mk([oh.make_node('Flatten', ['x'], ['y'], axis=1)], [vi('x', F, [5])], [vi('y')], opset=11), {'x': R(5)})
S('shape1_scalar', mk([oh.make_node('Shape', ['x'], ['y'])], [vi('x', F, [])], [vi('y', I)], opset=1), {'x': np.array(1.0, np.float32)})
S('expand8_zero', mk([oh.make_node('Expand', ['x', 's'], ['y'])], [vi('x', F, [3, 1])], [vi('y')], [c('s', np.array([0, 3, 4], np.int64))], opset=8), {'x': R(3, 1)})
S('topk10_ties', mk([oh.make_node('TopK', ['x', 'k'], ['v', 'i'], axis=0)], [vi('x', F, [6, 2])], [vi('v'), vi('i', I)], [c('k', np.array([3], np.int64))], opset=10), {'x': np.array([[1, 2], [3, 2], [3, 2], [1, 2], [3, 0], [0, 2]], np.float32)})
S('gather1_neg', mk([oh.make_node('Gather', ['x', 'i'], ['y'], axis=0)], [vi('x', F, [5, 4]), vi('i', I, [2])], [vi('y')], opset=1), {'x': R(5, 4), 'i': np.array([-1, 0], np.int64)})
S('if1_diff_shapes', mk([oh.make_node('If', ['cc'], ['y'], then_branch=oh.make_graph([oh.make_node('Concat', ['x', 'x'], ['t'], axis=0)], 't', [], [vi('t', F, None)]), else_branch=oh.make_graph([oh.make_node('Identity', ['x'], ['e'])], 'e', [], [vi('e', F, None)]))],
                        [vi('cc', TP.BOOL, []), vi('x', F, [3])], [vi('y', F, None)], opset=9), {'cc': np.array(True), 'x': R(3)})
# Scan-9 with 2 scan inputs, different axes, output axis 1 reversed
body = oh.make_graph([oh.make_node('Add', ['s_in', 'a_t'], ['s1']), oh.make_node('Mul', ['s1', 'b_t'], ['s_out']), oh.make_node('Identity', ['s_out'], ['y_t'])], 'b',
                     [vi('s_in', F, [2]), vi('a_t', F, [2]), vi('b_t', F, [2])], [vi('s_out', F, [2]), vi('y_t', F, [2])])
S('scan9_two_inputs', mk([oh.make_node('Scan', ['s0', 'a', 'b'], ['sf', 'ys'], body=body, num_scan_inputs=2, scan_input_axes=[0, 1], scan_input_directions=[0, 1], scan_output_axes=[1], scan_output_directions=[1])],
                         [vi('s0', F, [2]), vi('a', F, [5, 2]), vi('b', F, [2, 5])], [vi('sf'), vi('ys')], opset=9), {'s0': R(2), 'a': R(5, 2), 'b': R(2, 5)})
S('scan11_neg_axes', mk([oh.make_node('Scan', ['s0', 'a', 'b'], ['sf', 'ys'], body=body, num_scan_inputs=2, scan_input_axes=[-2, -1], scan_output_axes=[-1])],
                        [vi('s0', F, [2]), vi('a', F, [5, 2]), vi('b', F, [2, 5])], [vi('sf'), vi('ys')], opset=11), {'s0': R(2), 'a': R(5, 2), 'b': R(2, 5)})
# ---- invalid inputs: expect exit 2, one line
bad = []
def B(name, m, feeds): S('bad_' + name, m, feeds)
B('topk1_k_gt_n', mk([oh.make_node('TopK', ['x'], ['v', 'i'], k=10)], [vi('x', F, [2, 4])], [vi('v'), vi('i', I)], opset=1), {'x': R(2, 4)})
B('slice1_axes_len', mk([oh.make_node('Slice', ['x'], ['y'], starts=[0, 1], ends=[2], axes=[0, 1])], [vi('x', F, [2, 4])], [vi('y')], opset=1), {'x': R(2, 4)})
B('slice1_axis_oob', mk([oh.make_node('Slice', ['x'], ['y'], starts=[0], ends=[2], axes=[5])], [vi('x', F, [2, 4])], [vi('y')], opset=1), {'x': R(2, 4)})
B('squeeze1_non1', mk([oh.make_node('Squeeze', ['x'], ['y'], axes=[1])], [vi('x', F, [2, 4])], [vi('y')], opset=1), {'x': R(2, 4)})
B('unsqueeze1_dup', mk([oh.make_node('Unsqueeze', ['x'], ['y'], axes=[1, 1])], [vi('x', F, [2, 4])], [vi('y')], opset=1), {'x': R(2, 4)})
B('unsqueeze11_oob', mk([oh.make_node('Unsqueeze', ['x'], ['y'], axes=[-4])], [vi('x', F, [2, 4])], [vi('y')], opset=11), {'x': R(2, 4)})
B('reshape1_two_neg', mk([oh.make_node('Reshape', ['x'], ['y'], shape=[-1, -1])], [vi('x', F, [2, 4])], [vi('y')], opset=1), {'x': R(2, 4)})
B('reshape1_noshape', mk([oh.make_node('Reshape', ['x'], ['y'])], [vi('x', F, [2, 4])], [vi('y')], opset=1), {'x': R(2, 4)})
B('flatten1_axis5', mk([oh.make_node('Flatten', ['x'], ['y'], axis=5)], [vi('x', F, [2, 4])], [vi('y')], opset=1), {'x': R(2, 4)})
B('split2_sum', mk([oh.make_node('Split', ['x'], ['a', 'b'], axis=1, split=[1, 2])], [vi('x', F, [2, 4])], [vi('a'), vi('b')], opset=2), {'x': R(2, 4)})
B('split2_uneven', mk([oh.make_node('Split', ['x'], ['a', 'b', 'c'], axis=1)], [vi('x', F, [2, 4])], [vi('a'), vi('b'), vi('c')], opset=2), {'x': R(2, 4)})
B('gemm6_nobcast_bad', mk([oh.make_node('Gemm', ['a', 'b', 'c'], ['y'], broadcast=0)], [vi('a', F, [3, 4])], [vi('y')], [c('b', R(4, 5)), c('c', R(5))], opset=6), {'a': R(3, 4)})
B('gemm7_bad_c', mk([oh.make_node('Gemm', ['a', 'b', 'c'], ['y'])], [vi('a', F, [3, 4])], [vi('y')], [c('b', R(4, 5)), c('c', R(4))], opset=7), {'a': R(3, 4)})
B('gemm_rank3', mk([oh.make_node('Gemm', ['a', 'b'], ['y'])], [vi('a', F, [2, 3, 4])], [vi('y')], [c('b', R(4, 5))], opset=9), {'a': R(2, 3, 4)})
B('pad2_reflect_big', mk([oh.make_node('Pad', ['x'], ['y'], mode='reflect', pads=[0, 5, 0, 5])], [vi('x', F, [2, 4])], [vi('y')], opset=2), {'x': R(2, 4)})
B('pad2_badlen', mk([oh.make_node('Pad', ['x'], ['y'], pads=[0, 1, 0])], [vi('x', F, [2, 4])], [vi('y')], opset=2), {'x': R(2, 4)})
B('pad2_neg_too_big', mk([oh.make_node('Pad', ['x'], ['y'], pads=[0, -3, 0, -3])], [vi('x', F, [2, 4])], [vi('y')], opset=2), {'x': R(2, 4)})
B('clip11_vec_min', mk([oh.make_node('Clip', ['x', 'mn'], ['y'])], [vi('x', F, [2, 4])], [vi('y')], [c('mn', np.array([0.0, 1.0], np.float32))], opset=11), {'x': R(2, 4)})
B('softmax1_axis_oob', mk([oh.make_node('Softmax', ['x'], ['y'], axis=2)], [vi('x', F, [2, 4])], [vi('y')], opset=1), {'x': R(2, 4)})
B('softmax1_axis_rank', mk([oh.make_node('Softmax', ['x'], ['y'], axis=2)], [vi('x', F, [2, 4])], [vi('y')], opset=11), {'x': R(2, 4)})
B('cast6_to0', mk([oh.make_node('Cast', ['x'], ['y'], to=0)], [vi('x', F, [2])], [vi('y')], opset=6), {'x': R(2)})
B('cast6_to99', mk([oh.make_node('Cast', ['x'], ['y'], to=99)], [vi('x', F, [2])], [vi('y')], opset=6), {'x': R(2)})
B('cos9_neg', mk([oh.make_node('ConstantOfShape', ['s'], ['y'])], [vi('s', I, [2])], [vi('y')], opset=9), {'s': np.array([2, -3], np.int64)})
B('expand8_incompat', mk([oh.make_node('Expand', ['x', 's'], ['y'])], [vi('x', F, [3, 2])], [vi('y')], [c('s', np.array([4, 3], np.int64))], opset=8), {'x': R(3, 2)})
B('gather1_oob', mk([oh.make_node('Gather', ['x', 'i'], ['y'])], [vi('x', F, [5, 4]), vi('i', I, [1])], [vi('y')], opset=1), {'x': R(5, 4), 'i': np.array([7], np.int64)})
B('hardmax11_axis4', mk([oh.make_node('Hardmax', ['x'], ['y'], axis=4)], [vi('x', F, [2, 4])], [vi('y')], opset=11), {'x': R(2, 4)})
B('upsample7_noscales', mk([oh.make_node('Upsample', ['x'], ['y'], mode='nearest')], [vi('x', F, [1, 1, 2, 2])], [vi('y')], opset=7), {'x': R(1, 1, 2, 2)})
B('upsample7_scales_len', mk([oh.make_node('Upsample', ['x'], ['y'], mode='nearest', scales=[2.0, 2.0])], [vi('x', F, [1, 1, 2, 2])], [vi('y')], opset=7), {'x': R(1, 1, 2, 2)})
B('upsample9_mode_bad', mk([oh.make_node('Upsample', ['x', 's'], ['y'], mode='cubic')], [vi('x', F, [1, 1, 2, 2])], [vi('y')], [c('s', np.array([1, 1, 2, 2], np.float32))], opset=9), {'x': R(1, 1, 2, 2)})
B('upsample9_zero_scale', mk([oh.make_node('Upsample', ['x', 's'], ['y'], mode='nearest')], [vi('x', F, [1, 1, 2, 2])], [vi('y')], [c('s', np.array([1, 1, 0, 2], np.float32))], opset=9), {'x': R(1, 1, 2, 2)})
B('upsample9_nan_scale', mk([oh.make_node('Upsample', ['x', 's'], ['y'], mode='linear')], [vi('x', F, [1, 1, 2, 2])], [vi('y')], [c('s', np.array([1, 1, np.nan, 2], np.float32))], opset=9), {'x': R(1, 1, 2, 2)})
B('upsample9_huge_scale', mk([oh.make_node('Upsample', ['x', 's'], ['y'], mode='nearest')], [vi('x', F, [1, 1, 2, 2])], [vi('y')], [c('s', np.array([1, 1, 1e30, 2], np.float32))], opset=9), {'x': R(1, 1, 2, 2)})
B('upsample9_neg_scale', mk([oh.make_node('Upsample', ['x', 's'], ['y'], mode='nearest')], [vi('x', F, [1, 1, 2, 2])], [vi('y')], [c('s', np.array([1, 1, -2, 2], np.float32))], opset=9), {'x': R(1, 1, 2, 2)})
B('resize10_inf_scale', mk([oh.make_node('Resize', ['x', 's'], ['y'], mode='linear')], [vi('x', F, [1, 1, 2, 2])], [vi('y')], [c('s', np.array([1, 1, np.inf, 2], np.float32))], opset=10), {'x': R(1, 1, 2, 2)})
B('bn7_spatial2', mk([oh.make_node('BatchNormalization', ['x', 's', 'b', 'm', 'v'], ['y'], spatial=2)], [vi('x', F, [2, 3, 4, 5])], [vi('y')], [c('s', R(3)), c('b', R(3)), c('m', R(3)), c('v', np.abs(R(3)))], opset=7), {'x': R(2, 3, 4, 5)})
B('maxpool8_so2', mk([oh.make_node('MaxPool', ['x'], ['y', 'i'], kernel_shape=[2, 2], storage_order=2)], [vi('x', F, [1, 1, 4, 4])], [vi('y'), vi('i', I)], opset=8), {'x': R(1, 1, 4, 4)})
B('maxpool_k0', mk([oh.make_node('MaxPool', ['x'], ['y'], kernel_shape=[0, 2])], [vi('x', F, [1, 1, 4, 4])], [vi('y')], opset=8), {'x': R(1, 1, 4, 4)})
B('avgpool_kbig', mk([oh.make_node('AveragePool', ['x'], ['y'], kernel_shape=[9, 2])], [vi('x', F, [1, 1, 4, 4])], [vi('y')], opset=7), {'x': R(1, 1, 4, 4)})
B('avgpool_stride0', mk([oh.make_node('AveragePool', ['x'], ['y'], kernel_shape=[2, 2], strides=[0, 1])], [vi('x', F, [1, 1, 4, 4])], [vi('y')], opset=7), {'x': R(1, 1, 4, 4)})
B('lstm7_bad_hidden', mk([oh.make_node('LSTM', ['x', 'W', 'R'], ['Y'], hidden_size=5)], [vi('x', F, [3, 2, 3])], [vi('Y')], [c('W', R(1, 16, 3)), c('R', R(1, 16, 4))], opset=7), {'x': R(3, 2, 3)})
B('scan8_bad_batch', mk([oh.make_node('Scan', ['', 's0', 'xs'], ['sf', 'ys'], body=oh.make_graph([oh.make_node('Add', ['s_in', 'x_t'], ['s_out']), oh.make_node('Identity', ['s_out'], ['y_t'])], 'b', [vi('s_in', F, [3]), vi('x_t', F, [3])], [vi('s_out', F, [3]), vi('y_t', F, [3])]), num_scan_inputs=1)],
                          [vi('s0', F, [2, 3]), vi('xs', F, [3, 4, 3])], [vi('sf'), vi('ys')], opset=8), {'s0': R(2, 3), 'xs': R(3, 4, 3)})
B('onehot9_depth0', mk([oh.make_node('OneHot', ['i', 'd', 'v'], ['y'])], [vi('i', I, [3])], [vi('y')], [c('d', np.array([0], np.int64)), c('v', np.array([0, 1], np.float32))], opset=9), {'i': np.array([0, 1, 2], np.int64)})
B('tile6_neg', mk([oh.make_node('Tile', ['x', 'r'], ['y'])], [vi('x', F, [2, 3])], [vi('y')], [c('r', np.array([2, -1], np.int64))], opset=6), {'x': R(2, 3)})
B('lrn1_size0', mk([oh.make_node('LRN', ['x'], ['y'], size=0)], [vi('x', F, [1, 3, 2, 2])], [vi('y')], opset=1), {'x': R(1, 3, 2, 2)})
B('d2s1_bad_block', mk([oh.make_node('DepthToSpace', ['x'], ['y'], blocksize=3)], [vi('x', F, [1, 8, 2, 2])], [vi('y')], opset=1), {'x': R(1, 8, 2, 2)})
B('d2s1_block0', mk([oh.make_node('DepthToSpace', ['x'], ['y'], blocksize=0)], [vi('x', F, [1, 8, 2, 2])], [vi('y')], opset=1), {'x': R(1, 8, 2, 2)})
print('done')
