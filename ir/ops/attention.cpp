// Attention (opsets 23-25), RotaryEmbedding (opset 23) and TensorScatter (opset 24, the KV-cache
// update): shape rules and CPU references.
//
// Attention follows the ONNX reference (onnx/reference/ops/op_attention.py) step by step:
//   Q [B, Hq, Sq, D] (or 3-D [B, Sq, Hq*D] with q_num_heads), K [B, Hkv, Skv, D],
//   V [B, Hkv, Skv, Dv]; past_key/past_value [B, Hkv, P, D|Dv] are prepended along the
//   sequence (present_* outputs, T = P + Skv); query head h reads kv head h / (Hq / Hkv).
//   logits = (Q*sqrt(scale)) (K*sqrt(scale))^T, softcap c*tanh(x/c) when softcap > 0, plus an
//   additive bias: attn_mask (bool: True->0, False->-inf; float: added; a last dim shorter
//   than T padded with -inf/False), is_causal (key j allowed iff j <= i + offset), the
//   left/right window (opset 25) and nonpad_kv_seqlen (key j allowed iff j < len[b]); offset
//   is P with a past, len[b] - Sq with nonpad_kv_seqlen, else 0. Softmax over keys; a row whose
//   bias is all -inf gives zeros (Y = 0). qk_matmul_output: mode 0 the scaled product before
//   the softcap (the spec's "output of qk matmul", as onnxruntime; onnx.reference 1.23 returns
//   the softcapped logits there, red-team round 13), 1 the softcapped logits, 2 logits + bias,
//   3 the softmax.
// The reference computes in double; outputs round once to Q's dtype.
#include <cmath>
#include <cstring>
#include <limits>

#include "ir/ops/attention.h"
#include "ir/ops/op_helpers.h"

namespace fusor {

using namespace op_helpers;

AttentionDims attention_dims(const Node& n, const std::vector<const Shape*>& s) {
  auto bad = [&](const std::string& why) { return Error("shape", n.label() + ": " + why); };
  AttentionDims d;
  const Shape &q = *s[0], &k = *s[1], &v = *s[2];
  if (q.size() != k.size() || q.size() != v.size() || (q.size() != 3 && q.size() != 4))
    throw bad("Q, K and V must all be 3-D or all 4-D, got " + shape_str(q) + ", " + shape_str(k) + ", " + shape_str(v));
  d.rank3 = q.size() == 3;
  d.B = q[0];
  if (k[0] != d.B || v[0] != d.B) throw bad("Q, K and V differ in batch size");
  if (d.rank3) {
    d.Hq = n.attr_i("q_num_heads", 0), d.Hkv = n.attr_i("kv_num_heads", 0);
    if (d.Hq <= 0 || d.Hkv <= 0) throw bad("3-D inputs need positive q_num_heads and kv_num_heads attributes");
    if (q[2] % d.Hq || k[2] % d.Hkv || v[2] % d.Hkv) throw bad("hidden sizes are not divisible by the head counts");
    d.Sq = q[1], d.Skv = k[1];
    d.D = q[2] / d.Hq;
    d.Dv = v[2] / d.Hkv;
    if (k[2] / d.Hkv != d.D) throw bad("K's head size differs from Q's");
    if (v[1] != d.Skv) throw bad("K and V differ in sequence length");
  } else {
    d.Hq = q[1], d.Hkv = k[1], d.Sq = q[2], d.Skv = k[2], d.D = q[3], d.Dv = v[3];
    if (k[3] != d.D) throw bad("K's head size " + std::to_string(k[3]) + " differs from Q's " + std::to_string(d.D));
    if (v[1] != d.Hkv || v[2] != d.Skv) throw bad("K " + shape_str(k) + " and V " + shape_str(v) + " differ in heads or length");
  }
  // Bounds the loops over heads of a hostile empty tensor ([B, S, 0] with 2^60 heads).
  if (d.rank3 && (d.Hq > std::max<int64_t>(q[2], 1) || d.Hkv > std::max<int64_t>(k[2], 1)))
    throw bad("more heads than hidden units");
  if (d.Hkv <= 0 || d.Hq % d.Hkv) throw bad("q heads " + std::to_string(d.Hq) + " are not a multiple of kv heads " + std::to_string(d.Hkv));
  const Shape* pk = s.size() > 4 ? s[4] : nullptr;
  const Shape* pv = s.size() > 5 ? s[5] : nullptr;
  if ((pk == nullptr) != (pv == nullptr)) throw bad("past_key and past_value must be given together");
  if (pk) {
    if (pk->size() != 4 || (*pk)[0] != d.B || (*pk)[1] != d.Hkv || (*pk)[3] != d.D)
      throw bad("past_key must be [" + std::to_string(d.B) + ", " + std::to_string(d.Hkv) + ", P, " + std::to_string(d.D) + "], got " + shape_str(*pk));
    d.P = (*pk)[2];
    if (pv->size() != 4 || (*pv)[0] != d.B || (*pv)[1] != d.Hkv || (*pv)[2] != d.P || (*pv)[3] != d.Dv)
      throw bad("past_value " + shape_str(*pv) + " does not match past_key " + shape_str(*pk) + " and V");
  }
  d.T = d.P + d.Skv;
  if (s.size() > 3 && s[3]) {
    const Shape& m = *s[3];
    if (m.empty() || m.size() > 4) throw bad("attn_mask must have rank 1 to 4, got " + shape_str(m));
    if (m.back() > d.T) throw bad("attn_mask's last dim " + std::to_string(m.back()) + " exceeds the total sequence length " + std::to_string(d.T));
    const Shape full{d.B, d.Hq, d.Sq, d.T};
    for (size_t i = 0; i + 1 < m.size(); ++i) {
      const int64_t want = full[4 - m.size() + i];
      if (m[i] != 1 && m[i] != want) throw bad("attn_mask " + shape_str(m) + " does not broadcast to " + shape_str(full));
    }
  }
  if (s.size() > 6 && s[6]) {
    if (pk) throw bad("nonpad_kv_seqlen cannot be combined with past_key/past_value");
    if (*s[6] != Shape{d.B}) throw bad("nonpad_kv_seqlen must have shape [" + std::to_string(d.B) + "], got " + shape_str(*s[6]));
    d.nonpad = true;
  }
  if (d.rank3) shape_mul(n, d.Hq, d.Dv);  // the output's hidden size (Hq x head size) must fit int64
  return d;
}

namespace {

void attention_infer(InferContext& ctx) {
  const DType t = ctx.dtype(0);
  if (!dtype_is_float(t)) ctx.fail(std::string("Q must be a float tensor, got ") + dtype_name(t));
  for (int i : {1, 2, 4, 5})
    if (ctx.has_input(i) && ctx.dtype(i) != t) ctx.fail("input " + std::to_string(i) + " must have Q's dtype");
  if (ctx.has_input(3) && ctx.dtype(3) != DType::boolean && !dtype_is_float(ctx.dtype(3)))
    ctx.fail("attn_mask must be bool or float");
  if (ctx.has_input(6) && ctx.dtype(6) != DType::i64) ctx.fail("nonpad_kv_seqlen must be int64");
  std::vector<const Shape*> s;
  for (int i = 0; i < 7; ++i) s.push_back(ctx.has_input(i) ? &ctx.shape(i) : nullptr);
  const AttentionDims d = attention_dims(ctx.node(), s);
  const int64_t mode = ctx.node().attr_i("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) ctx.fail("qk_matmul_output_mode must be 0..3, got " + std::to_string(mode));
  if (ctx.node().attr_i("left_window_size", -1) < -1 || ctx.node().attr_i("right_window_size", -1) < -1)
    ctx.fail("window sizes must be -1 or non-negative");
  ctx.set_output(0, t, d.rank3 ? Shape{d.B, d.Sq, d.Hq * d.Dv} : Shape{d.B, d.Hq, d.Sq, d.Dv});
  ctx.set_output(1, t, {d.B, d.Hkv, d.T, d.D});
  ctx.set_output(2, t, {d.B, d.Hkv, d.T, d.Dv});
  ctx.set_output(3, t, {d.B, d.Hq, d.Sq, d.T});
}

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// Element of Q/K/V/past at (b, h, s, e) of the 4-D view, for a 3-D [B, S, H*E] or 4-D tensor.
struct HeadView {
  const Tensor* t = nullptr;
  bool rank3 = false;
  int64_t H = 0, S = 0, E = 0;
  double at(int64_t b, int64_t h, int64_t s, int64_t e) const {
    return t->get(rank3 ? ((b * S + s) * H + h) * E + e : ((b * H + h) * S + s) * E + e);
  }
};

void attention_ref(const Node& n, const Ins& in, Outs& out) {
  std::vector<const Shape*> s;
  for (size_t i = 0; i < 7; ++i) s.push_back(opt_in(in, i) ? &opt_in(in, i)->shape() : nullptr);
  const AttentionDims d = attention_dims(n, s);
  const Tensor* mask = opt_in(in, 3);
  const Tensor *pk = opt_in(in, 4), *pv = opt_in(in, 5), *nonpad = opt_in(in, 6);
  const HeadView Q{in[0], d.rank3, d.Hq, d.Sq, d.D}, K{in[1], d.rank3, d.Hkv, d.Skv, d.D}, V{in[2], d.rank3, d.Hkv, d.Skv, d.Dv};
  const HeadView PK{pk, false, d.Hkv, d.P, d.D}, PV{pv, false, d.Hkv, d.P, d.Dv};
  const double scale = n.has_attr("scale") ? n.attr_f("scale", 1.0) : 1.0 / std::sqrt(static_cast<double>(d.D));
  const double rs = std::sqrt(scale);
  const double softcap = n.attr_f("softcap", 0.0);
  const bool causal = n.attr_i("is_causal", 0) != 0;
  const int64_t left = n.attr_i("left_window_size", -1), right = n.attr_i("right_window_size", -1);
  const int64_t mode = n.attr_i("qk_matmul_output_mode", 0);
  const int64_t group = d.Hq / d.Hkv;

  // present_key/value: the concatenated caches; K_all/V_all read them.
  Tensor kall(DType::f64, {d.B, d.Hkv, d.T, d.D}), vall(DType::f64, {d.B, d.Hkv, d.T, d.Dv});
  // Every loop below is bounded by an output's size; empty outputs leave nothing to compute.
  const bool want_qk = has_out(out, 3) && out[3].numel() > 0;
  if (kall.numel() + vall.numel() == 0 && out[0].numel() == 0 && !want_qk) return;
  for (int64_t b = 0; b < d.B && kall.numel() + vall.numel() > 0; ++b)
    for (int64_t h = 0; h < d.Hkv; ++h)
      for (int64_t j = 0; j < d.T; ++j) {
        for (int64_t e = 0; e < d.D; ++e)
          kall.set(((b * d.Hkv + h) * d.T + j) * d.D + e, j < d.P ? PK.at(b, h, j, e) : K.at(b, h, j - d.P, e));
        for (int64_t e = 0; e < d.Dv; ++e)
          vall.set(((b * d.Hkv + h) * d.T + j) * d.Dv + e, j < d.P ? PV.at(b, h, j, e) : V.at(b, h, j - d.P, e));
      }
  const double* kp = kall.data<double>();
  const double* vp = vall.data<double>();
  if (has_out(out, 1))
    for (int64_t i = 0; i < kall.numel(); ++i) out[1].set(i, kp[i]);
  if (has_out(out, 2))
    for (int64_t i = 0; i < vall.numel(); ++i) out[2].set(i, vp[i]);

  // Mask strides over (B, Hq, Sq, T) for a right-aligned, broadcast mask (its last dim may be short).
  int64_t ms[4] = {0, 0, 0, 0}, mlast = 0;
  if (mask) {
    const Shape& m = mask->shape();
    const Shape cs = contiguous_strides(m);
    for (size_t i = 0; i < m.size(); ++i) ms[4 - m.size() + i] = m[i] == 1 && i + 1 < m.size() ? 0 : cs[i];
    mlast = m.back();
  }
  if (out[0].numel() == 0 && !want_qk) return;
  std::vector<double> q(static_cast<size_t>(d.D)), logit(static_cast<size_t>(d.T)), raw(static_cast<size_t>(d.T)), bias(static_cast<size_t>(d.T)),
      p(static_cast<size_t>(d.T));
  for (int64_t b = 0; b < d.B; ++b) {
    const int64_t len = nonpad ? nonpad->get_int(b) : d.T;
    if (len < 0 || len > d.T) ref_fail(n, "nonpad_kv_seqlen[" + std::to_string(b) + "] = " + std::to_string(len) + " is outside [0, " + std::to_string(d.T) + "]");
    const int64_t offset = d.P > 0 ? d.P : nonpad ? len - d.Sq : 0;
    for (int64_t h = 0; h < d.Hq; ++h) {
      const int64_t hk = h / group;
      for (int64_t i = 0; i < d.Sq; ++i) {
        for (int64_t e = 0; e < d.D; ++e) q[e] = Q.at(b, h, i, e) * rs;
        double bias_max = kNegInf;
        for (int64_t j = 0; j < d.T; ++j) {
          const double* kr = kp + ((b * d.Hkv + hk) * d.T + j) * d.D;
          double acc = 0;
          for (int64_t e = 0; e < d.D; ++e) acc += q[e] * (kr[e] * rs);
          raw[j] = acc;
          if (softcap > 0) acc = softcap * std::tanh(acc / softcap);
          logit[j] = acc;
          double bj = 0;
          if (mask) {
            if (j >= mlast) {
              bj = kNegInf;  // padding of a short mask
            } else {
              const int64_t off = b * ms[0] + h * ms[1] + i * ms[2] + j * ms[3];
              bj = mask->dtype() == DType::boolean ? (mask->get_int(off) ? 0.0 : kNegInf) : mask->get(off);
            }
          }
          const int64_t diff = i + offset - j;  // query position minus key position
          if (causal && diff < 0) bj += kNegInf;
          if ((left >= 0 && diff > left) || (right >= 0 && -diff > right)) bj += kNegInf;
          if (nonpad && j >= len) bj += kNegInf;
          bias[j] = bj;
          bias_max = std::max(bias_max, bj);
        }
        // Softmax of logits + bias as the reference writes it (NaN propagates through the max).
        double mx = kNegInf;
        bool nan = false;
        for (int64_t j = 0; j < d.T; ++j) {
          const double x = logit[j] + bias[j];
          nan = nan || std::isnan(x);
          mx = std::max(mx, x);
        }
        if (nan) mx = std::numeric_limits<double>::quiet_NaN();
        const double safe = mx == kNegInf ? 0.0 : mx;
        double sum = 0;
        for (int64_t j = 0; j < d.T; ++j) sum += p[j] = std::exp(logit[j] + bias[j] - safe);
        if (sum == 0) sum = 1;
        const bool masked_row = bias_max == kNegInf;
        for (int64_t j = 0; j < d.T; ++j) p[j] = masked_row ? 0.0 : p[j] / sum;
        if (has_out(out, 3)) {
          const int64_t o = ((b * d.Hq + h) * d.Sq + i) * d.T;
          for (int64_t j = 0; j < d.T; ++j)
            out[3].set(o + j, mode == 3 ? p[j] : mode == 2 ? logit[j] + bias[j] : mode == 1 ? logit[j] : raw[j]);
        }
        for (int64_t e = 0; e < d.Dv; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < d.T; ++j) acc += p[j] * vp[((b * d.Hkv + hk) * d.T + j) * d.Dv + e];
          out[0].set(d.rank3 ? ((b * d.Sq + i) * d.Hq + h) * d.Dv + e : ((b * d.Hq + h) * d.Sq + i) * d.Dv + e, acc);
        }
      }
    }
  }
}

// ---------------------------------------------------------------- RotaryEmbedding

}  // namespace

RotaryDims rotary_dims(const Node& n, const Shape& x, const Shape& cos, const Shape& sin, const Shape* pos) {
  auto bad = [&](const std::string& why) { return Error("shape", n.label() + ": " + why); };
  RotaryDims r;
  if (x.size() == 4) {
    r.B = x[0], r.H = x[1], r.S = x[2], r.hd = x[3];
  } else if (x.size() == 3) {
    r.rank3 = true;
    r.B = x[0], r.S = x[1], r.H = n.attr_i("num_heads", 0);
    if (r.H <= 0 || r.H > std::max<int64_t>(x[2], 1) || x[2] % r.H) throw bad("3-D input needs a num_heads attribute dividing its hidden size " + std::to_string(x[2]));
    r.hd = x[2] / r.H;
  } else {
    throw bad("input must be 3-D or 4-D, got " + shape_str(x));
  }
  r.rd = n.attr_i("rotary_embedding_dim", 0);
  if (r.rd == 0) r.rd = r.hd;
  if (r.rd < 0 || r.rd > r.hd || r.rd % 2) throw bad("rotary_embedding_dim " + std::to_string(r.rd) + " must be even and at most the head size " + std::to_string(r.hd));
  if (cos != sin) throw bad("cos_cache " + shape_str(cos) + " and sin_cache " + shape_str(sin) + " differ");
  if (pos) {
    if (*pos != Shape{r.B, r.S}) throw bad("position_ids must be [" + std::to_string(r.B) + ", " + std::to_string(r.S) + "], got " + shape_str(*pos));
    if (cos.size() != 2 || cos[1] != r.rd / 2) throw bad("cos_cache must be [max_position, " + std::to_string(r.rd / 2) + "], got " + shape_str(cos));
  } else if (cos != Shape{r.B, r.S, r.rd / 2}) {
    throw bad("without position_ids cos_cache must be [" + std::to_string(r.B) + ", " + std::to_string(r.S) + ", " + std::to_string(r.rd / 2) + "], got " + shape_str(cos));
  }
  return r;
}

namespace {

void rotary_infer(InferContext& ctx) {
  const DType t = ctx.dtype(0);
  if (!dtype_is_float(t)) ctx.fail(std::string("input must be a float tensor, got ") + dtype_name(t));
  if (ctx.dtype(1) != t || ctx.dtype(2) != t) ctx.fail("cos_cache and sin_cache must have the input's dtype");
  if (ctx.has_input(3) && !dtype_is_int(ctx.dtype(3))) ctx.fail("position_ids must be an integer tensor");
  rotary_dims(ctx.node(), ctx.shape(0), ctx.shape(1), ctx.shape(2), ctx.has_input(3) ? &ctx.shape(3) : nullptr);
  ctx.set_output(0, t, ctx.shape(0));
}

void rotary_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor &x = *in[0], &cosc = *in[1], &sinc = *in[2];
  const Tensor* pos = opt_in(in, 3);
  const RotaryDims r = rotary_dims(n, x.shape(), cosc.shape(), sinc.shape(), pos ? &pos->shape() : nullptr);
  if (x.numel() == 0) return;
  const bool interleaved = n.attr_i("interleaved", 0) != 0;
  const int64_t half = r.rd / 2;
  for (int64_t b = 0; b < r.B; ++b)
    for (int64_t s = 0; s < r.S; ++s) {
      int64_t row = b * r.S + s;  // cache row
      if (pos) {
        row = pos->get_int(b * r.S + s);
        if (row < 0 || row >= cosc.shape()[0])
          ref_fail(n, "position id " + std::to_string(row) + " is outside the cache of " + std::to_string(cosc.shape()[0]) + " rows");
      }
      for (int64_t h = 0; h < r.H; ++h) {
        const int64_t base = r.rank3 ? ((b * r.S + s) * r.H + h) * r.hd : ((b * r.H + h) * r.S + s) * r.hd;
        for (int64_t k = 0; k < half; ++k) {
          const int64_t i1 = base + (interleaved ? 2 * k : k), i2 = base + (interleaved ? 2 * k + 1 : k + half);
          const double c = cosc.get(row * half + k), sn = sinc.get(row * half + k);
          const double x1 = x.get(i1), x2 = x.get(i2);
          out[0].set(i1, c * x1 - sn * x2);
          out[0].set(i2, sn * x1 + c * x2);
        }
        for (int64_t e = r.rd; e < r.hd; ++e) out[0].set(base + e, x.get(base + e));
      }
    }
}

// ---- TensorScatter (opset 24): a KV-cache update ------------------------------------------

// past_cache [B, ..., max_seq (axis), ...] and update [B, ..., seq (axis), ...] agree off axis
// (axis != 0, the batch); present = past with update[b, ..., s, ...] written at sequence
// position write_indices[b] + s (absent: 0), taken modulo max_seq in mode "circular"; "linear"
// needs write_indices[b] + seq <= max_seq (an error otherwise, where the spec leaves it
// undefined).
int64_t tensorscatter_axis(const Node& n, int64_t rank) {
  const int64_t axis = normalize_axis(n.attr_i("axis", -2), rank, n.label());
  if (axis == 0) throw Error("shape", n.label() + ": axis must not be the batch axis 0");
  const std::string mode = n.attr_s("mode", "linear");
  if (mode != "linear" && mode != "circular") throw Error("shape", n.label() + ": unknown mode '" + mode + "'");
  return axis;
}

void tensorscatter_infer(InferContext& ctx) {
  const Shape &c = ctx.shape(0), &u = ctx.shape(1);
  if (c.size() < 2 || u.size() != c.size()) ctx.fail("past_cache and update need the same rank >= 2, got " + shape_str(c) + ", " + shape_str(u));
  const int64_t axis = tensorscatter_axis(ctx.node(), static_cast<int64_t>(c.size()));
  for (size_t i = 0; i < c.size(); ++i)
    if (static_cast<int64_t>(i) == axis ? u[i] > c[i] : u[i] != c[i])
      ctx.fail("update " + shape_str(u) + " does not fit past_cache " + shape_str(c) + " along axis " + std::to_string(axis));
  if (ctx.dtype(1) != ctx.dtype(0)) ctx.fail("update's dtype differs from past_cache's");
  if (ctx.has_input(2) && (ctx.shape(2) != Shape{c[0]} || !dtype_is_int(ctx.dtype(2))))
    ctx.fail("write_indices must be integer [" + std::to_string(c[0]) + "], got " + shape_str(ctx.shape(2)));
  ctx.set_output(0, ctx.dtype(0), c);
}

void tensorscatter_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor &c = *in[0], &u = *in[1];
  const Shape& cs = c.shape();
  const int64_t axis = tensorscatter_axis(n, c.rank());
  const bool circular = n.attr_s("mode", "linear") == "circular";
  const int64_t max_seq = cs[axis], seq = u.shape()[axis];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 1; d < axis; ++d) outer *= cs[d];
  for (int64_t d = axis + 1; d < c.rank(); ++d) inner *= cs[d];
  const size_t es = dtype_size(c.dtype());
  if (c.nbytes() == 0) return;  // nothing to copy or write (and no buffer to memcpy from)
  std::memcpy(out[0].raw(), c.raw(), c.nbytes());
  const Tensor* wi = opt_in(in, 2);
  for (int64_t b = 0; b < cs[0]; ++b) {
    const int64_t start = wi ? wi->get_int(b) : 0;
    if (start < 0 || (!circular && start > max_seq - seq) || (circular && max_seq == 0 && seq > 0))
      ref_fail(n, "write index " + std::to_string(start) + " of batch " + std::to_string(b) + " does not fit " +
                      std::to_string(seq) + " positions in " + std::to_string(max_seq));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < seq; ++k) {
        const int64_t pos = circular ? (start % max_seq + k) % max_seq : start + k;
        const int64_t dst = ((b * outer + o) * max_seq + pos) * inner, src = ((b * outer + o) * seq + k) * inner;
        std::memcpy(out[0].raw() + dst * es, u.raw() + src * es, static_cast<size_t>(inner) * es);
      }
  }
}

}  // namespace

void register_attention_ops() {
  register_op(table_entry("Attention", 3, 7, attention_infer, attention_ref, 4));
  register_op(table_entry("RotaryEmbedding", 3, 4, rotary_infer, rotary_ref));
  register_op(table_entry("TensorScatter", 2, 3, tensorscatter_infer, tensorscatter_ref));
}

}  // namespace fusor
