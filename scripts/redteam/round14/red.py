import sys, numpy as np
sys.path.insert(0, '/tmp/rt14/gen')
from h import *
rng = np.random.default_rng(141)
only = sys.argv[1] if len(sys.argv) > 1 else ''

def build(name, nodes, feeds, inits=(), opset=18, outs=None):
    ins = [vi(n, oh.np_dtype_to_tensor_dtype(x.dtype), list(x.shape)) for n, x in feeds.items()]
    outs = outs or [nodes[-1].output[0]]
    m = model(nodes, ins, [oh.make_value_info(o, onnx.TypeProto()) for o in outs], inits, opset=opset)
    mi = onnx.shape_inference.infer_shapes(m)
    vis = {v.name: v for v in list(mi.graph.value_info) + list(mi.graph.output)}
    del m.graph.output[:]
    for o in outs:
        v = vis[o]
        if not v.type.tensor_type.HasField('elem_type') or v.type.tensor_type.elem_type == 0:
            raise RuntimeError('no type for ' + o)
        m.graph.output.append(v)
    return m

def run(name, nodes, feeds, inits=(), opset=18, outs=None, exp=None, expect_error=False, tol=(1e-5, 1e-6)):
    if only and only not in name: return
    try: m = build(name, nodes, feeds, inits, opset, outs)
    except Exception as ex: print('[skip]', name, str(ex)[:200]); return
    return check(name, m, feeds, exp=exp, quiet=True, expect_error=expect_error, tol=tol)

def I(n, a): return nh.from_array(np.asarray(a, np.int64), n)
dts = [np.float32, np.float64, np.int32, np.int64, np.int8, np.uint8, np.int16, np.uint16, np.uint32, np.uint64]
def rnd(dt, shape):
    if np.dtype(dt).kind == 'f': x = rng.standard_normal(shape).astype(dt)
    elif np.dtype(dt).kind == 'u': x = rng.integers(0, 6, shape).astype(dt)
    else: x = rng.integers(-5, 6, shape).astype(dt)
    return x
reds = ['ReduceSum', 'ReduceMax', 'ReduceMin', 'ReduceProd', 'ReduceMean', 'ReduceL1', 'ReduceL2', 'ReduceLogSum', 'ReduceLogSumExp', 'ReduceSumSquare']
# axes as input: empty, negative, noop_with_empty_axes, keepdims; after elementwise
for r in reds:
    for dt in [np.float32, np.int32, np.int8, np.uint8, np.int64]:
        if r in ('ReduceL2', 'ReduceLogSum', 'ReduceLogSumExp') and np.dtype(dt).kind != 'f': continue
        x = rnd(dt, (3, 4, 5))
        if r == 'ReduceLogSum' : x = np.abs(x) + 0.5
        for axes in [None, [], [-1], [0, -1], [-3, 1], [1]]:
            for kd in [0, 1]:
                for noop in [0, 1]:
                    if axes is None and noop == 1 and kd == 0: continue
                    nm = f'{r}_{np.dtype(dt).name}_ax{axes}_kd{kd}_noop{noop}'.replace(' ', '')
                    ins = ['xa', 'axes'] if axes is not None else ['xa']
                    inits = [I('axes', axes)] if axes is not None else []
                    nodes = [oh.make_node('Abs' if np.dtype(dt).kind != 'u' else 'Identity', ['x'], ['xa']),
                             oh.make_node(r, ins, ['y'], keepdims=kd, noop_with_empty_axes=noop)]
                    run(nm, nodes, {'x': x}, inits)
    # axes as run-time input (not initializer)
    for axes in [[], [-2], [2, 0]]:
        x = rnd(np.float32, (3, 4, 5))
        nodes = [oh.make_node('Neg', ['x'], ['xn']), oh.make_node(r, ['xn', 'axes'], ['y'], keepdims=1)]
        run(f'{r}_rtaxes{axes}'.replace(' ', ''), nodes, {'x': np.abs(x) + 0.5 if r == 'ReduceLogSum' else x, 'axes': np.array(axes, np.int64)})
        nodes = [oh.make_node('Neg', ['x'], ['xn']), oh.make_node(r, ['xn', 'axes'], ['y'], keepdims=0, noop_with_empty_axes=1)]
        run(f'{r}_rtaxes_noop{axes}'.replace(' ', ''), nodes, {'x': x, 'axes': np.array(axes, np.int64)})
    # zero-size reductions
    for shape, axes in [((0, 4), [0]), ((3, 0), [1]), ((0, 4), [1]), ((0, 0), None)]:
        x = np.zeros(shape, np.float32)
        ins = ['x', 'axes'] if axes is not None else ['x']
        run(f'{r}_empty{shape}_{axes}'.replace(' ', ''), [oh.make_node(r, ins, ['y'], keepdims=0)], {'x': x}, [I('axes', axes)] if axes is not None else [])
# ArgMax / ArgMin
for op in ['ArgMax', 'ArgMin']:
    for dt in [np.float32, np.float16, np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64, np.float64]:
        x = rng.integers(0, 3, (4, 6, 5)).astype(dt)
        if np.dtype(dt).kind == 'f':
            x[0, 1, 2] = np.nan; x[1, :, 3] = np.nan; x[2, 2, :] = -np.inf; x[3, 0, 0] = np.inf
        for ax in [0, 1, -1]:
            for sl in [0, 1]:
                for kd in [0, 1]:
                    nodes = [oh.make_node('Identity', ['x'], ['xi']), oh.make_node(op, ['xi'], ['y'], axis=ax, select_last_index=sl, keepdims=kd)]
                    e = None
                    if np.dtype(dt).kind == 'f':
                        # numpy-style: first NaN wins (documented)
                        xx = np.flip(x, ax) if sl else x
                        f = np.nanargmax if False else (np.argmax if op == 'ArgMax' else np.argmin)
                        ix = f(xx.astype(np.float64), axis=ax)
                        if sl: ix = x.shape[ax] - 1 - ix
                        if kd: ix = np.expand_dims(ix, ax)
                        e = [ix.astype(np.int64)]
                    run(f'{op}_{np.dtype(dt).name}_ax{ax}_sl{sl}_kd{kd}', nodes, {'x': x}, exp=e)
# CumSum
for dt in [np.float32, np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint32, np.uint64, np.float64, np.float16]:
    x = rnd(dt, (3, 5, 4))
    if np.dtype(dt).kind in 'iu': x = (x * 40).astype(dt)
    for ax in [0, -1, 1]:
        for ex in [0, 1]:
            for rv in [0, 1]:
                nodes = [oh.make_node('Identity', ['x'], ['xi']), oh.make_node('CumSum', ['xi', 'ax'], ['y'], exclusive=ex, reverse=rv)]
                xx = np.flip(x, ax) if rv else x
                c = np.cumsum(xx.astype(np.float64) if np.dtype(dt).kind == 'f' else xx, axis=ax, dtype=None if np.dtype(dt).kind == 'f' else dt)
                if ex:
                    c = np.concatenate([np.zeros_like(np.take(c, [0], ax)), np.take(c, range(x.shape[ax] - 1), ax)], ax)
                if rv: c = np.flip(c, ax)
                e = [c.astype(dt)]
                run(f'CumSum_{np.dtype(dt).name}_ax{ax}_ex{ex}_rv{rv}', nodes, {'x': x}, [nh.from_array(np.array(ax, np.int32), 'ax')], exp=e,
                    tol=(2e-3, 1e-3) if dt == np.float16 else (1e-5, 1e-6))
# TopK
for dt in [np.float32, np.float64, np.int32, np.int64, np.int8, np.uint8, np.float16, np.int16]:
    x = rng.integers(0, 4, (3, 7)).astype(dt)
    if np.dtype(dt).kind == 'f': x[0, 2] = np.nan; x[1, 1] = np.inf; x[2, 3] = -np.inf
    for k in [0, 1, 3, 7]:
        for lg in [0, 1]:
            for so in [0, 1]:
                for ax in [-1, 0]:
                    if ax == 0 and k > 3: continue
                    nodes = [oh.make_node('Identity', ['x'], ['xi']), oh.make_node('TopK', ['xi', 'k'], ['v', 'i'], axis=ax, largest=lg, sorted=so)]
                    # expected: stable on ties (lower index first), NaN as largest (ORT)
                    xx = np.moveaxis(x.astype(np.float64), ax, -1)
                    key = np.where(np.isnan(xx), np.inf, xx)
                    if lg:
                        order = np.argsort(-key, axis=-1, kind='stable')
                        # NaN greater than inf: put NaN first
                        nanfirst = np.argsort(~np.isnan(xx), axis=-1, kind='stable')
                        order = np.array([sorted(range(xx.shape[-1]), key=lambda j, r=r: (0 if np.isnan(xx[r, j]) else 1, -xx[r, j] if not np.isnan(xx[r, j]) else 0, j)) for r in range(xx.shape[0])])
                    else:
                        order = np.array([sorted(range(xx.shape[-1]), key=lambda j, r=r: (1 if np.isnan(xx[r, j]) else 0, xx[r, j] if not np.isnan(xx[r, j]) else 0, j)) for r in range(xx.shape[0])])
                    idx = order[:, :k]
                    vals = np.take_along_axis(np.moveaxis(x, ax, -1), idx, -1)
                    e = [np.moveaxis(vals, -1, ax), np.moveaxis(idx.astype(np.int64), -1, ax)] if so else None
                    run(f'TopK_{np.dtype(dt).name}_k{k}_lg{lg}_so{so}_ax{ax}', nodes, {'x': x}, [I('k', [k])], outs=['v', 'i'], exp=e)
