// Linear quantization (ONNX semantics): QuantizeLinear and DequantizeLinear, opsets 10-21, and
// DequantizeLinear's output_dtype (23+).
//
// DequantizeLinear: y = (x - zero_point) * scale, y in scale's dtype, or output_dtype's (opset
//   23+; needed with a float8e8m0 scale). The product is rounded once, to y's dtype.
// QuantizeLinear:   y = saturate(round_half_even(x / scale) + zero_point), y in zero_point's
//   dtype, else the output_dtype attribute (opset 21), else uint8; the division in the
//   `precision` attribute's dtype when given (opset 23).
// scale / zero_point are one value (per tensor), a 1-D tensor of x.shape[axis] values (per
// axis, opset 13+), or, with block_size > 0 (opset 21), x's shape with dim `axis` divided by
// block_size rounded up (blocked). The quotient is formed in float32 for float32 x, as the
// ONNX reference does (rounding a double quotient can resolve a tie differently).
// Quantized dtypes: 8/16/32-bit integers, int4/uint4/int2/uint2 (rounded half to even and
// saturated to their range) and the float8 types and float4e2m1 (ir/small_dtypes.h):
// y = x / scale + zero_point rounded to nearest even in the target, saturating unless the
// `saturate` attribute is 0 (then out-of-range values become inf/NaN as in Cast).
// Anything else is Error("shape").
#include <cfenv>
#include <cmath>

#include "ir/ops/op_helpers.h"
#include "ir/small_dtypes.h"

namespace fusor {
namespace {

using namespace op_helpers;

struct QuantLayout {
  int64_t axis = 0, block = 0;
  int64_t outer = 1, dim = 1, inner = 1;
  bool per_tensor = true;
};

// Which scale element each element of x uses; validates the scale's shape.
QuantLayout quant_layout(const Node& n, const Shape& x, const Shape& scale) {
  QuantLayout q;
  const int64_t r = static_cast<int64_t>(x.size());
  q.block = n.opset >= 21 ? n.attr_i("block_size", 0) : 0;
  q.per_tensor = shape_numel(scale) == 1 && scale.size() <= 1 && q.block == 0;
  if (q.per_tensor) return q;
  if (n.opset < 13) throw Error("shape", n.label() + ": scale must be a scalar before opset 13, got " + shape_str(scale));
  q.axis = normalize_axis(n.attr_i("axis", 1), r, n.label());
  for (int64_t d = 0; d < q.axis; ++d) q.outer *= x[d];
  q.dim = x[q.axis];
  for (int64_t d = q.axis + 1; d < r; ++d) q.inner *= x[d];
  if (q.block == 0) {
    if (scale.size() != 1 || scale[0] != q.dim)
      throw Error("shape", n.label() + ": per-axis scale must have shape [" + std::to_string(q.dim) + "], got " + shape_str(scale));
    return q;
  }
  if (q.block < 0) throw Error("shape", n.label() + ": block_size must be positive");
  Shape want = x;
  want[q.axis] = q.dim == 0 ? 0 : 1 + (q.dim - 1) / q.block;  // ceil, free of overflow for huge blocks
  if (scale != want) throw Error("shape", n.label() + ": blocked scale must have shape " + shape_str(want) + ", got " + shape_str(scale));
  return q;
}

int64_t param_index(const QuantLayout& q, int64_t i) {
  if (q.per_tensor) return 0;
  const int64_t in = i % q.inner, a = (i / q.inner) % q.dim, o = i / (q.inner * q.dim);
  if (q.block == 0) return a;
  const int64_t blocks = q.dim == 0 ? 0 : 1 + (q.dim - 1) / q.block;
  return (o * blocks + a / q.block) * q.inner + in;
}

bool quant_dtype(DType t) {
  return t == DType::u8 || t == DType::i8 || t == DType::u16 || t == DType::i16 || t == DType::i32 ||
         (dtype_is_small(t) && t != DType::f8e8m0);
}

void check_zero_point(InferContext& ctx, DType want) {
  if (!ctx.has_input(2)) return;
  // One value given as [] and [1] is the same per-tensor parameter (the node suite mixes them).
  const bool scalars = shape_numel(ctx.shape(2)) == 1 && shape_numel(ctx.shape(1)) == 1 && ctx.rank(2) <= 1 && ctx.rank(1) <= 1;
  if (ctx.shape(2) != ctx.shape(1) && !scalars) ctx.fail("zero_point shape " + shape_str(ctx.shape(2)) + " differs from scale's " + shape_str(ctx.shape(1)));
  if (want != DType::undefined && ctx.dtype(2) != want) ctx.fail("zero_point dtype differs from the quantized dtype");
}

// y's dtype: the output_dtype attribute (opset 23+: float, float16 or bfloat16), else scale's.
// A float8e8m0 scale (MX) needs output_dtype: y cannot be float8e8m0 (ONNX T3).
DType dequantize_out_dtype(InferContext& ctx) {
  const int64_t od = ctx.node().opset >= 23 ? ctx.node().attr_i("output_dtype", 0) : 0;
  if (od == 0) {
    if (ctx.dtype(1) == DType::f8e8m0)
      ctx.fail("a float8e8m0 scale needs output_dtype (float, float16 or bfloat16): y cannot be float8e8m0");
    return ctx.dtype(1);
  }
  const DType t = dtype_from_onnx(static_cast<int>(od));
  if (t != DType::f32 && t != DType::f16 && t != DType::bf16)
    ctx.fail("output_dtype " + std::to_string(od) + " is not float, float16 or bfloat16");
  return t;
}

void dequantize_infer(InferContext& ctx) {
  if (!quant_dtype(ctx.dtype(0))) ctx.fail(std::string("x of dtype ") + dtype_name(ctx.dtype(0)) + " is not supported");
  if (!dtype_is_float(ctx.dtype(1))) ctx.fail("scale must be a float tensor");
  check_zero_point(ctx, ctx.dtype(0));
  quant_layout(ctx.node(), ctx.shape(0), ctx.shape(1));
  ctx.set_output(0, dequantize_out_dtype(ctx), ctx.shape(0));
}

void dequantize_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor &x = *in[0], &scale = *in[1];
  const Tensor* zp = opt_in(in, 2);
  const QuantLayout q = quant_layout(n, x.shape(), scale.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t p = param_index(q, i);
    if (dtype_is_float(x.dtype())) {  // float8 / float4: (x - zp) in float, then the product
      out[0].set(i, (x.get(i) - (zp ? zp->get(p) : 0.0)) * scale.get(p));
      continue;
    }
    const int64_t z = zp ? zp->get_int(p) : 0;
    // (x - zp) is exact; one rounding of the product, as in float32.
    out[0].set(i, static_cast<double>(x.get_int(i) - z) * scale.get(p));
  }
}

DType quantize_out_dtype(InferContext& ctx) {
  if (ctx.has_input(2)) return ctx.dtype(2);
  const int64_t od = ctx.node().opset >= 21 ? ctx.node().attr_i("output_dtype", 0) : 0;
  return od ? dtype_from_onnx(static_cast<int>(od)) : DType::u8;
}

void quantize_infer(InferContext& ctx) {
  if (!dtype_is_float(ctx.dtype(0)) && ctx.dtype(0) != DType::i32) ctx.fail("x must be float or int32");
  const DType t = quantize_out_dtype(ctx);
  if (!quant_dtype(t)) ctx.fail(std::string("quantizing to ") + (t == DType::undefined ? "this dtype" : dtype_name(t)) + " is not supported");
  check_zero_point(ctx, DType::undefined);
  if (ctx.has_input(2) && ctx.node().opset >= 21 && ctx.node().attr_i("output_dtype", 0) &&
      dtype_from_onnx(static_cast<int>(ctx.node().attr_i("output_dtype", 0))) != t)
    ctx.fail("output_dtype differs from zero_point's dtype");
  quant_layout(ctx.node(), ctx.shape(0), ctx.shape(1));
  if (const int64_t pr = ctx.node().opset >= 23 ? ctx.node().attr_i("precision", 0) : 0) {
    const DType pd = dtype_from_onnx(static_cast<int>(pr));
    if (pd != DType::f32 && pd != DType::f16 && pd != DType::bf16 && pd != DType::f64)
      ctx.fail("precision " + std::to_string(pr) + " is not float, float16, bfloat16 or double");
  }
  ctx.set_output(0, t, ctx.shape(0));
}

void quantize_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor &x = *in[0], &scale = *in[1];
  const Tensor* zp = opt_in(in, 2);
  const QuantLayout q = quant_layout(n, x.shape(), scale.shape());
  double lo, hi;
  quant_int_range(out[0].dtype(), &lo, &hi);
  const bool f32 = x.dtype() == DType::f32 && scale.dtype() == DType::f32;
  // QuantizeLinear-23 `precision`: x and scale converted to it, divided and rounded in it.
  // Without it (opset 23+) the division is in y_scale's type: a float16 / bfloat16 quotient is
  // rounded to that type before the integer rounding (the spec; onnxruntime and the ONNX
  // reference agree). Before opset 23 the spec is silent: float32, as onnxruntime divides.
  const int64_t pr = n.opset >= 23 ? n.attr_i("precision", 0) : 0;
  DType pd = pr ? dtype_from_onnx(static_cast<int>(pr)) : DType::undefined;
  // (float8e8m0 / int32 scales divide in double, as before: e8m0 has no arithmetic.)
  if (pd == DType::undefined && !f32 && (scale.dtype() == DType::f16 || scale.dtype() == DType::bf16))
    pd = n.opset >= 23 ? scale.dtype() : DType::f32;
  else if (pd == DType::undefined && !f32 && scale.dtype() == DType::f32)
    pd = DType::f32;
  auto quotient = [&](int64_t i, int64_t p) {
    if (pd != DType::undefined) return round_float(round_float(x.get(i), pd) / round_float(scale.get(p), pd), pd);
    return f32 ? static_cast<double>(static_cast<float>(x.get(i)) / static_cast<float>(scale.get(p))) : x.get(i) / scale.get(p);
  };
  if (dtype_is_float(out[0].dtype())) {  // float8 / float4: no integer rounding; the cast rounds
    const bool saturate = n.attr_i("saturate", 1) != 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t p = param_index(q, i);
      double v = quotient(i, p);
      if (zp) v = f32 ? static_cast<double>(static_cast<float>(v) + static_cast<float>(zp->get(p))) : v + zp->get(p);
      out[0].data<uint8_t>()[i] = small_float_encode(v, out[0].dtype(), saturate);
    }
    return;
  }
  const int saved = std::fegetround();
  std::fesetround(FE_TONEAREST);  // nearbyint: round half to even
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t p = param_index(q, i);
    double v = std::nearbyint(quotient(i, p)) + (zp ? static_cast<double>(zp->get_int(p)) : 0.0);
    v = std::isnan(v) ? 0.0 : std::min(hi, std::max(lo, v));
    out[0].set_int(i, static_cast<int64_t>(v));
  }
  std::fesetround(saved);
}

// DequantizeLinear of one element, y = (x - zero_point) * scale, for a contraction that reads a
// quantized weight (MatMulDesc::dequant_b): computed in scale's dtype (math operand 1), so the
// integer difference is exact and the product is rounded once, as dequantize_ref does.
ScalarRule dequantize_rule() {
  ScalarRule r;
  r.expr = "({0} - {2}) * {1}";
  r.eval = [](const double* x, const double*, bool) { return (x[0] - x[2]) * x[1]; };
  r.absent_operand = [](const Node&, int) { return 0.0; };  // no zero_point: 0
  r.math_operand = 1;
  return r;
}

}  // namespace

void register_quant_ops() {
  OpDef dq = table_entry("DequantizeLinear", 2, 3, dequantize_infer, dequantize_ref);
  dq.load_rule = dequantize_rule();
  register_op(std::move(dq));
  register_op(table_entry("QuantizeLinear", 2, 3, quantize_infer, quantize_ref));
}

}  // namespace fusor
