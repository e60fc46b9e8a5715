"""matmul operand prologues: MatMul(elementwise(view(x), scalar const), ...).  usage: mm.py SEED0 N [kind]"""
import sys, numpy as np, onnx
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from h import *

DTS = {'f32': (TP.FLOAT, np.float32), 'i32': (TP.INT32, np.int32), 'i64': (TP.INT64, np.int64), 'f16': (TP.FLOAT16, np.float16), 'f64': (TP.DOUBLE, np.float64)}


class G:
    def __init__(s, r):
        s.r = r; s.nodes = []; s.inits = []; s.n = 0
    def nm(s, p='t'):
        s.n += 1; return f'{p}{s.n}'
    def c(s, arr, p='c'):
        n = s.nm(p); s.inits.append(nh.from_array(np.asarray(arr), n)); return n
    def node(s, op, ins, **kw):
        o = s.nm(op.lower()[:3]); s.nodes.append(oh.make_node(op, ins, [o], **kw)); return o


def operand(g, r, name, shape_final, kind, npd):
    """build an input and a view chain ending with shape_final; returns (input vi, feed, value name)"""
    # choose a view: transpose last two, slice with neg step, reshape from flat, or plain
    v = r.choice(['plain', 'transpose', 'slice_neg', 'slice_step', 'reshape', 'transpose_batch', 'unsq'])
    shp = list(shape_final)
    if v == 'plain':
        src = shp; out = name
        ops = []
    if v == 'transpose':
        perm = list(range(len(shp)))
        if len(shp) >= 2: perm[-1], perm[-2] = perm[-2], perm[-1]
        src = [shp[p] for p in perm]
        out = g.node('Transpose', [name], perm=perm)
    elif v == 'transpose_batch' and len(shp) >= 3:
        perm = list(range(len(shp))); perm = perm[1:-1] + [perm[0], perm[-1]] if r.random() < .5 else [perm[-2], *perm[:-2], perm[-1]]
        # src dims s.t. transpose(src, perm) == shp: src[perm[i]] = shp[i]
        src = [0] * len(shp)
        for i, p in enumerate(perm): src[p] = shp[i]
        out = g.node('Transpose', [name], perm=perm)
    elif v == 'slice_neg':
        ax = int(r.integers(len(shp)))
        src = list(shp); src[ax] = shp[ax] + int(r.integers(0, 3))
        st = [-1 - int(r.integers(0, src[ax] - shp[ax] + 1))]
        out = g.node('Slice', [name, g.c(np.array(st, np.int64)), g.c(np.array([-(2 ** 62)], np.int64)), g.c(np.array([ax], np.int64)), g.c(np.array([-1], np.int64))])
        # output length = st+src+1 elements from st going down -> equals shp[ax] only if start = shp[ax]-1
        start = src[ax] + st[0]
        if start + 1 != shp[ax]:
            # add a regular slice to fix length
            out = g.node('Slice', [out, g.c(np.array([0], np.int64)), g.c(np.array([shp[ax]], np.int64)), g.c(np.array([ax], np.int64))])
    elif v == 'slice_step':
        ax = int(r.integers(len(shp))); step = int(r.choice([2, 3, -2]))
        src = list(shp); src[ax] = shp[ax] * abs(step) + int(r.integers(0, 2))
        if step > 0:
            out = g.node('Slice', [name, g.c(np.array([0], np.int64)), g.c(np.array([src[ax]], np.int64)), g.c(np.array([ax], np.int64)), g.c(np.array([step], np.int64))])
        else:
            out = g.node('Slice', [name, g.c(np.array([-1], np.int64)), g.c(np.array([-src[ax] - 5], np.int64)), g.c(np.array([ax], np.int64)), g.c(np.array([step], np.int64))])
        # fix length
        out = g.node('Slice', [out, g.c(np.array([0], np.int64)), g.c(np.array([shp[ax]], np.int64)), g.c(np.array([ax], np.int64))])
    elif v == 'reshape':
        src = [int(np.prod(shp))] if r.random() < .5 else ([shp[0] * shp[1]] + shp[2:] if len(shp) >= 2 else shp)
        out = g.node('Reshape', [name, g.c(np.array(shp, np.int64))])
    elif v == 'unsq' and len(shp) >= 3 and shp[0] == 1:
        src = shp[1:]
        out = g.node('Unsqueeze', [name, g.c(np.array([0], np.int64))])
    elif v in ('transpose_batch', 'unsq'):
        src = shp; out = name
    return src, out, v


def ew(g, r, x, kind, npd):
    fl = kind[0] == 'f'
    ops = ['Mul', 'Div', 'Add', 'Sub', 'Neg', 'Abs', 'Relu', 'none', 'Cast', 'Mul_rev', 'Sub_rev', 'Max'] if fl else ['Mul', 'Div', 'Add', 'Sub', 'Neg', 'Abs', 'none', 'Sub_rev', 'Max', 'Cast']
    op = str(r.choice(ops))
    rank = int(r.choice([0, 1, 2]))
    val = float(r.choice([0.125, -2.0, 3.0, 0.7, -1.5])) if fl else int(r.choice([2, -3, 5, 1, -1]))
    cst = np.array(val, npd).reshape([1] * rank)
    if op in ('Mul', 'Div', 'Add', 'Sub', 'Max'):
        if op == 'Div' and not fl and val == 0: val = 3
        return g.node(op, [x, g.c(cst)]), f'{op}({val},r{rank})'
    if op in ('Mul_rev', 'Sub_rev'):
        return g.node(op[:3], [g.c(cst), x]), f'{op}({val},r{rank})'
    if op in ('Neg', 'Abs', 'Relu'):
        return g.node(op, [x]), op
    if op == 'Cast':  # round trip through another dtype
        mid = {'f32': TP.FLOAT16, 'f16': TP.FLOAT, 'f64': TP.FLOAT, 'i32': TP.INT64, 'i64': TP.INT32}[kind]
        back = DTS[kind][0]
        return g.node('Cast', [g.node('Cast', [x], to=mid)], to=back), 'CastRT'
    return x, 'none'


def gen(seed, kind='f32'):
    r = np.random.default_rng(seed)
    dt, npd = DTS[kind]
    g = G(r)
    big = r.random() < 0.2
    if big:
        M, K, N = [int(x) for x in r.choice([[256, 256, 256], [257, 256, 256], [256, 257, 255], [512, 128, 256], [128, 1024, 129], [4096, 64, 64], [4097, 64, 64]])]
        bA, bB = [], []
    else:
        M, K, N = [int(r.choice([1, 2, 3, 7, 16, 33, 64, 65])) for _ in range(3)]
        bc = r.choice(['none', 'same', 'bcastA', 'bcastB', 'rank1A', 'rank1B', 'mix'])
        bA, bB = {'none': ([], []), 'same': ([2], [2]), 'bcastA': ([1], [3]), 'bcastB': ([2, 3], [3]), 'rank1A': ([], []), 'rank1B': ([], []), 'mix': ([2, 1], [1, 3])}[bc]
        if bc == 'rank1A': M = None
        if bc == 'rank1B': N = None
    sa = bA + ([M] if M else []) + [K]
    sb = bB + [K] + ([N] if N else [])
    ins, feeds = [], {}
    descs = []
    vals = []
    for nm_, shp in (('a', sa), ('b', sb)):
        src, x, v = operand(g, r, nm_, shp, kind, npd)
        if r.random() < 0.85:
            x, e = ew(g, r, x, kind, npd)
        else: e = 'noew'
        descs.append(f'{nm_}{shp}:{v}+{e}')
        as_init = r.random() < 0.15
        if kind[0] == 'f':
            arr = r.standard_normal(src).astype(npd)
        else:
            arr = r.integers(-20, 21, src).astype(npd)
        if as_init:
            g.inits.append(nh.from_array(arr, nm_))
        else:
            ins.append(vi(nm_, dt, src)); feeds[nm_] = arr
        vals.append(x)
    y = g.node('MatMul', vals)
    outs = [y]
    if r.random() < 0.3:  # epilogue
        y2, e = ew(g, r, y, kind, npd); outs = [y2]; descs.append('epi:' + e)
    if r.random() < 0.2 and vals[0] not in ('a',):  # fused prologue value also an output
        outs.append(vals[0]); descs.append('prologue-out')
    m = model(g.nodes, ins, [vi(o, dt, None) for o in outs], g.inits, opset=int(r.choice([13, 17, 21])))
    return m, feeds, f'{kind} M{M} K{K} N{N} ' + ' '.join(descs)


if __name__ == '__main__':
    s0, n = int(sys.argv[1]), int(sys.argv[2])
    kind = sys.argv[3] if len(sys.argv) > 3 else 'f32'
    nf = 0
    for s in range(s0, s0 + n):
        m, feeds, desc = gen(s, kind)
        try:
            if kind == 'f32':
                exp, extra = oracle64(m, feeds, k=8); tol = (1e-5, 1e-7)
            elif kind == 'f16':
                exp, extra = ort_run(m, feeds), None; tol = (4e-3, 2e-3)
            else:
                exp, extra = ort_run(m, feeds), None; tol = (0, 0)
        except Exception as ex:
            print('ORT fail', s, desc, str(ex)[:200]); continue
        f, _ = check(f'mm_{kind}_{s}', m, feeds, exp=exp, tol=tol, quiet=True, extra=extra)
        if f: print('   ', desc); nf += 1
    print('done', s0, n, kind, 'faults', nf)
