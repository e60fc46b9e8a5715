#!/usr/bin/env python3
"""Session 24: knock-out variants of the dumped Vulkan GEMM kernels (timing only; every variant
but `base` computes wrong results). Usage: knockout.py DUMP_DIR OUT_DIR
For each variant V, OUT_DIR/V/ gets every dumped contraction kernel (tiled fp32 or
cooperative-matrix) with one part of its work removed, named as the dump names it, so
`FUSOR_VK_SOURCE_DIR=OUT_DIR/V fusor bench ...` runs the model with those kernels replaced:
  base       the source unchanged (checks the override path costs nothing)
  nocompute  no FMAs / matrix multiply-adds in the K loop
  noload     no global loads of A and B (the staging stores what the registers hold)
  nobar      no barriers in the K loop
  notail     split-K: slice 0 runs the epilogue on its own partial, the others stop (no
             workspace stores, counter, or partial sums)
  onestep    one K step per work item
"""
import os, re, sys

src_dir, out_dir = sys.argv[1], sys.argv[2]


def sub(text, pat, rep, flags=re.M, need=True):
    out, n = re.subn(pat, rep, text, flags=flags)
    if need and n == 0:
        raise SystemExit(f"pattern not found: {pat}")
    return out


def coopmat(v, s):
    if v == "nocompute":
        return sub(s, r"^(\s+)FZ_CM_COMPUTE\s*$", r"\1")
    if v == "noload":
        s = sub(s, r"const bool live = g < FZ_CM_GA && gm < FZ_M && gk < FZ_K;", "const bool live = false;")
        return sub(s, r"const bool live = g < FZ_CM_GB && gn < FZ_N && gk < FZ_K;", "const bool live = false;")
    if v == "nobar":
        return sub(s, r"(fz_cm_stage\(tid, ra, rb\);)\s*memoryBarrierShared\(\);\s*barrier\(\);(.*?FZ_CM_COMPUTE)\s*memoryBarrierShared\(\);\s*barrier\(\);",
                   r"\1\2\n", flags=re.S)
    if v == "notail":
        return sub(s, r"#if FZ_SPLIT_K > 1\n    // Split-K: this slice's.*?\n#endif\n(    for \(int e = tid; e < FZ_CM_BM \* FZ_CM_BN; e \+= FZ_CM_T\) \{)",
                   r"    if (slice != 0) continue;\n\1", flags=re.S)
    if v == "onestep":
        return sub(s, r"const fz_idx kend = kbeg \+ FZ_SPLIT_SLICE < fz_idx\(FZ_K\) \? kbeg \+ FZ_SPLIT_SLICE : fz_idx\(FZ_K\);",
                   "const fz_idx kend = kbeg + FZ_CM_BK;")
    return s


def tiled(v, s):
    if v == "nocompute":
        return sub(s, r"^(\s+)FZ_COMPUTE\((0|1|p)\)\s*$", r"\1")
    if v == "noload":
        return sub(s, r"^(\s+)FZ_FETCH\((?!k0, RA).*\)\s*$", r"\1")
    if v == "nobar":  # the K loop's barriers only (those between FZ_FETCH(kbeg ...) and the split-K block)
        a = s.index("    FZ_FETCH(kbeg, ra, rb)")
        b = s.index("#undef FZ_COMPUTE", a)
        return s[:a] + re.sub(r"memoryBarrierShared\(\);\s*barrier\(\);", "", s[a:b]) + s[b:]
    if v == "notail":
        return sub(s, r"#if FZ_SPLIT_K > 1\n    \{\n      // Partial tile out.*?\n    \}\n#endif\n", "    if (slice != 0) continue;\n", flags=re.S)
    if v == "onestep":
        return sub(s, r"const fz_idx kend = kbeg \+ FZ_SPLIT_SLICE < fz_idx\(FZ_K\) \? kbeg \+ FZ_SPLIT_SLICE : fz_idx\(FZ_K\);",
                   "const fz_idx kend = kbeg + FZ_BK;")
    return s


variants = ["base", "nocompute", "noload", "nobar", "notail", "onestep"]
for v in variants:
    os.makedirs(os.path.join(out_dir, v), exist_ok=True)
n = 0
for f in sorted(os.listdir(src_dir)):
    s = open(os.path.join(src_dir, f)).read()
    if "#define FZ_COOPMAT 1" in s:
        fn = coopmat
    elif "#define FZ_SKINNY 0" in s:
        fn = tiled
    else:
        continue
    split = re.search(r"^#define FZ_SPLIT_K (\d+)", s, re.M)
    for v in variants:
        if v == "notail" and not split:
            t = s
        else:
            t = fn(v, s)
        open(os.path.join(out_dir, v, f), "w").write(t)
    n += 1
    print(f, "coopmat" if fn is coopmat else "tiled", "split", split.group(1) if split else 1)
print(n, "kernels x", len(variants), "variants")
