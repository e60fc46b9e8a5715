# Hostile ONNX models for the red-team round (docs/redteam.md): python3 THIS_FILE [OUT_DIR];
# each model is OUT_DIR/<set>/<name>/model.onnx (+ test_data_set_0 where its values matter).
# Needs the onnx and numpy packages; run them with scripts/redteam/run_all.sh.
import os, sys, numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
OUT = os.path.join(sys.argv[1] if len(sys.argv) > 1 else "/tmp/fusor_redteam", "models3"); os.makedirs(OUT, exist_ok=True)
F = T.FLOAT
def vi(name, et, shape): return h.make_tensor_value_info(name, et, shape)
def c(name, arr): return nh.from_array(np.asarray(arr), name)
def n(op, i, o, **kw): return h.make_node(op, i, o, name=op.lower()+"_node", **kw)
def save(name, nodes, inputs, outputs, inits=(), opset=23, data=None):
    d = os.path.join(OUT, name); os.makedirs(d, exist_ok=True)
    g = h.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)]); m.ir_version = 10
    open(os.path.join(d, "model.onnx"), "wb").write(m.SerializeToString())
    if data is not None:
        td = os.path.join(d, "test_data_set_0"); os.makedirs(td, exist_ok=True)
        for i, (nm, a) in enumerate(data):
            open(os.path.join(td, f"input_{i}.pb"), "wb").write(nh.from_array(np.asarray(a), nm).SerializeToString())
r = np.random.default_rng(0)
f32 = lambda *s: r.standard_normal(s).astype(np.float32)
# RotaryEmbedding position_ids out of range at runtime
x = f32(1, 2, 3, 4)
save("rotary_pos_oor", [n("RotaryEmbedding", ["x", "cos", "sin", "p"], ["y"])], [vi("x", F, [1, 2, 3, 4]), vi("p", T.INT64, [1, 3])], [vi("y", F, None)],
     [c("cos", f32(5, 2)), c("sin", f32(5, 2))], data=[("x", x), ("p", np.array([[0, 7, -1]], np.int64))])
save("rotary_rot_dim_odd", [n("RotaryEmbedding", ["x", "cos", "sin", "p"], ["y"], rotary_embedding_dim=3)], [vi("x", F, [1, 2, 3, 4]), vi("p", T.INT64, [1, 3])], [vi("y", F, None)],
     [c("cos", f32(5, 2)), c("sin", f32(5, 2))], data=[("x", x), ("p", np.array([[0, 1, 2]], np.int64))])
save("rotary_rot_dim_big", [n("RotaryEmbedding", ["x", "cos", "sin", "p"], ["y"], rotary_embedding_dim=64)], [vi("x", F, [1, 2, 3, 4]), vi("p", T.INT64, [1, 3])], [vi("y", F, None)],
     [c("cos", f32(5, 32)), c("sin", f32(5, 32))], data=[("x", x), ("p", np.array([[0, 1, 2]], np.int64))])
save("rotary_heads0", [n("RotaryEmbedding", ["x", "cos", "sin", "p"], ["y"], num_heads=0)], [vi("x", F, [1, 3, 8]), vi("p", T.INT64, [1, 3])], [vi("y", F, None)],
     [c("cos", f32(5, 2)), c("sin", f32(5, 2))], data=[("x", f32(1, 3, 8)), ("p", np.array([[0, 1, 2]], np.int64))])
save("rotary_heads3", [n("RotaryEmbedding", ["x", "cos", "sin", "p"], ["y"], num_heads=3)], [vi("x", F, [1, 3, 8]), vi("p", T.INT64, [1, 3])], [vi("y", F, None)],
     [c("cos", f32(5, 2)), c("sin", f32(5, 2))], data=[("x", f32(1, 3, 8)), ("p", np.array([[0, 1, 2]], np.int64))])
# Attention hostile
q = f32(1, 2, 3, 4)
save("attention_heads_mismatch", [n("Attention", ["q", "k", "v"], ["y"])], [vi("q", F, [1, 2, 3, 4]), vi("k", F, [1, 3, 3, 4]), vi("v", F, [1, 3, 3, 4])], [vi("y", F, None)])
save("attention_3d_no_heads", [n("Attention", ["q", "k", "v"], ["y"])], [vi("q", F, [1, 3, 8]), vi("k", F, [1, 3, 8]), vi("v", F, [1, 3, 8])], [vi("y", F, None)])
save("attention_3d_heads0", [n("Attention", ["q", "k", "v"], ["y"], q_num_heads=0, kv_num_heads=0)], [vi("q", F, [1, 3, 8]), vi("k", F, [1, 3, 8]), vi("v", F, [1, 3, 8])], [vi("y", F, None)])
save("attention_3d_heads3", [n("Attention", ["q", "k", "v"], ["y"], q_num_heads=3, kv_num_heads=3)], [vi("q", F, [1, 3, 8]), vi("k", F, [1, 3, 8]), vi("v", F, [1, 3, 8])], [vi("y", F, None)])
save("attention_mask_bad_shape", [n("Attention", ["q", "k", "v", "m"], ["y"])], [vi("q", F, [1, 2, 3, 4]), vi("k", F, [1, 2, 3, 4]), vi("v", F, [1, 2, 3, 4]), vi("m", F, [7, 9])], [vi("y", F, None)])
save("attention_softcap_neg", [n("Attention", ["q", "k", "v"], ["y"], softcap=-1.0, scale=float("nan"))], [vi("q", F, [1, 2, 3, 4]), vi("k", F, [1, 2, 3, 4]), vi("v", F, [1, 2, 3, 4])], [vi("y", F, None)])
save("attention_qk_matmul_output_mode9", [n("Attention", ["q", "k", "v"], ["y", "", "", "qk"], qk_matmul_output_mode=9)], [vi("q", F, [1, 2, 3, 4]), vi("k", F, [1, 2, 3, 4]), vi("v", F, [1, 2, 3, 4])], [vi("y", F, None), vi("qk", F, None)])
save("attention_past_mismatch", [n("Attention", ["q", "k", "v", "", "pk", "pv"], ["y", "pk2", "pv2"])], [vi("q", F, [1, 2, 3, 4]), vi("k", F, [1, 2, 3, 4]), vi("v", F, [1, 2, 3, 4]), vi("pk", F, [1, 2, 5, 7]), vi("pv", F, [1, 2, 5, 4])], [vi("y", F, None), vi("pk2", F, None), vi("pv2", F, None)])
# quantization hostile
save("dql_block0", [n("DequantizeLinear", ["x", "s"], ["y"], axis=1, block_size=0)], [vi("x", T.INT8, [2, 4])], [vi("y", F, None)], [c("s", np.ones((2, 2), np.float32))], data=[("x", np.ones((2, 4), np.int8))])
save("dql_block_neg", [n("DequantizeLinear", ["x", "s"], ["y"], axis=1, block_size=-2)], [vi("x", T.INT8, [2, 4])], [vi("y", F, None)], [c("s", np.ones((2, 2), np.float32))], data=[("x", np.ones((2, 4), np.int8))])
save("dql_block_huge", [n("DequantizeLinear", ["x", "s"], ["y"], axis=1, block_size=2**62)], [vi("x", T.INT8, [2, 4])], [vi("y", F, None)], [c("s", np.ones((2, 1), np.float32))], data=[("x", np.ones((2, 4), np.int8))])
save("dql_block_scale_short", [n("DequantizeLinear", ["x", "s"], ["y"], axis=1, block_size=1)], [vi("x", T.INT8, [2, 4])], [vi("y", F, None)], [c("s", np.ones((2, 2), np.float32))], data=[("x", np.ones((2, 4), np.int8))])
save("dql_axis_oor", [n("DequantizeLinear", ["x", "s"], ["y"], axis=5)], [vi("x", T.INT8, [2, 4])], [vi("y", F, None)], [c("s", np.ones((4,), np.float32))], data=[("x", np.ones((2, 4), np.int8))])
save("dql_scale_len_wrong", [n("DequantizeLinear", ["x", "s"], ["y"], axis=1)], [vi("x", T.INT8, [2, 4])], [vi("y", F, None)], [c("s", np.ones((3,), np.float32))], data=[("x", np.ones((2, 4), np.int8))])
save("dql_zp_type_mismatch", [n("DequantizeLinear", ["x", "s", "z"], ["y"])], [vi("x", T.INT8, [2, 4])], [vi("y", F, None)], [c("s", np.array(1, np.float32)), c("z", np.array(3, np.uint8))], data=[("x", np.ones((2, 4), np.int8))])
save("dql_zp_shape_mismatch", [n("DequantizeLinear", ["x", "s", "z"], ["y"], axis=1)], [vi("x", T.INT8, [2, 4])], [vi("y", F, None)], [c("s", np.ones(4, np.float32)), c("z", np.zeros(2, np.int8))], data=[("x", np.ones((2, 4), np.int8))])
save("ql_block0", [n("QuantizeLinear", ["x", "s"], ["y"], axis=1, block_size=0)], [vi("x", F, [2, 4])], [vi("y", T.UINT8, None)], [c("s", np.ones((2, 2), np.float32))], data=[("x", f32(2, 4))])
save("ql_scale_zero_nan", [n("QuantizeLinear", ["x", "s"], ["y"])], [vi("x", F, [3])], [vi("y", T.INT8, None)], [c("s", np.array(0, np.float32))], data=[("x", np.array([1, np.nan, -np.inf], np.float32))])
save("ql_output_dtype_bogus", [n("QuantizeLinear", ["x", "s"], ["y"], output_dtype=1)], [vi("x", F, [3])], [vi("y", T.INT8, None)], [c("s", np.array(1, np.float32))], data=[("x", np.array([1, 2, 3], np.float32))])
save("ql_nan_to_int8", [n("QuantizeLinear", ["x", "s"], ["y"])], [vi("x", F, [4])], [vi("y", T.INT8, None)], [c("s", np.array(1e-30, np.float32))], data=[("x", np.array([np.nan, np.inf, -np.inf, 1e30], np.float32))])
save("dynql_nan", [n("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])], [vi("x", F, [4])], [vi("y", T.UINT8, None), vi("s", F, None), vi("z", T.UINT8, None)], data=[("x", np.array([np.nan, np.inf, -np.inf, 1], np.float32))])
save("dynql_all_zero", [n("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])], [vi("x", F, [4])], [vi("y", T.UINT8, None), vi("s", F, None), vi("z", T.UINT8, None)], data=[("x", np.zeros(4, np.float32))])
save("dynql_empty", [n("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])], [vi("x", F, [0])], [vi("y", T.UINT8, None), vi("s", F, None), vi("z", T.UINT8, None)], data=[("x", np.zeros(0, np.float32))])
save("matmulint_zp_wrong", [n("MatMulInteger", ["a", "b", "za"], ["y"])], [vi("a", T.UINT8, [2, 3]), vi("b", T.UINT8, [3, 2])], [vi("y", T.INT32, None)], [c("za", np.zeros(5, np.uint8))],
     data=[("a", np.ones((2, 3), np.uint8)), ("b", np.ones((3, 2), np.uint8))])
save("qlinearmatmul_scale_vec_wrong", [n("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])], [vi("a", T.UINT8, [2, 3]), vi("b", T.UINT8, [3, 2])], [vi("y", T.UINT8, None)],
     [c("sa", np.ones(7, np.float32)), c("za", np.zeros(7, np.uint8)), c("sb", np.array(1, np.float32)), c("zb", np.array(0, np.uint8)), c("sy", np.array(0, np.float32)), c("zy", np.array(0, np.uint8))],
     data=[("a", np.ones((2, 3), np.uint8)), ("b", np.ones((3, 2), np.uint8))])
# recurrent hostile
W = f32(1, 12, 2); R = f32(1, 12, 3)
def lstm(name, data_lens=None, ins_extra=(), **kw):
    ins = [vi("x", F, [4, 1, 2])]; inames = ["x", "W", "R"]; inits = [c("W", W), c("R", R)]; data = [("x", f32(4, 1, 2))]
    if data_lens is not None:
        inames += ["", "L"]; ins.append(vi("L", T.INT32, [1])); data.append(("L", np.array(data_lens, np.int32)))
    save(name, [n("LSTM", inames, ["Y", "Yh"], **kw)], ins, [vi("Y", F, None), vi("Yh", F, None)], inits, data=data)
lstm("lstm_ok", hidden_size=3)
lstm("lstm_seqlen_oor", data_lens=[9], hidden_size=3)
lstm("lstm_seqlen_neg", data_lens=[-3], hidden_size=3)
lstm("lstm_hidden0", hidden_size=0)
lstm("lstm_hidden_neg", hidden_size=-3)
lstm("lstm_hidden_mismatch", hidden_size=5)
lstm("lstm_no_hidden")
lstm("lstm_direction_bogus", hidden_size=3, direction="sideways")
lstm("lstm_activation_bogus", hidden_size=3, activations=["Sigmoid", "Evil", "Tanh"])
lstm("lstm_activation_count", hidden_size=3, activations=["Sigmoid"])
lstm("lstm_layout_bogus", hidden_size=3, layout=7)
lstm("lstm_clip_neg", hidden_size=3, clip=-1.0)
lstm("lstm_bidir_W1", hidden_size=3, direction="bidirectional")
save("gru_seqlen_oor", [n("GRU", ["x", "W", "R", "", "L"], ["Y"], hidden_size=3)], [vi("x", F, [4, 2, 2]), vi("L", T.INT32, [2])], [vi("Y", F, None)], [c("W", f32(1, 9, 2)), c("R", f32(1, 9, 3))],
     data=[("x", f32(4, 2, 2)), ("L", np.array([2, 1000], np.int32))])
save("rnn_seqlen_oor", [n("RNN", ["x", "W", "R", "", "L"], ["Y"], hidden_size=3)], [vi("x", F, [4, 2, 2]), vi("L", T.INT32, [2])], [vi("Y", F, None)], [c("W", f32(1, 3, 2)), c("R", f32(1, 3, 3))],
     data=[("x", f32(4, 2, 2)), ("L", np.array([-2, 3], np.int32))])
# GridSample / Col2Im / Unique / CenterCropPad / DFT / AffineGrid / ScatterND reduction / GatherND batch dims
save("gridsample_nan_grid", [n("GridSample", ["x", "g"], ["y"])], [vi("x", F, [1, 1, 3, 3]), vi("g", F, [1, 2, 2, 2])], [vi("y", F, None)],
     data=[("x", f32(1, 1, 3, 3)), ("g", np.array([np.nan, np.inf, -np.inf, 1e30, 1e38, -1e38, 0, 0], np.float32).reshape(1, 2, 2, 2))])
for mode in ["bilinear", "nearest", "bicubic"]:
    for pm in ["zeros", "border", "reflection"]:
        save(f"gridsample_huge_{mode}_{pm}", [n("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode=pm)], [vi("x", F, [1, 1, 3, 3]), vi("g", F, [1, 2, 2, 2])], [vi("y", F, None)],
             data=[("x", f32(1, 1, 3, 3)), ("g", np.array([np.nan, np.inf, -np.inf, 1e30, 1e38, -1e38, 3e9, -3e9], np.float32).reshape(1, 2, 2, 2))], opset=20)
save("col2im_bad", [n("Col2Im", ["x", "is", "bs"], ["y"])], [vi("x", F, [1, 4, 5])], [vi("y", F, None)], [c("is", np.array([3, 3], np.int64)), c("bs", np.array([2, 2], np.int64))])
save("col2im_block0", [n("Col2Im", ["x", "is", "bs"], ["y"])], [vi("x", F, [1, 4, 4])], [vi("y", F, None)], [c("is", np.array([3, 3], np.int64)), c("bs", np.array([0, 2], np.int64))])
save("col2im_huge_image", [n("Col2Im", ["x", "is", "bs"], ["y"])], [vi("x", F, [1, 4, 4])], [vi("y", F, None)], [c("is", np.array([2**40, 3], np.int64)), c("bs", np.array([2, 2], np.int64))])
save("unique_axis_oor", [n("Unique", ["x"], ["y", "i", "inv", "cnt"], axis=4)], [vi("x", F, [3, 2])], [vi("y", F, None), vi("i", T.INT64, None), vi("inv", T.INT64, None), vi("cnt", T.INT64, None)])
save("unique_nan", [n("Unique", ["x"], ["y", "i", "inv", "cnt"])], [vi("x", F, [5])], [vi("y", F, None), vi("i", T.INT64, None), vi("inv", T.INT64, None), vi("cnt", T.INT64, None)],
     data=[("x", np.array([np.nan, 1, np.nan, -0.0, 0.0], np.float32))])
save("centercroppad_neg", [n("CenterCropPad", ["x", "s"], ["y"])], [vi("x", F, [3, 2])], [vi("y", F, None)], [c("s", np.array([-4, 2**40], np.int64))])
save("dft_length_huge", [n("DFT", ["x", "l"], ["y"])], [vi("x", F, [1, 4, 1])], [vi("y", F, None)], [c("l", np.array(2**40, np.int64))], opset=20)
save("dft_axis_oor", [n("DFT", ["x", "", "a"], ["y"])], [vi("x", F, [1, 4, 1])], [vi("y", F, None)], [c("a", np.array(9, np.int64))], opset=20)
save("affinegrid_huge", [n("AffineGrid", ["t", "s"], ["y"])], [vi("t", F, [1, 2, 3])], [vi("y", F, None)], [c("s", np.array([1, 1, 2**30, 2**30], np.int64))], opset=20)
save("gathernd_batchdims_oor", [n("GatherND", ["x", "i"], ["y"], batch_dims=5)], [vi("x", F, [2, 3]), vi("i", T.INT64, [2, 1])], [vi("y", F, None)], data=[("x", f32(2, 3)), ("i", np.zeros((2, 1), np.int64))])
save("gather_i64_2p40", [n("Gather", ["x", "i"], ["y"])], [vi("x", F, [4]), vi("i", T.INT64, [2])], [vi("y", F, None)], data=[("x", f32(4)), ("i", np.array([2**40, 2**40 + 1], np.int64))])
save("gather_fused_oor", [n("Gather", ["x", "i"], ["t"]), h.make_node("Relu", ["t"], ["y"], name="r")], [vi("x", F, [4, 8]), vi("i", T.INT64, [2])], [vi("y", F, None)], data=[("x", f32(4, 8)), ("i", np.array([2**33, 1], np.int64))])
save("gather_uint64_huge", [n("Gather", ["x", "i"], ["y"])], [vi("x", F, [4]), vi("i", T.UINT64, [2])], [vi("y", F, None)], data=[("x", f32(4)), ("i", np.array([2**64 - 1, 1], np.uint64))])
save("gather_f_idx", [n("Gather", ["x", "i"], ["y"])], [vi("x", F, [4]), vi("i", T.INT16, [2])], [vi("y", F, None)], data=[("x", f32(4)), ("i", np.array([-32768, 1], np.int16))])
save("scatternd_dup_idx_add", [n("ScatterND", ["x", "i", "u"], ["y"], reduction="mul")], [vi("x", T.INT32, [4]), vi("i", T.INT64, [3, 1]), vi("u", T.INT32, [3])], [vi("y", T.INT32, None)],
     data=[("x", np.array([2**30, 1, 1, 1], np.int32)), ("i", np.array([[0], [0], [0]], np.int64)), ("u", np.array([4, 4, 4], np.int32))])
save("scatternd_reduction_bogus", [n("ScatterND", ["x", "i", "u"], ["y"], reduction="evil")], [vi("x", F, [4]), vi("i", T.INT64, [1, 1]), vi("u", F, [1])], [vi("y", F, None)])
save("bitwise_shift_neg_i", [n("BitShift", ["x", "s"], ["y"], direction="UP")], [vi("x", T.UINT8, [3]), vi("s", T.UINT8, [3])], [vi("y", T.UINT8, None)])
save("mod_fmod0_float", [n("Mod", ["a", "b"], ["y"])], [vi("a", F, [3]), vi("b", F, [3])], [vi("y", F, None)])
save("mod_float_zero", [n("Mod", ["a", "b"], ["y"], fmod=1)], [vi("a", F, [3]), vi("b", F, [3])], [vi("y", F, None)], data=[("a", np.array([1, -1, 0], np.float32)), ("b", np.zeros(3, np.float32))])
save("clip_min_gt_max_int", [n("Clip", ["x", "lo", "hi"], ["y"])], [vi("x", T.INT32, [3])], [vi("y", T.INT32, None)], [c("lo", np.array(5, np.int32)), c("hi", np.array(-5, np.int32))], data=[("x", np.array([-9, 0, 9], np.int32))])
save("cast_f_to_int_nan", [n("Cast", ["x"], ["y"], to=T.INT32)], [vi("x", F, [5])], [vi("y", T.INT32, None)], data=[("x", np.array([np.nan, np.inf, -np.inf, 3e9, -3e9], np.float32))])
save("cast_f_to_i64_nan", [n("Cast", ["x"], ["y"], to=T.INT64)], [vi("x", F, [5])], [vi("y", T.INT64, None)], data=[("x", np.array([np.nan, np.inf, -np.inf, 1e19, -1e19], np.float32))])
save("cast_f_to_u8_nan", [n("Cast", ["x"], ["y"], to=T.UINT8)], [vi("x", F, [5])], [vi("y", T.UINT8, None)], data=[("x", np.array([np.nan, np.inf, -np.inf, 300, -5], np.float32))])
save("cast_f_to_u64_neg", [n("Cast", ["x"], ["y"], to=T.UINT64)], [vi("x", F, [5])], [vi("y", T.UINT64, None)], data=[("x", np.array([np.nan, np.inf, -np.inf, 2e19, -5], np.float32))])
save("cast_d_to_i32", [n("Cast", ["x"], ["y"], to=T.INT32)], [vi("x", T.DOUBLE, [4])], [vi("y", T.INT32, None)], data=[("x", np.array([np.nan, 1e300, -1e300, 2.5], np.float64))])
save("onehot_float_idx_nan", [n("OneHot", ["i", "d", "v"], ["y"])], [vi("i", F, [3])], [vi("y", F, None)], [c("d", np.array(4, np.int64)), c("v", np.array([0, 1], np.float32))], data=[("i", np.array([np.nan, 1e30, -1e30], np.float32))])
save("gather_float_via_cast", [n("Cast", ["f"], ["i"], to=T.INT64), h.make_node("Gather", ["x", "i"], ["y"], name="g")], [vi("x", F, [4]), vi("f", F, [2])], [vi("y", F, None)], data=[("x", f32(4)), ("f", np.array([np.nan, 1e30], np.float32))])
save("argmax_all_nan", [n("ArgMax", ["x"], ["y"])], [vi("x", F, [4])], [vi("y", T.INT64, None)], data=[("x", np.full(4, np.nan, np.float32))])
save("resize_nearest_huge_roi", [n("Resize", ["x", "roi", "s"], ["y"], coordinate_transformation_mode="tf_crop_and_resize")], [vi("x", F, [1, 1, 2, 2])], [vi("y", F, None)], [c("roi", np.array([0, 0, -1e30, np.nan, 1, 1, 1e30, np.inf], np.float32)), c("s", np.array([1, 1, 2, 2], np.float32))])
save("maxunpool_runtime_idx", [n("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2, 2], strides=[2, 2])], [vi("x", F, [1, 1, 2, 2]), vi("i", T.INT64, [1, 1, 2, 2])], [vi("y", F, None)], data=[("x", f32(1, 1, 2, 2)), ("i", np.array([0, -5, 3, 2**40], np.int64).reshape(1, 1, 2, 2))])
save("einsum_huge_work", [n("Einsum", ["a", "b"], ["y"], equation="ij,kl->")], [vi("a", F, [300, 300]), vi("b", F, [300, 300])], [vi("y", F, None)])
save("matmul_big_k_empty", [n("MatMul", ["a", "b"], ["y"])], [vi("a", F, [2**20, 0]), vi("b", F, [0, 2**20])], [vi("y", F, None)])
save("topk_runtime_k_huge_i64", [n("TopK", ["x", "k"], ["v", "i"])], [vi("x", F, [4]), vi("k", T.INT64, [1])], [vi("v", F, None), vi("i", T.INT64, None)], data=[("x", f32(4)), ("k", np.array([-2**63], np.int64))])
save("hardmax_rank0", [n("Hardmax", ["x"], ["y"])], [vi("x", F, [])], [vi("y", F, None)])
save("lpnorm_p3", [n("LpNormalization", ["x"], ["y"], p=3)], [vi("x", F, [2, 3])], [vi("y", F, None)])
save("size_of_huge_empty", [n("Size", ["x"], ["y"])], [vi("x", F, [2**50, 0])], [vi("y", T.INT64, None)])
save("shape_start_end_extreme", [n("Shape", ["x"], ["y"], start=-2**63, end=2**63-1)], [vi("x", F, [2, 3])], [vi("y", T.INT64, None)])
save("reduce_empty_max", [n("ReduceMax", ["x", "a"], ["y"], keepdims=0)], [vi("x", F, [0, 3])], [vi("y", F, None)], [c("a", np.array([0], np.int64))], data=[("x", np.zeros((0, 3), np.float32))])
save("reduce_empty_max_int", [n("ReduceMax", ["x", "a"], ["y"], keepdims=0)], [vi("x", T.INT32, [0, 3])], [vi("y", T.INT32, None)], [c("a", np.array([0], np.int64))], data=[("x", np.zeros((0, 3), np.int32))])
save("argmax_empty", [n("ArgMax", ["x"], ["y"], axis=0)], [vi("x", F, [0, 3])], [vi("y", T.INT64, None)], data=[("x", np.zeros((0, 3), np.float32))])
save("softmax_empty_axis", [n("Softmax", ["x"], ["y"], axis=0)], [vi("x", F, [0, 3])], [vi("y", F, None)], data=[("x", np.zeros((0, 3), np.float32))])
save("topk_empty", [n("TopK", ["x", "k"], ["v", "i"])], [vi("x", F, [3, 0])], [vi("v", F, None), vi("i", T.INT64, None)], [c("k", np.array([0], np.int64))], data=[("x", np.zeros((3, 0), np.float32))])
save("layernorm_empty", [n("LayerNormalization", ["x", "s"], ["y"])], [vi("x", F, [3, 0])], [vi("y", F, None)], [c("s", np.ones(0, np.float32))], data=[("x", np.zeros((3, 0), np.float32))])
save("maxpool_empty_spatial", [n("MaxPool", ["x"], ["y"], kernel_shape=[1, 1])], [vi("x", F, [1, 1, 0, 3])], [vi("y", F, None)], data=[("x", np.zeros((1, 1, 0, 3), np.float32))])
save("globalavg_empty", [n("GlobalAveragePool", ["x"], ["y"])], [vi("x", F, [1, 2, 0, 0])], [vi("y", F, None)], data=[("x", np.zeros((1, 2, 0, 0), np.float32))])
save("conv_empty_channels", [n("Conv", ["x", "w"], ["y"])], [vi("x", F, [1, 0, 4, 4])], [vi("y", F, None)], [c("w", np.zeros((2, 0, 1, 1), np.float32))], data=[("x", np.zeros((1, 0, 4, 4), np.float32))])
save("matmul_k0", [n("MatMul", ["a", "b"], ["y"])], [vi("a", F, [3, 0]), vi("b", F, [0, 4])], [vi("y", F, None)], data=[("a", np.zeros((3, 0), np.float32)), ("b", np.zeros((0, 4), np.float32))])
save("gemm_k0_bias", [n("Gemm", ["a", "b", "c"], ["y"])], [vi("a", F, [3, 0]), vi("b", F, [0, 4])], [vi("y", F, None)], [c("c", f32(4))], data=[("a", np.zeros((3, 0), np.float32)), ("b", np.zeros((0, 4), np.float32))])
save("instnorm_empty_spatial", [n("InstanceNormalization", ["x", "s", "b"], ["y"])], [vi("x", F, [1, 2, 0])], [vi("y", F, None)], [c("s", np.ones(2, np.float32)), c("b", np.ones(2, np.float32))], data=[("x", np.zeros((1, 2, 0), np.float32))])
save("cumsum_empty", [n("CumSum", ["x", "a"], ["y"])], [vi("x", F, [0, 3])], [vi("y", F, None)], [c("a", np.array(0, np.int64))], data=[("x", np.zeros((0, 3), np.float32))])
