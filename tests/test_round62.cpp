// Red-team round 62 (composite ops at adversarial scales, docs/redteam.md), mended in session 51:
// BatchNormalization with constant statistics folded to x * k + (B - mean * k), whose two terms
// cancel near a mean far from zero; MeanVarianceNormalization's deviation kept the fp32 mean's
// rounding (on ref too: its body runs everywhere); GlobalLpPool and LpPool summed |x|^p in fp32
// (inf at 3e13 for p = 3 where ref's double sum is finite); ref's Einsum summed in plain double
// ([1e30, -1e30, 1, 3] twice gave 4, not 8). Each case is checked against a float64 value
// computed here (ref included where ref was the one wrong), on every backend.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "frontend/builder.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

// Every backend's output against `want` (float64 values) within rtol, elements counted.
void expect_all_backends(const Graph& g, const std::vector<Tensor>& in, const std::vector<double>& want, double rtol,
                         double atol, bool with_ref) {
  for (const std::string& be : testing::usable_backends()) {
    if (be == "ref" && !with_ref) continue;
    SCOPED_TRACE(be);
    CompileOptions strict;
    strict.fallback = false;  // a node run on the host would not test the backend
    const Tensor y = run_on_backend(be, specialize(g, in), in, strict)[0];
    ASSERT_EQ(y.numel(), static_cast<int64_t>(want.size()));
    int bad = 0;
    for (int64_t i = 0; i < y.numel(); ++i) bad += !(std::fabs(y.get(i) - want[i]) <= atol + rtol * std::fabs(want[i]));
    EXPECT_EQ(bad, 0) << "of " << y.numel() << "; element 0 got " << y.get(0) << ", want " << want[0];
  }
}

TEST(Round62, BatchNormWithConstantStatisticsFarFromZero) {
  // mean 1000, var 1e-4 (sqrt 0.01), x = 1000 +- 0.01: (x - mean) is exact, x * k is ~1e5.
  GraphBuilder b("bn_far", 15);
  const int x = b.input("x", DType::f32, {2, 3, 4});
  const Tensor scale = testing::tensor_of({3}, {1.5, 0.75, 2}), bias = testing::tensor_of({3}, {0.25, -1, 0.5});
  const Tensor mean = testing::tensor_of({3}, {1000, 1000.5, 999.75}), var = testing::tensor_of({3}, {1e-4, 4e-4, 1e-4});
  b.output(b.op("BatchNormalization", {x, b.constant("s", scale), b.constant("b", bias), b.constant("m", mean), b.constant("v", var)},
                {{"epsilon", 1e-7}}));
  const Graph g = b.build();
  Tensor in = testing::random_tensor(DType::f32, {2, 3, 4}, 62, -0.01, 0.01);
  for (int64_t i = 0; i < in.numel(); ++i) in.set(i, static_cast<float>(in.get(i) + mean.get((i / 4) % 3)));
  std::vector<double> want(in.numel());
  for (int64_t i = 0; i < in.numel(); ++i) {
    const int64_t c = (i / 4) % 3;
    want[i] = (in.get(i) - mean.get(c)) * scale.get(c) / std::sqrt(var.get(c) + 1e-7) + bias.get(c);
  }
  expect_all_backends(g, {in}, want, 1e-5, 1e-5, true);
}

TEST(Round62, MeanVarianceNormalizationFarFromZero) {
  GraphBuilder b("mvn_far", 13);
  const int x = b.input("x", DType::f32, {2, 2, 1, 32});
  b.output(b.op("MeanVarianceNormalization", {x}, {{"axes", std::vector<int64_t>{3}}}));
  const Graph g = b.build();
  const Tensor in = testing::random_tensor(DType::f32, {2, 2, 1, 32}, 63, 99.99, 100.01);
  std::vector<double> want(in.numel());
  for (int64_t r = 0; r < 4; ++r) {
    double m = 0, v = 0;
    for (int64_t j = 0; j < 32; ++j) m += in.get(r * 32 + j) / 32;
    for (int64_t j = 0; j < 32; ++j) v += (in.get(r * 32 + j) - m) * (in.get(r * 32 + j) - m) / 32;
    for (int64_t j = 0; j < 32; ++j) want[r * 32 + j] = (in.get(r * 32 + j) - m) / (std::sqrt(v) + 1e-9);
  }
  expect_all_backends(g, {in}, want, 1e-5, 1e-5, true);
}

TEST(Round62, LpPoolsOfLargeValuesStayFinite) {
  const Tensor in = testing::tensor_of({1, 1, 2, 2}, {2e13, -1e13, 3e13, 1e13});
  for (const int64_t p : {int64_t{2}, int64_t{3}}) {
    const double scale = p == 2 ? 1e6 : 1.0;  // p = 2 overflows fp32 squares only past 1.8e19
    Tensor x = in;
    for (int64_t i = 0; i < x.numel(); ++i) x.set(i, in.get(i) * scale);
    double s = 0;
    for (int64_t i = 0; i < x.numel(); ++i) s += std::pow(std::fabs(x.get(i)), static_cast<double>(p));
    const double want = std::pow(s, 1.0 / static_cast<double>(p));
    for (const std::string& op : {"GlobalLpPool", "LpPool"}) {
      SCOPED_TRACE(op + " p " + std::to_string(p));
      GraphBuilder b("lp", 18);
      const int xi = b.input("x", DType::f32, {1, 1, 2, 2});
      GraphBuilder::Attrs attrs{{"p", p}};
      if (op == "LpPool") attrs["kernel_shape"] = std::vector<int64_t>{2, 2};
      b.output(b.op(op, {xi}, attrs));
      expect_all_backends(b.build(), {x}, {want}, 1e-6, 0, true);
    }
  }
  // Zeros, an infinity and a NaN keep their meaning: 0, inf, NaN.
  GraphBuilder b("lp_special", 18);
  const int xi = b.input("x", DType::f32, {3, 1, 1, 2});
  b.output(b.op("LpPool", {xi}, {{"p", int64_t{3}}, {"kernel_shape", std::vector<int64_t>{1, 2}}}));
  const Graph g = b.build();
  const double inf = INFINITY;
  const Tensor special = testing::tensor_of({3, 1, 1, 2}, {0, 0, inf, inf, NAN, 1});
  for (const std::string& be : testing::usable_backends()) {
    SCOPED_TRACE(be);
    CompileOptions strict;
    strict.fallback = false;
    const Tensor y = run_on_backend(be, specialize(g, {special}), {special}, strict)[0];
    EXPECT_EQ(y.get(0), 0.0);
    EXPECT_EQ(y.get(1), inf);
    EXPECT_TRUE(std::isnan(y.get(2)));
  }
}

// p <= 1 keeps the plain sum of |x|^p: p = 1 sums small integers exactly, p = 0 counts zeros
// (pow(0, 0) = 1) and a negative p gives a finite sum, as ref (the rescaled sum would give NaN).
TEST(Round62, LpPoolOfSmallPowersMatchesRef) {
  const Tensor x = testing::tensor_of({1, 1, 2, 4}, {0, 5, 1, 2, 3, 0, 4, 7});
  for (const int64_t p : {int64_t{1}, int64_t{0}, int64_t{-1}}) {
    GraphBuilder b("lp_small", 18);
    const int xi = b.input("x", DType::f32, {1, 1, 2, 4});
    b.output(b.op("LpPool", {xi}, {{"p", p}, {"kernel_shape", std::vector<int64_t>{1, 2}}, {"strides", std::vector<int64_t>{1, 1}}}));
    const Graph g = b.build();
    const Tensor want = Session(g, "ref").run({x})[0];
    for (const std::string& be : testing::usable_backends()) {
      SCOPED_TRACE(be + " p " + std::to_string(p));
      CompileOptions strict;
      strict.fallback = false;
      const Tensor y = run_on_backend(be, specialize(g, {x}), {x}, strict)[0];
      ASSERT_EQ(y.numel(), want.numel());
      for (int64_t i = 0; i < y.numel(); ++i) {
        if (std::isinf(want.get(i))) EXPECT_EQ(y.get(i), want.get(i)) << i;
        else EXPECT_NEAR(y.get(i), want.get(i), 1e-6 * std::fabs(want.get(i))) << i;
      }
    }
  }
}

TEST(Round62, EinsumSumsAreCompensatedOnRef) {
  GraphBuilder b("einsum_sum", 12);
  const int x = b.input("x", DType::f32, {2, 4});
  b.output(b.op("Einsum", {x}, {{"equation", std::string("ij->")}}));
  const Tensor in = testing::tensor_of({2, 4}, {1e30, -1e30, 1, 3, 1e30, -1e30, 1, 3});
  expect_all_backends(b.build(), {in}, {8.0}, 0, 0, true);
}

}  // namespace
}  // namespace fusor
