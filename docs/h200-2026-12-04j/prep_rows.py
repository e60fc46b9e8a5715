"""Session 28: the W2 rows for the compensated-sum A/B (run on the H200 by ab.sh): LayerNormalization
and ReduceMean over [16384, 4096] fp32, and a copy (Identity-free: x * 1) of the same size."""
import os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from workloads import rows_onnx

R, C = 16384, 4096
os.makedirs("/tmp/rows/ln", exist_ok=True)
onnx.save(rows_onnx("LayerNormalization", R, C, "w2_ln"), "/tmp/rows/ln/model.onnx")
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [R, C])
mean = helper.make_graph([helper.make_node("ReduceMean", ["x"], ["y"], axes=[1])], "w2_mean", [x],
                         [helper.make_tensor_value_info("y", TensorProto.FLOAT, [R, 1])])
os.makedirs("/tmp/rows/mean", exist_ok=True)
onnx.save(helper.make_model(mean, opset_imports=[helper.make_opsetid("", 17)]), "/tmp/rows/mean/model.onnx")
one = helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])
copy = helper.make_graph([helper.make_node("Mul", ["x", "one"], ["y"])], "w2_copy", [x],
                         [helper.make_tensor_value_info("y", TensorProto.FLOAT, [R, C])], [one])
os.makedirs("/tmp/rows/copy", exist_ok=True)
onnx.save(helper.make_model(copy, opset_imports=[helper.make_opsetid("", 17)]), "/tmp/rows/copy/model.onnx")
print("rows: ln, mean, copy written")
