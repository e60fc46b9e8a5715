# Largest fp32 ulp distance per band (transcendental_bands.py) of a backend's outputs (run.sh
# wrote them with `fusor run --out`) from numpy's float64 function rounded to fp32. Distances
# count representable floats between the two (across zero too); a NaN matches a NaN; a
# subnormal result flushed to 0 (lavapipe) counts 0.
import numpy as np, onnx, os, sys
from onnx import numpy_helper as nh
FN = {"Sin": np.sin, "Cos": np.cos, "Tan": np.tan, "Exp": np.exp, "Log": np.log, "Sinh": np.sinh, "Cosh": np.cosh,
      "Tanh": np.tanh, "Asin": np.arcsin, "Acos": np.arccos, "Atan": np.arctan, "Asinh": np.arcsinh, "Acosh": np.arccosh,
      "Atanh": np.arctanh}
root, backend = sys.argv[1], sys.argv[2]
def ordered(a):
    i = a.view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7fffffff), i)
for op, f in FN.items():
    if not os.path.exists(f"{root}/{op}/out_{backend}/output_0.pb"): continue
    x = np.load(f"{root}/{op}/in/input_0.npy")
    t = onnx.TensorProto(); t.ParseFromString(open(f"{root}/{op}/out_{backend}/output_0.pb", "rb").read())
    y = nh.to_array(t)
    with np.errstate(all="ignore"):
        ref = f(x.astype(np.float64)).astype(np.float32)
    ulp = np.abs(ordered(y) - ordered(ref))
    ulp[(np.isnan(ref) & np.isnan(y)) | ((np.abs(ref) < 2.0**-126) & (y == 0))] = 0
    print(f"{backend} {op:5s} max ulp per band:", " ".join(str(int(ulp[i:i + 2000].max())) for i in range(0, len(x), 2000)))
