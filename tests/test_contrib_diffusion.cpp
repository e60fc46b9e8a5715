// onnxruntime's diffusion contrib ops (ir/ops/contrib_diffusion.cpp: GroupNorm, SkipGroupNorm,
// BiasSplitGelu, NhwcConv, as its transformer optimizer writes Stable Diffusion UNets) on every backend
// against their formulas computed here in float64, seeded inputs; bad attributes are one-line errors.
#include <gtest/gtest.h>

#include <cmath>

#include "onnx_test_util.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

using testing::attr_f;
using testing::attr_i;
using testing::OneNode;

// GroupNorm of x (rank 4, NHWC when last, else NCHW) in float64, gamma / beta per channel,
// SiLU after when silu.
std::vector<double> group_norm_of(const std::vector<double>& x, const Shape& s, bool last, int64_t G, const Tensor& gamma,
                                  const Tensor& beta, double eps, bool silu) {
  const int64_t N = s[0], C = last ? s[3] : s[1], P = s[1] * s[2] * s[3] / C;
  const auto at = [&](int64_t n, int64_t c, int64_t p) { return last ? (n * P + p) * C + c : (n * C + c) * P + p; };
  std::vector<double> y(x.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < G; ++g) {
      double sum = 0, sq = 0;
      const int64_t c0 = g * (C / G), c1 = c0 + C / G, count = (c1 - c0) * P;
      for (int64_t c = c0; c < c1; ++c)
        for (int64_t p = 0; p < P; ++p) sum += x[at(n, c, p)];
      const double mean = sum / count;
      for (int64_t c = c0; c < c1; ++c)
        for (int64_t p = 0; p < P; ++p) sq += (x[at(n, c, p)] - mean) * (x[at(n, c, p)] - mean);
      const double inv = 1 / std::sqrt(sq / count + eps);
      for (int64_t c = c0; c < c1; ++c)
        for (int64_t p = 0; p < P; ++p) {
          double v = gamma.get(c) * (x[at(n, c, p)] - mean) * inv + beta.get(c);
          y[at(n, c, p)] = silu ? v / (1 + std::exp(-v)) : v;
        }
    }
  return y;
}

std::vector<double> values_of(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.get(i);
  return v;
}

TEST(ContribDiffusion, GroupNormMatchesItsFormulaInBothLayoutsWithAndWithoutSiLU) {
  const Tensor gamma = testing::random_tensor(DType::f32, {8}, 41, 0.5, 1.5), beta = testing::random_tensor(DType::f32, {8}, 42);
  for (bool last : {true, false})
    for (int64_t act : {0, 1}) {
      const Shape s = last ? Shape{2, 3, 5, 8} : Shape{2, 8, 3, 5};
      const Tensor x = testing::random_tensor(DType::f32, s, 43 + act, -3, 2);
      OneNode gn{"GroupNorm", "com.microsoft", {{"x", x}, {"g", gamma}, {"b", beta}}};
      gn.attrs = [&](onnx::NodeProto* n) {
        attr_i(n, "groups", 4), attr_i(n, "activation", act), attr_i(n, "channels_last", last ? 1 : 0), attr_f(n, "epsilon", 1e-4f);
      };
      const std::vector<double> want = group_norm_of(values_of(x), s, last, 4, gamma, beta, static_cast<float>(1e-4), act == 1);
      for (const std::string& be : testing::usable_backends()) {
        SCOPED_TRACE(be + (last ? " NHWC" : " NCHW") + (act ? " SiLU" : ""));
        testing::expect_values(Session(gn.graph(), be).run(gn.feeds())[0], want, 2e-5);
      }
    }
}

// fp16 X with float32 gamma / beta (onnxruntime's type M): statistics and SiLU in float32, one
// rounding at the output.
TEST(ContribDiffusion, HalfGroupNormRoundsOnce) {
  const Tensor gamma = testing::random_tensor(DType::f32, {8}, 44, 0.5, 1.5), beta = testing::random_tensor(DType::f32, {8}, 45);
  const Tensor x32 = testing::random_tensor(DType::f32, {1, 4, 4, 8}, 46, -2, 2);
  Tensor x(DType::f16, x32.shape());
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, x32.get(i));
  OneNode gn{"GroupNorm", "com.microsoft", {{"x", x}, {"g", gamma}, {"b", beta}}};
  gn.attrs = [](onnx::NodeProto* n) { attr_i(n, "groups", 2), attr_i(n, "activation", 1); };
  const std::vector<double> want = group_norm_of(values_of(x), x.shape(), true, 2, gamma, beta, static_cast<float>(1e-5), true);
  for (const std::string& be : testing::usable_backends()) {
    SCOPED_TRACE(be);
    const Tensor y = Session(gn.graph(), be).run(gn.feeds())[0];
    ASSERT_EQ(y.dtype(), DType::f16);
    for (int64_t i = 0; i < y.numel(); ++i)  // within one fp16 ulp of the float64 value
      EXPECT_LE(std::fabs(y.get(i) - want[i]), testing::f16_ulp(want[i]) * 1.01)
          << "element " << i;
  }
}

TEST(ContribDiffusion, SkipGroupNormSumsThenNormalizes) {
  const Tensor gamma = testing::random_tensor(DType::f32, {8}, 47, 0.5, 1.5), beta = testing::random_tensor(DType::f32, {8}, 48);
  const Tensor bias = testing::random_tensor(DType::f32, {8}, 49);
  const Tensor x = testing::random_tensor(DType::f32, {2, 3, 2, 8}, 50, -2, 2);
  for (const Shape& ss : {Shape{2, 3, 2, 8}, Shape{2, 1, 1, 8}, Shape{2, 8}}) {
    const Tensor skip = testing::random_tensor(DType::f32, ss, 51, -1, 1);
    std::vector<double> s(static_cast<size_t>(x.numel()));
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t n = i / 48, c = i % 8;
      const int64_t k = ss.size() == 4 && ss[1] == 3 ? i : n * 8 + c;
      s[i] = static_cast<float>(static_cast<float>(x.get(i) + skip.get(k)) + bias.get(c));
    }
    OneNode sk{"SkipGroupNorm", "com.microsoft", {{"x", x}, {"g", gamma}, {"b", beta}, {"s", skip}, {"bi", bias}}, {"y", "sum"}};
    sk.attrs = [](onnx::NodeProto* n) { attr_i(n, "groups", 2), attr_i(n, "activation", 0); };
    const std::vector<double> want = group_norm_of(s, x.shape(), true, 2, gamma, beta, static_cast<float>(1e-5), false);
    for (const std::string& be : testing::usable_backends()) {
      SCOPED_TRACE(be + " skip " + shape_str(ss));
      const std::vector<Tensor> out = Session(sk.graph(), be).run(sk.feeds());
      ASSERT_EQ(out.size(), 2u);
      testing::expect_values(out[0], want, 2e-5);
      testing::expect_values(out[1], s, 0);
    }
  }
}

TEST(ContribDiffusion, BiasSplitGeluIsTheLeftHalfTimesGeluOfTheRight) {
  const Tensor x = testing::random_tensor(DType::f32, {2, 3, 8}, 52, -3, 3), bias = testing::random_tensor(DType::f32, {8}, 53);
  std::vector<double> want;
  for (int64_t r = 0; r < 6; ++r)
    for (int64_t j = 0; j < 4; ++j) {
      const double a = static_cast<float>(x.get(r * 8 + j) + bias.get(j)), b = static_cast<float>(x.get(r * 8 + 4 + j) + bias.get(4 + j));
      want.push_back(a * 0.5 * b * (1 + std::erf(b / std::sqrt(2.0))));
    }
  OneNode bs{"BiasSplitGelu", "com.microsoft", {{"x", x}, {"b", bias}}};
  for (const std::string& be : testing::usable_backends()) {
    SCOPED_TRACE(be);
    const Tensor y = Session(bs.graph(), be).run(bs.feeds())[0];
    EXPECT_EQ(y.shape(), (Shape{2, 3, 4}));
    testing::expect_values(y, want, 2e-6);
  }
}

// NhwcConv: Conv over X [N, H, W, C] with W [M, kH, kW, C / group], Y [N, OH, OW, M], against a
// direct float64 loop in those layouts (pads, strides, groups, bias).
TEST(ContribDiffusion, NhwcConvIsConvInChannelsLastLayouts) {
  for (int64_t group : {1, 2}) {
    const int64_t N = 2, H = 5, Wd = 6, C = 4, M = 6, K = 3, S = 2, P = 1, Cg = C / group, Mg = M / group;
    const Tensor x = testing::random_tensor(DType::f32, {N, H, Wd, C}, 60 + group), w = testing::random_tensor(DType::f32, {M, K, K, Cg}, 62);
    const Tensor b = testing::random_tensor(DType::f32, {M}, 63);
    const int64_t OH = (H + 2 * P - K) / S + 1, OW = (Wd + 2 * P - K) / S + 1;
    std::vector<double> want;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow)
          for (int64_t m = 0; m < M; ++m) {
            double acc = b.get(m);
            for (int64_t ky = 0; ky < K; ++ky)
              for (int64_t kx = 0; kx < K; ++kx) {
                const int64_t iy = oh * S - P + ky, ix = ow * S - P + kx;
                if (iy < 0 || iy >= H || ix < 0 || ix >= Wd) continue;
                for (int64_t c = 0; c < Cg; ++c)
                  acc += x.get(((n * H + iy) * Wd + ix) * C + (m / Mg) * Cg + c) * w.get(((m * K + ky) * K + kx) * Cg + c);
              }
            want.push_back(acc);
          }
    OneNode nc{"NhwcConv", "com.microsoft", {{"x", x}, {"w", w}, {"b", b}}};
    nc.attrs = [&](onnx::NodeProto* n) {
      testing::attr_ints(n, "pads", {P, P, P, P}), testing::attr_ints(n, "strides", {S, S}), attr_i(n, "group", group);
    };
    for (const std::string& be : testing::usable_backends()) {
      SCOPED_TRACE(be + " group " + std::to_string(group));
      const Tensor y = Session(nc.graph(), be).run(nc.feeds())[0];
      EXPECT_EQ(y.shape(), (Shape{N, OH, OW, M}));
      testing::expect_values(y, want, 2e-5);
    }
  }
}

TEST(ContribDiffusion, BadGroupsAndShapesAreOneLineErrors) {
  const Tensor x = testing::random_tensor(DType::f32, {1, 2, 2, 6}, 54), g6 = testing::random_tensor(DType::f32, {6}, 55);
  OneNode gn{"GroupNorm", "com.microsoft", {{"x", x}, {"g", g6}, {"b", g6}}};
  gn.attrs = [](onnx::NodeProto* n) { attr_i(n, "groups", 4), attr_i(n, "activation", 0); };
  OneNode odd{"BiasSplitGelu", "com.microsoft", {{"x", testing::random_tensor(DType::f32, {1, 2, 5}, 56)}, {"b", testing::random_tensor(DType::f32, {5}, 57)}}};
  OneNode flat{"NhwcConv", "com.microsoft", {{"x", testing::random_tensor(DType::f32, {1, 5, 4}, 58)}, {"w", testing::random_tensor(DType::f32, {2, 3, 4}, 59)}}};
  for (const OneNode* c : {&gn, &odd, &flat}) {
    try {
      Session(c->graph(), "ref").run(c->feeds());
      ADD_FAILURE() << c->op << " ran";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
      EXPECT_NE(m.find(c->op), std::string::npos) << m;
    }
  }
}

}  // namespace
}  // namespace fusor
