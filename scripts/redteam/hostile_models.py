# Hostile ONNX models for the red-team round (docs/redteam.md): python3 THIS_FILE [OUT_DIR];
# each model is OUT_DIR/<set>/<name>/model.onnx (+ test_data_set_0 where its values matter).
# Needs the onnx and numpy packages; run them with scripts/redteam/run_all.sh.
import os, sys, numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
OUT = os.path.join(sys.argv[1] if len(sys.argv) > 1 else "/tmp/fusor_redteam", "models")
os.makedirs(OUT, exist_ok=True)
I64MAX, I64MIN = 2**63-1, -2**63

def vi(name, et, shape):
    return h.make_tensor_value_info(name, et, shape)

def save(name, nodes, inputs, outputs, inits=(), opset=18, data=None, raw=False, ir=None, check=False, extra=None):
    d = os.path.join(OUT, name); os.makedirs(d, exist_ok=True)
    g = h.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = ir or 8
    if extra: extra(m)
    if raw is not False:
        open(os.path.join(d, "model.onnx"), "wb").write(raw(m.SerializeToString()))
    else:
        open(os.path.join(d, "model.onnx"), "wb").write(m.SerializeToString())
    if data is not None:
        td = os.path.join(d, "test_data_set_0"); os.makedirs(td, exist_ok=True)
        for i, (n, a) in enumerate(data):
            t = nh.from_array(np.asarray(a), n)
            open(os.path.join(td, f"input_{i}.pb"), "wb").write(t.SerializeToString())

F = T.FLOAT
def c(name, arr): return nh.from_array(np.asarray(arr), name)
def n(op, i, o, **kw): return h.make_node(op, i, o, name=op.lower()+"_node", **kw)

# --- shapes
save("huge_input_2p40", [n("Relu", ["x"], ["y"])], [vi("x", F, [2**40])], [vi("y", F, None)])
save("input_dims_overflow", [n("Relu", ["x"], ["y"])], [vi("x", F, [2**32, 2**32, 8])], [vi("y", F, None)])
save("input_negative_dim", [n("Relu", ["x"], ["y"])], [vi("x", F, [-5, 3])], [vi("y", F, None)])
save("rank10_transpose", [n("Transpose", ["x"], ["y"], perm=list(reversed(range(10))))], [vi("x", F, [2]*10)], [vi("y", F, None)])
save("rank12_add", [n("Add", ["x", "x"], ["y"])], [vi("x", F, [1,2]*6)], [vi("y", F, None)])
save("rank0_softmax", [n("Softmax", ["x"], ["y"])], [vi("x", F, [])], [vi("y", F, None)])
save("rank0_flatten", [n("Flatten", ["x"], ["y"])], [vi("x", F, [])], [vi("y", F, None)])
save("rank0_topk", [n("TopK", ["x", "k"], ["v", "i"])], [vi("x", F, [])], [vi("v", F, None), vi("i", T.INT64, None)], [c("k", np.array([1], np.int64))])
save("rank0_argmax", [n("ArgMax", ["x"], ["y"])], [vi("x", F, [])], [vi("y", T.INT64, None)])
save("rank0_reducemean_axes", [n("ReduceMean", ["x", "a"], ["y"])], [vi("x", F, [])], [vi("y", F, None)], [c("a", np.array([0], np.int64))])
# --- reshape
save("reshape_two_minus1", [n("Reshape", ["x", "s"], ["y"])], [vi("x", F, [2, 6])], [vi("y", F, None)], [c("s", np.array([-1, -1], np.int64))])
save("reshape_allowzero_0_and_minus1", [n("Reshape", ["x", "s"], ["y"], allowzero=1)], [vi("x", F, [2, 6])], [vi("y", F, None)], [c("s", np.array([0, -1], np.int64))])
save("reshape_minus1_zero_elems", [n("Reshape", ["x", "s"], ["y"])], [vi("x", F, [0, 6])], [vi("y", F, None)], [c("s", np.array([0, -1], np.int64))])
save("reshape_neg2", [n("Reshape", ["x", "s"], ["y"])], [vi("x", F, [2, 6])], [vi("y", F, None)], [c("s", np.array([-2, 6], np.int64))])
save("reshape_runtime_shape_bad", [n("Reshape", ["x", "s"], ["y"])], [vi("x", F, [2, 6]), vi("s", T.INT64, [2])], [vi("y", F, None)],
     data=[("x", np.ones((2,6), np.float32)), ("s", np.array([5, 7], np.int64))])
# --- expand / tile / constantofshape / range / resize / pad huge, runtime-valued
save("expand_runtime_2p40", [n("Expand", ["x", "s"], ["y"])], [vi("x", F, [1]), vi("s", T.INT64, [2])], [vi("y", F, None)],
     data=[("x", np.ones((1,), np.float32)), ("s", np.array([2**20, 2**20], np.int64))])
save("expand_runtime_overflow", [n("Expand", ["x", "s"], ["y"])], [vi("x", F, [1]), vi("s", T.INT64, [3])], [vi("y", F, None)],
     data=[("x", np.ones((1,), np.float32)), ("s", np.array([2**40, 2**40, 2**40], np.int64))])
save("expand_runtime_negative", [n("Expand", ["x", "s"], ["y"])], [vi("x", F, [1]), vi("s", T.INT64, [2])], [vi("y", F, None)],
     data=[("x", np.ones((1,), np.float32)), ("s", np.array([-3, 2], np.int64))])
save("tile_runtime_huge", [n("Tile", ["x", "r"], ["y"])], [vi("x", F, [2]), vi("r", T.INT64, [1])], [vi("y", F, None)],
     data=[("x", np.ones((2,), np.float32)), ("r", np.array([2**50], np.int64))])
save("tile_runtime_negative", [n("Tile", ["x", "r"], ["y"])], [vi("x", F, [2]), vi("r", T.INT64, [1])], [vi("y", F, None)],
     data=[("x", np.ones((2,), np.float32)), ("r", np.array([-1], np.int64))])
save("cos_runtime_huge", [n("ConstantOfShape", ["s"], ["y"])], [vi("s", T.INT64, [2])], [vi("y", F, None)],
     data=[("s", np.array([2**21, 2**21], np.int64))])
save("cos_runtime_neg", [n("ConstantOfShape", ["s"], ["y"])], [vi("s", T.INT64, [2])], [vi("y", F, None)],
     data=[("s", np.array([-1, 4], np.int64))])
save("cos_const_huge", [n("ConstantOfShape", ["s"], ["y"])], [], [vi("y", F, None)], [c("s", np.array([2**21, 2**21], np.int64))])
save("range_runtime_huge", [n("Range", ["a", "b", "d"], ["y"])], [vi("a", T.INT64, []), vi("b", T.INT64, []), vi("d", T.INT64, [])], [vi("y", T.INT64, None)],
     data=[("a", np.array(0, np.int64)), ("b", np.array(2**62, np.int64)), ("d", np.array(1, np.int64))])
save("range_runtime_delta0", [n("Range", ["a", "b", "d"], ["y"])], [vi("a", T.INT64, []), vi("b", T.INT64, []), vi("d", T.INT64, [])], [vi("y", T.INT64, None)],
     data=[("a", np.array(0, np.int64)), ("b", np.array(5, np.int64)), ("d", np.array(0, np.int64))])
save("range_float_runtime_delta0", [n("Range", ["a", "b", "d"], ["y"])], [vi("a", F, []), vi("b", F, []), vi("d", F, [])], [vi("y", F, None)],
     data=[("a", np.array(0, np.float32)), ("b", np.array(5, np.float32)), ("d", np.array(0, np.float32))])
save("range_float_nan", [n("Range", ["a", "b", "d"], ["y"])], [vi("a", F, []), vi("b", F, []), vi("d", F, [])], [vi("y", F, None)],
     data=[("a", np.array(0, np.float32)), ("b", np.array(np.inf, np.float32)), ("d", np.array(1, np.float32))])
save("range_float_nan2", [n("Range", ["a", "b", "d"], ["y"])], [vi("a", F, []), vi("b", F, []), vi("d", F, [])], [vi("y", F, None)],
     data=[("a", np.array(0, np.float32)), ("b", np.array(np.nan, np.float32)), ("d", np.array(1, np.float32))])
save("range_float_tiny_delta", [n("Range", ["a", "b", "d"], ["y"])], [vi("a", F, []), vi("b", F, []), vi("d", F, [])], [vi("y", F, None)],
     data=[("a", np.array(0, np.float32)), ("b", np.array(1, np.float32)), ("d", np.array(1e-30, np.float32))])
save("resize_scales_huge", [n("Resize", ["x", "", "s"], ["y"])], [vi("x", F, [1, 1, 2, 2])], [vi("y", F, None)], [c("s", np.array([1, 1, 1e9, 1e9], np.float32))])
save("resize_scales_nan", [n("Resize", ["x", "", "s"], ["y"])], [vi("x", F, [1, 1, 2, 2])], [vi("y", F, None)], [c("s", np.array([1, 1, np.nan, np.inf], np.float32))])
save("resize_scales_neg", [n("Resize", ["x", "", "s"], ["y"])], [vi("x", F, [1, 1, 2, 2])], [vi("y", F, None)], [c("s", np.array([1, 1, -2, 2], np.float32))])
save("resize_runtime_scales", [n("Resize", ["x", "", "s"], ["y"])], [vi("x", F, [1, 1, 2, 2]), vi("s", F, [4])], [vi("y", F, None)],
     data=[("x", np.ones((1,1,2,2), np.float32)), ("s", np.array([1, 1, 1e9, 1e9], np.float32))])
save("resize_sizes_zero", [n("Resize", ["x", "", "", "s"], ["y"])], [vi("x", F, [1, 1, 2, 2])], [vi("y", F, None)], [c("s", np.array([1, 1, 0, 3], np.int64))])
save("resize_sizes_neg", [n("Resize", ["x", "", "", "s"], ["y"])], [vi("x", F, [1, 1, 2, 2])], [vi("y", F, None)], [c("s", np.array([1, 1, -4, 3], np.int64))])
save("resize_cubic_coeff_nan", [n("Resize", ["x", "", "s"], ["y"], mode="cubic", cubic_coeff_a=float("nan"))], [vi("x", F, [1, 1, 2, 2])], [vi("y", F, None)], [c("s", np.array([1, 1, 2, 2], np.float32))])
save("upsample_huge", [n("Upsample", ["x", "s"], ["y"])], [vi("x", F, [1, 1, 2, 2])], [vi("y", F, None)], [c("s", np.array([1, 1, 1e9, 1e9], np.float32))], opset=9)
save("pad_runtime_huge", [n("Pad", ["x", "p"], ["y"])], [vi("x", F, [2, 2]), vi("p", T.INT64, [4])], [vi("y", F, None)],
     data=[("x", np.ones((2,2), np.float32)), ("p", np.array([2**30, 2**30, 0, 0], np.int64))])
save("pad_runtime_negative_big", [n("Pad", ["x", "p"], ["y"])], [vi("x", F, [2, 2]), vi("p", T.INT64, [4])], [vi("y", F, None)],
     data=[("x", np.ones((2,2), np.float32)), ("p", np.array([-5, 0, 0, 0], np.int64))])
save("pad_reflect_too_big", [n("Pad", ["x", "p"], ["y"], mode="reflect")], [vi("x", F, [2, 2])], [vi("y", F, None)], [c("p", np.array([5, 5, 5, 5], np.int64))])
save("pad_wrap_too_big", [n("Pad", ["x", "p"], ["y"], mode="wrap")], [vi("x", F, [2, 2])], [vi("y", F, None)], [c("p", np.array([5, 5, 5, 5], np.int64))])
save("pad_edge_empty", [n("Pad", ["x", "p"], ["y"], mode="edge")], [vi("x", F, [0, 2])], [vi("y", F, None)], [c("p", np.array([1, 1, 1, 1], np.int64))])
save("pad_reflect_runtime", [n("Pad", ["x", "p"], ["y"], mode="reflect")], [vi("x", F, [2, 2]), vi("p", T.INT64, [4])], [vi("y", F, None)],
     data=[("x", np.ones((2,2), np.float32)), ("p", np.array([5, 5, 5, 5], np.int64))])
save("slice_runtime_extreme", [n("Slice", ["x", "s", "e", "a", "st"], ["y"])], [vi("x", F, [5]), vi("s", T.INT64, [1]), vi("e", T.INT64, [1]), vi("st", T.INT64, [1])], [vi("y", F, None)], [c("a", np.array([0], np.int64))],
     data=[("x", np.arange(5, dtype=np.float32)), ("s", np.array([I64MAX], np.int64)), ("e", np.array([I64MIN], np.int64)), ("st", np.array([I64MIN], np.int64))])
save("slice_runtime_step0", [n("Slice", ["x", "s", "e", "a", "st"], ["y"])], [vi("x", F, [5]), vi("s", T.INT64, [1]), vi("e", T.INT64, [1]), vi("st", T.INT64, [1])], [vi("y", F, None)], [c("a", np.array([0], np.int64))],
     data=[("x", np.arange(5, dtype=np.float32)), ("s", np.array([0], np.int64)), ("e", np.array([5], np.int64)), ("st", np.array([0], np.int64))])
save("slice_axis_dup", [n("Slice", ["x", "s", "e", "a"], ["y"])], [vi("x", F, [5, 5])], [vi("y", F, None)], [c("s", np.array([0, 1], np.int64)), c("e", np.array([3, 4], np.int64)), c("a", np.array([0, 0], np.int64))])
save("slice_axis_oor", [n("Slice", ["x", "s", "e", "a"], ["y"])], [vi("x", F, [5, 5])], [vi("y", F, None)], [c("s", np.array([0], np.int64)), c("e", np.array([3], np.int64)), c("a", np.array([7], np.int64))])
# --- data-dependent index ops, runtime indices
for dt, et in [(np.int64, T.INT64), (np.int32, T.INT32)]:
    tag = "i64" if dt == np.int64 else "i32"
    save(f"gather_oor_{tag}", [n("Gather", ["x", "i"], ["y"])], [vi("x", F, [4, 3]), vi("i", et, [2])], [vi("y", F, None)],
         data=[("x", np.random.rand(4,3).astype(np.float32)), ("i", np.array([1, 7], dt))])
    save(f"gather_neg_oor_{tag}", [n("Gather", ["x", "i"], ["y"])], [vi("x", F, [4, 3]), vi("i", et, [2])], [vi("y", F, None)],
         data=[("x", np.random.rand(4,3).astype(np.float32)), ("i", np.array([-5, 0], dt))])
    save(f"gather_min_{tag}", [n("Gather", ["x", "i"], ["y"])], [vi("x", F, [4, 3]), vi("i", et, [2])], [vi("y", F, None)],
         data=[("x", np.random.rand(4,3).astype(np.float32)), ("i", np.array([np.iinfo(dt).min, 0], dt))])
save("gather_neg_ok", [n("Gather", ["x", "i"], ["y"], axis=1)], [vi("x", F, [4, 3]), vi("i", T.INT64, [2])], [vi("y", F, None)],
     data=[("x", np.random.rand(4,3).astype(np.float32)), ("i", np.array([-1, -3], np.int64))])
save("gatherelements_oor", [n("GatherElements", ["x", "i"], ["y"], axis=1)], [vi("x", F, [2, 3]), vi("i", T.INT64, [2, 2])], [vi("y", F, None)],
     data=[("x", np.random.rand(2,3).astype(np.float32)), ("i", np.array([[0, 3], [-4, 1]], np.int64))])
save("gatherelements_idx_bigger", [n("GatherElements", ["x", "i"], ["y"], axis=1)], [vi("x", F, [2, 3]), vi("i", T.INT64, [5, 2])], [vi("y", F, None)],
     data=[("x", np.random.rand(2,3).astype(np.float32)), ("i", np.zeros((5, 2), np.int64))])
save("gathernd_oor", [n("GatherND", ["x", "i"], ["y"])], [vi("x", F, [2, 3]), vi("i", T.INT64, [2, 2])], [vi("y", F, None)],
     data=[("x", np.random.rand(2,3).astype(np.float32)), ("i", np.array([[0, 3], [1, 1]], np.int64))])
save("gathernd_last_dim_too_big", [n("GatherND", ["x", "i"], ["y"])], [vi("x", F, [2, 3]), vi("i", T.INT64, [2, 3])], [vi("y", F, None)],
     data=[("x", np.random.rand(2,3).astype(np.float32)), ("i", np.zeros((2, 3), np.int64))])
save("scatternd_oor", [n("ScatterND", ["x", "i", "u"], ["y"])], [vi("x", F, [4]), vi("i", T.INT64, [2, 1]), vi("u", F, [2])], [vi("y", F, None)],
     data=[("x", np.random.rand(4).astype(np.float32)), ("i", np.array([[1], [9]], np.int64)), ("u", np.ones(2, np.float32))])
save("scatterelements_oor", [n("ScatterElements", ["x", "i", "u"], ["y"])], [vi("x", F, [4]), vi("i", T.INT64, [2]), vi("u", F, [2])], [vi("y", F, None)],
     data=[("x", np.random.rand(4).astype(np.float32)), ("i", np.array([1, -9], np.int64)), ("u", np.ones(2, np.float32))])
save("scatter_oor_opset9", [n("Scatter", ["x", "i", "u"], ["y"])], [vi("x", F, [4]), vi("i", T.INT64, [2]), vi("u", F, [2])], [vi("y", F, None)],
     data=[("x", np.random.rand(4).astype(np.float32)), ("i", np.array([1, 99], np.int64)), ("u", np.ones(2, np.float32))], opset=9)
save("onehot_idx_oor", [n("OneHot", ["i", "d", "v"], ["y"])], [vi("i", T.INT64, [3])], [vi("y", F, None)], [c("d", np.array(4, np.int64)), c("v", np.array([0, 1], np.float32))],
     data=[("i", np.array([1, 9, -2], np.int64))])
save("onehot_depth0", [n("OneHot", ["i", "d", "v"], ["y"])], [vi("i", T.INT64, [3])], [vi("y", F, None)], [c("d", np.array(0, np.int64)), c("v", np.array([0, 1], np.float32))],
     data=[("i", np.array([1, 2, 0], np.int64))])
save("onehot_depth_neg", [n("OneHot", ["i", "d", "v"], ["y"])], [vi("i", T.INT64, [3])], [vi("y", F, None)], [c("d", np.array(-3, np.int64)), c("v", np.array([0, 1], np.float32))],
     data=[("i", np.array([1, 2, 0], np.int64))])
save("onehot_depth_runtime_huge", [n("OneHot", ["i", "d", "v"], ["y"])], [vi("i", T.INT64, [3]), vi("d", T.INT64, [])], [vi("y", F, None)], [c("v", np.array([0, 1], np.float32))],
     data=[("i", np.array([1, 2, 0], np.int64)), ("d", np.array(2**60, np.int64))])
save("onehot_depth_float_nan", [n("OneHot", ["i", "d", "v"], ["y"])], [vi("i", T.INT64, [3]), vi("d", F, [])], [vi("y", F, None)], [c("v", np.array([0, 1], np.float32))],
     data=[("i", np.array([1, 2, 0], np.int64)), ("d", np.array(np.nan, np.float32))])
save("onehot_depth_float_huge", [n("OneHot", ["i", "d", "v"], ["y"])], [vi("i", T.INT64, [3]), vi("d", F, [])], [vi("y", F, None)], [c("v", np.array([0, 1], np.float32))],
     data=[("i", np.array([1, 2, 0], np.int64)), ("d", np.array(1e30, np.float32))])
save("topk_k_gt_dim", [n("TopK", ["x", "k"], ["v", "i"])], [vi("x", F, [4])], [vi("v", F, None), vi("i", T.INT64, None)], [c("k", np.array([9], np.int64))])
save("topk_k_neg", [n("TopK", ["x", "k"], ["v", "i"])], [vi("x", F, [4])], [vi("v", F, None), vi("i", T.INT64, None)], [c("k", np.array([-1], np.int64))])
save("topk_k_runtime_gt", [n("TopK", ["x", "k"], ["v", "i"])], [vi("x", F, [4]), vi("k", T.INT64, [1])], [vi("v", F, None), vi("i", T.INT64, None)],
     data=[("x", np.random.rand(4).astype(np.float32)), ("k", np.array([99], np.int64))])
save("topk_nan", [n("TopK", ["x", "k"], ["v", "i"])], [vi("x", F, [5])], [vi("v", F, None), vi("i", T.INT64, None)], [c("k", np.array([3], np.int64))],
     data=[("x", np.array([1, np.nan, 3, np.nan, -np.inf], np.float32))])
save("split_not_summing", [n("Split", ["x", "s"], ["a", "b"])], [vi("x", F, [6])], [vi("a", F, None), vi("b", F, None)], [c("s", np.array([2, 5], np.int64))])
save("split_negative", [n("Split", ["x", "s"], ["a", "b"])], [vi("x", F, [6])], [vi("a", F, None), vi("b", F, None)], [c("s", np.array([8, -2], np.int64))])
save("split_num_outputs_gt_dim", [n("Split", ["x"], ["a", "b", "c"], num_outputs=3)], [vi("x", F, [2])], [vi("a", F, None), vi("b", F, None), vi("c", F, None)])
save("split_num_outputs_0", [n("Split", ["x"], ["a"], num_outputs=0)], [vi("x", F, [2])], [vi("a", F, None)])
save("split_runtime_sizes", [n("Split", ["x", "s"], ["a", "b"])], [vi("x", F, [6]), vi("s", T.INT64, [2])], [vi("a", F, None), vi("b", F, None)],
     data=[("x", np.random.rand(6).astype(np.float32)), ("s", np.array([1, 2], np.int64))])
# --- conv
W = c("w", np.random.rand(4, 4, 3, 3).astype(np.float32))
def conv(name, **kw):
    save(name, [n("Conv", ["x", "w"], ["y"], **kw)], [vi("x", F, [1, 4, 8, 8])], [vi("y", F, None)], [W])
conv("conv_stride0", strides=[0, 1])
conv("conv_stride_neg", strides=[-1, 1])
conv("conv_dilation0", dilations=[0, 1])
conv("conv_dilation_neg", dilations=[-2, 1])
conv("conv_dilation_huge", dilations=[2**40, 1])
conv("conv_stride_huge", strides=[2**62, 1])
conv("conv_group3", group=3)
conv("conv_group0", group=0)
conv("conv_group_neg", group=-1)
conv("conv_pads_neg", pads=[-5, 0, 0, 0])
conv("conv_pads_huge", pads=[2**61, 0, 2**61, 0])
conv("conv_kernel_shape_mismatch", kernel_shape=[5, 5])
conv("conv_strides_wrong_len", strides=[1, 1, 1])
conv("conv_autopad_same_stride_huge", auto_pad="SAME_UPPER", strides=[2**62, 1])
conv("conv_autopad_bogus", auto_pad="EVIL")
save("conv_kernel_gt_input", [n("Conv", ["x", "w"], ["y"])], [vi("x", F, [1, 4, 2, 2])], [vi("y", F, None)], [W])
save("conv_w_channel_mismatch", [n("Conv", ["x", "w"], ["y"])], [vi("x", F, [1, 5, 8, 8])], [vi("y", F, None)], [W])
save("conv_rank1_weight", [n("Conv", ["x", "w"], ["y"])], [vi("x", F, [1, 4, 8, 8])], [vi("y", F, None)], [c("w", np.ones(4, np.float32))])
save("convtranspose_output_shape_huge", [n("ConvTranspose", ["x", "w"], ["y"], output_shape=[2**40, 2**40])], [vi("x", F, [1, 4, 8, 8])], [vi("y", F, None)], [W])
save("convtranspose_output_padding_big", [n("ConvTranspose", ["x", "w"], ["y"], output_padding=[5, 5])], [vi("x", F, [1, 4, 8, 8])], [vi("y", F, None)], [W])
save("maxpool_kernel0", [n("MaxPool", ["x"], ["y"], kernel_shape=[0, 0])], [vi("x", F, [1, 1, 4, 4])], [vi("y", F, None)])
save("maxpool_kernel_huge", [n("MaxPool", ["x"], ["y"], kernel_shape=[2**40, 1])], [vi("x", F, [1, 1, 4, 4])], [vi("y", F, None)])
save("avgpool_stride0", [n("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], strides=[0, 0])], [vi("x", F, [1, 1, 4, 4])], [vi("y", F, None)])
save("lppool_p0", [n("LpPool", ["x"], ["y"], kernel_shape=[2, 2], p=0)], [vi("x", F, [1, 1, 4, 4])], [vi("y", F, None)])
save("lppool_pneg", [n("LpPool", ["x"], ["y"], kernel_shape=[2, 2], p=-3)], [vi("x", F, [1, 1, 4, 4])], [vi("y", F, None)])
# --- misc attrs
save("transpose_dup_perm", [n("Transpose", ["x"], ["y"], perm=[0, 0])], [vi("x", F, [2, 3])], [vi("y", F, None)])
save("transpose_oor_perm", [n("Transpose", ["x"], ["y"], perm=[0, 5])], [vi("x", F, [2, 3])], [vi("y", F, None)])
save("transpose_short_perm", [n("Transpose", ["x"], ["y"], perm=[1])], [vi("x", F, [2, 3])], [vi("y", F, None)])
save("transpose_neg_perm", [n("Transpose", ["x"], ["y"], perm=[-1, 0])], [vi("x", F, [2, 3])], [vi("y", F, None)])
save("concat_axis_oor", [n("Concat", ["x", "x"], ["y"], axis=5)], [vi("x", F, [2, 3])], [vi("y", F, None)])
save("concat_axis_min", [n("Concat", ["x", "x"], ["y"], axis=I64MIN)], [vi("x", F, [2, 3])], [vi("y", F, None)])
save("concat_rank_mismatch", [n("Concat", ["x", "z"], ["y"], axis=0)], [vi("x", F, [2, 3]), vi("z", F, [2])], [vi("y", F, None)])
save("concat_dtype_mismatch", [n("Concat", ["x", "z"], ["y"], axis=0)], [vi("x", F, [2, 3]), vi("z", T.INT64, [2, 3])], [vi("y", F, None)])
for i, eq in enumerate(["ij,jk", "ij->ik", "i...j...->ij", "->", "ij,jk->", "iij->i", "ij->jj", "ab,bc->ac,", "a b->", "Ab->bA", "i,j,k->ijk", "...,...->...", "i->", "ij.k->", "ij->i->j", ""]):
    ins = ["x", "z"] if eq.count(",") else ["x"]
    save(f"einsum_bad_{i}", [n("Einsum", ins, ["y"], equation=eq)], [vi("x", F, [2, 3]), vi("z", F, [3, 4])][:len(ins)], [vi("y", F, None)])
for to in [0, 8, 100, -1, 17, 23, 22]:
    save(f"cast_to_{to}", [n("Cast", ["x"], ["y"], to=to)], [vi("x", F, [2])], [vi("y", F, None)], opset=21)
save("cumsum_axis_oor", [n("CumSum", ["x", "a"], ["y"])], [vi("x", F, [2, 3])], [vi("y", F, None)], [c("a", np.array(5, np.int64))])
save("cumsum_axis_runtime_oor", [n("CumSum", ["x", "a"], ["y"])], [vi("x", F, [2, 3]), vi("a", T.INT64, [])], [vi("y", F, None)],
     data=[("x", np.random.rand(2,3).astype(np.float32)), ("a", np.array(-7, np.int64))])
save("argmax_axis_oor", [n("ArgMax", ["x"], ["y"], axis=3)], [vi("x", F, [2, 3])], [vi("y", T.INT64, None)])
save("argmin_axis_min", [n("ArgMin", ["x"], ["y"], axis=I64MIN)], [vi("x", F, [2, 3])], [vi("y", T.INT64, None)])
save("softmax_axis_oor", [n("Softmax", ["x"], ["y"], axis=9)], [vi("x", F, [2, 3])], [vi("y", F, None)])
save("reduce_axes_oor", [n("ReduceSum", ["x", "a"], ["y"])], [vi("x", F, [2, 3])], [vi("y", F, None)], [c("a", np.array([4], np.int64))])
save("reduce_axes_dup", [n("ReduceSum", ["x", "a"], ["y"])], [vi("x", F, [2, 3])], [vi("y", F, None)], [c("a", np.array([1, -1], np.int64))])
save("reduce_axes_runtime", [n("ReduceSum", ["x", "a"], ["y"])], [vi("x", F, [2, 3]), vi("a", T.INT64, [1])], [vi("y", F, None)],
     data=[("x", np.random.rand(2,3).astype(np.float32)), ("a", np.array([I64MIN], np.int64))])
save("unsqueeze_axes_dup", [n("Unsqueeze", ["x", "a"], ["y"])], [vi("x", F, [2, 3])], [vi("y", F, None)], [c("a", np.array([0, 0], np.int64))])
save("unsqueeze_axes_oor", [n("Unsqueeze", ["x", "a"], ["y"])], [vi("x", F, [2, 3])], [vi("y", F, None)], [c("a", np.array([9], np.int64))])
save("squeeze_non1", [n("Squeeze", ["x", "a"], ["y"])], [vi("x", F, [2, 3])], [vi("y", F, None)], [c("a", np.array([0], np.int64))])
save("flatten_axis_oor", [n("Flatten", ["x"], ["y"], axis=7)], [vi("x", F, [2, 3])], [vi("y", F, None)])
save("depthtospace_bs0", [n("DepthToSpace", ["x"], ["y"], blocksize=0)], [vi("x", F, [1, 4, 2, 2])], [vi("y", F, None)])
save("depthtospace_bs_neg", [n("DepthToSpace", ["x"], ["y"], blocksize=-2)], [vi("x", F, [1, 4, 2, 2])], [vi("y", F, None)])
save("spacetodepth_bs_notdiv", [n("SpaceToDepth", ["x"], ["y"], blocksize=3)], [vi("x", F, [1, 4, 2, 2])], [vi("y", F, None)])
save("matmul_mismatch", [n("MatMul", ["x", "z"], ["y"])], [vi("x", F, [2, 3]), vi("z", F, [4, 5])], [vi("y", F, None)])
save("matmul_rank0", [n("MatMul", ["x", "z"], ["y"])], [vi("x", F, []), vi("z", F, [])], [vi("y", F, None)])
save("gemm_bad_c", [n("Gemm", ["x", "z", "b"], ["y"])], [vi("x", F, [2, 3]), vi("z", F, [3, 4]), vi("b", F, [3])], [vi("y", F, None)])
save("add_bcast_mismatch", [n("Add", ["x", "z"], ["y"])], [vi("x", F, [2, 3]), vi("z", F, [4])], [vi("y", F, None)])
save("where_bcast_mismatch", [n("Where", ["c", "x", "z"], ["y"])], [vi("c", T.BOOL, [5]), vi("x", F, [2, 3]), vi("z", F, [3])], [vi("y", F, None)])
save("layernorm_axis_oor", [n("LayerNormalization", ["x", "s"], ["y"], axis=4)], [vi("x", F, [2, 3])], [vi("y", F, None)], [c("s", np.ones(3, np.float32))])
save("layernorm_scale_wrong", [n("LayerNormalization", ["x", "s"], ["y"])], [vi("x", F, [2, 3])], [vi("y", F, None)], [c("s", np.ones(7, np.float32))])
save("batchnorm_wrong_c", [n("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])], [vi("x", F, [1, 3, 2, 2])], [vi("y", F, None)], [c(k, np.ones(5, np.float32)) for k in "sbmv"])
save("instnorm_wrong_c", [n("InstanceNormalization", ["x", "s", "b"], ["y"])], [vi("x", F, [1, 3, 2, 2])], [vi("y", F, None)], [c(k, np.ones(5, np.float32)) for k in "sb"])
save("groupnorm_bad_groups", [n("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2)], [vi("x", F, [1, 3, 2, 2])], [vi("y", F, None)], [c(k, np.ones(3, np.float32)) for k in "sb"], opset=21)
save("groupnorm_groups0", [n("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=0)], [vi("x", F, [1, 3, 2, 2])], [vi("y", F, None)], [c(k, np.ones(3, np.float32)) for k in "sb"], opset=21)
save("lrn_size0", [n("LRN", ["x"], ["y"], size=0)], [vi("x", F, [1, 3, 2, 2])], [vi("y", F, None)])
save("lrn_size_huge", [n("LRN", ["x"], ["y"], size=2**62)], [vi("x", F, [1, 3, 2, 2])], [vi("y", F, None)])
save("trilu_k_runtime_extreme", [n("Trilu", ["x", "k"], ["y"])], [vi("x", F, [3, 3]), vi("k", T.INT64, [])], [vi("y", F, None)],
     data=[("x", np.random.rand(3,3).astype(np.float32)), ("k", np.array(I64MIN, np.int64))])
save("compress_cond_longer", [n("Compress", ["x", "cnd"], ["y"], axis=0)], [vi("x", F, [3]), vi("cnd", T.BOOL, [7])], [vi("y", F, None)],
     data=[("x", np.random.rand(3).astype(np.float32)), ("cnd", np.array([1,0,1,1,1,1,1], bool))])
save("nonzero_rank0", [n("NonZero", ["x"], ["y"])], [vi("x", F, [])], [vi("y", T.INT64, None)], data=[("x", np.array(3, np.float32))])
save("reversesequence_lens_oor", [n("ReverseSequence", ["x", "l"], ["y"], batch_axis=1, time_axis=0)], [vi("x", F, [3, 2]), vi("l", T.INT64, [2])], [vi("y", F, None)],
     data=[("x", np.random.rand(3,2).astype(np.float32)), ("l", np.array([9, -4], np.int64))])
save("maxroipool_bad", [n("MaxRoiPool", ["x", "r"], ["y"], pooled_shape=[2, 2])], [vi("x", F, [1, 1, 4, 4]), vi("r", F, [1, 5])], [vi("y", F, None)],
     data=[("x", np.random.rand(1,1,4,4).astype(np.float32)), ("r", np.array([[7, 0, 0, 1e30, 1e30]], np.float32))])
save("nms_huge_max", [n("NonMaxSuppression", ["b", "s", "m"], ["y"])], [vi("b", F, [1, 3, 4]), vi("s", F, [1, 1, 3])], [vi("y", T.INT64, None)], [c("m", np.array([I64MAX], np.int64))],
     data=[("b", np.random.rand(1,3,4).astype(np.float32)), ("s", np.random.rand(1,1,3).astype(np.float32))])
save("bitshift_huge", [n("BitShift", ["x", "s"], ["y"], direction="LEFT")], [vi("x", T.UINT32, [3]), vi("s", T.UINT32, [3])], [vi("y", T.UINT32, None)],
     data=[("x", np.array([1, 2, 3], np.uint32)), ("s", np.array([32, 99, 4000000000], np.uint32))])
save("bitshift_u64_huge", [n("BitShift", ["x", "s"], ["y"], direction="RIGHT")], [vi("x", T.UINT64, [3]), vi("s", T.UINT64, [3])], [vi("y", T.UINT64, None)],
     data=[("x", np.array([1, 2, 3], np.uint64)), ("s", np.array([64, 99, 2**63], np.uint64))])
save("pow_int_negative_exp", [n("Pow", ["x", "s"], ["y"])], [vi("x", T.INT64, [3]), vi("s", T.INT64, [3])], [vi("y", T.INT64, None)],
     data=[("x", np.array([0, 2, -3], np.int64)), ("s", np.array([-1, I64MAX, -2], np.int64))])
# --- integer division by zero / overflow, runtime
for dt, et, tag in [(np.int64, T.INT64, "i64"), (np.int32, T.INT32, "i32"), (np.int8, T.INT8, "i8"), (np.int16, T.INT16, "i16"), (np.uint8, T.UINT8, "u8"), (np.uint32, T.UINT32, "u32"), (np.uint64, T.UINT64, "u64")]:
    a = np.array([7, 5, 0, 3], dt); b = np.array([0, 2, 0, 0], dt)
    if np.issubdtype(dt, np.signedinteger):
        a = np.array([7, np.iinfo(dt).min, 0, -3], dt); b = np.array([0, -1, 0, 0], dt)
    for op, kw in [("Div", {}), ("Mod", {}), ("Mod", {"fmod": 1})]:
        nm = f"{op.lower()}{'f' if kw else ''}_zero_{tag}"
        save(nm, [n(op, ["a", "b"], ["y"], **kw)], [vi("a", et, [4]), vi("b", et, [4])], [vi("y", et, None)], data=[("a", a), ("b", b)])
        # fused: (a+0)/(b) then relu-ish chain to force the fused kernel
        save(nm + "_fused", [n(op, ["a", "b"], ["t"], **kw), h.make_node("Add", ["t", "a"], ["y"], name="add2")], [vi("a", et, [4]), vi("b", et, [4])], [vi("y", et, None)], data=[("a", a), ("b", b)])
    save(f"div_zero_const_{tag}", [n("Div", ["a", "b"], ["y"])], [], [vi("y", et, None)], [c("a", a), c("b", b)])
    save(f"mod_zero_const_{tag}", [n("Mod", ["a", "b"], ["y"])], [], [vi("y", et, None)], [c("a", a), c("b", b)])
# reductions that divide by zero-size
save("reducemean_int_empty", [n("ReduceMean", ["x", "a"], ["y"])], [vi("x", T.INT32, [0, 3])], [vi("y", T.INT32, None)], [c("a", np.array([0], np.int64))], data=[("x", np.zeros((0,3), np.int32))])
save("avgpool_int", [n("AveragePool", ["x"], ["y"], kernel_shape=[2, 2])], [vi("x", T.INT32, [1, 1, 2, 2])], [vi("y", T.INT32, None)], data=[("x", np.ones((1,1,2,2), np.int32))])
save("meanvarnorm_int", [n("MeanVarianceNormalization", ["x"], ["y"])], [vi("x", T.INT32, [1, 1, 2, 2])], [vi("y", T.INT32, None)], data=[("x", np.ones((1,1,2,2), np.int32))])
