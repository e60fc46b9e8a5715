// Normalizations as the primitives the fuser understands (split from ir/decompose.cpp):
// LayerNormalization, RMSNormalization, BatchNormalization (training and inference modes),
// InstanceNormalization, GroupNormalization, LpNormalization. Formulas: the ONNX operator spec of
// each op; ref computes the same ops directly in double (ir/ops/nn.cpp, ir/ops/misc.cpp).
#include <cmath>
#include <optional>

#include "ir/decompose_rewriter.h"
#include "ir/op_table.h"
#include "ir/passes.h"
#include "ir/tensor.h"

namespace fusor::decomp {
namespace {

// Mean, deviation and biased variance over `axes`: mean = E[x], d = x - mean, var = E[d^2].
// The fp32 mean is rounded (within about an ulp of the exact one: compensated sums), and where
// the data sit far from zero against their spread that rounding dominates x - mean, which is
// exact there (Sterbenz): values 100 + 0.01 r normalized 3.8e-4 off the exact result, 14 times
// the fp32 tolerance, while ref's double statistics were right (red-team round 61). So the
// deviation is corrected by its own mean, the mean's rounding error, computed from the exact
// differences: d = (x - mean) - E[x - mean]. A constant row still gives d = 0 exactly; data
// near zero are unchanged to within their rounding.
struct Centered {
  int mean = -1, d = -1, var = -1;
};
Centered centered(Rewriter& rw, int x, const std::vector<int64_t>& axes) {
  Centered c;
  c.mean = rw.reduce("ReduceMean", x, axes);
  const int d0 = rw.op("Sub", {x, c.mean});
  c.d = rw.op("Sub", {d0, rw.reduce("ReduceMean", d0, axes)});
  c.var = rw.reduce("ReduceMean", rw.op("Mul", {c.d, c.d}), axes);
  return c;
}

}  // namespace

int largest_or_one(Rewriter& rw, int a, const std::vector<int64_t>& axes) {
  // A row of zeros or with an infinity is left unscaled (x / inf would turn the inf into NaN).
  const int m = rw.reduce("ReduceMax", a, axes);
  const int unscaled = rw.op("Or", {rw.op("Equal", {m, rw.scalar(0.0)}), rw.op("IsInf", {m}, {}, -1, 10)});
  return rw.op("Where", {unscaled, rw.scalar(1.0), m}, {}, -1, 16);
}

bool rewrite_normalization(Graph& g, const Node& n, Rewriter& rw) {
  const std::string& t = n.op_type;
  auto in = [&](int i) { return n.has_input(i) ? n.inputs[i] : -1; };
  int out = n.outputs.empty() ? -1 : n.outputs[0];
  auto rank = [&](int v) { return static_cast<int64_t>(g.values[v].shape.size()); };
  if (t == "LayerNormalization") {
    int x = in(0);
    auto axes = axes_from(normalize_axis(n.attr_i("axis", -1), rank(x), n.label()), rank(x));
    // LayerNormalization keeps its ONNX function body (the stash-type mean, then x - mean), as
    // onnxruntime computes it: centered's extra row mean cost GPT-2 2L 4-7% on Vulkan's H100 (fp32
    // 264.9 -> 277.2 us, fp16 151.9 -> 162.5; docs/benchmarks.md, fifty-first session) and would
    // take the MLP block's fp16 Vulkan / CUDA ratio past issue 16's 1.5x. Data far from zero
    // against their spread stay the documented exception (README "Numerics").
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
  // Training mode (the batch's own statistics; an NFNet's weight standardisation runs it over its
  // weights): mean and biased variance over every axis but 1, as ir/ops/nn.cpp batchnorm_ref,
  // then (x - mean) * (scale / sqrt(var + eps)) + B; running_mean / running_var (and opset < 14's
  // saved mean / var) from them where the graph reads them. Primitives, so it fuses and runs on
  // the GPUs instead of the host (red-team round 59: 24 host nodes per NFNet call on vulkan).
  const bool bn_training = t == "BatchNormalization" &&
                           (n.attr_i("training_mode", 0) != 0 || (n.opset < 14 && n.outputs.size() > 1 && n.outputs[1] >= 0));
  if (bn_training && !n.outputs.empty() && n.outputs[0] >= 0 && rank(in(0)) >= 2) {
    const Shape xs = g.values[in(0)].shape;  // a copy: new values move g.values
    std::vector<int64_t> axes{0}, cs{xs[1]};
    for (size_t i = 2; i < xs.size(); ++i) axes.push_back(static_cast<int64_t>(i)), cs.push_back(1);
    const auto per_channel = [&](int v) { return rw.op("Reshape", {v, rw.ints(cs)}, {}, -1, 14); };
    const auto [mean, d, var] = centered(rw, in(0), axes);
    const int k = rw.op("Div", {per_channel(in(1)), rw.op("Sqrt", {rw.op("Add", {var, rw.scalar(n.attr_f("epsilon", 1e-5))})})});
    rw.op("Add", {rw.op("Mul", {d, k}), per_channel(in(2))}, {}, out);
    const double momentum = n.attr_f("momentum", 0.9);
    const auto flat = [&](int v) { return rw.op("Reshape", {v, rw.ints({xs[1]})}, {}, -1, 14); };
    const auto output = [&](size_t i) { return i < n.outputs.size() ? n.outputs[i] : -1; };
    if (output(1) >= 0)
      rw.op("Add", {rw.op("Mul", {in(3), rw.scalar(momentum)}), rw.op("Mul", {flat(mean), rw.scalar(1 - momentum)})}, {}, output(1));
    if (output(2) >= 0)
      rw.op("Add", {rw.op("Mul", {in(4), rw.scalar(momentum)}), rw.op("Mul", {flat(var), rw.scalar(1 - momentum)})}, {}, output(2));
    if (output(3) >= 0) rw.op("Reshape", {mean, rw.ints({xs[1]})}, {}, output(3), 14);
    if (output(4) >= 0) rw.op("Reshape", {var, rw.ints({xs[1]})}, {}, output(4), 14);
    return true;
  }
  if (t == "BatchNormalization" && n.outputs.size() == 1 && n.attr_i("training_mode", 0) == 0) {
    const Value &sc = rw.value(in(1)), &b = rw.value(in(2)), &mu = rw.value(in(3)), &var = rw.value(in(4));
    // Inference form with constant statistics: y = (x - mean) * k + B, k = scale / sqrt(var + eps)
    // folded in double, unless k is inf or NaN (var + eps = 0). Not x * k + (B - mean * k): where
    // x sits near a mean far from zero against sqrt(var) the two big terms cancel (mean 1000, var
    // 1e-4: 21,286 ulp off ref, red-team round 62), while x - mean is exact there.
    std::optional<Tensor> folded;
    if (sc.constant && b.constant && mu.constant && var.constant) {
      Shape s{sc.constant->numel()};
      for (int64_t i = 2; i < rank(in(0)); ++i) s.push_back(1);
      Tensor mul(rw.float_dtype, s);
      const double eps = n.attr_f("epsilon", 1e-5);
      bool finite = true;
      for (int64_t i = 0; i < s[0]; ++i) {
        mul.set(i, sc.constant->get(i) / std::sqrt(var.constant->get(i) + eps));
        finite = finite && std::isfinite(mul.get(i));
      }
      if (finite) folded.emplace(std::move(mul));
    }
    if (folded) {
      // Copies first: new constants move g.values, which sc / b / mu / var point into.
      Tensor mean_c(rw.float_dtype, folded->shape()), bias_c(rw.float_dtype, folded->shape());
      for (int64_t i = 0; i < mean_c.numel(); ++i) mean_c.set(i, mu.constant->get(i)), bias_c.set(i, b.constant->get(i));
      const int d = rw.op("Sub", {in(0), rw.constant("bn_mean", std::move(mean_c))});
      rw.op("Add", {rw.op("Mul", {d, rw.constant("bn_scale", std::move(*folded))}), rw.constant("bn_bias", std::move(bias_c))}, {}, out);
      return true;
    }
    // Statistics fed at run time (or not foldable): the formula per element, each [C] reshaped to
    // [C, 1, ..., 1] (ir/ops/nn.cpp batchnorm_ref: (x - mean) * scale / sqrt(var + eps) + B).
    const Shape xs = g.values[in(0)].shape;  // a copy: new values move g.values
    if (xs.size() < 2) return false;
    std::vector<int64_t> cs{xs[1]};
    for (size_t i = 2; i < xs.size(); ++i) cs.push_back(1);
    auto per_channel = [&](int v) { return rw.op("Reshape", {v, rw.ints(cs)}, {}, -1, 14); };
    const int k = rw.op("Div", {in(1), rw.op("Sqrt", {rw.op("Add", {in(4), rw.scalar(n.attr_f("epsilon", 1e-5))})})});
    rw.op("Add", {rw.op("Mul", {rw.op("Sub", {in(0), per_channel(in(3))}), per_channel(k)}), per_channel(in(2))}, {}, out);
    return true;
  }
  if (t == "InstanceNormalization") {
    // ONNX InstanceNormalization: per (n, c), normalize over the spatial axes, then scale and
    // bias per channel (reshaped to [C, 1, ..., 1]).
    int x = in(0);
    auto axes = axes_from(2, rank(x));
    const auto [mean, d, var] = centered(rw, x, axes);
    int inv = rw.op("Reciprocal", {rw.op("Sqrt", {rw.op("Add", {var, rw.scalar(n.attr_f("epsilon", 1e-5))})})});
    std::vector<int64_t> cs{g.values[x].shape[1]};
    for (int64_t i = 2; i < rank(x); ++i) cs.push_back(1);
    int sc = rw.op("Reshape", {in(1), rw.ints(cs)}, {}, -1, 14), bi = rw.op("Reshape", {in(2), rw.ints(cs)}, {}, -1, 14);
    rw.op("Add", {rw.op("Mul", {rw.op("Mul", {d, inv}), sc}), bi}, {}, out);
    return true;
  }
  if (t == "GroupNormalization" && n.outputs.size() == 1) {
    // GroupNormalization-18/21 (ir/ops/misc.cpp): each (batch, group) of C / num_groups
    // channels normalized over its channels and spatial dims, as InstanceNormalization is over
    // [N, G, C / G * spatial]; scale / bias per channel (21) or per group (18, expanded).
    const Shape xs = g.values[in(0)].shape;  // a copy: the rewriter's new values move g.values
    const int64_t G = n.attr_i("num_groups", 0);
    if (xs.size() < 2 || G <= 0 || xs[1] % G != 0 || shape_numel(xs) == 0) return false;
    const int64_t C = xs[1];
    int x = rw.op("Reshape", {in(0), rw.ints({xs[0], G, -1})}, {}, -1, 14);
    const auto [mean, d, var] = centered(rw, x, {2});
    int inv = rw.op("Reciprocal", {rw.op("Sqrt", {rw.op("Add", {var, rw.scalar(n.attr_f("epsilon", 1e-5))})})});
    int y = rw.op("Reshape", {rw.op("Mul", {d, inv}), rw.ints(std::vector<int64_t>(xs.begin(), xs.end()))}, {}, -1, 14);
    std::vector<int64_t> cs{C};
    for (int64_t i = 2; i < rank(in(0)); ++i) cs.push_back(1);
    auto per_channel = [&](int v) {
      if (n.opset < 21) v = rw.op("Expand", {rw.op("Reshape", {v, rw.ints({G, 1})}, {}, -1, 14), rw.ints({G, C / G})});
      return rw.op("Reshape", {v, rw.ints(cs)}, {}, -1, 14);
    };
    rw.op("Add", {rw.op("Mul", {y, per_channel(in(1))}), per_channel(in(2))}, {}, out);
    return true;
  }
  if (t == "LpNormalization" && n.outputs.size() == 1 && (n.attr_i("p", 2) == 1 || n.attr_i("p", 2) == 2)) {
    // x / ||x||_p along axis, 0 where the norm is 0 (ir/ops/misc.cpp lpnorm_ref): one row kernel.
    // The row is scaled by its largest |x| first, as ref's double sum needs no scaling: fp32
    // squares of 3e20 overflow and of 3e-23 underflow (red-team round 28).
    const int x = in(0);
    const int64_t axis = normalize_axis(n.attr_i("axis", -1), rank(x), n.label());
    const int zero = rw.scalar(0.0);
    const int xs = rw.op("Div", {x, largest_or_one(rw, rw.op("Abs", {x}), {axis})});
    const int norm = rw.reduce(n.attr_i("p", 2) == 1 ? "ReduceL1" : "ReduceL2", xs, {axis});
    rw.op("Where", {rw.op("Equal", {norm, zero}), zero, rw.op("Div", {xs, norm})}, {}, out, 16);
    return true;
  }
  return false;
}

}  // namespace fusor::decomp
