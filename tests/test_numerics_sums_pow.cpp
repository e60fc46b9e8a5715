// Exact numerics, continued (tests/test_numerics.cpp has the rest): compensated fp32 sums,
// fp16 / bf16 sums rounded once, Pow (C's special cases, integer exponents of half bases, fp32
// rounded once from the double power) and subnormal quotients, on every backend bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "numerics_check.h"

namespace fusor {
namespace {

using namespace numerics_check;  // check_everywhere ..., ints_of, tensor_of, random_tensor

// Pow's C99 Annex F cases where GLSL's pow is undefined: -0 and -inf bases keep their sign for
// odd integer exponents, -inf to a non-integer power is +inf / +0 (vulkan gave NaN), (-1)^±inf
// is 1; float64 (-1)^1e308 is 1 (vulkan gave NaN: the huge exponent's split overflowed).
TEST(Numerics, PowSpecialCasesFollowC) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<std::pair<double, double>> cases = {
      {-inf, 0.5}, {-inf, -0.5}, {-inf, 3}, {-inf, -3}, {-inf, 2}, {-inf, 1.17549435e-38}, {-0.0, -1}, {-0.0, 1}, {-0.0, 3},
      {-0.0, -3},  {-0.0, 0.5},  {-0.0, -0.5}, {-0.0, 2}, {0.0, -1}, {-1, inf}, {-1, -inf}, {0.5, inf}, {2, -inf},
      {inf, -2},   {-2, 0},      {1, std::numeric_limits<double>::quiet_NaN()}, {-1, 3e38}, {-1, -3e38}, {-1, 16777217}};
  for (DType t : {DType::f32, DType::f16, DType::f64}) {
    std::vector<double> a, e;
    for (auto [x, y] : cases) {
      if (t == DType::f16 && (std::fabs(y) > 65504 || (std::fabs(y) < 1e-4 && y != 0))) continue;
      a.push_back(x), e.push_back(y);
    }
    if (t == DType::f64) a.push_back(-1), e.push_back(1e308);
    Tensor x = tensor_of({static_cast<int64_t>(a.size())}, a, t), y = tensor_of({static_cast<int64_t>(e.size())}, e, t);
    Tensor want(t, x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) want.set(i, std::pow(x.get(i), y.get(i)));
    check_everywhere(std::string("pow specials ") + dtype_name(t), {x, y}, binary("Pow"), want);
  }
}

// fp32 Sum / Mean reductions on the GPUs are compensated (fz_csum), as ref's double sums:
// LayerNormalization of a constant row is exactly 0 (vulkan gave 0.096 for 1000 x 1000.1: the
// fp32 mean was 4 ulps off), a constant row's ReduceMean is the constant, and a long row's sum
// does not drift with its length (a 4M row of equal values was 1.5e-4 off). Red-team round 23.
TEST(Numerics, RowSumsAreCompensated) {
  for (int64_t len : {int64_t{7}, int64_t{768}, int64_t{1000}, int64_t{4099}}) {
    // Past 1e30 and below 1e-20 the mean's residual is taken on values scaled by 2^-+64 (the
    // first version divided the rounded sum there: 1 ulp off, LN 6e-32 for the tiny row).
    const std::vector<float> values = {1000.1f, -3.7e5f, 1e-3f, 0.1f, 1.9504638e31f, 2.7921882e-27f, -5.586912e-25f};
    Tensor x(DType::f32, {static_cast<int64_t>(values.size()), len});
    for (size_t r = 0; r < values.size(); ++r)
      for (int64_t j = 0; j < len; ++j) x.set(static_cast<int64_t>(r) * len + j, values[r]);
    const std::string nm = std::to_string(len);
    Tensor mean(DType::f32, {static_cast<int64_t>(values.size()), 1});
    for (size_t r = 0; r < values.size(); ++r) mean.set(static_cast<int64_t>(r), values[r]);
    check_everywhere("ReduceMean of constant rows of " + nm, {x},
                     [](GraphBuilder& b, const std::vector<int>& v) { return b.op("ReduceMean", {v[0], b.constant("axes", ints_of({1}, {1}))}); },
                     mean);
    Tensor scale = random_tensor(DType::f32, {len}, 11, 0.5, 2.0), bias(DType::f32, {len});  // bias 0: the result is 0
    Tensor zeros(DType::f32, x.shape());
    const Build ln = [](GraphBuilder& b, const std::vector<int>& v) {
      return b.op("LayerNormalization", {v[0], v[1], v[2]}, {{"axis", int64_t{-1}}, {"epsilon", 1e-5f}});
    };
    check_everywhere("LayerNormalization of constant rows of " + nm, {x, scale, bias}, ln, zeros);
  }
  // A long row of equal values (streamed, not register-resident) and its mean.
  const int64_t n = int64_t{1} << 20;
  Tensor x(DType::f32, {1, n});
  for (int64_t j = 0; j < n; ++j) x.set(j, 0.1f);
  Tensor sum(DType::f32, {1, 1});
  sum.set(0, static_cast<float>(static_cast<double>(0.1f) * static_cast<double>(n)));
  check_everywhere("ReduceSum of 2^20 x 0.1f", {x},
                   [](GraphBuilder& b, const std::vector<int>& v) { return b.op("ReduceSum", {v[0], b.constant("axes", ints_of({1}, {1}))}); },
                   sum);
  // Random rows (sums of both signs, cancelling): within one ulp of ref's double sum on every
  // backend, unfused too (the opaque Reduce kernel is compensated as well).
  Tensor y = random_tensor(DType::f32, {6, 30001}, 5, -100.0, 100.0);
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceSumSquare", "ReduceL2", "ReduceLogSumExp"}) {
    GraphBuilder b("sums", 18);
    const int in = b.input("y", DType::f32, y.shape());
    b.output(b.op(op, {in, b.constant("axes", ints_of({1}, {1}))}, {{"keepdims", int64_t{0}}}));
    const Graph sg = specialize(b.build(), {y});
    const Tensor want = run_on_backend("ref", sg, {y})[0];
    for (const std::string backend : {"cpu", "vulkan", "cuda"}) {
      if (!has_device(backend)) continue;
      for (bool fusion : {true, false}) {
        CompileOptions o;
        o.fusion = fusion;
        const Tensor got = run_on_backend(backend, sg, {y}, o)[0];
        for (int64_t i = 0; i < want.numel(); ++i) {
          const float w = static_cast<float>(want.get(i)), g = static_cast<float>(got.get(i));
          EXPECT_LE(std::fabs(g - w), std::nextafter(std::fabs(w), INFINITY) - std::fabs(w))
              << op << " row " << i << " on " << backend << (fusion ? "" : " unfused") << ": " << g << ", ref " << w;
        }
      }
    }
  }
}

// fp16 / bf16 sums and means round once: the fp32 value is rounded to odd before the store
// (fz_cfin_odd / fz_cmean's odd), not to nearest and then to nearest again (red-team round 25:
// fp16 [1, 2^-11, 2^-24] summed to 0x3c00, not 0x3c01).
TEST(Numerics, HalfSumsRoundOnce) {
  struct Case {
    DType t;
    const char* op;
    std::vector<double> x;
    uint16_t want;
  };
  const std::vector<Case> cases = {{DType::f16, "ReduceSum", {1.0, std::ldexp(1.0, -11), std::ldexp(1.0, -24)}, 0x3c01},
                                   {DType::f16, "ReduceMean", {4.0, std::ldexp(1.0, -9), std::ldexp(1.0, -23), 0.0}, 0x3c01},
                                   {DType::bf16, "ReduceSum", {1.0, std::ldexp(1.0, -8), std::ldexp(1.0, -30)}, 0x3f81}};
  for (const Case& c : cases) {
    Tensor x(c.t, {1, static_cast<int64_t>(c.x.size())}), want(c.t, {1, 1});
    for (size_t i = 0; i < c.x.size(); ++i) x.set(static_cast<int64_t>(i), c.x[i]);
    std::memcpy(want.raw(), &c.want, 2);
    const std::string op = c.op;
    check_everywhere(std::string(dtype_name(c.t)) + " " + op + " rounds once", {x},
                     [op](GraphBuilder& b, const std::vector<int>& v) { return b.op(op, {v[0], b.constant("axes", ints_of({1}, {1}))}); },
                     want);
  }
}

// Specials through the compensated sums: inf, -inf, NaN, inf - inf and a sum reaching fp32's
// largest values give what ref gives (the compensation term turns NaN; the plain sum is then
// the result). Cancellation: [1e30, 3e22, -1e30] leaves s = 0 and c = 3e22, whose mean came
// out inf (the pair was scaled up by |s| alone; review of round 25), here also as a row one
// thread sums alone (768 = 3 x 256 values, the three at 0, 256, 512).
TEST(Numerics, CompensatedSumsKeepSpecials) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<std::vector<float>> rows = {{1.0f, inf, 2.0f}, {-inf, 1.0f, 3.0f}, {inf, -inf, 0.0f}, {1.0f, nan, 1.0f},
                                                {2e38f, 1e38f, -2e38f}, {-0.0f, -0.0f, -0.0f}, {3e38f, -3e38f, 1.0f}, {1e-45f, 1e-45f, 2e-45f},
                                                {1e30f, 1.0f, -1e30f}, {1e30f, 3e22f, -1e30f}};
  Tensor x(DType::f32, {static_cast<int64_t>(rows.size()), 3});
  for (size_t r = 0; r < rows.size(); ++r)
    for (int j = 0; j < 3; ++j) x.set(static_cast<int64_t>(r) * 3 + j, rows[r][j]);
  for (const char* op : {"ReduceSum", "ReduceMean"}) {
    const Build f = [op](GraphBuilder& b, const std::vector<int>& v) { return b.op(op, {v[0], b.constant("axes", ints_of({1}, {1}))}); };
    const Graph g = make_graph({x}, f, false);
    const Tensor want = run_on_backend("ref", specialize(g, {x}), {x}, CompileOptions{})[0];
    EXPECT_TRUE(std::isinf(want.get(0)) && std::isnan(want.get(2)) && std::isnan(want.get(3))) << op << ": ref's specials";
    // ref's double sum carries its compensation too: [1e30, 1, -1e30] sums to 1 (it gave 0).
    EXPECT_EQ(want.get(8), std::string(op) == "ReduceSum" ? 1.0 : static_cast<double>(1.0f / 3.0f)) << op;
    check_everywhere(std::string(op) + " of specials", {x}, f, want);
    Tensor row(DType::f32, {1, 768});
    row.set(0, 1e30), row.set(256, 3e22), row.set(512, -1e30);
    const Tensor want_row = run_on_backend("ref", specialize(make_graph({row}, f, false), {row}), {row}, CompileOptions{})[0];
    EXPECT_FLOAT_EQ(static_cast<float>(want_row.get(0)), std::string(op) == "ReduceSum" ? 3e22f : 3e22f / 768.0f) << op;
    check_everywhere(std::string(op) + " of a cancelling row", {row}, f, want_row);
  }
}

// Pow of an fp16 / bf16 base with an integer exponent: the exponent reaches the fp32 power as
// itself, not rounded to the base's type first ((-1)^2049 gave 1: 2049 is 2048 in fp16; 1.001^3001
// was 1.001^3000). numpy and the ONNX reference compute it so.
TEST(Numerics, PowKeepsAnIntegerExponentOfAHalfBase) {
  for (DType t : {DType::f16, DType::bf16})
    for (DType et : {DType::i64, DType::i32}) {
      const std::vector<double> base = {-1.0, -1.0, 1.001, -1.0009765625, 0.999, 2.0, -1.5};
      const std::vector<int64_t> ex = {2049, 2048, 3001, 2049, 4097, -3, 7};
      Tensor x(t, {static_cast<int64_t>(base.size())}), y(et, x.shape()), want(t, x.shape());
      for (size_t i = 0; i < base.size(); ++i) {
        x.set(static_cast<int64_t>(i), base[i]);
        y.set_int(static_cast<int64_t>(i), ex[i]);
        // fp32's pow of the stored base and the exact exponent, rounded to t (the fp32 power is
        // within an ulp of double's, far below t's half ulp for these values).
        want.set(static_cast<int64_t>(i), static_cast<double>(std::pow(static_cast<float>(x.get(static_cast<int64_t>(i))),
                                                                       static_cast<float>(ex[i]))));
      }
      EXPECT_EQ(want.get(0), -1.0);
      check_everywhere(std::string("Pow ") + dtype_name(t) + " ^ " + dtype_name(et), {x, y}, binary("Pow"), want);
    }
}

// fp32 Pow is rounded once from the double power on every backend, as ref: the Vulkan driver's
// pow (exp2(y log2 x)) was up to 45 ulp off where |y log2 x| is large (pow(1e5, 7.3) 33 ulp,
// red-team round 27), CUDA's powf is within 4 ulp. Constant and run-time exponents (x^2, x^3
// and x^4 take a product path), far into the range, fused in a chain; results kept normal
// (devices may flush subnormals).
TEST(Numerics, FloatPowIsRoundedOnceFromTheDoublePower) {
  std::vector<float> a = {2.591158e-05f, 1e5f, 100.0f, 0.001f, 3.3f, 1.7e9f, 0.77f, 12.5f, 1e-3f, 4.5e18f, 2.0f, 1.0000001f};
  std::vector<float> b = {-7.5f, 7.3f, 18.0f, -12.0f, 2.0f, 3.0f, 4.0f, -2.5f, 0.5f, 2.0f, -100.25f, 3e6f};
  std::mt19937_64 rng(2027);
  std::uniform_real_distribution<double> lx(-20.0, 20.0), ly(-6.0, 6.0);
  while (a.size() < 2000) {  // |y log2 x| up to ~120, results within fp32's normal range
    const double l = lx(rng), y = ly(rng);
    if (std::fabs(l * y) > 120.0) continue;
    a.push_back(static_cast<float>(std::exp2(l))), b.push_back(static_cast<float>(y));
  }
  const int64_t n = static_cast<int64_t>(a.size());
  Tensor x(DType::f32, {n}), y(DType::f32, {n}), want(DType::f32, {n});
  for (int64_t i = 0; i < n; ++i) {
    x.set(i, a[static_cast<size_t>(i)]), y.set(i, b[static_cast<size_t>(i)]);
    want.set(i, static_cast<double>(static_cast<float>(std::pow(static_cast<double>(a[static_cast<size_t>(i)]), static_cast<double>(b[static_cast<size_t>(i)])))));
  }
  check_everywhere("Pow of fp32 pairs", {x, y}, binary("Pow"), want);
  // A constant exponent (GELU's x^3) inside a fused chain.
  for (double e0 : {3.0, 2.0, 7.3}) {
    const double e = static_cast<double>(static_cast<float>(e0));  // the exponent as the fp32 constant holds it
    Tensor w3(DType::f32, {n});
    for (int64_t i = 0; i < n; ++i)
      w3.set(i, static_cast<double>(static_cast<float>(std::pow(static_cast<double>(static_cast<float>(a[static_cast<size_t>(i)] * 0.5f)), e)) + 1.0f));
    Tensor xs(DType::f32, {n});
    for (int64_t i = 0; i < n; ++i) xs.set(i, static_cast<double>(a[static_cast<size_t>(i)]));
    for (int64_t i = 0; i < n; ++i)
      if (!std::isfinite(w3.get(i)) || std::fabs(w3.get(i)) < 1e-30) xs.set(i, 1.5), w3.set(i, static_cast<double>(static_cast<float>(std::pow(0.75, e)) + 1.0f));
    check_everywhere("Pow by the constant " + std::to_string(e0) + " in a chain", {xs},
                     [e](GraphBuilder& gb, const std::vector<int>& v) {
                       const int h = gb.op("Mul", {v[0], gb.constant("half", tensor_of({}, {0.5}))});
                       const int p = gb.op("Pow", {h, gb.constant("e", tensor_of({}, {e}))});
                       return gb.op("Add", {p, gb.constant("one", tensor_of({}, {1.0}))});
                     },
                     w3);
  }
}

// Quotients and remainders of subnormals: vulkan's fz_div and fz_fmod took the exponent from
// GLSL frexp, which lavapipe gets wrong for subnormals (Div(1.4e-45, 3) was 1.96e-39).
TEST(Numerics, SubnormalQuotientsAndRemainders) {
  // The last three: a subnormal divisor 2^255 or more below the dividend (fz_fmod's ldexp).
  const std::vector<float> a = {1.4e-45f, 4.2e-45f, 4.2e-45f, 1e-40f, -3e-39f, 1.1754942e-38f, 5e-39f, 3e-45f, 1e-38f, 2.5e-44f,
                                3e38f, 3.40282347e38f, 3e38f};
  const std::vector<float> b = {3.0f, 2.0f, 1.4e-45f, 0.7f, 7.0f, 1.5f, 1e-40f, 1e-45f, -3e-39f, 0.5f, 1e-45f, 3e-45f, 1.1e-39f};
  Tensor x(DType::f32, {static_cast<int64_t>(a.size())}), y(DType::f32, {static_cast<int64_t>(b.size())});
  for (size_t i = 0; i < a.size(); ++i) x.set(static_cast<int64_t>(i), a[i]), y.set(static_cast<int64_t>(i), b[i]);
  for (const auto& [op, attrs] : std::vector<std::pair<std::string, GraphBuilder::Attrs>>{{"Div", {}}, {"Mod", {{"fmod", int64_t{1}}}}}) {
    Tensor want(DType::f32, x.shape());
    for (size_t i = 0; i < a.size(); ++i)
      want.set(static_cast<int64_t>(i), op == "Div" ? a[i] / b[i] : std::fmod(a[i], b[i]));
    // vulkan is checked below: a device without fp32 DenormPreserve (the H200's, and lavapipe
    // says it may) can flush subnormal operands and results to zero, but nothing else.
    check_everywhere(op + " of subnormals", {x, y}, binary(op, attrs), want, {{"vulkan", "checked with flushing allowed"}});
    if (!has_device("vulkan")) continue;
    bool may_flush = false;
    for (const DeviceInfo& d : make_backend("vulkan")->devices())
      if (const size_t at = d.numerics_note.find("denormals to zero in "); at != std::string::npos)
        may_flush = may_flush || d.numerics_note.substr(at, d.numerics_note.find('(', at) - at).find("fp32") != std::string::npos;
    auto ftz = [&](float v) { return may_flush && std::fpclassify(v) == FP_SUBNORMAL ? 0.0f : v; };
    const Graph sg = specialize(make_graph({x, y}, binary(op, attrs), false), {x, y});
    for (bool fusion : {true, false}) {
      CompileOptions o;
      o.fusion = fusion;
      const Tensor got = run_on_backend("vulkan", sg, {x, y}, o)[0];
      for (size_t i = 0; i < a.size(); ++i) {
        const float g = static_cast<float>(got.get(static_cast<int64_t>(i))), w = static_cast<float>(want.get(static_cast<int64_t>(i)));
        const float fa = ftz(a[i]), fb = ftz(b[i]);
        const float f = ftz(op == "Div" ? fa / fb : std::fmod(fa, fb));  // the flushed computation
        const bool same = std::memcmp(&g, &w, 4) == 0 || (std::isnan(g) && std::isnan(w));
        const bool flushed = may_flush && (g == f || (std::isnan(g) && std::isnan(f)));
        EXPECT_TRUE(same || flushed) << op << "(" << a[i] << ", " << b[i] << ") on vulkan" << (fusion ? "" : " unfused") << ": " << g
                                     << ", IEEE " << w << (may_flush ? ", flushed " + std::to_string(f) : std::string());
      }
    }
  }
}

// Shrink takes every numeric type (ONNX Shrink-9). Integers compute in float64, as the ONNX
// reference's numpy promotion does (x + bias as float64), and truncate back: int8 -3 + 1.25 is
// -1.75, truncated to -1. Results past the type saturate (fusor's float -> integer rule, Cast's;
// numpy's astype wraps or is undefined there): int8 127 + 2.25 is 127. Fused with an integer
// Add first, so the kernels run the Cast pair.
TEST(Numerics, ShrinkOnIntegersTruncatesFromFloat64) {
  const double lambd = 1.5;
  for (double bias : {1.25, -2.25})
    for (DType t : {DType::i8, DType::u8, DType::i16, DType::i32, DType::i64, DType::u32}) {
      const bool uns = dtype_is_unsigned(t);
      const int bits = 8 * static_cast<int>(dtype_size(t));
      const int64_t hi = uns ? (int64_t{1} << bits) - 1 : static_cast<int64_t>((uint64_t{1} << (bits - 1)) - 1), lo = uns ? 0 : -hi - 1;
      std::vector<int64_t> v = {0, 1, 2, 3, 7, 100, 120, hi};
      if (!uns) v.insert(v.end(), {-1, -2, -3, -100, -120, lo + 1});
      if (t == DType::i32) v.insert(v.end(), {2147483000, -2147483000, 16777217});
      if (t == DType::i64) v.insert(v.end(), {9007199254740993, -4503599627370497});
      Tensor x(t, {static_cast<int64_t>(v.size())}), one(t, {1}), want(t, x.shape());
      for (size_t i = 0; i < v.size(); ++i) x.set_int(static_cast<int64_t>(i), v[i] - 1);
      one.set_int(0, 1);
      const double top = std::ldexp(1.0, uns ? bits : bits - 1);
      for (int64_t i = 0; i < x.numel(); ++i) {
        const double a = static_cast<double>(x.get_int(i) + 1);  // the Add first (no wrap for these values)
        const double r = std::trunc(a < -lambd ? a + bias : a > lambd ? a - bias : 0.0);
        want.set_int(i, r >= top ? hi : r < -top || (uns && r < 0) ? lo : static_cast<int64_t>(r));
      }
      check_everywhere(std::string("Shrink ") + dtype_name(t) + " bias " + std::to_string(bias), {x, one},
                       [&](GraphBuilder& b, const std::vector<int>& in) {
                         return b.op("Shrink", {b.op("Add", {in[0], in[1]})}, {{"lambd", lambd}, {"bias", bias}});
                       },
                       want);
    }
  // bool is not numeric: a clear shape-time error.
  GraphBuilder b("shrink_bool", 18);
  b.output(b.op("Shrink", {b.input("x", DType::boolean, {2})}));
  const Tensor flags(DType::boolean, {2});
  EXPECT_NE(testing::error_of([&] { specialize(b.build(), {flags}); }).find("needs a numeric input, got bool"), std::string::npos);
}

// MeanVarianceNormalization's variance is that of the centred values (fp16 / bf16 in fp32): the
// spec's function body E[X^2] - E[X]^2 cancelled in fp32 (values 1000 + 0.01 k gave a negative variance, NaN on every
// backend; offset random data 10^5x off; red-team round 34). Against the variance in double of
// the same fp32 inputs; the fp32 mean's rounding (an ulp of 1000 against a spread of 0.02)
// bounds the error near 2e-3.
TEST(Numerics, MeanVarianceNormalizationCentresBeforeSquaring) {
  std::mt19937 rng(34);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  auto offset_data = [&](const Shape& s, float base, float spread) {
    Tensor t(DType::f32, s);
    for (int64_t i = 0; i < t.numel(); ++i) t.set(i, base + spread * noise(rng));
    return t;
  };
  Tensor ramp(DType::f32, {1, 1, 2, 4});
  for (int64_t i = 0; i < 8; ++i) ramp.set(i, static_cast<double>(1000.0f + static_cast<float>(i) * 0.01f));
  struct Case {
    const char* name;
    Tensor x;
    double tol;
  };
  // fp16 / bf16 with a spread of 300: their squares overflow fp16 (the result was all zeros);
  // normalised in fp32 and rounded once, so within the dtype's half ulp (plus fp32's error).
  auto as = [](const Tensor& t, DType d) {
    Tensor o(d, t.shape());
    for (int64_t i = 0; i < t.numel(); ++i) o.set(i, t.get(i));
    return o;
  };
  const std::vector<Case> cases{{"1000 + 0.01 k", ramp, 5e-3},
                                {"1000 + N(0, 0.01)", offset_data({2, 3, 4, 5}, 1000.0f, 0.01f), 5e-3},
                                {"-777 + N(0, 0.1)", offset_data({2, 3, 4, 5}, -777.0f, 0.1f), 5e-3},
                                {"N(0, 1)", offset_data({2, 3, 4, 5}, 0.0f, 1.0f), 1e-5},
                                {"fp16 N(0, 300)", as(offset_data({2, 3, 4, 5}, 0.0f, 300.0f), DType::f16), 1e-3},
                                {"bf16 N(0, 300)", as(offset_data({2, 3, 4, 5}, 0.0f, 300.0f), DType::bf16), 8e-3}};
  for (const Case& c : cases) {
    // ONNX: axes [0, 2, 3] (per channel), y = (x - mean) / (sqrt(var) + 1e-9).
    const Shape& s = c.x.shape();
    const int64_t C = s[1], sp = s[2] * s[3];
    std::vector<double> want(static_cast<size_t>(c.x.numel()));
    for (int64_t ch = 0; ch < C; ++ch) {
      double sum = 0, sq = 0, cnt = 0;
      for (int64_t b = 0; b < s[0]; ++b)
        for (int64_t i = 0; i < sp; ++i) sum += c.x.get((b * C + ch) * sp + i), ++cnt;
      const double mean = sum / cnt;
      for (int64_t b = 0; b < s[0]; ++b)
        for (int64_t i = 0; i < sp; ++i) sq += (c.x.get((b * C + ch) * sp + i) - mean) * (c.x.get((b * C + ch) * sp + i) - mean);
      const double sd = std::sqrt(sq / cnt) + 1e-9;
      for (int64_t b = 0; b < s[0]; ++b)
        for (int64_t i = 0; i < sp; ++i) want[static_cast<size_t>((b * C + ch) * sp + i)] = (c.x.get((b * C + ch) * sp + i) - mean) / sd;
    }
    GraphBuilder gb("mvn", 13);
    gb.output(gb.op("MeanVarianceNormalization", {gb.input("x", c.x.dtype(), s)}));
    const Graph sg = specialize(gb.build(), {c.x});
    for (const std::string backend : {"ref", "cpu", "vulkan", "cuda"}) {
      if (!has_device(backend)) continue;
      const Tensor y = run_on_backend(backend, sg, {c.x}).at(0);
      ASSERT_EQ(y.shape(), s) << backend;
      ASSERT_EQ(y.dtype(), c.x.dtype()) << backend;
      int bad = 0;
      for (int64_t i = 0; i < y.numel(); ++i) {
        const double w = want[static_cast<size_t>(i)];
        if (!(std::abs(y.get(i) - w) <= c.tol * std::max(1.0, std::abs(w))) && bad++ < 3)
          ADD_FAILURE() << c.name << " on " << backend << " at " << i << ": " << y.get(i) << ", want " << w;
      }
    }
  }
}

// ReduceL2's sqrt and ReduceLogSum's log read a float32 sum on every backend (and in
// onnxruntime): past float32's range it is inf, on ref too (its double sum was finite:
// ||[1e30, 1e30]|| gave 1.41e30 on ref and inf on the GPUs). Within range nothing changes.
TEST(Numerics, NormsOfHugeValuesOverflowLikeTheirFloat32Sum) {
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor big = tensor_of({1, 2}, {1e30, -1e30}), bigsum = tensor_of({1, 2}, {3e38, 3e38});
  const Tensor inf1 = tensor_of({1}, {inf});
  auto reduce = [](const char* op) {
    return [op](GraphBuilder& b, const std::vector<int>& v) {
      return b.op(op, {v[0], b.constant("axes", ints_of({1}, {1}))}, {{"keepdims", int64_t{0}}});
    };
  };
  check_everywhere("ReduceL2 of [1e30, -1e30]", {big}, reduce("ReduceL2"), inf1);
  check_everywhere("ReduceLogSum of [3e38, 3e38]", {bigsum}, reduce("ReduceLogSum"), inf1);
  check_everywhere("ReduceL2 of [3, -4]", {tensor_of({1, 2}, {3, -4})}, reduce("ReduceL2"), tensor_of({1}, {5}));
}

}  // namespace
}  // namespace fusor
