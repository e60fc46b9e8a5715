// Internal helpers shared by the Vulkan backend's files: status checking and small utilities.
#pragma once
#include <vulkan/vulkan.h>

#include <string>

#include "ir/tensor.h"

// Vulkan structs are written as `VkFooInfo x{VK_STRUCTURE_TYPE_FOO_INFO};` (the rest zeroed, as
// the spec intends); -Wextra would flag every one of them.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace fusor::vk {

const char* result_name(VkResult r);

// Every Vulkan call's status goes through here so the error names the call (DESIGN.md
// "Errors"): Error("vulkan", "vkCreateDevice failed: VK_ERROR_OUT_OF_DEVICE_MEMORY").
inline void check_vk(VkResult r, const char* call) {
  if (r != VK_SUCCESS) throw Error("vulkan", std::string(call) + " failed: " + result_name(r));
}

inline uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace fusor::vk
