// Small contractions computed inside the row kernel that reads them (the fusion pass's last
// step, ir/fusion.cpp): inline dots (KernelSpec::dots: attention's Q @ K^T in the Softmax
// kernel) and row products (KernelSpec::row_product: Softmax(...) @ V after the row's element
// pass). Split from ir/fusion.cpp along that seam.
#include "ir/fusion_rows.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "ir/kernel_rewrite.h"

namespace fusor::fusion_detail {

int sole_reader(const std::vector<KernelSpec>& ks, size_t ci, int b) {
  int reader = -1;
  for (size_t j = 0; j < ks.size(); ++j) {
    if (j == ci || !ks[j].reads(b)) continue;
    if (reader >= 0) return -1;
    reader = static_cast<int>(j);
  }
  return reader;
}

void prepend_ops(KernelSpec& k, const KernelSpec& ck) {
  k.fused_ops.insert(k.fused_ops.begin(), ck.fused_ops.begin(), ck.fused_ops.end());
  k.fused_nodes.insert(k.fused_nodes.begin(), ck.fused_nodes.begin(), ck.fused_nodes.end());
}

namespace {
// A matmul kernel that stores its sum as is (no epilogue op, one output).
bool bare_product(const KernelSpec& k) {
  return k.matmul && k.outputs.size() == 1 && k.expr.size() == 1 && k.expr[0].kind == ExprKind::acc;
}
bool float_dtype(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }

// The row kernel k (over a product's space) reads the product's operands coalesced: its one
// reduced axis is the last (n) and B steps along it with unit stride (A never walks n).
bool walks_rows_coalesced(const KernelSpec& k, const MatMulDesc& m) {
  const int last = static_cast<int>(k.space.size()) - 1;
  return k.reduce_axes == std::vector<int>{last} && (m.n == 1 || m.b.strides[last] == 1);
}

bool row_products_wanted(const FusionOptions& o) {
  const char* e = std::getenv("FUSOR_ROW_PRODUCT");
  if (e && (std::string(e) == "0" || std::string(e) == "1")) return std::string(e) == "1";
  return o.row_products;
}

}  // namespace

// ---- a lookup's kernel merged into its first reader -----------------------------------------
// P: a loop kernel (one output, element-wise, at least one gathered load) whose output the
// fusion pass stored because several kernels read it (GPT-2's wte[ids] + wpe: the first
// LayerNorm and the residual add). C: the first kernel after P that reads it, a loop or row
// kernel over P's space reading it only through P's store view. C takes P's loads and
// expression, reads the value from it instead of the buffer, and stores it as one more element
// output where later kernels read it: one dependent launch less, and the value is the same bits
// (the same expression, evaluated at the same position).
bool merge_lookups_into_first_reader(std::vector<KernelSpec>& ks, const std::vector<Buffer>& bufs) {
  bool merged = false;
  for (size_t pi = 0; pi < ks.size(); ++pi) {
    KernelSpec& pk = ks[pi];
    if (pk.kind != FusionKind::loop || pk.matmul || pk.conv || !pk.dots.empty() || pk.row_product || !pk.reduce_axes.empty() ||
        pk.outputs.size() != 1 || pk.outputs[0].per_row || !pk.has_gathered_load())
      continue;
    const int pb = pk.outputs[0].buffer;
    if (bufs[pb].role == Buffer::Role::input || bufs[pb].role == Buffer::Role::constant) continue;
    size_t ci = pi + 1;
    while (ci < ks.size() && !ks[ci].reads(pb)) ++ci;
    if (ci >= ks.size()) continue;
    KernelSpec& k = ks[ci];
    if ((k.kind != FusionKind::loop && k.kind != FusionKind::input) || k.matmul || k.conv || !k.dots.empty() || k.row_product ||
        k.space != pk.space)
      continue;
    // Reads through the store's view: the same element at every position (a size-1 dim's
    // stride is never used).
    const StridedView& sv = pk.outputs[0].view;
    bool ok = true;
    for (const Load& l : k.loads) {
      if (l.buffer != pb) continue;
      ok = ok && !l.gathered() && l.view.offset == sv.offset;
      for (size_t d = 0; ok && d < k.space.size(); ++d) ok = k.space[d] == 1 || l.view.strides[d] == sv.strides[d];
    }
    for (const KernelOutput& o : k.outputs) ok = ok && o.buffer != pb;
    if (!ok) continue;
    // The merged kernel stays within the pass's limits (descriptors, expression size).
    std::vector<int> ins = k.input_buffers();
    for (int b : pk.input_buffers())
      if (std::find(ins.begin(), ins.end(), b) == ins.end()) ins.push_back(b);
    if (static_cast<int>(ins.size()) - 1 > kMaxLoadsPerKernel ||
        static_cast<int>(k.expr.size() + pk.expr.size()) > kMaxOpsPerKernel)
      continue;
    // P's loads (its gathered ones stay its own) and nodes, appended.
    std::vector<int> load_map(pk.loads.size(), -1), expr_map(pk.expr.size(), -1);
    for (size_t j = 0; j < pk.loads.size(); ++j) {
      const Load& l = pk.loads[j];
      for (size_t q = 0; q < k.loads.size() && !l.gathered(); ++q)
        if (!k.loads[q].gathered() && k.loads[q].buffer == l.buffer && k.loads[q].view.strides == l.view.strides &&
            k.loads[q].view.offset == l.view.offset)
          load_map[j] = static_cast<int>(q);
      if (load_map[j] < 0) k.loads.push_back(l), load_map[j] = static_cast<int>(k.loads.size()) - 1;
    }
    for (size_t e = 0; e < pk.expr.size(); ++e) {
      ExprNode n = pk.expr[e];
      if (n.kind == ExprKind::load) n.load = load_map[n.load];
      for (int& a : n.args)
        if (a >= 0) a = expr_map[a];
      expr_map[e] = static_cast<int>(k.expr.size());
      k.expr.push_back(std::move(n));
    }
    const int root = expr_map[pk.outputs[0].expr];
    // C's reads of the buffer become the value.
    auto is_read = [&](int e) { return e >= 0 && k.expr[e].kind == ExprKind::load && k.loads[k.expr[e].load].buffer == pb; };
    for (ExprNode& n : k.expr)
      for (int& a : n.args)
        if (is_read(a)) a = root;
    for (KernelOutput& o : k.outputs)
      if (is_read(o.expr)) o.expr = root;
    for (Reduction& r : k.reductions)
      if (is_read(r.body)) r.body = root;
    // Stored only for later readers (a LayerNorm's mean and its centring both read its input,
    // which is why the pass stored it; nothing after needs the bytes then).
    bool later = bufs[pb].role == Buffer::Role::output;
    for (size_t j = ci + 1; j < ks.size() && !later; ++j) later = ks[j].reads(pb);
    if (later) k.outputs.push_back({pb, pk.outputs[0].view, root, false});
    prepend_ops(k, pk);
    topo_order(k);  // drops the loads of the buffer
    pk.outputs.clear();  // now dead; removed by drop_dead_kernels
    merged = true;
  }
  return merged;
}

// ---- inline contractions -------------------------------------------------------------------
// A bare small matmul (kMaxPrologueMacs multiply-adds, K <= kMaxInlineDotK, float operands and
// result) whose only reader is one row kernel over the product's own space, reading it
// contiguously, becomes that kernel's KernelSpec::dots: attention's Q @ K^T computed inside
// the Softmax row kernel instead of stored by a kernel before it (the row kernel keeps each
// score in registers where its rows fit, kernel_rewrite.h mark_row_registers).
// Which: by default only products whose operands the row walks with unit stride (thread j of
// the row reads element j, so a group's reads are coalesced): on the H200 (docs/benchmarks.md,
// sixteenth and twenty-second sessions) fp16 GPT-2 2L, whose keys come from a copy kernel in
// [D, L] order, ran faster inline on both GPUs, while keys read along D (a key row per thread,
// fp32 / bf16 through operand prologues) made the fused kernel slower than the product's own.
// FUSOR_INLINE_DOT=1 inlines whatever qualifies otherwise (the layout aside), 0 none.
bool inline_small_contractions(std::vector<KernelSpec>& ks, const std::vector<Buffer>& bufs) {
  const char* e = std::getenv("FUSOR_INLINE_DOT");
  const std::string mode = e ? e : "";
  if (mode == "0") return false;
  const bool any_layout = mode == "1";
  bool inlined = false;
  for (size_t ci = 0; ci < ks.size(); ++ci) {
    KernelSpec& ck = ks[ci];
    if (!bare_product(ck)) continue;
    const MatMulDesc& m = *ck.matmul;
    const int cbuf = ck.outputs[0].buffer;
    if (bufs[cbuf].role != Buffer::Role::intermediate || m.dequant_b || ck.space.size() < 2) continue;
    if (!ck.outputs[0].view.is_contiguous() || ck.outputs[0].view.shape != ck.space) continue;
    const DType at = bufs[m.a_buffer].dtype, bt = bufs[m.b_buffer].dtype;
    if (!float_dtype(at) || !float_dtype(bt) || !float_dtype(ck.expr[0].dtype) || ck.expr[0].dtype != bufs[cbuf].dtype) continue;
    if (m.k <= 0 || m.k > kMaxInlineDotK || m.m <= 0 || m.n <= 0 || shape_numel(ck.space) > kMaxPrologueMacs / m.k) continue;
    // Operands a whole binding can hold on any device (the Vulkan backend binds them whole).
    if (bufs[m.a_buffer].nbytes() > (int64_t{64} << 20) || bufs[m.b_buffer].nbytes() > (int64_t{64} << 20)) continue;
    const int reader = sole_reader(ks, ci, cbuf);
    if (reader < 0) continue;
    KernelSpec& k = ks[reader];
    if (k.kind != FusionKind::input || k.reduce_axes.empty() || k.matmul || k.conv || k.space != ck.space ||
        k.has_gathered_load())
      continue;
    if (k.dots.size() >= 2 || k.input_buffers().size() + 2 > static_cast<size_t>(kMaxLoadsPerKernel)) continue;
    if (!any_layout && !walks_rows_coalesced(k, m)) continue;
    bool ok = true;
    for (auto& l : k.loads)
      if (l.buffer == cbuf && !(l.view.is_contiguous() && l.view.shape == ck.space)) ok = false;
    if (!ok) continue;
    InlineDot d;
    d.mm = m;
    const size_t nb = ck.space.size() - 2;
    d.a_sk = m.a.strides[nb + 1];
    d.b_sk = m.b.strides[nb];
    d.a_at.shape = d.b_at.shape = ck.space;
    d.a_at.offset = m.a.offset;
    d.b_at.offset = m.b.offset;
    d.a_at.strides.assign(m.a.strides.begin(), m.a.strides.begin() + nb);
    d.b_at.strides.assign(m.b.strides.begin(), m.b.strides.begin() + nb);
    d.a_at.strides.insert(d.a_at.strides.end(), {m.a.strides[nb], 0});
    d.b_at.strides.insert(d.b_at.strides.end(), {0, m.b.strides[nb + 1]});
    const int di = static_cast<int>(k.dots.size());
    k.dots.push_back(std::move(d));
    for (auto& n : k.expr)
      if (n.kind == ExprKind::load && k.loads[n.load].buffer == cbuf) {
        n.kind = ExprKind::dot;
        n.load = -1;
        n.dot = di;
      }
    prepend_ops(k, ck);
    topo_order(k);  // drops the loads of the product
    ck.outputs.clear();  // now dead; removed by drop_dead_kernels
    inlined = true;
  }
  return inlined;
}

// ---- row products ---------------------------------------------------------------------------
// A bare small matmul (no prologue, plain B, acc stored as is) whose A is read contiguously
// from an element output of one row kernel over A's own space, reduced along K (the last
// axis) and read by no other kernel, becomes that kernel's KernelSpec::row_product: the
// kernel keeps the row of P and multiplies it by B itself (attention's Softmax @ V).
bool fuse_row_products(std::vector<KernelSpec>& ks, const std::vector<Buffer>& bufs, const FusionOptions& o) {
  if (!row_products_wanted(o)) return false;
  bool fused = false;
  for (size_t mi = 0; mi < ks.size(); ++mi) {
    KernelSpec& mk = ks[mi];
    if (!bare_product(mk)) continue;
    const MatMulDesc& m = *mk.matmul;
    if (!m.a_plain() || !m.b_plain() || mk.space.size() < 2 || m.m <= 0 || m.n <= 0 || m.k <= 1) continue;
    // Each row is one workgroup's: short, narrow products over many rows only (a one-row
    // decode step times a wide weight keeps the GPU-wide matmul kernel). K x N <= 2^19 here, so
    // the product below cannot overflow.
    const int64_t rows = shape_numel(mk.space) / m.n;
    if (m.k > kMaxRowProductK || m.n > kMaxRowProductN || rows < kMinRowsToAbsorb || rows > kMaxPrologueMacs / (m.k * m.n)) continue;
    const int pbuf = m.a_buffer, cbuf = mk.outputs[0].buffer;
    if (bufs[pbuf].role != Buffer::Role::intermediate || pbuf == m.b_buffer || cbuf == m.b_buffer) continue;
    const DType pt = bufs[pbuf].dtype;
    if (!float_dtype(pt) || !float_dtype(bufs[m.b_buffer].dtype) || !float_dtype(mk.expr[0].dtype) || !float_dtype(bufs[cbuf].dtype)) continue;
    if (!m.a.is_contiguous() || bufs[pbuf].shape != m.a.shape) continue;
    if (bufs[m.b_buffer].nbytes() > (int64_t{64} << 20)) continue;  // bound whole on any device
    // The producer: the one other kernel writing P, a row kernel over A's space reducing its last axis.
    int ri = -1;
    for (size_t j = 0; j < ks.size(); ++j)
      if (j != mi && ks[j].writes(pbuf)) ri = ri < 0 ? static_cast<int>(j) : -2;
    if (ri < 0 || sole_reader(ks, static_cast<size_t>(ri), pbuf) != static_cast<int>(mi)) continue;
    // B must be ready where the row kernel runs (kernels are in execution order).
    bool b_ready = true;
    for (size_t j = static_cast<size_t>(ri); j < ks.size() && b_ready; ++j) b_ready = !ks[j].writes(m.b_buffer);
    if (!b_ready) continue;
    KernelSpec& k = ks[ri];
    const int last = static_cast<int>(k.space.size()) - 1;
    if (k.kind != FusionKind::input || k.matmul || k.conv || k.row_product || k.has_gathered_load() || k.space != m.a.shape ||
        k.reduce_axes != std::vector<int>{last} || k.space[last] != m.k)
      continue;
    if (k.input_buffers().size() + 1 > static_cast<size_t>(kMaxLoadsPerKernel)) continue;
    int po = -1;
    for (size_t o = 0; o < k.outputs.size(); ++o)
      if (k.outputs[o].buffer == pbuf) po = po < 0 ? static_cast<int>(o) : -2;
    if (po < 0 || k.outputs[po].per_row || !k.outputs[po].view.is_contiguous() || k.outputs[po].view.shape != k.space) continue;
    const size_t nb = k.space.size() - 2;
    RowProduct rp;
    rp.p = k.outputs[po].expr;
    rp.p_dtype = pt;
    rp.b_buffer = m.b_buffer, rp.c_buffer = cbuf;
    rp.n = m.n, rp.c_dtype = mk.expr[0].dtype;
    rp.b_sk = m.b.strides[nb], rp.b_sn = m.b.strides[nb + 1];
    const StridedView& cv = mk.outputs[0].view;
    rp.c_sn = cv.strides[nb + 1];
    rp.b_at.shape = rp.c_at.shape = k.space;
    rp.b_at.offset = m.b.offset, rp.c_at.offset = cv.offset;
    rp.b_at.strides.assign(m.b.strides.begin(), m.b.strides.begin() + nb);
    rp.c_at.strides.assign(cv.strides.begin(), cv.strides.begin() + nb);
    rp.b_at.strides.insert(rp.b_at.strides.end(), {0, 0});
    rp.c_at.strides.insert(rp.c_at.strides.end(), {cv.strides[nb], 0});
    k.outputs.erase(k.outputs.begin() + po);
    k.row_product = std::move(rp);
    k.fused_ops.insert(k.fused_ops.end(), mk.fused_ops.begin(), mk.fused_ops.end());
    k.fused_nodes.insert(k.fused_nodes.end(), mk.fused_nodes.begin(), mk.fused_nodes.end());
    topo_order(k);
    mk.outputs.clear();  // now dead; removed by drop_dead_kernels
    fused = true;
  }
  return fused;
}

}  // namespace fusor::fusion_detail
