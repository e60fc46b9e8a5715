#!/usr/bin/env python3
"""The zoo's hand-made extra cases (docs/model_zoo.md): an external-data dynamo export,
onnxruntime quantize_dynamic versions of two zoo cases, and two full-size models
(resnet50 at 224x224, bert-base at sequence 128) under ZOO_BIG. Run after export_zoo.py:
    extra_cases.py [ZOO] [ZOO_BIG]    (defaults /work/zoo, /work/zoo_big)
"""
import os
import shutil
import sys

import onnx
import onnxruntime as ort
import torch
import torchvision
import transformers
from onnx import numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic

ZOO = sys.argv[1] if len(sys.argv) > 1 else "/work/zoo"
BIG = sys.argv[2] if len(sys.argv) > 2 else "/work/zoo_big"


def write_set(d, model, feeds_list):
    os.makedirs(d + "/test_data_set_0", exist_ok=True)
    s = ort.InferenceSession(model)
    feeds = {i.name: a for i, a in zip(s.get_inputs(), feeds_list)}
    for i, a in enumerate(feeds_list):
        onnx.save_tensor(numpy_helper.from_array(a), f"{d}/test_data_set_0/input_{i}.pb")
    for i, v in enumerate(s.run(None, feeds)):
        onnx.save_tensor(numpy_helper.from_array(v), f"{d}/test_data_set_0/output_{i}.pb")


torch.manual_seed(0)
# External data: the dynamo exporter's save(..., external_data=True).
d = f"{ZOO}/resnet18_dynamo18_extdata"
os.makedirs(d, exist_ok=True)
x = torch.randn(1, 3, 64, 64)
p = torch.onnx.export(torchvision.models.resnet18(weights=None).eval(), (x,), dynamo=True, opset_version=18,
                      input_names=["input"])
p.save(f"{d}/model.onnx", external_data=True)
write_set(d, f"{d}/model.onnx", [x.numpy()])

# onnxruntime dynamic quantization (DynamicQuantizeLinear, MatMulInteger, ConvInteger).
for src, wt in [("bert_ts17", QuantType.QInt8), ("mobilenet_v2_ts17", QuantType.QUInt8)]:
    d = f"{ZOO}/{src}_qdyn"
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    quantize_dynamic(f"{ZOO}/{src}/model.onnx", f"{d}/model.onnx", weight_type=wt)
    n = len(ort.InferenceSession(f"{d}/model.onnx").get_inputs())
    write_set(d, f"{d}/model.onnx",
              [numpy_helper.to_array(onnx.load_tensor(f"{ZOO}/{src}/test_data_set_0/input_{i}.pb")) for i in range(n)])


# Full size: resnet50 1x3x224x224, bert-base (BertConfig() defaults) 1x128.
class Ids(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, ids, mask):
        return self.m(input_ids=ids, attention_mask=mask)[0]


for name, m, args, names in [
        ("resnet50_224_ts17", torchvision.models.resnet50(weights=None), (torch.randn(1, 3, 224, 224),), ["input"]),
        ("bert_base_s128_ts17", Ids(transformers.BertModel(transformers.BertConfig())),
         (torch.randint(0, 30000, (1, 128)), torch.ones(1, 128, dtype=torch.int64)), ["input_ids", "attention_mask"])]:
    d = f"{BIG}/{name}"
    os.makedirs(d, exist_ok=True)
    torch.onnx.export(m.eval(), args, f"{d}/model.onnx", dynamo=False, opset_version=17, input_names=names)
    write_set(d, f"{d}/model.onnx", [a.numpy() for a in args])
