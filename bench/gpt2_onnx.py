#!/usr/bin/env python3
"""Writes a whole GPT-2 (HF GPT2Model layout: token + position embedding, per layer LayerNorm,
fused QKV projection, 12-head causal attention, output projection, LayerNorm, MLP with the
tanh GELU, residuals; a final LayerNorm) with random weights as ONNX, without torch, for timing
the load path (`fusor bench DIR --backend X --phases`; README "Load-time profile").
Defaults are W4/W5's GPT-2 2L (768 wide, vocabulary 50257, sequence 64: a 211 MB file);
--vocab 40000 keeps the embedding under lavapipe's 128 MiB maxStorageBufferRange.
Usage: bench/gpt2_onnx.py OUTDIR [--layers 2] [--vocab 50257] [--width 768] [--heads 12] [--seq 64]
Needs numpy and onnx."""
import argparse, os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--layers", type=int, default=2)
ap.add_argument("--vocab", type=int, default=50257)
ap.add_argument("--width", type=int, default=768)
ap.add_argument("--heads", type=int, default=12)
ap.add_argument("--seq", type=int, default=64)
a = ap.parse_args()
V, D, H, S = a.vocab, a.width, a.heads, a.seq
dh = D // H
rng = np.random.default_rng(0)
inits, nodes = [], []


def const(name, arr):
    inits.append(numpy_helper.from_array(np.asarray(arr), name))
    return name


def weight(name, shape, scale=0.02):
    return const(name, (rng.standard_normal(shape, dtype=np.float32) * scale).astype(np.float32))


def node(op, ins, name, **attrs):
    nodes.append(helper.make_node(op, ins, [name], name=name, **attrs))
    return name


def layer_norm(x, name):
    g = const(name + ".g", (1 + 0.1 * rng.standard_normal(D)).astype(np.float32))
    b = const(name + ".b", (0.1 * rng.standard_normal(D)).astype(np.float32))
    return node("LayerNormalization", [x, g, b], name, axis=-1, epsilon=1e-5)


def linear(x, name, k, n):
    m = node("MatMul", [x, weight(name + ".w", (k, n))], name + ".mm")
    return node("Add", [m, weight(name + ".b", (n,), 0.1)], name)


wte = weight("wte", (V, D))
wpe = weight("wpe", (128 if S <= 128 else S, D), 0.01)
pos = const("pos_ids", np.arange(S, dtype=np.int64).reshape(1, S))
h = node("Add", [node("Gather", [wte, "input_ids"], "tok"), node("Gather", [wpe, pos], "posemb")], "h0")
heads_shape = const("heads_shape", np.array([1, S, H, dh], dtype=np.int64))
merge_shape = const("merge_shape", np.array([1, S, D], dtype=np.int64))
split = const("qkv_split", np.array([D, D, D], dtype=np.int64))
scale = const("attn_scale", np.array(1.0 / np.sqrt(dh), dtype=np.float32))
mask = const("causal_mask", np.where(np.tril(np.ones((S, S), bool)), 0, np.finfo(np.float32).min)
             .astype(np.float32).reshape(1, 1, S, S))
c_gelu, c_cube = const("gelu_c", np.array(np.sqrt(2 / np.pi), np.float32)), const("gelu_k", np.array(0.044715, np.float32))
half, one, three = const("half", np.array(0.5, np.float32)), const("one", np.array(1.0, np.float32)), const("three", np.array(3.0, np.float32))
for l in range(a.layers):
    p = f"h{l}"
    x = layer_norm(h, p + ".ln_1")
    qkv = linear(x, p + ".attn.c_attn", D, 3 * D)
    nodes.append(helper.make_node("Split", [qkv, split], [p + ".q", p + ".k", p + ".v"], name=p + ".split", axis=2))
    q = node("Transpose", [node("Reshape", [p + ".q", heads_shape], p + ".qr")], p + ".qt", perm=[0, 2, 1, 3])
    k = node("Transpose", [node("Reshape", [p + ".k", heads_shape], p + ".kr")], p + ".kt", perm=[0, 2, 3, 1])
    v = node("Transpose", [node("Reshape", [p + ".v", heads_shape], p + ".vr")], p + ".vt", perm=[0, 2, 1, 3])
    s = node("Add", [node("Mul", [node("MatMul", [q, k], p + ".qk"), scale], p + ".scaled"), mask], p + ".masked")
    att = node("MatMul", [node("Softmax", [s], p + ".probs", axis=-1), v], p + ".att")
    y = node("Reshape", [node("Transpose", [att], p + ".att_t", perm=[0, 2, 1, 3]), merge_shape], p + ".merged")
    h = node("Add", [h, linear(y, p + ".attn.c_proj", D, D)], p + ".res1")
    f = linear(layer_norm(h, p + ".ln_2"), p + ".mlp.c_fc", D, 4 * D)
    inner = node("Add", [f, node("Mul", [c_cube, node("Pow", [f, three], p + ".cube")], p + ".kcube")], p + ".inner")
    t = node("Tanh", [node("Mul", [c_gelu, inner], p + ".targ")], p + ".tanh")
    g = node("Mul", [node("Mul", [half, f], p + ".halfx"), node("Add", [one, t], p + ".onep")], p + ".gelu")
    h = node("Add", [h, linear(g, p + ".mlp.c_proj", 4 * D, D)], p + ".res2")
out = layer_norm(h, "ln_f")
g = helper.make_graph(nodes, "gpt2", [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, S])],
                      [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, S, D])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
onnx.checker.check_model(m)
os.makedirs(a.out, exist_ok=True)
path = os.path.join(a.out, "model.onnx")
onnx.save(m, path)
print(path, os.path.getsize(path) // 10**6, "MB,", len(nodes), "nodes")
