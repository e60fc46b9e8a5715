"""attention-shaped subgraphs as exporters emit them.  usage: attn.py SEED0 N [dtype]"""
import sys, itertools, numpy as np, onnx, ml_dtypes
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from h import *

DT = {'f32': TP.FLOAT, 'f16': TP.FLOAT16, 'bf16': TP.BFLOAT16}
NP = {'f32': np.float32, 'f16': np.float16, 'bf16': ml_dtypes.bfloat16}


def emulate(m, kind):
    """fp32 copy of the lowp model with each float result rounded through kind"""
    m2 = onnx.ModelProto(); m2.CopyFrom(m)
    g = m2.graph
    for v in list(g.input) + list(g.output) + list(g.value_info):
        if v.type.tensor_type.elem_type == DT[kind]: v.type.tensor_type.elem_type = TP.FLOAT
    for t in g.initializer:
        if t.data_type == DT[kind]:
            a = nh.to_array(t).astype(np.float32); t.CopyFrom(nh.from_array(a, t.name))
    nodes = []
    for n in g.node:
        for a in n.attribute:
            if a.name == 'to' and a.i == DT[kind]: a.i = TP.FLOAT
            if a.name == 'value' and a.t.data_type == DT[kind]:
                arr = nh.to_array(a.t).astype(np.float32); a.t.CopyFrom(nh.from_array(arr))
        if n.op_type in ('Shape', 'Equal', 'Less', 'Greater', 'Not', 'Constant', 'Reshape', 'Transpose', 'Unsqueeze', 'Squeeze', 'Slice', 'Gather', 'Concat', 'Expand', 'Flatten') \
                or (n.op_type == 'Cast' and n.attribute[0].i != TP.FLOAT):
            nodes.append(n); continue
        o = n.output[0]
        n2 = onnx.NodeProto(); n2.CopyFrom(n); n2.output[0] = o + '_raw'
        nodes.append(n2)
        nodes.append(oh.make_node('Cast', [o + '_raw'], [o + '_lp'], to=DT[kind]))
        nodes.append(oh.make_node('Cast', [o + '_lp'], [o], to=TP.FLOAT))
    del g.node[:]; g.node.extend(nodes)
    return m2


def gen(seed, kind='f32'):
    r = np.random.default_rng(seed)
    B = int(r.choice([1, 2, 3]))
    H = int(r.choice([1, 2, 4, 5]))
    S = int(r.choice([1, 7, 63, 65, 129, 1000, 8, 17]))
    T = S if r.random() < 0.6 else int(r.choice([1, 7, 63, 65, 129, 33]))  # kv length
    D = int(r.choice([1, 3, 64, 80, 128, 200, 16, 8]))
    # keep scores and operands small
    while B * H * S * T > 1_200_000 or B * H * max(S, T) * D > 1_000_000:
        if B > 1: B -= 1
        elif H > 1: H -= 1
        else:
            S = max(1, S // 2); T = max(1, T // 2)
    dt = DT[kind]; npd = NP[kind]
    E = H * D
    nodes, inits = [], []
    def c(name, arr):
        inits.append(nh.from_array(np.asarray(arr), name)); return name
    layout = r.choice(['bshd', 'pre'])  # bshd: [B,S,E] inputs reshaped; pre: [B,H,S,D] inputs
    if layout == 'bshd':
        ins = [vi('q', dt, [B, S, E]), vi('k', dt, [B, T, E]), vi('v', dt, [B, T, E])]
        c('shq', np.array([B, S, H, D], np.int64)); c('shk', np.array([B, T, H, D] if r.random() < .5 else [0, 0, H, -1], np.int64))
        nodes += [oh.make_node('Reshape', ['q', 'shq'], ['q4']), oh.make_node('Transpose', ['q4'], ['qh'], perm=[0, 2, 1, 3])]
        nodes += [oh.make_node('Reshape', ['k', 'shk'], ['k4'])]
        kt_direct = r.random() < 0.5
        if kt_direct:
            nodes += [oh.make_node('Transpose', ['k4'], ['kt'], perm=[0, 2, 3, 1])]
        else:
            nodes += [oh.make_node('Transpose', ['k4'], ['kh'], perm=[0, 2, 1, 3]), oh.make_node('Transpose', ['kh'], ['kt'], perm=[0, 1, 3, 2])]
        nodes += [oh.make_node('Reshape', ['v', 'shk'], ['v4']), oh.make_node('Transpose', ['v4'], ['vh'], perm=[0, 2, 1, 3])]
    else:
        ins = [vi('qh', dt, [B, H, S, D]), vi('kh', dt, [B, H, T, D]), vi('vh', dt, [B, H, T, D])]
        nodes += [oh.make_node('Transpose', ['kh'], ['kt'], perm=[0, 1, 3, 2])]
    scale = 1 / np.sqrt(D)
    sp = r.choice(['q', 'k', 'both', 'div_scores', 'mul_scores', 'none', 'div_q'])
    qn, kn = 'qh', 'kt'
    if sp == 'q':
        nodes.append(oh.make_node('Mul', ['qh', c('sc', np.array(scale, npd))], ['qs'])); qn = 'qs'
    elif sp == 'div_q':
        nodes.append(oh.make_node('Div', ['qh', c('sc', np.array([np.sqrt(D)], npd))], ['qs'])); qn = 'qs'
    elif sp == 'k':
        nodes.append(oh.make_node('Mul', [c('sc', np.array([[scale]], npd)), 'kt'], ['ks'])); kn = 'ks'
    elif sp == 'both':
        s2 = np.array(np.sqrt(scale), npd)
        nodes.append(oh.make_node('Mul', ['qh', c('sc', s2)], ['qs'])); qn = 'qs'
        nodes.append(oh.make_node('Mul', ['kt', 'sc'], ['ks'])); kn = 'ks'
    nodes.append(oh.make_node('MatMul', [qn, kn], ['s0']))
    sn = 's0'
    if sp == 'div_scores':
        nodes.append(oh.make_node('Div', ['s0', c('sc', np.array(np.sqrt(D), npd))], ['s1'])); sn = 's1'
    elif sp == 'mul_scores':
        nodes.append(oh.make_node('Mul', ['s0', c('sc', np.array(scale, npd))], ['s1'])); sn = 's1'
    mk = r.choice(['none', 'add_pad', 'add_causal', 'where_bool', 'where_causal_const', 'add_input'])
    feeds = {}
    neg = [-np.inf, -1e9, -10000.0, 'min'][int(r.integers(4))]
    if neg == 'min': neg = float(np.finfo(np.float32).min) if kind != 'f16' else -65504.0
    if kind == 'f16' and neg == -1e9: neg = -np.inf
    full_mask_row = r.random() < 0.15
    if mk == 'add_pad':
        mm = np.zeros((B, 1, 1, T), np.float32)
        for b in range(B):
            L = int(r.integers(0 if full_mask_row else 1, T + 1)); mm[b, ..., L:] = neg
        nodes.append(oh.make_node('Add', [sn, c('mask', mm.astype(npd))], ['s2'])); sn = 's2'
    elif mk == 'add_causal':
        mm = np.triu(np.full((S, T), neg, np.float32), 1 + (T - S) if T >= S else 1)
        nodes.append(oh.make_node('Add', [sn, c('mask', mm.astype(npd)[None, None])], ['s2'])); sn = 's2'
    elif mk == 'add_input':
        ins.append(vi('am', dt, [B, 1, S, T]))
        mm = np.where(r.random((B, 1, S, T)) < 0.3, neg, 0).astype(np.float32)
        if full_mask_row: mm[0, 0, 0, :] = neg
        feeds['am'] = mm.astype(npd)
        nodes.append(oh.make_node('Add', [sn, 'am'], ['s2'])); sn = 's2'
    elif mk == 'where_bool':
        ins.append(vi('bm', TP.BOOL, [B, 1, 1, T]))
        bm = r.random((B, 1, 1, T)) < 0.8
        if not full_mask_row: bm[..., 0] = True
        feeds['bm'] = bm
        nodes.append(oh.make_node('Where', ['bm', sn, c('ninf', np.array(neg, npd))], ['s2'])); sn = 's2'
    elif mk == 'where_causal_const':
        cm = np.tril(np.ones((S, T), bool), (T - S) if T >= S else 0)
        nodes.append(oh.make_node('Where', [c('cm', cm), c('ninf', np.array([neg], npd)), sn], ['s2'])); sn = 's2'
        # exporters: Where(mask==0, -inf, scores); here cm True -> -inf ... invert
        inits[-2] = nh.from_array(~cm, 'cm')
    ax = int(r.choice([-1, 3]))
    nodes.append(oh.make_node('Softmax', [sn], ['p'], axis=ax))
    nodes.append(oh.make_node('MatMul', ['p', 'vh'], ['o4']))
    nodes.append(oh.make_node('Transpose', ['o4'], ['o5'], perm=[0, 2, 1, 3]))
    c('sho', np.array([B, S, E] if r.random() < .5 else [0, 0, -1], np.int64))
    nodes.append(oh.make_node('Reshape', ['o5', 'sho'], ['y']))
    outs = [vi('y', dt, [B, S, E])]
    if r.random() < 0.25:  # also expose the probabilities (fused intermediate as output)
        outs.append(vi('p', dt, None))
    if r.random() < 0.15:
        outs.append(vi(sn, dt, None))
    m = model(nodes, ins, outs, inits, opset=int(r.choice([17, 18, 21])))
    for i in ins:
        if i.name not in feeds:
            shp = [d.dim_value for d in i.type.tensor_type.shape.dim]
            feeds[i.name] = (r.standard_normal(shp) * r.choice([0.5, 1, 3])).astype(npd)
    desc = f'{kind} B{B} H{H} S{S} T{T} D{D} {layout} scale={sp} mask={mk} neg={neg} full={full_mask_row} ax={ax}'
    return m, feeds, desc


if __name__ == '__main__':
    s0, n = int(sys.argv[1]), int(sys.argv[2])
    kind = sys.argv[3] if len(sys.argv) > 3 else 'f32'
    nf = 0
    for s in range(s0, s0 + n):
        m, feeds, desc = gen(s, kind)
        if kind == 'f32':
            exp, extra = oracle64(m, feeds, k=8); tol = (1e-5, 1e-7); btol = tol
        else:
            me = emulate(m, kind)
            f32feeds = {k: (v.astype(np.float32) if v.dtype != bool else v) for k, v in feeds.items()}
            exp = ort_run(me, f32feeds)
            exp = [e.astype(NP[kind]) if e.dtype == np.float32 else e for e in exp]
            tol = {'f16': (4e-3, 2e-3), 'bf16': (3e-2, 1.6e-2)}[kind]; btol = tol; extra = None
        f, _ = check(f'attn_{kind}_{s}', m, feeds, exp=exp, tol=tol, btol=btol, quiet=True, extra=extra)
        if f: print('   ', desc); nf += 1
    print('done', s0, n, kind, 'faults', nf)
