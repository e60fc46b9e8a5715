# decomposed composites at edge shapes / dtypes: cpu (fused decomposition) must equal ref
import sys, numpy as np, ml_dtypes
sys.path.insert(0, '/tmp/rt14/gen')
from h import *
from hb import build, I
rng = np.random.default_rng(21)
only = sys.argv[1] if len(sys.argv) > 1 else ''
def R(*s, dt=np.float32): return (rng.standard_normal(s) * 2 + 0.5).astype(dt)
def run(name, nodes, feeds, inits=(), opset=18, outs=None, exp=None, expect_error=False, tol=(1e-4, 1e-5), btol=None, vs_ref=True):
    if only and only not in name: return
    try: m = build(name, nodes, feeds, inits, opset, outs)
    except Exception as ex: print('[skip]', name, str(ex)[:200]); return
    f, res = check(name, m, feeds, exp=exp, quiet=True, expect_error=expect_error, tol=tol, btol=btol, vs_ref=vs_ref)
    return f
bf = ml_dtypes.bfloat16
for dt, tol in [(np.float32, (1e-4, 1e-5)), (np.float16, (2e-3, 1e-3))]:
    dn = np.dtype(dt).name
    for shp, ax in [((3, 4, 5), -1), ((3, 4, 5), 0), ((3, 4, 5), 1), ((6,), 0), ((2, 1, 3), 2)]:
        sshape = shp[ax % len(shp):]
        nodes = [oh.make_node('LayerNormalization', ['x', 's', 'b'], ['y', 'mean', 'istd'], axis=ax, epsilon=1e-3)]
        run(f'LN3out_{dn}_{shp}_ax{ax}'.replace(' ', ''), nodes, {'x': R(*shp, dt=dt)}, [nh.from_array(R(*sshape, dt=dt), 's'), nh.from_array(R(*sshape, dt=dt), 'b')], opset=17, outs=['y', 'mean', 'istd'], tol=tol)
        nodes = [oh.make_node('RMSNormalization', ['x', 's'], ['y'], axis=ax, epsilon=1e-3)]
        run(f'RMS_{dn}_{shp}_ax{ax}'.replace(' ', ''), nodes, {'x': R(*shp, dt=dt)}, [nh.from_array(R(*sshape, dt=dt), 's')], opset=23, tol=tol)
    for op in ['Softmax', 'LogSoftmax', 'Hardmax']:
        for ax in [0, 1, 2, -1]:
            for ops in [11, 13]:
                run(f'{op}{ops}_{dn}_ax{ax}', [oh.make_node(op, ['x'], ['y'], axis=ax)], {'x': R(2, 3, 4, dt=dt)}, opset=ops, tol=tol)
    for shp, G in [((2, 6), 3), ((2, 6, 1), 2), ((2, 4, 3), 4), ((2, 4, 3), 1)]:
        C = shp[1]
        run(f'GroupNorm21_{dn}_{shp}_G{G}'.replace(' ', ''), [oh.make_node('GroupNormalization', ['x', 's', 'b'], ['y'], num_groups=G, epsilon=1e-3)], {'x': R(*shp, dt=dt)},
            [nh.from_array(R(C, dt=dt), 's'), nh.from_array(R(C, dt=dt), 'b')], opset=21, tol=tol)
    for shp in [(3, 2), (2, 3, 4), (2, 3, 1, 1)]:
        C = shp[1]
        run(f'InstanceNorm_{dn}_{shp}'.replace(' ', ''), [oh.make_node('InstanceNormalization', ['x', 's', 'b'], ['y'], epsilon=1e-3)], {'x': R(*shp, dt=dt)},
            [nh.from_array(R(C, dt=dt), 's'), nh.from_array(R(C, dt=dt), 'b')], opset=17, tol=tol)
    for axes in [[0, 2, 3], [1], [0], [2, 3], [-1], [0, 1, 2, 3]]:
        run(f'MVN_{dn}_{axes}'.replace(' ', ''), [oh.make_node('MeanVarianceNormalization', ['x'], ['y'], axes=axes)], {'x': R(2, 3, 2, 4, dt=dt)}, opset=13, tol=tol)
    for p in [1, 2]:
        for ax in [0, -1]:
            x = R(3, 4, dt=dt); x[1] = 0
            run(f'LpNorm_{dn}_p{p}_ax{ax}_zero_row', [oh.make_node('LpNormalization', ['x'], ['y'], p=p, axis=ax)], {'x': x}, opset=13, tol=tol)
    for shp in [(4, 3), (5,), (2, 3, 2)]:
        C = shp[1] if len(shp) > 1 else shp[0]
        ins = [nh.from_array(R(C, dt=dt), 's'), nh.from_array(R(C, dt=dt), 'b'), nh.from_array(R(C, dt=dt), 'm'), nh.from_array(np.abs(R(C, dt=dt)) + 0.5, 'v')]
        run(f'BN_{dn}_{shp}'.replace(' ', ''), [oh.make_node('BatchNormalization', ['x', 's', 'b', 'm', 'v'], ['y'])], {'x': R(*shp, dt=dt)}, ins, opset=15, tol=tol)
        run(f'BN_rt_{dn}_{shp}'.replace(' ', ''), [oh.make_node('BatchNormalization', ['x', 's', 'b', 'm', 'v'], ['y'])],
            {'x': R(*shp, dt=dt), 's': R(C, dt=dt), 'b': R(C, dt=dt), 'm': R(C, dt=dt), 'v': (np.abs(R(C)) + 0.5).astype(dt)}, opset=15, tol=tol)
    # Gemm C variants
    for cs in [(), (1,), (3, 1), (1, 4), (3, 4), (4,)]:
        for ta, tb in [(0, 0), (1, 1)]:
            a = R(5, 3, dt=dt) if ta else R(3, 5, dt=dt); b = R(4, 5, dt=dt) if tb else R(5, 4, dt=dt)
            run(f'Gemm_{dn}_C{cs}_t{ta}{tb}'.replace(' ', ''), [oh.make_node('Gemm', ['a', 'b', 'c'], ['y'], transA=ta, transB=tb, alpha=0.5, beta=-2.0)], {'a': a, 'b': b, 'c': R(*cs, dt=dt)}, tol=tol)
    # Einsum forms
    for eq, shapes in [('ii->i', [(4, 4)]), ('ii->', [(4, 4)]), ('i,i->', [(5,), (5,)]), ('bij,bjk->bik', [(2, 3, 4), (2, 4, 5)]), ('...ij,...jk->...ik', [(2, 1, 3, 4), (3, 4, 2)]),
                       ('ij->', [(3, 4)]), ('i,j->ij', [(3,), (4,)]), ('bhid,bhjd->bhij', [(1, 2, 3, 4), (1, 2, 5, 4)]), ('ijk->kji', [(2, 3, 4)]), ('iij->j', [(3, 3, 2)]), ('ij,ij->i', [(3, 4), (3, 4)]),
                       ('ab,bc,cd->ad', [(2, 3), (3, 4), (4, 5)]), ('i,i,i->i', [(3,), (3,), (3,)])]:
        feeds = {f'x{k}': R(*s, dt=dt) for k, s in enumerate(shapes)}
        run(f'Einsum_{dn}_{eq}', [oh.make_node('Einsum', list(feeds), ['y'], equation=eq)], feeds, opset=12, tol=tol)
    # Mean/Max/Min/Sum broadcasting 3 inputs
    for op in ['Sum', 'Mean', 'Max', 'Min']:
        run(f'{op}3_{dn}', [oh.make_node(op, ['a', 'b', 'c'], ['y'])], {'a': R(3, 1, dt=dt), 'b': R(1, 4, dt=dt), 'c': R(4, dt=dt)}, opset=13, tol=tol)
    # Losses
    for red in ['none', 'sum', 'mean']:
        for w in [0, 1]:
            for ig in [None, 1]:
                kw = dict(reduction=red)
                if ig is not None: kw['ignore_index'] = ig
                feeds = {'x': R(3, 4, 2, dt=dt), 't': rng.integers(0, 4, (3, 2)).astype(np.int64)}
                if w: feeds['w'] = np.abs(R(4, dt=dt))
                ins = ['x', 't'] + (['w'] if w else [])
                run(f'SCE_{dn}_{red}_w{w}_ig{ig}', [oh.make_node('SoftmaxCrossEntropyLoss', ins, ['y', 'lp'], **kw)], feeds, outs=['y', 'lp'], opset=13, tol=tol)
                run(f'NLL_{dn}_{red}_w{w}_ig{ig}', [oh.make_node('NegativeLogLikelihoodLoss', ins, ['y'], **kw)], feeds, opset=13, tol=tol)
