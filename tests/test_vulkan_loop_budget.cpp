// lavapipe (llvmpipe) ends every loop once an invocation has run 65535 iterations in total
// (gallivm's loop limiter): a generated kernel with a longer serial loop computed a prefix
// (red-team round 6: CumSum, ArgMax and ReduceLogSumExp over 70001 elements). Such kernels are
// refused by the emitter (Dialect::max_loop_iterations) and run on the host; checked here
// against ref on seeded random data, and the refusal itself on the source level.
#include <gtest/gtest.h>

#include "backends/backend.h"
#include "backends/codegen.h"
#include "backends/vulkan/vk_device.h"
#include "backends/vulkan/vk_dialect.h"
#include "frontend/builder.h"
#include "ir/passes.h"
#include "runtime/segments.h"
#include "test_util.h"

namespace fusor {
namespace {
using testing::ints_of;
using testing::random_tensor;

Graph long_row_graph(int64_t len) {
  GraphBuilder gb;
  int x = gb.input("x", DType::f32, {2, len});
  gb.output(gb.op("CumSum", {x, gb.constant("ax", ints_of({}, {1}))}));
  gb.output(gb.op("ArgMax", {x}, {{"axis", int64_t{1}}}));
  gb.output(gb.op("ReduceLogSumExp", {x, gb.constant("axes", ints_of({1}, {1}))}));
  Graph g = gb.build();
  make_static(g, {});
  return g;
}

TEST(VulkanLoopBudget, LongSerialLoopsMatchReference) {
  auto vk = make_backend("vulkan");
  if (vk->devices().empty()) GTEST_SKIP() << "no Vulkan device (install mesa-vulkan-drivers for lavapipe)";
  const int64_t len = 70001;
  Graph g = long_row_graph(len);
  Tensor x = random_tensor(DType::f32, {2, len}, 61, -3.0, 3.0);
  x.set(len - 1, 9.0);          // row 0's maximum at its last element
  x.set(len + 65600, 9.5);      // row 1's past 65535
  auto want = make_backend("ref")->compile(g, {})->run({x});
  CompileOptions opts;
  opts.fallback = true;  // the refused kernels run on the host (runtime/segments.h)
  auto got = compile_with_fallback(*vk, g, opts)->run({x});
  ASSERT_EQ(got.size(), 3u);
  CompareResult c = compare_tensors(got[0], want[0], 1e-4, 1e-3);  // fp32 prefix sums of 70001 terms
  EXPECT_TRUE(c.ok) << "CumSum: " << c.message;
  EXPECT_EQ(got[1].get_int(0), len - 1);
  EXPECT_EQ(got[1].get_int(1), 65600);
  c = compare_tensors(got[2], want[2], 1e-5, 1e-5);
  EXPECT_TRUE(c.ok) << "ReduceLogSumExp: " << c.message;
}

TEST(VulkanLoopBudget, EmitterRefusesLoopsPastTheLimit) {
  auto vk = make_backend("vulkan");
  if (vk->devices().empty()) GTEST_SKIP() << "no Vulkan device (install mesa-vulkan-drivers for lavapipe)";
  vk::PhysicalDeviceInfo dev = vk::Instance::get()->devices()[0];
  dev.type = VK_PHYSICAL_DEVICE_TYPE_CPU;
  dev.name = "llvmpipe (described)";
  for (int64_t len : {int64_t{1000}, int64_t{70001}}) {
    Graph g = long_row_graph(len);
    Plan p = build_plan(g);
    for (const KernelSpec& k : p.kernels) {
      vk::VulkanDialect d(dev, k, std::vector<int64_t>(kernel_bindings(k).size(), 0), &p);
      std::string what;
      try {
        emit_kernel(k, p, d);
      } catch (const Unsupported& e) {
        what = e.what();
      }
      if (len < 65535) EXPECT_EQ(what, "") << k.name;
      else if (k.kind == FusionKind::opaque)  // the loop budget, or first the serial-work bound (Emitter::kMaxLaneCost)
        EXPECT_TRUE(what.find("loop iterations per thread") != std::string::npos || what.find("serial iterations") != std::string::npos)
            << k.name << ": " << what;
    }
  }
}

}  // namespace
}  // namespace fusor

namespace fusor {
namespace {

// Red-team round 20: contraction kernels had no loop budget, so on lavapipe a GEMV or a conv
// whose K loop ran past the limit summed a prefix of K (an 8 x 300001 GEMV with 64-thread
// groups 13% low, a 1 x 1 conv over 70001 channels 6% low, a 2 x 4.3M GEMV with the default
// groups 97% low). Such kernels are refused now and run on the host: ref's values.
Graph matmul_graph(int64_t m, int64_t k, int64_t n) {
  GraphBuilder gb;
  gb.output(gb.op("MatMul", {gb.input("a", DType::f32, {m, k}), gb.input("b", DType::f32, {k, n})}));
  Graph g = gb.build();
  make_static(g, {});
  return g;
}
Graph conv_graph(int64_t c) {
  GraphBuilder gb;
  gb.output(gb.op("Conv", {gb.input("x", DType::f32, {1, c, 1, 1}), gb.input("w", DType::f32, {2, c, 1, 1})}));
  Graph g = gb.build();
  make_static(g, {});
  return g;
}

TEST(VulkanLoopBudget, LongContractionsMatchReference) {
  auto vk = make_backend("vulkan");
  if (vk->devices().empty()) GTEST_SKIP() << "no Vulkan device (install mesa-vulkan-drivers for lavapipe)";
  testing::ScopedEnv threads("FUSOR_VK_GEMV_THREADS", "64");  // 4 K groups: 75001 trips for K = 300001
  struct Case {
    Graph g;
    std::vector<Tensor> in;
  };
  std::vector<Case> cases;
  cases.push_back({matmul_graph(8, 300001, 2), {random_tensor(DType::f32, {8, 300001}, 71, 0.0, 1.0), random_tensor(DType::f32, {300001, 2}, 72, 0.0, 1.0)}});
  cases.push_back({conv_graph(70001), {random_tensor(DType::f32, {1, 70001, 1, 1}, 73, 0.0, 1.0), random_tensor(DType::f32, {2, 70001, 1, 1}, 74, 0.0, 1.0)}});
  for (Case& c : cases) {
    const auto want = make_backend("ref")->compile(c.g, {})->run(c.in);
    CompileOptions opts;
    opts.fallback = true;
    const auto got = compile_with_fallback(*vk, c.g, opts)->run(c.in);
    ASSERT_EQ(got.size(), 1u);
    // Positive terms: a sum cut short is percents low; fp32 sums of the whole K are within 1e-4.
    const CompareResult r = compare_tensors(got[0], want[0], 1e-4, 0.0);
    EXPECT_TRUE(r.ok) << r.message;
  }
}

TEST(VulkanLoopBudget, EmitterRefusesContractionsPastTheLimit) {
  auto vk = make_backend("vulkan");
  if (vk->devices().empty()) GTEST_SKIP() << "no Vulkan device (install mesa-vulkan-drivers for lavapipe)";
  vk::PhysicalDeviceInfo dev = vk::Instance::get()->devices()[0];
  // lavapipe as this machine's reports it, whatever device opened (the tile and split-K choice,
  // hence the trips, follow the compute units and limits: the H200's 132 units split K 64 ways).
  dev.type = VK_PHYSICAL_DEVICE_TYPE_CPU;
  dev.name = "llvmpipe (described)";
  dev.compute_units = 2;
  dev.subgroup_size = 8;
  dev.max_shared_memory = 32768;
  dev.max_invocations = 1024;
  dev.coopmat_nv = dev.coopmat_khr = dev.cooperative_matrix = dev.coopmat_bf16 = false;
  dev.coopmat_shapes.clear();
  const auto refused = [&](const Graph& g) {
    Plan p = build_plan(g);
    std::string what;
    for (const KernelSpec& k : p.kernels) {
      vk::VulkanDialect d(dev, k, std::vector<int64_t>(kernel_bindings(k).size(), 0), &p);
      try {
        emit_kernel(k, p, d);
      } catch (const Unsupported& e) {
        what += e.what();
      }
    }
    return what;
  };
  // The GEMV path (M <= 8), the tiled path and a direct conv, each below and past the limit
  // (plans only: nothing is allocated).
  EXPECT_EQ(refused(matmul_graph(2, 1000001, 1)), "");
  EXPECT_NE(refused(matmul_graph(2, 4300001, 1)).find("MatMul K loop"), std::string::npos);
  EXPECT_EQ(refused(matmul_graph(64, 100001, 8)), "");
  EXPECT_NE(refused(matmul_graph(64, 4000001, 8)).find("MatMul K loop"), std::string::npos);
  EXPECT_EQ(refused(conv_graph(30001)), "");
  EXPECT_NE(refused(conv_graph(70001)).find("Conv K loop"), std::string::npos);
  // A device without the limit takes them all.
  dev.name = "NVIDIA H200 (described)";
  dev.type = VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
  EXPECT_EQ(refused(matmul_graph(2, 4300001, 1)), "");
  EXPECT_EQ(refused(conv_graph(70001)), "");
}

}  // namespace
}  // namespace fusor
