"""Resize sweep against onnxruntime: modes x coordinate modes x non-integer scales / sizes, antialias,
axes, keep_aspect_ratio_policy, exclude_outside, cubic_coeff_a (opset 19)."""
import os, sys, itertools, numpy as np, onnx
from onnx import helper as oh, numpy_helper as nh, TensorProto as TP
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib10 import save_case
rng = np.random.default_rng(5)
x = rng.uniform(-1, 1, (2, 3, 7, 9)).astype(np.float32)
n = 0
def case(name, attrs, scales=None, sizes=None, roi=None, opset=19, shape=(2, 3, 7, 9)):
    global n
    inits = []; ins = ['x', '', '']
    if roi is not None: inits.append(nh.from_array(np.array(roi, np.float32), 'roi')); ins[1] = 'roi'
    if scales is not None: inits.append(nh.from_array(np.array(scales, np.float32), 'sc')); ins[2] = 'sc'
    if sizes is not None: inits.append(nh.from_array(np.array(sizes, np.int64), 'sz')); ins.append('sz')
    while ins and ins[-1] == '': ins.pop()
    g = oh.make_graph([oh.make_node('Resize', ins, ['y'], **attrs)], 'g', [oh.make_tensor_value_info('x', TP.FLOAT, list(shape))],
                      [oh.make_tensor_value_info('y', TP.FLOAT, None)], inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid('', opset)], ir_version=9)
    xx = x if shape == x.shape else rng.uniform(-1, 1, shape).astype(np.float32)
    save_case('rs_' + name, m, {'x': xx}); n += 1
ctms = ['half_pixel', 'pytorch_half_pixel', 'align_corners', 'asymmetric', 'half_pixel_symmetric']
for mode in ('nearest', 'linear', 'cubic'):
    for ctm in ctms:
        for sc in ((1, 1, 1.5, 1.5), (1, 1, 0.6, 0.8), (1, 1, 2.3, 0.45), (1, 1, 3, 1)):
            nms = ('round_prefer_floor', 'round_prefer_ceil', 'floor', 'ceil') if mode == 'nearest' else ('round_prefer_floor',)
            for nm in nms:
                case(f'{mode}_{ctm}_{nm}_{"x".join(map(str, sc[2:]))}', dict(mode=mode, coordinate_transformation_mode=ctm, nearest_mode=nm), scales=sc)
        for sz in ((2, 3, 11, 4), (2, 3, 1, 1), (2, 3, 7, 17)):
            case(f'{mode}_{ctm}_sizes_{sz[2]}x{sz[3]}', dict(mode=mode, coordinate_transformation_mode=ctm), sizes=sz)
    for aa in (1,):
        for sc in ((1, 1, 0.5, 0.6), (1, 1, 0.3, 0.77), (1, 1, 1.5, 0.5)):
            if mode == 'nearest': continue
            for ctm in ('half_pixel', 'pytorch_half_pixel', 'align_corners', 'asymmetric'):
                case(f'{mode}_aa_{ctm}_{"x".join(map(str, sc[2:]))}', dict(mode=mode, antialias=1, coordinate_transformation_mode=ctm), scales=sc)
    for ex in (0, 1):
        for a in (-0.5, -0.75):
            if mode != 'cubic': continue
            case(f'cubic_ex{ex}_a{a}', dict(mode='cubic', exclude_outside=ex, cubic_coeff_a=a), scales=(1, 1, 0.6, 1.7))
    for pol in ('stretch', 'not_larger', 'not_smaller'):
        case(f'{mode}_kar_{pol}', dict(mode=mode, keep_aspect_ratio_policy=pol, axes=[2, 3]), sizes=(11, 4))
    case(f'{mode}_axes_neg', dict(mode=mode, axes=[-1]), scales=(1.7,))
    case(f'{mode}_axes_rev', dict(mode=mode, axes=[3, 2]), sizes=(5, 13))
    case(f'{mode}_tfcrop', dict(mode=mode, coordinate_transformation_mode='tf_crop_and_resize', extrapolation_value=-3.0), scales=(1, 1, 1.5, 0.8), roi=[0, 0, 0.1, -0.2, 1, 1, 0.8, 1.3])
    case(f'{mode}_tfcrop_sizes', dict(mode=mode, coordinate_transformation_mode='tf_crop_and_resize'), sizes=(2, 3, 5, 6), roi=[0, 0, 0.2, 0.3, 1, 1, 0.9, 0.6])
    case(f'{mode}_5d', dict(mode=mode), scales=(1, 1, 1.5, 0.5, 2), shape=(1, 2, 3, 4, 5))
    case(f'{mode}_batchscale', dict(mode=mode), scales=(1.5, 0.5, 1, 1)) if mode == 'nearest' else None
print(n)
