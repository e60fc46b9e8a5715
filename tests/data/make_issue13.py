"""Builds the issue-13 acceptance models under tests/data/ with onnx's helpers and stores
onnxruntime's outputs (graph optimizations off) as test_data_set_0 (read by
tests/test_issue13_models.cpp; CI needs neither onnx nor onnxruntime):
  if_shape_cond    an If whose condition depends only on an input's shape (folds, inlines)
  if_value_cond    an If whose condition depends on an input's values (run time)
  topk_top5_head   a classifier head: Gemm -> Softmax -> TopK(k=5) values and int64 indices
  qdq_int8_matmul_conv  per-channel int8 weights (DequantizeLinear axis) into MatMul and Conv,
                   activations through QuantizeLinear/DequantizeLinear (uint8), as exported
                   by onnxruntime's static quantizer
  qlinear_matmul_conv   the same as QLinearMatMul / QLinearConv (per-channel weight scales),
                   outputs from the ONNX reference implementation (see save())

    python3 -m venv build/genvenv && build/genvenv/bin/pip install onnx onnxruntime numpy
    build/genvenv/bin/python tests/data/make_issue13.py
"""
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(1313)


def rand(*shape, scale=1.0):
    return (rng.uniform(-1, 1, shape) * scale).astype(np.float32)


def save(name, graph, feeds, opset=17, reference="onnxruntime"):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    d = os.path.join(HERE, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    if reference == "onnxruntime":
        # Graph optimizations off: onnxruntime's QDQ fusion computes the int8 pattern in
        # integers and requantizes, which is not what the graph's float ops say.
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        outs = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)
    else:
        # onnxruntime 1.23's QLinearConv/QLinearMatMul give other values than the spec and the
        # ONNX reference implementation here (up to 27 steps of y_scale): stored from the latter
        # (evaluated at opset 21, whose QuantizeLinear/QLinear* semantics are the same).
        m21 = onnx.ModelProto()
        m21.CopyFrom(model)
        m21.opset_import[0].version = 21
        outs = ReferenceEvaluator(m21).run(None, feeds)
    for i, inp in enumerate(graph.input):
        t = numpy_helper.from_array(feeds[inp.name], inp.name)
        open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb").write(t.SerializeToString())
    for i, (o, v) in enumerate(zip(graph.output, outs)):
        t = numpy_helper.from_array(v, o.name)
        open(os.path.join(d, "test_data_set_0", f"output_{i}.pb"), "wb").write(t.SerializeToString())
    print(name, [(v.dtype, v.shape) for v in outs])


def branch(name, op, out):
    g = helper.make_graph([helper.make_node(op, ["x", "x"] if op != "Neg" else ["x"], [out])], name, [],
                          [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)])
    return g


def if_shape_cond():
    # cond = Shape(x)[1] > 3: known once the input shape is, so the chosen branch inlines.
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "one"], ["d1"], axis=0),
        helper.make_node("Greater", ["d1", "three"], ["cond"]),
        helper.make_node("If", ["cond"], ["y0"], then_branch=branch("then", "Mul", "t"), else_branch=branch("else", "Add", "e")),
        helper.make_node("Tanh", ["y0"], ["y"]),
    ]
    g = helper.make_graph(nodes, "if_shape_cond", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])],
                          [numpy_helper.from_array(np.array(1, np.int64), "one"),
                           numpy_helper.from_array(np.array(3, np.int64), "three")])
    save("if_shape_cond", g, {"x": rand(2, 5)})


def if_value_cond():
    # cond = ReduceSum(x) > 0: a run-time value; then branch x*x, else -x, nested If inside then.
    inner = helper.make_graph(
        [helper.make_node("If", ["c2"], ["t"], then_branch=branch("tt", "Mul", "tt_o"), else_branch=branch("te", "Add", "te_o"))],
        "then_outer", [], [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)])
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["sum"], keepdims=0),
        helper.make_node("Greater", ["sum", "zero"], ["cond"]),
        helper.make_node("ReduceMax", ["x"], ["mx"], keepdims=0),
        helper.make_node("Greater", ["mx", "half"], ["c2"]),
        helper.make_node("If", ["cond"], ["y"], then_branch=inner, else_branch=branch("else", "Neg", "e")),
    ]
    g = helper.make_graph(nodes, "if_value_cond", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])],
                          [numpy_helper.from_array(np.array(0, np.float32), "zero"),
                           numpy_helper.from_array(np.array(0.5, np.float32), "half")])
    x = rand(3, 4)
    x += 0.3 - x.sum() / x.size  # sum > 0 and max > 0.5: the nested then-then branch
    save("if_value_cond", g, {"x": x.astype(np.float32)})


def topk_top5_head():
    B, F, C = 4, 64, 100
    nodes = [
        helper.make_node("Gemm", ["x", "w", "b"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["p"], axis=-1),
        helper.make_node("TopK", ["p", "k"], ["values", "indices"], axis=-1, largest=1, sorted=1),
    ]
    g = helper.make_graph(nodes, "topk_top5_head", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [B, F])],
                          [helper.make_tensor_value_info("values", TensorProto.FLOAT, [B, 5]),
                           helper.make_tensor_value_info("indices", TensorProto.INT64, [B, 5])],
                          [numpy_helper.from_array(rand(C, F, scale=0.5), "w"), numpy_helper.from_array(rand(C), "b"),
                           numpy_helper.from_array(np.array([5], np.int64), "k")])
    save("topk_top5_head", g, {"x": rand(B, F)})


def per_channel_int8(w, axis):
    # Symmetric per-channel int8 weights (scale per output channel), zero points 0.
    red = tuple(i for i in range(w.ndim) if i != axis)
    scale = (np.abs(w).max(axis=red) / 127.0).astype(np.float32)
    q = np.clip(np.round(w / scale.reshape([-1 if i == axis else 1 for i in range(w.ndim)])), -127, 127).astype(np.int8)
    return q, scale


def qdq_int8_matmul_conv():
    N, C, H, W, K, F = 1, 3, 8, 8, 6, 10
    wc, sc = per_channel_int8(rand(K, C, 3, 3), 0)
    wm, sm = per_channel_int8(rand(K * 6 * 6, F), 1)
    inits = [numpy_helper.from_array(wc, "wc_q"), numpy_helper.from_array(sc, "wc_s"),
             numpy_helper.from_array(np.zeros(K, np.int8), "wc_z"),
             numpy_helper.from_array(wm, "wm_q"), numpy_helper.from_array(sm, "wm_s"),
             numpy_helper.from_array(np.zeros(F, np.int8), "wm_z"),
             numpy_helper.from_array(np.array(0.01, np.float32), "a_s"), numpy_helper.from_array(np.array(128, np.uint8), "a_z"),
             numpy_helper.from_array(np.array(0.02, np.float32), "h_s"), numpy_helper.from_array(np.array(0, np.uint8), "h_z"),
             numpy_helper.from_array(np.array([1, -1], np.int64), "flat")]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "a_s", "a_z"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "a_s", "a_z"], ["xd"]),
        helper.make_node("DequantizeLinear", ["wc_q", "wc_s", "wc_z"], ["wcd"], axis=0),
        helper.make_node("Conv", ["xd", "wcd"], ["c"]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("QuantizeLinear", ["r", "h_s", "h_z"], ["rq"]),
        helper.make_node("DequantizeLinear", ["rq", "h_s", "h_z"], ["rd"]),
        helper.make_node("Reshape", ["rd", "flat"], ["f"]),
        helper.make_node("DequantizeLinear", ["wm_q", "wm_s", "wm_z"], ["wmd"], axis=1),
        helper.make_node("MatMul", ["f", "wmd"], ["y"]),
    ]
    g = helper.make_graph(nodes, "qdq_int8_matmul_conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N, C, H, W])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [N, F])], inits)
    save("qdq_int8_matmul_conv", g, {"x": rand(N, C, H, W)}, opset=13)


def qlinear_matmul_conv():
    N, C, H, W, K, F = 1, 3, 8, 8, 6, 10
    wc, sc = per_channel_int8(rand(K, C, 3, 3), 0)
    wm, sm = per_channel_int8(rand(K * 6 * 6, F), 1)
    inits = [numpy_helper.from_array(wc, "wc_q"), numpy_helper.from_array(sc, "wc_s"),
             numpy_helper.from_array(np.zeros(K, np.int8), "wc_z"),
             numpy_helper.from_array(wm, "wm_q"), numpy_helper.from_array(sm[:1].copy(), "wm_s"),
             numpy_helper.from_array(np.array([0], np.int8), "wm_z"),
             numpy_helper.from_array(np.array(0.01, np.float32), "a_s"), numpy_helper.from_array(np.array(128, np.uint8), "a_z"),
             numpy_helper.from_array(np.array(0.05, np.float32), "h_s"), numpy_helper.from_array(np.array(100, np.uint8), "h_z"),
             numpy_helper.from_array(np.array(0.1, np.float32), "y_s"), numpy_helper.from_array(np.array(120, np.uint8), "y_z"),
             numpy_helper.from_array(np.array([1, -1], np.int64), "flat")]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "a_s", "a_z"], ["xq"]),
        helper.make_node("QLinearConv", ["xq", "a_s", "a_z", "wc_q", "wc_s", "wc_z", "h_s", "h_z"], ["cq"]),
        helper.make_node("Reshape", ["cq", "flat"], ["fq"]),
        helper.make_node("QLinearMatMul", ["fq", "h_s", "h_z", "wm_q", "wm_s", "wm_z", "y_s", "y_z"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "y_s", "y_z"], ["y"]),
    ]
    g = helper.make_graph(nodes, "qlinear_matmul_conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N, C, H, W])],
                          [helper.make_tensor_value_info("yq", TensorProto.UINT8, [N, F]),
                           helper.make_tensor_value_info("y", TensorProto.FLOAT, [N, F])], inits)
    save("qlinear_matmul_conv", g, {"x": rand(N, C, H, W)}, opset=13, reference="onnx")


if __name__ == "__main__":
    if_shape_cond()
    if_value_cond()
    topk_top5_head()
    qdq_int8_matmul_conv()
    qlinear_matmul_conv()
