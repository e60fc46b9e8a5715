"""Seeded random-DAG generator for fusor fusion fuzzing (round 12).
gen(seed, kind) -> Spec; build(spec, dtype) -> ModelProto.  kind in f32,f16,bf16,f64,i32,i64.
Float graphs are built symbolically (dtype 'FT') so the same graph can be emitted in float64 as an oracle."""
import numpy as np, onnx, random, math
from onnx import helper as oh, TensorProto as TP
import ml_dtypes

DT = {'f32': TP.FLOAT, 'f16': TP.FLOAT16, 'bf16': TP.BFLOAT16, 'f64': TP.DOUBLE, 'i32': TP.INT32, 'i64': TP.INT64,
      'bool': TP.BOOL, 'i8': TP.INT8, 'i16': TP.INT16, 'u8': TP.UINT8, 'u16': TP.UINT16}
NP = {'f32': np.float32, 'f16': np.float16, 'bf16': ml_dtypes.bfloat16, 'f64': np.float64, 'i32': np.int32,
      'i64': np.int64, 'bool': np.bool_, 'i8': np.int8, 'i16': np.int16, 'u8': np.uint8, 'u16': np.uint16}


class V:
    def __init__(s, name, shape, dt): s.name, s.shape, s.dt = name, tuple(shape), dt
    def __repr__(s): return f'{s.name}{list(s.shape)}:{s.dt}'


def slice_len(dim, st, en, step):
    if st < 0: st += dim
    if en < 0: en += dim
    if step > 0:
        st = min(max(st, 0), dim); en = min(max(en, 0), dim)
    else:
        st = min(max(st, 0), dim - 1); en = min(max(en, -1), dim - 1)
    return max(0, -(-(en - st) // step))


class G:
    def __init__(s, seed, kind, opset):
        s.r = random.Random(seed); s.nr = np.random.default_rng(seed)
        s.kind = kind; s.opset = opset
        s.isf = kind in ('f32', 'f16', 'bf16', 'f64')
        s.FT = 'FT' if s.isf else kind
        s.nodes = []; s.inits = []; s.inputs = []; s.pool = []; s.k = 0; s.feeds = {}
        s.consumed = set(); s.big = False

    def nm(s, p='t'):
        s.k += 1; return f'{p}{s.k}'

    # ---- leaves
    def rand_vals(s, shape, dt, pos=False):
        if dt in ('i32', 'i64'):
            a = s.nr.integers(1 if pos else -4, 5, size=shape)
            if not pos: a[a == 0] = 1
            return a.astype(np.float64)
        a = s.nr.uniform(0.3, 1.5, size=shape) * (1 if pos else s.nr.choice([-1, 1], size=shape))
        return np.asarray(a, np.float64)

    def new_input(s, shape, dt=None, pos=False):
        dt = dt or s.FT
        v = V(s.nm('in'), shape, dt); s.inputs.append(v)
        s.feeds[v.name] = s.rand_vals(shape, dt, pos); s.pool.append(v); return v

    def new_init(s, shape, dt=None, pos=False, vals=None):
        dt = dt or s.FT
        v = V(s.nm('w'), shape, dt)
        s.inits.append((v, s.rand_vals(shape, dt, pos) if vals is None else np.asarray(vals)))
        return v

    def const_i64(s, vals):
        v = V(s.nm('c'), (len(vals),), 'i64'); s.inits.append((v, np.asarray(vals, np.int64))); return v

    def node(s, op, ins, shape, dt, pool=True, **attrs):
        o = V(s.nm(op[:3].lower()), shape, dt)
        s.nodes.append(oh.make_node(op, [i.name if i is not None else '' for i in ins], [o.name], **attrs))
        for i in ins:
            if i is not None: s.consumed.add(i.name)
        if pool: s.pool.append(o)
        return o

    def pick(s, pred=lambda v: True, dt=None):
        dt = dt or s.FT
        c = [v for v in s.pool if v.dt == dt and pred(v) and 0 < int(np.prod(v.shape)) <= (40000 if s.big else 4096)]
        if not c: return None
        # favour recent values to get deep chains
        w = [1 + 3 * (i >= len(c) - 3) for i in range(len(c))]
        return s.r.choices(c, w)[0]

    def rshape(s, rank=None):
        rank = s.r.randint(1, 4) if rank is None else rank
        if s.big:
            for _ in range(50):
                sh = tuple(s.r.choice([1, 1, 2, 3, 4, 5, 7, 8, 16, 17, 31, 32, 64, 65, 130]) for _ in range(rank))
                if int(np.prod(sh)) <= 20000: return sh
        return tuple(s.r.choice([1, 2, 3, 4, 5, 6, 8]) for _ in range(rank))

    # broadcast partner of shape sh
    def partner(s, sh, dt=None, pos=False):
        dt = dt or s.FT
        mode = s.r.random()
        if mode < 0.15: ps = ()
        else:
            ps = list(sh[s.r.randint(0, len(sh)):]) if sh else []
            ps = [1 if s.r.random() < 0.3 else d for d in ps]
            if s.r.random() < 0.2 and len(ps) < 5: ps = [1] * s.r.randint(1, 5 - len(ps)) + ps if len(sh) < 5 else ps
            ps = tuple(ps)
        # try existing value of same shape
        if s.r.random() < 0.3 and not pos:
            c = [v for v in s.pool if v.dt == dt and v.shape == ps]
            if c: return s.r.choice(c)
        if s.r.random() < 0.3 and not pos:
            c = [v for v, _ in s.inits if v.dt == dt and v.shape == ps]
            if c: return s.r.choice(c)
        if s.r.random() < 0.5: return s.new_init(ps, dt, pos)
        return s.new_input(ps, dt, pos)

    def safe_pos(s, x):  # |x| + c
        a = s.node('Abs', [x], x.shape, x.dt, pool=False)
        c = s.new_init((), x.dt, vals=s.r.choice([0.5, 1.0, 0.25]))
        return s.node('Add', [a, c], x.shape, x.dt, pool=False)

    def bounded(s, x):
        return s.node('Tanh', [x], x.shape, x.dt, pool=False) if x.dt == s.FT and s.isf else x

    # ---- op families
    def op_unary(s):
        x = s.pick()
        if x is None: return
        ops = ['Neg', 'Abs', 'Relu'] + (['Exp', 'Log', 'Tanh', 'Sigmoid', 'Erf', 'Sqrt', 'Clip', 'Pow', 'Reciprocal']
                                          if s.isf else ['Clip'])
        op = s.r.choice(ops)
        if op in ('Log', 'Sqrt', 'Reciprocal'): x = s.safe_pos(x)
        if op == 'Exp': x = s.bounded(x)
        if op == 'Pow':
            if s.r.random() < 0.5:
                e = s.new_init((), vals=s.r.choice([2.0, 3.0, 0.5, -1.0, 1.5]))
                if e is not None and s.inits[-1][1] in (0.5, -1.0, 1.5): x = s.safe_pos(x)
                return s.node('Pow', [x, e], x.shape, x.dt)
            x = s.safe_pos(s.bounded(x)); y = s.partner(x.shape)
            y = s.bounded(y)
            return s.node('Pow', [x, y], np.broadcast_shapes(x.shape, y.shape), x.dt)
        if op == 'Clip':
            lo = s.new_init((), x.dt, vals=-s.r.choice([0.5, 1.0, 2.0])) if s.r.random() < 0.8 else None
            hi = s.new_init((), x.dt, vals=s.r.choice([0.5, 1.0, 3.0])) if s.r.random() < 0.8 else None
            ins = [x, lo, hi]
            while ins and ins[-1] is None: ins.pop()
            return s.node('Clip', ins, x.shape, x.dt)
        return s.node(op, [x], x.shape, x.dt)

    def op_binary(s):
        x = s.pick()
        if x is None: return
        op = s.r.choice(['Add', 'Sub', 'Mul', 'Div', 'Min', 'Max'] if s.isf else ['Add', 'Sub', 'Mul', 'Min', 'Max'])
        y = s.partner(x.shape) if s.r.random() < 0.8 else (s.pick(lambda v: _bc(v.shape, x.shape)) or s.partner(x.shape))
        if s.r.random() < 0.5: x, y = y, x
        if op == 'Div':
            y = s.safe_pos(y)
            if s.r.random() < 0.3: y = s.node('Neg', [y], y.shape, y.dt, pool=False)
        return s.node(op, [x, y], np.broadcast_shapes(x.shape, y.shape), x.dt)

    def op_where(s):
        x = s.pick()
        if x is None: return
        y = s.partner(x.shape)
        cmp = s.r.choice(['Less', 'Greater', 'Equal', 'LessOrEqual'])
        a = s.pick(lambda v: _bc(v.shape, x.shape)) or x
        b = s.partner(a.shape)
        if cmp == 'Equal' and s.isf:  # equality on floats: compare Relu against 0
            a = s.node('Relu', [a], a.shape, a.dt, pool=False)
            b = s.new_init((), a.dt, vals=0.0)
        c = s.node(cmp, [a, b], np.broadcast_shapes(a.shape, b.shape), 'bool', pool=False)
        sh = np.broadcast_shapes(c.shape, x.shape, y.shape)
        if s.r.random() < 0.5: x, y = y, x
        return s.node('Where', [c, x, y], sh, x.dt)

    def op_cast(s):
        x = s.pick()
        if x is None: return
        if s.isf:
            mid = s.r.choice(['f32', 'f16', 'i32', 'f64'])
            if mid == 'i32':
                x2 = s.node('Mul', [x, s.new_init((), vals=4.0)], x.shape, x.dt, pool=False)
                c = s.node('Cast', [x2], x.shape, 'i32', pool=False, to=DT['i32'])
            else:
                c = s.node('Cast', [x], x.shape, mid, pool=False, to=DT[mid])
            return s.node('Cast', [c], x.shape, s.FT, to='FT')
        other = 'i64' if s.kind == 'i32' else 'i32'
        c = s.node('Cast', [x], x.shape, other, pool=False, to=DT[other])
        if s.r.random() < 0.5:
            c = s.node('Cast', [c], x.shape, 'f32', pool=False, to=DT['f32'])
        return s.node('Cast', [c], x.shape, s.FT, to=DT[s.FT])

    def op_cast2(s):
        """float -> int type T1 -> op in T1 -> T2 -> op -> FT (avoid signed-narrow -> i64, a known vulkan bug)"""
        if not s.isf: return s.op_cast()
        x = s.pick()
        if x is None: return
        INT = {'i8': 3, 'i16': 5, 'i32': 6, 'i64': 7, 'u8': 2, 'u16': 4}
        x = s.node('Mul', [x, s.new_init((), vals=s.r.choice([3.0, 10.0, 40.0]))], x.shape, x.dt, pool=False)
        t1 = s.r.choice(list(INT))
        if t1.startswith('u'): x = s.node('Abs', [x], x.shape, x.dt, pool=False)
        lim = {'i8': 100.0, 'u8': 250.0, 'i16': 30000.0, 'u16': 60000.0}.get(t1, 1e6)
        x = s.node('Clip', [x, s.new_init((), vals=-lim), s.new_init((), vals=lim)], x.shape, x.dt, pool=False)
        v = s.node('Cast', [x], x.shape, t1, pool=False, to=INT[t1])
        def intop(v, t):
            op = s.r.choice(['Abs', 'Neg', 'Max', 'Min', 'Where', 'Add', 'Mul', 'Sign', 'none'])
            if t.startswith('u') and op in ('Neg', 'Sign', 'Abs'): op = 'Max'
            if t in ('i8', 'i16', 'u8', 'u16') and op in ('Abs', 'Neg', 'Sign', 'Add', 'Mul', 'Where'): op = 'Max'
            if op == 'none': return v
            if op in ('Abs', 'Neg', 'Sign'): return s.node(op, [v], v.shape, t, pool=False)
            c = V(s.nm('ci'), (), t); s.inits.append((c, np.asarray(s.r.choice([0, 1, 2, 3]), NP.get(t, np.int64) if t in NP else {'i8': np.int8, 'i16': np.int16, 'u8': np.uint8, 'u16': np.uint16}[t])))
            if op == 'Where':
                cnd = s.node(s.r.choice(['Less', 'Greater', 'Equal']), [v, c], v.shape, 'bool', pool=False)
                return s.node('Where', [cnd, v, c], v.shape, t, pool=False)
            if op == 'Mul': c = s.inits[-1][0]
            return s.node(op, [v, c], v.shape, t, pool=False)
        v = intop(v, t1)
        if s.r.random() < 0.5:
            opts = [t for t in INT if t != t1 and not t.startswith('u')]
            if t1 in ('i8', 'i16', 'i32'): opts = [t for t in opts if t != 'i64']
            if t1 == 'i64': opts = [t for t in opts if t in ('i32',)]
            if t1.startswith('u'): opts = [t for t in opts if t != 'i64']
            if opts:
                t2 = s.r.choice(opts)
                if {'i8': 1, 'i16': 2, 'i32': 4, 'i64': 8, 'u8': 1, 'u16': 2}[t2] >= {'i8': 1, 'i16': 2, 'i32': 4, 'i64': 8, 'u8': 1, 'u16': 2}[t1]:
                    v = s.node('Cast', [v], v.shape, t2, pool=False, to=INT[t2]); t1 = t2
                    v = intop(v, t1)
        return s.node('Cast', [v], v.shape, s.FT, to='FT')

    def op_transpose(s):
        x = s.pick(lambda v: len(v.shape) >= 2)
        if x is None: return
        p = list(range(len(x.shape))); s.r.shuffle(p)
        return s.node('Transpose', [x], tuple(x.shape[i] for i in p), x.dt, perm=p)

    def op_reshape(s):
        x = s.pick()
        if x is None: return
        n = int(np.prod(x.shape))
        # factorize n into random rank
        fs = _factors(n); s.r.shuffle(fs)
        rank = s.r.randint(1, 4)
        dims = [1] * rank
        for f in fs: dims[s.r.randrange(rank)] *= f
        if s.r.random() < 0.3: dims.insert(s.r.randint(0, len(dims)), 1)
        spec = list(dims)
        # use 0 where dims coincide with input
        for i in range(min(len(spec), len(x.shape))):
            if spec[i] == x.shape[i] and s.r.random() < 0.5: spec[i] = 0
        if s.r.random() < 0.6:
            j = s.r.randrange(len(spec))
            if spec[j] != 0: spec[j] = -1
        return s.node('Reshape', [x, s.const_i64(spec)], tuple(dims), x.dt)

    def op_slice(s):
        x = s.pick(lambda v: len(v.shape) >= 1 and max(v.shape) >= 2)
        if x is None: return
        r = len(x.shape)
        axes = s.r.sample(range(r), s.r.randint(1, r))
        st, en, sp, sh = [], [], [], list(x.shape)
        for a in axes:
            d = x.shape[a]
            for _ in range(20):
                step = s.r.choice([1, 1, 2, 3, -1, -2])
                b = s.r.randint(-d - 2, d + 2); e = s.r.choice([s.r.randint(-d - 2, d + 2), 2 ** 31, -2 ** 31, 10 ** 9])
                L = slice_len(d, b, e, step)
                if L > 0: break
            else:
                b, e, step, L = 0, d, 1, d
            st.append(b); en.append(e); sp.append(step); sh[a] = L
        axs = [a - r if s.r.random() < 0.3 else a for a in axes]
        ins = [x, s.const_i64(st), s.const_i64(en), s.const_i64(axs)]
        if any(v != 1 for v in sp) or s.r.random() < 0.5: ins.append(s.const_i64(sp))
        return s.node('Slice', ins, tuple(sh), x.dt)

    def op_expand(s):
        x = s.pick(lambda v: int(np.prod(v.shape)) <= 256)
        if x is None: return
        tgt = [d if d != 1 or s.r.random() < 0.5 else s.r.choice([2, 3]) for d in x.shape]
        spec = [1 if (t == d and s.r.random() < 0.4) else t for t, d in zip(tgt, x.shape)]
        if len(tgt) < 5 and s.r.random() < 0.4:
            lead = [s.r.choice([1, 2, 3])]
            tgt = lead + tgt; spec = lead + spec
        if len(spec) > 1 and s.r.random() < 0.2: spec = spec[1:]  # shorter spec than input: broadcast
        return s.node('Expand', [x, s.const_i64(spec)], tuple(np.broadcast_shapes(tuple(x.shape), tuple(spec))), x.dt)

    def op_squeeze(s):
        if s.r.random() < 0.5:
            x = s.pick(lambda v: 1 in v.shape)
            if x is None: return
            ones = [i for i, d in enumerate(x.shape) if d == 1]
            ax = s.r.sample(ones, s.r.randint(1, len(ones)))
            sh = tuple(d for i, d in enumerate(x.shape) if i not in ax)
            ax = [a - len(x.shape) if s.r.random() < 0.4 else a for a in ax]
            return s.node('Squeeze', [x, s.const_i64(ax)], sh, x.dt)
        x = s.pick(lambda v: len(v.shape) <= 4)
        if x is None: return
        n = s.r.randint(1, 5 - len(x.shape)); R = len(x.shape) + n
        ax = s.r.sample(range(R), n); sh = list(x.shape)
        for a in sorted(ax): sh.insert(a, 1)
        ax = [a - R if s.r.random() < 0.4 else a for a in ax]
        return s.node('Unsqueeze', [x, s.const_i64(ax)], tuple(sh), x.dt)

    def op_flatten(s):
        x = s.pick()
        if x is None: return
        r = len(x.shape); a = s.r.randint(-r, r)
        aa = a + r if a < 0 else a
        sh = (int(np.prod(x.shape[:aa])), int(np.prod(x.shape[aa:])))
        return s.node('Flatten', [x], sh, x.dt, axis=a)

    def operand_view(s, x):
        """a chain of 0-2 view ops applied to x"""
        for _ in range(s.r.randint(0, 2)):
            c = s.r.random()
            if c < 0.4 and len(x.shape) >= 2:
                p = list(range(len(x.shape))); s.r.shuffle(p)
                x = s.node('Transpose', [x], tuple(x.shape[i] for i in p), x.dt, pool=False, perm=p)
            elif c < 0.6 and len(x.shape) <= 4:
                a = s.r.randint(0, len(x.shape) - 2) if len(x.shape) >= 2 else 0
                sh = list(x.shape); sh.insert(a, 1)
                x = s.node('Unsqueeze', [x, s.const_i64([a])], tuple(sh), x.dt, pool=False)
            elif c < 0.8:
                # slice last-but-one axis
                if len(x.shape) >= 1 and x.shape[0] >= 2:
                    sh = list(x.shape); L = slice_len(sh[0], 0, 2 ** 31, 1)
                    st = s.r.choice([0, 1]); step = s.r.choice([1, 2]) if sh[0] >= 3 else 1
                    sh[0] = slice_len(sh[0], st, 10 ** 9, step)
                    x = s.node('Slice', [x, s.const_i64([st]), s.const_i64([10 ** 9]), s.const_i64([0]), s.const_i64([step])],
                               tuple(sh), x.dt, pool=False)
            elif s.isf:
                sc = s.new_init((), vals=s.r.choice([0.125, 0.35355339, 0.5, 2.0]))
                op = s.r.choice(['Mul', 'Div'])
                ins = [x, sc] if op == 'Div' or s.r.random() < 0.5 else [sc, x]
                x = s.node(op, ins, x.shape, x.dt, pool=False)
        return x

    def op_viewchain(s):
        x = s.pick(lambda v: len(v.shape) >= 1)
        if x is None: return
        for _ in range(s.r.randint(2, 5)):
            f = s.r.choice(['op_transpose', 'op_reshape', 'op_slice', 'op_expand', 'op_squeeze', 'op_flatten'])
            s.pool.append(x)
            y = getattr(s, f)()
            if y is not None: x = y
        if s.isf and s.r.random() < 0.3:
            x = s.node('Mul', [x, s.new_init((), vals=0.5)], x.shape, x.dt)
        if s.r.random() < 0.5: return s.op_binary()
        return s.op_matmul() if s.r.random() < 0.5 else s.op_softmax()

    def op_matmul(s):
        ok = ['f32', 'f16', 'f64', 'bf16', 'i32', 'i64']
        x = s.pick(lambda v: 1 <= len(v.shape) <= 4 and v.shape[-1] <= (256 if s.big else 64) and int(np.prod(v.shape)) <= 20000)
        if x is None: return
        x = s.operand_view(x)
        if len(x.shape) == 0: return
        K = x.shape[-1]
        N = s.r.choice([1, 2, 3, 4, 5, 8] + ([16, 33, 64, 100] if s.big else []))
        c = s.r.random()
        if c < 0.25 and len(x.shape) >= 2:
            # x @ x^T-like: B = transpose of a view of x
            p = list(range(len(x.shape))); p[-1], p[-2] = p[-2], p[-1]
            b = s.node('Transpose', [x], tuple(x.shape[i] for i in p), x.dt, pool=False, perm=p)
            if s.isf and s.r.random() < 0.5:
                b = s.node('Mul', [b, s.new_init((), vals=0.35355339)], b.shape, b.dt, pool=False)
        else:
            bb = ()
            if len(x.shape) >= 3 and s.r.random() < 0.5:
                bb = tuple(1 if s.r.random() < 0.5 else d for d in x.shape[-3:-2])
            elif s.r.random() < 0.2 and len(x.shape) <= 3:
                bb = (s.r.choice([1, 2]),)
            bs = bb + ((K, N) if s.r.random() < 0.85 else (K,))
            if s.r.random() < 0.3:
                # build B through a transpose: B^T stored
                src = s.new_init(bs[:-2] + (bs[-1], bs[-2])) if len(bs) >= 2 else s.new_init(bs)
                if len(bs) >= 2:
                    p = list(range(len(bs))); p[-1], p[-2] = p[-2], p[-1]
                    b = s.node('Transpose', [src], bs, src.dt, pool=False, perm=p)
                else: b = src
            else:
                b = s.new_init(bs) if s.r.random() < 0.5 else s.new_input(bs)
            b = s.operand_view(b) if s.r.random() < 0.3 and len(b.shape) >= 2 and False else b
        sh = _mm_shape(x.shape, b.shape)
        if sh is None: return
        if s.r.random() < 0.5: x, b = (x, b)
        o = s.node('MatMul', [x, b], sh, x.dt)
        # epilogue
        if s.r.random() < 0.5 and s.isf:
            bias = s.partner(o.shape)
            o = s.node('Add', [o, bias], np.broadcast_shapes(o.shape, bias.shape), o.dt)
            if s.r.random() < 0.5:
                o = s.node(s.r.choice(['Relu', 'Tanh', 'Sigmoid', 'Erf']), [o], o.shape, o.dt)
        return o

    def op_attention(s):
        if not s.isf: return s.op_matmul()
        B, H, S, D = s.r.choice([1, 2]), s.r.choice([1, 2, 3]), s.r.choice([2, 3, 4, 5]), s.r.choice([2, 4, 8])
        x = s.new_input((B, S, H * D))
        def proj():
            w = s.new_init((H * D, H * D), vals=s.rand_vals((H * D, H * D), 'f64') * 0.5)
            y = s.node('MatMul', [x, w], (B, S, H * D), x.dt, pool=False)
            y = s.node('Reshape', [y, s.const_i64([0, 0, H, D] if s.r.random() < 0.5 else [B, S, -1, D])], (B, S, H, D), x.dt, pool=False)
            return y
        q = s.node('Transpose', [proj()], (B, H, S, D), x.dt, pool=False, perm=[0, 2, 1, 3])
        k = proj()
        sc = s.new_init((), vals=1 / math.sqrt(D))
        if s.r.random() < 0.5:
            kt = s.node('Transpose', [k], (B, H, D, S), x.dt, pool=False, perm=[0, 2, 3, 1])
        else:
            kt = s.node('Transpose', [k], (B, H, S, D), x.dt, pool=False, perm=[0, 2, 1, 3])
            kt = s.node('Transpose', [kt], (B, H, D, S), x.dt, pool=False, perm=[0, 1, 3, 2])
        m = s.r.random()
        if m < 0.33: q = s.node('Mul', [q, sc], q.shape, q.dt, pool=False)
        elif m < 0.66: kt = s.node(s.r.choice(['Mul', 'Div']), [kt, sc if s.r.random() < 0.5 else s.new_init((), vals=math.sqrt(D))], kt.shape, kt.dt, pool=False)
        sco = s.node('MatMul', [q, kt], (B, H, S, S), x.dt, pool=False)
        if m >= 0.66: sco = s.node('Div', [sco, s.new_init((), vals=math.sqrt(D))], sco.shape, sco.dt, pool=False)
        if s.r.random() < 0.5:
            mask = s.new_init((1, 1, S, S), vals=np.triu(np.full((S, S), -1e4), 1)[None, None])
            sco = s.node('Add', [sco, mask], sco.shape, sco.dt, pool=False)
        p = s.node('Softmax', [sco], sco.shape, sco.dt, pool=False, axis=-1)
        v = s.node('Transpose', [proj()], (B, H, S, D), x.dt, pool=False, perm=[0, 2, 1, 3])
        o = s.node('MatMul', [p, v], (B, H, S, D), x.dt, pool=False)
        o = s.node('Transpose', [o], (B, S, H, D), x.dt, pool=False, perm=[0, 2, 1, 3])
        return s.node('Reshape', [o, s.const_i64([0, 0, -1])], (B, S, H * D), x.dt)

    def op_gemm(s):
        if s.kind in ('i32', 'i64'): return s.op_matmul()
        x = s.pick(lambda v: len(v.shape) == 2 and v.shape[0] <= 64 and v.shape[1] <= 64)
        if x is None:
            x = s.pick(lambda v: 1 <= len(v.shape) <= 4 and int(np.prod(v.shape)) <= 256)
            if x is None: return
            x = s.node('Flatten', [x], (int(np.prod(x.shape[:-1])) if len(x.shape) > 1 else 1, x.shape[-1]), x.dt, pool=False, axis=-1 if len(x.shape) > 1 else 0)
            if len(x.shape) != 2: return
        tA = s.r.random() < 0.3; tB = s.r.random() < 0.5
        if tA: x = s.node('Transpose', [x], x.shape[::-1], x.dt, pool=False, perm=[1, 0]); 
        M, K = (x.shape[1], x.shape[0]) if tA else x.shape
        N = s.r.choice([1, 3, 4, 7])
        b = s.new_init((N, K) if tB else (K, N)) if s.r.random() < 0.6 else s.new_input((N, K) if tB else (K, N))
        attrs = dict(transA=int(tA), transB=int(tB))
        if s.r.random() < 0.5: attrs['alpha'] = s.r.choice([0.5, 2.0, -1.0])
        ins = [x, b]
        if s.r.random() < 0.7:
            cs = s.r.choice([(N,), (1, N), (M, 1), (M, N), (), (1,)])
            ins.append(s.new_init(cs) if s.r.random() < 0.7 else s.new_input(cs))
            if s.r.random() < 0.5: attrs['beta'] = s.r.choice([0.5, 2.0, 0.0])
        return s.node('Gemm', ins, (M, N), x.dt, **attrs)

    def op_reduce(s):
        x = s.pick(lambda v: len(v.shape) >= 1)
        if x is None: return
        op = s.r.choice(['ReduceSum', 'ReduceMean', 'ReduceMax', 'ReduceMin'] if s.isf else ['ReduceSum', 'ReduceMax', 'ReduceMin'])
        r = len(x.shape)
        ax = sorted(s.r.sample(range(r), s.r.randint(1, r)))
        kd = s.r.choice([0, 1])
        sh = tuple((1 if i in ax else d) for i, d in enumerate(x.shape) if kd or i not in ax)
        axs = [a - r if s.r.random() < 0.4 else a for a in ax]
        noaxes = s.r.random() < 0.1
        if noaxes: sh = tuple(1 for _ in x.shape) if kd else ()
        if op == 'ReduceSum' or s.opset >= 18:
            ins = [x] if noaxes else [x, s.const_i64(axs)]
            return s.node(op, ins, sh, x.dt, keepdims=kd)
        return s.node(op, [x], sh, x.dt, keepdims=kd, **({} if noaxes else dict(axes=axs)))

    def op_softmax(s):
        if not s.isf: return s.op_reduce()
        x = s.pick(lambda v: len(v.shape) >= 1)
        if x is None: return
        r = len(x.shape)
        op = s.r.choice(['Softmax', 'LogSoftmax', 'LayerNormalization'])
        a = s.r.randint(-r, r - 1)
        if op != 'LayerNormalization':
            return s.node(op, [x], x.shape, x.dt, axis=a)
        aa = a + r if a < 0 else a
        ns = x.shape[aa:]
        if int(np.prod(ns)) == 1: return
        sc = s.new_init(ns) if s.r.random() < 0.7 else s.new_input(ns)
        ins = [x, sc]
        if s.r.random() < 0.6: ins.append(s.new_init(ns))
        return s.node('LayerNormalization', ins, x.shape, x.dt, axis=a, epsilon=s.r.choice([1e-5, 1e-3]))

    def op_gather(s):
        x = s.pick(lambda v: len(v.shape) >= 1)
        if x is None: return
        r = len(x.shape); a = s.r.randint(-r, r - 1); aa = a + r if a < 0 else a
        d = x.shape[aa]
        c = s.r.random()
        if c < 0.25:
            idx = V(s.nm('c'), (), 'i64'); s.inits.append((idx, np.asarray(s.r.randint(-d, d - 1), np.int64)))
        else:
            ish = tuple(s.r.choice([1, 2, 3, 4]) for _ in range(s.r.randint(1, 2)))
            vals = np.asarray([s.r.randint(-d, d - 1) for _ in range(int(np.prod(ish)))], np.int64).reshape(ish)
            if c < 0.6:
                idx = V(s.nm('c'), ish, 'i64'); s.inits.append((idx, vals))
            else:
                idx = V(s.nm('idx'), ish, 'i64'); s.inputs.append(idx); s.feeds[idx.name] = vals
            if s.r.random() < 0.4:
                k = s.r.choice(['Reshape', 'Unsqueeze', 'Squeeze'])
                if k == 'Reshape':
                    idx = s.node('Reshape', [idx, s.const_i64([-1])], (int(np.prod(ish)),), 'i64', pool=False)
                elif k == 'Unsqueeze':
                    idx = s.node('Unsqueeze', [idx, s.const_i64([0])], (1,) + ish, 'i64', pool=False)
                elif 1 in ish:
                    j = ish.index(1)
                    idx = s.node('Squeeze', [idx, s.const_i64([j])], ish[:j] + ish[j + 1:], 'i64', pool=False)
        sh = x.shape[:aa] + idx.shape + x.shape[aa + 1:]
        o = s.node('Gather', [x, idx], sh, x.dt, axis=a)
        if s.isf and s.r.random() < 0.3 and len(sh) >= 1 and sh[-1] > 1:
            o = s.node('LayerNormalization', [o, s.new_init(sh[-1:])], sh, o.dt, axis=-1)
        return o

    def op_concat(s):
        x = s.pick(lambda v: len(v.shape) >= 1)
        if x is None: return
        r = len(x.shape); a = s.r.randint(-r, r - 1); aa = a + r if a < 0 else a
        parts = [x]; tot = x.shape[aa]
        for _ in range(s.r.randint(1, 2)):
            c = s.r.random()
            if c < 0.4:
                parts.append(s.node(s.r.choice(['Neg', 'Abs', 'Relu']), [x], x.shape, x.dt, pool=False)); tot += x.shape[aa]
            elif c < 0.6 and r >= 2 and x.shape[aa] >= 1:
                # a transposed/sliced view with same shape
                sh = list(x.shape); sh[aa] = s.r.choice([1, 2, 3])
                y = s.new_input(tuple(sh)) if s.r.random() < 0.5 else s.new_init(tuple(sh))
                parts.append(y); tot += sh[aa]
            else:
                sh = list(x.shape); L = s.r.choice([1, 2, 3]); sh[aa] = L
                # slice of something: slice x on aa if possible
                if x.shape[aa] >= L:
                    y = s.node('Slice', [x, s.const_i64([-L]), s.const_i64([10 ** 9]), s.const_i64([a])], tuple(sh), x.dt, pool=False)
                else:
                    y = s.new_init(tuple(sh))
                parts.append(y); tot += L
        s.r.shuffle(parts)
        sh = list(x.shape); sh[aa] = tot
        return s.node('Concat', parts, tuple(sh), x.dt, axis=a)


def _bc(a, b):
    try: np.broadcast_shapes(a, b); return True
    except ValueError: return False


def _factors(n):
    f, p = [], 2
    while n > 1:
        while n % p == 0: f.append(p); n //= p
        p += 1
    return f


def _mm_shape(a, b):
    if len(a) == 1 and len(b) == 1: return () if a[0] == b[0] else None
    if len(a) == 1:
        if a[0] != b[-2]: return None
        return b[:-2] + b[-1:]
    if len(b) == 1:
        if a[-1] != b[0]: return None
        return a[:-1]
    if a[-1] != b[-2]: return None
    try: bb = np.broadcast_shapes(a[:-2], b[:-2])
    except ValueError: return None
    return tuple(bb) + (a[-2], b[-1])


FAMILIES = [('op_unary', 3), ('op_binary', 4), ('op_where', 1), ('op_cast', 0.7), ('op_transpose', 2), ('op_reshape', 2),
            ('op_slice', 2), ('op_expand', 1), ('op_squeeze', 1.2), ('op_flatten', 0.5), ('op_matmul', 2.5),
            ('op_attention', 0.4), ('op_gemm', 1), ('op_reduce', 1.5), ('op_softmax', 1.5), ('op_gather', 1.2),
            ('op_concat', 1), ('op_viewchain', 1.5), ('op_cast2', 0)]


def gen(seed, kind, opset=None, fam_weights=None):
    r0 = random.Random(seed * 7919 + 13)
    opset = opset or r0.choices([17, 13, 21], [0.7, 0.15, 0.15])[0]
    if kind == 'bf16' and opset < 17: opset = 17
    import os
    fw = fam_weights or [(f, float(os.environ.get('RG_W_' + f, w))) for f, w in FAMILIES]
    if opset < 17: fw = [(f, w) for f, w in fw]  # LN handled below
    s = G(seed, kind, opset)
    s.big = seed >= 10000
    # starting inputs
    for _ in range(s.r.randint(1, 2)):
        s.new_input(s.rshape(s.r.randint(1, 4)))
    target = s.r.randint(3, 15) if not s.big else s.r.randint(8, 25)
    tries = 0
    while len(s.nodes) < target and tries < 200:
        tries += 1
        f = s.r.choices([f for f, _ in fw], [w for _, w in fw])[0]
        try:
            getattr(s, f)()
        except _Skip:
            pass
        if len(s.nodes) > 40: break
    if opset < 17 and any(n.op_type == 'LayerNormalization' for n in s.nodes):
        opset = 17
    s.opset = opset
    # outputs: last node output + some random others (fan-out, internally consumed)
    prod = [v for v in s.pool if not v.name.startswith(('in', 'idx'))]
    outs = []
    if prod: outs.append(prod[-1])
    for v in prod[:-1]:
        if v.name not in s.consumed or s.r.random() < float(os.environ.get('RG_OUTP', 0.15)): outs.append(v)
    if s.r.random() < float(os.environ.get('RG_VIEWOUT', 0.1)):
        # output that is a view of an input
        x = s.inputs[0]
        if len(x.shape) >= 2:
            outs.append(s.node('Transpose', [x], x.shape[::-1], x.dt, pool=False, perm=list(range(len(x.shape)))[::-1]))
        else:
            outs.append(s.node('Reshape', [x, s.const_i64([-1, 1])], (int(np.prod(x.shape)), 1), x.dt, pool=False))
    seen = set(); outs = [o for o in outs if not (o.name in seen or seen.add(o.name))][:5]
    s.outputs = outs
    return s


class _Skip(Exception): pass


def _npdt(dt, FT):
    return NP[FT if dt == 'FT' else dt]


def build(s, FT):
    """emit ModelProto with FT as the float type; returns (model, feeds)"""
    def et(dt): return DT[FT if dt == 'FT' else dt]
    nodes = []
    for n in s.nodes:
        n2 = onnx.NodeProto(); n2.CopyFrom(n)
        for a in n2.attribute:
            if a.name == 'to' and a.type == onnx.AttributeProto.STRING and a.s == b'FT':
                a.type = onnx.AttributeProto.INT; a.i = DT[FT]; a.ClearField('s')
        nodes.append(n2)
    inits = []
    for v, a in s.inits:
        npd = _npdt(v.dt, FT)
        if v.dt == 'FT':
            # round through the graph's declared dtype (kind) so f64 oracle sees identical values
            a = np.asarray(a, np.float64).astype(NP[s.kind]).astype(npd)
        else:
            a = np.asarray(a).astype(npd)
        inits.append(onnx.numpy_helper.from_array(np.asarray(a), v.name))
    feeds = {}
    for v in s.inputs:
        npd = _npdt(v.dt, FT)
        a = s.feeds[v.name]
        if v.dt == 'FT': a = np.asarray(a, np.float64).astype(NP[s.kind]).astype(npd)
        else: a = np.asarray(a).astype(npd)
        feeds[v.name] = a
    gi = [oh.make_tensor_value_info(v.name, et(v.dt), list(v.shape)) for v in s.inputs]
    go = [oh.make_tensor_value_info(v.name, et(v.dt), list(v.shape)) for v in s.outputs]
    g = oh.make_graph(nodes, 'rg', gi, go, inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid('', s.opset)], ir_version=8 if s.opset < 21 else 10)
    return m, feeds
