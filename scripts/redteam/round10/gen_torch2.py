"""More torch patterns from real models: Unfold/Fold, PixelShuffle/Unshuffle, GridSample, roll, flip,
tril/triu, reflect/replicate/circular pad, normalize, cdist, pooling with ceil_mode / dilation,
adaptive pooling, layer/group/instance norm, ELU/SELU/Mish/Hardswish, masked_fill, index_put, gather."""
import os, sys, warnings; warnings.filterwarnings('ignore')
import torch, torch.nn as nn, torch.nn.functional as F
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_torch import export
torch.manual_seed(3)
class L(nn.Module):
    def __init__(s, f): super().__init__(); s.f = f
    def forward(s, *a): return s.f(*a)
def R(*sh): return torch.rand(*sh) * 2 - 1
x4 = R(2, 3, 9, 11)
C = [
 ('unfold', L(lambda x: F.unfold(x, 3, dilation=2, padding=1, stride=2)), (x4,)),
 ('fold', L(lambda x: F.fold(x, (9, 11), 3, padding=1, stride=2)), (R(2, 27, 30),)),
 ('pixshuf', L(lambda x: F.pixel_shuffle(x, 2)), (R(2, 12, 5, 7),)),
 ('pixunshuf', L(lambda x: F.pixel_unshuffle(x, 2)), (R(2, 3, 10, 14),)),
 ('gridsample_bil_zeros_ac0', L(lambda x, g: F.grid_sample(x, g, 'bilinear', 'zeros', align_corners=False)), (x4, R(2, 5, 6, 2) * 1.2)),
 ('gridsample_bil_border_ac1', L(lambda x, g: F.grid_sample(x, g, 'bilinear', 'border', align_corners=True)), (x4, R(2, 5, 6, 2) * 1.2)),
 ('gridsample_near_refl_ac0', L(lambda x, g: F.grid_sample(x, g, 'nearest', 'reflection', align_corners=False)), (x4, R(2, 5, 6, 2) * 1.7)),
 ('gridsample_bic_zeros_ac0', L(lambda x, g: F.grid_sample(x, g, 'bicubic', 'zeros', align_corners=False)), (x4, R(2, 5, 6, 2) * 1.1)),
 ('affine_grid', L(lambda t: F.affine_grid(t, [2, 3, 5, 7], align_corners=False)), (R(2, 2, 3),)),
 ('roll', L(lambda x: torch.roll(x, (2, -3), (2, 3))), (x4,)),
 ('flip', L(lambda x: torch.flip(x, (1, 3))), (x4,)),
 ('tril', L(lambda x: torch.tril(x, -1) + torch.triu(x, 2)), (x4,)),
 ('pad_reflect', L(lambda x: F.pad(x, (2, 3, 1, 0), 'reflect')), (x4,)),
 ('pad_replicate', L(lambda x: F.pad(x, (2, 3, 1, 4), 'replicate')), (x4,)),
 ('pad_circular', L(lambda x: F.pad(x, (2, 3, 1, 4), 'circular')), (x4,)),
 ('pad_const_neg', L(lambda x: F.pad(x, (-1, 2, 3, -2), 'constant', 0.5)), (x4,)),
 ('normalize', L(lambda x: F.normalize(x, p=2, dim=1) + F.normalize(x, p=1, dim=-1)), (x4,)),
 ('cdist', L(lambda a, b: torch.cdist(a, b)), (R(2, 7, 5), R(2, 9, 5))),
 ('maxpool_ceil_dil', L(lambda x: F.max_pool2d(x, 3, 2, 1, dilation=2, ceil_mode=True)), (x4,)),
 ('maxpool_ceil', L(lambda x: F.max_pool2d(x, 2, 2, 0, ceil_mode=True)), (x4,)),
 ('avgpool_ceil_pad', L(lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=True)), (x4,)),
 ('avgpool_ceil_nopad', L(lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)), (x4,)),
 ('avgpool1d_ceil', L(lambda x: F.avg_pool1d(x, 4, 3, 2, ceil_mode=True)), (R(2, 3, 13),)),
 ('maxpool_idx', L(lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True)), (x4,)),
 ('adapt_avg', L(lambda x: F.adaptive_avg_pool2d(x, (3, 1))), (R(2, 3, 9, 11),)),
 ('adapt_max', L(lambda x: F.adaptive_max_pool2d(x, (3, 1))), (R(2, 3, 9, 11),)),
 ('lppool', L(lambda x: F.lp_pool2d(x, 2, 3, 2)), (x4,)),
 ('norms', L(lambda x: F.group_norm(x, 3) + F.instance_norm(x) + F.layer_norm(x, (9, 11))), (x4,)),
 ('acts', L(lambda x: F.elu(x) + F.selu(x) + F.mish(x) + F.hardswish(x) + F.softplus(x, 2, 1) + F.celu(x, 0.5) + F.hardtanh(x, -0.3, 0.4) + F.logsigmoid(x) + F.softsign(x) + F.rrelu(x, training=False) + F.glu(x, 1 if False else -1).repeat(1, 1, 1, 2)[..., :11]), (R(2, 3, 9, 22)[..., :22],)),
 ('masked_fill', L(lambda x, m: x.masked_fill(m > 0, float('-inf')).softmax(-1)), (x4, (R(2, 1, 9, 11) > 0.5).float())),
 ('index_put', L(lambda x, i, v: x.index_put((i,), v, accumulate=True)), (R(7, 4), torch.tensor([1, 3, 1, -1]), R(4, 4))),
 ('index_put_noacc', L(lambda x, i, v: x.index_put((i,), v)), (R(7, 4), torch.tensor([1, 3, 5, -1]), R(4, 4))),
 ('gather_take', L(lambda x, i: torch.gather(x, 1, i) + x[:, [-1, 0, -2]].sum()), (R(5, 6), torch.randint(0, 6, (5, 4)))),
 ('scatter_add', L(lambda x, i, v: x.scatter_add(1, i, v)), (R(5, 6), torch.randint(0, 6, (5, 4)), R(5, 4))),
 ('scatter_reduce_amax', L(lambda x, i, v: x.scatter_reduce(1, i, v, 'amax')), (R(5, 6), torch.randint(0, 6, (5, 4)), R(5, 4))),
 ('cumprod_logcumsumexp', L(lambda x: torch.cumprod(x, 1) + torch.logcumsumexp(x, 2)), (R(2, 3, 5),)),
 ('nonzero_where', L(lambda x: (x[x > 0.3] * 2).sum() + torch.nonzero(x > 0.5).float().sum()), (R(4, 5),)),
 ('argsort_sort', L(lambda x: torch.sort(x, -1, descending=True)[0] + torch.argsort(x, 1).float().sum()), (R(3, 7),)),
 ('std_var', L(lambda x: x.std(1, keepdim=True) + x.var(-1, unbiased=False, keepdim=True).mean()), (R(3, 7, 5),)),
 ('linalg_norm', L(lambda x: torch.linalg.vector_norm(x, 3, dim=-1) + torch.linalg.vector_norm(x, float('inf'), dim=-1)), (R(3, 7),)),
 ('conv3d', nn.Conv3d(3, 4, (2, 3, 3), stride=(1, 2, 1), padding=(1, 0, 2), groups=1), (R(2, 3, 5, 9, 7),)),
 ('convt1d', nn.ConvTranspose1d(4, 6, 5, stride=3, padding=2, output_padding=1, groups=2, dilation=2), (R(2, 4, 11),)),
 ('convt3d', nn.ConvTranspose3d(2, 3, 3, stride=2, padding=1, output_padding=1), (R(1, 2, 3, 4, 5),)),
 ('bilinear', nn.Bilinear(5, 6, 7), (R(4, 5), R(4, 6))),
 ('embedding_maxnorm', nn.Embedding(11, 4, padding_idx=0), (torch.randint(0, 11, (3, 5)),)),
 ('prelu', nn.PReLU(3, 0.1), (x4,)),
]
for name, m, args in C:
    for dyn, ops in ((False, 17), (True, 18)):
        export('t2_' + name, m, args, [f'in{i}' for i in range(len(args))], dyn, ops)
