"""ConvTranspose layers real models use, as one-node ONNX models (fp32 and fp16), and torch's
time for each (cuDNN, CUDA events, median of 200) when torch sees a GPU.
   python3 convt.py OUTDIR   ->  OUTDIR/<name>[_fp16]/model.onnx, OUTDIR/torch.txt"""
import os, sys
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper

LAYERS = {  # name: (x shape, w shape, attrs)
    "vocoder_k16s8": ([1, 512, 2000], [512, 256, 16], dict(strides=[8], pads=[4, 4])),
    "dcgan_k4s2p1": ([1, 512, 16, 16], [512, 256, 4, 4], dict(strides=[2, 2], pads=[1, 1, 1, 1])),
    "unet_k2s2": ([1, 256, 64, 64], [256, 128, 2, 2], dict(strides=[2, 2])),
    "decoder_k3s2p1op1": ([1, 128, 64, 64], [128, 64, 3, 3], dict(strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1])),
    "maskrcnn_k2s2_b32": ([32, 256, 14, 14], [256, 256, 2, 2], dict(strides=[2, 2])),
}


CONV1D = {  # name: (x shape, w shape, attrs): 1-D Conv layers of audio models (FUSOR_CONV1D_AS_2D A/B)
    "c1_wav2vec2_k3s2": ([1, 512, 3199], [512, 512, 3], dict(strides=[2])),
    "c1_whisper_k3s2p1": ([1, 384, 3000], [384, 384, 3], dict(strides=[2], pads=[1, 1])),
    "c1_hifigan_k7d3": ([1, 128, 8000], [128, 128, 7], dict(dilations=[3], pads=[9, 9])),
    "c1_w2v_pos_g16_k128": ([1, 768, 500], [768, 48, 128], dict(group=16, pads=[64, 64])),
    # 3-D Conv layers of video models (FUSOR_CONV3D_AS_2D A/B)
    "c3_r3d_k3p1": ([1, 64, 8, 28, 28], [64, 64, 3, 3, 3], dict(pads=[1, 1, 1, 1, 1, 1])),
    "c3_r3d_stem": ([1, 3, 16, 112, 112], [64, 3, 3, 7, 7], dict(strides=[1, 2, 2], pads=[1, 3, 3, 1, 3, 3])),
    "c3_r3d_l4_s2": ([1, 256, 4, 14, 14], [512, 256, 3, 3, 3], dict(strides=[2, 2, 2], pads=[1, 1, 1, 1, 1, 1])),
}


def save(out, name, xs, ws, attrs, dt, op="ConvTranspose"):
    rng = np.random.default_rng(0)
    npt = np.float16 if dt == TensorProto.FLOAT16 else np.float32
    W = numpy_helper.from_array((rng.standard_normal(ws) * 0.05).astype(npt), "W")
    B = numpy_helper.from_array(rng.standard_normal(ws[1] if op == "ConvTranspose" else ws[0]).astype(npt), "B")
    node = helper.make_node(op, ["x", "W", "B"], ["y"], **attrs)
    g = helper.make_graph([node], name, [helper.make_tensor_value_info("x", dt, xs)],
                          [helper.make_tensor_value_info("y", dt, None)], [W, B])
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(d, "model.onnx"))
    return W, B


def main():
    out = sys.argv[1]
    lines = []
    for name, (xs, ws, attrs) in CONV1D.items():
        save(out, name, xs, ws, attrs, TensorProto.FLOAT, "Conv")
    for name, (xs, ws, attrs) in LAYERS.items():
        save(out, name, xs, ws, attrs, TensorProto.FLOAT)
        save(out, name + "_fp16", xs, ws, attrs, TensorProto.FLOAT16)
        try:
            import torch
            if not torch.cuda.is_available():
                continue
            nd = len(xs) - 2
            conv = [None, torch.nn.ConvTranspose1d, torch.nn.ConvTranspose2d][nd]
            pads = attrs.get("pads", [0] * 2 * nd)[:nd]
            m = conv(ws[0], ws[1], ws[2:], stride=attrs["strides"], padding=pads,
                     output_padding=attrs.get("output_padding", [0] * nd)).cuda().eval()
            for dtype, tag in ((torch.float32, ""), (torch.float16, "_fp16")):
                mm = m.to(dtype)
                x = torch.randn(*xs, device="cuda", dtype=dtype)
                with torch.no_grad():
                    for _ in range(20):
                        mm(x)
                    ts = []
                    for _ in range(200):
                        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        a.record(); mm(x); b.record(); b.synchronize()
                        ts.append(a.elapsed_time(b) * 1000)
                lines.append(f"{name + tag:28s} torch eager (cuDNN) {sorted(ts)[len(ts) // 2]:10.1f} us")
        except Exception as e:  # torch absent or failing: the fusor rows still run
            lines.append(f"{name}: torch failed: {e}")
    open(os.path.join(out, "torch.txt"), "w").write("\n".join(lines) + "\n")


main()
