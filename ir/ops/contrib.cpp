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
//   FusedConv(X, W, B?, Z?) activation, activation_params, Conv's attributes
//                               activation(Conv(X, W, B) + Z); activation Relu, Tanh, Sigmoid,
//                               LeakyRelu(alpha = params[0]), HardSigmoid(params[0], params[1]),
//                               Clip(params[0], params[1])
//   FusedGemm(A, B, C?) activation, activation_alpha, activation_beta, Gemm's attributes
//                               activation(Gemm(A, B, C)), the same activations
//   TransposeMatMul             FusedMatMul's older name
//   FusedMatMul(A, B)           alpha * op(A) @ op(B), op a transpose of the last two axes when
//                               transA / transB (none for a vector); transBatchA / transBatchB
//                               first move axis 0 behind the batch axes ([1 .. r-2, 0, r-1])
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
//   Attention(input, weights, bias?, mask_index?, past?, attention_bias?) num_heads,
//       unidirectional, qkv_hidden_sizes, scale, mask_filter_value=-10000
//                               QKV = input @ weights + bias split into heads; softmax(scale
//                               Q K^T + attention_bias + mask bias) V with heads merged; the
//                               mask bias is mask_filter_value where a key is masked: mask_index
//                               [B] (keys j >= end[b]), [2B] (j >= end[b] or j < start[b]) or
//                               the raw [B, T] / [B, S, T] mask (kept where > 0);
//                               attention_bias [B or 1, N or 1, S, T]; unidirectional gives keys after
//                               the query the lowest float instead; fp16 / bf16 attention is
//                               computed in float32 from the projections on and rounded once
//                               (onnxruntime's CPU kernel).
//                               past [2, B, N, P, h] prepends P keys / values (query i at
//                               position P + i; masks then cover T = P + S keys) and present
//                               (output 1) is [2, B, N, T, h]. past_sequence_length,
//                               past_present_share_buffer, rotary and the other mask layouts
//                               are refused (Unsupported, one line).
//   RotaryEmbedding(input, position_ids, cos_cache, sin_cache) interleaved, num_heads,
//       rotary_embedding_dim            -> RotaryEmbedding (opset 23), position_ids [B, S] or
//                               the one start position of every row
//   MultiHeadAttention(query, key?, value?, bias?, key_padding_mask?, attention_bias?,
//       past_key?, past_value?) num_heads, unidirectional, scale, mask_filter_value=-10000
//                               the same attention without the projection: query [B, S, D],
//                               key [B, L, D] and value [B, L, Dv] plus bias [2D + Dv] (or
//                               key / value in heads [B, N, L, h], a packed KV key
//                               [B, L, N, 2, h], a packed QKV query [B, S, N, 3, h]); past_key /
//                               past_value [B, N, P, h] prepended, present_key / present_value
//                               [B, N, P + L, h]; key_padding_mask as mask_index but [2B]
//
// The quantized contrib ops (QLinear*, QGemm, QAttention, ...) are in ir/ops/contrib_quant.cpp.
// Errors: Error("shape") / Unsupported naming the node, one line.
#include <cmath>
#include <limits>

#include "ir/ops/attention.h"
#include "ir/ops/contrib_common.h"
#include "ir/ops/op_helpers.h"
#include "ir/small_dtypes.h"

namespace fusor {
namespace contrib {

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
namespace {
void expanded_ref(const Node& n, const Ins&, Outs&) { ref_fail(n, "runs once its input shapes are known (it is expanded into standard ops then)"); }
}  // namespace

void register_expanded(const std::string& name, int min_in, int max_in, int max_out, InferFn infer,
                       std::function<bool(Graph&, size_t)> expand, uint32_t optional_inputs) {
  OpDef d = table_entry(name, min_in, max_in, std::move(infer), expanded_ref, max_out);
  d.expand = std::move(expand);
  d.optional_inputs = optional_inputs;
  register_op(std::move(d));
}

// ---- Attention -------------------------------------------------------------------------------

// (contrib_common.h) Red-team round 53: SkipLayerNormalization, BiasGelu, EmbedLayerNormalization,
// MultiHeadAttention's bias were rounded to the storage type first.
bool is_half(DType t) { return t == DType::f16 || t == DType::bf16; }
int as_f32(RewriteNodes& w, int v) {
  return v < 0 || w.g.values[static_cast<size_t>(v)].dtype == DType::f32 ? v : w.op("Cast", {v}, {{"to", int64_t{dtype_to_onnx(DType::f32)}}});
}
int cast_to(RewriteNodes& w, int v, DType t, int out) { return w.op("Cast", {v}, {{"to", int64_t{dtype_to_onnx(t)}}}, out); }

// Scaled dot-product attention over heads as onnxruntime's Attention / MultiHeadAttention
// compute it: q [B, N, S, h], k [B, N, T, h], v [B, N, T, hv] (T = P + S keys, query i at
// position P + i) -> out [B, S, N * hv]; scores scaled (attribute scale, else 1 / sqrt(h)),
// plus attention_bias, plus mask_filter_value where the mask hides a key, the lowest float past
// the query when unidirectional, Softmax, in float32 for fp16 / bf16 operands.
void attend(RewriteNodes& w, const Node& n, const AttendValues& a, const AttendDims& d, DType t, bool attention_layout) {
  Graph& g = w.g;
  // Plain copies, not a structured binding: lambdas below capture them (clang 15 refuses that).
  const int64_t B = d.B, S = d.S, T = d.T, P = d.P, N = d.N, h = d.h, hv = d.hv;
  const int k = w.op("Transpose", {a.k}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}});
  const double scale = n.has_attr("scale") && n.attr_f("scale", 0.0) != 0.0 ? n.attr_f("scale", 0.0) : 1.0 / std::sqrt(static_cast<double>(h));
  const bool half = t == DType::f16 || t == DType::bf16;
  int scores = w.op("MatMul", {a.q, k});
  if (half) w.nodes.back().f32_result = true;  // the float32 sum of the exact products, not rounded to t
  scores = w.op("Mul", {scores, scalar(g, n, t == DType::f64 ? t : DType::f32, scale)});
  // The additive mask bias: mask_filter_value where a key is masked ([B, 1, 1 or S, S] bool
  // first, built by ops rather than as an S x S constant).
  const double filter = n.attr_f("mask_filter_value", -10000.0);
  std::vector<int64_t> keys(static_cast<size_t>(T));
  for (int64_t j = 0; j < T; ++j) keys[j] = j;
  const int key = w.ints(keys);
  int masked = -1;
  const int mask = a.mask;
  const char* mask_name = attention_layout ? "mask_index" : "key_padding_mask";
  if (mask >= 0) {
    const Shape ms = g.values[mask].shape;
    // int32 (onnxruntime's schema): a float mask of 0 / 1 would be read as positions.
    if (g.values[mask].dtype != DType::i32)
      throw Error("shape", n.label() + ": " + mask_name + " must be int32, got " + dtype_name(g.values[mask].dtype));
    const int m64 = w.op("Cast", {mask}, {{"to", int64_t{dtype_to_onnx(DType::i64)}}});
    int64_t mask_rows = 1;  // 1, or S for a 3-D [B, S, T] mask
    if (ms.size() == 1 && (ms[0] == B || (attention_layout && ms[0] == 2 * B))) {
      const auto column = [&](int64_t from) {
        return w.op("Unsqueeze", {w.op("Slice", {m64, w.ints({from}), w.ints({from + B}), w.ints({0})}), w.ints({1})});
      };
      masked = w.op("Not", {w.op("Less", {key, column(0)})});  // j >= end[b]
      if (ms[0] == 2 * B) masked = w.op("Or", {masked, w.op("Less", {key, column(B)})});  // or j < start[b]
    } else if (ms.size() == 2 && ms[0] == B && ms[1] == T) {
      masked = w.op("Not", {w.op("Greater", {m64, w.ints({0})})});  // kept where > 0 (onnxruntime)
    } else if (ms.size() == 3 && ms[0] == B && ms[1] == S && ms[2] == T) {
      masked = w.op("Not", {w.op("Greater", {m64, w.ints({0})})});
      mask_rows = S;
    } else {
      throw Unsupported("onnx", n.label() + ": " + mask_name + " of shape " + shape_str(ms) + " is not supported (1-D [B]" +
                                    (attention_layout ? " or [2B]" : "") + ", 2-D [B, " + std::to_string(T) + "] or 3-D [B, " +
                                    std::to_string(S) + ", " + std::to_string(T) + "])");
    }
    masked = w.op("Reshape", {masked, w.ints({B, 1, mask_rows, T})});
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
  if (a.attention_bias >= 0) {  // [B or 1, N or 1, S, T], added in the scores' float type
    const Shape bs = g.values[a.attention_bias].shape;
    if (bs.size() != 4 || (bs[0] != 1 && bs[0] != B) || (bs[1] != 1 && bs[1] != N) || bs[2] != S || bs[3] != T)
      throw Error("shape", n.label() + ": attention_bias must be [" + std::to_string(B) + " or 1, " + std::to_string(N) + " or 1, " +
                               std::to_string(S) + ", " + std::to_string(T) + "], got " + shape_str(bs));
    const int ab = g.values[a.attention_bias].dtype == st ? a.attention_bias
                                                          : w.op("Cast", {a.attention_bias}, {{"to", int64_t{dtype_to_onnx(st)}}});
    scores = w.op("Add", {scores, ab});
  }
  if (bias >= 0) scores = w.op("Add", {scores, bias});
  // fp16 / bf16: the probabilities stay float32 and meet V in float32; the output rounds once
  // (onnxruntime's CPU kernels compute the whole attention in float32).
  const int probs = w.op("Softmax", {scores}, {{"axis", int64_t{-1}}});
  const int v = half ? w.op("Cast", {a.v}, {{"to", int64_t{dtype_to_onnx(DType::f32)}}}) : a.v;
  const int y = w.op("Transpose", {w.op("MatMul", {probs, v})}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  const int r = w.op("Reshape", {y, w.ints({B, S, N * hv})}, {}, half ? -1 : a.out);
  if (half) w.op("Cast", {r}, {{"to", int64_t{dtype_to_onnx(t)}}}, a.out);
}

// (declared in contrib_common.h)
// Attention node n (at index) in Attention's input layout; `project`, when given, makes the
// QKV projection (input @ weights + bias) instead of the float MatMul (QAttention's integer one).
bool attention_expand_as(Graph& g, size_t index, const Node& n, const std::function<int(RewriteNodes&)>& project) {
  for (size_t k = 6; k < n.inputs.size(); ++k)
    if (n.inputs[k] >= 0) throw Unsupported("onnx", n.label() + ": the past_sequence_length input is not supported");
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
  // fp16 / bf16: the projection stays float32 (bias added there) and the attention runs on it,
  // rounded once at the output (onnxruntime's CPU kernel; present holds the new k / v rounded once).
  const bool half = !project && (t == DType::f16 || t == DType::bf16);
  const auto to = [&](int v, DType d) { return w.op("Cast", {v}, {{"to", int64_t{dtype_to_onnx(d)}}}); };
  int qkv = project ? project(w) : w.op("MatMul", {n.inputs[0], n.inputs[1]});
  if (half) w.nodes.back().f32_result = true;
  if (!project && in_of(n, 2) >= 0) qkv = w.op("Add", {qkv, half ? to(n.inputs[2], DType::f32) : n.inputs[2]});
  const auto heads = [&](int64_t from, int64_t size, int64_t hd) {  // [B, N, S, hd]
    const int part = w.op("Slice", {qkv, w.ints({from}), w.ints({from + size}), w.ints({2})});
    const int r = w.op("Reshape", {part, w.ints({B, S, N, hd})});
    return w.op("Transpose", {r}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  };
  const int q = heads(0, sizes[0], h);
  int k = heads(sizes[0], sizes[1], h), v = heads(2 * sizes[0], sizes[2], hv);
  const auto half_of_past = [&](int64_t i) {
    const int p = w.op("Squeeze", {w.op("Slice", {past, w.ints({i}), w.ints({i + 1}), w.ints({0})}), w.ints({0})});
    return half ? to(p, DType::f32) : p;  // exact: every half value is a float
  };
  if (past >= 0) {
    k = w.op("Concat", {half_of_past(0), k}, {{"axis", int64_t{2}}});
    v = w.op("Concat", {half_of_past(1), v}, {{"axis", int64_t{2}}});
  }
  if (out_of(n, 1) >= 0) {
    const int kv = w.op("Concat", {w.op("Unsqueeze", {k, w.ints({0})}), w.op("Unsqueeze", {v, w.ints({0})})}, {{"axis", int64_t{0}}},
                        half ? -1 : out_of(n, 1));
    if (half) w.op("Cast", {kv}, {{"to", int64_t{dtype_to_onnx(t)}}}, out_of(n, 1));
  }
  const int y = half ? g.add_value(g.unique_name(n.name + "/attention_f32")) : out_of(n, 0);
  attend(w, n, {q, k, v, in_of(n, 3), in_of(n, 5), y}, {B, S, T, P, N, h, hv}, half ? DType::f32 : t, true);
  if (half) w.op("Cast", {y}, {{"to", int64_t{dtype_to_onnx(t)}}}, out_of(n, 0));
  w.replace(index);
  return true;
}


}  // namespace contrib

namespace {

using namespace contrib;

// ---- the Gelu family, BiasAdd, FusedMatMul -------------------------------------------------

bool gelu_expand(Graph& g, size_t index, const char* approximate) {
  const Node n = g.nodes[index];
  for (int i = 0; i < static_cast<int>(n.inputs.size()); ++i)
    if (n.inputs[i] >= 0) need_float(g, n, i, i ? "the bias" : "X");
  RewriteNodes w{g, n.name, {}};
  const DType t = g.values[n.inputs[0]].dtype;
  const bool half = is_half(t) && in_of(n, 1) >= 0;  // X + bias in float32, rounded once
  int x = half ? as_f32(w, n.inputs[0]) : n.inputs[0];
  if (in_of(n, 1) >= 0) x = w.op("Add", {x, half ? as_f32(w, n.inputs[1]) : n.inputs[1]});  // BiasGelu's bias is required (min_inputs)
  if (half) cast_to(w, w.op("Gelu", {x}, {{"approximate", std::string(approximate)}}, -1, 20), t, out_of(n, 0));
  else w.op("Gelu", {x}, {{"approximate", std::string(approximate)}}, out_of(n, 0), 20);
  w.replace(index);
  return true;
}

bool quick_gelu_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  need_float(g, n, 0, "X");
  RewriteNodes w{g, n.name, {}};
  const DType t = g.values[n.inputs[0]].dtype;
  const bool half = is_half(t);  // float32 throughout, rounded once
  const int x = half ? as_f32(w, n.inputs[0]) : n.inputs[0];
  const int ax = w.op("Mul", {x, scalar(g, n, half ? DType::f32 : t, n.attr_f("alpha", 1.702))});
  const int y = w.op("Mul", {x, w.op("Sigmoid", {ax})}, {}, half ? -1 : out_of(n, 0));
  if (half) cast_to(w, y, t, out_of(n, 0));
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
  need_float(g, n, 0, "A");
  need_float(g, n, 1, "B");
  // A transpose needs the operand's rank (its dims may still be unknown).
  for (int i : {0, 1})
    if ((n.attr_i(i ? "transB" : "transA", 0) || n.attr_i(i ? "transBatchB" : "transBatchA", 0)) && g.values[n.inputs[i]].shape.empty() &&
        !g.values[n.inputs[i]].shape_known)
      return false;
  RewriteNodes w{g, n.name, {}};
  // op(X): transBatch moves axis 0 behind the batch axes ([1 .. r-2, 0, r-1]: axis 0 becomes
  // the rows), then trans swaps the last two (onnxruntime's FusedMatMul, contrib_defs.cc).
  const auto op_of = [&](int v, bool trans, bool trans_batch) {
    const int64_t r = static_cast<int64_t>(g.values[v].shape.size());
    if (r < 2) return v;  // a vector has nothing to transpose (onnxruntime ignores the flags)
    std::vector<int64_t> perm;
    if (trans_batch) {
      for (int64_t i = 1; i < r - 1; ++i) perm.push_back(i);
      perm.push_back(0), perm.push_back(r - 1);
    } else {
      for (int64_t i = 0; i < r; ++i) perm.push_back(i);
    }
    if (trans) std::swap(perm[r - 1], perm[r - 2]);
    for (int64_t i = 0; i < r; ++i)
      if (perm[i] != i) return w.op("Transpose", {v}, {{"perm", perm}});
    return v;
  };
  const int a = op_of(n.inputs[0], n.attr_i("transA", 0) != 0, n.attr_i("transBatchA", 0) != 0);
  const int b = op_of(n.inputs[1], n.attr_i("transB", 0) != 0, n.attr_i("transBatchB", 0) != 0);
  const double alpha = n.attr_f("alpha", 1.0);
  if (alpha == 1.0) {
    w.op("MatMul", {a, b}, {}, out_of(n, 0));
  } else {
    w.op("Mul", {w.op("MatMul", {a, b}), scalar(g, n, g.values[n.inputs[0]].dtype, alpha)}, {}, out_of(n, 0));
  }
  w.replace(index);
  return true;
}

// onnxruntime's FusedConv / FusedGemm (what it writes when it saves a model optimized at the
// extended level): the activation its fusion folded in, by name and parameters (FusedConv:
// activation_params; FusedGemm: activation_alpha / activation_beta), applied to v -> out.
int fused_activation(RewriteNodes& w, const Node& n, int v, double a, double b, bool has_a, bool has_b, int out) {
  const std::string act = n.attr_s("activation", "");
  const DType t = w.g.values[v].dtype == DType::undefined ? DType::f32 : w.g.values[v].dtype;
  if (act.empty() || act == "Identity") return out >= 0 ? w.op("Identity", {v}, {}, out) : v;
  if (act == "Relu" || act == "Tanh" || act == "Sigmoid") return w.op(act, {v}, {}, out);
  if (act == "LeakyRelu") return w.op(act, {v}, {{"alpha", has_a ? a : 0.01}}, out);
  if (act == "HardSigmoid") return w.op(act, {v}, {{"alpha", has_a ? a : 0.2}, {"beta", has_b ? b : 0.5}}, out);
  if (act == "Clip") {
    const double inf = std::numeric_limits<double>::infinity();
    return w.op(act, {v, scalar(w.g, n, t, has_a ? a : -inf), scalar(w.g, n, t, has_b ? b : inf)}, {}, out);
  }
  throw Unsupported("onnx", n.label() + ": activation '" + printable(act) + "' is not supported (Relu, Tanh, Sigmoid, LeakyRelu, HardSigmoid, Clip)");
}

// FusedConv(X, W, B?, Z?): activation(Conv(X, W, B) + Z), Conv's attributes.
bool fused_conv_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  need_float(g, n, 0, "X");
  const std::vector<double> p = n.attr_floats("activation_params");
  RewriteNodes w{g, n.name, {}};
  std::map<std::string, AttrValue> attrs;
  for (const char* k : {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"})
    if (auto it = n.attrs.find(k); it != n.attrs.end()) attrs[k] = it->second;
  std::vector<int> ins{n.inputs[0], n.inputs[1]};
  if (in_of(n, 2) >= 0) ins.push_back(n.inputs[2]);
  int y = w.op("Conv", ins, attrs, -1, 11);
  if (in_of(n, 3) >= 0) y = w.op("Add", {y, n.inputs[3]});
  fused_activation(w, n, y, p.size() > 0 ? p[0] : 0.0, p.size() > 1 ? p[1] : 0.0, p.size() > 0, p.size() > 1, out_of(n, 0));
  w.replace(index);
  return true;
}

// FusedGemm(A, B, C?): activation(Gemm(A, B, C)), Gemm's attributes.
bool fused_gemm_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  need_float(g, n, 0, "A");
  RewriteNodes w{g, n.name, {}};
  std::map<std::string, AttrValue> attrs;
  for (const char* k : {"alpha", "beta", "transA", "transB"})
    if (auto it = n.attrs.find(k); it != n.attrs.end()) attrs[k] = it->second;
  std::vector<int> ins{n.inputs[0], n.inputs[1]};
  if (in_of(n, 2) >= 0) ins.push_back(n.inputs[2]);
  const int y = w.op("Gemm", ins, attrs, -1, 13);
  fused_activation(w, n, y, n.attr_f("activation_alpha", 0.0), n.attr_f("activation_beta", 0.0), n.has_attr("activation_alpha"),
                   n.has_attr("activation_beta"), out_of(n, 0));
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
  const DType t = g.values[n.inputs[0]].dtype;
  const bool half = is_half(t);  // the sum and the normalization in float32, each output rounded once
  const auto f = [&](int v) { return half ? as_f32(w, v) : v; };
  const int sum_out = out_of(n, 3);
  int s = w.op("Add", {f(n.inputs[0]), f(n.inputs[1])}, {}, bias < 0 && !half ? sum_out : -1);
  if (bias >= 0) s = w.op("Add", {s, f(bias)}, {}, half ? -1 : sum_out);
  if (half && sum_out >= 0) cast_to(w, s, t, sum_out);
  if (!layer && read_out_of(g, n, 1) >= 0) throw Unsupported("onnx", n.label() + ": the mean output is not computed by RMS normalization");
  const int y_out = out_of(n, 0), y = half && y_out >= 0 ? g.add_value(g.unique_name(n.name + "/y32")) : y_out;
  std::vector<int> outs{y};
  if (layer) outs.push_back(out_of(n, 1));
  outs.push_back(layer ? out_of(n, 2) : read_out_of(g, n, 2));
  if (!layer && outs.back() >= 0) throw Unsupported("onnx", n.label() + ": the inv_std_var output is not supported");
  if (!layer) outs.pop_back();
  norm_node(w, layer, s, f(n.inputs[2]), f(beta), eps, outs);
  if (half && y_out >= 0) cast_to(w, y, t, y_out);
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
  if (read_out_of(g, n, 1) >= 0) throw Unsupported("onnx", n.label() + ": the inv_std_var output is not supported");
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
  const DType t = g.values[word].dtype;
  const bool half = is_half(t);  // the embeddings summed and normalized in float32, rounded once
  const auto f = [&](int v) { return half ? as_f32(w, v) : v; };
  e = w.op("Add", {f(e), f(p)});
  if (seg_ids >= 0) e = w.op("Add", {e, f(gather_rows(seg_table, seg_ids))});
  if (out_of(n, 2) >= 0) {
    if (half) cast_to(w, e, t, out_of(n, 2));
    else e = w.op("Identity", {e}, {}, out_of(n, 2));
  }
  if (half && out_of(n, 0) >= 0) {
    const int y = g.add_value(g.unique_name(n.name + "/y32"));
    norm_node(w, true, e, f(gamma), f(beta), eps, {y});
    cast_to(w, y, t, out_of(n, 0));
  } else {
    norm_node(w, true, e, gamma, beta, eps, {out_of(n, 0)});
  }
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


// MultiHeadAttention(query, key?, value?, bias?, key_padding_mask?, attention_bias?, past_key?,
// past_value?): onnxruntime's attention without the input projection. query [B, S, D] with key
// [B, L, D] and value [B, L, Dv] (bias [D + D + Dv] added to each), key / value already in heads
// [B, N, L, h] (cross attention's cached form, no bias), packed KV key [B, L, N, 2, h], or a
// packed QKV query [B, S, N, 3, h]; past_key / past_value [B, N, P, h] prepended to 3-D keys and
// values, present_key / present_value [B, N, P + L, h]; then attend().
bool mha_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  for (size_t k = 8; k < n.inputs.size(); ++k)
    if (n.inputs[k] >= 0) throw Unsupported("onnx", n.label() + ": past_sequence_length and cache_indirection inputs are not supported");
  if (out_of(n, 3) >= 0) throw Unsupported("onnx", n.label() + ": the qk output is not supported");
  if (!all_known(g, n)) return false;
  need_float(g, n, 0, "query");
  const DType t = g.values[n.inputs[0]].dtype;
  for (int i = 1; i < 8; ++i)
    if (i != 4 && in_of(n, i) >= 0 && g.values[n.inputs[i]].dtype != t)
      throw Error("shape", n.label() + ": input " + std::to_string(i) + " must be query's dtype " + dtype_name(t) + ", got " +
                               dtype_name(g.values[n.inputs[i]].dtype));
  const int64_t N = n.attr_i("num_heads", 0);
  if (N <= 0) throw Error("shape", n.label() + ": num_heads must be positive, got " + std::to_string(N));
  const Shape qs = g.values[n.inputs[0]].shape;
  const int key = in_of(n, 1), value = in_of(n, 2), bias = in_of(n, 3), pk = in_of(n, 6), pv = in_of(n, 7);
  const Shape ks = key >= 0 ? g.values[key].shape : Shape{}, vs = value >= 0 ? g.values[value].shape : Shape{};
  auto bad = [&](const std::string& why) { return Error("shape", n.label() + ": " + why); };
  RewriteNodes w{g, n.name, {}};
  const auto to_heads = [&](int x) { return w.op("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}}); };  // BSNH <-> BNSH
  // Part j of a packed [B, L, N, parts, h] tensor, as [B, N, L, h].
  const auto unpack = [&](int x, const Shape& s, int64_t j) {
    const int part = w.op("Slice", {x, w.ints({j}), w.ints({j + 1}), w.ints({3})});
    return to_heads(w.op("Reshape", {part, w.ints({s[0], s[1], s[2], s[4]})}));
  };
  int64_t B = 0, S = 0, L = 0, h = 0, hv = 0;
  int q = -1, k = -1, v = -1;
  bool cached = false;  // key / value given in heads [B, N, L, h]
  if (qs.size() == 5) {
    if (qs[2] != N || qs[3] != 3 || key >= 0 || value >= 0 || bias >= 0)
      throw bad("a packed query must be [B, S, " + std::to_string(N) + ", 3, h] without key, value or bias, got " + shape_str(qs));
    B = qs[0], S = L = qs[1], h = hv = qs[4];
    q = unpack(n.inputs[0], qs, 0), k = unpack(n.inputs[0], qs, 1), v = unpack(n.inputs[0], qs, 2);
  } else {
    if (qs.size() != 3 || qs[2] % N) throw bad("query must be [B, S, D] with D a multiple of num_heads " + std::to_string(N) + ", got " + shape_str(qs));
    if (key < 0) throw bad("key is required unless the query is packed [B, S, N, 3, h]");
    B = qs[0], S = qs[1], h = qs[2] / N;
    const int64_t D = qs[2];
    int64_t Dv = 0;
    if (ks.size() == 5) {
      if (ks[0] != B || ks[2] != N || ks[3] != 2 || ks[4] != h || value >= 0)
        throw bad("a packed key must be [" + std::to_string(B) + ", L, " + std::to_string(N) + ", 2, " + std::to_string(h) + "] without value, got " + shape_str(ks));
      L = ks[1], hv = h;
    } else if (ks.size() == 4) {
      if (ks[0] != B || ks[1] != N || ks[3] != h || vs.size() != 4 || vs[0] != B || vs[1] != N || vs[2] != ks[2])
        throw bad("key and value in heads must be [" + std::to_string(B) + ", " + std::to_string(N) + ", L, " + std::to_string(h) + "], got " +
                  shape_str(ks) + ", " + shape_str(vs));
      L = ks[2], hv = vs[3], cached = true;
    } else {
      if (ks.size() != 3 || ks[0] != B || ks[2] != D || vs.size() != 3 || vs[0] != B || vs[1] != ks[1] || vs[2] % N)
        throw bad("key must be [" + std::to_string(B) + ", L, " + std::to_string(D) + "] and value [" + std::to_string(B) + ", L, Dv], got " +
                  shape_str(ks) + ", " + shape_str(vs));
      L = ks[1], Dv = vs[2], hv = Dv / N;
    }
    if (bias >= 0 && (cached || ks.size() == 5 || g.values[bias].shape != Shape{2 * D + Dv}))
      throw bad("bias must be [" + std::to_string(2 * D + Dv) + "] (q, k, v) with 3-D key and value, got " + shape_str(g.values[bias].shape));
    // fp16 / bf16 with a bias: q, k, v + bias in float32 and attended there (as Attention's
    // projection), rounded once at the outputs.
    const auto biased = [&](int x, int64_t from, int64_t size) {
      if (bias < 0) return x;
      const int part = w.op("Slice", {bias, w.ints({from}), w.ints({from + size}), w.ints({0})});
      return is_half(t) ? w.op("Add", {as_f32(w, x), as_f32(w, part)}) : w.op("Add", {x, part});
    };
    q = to_heads(w.op("Reshape", {biased(n.inputs[0], 0, D), w.ints({B, S, N, h})}));
    if (ks.size() == 5) {
      k = unpack(key, ks, 0), v = unpack(key, ks, 1);
    } else if (cached) {
      k = key, v = value;
    } else {
      k = to_heads(w.op("Reshape", {biased(key, D, D), w.ints({B, L, N, h})}));
      v = to_heads(w.op("Reshape", {biased(value, 2 * D, Dv), w.ints({B, L, N, hv})}));
    }
  }
  int64_t P = 0;
  if ((pk >= 0) != (pv >= 0)) throw bad("past_key and past_value come together");
  if (pk >= 0) {
    const Shape ps = g.values[pk].shape;
    if (ps.size() != 4 || ps[0] != B || ps[1] != N || ps[3] != h || g.values[pv].shape != Shape{B, N, ps[2], hv})
      throw bad("past_key / past_value must be [" + std::to_string(B) + ", " + std::to_string(N) + ", P, " + std::to_string(h) + "], got " +
                shape_str(ps) + ", " + shape_str(g.values[pv].shape));
    P = ps[2];
    k = w.op("Concat", {bias >= 0 ? as_f32(w, pk) : pk, k}, {{"axis", int64_t{2}}});  // biased: float32 (as_f32 keeps f32)
    v = w.op("Concat", {bias >= 0 ? as_f32(w, pv) : pv, v}, {{"axis", int64_t{2}}});
  }
  if (is_half(t) && bias >= 0) {  // present: the float32 k / v rounded once
    if (out_of(n, 1) >= 0) cast_to(w, k, t, out_of(n, 1));
    if (out_of(n, 2) >= 0) cast_to(w, v, t, out_of(n, 2));
  } else {
    if (out_of(n, 1) >= 0) w.op("Identity", {k}, {}, out_of(n, 1));
    if (out_of(n, 2) >= 0) w.op("Identity", {v}, {}, out_of(n, 2));
  }
  // Causal (unidirectional): query i sits at position P + i (cross attention with more keys than
  // queries is then causal from key 0; onnxruntime's CPU kernel lets its last query see every key).
  if (is_half(t) && bias >= 0) {  // q, k, v in float32: attended there, rounded once (as Attention)
    const int y = out_of(n, 0) >= 0 ? g.add_value(g.unique_name(n.name + "/attention_f32")) : -1;
    attend(w, n, {q, k, v, in_of(n, 4), in_of(n, 5), y}, {B, S, P + L, P, N, h, hv}, DType::f32, false);
    if (y >= 0) cast_to(w, y, t, out_of(n, 0));
  } else {
    attend(w, n, {q, k, v, in_of(n, 4), in_of(n, 5), out_of(n, 0)}, {B, S, P + L, P, N, h, hv}, t, false);
  }
  w.replace(index);
  return true;
}

void mha_infer(InferContext& ctx) {
  const Shape& q = ctx.shape(0);
  const int64_t N = ctx.node().attr_i("num_heads", 0);
  if (q.size() != 3 && q.size() != 5) ctx.fail("query must be [B, S, D] or packed [B, S, N, 3, h]");
  int64_t dv = q.size() == 5 ? q[2] * q[4] : -1, h = q.size() == 5 ? q[4] : (N > 0 ? q[2] / N : -1);
  if (q.size() == 3 && ctx.has_input(2)) {
    const Shape& v = ctx.shape(2);
    dv = v.size() == 3 ? v[2] : v.size() == 4 ? v[1] * v[3] : -1;
  } else if (q.size() == 3 && ctx.has_input(1) && ctx.shape(1).size() == 5) {
    dv = ctx.shape(1)[2] * ctx.shape(1)[4];
  }
  ctx.set_output(0, ctx.dtype(0), {q[0], q[1], dv});
  for (int o = 1; o < 3 && o < ctx.num_outputs(); ++o)
    if (ctx.node().outputs[o] >= 0) ctx.set_output(o, ctx.dtype(0), {q[0], N > 0 ? N : -1, -1, h});
}

// com.microsoft RotaryEmbedding(input, position_ids, cos_cache, sin_cache): ONNX's
// RotaryEmbedding (opset 23; the same rotation, 3-D [B, S, D] or 4-D [B, N, S, h] input) with
// the inputs reordered; position_ids [B, S], or one start position (then p + 0..S-1 per row).
bool contrib_rotary_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  if (n.attr_i("is_packed_batching", 0)) throw Unsupported("onnx", n.label() + ": is_packed_batching is not supported");
  if (!all_known(g, n)) return false;
  const Shape xs = g.values[n.inputs[0]].shape, ps = g.values[n.inputs[1]].shape;
  if (!dtype_is_int(g.values[n.inputs[1]].dtype)) throw Error("shape", n.label() + ": position_ids must be int64, got " + dtype_name(g.values[n.inputs[1]].dtype));
  if (xs.size() != 3 && xs.size() != 4) throw Error("shape", n.label() + ": input must be [B, S, D] or [B, N, S, h], got " + shape_str(xs));
  const int64_t B = xs[0], S = xs.size() == 3 ? xs[1] : xs[2];
  RewriteNodes w{g, n.name, {}};
  int pos = n.inputs[1];
  if (shape_numel(ps) == 1 && !(ps == Shape{B, S})) {  // the first position: row b holds p, p + 1, ..
    std::vector<int64_t> steps(static_cast<size_t>(S));
    for (int64_t i = 0; i < S; ++i) steps[i] = i;
    const int p64 = w.op("Cast", {pos}, {{"to", int64_t{dtype_to_onnx(DType::i64)}}});
    const int row = w.op("Add", {w.op("Reshape", {p64, w.ints({1, 1})}), w.op("Reshape", {w.ints(steps), w.ints({1, S})})});
    pos = w.op("Expand", {row, w.ints({B, S})});
  }
  std::map<std::string, AttrValue> attrs;
  for (const char* a : {"interleaved", "num_heads", "rotary_embedding_dim"})
    if (n.has_attr(a)) attrs[a] = n.attr_i(a, 0);
  // A 3-D input without num_heads: heads of twice the cache's width (onnxruntime infers it so).
  const Shape cs = g.values[n.inputs[2]].shape;
  if (xs.size() == 3 && n.attr_i("num_heads", 0) == 0 && n.attr_i("rotary_embedding_dim", 0) == 0 && cs.size() == 2 && cs[1] > 0 &&
      xs[2] % (2 * cs[1]) == 0)
    attrs["num_heads"] = xs[2] / (2 * cs[1]);
  w.op("RotaryEmbedding", {n.inputs[0], n.inputs[2], n.inputs[3], pos}, attrs, out_of(n, 0), 23);
  w.replace(index);
  return true;
}

bool attention_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  return attention_expand_as(g, index, n, nullptr);
}

// QAttention(input, weight, bias, input_scale, weight_scale, mask_index?, input_zp?, weight_zp?,
// past?): Attention whose QKV projection is onnxruntime's integer one,


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
  using namespace contrib;
  const std::string ms = "com.microsoft.";
  register_expanded(ms + "Gelu", 1, 1, 1, like_input(0), [](Graph& g, size_t i) { return gelu_expand(g, i, "none"); });
  register_expanded(ms + "BiasGelu", 2, 2, 1, like_input(0), [](Graph& g, size_t i) { return gelu_expand(g, i, "none"); });
  register_expanded(ms + "FastGelu", 1, 2, 1, like_input(0), [](Graph& g, size_t i) { return gelu_expand(g, i, "tanh"); });
  register_expanded(ms + "QuickGelu", 1, 1, 1, like_input(0), quick_gelu_expand);
  register_expanded(ms + "BiasAdd", 3, 3, 1, like_input(0), bias_add_expand);
  register_expanded(ms + "FusedMatMul", 2, 2, 1, like_input(0), fused_matmul_expand);
  register_expanded(ms + "TransposeMatMul", 2, 2, 1, like_input(0), fused_matmul_expand);  // FusedMatMul's older name
  register_expanded(ms + "FusedConv", 2, 4, 1, like_input(0), fused_conv_expand, 1u << 2);
  register_expanded(ms + "FusedGemm", 2, 3, 1, like_input(0), fused_gemm_expand);
  register_expanded(ms + "SkipLayerNormalization", 3, 5, 4, like_input(0), [](Graph& g, size_t i) { return skip_norm_expand(g, i, true); });
  register_expanded(ms + "SkipSimplifiedLayerNormalization", 3, 4, 4, like_input(0),
                    [](Graph& g, size_t i) { return skip_norm_expand(g, i, false); });
  register_expanded(ms + "EmbedLayerNormalization", 7, 9, 3, embed_norm_infer, embed_norm_expand, 1u << 1 | 1u << 4);  // segment_ids, segment_embedding
  register_expanded(ms + "Attention", 2, 7, 2, attention_contrib_infer, attention_expand);
  register_expanded(ms + "RotaryEmbedding", 4, 4, 1, like_input(0), contrib_rotary_expand);
  register_expanded(ms + "MultiHeadAttention", 1, 10, 4, mha_infer, mha_expand, 0x3FEu);  // every input but query may be omitted
  register_contrib_quant_ops();
  register_contrib_gqa_ops();
  register_contrib_diffusion_ops();
  // onnxruntime registers SimplifiedLayerNormalization in the default domain.
  register_expanded("SimplifiedLayerNormalization", 2, 2, 2, like_input(0), simplified_norm_expand);
}

}  // namespace fusor
