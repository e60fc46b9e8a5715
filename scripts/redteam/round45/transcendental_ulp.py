# Largest fp32 ulp distance per magnitude band of fusor's outputs (run.sh wrote them with
# `fusor run --out`) from numpy's float64 sin / cos / tan / exp / log rounded to fp32.
import numpy as np, onnx, sys
from onnx import numpy_helper as nh
mags = [1, 3, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e8, 1e12, 1e20, 1e30, 3e38]
root, backend = sys.argv[1], sys.argv[2]
for op, f in [("Sin", np.sin), ("Cos", np.cos), ("Tan", np.tan), ("Exp", np.exp), ("Log", np.log)]:
    x = np.load(f"{root}/{op}/in/input_0.npy")
    t = onnx.TensorProto(); t.ParseFromString(open(f"{root}/{op}/out_{backend}/output_0.pb", "rb").read())
    y = nh.to_array(t)
    with np.errstate(all="ignore"):
        ref = f(x.astype(np.float64)).astype(np.float32)
    ulp = np.abs(y.view(np.int32).astype(np.int64) - ref.view(np.int32).astype(np.int64))
    ulp[np.isnan(ref) & np.isnan(y)] = 0
    bands = len(x) // 2000
    print(f"{backend} {op:4s} max ulp per band:", " ".join(str(int(ulp[i * 2000:(i + 1) * 2000].max())) for i in range(bands)))
