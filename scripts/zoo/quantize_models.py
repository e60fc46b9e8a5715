#!/usr/bin/env python3
"""Quantized versions of fp32 models in backend-test layout, as onnxruntime's quantize_static
writes them: QDQ (QuantizeLinear / DequantizeLinear around float ops) and QOperator (QLinearConv,
com.microsoft QLinearAdd / QLinearMul / QLinearConcat / QLinearGlobalAveragePool / QGemm ...),
each per tensor and per channel (OUT/<model>_{qdq,qop}[_pc]), calibrated on 4 seeded random
inputs; test_data_set_0 holds one more seeded input and onnxruntime's (CPU) outputs.
Then: build/fusor conform OUT/* --backend ref --backend cpu --backend vulkan.
Usage: python3 scripts/zoo/quantize_models.py OUT MODEL_DIR...   (needs onnx, onnxruntime)"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
from onnxruntime.quantization.shape_inference import quant_pre_process

out_root = sys.argv[1]
for src in sys.argv[2:]:
    name = os.path.basename(src.rstrip("/"))
    m = onnx.load(os.path.join(src, "model.onnx"))
    inp = m.graph.input[0]
    shape = [d.dim_value if d.dim_value > 0 else 1 for d in inp.type.tensor_type.shape.dim]
    rng = np.random.default_rng(0)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.n = 0

        def get_next(self):
            if self.n >= 4:
                return None
            self.n += 1
            return {inp.name: rng.standard_normal(shape).astype(np.float32)}

    os.makedirs(out_root, exist_ok=True)
    pre = os.path.join(out_root, f"{name}_pre.onnx")
    quant_pre_process(os.path.join(src, "model.onnx"), pre, skip_symbolic_shape=True)
    for fmt, tag in ((QuantFormat.QDQ, "qdq"), (QuantFormat.QOperator, "qop")):
        for per_channel in (False, True):
            out = os.path.join(out_root, f"{name}_{tag}{'_pc' if per_channel else ''}")
            os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
            quantize_static(pre, os.path.join(out, "model.onnx"), Reader(), quant_format=fmt, per_channel=per_channel,
                            activation_type=QuantType.QUInt8 if tag == "qop" else QuantType.QInt8, weight_type=QuantType.QInt8)
            x = rng.standard_normal(shape).astype(np.float32)
            s = ort.InferenceSession(os.path.join(out, "model.onnx"), providers=["CPUExecutionProvider"])
            with open(os.path.join(out, "test_data_set_0", "input_0.pb"), "wb") as f:
                f.write(numpy_helper.from_array(x, inp.name).SerializeToString())
            for k, (o, y) in enumerate(zip(s.get_outputs(), s.run(None, {inp.name: x}))):
                with open(os.path.join(out, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
                    f.write(numpy_helper.from_array(y, o.name).SerializeToString())
            print(out, sorted({n.op_type for n in onnx.load(os.path.join(out, "model.onnx")).graph.node}))
    os.remove(pre)
