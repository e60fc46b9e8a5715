// Split-K in the Vulkan implicit-GEMM convolution (shaders/conv.glsl FZ_SPLIT_K, vk_dialect.h
// choose_tiles): batch-1 layers with many channels on a small image are few output tiles with a
// long reduction (C/G x R x S), so their K is sliced like a matmul's. Forced with
// FUSOR_VK_SPLIT_K here (lavapipe has few compute units), compared with the reference on
// seeded random inputs (the arena starts poisoned), replayed with other inputs in between (the
// counters reset; results bit-identical run to run), and compared with the unsplit kernel.
#include <gtest/gtest.h>

#include "vulkan_gemm_fixture.h"

#include "backends/backend.h"
#include "backends/vulkan/vulkan_backend.h"
#include "frontend/builder.h"
#include "ir/passes.h"
#include "test_util.h"

#include <optional>

namespace fusor {
namespace {

using testing::EnvGuard;
using testing::random_tensor;

struct ConvCase {
  const char* name;
  int64_t n, c, h, w, k, r, s, stride, pad, dil, groups;
  bool relu, residual;
  int slices;  // FUSOR_VK_SPLIT_K (0: automatic)
};

class VulkanConvSplitK : public testing::VulkanGemmTest {
 protected:
  void check_conv(const ConvCase& p, uint32_t seed) {
    SCOPED_TRACE(p.name);
    const testing::ConvProblem cp = testing::make_conv_problem(p, seed);
    const Graph& g = cp.g;
    const std::vector<Tensor>& in = cp.in;
    const std::vector<Tensor>& other = cp.other;
    const std::vector<Tensor>& want = cp.want;
    const std::vector<Tensor>& want_other = cp.want_other;
    std::unique_ptr<Executable> exe;
    {
      std::optional<EnvGuard> on;
      if (p.slices > 0) on.emplace("FUSOR_VK_SPLIT_K", std::to_string(p.slices));
      exe = vk_->compile(g, {});
    }
    EXPECT_EQ(vulkan_split_k_kernel_count(*exe), 1) << exe->notes();
    const std::vector<Tensor> first = exe->run(in);
    compare(first, want, DType::f32);
    compare(exe->run(other), want_other, DType::f32);
    const std::vector<Tensor> again = exe->run(in);
    for (size_t i = 0; i < first.size(); ++i) EXPECT_TRUE(testing::bit_identical(again[i], first[i])) << "output " << i << " changed between replays";
    std::unique_ptr<Executable> plain;
    {
      EnvGuard off("FUSOR_VK_SPLIT_K", "1");
      plain = vk_->compile(g, {});
    }
    EXPECT_EQ(vulkan_split_k_kernel_count(*plain), 0) << plain->notes();
    compare(plain->run(in), want, DType::f32);
  }
};

TEST_F(VulkanConvSplitK, ForcedSlicesMatchReference) {
  const std::vector<ConvCase> cs = {
      {"3x3_pad1_relu", 1, 64, 7, 7, 48, 3, 3, 1, 1, 1, 1, true, false, 4},        // K = 576: last slice shorter
      {"stride2_residual", 1, 40, 11, 9, 70, 3, 3, 2, 1, 1, 1, false, true, 3},
      {"groups2_dilation2", 2, 32, 10, 10, 24, 3, 3, 1, 2, 2, 2, true, false, 5},  // per-group tiles
      {"1x1_batch3", 3, 300, 5, 6, 20, 1, 1, 1, 0, 1, 1, false, false, 2},
      {"many_slices_short_k", 1, 8, 6, 6, 16, 3, 3, 1, 1, 1, 1, false, false, 64},  // capped at K / BK slices
  };
  uint32_t seed = 700;
  for (const ConvCase& c : cs) check_conv(c, seed += 10);
}

// Chosen without the knob when the tile grid cannot fill the device: ResNet's last stage at
// batch 1 (512 channels on 7 x 7, one 64 x 64 tile per 64 output channels, K = 4608).
TEST_F(VulkanConvSplitK, ChosenForFewTilesWithLongReduction) {
  check_conv({"resnet_stage4_b1", 1, 512, 7, 7, 64, 3, 3, 1, 1, 1, 1, true, true, 0}, 800);
}

// A split conv and a split matmul in one plan share the workspace and its counter region.
TEST_F(VulkanConvSplitK, ConvAndMatmulShareTheWorkspace) {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {1, 64, 6, 6});
  int y = b.op("Relu", {b.op("Conv", {x, b.constant("w", random_tensor(DType::f32, {32, 64, 3, 3}, 900))},
                             {{"pads", std::vector<int64_t>{1, 1, 1, 1}}})});
  y = b.op("Reshape", {y, b.constant("s", testing::ints_of({2}, {32, 36}))});
  b.output(b.op("MatMul", {y, b.constant("m", random_tensor(DType::f32, {36, 300}, 901))}));
  Graph g = b.build();
  make_static(g, {});
  const std::vector<Tensor> in = {random_tensor(DType::f32, {1, 64, 6, 6}, 902)};
  const std::vector<Tensor> want = make_backend("ref")->compile(g, {})->run(in);
  std::unique_ptr<Executable> exe;
  {
    EnvGuard on("FUSOR_VK_SPLIT_K", "2");
    exe = vk_->compile(g, {});
  }
  EXPECT_EQ(vulkan_split_k_kernel_count(*exe), 2) << exe->notes();
  for (int run = 0; run < 3; ++run) compare(exe->run(in), want, DType::f32);
}

}  // namespace
}  // namespace fusor
