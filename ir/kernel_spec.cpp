#include <algorithm>
#include <set>

#include "ir/kernel_spec.h"
#include "ir/scalar.h"
#include "ir/view.h"

namespace fusor {

StridedView StridedView::contiguous(const Shape& s) { return {s, contiguous_strides(s), 0}; }

double OperandPrologue::apply(double x, DType xt) const {
  // eval_scalar_typed reads one entry per node input (absent ones included).
  const size_t na = std::max(op.args.size(), op.bound.absent.size());
  std::vector<HostScalar> v(na, HostScalar{0.0});
  std::vector<DType> t(na, DType::f64);
  for (size_t i = 0; i < op.args.size(); ++i) {
    if (op.args[i] < 0) continue;
    const ExprNode& in = inputs[op.args[i]];
    t[i] = in.kind == ExprKind::load ? xt : in.dtype;
    if (in.kind == ExprKind::load) v[i].f = x;
    else if (dtype_is_integral(in.dtype)) v[i].i = in.ivalue;
    else v[i].f = in.value;
  }
  return eval_scalar_typed(*op.op->scalar, op.bound, v.data(), t.data(), op.math, op.dtype).f;
}

bool StridedView::is_contiguous() const {
  if (offset != 0) return false;
  int64_t expect = 1;
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    if (shape[i] == 1) continue;
    if (strides[i] != expect) return false;
    expect *= shape[i];
  }
  return true;
}

const char* fusion_kind_name(FusionKind k) {
  switch (k) {
    case FusionKind::loop: return "loop";
    case FusionKind::input: return "input";
    case FusionKind::output: return "output";
    default: return "opaque";
  }
}

int64_t KernelSpec::rows() const {
  int64_t n = 1;
  for (size_t i = 0; i < space.size(); ++i)
    if (std::find(reduce_axes.begin(), reduce_axes.end(), static_cast<int>(i)) == reduce_axes.end()) n *= space[i];
  return n;
}
int64_t KernelSpec::row_length() const {
  int64_t n = 1;
  for (int a : reduce_axes) n *= space[a];
  return n;
}

bool KernelSpec::load_walks_row(int l) const {
  if (loads[l].gathered() && !reduce_axes.empty()) return true;  // its index may walk the row
  for (int d : reduce_axes)
    if (space[d] > 1 && loads[l].view.strides[d] != 0) return true;
  return false;
}
bool KernelSpec::has_gathered_load() const {
  for (const Load& l : loads)
    if (l.gathered()) return true;
  return false;
}
bool KernelSpec::dot_walks_row(int di) const {
  for (int d : reduce_axes)
    if (space[d] > 1 && (dots[di].a_at.strides[d] != 0 || dots[di].b_at.strides[d] != 0)) return true;
  return false;
}
DType KernelSpec::acc_dtype() const {
  for (const ExprNode& e : expr)
    if (e.kind == ExprKind::acc) return e.dtype;
  return DType::f32;
}

std::vector<int> KernelSpec::input_buffers() const {
  std::set<int> s;
  for (auto& l : loads) s.insert(l.buffer);
  if (matmul) s.insert({matmul->a_buffer, matmul->b_buffer});
  if (matmul && matmul->dequant_b) {
    s.insert(matmul->dequant_b->scale_buffer);
    if (matmul->dequant_b->zp_buffer >= 0) s.insert(matmul->dequant_b->zp_buffer);
  }
  if (conv) s.insert({conv->x_buffer, conv->w_buffer});
  for (auto& d : dots) s.insert({d.mm.a_buffer, d.mm.b_buffer});
  if (row_product) s.insert(row_product->b_buffer);
  for (int b : opaque_inputs)
    if (b >= 0) s.insert(b);
  return {s.begin(), s.end()};
}
std::vector<int> KernelSpec::output_buffers() const {
  std::set<int> s;
  for (auto& o : outputs) s.insert(o.buffer);
  if (row_product) s.insert(row_product->c_buffer);
  for (int b : opaque_outputs)
    if (b >= 0) s.insert(b);
  return {s.begin(), s.end()};
}

bool KernelSpec::reads(int b) const {
  if (b < 0) return false;
  for (auto& l : loads)
    if (l.buffer == b) return true;
  if (matmul && (matmul->a_buffer == b || matmul->b_buffer == b)) return true;
  if (matmul && matmul->dequant_b && (matmul->dequant_b->scale_buffer == b || matmul->dequant_b->zp_buffer == b)) return true;
  if (conv && (conv->x_buffer == b || conv->w_buffer == b)) return true;
  for (auto& d : dots)
    if (d.mm.a_buffer == b || d.mm.b_buffer == b) return true;
  if (row_product && row_product->b_buffer == b) return true;
  return std::find(opaque_inputs.begin(), opaque_inputs.end(), b) != opaque_inputs.end();
}
bool KernelSpec::writes(int b) const {
  if (b < 0) return false;
  for (auto& o : outputs)
    if (o.buffer == b) return true;
  if (row_product && row_product->c_buffer == b) return true;
  return std::find(opaque_outputs.begin(), opaque_outputs.end(), b) != opaque_outputs.end();
}

StridedView view_permute(const StridedView& v, const std::vector<int64_t>& perm) {
  StridedView r;
  r.offset = v.offset;
  for (auto p : perm) {
    r.shape.push_back(v.shape[p]);
    r.strides.push_back(v.strides[p]);
  }
  return r;
}

StridedView view_slice(const StridedView& v, int axis, int64_t start, int64_t step, int64_t count) {
  StridedView r = v;
  r.offset += start * v.strides[axis];
  // A step only matters with two or more elements (then |step| < dim and the product fits);
  // Slice's int64-extreme steps would overflow it.
  r.strides[axis] = count > 1 ? v.strides[axis] * step : v.strides[axis];
  r.shape[axis] = count;
  return r;
}

StridedView view_broadcast(const StridedView& v, const Shape& shape) {
  if (shape.size() < v.shape.size())
    throw Error("fusion", "cannot broadcast " + shape_str(v.shape) + " to " + shape_str(shape));
  StridedView r;
  r.shape = shape;
  r.strides.assign(shape.size(), 0);
  r.offset = v.offset;
  size_t off = shape.size() - v.shape.size();
  for (size_t i = 0; i < v.shape.size(); ++i) {
    if (v.shape[i] == shape[off + i]) r.strides[off + i] = shape[off + i] == 1 ? 0 : v.strides[i];
    else if (v.shape[i] != 1)
      throw Error("fusion", "cannot broadcast " + shape_str(v.shape) + " to " + shape_str(shape));
  }
  return r;
}

std::optional<StridedView> view_reshape(const StridedView& v, const Shape& shape) {
  if (shape_numel(shape) != shape_numel(v.shape)) return std::nullopt;
  StridedView r;
  r.shape = shape;
  r.offset = v.offset;
  r.strides.assign(shape.size(), 0);
  if (shape_numel(shape) == 0) return r;
  // Drop size-1 dims of the source; their strides never matter.
  std::vector<int64_t> od, os;
  for (size_t i = 0; i < v.shape.size(); ++i)
    if (v.shape[i] != 1) od.push_back(v.shape[i]), os.push_back(v.strides[i]);
  size_t oi = 0, oj = 1, ni = 0, nj = 1;
  const size_t on = od.size(), nn = shape.size();
  while (ni < nn && oi < on) {
    int64_t np = shape[ni], op = od[oi];
    while (np != op) {
      if (np < op) {
        if (nj >= nn) return std::nullopt;
        np *= shape[nj++];
      } else {
        if (oj >= on) return std::nullopt;
        op *= od[oj++];
      }
    }
    for (size_t ok = oi; ok + 1 < oj; ++ok)
      if (os[ok] != od[ok + 1] * os[ok + 1]) return std::nullopt;
    r.strides[nj - 1] = os[oj - 1];
    for (size_t nk = nj - 1; nk > ni; --nk) r.strides[nk - 1] = r.strides[nk] * shape[nk];
    ni = nj++;
    oi = oj++;
  }
  // Trailing size-1 dims keep stride 0 (they only ever index 0).
  for (size_t i = 0; i < nn; ++i)
    if (shape[i] == 1) r.strides[i] = 0;
  return r;
}

}  // namespace fusor
