// The optimizer update ops of ONNX's preview training domain (ai.onnx.preview.training, version
// 1): one step of Adagrad, Adam or Momentum for n tensors at once. Inputs R (learning rate,
// float scalar), T (step count, int64 scalar), then n X's, n G's and the optimizer's state
// tensors (n each); outputs the n new X's, then the new states. Each is replaced at shape
// inference by element-wise standard ops (OpDef::expand), so it fuses and runs on every
// backend. Formulas (ONNX operator spec, onnx/reference/ops/aionnx_preview_training):
//   g = norm_coefficient * X + G
//   Adagrad (state H): H' = H + g^2; X' = X - R / (1 + T decay_factor) * g / (sqrt(H') + epsilon)
//   Adam (states V, H): V' = alpha V + (1 - alpha) g; H' = beta H + (1 - beta) g^2;
//     R' = R sqrt(1 - beta^T) / (1 - alpha^T) when T > 0, else R;
//     X' = (1 - norm_coefficient_post) (X - R' V' / (sqrt(H') + epsilon))
//   Momentum (state V): V' = alpha V + (T > 0 ? beta : 1) g; X' = X - R V' ("standard") or
//     X - R (g + alpha V') ("nesterov")
// Attribute defaults are the schema's (epsilon 1e-6; Adam alpha 0.9, beta 0.999; the rest 0;
// Momentum's are required). Computed in X's float dtype (the reference mixes float32 and float64). Errors (one line, the
// node named): input counts that do not split into the groups, a mode other than the two, R / T
// not float / int64 scalars, X not float or double, a G or state of another dtype or shape.
#include "ir/ops/attention.h"
#include "ir/ops/op_helpers.h"

namespace fusor {
namespace {

using namespace op_helpers;

enum class Optimizer { adagrad, adam, momentum };

int groups_of(const Node& n, int per) {
  const int rest = static_cast<int>(n.inputs.size()) - 2;
  if (rest <= 0 || rest % per != 0 || n.outputs.size() > static_cast<size_t>(rest / per * (per - 1)))
    throw Error("shape", n.label() + ": expects R, T and " + std::to_string(per) + " inputs per tensor, got " + std::to_string(n.inputs.size()) +
                             " inputs and " + std::to_string(n.outputs.size()) + " outputs");
  return rest / per;
}

// The schema's typing, one line each: R a float or double scalar, T an int64 scalar, each X
// float or double with its G and states of X's dtype and (where known) shape.
void train_check(const Graph& g, const Node& n, int groups, const std::vector<std::string>& names) {
  const int per = static_cast<int>(names.size()) + 1;
  const auto bad = [&](const std::string& why) { return Error("shape", n.label() + ": " + why); };
  const auto known = [](const Value& v) {
    if (!v.shape_known) return false;
    for (int64_t d : v.shape)
      if (d < 0) return false;
    return true;
  };
  const auto scalar = [&](int i, const char* what) {
    const Value& v = g.values[n.inputs[i]];
    if (known(v) && shape_numel(v.shape) != 1) throw bad(std::string(what) + " must be a scalar, got " + shape_str(v.shape));
  };
  const DType r = g.values[n.inputs[0]].dtype, t = g.values[n.inputs[1]].dtype;
  if (r != DType::f32 && r != DType::f64) throw bad(std::string("R (the learning rate) must be float or double, got ") + dtype_name(r));
  if (t != DType::i64) throw bad(std::string("T (the update count) must be int64, got ") + dtype_name(t));
  scalar(0, "R (the learning rate)");
  scalar(1, "T (the update count)");
  for (int i = 0; i < groups; ++i) {
    const Value& x = g.values[n.inputs[2 + i]];
    if (x.dtype != DType::f32 && x.dtype != DType::f64) throw bad("X" + std::to_string(i) + " must be float or double, got " + dtype_name(x.dtype));
    for (int j = 1; j < per; ++j) {
      const Value& o = g.values[n.inputs[2 + j * groups + i]];
      const std::string what = names[j - 1] + std::to_string(i);
      if (o.dtype != x.dtype) throw bad(what + " must be X" + std::to_string(i) + "'s dtype " + dtype_name(x.dtype) + ", got " + dtype_name(o.dtype));
      if (known(x) && known(o) && o.shape != x.shape)
        throw bad(what + " must be X" + std::to_string(i) + "'s shape " + shape_str(x.shape) + ", got " + shape_str(o.shape));
    }
  }
}

void train_infer(InferContext& ctx, int per) {
  const int groups = groups_of(ctx.node(), per);
  for (int k = 0; k < ctx.num_outputs(); ++k) {
    if (ctx.node().outputs[k] < 0) continue;
    const int i = 2 + k % groups;  // X_i's shape and dtype (states share them)
    ctx.set_output(k, ctx.dtype(i), ctx.shape(i));
  }
}

void train_ref(const Node& n, const Ins&, Outs&) { ref_fail(n, "runs once its inputs are typed (it is expanded into element-wise ops then)"); }

bool train_expand(Graph& g, size_t index, Optimizer opt) {
  const Node n = g.nodes[index];
  const int per = opt == Optimizer::adam ? 4 : 3;
  const int groups = groups_of(n, per);
  for (int v : n.inputs)
    if (v < 0 || g.values[v].dtype == DType::undefined) return false;
  train_check(g, n, groups, opt == Optimizer::adam ? std::vector<std::string>{"G", "V", "H"}
                                                   : std::vector<std::string>{"G", opt == Optimizer::adagrad ? "H" : "V"});
  const std::string mode = n.attr_s("mode", "standard");
  if (opt == Optimizer::momentum && mode != "standard" && mode != "nesterov")
    throw Error("shape", n.label() + ": mode must be 'standard' or 'nesterov', got '" + printable(mode) + "'");
  RewriteNodes w{g, n.name, {}};
  const auto out = [&](int k) { return k < static_cast<int>(n.outputs.size()) ? n.outputs[k] : -1; };
  for (int i = 0; i < groups; ++i) {
    const int x = n.inputs[2 + i], grad = n.inputs[2 + groups + i];
    const DType t = g.values[x].dtype;
    const auto c = [&](double v) {
      Tensor s(t, {});
      s.set(0, v);
      return g.add_constant(g.unique_name(n.name + "/c"), std::move(s));
    };
    const int r = w.op("Cast", {n.inputs[0]}, {{"to", int64_t{dtype_to_onnx(t)}}});
    const int tf = w.op("Cast", {n.inputs[1]}, {{"to", int64_t{dtype_to_onnx(t)}}});
    Tensor zero(DType::i64, {});
    const int positive = w.op("Greater", {n.inputs[1], g.add_constant(g.unique_name(n.name + "/zero"), std::move(zero))});
    const int gr = w.op("Add", {w.op("Mul", {c(n.attr_f("norm_coefficient", 0.0)), x}), grad});
    const int gr2 = w.op("Mul", {gr, gr});
    if (opt == Optimizer::adagrad) {
      const int h = w.op("Add", {n.inputs[2 + 2 * groups + i], gr2}, {}, out(groups + i));
      const int rate = w.op("Div", {r, w.op("Add", {c(1.0), w.op("Mul", {tf, c(n.attr_f("decay_factor", 0.0))})})});
      const int step = w.op("Div", {w.op("Mul", {rate, gr}), w.op("Add", {w.op("Sqrt", {h}), c(n.attr_f("epsilon", 1e-6))})});
      w.op("Sub", {x, step}, {}, out(i));
    } else if (opt == Optimizer::adam) {
      const double alpha = n.attr_f("alpha", 0.9), beta = n.attr_f("beta", 0.999);
      const int v = w.op("Add", {w.op("Mul", {c(alpha), n.inputs[2 + 2 * groups + i]}), w.op("Mul", {c(1 - alpha), gr})}, {}, out(groups + i));
      const int h = w.op("Add", {w.op("Mul", {c(beta), n.inputs[2 + 3 * groups + i]}), w.op("Mul", {c(1 - beta), gr2})}, {}, out(2 * groups + i));
      const int corrected = w.op("Div", {w.op("Mul", {r, w.op("Sqrt", {w.op("Sub", {c(1.0), w.op("Pow", {c(beta), tf})})})}),
                                         w.op("Sub", {c(1.0), w.op("Pow", {c(alpha), tf})})});
      const int rate = w.op("Where", {positive, corrected, r});
      const int step = w.op("Mul", {rate, w.op("Div", {v, w.op("Add", {w.op("Sqrt", {h}), c(n.attr_f("epsilon", 1e-6))})})});
      w.op("Mul", {c(1 - n.attr_f("norm_coefficient_post", 0.0)), w.op("Sub", {x, step})}, {}, out(i));
    } else {
      const double alpha = n.attr_f("alpha", 0.0);
      const int b = w.op("Where", {positive, c(n.attr_f("beta", 0.0)), c(1.0)});
      const int v = w.op("Add", {w.op("Mul", {c(alpha), n.inputs[2 + 2 * groups + i]}), w.op("Mul", {b, gr})}, {}, out(groups + i));
      const int dir = mode == "nesterov" ? w.op("Add", {gr, w.op("Mul", {c(alpha), v})}) : v;
      w.op("Sub", {x, w.op("Mul", {r, dir})}, {}, out(i));
    }
  }
  w.replace(index);
  return true;
}

void register_one(const char* name, Optimizer opt, int per) {
  OpDef d = table_entry(std::string("ai.onnx.preview.training.") + name, 2 + per, 1 << 16,
                        [per](InferContext& ctx) { train_infer(ctx, per); }, train_ref, 1 << 16);
  d.expand = [opt](Graph& g, size_t i) { return train_expand(g, i, opt); };
  register_op(std::move(d));
}

}  // namespace

void register_training_ops() {
  register_one("Adagrad", Optimizer::adagrad, 3);
  register_one("Adam", Optimizer::adam, 4);
  register_one("Momentum", Optimizer::momentum, 3);
}

}  // namespace fusor
