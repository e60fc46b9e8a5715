// Buffers and their memory: one VkDeviceMemory per VkBuffer (fusor allocates a handful per
// executable: the arena, the constants, one staging buffer), so no sub-allocator is needed.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "backends/vulkan/vk_device.h"

namespace fusor::vk {

enum class MemoryKind {
  device,    // device-local; host-visible too when the context has unified memory
  upload,    // host-visible, coherent (host writes, device reads)
  readback,  // host-visible, coherent, cached where available (device writes, host reads)
};

// A buffer with its own memory; mapped for its lifetime when host-visible (mapped() != null).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // size is rounded up to 4 bytes (storage buffers are accessed in 32-bit words). Throws Error.
  DeviceBuffer(Context& ctx, uint64_t size, VkBufferUsageFlags usage, MemoryKind kind);
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  VkBuffer handle() const { return buffer_; }
  uint64_t size() const { return size_; }
  std::byte* mapped() const { return static_cast<std::byte*>(mapped_); }
  explicit operator bool() const { return buffer_ != VK_NULL_HANDLE; }
  void reset();

 private:
  VkDevice device_ = VK_NULL_HANDLE;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  uint64_t size_ = 0;
  void* mapped_ = nullptr;
};

// Process-wide counts of live VkDeviceMemory allocations (DeviceBuffer) and VkPipelines
// (VulkanExecutable): what a destroyed Session must give back (vulkan_live_objects()).
std::atomic<int64_t>& live_memory_count();
std::atomic<int64_t>& live_pipeline_count();

}  // namespace fusor::vk
