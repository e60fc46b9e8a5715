// FlexAttention (domain ai.onnx.preview, version 1; ONNX 1.20's preview operator set): attention
// whose scores and probabilities pass through user graphs.
//
//   Q [B, Hq, L, E], K [B, Hkv, S, E], V [B, Hkv, S, Ev] -> Y [B, Hq, L, Ev], one float dtype;
//   Hq a multiple of Hkv (query head h reads kv head h / (Hq / Hkv));
//   s = sqrt(float32(scale)) in Q's dtype (scale: the attribute, else 1 / sqrt(E) in float32);
//   scores = (Q * s) @ ((K * s)^T), cast to the softmax dtype (softmax_precision, else float32
//   for fp16 / bf16 and the input dtype otherwise); score_mod (a graph of one input, the scores,
//   returning one tensor of their shape and dtype) applied when present; Softmax over the keys;
//   prob_mod likewise; Y = probs @ V (V cast to the softmax dtype), cast back to V's dtype.
//
// The node is replaced by those primitives when its input shapes are known (OpDef::expand), the
// graphs inlined, exactly the ONNX function body (onnx/defs/preview/defs.cc, the node suite's
// "_expanded" cases), so every backend fuses and runs it like any attention block. Errors
// (Error "shape", one line naming the node): inputs not rank 4, dtypes that differ or are not
// float, mismatched batch / head size / key length, Hq not a multiple of Hkv, a graph that
// does not take one input or return one output, an unsupported softmax_precision.
#include <cmath>

#include "ir/ops/attention.h"
#include "ir/ops/op_helpers.h"

namespace fusor {
namespace {

using namespace op_helpers;

constexpr const char* kName = "ai.onnx.preview.FlexAttention";

bool float_dtype(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::f64; }

// The dtype scores are softmaxed in (softmax_precision: a TensorProto float type).
DType softmax_dtype(const Node& n, DType in) {
  if (!n.has_attr("softmax_precision")) return in == DType::f64 ? DType::f64 : DType::f32;
  switch (n.attr_i("softmax_precision", 1)) {
    case 1: return DType::f32;
    case 10: return DType::f16;
    case 16: return DType::bf16;
    case 11: return DType::f64;
    default:
      throw Error("shape", n.label() + ": softmax_precision " + std::to_string(n.attr_i("softmax_precision", 1)) +
                               " is not FLOAT, FLOAT16, BFLOAT16 or DOUBLE");
  }
}

struct FlexDims {
  int64_t B = 0, Hq = 0, Hkv = 0, L = 0, S = 0, E = 0, Ev = 0;
};

FlexDims flex_dims(const Node& n, const Shape& q, const Shape& k, const Shape& v) {
  auto bad = [&](const std::string& why) { return Error("shape", n.label() + ": " + why); };
  if (q.size() != 4 || k.size() != 4 || v.size() != 4)
    throw bad("Q, K and V must be rank 4, got " + shape_str(q) + ", " + shape_str(k) + ", " + shape_str(v));
  FlexDims d{q[0], q[1], k[1], q[2], k[2], q[3], v[3]};
  if (k[0] != d.B || v[0] != d.B) throw bad("Q, K and V batch sizes differ: " + shape_str(q) + ", " + shape_str(k) + ", " + shape_str(v));
  if (k[3] != d.E) throw bad("Q and K head sizes differ: " + shape_str(q) + " vs " + shape_str(k));
  if (v[1] != d.Hkv || v[2] != d.S) throw bad("K and V heads or key lengths differ: " + shape_str(k) + " vs " + shape_str(v));
  if (d.Hkv <= 0 ? d.Hq != 0 : d.Hq % d.Hkv != 0)
    throw bad("Q's " + std::to_string(d.Hq) + " heads are not a multiple of K's " + std::to_string(d.Hkv));
  return d;
}

// A modifier graph: one formal input, one output.
const Graph* modifier(const Node& n, const char* name) {
  const Graph* b = n.attr_g(name);
  if (!b) return nullptr;
  const int formal = b->formal_inputs < 0 ? static_cast<int>(b->inputs.size()) : b->formal_inputs;
  if (formal != 1 || b->outputs.size() != 1)
    throw Error("shape", n.label() + ": " + name + " must take 1 input and return 1 output, it takes " + std::to_string(formal) +
                             " and returns " + std::to_string(b->outputs.size()));
  return b;
}

void flex_check(const Node& n, DType q, DType k, DType v) {
  if (!float_dtype(q) || k != q || v != q)
    throw Error("shape", n.label() + ": Q, K and V must share one float dtype, got " + dtype_name(q) + ", " + dtype_name(k) + ", " +
                             dtype_name(v));
  softmax_dtype(n, q);
  modifier(n, "score_mod");
  modifier(n, "prob_mod");
}

void flex_infer(InferContext& ctx) {
  const Node& n = ctx.node();
  flex_check(n, ctx.dtype(0), ctx.dtype(1), ctx.dtype(2));
  const Shape& q = ctx.shape(0);
  if (q.size() != 4) ctx.fail("Q must be rank 4, got " + shape_str(q));
  // Reached only while a shape is unknown (expand replaces the node otherwise).
  ctx.set_output(0, ctx.dtype(0), {q[0], q[1], q[2], ctx.rank(2) == 4 ? ctx.shape(2)[3] : -1});
}

void flex_ref(const Node& n, const Ins&, Outs&) {
  ref_fail(n, "runs once its input shapes are known (it is expanded into primitives then)");
}

bool flex_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  for (int i = 0; i < 3; ++i) {
    const Value& v = g.values[n.inputs[i]];
    if (!v.shape_known) return false;
    for (int64_t d : v.shape)
      if (d < 0) return false;
  }
  const DType dt = g.values[n.inputs[0]].dtype;
  flex_check(n, dt, g.values[n.inputs[1]].dtype, g.values[n.inputs[2]].dtype);
  const FlexDims d = flex_dims(n, g.values[n.inputs[0]].shape, g.values[n.inputs[1]].shape, g.values[n.inputs[2]].shape);
  const DType sdt = softmax_dtype(n, dt);
  RewriteNodes w{g, n.name, {}};
  const int q = n.inputs[0];
  int k = n.inputs[1], v = n.inputs[2];
  // GQA: kv head j serves query heads j*r .. j*r + r-1 ([B, Hkv, 1, S, E] expanded, reshaped).
  if (d.Hq != d.Hkv) {
    const int64_t r = d.Hq / d.Hkv;
    const int axis2 = w.ints({2});
    k = w.op("Reshape", {w.op("Expand", {w.op("Unsqueeze", {k, axis2}), w.ints({d.B, d.Hkv, r, d.S, d.E})}), w.ints({d.B, d.Hq, d.S, d.E})});
    v = w.op("Reshape", {w.op("Expand", {w.op("Unsqueeze", {v, axis2}), w.ints({d.B, d.Hkv, r, d.S, d.Ev})}), w.ints({d.B, d.Hq, d.S, d.Ev})});
  }
  // sqrt(scale) as the function body computes it: float32 throughout, then cast to Q's dtype.
  const float scale = n.has_attr("scale") ? static_cast<float>(n.attr_f("scale", 1.0))
                                          : 1.0f / std::sqrt(static_cast<float>(d.E));
  Tensor st(dt, {});
  st.set(0, static_cast<double>(std::sqrt(scale)));
  const int s = g.add_constant(g.unique_name(n.name + "/sqrt_scale"), std::move(st));
  const int kt = w.op("Transpose", {w.op("Mul", {k, s})}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}});
  const int cast_to = dtype_to_onnx(sdt);
  int x = w.op("Cast", {w.op("MatMul", {w.op("Mul", {q, s}), kt})}, {{"to", int64_t{cast_to}}});
  if (const Graph* b = modifier(n, "score_mod")) {
    std::vector<int> bound{x};
    for (int i : captured_inputs(n, "score_mod", 3)) bound.push_back(n.inputs[i]);
    x = w.op("Cast", {w.inline_graph(*b, bound)[0]}, {{"to", int64_t{cast_to}}});  // the spec reads it as the softmax dtype
  }
  x = w.op("Softmax", {x}, {{"axis", int64_t{3}}});
  if (const Graph* b = modifier(n, "prob_mod")) {
    std::vector<int> bound{x};
    for (int i : captured_inputs(n, "prob_mod", 3)) bound.push_back(n.inputs[i]);
    x = w.op("Cast", {w.inline_graph(*b, bound)[0]}, {{"to", int64_t{cast_to}}});
  }
  if (sdt != dt) v = w.op("Cast", {v}, {{"to", int64_t{cast_to}}});
  const int y = n.outputs.empty() ? -1 : n.outputs[0];
  if (sdt != dt) w.op("Cast", {w.op("MatMul", {x, v})}, {{"to", int64_t{dtype_to_onnx(dt)}}}, y);
  else w.op("MatMul", {x, v}, {}, y);
  w.replace(index);
  return true;
}

}  // namespace

void register_flex_attention_ops() {
  OpDef d = table_entry(kName, 3, 1 << 20, flex_infer, flex_ref);
  d.expand = flex_expand;
  register_op(std::move(d));
}

}  // namespace fusor
