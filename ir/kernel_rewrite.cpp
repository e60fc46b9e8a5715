// KernelSpec-level rewrites used by the fusion pass (ir/kernel_rewrite.h).
#include "ir/kernel_rewrite.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <functional>
#include <set>
#include <string>
#include <utility>

#include "ir/view.h"

namespace fusor {

StridedView row_view(const Shape& space, const std::vector<int>& axes) {
  Shape keep = space;
  for (int a : axes) keep[a] = 1;
  StridedView s = StridedView::contiguous(keep);
  s.shape = space;
  for (int a : axes) s.strides[a] = 0;
  for (size_t i = 0; i < keep.size(); ++i)
    if (keep[i] == 1) s.strides[i] = 0;
  return s;
}

namespace {
// Everything that makes two expression nodes the same value (their operands already merged).
std::string node_key(const ExprNode& n) {
  const auto bits = [](double v) {
    uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    return std::to_string(b);
  };
  std::string key = std::to_string(static_cast<int>(n.kind)) + ":" + std::to_string(static_cast<int>(n.dtype)) + ":" +
                    std::to_string(static_cast<int>(n.math)) + ":" + std::to_string(n.load) + ":" + bits(n.value) + ":" +
                    std::to_string(n.ivalue) + ":" + std::to_string(n.red) + ":" + std::to_string(n.dot) + ":" +
                    std::to_string(reinterpret_cast<std::uintptr_t>(n.op)) + ":" + n.bound.expr;
  for (double p : n.bound.params) key += "|" + bits(p);
  for (const auto& a : n.bound.absent) key += "|" + (a ? bits(*a) : std::string("-"));
  for (int a : n.args) key += "," + std::to_string(a);
  return key;
}
}  // namespace

void topo_order(KernelSpec& k) {
  {
    std::vector<int> rorder, rstate(k.reductions.size(), 0);
    std::function<void(int)> deps = [&](int e) {
      const ExprNode& n = k.expr[e];
      if (n.kind == ExprKind::red_ref && !rstate[n.red]) {
        rstate[n.red] = 1;
        deps(k.reductions[n.red].body);
        rorder.push_back(n.red);
      }
      for (int a : n.args)
        if (a >= 0) deps(a);
    };
    for (size_t r = 0; r < k.reductions.size(); ++r)
      if (!rstate[r]) {
        rstate[r] = 1;
        deps(k.reductions[r].body);
        rorder.push_back(static_cast<int>(r));
      }
    std::vector<int> rmap(k.reductions.size());
    std::vector<Reduction> reds;
    for (int r : rorder) {
      rmap[r] = static_cast<int>(reds.size());
      reds.push_back(k.reductions[r]);
    }
    for (auto& n : k.expr)
      if (n.kind == ExprKind::red_ref) n.red = rmap[n.red];
    k.reductions = std::move(reds);
  }
  std::vector<int> order, state(k.expr.size(), 0);
  std::function<void(int)> visit = [&](int i) {
    if (state[i]) return;
    state[i] = 1;
    for (int a : k.expr[i].args)
      if (a >= 0) visit(a);
    order.push_back(i);
  };
  for (auto& r : k.reductions) visit(r.body);
  for (auto& o : k.outputs) visit(o.expr);
  if (k.row_product) visit(k.row_product->p);
  // Renumbered in that order, and hash-consed again (KernelSpec::expr has no duplicates):
  // absorbing a reduction kernel appends its nodes unmerged, so a Softmax's Exp(x - max) was
  // two nodes, its sum's and its output's. Every scalar op is pure, so equal nodes are one value.
  std::vector<int> remap(k.expr.size(), -1);
  std::vector<ExprNode> e;
  std::map<std::string, int> seen;
  for (int i : order) {
    ExprNode n = k.expr[i];
    for (auto& a : n.args)
      if (a >= 0) a = remap[a];
    const std::string key = node_key(n);
    const auto it = seen.find(key);
    if (it != seen.end()) {
      remap[i] = it->second;
      continue;
    }
    remap[i] = static_cast<int>(e.size());
    seen.emplace(key, remap[i]);
    e.push_back(std::move(n));
  }
  for (auto& r : k.reductions) r.body = remap[r.body];
  for (auto& o : k.outputs) o.expr = remap[o.expr];
  if (k.row_product) k.row_product->p = remap[k.row_product->p];
  // Compact loads.
  std::vector<int> used(k.loads.size(), -1);
  std::vector<Load> loads;
  for (auto& n : e)
    if (n.kind == ExprKind::load) {
      if (used[n.load] < 0) {
        used[n.load] = static_cast<int>(loads.size());
        loads.push_back(k.loads[n.load]);
      }
      n.load = used[n.load];
    }
  k.expr = std::move(e);
  k.loads = std::move(loads);
}

namespace {
// Expression nodes a and b of k compute the same value (absorbed reduction kernels bring their
// own copies of shared subtrees, so equal values need not share a node id). `known` holds pairs
// already proven equal, so a DAG that reuses a subtree is compared once per pair, not per path.
bool same_value(const KernelSpec& k, int a, int b, std::set<std::pair<int, int>>& known) {
  if (a == b) return true;
  if (a < 0 || b < 0) return false;
  if (known.count({a, b})) return true;
  const ExprNode &x = k.expr[a], &y = k.expr[b];
  if (x.kind != y.kind || x.dtype != y.dtype || x.args.size() != y.args.size()) return false;
  switch (x.kind) {
    case ExprKind::load: {
      const Load &p = k.loads[x.load], &q = k.loads[y.load];
      if (p.buffer != q.buffer || p.view.strides != q.view.strides || p.view.offset != q.view.offset ||
          p.gather_stride != q.gather_stride || p.gather_dim != q.gather_dim)
        return false;
      if (!x.args.empty() && !same_value(k, x.args[0], y.args[0], known)) return false;  // gathered: the same index
      known.insert({a, b});
      return true;
    }
    case ExprKind::constant:
      return x.value == y.value && x.ivalue == y.ivalue;
    case ExprKind::red_ref:
      return x.red == y.red;
    case ExprKind::acc:
      return true;
    case ExprKind::dot:
      return x.dot == y.dot;
    case ExprKind::op:
      if (x.op != y.op || x.math != y.math || x.bound.expr != y.bound.expr || x.bound.params != y.bound.params) return false;
      for (size_t i = 0; i < x.args.size(); ++i)
        if (!same_value(k, x.args[i], y.args[i], known)) return false;
      known.insert({a, b});
      return true;
  }
  return false;
}
}  // namespace

void mark_row_registers(KernelSpec& k) {
  k.row_registers = 0;
  k.register_loads.clear();
  k.register_values.clear();
  if (k.matmul || k.conv || k.kind == FusionKind::opaque || k.reduce_axes.empty()) return;
  static const bool off = [] {
    const char* e = std::getenv("FUSOR_ROW_REGISTERS");
    return e && std::string(e) == "0";
  }();
  const int64_t len = k.row_length();
  if (off || len <= 0) return;
  // Passes over the row: each reduction's body, then the element-wise outputs.
  std::vector<std::vector<int>> passes;
  for (auto& r : k.reductions) passes.push_back({r.body});
  passes.emplace_back();
  for (auto& o : k.outputs)
    if (!o.per_row) passes.back().push_back(o.expr);
  if (k.row_product) passes.back().push_back(k.row_product->p);
  const int n = static_cast<int>(k.expr.size());
  // Values that walk the row (a row-walking load below them); the others are per-row values.
  std::vector<char> walks(n, 0);
  for (int i = 0; i < n; ++i) {
    const ExprNode& e = k.expr[i];
    if (e.kind == ExprKind::load) walks[i] = e.load >= 0 && e.load < static_cast<int>(k.loads.size()) && k.load_walks_row(e.load);
    if (e.kind == ExprKind::dot) walks[i] = e.dot >= 0 && e.dot < static_cast<int>(k.dots.size()) && k.dot_walks_row(e.dot);
    if (e.kind == ExprKind::op)
      for (int a : e.args) walks[i] = walks[i] || (a >= 0 && a < i && walks[a]);
  }
  // One walk over the passes: which loads more than one pass reads, and (keep_values) which
  // row-walking op values a later pass would compute again (kept from the pass that first
  // computes them; the later pass then needs none of their operands).
  auto plan = [&](bool keep_values, std::vector<int>& loads, std::vector<int>& values) {
    std::vector<int> passes_of(k.loads.size(), 0);
    std::vector<char> computed(n, 0), kept(n, 0);
    for (size_t p = 0; p < passes.size(); ++p) {
      std::vector<char> need(n, 0), seen(k.loads.size(), 0);
      for (int r : passes[p])
        if (r >= 0 && r < n) need[r] = 1;
      for (int i = n - 1; i >= 0; --i) {
        if (!need[i] || kept[i]) continue;
        const ExprNode& e = k.expr[i];
        if (keep_values && p > 0 && (e.kind == ExprKind::op || e.kind == ExprKind::dot) && walks[i] && computed[i]) {
          kept[i] = 1;
          continue;
        }
        if (e.kind == ExprKind::load && e.load >= 0 && e.load < static_cast<int>(seen.size())) seen[e.load] = 1;
        if (e.kind == ExprKind::op || e.kind == ExprKind::load)  // a gathered load reads its index
          for (int a : e.args)
            if (a >= 0 && a < i) need[a] = 1;
      }
      for (int i = 0; i < n; ++i) computed[i] = computed[i] || need[i];
      for (size_t l = 0; l < seen.size(); ++l) passes_of[l] += seen[l];
    }
    loads.clear(), values.clear();
    for (size_t l = 0; l < k.loads.size(); ++l)  // a load that does not walk the row is one value per row
      if (k.load_walks_row(static_cast<int>(l)) && passes_of[l] > 1) loads.push_back(static_cast<int>(l));
    for (int i = 0; i < n; ++i)
      if (kept[i]) values.push_back(i);
  };
  const int64_t per_thread = (len + row_group_size(len) - 1) / row_group_size(len);
  std::vector<int> loads, values;
  plan(false, loads, values);
  // An inline contraction (KernelSpec::dots) a later pass would compute again is worth
  // registers even where no load is read twice.
  std::vector<int> dot_loads, dot_values;
  bool dot_kept = false;
  if (loads.empty() && !k.dots.empty()) {
    plan(true, dot_loads, dot_values);
    for (int v : dot_values) dot_kept = dot_kept || walks[v];
  }
  if ((loads.empty() && !dot_kept) || per_thread * static_cast<int64_t>(loads.size()) > kRowRegisterBudget) return;
  k.register_loads = loads;
  k.row_registers = per_thread;
  // Keeping values too (Softmax's exp(x - max), LayerNorm's x - mean) where they still fit.
  plan(true, loads, values);
  if (!values.empty() && per_thread * static_cast<int64_t>(loads.size() + values.size()) <= kRowRegisterBudget)
    k.register_loads = loads, k.register_values = values;
  else if (k.register_loads.empty())
    k.row_registers = 0;  // only an inline contraction's value was worth keeping, and it does not fit
}

void mark_online_softmax(KernelSpec& k) {
  k.online_max = k.online_sum = -1;
  if (k.matmul || k.conv || k.kind == FusionKind::opaque || k.reduce_axes.empty() || k.row_registers > 0) return;
  // FUSOR_ONLINE_SOFTMAX=0: the two-pass statistics, for measuring one against the other.
  static const bool off = [] {
    const char* e = std::getenv("FUSOR_ONLINE_SOFTMAX");
    return e && std::string(e) == "0";
  }();
  if (off) return;
  auto is_op = [&](int e, const char* name, size_t arity) {
    const ExprNode& n = k.expr[e];
    return n.kind == ExprKind::op && n.op && n.op->name == name && n.args.size() == arity;
  };
  for (size_t r0 = 0; r0 < k.reductions.size(); ++r0) {
    const Reduction& mx = k.reductions[r0];
    const bool float_dtype = mx.dtype == DType::f32 || mx.dtype == DType::f64 || mx.dtype == DType::f16 || mx.dtype == DType::bf16;
    if (mx.combiner != Combiner::max || mx.mean || !float_dtype) continue;
    for (size_t r1 = r0 + 1; r1 < k.reductions.size(); ++r1) {
      const Reduction& sm = k.reductions[r1];
      if (sm.combiner != Combiner::sum || sm.mean || sm.dtype != mx.dtype || !is_op(sm.body, "Exp", 1)) continue;
      const ExprNode& ex = k.expr[sm.body];
      const int d = ex.args[0];
      if (d < 0 || !is_op(d, "Sub", 2) || ex.dtype != mx.dtype || k.expr[d].dtype != mx.dtype) continue;
      const ExprNode& sub = k.expr[d];
      const int ref = sub.args[1];
      std::set<std::pair<int, int>> known;
      if (!same_value(k, sub.args[0], mx.body, known) || ref < 0 || k.expr[ref].kind != ExprKind::red_ref || k.expr[ref].red != static_cast<int>(r0))
        continue;
      k.online_max = static_cast<int>(r0);
      k.online_sum = static_cast<int>(r1);
      return;
    }
  }
}

std::optional<std::vector<int>> permuted_reader(const KernelSpec& k, int b, const Shape& space) {
  if (shape_numel(k.space) != shape_numel(space)) return std::nullopt;
  const Shape cs = contiguous_strides(space);
  std::optional<std::vector<int>> found;
  for (auto& l : k.loads) {
    if (l.buffer != b) continue;
    if (l.view.offset != 0 || l.view.shape != k.space) return std::nullopt;
    std::vector<int> inv(space.size(), -1);
    for (size_t i = 0; i < k.space.size(); ++i) {
      if (k.space[i] == 1) continue;
      int match = -1;
      for (size_t j = 0; j < space.size() && match < 0; ++j)
        if (space[j] == k.space[i] && cs[j] == l.view.strides[i] && inv[j] < 0) match = static_cast<int>(j);
      if (match < 0) return std::nullopt;
      inv[match] = static_cast<int>(i);
    }
    for (size_t j = 0; j < space.size(); ++j)
      if (space[j] != 1 && inv[j] < 0) return std::nullopt;
    if (found && *found != inv) return std::nullopt;
    found = inv;
  }
  return found;
}

StridedView over_space(const StridedView& v, const std::vector<int>& inv, const Shape& space) {
  StridedView r;
  r.shape = space;
  r.offset = v.offset;
  r.strides.assign(space.size(), 0);
  for (size_t j = 0; j < space.size(); ++j)
    if (inv[j] >= 0) r.strides[j] = v.strides[inv[j]];
  return r;
}
void absorb_reduction(KernelSpec& k, const KernelSpec& rk, int li) {
  if (k.kind == FusionKind::loop) k.kind = FusionKind::input;
  k.reduce_axes = rk.reduce_axes;
  std::vector<int> load_map(rk.loads.size()), expr_map(rk.expr.size(), -1), red_map(rk.reductions.size(), -1);
  for (size_t j = 0; j < rk.loads.size(); ++j) {
    int found = -1;
    for (size_t q = 0; q < k.loads.size(); ++q)
      if (k.loads[q].buffer == rk.loads[j].buffer && k.loads[q].view.strides == rk.loads[j].view.strides &&
          k.loads[q].view.offset == rk.loads[j].view.offset && !k.loads[q].gathered() && !rk.loads[j].gathered())
        found = static_cast<int>(q);
    if (found < 0) {
      k.loads.push_back(rk.loads[j]);
      found = static_cast<int>(k.loads.size()) - 1;
    }
    load_map[j] = found;
  }
  // Expression nodes of rk are appended after k's (all reductions of rk are copied in order),
  // then k's red_ref for the absorbed value points at the copy of rk's output reduction.
  int out_red = rk.expr[rk.outputs[0].expr].red;
  // Reductions k already computes (same graph value) are shared, not copied.
  for (size_t r = 0; r < rk.reductions.size(); ++r)
    for (size_t q = 0; q < k.reductions.size(); ++q)
      if (rk.reductions[r].value >= 0 && k.reductions[q].value == rk.reductions[r].value) red_map[r] = static_cast<int>(q);
  for (size_t e = 0; e < rk.expr.size(); ++e) {
    ExprNode n = rk.expr[e];
    if (n.kind == ExprKind::load) n.load = load_map[n.load];
    for (auto& a : n.args)
      if (a >= 0) a = expr_map[a];
    if (n.kind == ExprKind::red_ref) {
      if (red_map[n.red] < 0) {
        Reduction r = rk.reductions[n.red];
        r.body = expr_map[r.body];
        k.reductions.push_back(r);
        red_map[n.red] = static_cast<int>(k.reductions.size()) - 1;
      }
      n.red = red_map[n.red];
    }
    k.expr.push_back(n);
    expr_map[e] = static_cast<int>(k.expr.size()) - 1;
  }
  for (size_t r = 0; r < rk.reductions.size(); ++r)
    if (red_map[r] < 0) {
      Reduction x = rk.reductions[r];
      x.body = expr_map[x.body];
      k.reductions.push_back(x);
      red_map[r] = static_cast<int>(k.reductions.size()) - 1;
    }
  int ref = -1;
  for (size_t e = 0; e < k.expr.size(); ++e)
    if (k.expr[e].kind == ExprKind::red_ref && k.expr[e].red == red_map[out_red]) ref = static_cast<int>(e);
  // Replace reads of the load with the reduction value; the load entry stays (unused) to keep ids stable.
  for (auto& n : k.expr)
    for (auto& a : n.args)
      if (a >= 0 && k.expr[a].kind == ExprKind::load && k.expr[a].load == li) a = ref;
  for (auto& o : k.outputs)
    if (o.expr >= 0 && k.expr[o.expr].kind == ExprKind::load && k.expr[o.expr].load == li) o.expr = ref;
  // A reduction whose body is the load itself (ReduceMax of an Unsqueezed ReduceMin): its
  // body is the absorbed value too (broadcast along the row, as the load read it).
  for (auto& r : k.reductions)
    if (r.body >= 0 && k.expr[r.body].kind == ExprKind::load && k.expr[r.body].load == li) r.body = ref;
  for (auto& fo : rk.fused_ops) k.fused_ops.push_back(fo);
  for (auto& fn : rk.fused_nodes) k.fused_nodes.push_back(fn);
  topo_order(k);
}

}  // namespace fusor
