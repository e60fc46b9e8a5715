// ONNX Slice (and DepthToSpace / SpaceToDepth) geometry, computed once for the shape rule and
// reference kernel (ir/ops/shape.cpp), the fused view path (ir/fusion.cpp) and the GPU code
// generators (backends/codegen_opaque_nn.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/graph.h"

namespace fusor {

// A Slice of an input of shape `x` (row-major, contiguous):
//   shape   the output shape;
//   begin   per input axis, the first element taken (0 on axes not sliced or emptied);
//   step    per input axis, the step (1 on axes not sliced; may be negative);
//   offset  the first element's flat index in the input (0 when the output is empty);
//   strides per output axis, the input stride of one output step (so element i of the output
//           is input[offset + sum_a coord_a * strides[a]]).
struct SliceView {
  Shape shape;
  std::vector<int64_t> begin, step;
  int64_t offset = 0;
  std::vector<int64_t> strides;
};

// Per the ONNX Slice spec (opsets 1-13): empty axes mean 0..len(starts)-1, empty steps mean 1;
// negative starts/ends add the dim, then starts/ends clamp to [0, dim] for positive steps and to
// [0, dim-1] / [-1, dim-1] for negative ones. Exact for every int64 value (|step| is taken
// unsigned, so steps near INT64_MIN/MAX do not overflow). Throws Error("shape") naming the node
// when the lists differ in length, an axis repeats or is out of range, or a step is 0.
SliceView slice_view(const Node& n, const Shape& x, std::vector<int64_t> starts, std::vector<int64_t> ends,
                     std::vector<int64_t> axes, std::vector<int64_t> steps);

// slice_view of Slice node n of graph g over an input of shape x, its parameters read from the
// node (opset < 10: attributes; else its inputs): nullopt when a parameter input is not a
// constant of g. Throws as slice_view.
std::optional<SliceView> constant_slice_view(const Graph& g, const Node& n, const Shape& x);

// DepthToSpace / SpaceToDepth of a contiguous [N, C, H, W] input x as one strided walk: output
// element i (row-major over `walk`) is x[sum_d coord_d * strides[d]]. ONNX spec, opset 28 text:
// DepthToSpace DCR views x as [N, b, b, C/b^2, H, W] and walks axes (0, 3, 4, 1, 5, 2), CRD as
// [N, C/b^2, b, b, H, W] walking (0, 1, 4, 2, 5, 3); SpaceToDepth views x as [N, C, H/b, b, W/b, b]
// and walks (0, 3, 5, 1, 2, 4) for DCR, (0, 1, 3, 5, 2, 4) for CRD (its `mode`, opset 28+).
// Shapes are the shape rule's to check (blocksize >= 1, divisibility).
struct BlockWalk {
  Shape walk;
  std::vector<int64_t> strides;
};
BlockWalk depth_space_walk(const Node& n, const Shape& x);

}  // namespace fusor
