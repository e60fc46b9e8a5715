#!/usr/bin/env python3
"""torchvision detectors (random weights, score threshold 0 so every detection slot is filled)
exported with the TorchScript exporter at opset 17 to /tmp/det/NAME/model.onnx, with
onnxruntime's (CPU) outputs on a seeded image in test_data_set_0 (docs/model_zoo.md, "Detection
models"). Usage: export_detectors.py NAME, e.g. ssdlite320_mobilenet_v3_large,
fasterrcnn_mobilenet_v3_large_320_fpn, retinanet_resnet50_fpn. Needs torch, torchvision, onnx,
onnxruntime."""
import torch, torchvision, onnx, numpy as np, onnxruntime as ort, os, sys, time
from onnx import numpy_helper
torch.manual_seed(0)
name = sys.argv[1]
ctor = getattr(torchvision.models.detection, name)
kw = dict(weights=None, weights_backbone=None)
if "ssdlite" in name or "ssd300" in name: pass
m = ctor(**kw).eval()
if hasattr(m, "roi_heads") and hasattr(m.roi_heads, "score_thresh"): m.roi_heads.score_thresh = 0.0
if hasattr(m, "score_thresh"): m.score_thresh = 0.0
size = 320 if "320" in name or "ssdlite" in name else 256
x = torch.rand(3, size, size)
d = f"/tmp/det/{name}"; os.makedirs(d + "/test_data_set_0", exist_ok=True)
t = time.time()
torch.onnx.export(m, ([x],), d + "/model.onnx", opset_version=17, dynamo=False, input_names=["image"])
print("exported", time.time() - t)
mp = onnx.load(d + "/model.onnx")
print(name, sorted({n.op_type for n in mp.graph.node}))
s = ort.InferenceSession(d + "/model.onnx")
outs = s.run(None, {"image": x.numpy()})
print([o.shape for o in outs])
open(d + "/test_data_set_0/input_0.pb", "wb").write(numpy_helper.from_array(x.numpy(), "image").SerializeToString())
for k, o in enumerate(outs):
    open(d + f"/test_data_set_0/output_{k}.pb", "wb").write(numpy_helper.from_array(np.asarray(o), s.get_outputs()[k].name).SerializeToString())
