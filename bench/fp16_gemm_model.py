"""A one-kernel fp16 GEMM model for `fusor bench`, with no dependency but numpy: y = Gelu(x @ W + b)
with x [M, K] an fp16 input and W [K, N], b [N] fp16 initializers (seeded uniform [-1, 1]).
The ONNX protobuf is written by hand (a few fields of ModelProto/GraphProto/NodeProto/
TensorProto/ValueInfoProto, opset 20 for Gelu), so it runs where the onnx package is missing.
Usage: python3 bench/fp16_gemm_model.py OUT.onnx M K N
Then:  fusor bench OUT.onnx --backend vulkan   (notes: "... on cooperative matrices (coopmat ...)")"""
import sys
import numpy as np

FLOAT16 = 10  # TensorProto.FLOAT16


def varint(v):
    out = b""
    while True:
        b, v = v & 0x7F, v >> 7
        if not v:
            return out + bytes([b])
        out += bytes([b | 0x80])


def field_bytes(f, b):  # length-delimited field
    return varint((f << 3) | 2) + varint(len(b)) + b


def field_int(f, v):  # varint field
    return varint(f << 3) + varint(v)


def field_str(f, s):
    return field_bytes(f, s.encode())


def tensor(name, arr):  # TensorProto: dims 1, data_type 2, name 8, raw_data 9
    dims = b"".join(field_int(1, d) for d in arr.shape)
    return dims + field_int(2, FLOAT16) + field_str(8, name) + field_bytes(9, arr.astype(np.float16).tobytes())


def value_info(name, shape):  # ValueInfoProto{name, type{tensor_type{elem_type, shape{dim{dim_value}}}}}
    dims = b"".join(field_bytes(1, field_int(1, d)) for d in shape)
    return field_str(1, name) + field_bytes(2, field_bytes(1, field_int(1, FLOAT16) + field_bytes(2, dims)))


def node(inputs, outputs, op):  # NodeProto: input 1, output 2, op_type 4
    return b"".join(field_str(1, i) for i in inputs) + b"".join(field_str(2, o) for o in outputs) + field_str(4, op)


def main():
    out, m, k, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    rng = np.random.RandomState(0)
    g = field_bytes(1, node(["x", "w"], ["t"], "MatMul")) + field_bytes(1, node(["t", "b"], ["u"], "Add"))
    g += field_bytes(1, node(["u"], ["y"], "Gelu")) + field_str(2, "fp16_gemm")
    g += field_bytes(5, tensor("w", rng.uniform(-1, 1, (k, n)))) + field_bytes(5, tensor("b", rng.uniform(-1, 1, (n,))))
    g += field_bytes(11, value_info("x", [m, k])) + field_bytes(12, value_info("y", [m, n]))
    model = field_int(1, 8) + field_bytes(8, field_str(1, "") + field_int(2, 20)) + field_bytes(7, g)
    with open(out, "wb") as f:
        f.write(model)


if __name__ == "__main__":
    main()
