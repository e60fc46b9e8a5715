import sys, numpy as np
sys.path.insert(0, '/tmp/rt14/gen')
from h import *
from hb import build, I
rng = np.random.default_rng(143)
only = sys.argv[1] if len(sys.argv) > 1 else ''
def R(*s): return rng.standard_normal(s).astype(np.float32)
from onnx.reference import ReferenceEvaluator
def run(name, nodes, feeds, inits=(), opset=19, outs=None, tol=(1e-4, 1e-5), expect_error=False):
    if only and only not in name: return
    try: m = build(name, nodes, feeds, inits, opset, outs)
    except Exception as ex: print('[skip]', name, str(ex)[:200]); return
    f, res = check(name, m, feeds, quiet=True, tol=tol, expect_error=expect_error)
    if f and not expect_error:
        # second opinion: onnx.reference
        try:
            e = ReferenceEvaluator(m).run(None, feeds)
            bad = []
            for b in ['ref', 'cpu', 'vulkan']:
                if res[b][0] != 0: bad.append(b + ' err'); continue
                for k, (o, ee) in enumerate(zip(res[b][2], e)):
                    c = cmp(o, ee, *tol)
                    if c: bad.append(f'{b} vs onnx.ref out{k}: {c}')
            print('    -> onnx.reference:', 'AGREES with fusor' if not bad else bad)
        except Exception as ex: print('    -> onnx.reference failed', str(ex)[:100])

F = lambda a: nh.from_array(np.asarray(a, np.float32), 'scales')
x4 = R(1, 2, 6, 8)
ctms = ['half_pixel', 'pytorch_half_pixel', 'align_corners', 'asymmetric', 'half_pixel_symmetric']
for mode in ['linear', 'cubic', 'nearest']:
    for ctm in ctms:
        for sc in [[1, 1, 0.5, 0.75], [1, 1, 0.34, 0.26], [1, 1, 1.5, 2.25], [1, 1, 0.6, 1.7]]:
            for aa in ([0, 1] if mode != 'nearest' else [0]):
                for ex in ([0, 1] if mode == 'cubic' else [0]):
                    kw = dict(mode=mode, coordinate_transformation_mode=ctm, antialias=aa, exclude_outside=ex)
                    if mode == 'cubic': kw['cubic_coeff_a'] = -0.5
                    nodes = [oh.make_node('Relu', ['x'], ['xr']), oh.make_node('Resize', ['xr', '', 'scales'], ['y'], **kw)]
                    run(f'Resize_{mode}_{ctm}_sc{sc[2]}x{sc[3]}_aa{aa}_ex{ex}', nodes, {'x': x4}, [F(sc)], opset=18)
# sizes with keep_aspect_ratio_policy + axes
for pol in ['stretch', 'not_larger', 'not_smaller']:
    for sizes, axes in [([3, 5], [2, 3]), ([5, 3], [-1, -2]), ([4], [3]), ([1, 2, 9, 4], None)]:
        for mode in ['linear', 'nearest', 'cubic']:
            kw = dict(mode=mode, keep_aspect_ratio_policy=pol)
            if axes is not None: kw['axes'] = axes
            nodes = [oh.make_node('Resize', ['x', '', '', 'sizes'], ['y'], **kw)]
            run(f'Resize_sizes_{pol}_{mode}_{sizes}_{axes}'.replace(' ', ''), nodes, {'x': x4}, [I('sizes', sizes)], opset=18)
    for aa in [0, 1]:
        nodes = [oh.make_node('Resize', ['x', '', '', 'sizes'], ['y'], mode='linear', antialias=aa, keep_aspect_ratio_policy=pol, axes=[2, 3])]
        run(f'Resize_sizes_{pol}_aa{aa}_down', nodes, {'x': x4}, [I('sizes', [2, 3])], opset=18)
# scales with axes
for axes, sc in [([2, 3], [0.5, 1.5]), ([3], [0.4]), ([-2], [2.0])]:
    nodes = [oh.make_node('Resize', ['x', '', 'scales'], ['y'], mode='linear', axes=axes)]
    run(f'Resize_scales_axes_{axes}'.replace(' ', ''), nodes, {'x': x4}, [F(sc)], opset=18)
# tf_crop_and_resize + extrapolation + axes
for mode in ['linear', 'nearest', 'cubic']:
    roi = nh.from_array(np.array([0.2, -0.3, 0.9, 1.4], np.float32), 'roi')
    nodes = [oh.make_node('Resize', ['x', 'roi', 'scales'], ['y'], mode=mode, coordinate_transformation_mode='tf_crop_and_resize', extrapolation_value=-7.5, axes=[2, 3])]
    run(f'Resize_tfcrop_{mode}_axes', nodes, {'x': x4}, [roi, F([1.5, 0.75])], opset=18)
# integer resize nearest / linear uint8
xu = rng.integers(0, 255, (1, 1, 5, 7)).astype(np.uint8)
for mode in ['nearest', 'linear', 'cubic']:
    nodes = [oh.make_node('Resize', ['x', '', 'scales'], ['y'], mode=mode)]
    run(f'Resize_u8_{mode}', nodes, {'x': xu}, [F([1, 1, 1.7, 0.6])], opset=18)
    xi = rng.integers(-128, 127, (1, 1, 5, 7)).astype(np.int8)
    run(f'Resize_i8_{mode}', nodes, {'x': xi}, [F([1, 1, 1.7, 0.6])], opset=18)
# GridSample 3-D (5-D input), opset 20
for mode in ['linear', 'nearest', 'cubic']:
    for pm in ['zeros', 'border', 'reflection']:
        for ac in [0, 1]:
            if mode == 'cubic': continue
            x5 = R(1, 2, 3, 4, 5); g = (R(1, 2, 3, 4, 3) * 1.2).astype(np.float32)
            run(f'GridSample3d_{mode}_{pm}_ac{ac}', [oh.make_node('GridSample', ['x', 'g'], ['y'], mode=mode, padding_mode=pm, align_corners=ac)], {'x': x5, 'g': g}, opset=20)
# DepthToSpace / SpaceToDepth fused
for mode in ['DCR', 'CRD']:
    x = R(2, 8, 3, 4)
    nodes = [oh.make_node('Sigmoid', ['x'], ['s']), oh.make_node('DepthToSpace', ['s'], ['d'], blocksize=2, mode=mode), oh.make_node('Mul', ['d', 'd'], ['y'])]
    run(f'DepthToSpace_{mode}_fused', nodes, {'x': x}, outs=['y'], opset=13)
    xi = rng.integers(-100, 100, (1, 18, 2, 2)).astype(np.int64)
    run(f'DepthToSpace_{mode}_int64_b3', [oh.make_node('DepthToSpace', ['x'], ['y'], blocksize=3, mode=mode)], {'x': xi}, opset=13)
# InstanceNormalization
for shp in [(2, 3, 5), (1, 4, 3, 3), (2, 2, 2, 3, 2), (2, 3, 1), (3, 2)]:
    x = R(*shp) * 3 + 2
    C = shp[1]
    nodes = [oh.make_node('InstanceNormalization', ['x', 's', 'b'], ['y'], epsilon=1e-3), oh.make_node('Relu', ['y'], ['z'])]
    run(f'InstanceNorm_{shp}'.replace(' ', ''), nodes, {'x': x}, [nh.from_array(R(C), 's'), nh.from_array(R(C), 'b')], outs=['z'], opset=17)
# BatchNormalization training mode
for shp in [(4, 3, 5), (2, 3, 4, 4), (5, 2)]:
    x = R(*shp) * 2 + 1
    C = shp[1]
    nodes = [oh.make_node('BatchNormalization', ['x', 's', 'b', 'm', 'v'], ['y', 'rm', 'rv'], training_mode=1, momentum=0.8, epsilon=1e-4)]
    inits = [nh.from_array(R(C), 's'), nh.from_array(R(C), 'b'), nh.from_array(R(C), 'm'), nh.from_array(np.abs(R(C)) + 0.5, 'v')]
    run(f'BatchNormTrain_{shp}'.replace(' ', ''), nodes, {'x': x}, inits, outs=['y', 'rm', 'rv'], opset=15)
    nodes = [oh.make_node('BatchNormalization', ['x', 's', 'b', 'm', 'v'], ['y'], training_mode=1)]
    run(f'BatchNormTrain1out_{shp}'.replace(' ', ''), nodes, {'x': x}, inits, outs=['y'], opset=15)
    nodes = [oh.make_node('BatchNormalization', ['x', 's', 'b', 'm', 'v'], ['y'], epsilon=1e-2)]
    run(f'BatchNormInfer_{shp}'.replace(' ', ''), nodes, {'x': x}, inits, outs=['y'], opset=15)
