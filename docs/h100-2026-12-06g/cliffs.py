"""Session 42: red-team round 54's cliffs for the GPU A/B (python3 cliffs.py OUTDIR):
bmm_3x3 [262144, 3, 3] x [262144, 3, 1], bmm_2x3 [100000, 2, 3] x [100000, 3, 2] (tiny batched
MatMul), resize_nearest x2 of [1, 256, 80, 80], resize_linear x4 of [1, 19, 256, 512]."""
import os, sys
import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh

out = sys.argv[1]
def save(name, nodes, ins, inits=()):
    g = h.make_graph(nodes, name, [h.make_tensor_value_info(n, T.FLOAT, s) for n, s in ins], [h.make_tensor_value_info("y", T.FLOAT, None)], list(inits))
    os.makedirs(os.path.join(out, name), exist_ok=True)
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 19)]), os.path.join(out, name, "model.onnx"))
save("bmm_3x3", [h.make_node("MatMul", ["a", "b"], ["y"])], [("a", [262144, 3, 3]), ("b", [262144, 3, 1])])
save("bmm_2x3", [h.make_node("MatMul", ["a", "b"], ["y"])], [("a", [100000, 2, 3]), ("b", [100000, 3, 2])])
save("resize_nearest", [h.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest")], [("x", [1, 256, 80, 80])],
     [nh.from_array(np.array([1, 1, 2, 2], np.float32), "s")])
save("resize_linear", [h.make_node("Resize", ["x", "", "s"], ["y"], mode="linear")], [("x", [1, 19, 256, 512])],
     [nh.from_array(np.array([1, 1, 4, 4], np.float32), "s")])
