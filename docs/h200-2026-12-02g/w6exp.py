# Exports the W6 torchvision CNNs (random weights, eval, fp32) at batch 1 and 32 to /tmp/w6/ARCH_B/model.onnx,
# as bench/side_by_side.py does (TorchScript exporter, opset 17).
import os, torch, torchvision
for arch in ("resnet18", "squeezenet1_1", "mobilenet_v3_small", "shufflenet_v2_x0_5"):
    for b in (1, 32):
        d = f"/tmp/w6/{arch}_{b}"; os.makedirs(d, exist_ok=True)
        torch.manual_seed(0)
        m = getattr(torchvision.models, arch)(weights=None).eval()
        torch.onnx.export(m, (torch.randn(b, 3, 224, 224),), f"{d}/model.onnx", opset_version=17, dynamo=False,
                          input_names=["input"], output_names=["output"])
        print("exported", d)
