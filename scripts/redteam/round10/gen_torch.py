"""Small random-weight versions of real architectures, exported with torch.onnx.export
(dynamo=False opset 17 and dynamo=True opset 18), saved as round-10 cases with onnxruntime's outputs."""
import os, sys, math, traceback, warnings
warnings.filterwarnings('ignore')
import numpy as np, torch, torch.nn as nn, torch.nn.functional as F
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib10 import save_case, ROOT
torch.manual_seed(0)

class Bert(nn.Module):
    def __init__(s, V=97, H=36, heads=4, L=2, T=2, P=64):
        super().__init__()
        s.we = nn.Embedding(V, H); s.pe = nn.Embedding(P, H); s.te = nn.Embedding(T, H); s.ln = nn.LayerNorm(H)
        s.layers = nn.ModuleList([nn.ModuleDict(dict(q=nn.Linear(H, H), k=nn.Linear(H, H), v=nn.Linear(H, H), o=nn.Linear(H, H),
            ln1=nn.LayerNorm(H), f1=nn.Linear(H, 4 * H), f2=nn.Linear(4 * H, H), ln2=nn.LayerNorm(H))) for _ in range(L)])
        s.h = heads; s.pool = nn.Linear(H, H)
    def forward(s, ids, tt, mask):
        B, S = ids.shape
        pos = torch.arange(S).unsqueeze(0)
        x = s.ln(s.we(ids) + s.pe(pos) + s.te(tt))
        am = (1.0 - mask[:, None, None, :].float()) * -10000.0
        for l in s.layers:
            H = x.shape[-1]; d = H // s.h
            q = l['q'](x).view(B, S, s.h, d).transpose(1, 2); k = l['k'](x).view(B, S, s.h, d).transpose(1, 2)
            v = l['v'](x).view(B, S, s.h, d).transpose(1, 2)
            a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d) + am, -1) @ v
            x = l['ln1'](x + l['o'](a.transpose(1, 2).reshape(B, S, H)))
            x = l['ln2'](x + l['f2'](F.gelu(l['f1'](x))))
        return x, torch.tanh(s.pool(x[:, 0]))

class ViT(nn.Module):
    def __init__(s, C=3, P=4, H=24, img=20, heads=3):
        super().__init__()
        s.pe = nn.Conv2d(C, H, P, P); n = (img // P) ** 2
        s.cls = nn.Parameter(torch.randn(1, 1, H)); s.pos = nn.Parameter(torch.randn(1, n + 1, H))
        s.blk = nn.TransformerEncoderLayer(H, heads, 2 * H, dropout=0.0, activation='gelu', batch_first=True, norm_first=True)
        s.ln = nn.LayerNorm(H); s.head = nn.Linear(H, 10)
    def forward(s, x):
        x = s.pe(x).flatten(2).transpose(1, 2)
        x = torch.cat([s.cls.expand(x.shape[0], -1, -1), x], 1) + s.pos
        x = s.blk(x)
        return s.head(s.ln(x)[:, 0])

class ViTManual(nn.Module):
    def __init__(s, C=3, P=4, H=24, img=20, heads=3):
        super().__init__()
        s.pe = nn.Conv2d(C, H, P, P); n = (img // P) ** 2
        s.cls = nn.Parameter(torch.randn(1, 1, H)); s.pos = nn.Parameter(torch.randn(1, n + 1, H))
        s.qkv = nn.Linear(H, 3 * H); s.proj = nn.Linear(H, H); s.ln1 = nn.LayerNorm(H); s.ln2 = nn.LayerNorm(H)
        s.mlp = nn.Sequential(nn.Linear(H, 2 * H), nn.GELU(approximate='tanh'), nn.Linear(2 * H, H)); s.h = heads
    def forward(s, x):
        x = s.pe(x).flatten(2).transpose(1, 2)
        x = torch.cat([s.cls.expand(x.shape[0], -1, -1), x], 1) + s.pos
        B, N, H = x.shape
        qkv = s.qkv(s.ln1(x)).reshape(B, N, 3, s.h, H // s.h).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
        x = x + s.proj(a.transpose(1, 2).reshape(B, N, H))
        return x + s.mlp(s.ln2(x))

class T5Block(nn.Module):
    def __init__(s, H=32, heads=4, nb=8, maxd=16):
        super().__init__()
        s.w1 = nn.Parameter(torch.rand(H) + 0.5); s.w2 = nn.Parameter(torch.rand(H) + 0.5)
        s.q = nn.Linear(H, H, bias=False); s.k = nn.Linear(H, H, bias=False); s.v = nn.Linear(H, H, bias=False); s.o = nn.Linear(H, H, bias=False)
        s.rb = nn.Embedding(nb, heads); s.wi = nn.Linear(H, 3 * H, bias=False); s.wo = nn.Linear(2 * H, H, bias=False)
        s.h = heads; s.nb = nb; s.maxd = maxd
    def rms(s, x, w):
        return w * (x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))
    def bucket(s, rel):
        nb = s.nb // 2
        ret = (rel > 0).long() * nb; n = torch.abs(rel)
        me = nb // 2; small = n < me
        large = me + (torch.log(n.float() / me + 1e-9) / math.log(s.maxd / me) * (nb - me)).long()
        large = torch.min(large, torch.full_like(large, nb - 1))
        return ret + torch.where(small, n, large)
    def forward(s, x):
        B, S, H = x.shape; d = H // s.h
        y = s.rms(x, s.w1)
        q = s.q(y).view(B, S, s.h, d).transpose(1, 2); k = s.k(y).view(B, S, s.h, d).transpose(1, 2); v = s.v(y).view(B, S, s.h, d).transpose(1, 2)
        ctx = torch.arange(S)[:, None]; mem = torch.arange(S)[None, :]
        bias = s.rb(s.bucket(mem - ctx)).permute(2, 0, 1).unsqueeze(0)
        a = torch.softmax(q @ k.transpose(-1, -2) + bias, -1) @ v
        x = x + s.o(a.transpose(1, 2).reshape(B, S, H))
        y = s.rms(x, s.w2)
        h = s.wi(y); g, u = h.chunk(2 * 1 + 1, -1)[0], h.chunk(3, -1)[1]
        return x + s.wo(torch.cat([F.gelu(g, approximate='tanh') * u, h.chunk(3, -1)[2]], -1))

class RNNm(nn.Module):
    def __init__(s, kind, bi, layers, init, I=5, H=7, batch_first=False):
        super().__init__()
        s.r = getattr(nn, kind)(I, H, layers, bidirectional=bi, batch_first=batch_first); s.kind = kind; s.init = init
    def forward(s, x, *st):
        if s.init:
            y = s.r(x, st if s.kind == 'LSTM' else st[0])
        else: y = s.r(x)
        o, h = y
        return (o,) + (h if isinstance(h, tuple) else (h,))

class UNet(nn.Module):
    def __init__(s, mode, ac):
        super().__init__()
        s.c1 = nn.Conv2d(3, 8, 3, padding=1); s.c2 = nn.Conv2d(8, 16, 3, padding=1, stride=2)
        s.c3 = nn.Conv2d(16, 16, 3, padding=1, stride=2)
        s.up1 = nn.ConvTranspose2d(16, 16, 2, stride=2); s.d1 = nn.Conv2d(32, 8, 3, padding=1)
        s.d2 = nn.Conv2d(16, 4, 3, padding=1); s.bn = nn.BatchNorm2d(16); s.mode = mode; s.ac = ac
        s.bn.eval(); s.bn.running_mean.uniform_(-1, 1); s.bn.running_var.uniform_(0.5, 2)
    def forward(s, x):
        a = F.relu(s.c1(x)); b = F.relu(s.bn(s.c2(a))); c = F.relu(s.c3(b))
        u = s.up1(c); u = F.interpolate(u, size=b.shape[-2:], mode='nearest') if u.shape[-2:] != b.shape[-2:] else u
        u = F.relu(s.d1(torch.cat([u, b], 1)))
        if s.mode == 'nearest': u = F.interpolate(u, size=a.shape[-2:], mode='nearest')
        else: u = F.interpolate(u, size=a.shape[-2:], mode=s.mode, align_corners=s.ac)
        return s.d2(torch.cat([u, a], 1))

class Upsample(nn.Module):
    def __init__(s, mode, ac, scale):
        super().__init__(); s.mode = mode; s.ac = ac; s.scale = scale
    def forward(s, x):
        kw = {} if s.mode in ('nearest', 'area', 'nearest-exact') else dict(align_corners=s.ac)
        return F.interpolate(x, scale_factor=s.scale, mode=s.mode, **kw)

class Det(nn.Module):
    def __init__(s, k=5):
        super().__init__(); s.k = k; s.conv = nn.Conv2d(4, 8, 3, padding=1)
    def forward(s, feat, scores, boxes):
        import torchvision
        f = s.conv(feat)
        v, i = torch.topk(scores, s.k, dim=-1)
        b = boxes[i]
        keep = torchvision.ops.nms(b, v, 0.4)
        r = torchvision.ops.roi_align(f, [b], output_size=(3, 3), spatial_scale=0.5, sampling_ratio=2, aligned=True)
        return v, i, keep, r, boxes[-1], boxes[:, -2]

class Audio(nn.Module):
    def __init__(s):
        super().__init__()
        s.c1 = nn.Conv1d(1, 16, 11, stride=2, padding=5); s.c2 = nn.Conv1d(16, 16, 5, stride=2, groups=4, padding=2)
        s.c3 = nn.Conv1d(16, 16, 3, groups=16, dilation=2); s.gn = nn.GroupNorm(4, 16); s.c4 = nn.Conv1d(16, 8, 1)
    def forward(s, x):
        x = F.gelu(s.gn(s.c1(x))); x = F.relu(s.c2(x)); x = F.silu(s.c3(x)); return F.max_pool1d(s.c4(x), 3, 2, ceil_mode=True)

class Decode(nn.Module):
    def __init__(s, V=31, H=16):
        super().__init__(); s.e = nn.EmbeddingBag(V, H, mode='mean'); s.l = nn.Linear(H, V); s.eos = 3
    def forward(s, ids, offsets, logits_prev):
        h = s.e(ids, offsets); lg = s.l(h) + logits_prev
        tok = lg.argmax(-1)
        done = tok == s.eos
        tok2 = torch.where(done, torch.zeros_like(tok), tok)
        cs = torch.cumsum(done.long(), 0)
        return tok2, cs, lg.argmin(-1, keepdim=True), lg.max(-1).values

class Decode2(nn.Module):  # EmbeddingBag sum mode w/o offsets, 2-D ids
    def __init__(s, V=31, H=16):
        super().__init__(); s.e = nn.EmbeddingBag(V, H, mode='sum'); s.e2 = nn.EmbeddingBag(V, H, mode='max')
    def forward(s, ids):
        return s.e(ids), s.e2(ids)

class SDPA(nn.Module):
    def __init__(s, causal, mask_kind):
        super().__init__(); s.causal = causal; s.mk = mask_kind
    def forward(s, q, k, v, m=None):
        if s.mk == 'float': return F.scaled_dot_product_attention(q, k, v, attn_mask=m)
        if s.mk == 'bool': return F.scaled_dot_product_attention(q, k, v, attn_mask=m > 0)
        return F.scaled_dot_product_attention(q, k, v, is_causal=s.causal, scale=0.3 if s.mk == 'scale' else None)

class Ein(nn.Module):
    def __init__(s, eq, n): super().__init__(); s.eq = eq; s.n = n
    def forward(s, *xs): return torch.einsum(s.eq, *xs)

class MHA(nn.Module):
    def __init__(s, E=24, h=3, kdim=None):
        super().__init__(); s.m = nn.MultiheadAttention(E, h, batch_first=True, kdim=kdim, vdim=kdim)
    def forward(s, q, k, kpm):
        return s.m(q, k, k, key_padding_mask=kpm > 0, need_weights=True)

def R(*sh, lo=-1, hi=1): return torch.rand(*sh) * (hi - lo) + lo

def cases():
    B, S = 3, 13
    ids = torch.randint(0, 97, (B, S)); tt = torch.randint(0, 2, (B, S)); mask = torch.ones(B, S, dtype=torch.long); mask[1, 9:] = 0; mask[2, 4:] = 0
    yield 'bert', Bert(), (ids, tt, mask), ['ids', 'tt', 'mask']
    yield 'vit', ViT(), (R(2, 3, 20, 20),), ['x']
    yield 'vit_manual', ViTManual(), (R(3, 3, 20, 20),), ['x']
    yield 't5', T5Block(), (R(2, 7, 32),), ['x']
    yield 't5_s33', T5Block(), (R(2, 33, 32),), ['x']
    for kind in ('LSTM', 'GRU'):
        for bi in (False, True):
            for L in (1, 2):
                for init in (False, True):
                    m = RNNm(kind, bi, L, init); nd = 2 if bi else 1
                    x = R(7, 3, 5); st = (R(L * nd, 3, 7), R(L * nd, 3, 7)) if kind == 'LSTM' else (R(L * nd, 3, 7),)
                    args = (x,) + (st if init else ())
                    yield f'{kind.lower()}_bi{int(bi)}_L{L}_init{int(init)}', m, args, ['x', 'h0', 'c0'][:len(args)]
    yield 'lstm_bf', RNNm('LSTM', True, 2, False, batch_first=True), (R(3, 7, 5),), ['x']
    yield 'rnn_tanh_bi', RNNm('RNN', True, 2, True), (R(7, 3, 5), R(4, 3, 7)), ['x', 'h0']
    for mode, ac in (('nearest', None), ('bilinear', True), ('bilinear', False)):
        yield f'unet_{mode}_{ac}', UNet(mode, ac), (R(2, 3, 13, 13),), ['x']
    for mode in ('nearest', 'bilinear', 'bicubic', 'nearest-exact', 'area'):
        for ac in ((True, False) if mode in ('bilinear', 'bicubic') else (None,)):
            for sc in (2, 1.5, 0.7):
                if mode == 'area' and sc != 2: continue
                yield f'up_{mode}_{ac}_{sc}', Upsample(mode, ac, sc), (R(2, 3, 7, 9),), ['x']
    try:
        import torchvision
        sc = torch.rand(20); bx = torch.rand(20, 4) * 10; bx[:, 2:] += bx[:, :2] + 1
        yield 'det', Det(), (R(1, 4, 11, 13), sc, bx), ['feat', 'scores', 'boxes']
    except ImportError: pass
    yield 'audio', Audio(), (R(2, 1, 401),), ['x']
    yield 'decode', Decode(), (torch.randint(0, 31, (17,)), torch.tensor([0, 3, 3, 9, 12]), R(5, 31)), ['ids', 'offs', 'lp']
    yield 'decode2', Decode2(), (torch.randint(0, 31, (5, 7)),), ['ids']
    for c, mk in ((True, None), (False, None), (False, 'float'), (False, 'bool'), (True, 'scale')):
        q = R(2, 3, 7, 8); k = R(2, 3, 9 if not c else 7, 8); v = R(2, 3, k.shape[2], 5)
        args = (q, k, v) + ((R(2, 1, 7, k.shape[2]),) if mk in ('float', 'bool') else ())
        yield f'sdpa_c{int(c)}_{mk}', SDPA(c, mk), args, ['q', 'k', 'v', 'm'][:len(args)]
    for i, (eq, shs) in enumerate([('bij,bjk->bik', [(3, 4, 5), (3, 5, 6)]), ('bhqd,bhkd->bhqk', [(2, 3, 7, 8), (2, 3, 9, 8)]),
                                    ('ij,ij->i', [(5, 7), (5, 7)]), ('ii->i', [(6, 6)]), ('i,j->ij', [(5,), (7,)]),
                                    ('...ij,...jk->...ik', [(2, 3, 4, 5), (3, 5, 2)]), ('abc,cd,de->abe', [(2, 3, 4), (4, 5), (5, 6)]),
                                    ('bn,anm,bm->ba', [(3, 4), (5, 4, 6), (3, 6)]), ('ijk->kji', [(2, 3, 4)]), ('ij->', [(3, 4)]),
                                    ('bij->bj', [(2, 3, 4)]), ('b i d, b j d -> b i j', [(2, 3, 4), (2, 5, 4)])]):
        yield f'einsum{i}', Ein(eq, len(shs)), tuple(R(*s) for s in shs), [f'x{j}' for j in range(len(shs))]
    kpm = torch.zeros(2, 9); kpm[1, 6:] = 1
    yield 'mha', MHA(), (R(2, 7, 24), R(2, 9, 24), kpm), ['q', 'k', 'kpm']
    yield 'mha_kdim', MHA(kdim=10), (R(2, 7, 24), R(2, 9, 10), kpm), ['q', 'k', 'kpm']

def export(name, m, args, names, dynamo, opset):
    m.eval()
    tag = f'{name}_{"dyn" if dynamo else "ts"}{opset}'
    d = os.path.join(ROOT, 'models', tag); os.makedirs(d, exist_ok=True)
    p = os.path.join(d, 'model.onnx')
    try:
        with torch.no_grad():
            if dynamo:
                torch.onnx.export(m, args, p, input_names=names[:len(args)], dynamo=True, opset_version=opset, external_data=False, verbose=False)
            else:
                torch.onnx.export(m, args, p, input_names=names[:len(args)], dynamo=False, opset_version=opset)
    except Exception as e:
        print(tag, 'EXPORT-FAIL', str(e).splitlines()[0][:150] if str(e) else type(e).__name__, flush=True); return None
    import onnx
    mp = onnx.load(p)
    feeds = {}
    gin = [i.name for i in mp.graph.input if i.name not in {t.name for t in mp.graph.initializer}]
    for n, a in zip(gin, args): feeds[n] = a.numpy()
    if len(gin) != len(args):
        # exporter dropped an unused input: match by name
        feeds = {n: a.numpy() for n, a in zip(names, args) if n in gin}
    save_case(tag, p, feeds)
    print(tag, 'saved', flush=True)
    return tag

if __name__ == '__main__':
    only = sys.argv[1:]
    for name, m, args, names in cases():
        if only and not any(name.startswith(o) for o in only): continue
        for dyn, ops in ((False, 17), (True, 18)):
            export(name, m, args, names, dyn, ops)
