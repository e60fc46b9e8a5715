// A Vulkan device described in a test (no Vulkan needed): limits of a discrete GPU with fp16,
// fp64 and int64, for checking emitted GLSL and compiling it (vk::compile_glsl) on any machine.
// Shared by test_softmax_online.cpp and test_numerics_epilogue.cpp.
#pragma once
#ifdef FUSOR_HAVE_VULKAN
#include <string>

#include "backends/vulkan/vk_device.h"

namespace fusor::testing {

// subgroups: whether it reports subgroup arithmetic (row kernels take the subgroup path).
inline vk::PhysicalDeviceInfo described_vk_device(bool subgroups, const std::string& name = "described device") {
  vk::PhysicalDeviceInfo d;
  d.name = name;
  d.api_version = VK_API_VERSION_1_2;
  d.subgroup_size = 32;
  d.max_shared_memory = 49152;
  d.max_invocations = 1024;
  for (int i = 0; i < 3; ++i) d.max_group_count[i] = 65535, d.max_group_size[i] = 1024;
  d.max_storage_buffer_range = uint64_t{1} << 30;
  d.min_storage_offset_alignment = 16;
  d.shader_float16 = d.storage_16bit = d.shader_int64 = d.shader_float64 = true;
  d.subgroup_reduce = subgroups;
  return d;
}

}  // namespace fusor::testing
#endif
