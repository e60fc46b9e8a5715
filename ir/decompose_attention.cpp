// Attention as primitives the fuser already has (called from ir/decompose.cpp), so the GPUs run
// it as fused kernels: two batched MatMuls around a softmax, with the head split/merge as free
// views and the scaling, softcap, bias and fully-masked-row guard as element-wise epilogues.
// The formula is the one ir/ops/attention.cpp documents (ONNX Attention-23..25). The causal and
// window masks depend on shapes only and become one constant [Sq, T] bias; nonpad_kv_seqlen
// (a per-batch run-time offset) keeps the node whole (ref kernel, host fallback on the GPUs).
// RotaryEmbedding becomes Slices, a Gather of the cache rows and the rotation as element-wise
// Mul/Sub/Add feeding one Concat.
#include <cmath>
#include <limits>

#include "ir/decompose_rewriter.h"
#include "ir/ops/attention.h"
#include "ir/op_table.h"

namespace fusor {
namespace {

class Emit {
 public:
  Emit(Graph& g, const Node& n, std::vector<Node>& out) : g_(g), n_(n), out_(out) {}
  // The node as ir/decompose_rewriter.h's Rewriter makes it (named after n), kept in out.
  int op(const std::string& type, std::vector<int> inputs, std::map<std::string, AttrValue> attrs = {}, int dst = -1,
         int opset = 13) {
    decomp::Rewriter rw(g_);
    rw.set_origin(n_.name);
    out_.push_back(rw.make(type, std::move(inputs), std::move(attrs), dst, opset));
    return out_.back().outputs[0];
  }
  int constant(Tensor t) { return g_.add_constant(g_.unique_name(n_.name + "/c"), std::move(t)); }
  int ints(const Shape& v) {
    Tensor t(DType::i64, {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) t.set_int(static_cast<int64_t>(i), v[i]);
    return constant(std::move(t));
  }
  int reshape(int x, const Shape& s, int dst = -1) { return op("Reshape", {x, ints(s)}, {{"allowzero", int64_t{1}}}, dst, 14); }
  int transpose(int x, std::vector<int64_t> perm, int dst = -1) { return op("Transpose", {x}, {{"perm", std::move(perm)}}, dst); }
  int reduce(const std::string& type, int x, int dst = -1) {
    return op(type, {x}, {{"axes", std::vector<int64_t>{-1}}, {"keepdims", int64_t{1}}}, dst, 11);
  }
  int cast(int x, DType to, int dst = -1) { return op("Cast", {x}, {{"to", int64_t{dtype_to_onnx(to)}}}, dst); }

 private:
  Graph& g_;
  const Node& n_;
  std::vector<Node>& out_;
};

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

}  // namespace

bool decompose_attention(Graph& g, const Node& n, std::vector<Node>& nodes) {
  if (n.op_type != "Attention" || !(n.domain.empty() || n.domain == "ai.onnx")) return false;
  auto in = [&](size_t i) { return n.has_input(i) ? n.inputs[i] : -1; };
  auto outv = [&](size_t i) { return i < n.outputs.size() ? n.outputs[i] : -1; };
  if (in(6) >= 0) return false;  // nonpad_kv_seqlen: the offsets are run-time values
  std::vector<const Shape*> s;
  for (size_t i = 0; i < 7; ++i) {
    if (in(i) >= 0 && !g.values[in(i)].shape_known) return false;
    s.push_back(in(i) >= 0 ? &g.values[in(i)].shape : nullptr);
  }
  const DType t = g.values[in(0)].dtype;
  if (t != DType::f32 && t != DType::f64 && t != DType::f16 && t != DType::bf16) return false;
  const AttentionDims d = attention_dims(n, s);
  if (d.T == 0 || d.Sq == 0 || d.B == 0) return false;
  std::vector<Node> emitted;
  Emit e(g, n, emitted);
  // fp16/bf16 are storage types (README numerics): the decomposition computes in fp32.
  const DType ct = t == DType::f64 ? DType::f64 : DType::f32;
  // v holds dtype `from` (values emitted here have no dtype until shape inference reruns).
  auto wide = [&](int v, DType from) { return from == ct ? v : e.cast(v, ct); };
  auto narrow = [&](int v, int dst) { return ct == t ? e.op("Identity", {v}, {}, dst) : e.cast(v, t, dst); };
  auto cscalar = [&](double v) {
    Tensor c(ct, {});
    c.set(0, v);
    return e.constant(std::move(c));
  };

  // To [B, H, S, E].
  auto heads = [&](int v, int64_t H, int64_t S, int64_t E) {
    return d.rank3 ? e.transpose(e.reshape(v, {d.B, S, H, E}), {0, 2, 1, 3}) : v;
  };
  int q = wide(heads(in(0), d.Hq, d.Sq, d.D), t);
  int k = heads(in(1), d.Hkv, d.Skv, d.D), v = heads(in(2), d.Hkv, d.Skv, d.Dv);
  // present_key/value: past ++ new along the sequence, in the input dtype.
  if (in(4) >= 0) {
    k = e.op("Concat", {in(4), k}, {{"axis", int64_t{2}}}, outv(1));
    v = e.op("Concat", {in(5), v}, {{"axis", int64_t{2}}}, outv(2));
  } else {
    if (outv(1) >= 0) e.op("Identity", {k}, {}, outv(1));
    if (outv(2) >= 0) e.op("Identity", {v}, {}, outv(2));
  }
  k = wide(k, t), v = wide(v, t);
  const int64_t group = d.Hq / d.Hkv;
  if (group > 1) {  // query head h reads kv head h / group: broadcast a unit axis, then merge it
    auto repeat = [&](int x, int64_t E) {
      int y = e.op("Expand", {e.reshape(x, {d.B, d.Hkv, 1, d.T, E}), e.ints({d.B, d.Hkv, group, d.T, E})});
      return e.reshape(y, {d.B, d.Hq, d.T, E});
    };
    k = repeat(k, d.D), v = repeat(v, d.Dv);
  }
  const double scale = n.has_attr("scale") ? n.attr_f("scale", 1.0) : 1.0 / std::sqrt(static_cast<double>(d.D));
  const int rs = cscalar(std::sqrt(scale));
  int logits = e.op("MatMul", {e.op("Mul", {q, rs}), e.transpose(e.op("Mul", {k, rs}), {0, 1, 3, 2})});
  const double softcap = n.attr_f("softcap", 0.0);
  const int raw = logits;  // qk_matmul_output mode 0: the product before the softcap
  if (softcap > 0) {
    const int c = cscalar(softcap);
    logits = e.op("Mul", {e.op("Tanh", {e.op("Div", {logits, c})}), c});
  }

  // The structural bias: causal and window masks, known from the shapes (offset = P).
  const bool causal = n.attr_i("is_causal", 0) != 0;
  const int64_t left = n.attr_i("left_window_size", -1), right = n.attr_i("right_window_size", -1);
  int bias = -1;
  bool structural_row_masked = false;
  if (causal || left >= 0 || right >= 0) {
    Tensor sb(ct, {d.Sq, d.T});
    for (int64_t i = 0; i < d.Sq; ++i) {
      bool any = false;
      for (int64_t j = 0; j < d.T; ++j) {
        const int64_t diff = i + d.P - j;
        const bool masked = (causal && diff < 0) || (left >= 0 && diff > left) || (right >= 0 && -diff > right);
        sb.set(i * d.T + j, masked ? kNegInf : 0.0);
        any = any || !masked;
      }
      structural_row_masked = structural_row_masked || !any;
    }
    bias = e.constant(std::move(sb));
  }
  if (in(3) >= 0) {
    const Shape mshape = g.values[in(3)].shape;  // a copy: emitting values grows g.values
    const DType mt = g.values[in(3)].dtype;
    int m = mt == DType::boolean ? e.op("Where", {in(3), cscalar(0.0), cscalar(kNegInf)}) : wide(in(3), mt);
    const int64_t ml = mshape.back();
    if (ml < d.T) {  // a short mask is padded with -inf (False)
      Shape ps = mshape;
      ps.back() = d.T - ml;
      Tensor pad(ct, ps);
      pad.fill(kNegInf);
      m = e.op("Concat", {m, e.constant(std::move(pad))}, {{"axis", int64_t{-1}}});
    }
    bias = bias < 0 ? m : e.op("Add", {m, bias});
  }
  int x = bias < 0 ? logits : e.op("Add", {logits, bias});
  // Softmax over the keys (as Softmax-13 decomposes), then zero the rows whose bias is all -inf.
  int ex = e.op("Exp", {e.op("Sub", {x, e.reduce("ReduceMax", x)})});
  int p = e.op("Div", {ex, e.reduce("ReduceSum", ex)});
  if (in(3) >= 0 || structural_row_masked) {
    int dead = e.op("Equal", {e.reduce("ReduceMax", bias), cscalar(kNegInf)});
    p = e.op("Where", {dead, cscalar(0.0), p});
  }
  int y = e.op("MatMul", {p, v});
  if (d.rank3) y = e.reshape(e.transpose(y, {0, 2, 1, 3}), {d.B, d.Sq, d.Hq * d.Dv});
  narrow(y, outv(0));
  if (outv(3) >= 0) {
    const int64_t mode = n.attr_i("qk_matmul_output_mode", 0);
    narrow(mode == 3 ? p : mode == 2 ? x : mode == 1 ? logits : raw, outv(3));
  }
  for (auto& m : emitted) nodes.push_back(std::move(m));
  return true;
}

bool decompose_rotary(Graph& g, const Node& n, std::vector<Node>& nodes) {
  if (n.op_type != "RotaryEmbedding" || !(n.domain.empty() || n.domain == "ai.onnx") || n.outputs.empty() || n.outputs[0] < 0)
    return false;
  for (size_t i = 0; i < 4; ++i)
    if (n.has_input(i) && !g.values[n.inputs[i]].shape_known) return false;
  if (!n.has_input(0) || !n.has_input(1) || !n.has_input(2)) return false;
  // float16 / bfloat16 rotate in float32 and round once (the products of two half values are
  // exact there), not as a chain of rounded half ops that would drift from the reference.
  const DType t = g.values[n.inputs[0]].dtype;
  if (t != DType::f32 && t != DType::f64 && t != DType::f16 && t != DType::bf16) return false;
  const bool half = t == DType::f16 || t == DType::bf16;
  const bool pos = n.has_input(3);
  const Shape xs = g.values[n.inputs[0]].shape;
  const RotaryDims r = rotary_dims(n, xs, g.values[n.inputs[1]].shape, g.values[n.inputs[2]].shape,
                                   pos ? &g.values[n.inputs[3]].shape : nullptr);
  std::vector<Node> emitted;
  Emit e(g, n, emitted);
  const int64_t hr = r.rd / 2;
  // Work on [B, H, S, hd] (4-D input) or [B, S, H, hd] (3-D); the caches broadcast over heads.
  const Shape lay = r.rank3 ? Shape{r.B, r.S, r.H, r.hd} : Shape{r.B, r.H, r.S, r.hd};
  const Shape cb = r.rank3 ? Shape{r.B, r.S, 1, hr} : Shape{r.B, 1, r.S, hr};
  const int x0 = half ? e.cast(n.inputs[0], DType::f32) : n.inputs[0];
  const int x = r.rank3 ? e.reshape(x0, lay) : x0;
  const int cos_c = half ? e.cast(n.inputs[1], DType::f32) : n.inputs[1], sin_c = half ? e.cast(n.inputs[2], DType::f32) : n.inputs[2];
  // Position ids index the caches' rows from 0: a negative id is refused as ref refuses it
  // (Gather alone would wrap it to a row from the end), by moving it below Gather's range.
  // Ids of any integer dtype (RotaryEmbedding allows them; Gather takes int32 / int64): other
  // dtypes are widened to int64 first. The constants have the ids' dtype.
  int ids = pos ? n.inputs[3] : -1;
  DType pt = pos ? g.values[n.inputs[3]].dtype : DType::i64;
  if (pos && pt != DType::i64 && pt != DType::i32) {
    ids = e.cast(ids, DType::i64);
    pt = DType::i64;
  }
  if (pos) {
    const int64_t rows = g.values[n.inputs[1]].shape.at(0);
    auto scalar = [&](int64_t v) {
      Tensor c(pt, {});
      c.set_int(0, v);
      return e.constant(std::move(c));
    };
    // ids - rows stays below -rows (out of Gather's range) without wrapping where rows fits the
    // dtype; a cache taller than the dtype's range is indexed by non-negative ids only anyway.
    const int64_t lim = pt == DType::i32 ? INT32_MAX : INT64_MAX;
    if (rows <= lim / 2) ids = e.op("Where", {e.op("Less", {ids, scalar(0)}), e.op("Sub", {ids, scalar(rows)}), ids});
  }
  auto cache = [&](int v, const Shape& to) {
    if (pos) {
      v = e.op("Gather", {v, ids}, {{"axis", int64_t{0}}});
      // Its out-of-range error is the user's: named after the ids (a negative id shows as id - rows).
      const int64_t rows = g.values[n.inputs[1]].shape.at(0);
      emitted.back().name = g.unique_name(n.name + "/position_ids must be in [0, " + std::to_string(rows) + ") (a negative id shows as id - " +
                                          std::to_string(rows) + ")");
    }
    return e.reshape(v, to);
  };
  auto slice = [&](int v, int64_t a, int64_t b, int64_t axis) { return e.op("Slice", {v, e.ints({a}), e.ints({b}), e.ints({axis})}); };
  auto rotate = [&](int c, int s, int x1, int x2, std::vector<int>& parts) {
    parts.push_back(e.op("Sub", {e.op("Mul", {c, x1}), e.op("Mul", {s, x2})}));
    parts.push_back(e.op("Add", {e.op("Mul", {s, x1}), e.op("Mul", {c, x2})}));
  };
  std::vector<int> parts;
  if (n.attr_i("interleaved", 0) == 0) {
    rotate(cache(cos_c, cb), cache(sin_c, cb), slice(x, 0, hr, 3), slice(x, hr, r.rd, 3), parts);
  } else {  // pairs (x[2k], x[2k+1]): view the rotated dims as [half, 2]
    Shape pair = lay, cp = cb;
    pair.back() = hr, cp.push_back(1);
    pair.push_back(2);
    const int xp = e.reshape(r.rd == r.hd ? x : slice(x, 0, r.rd, 3), pair);
    std::vector<int> ri;
    rotate(cache(cos_c, cp), cache(sin_c, cp), slice(xp, 0, 1, 4), slice(xp, 1, 2, 4), ri);
    Shape flat = lay;
    flat.back() = r.rd;
    parts.push_back(e.reshape(e.op("Concat", ri, {{"axis", int64_t{4}}}), flat));
  }
  if (r.rd < r.hd) parts.push_back(slice(x, r.rd, r.hd, 3));
  const int out = half ? g.add_value(n.name + "/rotated") : n.outputs[0];
  if (r.rank3) {
    e.reshape(parts.size() == 1 ? parts[0] : e.op("Concat", parts, {{"axis", int64_t{3}}}), xs, out);
  } else if (parts.size() == 1) {
    e.op("Identity", {parts[0]}, {}, out);
  } else {
    e.op("Concat", parts, {{"axis", int64_t{3}}}, out);
  }
  if (half) e.cast(out, t, n.outputs[0]);
  for (auto& m : emitted) nodes.push_back(std::move(m));
  return true;
}

}  // namespace fusor
