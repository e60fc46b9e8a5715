# torchvision detectors with spread-out scores (head weights scaled) so NMS / TopK have no ties
import sys, os
sys.path.insert(0, '/tmp/rt24')
from lib import *
import gen_tv
from torchvision.models import detection as D
def scale(mod, f):
    with torch.no_grad():
        for p in mod.parameters(): p.mul_(f)
SP = {
 'det_ssdlite': lambda: (lambda m: (scale(m.head.classification_head, 8), m)[1])(D.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=5)),
 'det_frcnn': lambda: (lambda m: (scale(m.roi_heads.box_predictor, 5), scale(m.rpn.head, 3), m)[2])(D.fasterrcnn_mobilenet_v3_large_320_fpn(weights=None, weights_backbone=None, num_classes=5)),
 'det_fcos': lambda: (lambda m: (scale(m.head.classification_head, 5), m)[1])(D.fcos_resnet50_fpn(weights=None, weights_backbone=None, num_classes=5, min_size=128, max_size=128)),
}
class One(torch.nn.Module):
    def __init__(s, m): super().__init__(); s.m = m
    def forward(s, x):
        r = s.m([x])[0]; return r['boxes'], r['scores'], r['labels']
if __name__ == '__main__':
    for name in sys.argv[1:]:
        torch.manual_seed(1); m = SP[name](); gen_tv.rnd_bn(m); m.eval()
        x = torch.rand(3, 160, 160)
        with torch.no_grad(): r = One(m)(x)
        print(name, 'torch scores', r[1][:8].numpy(), 'n', len(r[1]), 'unique', len(np.unique(r[1].numpy())))
        export_case(f'{name}_ts17', One(m), (x,), ['image'], False, 17)
