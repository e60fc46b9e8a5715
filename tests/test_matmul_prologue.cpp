// Fewer dependent kernels in attention blocks (ir/fusion.cpp, ir/decompose.cpp):
//  - a small contraction reads an operand that is one element-wise op over a view and scalar
//    constants (q * s, k / s) through a prologue (MatMulDesc::a_pre / b_pre) instead of a copy
//    kernel before it (fp32; fp16 / bf16 only for backends that ask, FusionOptions::
//    f16/bf16_operand_prologues: Vulkan bf16 yes, fp16 no, cuBLASLt's CUDA and cpu no, and every backend must
//    agree); the prologue rounds to the operand dtype as that kernel's store did, so
//    with K = 1 (one exact product per output) every backend gives ref's bits;
//  - Gather(data, Reshape(indices)) becomes Reshape(Gather(data, indices)): no copy kernel of
//    the indices in front of the embedding lookup.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "ir/kernel_spec.h"
#include "runtime/session.h"
#include "test_util.h"
#ifdef FUSOR_HAVE_CUDA
#include "backends/codegen.h"
#include "backends/cuda/cuda_backend.h"
#endif

namespace fusor {
namespace {

using testing::scalar_tensor;

// qkv [B, S, 3 * H * D] (one fused projection's output): q = slice 0 and k = slice 1, each
// viewed as [B, H, S, D], q op s and k op s (op Mul or Div by a scalar constant), q @ k^T
// [B, H, S, S]. k_only: q is used as viewed (the prologue on B alone).
Graph attention_scores(DType t, int64_t B, int64_t S, int64_t H, int64_t D, const std::string& op, double s, bool k_only = false) {
  GraphBuilder b("scores", 17);
  const int qkv = b.input("qkv", t, {B, S, 3 * H * D});
  auto i64 = [&](const std::string& name, std::vector<int64_t> v) {
    return b.constant(name, testing::ints_of({static_cast<int64_t>(v.size())}, v));
  };
  const int r = b.op("Reshape", {qkv, i64("shape", {B, S, 3, H, D})});
  auto head = [&](int64_t which, std::vector<int64_t> perm) {
    const int sl = b.op("Slice", {r, i64("st" + std::to_string(which), {which}), i64("en" + std::to_string(which), {which + 1}),
                                  i64("ax" + std::to_string(which), {2})});
    const int sq = b.op("Reshape", {sl, i64("sh" + std::to_string(which), {B, S, H, D})});
    return b.op("Transpose", {sq}, {{"perm", perm}});
  };
  int q = head(0, {0, 2, 1, 3});
  int k = head(1, {0, 2, 3, 1});  // [B, H, D, S]
  const int c = b.constant("scale", scalar_tensor(t, s));
  if (!k_only) q = b.op(op, {q, c});
  k = b.op(op, {k, c});
  b.output(b.op("MatMul", {q, k}));
  return b.build();
}

Plan plan_of(const Graph& g, const std::vector<Tensor>& in, bool half_prologues = false) {
  FusionOptions fo;
  fo.f16_operand_prologues = fo.bf16_operand_prologues = half_prologues;
  return build_plan(specialize(g, in), fo);
}

const KernelSpec* only_matmul(const Plan& p) {
  const KernelSpec* m = nullptr;
  for (const KernelSpec& k : p.kernels)
    if (k.matmul) m = &k;
  return m;
}

// Largest element error of got against want, in ulps of want's dtype at the largest |want|
// (an fp32-accumulated product's error scale), and whether the bits are identical.
double error_in_ulps_of_max(const Tensor& got, const Tensor& want) {
  double mx = 0, err = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    mx = std::max(mx, std::fabs(want.get(i)));
    err = std::max(err, std::fabs(got.get(i) - want.get(i)));
  }
  const double ulp = want.dtype() == DType::f32 ? std::ldexp(1.0, std::ilogb(mx) - 23)
                     : want.dtype() == DType::f16 ? std::ldexp(1.0, std::ilogb(mx) - 10)
                                                  : std::ldexp(1.0, std::ilogb(mx) - 7);
  return err / ulp;
}

TEST(MatMulPrologue, ScaledQAndKAreReadByTheScoresKernel) {
  const Graph g = attention_scores(DType::f32, 1, 16, 2, 8, "Mul", 0.353553385);
  const Tensor x = testing::random_tensor(DType::f32, {1, 16, 48}, 1);
  const Plan p = plan_of(g, {x});
  ASSERT_EQ(p.kernels.size(), 1u) << "the slices and scales should be the matmul's operand prologues";
  const KernelSpec& k = p.kernels[0];
  ASSERT_TRUE(k.matmul);
  ASSERT_TRUE(k.matmul->a_pre && k.matmul->b_pre);
  EXPECT_EQ(k.matmul->a_pre->op.op->name, "Mul");
  EXPECT_EQ(k.matmul->a_buffer, k.matmul->b_buffer);  // both read qkv itself
  EXPECT_NE(std::find(k.fused_ops.begin(), k.fused_ops.end(), "Mul"), k.fused_ops.end());
  // The prologue's value is the element-wise op's, rounded to the operand dtype.
  EXPECT_EQ(k.matmul->a_pre->apply(static_cast<float>(0.1), DType::f32), static_cast<double>(static_cast<float>(static_cast<float>(0.1) * 0.353553385f)));
}

TEST(MatMulPrologue, BigContractionsKeepTheirOperandKernel) {
  // 1 x 8 heads x 256 x 256 x 64 = 2^25 multiply-adds > kMaxPrologueMacs: library GEMMs stay.
  const Graph g = attention_scores(DType::f32, 1, 256, 8, 64, "Mul", 0.125);
  const Tensor x(DType::f32, {1, 256, 3 * 8 * 64});
  const Plan p = plan_of(g, {x});
  const KernelSpec* m = only_matmul(p);
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->matmul->a_pre || m->matmul->b_pre);
  EXPECT_EQ(p.kernels.size(), 3u);
}

// Every backend against ref: with K = 1 the bits (each output one exact product of the two
// rounded operands), else within a few ulps of the largest value (fp32 sums in another order).
TEST(MatMulPrologue, EveryBackendGivesRefsValues) {
  struct Case {
    DType t;
    int64_t S, H, D;
    std::string op;
    double s;
    bool k_only;
  };
  const std::vector<Case> cases = {
      {DType::f32, 16, 2, 8, "Mul", 0.353553385, false}, {DType::f32, 64, 3, 64, "Div", 8.0, false},
      {DType::f32, 5, 1, 1, "Mul", 0.3, false},          {DType::f16, 16, 2, 8, "Mul", 0.353553385, false},
      {DType::f16, 64, 2, 64, "Div", 3.0, false},        {DType::f16, 7, 2, 1, "Mul", 0.3, false},
      {DType::bf16, 16, 2, 8, "Mul", 0.353553385, false}, {DType::bf16, 64, 2, 64, "Mul", 0.3, true},
      {DType::bf16, 9, 1, 1, "Div", 3.0, false},         {DType::f32, 1, 4, 32, "Mul", 0.7, true},
      // An inexact fp32 division with one product per output (bits), and B alone prologued on
      // the tiled path (A plain, read 4-wide where it can be).
      {DType::f32, 9, 2, 1, "Div", 3.0, false},          {DType::f32, 16, 2, 8, "Mul", 0.3, true},
  };
  for (const Case& c : cases) {
    const Graph g = attention_scores(c.t, 2, c.S, c.H, c.D, c.op, c.s, c.k_only);
    const Tensor x = testing::random_tensor(c.t, {2, c.S, 3 * c.H * c.D}, 7, -2.0, 2.0);
    const Plan p = plan_of(g, {x});
    const KernelSpec* m = only_matmul(p);
    ASSERT_TRUE(m) << dtype_name(c.t);
    // fp32 by default: fp16 / bf16 keep plain operands for library paths (cuBLASLt)...
    EXPECT_EQ(static_cast<bool>(m->matmul->b_pre), c.t == DType::f32);
    EXPECT_EQ(static_cast<bool>(m->matmul->a_pre), c.t == DType::f32 && !c.k_only);
    // ...and every float dtype where the backend asks (Vulkan's plans).
    const Plan ph = plan_of(g, {x}, true);
    const KernelSpec* mh = only_matmul(ph);
    ASSERT_TRUE(mh);
    EXPECT_TRUE(mh->matmul->b_pre);
    EXPECT_EQ(static_cast<bool>(mh->matmul->a_pre), !c.k_only);
    EXPECT_EQ(ph.kernels.size() + (c.t == DType::f32 ? 0 : (c.k_only ? 1 : 2)), p.kernels.size()) << "one copy kernel less per prologue";
    if (c.t != DType::f32) {  // the Vulkan backend builds that plan (vulkan_fusion_options)
      CompileOptions co;
      const FusionOptions vk = make_backend("vulkan")->fusion_options(co), cpu = make_backend("cpu")->fusion_options(co);
      // bf16 yes; fp16 no (its cooperative-matrix staging is faster without, vk_backend.cpp).
      EXPECT_EQ(c.t == DType::bf16, c.t == DType::f16 ? vk.f16_operand_prologues : vk.bf16_operand_prologues);
      EXPECT_FALSE(cpu.f16_operand_prologues || cpu.bf16_operand_prologues);
    }
    const Tensor want = Session(g, "ref").run({x})[0];
    for (const std::string& be : testing::usable_backends()) {
      if (be == "ref") continue;
      SCOPED_TRACE(be + " " + dtype_name(c.t) + " S=" + std::to_string(c.S) + " D=" + std::to_string(c.D) + " " + c.op);
      const Tensor got = Session(g, be).run({x})[0];
      ASSERT_EQ(got.shape(), want.shape());
      if (c.D == 1) {
        EXPECT_EQ(0, std::memcmp(got.raw(), want.raw(), want.nbytes()));
      } else {
        EXPECT_LE(error_in_ulps_of_max(got, want), c.t == DType::f32 ? 64.0 : 2.0);
      }
    }
#ifdef FUSOR_HAVE_CUDA
    for (const KernelSpec& k : p.kernels) {  // the prologue kernels compile without a GPU too
      const std::string src = cuda_kernel_source(k, p, nullptr);
      if (!src.empty()) EXPECT_NO_THROW(nvrtc_compile_check(src, kernel_identifier(k.name))) << src;
    }
#endif
  }
}

// Review of the prologues (2026-12-03): an op whose constant has another dtype (Pow's int64
// exponent) stays its own kernel (the prologue would print an int64 the kernel header does not
// declare: a shaderc error on Vulkan), and an op over a contraction's output read only there
// stays that contraction's epilogue (its library GEMM and vector loads kept).
TEST(MatMulPrologue, OnlyFloat32ConstantsAndNotOverAnotherProductsOutput) {
  {
    GraphBuilder b("pow", 17);
    const int x = b.input("x", DType::f32, {1, 8, 16}), y = b.input("y", DType::f32, {1, 8, 16});
    const int xt = b.op("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 1}}});
    const int p = b.op("Pow", {xt, b.constant("two", testing::ints_of({}, {2}))});
    b.output(b.op("MatMul", {p, y}));
    const Graph g = b.build();
    const std::vector<Tensor> in = {testing::random_tensor(DType::f32, {1, 8, 16}, 1), testing::random_tensor(DType::f32, {1, 8, 16}, 2)};
    const Plan p2 = plan_of(g, in);
    const KernelSpec* m = only_matmul(p2);
    ASSERT_TRUE(m);
    EXPECT_FALSE(m->matmul->a_pre);
    const Tensor want = Session(g, "ref").run(in)[0];
    for (const std::string& be : testing::usable_backends()) {
      SCOPED_TRACE(be);
      EXPECT_LE(error_in_ulps_of_max(Session(g, be).run(in)[0], want), 64.0);
    }
  }
  {
    GraphBuilder b("chain", 17);
    const int x = b.input("x", DType::f32, {16, 96});
    const int w1 = b.constant("w1", testing::random_tensor(DType::f32, {96, 96}, 3));
    const int w2 = b.constant("w2", testing::random_tensor(DType::f32, {96, 96}, 4));
    b.output(b.op("MatMul", {b.op("Relu", {b.op("MatMul", {x, w1})}), w2}));
    const Graph g = b.build();
    const std::vector<Tensor> in = {testing::random_tensor(DType::f32, {16, 96}, 5)};
    const Plan p = plan_of(g, in);
    ASSERT_EQ(p.kernels.size(), 2u);
    for (const KernelSpec& k : p.kernels) EXPECT_FALSE(k.matmul && (k.matmul->a_pre || k.matmul->b_pre)) << k.name;
    EXPECT_NE(std::find(p.kernels[0].fused_ops.begin(), p.kernels[0].fused_ops.end(), "Relu"), p.kernels[0].fused_ops.end());
    const Tensor want = Session(g, "ref").run(in)[0];
    for (const std::string& be : testing::usable_backends()) {
      SCOPED_TRACE(be);
      EXPECT_LE(error_in_ulps_of_max(Session(g, be).run(in)[0], want), 64.0);
    }
  }
}

// ids [2, 3] -> Reshape [6] -> Gather(table [10, 4]) -> Reshape back -> LayerNormalization-like
// Add: the indices' Reshape is gone from the plan, the values are ref's on every backend
// (negative indices included).
TEST(GatherOfReshape, TheIndicesAreNotCopiedFirst) {
  GraphBuilder b("embed", 17);
  const int ids = b.input("ids", DType::i64, {2, 3});
  const int flat = b.op("Reshape", {ids, b.constant("flat", testing::ints_of({1}, {6}))});
  const Tensor tab = testing::random_tensor(DType::f32, {10, 4}, 3), pos = testing::random_tensor(DType::f32, {3, 4}, 4);
  const int table = b.constant("table", tab);
  const int e = b.op("Gather", {table, flat}, {{"axis", int64_t{0}}});
  const int r = b.op("Reshape", {e, b.constant("back", testing::ints_of({3}, {2, 3, 4}))});
  b.output(b.op("Add", {r, b.constant("pos", pos)}));
  const Graph g = b.build();
  const Tensor x = testing::ints_of({2, 3}, {0, 9, -1, 3, -10, 5});
  const Plan p = plan_of(g, {x});
  // The lookup is fused into the Add (a gathered load, tests/test_gather_fusion.cpp), whose
  // index is the un-reshaped input: one kernel, no copy of the indices.
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].kind, FusionKind::loop);
  EXPECT_EQ(std::count(p.kernels[0].fused_ops.begin(), p.kernels[0].fused_ops.end(), "Gather"), 1);
  EXPECT_EQ(std::count(p.kernels[0].fused_ops.begin(), p.kernels[0].fused_ops.end(), "Add"), 1);
  const Tensor want = Session(g, "ref").run({x})[0];
  const std::vector<int64_t> row = {0, 9, 9, 3, 0, 5};  // -1 -> 9, -10 -> 0
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 4; ++j)
      EXPECT_EQ(want.get(i * 4 + j), static_cast<float>(static_cast<float>(tab.get(row[i] * 4 + j)) + static_cast<float>(pos.get((i % 3) * 4 + j))));
  for (const std::string& be : testing::usable_backends()) {
    const Tensor got = Session(g, be).run({x})[0];
    EXPECT_EQ(0, std::memcmp(got.raw(), want.raw(), want.nbytes())) << be;
  }
  // Out-of-range indices are still refused by name on every backend.
  const Tensor bad = testing::ints_of({2, 3}, {0, 1, 2, 3, 4, 10});
  for (const std::string& be : testing::usable_backends()) EXPECT_THROW(Session(g, be).run({bad}), Error) << be;
}

// The QKV projection's output read through a Reshape that fans out to three slices (a dynamo
// export's Gemm -> Reshape -> Split): read more than once, so q * s and k * s still become the
// scores product's prologues (the single-reader rule counts readers through views), and every
// backend agrees with ref.
TEST(MatMulPrologue, AProjectionReadThroughAFanningReshapeKeepsThePrologues) {
  const int64_t S = 16, H = 2, D = 8, E = 24;
  GraphBuilder b("qkv", 17);
  const int x = b.input("x", DType::f32, {1, S, E});
  const int w = b.constant("w", testing::random_tensor(DType::f32, {E, 3 * H * D}, 3));
  const int qkv = b.op("MatMul", {x, w});
  const auto i64 = [&](const std::string& name, std::vector<int64_t> v) { return b.constant(name, testing::ints_of({static_cast<int64_t>(v.size())}, v)); };
  const int r = b.op("Reshape", {qkv, i64("shape", {1, S, 3, H, D})});
  const std::vector<int> parts = b.op_multi("Split", {r, i64("sizes", {1, 1, 1})}, {{"axis", int64_t{2}}}, 3);
  const auto head = [&](int part, std::vector<int64_t> perm) {
    return b.op("Transpose", {b.op("Reshape", {part, i64("sh" + std::to_string(part), {1, S, H, D})})}, {{"perm", perm}});
  };
  const int c = b.constant("scale", scalar_tensor(DType::f32, 0.353553385));
  const int q = b.op("Mul", {head(parts[0], {0, 2, 1, 3}), c}), k = b.op("Mul", {head(parts[1], {0, 2, 3, 1}), c});
  b.output(b.op("MatMul", {q, k}));
  b.output(head(parts[2], {0, 2, 1, 3}));
  const Graph g = b.build();
  const Tensor in = testing::random_tensor(DType::f32, {1, S, E}, 4);
  const Plan p = plan_of(g, {in});
  int prologued = 0;
  for (const KernelSpec& k2 : p.kernels)
    if (k2.matmul) prologued += static_cast<bool>(k2.matmul->a_pre) + static_cast<bool>(k2.matmul->b_pre);
  EXPECT_EQ(prologued, 2) << "q * s and k * s read by the scores product";
  const std::vector<Tensor> want = Session(g, "ref").run({in});
  for (const std::string& be : testing::usable_backends()) {
    SCOPED_TRACE(be);
    const std::vector<Tensor> got = Session(g, be).run({in});
    for (size_t o = 0; o < want.size(); ++o) EXPECT_LE(error_in_ulps_of_max(got[o], want[o]), 64.0);
  }
}

}  // namespace
}  // namespace fusor
