"""Shared by make_skl2onnx*.py: one converted model as a backend-test case (model.onnx and
test_data_set_0 with the input and onnxruntime's outputs)."""
import os
import shutil

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper as nh


def save_feeds(out, name, m, feeds):
    """Writes OUT/NAME/model.onnx and test_data_set_0 (every graph input from feeds, by name, and
    onnxruntime's outputs), replacing an earlier folder; returns the outputs."""
    outs = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    shutil.rmtree(os.path.join(out, name), ignore_errors=True)
    d = os.path.join(out, name, "test_data_set_0")
    os.makedirs(d)
    onnx.save(m, os.path.join(out, name, "model.onnx"))
    for k, vi in enumerate(m.graph.input):
        with open(os.path.join(d, f"input_{k}.pb"), "wb") as f:
            f.write(nh.from_array(feeds[vi.name], vi.name).SerializeToString())
    for k, (o, vi) in enumerate(zip(outs, m.graph.output)):
        with open(os.path.join(d, f"output_{k}.pb"), "wb") as f:
            f.write((map_sequence(o, vi.name) if isinstance(o, list) else nh.from_array(np.asarray(o), vi.name)).SerializeToString())
    return outs


def save_case(out, name, m, xin):
    """save_feeds for a model of one input."""
    return save_feeds(out, name, m, {m.graph.input[0].name: xin})


def map_sequence(maps, name):
    """ZipMap's output (a list of dicts key -> float) as the ONNX SequenceProto of MapProto."""
    def one(m):
        keys = list(m)
        string = bool(keys) and isinstance(keys[0], str)
        vals = onnx.helper.make_sequence("", onnx.SequenceProto.TENSOR, [nh.from_array(np.array([m[k] for k in keys], np.float32))])
        return onnx.helper.make_map("", onnx.TensorProto.STRING if string else onnx.TensorProto.INT64,
                                    [k.encode() for k in keys] if string else keys, vals)
    return onnx.helper.make_sequence(name, onnx.SequenceProto.MAP, [one(m) for m in maps])
