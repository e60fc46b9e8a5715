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
// FZ_SKINNY (the emitter's matmul_config defines it, 1 for M <= 8): the GEMV-like path at the
// end of this file instead.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int FZ_BM = 64;
layout(constant_id = 2) const int FZ_BN = 64;
layout(constant_id = 3) const int FZ_BK = 16;
layout(constant_id = 4) const int FZ_TM = 4;
layout(constant_id = 5) const int FZ_TN = 4;

#if !FZ_SKINNY
shared float fz_as[FZ_BK * FZ_BM];  // A slice, k-major: fz_as[k * BM + m]
shared float fz_bs[FZ_BK * FZ_BN];  // B slice, k-major: fz_bs[k * BN + n]

void main() {
  const int threads = (FZ_BM / FZ_TM) * (FZ_BN / FZ_TN);
  const int tid = int(gl_LocalInvocationID.x);
  const int tx = tid % (FZ_BN / FZ_TN), ty = tid / (FZ_BN / FZ_TN);
  const fz_idx tiles_m = (fz_idx(FZ_M) + FZ_BM - 1) / FZ_BM;
  const fz_idx tiles_n = (fz_idx(FZ_N) + FZ_BN - 1) / FZ_BN;
  const fz_idx tiles = tiles_m * tiles_n * FZ_BATCH;
  // Grid-stride over tiles: the loop bound is uniform, so the barriers below are too.
  for (fz_idx t = fz_idx(fz_group_id()); t < tiles; t += fz_idx(fz_num_groups())) {
    const fz_idx batch = t / (tiles_m * tiles_n);
    const fz_idx rem = t - batch * (tiles_m * tiles_n);
    const fz_idx row0 = (rem / tiles_n) * FZ_BM, col0 = (rem % tiles_n) * FZ_BN;
    const fz_idx abase = fz_a_base(batch), bbase = fz_b_base(batch);
    float fz_acc[FZ_TM * FZ_TN];
    for (int i = 0; i < FZ_TM * FZ_TN; ++i) fz_acc[i] = 0.0f;
    for (fz_idx k0 = fz_idx(0); k0 < FZ_K; k0 += FZ_BK) {
      // Stage the slices; consecutive threads walk the operand's unit-stride direction.
      for (int e = tid; e < FZ_BK * FZ_BM; e += threads) {
        const bool k_fast = FZ_A_SK == 1;
        const int kk = k_fast ? e % FZ_BK : e / FZ_BM, mm = k_fast ? e / FZ_BK : e % FZ_BM;
        const fz_idx gm = row0 + mm, gk = k0 + kk;
        fz_as[kk * FZ_BM + mm] = (gm < FZ_M && gk < FZ_K) ? FZ_LOAD_A(abase + gm * FZ_A_SM + gk * FZ_A_SK) : 0.0f;
      }
      for (int e = tid; e < FZ_BK * FZ_BN; e += threads) {
        const bool n_fast = FZ_B_SN == 1 || FZ_B_SK != 1;
        const int nn = n_fast ? e % FZ_BN : e / FZ_BK, kk = n_fast ? e / FZ_BN : e % FZ_BK;
        const fz_idx gn = col0 + nn, gk = k0 + kk;
        fz_bs[kk * FZ_BN + nn] = (gn < FZ_N && gk < FZ_K) ? FZ_LOAD_B(bbase + gk * FZ_B_SK + gn * FZ_B_SN) : 0.0f;
      }
      memoryBarrierShared();
      barrier();
      for (int kk = 0; kk < FZ_BK; ++kk) {
        float a[FZ_TM], b[FZ_TN];
        for (int i = 0; i < FZ_TM; ++i) a[i] = fz_as[kk * FZ_BM + ty + i * (FZ_BM / FZ_TM)];
        for (int j = 0; j < FZ_TN; ++j) b[j] = fz_bs[kk * FZ_BN + tx + j * (FZ_BN / FZ_TN)];
        for (int i = 0; i < FZ_TM; ++i)
          for (int j = 0; j < FZ_TN; ++j) fz_acc[i * FZ_TN + j] = fma(a[i], b[j], fz_acc[i * FZ_TN + j]);
      }
      memoryBarrierShared();
      barrier();
    }
    for (int i = 0; i < FZ_TM; ++i) {
      const fz_idx m = row0 + ty + i * (FZ_BM / FZ_TM);
      if (m >= FZ_M) continue;
      for (int j = 0; j < FZ_TN; ++j) {
        const fz_idx n = col0 + tx + j * (FZ_BN / FZ_TN);
        if (n < FZ_N) FZ_EPILOGUE(fz_acc[i * FZ_TN + j], (batch * FZ_M + m) * FZ_N + n);
      }
    }
  }
}
#else
// GEMV-like (M <= 8): a workgroup of FZ_SK_THREADS owns FZ_SK_COLS columns of one batch; its
// FZ_SK_THREADS / FZ_SK_COLS groups of threads stride over K (k = kg, kg + KG, ...) so B's rows
// are read in whole 32-byte sectors while N / FZ_SK_COLS big workgroups keep enough loads in
// flight to run at the memory's speed. The partial sums meet in shared memory and are added
// by a fixed tree (same order every run); group 0 runs the epilogue.
#define FZ_SK_KG (FZ_SK_THREADS / FZ_SK_COLS)
#define FZ_SK_M int(FZ_M)  // FZ_M is an int64 literal in 64-bit index mode
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
      for (fz_idx k = fz_idx(kg); k < FZ_K; k += FZ_SK_KG) {
        const float b = FZ_LOAD_B(bbase + k * FZ_B_SK + n * FZ_B_SN);
        for (int m = 0; m < FZ_SK_M; ++m) acc[m] = fma(FZ_LOAD_A(abase + m * FZ_A_SM + k * FZ_A_SK), b, acc[m]);
      }
    }
    for (int m = 0; m < FZ_SK_M; ++m) fz_part[(kg * FZ_SK_M + m) * (FZ_SK_COLS + 1) + lane] = acc[m];
    memoryBarrierShared();
    barrier();
    for (int s = FZ_SK_KG / 2; s > 0; s /= 2) {
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
#endif
#ifdef __cplusplus
//")FZ_GLSL"
#endif
