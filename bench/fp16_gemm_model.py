"""A one-kernel GEMM model for `fusor bench`, with no dependency but numpy: y = Gelu(x @ W + b)
with x [M, K] an input and W [K, N], b [N] initializers (seeded uniform [-1, 1]), all fp16 (or
the --dtype given: fp32, fp16, bf16).
The ONNX protobuf is written by hand (a few fields of ModelProto/GraphProto/NodeProto/
TensorProto/ValueInfoProto, opset 20 for Gelu), so it runs where the onnx package is missing.
Usage: python3 bench/fp16_gemm_model.py [--dtype fp32|fp16|bf16] [--plain] OUT.onnx M K N
  --plain: y = x @ W only (no epilogue), to separate the main loop's cost from the epilogue's.
Then:  fusor bench OUT.onnx --backend vulkan   (notes: "... on cooperative matrices (coopmat ...)")"""
import sys
import numpy as np

FLOAT16 = 10  # TensorProto.FLOAT16
DTYPES = {"fp32": 1, "fp16": 10, "bf16": 16}  # TensorProto.DataType
ELEM = FLOAT16  # set by --dtype


def encode(arr):  # raw_data of arr in ELEM's dtype (bf16: float32 rounded to nearest even)
    if ELEM == 1:
        return arr.astype(np.float32).tobytes()
    if ELEM == 16:
        u = arr.astype(np.float32).view(np.uint32).astype(np.uint64)
        return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16).tobytes()
    return arr.astype(np.float16).tobytes()


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
    return dims + field_int(2, ELEM) + field_str(8, name) + field_bytes(9, encode(arr))


def value_info(name, shape):  # ValueInfoProto{name, type{tensor_type{elem_type, shape{dim{dim_value}}}}}
    dims = b"".join(field_bytes(1, field_int(1, d)) for d in shape)
    return field_str(1, name) + field_bytes(2, field_bytes(1, field_int(1, ELEM) + field_bytes(2, dims)))


def node(inputs, outputs, op):  # NodeProto: input 1, output 2, op_type 4
    return b"".join(field_str(1, i) for i in inputs) + b"".join(field_str(2, o) for o in outputs) + field_str(4, op)


def main():
    global ELEM
    args, plain = sys.argv[1:], False
    while args and args[0].startswith("--"):  # --dtype X and --plain, in any order
        if args[0] == "--plain":
            plain, args = True, args[1:]
        elif args[0] == "--dtype" and len(args) > 1 and args[1] in DTYPES:
            ELEM, args = DTYPES[args[1]], args[2:]
        else:
            sys.exit(f"unknown option {args[0]!r}; usage: fp16_gemm_model.py [--dtype fp32|fp16|bf16] [--plain] OUT.onnx M K N")
    if len(args) != 4:
        sys.exit("usage: fp16_gemm_model.py [--dtype fp32|fp16|bf16] [--plain] OUT.onnx M K N")
    out, m, k, n = args[0], int(args[1]), int(args[2]), int(args[3])
    rng = np.random.RandomState(0)
    if plain:
        g = field_bytes(1, node(["x", "w"], ["y"], "MatMul")) + field_str(2, "fp16_gemm")
        g += field_bytes(5, tensor("w", rng.uniform(-1, 1, (k, n))))
    else:
        g = field_bytes(1, node(["x", "w"], ["t"], "MatMul")) + field_bytes(1, node(["t", "b"], ["u"], "Add"))
        g += field_bytes(1, node(["u"], ["y"], "Gelu")) + field_str(2, "fp16_gemm")
        g += field_bytes(5, tensor("w", rng.uniform(-1, 1, (k, n)))) + field_bytes(5, tensor("b", rng.uniform(-1, 1, (n,))))
    g += field_bytes(11, value_info("x", [m, k])) + field_bytes(12, value_info("y", [m, n]))
    model = field_int(1, 8) + field_bytes(8, field_str(1, "") + field_int(2, 20)) + field_bytes(7, g)
    with open(out, "wb") as f:
        f.write(model)


if __name__ == "__main__":
    main()
