// ONNX Slice geometry (ir/slice_view.h), and a view node applied to a strided view (ir/view.h).
#include "ir/slice_view.h"

#include <algorithm>
#include <string>

#include "ir/op_table.h"
#include "ir/view.h"

namespace fusor {

SliceView slice_view(const Node& n, const Shape& x, std::vector<int64_t> starts, std::vector<int64_t> ends,
                     std::vector<int64_t> axes, std::vector<int64_t> steps) {
  auto bad = [&](const std::string& why) { return Error("shape", n.label() + ": Slice " + why); };
  const int64_t r = static_cast<int64_t>(x.size());
  if (starts.size() != ends.size()) throw bad("starts and ends differ in length");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) throw bad("axes/steps length differs from starts");
  SliceView v;
  v.shape = x;
  v.begin.assign(x.size(), 0);
  v.step.assign(x.size(), 1);
  const Shape cs = contiguous_strides(x);
  v.strides.assign(cs.begin(), cs.end());
  std::vector<bool> seen(x.size(), false);
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t a = normalize_axis(axes[i], r, n.label());
    const int64_t dim = x[a], step = steps[i];
    if (seen[a]) throw bad("repeated axis");
    seen[a] = true;
    if (step == 0) throw bad("step must not be 0");
    v.step[a] = step;
    if (dim == 0) {  // nothing to take (and clamping to [0, dim - 1] would have lo > hi)
      v.shape[a] = 0;
      continue;
    }
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    int64_t count;
    // |step| as unsigned and 1 + (span - 1) / |step|: exact for steps up to INT64_MIN/MAX, where
    // span + step - 1 or -step would overflow.
    const uint64_t mag = step < 0 ? uint64_t{0} - static_cast<uint64_t>(step) : static_cast<uint64_t>(step);
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      count = e > s ? static_cast<int64_t>(1 + static_cast<uint64_t>(e - s - 1) / mag) : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      count = s > e ? static_cast<int64_t>(1 + static_cast<uint64_t>(s - e - 1) / mag) : 0;
    }
    v.shape[a] = count;
    if (count > 0) v.begin[a] = s, v.offset += s * cs[a];
    // With two or more elements |step| < dim, so the product fits; otherwise the stride is unused.
    v.strides[a] = count > 1 ? step * cs[a] : cs[a];
  }
  if (std::any_of(v.shape.begin(), v.shape.end(), [](int64_t d) { return d == 0; })) v.offset = 0;
  return v;
}

BlockWalk depth_space_walk(const Node& n, const Shape& x) {
  const int64_t b = n.attr_i("blocksize", 1);
  const bool crd = n.attr_s("mode", "DCR") == "CRD";
  Shape view;
  std::vector<int64_t> perm;
  if (n.op_type == "DepthToSpace") {
    const int64_t c = x[1] / (b * b);
    view = crd ? Shape{x[0], c, b, b, x[2], x[3]} : Shape{x[0], b, b, c, x[2], x[3]};
    perm = crd ? std::vector<int64_t>{0, 1, 4, 2, 5, 3} : std::vector<int64_t>{0, 3, 4, 1, 5, 2};
  } else {
    view = Shape{x[0], x[1], x[2] / b, b, x[3] / b, b};
    perm = crd ? std::vector<int64_t>{0, 1, 3, 5, 2, 4} : std::vector<int64_t>{0, 3, 5, 1, 2, 4};
  }
  const Shape vs = contiguous_strides(view);
  BlockWalk w;
  for (int64_t p : perm) w.walk.push_back(view[p]), w.strides.push_back(vs[p]);
  return w;
}

std::optional<SliceView> constant_slice_view(const Graph& g, const Node& n, const Shape& x) {
  std::vector<int64_t> starts, ends, axes, steps;
  auto ints = [&](int i) {
    std::vector<int64_t> v;
    if (!n.has_input(i)) return v;
    const Tensor& c = *g.values[n.inputs[i]].constant;
    for (int64_t k = 0; k < c.numel(); ++k) v.push_back(c.get_int(k));
    return v;
  };
  if (n.opset < 10) {
    starts = n.attr_ints("starts"), ends = n.attr_ints("ends"), axes = n.attr_ints("axes");
  } else {
    for (int i = 1; i < 5; ++i)
      if (n.has_input(i) && !g.values[n.inputs[i]].constant) return std::nullopt;
    starts = ints(1), ends = ints(2), axes = ints(3), steps = ints(4);
  }
  return slice_view(n, x, starts, ends, axes, steps);
}

std::optional<StridedView> apply_view_node(const Graph& g, const Node& n, const StridedView& s, const Shape& out) {
  const std::string& t = n.op_type;
  if (t == "Expand") return view_broadcast(s, out);
  if (t == "Transpose") {
    std::vector<int64_t> perm = n.attr_ints("perm");
    if (perm.empty())
      for (int64_t i = static_cast<int64_t>(s.shape.size()) - 1; i >= 0; --i) perm.push_back(i);
    return view_permute(s, perm);
  }
  // Reshape, Flatten, Squeeze, Unsqueeze: the output shape is static, the strides follow.
  if (t != "Slice") return view_reshape(s, out);
  // Slice: start and step per axis from the constant inputs (ir/slice_view.h).
  const std::optional<SliceView> cv = constant_slice_view(g, n, s.shape);
  if (!cv || cv->shape != out) return std::nullopt;
  const SliceView& v = *cv;
  StridedView r = s;
  for (size_t ax = 0; ax < out.size(); ++ax)
    if (v.begin[ax] != 0 || v.step[ax] != 1 || out[ax] != s.shape[ax])
      r = view_slice(r, static_cast<int>(ax), v.begin[ax], v.step[ax], out[ax]);
  return r;
}

}  // namespace fusor
