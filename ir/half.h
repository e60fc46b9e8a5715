// fp16 (IEEE binary16) and bf16 (bfloat16) conversions on the host, shared by the tensor
// accessors and anyone else who stores a storage type (backends, tests).
//
// Contract (every function, every input):
//   * Narrowing conversions round to nearest, ties to even, including halfway cases, results in
//     the subnormal range and values past the largest finite (65504 for fp16, ~3.39e38 for bf16),
//     which become +-inf exactly where IEEE rounding overflows (|x| >= 65520 for fp16).
//   * The sign of zero is kept; +-inf stays +-inf; NaN stays NaN (quiet, same sign, the top
//     payload bits kept).
//   * The double overloads round once, straight from double: double -> float -> half would round
//     twice and can miss a value just past a halfway point.
//   * Widening conversions (f16_to_f32, bf16_to_f32) are exact.
// Nothing here depends on the FPU's rounding mode; no function throws.
#pragma once
#include <bit>
#include <cstdint>
#include <cstring>

namespace fusor {

namespace half_detail {

// Rounds the IEEE value (sign, biased exponent, fraction) of a source format with SM fraction
// bits and bias SB to a 16-bit format with DM fraction bits and DE exponent bits.
template <int SM, int SB, int DM, int DE>
constexpr uint16_t narrow(uint64_t sign, int64_t exp, uint64_t frac) {
  constexpr int64_t kSrcMaxExp = 2 * SB + 1, kDstBias = (1 << (DE - 1)) - 1, kDstEmin = 1 - kDstBias;
  constexpr uint32_t kInf = ((1u << DE) - 1) << DM;
  const uint16_t s = static_cast<uint16_t>(sign << 15);
  if (exp == kSrcMaxExp) {
    if (frac == 0) return s | kInf;
    // NaN: quiet bit set, the top fraction bits carried over.
    return static_cast<uint16_t>(s | kInf | (1u << (DM - 1)) | ((frac >> (SM - DM)) & ((1u << DM) - 1)));
  }
  if (exp == 0 && frac == 0) return s;
  // value = m * 2^e exactly.
  const uint64_t m = exp ? (frac | (uint64_t{1} << SM)) : frac;
  const int64_t e = (exp ? exp : 1) - SB - SM;
  const int64_t top = e + std::bit_width(m) - 1;                  // floor(log2 value)
  const int64_t quantum = (top < kDstEmin ? kDstEmin : top) - DM;  // log2 of the target's ulp there
  const int64_t shift = quantum - e;                               // bits of m that are rounded off
  uint64_t r;
  if (shift <= 0) {
    r = m << -shift;  // exact (only when the target is at least as precise here)
  } else if (shift >= 64) {
    r = 0;  // below a quarter of the target's smallest subnormal
  } else {
    r = m >> shift;
    const uint64_t rem = m & ((uint64_t{1} << shift) - 1), half = uint64_t{1} << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) ++r;
  }
  // In the subnormal range r is the encoding itself (r == 2^DM is the smallest normal); above
  // it r is in [2^DM, 2^(DM+1)] and a carry out of the fraction moves into the exponent.
  uint64_t enc = top < kDstEmin ? r : (static_cast<uint64_t>(top + kDstBias) << DM) + (r - (uint64_t{1} << DM));
  if (enc >= kInf) enc = kInf;
  return static_cast<uint16_t>(s | enc);
}

template <int DM, int DE>
inline uint16_t from_f32(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  return narrow<23, 127, DM, DE>(u >> 31, (u >> 23) & 0xff, u & 0x7fffff);
}
template <int DM, int DE>
inline uint16_t from_f64(double d) {
  const uint64_t u = std::bit_cast<uint64_t>(d);
  return narrow<52, 1023, DM, DE>(u >> 63, static_cast<int64_t>((u >> 52) & 0x7ff), u & 0xfffffffffffffull);
}

}  // namespace half_detail

inline uint16_t f32_to_f16_rne(float f) { return half_detail::from_f32<10, 5>(f); }
inline uint16_t f64_to_f16_rne(double d) { return half_detail::from_f64<10, 5>(d); }
inline uint16_t f32_to_bf16_rne(float f) { return half_detail::from_f32<7, 8>(f); }
inline uint16_t f64_to_bf16_rne(double d) { return half_detail::from_f64<7, 8>(d); }

inline float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
  uint32_t u;
  if (exp == 0x1f) {
    u = sign | 0x7f800000u | (frac << 13);  // inf, or NaN with its payload
  } else if (exp != 0) {
    u = sign | ((exp + 127 - 15) << 23) | (frac << 13);
  } else if (frac == 0) {
    u = sign;
  } else {
    // Subnormal: frac * 2^-24, normalized for float (exact).
    const int lead = std::bit_width(frac) - 1;  // 0..9
    u = sign | (static_cast<uint32_t>(lead + 127 - 24) << 23) | ((frac << (23 - lead)) & 0x7fffff);
  }
  return std::bit_cast<float>(u);
}

// bfloat16 is the top half of a float32.
inline float bf16_to_f32(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

}  // namespace fusor
