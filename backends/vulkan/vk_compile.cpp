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
#include <sstream>

#include "runtime/disk_cache.h"

namespace fusor::vk {

namespace {

// Bumped when the compile options below change, so old cache entries stop matching.
constexpr const char* kCompilerTag = "shaderc-vulkan1.2-O0+floatcontrols+spvopt-v2";

// SPIR-V opcodes and enumerants used by add_float_controls (spirv.h, unified1).
constexpr uint32_t kOpExtension = 10, kOpEntryPoint = 15, kOpExecutionMode = 16, kOpCapability = 17,
                   kOpExecutionModeId = 331;
constexpr uint32_t kModeDenormPreserve = 4459, kModeSignedZeroInfNanPreserve = 4461;
constexpr uint32_t kCapDenormPreserve = 4464, kCapSignedZeroInfNanPreserve = 4466;

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
                                         const bool signed_zero_inf_nan_preserve[3]) {
  static const uint32_t kWidths[3] = {16, 32, 64};
  if (words.size() < 5 || words[0] != 0x07230203u) throw Error("vulkan", "add_float_controls: not a SPIR-V module");
  // One pass over the instructions: where capabilities end, where execution modes end, the
  // entry point, and what is already there.
  size_t pos = 5, caps_end = 5, modes_end = 0;
  uint32_t entry = 0;
  bool have_cap[2] = {false, false}, have_ext = false;
  std::vector<std::pair<uint32_t, uint32_t>> have_modes;  // (mode, width)
  while (pos < words.size()) {
    const uint32_t n = words[pos] >> 16, op = words[pos] & 0xffff;
    if (n == 0 || pos + n > words.size()) throw Error("vulkan", "add_float_controls: truncated SPIR-V instruction");
    if (op == kOpCapability) {
      caps_end = pos + n;
      if (n >= 2 && words[pos + 1] == kCapDenormPreserve) have_cap[0] = true;
      if (n >= 2 && words[pos + 1] == kCapSignedZeroInfNanPreserve) have_cap[1] = true;
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
  bool need[2] = {false, false};
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 2; ++k) {
      if (!(k == 0 ? denorm_preserve[i] : signed_zero_inf_nan_preserve[i])) continue;
      const uint32_t mode = k == 0 ? kModeDenormPreserve : kModeSignedZeroInfNanPreserve;
      need[k] = true;
      if (std::find(have_modes.begin(), have_modes.end(), std::make_pair(mode, kWidths[i])) != have_modes.end()) continue;
      modes.insert(modes.end(), {(4u << 16) | kOpExecutionMode, entry, mode, kWidths[i]});
    }
  std::vector<uint32_t> caps;
  if (need[0] && !have_cap[0]) caps.insert(caps.end(), {(2u << 16) | kOpCapability, kCapDenormPreserve});
  if (need[1] && !have_cap[1]) caps.insert(caps.end(), {(2u << 16) | kOpCapability, kCapSignedZeroInfNanPreserve});
  // Core from SPIR-V 1.4; before that the extension must be declared (right after the
  // capabilities is inside the extension section).
  if ((need[0] || need[1]) && words[1] < 0x00010400u && !have_ext) {
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

std::vector<uint32_t> compile_glsl(const PhysicalDeviceInfo& info, const std::string& name, const std::string& source,
                                   CompileStats* stats) {
  const DiskCache cache(cache_dir(), ".spv");
  // The entry stores this whole key and a checksum; a damaged, truncated or swapped entry is a
  // miss. Modules are validated once more before use (cheap).
  std::string key = source;
  // FUSOR_VK_SPIRV_OPT=0 skips spirv-opt (A/B of cold compile time against kernel speed: the
  // driver optimises again at pipeline creation); such modules are cached under another key.
  const char* opt_env = std::getenv("FUSOR_VK_SPIRV_OPT");
  const bool optimize = !(opt_env && std::strcmp(opt_env, "0") == 0);
  key += '\0' + hex(info.device_uuid.data(), info.device_uuid.size()) + '\0' + std::to_string(info.driver_version) + '\0' + kCompilerTag +
         (optimize ? "" : "-noopt");
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
      add_float_controls(std::vector<uint32_t>(r.cbegin(), r.cend()), info.denorm_preserve, info.signed_zero_inf_nan_preserve);
  if (optimize) {
    // The passes shaderc's "performance" level runs.
    spvtools::Optimizer opt(SPV_ENV_VULKAN_1_2);
    std::string messages;
    opt.SetMessageConsumer([&](spv_message_level_t level, const char*, const spv_position_t&, const char* msg) {
      if (level <= SPV_MSG_ERROR) messages += (messages.empty() ? "" : "; ") + std::string(msg);
    });
    opt.RegisterPerformancePasses();
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
