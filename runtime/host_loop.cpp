#include "runtime/host_loop.h"

#include <chrono>
#include <map>
#include <set>

#include "ir/kernel_spec.h"
#include "ir/op_table.h"
#include "runtime/segments.h"

namespace fusor {

namespace {

// One compiled body specialisation. The backend may not return graph outputs that are
// constants or graph inputs (a carried value passed through, cond_out folded to true), so
// those are filled here and only computed values are compiled as outputs.
struct CompiledBody {
  std::string refused;               // non-empty: this key runs on ref, and why
  std::unique_ptr<Executable> exe;   // null when no output needs a kernel
  struct Source {
    int kind = 0;  // 0: exe output, 1: constant, 2: graph input
    int index = 0;
  };
  std::vector<Source> sources;       // per body output
  std::vector<Tensor> constants;

  std::vector<Tensor> run(const std::vector<Tensor>& inputs) {
    std::vector<Tensor> computed = exe ? exe->run(inputs) : std::vector<Tensor>{};
    std::vector<Tensor> out;
    for (const Source& s : sources)
      out.push_back(s.kind == 0 ? computed.at(s.index) : s.kind == 1 ? constants[s.index] : inputs.at(s.index));
    return out;
  }
};

CompiledBody compile_body(Backend& b, const Graph& body, const CompileOptions& opts) {
  CompiledBody c;
  Graph g = body;
  std::map<int, int> input_pos, computed_pos;
  for (size_t i = 0; i < g.inputs.size(); ++i) input_pos.emplace(g.inputs[i], static_cast<int>(i));
  std::vector<int> outs;
  for (int o : body.outputs) {
    const Value& v = body.values[o];
    if (v.constant) {
      c.sources.push_back({1, static_cast<int>(c.constants.size())});
      c.constants.push_back(*v.constant);
    } else if (input_pos.count(o)) {
      c.sources.push_back({2, input_pos[o]});
    } else {
      auto [it, fresh] = computed_pos.emplace(o, static_cast<int>(outs.size()));
      if (fresh) outs.push_back(o);
      c.sources.push_back({0, it->second});
    }
  }
  if (outs.empty()) return c;
  g.outputs = outs;
  c.exe = compile_with_fallback(b, g, opts);
  return c;
}

struct LoopNode {
  std::string label;     // "Loop 'x'"
  int shapes = 0;        // specialisations tried
  int kernels = -1;      // kernels per replay of the first compiled body
  std::string refused;   // the last reason an iteration ran on ref
  int64_t compiled_iterations = 0, ref_iterations = 0;
  CompiledBody over_limit;  // every shape past kMaxBodyShapes: on ref, not cached per key (bounded memory)
};

class DeviceBodyRunner final : public BodyRunner {
 public:
  DeviceBodyRunner(Backend& b, const CompileOptions& opts) : name_(b.name()), opts_(opts), first_(&b) {}

  void add_node(const Node& n) { nodes_[n.name].label = n.op_type + " '" + n.name + "'"; }
  // Compiles the first iteration's body with the plan (on the session's backend object).
  void prepare(const BodyCall& call) { lookup(call); }
  void end_compile() { first_ = nullptr; }  // later specialisations use a backend of our own

  std::vector<Tensor> run(const BodyCall& call, const std::vector<Tensor>& inputs) override {
    CompiledBody& c = lookup(call);
    LoopNode& ln = nodes_[call.node];
    if (!c.refused.empty()) {
      ++ln.ref_iterations;
      ln.refused = c.refused;
      throw Unsupported("host-loop", c.refused);
    }
    ++ln.compiled_iterations;
    return c.run(inputs);
  }

  std::string notes() const {
    std::string s;
    for (auto& [name, ln] : nodes_) {
      if (!s.empty()) s += "; ";
      s += ln.label + ": host-driven";
      if (ln.kernels >= 0) s += ", body replayed on " + name_ + " (" + std::to_string(ln.kernels) + " kernels)";
      if (ln.shapes > 1) s += ", " + std::to_string(ln.shapes) + " body shapes";
      if (!ln.refused.empty()) {
        s += ", ";
        s += ln.ref_iterations ? std::to_string(ln.ref_iterations) + " iteration(s) on ref" : "body on ref";
        s += ": " + ln.refused;
      }
    }
    return s;
  }

  HostLoopStats stats() const {
    HostLoopStats st;
    for (auto& [name, ln] : nodes_) st.compiled_iterations += ln.compiled_iterations, st.ref_iterations += ln.ref_iterations;
    for (auto& [key, c] : cache_)
      if (c.refused.empty()) ++st.bodies_compiled;
    return st;
  }

 private:
  CompiledBody& lookup(const BodyCall& call) {
    auto it = cache_.find(call.key);
    if (it != cache_.end()) return it->second;
    LoopNode& ln = nodes_[call.node];
    CompiledBody c;
    if (ln.shapes >= kMaxBodyShapes) {
      ln.shapes = kMaxBodyShapes + 1;  // "more than": the further shapes are not counted, nor cached
      ln.over_limit.refused = ln.refused = "its loop-carried shapes changed more than " +
                                           std::to_string(kMaxBodyShapes - 1) + " times (at most " +
                                           std::to_string(kMaxBodyShapes) + " body specialisations are compiled)";
      return ln.over_limit;
    }
    ++ln.shapes;
    try {
      Graph body = call.specialise();
      if (!first_ && !own_) own_ = make_backend(name_);
      c = compile_body(first_ ? *first_ : *own_, body, opts_);
      if (ln.kernels < 0) ln.kernels = c.exe ? c.exe->kernel_count() : 0;
    } catch (const Error& e) {
      c = CompiledBody{};
      c.refused = std::string("its body cannot be compiled for ") + name_ + ": " + e.what();
    }
    if (!c.refused.empty()) ln.refused = c.refused;
    return cache_.emplace(call.key, std::move(c)).first->second;
  }

  std::string name_;
  CompileOptions opts_;
  Backend* first_;
  std::unique_ptr<Backend> own_;
  std::map<std::string, CompiledBody> cache_;
  std::map<std::string, LoopNode> nodes_;
};

// A host segment: op by op with the ref kernels, host-driven nodes through the runner.
class HostSegment final : public HostLoopExecutable {
 public:
  HostSegment(Graph g, Backend& b, const CompileOptions& opts) : g_(std::move(g)), runner_(b, opts) {
    // The runner caches compiled bodies by node name (BodyCall::key): ONNX does not require
    // node names to be unique, so two loops named alike would share one body. Make them unique.
    std::set<std::string> names;
    for (Node& n : g_.nodes) {
      const std::string base = n.name;
      for (int k = 2; !names.insert(n.name).second; ++k) n.name = base + "#" + std::to_string(k);
    }
    for (const Node& n : g_.nodes) {
      const OpDef& def = op_or_throw(n);
      if (!def.reference) throw Unsupported("ref", n.label() + ": op has no reference implementation");
      check_string_support(g_, n, def);  // as the ref backend: strings only where the op computes on them
      defs_.push_back(&def);
      std::vector<bool> c;
      for (int v : n.inputs) c.push_back(v >= 0 && g_.values[v].constant.has_value());
      constant_.push_back(std::move(c));
      if (!def.run_host) continue;
      runner_.add_node(n);
      if (def.first_call) call_op_fn(n, "host-loop", [&] { runner_.prepare(def.first_call(g_, n)); });
    }
    runner_.end_compile();
  }

  std::vector<Tensor> run(const std::vector<Tensor>& inputs, RunStats* stats) override {
    auto t0 = std::chrono::steady_clock::now();
    check_run_inputs(g_, inputs);
    std::vector<Tensor> vals(g_.values.size());
    for (size_t i = 0; i < inputs.size(); ++i) vals[g_.inputs[i]] = inputs[i];
    auto at = [&](int v) -> const Tensor* { return g_.values[v].constant ? &*g_.values[v].constant : &vals[v]; };
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      std::vector<const Tensor*> in;
      for (int v : n.inputs) in.push_back(v >= 0 ? at(v) : nullptr);
      std::vector<Tensor> out;
      for (int o : n.outputs) {
        out.push_back(o >= 0 ? Tensor(g_.values[o].dtype, g_.values[o].shape) : Tensor());
        if (o >= 0) out.back().poison();
      }
      // As the ref backend does: a library exception from an op function becomes one fusor::Error.
      if (!all_outputs_empty(out)) call_op_fn(n, "host-loop", [&] {
        if (defs_[i]->run_host) defs_[i]->run_host(n, in, constant_[i], out, runner_);
        else defs_[i]->reference(n, in, out);
      });
      for (size_t k = 0; k < n.outputs.size(); ++k)
        if (n.outputs[k] >= 0) vals[n.outputs[k]] = std::move(out[k]);
    }
    std::vector<Tensor> result;
    for (int o : g_.outputs) result.push_back(*at(o));
    if (stats) stats->host_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    return result;
  }
  int kernel_count() const override { return static_cast<int>(g_.nodes.size()); }
  std::string notes() const override { return runner_.notes(); }
  HostLoopStats loop_stats() const override { return runner_.stats(); }

 private:
  Graph g_;
  DeviceBodyRunner runner_;
  std::vector<const OpDef*> defs_;
  std::vector<std::vector<bool>> constant_;
};

}  // namespace

bool host_driven(const Node& n) {
  const OpDef* d = lookup_op(n.op_type);
  return d && d->run_host;
}

std::vector<std::string> describe_host_loops(Backend& b, const Graph& g, const CompileOptions& opts) {
  std::vector<std::string> lines;
  for (const Node& n : g.nodes) {
    if (!host_driven(n)) continue;
    const OpDef& def = op_or_throw(n);
    std::string s = n.op_type + " '" + n.name + "': host-driven, ";
    try {
      if (!def.first_call) throw Unsupported("host-loop", "no first iteration to specialise");
      const Graph body = def.first_call(g, n).specialise();
      const size_t kernels = body.nodes.empty() ? 0 : build_plan(body, b.fusion_options(opts)).kernels.size();
      s += "body replayed on " + b.name() + " (" + std::to_string(kernels) + " kernels)";
      const std::vector<GraphBreak> breaks = find_graph_breaks(b, body, opts);
      if (!breaks.empty()) s += ", " + std::to_string(breaks.size()) + " body node(s) on the host";
    } catch (const Error& e) {
      s += std::string("body on ref: ") + e.what();
    }
    lines.push_back(s);
  }
  return lines;
}

std::unique_ptr<Executable> compile_host_loops(Backend& b, const Graph& g, const CompileOptions& opts) {
  return std::make_unique<HostSegment>(g, b, opts);
}

}  // namespace fusor
