#version 450
#extension GL_GOOGLE_include_directive : require
// Build-time check of gemm.glsl's GEMV-like path (M <= 8), see gemm_check.glsl.
#define FZ_SKINNY 1
#include "gemm_check.glsl"
