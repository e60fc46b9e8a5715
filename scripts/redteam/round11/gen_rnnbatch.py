"""LSTM-7 / GRU-7 / RNN-7 with initial_h / initial_c / sequence_lens whose batch differs from X (invalid)."""
import os, sys, numpy as np
from onnx import helper as oh, TensorProto as TP
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib11 import save_case
exec(''.join(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'gen_old.py')).readlines()[:18]))
T, B, In, H = 3, 2, 3, 4
for hb, sb in ((1, 2), (2, 1), (5, 2), (2, 5), (1000, 2)):
    save_case(f'lstm7_hb{hb}_sb{sb}', mk([oh.make_node('LSTM', ['x', 'W', 'R', '', 'sl', 'h0', 'c0'], ['Y', 'Yh'], hidden_size=H)], [vi('x', F, [T, B, In]), vi('sl', TP.INT32, [sb]), vi('h0', F, [1, hb, H]), vi('c0', F, [1, hb, H])], [vi('Y'), vi('Yh')],
                                        [c('W', R(1, 4 * H, In)), c('R', R(1, 4 * H, H))], opset=7), {'x': R(T, B, In), 'sl': np.full(sb, T, np.int32), 'h0': R(1, hb, H), 'c0': R(1, hb, H)}, run_ort=False)
    save_case(f'gru7_hb{hb}_sb{sb}', mk([oh.make_node('GRU', ['x', 'W', 'R', '', 'sl', 'h0'], ['Y', 'Yh'], hidden_size=H)], [vi('x', F, [T, B, In]), vi('sl', TP.INT32, [sb]), vi('h0', F, [1, hb, H])], [vi('Y'), vi('Yh')],
                                       [c('W', R(1, 3 * H, In)), c('R', R(1, 3 * H, H))], opset=7), {'x': R(T, B, In), 'sl': np.full(sb, T, np.int32), 'h0': R(1, hb, H)}, run_ort=False)
