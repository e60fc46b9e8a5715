#!/usr/bin/env python3
"""Models as onnxruntime's transformer optimizer writes them (com.microsoft contrib ops), with
onnxruntime's outputs stored as test_data_set_0, for tests/test_contrib_ops.cpp:
  ort_bert_small_opt  BERT (2 layers, hidden 32, 4 heads) exported from transformers with the
                      TorchScript exporter at opset 14, optimized with model_type=bert:
                      EmbedLayerNormalization, Attention (1-D mask_index), SkipLayerNormalization,
                      BiasGelu; a padded second row
  ort_gpt2_small_opt  GPT-2 (2 layers, hidden 32) optimized with model_type=gpt2:
                      SkipLayerNormalization, FastGelu
  ort_attention_past  one Attention as onnxruntime's GPT-2 decoding graphs use it: past
                      [2, B, N, P, h] and present outputs, unidirectional, a raw [B, P + S] mask
Random weights (seeded), nothing downloaded. Needs torch, transformers, onnx, onnxruntime.
Usage: python3 tests/data/make_ort_optimized.py [OUTDIR (default: this folder)]"""
import os, sys

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnx import numpy_helper as nh
from onnxruntime.transformers.optimizer import optimize_model
from transformers import BertConfig, BertModel, GPT2Config, GPT2Model

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(0)


class Wrap(torch.nn.Module):  # positional inputs, the first output only
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, *a):
        if len(a) == 3:
            return self.m(input_ids=a[0], attention_mask=a[1], token_type_ids=a[2])[0]
        return self.m(input_ids=a[0], attention_mask=a[1], use_cache=False)[0]


def case(name, model, names, feeds, model_type):
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    raw = os.path.join(d, "raw.onnx")
    torch.onnx.export(Wrap(model.eval()), tuple(torch.from_numpy(feeds[k]) for k in names), raw, opset_version=14, dynamo=False,
                      input_names=names, output_names=["hidden"], dynamic_axes={k: {0: "b", 1: "s"} for k in names})
    opt = optimize_model(raw, model_type=model_type, num_heads=4, hidden_size=32, opt_level=0)
    os.remove(raw)
    opt.save_model_to_file(os.path.join(d, "model.onnx"))
    store(d, feeds)


def store(d, feeds):  # onnxruntime's outputs of d/model.onnx as test_data_set_0
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(os.path.join(d, "model.onnx"), so, providers=["CPUExecutionProvider"])
    res = s.run(None, feeds)
    for i, x in enumerate(s.get_inputs()):
        open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb").write(nh.from_array(feeds[x.name], x.name).SerializeToString())
    for i, (o, v) in enumerate(zip(s.get_outputs(), res)):
        open(os.path.join(d, "test_data_set_0", f"output_{i}.pb"), "wb").write(nh.from_array(v, o.name).SerializeToString())
    print(d, sorted({n.op_type for n in onnx.load(os.path.join(d, "model.onnx")).graph.node if n.domain}))


rng = np.random.default_rng(1)
ids = rng.integers(0, 100, (2, 8)).astype(np.int64)
mask = np.ones((2, 8), np.int64)
mask[1, 5:] = 0
tt = np.zeros((2, 8), np.int64)
tt[:, 3:] = 1
bert = BertModel(BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                            max_position_embeddings=16, attn_implementation="eager"))
case("ort_bert_small_opt", bert, ["input_ids", "attention_mask", "token_type_ids"],
     {"input_ids": ids, "attention_mask": mask, "token_type_ids": tt}, "bert")
gpt2 = GPT2Model(GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=4, n_positions=16, attn_implementation="eager"))
case("ort_gpt2_small_opt", gpt2, ["input_ids", "attention_mask"], {"input_ids": ids, "attention_mask": mask}, "gpt2")

# One Attention with past / present (B 2, S 3, P 4, hidden 16, 4 heads), causal, a raw mask over
# the 7 keys with a padded key in the second row.
from onnx import TensorProto, helper
B, S, P, H, N = 2, 3, 4, 16, 4
d = os.path.join(out, "ort_attention_past")
os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
w = rng.standard_normal((H, 3 * H)).astype(np.float32) * 0.3
b = rng.standard_normal(3 * H).astype(np.float32) * 0.1
node = helper.make_node("Attention", ["x", "w", "b", "mask", "past"], ["y", "present"], domain="com.microsoft", num_heads=N, unidirectional=1)
g = helper.make_graph([node], "attention_past",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [B, S, H]), helper.make_tensor_value_info("mask", TensorProto.INT32, [B, P + S]),
                       helper.make_tensor_value_info("past", TensorProto.FLOAT, [2, B, N, P, H // N])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [B, S, H]),
                       helper.make_tensor_value_info("present", TensorProto.FLOAT, [2, B, N, P + S, H // N])],
                      [nh.from_array(w, "w"), nh.from_array(b, "b")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14), helper.make_opsetid("com.microsoft", 1)])
m.ir_version = 8
onnx.save(m, os.path.join(d, "model.onnx"))
mask_ap = np.ones((B, P + S), np.int32)
mask_ap[1, 1] = 0
store(d, {"x": rng.standard_normal((B, S, H)).astype(np.float32), "mask": mask_ap,
          "past": rng.standard_normal((2, B, N, P, H // N)).astype(np.float32)})
