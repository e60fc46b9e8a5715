// VulkanExecutable: memory (arena, constants, staging), command-buffer recording with
// hazard-driven barriers, and run().
#include "backends/vulkan/vk_executable.h"
#include "backends/vulkan/vulkan_backend.h"
#include "backends/codegen.h"
#include "backends/compile_pool.h"
#include "backends/vulkan/vk_dialect.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "ir/phases.h"

namespace fusor::vk {

namespace {

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

constexpr VkAccessFlags kShaderRW = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;

void memory_barrier(VkCommandBuffer cb, VkPipelineStageFlags src_stage, VkAccessFlags src, VkPipelineStageFlags dst_stage,
                    VkAccessFlags dst) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = src;
  mb.dstAccessMask = dst;
  vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

// Sorted, merged copy of ranges (fewer VkBufferMemoryBarriers).
std::vector<ByteRange> merged(std::vector<ByteRange> r) {
  std::sort(r.begin(), r.end(), [](const ByteRange& a, const ByteRange& b) { return a.begin < b.begin; });
  std::vector<ByteRange> out;
  for (auto& x : r) {
    if (x.end <= x.begin) continue;
    if (!out.empty() && x.begin <= out.back().end) out.back().end = std::max(out.back().end, x.end);
    else out.push_back(x);
  }
  return out;
}

bool any_overlap(const std::vector<ByteRange>& a, const std::vector<ByteRange>& b) {
  for (auto& x : a)
    for (auto& y : b)
      if (x.overlaps(y)) return true;
  return false;
}

// Writes the [R, C] tensor t as its [C, R] transpose to dst, in cache-sized tiles.
void transpose_2d(const Tensor& t, std::byte* dst) {
  const int64_t r = t.shape()[0], c = t.shape()[1];
  const size_t es = dtype_size(t.dtype());
  const std::byte* src = static_cast<const std::byte*>(t.raw());
  constexpr int64_t kTile = 64;
  for (int64_t i0 = 0; i0 < r; i0 += kTile)
    for (int64_t j0 = 0; j0 < c; j0 += kTile)
      for (int64_t i = i0; i < std::min(r, i0 + kTile); ++i)
        for (int64_t j = j0; j < std::min(c, j0 + kTile); ++j)
          std::memcpy(dst + (j * r + i) * es, src + (i * c + j) * es, es);
}

}  // namespace

VulkanExecutable::VulkanExecutable(std::shared_ptr<Context> ctx, const Graph& g, const CompileOptions& opts)
    : ctx_(std::move(ctx)), opts_(opts), dev_(ctx_->device()) {
  staged_ = !ctx_->unified_memory() || env_flag("FUSOR_VK_FORCE_STAGING");
  max_range_ = ctx_->info().max_storage_buffer_range;
  if (const char* r = std::getenv("FUSOR_VK_MAX_STORAGE_RANGE"); r && *r) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(r, &end, 10);
    if (!end || *end || v < 256)
      throw Error("vulkan", std::string("FUSOR_VK_MAX_STORAGE_RANGE='") + r + "' is not a byte count >= 256");
    max_range_ = std::min<uint64_t>(max_range_, v);
  }
  skip_barriers_ = env_flag("FUSOR_VK_UNSAFE_NO_BARRIERS");
  try {
    const FusionOptions fo = vulkan_fusion_options(opts);
    {
      PhaseScope ps("fusion");
      plan_ = build_plan(g, fo);
    }
    {
      PhaseScope ps("weight upload");  // arena, constants (staged on discrete GPUs), poison
      build_memory();
    }
    build_kernels();
    if (compile_stats_.compiled > 0) ctx_->save_pipeline_cache();

    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = ctx_->queue_family();
    check_vk(vkCreateCommandPool(dev_, &pci, nullptr, &command_pool_), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = command_pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    check_vk(vkAllocateCommandBuffers(dev_, &ai, &command_buffer_), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check_vk(vkCreateFence(dev_, &fci, nullptr, &fence_), "vkCreateFence");
    if (ctx_->info().timestamps) {
      VkQueryPoolCreateInfo qci{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
      qci.queryType = VK_QUERY_TYPE_TIMESTAMP;
      qci.queryCount = 4;  // start, dispatches begin, dispatches end, end
      check_vk(vkCreateQueryPool(dev_, &qci, nullptr, &query_pool_), "vkCreateQueryPool");
    }
    if (opts_.replay) {
      PhaseScope ps("record");
      record(command_buffer_);
    }
  } catch (...) {
    release();  // Vulkan objects made so far; members are then destroyed normally
    throw;
  }
}

VulkanExecutable::~VulkanExecutable() { release(); }

void VulkanExecutable::release() {
  if (forked_after_open()) {  // a forked child's copy: the handles are the parent's (dropped, not destroyed)
    pipelines_.clear(), pipeline_keys_.clear(), push_layouts_.clear(), layouts_.clear();
    descriptor_pool_ = VK_NULL_HANDLE, command_pool_ = VK_NULL_HANDLE, fence_ = VK_NULL_HANDLE, query_pool_ = VK_NULL_HANDLE;
  }
  // run() always waits for its fence, so nothing of ours is in flight here.
  release_pipelines();  // shared with the device's other executables: the last user destroys each
  for (VkPipelineLayout& l : push_layouts_)
    if (l) vkDestroyPipelineLayout(dev_, l, nullptr), l = VK_NULL_HANDLE;
  for (auto& [set_layout, layout] : layouts_) {
    if (layout) vkDestroyPipelineLayout(dev_, layout, nullptr), layout = VK_NULL_HANDLE;
    if (set_layout) vkDestroyDescriptorSetLayout(dev_, set_layout, nullptr), set_layout = VK_NULL_HANDLE;
  }
  if (descriptor_pool_) vkDestroyDescriptorPool(dev_, descriptor_pool_, nullptr), descriptor_pool_ = VK_NULL_HANDLE;
  if (command_pool_) vkDestroyCommandPool(dev_, command_pool_, nullptr), command_pool_ = VK_NULL_HANDLE;
  if (fence_) vkDestroyFence(dev_, fence_, nullptr), fence_ = VK_NULL_HANDLE;
  if (query_pool_) vkDestroyQueryPool(dev_, query_pool_, nullptr), query_pool_ = VK_NULL_HANDLE;
  arena_.reset();
  consts_.reset();
  staging_in_.reset();
  staging_out_.reset();
}

// ---- memory ---------------------------------------------------------------------------------

void VulkanExecutable::build_memory() {
  const PhysicalDeviceInfo& info = ctx_->info();
  const uint64_t align = std::max<uint64_t>(info.min_storage_offset_alignment, 16);
  const VkBufferUsageFlags usage =
      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

  transpose_wide_weights();
  // Constants: packed at aligned offsets so their bindings never need an element delta.
  const_offset_.assign(plan_.buffers.size(), -1);
  uint64_t const_bytes = 0;
  for (size_t b = 0; b < plan_.buffers.size(); ++b) {
    const fusor::Buffer& buf = plan_.buffers[b];
    if (buf.role == fusor::Buffer::Role::constant) {
      const Value& v = plan_.graph.values.at(buf.value);
      if (!v.constant) throw Error("vulkan", "constant buffer '" + buf.name + "' has no value in the plan's graph");
      const_offset_[b] = static_cast<int64_t>(const_bytes);
      const_bytes = align_up(const_bytes + buf.nbytes(), align);
    } else if (buf.offset < 0) {
      throw Error("vulkan", "buffer '" + buf.name + "' has no arena offset in the plan");
    }
  }

  // +align: room for a binding's range to round up to whole 32-bit words at the end; the
  // index-check status word (codegen.h kernel_checks_indices) lives at the aligned end.
  status_offset_ = align_up(static_cast<uint64_t>(std::max<int64_t>(plan_.arena_bytes, 0)), align);
  // The split-K workspace after it: the most any one matmul or conv kernel needs (all share it).
  split_offset_ = status_offset_ + align;
  // One counter region for all of them (VulkanDialect::set_split_counters), then the largest
  // partial-tile area.
  split_bytes_ = 0;
  split_counters_ = 0;
  int64_t partials = 0;
  const int64_t split_budget = static_cast<int64_t>(max_range_ > 256 ? max_range_ - 256 : 0);
  for (const KernelSpec& k : plan_.kernels)
    if (k.matmul || k.conv) {
      VulkanDialect d(info, k, std::vector<int64_t>(kernel_bindings(k).size(), 0), &plan_, split_budget);
      if (d.split_workspace_bytes() <= 0) continue;
      split_counters_ = std::max(split_counters_, d.split_counter_count());
      partials = std::max(partials, d.split_workspace_bytes() - 4 * d.split_counter_count());
    }
  if (partials > 0) split_bytes_ = align_up(static_cast<uint64_t>(4 * split_counters_ + partials), align);
  arena_ = DeviceBuffer(*ctx_, split_offset_ + split_bytes_, usage, MemoryKind::device);
  consts_ = DeviceBuffer(*ctx_, const_bytes + align, usage, MemoryKind::device);

  // Copied in 4 MiB pieces on all cores (compile_pool.h): the first write to each page of a
  // fresh mapping faults, and one thread doing it for a GPT-2-sized model's weights was the
  // largest part of the upload (README "Load-time profile").
  auto fill_constants = [&](std::byte* dst) {
    struct Piece {
      size_t buffer, begin, end;  // bytes [begin, end) of the constant; end == 0: transpose it whole
    };
    constexpr size_t kPiece = size_t{4} << 20;
    std::vector<Piece> pieces;
    for (size_t b = 0; b < plan_.buffers.size(); ++b) {
      if (const_offset_[b] < 0) continue;
      const size_t n = plan_.graph.values[plan_.buffers[b].value].constant->nbytes();
      if (const_transposed_[b]) pieces.push_back({b, 0, 0});
      else
        for (size_t at = 0; at < n; at += kPiece) pieces.push_back({b, at, std::min(n, at + kPiece)});
    }
    for_each_job(pieces.size(), [&](size_t i) {
      const Piece& p = pieces[i];
      const Tensor& t = *plan_.graph.values[plan_.buffers[p.buffer].value].constant;
      if (p.end == 0) transpose_2d(t, dst + const_offset_[p.buffer]);
      else std::memcpy(dst + const_offset_[p.buffer] + p.begin, t.raw() + p.begin, p.end - p.begin);
    });
  };
  if (!staged_) {
    fill_constants(consts_.mapped());
    std::memset(arena_.mapped(), 0xFF, split_offset_);  // poison: NaN for floats
    std::memset(arena_.mapped() + split_offset_, 0, split_bytes_);  // split-K counters start at zero
  } else {
    DeviceBuffer upload(*ctx_, consts_.size(), VK_BUFFER_USAGE_TRANSFER_SRC_BIT, MemoryKind::upload);
    fill_constants(upload.mapped());
    ctx_->submit_once([&](VkCommandBuffer cb) {
      VkBufferCopy region{0, 0, consts_.size()};
      vkCmdCopyBuffer(cb, upload.handle(), consts_.handle(), 1, &region);
      vkCmdFillBuffer(cb, arena_.handle(), 0, split_offset_, 0xFFFFFFFFu);
      if (split_bytes_) vkCmdFillBuffer(cb, arena_.handle(), split_offset_, split_bytes_, 0u);
      // Barriers order later submissions on this queue too, so every dispatch sees the data.
      memory_barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                     kShaderRW | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
    });
  }

  // Staging for graph inputs/outputs (discrete devices only).
  in_offset_.assign(plan_.input_buffers.size(), 0);
  out_offset_.assign(plan_.output_buffers.size(), 0);
  if (staged_) {
    uint64_t in_bytes = 0, out_bytes = 0;
    for (size_t i = 0; i < plan_.input_buffers.size(); ++i)
      if (plan_.input_buffers[i] >= 0) in_offset_[i] = in_bytes, in_bytes = align_up(in_bytes + plan_.buffers[plan_.input_buffers[i]].nbytes(), 16);
    for (size_t i = 0; i < plan_.output_buffers.size(); ++i)
      if (plan_.output_buffers[i] >= 0) out_offset_[i] = out_bytes, out_bytes = align_up(out_bytes + plan_.buffers[plan_.output_buffers[i]].nbytes(), 16);
    staging_in_ = DeviceBuffer(*ctx_, in_bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, MemoryKind::upload);
    status_staging_ = out_bytes;  // the status word is copied after the outputs
    staging_out_ = DeviceBuffer(*ctx_, out_bytes + 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT, MemoryKind::readback);
  }
}

VulkanExecutable::Binding VulkanExecutable::window_binding(int b, const Window& w) const {
  const fusor::Buffer& buf = plan_.buffers.at(b);
  const PhysicalDeviceInfo& info = ctx_->info();
  const uint64_t align = std::max<uint64_t>(info.min_storage_offset_alignment, 1);
  const bool is_const = const_offset_[b] >= 0;
  const DeviceBuffer& mem = is_const ? consts_ : arena_;
  const uint64_t esize = std::max<size_t>(dtype_size(buf.dtype), 1);
  const uint64_t offset = static_cast<uint64_t>(is_const ? const_offset_[b] : buf.offset) + static_cast<uint64_t>(w.first) * esize;
  Binding r;
  r.buffer = mem.handle();
  r.offset = offset / align * align;
  // A misaligned offset binds from the aligned-down address; the kernel adds the difference
  // (in elements) to every index of that slot.
  const uint64_t delta = offset - r.offset;
  if (delta % esize != 0)
    throw Error("vulkan", "buffer '" + buf.name + "' at arena offset " + std::to_string(offset) + " is not aligned to its " +
                              std::to_string(esize) + "-byte elements");
  r.element_delta = static_cast<int64_t>(delta / esize);
  r.range = std::min<uint64_t>(align_up(delta + static_cast<uint64_t>(w.count) * esize, 4), mem.size() - r.offset);
  r.range = std::max<uint64_t>(r.range, 4);
  return r;
}

uint64_t VulkanExecutable::bank_bytes(int b) const {
  const uint64_t align = std::max<uint64_t>(ctx_->info().min_storage_offset_alignment, 1);
  const uint64_t unit = std::lcm(align, static_cast<uint64_t>(std::max<size_t>(dtype_size(plan_.buffers.at(b).dtype), 1)));
  return max_range_ / unit * unit;
}

VulkanExecutable::Binding VulkanExecutable::binding_for(int b, const Window& w) const {
  Binding r = window_binding(b, w);
  if (r.range > max_range_) {
    const fusor::Buffer& buf = plan_.buffers.at(b);
    throw Error("vulkan", "buffer '" + buf.name + "' (" + std::to_string(r.range) + " bytes) exceeds maxStorageBufferRange (" +
                              std::to_string(max_range_) + ") of device '" + ctx_->info().name + "'");
  }
  return r;
}

void VulkanExecutable::transpose_wide_weights() {
  const_transposed_.assign(plan_.buffers.size(), 0);
  // How often each buffer is accessed anywhere in the plan (a transposed upload must be the
  // only layout anyone reads).
  std::vector<int> uses(plan_.buffers.size(), 0);
  auto use = [&](int b) {  // -1: an omitted optional input/output of an opaque node
    if (b >= 0 && b < static_cast<int>(uses.size())) ++uses[b];
  };
  for (const KernelSpec& k : plan_.kernels) {
    for (auto& l : k.loads) use(l.buffer);
    for (auto& o : k.outputs) use(o.buffer);
    if (k.matmul) use(k.matmul->a_buffer), use(k.matmul->b_buffer);
    if (k.conv) use(k.conv->x_buffer), use(k.conv->w_buffer);
    for (auto& d : k.dots) use(d.mm.a_buffer), use(d.mm.b_buffer);
    if (k.row_product) use(k.row_product->b_buffer), use(k.row_product->c_buffer);
    for (int b : k.opaque_inputs) use(b);
    for (int b : k.opaque_outputs) use(b);
  }
  for (int b : plan_.output_buffers) use(b);
  for (KernelSpec& k : plan_.kernels) {
    // A quantized B (dequant_b) indexes its scales by the buffer's own layout: never transposed.
    if (!k.matmul || k.matmul->dequant_b || k.space.size() < 2 || k.matmul->b.strides.size() != k.space.size()) continue;
    MatMulDesc& m = *k.matmul;
    const int b = m.b_buffer;
    const fusor::Buffer& buf = plan_.buffers[b];
    const size_t nb = k.space.size() - 2;
    if (buf.role != fusor::Buffer::Role::constant || uses[b] != 1 || buf.shape != Shape{m.k, m.n} || m.b.offset != 0) continue;
    if (m.b.strides[nb] != m.n || m.b.strides[nb + 1] != 1) continue;  // not [K, N] row-major
    bool broadcast = true;
    for (size_t i = 0; i < nb; ++i) broadcast = broadcast && m.b.strides[i] == 0;
    // Only when the weight cannot be bound whole: a [K, N] layout has no narrower N-window.
    const uint64_t esize = dtype_size(buf.dtype);
    if (!broadcast || static_cast<uint64_t>(buf.nbytes()) + 256 <= max_range_ || esize == 0) continue;
    const_transposed_[b] = 1;
    m.b.strides[nb] = 1;
    m.b.strides[nb + 1] = m.k;
  }
}

std::string VulkanExecutable::notes() const {
  std::vector<int> per_kernel(plan_.kernels.size(), 0);
  for (const Dispatch& d : dispatches_) ++per_kernel[d.kernel];
  int split = 0, pieces = 0, transposed = 0;
  for (int n : per_kernel)
    if (n > 1) ++split, pieces += n;
  for (char t : const_transposed_) transposed += t ? 1 : 0;
  std::string s;
  if (split) {
    s = std::to_string(split) + " kernel(s) split into " + std::to_string(pieces) +
        " windowed dispatches (maxStorageBufferRange " + std::to_string(max_range_) + " bytes)";
    if (transposed) s += ", " + std::to_string(transposed) + " [K, N] weight(s) uploaded transposed";
  }
  // Which matmuls run on the matrix units (FUSOR_VK_COOPMAT, vk_coopmat.h), e.g.
  // "2 matmul kernel(s) on cooperative matrices (coopmat 16x8x16, nv)".
  // bf16 ones run KHR modules (coopmat_nv_to_khr) on every device: one count per kind.
  std::map<std::string, int> kinds;
  for (const std::string& l : coopmat_labels_)
    if (!l.empty()) ++kinds[l + ", " + (ctx_->info().coopmat_nv && l.find("bf16") == std::string::npos ? "nv" : "khr")];
  for (const auto& [label, cm] : kinds)
    s += (s.empty() ? "" : "; ") + std::to_string(cm) + " matmul kernel(s) on cooperative matrices (" + label + ")";
  // Split-K matmuls (vk_dialect.h choose_tiles, FUSOR_VK_SPLIT_K): "1 matmul kernel(s) split-K (up to 16 K slices)".
  int sk = 0, most = 1;
  for (int v : split_k_)
    if (v > 1) ++sk, most = std::max(most, v);
  if (sk)
    s += (s.empty() ? "" : "; ") + std::to_string(sk) + " matmul kernel(s) split-K (up to " + std::to_string(most) + " K slices)";
  // Implicit-GEMM convs (conv.glsl): "3 conv kernel(s) on the double-buffered implicit GEMM (2
  // with 4-wide weight loads)".
  int cdb = 0, cv4 = 0, cold = 0;
  for (int v : conv_loops_) cdb += v >= 2, cv4 += v == 3, cold += v == 1;
  if (cdb)
    s += (s.empty() ? "" : "; ") + std::to_string(cdb) + " conv kernel(s) on the double-buffered implicit GEMM (" + std::to_string(cv4) +
         " with 4-wide weight loads)";
  if (cold) s += (s.empty() ? "" : "; ") + std::to_string(cold) + " conv kernel(s) on the single-buffered implicit GEMM (FUSOR_VK_CONV_DB=0)";
  // Blocked register tiles (gemm.glsl / conv.glsl FZ_BLOCKED): "2 matmul kernel(s) on blocked register tiles (64x128 4x8,
  // 128x128 8x8)", the same for conv kernels.
  for (const bool conv : {false, true}) {
    std::vector<std::string> shapes;
    int bl = 0;
    for (size_t i = 0; i < blocked_tiles_.size(); ++i)
      if (!blocked_tiles_[i].empty() && plan_.kernels[i].conv.has_value() == conv) {
        ++bl;
        if (std::find(shapes.begin(), shapes.end(), blocked_tiles_[i]) == shapes.end()) shapes.push_back(blocked_tiles_[i]);
      }
    if (!bl) continue;
    s += (s.empty() ? "" : "; ") + std::to_string(bl) + (conv ? " conv" : " matmul") + " kernel(s) on blocked register tiles (";
    for (size_t i = 0; i < shapes.size(); ++i) s += (i ? ", " : "") + shapes[i];
    s += ")";
  }
  // 4-wide operand loads (gemm.glsl FZ_A_VEC4 / FZ_B_VEC4): "3 of 4 matmul operands loaded 4-wide".
  int vec = 0, operands = 0;
  for (size_t i = 0; i < plan_.kernels.size(); ++i)
    if (vector_operands_[i] >= 0) vec += vector_operands_[i], operands += 2;
  if (vec) s += (s.empty() ? "" : "; ") + std::to_string(vec) + " of " + std::to_string(operands) + " tiled matmul operands loaded 4-wide";
  // Dependent dispatches wait on a barrier each (record()): "27 dispatches, 22 barriers".
  s += (s.empty() ? "" : "; ") + std::to_string(dispatches_.size()) + " dispatches, " + std::to_string(barrier_count_) + " barriers";
  // The GPU's CUDA context retained at device open (vk_device.h holds_cuda_context).
  if (ctx_->cuda_context_held()) s += std::string(s.empty() ? "" : "; ") + "CUDA context held (FUSOR_VK_HOLD_CUDA_CONTEXT)";
  return s;
}

// ---- recording ------------------------------------------------------------------------------

void VulkanExecutable::record(VkCommandBuffer cb, VkQueryPool per_kernel) {
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = opts_.replay ? 0 : VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check_vk(vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
  if (query_pool_) {
    vkCmdResetQueryPool(cb, query_pool_, 0, 4);
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, query_pool_, 0);
  }
  if (checks_indices_) {  // zero the status word before the kernels that may set it
    vkCmdFillBuffer(cb, arena_.handle(), status_offset_, 4, 0u);
    memory_barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, kShaderRW);
  }
  if (staged_) {
    std::vector<VkBufferCopy> regions;
    for (size_t i = 0; i < plan_.input_buffers.size(); ++i) {
      const int b = plan_.input_buffers[i];
      if (b >= 0 && plan_.buffers[b].nbytes() > 0)
        regions.push_back({in_offset_[i], static_cast<uint64_t>(plan_.buffers[b].offset), static_cast<uint64_t>(plan_.buffers[b].nbytes())});
    }
    if (!regions.empty()) {
      vkCmdCopyBuffer(cb, staging_in_.handle(), arena_.handle(), static_cast<uint32_t>(regions.size()), regions.data());
      memory_barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, kShaderRW);
    }
  }

  // Bottom of pipe, as the per-kernel timestamps: written once every earlier command (the
  // staging copy) has completed, so the kernel span starts after it. (With ALL_COMMANDS here the
  // H200 gave bimodal W2 times, p10 190 us / median 910 us; this change is not yet re-measured.)
  if (query_pool_) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, query_pool_, 1);
  if (per_kernel) {
    vkCmdResetQueryPool(cb, per_kernel, 0, static_cast<uint32_t>(dispatches_.size() + 1));
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, per_kernel, 0);
  }
  uint32_t done = 0;

  // Barriers only where data flows: a kernel that reads (RAW) or writes (WAW) bytes written
  // since the last barrier, or writes bytes read since then (WAR), waits for everything
  // before it; the barrier makes every pending write available, so the sets restart empty.
  barrier_count_ = 0;
  std::vector<ByteRange> pending_writes, pending_reads;
  VkPipeline bound = VK_NULL_HANDLE;
  for (const Dispatch& d : dispatches_) {
    const bool hazard = any_overlap(d.reads, pending_writes) || any_overlap(d.writes, pending_writes) ||
                        any_overlap(d.writes, pending_reads);
    if (hazard && !skip_barriers_) {
      std::vector<VkBufferMemoryBarrier> bmb;
      for (const ByteRange& r : merged(pending_writes)) {
        VkBufferMemoryBarrier b{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
        b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
        b.dstAccessMask = kShaderRW;
        b.srcQueueFamilyIndex = b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        b.buffer = arena_.handle();
        b.offset = r.begin;
        b.size = r.end - r.begin;
        bmb.push_back(b);
      }
      // Pure WAR: an execution dependency alone suffices (no writes to make visible).
      vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 0, nullptr,
                           static_cast<uint32_t>(bmb.size()), bmb.data(), 0, nullptr);
      ++barrier_count_;
      pending_writes.clear();
      pending_reads.clear();
    }
    if (pipelines_[d.pipeline] != bound) {
      bound = pipelines_[d.pipeline];
      vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, bound);
    }
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, d.layout, 0, 1, &d.set, 0, nullptr);
    if (!d.push.empty())
      vkCmdPushConstants(cb, d.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, static_cast<uint32_t>(d.push.size() * sizeof(int32_t)), d.push.data());
    vkCmdDispatch(cb, d.groups[0], d.groups[1], d.groups[2]);
    if (per_kernel) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, per_kernel, ++done);
    pending_reads.insert(pending_reads.end(), d.reads.begin(), d.reads.end());
    pending_writes.insert(pending_writes.end(), d.writes.begin(), d.writes.end());
  }

  if (query_pool_) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, query_pool_, 2);
  if (staged_) {
    memory_barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                   VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                   VK_ACCESS_TRANSFER_READ_BIT);
    std::vector<VkBufferCopy> regions;
    for (size_t i = 0; i < plan_.output_buffers.size(); ++i) {
      const int b = plan_.output_buffers[i];
      if (b >= 0 && const_offset_[b] < 0 && plan_.buffers[b].nbytes() > 0)
        regions.push_back({static_cast<uint64_t>(plan_.buffers[b].offset), out_offset_[i], static_cast<uint64_t>(plan_.buffers[b].nbytes())});
    }
    if (checks_indices_) regions.push_back({status_offset_, status_staging_, 4});
    if (!regions.empty())
      vkCmdCopyBuffer(cb, arena_.handle(), staging_out_.handle(), static_cast<uint32_t>(regions.size()), regions.data());
    memory_barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                   VK_ACCESS_HOST_READ_BIT);
  } else {
    // Device writes must be made available to the host domain before the host maps them.
    memory_barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                   VK_ACCESS_HOST_READ_BIT);
  }
  if (query_pool_) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, query_pool_, 3);
  check_vk(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
}

// ---- run ------------------------------------------------------------------------------------

std::vector<Tensor> VulkanExecutable::run(const std::vector<Tensor>& inputs, RunStats* stats) {
  std::lock_guard<std::mutex> lock(run_mutex_);
  return run_locked(inputs, stats, command_buffer_, VK_NULL_HANDLE);
}

std::vector<Tensor> VulkanExecutable::run_locked(const std::vector<Tensor>& inputs, RunStats* stats, VkCommandBuffer cb,
                                                 VkQueryPool per_kernel) {
  const auto t0 = std::chrono::steady_clock::now();
  ctx_->check_same_process();
  const Graph& g = plan_.graph;
  check_run_inputs(g, inputs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const int b = i < plan_.input_buffers.size() ? plan_.input_buffers[i] : -1;
    if (b < 0) continue;  // an input no kernel reads
    std::byte* dst = staged_ ? staging_in_.mapped() + in_offset_[i] : arena_.mapped() + plan_.buffers[b].offset;
    std::memcpy(dst, inputs[i].raw(), inputs[i].nbytes());
  }

  if (!opts_.replay) {
    check_vk(vkResetCommandBuffer(cb, 0), "vkResetCommandBuffer");
    record(cb, per_kernel);
  }
  check_vk(vkResetFences(dev_, 1, &fence_), "vkResetFences");
  {
    std::lock_guard<std::mutex> qlock(ctx_->queue_mutex());
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    check_vk(vkQueueSubmit(ctx_->queue(), 1, &si, fence_), "vkQueueSubmit");
  }
  check_vk(vkWaitForFences(dev_, 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");

  if (checks_indices_) {
    uint32_t status = 0;
    std::memcpy(&status, staged_ ? staging_out_.mapped() + status_staging_ : arena_.mapped() + status_offset_, 4);
    if (status != 0) throw Error("vulkan", index_error_message(plan_, status));
  }
  std::vector<Tensor> outs;
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const Value& v = g.values[g.outputs[i]];
    const int b = i < plan_.output_buffers.size() ? plan_.output_buffers[i] : -1;
    if (v.constant) {  // a graph output that folded to a constant never reaches the device
      outs.push_back(*v.constant);
      continue;
    }
    if (b < 0) throw Error("vulkan", "graph output '" + v.name + "' has no buffer in the plan");
    Tensor t(v.dtype, v.shape);
    const std::byte* src = staged_ ? staging_out_.mapped() + out_offset_[i] : arena_.mapped() + plan_.buffers[b].offset;
    std::memcpy(t.raw(), src, t.nbytes());
    outs.push_back(std::move(t));
  }

  double device_us = -1;
  if (query_pool_) {
    uint64_t ts[4] = {0, 0, 0, 0};
    check_vk(vkGetQueryPoolResults(dev_, query_pool_, 0, 4, sizeof ts, ts, sizeof(uint64_t),
                                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
             "vkGetQueryPoolResults");
    const double us_per_tick = ctx_->info().timestamp_period / 1000.0;
    if (ts[3] >= ts[0]) device_us = static_cast<double>(ts[3] - ts[0]) * us_per_tick;
    if (ts[2] >= ts[1]) last_kernel_us_ = static_cast<double>(ts[2] - ts[1]) * us_per_tick;
  }
  if (stats) {
    stats->host_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    // Kernels only (timestamps around the dispatches), as on CUDA: staging copies over PCIe
    // would otherwise dominate memory-bound kernels by 100x.
    stats->device_us = last_kernel_us_ >= 0 ? last_kernel_us_ : device_us;
  }
  return outs;
}

// ---- profiling ------------------------------------------------------------------------------

std::vector<KernelTiming> VulkanExecutable::profile(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs) {
  std::lock_guard<std::mutex> lock(run_mutex_);
  ctx_->check_same_process();
  if (!query_pool_) {
    auto outs = run_locked(inputs, nullptr, command_buffer_, VK_NULL_HANDLE);
    if (outputs) *outputs = std::move(outs);
    return {};
  }
  // Its own command buffer and query pool, so the replayed one stays as recorded.
  const uint32_t n = static_cast<uint32_t>(dispatches_.size());
  VkQueryPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VkQueryPoolCreateInfo qci{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  qci.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qci.queryCount = n + 1;
  check_vk(vkCreateQueryPool(dev_, &qci, nullptr, &pool), "vkCreateQueryPool");
  std::vector<uint64_t> ts(n + 1, 0);
  try {
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = command_pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    check_vk(vkAllocateCommandBuffers(dev_, &ai, &cb), "vkAllocateCommandBuffers");
    if (opts_.replay) record(cb, pool);  // eager mode re-records it in run_locked
    auto outs = run_locked(inputs, nullptr, cb, pool);
    if (outputs) *outputs = std::move(outs);
    check_vk(vkGetQueryPoolResults(dev_, pool, 0, n + 1, ts.size() * sizeof(uint64_t), ts.data(), sizeof(uint64_t),
                                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
             "vkGetQueryPoolResults");
  } catch (...) {
    if (cb) vkFreeCommandBuffers(dev_, command_pool_, 1, &cb);
    vkDestroyQueryPool(dev_, pool, nullptr);
    throw;
  }
  vkFreeCommandBuffers(dev_, command_pool_, 1, &cb);
  vkDestroyQueryPool(dev_, pool, nullptr);
  const double us_per_tick = ctx_->info().timestamp_period / 1000.0;
  std::vector<KernelTiming> out;
  for (uint32_t i = 0; i < n; ++i) {
    const double start = static_cast<double>(ts[i] - ts[0]) * us_per_tick;
    const double dur = ts[i + 1] >= ts[i] ? static_cast<double>(ts[i + 1] - ts[i]) * us_per_tick : 0.0;
    out.push_back({dispatches_[i].kernel, "", start, dur});
  }
  return out;
}

}  // namespace fusor::vk
