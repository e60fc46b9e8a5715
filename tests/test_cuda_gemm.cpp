// Matmul kernels on cuBLASLt, checked without a GPU: the LibraryGemm that cuda_library_gemm
// gives (operands, transposes, leading dimensions, batch strides, epilogue) is evaluated on the
// CPU with cublasLtMatmul's column-major semantics and compared with `ref`; the generated
// epilogue kernels are NVRTC-compiled. GPU runs of the same graphs are in CudaGemm.OnDevice.
#ifdef FUSOR_HAVE_CUDA
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_gemm.h"
#include "frontend/builder.h"
#include "ir/passes.h"
#include "runtime/session.h"
#include "cuda_device_check.h"
#include "test_util.h"

namespace fusor {
namespace {

struct GemmCase {
  std::string name;
  std::function<void(GraphBuilder&)> build;  // one output
  bool library = true;                       // cuda_library_gemm picks cuBLASLt (default policy)
  LibraryGemm::Epilogue epilogue = LibraryGemm::Epilogue::none;
  std::function<double(double)> after = nullptr;  // Epilogue::kernel: what the epilogue kernel applies
  DType dtype = DType::f32;                       // of every input and constant
};

// The dtype the case being built uses (set by build_case).
DType g_dtype = DType::f32;

int in(GraphBuilder& b, const std::string& n, Shape s) { return b.input(n, g_dtype, std::move(s)); }
int i64(GraphBuilder& b, const std::string& n, int64_t v) {
  Tensor t(DType::i64, {1});
  t.set_int(0, v);
  return b.constant(n, t);
}
int cst(GraphBuilder& b, const std::string& n, Shape s, uint64_t seed) {
  return b.constant(n, testing::random_tensor(g_dtype, s, seed));
}

std::vector<GemmCase> cases() {
  using E = LibraryGemm::Epilogue;
  return {
      {"plain", [](GraphBuilder& b) { b.output(b.op("MatMul", {in(b, "x", {64, 96}), cst(b, "w", {96, 80}, 1)})); }},
      {"gemm_transB_bias",
       [](GraphBuilder& b) {
         b.output(b.op("Gemm", {in(b, "x", {64, 96}), cst(b, "wt", {80, 96}, 2), cst(b, "bias", {80}, 3)}, {{"transB", int64_t{1}}}));
       },
       true, E::bias},
      {"relu_bias",
       [](GraphBuilder& b) {
         int m = b.op("MatMul", {in(b, "x", {64, 96}), cst(b, "w", {96, 80}, 4)});
         b.output(b.op("Relu", {b.op("Add", {m, cst(b, "bias", {80}, 5)})}));
       },
       true, E::relu_bias},
      {"transposed_a",
       [](GraphBuilder& b) {
         int xt = in(b, "xt", {96, 64});
         b.output(b.op("MatMul", {b.op("Transpose", {xt}, {{"perm", std::vector<int64_t>{1, 0}}}), cst(b, "w", {96, 80}, 6)}));
       }},
      {"batched",
       [](GraphBuilder& b) { b.output(b.op("MatMul", {in(b, "a", {3, 64, 32}), in(b, "b", {3, 32, 96})})); }},
      {"broadcast_b",
       [](GraphBuilder& b) { b.output(b.op("MatMul", {in(b, "a", {2, 3, 64, 32}), cst(b, "w", {32, 96}, 7)})); }},
      {"sliced_a",
       [](GraphBuilder& b) {
         int qkv = in(b, "qkv", {64, 192});
         int s = b.op("Slice", {qkv, i64(b, "st", 64), i64(b, "en", 128), i64(b, "ax", 1)});
         b.output(b.op("MatMul", {s, cst(b, "w", {64, 80}, 8)}));
       }},
      {"transposed_output",  // attention: [1, h, s, d] stored as [1, s, h, d] by cuBLASLt itself
       [](GraphBuilder& b) {
         int m = b.op("MatMul", {in(b, "q", {1, 12, 64, 64}), in(b, "v", {1, 12, 64, 64})});
         b.output(b.op("Transpose", {m}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}}));
       }},
      {"tanh_epilogue",
       [](GraphBuilder& b) { b.output(b.op("Tanh", {b.op("MatMul", {in(b, "x", {64, 96}), cst(b, "w", {96, 80}, 9)})})); },
       true, E::kernel, [](double v) { return std::tanh(v); }},
      {"skinny_stays_on_template",
       [](GraphBuilder& b) { b.output(b.op("MatMul", {in(b, "x", {4, 1024}), cst(b, "w", {1024, 512}, 10)})); }, false},
      // fp16/bf16 operands (CUDA_R_16F / CUDA_R_16BF, fp32 accumulation): cuBLASLt writes a bare
      // product in the dtype; anything after it is the generated epilogue over an fp32 scratch,
      // which rounds the product to the dtype first where the product is its own node (here,
      // and a MatMul + Add) and not for a Gemm's C (tests/test_numerics_epilogue.cpp).
      {"f16_plain", [](GraphBuilder& b) { b.output(b.op("MatMul", {in(b, "x", {64, 96}), cst(b, "w", {96, 80}, 11)})); }, true,
       E::none, nullptr, DType::f16},
      {"f16_transB_tanh",
       [](GraphBuilder& b) {
         int m = b.op("Gemm", {in(b, "x", {64, 96}), cst(b, "wt", {80, 96}, 12)}, {{"transB", int64_t{1}}});
         b.output(b.op("Tanh", {m}));
       },
       true, E::kernel, [](double v) { return std::tanh(v); }, DType::f16},
      {"bf16_batched", [](GraphBuilder& b) { b.output(b.op("MatMul", {in(b, "a", {3, 64, 32}), in(b, "b", {3, 32, 96})})); }, true,
       E::none, nullptr, DType::bf16},
      {"bf16_transposed_output",
       [](GraphBuilder& b) {
         int m = b.op("MatMul", {in(b, "q", {1, 12, 64, 64}), in(b, "v", {1, 12, 64, 64})});
         b.output(b.op("Transpose", {m}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}}));
       },
       true, E::none, nullptr, DType::bf16},
  };
}

// The case's static graph and seeded random inputs.
std::pair<Graph, std::vector<Tensor>> build_case(const GemmCase& tc, uint64_t seed) {
  return build_typed_case(tc.build, tc.dtype, g_dtype, seed);
}

// cublasLtMatmul on the host: D (column-major N x M per batch, i.e. row-major C) = op(X) op(Y),
// stored where the LibraryGemm's D layout says (row m of batch b at d_offset + b * d_batch_stride
// + m * d_ld; dense for the scratch of Epilogue::kernel).
std::vector<double> emulate(const LibraryGemm& g, const std::vector<const Tensor*>& buf) {
  std::vector<double> c(static_cast<size_t>(g.batch * g.m * g.n));
  auto elem = [&](const LibraryGemm::Operand& o, int64_t b, int64_t r, int64_t col) {  // op(o)(r, col)
    const int64_t base = o.offset + b * o.batch_stride;
    return buf[o.buffer]->get(base + (o.trans ? col + r * o.ld : r + col * o.ld));
  };
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t m = 0; m < g.m; ++m)
      for (int64_t n = 0; n < g.n; ++n) {
        double acc = 0;
        for (int64_t p = 0; p < g.k; ++p) acc += elem(g.x, b, n, p) * elem(g.y, b, p, m);
        if (g.epilogue == LibraryGemm::Epilogue::bias || g.epilogue == LibraryGemm::Epilogue::relu_bias)
          acc += buf[g.bias_buffer]->get(g.bias_offset + n);
        if (g.epilogue == LibraryGemm::Epilogue::relu_bias) acc = std::max(acc, 0.0);
        c.at(static_cast<size_t>(g.d_offset + b * g.d_batch_stride + m * g.d_ld + n)) = acc;
      }
  return c;
}

TEST(CudaGemm, LibraryLayoutMatchesReference) {
  ::unsetenv("FUSOR_CUDA_GEMM");
  for (auto& tc : cases()) {
    SCOPED_TRACE(tc.name);
    auto [g, inputs] = build_case(tc, 100);
    Plan p = build_plan(g);
    const KernelSpec* mk = nullptr;
    for (auto& k : p.kernels)
      if (k.matmul) mk = &k;
    ASSERT_NE(mk, nullptr) << "no matmul kernel";
    std::optional<LibraryGemm> lib = cuda_library_gemm(*mk, p);
    ASSERT_EQ(lib.has_value(), tc.library);
    if (!lib) continue;
    EXPECT_EQ(static_cast<int>(lib->epilogue), static_cast<int>(tc.epilogue));
    EXPECT_EQ(lib->operand_dtype, tc.dtype);
    EXPECT_EQ(lib->out_dtype, lib->epilogue == LibraryGemm::Epilogue::kernel ? DType::f32 : tc.dtype);
    std::vector<const Tensor*> buf(p.buffers.size(), nullptr);
    for (size_t i = 0; i < p.input_buffers.size(); ++i) buf[p.input_buffers[i]] = &inputs[i];
    for (size_t i = 0; i < p.buffers.size(); ++i)
      if (p.buffers[i].role == Buffer::Role::constant) buf[i] = &*p.graph.values[p.buffers[i].value].constant;
    std::vector<double> got = emulate(*lib, buf);
    if (tc.after)
      for (double& v : got) v = tc.after(v);
    Tensor want = run_on_backend("ref", g, inputs)[0];
    ASSERT_EQ(static_cast<int64_t>(got.size()), want.numel());
    // A wrong operand mapping is off by O(1); the dtype's rounding of ref's output is not.
    const double tol = tc.dtype == DType::f32 ? 1e-4 : tc.dtype == DType::f16 ? 4e-3 : 3e-2;
    double worst = 0;
    for (int64_t i = 0; i < want.numel(); ++i) worst = std::max(worst, std::fabs(got[i] - want.get(i)) / std::max(1.0, std::fabs(want.get(i))));
    EXPECT_LT(worst, tol) << "largest difference from ref";
    // The epilogue kernel exists exactly when cuBLASLt's own epilogue does not cover the output.
    std::string src = cuda_kernel_source(*mk, p, &*lib);
    EXPECT_EQ(src.empty(), lib->epilogue != LibraryGemm::Epilogue::kernel);
    if (!src.empty()) EXPECT_NO_THROW(nvrtc_compile_check(src, kernel_identifier(mk->name)));
  }
}

TEST(CudaGemm, PolicyOverride) {
  GraphBuilder b;
  b.output(b.op("MatMul", {in(b, "x", {4, 1024}), cst(b, "w", {1024, 512}, 11)}));
  Graph g = b.build();
  make_static(g, {});
  Plan p = build_plan(g);
  ::setenv("FUSOR_CUDA_GEMM", "cublaslt", 1);
  EXPECT_TRUE(cuda_library_gemm(p.kernels[0], p).has_value());
  ::setenv("FUSOR_CUDA_GEMM", "template", 1);
  EXPECT_FALSE(cuda_library_gemm(p.kernels[0], p).has_value());
  ::unsetenv("FUSOR_CUDA_GEMM");
  EXPECT_FALSE(cuda_library_gemm(p.kernels[0], p).has_value());  // M = 4: the template's GEMV path
}

// The same graphs on a GPU, cuBLASLt against ref, replayed and eager, and through run_device
// with swapped output buffers (the captured cuBLASLt call must follow the new pointers).
TEST(CudaGemm, OnDevice) {
  if (make_backend("cuda")->devices().empty()) GTEST_SKIP() << "no CUDA device";
  ::unsetenv("FUSOR_CUDA_GEMM");
  for (auto& tc : cases()) {
    SCOPED_TRACE(tc.name);
    auto [g, inputs] = build_case(tc, 200);
    Tensor want = run_on_backend("ref", g, inputs)[0];
    for (bool replay : {true, false}) {
      CompileOptions o;
      o.replay = replay;
      auto exe = make_backend("cuda")->compile(g, o);
      if (tc.library) EXPECT_NE(exe->notes().find("cuBLASLt: 1 of 1"), std::string::npos) << exe->notes();
      // fp32: summation order only; fp16/bf16: plus a rounding of the output in its dtype.
      const double tol = tc.dtype == DType::f32 ? 1e-6 : tc.dtype == DType::f16 ? 1e-3 : 8e-3;
      Tensor got = exe->run(inputs)[0];
      ASSERT_EQ(got.dtype(), want.dtype());
      EXPECT_LE(relative_l2(got, want), tol) << (replay ? "replay" : "eager");
      expect_run_device_matches(*exe, inputs, want, tol);
    }
  }
}

}  // namespace
}  // namespace fusor
#endif
