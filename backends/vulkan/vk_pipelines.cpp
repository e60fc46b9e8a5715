// Kernels of a plan -> GLSL (shared emitter + VulkanDialect) -> SPIR-V -> compute pipelines,
// plus the descriptor sets that bind each kernel's slots.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "backends/codegen.h"
#include "backends/compile_pool.h"
#include "backends/vulkan/vk_coopmat.h"
#include "backends/vulkan/vk_dialect.h"
#include "backends/vulkan/vk_executable.h"
#include "ir/phases.h"

namespace fusor::vk {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Spreads `groups` workgroups over x, then y, then z (kernels linearise the id again).
void split_groups(int64_t groups, const PhysicalDeviceInfo& info, const std::string& name, uint32_t out[3]) {
  const int64_t mx = std::max<uint32_t>(info.max_group_count[0], 1), my = std::max<uint32_t>(info.max_group_count[1], 1),
                mz = std::max<uint32_t>(info.max_group_count[2], 1);
  const int64_t x = std::min(groups, mx);
  const int64_t rest = ceil_div(groups, x);
  const int64_t y = std::min(rest, my);
  const int64_t z = ceil_div(rest, y);
  if (z > mz)
    throw Error("vulkan", "kernel '" + name + "': " + std::to_string(groups) + " workgroups exceed maxComputeWorkGroupCount");
  out[0] = static_cast<uint32_t>(x);
  out[1] = static_cast<uint32_t>(y);
  out[2] = static_cast<uint32_t>(z);
}

// Pipelines shared by every executable of a device. A Session compiles one executable per input
// shape (a decoding loop: one per past length) whose kernels are mostly the same as the last
// one's: each identical kernel is one pipeline (and no shaderc / disk-cache / driver compile)
// while any executable uses it. Keyed by the device and the job's key (source, specialization,
// binding count, push-constant block); a pipeline made with one executable's layout serves
// another's identically defined layout (Vulkan's pipeline layout compatibility).
struct SharedPipeline {
  VkPipeline pipeline = VK_NULL_HANDLE;
  size_t users = 0;
};
std::mutex& shared_pipelines_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::pair<VkDevice, std::string>, SharedPipeline>& shared_pipelines() {
  static auto* m = new std::map<std::pair<VkDevice, std::string>, SharedPipeline>;  // outlives static destructors
  return *m;
}
// The device's pipeline for key with one more user, or VK_NULL_HANDLE.
VkPipeline acquire_shared(VkDevice dev, const std::string& key) {
  std::lock_guard<std::mutex> lock(shared_pipelines_mutex());
  auto it = shared_pipelines().find({dev, key});
  if (it == shared_pipelines().end()) return VK_NULL_HANDLE;
  ++it->second.users;
  return it->second.pipeline;
}
// Registers a pipeline just made for key; if another thread registered one first, p is destroyed
// and theirs returned (with one more user).
VkPipeline publish_shared(VkDevice dev, const std::string& key, VkPipeline p) {
  std::lock_guard<std::mutex> lock(shared_pipelines_mutex());
  auto [it, fresh] = shared_pipelines().try_emplace({dev, key});
  if (!fresh) {
    vkDestroyPipeline(dev, p, nullptr);
    --live_pipeline_count();
  } else {
    it->second.pipeline = p;
  }
  ++it->second.users;
  return it->second.pipeline;
}

struct PipelineJob {
  std::string name, source;
  std::string key;  // source + specialization + bindings + push block: identical kernels share one pipeline
  bool coopmat = false;  // gemm_coopmat.glsl: NV SPIR-V, rewritten for KHR-only devices
  bool coopmat_bf16 = false;  // ... and always for bf16 operands (matrix types retyped)
  std::vector<VkSpecializationMapEntry> entries;
  std::vector<int32_t> spec;
  VkPipelineLayout layout = VK_NULL_HANDLE;
};

void dump_source(const std::string& name, const std::string& src) {
  const char* dir = std::getenv("FUSOR_VK_DUMP_DIR");
  if (!dir || !*dir) return;
  std::ofstream(std::string(dir) + "/" + kernel_identifier(name) + ".comp") << src;
}

// FUSOR_VK_SOURCE_DIR (measuring hand-edited kernels): a file named as the dump would name it
// replaces the generated source; bindings, local size and dispatch stay the generated kernel's.
// Every windowed piece of a split kernel gets the same file (pieces differ in offsets: measure
// unsplit kernels).
void override_source(const std::string& name, std::string& src) {
  const char* dir = std::getenv("FUSOR_VK_SOURCE_DIR");
  if (!dir || !*dir) return;
  std::ifstream f(std::string(dir) + "/" + kernel_identifier(name) + ".comp");
  if (!f) return;
  std::stringstream ss;
  ss << f.rdbuf();
  src = ss.str();
  std::fprintf(stderr, "fusor: kernel '%s' source from FUSOR_VK_SOURCE_DIR\n", name.c_str());
}

// FUSOR_VK_PIPELINE_STATS (vk_device.h): one stderr line per pipeline executable with the
// driver's statistics (on NVIDIA: registers, shared/local memory, spills).
void print_pipeline_statistics(VkDevice dev, VkPipeline pipeline, const std::string& name) {
  auto props_fn = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
      vkGetDeviceProcAddr(dev, "vkGetPipelineExecutablePropertiesKHR"));
  auto stats_fn = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
      vkGetDeviceProcAddr(dev, "vkGetPipelineExecutableStatisticsKHR"));
  if (!props_fn || !stats_fn) return;
  VkPipelineInfoKHR pi{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  pi.pipeline = pipeline;
  uint32_t n = 0;
  if (props_fn(dev, &pi, &n, nullptr) != VK_SUCCESS) return;
  std::vector<VkPipelineExecutablePropertiesKHR> props(n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR});
  if (props_fn(dev, &pi, &n, props.data()) != VK_SUCCESS) return;
  for (uint32_t e = 0; e < n; ++e) {
    VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    ei.pipeline = pipeline;
    ei.executableIndex = e;
    uint32_t m = 0;
    if (stats_fn(dev, &ei, &m, nullptr) != VK_SUCCESS) continue;
    std::vector<VkPipelineExecutableStatisticKHR> st(m, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    if (stats_fn(dev, &ei, &m, st.data()) != VK_SUCCESS) continue;
    std::string line = "fusor: vk stats " + name + " [" + props[e].name + ", subgroup " +
                       std::to_string(props[e].subgroupSize) + "]";
    for (auto& s : st) {
      line += std::string("  ") + s.name + "=";
      switch (s.format) {
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: line += s.value.b32 ? "true" : "false"; break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: line += std::to_string(s.value.i64); break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: line += std::to_string(s.value.u64); break;
        default: line += std::to_string(s.value.f64); break;
      }
    }
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

// emit_kernel, with an opaque kernel's Unsupported naming its node.
std::string emit_or_explain(const KernelSpec& k, const Plan& p, const VulkanDialect& dialect) {
  try {
    return emit_kernel(k, p, dialect);
  } catch (const Unsupported& e) {
    if (k.kind != FusionKind::opaque || k.node < 0 || k.node >= static_cast<int>(p.graph.nodes.size())) throw;
    const Node& n = p.graph.nodes[k.node];
    // The reason as the emitter gave it, once named by the node (it often already is).
    std::string why = e.what();
    if (why.rfind("[", 0) == 0 && why.find("] ") != std::string::npos) why = why.substr(why.find("] ") + 2);
    throw Unsupported("vulkan", why.find(n.label()) != std::string::npos ? why : n.label() + ": the vulkan backend cannot run it: " + why);
  }
}

// Element-wise kernels whose sources differ only in their views' offsets (the pieces of a
// Concat or Split of many inputs: one kernel per piece) read the offsets as push constants and
// share one pipeline; a shaderc compile and a pipeline per piece made a 30,000-way Concat take
// minutes on lavapipe. Only where kShareOffsets or more distinct offset sets share a source:
// every other kernel keeps literal offsets, its code (and speed) unchanged.
constexpr size_t kShareOffsets = 8;
std::vector<char> offsets_as_push_constants(const PhysicalDeviceInfo& info, const Plan& p) {
  std::vector<char> use(p.kernels.size(), 0);
  std::map<std::string, std::pair<std::set<std::vector<int32_t>>, std::vector<size_t>>> groups;  // source -> offsets, kernels
  for (size_t ki = 0; ki < p.kernels.size(); ++ki) {
    const KernelSpec& k = p.kernels[ki];
    if (k.kind != FusionKind::loop || k.matmul || k.conv || !k.reductions.empty()) continue;
    try {
      VulkanDialect d(info, k, std::vector<int64_t>(kernel_bindings(k).size(), 0), &p);  // deltas do not change the shape of the code
      d.set_push_offsets(true);
      auto& g = groups[emit_kernel(k, p, d)];
      g.first.insert(d.push_values());
      g.second.push_back(ki);
    } catch (const Error&) {  // reported when the kernel is built for real
    }
  }
  for (const auto& [src, g] : groups)
    if (g.first.size() >= kShareOffsets)
      for (size_t ki : g.second) use[ki] = 1;
  return use;
}

}  // namespace

namespace {
// Throws the first kernel's Unsupported (an op with no GPU kernel), if any.
void check_emittable(const PhysicalDeviceInfo& info, const Plan& p) {
  for (const KernelSpec& k : p.kernels) {
    // Arena alignment deltas change index arithmetic only, never what can be generated.
    VulkanDialect dialect(info, k, std::vector<int64_t>(kernel_bindings(k).size(), 0), &p);
    emit_or_explain(k, p, dialect);
  }
}
}  // namespace

std::string unsupported_reason(const PhysicalDeviceInfo& info, const Plan& p) {
  try {
    check_emittable(info, p);
  } catch (const Unsupported& e) {
    return e.what();
  }
  return "";
}

VkPipelineLayout VulkanExecutable::layout_for(uint32_t n, bool push) {
  if (layouts_.size() <= n) layouts_.resize(n + 1, {VK_NULL_HANDLE, VK_NULL_HANDLE});
  if (push_layouts_.size() <= n) push_layouts_.resize(n + 1, VK_NULL_HANDLE);
  auto& [set_layout, layout] = layouts_[n];
  if (push && !push_layouts_[n]) {  // the same set layout plus VulkanDialect's offsets block
    layout_for(n, false);
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, VulkanDialect::kPushOffsets * sizeof(int32_t)};
    VkPipelineLayoutCreateInfo pci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pci.setLayoutCount = 1;
    pci.pSetLayouts = &set_layout;
    pci.pushConstantRangeCount = 1;
    pci.pPushConstantRanges = &range;
    check_vk(vkCreatePipelineLayout(dev_, &pci, nullptr, &push_layouts_[n]), "vkCreatePipelineLayout");
  }
  if (push) return push_layouts_[n];
  if (layout) return layout;
  std::vector<VkDescriptorSetLayoutBinding> b(n);
  for (uint32_t i = 0; i < n; ++i) {
    b[i].binding = i;
    b[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    b[i].descriptorCount = 1;
    b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo dci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dci.bindingCount = n;
  dci.pBindings = b.data();
  check_vk(vkCreateDescriptorSetLayout(dev_, &dci, nullptr, &set_layout), "vkCreateDescriptorSetLayout");
  VkPipelineLayoutCreateInfo pci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pci.setLayoutCount = 1;
  pci.pSetLayouts = &set_layout;
  check_vk(vkCreatePipelineLayout(dev_, &pci, nullptr, &layout), "vkCreatePipelineLayout");
  return layout;
}

void VulkanExecutable::build_kernels() {
  const PhysicalDeviceInfo& info = ctx_->info();
  std::vector<PipelineJob> jobs;
  std::map<std::string, int> job_of;  // source + specialization -> pipeline (identical kernels share one)
  std::vector<std::vector<Binding>> slot_bindings;
  sources_.assign(plan_.kernels.size(), "");
  coopmat_labels_.assign(plan_.kernels.size(), "");
  split_k_.assign(plan_.kernels.size(), 1);
  blocked_tiles_.assign(plan_.kernels.size(), "");
  conv_loops_.assign(plan_.kernels.size(), 0);
  vector_operands_.assign(plan_.kernels.size(), -1);
  const std::vector<char> push_offsets = offsets_as_push_constants(info, plan_);

  // Phase 1 (serial, cheap): source, launch geometry, hazards for every kernel.
  std::optional<PhaseScope> phase(std::in_place, "codegen");
  // One dispatch of kernel ki: `k` is the plan's kernel itself, or one windowed piece of it
  // (vk_windows.h) with the window each slot binds.
  auto add_dispatch = [&](size_t ki, const KernelSpec& k, const std::vector<Window>& windows) {
    std::vector<int> binds = kernel_bindings(k);
    std::vector<Binding> bs;
    std::vector<int64_t> deltas;
    // Read-only slots wider than maxStorageBufferRange in a kernel that cannot be split (an
    // opaque Gather over a big embedding table): bound in banks (vk_windows.h).
    const std::vector<int> written = k.output_buffers();
    std::map<int, Binding> banked;  // slot -> its whole (too wide) binding
    for (size_t i = 0; i < binds.size(); ++i) {
      const Binding whole = window_binding(binds[i], windows[i]);
      if (whole.range > max_range_ && bankable(k, plan_) &&
          std::find(written.begin(), written.end(), binds[i]) == written.end()) {
        banked[static_cast<int>(i)] = whole;
        Binding first = whole;
        first.range = bank_bytes(binds[i]);
        first.element_delta = 0;  // the bank reader adds it
        bs.push_back(first);
        deltas.push_back(0);
        continue;
      }
      bs.push_back(binding_for(binds[i], windows[i]));
      deltas.push_back(bs.back().element_delta);
    }
    const bool checks = kernel_checks_indices(k, plan_);
    if (checks) {  // the status word after the buffers (codegen.h kernel_checks_indices)
      checks_indices_ = true;
      Binding st;
      st.buffer = arena_.handle();
      st.offset = status_offset_;
      st.range = 4;
      bs.push_back(st);
    }
    // A split-K matmul gets at most the workspace build_memory reserved (a windowed piece may
    // tile differently from its whole kernel; it then runs without split-K).
    std::optional<VulkanDialect> made(std::in_place, info, k, deltas, &plan_, static_cast<int64_t>(split_bytes_));
    made->set_split_counters(split_counters_);
    if (made->split_workspace_bytes() > static_cast<int64_t>(split_bytes_))  // a piece tiled differently: no split-K
      made.emplace(info, k, deltas, &plan_, int64_t{0});
    VulkanDialect& dialect = *made;
    dialect.set_push_offsets(push_offsets[ki] != 0);
    const int64_t split_bytes = dialect.split_workspace_bytes();
    if (split_bytes > 0) {  // the workspace slot after the buffers (and status word)
      Binding ws;
      ws.buffer = arena_.handle();
      ws.offset = split_offset_;
      ws.range = static_cast<uint64_t>(split_bytes);
      bs.push_back(ws);
    }
    if (!banked.empty()) {
      std::map<int, VulkanDialect::Bank> banks;
      for (const auto& [slot, whole] : banked) {
        const uint64_t bytes = bank_bytes(binds[slot]);
        const uint64_t esize = std::max<size_t>(dtype_size(plan_.buffers[binds[slot]].dtype), 1);
        VulkanDialect::Bank bank;
        bank.elems = static_cast<int64_t>(bytes / esize);
        bank.delta = whole.element_delta;
        bank.count = static_cast<int>((whole.range + bytes - 1) / bytes);
        bank.first_binding = static_cast<int>(bs.size());
        for (int j = 1; j < bank.count; ++j) {
          Binding b = whole;
          b.offset = whole.offset + static_cast<uint64_t>(j) * bytes;
          b.range = std::min<uint64_t>(bytes, whole.range - static_cast<uint64_t>(j) * bytes);
          b.element_delta = 0;
          bs.push_back(b);
        }
        banks[slot] = bank;
      }
      dialect.set_banks(std::move(banks));
    }
    const uint32_t nbind = static_cast<uint32_t>(bs.size());
    if (info.max_storage_buffers > 0 && nbind > info.max_storage_buffers) {
      std::string why;
      for (const auto& [slot, whole] : banked)
        why += std::string(why.empty() ? "; " : ", ") + "'" + plan_.buffers[binds[slot]].name + "' (" +
               std::to_string(whole.range) + " bytes) in banks of at most " + std::to_string(max_range_) + " bytes";
      throw Error("vulkan", "kernel '" + k.name + "' needs " + std::to_string(nbind) +
                                " storage-buffer bindings, more than the " + std::to_string(info.max_storage_buffers) +
                                " per stage of device '" + info.name + "'" + why);
    }
    std::string src = emit_or_explain(k, plan_, dialect);
    coopmat_labels_[ki] = dialect.tiles().coopmat_label();
    if (split_bytes > 0) split_k_[ki] = std::max(split_k_[ki], dialect.tiles().split_k);
    if (const ContractionTiles& t = dialect.tiles(); (k.matmul || k.conv) && t.blocked && blocked_tiles_[ki].empty())
      blocked_tiles_[ki] = std::to_string(t.bm) + "x" + std::to_string(t.bn) + " " + std::to_string(t.tm) + "x" + std::to_string(t.tn);
    if (k.conv && !dialect.tiles().conv_direct) conv_loops_[ki] = !dialect.tiles().conv_db ? 1 : dialect.vector_operands() ? 3 : 2;
    if (k.matmul && !dialect.tiles().skinny && !dialect.tiles().coopmat)
      vector_operands_[ki] = std::max(vector_operands_[ki], dialect.vector_operands());
    if (sources_[ki].empty()) sources_[ki] = src;  // a split kernel shows its first piece
    dump_source(k.name, src);
    override_source(k.name, src);
    int64_t groups = launch_dims(k, plan_, dialect).groups;
    if (k.conv && !dialect.tiles().conv_direct) {
      // The implicit-GEMM schedule walks tiles, not outputs (conv.glsl); any count is correct.
      const ConvDesc& c = *k.conv;
      const auto& t = dialect.tiles();
      groups = std::min(c.groups * ceil_div(c.k / c.groups, t.bm) * ceil_div(c.n * c.oh * c.ow, t.bn) * t.split_k,
                        dialect.max_groups);
    }
    // Rows over an empty reduction still store the combiner's identity (0, -inf, ...).
    if (groups <= 0 && !k.reduce_axes.empty() && k.rows() > 0) groups = std::min(k.rows(), dialect.max_groups);
    if (groups <= 0) return;  // empty iteration space: nothing to dispatch

    PipelineJob job;
    job.name = k.name;
    job.source = std::move(src);
    job.layout = layout_for(nbind, dialect.push_offsets());
    job.coopmat = dialect.tiles().coopmat != 0;
    job.coopmat_bf16 = dialect.tiles().cm_bf16 != 0;
    std::string key = job.source;
    if (dialect.contraction()) {
      const ContractionTiles& t = dialect.tiles();
      job.spec = {t.threads(), t.bm, t.bn, t.bk, t.tm, t.tn};
      if (k.conv) job.spec.push_back(t.conv_direct);
      for (uint32_t i = 0; i < job.spec.size(); ++i) {
        job.entries.push_back({i, static_cast<uint32_t>(i * sizeof(int32_t)), sizeof(int32_t)});
        key += "\n//spec " + std::to_string(job.spec[i]);
      }
    }
    key += "\n//bindings " + std::to_string(nbind) + (dialect.push_offsets() ? " push" : "");
    if (ctx_->pipeline_stats()) key += " stats";
    job.key = key;
    auto [it, fresh] = job_of.try_emplace(key, static_cast<int>(jobs.size()));
    if (fresh) jobs.push_back(std::move(job));

    Dispatch d;
    d.name = k.name;
    d.kernel = static_cast<int>(ki);
    d.pipeline = it->second;
    d.layout = jobs[it->second].layout;
    if (dialect.push_offsets()) d.push = dialect.push_values();
    split_groups(groups, info, k.name, d.groups);
    // Hazards are tracked over exactly the bytes each descriptor binds (rounded to whole
    // 32-bit words, at least 4 bytes), which is what the device and synchronization
    // validation see, not over the tensor's own byte count.
    const std::vector<int> ins = k.input_buffers(), outs = k.output_buffers();
    for (size_t i = 0; i < binds.size(); ++i) {
      const auto bank = banked.find(static_cast<int>(i));
      const Binding& whole = bank != banked.end() ? bank->second : bs[i];
      const ByteRange r{whole.offset, whole.offset + whole.range};
      if (const_offset_[binds[i]] < 0 && std::find(ins.begin(), ins.end(), binds[i]) != ins.end()) d.reads.push_back(r);
      if (std::find(outs.begin(), outs.end(), binds[i]) != outs.end()) d.writes.push_back(r);
    }
    if (checks) d.writes.push_back(ByteRange{status_offset_, status_offset_ + 4});
    if (split_bytes > 0) d.writes.push_back(ByteRange{split_offset_, split_offset_ + static_cast<uint64_t>(split_bytes)});
    dispatches_.push_back(std::move(d));
    slot_bindings.push_back(std::move(bs));
  };
  auto window_bytes = [&](int b, const Window& w) { return window_binding(b, w).range; };
  const char* nb_env = std::getenv("FUSOR_VK_NARROW_BINDINGS");
  const bool narrow_bindings = !(nb_env && std::strcmp(nb_env, "0") == 0);
  // The element a binding of buffer b starting at element `first` really starts at.
  // (Not before the buffer's own first element: a misaligned buffer keeps its slack as before.)
  auto align_first = [&](int b, int64_t first) {
    return std::max<int64_t>(0, first - window_binding(b, Window{first, 1}).element_delta);
  };
  for (size_t ki = 0; ki < plan_.kernels.size(); ++ki) {
    const KernelSpec& k = plan_.kernels[ki];
    try {
      std::vector<KernelPiece> pieces = split_into_windows(k, plan_, max_range_, window_bytes, info.name);
      if (pieces.empty()) {  // whole buffers fit (nearly always)
        // Each binding narrowed to what the kernel touches (vk_windows.h narrowed);
        // FUSOR_VK_NARROW_BINDINGS=0 binds whole buffers (measuring).
        std::optional<KernelPiece> narrow;
        if (narrow_bindings) narrow = narrowed(k, plan_, align_first);
        if (narrow) {
          add_dispatch(ki, narrow->spec, narrow->windows);
        } else {
          std::vector<Window> whole;
          for (int b : kernel_bindings(k)) whole.push_back({0, shape_numel(plan_.buffers[b].shape)});
          add_dispatch(ki, k, whole);
        }
      } else {
        for (const KernelPiece& piece : pieces) add_dispatch(ki, piece.spec, piece.windows);
      }
    } catch (const Unsupported&) {
      throw;
    } catch (const Error&) {
      // A device limit (binding size or count) met before a later kernel's op turned out to
      // have no GPU kernel: report that op instead, so the caller can run it on the host.
      check_emittable(info, plan_);
      throw;
    }
  }

  // Phase 2 (parallel, all cores: compile_pool.h): shaderc + validation + pipeline creation
  // dominate compile time and are independent per kernel; the pipeline cache is internally
  // synchronised. The first failure in plan order is the one reported.
  phase.reset();
  phase.emplace("compile");
  pipelines_.assign(jobs.size(), VK_NULL_HANDLE);
  pipeline_keys_.assign(jobs.size(), "");  // set as each pipeline is held (release_pipelines)
  std::vector<CompileStats> stats(jobs.size());
  // Per job: microseconds in compile_glsl (disk cache + validation, or shaderc) and in
  // vkCreateComputePipelines, summed below into two phases (the jobs run on a pool).
  std::vector<std::array<double, 2>> job_us(jobs.size(), {0, 0});
  PhaseLog* log = PhaseLog::active();
  const double pool_start = log ? log->now_us() : 0;
  for_each_job(jobs.size(), [&](size_t j) {
    const PipelineJob& job = jobs[j];
    if (const VkPipeline shared = acquire_shared(dev_, job.key)) {  // another executable's identical kernel
      pipelines_[j] = shared;
      pipeline_keys_[j] = job.key;
      return;
    }
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<uint32_t> words = compile_glsl(*ctx_, job.name, job.source, &stats[j]);
    const auto t1 = std::chrono::steady_clock::now();
    job_us[j][0] = std::chrono::duration<double, std::micro>(t1 - t0).count();
    // Validated as NV (SPIRV-Tools 2023.1 knows no KHR cooperative matrices); KHR-only devices
    // get the rewritten module (vk_coopmat.h).
    if (job.coopmat && (!info.coopmat_nv || job.coopmat_bf16)) words = coopmat_nv_to_khr(words, job.coopmat_bf16);
    VkShaderModuleCreateInfo mci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    mci.codeSize = words.size() * sizeof(uint32_t);
    mci.pCode = words.data();
    VkShaderModule module = VK_NULL_HANDLE;
    check_vk(vkCreateShaderModule(dev_, &mci, nullptr, &module), "vkCreateShaderModule");
    VkSpecializationInfo si{};
    si.mapEntryCount = static_cast<uint32_t>(job.entries.size());
    si.pMapEntries = job.entries.data();
    si.dataSize = job.spec.size() * sizeof(int32_t);
    si.pData = job.spec.data();
    VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = module;
    ci.stage.pName = "main";
    ci.stage.pSpecializationInfo = job.entries.empty() ? nullptr : &si;
    ci.layout = job.layout;
    if (ctx_->pipeline_stats()) ci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    VkPipeline made = VK_NULL_HANDLE;
    VkResult r = vkCreateComputePipelines(dev_, ctx_->pipeline_cache(), 1, &ci, nullptr, &made);
    vkDestroyShaderModule(dev_, module, nullptr);
    job_us[j][1] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t1).count();
    if (r != VK_SUCCESS) throw Error("vulkan", "kernel '" + job.name + "': vkCreateComputePipelines failed: " + result_name(r));
    ++live_pipeline_count();
    if (ctx_->pipeline_stats()) print_pipeline_statistics(dev_, made, job.name);
    pipelines_[j] = publish_shared(dev_, job.key, made);
    pipeline_keys_[j] = job.key;
  });
  for (auto& s : stats) compile_stats_.compiled += s.compiled, compile_stats_.cache_hits += s.cache_hits;
  // FUSOR_VK_COMPILE_LOG=1: one line per pipeline on stderr (what a cold compile spends where).
  if (const char* e = std::getenv("FUSOR_VK_COMPILE_LOG"); e && *e && std::strcmp(e, "0") != 0)
    for (size_t j = 0; j < jobs.size(); ++j)
      std::fprintf(stderr, "fusor: vk compile %-40s source %7zu B  %s  shaderc %8.1f ms  opt %8.1f ms  val %6.1f ms  pipeline %8.1f ms\n",
                   jobs[j].name.c_str(), jobs[j].source.size(), stats[j].compiled ? "compiled " : "cache hit",
                   stats[j].shaderc_us / 1e3, stats[j].opt_us / 1e3, stats[j].validate_us / 1e3, job_us[j][1] / 1e3);
  if (log) {
    double glsl = 0, pipe = 0;
    for (auto& t : job_us) glsl += t[0], pipe += t[1];
    log->add("SPIR-V: " + std::to_string(compile_stats_.cache_hits) + " disk-cache hits, " +
                 std::to_string(compile_stats_.compiled) + " shaderc compiles (sum over threads)",
             pool_start, glsl);
    log->add("vkCreateComputePipelines x" + std::to_string(jobs.size()) + " (sum over threads)", pool_start, pipe);
  }

  // Phase 3: descriptor sets, written once (recording and replays only bind them).
  if (dispatches_.empty()) return;
  uint32_t descriptors = 0;
  for (auto& b : slot_bindings) descriptors += static_cast<uint32_t>(b.size());
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, std::max<uint32_t>(descriptors, 1)};
  VkDescriptorPoolCreateInfo pci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pci.maxSets = static_cast<uint32_t>(dispatches_.size());
  pci.poolSizeCount = 1;
  pci.pPoolSizes = &size;
  check_vk(vkCreateDescriptorPool(dev_, &pci, nullptr, &descriptor_pool_), "vkCreateDescriptorPool");
  for (size_t i = 0; i < dispatches_.size(); ++i) {
    const uint32_t n = static_cast<uint32_t>(slot_bindings[i].size());
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = descriptor_pool_;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &layouts_[n].first;
    check_vk(vkAllocateDescriptorSets(dev_, &ai, &dispatches_[i].set), "vkAllocateDescriptorSets");
    std::vector<VkDescriptorBufferInfo> infos(n);
    std::vector<VkWriteDescriptorSet> writes(n);
    for (uint32_t s = 0; s < n; ++s) {
      infos[s] = {slot_bindings[i][s].buffer, slot_bindings[i][s].offset, slot_bindings[i][s].range};
      writes[s] = VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      writes[s].dstSet = dispatches_[i].set;
      writes[s].dstBinding = s;
      writes[s].descriptorCount = 1;
      writes[s].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[s].pBufferInfo = &infos[s];
    }
    vkUpdateDescriptorSets(dev_, n, writes.data(), 0, nullptr);
  }
}

void VulkanExecutable::release_pipelines() {
  std::lock_guard<std::mutex> lock(shared_pipelines_mutex());
  for (size_t j = 0; j < pipelines_.size(); ++j) {
    if (!pipelines_[j] || j >= pipeline_keys_.size() || pipeline_keys_[j].empty()) continue;
    auto it = shared_pipelines().find({dev_, pipeline_keys_[j]});
    if (it != shared_pipelines().end() && it->second.pipeline == pipelines_[j] && --it->second.users == 0) {
      vkDestroyPipeline(dev_, it->second.pipeline, nullptr);
      --live_pipeline_count();
      shared_pipelines().erase(it);
    }
    pipelines_[j] = VK_NULL_HANDLE;
  }
  pipelines_.clear();
  pipeline_keys_.clear();
}

}  // namespace fusor::vk
