#version 450
#extension GL_GOOGLE_include_directive : require
// Build-time check of gemm.glsl's two-slice prefetch (FZ_PREFETCH 2) on the interleaved tiles
// with scalar loads, see gemm_check.glsl.
#define FZ_SKINNY 0
#define FZ_PREFETCH 2
#include "gemm_check.glsl"
