#!/usr/bin/env python3
"""Control flow over strings (red-team round 48): Scan / Loop bodies that split or tokenize each
slice, and an If whose branches return strings, with onnxruntime's CPU outputs.
Writes tests/data/strings_control/<case>/. Usage: python3 tests/data/make_strings_control.py"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ort_case import write_case  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "strings_control")
S, I64, B = TensorProto.STRING, TensorProto.INT64, TensorProto.BOOL
vi = helper.make_tensor_value_info


def model(nodes, ins, outs, inits=(), ml=False):
    g = helper.make_graph(nodes, "g", ins, outs, list(inits))
    ops = [helper.make_opsetid("", 21)] + ([helper.make_opsetid("com.microsoft", 1)] if ml else [])
    m = helper.make_model(g, opset_imports=ops)
    m.ir_version = 10
    return m


def scalar(name, v):
    return helper.make_tensor(name, I64, [], [v])


x4 = np.array(["a b", "c d e f", "g", ""], dtype=object)

# Scan: each slice's StringSplit count as a scan output (and a carried sum).
body = helper.make_graph(
    [helper.make_node("StringSplit", ["e"], ["t", "c"]), helper.make_node("Add", ["s", "c"], ["s2"]),
     helper.make_node("Identity", ["c"], ["c2"])],
    "body", [vi("s", I64, []), vi("e", S, [])], [vi("s2", I64, []), vi("c2", I64, [])])
write_case(os.path.join(OUT, "scan_split_count"),
           model([helper.make_node("Scan", ["s0", "x"], ["sum", "counts"], body=body, num_scan_inputs=1)],
                 [vi("x", S, [4])], [vi("sum", I64, []), vi("counts", I64, [4])], [scalar("s0", 0)]),
           {"x": x4})

# Scan: the tokens of each slice (com.microsoft Tokenizer on [1] strings) counted with Size.
body = helper.make_graph(
    [helper.make_node("Unsqueeze", ["e", "ax"], ["u"]),
     helper.make_node("Tokenizer", ["u"], ["tok"], domain="com.microsoft", mark=0, mincharnum=1, pad_value="#",
                      separators=[" "]),
     helper.make_node("Size", ["tok"], ["n"])],
    "body", [vi("e", S, [])], [vi("n", I64, [])], [helper.make_tensor("ax", I64, [1], [0])])
write_case(os.path.join(OUT, "scan_tokenizer_size"),
           model([helper.make_node("Scan", ["x"], ["sizes"], body=body, num_scan_inputs=1)],
                 [vi("x", S, [4])], [vi("sizes", I64, [4])], ml=True),
           {"x": np.array(["a b", "c d e f", "g", "h i"], dtype=object)})

# Loop: iteration i splits x[i] on " "; the parts stack as a scan output.
body = helper.make_graph(
    [helper.make_node("Gather", ["x", "i"], ["xi"], axis=0),
     helper.make_node("StringSplit", ["xi"], ["parts", "n"], delimiter=" "),
     helper.make_node("Identity", ["cond"], ["cond2"])],
    "body", [vi("i", I64, []), vi("cond", B, [])], [vi("cond2", B, []), vi("parts", S, [2])])
write_case(os.path.join(OUT, "loop_split_rows"),
           model([helper.make_node("Loop", ["M", "", ], ["rows"], body=body)],
                 [vi("x", S, [3])], [vi("rows", S, [3, 2])], [scalar("M", 3)]),
           {"x": np.array(["a b", "c d", "e f"], dtype=object)})

# Scan over 70 rows of [70, 2] strings (past the unrolled loops' bound), reversed: the state
# keeps the last row seen, the scan output stacks each row with "!" appended along axis 1.
body = helper.make_graph(
    [helper.make_node("Identity", ["row"], ["st2"]), helper.make_node("StringConcat", ["row", "bang"], ["out"])],
    "body", [vi("st", S, [2]), vi("row", S, [2])], [vi("st2", S, [2]), vi("out", S, [2])],
    [helper.make_tensor("bang", S, [], [b"!"])])
rows = np.array([[f"r{i}a", f"r{i}b"] for i in range(70)], dtype=object)
write_case(os.path.join(OUT, "scan_string_state_reversed"),
           model([helper.make_node("Scan", ["st0", "x"], ["last", "stacked"], body=body, num_scan_inputs=1,
                                   scan_input_directions=[1], scan_output_axes=[1])],
                 [vi("st0", S, [2]), vi("x", S, [70, 2])], [vi("last", S, [2]), vi("stacked", S, [2, 70])]),
           {"st0": np.array(["s", "t"], dtype=object), "x": rows})

# If over a run-time condition whose branches return strings.
then_b = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "then", [], [vi("y", S, [2])])
else_b = helper.make_graph([helper.make_node("StringConcat", ["x", "sfx"], ["y"])], "else", [], [vi("y", S, [2])],
                           [helper.make_tensor("sfx", S, [], [b"!"])])
m = model([helper.make_node("If", ["c"], ["y"], then_branch=then_b, else_branch=else_b)],
          [vi("c", B, []), vi("x", S, [2])], [vi("y", S, [2])])
for cond in (True, False):
    write_case(os.path.join(OUT, f"if_strings_{str(cond).lower()}"), m,
               {"c": np.array(cond), "x": np.array(["p", "q"], dtype=object)})
print("wrote", OUT)
