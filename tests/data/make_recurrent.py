"""Builds the recurrent test models under tests/data/ with onnx's helpers and stores onnxruntime's
outputs as test_data_set_0 (read by tests/test_recurrent.cpp; CI needs neither onnx nor onnxruntime).

    python3 -m venv build/genvenv && build/genvenv/bin/pip install onnx onnxruntime numpy
    build/genvenv/bin/python tests/data/make_recurrent.py
"""
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(13)


def rand(*shape, scale=0.5):
    return (rng.uniform(-1, 1, shape) * scale).astype(np.float32)


def save(name, graph, feeds):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    d = os.path.join(HERE, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    outs = sess.run(None, feeds)
    for i, inp in enumerate(graph.input):
        t = numpy_helper.from_array(feeds[inp.name], inp.name)
        open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb").write(t.SerializeToString())
    for i, (o, v) in enumerate(zip(graph.output, outs)):
        t = numpy_helper.from_array(v, o.name)
        open(os.path.join(d, "test_data_set_0", f"output_{i}.pb"), "wb").write(t.SerializeToString())
    print(name, [v.shape for v in outs])


def lstm_bidirectional():
    S, B, I, H, D = 5, 2, 3, 4, 2
    inits = [numpy_helper.from_array(rand(D, 4 * H, I), "W"), numpy_helper.from_array(rand(D, 4 * H, H), "R"),
             numpy_helper.from_array(rand(D, 8 * H), "B"), numpy_helper.from_array(rand(D, 3 * H), "P")]
    node = helper.make_node("LSTM", ["X", "W", "R", "B", "", "initial_h", "initial_c", "P"], ["Y", "Y_h", "Y_c"],
                            direction="bidirectional", hidden_size=H)
    g = helper.make_graph(
        [node], "lstm_bidirectional",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [S, B, I]),
         helper.make_tensor_value_info("initial_h", TensorProto.FLOAT, [D, B, H]),
         helper.make_tensor_value_info("initial_c", TensorProto.FLOAT, [D, B, H])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [S, D, B, H]),
         helper.make_tensor_value_info("Y_h", TensorProto.FLOAT, [D, B, H]),
         helper.make_tensor_value_info("Y_c", TensorProto.FLOAT, [D, B, H])], inits)
    save("lstm_bidirectional", g, {"X": rand(S, B, I, scale=1.0), "initial_h": rand(D, B, H), "initial_c": rand(D, B, H)})


def gru_sequence_lens():
    S, B, I, H, D = 6, 3, 4, 5, 2
    inits = [numpy_helper.from_array(rand(D, 3 * H, I), "W"), numpy_helper.from_array(rand(D, 3 * H, H), "R"),
             numpy_helper.from_array(rand(D, 6 * H), "B")]
    node = helper.make_node("GRU", ["X", "W", "R", "B", "sequence_lens", "initial_h"], ["Y", "Y_h"],
                            direction="bidirectional", hidden_size=H, linear_before_reset=1)
    g = helper.make_graph(
        [node], "gru_sequence_lens",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [S, B, I]),
         helper.make_tensor_value_info("sequence_lens", TensorProto.INT32, [B]),
         helper.make_tensor_value_info("initial_h", TensorProto.FLOAT, [D, B, H])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [S, D, B, H]),
         helper.make_tensor_value_info("Y_h", TensorProto.FLOAT, [D, B, H])], inits)
    save("gru_sequence_lens", g, {"X": rand(S, B, I, scale=1.0), "sequence_lens": np.array([6, 2, 4], np.int32),
                                  "initial_h": rand(D, B, H)})


if __name__ == "__main__":
    lstm_bidirectional()
    gru_sequence_lens()
