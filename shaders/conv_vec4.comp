#version 450
#extension GL_GOOGLE_include_directive : require
// Build-time check of conv.glsl's implicit GEMM with 4-wide weight loads (FZ_W_VEC4) and split-K, see conv_check.glsl.
#define FZ_W_VEC4 1
#define FZ_SPLIT_K 3
#define FZ_SPLIT_SLICE 16
#define FZ_SPLIT_CNT 8
#include "conv_check.glsl"
