#!/usr/bin/env python3
"""onnxruntime's fused ops as its optimizer saves them (com.microsoft FusedConv with each
activation and a summed input Z, FusedGemm, TransposeMatMul), one node each with onnxruntime's
outputs on seeded random inputs, as ONNX backend-test folders under tests/data/ort_fused/
(tests/test_contrib_ops.cpp runs them on every backend). Needs onnx, numpy and onnxruntime
(1.32 made the stored outputs). Usage: python3 tests/data/make_ort_fused.py"""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from ort_case import write_case

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_fused")
rng = np.random.default_rng(5)
F = TensorProto.FLOAT


def case(tag, op, ins, out_shape, attrs, consts=()):
    feeds = {n: a for n, a in ins if n not in consts}
    node = helper.make_node(op, [n for n, _ in ins], ["y"], domain="com.microsoft", **attrs)
    g = helper.make_graph([node], tag, [helper.make_tensor_value_info(n, F, list(a.shape)) for n, a in feeds.items()],
                          [helper.make_tensor_value_info("y", F, out_shape)], [numpy_helper.from_array(a, n) for n, a in ins if n in consts])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    write_case(os.path.join(OUT, tag), m, feeds)


def r(*s):
    return rng.standard_normal(s).astype(np.float32)


X, W, B = r(2, 4, 7, 7), r(6, 4, 3, 3), r(6)
conv = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [1, 1]}
for act, params in (("Relu", None), ("Tanh", None), ("Sigmoid", None), ("LeakyRelu", [0.2]), ("HardSigmoid", [0.3, 0.4]), ("Clip", [-0.5, 0.7])):
    attrs = {**conv, "activation": act}
    if params:
        attrs["activation_params"] = params
    case(f"FusedConv_{act}", "FusedConv", [("x", X), ("w", W), ("b", B)], [2, 6, 7, 7], attrs, consts=("w", "b"))
case("FusedConv_sum_strided_group", "FusedConv", [("x", X), ("w", r(4, 2, 3, 3)), ("b", r(4)), ("z", r(2, 4, 4, 4))], [2, 4, 4, 4],
     {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2], "group": 2, "activation": "Relu"}, consts=("w", "b"))
case("FusedConv_no_bias", "FusedConv", [("x", X), ("w", W)], [2, 6, 5, 5], {"kernel_shape": [3, 3], "activation": "Sigmoid"}, consts=("w",))
A, Bm, C = r(5, 8), r(6, 8), r(6)
case("FusedGemm_Relu_transB", "FusedGemm", [("a", A), ("b", Bm), ("c", C)], [5, 6], {"transB": 1, "alpha": 0.5, "beta": 2.0, "activation": "Relu"},
     consts=("b", "c"))
case("FusedGemm_LeakyRelu", "FusedGemm", [("a", A), ("b", r(8, 6))], [5, 6], {"activation": "LeakyRelu", "activation_alpha": 0.1}, consts=("b",))
case("TransposeMatMul", "TransposeMatMul", [("a", r(3, 8, 5)), ("b", r(3, 8, 4))], [3, 5, 4], {"transA": 1})
print("wrote", len(os.listdir(OUT)), "cases to", OUT)
