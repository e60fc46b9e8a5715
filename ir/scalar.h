// Typed scalar values on the host: how `ref` and the `cpu` backend hold one element of any
// numeric dtype while evaluating an op or a fused expression (DESIGN.md "Numerics policy").
//
//  * Integers and bool are held exactly as int64 (unsigned 64-bit values by their bits);
//    every op result is wrapped to its dtype with two's-complement wrap-around (numpy /
//    onnxruntime semantics): uint8 128 + 128 = 0, int32 2147483647 * 2 = -2.
//  * float64 is held as double; float32, float16 and bfloat16 as double values that are
//    exactly representable in their dtype: each op computes in double and rounds once to its
//    dtype (round to nearest even), which is the correctly rounded result of that op.
//  * Conversions (dtype_convert): float -> integer truncates toward zero and saturates (NaN
//    gives 0; int4/uint4/int2/uint2 wrap instead, as ONNX's Cast does), integer -> integer wraps (unsigned sources zero-extend, signed sign-extend),
//    anything -> bool is != 0, bool -> number is 0/1.
//  * Integer division by zero gives 0 and modulus by zero gives 0 (ONNX leaves both undefined;
//    every backend returns these values); INT_MIN / -1 = INT_MIN and INT_MIN % -1 = 0.
#pragma once
#include <cmath>
#include <cstdint>

#include "ir/small_dtypes.h"
#include "ir/tensor.h"

namespace fusor {

union HostScalar {
  double f;
  int64_t i;
};

// True when values of t are held as integers (ints and bool).
inline bool dtype_is_integral(DType t) { return dtype_is_int(t) || t == DType::boolean; }
inline bool dtype_is_unsigned(DType t) {
  return t == DType::u8 || t == DType::u16 || t == DType::u32 || t == DType::u64 || t == DType::boolean || t == DType::u4 ||
         t == DType::u2;
}

// Element `i` of a buffer of dtype t, and the store back (v must already be of dtype t).
HostScalar scalar_load(DType t, const void* base, int64_t i);
void scalar_store(DType t, void* base, int64_t i, HostScalar v);

// v (a value of dtype `from`) converted to dtype `to` with the rules above; from == to
// returns v unchanged except that a float value is rounded to its dtype.
HostScalar scalar_convert(HostScalar v, DType from, DType to);
// scalar_convert with Cast's `saturate` and `round_mode` attributes, which only conversions to
// the small floats use (ir/small_dtypes.h); scalar_convert is saturate = true, round up.
HostScalar scalar_convert_cast(HostScalar v, DType from, DType to, bool saturate, E8M0Round mode);
// Wraps an int64 result to integer dtype t (bool: != 0).
int64_t wrap_int(int64_t v, DType t);
// Rounds a double to the nearest value of float dtype t (round to nearest even; f64 unchanged).
double round_float(double v, DType t);
// One step of Neumaier's compensated sum in double: s += v, c += the add's rounding error.
// ref and cpu sum float32-class data so (their result: s + c, when c is finite).
inline void neumaier_add(double& s, double& c, double v) {
  const double t = s + v;
  c += std::fabs(s) >= std::fabs(v) ? (s - t) + v : (v - t) + s;
  s = t;
}
// The value as a double (exact for floats; ints as the nearest double; u64 by its unsigned value).
double scalar_to_double(HostScalar v, DType t);

// IEEE round-to-nearest-even conversions: ir/half.h's (the one definition host code uses), as doubles.
uint16_t float_to_half_bits(double v);
double half_bits_to_float(uint16_t h);
uint16_t float_to_bf16_bits(double v);
double bf16_bits_to_float(uint16_t h);

}  // namespace fusor
