// Shared by the tiled-GEMM tests on Vulkan (test_vulkan_splitk.cpp, test_vulkan_gemm_tiles.cpp):
// a matmul problem (gemm_problem.h: batched, transposed views, bias + GELU and residual
// epilogues) built as a graph on seeded random inputs, and a check that forces split-K (FUSOR_VK_SPLIT_K), compares
// with `ref` (outputs poisoned: the arena starts as NaN), replays with other inputs in between
// (bit-identical results), and compares with split-K off. Knobs the caller sets (tile family,
// vector loads) apply to both compiles.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/vulkan/vk_device.h"
#include "backends/vulkan/vulkan_backend.h"
#include "frontend/builder.h"
#include "ir/passes.h"
#include "test_util.h"
#include "gemm_problem.h"
#include "vulkan_fixture.h"

namespace fusor::testing {

// An H200-like device for the tile-choice tests: 132 compute units, 48 KiB of shared memory,
// 1024 invocations per workgroup (what the H200's Vulkan driver reports).
inline vk::PhysicalDeviceInfo described_h200() {
  vk::PhysicalDeviceInfo dev;
  dev.name = "described 132-unit device";
  dev.compute_units = 132;
  dev.max_shared_memory = 49152;
  dev.max_invocations = 1024;
  return dev;
}

class VulkanGemmTest : public ValidatedVulkanTest {
 protected:
  void TearDown() override {
    unsetenv("FUSOR_VK_SPLIT_K");
    unsetenv("FUSOR_VK_GEMM_VEC4");
    unsetenv("FUSOR_VK_GEMM_TILE");
    ValidatedVulkanTest::TearDown();
  }

  void compare(const std::vector<Tensor>& got, const std::vector<Tensor>& want, DType t) { compare_contraction(got, want, t); }


  // Split-K forced with p.slices: matches ref; X, Y, X replays (Y's results overwrite X's in
  // the arena) give bit-identical X results; matches the same graph with split-K off.
  // verify(exe, split) runs on both executables (split: the split-K one).
  void check(const Problem& p, uint32_t seed, bool expect_split = true,
             const std::function<void(const Executable&, bool)>& verify = {}) {
    SCOPED_TRACE(p.name);
    Built b = build(p, seed);
    auto ref = make_backend("ref")->compile(b.g, {});
    const std::vector<Tensor> want = ref->run(b.inputs), want_other = ref->run(b.other);
    std::unique_ptr<Executable> exe;
    {
      // Both templates' knobs: fp16 matmuls take the cooperative matrices where the device has them.
      EnvGuard on("FUSOR_VK_SPLIT_K", std::to_string(p.slices)), cm("FUSOR_VK_COOPMAT_SPLIT_K", std::to_string(p.slices));
      exe = vk_->compile(b.g, {});
    }
    if (expect_split) {
      EXPECT_EQ(vulkan_split_k_kernel_count(*exe), 1) << exe->notes();
      EXPECT_NE(exe->notes().find("split-K"), std::string::npos) << exe->notes();
    }
    if (verify) verify(*exe, true);
    const std::vector<Tensor> first = exe->run(b.inputs);
    compare(first, want, p.dtype);
    compare(exe->run(b.other), want_other, p.dtype);
    const std::vector<Tensor> again = exe->run(b.inputs);
    ASSERT_EQ(again.size(), first.size());
    for (size_t i = 0; i < first.size(); ++i) EXPECT_TRUE(bit_identical(again[i], first[i])) << "output " << i << " changed between replays";
    std::unique_ptr<Executable> plain;
    {
      EnvGuard off("FUSOR_VK_SPLIT_K", "1"), cm("FUSOR_VK_COOPMAT_SPLIT_K", "0");
      plain = vk_->compile(b.g, {});
    }
    EXPECT_EQ(vulkan_split_k_kernel_count(*plain), 0) << plain->notes();
    if (verify) verify(*plain, false);
    const std::vector<Tensor> unsplit = plain->run(b.inputs);
    compare(first, unsplit, p.dtype);
    compare(unsplit, want, p.dtype);
  }
};

}  // namespace fusor::testing
