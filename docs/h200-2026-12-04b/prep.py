# Session 20: the W4 MLP block at batch 64 and 1 in fp32 / fp16 / bf16 to /tmp/w/mlp{64,1}_{tag}
# (TorchScript exporter, opset 17, as bench/side_by_side.py does).
import os, sys, torch
sys.path.insert(0, "bench")
from workloads import mlp_model
for dt, tag in ((torch.float32, "fp32"), (torch.float16, "fp16"), (torch.bfloat16, "bf16")):
    for b in (64, 1):
        d = f"/tmp/w/mlp{b}_{tag}"; os.makedirs(d, exist_ok=True)
        try:
            torch.onnx.export(mlp_model().cuda().to(dt), (torch.randn(b, 1024, device="cuda", dtype=dt),), f"{d}/model.onnx",
                              opset_version=17, dynamo=False, input_names=["input"], output_names=["output"])
        except Exception as e: print("mlp", b, tag, "export failed", str(e)[:200])
print("prep done")
