// QuantizeLinear / DequantizeLinear (ir/ops/quant.cpp) against values computed by hand: per
// tensor, per axis, blocked, saturation and round-half-to-even; integers compare exactly.
#include <gtest/gtest.h>

#include "test_util.h"

namespace fusor {
namespace {

using testing::expect_values;
using testing::ints_of;
using testing::run_op;
using testing::tensor_of;

void expect_ints(const Tensor& t, DType dt, const std::vector<int64_t>& want) {
  ASSERT_EQ(t.dtype(), dt);
  ASSERT_EQ(static_cast<size_t>(t.numel()), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(t.get_int(static_cast<int64_t>(i)), want[i]) << "element " << i;
}

TEST(Quant, QuantizePerTensorRoundsHalfToEvenAndSaturates) {
  // x / 0.5 = 1, 5, 5, -1, 600, -7, + 10, saturated to [0, 255]; ties are checked below.
  Tensor x = tensor_of({6}, {0.5, 2.5, 2.5, -0.5, 300, -3.5});
  auto u = run_op({"QuantizeLinear", {x, tensor_of({}, {0.5}), ints_of({}, {10}, DType::u8)}, {}, 13});
  expect_ints(u[0], DType::u8, {11, 15, 15, 9, 255, 3});
  auto half = run_op({"QuantizeLinear", {tensor_of({4}, {2.5, 3.5, -2.5, 0.4}), tensor_of({}, {1.0}), ints_of({}, {0}, DType::i8)}, {}, 13});
  expect_ints(half[0], DType::i8, {2, 4, -2, 0});
  // No zero point: uint8 output, saturating at 0.
  auto nz = run_op({"QuantizeLinear", {tensor_of({2}, {-3, 7}), tensor_of({}, {1.0})}, {}, 13});
  expect_ints(nz[0], DType::u8, {0, 7});
}

TEST(Quant, PerAxisAndBlocked) {
  // x [2, 3], per-axis scale on axis 1.
  Tensor x = tensor_of({2, 3}, {1, 2, 3, 4, 5, 6});
  auto q = run_op({"QuantizeLinear", {x, tensor_of({3}, {1, 2, 4}), ints_of({3}, {0, 1, -1}, DType::i8)}, {{"axis", int64_t{1}}}, 13});
  expect_ints(q[0], DType::i8, {1, 2, 0, 4, 3, 1});  // 1/1, 2/2+1, rint(0.75)-1, 4/1, rint(2.5)+1, rint(1.5)-1
  auto d = run_op({"DequantizeLinear", {ints_of({2, 3}, {1, 2, 0, 4, 4, 1}, DType::i8), tensor_of({3}, {1, 2, 4}),
                                         ints_of({3}, {0, 1, -1}, DType::i8)}, {{"axis", int64_t{1}}}, 13});
  expect_values(d[0], {1, 2, 4, 4, 6, 8});
  // Blocked along axis 1 with block 2: scale [2, 2] covers columns {0,1} and {2}.
  auto b = run_op({"DequantizeLinear", {ints_of({2, 3}, {1, 2, 3, 4, 5, 6}, DType::i16), tensor_of({2, 2}, {0.5, 10, 2, -1})},
                   {{"axis", int64_t{1}}, {"block_size", int64_t{2}}}, 21});
  expect_values(b[0], {0.5, 1, 30, 8, 10, -6});
  // A scale that fits no layout is a shape error.
  EXPECT_THROW(run_op({"DequantizeLinear", {ints_of({2, 3}, {1, 2, 3, 4, 5, 6}, DType::u8), tensor_of({2}, {1, 2})}, {}, 13}), Error);
}

}  // namespace
}  // namespace fusor
