#!/usr/bin/env python3
"""onnxruntime's weight-only quantized matmul (com.microsoft MatMulNBits: 2-, 4- and 8-bit codes
packed low bits first, block-wise scales, packed or float zero points, bias, K not a multiple of
the block), one node each with onnxruntime's outputs on seeded random inputs, as ONNX
backend-test folders under tests/data/ort_matmul_nbits/ (tests/test_contrib_ops.cpp runs them on
every backend). Needs onnx, numpy and onnxruntime (1.32 made the stored outputs).
Usage: python3 tests/data/make_ort_matmul_nbits.py"""
import os
import shutil

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from ort_case import write_case

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_matmul_nbits")
rng = np.random.default_rng(7)
NP = {TensorProto.FLOAT: np.float32, TensorProto.FLOAT16: np.float16}


def pack(codes, bits):
    """uint codes [..., C] (C a multiple of 8 / bits) -> bytes [..., C * bits / 8], low bits first."""
    per = 8 // bits
    c = codes.reshape(codes.shape[:-1] + (codes.shape[-1] // per, per)).astype(np.uint8)
    out = np.zeros(c.shape[:-1], np.uint8)
    for j in range(per):
        out |= (c[..., j] << (j * bits)).astype(np.uint8)
    return out


def case(tag, K, N, bits, block, a_shape, zp="packed", bias=False, t=TensorProto.FLOAT, b_input=False):
    nb = (K + block - 1) // block
    codes = rng.integers(0, 1 << bits, [N, nb, block])
    B = pack(codes, bits).reshape(N, nb, block * bits // 8)
    scales = rng.uniform(0.01, 0.05, [N * nb]).astype(NP[t])
    ins, inits, feeds = ["A", "B", "scales"], [numpy_helper.from_array(scales, "scales")], {}
    A = rng.standard_normal(a_shape).astype(NP[t])
    feeds["A"] = A
    if b_input:
        feeds["B"] = B
    else:
        inits.append(numpy_helper.from_array(B, "B"))
    if zp == "packed":
        zcodes = rng.integers(0, 1 << bits, [N, ((nb * bits + 7) // 8) * (8 // bits)])
        inits.append(numpy_helper.from_array(pack(zcodes, bits).reshape(-1), "zp"))
        ins.append("zp")
    elif zp in ("float", "float16"):  # unpacked, A's type or another float type
        zt = np.float16 if zp == "float16" else NP[t]
        inits.append(numpy_helper.from_array(rng.uniform(0, (1 << bits) - 1, [N * nb]).astype(zt), "zp"))
        ins.append("zp")
    if bias:
        ins += ["", "bias"] if zp else ["", "", "bias"]
        inits.append(numpy_helper.from_array(rng.standard_normal([N]).astype(NP[t]), "bias"))
    node = helper.make_node("MatMulNBits", ins, ["Y"], domain="com.microsoft", K=K, N=N, bits=bits, block_size=block)
    graph_ins = [helper.make_tensor_value_info("A", t, a_shape)]
    if b_input:
        graph_ins.append(helper.make_tensor_value_info("B", TensorProto.UINT8, list(B.shape)))
    g = helper.make_graph([node], tag, graph_ins, [helper.make_tensor_value_info("Y", t, a_shape[:-1] + [N])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
    write_case(os.path.join(OUT, tag), m, feeds)


case("bits4_default_zp", 64, 48, 4, 32, [3, 64], zp=None)
case("bits4_packed_zp_pad_bias", 40, 24, 4, 16, [2, 5, 40], bias=True)
case("bits4_float_zp", 96, 32, 4, 32, [4, 96], zp="float")
case("bits8_packed_zp", 64, 16, 8, 32, [2, 64])
case("bits2_packed_zp", 64, 20, 2, 16, [3, 64])
case("bits4_fp16", 64, 32, 4, 32, [2, 64], t=TensorProto.FLOAT16)
case("bits4_b_input", 64, 24, 4, 32, [2, 64], b_input=True)
case("bits4_f16_zp_f32_a", 64, 16, 4, 32, [2, 64], zp="float16")
# The onnxruntime-optimized BERT of tests/data/ort_bert_small_opt with its six MatMuls 4-bit
# quantized by onnxruntime's MatMulNBitsQuantizer (block 32, asymmetric), on that case's inputs.
from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer  # noqa: E402  (needs onnx_ir)

src = os.path.join(os.path.dirname(OUT), "ort_bert_small_opt")
d = os.path.join(OUT, "ort_bert_small_q4")
shutil.rmtree(d, ignore_errors=True)
os.makedirs(os.path.join(d, "test_data_set_0"))
q = MatMulNBitsQuantizer(onnx.load(os.path.join(src, "model.onnx")), block_size=32, is_symmetric=False)
q.process()
q.model.save_model_to_file(os.path.join(d, "model.onnx"), use_external_data_format=False)
sess = ort.InferenceSession(os.path.join(d, "model.onnx"), providers=["CPUExecutionProvider"])
feeds = {}
for i, inp in enumerate(sess.get_inputs()):
    feeds[inp.name] = numpy_helper.to_array(onnx.load_tensor(os.path.join(src, "test_data_set_0", f"input_{i}.pb")))
    shutil.copy(os.path.join(src, "test_data_set_0", f"input_{i}.pb"), os.path.join(d, "test_data_set_0", f"input_{i}.pb"))
for k, (o, y) in enumerate(zip(sess.get_outputs(), sess.run(None, feeds))):
    with open(os.path.join(d, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y, o.name).SerializeToString())

# GatherBlockQuantized (onnxruntime-genai's quantized embedding tables): uint8 codes packed along
# the last axis, block-wise scales, default / packed zero points, 8 bits, fp16 scales, a last
# axis that is not a multiple of the block.


def gbq(tag, V, D, bits, block, zp=False, st=np.float32, idx_shape=(2, 3)):
    per = 8 // bits
    nb = (D + block - 1) // block
    codes = rng.integers(0, 1 << bits, [V, D]).astype(np.uint8)
    data = pack(codes, bits)
    sc = rng.uniform(0.05, 0.5, [V, nb]).astype(st)
    inits = [numpy_helper.from_array(data, "data"), numpy_helper.from_array(sc, "sc")]
    names = ["data", "idx", "sc"]
    if zp:
        zc = rng.integers(0, 1 << bits, [V, ((nb + per - 1) // per) * per])
        inits.append(numpy_helper.from_array(pack(zc, bits), "zp"))
        names.append("zp")
    idx = rng.integers(0, V, idx_shape).astype(np.int64)
    node = helper.make_node("GatherBlockQuantized", names, ["y"], domain="com.microsoft", bits=bits, block_size=block, gather_axis=0, quantize_axis=1)
    g = helper.make_graph([node], tag, [helper.make_tensor_value_info("idx", TensorProto.INT64, list(idx_shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT16 if st == np.float16 else TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
    write_case(os.path.join(OUT, tag), m, {"idx": idx})


gbq("gbq_bits4_default_zp", 12, 64, 4, 32)
gbq("gbq_bits4_packed_zp", 12, 96, 4, 16, zp=True)
gbq("gbq_bits8_zp", 12, 64, 8, 32, zp=True)
gbq("gbq_bits4_fp16", 12, 64, 4, 32, st=np.float16)
gbq("gbq_bits4_ragged_block", 12, 80, 4, 32, zp=True)
# GatherBlockQuantized with the logical-shape data types (MatMulNBitsQuantizer and
# onnxruntime-genai write int4 / uint4 tables; float8 / float4 tables are symmetric, block_size 0
# means one block per quantize_axis row, scales may broadcast on the other axes), uint8 2-bit
# codes, quantize_axis 0 and ranks 3. Its own generator, so the cases above keep their draws.
rng2 = np.random.default_rng(71)


def gbq_typed(tag, shape, dtype, qa, ga, block, zp=False, st=np.float32, sc_shape=None, idx_shape=(2, 3)):
    r = len(shape)
    qa_n = (1 if qa is None else qa) % r  # onnxruntime's default quantize_axis is 1
    nb = (shape[qa_n] + block - 1) // block if block else 1
    ss = list(shape)
    ss[qa_n] = nb
    if sc_shape is not None:
        ss = sc_shape
    if dtype in (TensorProto.INT4, TensorProto.UINT4):
        lo, hi = (-8, 8) if dtype == TensorProto.INT4 else (0, 16)
        vals = rng2.integers(lo, hi, shape)
        data = helper.make_tensor("data", dtype, shape, vals.reshape(-1).tolist())
    else:  # float8 / float4: values from a normal, rounded by onnx's own conversion
        vals = (rng2.standard_normal(shape) * 2).astype(np.float32)
        data = helper.make_tensor("data", dtype, shape, vals.reshape(-1).tolist())
    sc = rng2.uniform(0.05, 0.5, ss).astype(st)
    inits = [data, numpy_helper.from_array(sc, "sc")]
    names = ["data", "idx", "sc"]
    if zp:
        lo, hi = (-8, 8) if dtype == TensorProto.INT4 else (0, 16)
        inits.append(helper.make_tensor("zp", dtype, ss, rng2.integers(lo, hi, ss).reshape(-1).tolist()))
        names.append("zp")
    idx = rng2.integers(-shape[ga % r], shape[ga % r], idx_shape).astype(np.int64)
    attrs = {"block_size": block, "gather_axis": ga} if qa is None else {"block_size": block, "gather_axis": ga, "quantize_axis": qa}
    node = helper.make_node("GatherBlockQuantized", names, ["y"], domain="com.microsoft", **attrs)
    g = helper.make_graph([node], tag, [helper.make_tensor_value_info("idx", TensorProto.INT64, list(idx_shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT16 if st == np.float16 else TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
    write_case(os.path.join(OUT, tag), m, {"idx": idx})


def gbq_2bit(tag, V, D, block, zp):
    codes = rng2.integers(0, 4, [V, D]).astype(np.uint8)
    nb = (D + block - 1) // block
    inits = [numpy_helper.from_array(pack(codes, 2), "data"), numpy_helper.from_array(rng2.uniform(0.05, 0.5, [V, nb]).astype(np.float32), "sc")]
    names = ["data", "idx", "sc"]
    if zp:
        inits.append(numpy_helper.from_array(pack(rng2.integers(0, 4, [V, ((nb + 3) // 4) * 4]), 2), "zp"))
        names.append("zp")
    idx = rng2.integers(0, V, (4,)).astype(np.int64)
    node = helper.make_node("GatherBlockQuantized", names, ["y"], domain="com.microsoft", bits=2, block_size=block, gather_axis=0, quantize_axis=1)
    g = helper.make_graph([node], tag, [helper.make_tensor_value_info("idx", TensorProto.INT64, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
    write_case(os.path.join(OUT, tag), m, {"idx": idx})


gbq_typed("gbq_int4_zp", [12, 48], TensorProto.INT4, 1, 0, 16, zp=True)
gbq_typed("gbq_uint4_default_zp", [12, 40], TensorProto.UINT4, 1, 0, 16)
gbq_typed("gbq_uint4_qaxis0_gaxis1", [40, 6], TensorProto.UINT4, 0, 1, 16, zp=True, idx_shape=(5,))
gbq_typed("gbq_int4_rank3_fp16", [3, 32, 5], TensorProto.INT4, 1, 2, 16, zp=True, st=np.float16, idx_shape=(2, 2))
gbq_typed("gbq_int4_default_qaxis", [4, 33, 2], TensorProto.INT4, None, 0, 16, idx_shape=(3,))
gbq_typed("gbq_f8e4m3_whole_row", [10, 24], TensorProto.FLOAT8E4M3FN, 1, 0, 0)
gbq_typed("gbq_f8e5m2_broadcast", [10, 64], TensorProto.FLOAT8E5M2, 1, 0, 32, sc_shape=[1, 2])
gbq_typed("gbq_f4e2m1_blocks", [8, 64], TensorProto.FLOAT4E2M1, -1, 0, 16)
gbq_2bit("gbq_bits2_zp", 10, 40, 16, True)
gbq_2bit("gbq_bits2_default_zp", 10, 64, 32, False)

print("wrote", len(os.listdir(OUT)), "cases to", OUT)
