#version 450
#extension GL_GOOGLE_include_directive : require
// Build-time check of gemm.glsl's blocked register tiles (FZ_BLOCKED) with split-K and vec4
// loads of fp32 A and B, see gemm_check.glsl.
#define FZ_SKINNY 0
#define FZ_BLOCKED 1
#define FZ_SPLIT_K 3
#define FZ_SPLIT_SLICE 32
#define FZ_SPLIT_CNT 8
#define FZ_A_VEC4 1
#define FZ_B_VEC4 1
#include "gemm_check.glsl"
