"""Round 11 part 2: Resize-10 nearest vs Upsample-9, tf_half_pixel_for_nn rounding, control flow at old opsets, classic topologies."""
import os, sys, numpy as np, onnx
from onnx import helper as oh, numpy_helper as nh, TensorProto as TP
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib11 import save_case
exec(''.join(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'gen_old.py')).readlines()[:18]))  # helpers mk, vi, R
def c(n, a):
    a = np.asarray(a)
    return nh.from_array(a.astype(np.float32) if a.dtype == np.float64 else a, n)
rng = np.random.default_rng(12)
x22 = np.array([[[[1, 2], [3, 4]]]], np.float32)
save_case('rs10_up_2x3', mk([oh.make_node('Resize', ['x', 's'], ['y'], mode='nearest')], [vi('x', F, [1, 1, 2, 2])], [vi('y')], [c('s', np.array([1, 1, 2, 3], np.float32))], opset=10), {'x': x22})
save_case('up9_up_2x3', mk([oh.make_node('Upsample', ['x', 's'], ['y'], mode='nearest')], [vi('x', F, [1, 1, 2, 2])], [vi('y')], [c('s', np.array([1, 1, 2, 3], np.float32))], opset=9), {'x': x22})
x = R(1, 3, 4, 4)
for nm in ('round_prefer_ceil', 'round_prefer_floor', 'floor', 'ceil'):
    save_case(f'rs11_tfnn_{nm}_x2', mk([oh.make_node('Resize', ['x', 'roi', 's'], ['y'], mode='nearest', coordinate_transformation_mode='tf_half_pixel_for_nn', nearest_mode=nm)], [vi('x', F, x.shape)], [vi('y')], [c('roi', np.array([], np.float32)), c('s', np.array([1, 1, 2, 2], np.float32))], opset=11), {'x': x})
    save_case(f'rs11_asym_{nm}_x2', mk([oh.make_node('Resize', ['x', 'roi', 's'], ['y'], mode='nearest', coordinate_transformation_mode='half_pixel', nearest_mode=nm)], [vi('x', F, x.shape)], [vi('y')], [c('roi', np.array([], np.float32)), c('s', np.array([1, 1, 2, 2], np.float32))], opset=11), {'x': x})
# Scan-8 (batch axis + sequence_lens) vs Scan-9
body = oh.make_graph([oh.make_node('Add', ['s_in', 'x_t'], ['s_out']), oh.make_node('Mul', ['s_out', 'x_t'], ['y_t'])], 'b',
                     [vi('s_in', F, [3]), vi('x_t', F, [3])], [vi('s_out', F, [3]), vi('y_t', F, [3])])
save_case('scan8', mk([oh.make_node('Scan', ['', 's0', 'xs'], ['sf', 'ys'], body=body, num_scan_inputs=1)], [vi('s0', F, [2, 3]), vi('xs', F, [2, 4, 3])], [vi('sf'), vi('ys')], opset=8), {'s0': R(2, 3), 'xs': R(2, 4, 3)})
save_case('scan8_seqlens', mk([oh.make_node('Scan', ['sl', 's0', 'xs'], ['sf', 'ys'], body=body, num_scan_inputs=1)], [vi('sl', I, [2]), vi('s0', F, [2, 3]), vi('xs', F, [2, 4, 3])], [vi('sf'), vi('ys')], opset=8), {'sl': np.array([4, 2], np.int64), 's0': R(2, 3), 'xs': R(2, 4, 3)})
save_case('scan8_dir', mk([oh.make_node('Scan', ['', 's0', 'xs'], ['sf', 'ys'], body=body, num_scan_inputs=1, directions=[1])], [vi('s0', F, [2, 3]), vi('xs', F, [2, 4, 3])], [vi('sf'), vi('ys')], opset=8), {'s0': R(2, 3), 'xs': R(2, 4, 3)})
save_case('scan9', mk([oh.make_node('Scan', ['s0', 'xs'], ['sf', 'ys'], body=body, num_scan_inputs=1)], [vi('s0', F, [3]), vi('xs', F, [4, 3])], [vi('sf'), vi('ys')], opset=9), {'s0': R(3), 'xs': R(4, 3)})
save_case('scan9_axes', mk([oh.make_node('Scan', ['s0', 'xs'], ['sf', 'ys'], body=body, num_scan_inputs=1, scan_input_axes=[1], scan_output_axes=[1], scan_input_directions=[1], scan_output_directions=[1])], [vi('s0', F, [3]), vi('xs', F, [3, 4])], [vi('sf'), vi('ys')], opset=9), {'s0': R(3), 'xs': R(3, 4).T.copy().T.copy()} if False else {'s0': R(3), 'xs': R(3, 4)})
# the scan_input_axes=[1] body sees x_t of shape [3] from xs [3,4]: fine
# Loop-1 with trip count + cond, scan outputs
lb = oh.make_graph([oh.make_node('Cast', ['i'], ['i_f'], to=TP.FLOAT), oh.make_node('Add', ['v_in', 'i_f'], ['v_out']), oh.make_node('Less', ['v_out', 'lim'], ['c_out']), oh.make_node('Identity', ['v_out'], ['scan'])],
                   'lb', [vi('i', I, []), vi('c_in', TP.BOOL, []), vi('v_in', F, [2])], [vi('c_out', TP.BOOL, []), vi('v_out', F, [2]), vi('scan', F, [2])], [c('lim', np.array([5.0, 100.0], np.float32))])
save_case('loop1', mk([oh.make_node('Loop', ['M', 'cnd', 'v0'], ['vf', 'sc'], body=lb)], [vi('v0', F, [2])], [vi('vf'), vi('sc')], [c('M', np.array(10, np.int64)), c('cnd', np.array(True))], opset=1 if False else 8), {'v0': np.array([0.5, -1], np.float32)})
lb2 = oh.make_graph([oh.make_node('Add', ['v_in', 'one'], ['v_out']), oh.make_node('Identity', ['c_in'], ['c_out'])], 'lb2', [vi('i', I, []), vi('c_in', TP.BOOL, []), vi('v_in', F, [2])], [vi('c_out', TP.BOOL, []), vi('v_out', F, [2])], [c('one', np.array([1, 2], np.float32))])
save_case('loop8_no_cond', mk([oh.make_node('Loop', ['M', '', 'v0'], ['vf'], body=lb2)], [vi('v0', F, [2])], [vi('vf')], [c('M', np.array(3, np.int64))], opset=8), {'v0': np.array([0.5, -1], np.float32)})
save_case('loop8_zero_trip', mk([oh.make_node('Loop', ['M', '', 'v0'], ['vf'], body=lb2)], [vi('v0', F, [2])], [vi('vf')], [c('M', np.array(0, np.int64))], opset=8), {'v0': np.array([0.5, -1], np.float32)})
# If-1
tb = oh.make_graph([oh.make_node('Add', ['x', 'x'], ['t'])], 't', [], [vi('t', F, [3])]); eb = oh.make_graph([oh.make_node('Neg', ['x'], ['e'])], 'e', [], [vi('e', F, [3])])
for cv in (True, False):
    save_case(f'if1_{cv}', mk([oh.make_node('If', ['c'], ['y'], then_branch=tb, else_branch=eb)], [vi('c', TP.BOOL, []), vi('x', F, [3])], [vi('y')], opset=1 if False else 7), {'c': np.array(cv), 'x': R(3)})
# LSTM-7 with peepholes, bidirectional, seq_lens, initial states; GRU-7 linear_before_reset; RNN-7
T, B, In, H = 5, 2, 3, 4
for d, nd in (('forward', 1), ('reverse', 1), ('bidirectional', 2)):
    W, Rw, Bb, P = R(nd, 4 * H, In) * 0.5, R(nd, 4 * H, H) * 0.5, R(nd, 8 * H) * 0.5, R(nd, 3 * H) * 0.5
    for variant in ('plain', 'full'):
        ins = ['x', 'W', 'R', 'B']; inits = [c('W', W), c('R', Rw), c('B', Bb)]; feeds = {'x': R(T, B, In)}; gins = [vi('x', F, [T, B, In])]
        if variant == 'full':
            ins += ['sl', 'h0', 'c0', 'P']; inits += [c('P', P)]; gins += [vi('sl', TP.INT32, [B]), vi('h0', F, [nd, B, H]), vi('c0', F, [nd, B, H])]
            feeds.update(sl=np.array([5, 3], np.int32), h0=R(nd, B, H), c0=R(nd, B, H))
        save_case(f'lstm7_{d}_{variant}', mk([oh.make_node('LSTM', ins, ['Y', 'Yh', 'Yc'], hidden_size=H, direction=d)], gins, [vi('Y'), vi('Yh'), vi('Yc')], inits, opset=7), feeds)
    Wg, Rg, Bg = R(nd, 3 * H, In) * 0.5, R(nd, 3 * H, H) * 0.5, R(nd, 6 * H) * 0.5
    for lbr in (0, 1):
        save_case(f'gru7_{d}_lbr{lbr}', mk([oh.make_node('GRU', ['x', 'W', 'R', 'B', 'sl'], ['Y', 'Yh'], hidden_size=H, direction=d, linear_before_reset=lbr)], [vi('x', F, [T, B, In]), vi('sl', TP.INT32, [B])], [vi('Y'), vi('Yh')], [c('W', Wg), c('R', Rg), c('B', Bg)], opset=7), {'x': R(T, B, In), 'sl': np.array([2, 5], np.int32)})
    save_case(f'rnn7_{d}', mk([oh.make_node('RNN', ['x', 'W', 'R', 'B'], ['Y', 'Yh'], hidden_size=H, direction=d, activations=['Tanh'] * nd)], [vi('x', F, [T, B, In])], [vi('Y'), vi('Yh')], [c('W', R(nd, H, In)), c('R', R(nd, H, H)), c('B', R(nd, 2 * H))], opset=7), {'x': R(T, B, In)})
save_case('lstm7_clip_cin', mk([oh.make_node('LSTM', ['x', 'W', 'R', 'B'], ['Y'], hidden_size=H, clip=0.5, input_forget=1)], [vi('x', F, [T, B, In])], [vi('Y')], [c('W', R(1, 4 * H, In)), c('R', R(1, 4 * H, H)), c('B', R(1, 8 * H))], opset=7), {'x': R(T, B, In) * 3})
save_case('lstm7_acts', mk([oh.make_node('LSTM', ['x', 'W', 'R'], ['Y', 'Yh'], hidden_size=H, activations=['HardSigmoid', 'Tanh', 'Relu'], activation_alpha=[0.3], activation_beta=[0.4])], [vi('x', F, [T, B, In])], [vi('Y'), vi('Yh')], [c('W', R(1, 4 * H, In)), c('R', R(1, 4 * H, H))], opset=7), {'x': R(T, B, In)})
# Classic topologies
def vgg(opset):
    nodes, inits = [], []
    def conv(i, o, cin, cout, k=3, p=1, s=1, g=1):
        inits.extend([c(o + '_w', R(cout, cin // g, k, k) * (1 / np.sqrt(cin * k * k / g))), c(o + '_b', R(cout) * 0.1)])
        nodes.append(oh.make_node('Conv', [i, o + '_w', o + '_b'], [o], kernel_shape=[k, k], pads=[p] * 4, strides=[s, s], group=g))
    def bn(i, o, C):
        inits.extend([c(o + 's', R(C)), c(o + 'b', R(C)), c(o + 'm', R(C) * 0.1), c(o + 'v', np.abs(R(C)) + 0.5)])
        nodes.append(oh.make_node('BatchNormalization', [i, o + 's', o + 'b', o + 'm', o + 'v'], [o], epsilon=1e-5, **({'spatial': 1} if opset < 9 else {})))
    conv('x', 'c1', 3, 8); bn('c1', 'b1', 8); nodes.append(oh.make_node('Relu', ['b1'], ['r1']))
    conv('r1', 'c2', 8, 8); bn('c2', 'b2', 8); nodes.append(oh.make_node('Add', ['b2', 'r1'], ['a2'])); nodes.append(oh.make_node('Relu', ['a2'], ['r2']))
    nodes.append(oh.make_node('MaxPool', ['r2'], ['p2'], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    conv('p2', 'c3', 8, 16, 1, 0); nodes.append(oh.make_node('LRN', ['c3'], ['l3'], size=5, alpha=1e-4, beta=0.75, bias=1.0)) if opset < 9 else nodes.append(oh.make_node('Identity', ['c3'], ['l3']))
    nodes.append(oh.make_node('AveragePool', ['l3'], ['p3'], kernel_shape=[2, 2], strides=[2, 2]))
    nodes.append(oh.make_node('Flatten', ['p3'], ['f'], axis=1))
    inits.extend([c('fc_w', R(10, 16 * 4 * 4) * 0.05), c('fc_b', R(10))])
    nodes.append(oh.make_node('Gemm', ['f', 'fc_w', 'fc_b'], ['g'], transB=1, **({'broadcast': 1} if opset < 7 else {})))
    nodes.append(oh.make_node('Dropout', ['g'], ['dg'], ratio=0.5))
    nodes.append(oh.make_node('Softmax', ['dg'], ['y']))
    return mk(nodes, [vi('x', F, [2, 3, 16, 16])], [vi('y')], inits, opset=opset)
for op in (6, 7, 8, 9):
    save_case(f'topo_resnet_{op}', vgg(op), {'x': R(2, 3, 16, 16)})
# SqueezeNet-1.0-like fire modules with Concat + Dropout-7 + global avgpool + softmax-1 axis1 on 4-D
def squeeze(opset):
    nodes, inits = [], []
    def conv(i, o, cin, cout, k, p=0, s=1):
        inits.extend([c(o + '_w', R(cout, cin, k, k) * (1 / np.sqrt(cin * k * k))), c(o + '_b', R(cout) * 0.1)])
        nodes.append(oh.make_node('Conv', [i, o + '_w', o + '_b'], [o + '_c'], kernel_shape=[k, k], pads=[p] * 4, strides=[s, s])); nodes.append(oh.make_node('Relu', [o + '_c'], [o]))
    conv('x', 'c0', 3, 16, 3, 0, 2); nodes.append(oh.make_node('MaxPool', ['c0'], ['p0'], kernel_shape=[3, 3], strides=[2, 2]))
    cin = 16
    for k in range(2):
        conv('p0' if k == 0 else f'f{k-1}', f's{k}', cin, 4, 1); conv(f's{k}', f'e1_{k}', 4, 8, 1); conv(f's{k}', f'e3_{k}', 4, 8, 3, 1)
        nodes.append(oh.make_node('Concat', [f'e1_{k}', f'e3_{k}'], [f'f{k}'], axis=1)); cin = 16
    nodes.append(oh.make_node('Dropout', ['f1'], ['d'], **({'ratio': 0.5} if opset < 12 else {})))
    conv('d', 'cl', 16, 10, 1)
    nodes.append(oh.make_node('GlobalAveragePool', ['cl'], ['gp']))
    nodes.append(oh.make_node('Softmax', ['gp'], ['y'], axis=1))
    return mk(nodes, [vi('x', F, [1, 3, 32, 32])], [vi('y')], inits, opset=opset)
for op in (7, 9, 12):
    save_case(f'topo_squeeze_{op}', squeeze(op), {'x': R(1, 3, 32, 32)})
# Softmax-1 axis=1 on rank-4 conv output (not global-pooled): flatten semantics across C,H,W
def smx(opset, op, ax):
    return mk([oh.make_node('Conv', ['x', 'w'], ['c'], kernel_shape=[3, 3], pads=[1, 1, 1, 1]), oh.make_node('Relu', ['c'], ['r']) if opset >= 6 else oh.make_node('Identity', ['c'], ['r']), oh.make_node(op, ['r'], ['y'], axis=ax)], [vi('x', F, [2, 3, 5, 5])], [vi('y')], [c('w', R(4, 3, 3, 3))], opset=opset)
for opset in (1, 9, 11, 12):
    for op in ('Softmax', 'LogSoftmax', 'Hardmax'):
        for ax in (1, 2):
            save_case(f'fused_{op}{opset}_ax{ax}', smx(opset, op, ax), {'x': R(2, 3, 5, 5)})
# Softmax-11 followed by elementwise, over a transposed input
save_case('fused_softmax11_transpose', mk([oh.make_node('Transpose', ['x'], ['t'], perm=[0, 2, 3, 1]), oh.make_node('Softmax', ['t'], ['s'], axis=2), oh.make_node('Mul', ['s', 'x2'], ['y'])], [vi('x', F, [2, 3, 4, 5]), vi('x2', F, [3])], [vi('y')], opset=11), {'x': R(2, 3, 4, 5), 'x2': R(3)})
# Upsample-7 + Concat (YOLOv3-like), Slice-1 + Pad-2 chains
save_case('topo_yolo_up7', mk([oh.make_node('Conv', ['x', 'w'], ['c'], kernel_shape=[1, 1]), oh.make_node('LeakyRelu', ['c'], ['l'], alpha=0.1), oh.make_node('Upsample', ['l'], ['u'], mode='nearest', scales=[1.0, 1.0, 2.0, 2.0]),
                                  oh.make_node('Concat', ['u', 'x2'], ['y'], axis=1)], [vi('x', F, [1, 4, 3, 3]), vi('x2', F, [1, 2, 6, 6])], [vi('y')], [c('w', R(2, 4, 1, 1))], opset=7), {'x': R(1, 4, 3, 3), 'x2': R(1, 2, 6, 6)})
save_case('topo_slice_pad', mk([oh.make_node('Slice', ['x'], ['s'], starts=[1, 1], ends=[-1, -1], axes=[2, 3]), oh.make_node('Pad', ['s'], ['p'], mode='reflect', pads=[0, 0, 2, 1, 0, 0, 1, 2]), oh.make_node('Relu', ['p'], ['y'])], [vi('x', F, [1, 2, 7, 8])], [vi('y')], opset=7), {'x': R(1, 2, 7, 8)})
save_case('topo_reshape1_transpose', mk([oh.make_node('Reshape', ['x'], ['r'], shape=[1, 2, 2, 3, 4]), oh.make_node('Transpose', ['r'], ['t'], perm=[0, 2, 1, 3, 4]), oh.make_node('Reshape', ['t'], ['y'], shape=[1, 4, 3, 4])], [vi('x', F, [1, 4, 3, 4])], [vi('y')], opset=4), {'x': R(1, 4, 3, 4)})
print('ok')
