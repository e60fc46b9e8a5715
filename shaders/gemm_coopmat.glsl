#ifdef __cplusplus
R"FZ_GLSL(//"
#endif
// Cooperative-matrix GEMM template (Vulkan backend, fp16 operands, fp32 accumulation):
// C[batch, m, n] = sum_k A[batch, m, k] * B[batch, k, n], each element handed to
// FZ_EPILOGUE(acc, i) exactly as in gemm.glsl (same emitter contract, backends/codegen.h).
//
// Written against GL_NV_cooperative_matrix because Debian 12's glslang 12 knows no
// GL_KHR_cooperative_matrix; on a device with only VK_KHR_cooperative_matrix the validated NV
// module is rewritten to SPV_KHR_cooperative_matrix (backends/vulkan/vk_coopmat.cpp). The
// prelude (vk_dialect.cpp) enables GL_NV_cooperative_matrix, GL_KHR_memory_scope_semantics,
// GL_EXT_shader_explicit_arithmetic_types_float16, GL_KHR_shader_subgroup_basic and
// GL_EXT_control_flow_attributes (the matrix loops are [[unroll]]: the accumulators must stay
// in registers, never in an indexed array).
// bf16 operands never come here: glslang 12 has no bfloat16 type (they take gemm.glsl).
//
// Blocking (all #defines from VulkanDialect::matmul_config): one matrix-unit operation is
// FZ_CM_M x FZ_CM_N x FZ_CM_K (a shape the device lists for f16*f16+f32, subgroup scope). A
// workgroup of FZ_CM_WM x FZ_CM_WN subgroups owns a BM x BN output tile, each subgroup
// FZ_CM_RM x FZ_CM_RN accumulators; K is walked in FZ_CM_BK slices that all threads stage
// into shared memory as float16_t (FZ_LOAD_A/B return float; the operands are fp16 values, so
// float16_t(x) is exact; out-of-range elements are 0). The accumulators then go through
// shared memory (float) so every thread runs the fused epilogue on its elements, coalesced.
// Row strides in shared memory are padded by 16 bytes (fewer bank conflicts; keeps the
// 16-byte alignment matrix loads want). The host sets local size = WM * WN * subgroup size.
layout(local_size_x_id = 0) in;
#define FZ_CM_BM (FZ_CM_WM * FZ_CM_RM * FZ_CM_M)
#define FZ_CM_BN (FZ_CM_WN * FZ_CM_RN * FZ_CM_N)
#define FZ_CM_AS (FZ_CM_BK + 8)
#define FZ_CM_BS (FZ_CM_BN + 8)
#define FZ_CM_CS (FZ_CM_BN + 4)
shared float16_t fz_cm_a[FZ_CM_BM * FZ_CM_AS];  // A slice, row-major: [m * AS + k]
shared float16_t fz_cm_b[FZ_CM_BK * FZ_CM_BS];  // B slice, row-major: [k * BS + n]
shared float fz_cm_c[FZ_CM_BM * FZ_CM_CS];      // accumulator tile: [m * CS + n]

#define FZ_CM_T (FZ_CM_WM * FZ_CM_WN * FZ_CM_SG)  // threads (the host's local size)
#define FZ_CM_LA ((FZ_CM_BM * FZ_CM_BK + FZ_CM_T - 1) / FZ_CM_T)
#define FZ_CM_LB ((FZ_CM_BK * FZ_CM_BN + FZ_CM_T - 1) / FZ_CM_T)

// This thread's share of the K slice at k0, from memory into registers; consecutive threads
// walk the operand's unit-stride direction. Out-of-range elements are 0.
void fz_cm_fetch(fz_idx abase, fz_idx bbase, fz_idx row0, fz_idx col0, fz_idx k0, int tid, out float16_t ra[FZ_CM_LA],
                 out float16_t rb[FZ_CM_LB]) {
  [[unroll]] for (int r = 0; r < FZ_CM_LA; ++r) {
    const int e = tid + r * FZ_CM_T;
    const bool k_fast = FZ_A_SK == 1;
    const int kk = k_fast ? e % FZ_CM_BK : e / FZ_CM_BM, mm = k_fast ? e / FZ_CM_BK : e % FZ_CM_BM;
    const fz_idx gm = row0 + mm, gk = k0 + kk;
    ra[r] = float16_t((e < FZ_CM_BM * FZ_CM_BK && gm < FZ_M && gk < FZ_K) ? FZ_LOAD_A(abase + gm * FZ_A_SM + gk * FZ_A_SK) : 0.0f);
  }
  [[unroll]] for (int r = 0; r < FZ_CM_LB; ++r) {
    const int e = tid + r * FZ_CM_T;
    const bool n_fast = FZ_B_SN == 1 || FZ_B_SK != 1;
    const int nn = n_fast ? e % FZ_CM_BN : e / FZ_CM_BK, kk = n_fast ? e / FZ_CM_BN : e % FZ_CM_BK;
    const fz_idx gn = col0 + nn, gk = k0 + kk;
    rb[r] = float16_t((e < FZ_CM_BK * FZ_CM_BN && gn < FZ_N && gk < FZ_K) ? FZ_LOAD_B(bbase + gk * FZ_B_SK + gn * FZ_B_SN) : 0.0f);
  }
}

void main() {
  const int tid = int(gl_LocalInvocationID.x);
  const int wm = int(gl_SubgroupID) / FZ_CM_WN, wn = int(gl_SubgroupID) % FZ_CM_WN;
  const fz_idx tiles_m = (fz_idx(FZ_M) + FZ_CM_BM - 1) / FZ_CM_BM;
  const fz_idx tiles_n = (fz_idx(FZ_N) + FZ_CM_BN - 1) / FZ_CM_BN;
  const fz_idx tiles = tiles_m * tiles_n * FZ_BATCH;
  // Grid-stride over tiles: the loop bound is uniform, so the barriers below are too.
  for (fz_idx t = fz_idx(fz_group_id()); t < tiles; t += fz_idx(fz_num_groups())) {
    const fz_idx batch = t / (tiles_m * tiles_n);
    const fz_idx rem = t - batch * (tiles_m * tiles_n);
    const fz_idx row0 = (rem / tiles_n) * FZ_CM_BM, col0 = (rem % tiles_n) * FZ_CM_BN;
    const fz_idx abase = fz_a_base(batch), bbase = fz_b_base(batch);
    fcoopmatNV<32, gl_ScopeSubgroup, FZ_CM_M, FZ_CM_N> acc[FZ_CM_RM][FZ_CM_RN];
    [[unroll]] for (int i = 0; i < FZ_CM_RM; ++i)
      [[unroll]] for (int j = 0; j < FZ_CM_RN; ++j) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, FZ_CM_M, FZ_CM_N>(0.0);
    // Software pipelining: the next slice's loads are issued before this slice's matrix
    // operations, so their latency overlaps the math instead of following it.
    float16_t ra[FZ_CM_LA], rb[FZ_CM_LB];
    fz_cm_fetch(abase, bbase, row0, col0, fz_idx(0), tid, ra, rb);
    for (fz_idx k0 = fz_idx(0); k0 < FZ_K; k0 += FZ_CM_BK) {
      [[unroll]] for (int r = 0; r < FZ_CM_LA; ++r) {
        const int e = tid + r * FZ_CM_T;
        const bool k_fast = FZ_A_SK == 1;
        const int kk = k_fast ? e % FZ_CM_BK : e / FZ_CM_BM, mm = k_fast ? e / FZ_CM_BK : e % FZ_CM_BM;
        if (e < FZ_CM_BM * FZ_CM_BK) fz_cm_a[mm * FZ_CM_AS + kk] = ra[r];
      }
      [[unroll]] for (int r = 0; r < FZ_CM_LB; ++r) {
        const int e = tid + r * FZ_CM_T;
        const bool n_fast = FZ_B_SN == 1 || FZ_B_SK != 1;
        const int nn = n_fast ? e % FZ_CM_BN : e / FZ_CM_BK, kk = n_fast ? e / FZ_CM_BN : e % FZ_CM_BK;
        if (e < FZ_CM_BK * FZ_CM_BN) fz_cm_b[kk * FZ_CM_BS + nn] = rb[r];
      }
      memoryBarrierShared();
      barrier();
      if (k0 + FZ_CM_BK < FZ_K) fz_cm_fetch(abase, bbase, row0, col0, k0 + FZ_CM_BK, tid, ra, rb);
      [[unroll]] for (int kk = 0; kk < FZ_CM_BK; kk += FZ_CM_K) {
        fcoopmatNV<16, gl_ScopeSubgroup, FZ_CM_M, FZ_CM_K> a[FZ_CM_RM];
        fcoopmatNV<16, gl_ScopeSubgroup, FZ_CM_K, FZ_CM_N> b[FZ_CM_RN];
        [[unroll]] for (int i = 0; i < FZ_CM_RM; ++i)
          coopMatLoadNV(a[i], fz_cm_a, uint(((wm * FZ_CM_RM + i) * FZ_CM_M) * FZ_CM_AS + kk), uint(FZ_CM_AS), false);
        [[unroll]] for (int j = 0; j < FZ_CM_RN; ++j)
          coopMatLoadNV(b[j], fz_cm_b, uint(kk * FZ_CM_BS + (wn * FZ_CM_RN + j) * FZ_CM_N), uint(FZ_CM_BS), false);
        [[unroll]] for (int i = 0; i < FZ_CM_RM; ++i)
          [[unroll]] for (int j = 0; j < FZ_CM_RN; ++j) acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);
      }
      memoryBarrierShared();
      barrier();
    }
    [[unroll]] for (int i = 0; i < FZ_CM_RM; ++i)
      [[unroll]] for (int j = 0; j < FZ_CM_RN; ++j)
        coopMatStoreNV(acc[i][j], fz_cm_c, uint(((wm * FZ_CM_RM + i) * FZ_CM_M) * FZ_CM_CS + (wn * FZ_CM_RN + j) * FZ_CM_N),
                       uint(FZ_CM_CS), false);
    memoryBarrierShared();
    barrier();
    for (int e = tid; e < FZ_CM_BM * FZ_CM_BN; e += FZ_CM_T) {
      const int mm = e / FZ_CM_BN, nn = e % FZ_CM_BN;
      const fz_idx m = row0 + mm, n = col0 + nn;
      if (m < FZ_M && n < FZ_N) FZ_EPILOGUE(fz_cm_c[mm * FZ_CM_CS + nn], (batch * FZ_M + m) * FZ_N + n);
    }
    memoryBarrierShared();
    barrier();
  }
}
#ifdef __cplusplus
//")FZ_GLSL"
#endif
