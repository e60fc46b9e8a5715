"""The fp32 MLP block of the H200 comparisons as an ONNX file, with no dependency but numpy:
y = LayerNorm(Gelu(x @ W1 + b1) @ W2 + b2 + x), x [M, D] an fp32 input, W1 [D, H], W2 [H, D]
and the biases / LayerNorm scale and shift fp32 initializers (seeded uniform, weights scaled
by 1/sqrt(fan-in)). The protobuf is written with bench/fp16_gemm_model.py's field writers.
With --bf16 every tensor (input, output, initializers) is bfloat16 instead, the values rounded to
nearest even (W7's bf16 MLP without torch or onnx; its GEMMs take the tiled Vulkan template).
With --fp16 every tensor is float16 (W7's fp16 MLP; on the H200 its GEMMs take the
cooperative-matrix template, FUSOR_VK_COOPMAT_SPLIT_K / FUSOR_VK_COOPMAT_VEC A/B them).
Usage: python3 bench/mlp_fp32_model.py [--bf16|--fp16] OUT.onnx M [D H]   (default D 1024, H 4096)
Then:  fusor bench OUT.onnx --backend vulkan   (FUSOR_VK_SPLIT_K=1 for the run without split-K)"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fp16_gemm_model import field_bytes, field_int, field_str, node  # noqa: E402

FLOAT, FLOAT16, BFLOAT16 = 1, 10, 16  # TensorProto.FLOAT, FLOAT16, BFLOAT16
BF16 = "--bf16" in sys.argv
FP16 = "--fp16" in sys.argv
ELEM = BFLOAT16 if BF16 else FLOAT16 if FP16 else FLOAT


def raw(arr):
    """fp32 bytes, fp16 bytes, or bf16 bit patterns rounded to nearest even (the values are finite)."""
    if FP16:
        return arr.astype(np.float16).tobytes()
    if not BF16:
        return arr.astype(np.float32).tobytes()
    u = np.ascontiguousarray(arr, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16).tobytes()


def tensor(name, arr):  # TensorProto: dims 1, data_type 2, name 8, raw_data 9
    dims = b"".join(field_int(1, d) for d in arr.shape)
    return dims + field_int(2, ELEM) + field_str(8, name) + field_bytes(9, raw(arr))


def value_info(name, shape):
    dims = b"".join(field_bytes(1, field_int(1, d)) for d in shape)
    return field_str(1, name) + field_bytes(2, field_bytes(1, field_int(1, ELEM) + field_bytes(2, dims)))


def main():
    args = [a for a in sys.argv[1:] if a not in ("--bf16", "--fp16")]
    out, m = args[0], int(args[1])
    d, h = (int(args[2]), int(args[3])) if len(args) > 3 else (1024, 4096)
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
