// QuantizeLinear / DequantizeLinear (ir/ops/quant.cpp) against values computed by hand: per
// tensor, per axis, blocked, saturation and round-half-to-even; integers compare exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
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

using testing::expect_values;
using testing::ints_of;
using testing::run_op;
using testing::tensor_of;

void expect_ints(const Tensor& t, DType dt, const std::vector<int64_t>& want) {
  ASSERT_EQ(t.dtype(), dt);
  ASSERT_EQ(static_cast<size_t>(t.numel()), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(t.get_int(static_cast<int64_t>(i)), want[i]) << "element " << i;
}

TEST(Quant, QuantizePerTensorRoundsHalfToEvenAndSaturates) {
  // x / 0.5 = 1, 5, 5, -1, 600, -7, + 10, saturated to [0, 255]; ties are checked below.
  Tensor x = tensor_of({6}, {0.5, 2.5, 2.5, -0.5, 300, -3.5});
  auto u = run_op({"QuantizeLinear", {x, tensor_of({}, {0.5}), ints_of({}, {10}, DType::u8)}, {}, 13});
  expect_ints(u[0], DType::u8, {11, 15, 15, 9, 255, 3});
  auto half = run_op({"QuantizeLinear", {tensor_of({4}, {2.5, 3.5, -2.5, 0.4}), tensor_of({}, {1.0}), ints_of({}, {0}, DType::i8)}, {}, 13});
  expect_ints(half[0], DType::i8, {2, 4, -2, 0});
  // No zero point: uint8 output, saturating at 0.
  auto nz = run_op({"QuantizeLinear", {tensor_of({2}, {-3, 7}), tensor_of({}, {1.0})}, {}, 13});
  expect_ints(nz[0], DType::u8, {0, 7});
}

TEST(Quant, PerAxisAndBlocked) {
  // x [2, 3], per-axis scale on axis 1.
  Tensor x = tensor_of({2, 3}, {1, 2, 3, 4, 5, 6});
  auto q = run_op({"QuantizeLinear", {x, tensor_of({3}, {1, 2, 4}), ints_of({3}, {0, 1, -1}, DType::i8)}, {{"axis", int64_t{1}}}, 13});
  expect_ints(q[0], DType::i8, {1, 2, 0, 4, 3, 1});  // 1/1, 2/2+1, rint(0.75)-1, 4/1, rint(2.5)+1, rint(1.5)-1
  auto d = run_op({"DequantizeLinear", {ints_of({2, 3}, {1, 2, 0, 4, 4, 1}, DType::i8), tensor_of({3}, {1, 2, 4}),
                                         ints_of({3}, {0, 1, -1}, DType::i8)}, {{"axis", int64_t{1}}}, 13});
  expect_values(d[0], {1, 2, 4, 4, 6, 8});
  // Blocked along axis 1 with block 2: scale [2, 2] covers columns {0,1} and {2}.
  auto b = run_op({"DequantizeLinear", {ints_of({2, 3}, {1, 2, 3, 4, 5, 6}, DType::i16), tensor_of({2, 2}, {0.5, 10, 2, -1})},
                   {{"axis", int64_t{1}}, {"block_size", int64_t{2}}}, 21});
  expect_values(b[0], {0.5, 1, 30, 8, 10, -6});
  // A scale that fits no layout is a shape error.
  EXPECT_THROW(run_op({"DequantizeLinear", {ints_of({2, 3}, {1, 2, 3, 4, 5, 6}, DType::u8), tensor_of({2}, {1, 2})}, {}, 13}), Error);
}

// Activations' QuantizeLinear / DequantizeLinear are element-wise primitives after decomposition
// (ir/decompose.cpp rewrite_quant), so a QDQ chain fuses into one kernel on every backend
// instead of running on the host; the values stay the ops' bit for bit: ties round half to
// even, NaN quantizes to 0, +-inf and huge values saturate, per axis and per tensor, int8 /
// uint8 / int16 outputs, on seeded inputs with those values planted.
TEST(Quant, ActivationQdqChainsFuseAndKeepTheirBits) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  Tensor x = testing::random_tensor(DType::f32, {4, 6, 5}, 11, -3.0, 3.0);
  const std::vector<float> planted{nan, inf, -inf, 1e30f, -1e30f, -0.0f, 0.25f * 2.5f, 0.25f * -3.5f, 0.125f * 4.5f, 1e-40f};
  for (size_t i = 0; i < planted.size(); ++i) x.set(static_cast<int64_t>(7 * i + 3), planted[i]);
  Tensor axis_scale(DType::f32, {6}), axis_zp(DType::i8, {6}), s8(DType::f32, {}), zu8(DType::u8, {}), s16(DType::f32, {}), z16(DType::i16, {});
  for (int64_t c = 0; c < 6; ++c) axis_scale.set(c, 0.25 / static_cast<double>(1 << (c % 3))), axis_zp.set_int(c, c * 7 - 20);
  s8.set(0, 0.03125), zu8.set_int(0, 128), s16.set(0, 1.0 / 1024), z16.set_int(0, -300);
  GraphBuilder b("qdq");
  const int in = b.input("x", DType::f32, {4, 6, 5});
  const int q1 = b.op("QuantizeLinear", {in, b.constant("s1", axis_scale), b.constant("z1", axis_zp)}, {{"axis", int64_t{1}}});
  const int d1 = b.op("DequantizeLinear", {q1, b.constant("s1b", axis_scale), b.constant("z1b", axis_zp)}, {{"axis", int64_t{1}}});
  const int q2 = b.op("QuantizeLinear", {b.op("Relu", {d1}), b.constant("s2", s8), b.constant("z2", zu8)});
  const int d2 = b.op("DequantizeLinear", {q2, b.constant("s2b", s8), b.constant("z2b", zu8)});
  const int q3 = b.op("QuantizeLinear", {b.op("Mul", {d2, in}), b.constant("s3", s16), b.constant("z3", z16)});
  b.output(q1);
  b.output(q2);
  b.output(b.op("DequantizeLinear", {q3, b.constant("s3b", s16), b.constant("z3b", z16)}));
  b.output(q3);
  const Graph g = b.build();
  const Plan p = build_plan(specialize(g, {x}));
  for (const KernelSpec& k : p.kernels)
    for (const std::string& op : k.fused_ops) EXPECT_TRUE(op != "QuantizeLinear" && op != "DequantizeLinear") << k.name;
  const std::vector<Tensor> want = Session(g, "ref").run({x});
  ASSERT_EQ(want.size(), 4u);
  EXPECT_EQ(want[0].dtype(), DType::i8);
  EXPECT_EQ(want[1].dtype(), DType::u8);
  EXPECT_EQ(want[3].dtype(), DType::i16);
  EXPECT_EQ(want[0].get_int(3), 0) << "NaN quantizes to 0";
  EXPECT_EQ(want[0].get_int(10), 127) << "inf saturates";
  for (const std::string& be : testing::usable_backends()) {
    SCOPED_TRACE(be);
    const std::vector<Tensor> got = Session(g, be).run({x});
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) {
      ASSERT_EQ(got[k].dtype(), want[k].dtype());
      EXPECT_EQ(0, std::memcmp(got[k].raw(), want[k].raw(), want[k].nbytes())) << "output " << k;
    }
  }
#ifdef FUSOR_HAVE_CUDA
  for (const KernelSpec& k : p.kernels) {  // the fused kernels compile for CUDA without a GPU too
    const std::string src = cuda_kernel_source(k, p, nullptr);
    if (!src.empty()) EXPECT_NO_THROW(nvrtc_compile_check(src, kernel_identifier(k.name))) << src;
  }
#endif
}

}  // namespace
}  // namespace fusor
