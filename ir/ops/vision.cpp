// Detection and segmentation ops without a GPU kernel (the GPUs run them through host fallback):
//
//  * RoiAlign-10/16 (Mask R-CNN, He et al. 2017; the ONNX spec and its reference
//    implementation): for each roi [x1, y1, x2, y2] of rois [R, 4] on image batch_indices[r]
//    of X [N, C, H, W], an output_height x output_width grid of bins, each the average
//    (mode "avg") or maximum ("max") of sampling_ratio^2 bilinear samples (sampling_ratio 0:
//    ceil(roi size / bins) per axis). Coordinates are scaled by spatial_scale and shifted by
//    -0.5 with coordinate_transformation_mode "half_pixel" (opset 16's default); opset 10
//    ("output_half_pixel") does not shift and makes every roi at least 1 x 1. Samples more
//    than one pixel outside the image are 0; "max" takes the largest of the four weighted
//    corner values of each sample (as onnxruntime and the reference do). Output [R, C, oh, ow].
//  * MaxUnpool-11: the inverse of MaxPool with indices: U, zeros of the unpooled shape (per
//    spatial dim (in - 1) * stride + kernel - pad_begin - pad_end) with U.flat[I[i]] = X[i] (I:
//    MaxPool's flat indices over the whole tensor), is the output, or, with output_shape
//    (input 2), sits at the origin of a zero output of that shape (the ONNX reference's rule,
//    which the node suite's data follows; onnxruntime indexes output_shape directly).
//  * DeformConv-19 (2-D): a convolution whose kernel tap (i, j) at output (y, x) samples X
//    bilinearly at (y * stride - pad_begin + i * dilation, ...) + offset[n, (g, i, j, h|w), y, x],
//    corners outside the image 0, times mask[n, (g, i, j), y, x] when given (v2), offset group g
//    = channel / (C / offset_group); group, bias as Conv. As the ONNX reference (its GridSample
//    with align_corners=1 is this sampling).
//  * MaxRoiPool-1/22 (Fast R-CNN's RoI pooling; the spec gives no formula, so onnxruntime's
//    kernel is the definition): roi [batch, x1, y1, x2, y2] scaled by spatial_scale and
//    rounded (half away from zero), at least 1 x 1 (ends inclusive); bin (ph, pw) covers rows
//    [floor(ph * bh), ceil((ph + 1) * bh)) + y1 with bh = roi height / pooled height in float32,
//    clamped to the image, likewise columns; the bin's maximum, 0 for an empty bin. Output
//    [R, C, pooled_shape[0], pooled_shape[1]].
// Errors: Error("shape") naming the node for bad ranks, attributes or sizes; Error("ref") for an
// out-of-range batch index or unpool index, or a sampling grid past 2^16 per axis.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "ir/ops/op_helpers.h"

namespace fusor {
namespace {

using namespace op_helpers;

// Attribute values bounded so products of them cannot overflow (as nn.cpp's windows).
constexpr int64_t kMaxGrid = int64_t{1} << 16;

// ---- RoiAlign -----------------------------------------------------------------------------

void roialign_infer(InferContext& ctx) {
  const Node& n = ctx.node();
  const Shape& x = ctx.shape(0);
  const Shape& rois = ctx.shape(1);
  const Shape& idx = ctx.shape(2);
  if (x.size() != 4) ctx.fail("X must be [N, C, H, W], got " + shape_str(x));
  if (rois.size() != 2 || rois[1] != 4) ctx.fail("rois must be [num_rois, 4], got " + shape_str(rois));
  if (idx != Shape{rois[0]}) ctx.fail("batch_indices must be [" + std::to_string(rois[0]) + "], got " + shape_str(idx));
  if (!dtype_is_float(ctx.dtype(0)) || ctx.dtype(1) != ctx.dtype(0))
    ctx.fail("X and rois must share a float dtype");
  if (!dtype_is_int(ctx.dtype(2))) ctx.fail("batch_indices must be an integer tensor");
  const int64_t oh = n.attr_i("output_height", 1), ow = n.attr_i("output_width", 1), sr = n.attr_i("sampling_ratio", 0);
  if (oh < 1 || ow < 1 || oh > kMaxGrid || ow > kMaxGrid) ctx.fail("output_height/width must be in [1, 65536]");
  if (sr < 0 || sr > kMaxGrid) ctx.fail("sampling_ratio must be in [0, 65536]");
  const std::string mode = n.attr_s("mode", "avg");
  if (mode != "avg" && mode != "max") ctx.fail("unknown mode '" + mode + "'");
  const std::string ctm = n.attr_s("coordinate_transformation_mode", n.opset >= 16 ? "half_pixel" : "output_half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel") ctx.fail("unknown coordinate_transformation_mode '" + ctm + "'");
  ctx.set_output(0, ctx.dtype(0), {rois[0], x[1], oh, ow});
}

// One bilinear sample at (y, x) of an H x W plane: the four corner offsets and weights; all
// weights 0 when the point is more than one pixel outside.
struct Sample {
  int64_t o[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

Sample bilinear(double y, double x, int64_t H, int64_t W) {
  Sample s;
  if (y < -1.0 || y > static_cast<double>(H) || x < -1.0 || x > static_cast<double>(W)) return s;
  y = std::max(y, 0.0), x = std::max(x, 0.0);
  int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x), y1, x1;
  if (y0 >= H - 1) y0 = y1 = H - 1, y = static_cast<double>(y0);
  else y1 = y0 + 1;
  if (x0 >= W - 1) x0 = x1 = W - 1, x = static_cast<double>(x0);
  else x1 = x0 + 1;
  const double ly = y - static_cast<double>(y0), lx = x - static_cast<double>(x0), hy = 1 - ly, hx = 1 - lx;
  s.o[0] = y0 * W + x0, s.o[1] = y0 * W + x1, s.o[2] = y1 * W + x0, s.o[3] = y1 * W + x1;
  s.w[0] = hy * hx, s.w[1] = hy * lx, s.w[2] = ly * hx, s.w[3] = ly * lx;
  return s;
}

void roialign_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor& x = *in[0];
  const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  const int64_t R = in[1]->shape()[0];
  const int64_t oh = n.attr_i("output_height", 1), ow = n.attr_i("output_width", 1), sr = n.attr_i("sampling_ratio", 0);
  const double scale = n.attr_f("spatial_scale", 1.0);
  const bool max_mode = n.attr_s("mode", "avg") == "max";
  const bool half_pixel =
      n.attr_s("coordinate_transformation_mode", n.opset >= 16 ? "half_pixel" : "output_half_pixel") == "half_pixel";
  const std::vector<double> xv = load_doubles(x), rv = load_doubles(*in[1]);
  const std::vector<int64_t> bi = ints_of(*in[2]);
  std::vector<double> res(static_cast<size_t>(R * C * oh * ow), 0.0);
  const double off = half_pixel ? 0.5 : 0.0;
  for (int64_t r = 0; r < R; ++r) {
    const int64_t b = bi[r];
    if (b < 0 || b >= N) ref_fail(n, "batch index " + std::to_string(b) + " of roi " + std::to_string(r) + " is outside [0, " + std::to_string(N) + ")");
    const double x1 = rv[r * 4] * scale - off, y1 = rv[r * 4 + 1] * scale - off;
    double rw = rv[r * 4 + 2] * scale - off - x1, rh = rv[r * 4 + 3] * scale - off - y1;
    if (!half_pixel) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    const double bh = rh / static_cast<double>(oh), bw = rw / static_cast<double>(ow);
    // The adaptive grid comes from the roi's values: bounded so a hostile roi cannot ask for
    // unbounded work.
    const double gh_d = sr > 0 ? static_cast<double>(sr) : std::ceil(bh), gw_d = sr > 0 ? static_cast<double>(sr) : std::ceil(bw);
    if (!(gh_d <= static_cast<double>(kMaxGrid)) || !(gw_d <= static_cast<double>(kMaxGrid)))
      ref_fail(n, "roi " + std::to_string(r) + " needs a sampling grid past 65536 per axis");
    const int64_t gh = std::max<int64_t>(static_cast<int64_t>(gh_d), 0), gw = std::max<int64_t>(static_cast<int64_t>(gw_d), 0);
    const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
    std::vector<Sample> samples;
    samples.reserve(static_cast<size_t>(oh * ow * gh * gw));
    for (int64_t ph = 0; ph < oh; ++ph)
      for (int64_t pw = 0; pw < ow; ++pw)
        for (int64_t iy = 0; iy < gh; ++iy)
          for (int64_t ix = 0; ix < gw; ++ix)
            samples.push_back(bilinear(y1 + static_cast<double>(ph) * bh + (static_cast<double>(iy) + 0.5) * bh / static_cast<double>(gh),
                                       x1 + static_cast<double>(pw) * bw + (static_cast<double>(ix) + 0.5) * bw / static_cast<double>(gw), H, W));
    for (int64_t c = 0; c < C; ++c) {
      const double* plane = xv.data() + (b * C + c) * H * W;
      double* o = res.data() + (r * C + c) * oh * ow;
      size_t k = 0;
      for (int64_t p = 0; p < oh * ow; ++p) {
        double acc = 0;
        bool first = true;
        for (int64_t q = 0; q < gh * gw; ++q, ++k) {
          const Sample& s = samples[k];
          if (max_mode) {
            const double v = std::max(std::max(s.w[0] * plane[s.o[0]], s.w[1] * plane[s.o[1]]),
                                      std::max(s.w[2] * plane[s.o[2]], s.w[3] * plane[s.o[3]]));
            acc = first ? v : std::max(acc, v);
            first = false;
          } else {
            acc += s.w[0] * plane[s.o[0]] + s.w[1] * plane[s.o[1]] + s.w[2] * plane[s.o[2]] + s.w[3] * plane[s.o[3]];
          }
        }
        o[p] = max_mode ? acc : acc / count;
      }
    }
  }
  store_doubles(out[0], res);
}

// ---- MaxUnpool ----------------------------------------------------------------------------

// The shape MaxPool's indices refer to: per spatial dim (in - 1) * stride + kernel - pads.
Shape unpool_shape(const Node& n, const Shape& x) {
  auto bad = [&](const std::string& why) { return Error("shape", n.label() + ": " + why); };
  const size_t sp = x.size() - 2;
  const std::vector<int64_t> k = n.attr_ints("kernel_shape");
  const std::vector<int64_t> s = n.attr_ints("strides", std::vector<int64_t>(sp, 1)),
                             p = n.attr_ints("pads", std::vector<int64_t>(2 * sp, 0));
  if (k.size() != sp || s.size() != sp || p.size() != 2 * sp) throw bad("kernel_shape/strides/pads do not match X's spatial rank");
  Shape y{x[0], x[1]};
  for (size_t d = 0; d < sp; ++d) {
    if (k[d] < 1 || k[d] > (int64_t{1} << 20) || s[d] < 1 || s[d] > (int64_t{1} << 20) || p[d] < 0 || p[d + sp] < 0 ||
        p[d] > (int64_t{1} << 40) || p[d + sp] > (int64_t{1} << 40))
      throw bad("kernel_shape and strides must be in [1, 2^20], pads in [0, 2^40]");
    const int64_t v = shape_add(n, shape_mul(n, std::max<int64_t>(x[d + 2] - 1, 0), s[d]), k[d] - p[d] - p[d + sp]);
    if (x[d + 2] > 0 && v < 0) throw bad("the unpooled dim " + std::to_string(d + 2) + " would be negative");
    y.push_back(x[d + 2] == 0 ? 0 : v);
  }
  return y;
}

void maxunpool_infer(InferContext& ctx) {
  const Node& n = ctx.node();
  const Shape& x = ctx.shape(0);
  if (x.size() < 3) ctx.fail("X must be [N, C, D1, ...], got " + shape_str(x));
  if (ctx.shape(1) != x) ctx.fail("I must have X's shape " + shape_str(x) + ", got " + shape_str(ctx.shape(1)));
  if (ctx.dtype(1) != DType::i64) ctx.fail("I must be int64");
  Shape y = unpool_shape(n, x);
  if (ctx.has_input(2)) {
    const Tensor& os = ctx.require_constant(2);
    if (os.numel() != static_cast<int64_t>(x.size())) ctx.fail("output_shape must have " + std::to_string(x.size()) + " elements");
    y = ints_of(os);
    if (y[0] != x[0] || y[1] != x[1]) ctx.fail("output_shape " + shape_str(y) + " must keep X's N and C");
    for (int64_t v : y)
      if (v < 0) ctx.fail("output_shape " + shape_str(y) + " has a negative dim");
  }
  ctx.set_output(0, ctx.dtype(0), y);
}

// As the ONNX reference (and the ONNX node suite's output_shape case): the values land in the
// unpooled shape the indices refer to, which is then placed at the origin of output_shape
// (cropped where output_shape is smaller). onnxruntime instead indexes the output_shape tensor
// directly; the suite's data decides. Elements are copied as bytes: 64-bit integers stay exact.
void maxunpool_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor& x = *in[0];
  Tensor& y = out[0];
  const Shape d = unpool_shape(n, x.shape());
  const int64_t dn = shape_numel(d);
  const size_t es = dtype_size(x.dtype());
  const std::vector<int64_t> idx = ints_of(*in[1]);
  std::vector<unsigned char> un(static_cast<size_t>(dn) * es, 0);
  for (size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] < 0 || idx[i] >= dn)
      ref_fail(n, "index " + std::to_string(idx[i]) + " is outside the unpooled " + shape_str(d));
    std::memcpy(un.data() + static_cast<size_t>(idx[i]) * es, x.raw() + i * es, es);
  }
  const Shape& ys = y.shape();
  const Shape ds = contiguous_strides(d), yst = contiguous_strides(ys);
  std::memset(y.raw(), 0, y.nbytes());
  for (int64_t e = 0; e < y.numel(); ++e) {
    int64_t src = 0;
    bool inside = true;
    for (size_t a = 0; a < ys.size() && inside; ++a) {
      const int64_t c = (e / yst[a]) % ys[a];
      inside = c < d[a];
      src += c * ds[a];
    }
    if (inside) std::memcpy(y.raw() + static_cast<size_t>(e) * es, un.data() + static_cast<size_t>(src) * es, es);
  }
}

// ---- DeformConv ---------------------------------------------------------------------------

struct DeformGeom {
  int64_t N = 0, C = 0, H = 0, W = 0, OC = 0, kh = 0, kw = 0, oh = 0, ow = 0, group = 1, og = 1;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;
};

DeformGeom deform_geom(const Node& n, const Shape& x, const Shape& w, const Shape& off, const Shape* b, const Shape* mask) {
  auto bad = [&](const std::string& why) { return Error("shape", n.label() + ": " + why); };
  if (x.size() != 4 || w.size() != 4 || off.size() != 4) throw bad("only 2-D DeformConv is supported: X, W and offset must be 4-D");
  DeformGeom g;
  g.N = x[0], g.C = x[1], g.H = x[2], g.W = x[3], g.OC = w[0];
  const std::vector<int64_t> k = n.attr_ints("kernel_shape", {w[2], w[3]});
  const std::vector<int64_t> st = n.attr_ints("strides", {1, 1}), dl = n.attr_ints("dilations", {1, 1});
  const std::vector<int64_t> pd = n.attr_ints("pads", {0, 0, 0, 0});
  if (k.size() != 2 || st.size() != 2 || dl.size() != 2 || pd.size() != 4) throw bad("kernel_shape, strides, dilations need 2 values, pads 4");
  g.kh = k[0], g.kw = k[1], g.sh = st[0], g.sw = st[1], g.dh = dl[0], g.dw = dl[1], g.ph = pd[0], g.pw = pd[1];
  g.group = n.attr_i("group", 1), g.og = n.attr_i("offset_group", 1);
  for (int64_t v : {g.sh, g.sw, g.dh, g.dw})
    if (v < 1 || v > (int64_t{1} << 20)) throw bad("strides and dilations must be in [1, 2^20]");
  for (int64_t v : pd)
    if (v < 0 || v > (int64_t{1} << 40)) throw bad("pads must be in [0, 2^40]");
  if (g.kh != w[2] || g.kw != w[3]) throw bad("kernel_shape differs from W's " + shape_str(w));
  if (g.group < 1 || g.C % g.group || g.OC % g.group || w[1] * g.group != g.C)
    throw bad("group " + std::to_string(g.group) + " does not split X's " + std::to_string(g.C) + " and W's channels " + shape_str(w));
  if (g.og < 1 || g.C % g.og) throw bad("offset_group " + std::to_string(g.og) + " must divide the " + std::to_string(g.C) + " channels");
  if (g.kh < 1 || g.kw < 1) throw bad("the kernel must not be empty");
  const int64_t eh = shape_mul(n, g.kh - 1, g.dh) + 1, ew = shape_mul(n, g.kw - 1, g.dw) + 1;
  g.oh = (g.H + pd[0] + pd[2] - eh) / g.sh + 1, g.ow = (g.W + pd[1] + pd[3] - ew) / g.sw + 1;
  if (g.H + pd[0] + pd[2] < eh || g.W + pd[1] + pd[3] < ew) throw bad("the dilated kernel is larger than the padded input");
  const Shape want_off{g.N, g.og * g.kh * g.kw * 2, g.oh, g.ow};
  if (off != want_off) throw bad("offset must be " + shape_str(want_off) + ", got " + shape_str(off));
  if (b && *b != Shape{g.OC}) throw bad("B must be [" + std::to_string(g.OC) + "], got " + shape_str(*b));
  const Shape want_mask{g.N, g.og * g.kh * g.kw, g.oh, g.ow};
  if (mask && *mask != want_mask) throw bad("mask must be " + shape_str(want_mask) + ", got " + shape_str(*mask));
  return g;
}

void deformconv_infer(InferContext& ctx) {
  if (!dtype_is_float(ctx.dtype(0))) ctx.fail(std::string("X must be float, got ") + dtype_name(ctx.dtype(0)));
  for (int i = 1; i < 5; ++i)
    if (ctx.has_input(i) && ctx.dtype(i) != ctx.dtype(0)) ctx.fail("every input must have X's dtype");
  const DeformGeom g = deform_geom(ctx.node(), ctx.shape(0), ctx.shape(1), ctx.shape(2), ctx.has_input(3) ? &ctx.shape(3) : nullptr,
                                   ctx.has_input(4) ? &ctx.shape(4) : nullptr);
  ctx.set_output(0, ctx.dtype(0), {g.N, g.OC, g.oh, g.ow});
}

// Deformable convolution (Dai et al. 2017; v2 with the mask, Zhu et al. 2019) as the ONNX
// reference computes it: kernel tap (i, j) of output (y, x) samples X at (y * stride - pad + i *
// dilation + offset_h, ...) bilinearly (corners outside the image count 0), times the mask.
void deformconv_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor* b = opt_in(in, 3);
  const Tensor* m = opt_in(in, 4);
  const DeformGeom g = deform_geom(n, in[0]->shape(), in[1]->shape(), in[2]->shape(), b ? &b->shape() : nullptr,
                                   m ? &m->shape() : nullptr);
  const std::vector<double> x = load_doubles(*in[0]), w = load_doubles(*in[1]), off = load_doubles(*in[2]);
  const std::vector<double> bias = b ? load_doubles(*b) : std::vector<double>(), mask = m ? load_doubles(*m) : std::vector<double>();
  const int64_t cpg = g.C / g.group, opg = g.OC / g.group, cpo = g.C / g.og, taps = g.kh * g.kw, plane = g.oh * g.ow;
  std::vector<double> res(static_cast<size_t>(g.N * g.OC * plane), 0.0);
  auto sample = [&](const double* p, double y, double xx) {
    if (!(y > -1.0 && y < static_cast<double>(g.H) && xx > -1.0 && xx < static_cast<double>(g.W))) return 0.0;
    const double fy = std::floor(y), fx = std::floor(xx);
    const int64_t y0 = static_cast<int64_t>(fy), x0 = static_cast<int64_t>(fx);
    const double ly = y - fy, lx = xx - fx;
    double v = 0;
    for (int dy = 0; dy < 2; ++dy)
      for (int dx = 0; dx < 2; ++dx) {
        const int64_t yy = y0 + dy, xi = x0 + dx;
        if (yy < 0 || yy >= g.H || xi < 0 || xi >= g.W) continue;
        v += (dy ? ly : 1 - ly) * (dx ? lx : 1 - lx) * p[yy * g.W + xi];
      }
    return v;
  };
  for (int64_t nb = 0; nb < g.N; ++nb)
    for (int64_t c = 0; c < g.C; ++c) {
      const int64_t grp = c / cpg, ogi = c / cpo;
      const double* xp = x.data() + (nb * g.C + c) * g.H * g.W;
      for (int64_t t = 0; t < taps; ++t) {
        const int64_t i = t / g.kw, j = t % g.kw;
        for (int64_t p = 0; p < plane; ++p) {
          const int64_t oy = p / g.ow, ox = p % g.ow;
          const size_t ob = static_cast<size_t>(((nb * g.og + ogi) * taps + t) * 2 * plane + p);
          const double y = static_cast<double>(oy * g.sh - g.ph + i * g.dh) + off[ob];
          const double xx = static_cast<double>(ox * g.sw - g.pw + j * g.dw) + off[ob + static_cast<size_t>(plane)];
          double v = sample(xp, y, xx);
          if (m) v *= mask[static_cast<size_t>(((nb * g.og + ogi) * taps + t) * plane + p)];
          if (v == 0) continue;
          for (int64_t o = grp * opg; o < (grp + 1) * opg; ++o)
            res[static_cast<size_t>((nb * g.OC + o) * plane + p)] += w[static_cast<size_t>((o * cpg + c % cpg) * taps + t)] * v;
        }
      }
    }
  if (b)
    for (int64_t nb = 0; nb < g.N; ++nb)
      for (int64_t o = 0; o < g.OC; ++o)
        for (int64_t p = 0; p < plane; ++p) res[static_cast<size_t>((nb * g.OC + o) * plane + p)] += bias[static_cast<size_t>(o)];
  store_doubles(out[0], res);
}

// ---- MaxRoiPool ---------------------------------------------------------------------------

void maxroipool_infer(InferContext& ctx) {
  const Node& n = ctx.node();
  const Shape& x = ctx.shape(0);
  const Shape& rois = ctx.shape(1);
  if (x.size() != 4) ctx.fail("X must be [N, C, H, W], got " + shape_str(x));
  if (rois.size() != 2 || rois[1] != 5) ctx.fail("rois must be [num_rois, 5], got " + shape_str(rois));
  if (!dtype_is_float(ctx.dtype(0)) || dtype_is_small(ctx.dtype(0)) || ctx.dtype(1) != ctx.dtype(0))
    ctx.fail("X and rois must share a float dtype");
  const std::vector<int64_t> ps = n.attr_ints("pooled_shape");
  if (ps.size() != 2 || ps[0] < 1 || ps[1] < 1 || ps[0] > kMaxGrid || ps[1] > kMaxGrid)
    ctx.fail("pooled_shape must be two sizes in [1, 65536]");
  ctx.set_output(0, ctx.dtype(0), {rois[0], x[1], ps[0], ps[1]});
}

void maxroipool_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor& x = *in[0];
  const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  const int64_t R = in[1]->shape()[0];
  const std::vector<int64_t> ps = n.attr_ints("pooled_shape");
  const int64_t PH = ps[0], PW = ps[1];
  const float scale = static_cast<float>(n.attr_f("spatial_scale", 1.0));
  const std::vector<double> xv = load_doubles(x), rv = load_doubles(*in[1]);
  std::vector<double> res(static_cast<size_t>(R * C * PH * PW), 0.0);
  // A coordinate as onnxruntime forms it: float32 product, rounded half away from zero; bounded
  // so a hostile roi cannot overflow the int64 arithmetic below.
  auto coord = [&](int64_t r, int k) {
    const double v = std::round(static_cast<double>(static_cast<float>(rv[static_cast<size_t>(r * 5 + k)]) * scale));
    if (!(std::fabs(v) <= 1e15)) ref_fail(n, "roi " + std::to_string(r) + " has a coordinate that is not finite or too large");
    return static_cast<int64_t>(v);
  };
  for (int64_t r = 0; r < R; ++r) {
    const double bd = rv[static_cast<size_t>(r * 5)];
    if (!(bd >= 0 && bd < static_cast<double>(N))) {
      char v[32];
      std::snprintf(v, sizeof v, "%g", bd);
      ref_fail(n, std::string("batch index ") + v + " of roi " + std::to_string(r) + " is outside [0, " + std::to_string(N) + ")");
    }
    const int64_t b = static_cast<int64_t>(bd);
    const int64_t x1 = coord(r, 1), y1 = coord(r, 2), x2 = coord(r, 3), y2 = coord(r, 4);
    const float bh = static_cast<float>(std::max<int64_t>(y2 - y1 + 1, 1)) / static_cast<float>(PH);
    const float bw = static_cast<float>(std::max<int64_t>(x2 - x1 + 1, 1)) / static_cast<float>(PW);
    for (int64_t ph = 0; ph < PH; ++ph)
      for (int64_t pw = 0; pw < PW; ++pw) {
        const int64_t hs = std::clamp<int64_t>(static_cast<int64_t>(std::floor(static_cast<float>(ph) * bh)) + y1, 0, H);
        const int64_t he = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(static_cast<float>(ph + 1) * bh)) + y1, 0, H);
        const int64_t ws = std::clamp<int64_t>(static_cast<int64_t>(std::floor(static_cast<float>(pw) * bw)) + x1, 0, W);
        const int64_t we = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(static_cast<float>(pw + 1) * bw)) + x1, 0, W);
        if (he <= hs || we <= ws) continue;  // an empty bin is 0
        for (int64_t c = 0; c < C; ++c) {
          const double* plane = xv.data() + (b * C + c) * H * W;
          double m = -std::numeric_limits<float>::max();  // onnxruntime's start; NaN never wins a '>'
          for (int64_t h = hs; h < he; ++h)
            for (int64_t w = ws; w < we; ++w)
              if (plane[h * W + w] > m) m = plane[h * W + w];
          res[static_cast<size_t>(((r * C + c) * PH + ph) * PW + pw)] = m;
        }
      }
  }
  store_doubles(out[0], res);
}

}  // namespace

void register_vision_ops() {
  register_op(table_entry("RoiAlign", 3, 3, roialign_infer, roialign_ref));
  register_op(table_entry("MaxUnpool", 2, 3, maxunpool_infer, maxunpool_ref));
  register_op(table_entry("DeformConv", 3, 5, deformconv_infer, deformconv_ref));
  register_op(table_entry("MaxRoiPool", 2, 2, maxroipool_infer, maxroipool_ref));
}

}  // namespace fusor
