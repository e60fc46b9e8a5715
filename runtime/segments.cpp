#include "runtime/segments.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "ir/op_table.h"
#include "ir/partition.h"
#include "runtime/host_loop.h"

namespace fusor {

namespace {

// Per-node check: a node is a break when the backend refuses the graph of that node alone.
std::vector<GraphBreak> node_breaks(Backend& b, const Graph& g, const CompileOptions& opts, std::vector<bool>* on_host) {
  std::vector<GraphBreak> out;
  if (on_host) on_host->assign(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    std::string why;
    try {
      // No device kernel computes on strings: the text ops and the data moves of strings run
      // on the host, as onnxruntime runs them on its CPU provider.
      why = touches_strings(g, g.nodes[i]) ? "strings are computed on the host"
                                           : b.unsupported(single_node_graph(g, static_cast<int>(i)), opts);
    } catch (const Unsupported& e) {
      why = e.what();
    }
    if (why.empty()) continue;
    // A Loop/Scan stays on the host as the driver of its iterations; its body runs on b.
    if (host_driven(g.nodes[i])) why = "host-driven loop, its body compiled for " + b.name() + " and replayed per iteration";
    out.push_back({g.nodes[i].name, g.nodes[i].op_type, why});
    if (on_host) (*on_host)[i] = true;
  }
  return out;
}

class SegmentedExecutable final : public Executable {
 public:
  struct Piece {
    Segment seg;
    std::unique_ptr<Executable> exe;
  };

  SegmentedExecutable(Graph g, std::vector<Piece> pieces, std::vector<GraphBreak> breaks, std::string backend)
      : g_(std::move(g)), pieces_(std::move(pieces)), breaks_(std::move(breaks)), backend_(std::move(backend)) {
    // Values no later piece reads are dropped after the piece (a run holds the live ones only).
    std::vector<int> last(g_.values.size(), -1);
    for (size_t i = 0; i < pieces_.size(); ++i) {
      for (int v : pieces_[i].seg.inputs) last[v] = static_cast<int>(i);
      for (int v : pieces_[i].seg.outputs) last[v] = std::max(last[v], static_cast<int>(i));
    }
    for (int v : g_.outputs) last[v] = -1;
    free_after_.resize(pieces_.size());
    for (size_t v = 0; v < last.size(); ++v)
      if (last[v] >= 0) free_after_[last[v]].push_back(static_cast<int>(v));
  }

  std::vector<Tensor> run(const std::vector<Tensor>& inputs, RunStats* stats) override {
    auto t0 = std::chrono::steady_clock::now();
    check_run_inputs(g_, inputs);
    std::vector<Tensor> env(g_.values.size());
    for (size_t i = 0; i < inputs.size(); ++i) env[g_.inputs[i]] = inputs[i];
    double device_us = 0;
    bool timed = false;
    for (size_t pi = 0; pi < pieces_.size(); ++pi) {
      Piece& p = pieces_[pi];
      std::vector<Tensor> in;
      in.reserve(p.seg.inputs.size());
      for (int v : p.seg.inputs) in.push_back(env[v]);  // shares storage, no copy
      RunStats st;
      std::vector<Tensor> out = p.exe->run(in, &st);
      if (out.size() != p.seg.outputs.size())
        throw Error("run", "segment returned " + std::to_string(out.size()) + " outputs, expected " +
                               std::to_string(p.seg.outputs.size()));
      for (size_t k = 0; k < out.size(); ++k) env[p.seg.outputs[k]] = std::move(out[k]);
      if (!p.seg.host && st.device_us >= 0) device_us += st.device_us, timed = true;
      for (int v : free_after_[pi]) env[v] = Tensor();
    }
    std::vector<Tensor> result;
    for (int o : g_.outputs) result.push_back(g_.values[o].constant ? *g_.values[o].constant : env[o]);
    if (stats) {
      stats->host_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      stats->device_us = timed ? device_us : -1;
    }
    return result;
  }

  int kernel_count() const override {
    int n = 0;
    for (auto& p : pieces_) n += p.exe->kernel_count();
    return n;
  }

  std::string notes() const override {
    int dev = 0, host = 0;
    std::set<std::string> ops;
    for (auto& p : pieces_) (p.seg.host ? host : dev)++;
    for (auto& b : breaks_) ops.insert(b.op);
    std::string s = "host fallback: " + std::to_string(breaks_.size()) + " node(s) on the host (";
    for (auto it = ops.begin(); it != ops.end(); ++it) s += (it == ops.begin() ? "" : ", ") + *it;
    s += "), " + std::to_string(dev) + " " + backend_ + " segment(s) + " + std::to_string(host) + " host segment(s)";
    for (auto& p : pieces_)
      if (!p.exe->notes().empty()) s += "; " + p.exe->notes();
    return s;
  }

  const std::vector<GraphBreak>& breaks() const { return breaks_; }
  HostLoopStats loop_stats() const {
    HostLoopStats st;
    for (auto& p : pieces_) {
      const HostLoopStats q = host_loop_stats(*p.exe);
      st.compiled_iterations += q.compiled_iterations, st.ref_iterations += q.ref_iterations, st.bodies_compiled += q.bodies_compiled;
    }
    return st;
  }

 private:
  Graph g_;
  std::vector<Piece> pieces_;
  std::vector<GraphBreak> breaks_;
  std::string backend_;
  std::vector<std::vector<int>> free_after_;  // per piece: values no later piece reads
};

}  // namespace

std::vector<GraphBreak> find_graph_breaks(Backend& b, const Graph& g, const CompileOptions& opts) {
  if (b.unsupported(g, opts).empty()) return {};
  return node_breaks(b, g, opts, nullptr);
}

std::unique_ptr<Executable> compile_with_fallback(Backend& b, const Graph& g, const CompileOptions& opts) {
  try {
    return b.compile(g, opts);
  } catch (const Unsupported&) {
    // No device (e.g. "no CUDA device") is not an op the host could take over.
    if (!opts.fallback || b.name() == "ref" || b.devices().empty()) throw;
    std::vector<bool> on_host;
    std::vector<GraphBreak> breaks = node_breaks(b, g, opts, &on_host);
    // Nothing the host could take over (e.g. no device). Unless the graph holds strings no node
    // computes (a string input or output its specialisation folded): the pieces take the rest
    // and the strings stay on the host, where the executable returns constant outputs itself.
    if (breaks.empty() && !holds_strings(g)) throw;
    std::vector<SegmentedExecutable::Piece> pieces;
    auto host = make_backend("ref");
    for (Segment& s : partition_graph(g, on_host)) {
      Graph sg = segment_graph(g, s);
      std::unique_ptr<Executable> exe;
      if (!s.host) {
        try {
          exe = b.compile(sg, opts);
        } catch (const Unsupported& e) {
          // Every node passed alone but the fused piece does not: the host runs the piece.
          for (int i : s.nodes) breaks.push_back({g.nodes[i].name, g.nodes[i].op_type, std::string("with its segment: ") + e.what()});
          s.host = true;
        }
      }
      if (s.host) {
        bool loops = false;
        for (const Node& n : sg.nodes) loops = loops || host_driven(n);
        CompileOptions host_opts = opts;
        host_opts.device = 0;  // opts.device names the device backend's GPU; the host has one device
        exe = loops ? compile_host_loops(b, sg, opts) : host->compile(sg, host_opts);
      }
      pieces.push_back({std::move(s), std::move(exe)});
    }
    return std::make_unique<SegmentedExecutable>(g, std::move(pieces), std::move(breaks), b.name());
  }
}

std::vector<GraphBreak> graph_breaks(const Executable& e) {
  auto* s = dynamic_cast<const SegmentedExecutable*>(&e);
  return s ? s->breaks() : std::vector<GraphBreak>{};
}

HostLoopStats host_loop_stats(const Executable& e) {
  if (auto* s = dynamic_cast<const SegmentedExecutable*>(&e)) return s->loop_stats();
  if (auto* h = dynamic_cast<const HostLoopExecutable*>(&e)) return h->loop_stats();
  return {};
}

std::string describe(const GraphBreak& b) { return "node '" + b.node + "' (" + b.op + ") on the host: " + b.reason; }

}  // namespace fusor
