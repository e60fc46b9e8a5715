#version 450
#extension GL_GOOGLE_include_directive : require
// Build-time check of gemm.glsl's tiled path with split-K and the spread hand-off (3 slices of
// 32 of K = 80, one counter per chunk: FZ_SPLIT_CNT = 8 tiles x 3), see gemm_check.glsl.
#define FZ_SKINNY 0
#define FZ_SPLIT_K 3
#define FZ_SPLIT_SLICE 32
#define FZ_SPLIT_SPREAD 1
#define FZ_SPLIT_CNT 24
#include "gemm_check.glsl"
