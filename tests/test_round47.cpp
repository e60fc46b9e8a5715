// Red-team round 47 (docs/redteam.md): the newest fusion rewrites at their limits. What it
// showed: output fusion could give a loop kernel that already read kMaxLoadsPerKernel buffers
// (the product and 11 addends) the contraction's two operands as well, 13 bindings.
#include <gtest/gtest.h>

#include "frontend/builder.h"
#include "ir/passes.h"
#include "runtime/session.h"
#include "test_util.h"

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

}  // namespace
}  // namespace fusor
