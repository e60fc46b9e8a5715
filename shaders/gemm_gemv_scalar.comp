#version 450
#extension GL_GOOGLE_include_directive : require
// Build-time check of gemm.glsl's vector GEMV path (FZ_SKINNY 2, M = 4) with scalar B loads and
// no split, see gemm_check.glsl.
#define FZ_SKINNY 2
#define FZ_SK_COLS 32
#define FZ_SK_THREADS 128
#include "gemm_check.glsl"
