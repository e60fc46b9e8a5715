// DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv
// (ir/ops/quant_int.cpp) against values computed by hand and against plain loops written here
// from the ONNX formulas, on seeded random integers; integers compare exactly, int32
// accumulation wraps. A quantized MatMul + Conv graph runs on every backend present (host
// fallback on the GPUs) and matches ref bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

using testing::ints_of;
using testing::run_op;
using testing::tensor_of;

void expect_ints(const Tensor& t, DType dt, const std::vector<int64_t>& want) {
  ASSERT_EQ(t.dtype(), dt);
  ASSERT_EQ(static_cast<size_t>(t.numel()), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(t.get_int(static_cast<int64_t>(i)), want[i]) << "element " << i;
}

Tensor random_ints(DType t, const Shape& s, uint64_t seed) {
  Tensor x(t, s);
  std::mt19937_64 rng(seed);
  const int64_t lo = t == DType::i8 ? -128 : 0;
  std::uniform_int_distribution<int64_t> u(lo, lo + 255);
  for (int64_t i = 0; i < x.numel(); ++i) x.set_int(i, u(rng));
  return x;
}

std::vector<int64_t> ints(const Tensor& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get_int(i));
  return v;
}

TEST(QuantInt, DynamicQuantizeLinearByHand) {
  // min -3, max 2: scale = 5/255, zero point = round(3 / scale) = 153.
  auto out = run_op({"DynamicQuantizeLinear", {tensor_of({4}, {0, 2, -3, 1})}, {}, 11, 3});
  expect_ints(out[0], DType::u8, {153, 255, 0, 204});
  EXPECT_EQ(out[1].get(0), static_cast<double>(5.0f / 255.0f));
  expect_ints(out[2], DType::u8, {153});
  // All positive: min is 0, zero point 0; all equal to 0: scale 1/255.
  auto pos = run_op({"DynamicQuantizeLinear", {tensor_of({3}, {1, 0.5, 2})}, {}, 11, 3});
  expect_ints(pos[0], DType::u8, {127, 64, 255});  // x / float(2/255) in float32: 127.49999, 63.749996, 254.99998
  expect_ints(pos[2], DType::u8, {0});
  auto zero = run_op({"DynamicQuantizeLinear", {tensor_of({2}, {0, 0})}, {}, 11, 3});
  EXPECT_EQ(zero[1].get(0), static_cast<double>(1.0f / 255.0f));
}

// C[m, n] = sum_k (A[m, k] - a_zp[m]) * (B[k, n] - b_zp[n]) in int32.
std::vector<int64_t> spec_matmul(const Tensor& a, const Tensor& b, const std::vector<int64_t>& azp, const std::vector<int64_t>& bzp) {
  const int64_t M = a.shape()[0], K = a.shape()[1], N = b.shape()[1];
  std::vector<int64_t> c;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      int32_t acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc = static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>((a.get_int(m * K + k) - azp[azp.size() > 1 ? m : 0]) *
                                                                                   (b.get_int(k * N + n) - bzp[bzp.size() > 1 ? n : 0])));
      c.push_back(acc);
    }
  return c;
}

TEST(QuantInt, MatMulIntegerZeroPointsAndInt32Wrap) {
  // By hand: A - 1 = [[1, 2], [-1, 0]], B - [0, 2] = [[1, 0], [2, -2]].
  auto small = run_op({"MatMulInteger", {ints_of({2, 2}, {2, 3, 0, 1}, DType::u8), ints_of({2, 2}, {1, 2, 2, 0}, DType::u8),
                                         ints_of({}, {1}, DType::u8), ints_of({2}, {0, 2}, DType::u8)}, {}, 10});
  expect_ints(small[0], DType::i32, {5, -4, -1, 0});
  // Random int8 x uint8 with per-row / per-column zero points.
  Tensor a = random_ints(DType::i8, {5, 7}, 1), b = random_ints(DType::u8, {7, 3}, 2);
  Tensor azp = ints_of({5}, {-3, 0, 7, 1, -128}, DType::i8), bzp = ints_of({3}, {128, 0, 255}, DType::u8);
  auto r = run_op({"MatMulInteger", {a, b, azp, bzp}, {}, 10});
  expect_ints(r[0], DType::i32, spec_matmul(a, b, ints(azp), ints(bzp)));
  // 255 * 255 * 33100 exceeds 2^31: an int32 accumulator wraps to -2142639796.
  Tensor big_a(DType::u8, {1, 33100}), big_b(DType::u8, {33100, 1});
  big_a.fill(255), big_b.fill(255);
  auto w = run_op({"MatMulInteger", {big_a, big_b}, {}, 10});
  expect_ints(w[0], DType::i32, {-2142639796});
  EXPECT_THROW(run_op({"MatMulInteger", {a, b, ints_of({}, {0}, DType::u8)}, {}, 10}), Error);  // zero point dtype
}

// round_half_even(acc * float(float(sa * sb) / sy) + zp), saturated to [lo, hi].
int64_t spec_requant(int64_t acc, float sa, float sb, float sy, int64_t zp, int64_t lo, int64_t hi) {
  const float f = (sa * sb) / sy;
  const double v = std::nearbyint(static_cast<double>(acc) * static_cast<double>(f) + static_cast<double>(zp));
  return static_cast<int64_t>(std::min<double>(hi, std::max<double>(lo, v)));
}

TEST(QuantInt, QLinearMatMulRequantizes) {
  Tensor a = random_ints(DType::u8, {2, 4, 6}, 3), b = random_ints(DType::u8, {6, 5}, 4);
  const float sa = 0.0125f, sb = 0.03f, sy = 0.4f;
  auto out = run_op({"QLinearMatMul", {a, tensor_of({}, {sa}), ints_of({}, {120}, DType::u8), b, tensor_of({}, {sb}),
                                       ints_of({}, {130}, DType::u8), tensor_of({}, {sy}), ints_of({}, {100}, DType::u8)}, {}, 10});
  std::vector<int64_t> want;
  for (int64_t bt = 0; bt < 2; ++bt) {
    Tensor a2(DType::u8, {4, 6});
    for (int64_t i = 0; i < 24; ++i) a2.set_int(i, a.get_int(bt * 24 + i));
    for (int64_t c : spec_matmul(a2, b, {120}, {130})) want.push_back(spec_requant(c, sa, sb, sy, 100, 0, 255));
  }
  expect_ints(out[0], DType::u8, want);
  // int8 with a per-column b scale saturates at both ends.
  Tensor ai = random_ints(DType::i8, {3, 4}, 5), bi = random_ints(DType::i8, {4, 2}, 6);
  auto sat = run_op({"QLinearMatMul", {ai, tensor_of({}, {0.5}), ints_of({}, {0}, DType::i8), bi, tensor_of({2}, {0.25, 0.001}),
                                       ints_of({}, {0}, DType::i8), tensor_of({}, {1.0}), ints_of({}, {-5}, DType::i8)}, {}, 10});
  std::vector<int64_t> acc = spec_matmul(ai, bi, {0}, {0}), ws;
  for (size_t i = 0; i < acc.size(); ++i) ws.push_back(spec_requant(acc[i], 0.5f, i % 2 ? 0.001f : 0.25f, 1.0f, -5, -128, 127));
  expect_ints(sat[0], DType::i8, ws);
  bool saturated = false;
  for (int64_t v : ws) saturated = saturated || v == 127 || v == -128;
  EXPECT_TRUE(saturated);
}

// Plain NCHW conv over (x - xzp) and (w - wzp[m]), stride s, symmetric pad p, plus bias.
std::vector<int64_t> spec_conv(const Tensor& x, const Tensor& w, int64_t xzp, const std::vector<int64_t>& wzp, int64_t s, int64_t p,
                               const std::vector<int64_t>& bias) {
  const int64_t C = x.shape()[1], H = x.shape()[2], W = x.shape()[3], M = w.shape()[0], KH = w.shape()[2], KW = w.shape()[3];
  const int64_t OH = (H + 2 * p - KH) / s + 1, OW = (W + 2 * p - KW) / s + 1;
  std::vector<int64_t> y;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t acc = bias.empty() ? 0 : bias[m];
        for (int64_t c = 0; c < C; ++c)
          for (int64_t kh = 0; kh < KH; ++kh)
            for (int64_t kw = 0; kw < KW; ++kw) {
              const int64_t ih = oh * s - p + kh, iw = ow * s - p + kw;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;  // padding is x's zero point: x - xzp = 0
              acc += (x.get_int((c * H + ih) * W + iw) - xzp) * (w.get_int(((m * C + c) * KH + kh) * KW + kw) - wzp[wzp.size() > 1 ? m : 0]);
            }
        y.push_back(acc);
      }
  return y;
}

TEST(QuantInt, ConvIntegerByHandAndRandom) {
  // 1 channel 2x2 input, 2x2 kernel of ones, x_zp 1: valid output = sum(x - 1) = 1 + 2 + 3 + 4 - 4.
  auto one = run_op({"ConvInteger", {ints_of({1, 1, 2, 2}, {2, 3, 4, 5}, DType::u8), ints_of({1, 1, 2, 2}, {1, 1, 1, 1}, DType::u8),
                                     ints_of({}, {1}, DType::u8)}, {}, 10});
  expect_ints(one[0], DType::i32, {10});
  Tensor x = random_ints(DType::u8, {1, 3, 5, 6}, 7), w = random_ints(DType::i8, {4, 3, 3, 3}, 8);
  Tensor wzp = ints_of({4}, {0, -1, 5, 127}, DType::i8);
  auto r = run_op({"ConvInteger", {x, w, ints_of({}, {17}, DType::u8), wzp},
                   {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{2, 2}}}, 10});
  expect_ints(r[0], DType::i32, spec_conv(x, w, 17, ints(wzp), 2, 1, {}));
}

TEST(QuantInt, QLinearConvPerChannelWithBias) {
  Tensor x = random_ints(DType::i8, {1, 2, 4, 4}, 9), w = random_ints(DType::i8, {3, 2, 3, 3}, 10);
  const std::vector<float> ws{0.01f, 0.002f, 0.05f};
  Tensor bias = ints_of({3}, {1000, -20000, 7}, DType::i32);
  auto out = run_op({"QLinearConv", {x, tensor_of({}, {0.1}), ints_of({}, {-3}, DType::i8), w, tensor_of({3}, {ws[0], ws[1], ws[2]}),
                                     ints_of({3}, {0, 0, 0}, DType::i8), tensor_of({}, {0.7}), ints_of({}, {4}, DType::i8), bias},
                     {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, 10});
  const std::vector<int64_t> acc = spec_conv(x, w, -3, {0}, 1, 1, ints(bias));
  std::vector<int64_t> want;
  for (size_t i = 0; i < acc.size(); ++i) want.push_back(spec_requant(acc[i], 0.1f, ws[i / 16], 0.7f, 4, -128, 127));
  expect_ints(out[0], DType::i8, want);
}

// A per-channel int8 quantized Conv then MatMul head: every backend present equals ref exactly.
TEST(QuantInt, QuantizedConvMatMulModelOnEveryBackend) {
  GraphBuilder b("qmodel", 13);
  int x = b.input("x", DType::f32, {1, 2, 6, 6});
  auto q = b.op_multi("DynamicQuantizeLinear", {x}, {}, 3);
  int w = b.constant("w", random_ints(DType::u8, {4, 2, 3, 3}, 11));
  int conv = b.op("ConvInteger", {q[0], w, q[2], b.constant("wzp", ints_of({}, {128}, DType::u8))});
  int flat = b.op("Reshape", {conv, b.constant("s", ints_of({2}, {4, 16}))});
  int f = b.op("Cast", {flat}, {{"to", int64_t{1}}});
  auto q2 = b.op_multi("DynamicQuantizeLinear", {f}, {}, 3);
  int m = b.op("QLinearMatMul", {q2[0], q2[1], q2[2], b.constant("w2", random_ints(DType::u8, {16, 5}, 12)), b.constant("s2", tensor_of({}, {0.02})),
                                 b.constant("z2", ints_of({}, {128}, DType::u8)), b.constant("sy", tensor_of({}, {0.5})),
                                 b.constant("zy", ints_of({}, {128}, DType::u8))});
  b.output(m);
  b.output(conv);
  Graph g = b.build();
  std::vector<Tensor> in{testing::random_tensor(DType::f32, {1, 2, 6, 6}, 13, -2, 3)};
  auto want = Session(g, "ref").run(in);
  for (const std::string& be : backend_names()) {
    if (be == "ref" || make_backend(be)->devices().empty()) continue;
    auto got = Session(g, be).run(in);
    ASSERT_EQ(got.size(), 2u);
    expect_ints(got[0], DType::u8, ints(want[0]));
    expect_ints(got[1], DType::i32, ints(want[1]));
  }
}

}  // namespace
}  // namespace fusor
