"""NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss with a target outside [0, C) (negative, not ignore_index)"""
import sys, numpy as np, onnx
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from h import *
lp = np.log(np.array([[0.1, 0.2, 0.7], [0.3, 0.3, 0.4]], np.float32))
for op in ['NegativeLogLikelihoodLoss', 'SoftmaxCrossEntropyLoss']:
    for t, w, ign in [([2, -1], False, None), ([2, -1], True, None), ([2, -3], False, 5), ([2, 3], False, None), ([2, -1], False, -1)]:
        ins = [vi('x', TP.FLOAT, [2, 3]), vi('t', TP.INT64, [2])]; feeds = dict(x=lp, t=np.array(t, np.int64)); names = ['x', 't']
        if w: ins.append(vi('w', TP.FLOAT, [3])); feeds['w'] = np.array([1, 2, 3], np.float32); names.append('w')
        kw = dict(reduction='none')
        if ign is not None: kw['ignore_index'] = ign
        m = model([oh.make_node(op, names, ['y'], **kw)], ins, [vi('y', TP.FLOAT, None)], opset=17)
        d = f'/tmp/rt13/cases/{op[:3]}_{t[1]}_{int(w)}_{ign}'; save(d, m, feeds)
        try: o = ort_run(m, feeds)[0].tolist()
        except Exception as ex: o = 'ORT error'
        res = [(b, (lambda r: r[2][0].tolist() if r[0] == 0 else r[1].splitlines()[-1][-110:])(run_fusor(d, b))) for b in ['ref', 'cpu', 'vulkan']]
        print(op[:3], 't', t, 'w', w, 'ign', ign, '| ORT', o); [print('    ', r) for r in res]
