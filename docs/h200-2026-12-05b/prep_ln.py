# LayerNormalization of constant rows (Numerics.RowSumsAreCompensated's failing case on the
# NVIDIA Vulkan driver): model.onnx + test_data_set_0 (output exactly 0) for each row length.
#   python3 prep_ln.py OUTDIR
import os, sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

out = sys.argv[1]
values = np.array([1000.1, -3.7e5, 1e-3, 0.1, 1.9504638e31, 2.7921882e-27, -5.586912e-25], np.float32)
rng = np.random.default_rng(11)
for n in (7, 192, 256, 384, 512, 768, 1000, 1024):
    d = os.path.join(out, "ln%d" % n)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    scale = rng.uniform(0.5, 2.0, n).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["y"], axis=-1, epsilon=1e-5)], "ln",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [len(values), n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [len(values), n])],
        [numpy_helper.from_array(scale, "scale"), numpy_helper.from_array(np.zeros(n, np.float32), "bias")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(d, "model.onnx"))
    x = np.repeat(values[:, None], n, axis=1)
    with open(os.path.join(d, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(np.zeros_like(x), "y").SerializeToString())
