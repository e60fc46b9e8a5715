// Vulkan instance, physical-device discovery and the logical device (one compute queue).
//
// Contract:
//   * Instance::get() returns a process-wide instance (re-created when FUSOR_VK_VALIDATION
//     changed since the live one was made). Its devices() are ordered best first: discrete,
//     integrated, virtual GPUs, then CPU implementations (lavapipe), so index 0 is a real GPU
//     when there is one and lavapipe otherwise. Throws Error("vulkan") when no loader/ICD.
//   * Context::get(index) opens (or shares) a logical device on devices()[index] with one
//     compute queue, a transient command pool for uploads and the on-disk VkPipelineCache.
//     Throws Error("vulkan", "device index N out of range ...").
#pragma once
#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <unistd.h>  // getpid

#include "backends/vulkan/vk_common.h"

namespace fusor::vk {

// Whether the loader lists VK_LAYER_KHRONOS_validation.
bool validation_layer_installed();

// One matrix-unit operation a device lists (VkCooperativeMatrixPropertiesKHR / ...NV): an
// M x K A times a K x N B plus an M x N C. Types are VkComponentTypeKHR values (the NV enum
// has the same numbers: 0 f16, 1 f32, 2 f64, 3..6 s8..s64, 7..10 u8..u64); scope a VkScopeKHR
// (3 = subgroup).
struct CoopmatShape {
  uint32_t m = 0, n = 0, k = 0;
  uint32_t a = 0, b = 0, c = 0, result = 0;
  uint32_t scope = 0;
  bool saturating = false;
};

struct PhysicalDeviceInfo {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  std::string name;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  uint32_t api_version = 0, driver_version = 0, vendor_id = 0, device_id = 0;
  std::array<uint8_t, VK_UUID_SIZE> device_uuid{}, driver_uuid{};
  uint32_t subgroup_size = 0;
  uint32_t max_shared_memory = 0;
  uint32_t max_group_count[3] = {0, 0, 0};
  uint32_t max_group_size[3] = {0, 0, 0};
  uint32_t max_invocations = 0;
  // Streaming multiprocessors / compute units: VK_NV_shader_sm_builtins' shaderSMCount,
  // VK_AMD_shader_core_properties' engines x arrays x CUs, the host's hardware threads on a CPU
  // implementation (lavapipe); 0 when the device does not say. A proxy for how many workgroups
  // fill the device (vk_dialect.cpp choose_tiles: split-K).
  uint32_t compute_units = 0;
  uint64_t max_storage_buffer_range = 0;
  uint32_t max_storage_buffers = 0;  // maxPerStageDescriptorStorageBuffers (0: unknown)
  uint64_t min_storage_offset_alignment = 0;
  float timestamp_period = 0;   // ns per tick
  uint32_t queue_family = 0;    // chosen compute family
  bool timestamps = false;      // that family has timestampValidBits > 0
  // Features (what the device offers; Context enables all of them).
  bool shader_float16 = false, shader_float64 = false, shader_int64 = false, shader_int8 = false, shader_int16 = false;
  bool storage_8bit = false, storage_16bit = false;
  bool cooperative_matrix = false;  // VK_KHR_cooperative_matrix listed
  // Cooperative matrices (backends/vulkan/vk_coopmat.h query_cooperative_matrix): usable only
  // when the extension's cooperativeMatrix feature is offered; shapes from the extension that
  // Context enables: KHR's where it lists shapes (the NV SPIR-V the shaders compile to is
  // rewritten, coopmat_nv_to_khr), else NV's (or NV's with FUSOR_VK_COOPMAT_API=nv).
  bool coopmat_nv = false;          // NV's shapes are used (VK_NV_cooperative_matrix + its feature)
  bool coopmat_khr = false;         // VK_KHR_cooperative_matrix listed with its feature and shapes
  bool vulkan_memory_model = false; // vulkanMemoryModel + ...DeviceScope (the coopmat shaders use the model)
  std::vector<CoopmatShape> coopmat_shapes;
  bool bfloat16_ext = false;        // VK_KHR_shader_bfloat16 listed
  // bf16 matmuls on cooperative matrices (vk_coopmat.h coopmat_bf16_shape): a KHR subgroup
  // shape bf16*bf16+f32, VK_KHR_cooperative_matrix's feature and VK_KHR_shader_bfloat16's
  // shaderBFloat16Type + shaderBFloat16CooperativeMatrix; Context enables both extensions
  // (beside NV's) and clears this if the driver refuses the device with them.
  bool coopmat_bf16 = false;
  std::vector<CoopmatShape> coopmat_khr_also;  // KHR's list where NV's is used (bf16 shapes, `fusor devices`)
  bool subgroup_reduce = false;     // basic + vote + arithmetic subgroup ops in compute shaders
  bool subgroup_shuffle = false;    // and subgroupShuffleXor (compensated sums across a subgroup)
  // Float controls (VkPhysicalDeviceFloatControlsProperties, Vulkan 1.2; all false before):
  // whether a shader may request DenormPreserve / SignedZeroInfNanPreserve for floats of
  // width 16, 32, 64 (index 0, 1, 2), already restricted to a combination the device's
  // denormBehaviorIndependence allows. vk_compile adds the execution modes where true.
  bool float_controls = false;      // the properties were queried
  bool denorm_preserve[3] = {false, false, false};
  bool signed_zero_inf_nan_preserve[3] = {false, false, false};
  // RoundingModeRTE requested for these widths (shaderRoundingModeRTEFloat16/32/64, restricted
  // to a combination roundingModeIndependence allows); vk_compile adds the execution modes.
  bool rounding_rte[3] = {false, false, false};
  // float32 -> float16 conversions round to nearest even, subnormals kept (RTE and DenormPreserve
  // for 16-bit): fp16 stores are the plain conversion, not the software rounding fz_round_f16
  // (on the H100 GPT-2 2L fp16 156.6 -> 155.0 us, one A/B: noise-level). Stores only: a value rounded in a
  // register keeps the software rounding (VulkanDialect::round_value; the driver folds the pair).
  // FUSOR_VK_F16_RTE=0 turns it off.
  bool f16_convert_exact() const { return rounding_rte[0] && denorm_preserve[0] && shader_float16; }
  bool is_cpu() const { return type == VK_PHYSICAL_DEVICE_TYPE_CPU; }
  std::string type_name() const;
  std::string details() const;  // one line for `fusor devices` (includes what float controls preserve)
  // What generated kernels cannot keep exact on this device, one line ("" when nothing):
  // float widths the device computes in (fp32 always, fp16/fp64 when enabled) whose denormals
  // or signed zero/inf/NaN it does not promise to preserve. Backs DeviceInfo::numerics_note.
  std::string numerics_note() const;
};

class Instance {
 public:
  static std::shared_ptr<Instance> get();
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;
  VkInstance handle() const { return instance_; }
  bool validation() const { return validation_; }
  const std::vector<PhysicalDeviceInfo>& devices() const { return devices_; }

 private:
  Instance() = default;
  void create(bool want_validation);
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  bool validation_ = false;
  std::vector<PhysicalDeviceInfo> devices_;
};

// Whether opening `info` also retains its CUDA primary context for the process (cuda_driver.h
// hold_cuda_primary_context: without any CUDA context the H200's driver ran memory-bound Vulkan
// kernels 4-5x slower). NVIDIA devices only; FUSOR_VK_HOLD_CUDA_CONTEXT=0 / 1 forces it off /
// on; unset, on for every NVIDIA device but GeForce and TITAN boards. A no-op where libcuda is
// absent, the GPU has no CUDA device or its compute mode is not the default (an exclusive-process
// GPU has one context slot: taking it would lock CUDA users out).
bool holds_cuda_context(const PhysicalDeviceInfo& info);

class Context {
 public:
  static std::shared_ptr<Context> get(int index);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const PhysicalDeviceInfo& info() const { return info_; }
  VkDevice device() const { return device_; }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return info_.queue_family; }
  const VkPhysicalDeviceMemoryProperties& memory() const { return memory_; }
  VkPipelineCache pipeline_cache() const { return pipeline_cache_; }
  // vkQueueSubmit and the upload pool need external synchronization.
  std::mutex& queue_mutex() { return queue_mutex_; }
  // Arena memory that the host can map directly (CPU and integrated devices with a coherent
  // host-visible device-local type): then no staging copies are recorded.
  bool unified_memory() const { return unified_memory_; }
  // Writes the pipeline cache next to the SPIR-V cache (best effort; errors are ignored).
  void save_pipeline_cache();
  // FUSOR_VK_PIPELINE_STATS=1 on a device with VK_KHR_pipeline_executable_properties: pipelines
  // are created with CAPTURE_STATISTICS and their driver statistics (registers, spills, ...)
  // printed on stderr (vk_pipelines.cpp). A diagnostic only; off by default.
  bool pipeline_stats() const { return pipeline_stats_; }
  // Whether opening this device retained its GPU's CUDA primary context (holds_cuda_context).
  bool cuda_context_held() const { return cuda_context_held_; }
  // Runs `record` in a one-time command buffer and waits for it (uploads at compile time).
  template <class F> void submit_once(F&& record);
  // Error("vulkan") in a process forked after this device was opened: a driver's threads and
  // queues do not survive fork (lavapipe's child waited forever on its queue). The instance
  // alone does (a child of a parent that only listed devices opens its own device).
  void check_same_process() const;

 private:
  Context(std::shared_ptr<Instance> inst, int index);
  void submit_and_wait(VkCommandBuffer cb);
  VkCommandBuffer begin_once();

  std::shared_ptr<Instance> instance_;
  PhysicalDeviceInfo info_;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool upload_pool_ = VK_NULL_HANDLE;
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory_{};
  bool unified_memory_ = false;
  bool pipeline_stats_ = false;
  bool cuda_context_held_ = false;  // this GPU's CUDA primary context retained (holds_cuda_context)
  std::string pipeline_cache_dir_, pipeline_cache_key_;  // see runtime/disk_cache.h
  std::mutex queue_mutex_;
  long pid_ = static_cast<long>(getpid());  // the process that opened the device
};

// Whether this process is a fork of the one that opened a Vulkan device: objects inherited from
// the parent are then dropped without Vulkan calls (leaked), since the driver's state and file
// descriptors are the parent's.
bool forked_after_open();

template <class F> void Context::submit_once(F&& record) {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  VkCommandBuffer cb = begin_once();
  try {
    record(cb);
  } catch (...) {
    vkFreeCommandBuffers(device_, upload_pool_, 1, &cb);
    throw;
  }
  submit_and_wait(cb);
}

std::string hex(const uint8_t* p, size_t n);

}  // namespace fusor::vk
