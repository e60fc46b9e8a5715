"""int8 models from onnxruntime.quantization: quantize_dynamic and quantize_static (QDQ and
QOperator), per-tensor / per-channel, on the fp32 torch exports (bert, vit, audio, unet, lstm)."""
import os, sys, glob, shutil, numpy as np, onnx
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib10 import save_case, ROOT
from onnxruntime.quantization import quantize_dynamic, quantize_static, QuantFormat, QuantType, CalibrationDataReader
from onnx import numpy_helper as nh
srcs = sys.argv[1:] or ['bert_ts17', 'vit_ts17', 'vit_manual_ts17', 'audio_ts17', 'unet_bilinear_False_ts17', 'lstm_bi1_L2_init0_ts17',
                        'hf_bert_fp32_ts17', 'hf_vit_fp32_ts17', 'hf_convnext_fp32_ts17', 'gru_bi1_L2_init1_ts17', 'mha_ts17', 'hf_gpt2_fp32_ts17', 'sdpa_c1_None_ts17']
def feeds_of(d, m):
    inits = {i.name for i in m.graph.initializer}
    gin = [i.name for i in m.graph.input if i.name not in inits]
    f = {}
    for k, n in enumerate(gin):
        t = onnx.TensorProto(); t.ParseFromString(open(f'{d}/inputs/input_{k}.pb', 'rb').read()); f[n] = nh.to_array(t)
    return f
class Reader(CalibrationDataReader):
    def __init__(s, feeds):
        rng = np.random.default_rng(1); s.data = []
        for j in range(4):
            s.data.append({k: (v * rng.uniform(0.5, 1.5) if v.dtype.kind == 'f' else v) for k, v in feeds.items()})
        s.it = iter(s.data)
    def get_next(s): return next(s.it, None)
for src in srcs:
    d = os.path.join(ROOT, 'models', src); p = os.path.join(d, 'model.onnx')
    if not os.path.exists(p): print(src, 'missing'); continue
    m = onnx.load(p); feeds = feeds_of(d, m)
    tmp = f'/tmp/rt10/qtmp/{src}'; os.makedirs(tmp, exist_ok=True)
    variants = []
    for pc in (False, True):
        for wt in (QuantType.QInt8, QuantType.QUInt8):
            tag = f'q_{src}_dyn_{"pc" if pc else "pt"}_{wt.name}'
            try:
                quantize_dynamic(p, f'{tmp}/{tag}.onnx', per_channel=pc, weight_type=wt); variants.append(tag)
            except Exception as e: print(tag, 'QFAIL', str(e).splitlines()[0][:120])
    for fmt in (QuantFormat.QDQ, QuantFormat.QOperator):
        for pc in (False, True):
            for at, wt in ((QuantType.QUInt8, QuantType.QInt8), (QuantType.QInt8, QuantType.QInt8), (QuantType.QUInt16, QuantType.QUInt8) if fmt == QuantFormat.QDQ else (QuantType.QUInt8, QuantType.QUInt8)):
                tag = f'q_{src}_st_{fmt.name}_{"pc" if pc else "pt"}_{at.name}_{wt.name}'
                try:
                    quantize_static(p, f'{tmp}/{tag}.onnx', Reader(feeds), quant_format=fmt, per_channel=pc, activation_type=at, weight_type=wt)
                    variants.append(tag)
                except Exception as e: print(tag, 'QFAIL', str(e).splitlines()[0][:120])
    for tag in variants:
        save_case(tag, f'{tmp}/{tag}.onnx', feeds); print(tag, 'saved', flush=True)
