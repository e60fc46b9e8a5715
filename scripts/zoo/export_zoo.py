#!/usr/bin/env python3
"""Export a zoo of real architectures (random weights, tiny configs) to ONNX backend-test cases.

Each case is OUT/<model>_<exporter><opset>/model.onnx + test_data_set_0/{input,output}_*.pb,
the outputs being onnxruntime's on seeded random inputs, so that
`fusor conform OUT --backend ref --backend cpu --backend vulkan` checks every one.

No hub downloads: torchvision models are built with weights=None, transformers models from
configs. Usage: export_zoo.py --out /work/zoo [--only NAME,...] [--exporter ts,dynamo]
"""
import argparse
import os
import re
import shutil
import sys
import traceback

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnx import numpy_helper

torch.manual_seed(0)


class Wrap(torch.nn.Module):
    """Calls a model with keyword inputs and returns plain tensors (first `keep` outputs)."""

    def __init__(self, m, names, keep=1):
        super().__init__()
        self.m, self.names, self.keep = m, names, keep

    def forward(self, *args):
        out = self.m(**dict(zip(self.names, args)))
        if isinstance(out, torch.Tensor):
            return out
        if hasattr(out, "to_tuple"):
            out = out.to_tuple()
        elif isinstance(out, dict):
            out = list(out.values())
        out = [o for o in out if isinstance(o, torch.Tensor)]
        return tuple(out[: self.keep]) if self.keep > 1 else out[0]


def image(b=1, s=64):
    return torch.randn(b, 3, s, s)


def tv(name, s=64, **kw):
    import torchvision

    def build():
        m = getattr(torchvision.models, name)(weights=None, **kw)
        return m, (image(1, s),), ["input"], {"input": {0: "batch"}}

    return build


def tv_vit():
    from torchvision.models.vision_transformer import VisionTransformer

    m = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64, num_classes=10)
    return m, (image(1, 32),), ["input"], {"input": {0: "batch"}}


def tv_swin():
    from torchvision.models.swin_transformer import SwinTransformer

    m = SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[1, 1, 2, 1], num_heads=[1, 2, 2, 4],
                        window_size=[4, 4], num_classes=10)
    return m, (image(1, 64),), ["input"], {"input": {0: "batch"}}


def tv_convnext():
    from torchvision.models.convnext import ConvNeXt, CNBlockConfig

    cfg = [CNBlockConfig(16, 32, 1), CNBlockConfig(32, 64, 1), CNBlockConfig(64, 128, 2), CNBlockConfig(128, None, 1)]
    return ConvNeXt(cfg, num_classes=10), (image(1, 64),), ["input"], {"input": {0: "batch"}}


V = 101  # vocab
TINY = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, vocab_size=V,
            max_position_embeddings=64)


def text_inputs(b=2, t=8, token_type=False, mask=True):
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(3, V, (b, t), generator=g)
    args, names = [ids], ["input_ids"]
    if mask:
        m = torch.ones(b, t, dtype=torch.int64)
        m[1, -2:] = 0  # padded tail in the second row exercises the mask path
        args.append(m)
        names.append("attention_mask")
    if token_type:
        tt = torch.zeros(b, t, dtype=torch.int64)
        tt[:, t // 2:] = 1
        args.append(tt)
        names.append("token_type_ids")
    return args, names


def hf(cls_name, cfg_name, cfg_kw, token_type=False, mask=True, keep=1):
    def build():
        import transformers

        cfg = getattr(transformers, cfg_name)(**cfg_kw)
        if EAGER:
            cfg._attn_implementation = "eager"
        m = getattr(transformers, cls_name)(cfg)
        args, names = text_inputs(token_type=token_type, mask=mask)
        dyn = {n: {0: "batch", 1: "seq"} for n in names}
        return Wrap(m, names, keep), tuple(args), names, dyn

    return build


def hf_vit():
    import transformers

    cfg = transformers.ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                                 image_size=32, patch_size=8)
    return Wrap(transformers.ViTModel(cfg), ["pixel_values"], 2), (image(1, 32),), ["pixel_values"], {"pixel_values": {0: "batch"}}


def hf_whisper():
    import transformers

    cfg = transformers.WhisperConfig(d_model=32, encoder_layers=2, encoder_attention_heads=2, decoder_layers=1,
                                     decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, num_mel_bins=16,
                                     max_source_positions=16, max_target_positions=16, vocab_size=V,
                                     pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)
    if EAGER:
        cfg._attn_implementation = "eager"
    enc = transformers.WhisperModel(cfg).get_encoder()
    x = torch.randn(1, 16, 32)
    return Wrap(enc, ["input_features"]), (x,), ["input_features"], {"input_features": {0: "batch"}}


def hf_wav2vec2():
    import transformers

    cfg = transformers.Wav2Vec2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                                      conv_dim=(16, 16), conv_kernel=(10, 3), conv_stride=(5, 2),
                                      num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4, vocab_size=V)
    x = torch.randn(1, 400)
    return Wrap(transformers.Wav2Vec2Model(cfg), ["input_values"]), (x,), ["input_values"], {"input_values": {0: "batch", 1: "time"}}


def hf_clip_text():
    import transformers

    cfg = transformers.CLIPTextConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                                      vocab_size=V, max_position_embeddings=16)
    args, names = text_inputs()
    return Wrap(transformers.CLIPTextModel(cfg), names, 2), tuple(args), names, {n: {0: "batch", 1: "seq"} for n in names}


def hf_bart():
    import transformers

    cfg = transformers.BartConfig(d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                                  decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, vocab_size=V,
                                  max_position_embeddings=64, use_cache=False)
    args, names = text_inputs()
    return Wrap(transformers.BartModel(cfg), names), tuple(args), names, {n: {0: "batch", 1: "seq"} for n in names}


def hf_t5():
    import transformers

    cfg = transformers.T5Config(d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2, vocab_size=V)
    if EAGER:
        cfg._attn_implementation = "eager"
    args, names = text_inputs()
    return Wrap(transformers.T5EncoderModel(cfg), names), tuple(args), names, {n: {0: "batch", 1: "seq"} for n in names}


def tv_maxvit():
    from torchvision.models.maxvit import MaxVit

    m = MaxVit(input_size=(64, 64), stem_channels=16, partition_size=2, block_channels=[16, 32], block_layers=[1, 1],
               head_dim=8, stochastic_depth_prob=0.0, num_classes=10)
    return m, (image(1, 64),), ["input"], {"input": {0: "batch"}}


def tv_seg(name):
    def build():
        import torchvision

        m = getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None, num_classes=5)
        return Wrap(m, ["x"]), (image(1, 64),), ["input"], {"input": {0: "batch"}}

    return build


def tv_video():
    import torchvision

    m = torchvision.models.video.r3d_18(weights=None, num_classes=10)
    return m, (torch.randn(1, 3, 4, 32, 32),), ["input"], {"input": {0: "batch"}}


def hf_image(cls_name, cfg_name, cfg_kw, s=32, keep=1):
    def build():
        import transformers

        m = getattr(transformers, cls_name)(getattr(transformers, cfg_name)(**cfg_kw))
        return Wrap(m, ["pixel_values"], keep), (image(1, s),), ["pixel_values"], {"pixel_values": {0: "batch"}}

    return build


def hf_audio(cls_name, cfg_name, cfg_kw):
    def build():
        import transformers

        m = getattr(transformers, cls_name)(getattr(transformers, cfg_name)(**cfg_kw))
        return Wrap(m, ["input_values"]), (torch.randn(1, 400),), ["input_values"], {"input_values": {0: "batch", 1: "time"}}

    return build


DEC = dict(use_cache=False)
IMG = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, image_size=32, patch_size=8)

MODELS = {
    "resnet18": tv("resnet18"),
    "mobilenet_v2": tv("mobilenet_v2"),
    "mobilenet_v3_small": tv("mobilenet_v3_small"),
    "efficientnet_b0": tv("efficientnet_b0"),
    "regnet_y_400mf": tv("regnet_y_400mf"),
    "convnext_small_cfg": tv_convnext,
    "densenet121": tv("densenet121"),
    "googlenet": tv("googlenet", aux_logits=False, init_weights=True),
    "shufflenet_v2_x0_5": tv("shufflenet_v2_x0_5"),
    "mnasnet0_5": tv("mnasnet0_5"),
    "squeezenet1_1": tv("squeezenet1_1"),
    "vit_tiny_tv": tv_vit,
    "swin_tiny_cfg": tv_swin,
    "bert": hf("BertModel", "BertConfig", TINY, token_type=True),
    "distilbert": hf("DistilBertModel", "DistilBertConfig",
                     dict(dim=32, n_layers=2, n_heads=2, hidden_dim=64, vocab_size=V, max_position_embeddings=64)),
    "roberta": hf("RobertaModel", "RobertaConfig", TINY),
    "albert": hf("AlbertModel", "AlbertConfig", dict(TINY, embedding_size=16)),
    "gpt2": hf("GPT2Model", "GPT2Config", dict(n_embd=32, n_layer=2, n_head=2, vocab_size=V, n_positions=64, **DEC)),
    "gpt_neo": hf("GPTNeoModel", "GPTNeoConfig",
                  dict(hidden_size=32, num_layers=2, num_heads=2, attention_types=[[["global", "local"], 1]],
                       window_size=4, vocab_size=V, max_position_embeddings=64, **DEC)),
    "llama": hf("LlamaModel", "LlamaConfig", dict(TINY, num_key_value_heads=1, **DEC)),
    "qwen2": hf("Qwen2Model", "Qwen2Config", dict(TINY, num_key_value_heads=1, **DEC)),
    "t5_encoder": hf_t5,
    "bart": hf_bart,
    "vit_hf": hf_vit,
    "clip_text": hf_clip_text,
    "whisper_encoder": hf_whisper,
    "wav2vec2": hf_wav2vec2,
    # The wider net: more torchvision families and HF architectures.
    "inception_v3": tv("inception_v3", s=96, aux_logits=False, init_weights=True),
    "mobilenet_v3_large": tv("mobilenet_v3_large"),
    "resnext50_32x4d": tv("resnext50_32x4d"),
    "efficientnet_v2_s": tv("efficientnet_v2_s"),
    "regnet_x_400mf": tv("regnet_x_400mf"),
    "maxvit_cfg": tv_maxvit,
    "deeplabv3_mobilenet": tv_seg("deeplabv3_mobilenet_v3_large"),
    "lraspp_mobilenet": tv_seg("lraspp_mobilenet_v3_large"),
    "fcn_resnet50": tv_seg("fcn_resnet50"),
    "r3d_18": tv_video,
    "electra": hf("ElectraModel", "ElectraConfig", dict(TINY, embedding_size=16), token_type=True),
    "mobilebert": hf("MobileBertModel", "MobileBertConfig",
                     dict(TINY, embedding_size=16, intra_bottleneck_size=16, true_hidden_size=16, num_feedforward_networks=2)),
    "deberta_v2": hf("DebertaV2Model", "DebertaV2Config", dict(TINY, relative_attention=True, position_buckets=8,
                                                               pos_att_type=["p2c", "c2p"])),
    "mpnet": hf("MPNetModel", "MPNetConfig", TINY),
    "xlm_roberta": hf("XLMRobertaModel", "XLMRobertaConfig", TINY),
    "convbert": hf("ConvBertModel", "ConvBertConfig", dict(TINY, embedding_size=32)),
    "opt": hf("OPTModel", "OPTConfig", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, ffn_dim=64,
                                            vocab_size=V, max_position_embeddings=64, word_embed_proj_dim=32, **DEC)),
    "bloom": hf("BloomModel", "BloomConfig", dict(hidden_size=32, n_layer=2, n_head=2, vocab_size=V, **DEC)),
    "falcon": hf("FalconModel", "FalconConfig", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                                     vocab_size=V, **DEC)),
    "phi": hf("PhiModel", "PhiConfig", dict(TINY, **DEC)),
    "gptj": hf("GPTJModel", "GPTJConfig", dict(n_embd=32, n_layer=2, n_head=2, rotary_dim=8, vocab_size=V, n_positions=64, **DEC)),
    "mistral": hf("MistralModel", "MistralConfig", dict(TINY, num_key_value_heads=1, sliding_window=4, **DEC)),
    "gemma": hf("GemmaModel", "GemmaConfig", dict(TINY, num_key_value_heads=1, head_dim=16, **DEC)),
    "phi3": hf("Phi3Model", "Phi3Config", dict(TINY, num_key_value_heads=1, pad_token_id=0, **DEC)),
    "gpt_bigcode": hf("GPTBigCodeModel", "GPTBigCodeConfig", dict(n_embd=32, n_layer=2, n_head=2, vocab_size=V, n_positions=64, **DEC)),
    "codegen": hf("CodeGenModel", "CodeGenConfig", dict(n_embd=32, n_layer=2, n_head=2, rotary_dim=8, vocab_size=V, n_positions=64, **DEC)),
    "deit": hf_image("DeiTModel", "DeiTConfig", IMG),
    "beit": hf_image("BeitModel", "BeitConfig", dict(IMG, use_relative_position_bias=True)),
    "swin_hf": hf_image("SwinModel", "SwinConfig", dict(embed_dim=16, depths=[1, 1], num_heads=[1, 2], window_size=4,
                                                        image_size=32, patch_size=2)),
    "convnext_hf": hf_image("ConvNextModel", "ConvNextConfig", dict(hidden_sizes=[8, 16], depths=[1, 1], num_stages=2), s=64),
    "resnet_hf": hf_image("ResNetModel", "ResNetConfig", dict(hidden_sizes=[8, 16], depths=[1, 1], embedding_size=8), s=64),
    "segformer": hf_image("SegformerModel", "SegformerConfig", dict(num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1],
                                                                  hidden_sizes=[8, 16], num_attention_heads=[1, 2],
                                                                  patch_sizes=[7, 3], strides=[4, 2]), s=64),
    "mobilevit": hf_image("MobileViTModel", "MobileViTConfig", dict(hidden_sizes=[16, 24, 32], neck_hidden_sizes=[8, 8, 16, 16, 24, 32, 64],
                                                                     image_size=64), s=64),
    "hubert": hf_audio("HubertModel", "HubertConfig", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                                          intermediate_size=64, conv_dim=(16, 16), conv_kernel=(10, 3),
                                                          conv_stride=(5, 2), num_conv_pos_embeddings=16,
                                                          num_conv_pos_embedding_groups=4)),
}


def randomize(m):
    """Gives norm statistics, affine params and zero-initialised biases seeded random values, so
    that outputs are O(1): torchvision's init leaves some CNNs' logits near 1e-15, where the
    conformance tolerance (atol 1e-7) would pass anything."""
    g = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, (torch.nn.modules.batchnorm._BatchNorm, torch.nn.GroupNorm, torch.nn.LayerNorm)):
                if getattr(mod, "weight", None) is not None:
                    mod.weight.copy_(torch.rand(mod.weight.shape, generator=g) + 0.5)
                    mod.bias.copy_(torch.randn(mod.bias.shape, generator=g) * 0.2)
                if getattr(mod, "running_mean", None) is not None:
                    mod.running_mean.copy_(torch.randn(mod.running_mean.shape, generator=g) * 0.2)
                    mod.running_var.copy_(torch.rand(mod.running_var.shape, generator=g) + 0.5)
            elif isinstance(mod, (torch.nn.Linear, torch.nn.modules.conv._ConvNd)):
                w = mod.weight
                # Unit-variance activations: weights at 1/sqrt(fan_in), small random biases.
                w.copy_(torch.randn(w.shape, generator=g) / (w[0].numel() ** 0.5))
                if mod.bias is not None:
                    mod.bias.copy_(torch.randn(mod.bias.shape, generator=g) * 0.1)


def save_set(sess, args, d):
    os.makedirs(d, exist_ok=True)
    feeds = {inp.name: a.numpy() for inp, a in zip(sess.get_inputs(), args)}
    outs = sess.run(None, feeds)
    for i, inp in enumerate(sess.get_inputs()):
        onnx.save_tensor(numpy_helper.from_array(feeds[inp.name], inp.name), os.path.join(d, f"input_{i}.pb"))
    for i, (o, v) in enumerate(zip(sess.get_outputs(), outs)):
        onnx.save_tensor(numpy_helper.from_array(v, o.name), os.path.join(d, f"output_{i}.pb"))
    return outs


def other_sizes(args, names, dyn):
    """The inputs at batch + 1 and, for sequence / time axes, three quarters of the length."""
    g = torch.Generator().manual_seed(3)
    out = []
    for a, n in zip(args, names):
        axes = dyn.get(n, {})
        if 1 in axes:
            a = a.narrow(1, 0, max(1, a.shape[1] * 3 // 4))
        if 0 in axes:
            extra = a[:1].clone()
            if extra.is_floating_point():
                extra = extra + torch.randn(extra.shape, generator=g, dtype=extra.dtype)
            a = torch.cat([a, extra])
        out.append(a)
    return tuple(out)


def case_name(name, exporter, opset, half, eager, dyn_dynamo=False):
    return f"{name}_{exporter}{opset}" + ("_fp16" if half else "") + ("_eager" if eager else "") + ("_dyn" if dyn_dynamo else "")


EAGER = False  # HF attention as explicit MatMul/Softmax (opset < 14 has no SDPA symbolic)


def export(name, build, exporter, out_root, opset, dynamic, half=False, eager=False):
    global EAGER
    EAGER = eager or opset < 14
    torch.manual_seed(0)
    m, args, names, dyn = build()
    m.eval()
    randomize(m)
    if half:
        m = m.half()
        args = tuple(a.half() if a.is_floating_point() else a for a in args)
    case = os.path.join(out_root, case_name(name, exporter, opset, half, eager, dynamic and exporter == "dynamo"))
    os.makedirs(os.path.join(case, "test_data_set_0"), exist_ok=True)
    path = os.path.join(case, "model.onnx")
    # Grad stays on: torchvision's MultiheadAttention takes its fused fast path (no ONNX
    # symbolic) in no-grad eval mode, which is not what a user's export meets.
    if True:
        if exporter == "ts":
            torch.onnx.export(m, args, path, input_names=names, opset_version=opset, dynamo=False,
                              dynamic_axes=dyn if dynamic else None)
        else:
            # dynamic_shapes, not dynamic_axes: the wrappers take *args, which the exporter's
            # dynamic_axes translation cannot map.
            shapes = tuple({ax: torch.export.Dim.DYNAMIC for ax in dyn.get(n, {})} for n in names) if dynamic else None
            prog = torch.onnx.export(m, args, input_names=names, opset_version=opset, dynamo=True,
                                     dynamic_shapes=({"args": shapes} if shapes and isinstance(m, Wrap) else shapes))
            prog.save(path)
    model = onnx.load(path)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    outs = save_set(sess, args, os.path.join(case, "test_data_set_0"))
    if dynamic:
        # A second set at other dynamic sizes (batch + 1, shorter sequence): the shapes a user
        # feeds after exporting once.
        save_set(sess, other_sizes(args, names, dyn), os.path.join(case, "test_data_set_1"))
    # The fp64 answer of the same module (ref64/), to judge which side of a tolerance miss is off.
    try:
        m64 = m.double()
        with torch.no_grad():
            r = m64(*[a.double() if a.is_floating_point() else a for a in args])
        r = [r] if isinstance(r, torch.Tensor) else list(r)
        os.makedirs(os.path.join(case, "ref64"), exist_ok=True)
        for i, v in enumerate(r):
            onnx.save_tensor(numpy_helper.from_array(v.numpy()), os.path.join(case, "ref64", f"output_{i}.pb"))
    except Exception as e:  # noqa: BLE001 - fp64 is a diagnostic only
        print(f"note {name}: no fp64 reference ({type(e).__name__})")
    ops = sorted({n.op_type for n in model.graph.node})
    ops.append("| out max %.2g" % max(float(np.abs(o.astype(np.float64)).max()) for o in outs if o.dtype.kind == "f"))
    return case, ops


# Extra variants beyond the default ts17 + dynamo18: older opsets (attribute-form Squeeze /
# ReduceMean / Split, Clip with inputs), the newest opsets, and fp16 weights.
EXTRA = {
    "resnet18": ["ts11", "ts17h", "dynamo18d"],
    "mobilenet_v2": ["ts11", "ts13"],
    "shufflenet_v2_x0_5": ["ts11"],
    "efficientnet_b0": ["dynamo20"],
    "bert": ["ts11", "ts14", "ts17e", "dynamo20", "dynamo18d"],
    "gpt2": ["ts13", "ts17e", "dynamo23", "dynamo18d"],
    "llama": ["ts14", "ts17e", "dynamo23", "ts17h", "dynamo18d"],
    "t5_encoder": ["ts13"],
    "vit_hf": ["dynamo23", "dynamo18d"],
    "whisper_encoder": ["ts13"],
    "convnext_small_cfg": ["dynamo23"],
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/work/zoo")
    ap.add_argument("--only", default="")
    ap.add_argument("--variants", default="ts17,dynamo18,extra",
                    help="comma list of ts<opset>[h] / dynamo<opset>[h] (h: fp16) and 'extra' for EXTRA")
    a = ap.parse_args()
    only = set(filter(None, a.only.split(",")))
    base = [v for v in a.variants.split(",") if v and v != "extra"]
    for name, build in MODELS.items():
        if only and name not in only:
            continue
        variants = base + (EXTRA.get(name, []) if "extra" in a.variants.split(",") else [])
        for v in variants:
            mt = re.fullmatch(r"(ts|dynamo)(\d+)(h?)(e?)(d?)", v)
            exporter, opset, half, eager = mt.group(1), int(mt.group(2)), bool(mt.group(3)), bool(mt.group(4))
            # TorchScript cases keep dynamic batch/sequence axes, the dynamo ones are static
            # unless the variant ends in d.
            dynamic = exporter == "ts" or bool(mt.group(5))
            try:
                case, ops = export(name, build, exporter, a.out, opset, dynamic=dynamic, half=half, eager=eager)
                print(f"ok   {case}: {' '.join(ops)}", flush=True)
            except Exception as e:  # noqa: BLE001 - one failed export must not stop the zoo
                shutil.rmtree(os.path.join(a.out, case_name(name, exporter, opset, half, eager, dynamic and exporter == "dynamo")), ignore_errors=True)
                msg = str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
                print(f"FAIL {name} {v}: {type(e).__name__}: {msg}", flush=True)
                if os.environ.get("ZOO_TRACE"):
                    traceback.print_exc()
    return 0


if __name__ == "__main__":
    sys.exit(main())
