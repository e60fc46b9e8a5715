"""Attention-23 with softcap: qk_matmul_output (output 3) for modes 0..3 vs ORT / onnx.reference / spec text.
usage: python attn23_qkmode_softcap.py  -> writes /tmp/rt13/cases/qkmode{M}/ and prints comparisons"""
import sys, os, subprocess, numpy as np, onnx
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from h import *
from onnx.reference import ReferenceEvaluator
q = np.array([[[[4., 0.], [0., 4.]]]], np.float32); k = np.array([[[[4., 1.], [1., 4.]]]], np.float32); v = np.eye(2, dtype=np.float32)[None, None]
mask = np.array([[0., -1.], [-2., 0.]], np.float32)
for mode in range(4):
    n = oh.make_node('Attention', ['Q', 'K', 'V', 'M'], ['Y', '', '', 'QK'], softcap=5.0, qk_matmul_output_mode=mode)
    m = model([n], [vi('Q', TP.FLOAT, [1, 1, 2, 2]), vi('K', TP.FLOAT, [1, 1, 2, 2]), vi('V', TP.FLOAT, [1, 1, 2, 2]), vi('M', TP.FLOAT, [2, 2])],
              [vi('Y', TP.FLOAT, None), vi('QK', TP.FLOAT, None)], opset=23)
    feeds = dict(Q=q, K=k, V=v, M=mask)
    d = f'/tmp/rt13/cases/qkmode{mode}'; save(d, m, feeds)
    raw = (q @ k.transpose(0, 1, 3, 2)) / np.sqrt(2)   # default scale 1/sqrt(D)
    print(f'mode {mode}: raw QK {raw.ravel()}, softcapped {(5 * np.tanh(raw / 5)).ravel().round(4)}')
    print('   ORT      ', ort_run(m, feeds)[1].ravel().round(4))
    print('   onnx.ref ', ReferenceEvaluator(m).run(None, feeds)[1].ravel().round(4))
    for b in ['ref', 'cpu', 'vulkan']:
        rc, err, outs, _ = run_fusor(d, b)
        print(f'   fusor {b:6s}', outs[1].ravel().round(4) if rc == 0 else err)
