// Red-team round 47 (docs/redteam.md): the newest fusion rewrites at their limits. What it
// showed: output fusion could give a loop kernel that already read kMaxLoadsPerKernel buffers
// (the product and 11 addends) the contraction's two operands as well, 13 bindings.
#include <gtest/gtest.h>

#include "frontend/builder.h"
#include "ir/passes.h"
#include "runtime/session.h"
#include "test_util.h"

#ifdef FUSOR_HAVE_CUDA
#include "backends/codegen.h"
#include "backends/cuda/cuda_backend.h"
#endif

namespace fusor {
namespace {

// s = A @ B + m_1 + ... + m_J over [40, 40]: with J = 11 the reader of the product reads 12
// buffers; fusing the product into it (output fusion) would make 13.
Graph product_and_addends(int j) {
  GraphBuilder b;
  int s = b.op("MatMul", {b.input("a", DType::f32, {40, 8}), b.input("b", DType::f32, {8, 40})});
  for (int i = 0; i < j; ++i) s = b.op("Add", {s, b.input("m" + std::to_string(i), DType::f32, {40, 40})});
  b.output(s);
  Graph g = b.build();
  make_static(g, {});
  return g;
}

TEST(Round47, OutputFusionStaysWithinTheDescriptorBudget) {
  for (int j : {9, 10, 11, 12, 13}) {
    SCOPED_TRACE("addends " + std::to_string(j));
    Graph g = product_and_addends(j);
    const Plan p = build_plan(g);
    for (const KernelSpec& k : p.kernels)
      EXPECT_LE(k.input_buffers().size(), static_cast<size_t>(kMaxLoadsPerKernel)) << k.name;
    // Up to 10 addends the product still fuses into its reader (one kernel).
    if (j <= 10) EXPECT_EQ(p.kernels.size(), 1u);
    std::vector<Tensor> in;
    in.push_back(testing::random_tensor(DType::f32, {40, 8}, 470));
    in.push_back(testing::random_tensor(DType::f32, {8, 40}, 471));
    for (int i = 0; i < j; ++i) in.push_back(testing::random_tensor(DType::f32, {40, 40}, 472 + i));
    const Tensor want = run_on_backend("ref", g, in)[0];
    for (const std::string& be : testing::usable_backends()) {
      if (be == "ref") continue;
      const Tensor got = run_on_backend(be, g, in)[0];
      const CompareResult c = compare_tensors(got, want, 1e-5, 1e-5);
      EXPECT_TRUE(c.ok) << be << ": " << c.message;
    }
  }
}

#ifdef FUSOR_HAVE_CUDA
// Each kernel's emitter looked its own position up by comparing every kernel's name with its
// own: quadratic in the kernel count (a Concat of 20,000 computed inputs spent 6.2 s in Vulkan
// codegen, 0.7 s after; 32,000 CUDA sources 5 s before, 0.2 s after). CPU time of this thread, so a loaded machine does not make it flaky.
TEST(Round47, KernelSourcesAreEmittedInLinearTime) {
  GraphBuilder b;
  const int r = b.op("Relu", {b.input("x", DType::f32, {1, 4})});
  std::vector<int> parts;
  for (int i = 0; i < 32000; ++i) parts.push_back(b.op("Add", {r, b.constant("c" + std::to_string(i), testing::tensor_of({1, 4}, {1.0 * i, 2, 3, 4}))}));
  b.output(b.op("Concat", parts, {{"axis", int64_t{0}}}));
  Graph g = b.build();
  make_static(g, {});
  const Plan p = build_plan(g);
  ASSERT_GE(p.kernels.size(), 32000u);
  const double t0 = testing::thread_cpu_seconds();
  size_t bytes = 0;
  for (const KernelSpec& k : p.kernels) bytes += cuda_kernel_source(k, p, nullptr).size();
  const double s = testing::thread_cpu_seconds() - t0;
  EXPECT_GT(bytes, 0u);
  EXPECT_LT(s, 2.0) << "emitting " << p.kernels.size() << " kernels took " << s << " s of CPU";
}
#endif

}  // namespace
}  // namespace fusor
