// Stand-ins for what the emitter and the Vulkan prelude define in front of gemm.glsl at run
// time, with a bias + ReLU epilogue, for the build-time glslc checks gemm.comp (tiled path),
// gemm_skinny.comp (FZ_SKINNY: the GEMV-like path, M = 4), gemm_splitk.comp (FZ_SPLIT_K: 3 K
// slices), gemm_vec4.comp (vec4 operand loads), gemm_blocked.comp (FZ_BLOCKED register tiles
// with split-K and vec4 loads), gemm_half_vec.comp, gemm_f16_vec.comp (FZ_CHECK_BF16 / FZ_CHECK_F16: 16-bit
// operands loaded 4 at a time), gemm_coopmat.comp (FZ_CHECK_COOPMAT: gemm_coopmat.glsl with
// fp16 operands), gemm_coopmat_splitk.comp (the same with split-K and vector staging loads) and
// gemm_coopmat_emulate.comp (that one in the FZ_CM_EMULATE test hook, without matrix units).
// At run time gemm.glsl is used directly.
#ifdef FZ_TEMPLATE_CHECK
#extension GL_EXT_control_flow_attributes : require
#define fz_idx int
#if defined(FZ_CHECK_COOPMAT) || defined(FZ_CHECK_F16)  // fp16 operands
#define FZ_OPERAND float16_t
#elif defined(FZ_CHECK_BF16)  // bf16 operands: 16-bit words converted in the shader
#define FZ_OPERAND uint16_t
#else
#define FZ_OPERAND float
#endif
layout(std430, set = 0, binding = 0) readonly buffer B0 { FZ_OPERAND d[]; } b0;  // A [2, FZ_M, 80]
layout(std430, set = 0, binding = 1) readonly buffer B1 { FZ_OPERAND d[]; } b1;  // B [80, 72] (shared by both batches)
layout(std430, set = 0, binding = 2) readonly buffer B2 { float d[]; } b2;  // bias [72]
layout(std430, set = 0, binding = 3) buffer B3 { float d[]; } b3;           // C [2, FZ_M, 72]
int fz_group_id() { return int(gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y); }
int fz_num_groups() { return int(gl_NumWorkGroups.x * gl_NumWorkGroups.y); }
#if FZ_SKINNY
#define FZ_M 4
#else
#define FZ_M 96
#endif
#define FZ_N 72
#define FZ_K 80
#define FZ_BATCH 2
#define FZ_A_SM 80
#define FZ_A_SK 1
#define FZ_B_SK 72
#define FZ_B_SN 1
#ifdef FZ_CHECK_BF16
float fz_bf16_to_f32(uint h) { return uintBitsToFloat(h << 16); }
vec4 fz_bf16x4(uvec2 w) {
  return vec4(uintBitsToFloat(w.x << 16), uintBitsToFloat(w.x & 0xffff0000u), uintBitsToFloat(w.y << 16), uintBitsToFloat(w.y & 0xffff0000u));
}
#define FZ_LOAD_A(off) fz_bf16_to_f32(uint(b0.d[off]))
#define FZ_LOAD_B(off) fz_bf16_to_f32(uint(b1.d[off]))
#else
#define FZ_LOAD_A(off) float(b0.d[off])
#define FZ_LOAD_B(off) float(b1.d[off])
#endif
fz_idx fz_a_base(fz_idx batch) { return batch * FZ_M * FZ_K; }
fz_idx fz_b_base(fz_idx batch) { return 0; }
void fz_epilogue(float acc, fz_idx fz_i) { b3.d[fz_i] = max(acc + b2.d[fz_i % FZ_N], 0.0f); }
#define FZ_EPILOGUE(acc, i) fz_epilogue((acc), (i))
#if defined(FZ_A_VEC4) && FZ_A_VEC4 && defined(FZ_CHECK_BF16)  // packed bf16 views of A and B
layout(std430, set = 0, binding = 0) readonly buffer B0v { uvec2 d[]; } b0v;
layout(std430, set = 0, binding = 1) readonly buffer B1v { uvec2 d[]; } b1v;
#define FZ_LOAD_A4(off) fz_bf16x4(b0v.d[(off) / 4])
#define FZ_LOAD_B4(off) fz_bf16x4(b1v.d[(off) / 4])
#elif defined(FZ_A_VEC4) && FZ_A_VEC4 && defined(FZ_CHECK_F16)  // f16vec4 views
layout(std430, set = 0, binding = 0) readonly buffer B0v { f16vec4 d[]; } b0v;
layout(std430, set = 0, binding = 1) readonly buffer B1v { f16vec4 d[]; } b1v;
#define FZ_LOAD_A4(off) vec4(b0v.d[(off) / 4])
#define FZ_LOAD_B4(off) vec4(b1v.d[(off) / 4])
#elif defined(FZ_A_VEC4) && FZ_A_VEC4  // gemm_vec4.comp: vec4 views of A and B
layout(std430, set = 0, binding = 0) readonly buffer B0v { vec4 d[]; } b0v;
layout(std430, set = 0, binding = 1) readonly buffer B1v { vec4 d[]; } b1v;
#define FZ_LOAD_A4(off) b0v.d[(off) / 4]
#define FZ_LOAD_B4(off) b1v.d[(off) / 4]
#endif
#if defined(FZ_CM_VA) && FZ_CM_VA == 8  // gemm_coopmat_splitk.comp: packed-half views of A and B
layout(std430, set = 0, binding = 0) readonly buffer B0u8 { uvec4 d[]; } b0u8;
layout(std430, set = 0, binding = 1) readonly buffer B1u4 { uvec2 d[]; } b1u4;
#define FZ_LOAD_AV(off) b0u8.d[(off) / 8]
#define FZ_LOAD_BV(off) b1u4.d[(off) / 4]
#endif
#if defined(FZ_SPLIT_K) && FZ_SPLIT_K > 1  // gemm_splitk.comp: the workspace the dialect declares
layout(std430, set = 0, binding = 4) coherent buffer FzSplit { uint cnt[FZ_SPLIT_CNT]; float part[]; } fz_split;
#endif
#endif
#ifdef FZ_CHECK_COOPMAT
#include "gemm_coopmat.glsl"
#else
#include "gemm.glsl"
#endif
