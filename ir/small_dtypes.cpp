#include "ir/small_dtypes.h"

#include <cmath>
#include <limits>

namespace fusor {

namespace {

// Layout of a small float: mantissa bits, exponent bias, sign bit, largest finite magnitude code.
struct Fmt {
  int m;
  int bias;
  uint8_t sign;
  uint8_t max_code;
  bool fnuz;     // NaN is 0x80, no negative zero, no infinity
  bool has_inf;  // E5M2: exponent all ones is inf / NaN (IEEE)
};

Fmt fmt(DType t) {
  switch (t) {
    case DType::f8e4m3fn: return {3, 7, 0x80, 0x7e, false, false};
    case DType::f8e4m3fnuz: return {3, 8, 0x80, 0x7f, true, false};
    case DType::f8e5m2: return {2, 15, 0x80, 0x7b, false, true};
    case DType::f8e5m2fnuz: return {2, 16, 0x80, 0x7f, true, false};
    default: return {1, 1, 0x08, 0x07, false, false};  // f4e2m1
  }
}

double magnitude(const Fmt& f, uint8_t mag) {
  const int e = mag >> f.m, m = mag & ((1 << f.m) - 1);
  return e == 0 ? std::ldexp(m, 1 - f.bias - f.m) : std::ldexp((1 << f.m) + m, e - f.bias - f.m);
}

uint8_t nan_code(DType t, uint8_t sign) {
  switch (t) {
    case DType::f8e4m3fn: return sign | 0x7f;
    case DType::f8e5m2: return sign | 0x7e;
    case DType::f4e2m1: return 0x08;
    default: return 0x80;  // FNUZ
  }
}

uint8_t e8m0_encode(double v, bool saturate, E8M0Round mode) {
  if (std::isnan(v)) return 0xff;
  const double a = std::fabs(v);
  const uint8_t overflow = saturate ? 0xfe : 0xff;
  if (std::isinf(a)) return overflow;
  // Below the smallest power (0 included): the smallest when saturating, else NaN (the Cast
  // spec's E8M0 table).
  if (a < std::ldexp(1.0, -127)) return saturate ? 0x00 : 0xff;
  int exp;
  const double frac = std::frexp(a, &exp);  // a = frac * 2^exp, frac in [0.5, 1)
  int64_t k = exp - 1;                      // floor(log2 a)
  const bool exact = frac == 0.5;
  if (!exact && (mode == E8M0Round::up || (mode == E8M0Round::nearest && frac >= 0.75))) ++k;
  const int64_t code = k + 127;
  if (code < 0) return 0x00;
  if (code > 254) return overflow;
  return static_cast<uint8_t>(code);
}

}  // namespace

E8M0Round e8m0_round_mode(const std::string& s, const std::string& label) {
  if (s == "up") return E8M0Round::up;
  if (s == "down") return E8M0Round::down;
  if (s == "nearest") return E8M0Round::nearest;
  throw Error("shape", label + ": round_mode must be 'up', 'down' or 'nearest', got '" + printable(s) + "'");
}

bool dtype_is_small_float(DType t) {
  switch (t) {
    case DType::f8e4m3fn: case DType::f8e4m3fnuz: case DType::f8e5m2: case DType::f8e5m2fnuz:
    case DType::f4e2m1: case DType::f8e8m0: return true;
    default: return false;
  }
}

double small_float_decode(uint8_t b, DType t) {
  if (t == DType::f8e8m0) return b == 0xff ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, b - 127);
  const Fmt f = fmt(t);
  if (f.fnuz && b == 0x80) return std::numeric_limits<double>::quiet_NaN();
  const uint8_t mag = b & (f.sign - 1);
  const bool neg = (b & f.sign) != 0;
  // NaN keeps its sign, so that encoding the decoded value gives the same byte back.
  const double nan = std::copysign(std::numeric_limits<double>::quiet_NaN(), neg ? -1.0 : 1.0);
  if (t == DType::f8e4m3fn && mag == 0x7f) return nan;
  if (f.has_inf && (mag >> f.m) == 31) {
    if ((mag & 3) != 0) return nan;
    return neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  const double v = magnitude(f, mag);
  return neg ? -v : v;
}

uint8_t small_float_encode(double v, DType t, bool saturate, E8M0Round mode) {
  if (t == DType::f8e8m0) return e8m0_encode(v, saturate, mode);
  const Fmt f = fmt(t);
  const uint8_t sign = std::signbit(v) ? f.sign : 0;
  if (std::isnan(v)) return nan_code(t, sign);
  if (t == DType::f4e2m1) saturate = true;  // no inf, no NaN to overflow to
  const double a = std::fabs(v), maxv = magnitude(f, f.max_code);
  auto overflow = [&]() -> uint8_t {
    if (saturate) return sign | f.max_code;
    return f.has_inf ? static_cast<uint8_t>(sign | 0x7c) : nan_code(t, sign);
  };
  if (std::isinf(a)) return overflow();
  auto zero = [&]() -> uint8_t { return f.fnuz ? 0 : sign; };
  if (a == 0) return zero();
  // Round a to a multiple of the format's quantum at its binade (fixed below the normal range).
  const int emin = 1 - f.bias;
  const int top = std::ilogb(a);
  const int q = std::max(top, emin) - f.m;
  const double r = std::ldexp(a, -q);  // exact: a power-of-two scaling
  double n = std::floor(r);
  const double rem = r - n;            // exact while r < 2^53, which holds for every finite a here
  if (rem > 0.5 || (rem == 0.5 && std::fmod(n, 2.0) != 0)) n += 1;
  if (n == 0) return zero();
  const double mv = std::ldexp(n, q);
  if (mv > maxv) return overflow();
  uint8_t code;
  if (n < (1 << f.m) && top < emin) {
    code = static_cast<uint8_t>(n);  // subnormal: the mantissa is the encoding
  } else {
    const int e = std::ilogb(mv);
    code = static_cast<uint8_t>(((e + f.bias) << f.m) | (static_cast<int>(std::ldexp(mv, f.m - e)) - (1 << f.m)));
  }
  return sign | code;
}

int64_t wrap_small_int(int64_t v, DType t) {
  switch (t) {
    case DType::u4: return v & 0xf;
    case DType::i4: return ((v & 0xf) ^ 0x8) - 0x8;
    case DType::u2: return v & 0x3;
    case DType::i2: return ((v & 0x3) ^ 0x2) - 0x2;
    default: return v;
  }
}

void small_int_range(DType t, int64_t* lo, int64_t* hi) {
  switch (t) {
    case DType::u4: *lo = 0, *hi = 15; break;
    case DType::i4: *lo = -8, *hi = 7; break;
    case DType::u2: *lo = 0, *hi = 3; break;
    default: *lo = -2, *hi = 1; break;  // i2
  }
}

void quant_int_range(DType t, double* lo, double* hi) {
  switch (t) {
    case DType::i8: *lo = -128, *hi = 127; return;
    case DType::u16: *lo = 0, *hi = 65535; return;
    case DType::i16: *lo = -32768, *hi = 32767; return;
    case DType::i32: *lo = -2147483648.0, *hi = 2147483647.0; return;
    case DType::i4: case DType::u4: case DType::i2: case DType::u2: {
      int64_t l, h;
      small_int_range(t, &l, &h);
      *lo = static_cast<double>(l), *hi = static_cast<double>(h);
      return;
    }
    default: *lo = 0, *hi = 255; return;  // u8
  }
}

uint64_t packed_bytes(DType t, int64_t n) {
  const int bits = dtype_bits(t);
  if (bits >= 8) return static_cast<uint64_t>(n) * dtype_size(t);
  return (static_cast<uint64_t>(n) * bits + 7) / 8;
}

std::string pack_small(const Tensor& t) {
  const int bits = dtype_bits(t.dtype());
  const int64_t n = t.numel();
  std::string out(packed_bytes(t.dtype(), n), '\0');
  const uint8_t* src = t.data<uint8_t>();
  const unsigned mask = (1u << bits) - 1;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t bit = i * bits;
    out[static_cast<size_t>(bit / 8)] = static_cast<char>(static_cast<uint8_t>(out[static_cast<size_t>(bit / 8)]) |
                                                          ((src[i] & mask) << (bit % 8)));
  }
  return out;
}

Tensor unpack_small(DType t, Shape shape, const std::string& bytes) {
  const int bits = dtype_bits(t);
  Tensor out(t, std::move(shape));
  const int64_t n = out.numel();
  if (bytes.size() != packed_bytes(t, n))
    throw Error("tensor", std::to_string(bytes.size()) + " bytes for a packed " + dtype_name(t) + " tensor of shape " +
                              shape_str(out.shape()) + ", which needs " + std::to_string(packed_bytes(t, n)));
  uint8_t* dst = out.data<uint8_t>();
  const unsigned mask = (1u << bits) - 1;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t bit = i * bits;
    const unsigned v = (static_cast<uint8_t>(bytes[static_cast<size_t>(bit / 8)]) >> (bit % 8)) & mask;
    // Signed types are held sign-extended (ir/small_dtypes.h); the float4 code stays as it is.
    dst[i] = static_cast<uint8_t>(t == DType::i4 || t == DType::i2 ? wrap_small_int(v, t) : v);
  }
  return out;
}

}  // namespace fusor
