#version 450
#extension GL_GOOGLE_include_directive : require
// Build-time check of the convolution template (see conv_check.glsl). At run time conv.glsl is used directly.
#include "conv_check.glsl"
