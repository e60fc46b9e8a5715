// Ops of state-space and hybrid sequence models (opset 27), rewritten before inference into ops
// of the table (as their ONNX function bodies are), so they fold, fuse and run on every backend:
//
//  * CausalConvWithState-27 (Mamba-style short convolution): input [B, C, L], a depthwise
//    weight [C, 1, K], optional bias [C] and past_state [B, C, K - 1] (absent: zeros).
//    padded = Concat(past_state, input) along L; output = Conv(padded, weight, bias, group = C),
//    then x * sigmoid(x) when activation is "silu" (alias "swish"; computed in float32 for 16-bit
//    types), none otherwise ("none" or absent); present_state = the last K - 1 steps of padded.
// Errors: Error("shape") naming the node for bad ranks, shapes or an unknown activation.
#include "ir/ops/op_helpers.h"

namespace fusor {
namespace {

using namespace op_helpers;

// Appends nodes computing into values of g; each returns its output value.
struct Emit {
  Graph& g;
  const std::string& base;
  std::vector<Node> nodes;
  int op(const std::string& type, std::vector<int> ins, std::map<std::string, AttrValue> attrs = {}, int out = -1) {
    Node m;
    m.name = g.unique_name(base + "/" + type);
    m.op_type = type;
    m.opset = 21;
    m.inputs = std::move(ins);
    m.attrs = std::move(attrs);
    m.outputs = {out >= 0 ? out : g.add_value(m.name + ":0")};
    nodes.push_back(m);
    return m.outputs[0];
  }
  int ints(const std::vector<int64_t>& v) {
    Tensor t(DType::i64, {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) t.set_int(static_cast<int64_t>(i), v[i]);
    return g.add_constant(g.unique_name(base + "/ints"), std::move(t));
  }
  // Replaces node `index` by the emitted nodes.
  void replace(size_t index) {
    g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(index));
    g.nodes.insert(g.nodes.begin() + static_cast<std::ptrdiff_t>(index), nodes.begin(), nodes.end());
    g.reindex_producers();
  }
};

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
  Emit e{g, n.name, {}};
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

}  // namespace

void register_ssm_ops() {
  OpDef d = table_entry("CausalConvWithState", 2, 4, [](InferContext& ctx) { ctx.fail("rewritten before inference"); },
                        [](const Node& n, const Ins&, Outs&) { ref_fail(n, "rewritten before it runs"); }, 2);
  d.expand = causal_conv_expand;
  register_op(std::move(d));
}

}  // namespace fusor
