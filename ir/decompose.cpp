// Decomposition of composite ops into the primitives the fuser understands (element-wise ops
// with a ScalarRule, ReduceSum/Mean/Max, MatMul, Conv without bias, Reshape/Transpose/Slice).
// Formulas follow the ONNX operator spec of each op. Element-wise composites (Gelu, HardSwish,
// HardSigmoid, Clip, ...) need nothing here: their ScalarRule already is one fusible expression.
#include <algorithm>
#include <cmath>

#include "ir/kernel_spec.h"
#include "ir/passes.h"

namespace fusor {
namespace {

class Rewriter {
 public:
  explicit Rewriter(Graph& g) : g_(g) {}

  int constant(const std::string& base, Tensor t) { return g_.add_constant(g_.unique_name(base), std::move(t)); }
  int scalar(double v) {
    Tensor t(DType::f32, {});
    t.set(0, v);
    return constant("c", std::move(t));
  }
  int ints(const std::vector<int64_t>& v) {
    Tensor t(DType::i64, {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) t.set_int(i, v[i]);
    return constant("shape", std::move(t));
  }
  // Emits op(inputs) and returns its output value (or writes into `out` when given).
  int op(const std::string& type, std::vector<int> inputs, std::map<std::string, AttrValue> attrs = {}, int out = -1,
         int opset = 13) {
    Node n;
    n.name = g_.unique_name(origin_ + "/" + type);
    n.op_type = type;
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    n.opset = opset;
    if (out < 0) out = g_.add_value(n.name + ":0");
    n.outputs = {out};
    nodes_.push_back(std::move(n));
    return out;
  }
  // Reduce* in its opset-11 form (axes as an attribute), keepdims=1.
  int reduce(const std::string& type, int x, std::vector<int64_t> axes, int out = -1, bool keep = true) {
    return op(type, {x}, {{"axes", axes}, {"keepdims", int64_t{keep ? 1 : 0}}}, out, 11);
  }
  void keep(Node n) { nodes_.push_back(std::move(n)); }
  void set_origin(const std::string& s) { origin_ = s; }
  std::vector<Node> take() { return std::move(nodes_); }
  const Value& value(int v) const { return g_.values[v]; }

 private:
  Graph& g_;
  std::vector<Node> nodes_;
  std::string origin_;
};

std::vector<int64_t> axes_from(int64_t axis, int64_t rank) {
  std::vector<int64_t> a;
  for (int64_t i = axis; i < rank; ++i) a.push_back(i);
  return a;
}

bool all_f32(const Graph& g, const Node& n) {
  for (int v : n.inputs)
    if (v >= 0 && g.values[v].dtype != DType::f32 && g.values[v].dtype != DType::i64) return false;
  for (int v : n.outputs)
    if (v >= 0 && g.values[v].dtype != DType::f32) return false;
  return true;
}

// Returns true when n was rewritten (its replacement nodes are in rw).
bool rewrite(Graph& g, const Node& n, Rewriter& rw) {
  if (!all_f32(g, n)) return false;
  const std::string& t = n.op_type;
  auto in = [&](int i) { return n.has_input(i) ? n.inputs[i] : -1; };
  int out = n.outputs.empty() ? -1 : n.outputs[0];
  auto rank = [&](int v) { return static_cast<int64_t>(g.values[v].shape.size()); };
  rw.set_origin(n.name);

  if (t == "LayerNormalization") {
    int x = in(0);
    auto axes = axes_from(normalize_axis(n.attr_i("axis", -1), rank(x), n.label()), rank(x));
    int mean = rw.reduce("ReduceMean", x, axes, n.outputs.size() > 1 ? n.outputs[1] : -1);
    int d = rw.op("Sub", {x, mean});
    int var = rw.reduce("ReduceMean", rw.op("Mul", {d, d}), axes);
    int inv = rw.op("Reciprocal", {rw.op("Sqrt", {rw.op("Add", {var, rw.scalar(n.attr_f("epsilon", 1e-5))})})},
                    {}, n.outputs.size() > 2 ? n.outputs[2] : -1);
    int y = rw.op("Mul", {d, inv});
    if (in(2) >= 0) {
      y = rw.op("Mul", {y, in(1)});
      rw.op("Add", {y, in(2)}, {}, out);
    } else {
      rw.op("Mul", {y, in(1)}, {}, out);
    }
    return true;
  }
  if (t == "RMSNormalization" && n.outputs.size() == 1) {
    // RMSNormalization-23: Y = X / sqrt(mean(X^2 over dims >= axis) + epsilon) * scale.
    int x = in(0);
    auto axes = axes_from(normalize_axis(n.attr_i("axis", -1), rank(x), n.label()), rank(x));
    int ms = rw.reduce("ReduceMean", rw.op("Mul", {x, x}), axes);
    int inv = rw.op("Reciprocal", {rw.op("Sqrt", {rw.op("Add", {ms, rw.scalar(n.attr_f("epsilon", 1e-5))})})});
    rw.op("Mul", {rw.op("Mul", {x, inv}), in(1)}, {}, out);
    return true;
  }
  if (t == "Softmax" || t == "LogSoftmax") {
    int x = in(0);
    int64_t r = rank(x);
    int64_t axis = normalize_axis(n.attr_i("axis", n.opset >= 13 ? -1 : 1), r, n.label());
    // opset < 13 coerces to 2-D at `axis`: the same as reducing over all dims from axis on.
    std::vector<int64_t> axes = n.opset >= 13 ? std::vector<int64_t>{axis} : axes_from(axis, r);
    int m = rw.reduce("ReduceMax", x, axes);
    int d = rw.op("Sub", {x, m});
    int e = rw.op("Exp", {d});
    int s = rw.reduce("ReduceSum", e, axes);
    if (t == "Softmax") rw.op("Div", {e, s}, {}, out);
    else rw.op("Sub", {d, rw.op("Log", {s})}, {}, out);
    return true;
  }
  if (t == "Gemm") {
    int a = in(0), b = in(1);
    if (n.attr_i("transA", 0)) a = rw.op("Transpose", {a}, {{"perm", std::vector<int64_t>{1, 0}}});
    if (n.attr_i("transB", 0)) b = rw.op("Transpose", {b}, {{"perm", std::vector<int64_t>{1, 0}}});
    double alpha = n.attr_f("alpha", 1.0), beta = n.attr_f("beta", 1.0);
    bool has_c = in(2) >= 0 && beta != 0.0;
    int y = rw.op("MatMul", {a, b}, {}, (alpha == 1.0 && !has_c) ? out : -1);
    if (alpha != 1.0) y = rw.op("Mul", {y, rw.scalar(alpha)}, {}, has_c ? -1 : out);
    if (has_c) {
      int c = in(2);
      if (beta != 1.0) c = rw.op("Mul", {c, rw.scalar(beta)});
      rw.op("Add", {y, c}, {}, out);
    }
    return true;
  }
  if (t == "BatchNormalization" && n.outputs.size() == 1 && n.attr_i("training_mode", 0) == 0) {
    const Value &sc = rw.value(in(1)), &b = rw.value(in(2)), &mu = rw.value(in(3)), &var = rw.value(in(4));
    if (!sc.constant || !b.constant || !mu.constant || !var.constant) return false;
    // Inference form: y = x * (scale / sqrt(var + eps)) + (B - mean * scale / sqrt(var + eps)).
    int64_t c = sc.constant->numel();
    Shape s{c};
    for (int64_t i = 2; i < rank(in(0)); ++i) s.push_back(1);
    Tensor mul(DType::f32, s), add(DType::f32, s);
    double eps = n.attr_f("epsilon", 1e-5);
    for (int64_t i = 0; i < c; ++i) {
      double k = sc.constant->get(i) / std::sqrt(var.constant->get(i) + eps);
      mul.set(i, k);
      add.set(i, b.constant->get(i) - mu.constant->get(i) * k);
    }
    int y = rw.op("Mul", {in(0), rw.constant("bn_scale", std::move(mul))});
    rw.op("Add", {y, rw.constant("bn_shift", std::move(add))}, {}, out);
    return true;
  }
  if (t == "InstanceNormalization") {
    // ONNX InstanceNormalization: per (n, c), normalize over the spatial axes, then scale and
    // bias per channel (reshaped to [C, 1, ..., 1]).
    int x = in(0);
    auto axes = axes_from(2, rank(x));
    int mean = rw.reduce("ReduceMean", x, axes);
    int d = rw.op("Sub", {x, mean});
    int var = rw.reduce("ReduceMean", rw.op("Mul", {d, d}), axes);
    int inv = rw.op("Reciprocal", {rw.op("Sqrt", {rw.op("Add", {var, rw.scalar(n.attr_f("epsilon", 1e-5))})})});
    std::vector<int64_t> cs{g.values[x].shape[1]};
    for (int64_t i = 2; i < rank(x); ++i) cs.push_back(1);
    int sc = rw.op("Reshape", {in(1), rw.ints(cs)}, {}, -1, 14), bi = rw.op("Reshape", {in(2), rw.ints(cs)}, {}, -1, 14);
    rw.op("Add", {rw.op("Mul", {rw.op("Mul", {d, inv}), sc}), bi}, {}, out);
    return true;
  }
  if (t == "GlobalAveragePool" || t == "GlobalMaxPool") {
    rw.reduce(t == "GlobalAveragePool" ? "ReduceMean" : "ReduceMax", in(0), axes_from(2, rank(in(0))), out);
    return true;
  }
  // Dropout is the identity only in inference mode (training_mode absent or a false constant).
  bool inference_dropout = t == "Dropout" && (in(2) < 0 || (rw.value(in(2)).constant && rw.value(in(2)).constant->get(0) == 0));
  if ((t == "Flatten" || t == "Squeeze" || t == "Unsqueeze" || t == "Identity" || inference_dropout) &&
      n.outputs.size() == 1) {
    // allowzero: a 0 in the target shape is a real empty dim, not "copy the input dim".
    rw.op("Reshape", {in(0), rw.ints(g.values[out].shape)}, {{"allowzero", int64_t{1}}}, out, 14);
    return true;
  }
  if (t == "Split" && std::find(n.outputs.begin(), n.outputs.end(), -1) == n.outputs.end()) {
    int64_t axis = normalize_axis(n.attr_i("axis", 0), rank(in(0)), n.label());
    int64_t start = 0;
    for (int o : n.outputs) {
      int64_t len = g.values[o].shape[axis];
      rw.op("Slice", {in(0), rw.ints({start}), rw.ints({start + len}), rw.ints({axis})}, {}, o);
      start += len;
    }
    return true;
  }
  if ((t == "Sum" || t == "Max" || t == "Min") && n.num_inputs() > 2) {
    std::string bin = t == "Sum" ? "Add" : t;
    int acc = in(0);
    for (int i = 1; i < n.num_inputs(); ++i) acc = rw.op(bin, {acc, in(i)}, {}, i + 1 == n.num_inputs() ? out : -1);
    return true;
  }
  if (t == "ReduceL2" || t == "ReduceSumSquare" || t == "ReduceL1" || t == "ReduceLogSum") {
    if (n.opset >= 18 && n.num_inputs() > 1) return false;  // axes as an input: keep the op
    auto axes = n.attr_ints("axes");
    if (axes.empty()) axes = axes_from(0, rank(in(0)));
    bool keep = n.attr_i("keepdims", 1) != 0;
    int x = in(0);
    int body = t == "ReduceL1" ? rw.op("Abs", {x}) : t == "ReduceLogSum" ? x : rw.op("Mul", {x, x});
    bool post = t == "ReduceL2" || t == "ReduceLogSum";
    int s = rw.reduce("ReduceSum", body, axes, post ? -1 : out, keep);
    if (post) rw.op(t == "ReduceL2" ? "Sqrt" : "Log", {s}, {}, out);
    return true;
  }
  if (t == "Conv" && in(2) >= 0 && rank(in(0)) == 4 && rw.value(in(2)).constant) {
    // Bias becomes an element-wise Add that output fusion puts back into the epilogue.
    Node c = n;
    c.inputs.resize(2);
    c.name = n.name;
    int y = g.add_value(n.name + ":nobias");
    c.outputs = {y};
    rw.keep(c);
    Tensor b = *rw.value(in(2)).constant;
    b.reshape({b.numel(), 1, 1});
    rw.op("Add", {y, rw.constant("conv_bias", std::move(b))}, {}, out);
    return true;
  }
  return false;
}

}  // namespace

void decompose(Graph& g) {
  Rewriter rw(g);
  std::vector<Node> old = std::move(g.nodes);
  g.nodes.clear();
  for (auto& n : old) {
    // Value ids stay valid while rewriting: the rewriter appends values, never removes them.
    if (!rewrite(g, n, rw)) rw.keep(n);
  }
  g.nodes = rw.take();
  g.reindex_producers();
  infer_shapes(g, true);
  eliminate_dead_code(g);
}

}  // namespace fusor
