// Shared by the ai.onnx.ml host ops (ir/ops/tree_ensemble.cpp, ir/ops/svm.cpp): the classifiers'
// post_transform over a row of scores, in float64 (each output is rounded to float32 once).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace fusor {

// The spec's codes 0..4 (TreeEnsemble-5 stores them as integers).
enum class MlPost : uint8_t { none, softmax, logistic, softmax_zero, probit };

// 1 / (1 + e^-y), exact for large |y| (no 1 - t cancellation).
inline double ml_logistic(double y) { return 1.0 / (1.0 + std::exp(-y)); }

// LOGISTIC / SOFTMAX / SOFTMAX_ZERO over v[0..len) in place; NONE and PROBIT (refused where the
// ops read it) leave v. SOFTMAX_ZERO, as onnxruntime's ComputeSoftmaxZero: a score within
// +-1e-7f counts as zero, is scaled by e^-max and left out of the sum; all-zero scores give
// 0 / 0, NaN.
inline void ml_transform(MlPost post, double* v, int64_t len) {
  if (post == MlPost::logistic) {
    for (int64_t i = 0; i < len; ++i) v[i] = ml_logistic(v[i]);
  } else if (post == MlPost::softmax || post == MlPost::softmax_zero) {
    double m = -std::numeric_limits<double>::infinity(), s = 0;
    for (int64_t i = 0; i < len; ++i) m = std::max(m, v[i]);
    for (int64_t i = 0; i < len; ++i) {
      if (post == MlPost::softmax_zero && std::fabs(v[i]) <= static_cast<double>(1e-7f)) v[i] *= std::exp(-m);
      else s += (v[i] = std::exp(v[i] - m));
    }
    for (int64_t i = 0; i < len; ++i) v[i] /= s;
  }
}

}  // namespace fusor
