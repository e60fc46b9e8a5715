// TopK (ir/ops/select.cpp) against hand-computed values, and on the fused `cpu` backend and
// through host fallback against `ref` on seeded random inputs.
#include <gtest/gtest.h>

#include <cmath>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

using testing::expect_values;
using testing::ints_of;
using testing::OpCall;
using testing::run_op;
using testing::tensor_of;

void expect_ints(const Tensor& t, const std::vector<int64_t>& want) {
  ASSERT_EQ(t.dtype(), DType::i64);
  ASSERT_EQ(static_cast<size_t>(t.numel()), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(t.get_int(static_cast<int64_t>(i)), want[i]) << "element " << i;
}

TEST(TopK, LargestSortedTiesTakeTheLowerIndex) {
  Tensor x = tensor_of({2, 5}, {3, 1, 3, 7, 1, /**/ -2, 5, 5, 5, 0});
  auto out = run_op({"TopK", {x, ints_of({1}, {3})}, {}, 11, 2});
  ASSERT_EQ(out[0].shape(), (Shape{2, 3}));
  expect_values(out[0], {7, 3, 3, 5, 5, 5});
  expect_ints(out[1], {3, 0, 2, 1, 2, 3});
}

TEST(TopK, SmallestAlongAnAxisThatIsNotLast) {
  // [3, 2]: columns are the slices along axis 0.
  Tensor x = tensor_of({3, 2}, {4, -1, 2, -1, 9, -3});
  auto out = run_op({"TopK", {x, ints_of({1}, {2})}, {{"axis", int64_t{0}}, {"largest", int64_t{0}}}, 11, 2});
  ASSERT_EQ(out[0].shape(), (Shape{2, 2}));
  expect_values(out[0], {2, -3, 4, -1});
  expect_ints(out[1], {1, 2, 0, 0});
}

TEST(TopK, AttributeKBeforeOpset10AndExactIntegers) {
  Tensor x = tensor_of({4}, {1.5, -0.5, 8, 2});
  auto out = run_op({"TopK", {x}, {{"k", int64_t{2}}}, 1, 2});
  expect_values(out[0], {8, 2});
  expect_ints(out[1], {2, 3});
  // uint64 above 2^63 compares unsigned and is copied exactly.
  Tensor u(DType::u64, {3});
  u.set_int(0, 5);
  u.set_int(1, static_cast<int64_t>(0x8000000000000001ULL));
  u.set_int(2, 7);
  auto uo = run_op({"TopK", {u, ints_of({1}, {1})}, {}, 11, 2});
  EXPECT_EQ(static_cast<uint64_t>(uo[0].get_int(0)), 0x8000000000000001ULL);
  expect_ints(uo[1], {1});
}

TEST(TopK, NanIsLargestAndBadKIsAShapeError) {
  Tensor x = tensor_of({4}, {1, NAN, 3, 2});
  auto out = run_op({"TopK", {x, ints_of({1}, {2})}, {}, 11, 2});
  EXPECT_TRUE(std::isnan(out[0].get(0)));
  expect_ints(out[1], {1, 2});
  auto small = run_op({"TopK", {x, ints_of({1}, {2})}, {{"largest", int64_t{0}}}, 11, 2});
  expect_ints(small[1], {0, 3});
  EXPECT_THROW(run_op({"TopK", {x, ints_of({1}, {5})}, {}, 11, 2}), Error);
  EXPECT_THROW(run_op({"TopK", {x, ints_of({1}, {-1})}, {}, 11, 2}), Error);
}

// A top-5 classifier head: logits -> Softmax -> TopK(5); the fused cpu plan and any GPU
// backend (TopK through host fallback) agree with ref on seeded random logits.
TEST(TopK, Top5HeadOnEveryBackendMatchesRef) {
  GraphBuilder b;
  int x = b.input("logits", DType::f32, {4, 100});
  int k = b.constant("k", ints_of({1}, {5}));
  auto tk = b.op_multi("TopK", {b.op("Softmax", {x}, {{"axis", int64_t{-1}}}), k}, {}, 2);
  b.output(tk[0]);
  b.output(tk[1]);
  Graph g = b.build();
  std::vector<Tensor> in{testing::random_tensor(DType::f32, {4, 100}, 5, -4, 4)};
  auto want = Session(g, "ref").run(in);
  for (const std::string& be : backend_names()) {
    if (be == "ref" || make_backend(be)->devices().empty()) continue;
    auto got = Session(g, be).run(in);
    ASSERT_EQ(got.size(), 2u);
    for (int64_t i = 0; i < 20; ++i) {
      EXPECT_NEAR(got[0].get(i), want[0].get(i), 1e-6) << be << " " << i;
      EXPECT_EQ(got[1].get_int(i), want[1].get_int(i)) << be << " " << i;
    }
  }
}


}  // namespace
}  // namespace fusor
