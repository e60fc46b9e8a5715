#version 450
#extension GL_GOOGLE_include_directive : require
// Build-time check of gemm.glsl's two-slice prefetch (FZ_PREFETCH 2, FUSOR_VK_GEMM_PREFETCH=2)
// on blocked tiles with split-K and vec4 loads, see gemm_check.glsl.
#define FZ_SKINNY 0
#define FZ_BLOCKED 1
#define FZ_PREFETCH 2
#define FZ_SPLIT_K 3
#define FZ_SPLIT_SLICE 32
#define FZ_SPLIT_CNT 8
#define FZ_A_VEC4 1
#define FZ_B_VEC4 1
#include "gemm_check.glsl"
