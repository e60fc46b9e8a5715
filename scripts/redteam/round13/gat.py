"""Gather with view-built indices.  usage: gat.py SEED0 N"""
import sys, numpy as np, onnx
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from h import *
from mm import G


def gen(seed, oob=False):
    r = np.random.default_rng(seed)
    g = G(r)
    rank = int(r.integers(1, 4))
    dshape = [int(r.choice([1, 2, 3, 5, 8, 17, 64])) for _ in range(rank)]
    ax = int(r.integers(-rank, rank))
    L = dshape[ax]
    idt, inp = (TP.INT32, np.int32) if r.random() < .5 else (TP.INT64, np.int64)
    ddt, dnp = [(TP.FLOAT, np.float32), (TP.INT64, np.int64), (TP.FLOAT16, np.float16), (TP.BOOL, bool), (TP.INT8, np.int8)][int(r.integers(5))]
    ishape_final = [int(r.choice([1, 2, 3, 4, 6])) for _ in range(int(r.integers(0, 3)))]
    cnt = int(np.prod(ishape_final)) if ishape_final else 1
    idx = r.integers(-L, L, cnt)
    if oob:
        j = int(r.integers(cnt)); idx[j] = int(r.choice([L, -L - 1, L + 100, 2 ** 31 - 1 if inp == np.int32 else 2 ** 40, -(2 ** 31) if inp == np.int32 else -(2 ** 62)]))
    view = str(r.choice(['reshape', 'flatten', 'unsqueeze', 'squeeze', 'plain', 'transpose']))
    src = str(r.choice(['input', 'const']))
    # src array shape
    if view == 'reshape' or not ishape_final:
        sshape = [cnt] if r.random() < .5 else [1, cnt]
    elif view == 'flatten':
        sshape = ishape_final
    elif view == 'unsqueeze':
        sshape = ishape_final
    elif view == 'squeeze':
        sshape = [1] + ishape_final
    elif view == 'transpose':
        sshape = ishape_final[::-1]
    else:
        sshape = ishape_final
    arr = idx.astype(inp)
    if view == 'transpose' and ishape_final:
        arr = arr.reshape(ishape_final).transpose(list(range(len(ishape_final)))[::-1]).copy()
    else:
        arr = arr.reshape(sshape)
    ins, feeds = [], {}
    if src == 'input':
        ins.append(vi('i', idt, list(arr.shape))); feeds['i'] = arr; x = 'i'
    else:
        x = g.c(arr, 'idx')
    if view == 'reshape' or not ishape_final:
        x = g.node('Reshape', [x, g.c(np.array(ishape_final, np.int64))])
    elif view == 'flatten':
        x = g.node('Flatten', [x], axis=int(r.integers(0, len(ishape_final) + 1)))
    elif view == 'unsqueeze':
        x = g.node('Unsqueeze', [x, g.c(np.array([int(r.integers(0, len(ishape_final) + 1))], np.int64))])
    elif view == 'squeeze':
        x = g.node('Squeeze', [x, g.c(np.array([0], np.int64))])
    elif view == 'transpose':
        x = g.node('Transpose', [x], perm=list(range(len(ishape_final)))[::-1])
    if r.random() < 0.3 and not oob:  # arithmetic on indices
        x = g.node('Sub', [x, g.c(np.array(0, inp))])
    ins.append(vi('d', ddt, dshape))
    if dnp == bool: feeds['d'] = r.random(dshape) < .5
    elif dnp in (np.float32, np.float16): feeds['d'] = r.standard_normal(dshape).astype(dnp)
    else: feeds['d'] = r.integers(-100, 100, dshape).astype(dnp)
    dsrc = 'd'
    if r.random() < 0.4 and ddt in (TP.FLOAT, TP.FLOAT16):
        dsrc = g.node('Mul', ['d', g.c(np.array(2, dnp))])
    y = g.node('Gather', [dsrc, x], axis=ax)
    outs = [y]
    if ddt in (TP.FLOAT, TP.FLOAT16) and r.random() < .5:
        outs = [g.node('Add', [y, g.c(np.array(1, dnp))])]
    if r.random() < .3 and ddt in (TP.FLOAT,):
        y2 = g.node('MatMul', [y, g.c(r.standard_normal([dshape[-1] if ax != -1 and ax != rank - 1 else (ishape_final[-1] if ishape_final else dshape[-2] if rank > 1 else 1), 3]).astype(np.float32))]) if False else None
    m = model(g.nodes, ins, [vi(o, ddt, None) for o in outs], g.inits, opset=int(r.choice([13, 17, 21])))
    return m, feeds, f'd{dshape} ax{ax} idx{ishape_final} {np.dtype(inp).name} {view} {src} oob={oob} vals={idx[:6].tolist()}'


if __name__ == '__main__':
    s0, n = int(sys.argv[1]), int(sys.argv[2])
    oob = len(sys.argv) > 3
    nf = 0
    for s in range(s0, s0 + n):
        m, feeds, desc = gen(s, oob)
        if oob:
            f, res = check(f'gat_oob_{s}', m, feeds, exp=[], quiet=True, expect_error=True)
        else:
            try: exp = ort_run(m, feeds)
            except Exception as ex: print('ORT fail', s, desc, str(ex)[:200]); continue
            f, _ = check(f'gat_{s}', m, feeds, exp=exp, tol=(0, 0), quiet=True)
        if f: print('   ', desc); nf += 1
    print('done', s0, n, 'faults', nf)
