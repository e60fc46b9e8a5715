import sys, numpy as np
sys.path.insert(0, '/tmp/rt14/gen')
from h import *
rng = np.random.default_rng(14)
F = TP.FLOAT
only = sys.argv[1] if len(sys.argv) > 1 else ''
def R(*s): return rng.standard_normal(s).astype(np.float32)

def one(name, op, xs, attrs, nout=1, inits=None, opset=19, extra_nodes=None, out_names=None, tol=(1e-4, 1e-5)):
    if only and only not in name: return
    ins = []; feeds = {}; init = []
    names = []
    for i, x in enumerate(xs):
        n = f'i{i}'
        if x is None: names.append(''); continue
        names.append(n)
        if inits and i in inits:
            init.append(nh.from_array(x, n))
        else:
            ins.append(vi(n, oh.np_dtype_to_tensor_dtype(x.dtype), list(x.shape))); feeds[n] = x
    outs = out_names or [f'y{k}' for k in range(nout)]
    nodes = [oh.make_node(op, names, outs, **attrs)]
    gouts = outs
    if extra_nodes:
        en, gouts = extra_nodes(outs)
        nodes += en
    m = model(nodes, ins, [oh.make_value_info(o, onnx.TypeProto()) for o in gouts], init, opset=opset)
    # fill output types via shape inference
    try:
        mi = onnx.shape_inference.infer_shapes(m, strict_mode=True)
        vis = {v.name: v for v in list(mi.graph.value_info) + list(mi.graph.output)}
        del m.graph.output[:]
        for o in gouts: m.graph.output.append(vis[o])
    except Exception as ex:
        print(f'[skip] {name}: shape inference: {str(ex)[:200]}'); return
    return check(name, m, feeds, tol=tol, quiet=True)

# ---------- Conv ----------
for ap in ['NOTSET', 'SAME_UPPER', 'SAME_LOWER', 'VALID']:
    for (k, s, d) in [(3, 1, 1), (4, 2, 1), (2, 3, 1), (3, 2, 2), (5, 3, 2)]:
        for dims in [1, 2, 3]:
            sp = [11, 9, 7][:dims] if dims < 3 else [7, 6, 5]
            x = R(2, 4, *sp); w = R(6, 2, *([k] * dims)); b = R(6)
            a = dict(strides=[s] * dims, dilations=[d] * dims, group=2)
            if ap == 'NOTSET': a['pads'] = [1, 0, 2][:dims] + [0, 2, 1][:dims]
            else: a['auto_pad'] = ap
            one(f'conv_{ap}_k{k}s{s}d{d}_{dims}d', 'Conv', [x, w, b], a, inits={1, 2})
# depthwise + asymmetric pads + fused chain
x = R(1, 8, 10, 10); w = R(8, 1, 3, 3); b = R(8)
def chain(outs):
    c = oh.make_tensor('c', F, [8, 1, 1], R(8, 1, 1).ravel())
    return [oh.make_node('Constant', [], ['cc'], value=c), oh.make_node('Add', [outs[0], 'cc'], ['a']), oh.make_node('Relu', ['a'], ['r']),
            oh.make_node('Mul', ['r', outs[0]], ['m']), oh.make_node('Sigmoid', [outs[0]], ['sg'])], ['m', 'sg', 'r']
one('conv_dw_chain', 'Conv', [x, w, b], dict(group=8, pads=[0, 1, 2, 0], strides=[2, 1]), inits={1, 2}, extra_nodes=chain)
one('conv_dw_chain_in', 'Conv', [x, w, b], dict(group=8, pads=[0, 1, 2, 0], strides=[2, 1]), extra_nodes=chain)
one('conv_kernel_shape_attr', 'Conv', [R(1, 3, 9, 9), R(4, 3, 2, 3)], dict(kernel_shape=[2, 3], pads=[1, 1, 0, 2], dilations=[3, 1]), inits={1})
one('conv_1x1_stride_big', 'Conv', [R(2, 5, 9, 9), R(3, 5, 1, 1)], dict(strides=[4, 5]), inits={1})
one('conv_k_equals_input', 'Conv', [R(2, 3, 5, 4), R(7, 3, 5, 4), R(7)], dict(), inits={1, 2})
one('conv_pad_gt_kernel', 'Conv', [R(1, 2, 4, 4), R(2, 2, 2, 2)], dict(pads=[3, 3, 3, 3]), inits={1})

# ---------- ConvTranspose ----------
for dims in [1, 2, 3]:
    sp = [7, 5, 4][:dims]
    for (k, s, d, g, op_, pads) in [(3, 2, 1, 1, 1, None), (4, 2, 1, 2, 0, [1, 2]), (3, 3, 2, 2, 2, [0, 1]), (2, 1, 3, 1, 0, [2, 0]), (5, 2, 1, 4, 1, [2, 2])]:
        if op_ >= s and op_ >= d: continue
        C = 4
        x = R(2, C, *sp); w = R(C, 6 // (1 if g == 1 else 2) if g <= 2 else 2, *([k] * dims)); b = R(w.shape[1] * g)
        a = dict(strides=[s] * dims, dilations=[d] * dims, group=g, output_padding=[op_] * dims)
        if pads: a['pads'] = [pads[0]] * dims + [pads[1]] * dims
        one(f'convT_k{k}s{s}d{d}g{g}op{op_}_{dims}d', 'ConvTranspose', [x, w, b], a, inits={1, 2})
    for ap in ['SAME_UPPER', 'SAME_LOWER']:
        x = R(1, 3, *sp); w = R(3, 2, *([4] * dims))
        one(f'convT_{ap}_s2_{dims}d', 'ConvTranspose', [x, w], dict(strides=[2] * dims, auto_pad=ap), inits={1})
        # output_shape with auto_pad
        osh = [2 * v + 1 for v in sp]
        one(f'convT_{ap}_oshape_{dims}d', 'ConvTranspose', [x, w], dict(strides=[2] * dims, auto_pad=ap, output_shape=osh), inits={1})
    x = R(1, 3, *sp); w = R(3, 2, *([3] * dims))
    osh = [2 * v + 2 for v in sp]
    one(f'convT_oshape_notset_{dims}d', 'ConvTranspose', [x, w], dict(strides=[2] * dims, output_shape=osh), inits={1})
    one(f'convT_oshape_full_{dims}d', 'ConvTranspose', [x, w], dict(strides=[2] * dims, output_shape=[1, 2] + osh), inits={1})

# ---------- Pools ----------
for dims in [1, 2, 3]:
    sp = [9, 8, 7][:dims] if dims < 3 else [6, 7, 5]
    x = R(2, 3, *sp)
    for (k, s, d, p, ceil) in [(2, 2, 1, None, 1), (3, 2, 2, [1, 0], 1), (3, 2, 1, [1, 1], 0), (2, 3, 2, [0, 1], 1), (3, 1, 1, [1, 2], 0), (3, 3, 1, [2, 2], 1)]:
        pd = ([p[0]] * dims + [p[1]] * dims) if p else None
        for so in [0, 1]:
            a = dict(kernel_shape=[k] * dims, strides=[s] * dims, dilations=[d] * dims, ceil_mode=ceil, storage_order=so)
            if pd: a['pads'] = pd
            if dims == 2 or so == 0:
                one(f'maxpoolidx_k{k}s{s}d{d}p{p}c{ceil}so{so}_{dims}d', 'MaxPool', [x], a, nout=2, opset=12)
        for cip in [0, 1]:
            a = dict(kernel_shape=[k] * dims, strides=[s] * dims, dilations=[d] * dims, ceil_mode=ceil, count_include_pad=cip)
            if pd: a['pads'] = pd
            one(f'avgpool_k{k}s{s}d{d}p{p}c{ceil}cip{cip}_{dims}d', 'AveragePool', [x], a, opset=19)
        for pp in [1, 2, 3]:
            a = dict(kernel_shape=[k] * dims, strides=[s] * dims, dilations=[d] * dims, ceil_mode=ceil, p=pp)
            if pd: a['pads'] = pd
            one(f'lppool_p{pp}_k{k}s{s}d{d}p{p}c{ceil}_{dims}d', 'LpPool', [x], a, opset=18)
    for ap in ['SAME_UPPER', 'SAME_LOWER', 'VALID']:
        a = dict(kernel_shape=[3] * dims, strides=[2] * dims, auto_pad=ap)
        one(f'maxpool_{ap}_{dims}d', 'MaxPool', [x], a, nout=2, opset=12)
        one(f'avgpool_{ap}_{dims}d', 'AveragePool', [x], dict(a, count_include_pad=1), opset=19)
        one(f'avgpool_{ap}_nocip_{dims}d', 'AveragePool', [x], a, opset=19)
        one(f'lppool_{ap}_{dims}d', 'LpPool', [x], a, opset=18)
    for g in ['GlobalMaxPool', 'GlobalAveragePool']:
        one(f'{g}_{dims}d', g, [x], {})
    one(f'GlobalLpPool3_{dims}d', 'GlobalLpPool', [x], dict(p=3))
# maxpool int8/uint8 with indices
xi = rng.integers(-128, 127, (1, 2, 6, 6)).astype(np.int8)
one('maxpool_int8_idx', 'MaxPool', [xi], dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), nout=2, opset=12)
xi = rng.integers(0, 4, (1, 2, 6, 6)).astype(np.uint8)
one('maxpool_uint8_ties', 'MaxPool', [xi], dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]), nout=2, opset=12)
xt = np.round(R(1, 2, 6, 6)).astype(np.float32)
one('maxpool_f32_ties_idx', 'MaxPool', [xt], dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]), nout=2, opset=12)
one('maxpool_f32_ties_idx_so1', 'MaxPool', [xt], dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], storage_order=1), nout=2, opset=12)
xn = R(1, 2, 6, 6); xn[0, 0, 1, 1] = np.nan; xn[0, 1, 2:4, 2:4] = -np.inf
one('maxpool_nan_inf_idx', 'MaxPool', [xn], dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]), nout=2, opset=12)
xall = np.full((1, 1, 4, 4), -np.inf, np.float32)
one('maxpool_all_neginf_pad', 'MaxPool', [xall], dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]), nout=2, opset=12)
