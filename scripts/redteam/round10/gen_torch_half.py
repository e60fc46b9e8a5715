"""fp16 / bf16 versions of the gen_torch architectures: model.half() / .bfloat16() before export
(TorchScript, opset 17); expected = onnxruntime on the fp32 export of the same rounded weights."""
import os, sys, warnings; warnings.filterwarnings('ignore')
import numpy as np, torch, onnx, ml_dtypes
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib10 import save_case, ROOT, ort_run
import gen_torch
want = ('vit', 'vit_manual', 'bert', 't5', 'unet_bilinear_False', 'unet_nearest_None', 'audio', 'sdpa_c1_None', 'sdpa_c0_float', 'einsum1', 'einsum6', 'mha', 'up_bicubic_False_2', 'lstm_bi1_L2_init1', 'gru_bi1_L2_init0')
for name, m, args, names in gen_torch.cases():
    if name not in want: continue
    m.eval()
    for dt, tdt in (('fp16', torch.float16), ('bf16', torch.bfloat16)):
        m.to(tdt); m.float()  # weights rounded to the low dtype, kept in fp32
        a32 = tuple(a.to(tdt).float() if a.is_floating_point() else a for a in args)
        d = f'/tmp/rt10/half_src/{name}_{dt}'; os.makedirs(d, exist_ok=True)
        try:
            with torch.no_grad():
                torch.onnx.export(m, a32, f'{d}/f32.onnx', input_names=names[:len(args)], dynamo=False, opset_version=17)
                m.to(tdt)
                torch.onnx.export(m, tuple(a.to(tdt) if a.is_floating_point() else a for a in a32), f'{d}/low.onnx', input_names=names[:len(args)], dynamo=False, opset_version=17)
                m.float()
        except Exception as e:
            m.float(); print(name, dt, 'EXPORT-FAIL', str(e).splitlines()[0][:120]); continue
        gin32 = [i.name for i in onnx.load(f'{d}/f32.onnx').graph.input]
        f32 = {n: a.numpy() for n, a in zip(names, a32) if n in gin32}
        exp = ort_run(f'{d}/f32.onnx', f32)
        npdt = np.float16 if dt == 'fp16' else ml_dtypes.bfloat16
        gin = [i.name for i in onnx.load(f'{d}/low.onnx').graph.input]
        feeds = {n: (v.astype(npdt) if v.dtype == np.float32 else v) for n, v in f32.items() if n in gin}
        exp = [e.astype(np.float32) for e in exp]
        save_case(f'half_{name}_{dt}', f'{d}/low.onnx', feeds, expected=exp); print(name, dt, 'saved', flush=True)
