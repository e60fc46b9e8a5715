// Shared by the tiled-GEMM tests on Vulkan (test_vulkan_splitk.cpp, test_vulkan_gemm_tiles.cpp):
// a matmul problem (batched, transposed views, bias + GELU and residual epilogues) built as a
// graph on seeded random inputs, and a check that forces split-K (FUSOR_VK_SPLIT_K), compares
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
#include "backends/vulkan/vulkan_backend.h"
#include "frontend/builder.h"
#include "ir/passes.h"
#include "test_util.h"
#include "vulkan_fixture.h"

namespace fusor::testing {

// Sets an environment variable for one scope (restores "unset" after).
struct EnvGuard {
  std::string name;
  EnvGuard(const char* n, const std::string& v) : name(n) { setenv(n, v.c_str(), 1); }
  ~EnvGuard() { unsetenv(name.c_str()); }
};

// C = A @ B (+ bias, GELU) (+ residual). A is [batch.., M, K] or, transposed, read through a
// Transpose of a [batch.., K, M] input; B likewise [K, N] or a Transpose of [N, K].
struct Problem {
  std::string name;
  std::vector<int64_t> batch;
  int64_t m = 0, n = 0, k = 0;
  bool transpose_a = false, transpose_b = false, bias_gelu = false, residual = false;
  int slices = 4;  // FUSOR_VK_SPLIT_K
  DType dtype = DType::f32;
};

struct Built {
  Graph g;
  std::vector<Tensor> inputs;  // seed
  std::vector<Tensor> other;   // seed + 100 (the in-between replay)
};

inline Built build(const Problem& p, uint32_t seed) {
  GraphBuilder b;
  Built out;
  auto add_input = [&](const std::string& nm, Shape s) {
    out.inputs.push_back(random_tensor(p.dtype, s, seed + static_cast<uint32_t>(out.inputs.size())));
    out.other.push_back(random_tensor(p.dtype, s, seed + 100 + static_cast<uint32_t>(out.other.size())));
    return b.input(nm, p.dtype, std::move(s));
  };
  auto shape = [&](int64_t r, int64_t c) {
    Shape s(p.batch.begin(), p.batch.end());
    s.push_back(r);
    s.push_back(c);
    return s;
  };
  auto swap_last = [&](int v, size_t rank) {
    std::vector<int64_t> perm;
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(i));
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    return b.op("Transpose", {v}, {{"perm", perm}});
  };
  int a = p.transpose_a ? swap_last(add_input("a", shape(p.k, p.m)), p.batch.size() + 2) : add_input("a", shape(p.m, p.k));
  int w = p.transpose_b ? swap_last(add_input("b", {p.n, p.k}), 2) : add_input("b", {p.k, p.n});
  int y = b.op("MatMul", {a, w});
  if (p.bias_gelu) y = b.op("Gelu", {b.op("Add", {y, b.constant("bias", random_tensor(p.dtype, {p.n}, seed + 50))})});
  if (p.residual) y = b.op("Add", {y, add_input("res", shape(p.m, p.n))});
  b.output(y);
  out.g = b.build();
  make_static(out.g, {});
  return out;
}

inline bool bit_identical(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.nbytes() == b.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

// Every dumped kernel source under dir (FUSOR_VK_DUMP_DIR), concatenated.
inline std::string dumped_sources(const std::filesystem::path& dir) {
  std::string all;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(f.path());
    all += std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return all;
}

class VulkanGemmTest : public ValidatedVulkanTest {
 protected:
  void TearDown() override {
    unsetenv("FUSOR_VK_SPLIT_K");
    unsetenv("FUSOR_VK_GEMM_VEC4");
    unsetenv("FUSOR_VK_GEMM_TILE");
    ValidatedVulkanTest::TearDown();
  }

  void compare(const std::vector<Tensor>& got, const std::vector<Tensor>& want, DType t) {
    ASSERT_EQ(got.size(), want.size());
    // fp32: the contraction tolerance of DESIGN.md; fp16/bf16: a few ulps of the storage type.
    const double rel = t == DType::f32 ? 1e-5 : t == DType::f16 ? 4 * std::ldexp(1.0, -10) : 4 * std::ldexp(1.0, -7);
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].shape(), want[i].shape());
      EXPECT_LE(relative_l2(got[i], want[i]), rel) << "output " << i;
      // An unwritten (poisoned: NaN) element fails here.
      CompareResult c = compare_tensors(got[i], want[i], t == DType::f32 ? 1e-3 : 8 * rel, t == DType::f32 ? 1e-4 : 4e-2);
      EXPECT_TRUE(c.ok) << "output " << i << ": " << c.message;
    }
  }

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
      EnvGuard on("FUSOR_VK_SPLIT_K", std::to_string(p.slices));
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
      EnvGuard off("FUSOR_VK_SPLIT_K", "1");
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
