#!/usr/bin/env python3
"""Worst error per op type over `fusor diff --json` reports, as the README's markdown table.

    for m in mlp_block gpt2_tiny squeezenet1_1 mobilenet_v3_small; do
      fusor diff ../shared/models/$m --backend ref --backend vulkan --atol 1e-5 --json $m.json; done
    bench/diff_ulp_table.py *.json
"""
import json
import sys
from collections import defaultdict


def main(paths):
    agg = defaultdict(lambda: {"ulp": 0.0, "scale": 0.0, "abs": 0.0, "score": 0.0, "models": set(), "values": 0})
    culprits = []
    for p in paths:
        j = json.load(open(p))
        model = j.get("model", p)
        if j["culprit"] is not None:
            culprits.append(f'{model}: {j["culprit"]["value"]["node"]}')
        for d in j["unfused"] + j["fused"]:
            if not d["dtype"].startswith(("float", "bfloat")):
                continue
            a = agg[d["op_type"]]
            a["ulp"] = max(a["ulp"], d["max_ulp"] if d["max_ulp"] is not None else float("inf"))
            a["scale"] = max(a["scale"], d["scale_ulp"] if d["scale_ulp"] is not None else float("inf"))
            a["abs"] = max(a["abs"], d["max_abs"] if d["max_abs"] is not None else float("inf"))
            a["score"] = max(a["score"], d["score"] if d["score"] is not None else float("inf"))
            a["models"].add(model.split("/")[-2] if model.endswith(".onnx") else model)
            a["values"] += 1
    print("| op type | values | worst ULP | worst error in ULPs of the tensor's largest value | max abs | worst error / tolerance |")
    print("|---|---|---|---|---|---|")
    for op, a in sorted(agg.items()):
        print(f'| {op} | {a["values"]} | {a["ulp"]:.0f} | {a["scale"]:.1f} | {a["abs"]:.2g} | {a["score"]:.2f} |')
    print(f"\n{len(paths)} reports, culprits: {culprits if culprits else 'none'}")


if __name__ == "__main__":
    main(sys.argv[1:])
