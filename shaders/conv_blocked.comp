#version 450
#extension GL_GOOGLE_include_directive : require
// Build-time check of conv.glsl's implicit GEMM on blocked register tiles (FZ_BLOCKED, vec4 slices) with 4-wide weight loads and split-K, see conv_check.glsl.
#define FZ_BLOCKED 1
#define FZ_W_VEC4 1
#define FZ_SPLIT_K 3
#define FZ_SPLIT_SLICE 16
#define FZ_SPLIT_CNT 8
#include "conv_check.glsl"
