"""Compare fusor's bf16 outputs of the hf_* bf16 exports with torch's own bf16 and fp32 runs."""
import sys, os, glob, numpy as np, torch, onnx, warnings; warnings.filterwarnings('ignore')
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_hf
from onnx import numpy_helper as nh
want = sys.argv[1:]
for name, m, keys, args, outs in gen_hf.models():
    if want and name not in want: continue
    tag = f'{name}_bf16_ts17'
    if not os.path.exists(f'/tmp/rt10/out/{tag}/ref/output_0.pb'): continue
    m.eval(); m.config._attn_implementation = 'eager'
    m.half(); m.bfloat16()
    a2 = tuple(a.bfloat16() if a.is_floating_point() else a for a in args)
    with torch.no_grad():
        tb = gen_hf.Wrap(m, keys, outs).eval()(*a2)[0].float().numpy()
        m.float(); tf = gen_hf.Wrap(m, keys, outs).eval()(*[a.float() if a.is_floating_point() else a for a in a2])[0].numpy()
    fz = {b: nh.to_array(onnx.load_tensor(f'/tmp/rt10/out/{tag}/{b}/output_0.pb')).astype(np.float32) for b in ('ref', 'cpu', 'vulkan')}
    e = np.load(f'/tmp/rt10/models/{tag}/expected.npz')['arr_0'].astype(np.float32)
    print(tag, f'torch-bf16 vs torch-fp32 {np.abs(tb-tf).max():.3g}; expected.npz vs torch-fp32 {np.abs(e-tf).max():.3g};',
          ' '.join(f'{b} vs torch-bf16 {np.abs(v-tb).max():.3g} vs fp32 {np.abs(v-tf).max():.3g};' for b, v in fz.items()))
