// A reference GLSL (Vulkan, std430) dialect for the shared emitter (codegen.h). It exists so
// the emitter is checked against both languages; the Vulkan backend may use or subclass it.
#include <map>

#include "backends/codegen.h"

namespace fusor {
namespace {

// GLSL lacks erf and has an undefined pow for negative bases, so both are defined here;
// the rest of the fz_* vocabulary is ir/ops/elementwise.cpp's.
constexpr const char* kGlslHelpers = R"(float fz_inf() { return uintBitsToFloat(0x7f800000u); }
float fz_nan() { return uintBitsToFloat(0x7fc00000u); }
float fz_max(float a, float b) { return (isnan(a) || isnan(b)) ? fz_nan() : max(a, b); }
float fz_min(float a, float b) { return (isnan(a) || isnan(b)) ? fz_nan() : min(a, b); }
float fz_round_even(float x) { return roundEven(x); }
float fz_sign(float x) { return isnan(x) ? x : sign(x); }
float fz_isnan(float x) { return isnan(x) ? 1.0f : 0.0f; }
float fz_isinf(float x) { return isinf(x) ? 1.0f : 0.0f; }
float fz_fmod(float a, float b) { return (b == 0.0f || isinf(a)) ? fz_nan() : (isinf(b) ? a : a - trunc(a / b) * b); }
// log(1 + x) without the cancellation of log(1.0f + x) for small x (GLSL's log is only
// accurate to 2^-21 absolute near 1): 2 atanh(x / (2 + x)) as its odd series where |s| <= 0.2.
float fz_log1p(float x) {
  if (x < -0.25f || x > 0.5f) return log(1.0f + x);
  float s = x / (2.0f + x), s2 = s * s;
  return 2.0f * s * (1.0f + s2 * (1.0f / 3.0f + s2 * (0.2f + s2 * (1.0f / 7.0f + s2 * (1.0f / 9.0f + s2 * (1.0f / 11.0f))))));
}
// erf: Taylor series near 0 (relative error < 1e-7 for |x| < 0.5), else 1 - erfc with the
// Chebyshev fit of Numerical Recipes (erfcc, fractional error < 1.2e-7).
float fz_erf(float x) {
  float z = abs(x);
  if (z < 0.5f) {
    float s = x * x;
    return x * 1.1283791671f * (1.0f + s * (-1.0f / 3.0f + s * (0.1f + s * (-1.0f / 42.0f + s * (1.0f / 216.0f - s / 1320.0f)))));
  }
  float t = 1.0f / (1.0f + 0.5f * z);
  float r = t * exp(-z * z - 1.26551223f + t * (1.00002368f + t * (0.37409196f + t * (0.09678418f + t * (-0.18628806f +
            t * (0.27886807f + t * (-1.13520398f + t * (1.48851587f + t * (-0.82215223f + t * 0.17087277f)))))))));
  return x >= 0.0f ? 1.0f - r : r - 1.0f;
}
// C powf for the cases GLSL leaves undefined: negative bases with integral exponents, zero.
float fz_pow(float a, float b) {
  if (b == 0.0f || a == 1.0f) return 1.0f;
  if (isnan(a) || isnan(b)) return fz_nan();
  float m = abs(a);
  float r = m == 0.0f ? (b > 0.0f ? 0.0f : fz_inf()) : (isinf(m) ? (b > 0.0f ? fz_inf() : 0.0f) : exp2(b * log2(m)));
  if (a < 0.0f) {
    if (floor(b) != b) return fz_nan();
    if (mod(b, 2.0f) == 1.0f) r = -r;
  }
  return r;
}
)";

struct GlslDialect : Dialect {
  GlslDialect() {
    name = "vulkan";
    value_qualifier = "precise ";
    int64_type = "int64_t";
    int64_suffix = "l";
    local_id = "gl_LocalInvocationID.x";
    group_id = "gl_WorkGroupID.x";
    num_groups = "gl_NumWorkGroups.x";
    barrier = "memoryBarrierShared(); barrier();";
  }
  std::string prelude(const KernelHeader& h) const override {
    bool i64 = h.index64;
    for (auto& b : h.bindings) i64 = i64 || b.dtype == DType::i64;
    std::string s = "#version 450\n";
    if (i64) s += "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n";
    return s + kGlslHelpers;
  }
  std::string storage_type(DType t) const override {
    switch (t) {
      case DType::f32: return "float";
      case DType::i32: return "int";
      case DType::u32: return "uint";
      case DType::i64: return "int64_t";
      case DType::boolean: return "uint";  // the backend widens bool buffers to 32 bits on upload
      default: throw Unsupported(name, std::string("dtype ") + dtype_name(t) + " in a generated kernel");
    }
  }
  std::string cast(const std::string& type, const std::string& e) const override { return type + "(" + e + ")"; }
  std::string element(int slot, const std::string& idx) const override {
    return "b" + std::to_string(slot) + ".d[" + idx + "]";
  }
  std::string declare_buffers(const KernelHeader& h) const override {
    std::string s;
    for (auto& b : h.bindings) {
      const std::string i = std::to_string(b.slot);
      s += "layout(std430, set = 0, binding = " + i + ") " + (b.no_alias ? "restrict " : "") + (b.written ? "" : "readonly ") +
           "buffer B" + i + " { " + storage_type(b.dtype) + " d[]; } b" + i + ";\n";
    }
    return s + "layout(local_size_x = " + std::to_string(h.group_size) + ") in;\n";
  }
  std::string const_array(const std::string& type, const std::string& nm, const std::vector<std::string>& values) const override {
    return glsl_const_array(type, nm, values);
  }
  std::string shared_array(const std::string& type, const std::string& nm, int64_t count) const override {
    return "shared " + type + " " + nm + "[" + std::to_string(count) + "];\n";
  }
  std::string kernel_begin(const KernelHeader&) const override { return "void main() {\n"; }
  std::string intrinsic(const std::string& nm) const override {
    if (nm == "erf") return "fz_erf";
    if (nm == "pow") return "fz_pow";
    return nm;
  }
};

}  // namespace

const Dialect& glsl_reference_dialect() {
  static const GlslDialect d;
  return d;
}

}  // namespace fusor
