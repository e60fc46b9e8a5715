// onnxruntime's quantized contrib operators (domain com.microsoft), expanded at shape inference
// into standard ops like the float ones of ir/ops/contrib.cpp (checked against onnxruntime
// 1.32: tests/test_contrib_ops.cpp, tests/data/ort_qoperator).
//
// Quantized operators of onnxruntime's QOperator format (what its quantize_static writes with
// QuantFormat.QOperator), each the ONNX formula its contrib-op documentation states, written
// with DequantizeLinear / QuantizeLinear around the float op (x = (q - zero_point) * scale,
// q = saturate(round_half_even(x / scale) + zero_point)); T is uint8 or int8, scales float32
// scalars (b_scale of QGemm also [N]), an omitted zero point is 0 of T:
//
//   QLinearAdd / QLinearMul(A, A_scale, A_zp?, B, B_scale, B_zp?, C_scale, C_zp?)
//                               C = Q(DQ(A) + DQ(B)); Mul as onnxruntime's kernel rounds it:
//                               saturate(round_half_even((A - A_zp)(B - B_zp) * (A_scale
//                               B_scale / C_scale) + C_zp))   (numpy broadcasting)
//   QLinearSigmoid / QLinearLeakyRelu(X, X_scale, X_zp?, Y_scale, Y_zp?) alpha=0.01
//                               Y = Q(f(DQ(X)))
//   QLinearSoftmax(X, X_scale, X_zp?, Y_scale, Y_zp) axis=-1 opset
//                               Y = Q(Softmax(DQ(X))), Softmax of that opset (flattened to 2-D
//                               at axis before 13)
//   QLinearGlobalAveragePool(X, x_scale, x_zp?, y_scale, y_zp?) channels_last=0
//                               as onnxruntime's kernel: saturate(round_half_even(S * x_scale /
//                               (y_scale * image size)) + y_zp), S the int32 sum of X - x_zp
//   QLinearAveragePool(X, x_scale, x_zp?, y_scale, y_zp?) AveragePool's attributes, channels_last=0
//                               saturate(round_half_even(AveragePool(DQ(X)) / y_scale + y_zp));
//                               both pools over NCHW, or NHWC when channels_last
//   QLinearConcat(Y_scale, Y_zp, X0, X0_scale, X0_zp, X1, ...) axis
//                               Y = Q(Concat(DQ(Xi)))
//   QLinearWhere(condition, X, x_scale, x_zp, Y, y_scale, y_zp, z_scale, z_zp)
//                               Z = Q(Where(condition, DQ(X), DQ(Y)))
//   QuantizeLinear / DequantizeLinear (com.microsoft; 16-bit and 4-bit types)  -> the ONNX op, opset 21
//   QAttention(input, weight, bias, input_scale, weight_scale, mask_index?, input_zp?,
//       weight_zp?, past?)      Attention with the QKV projection below (as MatMulIntegerToFloat)
//   QEmbedLayerNormalization    EmbedLayerNormalization over DQ(tables), DQ(gamma), DQ(beta)
//   MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zp?, b_zp?, bias?)
//   DynamicQuantizeMatMul(A, B, b_scale, b_zp?, bias?)  A through DynamicQuantizeLinear first
//                               Y = float32((A - a_zp)(B - b_zp)) * (a_scale b_scale) + bias
//   QGemm(A, a_scale, a_zp, B, b_scale, b_zp, C?, y_scale?, y_zp?) alpha=1 transA transB
//                               acc = (A' - a_zp)(B' - b_zp) + C in int32 (exact, C the int32
//                               bias at scale a_scale b_scale); Y = acc * (alpha a_scale b_scale)
//                               in float32 (over y_scale when only it is given), or
//                               Q(Y, y_scale, y_zp) when y_zp is given
//   GatherBlockQuantized(data, indices, scales, zero_points?) bits block_size gather_axis
//       quantize_axis=1         Gather of the block-dequantized codes, in the scales' type: uint8
//                               (2 / 4 / 8-bit codes packed along the last axis, as MatMulNBits'
//                               B), int4 / uint4 (zero points of data's type), float8 / float4e2m1
//                               (symmetric; block_size 0 = one block per row)
//   MatMulNBits(A, B, scales, zero_points?, g_idx?, bias?) K N bits=4 block_size (weight-only
//       quantization, onnxruntime's MatMul4BitsQuantizer / GPTQ / AWQ exports)
//                               B uint8 [N, k_blocks, block_size * bits / 8] holds each row's
//                               codes packed low bits first, k_blocks = ceil(K / block_size);
//                               W[n, k] = (code - zp) * scale per block (scales [N * k_blocks]
//                               of A's dtype; zero points uint8 packed like B, or of A's dtype
//                               unpacked, default 2^(bits - 1)); Y = A @ W^T + bias, the
//                               dequantization and the product in float32 (onnxruntime's CPU
//                               kernel), rounded once to A's dtype. bits 2, 4 or 8; g_idx is
//                               refused (Unsupported). A constant B folds to one float weight.
// onnxruntime's SIMD kernels compute some of these in fixed point (MLAS's QLinearAdd), so a
// result can sit one step of T from its output at a rounding boundary.
// Errors: Error("shape") / Unsupported naming the node, one line.
#include <cmath>
#include <limits>

#include "ir/ops/attention.h"
#include "ir/ops/contrib_common.h"
#include "ir/ops/op_helpers.h"
#include "ir/small_dtypes.h"

namespace fusor {
namespace {

using namespace contrib;

// ---- quantized operators (onnxruntime's QOperator format) -------------------------------------

// Quantized data must be uint8 or int8, scales float32 (onnxruntime's type constraints).
void need_q8(const Graph& g, const Node& n, int i, const char* what) {
  const DType t = g.values[n.inputs[i]].dtype;
  if (t != DType::undefined && t != DType::u8 && t != DType::i8)
    throw Error("shape", n.label() + ": " + what + " must be uint8 or int8, got " + dtype_name(t));
}
// [C], [1, C], [1, 1, C] ...: one value per column.
bool row_vector(const Shape& s) { return !s.empty() && shape_numel(s) == s.back(); }

void need_scale(const Graph& g, const Node& n, int i, const char* what, bool vector_ok = false) {
  const Value& v = g.values[n.inputs[i]];
  if (v.dtype != DType::undefined && v.dtype != DType::f32)
    throw Error("shape", n.label() + ": " + what + " must be float32, got " + dtype_name(v.dtype));
  if (v.shape_known && shape_numel(v.shape) != 1 && !(vector_ok && row_vector(v.shape)))
    throw Error("shape", n.label() + ": " + what + (vector_ok ? " must be a scalar or one value per column, got " : " must be a scalar, got ") +
                             shape_str(v.shape));
}
// The zero point at input k of a value of dtype t: that input (of dtype t, one value), or 0.
int zero_point(Graph& g, const Node& n, int k, DType t, bool vector_ok = false) {
  const int v = in_of(n, k);
  if (v < 0) return scalar(g, n, t, 0.0);
  const Value& z = g.values[v];
  if (z.dtype != t) throw Error("shape", n.label() + ": zero point " + std::to_string(k) + " must be " + dtype_name(t) + ", got " + dtype_name(z.dtype));
  if (z.shape_known && shape_numel(z.shape) != 1 && !(vector_ok && row_vector(z.shape)))
    throw Error("shape", n.label() + ": zero point " + std::to_string(k) + (vector_ok ? " must be a scalar or one value per column, got " : " must be a scalar, got ") +
                             shape_str(z.shape));
  return v;
}
int dequantized(RewriteNodes& w, int x, int scale, int zp) { return w.op("DequantizeLinear", {x, scale, zp}, {}, -1, 19); }
int quantized(RewriteNodes& w, int x, int scale, int zp, int out) { return w.op("QuantizeLinear", {x, scale, zp}, {}, out, 19); }

// The operands of a one-input quantized op (X, X_scale, X_zp?, Y_scale, Y_zp?), checked: X's
// type and both zero points (0 of that type where omitted).
struct UnaryQuant {
  DType t;
  int xz, yz;
};
UnaryQuant unary_quant(Graph& g, const Node& n) {
  need_q8(g, n, 0, "X");
  need_scale(g, n, 1, "X_scale");
  need_scale(g, n, 3, "Y_scale");
  const DType t = g.values[n.inputs[0]].dtype;
  return {t, zero_point(g, n, 2, t), zero_point(g, n, 4, t)};
}

// (X, X_scale, X_zp?, Y_scale, Y_zp?) -> Y = Q(f(DQ(X))): the activations and pools.
bool qlinear_unary_expand(Graph& g, size_t index, const std::function<int(RewriteNodes&, int, const Node&)>& f) {
  const Node n = g.nodes[index];
  if (!all_known(g, n)) return false;
  const UnaryQuant q = unary_quant(g, n);
  RewriteNodes w{g, n.name, {}};
  quantized(w, f(w, dequantized(w, n.inputs[0], n.inputs[1], q.xz), n), n.inputs[3], q.yz, out_of(n, 0));
  w.replace(index);
  return true;
}

// NHWC <-> NCHW around QLinearAveragePool when channels_last (perm of rank r: channels from the last axis).
int to_channels_first(RewriteNodes& w, int x, size_t r) {
  std::vector<int64_t> perm{0, static_cast<int64_t>(r) - 1};
  for (size_t d = 1; d + 1 < r; ++d) perm.push_back(static_cast<int64_t>(d));
  return w.op("Transpose", {x}, {{"perm", perm}});
}
int to_channels_last(RewriteNodes& w, int x, size_t r) {
  std::vector<int64_t> perm{0};
  for (size_t d = 2; d < r; ++d) perm.push_back(static_cast<int64_t>(d));
  perm.push_back(1);
  return w.op("Transpose", {x}, {{"perm", perm}});
}
int qlinear_average_pool(RewriteNodes& w, int x, const Node& n) {
  const size_t r = w.g.values[n.inputs[0]].shape.size();
  if (r < 3) throw Error("shape", n.label() + ": X must have a batch, a channel and at least one spatial axis, got rank " + std::to_string(r));
  const bool last = n.attr_i("channels_last", 0) != 0;
  if (last) x = to_channels_first(w, x, r);
  std::map<std::string, AttrValue> attrs;
  for (const char* a : {"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides", "dilations"})
    if (n.has_attr(a)) attrs[a] = n.attrs.at(a);
  int y = w.op("AveragePool", {x}, attrs, -1, 19);
  return last ? to_channels_last(w, y, r) : y;
}

// saturate(round_half_even(v + zp)), or saturate(round_half_even(v) + zp) when round_first, in
// dtype t (v float32, zp a value of dtype t): onnxruntime's kernels differ in that order
// (QLinearMul adds first, MLAS's requantization rounds first), which decides exact halves.
int requantized(RewriteNodes& w, const Node& n, int v, int zp, DType t, int out, bool round_first) {
  const int zf = w.op("Cast", {zp}, {{"to", int64_t{dtype_to_onnx(DType::f32)}}});
  double l, h;
  quant_int_range(t, &l, &h);
  const int lo = scalar(w.g, n, DType::f32, l), hi = scalar(w.g, n, DType::f32, h);
  const int r = round_first ? w.op("Add", {w.op("Round", {v}), zf}) : w.op("Round", {w.op("Add", {v, zf})});
  return w.op("Cast", {w.op("Clip", {r, lo, hi})}, {{"to", int64_t{dtype_to_onnx(t)}}}, out);
}

// QLinearAveragePool as onnxruntime's kernel computes it: the float32 average of DQ(X), then
// saturate(round_half_even(average / y_scale + y_zp)) (the zero point added before rounding).
bool qlinear_average_pool_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  if (!all_known(g, n)) return false;
  const UnaryQuant q = unary_quant(g, n);
  RewriteNodes w{g, n.name, {}};
  const int avg = qlinear_average_pool(w, dequantized(w, n.inputs[0], n.inputs[1], q.xz), n);
  requantized(w, n, w.op("Div", {avg, n.inputs[3]}), q.yz, q.t, out_of(n, 0), false);
  w.replace(index);
  return true;
}

// QLinearGlobalAveragePool as onnxruntime's kernel (MLAS) computes it: the int32 sum of
// X - x_zp over the image (exact), times x_scale / (y_scale * image size) in float32.
bool qlinear_global_pool_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  if (!all_known(g, n)) return false;
  const UnaryQuant q = unary_quant(g, n);
  const Shape x = g.values[n.inputs[0]].shape;
  if (x.size() < 3) throw Error("shape", n.label() + ": X must have a batch, a channel and at least one spatial axis, got rank " + std::to_string(x.size()));
  const bool last = n.attr_i("channels_last", 0) != 0;
  std::vector<int64_t> axes;
  int64_t image = 1;
  for (size_t d = last ? 1 : 2; d + (last ? 1 : 0) < x.size(); ++d) axes.push_back(static_cast<int64_t>(d)), image *= x[d];
  RewriteNodes w{g, n.name, {}};
  const auto i32 = [&](int v) { return w.op("Cast", {v}, {{"to", int64_t{dtype_to_onnx(DType::i32)}}}); };
  const int sum = w.op("ReduceSum", {w.op("Sub", {i32(n.inputs[0]), i32(q.xz)}), w.ints(axes)}, {{"keepdims", int64_t{1}}}, -1, 18);
  const int scale = w.op("Div", {n.inputs[1], w.op("Mul", {n.inputs[3], scalar(g, n, DType::f32, static_cast<double>(image))})});
  const int v = w.op("Mul", {w.op("Cast", {sum}, {{"to", int64_t{dtype_to_onnx(DType::f32)}}}), scale});
  requantized(w, n, v, q.yz, q.t, out_of(n, 0), true);
  w.replace(index);
  return true;
}

// Two quantized operands at inputs a and b, each followed by its scale and zero point, and the
// output's scale and zero point at c, checked: their one type and the three zero points.
struct BinaryQuant {
  DType t;
  int az, bz, cz;
};
BinaryQuant binary_quant(Graph& g, const Node& n, int a, int b, int c, const std::string& an, const std::string& bn, const std::string& cn) {
  need_q8(g, n, a, an.c_str());
  need_q8(g, n, b, bn.c_str());
  need_scale(g, n, a + 1, (an + "_scale").c_str());
  need_scale(g, n, b + 1, (bn + "_scale").c_str());
  need_scale(g, n, c, (cn + "_scale").c_str());
  const DType t = g.values[n.inputs[a]].dtype, tb = g.values[n.inputs[b]].dtype;
  if (tb != t) throw Error("shape", n.label() + ": " + an + " and " + bn + " must have one type, got " + dtype_name(t) + " and " + dtype_name(tb));
  return {t, zero_point(g, n, a + 2, t), zero_point(g, n, b + 2, t), zero_point(g, n, c + 1, t)};
}

// (A, A_scale, A_zp?, B, B_scale, B_zp?, C_scale, C_zp?) -> C = Q(DQ(A) op DQ(B)).
bool qlinear_binary_expand(Graph& g, size_t index, const char* op) {
  const Node n = g.nodes[index];
  if (!all_known(g, n)) return false;
  const auto [t, az, bz, cz] = binary_quant(g, n, 0, 3, 6, "A", "B", "C");
  RewriteNodes w{g, n.name, {}};
  if (std::string(op) == "Mul") {
    // onnxruntime's kernel (MLAS QLinearMul): the integer product (exact in int32, and in
    // float32: |p| <= 2^16) times A_scale * B_scale / C_scale, plus C's zero point, rounded
    // half to even and saturated; the DequantizeLinear form rounds each factor first.
    const auto i32 = [&](int v) { return w.op("Cast", {v}, {{"to", int64_t{dtype_to_onnx(DType::i32)}}}); };
    const auto f32 = [&](int v) { return w.op("Cast", {v}, {{"to", int64_t{dtype_to_onnx(DType::f32)}}}); };
    const int p = w.op("Mul", {w.op("Sub", {i32(n.inputs[0]), i32(az)}), w.op("Sub", {i32(n.inputs[3]), i32(bz)})});
    const int ratio = w.op("Div", {w.op("Mul", {n.inputs[1], n.inputs[4]}), n.inputs[6]});
    requantized(w, n, w.op("Mul", {f32(p), ratio}), cz, t, out_of(n, 0), false);
  } else {
    const int a = dequantized(w, n.inputs[0], n.inputs[1], az), b = dequantized(w, n.inputs[3], n.inputs[4], bz);
    quantized(w, w.op(op, {a, b}), n.inputs[6], cz, out_of(n, 0));
  }
  w.replace(index);
  return true;
}

// (Y_scale, Y_zp, X0, X0_scale, X0_zp, ...) -> Y = Q(Concat(DQ(Xi))).
bool qlinear_concat_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  if (!all_known(g, n)) return false;
  if (n.inputs.size() < 5 || (n.inputs.size() - 2) % 3 != 0)
    throw Error("shape", n.label() + ": inputs must be Y_scale, Y_zero_point and (X, X_scale, X_zero_point) triples, got " + std::to_string(n.inputs.size()));
  need_scale(g, n, 0, "Y_scale");
  need_q8(g, n, 2, "X0");
  const DType t = g.values[n.inputs[2]].dtype;
  const int yz = zero_point(g, n, 1, t);
  RewriteNodes w{g, n.name, {}};
  std::vector<int> parts;
  for (size_t i = 2; i < n.inputs.size(); i += 3) {
    const int k = static_cast<int>(i);
    need_q8(g, n, k, "X");
    if (g.values[n.inputs[i]].dtype != t) throw Error("shape", n.label() + ": every X must be " + dtype_name(t) + ", got " + dtype_name(g.values[n.inputs[i]].dtype));
    need_scale(g, n, k + 1, "X_scale");
    parts.push_back(dequantized(w, n.inputs[i], n.inputs[i + 1], zero_point(g, n, k + 2, t)));
  }
  quantized(w, w.op("Concat", parts, {{"axis", n.attr_i("axis", 0)}}, -1, 13), n.inputs[0], yz, out_of(n, 0));
  w.replace(index);
  return true;
}

// (condition, X, x_scale, x_zp, Y, y_scale, y_zp, z_scale, z_zp) -> Z = Q(Where(condition, DQ(X), DQ(Y))).
bool qlinear_where_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  if (!all_known(g, n)) return false;
  if (g.values[n.inputs[0]].dtype != DType::boolean)
    throw Error("shape", n.label() + ": condition must be bool, got " + dtype_name(g.values[n.inputs[0]].dtype));
  const auto [t, xz, yz, zz] = binary_quant(g, n, 1, 4, 7, "X", "Y", "Z");
  RewriteNodes w{g, n.name, {}};
  const int x = dequantized(w, n.inputs[1], n.inputs[2], xz), y = dequantized(w, n.inputs[4], n.inputs[5], yz);
  quantized(w, w.op("Where", {n.inputs[0], x, y}), n.inputs[7], zz, out_of(n, 0));
  w.replace(index);
  return true;
}

// com.microsoft QuantizeLinear / DequantizeLinear (what onnxruntime's quantizer writes for 16-bit
// and 4-bit types below opset 21): the standard op of opset 21, which has those types.
bool contrib_qdq_expand(Graph& g, size_t index, const char* op) {
  const Node n = g.nodes[index];
  RewriteNodes w{g, n.name, {}};
  std::map<std::string, AttrValue> attrs;
  if (n.has_attr("axis")) attrs["axis"] = n.attrs.at("axis");
  std::vector<int> ins(n.inputs.begin(), n.inputs.end());
  while (!ins.empty() && ins.back() < 0) ins.pop_back();
  w.op(op, ins, attrs, out_of(n, 0), 21);
  w.replace(index);
  return true;
}

// The exact int32 product (a - az)(b - bz) (MatMulInteger; bz a scalar or one per column).
int integer_product(RewriteNodes& w, int a, int b, int az, int bz) {
  return w.op("MatMulInteger", {a, b, az, w.op("Reshape", {bz, w.ints({-1})})}, {}, -1, 10);
}
int to_f32(RewriteNodes& w, int v) { return w.op("Cast", {v}, {{"to", int64_t{dtype_to_onnx(DType::f32)}}}); }

// MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zp?, b_zp?, bias?) and
// DynamicQuantizeMatMul(A float, B, b_scale, b_zp?, bias?) (A quantized by
// DynamicQuantizeLinear first), as onnxruntime's dynamically quantized transformers use them:
// Y = float32((A - a_zp)(B - b_zp)) * (a_scale * b_scale) + bias, the product exact in int32.
bool matmul_integer_to_float_expand(Graph& g, size_t index, bool dynamic) {
  const Node n = g.nodes[index];
  if (!all_known(g, n)) return false;
  const int b = n.inputs[1];
  need_q8(g, n, 1, "B");
  RewriteNodes w{g, n.name, {}};
  int a = n.inputs[0], as = -1, az = -1;
  if (dynamic) {
    need_float(g, n, 0, "A");
    if (g.values[a].dtype != DType::f32) throw Error("shape", n.label() + ": A must be float32, got " + dtype_name(g.values[a].dtype));
    Node d;  // DynamicQuantizeLinear's three outputs
    d.name = g.unique_name(n.name + "/DynamicQuantizeLinear");
    d.op_type = "DynamicQuantizeLinear";
    d.opset = 11;
    d.inputs = {a};
    d.outputs = {g.add_value(d.name + ":0"), g.add_value(d.name + ":1"), g.add_value(d.name + ":2")};
    a = d.outputs[0], as = d.outputs[1], az = d.outputs[2];
    w.nodes.push_back(std::move(d));
  } else {
    need_q8(g, n, 0, "A");
    need_scale(g, n, 2, "a_scale");
    as = n.inputs[2];
    az = zero_point(g, n, 4, g.values[a].dtype);
  }
  const int bsi = dynamic ? 2 : 3, bzi = dynamic ? 3 : 5, biasi = dynamic ? 4 : 6;
  need_scale(g, n, bsi, "b_scale", true);
  const int bz = zero_point(g, n, bzi, g.values[b].dtype, true);
  const Shape& bshape = g.values[b].shape;
  const int64_t N = bshape.empty() ? 1 : bshape.back();
  for (int v : {n.inputs[bsi], bz})  // per column: [N] (or [1, N], as onnxruntime takes it)
    if (shape_numel(g.values[v].shape) != 1 && !(row_vector(g.values[v].shape) && g.values[v].shape.back() == N))
      throw Error("shape", n.label() + ": " + (v == bz ? "b_zero_point" : "b_scale") + " must be a scalar or [" + std::to_string(N) + "], got " +
                               shape_str(g.values[v].shape));
  const int scale = w.op("Mul", {as, n.inputs[bsi]});
  const int y = w.op("Mul", {to_f32(w, integer_product(w, a, b, az, bz)), scale}, {}, in_of(n, biasi) < 0 ? out_of(n, 0) : -1);
  if (const int bias = in_of(n, biasi); bias >= 0) {
    if (g.values[bias].dtype != DType::f32) throw Error("shape", n.label() + ": bias must be float32, got " + dtype_name(g.values[bias].dtype));
    w.op("Add", {y, bias}, {}, out_of(n, 0));
  }
  w.replace(index);
  return true;
}

void matmul_integer_to_float_infer(InferContext& ctx) {
  const Shape& a = ctx.shape(0);
  const Shape& b = ctx.shape(1);
  if (a.empty() || b.size() != 2) ctx.fail("A must have a rank and B must be 2-D");
  Shape y = a;
  y.back() = b[1];
  ctx.set_output(0, DType::f32, y);
}

// MatMulNBits: unpacks B's codes (and packed zero points) with BitShift / BitwiseAnd, dequantizes
// them per block in float32 and multiplies (the header's formula); standard ops only, so a
// constant weight folds to its float matrix and the MatMul fuses as any other.
int f32_of(RewriteNodes& w, int v) { return w.g.values[v].dtype == DType::f32 ? v : to_f32(w, v); }

// uint8 `packed` of shape s = [.., C] holding 8 / bits codes per byte, low bits first -> uint8
// [.., C * 8 / bits] (s given: a value made by the rewrite has no shape yet).
int unpack_codes(RewriteNodes& w, const Node& n, int packed, Shape s, int64_t bits) {
  if (bits == 8) return packed;
  const int64_t per = 8 / bits;
  const int mask = scalar(w.g, n, DType::u8, static_cast<double>((1 << bits) - 1)), axis = w.ints({-1});
  std::vector<int> parts;
  for (int64_t j = 0; j < per; ++j) {
    int v = packed;
    if (j > 0) v = w.op("BitShift", {v, scalar(w.g, n, DType::u8, static_cast<double>(j * bits))}, {{"direction", std::string("RIGHT")}});
    parts.push_back(w.op("Unsqueeze", {w.op("BitwiseAnd", {v, mask}), axis}));
  }
  s.back() *= per;
  return w.op("Reshape", {w.op("Concat", parts, {{"axis", int64_t{-1}}}), w.ints(s)});
}

bool matmul_nbits_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  if (!all_known(g, n)) return false;
  need_float(g, n, 0, "A");
  const int64_t K = n.attr_i("K", 0), N = n.attr_i("N", 0), bits = n.attr_i("bits", 4), bs = n.attr_i("block_size", 0);
  auto bad = [&](const std::string& why) { return Error("shape", n.label() + ": " + why); };
  if (K <= 0 || N <= 0 || K > (int64_t{1} << 40) || N > (int64_t{1} << 40))
    throw bad("attributes K and N must be positive, got K=" + std::to_string(K) + " N=" + std::to_string(N));
  if (bits != 2 && bits != 4 && bits != 8) throw Unsupported("onnx", n.label() + ": bits=" + std::to_string(bits) + " is not supported (2, 4 or 8)");
  if (bs < 16 || bs > (int64_t{1} << 20) || (bs & (bs - 1)) != 0) throw bad("block_size must be a power of two >= 16, got " + std::to_string(bs));
  if (in_of(n, 4) >= 0) throw Unsupported("onnx", n.label() + ": g_idx (act-order GPTQ) is not supported");
  const DType t = g.values[n.inputs[0]].dtype;
  const Shape& as = g.values[n.inputs[0]].shape;
  if (as.empty() || as.back() != K) throw bad("A must be [..., " + std::to_string(K) + "] (K), got " + shape_str(as));
  const int64_t nb = (K + bs - 1) / bs, blob = bs * bits / 8;
  const int b = n.inputs[1], sc = n.inputs[2], zp = in_of(n, 3), bias = in_of(n, 5);
  if (g.values[b].dtype != DType::u8 || g.values[b].shape != Shape{N, nb, blob})
    throw bad("B must be uint8 [" + std::to_string(N) + ", " + std::to_string(nb) + ", " + std::to_string(blob) + "] (N, k_blocks, blob), got " +
              dtype_name(g.values[b].dtype) + " " + shape_str(g.values[b].shape));
  if (g.values[sc].dtype != t || shape_numel(g.values[sc].shape) != N * nb)
    throw bad("scales must be " + std::string(dtype_name(t)) + " with N * k_blocks = " + std::to_string(N * nb) + " elements, got " +
              dtype_name(g.values[sc].dtype) + " " + shape_str(g.values[sc].shape));
  const int64_t zp_bytes = (nb * bits + 7) / 8;  // per row, packed
  const DType zt = zp >= 0 ? g.values[zp].dtype : DType::u8;
  const bool float_zp = zt == DType::f32 || zt == DType::f16 || zt == DType::bf16;  // unpacked, any float type (onnxruntime's T3)
  if (zp >= 0 && !((zt == DType::u8 && shape_numel(g.values[zp].shape) == N * zp_bytes) ||
                   (float_zp && shape_numel(g.values[zp].shape) == N * nb)))
    throw bad("zero_points must be uint8 with " + std::to_string(N * zp_bytes) + " elements (packed) or float with " +
              std::to_string(N * nb) + ", got " + dtype_name(zt) + " " + shape_str(g.values[zp].shape));
  if (bias >= 0 && (g.values[bias].dtype != t || g.values[bias].shape != Shape{N}))
    throw bad("bias must be " + std::string(dtype_name(t)) + " [" + std::to_string(N) + "], got " + dtype_name(g.values[bias].dtype) + " " +
              shape_str(g.values[bias].shape));
  RewriteNodes w{g, n.name, {}};
  const int codes = w.op("Reshape", {unpack_codes(w, n, b, g.values[b].shape, bits), w.ints({N, nb, bs})});
  int z = -1;
  if (zp < 0) {
    z = scalar(g, n, DType::f32, static_cast<double>(int64_t{1} << (bits - 1)));
  } else if (g.values[zp].dtype == DType::u8) {
    const int rows = unpack_codes(w, n, w.op("Reshape", {zp, w.ints({N, zp_bytes})}), {N, zp_bytes}, bits);  // [N, zp_bytes * 8 / bits]
    const int first = w.op("Slice", {rows, w.ints({0}), w.ints({nb}), w.ints({1})});
    z = w.op("Reshape", {to_f32(w, first), w.ints({N, nb, 1})});
  } else {
    z = w.op("Reshape", {f32_of(w, zp), w.ints({N, nb, 1})});
  }
  const int scale = w.op("Reshape", {f32_of(w, sc), w.ints({N, nb, 1})});
  const int deq = w.op("Mul", {w.op("Sub", {to_f32(w, codes), z}), scale});  // [N, nb, bs]
  int wt = w.op("Reshape", {deq, w.ints({N, nb * bs})});
  if (nb * bs != K) wt = w.op("Slice", {wt, w.ints({0}), w.ints({K}), w.ints({1})});
  wt = w.op("Transpose", {wt}, {{"perm", std::vector<int64_t>{1, 0}}});  // [K, N]
  const bool narrow = t != DType::f32;
  int y = w.op("MatMul", {f32_of(w, n.inputs[0]), wt}, {}, narrow || bias >= 0 ? -1 : out_of(n, 0));
  if (bias >= 0) y = w.op("Add", {y, f32_of(w, bias)}, {}, narrow ? -1 : out_of(n, 0));
  if (narrow) w.op("Cast", {y}, {{"to", int64_t{dtype_to_onnx(t)}}}, out_of(n, 0));
  w.replace(index);
  return true;
}

// GatherBlockQuantized(data, indices, scales, zero_points?) bits=4 block_size=128 gather_axis=0
// quantize_axis=1 (onnxruntime's contrib kernel, its defaults): data dequantized per block of
// quantize_axis, (code - zp) * scale in float32 rounded once to the scales' type, then Gather
// along gather_axis. uint8 data packs 8 / bits codes (2, 4 or 8 bits) per byte along the last
// axis, which must be quantize_axis, zero points packed alike (default 2^(bits - 1)); int4 / uint4
// data has the logical shape, zero points of its type shaped as the scales (default 0); float8 /
// float4e2m1 data is symmetric (no zero points), block_size 0 means one block per row and scales
// may broadcast (dim 1) on the other axes. A constant table folds to its float values.
namespace {
bool gbq_float_codes(DType t) {
  return t == DType::f8e4m3fn || t == DType::f8e4m3fnuz || t == DType::f8e5m2 || t == DType::f8e5m2fnuz || t == DType::f4e2m1;
}

// The axis attribute `name` of n normalised to [0, r); Error("shape") outside.
int64_t gbq_axis(const Node& n, const char* name, int64_t dflt, int64_t r) {
  const int64_t a = n.attr_i(name, dflt), k = a < 0 ? a + r : a;
  if (k < 0 || k >= r)
    throw Error("shape", n.label() + ": " + name + " " + std::to_string(a) + " is outside data's rank " + std::to_string(r));
  return k;
}

// data's logical shape: uint8 data's last axis holds 8 / bits codes per byte.
Shape gbq_logical_shape(const Node& n, const Shape& ds, DType dt) {
  Shape l = ds;
  if (dt == DType::u8 && !l.empty() && l.back() >= 0) l.back() *= 8 / std::clamp<int64_t>(n.attr_i("bits", 4), 1, 8);
  return l;
}
}  // namespace

bool gather_block_quantized_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  if (!all_known(g, n)) return false;
  auto bad = [&](const std::string& why) { return Error("shape", n.label() + ": " + why); };
  const int data = n.inputs[0], sc = n.inputs[2], zp = in_of(n, 3);
  const Shape ds = g.values[data].shape;
  const DType dt = g.values[data].dtype, st = g.values[sc].dtype;
  const bool packed = dt == DType::u8, fp = gbq_float_codes(dt);
  if (!packed && !fp && dt != DType::i4 && dt != DType::u4)
    throw Unsupported("onnx", n.label() + ": data of type " + dtype_name(dt) + " is not supported (uint8, int4, uint4, float8 or float4e2m1)");
  if (st != DType::f32 && st != DType::f16 && st != DType::bf16) throw bad("scales must be float, float16 or bfloat16, got " + std::string(dtype_name(st)));
  const int64_t bits = n.attr_i("bits", 4), bs = n.attr_i("block_size", 128), r = static_cast<int64_t>(ds.size());
  if (packed ? bits != 2 && bits != 4 && bits != 8 : (!fp && bits != 4))
    throw Unsupported("onnx", n.label() + ": bits=" + std::to_string(bits) + " is not supported (" + (packed ? "2, 4 or 8" : "4") + " for " + dtype_name(dt) + " data)");
  if (!(fp && bs == 0) && (bs < 16 || bs > (int64_t{1} << 20) || (bs & (bs - 1)) != 0))
    throw bad("block_size must be a power of two >= 16" + std::string(fp ? " or 0" : "") + ", got " + std::to_string(bs));
  if (r < 1) throw bad("data must have a rank, got a scalar");
  const int64_t qa = gbq_axis(n, "quantize_axis", 1, r), ga = gbq_axis(n, "gather_axis", 0, r);
  if (packed && qa != r - 1) throw bad("quantize_axis must be the last axis of uint8 data, got " + std::to_string(n.attr_i("quantize_axis", 1)));
  const int64_t per = packed ? 8 / bits : 1;
  const Shape ls = gbq_logical_shape(n, ds, dt);
  const int64_t D = ls[qa], ebs = bs == 0 ? std::max<int64_t>(D, 1) : bs, nb = (D + ebs - 1) / ebs;
  const Shape& ss = g.values[sc].shape;
  bool scales_fit = ss.size() == ls.size();
  for (size_t k = 0; scales_fit && k < ss.size(); ++k)
    scales_fit = static_cast<int64_t>(k) == qa ? ss[k] == nb : ss[k] == ls[k] || (fp && ss[k] == 1);
  if (!scales_fit) {
    Shape want = ls;
    want[qa] = nb;
    throw bad("scales must be " + shape_str(want) + (fp ? " (or 1 on axes other than quantize_axis)" : "") + ", got " + shape_str(ss));
  }
  if (zp >= 0) {
    if (fp) throw bad("zero_points must be absent for " + std::string(dtype_name(dt)) + " data");
    Shape zs = ss;
    if (packed) zs.back() = (nb + per - 1) / per;
    if (g.values[zp].dtype != dt || g.values[zp].shape != zs)
      throw bad("zero_points must be " + std::string(dtype_name(dt)) + " " + shape_str(zs) + ", got " + dtype_name(g.values[zp].dtype) + " " +
                shape_str(g.values[zp].shape));
  }
  RewriteNodes w{g, n.name, {}};
  std::vector<int64_t> block(static_cast<size_t>(D));
  for (int64_t k = 0; k < D; ++k) block[k] = k / ebs;
  const int of_block = w.ints(block);
  const auto per_code = [&](int v) { return w.op("Gather", {v, of_block}, {{"axis", qa}}); };  // [.., nb, ..] -> [.., D, ..]
  const auto codes_of = [&](int v) { return to_f32(w, packed ? unpack_codes(w, n, v, g.values[v].shape, bits) : v); };
  int q = codes_of(data);
  if (zp >= 0) q = w.op("Sub", {q, per_code(codes_of(zp))});
  else if (packed) q = w.op("Sub", {q, scalar(g, n, DType::f32, static_cast<double>(int64_t{1} << (bits - 1)))});
  const int deq = w.op("Mul", {q, per_code(f32_of(w, sc))});  // scales of dim 1 broadcast
  const int table = st == DType::f32 ? deq : w.op("Cast", {deq}, {{"to", int64_t{dtype_to_onnx(st)}}});
  w.op("Gather", {table, n.inputs[1]}, {{"axis", ga}}, out_of(n, 0));
  w.replace(index);
  return true;
}

void matmul_nbits_infer(InferContext& ctx) {
  Shape y = ctx.shape(0);
  if (y.empty()) ctx.fail("A must have a rank");
  y.back() = ctx.node().attr_i("N", -1);
  ctx.set_output(0, ctx.dtype(0), y);
}

// QGemm: the int32 product (MatMulInteger), the int32 bias, one float32 scale.
bool qgemm_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  if (!all_known(g, n)) return false;
  need_q8(g, n, 0, "A");
  need_q8(g, n, 3, "B");
  need_scale(g, n, 1, "a_scale");
  need_scale(g, n, 4, "b_scale", true);
  const DType ta = g.values[n.inputs[0]].dtype, tb = g.values[n.inputs[3]].dtype;
  const Shape sa = g.values[n.inputs[0]].shape, sb = g.values[n.inputs[3]].shape;
  if (sa.size() != 2 || sb.size() != 2) throw Error("shape", n.label() + ": A and B must be 2-D, got " + shape_str(sa) + " and " + shape_str(sb));
  const bool ta_t = n.attr_i("transA", 0) != 0, tb_t = n.attr_i("transB", 0) != 0;
  const int64_t N = tb_t ? sb[0] : sb[1];
  const int az = zero_point(g, n, 2, ta), bz = zero_point(g, n, 5, tb, true);
  for (int k : {4, 5}) {  // per-column b_scale / b_zero_point: [N]
    const Value& v = g.values[in_of(n, k) >= 0 ? n.inputs[k] : bz];
    if (shape_numel(v.shape) != 1 && v.shape != Shape{N})
      throw Error("shape", n.label() + ": " + (k == 4 ? "b_scale" : "b_zero_point") + " must be a scalar or [" + std::to_string(N) + "], got " + shape_str(v.shape));
  }
  RewriteNodes w{g, n.name, {}};
  const std::vector<int64_t> swap{1, 0};
  const int a = ta_t ? w.op("Transpose", {n.inputs[0]}, {{"perm", swap}}) : n.inputs[0];
  const int b = tb_t ? w.op("Transpose", {n.inputs[3]}, {{"perm", swap}}) : n.inputs[3];
  int acc = integer_product(w, a, b, az, bz);
  if (const int c = in_of(n, 6); c >= 0) {
    if (g.values[c].dtype != DType::i32) throw Error("shape", n.label() + ": C must be int32, got " + dtype_name(g.values[c].dtype));
    acc = w.op("Add", {acc, c});
  }
  const int f = to_f32(w, acc);
  const int ab = w.op("Mul", {w.op("Mul", {n.inputs[1], n.inputs[4]}), scalar(g, n, DType::f32, n.attr_f("alpha", 1.0))});
  // A quantized output needs y_zero_point: without it the output is float32, divided by y_scale
  // when that is given (onnxruntime's kernel: its output scale a_scale b_scale / y_scale).
  const int ys = in_of(n, 7), yz = in_of(n, 8);
  if (yz < 0) {
    if (ys >= 0) need_scale(g, n, 7, "y_scale");
    w.op("Mul", {f, ys >= 0 ? w.op("Div", {ab, ys}) : ab}, {}, out_of(n, 0));
  } else {
    if (ys < 0) throw Error("shape", n.label() + ": y_zero_point needs y_scale");
    need_scale(g, n, 7, "y_scale");
    if (g.values[yz].dtype != DType::u8 && g.values[yz].dtype != DType::i8)
      throw Error("shape", n.label() + ": y_zero_point must be uint8 or int8, got " + dtype_name(g.values[yz].dtype));
    quantized(w, w.op("Mul", {f, ab}), ys, yz, out_of(n, 0));
  }
  w.replace(index);
  return true;
}


// float32((input - input_zp)(weight - weight_zp)) * (input_scale * weight_scale) + bias.
bool qattention_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  if (!all_known(g, n)) return false;
  need_q8(g, n, 0, "input");
  need_q8(g, n, 1, "weight");
  need_scale(g, n, 3, "input_scale");
  need_scale(g, n, 4, "weight_scale", true);
  if (g.values[n.inputs[2]].dtype != DType::f32) throw Error("shape", n.label() + ": bias must be float32, got " + dtype_name(g.values[n.inputs[2]].dtype));
  const int iz = zero_point(g, n, 6, g.values[n.inputs[0]].dtype), wz = zero_point(g, n, 7, g.values[n.inputs[1]].dtype, true);
  const Shape& ws = g.values[n.inputs[1]].shape;
  for (int v : {n.inputs[4], wz})  // per column: [3 x hidden]
    if (shape_numel(g.values[v].shape) != 1 && (ws.size() != 2 || g.values[v].shape != Shape{ws[1]}))
      throw Error("shape", n.label() + ": weight_scale and weight_zero_point must be scalars or per column, got " + shape_str(g.values[v].shape));
  Node a = n;  // Attention's layout: input, weights, bias, mask_index, past
  a.op_type = "Attention";  // the domain (com.microsoft) stays
  a.inputs = {n.inputs[0], n.inputs[1], n.inputs[2], in_of(n, 5), in_of(n, 8)};
  while (!a.inputs.empty() && a.inputs.back() < 0) a.inputs.pop_back();
  return attention_expand_as(g, index, a, [&](RewriteNodes& w) {
    const int f = w.op("Mul", {to_f32(w, integer_product(w, n.inputs[0], n.inputs[1], iz, wz)), w.op("Mul", {n.inputs[3], n.inputs[4]})});
    return w.op("Add", {f, n.inputs[2]});
  });
}

// QEmbedLayerNormalization: EmbedLayerNormalization over the dequantized tables and gamma / beta
// (inputs 0-7 as EmbedLayerNormalization's, then the scales 8-12 and zero points 13-17 of
// word, position, segment, gamma, beta).
bool qembed_norm_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  if (!all_known(g, n)) return false;
  RewriteNodes w{g, n.name, {}};
  Node e = n;
  e.op_type = "EmbedLayerNormalization";  // the domain (com.microsoft) stays
  e.inputs.assign(n.inputs.begin(), n.inputs.begin() + std::min<size_t>(8, n.inputs.size()));
  for (int k : {2, 3, 4, 5, 6}) {
    if (in_of(n, k) < 0) continue;
    need_q8(g, n, k, "a quantized table");
    need_scale(g, n, k + 6, "its scale");
    e.inputs[k] = dequantized(w, n.inputs[k], n.inputs[k + 6], zero_point(g, n, k + 11, g.values[n.inputs[k]].dtype));
  }
  while (!e.inputs.empty() && e.inputs.back() < 0) e.inputs.pop_back();
  e.name = g.unique_name(n.name + "/EmbedLayerNormalization");
  w.nodes.push_back(std::move(e));
  w.replace(index);
  return true;
}

// Before expansion (input shapes not all known): the output's dtype and rank, unknown dims -1.
void qlinear_pool_infer(InferContext& ctx, bool global) {
  Shape s = ctx.shape(0);
  const bool last = ctx.node().attr_i("channels_last", 0) != 0;
  for (size_t d = last ? 1 : 2; d + (last ? 1 : 0) < s.size(); ++d) s[d] = global ? 1 : -1;
  ctx.set_output(0, ctx.dtype(0), s);
}
void qlinear_concat_infer(InferContext& ctx) {
  if (ctx.num_inputs() < 3) ctx.fail("needs Y_scale, Y_zero_point and at least one (X, X_scale, X_zero_point)");
  Shape s = ctx.shape(2);
  const int64_t r = static_cast<int64_t>(s.size()), axis = ctx.node().attr_i("axis", 0);
  if (axis >= -r && axis < r) s[static_cast<size_t>(axis < 0 ? axis + r : axis)] = -1;
  ctx.set_output(0, ctx.dtype(2), s);
}

void qgemm_infer(InferContext& ctx) {
  const Shape& a = ctx.shape(0);
  const Shape& b = ctx.shape(3);
  if (a.size() != 2 || b.size() != 2) ctx.fail("A and B must be 2-D");
  const bool ta = ctx.node().attr_i("transA", 0) != 0, tb = ctx.node().attr_i("transB", 0) != 0;
  const bool quant = ctx.node().has_input(8);
  const DType out = !quant ? DType::f32 : ctx.node().has_input(8) ? ctx.dtype(8) : ctx.dtype(0);
  ctx.set_output(0, out, {ta ? a[1] : a[0], tb ? b[0] : b[1]});
}

}  // namespace

namespace contrib {

void register_contrib_quant_ops() {
  const std::string ms = "com.microsoft.";
  register_expanded(ms + "QAttention", 5, 9, 2, [](InferContext& c) {
    const Shape& x = c.shape(0);
    if (x.size() != 3 || c.shape(1).size() != 2) c.fail("input must be [batch, sequence, hidden] and weight 2-D");
    c.set_output(0, DType::f32, {x[0], x[1], c.shape(1)[1] / 3});
  }, qattention_expand, 1u << 5 | 1u << 6 | 1u << 7 | 1u << 8);
  register_expanded(ms + "QEmbedLayerNormalization", 18, 18, 2, [](InferContext& c) {
    const Shape& ids = c.shape(0);
    c.set_output(0, DType::f32, {ids.size() == 2 ? ids[0] : -1, ids.size() == 2 ? ids[1] : -1, c.shape(2).size() == 2 ? c.shape(2)[1] : -1});
  }, qembed_norm_expand, 1u << 1 | 1u << 4 | 1u << 7 | 1u << 10 | 1u << 15);
  // The QOperator format's quantized ops (optional zero points: bits of OpDef::optional_inputs).
  register_expanded(ms + "QLinearAdd", 7, 8, 1, like_input(0), [](Graph& g, size_t i) { return qlinear_binary_expand(g, i, "Add"); },
                    1u << 2 | 1u << 5);
  register_expanded(ms + "QLinearMul", 7, 8, 1, like_input(0), [](Graph& g, size_t i) { return qlinear_binary_expand(g, i, "Mul"); },
                    1u << 2 | 1u << 5);
  register_expanded(ms + "QLinearSigmoid", 4, 5, 1, like_input(0), [](Graph& g, size_t i) {
    return qlinear_unary_expand(g, i, [](RewriteNodes& w, int x, const Node&) { return w.op("Sigmoid", {x}); });
  }, 1u << 2);
  // QLinearSoftmax: Softmax over `axis` (default -1) as the original model's `opset` defines it
  // (before 13: the input flattened to 2-D at axis), between DequantizeLinear and QuantizeLinear.
  register_expanded(ms + "QLinearSoftmax", 4, 5, 1, like_input(0), [](Graph& g, size_t i) {
    return qlinear_unary_expand(g, i, [](RewriteNodes& w, int x, const Node& n) {
      const int opset = static_cast<int>(n.attr_i("opset", 13));
      return w.op("Softmax", {x}, {{"axis", n.attr_i("axis", -1)}}, -1, opset < 13 ? 11 : 13);
    });
  }, 1u << 2);
  register_expanded(ms + "QLinearLeakyRelu", 4, 5, 1, like_input(0), [](Graph& g, size_t i) {
    return qlinear_unary_expand(g, i, [](RewriteNodes& w, int x, const Node& n) {
      return w.op("LeakyRelu", {x}, {{"alpha", n.attr_f("alpha", 0.01)}});
    });
  }, 1u << 2);
  register_expanded(ms + "QLinearGlobalAveragePool", 4, 5, 1, [](InferContext& c) { qlinear_pool_infer(c, true); },
                    qlinear_global_pool_expand, 1u << 2);
  register_expanded(ms + "QLinearAveragePool", 4, 5, 1, [](InferContext& c) { qlinear_pool_infer(c, false); }, qlinear_average_pool_expand,
                    1u << 2);
  register_expanded(ms + "QLinearConcat", 5, 2 + 3 * 4096, 1, qlinear_concat_infer, qlinear_concat_expand);
  register_expanded(ms + "QGemm", 6, 9, 1, qgemm_infer, qgemm_expand, 1u << 6 | 1u << 7 | 1u << 8);
  register_expanded(ms + "MatMulIntegerToFloat", 4, 7, 1, matmul_integer_to_float_infer,
                    [](Graph& g, size_t i) { return matmul_integer_to_float_expand(g, i, false); }, 1u << 4 | 1u << 5 | 1u << 6);
  register_expanded(ms + "DynamicQuantizeMatMul", 3, 5, 1, matmul_integer_to_float_infer,
                    [](Graph& g, size_t i) { return matmul_integer_to_float_expand(g, i, true); }, 1u << 3 | 1u << 4);
  register_expanded(ms + "GatherBlockQuantized", 3, 4, 1, [](InferContext& c) {
    const Shape d = gbq_logical_shape(c.node(), c.shape(0), c.dtype(0)), i = c.shape(1);
    if (d.empty()) c.fail("data must have a rank, got a scalar");
    const int64_t ga = gbq_axis(c.node(), "gather_axis", 0, static_cast<int64_t>(d.size()));
    Shape y(d.begin(), d.begin() + ga);
    y.insert(y.end(), i.begin(), i.end());
    y.insert(y.end(), d.begin() + ga + 1, d.end());
    c.set_output(0, c.dtype(2), y);
  }, gather_block_quantized_expand, 1u << 3);
  register_expanded(ms + "MatMulNBits", 3, 6, 1, matmul_nbits_infer, matmul_nbits_expand, 1u << 3 | 1u << 4 | 1u << 5);
  register_expanded(ms + "QLinearWhere", 9, 9, 1, [](InferContext& c) { c.set_output(0, c.dtype(1), c.shape(1)); }, qlinear_where_expand);
  register_expanded(ms + "QuantizeLinear", 2, 3, 1, [](InferContext& c) { c.set_output(0, c.has_input(2) ? c.dtype(2) : DType::u8, c.shape(0)); },
                    [](Graph& g, size_t i) { return contrib_qdq_expand(g, i, "QuantizeLinear"); });
  register_expanded(ms + "DequantizeLinear", 2, 3, 1, [](InferContext& c) { c.set_output(0, c.dtype(1), c.shape(0)); },
                    [](Graph& g, size_t i) { return contrib_qdq_expand(g, i, "DequantizeLinear"); });
}

}  // namespace contrib
}  // namespace fusor
