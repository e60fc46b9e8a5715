"""Round 11: old-opset (1-12) semantics against onnxruntime (CPU EP, no graph optimizations)."""
import os, sys, numpy as np, onnx
from onnx import helper as oh, numpy_helper as nh, TensorProto as TP
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib11 import save_case
rng = np.random.default_rng(11)
F = TP.FLOAT; I = TP.INT64
def vi(n, t=F, s=None): return oh.make_tensor_value_info(n, t, s)
def mk(nodes, ins, outs, inits=(), opset=9, ir=None):
    if ir is None: ir = 3 if opset <= 7 else (4 if opset <= 9 else (5 if opset == 10 else (6 if opset <= 12 else 7)))
    g = oh.make_graph(nodes, 'g', ins, outs, list(inits))
    if ir < 4:  # initializers must also be inputs
        have = {i.name for i in ins}
        for t in inits:
            if t.name not in have: g.input.append(oh.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    return oh.make_model(g, opset_imports=[oh.make_opsetid('', opset)], ir_version=ir)
def R(*s): return rng.standard_normal(s).astype(np.float32)
def c(name, a): return nh.from_array(np.asarray(a), name)
n = 0
def S(name, m, feeds):
    global n; save_case(name, m, feeds); n += 1

# Upsample-7 (scales attr), Upsample-9 (scales input)
x = R(1, 2, 3, 4)
for mode in ('nearest', 'linear'):
    for sc in ((1, 1, 2, 2), (1, 1, 2, 3), (1, 1, 1.5, 2.5), (1, 1, 0.5, 0.5) if False else (1, 1, 3, 1)):
        S(f'up7_{mode}_{"x".join(map(str, sc))}', mk([oh.make_node('Upsample', ['x'], ['y'], mode=mode, scales=[float(s) for s in sc])], [vi('x', F, x.shape)], [vi('y')], opset=7), {'x': x})
        S(f'up9_{mode}_{"x".join(map(str, sc))}', mk([oh.make_node('Upsample', ['x', 's'], ['y'], mode=mode)], [vi('x', F, x.shape)], [vi('y')], [c('s', np.array(sc, np.float32))], opset=9), {'x': x})
# Upsample-9 scales as graph input (dynamic)
S('up9_dyn_scales', mk([oh.make_node('Upsample', ['x', 's'], ['y'], mode='nearest')], [vi('x', F, x.shape), vi('s', F, [4])], [vi('y')], opset=9), {'x': x, 's': np.array([1, 1, 2, 2], np.float32)})
# Resize-10 (scales only, asymmetric-ish), Resize-11 (modes, roi)
for mode in ('nearest', 'linear'):
    for sc in ((1, 1, 2, 2), (1, 1, 0.5, 0.5), (1, 1, 1.7, 0.6)):
        S(f'rs10_{mode}_{"x".join(map(str, sc))}', mk([oh.make_node('Resize', ['x', 's'], ['y'], mode=mode)], [vi('x', F, [1, 2, 6, 8])], [vi('y')], [c('s', np.array(sc, np.float32))], opset=10), {'x': R(1, 2, 6, 8)})
x = R(1, 2, 6, 8)
for ctm in ('half_pixel', 'pytorch_half_pixel', 'align_corners', 'asymmetric', 'tf_half_pixel_for_nn', 'tf_crop_and_resize'):
    for mode in ('nearest', 'linear', 'cubic'):
        if ctm == 'tf_half_pixel_for_nn' and mode != 'nearest': continue
        for nm in (('round_prefer_floor', 'floor', 'ceil') if mode == 'nearest' else ('round_prefer_floor',)):
            roi = np.array([0, 0, 0.1, 0.2, 1, 1, 0.9, 0.7], np.float32) if ctm == 'tf_crop_and_resize' else np.array([], np.float32)
            for use_sizes in (0, 1):
                inits = [c('roi', roi)]
                if use_sizes: inits += [c('sc', np.array([], np.float32)), c('sz', np.array([1, 2, 5, 11], np.int64))]; ins = ['x', 'roi', 'sc', 'sz']
                else: inits += [c('sc', np.array([1, 1, 1.5, 0.75], np.float32))]; ins = ['x', 'roi', 'sc']
                S(f'rs11_{ctm}_{mode}_{nm}_sz{use_sizes}', mk([oh.make_node('Resize', ins, ['y'], mode=mode, coordinate_transformation_mode=ctm, nearest_mode=nm, extrapolation_value=-7.0, cubic_coeff_a=-0.5, exclude_outside=int(mode == 'cubic' and use_sizes))],
                                                              [vi('x', F, x.shape)], [vi('y')], inits, opset=11), {'x': x})
# BatchNormalization-7 (spatial=1/0), -9
x = R(2, 3, 4, 5)
for op, sp in ((7, 1), (7, 0), (9, None), (6, 1)):
    sh = [3] if sp != 0 else [3, 4, 5]
    sc, b, mn, vr = R(*sh), R(*sh), R(*sh), np.abs(R(*sh)) + 0.1
    kw = {} if sp is None else {'spatial': sp}
    if op == 6: kw['is_test'] = 1
    S(f'bn{op}_sp{sp}', mk([oh.make_node('BatchNormalization', ['x', 's', 'b', 'm', 'v'], ['y'], epsilon=1e-3, momentum=0.8, **kw)], [vi('x', F, x.shape)], [vi('y')], [c('s', sc), c('b', b), c('m', mn), c('v', vr)], opset=op), {'x': x})
S('bn9_rank2', mk([oh.make_node('BatchNormalization', ['x', 's', 'b', 'm', 'v'], ['y'])], [vi('x', F, [4, 3])], [vi('y')], [c('s', R(3)), c('b', R(3)), c('m', R(3)), c('v', np.abs(R(3)))], opset=9), {'x': R(4, 3)})
S('bn9_rank3', mk([oh.make_node('BatchNormalization', ['x', 's', 'b', 'm', 'v'], ['y'])], [vi('x', F, [2, 3, 7])], [vi('y')], [c('s', R(3)), c('b', R(3)), c('m', R(3)), c('v', np.abs(R(3)))], opset=9), {'x': R(2, 3, 7)})
# Dropout-7 (one output / mask), -10, -12 (ratio input, training_mode)
x = R(3, 4)
S('drop7', mk([oh.make_node('Dropout', ['x'], ['y'], ratio=0.3)], [vi('x', F, [3, 4])], [vi('y')], opset=7), {'x': x})
S('drop7_mask', mk([oh.make_node('Dropout', ['x'], ['y', 'm'], ratio=0.3)], [vi('x', F, [3, 4])], [vi('y'), vi('m', TP.FLOAT)], opset=7), {'x': x})
S('drop10_mask', mk([oh.make_node('Dropout', ['x'], ['y', 'm'], ratio=0.3)], [vi('x', F, [3, 4])], [vi('y'), vi('m', TP.BOOL)], opset=10), {'x': x})
S('drop6_istest', mk([oh.make_node('Dropout', ['x'], ['y'], ratio=0.3, is_test=1)], [vi('x', F, [3, 4])], [vi('y')], opset=6), {'x': x})
S('drop12_ratio', mk([oh.make_node('Dropout', ['x', 'r'], ['y', 'm'])], [vi('x', F, [3, 4])], [vi('y'), vi('m', TP.BOOL)], [c('r', np.array(0.5, np.float32))], opset=12), {'x': x})
S('drop12_ratio_tm0', mk([oh.make_node('Dropout', ['x', 'r', 't'], ['y', 'm'])], [vi('x', F, [3, 4])], [vi('y'), vi('m', TP.BOOL)], [c('r', np.array(0.5, np.float32)), c('t', np.array(False))], opset=12), {'x': x})
S('drop12_relu', mk([oh.make_node('Dropout', ['x'], ['d']), oh.make_node('Relu', ['d'], ['y'])], [vi('x', F, [3, 4])], [vi('y')], opset=12), {'x': x})
# Slice-1 attributes
x = R(5, 6, 7)
for st, en, ax in (([1], [4], [0]), ([0, -3], [100, -1], [1, 2]), ([-100, 2], [2, 1000], [0, -1]), ([2, 1], [5, 6], None), ([1, 2, 3], [-1, -2, -3], None), ([3], [1], [2])):
    kw = dict(starts=st, ends=en)
    if ax is not None: kw['axes'] = ax
    S(f'slice1_{len(st)}_{st[0]}_{en[0]}_{ax}', mk([oh.make_node('Slice', ['x'], ['y'], **kw)], [vi('x', F, x.shape)], [vi('y')], opset=1), {'x': x})
# Pad-2 attributes
x = R(1, 2, 4, 5)
for mode in ('constant', 'edge', 'reflect'):
    for pads in ((0, 0, 1, 2, 0, 0, 2, 1), (0, 0, 3, 4, 0, 0, 3, 4), (0, 1, 0, 0, 1, 0, 0, 0), (0, 0, -1, 1, 0, 0, 1, -2)):
        if mode == 'reflect' and pads[3] >= 5: continue
        S(f'pad2_{mode}_{"_".join(map(str, pads))}', mk([oh.make_node('Pad', ['x'], ['y'], mode=mode, pads=list(pads), value=2.5)], [vi('x', F, x.shape)], [vi('y')], opset=2), {'x': x})
# Pad-11 input form, constant_value input
S('pad11_cv', mk([oh.make_node('Pad', ['x', 'p', 'v'], ['y'], mode='constant')], [vi('x', F, x.shape)], [vi('y')], [c('p', np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64)), c('v', np.array(1.5, np.float32))], opset=11), {'x': x})
S('pad11_edge_neg', mk([oh.make_node('Pad', ['x', 'p'], ['y'], mode='edge')], [vi('x', F, x.shape)], [vi('y')], [c('p', np.array([0, 0, -1, 2, 0, 0, 2, -1], np.int64))], opset=11), {'x': x})
# Split-2 attribute, Split-11 negative axis, no split = equal
x = R(6, 8)
S('split2_attr', mk([oh.make_node('Split', ['x'], ['a', 'b', 'c'], axis=1, split=[2, 5, 1])], [vi('x', F, x.shape)], [vi('a'), vi('b'), vi('c')], opset=2), {'x': x})
S('split2_equal', mk([oh.make_node('Split', ['x'], ['a', 'b'], axis=0)], [vi('x', F, x.shape)], [vi('a'), vi('b')], opset=2), {'x': x})
S('split11_neg', mk([oh.make_node('Split', ['x'], ['a', 'b', 'c'], axis=-1, split=[3, 0, 5])], [vi('x', F, x.shape)], [vi('a'), vi('b'), vi('c')], opset=11), {'x': x})
S('split1_input', mk([oh.make_node('Split', ['x', 's'], ['a', 'b'], axis=1)], [vi('x', F, x.shape)], [vi('a'), vi('b')], [c('s', np.array([3, 5], np.int64))], opset=1), {'x': x})
# TopK-1 attr, TopK-10 input
x = R(4, 9)
S('topk1', mk([oh.make_node('TopK', ['x'], ['v', 'i'], k=3)], [vi('x', F, x.shape)], [vi('v'), vi('i', I)], opset=1), {'x': x})
S('topk1_ax0', mk([oh.make_node('TopK', ['x'], ['v', 'i'], k=2, axis=0)], [vi('x', F, x.shape)], [vi('v'), vi('i', I)], opset=1), {'x': x})
S('topk10', mk([oh.make_node('TopK', ['x', 'k'], ['v', 'i'], axis=-1)], [vi('x', F, x.shape)], [vi('v'), vi('i', I)], [c('k', np.array([4], np.int64))], opset=10), {'x': x})
# Squeeze/Unsqueeze-1/11
x = R(1, 3, 1, 4)
S('sq1', mk([oh.make_node('Squeeze', ['x'], ['y'], axes=[0, 2])], [vi('x', F, x.shape)], [vi('y')], opset=1), {'x': x})
S('sq1_noaxes', mk([oh.make_node('Squeeze', ['x'], ['y'])], [vi('x', F, x.shape)], [vi('y')], opset=1), {'x': x})
S('sq11_neg', mk([oh.make_node('Squeeze', ['x'], ['y'], axes=[-2])], [vi('x', F, x.shape)], [vi('y')], opset=11), {'x': x})
S('usq1', mk([oh.make_node('Unsqueeze', ['x'], ['y'], axes=[0, 5])], [vi('x', F, x.shape)], [vi('y')], opset=1), {'x': x})
S('usq11_neg', mk([oh.make_node('Unsqueeze', ['x'], ['y'], axes=[-1, 1])], [vi('x', F, x.shape)], [vi('y')], opset=11), {'x': x})
S('usq11_neg2', mk([oh.make_node('Unsqueeze', ['x'], ['y'], axes=[-6, -1])], [vi('x', F, x.shape)], [vi('y')], opset=11), {'x': x})
# ReduceSum-1/11 axes attribute, keepdims, negative
x = R(2, 3, 4)
for op in ('ReduceSum', 'ReduceMean', 'ReduceMax', 'ReduceProd', 'ReduceL2', 'ReduceLogSumExp', 'ReduceSumSquare', 'ArgMax', 'ArgMin'):
    for ax, kd in (([1], 1), ([0, 2], 0), (None, 1), (None, 0), ([-1], 0), ([-3, -1], 1)):
        if op.startswith('Arg'):
            if ax is None or len(ax) != 1: continue
            kw = dict(axis=ax[0], keepdims=kd); ot = I
        else:
            kw = dict(keepdims=kd); ot = F
            if ax is not None: kw['axes'] = ax
        for opset in (1, 11):
            if opset == 1 and any(a < 0 for a in (ax or [])): continue
            S(f'{op}{opset}_{ax}_{kd}', mk([oh.make_node(op, ['x'], ['y'], **kw)], [vi('x', F, x.shape)], [vi('y', ot)], opset=opset), {'x': x})
# Clip-6 attrs, Clip-11 inputs with missing
x = R(3, 5) * 3
S('clip6', mk([oh.make_node('Clip', ['x'], ['y'], min=-1.0, max=0.5)], [vi('x', F, x.shape)], [vi('y')], opset=6), {'x': x})
S('clip6_nomax', mk([oh.make_node('Clip', ['x'], ['y'], min=-1.0)], [vi('x', F, x.shape)], [vi('y')], opset=6), {'x': x})
S('clip6_none', mk([oh.make_node('Clip', ['x'], ['y'])], [vi('x', F, x.shape)], [vi('y')], opset=6), {'x': x})
S('clip11_min_only', mk([oh.make_node('Clip', ['x', 'mn'], ['y'])], [vi('x', F, x.shape)], [vi('y')], [c('mn', np.array(-0.5, np.float32))], opset=11), {'x': x})
S('clip11_max_only', mk([oh.make_node('Clip', ['x', '', 'mx'], ['y'])], [vi('x', F, x.shape)], [vi('y')], [c('mx', np.array(0.25, np.float32))], opset=11), {'x': x})
S('clip11_none', mk([oh.make_node('Clip', ['x'], ['y'])], [vi('x', F, x.shape)], [vi('y')], opset=11), {'x': x})
S('clip11_dyn', mk([oh.make_node('Clip', ['x', 'mn', 'mx'], ['y'])], [vi('x', F, x.shape), vi('mn', F, []), vi('mx', F, [])], [vi('y')], opset=11), {'x': x, 'mn': np.array(-2, np.float32), 'mx': np.array(1, np.float32)})
S('clip11_inverted', mk([oh.make_node('Clip', ['x', 'mn', 'mx'], ['y'])], [vi('x', F, x.shape)], [vi('y')], [c('mn', np.array(1, np.float32)), c('mx', np.array(-1, np.float32))], opset=11), {'x': x})
S('clip6_relu', mk([oh.make_node('Conv', ['x', 'w'], ['c']), oh.make_node('Clip', ['c'], ['y'], min=0.0, max=6.0)], [vi('x', F, [1, 3, 5, 5])], [vi('y')], [c('w', R(4, 3, 3, 3))], opset=6), {'x': R(1, 3, 5, 5) * 3})
# Gemm-6 broadcast, -7, -9
for op in (6, 7, 9, 11):
    for ta, tb in ((0, 0), (1, 0), (0, 1), (1, 1)):
        for cs in ((5,), (1, 5), (3, 1), (3, 5), ()):
            if op < 11 and cs == (): continue
            A = R(4, 3) if ta else R(3, 4); B = R(5, 4) if tb else R(4, 5)
            kw = dict(transA=ta, transB=tb, alpha=0.7, beta=1.3)
            if op == 6: kw['broadcast'] = int(cs != (3, 5))
            ins = ['a', 'b', 'c'] if cs else ['a', 'b']
            inits = [c('b', B)] + ([c('c', R(*cs))] if cs else [])
            S(f'gemm{op}_{ta}{tb}_{"x".join(map(str, cs))}', mk([oh.make_node('Gemm', ins, ['y'], **kw)], [vi('a', F, A.shape)], [vi('y')], inits, opset=op), {'a': A})
S('gemm7_scalarC', mk([oh.make_node('Gemm', ['a', 'b', 'c'], ['y'])], [vi('a', F, [3, 4])], [vi('y')], [c('b', R(4, 5)), c('c', np.array([0.5], np.float32))], opset=7), {'a': R(3, 4)})
# Concat-4, -1 (no axis: default 1)
S('concat4', mk([oh.make_node('Concat', ['a', 'b'], ['y'], axis=1)], [vi('a', F, [2, 3, 4]), vi('b', F, [2, 1, 4])], [vi('y')], opset=4), {'a': R(2, 3, 4), 'b': R(2, 1, 4)})
S('concat1_default', mk([oh.make_node('Concat', ['a', 'b'], ['y'])], [vi('a', F, [2, 3, 4]), vi('b', F, [2, 1, 4])], [vi('y')], opset=1), {'a': R(2, 3, 4), 'b': R(2, 1, 4)})
S('concat11_neg', mk([oh.make_node('Concat', ['a', 'b'], ['y'], axis=-1)], [vi('a', F, [2, 3, 4]), vi('b', F, [2, 3, 2])], [vi('y')], opset=11), {'a': R(2, 3, 4), 'b': R(2, 3, 2)})
# Reshape-1 shape attr, Reshape-5 0/-1
x = R(2, 3, 4)
S('reshape1', mk([oh.make_node('Reshape', ['x'], ['y'], shape=[4, -1])], [vi('x', F, x.shape)], [vi('y')], opset=1), {'x': x})
S('reshape1_zero', mk([oh.make_node('Reshape', ['x'], ['y'], shape=[0, -1, 2])], [vi('x', F, x.shape)], [vi('y')], opset=1), {'x': x})
S('reshape5_zero', mk([oh.make_node('Reshape', ['x', 's'], ['y'])], [vi('x', F, x.shape)], [vi('y')], [c('s', np.array([0, 0, -1], np.int64))], opset=5), {'x': x})
# Flatten-1 / -9 / -11 neg
x = R(2, 3, 4, 5)
for op, ax in ((1, 0), (1, 1), (1, 2), (1, 4), (9, 3), (11, -1), (11, -4), (1, None)):
    kw = {} if ax is None else {'axis': ax}
    S(f'flat{op}_{ax}', mk([oh.make_node('Flatten', ['x'], ['y'], **kw)], [vi('x', F, x.shape)], [vi('y')], opset=op), {'x': x})
# MaxPool-8/10/11 with Indices, storage_order, ceil_mode, dilations
x = R(2, 3, 7, 9)
for op in (1, 8, 10, 11, 12):
    for k, s, p, d, cm, so in (((3, 3), (2, 2), (0, 0, 0, 0), None, 0, 0), ((3, 3), (2, 2), (0, 0, 0, 0), None, 1, 0), ((2, 3), (2, 2), (1, 1, 1, 1), None, 0, 1),
                               ((3, 2), (1, 3), (1, 0, 1, 0), (2, 2), 0, 0), ((2, 2), (3, 3), (0, 0, 0, 0), (2, 1), 1, 1), ((3, 3), (1, 1), (0, 0, 0, 0), None, 0, 0)):
        kw = dict(kernel_shape=list(k), strides=list(s), pads=list(p))
        if op < 10 and (cm or d): continue
        if op == 10 and d: continue
        if op >= 10: kw['ceil_mode'] = cm
        if d: kw['dilations'] = list(d)
        outs = ['y']; ov = [vi('y')]
        if op >= 8: kw['storage_order'] = so; outs.append('i'); ov.append(vi('i', I))
        S(f'maxpool{op}_{k}_{s}_{p}_{d}_{cm}_{so}'.replace(' ', ''), mk([oh.make_node('MaxPool', ['x'], outs, **kw)], [vi('x', F, x.shape)], ov, opset=op), {'x': x})
S('maxpool8_autopad_su', mk([oh.make_node('MaxPool', ['x'], ['y', 'i'], kernel_shape=[3, 3], strides=[2, 2], auto_pad='SAME_UPPER')], [vi('x', F, x.shape)], [vi('y'), vi('i', I)], opset=8), {'x': x})
S('maxpool8_autopad_sl', mk([oh.make_node('MaxPool', ['x'], ['y'], kernel_shape=[2, 2], strides=[2, 2], auto_pad='SAME_LOWER')], [vi('x', F, x.shape)], [vi('y')], opset=8), {'x': x})
S('maxpool8_1d_idx', mk([oh.make_node('MaxPool', ['x'], ['y', 'i'], kernel_shape=[3], strides=[2], pads=[1, 1])], [vi('x', F, [2, 3, 10])], [vi('y'), vi('i', I)], opset=8), {'x': R(2, 3, 10)})
S('maxpool8_3d_idx', mk([oh.make_node('MaxPool', ['x'], ['y', 'i'], kernel_shape=[2, 2, 2], strides=[2, 2, 2], storage_order=1)], [vi('x', F, [1, 2, 4, 5, 6])], [vi('y'), vi('i', I)], opset=8), {'x': R(1, 2, 4, 5, 6)})
# AveragePool-7/10/11
for op in (1, 7, 10, 11):
    for k, s, p, cip, cm in (((3, 3), (2, 2), (1, 1, 1, 1), 0, 0), ((3, 3), (2, 2), (1, 1, 1, 1), 1, 0), ((3, 3), (2, 2), (0, 1, 1, 0), 1, 1), ((2, 2), (2, 2), (0, 0, 0, 0), 0, 1), ((4, 4), (3, 3), (1, 2, 1, 2), 1, 1), ((4, 4), (3, 3), (1, 2, 1, 2), 0, 1)):
        kw = dict(kernel_shape=list(k), strides=list(s), pads=list(p))
        if op < 7 and cip: continue
        if op < 10 and cm: continue
        if op >= 7: kw['count_include_pad'] = cip
        if op >= 10: kw['ceil_mode'] = cm
        S(f'avgpool{op}_{k}_{s}_{p}_{cip}_{cm}'.replace(' ', ''), mk([oh.make_node('AveragePool', ['x'], ['y'], **kw)], [vi('x', F, x.shape)], [vi('y')], opset=op), {'x': x})
S('avgpool7_same_upper_cip', mk([oh.make_node('AveragePool', ['x'], ['y'], kernel_shape=[3, 3], strides=[2, 2], auto_pad='SAME_UPPER', count_include_pad=1)], [vi('x', F, x.shape)], [vi('y')], opset=7), {'x': x})
S('avgpool7_same_lower', mk([oh.make_node('AveragePool', ['x'], ['y'], kernel_shape=[4, 4], strides=[1, 1], auto_pad='SAME_LOWER')], [vi('x', F, x.shape)], [vi('y')], opset=7), {'x': x})
S('lppool2', mk([oh.make_node('LpPool', ['x'], ['y'], kernel_shape=[3, 3], p=2, pads=[1, 1, 1, 1])], [vi('x', F, x.shape)], [vi('y')], opset=2), {'x': x})
S('glpp2', mk([oh.make_node('GlobalLpPool', ['x'], ['y'], p=3)], [vi('x', F, x.shape)], [vi('y')], opset=2), {'x': x})
# Softmax / LogSoftmax / Hardmax 1/11 (2-D coercion), 13 for comparison
x = R(2, 3, 4, 5)
for op in ('Softmax', 'LogSoftmax', 'Hardmax'):
    for opset in (1, 11, 13):
        for ax in (None, 0, 1, 2, 3, -1, -3):
            if opset == 1 and ax is not None and ax < 0: continue
            kw = {} if ax is None else {'axis': ax}
            xx = x if op != 'Hardmax' else np.round(x * 2) / 2  # ties for Hardmax
            S(f'{op}{opset}_{ax}', mk([oh.make_node(op, ['x'], ['y'], **kw)], [vi('x', F, x.shape)], [vi('y')], opset=opset), {'x': xx})
# Cast-6 int to
for to in (TP.INT32, TP.INT64, TP.FLOAT16, TP.DOUBLE, TP.BOOL, TP.INT8, TP.UINT8):
    S(f'cast6_{to}', mk([oh.make_node('Cast', ['x'], ['y'], to=to)], [vi('x', F, [7])], [vi('y', to)], opset=6), {'x': np.array([0, -1.7, 2.5, 3.49, -0.3, 100.2, 1e-3], np.float32)})
# Gather-1, Shape-1, Size-1
x = R(5, 4)
S('gather1', mk([oh.make_node('Gather', ['x', 'i'], ['y'], axis=1)], [vi('x', F, x.shape), vi('i', I, [3])], [vi('y')], opset=1), {'x': x, 'i': np.array([3, 0, 2], np.int64)})
S('gather1_i32', mk([oh.make_node('Gather', ['x', 'i'], ['y'])], [vi('x', F, x.shape), vi('i', TP.INT32, [2, 2])], [vi('y')], opset=1), {'x': x, 'i': np.array([[4, 0], [1, 1]], np.int32)})
S('shape1_gather', mk([oh.make_node('Shape', ['x'], ['s']), oh.make_node('Gather', ['s', 'i'], ['g'], axis=0), oh.make_node('Unsqueeze', ['g'], ['u'], axes=[0]),
                       oh.make_node('Concat', ['u', 'm'], ['ns'], axis=0), oh.make_node('Reshape', ['x', 'ns'], ['y'])],
                      [vi('x', F, [5, 4])], [vi('y')], [c('i', np.array(0, np.int64)), c('m', np.array([-1], np.int64))], opset=7), {'x': x})
S('size1', mk([oh.make_node('Size', ['x'], ['y'])], [vi('x', F, x.shape)], [vi('y', I)], opset=1), {'x': x})
# Constant-9, ConstantOfShape-9
S('const9_add', mk([oh.make_node('Constant', [], ['k'], value=c('kv', R(5, 4))), oh.make_node('Add', ['x', 'k'], ['y'])], [vi('x', F, [5, 4])], [vi('y')], opset=9), {'x': x})
S('const1_int', mk([oh.make_node('Constant', [], ['k'], value=c('kv', np.array([2, 10], np.int64))), oh.make_node('Reshape', ['x', 'k'], ['y'])], [vi('x', F, [5, 4])], [vi('y')], opset=5), {'x': x})
S('cos9_default', mk([oh.make_node('ConstantOfShape', ['s'], ['y'])], [vi('s', I, [2])], [vi('y')], opset=9), {'s': np.array([2, 3], np.int64)})
S('cos9_int', mk([oh.make_node('ConstantOfShape', ['s'], ['y'], value=c('v', np.array([7], np.int32)))], [vi('s', I, [3])], [vi('y', TP.INT32)], opset=9), {'s': np.array([2, 1, 3], np.int64)})
S('cos9_zero', mk([oh.make_node('ConstantOfShape', ['s'], ['y'], value=c('v', np.array([1.5], np.float32)))], [vi('s', I, [2])], [vi('y')], opset=9), {'s': np.array([2, 0], np.int64)})
S('cos9_shape', mk([oh.make_node('Shape', ['x'], ['s']), oh.make_node('ConstantOfShape', ['s'], ['c'], value=c('v', np.array([0.5], np.float32))), oh.make_node('Mul', ['x', 'c'], ['y'])], [vi('x', F, [5, 4])], [vi('y')], opset=9), {'x': x})
# Expand-8, Where-9, NonZero-9
S('expand8', mk([oh.make_node('Expand', ['x', 's'], ['y'])], [vi('x', F, [3, 1])], [vi('y')], [c('s', np.array([2, 1, 4], np.int64))], opset=8), {'x': R(3, 1)})
S('expand8_smaller', mk([oh.make_node('Expand', ['x', 's'], ['y'])], [vi('x', F, [2, 3, 1])], [vi('y')], [c('s', np.array([3, 1], np.int64))], opset=8), {'x': R(2, 3, 1)})
S('expand8_dyn', mk([oh.make_node('Expand', ['x', 's'], ['y'])], [vi('x', F, [3, 1]), vi('s', I, [2])], [vi('y')], opset=8), {'x': R(3, 1), 's': np.array([1, 5], np.int64)})
S('where9', mk([oh.make_node('Where', ['c', 'a', 'b'], ['y'])], [vi('c', TP.BOOL, [3, 1]), vi('a', F, [1, 4]), vi('b', F, [3, 4])], [vi('y')], opset=9), {'c': np.array([[True], [False], [True]]), 'a': R(1, 4), 'b': R(3, 4)})
S('nonzero9', mk([oh.make_node('NonZero', ['x'], ['y'])], [vi('x', F, [3, 4])], [vi('y', I)], opset=9), {'x': (R(3, 4) > 0.3).astype(np.float32) * R(3, 4)})
S('nonzero9_bool', mk([oh.make_node('NonZero', ['x'], ['y'])], [vi('x', TP.BOOL, [2, 3, 2])], [vi('y', I)], opset=9), {'x': R(2, 3, 2) > 0})
S('nonzero9_int_scalar', mk([oh.make_node('NonZero', ['x'], ['y'])], [vi('x', TP.INT32, [])], [vi('y', I)], opset=9), {'x': np.array(5, np.int32)})
# old elementwise: Add-6 with broadcast attr / axis, Sum-6, Max-6 (same shape), PRelu-7, LeakyRelu-6, Elu, Selu, HardSigmoid, Upsample
S('add6_bcast_axis', mk([oh.make_node('Add', ['a', 'b'], ['y'], broadcast=1, axis=1)], [vi('a', F, [2, 3, 4, 5]), vi('b', F, [3])], [vi('y')], opset=6), {'a': R(2, 3, 4, 5), 'b': R(3)})
S('add6_bcast_tail', mk([oh.make_node('Add', ['a', 'b'], ['y'], broadcast=1)], [vi('a', F, [2, 3, 4, 5]), vi('b', F, [4, 5])], [vi('y')], opset=6), {'a': R(2, 3, 4, 5), 'b': R(4, 5)})
S('mul6_bcast_axis', mk([oh.make_node('Mul', ['a', 'b'], ['y'], broadcast=1, axis=1)], [vi('a', F, [2, 3, 4, 5]), vi('b', F, [3, 4])], [vi('y')], opset=6), {'a': R(2, 3, 4, 5), 'b': R(3, 4)})
S('sub6_bcast_axis0', mk([oh.make_node('Sub', ['a', 'b'], ['y'], broadcast=1, axis=0)], [vi('a', F, [2, 3, 4])], [vi('y')], [c('b', R(2))], opset=6), {'a': R(2, 3, 4)})
S('sum6', mk([oh.make_node('Sum', ['a', 'b', 'c'], ['y'])], [vi('a', F, [3, 4]), vi('b', F, [3, 4]), vi('c', F, [3, 4])], [vi('y')], opset=6), {'a': R(3, 4), 'b': R(3, 4), 'c': R(3, 4)})
S('sum8_bcast', mk([oh.make_node('Sum', ['a', 'b', 'c'], ['y'])], [vi('a', F, [3, 1]), vi('b', F, [1, 4]), vi('c', F, [4])], [vi('y')], opset=8), {'a': R(3, 1), 'b': R(1, 4), 'c': R(4)})
S('mean8_one', mk([oh.make_node('Mean', ['a'], ['y'])], [vi('a', F, [3, 4])], [vi('y')], opset=8), {'a': R(3, 4)})
S('max8_bcast', mk([oh.make_node('Max', ['a', 'b'], ['y'])], [vi('a', F, [3, 1]), vi('b', F, [1, 4])], [vi('y')], opset=8), {'a': R(3, 1), 'b': R(1, 4)})
S('prelu7_chan', mk([oh.make_node('PRelu', ['x', 's'], ['y'])], [vi('x', F, [2, 3, 4, 4])], [vi('y')], [c('s', R(3, 1, 1))], opset=7), {'x': R(2, 3, 4, 4)})
S('prelu6_chan', mk([oh.make_node('PRelu', ['x', 's'], ['y'])], [vi('x', F, [2, 3, 4, 4])], [vi('y')], [c('s', R(3, 1, 1))], opset=6), {'x': R(2, 3, 4, 4)})
S('prelu9_scalar', mk([oh.make_node('PRelu', ['x', 's'], ['y'])], [vi('x', F, [2, 3, 4, 4])], [vi('y')], [c('s', R(1))], opset=9), {'x': R(2, 3, 4, 4)})
for op, kw in (('LeakyRelu', {}), ('Elu', {}), ('Selu', {}), ('HardSigmoid', {}), ('ThresholdedRelu', {}), ('Softplus', {}), ('Softsign', {}), ('LeakyRelu', {'alpha': 0.3}), ('HardSigmoid', {'alpha': 0.5, 'beta': 0.1}), ('Shrink', {'lambd': 0.7, 'bias': 0.2})):
    S(f'act_{op}_{len(kw)}', mk([oh.make_node(op, ['x'], ['y'], **kw)], [vi('x', F, [3, 7])], [vi('y')], opset=9 if op == 'Shrink' else 6), {'x': R(3, 7) * 2})
# Transpose-1 default perm, DepthToSpace-1 (DCR only), SpaceToDepth-1, LRN-1, InstanceNorm-6, MeanVarianceNormalization-9
S('transpose1_default', mk([oh.make_node('Transpose', ['x'], ['y'])], [vi('x', F, [2, 3, 4])], [vi('y')], opset=1), {'x': R(2, 3, 4)})
S('d2s1', mk([oh.make_node('DepthToSpace', ['x'], ['y'], blocksize=2)], [vi('x', F, [1, 8, 2, 3])], [vi('y')], opset=1), {'x': R(1, 8, 2, 3)})
S('d2s11_crd', mk([oh.make_node('DepthToSpace', ['x'], ['y'], blocksize=2, mode='CRD')], [vi('x', F, [1, 8, 2, 3])], [vi('y')], opset=11), {'x': R(1, 8, 2, 3)})
S('s2d1', mk([oh.make_node('SpaceToDepth', ['x'], ['y'], blocksize=2)], [vi('x', F, [1, 2, 4, 6])], [vi('y')], opset=1), {'x': R(1, 2, 4, 6)})
S('lrn1', mk([oh.make_node('LRN', ['x'], ['y'], size=3, alpha=1e-3, beta=0.75, bias=1.0)], [vi('x', F, [1, 6, 3, 3])], [vi('y')], opset=1), {'x': R(1, 6, 3, 3) * 5})
S('lrn1_even', mk([oh.make_node('LRN', ['x'], ['y'], size=4, alpha=1e-2, beta=0.5, bias=2.0)], [vi('x', F, [1, 6, 3, 3])], [vi('y')], opset=1), {'x': R(1, 6, 3, 3) * 5})
S('in6', mk([oh.make_node('InstanceNormalization', ['x', 's', 'b'], ['y'], epsilon=1e-3)], [vi('x', F, [2, 3, 4, 5])], [vi('y')], [c('s', R(3)), c('b', R(3))], opset=6), {'x': R(2, 3, 4, 5)})
S('mvn9', mk([oh.make_node('MeanVarianceNormalization', ['x'], ['y'])], [vi('x', F, [2, 3, 4, 5])], [vi('y')], opset=9), {'x': R(2, 3, 4, 5)})
S('mvn9_axes', mk([oh.make_node('MeanVarianceNormalization', ['x'], ['y'], axes=[1])], [vi('x', F, [2, 3, 4, 5])], [vi('y')], opset=9), {'x': R(2, 3, 4, 5)})
# ConvTranspose-1 output_shape / output_padding, Conv-1 auto_pad
S('convt1_outshape', mk([oh.make_node('ConvTranspose', ['x', 'w'], ['y'], strides=[2, 2], output_shape=[9, 10])], [vi('x', F, [1, 2, 4, 4])], [vi('y')], [c('w', R(2, 3, 3, 3))], opset=1), {'x': R(1, 2, 4, 4)})
S('convt1_outpad', mk([oh.make_node('ConvTranspose', ['x', 'w'], ['y'], strides=[2, 2], output_padding=[1, 0], pads=[1, 1, 1, 1])], [vi('x', F, [1, 2, 4, 4])], [vi('y')], [c('w', R(2, 3, 3, 3))], opset=1), {'x': R(1, 2, 4, 4)})
S('convt1_same_upper', mk([oh.make_node('ConvTranspose', ['x', 'w'], ['y'], strides=[2, 2], auto_pad='SAME_UPPER')], [vi('x', F, [1, 2, 4, 4])], [vi('y')], [c('w', R(2, 3, 3, 3))], opset=1), {'x': R(1, 2, 4, 4)})
S('conv1_same_lower', mk([oh.make_node('Conv', ['x', 'w'], ['y'], strides=[2, 2], auto_pad='SAME_LOWER')], [vi('x', F, [1, 2, 6, 7])], [vi('y')], [c('w', R(3, 2, 4, 4))], opset=1), {'x': R(1, 2, 6, 7)})
S('conv1_valid', mk([oh.make_node('Conv', ['x', 'w'], ['y'], auto_pad='VALID', group=2)], [vi('x', F, [1, 4, 6, 7])], [vi('y')], [c('w', R(4, 2, 3, 3))], opset=1), {'x': R(1, 4, 6, 7)})
# Greater-7/9 (float only in 7), Equal-7 int, Not, Xor; Less-9 int
S('greater7', mk([oh.make_node('Greater', ['a', 'b'], ['y'])], [vi('a', F, [3, 4]), vi('b', F, [4])], [vi('y', TP.BOOL)], opset=7), {'a': R(3, 4), 'b': R(4)})
S('greater9_int', mk([oh.make_node('Greater', ['a', 'b'], ['y'])], [vi('a', I, [3, 4]), vi('b', I, [4])], [vi('y', TP.BOOL)], opset=9), {'a': rng.integers(-3, 3, (3, 4)), 'b': rng.integers(-3, 3, (4,))})
S('equal7_int', mk([oh.make_node('Equal', ['a', 'b'], ['y'])], [vi('a', I, [3, 4]), vi('b', I, [4])], [vi('y', TP.BOOL)], opset=7), {'a': rng.integers(-3, 3, (3, 4)), 'b': rng.integers(-3, 3, (4,))})
# Sign, Erf, IsNaN-9, Shrink, EyeLike-9, OneHot-9, Compress-9, Scatter-9 (deprecated), MaxUnpool-9, Tile-6
S('isnan9', mk([oh.make_node('IsNaN', ['x'], ['y'])], [vi('x', F, [4])], [vi('y', TP.BOOL)], opset=9), {'x': np.array([1, np.nan, np.inf, -0.0], np.float32)})
S('eyelike9', mk([oh.make_node('EyeLike', ['x'], ['y'], k=1)], [vi('x', F, [3, 5])], [vi('y')], opset=9), {'x': R(3, 5)})
S('eyelike9_dtype', mk([oh.make_node('EyeLike', ['x'], ['y'], k=-2, dtype=TP.INT32)], [vi('x', F, [4, 3])], [vi('y', TP.INT32)], opset=9), {'x': R(4, 3)})
S('onehot9', mk([oh.make_node('OneHot', ['i', 'd', 'v'], ['y'], axis=-1)], [vi('i', I, [2, 3])], [vi('y')], [c('d', np.array([5], np.int64)), c('v', np.array([-1, 2], np.float32))], opset=9), {'i': np.array([[0, 4, 2], [1, 3, 3]], np.int64)})
S('onehot11_neg', mk([oh.make_node('OneHot', ['i', 'd', 'v'], ['y'], axis=0)], [vi('i', I, [2, 3])], [vi('y')], [c('d', np.array(5, np.int64)), c('v', np.array([0, 1], np.float32))], opset=11), {'i': np.array([[0, -1, 2], [-5, 3, 3]], np.int64)})
S('compress9', mk([oh.make_node('Compress', ['x', 'c'], ['y'], axis=1)], [vi('x', F, [3, 4]), vi('c', TP.BOOL, [3])], [vi('y')], opset=9), {'x': R(3, 4), 'c': np.array([True, False, True])})
S('compress9_noaxis', mk([oh.make_node('Compress', ['x', 'c'], ['y'])], [vi('x', F, [3, 4]), vi('c', TP.BOOL, [5])], [vi('y')], opset=9), {'x': R(3, 4), 'c': np.array([True, False, True, True, False])})
S('scatter9', mk([oh.make_node('Scatter', ['x', 'i', 'u'], ['y'], axis=1)], [vi('x', F, [3, 4]), vi('i', I, [3, 2]), vi('u', F, [3, 2])], [vi('y')], opset=9), {'x': R(3, 4), 'i': np.array([[0, 3], [1, 2], [3, 0]], np.int64), 'u': R(3, 2)})
S('tile6', mk([oh.make_node('Tile', ['x', 'r'], ['y'])], [vi('x', F, [2, 3])], [vi('y')], [c('r', np.array([2, 3], np.int64))], opset=6), {'x': R(2, 3)})
S('maxunpool9', mk([oh.make_node('MaxPool', ['x'], ['p', 'i'], kernel_shape=[2, 2], strides=[2, 2]), oh.make_node('MaxUnpool', ['p', 'i'], ['y'], kernel_shape=[2, 2], strides=[2, 2])], [vi('x', F, [1, 2, 4, 6])], [vi('y')], opset=9), {'x': R(1, 2, 4, 6)})
S('maxunpool11_outshape', mk([oh.make_node('MaxPool', ['x'], ['p', 'i'], kernel_shape=[2, 2], strides=[2, 2]), oh.make_node('MaxUnpool', ['p', 'i', 's'], ['y'], kernel_shape=[2, 2], strides=[2, 2])], [vi('x', F, [1, 2, 5, 7])], [vi('y')], [c('s', np.array([1, 2, 5, 7], np.int64))], opset=11), {'x': R(1, 2, 5, 7)})
S('sign9', mk([oh.make_node('Sign', ['x'], ['y'])], [vi('x', F, [5])], [vi('y')], opset=9), {'x': np.array([-2, 0, -0.0, 3, np.nan], np.float32)})
S('globalmax1', mk([oh.make_node('GlobalMaxPool', ['x'], ['y'])], [vi('x', F, [2, 3, 4, 5])], [vi('y')], opset=1), {'x': R(2, 3, 4, 5)})
S('globalavg1', mk([oh.make_node('GlobalAveragePool', ['x'], ['y'])], [vi('x', F, [2, 3, 4, 5])], [vi('y')], opset=1), {'x': R(2, 3, 4, 5)})
S('matmul1_bcast', mk([oh.make_node('MatMul', ['a', 'b'], ['y'])], [vi('a', F, [2, 1, 3, 4]), vi('b', F, [5, 4, 6])], [vi('y')], opset=1), {'a': R(2, 1, 3, 4), 'b': R(5, 4, 6)})
S('matmul1_1d', mk([oh.make_node('MatMul', ['a', 'b'], ['y'])], [vi('a', F, [4]), vi('b', F, [2, 4, 3])], [vi('y')], opset=1), {'a': R(4), 'b': R(2, 4, 3)})
S('mod10_fmod', mk([oh.make_node('Mod', ['a', 'b'], ['y'], fmod=1)], [vi('a', F, [6]), vi('b', F, [6])], [vi('y')], opset=10), {'a': np.array([5, -5, 5, -5, 7.5, -0.0], np.float32), 'b': np.array([3, 3, -3, -3, 2, 2], np.float32)})
S('mod10_int', mk([oh.make_node('Mod', ['a', 'b'], ['y'])], [vi('a', I, [4]), vi('b', I, [4])], [vi('y', I)], opset=10), {'a': np.array([5, -5, 5, -5], np.int64), 'b': np.array([3, 3, -3, -3], np.int64)})
S('reversesequence10', mk([oh.make_node('ReverseSequence', ['x', 'l'], ['y'], batch_axis=1, time_axis=0)], [vi('x', F, [4, 3, 2]), vi('l', I, [3])], [vi('y')], opset=10), {'x': R(4, 3, 2), 'l': np.array([4, 1, 3], np.int64)})
S('isinf10', mk([oh.make_node('IsInf', ['x'], ['y'], detect_negative=0)], [vi('x', F, [4])], [vi('y', TP.BOOL)], opset=10), {'x': np.array([np.inf, -np.inf, 1, np.nan], np.float32)})
S('cumsum11', mk([oh.make_node('CumSum', ['x', 'a'], ['y'], exclusive=1, reverse=1)], [vi('x', F, [3, 4])], [vi('y')], [c('a', np.array(1, np.int32))], opset=11), {'x': R(3, 4)})
S('range11', mk([oh.make_node('Range', ['s', 'l', 'd'], ['y'])], [], [vi('y')], [c('s', np.array(1.0, np.float32)), c('l', np.array(-3.0, np.float32)), c('d', np.array(-0.7, np.float32))], opset=11), {})
S('det11', mk([oh.make_node('Det', ['x'], ['y'])], [vi('x', F, [2, 3, 3])], [vi('y')], opset=11), {'x': R(2, 3, 3)})
S('round11', mk([oh.make_node('Round', ['x'], ['y'])], [vi('x', F, [6])], [vi('y')], opset=11), {'x': np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4999], np.float32)})
S('gathernd11', mk([oh.make_node('GatherND', ['x', 'i'], ['y'])], [vi('x', F, [3, 4, 5]), vi('i', I, [2, 2])], [vi('y')], opset=11), {'x': R(3, 4, 5), 'i': np.array([[0, 1], [2, -1]], np.int64)})
S('scatterelements11', mk([oh.make_node('ScatterElements', ['x', 'i', 'u'], ['y'], axis=-1)], [vi('x', F, [3, 4]), vi('i', I, [3, 2]), vi('u', F, [3, 2])], [vi('y')], opset=11), {'x': R(3, 4), 'i': np.array([[0, -1], [1, 2], [-4, 0]], np.int64), 'u': R(3, 2)})
S('unique11', mk([oh.make_node('Unique', ['x'], ['y', 'i', 'inv', 'cnt'], sorted=1)], [vi('x', F, [8])], [vi('y'), vi('i', I), vi('inv', I), vi('cnt', I)], opset=11), {'x': np.array([2, 1, 1, 3, 4, 3, 2, 2], np.float32)})
S('unique11_unsorted', mk([oh.make_node('Unique', ['x'], ['y', 'i', 'inv', 'cnt'], sorted=0)], [vi('x', F, [8])], [vi('y'), vi('i', I), vi('inv', I), vi('cnt', I)], opset=11), {'x': np.array([2, 1, 1, 3, 4, 3, 2, 2], np.float32)})
S('unique11_axis', mk([oh.make_node('Unique', ['x'], ['y', 'i', 'inv', 'cnt'], axis=0)], [vi('x', F, [4, 2])], [vi('y'), vi('i', I), vi('inv', I), vi('cnt', I)], opset=11), {'x': np.array([[1, 2], [0, 1], [1, 2], [0, 0]], np.float32)})
S('dql10', mk([oh.make_node('DequantizeLinear', ['x', 's', 'z'], ['y'])], [vi('x', TP.UINT8, [5])], [vi('y')], [c('s', np.array(0.1, np.float32)), c('z', np.array(128, np.uint8))], opset=10), {'x': np.array([0, 127, 128, 200, 255], np.uint8)})
S('ql10', mk([oh.make_node('QuantizeLinear', ['x', 's', 'z'], ['y'])], [vi('x', F, [6])], [vi('y', TP.INT8)], [c('s', np.array(0.5, np.float32)), c('z', np.array(-3, np.int8))], opset=10), {'x': np.array([0.25, 0.75, -0.25, 100, -100, 1.25], np.float32)})
S('bitshift11', mk([oh.make_node('BitShift', ['a', 'b'], ['y'], direction='RIGHT')], [vi('a', TP.UINT8, [4]), vi('b', TP.UINT8, [4])], [vi('y', TP.UINT8)], opset=11), {'a': np.array([255, 16, 3, 128], np.uint8), 'b': np.array([1, 4, 0, 7], np.uint8)})
print(n)
