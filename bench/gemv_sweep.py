"""GEMV (batch-1 linear layer) A/B on one GPU: the W4 MLP block (1024 -> 4096 -> 1024, GELU,
residual, LayerNorm) at batch 1 in fp32 and fp16 (and fp32 batch 64, which does not take the
GEMV paths: a regression check) through `fusor bench` on cuda and vulkan, for the old GEMV
kernels (FUSOR_CUDA_GEMV=old / FUSOR_VK_GEMV=old) and the vector GEMV (new: the default; with
its K split forced off, and a few strip widths x workgroup sizes), plus the device copy
bandwidth measured in the same run (torch), so each batch-1 time reads as a fraction of the
memory's speed: pct_copy = (weight bytes / copy bandwidth) / device time.
Usage: python3 bench/gemv_sweep.py --fusor PATH/fusor --out DIR [--quick]"""
import argparse, json, os, subprocess
import torch

from workloads import mlp_model

P = argparse.ArgumentParser()
P.add_argument("--fusor", required=True)
P.add_argument("--out", required=True)
P.add_argument("--quick", action="store_true", help="old vs new defaults only (no width sweep)")
A = P.parse_args()
os.makedirs(A.out, exist_ok=True)


def bench(d, backend, env=None):
    e = dict(os.environ, **(env or {}))
    out = subprocess.run([A.fusor, "bench", d, "--backend", backend, "--iters", "200", "--warmup", "20", "--json"],
                         capture_output=True, text=True, env=e, timeout=300)
    if out.returncode:
        return {"error": (out.stderr or out.stdout)[-200:]}
    j = json.loads(out.stdout)
    return {"device_us": j["device_us"]["median"], "host_us": j["host_us"]["median"]}


# Copy bandwidth: a 256 MiB device-to-device copy, timed with CUDA events (read + write bytes).
x = torch.empty(64 << 20, device="cuda"); y = torch.empty_like(x)
for _ in range(3): y.copy_(x)
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
s.record()
for _ in range(20): y.copy_(x)
e.record(); torch.cuda.synchronize()
copy_gbps = 2 * x.numel() * 4 * 20 / (s.elapsed_time(e) * 1e-3) / 1e9
res = {"copy_GBps": copy_gbps, "rows": []}

# (backend, label, environment): old vs new on each backend, the new path without its split,
# and new-path strip widths (columns) x workgroup sizes.
systems = [("cuda", "cuda old", {"FUSOR_CUDA_GEMV": "old"}), ("cuda", "cuda new", {"FUSOR_CUDA_GEMV": "new"}),
           ("cuda", "cuda new nosplit", {"FUSOR_CUDA_GEMV": "new", "FUSOR_CUDA_GEMV_SPLIT": "1"}),
           ("vulkan", "vulkan old", {"FUSOR_VK_GEMV": "old"}), ("vulkan", "vulkan new", {"FUSOR_VK_GEMV": "new"}),
           ("vulkan", "vulkan new nosplit", {"FUSOR_VK_GEMV": "new", "FUSOR_VK_GEMV_SPLIT": "1"})]
if not A.quick:
    for cols in ("32", "64", "128"):
        for threads in ("128", "256", "512"):
            if (cols, threads) == ("64", "256"):
                continue  # the default, above
            systems.append(("cuda", f"cuda new cols {cols} threads {threads}",
                            {"FUSOR_CUDA_GEMV": "new", "FUSOR_CUDA_GEMV_COLS": cols, "FUSOR_CUDA_GEMV_THREADS": threads}))
            systems.append(("vulkan", f"vulkan new cols {cols} threads {threads}",
                            {"FUSOR_VK_GEMV": "new", "FUSOR_VK_GEMV_COLS": cols, "FUSOR_VK_GEMV_THREADS": threads}))

torch.manual_seed(0)
mlp = mlp_model()
for dtype, b in (("fp32", 1), ("fp16", 1), ("fp32", 64)):
    d = os.path.join(A.out, f"mlp_{dtype}_b{b}")
    os.makedirs(d, exist_ok=True)
    # fp16: exported from the GPU (CPU half kernels are not everywhere).
    m, dev, tdt = (mlp, "cpu", torch.float32) if dtype == "fp32" else (mlp_model().half().cuda(), "cuda", torch.float16)
    torch.onnx.export(m, (torch.randn(b, 1024, device=dev, dtype=tdt),), os.path.join(d, "model.onnx"), opset_version=17,
                      dynamo=False, input_names=["input"], output_names=["output"])
    weight_bytes = sum(p.numel() * p.element_size() for p in m.parameters())
    ideal_us = weight_bytes / copy_gbps / 1e3
    for backend, label, env in systems if b == 1 else systems[:6]:
        r = bench(d, backend, env)
        if "device_us" in r:
            r["pct_copy"] = round(100 * ideal_us / r["device_us"], 1)
        res["rows"].append({"dtype": dtype, "batch": b, "weights_MiB": weight_bytes / 2**20, "ideal_us": ideal_us, "system": label, **r})

print(f"copy {copy_gbps:.0f} GB/s")
for r in res["rows"]:
    t = f"{r['device_us']:8.1f} us  {r.get('pct_copy', 0):5.1f}% of copy" if "device_us" in r else r["error"]
    print(f"{r['dtype']} b{r['batch']:<3} ({r['weights_MiB']:.0f} MiB, {r['ideal_us']:.1f} us at copy)  {r['system']:<34} {t}")
json.dump(res, open(os.path.join(A.out, "gemv_sweep.json"), "w"), indent=1)
