// Support vector machines of the ONNX-ML domain: SVMRegressor and SVMClassifier (ai.onnx.ml 1),
// the forms skl2onnx writes for scikit-learn's SVR / NuSVR / OneClassSVM and SVC / NuSVC
// (libsvm's models). Evaluated on the host (the reference; GPU backends run the node as a graph
// break).
//
//   X [N, F] (or the vector [F], one row; float, double, int32 or int64, read as float32 as
//   onnxruntime does). kernel_params = [gamma, coef0, degree] (zeros when absent), and
//   K(x, v) = LINEAR x.v | POLY (gamma x.v + coef0)^degree | RBF exp(-gamma |x - v|^2) |
//   SIGMOID tanh(gamma x.v + coef0), each rounded to float32.
//   Without support vectors (n_supports / vectors_per_class 0: liblinear's form) the kernel is
//   LINEAR against the coefficient rows.
//
//   SVMRegressor -> Y float32 [N, 1]: sum_j coefficients[j] K(x, sv_j) + rho[0] (or x.coefficients
//   + rho[0] without support vectors); one_class: 1 where that is > 0, else -1.
//   SVMClassifier -> (Y int64 [N] labels, Z float32 [N, S] scores), libsvm's one-against-one:
//   for each pair of classes i < j, s_ij = sum over class i's vectors of coefficients[j - 1][v]
//   K(x, v) + sum over class j's of coefficients[i][v] K(x, v) + rho[pair], a vote for i where
//   s_ij > 0, else for j; the label is the class with the most votes (the first on a tie).
//   Z: the pair scores (S = pairs; 2 classes: [-s, s], [1 - t, t] with t = logistic(s) for
//   LOGISTIC, [1 - s, s] for SOFTMAX / SOFTMAX_ZERO),
//   or with prob_a / prob_b Platt's pairwise probabilities r_ij = 1 - logistic(s_ij a + b),
//   clipped to [1e-7, 1 - 1e-7], coupled into class probabilities (S = classes) by Wu, Lin &
//   Weng's method (JMLR 5, 2004, method 2; libsvm's multiclass_probability, the iteration and
//   its stopping rule as onnxruntime runs them in float32). Without support vectors: the
//   scores x.coefficients[c] + rho[0] per class (S = classes), the label their argmax, with
//   onnxruntime's binary rule for 2 classes. post_transform LOGISTIC / SOFTMAX / SOFTMAX_ZERO
//   applies to Z's scores as onnxruntime's batched_update_scores_inplace does.
//
// Sources: the ONNX-ML operator spec and onnx/reference/ops/aionnxml (op_svm_*.py); onnxruntime
// 1.32 (svmclassifier.cc, svmregressor.cc, ml_common.h) for the binary forms and the score
// layout, which the spec leaves open. Sums are kept in float64 and rounded once (the pair scores:
// float32 products, as onnxruntime forms them).
// Errors (Error "shape" / Unsupported, one line naming the node): attribute lengths that do not
// match the counts, X's width other than the support vectors', an unknown kernel_type;
// classlabels_strings and PROBIT are refused.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/ops/ml_common.h"
#include "ir/ops/op_helpers.h"

namespace fusor {
namespace {

using namespace op_helpers;

enum class Kernel { linear, poly, rbf, sigmoid };
using Post = MlPost;

Error bad(const Node& n, const std::string& why) { return Error("shape", n.label() + ": " + why); }

struct Svm {
  Kernel kernel = Kernel::linear;
  double gamma = 0, coef0 = 0, degree = 0;
  int64_t vectors = 0, features = -1;  // features: -1 until X (liblinear's form) says
  std::vector<double> sv, coef, rho;
  // SVMClassifier
  std::vector<int64_t> labels, per_class, start;
  std::vector<double> prob_a, prob_b;
  Post post = Post::none;
  bool all_positive = true;
  bool one_class = false;  // SVMRegressor
};

Post post_of(const Node& n) {
  const std::string p = n.attr_s("post_transform", "NONE");
  if (p == "NONE") return Post::none;
  if (p == "LOGISTIC") return Post::logistic;
  if (p == "SOFTMAX") return Post::softmax;
  if (p == "SOFTMAX_ZERO") return Post::softmax_zero;
  if (p == "PROBIT") throw Unsupported("onnx", n.label() + ": post_transform PROBIT is not supported");
  throw bad(n, "post_transform " + printable(p) + " is not one of NONE, LOGISTIC, SOFTMAX, SOFTMAX_ZERO, PROBIT");
}

// The attributes of either op, checked against each other; width is X's last dim (-1: unknown).
Svm svm_of(const Node& n, bool classifier, int64_t width) {
  Svm s;
  const std::string k = n.attr_s("kernel_type", "LINEAR");
  if (k != "LINEAR" && k != "POLY" && k != "RBF" && k != "SIGMOID")
    throw bad(n, "kernel_type " + printable(k) + " is not one of LINEAR, POLY, RBF, SIGMOID");
  s.kernel = k == "LINEAR" ? Kernel::linear : k == "POLY" ? Kernel::poly : k == "RBF" ? Kernel::rbf : Kernel::sigmoid;
  const std::vector<double> kp = n.attr_floats("kernel_params");
  if (!kp.empty() && kp.size() < 3) throw bad(n, std::to_string(kp.size()) + " kernel_params (gamma, coef0, degree: 3)");
  if (kp.size() >= 3) s.gamma = kp[0], s.coef0 = kp[1], s.degree = kp[2];
  s.sv = n.attr_floats("support_vectors");
  s.coef = n.attr_floats("coefficients");
  s.rho = n.attr_floats("rho");
  if (s.coef.empty()) throw bad(n, "coefficients are empty");
  if (s.rho.empty()) throw bad(n, "rho is empty");
  for (double c : s.coef) s.all_positive = s.all_positive && c >= 0;
  if (classifier) {
    if (n.has_attr("classlabels_strings")) throw Unsupported("onnx", n.label() + ": classlabels_strings (string labels) are not supported");
    s.labels = n.attr_ints("classlabels_ints");
    if (s.labels.empty()) throw bad(n, "classlabels_ints is empty");
    if (s.labels.size() >= 65536)  // onnxruntime's limit; the pairwise tables grow as its square
      throw bad(n, std::to_string(s.labels.size()) + " classes (at most 65535)");
    s.per_class = n.attr_ints("vectors_per_class");
    for (int64_t c : s.per_class) {
      if (c < 0 || c > (int64_t{1} << 40)) throw bad(n, "vectors_per_class holds " + std::to_string(c));
      s.start.push_back(s.vectors), s.vectors += c;
    }
    s.prob_a = n.attr_floats("prob_a"), s.prob_b = n.attr_floats("prob_b");
    if (s.prob_a.size() != s.prob_b.size())
      throw bad(n, std::to_string(s.prob_a.size()) + " prob_a for " + std::to_string(s.prob_b.size()) + " prob_b (one pair per class pair)");
    s.post = post_of(n);
  } else {
    s.vectors = n.attr_i("n_supports", 0);
    if (s.vectors < 0) throw bad(n, "n_supports is " + std::to_string(s.vectors));
    s.one_class = n.attr_i("one_class", 0) != 0;
    if (post_of(n) != Post::none)  // onnxruntime computes none; the spec's reference refuses them
      throw Unsupported("onnx", n.label() + ": post_transform " + n.attr_s("post_transform", "") + " of SVMRegressor is not supported (NONE)");
  }
  const int64_t classes = static_cast<int64_t>(s.labels.size()), pairs = classes * (classes - 1) / 2;
  if (s.vectors > 0) {
    const int64_t svs = static_cast<int64_t>(s.sv.size());
    if (svs == 0 || svs % s.vectors)
      throw bad(n, std::to_string(svs) + " support_vectors values do not split into " + std::to_string(s.vectors) + " vectors");
    s.features = svs / s.vectors;
    if (classifier) {
      if (static_cast<int64_t>(s.per_class.size()) != classes)
        throw bad(n, std::to_string(s.per_class.size()) + " vectors_per_class for " + std::to_string(classes) + " classlabels_ints");
      if (classes < 2) throw bad(n, "one class with support vectors (libsvm's classifiers compare pairs of classes)");
      if (static_cast<int64_t>(s.coef.size()) != (classes - 1) * s.vectors)
        throw bad(n, std::to_string(s.coef.size()) + " coefficients, expected (classes - 1) * vectors = " + std::to_string((classes - 1) * s.vectors));
      if (static_cast<int64_t>(s.rho.size()) < pairs) throw bad(n, std::to_string(s.rho.size()) + " rho for " + std::to_string(pairs) + " class pairs");
      if (!s.prob_a.empty() && static_cast<int64_t>(s.prob_a.size()) < pairs)
        throw bad(n, std::to_string(s.prob_a.size()) + " prob_a for " + std::to_string(pairs) + " class pairs");
    } else if (static_cast<int64_t>(s.coef.size()) != s.vectors) {
      throw bad(n, std::to_string(s.coef.size()) + " coefficients for " + std::to_string(s.vectors) + " support vectors");
    }
  } else {
    s.kernel = Kernel::linear;  // liblinear's form: the coefficient rows are the vectors
    const int64_t rows = classifier ? classes : 1, size = static_cast<int64_t>(s.coef.size());
    if (size % rows) throw bad(n, std::to_string(size) + " coefficients do not split into " + std::to_string(rows) + " class rows");
    s.features = size / rows;
  }
  if (width >= 0 && width != s.features)
    throw bad(n, "X has " + std::to_string(width) + " features, the " + (s.vectors > 0 ? "support vectors " : "coefficients ") +
                     std::to_string(s.features));
  return s;
}

void svm_infer(InferContext& ctx, bool classifier) {
  const Node& n = ctx.node();
  const DType t = ctx.dtype(0);
  if (t != DType::f32 && t != DType::f64 && t != DType::i32 && t != DType::i64)
    ctx.fail(std::string("X must be float, double, int32 or int64, got ") + dtype_name(t));
  const Shape& x = ctx.shape(0);
  if (x.empty() || x.size() > 2) ctx.fail("X must be [N, F] or [F], got " + shape_str(x));
  const Svm s = svm_of(n, classifier, x.back());
  const int64_t rows = x.size() == 2 ? x[0] : 1;
  if (!classifier) {
    ctx.set_output(0, DType::f32, {rows, 1});
    return;
  }
  const int64_t classes = static_cast<int64_t>(s.labels.size()), pairs = classes * (classes - 1) / 2;
  const int64_t scores = s.vectors > 0 && s.prob_a.empty() ? (classes > 2 ? pairs : 2) : classes;
  ctx.set_output(0, DType::i64, {rows});
  if (ctx.num_outputs() > 1 && n.outputs[1] >= 0) ctx.set_output(1, DType::f32, {rows, scores});
}

// K(x, v) for every vector v (the rows of `vecs`, each `f` wide), rounded to float32.
void kernels(const Svm& s, const float* x, const std::vector<double>& vecs, int64_t count, std::vector<double>& k) {
  const int64_t f = s.features;
  for (int64_t j = 0; j < count; ++j) {
    const double* v = vecs.data() + j * f;
    double d = 0;
    if (s.kernel == Kernel::rbf) {
      for (int64_t i = 0; i < f; ++i) d += (x[i] - v[i]) * (x[i] - v[i]);
      d = std::exp(-s.gamma * d);
    } else {
      for (int64_t i = 0; i < f; ++i) d += x[i] * v[i];
      if (s.kernel == Kernel::poly) d = std::pow(s.gamma * d + s.coef0, s.degree);
      if (s.kernel == Kernel::sigmoid) d = std::tanh(s.gamma * d + s.coef0);
    }
    k[static_cast<size_t>(j)] = static_cast<float>(d);
  }
}

// onnxruntime's ComputeLogistic in float32 (Platt's probabilities, mirrored as it runs them).
float logistic_f(float v) {
  const float t = 1 / (1 + std::exp(-std::fabs(v)));
  return v < 0 ? 1 - t : t;
}

// Class probabilities p[k] from the pairwise r (k x k, r[i][j] the probability of i against
// j): Wu, Lin & Weng 2004, method 2, as libsvm and onnxruntime iterate it, in float32 (its
// stopping rule makes the result depend on the arithmetic: the same steps give the same p).
void coupled_probabilities(int64_t k, const std::vector<float>& r, float* p) {
  std::vector<float> Q(static_cast<size_t>(k * k), 0.0f), Qp(static_cast<size_t>(k), 0.0f);
  const float eps = 0.005f / static_cast<float>(k);
  for (int64_t i = 0; i < k; ++i) {
    p[i] = 1.0f / static_cast<float>(k);
    for (int64_t j = 0; j < i; ++j) {
      Q[i * k + i] += r[j * k + i] * r[j * k + i];
      Q[i * k + j] = Q[j * k + i];
    }
    for (int64_t j = i + 1; j < k; ++j) {
      Q[i * k + i] += r[j * k + i] * r[j * k + i];
      Q[i * k + j] = -r[j * k + i] * r[i * k + j];
    }
  }
  for (int iter = 0; iter < 100; ++iter) {
    float pQp = 0;
    for (int64_t i = 0; i < k; ++i) {
      Qp[i] = 0;
      for (int64_t j = 0; j < k; ++j) Qp[i] += Q[i * k + j] * p[j];
      pQp += p[i] * Qp[i];
    }
    float max_error = 0;
    for (int64_t i = 0; i < k; ++i) max_error = std::max(max_error, std::fabs(Qp[i] - pQp));
    if (max_error < eps) break;
    for (int64_t i = 0; i < k; ++i) {
      const float diff = (-Qp[i] + pQp) / Q[i * k + i];
      p[i] += diff;
      pQp = (pQp + diff * (diff * Q[i * k + i] + 2 * Qp[i])) / (1 + diff) / (1 + diff);
      for (int64_t j = 0; j < k; ++j) {
        Qp[j] = (Qp[j] + diff * Q[i * k + j]) / (1 + diff);
        p[j] /= (1 + diff);
      }
    }
  }
}

std::vector<float> rows_as_float(const Tensor& x) {
  std::vector<float> v(static_cast<size_t>(x.numel()));
  if (x.dtype() == DType::f32) std::copy(x.data<float>(), x.data<float>() + x.numel(), v.begin());
  else
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(x.get(static_cast<int64_t>(i)));
  return v;
}

void regressor_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor& x = *in[0];
  const Svm s = svm_of(n, false, x.shape().back());
  const int64_t rows = x.rank() == 2 ? x.shape()[0] : 1, f = s.features;
  const std::vector<float> xs = rows_as_float(x);
  std::vector<double> k(static_cast<size_t>(s.vectors));
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = xs.data() + r * f;
    double y = s.rho[0];
    if (s.vectors > 0) {
      kernels(s, xr, s.sv, s.vectors, k);
      for (int64_t j = 0; j < s.vectors; ++j) y += s.coef[j] * k[j];
    } else {
      for (int64_t i = 0; i < f; ++i) y += xr[i] * s.coef[i];
    }
    const float yf = static_cast<float>(y);
    out[0].set(r, s.one_class ? (yf > 0 ? 1.0 : -1.0) : yf);
  }
}

void classifier_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor& x = *in[0];
  const Svm s = svm_of(n, true, x.shape().back());
  const int64_t rows = x.rank() == 2 ? x.shape()[0] : 1, f = s.features;
  const int64_t classes = static_cast<int64_t>(s.labels.size()), pairs = classes * (classes - 1) / 2;
  const bool svc = s.vectors > 0, proba = !s.prob_a.empty();
  const int64_t width = svc && !proba ? (classes > 2 ? pairs : 2) : classes;  // Z's columns
  const int64_t scored = svc && !proba ? pairs : classes;                      // scores before the binary forms
  const std::vector<float> xs = rows_as_float(x);
  // z holds the pair scores (then, with probabilities, the class scores over their start).
  std::vector<double> k(static_cast<size_t>(s.vectors)), z(static_cast<size_t>(std::max({width, scored, svc ? pairs : 0})));
  std::vector<int64_t> votes(static_cast<size_t>(svc ? classes : 0));
  const bool coupled = svc && proba;  // liblinear's form has no pairs to couple
  std::vector<float> r(static_cast<size_t>(coupled ? classes * classes : 0)), pf(static_cast<size_t>(coupled ? classes : 0));
  for (int64_t row = 0; row < rows; ++row) {
    const float* xr = xs.data() + row * f;
    size_t best = 0;
    double max_weight = 0;
    if (svc) {
      kernels(s, xr, s.sv, s.vectors, k);
      std::fill(votes.begin(), votes.end(), 0);
      int64_t pair = 0;
      for (int64_t i = 0; i < classes; ++i)
        for (int64_t j = i + 1; j < classes; ++j, ++pair) {
          double sum = 0;
          // float32 products summed in float64, as onnxruntime (a score near 0 decides a vote)
          for (int64_t v = s.start[i]; v < s.start[i] + s.per_class[i]; ++v)
            sum += static_cast<float>(s.coef[(j - 1) * s.vectors + v]) * static_cast<float>(k[v]);
          for (int64_t v = s.start[j]; v < s.start[j] + s.per_class[j]; ++v)
            sum += static_cast<float>(s.coef[i * s.vectors + v]) * static_cast<float>(k[v]);
          sum += s.rho[pair];
          z[pair] = static_cast<float>(sum);
          ++votes[sum > 0 ? i : j];
        }
      best = static_cast<size_t>(std::max_element(votes.begin(), votes.end()) - votes.begin());
      if (proba) {
        int64_t p = 0;
        for (int64_t i = 0; i < classes; ++i)
          for (int64_t j = i + 1; j < classes; ++j, ++p) {
            const float t = 1 - logistic_f(static_cast<float>(z[p]) * static_cast<float>(s.prob_a[p]) + static_cast<float>(s.prob_b[p]));
            const float c = std::min(std::max(t, 1.0e-7f), 1 - 1.0e-7f);
            r[i * classes + j] = c, r[j * classes + i] = 1 - c;
          }
        coupled_probabilities(classes, r, pf.data());
        for (int64_t c = 0; c < classes; ++c) z[c] = pf[c];
      }
    } else {
      for (int64_t c = 0; c < classes; ++c) {
        double d = s.rho[0];
        for (int64_t i = 0; i < f; ++i) d += xr[i] * s.coef[c * f + i];
        z[c] = static_cast<float>(d);
        if (z[c] > z[best]) best = static_cast<size_t>(c);
      }
      max_weight = z[best];
    }
    // The label: onnxruntime's binary rule for one pair (max_weight is 0 with support vectors).
    size_t label = best;
    if (pairs == 1 && !proba && ((s.all_positive && max_weight >= 0.5) || (max_weight > 0 && !s.all_positive))) label = 1;
    out[0].set_int(row, s.labels[label]);
    if (!has_out(out, 1)) continue;
    if (scored > 1) {
      ml_transform(s.post, z.data(), scored);
    } else if (scored == 1 && svc) {
      // One pair score s, as onnxruntime 1.32 writes it: [-s, s] (NONE), [1 - t, t] with
      // t = logistic(s) (LOGISTIC), else [1 - s, s] (the softmaxes leave s as it is).
      const double sc = s.post == Post::logistic ? static_cast<float>(ml_logistic(z[0])) : z[0];
      z[0] = s.post == Post::none ? -sc : 1 - sc, z[1] = sc;
    }
    for (int64_t c = 0; c < width; ++c) out[1].set(row * width + c, static_cast<float>(z[c]));
  }
}

}  // namespace

void register_svm_ops() {
  const std::string ml = "ai.onnx.ml.";
  register_op(table_entry(
      ml + "SVMRegressor", 1, 1, [](InferContext& c) { svm_infer(c, false); }, regressor_ref));
  register_op(table_entry(
      ml + "SVMClassifier", 1, 1, [](InferContext& c) { svm_infer(c, true); }, classifier_ref, 2));
}

}  // namespace fusor
