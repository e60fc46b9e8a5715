// Runtime shader compilation with shaderc, validation with SPIRV-Tools, the SPIR-V disk cache.
#include "backends/vulkan/vk_compile.h"

#include <shaderc/shaderc.hpp>
#include <spirv-tools/libspirv.hpp>
#include <spirv-tools/optimizer.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "runtime/disk_cache.h"

namespace fusor::vk {

namespace {

// Bumped when the compile options below change, so old cache entries stop matching.
constexpr const char* kCompilerTag = "shaderc-vulkan1.2-O0+floatcontrols+spvopt-v3";

// SPIRV-Tools' performance passes (RegisterPerformancePasses, 2023.1). Its loop-unroll drops
// NoContraction on the copies of a loop body, so the NVIDIA driver contracted and reassociated
// the copies of a `precise` TwoSum (a compensated LayerNorm mean of 768 equal values one ulp
// off, Numerics.RowSumsAreCompensated on the H100): the pass runs only on modules with no
// `precise` arithmetic inside an [[unroll]] loop (precise_in_unrolled_loop; the GEMM and GEMV
// loops keep it: MLP b1 fp32 was ~1 us, 4%, slower without it on an H100) and not on
// cooperative-matrix kernels (GPT-2 bf16 ~6 us, 5%, faster without it). FUSOR_VK_SPIRV_UNROLL=1
// / 0 runs it always / never (measuring only).
const char* spirv_unroll_knob() {
  const char* e = std::getenv("FUSOR_VK_SPIRV_UNROLL");
  return e && (std::strcmp(e, "0") == 0 || std::strcmp(e, "1") == 0) ? e : "";
}
std::vector<std::string> optimizer_flags(bool unroll) {
  std::istringstream in(
      "--wrap-opkill --eliminate-dead-branches --merge-return --inline-entry-points-exhaustive --eliminate-dead-functions "
      "--eliminate-dead-code-aggressive --private-to-local --eliminate-local-single-block --eliminate-local-single-store "
      "--eliminate-dead-code-aggressive --scalar-replacement=100 --convert-local-access-chains --eliminate-local-single-block "
      "--eliminate-local-single-store --eliminate-dead-code-aggressive --ssa-rewrite --eliminate-dead-code-aggressive --ccp "
      "--eliminate-dead-code-aggressive --loop-unroll --eliminate-dead-branches --redundancy-elimination --combine-access-chains "
      "--simplify-instructions --scalar-replacement=100 --convert-local-access-chains --eliminate-local-single-block "
      "--eliminate-local-single-store --eliminate-dead-code-aggressive --ssa-rewrite --eliminate-dead-code-aggressive --vector-dce "
      "--eliminate-dead-inserts --eliminate-dead-branches --simplify-instructions --if-conversion --copy-propagate-arrays "
      "--reduce-load-size --eliminate-dead-code-aggressive --merge-blocks --redundancy-elimination --eliminate-dead-branches "
      "--merge-blocks --simplify-instructions");
  std::vector<std::string> f;
  for (std::string w; in >> w;)
    if (unroll || w != "--loop-unroll") f.push_back(w);
  return f;
}

// SPIR-V opcodes and enumerants used by add_float_controls (spirv.h, unified1).
constexpr uint32_t kOpExtension = 10, kOpEntryPoint = 15, kOpExecutionMode = 16, kOpCapability = 17,
                   kOpExecutionModeId = 331;
constexpr uint32_t kModeDenormPreserve = 4459, kModeSignedZeroInfNanPreserve = 4461, kModeRoundingModeRTE = 4462;
constexpr uint32_t kCapDenormPreserve = 4464, kCapSignedZeroInfNanPreserve = 4466, kCapRoundingModeRTE = 4467;

std::string numbered(const std::string& src) {
  std::ostringstream out;
  std::istringstream in(src);
  std::string line;
  for (int i = 1; std::getline(in, line); ++i) out << (i < 10 ? "   " : i < 100 ? "  " : i < 1000 ? " " : "") << i << "  " << line << "\n";
  return out.str();
}

// The SPIR-V words of a verified cache entry (see runtime/disk_cache.h), or false.
bool decode_words(const std::string& bytes, std::vector<uint32_t>& words) {
  if (bytes.size() < 20 || bytes.size() % 4 != 0) return false;
  words.resize(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), bytes.size());
  return words[0] == 0x07230203u;  // SPIR-V magic
}

}  // namespace

std::vector<uint32_t> add_float_controls(std::vector<uint32_t> words, const bool denorm_preserve[3],
                                         const bool signed_zero_inf_nan_preserve[3], const bool* rounding_rte) {
  static const uint32_t kWidths[3] = {16, 32, 64};
  if (words.size() < 5 || words[0] != 0x07230203u) throw Error("vulkan", "add_float_controls: not a SPIR-V module");
  // One pass over the instructions: where capabilities end, where execution modes end, the
  // entry point, and what is already there.
  size_t pos = 5, caps_end = 5, modes_end = 0;
  uint32_t entry = 0;
  bool have_cap[3] = {false, false, false}, have_ext = false;
  std::vector<std::pair<uint32_t, uint32_t>> have_modes;  // (mode, width)
  while (pos < words.size()) {
    const uint32_t n = words[pos] >> 16, op = words[pos] & 0xffff;
    if (n == 0 || pos + n > words.size()) throw Error("vulkan", "add_float_controls: truncated SPIR-V instruction");
    if (op == kOpCapability) {
      caps_end = pos + n;
      if (n >= 2 && words[pos + 1] == kCapDenormPreserve) have_cap[0] = true;
      if (n >= 2 && words[pos + 1] == kCapSignedZeroInfNanPreserve) have_cap[1] = true;
      if (n >= 2 && words[pos + 1] == kCapRoundingModeRTE) have_cap[2] = true;
    } else if (op == kOpExtension) {
      have_ext = have_ext || std::strncmp(reinterpret_cast<const char*>(&words[pos + 1]), "SPV_KHR_float_controls", (n - 1) * 4) == 0;
    } else if (op == kOpEntryPoint) {
      if (n < 3) throw Error("vulkan", "add_float_controls: malformed OpEntryPoint");
      if (entry) throw Error("vulkan", "add_float_controls: more than one entry point");
      entry = words[pos + 2];
      modes_end = pos + n;
    } else if (op == kOpExecutionMode || op == kOpExecutionModeId) {
      if (n >= 4) have_modes.push_back({words[pos + 2], words[pos + 3]});
      modes_end = pos + n;
    }
    pos += n;
  }
  if (!entry) throw Error("vulkan", "add_float_controls: no entry point");

  std::vector<uint32_t> modes;
  bool need[3] = {false, false, false};
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) {
      if (!(k == 0 ? denorm_preserve[i] : k == 1 ? signed_zero_inf_nan_preserve[i] : rounding_rte && rounding_rte[i])) continue;
      const uint32_t mode = k == 0 ? kModeDenormPreserve : k == 1 ? kModeSignedZeroInfNanPreserve : kModeRoundingModeRTE;
      need[k] = true;
      if (std::find(have_modes.begin(), have_modes.end(), std::make_pair(mode, kWidths[i])) != have_modes.end()) continue;
      modes.insert(modes.end(), {(4u << 16) | kOpExecutionMode, entry, mode, kWidths[i]});
    }
  std::vector<uint32_t> caps;
  if (need[0] && !have_cap[0]) caps.insert(caps.end(), {(2u << 16) | kOpCapability, kCapDenormPreserve});
  if (need[1] && !have_cap[1]) caps.insert(caps.end(), {(2u << 16) | kOpCapability, kCapSignedZeroInfNanPreserve});
  if (need[2] && !have_cap[2]) caps.insert(caps.end(), {(2u << 16) | kOpCapability, kCapRoundingModeRTE});
  // Core from SPIR-V 1.4; before that the extension must be declared (right after the
  // capabilities is inside the extension section).
  if ((need[0] || need[1] || need[2]) && words[1] < 0x00010400u && !have_ext) {
    const char name[24] = "SPV_KHR_float_controls";  // 22 chars + NUL, padded to 6 words
    uint32_t lit[6] = {};
    std::memcpy(lit, name, sizeof name);
    caps.push_back((7u << 16) | kOpExtension);
    caps.insert(caps.end(), lit, lit + 6);
  }
  words.insert(words.begin() + static_cast<std::ptrdiff_t>(modes_end), modes.begin(), modes.end());
  words.insert(words.begin() + static_cast<std::ptrdiff_t>(caps_end), caps.begin(), caps.end());
  return words;
}

void validate_spirv(const std::string& name, const std::vector<uint32_t>& words) {
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_2);
  std::string messages;
  tools.SetMessageConsumer([&](spv_message_level_t, const char*, const spv_position_t& pos, const char* msg) {
    messages += (messages.empty() ? "" : "; ") + std::string(msg) + " (word " + std::to_string(pos.index) + ")";
  });
  if (!tools.IsValid()) throw Error("vulkan", "kernel '" + name + "': SPIRV-Tools could not be initialised");
  if (!tools.Validate(words.data(), words.size()))
    throw Error("vulkan", "kernel '" + name + "': SPIR-V validation failed: " + (messages.empty() ? "(no message)" : messages));
}

std::vector<uint32_t> compile_glsl(const Context& ctx, const std::string& name, const std::string& source,
                                   CompileStats* stats) {
  return compile_glsl(ctx.info(), name, source, stats);
}

bool precise_in_unrolled_loop(const std::vector<uint32_t>& words) {
  constexpr uint32_t kOpExtInst = 12, kOpFunction = 54, kOpFunctionEnd = 56, kOpFunctionCall = 57, kOpDecorate = 71,
                     kOpLoopMerge = 246, kOpLabel = 248, kDecorationNoContraction = 42, kLoopControlUnroll = 1;
  if (words.size() < 5) return false;
  // A stream that does not tile into whole instructions: no unrolling (the scans below read
  // each instruction's words unchecked).
  size_t end = 5;
  while (end < words.size() && (words[end] >> 16) != 0 && end + (words[end] >> 16) <= words.size()) end += words[end] >> 16;
  if (end != words.size()) return true;
  // Float arithmetic (OpFNegate .. OpFwidth's neighbours, and GLSL.std.450 calls like fma)
  // carries its result id in word 2.
  auto arith = [](uint32_t op) { return op == kOpExtInst || (op >= 127 && op <= 152); };
  std::set<uint32_t> precise;
  for (size_t pos = 5; pos < words.size() && (words[pos] >> 16) != 0; pos += words[pos] >> 16)
    if ((words[pos] & 0xffff) == kOpDecorate && (words[pos] >> 16) >= 3 && words[pos + 2] == kDecorationNoContraction)
      precise.insert(words[pos + 1]);
  if (precise.empty()) return false;
  // Per function: whether it computes precise arithmetic, and whom it calls.
  std::map<uint32_t, bool> has_precise;
  std::map<uint32_t, std::set<uint32_t>> calls;
  uint32_t fn = 0;
  for (size_t pos = 5; pos < words.size() && (words[pos] >> 16) != 0; pos += words[pos] >> 16) {
    const uint32_t op = words[pos] & 0xffff, len = words[pos] >> 16;
    if (op == kOpFunction && len >= 3) fn = words[pos + 2], has_precise[fn] |= false;
    else if (op == kOpFunctionEnd) fn = 0;
    else if (fn && op == kOpFunctionCall && len >= 4) calls[fn].insert(words[pos + 3]);
    else if (fn && arith(op) && len >= 3 && precise.count(words[pos + 2])) has_precise[fn] = true;
  }
  for (bool changed = true; changed;) {  // through calls, to a fixed point
    changed = false;
    for (auto& [f, p] : has_precise)
      for (uint32_t c : calls[f])
        if (!p && has_precise[c]) p = changed = true;
  }
  // glslang lays a structured loop's blocks out between its header (OpLoopMerge) and its merge
  // block's label (its readable block order; another producer's layout could differ): scan that
  // range of every loop marked Unroll.
  for (size_t pos = 5; pos < words.size() && (words[pos] >> 16) != 0; pos += words[pos] >> 16) {
    if ((words[pos] & 0xffff) != kOpLoopMerge || (words[pos] >> 16) < 4 || !(words[pos + 3] & kLoopControlUnroll)) continue;
    const uint32_t merge = words[pos + 1];
    for (size_t q = pos + (words[pos] >> 16); q < words.size() && (words[q] >> 16) != 0; q += words[q] >> 16) {
      const uint32_t op = words[q] & 0xffff, len = words[q] >> 16;
      if ((op == kOpLabel && len >= 2 && words[q + 1] == merge) || op == kOpFunctionEnd) break;
      if (arith(op) && len >= 3 && precise.count(words[q + 2])) return true;
      if (op == kOpFunctionCall && len >= 4 && has_precise[words[q + 3]]) return true;
    }
  }
  return false;
}

std::vector<uint32_t> compile_glsl(const PhysicalDeviceInfo& info, const std::string& name, const std::string& source,
                                   CompileStats* stats) {
  const DiskCache cache(compile_cache_dir("vulkan"), ".spv");
  // The entry stores this whole key and a checksum; a damaged, truncated or swapped entry is a
  // miss. Modules are validated once more before use (cheap).
  std::string key = source;
  // FUSOR_VK_SPIRV_OPT=0 skips spirv-opt (A/B of cold compile time against kernel speed: the
  // driver optimises again at pipeline creation); such modules are cached under another key.
  const char* opt_env = std::getenv("FUSOR_VK_SPIRV_OPT");
  const bool optimize = !(opt_env && std::strcmp(opt_env, "0") == 0);
  key += '\0' + hex(info.device_uuid.data(), info.device_uuid.size()) + '\0' + std::to_string(info.driver_version) + '\0' + kCompilerTag +
         (optimize ? "" : "-noopt") + "-unroll" + spirv_unroll_knob() + "-rte" + std::to_string(info.rounding_rte[0]) +
         std::to_string(info.rounding_rte[1]) + std::to_string(info.rounding_rte[2]);
  using clock = std::chrono::steady_clock;
  const auto us_since = [](clock::time_point t) { return std::chrono::duration<double, std::micro>(clock::now() - t).count(); };
  if (std::optional<std::string> bytes = cache.load(key)) {
    std::vector<uint32_t> words;
    if (decode_words(*bytes, words)) {
      try {
        const auto tv = clock::now();
        validate_spirv(name, words);
        if (stats) stats->validate_us += us_since(tv);
        if (stats) ++stats->cache_hits;
        return words;
      } catch (const Error&) {
        // Checksummed but invalid (written by a broken build): recompile and overwrite it.
      }
    }
  }

  // glslang needs InitializeProcess before any compile; shaderc (2023.x) reference-counts it
  // per shaderc_compiler and calls FinalizeProcess when the count drops to zero. Compiles run
  // on short-lived pool threads (compile_pool.h), so without a compiler that lives for the
  // whole process every build would finalize and re-initialize glslang's process state; this
  // one is never destroyed (no FinalizeProcess at exit racing a late thread either).
  static shaderc::Compiler* const keep_glslang_initialized = new shaderc::Compiler;
  (void)keep_glslang_initialized;
  // One compiler per thread: shaderc::Compiler is not documented as thread-safe to share.
  thread_local shaderc::Compiler compiler;
  if (!compiler.IsValid()) throw Error("vulkan", "kernel '" + name + "': shaderc_compiler_initialize failed");
  shaderc::CompileOptions opts;
  opts.SetTargetEnvironment(shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_2);
  opts.SetTargetSpirv(shaderc_spirv_version_1_5);
  // Unoptimized here: the optimizer must see the float-control modes (see vk_compile.h).
  opts.SetOptimizationLevel(shaderc_optimization_level_zero);
  const auto t0 = clock::now();
  shaderc::SpvCompilationResult r = compiler.CompileGlslToSpv(source, shaderc_compute_shader, name.c_str(), "main", opts);
  if (r.GetCompilationStatus() != shaderc_compilation_status_success)
    throw Error("vulkan", "kernel '" + name + "': GLSL compile failed (shaderc_compile_into_spv status " +
                              std::to_string(static_cast<int>(r.GetCompilationStatus())) + "): " + r.GetErrorMessage() +
                              "\n" + numbered(source));
  if (stats) stats->shaderc_us += us_since(t0);
  const auto t1 = clock::now();
  std::vector<uint32_t> words =
      add_float_controls(std::vector<uint32_t>(r.cbegin(), r.cend()), info.denorm_preserve, info.signed_zero_inf_nan_preserve, info.rounding_rte);
  if (optimize) {
    // The passes shaderc's "performance" level runs.
    spvtools::Optimizer opt(SPV_ENV_VULKAN_1_2);
    std::string messages;
    opt.SetMessageConsumer([&](spv_message_level_t level, const char*, const spv_position_t&, const char* msg) {
      if (level <= SPV_MSG_ERROR) messages += (messages.empty() ? "" : "; ") + std::string(msg);
    });
    const std::string knob = spirv_unroll_knob();
    // Cooperative-matrix kernels are left to the driver's unroller (measured: optimizer_flags).
    const bool coopmat = source.find("#extension GL_NV_cooperative_matrix") != std::string::npos;
    if (!opt.RegisterPassesFromFlags(optimizer_flags(knob.empty() ? !coopmat && !precise_in_unrolled_loop(words) : knob == "1")))
      throw Error("vulkan", "kernel '" + name + "': SPIR-V optimizer flags rejected: " + messages);
    std::vector<uint32_t> optimized;
    if (!opt.Run(words.data(), words.size(), &optimized))
      throw Error("vulkan", "kernel '" + name + "': SPIR-V optimization failed: " + (messages.empty() ? "(no message)" : messages));
    words = std::move(optimized);
  }
  const auto t2 = clock::now();
  if (stats) stats->opt_us += std::chrono::duration<double, std::micro>(t2 - t1).count();
  validate_spirv(name, words);
  if (stats) stats->validate_us += us_since(t2);
  if (stats) ++stats->compiled;
  cache.store(key, std::string(reinterpret_cast<const char*>(words.data()), words.size() * 4));
  return words;
}

}  // namespace fusor::vk
