// The "vulkan" Backend: device listing and compile (see vulkan_backend.h / vk_executable.h).
#include "backends/vulkan/vulkan_backend.h"

#include <cstdlib>

#include "backends/vulkan/vk_executable.h"
#include "backends/vulkan/vk_memory.h"
#include "ir/phases.h"

namespace fusor {

namespace {

class VulkanBackend : public Backend {
 public:
  std::string name() const override { return "vulkan"; }

  std::vector<DeviceInfo> devices() const override {
    std::vector<DeviceInfo> out;
    try {
      inst_ = vk::Instance::get();
      for (const auto& d : inst_->devices()) {
        std::string details = d.details();
#ifdef FUSOR_HAVE_CUDA
        if (vk::holds_cuda_context(d)) details += " cuda_context=hold";  // the policy (vk_device.h holds_cuda_context)
#endif
        out.push_back({d.name, details, d.numerics_note(), d.type == VK_PHYSICAL_DEVICE_TYPE_CPU});
      }
    } catch (const Error&) {
      // No loader/ICD: no devices (compile() reports why).
    }
    return out;
  }

  // Instance, logical device and the pipeline cache read from disk: process-wide caches
  // (vk_device.h), so compile() then only looks them up.
  void prepare(const CompileOptions& opts) noexcept override {
    try {
      std::shared_ptr<vk::Instance> inst = vk::Instance::get();
      if (opts.device >= 0 && opts.device < static_cast<int>(inst->devices().size())) vk::Context::get(opts.device);
    } catch (...) {
      // compile() reports it
    }
  }

  std::unique_ptr<Executable> compile(const Graph& g, const CompileOptions& opts) override {
    std::shared_ptr<vk::Context> ctx;
    {
      PhaseScope ps("device open");  // instance, device and pipeline cache (once per process)
      std::shared_ptr<vk::Instance> inst;
      try {
        inst = inst_ = vk::Instance::get();
      } catch (const Error& e) {
        throw Error("vulkan", std::string("no Vulkan device: ") + e.what());
      }
      if (inst->devices().empty()) throw Error("vulkan", "no Vulkan device: the loader found no device with a compute queue");
      ctx = vk::Context::get(opts.device);
    }
    return std::make_unique<vk::VulkanExecutable>(std::move(ctx), g, opts);
  }

  FusionOptions fusion_options(const CompileOptions& opts) const override { return vulkan_fusion_options(opts); }
  std::string unsupported(const Graph& g, const CompileOptions& opts) override {
    std::shared_ptr<vk::Instance> inst;
    try {
      inst = inst_ = vk::Instance::get();
    } catch (const Error&) {
      return "";  // no device: compile() reports that, it is not an op the host could take
    }
    if (opts.device < 0 || opts.device >= static_cast<int>(inst->devices().size())) return "";
    try {
      return vk::unsupported_reason(inst->devices()[opts.device], build_plan(g, fusion_options(opts)));
    } catch (const Unsupported& e) {
      return e.what();  // build_plan refuses (e.g. string tensors)
    }
  }

 private:
  // Held so that repeated compiles (and devices()) reuse one instance and its validation
  // messenger instead of creating one per executable.
  mutable std::shared_ptr<vk::Instance> inst_;
};

}  // namespace

// Half-precision products stage their operands themselves (cooperative matrices, the tiled
// template), so bf16 operands take prologues: one dispatch less per attention block. fp16 ones
// do not: the fp16 cooperative-matrix GEMM stages a prologued operand element by element
// instead of its vector tile copy, and on the H200 GPT-2 2L fp16 ran 153.0 us with prologues
// against 149.1 without (bf16 135.5 with, 136.5 without; docs/benchmarks.md, twentieth session).
// FUSOR_VK_HALF_PROLOGUES=0 | f16 | bf16 | all picks the dtypes (A/B runs; default bf16).
FusionOptions vulkan_fusion_options(const CompileOptions& opts) {
  FusionOptions fo = default_fusion_options(opts);
  const char* e = std::getenv("FUSOR_VK_HALF_PROLOGUES");
  const std::string v = e && *e ? e : "bf16";
  fo.f16_operand_prologues = v == "all" || v == "f16" || v == "1";
  fo.bf16_operand_prologues = v == "all" || v == "bf16" || v == "1";
  return fo;
}

std::unique_ptr<Backend> make_vulkan_backend() { return std::make_unique<VulkanBackend>(); }

double vulkan_last_kernel_us(const Executable& e) {
  auto* v = dynamic_cast<const vk::VulkanExecutable*>(&e);
  return v ? v->last_kernel_us() : -1;
}

int vulkan_barrier_count(const Executable& e) {
  auto* v = dynamic_cast<const vk::VulkanExecutable*>(&e);
  return v ? v->barrier_count() : -1;
}

int vulkan_coopmat_kernel_count(const Executable& e) {
  auto* v = dynamic_cast<const vk::VulkanExecutable*>(&e);
  if (!v) return -1;
  int n = 0;
  for (const std::string& l : v->coopmat_labels()) n += l.empty() ? 0 : 1;
  return n;
}

int vulkan_split_k_kernel_count(const Executable& e) {
  auto* v = dynamic_cast<const vk::VulkanExecutable*>(&e);
  if (!v) return -1;
  int n = 0;
  for (int s : v->split_k()) n += s > 1 ? 1 : 0;
  return n;
}

int vulkan_conv_gemm_kernel_count(const Executable& e, bool double_buffered) {
  auto* v = dynamic_cast<const vk::VulkanExecutable*>(&e);
  if (!v) return -1;
  int n = 0;
  for (int l : v->conv_loops()) n += (double_buffered ? l >= 2 : l == 1) ? 1 : 0;
  return n;
}

int vulkan_blocked_kernel_count(const Executable& e) {
  auto* v = dynamic_cast<const vk::VulkanExecutable*>(&e);
  if (!v) return -1;
  int n = 0;
  for (const std::string& t : v->blocked_tiles()) n += t.empty() ? 0 : 1;
  return n;
}

VulkanLiveObjects vulkan_live_objects() { return {vk::live_memory_count().load(), vk::live_pipeline_count().load()}; }

int vulkan_pipeline_count(const Executable& e) {
  auto* v = dynamic_cast<const vk::VulkanExecutable*>(&e);
  return v ? static_cast<int>(v->pipeline_count()) : -1;
}

}  // namespace fusor
