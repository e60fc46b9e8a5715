#!/usr/bin/env python3
"""Writes an ONNX model y = Relu(Sum(x0..x{N-1})) with N float32 [4] inputs (no onnx package
needed: the protobuf is encoded by hand). Used to measure planning time against fan-in:

    python3 bench/sum_fanin.py 10000 /tmp/sum10000.onnx
    time build/fusor explain /tmp/sum10000.onnx > /dev/null
"""
import sys


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(num, payload):  # length-delimited field
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def vint(num, value):
    return varint(num << 3) + varint(value)


def value_info(name, dims):
    shape = b"".join(field(1, vint(1, d)) for d in dims)
    tensor = vint(1, 1) + field(2, shape)  # elem_type FLOAT, shape
    return field(1, name.encode()) + field(2, field(1, tensor))


def node(op, inputs, outputs, name):
    return (b"".join(field(1, i.encode()) for i in inputs) + b"".join(field(2, o.encode()) for o in outputs)
            + field(3, name.encode()) + field(4, op.encode()))


def main():
    n, path = int(sys.argv[1]), sys.argv[2]
    names = [f"x{i}" for i in range(n)]
    graph = (field(1, node("Sum", names, ["s"], "sum")) + field(1, node("Relu", ["s"], ["y"], "relu"))
             + field(2, b"sum_fanin") + b"".join(field(11, value_info(x, [4])) for x in names)
             + field(12, value_info("y", [4])))
    model = vint(1, 8) + field(8, vint(2, 17)) + field(7, graph)
    with open(path, "wb") as f:
        f.write(model)


if __name__ == "__main__":
    main()
