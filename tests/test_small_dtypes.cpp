// The small ONNX dtypes (ir/small_dtypes.h): float8 e4m3fn/e4m3fnuz/e5m2/e5m2fnuz, float4e2m1,
// float8e8m0, int4/uint4/int2/uint2. Conversions are checked bit for bit (ties to even,
// saturation, NaN and signed zero per the ONNX Cast spec) against hand-derived encodings and
// against an independent nearest-value search over every encoding; the packed file layout by
// its bytes; Cast/QuantizeLinear/DequantizeLinear on ref, cpu and (where present) vulkan.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "ir/scalar.h"
#include "ir/small_dtypes.h"
#include "runtime/session.h"
#include "runtime/tensor_io.h"
#include "test_util.h"

namespace fusor {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const DType kFloat8[] = {DType::f8e4m3fn, DType::f8e4m3fnuz, DType::f8e5m2, DType::f8e5m2fnuz};

uint8_t enc(double v, DType t, bool saturate = true) { return small_float_encode(v, t, saturate); }

TEST(SmallDTypes, OnnxNumberingAndNames) {
  const std::pair<int, const char*> want[] = {{17, "float8e4m3fn"}, {18, "float8e4m3fnuz"}, {19, "float8e5m2"},
                                              {20, "float8e5m2fnuz"}, {21, "uint4"}, {22, "int4"}, {23, "float4e2m1"},
                                              {24, "float8e8m0"}, {25, "uint2"}, {26, "int2"}};
  for (auto [code, name] : want) {
    const DType t = dtype_from_onnx(code);
    EXPECT_STREQ(dtype_name(t), name);
    EXPECT_EQ(dtype_to_onnx(t), code);
    EXPECT_TRUE(dtype_is_small(t));
    EXPECT_EQ(dtype_size(t), 1u);
  }
  EXPECT_EQ(dtype_bits(DType::i4), 4);
  EXPECT_EQ(dtype_bits(DType::f4e2m1), 4);
  EXPECT_EQ(dtype_bits(DType::u2), 2);
  EXPECT_EQ(dtype_bits(DType::f8e5m2), 8);
  EXPECT_FALSE(dtype_is_small(DType::u8));
}

TEST(SmallDTypes, E4M3FNExactBits) {
  const DType t = DType::f8e4m3fn;
  EXPECT_EQ(enc(1.0, t), 0x38);
  EXPECT_EQ(enc(448.0, t), 0x7e);                    // largest finite
  EXPECT_EQ(enc(464.0, t), 0x7e);                    // tie between 448 and (absent) 480: to even
  EXPECT_EQ(enc(470.0, t, true), 0x7e);              // saturates
  EXPECT_EQ(enc(470.0, t, false), 0x7f);             // overflows to NaN
  EXPECT_EQ(enc(-470.0, t, false), 0xff);
  EXPECT_EQ(enc(kInf, t, true), 0x7e);
  EXPECT_EQ(enc(-kInf, t, true), 0xfe);
  EXPECT_EQ(enc(kInf, t, false), 0x7f);
  EXPECT_EQ(enc(kNaN, t), 0x7f);
  EXPECT_EQ(enc(-kNaN, t), 0xff);
  EXPECT_EQ(enc(-0.0, t), 0x80);                     // negative zero kept
  EXPECT_EQ(enc(1.0625, t), 0x38);                   // tie 1.0 | 1.125: even mantissa 000
  EXPECT_EQ(enc(1.1875, t), 0x3a);                   // tie 1.125 | 1.25: even mantissa 010
  EXPECT_EQ(enc(std::ldexp(1.0, -9), t), 0x01);      // smallest subnormal
  EXPECT_EQ(enc(std::ldexp(1.0, -10), t), 0x00);     // half of it: tie to even zero
  EXPECT_EQ(enc(std::ldexp(3.0, -11), t), 0x01);     // 0.75 of it
  EXPECT_EQ(enc(std::ldexp(3.0, -10), t), 0x02);     // 1.5 of it: tie to even 2
  EXPECT_EQ(enc(std::ldexp(15.0, -10), t), 0x08);    // 7.5 subnormal quanta round up into the first normal
  EXPECT_TRUE(std::isnan(small_float_decode(0x7f, t)));
  EXPECT_TRUE(std::isnan(small_float_decode(0xff, t)));
  EXPECT_EQ(small_float_decode(0x7e, t), 448.0);
  EXPECT_EQ(small_float_decode(0x01, t), std::ldexp(1.0, -9));
}

TEST(SmallDTypes, E4M3FNUZExactBits) {
  const DType t = DType::f8e4m3fnuz;
  EXPECT_EQ(enc(1.0, t), 0x40);  // bias 8
  EXPECT_EQ(enc(240.0, t), 0x7f);
  EXPECT_EQ(enc(-240.0, t), 0xff);
  EXPECT_EQ(enc(kInf, t, true), 0x7f);
  EXPECT_EQ(enc(kInf, t, false), 0x80);  // the one NaN
  EXPECT_EQ(enc(300.0, t, false), 0x80);
  EXPECT_EQ(enc(kNaN, t), 0x80);
  EXPECT_EQ(enc(-0.0, t), 0x00);                     // no negative zero
  EXPECT_EQ(enc(-std::ldexp(1.0, -12), t), 0x00);    // rounds to zero: +0
  EXPECT_EQ(enc(std::ldexp(1.0, -10), t), 0x01);     // smallest subnormal 2^-10
  EXPECT_TRUE(std::isnan(small_float_decode(0x80, t)));
  EXPECT_EQ(small_float_decode(0x00, t), 0.0);
}

TEST(SmallDTypes, E5M2ExactBits) {
  const DType t = DType::f8e5m2;
  EXPECT_EQ(enc(1.0, t), 0x3c);
  EXPECT_EQ(enc(57344.0, t), 0x7b);
  EXPECT_EQ(enc(61440.0, t, true), 0x7b);   // tie 57344 | 65536 goes to the even 65536: overflow, saturated
  EXPECT_EQ(enc(61440.0, t, false), 0x7c);  // ... or +inf
  EXPECT_EQ(enc(61439.0, t, false), 0x7b);  // below the tie: finite
  EXPECT_EQ(enc(kInf, t, true), 0x7b);
  EXPECT_EQ(enc(-kInf, t, false), 0xfc);
  EXPECT_EQ(enc(kNaN, t), 0x7e);
  EXPECT_EQ(enc(1.125, t), 0x3c);           // tie 1.0 | 1.25: even
  EXPECT_EQ(enc(1.375, t), 0x3e);           // tie 1.25 | 1.5: even 1.5
  EXPECT_EQ(small_float_decode(0x7c, t), kInf);
  EXPECT_TRUE(std::isnan(small_float_decode(0x7d, t)));
}

TEST(SmallDTypes, E5M2FNUZExactBits) {
  const DType t = DType::f8e5m2fnuz;
  EXPECT_EQ(enc(1.0, t), 0x40);  // bias 16
  EXPECT_EQ(enc(57344.0, t), 0x7f);
  EXPECT_EQ(enc(kInf, t, false), 0x80);
  EXPECT_EQ(enc(-kInf, t, true), 0xff);
  EXPECT_EQ(enc(-0.0, t), 0x00);
}

TEST(SmallDTypes, Float4E2M1ExactBits) {
  const DType t = DType::f4e2m1;
  const double values[] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (int c = 0; c < 8; ++c) {
    EXPECT_EQ(small_float_decode(static_cast<uint8_t>(c), t), values[c]);
    EXPECT_EQ(small_float_decode(static_cast<uint8_t>(c | 8), t), -values[c]);
  }
  EXPECT_EQ(enc(0.25, t), 0x0);   // tie 0 | 0.5: even
  EXPECT_EQ(enc(0.75, t), 0x2);   // tie 0.5 | 1: even (1.0)
  EXPECT_EQ(enc(2.5, t), 0x4);    // tie 2 | 3: even (2)
  EXPECT_EQ(enc(5.0, t), 0x6);    // tie 4 | 6: even (4)
  EXPECT_EQ(enc(-3.5, t), 0xe);   // tie 3 | 4: even (4), negative
  EXPECT_EQ(enc(100.0, t, false), 0x7);  // no inf/NaN: always saturates
  EXPECT_EQ(enc(-kInf, t), 0xf);
  EXPECT_EQ(enc(-0.0, t), 0x8);
  EXPECT_EQ(enc(kNaN, t), 0x8);   // what the ONNX reference writes
}

TEST(SmallDTypes, Float8E8M0Rounding) {
  const DType t = DType::f8e8m0;
  EXPECT_EQ(enc(1.0, t), 0x7f);
  EXPECT_EQ(small_float_encode(1.1, t, true, E8M0Round::up), 0x80);
  EXPECT_EQ(small_float_encode(1.1, t, true, E8M0Round::down), 0x7f);
  EXPECT_EQ(small_float_encode(1.1, t, true, E8M0Round::nearest), 0x7f);
  EXPECT_EQ(small_float_encode(1.5, t, true, E8M0Round::nearest), 0x80);  // ties round up
  EXPECT_EQ(small_float_encode(1.49, t, true, E8M0Round::nearest), 0x7f);
  EXPECT_EQ(enc(0.124, t), 0x7c);  // up to 0.125
  EXPECT_EQ(enc(-4.0, t), 0x81);   // magnitude
  EXPECT_EQ(enc(0.0, t), 0x00);
  EXPECT_EQ(enc(kNaN, t), 0xff);
  EXPECT_EQ(enc(std::ldexp(1.5, 127), t, true), 0xfe);
  EXPECT_EQ(enc(std::ldexp(1.5, 127), t, false), 0xff);
  EXPECT_EQ(small_float_decode(0x00, t), std::ldexp(1.0, -127));
  EXPECT_EQ(small_float_decode(0xfe, t), std::ldexp(1.0, 127));
  EXPECT_TRUE(std::isnan(small_float_decode(0xff, t)));
  EXPECT_THROW(e8m0_round_mode("sideways", "Cast_0"), Error);
}

// Every non-NaN encoding decodes and re-encodes to itself (FNUZ: except that 0x80 is NaN).
TEST(SmallDTypes, EveryEncodingRoundTrips) {
  for (DType t : {DType::f8e4m3fn, DType::f8e4m3fnuz, DType::f8e5m2, DType::f8e5m2fnuz, DType::f8e8m0, DType::f4e2m1}) {
    const int n = t == DType::f4e2m1 ? 16 : 256;
    for (int c = 0; c < n; ++c) {
      const double v = small_float_decode(static_cast<uint8_t>(c), t);
      if (std::isnan(v)) continue;
      EXPECT_EQ(enc(v, t, false), c) << dtype_name(t) << " code " << c << " value " << v;
    }
  }
}

// Random values against a brute-force search: the finite encoding nearest to x, ties to the
// one with an even code (an even mantissa), found without the encoder's binade arithmetic.
TEST(SmallDTypes, RandomValuesRoundToNearestEven) {
  std::mt19937_64 rng(13);
  for (DType t : {DType::f8e4m3fn, DType::f8e4m3fnuz, DType::f8e5m2, DType::f8e5m2fnuz, DType::f4e2m1}) {
    const int n = t == DType::f4e2m1 ? 16 : 256;
    const uint8_t sign = t == DType::f4e2m1 ? 0x8 : 0x80;
    double maxv = 0;
    for (int c = 0; c < n; ++c) {
      const double v = small_float_decode(static_cast<uint8_t>(c), t);
      if (std::isfinite(v)) maxv = std::max(maxv, v);
    }
    std::uniform_real_distribution<double> expo(-14.0, std::log2(maxv));
    for (int k = 0; k < 20000; ++k) {
      double x = std::exp2(expo(rng)) * ((rng() & 1) ? -1 : 1);
      if (k % 7 == 0) {  // exact midpoints between neighbouring encodings
        const int c = static_cast<int>(rng() % (sign - 1));
        const double a = small_float_decode(static_cast<uint8_t>(c), t), b = small_float_decode(static_cast<uint8_t>(c + 1), t);
        if (!std::isfinite(a) || !std::isfinite(b)) continue;
        x = (a + b) / 2;
      }
      if (std::fabs(x) > maxv) continue;
      int best = -1;
      double bd = kInf;
      for (int c = 0; c < n; ++c) {
        const double v = small_float_decode(static_cast<uint8_t>(c), t);
        // Same sign, except the FNUZ types' one zero, which rounds values of either sign.
        const bool fnuz_zero = v == 0 && (t == DType::f8e4m3fnuz || t == DType::f8e5m2fnuz);
        if (!std::isfinite(v) || (std::signbit(v) != std::signbit(x) && !fnuz_zero)) continue;
        const double d = std::fabs(v - x);
        if (d < bd || (d == bd && (c & 1) == 0)) best = c, bd = d;
      }
      uint8_t want = static_cast<uint8_t>(best);
      ASSERT_GE(best, 0);
      ASSERT_EQ(enc(x, t), want) << dtype_name(t) << " x=" << x;
    }
  }
}

TEST(SmallDTypes, SmallIntegersWrapOnCastAndSaturateOnSet) {
  // Cast float -> int4 truncates and wraps (the ONNX node suite's expected outputs).
  EXPECT_EQ(scalar_convert(HostScalar{-9.0}, DType::f32, DType::i4).i, 7);
  EXPECT_EQ(scalar_convert(HostScalar{15.7}, DType::f32, DType::i4).i, -1);
  EXPECT_EQ(scalar_convert(HostScalar{-3.0}, DType::f32, DType::u2).i, 1);
  auto held = [](int64_t v) {
    HostScalar h;
    h.i = v;
    return h;
  };
  EXPECT_EQ(scalar_convert(held(200), DType::i32, DType::u4).i, 8);
  EXPECT_EQ(scalar_convert(held(-1), DType::i32, DType::u2).i, 3);
  EXPECT_EQ(scalar_convert(held(7), DType::i4, DType::i8).i, 7);
  EXPECT_EQ(scalar_convert(held(-8), DType::i4, DType::f32).f, -8.0);
  EXPECT_EQ(wrap_small_int(2, DType::i2), -2);
  Tensor t(DType::i4, {3});
  t.set(0, -100), t.set(1, 100), t.set(2, -3);
  EXPECT_EQ(t.get_int(0), -8);
  EXPECT_EQ(t.get_int(1), 7);
  EXPECT_EQ(t.get_int(2), -3);
}

TEST(SmallDTypes, PackedLayoutFirstElementInLowBits) {
  Tensor a = testing::ints_of({5}, {-8, 7, -1, 0, 3}, DType::i4);
  const std::string p = pack_small(a);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(static_cast<uint8_t>(p[0]), 0x78);
  EXPECT_EQ(static_cast<uint8_t>(p[1]), 0x0f);
  EXPECT_EQ(static_cast<uint8_t>(p[2]), 0x03);  // padding nibble is zero
  Tensor b = unpack_small(DType::i4, {5}, p);
  EXPECT_EQ(0, std::memcmp(a.raw(), b.raw(), 5));
  Tensor u = testing::ints_of({7}, {1, 2, 3, 0, 1, 2, 3}, DType::u2);
  const std::string q = pack_small(u);
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(static_cast<uint8_t>(q[0]), 0x39);
  EXPECT_EQ(static_cast<uint8_t>(q[1]), 0x39);
  EXPECT_THROW(unpack_small(DType::u2, {9}, q), Error);
}

TEST(SmallDTypes, PbFilesRoundTripPacked) {
  const auto dir = std::filesystem::temp_directory_path() / "fusor_small_dtypes";
  std::filesystem::create_directories(dir);
  for (DType t : {DType::i4, DType::u4, DType::i2, DType::u2, DType::f4e2m1, DType::f8e4m3fn, DType::f8e8m0}) {
    Tensor x(t, {3, 3});
    for (int64_t i = 0; i < 9; ++i) x.set(i, static_cast<double>((i * 5) % 7) - 2.0);
    const std::string path = (dir / (std::string(dtype_name(t)) + ".pb")).string();
    write_tensor_pb(path, x, "x");
    EXPECT_EQ(std::filesystem::file_size(path) > 0, true);
    Tensor y = read_tensor(path);
    ASSERT_EQ(y.dtype(), t);
    ASSERT_EQ(y.shape(), x.shape());
    EXPECT_EQ(0, std::memcmp(x.raw(), y.raw(), 9)) << dtype_name(t);
  }
  std::filesystem::remove_all(dir);
}

TEST(SmallDTypes, CompareIsBitExact) {
  Tensor a(DType::f8e4m3fn, {3}), b(DType::f8e4m3fn, {3});
  a.data<uint8_t>()[0] = b.data<uint8_t>()[0] = 0x38;
  a.data<uint8_t>()[1] = 0x7f, b.data<uint8_t>()[1] = 0xff;  // NaN meets NaN
  a.data<uint8_t>()[2] = 0x39, b.data<uint8_t>()[2] = 0x38;  // one ulp apart: a failure whatever the tolerance
  CompareResult r = compare_tensors(a, b, 1.0, 1.0);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 1);
  a.data<uint8_t>()[2] = 0x38;
  EXPECT_TRUE(compare_tensors(a, b, -1, -1).ok);
}

bool has_device(const std::string& name) {
  auto names = backend_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) return false;
  return !make_backend(name)->devices().empty();
}

// Cast with saturate=0, QuantizeLinear to int4 and DequantizeLinear back, on every backend:
// the same bytes everywhere (the GPUs run these nodes on the host).
TEST(SmallDTypes, CastAndQuantizeOnEveryBackend) {
  const std::vector<double> xs = {448, 500, kInf, -kInf, kNaN, 1.0625, -0.0, 3.3, -7.6, 0.01};
  Tensor x = testing::tensor_of({10}, xs);
  GraphBuilder b("small", 21);
  const int in = b.input("x", DType::f32, {10});
  const int twice = b.op("Mul", {in, b.constant("two", testing::tensor_of({}, {2.0}))});
  b.output(b.op("Cast", {in}, {{"to", int64_t{17}}, {"saturate", int64_t{0}}}));
  b.output(b.op("Cast", {twice}, {{"to", int64_t{19}}}));
  const int q = b.op("QuantizeLinear", {in, b.constant("s", testing::tensor_of({}, {0.5})), b.constant("z", testing::ints_of({}, {1}, DType::i4))});
  b.output(q);
  b.output(b.op("DequantizeLinear", {q, b.constant("s2", testing::tensor_of({}, {0.5})), b.constant("z2", testing::ints_of({}, {1}, DType::i4))}));
  Graph g = b.build();
  // Hand-derived: E4M3FN without saturation (3.3 -> 3.25, 0.01 -> subnormal 5 * 2^-9); E5M2 of
  // 2x, saturating (896 -> 0x63, 1000 -> 1024); int4 = clamp(rne(x / 0.5) + 1, -8, 7).
  const uint8_t want_e4[] = {0x7e, 0x7f, 0x7f, 0xff, 0x7f, 0x38, 0x80, 0x45, 0xcf, 0x05};
  const uint8_t want_e5[] = {0x63, 0x64, 0x7b, 0xfb, 0x7e, 0x40, 0x80, 0x47, 0xcc, 0x25};
  const int64_t want_q[] = {7, 7, 7, -8, 0, 3, 1, 7, -8, 1};  // NaN quantizes to 0
  for (const std::string backend : {"ref", "cpu", "vulkan"}) {
    if (backend == "vulkan" && !has_device("vulkan")) continue;
    SCOPED_TRACE(backend);
    Session s(g, backend);
    auto out = s.run({x});
    ASSERT_EQ(out.size(), 4u);
    ASSERT_EQ(out[0].dtype(), DType::f8e4m3fn);
    ASSERT_EQ(out[1].dtype(), DType::f8e5m2);
    ASSERT_EQ(out[2].dtype(), DType::i4);
    for (int i = 0; i < 10; ++i) {
      EXPECT_EQ(out[0].data<uint8_t>()[i], want_e4[i]) << "e4m3fn element " << i;
      EXPECT_EQ(out[1].data<uint8_t>()[i], want_e5[i]) << "e5m2 element " << i;
      EXPECT_EQ(out[2].get_int(i), want_q[i]) << "int4 element " << i;
      EXPECT_EQ(out[3].get(i), (want_q[i] - 1) * 0.5) << "dequantized element " << i;
    }
  }
}

}  // namespace
}  // namespace fusor
