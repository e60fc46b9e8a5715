// Stand-ins for what the emitter and the Vulkan prelude define in front of conv.glsl at run
// time (glslc -DFZ_TEMPLATE_CHECK=1), with a bias + ReLU epilogue; conv.comp and
// conv_splitk.comp include it with their own switches.
#ifdef FZ_TEMPLATE_CHECK
#extension GL_EXT_control_flow_attributes : require
#define fz_idx int
layout(std430, set = 0, binding = 0) readonly buffer B0 { float d[]; } b0;  // X [2, 8, 15, 15]
layout(std430, set = 0, binding = 1) readonly buffer B1 { float d[]; } b1;  // W [16, 4, 3, 3] (groups = 2)
layout(std430, set = 0, binding = 2) readonly buffer B2 { float d[]; } b2;  // bias [16]
layout(std430, set = 0, binding = 3) buffer B3 { float d[]; } b3;           // Y [2, 16, 8, 8]
int fz_group_id() { return int(gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y); }
int fz_num_groups() { return int(gl_NumWorkGroups.x * gl_NumWorkGroups.y); }
#define FZ_CN 2
#define FZ_CC 8
#define FZ_CH 15
#define FZ_CW 15
#define FZ_CK 16
#define FZ_CR 3
#define FZ_CS 3
#define FZ_COH 8
#define FZ_COW 8
#define FZ_SH 2
#define FZ_SW 2
#define FZ_PH 1
#define FZ_PW 1
#define FZ_DH 1
#define FZ_DW 1
#define FZ_GROUPS 2
#define FZ_TOTAL 2048
#define FZ_LOAD_X(off) b0.d[off]
#define FZ_LOAD_W(off) b1.d[off]
#if defined(FZ_W_VEC4) && FZ_W_VEC4
layout(std430, set = 0, binding = 1) readonly buffer B1v { vec4 d[]; } b1v;  // W 4 kd at a time (C/G x R x S = 36)
#define FZ_LOAD_W4(off) b1v.d[(off) / 4]
#endif
#if defined(FZ_SPLIT_K) && FZ_SPLIT_K > 1
layout(std430, set = 0, binding = 4) coherent buffer FzSplit { uint cnt[FZ_SPLIT_CNT]; float part[]; } fz_split;
#endif
void fz_epilogue(float acc, fz_idx fz_i) { b3.d[fz_i] = max(acc + b2.d[(fz_i / 64) % 16], 0.0f); }
#define FZ_EPILOGUE(acc, i) fz_epilogue((acc), (i))
#endif
#include "conv.glsl"
