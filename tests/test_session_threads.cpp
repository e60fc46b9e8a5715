// Session under concurrency (one Session, several threads, every backend present) and the exact
// per-signature cache key. Every output is checked against `ref` on seeded random inputs.
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <thread>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

using testing::random_tensor;

// A model with a fused chain, a row reduction and a matmul, and a symbolic batch dim so that
// several signatures (and so several compiles) exist.
Graph threads_model() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {-1, 16});
  int w = b.constant("w", random_tensor(DType::f32, {16, 8}, 7));
  int bias = b.constant("b", random_tensor(DType::f32, {8}, 8));
  int h = b.op("Relu", {b.op("Add", {b.op("MatMul", {x, w}), bias})});
  int s = b.op("Softmax", {b.op("Mul", {h, b.op("Tanh", {h})})}, {{"axis", int64_t{-1}}});
  b.output(s);
  b.output(b.op("ReduceSum", {b.op("Exp", {x})}, {{"keepdims", int64_t{1}}, {"axes", std::vector<int64_t>{1}}}));
  Graph g = b.build();
  g.values[g.inputs[0]].shape_known = false;
  return g;
}

class SessionThreads : public ::testing::TestWithParam<std::string> {};

TEST_P(SessionThreads, FourThreadsShareOneSessionAndEveryOutputMatchesRef) {
  const std::string name = GetParam();
  std::unique_ptr<Backend> probe;
  try {
    probe = make_backend(name);
  } catch (const Error& e) {
    GTEST_SKIP() << "backend '" << name << "' is not built into this binary: " << e.what();
  }
  if (probe->devices().empty()) GTEST_SKIP() << "backend '" << name << "' has no usable device on this machine";

  Graph g = threads_model();
  constexpr int kThreads = 4, kRuns = 12;
  const int64_t batches[] = {3, 5, 3, 7};
  // Expected outputs from ref, one per (thread, run), computed up front on one thread.
  std::vector<std::vector<Tensor>> inputs, want;
  for (int t = 0; t < kThreads; ++t)
    for (int r = 0; r < kRuns; ++r) {
      std::vector<Tensor> in{random_tensor(DType::f32, {batches[(t + r) % 4], 16}, 1000 + 100 * t + r)};
      want.push_back(run_on_backend("ref", specialize(g, in), in));
      inputs.push_back(std::move(in));
    }

  Session s(g, name);
  std::vector<std::vector<Tensor>> got(inputs.size());
  std::vector<std::string> errors(kThreads);
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      start.arrive_and_wait();  // every thread's first run races for the same cold signature
      try {
        for (int r = 0; r < kRuns; ++r) got[t * kRuns + r] = s.run(inputs[t * kRuns + r]);
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) ASSERT_EQ(errors[t], "") << "thread " << t;
  int checked = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].size(), want[i].size()) << "run " << i;
    for (size_t k = 0; k < got[i].size(); ++k) {
      ASSERT_EQ(got[i][k].shape(), want[i][k].shape()) << "run " << i << " output " << k;
      auto c = compare_tensors(got[i][k], want[i][k], 1e-5, 1e-6);
      EXPECT_TRUE(c.ok) << "run " << i << " output " << k << ": " << c.message;
      ++checked;
    }
  }
  EXPECT_EQ(checked, kThreads * kRuns * 2);
  EXPECT_EQ(s.cached_executables(), 3u);  // batch 3, 5 and 7, each compiled once
}

INSTANTIATE_TEST_SUITE_P(AllBackends, SessionThreads, ::testing::Values("ref", "cpu", "vulkan", "cuda"),
                         [](const auto& info) { return info.param; });

// Range's length depends on the value of `limit`; 1e-7 and 4e-7 print alike with 6 decimals,
// so the key must use the exact bits or the second run reuses the first executable.
TEST(SessionKey, ValuesThatPrintAlikeGetTheirOwnExecutable) {
  GraphBuilder b;
  int start = b.constant("start", testing::tensor_of({}, {0.0}));
  int limit = b.input("limit", DType::f32, {});
  int delta = b.constant("delta", testing::tensor_of({}, {1e-7}));
  int x = b.op("Range", {start, limit, delta});
  b.output(b.op("Add", {x, x}));
  Graph g = b.build();
  for (const char* backend : {"ref", "cpu"}) {
    Session s(g, backend);
    std::vector<int64_t> lengths;
    for (double v : {1e-7, 4e-7, 1e-7, 2.5e-7}) {
      std::vector<Tensor> in{testing::tensor_of({}, {v})};
      std::vector<Tensor> want = run_on_backend("ref", specialize(g, in), in);
      std::vector<Tensor> got = s.run(in);
      ASSERT_EQ(got[0].shape(), want[0].shape()) << backend << " limit " << v;
      auto c = compare_tensors(got[0], want[0], 1e-6, 0);
      EXPECT_TRUE(c.ok) << backend << " limit " << v << ": " << c.message;
      lengths.push_back(got[0].numel());
    }
    EXPECT_NE(lengths[0], lengths[1]) << backend;
    EXPECT_EQ(s.cached_executables(), 3u) << backend;  // 1e-7 is reused, not recompiled
  }
}

}  // namespace
}  // namespace fusor
