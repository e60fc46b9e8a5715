#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require
// Build-time check of gemm_coopmat.glsl with split-K (3 slices of 32 of K = 80) and vector
// staging loads (8 halves of A, 4 of B per load), 16x8x16 matrices, 2 x 4 subgroups of one
// accumulator each, the spread hand-off (one counter per chunk); see gemm_check.glsl.
#define FZ_CHECK_COOPMAT 1
#define FZ_CM_M 16
#define FZ_CM_N 8
#define FZ_CM_K 16
#define FZ_CM_WM 2
#define FZ_CM_WN 4
#define FZ_CM_RM 1
#define FZ_CM_RN 1
#define FZ_CM_BK 32
#define FZ_CM_SG 32
#define FZ_SPLIT_K 3
#define FZ_SPLIT_SLICE 32
#define FZ_SPLIT_SPREAD 1
#define FZ_SPLIT_CNT 24
#define FZ_CM_VA 8
#define FZ_CM_VB 4
#include "gemm_check.glsl"
