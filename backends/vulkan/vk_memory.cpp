// DeviceBuffer creation: memory-type choice per MemoryKind, persistent mapping.
#include "backends/vulkan/vk_memory.h"

#include <algorithm>
#include <utility>

namespace fusor::vk {

namespace {

// First type allowed by `bits` that has all of `need`, preferring one that also has `want`.
int pick_memory_type(const VkPhysicalDeviceMemoryProperties& mp, uint32_t bits, VkMemoryPropertyFlags need,
                     VkMemoryPropertyFlags want) {
  int fallback = -1;
  for (uint32_t i = 0; i < mp.memoryTypeCount; ++i) {
    if (!(bits & (1u << i))) continue;
    VkMemoryPropertyFlags f = mp.memoryTypes[i].propertyFlags;
    if ((f & need) != need) continue;
    if ((f & want) == want) return static_cast<int>(i);
    if (fallback < 0) fallback = static_cast<int>(i);
  }
  return fallback;
}

}  // namespace

DeviceBuffer::DeviceBuffer(Context& ctx, uint64_t size, VkBufferUsageFlags usage, MemoryKind kind) : device_(ctx.device()) {
  size_ = align_up(size == 0 ? 4 : size, 4);
  // Refuse what no heap can hold before asking the driver (one clear line, not a driver error
  // or an overcommitted host allocation on lavapipe).
  uint64_t largest_heap = 0;
  for (uint32_t h = 0; h < ctx.memory().memoryHeapCount; ++h) largest_heap = std::max<uint64_t>(largest_heap, ctx.memory().memoryHeaps[h].size);
  check_fits(size_, largest_heap, "a Vulkan buffer", "the device's largest memory heap");
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = size_;
  bci.usage = usage;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check_vk(vkCreateBuffer(device_, &bci, nullptr, &buffer_), "vkCreateBuffer");
  try {
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device_, buffer_, &req);
    const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkMemoryPropertyFlags need = 0, want = 0;
    switch (kind) {
      case MemoryKind::device:
        need = ctx.unified_memory() ? (VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | host) : 0;
        want = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
        break;
      case MemoryKind::upload: need = host; break;
      case MemoryKind::readback: need = host, want = VK_MEMORY_PROPERTY_HOST_CACHED_BIT; break;
    }
    int type = pick_memory_type(ctx.memory(), req.memoryTypeBits, need, want);
    if (type < 0)
      throw Error("vulkan", "no memory type for a " + std::to_string(size_) + "-byte buffer (type bits " +
                                std::to_string(req.memoryTypeBits) + ")");
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = static_cast<uint32_t>(type);
    check_vk(vkAllocateMemory(device_, &mai, nullptr, &memory_), "vkAllocateMemory");
    ++live_memory_count();
    check_vk(vkBindBufferMemory(device_, buffer_, memory_, 0), "vkBindBufferMemory");
    if (ctx.memory().memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)
      check_vk(vkMapMemory(device_, memory_, 0, VK_WHOLE_SIZE, 0, &mapped_), "vkMapMemory");
  } catch (...) {
    reset();
    throw;
  }
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    reset();
    device_ = std::exchange(o.device_, VK_NULL_HANDLE);
    buffer_ = std::exchange(o.buffer_, VK_NULL_HANDLE);
    memory_ = std::exchange(o.memory_, VK_NULL_HANDLE);
    size_ = std::exchange(o.size_, 0);
    mapped_ = std::exchange(o.mapped_, nullptr);
  }
  return *this;
}

std::atomic<int64_t>& live_memory_count() {
  static std::atomic<int64_t> n{0};
  return n;
}

std::atomic<int64_t>& live_pipeline_count() {
  static std::atomic<int64_t> n{0};
  return n;
}

void DeviceBuffer::reset() {
  if (forked_after_open()) mapped_ = nullptr, buffer_ = VK_NULL_HANDLE, memory_ = VK_NULL_HANDLE;  // the parent's
  if (mapped_) vkUnmapMemory(device_, memory_);
  if (buffer_) vkDestroyBuffer(device_, buffer_, nullptr);
  if (memory_) vkFreeMemory(device_, memory_, nullptr), --live_memory_count();
  mapped_ = nullptr;
  buffer_ = VK_NULL_HANDLE;
  memory_ = VK_NULL_HANDLE;
  size_ = 0;
}

}  // namespace fusor::vk
