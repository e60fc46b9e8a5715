// VulkanDialect: GLSL 4.50 for Vulkan 1.2 (std430 storage buffers, one binding per slot).
#include "backends/vulkan/vk_dialect.h"

#include <algorithm>

namespace fusor::vk {

namespace {

// The fz_* vocabulary of ir/ops/elementwise.cpp plus GLSL's missing/undefined intrinsics.
// NaN tests look at the bits: drivers may fold isnan() away without the NaN-preserve mode.
constexpr const char* kHelpers = R"(float fz_inf() { return uintBitsToFloat(0x7f800000u); }
float fz_nan() { return uintBitsToFloat(0x7fc00000u); }
bool fz_nan_b(float x) { return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u; }
bool fz_inf_b(float x) { return (floatBitsToUint(x) & 0x7fffffffu) == 0x7f800000u; }
float fz_max(float a, float b) { return (fz_nan_b(a) || fz_nan_b(b)) ? fz_nan() : max(a, b); }
float fz_min(float a, float b) { return (fz_nan_b(a) || fz_nan_b(b)) ? fz_nan() : min(a, b); }
float fz_round_even(float x) { return roundEven(x); }
float fz_sign(float x) { return fz_nan_b(x) ? x : sign(x); }
float fz_isnan(float x) { return fz_nan_b(x) ? 1.0f : 0.0f; }
float fz_isinf(float x) { return fz_inf_b(x) ? 1.0f : 0.0f; }
float fz_fmod(float a, float b) { return (b == 0.0f || fz_inf_b(a) || fz_nan_b(a) || fz_nan_b(b)) ? fz_nan() : (fz_inf_b(b) ? a : a - trunc(a / b) * b); }
// log(1 + x) without the cancellation of log(1.0f + x) for small x (GLSL's log is only
// accurate to 2^-21 absolute near 1): 2 atanh(x / (2 + x)) as its odd series where |s| <= 0.2.
float fz_log1p(float x) {
  if (x < -0.25f || x > 0.5f) return log(1.0f + x);
  float s = x / (2.0f + x), s2 = s * s;
  return 2.0f * s * (1.0f + s2 * (1.0f / 3.0f + s2 * (0.2f + s2 * (1.0f / 7.0f + s2 * (1.0f / 9.0f + s2 * (1.0f / 11.0f))))));
}
// erff, faithfully rounded (max error < 1 ulp): N. Juffa's minimax polynomials.
float fz_erf(float a) {
  float t = abs(a), s = a * a, r;
  if (t > 0.927734375f) {
    r = fma(-1.72853470e-5f, t, 3.83197126e-4f);
    float u = fma(-3.88396438e-3f, t, 2.42546219e-2f);
    r = fma(r, s, u);
    r = fma(r, t, -1.06777877e-1f);
    r = fma(r, t, -6.34846687e-1f);
    r = fma(r, t, -1.28717512e-1f);
    r = fma(r, t, -t);
    r = 1.0f - exp(r);
    return a < 0.0f ? -r : r;
  }
  r = -5.96761703e-4f;
  r = fma(r, s, 4.99119423e-3f);
  r = fma(r, s, -2.67681349e-2f);
  r = fma(r, s, 1.12819925e-1f);
  r = fma(r, s, -3.76125336e-1f);
  r = fma(r, s, 1.28379166e-1f);
  return fma(r, a, a);
}
// tanh: an odd Taylor polynomial near 0 (where (e^2x-1)/(e^2x+1) cancels), else a form that
// saturates to +-1 instead of inf/inf for large |x|.
float fz_tanh(float x) {
  float a = abs(x);
  if (a < 0.3f) {
    float s = x * x;
    return x + x * s * (-0.333333333f + s * (0.133333333f + s * (-0.0539682540f + s * (0.0218694885f - s * 0.00886323552f))));
  }
  float r = 1.0f - 2.0f / (exp(2.0f * a) + 1.0f);
  return x < 0.0f ? -r : r;
}
// C powf where GLSL's pow is undefined: negative bases with integral exponents, zero, inf.
float fz_pow(float a, float b) {
  if (b == 0.0f || a == 1.0f) return 1.0f;
  if (fz_nan_b(a) || fz_nan_b(b)) return fz_nan();
  float m = abs(a);
  float r = m == 0.0f ? (b > 0.0f ? 0.0f : fz_inf()) : (fz_inf_b(m) ? (b > 0.0f ? fz_inf() : 0.0f) : pow(m, b));
  if (a < 0.0f) {
    if (floor(b) != b) return fz_nan();
    if (abs(b) < 16777216.0f && mod(b, 2.0f) == 1.0f) r = -r;
  }
  return r;
}
// Linear workgroup id: dispatches wider than maxComputeWorkGroupCount[0] are split over y/z.
int fz_group_id() { return int(gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z)); }
int fz_num_groups() { return int(gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_NumWorkGroups.z); }
)";

// bf16 travels as uint16_t in storage only (16-bit locals would need int16 arithmetic).
constexpr const char* kBf16Helpers = R"(float fz_bf16_to_f32(uint h) { return uintBitsToFloat(h << 16); }
uint fz_f32_to_bf16(float f) {
  uint u = floatBitsToUint(f);
  if (fz_nan_b(f)) return (u >> 16) | 0x40u;
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
  return u >> 16;
}
)";

// int64 as (low, high) uint halves on devices without shaderInt64: exact within int32 range.
constexpr const char* kI64PairHelpers = R"(float fz_i64_to_float(uvec2 v) {
  if (v.y == (int(v.x) < 0 ? 0xffffffffu : 0u)) return float(int(v.x));  // sign-extended 32-bit value
  return float(int(v.y)) * 4294967296.0f + float(v.x);
}
uvec2 fz_float_to_i64(float f) { int i = int(f); return uvec2(uint(i), i < 0 ? 0xffffffffu : 0u); }
)";

bool is_8bit(DType t) { return t == DType::i8 || t == DType::u8 || t == DType::boolean; }
bool is_16bit(DType t) { return t == DType::f16 || t == DType::bf16 || t == DType::i16 || t == DType::u16; }
bool is_64bit_int(DType t) { return t == DType::i64 || t == DType::u64; }

// Strips the C++ raw-string wrapper lines of a shaders/*.glsl file (see the file's header).
std::string strip_embed(const char* raw) {
  std::string s = raw;
  const std::string open = "\n#endif\n", close = "\n#ifdef __cplusplus";
  size_t a = s.find(open);
  size_t b = s.rfind(close);
  if (a == std::string::npos || b == std::string::npos || b < a) return s;
  return s.substr(a + open.size(), b - a - open.size() + 1);
}

}  // namespace

const std::string& gemm_template() {
  static const std::string s = strip_embed(
#include "shaders/gemm.glsl"
  );
  return s;
}

const std::string& conv_template() {
  static const std::string s = strip_embed(
#include "shaders/conv.glsl"
  );
  return s;
}

ContractionTiles choose_tiles(const KernelSpec& k, const PhysicalDeviceInfo& dev) {
  ContractionTiles t;
  int64_t m = 0, n = 0;
  if (k.matmul) {
    m = k.matmul->m, n = k.matmul->n;
  } else if (k.conv) {
    const ConvDesc& c = *k.conv;
    const int64_t cg = c.c / std::max<int64_t>(c.groups, 1), kg = c.k / std::max<int64_t>(c.groups, 1);
    // Depthwise and tiny reductions: a tile would be mostly padding, so one thread per output.
    if (cg * c.r * c.s < 16 || kg < 4) t.conv_direct = 1;
    m = kg, n = c.n * c.oh * c.ow;
  }
  // M <= 8 matmuls (GEMV-like: batch-1 linear layers) take gemm.glsl's skinny path, whose
  // workgroup is 256 threads: 8 groups of 32 splitting K over 32 columns.
  if (k.matmul && m <= 8 && dev.max_invocations >= 256) {
    t.skinny = 1, t.bm = 16, t.tm = 1, t.bn = 64, t.tn = 4;
    return t;
  }
  // Skinny problems (GEMV-like, few channels) get 16-wide tiles on that side so a group does
  // not compute 63 rows of padding; the thread count stays (bm/tm)*(bn/tn) = 256.
  if (m <= 16 && n > 16) t.bm = 16, t.tm = 1;
  else if (n <= 16 && m > 16) t.bn = 16, t.tn = 1;
  else if (m <= 32 && n > 32) t.bm = 32, t.tm = 2;
  // Too few tiles to fill the GPU (each workgroup walks all of K; there is no split-K): halve
  // the larger tile side, and its register block with it so the group keeps its size, until
  // there are about 128 workgroups or the tiles are 16 x 16.
  if (k.matmul && m > 0 && n > 0) {
    const int64_t batch = shape_numel(k.space) / (m * n);
    auto groups = [&] { return batch * ((m + t.bm - 1) / t.bm) * ((n + t.bn - 1) / t.bn); };
    while (groups() < 128 && (t.bm > 16 || t.bn > 16)) {
      if (t.bm >= t.bn && t.bm > 16) t.bm /= 2, t.tm = std::max(1, t.tm / 2);
      else t.bn /= 2, t.tn = std::max(1, t.tn / 2);
    }
  }
  // Devices with a small invocation limit (the Vulkan minimum is 128) get 8x8 register blocks.
  while (t.threads() > static_cast<int>(dev.max_invocations) && (t.tm < t.bm || t.tn < t.bn)) {
    if (t.tm < t.bm) t.tm *= 2;
    if (t.threads() > static_cast<int>(dev.max_invocations) && t.tn < t.bn) t.tn *= 2;
  }
  return t;
}

VulkanDialect::VulkanDialect(const PhysicalDeviceInfo& dev, const KernelSpec& k, std::vector<int64_t> element_delta)
    : dev_(dev), delta_(std::move(element_delta)) {
  name = "vulkan";
  value_qualifier = "precise ";
  int64_type = "int64_t";
  int64_suffix = "l";
  local_id = "int(gl_LocalInvocationID.x)";
  group_id = "fz_group_id()";
  num_groups = "fz_num_groups()";
  barrier = "memoryBarrierShared(); barrier();";
  // The backend splits wide dispatches over y (and z), so the cap is x*y, bounded so that
  // group * group_size stays far from 2^31 in 32-bit index mode.
  max_groups = std::min<int64_t>(int64_t{dev.max_group_count[0]} * dev.max_group_count[1], int64_t{1} << 22);
  i64_as_uvec2_ = !dev.shader_int64;
  contraction_ = k.matmul.has_value() || k.conv.has_value();
  subgroups_ = dev.subgroup_reduce && !k.reduce_axes.empty();
  if (contraction_) {
    tiles_ = choose_tiles(k, dev);
    matmul_template = gemm_template();
    conv_template = vk::conv_template();
    matmul_group_size = conv_group_size = tiles_.threads();
    matmul_tile_m = tiles_.bm;
    matmul_tile_n = tiles_.bn;
  }
}

std::string VulkanDialect::matmul_config(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t& work_items) const {
  if (tiles_.skinny) {
    work_items = batch * ((n + 31) / 32);
    return "#define FZ_SKINNY 1\n";
  }
  return Dialect::matmul_config(batch, m, n, k, work_items) + "#define FZ_SKINNY 0\n";
}

std::string VulkanDialect::prelude(const KernelHeader& h) const {
  bool i64 = h.index64, b8 = false, b16 = false, bf16 = false, pairs = false;
  for (auto& b : h.bindings) {
    if (is_64bit_int(b.dtype)) (i64_as_uvec2_ && b.dtype == DType::i64 ? pairs : i64) = true;
    b8 = b8 || is_8bit(b.dtype);
    b16 = b16 || is_16bit(b.dtype);
    bf16 = bf16 || b.dtype == DType::bf16;
  }
  if (i64 && !dev_.shader_int64)
    throw Unsupported("vulkan", "kernel '" + h.name + "' needs 64-bit integers but the device has no shaderInt64");
  std::string s = "#version 450\n";
  if (i64) s += "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n";
  if (b8) s += "#extension GL_EXT_shader_8bit_storage : require\n";
  if (b16) s += "#extension GL_EXT_shader_16bit_storage : require\n";
  if (subgroups_)
    s += "#extension GL_KHR_shader_subgroup_basic : require\n#extension GL_KHR_shader_subgroup_vote : require\n"
         "#extension GL_KHR_shader_subgroup_arithmetic : require\n";
  s += kHelpers;
  if (bf16) s += kBf16Helpers;
  if (pairs) s += kI64PairHelpers;
  return s;
}

std::string VulkanDialect::storage_type(DType t) const {
  auto need = [&](bool have, const char* feature) {
    if (!have)
      throw Unsupported("vulkan", std::string("dtype ") + dtype_name(t) + " needs " + feature + ", which device '" + dev_.name +
                                      "' lacks");
  };
  switch (t) {
    case DType::f32: return "float";
    case DType::i32: return "int";
    case DType::u32: return "uint";
    case DType::i64:
      return i64_as_uvec2_ ? "uvec2" : "int64_t";
    case DType::u64: need(dev_.shader_int64, "shaderInt64"); return "uint64_t";
    case DType::f64: need(dev_.shader_float64, "shaderFloat64"); return "double";  // computed in fp32 like every value
    case DType::f16: need(dev_.storage_16bit, "storageBuffer16BitAccess"); return "float16_t";
    case DType::bf16: need(dev_.storage_16bit, "storageBuffer16BitAccess"); return "uint16_t";
    case DType::i16: need(dev_.storage_16bit, "storageBuffer16BitAccess"); return "int16_t";
    case DType::u16: need(dev_.storage_16bit, "storageBuffer16BitAccess"); return "uint16_t";
    case DType::i8: need(dev_.storage_8bit, "storageBuffer8BitAccess"); return "int8_t";
    case DType::u8:
    case DType::boolean: need(dev_.storage_8bit, "storageBuffer8BitAccess"); return "uint8_t";
    default: throw Unsupported("vulkan", std::string("dtype ") + dtype_name(t) + " is not supported by the vulkan backend");
  }
}

std::string VulkanDialect::to_float(DType t, const std::string& e) const {
  switch (t) {
    case DType::f32: return e;
    case DType::bf16: return "fz_bf16_to_f32(uint(" + e + "))";
    case DType::boolean: return "(uint(" + e + ") != 0u ? 1.0f : 0.0f)";
    case DType::u8:
    case DType::u16: return "float(uint(" + e + "))";
    case DType::i8:
    case DType::i16: return "float(int(" + e + "))";
    case DType::i64: return i64_as_uvec2_ ? "fz_i64_to_float(" + e + ")" : "float(" + e + ")";
    default: return "float(" + e + ")";
  }
}

std::string VulkanDialect::from_float(DType t, const std::string& v) const {
  switch (t) {
    case DType::f32: return v;
    case DType::bf16: return "uint16_t(fz_f32_to_bf16(" + v + "))";
    case DType::boolean: return "uint8_t((" + v + ") != 0.0f ? 1u : 0u)";
    case DType::u8: return "uint8_t(uint(" + v + "))";
    case DType::i8: return "int8_t(int(" + v + "))";
    case DType::u16: return "uint16_t(uint(" + v + "))";
    case DType::i16: return "int16_t(int(" + v + "))";
    case DType::i64: return i64_as_uvec2_ ? "fz_float_to_i64(" + v + ")" : "int64_t(" + v + ")";
    default: return storage_type(t) + "(" + v + ")";
  }
}

std::string VulkanDialect::to_index(DType t, const std::string& e) const {
  if (t == DType::i64 && i64_as_uvec2_) return "fz_idx(int((" + e + ").x))";  // valid indices fit in 32 bits
  if (is_8bit(t) || is_16bit(t)) return "fz_idx(int(" + e + "))";
  return "fz_idx(" + e + ")";
}

std::string VulkanDialect::cast(const std::string& type, const std::string& e) const { return type + "(" + e + ")"; }

std::string VulkanDialect::element(int slot, const std::string& idx) const {
  const int64_t d = slot < static_cast<int>(delta_.size()) ? delta_[slot] : 0;
  return "b" + std::to_string(slot) + ".d[" + (d == 0 ? idx : "(" + idx + ") + " + std::to_string(d)) + "]";
}

std::string VulkanDialect::declare_buffers(const KernelHeader& h) const {
  std::string s;
  for (auto& b : h.bindings) {
    const std::string i = std::to_string(b.slot);
    s += "layout(std430, set = 0, binding = " + i + ") " + (b.no_alias ? "restrict " : "") + (b.written ? "" : "readonly ") +
         "buffer B" + i + " { " + storage_type(b.dtype) + " d[]; } b" + i + ";\n";
  }
  // Contraction templates declare their own local size (a specialization constant).
  if (!contraction_) s += "layout(local_size_x = " + std::to_string(h.group_size) + ") in;\n";
  return s;
}

std::string VulkanDialect::shared_array(const std::string& type, const std::string& nm, int64_t count) const {
  return "shared " + type + " " + nm + "[" + std::to_string(count) + "];\n";
}

std::string VulkanDialect::kernel_begin(const KernelHeader&) const { return "void main() {\n"; }

std::string VulkanDialect::intrinsic(const std::string& nm) const {
  if (nm == "erf") return "fz_erf";
  if (nm == "pow") return "fz_pow";
  if (nm == "tanh") return "fz_tanh";
  return nm;
}

std::string VulkanDialect::group_reduce(const std::string& v, const std::string& comb, const std::string& red,
                                        int64_t group_size) const {
  if (!subgroups_) return Dialect::group_reduce(v, comb, red, group_size);
  // Subgroup arithmetic first, then one partial per subgroup through shared memory: two
  // barriers instead of log2(group) of them. Subgroup max/min follow SPIR-V FMax/FMin (a NaN
  // operand may be dropped), so NaN is propagated explicitly as fz_max/fz_min require.
  std::string sub;
  if (comb == "fz_add") sub = "subgroupAdd(" + v + ")";
  else if (comb == "fz_mul") sub = "subgroupMul(" + v + ")";
  else if (comb == "fz_max" || comb == "fz_min")
    sub = "(subgroupAny(fz_nan_b(" + v + ")) ? fz_nan() : " + (comb == "fz_max" ? "subgroupMax(" : "subgroupMin(") + v + "))";
  else return Dialect::group_reduce(v, comb, red, group_size);
  std::string s = "    {\n      float fz_sg = " + sub + ";\n";
  s += "      if (subgroupElect()) " + red + "[gl_SubgroupID] = fz_sg;\n      " + barrier + "\n";
  s += "      " + v + " = " + red + "[0];\n";
  s += "      for (uint fz_s = 1u; fz_s < gl_NumSubgroups; ++fz_s) " + v + " = " + comb + "(" + v + ", " + red + "[fz_s]);\n";
  s += "      " + barrier + "\n    }\n";
  return s;
}

}  // namespace fusor::vk
