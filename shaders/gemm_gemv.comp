#version 450
#extension GL_GOOGLE_include_directive : require
// Build-time check of gemm.glsl's vector GEMV path (FZ_SKINNY 2, M = 4) with vec4 B loads and
// split-K (3 slices of 32 of K = 80), see gemm_check.glsl.
#define FZ_SKINNY 2
#define FZ_SK_COLS 64
#define FZ_SK_THREADS 256
#define FZ_A_VEC4 1
#define FZ_B_VEC4 1
#define FZ_SPLIT_K 3
#define FZ_SPLIT_SLICE 32
#define FZ_SPLIT_CNT 4
#include "gemm_check.glsl"
