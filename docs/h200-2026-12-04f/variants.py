#!/usr/bin/env python3
"""Session 24 call 2: hand-edited variants of the dumped Vulkan GEMM kernels' inner loops.
Usage: variants.py DUMP_DIR OUT_DIR
Tiled fp32 kernels (gemm.glsl, FZ_BLOCKED 1):
  hoist  the shared-memory vec4 indices computed once per thread (ty + const), so each k
         reads at an immediate offset (same bits)
  pipe   hoist + the next k's vec4 reads issued before this k's FMAs (same bits)
  gvnored, gvred4  (call 5) GEMV (FZ_SKINNY 1): no partial-sum tree (wrong), a 4-ary tree
  swz    (call 4) each warp on 8 x 4 of the 16 x 16 threads: two shared wavefronts per k, not three
Cooperative-matrix fp16 kernels (gemm_coopmat.glsl):
  cm2acc two accumulator chains per subgroup (even / odd K steps), added at the end
  cmfirst every matrix load of a K slice issued before its multiply-adds (same bits)
"""
import os, re, sys

src_dir, out_dir = sys.argv[1], sys.argv[2]

BLOCKED_OLD = re.compile(r"#if FZ_BLOCKED\n#define FZ_COMPUTE\(p\).*?\n#else\n", re.S)

HOIST = r"""#if FZ_BLOCKED
#define FZ_COMPUTE(p)                                                                                      \
    {                                                                                                      \
      const int av0 = ((p) * FZ_BK * FZ_AP >> 2) + ty, bv0 = ((p) * FZ_BK * FZ_BP >> 2) + tx;           \
      [[unroll]] for (int kk = 0; kk < FZ_BK; ++kk) {                                                      \
        vec4 a[FZ_GM], b[FZ_GN];                                                                           \
        [[unroll]] for (int g = 0; g < FZ_GM; ++g) a[g] = fz_as[av0 + kk * (FZ_AP >> 2) + g * (FZ_BM / FZ_GM >> 2)]; \
        [[unroll]] for (int g = 0; g < FZ_GN; ++g) b[g] = fz_bs[bv0 + kk * (FZ_BP >> 2) + g * (FZ_BN / FZ_GN >> 2)]; \
        [[unroll]] for (int i = 0; i < FZ_TM; ++i)                                                         \
          [[unroll]] for (int j = 0; j < FZ_TN; ++j) fz_acc[i * FZ_TN + j] = fma(a[i >> 2][i & 3], b[j >> 2][j & 3], fz_acc[i * FZ_TN + j]); \
      }                                                                                                    \
    }
#else
"""

PIPE = r"""#if FZ_BLOCKED
#define FZ_COMPUTE(p)                                                                                      \
    {                                                                                                      \
      const int av0 = ((p) * FZ_BK * FZ_AP >> 2) + ty, bv0 = ((p) * FZ_BK * FZ_BP >> 2) + tx;           \
      vec4 a[FZ_GM], b[FZ_GN];                                                                             \
      [[unroll]] for (int g = 0; g < FZ_GM; ++g) a[g] = fz_as[av0 + g * (FZ_BM / FZ_GM >> 2)];             \
      [[unroll]] for (int g = 0; g < FZ_GN; ++g) b[g] = fz_bs[bv0 + g * (FZ_BN / FZ_GN >> 2)];             \
      [[unroll]] for (int kk = 0; kk < FZ_BK; ++kk) {                                                      \
        vec4 an[FZ_GM], bn[FZ_GN];                                                                         \
        const int kn = kk + 1 < FZ_BK ? kk + 1 : kk;                                                       \
        [[unroll]] for (int g = 0; g < FZ_GM; ++g) an[g] = fz_as[av0 + kn * (FZ_AP >> 2) + g * (FZ_BM / FZ_GM >> 2)]; \
        [[unroll]] for (int g = 0; g < FZ_GN; ++g) bn[g] = fz_bs[bv0 + kn * (FZ_BP >> 2) + g * (FZ_BN / FZ_GN >> 2)]; \
        [[unroll]] for (int i = 0; i < FZ_TM; ++i)                                                         \
          [[unroll]] for (int j = 0; j < FZ_TN; ++j) fz_acc[i * FZ_TN + j] = fma(a[i >> 2][i & 3], b[j >> 2][j & 3], fz_acc[i * FZ_TN + j]); \
        [[unroll]] for (int g = 0; g < FZ_GM; ++g) a[g] = an[g];                                           \
        [[unroll]] for (int g = 0; g < FZ_GN; ++g) b[g] = bn[g];                                           \
      }                                                                                                    \
    }
#else
"""

CM_OLD = re.compile(r"#define FZ_CM_COMPUTE  .*?\n#endif\n", re.S)

CM_FIRST = r"""#define FZ_CM_KS (FZ_CM_BK / FZ_CM_K)
#define FZ_CM_COMPUTE                                                                                              \
  {                                                                                                                \
    FZ_CM_MA a[FZ_CM_KS][FZ_CM_RM];                                                                                \
    FZ_CM_MB b[FZ_CM_KS][FZ_CM_RN];                                                                                \
    [[unroll]] for (int s = 0; s < FZ_CM_KS; ++s) {                                                                \
      [[unroll]] for (int i = 0; i < FZ_CM_RM; ++i)                                                                \
        coopMatLoadNV(a[s][i], fz_cm_a, uint(FZ_CM_AH((wm * FZ_CM_RM + i) * FZ_CM_M, s * FZ_CM_K) / FZ_CM_VA),    \
                      uint(FZ_CM_ALD / FZ_CM_VA), FZ_CM_ACOLMAJOR);                                                \
      [[unroll]] for (int j = 0; j < FZ_CM_RN; ++j)                                                                \
        coopMatLoadNV(b[s][j], fz_cm_b, uint(FZ_CM_BH(s * FZ_CM_K, (wn * FZ_CM_RN + j) * FZ_CM_N) / FZ_CM_VB),    \
                      uint(FZ_CM_BLD / FZ_CM_VB), FZ_CM_BCOLMAJOR);                                                \
    }                                                                                                              \
    [[unroll]] for (int s = 0; s < FZ_CM_KS; ++s)                                                                  \
      [[unroll]] for (int i = 0; i < FZ_CM_RM; ++i)                                                                \
        [[unroll]] for (int j = 0; j < FZ_CM_RN; ++j) acc[i][j] = coopMatMulAddNV(a[s][i], b[s][j], acc[i][j]);    \
  }
#endif
"""

CM_2ACC = r"""#define FZ_CM_COMPUTE                                                                                              \
  [[unroll]] for (int kk = 0; kk < FZ_CM_BK; kk += 2 * FZ_CM_K) {                                                  \
    FZ_CM_MA a[FZ_CM_RM], a2[FZ_CM_RM];                                                                            \
    FZ_CM_MB b[FZ_CM_RN], b2[FZ_CM_RN];                                                                            \
    [[unroll]] for (int i = 0; i < FZ_CM_RM; ++i) {                                                                \
      coopMatLoadNV(a[i], fz_cm_a, uint(FZ_CM_AH((wm * FZ_CM_RM + i) * FZ_CM_M, kk) / FZ_CM_VA),                  \
                    uint(FZ_CM_ALD / FZ_CM_VA), FZ_CM_ACOLMAJOR);                                                  \
      coopMatLoadNV(a2[i], fz_cm_a, uint(FZ_CM_AH((wm * FZ_CM_RM + i) * FZ_CM_M, kk + FZ_CM_K) / FZ_CM_VA),       \
                    uint(FZ_CM_ALD / FZ_CM_VA), FZ_CM_ACOLMAJOR);                                                  \
    }                                                                                                              \
    [[unroll]] for (int j = 0; j < FZ_CM_RN; ++j) {                                                                \
      coopMatLoadNV(b[j], fz_cm_b, uint(FZ_CM_BH(kk, (wn * FZ_CM_RN + j) * FZ_CM_N) / FZ_CM_VB),                  \
                    uint(FZ_CM_BLD / FZ_CM_VB), FZ_CM_BCOLMAJOR);                                                  \
      coopMatLoadNV(b2[j], fz_cm_b, uint(FZ_CM_BH(kk + FZ_CM_K, (wn * FZ_CM_RN + j) * FZ_CM_N) / FZ_CM_VB),       \
                    uint(FZ_CM_BLD / FZ_CM_VB), FZ_CM_BCOLMAJOR);                                                  \
    }                                                                                                              \
    [[unroll]] for (int i = 0; i < FZ_CM_RM; ++i)                                                                  \
      [[unroll]] for (int j = 0; j < FZ_CM_RN; ++j) {                                                              \
        acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);                                                        \
        acc2[i][j] = coopMatMulAddNV(a2[i], b2[j], acc2[i][j]);                                                    \
      }                                                                                                            \
  }
#endif
"""


def sub(text, pat, rep):
    out, n = pat.subn(lambda m: rep, text)
    if n == 0:
        raise SystemExit(f"pattern not found: {pat}")
    return out


def cm2acc(s):
    s = sub(s, CM_OLD, CM_2ACC)
    s = sub(s, re.compile(r"    FZ_CM_ACC acc\[FZ_CM_RM\]\[FZ_CM_RN\];\n    \[\[unroll\]\] for \(int i = 0; i < FZ_CM_RM; \+\+i\)\n      \[\[unroll\]\] for \(int j = 0; j < FZ_CM_RN; \+\+j\) acc\[i\]\[j\] = FZ_CM_ZERO;\n"),
            "    FZ_CM_ACC acc[FZ_CM_RM][FZ_CM_RN], acc2[FZ_CM_RM][FZ_CM_RN];\n"
            "    [[unroll]] for (int i = 0; i < FZ_CM_RM; ++i)\n"
            "      [[unroll]] for (int j = 0; j < FZ_CM_RN; ++j) { acc[i][j] = FZ_CM_ZERO; acc2[i][j] = FZ_CM_ZERO; }\n")
    return sub(s, re.compile(r"(#else\n)(    \[\[unroll\]\] for \(int i = 0; i < FZ_CM_RM; \+\+i\)\n      \[\[unroll\]\] for \(int j = 0; j < FZ_CM_RN; \+\+j\)\n        FZ_CM_STORE)"),
               "#else\n    [[unroll]] for (int i = 0; i < FZ_CM_RM; ++i)\n      [[unroll]] for (int j = 0; j < FZ_CM_RN; ++j) acc[i][j] = acc[i][j] + acc2[i][j];\n"
               "    [[unroll]] for (int i = 0; i < FZ_CM_RM; ++i)\n      [[unroll]] for (int j = 0; j < FZ_CM_RN; ++j)\n        FZ_CM_STORE")


# Each warp on 8 x 4 threads of the 16 x 16 (was 16 x 2): per k a warp reads 8 B vec4s and 4 A
# vec4s (one shared-memory wavefront each) instead of 16 and 2 (three); same sums, same bits.
SWZ_OLD = re.compile(r"  const int tx = tid % \(FZ_BN / FZ_TN\), ty = tid / \(FZ_BN / FZ_TN\);\n")
SWZ = ("  const int tx = (tid & 7) | (((tid >> 5) & 1) << 3), ty = ((tid >> 3) & 3) | ((tid >> 6) << 2);"
       "  // 16 x 16 threads, blocked\n")

# GEMV (FZ_SKINNY 1): the partial sums' tree over the FZ_SK_KG K groups.
GV_TREE = re.compile(r"    for \(int s = FZ_SK_KG / 2; s > 0; s /= 2\) \{\n      if \(kg < s\)\n        for \(int m = 0; m < FZ_SK_M; \+\+m\)\n"
                     r"          fz_part\[\(kg \* FZ_SK_M \+ m\) \* \(FZ_SK_COLS \+ 1\) \+ lane\] \+= fz_part\[\(\(kg \+ s\) \* FZ_SK_M \+ m\) \* \(FZ_SK_COLS \+ 1\) \+ lane\];\n"
                     r"      memoryBarrierShared\(\);\n      barrier\(\);\n    \}\n")
# gvnored: no tree (group 0's own partial; wrong), gvred4: a 4-ary tree (three barriers for 64
# groups instead of six; another fixed order).
GV_RED4 = """    for (int s = FZ_SK_KG / 4; s > 0; s /= 4) {
      if (kg < s)
        for (int m = 0; m < FZ_SK_M; ++m) {
          const int q = (FZ_SK_COLS + 1) * FZ_SK_M;
          const int at = (kg * FZ_SK_M + m) * (FZ_SK_COLS + 1) + lane;
          fz_part[at] = (fz_part[at] + fz_part[at + s * q]) + (fz_part[at + 2 * s * q] + fz_part[at + 3 * s * q]);
        }
      memoryBarrierShared();
      barrier();
    }
"""

VARIANTS = {
    "gvnored": ("gemv", lambda s: sub(s, GV_TREE, "")),
    "gvred4": ("gemv", lambda s: sub(s, GV_TREE, GV_RED4)),
    "swz": ("tiled", lambda s: sub(s, SWZ_OLD, SWZ)),
    "hoist": ("tiled", lambda s: sub(s, BLOCKED_OLD, HOIST)),
    "pipe": ("tiled", lambda s: sub(s, BLOCKED_OLD, PIPE)),
    "cmfirst": ("coopmat", lambda s: sub(s, CM_OLD, CM_FIRST)),
    "cm2acc": ("coopmat", cm2acc),
}
n = 0
for f in sorted(os.listdir(src_dir)):
    s = open(os.path.join(src_dir, f)).read()
    kind = ("coopmat" if "#define FZ_COOPMAT 1" in s else "tiled" if re.search(r"^#define FZ_BLOCKED 1", s, re.M)
            else "gemv" if re.search(r"^#define FZ_SKINNY 1", s, re.M) else None)
    if not kind:
        continue
    for v, (vk, fn) in VARIANTS.items():
        if vk != kind:
            continue
        os.makedirs(os.path.join(out_dir, v), exist_ok=True)
        open(os.path.join(out_dir, v, f), "w").write(fn(s))
    n += 1
    print(f, kind)
print(n, "kernels")
