import sys, os
sys.path.insert(0, '/tmp/rt24')
from lib import *
import torchvision as tv
from torchvision import models as M
torch.manual_seed(0)
def rnd_bn(m):
    g = torch.Generator().manual_seed(3)
    for mod in m.modules():
        if isinstance(mod, (torch.nn.BatchNorm2d, torch.nn.BatchNorm3d, torch.nn.BatchNorm1d)):
            n = mod.num_features
            mod.running_mean.copy_(torch.randn(n, generator=g) * 0.1); mod.running_var.copy_(torch.rand(n, generator=g) + 0.5)
            if mod.weight is not None: mod.weight.data.copy_(torch.rand(n, generator=g) + 0.5); mod.bias.data.copy_(torch.randn(n, generator=g) * 0.1)
    return m
class Outs(torch.nn.Module):
    """flatten dict / list outputs (detection) into a tuple"""
    def __init__(s, m, keys=None): super().__init__(); s.m = m; s.keys = keys
    def forward(s, *a):
        r = s.m(*a)
        if isinstance(r, dict): return tuple(r[k] for k in (s.keys or r.keys()))
        if isinstance(r, list) and r and isinstance(r[0], dict): return tuple(r[0][k] for k in s.keys)
        if isinstance(r, list): return tuple(r)
        return r
class Raft(torch.nn.Module):
    def __init__(s, m): super().__init__(); s.m = m
    def forward(s, a, b): return s.m(a, b, num_flow_updates=3)[-1]
def im(b=1, h=64, w=64): return torch.randn(b, 3, h, w)
SP = {
 'swin_v2_t': lambda: (M.swin_v2_t(), (im(),)),
 'swin_t': lambda: (M.swin_t(), (im(),)),
 'mvit_v2_s': lambda: (M.video.mvit_v2_s(), (torch.randn(1, 3, 16, 224, 224),)),
 's3d': lambda: (M.video.s3d(num_classes=10), (torch.randn(1, 3, 8, 64, 64),)),
 'r2plus1d_18': lambda: (M.video.r2plus1d_18(num_classes=10), (torch.randn(1, 3, 4, 32, 32),)),
 'mc3_18': lambda: (M.video.mc3_18(num_classes=10), (torch.randn(1, 3, 4, 32, 32),)),
 'alexnet': lambda: (M.alexnet(num_classes=10), (im(h=96, w=96),)),
 'vgg11_bn': lambda: (M.vgg11_bn(num_classes=10), (im(h=32, w=32),)),
 'wide_resnet50_2': lambda: (M.wide_resnet50_2(num_classes=10), (im(),)),
 'convnext_tiny': lambda: (M.convnext_tiny(num_classes=10), (im(),)),
 'vit_b16_small': lambda: (M.vision_transformer.VisionTransformer(image_size=32, patch_size=16, num_layers=2, num_heads=4, hidden_dim=64, mlp_dim=128, num_classes=10), (im(2, 32, 32),)),
 'maxvit_t': lambda: (M.maxvit_t(num_classes=10), (im(h=224, w=224),)),
 'squeezenet1_0': lambda: (M.squeezenet1_0(num_classes=10), (im(),)),
 'shufflenet_v2_x1_0': lambda: (M.shufflenet_v2_x1_0(num_classes=10), (im(2),)),
 'mnasnet1_3': lambda: (M.mnasnet1_3(num_classes=10), (im(),)),
 'efficientnet_b3': lambda: (M.efficientnet_b3(num_classes=10), (im(),)),
 'regnet_y_800mf': lambda: (M.regnet_y_800mf(num_classes=10), (im(),)),
 'resnet34': lambda: (M.resnet34(num_classes=10), (im(2),)),
 'deeplabv3_resnet50': lambda: (Outs(M.segmentation.deeplabv3_resnet50(weights=None, weights_backbone=None, num_classes=5, aux_loss=False), ['out']), (im(),)),
 'fcn_resnet50_aux': lambda: (Outs(M.segmentation.fcn_resnet50(weights=None, weights_backbone=None, num_classes=5, aux_loss=True), ['out', 'aux']), (im(),)),
 'lraspp': lambda: (Outs(M.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=5), ['out']), (im(),)),
 'raft_small': lambda: (Raft(M.optical_flow.raft_small(weights=None)), (im(h=64, w=64), im(h=64, w=64))),
 'ssdlite': lambda: (Outs(M.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=5), ['boxes', 'scores', 'labels']), ([torch.rand(3, 160, 160)],)),
 'fasterrcnn_mnv3': lambda: (Outs(M.detection.fasterrcnn_mobilenet_v3_large_320_fpn(weights=None, weights_backbone=None, num_classes=5), ['boxes', 'scores', 'labels']), ([torch.rand(3, 160, 160)],)),
 'retinanet': lambda: (Outs(M.detection.retinanet_resnet50_fpn(weights=None, weights_backbone=None, num_classes=5, min_size=128, max_size=128), ['boxes', 'scores', 'labels']), ([torch.rand(3, 128, 128)],)),
 'keypointrcnn': lambda: (Outs(M.detection.keypointrcnn_resnet50_fpn(weights=None, weights_backbone=None, num_classes=2, min_size=128, max_size=128), ['boxes', 'scores', 'keypoints']), ([torch.rand(3, 128, 128)],)),
 'maskrcnn': lambda: (Outs(M.detection.maskrcnn_resnet50_fpn(weights=None, weights_backbone=None, num_classes=3, min_size=128, max_size=128), ['boxes', 'scores', 'masks']), ([torch.rand(3, 128, 128)],)),
}
if __name__ == '__main__':
    variants = os.environ.get('VARIANTS', 'ts17,dyn18').split(',')
    for name in sys.argv[1:]:
        torch.manual_seed(1)
        try: m, a = SP[name]()
        except Exception as e: print(f'{name}\tBUILD-FAIL\t{e}'); continue
        rnd_bn(m); m.eval()
        det = isinstance(a[0], list)
        for v in variants:
            half = v.endswith('h'); dyn = v.startswith('dyn'); ops = int(v.rstrip('h')[3:] if dyn else v.rstrip('h')[2:])
            import copy
            mm = copy.deepcopy(m) if half else m
            if det:
                # detection: one image tensor input
                class One(torch.nn.Module):
                    def __init__(s, m): super().__init__(); s.m = m
                    def forward(s, x): return s.m([x])
                export_case(f'{name}_{v}', One(mm), (a[0][0],), ['image'], dyn, ops, half=half)
            else:
                export_case(f'{name}_{v}', mm, a, [f'x{i}' for i in range(len(a))], dyn, ops, half=half)
