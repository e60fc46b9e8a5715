// The vector GEMV kernel of the CUDA backend (cuda_codegen.cpp kMatmulTemplate FZ_SKINNY 2;
// FUSOR_CUDA_GEMV=new, the default for M <= 8). Without a GPU: every case's kernels, new and
// old path, split forced (FUSOR_CUDA_GEMV_SPLIT) or off, are generated and NVRTC-compiled, and
// the choice (path, split count, vector loads compiled in) is read from the source. With a GPU
// (CudaGemv.OnDevice): each case against `ref` on seeded random inputs, replayed with other
// inputs in between (bit-identical: the counters reset, the slice order is fixed), and against
// the old path. Cases: M in {1, 2, 7, 8}, N and K off the vector width and the 64-column strip,
// transposed B, batched, fp32 / fp16 / bf16, bias + GELU and residual epilogues.
#ifdef FUSOR_HAVE_CUDA
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "backends/cuda/cuda_backend.h"
#include "gemm_problem.h"
#include "ir/kernel_spec.h"

namespace fusor {
namespace {

using testing::Built;
using testing::EnvGuard;
using testing::Problem;
using testing::build;

// p.slices: FUSOR_CUDA_GEMV_SPLIT (1 = no split).
std::vector<Problem> cases() {
  return {
      {"m1_split4_bias_gelu", {}, 1, 256, 1024, false, false, true, false, 4},
      {"m2_n67_k301_residual", {}, 2, 67, 301, false, false, false, true, 3},
      {"m7_n132_k515_gelu", {}, 7, 132, 515, false, false, true, false, 5},
      {"m8_transposed_b", {}, 8, 100, 333, false, true, true, true, 4},
      {"m3_batch3", {3}, 3, 72, 200, false, false, true, false, 2},
      {"m1_batch2x2_transposed_a", {2, 2}, 1, 40, 130, true, false, false, true, 3},
      {"m1_no_split", {}, 1, 200, 700, false, false, true, true, 1},
      {"m8_no_split_n9", {}, 8, 9, 77, false, false, false, false, 1},
      {"f16_m1_split", {}, 1, 260, 520, false, false, true, true, 4, DType::f16},
      {"f16_m8_transposed", {}, 8, 70, 260, false, true, false, true, 2, DType::f16},
      {"bf16_m2_split", {}, 2, 96, 400, false, false, true, false, 3, DType::bf16},
      {"bf16_m7_n30_no_split", {}, 7, 30, 90, false, false, false, true, 1, DType::bf16},
  };
}

// The matmul kernel's CUDA source under the current environment.
std::string matmul_source(const Graph& g) {
  const Plan p = build_plan(g);
  for (const KernelSpec& k : p.kernels)
    if (k.matmul) return cuda_kernel_source(k, p, nullptr);
  ADD_FAILURE() << "no matmul kernel in the plan";
  return "";
}

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

TEST(CudaGemv, KernelsCompile) {
  uint32_t seed = 900;
  for (const Problem& p : cases()) {
    SCOPED_TRACE(p.name);
    Built b = build(p, seed += 10);
    std::string src;
    {
      EnvGuard path("FUSOR_CUDA_GEMV", "new"), split("FUSOR_CUDA_GEMV_SPLIT", std::to_string(p.slices));
      src = matmul_source(b.g);
    }
    EXPECT_TRUE(has(src, "#define FZ_SKINNY 2")) << src;
    EXPECT_EQ(has(src, "#define FZ_SPLITS 1\n"), p.slices == 1) << src;
    // Vector loads are compiled in where B's N has unit stride and its rows are 4-aligned.
    EXPECT_TRUE(has(src, "#define FZ_B_ELEM(off)")) << src;
    EXPECT_NO_THROW(nvrtc_compile_check(src, "gemv_new")) << src;
    {
      EnvGuard old("FUSOR_CUDA_GEMV", "old");
      const std::string o = matmul_source(b.g);
      EXPECT_TRUE(has(o, "#define FZ_SKINNY 1")) << o;
      EXPECT_NO_THROW(nvrtc_compile_check(o, "gemv_old")) << o;
    }
  }
  // The automatic split of the MLP's batch-1 layers: 1024 -> 4096 is 64 strips x 8 slices of
  // 128, 4096 -> 1024 16 strips x 32 slices (about 4 blocks per SM of a 132-SM GPU).
  for (auto [n, k, splits] : {std::tuple{int64_t{4096}, int64_t{1024}, 8}, std::tuple{int64_t{1024}, int64_t{4096}, 32}}) {
    Built b = build({"mlp", {}, 1, n, k, false, false, true, false, 1}, 5);
    EnvGuard path("FUSOR_CUDA_GEMV", "new");
    const std::string src = matmul_source(b.g);
    EXPECT_TRUE(has(src, "#define FZ_SPLITS " + std::to_string(splits) + "\n")) << src;
    EXPECT_TRUE(has(src, "#define FZ_KCHUNK 128\n")) << src;
    EnvGuard off("FUSOR_CUDA_GEMV_SPLIT", "1");
    EXPECT_TRUE(has(matmul_source(b.g), "#define FZ_SPLITS 1\n"));
  }
}


TEST(CudaGemv, OnDevice) {
  if (make_backend("cuda")->devices().empty()) GTEST_SKIP() << "no CUDA device (the kernels are NVRTC-compiled by KernelsCompile)";
  uint32_t seed = 900;
  for (const Problem& p : cases()) {
    SCOPED_TRACE(p.name);
    Built b = build(p, seed += 10);
    auto ref = make_backend("ref")->compile(b.g, {});
    const std::vector<Tensor> want = ref->run(b.inputs), want_other = ref->run(b.other);
    std::unique_ptr<Executable> exe;
    {
      EnvGuard path("FUSOR_CUDA_GEMV", "new"), split("FUSOR_CUDA_GEMV_SPLIT", std::to_string(p.slices));
      exe = make_backend("cuda")->compile(b.g, {});
    }
    const std::vector<Tensor> first = exe->run(b.inputs);
    testing::compare_contraction(first, want, p.dtype);
    testing::compare_contraction(exe->run(b.other), want_other, p.dtype);
    const std::vector<Tensor> again = exe->run(b.inputs);
    for (size_t i = 0; i < first.size(); ++i)
      EXPECT_TRUE(testing::bit_identical(again[i], first[i])) << "output " << i << " changed between replays";
    EnvGuard old("FUSOR_CUDA_GEMV", "old");
    testing::compare_contraction(make_backend("cuda")->compile(b.g, {})->run(b.inputs), first, p.dtype);
  }
}

}  // namespace
}  // namespace fusor
#endif
