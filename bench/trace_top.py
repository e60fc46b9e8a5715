#!/usr/bin/env python3
"""Per-kernel device time of a `fusor bench --trace` file, largest first.

Usage: bench/trace_top.py TRACE.json [--top N]
Prints one line per kernel slice of the timed runs, summed over runs and divided by their
count (so: device us per run), with the kernel's fusion kind, bytes moved, GB/s and its share
of the run; the last line is the total. Used to find which kernel a backend loses time on
(e.g. `fusor bench model --backend vulkan --trace t.json`, the same with cuda, compared).
"""
import argparse, collections, json

p = argparse.ArgumentParser()
p.add_argument("trace")
p.add_argument("--top", type=int, default=12)
a = p.parse_args()
d = json.load(open(a.trace))
ev = d["traceEvents"] if isinstance(d, dict) else d
runs = [e for e in ev if e.get("cat") == "run"]
kern = [e for e in ev if e.get("cat") == "kernel"]
nruns = max(1, len(runs))
# Kernel slices of one run share the kernel id; group by id so each kernel is one line.
agg = collections.OrderedDict()
for e in kern:
    k = e["args"].get("kernel", e["name"])
    r = agg.setdefault(k, {"dur": 0.0, "n": 0, "bytes": e["args"].get("bytes", 0), "kind": e["args"].get("kind", ""),
                           "name": e["name"], "shape": e["args"].get("conv", e["args"].get("matmul", ""))})
    r["dur"] += e["dur"]
    r["n"] += 1
reps = max([r["n"] for r in agg.values()] or [1])
total = sum(r["dur"] for r in agg.values()) / reps
print(f"{'kernel':<34} {'kind':<7} {'us':>9} {'share':>6} {'GB/s':>8}  ops")
for k, r in sorted(agg.items(), key=lambda kv: -kv[1]["dur"])[: a.top]:
    us = r["dur"] / r["n"]
    gbs = r["bytes"] / (us * 1e3) if us > 0 else 0.0
    shape = f"  [{r['shape']}]" if r["shape"] else ""
    print(f"{k[:34]:<34} {r['kind']:<7} {us:9.2f} {100 * us / total if total else 0:5.1f}% {gbs:8.1f}  {r['name'][:60]}{shape}")
print(f"{'total of ' + str(len(agg)) + ' kernels':<34} {'':<7} {total:9.2f}")
