// Spatial ops, N-d where the spec is. GridSample has a GPU kernel (codegen_opaque_nn.cpp
// grid_sample, the same steps in double); the others run on the GPUs through host fallback.
//
//  * GridSample-16/20/22: X [N, C, D1..Dr], grid [N, G1..Gk, r] of normalized coordinates in
//    [-1, 1] listed innermost dim first (x, y, z); Y [N, C, G1..Gk]. Coordinates denormalize
//    to ((g + 1) / 2) * (L - 1) (align_corners=1) or ((g + 1) * L - 1) / 2; mode nearest
//    (round half to even), linear/bilinear (2 taps per dim), cubic/bicubic (4 taps, Keys
//    alpha = -0.75). padding_mode: for nearest and linear, a coordinate outside [lo, hi]
//    (0..L-1 with align_corners, -0.5..L-0.5 without) is clamped to 0..L-1 (border) or
//    reflected into [lo, hi] (reflection) first; cubic keeps the coordinate for its weights.
//    Then a tap outside 0..L-1 reads 0 (zeros), the clamped pixel (border) or the reflected
//    pixel (reflection). As onnxruntime and torch's grid_sample (the ONNX reference clamps
//    the cubic coordinate first, which moves all 4 taps), computed in double.
//  * AffineGrid-20: theta [N, 2, 3] or [N, 3, 4], size (constant) [N, C, H, W] or
//    [N, C, D, H, W]; grid [N, H, W, 2] / [N, D, H, W, 3] = theta @ (x, y[, z], 1) over the
//    base grid -1 + (2i + 1) / L (align_corners=0) or -1 + 2i / (L - 1) (align_corners=1).
//  * CenterCropPad-18: each listed axis (default all) cropped or zero-padded to shape[k]
//    (constant), centred: the start is (|difference|) / 2 rounded down.
//  * Col2Im-18: input [N, C * prod(block), L], image_shape and block_shape constant, attrs
//    dilations, pads (begin..., end...), strides; Y [N, C, image...] sums every block element
//    into the pixel it came from (the inverse of im2col); integers sum in 64-bit integers.
// Errors: Error("shape") naming the node for bad ranks, attributes or sizes.
#include <algorithm>
#include <cmath>
#include <limits>
#include <cstring>

#include "ir/ops/op_helpers.h"

namespace fusor {
namespace {

using namespace op_helpers;

// ---- GridSample ---------------------------------------------------------------------------

enum class GsMode { nearest, linear, cubic };
enum class GsPad { zeros, border, reflection };

GsMode gs_mode(const Node& n) {
  // GridSample-20 renamed bilinear/bicubic to linear/cubic; each opset takes only its names.
  const bool v20 = n.opset >= 20;
  const std::string m = n.attr_s("mode", v20 ? "linear" : "bilinear");
  if (m == "nearest") return GsMode::nearest;
  if (m == (v20 ? "linear" : "bilinear")) return GsMode::linear;
  if (m == (v20 ? "cubic" : "bicubic")) return GsMode::cubic;
  throw Error("shape", n.label() + ": unknown mode '" + printable(m) + "' at opset " + std::to_string(n.opset) +
                          (v20 ? " (linear, cubic or nearest since GridSample-20)" : " (bilinear, bicubic or nearest before GridSample-20)"));
}
GsPad gs_pad(const Node& n) {
  const std::string p = n.attr_s("padding_mode", "zeros");
  if (p == "zeros") return GsPad::zeros;
  if (p == "border") return GsPad::border;
  if (p == "reflection") return GsPad::reflection;
  throw Error("shape", n.label() + ": unknown padding_mode '" + printable(p) + "'");
}

// Reflects x into [lo, hi] (the ONNX reference's formula). Coordinates so far out that the
// fold count passes 2^52 (or infinite) have no meaningful reflection: NaN, never a bad cast.
double gs_reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (!(std::fabs(x - lo) / range < 4503599627370496.0)) return std::isnan(x) ? x : std::numeric_limits<double>::quiet_NaN();
  if (x < lo) {
    const double dx = lo - x;
    const int64_t k = static_cast<int64_t>(dx / range);
    const double r = dx - static_cast<double>(k) * range;
    return k % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const int64_t k = static_cast<int64_t>(dx / range);
    const double r = dx - static_cast<double>(k) * range;
    return k % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

void cubic_coeffs(double x, double* c) {
  constexpr double a = -0.75;
  x = std::fabs(x);
  c[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
  c[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
  c[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
  c[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

void gridsample_infer(InferContext& ctx) {
  const Shape &x = ctx.shape(0), &g = ctx.shape(1);
  gs_mode(ctx.node()), gs_pad(ctx.node());
  if (x.size() < 3) ctx.fail("X must have rank >= 3, got " + shape_str(x));
  const size_t r = x.size() - 2;
  if (g.size() != r + 2 || g.back() != static_cast<int64_t>(r) || g[0] != x[0])
    ctx.fail("grid must be [N, spatial..., " + std::to_string(r) + "] for X " + shape_str(x) + ", got " + shape_str(g));
  if (!dtype_is_float(ctx.dtype(0)) || dtype_is_small(ctx.dtype(0))) ctx.fail(std::string("X must be float, got ") + dtype_name(ctx.dtype(0)));
  Shape y = {x[0], x[1]};
  y.insert(y.end(), g.begin() + 1, g.end() - 1);
  // border / reflection clamp every sample into X: an empty spatial dim has nothing to clamp to
  // (zeros padding reads every sample as outside: zeros).
  if (gs_pad(ctx.node()) != GsPad::zeros && shape_numel(y) > 0)
    for (size_t d = 2; d < x.size(); ++d)
      if (x[d] == 0) ctx.fail("padding_mode " + ctx.node().attr_s("padding_mode", "zeros") + " cannot sample X " + shape_str(x) + ": spatial dim " + std::to_string(d) + " is empty");
  ctx.set_output(0, ctx.dtype(0), y);
}

void gridsample_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor &X = *in[0], &grid = *in[1];
  const GsMode mode = gs_mode(n);
  const GsPad pad = gs_pad(n);
  const bool align = n.attr_i("align_corners", 0) != 0;
  const int r = X.rank() - 2;
  const Shape& xs = X.shape();
  const int64_t N = xs[0], C = xs[1];
  int64_t spatial = 1, points = 1;
  for (int d = 0; d < r; ++d) spatial *= xs[2 + d];
  for (int d = 1; d < grid.rank() - 1; ++d) points *= grid.shape()[d];
  const std::vector<double> xv = load_doubles(X), gv = load_doubles(grid);
  std::vector<double> lo(r), hi(r);
  for (int d = 0; d < r; ++d) {
    const double L = static_cast<double>(xs[2 + d]);
    lo[d] = align ? 0.0 : -0.5;
    hi[d] = align ? L - 1 : L - 0.5;
  }
  const int taps = mode == GsMode::nearest ? 1 : mode == GsMode::linear ? 2 : 4;
  std::vector<std::vector<int64_t>> idx(r, std::vector<int64_t>(taps));
  std::vector<std::vector<double>> w(r, std::vector<double>(taps));
  std::vector<std::vector<bool>> inside(r, std::vector<bool>(taps));
  std::vector<double> res(static_cast<size_t>(N * C * points));
  for (int64_t b = 0; b < N; ++b)
    for (int64_t p = 0; p < points; ++p) {
      // Per dim (outermost first): taps, weights and which taps read a real pixel.
      for (int d = 0; d < r; ++d) {
        const int64_t L = xs[2 + d];
        const double g = gv[static_cast<size_t>((b * points + p) * r + (r - 1 - d))];  // grid lists x (innermost) first
        double c = align ? (g + 1) / 2 * static_cast<double>(L - 1) : ((g + 1) * static_cast<double>(L) - 1) / 2;
        if (mode == GsMode::nearest) c = std::nearbyint(c);  // half to even (default rounding mode)
        // Cubic keeps the coordinate (its weights come from it) and pads each of its 4 taps
        // below, as onnxruntime and torch do; clamping or reflecting it first moves the taps
        // (border: off by up to 0.37 for a point past the edge, red-team round 5).
        if (mode != GsMode::cubic && (c < lo[d] || c > hi[d])) {
          if (pad == GsPad::border) c = std::clamp(c, 0.0, static_cast<double>(L - 1));
          else if (pad == GsPad::reflection) c = gs_reflect(c, lo[d], hi[d]);
        }
        // Far-off (or NaN) coordinates only read padding; bounded so first + tap cannot overflow.
        if (std::fabs(c) > 1099511627776.0) c = std::copysign(1099511627776.0, c);
        int64_t first;
        if (mode == GsMode::nearest) {
          first = saturate_int64(c);  // the reference's astype(int32): toward zero
          w[d][0] = 1.0;
        } else {
          const int64_t x0 = saturate_int64(std::floor(c));
          const double t = c - static_cast<double>(x0);
          if (mode == GsMode::linear) {
            first = x0;
            w[d][0] = 1 - t, w[d][1] = t;
          } else {
            first = x0 - 1;
            cubic_coeffs(t, w[d].data());
          }
        }
        for (int k = 0; k < taps; ++k) {
          int64_t i = first + k;
          bool ok = true;
          if (i < 0 || i >= L) {
            if (pad == GsPad::zeros) ok = false;
            else if (pad == GsPad::border) i = std::clamp<int64_t>(i, 0, L - 1);
            else i = std::clamp<int64_t>(saturate_int64(gs_reflect(static_cast<double>(i), lo[d], hi[d])), 0, L - 1);
          }
          idx[d][k] = i, inside[d][k] = ok;
        }
      }
      // Sum over every tap combination (odometer over r dims).
      std::vector<int> t(r, 0);
      for (int64_t c = 0; c < C; ++c) {
        const double* plane = xv.data() + (b * C + c) * spatial;
        double acc = 0;
        std::fill(t.begin(), t.end(), 0);
        while (true) {
          double wt = 1;
          int64_t off = 0;
          bool ok = true;
          for (int d = 0; d < r; ++d) {
            wt *= w[d][t[d]];
            ok = ok && inside[d][t[d]];
            off = off * xs[2 + d] + idx[d][t[d]];
          }
          if (ok) acc += wt * plane[off];
          int d = r - 1;
          while (d >= 0 && ++t[d] == taps) t[d--] = 0;
          if (d < 0) break;
        }
        res[static_cast<size_t>((b * C + c) * points + p)] = acc;
      }
    }
  store_doubles(out[0], res);
}

// ---- AffineGrid ---------------------------------------------------------------------------

void affine_infer(InferContext& ctx) {
  const Tensor& size = ctx.require_constant(1);
  const Shape& th = ctx.shape(0);
  if (size.rank() != 1 || (size.numel() != 4 && size.numel() != 5)) ctx.fail("size must hold 4 or 5 values, got " + shape_str(size.shape()));
  const int r = static_cast<int>(size.numel()) - 2;
  if (th.size() != 3 || th[1] != r || th[2] != r + 1)
    ctx.fail("theta must be [N, " + std::to_string(r) + ", " + std::to_string(r + 1) + "], got " + shape_str(th));
  if (!dtype_is_float(ctx.dtype(0)) || dtype_is_small(ctx.dtype(0))) ctx.fail("theta must be float");
  Shape y = {size.get_int(0)};
  if (y[0] != th[0]) ctx.fail("size's N differs from theta's");
  for (int d = 0; d < r; ++d) {
    const int64_t v = size.get_int(2 + d);
    if (v < 0) ctx.fail("negative size");
    y.push_back(v);
  }
  y.push_back(r);
  ctx.set_output(0, ctx.dtype(0), y);
}

void affine_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor &theta = *in[0], &size = *in[1];
  const bool align = n.attr_i("align_corners", 0) != 0;
  const int r = static_cast<int>(size.numel()) - 2;
  std::vector<int64_t> dims(r);
  for (int d = 0; d < r; ++d) dims[d] = size.get_int(2 + d);
  auto base = [&](int d, int64_t i) {
    const double L = static_cast<double>(dims[d]);
    if (align) return dims[d] == 1 ? -1.0 : -1.0 + 2.0 * static_cast<double>(i) / (L - 1);
    return -1.0 + (2.0 * static_cast<double>(i) + 1.0) / L;
  };
  int64_t points = 1;
  for (auto v : dims) points *= v;
  const std::vector<double> th = load_doubles(theta);
  std::vector<double> res(static_cast<size_t>(theta.shape()[0] * points * r));
  std::vector<double> v(r + 1);
  for (int64_t b = 0; b < theta.shape()[0]; ++b)
    for (int64_t p = 0; p < points; ++p) {
      int64_t rem = p;
      for (int d = r - 1; d >= 0; --d) {  // v = (x, y[, z], 1): the innermost dim first
        v[r - 1 - d] = base(d, rem % dims[d]);
        rem /= dims[d];
      }
      v[r] = 1.0;
      for (int k = 0; k < r; ++k) {
        double acc = 0;
        for (int j = 0; j <= r; ++j) acc += th[static_cast<size_t>((b * r + k) * (r + 1) + j)] * v[j];
        res[static_cast<size_t>((b * points + p) * r + k)] = acc;
      }
    }
  store_doubles(out[0], res);
}

// ---- CenterCropPad ------------------------------------------------------------------------

std::vector<int64_t> ccp_axes(const Node& n, int64_t rank, int64_t count) {
  std::vector<int64_t> axes;
  if (n.has_attr("axes")) {
    for (auto a : n.attr_ints("axes")) axes.push_back(normalize_axis(a, rank, n.label()));
  } else {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  if (static_cast<int64_t>(axes.size()) != count)
    throw Error("shape", n.label() + ": shape has " + std::to_string(count) + " values for " + std::to_string(axes.size()) + " axes");
  return axes;
}

void ccp_infer(InferContext& ctx) {
  const Tensor& shape = ctx.require_constant(1);
  Shape y = ctx.shape(0);
  const auto axes = ccp_axes(ctx.node(), static_cast<int64_t>(y.size()), shape.numel());
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t v = shape.get_int(static_cast<int64_t>(k));
    if (v < 0) ctx.fail("negative target size");
    y[axes[k]] = v;
  }
  ctx.set_output(0, ctx.dtype(0), y);
}

void ccp_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor& x = *in[0];
  if (x.dtype() == DType::string) ref_fail(n, "string tensors are not supported");
  Tensor& y = out[0];
  std::memset(y.raw(), 0, y.nbytes());
  const int64_t r = x.rank();
  // Per axis: output index o reads input index o + shift (cropping: shift > 0; padding: < 0).
  std::vector<int64_t> shift(r, 0);
  for (int64_t d = 0; d < r; ++d) {
    const int64_t in_d = x.shape()[d], out_d = y.shape()[d];
    shift[d] = in_d >= out_d ? (in_d - out_d) / 2 : -((out_d - in_d) / 2);
  }
  const size_t es = dtype_size(x.dtype());
  const Shape xst = contiguous_strides(x.shape());
  std::vector<int64_t> idx(r, 0);
  for (int64_t e = 0; e < y.numel(); ++e) {
    int64_t off = 0;
    bool ok = true;
    for (int64_t d = 0; d < r; ++d) {
      const int64_t i = idx[d] + shift[d];
      ok = ok && i >= 0 && i < x.shape()[d];
      off += i * xst[d];
    }
    if (ok) std::memcpy(y.raw() + e * es, x.raw() + off * es, es);
    for (int64_t d = r - 1; d >= 0; --d) {
      if (++idx[d] < y.shape()[d]) break;
      idx[d] = 0;
    }
  }
}

// ---- Col2Im -------------------------------------------------------------------------------

struct Col2ImGeom {
  std::vector<int64_t> image, block, dil, pads, strides, blocks_per_dim;
  int64_t channels = 0, count = 1;
};

Col2ImGeom col2im_geom(const Node& n, const Shape& x, const Tensor& image, const Tensor& block) {
  Col2ImGeom g;
  const int64_t r = image.numel();
  if (r < 1 || block.numel() != r) throw Error("shape", n.label() + ": image_shape and block_shape must have the same length >= 1");
  int64_t bprod = 1;
  for (int64_t d = 0; d < r; ++d) {
    g.image.push_back(image.get_int(d));
    g.block.push_back(block.get_int(d));
    if (g.block.back() < 1 || g.image.back() < 0) throw Error("shape", n.label() + ": block_shape must be positive and image_shape non-negative");
    bprod = shape_mul(n, bprod, g.block.back());
  }
  g.dil = n.has_attr("dilations") ? n.attr_ints("dilations") : std::vector<int64_t>(r, 1);
  g.strides = n.has_attr("strides") ? n.attr_ints("strides") : std::vector<int64_t>(r, 1);
  g.pads = n.has_attr("pads") ? n.attr_ints("pads") : std::vector<int64_t>(2 * r, 0);
  for (int64_t v : g.pads)
    if (v > kMaxShapeElements || v < -kMaxShapeElements) throw Error("shape", n.label() + ": pads value beyond 2^56");
  if (static_cast<int64_t>(g.dil.size()) != r || static_cast<int64_t>(g.strides.size()) != r || static_cast<int64_t>(g.pads.size()) != 2 * r)
    throw Error("shape", n.label() + ": dilations/strides need " + std::to_string(r) + " values, pads " + std::to_string(2 * r));
  if (x.size() != 3 || bprod <= 0 || x[1] % bprod != 0)
    throw Error("shape", n.label() + ": input must be [N, C * " + std::to_string(bprod) + ", L], got " + shape_str(x));
  g.channels = x[1] / bprod;
  for (int64_t d = 0; d < r; ++d) {
    if (g.strides[d] <= 0 || g.dil[d] <= 0) throw Error("shape", n.label() + ": strides and dilations must be positive");
    const int64_t span = shape_add(n, shape_mul(n, g.dil[d], shape_add(n, g.block[d], -1)), 1);
    const int64_t padded = shape_add(n, shape_add(n, g.image[d], g.pads[d]), g.pads[d + r]);
    const int64_t nb = shape_add(n, padded, -span) / g.strides[d] + 1;
    if (nb <= 0) throw Error("shape", n.label() + ": the block does not fit the padded image");
    g.blocks_per_dim.push_back(nb);
    g.count = shape_mul(n, g.count, nb);
  }
  if (x[2] != g.count)
    throw Error("shape", n.label() + ": input has " + std::to_string(x[2]) + " blocks, the geometry gives " + std::to_string(g.count));
  return g;
}

void col2im_infer(InferContext& ctx) {
  const Col2ImGeom g = col2im_geom(ctx.node(), ctx.shape(0), ctx.require_constant(1), ctx.require_constant(2));
  Shape y = {ctx.shape(0)[0], g.channels};
  y.insert(y.end(), g.image.begin(), g.image.end());
  ctx.set_output(0, ctx.dtype(0), y);
}

void col2im_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor& x = *in[0];
  const Col2ImGeom g = col2im_geom(n, x.shape(), *in[1], *in[2]);
  const int64_t r = static_cast<int64_t>(g.image.size());
  int64_t bprod = 1, iprod = 1;
  for (int64_t d = 0; d < r; ++d) bprod *= g.block[d], iprod *= g.image[d];
  // Integers sum as integers (wrapping like numpy), so int64 past 2^53 stays exact.
  const bool ints = dtype_is_int(x.dtype());
  const std::vector<double> xv = ints ? std::vector<double>() : load_doubles(x);
  const std::vector<int64_t> xi = ints ? ints_of(x) : std::vector<int64_t>();
  const size_t total = static_cast<size_t>(x.shape()[0] * g.channels * iprod);
  std::vector<double> res(ints ? 0 : total, 0.0);
  std::vector<uint64_t> ires(ints ? total : 0, 0);
  std::vector<int64_t> kb(r), bl(r);
  for (int64_t b = 0; b < x.shape()[0]; ++b)
    for (int64_t c = 0; c < g.channels; ++c)
      for (int64_t k = 0; k < bprod; ++k) {
        int64_t rem = k;
        for (int64_t d = r - 1; d >= 0; --d) kb[d] = rem % g.block[d], rem /= g.block[d];
        for (int64_t l = 0; l < g.count; ++l) {
          rem = l;
          for (int64_t d = r - 1; d >= 0; --d) bl[d] = rem % g.blocks_per_dim[d], rem /= g.blocks_per_dim[d];
          int64_t off = 0;
          bool ok = true;
          for (int64_t d = 0; d < r; ++d) {
            const int64_t pos = bl[d] * g.strides[d] + kb[d] * g.dil[d] - g.pads[d];
            ok = ok && pos >= 0 && pos < g.image[d];
            off = off * g.image[d] + pos;
          }
          if (!ok) continue;
          const size_t dst = static_cast<size_t>((b * g.channels + c) * iprod + off);
          const size_t src = static_cast<size_t>(((b * g.channels + c) * bprod + k) * g.count + l);
          if (ints)
            ires[dst] += static_cast<uint64_t>(xi[src]);
          else
            res[dst] += xv[src];
        }
      }
  if (ints)
    for (size_t i = 0; i < total; ++i) out[0].set_int(static_cast<int64_t>(i), static_cast<int64_t>(ires[i]));
  else
    store_doubles(out[0], res);
}

}  // namespace

void register_grid_ops() {
  register_op(table_entry("GridSample", 2, 2, gridsample_infer, gridsample_ref));
  register_op(table_entry("AffineGrid", 2, 2, affine_infer, affine_ref));
  register_op(table_entry("CenterCropPad", 2, 2, ccp_infer, ccp_ref));
  register_op(table_entry("Col2Im", 3, 3, col2im_infer, col2im_ref));
}

}  // namespace fusor
