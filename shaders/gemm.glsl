#ifdef __cplusplus
R"FZ_GLSL(//"
#endif
// Tiled GEMM template (Vulkan backend): C[batch, m, n] = sum_k A[batch, m, k] * B[batch, k, n],
// each element handed to FZ_EPILOGUE (bias, activation, residual ... fused by the emitter).
//
// Embedding: the first and last three lines let C++ #include this file as a raw string
// (backends/vulkan/vk_dialect.cpp strips them); GLSL skips them. gemm.comp checks it with glslc.
// Contract (backends/codegen.h, "Contraction templates"): the emitter defines fz_idx, FZ_M,
// FZ_N, FZ_K, FZ_BATCH, FZ_A_SM, FZ_A_SK, FZ_B_SK, FZ_B_SN, FZ_LOAD_A/B(off), fz_a_base/
// fz_b_base(batch), FZ_EPILOGUE(acc, i); the Vulkan prelude defines fz_group_id()/fz_num_groups().
// Strided A/B views (transposes, broadcast batches) are read through the strides, so no
// transpose kernel ever runs.
//
// Blocking: a workgroup owns a BM x BN output tile and walks K in BK slices staged in shared
// memory; each thread accumulates TM x TN outputs in registers, its rows/columns interleaved
// with stride BM/TM, BN/TN so that neighbouring threads store neighbouring columns (coalesced
// epilogue) and read neighbouring shared-memory words. Tile sizes are specialization
// constants chosen by the host (vk_dialect.cpp choose_tiles); local size = (BM/TM)*(BN/TN).
// Double buffering: the shared slices come in two copies; while the FMAs run on slice k from
// one copy, the thread's share of slice k+1 is already loading from global memory into
// registers and is stored into the other copy afterwards, so each K step has one barrier and
// the load latency hides behind the arithmetic.
// Split-K (FZ_SPLIT_K > 1, the Vulkan dialect defines it when the tile grid cannot fill the
// device): work item w = tile * FZ_SPLIT_K + slice covers K range [slice * FZ_SPLIT_SLICE,
// +FZ_SPLIT_SLICE) (a multiple of BK). Each workgroup stores its fp32 partial tile in the
// workspace fz_split.part and bumps the tile's counter fz_split.cnt; the last to arrive adds
// the FZ_SPLIT_K partials in slice order 0, 1, ... (the same order every run, so results are
// deterministic), runs FZ_EPILOGUE once on the sum and zeroes the counter for the next replay.
// Vector loads (FZ_A_VEC4 / FZ_B_VEC4, the Vulkan dialect defines them with FZ_LOAD_A4/B4(off),
// which return a vec4, when an operand's unit-stride direction is A's K / B's N and every
// group of 4 starts aligned: fp32 as one vec4, fp16 as one f16vec4, bf16 as one uvec2 of packed
// bf16, each converted exactly): a thread stages 4 consecutive elements with one load;
// otherwise scalar loads through the view's strides.
// Shared slices: each k row is padded (FZ_AP = BM + pad floats) so that staging stores walking
// down a column (A read along K, B transposed) spread over the banks instead of hitting one.
// Blocked register tiles (FZ_BLOCKED, the dialect defines it for the bigger blocks: TM, TN in
// {4, 8}, 16 x 16 threads): thread (tx, ty) owns rows ty * 4 + {0..3} (+ BM / 2 when TM = 8)
// and the same groups of 4 columns, read from shared memory as vec4 (the slices are vec4
// arrays, rows padded by 4 floats to stay 16-byte aligned): per k step TM/4 + TN/4 vector
// reads feed TM * TN FMAs, against TM + TN scalar reads in the interleaved layout.
// The register-block loops are [[unroll]] (GL_EXT_control_flow_attributes, in every Vulkan
// prelude): their trip counts are specialization constants, and fz_acc stays in registers only
// when every index into it is constant after unrolling.
// FZ_SKINNY (the emitter's matmul_config defines it for M <= 8): 1 the first GEMV-like path,
// 2 the vector GEMV path (split K across workgroups, 4 columns per thread), both at the end of
// this file.
// FZ_TILE_LITERALS (the dialect defines it with FUSOR_VK_GEMM_LITERAL=1): the tile sizes are
// literals (FZ_TILE_BM ...) instead of specialization constants, so spirv-opt can fully unroll
// the [[unroll]] loops before the driver sees them (an A/B for the big register blocks, which
// ran 3-30x slower than 4x4 on the H200 with the sizes as specialization constants).
layout(local_size_x_id = 0) in;
#ifdef FZ_TILE_LITERALS
const int FZ_BM = FZ_TILE_BM;
const int FZ_BN = FZ_TILE_BN;
const int FZ_BK = FZ_TILE_BK;
const int FZ_TM = FZ_TILE_TM;
const int FZ_TN = FZ_TILE_TN;
#else
layout(constant_id = 1) const int FZ_BM = 64;
layout(constant_id = 2) const int FZ_BN = 64;
layout(constant_id = 3) const int FZ_BK = 16;
layout(constant_id = 4) const int FZ_TM = 4;
layout(constant_id = 5) const int FZ_TN = 4;
#endif

#if FZ_SKINNY == 0
#ifndef FZ_SPLIT_K
#define FZ_SPLIT_K 1
#endif
#ifndef FZ_SPLIT_SLICE
#define FZ_SPLIT_SLICE FZ_K
#endif
const int FZ_THREADS = (FZ_BM / FZ_TM) * (FZ_BN / FZ_TN);
const int FZ_LA = (FZ_BK * FZ_BM + FZ_THREADS - 1) / FZ_THREADS;  // A elements a thread stages per slice
const int FZ_LB = (FZ_BK * FZ_BN + FZ_THREADS - 1) / FZ_THREADS;
#ifndef FZ_A_VEC4
#define FZ_A_VEC4 0
#endif
#ifndef FZ_B_VEC4
#define FZ_B_VEC4 0
#endif
const int FZ_LA4 = (FZ_BK / 4 * FZ_BM + FZ_THREADS - 1) / FZ_THREADS;  // vec4 groups per thread
const int FZ_LB4 = (FZ_BK * (FZ_BN / 4) + FZ_THREADS - 1) / FZ_THREADS;
#ifndef FZ_BLOCKED
#define FZ_BLOCKED 0
#endif
// Two A slices, k-major: element (p, k, m) at p * BK * AP + k * AP + m; B likewise with BP.
#if FZ_BLOCKED
const int FZ_AP = FZ_BM + 4, FZ_BP = FZ_BN + 4;  // multiples of 4: vec4 rows stay aligned
shared vec4 fz_as[2 * FZ_BK * FZ_AP / 4];
shared vec4 fz_bs[2 * FZ_BK * FZ_BP / 4];
#define FZ_AS_SET(i, v) fz_as[(i) >> 2][(i) & 3] = (v)  // one 32-bit store (a component access chain)
#define FZ_BS_SET(i, v) fz_bs[(i) >> 2][(i) & 3] = (v)
const int FZ_GM = FZ_TM / 4, FZ_GN = FZ_TN / 4;  // groups of 4 rows / columns per thread
// Row / column of register i / j inside the tile.
#define FZ_ROW(i) (((i) >> 2) * (FZ_BM / FZ_GM) + ty * 4 + ((i) & 3))
#define FZ_COL(j) (((j) >> 2) * (FZ_BN / FZ_GN) + tx * 4 + ((j) & 3))
#else
const int FZ_AP = FZ_BM + 2, FZ_BP = FZ_BN + 2;  // +2: a column of 16 k rows covers 32 banks
shared float fz_as[2 * FZ_BK * FZ_AP];
shared float fz_bs[2 * FZ_BK * FZ_BP];
#define FZ_AS_SET(i, v) fz_as[i] = (v)
#define FZ_BS_SET(i, v) fz_bs[i] = (v)
#define FZ_ROW(i) (ty + (i) * (FZ_BM / FZ_TM))
#define FZ_COL(j) (tx + (j) * (FZ_BN / FZ_TN))
#endif
#if FZ_SPLIT_K > 1
shared bool fz_split_last;
#endif

void main() {
  const int threads = FZ_THREADS;
  const int tid = int(gl_LocalInvocationID.x);
  const int tx = tid % (FZ_BN / FZ_TN), ty = tid / (FZ_BN / FZ_TN);
  const fz_idx tiles_m = (fz_idx(FZ_M) + FZ_BM - 1) / FZ_BM;
  const fz_idx tiles_n = (fz_idx(FZ_N) + FZ_BN - 1) / FZ_BN;
  const fz_idx tiles = tiles_m * tiles_n * FZ_BATCH;
  // Consecutive threads walk the operand's unit-stride direction when staging.
  const bool k_fast = FZ_A_SK == 1;
  const bool n_fast = FZ_B_SN == 1 || FZ_B_SK != 1;
#if FZ_A_VEC4
  vec4 ra[FZ_LA4];
#else
  float ra[FZ_LA];
#endif
#if FZ_B_VEC4
  vec4 rb[FZ_LB4];
#else
  float rb[FZ_LB];
#endif
#ifndef FZ_PREFETCH
#define FZ_PREFETCH 1
#endif
#if FZ_PREFETCH == 2  // the second register set
#if FZ_A_VEC4
  vec4 ra2[FZ_LA4];
#else
  float ra2[FZ_LA];
#endif
#if FZ_B_VEC4
  vec4 rb2[FZ_LB4];
#else
  float rb2[FZ_LB];
#endif
#endif
  // Grid-stride over work items: the loop bound is uniform, so the barriers below are too.
  for (fz_idx w = fz_idx(fz_group_id()); w < tiles * FZ_SPLIT_K; w += fz_idx(fz_num_groups())) {
    const fz_idx t = w / FZ_SPLIT_K;
    const int slice = int(w - t * FZ_SPLIT_K);
    const fz_idx batch = t / (tiles_m * tiles_n);
    const fz_idx rem = t - batch * (tiles_m * tiles_n);
#ifdef FZ_TILE_N_MAJOR  // consecutive work items share a B column strip (read once from DRAM)
    const fz_idx row0 = (rem % tiles_m) * FZ_BM, col0 = (rem / tiles_m) * FZ_BN;
#else
    const fz_idx row0 = (rem / tiles_n) * FZ_BM, col0 = (rem % tiles_n) * FZ_BN;
#endif
    const fz_idx abase = fz_a_base(batch), bbase = fz_b_base(batch);
    const fz_idx kbeg = fz_idx(slice) * FZ_SPLIT_SLICE;
    const fz_idx kend = kbeg + FZ_SPLIT_SLICE < fz_idx(FZ_K) ? kbeg + FZ_SPLIT_SLICE : fz_idx(FZ_K);
    float fz_acc[FZ_TM * FZ_TN];
    [[unroll]] for (int i = 0; i < FZ_TM * FZ_TN; ++i) fz_acc[i] = 0.0f;
    // Global -> registers (this thread's elements e = tid + r * threads of slice k0) and
    // registers -> shared copy p. Out-of-range elements (edges, K tail) are zeros.
#if FZ_A_VEC4  // 4 consecutive k per load: K % 4 == 0, so a group is all in range or all out
#define FZ_FETCH_A(k0, RA)                                                                                   \
    [[unroll]] for (int r = 0; r < FZ_LA4; ++r) {                                                                     \
      const int e = tid + r * threads;                                                                     \
      const int kk = (e % (FZ_BK / 4)) * 4, mm = e / (FZ_BK / 4);                                          \
      const fz_idx gm = row0 + mm, gk = (k0) + kk;                                                         \
      RA[r] = (e < FZ_BK / 4 * FZ_BM && gm < FZ_M && gk < FZ_K) ? FZ_LOAD_A4(abase + gm * FZ_A_SM + gk) : vec4(0.0f); \
    }
#define FZ_STAGE_A(p, RA)                                                                                  \
    [[unroll]] for (int r = 0; r < FZ_LA4; ++r) {                                                                     \
      const int e = tid + r * threads;                                                                     \
      const int kk = (e % (FZ_BK / 4)) * 4, mm = e / (FZ_BK / 4);                                          \
      if (e < FZ_BK / 4 * FZ_BM)                                                                           \
        [[unroll]] for (int c = 0; c < 4; ++c) FZ_AS_SET((p) * FZ_BK * FZ_AP + (kk + c) * FZ_AP + mm, RA[r][c]);       \
    }
#else
#define FZ_FETCH_A(k0, RA)                                                                                   \
    [[unroll]] for (int r = 0; r < FZ_LA; ++r) {                                                                      \
      const int e = tid + r * threads;                                                                     \
      const int kk = k_fast ? e % FZ_BK : e / FZ_BM, mm = k_fast ? e / FZ_BK : e % FZ_BM;                  \
      const fz_idx gm = row0 + mm, gk = (k0) + kk;                                                         \
      RA[r] = (e < FZ_BK * FZ_BM && gm < FZ_M && gk < FZ_K) ? FZ_LOAD_A(abase + gm * FZ_A_SM + gk * FZ_A_SK) : 0.0f; \
    }
#define FZ_STAGE_A(p, RA)                                                                                  \
    [[unroll]] for (int r = 0; r < FZ_LA; ++r) {                                                                      \
      const int e = tid + r * threads;                                                                     \
      const int kk = k_fast ? e % FZ_BK : e / FZ_BM, mm = k_fast ? e / FZ_BK : e % FZ_BM;                  \
      if (e < FZ_BK * FZ_BM) FZ_AS_SET((p) * FZ_BK * FZ_AP + kk * FZ_AP + mm, RA[r]);                       \
    }
#endif
#if FZ_B_VEC4  // 4 consecutive n per load: N % 4 == 0
#if FZ_BLOCKED  // nn and BP are multiples of 4: the group is one aligned vec4 of the slice
#define FZ_STORE_B4(i, v) fz_bs[(i) >> 2] = (v)
#else
#define FZ_STORE_B4(i, v) [[unroll]] for (int c = 0; c < 4; ++c) fz_bs[(i) + c] = (v)[c]
#endif
#define FZ_FETCH_B(k0, RB)                                                                                 \
    [[unroll]] for (int r = 0; r < FZ_LB4; ++r) {                                                                     \
      const int e = tid + r * threads;                                                                     \
      const int nn = (e % (FZ_BN / 4)) * 4, kk = e / (FZ_BN / 4);                                          \
      const fz_idx gn = col0 + nn, gk = (k0) + kk;                                                         \
      RB[r] = (e < FZ_BK * (FZ_BN / 4) && gn < FZ_N && gk < FZ_K) ? FZ_LOAD_B4(bbase + gk * FZ_B_SK + gn) : vec4(0.0f); \
    }
#define FZ_STAGE_B(p, RB)                                                                                  \
    [[unroll]] for (int r = 0; r < FZ_LB4; ++r) {                                                                     \
      const int e = tid + r * threads;                                                                     \
      const int nn = (e % (FZ_BN / 4)) * 4, kk = e / (FZ_BN / 4);                                          \
      if (e < FZ_BK * (FZ_BN / 4)) FZ_STORE_B4((p) * FZ_BK * FZ_BP + kk * FZ_BP + nn, RB[r]);              \
    }
#else
#define FZ_FETCH_B(k0, RB)                                                                                 \
    [[unroll]] for (int r = 0; r < FZ_LB; ++r) {                                                                      \
      const int e = tid + r * threads;                                                                     \
      const int nn = n_fast ? e % FZ_BN : e / FZ_BK, kk = n_fast ? e / FZ_BN : e % FZ_BK;                  \
      const fz_idx gn = col0 + nn, gk = (k0) + kk;                                                         \
      RB[r] = (e < FZ_BK * FZ_BN && gn < FZ_N && gk < FZ_K) ? FZ_LOAD_B(bbase + gk * FZ_B_SK + gn * FZ_B_SN) : 0.0f; \
    }
#define FZ_STAGE_B(p, RB)                                                                                  \
    [[unroll]] for (int r = 0; r < FZ_LB; ++r) {                                                                      \
      const int e = tid + r * threads;                                                                     \
      const int nn = n_fast ? e % FZ_BN : e / FZ_BK, kk = n_fast ? e / FZ_BN : e % FZ_BK;                  \
      if (e < FZ_BK * FZ_BN) FZ_BS_SET((p) * FZ_BK * FZ_BP + kk * FZ_BP + nn, RB[r]);                       \
    }
#endif
#define FZ_FETCH(k0, RA, RB) FZ_FETCH_A(k0, RA) FZ_FETCH_B(k0, RB)
#define FZ_STAGE(p, RA, RB) FZ_STAGE_A(p, RA) FZ_STAGE_B(p, RB)
    // One K slice (BK deep) of the tile from shared copy p into the accumulators.
#if FZ_BLOCKED
#define FZ_COMPUTE(p)                                                                                      \
    {                                                                                                      \
      const int as0 = (p) * FZ_BK * FZ_AP, bs0 = (p) * FZ_BK * FZ_BP;                                      \
      [[unroll]] for (int kk = 0; kk < FZ_BK; ++kk) {                                                      \
        vec4 a[FZ_GM], b[FZ_GN];                                                                           \
        [[unroll]] for (int g = 0; g < FZ_GM; ++g) a[g] = fz_as[(as0 + kk * FZ_AP + g * (FZ_BM / FZ_GM) + ty * 4) >> 2]; \
        [[unroll]] for (int g = 0; g < FZ_GN; ++g) b[g] = fz_bs[(bs0 + kk * FZ_BP + g * (FZ_BN / FZ_GN) + tx * 4) >> 2]; \
        [[unroll]] for (int i = 0; i < FZ_TM; ++i)                                                         \
          [[unroll]] for (int j = 0; j < FZ_TN; ++j) fz_acc[i * FZ_TN + j] = fma(a[i >> 2][i & 3], b[j >> 2][j & 3], fz_acc[i * FZ_TN + j]); \
      }                                                                                                    \
    }
#else
#define FZ_COMPUTE(p)                                                                                      \
    {                                                                                                      \
      const int as0 = (p) * FZ_BK * FZ_AP, bs0 = (p) * FZ_BK * FZ_BP;                                      \
      [[unroll]] for (int kk = 0; kk < FZ_BK; ++kk) {                                                      \
        float a[FZ_TM], b[FZ_TN];                                                                          \
        [[unroll]] for (int i = 0; i < FZ_TM; ++i) a[i] = fz_as[as0 + kk * FZ_AP + FZ_ROW(i)];             \
        [[unroll]] for (int j = 0; j < FZ_TN; ++j) b[j] = fz_bs[bs0 + kk * FZ_BP + FZ_COL(j)];             \
        [[unroll]] for (int i = 0; i < FZ_TM; ++i)                                                         \
          [[unroll]] for (int j = 0; j < FZ_TN; ++j) fz_acc[i * FZ_TN + j] = fma(a[i], b[j], fz_acc[i * FZ_TN + j]); \
      }                                                                                                    \
    }
#endif
#if FZ_PREFETCH == 2
    // Two K slices in flight (the default; FUSOR_VK_GEMM_PREFETCH=1 for one): slice s + 2 is fetched into one
    // register set while slice s + 1 waits in the other, so a fetch has two steps of FMAs to
    // arrive in, not one (the tiles of GPT-2's M = 64 layers run one workgroup per SM and wait
    // on DRAM otherwise). Steps go in pairs so each set's index is a constant; the slices are
    // added in the same order as below, so results are the same bits.
    FZ_FETCH(kbeg, ra, rb)
    FZ_STAGE(0, ra, rb)
    if (kbeg + FZ_BK < kend) {
      FZ_FETCH(kbeg + FZ_BK, ra2, rb2)
    }
    memoryBarrierShared();
    barrier();
    for (fz_idx k0 = kbeg; k0 < kend; k0 += 2 * FZ_BK) {
      // Even step: shared 0 holds slice k0, set 2 slice k0 + BK; set 1 (ra/rb) is free.
      if (k0 + 2 * FZ_BK < kend) {
        FZ_FETCH(k0 + 2 * FZ_BK, ra, rb)
      }
      FZ_COMPUTE(0)
      if (k0 + FZ_BK < kend) {
        FZ_STAGE(1, ra2, rb2)
      }
      memoryBarrierShared();
      barrier();
      if (k0 + FZ_BK < kend) {  // uniform
        // Odd step: shared 1 holds slice k0 + BK, set 1 slice k0 + 2 BK; set 2 is free.
        if (k0 + 3 * FZ_BK < kend) {
          FZ_FETCH(k0 + 3 * FZ_BK, ra2, rb2)
        }
        FZ_COMPUTE(1)
        if (k0 + 2 * FZ_BK < kend) {
          FZ_STAGE(0, ra, rb)
        }
        memoryBarrierShared();
        barrier();
      }
    }
#else
    FZ_FETCH(kbeg, ra, rb)
    FZ_STAGE(0, ra, rb)
    memoryBarrierShared();
    barrier();
    int p = 0;
    for (fz_idx k0 = kbeg; k0 < kend; k0 += FZ_BK) {
      const bool more = k0 + FZ_BK < kend;  // uniform
      if (more) {
        FZ_FETCH(k0 + FZ_BK, ra, rb)
      }
      FZ_COMPUTE(p)
      // The other copy was last read before the previous step's barrier.
      if (more) {
        FZ_STAGE(1 - p, ra, rb)
      }
      memoryBarrierShared();
      barrier();
      p = 1 - p;
    }
#endif
#undef FZ_COMPUTE
#undef FZ_FETCH
#undef FZ_STAGE
#undef FZ_FETCH_A
#undef FZ_FETCH_B
#undef FZ_STAGE_A
#undef FZ_STAGE_B
#if FZ_SPLIT_K > 1
    {
      // Partial tile out (thread-interleaved: coalesced), then elect the last arrival.
      const fz_idx part = w * (FZ_BM * FZ_BN);
      [[unroll]] for (int i = 0; i < FZ_TM * FZ_TN; ++i) fz_split.part[part + i * threads + tid] = fz_acc[i];
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
      [[unroll]] for (int i = 0; i < FZ_TM * FZ_TN; ++i) fz_acc[i] = fz_split.part[first + i * threads + tid];
      for (int s = 1; s < FZ_SPLIT_K; ++s) {
        const fz_idx base = first + fz_idx(s) * (FZ_BM * FZ_BN) + tid;
        [[unroll]] for (int i = 0; i < FZ_TM * FZ_TN; ++i) {
          precise float sum = fz_acc[i] + fz_split.part[base + i * threads];
          fz_acc[i] = sum;
        }
      }
      if (tid == 0) fz_split.cnt[t] = 0u;  // ready for the next replay
    }
#endif
    // No `continue` here: spirv-opt's unroller leaves a loop with one unrolled, and an fz_acc
    // index that is not constant sends the whole accumulator array to local memory.
    [[unroll]] for (int i = 0; i < FZ_TM; ++i) {
      const fz_idx m = row0 + FZ_ROW(i);
      [[unroll]] for (int j = 0; j < FZ_TN; ++j) {
        const fz_idx n = col0 + FZ_COL(j);
        if (m < FZ_M && n < FZ_N) FZ_EPILOGUE(fz_acc[i * FZ_TN + j], (batch * FZ_M + m) * FZ_N + n);
      }
    }
  }
}
#elif FZ_SKINNY == 1
// GEMV-like (M <= 8): a workgroup of FZ_SK_THREADS owns FZ_SK_COLS columns of one batch; its
// FZ_SK_THREADS / FZ_SK_COLS groups of threads stride over K (k = kg, kg + KG, ...) so B's rows
// are read in whole 32-byte sectors while N / FZ_SK_COLS big workgroups keep enough loads in
// flight to run at the memory's speed. The partial sums meet in shared memory and are added
// by a fixed tree (same order every run); group 0 runs the epilogue.
#define FZ_SK_KG (FZ_SK_THREADS / FZ_SK_COLS)
#define FZ_SK_M int(FZ_M)  // FZ_M is an int64 literal in 64-bit index mode
#ifndef FZ_SK_UNROLL
#define FZ_SK_UNROLL 1
#endif
#ifndef FZ_SK_RADIX
#define FZ_SK_RADIX 2
#endif
shared float fz_part[FZ_SK_KG * FZ_SK_M * (FZ_SK_COLS + 1)];
void main() {
  const int tid = int(gl_LocalInvocationID.x), lane = tid % FZ_SK_COLS, kg = tid / FZ_SK_COLS;
  const fz_idx tiles_n = (fz_idx(FZ_N) + FZ_SK_COLS - 1) / FZ_SK_COLS;
  const fz_idx tiles = tiles_n * FZ_BATCH;
  for (fz_idx t = fz_idx(fz_group_id()); t < tiles; t += fz_idx(fz_num_groups())) {
    const fz_idx batch = t / tiles_n, n = (t % tiles_n) * FZ_SK_COLS + lane;
    const fz_idx abase = fz_a_base(batch), bbase = fz_b_base(batch);
    float acc[FZ_SK_M];
    for (int m = 0; m < FZ_SK_M; ++m) acc[m] = 0.0f;
    if (n < FZ_N) {
      // FZ_SK_UNROLL rounds of the K loop at a time: their B loads are issued together (more
      // loads in flight per thread), then the FMAs run in the same ascending k (same bits).
      for (fz_idx k0 = fz_idx(kg); k0 < FZ_K; k0 += FZ_SK_KG * FZ_SK_UNROLL) {
        float bu[FZ_SK_UNROLL];
        [[unroll]] for (int u = 0; u < FZ_SK_UNROLL; ++u) {
          const fz_idx k = k0 + fz_idx(u * FZ_SK_KG);
          bu[u] = 0.0f;
          if (k < FZ_K) bu[u] = FZ_LOAD_B(bbase + k * FZ_B_SK + n * FZ_B_SN);  // an if: no load past K
        }
        [[unroll]] for (int u = 0; u < FZ_SK_UNROLL; ++u) {
          const fz_idx k = k0 + fz_idx(u * FZ_SK_KG);
          if (k < FZ_K)
            for (int m = 0; m < FZ_SK_M; ++m) acc[m] = fma(FZ_LOAD_A(abase + m * FZ_A_SM + k * FZ_A_SK), bu[u], acc[m]);
        }
      }
    }
    for (int m = 0; m < FZ_SK_M; ++m) fz_part[(kg * FZ_SK_M + m) * (FZ_SK_COLS + 1) + lane] = acc[m];
    memoryBarrierShared();
    barrier();
    // FZ_SK_RADIX 4: four groups' partials a round ((g + g2) + (g3 + g4): three barriers for 64
    // groups, not six; 1.0 us off MLP b1 on the H200, docs/benchmarks.md, twenty-fourth
    // session), a pair in a last round when FZ_SK_KG is no power of 4; 2: pairs (the previous
    // tree). Either is a fixed order: every run gives the same bits.
    int s = FZ_SK_KG;
    for (; FZ_SK_RADIX == 4 && s >= 4;) {
      s /= 4;
      if (kg < s)
        for (int m = 0; m < FZ_SK_M; ++m) {
          const int at = (kg * FZ_SK_M + m) * (FZ_SK_COLS + 1) + lane, q = s * FZ_SK_M * (FZ_SK_COLS + 1);
          fz_part[at] = (fz_part[at] + fz_part[at + q]) + (fz_part[at + 2 * q] + fz_part[at + 3 * q]);
        }
      memoryBarrierShared();
      barrier();
    }
    for (s /= 2; s > 0; s /= 2) {
      if (kg < s)
        for (int m = 0; m < FZ_SK_M; ++m)
          fz_part[(kg * FZ_SK_M + m) * (FZ_SK_COLS + 1) + lane] += fz_part[((kg + s) * FZ_SK_M + m) * (FZ_SK_COLS + 1) + lane];
      memoryBarrierShared();
      barrier();
    }
    if (kg == 0 && n < FZ_N)
      for (int m = 0; m < FZ_SK_M; ++m) FZ_EPILOGUE(fz_part[m * (FZ_SK_COLS + 1) + lane], (batch * FZ_M + m) * FZ_N + n);
    memoryBarrierShared();
    barrier();
  }
}
#else
// Vector GEMV (FZ_SKINNY 2, M <= 8; FUSOR_VK_GEMV=new, the default): work item w = tile *
// FZ_SPLIT_K + slice; a tile is FZ_SK_COLS columns of one batch, a slice FZ_SPLIT_SLICE rows of
// K. Lane l of a workgroup owns columns 4l .. 4l+3 of its tile and reads them as one vec4 per
// k (FZ_B_VEC4: B's N has unit stride and every 4-group is aligned; otherwise 4 scalar loads),
// so each load moves 16 bytes of fp32 (8 of fp16 / bf16); FZ_SK_THREADS / (FZ_SK_COLS / 4)
// groups of lanes stride over the slice's K. Partial sums meet in shared memory and are added
// by a fixed tree. With FZ_SPLIT_K > 1 (few tiles: a 1024-wide layer alone would leave most of
// the GPU idle) the slices' sums go through the tiled path's split-K workspace fz_split and
// the last workgroup to arrive adds them in slice order 0, 1, ... (deterministic), runs the
// epilogue and zeroes the tile's counter for the next replay.
#ifndef FZ_SPLIT_K
#define FZ_SPLIT_K 1
#endif
#ifndef FZ_SPLIT_SLICE
#define FZ_SPLIT_SLICE FZ_K
#endif
#ifndef FZ_B_VEC4
#define FZ_B_VEC4 0
#endif
#define FZ_GV_LANES (FZ_SK_COLS / 4)
#define FZ_GV_KG (FZ_SK_THREADS / FZ_GV_LANES)
#define FZ_SK_M int(FZ_M)  // FZ_M is an int64 literal in 64-bit index mode
#define FZ_GV_MC (FZ_SK_M * FZ_SK_COLS)  // outputs of one tile
shared vec4 fz_part[FZ_GV_KG * FZ_SK_M * FZ_GV_LANES];
#if FZ_SPLIT_K > 1
shared bool fz_split_last;
#endif
void main() {
  const int tid = int(gl_LocalInvocationID.x), lane = tid % FZ_GV_LANES, kg = tid / FZ_GV_LANES;
  const fz_idx tiles_n = (fz_idx(FZ_N) + FZ_SK_COLS - 1) / FZ_SK_COLS;
  const fz_idx tiles = tiles_n * FZ_BATCH;
  for (fz_idx w = fz_idx(fz_group_id()); w < tiles * FZ_SPLIT_K; w += fz_idx(fz_num_groups())) {
    const fz_idx t = w / FZ_SPLIT_K;
    const int slice = int(w - t * FZ_SPLIT_K);
    const fz_idx batch = t / tiles_n, col0 = (t % tiles_n) * FZ_SK_COLS, n = col0 + lane * 4;
    const fz_idx abase = fz_a_base(batch), bbase = fz_b_base(batch);
    const fz_idx kbeg = fz_idx(slice) * FZ_SPLIT_SLICE;
    const fz_idx kend = kbeg + FZ_SPLIT_SLICE < fz_idx(FZ_K) ? kbeg + FZ_SPLIT_SLICE : fz_idx(FZ_K);
    vec4 acc[FZ_SK_M];
    [[unroll]] for (int m = 0; m < FZ_SK_M; ++m) acc[m] = vec4(0.0f);
    if (n < FZ_N) {
      for (fz_idx k = kbeg + kg; k < kend; k += FZ_GV_KG) {
        const fz_idx off = bbase + k * FZ_B_SK + n * FZ_B_SN;
#if FZ_B_VEC4  // N % 4 == 0: the whole 4-group is in range
        const vec4 b = FZ_LOAD_B4(off);
#else
        vec4 b;
        [[unroll]] for (int c = 0; c < 4; ++c) b[c] = n + c < FZ_N ? FZ_LOAD_B(off + c * FZ_B_SN) : 0.0f;
#endif
        [[unroll]] for (int m = 0; m < FZ_SK_M; ++m) acc[m] = fma(vec4(FZ_LOAD_A(abase + m * FZ_A_SM + k * FZ_A_SK)), b, acc[m]);
      }
    }
    [[unroll]] for (int m = 0; m < FZ_SK_M; ++m) fz_part[(kg * FZ_SK_M + m) * FZ_GV_LANES + lane] = acc[m];
    memoryBarrierShared();
    barrier();
    for (int s = FZ_GV_KG / 2; s > 0; s /= 2) {
      if (kg < s)
        for (int m = 0; m < FZ_SK_M; ++m) fz_part[(kg * FZ_SK_M + m) * FZ_GV_LANES + lane] += fz_part[((kg + s) * FZ_SK_M + m) * FZ_GV_LANES + lane];
      memoryBarrierShared();
      barrier();
    }
    // Output i of the tile (row i / COLS, column i % COLS) is component j % 4 of group 0's lane
    // j / 4: every thread of the group takes outputs, so stores are coalesced.
#define FZ_GV_OWN(i) fz_part[((i) / FZ_SK_COLS) * FZ_GV_LANES + ((i) % FZ_SK_COLS) / 4][(i) % 4]
#if FZ_SPLIT_K > 1
    const fz_idx part = w * FZ_GV_MC;
    for (int i = tid; i < FZ_GV_MC; i += FZ_SK_THREADS) fz_split.part[part + i] = FZ_GV_OWN(i);
    memoryBarrierBuffer();
    barrier();
    if (tid == 0) fz_split_last = atomicAdd(fz_split.cnt[t], 1u) == uint(FZ_SPLIT_K - 1);
    memoryBarrierShared();
    barrier();
    if (fz_split_last) {  // uniform: every thread read the same shared flag
      memoryBarrierBuffer();
      const fz_idx first = t * FZ_SPLIT_K * FZ_GV_MC;
      for (int i = tid; i < FZ_GV_MC; i += FZ_SK_THREADS) {
        const fz_idx col = col0 + i % FZ_SK_COLS;
        // Slice order, all read back from the workspace (this group's own slice too: the bits
        // it stored). Unrolled with no select between shared and workspace, so the S loads are
        // independent and overlap; only the adds wait on each other.
        precise float sum = fz_split.part[first + i];
        [[unroll]] for (int s = 1; s < FZ_SPLIT_K; ++s) sum = sum + fz_split.part[first + fz_idx(s) * FZ_GV_MC + i];
        if (col < FZ_N) FZ_EPILOGUE(sum, (batch * FZ_M + i / FZ_SK_COLS) * FZ_N + col);
      }
      if (tid == 0) fz_split.cnt[t] = 0u;  // ready for the next replay
    }
#else
    for (int i = tid; i < FZ_GV_MC; i += FZ_SK_THREADS) {
      const fz_idx col = col0 + i % FZ_SK_COLS;
      if (col < FZ_N) FZ_EPILOGUE(FZ_GV_OWN(i), (batch * FZ_M + i / FZ_SK_COLS) * FZ_N + col);
    }
#endif
#undef FZ_GV_OWN
    memoryBarrierShared();
    barrier();
  }
}
#endif
#ifdef __cplusplus
//")FZ_GLSL"
#endif
