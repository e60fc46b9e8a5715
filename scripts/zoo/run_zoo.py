#!/usr/bin/env python3
"""Run every zoo case (made by export_zoo.py) through `fusor conform` on each backend, one
process per (case, backend) with a timeout, so that a crash or hang is classified as such
instead of stopping the run. Prints a markdown table (docs/model_zoo.md) and writes JSON.

Usage: run_zoo.py [--zoo /work/zoo] [--fusor build/fusor] [--backends ref,cpu,vulkan]
                  [--timeout 300] [--only SUBSTR,...] [--json out.json]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def run_one(fusor, case, backend, timeout):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        jpath = f.name
    try:
        p = subprocess.run([fusor, "conform", case, "--backend", backend, "--json", jpath],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "TIMEOUT", "detail": f"no result within {timeout} s"}
    try:
        with open(jpath) as f:
            j = json.load(f)
        r = j["cases"][0]
        st = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP"}[r["status"]]
        return {"status": st, "detail": r["detail"], "max_abs": r.get("max_abs"), "max_rel": r.get("max_rel"),
                "host_nodes": r.get("host_nodes")}
    except (OSError, ValueError, KeyError, IndexError):
        tail = (p.stderr.strip() or p.stdout.strip()).splitlines()
        return {"status": "CRASH" if p.returncode < 0 else "ERROR",
                "detail": f"rc={p.returncode}: " + (tail[-1][:200] if tail else "")}
    finally:
        os.unlink(jpath)


def cell(r):
    if r["status"] == "PASS":
        return f"PASS {r['max_abs']:.1e}" if r.get("max_abs") is not None else "PASS"
    return f"{r['status']}: {r['detail'][:160]}".replace("|", "/")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zoo", default="/work/zoo")
    ap.add_argument("--fusor", default="build/fusor")
    ap.add_argument("--backends", default="ref,cpu,vulkan")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--only", default="")
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    only = [s for s in a.only.split(",") if s]
    cases = sorted(d for d in os.listdir(a.zoo) if os.path.exists(os.path.join(a.zoo, d, "model.onnx")))
    cases = [c for c in cases if not only or any(s in c for s in only)]
    backends = a.backends.split(",")
    results = {}
    print("| model | " + " | ".join(backends) + " |")
    print("|---|" + "---|" * len(backends))
    for c in cases:
        results[c] = {b: run_one(a.fusor, os.path.join(a.zoo, c), b, a.timeout) for b in backends}
        print(f"| {c} | " + " | ".join(cell(results[c][b]) for b in backends) + " |", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
