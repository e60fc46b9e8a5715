// Ops of state-space and hybrid sequence models (opset 27):
//
//  * CausalConvWithState-27 (Mamba-style short convolution), rewritten before inference into
//    ops of the table (its ONNX function body), so it fuses and runs on every backend: input
//    [B, C, L], a depthwise weight [C, 1, K], optional bias [C] and past_state [B, C, K - 1]
//    (absent: zeros).
//    padded = Concat(past_state, input) along L; output = Conv(padded, weight, bias, group = C),
//    then x * sigmoid(x) when activation is "silu" (alias "swish"; computed in float32 for 16-bit
//    types), none otherwise ("none" or absent); present_state = the last K - 1 steps of padded.
//  * LinearAttention-27 (linear attention and gated delta rule; Yang et al. 2024, "Gated Delta
//    Networks"): query [B, T, Hq * Dk], key [B, T, Hkv * Dk], value [B, T, Hkv * Dv], a state S
//    per (batch, kv head) [Dk, Dv] starting at past_state [B, Hkv, Dk, Dv] (absent: zeros). Per
//    step t, update_rule (default "gated_delta"):
//      linear:      S = S + k v^T
//      gated:       S = diag(e^decay) S + k v^T
//      delta:       S = S + k (beta (v - S^T k))^T
//      gated_delta: S' = diag(e^decay) S, then S = S' + k (beta (v - S'^T k))^T
//    and output_t = scale * q^T S of the query head's kv head (h / (Hq / Hkv)), scale default
//    1 / sqrt(Dk). decay is per key dim [B, T, Hkv * Dk] or per head [B, T, Hkv]; beta per head
//    [B, T, Hkv] or shared [B, T, 1]. Outputs output [B, T, Hq * Dv] and present_state (S after
//    the last step). A reference kernel in double (the GPUs run it through host fallback).
// Errors: Error("shape") naming the node for bad ranks, shapes or an unknown activation or rule.
#include <cmath>

#include "ir/ops/op_helpers.h"

namespace fusor {
namespace {

using namespace op_helpers;

bool causal_conv_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  auto bad = [&](const std::string& why) { return Error("shape", n.label() + ": " + why); };
  auto in = [&](size_t i) { return i < n.inputs.size() ? n.inputs[i] : -1; };
  if (in(0) < 0 || in(1) < 0 || n.outputs.empty()) throw bad("needs input and weight");
  const Shape x = g.values[in(0)].shape, w = g.values[in(1)].shape;
  const DType dt = g.values[in(0)].dtype;
  if (x.size() != 3 || w.size() != 3 || w[0] != x[1] || w[1] != 1 || w[2] < 1)
    throw bad("input must be [B, C, L] and weight the depthwise [C, 1, K], got " + shape_str(x) + ", " + shape_str(w));
  if (!dtype_is_float(dt) || g.values[in(1)].dtype != dt) throw bad("input and weight must share a float dtype");
  const std::string act = n.attr_s("activation", "none");
  if (act != "none" && act != "silu" && act != "swish") throw bad("unknown activation '" + act + "'");
  const int64_t B = x[0], C = x[1], L = x[2], K = w[2];
  const Shape state{B, C, K - 1};
  RewriteNodes e{g, n.name, {}};
  int past = in(3);
  if (past >= 0) {
    if (g.values[past].shape != state || g.values[past].dtype != dt) throw bad("past_state must be " + shape_str(state));
  } else {
    Tensor zeros(dt, state);  // zero-filled
    past = g.add_constant(g.unique_name(n.name + "/past_state"), std::move(zeros));
  }
  if (in(2) >= 0 && g.values[in(2)].shape != Shape{C}) throw bad("bias must be [" + std::to_string(C) + "]");
  const int padded = e.op("Concat", {past, in(0)}, {{"axis", int64_t{2}}});
  std::vector<int> conv_in{padded, in(1)};
  if (in(2) >= 0) conv_in.push_back(in(2));
  const bool silu = act != "none";
  const int conv = e.op("Conv", conv_in, {{"group", C}}, silu ? -1 : n.outputs[0]);
  if (silu) {
    const bool narrow = dt != DType::f32 && dt != DType::f64;
    const int f = narrow ? e.op("Cast", {conv}, {{"to", int64_t{1}}}) : conv;
    const int y = e.op("Mul", {f, e.op("Sigmoid", {f})}, {}, narrow ? -1 : n.outputs[0]);
    if (narrow) e.op("Cast", {y}, {{"to", static_cast<int64_t>(dtype_to_onnx(dt))}}, n.outputs[0]);
  }
  if (n.outputs.size() > 1 && n.outputs[1] >= 0)
    e.op("Slice", {padded, e.ints({L}), e.ints({L + K - 1}), e.ints({2})}, {}, n.outputs[1]);
  e.replace(index);
  return true;
}

// ---- LinearAttention ------------------------------------------------------------------------

struct LinAttn {
  int64_t B = 0, T = 0, Hq = 0, Hkv = 0, Dk = 0, Dv = 0;
  bool decay = false, beta = false, decay_per_head = false, beta_shared = false;
  std::string rule;
};

LinAttn linattn_geom(const Node& n, const std::vector<const Shape*>& s) {
  auto bad = [&](const std::string& why) { return Error("shape", n.label() + ": " + why); };
  LinAttn a;
  a.rule = n.attr_s("update_rule", "gated_delta");
  if (a.rule != "linear" && a.rule != "gated" && a.rule != "delta" && a.rule != "gated_delta")
    throw bad("unknown update_rule '" + a.rule + "'");
  const Shape &q = *s[0], &k = *s[1], &v = *s[2];
  if (q.size() != 3 || k.size() != 3 || v.size() != 3) throw bad("query, key and value must be 3-D [B, T, H * D]");
  a.B = q[0], a.T = q[1], a.Hq = n.attr_i("q_num_heads", 0), a.Hkv = n.attr_i("kv_num_heads", 0);
  if (a.Hq < 1 || a.Hkv < 1 || a.Hq % a.Hkv) throw bad("q_num_heads must be a positive multiple of kv_num_heads");
  if (k[0] != a.B || v[0] != a.B || k[1] != a.T || v[1] != a.T) throw bad("query, key and value differ in batch or length");
  if (q[2] % a.Hq || k[2] % a.Hkv || v[2] % a.Hkv) throw bad("hidden sizes are not divisible by the head counts");
  a.Dk = q[2] / a.Hq, a.Dv = v[2] / a.Hkv;
  if (k[2] / a.Hkv != a.Dk) throw bad("key's head size differs from query's");
  const Shape state{a.B, a.Hkv, a.Dk, a.Dv};
  if (s[3] && *s[3] != state) throw bad("past_state must be " + shape_str(state) + ", got " + shape_str(*s[3]));
  const bool gated = a.rule == "gated" || a.rule == "gated_delta", delta = a.rule == "delta" || a.rule == "gated_delta";
  if (gated && !s[4]) throw bad("update_rule '" + a.rule + "' needs decay");
  if (delta && !s[5]) throw bad("update_rule '" + a.rule + "' needs beta");
  if (gated) {
    const Shape& d = *s[4];
    if (d.size() != 3 || d[0] != a.B || d[1] != a.T || (d[2] != a.Hkv * a.Dk && d[2] != a.Hkv))
      throw bad("decay must be [B, T, Hkv * Dk] or [B, T, Hkv], got " + shape_str(d));
    a.decay = true, a.decay_per_head = d[2] == a.Hkv && a.Dk != 1;
  }
  if (delta) {
    const Shape& b = *s[5];
    if (b.size() != 3 || b[0] != a.B || b[1] != a.T || (b[2] != a.Hkv && b[2] != 1))
      throw bad("beta must be [B, T, Hkv] or [B, T, 1], got " + shape_str(b));
    a.beta = true, a.beta_shared = b[2] == 1 && a.Hkv != 1;
  }
  return a;
}

void linattn_infer(InferContext& ctx) {
  std::vector<const Shape*> s;
  for (int i = 0; i < 6; ++i) s.push_back(ctx.has_input(i) ? &ctx.shape(i) : nullptr);
  const DType dt = ctx.dtype(0);
  if (!dtype_is_float(dt)) ctx.fail(std::string("query must be float, got ") + dtype_name(dt));
  for (int i = 1; i < 6; ++i)
    if (ctx.has_input(i) && !dtype_is_float(ctx.dtype(i))) ctx.fail("every input must be float");
  const LinAttn a = linattn_geom(ctx.node(), s);
  ctx.set_output(0, dt, {a.B, a.T, a.Hq * a.Dv});
  if (ctx.num_outputs() > 1) ctx.set_output(1, ctx.has_input(3) ? ctx.dtype(3) : dt, {a.B, a.Hkv, a.Dk, a.Dv});
}

void linattn_ref(const Node& n, const Ins& in, Outs& out) {
  std::vector<const Shape*> s;
  for (size_t i = 0; i < 6; ++i) s.push_back(opt_in(in, i) ? &in[i]->shape() : nullptr);
  const LinAttn a = linattn_geom(n, s);
  const std::vector<double> q = load_doubles(*in[0]), k = load_doubles(*in[1]), v = load_doubles(*in[2]);
  const std::vector<double> decay = a.decay ? load_doubles(*in[4]) : std::vector<double>();
  const std::vector<double> beta = a.beta ? load_doubles(*in[5]) : std::vector<double>();
  const double scale = n.attr_f("scale", 1.0 / std::sqrt(static_cast<double>(a.Dk)));
  const int64_t Dk = a.Dk, Dv = a.Dv, G = a.Hq / a.Hkv;
  std::vector<double> S = opt_in(in, 3) ? load_doubles(*in[3]) : std::vector<double>(static_cast<size_t>(a.B * a.Hkv * Dk * Dv), 0.0);
  std::vector<double> y(static_cast<size_t>(a.B * a.T * a.Hq * Dv), 0.0), kv(static_cast<size_t>(Dv));
  for (int64_t b = 0; b < a.B; ++b)
    for (int64_t t = 0; t < a.T; ++t) {
      const int64_t bt = b * a.T + t;
      for (int64_t h = 0; h < a.Hkv; ++h) {
        double* st = S.data() + (b * a.Hkv + h) * Dk * Dv;
        const double* kt = k.data() + (bt * a.Hkv + h) * Dk;
        const double* vt = v.data() + (bt * a.Hkv + h) * Dv;
        if (a.decay)
          for (int64_t i = 0; i < Dk; ++i) {
            const double g = std::exp(a.decay_per_head ? decay[bt * a.Hkv + h] : decay[(bt * a.Hkv + h) * Dk + i]);
            for (int64_t j = 0; j < Dv; ++j) st[i * Dv + j] *= g;
          }
        // The row written into S: v, or for the delta rules beta (v - S^T k).
        for (int64_t j = 0; j < Dv; ++j) kv[j] = vt[j];
        if (a.beta) {
          const double bb = beta[a.beta_shared ? bt : bt * a.Hkv + h];
          for (int64_t j = 0; j < Dv; ++j) {
            double r = 0;
            for (int64_t i = 0; i < Dk; ++i) r += st[i * Dv + j] * kt[i];
            kv[j] = bb * (vt[j] - r);
          }
        }
        for (int64_t i = 0; i < Dk; ++i)
          for (int64_t j = 0; j < Dv; ++j) st[i * Dv + j] += kt[i] * kv[j];
        for (int64_t gq = 0; gq < G; ++gq) {
          const int64_t hq = h * G + gq;
          const double* qt = q.data() + (bt * a.Hq + hq) * Dk;
          double* yt = y.data() + (bt * a.Hq + hq) * Dv;
          for (int64_t j = 0; j < Dv; ++j) {
            double r = 0;
            for (int64_t i = 0; i < Dk; ++i) r += qt[i] * st[i * Dv + j];
            yt[j] = scale * r;
          }
        }
      }
    }
  store_doubles(out[0], y);
  if (has_out(out, 1)) store_doubles(out[1], S);
}

}  // namespace

void register_ssm_ops() {
  OpDef d = table_entry("CausalConvWithState", 2, 4, [](InferContext& ctx) { ctx.fail("rewritten before inference"); },
                        [](const Node& n, const Ins&, Outs&) { ref_fail(n, "rewritten before it runs"); }, 2);
  d.expand = causal_conv_expand;
  register_op(std::move(d));
  register_op(table_entry("LinearAttention", 3, 6, linattn_infer, linattn_ref, 2));
}

}  // namespace fusor
