// fusor core value types: dtypes, shapes, host tensors and the one error type.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <memory>
#include <string>
#include <vector>

namespace fusor {

// s as one line of valid UTF-8: control characters become escapes (\n, \x01) and so does
// each byte of s that is not part of a well-formed UTF-8 sequence (\xff); nothing is cut.
std::string one_line(const std::string& s);

// Error model (DESIGN.md "Errors"): every failure on bad input is a fusor::Error whose
// message starts with the component in brackets, e.g. "[onnx] node 'Conv_12' (Conv): ...".
// The message is made one line of valid UTF-8 (one_line) whatever a model's strings hold.
class Error : public std::runtime_error {
 public:
  Error(std::string component, const std::string& message)
      : std::runtime_error("[" + component + "] " + one_line(message)), component_(std::move(component)) {}
  const std::string& component() const { return component_; }
  // The message without its "[component] " prefix (to wrap in another error's words).
  std::string message() const { return std::string(what()).substr(component_.size() + 3); }

 private:
  std::string component_;
};

// A name from a model file made safe for a one-line message: one_line's escapes (UTF-8 is
// kept), and names longer than 200 characters are cut with "...". Every name an error
// message quotes goes through this.
std::string printable(const std::string& s);

// Element types. Values match nothing external; see dtype_from_onnx/dtype_to_onnx for the
// ONNX TensorProto.DataType mapping.
// The last ten are ONNX's small types (ir/small_dtypes.h: one byte per element in memory,
// packed to 4 or 2 bits in files): float8 e4m3fn/e4m3fnuz/e5m2/e5m2fnuz, uint4, int4,
// float4 e2m1, float8 e8m0, uint2, int2.
enum class DType : uint8_t {
  undefined, f32, f16, bf16, f64, i8, i16, i32, i64, u8, u16, u32, u64, boolean, string,
  f8e4m3fn, f8e4m3fnuz, f8e5m2, f8e5m2fnuz, u4, i4, f4e2m1, f8e8m0, u2, i2
};

size_t dtype_size(DType t);            // bytes per element in memory (0 for undefined/string; 1 for the small types)
int dtype_bits(DType t);               // bits per element in ONNX files (4 for (u)int4/float4, 2 for (u)int2, else 8 * size)
const char* dtype_name(DType t);       // "float32", "int64", "float8e4m3fn", ...
bool dtype_is_float(DType t);          // f16/bf16/f32/f64 and the small floats (float8*, float4e2m1, float8e8m0)
bool dtype_is_int(DType t);            // signed/unsigned integers (not bool), int4/uint4/int2/uint2 included
// The ten small types above: computed on ref (and on cpu as opaque nodes), never fused, and
// compared bit for bit (a NaN matches any NaN).
bool dtype_is_small(DType t);
DType dtype_from_onnx(int onnx_type);  // TensorProto.DataType -> DType (undefined if unknown)
int dtype_to_onnx(DType t);

// An op, dtype or feature that a backend (or the op table) does not support: a conformance
// runner reports it as "skipped" with this message rather than "failed".
class Unsupported : public Error {
 public:
  Unsupported(std::string component, const std::string& why) : Error(std::move(component), why) {}
};

using Shape = std::vector<int64_t>;
// Product of dims (1 for a scalar). Throws Error("shape") when the product overflows int64
// (e.g. [2^62+1, 4]), so no size computed from a shape silently wraps.
int64_t shape_numel(const Shape& s);
// The bound every static shape in fusor keeps (initializers at import, graph inputs, every
// inferred output): no negative dim, and the product of the NONZERO dims at most 2^56. Zeros
// are skipped so an empty tensor cannot carry a huge dim either: any product or sum of a few
// dims (strides, outer/inner extents, a Concat axis) then fits int64. The rank is at most
// kMaxRank (numpy's limit), so per-dim work and messages stay small.
constexpr int64_t kMaxShapeElements = int64_t{1} << 56;
constexpr size_t kMaxRank = 64;
bool shape_in_bounds(const Shape& s);
// Why s is out of those bounds ("rank 100 is over 64", "a negative dimension", "more than
// 2^56 elements"); empty when it is in bounds.
std::string shape_bounds_problem(const Shape& s);
// Bytes of a dense tensor of dtype t and shape s; Error("shape") on overflow as above.
uint64_t tensor_bytes(DType t, const Shape& s);
// Physical memory of this host in bytes (0 when it cannot be read).
uint64_t host_memory_bytes();
// Refuses an allocation before it is made: throws Error("memory", "<what> needs N bytes
// (X GiB), more than <where> (Y GiB)") when bytes > limit. limit 0 means unknown: no check.
void check_fits(uint64_t bytes, uint64_t limit, const std::string& what, const std::string& where);
// One size in bytes for messages: "17179869184 bytes (16 GiB)".
std::string bytes_str(uint64_t bytes);
std::string shape_str(const Shape& s); // "[1, 3, 224, 224]" (every dim: also a cache key)
// shape_str for a shape that may be hostile (not yet bounded to kMaxRank): past 16 dims the
// first 8 and the last 2 with the rank, "[1, 1, ..., 1] (rank 1000000)", so a message stays short.
std::string shape_str_short(const Shape& s);
Shape contiguous_strides(const Shape& s);  // row-major element strides

// A dense, row-major host tensor that owns its bytes. Numeric elements can be read and
// written as double regardless of dtype (get/set), which is what the reference uses where
// speed does not matter; hot paths use data<T>() directly.
class Tensor {
 public:
  Tensor() = default;
  // Zero-filled; throws Error for string/undefined dtypes, Error("shape") for an overflowing
  // shape and Error("memory") when the bytes exceed the host's memory (checked before allocating).
  Tensor(DType dtype, Shape shape);
  // Adopts `bytes` (numel(shape) * size(dtype) of them, row-major) without copying; throws Error
  // when the size does not match.
  Tensor(DType dtype, Shape shape, std::string&& bytes);
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t numel() const { return shape_numel(shape_); }
  int rank() const { return static_cast<int>(shape_.size()); }
  size_t nbytes() const { return bytes_ ? bytes_->size() : 0; }
  bool defined() const { return dtype_ != DType::undefined; }

  // Copies of a tensor share its bytes until one of them writes (copy-on-write), so graphs and
  // plans that copy a model's weights cost nothing. The non-const accessors below detach this
  // tensor first; a pointer they return stays this tensor's alone while it is not copied.
  std::byte* raw() { return mutable_bytes(); }
  const std::byte* raw() const { return bytes_ ? reinterpret_cast<const std::byte*>(bytes_->data()) : nullptr; }
  template <class T> T* data() { return reinterpret_cast<T*>(mutable_bytes()); }
  template <class T> const T* data() const { return reinterpret_cast<const T*>(raw()); }

  double get(int64_t i) const;        // element i converted to double (exact; f16/bf16 via ir/half.h)
  void set(int64_t i, double v);      // stores v converted to dtype (f16/bf16: round to nearest even, ir/half.h;
                                      // ints truncate toward zero)
  int64_t get_int(int64_t i) const;   // element i as int64 (exact for integer dtypes)
  void set_int(int64_t i, int64_t v);
  void reshape(Shape s);              // same numel; throws Error otherwise
  void fill(double v);
  // Poison every element (NaN for floats, a recognizable pattern for others) so that an
  // element a kernel fails to write shows up in comparisons.
  void poison();

  std::vector<std::string> strings;   // only for DType::string tensors (kept so loading does not fail)

 private:
  DType dtype_ = DType::undefined;
  Shape shape_;
  std::shared_ptr<std::string> bytes_;  // the element bytes; null for string and default tensors
  std::byte* mutable_bytes();
};

// Comparison used by conformance and tests. Rules, checked in this order:
//   * dtype and shape must equal the expected ones (else a failure naming both);
//   * integers and bools compare exactly (bools as true/false), whatever the tolerances;
//   * floats: |a-b| <= atol + rtol*|b| (ONNX backend-test semantics), NaN must match NaN,
//     infinities must match exactly, -0.0 equals +0.0;
//   * exact: floats compare bit for bit (the sign of zero counts), except that a NaN matches
//     any NaN (payloads differ between CPUs and GPUs) and nothing else.
// A negative rtol/atol means default_tolerance(expected dtype). See CompareOptions::scale_eps
// for the output-scale allowance whole-model checks add.
struct Tolerance {
  double rtol, atol;
};
// Per-dtype defaults: float32/float64 the ONNX backend-test ones (rtol 1e-3, atol 1e-7);
// float16 rtol 1e-3, atol 1e-5 and bfloat16 rtol 1.6e-2, atol 1e-5 (torch.testing's), which
// let a result one unit in the last place off pass; {0, 0} for integers and bools.
Tolerance default_tolerance(DType t);
struct CompareOptions {
  double rtol = -1, atol = -1;
  bool exact = false;
  // float32/float64 only: widen atol by this many units of the dtype's epsilon (2^-23, 2^-52)
  // times the expected tensor's largest finite magnitude. A whole model's stored output is
  // itself rounded: an element that is the near-cancellation of O(max) terms carries an error
  // of a few eps * max in the reference (onnxruntime's fp32 answer), not eps * |element|.
  // 0: off (the plain atol + rtol*|b| rule). `conform` and `run` turn it on
  // (kReferenceScaleEps) only when neither tolerance was given.
  double scale_eps = 0;
};
// The allowance `conform` / `run` use by default. Measured on the model zoo
// (docs/model_zoo.md): against onnxruntime's fp32 outputs, near-zero elements of CNN /
// transformer outputs need up to 8 eps * max|output| (bert-base, resnext50, gpt-neo) and
// 23 (fcn_resnet50 on Vulkan), while fusor's ref is closer to the fp64 answer than
// onnxruntime is; 64 leaves room for deeper models, and an element wrong by more than
// 7.6e-6 of the output's scale still fails.
inline constexpr double kReferenceScaleEps = 64;
struct CompareResult {
  bool ok = true;
  double max_abs = 0, max_rel = 0;  // inf where a mismatch is not finite (NaN for a number, inf for another)
  int64_t max_ulp = 0;     // floats: largest distance in units in the last place of the dtype
  int64_t mismatches = 0;
  std::string message;  // empty when ok; for floats it gives the first mismatch's ulp distance
};
CompareResult compare_tensors(const Tensor& actual, const Tensor& expected, const CompareOptions& opts);
inline CompareResult compare_tensors(const Tensor& actual, const Tensor& expected, double rtol, double atol) {
  return compare_tensors(actual, expected, CompareOptions{rtol, atol, false});
}
// The options for checking a model's outputs against stored reference outputs (`conform`,
// `run`): the given tolerances as they are, or, when neither is given (both negative) and
// not exact, the dtype defaults plus the kReferenceScaleEps output-scale allowance.
inline CompareOptions reference_check(double rtol, double atol, bool exact) {
  return CompareOptions{rtol, atol, exact, rtol < 0 && atol < 0 && !exact ? kReferenceScaleEps : 0};
}
// Distance between two finite values of a float dtype in units in the last place of that dtype
// (adjacent representable values are 1 apart, -0.0 and +0.0 are 0 apart); -1 for a non-float
// dtype or a NaN.
int64_t ulp_distance(DType t, double a, double b);
// Relative L2 error ||a-b|| / max(||b||, tiny) over all elements (NaNs in the same place are ignored).
double relative_l2(const Tensor& a, const Tensor& b);

}  // namespace fusor
