// Split-K in the Vulkan tiled GEMM (shaders/gemm.glsl FZ_SPLIT_K, vk_dialect.h choose_tiles):
// forced on with FUSOR_VK_SPLIT_K so lavapipe (few compute units: split-K rarely chosen by
// itself) runs it, compared with the reference on seeded random inputs (the arena starts
// poisoned), replayed with other inputs in between to prove the counters reset and the result
// is bit-identical run to run, and compared with the same kernel without split-K. Runs under
// the validation layer with synchronization validation, like test_vulkan.cpp.
#include <gtest/gtest.h>

#include "vulkan_gemm_fixture.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "backends/backend.h"
#include "backends/vulkan/vk_dialect.h"
#include "backends/vulkan/vulkan_backend.h"
#include "frontend/builder.h"
#include "ir/passes.h"
#include "test_util.h"

namespace fusor {
namespace {

using testing::Built;
using testing::EnvGuard;
using testing::Problem;
using testing::build;
using testing::dumped_sources;
using testing::random_tensor;

class VulkanSplitK : public testing::VulkanGemmTest {};

TEST_F(VulkanSplitK, SkinnyKHeavyMlpShape) {
  // The MLP block's second layer at batch 64: 16 output tiles of 64 x 64, K = 4096.
  check({"m64_n1024_k4096", {}, 64, 1024, 4096, false, false, false, true, 16}, 1);
}

TEST_F(VulkanSplitK, OddShapesViewsAndEpilogues) {
  const std::vector<Problem> ps = {
      {"bias_gelu_edges", {}, 37, 50, 1000, false, false, true, false, 3},  // K = 1000: last slice shorter
      {"residual", {}, 70, 33, 777, false, false, false, true, 4},
      {"batch_3", {3}, 29, 45, 600, false, false, true, false, 2},
      {"batch_2x2_transposed_b", {2, 2}, 20, 24, 300, false, true, false, true, 5},
      {"transposed_a", {}, 48, 40, 520, true, false, true, false, 4},
      {"transposed_both", {2}, 17, 66, 450, true, true, false, false, 3},
      {"m9_k8192", {}, 9, 40, 8192, false, false, true, false, 8},
      {"many_slices_short_k", {}, 40, 40, 100, false, false, false, false, 64},  // capped at K / BK slices
  };
  uint32_t seed = 10;
  for (const Problem& p : ps) check(p, seed += 10);
}

// Two split-K matmuls in one plan with different tile counts share the workspace: a kernel's
// partial tiles must never land on the other's counters. Found on the H200 (GPT-2's attention
// projection then its MLP: the MLP's tiles past the first kernel's counter region never ran
// their epilogue, leaving NaN); every kernel now declares the plan's largest counter region.
TEST_F(VulkanSplitK, ConsecutiveKernelsWithDifferentTileCountsShareTheWorkspace) {
  GraphBuilder b;
  const Tensor x = random_tensor(DType::f32, {32, 128}, 400), w1 = random_tensor(DType::f32, {128, 128}, 401),
               w2 = random_tensor(DType::f32, {128, 512}, 402);
  const int h = b.op("Relu", {b.op("MatMul", {b.input("x", DType::f32, {32, 128}), b.constant("w1", w1)})});
  b.output(b.op("MatMul", {h, b.constant("w2", w2)}));
  Graph g = b.build();
  make_static(g, {});
  const std::vector<Tensor> want = make_backend("ref")->compile(g, {})->run({x});
  std::unique_ptr<Executable> exe;
  {
    EnvGuard on("FUSOR_VK_SPLIT_K", "2");
    exe = vk_->compile(g, {});
  }
  EXPECT_EQ(vulkan_split_k_kernel_count(*exe), 2) << exe->notes();
  for (int run = 0; run < 3; ++run) compare(exe->run({x}), want, DType::f32);
}

TEST_F(VulkanSplitK, GemvPathAndForcedOffStillWork) {
  // M <= 8 keeps gemm.glsl's first GEMV path (FUSOR_VK_GEMV=old: it splits K inside a
  // workgroup) even when forced. The vector GEMV path's own split is test_vulkan_gemv.cpp's.
  EnvGuard old("FUSOR_VK_GEMV", "old");
  check({"m8_k8192", {}, 8, 40, 8192, false, false, true, false, 4}, 200, false);
}

TEST_F(VulkanSplitK, HalfStorageTypes) {
  // fp16 / bf16 share the tiled template (fp32 partials, the storage type only at the epilogue).
  // Devices with cooperative matrices may take gemm_coopmat.glsl for fp16 instead (no split).
  Problem f16{"f16", {2}, 40, 72, 640, false, false, true, false, 3, DType::f16};
  Problem bf16{"bf16", {}, 33, 64, 520, false, true, false, true, 4, DType::bf16};
  for (const Problem& p : {f16, bf16}) {
    bool split = true;
    if (p.dtype == DType::f16) {
      Built b = build(p, 300);
      split = vulkan_coopmat_kernel_count(*vk_->compile(b.g, {})) == 0;
    }
    check(p, 300, split);
  }
}

TEST_F(VulkanSplitK, VectorLoadsAndScalarFallback) {
  // fp32 operands with unit stride along A's K / B's N and 16-byte aligned 4-groups are staged
  // with vec4 loads (FZ_A_VEC4 / FZ_B_VEC4); a view at an odd offset, a transposed operand or
  // FUSOR_VK_GEMM_VEC4=0 keeps scalar loads. A is a Slice of x [40, 308] (a free view): columns
  // from `first`, so offset 4 keeps vec4 and offset 2 does not.
  for (const char* vec4 : {"1", "0"})
    for (int64_t first : {4, 2}) {
      SCOPED_TRACE(std::string("FUSOR_VK_GEMM_VEC4=") + vec4 + " first column " + std::to_string(first));
      const std::filesystem::path dir =
          std::filesystem::temp_directory_path() / ("fusor_vec4_" + std::to_string(::getpid()) + "_" + vec4 + std::to_string(first));
      std::filesystem::remove_all(dir);
      std::filesystem::create_directories(dir);
      EnvGuard knob("FUSOR_VK_GEMM_VEC4", vec4);
      EnvGuard dump("FUSOR_VK_DUMP_DIR", dir.string());
      EnvGuard split("FUSOR_VK_SPLIT_K", "2");
      GraphBuilder b;
      int x = b.input("x", DType::f32, {40, 308});
      int w = b.input("w", DType::f32, {300, 68});
      auto ints = [](std::vector<int64_t> v) {
        Tensor t(DType::i64, {static_cast<int64_t>(v.size())});
        for (size_t i = 0; i < v.size(); ++i) t.set_int(static_cast<int64_t>(i), v[i]);
        return t;
      };
      int a = b.op("Slice", {x, b.constant("starts", ints({first})), b.constant("ends", ints({first + 300})),
                             b.constant("axes", ints({1}))});
      int y = b.op("Gelu", {b.op("MatMul", {a, w})});
      b.output(y);
      Graph g = b.build();
      make_static(g, {});
      const std::vector<Tensor> in = {random_tensor(DType::f32, {40, 308}, 400), random_tensor(DType::f32, {300, 68}, 401)};
      auto exe = vk_->compile(g, {});
      EXPECT_EQ(vulkan_split_k_kernel_count(*exe), 1) << exe->notes();
      compare(exe->run(in), make_backend("ref")->compile(g, {})->run(in), DType::f32);
      const std::string src = dumped_sources(dir);
      EXPECT_NE(src.find("FZ_TILES"), std::string::npos) << "no matmul kernel dumped";
      const bool on = std::string(vec4) == "1";
      EXPECT_EQ(src.find("#define FZ_A_VEC4 1") != std::string::npos, on && first == 4);
      EXPECT_EQ(src.find("#define FZ_B_VEC4 1") != std::string::npos, on);
      std::filesystem::remove_all(dir);
    }
}

// FUSOR_VK_GEMM_PREFETCH=2 (two K slices in flight, a second register set) adds the same
// products in the same order: bit-identical outputs to the one-slice loop, on the interleaved
// and the blocked tiles, with and without split-K, for even and odd step counts and a K tail.
TEST_F(VulkanSplitK, TwoSlicePrefetchGivesTheSameBits) {
  const std::vector<Problem> ps = {
      {"k48_three_steps", {}, 64, 64, 48, false, false, false, false, 1},
      {"k1000_tail_bias_gelu", {}, 37, 50, 1000, false, false, true, false, 3},
      {"batch_2_transposed_b", {2}, 20, 72, 300, false, true, false, true, 2},
      {"k16_one_step", {}, 64, 64, 16, false, false, false, false, 1},
  };
  uint32_t seed = 500;
  for (const char* family : {"4x4", "4x4b"})
    for (const Problem& p : ps) {
      SCOPED_TRACE(std::string(family) + " " + p.name);
      Built b = build(p, seed += 7);
      EnvGuard tile("FUSOR_VK_GEMM_TILE", family);
      EnvGuard split("FUSOR_VK_SPLIT_K", std::to_string(p.slices));
      std::vector<Tensor> one, two;
      {
        EnvGuard off("FUSOR_VK_GEMM_PREFETCH", "1");
        one = vk_->compile(b.g, {})->run(b.inputs);
      }
      {
        EnvGuard on("FUSOR_VK_GEMM_PREFETCH", "2");
        two = vk_->compile(b.g, {})->run(b.inputs);
      }
      compare(two, make_backend("ref")->compile(b.g, {})->run(b.inputs), p.dtype);
      ASSERT_EQ(one.size(), two.size());
      for (size_t i = 0; i < one.size(); ++i) {
        ASSERT_EQ(one[i].nbytes(), two[i].nbytes());
        EXPECT_EQ(std::memcmp(one[i].raw(), two[i].raw(), one[i].nbytes()), 0) << "output " << i;
      }
    }
}

// choose_tiles' own decision on a described H200-like device (132 SMs, 48 KiB shared), on the
// 4x4 register blocks (test_vulkan_gemm_tiles.cpp checks the blocked tiles' choice).
TEST(VulkanSplitKChoice, TileGridDecidesSlices) {
  unsetenv("FUSOR_VK_SPLIT_K");
  EnvGuard family("FUSOR_VK_GEMM_TILE", "4x4");
  vk::PhysicalDeviceInfo dev = testing::described_h200();
  auto spec = [](int64_t batch, int64_t m, int64_t n, int64_t k) {
    KernelSpec s;
    s.matmul = MatMulDesc{};
    s.matmul->m = m, s.matmul->n = n, s.matmul->k = k;
    s.space = batch > 1 ? Shape{batch, m, n} : Shape{m, n};
    return s;
  };
  // MLP batch 64, second layer: 16 tiles of 64 x 64 on 132 units -> 8 slices of 512 (128
  // workgroups, at most one per unit; 9 would give 12 units two).
  KernelSpec w2 = spec(1, 64, 1024, 4096);
  vk::ContractionTiles t = vk::choose_tiles(w2, dev);
  EXPECT_EQ(t.bm, 64);
  EXPECT_EQ(t.bn, 64);
  EXPECT_EQ(t.split_k, 8);
  EXPECT_EQ(t.split_slice, 512);
  EXPECT_EQ(vk::splitk_workspace_bytes(t, w2), 4 * 16 + int64_t{4} * 8 * 16 * 64 * 64);
  {
    // The previous rule: the smallest count that fills the units, ceil(132 / 16) = 9 slices.
    EnvGuard fill("FUSOR_VK_SPLIT_RULE", "fill");
    t = vk::choose_tiles(w2, dev);
    EXPECT_EQ(t.split_k, 9);
    EXPECT_EQ(t.split_slice, 464);
  }
  // First layer: 64 tiles, K = 1024 -> 2 slices of 512 (3 would put 192 workgroups on 132
  // units: the busiest runs 2 x 1/3 of K, against 1/2).
  t = vk::choose_tiles(spec(1, 64, 4096, 1024), dev);
  EXPECT_EQ(t.split_k, 2);
  EXPECT_EQ(t.split_slice, 512);
  // Slices cover K in whole BK steps, none empty.
  t = vk::choose_tiles(spec(1, 100, 100, 3000), dev);
  ASSERT_GT(t.split_k, 1);
  EXPECT_EQ(t.split_slice % t.bk, 0);
  EXPECT_GE(t.split_slice * t.split_k, 3000);
  EXPECT_LT(t.split_slice * (t.split_k - 1), 3000);
  // Enough tiles already, or K too short for two slices of 192: no split.
  EXPECT_EQ(vk::choose_tiles(spec(1, 2048, 1024, 4096), dev).split_k, 1);  // 512 tiles
  EXPECT_EQ(vk::choose_tiles(spec(1, 64, 64, 380), dev).split_k, 1);
  EXPECT_EQ(vk::choose_tiles(spec(1, 64, 64, 384), dev).split_k, 2);
  // GPT-2's M = 64 layers (12 tiles on 132 units): K 768 in 4 slices of 192 (3 of 256 before),
  // 3072 in 11 (the balanced count, as before).
  EXPECT_EQ(vk::choose_tiles(spec(1, 64, 768, 768), dev).split_k, 4);
  EXPECT_EQ(vk::choose_tiles(spec(1, 64, 768, 3072), dev).split_k, 11);
  // A workspace budget too small: no split (the tiles shrink as before instead).
  t = vk::choose_tiles(w2, dev, 4, 1024);
  EXPECT_EQ(t.split_k, 1);
  EXPECT_LT(t.bm * t.bn, 64 * 64);
  // The knob: 1 turns it off, N forces N slices.
  setenv("FUSOR_VK_SPLIT_K", "1", 1);
  EXPECT_EQ(vk::choose_tiles(w2, dev).split_k, 1);
  setenv("FUSOR_VK_SPLIT_K", "3", 1);
  t = vk::choose_tiles(spec(1, 1024, 1024, 4096), dev);
  EXPECT_EQ(t.split_k, 3);
  EXPECT_EQ(t.split_slice, 1376);  // ceil(4096 / 3) rounded up to BK = 16
  unsetenv("FUSOR_VK_SPLIT_K");
}

}  // namespace
}  // namespace fusor
