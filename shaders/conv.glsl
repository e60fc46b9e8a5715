#ifdef __cplusplus
R"FZ_GLSL(//"
#endif
// 2-D convolution template (Vulkan backend), ONNX Conv over NCHW input / OIHW weights with
// groups, strides, pads and dilations; each output goes through FZ_EPILOGUE (bias, ReLU,
// residual ... fused by the emitter).
//
// Embedding: see gemm.glsl (the wrapper lines are stripped in vk_dialect.cpp); conv.comp
// checks this file with glslc. Contract (backends/codegen.h): fz_idx, FZ_CN FZ_CC FZ_CH FZ_CW
// FZ_CK FZ_CR FZ_CS FZ_COH FZ_COW FZ_SH FZ_SW FZ_PH FZ_PW FZ_DH FZ_DW FZ_GROUPS FZ_TOTAL,
// FZ_LOAD_X/W(off), FZ_EPILOGUE(acc, i); fz_group_id()/fz_num_groups() from the prelude.
//
// Two schedules, picked by the host through specialization constant 6 (FZ_CONV_DIRECT):
//  * direct: one thread per output element looping over its C/G x R x S window; used for
//    depthwise and other tiny reductions where a GEMM tile would be mostly padding.
//  * implicit GEMM: per group g, Out_g[Kg, N*OH*OW] = W_g[Kg, Cg*R*S] x im2col(X)_g, with the
//    im2col matrix never materialised: the B slice is gathered from X (zero outside the
//    padded input) while staging it in shared memory. Blocking as in gemm.glsl. Split-K
//    (FZ_SPLIT_K > 1, for few tiles with a long reduction) as in gemm.glsl: work item w =
//    tile * FZ_SPLIT_K + slice takes kd in [slice * FZ_SPLIT_SLICE, +FZ_SPLIT_SLICE), stores
//    its fp32 partial tile in fz_split.part, and the last of the tile's workgroups to arrive
//    adds the partials in slice order (deterministic) and runs the epilogue.
// FZ_CONV_DB (1 unless the host defines it 0, FUSOR_VK_CONV_DB=0) selects the implicit GEMM's
// K loop. 1: gemm.glsl's structure: the slices come in two copies; while the FMAs run on slice
// k, this thread's share of slice k+1 loads from global memory into registers (FZ_CV_FETCH) and
// is stored into the other copy afterwards (FZ_CV_STAGE), one barrier per K step. The weight
// slice's k rows are padded (FZ_WP = BM + 2) because it is staged down columns (kd fastest in
// memory): unpadded, the 16 kd of one row hit one bank. Register-block loops are [[unroll]]
// (their trip counts are specialization constants; fz_acc stays in registers only when every
// index into it is constant). The im2col column of each staged element (n, oh, ow) is fixed for
// the tile, so it is decomposed once per tile. FZ_W_VEC4 (the host defines it with
// FZ_LOAD_W4(off), a vec4 of weights off .. off+3, when C/G x R x S % 4 == 0 and the binding
// is aligned): a thread stages 4 consecutive kd with one load. 0: the previous loop (one
// copy, two barriers).
// Both accumulate each output with fp32 FMAs in the same kd order.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int FZ_BM = 64;
layout(constant_id = 2) const int FZ_BN = 64;
layout(constant_id = 3) const int FZ_BK = 16;
layout(constant_id = 4) const int FZ_TM = 4;
layout(constant_id = 5) const int FZ_TN = 4;
layout(constant_id = 6) const int FZ_CONV_DIRECT = 0;

#ifndef FZ_CONV_DB
#define FZ_CONV_DB 1
#endif
#if FZ_CONV_DB
const int FZ_THREADS = (FZ_BM / FZ_TM) * (FZ_BN / FZ_TN);
const int FZ_LW = (FZ_BK * FZ_BM + FZ_THREADS - 1) / FZ_THREADS;  // weight elements a thread stages per slice
const int FZ_LX = (FZ_BK * FZ_BN + FZ_THREADS - 1) / FZ_THREADS;  // im2col elements
#ifndef FZ_W_VEC4
#define FZ_W_VEC4 0
#endif
const int FZ_LW4 = (FZ_BK / 4 * FZ_BM + FZ_THREADS - 1) / FZ_THREADS;  // FZ_W_VEC4: vec4 groups
#ifndef FZ_BLOCKED
#define FZ_BLOCKED 0
#endif
#if FZ_BLOCKED
// Blocked register tiles (gemm.glsl's FZ_BLOCKED; the dialect defines it for FUSOR_VK_CONV_TILE's
// 16 x 16-thread tiles, TM and TN in {4, 8}): thread (tx, ty) owns rows ty * 4 + {0..3} (+ BM / 2
// when TM = 8) and the same groups of 4 columns, read from the slices as vec4 (rows padded by 4
// floats to stay 16-byte aligned): TM/4 + TN/4 vector reads per kd feed TM * TN FMAs, against
// TM + TN scalar reads in the interleaved layout, which keeps the 4x4 loop bound by shared-memory
// reads. The same kd order per output, so the same bits.
const int FZ_WP = FZ_BM + 4;
const int FZ_XP = FZ_BN + 4;
shared vec4 fz_ws[2 * FZ_BK * FZ_WP / 4];
shared vec4 fz_xs[2 * FZ_BK * FZ_XP / 4];
#define FZ_WS_SET(i, v) fz_ws[(i) >> 2][(i) & 3] = (v)  // one 32-bit store (a component access chain)
#define FZ_XS_SET(i, v) fz_xs[(i) >> 2][(i) & 3] = (v)
const int FZ_GM = FZ_TM / 4, FZ_GN = FZ_TN / 4;  // groups of 4 rows / columns per thread
#define FZ_ROW(i) (((i) >> 2) * (FZ_BM / FZ_GM) + ty * 4 + ((i) & 3))
#define FZ_COL(j) (((j) >> 2) * (FZ_BN / FZ_GN) + tx * 4 + ((j) & 3))
#else
const int FZ_WP = FZ_BM + 2;  // +2: a column of 16 kd rows covers 32 banks
const int FZ_XP = FZ_BN;      // staged along its rows: no conflict to pad away
shared float fz_ws[2 * FZ_BK * FZ_WP];  // copy p, kd, m at p * BK * WP + kd * WP + m
shared float fz_xs[2 * FZ_BK * FZ_XP];  // copy p, kd, col at p * BK * XP + kd * XP + col
#define FZ_WS_SET(i, v) fz_ws[i] = (v)
#define FZ_XS_SET(i, v) fz_xs[i] = (v)
#define FZ_ROW(i) (ty + (i) * (FZ_BM / FZ_TM))
#define FZ_COL(j) (tx + (j) * (FZ_BN / FZ_TN))
#endif
#define FZ_CV_UNROLL [[unroll]]
#else
#if defined(FZ_BLOCKED) && FZ_BLOCKED
#error "blocked register tiles need the double-buffered K loop (FZ_CONV_DB 1)"
#endif
#define FZ_ROW(i) (ty + (i) * (FZ_BM / FZ_TM))
#define FZ_COL(j) (tx + (j) * (FZ_BN / FZ_TN))
shared float fz_ws[FZ_BK * FZ_BM];  // weight slice: fz_ws[kd * BM + m]
shared float fz_xs[FZ_BK * FZ_BN];  // im2col slice: fz_xs[kd * BN + col]
#define FZ_CV_UNROLL
#endif

const fz_idx FZ_CG = FZ_CC / FZ_GROUPS;         // input channels per group
const fz_idx FZ_KG = FZ_CK / FZ_GROUPS;         // output channels per group
const fz_idx FZ_KD = FZ_CG * FZ_CR * FZ_CS;     // reduction length
const fz_idx FZ_OHW = FZ_COH * FZ_COW;
const fz_idx FZ_NCOL = FZ_CN * FZ_OHW;
#ifndef FZ_SPLIT_K
#define FZ_SPLIT_K 1
#endif
#ifndef FZ_SPLIT_SLICE
#define FZ_SPLIT_SLICE FZ_KD
#endif
#if FZ_SPLIT_K > 1
shared bool fz_split_last;
#endif

void fz_conv_direct() {
  const fz_idx step = fz_idx(fz_num_groups()) * fz_idx(gl_WorkGroupSize.x);
  for (fz_idx o = fz_idx(fz_group_id()) * fz_idx(gl_WorkGroupSize.x) + fz_idx(gl_LocalInvocationID.x); o < FZ_TOTAL; o += step) {
    const fz_idx ow = o % FZ_COW, oh = (o / FZ_COW) % FZ_COH, k = (o / FZ_OHW) % FZ_CK, n = o / (FZ_OHW * FZ_CK);
    const fz_idx g = k / FZ_KG;
    float acc = 0.0f;
    for (fz_idx c = fz_idx(0); c < FZ_CG; ++c) {
      const fz_idx xbase = (n * FZ_CC + g * FZ_CG + c) * FZ_CH * FZ_CW, wbase = (k * FZ_CG + c) * FZ_CR * FZ_CS;
      for (fz_idx r = fz_idx(0); r < FZ_CR; ++r) {
        const fz_idx ih = oh * FZ_SH - FZ_PH + r * FZ_DH;
        if (ih < 0 || ih >= FZ_CH) continue;
        for (fz_idx s = fz_idx(0); s < FZ_CS; ++s) {
          const fz_idx iw = ow * FZ_SW - FZ_PW + s * FZ_DW;
          if (iw < 0 || iw >= FZ_CW) continue;
          acc = fma(FZ_LOAD_X(xbase + ih * FZ_CW + iw), FZ_LOAD_W(wbase + r * FZ_CS + s), acc);
        }
      }
    }
    FZ_EPILOGUE(acc, o);
  }
}

void fz_conv_gemm() {
  const int threads = (FZ_BM / FZ_TM) * (FZ_BN / FZ_TN);
  const int tid = int(gl_LocalInvocationID.x);
  const int tx = tid % (FZ_BN / FZ_TN), ty = tid / (FZ_BN / FZ_TN);
  const fz_idx tiles_m = (FZ_KG + FZ_BM - 1) / FZ_BM, tiles_n = (FZ_NCOL + FZ_BN - 1) / FZ_BN;
  const fz_idx tiles = tiles_m * tiles_n * FZ_GROUPS;
  for (fz_idx w = fz_idx(fz_group_id()); w < tiles * FZ_SPLIT_K; w += fz_idx(fz_num_groups())) {
    const fz_idx t = w / FZ_SPLIT_K;
    const int slice = int(w - t * FZ_SPLIT_K);
    const fz_idx kbeg = fz_idx(slice) * FZ_SPLIT_SLICE;
    const fz_idx kend = kbeg + FZ_SPLIT_SLICE < FZ_KD ? kbeg + FZ_SPLIT_SLICE : FZ_KD;
    const fz_idx g = t / (tiles_m * tiles_n);
    const fz_idx rem = t - g * (tiles_m * tiles_n);
    const fz_idx row0 = (rem / tiles_n) * FZ_BM, col0 = (rem % tiles_n) * FZ_BN;
    float fz_acc[FZ_TM * FZ_TN];
    FZ_CV_UNROLL for (int i = 0; i < FZ_TM * FZ_TN; ++i) fz_acc[i] = 0.0f;
#if FZ_CONV_DB
    // This thread's im2col elements e = tid + q * threads sit at a fixed column of the tile:
    // their input row / column origin and image base, once per tile (an out-of-range column
    // gets an origin that fails the bounds test for every kd).
    fz_idx xb[FZ_LX], ih0[FZ_LX], iw0[FZ_LX];
    FZ_CV_UNROLL for (int q = 0; q < FZ_LX; ++q) {
      const fz_idx col = col0 + (tid + q * threads) % FZ_BN;
      const fz_idx ow = col % FZ_COW, oh = (col / FZ_COW) % FZ_COH, n = col / FZ_OHW;
      xb[q] = (n * FZ_CC + g * FZ_CG) * FZ_CH * FZ_CW;
      ih0[q] = col < FZ_NCOL ? oh * FZ_SH - FZ_PH : -FZ_CH - FZ_CR * FZ_DH;
      iw0[q] = ow * FZ_SW - FZ_PW;
    }
    float rx[FZ_LX];
    // Global -> registers (slice k0), registers -> shared copy p; zeros outside (edges, K tail).
#if FZ_W_VEC4  // 4 consecutive kd per load: KD % 4 == 0 and slices start at multiples of BK
    vec4 rw[FZ_LW4];
#define FZ_CV_FETCH_W(k0)                                                                                 \
    FZ_CV_UNROLL for (int q = 0; q < FZ_LW4; ++q) {                                                       \
      const int e = tid + q * threads;                                                                    \
      const fz_idx gm = row0 + e / (FZ_BK / 4), gk = (k0) + (e % (FZ_BK / 4)) * 4;                        \
      rw[q] = (e < FZ_BK / 4 * FZ_BM && gm < FZ_KG && gk < kend) ? FZ_LOAD_W4((g * FZ_KG + gm) * FZ_KD + gk) : vec4(0.0f); \
    }
#define FZ_CV_STAGE_W(p)                                                                                  \
    FZ_CV_UNROLL for (int q = 0; q < FZ_LW4; ++q) {                                                       \
      const int e = tid + q * threads;                                                                    \
      const int kk = (e % (FZ_BK / 4)) * 4, mm = e / (FZ_BK / 4);                                         \
      if (e < FZ_BK / 4 * FZ_BM)                                                                          \
        [[unroll]] for (int c = 0; c < 4; ++c) FZ_WS_SET((p) * FZ_BK * FZ_WP + (kk + c) * FZ_WP + mm, rw[q][c]); \
    }
#else
    float rw[FZ_LW];
#define FZ_CV_FETCH_W(k0)                                                                                 \
    FZ_CV_UNROLL for (int q = 0; q < FZ_LW; ++q) { /* weights: contiguous along kd */                     \
      const int e = tid + q * threads;                                                                    \
      const fz_idx gm = row0 + e / FZ_BK, gk = (k0) + e % FZ_BK;                                          \
      rw[q] = (e < FZ_BK * FZ_BM && gm < FZ_KG && gk < kend) ? FZ_LOAD_W((g * FZ_KG + gm) * FZ_KD + gk) : 0.0f; \
    }
#define FZ_CV_STAGE_W(p)                                                                                  \
    FZ_CV_UNROLL for (int q = 0; q < FZ_LW; ++q) {                                                        \
      const int e = tid + q * threads;                                                                    \
      if (e < FZ_BK * FZ_BM) FZ_WS_SET((p) * FZ_BK * FZ_WP + (e % FZ_BK) * FZ_WP + e / FZ_BK, rw[q]);     \
    }
#endif
#define FZ_CV_FETCH(k0)                                                                                   \
    FZ_CV_FETCH_W(k0)                                                                                     \
    FZ_CV_UNROLL for (int q = 0; q < FZ_LX; ++q) { /* input patches: contiguous along ow */               \
      const int e = tid + q * threads;                                                                    \
      const fz_idx gk = (k0) + e / FZ_BN;                                                                 \
      const fz_idx c = gk / (FZ_CR * FZ_CS), rs = gk - c * (FZ_CR * FZ_CS), r = rs / FZ_CS, s = rs - r * FZ_CS; \
      const fz_idx ih = ih0[q] + r * FZ_DH, iw = iw0[q] + s * FZ_DW;                                      \
      rx[q] = (e < FZ_BK * FZ_BN && gk < kend && ih >= 0 && ih < FZ_CH && iw >= 0 && iw < FZ_CW)           \
                  ? FZ_LOAD_X(xb[q] + (c * FZ_CH + ih) * FZ_CW + iw) : 0.0f;                              \
    }
#define FZ_CV_STAGE(p)                                                                                    \
    FZ_CV_STAGE_W(p)                                                                                      \
    FZ_CV_UNROLL for (int q = 0; q < FZ_LX; ++q) {                                                        \
      const int e = tid + q * threads;                                                                    \
      if (e < FZ_BK * FZ_BN) FZ_XS_SET((p) * FZ_BK * FZ_XP + (e / FZ_BN) * FZ_XP + e % FZ_BN, rx[q]);     \
    }
    FZ_CV_FETCH(kbeg)
    FZ_CV_STAGE(0)
    memoryBarrierShared();
    barrier();
    int p = 0;
    for (fz_idx k0 = kbeg; k0 < kend; k0 += FZ_BK) {
      const bool more = k0 + FZ_BK < kend;  // uniform
      if (more) {
        FZ_CV_FETCH(k0 + FZ_BK)
      }
      const int ws0 = p * FZ_BK * FZ_WP, xs0 = p * FZ_BK * FZ_XP;
#if FZ_BLOCKED
      [[unroll]] for (int kk = 0; kk < FZ_BK; ++kk) {
        vec4 a[FZ_GM], b[FZ_GN];
        [[unroll]] for (int gi = 0; gi < FZ_GM; ++gi) a[gi] = fz_ws[(ws0 + kk * FZ_WP + gi * (FZ_BM / FZ_GM) + ty * 4) >> 2];
        [[unroll]] for (int gj = 0; gj < FZ_GN; ++gj) b[gj] = fz_xs[(xs0 + kk * FZ_XP + gj * (FZ_BN / FZ_GN) + tx * 4) >> 2];
        [[unroll]] for (int i = 0; i < FZ_TM; ++i)
          [[unroll]] for (int j = 0; j < FZ_TN; ++j) fz_acc[i * FZ_TN + j] = fma(a[i >> 2][i & 3], b[j >> 2][j & 3], fz_acc[i * FZ_TN + j]);
      }
#else
      [[unroll]] for (int kk = 0; kk < FZ_BK; ++kk) {
        float a[FZ_TM], b[FZ_TN];
        [[unroll]] for (int i = 0; i < FZ_TM; ++i) a[i] = fz_ws[ws0 + kk * FZ_WP + ty + i * (FZ_BM / FZ_TM)];
        [[unroll]] for (int j = 0; j < FZ_TN; ++j) b[j] = fz_xs[xs0 + kk * FZ_XP + tx + j * (FZ_BN / FZ_TN)];
        [[unroll]] for (int i = 0; i < FZ_TM; ++i)
          [[unroll]] for (int j = 0; j < FZ_TN; ++j) fz_acc[i * FZ_TN + j] = fma(a[i], b[j], fz_acc[i * FZ_TN + j]);
      }
#endif
      // The other copy was last read before the previous step's barrier.
      if (more) {
        FZ_CV_STAGE(1 - p)
      }
      memoryBarrierShared();
      barrier();
      p = 1 - p;
    }
#undef FZ_CV_FETCH
#undef FZ_CV_STAGE
#undef FZ_CV_FETCH_W
#undef FZ_CV_STAGE_W
#else
    for (fz_idx k0 = kbeg; k0 < kend; k0 += FZ_BK) {
      for (int e = tid; e < FZ_BK * FZ_BM; e += threads) {  // weights: contiguous along kd
        const int kk = e % FZ_BK, mm = e / FZ_BK;
        const fz_idx gm = row0 + mm, gk = k0 + kk;
        fz_ws[kk * FZ_BM + mm] = (gm < FZ_KG && gk < kend) ? FZ_LOAD_W((g * FZ_KG + gm) * FZ_KD + gk) : 0.0f;
      }
      for (int e = tid; e < FZ_BK * FZ_BN; e += threads) {  // input patches: contiguous along ow
        const int nn = e % FZ_BN, kk = e / FZ_BN;
        const fz_idx col = col0 + nn, gk = k0 + kk;
        float v = 0.0f;
        if (col < FZ_NCOL && gk < kend) {
          const fz_idx s = gk % FZ_CS, r = (gk / FZ_CS) % FZ_CR, c = gk / (FZ_CS * FZ_CR);
          const fz_idx ow = col % FZ_COW, oh = (col / FZ_COW) % FZ_COH, n = col / FZ_OHW;
          const fz_idx ih = oh * FZ_SH - FZ_PH + r * FZ_DH, iw = ow * FZ_SW - FZ_PW + s * FZ_DW;
          if (ih >= 0 && ih < FZ_CH && iw >= 0 && iw < FZ_CW) v = FZ_LOAD_X(((n * FZ_CC + g * FZ_CG + c) * FZ_CH + ih) * FZ_CW + iw);
        }
        fz_xs[kk * FZ_BN + nn] = v;
      }
      memoryBarrierShared();
      barrier();
      for (int kk = 0; kk < FZ_BK; ++kk) {
        float a[FZ_TM], b[FZ_TN];
        for (int i = 0; i < FZ_TM; ++i) a[i] = fz_ws[kk * FZ_BM + ty + i * (FZ_BM / FZ_TM)];
        for (int j = 0; j < FZ_TN; ++j) b[j] = fz_xs[kk * FZ_BN + tx + j * (FZ_BN / FZ_TN)];
        for (int i = 0; i < FZ_TM; ++i)
          for (int j = 0; j < FZ_TN; ++j) fz_acc[i * FZ_TN + j] = fma(a[i], b[j], fz_acc[i * FZ_TN + j]);
      }
      memoryBarrierShared();
      barrier();
    }
#endif
#if FZ_SPLIT_K > 1
    {
      // Partial tile out (thread-interleaved), then elect the last arrival (gemm.glsl).
      const fz_idx part = w * (FZ_BM * FZ_BN);
      FZ_CV_UNROLL for (int i = 0; i < FZ_TM * FZ_TN; ++i) fz_split.part[part + i * threads + tid] = fz_acc[i];
      memoryBarrierBuffer();
      barrier();
      if (tid == 0) fz_split_last = atomicAdd(fz_split.cnt[t], 1u) == uint(FZ_SPLIT_K - 1);
      memoryBarrierShared();
      barrier();
      if (!fz_split_last) continue;  // uniform: every thread read the same shared flag
      memoryBarrierBuffer();
      const fz_idx first = t * FZ_SPLIT_K * (FZ_BM * FZ_BN);
      // Slices added in order 0, 1, ... (the same order every run), all read back from the
      // workspace, this group's own too (the bits it stored). Slice-outer, the register block
      // inside: each slice's TM * TN loads are independent and overlap. Element-outer had
      // S - 1 dependent loads per accumulator, (S - 1) * TM * TN round trips to L2 in a row,
      // which made big register blocks with many slices 2-3x slower on the H200.
      FZ_CV_UNROLL for (int i = 0; i < FZ_TM * FZ_TN; ++i) fz_acc[i] = fz_split.part[first + i * threads + tid];
      for (int s = 1; s < FZ_SPLIT_K; ++s) {
        const fz_idx base = first + fz_idx(s) * (FZ_BM * FZ_BN) + tid;
        FZ_CV_UNROLL for (int i = 0; i < FZ_TM * FZ_TN; ++i) {
          precise float sum = fz_acc[i] + fz_split.part[base + i * threads];
          fz_acc[i] = sum;
        }
      }
      if (tid == 0) fz_split.cnt[t] = 0u;  // ready for the next replay
    }
#endif
    FZ_CV_UNROLL for (int i = 0; i < FZ_TM; ++i) {
      const fz_idx m = row0 + FZ_ROW(i);
      FZ_CV_UNROLL for (int j = 0; j < FZ_TN; ++j) {  // no `continue`: see gemm.glsl's epilogue
        const fz_idx col = col0 + FZ_COL(j);
        if (m < FZ_KG && col < FZ_NCOL)
          FZ_EPILOGUE(fz_acc[i * FZ_TN + j], ((col / FZ_OHW) * FZ_CK + g * FZ_KG + m) * FZ_OHW + col % FZ_OHW);
      }
    }
  }
}

void main() {
  if (FZ_CONV_DIRECT != 0) fz_conv_direct();
  else fz_conv_gemm();
}
#ifdef __cplusplus
//")FZ_GLSL"
#endif
