// The ONNX element types narrower than 16 bits beyond int8/uint8 (TensorProto.DataType 17-26):
// FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, UINT4, INT4, FLOAT4E2M1,
// FLOAT8E8M0, UINT2, INT2 (onnx.proto; the installed libonnx 1.12 predates them, so the numbers
// are mapped in ir/tensor.cpp by hand).
//
// In memory (fusor::Tensor, ref/cpu buffers) each element takes one byte: the float8 types and
// FLOAT4E2M1 hold their encoding (FLOAT4E2M1 in the low nibble), INT4/INT2 their value as a
// sign-extended int8, UINT4/UINT2 their value as a uint8. In .pb files (raw_data, int32_data,
// external data) the 4-bit and 2-bit types are packed, first element in the least significant
// bits, the last byte padded with zeros (pack_small / unpack_small below).
//
// Conversions to the small floats (the ONNX Cast spec, opset 19-25):
//  * round to nearest, ties to even, from the exact value (no double rounding);
//  * saturate = true: a value past the largest finite one (or +-inf) becomes +-max;
//    saturate = false: it becomes +-inf for FLOAT8E5M2, NaN for the other float8 types;
//    FLOAT4E2M1 has neither and always saturates;
//  * NaN becomes NaN: 0x7F|sign (E4M3FN), 0x7E|sign (E5M2), 0x80 (the FNUZ types), 0x8 for
//    FLOAT4E2M1 (no NaN encoding; what the ONNX reference writes);
//  * the FNUZ types have no negative zero: -0.0 and negative values that round to zero give 0x00;
//  * FLOAT8E8M0 (an unsigned power of two 2^(e-127), 0xFF = NaN) takes the magnitude of the value
//    and rounds by Cast's round_mode: up (default; the smallest power of two >= |x|), down, or
//    nearest (ties, 1.5 * 2^k, round up); below 2^-127 (0 included) gives 0x00 (2^-127, the
//    smallest) when saturating, else 0xFF; NaN gives 0xFF; past 2^127 (and inf) gives 0xFE
//    when saturating, else 0xFF.
// Nothing here throws except pack_small/unpack_small on a size mismatch (Error("tensor")).
#pragma once
#include <cstdint>
#include <string>

#include "ir/tensor.h"

namespace fusor {

enum class E8M0Round { up, down, nearest };
// Cast's round_mode attribute ("up", "down", "nearest"); Error("shape") naming `label` otherwise.
E8M0Round e8m0_round_mode(const std::string& s, const std::string& label);

// The encoding (in the low bits) of v in small float dtype t (f8*, f4e2m1, f8e8m0).
uint8_t small_float_encode(double v, DType t, bool saturate = true, E8M0Round mode = E8M0Round::up);
// The exact value of an encoding of small float dtype t.
double small_float_decode(uint8_t bits, DType t);
// True for the float8 types, FLOAT4E2M1 and FLOAT8E8M0.
bool dtype_is_small_float(DType t);
// v wrapped to int4/uint4/int2/uint2 (two's complement, like the wider integers).
int64_t wrap_small_int(int64_t v, DType t);
// Value range of the small integer dtype t.
void small_int_range(DType t, int64_t* lo, int64_t* hi);
// Value range of a quantized integer dtype: the small ones and int8 / uint8 / int16 / uint16 /
// int32 (QuantizeLinear's saturation bounds; uint8 for any other dtype).
void quant_int_range(DType t, double* lo, double* hi);

// The packed file image of a tensor of a 4- or 2-bit dtype (ceil(numel * bits / 8) bytes).
std::string pack_small(const Tensor& t);
// A tensor from a packed file image; Error("tensor") when `bytes` is not the packed size.
Tensor unpack_small(DType t, Shape shape, const std::string& bytes);
// Bytes a packed image of n elements of dtype t takes (n * dtype_size for byte-sized dtypes).
uint64_t packed_bytes(DType t, int64_t n);

}  // namespace fusor
