"""The Python package on the odd-output structure cases (run with build/venv/bin/python)."""
import os, sys, glob, numpy as np, fusor
os.environ.setdefault('VK_DRIVER_FILES', '/usr/share/vulkan/icd.d/lvp_icd.x86_64.json')
names = sys.argv[1:]
for n in names:
    d = f'/tmp/rt10/models/{n}'
    ins = sorted(glob.glob(f'{d}/inputs/input_*.pb'), key=lambda p: int(p.split('_')[-1][:-3]))
    exp = np.load(f'{d}/expected.npz') if os.path.exists(f'{d}/expected.npz') else None
    for b in ('ref', 'cpu', 'vulkan'):
        try:
            s = fusor.Session(f'{d}/model.onnx', backend=b)
            feed = {i.name: fusor.read_tensor(p) for i, p in zip(s.get_inputs(), ins)}
            outs = s.run(None, feed)
            onames = [o.name for o in s.get_outputs()]
            msg = 'ok'
            if exp is not None:
                if len(outs) != len(exp.files): msg = f'{len(outs)} outputs vs ort {len(exp.files)}'
                for k, o in enumerate(outs):
                    e = exp[f'arr_{k}']
                    if o.shape != e.shape or o.dtype != e.dtype or not np.allclose(o, e, rtol=1e-4, atol=1e-5, equal_nan=True): msg = f'out{k} {o.dtype}{o.shape} vs {e.dtype}{e.shape}'; break
            # named subset, reversed order, duplicates
            if len(onames) > 1:
                sub = s.run([onames[-1], onames[0]], feed)
                if not (np.array_equal(sub[0], outs[-1], equal_nan=True) and np.array_equal(sub[1], outs[0], equal_nan=True)): msg += ' SUBSET-MISMATCH'
            # run twice: outputs unchanged and not aliased
            again = s.run(None, feed)
            for a, o in zip(again, outs):
                if not np.array_equal(a, o, equal_nan=True): msg += ' RERUN-MISMATCH'
            if len(outs) > 1 and outs[0].size and outs[0].flags.writeable:
                outs[0].ravel()[0] += 1
                for k in range(1, len(outs)):
                    if outs[k] is outs[0] or (outs[k].shape == outs[0].shape and np.shares_memory(outs[k], outs[0])): msg += f' ALIASED(0,{k})'
            print(n, b, msg, [o.name for o in s.get_outputs()][:4], flush=True)
        except Exception as e:
            print(n, b, 'EXC', type(e).__name__, str(e)[:200], flush=True)
