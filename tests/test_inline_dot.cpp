// Inline contractions (ir/fusion.cpp inline_small_contractions, KernelSpec::dots; by default
// where the row reads the operands coalesced, FUSOR_INLINE_DOT=1 for any layout, 0 never): a small matmul read only by one row kernel over its own output
// (attention's Q @ K^T before the Softmax) is computed inside that kernel, so the scores are
// never stored and one dependent kernel less runs. Checked here: which plans take it (and which keep the matmul kernel), and
// that every backend still gives ref's values for fp32, fp16 and bf16 attention blocks with
// masks, scales on either operand, rows kept in registers and rows streamed, and that every
// generated CUDA kernel compiles (NVRTC, no GPU needed).
// Row products (ir/fusion.cpp fuse_row_products, KernelSpec::row_product; on by default,
// FUSOR_ROW_PRODUCT=0 turns them off): the Softmax row kernel also computes softmax(...) @ v, so
// the weights are never stored either. Checked here the same ways, with and without inline dots.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

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

struct Attn {
  DType t = DType::f32;
  int64_t B = 1, H = 2, S = 16, L = 16, D = 8;  // queries S, keys L, head size D
  bool scale_q = true, scale_k = false;          // q * s before the product / k * s
  bool mask = false;                             // an additive causal mask (-inf above the diagonal)
  bool pv = true;                                // softmax(...) @ v, heads merged by a Transpose
  bool keys_transposed = false;                  // k given as [B, H, D, L] (no Transpose in the graph)
};

// q [B, H, S, D], k [B, H, L, D], v [B, H, L, D]: softmax(q' @ k'^T (+ mask)) @ v, transposed to
// [B, S, H, D] (or the softmax alone when !pv).
Graph attention(const Attn& a) {
  GraphBuilder b("attn", 17);
  int q = b.input("q", a.t, {a.B, a.H, a.S, a.D});
  int k = b.input("k", a.t, a.keys_transposed ? Shape{a.B, a.H, a.D, a.L} : Shape{a.B, a.H, a.L, a.D});
  const int v = a.pv ? b.input("v", a.t, {a.B, a.H, a.L, a.D}) : -1;
  const int s = b.constant("s", scalar_tensor(a.t, 0.35));
  if (a.scale_q) q = b.op("Mul", {q, s});
  int kt = a.keys_transposed ? k : b.op("Transpose", {k}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}});
  if (a.scale_k) kt = b.op("Mul", {kt, s});
  int x = b.op("MatMul", {q, kt});
  if (a.mask) {
    Tensor m(a.t, {a.S, a.L});
    for (int64_t i = 0; i < a.S; ++i)
      for (int64_t j = 0; j < a.L; ++j) m.set(i * a.L + j, j <= i + (a.L - a.S) ? 0.0 : -std::numeric_limits<double>::infinity());
    x = b.op("Add", {x, b.constant("mask", m)});
  }
  int p = b.op("Softmax", {x}, {{"axis", int64_t{-1}}});
  if (a.pv) p = b.op("Transpose", {b.op("MatMul", {p, v})}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  b.output(p);
  return b.build();
}

std::vector<Tensor> inputs_of(const Attn& a, uint64_t seed) {
  std::vector<Tensor> in = {testing::random_tensor(a.t, {a.B, a.H, a.S, a.D}, seed, -2.0, 2.0),
                            testing::random_tensor(a.t, a.keys_transposed ? Shape{a.B, a.H, a.D, a.L} : Shape{a.B, a.H, a.L, a.D},
                                                   seed + 1, -2.0, 2.0)};
  if (a.pv) in.push_back(testing::random_tensor(a.t, {a.B, a.H, a.L, a.D}, seed + 2, -2.0, 2.0));
  return in;
}

Plan plan_of(const Graph& g, const std::vector<Tensor>& in) { return build_plan(specialize(g, in)); }

using testing::ScopedEnv;

int matmul_kernels(const Plan& p) {
  return static_cast<int>(std::count_if(p.kernels.begin(), p.kernels.end(), [](const KernelSpec& k) { return k.matmul.has_value(); }));
}
const KernelSpec* dot_kernel(const Plan& p) {
  for (const KernelSpec& k : p.kernels)
    if (!k.dots.empty()) return &k;
  return nullptr;
}

const KernelSpec* row_product_kernel(const Plan& p) {
  for (const KernelSpec& k : p.kernels)
    if (k.row_product) return &k;
  return nullptr;
}

// Largest element error in ulps of want's dtype at the largest |want|.
double error_in_ulps_of_max(const Tensor& got, const Tensor& want) {
  double mx = 0, err = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double w = want.get(i), g = got.get(i);
    if (std::isnan(w) || std::isnan(g)) {
      if (std::isnan(w) != std::isnan(g)) return std::numeric_limits<double>::infinity();
      continue;
    }
    mx = std::max(mx, std::fabs(w));
    err = std::max(err, std::fabs(g - w));
  }
  if (mx == 0) return err == 0 ? 0 : std::numeric_limits<double>::infinity();
  const int bits = want.dtype() == DType::f32 ? 23 : want.dtype() == DType::f16 ? 10 : 7;
  return err / std::ldexp(1.0, std::ilogb(mx) - bits);
}

TEST(InlineDot, AttentionScoresAreComputedInTheSoftmaxKernel) {
  ScopedEnv on("FUSOR_INLINE_DOT", "1");
  ScopedEnv pv_own_kernel("FUSOR_ROW_PRODUCT", "0");
  const Attn a;
  const Plan p = plan_of(attention(a), inputs_of(a, 1));
  const KernelSpec* k = dot_kernel(p);
  ASSERT_TRUE(k) << "the scores should be computed inside the Softmax row kernel";
  EXPECT_EQ(k->kind, FusionKind::input);
  ASSERT_EQ(k->dots.size(), 1u);
  EXPECT_EQ(k->dots[0].mm.k, a.D);
  EXPECT_TRUE(k->dots[0].mm.a_pre) << "q * s is the inline product's operand prologue";
  EXPECT_NE(std::find(k->fused_ops.begin(), k->fused_ops.end(), "MatMul"), k->fused_ops.end());
  EXPECT_GT(k->row_registers, 0) << "each score is computed once and kept in registers";
  EXPECT_EQ(matmul_kernels(p), 1) << "only softmax @ v is a matmul kernel";
  EXPECT_EQ(p.kernels.size(), 2u);
  // One buffer of the plan has the [B, H, S, L] shape: the softmax's weights, not the scores.
  EXPECT_EQ(std::count_if(p.buffers.begin(), p.buffers.end(), [&](const Buffer& b) { return b.shape == Shape{a.B, a.H, a.S, a.L}; }), 1);
}

// By default only where each thread of a row reads its own consecutive element: keys stored
// [D, L] (unit stride along the row of scores) are inlined, keys [L, D] read through a Transpose
// (a key row per thread) keep the product's kernel; FUSOR_INLINE_DOT=0 inlines none.
TEST(InlineDot, DefaultTakesOnlyCoalescedRows) {
  ScopedEnv dflt("FUSOR_INLINE_DOT", nullptr);
  ScopedEnv pv_own_kernel("FUSOR_ROW_PRODUCT", "0");
  Attn a;
  EXPECT_FALSE(dot_kernel(plan_of(attention(a), inputs_of(a, 1))));
  EXPECT_EQ(matmul_kernels(plan_of(attention(a), inputs_of(a, 1))), 2);
  a.keys_transposed = true;
  const KernelSpec* k = nullptr;
  const Plan p = plan_of(attention(a), inputs_of(a, 1));
  k = dot_kernel(p);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->dots[0].b_at.strides.back(), 1);
  EXPECT_EQ(matmul_kernels(p), 1);
  ScopedEnv off("FUSOR_INLINE_DOT", "0");
  EXPECT_FALSE(dot_kernel(plan_of(attention(a), inputs_of(a, 1))));
}

TEST(InlineDot, ContractionsThatDoNotQualifyKeepTheirKernel) {
  ScopedEnv on("FUSOR_INLINE_DOT", "1");
  ScopedEnv pv_own_kernel("FUSOR_ROW_PRODUCT", "0");
  {  // K above kMaxInlineDotK
    Attn a;
    a.D = kMaxInlineDotK + 1, a.S = a.L = 4, a.H = 1;
    const Plan p = plan_of(attention(a), inputs_of(a, 1));
    EXPECT_FALSE(dot_kernel(p));
    EXPECT_EQ(matmul_kernels(p), 2);
  }
  {  // more multiply-adds than kMaxPrologueMacs: 8 heads x 256 x 256 x 64 = 2^25
    Attn a;
    a.H = 8, a.S = a.L = 256, a.D = 64;
    const Tensor q(a.t, {a.B, a.H, a.S, a.D}), k(a.t, {a.B, a.H, a.L, a.D}), v(a.t, {a.B, a.H, a.L, a.D});
    const Plan p = plan_of(attention(a), {q, k, v});
    EXPECT_FALSE(dot_kernel(p));
  }
  {  // the scores are also a graph output: stored by their own kernel
    Attn a;
    GraphBuilder b("two", 17);
    const int q = b.input("q", a.t, {1, 2, 8, 4}), k = b.input("k", a.t, {1, 2, 4, 8});
    const int x = b.op("MatMul", {q, k});
    b.output(b.op("Softmax", {x}, {{"axis", int64_t{-1}}}));
    b.output(x);
    const Graph g = b.build();
    const Plan p = plan_of(g, {testing::random_tensor(a.t, {1, 2, 8, 4}, 1), testing::random_tensor(a.t, {1, 2, 4, 8}, 2)});
    EXPECT_FALSE(dot_kernel(p));
  }
  {  // an integer product stays a matmul kernel (the inline sum is fp32)
    GraphBuilder b("int", 17);
    const int q = b.input("q", DType::i32, {1, 2, 8, 4}), k = b.input("k", DType::i32, {1, 2, 4, 8});
    const int x = b.op("Cast", {b.op("MatMul", {q, k})}, {{"to", int64_t{1}}});
    b.output(b.op("Softmax", {x}, {{"axis", int64_t{-1}}}));
    const Graph g = b.build();
    const Plan p = plan_of(g, {testing::random_tensor(DType::i32, {1, 2, 8, 4}, 1), testing::random_tensor(DType::i32, {1, 2, 4, 8}, 2)});
    EXPECT_FALSE(dot_kernel(p));
  }
}

// Every backend against ref (poisoned outputs, seeded inputs in [-2, 2]): fp32 within 64 ulps
// of the largest value (sums in another order), fp16 / bf16 within 4 of their own ulps there
// (a score rounded one way or the other moves the row's weights by about one ulp).
// mode: FUSOR_INLINE_DOT ("1" every qualifying product inline, "0" none, nullptr the default rule).
void expect_every_backend_gives_refs_values(const char* mode) {
  ScopedEnv on("FUSOR_INLINE_DOT", mode);
  const bool inline_dots = mode && std::string(mode) == "1";
  std::vector<Attn> cases;
  for (DType t : {DType::f32, DType::f16, DType::bf16}) {
    Attn a;
    a.t = t;
    cases.push_back(a);  // 2 heads, 16 x 16, D 8, q scaled
    Attn m = a;
    m.mask = true, m.scale_q = false, m.scale_k = true, m.S = 7, m.L = 7, m.D = 64, m.B = 2, m.H = 3;
    cases.push_back(m);  // causal mask (first row: one key), scale on k
    Attn r = a;
    r.S = 3, r.L = 129, r.D = 3, r.H = 11, r.mask = true;  // odd sizes: 129 keys, 3 queries (mask offset), D 3
    cases.push_back(r);
    Attn one = a;
    one.S = 1, one.L = 1, one.D = 1, one.scale_q = false;  // one key: every weight is 1
    cases.push_back(one);
    Attn big = a;
    big.S = 32, big.L = 9000, big.D = 2, big.H = 1;  // rows of 9000: streamed, not register-resident
    cases.push_back(big);
    Attn kt = m;
    kt.keys_transposed = true;  // keys [D, L]: inline by default too
    cases.push_back(kt);
    Attn wide = a;
    wide.D = kMaxInlineDotK, wide.S = wide.L = 5, wide.pv = false;  // the longest inline K; softmax alone
    cases.push_back(wide);
  }
  for (const Attn& a : cases) {
    SCOPED_TRACE(std::string(dtype_name(a.t)) + " B=" + std::to_string(a.B) + " H=" + std::to_string(a.H) + " S=" + std::to_string(a.S) +
                 " L=" + std::to_string(a.L) + " D=" + std::to_string(a.D) + (a.mask ? " mask" : ""));
    const Graph g = attention(a);
    const std::vector<Tensor> in = inputs_of(a, 11);
    const Plan p = plan_of(g, in);
    if (inline_dots || (!mode && a.keys_transposed)) {
      const KernelSpec* k = dot_kernel(p);
      ASSERT_TRUE(k);
      if (a.L == 9000) EXPECT_EQ(k->row_registers, 0);
    }
    // Softmax @ v in the row kernel wherever its row fits (not 9000 keys, not without v; one
    // key is no product: K = 1) and there are rows enough to spread (kMinRowsToAbsorb).
    EXPECT_EQ(row_product_kernel(p) != nullptr, a.pv && a.L > 1 && a.L <= kMaxRowProductK && a.B * a.H * a.S >= kMinRowsToAbsorb);
    const Tensor want = Session(g, "ref").run(in)[0];
    for (const std::string& be : testing::usable_backends()) {
      if (be == "ref") continue;
      SCOPED_TRACE(be);
      Session sess(g, be);
      const Tensor got = sess.run(in)[0];
      ASSERT_EQ(got.shape(), want.shape());
      EXPECT_LE(error_in_ulps_of_max(got, want), a.t == DType::f32 ? 64.0 : 4.0);
      if (a.S == 1 && a.L == 1) {  // softmax of one key is exactly 1: the output is v itself
        EXPECT_EQ(0, std::memcmp(got.raw(), in[2].raw(), in[2].nbytes()));
      }
      // Replayed with other inputs: the inline products read this run's q and k.
      const std::vector<Tensor> in2 = inputs_of(a, 23);
      EXPECT_LE(error_in_ulps_of_max(sess.run(in2)[0], Session(g, "ref").run(in2)[0]), a.t == DType::f32 ? 64.0 : 4.0);
    }
#ifdef FUSOR_HAVE_CUDA
    for (const KernelSpec& kk : p.kernels) {  // the inline products compile for CUDA without a GPU too
      const std::string src = cuda_kernel_source(kk, p, nullptr);
      if (!src.empty()) EXPECT_NO_THROW(nvrtc_compile_check(src, kernel_identifier(kk.name))) << src;
    }
#endif
  }
}

TEST(InlineDot, EveryBackendGivesRefsValues) { expect_every_backend_gives_refs_values("1"); }
TEST(InlineDot, EveryBackendGivesRefsValuesWithTheDefaultRule) { expect_every_backend_gives_refs_values(nullptr); }
TEST(RowProduct, EveryBackendGivesRefsValues) { expect_every_backend_gives_refs_values("0"); }

TEST(RowProduct, SoftmaxTimesVIsComputedInTheSoftmaxKernel) {
  ScopedEnv off("FUSOR_INLINE_DOT", "0");
  const Attn a;
  const Plan p = plan_of(attention(a), inputs_of(a, 1));
  const KernelSpec* k = row_product_kernel(p);
  ASSERT_TRUE(k) << "softmax @ v should be computed by the Softmax row kernel";
  EXPECT_EQ(k->kind, FusionKind::input);
  EXPECT_EQ(k->row_product->n, a.D);
  EXPECT_EQ(k->outputs.size(), 0u) << "the weights are not stored";
  EXPECT_EQ(k->output_buffers().size(), 1u);
  EXPECT_NE(std::find(k->fused_ops.begin(), k->fused_ops.end(), "MatMul"), k->fused_ops.end());
  EXPECT_EQ(matmul_kernels(p), 1) << "only q @ k^T is a matmul kernel";
  EXPECT_EQ(p.kernels.size(), 2u);
  // The heads-merging Transpose is the product's store view: [B, H, S, D] stored as [B, S, H, D].
  EXPECT_EQ(k->row_product->c_sn, 1);
  EXPECT_EQ(k->row_product->c_at.strides[1], a.D);
  EXPECT_EQ(k->row_product->c_at.strides[2], a.H * a.D);
  {  // with inline scores the whole attention block is one kernel
    ScopedEnv on("FUSOR_INLINE_DOT", "1");
    const Plan q = plan_of(attention(a), inputs_of(a, 1));
    EXPECT_EQ(q.kernels.size(), 1u);
    EXPECT_TRUE(row_product_kernel(q) && dot_kernel(q));
  }
  {  // FUSOR_ROW_PRODUCT=0: the product keeps its kernel
    ScopedEnv no("FUSOR_ROW_PRODUCT", "0");
    EXPECT_FALSE(row_product_kernel(plan_of(attention(a), inputs_of(a, 1))));
  }
}

TEST(RowProduct, ProductsThatDoNotQualifyKeepTheirKernel) {
  ScopedEnv off("FUSOR_INLINE_DOT", "0");
  const DType t = DType::f32;
  auto plan = [&](const std::function<void(GraphBuilder&, int, int)>& tail, int64_t rows, int64_t len, int64_t n) {
    GraphBuilder b("rp", 17);
    const int x = b.input("x", t, {rows, len}), v = b.input("v", t, {len, n});
    tail(b, b.op("Softmax", {x}, {{"axis", int64_t{-1}}}), v);
    const Graph g = b.build();
    return plan_of(g, {testing::random_tensor(t, {rows, len}, 1), testing::random_tensor(t, {len, n}, 2)});
  };
  const auto mm = [](GraphBuilder& b, int p, int v) { b.output(b.op("MatMul", {p, v})); };
  EXPECT_TRUE(row_product_kernel(plan(mm, 40, 16, 4)));  // the shape that qualifies
  // Too few rows (a decode step: one workgroup would do the whole product), or N wider than a
  // row's group should compute.
  EXPECT_FALSE(row_product_kernel(plan(mm, 1, 768, 64)));
  EXPECT_FALSE(row_product_kernel(plan(mm, kMinRowsToAbsorb - 1, 16, 4)));
  EXPECT_FALSE(row_product_kernel(plan(mm, 40, 16, kMaxRowProductN + 1)));
  // The weights are a graph output too: stored by the row kernel, so the product keeps its own.
  EXPECT_FALSE(row_product_kernel(plan([](GraphBuilder& b, int p, int v) { b.output(b.op("MatMul", {p, v})), b.output(p); }, 40, 16, 4)));
  // Two products read the weights.
  EXPECT_FALSE(row_product_kernel(plan([](GraphBuilder& b, int p, int v) {
    b.output(b.op("MatMul", {p, v}));
    b.output(b.op("MatMul", {p, b.op("Neg", {v})}));
  }, 40, 16, 4)));
  // The row is longer than kMaxRowProductK, or the product has more than kMaxPrologueMacs multiply-adds.
  EXPECT_FALSE(row_product_kernel(plan(mm, 40, kMaxRowProductK + 1, 4)));
  EXPECT_FALSE(row_product_kernel(plan(mm, 1 << 12, 1 << 10, 8)));
  // The product's epilogue is more than its store (a bias: the output fusion's).
  EXPECT_FALSE(row_product_kernel(plan([](GraphBuilder& b, int p, int v) { b.output(b.op("Relu", {b.op("MatMul", {p, v})})); }, 40, 16, 4)));
  // The weights are the product's B, not its A.
  EXPECT_FALSE(row_product_kernel(plan([](GraphBuilder& b, int p, int v) {
    b.output(b.op("MatMul", {b.op("Transpose", {v}), b.op("Transpose", {p})}));
  }, 40, 16, 4)));
}

// Shapes the attention cases do not reach, against ref on every backend: more rows than a
// dispatch has groups (the grid-stride row loop reuses the shared row: its barriers), sums
// unrolled 8 at a time (K > 64 terms per thread) with and without a tail, interleaved partial
// sums with a tail (K % parts != 0), fp16 with B broadcast over the batch.
TEST(RowProduct, OddShapesMatchRef) {
  ScopedEnv off("FUSOR_INLINE_DOT", "0");
  struct Case {
    DType t;
    Shape x, v;
  };
  const std::vector<Case> cases = {{DType::f32, {70000, 4}, {4, 4}},     {DType::f32, {32, 200}, {200, 200}},
                                   {DType::f32, {32, 201}, {201, 130}},  {DType::f32, {40, 100}, {100, 3}},
                                   {DType::f16, {2, 3, 6, 40}, {40, 24}}, {DType::bf16, {3, 40, 33}, {3, 33, 17}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(dtype_name(c.t)) + " " + shape_str(c.x) + " @ " + shape_str(c.v));
    GraphBuilder b("rp", 17);
    const int x = b.input("x", c.t, c.x), v = b.input("v", c.t, c.v);
    b.output(b.op("MatMul", {b.op("Softmax", {x}, {{"axis", int64_t{-1}}}), v}));
    const Graph g = b.build();
    const std::vector<Tensor> in = {testing::random_tensor(c.t, c.x, 5, -3.0, 3.0), testing::random_tensor(c.t, c.v, 6, -2.0, 2.0)};
    ASSERT_TRUE(row_product_kernel(plan_of(g, in)));
    const Tensor want = Session(g, "ref").run(in)[0];
    for (const std::string& be : testing::usable_backends()) {
      if (be == "ref") continue;
      SCOPED_TRACE(be);
      EXPECT_LE(error_in_ulps_of_max(Session(g, be).run(in)[0], want), c.t == DType::f32 ? 64.0 : 4.0);
    }
  }
}

}  // namespace
}  // namespace fusor
