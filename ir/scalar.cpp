#include "ir/scalar.h"

#include "ir/half.h"
#include "ir/small_dtypes.h"

#include <cfenv>
#include <cmath>
#include <cstring>
#include <limits>

namespace fusor {

namespace {

// float -> integer: truncate toward zero, saturate at the dtype's range, NaN -> 0.
int64_t float_to_int(double v, DType t) {
  if (std::isnan(v)) return 0;
  // int4/uint4/int2/uint2: truncate, then wrap (what the ONNX reference, through ml_dtypes, writes).
  if (dtype_is_small(t)) return wrap_small_int(float_to_int(v, DType::i64), t);
  v = std::trunc(v);
  if (t == DType::u64) {
    if (v <= 0) return 0;
    if (v >= 18446744073709551616.0) return static_cast<int64_t>(~uint64_t{0});
    return static_cast<int64_t>(static_cast<uint64_t>(v));
  }
  double lo, hi;
  switch (t) {
    case DType::i8: lo = -128, hi = 127; break;
    case DType::u8: lo = 0, hi = 255; break;
    case DType::i16: lo = -32768, hi = 32767; break;
    case DType::u16: lo = 0, hi = 65535; break;
    case DType::i32: lo = -2147483648.0, hi = 2147483647.0; break;
    case DType::u32: lo = 0, hi = 4294967295.0; break;
    default:  // i64
      if (v < -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
      if (v >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
      return static_cast<int64_t>(v);
  }
  return static_cast<int64_t>(v < lo ? lo : v > hi ? hi : v);
}

}  // namespace

// ir/half.h holds the one implementation (exhaustively tested in tests/test_half.cpp).
uint16_t float_to_half_bits(double v) { return f64_to_f16_rne(v); }
double half_bits_to_float(uint16_t h) { return f16_to_f32(h); }
uint16_t float_to_bf16_bits(double v) { return f64_to_bf16_rne(v); }
double bf16_bits_to_float(uint16_t h) { return bf16_to_f32(h); }

double round_float(double v, DType t) {
  switch (t) {
    case DType::f32: return static_cast<double>(static_cast<float>(v));
    case DType::f16: return half_bits_to_float(float_to_half_bits(v));
    case DType::bf16: return bf16_bits_to_float(float_to_bf16_bits(v));
    default:
      if (dtype_is_small_float(t)) return small_float_decode(small_float_encode(v, t), t);
      return v;
  }
}

int64_t wrap_int(int64_t v, DType t) {
  switch (t) {
    case DType::i8: return static_cast<int8_t>(v);
    case DType::u8: return static_cast<uint8_t>(v);
    case DType::i16: return static_cast<int16_t>(v);
    case DType::u16: return static_cast<uint16_t>(v);
    case DType::i32: return static_cast<int32_t>(v);
    case DType::u32: return static_cast<uint32_t>(v);
    case DType::boolean: return v != 0;
    case DType::u4: case DType::i4: case DType::u2: case DType::i2: return wrap_small_int(v, t);
    default: return v;
  }
}

double scalar_to_double(HostScalar v, DType t) {
  if (!dtype_is_integral(t)) return v.f;
  if (t == DType::u64) return static_cast<double>(static_cast<uint64_t>(v.i));
  return static_cast<double>(v.i);
}

namespace {
// An integer as a double rounded to odd (exact below 2^53): dropped low bits set the last kept
// one. Rounding that to a float type of at most 51 bits gives the integer rounded once; going
// through the double nearest it rounds twice (int64 2^60 + 2^36 + 1 to fp32 was one ulp low).
double int_to_double_odd(HostScalar v, DType t) {
  const bool neg = t != DType::u64 && v.i < 0;
  const uint64_t m = t == DType::u64 || !neg ? static_cast<uint64_t>(v.i) : uint64_t{0} - static_cast<uint64_t>(v.i);
  int shift = 0;
  while ((m >> shift) >= (uint64_t{1} << 53)) ++shift;
  uint64_t top = m >> shift;
  if (shift > 0 && (m & ((uint64_t{1} << shift) - 1)) != 0) top |= 1;
  const double d = std::ldexp(static_cast<double>(top), shift);
  return neg ? -d : d;
}
}  // namespace

HostScalar scalar_convert_cast(HostScalar v, DType from, DType to, bool saturate, E8M0Round mode) {
  if (!dtype_is_small_float(to) || (saturate && mode == E8M0Round::up)) return scalar_convert(v, from, to);
  HostScalar r;
  r.f = small_float_decode(small_float_encode(scalar_to_double(v, from), to, saturate, mode), to);
  return r;
}

HostScalar scalar_convert(HostScalar v, DType from, DType to) {
  HostScalar r;
  if (dtype_is_integral(to)) {
    if (dtype_is_integral(from)) r.i = wrap_int(v.i, to);  // held values are canonical: wrap zero-/sign-extends right
    else r.i = to == DType::boolean ? (v.f != 0.0 || std::isnan(v.f)) : float_to_int(v.f, to);
  } else if (dtype_is_integral(from) && to != DType::f64) {
    r.f = round_float(int_to_double_odd(v, from), to);  // rounded once (int_to_double_odd)
  } else {
    r.f = round_float(scalar_to_double(v, from), to);
  }
  return r;
}

HostScalar scalar_load(DType t, const void* base, int64_t i) {
  const auto* p = static_cast<const unsigned char*>(base) + i * static_cast<int64_t>(dtype_size(t));
  HostScalar r;
  auto rd = [&](auto x) { std::memcpy(&x, p, sizeof x); return x; };
  switch (t) {
    case DType::f32: r.f = rd(float{}); break;
    case DType::f64: r.f = rd(double{}); break;
    case DType::f16: r.f = half_bits_to_float(rd(uint16_t{})); break;
    case DType::bf16: r.f = bf16_bits_to_float(rd(uint16_t{})); break;
    case DType::i8: r.i = rd(int8_t{}); break;
    case DType::u8: r.i = rd(uint8_t{}); break;
    case DType::boolean: r.i = rd(uint8_t{}) != 0; break;
    case DType::i16: r.i = rd(int16_t{}); break;
    case DType::u16: r.i = rd(uint16_t{}); break;
    case DType::i32: r.i = rd(int32_t{}); break;
    case DType::u32: r.i = rd(uint32_t{}); break;
    case DType::i64:
    case DType::u64: r.i = rd(int64_t{}); break;
    case DType::i4: case DType::i2: r.i = rd(int8_t{}); break;   // held sign-extended (ir/small_dtypes.h)
    case DType::u4: case DType::u2: r.i = rd(uint8_t{}); break;
    default:
      if (dtype_is_small_float(t)) {
        r.f = small_float_decode(rd(uint8_t{}), t);
        break;
      }
      throw Error("tensor", std::string("no numeric value for dtype ") + dtype_name(t));
  }
  return r;
}

void scalar_store(DType t, void* base, int64_t i, HostScalar v) {
  auto* p = static_cast<unsigned char*>(base) + i * static_cast<int64_t>(dtype_size(t));
  auto wr = [&](auto x) { std::memcpy(p, &x, sizeof x); };
  switch (t) {
    case DType::f32: wr(static_cast<float>(v.f)); break;
    case DType::f64: wr(v.f); break;
    case DType::f16: wr(float_to_half_bits(v.f)); break;
    case DType::bf16: wr(float_to_bf16_bits(v.f)); break;
    case DType::i8: wr(static_cast<int8_t>(v.i)); break;
    case DType::u8: wr(static_cast<uint8_t>(v.i)); break;
    case DType::boolean: wr(static_cast<uint8_t>(v.i != 0)); break;
    case DType::i16: wr(static_cast<int16_t>(v.i)); break;
    case DType::u16: wr(static_cast<uint16_t>(v.i)); break;
    case DType::i32: wr(static_cast<int32_t>(v.i)); break;
    case DType::u32: wr(static_cast<uint32_t>(v.i)); break;
    case DType::i64:
    case DType::u64: wr(v.i); break;
    case DType::i4: case DType::i2: case DType::u4: case DType::u2: wr(static_cast<uint8_t>(wrap_small_int(v.i, t))); break;
    default:
      // v is already a value of t (or its NaN, or E5M2's inf): encoding it is exact, with no
      // saturation (Cast saturate=0 leaves an inf here). NaN keeps its sign (E4M3FN/E5M2).
      if (dtype_is_small_float(t)) {
        wr(small_float_encode(v.f, t, false));
        break;
      }
      throw Error("tensor", std::string("no numeric value for dtype ") + dtype_name(t));
  }
}

}  // namespace fusor
