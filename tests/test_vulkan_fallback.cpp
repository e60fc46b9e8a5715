// Host fallback on the Vulkan backend (runtime/segments.h): an op the GPU emitter lacks (a
// diagonal Einsum) runs on the host between two Vulkan command buffers; results against ref on
// seeded random inputs, under the validation layer. Skipped without a Vulkan device.
#include <gtest/gtest.h>

#include "backends/backend.h"
#include "backends/vulkan/vulkan_backend.h"
#include "frontend/builder.h"
#include "ir/passes.h"
#include "runtime/segments.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

// x[5,5] -> Relu -> Einsum("ii->i", no GPU kernel) -> Mul(y) -> Tanh -> out0;  y -> Exp -> out1
Graph diagonal_sandwich() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {5, 5});
  int y = b.input("y", DType::f32, {5});
  int d = b.op("Einsum", {b.op("Relu", {x})}, {{"equation", std::string("ii->i")}});
  b.output(b.op("Tanh", {b.op("Mul", {d, y})}));
  b.output(b.op("Exp", {y}));
  return b.build();
}

class VulkanFallback : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("FUSOR_VK_VALIDATION", "1", 1);
    vk_ = make_backend("vulkan");
    if (vk_->devices().empty()) GTEST_SKIP() << "no Vulkan device: the loader found none (install mesa-vulkan-drivers for lavapipe)";
    vulkan_validation_reset();
  }
  void TearDown() override {
    if (vk_ && !vk_->devices().empty()) EXPECT_EQ(vulkan_validation_message_count(), 0) << vulkan_validation_messages();
  }
  std::unique_ptr<Backend> vk_;
};

TEST_F(VulkanFallback, EmitterGapRunsOnTheHostBetweenCommandBuffers) {
  Graph g = diagonal_sandwich();
  std::vector<Tensor> in{testing::random_tensor(DType::f32, {5, 5}, 11), testing::random_tensor(DType::f32, {5}, 12)};
  Graph sg = specialize(g, in);
  auto breaks = find_graph_breaks(*vk_, sg, {});
  ASSERT_EQ(breaks.size(), 1u);
  EXPECT_EQ(breaks[0].op, "Einsum");
  EXPECT_NE(breaks[0].reason.find("Einsum"), std::string::npos) << breaks[0].reason;

  auto exe = compile_with_fallback(*vk_, sg, {});
  EXPECT_EQ(graph_breaks(*exe).size(), 1u);
  // Relu + Exp on the device, Einsum on the host, Mul+Tanh fused on the device.
  EXPECT_NE(exe->notes().find("2 vulkan segment(s) + 1 host segment(s)"), std::string::npos) << exe->notes();
  auto want = run_on_backend("ref", sg, in);
  for (int rep = 0; rep < 2; ++rep) {  // the second run replays the recorded command buffers
    auto got = exe->run(in);
    ASSERT_EQ(got.size(), 2u);
    for (size_t k = 0; k < 2; ++k) {
      ASSERT_EQ(got[k].shape(), want[k].shape());
      for (int64_t i = 0; i < got[k].numel(); ++i) EXPECT_NEAR(got[k].get(i), want[k].get(i), 1e-6) << k << " " << i;
    }
    in[1] = testing::random_tensor(DType::f32, {5}, 13);
    want = run_on_backend("ref", sg, in);
  }
}

TEST_F(VulkanFallback, SessionFallsBackAndNoFallbackRefuses) {
  Graph g = diagonal_sandwich();
  std::vector<Tensor> in{testing::random_tensor(DType::f32, {5, 5}, 21), testing::random_tensor(DType::f32, {5}, 22)};
  auto want = Session(g, "ref").run(in);
  auto got = Session(g, "vulkan").run(in);
  ASSERT_EQ(got.size(), want.size());
  for (int64_t i = 0; i < got[0].numel(); ++i) EXPECT_NEAR(got[0].get(i), want[0].get(i), 1e-6);
  CompileOptions off;
  off.fallback = false;
  try {
    Session(g, "vulkan", off).run(in);
    ADD_FAILURE() << "--no-fallback should refuse the Einsum";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("Einsum"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fusor
