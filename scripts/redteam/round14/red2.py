import sys, numpy as np
sys.path.insert(0, '/tmp/rt14/gen')
from h import *
from hb import build, I
rng = np.random.default_rng(144)
only = sys.argv[1] if len(sys.argv) > 1 else ''
reds = ['ReduceSum', 'ReduceMax', 'ReduceMin', 'ReduceProd', 'ReduceMean', 'ReduceL1', 'ReduceL2', 'ReduceLogSum', 'ReduceLogSumExp', 'ReduceSumSquare']
def npred(r, x, axes, kd, noop):
    dt = x.dtype; fl = dt.kind == 'f'
    if axes is None or len(axes) == 0:
        if noop: return x.copy()
        ax = None
    else: ax = tuple(a % x.ndim for a in axes)
    xd = x.astype(np.float64) if fl else x
    with np.errstate(all='ignore'):
        if r == 'ReduceSum': y = np.sum(xd, axis=ax, keepdims=bool(kd), dtype=None if fl else dt)
        elif r == 'ReduceMax': y = np.max(xd, axis=ax, keepdims=bool(kd)) if x.size else None
        elif r == 'ReduceMin': y = np.min(xd, axis=ax, keepdims=bool(kd)) if x.size else None
        elif r == 'ReduceProd': y = np.prod(xd, axis=ax, keepdims=bool(kd), dtype=None if fl else dt)
        elif r == 'ReduceMean':
            if fl: y = np.mean(xd, axis=ax, keepdims=bool(kd))
            elif dt.itemsize <= 2: y = np.trunc(np.mean(x.astype(np.float64), axis=ax, keepdims=bool(kd)))
            else:
                s = np.sum(x, axis=ax, keepdims=bool(kd), dtype=dt); n = x.size // max(1, s.size)
                y = (s // n if dt.kind == 'u' else np.trunc(s.astype(np.float64) / n)) # approx
        elif r == 'ReduceL1': y = np.sum(np.abs(xd), axis=ax, keepdims=bool(kd), dtype=None if fl else dt)
        elif r == 'ReduceL2': y = np.sqrt(np.sum(xd * xd, axis=ax, keepdims=bool(kd)))
        elif r == 'ReduceLogSum': y = np.log(np.sum(xd, axis=ax, keepdims=bool(kd)))
        elif r == 'ReduceLogSumExp': y = np.log(np.sum(np.exp(xd), axis=ax, keepdims=bool(kd)))
        elif r == 'ReduceSumSquare': y = np.sum(xd * xd, axis=ax, keepdims=bool(kd), dtype=None if fl else dt)
    return None if y is None else np.asarray(y).astype(dt)
n = 0
for dt in [np.float32, np.int32, np.int8, np.uint8, np.int64, np.int16, np.uint16, np.float64]:
    for axes in [None, [], [-1], [0, -1], [-3, 1], [1], [2, 0, 1]]:
        for kd in [0, 1]:
            for noop in [0, 1]:
                for rt in ([0, 1] if axes else [0]):
                    name = f'red_{np.dtype(dt).name}_ax{axes}_kd{kd}_noop{noop}_rt{rt}'.replace(' ', '')
                    if only and only not in name: continue
                    x = rng.integers(-5, 6, (3, 4, 5)).astype(dt) if np.dtype(dt).kind != 'u' else rng.integers(0, 6, (3, 4, 5)).astype(dt)
                    if np.dtype(dt).kind == 'f': x = (x + rng.standard_normal(x.shape) * 0.3).astype(dt)
                    nodes = [oh.make_node('Identity', ['x'], ['xi'])]; outs = []; exp = []; inits = []; feeds = {'x': x}
                    if axes is not None:
                        if rt: feeds['axes'] = np.array(axes, np.int64)
                        else: inits = [I('axes', axes)]
                    for r in reds:
                        fl = np.dtype(dt).kind == 'f'
                        if r in ('ReduceL2', 'ReduceLogSum', 'ReduceLogSumExp') and not fl: continue
                        src = 'xi'
                        xx = x
                        if r == 'ReduceLogSum':
                            nodes.append(oh.make_node('Abs', ['xi'], ['xabs'])); src = 'xabs'; xx = np.abs(x)
                        if r == 'ReduceProd' and fl:
                            nodes.append(oh.make_node('Sigmoid', ['xi'], ['xsig'])); src = 'xsig'; xx = (1 / (1 + np.exp(-x.astype(np.float64)))).astype(dt)
                        e = npred(r, xx, axes, kd, noop)
                        ins = [src, 'axes'] if axes is not None else [src]
                        nodes.append(oh.make_node(r, ins, ['y_' + r], keepdims=kd, noop_with_empty_axes=noop))
                        outs.append('y_' + r); exp.append(e)
                    try: m = build(name, nodes, feeds, inits, 18, outs)
                    except Exception as ex:
                        # rt axes: output shape unknown to onnx inference -> fill manually
                        ins = [vi(k, oh.np_dtype_to_tensor_dtype(v.dtype), list(v.shape)) for k, v in feeds.items()]
                        m = model(nodes, ins, [vi(o, oh.np_dtype_to_tensor_dtype(dt), None) for o in outs], inits, opset=18)
                    check(name, m, feeds, exp=exp, quiet=True, tol=(1e-5, 1e-6)); n += 1
print('models', n)
