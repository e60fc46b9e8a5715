// The tiled Vulkan GEMM's fast path for every operand type and its bigger register blocks
// (shaders/gemm.glsl, vk_dialect.h choose_tiles):
//   - fp16 / bf16 operands (off the cooperative matrices: FUSOR_VK_COOPMAT=0, or lavapipe) get
//     split-K and 4-wide loads (an f16vec4 / a uvec2 of packed bf16) like fp32's vec4, on the
//     4x4 and the blocked tiles, checked against ref within the bf16 / fp16 tolerances;
//   - the blocked tiles (FZ_BLOCKED: 64 x 128 with 4x8 blocks, 128 x 64 with 8x4, 128 x 128 with
//     8x8; FUSOR_VK_GEMM_TILE=8x8) on fp32 shapes that are no tile multiples, batched,
//     transposed, with bias + GELU and residual epilogues, with and without split-K;
//   - choose_tiles' choice of the family on a described H200-like device.
// Every run asserts the path it meant to take (split-K and blocked-kernel counts, the 4-wide
// load macros and view types in the kernel source). Lavapipe runs them here (small shapes).
#include <gtest/gtest.h>

#include <array>

#include <optional>
#include <string>

#include "backends/vulkan/vk_dialect.h"
#include "backends/vulkan/vk_executable.h"
#include "vulkan_gemm_fixture.h"

namespace fusor {
namespace {

using testing::EnvGuard;
using testing::Problem;

// The generated source of e's matmul kernel ("" when it has none).
std::string matmul_source(const Executable& e) {
  auto* v = dynamic_cast<const vk::VulkanExecutable*>(&e);
  if (!v) return "";
  for (const std::string& s : v->kernel_sources())
    if (s.find("FZ_TILES") != std::string::npos) return s;
  return "";
}

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

class VulkanGemmTiles : public testing::VulkanGemmTest {
 protected:
  void TearDown() override {
    unsetenv("FUSOR_VK_COOPMAT");
    VulkanGemmTest::TearDown();
  }
};

// fp16 and bf16 matmuls on the tiled template: split-K forced, 4-wide loads on (where the
// operand's layout allows) and off, 4x4 and blocked tiles. a_vec / b_vec: whether A / B can be
// read 4 at a time (unit stride along A's K / B's N, K / N multiples of 4).
TEST_F(VulkanGemmTiles, HalfOperandsTakeSplitKAndVectorLoads) {
  EnvGuard no_coopmat("FUSOR_VK_COOPMAT", "0");
  struct Case {
    Problem p;
    bool a_vec, b_vec;
  };
  const std::vector<Case> cases = {
      // The MLP's second layer shape (M = 64, K-heavy), smaller for lavapipe, residual epilogue.
      {{"m64_n256_k2048_residual", {}, 64, 256, 2048, false, false, false, true, 4}, true, true},
      // N not a multiple of 4 (B scalar), M and N no tile multiples, K = 1000 (A 4-wide).
      {{"bias_gelu_edges", {}, 37, 50, 1000, false, false, true, false, 3}, true, false},
      {{"batch_3_bias_gelu", {3}, 29, 132, 600, false, false, true, false, 2}, true, true},
      // Transposed B (unit stride along K): scalar B loads, 4-wide A.
      {{"batch_2x2_transposed_b", {2, 2}, 20, 24, 300, false, true, false, true, 2}, true, false},
      // Transposed A (unit stride along M): scalar A loads, 4-wide B.
      {{"transposed_a", {}, 48, 72, 520, true, false, true, false, 4}, false, true},
  };
  uint32_t seed = 500;
  for (DType t : {DType::bf16, DType::f16})
    for (const char* family : {"4x4", "8x8"})
      for (const char* vec : {"1", "0"}) {
        if (std::string(family) == "8x8" && std::string(vec) == "0") continue;  // scalar loads: covered on 4x4
        EnvGuard tile("FUSOR_VK_GEMM_TILE", family);
        EnvGuard vec4("FUSOR_VK_GEMM_VEC4", vec);
        for (Case c : cases) {
          c.p.dtype = t;
          SCOPED_TRACE(std::string(dtype_name(t)) + " FUSOR_VK_GEMM_TILE=" + family + " FUSOR_VK_GEMM_VEC4=" + vec);
          const bool on = std::string(vec) == "1", blocked = std::string(family) == "8x8";
          check(c.p, seed += 10, true, [&](const Executable& e, bool) {
            EXPECT_EQ(vulkan_coopmat_kernel_count(e), 0) << e.notes();
            EXPECT_EQ(vulkan_blocked_kernel_count(e), blocked ? 1 : 0) << e.notes();
            const std::string src = matmul_source(e);
            ASSERT_FALSE(src.empty());
            EXPECT_EQ(has(src, "#define FZ_A_VEC4 1"), on && c.a_vec) << src.substr(0, 4000);
            EXPECT_EQ(has(src, "#define FZ_B_VEC4 1"), on && c.b_vec) << src.substr(0, 4000);
            const std::string view = t == DType::bf16 ? "{ uvec2 d[]; }" : "{ f16vec4 d[]; }";
            EXPECT_EQ(has(src, view), on && (c.a_vec || c.b_vec));
            if (on && t == DType::bf16 && (c.a_vec || c.b_vec)) EXPECT_TRUE(has(src, "fz_bf16x4(b")) << "packed loads not converted";
          });
        }
      }
}

// The blocked register tiles forced on fp32 shapes of each block shape, with split-K (check
// forces it) and without (check's second compile), vec4 loads on and off.
TEST_F(VulkanGemmTiles, BlockedTilesFp32) {
  EnvGuard tile("FUSOR_VK_GEMM_TILE", "8x8");
  struct Case {
    Problem p;
    const char* label;  // the notes' "BMxBN TMxTN"
  };
  const std::vector<Case> cases = {
      {{"m150_n200_8x8_bias_gelu", {}, 150, 200, 300, false, false, true, false, 2}, "128x128 8x8"},
      {{"m64_n300_4x8_residual", {}, 64, 300, 512, false, false, false, true, 4}, "64x128 4x8"},
      {{"m130_n64_8x4_transposed_a", {}, 130, 64, 260, true, false, true, false, 3}, "128x64 8x4"},
      {{"batch_2_transposed_b_8x8", {2}, 129, 131, 200, false, true, false, true, 2}, "128x128 8x8"},
      {{"small_m_n_4x4_blocked", {}, 40, 36, 100, false, false, true, false, 2}, "64x64 4x4"},
  };
  uint32_t seed = 900;
  for (const char* vec : {"1", "0"}) {
    EnvGuard vec4("FUSOR_VK_GEMM_VEC4", vec);
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string("FUSOR_VK_GEMM_VEC4=") + vec);
      check(c.p, seed += 10, true, [&](const Executable& e, bool) {
        EXPECT_EQ(vulkan_blocked_kernel_count(e), 1) << e.notes();
        EXPECT_TRUE(has(e.notes(), std::string("blocked register tiles (") + c.label + ")")) << e.notes();
        EXPECT_TRUE(has(matmul_source(e), "#define FZ_BLOCKED 1"));
      });
    }
  }
}

// FUSOR_VK_GEMM_TILE=4x4b: 64 x 64 tiles with 4x4 blocks in the blocked layout on shapes that
// would otherwise take the interleaved ones, edges, transposes and a batch, split and not.
TEST_F(VulkanGemmTiles, BlockedFourByFourTilesMatchReference) {
  EnvGuard tile("FUSOR_VK_GEMM_TILE", "4x4b");
  const std::vector<Problem> cases = {
      {"m64_n300_k512_residual", {}, 64, 300, 512, false, false, false, true, 4},
      {"m100_n130_k600_bias_gelu_transposed_a", {}, 100, 130, 600, true, false, true, false, 3},
      {"batch_2_m70_n66_k96_transposed_b", {2}, 70, 66, 96, false, true, false, true, 2},
  };
  uint32_t seed = 1700;
  for (const Problem& p : cases)
    check(p, seed += 10, true, [&](const Executable& e, bool) {
      EXPECT_EQ(vulkan_blocked_kernel_count(e), 1) << e.notes();
      EXPECT_TRUE(has(e.notes(), "blocked register tiles (64x64 4x4)")) << e.notes();
    });
}

// FUSOR_VK_GEMM_LITERAL=1: the same tiles with their sizes as literals, on the default 4x4
// tiles, the bigger interleaved blocks (FUSOR_VK_GEMM_TILES), BK = 8 and the blocked tiles.
TEST_F(VulkanGemmTiles, LiteralTileSizesMatchReference) {
  EnvGuard literal("FUSOR_VK_GEMM_LITERAL", "1");
  const testing::Problem p = {"m64_n300_k512_bias_gelu_residual", {}, 64, 300, 512, false, false, true, true, 2};
  uint32_t seed = 1500;
  for (const char* cfg : {"", "FUSOR_VK_GEMM_TILES=64,64,8,4", "FUSOR_VK_GEMM_TILES=64,64,8,8", "FUSOR_VK_GEMM_BK=8",
                          "FUSOR_VK_GEMM_TILE=8x8"}) {
    SCOPED_TRACE(cfg);
    const std::string kv = cfg, name = kv.substr(0, kv.find('=')), value = kv.empty() ? "" : kv.substr(kv.find('=') + 1);
    std::optional<EnvGuard> knob;
    if (!kv.empty()) knob.emplace(name.c_str(), value);
    check(p, seed += 10, true, [&](const Executable& e, bool) {
      const std::string src = matmul_source(e);
      EXPECT_TRUE(has(src, "#define FZ_TILE_LITERALS 1")) << e.notes();
      if (name == "FUSOR_VK_GEMM_TILES") EXPECT_TRUE(has(src, "#define FZ_TILE_TM 8"));
      if (name == "FUSOR_VK_GEMM_BK") EXPECT_TRUE(has(src, "#define FZ_TILE_BK 8"));
      if (name == "FUSOR_VK_GEMM_TILE") EXPECT_EQ(vulkan_blocked_kernel_count(e), 1) << e.notes();
    });
  }
}

// FUSOR_VK_GEMM_TILE=4x4 keeps the interleaved blocks where the automatic choice would block.
TEST_F(VulkanGemmTiles, FourByFourKnobKeepsInterleavedBlocks) {
  EnvGuard tile("FUSOR_VK_GEMM_TILE", "4x4");
  check({"m64_n300_k512", {}, 64, 300, 512, false, false, true, true, 2}, 1300, true, [](const Executable& e, bool) {
    EXPECT_EQ(vulkan_blocked_kernel_count(e), 0) << e.notes();
    EXPECT_FALSE(has(matmul_source(e), "#define FZ_BLOCKED 1"));
  });
}

KernelSpec matmul_spec(int64_t batch, int64_t m, int64_t n, int64_t k) {
  KernelSpec s;
  s.matmul = MatMulDesc{};
  s.matmul->m = m, s.matmul->n = n, s.matmul->k = k;
  s.space = batch > 1 ? Shape{batch, m, n} : Shape{m, n};
  return s;
}

// choose_tiles on a described H200-like device (132 SMs, 48 KiB shared, 1024 invocations).
// A K too short to split 64 x 64 tiles over half the units: 32 x 32 tiles fill more of them
// (GPT-2's 64 x 768 x 768: 12 blocked tiles x 4 slices -> 48 tiles x 4 slices); shapes whose
// split fills the grid (GPT-2's other layers, BERT-base's 128 rows) keep the blocked tiles.
TEST(VulkanGemmTilesChoice, SmallGridsTakeSmallerTiles) {
  unsetenv("FUSOR_VK_SPLIT_K");
  unsetenv("FUSOR_VK_GEMM_TILE");
  unsetenv("FUSOR_VK_GEMM_BK");
  const vk::PhysicalDeviceInfo dev = testing::described_h200();
  const KernelSpec proj = matmul_spec(1, 64, 768, 768);
  vk::ContractionTiles t = vk::choose_tiles(proj, dev);
  EXPECT_EQ(t.blocked, 0);
  EXPECT_EQ(t.bm, 32);
  EXPECT_EQ(t.bn, 32);
  EXPECT_EQ(t.threads(), 256);
  EXPECT_GT(vk::tile_count(t, proj) * t.split_k, 12 * 4);
  // Compiled again with the workspace it needs as the budget: the same choice.
  const vk::ContractionTiles again = vk::choose_tiles(proj, dev, 4, vk::splitk_workspace_bytes(t, proj));
  EXPECT_EQ(again.bm, 32);
  EXPECT_EQ(again.split_k, t.split_k);
  // Stable when compiled again with a smaller budget than the blocked split needs (the plan's
  // largest workspace may be this kernel's own 32 x 32 split): shapes whose choice once flipped
  // to unsplit 16 x 16 tiles there.
  for (const auto& [m, n, k] : {std::array<int64_t, 3>{96, 704, 512}, {96, 64, 2304}, {64, 768, 768}}) {
    const KernelSpec spec = matmul_spec(1, m, n, k);
    const vk::ContractionTiles first = vk::choose_tiles(spec, dev);
    const vk::ContractionTiles second = vk::choose_tiles(spec, dev, 4, vk::splitk_workspace_bytes(first, spec));
    EXPECT_EQ(second.bm, first.bm) << m << "x" << n << "x" << k;
    EXPECT_EQ(second.bn, first.bn);
    EXPECT_EQ(second.split_k, first.split_k);
  }
  // fp16 / bf16 B (2 bytes) keeps the blocked tiles: measured on fp32 only.
  EXPECT_EQ(vk::choose_tiles(proj, dev, 2).blocked, 1);
  for (const auto& [m, n, k] : {std::array<int64_t, 3>{64, 2304, 768}, {64, 3072, 768}, {64, 768, 3072}, {128, 768, 768}, {64, 4096, 1024}}) {
    const vk::ContractionTiles b = vk::choose_tiles(matmul_spec(1, m, n, k), dev);
    EXPECT_EQ(b.blocked, 1) << m << "x" << n << "x" << k;
    EXPECT_EQ(b.bm, 64);
  }
  EnvGuard off("FUSOR_VK_GEMM_SMALL_GRID", "0");
  t = vk::choose_tiles(proj, dev);
  EXPECT_EQ(t.blocked, 1);
  EXPECT_EQ(t.split_k, 4);
}

// The first GEMV path's K rounds in flight (FZ_SK_UNROLL, measured on the H200): one row of
// fp32 B 16, of 16-bit B 4; 4 or 8 rows one round at a time; FUSOR_VK_GEMV_UNROLL overrides.
TEST(VulkanGemmTilesChoice, GemvUnrollByRowsAndWidth) {
  unsetenv("FUSOR_VK_GEMV");
  unsetenv("FUSOR_VK_GEMV_UNROLL");
  const vk::PhysicalDeviceInfo dev = testing::described_h200();
  const vk::ContractionTiles one = vk::choose_tiles(matmul_spec(1, 1, 1024, 4096), dev, 4);
  EXPECT_EQ(one.skinny, 1);
  EXPECT_EQ(one.skinny_unroll, 16);
  EXPECT_EQ(vk::choose_tiles(matmul_spec(1, 1, 1024, 4096), dev, 2).skinny_unroll, 4);
  for (int64_t m : {2, 4, 8}) EXPECT_EQ(vk::choose_tiles(matmul_spec(1, m, 1024, 4096), dev, 4).skinny_unroll, 1) << m;
  EnvGuard forced("FUSOR_VK_GEMV_UNROLL", "8");
  EXPECT_EQ(vk::choose_tiles(matmul_spec(1, 4, 1024, 4096), dev, 4).skinny_unroll, 8);
}

TEST(VulkanGemmTilesChoice, FourByFourByDefaultBlockedWhenAsked) {
  unsetenv("FUSOR_VK_SPLIT_K");
  unsetenv("FUSOR_VK_GEMM_TILE");
  unsetenv("FUSOR_VK_GEMM_BK");
  vk::PhysicalDeviceInfo dev = testing::described_h200();
  // Automatic: 64 x 64 tiles of 4x4 blocks, in the blocked layout (vec4 shared reads, K
  // slices of 32) where the tiles keep that size. MLP batch 64: 64 x 4096 x 1024 -> 64 tiles,
  // 2 slices; 64 x 1024 x 4096 -> 16 tiles x 8 (split-K spreads about one workgroup per
  // compute unit evenly; the 8x8 family fills two).
  vk::ContractionTiles t = vk::choose_tiles(matmul_spec(1, 64, 4096, 1024), dev);
  EXPECT_EQ(t.blocked, 1);
  EXPECT_EQ(t.bm, 64);
  EXPECT_EQ(t.bn, 64);
  EXPECT_EQ(t.tm, 4);
  EXPECT_EQ(t.tn, 4);
  EXPECT_EQ(t.bk, 32);
  EXPECT_EQ(t.split_k, 2);
  t = vk::choose_tiles(matmul_spec(1, 64, 1024, 4096), dev);
  EXPECT_EQ(t.blocked, 1);
  EXPECT_EQ(t.split_k, 8);
  EXPECT_EQ(t.split_slice, 512);
  EXPECT_EQ(vk::choose_tiles(matmul_spec(1, 2048, 1024, 4096), dev).blocked, 1);
  // Small matmuls whose tiles shrink to fill the device stay interleaved: 64 x 256 x 64 -> 4
  // tiles of 64 x 64, no split (K 64), halved to 32 x 16 tiles.
  t = vk::choose_tiles(matmul_spec(1, 64, 256, 64), dev);
  EXPECT_EQ(t.blocked, 0);
  EXPECT_LT(t.bm * t.bn, 64 * 64);
  {
    // The executable compiles each kernel a second time with the workspace its first choice
    // needs as the budget: the choice must not change. 40 x 40 x 100 with 64 slices forced:
    // blocked, K slices of 32 -> 4 slices (interleaved, BK 16, it would be 7 and need more).
    EnvGuard forced("FUSOR_VK_SPLIT_K", "64");
    const KernelSpec small = matmul_spec(1, 40, 40, 100);
    const vk::ContractionTiles first = vk::choose_tiles(small, dev);
    EXPECT_EQ(first.blocked, 1);
    EXPECT_EQ(first.split_k, 4);
    const vk::ContractionTiles again = vk::choose_tiles(small, dev, 4, vk::splitk_workspace_bytes(first, small));
    EXPECT_EQ(again.blocked, 1);
    EXPECT_EQ(again.split_k, 4);
  }
  {
    // FUSOR_VK_GEMM_TILE=4x4: the interleaved 4x4 tiles everywhere (the previous default).
    EnvGuard g("FUSOR_VK_GEMM_TILE", "4x4");
    t = vk::choose_tiles(matmul_spec(1, 64, 1024, 4096), dev);
    EXPECT_EQ(t.blocked, 0);
    EXPECT_EQ(t.bm, 64);
    EXPECT_EQ(t.bk, 16);
    EXPECT_EQ(t.split_k, 8);
  }
  {
    EnvGuard g("FUSOR_VK_GEMM_TILE", "8x8");
    // Blocked: 64 x 128 tiles with 4x8 blocks for the MLP's first layer, 32 tiles x 5 slices
    // (K 1024 holds 5 slices of at least 192; 9 would fill two workgroups per unit).
    t = vk::choose_tiles(matmul_spec(1, 64, 4096, 1024), dev);
    EXPECT_EQ(t.blocked, 1);
    EXPECT_EQ(t.bm, 64);
    EXPECT_EQ(t.bn, 128);
    EXPECT_EQ(t.tm, 4);
    EXPECT_EQ(t.tn, 8);
    EXPECT_EQ(t.bk, 16);
    EXPECT_EQ(t.threads(), 256);
    EXPECT_EQ(t.split_k, 5);
    // Its second layer, 64 x 1024 x 4096: 8 tiles x 20 slices of 208 (as many slices of at
    // least 192 as K allows, 21, each rounded up to whole BK = 16 steps).
    t = vk::choose_tiles(matmul_spec(1, 64, 1024, 4096), dev);
    EXPECT_EQ(t.blocked, 1);
    EXPECT_EQ(t.split_k, 20);
    EXPECT_EQ(t.split_slice, 208);
    // Big M and N: 128 x 128 with 8x8 blocks and BK 8; 128 tiles are below 2 per unit, so 3
    // slices; 512 tiles need none.
    t = vk::choose_tiles(matmul_spec(1, 2048, 1024, 4096), dev);
    EXPECT_EQ(t.blocked, 1);
    EXPECT_EQ(t.bm, 128);
    EXPECT_EQ(t.bn, 128);
    EXPECT_EQ(t.tm, 8);
    EXPECT_EQ(t.tn, 8);
    EXPECT_EQ(t.bk, 8);
    EXPECT_EQ(t.split_k, 3);
    t = vk::choose_tiles(matmul_spec(1, 4096, 2048, 1024), dev);
    EXPECT_EQ(t.blocked, 1);
    EXPECT_EQ(t.tm * t.tn, 64);
    EXPECT_EQ(t.split_k, 1);
    // Small shapes get 64-wide blocked tiles.
    t = vk::choose_tiles(matmul_spec(1, 40, 40, 100), dev);
    EXPECT_EQ(t.blocked, 1);
    EXPECT_EQ(t.bm, 64);
    EXPECT_EQ(t.tm, 4);
    // M <= 8 stays on a GEMV path: the first one (1) unless FUSOR_VK_GEMV=new (2).
    EXPECT_EQ(vk::choose_tiles(matmul_spec(1, 8, 4096, 1024), dev).skinny, 1);
    {
      EnvGuard path("FUSOR_VK_GEMV", "new");
      EXPECT_EQ(vk::choose_tiles(matmul_spec(1, 8, 4096, 1024), dev).skinny, 2);
    }
    {
      EnvGuard bk("FUSOR_VK_GEMM_BK", "32");
      t = vk::choose_tiles(matmul_spec(1, 2048, 1024, 4096), dev);
      EXPECT_EQ(t.bk, 16);  // 2 x 32 x (132 + 132) floats = 66 KiB > 48 KiB: halved to fit
    }
    // A device below 256 invocations never gets the blocked tiles.
    vk::PhysicalDeviceInfo small = dev;
    small.max_invocations = 128;
    EXPECT_EQ(vk::choose_tiles(matmul_spec(1, 2048, 1024, 4096), small).blocked, 0);
  }
  {
    EnvGuard g("FUSOR_VK_GEMM_BK", "32");
    EXPECT_EQ(vk::choose_tiles(matmul_spec(12, 64, 64, 64), dev).bk, 32);  // 4x4 tiles: fits
  }
}

}  // namespace
}  // namespace fusor
