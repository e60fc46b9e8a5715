#!/usr/bin/env python3
"""Writes tests/data/sequence/torchscript_list_loop: a torch.jit.script module that builds a
list in a loop (Loop carrying a sequence: SequenceEmpty, SequenceInsert inside the body,
ConcatFromSequence after) and splits a tensor into a list (SplitToSequence, SequenceAt),
exported by the TorchScript exporter at opset 17 with a dynamic first axis; the expected
outputs are onnxruntime's (CPU) on a seeded input. Needs torch, onnx, onnxruntime.
The test_sequence_model1-8 folders beside it are copied unchanged from the onnx 1.23.2 wheel
(onnx/backend/test/data/simple)."""
import os

import numpy as np
import onnxruntime as ort
import torch
from onnx import numpy_helper


class M(torch.nn.Module):
    def forward(self, x):
        outs = []
        for i in range(x.shape[0]):
            outs.append(torch.relu(x[i]) * 2)
        parts = torch.split(x, 2, dim=1)
        y = torch.stack(outs, 0)
        return y + parts[0].sum(), torch.cat([parts[1], parts[0]], 1)


torch.manual_seed(0)
x = torch.randn(3, 5)
d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torchscript_list_loop")
os.makedirs(d + "/test_data_set_0", exist_ok=True)
torch.onnx.export(torch.jit.script(M()), (x,), d + "/model.onnx", opset_version=17, dynamo=False, input_names=["x"],
                  output_names=["y", "z"], dynamic_axes={"x": {0: "n"}})
outs = ort.InferenceSession(d + "/model.onnx").run(None, {"x": x.numpy()})
with open(d + "/test_data_set_0/input_0.pb", "wb") as f:
    f.write(numpy_helper.from_array(x.numpy(), "x").SerializeToString())
for k, o in enumerate(outs):
    with open(d + f"/test_data_set_0/output_{k}.pb", "wb") as f:
        f.write(numpy_helper.from_array(np.asarray(o), ["y", "z"][k]).SerializeToString())
