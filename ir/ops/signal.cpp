// Audio front-end ops without a GPU kernel (the GPUs run them through host fallback):
//
//  * STFT-17: frames of signal [batch, length, 1 (real) or 2 (complex)] taken every frame_step
//    (scalar input) samples, each frame_length long (the window's length, else input 3), times
//    the window (input 2; absent: ones), then its DFT:
//      Y[b, f, k] = sum_t w[t] x[b, f * step + t] e^(-2 pi i k t / frame_length),
//    frames = 1 + (length - frame_length) / step, k < frame_length / 2 + 1 when onesided (the
//    default; real signals only) else frame_length. Output [batch, frames, bins, 2], computed
//    directly in double (O(frame_length^2) per frame, like DFT).
//  * MelWeightMatrix-17: the [dft_length / 2 + 1, num_mel_bins] triangular filter bank of the
//    ONNX reference implementation: num_mel_bins + 2 points evenly spaced in mel (2595 log10(1 +
//    hz / 700)) between lower_edge_hertz and upper_edge_hertz, step (high - low) / (bins + 2),
//    each mapped back to a spectrogram bin floor((dft_length + 1) hz / sample_rate); filter i
//    rises linearly from point i to point i + 1 and falls to point i + 2. Computed in double,
//    stored in output_datatype (default float32). Every input must be a compile-time constant.
// Errors: Error("shape") naming the node for bad ranks, steps, lengths or frequencies.
#include <algorithm>
#include <cmath>

#include "ir/ops/op_helpers.h"

namespace fusor {
namespace {

using namespace op_helpers;

constexpr double kPi = 3.14159265358979323846;
// Bounds on model-supplied lengths, so the direct DFT's work stays bounded (as DFT's 2^24).
constexpr int64_t kMaxFrame = int64_t{1} << 16;

// ---- STFT -------------------------------------------------------------------------------

struct StftGeom {
  int64_t batch = 0, length = 0, channels = 0, step = 0, frame = 0, frames = 0, bins = 0;
};

StftGeom stft_geom(const Node& n, const Shape& x, const Tensor& step, const Shape* window, const Tensor* frame_length) {
  auto bad = [&](const std::string& why) { return Error("shape", n.label() + ": " + why); };
  if (x.size() != 3 || (x[2] != 1 && x[2] != 2)) throw bad("signal must be [batch, length, 1 or 2], got " + shape_str(x));
  StftGeom g;
  g.batch = x[0], g.length = x[1], g.channels = x[2];
  if (step.numel() != 1) throw bad("frame_step must be a scalar");
  g.step = step.get_int(0);
  if (g.step < 1) throw bad("frame_step " + std::to_string(g.step) + " must be positive");
  if (window && window->size() != 1) throw bad("window must be 1-D, got " + shape_str(*window));
  if (frame_length && frame_length->numel() != 1) throw bad("frame_length must be a scalar");
  g.frame = window ? (*window)[0] : frame_length ? frame_length->get_int(0) : 0;
  if (!window && !frame_length) throw bad("needs a window or a frame_length");
  if (window && frame_length && frame_length->get_int(0) != g.frame)
    throw bad("frame_length " + std::to_string(frame_length->get_int(0)) + " differs from the window's " + std::to_string(g.frame));
  if (g.frame < 1 || g.frame > std::min(g.length, kMaxFrame))
    throw bad("frame length " + std::to_string(g.frame) + " must be in [1, min(signal length, 65536)]");
  const bool onesided = n.attr_i("onesided", 1) != 0;
  if (onesided && g.channels == 2) throw bad("onesided needs a real signal");
  g.frames = 1 + (g.length - g.frame) / g.step;
  g.bins = onesided ? g.frame / 2 + 1 : g.frame;
  // The direct DFT's work, batch x frames x bins x frame multiply-adds, bounded (2^36).
  const double work = static_cast<double>(g.batch) * static_cast<double>(g.frames) * static_cast<double>(g.bins) *
                      static_cast<double>(g.frame);
  if (work > 68719476736.0) throw bad("needs " + std::to_string(work) + " multiply-adds, past the direct DFT's bound of 2^36");
  return g;
}

void stft_infer(InferContext& ctx) {
  if (!dtype_is_float(ctx.dtype(0)) || dtype_is_small(ctx.dtype(0)))
    ctx.fail(std::string("signal must be float32 or float64, got ") + dtype_name(ctx.dtype(0)));
  const Shape* window = ctx.has_input(2) ? &ctx.shape(2) : nullptr;
  const StftGeom g = stft_geom(ctx.node(), ctx.shape(0), ctx.require_constant(1), window,
                               ctx.has_input(3) ? &ctx.require_constant(3) : nullptr);
  ctx.set_output(0, ctx.dtype(0), {g.batch, g.frames, g.bins, 2});
}

void stft_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor& x = *in[0];
  const Tensor* window = opt_in(in, 2);
  const StftGeom g = stft_geom(n, x.shape(), *in[1], window ? &window->shape() : nullptr, opt_in(in, 3));
  const std::vector<double> xv = load_doubles(x);
  const std::vector<double> w = window ? load_doubles(*window) : std::vector<double>(static_cast<size_t>(g.frame), 1.0);
  std::vector<double> res(static_cast<size_t>(out[0].numel()));
  const int64_t L = g.frame, C = g.channels;
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t f = 0; f < g.frames; ++f) {
      const double* s = xv.data() + (b * g.length + f * g.step) * C;
      for (int64_t k = 0; k < g.bins; ++k) {
        double sr = 0, si = 0;
        for (int64_t t = 0; t < L; ++t) {
          const double ang = -2.0 * kPi * static_cast<double>((k * t) % L) / static_cast<double>(L);
          const double c = std::cos(ang), sn = std::sin(ang);
          const double re = w[t] * s[t * C], im = C == 2 ? w[t] * s[t * C + 1] : 0.0;
          sr += re * c - im * sn;
          si += re * sn + im * c;
        }
        const size_t e = static_cast<size_t>(((b * g.frames + f) * g.bins + k) * 2);
        res[e] = sr, res[e + 1] = si;
      }
    }
  store_doubles(out[0], res);
}

// ---- MelWeightMatrix --------------------------------------------------------------------

struct MelGeom {
  int64_t mel_bins = 0, spec_bins = 0;
  std::vector<int64_t> points;  // num_mel_bins + 2 spectrogram bins
};

MelGeom mel_geom(const Node& n, const Tensor& bins, const Tensor& dft, const Tensor& rate, const Tensor& lo, const Tensor& hi) {
  auto bad = [&](const std::string& why) { return Error("shape", n.label() + ": " + why); };
  for (const Tensor* t : {&bins, &dft, &rate, &lo, &hi})
    if (t->numel() != 1) throw bad("every input must be a scalar");
  MelGeom g;
  g.mel_bins = bins.get_int(0);
  const int64_t L = dft.get_int(0), sr = rate.get_int(0);
  if (g.mel_bins < 1 || g.mel_bins > kMaxFrame) throw bad("num_mel_bins must be in [1, 65536]");
  if (L < 1 || L > 2 * kMaxFrame) throw bad("dft_length must be in [1, 131072]");
  if (sr < 1) throw bad("sample_rate must be positive");
  const double low = lo.get(0), high = hi.get(0);
  if (!(low >= 0) || !(high > low) || !(high <= static_cast<double>(sr)))
    throw bad("needs 0 <= lower_edge_hertz < upper_edge_hertz <= sample_rate");
  g.spec_bins = L / 2 + 1;
  auto mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  const double lm = mel(low), step = (mel(high) - lm) / static_cast<double>(g.mel_bins + 2);
  for (int64_t i = 0; i < g.mel_bins + 2; ++i) {
    const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * step + lm) / 2595.0) - 1.0);
    g.points.push_back(static_cast<int64_t>(std::floor(static_cast<double>(L + 1) * hz / static_cast<double>(sr))));
  }
  // Filters past the last spectrogram bin would index outside the matrix (the reference raises).
  if (g.points.back() > g.spec_bins || g.points[g.points.size() - 2] >= g.spec_bins)
    throw bad("upper_edge_hertz maps past the last of " + std::to_string(g.spec_bins) + " spectrogram bins");
  return g;
}

MelGeom mel_geom_of(const Node& n, const std::vector<const Tensor*>& in) {
  return mel_geom(n, *in[0], *in[1], *in[2], *in[3], *in[4]);
}

DType mel_dtype(const Node& n) {
  const DType t = dtype_from_onnx(static_cast<int>(n.attr_i("output_datatype", 1)));
  if (!dtype_is_float(t)) throw Error("shape", n.label() + ": output_datatype must be a float type");
  return t;
}

void mel_infer(InferContext& ctx) {
  std::vector<const Tensor*> in;
  for (int i = 0; i < 5; ++i) in.push_back(&ctx.require_constant(i));
  const MelGeom g = mel_geom_of(ctx.node(), in);
  ctx.set_output(0, mel_dtype(ctx.node()), {g.spec_bins, g.mel_bins});
}

void mel_ref(const Node& n, const Ins& in, Outs& out) {
  const MelGeom g = mel_geom_of(n, in);
  std::vector<double> res(static_cast<size_t>(g.spec_bins * g.mel_bins), 0.0);
  auto at = [&](int64_t j, int64_t i) -> double& { return res[static_cast<size_t>(j * g.mel_bins + i)]; };
  for (int64_t i = 0; i < g.mel_bins; ++i) {
    const int64_t lo = g.points[i], c = g.points[i + 1], hi = g.points[i + 2];
    if (c == lo) {
      at(c, i) = 1.0;
    } else {
      for (int64_t j = std::max<int64_t>(lo, 0); j <= c; ++j) at(j, i) = static_cast<double>(j - lo) / static_cast<double>(c - lo);
    }
    for (int64_t j = c; j < hi; ++j) at(j, i) = static_cast<double>(hi - j) / static_cast<double>(hi - c);
  }
  store_doubles(out[0], res);
}

}  // namespace

void register_signal_ops() {
  register_op(table_entry("STFT", 2, 4, stft_infer, stft_ref));
  register_op(table_entry("MelWeightMatrix", 5, 5, mel_infer, mel_ref));
}

}  // namespace fusor
