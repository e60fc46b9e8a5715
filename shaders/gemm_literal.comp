#version 450
#extension GL_GOOGLE_include_directive : require
// Build-time check of gemm.glsl with its tile sizes as literals (FZ_TILE_LITERALS,
// FUSOR_VK_GEMM_LITERAL=1): 8x4 interleaved register blocks, split-K and vec4 loads.
#define FZ_SKINNY 0
#define FZ_TILE_LITERALS 1
#define FZ_TILE_BM 64
#define FZ_TILE_BN 64
#define FZ_TILE_BK 32
#define FZ_TILE_TM 8
#define FZ_TILE_TN 4
#define FZ_SPLIT_K 3
#define FZ_SPLIT_SLICE 64
#define FZ_SPLIT_CNT 8
#define FZ_A_VEC4 1
#define FZ_B_VEC4 1
#include "gemm_check.glsl"
