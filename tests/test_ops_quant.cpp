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


// QLinearConv / ConvInteger / QLinearMatMul / MatMulInteger / DynamicQuantizeLinear decompose
// into float32 contractions that stay exact (ir/decompose_quant_int.cpp): sums whose magnitude
// could pass 2^24 split along K (the 96-channel 3x3 convs with weights near +-127 and a uint8
// input reach 2.3e7 per output: two pieces each), pieces added in int32, the requantization in
// float64; every backend gives ref's integers bit for bit. A reduction that could pass int32
// stays one node (the host runs it).
TEST(Quant, IntegerContractionsDecomposeExactly) {
  const int64_t C = 96, M = 5, K = 600, N = 7;
  Tensor x(DType::u8, {1, C, 6, 6}), w(DType::i8, {M, C, 3, 3}), bias(DType::i32, {M});
  for (int64_t i = 0; i < x.numel(); ++i) x.set_int(i, (i * 97 + 13) % 256);
  for (int64_t i = 0; i < w.numel(); ++i) w.set_int(i, (i % 3 == 0) ? 127 : (i % 3 == 1 ? -128 : (i * 31) % 255 - 127));
  for (int64_t i = 0; i < M; ++i) bias.set_int(i, 1000 * i - 2500);
  Tensor a(DType::i8, {3, K}), bm(DType::u8, {K, N}), azp(DType::i8, {}), bzp(DType::u8, {N});
  for (int64_t i = 0; i < a.numel(); ++i) a.set_int(i, (i * 53) % 256 - 128);
  for (int64_t i = 0; i < bm.numel(); ++i) bm.set_int(i, (i % 2) ? 255 : (i * 29) % 256);
  azp.set_int(0, -3);
  for (int64_t j = 0; j < N; ++j) bzp.set_int(j, 10 * j);
  const auto f32 = [](double v) {
    Tensor t(DType::f32, {});
    t.set(0, v);
    return t;
  };
  const auto u8 = [](int64_t v) {
    Tensor t(DType::u8, {});
    t.set_int(0, v);
    return t;
  };
  Tensor ws(DType::f32, {M});
  for (int64_t i = 0; i < M; ++i) ws.set(i, 0.001 * (i + 1));
  GraphBuilder b("qint");
  const int xi = b.input("x", DType::u8, {1, C, 6, 6}), ai = b.input("a", DType::i8, {3, K}), fi = b.input("f", DType::f32, {4, 9});
  const std::map<std::string, AttrValue> conv{{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  Tensor wz(DType::i8, {});
  b.output(b.op("QLinearConv", {xi, b.constant("xs", f32(0.02)), b.constant("xz", u8(0)), b.constant("w", w), b.constant("ws", ws),
                                b.constant("wz", wz), b.constant("ys", f32(0.5)), b.constant("yz", u8(128)), b.constant("b", bias)},
                conv));
  b.output(b.op("ConvInteger", {xi, b.constant("w2", w), b.constant("xz2", u8(7))}, conv));
  b.output(b.op("MatMulInteger", {ai, b.constant("bm", bm), b.constant("az", azp), b.constant("bz", bzp)}));
  b.output(b.op("QLinearMatMul", {ai, b.constant("as", f32(0.01)), b.constant("az2", azp), b.constant("bm2", bm), b.constant("bs", f32(0.02)),
                                  b.constant("bz2", bzp), b.constant("ys2", f32(0.75)), b.constant("yz2", u8(3))}));
  for (int v : b.op_multi("DynamicQuantizeLinear", {fi}, {}, 3)) b.output(v);
  const Graph g = b.build();
  Tensor f = testing::random_tensor(DType::f32, {4, 9}, 5, -2.0, 3.0);
  f.set(4, std::numeric_limits<float>::quiet_NaN());
  const std::vector<Tensor> in{x, a, f};
  const Plan p = build_plan(specialize(g, in));
  int convs = 0;
  for (const KernelSpec& k : p.kernels)
    for (const std::string& op : k.fused_ops) {
      EXPECT_TRUE(op != "QLinearConv" && op != "ConvInteger" && op != "MatMulInteger" && op != "QLinearMatMul" && op != "DynamicQuantizeLinear")
          << k.name << " keeps " << op;
      convs += op == "Conv";
    }
  EXPECT_GE(convs, 4) << "each conv's reduction is split in two";
  const std::vector<Tensor> want = Session(g, "ref").run(in);
  for (const std::string& be : testing::usable_backends()) {
    SCOPED_TRACE(be);
    const std::vector<Tensor> got = Session(g, be).run(in);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) {
      ASSERT_EQ(got[k].dtype(), want[k].dtype()) << "output " << k;
      EXPECT_EQ(0, std::memcmp(got[k].raw(), want[k].raw(), want[k].nbytes())) << "output " << k;
    }
  }
  // A reduction whose total could pass int32 (K = 40000 x 255 x 255) stays whole.
  GraphBuilder big("qbig");
  const int bi = big.input("a", DType::u8, {1, 40000});
  big.output(big.op("MatMulInteger", {bi, big.input("b", DType::u8, {40000, 1})}));
  Tensor ab(DType::u8, {1, 40000}), bb(DType::u8, {40000, 1});
  const Plan pb = build_plan(specialize(big.build(), {ab, bb}));
  bool whole = false;
  for (const KernelSpec& k : pb.kernels)
    for (const std::string& op : k.fused_ops) whole = whole || op == "MatMulInteger";
  EXPECT_TRUE(whole);
  // Red-team round 19: no output columns (N = 0; a segfault in the bound before) and a QLinearConv
  // bias of one value for two channels (off spec; ref takes it) stay whole and run everywhere.
  GraphBuilder z("qzero");
  const int za = z.input("a", DType::u8, {3, 9});
  z.output(z.op("MatMulInteger", {za, z.constant("b", Tensor(DType::u8, {9, 0}))}));
  const Graph zg = z.build();
  for (const std::string& be : testing::usable_backends()) {
    const std::vector<Tensor> got = Session(zg, be).run({Tensor(DType::u8, {3, 9})});
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].shape(), (Shape{3, 0})) << be;
  }
}

}  // namespace
}  // namespace fusor
