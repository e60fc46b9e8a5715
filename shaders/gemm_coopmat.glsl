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
// bf16 operands (FZ_CM_BF16): glslang 12 has no bfloat16 type, so the module is written with
// fp16 matrices and coopmat_nv_to_khr retypes A's and B's components to bf16 (SPV_KHR_bfloat16).
// Their halves are only ever moved as bits (vector staging, required), never converted.
//
// Blocking (all #defines from VulkanDialect::matmul_config): one matrix-unit operation is
// FZ_CM_M x FZ_CM_N x FZ_CM_K (a shape the device lists for f16*f16+f32, subgroup scope). A
// workgroup of FZ_CM_WM x FZ_CM_WN subgroups owns a BM x BN output tile, each subgroup
// FZ_CM_RM x FZ_CM_RN accumulators; K is walked in FZ_CM_BK slices that all threads stage
// into shared memory as fp16 (FZ_LOAD_A/B return float; the operands are fp16 values, so
// float16_t(x) is exact; out-of-range elements are 0). The accumulators then go through
// shared memory (float) so every thread runs the fused epilogue on its elements, coalesced.
// The host sets local size = WM * WN * subgroup size.
// Vector staging loads (FZ_CM_VA / FZ_CM_VB = 2, 4 or 8, with FZ_LOAD_AV / FZ_LOAD_BV(off)
// returning that many packed halves as uint / uvec2 / uvec4; the dialect defines them when the
// operand's unit-stride extent, other strides and offset are multiples of the width): a thread
// stages a group of consecutive halves with one load and one shared store (the slice layouts
// below); otherwise scalar loads through the view's strides (FZ_LOAD_A / B).
// Direct fragments (FZ_CM_DIRECT; the host defines it where both operands are read 8 halves at
// a time (FZ_CM_VA == FZ_CM_VB == 8) and M, N, K are multiples of the matrix shape, with
// FZ_CM_ABUF / FZ_CM_BBUF, the operands' uvec4 arrays, and FZ_CM_AOFF / FZ_CM_BOFF, their
// binding deltas in halves): each subgroup loads its A and B fragments from the buffers with
// matrix loads, no shared slices and no barriers in the K loop; two sets of fragments, the next
// K slice loading while this one multiplies. The multiply-adds are the staged path's, in the
// same order (same bits). A fragment's rows (columns) are all in range or all out, and an
// out-of-range one is zero; every fragment starts at a multiple of 8 halves (16 bytes, as
// matrix loads from memory need) and its rows or columns are a multiple of 8 halves apart.
// Split-K (FZ_SPLIT_K > 1, FZ_SPLIT_SLICE a multiple of FZ_CM_BK): as gemm.glsl's, work item
// w = tile * FZ_SPLIT_K + slice covers K range [slice * FZ_SPLIT_SLICE, +FZ_SPLIT_SLICE), its
// fp32 partial tile goes to the workspace fz_split.part and bumps the tile's counter
// fz_split.cnt; the last to arrive adds the partials in slice order 0, 1, ... (deterministic),
// runs FZ_EPILOGUE once and zeroes the counter for the next replay. The barriers and the
// counter's atomics are written with explicit scopes and semantics (this module uses the
// Vulkan memory model; see the comment at the split below).
layout(local_size_x_id = 0) in;
#define FZ_CM_BM (FZ_CM_WM * FZ_CM_RM * FZ_CM_M)
#define FZ_CM_BN (FZ_CM_WN * FZ_CM_RN * FZ_CM_N)
#define FZ_CM_CS (FZ_CM_BN + 4)
#ifndef FZ_SPLIT_K
#define FZ_SPLIT_K 1
#endif
#ifndef FZ_SPLIT_SLICE
#define FZ_SPLIT_SLICE FZ_K
#endif
#ifndef FZ_CM_VA
#define FZ_CM_VA 1
#endif
#ifndef FZ_CM_VB
#define FZ_CM_VB 1
#endif
#ifdef FZ_CM_BF16
#if FZ_CM_VA < 2 || FZ_CM_VB < 2
#error "bf16 operands are staged as packed bits only (FZ_CM_VA and FZ_CM_VB >= 2)"
#endif
#endif
#ifdef FZ_CM_KB_SPEC
// B's rows as a specialization constant (default FZ_CM_K): A (M x K) and B (K x N) are then
// distinct SPIR-V types even for a square shape (the only bf16 one listed is 16x16x16; fp16's
// 16x16x16 on a KHR device), so the KHR rewrite can give each its Use (MatrixA / MatrixB).
layout(constant_id = 64) const int FZ_CM_KB = FZ_CM_K;
#else
#define FZ_CM_KB FZ_CM_K
#endif
// A staged group in registers: one half (scalar loads), or 2 / 4 / 8 halves packed in a
// uint / uvec2 / uvec4 (one 4 / 8 / 16-byte vector load).
#if FZ_CM_VA == 8
#define FZ_CM_RA uvec4
#elif FZ_CM_VA == 4
#define FZ_CM_RA uvec2
#elif FZ_CM_VA == 2
#define FZ_CM_RA uint
#else
#define FZ_CM_RA float16_t
#endif
#if FZ_CM_VB == 8
#define FZ_CM_RB uvec4
#elif FZ_CM_VB == 4
#define FZ_CM_RB uvec2
#elif FZ_CM_VB == 2
#define FZ_CM_RB uint
#else
#define FZ_CM_RB float16_t
#endif
// Shared slices. A staged group stays whole in shared memory: the slice is laid out along the
// group's direction (the host defines FZ_CM_A_COL when A's groups run along m, FZ_CM_B_COL when
// B's run along k) in elements of the register type, so a thread stages a group with one
// 4 / 8 / 16-byte store (16-bit stores one half at a time were 8 per uvec4, with bank
// conflicts), and the matrix loads read that layout (column-major where _COL). Scalar staging
// keeps row-major float16_t slices. Offsets below are in halves ("h"); an array index is
// h / VA. Each leading dimension is padded by 8 halves (fewer bank conflicts; keeps the
// 16-byte alignment matrix loads want, and every group's start a multiple of its width).
#ifdef FZ_CM_A_COL
#define FZ_CM_ALD (FZ_CM_BM + 8)  // A slice [k][m]
#define FZ_CM_AH(m, k) ((k) * FZ_CM_ALD + (m))
#define FZ_CM_ACOLMAJOR true
#define FZ_CM_ASZ (FZ_CM_BK * FZ_CM_ALD)
#else
#define FZ_CM_ALD (FZ_CM_BK + 8)  // A slice [m][k]
#define FZ_CM_AH(m, k) ((m) * FZ_CM_ALD + (k))
#define FZ_CM_ACOLMAJOR false
#define FZ_CM_ASZ (FZ_CM_BM * FZ_CM_ALD)
#endif
#ifdef FZ_CM_B_COL
#define FZ_CM_BLD (FZ_CM_BK + 8)  // B slice [n][k]
#define FZ_CM_BH(k, n) ((n) * FZ_CM_BLD + (k))
#define FZ_CM_BCOLMAJOR true
#define FZ_CM_BSZ (FZ_CM_BN * FZ_CM_BLD)
#else
#define FZ_CM_BLD (FZ_CM_BN + 8)  // B slice [k][n]
#define FZ_CM_BH(k, n) ((k) * FZ_CM_BLD + (n))
#define FZ_CM_BCOLMAJOR false
#define FZ_CM_BSZ (FZ_CM_BK * FZ_CM_BLD)
#endif
shared FZ_CM_RA fz_cm_a[FZ_CM_ASZ / FZ_CM_VA];
shared FZ_CM_RB fz_cm_b[FZ_CM_BSZ / FZ_CM_VB];
shared float fz_cm_c[FZ_CM_BM * FZ_CM_CS];  // accumulator tile: [m * CS + n]

// Half h of a packed group (the lower address in the low bits: little-endian).
float16_t fz_cm_half(uint v, int h) { return unpackFloat2x16(v)[h & 1]; }
float16_t fz_cm_half(uvec2 v, int h) { return unpackFloat2x16(v[(h >> 1) & 1])[h & 1]; }
float16_t fz_cm_half(uvec4 v, int h) { return unpackFloat2x16(v[(h >> 1) & 3])[h & 1]; }
float16_t fz_cm_half(float16_t v, int h) { return v; }

#define FZ_CM_T (FZ_CM_WM * FZ_CM_WN * FZ_CM_SG)  // threads (the host's local size)
#define FZ_CM_GA (FZ_CM_BM * FZ_CM_BK / FZ_CM_VA)  // groups in an A slice
#define FZ_CM_GB (FZ_CM_BK * FZ_CM_BN / FZ_CM_VB)  // groups in a B slice
#define FZ_CM_LA ((FZ_CM_GA + FZ_CM_T - 1) / FZ_CM_T)
#define FZ_CM_LB ((FZ_CM_GB + FZ_CM_T - 1) / FZ_CM_T)
#define FZ_CM_PE ((FZ_CM_BM * FZ_CM_BN + FZ_CM_T - 1) / FZ_CM_T)  // tile elements per thread
// Split-K's "this work item arrived last" flag lives in row 0's padding of fz_cm_c (element
// FZ_CM_BN: no matrix store or epilogue touches the padding), not in a shared variable of its
// own: the matrix loads and stores need 16-byte aligned shared pointers (VUID-RuntimeSpirv-
// OpCooperativeMatrixLoadNV-06324), which the driver's layout of fz_cm_a / b / c keeps only
// while every shared variable is a multiple of 16 bytes. A 4-byte `shared bool` here (the
// first split-K version) can shift the matrices off 16 bytes wherever the driver places it
// first -- garbage and NaN from every matrix load and store of a split kernel only, which is
// what the H200 showed (docs/benchmarks.md, third session).
#define FZ_CM_LAST fz_cm_c[FZ_CM_BN]

#ifdef FZ_CM_EMULATE
// Test hook (FUSOR_VK_COOPMAT=emulate, vk_coopmat.h): no matrix units. Each thread keeps fp32
// sums for tile elements e = tid + i * T (row-major BM x BN) and adds the products of the
// staged fp16 slices itself; everything outside the matrix operations is the real template.
#define FZ_CM_EL ((FZ_CM_BM * FZ_CM_BN + FZ_CM_T - 1) / FZ_CM_T)
#ifdef FZ_CM_BF16  // bf16 bits: the float with those 16 high bits
uint fz_cm_bits(uint v, int h) { return (v >> (16 * (h & 1))) & 0xffffu; }
uint fz_cm_bits(uvec2 v, int h) { return fz_cm_bits(v[(h >> 1) & 1], h); }
uint fz_cm_bits(uvec4 v, int h) { return fz_cm_bits(v[(h >> 1) & 3], h); }
float fz_cm_a_half(int h) { return uintBitsToFloat(fz_cm_bits(fz_cm_a[h / FZ_CM_VA], h % FZ_CM_VA) << 16); }
float fz_cm_b_half(int h) { return uintBitsToFloat(fz_cm_bits(fz_cm_b[h / FZ_CM_VB], h % FZ_CM_VB) << 16); }
#else
float fz_cm_a_half(int h) { return float(fz_cm_half(fz_cm_a[h / FZ_CM_VA], h % FZ_CM_VA)); }
float fz_cm_b_half(int h) { return float(fz_cm_half(fz_cm_b[h / FZ_CM_VB], h % FZ_CM_VB)); }
#endif
void fz_cm_emulate_step(int tid, inout float acc[FZ_CM_EL]) {
  for (int i = 0; i < FZ_CM_EL; ++i) {
    const int e = tid + i * FZ_CM_T;
    if (e >= FZ_CM_BM * FZ_CM_BN) continue;
    const int mm = e / FZ_CM_BN, nn = e % FZ_CM_BN;
    // lavapipe ends loops after 65535 iterations per invocation in all (EL x BK per step: K =
    // 4096 reaches it with 64 threads); unrolling this loop made lavapipe's compile take
    // minutes, so the emulation keeps K below that (tests/test_vulkan_coopmat_split.cpp).
    for (int kk = 0; kk < FZ_CM_BK; ++kk)
      acc[i] += fz_cm_a_half(FZ_CM_AH(mm, kk)) * fz_cm_b_half(FZ_CM_BH(kk, nn));
  }
}
#define FZ_CM_COMPUTE fz_cm_emulate_step(tid, acc);
#else
// The matrix-unit operations (NV cooperative matrices): element offsets and strides in units
// of the shared arrays' element type.
#define FZ_CM_ACC fcoopmatNV<32, gl_ScopeSubgroup, FZ_CM_M, FZ_CM_N>
#define FZ_CM_MA fcoopmatNV<16, gl_ScopeSubgroup, FZ_CM_M, FZ_CM_K>
#define FZ_CM_MB fcoopmatNV<16, gl_ScopeSubgroup, FZ_CM_KB, FZ_CM_N>
#define FZ_CM_ZERO FZ_CM_ACC(0.0)
#define FZ_CM_STORE(m, e, s) coopMatStoreNV(m, fz_cm_c, e, s, false)
#define FZ_CM_COMPUTE                                                                                              \
  [[unroll]] for (int kk = 0; kk < FZ_CM_BK; kk += FZ_CM_K) {                                                      \
    FZ_CM_MA a[FZ_CM_RM];                                                                                          \
    FZ_CM_MB b[FZ_CM_RN];                                                                                          \
    [[unroll]] for (int i = 0; i < FZ_CM_RM; ++i)                                                                  \
      coopMatLoadNV(a[i], fz_cm_a, uint(FZ_CM_AH((wm * FZ_CM_RM + i) * FZ_CM_M, kk) / FZ_CM_VA), \
                    uint(FZ_CM_ALD / FZ_CM_VA), FZ_CM_ACOLMAJOR);                                                  \
    [[unroll]] for (int j = 0; j < FZ_CM_RN; ++j)                                                                  \
      coopMatLoadNV(b[j], fz_cm_b, uint(FZ_CM_BH(kk, (wn * FZ_CM_RN + j) * FZ_CM_N) / FZ_CM_VB), \
                    uint(FZ_CM_BLD / FZ_CM_VB), FZ_CM_BCOLMAJOR);                                                  \
    [[unroll]] for (int i = 0; i < FZ_CM_RM; ++i)                                                                  \
      [[unroll]] for (int j = 0; j < FZ_CM_RN; ++j) acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);            \
  }
#endif

#ifdef FZ_CM_DIRECT
#define FZ_CM_KS (FZ_CM_BK / FZ_CM_K)  // matrix steps per K slice
#ifdef FZ_CM_EMULATE
// The emulation's direct loop: each thread adds its tile elements' products of K slice k0 (up
// to kend) read straight from the operands (the loop structure is the real one's).
void fz_cm_emulate_direct(fz_idx abase, fz_idx bbase, fz_idx row0, fz_idx col0, fz_idx k0, fz_idx kend, int tid,
                          inout float acc[FZ_CM_EL]) {
  for (int i = 0; i < FZ_CM_EL; ++i) {
    const int e = tid + i * FZ_CM_T;
    if (e >= FZ_CM_BM * FZ_CM_BN) continue;
    const fz_idx gm = row0 + e / FZ_CM_BN, gn = col0 + e % FZ_CM_BN;
    if (gm >= FZ_M || gn >= FZ_N) continue;
    for (int kk = 0; kk < FZ_CM_BK && k0 + kk < kend; ++kk)
      acc[i] += FZ_LOAD_A(abase + gm * FZ_A_SM + (k0 + kk) * FZ_A_SK) * FZ_LOAD_B(bbase + (k0 + kk) * FZ_B_SK + gn * FZ_B_SN);
  }
}
#define FZ_CM_DDECL
#define FZ_CM_DLOAD(K0, A, B)
#define FZ_CM_DMMA(K0, A, B) fz_cm_emulate_direct(abase, bbase, row0, col0, (K0), kend, tid, acc);
#else
// A fragment (gm, gk): row-major rows FZ_A_SM apart, or (A_COL, m fast) column-major columns
// FZ_A_SK apart; B (gk, gn): row-major rows FZ_B_SK apart, or (B_COL, k fast) columns FZ_B_SN.
#ifdef FZ_CM_A_COL
#define FZ_CM_DLOAD_A(mat, gm, gk) \
  coopMatLoadNV(mat, FZ_CM_ABUF, uint((abase + (gm) + (gk) * FZ_A_SK + FZ_CM_AOFF) / 8), uint(FZ_A_SK / 8), true)
#else
#define FZ_CM_DLOAD_A(mat, gm, gk) \
  coopMatLoadNV(mat, FZ_CM_ABUF, uint((abase + (gm) * FZ_A_SM + (gk) + FZ_CM_AOFF) / 8), uint(FZ_A_SM / 8), false)
#endif
#ifdef FZ_CM_B_COL
#define FZ_CM_DLOAD_B(mat, gk, gn) \
  coopMatLoadNV(mat, FZ_CM_BBUF, uint((bbase + (gk) + (gn) * FZ_B_SN + FZ_CM_BOFF) / 8), uint(FZ_B_SN / 8), true)
#else
#define FZ_CM_DLOAD_B(mat, gk, gn) \
  coopMatLoadNV(mat, FZ_CM_BBUF, uint((bbase + (gk) * FZ_B_SK + (gn) + FZ_CM_BOFF) / 8), uint(FZ_B_SK / 8), false)
#endif
#define FZ_CM_DDECL                                                                                                \
  FZ_CM_MA fz_a0[FZ_CM_KS][FZ_CM_RM], fz_a1[FZ_CM_KS][FZ_CM_RM];                                                   \
  FZ_CM_MB fz_b0[FZ_CM_KS][FZ_CM_RN], fz_b1[FZ_CM_KS][FZ_CM_RN];
// This subgroup's fragments of the K slice at K0 (the steps from kend on, and fragments past M or
// N, are zero).
#define FZ_CM_DLOAD(K0, A, B)                                                                                      \
  [[unroll]] for (int s = 0; s < FZ_CM_KS; ++s) {                                                                  \
    const fz_idx gk = (K0) + s * FZ_CM_K;                                                                          \
    [[unroll]] for (int i = 0; i < FZ_CM_RM; ++i) {                                                                \
      const fz_idx gm = row0 + (wm * FZ_CM_RM + i) * FZ_CM_M;                                                      \
      if (gk < kend && gm < FZ_M) FZ_CM_DLOAD_A(A[s][i], gm, gk);                                                  \
      else A[s][i] = FZ_CM_MA(0.0);                                                                                \
    }                                                                                                              \
    [[unroll]] for (int j = 0; j < FZ_CM_RN; ++j) {                                                                \
      const fz_idx gn = col0 + (wn * FZ_CM_RN + j) * FZ_CM_N;                                                      \
      if (gk < kend && gn < FZ_N) FZ_CM_DLOAD_B(B[s][j], gk, gn);                                                  \
      else B[s][j] = FZ_CM_MB(0.0);                                                                                \
    }                                                                                                              \
  }
// The K slice at K0 into the accumulators, steps in ascending k as FZ_CM_COMPUTE.
#define FZ_CM_DMMA(K0, A, B)                                                                                       \
  [[unroll]] for (int s = 0; s < FZ_CM_KS; ++s)                                                                    \
    if ((K0) + s * FZ_CM_K < kend)                                                                                 \
      [[unroll]] for (int i = 0; i < FZ_CM_RM; ++i)                                                                \
        [[unroll]] for (int j = 0; j < FZ_CM_RN; ++j) acc[i][j] = coopMatMulAddNV(A[s][i], B[s][j], acc[i][j]);
#endif
#endif

// Group g of a slice: its first element. A group runs along the operand's unit-stride
// direction (A: k when FZ_A_SK == 1, else m; B: n when FZ_B_SN == 1 or FZ_B_SK != 1, else k),
// so consecutive threads read consecutive memory.
void fz_cm_a_at(int g, out int mm, out int kk) {
  const bool k_fast = FZ_A_SK == 1;
  kk = k_fast ? (g % (FZ_CM_BK / FZ_CM_VA)) * FZ_CM_VA : g / (FZ_CM_BM / FZ_CM_VA);
  mm = k_fast ? g / (FZ_CM_BK / FZ_CM_VA) : (g % (FZ_CM_BM / FZ_CM_VA)) * FZ_CM_VA;
}
void fz_cm_b_at(int g, out int kk, out int nn) {
  const bool n_fast = FZ_B_SN == 1 || FZ_B_SK != 1;
  nn = n_fast ? (g % (FZ_CM_BN / FZ_CM_VB)) * FZ_CM_VB : g / (FZ_CM_BK / FZ_CM_VB);
  kk = n_fast ? g / (FZ_CM_BN / FZ_CM_VB) : (g % (FZ_CM_BK / FZ_CM_VB)) * FZ_CM_VB;
}

// This thread's share of the K slice at k0, from memory into registers. Out-of-range elements
// are 0. With vector loads (FZ_CM_VA / VB > 1, FZ_LOAD_AV / BV from the dialect) the operand's
// extent along the group direction, its other strides and its offset are multiples of the
// group size, so a group is wholly in or out of range and its first element is aligned.
void fz_cm_fetch(fz_idx abase, fz_idx bbase, fz_idx row0, fz_idx col0, fz_idx k0, int tid, out FZ_CM_RA ra[FZ_CM_LA],
                 out FZ_CM_RB rb[FZ_CM_LB]) {
  [[unroll]] for (int r = 0; r < FZ_CM_LA; ++r) {
    const int g = tid + r * FZ_CM_T;
    int mm, kk;
    fz_cm_a_at(g, mm, kk);
    const fz_idx gm = row0 + mm, gk = k0 + kk;
    const bool live = g < FZ_CM_GA && gm < FZ_M && gk < FZ_K;
#if FZ_CM_VA > 1
    ra[r] = live ? FZ_LOAD_AV(abase + gm * FZ_A_SM + gk * FZ_A_SK) : FZ_CM_RA(0u);
#else
    ra[r] = float16_t(live ? FZ_LOAD_A(abase + gm * FZ_A_SM + gk * FZ_A_SK) : 0.0f);
#endif
  }
  [[unroll]] for (int r = 0; r < FZ_CM_LB; ++r) {
    const int g = tid + r * FZ_CM_T;
    int kk, nn;
    fz_cm_b_at(g, kk, nn);
    const fz_idx gn = col0 + nn, gk = k0 + kk;
    const bool live = g < FZ_CM_GB && gn < FZ_N && gk < FZ_K;
#if FZ_CM_VB > 1
    rb[r] = live ? FZ_LOAD_BV(bbase + gk * FZ_B_SK + gn * FZ_B_SN) : FZ_CM_RB(0u);
#else
    rb[r] = float16_t(live ? FZ_LOAD_B(bbase + gk * FZ_B_SK + gn * FZ_B_SN) : 0.0f);
#endif
  }
}

// Registers -> the shared slices (the fetch's element order), one store a group.
void fz_cm_stage(int tid, FZ_CM_RA ra[FZ_CM_LA], FZ_CM_RB rb[FZ_CM_LB]) {
  [[unroll]] for (int r = 0; r < FZ_CM_LA; ++r) {
    const int g = tid + r * FZ_CM_T;
    int mm, kk;
    fz_cm_a_at(g, mm, kk);
    if (g < FZ_CM_GA) fz_cm_a[FZ_CM_AH(mm, kk) / FZ_CM_VA] = ra[r];
  }
  [[unroll]] for (int r = 0; r < FZ_CM_LB; ++r) {
    const int g = tid + r * FZ_CM_T;
    int kk, nn;
    fz_cm_b_at(g, kk, nn);
    if (g < FZ_CM_GB) fz_cm_b[FZ_CM_BH(kk, nn) / FZ_CM_VB] = rb[r];
  }
}

void main() {
  const int tid = int(gl_LocalInvocationID.x);
  const int wm = int(gl_SubgroupID) / FZ_CM_WN, wn = int(gl_SubgroupID) % FZ_CM_WN;
  const fz_idx tiles_m = (fz_idx(FZ_M) + FZ_CM_BM - 1) / FZ_CM_BM;
  const fz_idx tiles_n = (fz_idx(FZ_N) + FZ_CM_BN - 1) / FZ_CM_BN;
  const fz_idx tiles = tiles_m * tiles_n * FZ_BATCH;
  // Grid-stride over work items w = tile * FZ_SPLIT_K + slice: the loop bound is uniform, so
  // the barriers below are too.
  for (fz_idx w = fz_idx(fz_group_id()); w < tiles * FZ_SPLIT_K; w += fz_idx(fz_num_groups())) {
    const fz_idx t = w / FZ_SPLIT_K;
    const int slice = int(w - t * FZ_SPLIT_K);
    const fz_idx batch = t / (tiles_m * tiles_n);
    const fz_idx rem = t - batch * (tiles_m * tiles_n);
#ifdef FZ_TILE_N_MAJOR  // consecutive work items share a B column strip (read once from DRAM)
    const fz_idx row0 = (rem % tiles_m) * FZ_CM_BM, col0 = (rem / tiles_m) * FZ_CM_BN;
#else
    const fz_idx row0 = (rem / tiles_n) * FZ_CM_BM, col0 = (rem % tiles_n) * FZ_CM_BN;
#endif
    const fz_idx abase = fz_a_base(batch), bbase = fz_b_base(batch);
    // This work item's K range. FZ_SPLIT_SLICE is a multiple of FZ_CM_BK, so only the last
    // slice can end inside a step, where the fetch's gk < FZ_K zero-fills as without split.
    const fz_idx kbeg = fz_idx(slice) * FZ_SPLIT_SLICE;
    const fz_idx kend = kbeg + FZ_SPLIT_SLICE < fz_idx(FZ_K) ? kbeg + FZ_SPLIT_SLICE : fz_idx(FZ_K);
#ifdef FZ_CM_EMULATE
    float acc[FZ_CM_EL];
    for (int i = 0; i < FZ_CM_EL; ++i) acc[i] = 0.0f;
#else
    FZ_CM_ACC acc[FZ_CM_RM][FZ_CM_RN];
    [[unroll]] for (int i = 0; i < FZ_CM_RM; ++i)
      [[unroll]] for (int j = 0; j < FZ_CM_RN; ++j) acc[i][j] = FZ_CM_ZERO;
#endif
#ifdef FZ_CM_DIRECT
    // Two fragment sets: slice k0 + BK loads while slice k0 multiplies (the set index is a
    // constant in each half of the loop body).
    FZ_CM_DDECL
    FZ_CM_DLOAD(kbeg, fz_a0, fz_b0)
    for (fz_idx k0 = kbeg; k0 < kend; k0 += 2 * FZ_CM_BK) {
      const bool more = k0 + FZ_CM_BK < kend;  // uniform
      if (more) {
        FZ_CM_DLOAD(k0 + FZ_CM_BK, fz_a1, fz_b1)
      }
      FZ_CM_DMMA(k0, fz_a0, fz_b0)
      if (more) {
        if (k0 + 2 * FZ_CM_BK < kend) {
          FZ_CM_DLOAD(k0 + 2 * FZ_CM_BK, fz_a0, fz_b0)
        }
        FZ_CM_DMMA(k0 + FZ_CM_BK, fz_a1, fz_b1)
      }
    }
#else
    FZ_CM_RA ra[FZ_CM_LA];
    FZ_CM_RB rb[FZ_CM_LB];
    // Software pipelining: the next slice's loads are issued before this slice's matrix
    // operations, so their latency overlaps the math instead of following it.
    fz_cm_fetch(abase, bbase, row0, col0, kbeg, tid, ra, rb);
    for (fz_idx k0 = kbeg; k0 < kend; k0 += FZ_CM_BK) {
      fz_cm_stage(tid, ra, rb);
      memoryBarrierShared();
      barrier();
      if (k0 + FZ_CM_BK < kend) fz_cm_fetch(abase, bbase, row0, col0, k0 + FZ_CM_BK, tid, ra, rb);
      FZ_CM_COMPUTE
      memoryBarrierShared();
      barrier();
    }
#endif
#ifdef FZ_CM_EMULATE
    for (int i = 0; i < FZ_CM_EL; ++i) {
      const int e = tid + i * FZ_CM_T;
      if (e < FZ_CM_BM * FZ_CM_BN) fz_cm_c[(e / FZ_CM_BN) * FZ_CM_CS + e % FZ_CM_BN] = acc[i];
    }
#else
    [[unroll]] for (int i = 0; i < FZ_CM_RM; ++i)
      [[unroll]] for (int j = 0; j < FZ_CM_RN; ++j)
        FZ_CM_STORE(acc[i][j], uint(((wm * FZ_CM_RM + i) * FZ_CM_M) * FZ_CM_CS + (wn * FZ_CM_RN + j) * FZ_CM_N), uint(FZ_CM_CS));
#endif
    memoryBarrierShared();
    barrier();
#if FZ_SPLIT_K > 1
    // Split-K: this slice's fp32 partial tile to the workspace (element e of the row-major
    // BM x BN tile at fz_split.part[w * BM * BN + e], coalesced), then the tile's counter; the
    // last of its FZ_SPLIT_K work items to arrive adds the partials and runs the epilogue.
    // Memory model (this module uses the Vulkan one): fz_split is coherent (its accesses are
    // non-private, made available / visible at queue-family scope, which holds every workgroup
    // of the dispatch). The barrier makes every thread's partial stores happen-before thread
    // 0's counter increment, a release at that scope; the last arrival's increment reads the
    // value of the release sequence of all earlier increments (acquire), and the barrier after
    // it makes that happen-before every thread's partial loads.
    const fz_idx part = w * (FZ_CM_BM * FZ_CM_BN);
    for (int e = tid; e < FZ_CM_BM * FZ_CM_BN; e += FZ_CM_T)
      fz_split.part[part + e] = fz_cm_c[(e / FZ_CM_BN) * FZ_CM_CS + e % FZ_CM_BN];
    controlBarrier(gl_ScopeWorkgroup, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer | gl_StorageSemanticsShared,
                   gl_SemanticsAcquireRelease | gl_SemanticsMakeAvailable | gl_SemanticsMakeVisible);
    if (tid == 0)
      FZ_CM_LAST = atomicAdd(fz_split.cnt[t], 1u, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer,
                             gl_SemanticsAcquireRelease | gl_SemanticsMakeAvailable | gl_SemanticsMakeVisible) == uint(FZ_SPLIT_K - 1)
                       ? 1.0f
                       : 0.0f;
    controlBarrier(gl_ScopeWorkgroup, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer | gl_StorageSemanticsShared,
                   gl_SemanticsAcquireRelease | gl_SemanticsMakeAvailable | gl_SemanticsMakeVisible);
    // Uniform: every thread read the same shared flag. Nothing below is skipped that the next
    // work item needs: its first shared writes follow barriers every thread passes.
    if (FZ_CM_LAST == 0.0f) continue;
    const fz_idx first = t * FZ_SPLIT_K * (FZ_CM_BM * FZ_CM_BN);
    {
      // Slices added in order 0, 1, ... (the same order every run: deterministic), all read
      // back from the workspace, this work item's own too (the bits it stored); the sums
      // replace the thread's own elements of fz_cm_c (the epilogue below reads the same
      // elements, so no barrier). Slice-outer with the thread's elements unrolled inside: each
      // slice's loads are independent and overlap (element-outer, every element waited for
      // S - 1 dependent loads in turn).
      float fz_sum[FZ_CM_PE];
      [[unroll]] for (int r = 0; r < FZ_CM_PE; ++r) {
        const int e = tid + r * FZ_CM_T;
        fz_sum[r] = e < FZ_CM_BM * FZ_CM_BN ? fz_split.part[first + e] : 0.0f;
      }
      for (int s = 1; s < FZ_SPLIT_K; ++s) {
        const fz_idx base = first + fz_idx(s) * (FZ_CM_BM * FZ_CM_BN);
        [[unroll]] for (int r = 0; r < FZ_CM_PE; ++r) {
          const int e = tid + r * FZ_CM_T;
          if (e < FZ_CM_BM * FZ_CM_BN) {
            precise float sum = fz_sum[r] + fz_split.part[base + e];
            fz_sum[r] = sum;
          }
        }
      }
      [[unroll]] for (int r = 0; r < FZ_CM_PE; ++r) {
        const int e = tid + r * FZ_CM_T;
        if (e < FZ_CM_BM * FZ_CM_BN) fz_cm_c[(e / FZ_CM_BN) * FZ_CM_CS + e % FZ_CM_BN] = fz_sum[r];
      }
    }
#endif
    for (int e = tid; e < FZ_CM_BM * FZ_CM_BN; e += FZ_CM_T) {
      const int mm = e / FZ_CM_BN, nn = e % FZ_CM_BN;
      const fz_idx m = row0 + mm, n = col0 + nn;
      if (m >= FZ_M || n >= FZ_N) continue;
      FZ_EPILOGUE(fz_cm_c[mm * FZ_CM_CS + nn], (batch * FZ_M + m) * FZ_N + n);
    }
#if FZ_SPLIT_K > 1
    if (tid == 0) fz_split.cnt[t] = 0u;  // every slice of tile t has arrived: ready for the next replay
#endif
    memoryBarrierShared();
    barrier();
  }
}
#ifdef __cplusplus
//")FZ_GLSL"
#endif
