"""Raw-ONNX LSTM / GRU / RNN options (activations with alpha/beta, clip, peepholes, input_forget,
layout 1, reverse, sequence_lens, linear_before_reset) and ConvTranspose options, against onnxruntime."""
import os, sys, numpy as np, onnx
from onnx import helper as oh, numpy_helper as nh, TensorProto as TP
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib10 import save_case
rng = np.random.default_rng(11)
F = TP.FLOAT
def vi(n, t=F, s=None): return oh.make_tensor_value_info(n, t, s)
def R(*s, a=1.0): return rng.uniform(-a, a, s).astype(np.float32)
def mk(nodes, ins, outs, inits=(), opset=17): return oh.make_model(oh.make_graph(nodes, 'g', ins, outs, list(inits)), opset_imports=[oh.make_opsetid('', opset)], ir_version=9)
k = 0
T, B, I, H = 5, 3, 4, 6
acts = {'LSTM': [None, (['HardSigmoid', 'Tanh', 'Tanh'], [0.3], [0.4]), (['Sigmoid', 'LeakyRelu', 'Softsign'], [0.1], []), (['Sigmoid', 'ScaledTanh', 'Elu'], [0.7, 1.2], [1.5, 0.0]),
                 (['Sigmoid', 'Softplus', 'Affine'], [0.5], [0.2]), (['Sigmoid', 'ThresholdedRelu', 'Relu'], [0.1], [])],
        'GRU': [None, (['HardSigmoid', 'Softsign'], [0.25], [0.45]), (['Sigmoid', 'Elu'], [0.9], []), (['Sigmoid', 'ScaledTanh'], [1.1], [0.8])],
        'RNN': [None, (['Relu'], [], []), (['LeakyRelu'], [0.2], []), (['Affine'], [0.6], [0.1]), (['HardSigmoid'], [0.2], [0.5])]}
G = {'LSTM': 4, 'GRU': 3, 'RNN': 1}
for op in ('LSTM', 'GRU', 'RNN'):
    for di, direction in enumerate(('forward', 'reverse', 'bidirectional')):
        nd = 2 if direction == 'bidirectional' else 1
        for ai, act in enumerate(acts[op]):
            for layout in (0, 1):
                for seql in (False, True):
                    for extra in ((None, 'clip', 'peep', 'iforget', 'lbr0') if op == 'LSTM' or op == 'GRU' else (None, 'clip')):
                        if extra == 'peep' and op != 'LSTM' or extra == 'iforget' and op != 'LSTM' or extra == 'lbr0' and op != 'GRU': continue
                        if ai > 1 and (layout or seql or extra): continue
                        attrs = dict(direction=direction, hidden_size=H, layout=layout)
                        if act:
                            a = act[0] * nd; attrs['activations'] = a
                            if act[1]: attrs['activation_alpha'] = act[1] * nd
                            if act[2]: attrs['activation_beta'] = act[2] * nd
                        if extra == 'clip': attrs['clip'] = 0.6
                        if extra == 'iforget': attrs['input_forget'] = 1
                        if op == 'GRU': attrs['linear_before_reset'] = 0 if extra == 'lbr0' else 1
                        g = G[op]
                        W = R(nd, g * H, I); Rr = R(nd, g * H, H); Bb = R(nd, 2 * g * H)
                        x = R(B, T, I, a=2) if layout else R(T, B, I, a=2)
                        h0 = R(B, nd, H) if layout else R(nd, B, H)
                        ins = ['x', 'W', 'R', 'B', 'sl' if seql else '', 'h0']; inits = [nh.from_array(W, 'W'), nh.from_array(Rr, 'R'), nh.from_array(Bb, 'B')]
                        feeds = {'x': x, 'h0': h0}; gi = [vi('x', F, list(x.shape)), vi('h0', F, list(h0.shape))]
                        if seql: feeds['sl'] = np.array([5, 2, 3], np.int32); gi.append(vi('sl', TP.INT32, [3]))
                        outs = ['y', 'yh']
                        if op == 'LSTM':
                            ins.append('c0'); c0 = R(*h0.shape); feeds['c0'] = c0; gi.append(vi('c0', F, list(c0.shape))); outs.append('yc')
                            if extra == 'peep': ins.append('P'); inits.append(nh.from_array(R(nd, 3 * H), 'P'))
                        m = mk([oh.make_node(op, ins, outs, **attrs)], gi, [vi(o) for o in outs], inits)
                        save_case(f'rnn_{op}_{direction}_a{ai}_l{layout}_s{int(seql)}_{extra}', m, feeds); k += 1
# ConvTranspose
for dims in (1, 2, 3):
    for grp in (1, 3):
        for st, dil, op_, pads, ap, oshape in ((2, 1, 0, 0, None, None), (2, 1, 1, 1, None, None), (3, 2, 2, 1, None, None), (2, 1, 0, None, 'SAME_UPPER', None),
                                               (2, 1, 0, None, 'SAME_LOWER', None), (3, 1, 0, None, None, 'os'), (1, 3, 0, 2, None, None), (2, 2, 1, 'asym', None, None)):
            C = 6; M = 3 if grp == 3 else 4; K = 3; sp = [7, 5, 4][:dims]
            x = R(2, C, *sp); w = R(C, M // grp if grp > 1 else M, *([K] * dims))
            attrs = dict(strides=[st] * dims, dilations=[dil] * dims, group=grp)
            if op_: attrs['output_padding'] = [op_] * dims
            if pads == 'asym': attrs['pads'] = [0] * dims + [2] * dims
            elif pads is not None: attrs['pads'] = [pads] * (2 * dims)
            if ap: attrs['auto_pad'] = ap
            if oshape: attrs['output_shape'] = [s * st + 1 for s in sp]
            m = mk([oh.make_node('ConvTranspose', ['x', 'w', 'b'], ['y'], **attrs)], [vi('x', F, list(x.shape))], [vi('y')], [nh.from_array(w, 'w'), nh.from_array(R(w.shape[1] * grp), 'b')])
            save_case(f'convt_{dims}d_g{grp}_s{st}_d{dil}_op{op_}_p{pads}_{ap}_{oshape}', m, {'x': x}); k += 1
print(k)
