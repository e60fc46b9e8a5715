// fp32 division on Vulkan is correctly rounded (issue 10): Vulkan lets OpFDiv be 2.5 ulp off
// (NVIDIA's driver is), so Div, Reciprocal, means and Softmax print fz_div, which corrects the
// driver's quotient (backends/vulkan/vk_dialect.cpp). lavapipe divides exactly, so the
// correction is also run with its seeds perturbed by a few ulp (FUSOR_VK_TEST_DIV_PERTURB).
// A divisor that many quotients share (a constant, a row's reduction) goes through fz_div_by,
// which prepares it once (Dialect::div_prep_type); its quotients are checked the same way.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>

#include "backends/backend.h"
#include "backends/codegen.h"
#include "backends/vulkan/vk_device.h"
#include "backends/vulkan/vk_dialect.h"
#include "ir/kernel_spec.h"
#include "frontend/builder.h"
#include "ir/passes.h"
#include "test_util.h"

namespace fusor {
namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Operand pairs: random bit patterns, hard cases and special values. `subnormal` says whether
// to include subnormal operands and results (only where the device preserves them).
void make_pairs(bool subnormal, std::vector<float>& a, std::vector<float>& b) {
  std::mt19937_64 g(1234);
  auto push = [&](float x, float y) {
    const float q = x / y;  // host IEEE division
    const bool sub = (std::fpclassify(x) == FP_SUBNORMAL || std::fpclassify(y) == FP_SUBNORMAL || std::fpclassify(q) == FP_SUBNORMAL);
    if (sub && !subnormal) return;
    a.push_back(x), b.push_back(y);
  };
  for (int i = 0; i < 6000; ++i) {
    uint32_t ua = static_cast<uint32_t>(g()), ub = static_cast<uint32_t>(g());
    if ((ua & 0x7f800000u) == 0x7f800000u) ua ^= 0x40000000u;  // keep these finite
    if ((ub & 0x7f800000u) == 0x7f800000u) ub ^= 0x40000000u;
    switch (i % 6) {
      case 1: ub = (ub & 0xff800000u) | 0x7fffffu; break;  // divisor mantissa all ones
      case 2: ua = (ua & 0x807fffffu) | (static_cast<uint32_t>(g() % 40 + 1) << 23); break;  // tiny dividend
      case 3: ub = (ub & 0x807fffffu) | (static_cast<uint32_t>(215 + g() % 39) << 23); break;  // huge divisor
      case 4: ua = (ua & 0x807fffffu) | (127u << 23), ub = (ub & 0x807fffffu) | (static_cast<uint32_t>(g() % 60 + 97) << 23); break;
      default: break;
    }
    push(from_bits(ua), from_bits(ub));
  }
  // Quotients next to a rounding tie: (q + half an ulp) * b with q and b short, and its neighbours.
  for (int i = 0; i < 1500; ++i) {
    const float q = std::ldexp(static_cast<float>((g() & 0xfffu) | 0x1000u), -12);
    const float y = static_cast<float>((g() & 0x7ffu) | 0x800u);
    const double x = (static_cast<double>(q) + std::ldexp(1.0, -24)) * y;
    const float xf = static_cast<float>(x);
    for (int d = -1; d <= 1; ++d) push(from_bits(bits_of(xf) + d), y);
  }
  // Quotients within |r| 2^-24 ulp of a rounding midpoint, where a single residual correction
  // of a seed may still round the wrong way: x, y 24-bit integers with x 2^24 = y (2N + 1) + r,
  // r small and odd (2N + 1 = -r / y mod 2^24), scaled by powers of two.
  for (int i = 0; i < 3000; ++i) {
    const uint32_t y = static_cast<uint32_t>(g() % (1u << 23)) | (1u << 23) | 1u;
    const int32_t r = static_cast<int32_t>(g() % 32) * 2 - 31;  // odd, in [-31, 31]
    uint32_t inv = y;  // y^-1 mod 2^24 by Newton's iteration (y odd)
    for (int k = 0; k < 5; ++k) inv *= 2u - y * inv;
    const uint64_t t = ((static_cast<uint64_t>(static_cast<uint32_t>(-r)) * inv) & 0xffffffu) + (1u << 24);
    const uint64_t x = (static_cast<uint64_t>(y) * t + static_cast<uint64_t>(static_cast<int64_t>(r))) >> 24;
    if (x >= (1u << 24)) continue;
    const int e = static_cast<int>(g() % 40) - 20;
    push(std::ldexp(static_cast<float>(x), e), std::ldexp(static_cast<float>(y), e + static_cast<int>(g() % 9) - 4));
  }
  // Exact ties in the subnormal range: k * 2^-150 with k odd, and their neighbours.
  for (int i = 0; i < 600; ++i) {
    const float k = static_cast<float>((g() & 0xffffu) | 1u);
    const float y = std::ldexp(1.0f, static_cast<int>(g() % 60) + 10);
    const float x = std::ldexp(k, -150) * y;
    for (int d = -1; d <= 1; ++d) push(i % 2 ? -from_bits(bits_of(x) + d) : from_bits(bits_of(x) + d), y);
  }
  // Overflow and underflow at the edges, zeros, infinities, NaN, signs.
  const float big = 3.4028235e38f, tiny = 1.17549435e-38f, inf = INFINITY, nan = NAN;
  const std::vector<float> sp = {0.0f, -0.0f, 1.0f, -1.0f, 3.0f, 0.5f, big, -big, tiny, -tiny, 1e-45f, inf, -inf, nan, 1e30f, 1e-30f};
  for (float x : sp)
    for (float y : sp) push(x, y);
}

class VulkanDiv : public ::testing::Test {
 protected:
  void SetUp() override {
    vk_ = make_backend("vulkan");
    if (vk_->devices().empty()) GTEST_SKIP() << "no Vulkan device (install mesa-vulkan-drivers for lavapipe)";
    info_ = vk::Instance::get()->devices()[0];
    make_pairs(info_.denorm_preserve[1], a_, b_);
    GraphBuilder gb;
    const int64_t n = static_cast<int64_t>(a_.size());
    int x = gb.input("a", DType::f32, {n}), y = gb.input("b", DType::f32, {n});
    gb.output(gb.op("Div", {x, y}));
    gb.output(gb.op("Reciprocal", {y}));
    g_ = gb.build();
    make_static(g_, {});
    ta_ = Tensor(DType::f32, {n}), tb_ = Tensor(DType::f32, {n});
    std::memcpy(ta_.data<float>(), a_.data(), a_.size() * 4);
    std::memcpy(tb_.data<float>(), b_.data(), b_.size() * 4);
  }
  // Runs g on vulkan; returns how many outputs differ in bits from want(k, i), the host's IEEE
  // value of output k's element i (NaN matches any NaN), printing the first few.
  template <class Want>
  int mismatches_of(const Graph& g, const std::vector<Tensor>& in, size_t outputs, size_t n, Want want, bool print) {
    auto out = vk_->compile(g, {})->run(in);
    int bad = 0;
    for (size_t k = 0; k < outputs; ++k)
      for (size_t i = 0; i < n; ++i) {
        const float w = want(k, i);
        // A device that flushes fp32 denormals cannot return a subnormal quotient (the pairs
        // avoid them for a / b; 1 / b of b near 2^126 still has one).
        if (!info_.denorm_preserve[1] && std::fpclassify(w) == FP_SUBNORMAL) continue;
        const float got = out[k].data<float>()[i];
        if (bits_of(got) == bits_of(w) || (std::isnan(got) && std::isnan(w))) continue;
        if (print && bad < 5) ADD_FAILURE() << "output " << k << " element " << i << std::hexfloat << ": vulkan " << got << ", IEEE " << w;
        ++bad;
      }
    return bad;
  }
  int mismatches(bool print) {
    return mismatches_of(g_, {ta_, tb_}, 2, a_.size(), [&](size_t k, size_t i) { return k ? 1.0f / b_[i] : a_[i] / b_[i]; },
                         print);
  }
  // Raw (uncorrected) and corrected runs with the seeds perturbed by a few ulp; `count` is how
  // many values the run checks, the raw runs must get most of them wrong.
  void check_perturbed(const std::function<int(bool)>& run, size_t count) {
    for (const char* p : {"3", "-3", "1", "-2"}) {
      setenv("FUSOR_VK_TEST_DIV_PERTURB", (std::string(p) + ",raw").c_str(), 1);
      const int raw = run(false);
      setenv("FUSOR_VK_TEST_DIV_PERTURB", p, 1);
      const int fixed = run(true);
      unsetenv("FUSOR_VK_TEST_DIV_PERTURB");
      EXPECT_GT(raw, static_cast<int>(count / 2)) << "perturbation " << p << " did not reach the shader";
      EXPECT_EQ(fixed, 0) << "perturbation " << p << " ulp";
    }
  }
  // The Vulkan source of each kernel of g's plan, for this device.
  std::vector<std::string> sources(const Graph& g) {
    Plan p = build_plan(g);
    std::vector<std::string> src;
    for (const KernelSpec& k : p.kernels) {
      vk::VulkanDialect d(info_, k, std::vector<int64_t>(kernel_bindings(k).size(), 0), &p);
      src.push_back(emit_kernel(k, p, d));
    }
    return src;
  }
  std::unique_ptr<Backend> vk_;
  vk::PhysicalDeviceInfo info_;
  std::vector<float> a_, b_;
  Graph g_;
  Tensor ta_, tb_;
};

TEST_F(VulkanDiv, MatchesIeeeDivisionBits) {
  ASSERT_GT(a_.size(), 9000u);
  EXPECT_EQ(mismatches(true), 0) << "of " << a_.size() << " pairs on " << info_.name;
  if (!info_.denorm_preserve[1])
    std::printf("  device '%s' flushes fp32 denormals: %zu pairs without subnormal operands or results\n", info_.name.c_str(), a_.size());
}

// The correction repairs a seed quotient that is off by up to 3 ulp; the control run without
// the correction shows that the perturbation reaches the shader.
TEST_F(VulkanDiv, CorrectsPerturbedSeeds) { check_perturbed([&](bool print) { return mismatches(print); }, a_.size()); }

// x / max(d) over each row, d's row all one divisor: a row kernel whose quotients share the
// reduction's value, prepared once per row (fz_div_prep) and used by fz_div_by. Row i holds
// pair i's dividend (so every hard pair is there) and two others.
TEST_F(VulkanDiv, RowSharedDivisorMatchesIeeeBits) {
  const int64_t n = static_cast<int64_t>(a_.size()), len = 3;
  GraphBuilder gb;
  int x = gb.input("x", DType::f32, {n, len}), d = gb.input("d", DType::f32, {n, len});
  gb.output(gb.op("Div", {x, gb.op("ReduceMax", {d}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{1}}})}));
  Graph g = gb.build();
  make_static(g, {});
  const std::vector<std::string> src = sources(g);
  ASSERT_EQ(src.size(), 1u) << "the Div should fuse into the reduction's row kernel";
  EXPECT_NE(src[0].find("fz_div_prep("), std::string::npos);
  EXPECT_NE(src[0].find("fz_div_by("), std::string::npos);
  Tensor tx(DType::f32, {n, len}), td(DType::f32, {n, len});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < len; ++j) {
      tx.data<float>()[i * len + j] = a_[(i + j * 7) % n];
      td.data<float>()[i * len + j] = b_[i];
    }
  auto want = [&](size_t, size_t e) { return tx.data<float>()[e] / b_[e / len]; };
  const size_t count = static_cast<size_t>(n * len);
  EXPECT_EQ(mismatches_of(g, {tx, td}, 1, count, want, true), 0) << "of " << count << " quotients on " << info_.name;
  check_perturbed([&](bool print) { return mismatches_of(g, {tx, td}, 1, count, want, print); }, count);
}

// x / c for constant divisors: fz_div_by with fz_div_prep(c) folded on the host where c is in
// fz_div_by's range, plain fz_div outside it (1e-30, 1e30, 0, inf, NaN). The folded quotients
// have no driver seed to perturb (x * RN(1 / c) is IEEE multiplication); the perturbed runs
// check the two unfolded ones (1e-30, 1e30: fz_div's scaled path).
TEST_F(VulkanDiv, ConstantDivisorsMatchIeeeBits) {
  const std::vector<float> cs = {3.0f, -7.0f, 0.1f, 1.41421354f, 1e10f, -3.3e-12f, b_[11], b_[4242],
                                 1e-30f, 1e30f, 0.0f, INFINITY, NAN};
  const int64_t n = static_cast<int64_t>(a_.size());
  GraphBuilder gb;
  int x = gb.input("a", DType::f32, {n});
  for (size_t k = 0; k < cs.size(); ++k) {
    Tensor c(DType::f32, {});
    c.data<float>()[0] = cs[k];
    gb.output(gb.op("Div", {x, gb.constant("c" + std::to_string(k), std::move(c))}));
  }
  Graph g = gb.build();
  make_static(g, {});
  size_t by = 0;
  for (const std::string& s : sources(g))
    for (size_t at = s.find("fz_div_by("); at != std::string::npos; at = s.find("fz_div_by(", at + 1)) ++by;
  EXPECT_GE(by, 8u) << "constants in fz_div_by's range should use it";
  auto want = [&](size_t k, size_t i) { return a_[i] / cs[k]; };
  EXPECT_EQ(mismatches_of(g, {ta_}, cs.size(), a_.size(), want, true), 0);
  check_perturbed([&](bool print) { return mismatches_of(g, {ta_}, cs.size(), a_.size(), want, print); },
                  a_.size() * 2);
}

// A mean's fp32 sum is compensated (fz_csum) and divided with its residual (fz_cmean), so
// each ReduceMean is the exact row sum divided by the count and rounded once, and each ReduceSum
// the exact sum rounded once, as ref's double arithmetic gives them (to an ulp).
TEST_F(VulkanDiv, MeansDivideTheCompensatedSumByTheCount) {
  for (int64_t len : {768, 1000, 3}) {
    SCOPED_TRACE("rows of " + std::to_string(len));
    GraphBuilder gb;
    int x = gb.input("x", DType::f32, {37, len});
    gb.output(gb.op("ReduceSum", {x, gb.constant("ax", testing::ints_of({1}, {1}))}, {{"keepdims", int64_t{0}}}));
    gb.output(gb.op("ReduceMean", {x}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}}));
    Graph g = gb.build();
    make_static(g, {});
    const std::vector<std::string> src = sources(g);
    std::string all;
    for (const std::string& k : src) all += k;
    EXPECT_NE(all.find("fz_cmean(fz_a"), std::string::npos) << all;
    Tensor in = testing::random_tensor(DType::f32, {37, len}, 41, -3.0, 5.0);
    auto out = vk_->compile(g, {})->run({in});
    ASSERT_EQ(out.size(), 2u);
    for (int64_t r = 0; r < 37; ++r) {
      const float sum = out[0].data<float>()[r], mean = out[1].data<float>()[r];
      double exact = 0;  // exact: 1000 floats of [-3, 5) fit a double's 53 bits
      for (int64_t j = 0; j < len; ++j) exact += in.data<float>()[r * len + j];
      const float want_sum = static_cast<float>(exact), want_mean = static_cast<float>(exact / static_cast<double>(len));
      EXPECT_LE(std::abs(static_cast<int64_t>(bits_of(sum)) - static_cast<int64_t>(bits_of(want_sum))), 1)
          << "row " << r << std::hexfloat << ": sum " << sum << ", exact " << want_sum;
      EXPECT_LE(std::abs(static_cast<int64_t>(bits_of(mean)) - static_cast<int64_t>(bits_of(want_mean))), 1)
          << "row " << r << std::hexfloat << ": mean " << mean << ", exact " << want_mean;
    }
  }
}

// Sqrt is correctly rounded too (fz_sqrt: the driver's root, one Newton step with an exact
// residual, then a one-ulp pick), for every exponent (subnormal inputs where the device keeps
// them), inputs whose root lies next to a rounding midpoint, and special values; with the
// driver's root perturbed by a few ulp (the seed hook fz_div shares).
TEST_F(VulkanDiv, SqrtMatchesIeeeBits) {
  std::mt19937_64 g(99);
  std::vector<float> xs;
  for (int i = 0; i < 8000; ++i) {
    uint32_t u = static_cast<uint32_t>(g()) & 0x7fffffffu;
    if ((u & 0x7f800000u) == 0x7f800000u) u ^= 0x40000000u;
    if (i % 4 == 1) u = (u & 0x7fffffu) | (static_cast<uint32_t>(60 + g() % 136) << 23);  // sqrt_core's range
    if (!info_.denorm_preserve[1] && (u & 0x7f800000u) == 0u) continue;
    xs.push_back(from_bits(u));
  }
  // Roots next to a midpoint: m = (2j + 1) u / 2 with 24-bit j, x = RN(m^2) and its neighbours,
  // scaled by powers of four (the scaled path outside [2^-64, 2^64]).
  for (int i = 0; i < 2000; ++i) {
    const double j = static_cast<double>((g() & 0x7fffffu) | 0x800000u);
    const float x = static_cast<float>(std::ldexp((2 * j + 1) * (2 * j + 1), -48));  // (m / 2^23)^2 / 4 in [1, 4)
    const int e = 2 * (static_cast<int>(g() % 120) - 60);
    for (int d = -2; d <= 2; ++d) {
      const float v = std::ldexp(from_bits(bits_of(x) + d), e);
      if (std::isfinite(v) && (info_.denorm_preserve[1] || std::fpclassify(v) == FP_NORMAL)) xs.push_back(v);
    }
  }
  for (float v : {0.0f, -0.0f, 1.0f, 4.0f, 2.0f, -1.0f, 3.4028235e38f, 1.17549435e-38f, 5.42101086e-20f, 1.84467441e19f,
                  INFINITY, -INFINITY, NAN, -1e-30f})
    xs.push_back(v);
  const int64_t n = static_cast<int64_t>(xs.size());
  GraphBuilder gb;
  gb.output(gb.op("Sqrt", {gb.input("x", DType::f32, {n})}));
  Graph g2 = gb.build();
  make_static(g2, {});
  EXPECT_NE(sources(g2)[0].find("fz_sqrt("), std::string::npos);
  Tensor tx(DType::f32, {n});
  std::memcpy(tx.data<float>(), xs.data(), xs.size() * 4);
  auto want = [&](size_t, size_t i) { return std::sqrt(xs[i]); };
  EXPECT_EQ(mismatches_of(g2, {tx}, 1, xs.size(), want, true), 0) << "of " << n << " roots on " << info_.name;
  check_perturbed([&](bool print) { return mismatches_of(g2, {tx}, 1, xs.size(), want, print); }, xs.size());
}

}  // namespace
}  // namespace fusor
