#version 450
#extension GL_GOOGLE_include_directive : require
// Build-time check of conv.glsl's implicit GEMM with split-K (3 slices of 16 of C/G x R x S = 36), see conv_check.glsl.
#define FZ_SPLIT_K 3
#define FZ_SPLIT_SLICE 16
#define FZ_SPLIT_CNT 8
#include "conv_check.glsl"
