// The vector GEMV path of the Vulkan backend (shaders/gemm.glsl FZ_SKINNY 2, vk_dialect.cpp
// choose_tiles / choose_gemv_split; FUSOR_VK_GEMV=new, the default for M <= 8) on lavapipe:
// M in {1, 2, 7, 8}, K and N not multiples of the vector width or the strip, unit and
// transposed B, batched, fp32 / fp16 / bf16, bias + GELU and residual epilogues, K split over
// workgroups (forced with FUSOR_VK_GEMV_SPLIT) or not. Each case is compared with `ref` on
// seeded random inputs (outputs poisoned: the arena starts as NaN), replayed with other inputs
// in between (bit-identical results: the split counters reset, the slice order is fixed), and
// compared with the old GEMV path (FUSOR_VK_GEMV=old). Runs under the validation layer.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "backends/vulkan/vk_dialect.h"
#include "vulkan_gemm_fixture.h"

namespace fusor {
namespace {

using testing::Built;
using testing::EnvGuard;
using testing::Problem;
using testing::build;
using testing::dumped_sources;

class VulkanGemv : public testing::VulkanGemmTest {
 protected:
  void TearDown() override {
    unsetenv("FUSOR_VK_GEMV");
    unsetenv("FUSOR_VK_GEMV_SPLIT");
    testing::VulkanGemmTest::TearDown();
  }

  // p.slices: FUSOR_VK_GEMV_SPLIT (1 = no split). vec4: whether B must be read 4-wide.
  void check_gemv(const Problem& p, uint32_t seed, bool vec4) {
    SCOPED_TRACE(p.name);
    Built b = build(p, seed);
    auto ref = make_backend("ref")->compile(b.g, {});
    const std::vector<Tensor> want = ref->run(b.inputs), want_other = ref->run(b.other);
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("fusor_gemv_" + std::to_string(::getpid()) + "_" + p.name);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    std::unique_ptr<Executable> exe;
    {
      EnvGuard path("FUSOR_VK_GEMV", "new");
      EnvGuard split("FUSOR_VK_GEMV_SPLIT", std::to_string(p.slices));
      EnvGuard dump("FUSOR_VK_DUMP_DIR", dir.string());
      exe = vk_->compile(b.g, {});
    }
    const std::string src = dumped_sources(dir);
    std::filesystem::remove_all(dir);
    EXPECT_NE(src.find("#define FZ_SKINNY 2"), std::string::npos) << "not the vector GEMV path";
    EXPECT_EQ(src.find("#define FZ_B_VEC4 1") != std::string::npos, vec4) << "B vector loads";
    EXPECT_EQ(vulkan_split_k_kernel_count(*exe), p.slices > 1 ? 1 : 0) << exe->notes();
    const std::vector<Tensor> first = exe->run(b.inputs);
    compare(first, want, p.dtype);
    compare(exe->run(b.other), want_other, p.dtype);
    const std::vector<Tensor> again = exe->run(b.inputs);
    ASSERT_EQ(again.size(), first.size());
    for (size_t i = 0; i < first.size(); ++i)
      EXPECT_TRUE(testing::bit_identical(again[i], first[i])) << "output " << i << " changed between replays";
    EnvGuard old("FUSOR_VK_GEMV", "old");
    compare(vk_->compile(b.g, {})->run(b.inputs), first, p.dtype);
  }
};

TEST_F(VulkanGemv, ShapesViewsEpiloguesAndSplits) {
  struct Case {
    Problem p;
    bool vec4;
  };
  const std::vector<Case> cases = {
      {{"m1_split4_bias_gelu", {}, 1, 256, 1024, false, false, true, false, 4}, true},
      {{"m2_n67_k301_residual", {}, 2, 67, 301, false, false, false, true, 3}, false},  // N % 4 != 0: scalar B
      {{"m7_n132_k515_gelu", {}, 7, 132, 515, false, false, true, false, 5}, true},     // a partial 64-column strip
      {{"m8_transposed_b", {}, 8, 100, 333, false, true, true, true, 4}, false},        // B's N stride is K
      {{"m3_batch3", {3}, 3, 72, 200, false, false, true, false, 2}, true},
      {{"m1_batch2x2_transposed_a", {2, 2}, 1, 40, 130, true, false, false, true, 3}, true},
      {{"m1_no_split", {}, 1, 200, 700, false, false, true, true, 1}, true},
      {{"m8_no_split_n9", {}, 8, 9, 77, false, false, false, false, 1}, false},
      {{"f16_m1_split", {}, 1, 260, 520, false, false, true, true, 4, DType::f16}, true},
      {{"f16_m8_transposed", {}, 8, 70, 260, false, true, false, true, 2, DType::f16}, false},
      {{"bf16_m2_split", {}, 2, 96, 400, false, false, true, false, 3, DType::bf16}, true},
      {{"bf16_m7_n30_no_split", {}, 7, 30, 90, false, false, false, true, 1, DType::bf16}, false},
  };
  uint32_t seed = 700;
  for (const Case& c : cases) check_gemv(c.p, seed += 10, c.vec4);
}

// The automatic choice on a described H200-like device: the MLP's two batch-1 layers split K
// so that strips x slices give about 4 workgroups per SM; FUSOR_VK_GEMV_SPLIT=1 turns it off.
TEST(VulkanGemvChoice, SplitFillsTheDevice) {
  EnvGuard path("FUSOR_VK_GEMV", "new");
  unsetenv("FUSOR_VK_GEMV_SPLIT");
  vk::PhysicalDeviceInfo dev = testing::described_h200();
  auto spec = [](int64_t m, int64_t n, int64_t k) {
    KernelSpec s;
    s.matmul = MatMulDesc{};
    s.matmul->m = m, s.matmul->n = n, s.matmul->k = k;
    s.space = Shape{m, n};
    return s;
  };
  // 1024 -> 4096: 64 strips of 64 columns, K = 1024 in 8 slices of 128.
  vk::ContractionTiles t = vk::choose_tiles(spec(1, 4096, 1024), dev);
  EXPECT_EQ(t.skinny, 2);
  EXPECT_EQ(t.skinny_cols, 64);
  EXPECT_EQ(t.skinny_threads, 256);
  EXPECT_EQ(t.split_k, 8);
  EXPECT_EQ(t.split_slice, 128);
  // 4096 -> 1024: 16 strips, K = 4096 in 32 slices of 128 (512 workgroups).
  t = vk::choose_tiles(spec(1, 1024, 4096), dev);
  EXPECT_EQ(t.split_k, 32);
  EXPECT_EQ(t.split_slice, 128);
  EXPECT_GT(vk::splitk_workspace_bytes(t, spec(1, 1024, 4096)), 4 * 16 * 32 * 64);
  // M = 8 with 48 KiB of shared memory: 8 x 64 x 16 K groups x 4 bytes fits; 16 KiB does not.
  vk::PhysicalDeviceInfo small = dev;
  small.max_shared_memory = 16384;
  EXPECT_EQ(vk::choose_tiles(spec(8, 1024, 4096), small).skinny_threads, 64);
  {
    EnvGuard off("FUSOR_VK_GEMV_SPLIT", "1");
    EXPECT_EQ(vk::choose_tiles(spec(1, 1024, 4096), dev).split_k, 1);
  }
  {
    EnvGuard budget("FUSOR_VK_GEMV_SPLIT", "4");
    // A split that needs more workspace than the budget is not taken.
    EXPECT_EQ(vk::choose_tiles(spec(1, 1024, 4096), dev, 4, 64).split_k, 1);
  }
  // Wide layers fill the device with strips alone: no split.
  EXPECT_EQ(vk::choose_tiles(spec(1, 65536, 1024), dev).split_k, 1);
}

}  // namespace
}  // namespace fusor
