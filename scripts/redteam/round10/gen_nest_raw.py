"""Nested If subgraphs 100..20000 deep, built as raw protobuf bytes (Python protobuf stops at depth 100)."""
import os, sys, numpy as np, onnx
from onnx import helper as oh, numpy_helper as nh, TensorProto as TP
F = TP.FLOAT
def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7f; n >>= 7
        if n: out.append(b | 0x80)
        else: out.append(b); return bytes(out)
def field(num, payload): return varint(num << 3 | 2) + varint(len(payload)) + payload
def attr_graph(name, gbytes):
    a = onnx.AttributeProto(); a.name = name; a.type = onnx.AttributeProto.GRAPH
    return a.SerializeToString() + field(6, gbytes)
def build(depth):
    inner = oh.make_graph([oh.make_node('Add', ['x', 'one'], ['y0'])], 'g0', [], [oh.make_tensor_value_info('y0', F, None)]).SerializeToString()
    for i in range(1, depth + 1):
        other = oh.make_graph([oh.make_node('Neg', ['x'], [f'n{i}'])], f'e{i}', [], [oh.make_tensor_value_info(f'n{i}', F, None)]).SerializeToString()
        node = oh.make_node('If', ['c'], [f'y{i}']).SerializeToString() + field(5, attr_graph('then_branch', inner)) + field(5, attr_graph('else_branch', other))
        g = onnx.GraphProto(); g.name = f'g{i}'; g.output.append(oh.make_tensor_value_info(f'y{i}', F, None))
        inner = field(1, node) + g.SerializeToString()
    # top graph: inner's node plus inputs and the initializer
    top = onnx.GraphProto(); top.name = 'top'
    top.input.extend([oh.make_tensor_value_info('x', F, [3]), oh.make_tensor_value_info('c', TP.BOOL, [])])
    top.initializer.append(nh.from_array(np.array([1], np.float32), 'one'))
    top.output.append(oh.make_tensor_value_info(f'y{depth}', F, None))
    # take the If node field from the last wrapper (first field)
    top_bytes = inner.split(onnx.GraphProto(name=f'g{depth}').SerializeToString())[0] if False else None
    m = onnx.ModelProto(); m.ir_version = 9; m.opset_import.append(oh.make_opsetid('', 17))
    nodefield = inner[:len(inner) - len(g.SerializeToString())]
    return m.SerializeToString() + field(7, nodefield + top.SerializeToString())
for depth in map(int, sys.argv[1:]):
    d = f'/tmp/rt10/models/nestraw_if_{depth}'; os.makedirs(f'{d}/inputs', exist_ok=True)
    open(f'{d}/model.onnx', 'wb').write(build(depth))
    open(f'{d}/inputs/input_0.pb', 'wb').write(nh.from_array(np.array([1, 2, 3], np.float32), 'x').SerializeToString())
    open(f'{d}/inputs/input_1.pb', 'wb').write(nh.from_array(np.array(True), 'c').SerializeToString())
    print(d, os.path.getsize(f'{d}/model.onnx'))
