# Round 3 of the red team (docs/redteam.md): ONNX models of special values per dtype, written to $NUMRT/models (default /tmp/numrt).
import sys
import os; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vals import *
# A. unary float ops
UN = ['Sqrt', 'Exp', 'Log', 'Tanh', 'Sigmoid', 'Erf', 'Relu', 'Abs', 'Neg', 'Floor', 'Ceil', 'Round', 'Reciprocal',
      'Sign', 'Softplus', 'Sin', 'Cos', 'IsNaN', 'IsInf', 'Softsign', 'Selu', 'Elu', 'HardSigmoid', 'HardSwish',
      'Mish', 'Atan', 'Asinh', 'Cosh', 'Sinh', 'Tan', 'Acos', 'Asin', 'Atanh', 'Acosh']
for dn, dt in FD.items():
    x = fvec(dt)
    for op in UN:
        out_dt = np.bool_ if op in ('IsNaN', 'IsInf') else dt
        case(f'un_{op}_{dn}', [oh.make_node(op, ['x'], ['y'])], [('x', x)], [('y', out_dt)], opset=20)
    case(f'un_Gelu_{dn}', [oh.make_node('Gelu', ['x'], ['y'])], [('x', x)], [('y', dt)], opset=20)
    case(f'un_GeluTanh_{dn}', [oh.make_node('Gelu', ['x'], ['y'], approximate='tanh')], [('x', x)], [('y', dt)], opset=20)
    case(f'un_LeakyRelu_{dn}', [oh.make_node('LeakyRelu', ['x'], ['y'], alpha=0.1)], [('x', x)], [('y', dt)])
    # B. binary: all pairs of specials + random
    s = fspecials(dt)
    a = np.concatenate([np.repeat(s, len(s)), frand(dt, 64)]); b = np.concatenate([np.tile(s, len(s)), frand(dt, 64)])
    for op in ['Add', 'Sub', 'Mul', 'Div', 'Pow', 'Min', 'Max', 'Equal', 'Less', 'Greater', 'LessOrEqual']:
        out_dt = np.bool_ if op in ('Equal', 'Less', 'Greater', 'LessOrEqual') else dt
        case(f'bin_{op}_{dn}', [oh.make_node(op, ['a', 'b'], ['y'])], [('a', a), ('b', b)], [('y', out_dt)])
    case(f'bin_Modf_{dn}', [oh.make_node('Mod', ['a', 'b'], ['y'], fmod=1)], [('a', a), ('b', b)], [('y', dt)])
    case(f'bin_Clip_{dn}', [oh.make_node('Clip', ['x', 'lo', 'hi'], ['y'])], [('x', x)], [('y', dt)],
         inits=[('lo', np.array(-1.5, dt)), ('hi', np.array(2.5, dt))])
    case(f'bin_ClipInv_{dn}', [oh.make_node('Clip', ['x', 'lo', 'hi'], ['y'])], [('x', x)], [('y', dt)],
         inits=[('lo', np.array(2, dt)), ('hi', np.array(-1, dt))])
    c = (rng.uniform(size=a.shape) > 0.5)
    case(f'bin_Where_{dn}', [oh.make_node('Where', ['c', 'a', 'b'], ['y'])], [('c', c), ('a', a), ('b', b)], [('y', dt)])

# C. fused chains in storage dtypes (rounding at op boundaries)
for dn in ['f16', 'bf16']:
    dt = FD[dn]
    x = frand(dt, 256, 0.5, 2); y = frand(dt, 256, 0.5, 2)
    z = (-(x.astype(np.float32) * y.astype(np.float32)).astype(dt)).astype(dt)  # cancels the rounded product
    case(f'chain_fma_{dn}', [oh.make_node('Mul', ['x', 'y'], ['p']), oh.make_node('Add', ['p', 'z'], ['r'])],
         [('x', x), ('y', y), ('z', z)], [('r', dt)])
    big = np.array([300, 256, 255, -300, 1000, 2**8] * 4, dtype=np.float64)
    if dn == 'bf16': big = big * 2.0**60
    big = big.astype(dt)
    case(f'chain_ovf_{dn}', [oh.make_node('Mul', ['x', 'x'], ['p']), oh.make_node('Div', ['p', 'k'], ['r'])],
         [('x', big)], [('r', dt)], inits=[('k', np.array(1000 if dn == 'f16' else 2.0**100, dt))])
    case(f'chain_sqrtsq_{dn}', [oh.make_node('Mul', ['x', 'x'], ['p']), oh.make_node('Sqrt', ['p'], ['r'])],
         [('x', big)], [('r', dt)])
    case(f'chain_exp_{dn}', [oh.make_node('Exp', ['x'], ['p']), oh.make_node('Mul', ['p', 'y'], ['q']), oh.make_node('Sub', ['q', 'y'], ['r'])],
         [('x', x), ('y', y)], [('r', dt)])
    # Add of many: x + y + z + w in sequence: rounding each
    w = frand(dt, 256, -1e-2, 1e-2)
    case(f'chain_adds_{dn}', [oh.make_node('Add', ['x', 'w'], ['p']), oh.make_node('Add', ['p', 'w'], ['q']), oh.make_node('Sub', ['q', 'x'], ['r'])],
         [('x', x), ('w', w)], [('r', dt)])
    # cast chain: f32 -> dt -> f32 in a fused kernel
    xf = rng.normal(size=256).astype(np.float32) * 1000
    case(f'chain_castrt_{dn}', [oh.make_node('Cast', ['x'], ['h'], to=tp(dt)), oh.make_node('Cast', ['h'], ['f'], to=TP.FLOAT), oh.make_node('Sub', ['x', 'f'], ['r'])],
         [('x', xf)], [('r', np.float32)])
    # f32 chain through a Cast to the half and back with overflow
    case(f'chain_castovf_{dn}', [oh.make_node('Mul', ['x', 'x'], ['p']), oh.make_node('Cast', ['p'], ['h'], to=tp(dt)), oh.make_node('Cast', ['h'], ['f'], to=TP.FLOAT), oh.make_node('Div', ['f', 'x'], ['r'])],
         [('x', big.astype(np.float32))], [('r', np.float32)])
