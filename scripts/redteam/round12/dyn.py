"""dyn.py KIND SEED0 N: same random graphs, but every graph-input dim symbolic (dim_param) and output shapes cleared;
fusor cpu/vulkan on the dynamic model must match ORT on the static one."""
import sys, os, numpy as np, onnx, shutil
sys.path.insert(0, os.path.dirname(__file__))
import rgen, fuzz
kind, s0, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for seed in range(s0, s0 + n):
    s = rgen.gen(seed, kind); m, feeds = rgen.build(s, kind)
    try: onnx.checker.check_model(m, full_check=True)
    except Exception: continue
    exp, src = fuzz.oracle(m, feeds)
    if exp is None: continue
    for i in m.graph.input:
        for k, d in enumerate(i.type.tensor_type.shape.dim):
            d.ClearField('dim_value'); d.dim_param = f'{i.name}_d{k}'
    for o in m.graph.output:
        o.type.tensor_type.ClearField('shape')
    d = f'/tmp/rt12/fzdyn/{kind}_{seed}'
    fuzz.save(d, m, feeds, exp)
    bad = []
    for b in ('cpu', 'vulkan'):
        rc, err, outs, _ = fuzz.run_fusor(d, b)
        if rc:
            bad.append(f'{b} rc={rc} {err[-200:]!r}'); continue
        for k, (o, e) in enumerate(zip(outs, exp)):
            e = np.asarray(e)
            c = fuzz.cmp_exact(o, e) if kind in ('i32', 'i64') else fuzz.cmp_float(o, e, *fuzz.TOL[kind] if kind != 'f16' else (1e-2, 1e-2))
            if c: bad.append(f'{b} out{k} {c}')
    if bad: print(kind, seed, bad, flush=True)
    else: shutil.rmtree(d)
print('done')
