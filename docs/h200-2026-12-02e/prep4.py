# prep3.py's models (docs/h200-2026-12-02b/prep3.py) plus the MLP at batch 1 in fp16 and fp32.
# (On the H200 this ran as one file, a copy of prep3.py with the lines below appended.)
import os
exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "h200-2026-12-02b", "prep3.py")).read())
for dt, tag in ((torch.float16, "fp16"), (torch.float32, "fp32")):
    try: export(mlp_model().cuda().to(dt), torch.randn(1, 1024, device="cuda", dtype=dt), f"mlp1_{tag}")
    except Exception as e: print("mlp1", tag, "export failed", str(e)[:200])
