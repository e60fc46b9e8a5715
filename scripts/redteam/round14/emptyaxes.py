# kind: decompositions whose reduce-axis list is empty (rank-2 input: no spatial axes) reduce EVERY axis
import sys, numpy as np
sys.path.insert(0, '/tmp/rt14/gen')
from h import *
from hb import build, I
rng = np.random.default_rng(7)
x = (rng.standard_normal((3, 2)) * 3 + 2).astype(np.float32)
C = 2
cases = {
  'InstanceNorm_rank2': ([oh.make_node('InstanceNormalization', ['x', 's', 'b'], ['y'], epsilon=1e-3)],
                         [nh.from_array(np.array([2.0, -0.5], np.float32), 's'), nh.from_array(np.array([1.5, 0.25], np.float32), 'b')],
                         np.tile(np.array([1.5, 0.25], np.float32), (3, 1))),
  'GlobalAveragePool_rank2': ([oh.make_node('GlobalAveragePool', ['x'], ['y'])], [], x),
  'GlobalMaxPool_rank2': ([oh.make_node('GlobalMaxPool', ['x'], ['y'])], [], x),
  'GlobalLpPool2_rank2': ([oh.make_node('GlobalLpPool', ['x'], ['y'], p=2)], [], np.abs(x)),
  'GlobalLpPool1_rank2': ([oh.make_node('GlobalLpPool', ['x'], ['y'], p=1)], [], np.abs(x)),
  'GlobalLpPool3_rank2': ([oh.make_node('GlobalLpPool', ['x'], ['y'], p=3)], [], np.abs(x)),
}
only = sys.argv[1] if len(sys.argv) > 1 else ''
for name, (nodes, inits, exp) in cases.items():
    if only and only not in name: continue
    m = build(name, nodes, {'x': x}, inits, opset=18 if 'Lp' not in name else 18)
    d = f'/tmp/rt14/faults/F1/{name}'
    os.makedirs(d, exist_ok=True)
    f, res = check(name, m, {'x': x}, exp=[exp], tol=(1e-5, 1e-6))
    # keep model + inputs
    save(d, m, {'x': x})
    try: print('   ort:', [o.tolist() for o in ort_run(m, {'x': x})])
    except Exception as ex: print('   ort error:', str(ex).split('Status Message:')[-1][:120].strip())
    for b in ['ref', 'cpu', 'vulkan']:
        rc, err, outs = res[b]
        print(f'   {b}: rc={rc}', err[:150] if rc else [o.tolist() for o in outs])
