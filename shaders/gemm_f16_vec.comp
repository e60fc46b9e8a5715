#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
// Build-time check of gemm.glsl's tiled path with fp16 operands loaded 4 at a time (one
// f16vec4, converted exactly) and split-K, see gemm_check.glsl.
#define FZ_SKINNY 0
#define FZ_SPLIT_K 3
#define FZ_SPLIT_SLICE 32
#define FZ_SPLIT_CNT 8
#define FZ_A_VEC4 1
#define FZ_B_VEC4 1
#define FZ_CHECK_F16 1
#include "gemm_check.glsl"
