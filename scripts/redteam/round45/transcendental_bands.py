# Models of one fp32 op each over magnitude bands (2,000 seeded inputs per band) for
# transcendental_ulp.py: /tmp/trig/<Op>/model.onnx and in/input_0.npy.
import numpy as np, onnx, os
from onnx import helper as H, TensorProto as T
rs = np.random.RandomState(0)
def bands(mags, lo=None):
    return np.concatenate([rs.uniform(-m if lo is None else lo(m), m, 2000) for m in mags]).astype(np.float32)
wide = [1, 3, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e8, 1e12, 1e20, 1e30, 3e38]
cases = {op: bands(wide) for op in ["Sin", "Cos", "Tan", "Atan", "Asinh", "Tanh"]}
cases["Log"] = np.abs(bands(wide))
cases["Exp"] = bands([1, 10, 50, 88, 104])  # past 88.7: inf; below -87.3: subnormal results
for op in ["Sinh", "Cosh"]: cases[op] = bands([1, 10, 50, 89.4])
cases["Asin"] = cases["Acos"] = bands([1e-3, 0.5, 1.0])
cases["Atanh"] = bands([0.25, 0.9, 0.999])
cases["Acosh"] = bands([1.001, 1.5, 1e3, 1e30], lo=lambda m: 1.0)
for op, x in cases.items():
    g = H.make_graph([H.make_node(op, ["x"], ["y"])], "g", [H.make_tensor_value_info("x", T.FLOAT, [x.size])],
                     [H.make_tensor_value_info("y", T.FLOAT, None)])
    m = H.make_model(g, opset_imports=[H.make_opsetid("", 17)]); m.ir_version = 8
    d = f"/tmp/trig/{op}"; os.makedirs(d + "/in", exist_ok=True); onnx.save(m, d + "/model.onnx")
    np.save(d + "/in/input_0.npy", x)
