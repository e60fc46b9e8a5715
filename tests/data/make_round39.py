#!/usr/bin/env python3
"""Red-team round 39's cases (docs/redteam.md): ops of opsets 23-28 where fusor disagreed with
the ONNX spec, as ONNX backend-test folders under tests/data/round39/ with the spec's results
computed here in numpy (float64, then rounded as the spec says), checked against onnxruntime
where it runs the model. tests/test_round39.cpp runs them on every backend, bit for bit.
Needs onnx >= 1.20, numpy, ml_dtypes, onnxruntime (ort_case). Usage: python3 tests/data/make_round39.py"""
import os

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import onnxruntime as ort
from ort_case import write_folder

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "round39")
rng = np.random.default_rng(39)


def write(tag, nodes, inputs, outputs, feeds, expected, opset, inits=()):
    g = helper.make_graph(nodes, tag, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    write_folder(os.path.join(OUT, tag), m, feeds, expected)
    try:  # a cross-check where onnxruntime has the kernel
        got = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
        for y, e in zip(got, expected):
            assert np.array_equal(y.view(np.uint8), np.asarray(e).view(np.uint8)), (tag, y, e)
        print(tag, "matches onnxruntime")
    except Exception as e:  # no kernel (bf16, opset 28, ...)
        print(tag, "numpy only:", str(e).splitlines()[0][:100])


def quantize(tag, dt, np_dt, opset):
    # y = saturate(round_half_even(x / y_scale) + zp) with the division in y_scale's type from
    # opset 23 (`precision` unset), in float32 before (the spec is silent; onnxruntime's).
    x = (rng.standard_normal([4, 16]) * 300).astype(np_dt)  # quotients past 512, where float16 steps by 0.5
    s = np.array(0.3125 * 1.5, np_dt)  # a scale whose quotients often fall between two halves
    zp = np.array(3, np.int16)  # int16: room for the quotients
    q = (x.astype(np.float64) / np.float64(s)).astype(np_dt if opset >= 23 else np.float32).astype(np.float64)
    y = np.clip(np.rint(q) + 3, -32768, 32767).astype(np.int16)
    write(tag, [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["y"])],
          [helper.make_tensor_value_info("x", dt, [4, 16])], [helper.make_tensor_value_info("y", TensorProto.INT16, [4, 16])],
          {"x": x}, [y], opset, [numpy_helper.from_array(s, "s"), numpy_helper.from_array(zp, "zp")])


quantize("quantize_fp16_divides_in_fp32_before_opset23", TensorProto.FLOAT16, np.float16, 21)
quantize("quantize_fp16_scale_divides_in_fp16_opset25", TensorProto.FLOAT16, np.float16, 25)
quantize("quantize_bf16_scale_divides_in_bf16_opset25", TensorProto.BFLOAT16, ml_dtypes.bfloat16, 25)

# RMSNormalization-23, X float16 and scale float32: Y (float32) = float32(float16(X / rms)) * scale.
x = rng.standard_normal([3, 8]).astype(np.float16)
sc = rng.uniform(0.5, 2, [8]).astype(np.float32)
x64 = x.astype(np.float64)
norm = (x64 / np.sqrt((x64 * x64).mean(axis=-1, keepdims=True) + 1e-5)).astype(np.float16)
write("rmsnorm_fp16_x_fp32_scale_gives_fp32", [helper.make_node("RMSNormalization", ["x", "sc"], ["y"], axis=-1, epsilon=1e-5)],
      [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [3, 8]), helper.make_tensor_value_info("sc", TensorProto.FLOAT, [8])],
      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 8])], {"x": x, "sc": sc},
      [norm.astype(np.float32) * sc], 23)

# BitCast-26 between the 4-bit types and between the 2-bit ones: the same bits.
for name, src, dst, src_np, dst_np, lo, hi in [
        ("int4_to_uint4", TensorProto.INT4, TensorProto.UINT4, ml_dtypes.int4, ml_dtypes.uint4, -8, 8),
        ("uint4_to_int4", TensorProto.UINT4, TensorProto.INT4, ml_dtypes.uint4, ml_dtypes.int4, 0, 16),
        ("int2_to_uint2", TensorProto.INT2, TensorProto.UINT2, ml_dtypes.int2, ml_dtypes.uint2, -2, 2)]:
    v = rng.integers(lo, hi, [5]).astype(src_np)
    bits = 4 if "4" in name else 2
    raw = v.astype(np.int64) & ((1 << bits) - 1)
    y = np.where(raw >= (1 << (bits - 1)), raw - (1 << bits), raw) if dst in (TensorProto.INT4, TensorProto.INT2) else raw
    write("bitcast_" + name, [helper.make_node("BitCast", ["x"], ["y"], to=dst)], [helper.make_tensor_value_info("x", src, [5])],
          [helper.make_tensor_value_info("y", dst, [5])], {"x": v}, [y.astype(dst_np)], 26)

# Cast-25 to float8e8m0 with saturate=0: below 2^-127 (0 included) is NaN (the spec's E8M0 table).
x = np.array([0.0, 1e-39, 2.0**-127, 2.0**-128, 1.0, 3.0, 2.0**127, 3e38], np.float32)
codes = np.array([0xFF, 0xFF, 0x00, 0xFF, 127, 129, 254, 0xFF], np.uint8)
write("cast_e8m0_nonsaturating_underflow_is_nan",
      [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT8E8M0, saturate=0, round_mode="nearest")],
      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8])], [helper.make_tensor_value_info("y", TensorProto.FLOAT8E8M0, [8])],
      {"x": x}, [codes.view(ml_dtypes.float8_e8m0fnu)], 25)
print("wrote", len(os.listdir(OUT)), "cases to", OUT)
