// Special values (inf, NaN, zero variances) where a rewrite or a kernel used to change the
// result: every backend must give ref's values, infinities and NaN positions included.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "frontend/builder.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// got equals want element by element: NaN where want is NaN, the same infinity, else within rtol.
void expect_same_values(const Tensor& got, const Tensor& want, const std::string& what, double rtol = 1e-5) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.get(i), w = want.get(i);
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(g)) << what << " element " << i << ": got " << g << ", want NaN";
    } else if (std::isinf(w)) {
      EXPECT_EQ(g, w) << what << " element " << i;
    } else {
      EXPECT_NEAR(g, w, rtol * std::fabs(w) + 1e-6) << what << " element " << i;
    }
  }
}

// Gemm with beta = 0 leaves C out (the ONNX reference's `if c is not None and beta != 0`, as
// onnxruntime): an inf or NaN in C does not reach Y. ref added 0 * C (NaN); the decomposition
// (and so cpu and the GPUs) dropped it.
TEST(SpecialValues, GemmWithBetaZeroLeavesCOut) {
  const Tensor a = testing::random_tensor(DType::f32, {6, 16}, 31, -1, 1), w = testing::random_tensor(DType::f32, {16, 8}, 32, -1, 1);
  Tensor c = testing::random_tensor(DType::f32, {6, 8}, 33, -1, 1);
  c.set(0, kInf), c.set(9, -kInf), c.set(20, kNaN);
  GraphBuilder b("gemm_beta0", 17);
  b.output(b.op("Gemm", {b.input("a", DType::f32, a.shape()), b.constant("w", w), b.constant("c", c)}, {{"alpha", 0.5}, {"beta", 0.0}}));
  const Graph g = b.build();
  const Tensor want = Session(g, "ref").run({a})[0];
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 8; ++j) {
      double dot = 0;
      for (int64_t k = 0; k < 16; ++k) dot += a.get(i * 16 + k) * w.get(k * 8 + j);
      ASSERT_NEAR(want.get(i * 8 + j), 0.5 * dot, 1e-5) << "ref element " << i * 8 + j;
    }
  for (const std::string& be : testing::usable_backends()) expect_same_values(Session(g, be).run({a})[0], want, "Gemm beta 0 on " + be);
}

// BatchNormalization whose var + epsilon is 0 in a channel: y = (x - mean) * scale / sqrt(0) + B
// is +-inf (NaN where x = mean). Folding the constants into x * k + (B - mean * k) made every
// element of the channel NaN (inf * 0 in the shift) on cpu and the GPUs.
TEST(SpecialValues, BatchNormWithZeroVarianceGivesInfinities) {
  Tensor x = testing::random_tensor(DType::f32, {2, 3, 4, 4}, 34, -1, 1);
  x.set(0, 0.25);  // x == mean in channel 0
  const Tensor scale = testing::tensor_of({3}, {1.0, 2.0, -1.5}), bias = testing::tensor_of({3}, {0.5, -1.0, 0.0});
  const Tensor mean = testing::tensor_of({3}, {0.25, 0.0, -0.5}), var = testing::tensor_of({3}, {0.0, 1.0, 0.0});
  GraphBuilder b("bn_var0", 15);
  b.output(b.op("BatchNormalization",
                {b.input("x", DType::f32, x.shape()), b.constant("s", scale), b.constant("b", bias), b.constant("m", mean), b.constant("v", var)},
                {{"epsilon", 0.0}}));
  const Graph g = b.build();
  const Tensor want = Session(g, "ref").run({x})[0];
  int64_t infs = 0;
  for (int64_t i = 0; i < want.numel(); ++i) infs += std::isinf(want.get(i));
  ASSERT_GT(infs, 40);  // channels 0 and 2 of both images, but for x == mean
  EXPECT_TRUE(std::isnan(want.get(0)));
  for (const std::string& be : testing::usable_backends()) expect_same_values(Session(g, be).run({x})[0], want, "BatchNormalization on " + be);
}

// Swish / SwiGLU far below 0 are subnormal, as ref's x / (1 + exp(-alpha x)) in double gives
// them: x / (1 + exp(-x)) in fp32 is x / inf = -0 past x = -88.7, so the kernels split the
// sigmoid as Sigmoid's (exp(a) / (1 + exp(a)) for a < 0, (x e) e with e = exp(a / 2) past -80).
// A GPU whose float controls do not promise fp32 subnormals may give -0 (its numerics note).
TEST(SpecialValues, SwishReachesTheSubnormals) {
  Tensor x = testing::tensor_of({10}, {-100.0, -95.5, -90.0, -88.0, -20.0, -1.0, 3.0, 0.0, -106.0, -81.0});
  GraphBuilder b("swish_tail", 24);
  const int in = b.input("x", DType::f32, x.shape());
  b.output(b.op("Swish", {in}));
  b.output(b.op("Swish", {in}, {{"alpha", 0.5}}));
  const Graph g = b.build();
  const std::vector<Tensor> want = Session(g, "ref").run({x});
  EXPECT_LT(want[0].get(0), 0.0);  // -3.7e-42: subnormal, not -0
  EXPECT_GT(want[0].get(0), -1e-38);
  for (const std::string& be : testing::usable_backends()) {
    const std::vector<Tensor> got = Session(g, be).run({x});
    for (size_t o = 0; o < 2; ++o)
      for (int64_t i = 0; i < 10; ++i) {
        const double w = want[o].get(i), v = got[o].get(i);
        if (std::fpclassify(static_cast<float>(w)) == FP_SUBNORMAL && v == 0.0 && be != "ref" && be != "cpu") continue;
        // A subnormal result: within a unit of 2^-149 (and exp's few ulp).
        EXPECT_NEAR(v, w, 1e-5 * std::fabs(w) + 0x1p-149) << be << " output " << o << " element " << i;
      }
  }
}

// Round ties to even in float64 too, bit for bit with the sign of zero: lavapipe's double
// roundEven (Mesa 22.3.6) rounds ties toward zero (1.5 -> 1), which also moved GridSample's
// nearest taps (its coordinates are float64); the Vulkan helper now rounds from floor.
TEST(SpecialValues, RoundTiesToEvenInFloat64) {
  const std::vector<double> x = {1.5, 2.5, -0.5, 0.5, -1.5, 3.5, -2.5, 0.49999999999999994, -0.49999999999999994, -0.5000000000000001,
                                 -0.3, 4503599627370495.5, -4503599627370495.5, 9007199254740993.0, 1e300, -1e-320, kInf, -kInf, kNaN, -0.0};
  Tensor in(DType::f64, {static_cast<int64_t>(x.size())});
  for (size_t i = 0; i < x.size(); ++i) in.set(static_cast<int64_t>(i), x[i]);
  GraphBuilder b("round64", 17);
  b.output(b.op("Round", {b.input("x", DType::f64, in.shape())}));
  const Graph g = b.build();
  for (const std::string& be : testing::usable_backends()) {
    const Tensor y = Session(g, be).run({in})[0];
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = std::nearbyint(x[i]), got = y.get(static_cast<int64_t>(i));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << be << " Round(" << x[i] << ")";
      } else {
        EXPECT_EQ(got, want) << be << " Round(" << x[i] << ")";
        EXPECT_EQ(std::signbit(got), std::signbit(want)) << be << " Round(" << x[i] << ")";
      }
    }
  }
}

}  // namespace
}  // namespace fusor
