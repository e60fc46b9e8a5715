// Backend "ref": op by op through the op table's reference implementations. It is the spec
// every other backend is compared with, so it does nothing clever.
#include <algorithm>
#include <chrono>

#include "backends/backend.h"
#include "backends/cpu/cpu_backends.h"
#include "ir/op_table.h"

namespace fusor {
namespace {

class RefExecutable : public Executable {
 public:
  explicit RefExecutable(Graph g) : g_(std::move(g)) {
    for (auto& n : g_.nodes) {
      const OpDef& def = op_or_throw(n);
      if (!def.reference) throw Unsupported("ref", n.label() + ": op has no reference implementation");
      check_string_support(g_, n, def);  // strings only where the op computes on them
      defs_.push_back(&def);
    }
    // Each intermediate is dropped after its last reader (or at once when none reads it): a run
    // holds the live values, not every value of the model (mvit_v2_s: 12 GB before).
    std::vector<int> last(g_.values.size(), -1);
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      for (int v : g_.nodes[i].inputs)
        if (v >= 0) last[v] = static_cast<int>(i);
      for (int v : g_.nodes[i].outputs)
        if (v >= 0) last[v] = std::max(last[v], static_cast<int>(i));
    }
    for (int v : g_.outputs) last[v] = -1;
    free_after_.resize(g_.nodes.size());
    for (size_t v = 0; v < last.size(); ++v)
      if (last[v] >= 0) free_after_[last[v]].push_back(static_cast<int>(v));
  }

  std::vector<Tensor> run(const std::vector<Tensor>& inputs, RunStats* stats) override {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<Tensor> vals(g_.values.size());
    bind_graph_inputs(g_, inputs, vals);
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      std::vector<const Tensor*> in;
      for (int v : n.inputs) in.push_back(v >= 0 ? value_ref(g_, vals, v) : nullptr);
      std::vector<Tensor> out;
      for (int o : n.outputs) {
        out.push_back(o >= 0 ? Tensor(g_.values[o].dtype, g_.values[o].shape) : Tensor());
        if (o >= 0) out.back().poison();
      }
      if (!all_outputs_empty(out)) call_op_fn(n, "ref", [&] { defs_[i]->reference(n, in, out); });
      for (size_t k = 0; k < n.outputs.size(); ++k)
        if (n.outputs[k] >= 0) vals[n.outputs[k]] = std::move(out[k]);
      for (int v : free_after_[i]) vals[v] = Tensor();
    }
    std::vector<Tensor> result;
    for (int o : g_.outputs) result.push_back(*value_ref(g_, vals, o));
    if (stats)
      stats->host_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    return result;
  }
  int kernel_count() const override { return static_cast<int>(g_.nodes.size()); }
  bool concurrent_runs() const override { return true; }  // every run has its own value table

 private:
  Graph g_;
  std::vector<const OpDef*> defs_;
  std::vector<std::vector<int>> free_after_;  // per node: values no later node reads
};

class RefBackend : public Backend {
 public:
  std::string name() const override { return "ref"; }
  std::vector<DeviceInfo> devices() const override { return {{"host CPU", "op-by-op reference, double accumulation", ""}}; }
  std::unique_ptr<Executable> compile(const Graph& g, const CompileOptions& o) override {
    check_host_device_index("ref", o.device);
    return std::make_unique<RefExecutable>(g);
  }
};

}  // namespace

void bind_graph_inputs(const Graph& g, const std::vector<Tensor>& inputs, std::vector<Tensor>& vals) {
  check_run_inputs(g, inputs);
  for (size_t i = 0; i < inputs.size(); ++i) vals[g.inputs[i]] = inputs[i];
}

const Tensor* value_ref(const Graph& g, const std::vector<Tensor>& vals, int v) {
  if (g.values[v].constant) return &*g.values[v].constant;
  return &vals[v];
}

std::unique_ptr<Backend> make_ref_backend() { return std::make_unique<RefBackend>(); }

}  // namespace fusor
