#!/usr/bin/env python3
"""Side-by-side benchmark on one GPU: fusor-cuda, fusor-vulkan, PyTorch eager, torch.compile
(default and reduce-overhead), in one run, on the workloads W1-W7 of docs/benchmarks.md
(W6: torchvision CNNs at batch 1 and 32; W7: the W4 models in fp16 and bf16, every system in
the same dtype).

Every fusor configuration is first checked against PyTorch on the same inputs; every time
is a median of CUDA-event (torch) or device-timestamp (fusor) measurements taken in this run.
Usage: bench/side_by_side.py --fusor build/fusor --out OUTDIR [--quick] [--iree BUNDLE_DIR]

With --iree (a bundle made by `bench/iree_peer.py prepare`), IREE 3.13 joins W1, W4 and W6 as
the systems iree-cuda and iree-vulkan: the graphs exported here must match the compiled ones
(structure hash), their weights go in as an .irpa, outputs are checked like fusor's.
"""
import argparse, json, os, platform, subprocess, sys, tempfile, time

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper
import torch

from workloads import W1_KS, W1_KS_QUICK, W1_N, chain_onnx, chain_torch, gpt2_model, mlp_model, rows_onnx, tiny_chain_onnx

P = argparse.ArgumentParser()
P.add_argument("--fusor", required=True)
P.add_argument("--out", required=True)
P.add_argument("--quick", action="store_true", help="fewer iterations and workloads")
P.add_argument("--systems", default=None,
               help="default: fusor-cuda,fusor-vulkan,torch-eager,torch-compile,torch-compile-ro (+iree-cuda,iree-vulkan with --iree)")
P.add_argument("--iree", default=None, help="IREE bundle directory (bench/iree_peer.py prepare): adds iree-cuda, iree-vulkan")
P.add_argument("--save-graphs", default=None,
               help="write DIR/<name>/graph.onnx, the W1/W4/W6 graphs with weight data cleared, for bench/iree_peer.py prepare")
P.add_argument("--only", default="W1,W2,W3,W4,W5,W6,W7", help="workloads to run, e.g. W1,W4")
P.add_argument("--w6-layouts", default="contiguous,channels_last",
               help="W6: torch memory formats to measure (the faster one per system is kept)")
P.add_argument("--w6-models", default="resnet18,squeezenet1_1,mobilenet_v3_small,shufflenet_v2_x0_5",
               help="W6: torchvision architectures (split W6 over several runs with this)")
P.add_argument("--w6-batches", default="1,32", help="W6: batch sizes")
A = P.parse_args()
os.makedirs(A.out, exist_ok=True)
SYSTEMS = (A.systems or "fusor-cuda,fusor-vulkan,torch-eager,torch-compile,torch-compile-ro"
           + (",iree-cuda,iree-vulkan" if A.iree else "")).split(",")
ONLY = A.only.split(",")
WORK = tempfile.mkdtemp(prefix="fusor_bench_")
DEV = torch.device("cuda")
ITERS = 20 if A.quick else 50
# Warm-up runs before timing, every system alike: 5 left 50-80 us models short of their steady
# clocks (W4 MLP b64 on Vulkan: 80 us after 5, 63.5 us over 200 runs; ninth session's notes).
WARMUP = 20
LOG = open(os.path.join(A.out, "side_by_side.log"), "w")


def log(*a):
    s = " ".join(str(x) for x in a)
    print(s, flush=True)
    LOG.write(s + "\n")
    LOG.flush()


def cuda_time_ms(fn, iters=ITERS, warmup=WARMUP):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e))
    return float(np.median(ts))


def host_time_us(fn, iters=ITERS, warmup=WARMUP):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append((time.perf_counter() - t) * 1e6)
    return float(np.median(ts))


# ---------------- models as ONNX (fusor) and as torch functions ----------------

def save(model, name):
    d = os.path.join(WORK, name)
    os.makedirs(d, exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    return d


def export(module, example, name):
    d = os.path.join(WORK, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    try:
        torch.onnx.export(module, (example,), path, opset_version=17, dynamo=False,
                          input_names=["input"], output_names=["output"])
    except Exception as e:  # the TorchScript exporter may be gone: use the dynamo one
        log("legacy export failed, using dynamo:", str(e)[:100])
        torch.onnx.export(module, (example,), path, opset_version=18, dynamo=True,
                          input_names=["input"], output_names=["output"], external_data=False)
    return d


# ---------------- fusor via its CLI ----------------

def fusor(args, env_extra=None):
    env = dict(os.environ, **(env_extra or {}))
    r = subprocess.run([A.fusor] + args, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"fusor {' '.join(args)}: {r.stderr.strip() or r.stdout.strip()}")
    return r.stdout


def tensor_pb(x, name="input"):
    """A torch tensor as an ONNX TensorProto (bf16 too, which numpy lacks)."""
    x = x.detach().cpu().contiguous()
    if x.dtype == torch.bfloat16:
        t = onnx.TensorProto(name=name, data_type=TensorProto.BFLOAT16, dims=list(x.shape))
        t.raw_data = x.view(torch.int16).numpy().tobytes()
        return t
    return numpy_helper.from_array(x.numpy(), name)


def pb_to_f64(t):
    if t.data_type == TensorProto.BFLOAT16:
        bits = np.frombuffer(t.raw_data, np.uint16).astype(np.uint32) << 16 if t.raw_data else np.array(t.int32_data, np.uint32) << 16
        return bits.view(np.float32).astype(np.float64).reshape(tuple(t.dims))
    return numpy_helper.to_array(t).astype(np.float64)


def fusor_check(model_dir, x, ref, backend):
    """Runs fusor on the same inputs as torch (x, a torch tensor) and compares (rel L2 to ref)."""
    ind = os.path.join(model_dir, "in"); outd = os.path.join(model_dir, "out_" + backend)
    os.makedirs(ind, exist_ok=True)
    with open(os.path.join(ind, "input_0.pb"), "wb") as f:
        f.write(tensor_pb(x).SerializeToString())
    fusor(["run", model_dir, "--backend", backend, "--inputs", ind, "--out", outd])
    got = pb_to_f64(onnx.load_tensor(os.path.join(outd, "output_0.pb")))
    ref_np = ref.double().cpu().numpy()
    err = float(np.linalg.norm(got - ref_np) / max(np.linalg.norm(ref_np), 1e-30))
    return err


def fusor_bench(model_dir, backend, *flags, iters=ITERS, env=None):
    out = fusor(["bench", model_dir, "--backend", backend, "--iters", str(iters), "--warmup", str(WARMUP), "--json", *flags], env)
    return json.loads(out)


# ---------------- runs ----------------

results = {}   # (workload, system) -> dict
def record(w, system, **kv):
    results.setdefault(w, {})[system] = kv
    log(f"{w:28s} {system:22s} " + " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in kv.items()))


def torch_systems_layouts(w, make, x, layouts):
    """torch eager / compile / reduce-overhead on the module make() returns, once per memory
    format in `layouts`; per system the faster format is recorded (field layout). Returns the
    eager output in the first format (the reference fusor is checked against)."""
    ref, best = None, {}
    for lay in layouts:
        mf = torch.channels_last if lay == "channels_last" else torch.contiguous_format
        m = make().to(memory_format=mf)
        xi = x.contiguous(memory_format=mf)
        with torch.no_grad():
            r = m(xi)
            if ref is None: ref = r.float().contiguous()
            for name in ("torch-eager", "torch-compile", "torch-compile-ro"):
                if name not in SYSTEMS: continue
                try:
                    f = m if name == "torch-eager" else torch.compile(m, mode=None if name == "torch-compile" else "reduce-overhead")
                    t0 = time.perf_counter(); out = f(xi); torch.cuda.synchronize(); ct = time.perf_counter() - t0
                    err = float((out.double() - ref.double()).norm() / ref.double().norm())
                    ms = cuda_time_ms(lambda: f(xi))
                    kv = dict(ms=ms, err=err, layout=lay)
                    if name != "torch-eager": kv["compile_s"] = ct
                    log(f"{w:28s} {name:22s} {lay}: ms={ms:.4g}")
                    if name not in best or ("ms" in best[name] and ms < best[name]["ms"]): best[name] = kv
                except Exception as e:
                    best.setdefault(name, dict(error=str(e)[:120]))
        torch._dynamo.reset()
    for name, kv in best.items(): record(w, name, **kv)
    return ref


def torch_systems(w, fn, x, bytes_moved=None):
    ref = fn(x)
    for name in ("torch-eager", "torch-compile", "torch-compile-ro"):
        if name not in SYSTEMS: continue
        try:
            f = fn if name == "torch-eager" else torch.compile(fn, mode=None if name == "torch-compile" else "reduce-overhead")
            t0 = time.perf_counter(); out = f(x); torch.cuda.synchronize(); ct = time.perf_counter() - t0
            err = float((out.double() - ref.double()).norm() / ref.double().norm())
            ms = cuda_time_ms(lambda: f(x))
            kv = dict(ms=ms, err=err)
            if bytes_moved: kv["GBps"] = bytes_moved / (ms * 1e6)
            if name != "torch-eager": kv["compile_s"] = ct
            record(w, name, **kv)
        except Exception as e:
            record(w, name, error=str(e)[:120])
    return ref


def fusor_systems(w, model_dir, x, ref, bytes_moved=None, variants=True, gemm_variant=False, max_err=None):
    for backend in ("cuda", "vulkan"):
        sysname = "fusor-" + backend
        if sysname not in SYSTEMS: continue
        try:
            err = fusor_check(model_dir, x, ref, backend)
            if max_err is not None and not err <= max_err:
                raise RuntimeError(f"output differs from torch: rel L2 {err:.3g} > {max_err}")
            j = fusor_bench(model_dir, backend)
            ms = j["device_us"]["median"] / 1e3
            kv = dict(ms=ms, err=err, kernels=j["kernels"], host_us=j["host_us"]["median"], compile_ms=j["compile_ms"])
            if bytes_moved: kv["GBps"] = bytes_moved / (ms * 1e6)
            record(w, sysname, **kv)
            if j.get("notes"): log(f"{'':28s} {sysname:22s} notes: {j['notes']}")
            if variants:
                for flag, label in (("--no-fusion", "unfused"), ("--eager", "eager")):
                    j2 = fusor_bench(model_dir, backend, flag)
                    record(w, f"{sysname} {label}", ms=j2["device_us"]["median"] / 1e3, host_us=j2["host_us"]["median"], kernels=j2["kernels"])
            if gemm_variant and backend == "cuda":  # the NVRTC SGEMM template instead of cuBLASLt
                j3 = fusor_bench(model_dir, backend, env={"FUSOR_CUDA_GEMM": "template"})
                record(w, f"{sysname} template-gemm", ms=j3["device_us"]["median"] / 1e3, host_us=j3["host_us"]["median"], kernels=j3["kernels"])
        except Exception as e:
            record(w, sysname, error=str(e)[:160])


IREE = None   # iree_peer.IreePeer when --iree is given


def save_cleared_graph(model_dir):
    """The exported graph without its weight data (what iree_peer compiles as parameters), so the
    graphs travel back from the GPU machine in a few MB."""
    import iree_peer
    m = onnx.load(os.path.join(model_dir, "model.onnx"))
    for t in m.graph.initializer:
        if iree_peer.is_param(t):
            dims, dtype, name = list(t.dims), t.data_type, t.name
            t.Clear()
            t.name, t.data_type = name, dtype
            t.dims.extend(dims)
    d = os.path.join(A.save_graphs, os.path.basename(model_dir))
    os.makedirs(d, exist_ok=True)
    onnx.save(m, os.path.join(d, "graph.onnx"))


def iree_systems(w, model_dir, inputs, ref, max_err=None, bytes_moved=None):
    """iree-cuda / iree-vulkan on the ONNX graph side_by_side exported to model_dir (its folder
    name is the bundle's model name), same inputs as torch. Without a tolerance from the
    workload (fusor's is unchecked there) an output is wrong above rel L2 1e-3."""
    if A.save_graphs: save_cleared_graph(model_dir)
    if IREE is None or not any(s in SYSTEMS for s in IREE.SYSTEMS): return
    try:
        rows = IREE.run(os.path.basename(model_dir), os.path.join(model_dir, "model.onnx"),
                        [t.detach().cpu().numpy() for t in inputs], ref.detach().float().cpu().numpy(),
                        1e-3 if max_err is None else max_err, ITERS, SYSTEMS)
    except Exception as e:
        rows = {s: dict(error=str(e)[:160]) for s in IREE.SYSTEMS if s in SYSTEMS}
    for sysname, kv in rows.items():
        if bytes_moved and "ms" in kv: kv["GBps"] = bytes_moved / (kv["ms"] * 1e6)
        record(w, sysname, **kv)


def main():
    global IREE
    torch.manual_seed(0)
    info = dict(date=time.strftime("%Y-%m-%d"), gpu=torch.cuda.get_device_name(0), torch=torch.__version__,
                cuda=torch.version.cuda, host=platform.node())
    try:
        info["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    except Exception:
        info["driver"] = "?"
    log("info", json.dumps(info))
    if A.iree:
        import iree_peer
        try:
            IREE = iree_peer.IreePeer(A.iree, WORK, log)
        except Exception as e:
            log("iree: unusable, its rows are errors:", str(e)[:200])
            for s in ("iree-cuda", "iree-vulkan"):
                if s in SYSTEMS: record("IREE", s, error=str(e)[:160])

    # Copy baseline: device-to-device copy of 2^26 floats, same run.
    n = W1_N
    x = torch.randn(n, device=DEV)
    y = torch.empty_like(x)
    copy_ms = cuda_time_ms(lambda: y.copy_(x))
    record("copy 2^26", "torch-copy", ms=copy_ms, GBps=2 * n * 4 / (copy_ms * 1e6))

    # W1
    for k in [] if "W1" not in ONLY else (W1_KS_QUICK if A.quick else W1_KS):
        w = f"W1 chain k={k}"
        d = save(chain_onnx(n, k, f"w1_k{k}"), f"w1_k{k}")
        ref = torch_systems(w, chain_torch(k), x, 2 * n * 4)
        fusor_systems(w, d, x, ref, 2 * n * 4, variants=(k == 8))
        iree_systems(w, d, [x], ref, bytes_moved=2 * n * 4)

    # W2
    xr = torch.randn(16384, 4096, device=DEV)
    for op in ("Softmax", "LayerNormalization") if "W2" in ONLY else ():
        w = f"W2 {op} [16384,4096]"
        d = save(rows_onnx(op, 16384, 4096, "w2_" + op), "w2_" + op)
        fn = (lambda t: torch.softmax(t, -1)) if op == "Softmax" else (lambda t: torch.nn.functional.layer_norm(t, (4096,), eps=1e-5))
        ref = torch_systems(w, fn, xr, 2 * xr.numel() * 4)
        fusor_systems(w, d, xr, ref, 2 * xr.numel() * 4, variants=False)

    # W3: launch overhead, per-kernel microseconds
    xs = torch.randn(1024, device=DEV)
    for N in (10, 100, 1000) if "W3" in ONLY else ():
        w = f"W3 launch N={N}"
        def chain(t, N=N):
            for i in range(N): t = torch.tanh(t) if i % 2 else torch.relu(t)
            return t
        us = host_time_us(lambda: chain(xs))
        record(w, "torch-eager", us_per_kernel=us / N)
        g = torch.cuda.CUDAGraph(); static = xs.clone()
        with torch.cuda.graph(g): out = chain(static)
        us = host_time_us(lambda: g.replay())
        record(w, "torch-cudagraph", us_per_kernel=us / N)
        d = save(tiny_chain_onnx(N, f"w3_{N}"), f"w3_{N}")
        for backend in ("cuda", "vulkan"):
            if "fusor-" + backend not in SYSTEMS: continue
            try:
                for flag, label in ((None, "replay"), ("--eager", "eager")):
                    j = fusor_bench(d, backend, "--no-fusion", *( [flag] if flag else []))
                    per = (j["device_us"]["median"] if j["device_us"]["median"] > 0 else j["host_us"]["median"]) / N
                    record(w, f"fusor-{backend} {label}", us_per_kernel=per, host_us_per_kernel=j["host_us"]["median"] / N, kernels=j["kernels"])
            except Exception as e:
                record(w, f"fusor-{backend}", error=str(e)[:160])

    # W4: MLP block (batch 1 and 64) and 2-layer GPT-2 (sequence 64)
    mlp = mlp_model().to(DEV)
    for b in (1, 64) if "W4" in ONLY else ():
        w = f"W4 MLP batch {b}"
        xm = torch.randn(b, 1024, device=DEV)
        d = export(mlp, xm, f"w4_mlp{b}")
        with torch.no_grad():
            ref = torch_systems(w, mlp, xm)
        fusor_systems(w, d, xm, ref, variants=True, gemm_variant=True)
        iree_systems(w, d, [xm], ref)
    try:
        if "W4" not in ONLY and "W5" not in ONLY: raise StopIteration
        g2 = gpt2_model().to(DEV)
        ids = torch.randint(0, 50257, (1, 64), device=DEV)
        w = "W4 GPT-2 2L seq 64"
        d = export(g2, ids, "w4_gpt2")
        if "W4" in ONLY:
            with torch.no_grad():
                ref = torch_systems(w, g2, ids)
            fusor_systems(w, d, ids, ref, variants=True, gemm_variant=True)
            iree_systems(w, d, [ids], ref)
        # W5: compile time, cold (empty cache) and warm
        for backend in ("cuda", "vulkan") if "W5" in ONLY else ():
            if "fusor-" + backend not in SYSTEMS: continue
            cache = tempfile.mkdtemp(prefix="fz_cache_")
            env = {"XDG_CACHE_HOME": cache}
            try:
                # cold: a fresh process, empty kernel cache; warm_process: a fresh process, cache
                # filled by the first; warm: a recompile in that process (device already open).
                # Each includes load_ms (ONNX -> static graph).
                j1 = json.loads(fusor(["bench", d, "--backend", backend, "--iters", "1", "--warmup", "0", "--json"], env))
                j2 = json.loads(fusor(["bench", d, "--backend", backend, "--iters", "1", "--warmup", "0", "--json"], env))
                record("W5 GPT-2 compile", "fusor-" + backend, cold_ms=j1["load_ms"] + j1["compile_ms"],
                       warm_process_ms=j2["load_ms"] + j2["compile_ms"], warm_ms=j2["load_ms"] + j2["compile_warm_ms"],
                       load_ms=j2["load_ms"])
            except Exception as e:
                record("W5 GPT-2 compile", "fusor-" + backend, error=str(e)[:160])
    except StopIteration:
        pass
    except Exception as e:
        log("GPT-2 workload failed:", e)

    # W6: torchvision CNNs (random weights, eval, fp32) at batch 1 and 32, exported to ONNX like
    # W4. TF32 is off for torch (fusor's fp32 convolutions use FMA math only), so both compute
    # in fp32; every fusor output is checked against torch eager before timing.
    if "W6" in ONLY:
        try:
            import torchvision
        except Exception as e:
            torchvision = None
            log("W6 skipped: torchvision missing:", str(e)[:120])
            record("W6", "all", error="torchvision missing")
        if torchvision is not None:
            tf32 = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
            torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
            layouts = A.w6_layouts.split(",")
            for arch in A.w6_models.split(","):
                for b in (int(v) for v in A.w6_batches.split(",")):
                    w = f"W6 {arch} batch {b}"
                    try:
                        torch.manual_seed(0)
                        model = getattr(torchvision.models, arch)(weights=None).to(DEV).eval()
                        xi = torch.randn(b, 3, 224, 224, device=DEV)
                        d = export(model, xi, f"w6_{arch}_{b}")
                        ref = torch_systems_layouts(w, lambda: model, xi, layouts)
                        fusor_systems(w, d, xi, ref, variants=False, max_err=1e-4)
                        iree_systems(w, d, [xi], ref, max_err=1e-4)
                        # fusor-cuda variants: every conv on the NVRTC template, every conv of
                        # >= 2^18 MACs on cuDNN (the policy before the split-K template), and
                        # cuDNN with every bias / ReLU in the generated epilogue kernel.
                        for label, env in (("template-conv", {"FUSOR_CUDA_CONV": "template"}),
                                           ("library-conv", {"FUSOR_CUDA_CONV": "library"}),
                                           ("cudnn-fused-epilogue", {"FUSOR_CUDA_CONV_EPILOGUE": "cudnn"})):
                            if "fusor-cuda" not in SYSTEMS: break
                            j = fusor_bench(d, "cuda", env=env)
                            record(w, f"fusor-cuda {label}", ms=j["device_us"]["median"] / 1e3, kernels=j["kernels"])
                    except Exception as e:
                        log(w, "failed:", str(e)[:200])
            torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = tf32

    # W7: the W4 models in fp16 and bf16, every system in the same dtype. Outputs are checked
    # against torch eager in that dtype before timing (rel L2 within a few of the dtype's ulps).
    for dt, tag, tol in ((torch.float16, "fp16", 1e-2), (torch.bfloat16, "bf16", 5e-2)) if "W7" in ONLY else ():
        mlp_h = mlp_model().to(DEV).to(dt)
        for b in (1, 64):
            w = f"W7 MLP {tag} batch {b}"
            try:
                xm = torch.randn(b, 1024, device=DEV, dtype=dt)
                d = export(mlp_h, xm, f"w7_mlp_{tag}_{b}")
                with torch.no_grad():
                    ref = torch_systems(w, mlp_h, xm)
                fusor_systems(w, d, xm, ref, variants=False, max_err=tol)
            except Exception as e:
                log(w, "failed:", str(e)[:200])
        w = f"W7 GPT-2 2L {tag} seq 64"
        try:
            g2h = gpt2_model().to(DEV).to(dt)
            ids = torch.randint(0, 50257, (1, 64), device=DEV)
            d = export(g2h, ids, f"w7_gpt2_{tag}")
            with torch.no_grad():
                ref = torch_systems(w, g2h, ids)
            fusor_systems(w, d, ids, ref, variants=False, max_err=tol)
        except Exception as e:
            log(w, "failed:", str(e)[:200])

    json.dump(dict(info=info, results=results), open(os.path.join(A.out, "side_by_side.json"), "w"), indent=1)
    plots(results)


def plots(res):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:
        log("no matplotlib:", e); return
    ks = sorted(int(w.split("=")[1]) for w in res if w.startswith("W1"))
    plt.figure(figsize=(6, 4))
    copy = res.get("copy 2^26", {}).get("torch-copy", {}).get("GBps")
    for s in ("fusor-cuda", "fusor-vulkan", "torch-eager", "torch-compile", "torch-compile-ro", "iree-cuda", "iree-vulkan"):
        ys = [res[f"W1 chain k={k}"].get(s, {}).get("GBps") for k in ks]
        if any(v for v in ys): plt.plot(ks, [v or np.nan for v in ys], marker="o", label=s)
    if copy: plt.axhline(copy, color="gray", ls="--", label="D2D copy")
    plt.xlabel("k (element-wise ops)"); plt.ylabel("GB/s (2·n·4 bytes / time)"); plt.legend(); plt.title("W1 element-wise chain, n = 2^26")
    plt.tight_layout(); plt.savefig(os.path.join(A.out, "w1_gbps.png"), dpi=120)
    plt.figure(figsize=(6, 4))
    Ns = [10, 100, 1000]
    for s in ("torch-eager", "torch-cudagraph", "fusor-cuda eager", "fusor-cuda replay", "fusor-vulkan eager", "fusor-vulkan replay"):
        ys = [res.get(f"W3 launch N={N}", {}).get(s, {}).get("us_per_kernel") for N in Ns]
        if any(v for v in ys): plt.plot(Ns, [v or np.nan for v in ys], marker="o", label=s)
    plt.xscale("log"); plt.yscale("log"); plt.xlabel("N dependent kernels"); plt.ylabel("µs per kernel"); plt.legend(); plt.title("W3 launch overhead")
    plt.tight_layout(); plt.savefig(os.path.join(A.out, "w3_launch.png"), dpi=120)


if __name__ == "__main__":
    main()
