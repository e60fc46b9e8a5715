// VulkanDialect: GLSL 4.50 for Vulkan 1.2 (std430 storage buffers, one binding per slot).
#include "backends/vulkan/vk_dialect.h"

#include <algorithm>
#include <sstream>
#include <fstream>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <thread>
#include <set>

#include "backends/vulkan/vk_coopmat.h"
#include "backends/vulkan/vk_glsl_helpers.h"
#include "ir/scalar.h"

namespace fusor::vk {

namespace {

// Whether the shaders' fma rounds once (fz_div_by's fma residual needs it). NVIDIA's does (FFMA);
// lavapipe's may round twice, so other vendors keep the Dekker residual. FUSOR_VK_DIV_FMA=0/1
// overrides (measuring; 1 on a device whose fma rounds twice gives wrong quotients).
bool fused_fma(const PhysicalDeviceInfo& dev) {
  if (const char* e = std::getenv("FUSOR_VK_DIV_FMA"); e && *e) return std::strcmp(e, "0") != 0;
  return dev.vendor_id == 0x10DE;
}
bool is_8bit(DType t) { return t == DType::i8 || t == DType::u8 || t == DType::boolean; }
bool is_16bit(DType t) { return t == DType::f16 || t == DType::bf16 || t == DType::i16 || t == DType::u16; }

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

const std::string& gemm_coopmat_template() {
  // FUSOR_VK_COOPMAT_TEMPLATE=FILE (measuring template variants without a rebuild) replaces it.
  static const std::string s = [] {
    if (const char* f = std::getenv("FUSOR_VK_COOPMAT_TEMPLATE"); f && *f)
      if (std::ifstream in{f}) {
        std::stringstream ss;
        ss << in.rdbuf();
        return strip_embed(ss.str().c_str());
      }
    return strip_embed(
#include "shaders/gemm_coopmat.glsl"
    );
  }();
  return s;
}

// float64 transcendentals (GLSL has none): included in every kernel that computes in double.
const std::string& f64_math_source() {
  static const std::string s = strip_embed(
#include "shaders/f64_math.glsl"
  );
  return s;
}

const std::string& conv_template() {
  static const std::string s = strip_embed(
#include "shaders/conv.glsl"
  );
  return s;
}

std::string VulkanDialect::div_prep_literal(float b) const {
  // fz_div_prep's value, computed here in IEEE fp32 (the host's 1 / y is correctly rounded, as
  // fz_div_by needs); a divisor fz_div_by would send to fz_div anyway gains nothing.
  const float y = std::fabs(b);
  if (!(y >= 8.8817842e-16f && y <= 1.12589991e15f)) return "";
  volatile float cy = 4097.0f * y;  // volatile: no contraction or reassociation of the split
  const float yh = cy - (cy - y), yl = y - yh;
  return "vec4(" + fz_float_literal(b) + ", " + fz_float_literal(1.0f / y) + ", " + fz_float_literal(yh) + ", " +
         fz_float_literal(yl) + ")";
}

VulkanDialect::VulkanDialect(const PhysicalDeviceInfo& dev, const KernelSpec& k, std::vector<int64_t> element_delta,
                             const Plan* plan, int64_t split_budget)
    : dev_(dev), delta_(std::move(element_delta)) {
  name = "vulkan";
  value_qualifier = "precise ";
  int64_type = "int64_t";
  int64_suffix = "l";
  local_id = "int(gl_LocalInvocationID.x)";
  group_id = "fz_group_id()";
  num_groups = "fz_num_groups()";
  barrier = "memoryBarrierShared(); barrier();";
  unroll = "[[unroll]] ";  // GL_EXT_control_flow_attributes, enabled in every prelude
  entry_named = false;     // the entry point is main: sources do not name their kernel
  div_prep_type = "vec4";  // fz_div_prep / fz_div_by in the prelude
  // lavapipe: gallivm's loop limiter ends every loop after 65535 iterations per invocation in
  // all (red-team round 6: CumSum, ArgMax, ReduceLogSumExp over rows of 70001 were cut short).
  if (dev.type == VK_PHYSICAL_DEVICE_TYPE_CPU && dev.name.find("llvmpipe") != std::string::npos) {
    max_loop_iterations = 65535;
    max_table_entries = 160;  // the node suite's largest Resize (cubic 4x4 -> 9x10: 152) still runs here
  }
  // A CPU device runs a few SIMD lanes per core, not thousands of threads (a scan scatter of
  // 16,384 threads x 60,000 updates took 6.9 s on lavapipe, red-team round 30).
  if (dev.type == VK_PHYSICAL_DEVICE_TYPE_CPU)
    parallel_lanes = std::max<int64_t>(8, 8 * static_cast<int64_t>(std::thread::hardware_concurrency()));
  float_pow_in_double = dev.shader_float64 && !driver_pow_knob();  // fz_pow through fz_powd (f64_math.glsl)
  has_f64 = dev.shader_float64;
  // The backend splits wide dispatches over y (and z), so the cap is x*y, bounded so that
  // group * group_size stays far from 2^31 in 32-bit index mode.
  max_groups = std::min<int64_t>(int64_t{dev.max_group_count[0]} * dev.max_group_count[1], int64_t{1} << 22);
  contraction_ = k.matmul.has_value() || k.conv.has_value();
  subgroups_ = dev.subgroup_reduce && !k.reduce_axes.empty();
  shuffles_ = subgroups_ && dev.subgroup_shuffle;
  if (contraction_) {
    tiles_ = choose_tiles(k, dev, plan && k.matmul ? static_cast<int>(dtype_size(plan->buffers[k.matmul->b_buffer].dtype)) : 4,
                          split_budget);
    matmul_template = gemm_template();
    if (plan && k.matmul)
      if (std::optional<CoopmatShape> s = choose_coopmat(k, *plan, dev)) {
        ContractionTiles t =
            choose_coopmat_tiles(*s, k.matmul->m, k.matmul->n, dev, shape_numel(k.space) / std::max<int64_t>(1, k.matmul->m * k.matmul->n),
                                 k.matmul->k);
        // One workgroup per compute unit: on the H200 the 64 x 1024 x 4096 fp16 layer (256
        // tiles) ran 17.8 us unsplit and 24.8 us split in 2 (docs/benchmarks.md, third session).
        // On by default since the H200 run of the fourth session (correct, and 64 x 4096 x
        // 1024 went 126.5 -> 29.6 us); FUSOR_VK_COOPMAT_SPLIT_K=0 turns it off.
        const char* cs = std::getenv("FUSOR_VK_COOPMAT_SPLIT_K");
        if (!cs || std::atoi(cs) >= 1) choose_split_k(t, k, dev, split_budget, 1, "FUSOR_VK_COOPMAT_SPLIT_K");
        t.cm_emulate = coopmat_emulated(dev) ? 1 : 0;
        t.cm_bf16 = plan->buffers[k.matmul->a_buffer].dtype == DType::bf16 ? 1 : 0;
        t.cm_kb_spec = t.cm_bf16 || (!dev.coopmat_nv && t.cm_m == t.cm_k && t.cm_n == t.cm_k) ? 1 : 0;
        if (t.coopmat_shared_bytes() <= static_cast<int64_t>(dev.max_shared_memory)) {
          const ContractionTiles tiled = tiles_;
          tiles_ = t;
          matmul_template = gemm_coopmat_template();
          // bf16 is staged as packed bits only (float16_t(x) would round it as fp16): both
          // operands need vector groups, else the tiled path.
          if (t.cm_bf16) {
            choose_coopmat_vec(*plan, k);
            if (a_cm_vec_ < 2 || b_cm_vec_ < 2) {
              if (const char* f = std::getenv("FUSOR_VK_COOPMAT"); f && std::strcmp(f, "force") == 0)
                throw Error("vulkan", "kernel '" + k.name + "': FUSOR_VK_COOPMAT=force but its bf16 operands cannot be staged " +
                                          "as packed vectors (K, N, offsets or strides not multiples of 2)");
              tiles_ = tiled;
              matmul_template = gemm_template();
              a_cm_slot_ = b_cm_slot_ = -1;
              a_cm_vec_ = b_cm_vec_ = 0;
            }
          }
        }
      }
    conv_template = vk::conv_template();
    matmul_group_size = conv_group_size = tiles_.threads();
    matmul_tile_m = tiles_.bm;
    matmul_tile_n = tiles_.bn;
    split_bytes_ = splitk_workspace_bytes(tiles_, k);
    if (split_bytes_ > 0) split_cnt_ = split_counters(tile_count(tiles_, k));
    if (plan && k.matmul && !tiles_.skinny && !tiles_.coopmat) choose_vec4(*plan, k);
    if (plan && k.matmul && tiles_.skinny == 2) {  // the vector GEMV path reads only B 4-wide
      choose_vec4(*plan, k);
      a_vec4_slot_ = -1;
    }
    if (plan && k.matmul && tiles_.coopmat) {
      choose_coopmat_vec(*plan, k);
      choose_coopmat_direct(k);
    }
    if (plan && k.conv && !tiles_.conv_direct && tiles_.conv_db) choose_conv_vec4(*plan, k);
  }
}

std::string VulkanDialect::conv_config(const ConvDesc&, int64_t&) const {
  // FZ_CONV_DB 0: conv.glsl's previous K loop (A/B); the direct path declares its (unused)
  // shared slices at that loop's size, as before.
  std::string s = tiles_.conv_db && !tiles_.conv_direct ? "" : "#define FZ_CONV_DB 0\n";
  if (tiles_.conv_direct) return s;
  if (tiles_.blocked) s += "#define FZ_BLOCKED 1\n";  // vec4 slices, 16 x 16 threads (FUSOR_VK_CONV_TILE)
  if (a_vec4_slot_ >= 0)  // the weights 4 kd at a time (choose_conv_vec4)
    s += "#define FZ_W_VEC4 1\n#define FZ_LOAD_W4(off) b" + std::to_string(a_vec4_slot_) + "v.d[((off)" +
         (a_vec4_delta_ ? " + " + std::to_string(a_vec4_delta_) : std::string()) + ") / 4]\n";
  if (tiles_.split_k <= 1) return s;
  return s + "#define FZ_SPLIT_K " + std::to_string(tiles_.split_k) + "\n#define FZ_SPLIT_SLICE " + std::to_string(tiles_.split_slice) + "\n";
}

// gemm.glsl's / conv.glsl's serial loops per invocation (Dialect::contraction_loop_trips):
// the grid-stride loop over work items times, per item, the K loop (with the loops a step
// runs that the compiler cannot unroll) plus the partial-sum tree and split-K adds. Counted
// high rather than low: lavapipe cuts a kernel short past its limit (red-team round 20: a
// 2 x 4.3M GEMV summed 3% of its terms), so one near the limit runs on the host instead.
int64_t VulkanDialect::contraction_loop_trips(const KernelSpec& k, int64_t groups) const {
  const auto cdiv = [](int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : a; };
  const auto log2 = [](int64_t v) {
    int64_t l = 0;
    while (v > 1) v >>= 1, ++l;
    return l;
  };
  const ContractionTiles& t = tiles_;
  groups = std::max<int64_t>(groups, 1);
  const int64_t split = std::max(t.split_k, 1);
  if (k.matmul) {
    const MatMulDesc& m = *k.matmul;
    const int64_t batch = m.m > 0 && m.n > 0 ? shape_numel(k.space) / (m.m * m.n) : 0;
    const int64_t slice = split > 1 ? t.split_slice : m.k;
    if (t.skinny == 1) {  // K groups of FZ_SK_THREADS / FZ_SK_COLS threads, FZ_SK_UNROLL rounds a trip
      const int64_t kg = std::max(t.skinny_threads / std::max(t.skinny_cols, 1), 1);
      return cdiv(batch * cdiv(m.n, t.skinny_cols), groups) * (cdiv(m.k, kg * std::max(t.skinny_unroll, 1)) + log2(kg) + 2);
    }
    if (t.skinny == 2) {  // lanes of 4 columns, K groups over each slice
      const int64_t kg = std::max<int64_t>(t.skinny_threads / std::max(t.skinny_cols / 4, 1), 1);
      return cdiv(batch * cdiv(m.n, t.skinny_cols) * split, groups) * (cdiv(slice, kg) + log2(kg) + split + 2);
    }
    const int64_t bk = t.coopmat ? t.cm_bk : t.bk;  // tiled, blocked and cooperative-matrix tiles
    return cdiv(batch * cdiv(m.m, t.bm) * cdiv(m.n, t.bn) * split, groups) * (cdiv(slice, bk) + split + 2);
  }
  if (k.conv) {
    const ConvDesc& c = *k.conv;
    const int64_t g = std::max<int64_t>(c.groups, 1), cg = c.c / g, kd = cg * c.r * c.s;
    if (t.conv_direct) {  // one output a thread: a trip per tap (lavapipe unrolls the short r, s loops)
      const int64_t per_thread = cdiv(shape_numel(k.space), groups * std::max<int64_t>(conv_group_size, 1));
      return per_thread * (1 + kd);
    }
    const int64_t threads = std::max(t.threads(), 1), slice = split > 1 ? t.split_slice : kd;
    // The single-buffered loop (FZ_CONV_DB 0) stages and multiplies in plain loops.
    const int64_t step = t.conv_db ? 1 : 1 + cdiv(int64_t{t.bk} * t.bm, threads) + cdiv(int64_t{t.bk} * t.bn, threads) +
                                             int64_t{t.bk} * (1 + t.tm + t.tn + t.tm * (1 + t.tn));
    const int64_t items = cdiv(c.k / g, t.bm) * cdiv(c.n * c.oh * c.ow, t.bn) * g * split;
    return cdiv(items, groups) * (cdiv(slice, t.bk) * step + split + 2);
  }
  return 0;
}

void VulkanDialect::set_split_counters(int64_t n) {
  if (split_bytes_ <= 0 || n <= split_cnt_) return;
  split_bytes_ += 4 * (n - split_cnt_);
  split_cnt_ = n;
}

std::string VulkanDialect::matmul_config(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t& work_items) const {
  // A 4-group as a vec4: fp32 directly, fp16 converted (exact), bf16 from two packed words.
  auto vec4 = [](std::string& s, const char* op, int slot, int64_t delta, DType t) {
    if (slot < 0) return;
    const std::string load = "b" + std::to_string(slot) + "v.d[((off)" + (delta ? " + " + std::to_string(delta) : std::string()) + ") / 4]";
    s += std::string("#define FZ_") + op + "_VEC4 1\n#define FZ_LOAD_" + op + "4(off) " +
         (t == DType::bf16 ? "fz_bf16x4(" + load + ")" : t == DType::f16 ? "vec4(" + load + ")" : load) + "\n";
  };
  if (tiles_.skinny) {
    work_items = batch * ((n + tiles_.skinny_cols - 1) / tiles_.skinny_cols);
    std::string s = "#define FZ_SKINNY " + std::to_string(tiles_.skinny) + "\n#define FZ_SK_COLS " + std::to_string(tiles_.skinny_cols) +
                    "\n#define FZ_SK_THREADS " + std::to_string(tiles_.skinny_threads) + "\n";
    if (tiles_.skinny == 1)
      s += "#define FZ_SK_UNROLL " + std::to_string(tiles_.skinny_unroll) + "\n#define FZ_SK_RADIX " + std::to_string(gemv_tree_radix()) + "\n";
    if (tiles_.split_k > 1) {
      s += "#define FZ_SPLIT_K " + std::to_string(tiles_.split_k) + "\n#define FZ_SPLIT_SLICE " + std::to_string(tiles_.split_slice) + "\n";
      work_items *= tiles_.split_k;
    }
    vec4(s, "B", b_vec4_slot_, b_vec4_delta_, b_vec4_type_);
    return s;
  }
  if (tiles_.coopmat) {
    const ContractionTiles& t = tiles_;
    work_items = batch * ((m + t.bm - 1) / t.bm) * ((n + t.bn - 1) / t.bn);
    std::string s = t.cm_emulate ? "#define FZ_COOPMAT 1\n#define FZ_CM_EMULATE 1\n" : "#define FZ_COOPMAT 1\n";
    if (t.cm_bf16) s += "#define FZ_CM_BF16 1\n";
    if (t.cm_kb_spec) s += "#define FZ_CM_KB_SPEC 1\n";
    const std::pair<const char*, int> defs[] = {{"FZ_CM_M", t.cm_m},   {"FZ_CM_N", t.cm_n},   {"FZ_CM_K", t.cm_k},
                                                {"FZ_CM_WM", t.cm_wm}, {"FZ_CM_WN", t.cm_wn}, {"FZ_CM_RM", t.cm_rm},
                                                {"FZ_CM_RN", t.cm_rn}, {"FZ_CM_BK", t.cm_bk}, {"FZ_CM_SG", t.cm_sg}};
    for (const auto& [nm, v] : defs) s += std::string("#define ") + nm + " " + std::to_string(v) + "\n";
    if (t.split_k > 1) {
      s += "#define FZ_SPLIT_K " + std::to_string(t.split_k) + "\n#define FZ_SPLIT_SLICE " + std::to_string(t.split_slice) + "\n";
      work_items *= t.split_k;
    }
    auto vec = [&](const char* op, int slot, int width, int64_t delta) {
      if (slot < 0) return;
      s += std::string("#define FZ_CM_V") + op + " " + std::to_string(width) + "\n#define FZ_LOAD_" + op + "V(off) b" +
           std::to_string(slot) + "u" + std::to_string(width) + ".d[((off)" + (delta ? " + " + std::to_string(delta) : std::string()) +
           ") / " + std::to_string(width) + "]\n";
    };
    vec("A", a_cm_slot_, a_cm_vec_, a_cm_delta_);
    vec("B", b_cm_slot_, b_cm_vec_, b_cm_delta_);
    if (t.cm_direct)  // the 8-wide views as uvec4 arrays for the matrix loads
      s += "#define FZ_CM_DIRECT 1\n#define FZ_CM_ABUF b" + std::to_string(a_cm_slot_) + "u8.d\n#define FZ_CM_AOFF " +
           std::to_string(a_cm_delta_) + "\n#define FZ_CM_BBUF b" + std::to_string(b_cm_slot_) + "u8.d\n#define FZ_CM_BOFF " +
           std::to_string(b_cm_delta_) + "\n";
    if (a_cm_col_) s += "#define FZ_CM_A_COL 1\n";
    if (b_cm_col_) s += "#define FZ_CM_B_COL 1\n";
    // Column strips by default: fp16 GPT-2 2L on the H200 173.4 vs 178.8 us (ninth session) and
    // 158.4 vs 165.1 (tenth), the MLP b64 within 1%; same bits (docs/benchmarks.md).
    return s + tile_order(true);
  }
  std::string s = Dialect::matmul_config(batch, m, n, k, work_items) + "#define FZ_SKINNY 0\n";
  if (tiles_.split_k > 1) {
    s += "#define FZ_SPLIT_K " + std::to_string(tiles_.split_k) + "\n#define FZ_SPLIT_SLICE " + std::to_string(tiles_.split_slice) +
         "\n";
    work_items *= tiles_.split_k;
  }
  if (tiles_.blocked) s += "#define FZ_BLOCKED 1\n";
  // Two K slices in flight (gemm.glsl FZ_PREFETCH) unless FUSOR_VK_GEMM_PREFETCH=1: 4-5% faster on
  // the H200's DRAM-bound M = 64 layers (docs/benchmarks.md, eighth session), same bits.
  if (const char* e = std::getenv("FUSOR_VK_GEMM_PREFETCH"); !(e && std::strcmp(e, "1") == 0)) s += "#define FZ_PREFETCH 2\n";
  // FUSOR_VK_GEMM_LITERAL=1: tile sizes as literals (gemm.glsl FZ_TILE_LITERALS), for the A/B.
  if (const char* e = std::getenv("FUSOR_VK_GEMM_LITERAL"); e && std::strcmp(e, "1") == 0)
    s += "#define FZ_TILE_LITERALS 1\n#define FZ_TILE_BM " + std::to_string(tiles_.bm) + "\n#define FZ_TILE_BN " +
         std::to_string(tiles_.bn) + "\n#define FZ_TILE_BK " + std::to_string(tiles_.bk) + "\n#define FZ_TILE_TM " +
         std::to_string(tiles_.tm) + "\n#define FZ_TILE_TN " + std::to_string(tiles_.tn) + "\n";
  vec4(s, "A", a_vec4_slot_, a_vec4_delta_, a_vec4_type_);
  vec4(s, "B", b_vec4_slot_, b_vec4_delta_, b_vec4_type_);
  return s + tile_order(false);
}

// FZ_TILE_N_MAJOR: output tiles walked column strip by column strip (gemm.glsl,
// gemm_coopmat.glsl), so the M tiles sharing a B strip run together; same bits.
std::string VulkanDialect::tile_order(bool n_major_default) {
  const char* e = std::getenv("FUSOR_VK_TILE_ORDER");
  const bool n = e && std::strcmp(e, "n") == 0 ? true : e && std::strcmp(e, "m") == 0 ? false : n_major_default;
  return n ? "#define FZ_TILE_N_MAJOR 1\n" : "";
}

std::string VulkanDialect::prelude(const KernelHeader& h) const {
  bool b8 = false, b16 = h.uses_f16 || h.uses_bf16, bf16 = h.uses_bf16, f16 = h.uses_f16;
  for (auto& b : h.bindings) {
    b8 = b8 || is_8bit(b.dtype);
    b16 = b16 || is_16bit(b.dtype);
    bf16 = bf16 || b.dtype == DType::bf16;
    f16 = f16 || b.dtype == DType::f16;
  }
  const bool i64 = h.index64 || h.uses_i64;
  if (i64 && !dev_.shader_int64)
    throw Unsupported("vulkan", "kernel '" + h.name + "' needs 64-bit integers but device '" + dev_.name + "' has no shaderInt64");
  if (h.uses_f64 && !dev_.shader_float64)
    throw Unsupported("vulkan", "kernel '" + h.name + "' computes in float64 but device '" + dev_.name + "' has no shaderFloat64");
  std::string s = "#version 450\n";
  // Test hook (tests/test_vulkan_div.cpp): perturb fz_div's seed quotient to prove the correction.
  // "N" offsets the seed quotient by N ulp; "N,raw" also skips the correction (the test's control).
  if (const char* p = std::getenv("FUSOR_VK_TEST_DIV_PERTURB")) {
    s += "#define FZ_DIV_PERTURB " + std::to_string(std::atoi(p)) + "\n";
    if (std::strstr(p, ",raw")) s += "#define FZ_DIV_RAW 1\n";
  }
  if (fused_fma(dev_)) s += "#define FZ_FMA_FUSED 1\n";  // fz_div_by's residual by fma
  if (h.float_pow) s += "#define FZ_POW_F64 1\n";        // fz_pow through fz_powd (Dialect::float_pow_in_double)
  s += "#extension GL_EXT_control_flow_attributes : require\n";  // Dialect::unroll
  if (i64) s += "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n";
  if (b8) s += "#extension GL_EXT_shader_8bit_storage : require\n";
  if (b16) s += "#extension GL_EXT_shader_16bit_storage : require\n";
  // gemm_coopmat.glsl: NV cooperative matrices (glslang 12 has no KHR ones; vk_coopmat.h).
  if (tiles_.coopmat)
    s += "#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require\n#extension GL_KHR_memory_scope_semantics : require\n"
         "#extension GL_KHR_shader_subgroup_basic : require\n" +
         std::string(tiles_.cm_emulate ? "#pragma use_vulkan_memory_model\n" : "#extension GL_NV_cooperative_matrix : require\n");
  if (subgroups_)
    s += "#extension GL_KHR_shader_subgroup_basic : require\n#extension GL_KHR_shader_subgroup_vote : require\n"
         "#extension GL_KHR_shader_subgroup_arithmetic : require\n";
  if (shuffles_) s += "#extension GL_KHR_shader_subgroup_shuffle : require\n";
  s += glsl_float_helpers();
  if (bf16) s += glsl_bf16_helpers();
  if (f16) s += glsl_f16_helpers();
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
    case DType::i64: need(dev_.shader_int64, "shaderInt64"); return "int64_t";
    case DType::u64: need(dev_.shader_int64, "shaderInt64"); return "uint64_t";
    case DType::f64: need(dev_.shader_float64, "shaderFloat64"); return "double";
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
    default: return "float(" + e + ")";
  }
}

std::string VulkanDialect::from_float(DType t, const std::string& v) const {
  switch (t) {
    case DType::f32: return v;
    case DType::bf16: return "uint16_t(fz_f32_to_bf16(" + v + "))";
    // The conversion itself where the device rounds it to nearest even, subnormals kept.
    case DType::f16: return dev_.f16_convert_exact() ? "float16_t(" + v + ")" : "float16_t(fz_round_f16(" + v + "))";
    case DType::boolean: return "uint8_t((" + v + ") != 0.0f ? 1u : 0u)";
    case DType::u8: return "uint8_t(uint(" + v + "))";
    case DType::i8: return "int8_t(int(" + v + "))";
    case DType::u16: return "uint16_t(uint(" + v + "))";
    case DType::i16: return "int16_t(int(" + v + "))";
    default: return storage_type(t) + "(" + v + ")";
  }
}

// Always the software rounding: NVIDIA's compiler folds float(float16_t(x)) to x, so the
// hardware conversion rounds only on a store (measured on the H100: NumericsEpilogue.HalfMatMulThenAddRoundsTwice).
std::string VulkanDialect::round_value(DType t, const std::string& v) const {
  if (t == DType::f16) return "float(float16_t(fz_round_f16(" + v + ")))";
  return to_float(t, from_float(t, v));
}

std::string VulkanDialect::to_index(DType t, const std::string& e) const {
  if (is_8bit(t) || is_16bit(t)) return "fz_idx(int(" + e + "))";
  return "fz_idx(" + e + ")";
}

std::string VulkanDialect::cast(const std::string& type, const std::string& e) const { return type + "(" + e + ")"; }

std::string VulkanDialect::element(int slot, const std::string& idx) const {
  if (banks_.count(slot)) return "fz_bank" + std::to_string(slot) + "(" + idx + ")";
  const int64_t d = slot < static_cast<int>(delta_.size()) ? delta_[slot] : 0;
  return "b" + std::to_string(slot) + ".d[" + (d == 0 ? idx : "(" + idx + ") + " + std::to_string(d)) + "]";
}

std::string VulkanDialect::view_offset(size_t view, const std::string& literal, int64_t offset) const {
  if (!push_offsets_ || view >= kPushOffsets || offset < INT32_MIN || offset > INT32_MAX)
    return Dialect::view_offset(view, literal, offset);
  if (push_values_.size() <= view) push_values_.resize(view + 1, 0);
  push_values_[view] = static_cast<int32_t>(offset);
  return "fz_idx(fz_pc.o[" + std::to_string(view) + "])";
}

bool VulkanDialect::row_vector_ok(int slot, DType t, int64_t offset) const {
  if (const char* e = std::getenv("FUSOR_VK_ROW_VEC4"); e && std::strcmp(e, "0") == 0) return false;
  if ((t != DType::f32 && t != DType::f16 && t != DType::bf16) || push_offsets_ || banks_.count(slot) || dev_.min_storage_offset_alignment == 0 ||
      dev_.min_storage_offset_alignment % 16 != 0)
    return false;
  const int64_t d = slot >= 0 && slot < static_cast<int>(delta_.size()) ? delta_[slot] : 0;
  return (offset + d) % 4 == 0;
}

std::string VulkanDialect::row_vector_element(int slot, const std::string& idx) const {
  // The slot's element delta (a windowed piece's binding starts before its first element) is a
  // multiple of 4 here (row_vector_ok): whole vectors.
  const int64_t d = slot >= 0 && slot < static_cast<int>(delta_.size()) ? delta_[slot] : 0;
  return "b" + std::to_string(slot) + "r.d[" + idx + (d ? " + " + std::to_string(d / 4) : std::string()) + "]";
}

std::string VulkanDialect::declare_buffers(const KernelHeader& h) const {
  std::string s;
  if (push_offsets_) s += "layout(push_constant) uniform FzPush { int o[" + std::to_string(kPushOffsets) + "]; } fz_pc;\n";
  for (auto& b : h.bindings) {
    const std::string i = std::to_string(b.slot);
    // A slot declared 4-wide too keeps restrict: a written one is only ever accessed through
    // its 4-wide view (one output view per buffer), a read-only one is never written.
    const std::string quals = std::string(b.no_alias ? "restrict " : "") + (b.written ? "" : "readonly ");
    s += "layout(std430, set = 0, binding = " + i + ") " + quals + "buffer B" + i + " { " + storage_type(b.dtype) + " d[]; } b" +
         i + ";\n";
    if (b.row_vector)
      s += "layout(std430, set = 0, binding = " + i + ") " + quals + "buffer B" + i + "r { " + row_vector_type(b.dtype) +
           " d[]; } b" + i + "r;\n";
  }
  if (h.status_slot >= 0)
    s += "layout(std430, set = 0, binding = " + std::to_string(h.status_slot) + ") buffer FzStatus { uint code; } fz_status;\n"
         "#define FZ_INDEX_ERROR atomicMax(fz_status.code, " + std::to_string(index_error_code(h.kernel_index)) + "u)\n";
  // Split-K workspace: the slot after the kernel's (and after its status word). coherent: the
  // partials one workgroup stores are read by the last-arriving one (gemm.glsl).
  if (tiles_.split_k > 1)
    s += "layout(std430, set = 0, binding = " + std::to_string(h.bindings.size() + (h.status_slot >= 0 ? 1 : 0)) +
         ") coherent buffer FzSplit { uint cnt[" + std::to_string(split_cnt_) + "]; float part[]; } fz_split;\n";
  // 4-wide views of gemm.glsl's operands (the same binding declared a second time).
  for (auto [slot, t] : {std::pair{a_vec4_slot_, a_vec4_type_}, std::pair{b_vec4_slot_ == a_vec4_slot_ ? -1 : b_vec4_slot_, b_vec4_type_}})
    if (slot >= 0)
      s += "layout(std430, set = 0, binding = " + std::to_string(slot) + ") readonly buffer B" + std::to_string(slot) + "v { " +
           (t == DType::bf16 ? "uvec2" : t == DType::f16 ? "f16vec4" : "vec4") + " d[]; } b" + std::to_string(slot) + "v;\n";
  // Packed-half views of gemm_coopmat.glsl's fp16 operands: uint / uvec2 / uvec4 per 2 / 4 / 8
  // halves (the binding declared once more; A and B of one buffer at one width share a view).
  auto view = [&](int slot, int vec) {
    const std::string nm = "b" + std::to_string(slot) + "u" + std::to_string(vec);
    s += "layout(std430, set = 0, binding = " + std::to_string(slot) + ") readonly buffer B" + nm.substr(1) + " { " +
         (vec == 8 ? "uvec4" : vec == 4 ? "uvec2" : "uint") + " d[]; } " + nm + ";\n";
  };
  if (a_cm_slot_ >= 0) view(a_cm_slot_, a_cm_vec_);
  if (b_cm_slot_ >= 0 && (b_cm_slot_ != a_cm_slot_ || b_cm_vec_ != a_cm_vec_)) view(b_cm_slot_, b_cm_vec_);
  // Banked read-only slots: the extra banks, and the reader element() calls.
  for (const auto& [slot, bank] : banks_) {
    DType dt = DType::f32;
    for (const BindingInfo& b : h.bindings)
      if (b.slot == slot) dt = b.dtype;
    const std::string i = std::to_string(slot), t = storage_type(dt);
    const std::string sfx = h.index64 ? int64_suffix : "";  // literals of the kernel's index type
    const std::string elems = std::to_string(bank.elems) + sfx;
    std::string body = "  const fz_idx fz_p = fz_i + " + std::to_string(bank.delta) + sfx + ";\n  const int fz_j = int(fz_p / " +
                       elems + ");\n  const fz_idx fz_l = fz_p - fz_idx(fz_j) * " + elems + ";\n";
    for (int j = 1; j < bank.count; ++j) {
      const std::string nm = "b" + i + "k" + std::to_string(j);
      s += "layout(std430, set = 0, binding = " + std::to_string(bank.first_binding + j - 1) + ") readonly buffer B" +
           nm.substr(1) + " { " + t + " d[]; } " + nm + ";\n";
      body += "  if (fz_j == " + std::to_string(j) + ") return " + nm + ".d[fz_l];\n";
    }
    s += t + " fz_bank" + i + "(fz_idx fz_i) {\n" + body + "  return b" + i + ".d[fz_l];\n}\n";
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
  // FUSOR_VK_BUILTIN_MATH=1 keeps GLSL's exp / log / sin / cos / tan / asin / acos (up to 10^9
  // ulp off, see vk_glsl_helpers.cpp) and sqrt (~3 ulp allowed) for A/B timing of the accurate
  // ones; never for results.
  static const bool builtin = [] {
    const char* e = std::getenv("FUSOR_VK_BUILTIN_MATH");
    return e && std::strcmp(e, "1") == 0;
  }();
  if (!builtin && (nm == "exp" || nm == "log" || nm == "sin" || nm == "cos" || nm == "tan" || nm == "asin" || nm == "acos" ||
                   nm == "sqrt"))
    return "fz_" + nm;  // vk_glsl_helpers.cpp
  if (nm == "atan" || nm == "asinh" || nm == "acosh" || nm == "atanh" || nm == "sinh" || nm == "cosh") return "fz_" + nm;
  return nm;
}

std::string VulkanDialect::group_reduce(const std::string& v, const std::string& comb, const std::string& red,
                                        int64_t group_size, const std::string& type) const {
  if (!subgroups_) return Dialect::group_reduce(v, comb, red, group_size, type);
  // Subgroup arithmetic first, then one partial per subgroup through shared memory: two
  // barriers instead of log2(group) of them. Subgroup max/min follow SPIR-V FMax/FMin (a NaN
  // operand may be dropped), so NaN is propagated explicitly as fz_max/fz_min require.
  std::string sub;
  if (comb == "fz_add") sub = "subgroupAdd(" + v + ")";
  else if (comb == "fz_mul") sub = "subgroupMul(" + v + ")";
  else if (comb == "fz_max" || comb == "fz_min")
    sub = "(subgroupAny(fz_nan_b(" + v + ")) ? fz_nan() : " + (comb == "fz_max" ? "subgroupMax(" : "subgroupMin(") + v + "))";
  else return Dialect::group_reduce(v, comb, red, group_size, type);
  std::string s = "    {\n      " + type + " fz_sg = " + sub + ";\n";
  s += "      if (subgroupElect()) " + red + "[gl_SubgroupID] = fz_sg;\n      " + barrier + "\n";
  s += "      " + v + " = " + red + "[0];\n";
  s += "      for (uint fz_s = 1u; fz_s < gl_NumSubgroups; ++fz_s) " + v + " = " + comb + "(" + v + ", " + red + "[fz_s]);\n";
  s += "      " + barrier + "\n    }\n";
  return s;
}

// A butterfly of subgroupShuffleXor over full subgroups (every lane ends with the same pair:
// fz_csum2 is symmetric), then one pair per subgroup through shared memory, added in subgroup
// order. Full subgroups: the group is a multiple of the device's subgroup size (powers of two).
std::string VulkanDialect::group_reduce_csum(const std::string& s, const std::string& c, const std::string& red,
                                             const std::string& redc, int64_t group_size) const {
  if (!shuffles_ || dev_.subgroup_size == 0 || group_size % dev_.subgroup_size != 0)
    return Dialect::group_reduce_csum(s, c, red, redc, group_size);
  // Checked at run time too (a uniform branch): shuffles read only full subgroups.
  std::string t = "    if (gl_SubgroupSize * gl_NumSubgroups == " + std::to_string(group_size) + "u) {\n";
  t += "    for (uint fz_o = gl_SubgroupSize >> 1; fz_o > 0u; fz_o >>= 1) {\n";
  t += "      float fz_s2 = subgroupShuffleXor(" + s + ", fz_o), fz_c2 = subgroupShuffleXor(" + c + ", fz_o);\n";
  t += "      fz_csum2(" + s + ", " + c + ", fz_s2, fz_c2);\n    }\n";
  t += "    if (subgroupElect()) {\n      " + red + "[gl_SubgroupID] = " + s + ";\n      " + redc + "[gl_SubgroupID] = " + c +
       ";\n    }\n    " + barrier + "\n";
  // The device's subgroup size: a pairwise tree over the partials; another size (a driver that
  // varies it): the same pairs added in order.
  const int64_t n = group_size / dev_.subgroup_size;
  t += "    if (gl_NumSubgroups == " + std::to_string(n) + "u) {\n" + pairwise_csum(s, c, red, redc, n, "      ") + "    } else {\n";
  t += "      " + s + " = " + red + "[0];\n      " + c + " = " + redc + "[0];\n";
  t += "      for (uint fz_w = 1u; fz_w < gl_NumSubgroups; ++fz_w) fz_csum2(" + s + ", " + c + ", " + red + "[fz_w], " + redc + "[fz_w]);\n";
  t += "    }\n    " + barrier + "\n";
  return t + "    } else {\n" + Dialect::group_reduce_csum(s, c, red, redc, group_size) + "    }\n";
}

std::string VulkanDialect::compute_type(DType t) const {
  switch (t) {
    case DType::u8: case DType::u16: case DType::u32: return "uint";
    case DType::i64: return "int64_t";
    case DType::u64: return "uint64_t";
    default: return Dialect::compute_type(t);
  }
}

std::string VulkanDialect::wrap_small(DType t, const std::string& v) const {
  switch (t) {
    case DType::i8: return "bitfieldExtract(" + v + ", 0, 8)";  // sign-extends for int
    case DType::i16: return "bitfieldExtract(" + v + ", 0, 16)";
    case DType::u8: return "((" + v + ") & 0xFFu)";
    case DType::u16: return "((" + v + ") & 0xFFFFu)";
    default: return v;
  }
}

std::string VulkanDialect::int_literal(DType t, int64_t v) const {
  if (t == DType::u64) return "uint64_t(" + std::to_string(static_cast<uint64_t>(v)) + "ul)";
  if (t == DType::i64)
    return v == std::numeric_limits<int64_t>::min() ? "(-9223372036854775807l - 1l)" : "int64_t(" + std::to_string(v) + "l)";
  if (dtype_is_unsigned(t)) return std::to_string(static_cast<uint32_t>(v)) + "u";
  return v == std::numeric_limits<int32_t>::min() ? "(-2147483647 - 1)" : "int(" + std::to_string(v) + ")";
}

std::string VulkanDialect::double_literal(double v) const {
  if (!std::isfinite(v)) return Dialect::double_literal(v);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", std::fabs(v));
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  s += "lf";
  return std::signbit(v) ? "(-" + s + ")" : s;
}

std::string VulkanDialect::typed_intrinsic(const std::string& nm, DType math) const {
  if (dtype_is_integral(math)) return nm == "abs" ? "fz_abs" : nm;
  if (math != DType::f64) return intrinsic(nm);
  // GLSL has double abs/floor/ceil/sqrt/trunc/roundEven/fma but no double transcendentals
  // (and its sqrt need not be correctly rounded: fz_sqrtd).
  // shaders/f64_math.glsl implements the rest as fz_<name>d.
  if (nm == "exp") return "fz_expd";
  if (nm == "log") return "fz_logd";
  if (nm == "fz_log1p") return "fz_log1pd";
  if (nm == "fz_expm1") return "fz_expm1d";
  if (nm == "sqrt") return "fz_sqrtd";
  static const std::set<std::string> mine = {"tanh", "erf", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
                                             "cosh", "asinh", "acosh", "atanh", "pow", "exp2", "log2"};
  if (mine.count(nm)) return "fz_" + nm + "d";
  return nm;
}

std::string VulkanDialect::typed_helpers(const KernelHeader& h) const {
  // T: the type, U: its unsigned twin, W: its width; GLSL int arithmetic wraps, and SPIR-V OpSDiv
  // truncates. Signed fz_ishr is arithmetic (BitShift-28); b < 0 or >= W gives the sign fill.
  static const char* kSigned = R"(T fz_iadd(T a, T b) { return a + b; }
T fz_isub(T a, T b) { return a - b; }
T fz_imul(T a, T b) { return a * b; }
T fz_ineg(T a) { return -a; }
T fz_max(T a, T b) { return a < b ? b : a; }
T fz_min(T a, T b) { return b < a ? b : a; }
T fz_abs(T a) { return a < T(0) ? T(U(0) - U(a)) : a; }
T fz_sign(T a) { return a > T(0) ? T(1) : (a < T(0) ? T(-1) : T(0)); }
T fz_idiv(T a, T b) { return b == T(0) ? T(0) : (b == T(-1) ? T(U(0) - U(a)) : a / b); }
T fz_ifmod(T a, T b) { return (b == T(0) || b == T(-1)) ? T(0) : a - (a / b) * b; }
T fz_imod(T a, T b) { T r = fz_ifmod(a, b); return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? r + b : r; }
T fz_ishl(T a, T b) { return (b >= T(0) && b < T(W)) ? a << b : T(0); }
T fz_ishr(T a, T b) { return (b >= T(0) && b < T(W)) ? a >> b : (a < T(0) ? T(-1) : T(0)); }
T fz_ipow(T a, T b) {
  if (b < T(0)) return a == T(1) ? T(1) : (a == T(-1) ? ((b & T(1)) != T(0) ? T(-1) : T(1)) : T(0));
  T r = T(1);
  for (; b != T(0); b >>= 1, a = a * a) if ((b & T(1)) != T(0)) r = r * a;
  return r;
}
float fz_rto_f32(T i) {  // i as a float rounded to odd (codegen_types.cpp convert_value)
  float f = float(i);
  bool away;
  if (f >= float(U(1) << (W - 1))) away = true;  // 2^(W-1): past T, so above i
  else {
    T back = T(f);
    if (back == i) return f;
    away = i > T(0) ? back > i : back < i;
  }
  uint b = floatBitsToUint(f);
  return uintBitsToFloat((away ? b - 1u : b) | 1u);
}
)";
  static const char* kUnsigned = R"(T fz_iadd(T a, T b) { return a + b; }
T fz_isub(T a, T b) { return a - b; }
T fz_imul(T a, T b) { return a * b; }
T fz_ineg(T a) { return T(0) - a; }
T fz_max(T a, T b) { return a < b ? b : a; }
T fz_min(T a, T b) { return b < a ? b : a; }
T fz_abs(T a) { return a; }
T fz_sign(T a) { return a != T(0) ? T(1) : T(0); }
T fz_idiv(T a, T b) { return b == T(0) ? T(0) : a / b; }
T fz_ifmod(T a, T b) { return b == T(0) ? T(0) : a - (a / b) * b; }
T fz_imod(T a, T b) { return fz_ifmod(a, b); }
T fz_ishl(T a, T b) { return b < T(U) ? a << b : T(0); }
T fz_ishr(T a, T b) { return b < T(U) ? a >> b : T(0); }
T fz_ipow(T a, T b) {
  T r = T(1);
  for (; b != T(0); b >>= 1, a = a * a) if ((b & T(1)) != T(0)) r = r * a;
  return r;
}
float fz_rto_f32(T i) {  // i as a float rounded to odd (codegen_types.cpp convert_value)
  float f = float(i);
  bool away;
  if (f >= 2.0 * float(T(1) << (U - 1u))) away = true;  // 2^U: past T, so above i
  else {
    T back = T(f);
    if (back == i) return f;
    away = back > i;
  }
  uint b = floatBitsToUint(f);
  return uintBitsToFloat((away ? b - 1u : b) | 1u);
}
)";
  static const char* kDouble = R"(bool fz_nan_b(double x) { return x != x; }
bool fz_inf_b(double x) { return abs(x) == double(fz_inf()); }
// Correctly rounded below (after f64_math.glsl's exact products): the driver's double OpFDiv
// is not (NVIDIA's was 1 ulp off on Mean's / n, H200).
double fz_div(double a, double b);
double fz_sqrtd(double x);
double fz_max(double a, double b) { return (fz_nan_b(a) || fz_nan_b(b)) ? double(fz_nan()) : (a > b ? a : b); }  // ties: b, as ref
double fz_min(double a, double b) { return (fz_nan_b(a) || fz_nan_b(b)) ? double(fz_nan()) : (a < b ? a : b); }
// Ties to even from floor, not the driver's roundEven: lavapipe's (Mesa 22.3.6, LLVM 15) double
// roundEven rounds ties toward zero (1.5 -> 1, 3.5 -> 3), which moved GridSample's nearest
// taps. |x| >= 2^52 is already an integer (or inf / NaN); x - floor(x) is exact below that.
double fz_round_even(double x) {
  if (!(abs(x) < 4503599627370496.0lf)) return x;
  double f = floor(x);
  const double d = x - f;
  if (d > 0.5lf || (d == 0.5lf && f - 2.0lf * floor(0.5lf * f) != 0.0lf)) f += 1.0lf;
  return f == 0.0lf && x < 0.0lf ? -0.0lf : f;  // the sign of zero: roundEven(-0.3) is -0.0
}
double fz_sign(double x) { return fz_nan_b(x) ? x : sign(x); }
double fz_isnan(double x) { return fz_nan_b(x) ? 1.0lf : 0.0lf; }
double fz_isinf(double x) { return fz_inf_b(x) ? 1.0lf : 0.0lf; }
// x as a float rounded to odd: the float nearest x, moved toward zero where it rounded away,
// its last bit set when inexact (codegen_types.cpp convert_value).
float fz_rto_f32(double x) {
  float f = float(x);
  if (double(f) == x || x != x) return f;
  uint b = floatBitsToUint(f);
  return uintBitsToFloat((abs(double(f)) > abs(x) ? b - 1u : b) | 1u);
}
// exp and log in double (GLSL has neither): Cody-Waite reduction by ln 2 and a Taylor
// polynomial for exp; 2 atanh(f / (2 + f)) as its odd series for log. Within 2 ulp.
// 2^k for -1022 <= k <= 1023 from its bits (some drivers' double ldexp goes through float exp2).
double fz_pow2d(int k) { return packDouble2x32(uvec2(0u, uint(k + 1023) << 20)); }
double fz_expd(double x) {
  if (fz_nan_b(x)) return x;
  if (x > 709.782712893384lf) return double(fz_inf());
  if (x < -745.2lf) return 0.0lf;
  double k = roundEven(x * 1.4426950408889634lf);
  // ln 2 split in two (fdlibm's ln2_hi/ln2_lo) given by their bits: glslang's parsing of long
  // double literals is not correctly rounded. k * ln2_hi is exact.
  const double ln2_hi = packDouble2x32(uvec2(0xfee00000u, 0x3fe62e42u)), ln2_lo = packDouble2x32(uvec2(0x35793c76u, 0x3dea39efu));
  double r = (x - k * ln2_hi) - k * ln2_lo;
  double p = 1.0lf / 6227020800.0lf;
  p = fma(p, r, 1.0lf / 479001600.0lf);
  p = fma(p, r, 1.0lf / 39916800.0lf);
  p = fma(p, r, 1.0lf / 3628800.0lf);
  p = fma(p, r, 1.0lf / 362880.0lf);
  p = fma(p, r, 1.0lf / 40320.0lf);
  p = fma(p, r, 1.0lf / 5040.0lf);
  p = fma(p, r, 1.0lf / 720.0lf);
  p = fma(p, r, 1.0lf / 120.0lf);
  p = fma(p, r, 1.0lf / 24.0lf);
  p = fma(p, r, 1.0lf / 6.0lf);
  p = fma(p, r, 0.5lf);
  p = fma(p, r, 1.0lf);
  p = fma(p, r, 1.0lf);
  int ki = int(k);
  if (ki < -1000) return (p * fz_pow2d(ki + 1000)) * fz_pow2d(-1000);
  if (ki > 1000) return (p * fz_pow2d(ki - 1000)) * fz_pow2d(1000);
  return p * fz_pow2d(ki);
}
// log(x) = e ln2 + log(m): e and log(m) apart (log2 in f64_math.glsl keeps e exact).
double fz_log_mant(double x, out int e) {
  int sub = 0;
  if (x < 2.2250738585072014e-308lf) x = x * 18014398509481984.0lf, sub = 54;  // subnormal: scale by 2^54 first
  double m = frexp(x, e);
  e = e - sub;
  if (m < 0.70710678118654752440lf) { m = m * 2.0lf; e = e - 1; }
  double f = m - 1.0lf, s = f / (2.0lf + f), s2 = s * s;
  double t = 1.0lf / 25.0lf;
  for (int i = 11; i >= 0; --i) t = fma(t, s2, 1.0lf / double(2 * i + 1));
  return 2.0lf * s * t;
}
double fz_logd(double x) {
  if (fz_nan_b(x) || x < 0.0lf) return double(fz_nan());
  if (x == 0.0lf) return -double(fz_inf());
  if (fz_inf_b(x)) return x;
  int e;
  double lm = fz_log_mant(x, e);
  double de = double(e);
  const double ln2_hi = packDouble2x32(uvec2(0xfee00000u, 0x3fe62e42u)), ln2_lo = packDouble2x32(uvec2(0x35793c76u, 0x3dea39efu));
  return de * ln2_hi + (de * ln2_lo + lm);
}
// frexp with subnormals scaled by 2^54 first (as fz_log_mant; fz_frexp's reason).
double fz_frexpd(double x, out int e) {
  int sub = 0;
  if (abs(x) < 2.2250738585072014e-308lf) x = x * 18014398509481984.0lf, sub = 54;
  double m = frexp(x, e);
  e = e - sub;
  return m;
}
double fz_fmod(double a, double b) {
  if (b == 0.0lf || fz_inf_b(a) || fz_nan_b(a) || fz_nan_b(b)) return double(fz_nan());
  double r = abs(a), m = abs(b);
  if (fz_inf_b(b) || r < m) return a;
  int er, em;
  fz_frexpd(r, er);
  fz_frexpd(m, em);
  for (int e = er - em; e >= 0; --e) {
    // exact: m * 2^e <= r; e reaches ~2100 (fmod(DBL_MAX, DBL_MIN)), past one 2^k factor's range
    double t = m * fz_pow2d(min(e, 1000)) * fz_pow2d(clamp(e - 1000, 0, 1000)) * fz_pow2d(max(e - 2000, 0));
    if (r >= t) r = r - t;
  }
  return a < 0.0lf ? -r : r;
}
double fz_fmod_floor(double a, double b) {
  double r = fz_fmod(a, b);
  if (r == 0.0lf) return packDouble2x32(uvec2(0u, unpackDouble2x32(b).y & 0x80000000u));
  return (b < 0.0lf) != (r < 0.0lf) ? r + b : r;
}
)";
  auto inst = [](const char* tmpl, const std::string& t, const std::string& u, const std::string& w = "") {
    std::string out;
    for (const char* c = tmpl; *c; ++c) {
      const bool word = (*c == 'T' || *c == 'U' || *c == 'W') && !(std::isalnum(static_cast<unsigned char>(c[1])) || c[1] == '_') &&
                        (c == tmpl || !(std::isalnum(static_cast<unsigned char>(c[-1])) || c[-1] == '_'));
      if (word) out += *c == 'T' ? t : *c == 'U' ? u : w;
      else out += *c;
    }
    return out;
  };
  // For the unsigned helpers U is the type's width (fz_ishl/fz_ishr: a shift past it gives 0);
  // for the signed ones U is the unsigned twin and W the width.
  std::string s = inst(kSigned, "int", "uint", "32") + inst(kUnsigned, "uint", "32u");
  if (h.index64 || h.uses_i64) {
    s += inst(kSigned, "int64_t", "uint64_t", "64") + inst(kUnsigned, "uint64_t", "64u");
    s += "int64_t fz_sext64(int a) { return int64_t(packUint2x32(uvec2(uint(a), a < 0 ? 0xffffffffu : 0u))); }\n";
  }
  // IEEE division of doubles: a = ma 2^ea, b = mb 2^eb (mantissas in [0.5, 1)); the mantissas'
  // quotient c from the driver is stepped by one ulp while that lowers |ma - c mb| (computed
  // from Dekker's exact product; neighbours differ in residual by mb ulp(c), far above its
  // rounding, and no quotient of doubles is a tie), so c is the double nearest ma / mb, and
  // c 2^(ea - eb) is exact while the quotient is a normal double. Zeros, subnormal operands or
  // quotients, infinities and NaNs keep the driver's quotient.
  static const char* kDoubleDiv = R"(double fz_d_next(double x, bool up) {  // x > 0 finite: the adjacent double
  uvec2 u = unpackDouble2x32(x);
  if (up) {
    u.x += 1u;
    if (u.x == 0u) u.y += 1u;
  } else {
    if (u.x == 0u) u.y -= 1u;
    u.x -= 1u;
  }
  return packDouble2x32(u);
}
double fz_d_mant(double x, out int e) {  // x > 0 normal: x = m 2^e, m in [0.5, 1), from the bits
  uvec2 u = unpackDouble2x32(x);
  e = int((u.y >> 20) & 0x7ffu) - 1022;
  u.y = (u.y & 0x800fffffu) | (1022u << 20);
  return packDouble2x32(u);
}
double fz_div_resid_d(double a, double b, double c) {  // |a - c b| for a, b, c > 0 near 1
  double e;
  precise double p = fz_two_prod(c, b, e);
  precise double r = (a - p) - e;
  return abs(r);
}
double fz_div(double a, double b) {
  precise double q = a / b;
  const double tiny = packDouble2x32(uvec2(0u, 0x00100000u));  // 2^-1022, the smallest normal double
  const double aa = abs(a), ab = abs(b);
  if (!(aa >= tiny && ab >= tiny) || fz_inf_b(a) || fz_inf_b(b)) return q;  // NaN compares false too
  int ea, eb;
  const double ma = fz_d_mant(aa, ea), mb = fz_d_mant(ab, eb);
  const int k = ea - eb;
  if (k < -1021 || k > 1023) return q;  // a subnormal or overflowing quotient
  precise double c = ma / mb;  // in (0.5, 2)
  double r = fz_div_resid_d(ma, mb, c);
  for (int i = 0; i < 8; ++i) {  // the driver's quotient is within a few ulp
    const double up = fz_d_next(c, true), dn = fz_d_next(c, false);
    const double ru = fz_div_resid_d(ma, mb, up), rd = fz_div_resid_d(ma, mb, dn);
    if (ru < r) {
      c = up, r = ru;
    } else if (rd < r) {
      c = dn, r = rd;
    } else {
      break;
    }
  }
  precise double res = c * fz_pow2d(k);
  return (a < 0.0lf) != (b < 0.0lf) ? -res : res;
}
// sqrt(x) correctly rounded (GLSL lets double sqrt be as far off as inversesqrt), by fz_sqrt's
// method (vk_glsl_helpers.cpp): x scaled by 4^k into [0.5, 2), the driver's root made faithful
// by a Newton step on the exact residual x - s s, then rounded by that residual's size against
// s ulp(s). Every root of a double is normal, so scaling back is exact. One Newton step makes
// the root faithful from a seed within ~2^26 ulp (any real driver's); a device that flushes
// double subnormals would scale a flushed input: such devices are not known to expose fp64.
double fz_sqrtd_core(double x) {
  precise double s = sqrt(x);
#ifdef FZ_DIV_PERTURB
  for (int i = 0; i < abs(FZ_DIV_PERTURB); ++i) s = fz_d_next(s, FZ_DIV_PERTURB > 0);
#endif
#ifdef FZ_DIV_SEED_ONLY
  return s;
#endif
  double e;
  precise double p = fz_two_prod(s, s, e);
  precise double r = (x - p) - e;
  s = s + r / (2.0lf * s);
  p = fz_two_prod(s, s, e);
  r = (x - p) - e;
  const uvec2 sb = unpackDouble2x32(s);
  precise double t = s * packDouble2x32(uvec2(0u, (sb.y & 0x7ff00000u) - (52u << 20)));  // s ulp(s), exact
  precise double tl = (sb.x == 0u && (sb.y & 0xfffffu) == 0u) ? 0.5lf * t : t;
  if (r > t) s = fz_d_next(s, true);
  else if (r <= -tl) s = fz_d_next(s, false);
  return s;
}
// Gelu in double, as the float fz_gelu (vk_glsl_helpers.cpp): x Phi(x), below -0.5 Phi(x) =
// exp(-x^2 / 2) Q(-x), Q(u) = Phi(-u) exp(u^2 / 2) as t P(2t - 1), t = 1 / (1 + u / 4), P of
// degree 24 fitted here (least squares in relative error against mpmath over u in [0.5, 38.6]:
// 4e-16; 5e-16 evaluated in double), the square exact (fz_two_prod), past u = 30 as
// exp(-q / 4)^2 so a subnormal result rounds once. The tanh form x sigmoid(2z), split as the
// float one.
double fz_gelu(double x) {
  if (!(x < -0.5lf)) return 0.5lf * x * (1.0lf + fz_erfd(x * 0.70710678118654752lf));  // NaN too
  if (x < -38.6lf) return fz_inf_b(x) ? double(fz_nan()) : packDouble2x32(uvec2(0u, 0x80000000u));  // |Gelu| < 2^-1075
  double u = -x, t = fz_div(1.0lf, 1.0lf + 0.25lf * u), s = 2.0lf * t - 1.0lf;
  double p = -4.682665499023095e-10lf;
  p = p * s + 2.044005773707751e-09lf;
  p = p * s + 3.849367964958025e-09lf;
  p = p * s + -5.303757726249019e-09lf;
  p = p * s + -6.489530027287006e-09lf;
  p = p * s + 1.3076912253612147e-09lf;
  p = p * s + -7.286912144136533e-09lf;
  p = p * s + 3.719661265742713e-08lf;
  p = p * s + 5.791345146586781e-08lf;
  p = p * s + -2.559522781021498e-07lf;
  p = p * s + -1.529912250661804e-07lf;
  p = p * s + 1.4807615272306796e-06lf;
  p = p * s + 1.7793102288806606e-07lf;
  p = p * s + -8.786463097523201e-06lf;
  p = p * s + -4.768499578982764e-07lf;
  p = p * s + 5.777379654892708e-05lf;
  p = p * s + 3.3336055789785485e-05lf;
  p = p * s + -0.00040770462196463257lf;
  p = p * s + -0.0008699230905487576lf;
  p = p * s + 0.001885047242169124lf;
  p = p * s + 0.015099143722693293lf;
  p = p * s + 0.046630464489899916lf;
  p = p * s + 0.09678435018555447lf;
  p = p * s + 0.15197416049297316lf;
  p = p * s + 0.18882128260393788lf;
  double e;
  precise double q = fz_two_prod(u, u, e);
  if (u < 30.0lf) {
    precise double r = (x * (t * p)) * (fz_expd(-0.5lf * q) * (1.0lf - 0.5lf * e));
    return r;
  }
  precise double e4 = fz_expd(-0.25lf * q);
  precise double r = ((x * (t * p)) * (e4 * (1.0lf - 0.5lf * e))) * e4;
  return r;
}
double fz_gelu_tanh(double x) {
  double z2 = 1.5957691216057308lf * (x + 0.044715lf * x * x * x);
  if (z2 < 0.0lf) {
    double e = fz_expd(z2);
    return x * fz_div(e, 1.0lf + e);
  }
  return fz_div(x, 1.0lf + fz_expd(-z2));
}
double fz_sqrtd(double x) {
  if (fz_nan_b(x) || x < 0.0lf) return double(fz_nan());
  if (x == 0.0lf || fz_inf_b(x)) return x;  // sqrt(-0) = -0
  int k = 0;
  if (x < packDouble2x32(uvec2(0u, 0x00100000u))) x *= fz_pow2d(108), k = -54;  // subnormal: exact
  int e;
  double m = fz_d_mant(x, e);  // [0.5, 1)
  if ((e & 1) != 0) m *= 2.0lf, e -= 1;
  precise double res = fz_sqrtd_core(m) * fz_pow2d(e / 2 + k);
  return res;
}
)";
  if (h.uses_f64) s += std::string(kDouble) + f64_math_source() + kDoubleDiv;
  return s;
}

}  // namespace fusor::vk
