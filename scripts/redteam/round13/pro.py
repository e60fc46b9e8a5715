"""targeted matmul operand prologue cases"""
import sys, numpy as np, onnx
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from h import *
from mm import G
R = np.random.default_rng(5)
only = sys.argv[1:]
F = TP.FLOAT

def rn(*s, dt=np.float32): return R.standard_normal(s).astype(dt)

def run_case(name, m, feeds, exact_oracle=None, **kw):
    if only and not any(name.startswith(o) for o in only): return
    try: exp, extra = oracle64(m, feeds, k=8)
    except Exception as ex:
        print('ORT fail', name, str(ex)[:300]); return
    check(name, m, feeds, exp=exp, extra=extra, tol=(1e-5, 1e-6), **kw)

def ewop(g, op, x, c):
    """one elementwise op with scalar constant(s) c (list of names)"""
    if op == 'Clip': return g.node('Clip', [x, c[0], c[1]])
    if op == 'Sum3': return g.node('Sum', [x, c[0], c[1]])
    if op == 'Max3': return g.node('Max', [x, c[0], c[1]])
    if op == 'Min3': return g.node('Min', [c[0], x, c[1]])
    if op == 'SubRev': return g.node('Sub', [c[0], x])
    if op == 'DivRev': return g.node('Div', [c[0], x])
    if op == 'PowC': return g.node('Pow', [x, c[0]])
    if op == 'PowRev': return g.node('Pow', [c[0], x])
    if op == 'Where': return g.node('Where', [g.c(np.array(True)), x, c[0]])
    if op in ('Neg', 'Abs', 'Relu', 'Exp', 'Tanh', 'Sqrt', 'Reciprocal', 'Sigmoid', 'Floor', 'Sign'): return g.node(op, [x])
    return g.node(op, [x, c[0]])

# (a) every op kind, view kinds, on A, B or both
OPS = ['Mul', 'Div', 'Add', 'Sub', 'SubRev', 'DivRev', 'PowC', 'PowRev', 'Clip', 'Sum3', 'Max3', 'Min3', 'Where', 'Neg', 'Abs', 'Relu', 'Exp', 'Tanh', 'Reciprocal', 'Sigmoid', 'Floor', 'Sign', 'Max', 'Min', 'Mod', 'PRelu']
CV = [0.5, -1.25, 2.0, 0.0, float('nan'), float('inf')]
i = 0
for op in OPS:
    for view in ['slice_rows', 'transpose', 'expand', 'reshape', 'slice_negstep']:
        for crank in [0, 1, 2]:
            i += 1
            M, K, N = [(5, 7, 3), (64, 65, 33), (1, 256, 1), (256, 256, 256)][i % 4]
            g = G(R)
            cv = CV[i % len(CV)] if op not in ('PowRev', 'DivRev', 'Reciprocal', 'Mod', 'PowC') else [0.5, 2.0, -1.5][i % 3]
            if op == 'Mod': cv = 1.5
            cs = [g.c(np.array(cv, np.float32).reshape([1] * crank)), g.c(np.array(abs(cv) + 1 if cv == cv else 3.0, np.float32).reshape([1] * crank))]
            if op == 'Clip': cs = [g.c(np.array(-0.5, np.float32)), g.c(np.array(0.75, np.float32))]  # Clip needs rank-0
            if op == 'Mod': op_ = 'Mod'
            ins = []; feeds = {}
            if view == 'slice_rows':
                ins.append(vi('x', F, [K + 3, M])); feeds['x'] = rn(K + 3, M)
                v = g.node('Slice', ['x', g.c(np.array([1], np.int64)), g.c(np.array([K + 1], np.int64)), g.c(np.array([0], np.int64))])
                v = g.node('Transpose', [v], perm=[1, 0])
            elif view == 'transpose':
                ins.append(vi('x', F, [K, M])); feeds['x'] = rn(K, M)
                v = g.node('Transpose', ['x'], perm=[1, 0])
            elif view == 'expand':
                ins.append(vi('x', F, [1, K])); feeds['x'] = rn(1, K)
                v = g.node('Expand', ['x', g.c(np.array([M, K], np.int64))])
            elif view == 'reshape':
                ins.append(vi('x', F, [M * K])); feeds['x'] = rn(M * K)
                v = g.node('Reshape', ['x', g.c(np.array([M, K], np.int64))])
            else:
                ins.append(vi('x', F, [M, 2 * K + 1])); feeds['x'] = rn(M, 2 * K + 1)
                v = g.node('Slice', ['x', g.c(np.array([-1], np.int64)), g.c(np.array([-(2 ** 62)], np.int64)), g.c(np.array([1], np.int64)), g.c(np.array([-2], np.int64))])
            if op == 'PRelu':
                a = g.node('PRelu', [v, cs[0]])
            else:
                a = ewop(g, op, v, cs)
            side = i % 3
            ins.append(vi('w', F, [K, N])); feeds['w'] = rn(K, N)
            if side == 0:
                y = g.node('MatMul', [a, 'w'])
            elif side == 1:  # prologue on B: B = (view of x)^T
                ins[-1] = vi('w', F, [N, M]); feeds['w'] = rn(N, M)
                y = g.node('MatMul', ['w', g.node('Transpose', [a], perm=[1, 0])]) if False else g.node('MatMul', ['w', ewop(g, op, g.node('Transpose', [v], perm=[1, 0]), cs) if op != 'PRelu' else g.node('PRelu', [g.node('Transpose', [v], perm=[1, 0]), cs[0]])])
            else:  # same prologue value read as both operands
                y = g.node('MatMul', [a, g.node('Transpose', [a], perm=[1, 0])])
            if op in ('PowC',) and cv == 0.5: feeds['x'] = np.abs(feeds['x'])
            m = model(g.nodes, ins, [vi(y, F, None)], g.inits, opset=17)
            run_case(f'pro_{op}_{view}_r{crank}_s{side}_{M}x{K}x{N}_c{cv}', m, feeds, quiet=True)

# (b) rank-1 A with a [1,1] constant: the elementwise op changes the operand's rank
for K, N in [(7, 3), (256, 256), (65, 1)]:
    for crank in [2, 3]:
        g = G(R)
        a = g.node('Mul', ['x', g.c(np.full([1] * crank, 0.5, np.float32))])
        y = g.node('MatMul', [a, 'w'])
        m = model(g.nodes, [vi('x', F, [K]), vi('w', F, [K, N])], [vi(y, F, None)], g.inits, opset=17)
        run_case(f'rankup_A_K{K}_N{N}_c{crank}', m, dict(x=rn(K), w=rn(K, N)))
        g = G(R)
        b = g.node('Add', ['x', g.c(np.full([1] * crank, 0.5, np.float32))])
        y = g.node('MatMul', ['w', b])
        m = model(g.nodes, [vi('x', F, [K]), vi('w', F, [N, 1])], [vi(y, F, None)], g.inits, opset=17)
        run_case(f'rankup_B_K{K}_N{N}_c{crank}', m, dict(x=rn(K), w=rn(N, 1)))

# (c) Cast prologues into an fp32 matmul
for src_t, npd in [(TP.INT32, np.int32), (TP.DOUBLE, np.float64), (TP.FLOAT16, np.float16), (TP.BOOL, bool), (TP.INT64, np.int64), (TP.UINT8, np.uint8)]:
    for M, K, N in [(3, 5, 4), (256, 256, 256), (257, 256, 256)]:
        g = G(R)
        xv = g.node('Transpose', ['x'], perm=[1, 0])
        a = g.node('Cast', [xv], to=F)
        y = g.node('MatMul', [a, 'w'])
        if npd == bool: xa = R.random((K, M)) < .5
        elif np.dtype(npd).kind in 'iu': xa = R.integers(0 if npd == np.uint8 else -2 ** 20, 255 if npd == np.uint8 else 2 ** 20, (K, M)).astype(npd)
        else: xa = (rn(K, M) * 1000).astype(npd)
        if npd == np.float64: xa = xa + 1e-9
        m = model(g.nodes, [vi('x', src_t, [K, M]), vi('w', F, [K, N])], [vi(y, F, None)], g.inits, opset=17)
        run_case(f'castpro_{np.dtype(npd).name}_{M}x{K}x{N}', m, dict(x=xa, w=rn(K, N)))

# (d) scalar from a Constant node (value_float / value_floats / tensor) and from an overridable initializer
for how in ['value_float', 'value_floats', 'tensor', 'overridable']:
    for M, K, N in [(4, 6, 5), (256, 256, 257)]:
        g = G(R)
        ins = [vi('x', F, [M, K]), vi('w', F, [K, N])]
        feeds = dict(x=rn(M, K), w=rn(K, N))
        inits = []
        if how == 'value_float': g.nodes.append(oh.make_node('Constant', [], ['c'], value_float=0.3))
        elif how == 'value_floats': g.nodes.append(oh.make_node('Constant', [], ['c'], value_floats=[0.3]))
        elif how == 'tensor': g.nodes.append(oh.make_node('Constant', [], ['c'], value=nh.from_array(np.array([[0.3]], np.float32))))
        else:
            g.inits.append(nh.from_array(np.array(0.3, np.float32), 'c')); ins.append(vi('c', F, []))
            feeds['c'] = np.array(-7.0, np.float32)
        y = g.node('MatMul', [g.node('Mul', [g.node('Transpose', ['x'], perm=[0, 1]), 'c']), 'w'])
        m = model(g.nodes, ins, [vi(y, F, None)], g.inits, opset=17)
        run_case(f'constnode_{how}_{M}x{K}x{N}', m, feeds)

# (e) MAC count at the 2^24 boundary, with batch broadcast, prologues on both operands
for shp in [([2, 1, 64, 256], [1, 4, 256, 128]), ([2, 1, 64, 256], [1, 4, 256, 129]), ([4096, 64], [64, 64]), ([4097, 64], [64, 64]), ([1, 16777216 // 4096], [4096, 4096][:0] or [4096, 4096])]:
    sa, sb = shp
    if sa[-1] != sb[-2]: sb = [sa[-1], 4096]
    if np.prod(sa) * 4 > 12e6 or np.prod(sb) * 4 > 12e6: continue
    g = G(R)
    a = g.node('Mul', ['x', g.c(np.array(0.125, np.float32))])
    b = g.node('Sub', [g.node('Transpose', ['w'], perm=list(range(len(sb) - 2)) + [len(sb) - 1, len(sb) - 2]), g.c(np.array([1.0], np.float32))])
    y = g.node('MatMul', [a, b])
    wb = sb[:-2] + [sb[-1], sb[-2]]
    m = model(g.nodes, [vi('x', F, sa), vi('w', F, wb)], [vi(y, F, None)], g.inits, opset=17)
    run_case(f'boundary_{sa}_{sb}', m, dict(x=rn(*sa), w=rn(*wb)))
