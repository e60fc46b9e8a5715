// float64 transcendentals on Vulkan (issue 10 item 4): shaders/f64_math.glsl implements what
// GLSL lacks for double; each op runs on seeded random doubles over its domain plus special
// values, vulkan against ref (glibc), and the largest error in ulp is asserted and printed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "backends/backend.h"
#include "backends/vulkan/vk_device.h"
#include "frontend/builder.h"
#include "ir/passes.h"
#include "test_util.h"

namespace fusor {
namespace {

// Distance in representable doubles (0 for equal values, both NaN, or +-0 pairs); huge when one
// side is NaN or infinite and the other is not.
double ulp_distance(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : 1e300;
  if (a == b) return 0;
  if (std::isinf(a) || std::isinf(b)) return 1e300;
  auto ord = [](double v) {
    int64_t i;
    std::memcpy(&i, &v, 8);
    return i < 0 ? -(i & INT64_MAX) : i;
  };
  const int64_t d = ord(a) - ord(b);  // both finite: no overflow
  return static_cast<double>(d < 0 ? -d : d);
}

struct Domain {
  double lo, hi;      // uniform part
  double wide = 0;    // if > 0: the other half log-uniform in magnitude up to `wide`, random sign
  bool positive = false;
};

std::vector<double> samples(const Domain& d, uint64_t seed, int n) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(d.lo, d.hi), e(-20.0, std::log2(d.wide > 0 ? d.wide : 2.0));
  std::vector<double> v;
  for (int i = 0; i < n; ++i) {
    if (d.wide > 0 && i % 2) {
      double m = std::exp2(e(g));
      v.push_back(d.positive || (g() & 1) ? m : -m);
    } else {
      v.push_back(u(g));
    }
  }
  return v;
}

class VulkanF64Math : public ::testing::Test {
 protected:
  void SetUp() override {
    vk_ = make_backend("vulkan");
    if (vk_->devices().empty()) GTEST_SKIP() << "no Vulkan device (install mesa-vulkan-drivers for lavapipe)";
    info_ = vk::Instance::get()->devices()[0];
    if (!info_.shader_float64) GTEST_SKIP() << "device '" << info_.name << "' has no shaderFloat64";
  }
  // Runs op on the inputs (float64) on ref and vulkan; returns the max ulp error, reporting the worst input.
  double max_ulp(const std::string& op, const std::vector<std::vector<double>>& ins, Shape shape = {},
                 std::function<int(GraphBuilder&, const std::vector<int>&)> build = nullptr) {
    GraphBuilder b;
    const int64_t n = static_cast<int64_t>(ins[0].size());
    if (shape.empty()) shape = {n};
    std::vector<int> xs;
    std::vector<Tensor> ts;
    for (size_t k = 0; k < ins.size(); ++k) {
      xs.push_back(b.input("x" + std::to_string(k), DType::f64, shape));
      Tensor t(DType::f64, shape);
      std::memcpy(t.data<double>(), ins[k].data(), n * 8);
      ts.push_back(std::move(t));
    }
    b.output(build ? build(b, xs) : b.op(op, xs));
    Graph g = b.build();
    make_static(g, {});
    auto want = make_backend("ref")->compile(g, {})->run(ts);
    auto got = vk_->compile(g, {})->run(ts);  // Backend::compile has no host fallback: all on the device
    const int64_t m = got[0].numel();
    EXPECT_EQ(got[0].dtype(), DType::f64);
    double worst = 0;
    int64_t at = 0;
    for (int64_t i = 0; i < m; ++i) {
      const double d = ulp_distance(got[0].data<double>()[i], want[0].data<double>()[i]);
      if (d > worst) worst = d, at = i;
    }
    std::printf("  %-15s max %.0f ulp over %lld outputs", op.c_str(), worst, static_cast<long long>(m));
    if (worst > 0) {
      std::printf(" (at output %lld, x = %.17g", static_cast<long long>(at), ins[0][at]);
      if (ins.size() > 1) std::printf(", y = %.17g", ins[1][at]);
      std::printf(": vulkan %.17g, glibc %.17g)", got[0].data<double>()[at], want[0].data<double>()[at]);
    }
    std::printf("\n");
    return worst;
  }
  std::unique_ptr<Backend> vk_;
  vk::PhysicalDeviceInfo info_;
};

const std::vector<double> kSpecial = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 1e-300, -1e-300, 5e-324,
                                      1e-10, INFINITY, -INFINITY, NAN, 3.0, 20.0, -20.0, 700.0, -700.0, 1e5};

TEST_F(VulkanF64Math, UnaryWithinFourUlp) {
  const double inf = 1e308;
  struct Case { const char* op; Domain d; double bound; };
  const std::vector<Case> cases = {
      {"Sin", {-10, 10, 1e6}, 2},         {"Cos", {-10, 10, 1e6}, 2},          {"Tan", {-3, 3, 1e6}, 4},
      {"Asin", {-1, 1}, 4},               {"Acos", {-1, 1}, 4},                {"Atan", {-3, 3, 1e20}, 2},
      {"Sinh", {-3, 3, 710}, 4},          {"Cosh", {-3, 3, 710}, 4},           {"Tanh", {-2, 2, 25}, 4},
      {"Asinh", {-3, 3, 1e300}, 4},       {"Acosh", {1, 3, 1e300, true}, 4},   {"Atanh", {-1, 1}, 4},
      {"Erf", {-3, 3, 7}, 4},             {"Softplus", {-30, 30, 1e3}, 4},     {"Exp", {-20, 20, 700}, 2},
      {"Log", {0, 10, inf, true}, 2}};
  double all = 0;
  for (const Case& c : cases) {
    std::vector<double> x = samples(c.d, 42, 3000);
    x.insert(x.end(), kSpecial.begin(), kSpecial.end());
    const double u = max_ulp(c.op, {x});
    EXPECT_LE(u, c.bound) << c.op;
    all = std::max(all, u);
  }
  std::printf("  all unary: max %.0f ulp\n", all);
}

// Division (Div, Mean's / n, Softmax's normalisation) correctly rounded: the driver's double
// OpFDiv need not be (NVIDIA's Vulkan driver was 1 ulp off, H200). Quotients over the whole
// range, near 1, of integers (Mean's counts), and the special values.
TEST_F(VulkanF64Math, DivisionIsCorrectlyRounded) {
  std::mt19937_64 g(5);
  std::uniform_real_distribution<double> u(-1, 1), e(-300, 300);
  std::vector<double> x, y;
  for (int i = 0; i < 4000; ++i) {
    switch (i % 4) {
      case 0: x.push_back(u(g) * std::exp2(e(g))), y.push_back(u(g) * std::exp2(e(g))); break;
      case 1: x.push_back(1.0 + u(g) * 1e-3), y.push_back(1.0 + u(g) * 1e-3); break;
      case 2: x.push_back(u(g) * 3000.0), y.push_back(static_cast<double>(1 + (g() % 300))); break;
      default: x.push_back(u(g)), y.push_back(u(g)); break;
    }
  }
  for (double a : kSpecial)
    for (double b : kSpecial) x.push_back(a), y.push_back(b);
  EXPECT_EQ(max_ulp("Div", {x, y}), 0);
}

// Sqrt correctly rounded (fz_sqrtd): GLSL's double sqrt need not be. Roots over the whole
// range (subnormals included), next to rounding midpoints, and the special values; also with
// the driver's root perturbed by a few ulp (FUSOR_VK_TEST_DIV_PERTURB, the seed hook fz_div shares).
TEST_F(VulkanF64Math, SqrtIsCorrectlyRounded) {
  std::mt19937_64 g(13);
  std::vector<double> x;
  for (int i = 0; i < 3000; ++i) {
    uint64_t u = g() & 0x7fffffffffffffffull;
    if ((u >> 52) == 0x7ff) u ^= 0x4000000000000000ull;
    double v;
    std::memcpy(&v, &u, 8);
    x.push_back(v);
  }
  // Midpoints m = (2j + 1) 2^-54 of [1, 2) squared (long double: close enough to land next to
  // one), their neighbours, scaled by powers of four.
  for (int i = 0; i < 1000; ++i) {
    const long double m = std::ldexp(static_cast<long double>((g() & ((1ull << 52) - 1)) | (1ull << 52)) * 2 + 1, -53);
    const double sq = static_cast<double>(m * m);
    const int e = 2 * (static_cast<int>(g() % 1000) - 500);
    for (double v : {std::nextafter(sq, 0.0), sq, std::nextafter(sq, 4.0)}) x.push_back(std::ldexp(v, e));
  }
  x.insert(x.end(), kSpecial.begin(), kSpecial.end());
  EXPECT_EQ(max_ulp("Sqrt", {x}), 0);
  for (const char* p : {"3", "-3", "1"}) {
    setenv("FUSOR_VK_TEST_DIV_PERTURB", (std::string(p) + ",raw").c_str(), 1);
    const double raw = max_ulp("Sqrt", {x});
    setenv("FUSOR_VK_TEST_DIV_PERTURB", p, 1);
    const double fixed = max_ulp("Sqrt", {x});
    unsetenv("FUSOR_VK_TEST_DIV_PERTURB");
    EXPECT_GE(raw, 1) << "perturbation " << p << " did not reach the shader";
    EXPECT_EQ(fixed, 0) << "perturbation " << p;
  }
}

TEST_F(VulkanF64Math, PowWithinFourUlp) {
  std::mt19937_64 g(7);
  std::uniform_real_distribution<double> ux(0, 50), uy(-30, 30), ul(-700, 700);
  std::vector<double> x, y;
  for (int i = 0; i < 3000; ++i) {
    switch (i % 4) {
      case 0: x.push_back(ux(g)), y.push_back(uy(g)); break;
      case 1: x.push_back(-ux(g)), y.push_back(std::round(uy(g))); break;  // negative base, integral exponent
      case 2: {  // results across the whole range: x^y = e^t with |t| up to 700
        const double b = std::exp(std::uniform_real_distribution<double>(-10, 10)(g));
        x.push_back(b), y.push_back(ul(g) / std::log(b));
        break;
      }
      default: x.push_back(std::uniform_real_distribution<double>(0.9, 1.1)(g)), y.push_back(uy(g) * 100); break;
    }
  }
  const std::vector<double> sp = {0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, 3.0, -3.0, INFINITY, -INFINITY, NAN};
  for (double a : sp)
    for (double b : sp) x.push_back(a), y.push_back(b);
  EXPECT_LE(max_ulp("Pow", {x, y}), 4);
}

// Opaque kernels that refused float64 before (issue 10: "computed through fp32"): CumSum and
// ReduceLogSumExp now compute in double on the device; Softmax and LogSoftmax (decomposed:
// max, exp, sum, fz_div) with them. Inputs near 1 with 1e-10 steps: an fp32 computation would
// be off by ~1e6 ulp.
TEST_F(VulkanF64Math, OpaqueKernelsComputeInDouble) {
  std::mt19937_64 g(11);
  std::uniform_real_distribution<double> u(-3, 3);
  std::vector<double> x(6 * 50);
  for (size_t i = 0; i < x.size(); ++i) x[i] = (i % 3 == 0 ? 1.0 + 1e-10 * static_cast<double>(i) : u(g));
  const Shape s = {6, 50};
  auto axis = [](GraphBuilder& b, int64_t a) { return b.constant("axis", testing::ints_of({}, {a})); };
  EXPECT_LE(max_ulp("CumSum", {x}, s, [&](GraphBuilder& b, const std::vector<int>& v) { return b.op("CumSum", {v[0], axis(b, 1)}); }), 0);
  EXPECT_LE(max_ulp("CumSum reverse", {x}, s, [&](GraphBuilder& b, const std::vector<int>& v) {
              return b.op("CumSum", {v[0], axis(b, 0)}, {{"reverse", int64_t{1}}, {"exclusive", int64_t{1}}});
            }), 0);
  EXPECT_LE(max_ulp("ReduceLogSumExp", {x}, s, [&](GraphBuilder& b, const std::vector<int>& v) {
              return b.op("ReduceLogSumExp", {v[0]}, {{"axes", std::vector<int64_t>{1}}});
            }), 4);
  EXPECT_LE(max_ulp("Softmax", {x}, s, [&](GraphBuilder& b, const std::vector<int>& v) { return b.op("Softmax", {v[0]}); }), 8);  // exp, a 50-term sum, a division
  EXPECT_LE(max_ulp("LogSoftmax", {x}, s, [&](GraphBuilder& b, const std::vector<int>& v) {
              return b.op("LogSoftmax", {v[0]}, {{"axis", int64_t{0}}});
            }), 8);  // 1 ulp on lavapipe, 6 on the H200 (its double exp/log sum rounds differently)
}

}  // namespace
}  // namespace fusor
