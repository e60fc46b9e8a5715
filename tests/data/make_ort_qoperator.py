#!/usr/bin/env python3
"""onnxruntime's QOperator-format quantized ops (domain com.microsoft: QLinearAdd, QLinearMul,
QLinearSigmoid, QLinearLeakyRelu, QLinearSoftmax, QLinearGlobalAveragePool, QLinearAveragePool, QLinearConcat,
QGemm), one node each, uint8 and int8, with onnxruntime's outputs on seeded random inputs, as
ONNX backend-test folders under tests/data/ort_qoperator/ (tests/test_contrib_ops.cpp runs them
on every backend). Needs onnx, numpy and onnxruntime (1.32 made the stored outputs).
Usage: python3 tests/data/make_ort_qoperator.py"""
import os
import shutil

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_qoperator")
MS = "com.microsoft"
rng = np.random.default_rng(1)


def model(op, ins, out_t, out_shape, attrs=None):
    """ins: (name, elem type, shape, value or None for a graph input); name "": omitted."""
    node = helper.make_node(op, [i[0] for i in ins], ["y"], domain=MS, **(attrs or {}))
    g = helper.make_graph([node], op, [helper.make_tensor_value_info(n, t, s) for n, t, s, v in ins if v is None and n],
                          [helper.make_tensor_value_info("y", out_t, out_shape)],
                          [numpy_helper.from_array(v, n) for n, t, s, v in ins if v is not None])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])


def write(tag, m, feeds):
    d = os.path.join(OUT, tag)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    onnx.save(m, os.path.join(d, "model.onnx"))
    y = ort.InferenceSession(os.path.join(d, "model.onnx"), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    for k, (n, v) in enumerate(feeds.items()):
        with open(os.path.join(d, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(v, n).SerializeToString())
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y, "y").SerializeToString())


F = TensorProto.FLOAT
for T, tn, lo, hi, tag in ((np.uint8, TensorProto.UINT8, 0, 256, "u8"), (np.int8, TensorProto.INT8, -128, 128, "i8")):
    S = [2, 8, 7, 7]
    a, b = rng.integers(lo, hi, S).astype(T), rng.integers(lo, hi, S).astype(T)
    sc = lambda v: np.array(v, np.float32)  # noqa: E731
    zA, zB, zC = (np.array(v, T) for v in ((3, 5, 7) if T == np.uint8 else (-3, 5, -7)))
    for op, cs in (("QLinearAdd", 0.05), ("QLinearMul", 0.9)):
        write(f"{op}_{tag}", model(op, [("a", tn, S, None), ("as", F, [], sc(0.02)), ("az", tn, [], zA), ("b", tn, S, None),
                                       ("bs", F, [], sc(0.03)), ("bz", tn, [], zB), ("cs", F, [], sc(cs)), ("cz", tn, [], zC)], tn, S),
              {"a": a, "b": b})
    # B broadcast along the channel axis, a constant.
    bc = rng.integers(lo, hi, [8, 1, 1]).astype(T)
    write(f"QLinearAdd_bcast_{tag}", model("QLinearAdd", [("a", tn, S, None), ("as", F, [], sc(0.02)), ("az", tn, [], zA),
                                                         ("b", tn, [8, 1, 1], bc), ("bs", F, [], sc(0.04)), ("bz", tn, [], zB),
                                                         ("cs", F, [], sc(0.07)), ("cz", tn, [], zC)], tn, S), {"a": a})
    for op, attrs in (("QLinearSigmoid", {}), ("QLinearLeakyRelu", {"alpha": 0.1})):
        write(f"{op}_{tag}", model(op, [("a", tn, S, None), ("as", F, [], sc(0.05)), ("az", tn, [], zA), ("ys", F, [], sc(1 / 256)),
                                       ("yz", tn, [], zC)], tn, S, attrs), {"a": a})
    for cl in (0, 1):
        write(f"QLinearGlobalAveragePool_cl{cl}_{tag}", model("QLinearGlobalAveragePool", [("a", tn, S, None), ("as", F, [], sc(0.05)),
              ("az", tn, [], zA), ("ys", F, [], sc(0.01)), ("yz", tn, [], zC)], tn, None, {"channels_last": cl}), {"a": a})
    write(f"QLinearAveragePool_{tag}", model("QLinearAveragePool", [("a", tn, S, None), ("as", F, [], sc(0.05)), ("az", tn, [], zA),
          ("ys", F, [], sc(0.04)), ("yz", tn, [], zC)], tn, None, {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]}), {"a": a})
    write(f"QLinearConcat_{tag}", model("QLinearConcat", [("ys", F, [], sc(0.07)), ("yz", tn, [], zC), ("a", tn, S, None), ("as", F, [], sc(0.05)),
          ("az", tn, [], zA), ("b", tn, S, None), ("bs", F, [], sc(0.09)), ("bz", tn, [], zB)], tn, None, {"axis": 1}), {"a": a, "b": b})
# QGemm: uint8 A, int8 B [N, K] (transB) per tensor and per column, an int32 bias, quantized and float outputs.
M, K, N = 8, 64, 24
A = rng.integers(0, 256, [M, K]).astype(np.uint8)
B = rng.integers(-128, 128, [N, K]).astype(np.int8)
C = rng.integers(-2000, 2000, [N]).astype(np.int32)
for q in (1, 0):
    for pc in (0, 1):
        bs = (rng.uniform(0.001, 0.01, [N]) if pc else np.array(0.004)).astype(np.float32)
        bz = np.zeros([N] if pc else [], np.int8)
        ins = [("A", TensorProto.UINT8, [M, K], None), ("as", F, [], np.array(0.02, np.float32)), ("az", TensorProto.UINT8, [], np.array(128, np.uint8)),
               ("B", TensorProto.INT8, [N, K], B), ("bs", F, list(bs.shape), bs), ("bz", TensorProto.INT8, list(bz.shape), bz), ("C", TensorProto.INT32, [N], C)]
        if q:
            ins += [("ys", F, [], np.array(0.3, np.float32)), ("yz", TensorProto.UINT8, [], np.array(120, np.uint8))]
        write(f"QGemm_q{q}_pc{pc}", model("QGemm", ins, TensorProto.UINT8 if q else F, [M, N], {"transB": 1, "alpha": 0.5}), {"A": A})
# QLinearWhere (X and Y at their own scales, Z at a third), uint8 and int8.
for T, tn, lo, hi, tag in ((np.uint8, TensorProto.UINT8, 0, 256, "u8"), (np.int8, TensorProto.INT8, -128, 128, "i8")):
    S = [3, 5, 7]
    cond = rng.integers(0, 2, S).astype(bool)
    x, y = rng.integers(lo, hi, S).astype(T), rng.integers(lo, hi, [5, 7]).astype(T)
    z3 = [np.array(v, T) for v in ((3, 5, 7) if T == np.uint8 else (-3, 5, -7))]
    write(f"QLinearWhere_{tag}", model("QLinearWhere", [("c", TensorProto.BOOL, S, None), ("x", tn, S, None), ("xs", F, [], np.array(0.03, np.float32)),
          ("xz", tn, [], z3[0]), ("y2", tn, [5, 7], y), ("y2s", F, [], np.array(0.05, np.float32)), ("y2z", tn, [], z3[1]),
          ("zs", F, [], np.array(0.045, np.float32)), ("zz", tn, [], z3[2])], tn, S), {"c": cond, "x": x})
# com.microsoft QuantizeLinear / DequantizeLinear with 16-bit types (what the quantizer writes for
# 16-bit activations below opset 21), per tensor and per axis.
for T, tn, tag in ((np.uint16, TensorProto.UINT16, "u16"), (np.int16, TensorProto.INT16, "i16")):
    X = (rng.standard_normal([4, 6]) * 3).astype(np.float32)
    zq = np.array(30000 if T == np.uint16 else -100, T)
    write(f"ms_QuantizeLinear_{tag}", model("QuantizeLinear", [("x", F, [4, 6], None), ("s", F, [], np.array(1e-3, np.float32)), ("z", tn, [], zq)], tn, [4, 6]),
          {"x": X})
    q = rng.integers(np.iinfo(T).min, np.iinfo(T).max, [4, 6]).astype(T)
    zs = rng.integers(-50, 50, [6]).astype(T) if T == np.int16 else rng.integers(0, 60000, [6]).astype(T)
    write(f"ms_DequantizeLinear_axis_{tag}", model("DequantizeLinear", [("q", tn, [4, 6], None), ("s", F, [6], rng.uniform(1e-4, 1e-2, [6]).astype(np.float32)),
          ("z", tn, [6], zs)], F, [4, 6], {"axis": 1}), {"q": q})
# MatMulIntegerToFloat and DynamicQuantizeMatMul (dynamically quantized transformers after
# onnxruntime's optimizer): A [2, 5, 32] against B [32, 16] int8, per-column and per-tensor
# B scales, with and without bias.
M3, K3, N3 = [2, 5, 32], 32, 16
Bq = rng.integers(-128, 128, [K3, N3]).astype(np.int8)
bias = rng.standard_normal(N3).astype(np.float32)
for pc in (0, 1):
    bs = (rng.uniform(0.001, 0.01, [N3]) if pc else np.array(0.004)).astype(np.float32)
    bz = np.zeros([N3] if pc else [], np.int8)
    Aq = rng.integers(0, 256, M3).astype(np.uint8)
    write(f"MatMulIntegerToFloat_pc{pc}", model("MatMulIntegerToFloat", [("A", TensorProto.UINT8, M3, None), ("B", TensorProto.INT8, [K3, N3], Bq),
          ("as", F, [], np.array(0.0173, np.float32)), ("bs", F, list(bs.shape), bs), ("az", TensorProto.UINT8, [], np.array(131, np.uint8)),
          ("bz", TensorProto.INT8, list(bz.shape), bz), ("bias", F, [N3], bias)], F, M3[:-1] + [N3]), {"A": Aq})
    Af = rng.standard_normal(M3).astype(np.float32)
    ins = [("A", F, M3, None), ("B", TensorProto.INT8, [K3, N3], Bq), ("bs", F, list(bs.shape), bs), ("bz", TensorProto.INT8, list(bz.shape), bz)]
    write(f"DynamicQuantizeMatMul_pc{pc}", model("DynamicQuantizeMatMul", ins + ([("bias", F, [N3], bias)] if pc else []), F, M3[:-1] + [N3]), {"A": Af})
# QGemm with y_scale but no y_zero_point: a float32 output over y_scale (onnxruntime's kernel),
# and MatMulIntegerToFloat with per-column parameters shaped [1, N].
A5 = rng.integers(0, 256, [3, 5]).astype(np.uint8)
B54 = rng.integers(-128, 128, [5, 4]).astype(np.int8)
write("QGemm_yscale_only", model("QGemm", [("A", TensorProto.UINT8, [3, 5], None), ("as", F, [], np.array(0.02, np.float32)),
                                          ("az", TensorProto.UINT8, [], np.array(3, np.uint8)), ("B", TensorProto.INT8, [5, 4], B54),
                                          ("bs", F, [], np.array(0.03, np.float32)), ("bz", TensorProto.INT8, [], np.array(2, np.int8)),
                                          ("", F, [], None), ("ys", F, [], np.array(0.5, np.float32))], F, [3, 4]), {"A": A5})
write("MatMulIntegerToFloat_row_params", model("MatMulIntegerToFloat", [("A", TensorProto.UINT8, [3, 5], None), ("B", TensorProto.INT8, [5, 4], B54),
      ("as", F, [], np.array(0.017, np.float32)), ("bs", F, [1, 4], rng.uniform(0.001, 0.01, [1, 4]).astype(np.float32)),
      ("az", TensorProto.UINT8, [], np.array(128, np.uint8)), ("bz", TensorProto.INT8, [1, 4], np.array([[1, -2, 3, 0]], np.int8))], F, [3, 4]),
      {"A": A5})
# QLinearSoftmax (own generator, so the cases above keep their inputs): uint8 (y_scale 1/256,
# y_zp 0) and int8 (y_zp -128), the opset-13 Softmax over the last and a middle axis, and the
# opset-11 one (input flattened to 2-D at axis).
rs = np.random.default_rng(35)
for T, tn, lo, hi, tag, yz in ((np.uint8, TensorProto.UINT8, 0, 256, "u8", 0), (np.int8, TensorProto.INT8, -128, 128, "i8", -128)):
    for opset, axis in ((13, -1), (13, 1), (11, 1)):
        S = [2, 5, 12]
        x = rs.integers(lo, hi, S).astype(T)
        write(f"QLinearSoftmax_{tag}_op{opset}_ax{axis}", model("QLinearSoftmax", [("x", tn, S, None), ("xs", F, [], np.array(0.07, np.float32)),
              ("xz", tn, [], np.array(100 if T == np.uint8 else -3, T)), ("ys", F, [], np.array(1 / 256, np.float32)),
              ("yz", tn, [], np.array(yz, T))], tn, S, {"axis": axis, "opset": opset}), {"x": x})
# The onnxruntime-optimized BERT of tests/data/ort_bert_small_opt, dynamically quantized
# (quantize_dynamic, int8 weights): QEmbedLayerNormalization, QAttention, DynamicQuantizeLinear
# and MatMulInteger, with onnxruntime's outputs on that case's inputs.
from onnxruntime.quantization import QuantType, quantize_dynamic  # noqa: E402

src = os.path.join(os.path.dirname(OUT), "ort_bert_small_opt")
d = os.path.join(OUT, "ort_bert_small_qdyn")
shutil.rmtree(d, ignore_errors=True)
os.makedirs(os.path.join(d, "test_data_set_0"))
quantize_dynamic(os.path.join(src, "model.onnx"), os.path.join(d, "model.onnx"), weight_type=QuantType.QInt8,
                 extra_options={"DefaultTensorType": TensorProto.FLOAT})
sess = ort.InferenceSession(os.path.join(d, "model.onnx"), providers=["CPUExecutionProvider"])
feeds = {}
for i, inp in enumerate(sess.get_inputs()):
    t = onnx.load_tensor(os.path.join(src, "test_data_set_0", f"input_{i}.pb"))
    feeds[inp.name] = numpy_helper.to_array(t)
    shutil.copy(os.path.join(src, "test_data_set_0", f"input_{i}.pb"), os.path.join(d, "test_data_set_0", f"input_{i}.pb"))
for k, (o, y) in enumerate(zip(sess.get_outputs(), sess.run(None, feeds))):
    with open(os.path.join(d, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y, o.name).SerializeToString())
print("wrote", len(os.listdir(OUT)), "cases to", OUT)
