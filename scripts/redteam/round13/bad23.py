"""invalid opset-23 attention-family models: each must be one clear error on every backend"""
import sys, numpy as np, onnx
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from h import *
F = TP.FLOAT
R = np.random.default_rng(0)
def rn(*s): return R.standard_normal(s).astype(np.float32)
cases = []
# Attention: Hq % Hkv != 0
cases.append(('att_heads_ratio', [oh.make_node('Attention', ['Q', 'K', 'V'], ['Y'])], dict(Q=rn(1, 3, 4, 8), K=rn(1, 2, 4, 8), V=rn(1, 2, 4, 8))))
# 3D without num_heads
cases.append(('att_3d_noheads', [oh.make_node('Attention', ['Q', 'K', 'V'], ['Y'])], dict(Q=rn(1, 4, 16), K=rn(1, 4, 16), V=rn(1, 4, 16))))
# 3D hidden not divisible by heads
cases.append(('att_3d_div', [oh.make_node('Attention', ['Q', 'K', 'V'], ['Y'], q_num_heads=3, kv_num_heads=3)], dict(Q=rn(1, 4, 16), K=rn(1, 4, 16), V=rn(1, 4, 16))))
# K head size != Q head size
cases.append(('att_kd', [oh.make_node('Attention', ['Q', 'K', 'V'], ['Y'])], dict(Q=rn(1, 2, 4, 8), K=rn(1, 2, 4, 7), V=rn(1, 2, 4, 8))))
# mask wrong last dim
cases.append(('att_mask', [oh.make_node('Attention', ['Q', 'K', 'V', 'M'], ['Y'])], dict(Q=rn(1, 2, 4, 8), K=rn(1, 2, 5, 8), V=rn(1, 2, 5, 8), M=rn(4, 3))))
# past_key without past_value
cases.append(('att_past_only', [oh.make_node('Attention', ['Q', 'K', 'V', '', 'PK'], ['Y'])], dict(Q=rn(1, 2, 4, 8), K=rn(1, 2, 4, 8), V=rn(1, 2, 4, 8), PK=rn(1, 2, 3, 8))))
# qk mode out of range
cases.append(('att_qkmode9', [oh.make_node('Attention', ['Q', 'K', 'V'], ['Y', '', '', 'QK'], qk_matmul_output_mode=9)], dict(Q=rn(1, 2, 4, 8), K=rn(1, 2, 4, 8), V=rn(1, 2, 4, 8))))
# V batch mismatch
cases.append(('att_vbatch', [oh.make_node('Attention', ['Q', 'K', 'V'], ['Y'])], dict(Q=rn(2, 2, 4, 8), K=rn(2, 2, 4, 8), V=rn(1, 2, 4, 8))))
# RoPE position ids out of range
pos = np.array([[0, 1, 99]], np.int64)
cases.append(('rope_pos_oob', [oh.make_node('RotaryEmbedding', ['X', 'C', 'S', 'P'], ['Y'])], dict(X=rn(1, 2, 3, 8), C=rn(10, 4), S=rn(10, 4), P=pos)))
cases.append(('rope_pos_neg', [oh.make_node('RotaryEmbedding', ['X', 'C', 'S', 'P'], ['Y'])], dict(X=rn(1, 2, 3, 8), C=rn(10, 4), S=rn(10, 4), P=np.array([[0, -1, 2]], np.int64))))
# RoPE odd rotary dim / larger than head
cases.append(('rope_odd_dim', [oh.make_node('RotaryEmbedding', ['X', 'C', 'S', 'P'], ['Y'], rotary_embedding_dim=3)], dict(X=rn(1, 2, 3, 8), C=rn(10, 1), S=rn(10, 1), P=np.zeros((1, 3), np.int64))))
cases.append(('rope_big_dim', [oh.make_node('RotaryEmbedding', ['X', 'C', 'S', 'P'], ['Y'], rotary_embedding_dim=16)], dict(X=rn(1, 2, 3, 8), C=rn(10, 8), S=rn(10, 8), P=np.zeros((1, 3), np.int64))))
cases.append(('rope_cache_width', [oh.make_node('RotaryEmbedding', ['X', 'C', 'S', 'P'], ['Y'])], dict(X=rn(1, 2, 3, 8), C=rn(10, 3), S=rn(10, 3), P=np.zeros((1, 3), np.int64))))
cases.append(('rope_3d_noheads', [oh.make_node('RotaryEmbedding', ['X', 'C', 'S', 'P'], ['Y'])], dict(X=rn(1, 3, 16), C=rn(10, 4), S=rn(10, 4), P=np.zeros((1, 3), np.int64))))
# RMSNorm scale not broadcastable
cases.append(('rms_scale', [oh.make_node('RMSNormalization', ['X', 'S'], ['Y'], axis=-1)], dict(X=rn(2, 8), S=rn(7))))
cases.append(('rms_axis', [oh.make_node('RMSNormalization', ['X', 'S'], ['Y'], axis=2)], dict(X=rn(2, 8), S=rn(8))))
for name, nodes, feeds in cases:
    ins = [vi(k, TP.INT64 if v.dtype == np.int64 else F, list(v.shape)) for k, v in feeds.items()]
    outs = [vi(o, F, None) for o in nodes[0].output if o]
    m = model(nodes, ins, outs, opset=23)
    try: ort_run(m, feeds); o = 'ORT runs'
    except Exception as ex: o = 'ORT err'
    f, res = check('bad_' + name, m, feeds, exp=[], quiet=True, expect_error=True)
    print(f'{name:18s} {o:8s}', ' | '.join(f"{b}:{res[b][0]}:{res[b][1].splitlines()[-1][:150] if res[b][1] else ''}" for b in ['ref']), '|', 'cpu/vk rc', res['cpu'][0], res['vulkan'][0])
    if f: print('   FAULT', f)
