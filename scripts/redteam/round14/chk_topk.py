import glob, os, numpy as np, onnx
from onnx import numpy_helper as nh
bad = 0; n = 0
for d in sorted(glob.glob('/tmp/rt14/runs/TopK_*_so0_*')):
    so1 = d.replace('_so0_', '_so1_')
    for b in ['ref', 'cpu', 'vulkan']:
        def rd(dd, k):
            t = onnx.TensorProto(); t.ParseFromString(open(f'{dd}/out_{b}/output_{k}.pb', 'rb').read()); return nh.to_array(t)
        try: v0, i0, v1, i1 = rd(d, 0), rd(d, 1), rd(so1, 0), rd(so1, 1)
        except Exception as e: print('miss', d, b, e); continue
        ax = -1 if d.endswith('ax-1') else 0
        n += 1
        s0 = sorted(map(tuple, np.moveaxis(i0, ax, -1).tolist())) if False else None
        a = np.sort(np.moveaxis(i0, ax, -1), -1); c = np.sort(np.moveaxis(i1, ax, -1), -1)
        if not np.array_equal(a, c): bad += 1; print('DIFF', d, b, np.moveaxis(i0, ax, -1).tolist(), np.moveaxis(i1, ax, -1).tolist())
print(n, 'checked', bad, 'bad')
