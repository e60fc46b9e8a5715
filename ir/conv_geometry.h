// ConvTranspose geometry, computed once for the shape rule and reference kernel
// (ir/ops/nn.cpp), the decomposition into a Conv (ir/decompose_conv.cpp) and the GPU code
// generators' direct kernel (backends/codegen_opaque_nn.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace fusor {

// Per spatial axis i of ConvTranspose node n with input x [N, C, D1..Dnd] and weight
// w [C, M/group, K1..Knd] (1 <= nd <= 3), ONNX operator spec:
//   in, k, s, d  the input size, kernel size, stride and dilation;
//   pb, pe       the begin / end pads: the `pads` attribute, or derived from `output_shape` or
//                auto_pad SAME_UPPER / SAME_LOWER (output = in * stride) from the total padding
//                (full size - output), the odd row at the end for SAME_UPPER, at the start
//                otherwise (the spec); 0 for VALID. An output past the full size (total < 0)
//                has pb = 0 and pe = total < 0, zeros at the end, as onnxruntime (it clamps the
//                total at 0; a negative pb shifted the output by a row);
//   out          the output size, s * (in - 1) + output_padding + (k - 1) * d + 1 - pb - pe.
// Throws Error("shape") naming n for a rank outside 3-5, mismatched ranks, attributes of the
// wrong length, a non-positive kernel / stride / dilation, values past the bounds below
// (kernel, stride, dilation <= 2^20; sizes and pads within 2^40), negative `pads` or a
// non-positive output size.
struct ConvTransposeAxes {
  int nd = 0;
  std::vector<int64_t> in, k, s, d, pb, pe, out;
};
ConvTransposeAxes convtranspose_axes(const Node& n, const Shape& x, const Shape& w);

}  // namespace fusor
