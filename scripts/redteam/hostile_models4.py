# Wide and deep hostile graphs (rank 20,000, 30,000-way Concat/Split/fan-out, nodes out of order):
# python3 THIS_FILE [OUT_DIR] writes OUT_DIR/models4/<name>/model.onnx (docs/redteam.md).
import os, sys, numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
OUT = os.path.join(sys.argv[1] if len(sys.argv) > 1 else "/tmp/fusor_redteam", "models4"); os.makedirs(OUT, exist_ok=True)
F = T.FLOAT
def vi(name, et, shape): return h.make_tensor_value_info(name, et, shape)
def c(name, arr): return nh.from_array(np.asarray(arr), name)
def save(name, nodes, inputs, outputs, inits=(), opset=18):
    d = os.path.join(OUT, name); os.makedirs(d, exist_ok=True)
    g = h.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)]); m.ir_version = 8
    open(os.path.join(d, "model.onnx"), "wb").write(m.SerializeToString())
save("nodes_out_of_order", [h.make_node("Neg", ["t"], ["y"], name="second"), h.make_node("Relu", ["x"], ["t"], name="first")], [vi("x", F, [2])], [vi("y", F, None)])
tb = h.make_graph([h.make_node("Identity", ["late"], ["r"], name="uses_late")], "t", [], [vi("r", F, None)])
save("if_reads_later_value", [h.make_node("If", ["c"], ["y"], then_branch=tb, else_branch=tb, name="if"), h.make_node("Relu", ["x"], ["late"], name="later")], [vi("x", F, [2]), vi("c", T.BOOL, [])], [vi("y", F, None)])
save("rank_1000", [h.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", F, [1] * 1000)], [vi("y", F, None)])
save("rank_1000_transpose", [h.make_node("Transpose", ["x"], ["y"], name="t", perm=list(reversed(range(1000))))], [vi("x", F, [1] * 1000)], [vi("y", F, None)])
save("rank_20000_add", [h.make_node("Add", ["x", "x"], ["y"], name="a")], [vi("x", F, [1] * 20000)], [vi("y", F, None)])
save("concat_30000", [h.make_node("Concat", ["x"] * 30000, ["y"], name="cat", axis=0)], [vi("x", F, [2])], [vi("y", F, None)])
save("split_30000_outputs", [h.make_node("Split", ["x"], [f"o{i}" for i in range(30000)], name="sp", axis=0, num_outputs=30000)], [vi("x", F, [30000])], [vi(f"o{i}", F, None) for i in range(30000)])
save("fanout_30000", [h.make_node("Relu", ["x"], [f"o{i}"], name=f"r{i}") for i in range(30000)], [vi("x", F, [2])], [vi(f"o{i}", F, None) for i in range(30000)])
save("reshape_rank_10000", [h.make_node("Reshape", ["x", "s"], ["y"], name="rs")], [vi("x", F, [4])], [vi("y", F, None)], [c("s", np.array([1] * 9998 + [2, 2], np.int64))])
save("einsum_52_labels", [h.make_node("Einsum", ["x"], ["y"], name="e", equation="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ->")], [vi("x", F, [1] * 52)], [vi("y", F, None)])
save("einsum_ellipsis_rank60", [h.make_node("Einsum", ["x", "x"], ["y"], name="e", equation="...,...->...")], [vi("x", F, [1] * 60)], [vi("y", F, None)])
save("sum_20000_inputs", [h.make_node("Sum", ["x"] * 20000, ["y"], name="s")], [vi("x", F, [2])], [vi("y", F, None)])
save("where_rank64_bcast", [h.make_node("Where", ["c", "x", "x"], ["y"], name="w")], [vi("c", T.BOOL, [2] + [1] * 63), vi("x", F, [1] * 63 + [2])], [vi("y", F, None)])
save("expand_rank_5000", [h.make_node("Expand", ["x", "s"], ["y"], name="ex")], [vi("x", F, [1])], [vi("y", F, None)], [c("s", np.array([1] * 5000, np.int64))])
