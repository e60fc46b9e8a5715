#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
// Build-time check of gemm.glsl with bf16 operands loaded 4 at a time (one uvec2 of packed
// bf16, converted exactly), split-K and the blocked register tiles, see gemm_check.glsl.
#define FZ_SKINNY 0
#define FZ_BLOCKED 1
#define FZ_SPLIT_K 3
#define FZ_SPLIT_SLICE 32
#define FZ_SPLIT_CNT 8
#define FZ_A_VEC4 1
#define FZ_B_VEC4 1
#define FZ_CHECK_BF16 1
#include "gemm_check.glsl"
