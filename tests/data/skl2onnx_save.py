"""Shared by make_skl2onnx*.py: one converted model as a backend-test case (model.onnx and
test_data_set_0 with the input and onnxruntime's outputs)."""
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper as nh


def save_case(out, name, m, xin):
    """Writes OUT/NAME/model.onnx and test_data_set_0 (xin and onnxruntime's outputs); returns the outputs."""
    outs = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {m.graph.input[0].name: xin})
    d = os.path.join(out, name, "test_data_set_0")
    os.makedirs(d)
    onnx.save(m, os.path.join(out, name, "model.onnx"))
    with open(os.path.join(d, "input_0.pb"), "wb") as f:
        f.write(nh.from_array(xin, m.graph.input[0].name).SerializeToString())
    for k, (o, vi) in enumerate(zip(outs, m.graph.output)):
        with open(os.path.join(d, f"output_{k}.pb"), "wb") as f:
            f.write((map_sequence(o, vi.name) if isinstance(o, list) else nh.from_array(np.asarray(o), vi.name)).SerializeToString())
    return outs


def map_sequence(maps, name):
    """ZipMap's output (a list of dicts key -> float) as the ONNX SequenceProto of MapProto."""
    def one(m):
        keys = list(m)
        string = bool(keys) and isinstance(keys[0], str)
        vals = onnx.helper.make_sequence("", onnx.SequenceProto.TENSOR, [nh.from_array(np.array([m[k] for k in keys], np.float32))])
        return onnx.helper.make_map("", onnx.TensorProto.STRING if string else onnx.TensorProto.INT64,
                                    [k.encode() for k in keys] if string else keys, vals)
    return onnx.helper.make_sequence(name, onnx.SequenceProto.MAP, [one(m) for m in maps])
