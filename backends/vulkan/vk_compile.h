// GLSL -> SPIR-V at run time (shaderc, linked statically), SPIR-V validation (SPIRV-Tools)
// and the on-disk SPIR-V cache.
//
// Contract:
//   compile_glsl(ctx, name, source) returns validated SPIR-V words for a compute shader.
//   Cache: $XDG_CACHE_HOME/fusor/vulkan/<hash>.spv (or ~/.cache/...), keyed by the source,
//   the device UUID, the driver version and the compiler/target tag, so another device or
//   driver never reuses a module. Entries are verified (runtime/disk_cache.h: stored key +
//   checksum) and validated again before use; any bad entry is recompiled and overwritten.
//   Float controls: shaderc compiles without optimization, add_float_controls() then asks for
//   DenormPreserve and SignedZeroInfNanPreserve at every float width the device supports them
//   for (PhysicalDeviceInfo::denorm_preserve / signed_zero_inf_nan_preserve), and only then
//   SPIRV-Tools' performance passes run, which respect the modes (without them spirv-opt folds
//   x + 0.0 to x and x * 0.0 to 0.0, wrong for -0.0, inf and NaN). glslang's
//   GL_EXT_spirv_intrinsics cannot do this: it keeps one width per execution mode.
//   FUSOR_VK_SPIRV_OPT=0 skips SPIRV-Tools' passes (for A/B runs; cached under its own key).
//   loop-unroll runs only where no `precise` arithmetic sits in an [[unroll]] loop (its copies
//   drop NoContraction, and the driver then contracts them), and not on cooperative-matrix
//   kernels (faster without it); FUSOR_VK_SPIRV_UNROLL=1 / 0 runs it always / never (A/B runs;
//   cached under their own keys).
//   FUSOR_VK_COMPILE_LOG=1 (vk_pipelines.cpp) prints each pipeline's source size and the
//   milliseconds of shaderc, spirv-opt, spirv-val and vkCreateComputePipelines on stderr.
//   Errors: Error("vulkan", "kernel '<name>': GLSL compile failed: <shaderc messages>") and
//           Error("vulkan", "kernel '<name>': SPIR-V validation failed: <spirv-val message>").
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "backends/vulkan/vk_device.h"

namespace fusor::vk {

struct CompileStats {
  int compiled = 0, cache_hits = 0;
  // Microseconds in each step of a compile (summed over the calls this struct saw): shaderc
  // (GLSL -> SPIR-V), spirv-opt's performance passes, spirv-val (also on a cache hit).
  double shaderc_us = 0, opt_us = 0, validate_us = 0;
};

std::vector<uint32_t> compile_glsl(const Context& ctx, const std::string& name, const std::string& source,
                                   CompileStats* stats = nullptr);
// The same for a device described by `info` alone (no logical device needed: tests compile and
// validate kernels for devices this machine does not have, e.g. cooperative-matrix variants).
std::vector<uint32_t> compile_glsl(const PhysicalDeviceInfo& info, const std::string& name, const std::string& source,
                                   CompileStats* stats = nullptr);

// Whether a (not yet optimized) module computes `precise` arithmetic (NoContraction) inside a
// loop marked [[unroll]], directly or through a function it calls: spirv-opt's loop-unroll
// drops NoContraction on its copies, so compile_glsl runs that pass only where this is false.
bool precise_in_unrolled_loop(const std::vector<uint32_t>& words);

// Adds to a compute module (one entry point) OpCapability DenormPreserve /
// SignedZeroInfNanPreserve and OpExecutionMode <entry> DenormPreserve <width> /
// SignedZeroInfNanPreserve <width> for each width 16/32/64 (index 0/1/2) whose flag is set, plus
// OpExtension "SPV_KHR_float_controls" below SPIR-V 1.4; and RoundingModeRTE <width> (its
// capability) for each width rounding_rte flags (null: none). Modes already present are not
// repeated. Throws Error("vulkan") on a module it cannot parse.
std::vector<uint32_t> add_float_controls(std::vector<uint32_t> words, const bool denorm_preserve[3],
                                         const bool signed_zero_inf_nan_preserve[3], const bool* rounding_rte = nullptr);

// Throws the "SPIR-V validation failed" error above when `words` is not valid for Vulkan 1.2.
void validate_spirv(const std::string& name, const std::vector<uint32_t>& words);

}  // namespace fusor::vk
