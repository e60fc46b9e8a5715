import sys, numpy as np
sys.path.insert(0, '/tmp/rt14/gen')
from h import *
from hb import build, I
rng = np.random.default_rng(5)
only = sys.argv[1] if len(sys.argv) > 1 else ''
from onnx.reference import ReferenceEvaluator
def run(name, nodes, feeds, inits=(), opset=19, outs=None, exp=None, expect_error=False, odt=None):
    if only and only not in name: return
    ins = [vi(n, oh.np_dtype_to_tensor_dtype(x.dtype), list(x.shape)) for n, x in feeds.items()]
    m = model(nodes, ins, [vi(o, odt, None) for o in (outs or ['y'])], inits, opset=opset)
    f, res = check(name, m, feeds, exp=exp, quiet=True, expect_error=expect_error)
    if f:
        try: print('    onnx.reference:', [a.ravel()[:12].tolist() for a in ReferenceEvaluator(m).run(None, feeds)])
        except Exception as ex: print('    onnx.reference error', str(ex)[:100])
        for b in ['ref', 'cpu', 'vulkan']:
            rc, err, o = res[b]; print(f'    {b}:', err[:150] if rc else [a.ravel()[:12].tolist() for a in o])
x = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
for mode in ['constant', 'reflect', 'edge', 'wrap']:
    for pads in [[1, 2, 1, 2], [0, -1, 2, 0], [-1, 3, 0, -2], [2, 3, 2, 3], [3, 4, 3, 4], [0, 5, 0, 0], [-3, 0, 0, 0], [5, 9, 5, 9]]:
        for dt in [np.float32, np.int8, np.int64]:
            xx = x.astype(dt)
            run(f'Pad_{mode}_{pads}_{np.dtype(dt).name}'.replace(' ', ''), [oh.make_node('Pad', ['x', 'p'], ['y'], mode=mode), oh.make_node('Identity', ['y'], ['z'])], {'x': xx}, [I('p', pads)], outs=['z'], odt=oh.np_dtype_to_tensor_dtype(np.dtype(dt)))
    # axes input (opset 18+), negative axes
    for axes, pads in [([1], [2, 1]), ([-1], [1, 3]), ([0, -1], [1, 0, 0, 2]), ([-2], [-1, 2])]:
        run(f'Pad_axes_{mode}_{axes}_{pads}'.replace(' ', ''), [oh.make_node('Pad', ['x', 'p', 'cv', 'ax'], ['y'], mode=mode)], {'x': x}, [I('p', pads), nh.from_array(np.array(-1.5, np.float32), 'cv'), I('ax', axes)], odt=TP.FLOAT)
    # run-time pads
    run(f'Pad_rt_{mode}', [oh.make_node('Pad', ['x', 'p'], ['y'], mode=mode)], {'x': x, 'p': np.array([1, -1, 2, 3], np.int64)}, odt=TP.FLOAT)
    # 3-D NCHW with spatial only pads like exporters (reflect / replicate)
    x4 = rng.standard_normal((1, 2, 4, 5)).astype(np.float32)
    run(f'Pad_nchw_{mode}', [oh.make_node('Pad', ['x', 'p'], ['y0'], mode=mode), oh.make_node('Conv', ['y0', 'w'], ['y'])], {'x': x4}, [I('p', [0, 0, 2, 1, 0, 0, 1, 3]), nh.from_array(rng.standard_normal((3, 2, 3, 3)).astype(np.float32), 'w')], odt=TP.FLOAT)
