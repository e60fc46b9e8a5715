// A compiled Plan on one Vulkan device: pipelines, the arena, one recorded command buffer.
//
// Execution (DESIGN.md "Vulkan / SPIR-V"):
//   * memory: one arena buffer laid out by Plan::buffers' offsets, one constants buffer
//     uploaded once at compile time, and (on discrete GPUs) one upload + one readback
//     staging buffer. On CPU/integrated devices with coherent device-local host-visible
//     memory (lavapipe) the arena is mapped and no copies are recorded. The arena starts
//     poisoned (all bytes 0xFF: NaN for floats) so an element no kernel wrote is visible.
//   * bindings: every kernel slot (codegen.h kernel_bindings order) is a storage-buffer
//     descriptor over its buffer's byte range; descriptor sets are written at compile time.
//   * record once: [input copies] dispatches with a barrier only before a kernel that reads or
//     writes an arena range an earlier kernel since the last barrier wrote (RAW, WAW) or that
//     writes a range one read (WAR) [output copies], timestamps around it all. replay=false
//     re-records the command buffer on every run (the eager baseline).
//   * run: copy inputs in, one vkQueueSubmit, wait on a fence, copy outputs out.
//   * split-K matmuls (gemm.glsl FZ_SPLIT_K) bind a workspace region after the arena's
//     buffers as one more slot: partial tiles plus per-tile counters that start at zero and
//     that the kernel leaves at zero, so replays need no clearing.
//   * big values: a binding never spans more than maxStorageBufferRange bytes; a kernel over a
//     larger value runs as several dispatches over windows of it (vk_windows.h).
// Test knobs (environment, read at compile): FUSOR_VK_FORCE_STAGING=1 takes the discrete-GPU
// staging path on any device; FUSOR_VK_MAX_STORAGE_RANGE=BYTES lowers the binding limit below
// the device's (so windowing is exercised with small tensors); FUSOR_VK_UNSAFE_NO_BARRIERS=1 records no inter-kernel barriers
// (wrong results are possible: it exists so tests can prove synchronization validation fires).
// Thread safety: run() serialises on the executable; different executables may run concurrently.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/vulkan/vk_compile.h"
#include "backends/vulkan/vk_memory.h"
#include "backends/vulkan/vk_windows.h"
#include "ir/kernel_spec.h"

namespace fusor::vk {

struct ByteRange {
  uint64_t begin = 0, end = 0;  // [begin, end) in arena bytes
  bool overlaps(const ByteRange& o) const { return begin < o.end && o.begin < end; }
};

// One kernel of the plan as recorded: a pipeline, its descriptor set and its dispatch size.
struct Dispatch {
  std::string name;
  int kernel = -1;    // index into the plan's kernels
  int pipeline = -1;  // index into VulkanExecutable::pipelines_
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSet set = VK_NULL_HANDLE;
  uint32_t groups[3] = {1, 1, 1};
  std::vector<ByteRange> reads, writes;  // arena ranges (constants are immutable, not tracked)
  std::vector<int32_t> push;             // view offsets pushed before the dispatch (VulkanDialect::set_push_offsets)
};

// Why VulkanExecutable(ctx, g, opts) would throw Unsupported on a device described by `info`
// (the message), or "" when every kernel of p generates: builds no pipeline, touches no memory.
std::string unsupported_reason(const PhysicalDeviceInfo& info, const Plan& p);

class VulkanExecutable final : public Executable {
 public:
  // Builds the plan (build_plan(g, {opts.fusion})), generates and compiles every kernel,
  // allocates memory, uploads constants and records the command buffer. Throws Unsupported
  // for an op/dtype the backend cannot run, Error for everything else.
  VulkanExecutable(std::shared_ptr<Context> ctx, const Graph& g, const CompileOptions& opts);
  ~VulkanExecutable() override;

  std::vector<Tensor> run(const std::vector<Tensor>& inputs, RunStats* stats = nullptr) override;
  int kernel_count() const override { return static_cast<int>(dispatches_.size()); }
  // Which kernels run as several windowed dispatches (values above maxStorageBufferRange) and
  // which weights were uploaded transposed for it; "" when none.
  std::string notes() const override;
  // A timing replay: a separately recorded command buffer with a timestamp (bottom of pipe)
  // before the first dispatch and after each one, so a slice is the interval in which that
  // dispatch completed. Empty when the device's queue has no timestamps.
  std::vector<KernelTiming> profile(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs = nullptr) override;

  int barrier_count() const { return barrier_count_; }
  // Device time of the dispatches alone in the last run (staging copies excluded), us; -1 if
  // the device has no timestamps or nothing ran yet.
  double last_kernel_us() const { return last_kernel_us_; }
  const Plan& plan() const { return plan_; }
  const std::vector<std::string>& kernel_sources() const { return sources_; }  // per plan kernel ("" if none)
  const CompileStats& compile_stats() const { return compile_stats_; }
  size_t pipeline_count() const { return pipelines_.size(); }  // distinct pipelines (identical kernels share one)
  // Per plan kernel: "coopmat MxNxK" when it runs on cooperative matrices, else "".
  const std::vector<std::string>& coopmat_labels() const { return coopmat_labels_; }
  // Per plan kernel: its split-K slice count (gemm.glsl FZ_SPLIT_K; 1 = none).
  const std::vector<int>& split_k() const { return split_k_; }
  // Per plan kernel: "BMxBN TMxTN" of a matmul on gemm.glsl's blocked register tiles, else "".
  const std::vector<std::string>& blocked_tiles() const { return blocked_tiles_; }
  // Per plan kernel: conv.glsl's implicit-GEMM K loop, 3 double-buffered (FZ_CONV_DB) with
  // 4-wide weight loads (FZ_W_VEC4), 2 double-buffered, 1 the previous one (FUSOR_VK_CONV_DB=0),
  // 0 no implicit-GEMM conv (the direct path, other kernels).
  const std::vector<int>& conv_loops() const { return conv_loops_; }
  // Per plan kernel: operands its tiled matmul loads 4 at a time (0..2; -1 when the kernel is
  // no matmul on gemm.glsl's tiled path).
  const std::vector<int>& vector_operands() const { return vector_operands_; }

 private:
  // vk_pipelines.cpp: codegen -> SPIR-V -> pipelines, descriptor sets.
  void build_kernels();
  // vk_executable.cpp: arena/constants/staging, recording.
  void build_memory();
  // per_kernel: a query pool of dispatches_.size() + 1 timestamps (profile), or none.
  void record(VkCommandBuffer cb, VkQueryPool per_kernel = VK_NULL_HANDLE);
  std::vector<Tensor> run_locked(const std::vector<Tensor>& inputs, RunStats* stats, VkCommandBuffer cb,
                                 VkQueryPool per_kernel);
  void release();  // destroys the Vulkan objects (destructor, failed constructor)
  struct Binding {
    VkBuffer buffer = VK_NULL_HANDLE;
    uint64_t offset = 0, range = 0;
    int64_t element_delta = 0;
  };
  // The descriptor over elements [w.first, w.first + w.count) of plan buffer b (whole buffer:
  // {0, numel}); range may exceed max_range_ (callers check: binding_for throws).
  Binding window_binding(int buffer, const Window& w) const;
  Binding binding_for(int buffer, const Window& w) const;
  // Bytes of one bank of a banked binding of `buffer` (vk_windows.h): the largest multiple of
  // the offset alignment and the element size within max_range_.
  uint64_t bank_bytes(int buffer) const;
  // Constants only a [K, N] row-major matmul weight too large to window reads: uploaded
  // transposed ([N, K]) and the kernel's view rewritten, so it splits along N (vk_windows.h).
  void transpose_wide_weights();
  void release_pipelines();
  VkPipelineLayout layout_for(uint32_t bindings, bool push_offsets = false);

  std::shared_ptr<Context> ctx_;
  CompileOptions opts_;
  Plan plan_;
  VkDevice dev_ = VK_NULL_HANDLE;

  DeviceBuffer arena_, consts_, staging_in_, staging_out_;
  std::vector<int64_t> const_offset_;     // per plan buffer: byte offset in consts_, -1 if not a constant
  std::vector<char> const_transposed_;    // per plan buffer: a 2-D constant uploaded transposed
  uint64_t max_range_ = 0;                // bytes one descriptor may span (device limit, or lower: see above)
  std::vector<uint64_t> in_offset_, out_offset_;  // per graph input/output: byte offset in staging

  std::vector<VkPipeline> pipelines_;
  // Each pipeline's key in the device's shared registry (vk_pipelines.cpp shared_pipelines):
  // identical kernels of every executable on the device share one pipeline, released by its last user.
  std::vector<std::string> pipeline_keys_;
  std::vector<std::pair<VkDescriptorSetLayout, VkPipelineLayout>> layouts_;  // index = binding count
  std::vector<VkPipelineLayout> push_layouts_;  // the same with the push-constant offsets block
  VkDescriptorPool descriptor_pool_ = VK_NULL_HANDLE;
  std::vector<Dispatch> dispatches_;
  std::vector<std::string> sources_;
  std::vector<std::string> coopmat_labels_;  // see coopmat_labels()
  std::vector<int> split_k_;                 // see split_k()
  std::vector<std::string> blocked_tiles_;   // see blocked_tiles()
  std::vector<int> conv_loops_;              // see conv_loops()
  std::vector<int> vector_operands_;         // see vector_operands()
  CompileStats compile_stats_;
  int barrier_count_ = 0;
  double last_kernel_us_ = -1;
  bool staged_ = false;         // inputs/outputs go through staging copies (not mapped arena)
  bool checks_indices_ = false; // some kernel reports out-of-range indices (codegen.h)
  uint64_t status_offset_ = 0;  // byte offset of that status word in the arena
  uint64_t status_staging_ = 0; // ... and of its copy in staging_out_ (staged mode)
  // Split-K workspace (vk_dialect.h splitk_workspace_bytes): one region after the status word
  // that every split-K kernel binds in turn (its writes order them), zeroed once at build.
  uint64_t split_offset_ = 0, split_bytes_ = 0;
  int64_t split_counters_ = 0;  // the counter region every split-K kernel declares (set_split_counters)
  bool skip_barriers_ = false;  // FUSOR_VK_UNSAFE_NO_BARRIERS: only for testing the validation

  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkCommandBuffer command_buffer_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkQueryPool query_pool_ = VK_NULL_HANDLE;
  std::mutex run_mutex_;
};

}  // namespace fusor::vk
