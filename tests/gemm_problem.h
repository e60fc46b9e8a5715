// Matmul problems shared by the GEMM tests of every GPU backend (vulkan_gemm_fixture.h,
// test_vulkan_gemv.cpp, test_cuda_gemv.cpp): C = A @ B (+ bias, GELU) (+ residual), batched,
// transposed views, built as a graph on seeded random inputs; plus an environment guard for
// the backends' knobs and a bit-for-bit tensor comparison.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "ir/passes.h"
#include "test_util.h"

namespace fusor::testing {

// Sets an environment variable for one scope (ScopedEnv: restores what was there after).
struct EnvGuard : ScopedEnv {
  EnvGuard(const char* n, const std::string& v) : ScopedEnv(n, v.c_str()) {}
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

// Contraction outputs against ref: fp32 the contraction tolerance of DESIGN.md; fp16/bf16 a few
// ulps of the storage type. An unwritten (poisoned: NaN) element fails.
inline void compare_contraction(const std::vector<Tensor>& got, const std::vector<Tensor>& want, DType t) {
  ASSERT_EQ(got.size(), want.size());
  const double rel = t == DType::f32 ? 1e-5 : t == DType::f16 ? 4 * std::ldexp(1.0, -10) : 4 * std::ldexp(1.0, -7);
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].shape(), want[i].shape());
    EXPECT_LE(relative_l2(got[i], want[i]), rel) << "output " << i;
    CompareResult c = compare_tensors(got[i], want[i], t == DType::f32 ? 1e-3 : 8 * rel, t == DType::f32 ? 1e-4 : 4e-2);
    EXPECT_TRUE(c.ok) << "output " << i << ": " << c.message;
  }
}

// A 2-D Conv (+ bias, ReLU) (+ residual) problem for the GPU conv tests: C has the fields n, c,
// h, w, k, r, s, stride, pad, dil, groups, relu, residual (square strides, pads, dilations).
// The graph, two sets of seeded random inputs and the reference's outputs on each.
struct ConvProblem {
  Graph g;
  std::vector<Tensor> in, other, want, want_other;
};
template <class C>
ConvProblem make_conv_problem(const C& p, uint32_t seed) {
  const int64_t oh = (p.h + 2 * p.pad - p.dil * (p.r - 1) - 1) / p.stride + 1;
  const int64_t ow = (p.w + 2 * p.pad - p.dil * (p.s - 1) - 1) / p.stride + 1;
  ConvProblem cp;
  GraphBuilder b;
  int x = b.input("x", DType::f32, {p.n, p.c, p.h, p.w});
  int y = b.op("Conv", {x, b.constant("w", random_tensor(DType::f32, {p.k, p.c / p.groups, p.r, p.s}, seed)),
                        b.constant("b", random_tensor(DType::f32, {p.k}, seed + 1))},
               {{"strides", std::vector<int64_t>{p.stride, p.stride}},
                {"pads", std::vector<int64_t>{p.pad, p.pad, p.pad, p.pad}},
                {"dilations", std::vector<int64_t>{p.dil, p.dil}},
                {"group", p.groups}});
  if (p.relu) y = b.op("Relu", {y});
  cp.in = {random_tensor(DType::f32, {p.n, p.c, p.h, p.w}, seed + 2)};
  cp.other = {random_tensor(DType::f32, {p.n, p.c, p.h, p.w}, seed + 3)};
  if (p.residual) {
    y = b.op("Add", {y, b.input("res", DType::f32, {p.n, p.k, oh, ow})});
    cp.in.push_back(random_tensor(DType::f32, {p.n, p.k, oh, ow}, seed + 4));
    cp.other.push_back(random_tensor(DType::f32, {p.n, p.k, oh, ow}, seed + 5));
  }
  b.output(y);
  cp.g = b.build();
  make_static(cp.g, {});
  auto ref = make_backend("ref")->compile(cp.g, {});
  cp.want = ref->run(cp.in);
  cp.want_other = ref->run(cp.other);
  return cp;
}

}  // namespace fusor::testing
