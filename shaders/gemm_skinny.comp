#version 450
#extension GL_GOOGLE_include_directive : require
// Build-time check of gemm.glsl's GEMV-like path (M <= 8), see gemm_check.glsl.
#define FZ_SKINNY 1
#define FZ_SK_COLS 8
#define FZ_SK_THREADS 1024
#include "gemm_check.glsl"
