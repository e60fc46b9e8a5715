#!/usr/bin/env python3
"""onnxruntime's com.microsoft MultiHeadAttention (3-D query / key / value with a projection bias,
cross attention, key padding masks, attention_bias, past / present, packed KV, keys already in
heads, causal, fp16), Attention with an attention_bias and RotaryEmbedding, one node each with onnxruntime's
outputs on seeded random inputs, as ONNX backend-test folders under tests/data/ort_mha/
(tests/test_contrib_ops.cpp runs them on every backend). Needs onnx, numpy and onnxruntime
(1.32 made the stored outputs). Usage: python3 tests/data/make_ort_mha.py"""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from ort_case import write_case

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_mha")
rng = np.random.default_rng(11)
ELEM = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16, np.int32: TensorProto.INT32, np.int64: TensorProto.INT64}


def case(tag, op, ins, outs, attrs, consts=()):
    """ins: [(name, array)] in input order ("" omitted); consts: names stored as initializers."""
    names = [n for n, _ in ins]
    feeds = {n: a for n, a in ins if n and n not in consts}
    inits = [numpy_helper.from_array(a, n) for n, a in ins if n in consts]
    node = helper.make_node(op, names, [o for o, _ in outs], domain="com.microsoft", **attrs)
    g = helper.make_graph([node], tag, [helper.make_tensor_value_info(n, ELEM[a.dtype.type], list(a.shape)) for n, a in feeds.items()],
                          [helper.make_tensor_value_info(o, ELEM[t], None) for o, t in outs], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    try:
        write_case(os.path.join(OUT, tag), m, feeds)
    except Exception as e:  # noqa: BLE001
        print("onnxruntime refused", tag, str(e).splitlines()[0][:160])


def r(*s, t=np.float32):
    return rng.standard_normal(s).astype(t)


B, S, L, N, h = 2, 5, 7, 4, 4
D = N * h
F = np.float32
Y = [("y", F)]
case("mha_cross_bias", "MultiHeadAttention", [("q", r(B, S, D)), ("k", r(B, L, D)), ("v", r(B, L, 24)), ("bias", r(2 * D + 24))], Y,
     {"num_heads": N}, consts=("bias",))
x = r(B, 6, D)
case("mha_self_raw_mask", "MultiHeadAttention", [("q", x), ("k", x * 0.5), ("v", x * 2), ("", None), ("m", np.array([[1, 1, 0, 1, 1, 1], [1, 1, 1, 1, 0, 0]], np.int32))],
     Y, {"num_heads": N})
case("mha_lengths_mask_scale", "MultiHeadAttention", [("q", r(B, S, D)), ("k", r(B, L, D)), ("v", r(B, L, D)), ("", None), ("m", np.array([7, 3], np.int32))],
     Y, {"num_heads": N, "scale": 0.3, "mask_filter_value": -1000.0})
case("mha_attention_bias", "MultiHeadAttention", [("q", r(B, S, D)), ("k", r(B, L, D)), ("v", r(B, L, D)), ("", None), ("", None), ("ab", r(1, N, S, L))],
     Y, {"num_heads": N})
case("mha_past_present", "MultiHeadAttention", [("q", r(B, 1, D)), ("k", r(B, 1, D)), ("v", r(B, 1, D)), ("bias", r(3 * D)), ("", None), ("", None),
                                                ("pk", r(B, N, 3, h)), ("pv", r(B, N, 3, h))],
     [("y", F), ("present_k", F), ("present_v", F)], {"num_heads": N}, consts=("bias",))
case("mha_packed_kv", "MultiHeadAttention", [("q", r(B, S, D)), ("kv", r(B, L, N, 2, h))], Y, {"num_heads": N})
case("mha_packed_qkv", "MultiHeadAttention", [("qkv", r(B, S, N, 3, h))], Y, {"num_heads": N})
case("mha_kv_in_heads", "MultiHeadAttention", [("q", r(B, S, D)), ("k", r(B, N, L, h)), ("v", r(B, N, L, h))], Y, {"num_heads": N})
case("mha_causal", "MultiHeadAttention", [("q", x), ("k", x * 0.5), ("v", x * 2)], Y, {"num_heads": N, "unidirectional": 1})
H = np.float16
case("mha_fp16", "MultiHeadAttention", [("q", r(B, S, D, t=H)), ("k", r(B, L, D, t=H)), ("v", r(B, L, D, t=H)), ("", None),
                                        ("m", np.array([[1] * 7, [1, 1, 1, 0, 0, 0, 0]], np.int32))], [("y", H)], {"num_heads": N})
case("attention_with_bias", "Attention", [("x", r(B, S, D)), ("w", r(D, 3 * D)), ("b", r(3 * D)), ("m", np.array([5, 3], np.int32)), ("", None),
                                          ("ab", r(B, 1, S, S))], Y, {"num_heads": N}, consts=("w", "b"))
# com.microsoft RotaryEmbedding(input, position_ids, cos_cache, sin_cache).
M = 12
cs, sn = r(M, h // 2), r(M, h // 2)
pid = np.array([[0, 1, 2, 3, 4], [3, 4, 5, 6, 7]], np.int64)
case("rotary_3d", "RotaryEmbedding", [("x", r(B, S, D)), ("p", pid), ("c", cs), ("s", sn)], Y, {"num_heads": N}, consts=("c", "s"))
case("rotary_4d_interleaved", "RotaryEmbedding", [("x", r(B, N, S, h)), ("p", pid), ("c", cs), ("s", sn)], Y, {"interleaved": 1}, consts=("c", "s"))
case("rotary_start_position", "RotaryEmbedding", [("x", r(B, S, D)), ("p", np.array([4], np.int64)), ("c", cs), ("s", sn)], Y, {"num_heads": N},
     consts=("c", "s"))
case("rotary_partial_dim", "RotaryEmbedding", [("x", r(B, S, 2 * D)), ("p", pid), ("c", cs), ("s", sn)], Y,
     {"num_heads": N, "rotary_embedding_dim": h}, consts=("c", "s"))
case("rotary_fp16", "RotaryEmbedding", [("x", r(B, S, D, t=H)), ("p", pid), ("c", cs.astype(H)), ("s", sn.astype(H))], [("y", H)], {"num_heads": N},
     consts=("c", "s"))
# com.microsoft GroupQueryAttention (onnxruntime-genai's decoders): a first prompt with empty past
# buffers, a decoding step on its present, a step where one row is a token shorter (its present
# ends in zeros), a packed QKV query, rotary prompt / decoding step, a local window with softcap,
# fp16. seqlens_k and total_sequence_length are graph inputs (the present's length is a value).
Hq, Hkv, d, S4 = 4, 2, 8, 4
P3 = [("y", F), ("present_key", F), ("present_value", F)]


def gqa_in(Sq, past, lens, total, t=F, packed=False, d=d):
    ins = [("q", r(B, Sq, (Hq + 2 * Hkv) * d if packed else Hq * d, t=t))]
    ins += [("", None), ("", None)] if packed else [("k", r(B, Sq, Hkv * d, t=t)), ("v", r(B, Sq, Hkv * d, t=t))]
    return ins + [("past_key", past[0]), ("past_value", past[1]), ("seqlens_k", np.array(lens, np.int32)), ("total", np.array([total], np.int32))]


empty = (np.zeros((B, Hkv, 0, d), F), np.zeros((B, Hkv, 0, d), F))
past4 = (r(B, Hkv, S4, d), r(B, Hkv, S4, d))
A = {"num_heads": Hq, "kv_num_heads": Hkv}
case("gqa_prompt", "GroupQueryAttention", gqa_in(S4, empty, [S4 - 1] * 2, S4), P3, A)
case("gqa_decode", "GroupQueryAttention", gqa_in(1, past4, [S4] * 2, S4 + 1), P3, A)
case("gqa_decode_ragged", "GroupQueryAttention", gqa_in(1, past4, [S4, S4 - 1], S4 + 1), P3, A)
case("gqa_packed_prompt", "GroupQueryAttention", gqa_in(S4, empty, [S4 - 1] * 2, S4, packed=True), P3, A)
case("gqa_window_softcap", "GroupQueryAttention", gqa_in(S4, empty, [S4 - 1] * 2, S4), P3, {**A, "local_window_size": 2, "softcap": 3.0})
# (onnxruntime rotates heads whose size is a multiple of 16.)
gc, gs = r(16, 8), r(16, 8)
empty16, past16 = (np.zeros((B, Hkv, 0, 16), F), np.zeros((B, Hkv, 0, 16), F)), (r(B, Hkv, S4, 16), r(B, Hkv, S4, 16))
case("gqa_rotary_prompt", "GroupQueryAttention", gqa_in(S4, empty16, [S4 - 1] * 2, S4, d=16) + [("cos", gc), ("sin", gs)], P3,
     {**A, "do_rotary": 1}, consts=("cos", "sin"))
case("gqa_rotary_interleaved_decode", "GroupQueryAttention", gqa_in(1, past16, [S4] * 2, S4 + 1, d=16) + [("cos", gc), ("sin", gs)], P3,
     {**A, "do_rotary": 1, "rotary_interleaved": 1}, consts=("cos", "sin"))
H16 = (np.zeros((B, Hkv, 0, d), H), np.zeros((B, Hkv, 0, d), H))
case("gqa_prompt_fp16", "GroupQueryAttention", gqa_in(S4, H16, [S4 - 1] * 2, S4, t=H), [("y", H), ("present_key", H), ("present_value", H)], A)

# One onnxruntime-genai style decoder layer: SimplifiedLayerNormalization, 4-bit MatMulNBits
# projections, GroupQueryAttention with rotary whose seqlens_k / total_sequence_length are
# computed from the attention mask inside the model (ReduceSum, Shape), SkipSimplifiedLayer-
# Normalization and a SiLU MLP; past buffers of 3 tokens, a 2-token step (onnxruntime takes a
# later multi-token step for one row only).
def nbits(name, K, N, block=16):
    codes = rng.integers(0, 16, [N, K // block, block]).astype(np.uint8)
    packed = (codes[..., 0::2] | (codes[..., 1::2] << 4)).astype(np.uint8)
    sc = rng.uniform(0.02, 0.06, [N * (K // block)]).astype(F)
    return [numpy_helper.from_array(packed, name + "_B"), numpy_helper.from_array(sc, name + "_s")], \
        lambda x, y: helper.make_node("MatMulNBits", [x, name + "_B", name + "_s"], [y], domain="com.microsoft", K=K, N=N, bits=4, block_size=block)


Dm, Hd, Sq, Pp = 32, 16, 2, 3
nodes, inits, mm = [], [], {}
for nm, K_, N_ in (("wq", Dm, 2 * Hd), ("wk", Dm, Hd), ("wv", Dm, Hd), ("wo", 2 * Hd, Dm), ("wg", Dm, 64), ("wd", 64, Dm)):
    ini, mk = nbits(nm, K_, N_)
    inits += ini
    mm[nm] = mk
inits += [numpy_helper.from_array(rng.uniform(0.5, 1.5, [Dm]).astype(F), "g1"), numpy_helper.from_array(rng.uniform(0.5, 1.5, [Dm]).astype(F), "g2"),
          numpy_helper.from_array(r(16, 8), "cos"), numpy_helper.from_array(r(16, 8), "sin"), numpy_helper.from_array(np.array([1], np.int64), "one"),
          numpy_helper.from_array(np.array([1], np.int64), "ax1")]
nodes += [helper.make_node("ReduceSum", ["mask", "ax1"], ["len"], keepdims=0), helper.make_node("Sub", ["len", "one"], ["len1"]),
          helper.make_node("Cast", ["len1"], ["seqlens_k"], to=TensorProto.INT32), helper.make_node("Shape", ["mask"], ["ms"], start=1, end=2),
          helper.make_node("Cast", ["ms"], ["total"], to=TensorProto.INT32),
          helper.make_node("SimplifiedLayerNormalization", ["x", "g1"], ["h"], epsilon=1e-6, axis=-1),
          mm["wq"]("h", "q"), mm["wk"]("h", "k"), mm["wv"]("h", "v"),
          helper.make_node("GroupQueryAttention", ["q", "k", "v", "past_key", "past_value", "seqlens_k", "total", "cos", "sin"],
                           ["attn", "present_key", "present_value"], domain="com.microsoft", num_heads=2, kv_num_heads=1, do_rotary=1),
          mm["wo"]("attn", "o"),
          helper.make_node("SkipSimplifiedLayerNormalization", ["o", "x", "g2"], ["h2", "", "", "resid"], domain="com.microsoft", epsilon=1e-6),
          mm["wg"]("h2", "gate"), helper.make_node("Sigmoid", ["gate"], ["sg"]), helper.make_node("Mul", ["gate", "sg"], ["act"]),
          mm["wd"]("act", "down"), helper.make_node("Add", ["resid", "down"], ["y"])]
ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, Sq, Dm]), helper.make_tensor_value_info("mask", TensorProto.INT64, [1, Pp + Sq]),
       helper.make_tensor_value_info("past_key", TensorProto.FLOAT, [1, 1, Pp, Hd]), helper.make_tensor_value_info("past_value", TensorProto.FLOAT, [1, 1, Pp, Hd])]
outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ("y", "present_key", "present_value")]
m = helper.make_model(helper.make_graph(nodes, "genai_layer", ins, outs, inits),
                      opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
feeds = {"x": r(1, Sq, Dm), "mask": np.ones([1, Pp + Sq], np.int64), "past_key": r(1, 1, Pp, Hd), "past_value": r(1, 1, Pp, Hd)}
write_case(os.path.join(OUT, "genai_decoder_layer_q4"), m, feeds)

# Red-team round 18: rows of different lengths in a first prompt (keys past a row's length are
# hidden), past buffers longer than T (present keeps their length), local_window_size 0 (zeros),
# seqlens_k shaped [B, 1], RotaryEmbedding 3-D without num_heads, MultiHeadAttention with keys in
# heads and a past.
case("gqa_ragged_first_prompt", "GroupQueryAttention", gqa_in(S4, empty, [3, 1], S4), P3, A)
case("gqa_longer_past_buffer", "GroupQueryAttention", gqa_in(1, (r(B, Hkv, 8, 8), r(B, Hkv, 8, 8)), [4, 4], 5), P3, A)
case("gqa_local_window_0", "GroupQueryAttention", gqa_in(S4, empty, [S4 - 1] * 2, S4), P3, {**A, "local_window_size": 0})
gi = gqa_in(S4, empty, [S4 - 1] * 2, S4)
gi[5] = ("seqlens_k", np.array([[S4 - 1]] * 2, np.int32))
case("gqa_seqlens_Bx1", "GroupQueryAttention", gi, P3, A)
case("rotary_3d_no_num_heads", "RotaryEmbedding", [("x", r(B, S, D)), ("p", pid), ("c", r(M, 4)), ("s", r(M, 4))], Y, {}, consts=("c", "s"))
case("mha_kv_in_heads_past", "MultiHeadAttention", [("q", r(B, S, D)), ("k", r(B, N, L, h)), ("v", r(B, N, L, h)), ("", None), ("", None), ("", None),
                                                    ("pk", r(B, N, 2, h)), ("pv", r(B, N, 2, h))], [("y", F), ("present_k", F), ("present_v", F)],
     {"num_heads": N})
print("wrote", len(os.listdir(OUT)), "cases to", OUT)
