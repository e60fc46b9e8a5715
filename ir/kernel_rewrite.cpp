// KernelSpec-level rewrites used by the fusion pass (ir/kernel_rewrite.h).
#include "ir/kernel_rewrite.h"

#include <functional>

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
  std::vector<int> remap(k.expr.size(), -1);
  std::vector<ExprNode> e;
  for (int i : order) {
    remap[i] = static_cast<int>(e.size());
    e.push_back(k.expr[i]);
  }
  for (auto& n : e)
    for (auto& a : n.args)
      if (a >= 0) a = remap[a];
  for (auto& r : k.reductions) r.body = remap[r.body];
  for (auto& o : k.outputs) o.expr = remap[o.expr];
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
}  // namespace fusor
