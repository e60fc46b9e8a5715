// fp16/bf16 host conversions (ir/half.h): exhaustive round trips, every halfway case between
// adjacent values, and random floats/doubles against an independent reference (the exact
// value of each candidate compared in long double, plus GCC's _Float16 where it exists).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "ir/half.h"
#include "ir/tensor.h"

namespace fusor {
namespace {

bool f16_is_nan(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0; }
bool bf16_is_nan(uint16_t b) { return (b & 0x7f80) == 0x7f80 && (b & 0x7f) != 0; }

// The exact value of a finite fp16 encoding, computed without ir/half.h.
double f16_value(uint16_t h) {
  int e = (h >> 10) & 0x1f, f = h & 0x3ff;
  double v = e ? std::ldexp(1024 + f, e - 25) : std::ldexp(f, -24);
  return (h & 0x8000) ? -v : v;
}

// Reference rounding of x (finite) to the encodings `lo`/`hi` bracketing it: nearest, ties to
// the even encoding. Distances are exact in long double for every case used here.
template <class Value>
uint16_t nearest(long double x, uint16_t lo, uint16_t hi, Value value) {
  long double dl = std::fabs(x - static_cast<long double>(value(lo)));
  long double dh = std::fabs(static_cast<long double>(value(hi)) - x);
  if (dl < dh) return lo;
  if (dh < dl) return hi;
  return (lo & 1) ? hi : lo;
}

TEST(Half, AllF16RoundTripExactly) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    uint16_t b = static_cast<uint16_t>(h);
    float f = f16_to_f32(b);
    if (f16_is_nan(b)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << h;
      ASSERT_TRUE(f16_is_nan(f32_to_f16_rne(f))) << std::hex << h;
      ASSERT_TRUE(f16_is_nan(f64_to_f16_rne(f))) << std::hex << h;
      continue;
    }
    if ((b & 0x7c00) != 0x7c00) ASSERT_EQ(static_cast<double>(f), f16_value(b)) << std::hex << h;
    ASSERT_EQ(f32_to_f16_rne(f), b) << std::hex << h;
    ASSERT_EQ(f64_to_f16_rne(f), b) << std::hex << h;
  }
}

TEST(Half, AllBf16RoundTripExactly) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    uint16_t b = static_cast<uint16_t>(h);
    float f = bf16_to_f32(b);
    if (bf16_is_nan(b)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      ASSERT_TRUE(bf16_is_nan(f32_to_bf16_rne(f))) << std::hex << h;
      ASSERT_TRUE(bf16_is_nan(f64_to_bf16_rne(f))) << std::hex << h;
      continue;
    }
    ASSERT_EQ(f32_to_bf16_rne(f), b) << std::hex << h;
    ASSERT_EQ(f64_to_bf16_rne(f), b) << std::hex << h;
  }
}

// Every pair of adjacent non-negative fp16 values (subnormals, normals, 65504 -> inf): the
// midpoint goes to the even one, the next float/double either side to the nearer one.
TEST(Half, F16HalfwayCasesRoundToEven) {
  for (uint16_t lo = 0; lo < 0x7c00; ++lo) {
    const uint16_t hi = lo + 1;
    // Above 65504 the next step is "65536" (inf): the midpoint 65520 overflows (0x7bff is odd).
    const double vl = f16_value(lo), vh = hi == 0x7c00 ? 65536.0 : f16_value(hi);
    const double mid = (vl + vh) / 2;  // exact in float too: 12 significant bits
    const uint16_t even = (lo & 1) ? hi : lo;
    ASSERT_EQ(f32_to_f16_rne(static_cast<float>(mid)), even) << "lo " << std::hex << lo;
    ASSERT_EQ(f64_to_f16_rne(mid), even) << "lo " << std::hex << lo;
    ASSERT_EQ(f32_to_f16_rne(-static_cast<float>(mid)), even | 0x8000) << "lo " << std::hex << lo;
    ASSERT_EQ(f32_to_f16_rne(std::nextafter(static_cast<float>(mid), 0.0f)), lo) << std::hex << lo;
    ASSERT_EQ(f32_to_f16_rne(std::nextafter(static_cast<float>(mid), INFINITY)), hi) << std::hex << lo;
    // Just past the midpoint in double but on it in float: one rounding, not two.
    ASSERT_EQ(f64_to_f16_rne(std::nextafter(mid, 0.0)), lo) << std::hex << lo;
    ASSERT_EQ(f64_to_f16_rne(std::nextafter(mid, INFINITY)), hi) << std::hex << lo;
  }
}

TEST(Half, Bf16HalfwayCasesRoundToEven) {
  for (uint16_t lo = 0; lo < 0x7f80; ++lo) {
    const uint16_t hi = lo + 1;
    const double vl = bf16_to_f32(lo), vh = hi == 0x7f80 ? std::ldexp(1.0, 128) : bf16_to_f32(hi);
    const double mid = (vl + vh) / 2;
    const uint16_t even = (lo & 1) ? hi : lo;
    ASSERT_EQ(f64_to_bf16_rne(mid), even) << std::hex << lo;
    ASSERT_EQ(f64_to_bf16_rne(-mid), even | 0x8000) << std::hex << lo;
    ASSERT_EQ(f64_to_bf16_rne(std::nextafter(mid, 0.0)), lo) << std::hex << lo;
    ASSERT_EQ(f64_to_bf16_rne(std::nextafter(mid, INFINITY)), hi) << std::hex << lo;
    if (hi != 0x7f80) {  // the midpoint needs 9 significant bits: a float holds it
      ASSERT_EQ(f32_to_bf16_rne(static_cast<float>(mid)), even) << std::hex << lo;
      ASSERT_EQ(f32_to_bf16_rne(std::nextafter(static_cast<float>(mid), 0.0f)), lo) << std::hex << lo;
      ASSERT_EQ(f32_to_bf16_rne(std::nextafter(static_cast<float>(mid), INFINITY)), hi) << std::hex << lo;
    }
  }
}

// Random float bit patterns (every exponent) against the bracketing reference.
TEST(Half, RandomFloatsMatchTheReference) {
  std::mt19937 rng(7);
  for (int i = 0; i < 1000000; ++i) {
    const float f = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    if (std::isnan(f)) {
      ASSERT_TRUE(f16_is_nan(f32_to_f16_rne(f)));
      ASSERT_TRUE(bf16_is_nan(f32_to_bf16_rne(f)));
      continue;
    }
    const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
    const float a = std::fabs(f);
    // fp16: the largest encoding <= a, then nearest of it and the next.
    uint16_t lo = 0;
    if (a >= 65536.0f) {
      lo = 0x7c00;
    } else {
      for (int step = 0x4000; step; step >>= 1)
        if (lo + step < 0x7c00 && f16_value(static_cast<uint16_t>(lo + step)) <= a) lo += step;
    }
    uint16_t want = lo == 0x7c00 ? 0x7c00
                  : lo == 0x7bff ? (a < 65520.0f ? lo : 0x7c00)
                                 : nearest(a, lo, lo + 1, f16_value);
    ASSERT_EQ(f32_to_f16_rne(f), want | sign) << f;
#ifdef __FLT16_MAX__
    ASSERT_EQ(std::bit_cast<uint16_t>(static_cast<_Float16>(f)), want | sign) << f;
#endif
    // bf16: truncation and the next encoding up.
    const uint16_t tb = static_cast<uint16_t>(std::bit_cast<uint32_t>(a) >> 16);
    const uint16_t wb = tb >= 0x7f80 ? tb
                      : nearest(a, tb, tb + 1, [](uint16_t b) {
                          return b == 0x7f80 ? std::ldexp(1.0L, 128) : static_cast<long double>(bf16_to_f32(b));
                        });
    ASSERT_EQ(f32_to_bf16_rne(f), static_cast<uint16_t>(wb | sign)) << f;
  }
}

#ifdef __FLT16_MAX__
// Random doubles near the fp16 range against GCC's soft-float double -> _Float16 (one rounding).
TEST(Half, RandomDoublesMatchFloat16) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> ex(-30, 17);
  for (int i = 0; i < 1000000; ++i) {
    const double d = std::ldexp(std::bit_cast<double>((rng() & 0x800fffffffffffffull) | 0x3ff0000000000000ull), ex(rng));
    ASSERT_EQ(f64_to_f16_rne(d), std::bit_cast<uint16_t>(static_cast<_Float16>(d))) << d;
  }
}
#endif

TEST(Half, SpecialValues) {
  EXPECT_EQ(f32_to_f16_rne(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // the tie in issue 10
  EXPECT_EQ(f32_to_f16_rne(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(f32_to_f16_rne(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_f16_rne(INFINITY), 0x7c00);
  EXPECT_EQ(f32_to_f16_rne(-INFINITY), 0xfc00);
  EXPECT_EQ(f32_to_f16_rne(65519.99f), 0x7bff);
  EXPECT_EQ(f32_to_f16_rne(65520.0f), 0x7c00);
  EXPECT_EQ(f32_to_f16_rne(1e10f), 0x7c00);
  EXPECT_EQ(f32_to_f16_rne(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(f32_to_f16_rne(std::ldexp(1.0f, -25)), 0x0000);  // half of it: ties to 0
  EXPECT_EQ(f32_to_f16_rne(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(f32_to_f16_rne(std::ldexp(1.0f, -149)), 0x0000);  // a float denormal
  EXPECT_EQ(f64_to_f16_rne(1e-300), 0x0000);
  EXPECT_EQ(f64_to_f16_rne(-1e300), 0xfc00);
  EXPECT_EQ(f32_to_bf16_rne(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(f32_to_bf16_rne(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(f32_to_bf16_rne(std::ldexp(1.0f, -149)), 0x0000);  // bf16 denormals start at 2^-133
  EXPECT_EQ(f64_to_bf16_rne(std::ldexp(1.0, -133)), 0x0001);
  EXPECT_EQ(f32_to_bf16_rne(-std::numeric_limits<float>::quiet_NaN()) & 0x8000, 0x8000);
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_to_f32(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(f16_to_f32(0x7bff), 65504.0f);
}

// Tensor::set/get go through the same conversions (one rounding from double).
TEST(Half, TensorSetRoundsToNearestEven) {
  Tensor h(DType::f16, {3}), b(DType::bf16, {2});
  h.set(0, 1.0 + std::ldexp(1.0, -11));
  h.set(1, std::nextafter(1.0 + std::ldexp(1.0, -11), 2.0));  // float(v) is the tie: rounding twice gives 0x3c00
  h.set(2, 70000.0);
  EXPECT_EQ(h.data<uint16_t>()[0], 0x3c00);
  EXPECT_EQ(h.data<uint16_t>()[1], 0x3c01);
  EXPECT_EQ(h.data<uint16_t>()[2], 0x7c00);
  EXPECT_EQ(h.get(0), 1.0);
  b.set(0, 1.0 + std::ldexp(1.0, -8));
  b.set(1, std::nextafter(1.0 + std::ldexp(1.0, -8), 2.0));
  EXPECT_EQ(b.data<uint16_t>()[0], 0x3f80);
  EXPECT_EQ(b.data<uint16_t>()[1], 0x3f81);
}

}  // namespace
}  // namespace fusor
