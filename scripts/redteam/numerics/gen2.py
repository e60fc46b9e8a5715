# Round 3 of the red team (docs/redteam.md): ONNX models of special values per dtype, written to $NUMRT/models (default /tmp/numrt).
import sys, math, numpy as np
import os; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import *
from vals import *
ALL = dict(FD); ALL.update(ID); ALL['bool'] = np.bool_
def ispecials(dt):
    ii = np.iinfo(dt)
    v = [ii.min, ii.max, ii.min + 1, ii.max - 1, 0, 1, 2, 3, 7, ii.max // 2, ii.max // 2 + 1]
    if ii.min < 0: v += [-1, -2, -3, -7, ii.min // 2]
    return np.array(v, dtype=dt)
def ivec(dt, n=48):
    ii = np.iinfo(dt)
    lo = max(ii.min, -1000); hi = min(ii.max, 1000)
    r = rng.integers(lo, hi, n).astype(dt); r[r == 0] = 5
    return np.concatenate([ispecials(dt), r])
# D. casts: one model per source dtype, one output per target dtype
EXTRA = {'f16': [65519., 65520., 70000., 2049., 4097., 1 + 2**-11, 2**-25, 2**-25 * 1.5, 300.7, -300.7, 255.5, 256.5, -128.5, 127.5, 3e9, -3e9, 1e20, -0.7, 0.7],
         'bf16': [1 + 2**-8, 1 + 3 * 2**-8, 3e9, -3e9, 1e20, 2.**63, 2.**64, 2.**31, -2.**31, 2.**32, 255.5, -0.7, 65504, 65520, 1e5],
         'f32': [1 + 2**-11 + 2**-20, 1 + 2**-8 + 2**-20, 65519.99, 65520., 2.**31, -2.**31, 2.**31 - 128, 2.**32, 2.**63, -2.**63, 2.**64, 3e9, 1e20, 1e-8, 2**-24 * 0.5, 2**-24 * 0.5 + 2**-40, 255.5, 256.0, -129.0, 127.9, -0.7, 0.7, 4294967295.0, 3.4e38],
         'f64': [1 + 2**-11 + 2**-40, 1 + 2**-8 + 2**-40, 1 + 2**-24 + 2**-60, 2.**53 + 2, 2.**63, 2.**63 - 1024, -2.**63, 2.**64, 2.**64 - 2048, 1e300, 1e-300, 65519.999999, 65520., 2.**31 - 0.5, -2.**31 - 0.5, 2.**31, 4294967295.5, 3.4028235677973366e38, 3.4028235e38 * 1.0000001, 1e-46, 0.7, -0.7]}
for sn, sdt in ALL.items():
    if sn in FD: x = np.concatenate([fvec(sdt, 32), np.array(EXTRA[sn], dtype=np.float64).astype(sdt)])
    elif sn == 'bool': x = np.array([True, False, True, True, False])
    else:
        x = ivec(sdt)
        extra = {'i32': [16777217, 16777219, 2**24 + 2**16 + 1, 2**24 + 2**16, 65504, 65519, 65520, 65536, 2049, 2**31 - 1, -2**31 + 1],
                 'u32': [4294967295, 2**24 + 1, 2**24 + 2**16 + 1, 65520, 2**31],
                 'i64': [2**53 + 1, 2**53 + 3, -(2**53 + 1), 2**63 - 1, 2**62 + 2**38 + 1, 2**24 + 2**16 + 1, 2**40 + 2**29 + 1, 65520, 65519, 2**31, -2**31 - 1, 2**32 + 5],
                 'u64': [2**64 - 1, 2**63, 2**63 + 2**39 + 1, 2**53 + 1, 2**24 + 2**16 + 1, 65520, 2**32 + 7],
                 'i16': [2049, 2051, 4097, 32767], 'u16': [65535, 65520, 65519, 2049, 4097]}.get(sn, [])
        x = np.concatenate([x, np.array(extra, dtype=object).astype(sdt)]) if extra else x
    outs = []; nodes = []
    for tn, tdt in ALL.items():
        nodes.append(oh.make_node('Cast', ['x'], [f'y_{tn}'], to=tp(tdt))); outs.append((f'y_{tn}', tdt))
    case(f'cast_from_{sn}', nodes, [('x', x)], outs, opset=21)
    # the same casts fused behind an op (Identity-like Neg Neg keeps values) in a fused chain
    if sn in FD or sn in ('i32', 'i64', 'u8'):
        nodes2 = [oh.make_node('Abs', ['x'], ['ax']), oh.make_node('Sub', ['ax', 'x'], ['d']), oh.make_node('Sub', ['ax', 'd'], ['x2'])]  # x2 = x for finite (|x| - (|x| - x))
        nodes2 += [oh.make_node('Cast', ['x'], [f'y_{tn}'], to=tp(tdt)) for tn, tdt in ALL.items()]
# E. integer ops
for n_, dt in ID.items():
    s = ispecials(dt)
    a = np.concatenate([np.repeat(s, len(s)), ivec(dt)]); b = np.concatenate([np.tile(s, len(s)), ivec(dt)[::-1]])
    nodes = []; outs = []
    for op in ['Add', 'Sub', 'Mul', 'Div', 'Max', 'Min', 'Equal', 'Less', 'Greater']:
        nodes.append(oh.make_node(op, ['a', 'b'], [op])); outs.append((op, np.bool_ if op in ('Equal', 'Less', 'Greater') else dt))
    nodes.append(oh.make_node('Mod', ['a', 'b'], ['Mod0'], fmod=0)); outs.append(('Mod0', dt))
    nodes.append(oh.make_node('Mod', ['a', 'b'], ['Mod1'], fmod=1)); outs.append(('Mod1', dt))
    case(f'int_bin_{n_}', nodes, [('a', a), ('b', b)], outs)
    nodes = []; outs = []
    for op in ['Neg', 'Abs', 'Sign', 'Relu']:
        if op in ('Neg',) and n_.startswith('u'): continue
        nodes.append(oh.make_node(op, ['a'], [op])); outs.append((op, dt))
    case(f'int_un_{n_}', nodes, [('a', a)], outs)
    # pow with small exponents
    e = np.array(([0, 1, 2, 3, 5, 7, 8, 15, 31, 33, 63]*40)[:len(a)], dtype=dt)
    case(f'int_pow_{n_}', [oh.make_node('Pow', ['a', 'e'], ['y'])], [('a', a), ('e', e)], [('y', dt)])
    if n_.startswith('u'):
        sh = np.array(([0, 1, 3, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65]*40)[:len(a)], dtype=dt)
        case(f'int_shift_{n_}', [oh.make_node('BitShift', ['a', 'sh'], ['l'], direction='LEFT'), oh.make_node('BitShift', ['a', 'sh'], ['r'], direction='RIGHT')],
             [('a', a), ('sh', sh)], [('l', dt), ('r', dt)])
    # fused chain: (a*b + a) - b wraps
    case(f'int_chain_{n_}', [oh.make_node('Mul', ['a', 'b'], ['p']), oh.make_node('Add', ['p', 'a'], ['q']), oh.make_node('Sub', ['q', 'b'], ['y'])],
         [('a', a), ('b', b)], [('y', dt)])
    # Clip ints
    case(f'int_clip_{n_}', [oh.make_node('Clip', ['a', 'lo', 'hi'], ['y'])], [('a', a)], [('y', dt)],
         inits=[('lo', np.array(np.iinfo(dt).min + 1 if np.iinfo(dt).min < 0 else 1, dt)), ('hi', np.array(np.iinfo(dt).max - 1, dt))])
# integer reductions and cumsum
for n_, dt in ID.items():
    ii = np.iinfo(dt)
    x = np.concatenate([np.full(8, ii.max, dt), np.full(8, ii.min, dt), ivec(dt, 64)[:48]]).reshape(4, 16)
    nodes = []; outs = []
    for op in ['ReduceSum', 'ReduceMax', 'ReduceMin', 'ReduceProd', 'ReduceMean', 'ReduceL1', 'ReduceSumSquare']:
        nodes.append(oh.make_node(op, ['x', 'ax'], [op], keepdims=0)); outs.append((op, dt))
    for op in ['ArgMax', 'ArgMin']:
        nodes.append(oh.make_node(op, ['x'], [op], axis=1, keepdims=0)); outs.append((op, np.int64))
    nodes.append(oh.make_node('CumSum', ['x', 'cax'], ['CumSum'])); outs.append(('CumSum', dt))
    case(f'int_red_{n_}', nodes, [('x', x)], outs, inits=[('ax', np.array([1], np.int64)), ('cax', np.array(1, np.int64))])
# bool ops
a = np.array([True, False] * 8); b = np.array([True, True, False, False] * 4)
case('bool_ops', [oh.make_node('And', ['a', 'b'], ['and']), oh.make_node('Or', ['a', 'b'], ['or']), oh.make_node('Xor', ['a', 'b'], ['xor']), oh.make_node('Not', ['a'], ['not']),
                  oh.make_node('Equal', ['a', 'b'], ['eq']), oh.make_node('Where', ['a', 'b', 'a'], ['wh'])],
     [('a', a), ('b', b)], [('and', np.bool_), ('or', np.bool_), ('xor', np.bool_), ('not', np.bool_), ('eq', np.bool_), ('wh', np.bool_)])
