# Exports the W2 rows models and W7-style MLP b64 / GPT-2 2L (fp16, fp32; bf16 MLP) to /tmp/w.
import os, sys, torch, onnx
sys.path.insert(0, "bench")
from workloads import rows_onnx, mlp_model, gpt2_model
W = "/tmp/w"
def save(m, name):
    d = os.path.join(W, name); os.makedirs(d, exist_ok=True); onnx.save(m, os.path.join(d, "model.onnx"))
def export(mod, ex, name):
    d = os.path.join(W, name); os.makedirs(d, exist_ok=True); p = os.path.join(d, "model.onnx")
    try:
        torch.onnx.export(mod, (ex,), p, opset_version=17, dynamo=False, input_names=["input"], output_names=["output"])
    except Exception:
        torch.onnx.export(mod, (ex,), p, opset_version=18, dynamo=True, input_names=["input"], output_names=["output"], external_data=False)
for op in ("Softmax", "LayerNormalization"): save(rows_onnx(op, 16384, 4096, "w2_" + op), "w2_" + op)
for dt, tag in ((torch.float16, "fp16"), (torch.bfloat16, "bf16"), (torch.float32, "fp32")):
    for what in ("mlp64", "gpt2"):
        try:
            if what == "mlp64": export(mlp_model().cuda().to(dt), torch.randn(64, 1024, device="cuda", dtype=dt), f"mlp64_{tag}")
            else: export(gpt2_model().cuda().to(dt), torch.randint(0, 50257, (1, 64), device="cuda"), f"gpt2_{tag}")
        except Exception as e: print(what, tag, "export failed", str(e)[:200])
for dt, tag in ((torch.float16, "fp16"), (torch.float32, "fp32")):
    try: export(mlp_model().cuda().to(dt), torch.randn(1, 1024, device="cuda", dtype=dt), f"mlp1_{tag}")
    except Exception as e: print("mlp1", tag, "export failed", str(e)[:200])
