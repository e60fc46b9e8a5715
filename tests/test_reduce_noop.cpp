// Reduce* with noop_with_empty_axes=1 and empty or absent axes (opset 18; ReduceSum from 13):
// nothing is reduced, but the op's element-wise part still applies (ReduceL1 -> |x|,
// ReduceSumSquare -> x*x, ...), identically on ref, cpu and vulkan (lavapipe in CI).
#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "ir/passes.h"
#include "test_util.h"

namespace fusor {
namespace {

using testing::ints_of;
using testing::tensor_of;

// The backends to check; vulkan only where it is built and sees a device.
std::vector<std::string> backends_here() {
  std::vector<std::string> out = {"ref", "cpu"};
  auto names = backend_names();
  if (std::find(names.begin(), names.end(), "vulkan") != names.end() && !make_backend("vulkan")->devices().empty())
    out.push_back("vulkan");
  else
    std::printf("vulkan not checked: not built in or no device\n");
  return out;
}

enum class Axes { absent, empty, some };

// y = op(x[, axes]) at opset 18 with the given attributes; x is a graph input.
Graph reduce_graph(const std::string& op, const Tensor& x, Axes axes, int64_t noop, int64_t keepdims = 1) {
  GraphBuilder b("reduce", 18);
  int xi = b.input("x", x.dtype(), x.shape());
  std::vector<int> in = {xi};
  if (axes == Axes::empty) in.push_back(b.constant("axes", ints_of({0}, {})));
  if (axes == Axes::some) in.push_back(b.constant("axes", ints_of({1}, {1})));
  b.output(b.op(op, in, {{"noop_with_empty_axes", noop}, {"keepdims", keepdims}}));
  Graph g = b.build();
  make_static(g, {});
  return g;
}

// Runs g on every backend (outputs poisoned by the backends' own contract) and checks the one
// output against `want`: same shape, values within `ulps` float32 ulps (0: bit for bit).
void expect_everywhere(const Graph& g, const Tensor& x, const Tensor& want, int64_t ulps, const std::string& what) {
  for (const auto& be : backends_here()) {
    SCOPED_TRACE(what + " on " + be);
    std::vector<Tensor> got;
    try {
      got = make_backend(be)->compile(g, {})->run({x});
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    ASSERT_EQ(got.size(), 1u);
    ASSERT_EQ(got[0].shape(), want.shape());
    ASSERT_EQ(got[0].dtype(), want.dtype());
    for (int64_t i = 0; i < want.numel(); ++i) {
      if (ulps == 0)
        EXPECT_EQ(got[0].data<uint32_t>()[i], want.data<uint32_t>()[i])
            << "element " << i << ": got " << got[0].get(i) << ", expected " << want.get(i);
      else
        EXPECT_LE(ulp_distance(DType::f32, got[0].get(i), want.get(i)), ulps)
            << "element " << i << ": got " << got[0].get(i) << ", expected " << want.get(i);
    }
  }
}

const Tensor kX = tensor_of({2, 2}, {-1.5, 2, 3, -0.5});

TEST(ReduceNoop, L1WithEmptyAxesIsAbs) {
  expect_everywhere(reduce_graph("ReduceL1", kX, Axes::empty, 1), kX, tensor_of({2, 2}, {1.5, 2, 3, 0.5}), 0,
                    "ReduceL1 empty axes");
}

TEST(ReduceNoop, SumSquareWithAbsentAxesKeepsTheShape) {
  expect_everywhere(reduce_graph("ReduceSumSquare", kX, Axes::absent, 1), kX,
                    tensor_of({2, 2}, {2.25, 4, 9, 0.25}), 0, "ReduceSumSquare absent axes");
  // keepdims does not matter when nothing is reduced.
  expect_everywhere(reduce_graph("ReduceSumSquare", kX, Axes::empty, 1, 0), kX,
                    tensor_of({2, 2}, {2.25, 4, 9, 0.25}), 0, "ReduceSumSquare empty axes keepdims=0");
  // Without noop_with_empty_axes, absent axes still mean all axes.
  expect_everywhere(reduce_graph("ReduceSumSquare", kX, Axes::absent, 0), kX, tensor_of({1, 1}, {15.5}), 0,
                    "ReduceSumSquare all axes");
}

TEST(ReduceNoop, EveryReduceOpAppliesItsElementwisePart) {
  struct Case {
    const char* op;
    std::vector<double> want;
  } cases[] = {
      {"ReduceL2", {1.5, 2, 3, 0.5}},       {"ReduceSum", {-1.5, 2, 3, -0.5}},
      {"ReduceMean", {-1.5, 2, 3, -0.5}},   {"ReduceMax", {-1.5, 2, 3, -0.5}},
      {"ReduceMin", {-1.5, 2, 3, -0.5}},    {"ReduceProd", {-1.5, 2, 3, -0.5}},
      {"ReduceLogSumExp", {-1.5, 2, 3, -0.5}},
  };
  for (auto& c : cases) {
    expect_everywhere(reduce_graph(c.op, kX, Axes::empty, 1), kX, tensor_of({2, 2}, c.want), 0,
                      std::string(c.op) + " empty axes");
    expect_everywhere(reduce_graph(c.op, kX, Axes::absent, 1), kX, tensor_of({2, 2}, c.want), 0,
                      std::string(c.op) + " absent axes");
  }
  // ReduceLogSum is log(x): within one ulp of the correctly rounded value (GPU log).
  Tensor pos = tensor_of({2, 2}, {0.5, 2, 4, 10});
  Tensor want(DType::f32, {2, 2});
  for (int i = 0; i < 4; ++i) want.set(i, std::log(pos.get(i)));
  expect_everywhere(reduce_graph("ReduceLogSum", pos, Axes::empty, 1), pos, want, 1, "ReduceLogSum empty axes");
  // Axes given: noop_with_empty_axes changes nothing.
  expect_everywhere(reduce_graph("ReduceL1", kX, Axes::some, 1), kX, tensor_of({2, 1}, {3.5, 3.5}), 0,
                    "ReduceL1 axes [1]");
}

TEST(ReduceNoop, ReduceSumAxesInputFromOpset13) {
  GraphBuilder b("reduce", 13);
  int xi = b.input("x", DType::f32, {2, 2});
  b.output(b.op("ReduceSum", {xi, b.constant("axes", ints_of({0}, {}))}, {{"noop_with_empty_axes", int64_t{1}}}));
  Graph g = b.build();
  make_static(g, {});
  expect_everywhere(g, kX, kX, 0, "ReduceSum-13 empty axes");
}

}  // namespace
}  // namespace fusor
