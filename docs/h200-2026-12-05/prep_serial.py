# Models around the serial-work bound (Emitter::kMaxLaneCost = 2^15 serial iterations a lane,
# 16,384 lanes on a GPU), for the A/B in job.sh: the GPU kernel (FUSOR_SERIAL_BOUND=0) against
# the host's loop (default) just past the bound. Writes /tmp/serial/NAME/model.onnx.
import os
import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as T


def save(name, nodes, inputs, outputs, inits=()):
    d = f"/tmp/serial/{name}"
    os.makedirs(d, exist_ok=True)
    g = h.make_graph(nodes, name, inputs, outputs, list(inits))
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 18)]), f"{d}/model.onnx")


vi = h.make_tensor_value_info
for L in (16384, 40000, 160000):  # ArgMax: 2 threads of L iterations
    save(f"argmax_{L}", [h.make_node("ArgMax", ["x"], ["y"], axis=1)], [vi("x", T.FLOAT, [2, L])], [vi("y", T.INT64, None)])
for L in (40000, 300000):  # 1-D CumSum: one line
    save(f"cumsum_{L}", [h.make_node("CumSum", ["x", "a"], ["y"])], [vi("x", T.FLOAT, [L])], [vi("y", T.FLOAT, None)],
         [nh.from_array(np.array(0, np.int64), "a")])
for n in (40000, 300000):  # index_add-shaped ScatterND over a 1-D tensor
    idx = np.random.default_rng(1).integers(0, n, size=(n, 1)).astype(np.int64)
    save(f"scatter_{n}", [h.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction="add")],
         [vi("x", T.FLOAT, [n]), vi("u", T.FLOAT, [n])], [vi("y", T.FLOAT, None)], [nh.from_array(idx, "i")])
for r, L in ((10, 8000), (64, 4096)):  # TopK ranks every element against its row
    save(f"topk_{r}x{L}", [h.make_node("TopK", ["x", "k"], ["v", "i"])], [vi("x", T.FLOAT, [r, L])],
         [vi("v", T.FLOAT, None), vi("i", T.INT64, None)], [nh.from_array(np.array([5], np.int64), "k")])
print("serial models:", sorted(os.listdir("/tmp/serial")))
