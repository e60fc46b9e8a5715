// GLSL source text of the helper functions in every Vulkan kernel's prelude (vk_glsl_helpers.cpp).
#pragma once

namespace fusor::vk {

// fz_inf / fz_nan / NaN-propagating min-max, exact fmod, the correctly rounded fp32 division
// (fz_div, fz_div_prep / fz_div_by: Markstein's residual correction with Dekker's exact products,
// or fused-fma residuals where FZ_FMA_FUSED is defined), log1p / expm1 / erf / tanh / hyperbolic
// and pow with C99 Annex F special cases. Needs the fz_* names not to clash with the kernel's.
const char* glsl_float_helpers();
// bf16 stored as uint16: to / from fp32 (round to nearest even; NaN stays NaN), 4-wide unpacking.
const char* glsl_bf16_helpers();
// fp32 -> fp16 rounding to nearest even into an exactly convertible fp32 value (fz_round_f16).
const char* glsl_f16_helpers();

}  // namespace fusor::vk
