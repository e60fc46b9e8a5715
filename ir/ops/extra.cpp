// Shape rules and CPU references for NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss and
// Resize. Semantics follow the ONNX operator spec (and the ONNX reference implementation,
// onnx/reference/ops) across opsets. The fuser turns each of them into one opaque kernel; the
// GPU emitter runs Resize from the same taps (resize_table), the losses are unsupported there.
//
// The references are plain loops accumulating in double.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ir/op_table.h"
#include "ir/ops/op_helpers.h"

namespace fusor {
namespace {

using namespace op_helpers;



void require_float(InferContext& ctx, int i) {
  if (!dtype_is_float(ctx.dtype(i)))
    ctx.fail("input " + std::to_string(i) + " must be a float tensor, got " + dtype_name(ctx.dtype(i)));
}

// ---------------------------------------------------------------- NLL / SoftmaxCrossEntropy

// Both losses: input (N, C, d1..dk) (scores or log-probabilities), target (N, d1..dk) integer,
// optional weight (C). Output: target's shape for reduction 'none', a scalar otherwise.
void loss_infer(InferContext& ctx, bool sce) {
  const Node& n = ctx.node();
  require_float(ctx, 0);
  const Shape& x = ctx.shape(0);
  const Shape& t = ctx.shape(1);
  if (x.size() < 2) ctx.fail("input must have rank >= 2 (N, C, ...), got " + shape_str(x));
  if (!dtype_is_int(ctx.dtype(1))) ctx.fail(std::string("target must be an integer tensor, got ") + dtype_name(ctx.dtype(1)));
  Shape want{x[0]};
  want.insert(want.end(), x.begin() + 2, x.end());
  if (t != want) ctx.fail("target shape " + shape_str(t) + " does not match input " + shape_str(x) + " (expected " + shape_str(want) + ")");
  if (ctx.has_input(2)) {
    const Shape& w = ctx.shape(2);
    if (w.size() != 1 || w[0] != x[1]) ctx.fail("weight must have shape [" + std::to_string(x[1]) + "], got " + shape_str(w));
    if (ctx.dtype(2) != ctx.dtype(0)) ctx.fail("weight dtype differs from input dtype");
  }
  std::string red = n.attr_s("reduction", "mean");
  if (red != "none" && red != "sum" && red != "mean") ctx.fail("unknown reduction '" + red + "'");
  ctx.set_output(0, ctx.dtype(0), red == "none" ? t : Shape{});
  if (sce && ctx.num_outputs() > 1) ctx.set_output(1, ctx.dtype(0), x);
}

// loss over log-probabilities lp laid out (N, C, D) (ONNX reference: gathered -lp * weight,
// ignored targets contribute 0 and weight 0; 'mean' divides by the summed weights when a weight
// or ignore_index is present, by the element count otherwise).
void nll_from_logprob(const Node& n, const std::vector<double>& lp, const Shape& xshape, const Tensor& target,
                      const Tensor* weight, Tensor& out) {
  const int64_t N = xshape[0], C = xshape[1];
  int64_t D = 1;
  for (size_t i = 2; i < xshape.size(); ++i) D *= xshape[i];
  const bool has_ii = n.has_attr("ignore_index");
  const int64_t ii = n.attr_i("ignore_index", 0);
  std::vector<double> w;
  if (weight) w = load_doubles(*weight);
  std::string red = n.attr_s("reduction", "mean");
  std::vector<double> loss(static_cast<size_t>(N * D));
  double sum = 0, wsum = 0;
  for (int64_t i = 0; i < N; ++i) {
    for (int64_t d = 0; d < D; ++d) {
      int64_t t = target.get_int(i * D + d);
      double l = 0, wt = 0;
      if (!(has_ii && t == ii)) {
        if (t < 0 || t >= C)
          ref_fail(n, "target " + std::to_string(t) + " is outside [0, " + std::to_string(C) + ")");
        wt = weight ? w[t] : 1.0;
        l = -lp[(i * C + t) * D + d] * wt;
      }
      loss[i * D + d] = l;
      sum += l;
      wsum += wt;
    }
  }
  if (red == "none") {
    store_doubles(out, loss);
  } else if (red == "sum") {
    out.set(0, sum);
  } else {
    double denom = (weight || has_ii) ? wsum : static_cast<double>(N * D);
    out.set(0, sum / denom);
  }
}

void nll_infer(InferContext& ctx) { loss_infer(ctx, false); }
void sce_infer(InferContext& ctx) { loss_infer(ctx, true); }

void nll_ref(const Node& n, const Ins& in, Outs& out) {
  nll_from_logprob(n, load_doubles(*in[0]), in[0]->shape(), *in[1], opt_in(in, 2), out[0]);
}

void sce_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor& X = *in[0];
  const Shape& xs = X.shape();
  const int64_t N = xs[0], C = xs[1];
  int64_t D = 1;
  for (size_t i = 2; i < xs.size(); ++i) D *= xs[i];
  std::vector<double> x = load_doubles(X), lp(x.size());
  for (int64_t i = 0; i < N; ++i) {
    for (int64_t d = 0; d < D; ++d) {
      const int64_t base = i * C * D + d;
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < C; ++c) m = std::max(m, x[base + c * D]);
      double s = 0;
      for (int64_t c = 0; c < C; ++c) s += std::exp(x[base + c * D] - m);
      const double ls = std::log(s);
      for (int64_t c = 0; c < C; ++c) lp[base + c * D] = x[base + c * D] - m - ls;
    }
  }
  nll_from_logprob(n, lp, xs, *in[1], opt_in(in, 2), out[0]);
  if (has_out(out, 1)) store_doubles(out[1], lp);
}

// ---------------------------------------------------------------- Resize

struct ResizeParams {
  std::string mode, ctm, nearest_mode, policy;
  double cubic_a = -0.75, extrapolation = 0;
  bool exclude_outside = false, antialias = false;
  Shape out;                    // output shape
  std::vector<double> scale;    // per dim (the scale the coordinate transform divides by)
  std::vector<double> out_width;  // per dim: scale * input size as the reference computes it
  // float32 scales: the coordinate transforms run in float32, as onnxruntime and the ONNX
  // reference (NumPy float32 scalars) compute them; in double a source coordinate that is
  // exactly integral there could land a hair above it (half_pixel_symmetric 0.7x: 2.0000000365,
  // so nearest ceil took the next pixel).
  bool f32_coords = false;
};

// Opset 10: inputs (X, scales). Opset 11+: (X, roi, scales, sizes).
int resize_scales_input(const Node& n) { return n.opset < 11 ? 1 : 2; }

std::vector<int64_t> resize_axes(const Node& n, int64_t rank) {
  std::vector<int64_t> axes;
  if (n.opset >= 18 && n.has_attr("axes")) {
    for (int64_t a : n.attr_ints("axes")) {
      if (a < -rank || a >= rank) throw Error("shape", n.label() + ": axis " + std::to_string(a) + " out of range");
      a = a < 0 ? a + rank : a;
      if (std::find(axes.begin(), axes.end(), a) != axes.end())
        throw Error("shape", n.label() + ": repeated axis " + std::to_string(a));
      axes.push_back(a);
    }
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  return axes;
}

// scales/sizes may be null (absent) or empty (opset 11-12 place holders).
ResizeParams resize_params(const Node& n, const Shape& in, const Tensor* scales, const Tensor* sizes) {
  auto bad = [&](const std::string& why) { return Error("shape", n.label() + ": " + why); };
  ResizeParams p;
  p.mode = n.attr_s("mode", "nearest");
  if (p.mode != "nearest" && p.mode != "linear" && p.mode != "cubic") throw bad("unknown mode '" + p.mode + "'");
  if (n.opset < 11) {
    if (p.mode == "cubic") throw bad("mode 'cubic' needs opset 11");
    // Resize-10: asymmetric coordinates; nearest floors on an upsampled axis and takes the ceiling
    // on a downsampled one (onnxruntime's rule for opset 10: 0.6x of [1, 2, 3, 4] is [1, 3], 3x of
    // [1, 2] is [1, 1, 1, 2, 2, 2]; "simple" below). Upsample-7/9, rewritten to this Resize,
    // floors (its "floor" below).
    p.ctm = "asymmetric";
    p.nearest_mode = n.attr_s("nearest_mode", "simple");  // "floor" only from upsample_expand below
  } else {
    p.ctm = n.attr_s("coordinate_transformation_mode", "half_pixel");
    p.nearest_mode = n.attr_s("nearest_mode", "round_prefer_floor");
    p.cubic_a = n.attr_f("cubic_coeff_a", -0.75);
    p.exclude_outside = n.attr_i("exclude_outside", 0) != 0;
    p.extrapolation = n.attr_f("extrapolation_value", 0.0);
  }
  static const char* ctms[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                               "asymmetric", "tf_crop_and_resize", "tf_half_pixel_for_nn"};
  if (std::find(std::begin(ctms), std::end(ctms), p.ctm) == std::end(ctms))
    throw bad("unknown coordinate_transformation_mode '" + p.ctm + "'");
  static const char* nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  if (std::find(std::begin(nms), std::end(nms), p.nearest_mode) == std::end(nms) && !(n.opset < 11 && p.nearest_mode == "simple"))
    throw bad("unknown nearest_mode '" + p.nearest_mode + "'");
  p.antialias = n.opset >= 18 && n.attr_i("antialias", 0) != 0;
  if (p.antialias && p.mode == "nearest") throw bad("antialias is not defined for mode 'nearest'");
  p.policy = n.opset >= 18 ? n.attr_s("keep_aspect_ratio_policy", "stretch") : "stretch";
  if (p.policy != "stretch" && p.policy != "not_larger" && p.policy != "not_smaller")
    throw bad("unknown keep_aspect_ratio_policy '" + p.policy + "'");

  const int64_t r = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes = resize_axes(n, r);
  const size_t na = axes.size();
  if (scales && scales->numel() == 0) scales = nullptr;
  if (sizes && sizes->numel() == 0) sizes = nullptr;
  if (!scales == !sizes) throw bad("exactly one of 'scales' and 'sizes' must be given");
  p.out = in;
  p.scale.assign(static_cast<size_t>(r), 1.0);
  p.out_width.assign(static_cast<size_t>(r), 0.0);
  for (int64_t d = 0; d < r; ++d) p.out_width[d] = static_cast<double>(in[d]);
  if (scales) {
    if (scales->numel() != static_cast<int64_t>(na))
      throw bad("scales has " + std::to_string(scales->numel()) + " elements, expected " + std::to_string(na));
    for (size_t i = 0; i < na; ++i) {
      const int64_t d = axes[i];
      const double s = scales->get(static_cast<int64_t>(i));
      if (!(s > 0)) throw bad("scales must be positive");
      p.scale[d] = s;
      // The reference multiplies in the scales' dtype (float32: rounded), then truncates.
      double w = s * static_cast<double>(in[d]);
      if (scales->dtype() == DType::f32) w = static_cast<float>(w), p.f32_coords = true;
      p.out_width[d] = w;
      if (!(w < static_cast<double>(kMaxShapeElements))) throw bad("scale " + std::to_string(s) + " makes an output dim past 2^56");
      p.out[d] = static_cast<int64_t>(std::floor(w));
    }
  } else {
    if (sizes->numel() != static_cast<int64_t>(na))
      throw bad("sizes has " + std::to_string(sizes->numel()) + " elements, expected " + std::to_string(na));
    for (size_t i = 0; i < na; ++i) {
      const int64_t d = axes[i];
      const int64_t s = sizes->get_int(static_cast<int64_t>(i));
      if (s < 0) throw bad("sizes must be non-negative");
      // An empty axis stays empty (sizes from Shape(x), a batch of 0); nothing can grow from it.
      if (in[d] == 0 && s != 0) throw bad("cannot resize an empty dimension to size " + std::to_string(s));
      p.out[d] = s;
      p.scale[d] = in[d] == 0 ? 1.0 : static_cast<double>(s) / static_cast<double>(in[d]);
    }
    if (p.policy != "stretch") {
      // The aspect ratio comes from the non-empty axes (an empty one has no ratio and stays 0).
      double sc = std::numeric_limits<double>::quiet_NaN();
      for (int64_t d : axes)
        if (in[d] != 0) sc = std::isnan(sc) ? p.scale[d] : p.policy == "not_larger" ? std::min(sc, p.scale[d]) : std::max(sc, p.scale[d]);
      if (std::isnan(sc)) sc = 1.0;
      for (int64_t d : axes) {
        p.scale[d] = sc;
        const double w = sc * static_cast<double>(in[d]) + 0.5;
        if (!(w < static_cast<double>(kMaxShapeElements))) throw bad("sizes make an output dim past 2^56");
        p.out[d] = static_cast<int64_t>(w);
      }
    }
    for (int64_t d : axes) p.out_width[d] = p.scale[d] * static_cast<double>(in[d]);
  }
  return p;
}

void resize_infer(InferContext& ctx) {
  const Node& n = ctx.node();
  const Shape& x = ctx.shape(0);
  const int si = resize_scales_input(n);
  const Tensor* scales = ctx.has_input(si) ? &ctx.require_constant(si) : nullptr;
  const Tensor* sizes = (n.opset >= 11 && ctx.has_input(3)) ? &ctx.require_constant(3) : nullptr;
  if (scales && scales->numel() == 0 && !sizes) scales = nullptr;
  if (!dtype_is_float(ctx.dtype(0)) && !dtype_is_int(ctx.dtype(0)))
    ctx.fail(std::string("input must be numeric, got ") + dtype_name(ctx.dtype(0)));
  ResizeParams p = resize_params(n, x, scales, sizes);
  // The taps (resize_table) depend on roi. Given `sizes`, the shape does not: a run-time roi
  // (tf2onnx's crop_and_resize loop crops each box) runs on ref and through host fallback (the
  // GPU kernels build their taps at compile time); with scales it is specialised on.
  if (p.ctm == "tf_crop_and_resize" && n.opset >= 11) {
    const size_t na = resize_axes(n, static_cast<int64_t>(x.size())).size();
    const bool need = !sizes;
    if (!ctx.has_input(1) || (need ? ctx.require_constant(1).numel() : shape_numel(ctx.shape(1))) != static_cast<int64_t>(2 * na))
      ctx.fail("tf_crop_and_resize needs roi with " + std::to_string(2 * na) + " elements");
  }
  ctx.set_output(0, ctx.dtype(0), p.out);
}

// One output coordinate along one axis: input indices and weights, or "extrapolate".
struct Taps {
  bool extrapolate = false;
  std::vector<int64_t> idx;  // already clamped into [0, in)
  std::vector<double> w;
};

double cubic_kernel(double x, double A) {
  x = std::fabs(x);
  const double x2 = x * x, x3 = x2 * x;
  if (x <= 1) return (A + 2) * x3 - (A + 3) * x2 + 1;
  if (x < 2) return A * x3 - 5 * A * x2 + 8 * A * x - 4 * A;
  return 0.0;
}

Taps resize_taps(const ResizeParams& p, int64_t in_w, int64_t out_i, int64_t x, double scale, double out_w,
                 double roi0, double roi1) {
  Taps t;
  const double iw = static_cast<double>(in_w);
  // The source coordinate of output x, in T (double, or float for float32 scales).
  auto coord = [&](auto one) {
    using T = decltype(one);
    const T xd = static_cast<T>(x), w = static_cast<T>(in_w), s = static_cast<T>(scale), ow = static_cast<T>(out_w);
    const T r0 = static_cast<T>(roi0), r1 = static_cast<T>(roi1), half = static_cast<T>(0.5);
    const std::string& m = p.ctm;
    if (m == "align_corners") return ow == one ? T(0) : xd * (w - one) / (ow - one);
    if (m == "asymmetric") return xd / s;
    if (m == "tf_crop_and_resize")
      return (ow == one ? (r1 - r0) * (w - one) / T(2) : xd * (r1 - r0) * (w - one) / (ow - one)) + r0 * (w - one);
    // Length 1 maps to 0 (the operator spec's formula, onnxruntime); onnx.reference's -0.5
    // differs where the taps are not clamped (cubic, antialias: up to 0.1, red-team round 50).
    if (m == "pytorch_half_pixel") return out_i == 1 ? T(0) : (xd + half) / s - half;  // the integer length (1 / 49 * 49 != 1)
    if (m == "half_pixel") return (xd + half) / s - half;
    // An axis left at scale 1 maps to itself, as onnxruntime (whose TF-converted models use this
    // mode) does: the formula's + 0.5 with ceil / round_prefer_ceil took every element from its
    // neighbour (N and C of a 4-D resize shifted by one; red-team round 11).
    if (m == "tf_half_pixel_for_nn") return s == one && ow == w ? xd : (xd + half) / s;
    // half_pixel_symmetric. onnxruntime forms the offset in T but the rest with double
    // literals, `offset + (x + 0.5) / scale - 0.5`, rounded to T once: so here (in float
    // throughout, output 8 of 5 -> 12 pixels at scale 2.5 mapped to 3.0000002 and ceil took
    // pixel 4, where onnxruntime and the ONNX reference take 3; red-team round 34).
    const T adjustment = static_cast<T>(out_i) / ow;
    const T center = w / T(2);
    const T offset = center * (one - adjustment);
    return static_cast<T>(static_cast<double>(offset) + (static_cast<double>(xd) + 0.5) / static_cast<double>(s) - 0.5);
  };
  const double xo = p.f32_coords ? static_cast<double>(coord(1.0f)) : coord(1.0);
  if (p.ctm == "tf_crop_and_resize" && (xo < 0 || xo > iw - 1)) {
    t.extrapolate = true;
    return t;
  }
  const double fl = std::floor(xo);
  const bool integral = xo == fl;
  const double ratio = integral ? 1.0 : xo - fl;

  std::vector<double> c;
  if (p.mode == "nearest") {
    bool hi;
    if (integral) hi = true;
    else if (p.nearest_mode == "round_prefer_floor") hi = ratio > 0.5;
    else if (p.nearest_mode == "round_prefer_ceil") hi = ratio >= 0.5;
    else if (p.nearest_mode == "floor") hi = false;
    else if (p.nearest_mode == "simple") hi = scale < 1.0;  // Resize-10: ceil when downsampling, else floor
    else hi = true;
    c = {hi ? 0.0 : 1.0, hi ? 1.0 : 0.0};
  } else if (p.mode == "linear") {
    if (!p.antialias) {
      c = {1 - ratio, ratio};
    } else {
      const double s = std::min(scale, 1.0);
      const int64_t start = static_cast<int64_t>(std::floor(-1 / s) + 1);
      const int64_t footprint = 2 - 2 * start;
      double sum = 0;
      for (int64_t i = start; i < start + footprint; ++i) {
        double a = (static_cast<double>(i) - ratio) * s;
        c.push_back(std::clamp(1 - std::fabs(a), 0.0, 1.0));
        sum += c.back();
      }
      for (double& v : c) v /= sum;
    }
  } else {  // cubic
    const double A = p.cubic_a;
    if (!p.antialias) {
      const double r = ratio, q = 1 - ratio;
      c = {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A, ((A + 2) * r - (A + 3)) * r * r + 1,
           ((A + 2) * q - (A + 3)) * q * q + 1, ((A * (q + 1) - 5 * A) * (q + 1) + 8 * A) * (q + 1) - 4 * A};
    } else {
      const double s = std::min(scale, 1.0);
      const int64_t start = static_cast<int64_t>(std::floor(-2 / s) + 1);
      const int64_t end = 2 - start;
      double sum = 0;
      for (int64_t i = start; i < end; ++i) {
        c.push_back(cubic_kernel(s * (static_cast<double>(i) - ratio), A));
        sum += c.back();
      }
      for (double& v : c) v /= sum;
    }
  }

  // The reference pads the data by ceil(n/2) on each side ('edge') and takes the n indices of the
  // padded array nearest to xo (ties: the smaller index). Distances are taken to the unpadded
  // index: xo + pad rounds 7.000000000000001 + 1 to 8 and took pixel 6 (red-team round 49).
  const int64_t nt = static_cast<int64_t>(c.size());
  const int64_t pad = (nt + 1) / 2;
  const int64_t limit = in_w + 2 * pad;
  auto closer = [&](int64_t a, int64_t b) {
    double da = std::fabs(xo - static_cast<double>(a - pad)), db = std::fabs(xo - static_cast<double>(b - pad));
    return da != db ? da < db : a < b;
  };
  if (nt > limit) throw Error("ref", "resize: more taps than padded input elements");
  // The nt nearest indices are contiguous around xo: candidates from a window of 2 nt + 3
  // around it (all of [0, limit) made the taps of a 65536 -> 131072 resize quadratic: 30 s).
  const int64_t span = std::min<int64_t>(limit, 2 * nt + 3);
  // (A NaN coordinate, from a NaN roi, has NaN weights whichever taps it takes.)
  const double centre = std::isnan(xo) ? 0.0 : std::clamp(std::floor(xo) + static_cast<double>(pad), 0.0, static_cast<double>(limit - 1));
  const int64_t lo = std::clamp<int64_t>(static_cast<int64_t>(centre) - nt - 1, 0, limit - span);
  std::vector<int64_t> cand(static_cast<size_t>(span));
  for (int64_t i = 0; i < span; ++i) cand[static_cast<size_t>(i)] = lo + i;
  std::partial_sort(cand.begin(), cand.begin() + nt, cand.end(), closer);
  std::sort(cand.begin(), cand.begin() + nt);
  double sum = 0;
  for (int64_t k = 0; k < nt; ++k) {
    const int64_t orig = cand[k] - pad;
    if (p.exclude_outside && (orig < 0 || orig >= in_w)) c[k] = 0;
    sum += c[k];
  }
  if (p.exclude_outside)
    for (double& v : c) v /= sum;
  for (int64_t k = 0; k < nt; ++k) {
    t.idx.push_back(std::clamp<int64_t>(cand[k] - pad, 0, in_w - 1));
    t.w.push_back(c[k]);
  }
  return t;
}

void resize_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor& X = *in[0];
  const int si = resize_scales_input(n);
  const ResizeTable t = resize_table(n, X.shape(), opt_in(in, si), n.opset >= 11 ? opt_in(in, 3) : nullptr,
                                     n.opset >= 11 ? opt_in(in, 1) : nullptr);
  Tensor& Y = out[0];
  const Shape& xs = X.shape();
  const int64_t r = static_cast<int64_t>(xs.size());
  const std::vector<double> xv = load_doubles(X);
  const Shape xst = contiguous_strides(xs);
  const int64_t total = shape_numel(t.out);
  std::vector<double> y(static_cast<size_t>(total));
  std::vector<int64_t> idx(static_cast<size_t>(r), 0);
  std::vector<int64_t> k(static_cast<size_t>(r), 0);
  // Integer outputs: an element that reads one input element with weight 1 (every nearest
  // element, linear on the grid) is copied exactly (int64 past 2^53 stays exact); the others
  // are their double value rounded to nearest, ties to even (98.99999999 is 99, as onnxruntime).
  const bool int_out = dtype_is_int(Y.dtype());
  std::vector<int64_t> copy_from(int_out ? static_cast<size_t>(total) : 0, -1);
  // Per axis, each output coordinate's taps as (input offset, weight) pairs. An axis whose every
  // coordinate reads one input element with weight 1 (nearest axes, the batch and channel axes)
  // adds only its offset: w * 1.0 is w, so skipping it leaves the sum bit for bit the same, in
  // the same order; the others ("active") are walked tap by tap, the last fastest.
  std::vector<std::vector<int64_t>> toff(static_cast<size_t>(r));
  std::vector<int64_t> act, extrap;
  std::vector<char> active(static_cast<size_t>(r), 0);
  for (int64_t d = 0; d < r; ++d) {
    const ResizeAxis& a = t.axes[d];
    // One weight-1 tap per coordinate (resize_table collapses such axes): only an offset.
    if (!a.fixed) act.push_back(d), active[d] = 1;
    if (std::any_of(a.extrapolate.begin(), a.extrapolate.end(), [](uint8_t e) { return e != 0; })) extrap.push_back(d);
    toff[d].resize(a.idx.size());
    for (size_t i = 0; i < a.idx.size(); ++i) toff[d][i] = a.idx[i] * xst[d];
  }
  const size_t na = act.size();
  // The common case (a float upsample of the last one or two axes, nothing extrapolated): the
  // same products and sums in the same order, walked plane by plane without the odometer.
  const bool suffix = na >= 1 && na <= 2 && act.back() == r - 1 && (na == 1 || act[0] == r - 2);
  if (!int_out && extrap.empty() && suffix && total > 0) {
    const int64_t inner = na == 2 ? t.out[r - 2] * t.out[r - 1] : t.out[r - 1];
    const ResizeAxis& aw = t.axes[r - 1];
    const int64_t ow_n = t.out[r - 1], oh_n = na == 2 ? t.out[r - 2] : 1, th = na == 2 ? t.axes[r - 2].taps : 1;
    for (int64_t o0 = 0; o0 < total; o0 += inner) {
      int64_t base = 0;
      for (int64_t d = 0; d < r; ++d)
        if (!active[d]) base += toff[d][idx[d]];
      for (int64_t oh = 0; oh < oh_n; ++oh)
        for (int64_t ow = 0; ow < ow_n; ++ow) {
          double acc = -0.0;
          for (int64_t kh = 0; kh < th; ++kh) {
            const int64_t ah = oh * th + kh;
            const double wh = na == 2 ? t.axes[r - 2].w[ah] : 1.0;
            const int64_t bh = base + (na == 2 ? toff[r - 2][ah] : 0);
            for (int64_t kw = 0; kw < aw.taps; ++kw) {
              const int64_t at = ow * aw.taps + kw;
              const double w = na == 2 ? wh * aw.w[at] : aw.w[at];  // 1 * wh * ww, as the walk below
              acc += w * xv[bh + toff[r - 1][at]];
            }
          }
          y[o0 + oh * ow_n + ow] = acc;
        }
      for (int64_t d = r - 1 - static_cast<int64_t>(na); d >= 0; --d) {  // the next plane
        if (++idx[d] < t.out[d]) break;
        idx[d] = 0;
      }
    }
    store_doubles(Y, y);
    return;
  }
  for (int64_t o = 0; o < total; ++o) {
    bool extra = false;
    for (int64_t d : extrap) extra = extra || t.axes[d].extrapolate[idx[d]];
    double acc = -0.0;  // -0 + v is v for every v: a lone tap copies a -0.0 as it is
    if (extra) {
      acc = t.extrapolation;
    } else {
      int64_t base = 0;
      for (int64_t d = 0; d < r; ++d)
        if (!active[d]) base += toff[d][idx[d]];
      // Sum over the tensor product of the active axes' taps.
      std::fill(k.begin(), k.end(), 0);
      int64_t read = 0, only = -1;  // taps with a non-zero weight; the offset of a lone weight-1 tap
      while (true) {
        double w = 1;
        int64_t off = base;
        for (size_t j = 0; j < na; ++j) {
          const int64_t d = act[j];
          const int64_t at = idx[d] * t.axes[d].taps + k[j];
          w *= t.axes[d].w[at];
          off += toff[d][at];
        }
        acc += w * xv[off];
        if (w != 0.0) ++read, only = w == 1.0 ? off : -1;
        size_t j = na;
        for (; j > 0; --j) {
          if (++k[j - 1] < t.axes[act[j - 1]].taps) break;
          k[j - 1] = 0;
        }
        if (j == 0) break;
      }
      if (int_out && read == 1) copy_from[static_cast<size_t>(o)] = only;
    }
    y[o] = acc;
    for (int64_t d = r - 1; d >= 0; --d) {
      if (++idx[d] < t.out[d]) break;
      idx[d] = 0;
    }
  }
  if (int_out) {
    for (int64_t i = 0; i < total; ++i) {
      const int64_t src = copy_from[static_cast<size_t>(i)];
      if (src >= 0)
        Y.set_int(i, X.get_int(src));
      else
        Y.set(i, std::nearbyint(y[i]));
    }
  } else {
    store_doubles(Y, y);
  }
}

}  // namespace

ResizeTable resize_table(const Node& n, const Shape& x, const Tensor* scales, const Tensor* sizes, const Tensor* roi) {
  if (scales && scales->numel() == 0 && !sizes) scales = nullptr;
  ResizeParams p = resize_params(n, x, scales, sizes);
  const int64_t r = static_cast<int64_t>(x.size());
  std::vector<int64_t> axes = resize_axes(n, r);
  std::vector<double> roi0(static_cast<size_t>(r), 0.0), roi1(static_cast<size_t>(r), 1.0);
  if (p.ctm == "tf_crop_and_resize") {
    if (!roi || roi->numel() != 2 * static_cast<int64_t>(axes.size()))
      throw Error("ref", n.label() + ": tf_crop_and_resize needs roi with " + std::to_string(2 * axes.size()) + " elements");
    for (size_t i = 0; i < axes.size(); ++i) {
      roi0[axes[i]] = roi->get(static_cast<int64_t>(i));
      roi1[axes[i]] = roi->get(static_cast<int64_t>(axes.size() + i));
    }
    // A float32 (or narrower) roi: the crop's coordinates in float32, as onnxruntime and the
    // ONNX reference form them (roi 0.2f, 0.7f: output 4 lands on 3.5 exactly, where double
    // gave 3.49999994 and round_prefer_ceil took the pixel below; red-team rounds 11 and 58).
    if (roi->dtype() != DType::f64) p.f32_coords = true;
  }
  ResizeTable t;
  t.out = p.out;
  t.extrapolation = p.extrapolation;
  t.axes.resize(static_cast<size_t>(r));
  for (int64_t d = 0; d < r; ++d) {
    ResizeAxis& a = t.axes[d];
    std::vector<Taps> taps;
    for (int64_t c = 0; c < p.out[d]; ++c) {
      taps.push_back(resize_taps(p, x[d], p.out[d], c, p.scale[d], p.out_width[d], roi0[d], roi1[d]));
      if (!taps.back().extrapolate) a.taps = std::max<int64_t>(a.taps, static_cast<int64_t>(taps.back().w.size()));
    }
    // Every coordinate gets `taps` entries (extrapolated ones: weight 0 at index 0), at least
    // one even when all are extrapolated, so no table is empty.
    if (p.out[d] > 0) a.taps = std::max<int64_t>(a.taps, 1);
    // An axis where every coordinate reads one input element with weight 1 (every nearest axis;
    // an axis of scale 1 on the grid) keeps only that tap: the others' weight 0 times an inf or
    // NaN neighbour made the element NaN (nearest x2 of [1, inf] gave [1, NaN, NaN, NaN] where
    // onnxruntime and the ONNX reference pick [1, 1, inf, inf]), and 2^rank taps per element
    // made the host Resize 16x slower than one.
    // A coordinate whose taps all read one pixel (every coordinate of a length-1 input axis:
    // the clamped taps of a 1x1 map, weights (1, 0) gave 0 x inf) is that pixel times their sum.
    const auto one_pixel = [](const Taps& tp) {
      return std::all_of(tp.idx.begin(), tp.idx.end(), [&](int64_t i) { return i == tp.idx[0]; });
    };
    bool single = true;
    for (const Taps& tp : taps) {
      if (tp.extrapolate || one_pixel(tp)) continue;
      int nonzero = 0;
      for (double w : tp.w) nonzero += w != 0.0;
      single = single && nonzero == 1 && std::find(tp.w.begin(), tp.w.end(), 1.0) != tp.w.end();
    }
    if (single && a.taps > 1) {
      a.taps = 1;
      for (Taps& tp : taps) {
        if (tp.extrapolate) continue;
        if (one_pixel(tp)) {
          double sum = 0;
          for (double w : tp.w) sum += w;
          tp.idx = {tp.idx[0]}, tp.w = {sum};
          continue;
        }
        const size_t one = static_cast<size_t>(std::find(tp.w.begin(), tp.w.end(), 1.0) - tp.w.begin());
        tp.idx = {tp.idx[one]}, tp.w = {1.0};
      }
    }
    for (const Taps& tp : taps) {
      a.extrapolate.push_back(tp.extrapolate ? 1 : 0);
      for (int64_t k = 0; k < a.taps; ++k) {
        const bool have = k < static_cast<int64_t>(tp.w.size());
        a.idx.push_back(have ? tp.idx[k] : 0);
        a.w.push_back(have ? tp.w[k] : 0.0);
      }
    }
    a.fixed = a.taps == 1;
    for (int64_t c = 0; a.fixed && c < p.out[d]; ++c) a.fixed = !a.extrapolate[c] && a.w[c] == 1.0;
  }
  return t;
}

// ---------------------------------------------------------------- Upsample (deprecated)

// Upsample-7/9 is Resize-10 with nearest flooring (asymmetric coordinates), with
// the scales as an attribute before opset 9: the node becomes that Resize before inference.
// Upsample-1 (height_scale/width_scale) predates it and is refused with the reason.
bool upsample_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  auto bad = [&](const std::string& why) { return Error("shape", n.label() + ": " + why); };
  if (n.opset < 7) throw Unsupported("shape", n.label() + ": Upsample before opset 7 (height_scale/width_scale) is not supported");
  std::string mode = n.attr_s("mode", "nearest");
  if (mode == "bilinear") mode = "linear";
  if (mode != "nearest" && mode != "linear") throw bad("unknown mode '" + mode + "'");
  Node r;
  r.name = n.name;
  r.op_type = "Resize";
  r.opset = 10;
  r.attrs["mode"] = mode;
  r.attrs["nearest_mode"] = std::string("floor");  // Upsample's nearest floors (x_out / scale)
  r.outputs = n.outputs;
  if (n.opset < 9) {
    if (!n.has_attr("scales")) throw bad("needs the 'scales' attribute");
    const std::vector<double> sc = n.attr_floats("scales");
    Tensor t(DType::f32, {static_cast<int64_t>(sc.size())});
    for (size_t i = 0; i < sc.size(); ++i) t.set(static_cast<int64_t>(i), sc[i]);
    r.inputs = {n.inputs.empty() ? -1 : n.inputs[0], g.add_constant(g.unique_name(n.name + "/scales"), std::move(t))};
  } else {
    if (n.inputs.size() < 2) throw bad("needs the 'scales' input");
    r.inputs = {n.inputs[0], n.inputs[1]};
  }
  g.nodes[index] = std::move(r);
  g.reindex_producers();
  return true;
}

void upsample_unreached(InferContext& ctx) { ctx.fail("Upsample is rewritten to Resize before inference"); }
void upsample_ref_unreached(const Node& n, const Ins&, Outs&) { ref_fail(n, "Upsample is rewritten to Resize before it runs"); }

void register_extra_ops() {
  register_op(table_entry("NegativeLogLikelihoodLoss", 2, 3, nll_infer, nll_ref));
  register_op(table_entry("SoftmaxCrossEntropyLoss", 2, 3, sce_infer, sce_ref, 2));
  register_op(never_raising(table_entry("Resize", 1, 4, resize_infer, resize_ref)));
  OpDef up = table_entry("Upsample", 1, 2, upsample_unreached, upsample_ref_unreached);
  up.expand = upsample_expand;
  register_op(std::move(up));
}

}  // namespace fusor
