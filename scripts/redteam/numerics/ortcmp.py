import sys, numpy as np, onnxruntime as ort
sys.argv = sys.argv
import os; exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'compare.py')).read().split('def main')[0])
for n in sys.argv[1:]:
    try:
        s = ort.InferenceSession(f'{MOD}/{n}/model.onnx', providers=['CPUExecutionProvider'])
        ins = inputs_of(n)
        res = s.run(None, {i.name: a for i, a in zip(s.get_inputs(), ins)})
    except Exception as e:
        print(n, 'ort: cannot run', str(e).splitlines()[0][:100]); continue
    ref = load(f'{OUT}/{n}/ref')
    for k, (r, t) in enumerate(zip(ref, res)):
        t = np.asarray(t)
        if t.dtype == np.float32 and r.dtype == np.float16: t = t.astype(np.float16)
        for pr in cmp(t, r, {2: 1, 4: 4, 8: 4, 1: 0}.get(r.dtype.itemsize, 0)): print(f'{n} ref-vs-ort out{k}: {pr}')
