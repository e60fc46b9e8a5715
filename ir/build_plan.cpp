// Plan assembly (ir/kernel_spec.h build_plan): decomposition and passes, the fusion pass
// (ir/fusion.cpp fuse_kernels), dropping kernels that write nothing, byte counts, the memory plan.
#include <algorithm>
#include <optional>
#include <set>

#include "ir/kernel_spec.h"
#include "ir/op_table.h"
#include "ir/passes.h"
#include "ir/phases.h"

namespace fusor {
namespace {

int64_t value_bytes(const Graph& g, int v) {
  return shape_numel(g.values[v].shape) * static_cast<int64_t>(dtype_size(g.values[v].dtype));
}

void count_bytes(Plan& p) {
  p.bytes_fused = 0;
  for (auto& k : p.kernels) p.bytes_fused += kernel_bytes_read(p, k) + kernel_bytes_written(p, k);
  // Op by op: every non-view node reads its inputs and writes its outputs once.
  p.bytes_unfused = 0;
  for (auto& n : p.graph.nodes) {
    const OpDef* d = lookup_op(n.op_type);
    if (d && d->is_view) continue;
    std::set<int> vs(n.inputs.begin(), n.inputs.end());
    vs.erase(-1);
    for (int v : vs) p.bytes_unfused += value_bytes(p.graph, v);
    for (int v : n.outputs)
      if (v >= 0) p.bytes_unfused += value_bytes(p.graph, v);
  }
}

}  // namespace

int64_t kernel_bytes_read(const Plan& p, const KernelSpec& k) {
  // A Gather reads the rows it picks, not its whole table: a buffer read only through gathered
  // loads counts one element per position of each (an opaque Gather's table: one per output
  // element), at most the buffer once.
  const bool opaque_gather = k.kind == FusionKind::opaque && k.node >= 0 && k.node < static_cast<int>(p.graph.nodes.size()) &&
                             p.graph.nodes[k.node].op_type == "Gather" && k.opaque_inputs.size() == 2 &&
                             k.opaque_outputs.size() == 1 && k.opaque_outputs[0] >= 0;
  const bool element_reads = !k.matmul && !k.conv && k.dots.empty() && !k.row_product && k.kind != FusionKind::opaque;
  int64_t r = 0;
  for (int b : k.input_buffers()) {
    const int64_t es = static_cast<int64_t>(dtype_size(p.buffers[b].dtype));
    int64_t picked = -1;  // -1: the whole buffer
    if (opaque_gather && b == k.opaque_inputs[0] && b != k.opaque_inputs[1]) {
      picked = shape_numel(p.buffers[k.opaque_outputs[0]].shape) * es;
    } else if (element_reads) {
      bool plain = false;
      int64_t g = 0;
      for (const Load& l : k.loads)
        if (l.buffer == b) l.gathered() ? void(g += shape_numel(k.space) * es) : void(plain = true);
      if (!plain && g > 0) picked = g;
    }
    r += picked >= 0 ? std::min(picked, p.buffers[b].nbytes()) : p.buffers[b].nbytes();
  }
  return r;
}

int64_t kernel_bytes_written(const Plan& p, const KernelSpec& k) {
  int64_t w = 0;
  if (k.kind == FusionKind::opaque) {
    for (int b : k.output_buffers()) w += p.buffers[b].nbytes();
  } else {
    for (auto& o : k.outputs)
      w += (o.per_row ? k.rows() : shape_numel(k.space)) * static_cast<int64_t>(dtype_size(p.buffers[o.buffer].dtype));
    if (k.row_product) w += k.rows() * k.row_product->n * static_cast<int64_t>(dtype_size(p.buffers[k.row_product->c_buffer].dtype));
  }
  return w;
}

Plan build_plan(const Graph& static_graph, const FusionOptions& opts) {
  refuse_string_values(static_graph);  // the same refusal as the ref backend's
  std::optional<PhaseScope> phase(std::in_place, "decompose + passes");
  Graph g = static_graph;
  int original = static_cast<int>(g.nodes.size());
  decompose(g);
  fold_unfused_weight_dequant(g, opts.fuse);
  phase.emplace("fusion pass");
  Plan p = fuse_kernels(g, opts);
  // A kernel whose every output is empty writes nothing: dropped here, once, so no backend
  // emits code for a zero-element space whose other dims may be huge (x [0, 2^40, 16] made a
  // stride past the 32-bit index type on vulkan while ref and cpu returned empty outputs).
  std::erase_if(p.kernels, [&](const KernelSpec& k) {
    const std::vector<int> outs = k.output_buffers();
    return !outs.empty() && std::all_of(outs.begin(), outs.end(), [&](int b) { return shape_numel(p.buffers[b].shape) == 0; });
  });
  p.original_nodes = original;
  count_bytes(p);
  phase.emplace("memory plan");
  plan_memory(p);
  return p;
}

}  // namespace fusor
