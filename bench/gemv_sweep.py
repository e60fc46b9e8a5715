"""GEMV (batch-1 linear layer) sweep on one GPU: the W4 MLP block (1024 -> 4096 -> 1024, GELU,
residual, LayerNorm) at batch 1 and 64 through `fusor bench` on vulkan for each GEMV workgroup
shape (FUSOR_VK_GEMV_COLS x FUSOR_VK_GEMV_THREADS) and on cuda, plus the device copy bandwidth
(torch), so the batch-1 time can be read as a fraction of the memory's speed.
Usage: python3 bench/gemv_sweep.py --fusor PATH/fusor --out DIR"""
import argparse, json, os, subprocess
import torch

from workloads import mlp_model

P = argparse.ArgumentParser()
P.add_argument("--fusor", required=True)
P.add_argument("--out", required=True)
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


# Copy bandwidth: a 256 MiB device-to-device copy, timed with CUDA events.
x = torch.empty(64 << 20, device="cuda"); y = torch.empty_like(x)
for _ in range(3): y.copy_(x)
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
s.record()
for _ in range(20): y.copy_(x)
e.record(); torch.cuda.synchronize()
copy_gbps = 2 * x.numel() * 4 * 20 / (s.elapsed_time(e) * 1e-3) / 1e9
res = {"copy_GBps": copy_gbps, "rows": []}
torch.manual_seed(0)
mlp = mlp_model()
weights_mib = sum(p.numel() * 4 for p in mlp.parameters()) / 2**20
for b in (1, 64):
    d = os.path.join(A.out, f"mlp_b{b}")
    os.makedirs(d, exist_ok=True)
    torch.onnx.export(mlp, (torch.randn(b, 1024),), os.path.join(d, "model.onnx"), opset_version=17, dynamo=False,
                      input_names=["input"], output_names=["output"])
    res["rows"].append({"batch": b, "system": "cuda", **bench(d, "cuda")})
    for cols in ("8", "16", "32"):
        for threads in ("256", "512", "1024"):
            r = bench(d, "vulkan", {"FUSOR_VK_GEMV_COLS": cols, "FUSOR_VK_GEMV_THREADS": threads})
            res["rows"].append({"batch": b, "system": f"vulkan cols {cols} threads {threads}", **r})
    res["rows"].append({"batch": b, "system": "vulkan default", **bench(d, "vulkan")})
print(f"copy {copy_gbps:.0f} GB/s; MLP weights {weights_mib:.1f} MiB -> {weights_mib * 2**20 / copy_gbps / 1e3:.1f} us at copy speed")
for r in res["rows"]:
    print(r)
json.dump(res, open(os.path.join(A.out, "gemv_sweep.json"), "w"), indent=1)
