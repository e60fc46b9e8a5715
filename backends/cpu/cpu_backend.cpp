// Backend "cpu": interprets the fused Plan (ir/kernel_spec.h) on the host, one KernelSpec at
// a time, over one arena laid out by the memory plan. It is the executable form of the
// KernelSpec contract: what the GPU code generators must reproduce. Every expression node
// computes in its math dtype and is converted to its own dtype (ir/scalar.h), as on a GPU;
// reductions and contractions accumulate in double like the reference. The interpreter itself
// is backends/cpu/cpu_interp.cpp (expressions) and cpu_contraction.cpp (matmul / conv).
#include <utility>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "backends/backend.h"
#include "backends/cpu/cpu_backends.h"
#include "backends/cpu/cpu_interp.h"
#include "ir/host_memory.h"
#include "ir/kernel_spec.h"
#include "ir/phases.h"
#include "ir/scalar.h"

namespace fusor {
namespace {

class CpuExecutable : public Executable {
 public:
  CpuExecutable(Plan p) : p_(std::move(p)), arena_(static_cast<size_t>(p_.arena_bytes)) { prepare(); }

  std::vector<Tensor> run(const std::vector<Tensor>& inputs, RunStats* stats) override {
    auto t0 = std::chrono::steady_clock::now();
    check_run_inputs(p_.graph, inputs);
    // Poison the arena so an element no kernel wrote shows up as a mismatch.
    // An all-constant or all-empty plan has an empty arena, whose data() may be null.
    if (!arena_.empty()) std::memset(arena_.data(), 0xff, arena_.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].nbytes()) std::memcpy(base(p_.input_buffers[i]), inputs[i].raw(), inputs[i].nbytes());
    }
    for (size_t i = 0; i < p_.kernels.size(); ++i) {
      const KernelSpec& k = p_.kernels[i];
      const auto tk = std::chrono::steady_clock::now();
      if (k.kind == FusionKind::opaque) run_opaque(k);
      else run_cpu_kernel(k, prepared_[i], bufs_);
      if (timings_) timings_->push_back({static_cast<int>(i), "", us_between(t0, tk), us_between(tk, std::chrono::steady_clock::now())});
    }
    std::vector<Tensor> outs;
    for (int b : p_.output_buffers) outs.push_back(read_buffer(b));
    if (stats)
      stats->host_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    return outs;
  }
  int kernel_count() const override { return static_cast<int>(p_.kernels.size()); }
  // Per-kernel host time of one run (kernels run one after another on this thread).
  std::vector<KernelTiming> profile(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs) override {
    std::vector<KernelTiming> t;
    timings_ = &t;
    try {
      auto outs = run(inputs, nullptr);
      if (outputs) *outputs = std::move(outs);
    } catch (...) {
      timings_ = nullptr;
      throw;
    }
    timings_ = nullptr;
    return t;
  }

 private:
  static double us_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double, std::micro>(b - a).count();
  }
  std::vector<KernelTiming>* timings_ = nullptr;  // set while profile() runs
  Plan p_;
  std::vector<std::byte> arena_;

  std::byte* base(int b) {
    const Buffer& buf = p_.buffers[b];
    if (buf.role == Buffer::Role::constant)
      return const_cast<std::byte*>(std::as_const(*p_.graph.values[buf.value].constant).raw());  // read-only: no copy-on-write
    return arena_.data() + buf.offset;
  }

  Tensor read_buffer(int b) {
    const Buffer& buf = p_.buffers[b];
    Tensor t(buf.dtype, buf.shape);
    if (buf.dtype == DType::string) return *p_.graph.values[buf.value].constant;
    if (t.nbytes()) std::memcpy(t.raw(), base(b), t.nbytes());
    return t;
  }
  void write_buffer(int b, const Tensor& t) {
    if (p_.buffers[b].role == Buffer::Role::constant) return;
    if (t.nbytes()) std::memcpy(base(b), t.raw(), t.nbytes());
  }

  // Buffer table and per-kernel preparation, built once: the interpreter (cpu_interp.h) takes
  // no per-element decisions that a kernel fixes.
  CpuBuffers bufs_;
  std::vector<PreparedKernel> prepared_;

  void prepare() {
    for (size_t b = 0; b < p_.buffers.size(); ++b) {
      const Buffer& buf = p_.buffers[b];
      CpuBuffer c;
      c.dtype = buf.dtype;
      c.numel = shape_numel(buf.shape);
      if (buf.dtype != DType::string) c.base = base(static_cast<int>(b));
      bufs_.push_back(c);
    }
    for (const KernelSpec& k : p_.kernels)
      prepared_.push_back(k.kind == FusionKind::opaque ? PreparedKernel{} : prepare_cpu_kernel(k));
  }

  void run_opaque(const KernelSpec& k) {
    const Node& n = p_.graph.nodes[k.node];
    const OpDef& def = op_or_throw(n);
    if (!def.reference) throw Unsupported("cpu", n.label() + ": op has no reference implementation");
    std::vector<Tensor> in;
    std::vector<const Tensor*> inp;
    in.reserve(k.opaque_inputs.size());
    for (int b : k.opaque_inputs) in.push_back(b >= 0 ? read_buffer(b) : Tensor());
    for (size_t i = 0; i < in.size(); ++i) inp.push_back(k.opaque_inputs[i] >= 0 ? &in[i] : nullptr);
    std::vector<Tensor> out;
    for (int b : k.opaque_outputs) out.push_back(b >= 0 ? Tensor(p_.buffers[b].dtype, p_.buffers[b].shape) : Tensor());
    if (!all_outputs_empty(out)) call_op_fn(n, "cpu", [&] { def.reference(n, inp, out); });
    for (size_t i = 0; i < out.size(); ++i)
      if (k.opaque_outputs[i] >= 0) write_buffer(k.opaque_outputs[i], out[i]);
  }
};

class CpuBackend : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  std::vector<DeviceInfo> devices() const override { return {{"host CPU", "interprets the fused plan (KernelSpecs)", ""}}; }
  std::unique_ptr<Executable> compile(const Graph& g, const CompileOptions& o) override {
    check_host_device_index("cpu", o.device);
    const FusionOptions fo = default_fusion_options(o);
    Plan p = [&] {
      PhaseScope ps("fusion");
      return build_plan(g, fo);
    }();
    check_host_alloc(static_cast<uint64_t>(p.arena_bytes), "the cpu arena");
    return std::make_unique<CpuExecutable>(std::move(p));
  }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace fusor
