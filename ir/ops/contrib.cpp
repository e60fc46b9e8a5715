// onnxruntime's contrib operators (domain com.microsoft), as its transformer optimizer and
// Optimum write them into BERT / GPT-2 style models, and SimplifiedLayerNormalization (which
// onnxruntime registers in the default domain). Each is replaced at shape inference
// (OpDef::expand) by the standard ops it stands for, so every backend fuses and runs it like
// the unoptimized graph; the formulas are onnxruntime's (docs/ContribOperators.md and its CPU
// kernels), checked against onnxruntime 1.32 (tests/test_contrib_ops.cpp):
//
//   Gelu(X)                     0.5 X (1 + erf(X / sqrt 2))                 -> Gelu
//   BiasGelu(A, B)              Gelu(A + B)
//   FastGelu(X, bias?)          the tanh approximation of Gelu(X + bias)    -> Gelu(approximate=tanh)
//   QuickGelu(X) alpha=1.702    X * Sigmoid(alpha X)
//   BiasAdd(X, bias, skip)      X + bias + skip
//   FusedMatMul(A, B)           alpha * op(A) @ op(B), op a transpose of the last two axes when
//                               transA / transB (none for a vector; transBatchA / transBatchB
//                               are refused)
//   SkipLayerNormalization(input, skip, gamma, beta?, bias?) epsilon=1e-12
//                               s = input + skip (+ bias); output = LayerNormalization(s) over
//                               the last axis; outputs (output, mean, inv_std_var, s)
//   SkipSimplifiedLayerNormalization(input, skip, gamma, bias?) epsilon=1e-12
//                               the same with RMSNormalization and no beta
//   SimplifiedLayerNormalization(X, scale) axis=-1 epsilon=1e-5        -> RMSNormalization
//   EmbedLayerNormalization(input_ids, segment_ids?, word_embedding, position_embedding,
//       segment_embedding?, gamma, beta, mask?, position_ids?) epsilon=1e-12
//                               e = word[ids] + position[position_ids or 0..S-1] (+ segment[seg]);
//                               outputs (LayerNormalization(e), mask_index = the entries equal
//                               to 1 in each row of mask, int32 [B] (zeros without a mask), e);
//                               a negative id is refused (Gather's index error), as onnxruntime
//   Attention(input, weights, bias?, mask_index?) num_heads, unidirectional, qkv_hidden_sizes,
//       scale, mask_filter_value=-10000
//                               QKV = input @ weights + bias split into heads; softmax(scale
//                               Q K^T + mask bias) V with heads merged; the mask bias is
//                               mask_filter_value where a key is masked: mask_index [B] (keys
//                               j >= end[b]), [2B] (j >= end[b] or j < start[b]) or the raw
//                               [B, S] mask (kept where > 0); unidirectional gives keys after
//                               the query the lowest float instead; fp16 / bf16 scores are
//                               scaled, masked and softmaxed in float32 (onnxruntime's).
//                               past [2, B, N, P, h] prepends P keys / values (query i at
//                               position P + i; masks then cover T = P + S keys) and present
//                               (output 1) is [2, B, N, T, h]. attention_bias,
//                               past_sequence_length, past_present_share_buffer, rotary and the
//                               other mask layouts are refused (Unsupported, one line).
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
//                               in float32, or Q(Y, y_scale, y_zp) when y_scale is given
// onnxruntime's SIMD kernels compute some of these in fixed point (MLAS's QLinearAdd), so a
// result can sit one step of T from its output at a rounding boundary.
// Errors: Error("shape") / Unsupported naming the node, one line.
#include <cmath>
#include <limits>

#include "ir/ops/attention.h"
#include "ir/ops/op_helpers.h"
#include "ir/small_dtypes.h"

namespace fusor {
namespace {

using namespace op_helpers;

bool all_known(const Graph& g, const Node& n) {
  for (int v : n.inputs) {
    if (v < 0) continue;
    const Value& x = g.values[v];
    if (!x.shape_known) return false;
    for (int64_t d : x.shape)
      if (d < 0) return false;
  }
  return true;
}

int out_of(const Node& n, size_t k) { return k < n.outputs.size() ? n.outputs[k] : -1; }
int in_of(const Node& n, size_t k) { return n.has_input(k) ? n.inputs[k] : -1; }

// onnxruntime types these ops' data float, float16, bfloat16 (and double): an integer operand
// is refused here, in one line, rather than by whichever standard op it would reach.
void need_float(const Graph& g, const Node& n, int i, const char* what) {
  const DType t = g.values[n.inputs[i]].dtype;
  if (t != DType::undefined && t != DType::f32 && t != DType::f16 && t != DType::bf16 && t != DType::f64)
    throw Error("shape", n.label() + ": " + what + " must be float, float16, bfloat16 or double, got " + dtype_name(t));
}

// epsilon must be a number >= 0 (onnxruntime's kernels enforce it; NaN or < 0 gives NaN rows).
double epsilon_of(const Node& n, double dflt) {
  const double e = n.attr_f("epsilon", dflt);
  if (!(e >= 0.0) || !std::isfinite(e)) throw Error("shape", n.label() + ": epsilon must be a finite number >= 0, got " + std::to_string(e));
  return e;
}

// A 1-D [H] parameter (gamma, beta, bias) of a normalization over hidden size H.
void need_hidden(const Graph& g, const Node& n, int v, const char* what, int64_t H) {
  if (v < 0) return;
  const Shape& s = g.values[v].shape;
  if (s.size() != 1 || s[0] != H) throw Error("shape", n.label() + ": " + what + " must be [" + std::to_string(H) + "], got " + shape_str(s));
}

// A scalar constant of dtype t.
int scalar(Graph& g, const Node& n, DType t, double v) {
  Tensor c(t, {});
  c.set(0, v);
  return g.add_constant(g.unique_name(n.name + "/c"), std::move(c));
}

// Shape rule while the node is not yet expanded (unknown dims): output k like input i.
InferFn like_input(int i) {
  return [i](InferContext& ctx) {
    for (int k = 0; k < ctx.num_outputs(); ++k)
      if (ctx.node().outputs[k] >= 0) ctx.set_output(k, ctx.dtype(i), ctx.shape(i));
  };
}
void expanded_ref(const Node& n, const Ins&, Outs&) { ref_fail(n, "runs once its input shapes are known (it is expanded into standard ops then)"); }

void register_expanded(const std::string& name, int min_in, int max_in, int max_out, InferFn infer,
                       std::function<bool(Graph&, size_t)> expand, uint32_t optional_inputs = 0) {
  OpDef d = table_entry(name, min_in, max_in, std::move(infer), expanded_ref, max_out);
  d.expand = std::move(expand);
  d.optional_inputs = optional_inputs;
  register_op(std::move(d));
}

// ---- the Gelu family, BiasAdd, FusedMatMul -------------------------------------------------

bool gelu_expand(Graph& g, size_t index, const char* approximate) {
  const Node n = g.nodes[index];
  for (int i = 0; i < static_cast<int>(n.inputs.size()); ++i)
    if (n.inputs[i] >= 0) need_float(g, n, i, i ? "the bias" : "X");
  RewriteNodes w{g, n.name, {}};
  int x = n.inputs[0];
  if (in_of(n, 1) >= 0) x = w.op("Add", {x, n.inputs[1]});  // BiasGelu's bias is required (min_inputs)
  w.op("Gelu", {x}, {{"approximate", std::string(approximate)}}, out_of(n, 0), 20);
  w.replace(index);
  return true;
}

bool quick_gelu_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  need_float(g, n, 0, "X");
  RewriteNodes w{g, n.name, {}};
  const DType t = g.values[n.inputs[0]].dtype;
  const int ax = w.op("Mul", {n.inputs[0], scalar(g, n, t, n.attr_f("alpha", 1.702))});
  w.op("Mul", {n.inputs[0], w.op("Sigmoid", {ax})}, {}, out_of(n, 0));
  w.replace(index);
  return true;
}

bool bias_add_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  for (int i = 0; i < 3; ++i) need_float(g, n, i, "each input");
  RewriteNodes w{g, n.name, {}};
  w.op("Add", {w.op("Add", {n.inputs[0], n.inputs[1]}), n.inputs[2]}, {}, out_of(n, 0));
  w.replace(index);
  return true;
}

bool fused_matmul_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  if (n.attr_i("transBatchA", 0) || n.attr_i("transBatchB", 0))
    throw Unsupported("onnx", n.label() + ": transBatchA / transBatchB are not supported");
  need_float(g, n, 0, "A");
  need_float(g, n, 1, "B");
  // A transpose needs the operand's rank (its dims may still be unknown).
  for (int i : {0, 1})
    if (n.attr_i(i ? "transB" : "transA", 0) && g.values[n.inputs[i]].shape.empty() && !g.values[n.inputs[i]].shape_known) return false;
  RewriteNodes w{g, n.name, {}};
  const auto last_two = [&](int v) {
    const int64_t r = static_cast<int64_t>(g.values[v].shape.size());
    if (r < 2) return v;  // a vector has nothing to transpose (onnxruntime ignores the flag)
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < r; ++i) perm.push_back(i);
    std::swap(perm[r - 1], perm[r - 2]);
    return w.op("Transpose", {v}, {{"perm", perm}});
  };
  const int a = n.attr_i("transA", 0) ? last_two(n.inputs[0]) : n.inputs[0];
  const int b = n.attr_i("transB", 0) ? last_two(n.inputs[1]) : n.inputs[1];
  const double alpha = n.attr_f("alpha", 1.0);
  if (alpha == 1.0) {
    w.op("MatMul", {a, b}, {}, out_of(n, 0));
  } else {
    w.op("Mul", {w.op("MatMul", {a, b}), scalar(g, n, g.values[n.inputs[0]].dtype, alpha)}, {}, out_of(n, 0));
  }
  w.replace(index);
  return true;
}

// ---- normalizations -----------------------------------------------------------------------

// A LayerNormalization (or RMSNormalization) over the last axis writing outputs[0..2].
void norm_node(RewriteNodes& w, bool layer, int x, int gamma, int beta, double eps, const std::vector<int>& outputs) {
  Node m;
  m.name = w.g.unique_name(w.base + (layer ? "/LayerNormalization" : "/RMSNormalization"));
  m.op_type = layer ? "LayerNormalization" : "RMSNormalization";
  m.opset = layer ? 17 : 23;
  m.inputs = {x, gamma};
  if (layer && beta >= 0) m.inputs.push_back(beta);
  m.attrs = {{"axis", int64_t{-1}}, {"epsilon", eps}};
  for (size_t k = 0; k < outputs.size(); ++k) m.outputs.push_back(outputs[k]);
  if (m.outputs.empty() || m.outputs[0] < 0) {
    if (m.outputs.empty()) m.outputs.push_back(-1);
    m.outputs[0] = w.g.add_value(m.name + ":0");
  }
  while (m.outputs.size() > 1 && m.outputs.back() < 0) m.outputs.pop_back();
  w.nodes.push_back(std::move(m));
}

bool skip_norm_expand(Graph& g, size_t index, bool layer) {
  const Node n = g.nodes[index];
  const double eps = epsilon_of(n, 1e-12);
  if (!all_known(g, n)) return false;
  // SkipLayerNormalization: (input, skip, gamma, beta, bias); the simplified one (input, skip, gamma, bias).
  const int beta = layer ? in_of(n, 3) : -1, bias = in_of(n, layer ? 4 : 3);
  // input [B, S, H] or [S, H]; skip input's shape or its trailing dims ([1, S, H], [S, H]):
  // the output keeps input's shape, so a skip that would broadcast it wider is refused.
  const Shape in = g.values[n.inputs[0]].shape, sk = g.values[n.inputs[1]].shape;
  need_float(g, n, 0, "input");
  if (in.size() < 2 || in.size() > 3)
    throw Error("shape", n.label() + ": input must be [batch, sequence, hidden] or [sequence, hidden], got " + shape_str(in));
  bool skip_ok = sk.size() >= 2 && sk.size() <= in.size();
  for (size_t i = 0; skip_ok && i < sk.size(); ++i) {
    const int64_t d = sk[sk.size() - 1 - i], e = in[in.size() - 1 - i];
    skip_ok = d == e || (d == 1 && i == 2);
  }
  if (!skip_ok) throw Error("shape", n.label() + ": skip " + shape_str(sk) + " does not match input " + shape_str(in));
  const int64_t H = in.back();
  need_hidden(g, n, n.inputs[2], "gamma", H);
  need_hidden(g, n, beta, "beta", H);
  need_hidden(g, n, bias, "bias", H);
  RewriteNodes w{g, n.name, {}};
  const int sum_out = out_of(n, 3);
  int s = w.op("Add", {n.inputs[0], n.inputs[1]}, {}, bias < 0 ? sum_out : -1);
  if (bias >= 0) s = w.op("Add", {s, bias}, {}, sum_out);
  if (!layer && out_of(n, 1) >= 0) throw Unsupported("onnx", n.label() + ": the mean output is not computed by RMS normalization");
  std::vector<int> outs{out_of(n, 0)};
  if (layer) outs.push_back(out_of(n, 1));
  outs.push_back(out_of(n, 2));
  if (!layer && outs.back() >= 0) throw Unsupported("onnx", n.label() + ": the inv_std_var output is not supported");
  if (!layer) outs.pop_back();
  norm_node(w, layer, s, n.inputs[2], beta, eps, outs);
  w.replace(index);
  return true;
}

bool simplified_norm_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  RewriteNodes w{g, n.name, {}};
  Node m;
  m.name = g.unique_name(n.name + "/RMSNormalization");
  m.op_type = "RMSNormalization";
  m.opset = 23;
  m.inputs = {n.inputs[0], n.inputs[1]};
  m.attrs = {{"axis", n.attr_i("axis", -1)}, {"epsilon", epsilon_of(n, 1e-5)}};
  if (n.has_attr("stash_type")) m.attrs["stash_type"] = n.attr_i("stash_type", 1);
  m.outputs = {out_of(n, 0) >= 0 ? out_of(n, 0) : g.add_value(m.name + ":0")};
  if (out_of(n, 1) >= 0) throw Unsupported("onnx", n.label() + ": the inv_std_var output is not supported");
  w.nodes.push_back(std::move(m));
  w.replace(index);
  return true;
}

bool embed_norm_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  if (!all_known(g, n)) return false;
  const double eps = epsilon_of(n, 1e-12);
  const Shape ids = g.values[n.inputs[0]].shape;
  if (ids.size() != 2) throw Error("shape", n.label() + ": input_ids must be [batch, sequence], got " + shape_str(ids));
  const int64_t B = ids[0], S = ids[1];
  RewriteNodes w{g, n.name, {}};
  const int word = n.inputs[2], pos = n.inputs[3], seg_table = in_of(n, 4), gamma = n.inputs[5], beta = n.inputs[6];
  const int seg_ids = in_of(n, 1), mask = in_of(n, 7), pos_ids = in_of(n, 8);
  if ((seg_ids >= 0) != (seg_table >= 0)) throw Error("shape", n.label() + ": segment_ids and segment_embedding come together");
  // Every table [rows, H] of one dtype, gamma / beta [H]; ids, segments, mask and positions [B, S] integers.
  const Shape ws = g.values[word].shape;
  const int64_t H = ws.size() == 2 ? ws[1] : -1;
  need_float(g, n, 2, "word_embedding");
  for (const auto& [v, what] : {std::pair{word, "word_embedding"}, {pos, "position_embedding"}, {seg_table, "segment_embedding"}}) {
    if (v < 0) continue;
    const Value& t = g.values[v];
    if (t.shape.size() != 2 || t.shape[1] != H || t.shape[0] <= 0 || t.dtype != g.values[word].dtype)
      throw Error("shape", n.label() + ": " + what + " must be [rows, " + std::to_string(H) + "] of " + dtype_name(g.values[word].dtype) + ", got " +
                               shape_str(t.shape) + " of " + dtype_name(t.dtype));
  }
  need_hidden(g, n, gamma, "gamma", H);
  need_hidden(g, n, beta, "beta", H);
  for (const auto& [v, what] : {std::pair{n.inputs[0], "input_ids"}, {seg_ids, "segment_ids"}, {mask, "mask"}, {pos_ids, "position_ids"}}) {
    if (v < 0) continue;
    const Value& t = g.values[v];
    const bool one_row = v == pos_ids && t.shape == Shape{1, S};  // position_ids may be [1, S] (onnxruntime)
    if (!dtype_is_int(t.dtype) || (t.shape != ids && !one_row))
      throw Error("shape", n.label() + ": " + what + " must be integers of input_ids' shape " + shape_str(ids) + ", got " + shape_str(t.shape) +
                               " of " + dtype_name(t.dtype));
  }
  if (pos_ids < 0 && g.values[pos].shape[0] < S)
    throw Error("shape", n.label() + ": position_embedding has " + std::to_string(g.values[pos].shape[0]) + " rows for " + std::to_string(S) +
                             " positions");
  // Ids are positions into the tables: a negative one is refused (onnxruntime: "out of range")
  // where Gather would count it from the end, so it is moved below the table's range and
  // Gather's own check refuses it, on every backend (round 13's rule for RotaryEmbedding).
  const auto gather_rows = [&](int table, int idx) {
    const int64_t rows = g.values[table].shape.at(0);
    const DType it = g.values[idx].dtype;
    const auto c = [&](int64_t v) { return w.op("Cast", {w.ints({v})}, {{"to", int64_t{dtype_to_onnx(it)}}}); };
    const int safe = w.op("Where", {w.op("Less", {idx, c(0)}), w.op("Sub", {idx, c(rows)}), idx});
    return w.op("Gather", {table, safe});
  };
  int e = gather_rows(word, n.inputs[0]);
  int p;
  if (pos_ids >= 0) {
    p = gather_rows(pos, pos_ids);
  } else {  // positions 0 .. S-1, the same for every row
    std::vector<int64_t> seq(static_cast<size_t>(S));
    for (int64_t i = 0; i < S; ++i) seq[i] = i;
    p = w.op("Unsqueeze", {w.op("Gather", {pos, w.ints(seq)}), w.ints({0})});
  }
  e = w.op("Add", {e, p});
  if (seg_ids >= 0) e = w.op("Add", {e, gather_rows(seg_table, seg_ids)});
  if (out_of(n, 2) >= 0) e = w.op("Identity", {e}, {}, out_of(n, 2));
  norm_node(w, true, e, gamma, beta, eps, {out_of(n, 0)});
  if (out_of(n, 1) >= 0) {
    if (mask >= 0) {
      // The entries equal to 1 per row (onnxruntime counts those, not the row's sum).
      const int ones = w.op("Cast", {w.op("Equal", {mask, w.op("Cast", {w.ints({1})}, {{"to", int64_t{dtype_to_onnx(g.values[mask].dtype)}}})})},
                            {{"to", int64_t{dtype_to_onnx(DType::i64)}}});
      w.op("Cast", {w.op("ReduceSum", {ones, w.ints({1})}, {{"keepdims", int64_t{0}}}, -1, 18)}, {{"to", int64_t{dtype_to_onnx(DType::i32)}}},
           out_of(n, 1));
    } else {
      Tensor z(DType::i32, {B});
      w.op("Identity", {g.add_constant(g.unique_name(n.name + "/mask_index"), std::move(z))}, {}, out_of(n, 1));
    }
  }
  w.replace(index);
  return true;
}

void embed_norm_infer(InferContext& ctx) {
  const Shape& ids = ctx.shape(0);
  const Shape& word = ctx.shape(2);
  if (ids.size() != 2 || word.size() != 2) ctx.fail("input_ids must be [batch, sequence] and word_embedding [vocab, hidden]");
  if (ctx.node().outputs[0] >= 0) ctx.set_output(0, ctx.dtype(2), {ids[0], ids[1], word[1]});
  if (ctx.num_outputs() > 1 && ctx.node().outputs[1] >= 0) ctx.set_output(1, DType::i32, {ids[0]});
  if (ctx.num_outputs() > 2 && ctx.node().outputs[2] >= 0) ctx.set_output(2, ctx.dtype(2), {ids[0], ids[1], word[1]});
}

// ---- Attention -------------------------------------------------------------------------------

// Attention node n (at index) in Attention's input layout; `project`, when given, makes the
// QKV projection (input @ weights + bias) instead of the float MatMul (QAttention's integer one).
bool attention_expand_as(Graph& g, size_t index, const Node& n, const std::function<int(RewriteNodes&)>& project) {
  for (size_t k = 5; k < n.inputs.size(); ++k)
    if (n.inputs[k] >= 0) throw Unsupported("onnx", n.label() + ": attention_bias and past_sequence_length inputs are not supported");
  if (n.attr_i("past_present_share_buffer", 0)) throw Unsupported("onnx", n.label() + ": past_present_share_buffer is not supported");
  if (n.attr_i("do_rotary", 0)) throw Unsupported("onnx", n.label() + ": do_rotary is not supported");
  if (!all_known(g, n)) return false;
  // Copies: adding values below may move g.values.
  const Shape xs = g.values[n.inputs[0]].shape, ws = g.values[n.inputs[1]].shape;
  const DType t = project ? DType::f32 : g.values[n.inputs[0]].dtype;
  const int64_t N = n.attr_i("num_heads", 0);
  if (xs.size() != 3 || ws.size() != 2 || ws[0] != xs[2])
    throw Error("shape", n.label() + ": input must be [batch, sequence, hidden] and weights [hidden, 3 x hidden], got " + shape_str(xs) + ", " + shape_str(ws));
  std::vector<int64_t> sizes = n.attr_ints("qkv_hidden_sizes");
  if (sizes.empty()) sizes = {ws[1] / 3, ws[1] / 3, ws[1] / 3};
  if (!project) {
    need_float(g, n, 0, "input");
    if (g.values[n.inputs[1]].dtype != t) throw Error("shape", n.label() + ": weights must be input's dtype " + dtype_name(t));
  }
  if (sizes.size() != 3 || sizes[0] <= 0 || sizes[2] <= 0 || sizes[0] != sizes[1] || sizes[0] + sizes[1] + sizes[2] != ws[1] || N <= 0 ||
      sizes[0] % N || sizes[2] % N)
    throw Error("shape", n.label() + ": num_heads " + std::to_string(N) + " and the q / k / v sizes do not split weights " + shape_str(ws));
  const int64_t B = xs[0], S = xs[1], h = sizes[0] / N, hv = sizes[2] / N;
  // past [2, B, N, P, h]: keys and values of P earlier positions, prepended (T = P + S keys);
  // present (output 1) is [2, B, N, T, h]. Query i sits at position P + i.
  const int past = in_of(n, 4);
  int64_t P = 0;
  if (past >= 0) {
    const Shape ps = g.values[past].shape;
    if (ps.size() != 5 || ps[0] != 2 || ps[1] != B || ps[2] != N || ps[4] != h || h != hv)
      throw Error("shape", n.label() + ": past must be [2, " + std::to_string(B) + ", " + std::to_string(N) + ", P, " + std::to_string(h) +
                               "] (and q, k, v heads alike), got " + shape_str(ps));
    P = ps[3];
  }
  if (out_of(n, 1) >= 0 && h != hv) throw Error("shape", n.label() + ": present needs k and v heads of one size");
  const int64_t T = P + S;
  RewriteNodes w{g, n.name, {}};
  int qkv = project ? project(w) : w.op("MatMul", {n.inputs[0], n.inputs[1]});
  if (!project && in_of(n, 2) >= 0) qkv = w.op("Add", {qkv, n.inputs[2]});
  const auto heads = [&](int64_t from, int64_t size, int64_t hd) {  // [B, N, S, hd]
    const int part = w.op("Slice", {qkv, w.ints({from}), w.ints({from + size}), w.ints({2})});
    const int r = w.op("Reshape", {part, w.ints({B, S, N, hd})});
    return w.op("Transpose", {r}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  };
  const int q = heads(0, sizes[0], h);
  int k = heads(sizes[0], sizes[1], h), v = heads(2 * sizes[0], sizes[2], hv);
  const auto half_of_past = [&](int64_t i) {
    return w.op("Squeeze", {w.op("Slice", {past, w.ints({i}), w.ints({i + 1}), w.ints({0})}), w.ints({0})});
  };
  if (past >= 0) {
    k = w.op("Concat", {half_of_past(0), k}, {{"axis", int64_t{2}}});
    v = w.op("Concat", {half_of_past(1), v}, {{"axis", int64_t{2}}});
  }
  if (out_of(n, 1) >= 0)
    w.op("Concat", {w.op("Unsqueeze", {k, w.ints({0})}), w.op("Unsqueeze", {v, w.ints({0})})}, {{"axis", int64_t{0}}}, out_of(n, 1));
  k = w.op("Transpose", {k}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}});
  const double scale = n.has_attr("scale") && n.attr_f("scale", 0.0) != 0.0 ? n.attr_f("scale", 0.0) : 1.0 / std::sqrt(static_cast<double>(h));
  int scores = w.op("MatMul", {q, k});
  if (t == DType::f16 || t == DType::bf16) scores = w.op("Cast", {scores}, {{"to", int64_t{dtype_to_onnx(DType::f32)}}});
  scores = w.op("Mul", {scores, scalar(g, n, t == DType::f64 ? t : DType::f32, scale)});
  // The additive mask bias: mask_filter_value where a key is masked ([B, 1, 1 or S, S] bool
  // first, built by ops rather than as an S x S constant).
  const double filter = n.attr_f("mask_filter_value", -10000.0);
  std::vector<int64_t> keys(static_cast<size_t>(T));
  for (int64_t j = 0; j < T; ++j) keys[j] = j;
  const int key = w.ints(keys);
  int masked = -1;
  const int mask = in_of(n, 3);
  if (mask >= 0) {
    const Shape ms = g.values[mask].shape;
    // int32 (onnxruntime's schema): a float mask of 0 / 1 would be read as positions.
    if (g.values[mask].dtype != DType::i32) throw Error("shape", n.label() + ": mask_index must be int32, got " + dtype_name(g.values[mask].dtype));
    const int m64 = w.op("Cast", {mask}, {{"to", int64_t{dtype_to_onnx(DType::i64)}}});
    if (ms.size() == 1 && (ms[0] == B || ms[0] == 2 * B)) {
      const auto column = [&](int64_t from) {
        return w.op("Unsqueeze", {w.op("Slice", {m64, w.ints({from}), w.ints({from + B}), w.ints({0})}), w.ints({1})});
      };
      masked = w.op("Not", {w.op("Less", {key, column(0)})});  // j >= end[b]
      if (ms[0] == 2 * B) masked = w.op("Or", {masked, w.op("Less", {key, column(B)})});  // or j < start[b]
    } else if (ms.size() == 2 && ms[0] == B && ms[1] == T) {
      masked = w.op("Not", {w.op("Greater", {m64, w.ints({0})})});  // kept where > 0 (onnxruntime)
    } else {
      throw Unsupported("onnx", n.label() + ": mask_index of shape " + shape_str(ms) + " is not supported (1-D [B] or [2B], or 2-D [B, " +
                                    std::to_string(T) + "])");
    }
    masked = w.op("Reshape", {masked, w.ints({B, 1, 1, T})});
  }
  // The scores, mask and softmax in float32 for fp16 / bf16 (onnxruntime's: a half -10000 is
  // 8 apart from its neighbours, and its lowest float would be -inf).
  const DType st = t == DType::f16 || t == DType::bf16 ? DType::f32 : t;
  int bias = masked >= 0 ? w.op("Where", {masked, scalar(g, n, st, filter), scalar(g, n, st, 0.0)}) : -1;
  if (n.attr_i("unidirectional", 0)) {  // key j after query i, [S, S]: the lowest float, whatever mask_filter_value says (onnxruntime)
    std::vector<int64_t> at(static_cast<size_t>(S));  // query i's position P + i
    for (int64_t i = 0; i < S; ++i) at[i] = P + i;
    const int later = w.op("Greater", {w.op("Unsqueeze", {key, w.ints({0})}), w.op("Unsqueeze", {w.ints(at), w.ints({1})})});  // [S, T]
    const double lowest = st == DType::f64 ? -std::numeric_limits<double>::max() : -static_cast<double>(std::numeric_limits<float>::max());
    bias = w.op("Where", {later, scalar(g, n, st, lowest), bias >= 0 ? bias : scalar(g, n, st, 0.0)});
  }
  if (bias >= 0) scores = w.op("Add", {scores, bias});
  int probs = w.op("Softmax", {scores}, {{"axis", int64_t{-1}}});
  if (t == DType::f16 || t == DType::bf16) probs = w.op("Cast", {probs}, {{"to", int64_t{dtype_to_onnx(t)}}});
  const int y = w.op("Transpose", {w.op("MatMul", {probs, v})}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  w.op("Reshape", {y, w.ints({B, S, N * hv})}, {}, out_of(n, 0));
  w.replace(index);
  return true;
}

// ---- quantized operators (onnxruntime's QOperator format) -------------------------------------

// Quantized data must be uint8 or int8, scales float32 (onnxruntime's type constraints).
void need_q8(const Graph& g, const Node& n, int i, const char* what) {
  const DType t = g.values[n.inputs[i]].dtype;
  if (t != DType::undefined && t != DType::u8 && t != DType::i8)
    throw Error("shape", n.label() + ": " + what + " must be uint8 or int8, got " + dtype_name(t));
}
void need_scale(const Graph& g, const Node& n, int i, const char* what, bool vector_ok = false) {
  const Value& v = g.values[n.inputs[i]];
  if (v.dtype != DType::undefined && v.dtype != DType::f32)
    throw Error("shape", n.label() + ": " + what + " must be float32, got " + dtype_name(v.dtype));
  if (v.shape_known && shape_numel(v.shape) != 1 && !(vector_ok && v.shape.size() == 1))
    throw Error("shape", n.label() + ": " + what + " must be a scalar, got " + shape_str(v.shape));
}
// The zero point at input k of a value of dtype t: that input (of dtype t, one value), or 0.
int zero_point(Graph& g, const Node& n, int k, DType t, bool vector_ok = false) {
  const int v = in_of(n, k);
  if (v < 0) return scalar(g, n, t, 0.0);
  const Value& z = g.values[v];
  if (z.dtype != t) throw Error("shape", n.label() + ": zero point " + std::to_string(k) + " must be " + dtype_name(t) + ", got " + dtype_name(z.dtype));
  if (z.shape_known && shape_numel(z.shape) != 1 && !(vector_ok && z.shape.size() == 1))
    throw Error("shape", n.label() + ": zero point " + std::to_string(k) + " must be a scalar, got " + shape_str(z.shape));
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
  for (int v : {n.inputs[bsi], bz})  // per column: [N]
    if (shape_numel(g.values[v].shape) != 1 && g.values[v].shape != Shape{N})
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
  const int ys = in_of(n, 7);
  if (ys < 0) {
    w.op("Mul", {f, ab}, {}, out_of(n, 0));
  } else {
    need_scale(g, n, 7, "y_scale");
    const int yz = in_of(n, 8) >= 0 ? n.inputs[8] : scalar(g, n, ta, 0.0);
    if (g.values[yz].dtype != DType::u8 && g.values[yz].dtype != DType::i8)
      throw Error("shape", n.label() + ": y_zero_point must be uint8 or int8, got " + dtype_name(g.values[yz].dtype));
    quantized(w, w.op("Mul", {f, ab}), ys, yz, out_of(n, 0));
  }
  w.replace(index);
  return true;
}

bool attention_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  return attention_expand_as(g, index, n, nullptr);
}

// QAttention(input, weight, bias, input_scale, weight_scale, mask_index?, input_zp?, weight_zp?,
// past?): Attention whose QKV projection is onnxruntime's integer one,
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
  const bool quant = ctx.node().has_input(7);
  const DType out = !quant ? DType::f32 : ctx.node().has_input(8) ? ctx.dtype(8) : ctx.dtype(0);
  ctx.set_output(0, out, {ta ? a[1] : a[0], tb ? b[0] : b[1]});
}

void attention_contrib_infer(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  const Shape& wt = ctx.shape(1);
  const std::vector<int64_t> sizes = ctx.node().attr_ints("qkv_hidden_sizes");
  if (x.size() != 3 || wt.size() != 2) ctx.fail("input must be [batch, sequence, hidden] and weights 2-D");
  ctx.set_output(0, ctx.dtype(0), {x[0], x[1], sizes.size() == 3 ? sizes[2] : wt[1] / 3});
  const int64_t heads = ctx.node().attr_i("num_heads", 0);
  if (ctx.num_outputs() > 1 && ctx.node().outputs[1] >= 0 && heads > 0)  // present: the key count is known once shapes are
    ctx.set_output(1, ctx.dtype(0), {2, x[0], heads, -1, (sizes.size() == 3 ? sizes[0] : wt[1] / 3) / heads});
}

}  // namespace

void register_contrib_ops() {
  const std::string ms = "com.microsoft.";
  register_expanded(ms + "Gelu", 1, 1, 1, like_input(0), [](Graph& g, size_t i) { return gelu_expand(g, i, "none"); });
  register_expanded(ms + "BiasGelu", 2, 2, 1, like_input(0), [](Graph& g, size_t i) { return gelu_expand(g, i, "none"); });
  register_expanded(ms + "FastGelu", 1, 2, 1, like_input(0), [](Graph& g, size_t i) { return gelu_expand(g, i, "tanh"); });
  register_expanded(ms + "QuickGelu", 1, 1, 1, like_input(0), quick_gelu_expand);
  register_expanded(ms + "BiasAdd", 3, 3, 1, like_input(0), bias_add_expand);
  register_expanded(ms + "FusedMatMul", 2, 2, 1, like_input(0), fused_matmul_expand);
  register_expanded(ms + "SkipLayerNormalization", 3, 5, 4, like_input(0), [](Graph& g, size_t i) { return skip_norm_expand(g, i, true); });
  register_expanded(ms + "SkipSimplifiedLayerNormalization", 3, 4, 4, like_input(0),
                    [](Graph& g, size_t i) { return skip_norm_expand(g, i, false); });
  register_expanded(ms + "EmbedLayerNormalization", 7, 9, 3, embed_norm_infer, embed_norm_expand, 1u << 1 | 1u << 4);  // segment_ids, segment_embedding
  register_expanded(ms + "Attention", 2, 7, 2, attention_contrib_infer, attention_expand);
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
  register_expanded(ms + "QLinearWhere", 9, 9, 1, [](InferContext& c) { c.set_output(0, c.dtype(1), c.shape(1)); }, qlinear_where_expand);
  register_expanded(ms + "QuantizeLinear", 2, 3, 1, [](InferContext& c) { c.set_output(0, c.has_input(2) ? c.dtype(2) : DType::u8, c.shape(0)); },
                    [](Graph& g, size_t i) { return contrib_qdq_expand(g, i, "QuantizeLinear"); });
  register_expanded(ms + "DequantizeLinear", 2, 3, 1, [](InferContext& c) { c.set_output(0, c.dtype(1), c.shape(0)); },
                    [](Graph& g, size_t i) { return contrib_qdq_expand(g, i, "DequantizeLinear"); });
  // onnxruntime registers SimplifiedLayerNormalization in the default domain.
  register_expanded("SimplifiedLayerNormalization", 2, 2, 2, like_input(0), simplified_norm_expand);
}

}  // namespace fusor
