"""The fp32 MLP block of the H200 comparisons as an ONNX file, with no dependency but numpy:
y = LayerNorm(Gelu(x @ W1 + b1) @ W2 + b2 + x), x [M, D] an fp32 input, W1 [D, H], W2 [H, D]
and the biases / LayerNorm scale and shift fp32 initializers (seeded uniform, weights scaled
by 1/sqrt(fan-in)). The protobuf is written with bench/fp16_gemm_model.py's field writers.
Usage: python3 bench/mlp_fp32_model.py OUT.onnx M [D H]   (default D 1024, H 4096)
Then:  fusor bench OUT.onnx --backend vulkan   (FUSOR_VK_SPLIT_K=1 for the run without split-K)"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fp16_gemm_model import field_bytes, field_int, field_str, node  # noqa: E402

FLOAT = 1  # TensorProto.FLOAT


def tensor(name, arr):  # TensorProto: dims 1, data_type 2, name 8, raw_data 9
    dims = b"".join(field_int(1, d) for d in arr.shape)
    return dims + field_int(2, FLOAT) + field_str(8, name) + field_bytes(9, arr.astype(np.float32).tobytes())


def value_info(name, shape):
    dims = b"".join(field_bytes(1, field_int(1, d)) for d in shape)
    return field_str(1, name) + field_bytes(2, field_bytes(1, field_int(1, FLOAT) + field_bytes(2, dims)))


def main():
    out, m = sys.argv[1], int(sys.argv[2])
    d, h = (int(sys.argv[3]), int(sys.argv[4])) if len(sys.argv) > 4 else (1024, 4096)
    rng = np.random.RandomState(0)
    nodes = [(["x", "w1"], ["t1"], "MatMul"), (["t1", "b1"], ["t2"], "Add"), (["t2"], ["t3"], "Gelu"),
             (["t3", "w2"], ["t4"], "MatMul"), (["t4", "b2"], ["t5"], "Add"), (["t5", "x"], ["t6"], "Add"),
             (["t6", "gamma", "beta"], ["y"], "LayerNormalization")]
    g = b"".join(field_bytes(1, node(*n)) for n in nodes) + field_str(2, "mlp_fp32")
    inits = {"w1": rng.uniform(-1, 1, (d, h)) / np.sqrt(d), "b1": rng.uniform(-1, 1, (h,)),
             "w2": rng.uniform(-1, 1, (h, d)) / np.sqrt(h), "b2": rng.uniform(-1, 1, (d,)),
             "gamma": rng.uniform(0.5, 1.5, (d,)), "beta": rng.uniform(-1, 1, (d,))}
    g += b"".join(field_bytes(5, tensor(k, v)) for k, v in inits.items())
    g += field_bytes(11, value_info("x", [m, d])) + field_bytes(12, value_info("y", [m, d]))
    model = field_int(1, 8) + field_bytes(8, field_str(1, "") + field_int(2, 20)) + field_bytes(7, g)
    with open(out, "wb") as f:
        f.write(model)


if __name__ == "__main__":
    main()
