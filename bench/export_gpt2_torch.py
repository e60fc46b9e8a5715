#!/usr/bin/env python3
"""W4's GPT-2 2L (bench/workloads.gpt2_model) exported from torch in fp32, fp16 and bf16 to
OUT/fp32/model.onnx, OUT/fp16/model.onnx, OUT/bf16/model.onnx (input_ids int64[1, 64]), as
bench/side_by_side.py exports it: the TorchScript exporter at opset 17, the dynamo exporter at
opset 18 where that one fails. Needs torch, transformers and a CUDA GPU (the H200 scripts).
Usage: bench/export_gpt2_torch.py OUT"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workloads import gpt2_model  # noqa: E402

out = sys.argv[1]
for tag, dt in (("fp32", torch.float32), ("fp16", torch.float16), ("bf16", torch.bfloat16)):
    d = os.path.join(out, tag)
    os.makedirs(d, exist_ok=True)
    m = gpt2_model().to("cuda").to(dt)
    ids = torch.randint(0, 50257, (1, 64), device="cuda")
    try:
        torch.onnx.export(m, (ids,), f"{d}/model.onnx", opset_version=17, dynamo=False, input_names=["input"], output_names=["output"])
    except Exception:
        torch.onnx.export(m, (ids,), f"{d}/model.onnx", opset_version=18, dynamo=True, input_names=["input"],
                          output_names=["output"], external_data=False)
print("exported")
