"""Writes one ONNX backend-test folder (model.onnx, test_data_set_0/input_K.pb, output_K.pb) with
onnxruntime's CPU outputs: shared by the tests/data/make_ort_*.py generators."""
import os
import shutil

import onnx
import onnxruntime as ort
from onnx import numpy_helper


def write_case(d, m, feeds, out_names=None):
    """Runs model m on feeds ({name: array}) with onnxruntime and writes the folder d; returns the
    outputs. out_names: the names stored with the outputs (default: the graph's output names)."""
    ys = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    return write_folder(d, m, feeds, ys, out_names)


def write_folder(d, m, feeds, ys, out_names=None):
    """Writes the folder d: model m, feeds as input_K.pb, ys (the expected outputs) as output_K.pb."""
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    onnx.save(m, os.path.join(d, "model.onnx"))
    for k, (n, v) in enumerate(feeds.items()):
        with open(os.path.join(d, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(v, n).SerializeToString())
    for k, (o, y) in enumerate(zip(out_names or [o.name for o in m.graph.output], ys)):
        with open(os.path.join(d, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(y, o).SerializeToString())
    return ys
