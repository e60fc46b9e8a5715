"""Scan-8 with mismatched batch sizes between state and scan inputs (invalid)."""
import os, sys, numpy as np
from onnx import helper as oh, TensorProto as TP
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib11 import save_case
exec(''.join(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'gen_old.py')).readlines()[:18]))
body = oh.make_graph([oh.make_node('Add', ['s_in', 'x_t'], ['s_out']), oh.make_node('Identity', ['s_out'], ['y_t'])], 'b', [vi('s_in', F, [3]), vi('x_t', F, [3])], [vi('s_out', F, [3]), vi('y_t', F, [3])])
for bs, bx in ((2, 3), (3, 2), (1000, 1), (1, 5)):
    save_case(f'scan8_batch_{bs}_{bx}', mk([oh.make_node('Scan', ['', 's0', 'xs'], ['sf', 'ys'], body=body, num_scan_inputs=1)], [vi('s0', F, [bs, 3]), vi('xs', F, [bx, 4, 3])], [vi('sf'), vi('ys')], opset=8), {'s0': R(bs, 3), 'xs': R(bx, 4, 3)}, run_ort=False)
