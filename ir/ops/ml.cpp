// ONNX-ML operators (domain ai.onnx.ml) that the scikit-learn / LightGBM / XGBoost converters
// (skl2onnx, onnxmltools) write for numeric pipelines. Formulas: the ONNX-ML operator spec and
// its reference (onnx/reference/ops/aionnxml), onnxruntime where the two differ (said below);
// checked against onnxruntime 1.32 (tests/test_ml_ops.cpp).
//
//   Binarizer(X) threshold=0       Y = X > threshold ? 1 : 0 in X's dtype (a NaN gives 0, the
//                                  reference; onnxruntime refuses NaN at run time)
//   Scaler(X) offset, scale        Y = float32((X - offset) * scale); offset and scale of one
//                                  entry or one per feature (X's last axis), of equal length
//   Normalizer(X) norm             each row of [N, C] (or the vector [C]) in float32: MAX
//                                  x / max(row) (the spec's max, not |x|'s, as onnxruntime),
//                                  L1 x / sum |x|, L2 x / sqrt(sum x^2); a row whose divisor is
//                                  0 is kept as it is
//   ArrayFeatureExtractor(X, Y)    X[..., Y] along the last axis, Y int64 read flat; a vector X
//                                  gives [1, k]; an index outside [0, C) is refused
//   LinearRegressor(X) coefficients, intercepts, targets=1, post_transform=NONE
//                                  Y = float32(X) @ W^T + intercepts, W the coefficients as
//                                  [targets, C]; [N, targets] ([1, targets] for a vector)
//   LinearClassifier(X) coefficients, intercepts, classlabels_ints, post_transform
//                                  s = float32(X) @ W^T + intercepts; C rows: labels[argmax s],
//                                  scores s through NONE / LOGISTIC / SOFTMAX / SOFTMAX_ZERO; one
//                                  row (binary, 2 labels): labels[s > 0], scores [1 - t, t] with
//                                  t = logistic(s) for LOGISTIC, else s (onnxruntime's; the ONNX
//                                  reference writes [-s, s]); string labels and PROBIT refused
//   Imputer(X) imputed_value_floats / _int64s, replaced_value_float / _int64
//                                  Y = X where X is not the replaced value (NaN: IsNaN), else the
//                                  imputed value (one, or one per feature); X's dtype
//   OneHotEncoder(X) cats_int64s, zeros=1
//                                  Y [X..., K] float: 1 where int64(X) (truncated, onnxruntime's
//                                  cast) is cats[k]; NaN or a value in no category gives a zero row
//                                  (onnxruntime fails the run when zeros=0); string cats refused
//   LabelEncoder(X) (ml 2-4) keys_* / values_* (int64s, floats; ml 4: keys_tensor, values_tensor),
//                                  default_* / default_tensor (-1, -0.0): Y = values[k] where X is
//                                  keys[k] (the first such k; NaN matches a NaN key from ml 4), else the
//                                  default, in the values' dtype; string keys or values refused
//   FeatureVectorizer(X...) inputdimensions
//                                  Y [N, sum dims] float: each input as [N, C_i], cut or zero-padded
//                                  to its dimension, side by side
//   TreeEnsembleRegressor, TreeEnsembleClassifier (ml 1, 3) and TreeEnsemble (ml 5): see
//   ir/ops/tree_ensemble.cpp; SVMRegressor and SVMClassifier: ir/ops/svm.cpp.
//
// The others are replaced at shape inference by standard ops (OpDef::expand), so they fuse
// on every backend. Errors (Error "shape" / Unsupported, one line naming the node): attribute
// lengths that do not match, ranks the ops do not take, post_transform other than NONE.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "ir/ops/op_helpers.h"

namespace fusor {

void register_tree_ensemble_ops();  // ir/ops/tree_ensemble.cpp
void register_svm_ops();            // ir/ops/svm.cpp

namespace {

using namespace op_helpers;

constexpr const char* kMl = "ai.onnx.ml.";

Error bad(const Node& n, const std::string& why) { return Error("shape", n.label() + ": " + why); }

bool known(const Value& v) {
  if (!v.shape_known) return false;
  for (int64_t d : v.shape)
    if (d < 0) return false;
  return true;
}

int out0(const Node& n) { return n.outputs.empty() ? -1 : n.outputs[0]; }

// A float32 constant of the given shape and values.
int floats(RewriteNodes& w, const std::string& what, const Shape& s, const std::vector<double>& v) {
  Tensor t(DType::f32, s);
  for (size_t i = 0; i < v.size(); ++i) t.set(static_cast<int64_t>(i), v[i]);
  return w.g.add_constant(w.g.unique_name(w.base + "/" + what), std::move(t));
}

int to_f32(RewriteNodes& w, int x) {
  return w.g.values[x].dtype == DType::f32 ? x : w.op("Cast", {x}, {{"to", int64_t{dtype_to_onnx(DType::f32)}}});
}

void need_numeric_input(const Graph& g, const Node& n) {
  const DType t = g.values[n.inputs[0]].dtype;
  if (t != DType::undefined && (!dtype_is_float(t) || dtype_is_small(t)) && !dtype_is_int(t))
    throw bad(n, std::string("X must be a float or integer tensor, got ") + dtype_name(t));
}

// ---- Binarizer -------------------------------------------------------------------------------

bool binarizer_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  need_numeric_input(g, n);
  const DType t = g.values[n.inputs[0]].dtype;
  if (t == DType::undefined) return false;
  RewriteNodes w{g, n.name, {}};
  const double thr = n.attr_f("threshold", 0.0);
  int above;
  if (t == DType::i32 || t == DType::i64) {
    // x > t exactly for an integer x: x > floor(t); a threshold past the dtype's range makes
    // every value (or none) above it.
    const double f = std::floor(thr), top = std::ldexp(1.0, dtype_bits(t) - 1);
    const int zero = w.op("Mul", {n.inputs[0], g.add_constant(g.unique_name(n.name + "/zero"), Tensor(t, {}))});
    if (std::isnan(thr) || f >= top - 1) {
      w.op("Identity", {zero}, {}, out0(n));
    } else if (f < -top) {
      Tensor one(t, {});
      one.set(0, 1.0);
      w.op("Add", {zero, g.add_constant(g.unique_name(n.name + "/one"), std::move(one))}, {}, out0(n));
    } else {
      Tensor c(t, {});
      c.set_int(0, static_cast<int64_t>(f));
      above = w.op("Greater", {n.inputs[0], g.add_constant(g.unique_name(n.name + "/threshold"), std::move(c))});
      w.op("Cast", {above}, {{"to", int64_t{dtype_to_onnx(t)}}}, out0(n));
    }
    w.replace(index);
    return true;
  }
  if (t != DType::f32 && t != DType::f64 && t != DType::f16 && t != DType::bf16)
    throw bad(n, std::string("X must be float, double, float16, bfloat16, int32 or int64, got ") + dtype_name(t));
  {
    // Float dtypes compare in float32 (every fp16 / bf16 value is exact there, and so is the
    // float32 threshold) or float64.
    const int x = t == DType::f64 ? n.inputs[0] : to_f32(w, n.inputs[0]);
    Tensor c(t == DType::f64 ? DType::f64 : DType::f32, {});
    c.set(0, thr);
    above = w.op("Greater", {x, g.add_constant(g.unique_name(n.name + "/threshold"), std::move(c))});
  }
  w.op("Cast", {above}, {{"to", int64_t{dtype_to_onnx(t)}}}, out0(n));
  w.replace(index);
  return true;
}

// ---- Scaler ----------------------------------------------------------------------------------

bool scaler_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  need_numeric_input(g, n);
  const std::vector<double> offset = n.attr_floats("offset"), scale = n.attr_floats("scale");
  if (offset.empty() || offset.size() != scale.size())
    throw bad(n, "offset and scale must have the same number of entries (1 or one per feature), got " + std::to_string(offset.size()) +
                     " and " + std::to_string(scale.size()));
  const Value xv = g.values[n.inputs[0]];  // a copy: adding values below may move g.values
  if (xv.dtype == DType::undefined || !xv.shape_known) return false;
  const int64_t c = xv.shape.empty() ? 1 : xv.shape.back();
  if (offset.size() != 1 && static_cast<int64_t>(offset.size()) != c)
    throw bad(n, std::to_string(offset.size()) + " offsets and scales for " + std::to_string(c) + " features");
  RewriteNodes w{g, n.name, {}};
  const Shape s{static_cast<int64_t>(offset.size())};
  w.op("Mul", {w.op("Sub", {to_f32(w, n.inputs[0]), floats(w, "offset", s, offset)}), floats(w, "scale", s, scale)}, {}, out0(n));
  w.replace(index);
  return true;
}

// ---- Normalizer ------------------------------------------------------------------------------

bool normalizer_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  need_numeric_input(g, n);
  const std::string norm = n.attr_s("norm", "MAX");
  if (norm != "MAX" && norm != "L1" && norm != "L2") throw bad(n, "norm must be MAX, L1 or L2, got '" + printable(norm) + "'");
  const Value xv = g.values[n.inputs[0]];  // a copy: adding values below may move g.values
  if (xv.dtype == DType::undefined || !xv.shape_known) return false;
  if (xv.shape.empty() || xv.shape.size() > 2) throw bad(n, "X must be [N, C] or [C], got " + shape_str(xv.shape));
  RewriteNodes w{g, n.name, {}};
  const int x = to_f32(w, n.inputs[0]);
  const char* reduce = norm == "MAX" ? "ReduceMax" : norm == "L1" ? "ReduceL1" : "ReduceL2";
  // MAX skips NaN (onnxruntime takes std::max from the lowest float: [nan, 3, 0] -> [nan, 1, 0];
  // ReduceMax would make the whole row NaN; red-team round 52).
  const int xr = norm == "MAX" ? w.op("Where", {w.op("IsNaN", {x}), floats(w, "lowest", {}, {-3.4028234663852886e38}), x}) : x;
  const int d = w.op(reduce, {xr, w.ints({-1})}, {{"keepdims", int64_t{1}}}, -1, 18);
  const int zero = floats(w, "zero", {}, {0.0}), one = floats(w, "one", {}, {1.0});
  // A zero divisor keeps the row (onnxruntime divides only by a non-zero one).
  w.op("Div", {x, w.op("Where", {w.op("Equal", {d, zero}), one, d})}, {}, out0(n));
  w.replace(index);
  return true;
}

// ---- ArrayFeatureExtractor -------------------------------------------------------------------

bool feature_extractor_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  if (g.values[n.inputs[1]].dtype != DType::undefined && g.values[n.inputs[1]].dtype != DType::i64)
    throw bad(n, std::string("Y (the indices) must be int64, got ") + dtype_name(g.values[n.inputs[1]].dtype));
  const Value xv = g.values[n.inputs[0]];  // a copy: adding values below may move g.values
  if (!known(xv) || g.values[n.inputs[1]].dtype == DType::undefined) return false;
  if (xv.shape.empty()) throw bad(n, "X must have rank >= 1, got a scalar");
  if (g.values[n.inputs[1]].shape_known && shape_numel(g.values[n.inputs[1]].shape) == 0)
    throw bad(n, "Y (the indices) is empty");  // onnxruntime: num_indices = 0 is invalid
  const int64_t c = xv.shape.back();
  RewriteNodes w{g, n.name, {}};
  const int flat = w.op("Reshape", {n.inputs[1], w.ints({-1})});
  // A negative index is refused (onnxruntime) where Gather would count it from the end: it is
  // moved below the axis' range and Gather's own check refuses it, on every backend.
  const int safe = w.op("Where", {w.op("Less", {flat, w.ints({0})}), w.op("Sub", {flat, w.ints({c})}), flat});
  if (xv.shape.size() == 1) {
    w.op("Unsqueeze", {w.op("Gather", {n.inputs[0], safe}, {{"axis", int64_t{0}}}), w.ints({0})}, {}, out0(n));
  } else {
    w.op("Gather", {n.inputs[0], safe}, {{"axis", int64_t{-1}}}, out0(n));
  }
  w.replace(index);
  return true;
}

void feature_extractor_infer(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  Shape s = x.size() <= 1 ? Shape{1} : Shape(x.begin(), x.end() - 1);
  s.push_back(-1);
  ctx.set_output(0, ctx.dtype(0), s);
}

// ---- LinearRegressor -------------------------------------------------------------------------

bool linear_regressor_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  need_numeric_input(g, n);
  const std::string post = n.attr_s("post_transform", "NONE");
  if (post != "NONE") throw Unsupported("onnx", n.label() + ": post_transform " + printable(post) + " is not supported (NONE only)");
  const int64_t targets = n.attr_i("targets", 1);
  const std::vector<double> coef = n.attr_floats("coefficients"), icpt = n.attr_floats("intercepts");
  if (targets <= 0 || coef.empty() || static_cast<int64_t>(coef.size()) % targets)
    throw bad(n, std::to_string(coef.size()) + " coefficients do not split into " + std::to_string(targets) + " targets");
  if (!icpt.empty() && static_cast<int64_t>(icpt.size()) != targets)
    throw bad(n, std::to_string(icpt.size()) + " intercepts for " + std::to_string(targets) + " targets");
  const Value xv = g.values[n.inputs[0]];  // a copy: adding values below may move g.values
  if (xv.dtype == DType::undefined || !xv.shape_known) return false;
  const int64_t f = static_cast<int64_t>(coef.size()) / targets;
  if (xv.shape.empty() || xv.shape.size() > 2 || (xv.shape.back() >= 0 && xv.shape.back() != f))
    throw bad(n, "X must be [N, " + std::to_string(f) + "] or [" + std::to_string(f) + "] for the coefficients, got " + shape_str(xv.shape));
  RewriteNodes w{g, n.name, {}};
  int x = to_f32(w, n.inputs[0]);
  if (xv.shape.size() == 1) x = w.op("Unsqueeze", {x, w.ints({0})});
  std::vector<double> wt(coef.size());  // [f, targets]: the coefficients' [targets, f] transposed
  for (int64_t t = 0; t < targets; ++t)
    for (int64_t k = 0; k < f; ++k) wt[k * targets + t] = coef[t * f + k];
  const int y = w.op("MatMul", {x, floats(w, "coefficients", {f, targets}, wt)}, {}, icpt.empty() ? out0(n) : -1);
  if (!icpt.empty()) w.op("Add", {y, floats(w, "intercepts", {targets}, icpt)}, {}, out0(n));
  w.replace(index);
  return true;
}

void linear_regressor_infer(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  ctx.set_output(0, DType::f32, {x.size() == 2 ? x[0] : 1, ctx.node().attr_i("targets", 1)});
}

// ---- LinearClassifier ------------------------------------------------------------------------

// Softmax over the last axis where |v| <= 1e-7 counts as zero: such a value is scaled by
// e^-max and left out of the sum (onnxruntime's SOFTMAX_ZERO).
int softmax_zero(RewriteNodes& w, int x) {
  const int m = w.op("ReduceMax", {x, w.ints({-1})}, {{"keepdims", int64_t{1}}}, -1, 18);
  const int zero = w.op("LessOrEqual", {w.op("Abs", {x}), floats(w, "tiny", {}, {1e-7})});
  const int e = w.op("Exp", {w.op("Sub", {x, m})});
  const int summed = w.op("Where", {zero, floats(w, "zero", {}, {0.0}), e});
  const int sum = w.op("ReduceSum", {summed, w.ints({-1})}, {{"keepdims", int64_t{1}}}, -1, 18);
  const int kept = w.op("Where", {zero, w.op("Mul", {x, w.op("Exp", {w.op("Neg", {m})})}), e});
  return w.op("Div", {kept, sum});
}

bool linear_classifier_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  need_numeric_input(g, n);
  if (n.has_attr("classlabels_strings")) throw Unsupported("onnx", n.label() + ": classlabels_strings (string labels) are not supported");
  const std::vector<int64_t> labels = n.attr_ints("classlabels_ints");
  const std::vector<double> coef = n.attr_floats("coefficients"), icpt = n.attr_floats("intercepts");
  const std::string post = n.attr_s("post_transform", "NONE");
  if (post != "NONE" && post != "LOGISTIC" && post != "SOFTMAX" && post != "SOFTMAX_ZERO")
    throw Unsupported("onnx", n.label() + ": post_transform " + printable(post) + " is not supported (NONE, LOGISTIC, SOFTMAX, SOFTMAX_ZERO)");
  const Value xv = g.values[n.inputs[0]];  // a copy: adding values below may move g.values
  if (xv.dtype == DType::undefined || !known(xv)) return false;
  if (xv.shape.empty() || xv.shape.size() > 2) throw bad(n, "X must be [N, F] or [F], got " + shape_str(xv.shape));
  const int64_t f = xv.shape.back(), size = static_cast<int64_t>(coef.size());
  if (f <= 0 || size == 0 || size % f) throw bad(n, std::to_string(size) + " coefficients do not split into rows of X's " + std::to_string(f) + " features");
  const int64_t rows = size / f;
  const bool binary = rows == 1;
  if (binary ? labels.size() != 2 : static_cast<int64_t>(labels.size()) != rows)
    throw bad(n, std::to_string(labels.size()) + " classlabels_ints for " + std::to_string(rows) + " coefficient rows (" +
                     (binary ? "one row is a binary classifier of 2 labels)" : "one label per row)"));
  if (!icpt.empty() && static_cast<int64_t>(icpt.size()) != rows) throw bad(n, std::to_string(icpt.size()) + " intercepts for " + std::to_string(rows) + " classes");
  RewriteNodes w{g, n.name, {}};
  int x = to_f32(w, n.inputs[0]);
  if (xv.shape.size() == 1) x = w.op("Unsqueeze", {x, w.ints({0})});
  std::vector<double> wt(coef.size());  // [f, rows]
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < f; ++k) wt[k * rows + r] = coef[r * f + k];
  int s = w.op("MatMul", {x, floats(w, "coefficients", {f, rows}, wt)});
  if (!icpt.empty()) s = w.op("Add", {s, floats(w, "intercepts", {rows}, icpt)});
  const int label_out = n.outputs.empty() ? -1 : n.outputs[0], score_out = n.outputs.size() > 1 ? n.outputs[1] : -1;
  Tensor lt(DType::i64, {static_cast<int64_t>(labels.size())});
  for (size_t i = 0; i < labels.size(); ++i) lt.set_int(static_cast<int64_t>(i), labels[i]);
  const int label_table = g.add_constant(g.unique_name(n.name + "/classlabels"), std::move(lt));
  if (binary) {
    // One score s per row: label labels[1] where s > 0; scores [1 - t, t], t = logistic(s)
    // with LOGISTIC and s itself otherwise (onnxruntime's binary LinearClassifier).
    const int pick = w.op("Cast", {w.op("Greater", {s, floats(w, "zero", {}, {0.0})})}, {{"to", int64_t{dtype_to_onnx(DType::i64)}}});
    if (label_out >= 0) w.op("Gather", {label_table, w.op("Reshape", {pick, w.ints({-1})})}, {}, label_out);
    if (score_out >= 0) {
      const int t = post == "LOGISTIC" ? w.op("Sigmoid", {s}) : s;
      w.op("Concat", {w.op("Sub", {floats(w, "one", {}, {1.0}), t}), t}, {{"axis", int64_t{1}}}, score_out);
    }
  } else {
    const int z = post == "LOGISTIC" ? w.op("Sigmoid", {s})
                  : post == "SOFTMAX" ? w.op("Softmax", {s}, {{"axis", int64_t{-1}}})
                  : post == "SOFTMAX_ZERO" ? softmax_zero(w, s) : s;
    if (label_out >= 0) w.op("Gather", {label_table, w.op("ArgMax", {s}, {{"axis", int64_t{1}}, {"keepdims", int64_t{0}}})}, {}, label_out);
    if (score_out >= 0) w.op("Identity", {z}, {}, score_out);
  }
  w.replace(index);
  return true;
}

void linear_classifier_infer(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  const int64_t rows = x.size() == 2 ? x[0] : 1;
  ctx.set_output(0, DType::i64, {rows});
  if (ctx.num_outputs() > 1 && ctx.node().outputs[1] >= 0) ctx.set_output(1, DType::f32, {rows, -1});
}

// ---- Imputer ---------------------------------------------------------------------------------

bool imputer_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  const Value xv = g.values[n.inputs[0]];  // a copy: adding values below may move g.values
  if (xv.dtype == DType::undefined || !xv.shape_known) return false;
  const DType t = xv.dtype;
  const bool fl = t == DType::f32 || t == DType::f64;
  if (!fl && t != DType::i64 && t != DType::i32)
    throw bad(n, std::string("X must be float, double, int64 or int32, got ") + dtype_name(t));
  std::vector<double> imputed = fl ? n.attr_floats("imputed_value_floats") : std::vector<double>{};
  if (!fl)
    for (int64_t v : n.attr_ints("imputed_value_int64s")) imputed.push_back(static_cast<double>(v));
  const int64_t c = xv.shape.empty() ? 1 : xv.shape.back();
  if (imputed.empty() || (imputed.size() != 1 && static_cast<int64_t>(imputed.size()) != c))
    throw bad(n, std::to_string(imputed.size()) + std::string(fl ? " imputed_value_floats" : " imputed_value_int64s") + " for " +
                     std::to_string(c) + " features (1 or one per feature)");
  RewriteNodes w{g, n.name, {}};
  Tensor value(t, {static_cast<int64_t>(imputed.size())});
  for (size_t i = 0; i < imputed.size(); ++i)
    if (fl) value.set(static_cast<int64_t>(i), imputed[i]);
    else value.set_int(static_cast<int64_t>(i), n.attr_ints("imputed_value_int64s")[i]);
  const int fill = g.add_constant(g.unique_name(n.name + "/imputed"), std::move(value));
  int mask;
  const double rv = fl ? n.attr_f("replaced_value_float", 0.0) : 0.0;
  if (fl && std::isnan(rv)) {
    mask = w.op("IsNaN", {n.inputs[0]});
  } else {
    Tensor r(t, {});
    if (fl) r.set(0, rv);
    else r.set_int(0, n.attr_i("replaced_value_int64", 0));
    mask = w.op("Equal", {n.inputs[0], g.add_constant(g.unique_name(n.name + "/replaced"), std::move(r))});
  }
  w.op("Where", {mask, fill, n.inputs[0]}, {}, out0(n));
  w.replace(index);
  return true;
}

// ---- OneHotEncoder ---------------------------------------------------------------------------

bool onehot_encoder_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  if (n.has_attr("cats_strings")) throw Unsupported("onnx", n.label() + ": cats_strings (string categories) are not supported");
  const std::vector<int64_t> cats = n.attr_ints("cats_int64s");
  if (cats.empty()) throw bad(n, "cats_int64s is empty");
  const Value xv = g.values[n.inputs[0]];
  if (xv.dtype == DType::undefined) return false;
  need_numeric_input(g, n);
  RewriteNodes w{g, n.name, {}};
  const int x = xv.dtype == DType::i64 ? n.inputs[0] : w.op("Cast", {n.inputs[0]}, {{"to", int64_t{dtype_to_onnx(DType::i64)}}});
  int hit = w.op("Equal", {w.op("Unsqueeze", {x, w.ints({-1})}), w.ints(cats)});
  if (dtype_is_float(xv.dtype)) {  // NaN and +-inf are in no category (onnxruntime), not where the cast sends them
    const int odd = w.op("Or", {w.op("IsNaN", {n.inputs[0]}), w.op("IsInf", {n.inputs[0]}, {}, -1, 10)});
    hit = w.op("And", {hit, w.op("Not", {w.op("Unsqueeze", {odd, w.ints({-1})})})});
  }
  // A category listed twice sets only its last column (onnxruntime maps each category to its
  // last index; red-team round 52).
  Tensor last(DType::boolean, {static_cast<int64_t>(cats.size())});
  bool dup = false;
  for (size_t k = 0; k < cats.size(); ++k) {
    const bool later = std::find(cats.begin() + static_cast<std::ptrdiff_t>(k) + 1, cats.end(), cats[k]) != cats.end();
    last.set(static_cast<int64_t>(k), later ? 0.0 : 1.0), dup = dup || later;
  }
  if (dup) hit = w.op("And", {hit, g.add_constant(g.unique_name(n.name + "/last"), last)});
  w.op("Cast", {hit}, {{"to", int64_t{dtype_to_onnx(DType::f32)}}}, out0(n));
  w.replace(index);
  return true;
}

void onehot_encoder_infer(InferContext& ctx) {
  Shape s = ctx.shape(0);
  s.push_back(static_cast<int64_t>(ctx.node().attr_ints("cats_int64s").size()));
  ctx.set_output(0, DType::f32, s);
}

// ---- LabelEncoder ----------------------------------------------------------------------------

// keys / values / default of a LabelEncoder as tensors (ml 4's *_tensor or ml 2's lists);
// strings are refused.
Tensor label_table(const Node& n, const std::string& what, bool scalar_default) {
  if (n.has_attr(what + "_strings")) throw Unsupported("onnx", n.label() + ": " + what + "_strings (strings) are not supported here");
  if (const Tensor* t = n.attr_t(what + "_tensor")) {
    if (t->dtype() == DType::string) throw Unsupported("onnx", n.label() + ": " + what + "_tensor of strings is not supported");
    return *t;
  }
  if (scalar_default) return Tensor();
  const bool ints = n.has_attr(what + "_int64s");
  if (ints) {
    const std::vector<int64_t> v = n.attr_ints(what + "_int64s");
    Tensor t(DType::i64, {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) t.set_int(static_cast<int64_t>(i), v[i]);
    return t;
  }
  const std::vector<double> v = n.attr_floats(what + "_floats");
  Tensor t(DType::f32, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.set(static_cast<int64_t>(i), v[i]);
  return t;
}

// Keys past which LabelEncoder searches instead of comparing with every key.
constexpr int64_t kLabelCompareMax = 16;

// Y = values[k] for the first k with keys[k] == X, else the default, by a binary search: the
// distinct non-NaN keys sorted (each with the value of its first occurrence; -0.0 and 0.0 are one
// key, as Equal has them), padded with the last one to a power of two P, and pos the last slot
// whose key is <= x after log2(P) halving steps (pos + step stays below P: no bounds checks).
// A NaN x is <= nothing and equals nothing: the default, or the first NaN key's value.
void label_encoder_search(Graph& g, RewriteNodes& w, const Node& n, const Tensor& keys, const Tensor& values, const Tensor& dflt,
                          bool nan_key) {
  const bool ik = dtype_is_int(keys.dtype()), iv = dtype_is_int(values.dtype());
  const auto less = [&](int64_t a, int64_t b) { return ik ? keys.get_int(a) < keys.get_int(b) : keys.get(a) < keys.get(b); };
  std::vector<int64_t> order;
  int64_t nan_at = -1;
  for (int64_t i = 0; i < keys.numel(); ++i)
    if (!ik && std::isnan(keys.get(i))) nan_at = nan_at < 0 ? i : nan_at;
    else order.push_back(i);
  std::stable_sort(order.begin(), order.end(), less);
  std::vector<int64_t> first;  // the first occurrence of each distinct key, in key order
  for (int64_t i : order)
    if (first.empty() || less(first.back(), i)) first.push_back(i);
  const auto scalar = [&](const Tensor& from, int64_t i, const char* what) {
    Tensor t(from.dtype(), {});
    if (dtype_is_int(from.dtype())) t.set_int(0, from.get_int(i));
    else t.set(0, from.get(i));
    return g.add_constant(g.unique_name(n.name + "/" + what), std::move(t));
  };
  Tensor dv = dflt;
  dv.reshape({});
  const int dc = g.add_constant(g.unique_name(n.name + "/default"), dv);
  if (first.empty()) {  // only NaN keys: they map NaN from ml 4, nothing before
    w.op("Where", {w.op("IsNaN", {n.inputs[0]}), nan_key ? scalar(values, nan_at, "nan_value") : dc, dc}, {}, out0(n));
    return;
  }
  int64_t p = 1;
  while (p < static_cast<int64_t>(first.size())) p *= 2;
  Tensor sk(keys.dtype(), {p}), sv(values.dtype(), {p});
  for (int64_t j = 0; j < p; ++j) {
    const int64_t i = first[static_cast<size_t>(std::min<int64_t>(j, static_cast<int64_t>(first.size()) - 1))];
    if (ik) sk.set_int(j, keys.get_int(i));
    else sk.set(j, keys.get(i));
    if (iv) sv.set_int(j, values.get_int(i));
    else sv.set(j, values.get(i));
  }
  const int kc = g.add_constant(g.unique_name(n.name + "/sorted_keys"), std::move(sk));
  const int vc = g.add_constant(g.unique_name(n.name + "/sorted_values"), std::move(sv));
  const int x = n.inputs[0];
  const auto i64 = [&](int64_t v) {  // a rank-0 int64 constant (broadcasts to any x, a scalar x too)
    Tensor t(DType::i64, {});
    t.set_int(0, v);
    return g.add_constant(g.unique_name(n.name + "/step"), std::move(t));
  };
  Tensor zero(DType::i64, {1});
  int pos = w.op("ConstantOfShape", {w.op("Shape", {x})}, {{"value", zero}});
  for (int64_t step = p / 2; step >= 1; step /= 2) {
    const int cand = w.op("Add", {pos, i64(step)});
    pos = w.op("Where", {w.op("LessOrEqual", {w.op("Gather", {kc, cand}, {{"axis", int64_t{0}}}), x}), cand, pos});
  }
  const int found = w.op("Equal", {w.op("Gather", {kc, pos}, {{"axis", int64_t{0}}}), x});
  int y = w.op("Where", {found, w.op("Gather", {vc, pos}, {{"axis", int64_t{0}}}), dc}, {}, nan_key ? -1 : out0(n));
  if (nan_key) w.op("Where", {w.op("IsNaN", {x}), scalar(values, nan_at, "nan_value"), y}, {}, out0(n));
}

// ---- LabelEncoder over strings ----------------------------------------------------------------
// Keys or values of strings (keys_strings / values_strings / default_string, or *_tensor of
// strings): not expanded into numeric ops, but a lookup on the host (no device computes on
// strings). The first key equal to x gives its value; else the default (default_string
// "_Unused", default_int64 -1, default_float -0.0, or default_tensor).

// Keys or values of strings (a default_string beside numeric values is unused, as in onnxruntime).
// ml opset 1's classes_strings always maps strings to their index or back.
bool label_has_strings(const Node& n) {
  if (n.has_attr("classes_strings")) return true;
  for (const std::string w : {"keys", "values"}) {
    if (n.has_attr(w + "_strings")) return true;
    if (const Tensor* t = n.attr_t(w + "_tensor"); t && t->dtype() == DType::string) return true;
  }
  return false;
}

// ml opset 1 (classes_strings, default_int64 -1, default_string "_Unused"): a string X maps to
// its index in classes_strings, an int64 X to the class at that index (ONNX-ML LabelEncoder-1);
// a repeated class maps to its last index, as onnxruntime's map fills.
Tensor label_classes_table(const Node& n, const std::string& what, DType x) {
  const std::vector<std::string> classes = n.attr_strings("classes_strings");
  const bool strings_in = x == DType::string;
  const bool strings_here = what == "keys" ? strings_in : !strings_in;
  if (what == "default") {
    Tensor t(strings_in ? DType::i64 : DType::string, {1});
    if (strings_in) t.set_int(0, n.attr_i("default_int64", -1));
    else t.strings = {n.attr_s("default_string", "_Unused")};
    return t;
  }
  Tensor t(strings_here ? DType::string : DType::i64, {static_cast<int64_t>(classes.size())});
  std::map<std::string, int64_t> last;
  for (size_t i = 0; i < classes.size(); ++i) last[classes[i]] = static_cast<int64_t>(i);
  if (strings_here) t.strings = classes;
  else
    for (size_t i = 0; i < classes.size(); ++i)
      t.set_int(static_cast<int64_t>(i), strings_in ? last[classes[i]] : static_cast<int64_t>(i));
  return t;
}

// One of the node's tables (keys, values) or its default as a tensor, strings included; x is
// X's dtype (ml opset 1 reads its one table either way round).
Tensor label_any_table(const Node& n, const std::string& what, DType x) {
  if (n.has_attr("classes_strings")) return label_classes_table(n, what, x);
  if (const Tensor* t = n.attr_t(what + "_tensor")) return *t;
  const bool dflt = what == "default";
  const bool string_values = n.has_attr("values_strings") || (n.attr_t("values_tensor") && n.attr_t("values_tensor")->dtype() == DType::string);
  if (dflt ? string_values : n.has_attr(what + "_strings")) {
    std::vector<std::string> v;
    if (dflt) v = {n.attr_s("default_string", "_Unused")};
    else v = n.attr_strings(what + "_strings");
    Tensor t(DType::string, {static_cast<int64_t>(v.size())});
    t.strings = v;
    return t;
  }
  if (dflt) {
    const bool ints = n.has_attr("values_int64s") || (n.attr_t("values_tensor") && dtype_is_int(n.attr_t("values_tensor")->dtype()));
    Tensor t(ints ? (n.attr_t("values_tensor") ? n.attr_t("values_tensor")->dtype() : DType::i64)
                  : (n.attr_t("values_tensor") ? n.attr_t("values_tensor")->dtype() : DType::f32), {1});
    if (ints) t.set_int(0, n.attr_i("default_int64", -1));
    else t.set(0, n.attr_f("default_float", -0.0));
    return t;
  }
  Tensor t = label_table(n, what, false);
  return t;
}

// An element of a key / value table as a comparable key: strings by their bytes, numbers as
// double or int64 (-0.0 and 0.0 one key, as Equal has them).
struct LabelKey {
  std::string s;
  double f = 0;
  int64_t i = 0;
  bool operator<(const LabelKey& o) const { return s != o.s ? s < o.s : f != o.f ? f < o.f : i < o.i; }
};
LabelKey label_key(const Tensor& t, int64_t k) {
  LabelKey key;
  if (t.dtype() == DType::string) key.s = t.strings[static_cast<size_t>(k)];
  else if (dtype_is_float(t.dtype())) key.f = t.get(k);
  else key.i = t.get_int(k);
  return key;
}

void label_encoder_strings_ref(const Node& n, const Ins& in, Outs& out) {
  if (!label_has_strings(n)) ref_fail(n, "runs once its input is typed (it is expanded into standard ops then)");
  const Tensor& x = *in[0];
  const Tensor keys = label_any_table(n, "keys", x.dtype()), values = label_any_table(n, "values", x.dtype()),
               dflt = label_any_table(n, "default", x.dtype());
  Tensor& y = out[0];
  std::map<LabelKey, int64_t> first;  // key -> its first index
  int64_t nan_at = -1;
  for (int64_t k = keys.numel() - 1; k >= 0; --k) {
    if (dtype_is_float(keys.dtype()) && std::isnan(keys.get(k))) nan_at = k;
    else first[label_key(keys, k)] = k;
  }
  const auto put = [&](int64_t o, const Tensor& from, int64_t k) {
    if (y.dtype() == DType::string) y.strings[static_cast<size_t>(o)] = from.strings[static_cast<size_t>(k)];
    else if (dtype_is_float(y.dtype())) y.set(o, from.get(k));
    else y.set_int(o, from.get_int(k));
  };
  for (int64_t j = 0; j < x.numel(); ++j) {
    if (dtype_is_float(x.dtype()) && std::isnan(x.get(j))) {
      if (nan_at >= 0 && n.opset >= 4) put(j, values, nan_at);
      else put(j, dflt, 0);
      continue;
    }
    const auto it = first.find(label_key(x, j));
    if (it != first.end()) put(j, values, it->second);
    else put(j, dflt, 0);
  }
}

bool label_encoder_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  if (label_has_strings(n)) return false;  // the host lookup above
  const Tensor keys = label_table(n, "keys", false), values = label_table(n, "values", false);
  if (keys.numel() == 0 || keys.numel() != values.numel())
    throw bad(n, std::to_string(keys.numel()) + " keys and " + std::to_string(values.numel()) + " values (they must pair up, at least one)");
  Tensor dflt = label_table(n, "default", true);
  if (!dflt.defined()) {
    dflt = Tensor(values.dtype(), {});
    if (dtype_is_int(values.dtype())) dflt.set_int(0, n.attr_i("default_int64", -1));
    else dflt.set(0, n.attr_f("default_float", -0.0));
  }
  if (dflt.dtype() != values.dtype() || dflt.numel() != 1) throw bad(n, "default_tensor must be one value of the values' dtype");
  const Value xv = g.values[n.inputs[0]];
  if (xv.dtype == DType::undefined) return false;
  if (!dtype_is_float(xv.dtype) && !dtype_is_int(xv.dtype)) throw bad(n, std::string("X must be numeric, got ") + dtype_name(xv.dtype));
  // X has the keys' type (the spec; onnxruntime refuses otherwise): a cast would send NaN and
  // 0.7 onto key 0.
  if (xv.dtype != keys.dtype()) throw bad(n, std::string("X is ") + dtype_name(xv.dtype) + ", the keys are " + dtype_name(keys.dtype()));
  RewriteNodes w{g, n.name, {}};
  const int x = n.inputs[0];
  auto flat = [](Tensor t, Shape s) {
    t.reshape(std::move(s));
    return t;
  };
  // Integer keys over a dense enough range: one table lookup per element, x - min into a
  // table of the values (the first key's) and a table of which offsets are keys; a compare
  // against every key grew with rows x keys (skl2onnx's 1,000-key encoders on 10^5 rows: 13 s).
  if (dtype_is_int(keys.dtype())) {
    int64_t lo = keys.get_int(0), hi = lo;
    for (int64_t i = 1; i < keys.numel(); ++i) lo = std::min(lo, keys.get_int(i)), hi = std::max(hi, keys.get_int(i));
    const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);  // hi - lo without overflow
    if (range < (uint64_t{1} << 20) && range < static_cast<uint64_t>(16 * keys.numel() + 1024)) {
      const int64_t span = static_cast<int64_t>(range) + 1;
      Tensor table(values.dtype(), {span}), known(DType::boolean, {span});
      for (int64_t i = keys.numel() - 1; i >= 0; --i) {  // backwards: the first key of a value wins
        const int64_t at = keys.get_int(i) - lo;
        if (dtype_is_int(values.dtype())) table.set_int(at, values.get_int(i));
        else table.set(at, values.get(i));
        known.set(at, 1.0);
      }
      Tensor base(keys.dtype(), {}), size(keys.dtype(), {}), zero(keys.dtype(), {});
      base.set_int(0, lo), size.set_int(0, span);
      // Integer Sub wraps, and x - lo lands in [0, span) exactly when x is in [lo, hi].
      const int off = w.op("Sub", {x, g.add_constant(g.unique_name(n.name + "/lo"), base)});
      const int zc = g.add_constant(g.unique_name(n.name + "/zero"), zero);
      const int in = w.op("And", {w.op("GreaterOrEqual", {off, zc}), w.op("Less", {off, g.add_constant(g.unique_name(n.name + "/span"), size)})});
      const int safe = w.op("Where", {in, off, zc});
      const int is_key = w.op("And", {in, w.op("Gather", {g.add_constant(g.unique_name(n.name + "/known"), known), safe}, {{"axis", int64_t{0}}})});
      const int dc = g.add_constant(g.unique_name(n.name + "/default"), flat(dflt, {}));
      w.op("Where", {is_key, w.op("Gather", {g.add_constant(g.unique_name(n.name + "/table"), table), safe}, {{"axis", int64_t{0}}}), dc}, {}, out0(n));
      w.replace(index);
      return true;
    }
  }
  // LabelEncoder-4 compares keys bit for bit, so a NaN key maps NaN (the spec, onnxruntime);
  // before ml 4 a NaN matches no key.
  bool nan_key = false;
  for (int64_t i = 0; n.opset >= 4 && dtype_is_float(keys.dtype()) && i < keys.numel(); ++i) nan_key = nan_key || std::isnan(keys.get(i));
  // Many sparse keys: a binary search over the sorted distinct keys, log2(keys) Gather steps per
  // element that fuse into one kernel, instead of a compare with every key (100k rows x 5,000
  // keys: 47 s on cpu, red-team round 54).
  if (keys.numel() > kLabelCompareMax) {
    label_encoder_search(g, w, n, keys, values, dflt, nan_key);
    w.replace(index);
    return true;
  }
  const int kc = g.add_constant(g.unique_name(n.name + "/keys"), flat(keys, {keys.numel()}));
  const int xe = w.op("Unsqueeze", {x, w.ints({-1})});
  int hit = w.op("Equal", {xe, kc});
  if (nan_key) hit = w.op("Or", {hit, w.op("And", {w.op("IsNaN", {xe}), w.op("IsNaN", {kc})})});
  // 0 / 1 as float32 (exact): ArgMax and ReduceMax of floats run on the GPUs.
  const int hit_i = w.op("Cast", {hit}, {{"to", int64_t{dtype_to_onnx(DType::f32)}}});
  const int first = w.op("ArgMax", {hit_i}, {{"axis", int64_t{-1}}, {"keepdims", int64_t{0}}});
  const int any = w.op("Cast", {w.op("ReduceMax", {hit_i, w.ints({-1})}, {{"keepdims", int64_t{0}}}, -1, 18)},
                       {{"to", int64_t{dtype_to_onnx(DType::boolean)}}});
  const int vc = g.add_constant(g.unique_name(n.name + "/values"), flat(values, {values.numel()}));
  const int dc = g.add_constant(g.unique_name(n.name + "/default"), flat(dflt, {}));
  w.op("Where", {any, w.op("Gather", {vc, first}, {{"axis", int64_t{0}}}), dc}, {}, out0(n));
  w.replace(index);
  return true;
}

void label_encoder_infer(InferContext& ctx) {
  const Node& n = ctx.node();
  DType t = n.has_attr("values_int64s") ? DType::i64 : n.has_attr("values_floats") ? DType::f32
          : n.has_attr("values_strings") ? DType::string : DType::undefined;
  if (const Tensor* v = n.attr_t("values_tensor")) t = v->dtype();
  const DType x = ctx.dtype(0);
  if (n.has_attr("classes_strings")) {
    if (x != DType::string && x != DType::i64) ctx.fail(std::string("X must be string or int64 (classes_strings), got ") + dtype_name(x));
    t = x == DType::string ? DType::i64 : DType::string;
  }
  if (t == DType::undefined) ctx.fail("needs values (values_int64s, values_floats, values_strings or values_tensor)");
  if (label_has_strings(n)) {
    const Tensor keys = label_any_table(n, "keys", x), values = label_any_table(n, "values", x), dflt = label_any_table(n, "default", x);
    if (keys.numel() == 0 || keys.numel() != values.numel())
      ctx.fail(std::to_string(keys.numel()) + " keys and " + std::to_string(values.numel()) + " values (they must pair up, at least one)");
    if (dflt.dtype() != values.dtype() || dflt.numel() != 1) ctx.fail("default must be one value of the values' dtype");
    if (ctx.dtype(0) != DType::undefined && ctx.dtype(0) != keys.dtype())
      ctx.fail(std::string("X is ") + dtype_name(ctx.dtype(0)) + ", the keys are " + dtype_name(keys.dtype()));
  }
  ctx.set_output(0, t, ctx.shape(0));
}

// ---- FeatureVectorizer -----------------------------------------------------------------------

bool feature_vectorizer_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  const std::vector<int64_t> dims = n.attr_ints("inputdimensions");
  if (static_cast<int>(dims.size()) != n.num_inputs())
    throw bad(n, std::to_string(dims.size()) + " inputdimensions for " + std::to_string(n.num_inputs()) + " inputs");
  for (int i = 0; i < n.num_inputs(); ++i)
    if (!n.has_input(i) || !known(g.values[n.inputs[i]]) || g.values[n.inputs[i]].dtype == DType::undefined) return false;
  RewriteNodes w{g, n.name, {}};
  std::vector<int> parts;
  int64_t rows = -1;
  for (int i = 0; i < n.num_inputs(); ++i) {
    const Value v = g.values[n.inputs[i]];
    if (!dtype_is_float(v.dtype) && !dtype_is_int(v.dtype)) throw bad(n, "input " + std::to_string(i) + " must be numeric");
    if (dims[i] < 0 || dims[i] > (int64_t{1} << 40))
      throw bad(n, "inputdimensions entry " + std::to_string(dims[i]) + " is negative or past 2^40");
    const int64_t N = v.shape.size() <= 1 ? 1 : v.shape[0], C = N ? shape_numel(v.shape) / N : 0;
    if (rows >= 0 && N != rows) throw bad(n, "inputs have different row counts (" + std::to_string(rows) + " and " + std::to_string(N) + ")");
    rows = N;
    int x = w.op("Reshape", {to_f32(w, n.inputs[i]), w.ints({N, C})});
    if (C > dims[i]) x = w.op("Slice", {x, w.ints({0}), w.ints({dims[i]}), w.ints({1})});
    if (C < dims[i]) x = w.op("Pad", {x, w.ints({0, 0, 0, dims[i] - C})});
    parts.push_back(x);
  }
  w.op("Concat", parts, {{"axis", int64_t{1}}}, out0(n));
  w.replace(index);
  return true;
}

void feature_vectorizer_infer(InferContext& ctx) {
  int64_t total = 0;
  for (int64_t d : ctx.node().attr_ints("inputdimensions")) {
    if (d < 0 || d > (int64_t{1} << 40) || total > (int64_t{1} << 40)) ctx.fail("inputdimensions entry " + std::to_string(d) + " is negative or past 2^40");
    total += d;
  }
  ctx.set_output(0, DType::f32, {ctx.shape(0).size() <= 1 ? 1 : ctx.shape(0)[0], total});
}

// ---- registration ----------------------------------------------------------------------------

void expanded_ref(const Node& n, const Ins&, Outs&) { ref_fail(n, "runs once its input is typed (it is expanded into standard ops then)"); }

void register_expanded(const std::string& name, int min_in, int max_in, InferFn infer, std::function<bool(Graph&, size_t)> expand,
                       int max_out = 1) {
  OpDef d = table_entry(kMl + name, min_in, max_in, std::move(infer), expanded_ref, max_out);
  d.expand = std::move(expand);
  register_op(std::move(d));
}

InferFn like_input(DType out) {
  return [out](InferContext& ctx) { ctx.set_output(0, out == DType::undefined ? ctx.dtype(0) : out, ctx.shape(0)); };
}

}  // namespace

void register_ml_ops() {
  register_expanded("Binarizer", 1, 1, like_input(DType::undefined), binarizer_expand);
  register_expanded("Scaler", 1, 1, like_input(DType::f32), scaler_expand);
  register_expanded("Normalizer", 1, 1, like_input(DType::f32), normalizer_expand);
  register_expanded("ArrayFeatureExtractor", 2, 2, feature_extractor_infer, feature_extractor_expand);
  register_expanded("LinearRegressor", 1, 1, linear_regressor_infer, linear_regressor_expand);
  register_expanded("LinearClassifier", 1, 1, linear_classifier_infer, linear_classifier_expand, 2);
  register_expanded("Imputer", 1, 1, like_input(DType::undefined), imputer_expand);
  register_expanded("OneHotEncoder", 1, 1, onehot_encoder_infer, onehot_encoder_expand);
  {
    OpDef d = table_entry(std::string(kMl) + "LabelEncoder", 1, 1, label_encoder_infer, label_encoder_strings_ref);
    d.expand = label_encoder_expand;
    d.strings = true;  // keys or values of strings: label_encoder_strings_ref on the host
    register_op(std::move(d));
  }
  register_expanded("FeatureVectorizer", 1, 1 << 20, feature_vectorizer_infer, feature_vectorizer_expand);
  register_tree_ensemble_ops();
  register_svm_ops();
}

}  // namespace fusor
