// Shape rules and CPU references for the data-movement and shape ops (ONNX operator spec,
// onnx/defs/tensor/defs.cc, across opsets). Shape-determining operands (Reshape's shape,
// Slice's starts/ends, Tile's repeats, ...) must be compile-time constants: fusor compiles
// static shapes.
//
// Data movement copies raw element bytes (dtype_size), so every dtype, int64 included, moves
// exactly; nothing goes through double except values that are computed (ScatterElements
// reductions, Range, EyeLike). Most copies are one strided-view walk (strided_copy): Transpose,
// Slice, Expand, Split, Tile, DepthToSpace and SpaceToDepth are all index maps of that form.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "ir/op_table.h"
#include "ir/ops/op_helpers.h"
#include "ir/slice_view.h"

namespace fusor {
namespace {

using namespace op_helpers;



template <size_t ES>
void strided_walk(const std::byte* in, std::byte* out, const Shape& shape, int64_t src,
                  const std::vector<int64_t>& st) {
  const int r = static_cast<int>(shape.size());
  const int64_t n = shape_numel(shape);
  std::vector<int64_t> idx(static_cast<size_t>(r), 0);
  for (int64_t o = 0; o < n; ++o) {
    std::memcpy(out + o * ES, in + src * ES, ES);
    for (int d = r - 1; d >= 0; --d) {  // odometer: advance the last dim, carry into earlier ones
      src += st[d];
      if (++idx[d] < shape[d]) break;
      src -= st[d] * shape[d];
      idx[d] = 0;
    }
  }
}

// out (contiguous, numel == prod(shape)) = the view of `in` with element offset `offset` and
// per-dim element strides `st` (0 broadcasts, negative walks backwards), iterated over `shape`.
void strided_copy(const Tensor& in, Tensor& out, const Shape& shape, int64_t offset, const std::vector<int64_t>& st) {
  if (shape_numel(shape) == 0) return;
  switch (in.dtype() == DType::string ? 0 : dtype_size(in.dtype())) {
    case 1:
      strided_walk<1>(in.raw(), out.raw(), shape, offset, st);
      return;
    case 2:
      strided_walk<2>(in.raw(), out.raw(), shape, offset, st);
      return;
    case 4:
      strided_walk<4>(in.raw(), out.raw(), shape, offset, st);
      return;
    case 8:
      strided_walk<8>(in.raw(), out.raw(), shape, offset, st);
      return;
    default:
      break;
  }
  // Strings: same walk over indices.
  const int r = static_cast<int>(shape.size());
  std::vector<int64_t> idx(static_cast<size_t>(r), 0);
  int64_t src = offset;
  for (int64_t o = 0; o < out.numel(); ++o) {
    out.strings[o] = in.strings[src];
    for (int d = r - 1; d >= 0; --d) {
      src += st[d];
      if (++idx[d] < shape[d]) break;
      src -= st[d] * shape[d];
      idx[d] = 0;
    }
  }
}

void copy_all(const Ins& in, Outs& out) { copy_elems(*in[0], 0, out[0], 0, in[0]->numel()); }

// Axes from the attribute (older opsets) or from a constant input (opset >= 13/18 forms).
bool axes_of(InferContext& ctx, int input, std::vector<int64_t>& axes) {
  const Node& n = ctx.node();
  if (n.has_attr("axes")) {
    axes = n.attr_ints("axes");
    return true;
  }
  if (ctx.has_input(input)) {
    axes = ints_of(ctx.require_constant(input));
    return true;
  }
  return false;
}

std::vector<int64_t> normalize_axes(InferContext& ctx, std::vector<int64_t> axes, int64_t rank) {
  for (auto& a : axes) a = normalize_axis(a, rank, ctx.node().label());
  std::vector<int64_t> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) ctx.fail("repeated axis");
  return axes;
}

// Ops with an axis need rank >= 1 (a clearer message than normalize_axis's).
void require_rank1(InferContext& ctx, int i) {
  if (ctx.rank(i) < 1) ctx.fail("input " + std::to_string(i) + " must have rank >= 1");
}

// ---------------------------------------------------------------- Shape / Size

// Shape (opset 15 start/end): the dims of input 0 as int64, start/end clamped to [0, rank].
std::pair<int64_t, int64_t> shape_range(const Node& n, int64_t r) {
  int64_t s = n.attr_i("start", 0), e = n.attr_i("end", r);
  if (s < 0) s += r;
  if (e < 0) e += r;
  s = std::clamp<int64_t>(s, 0, r);
  e = std::clamp<int64_t>(e, 0, r);
  return {s, std::max(s, e)};
}
void shape_infer(InferContext& ctx) {
  auto [s, e] = shape_range(ctx.node(), ctx.rank(0));
  ctx.set_output(0, DType::i64, {e - s});
}
void shape_ref(const Node& n, const Ins& in, Outs& out) {
  auto [s, e] = shape_range(n, in[0]->rank());
  for (int64_t i = s; i < e; ++i) out[0].set_int(i - s, in[0]->shape()[i]);
}
void size_infer(InferContext& ctx) {
  ctx.shape(0);  // Size needs the shape to be known
  ctx.set_output(0, DType::i64, {});
}
void size_ref(const Node&, const Ins& in, Outs& out) { out[0].set_int(0, in[0]->numel()); }

// ---------------------------------------------------------------- Reshape family (views)

// 0 copies the input dim (unless allowzero, then it is a literal 0); one -1 is inferred.
void reshape_infer(InferContext& ctx) {
  const Node& n = ctx.node();
  const Shape& x = ctx.shape(0);
  std::vector<int64_t> spec = ctx.has_input(1) ? ints_of(ctx.require_constant(1)) : n.attr_ints("shape");
  if (!ctx.has_input(1) && !n.has_attr("shape")) ctx.fail("needs a shape input");
  const bool allowzero = n.attr_i("allowzero", 0) != 0;
  Shape out(spec.size());
  int infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i];
    if (d == 0 && !allowzero) {
      if (i >= x.size())
        ctx.fail("shape entry " + std::to_string(i) + " is 0 but the input has rank " + std::to_string(x.size()));
      d = x[i];
    }
    if (d == -1) {
      if (infer_at >= 0) ctx.fail("more than one -1 in shape");
      infer_at = static_cast<int>(i);
      continue;
    }
    if (d < 0) ctx.fail("invalid shape entry " + std::to_string(d));
    out[i] = d;
    if (__builtin_mul_overflow(known, d, &known)) ctx.fail("shape " + shape_str(spec) + " has more elements than int64 can count");
  }
  const int64_t total = shape_numel(x);
  if (infer_at >= 0) {
    if (known == 0 || total % known != 0)
      ctx.fail("cannot infer -1: " + std::to_string(total) + " elements into " + shape_str(spec));
    out[infer_at] = total / known;
  }
  if (shape_numel(out) != total) ctx.fail("cannot reshape " + shape_str(x) + " to " + shape_str(spec));
  ctx.set_output(0, ctx.dtype(0), out);
}

void flatten_infer(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  const int64_t r = static_cast<int64_t>(x.size());
  int64_t axis = ctx.node().attr_i("axis", 1);
  if (axis < -r || axis > r) ctx.fail("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(r));
  if (axis < 0) axis += r;
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= x[i];
  const int64_t total = shape_numel(x);
  ctx.set_output(0, ctx.dtype(0), {outer, outer ? total / outer : shape_numel(Shape(x.begin() + axis, x.end()))});
}

void squeeze_infer(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  std::vector<int64_t> axes;
  std::vector<bool> drop(x.size(), false);
  if (axes_of(ctx, 1, axes)) {
    for (int64_t a : normalize_axes(ctx, axes, static_cast<int64_t>(x.size()))) {
      if (x[a] != 1) ctx.fail("cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(x[a]));
      drop[a] = true;
    }
  } else {
    for (size_t i = 0; i < x.size(); ++i) drop[i] = x[i] == 1;
  }
  Shape out;
  for (size_t i = 0; i < x.size(); ++i)
    if (!drop[i]) out.push_back(x[i]);
  ctx.set_output(0, ctx.dtype(0), out);
}

void unsqueeze_infer(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  std::vector<int64_t> axes;
  if (!axes_of(ctx, 1, axes)) ctx.fail("needs axes");
  const int64_t r = static_cast<int64_t>(x.size() + axes.size());
  std::vector<bool> added(static_cast<size_t>(r), false);
  for (int64_t a : normalize_axes(ctx, axes, r)) added[a] = true;
  Shape out;
  size_t j = 0;
  for (int64_t i = 0; i < r; ++i) out.push_back(added[i] ? 1 : x[j++]);
  ctx.set_output(0, ctx.dtype(0), out);
}

// ---------------------------------------------------------------- Transpose / Expand / Tile

std::vector<int64_t> perm_of(const Node& n, int64_t r) {
  std::vector<int64_t> perm = n.attr_ints("perm");
  if (perm.empty() && r > 0) {
    perm.resize(static_cast<size_t>(r));
    std::iota(perm.rbegin(), perm.rend(), 0);  // default: reverse the dims
  }
  return perm;
}

void transpose_infer(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  std::vector<int64_t> perm = perm_of(ctx.node(), static_cast<int64_t>(x.size()));
  std::vector<bool> seen(x.size(), false);
  if (perm.size() != x.size())
    ctx.fail("perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(x.size()));
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(x.size()) || seen[p]) ctx.fail("perm is not a permutation");
    seen[p] = true;
    out.push_back(x[p]);
  }
  ctx.set_output(0, ctx.dtype(0), out);
}

void transpose_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor& x = *in[0];
  std::vector<int64_t> perm = perm_of(n, x.rank()), st(perm.size());
  Shape cs = contiguous_strides(x.shape());
  for (size_t d = 0; d < perm.size(); ++d) st[d] = cs[perm[d]];
  strided_copy(x, out[0], out[0].shape(), 0, st);
}

void expand_infer(InferContext& ctx) {
  Shape target = ints_of(ctx.require_constant(1));
  ctx.set_output(0, ctx.dtype(0), broadcast_shapes({ctx.shape(0), target}, ctx.node().label()));
}

void expand_ref(const Node&, const Ins& in, Outs& out) {
  strided_copy(*in[0], out[0], out[0].shape(), 0, broadcast_strides(in[0]->shape(), out[0].shape()));
}

void tile_infer(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  const Tensor& rt = ctx.require_constant(1);
  if (rt.shape().size() != 1)  // Tile-13: repeats is 1-D (onnxruntime refuses a scalar too)
    ctx.fail("repeats must be a 1-D tensor, got rank " + std::to_string(rt.shape().size()));
  std::vector<int64_t> reps = ints_of(rt);
  if (reps.size() != x.size())
    ctx.fail("repeats has " + std::to_string(reps.size()) + " entries for rank " + std::to_string(x.size()));
  Shape out;
  for (size_t i = 0; i < x.size(); ++i) {
    if (reps[i] < 0) ctx.fail("negative repeat");
    int64_t d = 0;
    if (__builtin_mul_overflow(x[i], reps[i], &d)) ctx.fail("dim " + std::to_string(i) + " times its repeat overflows int64");
    out.push_back(d);
  }
  ctx.set_output(0, ctx.dtype(0), out);
}

// Output dim i of size r*d is the row-major pair (repeat, j): walk [r0, d0, r1, d1, ...] with
// stride 0 on each repeat dim.
void tile_ref(const Node&, const Ins& in, Outs& out) {
  const Shape& x = in[0]->shape();
  Shape cs = contiguous_strides(x), walk;
  std::vector<int64_t> st;
  for (size_t i = 0; i < x.size(); ++i) {
    walk.push_back(x[i] ? out[0].shape()[i] / x[i] : 0);
    walk.push_back(x[i]);
    st.push_back(0);
    st.push_back(cs[i]);
  }
  strided_copy(*in[0], out[0], walk, 0, st);
}

// ---------------------------------------------------------------- Concat / Split

void concat_infer(InferContext& ctx) {
  require_rank1(ctx, 0);
  const Node& n = ctx.node();
  if (!n.has_attr("axis")) ctx.fail("axis attribute is required");
  Shape out = ctx.shape(0);
  const int64_t axis = normalize_axis(n.attr_i("axis", 0), static_cast<int64_t>(out.size()), n.label());
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    const Shape& s = ctx.shape(i);
    if (ctx.dtype(i) != ctx.dtype(0)) ctx.fail("inputs differ in dtype");
    bool ok = s.size() == out.size();
    for (size_t d = 0; ok && d < s.size(); ++d) ok = static_cast<int64_t>(d) == axis || s[d] == out[d];
    if (!ok) ctx.fail("input " + std::to_string(i) + " " + shape_str(s) + " does not match " + shape_str(ctx.shape(0)));
    out[axis] = shape_add(n, out[axis], s[axis]);
  }
  ctx.set_output(0, ctx.dtype(0), out);
}

void concat_ref(const Node& n, const Ins& in, Outs& out) {
  Tensor& y = out[0];
  const int64_t axis = normalize_axis(n.attr_i("axis", 0), y.rank(), n.label());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= y.shape()[d];
  for (int64_t d = axis + 1; d < y.rank(); ++d) inner *= y.shape()[d];
  const int64_t row = y.shape()[axis] * inner;
  int64_t at = 0;
  for (const Tensor* t : in) {
    if (!t) continue;
    const int64_t chunk = t->shape()[axis] * inner;
    for (int64_t o = 0; o < outer; ++o) copy_elems(*t, o * chunk, y, o * row + at, chunk);
    at += chunk;
  }
}

// Split sizes: 'split' attribute (< 13) or input (>= 13); otherwise num_outputs (opset 18,
// last chunk smaller when uneven) or as many equal parts as there are outputs.
std::vector<int64_t> split_sizes(const Node& n, const Shape& x, const Tensor* split_input, int n_out) {
  auto bad = [&](const std::string& why) { return Error("shape", n.label() + ": " + why); };
  const int64_t axis = normalize_axis(n.attr_i("axis", 0), static_cast<int64_t>(x.size()), n.label());
  const int64_t dim = x[axis];
  std::vector<int64_t> sizes;
  // Split-18: the split input or num_outputs, exactly one of them (the schema's rule).
  if (n.opset >= 18 && n.domain.empty() && (split_input != nullptr) == n.has_attr("num_outputs"))
    throw bad(split_input ? "Split-18 takes the split input or the num_outputs attribute, not both"
                          : "Split-18 needs the split input or the num_outputs attribute");
  if (n.has_attr("split"))
    sizes = n.attr_ints("split");
  else if (split_input)
    sizes = ints_of(*split_input);
  if (!sizes.empty()) {
    if (static_cast<int>(sizes.size()) != n_out)
      throw bad("split has " + std::to_string(sizes.size()) + " sizes for " + std::to_string(n_out) + " outputs");
    int64_t sum = 0;
    for (int64_t s : sizes) {
      if (s < 0) throw bad("negative split size");
      sum = shape_add(n, sum, s);
    }
    if (sum != dim) throw bad("split sizes sum to " + std::to_string(sum) + ", axis has " + std::to_string(dim));
    return sizes;
  }
  const int64_t parts = n.attr_i("num_outputs", n_out);
  if (parts != n_out || parts < 1) throw bad("num_outputs does not match the node's outputs");
  const int64_t chunk = (dim + parts - 1) / parts;
  if (chunk * (parts - 1) > dim)
    throw bad("cannot split " + std::to_string(dim) + " into " + std::to_string(parts) + " parts");
  sizes.assign(static_cast<size_t>(parts), chunk);
  sizes.back() = dim - chunk * (parts - 1);
  return sizes;
}

void split_infer(InferContext& ctx) {
  require_rank1(ctx, 0);
  const Node& n = ctx.node();
  const Shape& x = ctx.shape(0);
  const Tensor* split = ctx.has_input(1) ? &ctx.require_constant(1) : nullptr;
  std::vector<int64_t> sizes = split_sizes(n, x, split, ctx.num_outputs());
  const int64_t axis = normalize_axis(n.attr_i("axis", 0), static_cast<int64_t>(x.size()), n.label());
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    Shape s = x;
    s[axis] = sizes[i];
    ctx.set_output(i, ctx.dtype(0), s);
  }
}

void split_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor& x = *in[0];
  std::vector<int64_t> sizes = split_sizes(n, x.shape(), opt_in(in, 1), static_cast<int>(out.size()));
  const int64_t axis = normalize_axis(n.attr_i("axis", 0), x.rank(), n.label());
  Shape cs = contiguous_strides(x.shape());
  int64_t at = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (has_out(out, i)) strided_copy(x, out[i], out[i].shape(), at * cs[axis], cs);
    at += sizes[i];
  }
}

// ---------------------------------------------------------------- Slice

SliceView slice_view_of(const Node& n, const Shape& x, const Tensor* starts, const Tensor* ends, const Tensor* axes,
                        const Tensor* steps) {
  if (n.has_attr("starts"))  // opset < 10
    return slice_view(n, x, n.attr_ints("starts"), n.attr_ints("ends"), n.attr_ints("axes"), {});
  if (!starts || !ends) throw Error("shape", n.label() + ": needs starts and ends");
  return slice_view(n, x, ints_of(*starts), ints_of(*ends), axes ? ints_of(*axes) : std::vector<int64_t>{},
                    steps ? ints_of(*steps) : std::vector<int64_t>{});
}

void slice_infer(InferContext& ctx) {
  auto c = [&](int i) { return ctx.has_input(i) ? &ctx.require_constant(i) : nullptr; };
  ctx.set_output(0, ctx.dtype(0), slice_view_of(ctx.node(), ctx.shape(0), c(1), c(2), c(3), c(4)).shape);
}

void slice_ref(const Node& n, const Ins& in, Outs& out) {
  SliceView v = slice_view_of(n, in[0]->shape(), opt_in(in, 1), opt_in(in, 2), opt_in(in, 3), opt_in(in, 4));
  strided_copy(*in[0], out[0], v.shape, v.offset, v.strides);
}

// ---------------------------------------------------------------- Gather family

void require_index_dtype(InferContext& ctx, int i) {
  if (ctx.dtype(i) != DType::i64 && ctx.dtype(i) != DType::i32)
    ctx.fail(std::string("indices must be int32 or int64, got ") + dtype_name(ctx.dtype(i)));
}

// An index in [-dim, dim) made non-negative; anything else is an error at run time.
int64_t checked_index(const Node& n, int64_t i, int64_t dim) {
  if (i < -dim || i >= dim)
    ref_fail(
        n, "index " + std::to_string(i) + " out of range [-" + std::to_string(dim) + ", " + std::to_string(dim) + ")");
  return i < 0 ? i + dim : i;
}

void gather_infer(InferContext& ctx) {
  require_rank1(ctx, 0);
  require_index_dtype(ctx, 1);
  const Shape &x = ctx.shape(0), &idx = ctx.shape(1);
  const int64_t axis = normalize_axis(ctx.node().attr_i("axis", 0), static_cast<int64_t>(x.size()), ctx.node().label());
  Shape out(x.begin(), x.begin() + axis);
  out.insert(out.end(), idx.begin(), idx.end());
  out.insert(out.end(), x.begin() + axis + 1, x.end());
  ctx.set_output(0, ctx.dtype(0), out);
}

void gather_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor &x = *in[0], &idx = *in[1];
  const int64_t axis = normalize_axis(n.attr_i("axis", 0), x.rank(), n.label());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[d];
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];
  const int64_t dim = x.shape()[axis], ni = idx.numel();
  std::vector<int64_t> ids(static_cast<size_t>(ni));
  for (int64_t j = 0; j < ni; ++j) ids[j] = checked_index(n, idx.get_int(j), dim);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < ni; ++j) copy_elems(x, (o * dim + ids[j]) * inner, out[0], (o * ni + j) * inner, inner);
}

// GatherElements / ScatterElements address data at the indices' own coordinates off the axis:
// an indices dim past data's there would read or write outside data (ref crashed, red-team
// round 30); onnxruntime refuses it too.
void require_indices_within_data(InferContext& ctx, const Shape& x, const Shape& idx, int64_t axis) {
  for (size_t d = 0; d < idx.size() && d < x.size(); ++d)
    if (static_cast<int64_t>(d) != axis && idx[d] > x[d])
      ctx.fail("indices dim " + std::to_string(d) + " is " + std::to_string(idx[d]) + ", past data's " + std::to_string(x[d]) +
               " (only the axis may be longer)");
  // Every index into an empty axis is out of range; with an empty output the run would skip
  // the node and never read them (onnxruntime refuses it).
  if (axis >= 0 && axis < static_cast<int64_t>(x.size()) && x[axis] == 0 && shape_numel(idx) > 0)
    ctx.fail("has " + std::to_string(shape_numel(idx)) + " indices into axis " + std::to_string(axis) + " of length 0");
}

// GatherND / ScatterND: tuples index data dims [b, b + k); one of length 0 takes no index.
void require_nd_dims_indexable(InferContext& ctx, const Shape& x, const Shape& idx, int64_t b, int64_t k) {
  if (k < 1 || shape_numel(idx) == 0) return;
  for (int64_t j = 0; j < k && b + j < static_cast<int64_t>(x.size()); ++j)
    if (x[static_cast<size_t>(b + j)] == 0)
      ctx.fail("has " + std::to_string(shape_numel(idx) / k) + " index tuples into data dim " + std::to_string(b + j) + " of length 0");
}

void gather_elements_infer(InferContext& ctx) {
  require_rank1(ctx, 0);
  require_index_dtype(ctx, 1);
  const Shape &x = ctx.shape(0), &idx = ctx.shape(1);
  const int64_t axis = normalize_axis(ctx.node().attr_i("axis", 0), static_cast<int64_t>(x.size()), ctx.node().label());
  if (idx.size() != x.size()) ctx.fail("indices rank differs from data rank");
  require_indices_within_data(ctx, x, idx, axis);
  ctx.set_output(0, ctx.dtype(0), idx);
}

// Calls f(out_flat, data_flat) for every element of an indices-shaped tensor, where data_flat is
// the element's own multi-index with the axis coordinate replaced by the index value.
template <class F>
void for_each_element_index(const Node& n, const Shape& data, const Tensor& idx, int64_t axis, F&& f) {
  const Shape& is = idx.shape();
  Shape ds = contiguous_strides(data);
  std::vector<int64_t> pos(is.size(), 0);
  for (int64_t o = 0; o < idx.numel(); ++o) {
    int64_t src = 0;
    for (size_t d = 0; d < is.size(); ++d)
      src += (static_cast<int64_t>(d) == axis ? checked_index(n, idx.get_int(o), data[d]) : pos[d]) * ds[d];
    f(o, src);
    for (int d = static_cast<int>(is.size()) - 1; d >= 0 && ++pos[d] == is[d]; --d) pos[d] = 0;
  }
}

void gather_elements_ref(const Node& n, const Ins& in, Outs& out) {
  const int64_t axis = normalize_axis(n.attr_i("axis", 0), in[0]->rank(), n.label());
  for_each_element_index(n, in[0]->shape(), *in[1], axis,
                         [&](int64_t o, int64_t src) { copy_elems(*in[0], src, out[0], o, 1); });
}

// Combines update u into y[dst] for ScatterElements / ScatterND ('none' copies the element).
void scatter_combine(const std::string& red, const Tensor& upd, int64_t u, Tensor& y, int64_t dst) {
  if (red == "none") return copy_elems(upd, u, y, dst, 1);
  if (upd.dtype() == DType::string) throw Error("ref", "reduction '" + red + "' of strings is not defined (only 'none')");
  if (dtype_is_int(y.dtype())) {  // integers combine exactly
    const int64_t a = y.get_int(dst), b = upd.get_int(u);
    // add/mul wrap through uint64 like elementwise Add/Mul, then to the dtype's width (set_int
    // of an 8/16-bit value out of range saturated: int8 100 + 100 gave 127, not -56); uint64
    // max/min compare unsigned.
    const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    const bool u64 = y.dtype() == DType::u64, a_less = u64 ? ua < ub : a < b;
    y.set_int(dst, wrap_int(red == "add"   ? static_cast<int64_t>(ua + ub)
                            : red == "mul" ? static_cast<int64_t>(ua * ub)
                            : red == "max" ? (a_less ? b : a)
                                           : (a_less ? a : b),
                            y.dtype()));
  } else {
    const double a = y.get(dst), b = upd.get(u);
    // max / min as the Max / Min ops compute them: NaN in either operand gives NaN (std::max kept
    // the first operand: a NaN update was dropped; red-team round 14).
    const bool nan = std::isnan(a) || std::isnan(b);
    y.set(dst, red == "add"   ? a + b
               : red == "mul" ? a * b
               : nan          ? std::numeric_limits<double>::quiet_NaN()
               : red == "max" ? (a > b ? a : b)
                              : (a < b ? a : b));
  }
}

std::string scatter_reduction(const Node& n) {
  const std::string red = n.attr_s("reduction", "none");
  if (red != "none" && red != "add" && red != "mul" && red != "max" && red != "min")
    ref_fail(n, "unknown reduction '" + red + "'");
  return red;
}

// A reduction other than 'none' combines values: not defined on strings (refused at load).
void refuse_string_reduction(InferContext& ctx) {
  const std::string red = ctx.node().attr_s("reduction", "none");
  if (red != "none" && ctx.dtype(0) == DType::string) ctx.fail("reduction '" + red + "' of strings is not defined (only 'none')");
}

void scatter_elements_infer(InferContext& ctx) {
  refuse_string_reduction(ctx);
  require_rank1(ctx, 0);
  require_index_dtype(ctx, 1);
  const Shape &x = ctx.shape(0), &idx = ctx.shape(1);
  const int64_t axis = normalize_axis(ctx.node().attr_i("axis", 0), static_cast<int64_t>(x.size()), ctx.node().label());
  if (idx != ctx.shape(2) || idx.size() != x.size())
    ctx.fail("indices and updates must match in shape and data in rank");
  require_indices_within_data(ctx, x, idx, axis);
  if (ctx.dtype(2) != ctx.dtype(0)) ctx.fail("updates dtype differs from data");
  ctx.set_output(0, ctx.dtype(0), x);
}

// ScatterElements (opset 16/18 reduction: none, add, mul, max, min).
void scatter_elements_ref(const Node& n, const Ins& in, Outs& out) {
  copy_all(in, out);
  const std::string red = scatter_reduction(n);
  const int64_t axis = normalize_axis(n.attr_i("axis", 0), in[0]->rank(), n.label());
  for_each_element_index(n, in[0]->shape(), *in[1], axis,
                         [&](int64_t u, int64_t dst) { scatter_combine(red, *in[2], u, out[0], dst); });
}

// GatherND (batch_dims b): the last indices dim k addresses data dims [b, b+k); output =
// indices.shape[:-1] + data.shape[b+k:].
void gather_nd_infer(InferContext& ctx) {
  require_index_dtype(ctx, 1);
  const Shape &x = ctx.shape(0), &idx = ctx.shape(1);
  const int64_t b = ctx.node().attr_i("batch_dims", 0), r = static_cast<int64_t>(x.size()),
                q = static_cast<int64_t>(idx.size());
  if (q < 1 || b < 0 || b >= q || b >= r) ctx.fail("batch_dims must be below the ranks of data and indices");
  const int64_t k = idx.back();
  if (k < 1 || k > r - b) ctx.fail("indices' last dim " + std::to_string(k) + " exceeds data rank - batch_dims");
  if (!std::equal(x.begin(), x.begin() + b, idx.begin())) ctx.fail("batch dims of data and indices differ");
  require_nd_dims_indexable(ctx, x, idx, b, k);
  Shape out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), x.begin() + b + k, x.end());
  ctx.set_output(0, ctx.dtype(0), out);
}

// Element offset in data (relative to its batch) of index tuple t.
int64_t nd_offset(const Node& n, const Tensor& idx, int64_t t, int64_t k, const Shape& x, const Shape& xs, int64_t b) {
  int64_t off = 0;
  for (int64_t j = 0; j < k; ++j) off += checked_index(n, idx.get_int(t * k + j), x[b + j]) * xs[b + j];
  return off;
}

void gather_nd_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor &x = *in[0], &idx = *in[1];
  const int64_t b = n.attr_i("batch_dims", 0), k = idx.shape().back();
  const Shape& xd = x.shape();
  Shape xs = contiguous_strides(xd);
  int64_t batches = 1, inner = 1;
  for (int64_t d = 0; d < b; ++d) batches *= xd[d];
  for (size_t d = static_cast<size_t>(b + k); d < xd.size(); ++d) inner *= xd[d];
  const int64_t tuples = batches ? idx.numel() / k / batches : 0, batch_size = b ? xs[b - 1] : x.numel();
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t t = 0; t < tuples; ++t) {
      const int64_t ti = bi * tuples + t;
      copy_elems(x, bi * batch_size + nd_offset(n, idx, ti, k, xd, xs, b), out[0], ti * inner, inner);
    }
}

void scatter_nd_infer(InferContext& ctx) {
  refuse_string_reduction(ctx);
  require_index_dtype(ctx, 1);
  const Shape &x = ctx.shape(0), &idx = ctx.shape(1), &upd = ctx.shape(2);
  if (idx.empty() || idx.back() < 1 || idx.back() > static_cast<int64_t>(x.size()))
    ctx.fail("indices' last dim must be in [1, data rank]");
  Shape want(idx.begin(), idx.end() - 1);
  want.insert(want.end(), x.begin() + idx.back(), x.end());
  if (upd != want) ctx.fail("updates " + shape_str(upd) + " must have shape " + shape_str(want));
  require_nd_dims_indexable(ctx, x, idx, 0, idx.back());
  if (ctx.dtype(2) != ctx.dtype(0)) ctx.fail("updates dtype differs from data");
  ctx.set_output(0, ctx.dtype(0), x);
}

// ScatterND (opset 16/18 reduction): each index tuple addresses a slice of data; updates are
// applied in order, so duplicate indices follow the last write (none) or combine.
void scatter_nd_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor &x = *in[0], &idx = *in[1], &upd = *in[2];
  copy_all(in, out);
  const std::string red = scatter_reduction(n);
  const int64_t k = idx.shape().back(), tuples = idx.numel() / k;
  Shape xs = contiguous_strides(x.shape());
  const int64_t inner = k < x.rank() ? xs[k - 1] : 1;
  for (int64_t t = 0; t < tuples; ++t) {
    const int64_t base = nd_offset(n, idx, t, k, x.shape(), xs, 0);
    for (int64_t e = 0; e < inner; ++e) scatter_combine(red, upd, t * inner + e, out[0], base + e);
  }
}

// ---------------------------------------------------------------- Pad

struct PadSpec {
  std::vector<int64_t> begin, end;  // per dim, may be negative (crop)
  std::string mode;
};

PadSpec pad_spec(const Node& n, const Shape& x, const Tensor* pads_in, const Tensor* axes_in) {
  auto bad = [&](const std::string& why) { return Error("shape", n.label() + ": " + why); };
  const int64_t r = static_cast<int64_t>(x.size());
  std::vector<int64_t> pads = pads_in ? ints_of(*pads_in) : n.attr_ints(n.has_attr("pads") ? "pads" : "paddings");
  std::vector<int64_t> axes;
  if (axes_in)
    axes = ints_of(*axes_in);
  else
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  if (pads.size() != 2 * axes.size())
    throw bad("pads has " + std::to_string(pads.size()) + " values for " + std::to_string(axes.size()) + " axes");
  for (int64_t v : pads)  // a pad past the largest dim cannot give a valid shape; bounded, o - begin cannot overflow
    if (v > kMaxShapeElements || v < -kMaxShapeElements) throw bad("pads value " + std::to_string(v) + " is beyond 2^56");
  PadSpec p;
  p.begin.assign(static_cast<size_t>(r), 0);
  p.end.assign(static_cast<size_t>(r), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = normalize_axis(axes[i], r, n.label());
    p.begin[a] = pads[i];
    p.end[a] = pads[axes.size() + i];
    if (shape_add(n, shape_add(n, x[a], p.begin[a]), p.end[a]) < 0) throw bad("pads crop axis " + std::to_string(a) + " below zero");
  }
  p.mode = n.attr_s("mode", "constant");
  if (p.mode != "constant" && p.mode != "reflect" && p.mode != "edge" && p.mode != "wrap")
    throw bad("unknown mode '" + p.mode + "'");
  return p;
}

void pad_infer(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  const Tensor* pads = ctx.has_input(1) ? &ctx.require_constant(1) : nullptr;
  const Tensor* axes = ctx.has_input(3) ? &ctx.require_constant(3) : nullptr;
  PadSpec p = pad_spec(ctx.node(), x, pads, axes);
  Shape out = x;
  for (size_t d = 0; d < x.size(); ++d) {
    out[d] = shape_add(ctx.node(), shape_add(ctx.node(), out[d], p.begin[d]), p.end[d]);
    // The negative pads crop first (onnxruntime's order), so the other side pads what is left.
    const int64_t kept = x[d] + std::min<int64_t>(p.begin[d], 0) + std::min<int64_t>(p.end[d], 0);
    if (p.mode != "constant" && kept <= 0 && out[d] > 0)
      ctx.fail("mode '" + p.mode + "' cannot pad axis " + std::to_string(d) + ": it is empty" + (x[d] > 0 ? " after its negative pads" : ""));
  }
  ctx.set_output(0, ctx.dtype(0), out);
}

// Each output coordinate maps per dim to an input coordinate or, in constant mode, to -1 (the
// pad value): reflect mirrors without repeating the edge, edge clamps, wrap is periodic. Negative
// pads crop first, and the other side's pad reads what is left, [lo, hi) (as onnxruntime; the
// spec does not order them; red-team round 14: wrap over the uncropped axis differed).
void pad_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor& x = *in[0];
  Tensor& y = out[0];
  PadSpec p = pad_spec(n, x.shape(), opt_in(in, 1), opt_in(in, 3));
  const int r = x.rank();
  std::vector<std::vector<int64_t>> src(static_cast<size_t>(r));
  for (int d = 0; d < r; ++d) {
    const int64_t lo = std::max<int64_t>(-p.begin[d], 0), hi = x.shape()[d] - std::max<int64_t>(-p.end[d], 0), kept = hi - lo;
    for (int64_t o = 0; o < y.shape()[d]; ++o) {
      int64_t i = o - p.begin[d];
      if (i < lo || i >= hi) {
        if (p.mode == "constant")
          i = -1;
        else if (p.mode == "edge")
          i = std::clamp<int64_t>(i, lo, hi - 1);
        else if (p.mode == "wrap")
          i = lo + (((i - lo) % kept) + kept) % kept;
        else if (kept == 1)
          i = lo;
        else {
          const int64_t period = 2 * (kept - 1);
          int64_t j = (((i - lo) % period) + period) % period;
          if (j >= kept) j = period - j;
          i = lo + j;
        }
      }
      src[d].push_back(i);
    }
  }
  // The pad value as one element of the output dtype (ints stay exact).
  Tensor value(x.dtype() == DType::string ? DType::f32 : x.dtype(), {});
  const Tensor* cv = opt_in(in, 2);
  if (x.dtype() != DType::string) {
    if (cv && cv->numel() > 0) {
      if (dtype_is_int(x.dtype()))
        value.set_int(0, cv->get_int(0));
      else
        value.set(0, cv->get(0));
    } else {
      value.set(0, n.attr_f("value", 0.0));
    }
  }
  Shape cs = contiguous_strides(x.shape());
  const size_t es = dtype_size(x.dtype());
  std::vector<int64_t> pos(static_cast<size_t>(r), 0);
  for (int64_t o = 0; o < y.numel(); ++o) {
    int64_t s = 0;
    bool pad = false;
    for (int d = 0; d < r; ++d) {
      const int64_t i = src[d][pos[d]];
      if (i < 0) pad = true;
      s += i * cs[d];
    }
    if (x.dtype() == DType::string)
      y.strings[o] = pad ? std::string() : x.strings[s];
    else
      std::memcpy(y.raw() + o * es, pad ? value.raw() : x.raw() + s * es, es);
    for (int d = r - 1; d >= 0 && ++pos[d] == y.shape()[d]; --d) pos[d] = 0;
  }
}

// ---------------------------------------------------------------- generators

// ConstantOfShape: 'value' is a one-element tensor (default float32 0).
void constant_of_shape_infer(InferContext& ctx) {
  Shape s = ints_of(ctx.require_constant(0));
  for (int64_t d : s)
    if (d < 0) ctx.fail("negative dim in shape " + shape_str(s));
  const Tensor* v = ctx.node().attr_t("value");
  if (v && v->numel() != 1) ctx.fail("value must hold exactly one element");
  ctx.set_output(0, v ? v->dtype() : DType::f32, s);
}

void constant_of_shape_ref(const Node& n, const Ins&, Outs& out) {
  const Tensor* v = n.attr_t("value");
  if (!v) return out[0].fill(0.0);
  for (int64_t i = 0; i < out[0].numel(); ++i) copy_elems(*v, 0, out[0], i, 1);
}

// Range: n = max(ceil((limit - start) / delta), 0); integer dtypes computed exactly.
// Exact for int64 extremes (the span is computed in 128 bits); a length that is not finite or
// does not fit a shape (Range(0, inf), NaN) is an error rather than undefined behaviour.
int64_t range_count(const Tensor& start, const Tensor& limit, const Tensor& delta, const std::string& label) {
  constexpr int64_t kMax = int64_t{1} << 56;  // the bound shape inference puts on every value
  if (dtype_is_int(start.dtype())) {
    const int64_t s = start.get_int(0), l = limit.get_int(0), d = delta.get_int(0);
    if (d == 0) throw Error("shape", label + ": delta must not be 0");
    const __int128 span = static_cast<__int128>(l) - s;
    if ((span > 0) != (d > 0) || span == 0) return 0;
    const __int128 n = d > 0 ? (span + d - 1) / d : (span + d + 1) / d;
    if (n > kMax) throw Error("shape", label + ": Range of " + std::to_string(static_cast<double>(n)) + " elements is too large");
    return static_cast<int64_t>(n);
  }
  const double s = start.get(0), l = limit.get(0), d = delta.get(0);
  if (d == 0) throw Error("shape", label + ": delta must not be 0");
  const double q = std::ceil((l - s) / d);
  if (std::isnan(q) || q >= static_cast<double>(kMax))
    throw Error("shape", label + ": Range(" + std::to_string(s) + ", " + std::to_string(l) + ", " + std::to_string(d) +
                             ") has no finite length that fits a tensor (ceil((limit - start) / delta) = " + std::to_string(q) + ")");
  return q <= 0 ? 0 : static_cast<int64_t>(q);  // -inf and negative spans are empty
}

void range_infer(InferContext& ctx) {
  const Tensor &s = ctx.require_constant(0), &l = ctx.require_constant(1), &d = ctx.require_constant(2);
  if (s.numel() != 1 || l.numel() != 1 || d.numel() != 1) ctx.fail("start, limit and delta must be scalars");
  if (ctx.dtype(1) != ctx.dtype(0) || ctx.dtype(2) != ctx.dtype(0)) ctx.fail("start, limit and delta differ in dtype");
  ctx.set_output(0, ctx.dtype(0), {range_count(s, l, d, ctx.node().label())});
}

void range_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor &s = *in[0], &d = *in[2];
  Tensor& y = out[0];
  for (int64_t i = 0; i < y.numel(); ++i) {
    if (dtype_is_int(s.dtype()))  // wrap-around arithmetic: every element itself lies in [start, limit)
      y.set_int(i, static_cast<int64_t>(static_cast<uint64_t>(s.get_int(0)) +
                                        static_cast<uint64_t>(i) * static_cast<uint64_t>(d.get_int(0))));
    else
      y.set(i, s.get(0) + static_cast<double>(i) * d.get(0));
  }
}

void trilu_infer(InferContext& ctx) {
  if (ctx.rank(0) < 2) ctx.fail("input must have rank >= 2");
  if (ctx.has_input(1)) {  // k: an int64 scalar (a 1-element [1] is accepted, as onnxruntime does)
    if (ctx.dtype(1) != DType::i64) ctx.fail(std::string("k must be int64, got ") + dtype_name(ctx.dtype(1)));
    if (shape_numel(ctx.shape(1)) != 1 || ctx.rank(1) > 1) ctx.fail("k must be a scalar, got shape " + shape_str(ctx.shape(1)));
  }
  ctx.set_output(0, ctx.dtype(0), ctx.shape(0));
}

// upper=1 keeps j - i >= k, upper=0 keeps j - i <= k, over the last two dims; the rest is zero.
void trilu_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor& x = *in[0];
  Tensor& y = out[0];
  const Tensor* kt = opt_in(in, 1);
  const int64_t k = kt && kt->numel() ? kt->get_int(0) : 0;
  const bool upper = n.attr_i("upper", 1) != 0;
  const int64_t R = x.shape()[x.rank() - 2], C = x.shape()[x.rank() - 1], mats = R * C != 0 ? x.numel() / (R * C) : 0;
  copy_all(in, out);
  const size_t es = dtype_size(x.dtype());
  for (int64_t m = 0; m < mats; ++m)
    for (int64_t i = 0; i < R; ++i)
      for (int64_t j = 0; j < C; ++j)
        if (upper ? j - i < k : j - i > k) {
          const int64_t e = (m * R + i) * C + j;
          if (x.dtype() == DType::string)
            y.strings[e].clear();
          else
            std::memset(y.raw() + e * es, 0, es);
        }
}

void eye_like_infer(InferContext& ctx) {
  if (ctx.rank(0) != 2) ctx.fail("input must be 2-D, got " + shape_str(ctx.shape(0)));
  const Node& n = ctx.node();
  DType t = n.has_attr("dtype") ? dtype_from_onnx(static_cast<int>(n.attr_i("dtype", 0))) : ctx.dtype(0);
  if (t == DType::undefined || t == DType::string) ctx.fail("unsupported dtype");
  ctx.set_output(0, t, ctx.shape(0));
}

void eye_like_ref(const Node& n, const Ins&, Outs& out) {
  Tensor& y = out[0];
  const int64_t R = y.shape()[0], C = y.shape()[1], k = n.attr_i("k", 0);
  y.fill(0.0);
  if (k <= -R || k >= C) return;  // the diagonal misses the matrix (and i + k could overflow)
  for (int64_t i = 0; i < R; ++i)
    if (i + k >= 0 && i + k < C) y.set(i * C + i + k, 1.0);
}

// OneHot: values = [off, on]; the new axis of size depth goes at 'axis' (default -1, last).
void one_hot_infer(InferContext& ctx) {
  const Shape& idx = ctx.shape(0);
  const Tensor& depth = ctx.require_constant(1);
  if (depth.numel() != 1) ctx.fail("depth must be a scalar");
  const int64_t d = saturate_int64(depth.get(0));  // float depths are allowed, and may be huge or NaN
  if (d < 1) ctx.fail("depth must be positive");
  if (shape_numel(ctx.shape(2)) != 2) ctx.fail("values must hold [off, on]");
  const int64_t r = static_cast<int64_t>(idx.size()) + 1;
  const int64_t axis = normalize_axis(ctx.node().attr_i("axis", -1), r, ctx.node().label());
  Shape out = idx;
  out.insert(out.begin() + axis, d);
  ctx.set_output(0, ctx.dtype(2), out);
}

void one_hot_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor &idx = *in[0], &values = *in[2];
  Tensor& y = out[0];
  const int64_t axis = normalize_axis(n.attr_i("axis", -1), y.rank(), n.label()), depth = y.shape()[axis];
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < y.rank(); ++d) inner *= y.shape()[d];
  for (int64_t i = 0; i < y.numel(); ++i) copy_elems(values, 0, y, i, 1);
  for (int64_t i = 0; i < idx.numel(); ++i) {
    int64_t v = saturate_int64(idx.get(i), INT64_MIN);  // indices may be float in ONNX (NaN: out of range)
    if (v < 0) v += depth;
    if (v < 0 || v >= depth) continue;  // out of range: the row stays all 'off'
    const int64_t outer = i / inner, rest = i % inner;
    copy_elems(values, 1, y, (outer * depth + v) * inner + rest, 1);
  }
}

// ---------------------------------------------------------------- DepthToSpace / SpaceToDepth

// mode: DCR or CRD (DepthToSpace; SpaceToDepth from opset 28, where the schema check admits it).
void check_block_mode(InferContext& ctx) {
  const std::string mode = ctx.node().attr_s("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") ctx.fail("mode must be 'DCR' or 'CRD', got '" + printable(mode) + "'");
}

void depth_to_space_infer(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  const int64_t b = ctx.node().attr_i("blocksize", 0);
  if (x.size() != 4) ctx.fail("input must be 4-D (N, C, H, W)");
  if (b < 1) ctx.fail("blocksize must be positive");
  check_block_mode(ctx);
  const int64_t bb = shape_mul(ctx.node(), b, b);
  if (x[1] % bb != 0) ctx.fail("channels " + std::to_string(x[1]) + " not divisible by blocksize^2");
  ctx.set_output(0, ctx.dtype(0), {x[0], x[1] / bb, shape_mul(ctx.node(), x[2], b), shape_mul(ctx.node(), x[3], b)});
}

void space_to_depth_infer(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  const int64_t b = ctx.node().attr_i("blocksize", 0);
  if (x.size() != 4) ctx.fail("input must be 4-D (N, C, H, W)");
  if (b < 1 || x[2] % b != 0 || x[3] % b != 0) ctx.fail("H and W must be divisible by blocksize");
  check_block_mode(ctx);
  const int64_t c = shape_mul(ctx.node(), shape_mul(ctx.node(), x[1], b), b);
  ctx.set_output(0, ctx.dtype(0), {x[0], c, x[2] / b, x[3] / b});
}

// Both ops, both modes: one strided walk of x (ir/slice_view.h depth_space_walk).
void depth_space_ref(const Node& n, const Ins& in, Outs& out) {
  const BlockWalk w = depth_space_walk(n, in[0]->shape());
  strided_copy(*in[0], out[0], w.walk, 0, w.strides);
}

// One table entry; a helper rather than designated initializers, which -Wextra flags for the
// optional members left out.
OpDef op(std::string name, int min_in, int max_in, InferFn infer, ReferenceFn ref, bool view = false, int max_out = 1) {
  OpDef d;
  d.name = std::move(name);
  d.min_inputs = min_in, d.max_inputs = max_in, d.min_outputs = 1, d.max_outputs = max_out;
  d.infer = std::move(infer);
  d.reference = std::move(ref);
  d.is_view = view;
  return d;
}

void copy_ref(const Node&, const Ins& in, Outs& out) { copy_all(in, out); }

// The data moves copy strings by value (copy_elems, strided_copy): marked OpDef::strings.
OpDef moves_strings(OpDef d) {
  d.strings = true;
  return d;
}

constexpr int kMany = 1 << 20;  // variadic arity

}  // namespace

void register_shape_ops() {
  register_op(moves_strings(op("Shape", 1, 1, shape_infer, shape_ref)));
  register_op(moves_strings(op("Size", 1, 1, size_infer, size_ref)));
  register_op(moves_strings(op("Reshape", 1, 2, reshape_infer, copy_ref, true)));
  register_op(moves_strings(op("Flatten", 1, 1, flatten_infer, copy_ref, true)));
  register_op(moves_strings(op("Squeeze", 1, 2, squeeze_infer, copy_ref, true)));
  register_op(moves_strings(op("Unsqueeze", 1, 2, unsqueeze_infer, copy_ref, true)));
  register_op(moves_strings(op("Transpose", 1, 1, transpose_infer, transpose_ref, true)));
  register_op(moves_strings(op("Expand", 2, 2, expand_infer, expand_ref, true)));
  register_op(moves_strings(op("Slice", 1, 5, slice_infer, slice_ref, true)));
  register_op(moves_strings(never_raising(op("Tile", 2, 2, tile_infer, tile_ref))));
  register_op(moves_strings(never_raising(op("Concat", 1, kMany, concat_infer, concat_ref))));
  {
    OpDef split = moves_strings(never_raising(op("Split", 1, 2, split_infer, split_ref, false, kMany)));
    split.optional_first_output = true;  // variadic outputs: an unused piece may be omitted
    register_op(std::move(split));
  }
  register_op(moves_strings(op("Gather", 2, 2, gather_infer, gather_ref)));
  register_op(moves_strings(op("GatherElements", 2, 2, gather_elements_infer, gather_elements_ref)));
  register_op(moves_strings(op("ScatterElements", 3, 3, scatter_elements_infer, scatter_elements_ref)));
  register_op(moves_strings(op("Scatter", 3, 3, scatter_elements_infer, scatter_elements_ref)));  // opset 9 name, same semantics
  register_op(moves_strings(op("GatherND", 2, 2, gather_nd_infer, gather_nd_ref)));
  register_op(moves_strings(op("ScatterND", 3, 3, scatter_nd_infer, scatter_nd_ref)));
  register_op(never_raising(op("Pad", 1, 4, pad_infer, pad_ref)));
  register_op(op("ConstantOfShape", 1, 1, constant_of_shape_infer, constant_of_shape_ref));
  register_op(op("Range", 3, 3, range_infer, range_ref));
  register_op(op("Trilu", 1, 2, trilu_infer, trilu_ref));
  register_op(op("EyeLike", 1, 1, eye_like_infer, eye_like_ref));
  register_op(op("OneHot", 3, 3, one_hot_infer, one_hot_ref));
  register_op(op("DepthToSpace", 1, 1, depth_to_space_infer, depth_space_ref));
  register_op(op("SpaceToDepth", 1, 1, space_to_depth_infer, depth_space_ref));
}

}  // namespace fusor
