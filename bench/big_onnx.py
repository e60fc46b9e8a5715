#!/usr/bin/env python3
"""Writes a GPT-2-sized ONNX file (211 MB: a 50257 x 768 embedding, two MLP layers) for timing
`fusor bench MODEL --backend cpu`'s load_ms / compile_ms without a GPU (docs/benchmarks.md, W5).
Usage: bench/big_onnx.py OUTDIR"""
import os, sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(0)
V, D, S = 50257, 768, 64
inits = [numpy_helper.from_array(rng.standard_normal((V, D), dtype=np.float32), "wte"),
         numpy_helper.from_array(rng.standard_normal((128, D), dtype=np.float32), "wpe")]
nodes = [helper.make_node("Gather", ["wte", "ids"], ["e"]), helper.make_node("Add", ["e", "pos"], ["h0"])]
inits.append(numpy_helper.from_array(rng.standard_normal((S, D), dtype=np.float32), "pos"))
cur = "h0"
for l in range(2):
    # Every GPT-2 block's weights are stored (the load cost); only the MLP is wired up.
    for nm, (a, b) in {"qkv": (D, 3 * D), "proj": (D, D), "fc": (D, 4 * D), "fc2": (4 * D, D)}.items():
        inits.append(numpy_helper.from_array(rng.standard_normal((a, b), dtype=np.float32) * 0.01, f"w_{nm}{l}"))
        inits.append(numpy_helper.from_array(rng.standard_normal((b,), dtype=np.float32), f"b_{nm}{l}"))
    nodes += [helper.make_node("MatMul", [cur, f"w_fc{l}"], [f"m{l}"]), helper.make_node("Add", [f"m{l}", f"b_fc{l}"], [f"a{l}"]),
              helper.make_node("Tanh", [f"a{l}"], [f"t{l}"]), helper.make_node("MatMul", [f"t{l}", f"w_fc2{l}"], [f"n{l}"]),
              helper.make_node("Add", [f"n{l}", cur], [f"h{l + 1}"])]
    cur = f"h{l + 1}"
g = helper.make_graph(nodes, "big", [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, S])],
                      [helper.make_tensor_value_info(cur, TensorProto.FLOAT, [1, S, D])], inits)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(out, "model.onnx"))
print(os.path.join(out, "model.onnx"), os.path.getsize(os.path.join(out, "model.onnx")) // 10**6, "MB")
