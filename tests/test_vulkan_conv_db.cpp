// The double-buffered implicit-GEMM K loop of the Vulkan convolution (shaders/conv.glsl
// FZ_CONV_DB, the default) and the previous one it replaced (FUSOR_VK_CONV_DB=0, kept for the
// A/B on the GPU): both against the reference on seeded random inputs (the arena starts
// poisoned, so an unwritten output fails), over shapes that exercise the edges of the loop:
// 3x3 pad 1 stride 1 and 2, 1x1, grouped and dilated, image and channel counts that are not
// multiples of the tile, reductions (C/G x R x S) with a tail shorter than BK, with and without
// split-K, 64 x 64 tiles (FUSOR_VK_CONV_SHRINK=0) and the shrunk ones. The double-buffered loop
// loads the weights 4-wide (FZ_W_VEC4) when C/G x R x S % 4 == 0; those cases also run with
// scalar loads (FUSOR_VK_GEMM_VEC4=0). Each compiled executable is replayed with other inputs
// in between and must give bit-identical results.
#include <gtest/gtest.h>

#include "vulkan_gemm_fixture.h"

#include "backends/backend.h"
#include "backends/vulkan/vk_dialect.h"
#include "backends/vulkan/vulkan_backend.h"
#include "frontend/builder.h"
#include "ir/passes.h"
#include "test_util.h"

#include <optional>
#include <string>

namespace fusor {
namespace {

using testing::EnvGuard;
using testing::random_tensor;

struct DbCase {
  const char* name;
  int64_t n, c, h, w, k, r, s, stride, pad, dil, groups;
  bool relu, residual;
  int slices;        // FUSOR_VK_SPLIT_K: 1 off, >= 2 forced
  bool keep_64x64;   // FUSOR_VK_CONV_SHRINK=0
};

class VulkanConvDb : public testing::VulkanGemmTest {
 protected:
  void TearDown() override {
    unsetenv("FUSOR_VK_CONV_TILE");
    unsetenv("FUSOR_VK_CONV_DB");
    unsetenv("FUSOR_VK_CONV_SHRINK");
    testing::VulkanGemmTest::TearDown();
  }

  // One case on one K loop (double_buffered: the default; else FUSOR_VK_CONV_DB=0), the
  // double-buffered one with 4-wide weight loads where they fit (vec4) or scalar ones.
  void check_loop(const DbCase& p, uint32_t seed, bool double_buffered, bool vec4) {
    SCOPED_TRACE(std::string(p.name) + (double_buffered ? vec4 ? " double-buffered" : " double-buffered FUSOR_VK_GEMM_VEC4=0" : " FUSOR_VK_CONV_DB=0"));
    const testing::ConvProblem cp = testing::make_conv_problem(p, seed);
    const Graph& g = cp.g;
    const std::vector<Tensor>& in = cp.in;
    const std::vector<Tensor>& other = cp.other;
    const std::vector<Tensor>& want = cp.want;
    const std::vector<Tensor>& want_other = cp.want_other;
    std::unique_ptr<Executable> exe;
    {
      EnvGuard split("FUSOR_VK_SPLIT_K", std::to_string(p.slices));
      std::optional<EnvGuard> db, shrink, scalar;
      if (!double_buffered) db.emplace("FUSOR_VK_CONV_DB", "0");
      if (!vec4) scalar.emplace("FUSOR_VK_GEMM_VEC4", "0");
      if (p.keep_64x64) shrink.emplace("FUSOR_VK_CONV_SHRINK", "0");
      exe = vk_->compile(g, {});
    }
    // The knob reached the kernel: one implicit-GEMM conv, on the loop asked for.
    EXPECT_EQ(vulkan_conv_gemm_kernel_count(*exe, double_buffered), 1) << exe->notes();
    EXPECT_EQ(vulkan_conv_gemm_kernel_count(*exe, !double_buffered), 0) << exe->notes();
    EXPECT_EQ(vulkan_split_k_kernel_count(*exe), p.slices > 1 ? 1 : 0) << exe->notes();
    const bool wide = double_buffered && vec4 && p.c / p.groups * p.r * p.s % 4 == 0;
    if (double_buffered)
      EXPECT_NE(exe->notes().find(wide ? "(1 with 4-wide weight loads)" : "(0 with 4-wide weight loads)"), std::string::npos) << exe->notes();
    const std::vector<Tensor> first = exe->run(in);
    compare(first, want, DType::f32);
    compare(exe->run(other), want_other, DType::f32);
    const std::vector<Tensor> again = exe->run(in);
    ASSERT_EQ(again.size(), first.size());
    for (size_t i = 0; i < first.size(); ++i) EXPECT_TRUE(testing::bit_identical(again[i], first[i])) << "output " << i << " changed between replays";
  }

  // One case on blocked register tiles (FUSOR_VK_CONV_TILE=TMxTN, 16 x 16 threads): against the
  // reference, bit-identical to the interleaved 4x4 tiles (the same kd order per output), and
  // the notes name the blocked conv where its sides fill the tile (else the interleaved one).
  void check_blocked(const DbCase& p, uint32_t seed, const char* mode, int tm, int tn) {
    SCOPED_TRACE(std::string(p.name) + " FUSOR_VK_CONV_TILE=" + mode);
    const testing::ConvProblem cp = testing::make_conv_problem(p, seed);
    std::unique_ptr<Executable> blocked, interleaved;
    {
      EnvGuard split("FUSOR_VK_SPLIT_K", std::to_string(p.slices));
      EnvGuard shrink("FUSOR_VK_CONV_SHRINK", "0");
      {
        EnvGuard tile("FUSOR_VK_CONV_TILE", mode);
        blocked = vk_->compile(cp.g, {});
      }
      EnvGuard tile("FUSOR_VK_CONV_TILE", "interleaved");
      interleaved = vk_->compile(cp.g, {});
    }
    const int64_t m = p.k / p.groups, n = p.n * ((p.h + 2 * p.pad - p.dil * (p.r - 1) - 1) / p.stride + 1) *
                                             ((p.w + 2 * p.pad - p.dil * (p.s - 1) - 1) / p.stride + 1);
    const bool fits = m >= 16 * tm / 2 && n >= 16 * tn;
    EXPECT_EQ(vulkan_blocked_kernel_count(*blocked), fits ? 1 : 0) << blocked->notes();
    EXPECT_EQ(vulkan_blocked_kernel_count(*interleaved), 0) << interleaved->notes();
    if (fits)
      EXPECT_NE(blocked->notes().find("1 conv kernel(s) on blocked register tiles (" + std::to_string(16 * tm) + "x" +
                                      std::to_string(16 * tn) + " " + std::to_string(tm) + "x" + std::to_string(tn) + ")"),
                std::string::npos)
          << blocked->notes();
    const std::vector<Tensor> got = blocked->run(cp.in);
    compare(got, cp.want, DType::f32);
    const std::vector<Tensor> ref_tiles = interleaved->run(cp.in);
    ASSERT_EQ(got.size(), ref_tiles.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(testing::bit_identical(got[i], ref_tiles[i])) << "output " << i << " differs from the 4x4 tiles";
    compare(blocked->run(cp.other), cp.want_other, DType::f32);
  }

  void check(const DbCase& p, uint32_t seed) {
    check_loop(p, seed, true, true);
    if (p.c / p.groups * p.r * p.s % 4 == 0) check_loop(p, seed, true, false);
    check_loop(p, seed, false, true);
  }
};

TEST_F(VulkanConvDb, ShapesMatchReferenceOnBothLoops) {
  const std::vector<DbCase> cs = {
      // K = 19 x 9 = 171: ten full BK = 16 slices and a tail of 11; 37 channels, 2 x 13 x 11 columns.
      {"3x3_s1_odd", 2, 19, 13, 11, 37, 3, 3, 1, 1, 1, 1, true, false, 1, false},
      {"3x3_s1_odd_64x64", 2, 19, 13, 11, 37, 3, 3, 1, 1, 1, 1, true, false, 1, true},
      {"3x3_s2_residual", 1, 32, 15, 15, 48, 3, 3, 2, 1, 1, 1, false, true, 1, false},
      {"1x1_k20", 3, 20, 9, 7, 70, 1, 1, 1, 0, 1, 1, false, false, 1, false},          // K = 20: a tail of 4
      {"1x1_s2_64x64", 2, 64, 14, 14, 96, 1, 1, 2, 0, 1, 1, true, false, 1, true},
      {"groups3_dil2", 2, 24, 12, 10, 36, 3, 3, 1, 2, 2, 3, true, false, 1, false},   // per group: 12 x 8 x 9
      {"5x5_pad2_s2", 1, 6, 17, 19, 20, 5, 5, 2, 2, 1, 1, false, false, 1, true},      // K = 150
      // Split-K: the last slice shorter than the others and than BK's multiple.
      {"3x3_split3", 1, 64, 7, 7, 40, 3, 3, 1, 1, 1, 1, true, true, 3, false},        // K = 576
      {"3x3_split4_odd", 1, 37, 9, 9, 70, 3, 3, 2, 1, 1, 1, false, false, 4, true},   // K = 333
      {"groups2_split2", 2, 32, 10, 10, 24, 3, 3, 1, 2, 2, 2, true, false, 2, false},
  };
  uint32_t seed = 1200;
  for (const DbCase& c : cs) check(c, seed += 10);
}

// Blocked register tiles (conv.glsl FZ_BLOCKED) on every block shape, with split-K, groups,
// dilations, strides and a residual epilogue.
TEST_F(VulkanConvDb, BlockedTilesMatchReferenceAndTheInterleavedBits) {
  const std::vector<DbCase> cs = {
      {"3x3_s1_k130", 2, 19, 13, 11, 130, 3, 3, 1, 1, 1, 1, true, false, 1, false},   // 286 columns, K = 171
      {"3x3_s2_residual", 2, 32, 23, 23, 72, 3, 3, 2, 1, 1, 1, false, true, 1, false},  // 288 columns, K = 288
      {"1x1_k200", 3, 20, 9, 7, 200, 1, 1, 1, 0, 1, 1, false, false, 1, false},        // K = 20
      {"groups2_dil2", 2, 24, 14, 12, 160, 3, 3, 1, 2, 2, 2, true, false, 1, false},   // per group: 80 x 12 x 9
      {"3x3_split3", 1, 64, 12, 12, 140, 3, 3, 1, 1, 1, 1, true, true, 3, false},      // K = 576 in 3 slices
  };
  const std::pair<const char*, std::pair<int, int>> modes[] = {{"4x4b", {4, 4}}, {"4x8", {4, 8}}, {"8x4", {8, 4}}, {"8x8", {8, 8}}};
  uint32_t seed = 1600;
  for (const DbCase& c : cs)
    for (const auto& [mode, b] : modes) check_blocked(c, seed += 10, mode, b.first, b.second);
}

// The default choice (FUSOR_VK_CONV_TILE=auto) on a described H200-like device (132 compute
// units, 48 KiB shared, 1024 invocations), ResNet-18's layers at batch 32: blocked tiles only for
// reductions of >= 1024 whose tiles are full on both sides and give every unit one (128 channels
// on 28 x 28: 8x8; 256 on 14 x 14: 8x4; 512 on 7 x 7: 4x4), the interleaved ones otherwise.
TEST(VulkanConvTileChoice, BlockedOnlyForLongReductionsThatFillTheDevice) {
  unsetenv("FUSOR_VK_CONV_TILE");
  unsetenv("FUSOR_VK_SPLIT_K");
  vk::PhysicalDeviceInfo dev = testing::described_h200();
  const auto conv = [](int64_t n, int64_t c, int64_t hw, int64_t k, int64_t rs, int64_t stride) {
    KernelSpec s;
    s.conv = ConvDesc{};
    ConvDesc& d = *s.conv;
    d.n = n, d.c = c, d.h = d.w = hw, d.k = k, d.r = d.s = rs, d.stride_h = d.stride_w = stride;
    d.pad_h = d.pad_w = rs / 2;
    d.oh = d.ow = (hw + 2 * (rs / 2) - rs) / stride + 1;
    s.space = Shape{n, k, d.oh, d.ow};
    return s;
  };
  struct Want {
    KernelSpec spec;
    int blocked, tm, tn;
  };
  const std::vector<Want> cases = {
      {conv(32, 128, 28, 128, 3, 1), 1, 8, 8},  // K 1152, 196 tiles of 128 x 128
      {conv(32, 256, 14, 256, 3, 1), 1, 8, 4},  // 98 tiles of 128 x 128, 196 of 128 x 64
      {conv(32, 512, 7, 512, 3, 1), 1, 4, 4},   // 52 / 100 tiles, 200 of 64 x 64
      {conv(32, 64, 56, 64, 3, 1), 0, 4, 4},    // K 576
      {conv(32, 256, 14, 512, 1, 2), 0, 4, 4},  // a 1x1 downsample, K 256
      {conv(32, 3, 224, 64, 7, 2), 0, 4, 4},    // the stem, K 147
      {conv(1, 256, 14, 256, 3, 1), 0, 4, 4},   // batch 1: 4 x 4 tiles of 64 x 64, fewer than the units
  };
  for (const Want& w : cases) {
    const ConvDesc& d = *w.spec.conv;
    SCOPED_TRACE(std::to_string(d.n) + "x" + std::to_string(d.c) + "x" + std::to_string(d.h) + " K " + std::to_string(d.k) + " " +
                 std::to_string(d.r) + "x" + std::to_string(d.s));
    const vk::ContractionTiles t = vk::choose_tiles(w.spec, dev);
    EXPECT_EQ(t.conv_direct, 0);
    EXPECT_EQ(t.blocked, w.blocked);
    if (w.blocked) {
      EXPECT_EQ(t.tm, w.tm);
      EXPECT_EQ(t.tn, w.tn);
      EXPECT_EQ(t.bm, 16 * w.tm);
      EXPECT_EQ(t.bn, 16 * w.tn);
      EXPECT_EQ(t.threads(), 256);
    }
  }
  // A device that reports no unit count (most non-NVIDIA, non-AMD drivers) counts as 64 units, as
  // split-K assumes: a small grid (2 x 10 x 10 at 128 channels: 2 tiles) stays interleaved.
  vk::PhysicalDeviceInfo unknown = dev;
  unknown.compute_units = 0;
  EXPECT_EQ(vk::choose_tiles(cases[2].spec, unknown).blocked, 1);
  EXPECT_EQ(vk::choose_tiles(conv(2, 128, 10, 128, 3, 1), unknown).blocked, 0);
  EnvGuard off("FUSOR_VK_CONV_TILE", "interleaved");
  EXPECT_EQ(vk::choose_tiles(cases[0].spec, dev).blocked, 0);
}

// The default choice run on this device (blocked where its units are few enough, e.g. lavapipe's):
// against the reference, and without split-K (which adds partial sums: other bits) bit-identical
// to the interleaved tiles.
TEST_F(VulkanConvDb, AutomaticChoiceMatchesReferenceAndTheInterleavedBits) {
  const std::vector<DbCase> cs = {
      {"3x3_c128_k128", 2, 128, 10, 10, 128, 3, 3, 1, 1, 1, 1, true, true, 1, false},
      {"3x3_c130_k64", 1, 130, 9, 9, 64, 3, 3, 1, 1, 1, 1, false, false, 1, false},
      {"3x3_c64_k128", 2, 64, 10, 10, 128, 3, 3, 1, 1, 1, 1, true, false, 1, false},
  };
  uint32_t seed = 1800;
  for (const DbCase& c : cs) {
    SCOPED_TRACE(c.name);
    const testing::ConvProblem cp = testing::make_conv_problem(c, seed += 10);
    std::unique_ptr<Executable> automatic = vk_->compile(cp.g, {}), unsplit, interleaved;
    {
      EnvGuard split("FUSOR_VK_SPLIT_K", "1");
      unsplit = vk_->compile(cp.g, {});
      EnvGuard tile("FUSOR_VK_CONV_TILE", "interleaved");
      interleaved = vk_->compile(cp.g, {});
    }
    compare(automatic->run(cp.in), cp.want, DType::f32);
    const std::vector<Tensor> got = unsplit->run(cp.in), base = interleaved->run(cp.in);
    compare(got, cp.want, DType::f32);
    ASSERT_EQ(got.size(), base.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_TRUE(testing::bit_identical(got[i], base[i])) << "output " << i << "\n" << unsplit->notes() << "\n" << interleaved->notes();
  }
}

// The smallest tiles (17 channels on 17 x 17 shrink to 16 x 16, one output per thread: TM =
// TN = 1), mostly padding on the channel side, with a residual epilogue.
TEST_F(VulkanConvDb, SmallPaddedTilesMatchReference) {
  check({"16x16_tiles", 1, 16, 17, 17, 17, 3, 3, 1, 1, 1, 1, true, true, 1, false}, 1400);
}

}  // namespace
}  // namespace fusor
