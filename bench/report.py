#!/usr/bin/env python3
"""Turns one side-by-side run (side_by_side.log from bench/side_by_side.py) into the ratio
table and the two plots of docs/benchmarks.md. Usage: bench/report.py RUN_DIR"""
import json, os, re, sys
from collections import defaultdict

run = sys.argv[1]
LINE = re.compile(r"^(?P<w>.+?)\s+(?P<s>(?:torch|fusor|iree)-[\w-]+(?: (?:unfused|eager|replay|template-gemm|template-conv|library-conv|cudnn-fused-epilogue))?)\s+(?P<kv>\w+=.*)$")
res = defaultdict(dict)
info = {}
for l in open(os.path.join(run, "side_by_side.log")):
    l = l.rstrip("\n")
    if l.startswith("info "):
        info = json.loads(l[5:])
        continue
    m = LINE.match(l)
    if not m:
        continue
    kv = {}
    if m.group("kv").startswith("error="):   # the whole rest of the line is the message
        res[m.group("w").strip()][m.group("s")] = {"error": m.group("kv")[6:]}
        continue
    for tok in m.group("kv").split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            try: kv[k] = float(v)
            except ValueError: kv[k] = v
    res[m.group("w").strip()][m.group("s")] = kv
json.dump(dict(info=info, results=res), open(os.path.join(run, "side_by_side.json"), "w"), indent=1)

copy = res["copy 2^26"]["torch-copy"]["GBps"]
out = []
# IREE (side_by_side.py --iree): two more columns where the run has them; an error row is a
# numbered note under the table (import, compile, run or output check failed).
IREE = [s for s in ("iree-cuda", "iree-vulkan") if any(s in r for r in res.values())]
iree_notes = []
def icells(w):
    cs = []
    for s in IREE:
        r = res[w].get(s, {})
        if "error" in r:
            iree_notes.append(f"{w}, {s}: {r['error']}")
            cs.append(f"failed [{len(iree_notes)}]")
        else:
            v = cell(w, s)
            cs.append(v if v == "—" else v + (" (graphs)" if r.get("variant") == "graphs" else ""))
    return "".join(f" {c} |" for c in cs)
ihead = "".join(f" {s.replace('iree', 'IREE')} |" for s in IREE)
isep = "---|" * len(IREE)
def inotes():
    if iree_notes:
        out.append("")
        out.extend(f"- [{i + 1}] {n}" for i, n in enumerate(iree_notes))
        iree_notes.clear()
out.append("| workload | fusor-cuda | fusor-vulkan | torch eager | torch.compile | torch.compile reduce-overhead |" + ihead + " fusor-cuda vs best torch |")
out.append("|---|---|---|---|---|---|" + isep + "---|")
def cell(w, s, key="ms"):
    v = res[w].get(s, {}).get(key)
    return "—" if v is None else f"{v:.4g}"
for w in res:
    if not (w.startswith("W1") or w.startswith("W2") or w.startswith("W4")): continue
    torch_best = min(res[w].get(s, {}).get("ms", 1e9) for s in ("torch-eager", "torch-compile", "torch-compile-ro"))
    fc = res[w].get("fusor-cuda", {}).get("ms")
    ratio = "—" if not fc else (f"{torch_best / fc:.2f}x faster" if fc <= torch_best else f"{fc / torch_best:.2f}x slower")
    gb = lambda s: (f" ({res[w][s]['GBps']/copy*100:.0f}% of copy)" if "GBps" in res[w].get(s, {}) else "")
    out.append(f"| {w} | {cell(w,'fusor-cuda')}{gb('fusor-cuda')} | {cell(w,'fusor-vulkan')}{gb('fusor-vulkan')} | "
               f"{cell(w,'torch-eager')}{gb('torch-eager')} | {cell(w,'torch-compile')}{gb('torch-compile')} | "
               f"{cell(w,'torch-compile-ro')}{gb('torch-compile-ro')} |{icells(w)} {ratio} |")
inotes()
out.append("")
# W6: the torchvision CNNs; torch's memory format (the faster of contiguous / channels_last) in brackets.
w6 = [w for w in res if w.startswith("W6 ")]
if w6:
    out.append("| W6 (ms) | fusor-cuda | cuDNN off (template) | cuDNN for every conv (library) | cuDNN, its fused bias/ReLU | fusor-vulkan | torch eager | torch.compile | reduce-overhead |" + ihead + " fusor-cuda vs reduce-overhead |")
    out.append("|---|---|---|---|---|---|---|---|---|" + isep + "---|")
    lay = lambda w, s: ("" if "layout" not in res[w].get(s, {}) else f" ({'cl' if res[w][s]['layout'] == 'channels_last' else 'nchw'})")
    for w in w6:
        ro, fc = res[w].get("torch-compile-ro", {}).get("ms"), res[w].get("fusor-cuda", {}).get("ms")
        ratio = "—" if not (ro and fc) else (f"{ro / fc:.2f}x faster" if fc <= ro else f"{fc / ro:.2f}x slower")
        out.append(f"| {w[3:]} | {cell(w,'fusor-cuda')} | {cell(w,'fusor-cuda template-conv')} | {cell(w,'fusor-cuda library-conv')} | {cell(w,'fusor-cuda cudnn-fused-epilogue')} | "
                   f"{cell(w,'fusor-vulkan')} | {cell(w,'torch-eager')}{lay(w,'torch-eager')} | {cell(w,'torch-compile')}{lay(w,'torch-compile')} | "
                   f"{cell(w,'torch-compile-ro')}{lay(w,'torch-compile-ro')} |{icells(w)} {ratio} |")
    inotes()
    out.append("")
out.append("| W3 launch overhead, µs per kernel | torch eager | torch CUDA Graph | fusor-cuda eager | fusor-cuda replay | fusor-vulkan re-record | fusor-vulkan pre-recorded |")
out.append("|---|---|---|---|---|---|---|")
for N in (10, 100, 1000):
    w = f"W3 launch N={N}"
    # Host wall time per run / N (launch + sync), the same measure torch's rows use.
    c = lambda s: cell(w, s, "host_us_per_kernel" if s.startswith("fusor") else "us_per_kernel")
    out.append(f"| N = {N} | {c('torch-eager')} | {c('torch-cudagraph')} | {c('fusor-cuda eager')} | {c('fusor-cuda replay')} | {c('fusor-vulkan eager')} | {c('fusor-vulkan replay')} |")
out.append("")
out.append("| fused vs unfused, replay vs eager (device ms) | fusor-cuda | unfused | eager (stream launches) | NVRTC SGEMM instead of cuBLASLt | fusor-vulkan | unfused | eager (re-recorded) |")
out.append("|---|---|---|---|---|---|---|---|")
for w in res:
    if "fusor-cuda unfused" not in res[w] and "fusor-vulkan unfused" not in res[w]: continue
    k = lambda s: ("" if "kernels" not in res[w].get(s, {}) else f" ({int(res[w][s]['kernels'])})")
    out.append(f"| {w} | {cell(w,'fusor-cuda')}{k('fusor-cuda')} | {cell(w,'fusor-cuda unfused')}{k('fusor-cuda unfused')} | "
               f"{cell(w,'fusor-cuda eager')} | {cell(w,'fusor-cuda template-gemm')} | {cell(w,'fusor-vulkan')}{k('fusor-vulkan')} | "
               f"{cell(w,'fusor-vulkan unfused')}{k('fusor-vulkan unfused')} | {cell(w,'fusor-vulkan eager')} |")
if "W5 GPT-2 compile" in res:
    out.append("")
    out.append("| W5 GPT-2 ONNX -> ready executable (ms) | cold: new process, empty cache | new process, warm cache | warm: recompile, device open | of which ONNX load |")
    out.append("|---|---|---|---|---|")
    for s in ("fusor-cuda", "fusor-vulkan"):
        w5 = lambda key: cell('W5 GPT-2 compile', s, key)
        out.append(f"| {s} | {w5('cold_ms')} | {w5('warm_process_ms')} | {w5('warm_ms')} | {w5('load_ms')} |")
# W7 (issue 16): fp16/bf16 models; its targets are fusor-cuda <= 0.8x reduce-overhead and
# fusor-vulkan <= 1.5x fusor-cuda, both ratios printed.
w7 = [w for w in res if w.startswith("W7 ")]
if w7:
    out.append("")
    out.append("| W7 (ms) | fusor-cuda | fusor-vulkan | torch eager | torch.compile | reduce-overhead | fusor-cuda / reduce-overhead | fusor-vulkan / fusor-cuda |")
    out.append("|---|---|---|---|---|---|---|---|")
    for w in w7:
        ro, fc, fv = (res[w].get(s, {}).get("ms") for s in ("torch-compile-ro", "fusor-cuda", "fusor-vulkan"))
        r1 = "—" if not (ro and fc) else f"{fc / ro:.2f}"
        r2 = "—" if not (fc and fv) else f"{fv / fc:.2f}"
        out.append(f"| {w[3:]} | {cell(w,'fusor-cuda')} | {cell(w,'fusor-vulkan')} | {cell(w,'torch-eager')} | "
                   f"{cell(w,'torch-compile')} | {cell(w,'torch-compile-ro')} | {r1} | {r2} |")
open(os.path.join(run, "table.md"), "w").write("\n".join(out) + "\n")
print("\n".join(out))

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
ks = sorted(int(w.split("=")[1]) for w in res if w.startswith("W1"))
plt.figure(figsize=(6, 4))
for s in ("fusor-cuda", "fusor-vulkan", "torch-eager", "torch-compile", "torch-compile-ro", *IREE):
    ys = [res[f"W1 chain k={k}"].get(s, {}).get("GBps") for k in ks]
    if any(ys): plt.plot(ks, [y if y else float("nan") for y in ys], marker="o", label=s)
plt.axhline(copy, color="gray", ls="--", label="device-to-device copy")
plt.xticks(ks); plt.xlabel("k (element-wise ops in the chain)"); plt.ylabel("GB/s  (2·n·4 bytes / time)")
plt.title(f"W1 element-wise chain, n = 2^26, {info.get('gpu', '')}"); plt.legend(fontsize=8); plt.tight_layout()
plt.savefig(os.path.join(run, "w1_gbps.png"), dpi=110)
plt.figure(figsize=(6, 4))
Ns = [10, 100, 1000]
for s in ("torch-eager", "torch-cudagraph", "fusor-cuda eager", "fusor-cuda replay", "fusor-vulkan eager", "fusor-vulkan replay"):
    key = "host_us_per_kernel" if s.startswith("fusor") else "us_per_kernel"
    ys = [res.get(f"W3 launch N={N}", {}).get(s, {}).get(key) for N in Ns]
    if any(ys): plt.plot(Ns, [y if y else float("nan") for y in ys], marker="o", label=s.replace("vulkan eager", "vulkan re-record"))
plt.xscale("log"); plt.yscale("log"); plt.xlabel("N dependent tiny kernels"); plt.ylabel("µs per kernel")
plt.title("W3 launch overhead"); plt.legend(fontsize=8); plt.tight_layout()
plt.savefig(os.path.join(run, "w3_launch.png"), dpi=110)
# fusor-vulkan / fusor-cuda per contraction-heavy row (issue 12's 1.5x target line).
rows = [w for w in res if (w.startswith("W4") or w.startswith("W6") or w.startswith("W7"))
        and res[w].get("fusor-cuda", {}).get("ms") and res[w].get("fusor-vulkan", {}).get("ms")]
if rows:
    plt.figure(figsize=(7, 0.28 * len(rows) + 1.2))
    rs = [res[w]["fusor-vulkan"]["ms"] / res[w]["fusor-cuda"]["ms"] for w in rows]
    plt.barh(range(len(rows)), rs, color=["tab:green" if r <= 1.5 else "tab:red" for r in rs])
    plt.axvline(1.5, color="gray", ls="--", label="target 1.5x")
    plt.yticks(range(len(rows)), rows, fontsize=7); plt.gca().invert_yaxis()
    plt.xlabel("fusor-vulkan / fusor-cuda device time (same run)"); plt.legend(fontsize=8); plt.tight_layout()
    plt.savefig(os.path.join(run, "vulkan_vs_cuda.png"), dpi=110)
