// The Session's in-memory executable cache is bounded (red-team round 9, F6 / F9): a dynamic
// sequence length compiled one executable per length and a NonZero of a computed mask one per
// run, all kept for the Session's life (vulkan on lavapipe: ~3.2 MB per shape, ~0.4 MB per
// run, without bound). Now the least recently used executables go, repeated signatures stay
// cached, results stay right, and a destroyed Session gives back every Vulkan object.
#include <gtest/gtest.h>

#include "backend_agreement.h"
#ifdef FUSOR_HAVE_VULKAN
#include "backends/vulkan/vulkan_backend.h"
#endif
#include "frontend/builder.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

std::vector<std::string> host_and_vulkan() {
  std::vector<std::string> b{"ref", "cpu"};
  if (testing::vulkan_available())
    b.push_back("vulkan");
  else
    std::printf("[  SKIPPED ] vulkan part: no Vulkan device\n");
  return b;
}

// y = x[x > 0] ** 2 for x [16] (the reproducer's model, smaller): NonZero of a computed mask.
Graph masked_square() {
  GraphBuilder b("masked", 17);
  const int x = b.input("x", DType::f32, {16});
  const int nz = b.op("NonZero", {b.op("Greater", {x, b.constant("zero", testing::tensor_of({}, {0.0}))})});
  const int idx = b.op("Squeeze", {nz, b.constant("axes", testing::ints_of({1}, {0}))});
  const int g = b.op("Gather", {x, idx});
  b.output(b.op("Mul", {g, g}));
  return b.build();
}

// [1, S, 8] -> MatMul [8, 4] -> Softmax, and ReduceMax over S: one executable per S.
Graph dynamic_rows() {
  GraphBuilder b("dyn", 17);
  const int x = b.input("x", DType::f32, {1, -1, 8});
  const int y = b.op("Softmax", {b.op("MatMul", {x, b.constant("w", testing::random_tensor(DType::f32, {8, 4}, 7))})},
                     {{"axis", int64_t{-1}}});
  b.output(y);
  b.output(b.op("ReduceMax", {y}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{1}}}));
  return b.build();
}

void expect_like_ref(const Graph& g, const std::vector<Tensor>& in, const std::vector<Tensor>& got,
                     const std::string& what) {
  const std::vector<Tensor> want = run_on_backend("ref", specialize(g, in), in);
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(got[k].shape(), want[k].shape()) << what << " output " << k;
    const auto c = compare_tensors(got[k], want[k], 1e-5, 1e-6);
    EXPECT_TRUE(c.ok) << what << " output " << k << ": " << c.message;
  }
}

TEST(SessionCache, DataDependentExecutablesAreBoundedAndStayRight) {
  const Graph g = masked_square();
  for (const std::string& be : host_and_vulkan()) {
    Session s(g, be);
    for (uint64_t seed = 1; seed <= 40; ++seed) {  // a new mask (almost surely) every run
      const std::vector<Tensor> in{testing::random_tensor(DType::f32, {16}, seed)};
      expect_like_ref(g, in, s.run(in), be + " seed " + std::to_string(seed));
      EXPECT_LE(s.cached_executables(), Session::kMaxValueKeyedExecutables) << be;
    }
    EXPECT_EQ(s.cached_executables(), Session::kMaxValueKeyedExecutables) << be;
    // The latest mask is still cached: running it again compiles nothing.
    const size_t compiled = s.compiled_executables();
    const std::vector<Tensor> again{testing::random_tensor(DType::f32, {16}, 40)};
    expect_like_ref(g, again, s.run(again), be + " seed 40 again");
    EXPECT_EQ(s.compiled_executables(), compiled) << be;
  }
}

TEST(SessionCache, DynamicShapesKeepTheRecentOnesCachedAndEvictTheOldest) {
  const Graph g = dynamic_rows();
  auto input = [](int64_t rows) {
    return std::vector<Tensor>{testing::random_tensor(DType::f32, {1, rows, 8}, 100 + rows)};
  };
  for (const std::string& be : host_and_vulkan()) {
    Session s(g, be);
    EXPECT_EQ(s.max_executables(), Session::kDefaultMaxExecutables);
    s.set_max_executables(4);
    for (int64_t rows = 1; rows <= 10; ++rows) {
      expect_like_ref(g, input(rows), s.run(input(rows)), be + " S=" + std::to_string(rows));
      EXPECT_LE(s.cached_executables(), 4u) << be;
    }
    EXPECT_EQ(s.compiled_executables(), 10u) << be;
    // 7..10 are cached: a repeat compiles nothing, and touching 7 keeps it over 8 when 11 comes.
    expect_like_ref(g, input(7), s.run(input(7)), be + " S=7 again");
    EXPECT_EQ(s.compiled_executables(), 10u) << be;
    s.run(input(11));
    s.run(input(7));
    EXPECT_EQ(s.compiled_executables(), 11u) << be << ": S=7 was evicted although recently used";
    // 1 was evicted long ago: compiled again, and right.
    expect_like_ref(g, input(1), s.run(input(1)), be + " S=1 again");
    EXPECT_EQ(s.compiled_executables(), 12u) << be;
    EXPECT_EQ(s.cached_executables(), 4u) << be;
    s.set_max_executables(2);
    EXPECT_EQ(s.cached_executables(), 2u) << be;
    EXPECT_NE(testing::error_of([&] { s.set_max_executables(0); }).find("at least 1"), std::string::npos);
  }
}

#ifdef FUSOR_HAVE_VULKAN  // (the sanitizer build has no Vulkan backend)
// Every Vulkan object an executable owns is counted: with the cache bounded to 3, the live
// pipelines and memory allocations stop growing after 3 shapes, and destroying the Session
// returns both counts to where they were.
TEST(SessionCache, VulkanObjectsAreBoundedAndFreedWithTheSession) {
  if (!testing::vulkan_available()) GTEST_SKIP() << "no Vulkan device";
  const Graph g = dynamic_rows();
  const VulkanLiveObjects before = vulkan_live_objects();
  {
    Session s(g, "vulkan");
    s.set_max_executables(3);
    VulkanLiveObjects first{};
    for (int64_t rows = 1; rows <= 12; ++rows) {
      const std::vector<Tensor> in{testing::random_tensor(DType::f32, {1, rows, 8}, rows)};
      expect_like_ref(g, in, s.run(in), "S=" + std::to_string(rows));
      const VulkanLiveObjects now = vulkan_live_objects();
      if (rows == 1) first = {now.memory - before.memory, now.pipelines - before.pipelines};
      ASSERT_GT(first.memory, 0);
      ASSERT_GT(first.pipelines, 0);
      // Same kernels for every S here: 3 executables' worth at most (an unbounded cache: 12).
      EXPECT_LE(now.memory - before.memory, 3 * first.memory) << "S=" << rows;
      EXPECT_LE(now.pipelines - before.pipelines, 3 * first.pipelines) << "S=" << rows;
    }
  }
  const VulkanLiveObjects after = vulkan_live_objects();
  EXPECT_EQ(after.memory, before.memory);
  EXPECT_EQ(after.pipelines, before.pipelines);
}

// Identical kernels of two executables on one device are one pipeline (red-team round 48: a
// decoding loop's executable per past length each held ~30 MB of pipelines on lavapipe): a
// second Session of the same model makes none, outlives the first with its pipelines intact,
// and the last user frees them.
TEST(SessionCache, VulkanExecutablesShareIdenticalPipelines) {
  if (!testing::vulkan_available()) GTEST_SKIP() << "no Vulkan device";
  const Graph g = dynamic_rows();
  const std::vector<Tensor> in{testing::random_tensor(DType::f32, {1, 5, 8}, 31)}, in2{testing::random_tensor(DType::f32, {1, 5, 8}, 32)};
  const VulkanLiveObjects before = vulkan_live_objects();
  auto first = std::make_unique<Session>(g, "vulkan");
  expect_like_ref(g, in, first->run(in), "first");
  const int64_t made = vulkan_live_objects().pipelines - before.pipelines;
  ASSERT_GT(made, 0);
  {
    Session second(g, "vulkan");
    expect_like_ref(g, in2, second.run(in2), "second");
    EXPECT_EQ(vulkan_live_objects().pipelines - before.pipelines, made) << "the second executable compiled its own pipelines";
    first.reset();  // the second still holds every pipeline it uses
    EXPECT_EQ(vulkan_live_objects().pipelines - before.pipelines, made);
    expect_like_ref(g, in, second.run(in), "second, after the first is gone");
  }
  EXPECT_EQ(vulkan_live_objects().pipelines, before.pipelines);
}
#endif

}  // namespace
}  // namespace fusor
