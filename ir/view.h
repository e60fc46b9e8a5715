// Operations on StridedView (ir/kernel_spec.h): the view ops that make Transpose, Slice,
// Expand, Reshape and broadcasting free inside fused kernels.
#pragma once
#include <optional>

#include "ir/kernel_spec.h"

namespace fusor {

StridedView view_permute(const StridedView& v, const std::vector<int64_t>& perm);
// Keeps `count` elements starting at `start` with step `step` (may be negative) along axis.
StridedView view_slice(const StridedView& v, int axis, int64_t start, int64_t step, int64_t count);
// NumPy broadcasting to `shape` (right-aligned; size-1 or new leading dims get stride 0).
// Throws Error("fusion") when the shapes are incompatible.
StridedView view_broadcast(const StridedView& v, const Shape& shape);
// Reshape without copying (NumPy's attempt_nocopy_reshape); nullopt when the strides cannot
// express the new shape (e.g. merging dims of a transposed view).
std::optional<StridedView> view_reshape(const StridedView& v, const Shape& shape);
// A view node n of graph g (Expand, Transpose, Reshape / Flatten / Squeeze / Unsqueeze, or Slice
// whose starts / ends / axes / steps are constants of g) applied to a view s of its input (s's
// shape the input's), giving output shape `out`; nullopt when the strides cannot express it (a
// Slice with run-time bounds, a reshape of a permuted view). Defined in ir/slice_view.cpp.
std::optional<StridedView> apply_view_node(const Graph& g, const Node& n, const StridedView& s, const Shape& out);

}  // namespace fusor
