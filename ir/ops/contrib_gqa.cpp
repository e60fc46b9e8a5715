// onnxruntime's GroupQueryAttention (domain com.microsoft), as onnxruntime-genai's decoder
// models use it, expanded at shape inference into standard ops like the other contrib ops
// (ir/ops/contrib.cpp), checked against onnxruntime 1.32 (tests/data/make_ort_mha.py):
//
//   GroupQueryAttention(query, key?, value?, past_key?, past_value?, seqlens_k,
//       total_sequence_length, cos_cache?, sin_cache?, position_ids?) num_heads, kv_num_heads,
//       scale, softcap=0, local_window_size=-1, do_rotary=0, rotary_interleaved=0
//     query [B, S, Hq * d] with key / value [B, S, Hkv * d] (or one packed query
//     [B, S, (Hq + 2 Hkv) * d]); past_key / past_value [B, Hkv, P, d]; seqlens_k int32 [B] is
//     each row's total length - 1, total_sequence_length the int32 scalar T.
//     Row b's new tokens sit at positions p_b .. p_b + S - 1, p_b = 0 for the first prompt
//     (S == T), else seqlens_k[b] + 1 - S; with do_rotary, q and k are rotated at those
//     positions (or position_ids) by RotaryEmbedding. present_key / present_value [B, Hkv, T, d]
//     hold row b's first p_b past entries, then its S new ones, then zeros. Query head h reads
//     key / value head h / (Hq / Hkv); scores = scale q.k (scale default 1 / sqrt(d)), then
//     softcap * tanh(scores / softcap) when softcap > 0; key j is seen by the query at position
//     p iff j <= p and j < seqlens_k[b] + 1 (seqlens_k[b] in [0, max(T, P)), else the index error of
//     the node named "<name>/seqlens_k must be in [0, max(total_sequence_length, past length))...") (and j > p - local_window_size when that is > 0; 0
//     sees none: zeros); Softmax; the attention in float32 for fp16 / bf16, rounded once
//     (onnxruntime's CPU kernel). present_key / present_value hold max(T, P) positions.
//   attention_bias, head_sink, smooth_softmax and the qk output are refused (Unsupported).
// Errors: Error("shape") / Unsupported naming the node, one line.
#include <cmath>
#include <limits>

#include "ir/ops/contrib_common.h"
#include "ir/ops/op_helpers.h"

namespace fusor {
namespace {

using namespace contrib;

int i64_of(RewriteNodes& w, int v) { return w.op("Cast", {v}, {{"to", int64_t{dtype_to_onnx(DType::i64)}}}); }

bool gqa_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  for (size_t k = 10; k < n.inputs.size(); ++k)
    if (n.inputs[k] >= 0) throw Unsupported("onnx", n.label() + ": attention_bias and head_sink inputs are not supported");
  if (n.attr_i("smooth_softmax", 0)) throw Unsupported("onnx", n.label() + ": smooth_softmax is not supported");
  if (out_of(n, 3) >= 0 || n.attr_i("qk_output", 0)) throw Unsupported("onnx", n.label() + ": the output_qk output is not supported");
  if (!all_known(g, n)) return false;
  auto bad = [&](const std::string& why) { return Error("shape", n.label() + ": " + why); };
  const DType t = g.values[n.inputs[0]].dtype;
  if (t != DType::f32 && t != DType::f16 && t != DType::bf16)
    throw bad("query must be float32, float16 or bfloat16, got " + std::string(dtype_name(t)));
  const int64_t Hq = n.attr_i("num_heads", 0), Hkv = n.attr_i("kv_num_heads", 0);
  if (Hq <= 0 || Hkv <= 0 || Hq % Hkv) throw bad("num_heads " + std::to_string(Hq) + " must be a positive multiple of kv_num_heads " + std::to_string(Hkv));
  const Shape qs = g.values[n.inputs[0]].shape;
  const int key = in_of(n, 1), value = in_of(n, 2), pk = in_of(n, 3), pv = in_of(n, 4), sl = in_of(n, 5), total = in_of(n, 6);
  if (sl < 0 || total < 0) throw bad("seqlens_k and total_sequence_length are required");
  const bool packed = key < 0;
  if (qs.size() != 3 || qs[2] % (packed ? Hq + 2 * Hkv : Hq))
    throw bad("query must be [B, S, " + std::string(packed ? "(num_heads + 2 kv_num_heads)" : "num_heads") + " x head size], got " + shape_str(qs));
  const int64_t B = qs[0], S = qs[1], d = qs[2] / (packed ? Hq + 2 * Hkv : Hq), G = Hq / Hkv;
  if (B <= 0 || S <= 0 || d <= 0) throw bad("query must have a batch, a sequence and a head size, got " + shape_str(qs));
  if (!packed && (value < 0 || g.values[key].shape != Shape{B, S, Hkv * d} || g.values[value].shape != Shape{B, S, Hkv * d}))
    throw bad("key and value must be [" + std::to_string(B) + ", " + std::to_string(S) + ", " + std::to_string(Hkv * d) + "], got " +
              shape_str(g.values[key].shape) + (value >= 0 ? ", " + shape_str(g.values[value].shape) : std::string(" and no value")));
  for (int v : {key, value, pk, pv})
    if (v >= 0 && g.values[v].dtype != t) throw bad("key, value and the past must be query's dtype " + std::string(dtype_name(t)));
  if ((pk >= 0) != (pv >= 0)) throw bad("past_key and past_value come together");
  int64_t Pb = 0;  // the past buffers' length
  if (pk >= 0) {
    const Shape ps = g.values[pk].shape;
    if (ps.size() != 4 || ps[0] != B || ps[1] != Hkv || ps[3] != d || g.values[pv].shape != ps)
      throw bad("past_key / past_value must be [" + std::to_string(B) + ", " + std::to_string(Hkv) + ", P, " + std::to_string(d) + "], got " +
                shape_str(ps) + ", " + shape_str(g.values[pv].shape));
    Pb = ps[2];
  }
  if (g.values[sl].dtype != DType::i32 || shape_numel(g.values[sl].shape) != B || g.values[sl].shape.empty())
    throw bad("seqlens_k must be int32 [" + std::to_string(B) + "], got " + dtype_name(g.values[sl].dtype) + " " + shape_str(g.values[sl].shape));
  if (g.values[total].dtype != DType::i32 || shape_numel(g.values[total].shape) != 1)
    throw bad("total_sequence_length must be one int32, got " + std::string(dtype_name(g.values[total].dtype)) + " " + shape_str(g.values[total].shape));
  if (const Tensor* tv = g.values[total].constant ? &*g.values[total].constant : nullptr) {  // known (a constant, or specialised on)
    const int64_t tot = tv->get_int(0);
    if (tot < S || (pk >= 0 && tot > Pb + S && Pb > 0))
      throw bad("total_sequence_length " + std::to_string(tot) + " must be at least the sequence length " + std::to_string(S) +
                (pk >= 0 && Pb > 0 ? " and at most past + sequence " + std::to_string(Pb + S) : std::string()));
  }
  const bool rotary = n.attr_i("do_rotary", 0) != 0;
  const int cosc = in_of(n, 7), sinc = in_of(n, 8), pid = in_of(n, 9);
  if (rotary && (cosc < 0 || sinc < 0)) throw bad("do_rotary needs cos_cache and sin_cache");

  RewriteNodes w{g, n.name, {}};
  const bool half = t == DType::f16 || t == DType::bf16;
  const auto heads = [&](int x, int64_t from, int64_t count) {  // [B, S, ..] columns -> [B, count, S, d]
    if (packed) x = w.op("Slice", {x, w.ints({from * d}), w.ints({(from + count) * d}), w.ints({2})});
    return w.op("Transpose", {w.op("Reshape", {x, w.ints({B, S, count, d})})}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  };
  int q = heads(n.inputs[0], 0, Hq);
  int k = packed ? heads(n.inputs[0], Hq, Hkv) : heads(key, 0, Hkv), v = packed ? heads(n.inputs[0], Hq + Hkv, Hkv) : heads(value, 0, Hkv);
  // p_b (int64 [B]) and the positions p_b + i ([B, S]).
  std::vector<int64_t> steps(static_cast<size_t>(S));
  for (int64_t i = 0; i < S; ++i) steps[i] = i;
  const int T = i64_of(w, w.op("Reshape", {total, w.ints({})}));
  const int first = w.op("Equal", {T, w.ints({S})});
  // The present holds max(T, P) positions (onnxruntime keeps a longer past buffer's length).
  const int Tp = Pb > 0 ? w.op("Max", {T, scalar(g, n, DType::i64, static_cast<double>(Pb))}) : T;
  const int j = w.op("Range", {scalar(g, n, DType::i64, 0), Tp, scalar(g, n, DType::i64, 1)});  // 0 .. Tp-1
  // seqlens_k in [0, Tp) as onnxruntime checks it: two index-checked lookups of j (s - Tp is in
  // Gather's [-Tp, Tp) iff s is in [0, 2 Tp), s iff s in [-Tp, Tp)); both give s where it is valid.
  const int sl64 = i64_of(w, w.op("Reshape", {sl, w.ints({B})}));
  const auto checked = [&](int index) {
    const int got = w.op("Gather", {j, index}, {{"axis", int64_t{0}}});
    w.nodes.back().name = g.unique_name(n.name + "/seqlens_k must be in [0, max(total_sequence_length, past length)) (a negative one shows as "
                                                  "seqlens_k - that bound)/check");
    return got;
  };
  const int sl_ok = w.op("Max", {checked(w.op("Sub", {sl64, Tp})), checked(sl64)});
  const int lens = w.op("Add", {sl_ok, w.ints({1})});  // each row's total length [B]
  const int past_len = w.op("Where", {first, w.ints({0}), w.op("Sub", {lens, w.ints({S})})});  // [B]
  const int pos = w.op("Add", {w.op("Unsqueeze", {past_len, w.ints({1})}), w.op("Reshape", {w.ints(steps), w.ints({1, S})})});  // [B, S]
  if (rotary) {
    const Shape cs = g.values[cosc].shape;
    if (cs.size() != 2 || cs[1] * 2 > d) throw bad("cos_cache must be [max positions, at most head size / 2], got " + shape_str(cs));
    std::map<std::string, AttrValue> ra{{"interleaved", n.attr_i("rotary_interleaved", 0)}};
    if (cs[1] * 2 < d) ra["rotary_embedding_dim"] = cs[1] * 2;
    const int at = pid >= 0 ? i64_of(w, pid) : pos;
    q = w.op("RotaryEmbedding", {q, cosc, sinc, at}, ra, -1, 23);
    k = w.op("RotaryEmbedding", {k, cosc, sinc, at}, ra, -1, 23);
  }
  // present: row b's first p_b past entries, its S new ones, zeros after ([B, Hkv, Tp, d]).
  const int jj = w.op("Unsqueeze", {j, w.ints({0})}), pl = w.op("Unsqueeze", {past_len, w.ints({1})});  // [1, T], [B, 1]
  const int from_new = w.op("Add", {w.op("Sub", {jj, pl}), w.ints({Pb})});
  int idx = w.op("Where", {w.op("Less", {jj, pl}), jj, from_new});
  idx = w.op("Max", {w.op("Min", {idx, w.ints({Pb + S - 1})}), w.ints({0})});
  const int valid = w.op("Less", {jj, w.op("Add", {pl, w.ints({S})})});  // [B, T]
  const auto present = [&](int past, int fresh, int out) {
    const int all = past >= 0 ? w.op("Concat", {past, fresh}, {{"axis", int64_t{2}}}) : fresh;  // [B, Hkv, Pb + S, d]
    const int rows = w.op("Transpose", {all}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
    const int got = w.op("GatherND", {rows, w.op("Unsqueeze", {idx, w.ints({-1})})}, {{"batch_dims", int64_t{1}}});  // [B, T, Hkv, d]
    const int kept = w.op("Where", {w.op("Reshape", {valid, w.ints({B, -1, 1, 1})}), got, scalar(g, n, t, 0.0)});
    return w.op("Transpose", {kept}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}}, out);
  };
  const int K = present(pk, k, out_of(n, 1)), V = present(pv, v, out_of(n, 2));
  // Scores per key head: the G query heads of a group and their S rows as one [G S, d] operand.
  const int qg = w.op("Reshape", {q, w.ints({B, Hkv, G * S, d})});
  int scores = w.op("MatMul", {qg, w.op("Transpose", {K}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}})});  // [B, Hkv, G S, T]
  if (half) w.nodes.back().f32_result = true;
  const double sc = n.attr_f("scale", 0.0) != 0.0 ? n.attr_f("scale", 0.0) : 1.0 / std::sqrt(static_cast<double>(d));
  scores = w.op("Mul", {scores, scalar(g, n, DType::f32, sc)});
  if (const double cap = n.attr_f("softcap", 0.0); cap > 0.0)
    scores = w.op("Mul", {w.op("Tanh", {w.op("Div", {scores, scalar(g, n, DType::f32, cap)})}), scalar(g, n, DType::f32, cap)});
  scores = w.op("Reshape", {scores, w.ints({B, Hkv, G, S, -1})});
  // Key j is seen from position p iff j <= p (and j > p - window).
  const int p3 = w.op("Unsqueeze", {pos, w.ints({2})});  // [B, S, 1]
  const int j3 = w.op("Reshape", {j, w.ints({1, 1, -1})});
  int seen = w.op("Not", {w.op("Greater", {j3, p3})});
  seen = w.op("And", {seen, w.op("Less", {j3, w.op("Reshape", {lens, w.ints({B, 1, 1})})})});  // and j < the row's length
  if (const int64_t win = n.attr_i("local_window_size", -1); win > 0)
    seen = w.op("And", {seen, w.op("Greater", {j3, w.op("Sub", {p3, w.ints({win})})})});
  seen = w.op("Unsqueeze", {seen, w.ints({1, 2})});  // [B, 1, 1, S, T]
  scores = w.op("Where", {seen, scores, scalar(g, n, DType::f32, -static_cast<double>(std::numeric_limits<float>::max()))});
  const int probs = w.op("Reshape", {w.op("Softmax", {scores}, {{"axis", int64_t{-1}}}), w.ints({B, Hkv, G * S, -1})});
  const int vf = half ? w.op("Cast", {V}, {{"to", int64_t{dtype_to_onnx(DType::f32)}}}) : V;
  const int y = w.op("Reshape", {w.op("MatMul", {probs, vf}), w.ints({B, Hq, S, d})});
  int r = w.op("Reshape", {w.op("Transpose", {y}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}}), w.ints({B, S, Hq * d})});
  // local_window_size 0 sees no key: onnxruntime writes zeros.
  if (n.attr_i("local_window_size", -1) == 0) r = w.op("Mul", {r, scalar(g, n, DType::f32, 0.0)});
  if (!half) w.op("Identity", {r}, {}, out_of(n, 0));
  if (half) w.op("Cast", {r}, {{"to", int64_t{dtype_to_onnx(t)}}}, out_of(n, 0));
  w.replace(index);
  return true;
}

// Before expansion: output [B, S, Hq d]; present [B, Hkv, T, d] with T unknown until its value is.
void gqa_infer(InferContext& ctx) {
  const Shape& q = ctx.shape(0);
  const int64_t Hq = ctx.node().attr_i("num_heads", 0), Hkv = ctx.node().attr_i("kv_num_heads", 0);
  if (q.size() != 3 || Hq <= 0 || Hkv <= 0) ctx.fail("query must be [B, S, hidden] with positive num_heads and kv_num_heads");
  const bool packed = !ctx.has_input(1);
  const int64_t d = q[2] < 0 ? -1 : q[2] / (packed ? Hq + 2 * Hkv : Hq);
  ctx.set_output(0, ctx.dtype(0), {q[0], q[1], d < 0 ? -1 : Hq * d});
  for (int o = 1; o < 3 && o < ctx.num_outputs(); ++o)
    if (ctx.node().outputs[o] >= 0) ctx.set_output(o, ctx.dtype(0), {q[0], Hkv, -1, d});
}

}  // namespace

namespace contrib {

void register_contrib_gqa_ops() {
  // Optional: key, value, past_key, past_value, cos_cache, sin_cache, position_ids (and the refused
  // attention_bias, head_sink).
  register_expanded("com.microsoft.GroupQueryAttention", 7, 12, 4, gqa_infer, gqa_expand,
                    1u << 1 | 1u << 2 | 1u << 3 | 1u << 4 | 1u << 7 | 1u << 8 | 1u << 9 | 1u << 10 | 1u << 11);
}

}  // namespace contrib
}  // namespace fusor
