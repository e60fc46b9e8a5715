"""opset-23 Attention / RotaryEmbedding / RMSNormalization.  usage: att23.py SEED0 N"""
import sys, numpy as np, onnx
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from h import *


def refev(m, feeds):
    from onnx.reference import ReferenceEvaluator
    return ReferenceEvaluator(m).run(None, feeds)


def gen_attn(r):
    B = int(r.choice([1, 2])); Hq = int(r.choice([1, 2, 4, 6])); Hkv = int(r.choice([h for h in [1, 2, 3, 4, 6] if Hq % h == 0]))
    S = int(r.choice([1, 7, 63, 65])); T = int(r.choice([S, 1, 7, 65])); D = int(r.choice([1, 3, 8, 64, 80])); Dv = D if r.random() < .7 else int(r.choice([4, 16]))
    P = int(r.choice([0, 0, 3, 16]))  # past length
    three_d = r.random() < .5
    ins, feeds, attrs = [], {}, {}
    def add(n, shp, dt=TP.FLOAT, arr=None):
        ins.append(vi(n, dt, shp)); feeds[n] = arr if arr is not None else r.standard_normal(shp).astype(np.float32)
    if three_d:
        add('Q', [B, S, Hq * D]); add('K', [B, T, Hkv * D]); add('V', [B, T, Hkv * Dv])
        attrs['q_num_heads'] = Hq; attrs['kv_num_heads'] = Hkv
    else:
        add('Q', [B, Hq, S, D]); add('K', [B, Hkv, T, D]); add('V', [B, Hkv, T, Dv])
    names = ['Q', 'K', 'V']
    mk = str(r.choice(['none', 'bool', 'float', 'float2d']))
    Ttot = T + P
    if mk == 'bool':
        arr = r.random((B, 1, S, Ttot)) < .8; arr[..., 0] = True
        add('mask', [B, 1, S, Ttot], TP.BOOL, arr); names.append('mask')
    elif mk == 'float':
        add('mask', [B, Hq, S, Ttot], TP.FLOAT, np.where(r.random((B, Hq, S, Ttot)) < .2, -np.inf, r.standard_normal((B, Hq, S, Ttot))).astype(np.float32)); names.append('mask')
        feeds['mask'][..., 0] = 0
    elif mk == 'float2d':
        add('mask', [S, Ttot], TP.FLOAT); names.append('mask')
    else:
        names.append('')
    if P:
        add('pk', [B, Hkv, P, D]); add('pv', [B, Hkv, P, Dv]); names += ['pk', 'pv']
    if r.random() < .4: attrs['is_causal'] = 1
    if r.random() < .3: attrs['scale'] = float(r.choice([0.1, 1.0, 2.5]))
    if r.random() < .3: attrs['softcap'] = float(r.choice([5.0, 30.0]))
    if r.random() < .2: attrs['softmax_precision'] = 1
    while names and names[-1] == '': names.pop()
    outs = ['Y']
    if P and r.random() < .7: outs += ['pk_out', 'pv_out']
    qk = r.random() < .3
    if qk:
        while len(outs) < 3: outs.append('')
        outs.append('qk'); attrs['qk_matmul_output_mode'] = int(r.choice([0, 1, 2, 3]))
    n = oh.make_node('Attention', names, outs, **attrs)
    m = model([n], ins, [vi(o, TP.FLOAT, None) for o in outs if o], opset=23)
    return m, feeds, f'attn B{B} Hq{Hq} Hkv{Hkv} S{S} T{T} D{D} Dv{Dv} P{P} 3d={three_d} mask={mk} {attrs} outs={outs}'


def gen_rope(r):
    B = int(r.choice([1, 2])); S = int(r.choice([1, 5, 17])); H = int(r.choice([1, 2, 3])); D = int(r.choice([4, 8, 16, 64]))
    rot = int(r.choice([0, D // 2, D])) if D >= 4 else 0
    if rot % 2: rot = 0
    rd = rot if rot else D
    interleaved = int(r.random() < .5)
    three_d = r.random() < .4
    ins, feeds, attrs = [], {}, {'interleaved': interleaved}
    if rot and rot != D: attrs['rotary_embedding_dim'] = rot
    if three_d:
        ins.append(vi('x', TP.FLOAT, [B, S, H * D])); feeds['x'] = r.standard_normal((B, S, H * D)).astype(np.float32); attrs['num_heads'] = H
    else:
        layout = True
        shp = [B, H, S, D] if layout else [B, S, H, D]
        ins.append(vi('x', TP.FLOAT, shp)); feeds['x'] = r.standard_normal(shp).astype(np.float32)
    use_pos = r.random() < .6
    maxp = S + 10
    ang = np.arange(maxp)[:, None] * (1e-1 ** (np.arange(rd // 2) / max(1, rd // 2)))[None]
    if use_pos:
        ins += [vi('cos', TP.FLOAT, [maxp, rd // 2]), vi('sin', TP.FLOAT, [maxp, rd // 2]), vi('pos', TP.INT64, [B, S])]
        feeds['cos'] = np.cos(ang).astype(np.float32); feeds['sin'] = np.sin(ang).astype(np.float32)
        feeds['pos'] = r.integers(0, maxp, (B, S)).astype(np.int64)
        names = ['x', 'cos', 'sin', 'pos']
    else:
        a2 = np.broadcast_to(ang[:S][None], (B, S, rd // 2)) + r.random((B, 1, 1))
        ins += [vi('cos', TP.FLOAT, [B, S, rd // 2]), vi('sin', TP.FLOAT, [B, S, rd // 2])]
        feeds['cos'] = np.cos(a2).astype(np.float32); feeds['sin'] = np.sin(a2).astype(np.float32)
        names = ['x', 'cos', 'sin']
    n = oh.make_node('RotaryEmbedding', names, ['y'], **attrs)
    m = model([n], ins, [vi('y', TP.FLOAT, None)], opset=23)
    return m, feeds, f'rope {ins[0].type.tensor_type.shape} {attrs} pos={use_pos}'


def gen_rms(r):
    rank = int(r.integers(1, 5)); shp = [int(r.choice([1, 2, 3, 7, 64, 129])) for _ in range(rank)]
    ax = int(r.integers(-rank, rank))
    sshape = shp[ax:] if r.random() < .6 else [1] * (len(shp[ax:]) - 1) + [shp[-1]]
    attrs = {'axis': ax}
    if r.random() < .5: attrs['epsilon'] = float(r.choice([1e-6, 1e-2, 0.5]))
    ins = [vi('x', TP.FLOAT, shp), vi('s', TP.FLOAT, sshape)]
    feeds = {'x': (r.standard_normal(shp) * r.choice([1e-3, 1, 100])).astype(np.float32), 's': r.standard_normal(sshape).astype(np.float32)}
    n = oh.make_node('RMSNormalization', ['x', 's'], ['y'], **attrs)
    m = model([n], ins, [vi('y', TP.FLOAT, None)], opset=23)
    return m, feeds, f'rms {shp} scale{sshape} {attrs}'


if __name__ == '__main__':
    which, s0, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    nf = 0
    for s in range(s0, s0 + n):
        r = np.random.default_rng(s)
        m, feeds, desc = {'attn': gen_attn, 'rope': gen_rope, 'rms': gen_rms}[which](r)
        src = 'ort'
        try:
            exp, extra = oracle64(m, feeds, k=8)
        except Exception as ex:
            try: exp = refev(m, feeds); extra = None; src = 'onnxref'
            except Exception as ex2: print('ORACLE fail', s, desc, str(ex)[:150], str(ex2)[:150]); continue
        f, _ = check(f'{which}23_{s}', m, feeds, exp=exp, tol=(1e-5, 1e-6) if src == 'ort' else (1e-4, 1e-5), quiet=True, extra=extra)
        if f: print('   ', desc, src); nf += 1
    print('done', which, s0, n, 'faults', nf)
