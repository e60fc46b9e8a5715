#version 450
#extension GL_GOOGLE_include_directive : require
// Build-time check of gemm.glsl's tiled path (glslc -DFZ_TEMPLATE_CHECK=1, CMakeLists.txt).
#define FZ_SKINNY 0
#include "gemm_check.glsl"
