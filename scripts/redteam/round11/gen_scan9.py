"""Scan-9/11 with two scan inputs of different lengths (invalid), Scan-8 sequence axis mismatch."""
import os, sys, numpy as np
from onnx import helper as oh, TensorProto as TP
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib11 import save_case
exec(''.join(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'gen_old.py')).readlines()[:18]))
body = oh.make_graph([oh.make_node('Add', ['s_in', 'a_t'], ['s1']), oh.make_node('Mul', ['s1', 'b_t'], ['s_out']), oh.make_node('Identity', ['s_out'], ['y_t'])], 'b',
                     [vi('s_in', F, [2]), vi('a_t', F, [2]), vi('b_t', F, [2])], [vi('s_out', F, [2]), vi('y_t', F, [2])])
for la, lb in ((5, 3), (3, 5), (1, 200000)):
    for op in (9, 11):
        save_case(f'scan{op}_len_{la}_{lb}', mk([oh.make_node('Scan', ['s0', 'a', 'b'], ['sf', 'ys'], body=body, num_scan_inputs=2)], [vi('s0', F, [2]), vi('a', F, [la, 2]), vi('b', F, [lb, 2])], [vi('sf'), vi('ys')], opset=op), {'s0': R(2), 'a': R(la, 2), 'b': R(lb, 2)}, run_ort=False)
body8 = oh.make_graph([oh.make_node('Add', ['s_in', 'a_t'], ['s1']), oh.make_node('Mul', ['s1', 'b_t'], ['s_out']), oh.make_node('Identity', ['s_out'], ['y_t'])], 'b',
                      [vi('s_in', F, [2]), vi('a_t', F, [2]), vi('b_t', F, [2])], [vi('s_out', F, [2]), vi('y_t', F, [2])])
for la, lb in ((5, 3), (1, 100000)):
    save_case(f'scan8_len_{la}_{lb}', mk([oh.make_node('Scan', ['', 's0', 'a', 'b'], ['sf', 'ys'], body=body8, num_scan_inputs=2)], [vi('s0', F, [1, 2]), vi('a', F, [1, la, 2]), vi('b', F, [1, lb, 2])], [vi('sf'), vi('ys')], opset=8), {'s0': R(1, 2), 'a': R(1, la, 2), 'b': R(1, lb, 2)}, run_ort=False)
# state shape in body [2] but fed [5]
save_case('scan9_state_shape', mk([oh.make_node('Scan', ['s0', 'a', 'b'], ['sf', 'ys'], body=body, num_scan_inputs=2)], [vi('s0', F, [5]), vi('a', F, [3, 2]), vi('b', F, [3, 2])], [vi('sf'), vi('ys')], opset=9), {'s0': R(5), 'a': R(3, 2), 'b': R(3, 2)}, run_ort=False)
save_case('scan9_state_shape_small', mk([oh.make_node('Scan', ['s0', 'a', 'b'], ['sf', 'ys'], body=body, num_scan_inputs=2)], [vi('s0', F, [1]), vi('a', F, [3, 2]), vi('b', F, [3, 2])], [vi('sf'), vi('ys')], opset=9), {'s0': R(1), 'a': R(3, 2), 'b': R(3, 2)}, run_ort=False)
