// TopK (ir/ops/select.cpp) against hand-computed values, and on the fused `cpu` backend and
// through host fallback against `ref` on seeded random inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "ir/passes.h"
#include "runtime/session.h"
#include "test_util.h"

#ifdef FUSOR_HAVE_CUDA
#include "backends/codegen.h"
#include "backends/cuda/cuda_backend.h"
#endif

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


// TopK runs on the GPUs as a kernel of its own (one thread ranks each element), not on the host:
// every dtype class, both orders, a middle axis, k up to the whole axis, either output omitted,
// with ties, +-0, NaNs (largest) and the dtype's extremes; values bit for bit, indices exactly,
// fused and unfused, without fallback. Without a GPU the CUDA kernels must still compile.
TEST(TopK, RunsOnTheGpusInEveryDtype) {
  struct Case {
    DType t;
    Shape s;
    int64_t axis, k, largest;
    int outputs;  // 3: both, 1: values only, 2: indices only
  };
  const std::vector<Case> cases = {
      {DType::f32, {3, 37}, -1, 5, 1, 3},   {DType::f32, {4, 9, 3}, 1, 9, 0, 3}, {DType::f16, {2, 50}, 1, 7, 1, 2},
      {DType::bf16, {2, 33}, -1, 4, 0, 1}, {DType::f64, {3, 20}, 1, 20, 1, 3}, {DType::i32, {5, 16}, 0, 3, 1, 3},
      {DType::i64, {2, 40}, -1, 6, 0, 3},  {DType::u64, {2, 12}, -1, 4, 1, 3}, {DType::u8, {3, 30}, 1, 10, 1, 3},
      {DType::i8, {64}, 0, 64, 0, 2},      {DType::f32, {2, 0}, 1, 0, 1, 3}};
  int n_case = 0;
  for (const Case& c : cases) {
    const std::string nm = std::string("TopK ") + dtype_name(c.t) + " #" + std::to_string(n_case++);
    Tensor x(c.t, c.s);
    std::mt19937_64 rng(41 + n_case);
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t r = static_cast<int64_t>(rng() % 13);  // few distinct values: many ties
      if (dtype_is_float(c.t)) {
        const double v = r == 0 ? NAN : r == 1 ? 0.0 : r == 2 ? -0.0 : r == 3 ? -INFINITY : (static_cast<double>(r) - 7.0) * 1.25;
        x.set(i, v);
      } else if (c.t == DType::u64) {
        x.set_int(i, r == 0 ? static_cast<int64_t>(0xFFFFFFFFFFFFFFF0ULL) : r == 1 ? static_cast<int64_t>(0x8000000000000000ULL) : r * 3);
      } else if (c.t == DType::i64) {
        x.set_int(i, r == 0 ? std::numeric_limits<int64_t>::min() : r == 1 ? (int64_t{1} << 60) + 1 : r - 6);
      } else if (c.t == DType::u8) {
        x.set_int(i, r * 19);
      } else {
        x.set_int(i, r == 0 ? (c.t == DType::i8 ? -128 : std::numeric_limits<int32_t>::min()) : r - 6);
      }
    }
    GraphBuilder b("topk", 18);
    const int in = b.input("x", c.t, c.s);
    auto tk = b.op_multi("TopK", {in, b.constant("k", ints_of({1}, {c.k}))}, {{"axis", c.axis}, {"largest", c.largest}}, 2);
    if (c.outputs & 1) b.output(tk[0]);
    if (c.outputs & 2) b.output(tk[1]);
    Graph g = b.build();
    const std::vector<Tensor> feed{x};
    const Graph sg = specialize(g, feed);
    const auto want = run_on_backend("ref", sg, feed);
    for (const std::string be : {"cpu", "vulkan", "cuda"}) {
      const auto names = backend_names();
      if (std::find(names.begin(), names.end(), be) == names.end() || make_backend(be)->devices().empty()) continue;
      for (bool fusion : {true, false}) {
        CompileOptions o;
        o.fusion = fusion, o.fallback = false;
        std::vector<Tensor> got;
        try {
          got = run_on_backend(be, sg, feed, o);
        } catch (const Error& e) {
          ADD_FAILURE() << nm << " on " << be << " without fallback: " << e.what();
          continue;
        }
        ASSERT_EQ(got.size(), want.size()) << nm;
        for (size_t j = 0; j < want.size(); ++j) {
          ASSERT_EQ(got[j].dtype(), want[j].dtype()) << nm;
          ASSERT_EQ(got[j].shape(), want[j].shape()) << nm;
          EXPECT_EQ(0, std::memcmp(got[j].raw(), want[j].raw(), want[j].nbytes()))
              << nm << " output " << j << " on " << be << (fusion ? "" : " unfused");
        }
      }
    }
#ifdef FUSOR_HAVE_CUDA
    const auto names = backend_names();
    if (std::find(names.begin(), names.end(), "cuda") != names.end() && make_backend("cuda")->devices().empty()) {
      const Plan p = build_plan(sg);
      for (const KernelSpec& k : p.kernels) {
        std::string src;
        try {
          src = cuda_kernel_source(k, p, nullptr);
          if (!src.empty()) nvrtc_compile_check(src, kernel_identifier(k.name));
        } catch (const Error& e) {
          ADD_FAILURE() << nm << " cuda: " << e.what() << "\n" << src;
        }
      }
    }
#endif
  }
}

// An axis past the kernel's pairwise limit runs on the host (the GPUs say why; with fallback it
// still agrees with ref).
TEST(TopK, LongAxesRunOnTheHost) {
  GraphBuilder b("topk", 18);
  const int in = b.input("x", DType::f32, {1, 20000});
  b.output(b.op_multi("TopK", {in, b.constant("k", ints_of({1}, {3}))}, {}, 2)[1]);
  const std::vector<Tensor> feed{testing::random_tensor(DType::f32, {1, 20000}, 3, -5, 5)};
  const Graph g = specialize(b.build(), feed);
  const auto want = run_on_backend("ref", g, feed);
  for (const std::string be : {"vulkan", "cuda"}) {
    const auto names = backend_names();
    if (std::find(names.begin(), names.end(), be) == names.end() || make_backend(be)->devices().empty()) continue;
    CompileOptions o;
    o.fallback = false;
    const std::string msg = testing::error_of([&] { run_on_backend(be, g, feed, o); });
    EXPECT_NE(msg.find("TopK along an axis of 20000 elements"), std::string::npos) << msg;
    const auto got = run_on_backend(be, g, feed);
    for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(got[0].get_int(i), want[0].get_int(i)) << be;
  }
}

}  // namespace
}  // namespace fusor
