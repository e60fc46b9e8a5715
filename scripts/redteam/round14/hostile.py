# shape products that wrap int64 (each dim <= 2^40): must be a clear error, never an empty/small tensor or a crash
import sys, numpy as np
sys.path.insert(0, '/tmp/rt14/gen')
from h import *
from hb import I
only = sys.argv[1] if len(sys.argv) > 1 else ''
def R(*s): return np.random.default_rng(0).standard_normal(s).astype(np.float32)
def run(name, nodes, feeds, inits=(), outs=('y',), odt=TP.FLOAT, opset=18, expect_error=True, exp=None):
    if only and only not in name: return
    ins = [vi(n, oh.np_dtype_to_tensor_dtype(x.dtype), list(x.shape)) for n, x in feeds.items()]
    m = model(nodes, ins, [vi(o, odt, None) for o in outs], inits, opset=opset)
    f, res = check(name, m, feeds, quiet=False, expect_error=expect_error, exp=exp)
    for b in ['ref', 'cpu', 'vulkan']:
        rc, err, o = res[b]
        print(f'      {b}: rc={rc} {err[:160] if rc else [a.shape for a in o]}')
P32 = 2**32
wraps = {'2^32x2^32': [P32, P32], '2^40x2^24': [2**40, 2**24], '2^32x2^32x3': [P32, P32, 3], '2^33x2^31x5': [2**33, 2**31, 5],
         '3x2^40x2^40': [3, 2**40, 2**40]}
for tag, shp in wraps.items():
    for rt in [0, 1]:
        feeds = {'x': R(1, 1)} if len(shp) == 2 else {'x': R(1, 1, 1)}
        ini = [I('s', shp)]
        f2 = dict(feeds)
        if rt: f2['s'] = np.array(shp, np.int64); ini = []
        run(f'Expand_{tag}_rt{rt}', [oh.make_node('Expand', ['x', 's'], ['y'])], f2, ini)
        run(f'Tile_{tag}_rt{rt}', [oh.make_node('Tile', ['x', 's'], ['y'])], f2, ini)
        f3 = {} if not rt else {'s': np.array(shp, np.int64)}
        run(f'ConstantOfShape_{tag}_rt{rt}', [oh.make_node('ConstantOfShape', ['s'], ['y'])], f3, [] if rt else [I('s', shp)])
        # Reshape with -1 whose known dims wrap to 0
        f4 = {'x': R(6)}
        shp4 = shp + [-1]
        if rt: f4['s'] = np.array(shp4, np.int64)
        run(f'Reshape_neg1_{tag}_rt{rt}', [oh.make_node('Reshape', ['x', 's'], ['y'])], f4, [] if rt else [I('s', shp4)])
        f5 = {'x': np.zeros((0,), np.float32)}
        if rt: f5['s'] = np.array(shp4, np.int64)
        run(f'Reshape_empty_neg1_{tag}_rt{rt}', [oh.make_node('Reshape', ['x', 's'], ['y'])], f5, [] if rt else [I('s', shp4)])
    # Resize sizes
    run(f'Resize_sizes_{tag}', [oh.make_node('Resize', ['x', '', '', 's'], ['y'])], {'x': R(*([1] * len(shp)))}, [I('s', shp)])
    # Range-based: Range count fine; OneHot with depth
    run(f'ReshapeZero_{tag}', [oh.make_node('Reshape', ['x', 's'], ['y'])], {'x': np.zeros((0,), np.float32)}, [I('s', shp + [0])], expect_error=False)
# OneHot: indices [2^24] of zeros? too big. Use depth 2^40 with indices [2^24]: skip (input 64MB). Use [1] * depth 2^40 * ... via Expand later
run('OneHot_depth_2^62', [oh.make_node('OneHot', ['i', 'd', 'v'], ['y'])], {'i': np.array([0, 1], np.int64)}, [I('d', 2**62), nh.from_array(np.array([0, 1], np.float32), 'v')], opset=11)
run('Upsample_scales_2^32', [oh.make_node('Resize', ['x', '', 'sc'], ['y'], mode='nearest')], {'x': R(1, 1, 2, 2)}, [nh.from_array(np.array([1, 1, 2.0**31, 2.0**31], np.float32), 'sc')])
run('Pad_2^40_both', [oh.make_node('Pad', ['x', 'p'], ['y'])], {'x': R(2, 2)}, [I('p', [2**40, 2**24, 0, 0])])
run('ConvT_oshape_wrap', [oh.make_node('ConvTranspose', ['x', 'w'], ['y'], output_shape=[P32, P32])], {'x': R(1, 1, 2, 2)}, [nh.from_array(R(1, 1, 2, 2), 'w')])
run('MaxUnpool_oshape_wrap', [oh.make_node('MaxUnpool', ['x', 'i', 's'], ['y'], kernel_shape=[2, 2])], {'x': R(1, 1, 1, 1), 'i': np.zeros((1, 1, 1, 1), np.int64)}, [I('s', [1, 1, P32, P32])])
run('Range_float_huge', [oh.make_node('Range', ['a', 'b', 'c'], ['y'])], {}, [nh.from_array(np.array(0, np.float32), 'a'), nh.from_array(np.array(1e30, np.float32), 'b'), nh.from_array(np.array(1, np.float32), 'c')], opset=11)
run('Range_int64_span_overflow', [oh.make_node('Range', ['a', 'b', 'c'], ['y'])], {}, [I('a', -2**63), I('b', 2**63 - 1), I('c', 2**62)], odt=TP.INT64, opset=11, expect_error=False, exp=[np.array([-2**63, -2**62, 0, 2**62], np.int64)])
run('Range_int32_span_overflow', [oh.make_node('Range', ['a', 'b', 'c'], ['y'])], {}, [nh.from_array(np.array(v, np.int32), n) for n, v in [('a', -2**31), ('b', 2**31 - 1), ('c', 2**30)]], odt=TP.INT32, opset=11, expect_error=False, exp=[np.array([-2**31, -2**30, 0, 2**30], np.int32)])
run('Range_int8_wrap', [oh.make_node('Range', ['a', 'b', 'c'], ['y'])], {}, [nh.from_array(np.array(v, np.int16), n) for n, v in [('a', 32760), ('b', 32767), ('c', 3)]], odt=TP.INT16, opset=11, expect_error=False, exp=[np.array([32760, 32763, 32766], np.int16)])
# Negative dims
run('Expand_neg', [oh.make_node('Expand', ['x', 's'], ['y'])], {'x': R(1, 3)}, [I('s', [-2, 3])])
run('ConstantOfShape_neg', [oh.make_node('ConstantOfShape', ['s'], ['y'])], {'s': np.array([-1, 3], np.int64)})
run('Tile_neg', [oh.make_node('Tile', ['x', 's'], ['y'])], {'x': R(2, 3), 's': np.array([-1, 2], np.int64)})
run('Reshape_neg1_zero_allowzero', [oh.make_node('Reshape', ['x', 's'], ['y'], allowzero=1)], {'x': np.zeros((0, 3), np.float32)}, [I('s', [-1, 0])])
run('Reshape_neg1_from_empty', [oh.make_node('Reshape', ['x', 's'], ['y'])], {'x': np.zeros((0, 3), np.float32)}, [I('s', [-1, 5])], expect_error=False, exp=[np.zeros((0, 5), np.float32)])
