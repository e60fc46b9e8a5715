// Output fusion (the fusion pass's step after input fusion, ir/fusion.cpp): a contraction whose
// only reader is one element-wise kernel becomes that kernel's prologue, the reader turning
// into an output-fusion kernel (XLA's "output" kind); and the sweep that drops kernels no one
// reads after each rewrite. Split from ir/fusion.cpp along that seam.
#include <set>
#include <vector>

#include "ir/fusion_rows.h"
#include "ir/kernel_rewrite.h"

namespace fusor::fusion_detail {

void fuse_outputs(std::vector<KernelSpec>& ks, const std::vector<Buffer>& bufs) {
  for (size_t ci = 0; ci < ks.size(); ++ci) {
    KernelSpec& ck = ks[ci];
    if (!(ck.matmul || ck.conv) || ck.outputs.size() != 1 || ck.expr.size() != 1) continue;
    int cbuf = ck.outputs[0].buffer;
    if (bufs[cbuf].role != Buffer::Role::intermediate) continue;
    const int reader = sole_reader(ks, ci, cbuf);
    if (reader < 0) continue;
    KernelSpec& k = ks[reader];
    // Gathered loads stay out of contraction kernels (library epilogues, tiled templates).
    if (k.kind != FusionKind::loop || k.matmul || k.conv || k.has_gathered_load()) continue;
    // The fused kernel reads the contraction's operands instead of its product: within the
    // descriptor budget, as every other rewrite that adds reads (a reader of 11 addends and
    // the product would otherwise bind 13 buffers).
    std::set<int> reads;
    for (int b : k.input_buffers())
      if (b != cbuf) reads.insert(b);
    for (int b : ck.input_buffers()) reads.insert(b);
    if (reads.size() > static_cast<size_t>(kMaxLoadsPerKernel)) continue;
    if (k.space != ck.space) {
      // A reader that permutes the product's axes (attention's heads-to-sequence Transpose)
      // is re-expressed over the contraction's space: its loads and stores walk permuted
      // views, so the product is stored transposed instead of materialized and copied.
      auto inv = permuted_reader(k, cbuf, ck.space);
      if (!inv) continue;
      for (auto& l : k.loads) l.view = over_space(l.view, *inv, ck.space);
      for (auto& o : k.outputs) o.view = over_space(o.view, *inv, ck.space);
      k.space = ck.space;
    }
    bool ok = true;
    for (auto& l : k.loads)
      if (l.buffer == cbuf && !(l.view.is_contiguous() && l.view.shape == ck.space)) ok = false;
    if (!ok) continue;
    for (auto& n : k.expr)
      if (n.kind == ExprKind::load && k.loads[n.load].buffer == cbuf) {
        n.kind = ExprKind::acc;
        n.load = -1;
      }
    k.kind = FusionKind::output;
    k.matmul = ck.matmul;
    k.conv = ck.conv;
    prepend_ops(k, ck);
    topo_order(k);
    ck.outputs.clear();  // now dead; drop_dead_kernels removes it
  }
}

void drop_dead_kernels(std::vector<KernelSpec>& ks, std::vector<int>& kernel_value, const std::vector<Buffer>& bufs) {
  // Every dead kernel of a sweep at once (one sweep per link of a dead chain): one at a time
  // with a fresh read set each was quadratic in the kernel count (a 36k-node model: 29 s).
  for (bool changed = true; changed;) {
    std::vector<char> read(bufs.size(), 0);
    for (auto& k : ks)
      for (int b : k.input_buffers()) read[b] = 1;
    std::vector<char> dead(ks.size(), 0);
    changed = false;
    for (size_t i = 0; i < ks.size(); ++i) {
      if (ks[i].kind == FusionKind::opaque) continue;
      bool live = false;
      for (int b : ks[i].output_buffers())
        if (read[b] || bufs[b].role == Buffer::Role::output || bufs[b].check) live = true;
      dead[i] = !live;
      changed = changed || !live;
    }
    if (!changed) break;
    size_t w = 0;
    for (size_t i = 0; i < ks.size(); ++i)
      if (!dead[i]) {
        if (w != i) ks[w] = std::move(ks[i]), kernel_value[w] = kernel_value[i];
        ++w;
      }
    ks.resize(w);
    kernel_value.resize(w);
  }
}

}  // namespace fusor::fusion_detail
