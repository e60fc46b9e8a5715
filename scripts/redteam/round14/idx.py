import sys, numpy as np
sys.path.insert(0, '/tmp/rt14/gen')
from h import *
from hb import build, I

rng = np.random.default_rng(142)
only = sys.argv[1] if len(sys.argv) > 1 else ''
def run(name, nodes, feeds, inits=(), opset=18, outs=None, exp=None, expect_error=False, tol=(1e-5, 1e-6), use_ref_onnx=False):
    if only and only not in name: return
    try: m = build(name, nodes, feeds, inits, opset, outs)
    except Exception as ex: print('[skip]', name, str(ex)[:200]); return
    if use_ref_onnx and exp is None:
        from onnx.reference import ReferenceEvaluator
        try: exp = ReferenceEvaluator(m).run(None, feeds)
        except Exception as ex: print('[noref]', name, str(ex)[:150])
    return check(name, m, feeds, exp=exp, quiet=True, expect_error=expect_error, tol=tol)

# ScatterND with reductions
for dt in [np.float32, np.int8, np.uint8, np.int32, np.int64, np.float16, np.float64, np.int16]:
    data = (rng.integers(-4, 5, (4, 3, 2)) if np.dtype(dt).kind != 'u' else rng.integers(0, 9, (4, 3, 2))).astype(dt)
    upd = (rng.integers(-3, 4, (5, 2)) if np.dtype(dt).kind != 'u' else rng.integers(0, 9, (5, 2))).astype(dt)
    ind = np.array([[0, 1], [-1, 2], [0, 1], [3, -3], [-4, 1]], np.int64)  # duplicates: [0,1] and [-4,1]
    for redn in ['add', 'mul', 'min', 'max']:
        for where in ['init', 'input']:
            feeds = {'d': data, 'u': upd}
            inits = []
            if where == 'init': inits = [nh.from_array(ind, 'i')]
            else: feeds['i'] = ind
            nodes = [oh.make_node('Identity', ['d'], ['di']), oh.make_node('ScatterND', ['di', 'i', 'u'], ['y'], reduction=redn)]
            run(f'ScatterND_{np.dtype(dt).name}_{redn}_{where}', nodes, feeds, inits)
    # ScatterElements with reductions, negative indices, duplicates, axis 0/1/-1
    for ax in [0, 1, -1]:
        d2 = data.reshape(4, 6)
        ii = rng.integers(-d2.shape[ax], d2.shape[ax], (3, 4)).astype(np.int64)
        ii[0, 0] = ii[1, 0] if ax in (0,) else ii[0, 0]
        uu = np.resize(upd.ravel(), 12).reshape(3, 4).copy()
        for redn in ['none', 'add', 'mul', 'min', 'max']:
            if redn == 'none':
                # make indices unique along the axis per slice
                if ax == 0: ii2 = np.array([[0, 1, 2, 3], [1, 2, 3, 0], [-1, -4, -3, -2]], np.int64)
                else: ii2 = np.array([[0, 1, 2, 3], [5, 4, -3, -1], [-6, 1, 2, 3]], np.int64)
            else: ii2 = ii
            nodes = [oh.make_node('Identity', ['d'], ['di']), oh.make_node('ScatterElements', ['di', 'i', 'u'], ['y'], axis=ax, reduction=redn)]
            run(f'ScatterEl_{np.dtype(dt).name}_{redn}_ax{ax}', nodes, {'d': d2, 'i': ii2, 'u': uu})
# NaN in scatter min/max
d = np.array([1, np.nan, 3, -0.0, 5], np.float32); u = np.array([np.nan, 2, 0.0, 7], np.float32); i = np.array([0, 1, 3, 3], np.int64)
for redn in ['min', 'max', 'add', 'mul']:
    run(f'ScatterEl_nan_{redn}', [oh.make_node('ScatterElements', ['d', 'i', 'u'], ['y'], reduction=redn)], {'d': d, 'i': i, 'u': u})
# GatherND batch_dims
for bd in [0, 1, 2]:
    data = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    for lastdim in [1, 2]:
        if bd + lastdim > 4: continue
        shp = [2, 3][:bd] + [2, lastdim]
        lims = data.shape[bd:bd + lastdim]
        idx = np.stack([rng.integers(-l, l, shp[:-1]) for l in lims], -1).astype(np.int64)
        nodes = [oh.make_node('Relu', ['x'], ['xr']), oh.make_node('GatherND', ['xr', 'i'], ['y'], batch_dims=bd), oh.make_node('Neg', ['y'], ['z'])]
        run(f'GatherND_bd{bd}_l{lastdim}', nodes, {'x': data, 'i': idx}, outs=['z'], use_ref_onnx=False)
        idx2 = idx.copy(); idx2.flat[-1] = lims[-1]
        run(f'GatherND_bd{bd}_l{lastdim}_oob', nodes, {'x': data, 'i': idx2}, outs=['z'], expect_error=True)
        idx2 = idx.copy(); idx2.flat[0] = -lims[0] - 1
        run(f'GatherND_bd{bd}_l{lastdim}_oobneg', nodes, {'x': data, 'i': idx2}, outs=['z'], expect_error=True)
# ScatterND oob; ScatterElements oob
run('ScatterND_oob', [oh.make_node('ScatterND', ['d', 'i', 'u'], ['y'])], {'d': np.zeros((4, 3), np.float32), 'i': np.array([[4]], np.int64), 'u': np.ones((1, 3), np.float32)}, expect_error=True)
run('ScatterND_oobneg', [oh.make_node('ScatterND', ['d', 'i', 'u'], ['y'], reduction='add')], {'d': np.zeros((4, 3), np.float32), 'i': np.array([[-5]], np.int64), 'u': np.ones((1, 3), np.float32)}, expect_error=True)
run('ScatterEl_oob_max', [oh.make_node('ScatterElements', ['d', 'i', 'u'], ['y'], reduction='max', axis=1)], {'d': np.zeros((4, 3), np.float32), 'i': np.array([[3]], np.int64), 'u': np.ones((1, 1), np.float32)}, expect_error=True)
# OneHot
for idt in [np.int64, np.int32, np.float32, np.int8, np.uint8]:
    ind = np.array([[0, -1, 3, -4], [5, -5, 2, 1]]).astype(idt) if np.dtype(idt).kind != 'u' else np.array([[0, 1, 3, 200], [5, 4, 2, 1]], idt)
    for ax in [-1, 0, 1]:
        for vdt in [np.float32, np.int64, np.int8]:
            vals = np.array([-2, 7], vdt)
            for ddt, dep in [(np.int64, 4), (np.float32, 4.7), (np.int32, 4)]:
                nodes = [oh.make_node('OneHot', ['i', 'depth', 'v'], ['y'], axis=ax)]
                run(f'OneHot_{np.dtype(idt).name}_{np.dtype(vdt).name}_{np.dtype(ddt).name}_ax{ax}', nodes, {'i': ind, 'v': vals},
                    [nh.from_array(np.array(dep, ddt), 'depth')], opset=11, use_ref_onnx=True)
# Compress
x = rng.standard_normal((3, 5)).astype(np.float32)
for ax in [None, 0, 1, -1, -2]:
    for cond in [[1, 0, 1], [0, 1], [1, 0, 1, 1, 0], [0, 0, 0], [1], [], [1, 1, 1, 1, 1, 1, 1]]:
        kw = {} if ax is None else dict(axis=ax)
        nodes = [oh.make_node('Abs', ['x'], ['xa']), oh.make_node('Compress', ['xa', 'c'], ['y'], **kw), oh.make_node('Sqrt', ['y'], ['z'])]
        run(f'Compress_ax{ax}_c{"".join(map(str, cond))}', nodes, {'x': x, 'c': np.array(cond, bool).reshape(-1)}, outs=['z'], use_ref_onnx=True)
# NonZero
for dt in [np.float32, np.int8, np.bool_, np.uint8, np.int64, np.float16]:
    for shp in [(3, 4), (0, 3), (5,), (), (2, 0, 3), (2, 1, 3, 2)]:
        x = (rng.integers(0, 2, shp) * rng.integers(1, 3, shp)).astype(dt) if shp != () else np.array(1, dt)
        if dt == np.float32 and x.size: x.flat[0] = np.nan; 
        if dt == np.float32 and x.size > 1: x.flat[1] = -0.0
        run(f'NonZero_{np.dtype(dt).name}_{shp}'.replace(' ', ''), [oh.make_node('NonZero', ['x'], ['y'])], {'x': x}, opset=13)
# Unique
for dt in [np.float32, np.int64, np.int8, np.uint8, np.float64]:
    x = rng.integers(0, 4, (4, 3)).astype(dt); x[2] = x[0]
    if dt == np.float32: x[1, 1] = -0.0; x[3, 2] = 0.0
    for ax in [None, 0, 1, -1, -2]:
        for so in [0, 1]:
            kw = dict(sorted=so)
            if ax is not None: kw['axis'] = ax
            nodes = [oh.make_node('Unique', ['x'], ['y', 'ind', 'inv', 'cnt'], **kw)]
            run(f'Unique_{np.dtype(dt).name}_ax{ax}_so{so}', nodes, {'x': x}, outs=['y', 'ind', 'inv', 'cnt'], opset=11)
x = np.zeros((0, 3), np.float32)
run('Unique_empty', [oh.make_node('Unique', ['x'], ['y', 'ind', 'inv', 'cnt'])], {'x': x}, outs=['y', 'ind', 'inv', 'cnt'], opset=11)
run('Unique_empty_ax0', [oh.make_node('Unique', ['x'], ['y', 'ind', 'inv', 'cnt'], axis=0)], {'x': x}, outs=['y', 'ind', 'inv', 'cnt'], opset=11)
# Trilu
for dt in [np.float32, np.int64, np.bool_, np.int8, np.float16]:
    for shp in [(4, 6), (2, 5, 3), (0, 3), (3, 1)]:
        x = rng.integers(1, 5, shp).astype(dt)
        for up in [0, 1]:
            for k in [None, 0, 2, -1, -7, 9, 2**40, -2**62]:
                ins = ['xi'] if k is None else ['xi', 'k']
                nodes = [oh.make_node('Identity', ['x'], ['xi']), oh.make_node('Trilu', ins, ['y'], upper=up)]
                inits = [] if k is None else [nh.from_array(np.array(k, np.int64), 'k')]
                run(f'Trilu_{np.dtype(dt).name}_{shp}_up{up}_k{k}'.replace(' ', ''), nodes, {'x': x}, inits, opset=14, use_ref_onnx=True)
    # k at run time
    x = rng.integers(1, 5, (4, 6)).astype(dt)
    for k in [3, -2, 2**40]:
        run(f'Trilu_rt_{np.dtype(dt).name}_k{k}', [oh.make_node('Trilu', ['x', 'k'], ['y'], upper=0)], {'x': x, 'k': np.array(k, np.int64)}, opset=14, use_ref_onnx=True)
# Where with broadcasting
for dt in [np.float32, np.int8, np.int64, np.bool_, np.uint16, np.float16]:
    c = rng.integers(0, 2, (3, 1, 4)).astype(bool)
    a = rng.integers(0, 9, (5, 1)).astype(dt); b = rng.integers(0, 9, (1, 4)).astype(dt)
    nodes = [oh.make_node('Where', ['c', 'a', 'b'], ['y']), oh.make_node('Identity', ['y'], ['z'])]
    run(f'Where_{np.dtype(dt).name}', nodes, {'c': c, 'a': a, 'b': b}, outs=['z'])
    run(f'Where_{np.dtype(dt).name}_scalar', nodes, {'c': np.array(True), 'a': a, 'b': np.array(3, dt)}, outs=['z'])
    run(f'Where_{np.dtype(dt).name}_empty', nodes, {'c': np.zeros((0, 1), bool), 'a': a, 'b': b}, outs=['z'])
