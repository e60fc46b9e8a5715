// fp16/bf16 contractions whose one ONNX node ends in an epilogue (Gemm's alpha, beta and C;
// Conv's bias; an Einsum that sums a label before its product) round once, as `ref` and
// onnxruntime do: the decomposition keeps the contraction's fp32 result through the epilogue
// (Node::f32_result) and one Cast rounds at the end. A MatMul followed by its own Add is two
// nodes and rounds twice. Operands are seeded random multiples of 2^-5 (2^-8 for Einsum's summed
// operand), so every fp32 partial sum and epilogue step is exact and cpu (fused and unfused),
// vulkan and cuda must equal ref bit for bit; C and the bias nearly cancel the product, so a
// product rounded to the dtype first is off by several ulps (each case checks that it would be).
// Without a GPU the CUDA kernels (template, and cuBLASLt's epilogue kernels) are NVRTC-compiled.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "ir/kernel_spec.h"
#include "ir/passes.h"
#include "runtime/session.h"
#if defined(FUSOR_HAVE_CUDA) || defined(FUSOR_HAVE_VULKAN)
#include "backends/codegen.h"
#endif
#ifdef FUSOR_HAVE_VULKAN
#include "backends/vulkan/vk_compile.h"
#include "backends/vulkan/vk_device.h"
#include "backends/vulkan/vk_dialect.h"
#include "vk_described_device.h"
#endif
#ifdef FUSOR_HAVE_CUDA
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_conv.h"
#include "backends/cuda/cuda_gemm.h"
#endif

namespace fusor {
namespace {

bool has_device(const std::string& name) {
  auto names = backend_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) return false;
  return !make_backend(name)->devices().empty();
}

// Seeded random non-zero multiples of 2^-bits in [-1, 1] ([0, 1] when positive; exact in fp16
// for bits <= 10, in bf16 for bits <= 7).
Tensor grid(DType t, const Shape& s, uint64_t seed, int bits = 5, bool positive = false) {
  std::mt19937_64 rng(seed);
  const int n = 1 << bits;
  std::uniform_int_distribution<int> d(positive ? 1 : -n, n);
  Tensor x(t, s);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int v = 0;
    while (v == 0) v = d(rng);
    x.set(i, std::ldexp(v, -bits));
  }
  return x;
}

// v rounded to t (nearest even).
double in_dtype(DType t, double v) {
  Tensor x(t, {1});
  x.set(0, v);
  return x.get(0);
}

// Elements where got and want differ in bits, with the largest ulp distance, for messages.
std::string differences(const Tensor& got, const Tensor& want) {
  int64_t n = 0, worst = 0, first = -1;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const size_t es = dtype_size(want.dtype());
    if (std::memcmp(got.raw() + i * es, want.raw() + i * es, es) == 0) continue;
    ++n;
    if (first < 0) first = i;
    const int64_t u = ulp_distance(want.dtype(), got.get(i), want.get(i));
    worst = u < 0 || worst < 0 ? -1 : std::max(worst, u);
  }
  if (n == 0) return "";
  return std::to_string(n) + " of " + std::to_string(want.numel()) + " elements differ, up to " +
         std::to_string(worst) + " ulp; first [" + std::to_string(first) + "] " + std::to_string(got.get(first)) +
         " vs " + std::to_string(want.get(first));
}

// The dtype of a contraction kernel's acc nodes (KernelSpec::acc_dtype, spelled out here).
DType acc_of(const KernelSpec& k) {
  for (const ExprNode& e : k.expr)
    if (e.kind == ExprKind::acc) return e.dtype;
  return DType::undefined;
}

struct Case {
  std::string name;
  Graph graph;  // static, one output
  std::vector<Tensor> feed;
  bool one_kernel = true;  // fused: the whole node is one contraction kernel with an fp32 acc
};

// Runs c on ref, cpu (fused, unfused), vulkan and cuda where present and compares bit for bit
// with ref; `twice` (the same math with the product rounded to the dtype first) must differ
// from ref, or the case could not catch the fault. Without a CUDA device the plan's kernels
// are NVRTC-compiled, on the template and with cuBLASLt's epilogue.
void check(const Case& c, const Tensor* twice) {
  SCOPED_TRACE(c.name);
  const Tensor want = run_on_backend("ref", c.graph, c.feed)[0];
  if (twice) EXPECT_NE(differences(*twice, want), "") << "two roundings agree with one: the case cannot fail";
  for (const std::string backend : {"cpu", "vulkan", "cuda"}) {
    if (!has_device(backend)) continue;
    for (bool fusion : {true, false}) {
      CompileOptions o;
      o.fusion = fusion;
      std::vector<Tensor> got;
      try {
        got = run_on_backend(backend, c.graph, c.feed, o);
      } catch (const Unsupported& e) {
        std::printf("%s on %s: skipped: %s\n", c.name.c_str(), backend.c_str(), e.what());
        continue;
      }
      ASSERT_EQ(got.size(), 1u);
      ASSERT_EQ(got[0].dtype(), want.dtype());
      ASSERT_EQ(got[0].shape(), want.shape());
      EXPECT_EQ(differences(got[0], want), "") << backend << (fusion ? "" : " unfused");
    }
  }
  const Plan p = build_plan(c.graph);
  if (c.one_kernel) {
    ASSERT_EQ(p.kernels.size(), 1u) << "the epilogue is fused into the contraction";
    const KernelSpec& k = p.kernels[0];
    ASSERT_TRUE(k.matmul || k.conv);
    EXPECT_EQ(acc_of(k), DType::f32);
    const int a = k.matmul ? k.matmul->a_buffer : k.conv->x_buffer,
              b = k.matmul ? k.matmul->b_buffer : k.conv->w_buffer;
    EXPECT_EQ(p.buffers[a].dtype, want.dtype()) << "operands are read in their dtype";
    EXPECT_EQ(p.buffers[b].dtype, want.dtype());
  }
#ifdef FUSOR_HAVE_CUDA
  if (has_device("cuda")) return;
  for (const KernelSpec& k : p.kernels) {
    auto compile = [&](const std::string& src, const char* how) {
      if (src.empty()) return;
      try {
        nvrtc_compile_check(src, kernel_identifier(k.name));
      } catch (const Error& e) {
        ADD_FAILURE() << k.name << " (" << how << "): " << e.what() << "\n" << src;
      }
    };
    compile(cuda_kernel_source(k, p, nullptr), "template");
    ::setenv("FUSOR_CUDA_GEMM", "cublaslt", 1);
    ::setenv("FUSOR_CUDA_CONV", "cudnn", 1);
    const std::optional<LibraryGemm> lib = cuda_library_gemm(k, p);
    const std::optional<LibraryConv> conv = cuda_library_conv(k, p);
    ::unsetenv("FUSOR_CUDA_GEMM");
    ::unsetenv("FUSOR_CUDA_CONV");
    if (acc_of(k) == DType::f32 && k.matmul && p.buffers[k.matmul->a_buffer].dtype != DType::f32) {
      ASSERT_TRUE(lib.has_value());
      // cuBLASLt returns the fp32 sum (16F/16BF operands, 32F D); the generated epilogue adds
      // alpha, C and rounds once.
      EXPECT_EQ(lib->operand_dtype, want.dtype());
      EXPECT_EQ(lib->out_dtype, DType::f32);
      EXPECT_EQ(static_cast<int>(lib->epilogue), static_cast<int>(LibraryGemm::Epilogue::kernel));
    }
    // cuDNN would return the sum rounded to the dtype: such a conv stays on the template.
    if (k.conv && acc_of(k) != p.buffers[k.conv->x_buffer].dtype) EXPECT_FALSE(conv.has_value());
    if (lib) compile(cuda_kernel_source(k, p, &*lib), "cuBLASLt epilogue");
    if (conv) compile(cuda_kernel_source(k, p, nullptr, &*conv), "cuDNN epilogue");
  }
#endif
}

Graph finish(GraphBuilder& b, int out, const std::vector<Tensor>& feed) {
  b.output(out);
  return specialize(b.build(), feed);
}

// A [M, K] x B [K, N] in double (exact for the grids used here).
std::vector<double> product(const Tensor& a, const Tensor& b, int64_t m, int64_t k, int64_t n) {
  std::vector<double> p(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t q = 0; q < k; ++q) p[i * n + j] += a.get(i * k + q) * b.get(q * n + j);
  return p;
}

// Gemm(A, B^T, C) with alpha and beta; C nearly cancels alpha * A B (row-broadcast: cancels
// row 0; full: every element), as an input or a constant. M = 1 takes the GEMV paths.
void gemm_case(DType t, bool full_c, bool c_input, bool with_c, int64_t M = 16) {
  const int64_t K = 32, N = 24;
  const double alpha = 0.75, beta = 1.5;
  const Tensor a = grid(t, {M, K}, 11), bt = grid(t, {N, K}, 12);
  Tensor bk(t, {K, N});
  for (int64_t q = 0; q < K; ++q)
    for (int64_t j = 0; j < N; ++j) bk.set(q * N + j, bt.get(j * K + q));
  const std::vector<double> p = product(a, bk, M, K, N);
  Tensor cm(t, full_c ? Shape{M, N} : Shape{N});
  for (int64_t i = 0; i < cm.numel(); ++i) cm.set(i, -alpha * p[i] / beta);
  GraphBuilder b("gemm_epilogue", 18);
  std::vector<Tensor> feed{a};
  std::vector<int> ins{b.input("a", t, {M, K}), b.constant("bt", bt)};
  if (with_c) {
    ins.push_back(c_input ? b.input("c", t, cm.shape()) : b.constant("c", cm));
    if (c_input) feed.push_back(cm);
  }
  GraphBuilder::Attrs at{{"transB", int64_t{1}}, {"alpha", alpha}};
  if (with_c) at["beta"] = beta;
  Case c{std::string(dtype_name(t)) + (with_c ? full_c ? " Gemm C full" : " Gemm C row" : " Gemm alpha") +
             (c_input ? " (C input)" : "") + " M " + std::to_string(M),
         {},
         feed};
  c.graph = finish(b, b.op("Gemm", ins, at), feed);
  // The old decomposition: the product rounded to t, then alpha, then beta * C, each rounded.
  Tensor twice(t, {M, N});
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double v = in_dtype(t, in_dtype(t, p[i * N + j]) * alpha);
      if (with_c) v = in_dtype(t, v + in_dtype(t, beta * cm.get(full_c ? i * N + j : j)));
      twice.set(i * N + j, v);
    }
  check(c, &twice);
}

TEST(NumericsEpilogue, HalfGemmRoundsOnce) {
  for (DType t : {DType::f16, DType::bf16}) {
    gemm_case(t, true, false, true);
    gemm_case(t, false, false, true);
    gemm_case(t, true, true, true);
    gemm_case(t, false, false, false);
    gemm_case(t, false, false, true, 1);
  }
}

// Conv with a bias that cancels the sum at one position of each output channel; groups 2
// (with a Relu after it, fused too) and depthwise.
void conv_case(DType t, int64_t c, int64_t k, int64_t groups, bool relu) {
  const int64_t n = 2, h = 8, w = 8, cpg = c / groups, kpg = k / groups;
  const Tensor x = grid(t, {n, c, h, w}, 21), wt = grid(t, {k, cpg, 3, 3}, 22);
  auto sum_at = [&](int64_t img, int64_t ko, int64_t oy, int64_t ox) {  // pads 1, stride 1
    double s = 0;
    for (int64_t ci = 0; ci < cpg; ++ci)
      for (int64_t r = 0; r < 3; ++r)
        for (int64_t q = 0; q < 3; ++q) {
          const int64_t iy = oy - 1 + r, ix = ox - 1 + q, ch = ko / kpg * cpg + ci;
          if (iy >= 0 && iy < h && ix >= 0 && ix < w)
            s += x.get(((img * c + ch) * h + iy) * w + ix) * wt.get(((ko * cpg + ci) * 3 + r) * 3 + q);
        }
    return s;
  };
  Tensor bias(t, {k});
  for (int64_t ko = 0; ko < k; ++ko) bias.set(ko, -sum_at(0, ko, 3, 4));
  GraphBuilder b("conv_epilogue", 18);
  int y = b.op("Conv", {b.input("x", t, {n, c, h, w}), b.constant("w", wt), b.constant("bias", bias)},
               {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"group", groups}});
  if (relu) y = b.op("Relu", {y});
  Case cs{
      std::string(dtype_name(t)) + " Conv bias groups " + std::to_string(groups) + (relu ? " + Relu" : ""), {}, {x}};
  cs.graph = finish(b, y, cs.feed);
  Tensor twice(t, {n, k, h, w});
  for (int64_t img = 0; img < n; ++img)
    for (int64_t ko = 0; ko < k; ++ko)
      for (int64_t oy = 0; oy < h; ++oy)
        for (int64_t ox = 0; ox < w; ++ox) {
          double v = in_dtype(t, in_dtype(t, sum_at(img, ko, oy, ox)) + bias.get(ko));
          twice.set(((img * k + ko) * h + oy) * w + ox, relu ? std::max(v, 0.0) : v);
        }
  check(cs, &twice);
}

TEST(NumericsEpilogue, HalfConvBiasRoundsOnce) {
  for (DType t : {DType::f16, DType::bf16}) {
    conv_case(t, 4, 6, 1, false);
    conv_case(t, 4, 6, 2, true);
    conv_case(t, 8, 8, 8, false);  // depthwise
  }
}

// A Conv + bias whose reader is a reduction (GlobalAveragePool) cannot take output fusion: the
// conv kernel still ends in the bias and the one rounding, and stores the fp16/bf16 value (not
// the fp32 sum) for the reduction kernel, as many bytes as a conv that rounded first.
TEST(NumericsEpilogue, HalfConvBiasBeforeAReductionStoresTheNarrowValue) {
  for (DType t : {DType::f16, DType::bf16}) {
    const Tensor x = grid(t, {2, 4, 8, 8}, 61);
    GraphBuilder b("conv_pool", 18);
    int y = b.op("Conv",
                 {b.input("x", t, {2, 4, 8, 8}), b.constant("w", grid(t, {6, 4, 3, 3}, 62)),
                  b.constant("bias", grid(t, {6}, 63))},
                 {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
    Case c{std::string(dtype_name(t)) + " Conv bias Relu GlobalAveragePool", {}, {x}};
    c.graph = finish(b, b.op("GlobalAveragePool", {b.op("Relu", {y})}), c.feed);
    c.one_kernel = false;
    check(c, nullptr);
    const Plan p = build_plan(c.graph);  // conv (+ bias, Cast), ReduceMean (fp32, as decomposed), Cast
    ASSERT_EQ(p.kernels.size(), 3u);
    const KernelSpec& k = p.kernels[0];
    ASSERT_TRUE(k.conv);
    EXPECT_EQ(acc_of(k), DType::f32);
    ASSERT_EQ(k.outputs.size(), 1u);
    EXPECT_EQ(p.buffers[k.outputs[0].buffer].dtype, t) << "the conv kernel stores the rounded value";
  }
}

// A ConvTranspose and a 1-D Conv with bias are not decomposed: their kernels (ref, the cpu
// interpreter's and the GPUs' opaque ones) start the fp32 sum at the bias and round once.
TEST(NumericsEpilogue, HalfUndecomposedConvsWithBiasRoundOnce) {
  for (DType t : {DType::f16, DType::bf16}) {
    {
      GraphBuilder b("convtranspose_bias", 18);
      Case c{std::string(dtype_name(t)) + " ConvTranspose bias", {}, {grid(t, {1, 4, 5, 5}, 51)}};
      c.graph = finish(b,
                       b.op("ConvTranspose",
                            {b.input("x", t, {1, 4, 5, 5}), b.constant("w", grid(t, {4, 3, 3, 3}, 52)),
                             b.constant("bias", grid(t, {3}, 53))},
                            {{"strides", std::vector<int64_t>{2, 2}}}),
                       c.feed);
      c.one_kernel = false;
      check(c, nullptr);
    }
    {
      GraphBuilder b("conv1d_bias", 18);
      Case c{std::string(dtype_name(t)) + " Conv 1-D bias", {}, {grid(t, {2, 4, 16}, 54)}};
      c.graph = finish(b,
                       b.op("Conv",
                            {b.input("x", t, {2, 4, 16}), b.constant("w", grid(t, {6, 4, 3}, 55)),
                             b.constant("bias", grid(t, {6}, 56))},
                            {{"pads", std::vector<int64_t>{1, 1}}}),
                       c.feed);
      c.one_kernel = false;
      check(c, nullptr);
    }
  }
}

// Einsum "ij,jk->i": k is summed from B alone before the product; that partial sum (about 32,
// on B's finer positive grid) needs more bits than fp16/bf16 have and must not be rounded.
TEST(NumericsEpilogue, HalfEinsumSumsBeforeRoundingOnce) {
  for (DType t : {DType::f16, DType::bf16}) {
    const int64_t I = 64, J = 16, K = 64;
    const Tensor a = grid(t, {I, J}, 31), bm = grid(t, {J, K}, 32, t == DType::f16 ? 8 : 7, true);
    GraphBuilder b("einsum_epilogue", 18);
    Case c{std::string(dtype_name(t)) + " Einsum ij,jk->i", {}, {a}};
    c.graph = finish(
        b, b.op("Einsum", {b.input("a", t, {I, J}), b.constant("b", bm)}, {{"equation", std::string("ij,jk->i")}}),
        c.feed);
    c.one_kernel = false;
    Tensor twice(t, {I});
    for (int64_t i = 0; i < I; ++i) {
      double s = 0;
      for (int64_t j = 0; j < J; ++j) {
        double r = 0;
        for (int64_t q = 0; q < K; ++q) r += bm.get(j * K + q);
        s += a.get(i * J + j) * in_dtype(t, r);
      }
      twice.set(i, in_dtype(t, s));
    }
    check(c, &twice);
  }
}

// MatMul then Add are two ONNX nodes: the product is rounded before the Add, on every backend.
TEST(NumericsEpilogue, HalfMatMulThenAddRoundsTwice) {
  for (DType t : {DType::f16, DType::bf16}) {
    const int64_t M = 16, K = 32, N = 24;
    const Tensor a = grid(t, {M, K}, 41), bk = grid(t, {K, N}, 42);
    const std::vector<double> p = product(a, bk, M, K, N);
    Tensor cm(t, {M, N}), once(t, {M, N});
    for (int64_t i = 0; i < cm.numel(); ++i) cm.set(i, -p[i]);
    for (int64_t i = 0; i < cm.numel(); ++i) once.set(i, p[i] + cm.get(i));
    GraphBuilder b("matmul_add", 18);
    Case c{std::string(dtype_name(t)) + " MatMul + Add", {}, {a}};
    c.graph = finish(
        b, b.op("Add", {b.op("MatMul", {b.input("a", t, {M, K}), b.constant("b", bk)}), b.constant("c", cm)}), c.feed);
    c.one_kernel = false;
    check(c, nullptr);
    const Tensor want = run_on_backend("ref", c.graph, c.feed)[0];
    EXPECT_NE(differences(once, want), "") << "ref rounds the product first";
    const Plan plan = build_plan(c.graph);
    ASSERT_EQ(plan.kernels.size(), 1u);
    EXPECT_EQ(acc_of(plan.kernels[0]), t) << "the product has its node's dtype";
  }
}


#ifdef FUSOR_HAVE_VULKAN
// On a device whose fp32 -> fp16 conversion rounds to nearest even with subnormals kept, stores
// are the plain conversion, but a value rounded in a register (the MatMul's fp16 product read by
// the Add) keeps the software rounding: NVIDIA's compiler folds float(float16_t(x)) to x, which
// failed HalfMatMulThenAddRoundsTwice on an H100. Checked on a described device (no GPU needed).
TEST(NumericsEpilogue, HalfRoundingInRegistersIsNotTheFoldableConversion) {
  const int64_t M = 16, K = 32, N = 24;
  const DType t = DType::f16;
  GraphBuilder b("matmul_add", 18);
  std::vector<Tensor> feed{grid(t, {M, K}, 41)};
  Graph g = finish(b, b.op("Add", {b.op("MatMul", {b.input("a", t, {M, K}), b.constant("b", grid(t, {K, N}, 42))}),
                                   b.constant("c", grid(t, {M, N}, 43))}), feed);
  const Plan p = build_plan(g);
  ASSERT_EQ(p.kernels.size(), 1u);
  const KernelSpec& k = p.kernels[0];
  for (bool rte : {false, true}) {
    SCOPED_TRACE(rte ? "device converts exactly" : "software rounding");
    vk::PhysicalDeviceInfo dev = testing::described_vk_device(true);
    dev.float_controls = true;
    dev.rounding_rte[0] = dev.denorm_preserve[0] = rte;
    ASSERT_EQ(dev.f16_convert_exact(), rte);
    vk::VulkanDialect d(dev, k, std::vector<int64_t>(kernel_bindings(k).size(), 0), &p);
    const std::string src = emit_kernel(k, p, d);
    EXPECT_NE(src.find("float(float16_t(fz_round_f16("), std::string::npos) << "the product is rounded in a register\n" << src;
    // The store: the plain conversion only where the device rounds it exactly.
    const bool plain_store = src.find("= float16_t(fz_round_f16(") == std::string::npos;
    EXPECT_EQ(plain_store, rte) << src;
    EXPECT_NO_THROW(vk::compile_glsl(dev, kernel_identifier(k.name), src)) << src;
  }
}
#endif

}  // namespace
}  // namespace fusor
