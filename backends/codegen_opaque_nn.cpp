// Opaque kernels of the shared emitter, part 2: direct convolutions, LRN, slices, gathers
// and scatters by index, padding, tiling, one-hot, direct matmul, global pooling, GridSample.
#include "backends/codegen_emitter.h"
#include "ir/conv_geometry.h"
#include "ir/slice_view.h"

namespace fusor::codegen_detail {

std::string Emitter::conv_direct(const Node& n, int out) const {
  const int x = in_buf(0), w = in_buf(1);
  const Shape& xs = buffer(x).shape;
  const Shape& ws = buffer(w).shape;
  const Shape& os = buffer(out).shape;
  const int nd = static_cast<int>(xs.size()) - 2;
  if (nd < 1 || nd > 3 || ws.size() != xs.size())
    throw Unsupported(d_.name, n.label() + ": Conv needs 1-3 spatial dims");
  const int64_t group = n.attr_i("group", 1), C = xs[1], M = ws[0], Cg = C / group, Mg = M / group;
  auto strides = n.attr_ints("strides", std::vector<int64_t>(nd, 1));
  auto dil = n.attr_ints("dilations", std::vector<int64_t>(nd, 1));
  auto pads = n.attr_ints("pads", std::vector<int64_t>(2 * nd, 0));
  const std::string ap = n.attr_s("auto_pad", "NOTSET");
  std::vector<int64_t> pb(nd, 0);
  for (int i = 0; i < nd; ++i) {
    const int64_t k = ws[2 + i];
    if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      const int64_t dk = (k - 1) * dil[i] + 1, o = (xs[2 + i] + strides[i] - 1) / strides[i];
      const int64_t total = std::max<int64_t>(0, (o - 1) * strides[i] + dk - xs[2 + i]);
      pb[i] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else if (ap != "VALID") {
      pb[i] = pads[i];
    }
  }
  int64_t in_sz = 1, out_sz = 1, k_sz = 1;
  for (int i = 0; i < nd; ++i) in_sz *= xs[2 + i], out_sz *= os[2 + i], k_sz *= ws[2 + i];
  std::string s = "    fz_idx fz_m = (fz_o / " + lit(out_sz) + ") % " + lit(M) + ";\n";
  s += "    fz_idx fz_n = fz_o / " + lit(out_sz * M) + ";\n";
  s +=
      "    fz_idx fz_xb = (fz_n * " + lit(C) + " + (fz_m / " + lit(Mg) + ") * " + lit(Cg) + ") * " + lit(in_sz) + ";\n";
  s += "    fz_idx fz_wb = fz_m * " + lit(Cg * k_sz) + ";\n";
  for (int i = 0; i < nd; ++i) {
    int64_t inner = 1;
    for (int j = i + 1; j < nd; ++j) inner *= os[2 + j];
    s += "    fz_idx fz_s" + std::to_string(i) + " = ((fz_o / " + lit(inner) + ") % " + lit(os[2 + i]) + ") * " +
         lit(strides[i]) + " - " + lit(pb[i]) + ";\n";
  }
  return s + window_sum(x, w, out, Cg, k_sz, [&](int i, const std::string& si, const std::string& ind) {
           return std::make_pair(
               ind + "fz_idx fz_p" + si + " = fz_s" + si + " + fz_k" + si + " * " + lit(dil[i]) + ";\n",
               "fz_p" + si + " >= " + lit(0) + " && fz_p" + si + " < " + lit(xs[2 + i]));
         });
}

std::string Emitter::window_sum(
    int x, int w, int out, int64_t cg, int64_t w_c_stride,
    const std::function<std::pair<std::string, std::string>(int, const std::string&, const std::string&)>& position)
    const {
  const Shape& xs = buffer(x).shape;
  const Shape& ws = buffer(w).shape;
  const int nd = static_cast<int>(xs.size()) - 2;
  int64_t in_sz = 1;
  for (int i = 0; i < nd; ++i) in_sz *= xs[2 + i];
  std::string s = "    float fz_acc = " + std::string(has_in(2) ? load_of(in_buf(2), "fz_m") : "0.0f") + ";\n";
  s += "    for (fz_idx fz_c = " + lit(0) + "; fz_c < " + lit(cg) + "; ++fz_c) {\n";
  std::string ind = "      ", cond, xoff = "fz_xb + fz_c * " + lit(in_sz), woff = "fz_wb + fz_c * " + lit(w_c_stride);
  for (int i = 0; i < nd; ++i) {
    const std::string si = std::to_string(i);
    s += ind + "for (fz_idx fz_k" + si + " = " + lit(0) + "; fz_k" + si + " < " + lit(ws[2 + i]) + "; ++fz_k" + si +
         ") {\n";
    ind += "  ";
    auto [lines, inside] = position(i, si, ind);
    s += lines;
    cond += std::string(cond.empty() ? "" : " && ") + inside;
    int64_t xi = 1, wi = 1;
    for (int j = i + 1; j < nd; ++j) xi *= xs[2 + j], wi *= ws[2 + j];
    xoff += " + fz_p" + si + " * " + lit(xi);
    woff += " + fz_k" + si + " * " + lit(wi);
  }
  s += ind + "if (" + cond + ") fz_acc = fz_acc + " + load_of(x, xoff) + " * " + load_of(w, woff) + ";\n";
  for (int i = nd - 1; i >= 0; --i) {
    ind.resize(ind.size() - 2);
    s += ind + "}\n";
  }
  return s + "    }\n    " + store_of(out, "fz_o", "fz_acc") + "\n";
}

std::string Emitter::conv_transpose(const Node& n, int out) const {
  const int x = in_buf(0), w = in_buf(1);
  const Shape& xs = buffer(x).shape;
  const Shape& ws = buffer(w).shape;
  const Shape& os = buffer(out).shape;
  const int nd = static_cast<int>(xs.size()) - 2;
  if (nd < 1 || nd > 3 || ws.size() != xs.size() || os.size() != xs.size())
    throw Unsupported(d_.name, n.label() + ": ConvTranspose needs 1-3 spatial dims");
  for (int b : k_.opaque_inputs)
    if (b >= 0 && dtype_of(b) == DType::f64)
      throw Unsupported(d_.name, n.label() + ": float64 arithmetic is not generated (fp32 only)");
  const int64_t G = n.attr_i("group", 1), C = xs[1], Cg = C / G, Mg = ws[1], M = Mg * G;
  const ConvTransposeAxes ax = convtranspose_axes(n, xs, ws);  // the shape rule's geometry
  if (os[1] != M) fail(n.label() + ": malformed ConvTranspose attributes");
  const std::vector<int64_t>&strides = ax.s, &dil = ax.d, &pb = ax.pb;
  int64_t in_sz = 1, out_sz = 1, k_sz = 1;
  for (int i = 0; i < nd; ++i) in_sz *= xs[2 + i], out_sz *= os[2 + i], k_sz *= ws[2 + i];
  std::string s = "    fz_idx fz_m = (fz_o / " + lit(out_sz) + ") % " + lit(M) + ";\n";
  s += "    fz_idx fz_n = fz_o / " + lit(out_sz * M) + ";\n";
  s += "    fz_idx fz_g = fz_m / " + lit(Mg) + ";\n";
  s += "    fz_idx fz_xb = (fz_n * " + lit(C) + " + fz_g * " + lit(Cg) + ") * " + lit(in_sz) + ";\n";
  s += "    fz_idx fz_wb = (fz_g * " + lit(Cg) + " * " + lit(Mg) + " + fz_m % " + lit(Mg) + ") * " + lit(k_sz) + ";\n";
  for (int i = 0; i < nd; ++i) {
    int64_t inner = 1;
    for (int j = i + 1; j < nd; ++j) inner *= os[2 + j];
    s += "    fz_idx fz_s" + std::to_string(i) + " = ((fz_o / " + lit(inner) + ") % " + lit(os[2 + i]) + ") + " +
         lit(pb[i]) + ";\n";
  }
  return s + window_sum(x, w, out, Cg, Mg * k_sz, [&](int i, const std::string& si, const std::string& ind) {
           // t = o + pb - k*d; checked non-negative before '%' and '/' (GLSL leaves negatives undefined).
           std::string lines = ind + "fz_idx fz_t" + si + " = fz_s" + si + " - fz_k" + si + " * " + lit(dil[i]) + ";\n";
           lines += ind + "fz_idx fz_p" + si + " = fz_t" + si + " >= " + lit(0) + " ? fz_t" + si + " / " +
                    lit(strides[i]) + " : " + lit(-1) + ";\n";
           return std::make_pair(lines, "fz_t" + si + " >= " + lit(0) + " && fz_t" + si + " % " + lit(strides[i]) +
                                            " == " + lit(0) + " && fz_p" + si + " < " + lit(xs[2 + i]));
         });
}

std::string Emitter::lrn(const Node& n, int out) const {
  const int x = in_buf(0);
  const Shape& xs = buffer(x).shape;
  if (xs.size() < 2) fail(n.label() + ": LRN input must have rank >= 2");
  if (dtype_of(x) == DType::f64)
    throw Unsupported(d_.name, n.label() + ": float64 arithmetic is not generated (fp32 only)");
  const int64_t size = n.attr_i("size", 0);
  if (size < 1) fail(n.label() + ": LRN size must be positive");
  const double alpha = n.attr_f("alpha", 1e-4), beta = n.attr_f("beta", 0.75), bias = n.attr_f("bias", 1.0);
  const int64_t C = xs[1], sp = xs[0] * C != 0 ? shape_numel(xs) / (xs[0] * C) : 0;
  // A window reaching past every channel sums all of them: clamped to C so the literals fit.
  const int64_t lo = std::min((size - 1) / 2, C), hi = std::min(size - 1 - (size - 1) / 2, C);
  std::string s = "    fz_idx fz_c = (fz_o / " + lit(sp) + ") % " + lit(C) + ";\n";
  s += "    fz_idx fz_base = fz_o - fz_c * " + lit(sp) + ";\n";
  s += "    fz_idx fz_lo = fz_c - " + lit(lo) + " < " + lit(0) + " ? " + lit(0) + " : fz_c - " + lit(lo) + ";\n";
  s +=
      "    fz_idx fz_hi = fz_c + " + lit(hi) + " > " + lit(C - 1) + " ? " + lit(C - 1) + " : fz_c + " + lit(hi) + ";\n";
  s += "    float fz_sq = 0.0f;\n";
  s += "    for (fz_idx fz_k = fz_lo; fz_k <= fz_hi; ++fz_k) {\n";
  s += "      float fz_v = " + load_of(x, "fz_base + fz_k * " + lit(sp)) +
       ";\n      fz_sq = fz_sq + fz_v * fz_v;\n    }\n";
  const std::string den =
      rename_intrinsics("pow(" + fz_float_literal(bias) + " + " + fz_float_literal(alpha / static_cast<double>(size)) +
                            " * fz_sq, " + fz_float_literal(beta) + ")",
                        d_);
  return s + "    " + store_of(out, "fz_o", load_of(x, "fz_o") + " / " + den) + "\n";
}

std::string Emitter::slice(const Node& n, int out) const {
  const int x = in_buf(0);
  const Shape& xs = buffer(x).shape;
  std::vector<int64_t> starts, ends, axes, steps;
  if (n.has_attr("starts")) {
    starts = n.attr_ints("starts"), ends = n.attr_ints("ends"), axes = n.attr_ints("axes");
  } else {
    starts = const_ints(1, "starts"), ends = const_ints(2, "ends");
    if (n.has_input(3)) axes = const_ints(3, "axes");
    if (n.has_input(4)) steps = const_ints(4, "steps");
  }
  const SliceView v = slice_view(n, xs, starts, ends, axes, steps);
  const Shape& os = buffer(out).shape;
  if (os.size() != xs.size()) fail(n.label() + ": Slice output rank differs from the input's");
  return out_coords(os) + "    " + copy(x, lit(v.offset) + " + " + coords_offset(v.strides), out, "fz_o") + "\n";
}

std::string Emitter::gather_elements(const Node& n, int out) const {
  const int data = in_buf(0), ind = in_buf(1);
  const Shape& ds = buffer(data).shape;
  const Shape& is = buffer(ind).shape;
  const int64_t axis = normalize_axis(n.attr_i("axis", 0), static_cast<int64_t>(ds.size()), n.label());
  const Shape cs = contiguous_strides(ds);
  std::string s = coords("d", "fz_o", is);
  s += "    fz_idx fz_k = " + index_of(ind, "fz_o") + ";\n" + fix_index("fz_k", ds[axis]);
  std::string off = "fz_k * " + lit(cs[axis]);
  for (size_t j = 0; j < ds.size(); ++j)
    if (static_cast<int64_t>(j) != axis) off += " + fz_d" + std::to_string(j) + " * " + lit(cs[j]);
  return s + "    " + copy(data, off, out, "fz_o") + "\n";
}

std::string Emitter::gather_nd(const Node& n, int out) const {
  const int data = in_buf(0), ind = in_buf(1);
  const Shape& xd = buffer(data).shape;
  const Shape& is = buffer(ind).shape;
  const int64_t b = n.attr_i("batch_dims", 0), k = is.back();
  const Shape xs = contiguous_strides(xd);
  int64_t batches = 1, inner = 1;
  for (int64_t d = 0; d < b; ++d) batches *= xd[d];
  for (size_t d = static_cast<size_t>(b + k); d < xd.size(); ++d) inner *= xd[d];
  const int64_t tuples = batches ? shape_numel(is) / k / batches : 0, batch_size = b ? xs[b - 1] : shape_numel(xd);
  std::string s = "    fz_idx fz_t = fz_o / " + lit(inner) + ";\n";
  s += "    fz_idx fz_off = (fz_t / " + lit(std::max<int64_t>(tuples, 1)) + ") * " + lit(batch_size) + " + fz_o % " +
       lit(inner) + ";\n";
  for (int64_t j = 0; j < k; ++j) {
    s += "    {\n      fz_idx fz_k = " + index_of(ind, "fz_t * " + lit(k) + " + " + lit(j)) + ";\n" +
         fix_index("fz_k", xd[b + j], "      ");
    s += "      fz_off += fz_k * " + lit(xs[b + j]) + ";\n    }\n";
  }
  return s + "    " + copy(data, "fz_off", out, "fz_o") + "\n";
}

std::string Emitter::trilu(const Node& n, int out) const {
  const int x = in_buf(0);
  const Shape& xs = buffer(x).shape;
  const int64_t R = xs[xs.size() - 2], C = xs.back();
  const bool upper = n.attr_i("upper", 1) != 0;
  std::string s = "    fz_idx fz_k = " +
                  (has_in(1) && shape_numel(buffer(in_buf(1)).shape) > 0 ? index_of(in_buf(1), lit(0)) : lit(0)) +
                  ";\n";
  s += "    fz_idx fz_dj = fz_o % " + lit(C) + " - (fz_o / " + lit(C) + ") % " + lit(R) + ";\n";
  s += "    if (fz_dj " + std::string(upper ? ">=" : "<=") + " fz_k) " + copy(x, "fz_o", out, "fz_o") + "\n";
  return s + "    else " + store_of(out, "fz_o", "0.0f") + "\n";
}

std::string Emitter::pad(const Node& n, int out) const {
  const int x = in_buf(0);
  const Shape& xs = buffer(x).shape;
  const Shape& os = buffer(out).shape;
  const int64_t r = static_cast<int64_t>(xs.size());
  std::vector<int64_t> pads = has_in(1) ? const_ints(1, "pads") : n.attr_ints(n.has_attr("pads") ? "pads" : "paddings");
  std::vector<int64_t> axes;
  if (has_in(3))
    axes = const_ints(3, "axes");
  else
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  if (pads.size() != 2 * axes.size()) fail(n.label() + ": pads do not match axes");
  std::vector<int64_t> begin(static_cast<size_t>(r), 0), end(static_cast<size_t>(r), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    begin[normalize_axis(axes[i], r, n.label())] = pads[i];
    end[normalize_axis(axes[i], r, n.label())] = pads[axes.size() + i];
  }
  const std::string mode = n.attr_s("mode", "constant");
  const Shape cs = contiguous_strides(xs);
  std::string s = coords("d", "fz_o", os) + "    fz_idx fz_s = " + lit(0) + ";\n    int fz_pad = 0;\n";
  for (int64_t d = 0; d < r; ++d) {
    // The op table's rule (ir/ops/shape.cpp pad_ref): negative pads crop first, the other
    // side pads from what is left, [lo, hi).
    const int64_t lo = std::max<int64_t>(-begin[d], 0), hi = xs[d] - std::max<int64_t>(-end[d], 0), kept = hi - lo;
    const std::string c = "fz_c" + std::to_string(d);
    s += "    fz_idx " + c + " = fz_d" + std::to_string(d) + " - " + lit(begin[d]) + ";\n";
    s += "    if (" + c + " < " + lit(lo) + " || " + c + " >= " + lit(hi) + ") {\n";
    // c - lo made non-negative before '%' (negative operands are undefined in GLSL): whole periods added.
    auto wrap = [&](int64_t period) {
      const int64_t k = (std::max<int64_t>(begin[d], 0) + period - 1) / period + 1;
      return "      " + c + " = (" + c + " - " + lit(lo) + " + " + lit(k * period) + ") % " + lit(period) + ";\n";
    };
    if (mode == "constant")
      s += "      fz_pad = 1;\n";
    else if (mode == "edge")
      s += "      " + c + " = " + c + " < " + lit(lo) + " ? " + lit(lo) + " : " + lit(hi - 1) + ";\n";
    else if (mode == "wrap")
      s += wrap(kept) + "      " + c + " += " + lit(lo) + ";\n";
    else if (mode == "reflect") {
      if (kept == 1)
        s += "      " + c + " = " + lit(lo) + ";\n";
      else
        s += wrap(2 * (kept - 1)) + "      if (" + c + " >= " + lit(kept) + ") " + c + " = " + lit(2 * (kept - 1)) + " - " + c +
             ";\n      " + c + " += " + lit(lo) + ";\n";
    } else
      throw Unsupported(d_.name, n.label() + ": Pad mode '" + mode + "'");
    s += "    }\n    fz_s += " + c + " * " + lit(cs[d]) + ";\n";
  }
  std::string value;
  if (has_in(2) && shape_numel(buffer(in_buf(2)).shape) > 0)
    value = copy(in_buf(2), lit(0), out, "fz_o");
  else
    value = store_of(out, "fz_o", fz_float_literal(n.attr_f("value", 0.0)));
  return s + "    if (fz_pad != 0) " + value + "\n    else " + copy(x, "fz_s", out, "fz_o") + "\n";
}

std::string Emitter::walk_copy(const Node& n, int out) const {
  const int x = in_buf(0);
  const Shape& xs = buffer(x).shape;
  const Shape cs = contiguous_strides(xs);
  Shape walk;
  std::vector<int64_t> st;
  if (n.op_type == "Tile") {
    const Shape& os = buffer(out).shape;
    for (size_t i = 0; i < xs.size(); ++i) {
      walk.push_back(xs[i] ? os[i] / xs[i] : 0), st.push_back(0);
      walk.push_back(xs[i]), st.push_back(cs[i]);
    }
  } else {  // DepthToSpace / SpaceToDepth: the op table's walk (ir/slice_view.h)
    BlockWalk w = depth_space_walk(n, xs);
    walk = std::move(w.walk), st = std::move(w.strides);
  }
  return out_coords(walk) + "    " + copy(x, coords_offset(st), out, "fz_o") + "\n";
}

std::string Emitter::eye_like(const Node& n, int out) const {
  const int64_t C = buffer(out).shape[1], k = n.attr_i("k", 0);
  return "    " +
         store_of(out, "fz_o", "(fz_o % " + lit(C) + " - fz_o / " + lit(C) + " == " + lit(k) + " ? 1.0f : 0.0f)") +
         "\n";
}

std::string Emitter::one_hot(const Node& n, int out) const {
  const int ind = in_buf(0), values = in_buf(2);
  const Shape& os = buffer(out).shape;
  const int64_t axis = normalize_axis(n.attr_i("axis", -1), static_cast<int64_t>(os.size()), n.label()),
                depth = os[axis];
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; d < os.size(); ++d) inner *= os[d];
  std::string s = "    fz_idx fz_v = (fz_o / " + lit(inner) + ") % " + lit(depth) + ";\n";
  s += "    fz_idx fz_i = (fz_o / " + lit(inner * depth) + ") * " + lit(inner) + " + fz_o % " + lit(inner) + ";\n";
  s += "    fz_idx fz_k = " + index_of(ind, "fz_i") + ";\n    if (fz_k < " + lit(0) + ") fz_k += " + lit(depth) + ";\n";
  return s + "    if (fz_k == fz_v) " + copy(values, lit(1), out, "fz_o") + "\n    else " +
         copy(values, lit(0), out, "fz_o") + "\n";
}

Emitter::ScatterPlan Emitter::scatter_plan(const Node& n) const {
  const Shape& xs = buffer(in_buf(0)).shape;
  const Shape& is = buffer(in_buf(1)).shape;
  const int64_t outputs = shape_numel(xs);
  ScatterPlan p;
  // scan_trips: the updates one output element's thread reads (ND: every index tuple; Elements:
  // the updates on its own line along the axis).
  int64_t owners = 0, owner_trips = 0, scan_trips = 0;
  if (n.op_type == "ScatterND") {
    const int64_t k = is.empty() ? 0 : is.back(), tuples = k > 0 ? shape_numel(is) / k : 0;
    p.inner = 1;
    for (size_t j = static_cast<size_t>(std::max<int64_t>(k, 0)); j < xs.size(); ++j) p.inner *= xs[j];
    owners = p.inner;
    owner_trips = (p.inner ? outputs / p.inner : 0) + tuples;
    scan_trips = tuples;
  } else {
    p.axis = normalize_axis(n.attr_i("axis", 0), static_cast<int64_t>(xs.size()), n.label());
    owners = xs[p.axis] ? outputs / xs[p.axis] : 0;
    owner_trips = xs[p.axis] + is[p.axis];
    scan_trips = is[p.axis];
  }
  p.owner = lane_cost(owners, owner_trips) < lane_cost(outputs, scan_trips);
  p.threads = p.owner ? owners : outputs;
  p.trips = p.owner ? owner_trips : scan_trips;
  p.cost = lane_cost(p.threads, p.trips);
  return p;
}

// out[dst] = out[dst] (reduction) upd[u], or the update alone without one.
std::string Emitter::scatter_combine(const Node& n, int out, const std::string& dst, int upd, const std::string& u,
                                     const std::string& ind) const {
  const std::string red = n.attr_s("reduction", "none");
  if (red == "none") return ind + copy(upd, u, out, dst) + "\n";
  // Integer and float64 data combine in their own type (wrapping, as ref's scatter_combine);
  // the rest through float. max / min propagate NaN as Max / Min do.
  const DType xt = dtype_of(out);
  const bool typed = dtype_is_int(xt) || xt == DType::f64;
  const std::string comb = red == "add"   ? (dtype_is_int(xt) ? "fz_iadd(fz_a, fz_b)" : "fz_a + fz_b")
                           : red == "mul" ? (dtype_is_int(xt) ? "fz_imul(fz_a, fz_b)" : "fz_a * fz_b")
                           : red == "max" ? "fz_max(fz_a, fz_b)"
                           : red == "min" ? "fz_min(fz_a, fz_b)"
                                          : "";
  if (comb.empty()) throw Unsupported(d_.name, n.label() + ": reduction '" + red + "'");
  if (typed)
    return ind + "{\n" + ind + "  " + local(xt) + "fz_a = " + typed_load(out, dst) + ";\n" + ind + "  " + local(xt) +
           "fz_b = " + typed_load(upd, u) + ";\n" + ind + "  " + typed_store(out, dst, convert_value(d_, xt, xt, comb, true)) +
           "\n" + ind + "}\n";
  return ind + "{\n" + ind + "  float fz_a = " + load_of(out, dst) + ";\n" + ind + "  float fz_b = " + load_of(upd, u) + ";\n" +
         ind + "  " + store_of(out, dst, comb) + "\n" + ind + "}\n";
}

std::string Emitter::scatter(const Node& n, int out) const {
  const int data = in_buf(0), ind = in_buf(1), upd = in_buf(2);
  const Shape& xs = buffer(data).shape;
  const Shape& is = buffer(ind).shape;
  const Shape cs = contiguous_strides(xs);
  const ScatterPlan p = scatter_plan(n);
  // Past kMaxLaneCost serial iterations a lane (a 1-D index_put of 300,000 elements: one owner
  // thread, or every thread scanning every update) the host's O(data + updates) loop is faster:
  // refused, so the node runs there.
  if (p.cost > max_lane_cost())
    throw Unsupported(d_.name, n.label() + ": " + n.op_type + " would run " + std::to_string(p.trips) + " serial iterations in each of " +
                                   std::to_string(p.threads) + " threads; the host's loop is O(data + updates)");
  std::string s;
  s += std::string("    // scatter: ") + (p.owner ? "owner" : "scan") + " kernel\n";  // named for tests and readers
  // ND: the loop over index tuples fz_t, each giving fz_dst = `start` + the tuple's slab start.
  auto tuples_loop = [&](const std::string& start) {
    const int64_t k = is.back(), tuples = shape_numel(is) / std::max<int64_t>(k, 1);
    std::string r = "    for (fz_idx fz_t = " + lit(0) + "; fz_t < " + lit(tuples) + "; ++fz_t) {\n      fz_idx fz_dst = " + start + ";\n";
    for (int64_t j = 0; j < k; ++j)
      r += "      {\n        fz_idx fz_k = " + index_of(ind, "fz_t * " + lit(k) + " + " + lit(j)) + ";\n" +
           fix_index("fz_k", xs[j], "        ") + "        fz_dst += fz_k * " + lit(cs[j]) + ";\n      }\n";
    return r;
  };
  // Elements: the updates fz_u on the line along the axis through the data coordinates fz_d*
  // (declared by coords_of), in axis order, each with its index fz_k; the caller closes two braces.
  auto line_loop = [&](const std::string& coords_of) {
    const int64_t a = p.axis;
    const Shape ics = contiguous_strides(is);
    std::string r = coords_of, inside = "true", u0 = lit(0);
    for (size_t j = 0; j < xs.size(); ++j)
      if (static_cast<int64_t>(j) != a) {
        if (is[j] < xs[j]) inside += " && fz_d" + std::to_string(j) + " < " + lit(is[j]);
        u0 += " + fz_d" + std::to_string(j) + " * " + lit(ics[j]);
      }
    r += "    if (" + inside + ") {\n      fz_idx fz_u0 = " + u0 + ";\n";
    r += "      for (fz_idx fz_m = " + lit(0) + "; fz_m < " + lit(is[a]) + "; ++fz_m) {\n        fz_idx fz_u = fz_u0 + fz_m * " +
         lit(ics[a]) + ";\n";
    return r + "        fz_idx fz_k = " + index_of(ind, "fz_u") + ";\n" + fix_index("fz_k", xs[a], "        ");
  };
  if (p.owner && n.op_type == "ScatterND") {
    // Thread fz_o owns slab offset fz_o of every indexed slab: its data, then each tuple in order.
    const int64_t outer = shape_numel(xs) / p.inner;
    s += "    for (fz_idx fz_c = " + lit(0) + "; fz_c < " + lit(outer) + "; ++fz_c) " +
         copy(data, "fz_c * " + lit(p.inner) + " + fz_o", out, "fz_c * " + lit(p.inner) + " + fz_o") + "\n";
    return s + tuples_loop("fz_o") + scatter_combine(n, out, "fz_dst", upd, "fz_t * " + lit(p.inner) + " + fz_o", "      ") + "    }\n";
  }
  if (p.owner) {
    // Thread fz_o owns the output line along the axis through its other coordinates: the data,
    // then the updates on that line (those whose other coordinates match) in axis order.
    const int64_t len = xs[p.axis], step = cs[p.axis];
    s += "    fz_idx fz_base = (fz_o / " + lit(step) + ") * " + lit(len * step) + " + fz_o % " + lit(step) + ";\n";
    s += "    for (fz_idx fz_c = " + lit(0) + "; fz_c < " + lit(len) + "; ++fz_c) " +
         copy(data, "fz_base + fz_c * " + lit(step), out, "fz_base + fz_c * " + lit(step)) + "\n";
    return s + line_loop(coords("d", "fz_base", xs, "    ")) +
           scatter_combine(n, out, "fz_base + fz_k * " + lit(step), upd, "fz_u", "        ") + "      }\n    }\n";
  }
  // Scan: thread fz_o per output element reads the updates that could reach it, in order: ND,
  // every index tuple (its slab's start against the tuple's); Elements, the updates on its line.
  s += "    " + copy(data, "fz_o", out, "fz_o") + "\n";
  if (n.op_type == "ScatterND")
    return s + "    fz_idx fz_off = fz_o % " + lit(p.inner) + ";\n" + tuples_loop("fz_off") + "      if (fz_dst == fz_o)\n" +
           scatter_combine(n, out, "fz_o", upd, "fz_t * " + lit(p.inner) + " + fz_off", "      ") + "    }\n";
  return s + line_loop(out_coords(xs)) + "        if (fz_k == fz_d" + std::to_string(p.axis) + ")\n" +
         scatter_combine(n, out, "fz_o", upd, "fz_u", "        ") + "      }\n    }\n";
}

std::string Emitter::matmul_direct(const Node& n, int out) const {
  const int a = in_buf(0), b = in_buf(1);
  Shape as = buffer(a).shape, bs = buffer(b).shape;
  if (as.empty() || bs.empty()) fail(n.label() + ": MatMul of a scalar");
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  const size_t nb = std::max(ab.size(), bb.size());
  Shape batch(nb, 1);
  for (size_t i = 0; i < nb; ++i) {
    const int64_t x = i + ab.size() >= nb ? ab[i + ab.size() - nb] : 1,
                  y = i + bb.size() >= nb ? bb[i + bb.size() - nb] : 1;
    batch[i] = std::max(x, y);
  }
  Shape full = batch;
  full.push_back(M), full.push_back(N);
  // Batch strides of each operand (0 where it broadcasts).
  auto bstr = [&](const Shape& sh, int64_t mat) {
    std::vector<int64_t> st(nb, 0);
    int64_t acc = mat;
    for (int64_t i = static_cast<int64_t>(sh.size()) - 1; i >= 0; --i) {
      const size_t o = nb - sh.size() + static_cast<size_t>(i);
      st[o] = sh[i] == 1 ? 0 : acc;
      acc *= sh[i];
    }
    return st;
  };
  std::vector<int64_t> sa = bstr(ab, M * K), sb = bstr(bb, K * N);
  std::string s = coords("d", "fz_o", full), oa = lit(0), ob = lit(0);
  for (size_t i = 0; i < nb; ++i) {
    if (sa[i]) oa += " + fz_d" + std::to_string(i) + " * " + lit(sa[i]);
    if (sb[i]) ob += " + fz_d" + std::to_string(i) + " * " + lit(sb[i]);
  }
  s += "    fz_idx fz_a0 = " + oa + " + fz_d" + std::to_string(nb) + " * " + lit(K) + ";\n";
  s += "    fz_idx fz_b0 = " + ob + " + fz_d" + std::to_string(nb + 1) + ";\n    float fz_acc = 0.0f;\n";
  s += "    for (fz_idx fz_k = " + lit(0) + "; fz_k < " + lit(K) + "; ++fz_k)\n";
  s += "      fz_acc = fz_acc + " + load_of(a, "fz_a0 + fz_k") + " * " + load_of(b, "fz_b0 + fz_k * " + lit(N)) + ";\n";
  return s + "    " + store_of(out, "fz_o", "fz_acc") + "\n";
}

std::string Emitter::global_pool(const Node& n, int out) const {
  const int x = in_buf(0);
  const Shape& xs = buffer(x).shape;
  if (xs.size() < 3) fail(n.label() + ": global pooling needs [N, C, spatial...]");
  int64_t sp = 1;
  for (size_t i = 2; i < xs.size(); ++i) sp *= xs[i];
  const bool is_max = n.op_type == "GlobalMaxPool";
  std::string s = "    float fz_acc = " + std::string(is_max ? "(-fz_inf())" : "0.0f") + ";\n";
  s += "    for (fz_idx fz_t = " + lit(0) + "; fz_t < " + lit(sp) + "; ++fz_t) {\n";
  s += "      float fz_v = " + load_of(x, "fz_o * " + lit(sp) + " + fz_t") + ";\n";
  s += std::string("      fz_acc = ") + (is_max ? "fz_max(fz_acc, fz_v)" : "fz_acc + fz_v") + ";\n    }\n";
  if (!is_max) s += "    fz_acc = fz_acc / " + fz_float_literal(static_cast<double>(sp)) + ";\n";
  return s + "    " + store_of(out, "fz_o", "fz_acc") + "\n";
}

std::string Emitter::grid_sample(const Node& n, int out) const {
  // ir/ops/grid.cpp gridsample_ref, step for step in double (the same operations in the same
  // order, one rounding at the store), so the GPUs give ref's bits.
  const int x = in_buf(0), grid = in_buf(1);
  const Shape& xs = buffer(x).shape;
  const Shape& gs = buffer(grid).shape;
  const int r = static_cast<int>(xs.size()) - 2;
  const bool v20 = n.opset >= 20, align = n.attr_i("align_corners", 0) != 0;
  const std::string mode = n.attr_s("mode", v20 ? "linear" : "bilinear"), pad = n.attr_s("padding_mode", "zeros");
  const bool nearest = mode == "nearest", cubic = mode == (v20 ? "cubic" : "bicubic");
  const int taps = nearest ? 1 : cubic ? 4 : 2;
  if (r < 1 || r > 3) throw Unsupported(d_.name, n.label() + ": GridSample with " + std::to_string(r) + " spatial dims (the kernel takes 1 to 3)");
  int64_t points = 1, spatial = 1;
  for (size_t d = 1; d + 1 < gs.size(); ++d) points *= gs[d];
  for (int d = 0; d < r; ++d) spatial *= xs[2 + static_cast<size_t>(d)];
  const int64_t C = xs[1];
  const std::string D = local(DType::f64), I = d_.compute_type(DType::i64), abs = d_.typed_intrinsic("abs", DType::f64);
  auto dl = [&](double v) { return d_.double_literal(v); };
  auto il = [&](int64_t v) { return d_.int_literal(DType::i64, v); };
  auto ld = [&](int b, const std::string& off) {
    return dtype_of(b) == DType::f64 ? typed_load(b, off) : d_.cast("double", load_of(b, off));
  };
  // The reference's reflection into [lo, hi] (gs_reflect); NaN past 2^52 folds.
  globals_ += d_.func_qualifier + "double fz_gs_reflect(double x, double lo, double hi) {\n  " + D + "range = hi - lo;\n  if (range <= " + dl(0) +
              ") return lo;\n  if (!(fz_div(" + abs + "(x - lo), range) < " + dl(4503599627370496.0) + ")) return x != x ? x : " + dl(NAN) +
              ";\n  if (x < lo) {\n    " + D + "dx = lo - x;\n    " + I + " k = " + d_.cast(I, "fz_div(dx, range)") + ";\n    " + D +
              "r = dx - " + d_.cast("double", "k") + " * range;\n    return (k & " + il(1) + ") == " + il(0) +
              " ? lo + r : hi - r;\n  }\n  if (x > hi) {\n    " + D + "dx = x - hi;\n    " + I + " k = " + d_.cast(I, "fz_div(dx, range)") +
              ";\n    " + D + "r = dx - " + d_.cast("double", "k") + " * range;\n    return (k & " + il(1) + ") == " + il(0) +
              " ? hi - r : lo + r;\n  }\n  return x;\n}\n";
  std::string s = "    fz_idx fz_p = fz_o % " + lit(points) + ";\n    fz_idx fz_b = fz_o / " + lit(C * points) + ";\n";
  s += "    fz_idx fz_pl = (fz_o / " + lit(points) + ") * " + lit(spatial) + ";\n";  // (b * C + c) * spatial
  for (int d = 0; d < r; ++d) {
    const int64_t L = xs[2 + static_cast<size_t>(d)];
    const std::string dd = std::to_string(d), c = "fz_c" + dd;
    const double lo = align ? 0.0 : -0.5, hi = align ? static_cast<double>(L - 1) : static_cast<double>(L) - 0.5;
    const std::string g = ld(grid, "(fz_b * " + lit(points) + " + fz_p) * " + lit(r) + " + " + lit(r - 1 - d));
    s += "    " + D + "fz_g" + dd + " = " + g + ";\n    " + D + c + " = " +
         (align ? "(fz_g" + dd + " + " + dl(1) + ") * " + dl(0.5) + " * " + dl(static_cast<double>(L - 1))
                : "((fz_g" + dd + " + " + dl(1) + ") * " + dl(static_cast<double>(L)) + " - " + dl(1) + ") * " + dl(0.5)) +
         ";\n";
    if (nearest) s += "    " + c + " = fz_round_even(" + c + ");\n";
    if (!cubic && pad != "zeros") {
      s += "    if (" + c + " < " + dl(lo) + " || " + c + " > " + dl(hi) + ") " + c + " = " +
           (pad == "border" ? "(" + c + " < " + dl(0) + " ? " + dl(0) + " : " + c + " > " + dl(static_cast<double>(L - 1)) + " ? " +
                                  dl(static_cast<double>(L - 1)) + " : " + c + ")"
                            : "fz_gs_reflect(" + c + ", " + dl(lo) + ", " + dl(hi) + ")") +
           ";\n";
    }
    s += "    if (" + abs + "(" + c + ") > " + dl(1099511627776.0) + ") " + c + " = " + c + " > " + dl(0) + " ? " + dl(1099511627776.0) +
         " : " + dl(-1099511627776.0) + ";\n";
    auto sat = [&](const std::string& v) { return "(" + v + " != " + v + " ? " + il(0) + " : " + d_.cast(I, v) + ")"; };
    std::string first;
    if (nearest) {
      first = sat(c);
      s += "    " + D + "fz_w" + dd + "_0 = " + dl(1) + ";\n";
    } else {
      s += "    " + D + "fz_fl" + dd + " = floor(" + c + ");\n    " + I + " fz_x" + dd + " = " + sat("fz_fl" + dd) + ";\n    " + D + "fz_t" + dd +
           " = " + c + " - " + d_.cast("double", "fz_x" + dd) + ";\n";
      if (!cubic) {
        first = "fz_x" + dd;
        s += "    " + D + "fz_w" + dd + "_0 = " + dl(1) + " - fz_t" + dd + ";\n    " + D + "fz_w" + dd + "_1 = fz_t" + dd + ";\n";
      } else {
        first = "(fz_x" + dd + " - " + il(1) + ")";
        // cubic_coeffs: Keys, a = -0.75, on |t| (5a, 8a, 4a, a + 2, a + 3 are exact).
        const std::string u = "fz_u" + dd;
        s += "    " + D + u + " = " + abs + "(fz_t" + dd + ");\n";
        s += "    " + D + "fz_w" + dd + "_0 = ((" + dl(-0.75) + " * (" + u + " + " + dl(1) + ") - " + dl(-3.75) + ") * (" + u + " + " + dl(1) +
             ") + " + dl(-6) + ") * (" + u + " + " + dl(1) + ") - " + dl(-3) + ";\n";
        s += "    " + D + "fz_w" + dd + "_1 = ((" + dl(1.25) + " * " + u + " - " + dl(2.25) + ") * " + u + ") * " + u + " + " + dl(1) + ";\n";
        s += "    " + D + "fz_w" + dd + "_2 = ((" + dl(1.25) + " * (" + dl(1) + " - " + u + ") - " + dl(2.25) + ") * (" + dl(1) + " - " + u +
             ")) * (" + dl(1) + " - " + u + ") + " + dl(1) + ";\n";
        s += "    " + D + "fz_w" + dd + "_3 = ((" + dl(-0.75) + " * (" + dl(2) + " - " + u + ") - " + dl(-3.75) + ") * (" + dl(2) + " - " + u +
             ") + " + dl(-6) + ") * (" + dl(2) + " - " + u + ") - " + dl(-3) + ";\n";
      }
    }
    for (int k = 0; k < taps; ++k) {
      const std::string ik = "fz_i" + dd + "_" + std::to_string(k), ok = "fz_ok" + dd + "_" + std::to_string(k);
      s += "    " + I + " " + ik + " = " + first + " + " + il(k) + ";\n    bool " + ok + " = true;\n";
      s += "    if (" + ik + " < " + il(0) + " || " + ik + " >= " + il(L) + ") {\n";
      if (pad == "zeros") s += "      " + ok + " = false;\n";
      else {
        const std::string v = pad == "border" ? ik : "fz_r" + dd + "_" + std::to_string(k);
        if (pad != "border")
          s += "      " + D + v + " = fz_gs_reflect(" + d_.cast("double", ik) + ", " + dl(lo) + ", " + dl(hi) + ");\n      " + ik + " = " + sat(v) + ";\n";
        s += "      " + ik + " = " + ik + " < " + il(0) + " ? " + il(0) + " : (" + ik + " > " + il(L - 1) + " ? " + il(L - 1) + " : " + ik + ");\n";
      }
      s += "    }\n";
    }
  }
  // Every tap combination, the last dim fastest; weights multiplied outermost first.
  s += "    " + D + "fz_acc = " + dl(0) + ";\n";
  const Shape xst = contiguous_strides(xs);
  std::vector<int> t(static_cast<size_t>(r), 0);
  while (true) {
    std::string wt, ok, off;
    for (int d = 0; d < r; ++d) {
      const std::string dk = std::to_string(d) + "_" + std::to_string(t[static_cast<size_t>(d)]);
      wt += (d ? " * " : "") + std::string("fz_w") + dk;
      ok += (d ? " && " : "") + std::string("fz_ok") + dk;
      off += " + " + d_.cast("fz_idx", "fz_i" + dk) + " * " + lit(xst[2 + static_cast<size_t>(d)]);
    }
    s += "    if (" + ok + ") fz_acc = fz_acc + (" + wt + ") * " + ld(x, "fz_pl" + off) + ";\n";
    int d = r - 1;
    while (d >= 0 && ++t[static_cast<size_t>(d)] == taps) t[static_cast<size_t>(d--)] = 0;
    if (d < 0) break;
  }
  return s + "    " + typed_store(out, "fz_o", convert_value(d_, DType::f64, dtype_of(out), "fz_acc", true)) + "\n";
}

std::string Emitter::reverse_sequence(const Node& n, int out) const {
  // ir/ops/misc.cpp revseq_ref: out[t, b] = x[len_b - 1 - t, b] for t < len_b, else x[t, b]; a
  // length outside [0, T] fails the run as on ref (status word) and is clamped.
  const int x = in_buf(0), lens = in_buf(1);
  const Shape& xs = buffer(x).shape;
  const int64_t ta = n.attr_i("time_axis", 0), T = xs[static_cast<size_t>(ta)], B = xs[ta == 0 ? 1 : 0];
  const int64_t inner = shape_numel(xs) / std::max<int64_t>(1, T * B);
  std::string s = "    fz_idx fz_in = fz_o % " + lit(inner) + ";\n";
  s += ta == 0 ? "    fz_idx fz_t = fz_o / " + lit(B * inner) + ";\n    fz_idx fz_b = (fz_o / " + lit(inner) + ") % " + lit(B) + ";\n"
               : "    fz_idx fz_b = fz_o / " + lit(T * inner) + ";\n    fz_idx fz_t = (fz_o / " + lit(inner) + ") % " + lit(T) + ";\n";
  s += "    fz_idx fz_len = " + index_of(lens, "fz_b") + ";\n";
  s += "    if (fz_len < " + lit(0) + " || fz_len > " + lit(T) + ") FZ_INDEX_ERROR;\n";
  s += "    fz_len = fz_len < " + lit(0) + " ? " + lit(0) + " : (fz_len > " + lit(T) + " ? " + lit(T) + " : fz_len);\n";
  s += "    fz_idx fz_src = fz_t < fz_len ? fz_len - " + lit(1) + " - fz_t : fz_t;\n";
  const std::string at = ta == 0 ? "(fz_src * " + lit(B) + " + fz_b) * " + lit(inner) + " + fz_in" : "(fz_b * " + lit(T) + " + fz_src) * " + lit(inner) + " + fz_in";
  return s + "    " + copy(x, at, out, "fz_o") + "\n";
}

}  // namespace fusor::codegen_detail
