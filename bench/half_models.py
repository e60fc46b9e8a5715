"""fp16 versions of models checked against onnxruntime: converts each model folder's model.onnx
to float16 (onnxconverter-common, inputs and outputs float16 too), runs onnxruntime (CPU) on
seeded random inputs and writes an ONNX backend-test folder (model.onnx + test_data_set_0)
per model, so `fusor conform OUT/* --backend ...` compares every backend with onnxruntime.
Usage: python3 bench/half_models.py OUT MODEL_DIR...  (needs onnx, onnxruntime, onnxconverter-common)"""
import os, sys
import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
from onnxconverter_common import float16

out_root, dirs = sys.argv[1], sys.argv[2:]
for d in dirs:
    name = os.path.basename(os.path.normpath(d)) + "_fp16"
    m = float16.convert_float_to_float16(onnx.load(os.path.join(d, "model.onnx")), keep_io_types=False)
    od = os.path.join(out_root, name)
    os.makedirs(os.path.join(od, "test_data_set_0"), exist_ok=True)
    onnx.save(m, os.path.join(od, "model.onnx"))
    sess = ort.InferenceSession(os.path.join(od, "model.onnx"), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feeds = {}
    for k, i in enumerate(sess.get_inputs()):
        shape = [s if isinstance(s, int) else 1 for s in i.shape]
        if i.type == "tensor(float16)":
            x = rng.uniform(-1, 1, shape).astype(np.float16)
        elif i.type == "tensor(int64)":
            x = rng.integers(0, 8, shape).astype(np.int64)
        else:
            raise SystemExit(f"{name}: input {i.name} has type {i.type}")
        feeds[i.name] = x
        onnx.save_tensor(numpy_helper.from_array(x, i.name), os.path.join(od, "test_data_set_0", f"input_{k}.pb"))
    outs = sess.run(None, feeds)
    for k, (o, y) in enumerate(zip(sess.get_outputs(), outs)):
        onnx.save_tensor(numpy_helper.from_array(y, o.name), os.path.join(od, "test_data_set_0", f"output_{k}.pb"))
    print(name, [(o.name, y.dtype, y.shape) for o, y in zip(sess.get_outputs(), outs)])
