// Integer quantized ops (ONNX semantics): DynamicQuantizeLinear-11, MatMulInteger-10,
// ConvInteger-10, QLinearMatMul-10/21, QLinearConv-10.
//
// Zero points are subtracted exactly; products accumulate exactly (int64, through the MatMul /
// Conv references in double, exact below 2^53) and wrap to int32 as an int32 accumulator
// would. Requantization (QLinear*) multiplies the int32 result by a_scale*b_scale/y_scale
// formed in the scales' dtype (float32 or float16 rounding at each step, as the ONNX reference
// does in numpy), adds the output zero point, rounds half to even and saturates.
#include <cfenv>
#include <cmath>

#include "ir/ops/attention.h"
#include "ir/ops/op_helpers.h"

namespace fusor {
namespace {

using namespace op_helpers;

bool int8ish(DType t) { return t == DType::u8 || t == DType::i8; }

// Rounds v to dtype t (float32/float16/bfloat16 storage), as one numpy operation in t would.
double round_to(DType t, double v) {
  if (t == DType::f64) return v;
  Tensor s(t, {});
  s.set(0, v);
  return s.get(0);
}

// x - zp as doubles (exact), with zp per tensor (1 element) or per index along `axis`.
Tensor centered(const Tensor& x, const Tensor* zp, int64_t axis, const std::string& what, const Node& n) {
  Tensor y(DType::f64, x.shape());
  double* p = y.data<double>();
  int64_t inner = 1, dim = 1;
  const bool per_axis = zp && zp->numel() > 1;
  if (per_axis) {
    if (axis < 0 || axis >= x.rank() || zp->numel() != x.shape()[axis])
      ref_fail(n, what + " zero point of " + std::to_string(zp->numel()) + " values does not match " + shape_str(x.shape()));
    dim = x.shape()[axis];
    for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];
  }
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t z = !zp ? 0 : per_axis ? zp->get_int((i / inner) % dim) : zp->get_int(0);
    p[i] = static_cast<double>(x.get_int(i) - z);
  }
  return y;
}

// Runs another op's reference (MatMul, Conv) on double tensors: the one definition of the
// contraction and its geometry.
Tensor run_ref(const char* op, const Node& like, std::vector<const Tensor*> in, const Shape& out_shape) {
  Node c = like;
  c.op_type = op;
  c.domain.clear();
  std::vector<Tensor> out;
  out.emplace_back(DType::f64, out_shape);
  lookup_op(op)->reference(c, in, out);
  return std::move(out[0]);
}

int64_t wrap_i32(double v) { return static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(v)))); }

// Shape of op(inputs) by op's own shape rule, on a scratch graph with f64 stand-ins.
Shape infer_as(const char* op, InferContext& ctx, const std::vector<int>& inputs) {
  Graph g;
  Node c = ctx.node();
  c.op_type = op;
  c.domain.clear();
  c.inputs.clear();
  for (int i : inputs) c.inputs.push_back(g.add_value("in" + std::to_string(i), DType::f64, ctx.shape(i), true));
  c.outputs = {g.add_value("out")};
  InferContext sub(g, c);
  lookup_op(op)->infer(sub);
  return g.values[c.outputs[0]].shape;
}

void check_zp(InferContext& ctx, int zp, int x, const char* what) {
  if (!ctx.has_input(zp)) return;
  if (ctx.dtype(zp) != ctx.dtype(x)) ctx.fail(std::string(what) + " zero point must have the dtype of its input");
  if (ctx.rank(zp) > 1) ctx.fail(std::string(what) + " zero point must be a scalar or 1-D");
}

// ---------------------------------------------------------------- DynamicQuantizeLinear

void dql_infer(InferContext& ctx) {
  if (ctx.dtype(0) != DType::f32) ctx.fail(std::string("x must be float32, got ") + dtype_name(ctx.dtype(0)));
  ctx.set_output(0, DType::u8, ctx.shape(0));
  ctx.set_output(1, DType::f32, {});
  ctx.set_output(2, DType::u8, {});
}

// In float32 as the spec's formula: scale = (max(0, max x) - min(0, min x)) / 255 (1/255 when
// equal), zero_point = saturate(round(0 - min / scale)), y = saturate(round(x / scale) + zp).
void dql_ref(const Node&, const Ins& in, Outs& out) {
  const Tensor& x = *in[0];
  const float* p = x.data<float>();
  float mx = 0, mn = 0;
  for (int64_t i = 0; i < x.numel(); ++i) mx = std::max(mx, p[i]), mn = std::min(mn, p[i]);
  const float scale = (mx == mn ? 1.0f : mx - mn) / 255.0f;
  const int saved = std::fegetround();
  std::fesetround(FE_TONEAREST);
  const float zpf = std::nearbyint(std::min(255.0f, std::max(0.0f, 0.0f - mn / scale)));
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float v = std::nearbyint(p[i] / scale) + zpf;
    out[0].set_int(i, std::isnan(v) ? 0 : static_cast<int64_t>(std::min(255.0f, std::max(0.0f, v))));
  }
  std::fesetround(saved);
  if (has_out(out, 1)) out[1].set(0, scale);
  if (has_out(out, 2)) out[2].set_int(0, static_cast<int64_t>(zpf));
}

// ---------------------------------------------------------------- MatMulInteger / QLinearMatMul

// A's zero point / scale: per tensor, or per row (M values: A's dim -2); B's: per column (N).
int64_t a_axis(const Tensor& a) { return a.rank() >= 2 ? a.rank() - 2 : 0; }
int64_t b_axis(const Tensor& b) { return b.rank() - 1; }

void matmul_integer_infer(InferContext& ctx) {
  if (!int8ish(ctx.dtype(0)) || !int8ish(ctx.dtype(1))) ctx.fail("A and B must be int8 or uint8");
  check_zp(ctx, 2, 0, "A's");
  check_zp(ctx, 3, 1, "B's");
  ctx.set_output(0, DType::i32, infer_as("MatMul", ctx, {0, 1}));
}

void matmul_integer_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor a = centered(*in[0], opt_in(in, 2), a_axis(*in[0]), "A's", n);
  const Tensor b = centered(*in[1], opt_in(in, 3), b_axis(*in[1]), "B's", n);
  const Tensor y = run_ref("MatMul", n, {&a, &b}, out[0].shape());
  for (int64_t i = 0; i < y.numel(); ++i) out[0].set_int(i, wrap_i32(y.data<double>()[i]));
}

// Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
void qlinear_matmul_infer(InferContext& ctx) {
  if (!int8ish(ctx.dtype(0)) || !int8ish(ctx.dtype(3))) ctx.fail("a and b must be int8 or uint8");
  for (int i : {1, 4, 6})
    if (!dtype_is_float(ctx.dtype(i)) || ctx.dtype(i) != ctx.dtype(1)) ctx.fail("scales must share one float dtype");
  check_zp(ctx, 2, 0, "a's");
  check_zp(ctx, 5, 3, "b's");
  const DType yt = ctx.has_input(7) ? ctx.dtype(7) : ctx.dtype(0);
  if (!int8ish(yt)) ctx.fail("y_zero_point must be int8 or uint8");
  ctx.set_output(0, yt, infer_as("MatMul", ctx, {0, 3}));
}

// Requantizes one int32 accumulator: saturate(round_half_even(acc * factor + zp)).
int64_t requantize(double acc, double factor, int64_t zp, DType t) {
  const double lo = t == DType::i8 ? -128 : 0, hi = t == DType::i8 ? 127 : 255;
  const double v = std::nearbyint(acc * factor + static_cast<double>(zp));
  return static_cast<int64_t>(std::isnan(v) ? 0 : std::min(hi, std::max(lo, v)));
}

// Parameter index (per tensor or along axis) of element i of a tensor of `shape`.
int64_t param_at(const Tensor& p, const Shape& shape, int64_t axis, int64_t i) {
  if (p.numel() == 1) return 0;
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  return (i / inner) % shape[axis];
}

void qlinear_matmul_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor a = centered(*in[0], in[2], a_axis(*in[0]), "a's", n);
  const Tensor b = centered(*in[3], in[5], b_axis(*in[3]), "b's", n);
  const Tensor &as = *in[1], &bs = *in[4], &ys = *in[6];
  const Tensor* yzp = opt_in(in, 7);
  const Tensor y = run_ref("MatMul", n, {&a, &b}, out[0].shape());
  const Shape& os = y.shape();
  const int64_t r = static_cast<int64_t>(os.size());
  // A 1-D operand has no row/column dim in the output: its parameters must be per tensor then.
  if ((as.numel() > 1 && (in[0]->rank() < 2 || as.numel() != os[r - 2])) || (bs.numel() > 1 && (in[3]->rank() < 2 || bs.numel() != os[r - 1])) ||
      ys.numel() != 1 || (yzp && yzp->numel() != 1))
    ref_fail(n, "scales must be per tensor, a's per row or b's per column");
  const DType st = as.dtype();
  const int saved = std::fegetround();
  std::fesetround(FE_TONEAREST);
  for (int64_t i = 0; i < y.numel(); ++i) {
    const double sa = as.get(param_at(as, os, r - 2, i)), sb = bs.get(param_at(bs, os, r - 1, i));
    const double factor = round_to(st, round_to(st, sa * sb) / ys.get(0));
    out[0].set_int(i, requantize(wrap_i32(y.data<double>()[i]), factor, yzp ? yzp->get_int(0) : 0, out[0].dtype()));
  }
  std::fesetround(saved);
}

// ---------------------------------------------------------------- ConvInteger / QLinearConv

void conv_integer_infer(InferContext& ctx) {
  if (!int8ish(ctx.dtype(0)) || !int8ish(ctx.dtype(1))) ctx.fail("x and w must be int8 or uint8");
  check_zp(ctx, 2, 0, "x's");
  check_zp(ctx, 3, 1, "w's");
  if (ctx.has_input(2) && shape_numel(ctx.shape(2)) != 1) ctx.fail("x's zero point must be a scalar");
  ctx.set_output(0, DType::i32, infer_as("Conv", ctx, {0, 1}));
}

void conv_integer_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor x = centered(*in[0], opt_in(in, 2), 0, "x's", n);
  const Tensor w = centered(*in[1], opt_in(in, 3), 0, "w's", n);
  const Tensor y = run_ref("Conv", n, {&x, &w}, out[0].shape());
  for (int64_t i = 0; i < y.numel(); ++i) out[0].set_int(i, wrap_i32(y.data<double>()[i]));
}

// Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B (int32).
void qlinear_conv_infer(InferContext& ctx) {
  if (!int8ish(ctx.dtype(0)) || !int8ish(ctx.dtype(3))) ctx.fail("x and w must be int8 or uint8");
  check_zp(ctx, 2, 0, "x's");
  check_zp(ctx, 5, 3, "w's");
  for (int i : {1, 4, 6})
    if (!dtype_is_float(ctx.dtype(i)) || ctx.dtype(i) != ctx.dtype(1)) ctx.fail("scales must share one float dtype");
  if (ctx.has_input(8) && ctx.dtype(8) != DType::i32) ctx.fail("B must be int32");
  const DType yt = ctx.has_input(7) ? ctx.dtype(7) : ctx.dtype(0);
  if (!int8ish(yt)) ctx.fail("y_zero_point must be int8 or uint8");
  ctx.set_output(0, yt, infer_as("Conv", ctx, {0, 3}));
}

void qlinear_conv_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor x = centered(*in[0], in[2], 0, "x's", n);
  const Tensor w = centered(*in[3], in[5], 0, "w's", n);
  const Tensor* bias = opt_in(in, 8);
  Tensor bd;
  if (bias) {
    bd = Tensor(DType::f64, bias->shape());
    for (int64_t i = 0; i < bias->numel(); ++i) bd.set(i, static_cast<double>(bias->get_int(i)));
  }
  std::vector<const Tensor*> cin{&x, &w};
  if (bias) cin.push_back(&bd);
  const Tensor y = run_ref("Conv", n, cin, out[0].shape());
  const Tensor &xs = *in[1], &ws = *in[4], &ys = *in[6];
  const Tensor* yzp = opt_in(in, 7);
  const int64_t M = y.shape()[1];
  if (xs.numel() != 1 || ys.numel() != 1 || (yzp && yzp->numel() != 1) || (ws.numel() != 1 && ws.numel() != M))
    ref_fail(n, "x/y scales and zero points must be per tensor, w's per tensor or per output channel");
  const DType st = xs.dtype();
  const int saved = std::fegetround();
  std::fesetround(FE_TONEAREST);
  for (int64_t i = 0; i < y.numel(); ++i) {
    const double sw = ws.get(param_at(ws, y.shape(), 1, i));
    const double factor = round_to(st, round_to(st, xs.get(0) * sw) / ys.get(0));
    out[0].set_int(i, requantize(wrap_i32(y.data<double>()[i]), factor, yzp ? yzp->get_int(0) : 0, out[0].dtype()));
  }
  std::fesetround(saved);
}

}  // namespace

void register_quant_int_ops() {
  register_op(table_entry("DynamicQuantizeLinear", 1, 1, dql_infer, dql_ref, 3));
  register_op(table_entry("MatMulInteger", 2, 4, matmul_integer_infer, matmul_integer_ref));
  register_op(table_entry("QLinearMatMul", 8, 8, qlinear_matmul_infer, qlinear_matmul_ref));
  register_op(table_entry("ConvInteger", 2, 4, conv_integer_infer, conv_integer_ref));
  register_op(table_entry("QLinearConv", 8, 9, qlinear_conv_infer, qlinear_conv_ref));
}

}  // namespace fusor
