// Runtime shader compilation with shaderc, validation with SPIRV-Tools, the SPIR-V disk cache.
#include "backends/vulkan/vk_compile.h"

#include <shaderc/shaderc.hpp>
#include <spirv-tools/libspirv.hpp>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

namespace fusor::vk {

namespace {

// Bumped when the compile options below change, so old cache entries stop matching.
constexpr const char* kCompilerTag = "shaderc-vulkan1.2-O-v1";

std::string numbered(const std::string& src) {
  std::ostringstream out;
  std::istringstream in(src);
  std::string line;
  for (int i = 1; std::getline(in, line); ++i) out << (i < 10 ? "   " : i < 100 ? "  " : i < 1000 ? " " : "") << i << "  " << line << "\n";
  return out.str();
}

bool read_cache(const std::string& path, std::vector<uint32_t>& words) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.size() < 20 || bytes.size() % 4 != 0) return false;
  words.resize(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), bytes.size());
  return words[0] == 0x07230203u;  // SPIR-V magic
}

void write_cache(const std::string& path, const std::vector<uint32_t>& words) {
  std::string tmp = path + ".tmp" + std::to_string(reinterpret_cast<uintptr_t>(&words));
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) return;
    f.write(reinterpret_cast<const char*>(words.data()), static_cast<std::streamsize>(words.size() * 4));
    if (!f) return;
  }
  std::rename(tmp.c_str(), path.c_str());  // atomic: readers see the old file or the whole new one
}

}  // namespace

std::string content_hash(const std::string& data) {
  uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
  for (unsigned char c : data) {
    a = (a ^ c) * 0x100000001b3ull;
    b = (b ^ c) * 0x00000100000001b3ull + 0x9e3779b97f4a7c15ull;
  }
  uint8_t bytes[16];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(a >> (8 * i)), bytes[8 + i] = static_cast<uint8_t>(b >> (8 * i));
  return hex(bytes, 16);
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
  const PhysicalDeviceInfo& info = ctx.info();
  std::string dir = cache_dir();
  std::string path;
  if (!dir.empty()) {
    std::string key = source;
    key += '\0' + hex(info.device_uuid.data(), info.device_uuid.size()) + '\0' + std::to_string(info.driver_version) + '\0' + kCompilerTag;
    path = dir + "/" + content_hash(key) + ".spv";
    std::vector<uint32_t> words;
    if (read_cache(path, words)) {
      try {
        validate_spirv(name, words);
        if (stats) ++stats->cache_hits;
        return words;
      } catch (const Error&) {
        // A damaged entry: fall through, recompile and overwrite it.
      }
    }
  }

  // One compiler per thread: shaderc::Compiler is not documented as thread-safe to share.
  thread_local shaderc::Compiler compiler;
  if (!compiler.IsValid()) throw Error("vulkan", "kernel '" + name + "': shaderc_compiler_initialize failed");
  shaderc::CompileOptions opts;
  opts.SetTargetEnvironment(shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_2);
  opts.SetTargetSpirv(shaderc_spirv_version_1_5);
  opts.SetOptimizationLevel(shaderc_optimization_level_performance);
  shaderc::SpvCompilationResult r = compiler.CompileGlslToSpv(source, shaderc_compute_shader, name.c_str(), "main", opts);
  if (r.GetCompilationStatus() != shaderc_compilation_status_success)
    throw Error("vulkan", "kernel '" + name + "': GLSL compile failed (shaderc_compile_into_spv status " +
                              std::to_string(static_cast<int>(r.GetCompilationStatus())) + "): " + r.GetErrorMessage() +
                              "\n" + numbered(source));
  std::vector<uint32_t> words(r.cbegin(), r.cend());
  validate_spirv(name, words);
  if (stats) ++stats->compiled;
  if (!path.empty()) write_cache(path, words);
  return words;
}

}  // namespace fusor::vk
