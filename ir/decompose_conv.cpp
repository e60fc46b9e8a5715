// Convolutions rewritten so they run on the backends' 2-D convolution contractions (implicit
// GEMM, cuDNN, the bias and activations in the epilogue) instead of a direct loop per output
// element (ir/passes.h): ConvTranspose as Convs of flipped sub-kernels, 1-D and 3-D Conv as 2-D.
//
// ConvTranspose's direct loop walks every tap of every input channel and skips (s-1)/s of them
// on each strided axis.
// The sub-pixel form (Shi et al., "Is the deconvolution layer the same as a convolutional layer?",
// 2016): on an axis of stride s and kernel K = J * s (dilation 1), output row q = t * s + r
// (before cropping the pads) is sum_j W[r + j s] x[t - j], a stride-1 convolution with the
// flipped sub-kernel W[r + (J - 1 - j) s], j < J. The s phases r become s times as many output
// channels of one Conv, and a Transpose interleaves them (K % s != 0: a Conv per phase, of
// ceil((K - r) / s) taps, rather than zero taps: 0 * inf is NaN). An axis of stride 1 is the
// flipped kernel with its dilation. Every product the direct form makes is made once, none added.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "ir/conv_geometry.h"
#include "ir/ops/op_helpers.h"
#include "ir/passes.h"

namespace fusor {

namespace {

// FUSOR_CONVTRANSPOSE_AS_CONV=0 / FUSOR_CONV1D_AS_2D=0 / FUSOR_CONV3D_AS_2D=0 keep the direct
// kernels (for A/B measurements).
bool enabled(const char* knob) {
  const char* e = std::getenv(knob);
  return !(e && std::string(e) == "0");
}

// Whether node n is a `type` node (X, W[, B]) -> Y this file rewrites: the knob not set to 0,
// X, W and Y of one float type (f32, f16, bf16) with static shapes of rank `rank` (3-5 for 0)
// and no empty dim.
bool static_float_conv(const Graph& g, const Node& n, const char* type, size_t rank, const char* knob) {
  if (n.op_type != type || n.inputs.size() < 2 || !n.has_input(0) || !n.has_input(1) || n.outputs.size() != 1 ||
      n.outputs[0] < 0 || !enabled(knob))
    return false;
  const Value &xv = g.values[n.inputs[0]], &wv = g.values[n.inputs[1]], &yv = g.values[n.outputs[0]];
  const DType dt = xv.dtype;
  if ((dt != DType::f32 && dt != DType::f16 && dt != DType::bf16) || wv.dtype != dt || yv.dtype != dt) return false;
  for (const Value* v : {&xv, &wv, &yv}) {
    if (!v->shape_known || (rank ? v->shape.size() != rank : v->shape.size() < 3 || v->shape.size() > 5)) return false;
    for (int64_t d : v->shape)
      if (d <= 0) return false;
  }
  return xv.shape.size() == wv.shape.size() && wv.shape.size() == yv.shape.size();
}

// W [G*Cg, Mg, K...] rearranged for a Conv over phases rs (see decompose_conv_transpose's
// weight): [G * |rs| * Mg, Cg, J...], element bytes copied as they are.
Tensor phase_weight(const Tensor& W, int64_t G, int64_t Cg, int64_t Mg, const std::vector<std::vector<int64_t>>& rs,
                    const std::vector<int64_t>& J, const std::vector<int64_t>& s) {
  const int nd = static_cast<int>(J.size());
  const Shape& ws = W.shape();
  const int64_t np = static_cast<int64_t>(rs.size());
  Shape shape = {G * np * Mg, Cg};
  shape.insert(shape.end(), J.begin(), J.end());
  Tensor out(W.dtype(), shape);
  const size_t esz = dtype_size(W.dtype());
  int64_t jsz = 1, ksz = 1;
  for (int i = 0; i < nd; ++i) jsz *= J[i], ksz *= ws[2 + i];
  const std::byte* src = W.raw();
  std::byte* dst = out.raw();
  std::vector<int64_t> koff(static_cast<size_t>(jsz));  // per phase: tap j's flat offset in K
  int64_t o = 0;
  for (int64_t g = 0; g < G; ++g)
    for (int64_t p = 0; p < np; ++p) {
      for (int64_t jj = 0; jj < jsz; ++jj) {
        int64_t rest = jj, off = 0, stride = 1;
        for (int i = nd - 1; i >= 0; --i) {
          const int64_t j = rest % J[i];
          rest /= J[i];
          off += (rs[p][i] + (J[i] - 1 - j) * s[i]) * stride;
          stride *= ws[2 + i];
        }
        koff[jj] = off;
      }
      for (int64_t m = 0; m < Mg; ++m)
        for (int64_t c = 0; c < Cg; ++c) {
          const int64_t base = ((g * Cg + c) * Mg + m) * ksz;
          for (int64_t jj = 0; jj < jsz; ++jj, ++o)
            std::memcpy(dst + static_cast<size_t>(o) * esz, src + static_cast<size_t>(base + koff[jj]) * esz, esz);
        }
    }
  return out;
}

}  // namespace

bool conv_weight_contractible(const Value& wv) {
  if (!wv.constant) return true;
  for (int64_t i = 0; i < wv.constant->numel(); ++i)
    if (!std::isfinite(wv.constant->get(i))) return false;
  return true;
}

bool decompose_conv_transpose(Graph& g, const Node& n, std::vector<Node>& out) {
  if (!static_float_conv(g, n, "ConvTranspose", 0, "FUSOR_CONVTRANSPOSE_AS_CONV")) return false;
  const Value &xv = g.values[n.inputs[0]], &wv = g.values[n.inputs[1]], &yv = g.values[n.outputs[0]];
  const DType dt = xv.dtype;
  const Shape xs = xv.shape, ws = wv.shape, ys = yv.shape;
  const std::optional<Tensor> w_const = wv.constant;  // (g.values grows below: no references kept)
  if (!conv_weight_contractible(wv)) return false;
  ConvTransposeAxes a;
  try {
    a = convtranspose_axes(n, xs, ws);
  } catch (const Error&) {
    return false;  // the shape rule reports it
  }
  const int nd = a.nd;
  const int64_t G = n.attr_i("group", 1), C = xs[1];
  if (G < 1 || C % G != 0 || ws[0] != C || ys[1] != ws[1] * G || static_cast<int>(ys.size()) != nd + 2) return false;
  const int64_t Cg = C / G, Mg = ws[1];
  // Strided axes need dilation 1 and at least one tap in every phase (K >= s); a kernel the
  // stride divides gives every phase J = K / s taps and all phases run as one Conv, otherwise
  // each phase is its own Conv (at most kMaxPhaseConvs of them).
  constexpr int64_t kMaxPhaseConvs = 64;
  bool stacked = true;
  int64_t P = 1;  // phases: the product of the strides
  for (int i = 0; i < nd; ++i) {
    if (a.s[i] == 1) continue;
    if (a.d[i] != 1 || a.k[i] < a.s[i]) return false;
    stacked = stacked && a.k[i] % a.s[i] == 0;
    P *= a.s[i];
    if (P > (int64_t{1} << 40)) return false;
  }
  if (!stacked && P > kMaxPhaseConvs) return false;

  // Per axis: the most taps of a phase, the Conv's dilation and end pad, the begin pad of a
  // phase of J taps, and the crop of the interleaved output.
  std::vector<int64_t> Jmax(nd), dil(nd), pad_end(nd), extra_begin(nd), crop_start(nd), crop_len(nd), T(nd);
  for (int i = 0; i < nd; ++i) {
    const int64_t s = a.s[i], k = a.k[i], d = a.d[i], in = a.in[i], pb = a.pb[i], o = a.out[i];
    Jmax[i] = (k + s - 1) / s, dil[i] = s > 1 ? 1 : d;
    const int64_t span = (Jmax[i] - 1) * dil[i];
    if (s == 1 && span - pb >= 0 && o - in + pb >= 0) {
      // The pads fold into the Conv's: output o rows, nothing to crop.
      extra_begin[i] = -pb, pad_end[i] = o - in + pb, crop_start[i] = 0;
    } else {
      // Rows beyond the full output (output_shape past it, negative begin pads) are zero rows of
      // the Conv's padding, whole phase rows at a time.
      const int64_t full = s * (in - 1) + (k - 1) * d + 1;
      const int64_t b = pb < 0 ? (-pb + s - 1) / s : 0, e = o + pb > full ? (o + pb - full + s - 1) / s : 0;
      extra_begin[i] = b, pad_end[i] = span + e, crop_start[i] = pb + b * s;
    }
    T[i] = in + extra_begin[i] + pad_end[i];
    crop_len[i] = o;
  }
  // Pads (or an output_shape) that crop most of the full output away: the Conv would compute
  // all of it (stride 64, pads 2046: a 128 MiB arena for a [1, 1, 4, 4] output), the direct
  // kernel only what is kept.
  double computed = 1, kept = 1;
  for (int i = 0; i < nd; ++i) computed *= static_cast<double>(T[i]) * static_cast<double>(a.s[i]), kept *= static_cast<double>(crop_len[i]);
  if (computed > 4 * kept + 4096) return false;

  op_helpers::RewriteNodes rw{g, n.name, {}};
  const int64_t kI64Min = std::numeric_limits<int64_t>::min();
  std::vector<std::vector<int64_t>> phases;  // r per axis, row-major over the strided axes
  for (int64_t p = 0; p < P; ++p) {
    std::vector<int64_t> r(nd, 0);
    int64_t rest = p;
    for (int i = nd - 1; i >= 0; --i) r[i] = rest % a.s[i], rest /= a.s[i];
    phases.push_back(std::move(r));
  }
  // The Conv weight [G * |rs| * Mg, Cg, J...] of phases rs (J taps each), rows (g, phase, m):
  // tap j of axis i is W[g * Cg + c, m, r_i + (J_i - 1 - j_i) s_i], the sub-kernel flipped.
  auto weight = [&](const std::vector<std::vector<int64_t>>& rs, const std::vector<int64_t>& J) {
    std::vector<int64_t> shape = {G * static_cast<int64_t>(rs.size()) * Mg, Cg};
    shape.insert(shape.end(), J.begin(), J.end());
    if (w_const) return g.add_constant(g.unique_name(n.name + "/w"), phase_weight(*w_const, G, Cg, Mg, rs, J, a.s));
    // A weight computed at run time: the same rearrangement as ops (Reshape / Transpose / Slice).
    int w;
    if (rs.size() == static_cast<size_t>(P) && stacked) {
      // W [G*Cg, Mg, K...] -> [G, Cg, Mg, (J_i, s_i) or K_i ...] -> [G, s..., Mg, Cg, J...]
      std::vector<int64_t> wshape = {G, Cg, Mg}, perm = {0}, jpos;
      for (int i = 0; i < nd; ++i) {
        jpos.push_back(static_cast<int64_t>(wshape.size()));
        if (a.s[i] > 1) {
          wshape.push_back(J[i]), wshape.push_back(a.s[i]);
          perm.push_back(static_cast<int64_t>(wshape.size()) - 1);
        } else {
          wshape.push_back(a.k[i]);
        }
      }
      perm.push_back(2), perm.push_back(1);
      perm.insert(perm.end(), jpos.begin(), jpos.end());
      w = rw.op("Transpose", {rw.op("Reshape", {n.inputs[1], rw.ints(wshape)}, {}, -1, 14)}, {{"perm", perm}});
    } else {  // one phase: W -> [G, Mg, Cg, K...], its taps r_i, r_i + s_i, ... on each strided axis
      std::vector<int64_t> wk = {G, Mg, Cg}, st, en, ax, sp;
      for (int i = 0; i < nd; ++i) {
        wk.push_back(a.k[i]);
        if (a.s[i] > 1) st.push_back(rs[0][i]), en.push_back(a.k[i]), ax.push_back(3 + i), sp.push_back(a.s[i]);
      }
      w = rw.op("Transpose", {rw.op("Reshape", {n.inputs[1], rw.ints({G, Cg, Mg, -1})}, {}, -1, 14)},
                {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
      w = rw.op("Slice", {rw.op("Reshape", {w, rw.ints(wk)}, {}, -1, 14), rw.ints(st), rw.ints(en), rw.ints(ax), rw.ints(sp)});
    }
    w = rw.op("Reshape", {w, rw.ints(shape)}, {}, -1, 14);
    std::vector<int64_t> flip;
    for (int i = 0; i < nd; ++i)
      if (J[i] > 1) flip.push_back(2 + i);
    if (!flip.empty()) {
      const size_t f = flip.size();
      w = rw.op("Slice", {w, rw.ints(std::vector<int64_t>(f, -1)), rw.ints(std::vector<int64_t>(f, kI64Min)), rw.ints(flip),
                          rw.ints(std::vector<int64_t>(f, -1))});
    }
    g.values[w].dtype = dt, g.values[w].shape = shape, g.values[w].shape_known = true;
    return w;
  };
  // The Conv's output [N, rows, T...], typed and shaped, so that decompose() goes on to lift a
  // 1-D or 3-D one to 2-D (decompose_conv1d / 3d) and moves its bias into the epilogue.
  auto conv = [&](int w, int b, const std::vector<int64_t>& J, int64_t rows, int out) {
    std::vector<int64_t> pads(2 * nd);
    for (int i = 0; i < nd; ++i) pads[i] = (J[i] - 1) * dil[i] + extra_begin[i], pads[nd + i] = pad_end[i];
    std::vector<int> ins = {n.inputs[0], w};
    if (b >= 0) ins.push_back(b);
    const int y = rw.op("Conv", ins,
                        {{"group", G}, {"kernel_shape", J}, {"dilations", dil}, {"pads", pads},
                         {"strides", std::vector<int64_t>(nd, 1)}},
                        out, 11);
    if (out < 0) {
      Shape ys2 = {xs[0], rows};
      ys2.insert(ys2.end(), T.begin(), T.end());
      g.values[y].dtype = dt, g.values[y].shape = ys2, g.values[y].shape_known = true;
    }
    return y;
  };
  bool crops = false;
  for (int i = 0; i < nd; ++i) crops = crops || crop_start[i] != 0 || crop_len[i] != T[i] * a.s[i];
  const int final_out = n.outputs[0];
  const int bias = n.has_input(2) ? n.inputs[2] : -1;
  int y;  // the phases' outputs, [N, G, P, Mg, T...] in memory
  if (stacked) {
    // Each phase's channels carry their channel's bias: [G*Mg] -> [G, P, Mg] (a constant stays
    // one, so the Conv's bias becomes its epilogue).
    int b = bias;
    if (b >= 0 && P > 1 && g.values[b].constant) {
      const Tensor& b0 = *g.values[b].constant;
      Tensor t(b0.dtype(), {G * P * Mg});
      const size_t esz = dtype_size(b0.dtype());
      for (int64_t i = 0; i < G * P * Mg; ++i)
        std::memcpy(t.raw() + static_cast<size_t>(i) * esz, b0.raw() + static_cast<size_t>(i / (P * Mg) * Mg + i % Mg) * esz, esz);
      b = g.add_constant(g.unique_name(n.name + "/bias"), std::move(t));
    } else if (b >= 0 && P > 1) {
      b = rw.op("Reshape", {rw.op("Tile", {rw.op("Reshape", {b, rw.ints({G, 1, Mg})}, {}, -1, 14), rw.ints({1, P, 1})}),
                            rw.ints({G * P * Mg})},
                {}, -1, 14);
    }
    y = conv(weight(phases, Jmax), b, Jmax, G * P * Mg, P == 1 && !crops ? final_out : -1);
  } else {
    // One Conv per phase r (its taps r + j s, J_r = ceil((K - r) / s) of them), each output
    // [N, G*Mg, T...] viewed as [N, G, 1, Mg, T...] and concatenated along the 1.
    std::vector<int64_t> view = {xs[0], G, 1, Mg};
    view.insert(view.end(), T.begin(), T.end());
    std::vector<int> parts;
    for (const std::vector<int64_t>& r : phases) {
      std::vector<int64_t> J(nd);
      for (int i = 0; i < nd; ++i) J[i] = (a.k[i] - r[i] + a.s[i] - 1) / a.s[i];
      parts.push_back(rw.op("Reshape", {conv(weight({r}, J), bias, J, G * Mg, -1), rw.ints(view)}, {}, -1, 14));
    }
    y = rw.op("Concat", parts, {{"axis", int64_t{2}}});
  }
  if (P > 1) {
    // [N, G, s..., Mg, T...] -> [N, G, Mg, (T_i, s_i) ...] -> [N, M, T_i*s_i ...]
    std::vector<int64_t> split = {xs[0], G}, iperm = {0, 1}, spos(nd, -1), merged = {xs[0], G * Mg};
    for (int i = 0; i < nd; ++i)
      if (a.s[i] > 1) spos[i] = static_cast<int64_t>(split.size()), split.push_back(a.s[i]);
    iperm.push_back(static_cast<int64_t>(split.size()));
    split.push_back(Mg);
    for (int i = 0; i < nd; ++i) {
      iperm.push_back(static_cast<int64_t>(split.size()));
      split.push_back(T[i]);
      if (spos[i] >= 0) iperm.push_back(spos[i]);
      merged.push_back(T[i] * a.s[i]);
    }
    y = rw.op("Reshape", {y, rw.ints(split)}, {}, -1, 14);
    y = rw.op("Transpose", {y}, {{"perm", iperm}});
    y = rw.op("Reshape", {y, rw.ints(merged)}, {}, crops ? -1 : final_out, 14);
  }
  if (crops) {
    std::vector<int64_t> st, en, ax;
    for (int i = 0; i < nd; ++i)
      if (crop_start[i] != 0 || crop_len[i] != T[i] * a.s[i])
        st.push_back(crop_start[i]), en.push_back(crop_start[i] + crop_len[i]), ax.push_back(2 + i);
    rw.op("Slice", {y, rw.ints(st), rw.ints(en), rw.ints(ax)}, {}, final_out, 13);
  }
  out.insert(out.end(), rw.nodes.begin(), rw.nodes.end());
  return true;
}

// Whether a Conv's weight lets it run as a 2-D contraction: not depthwise (one input channel
// per group: the cpu backend's contraction ran [1, 256, 4000] k31 5x slower, lavapipe 1.3x
// faster) and, when constant, finite (conv_weight_contractible).
bool liftable_weight(const Node& n, const Value& wv) {
  return !(n.attr_i("group", 1) > 1 && wv.shape[1] == 1) && conv_weight_contractible(wv);
}

// Value v (typed dt) viewed as shape s: a constant reshaped now, else a typed Reshape node.
int viewed_as(Graph& g, op_helpers::RewriteNodes& rw, int v, const Shape& s, DType dt) {
  if (const std::optional<Tensor>& c = g.values[v].constant) {
    Tensor t = *c;
    t.reshape(s);
    return g.add_constant(g.unique_name(rw.base + "/view"), std::move(t));
  }
  const int r = rw.op("Reshape", {v, rw.ints(s)}, {}, -1, 14);
  g.values[r].dtype = dt, g.values[r].shape = s, g.values[r].shape_known = true;
  return r;
}

// A 1-D Conv as a 2-D one over [N, C, 1, L]: the fuser contracts 2-D convolutions (implicit
// GEMM, cuDNN, the bias and activations in the epilogue); a 1-D one ran as a direct loop per
// output (wav2vec2's [1, 512, 3199] k3 s2 layer: 2.1 s on lavapipe).
bool decompose_conv1d(Graph& g, const Node& n, std::vector<Node>& out) {
  if (!static_float_conv(g, n, "Conv", 3, "FUSOR_CONV1D_AS_2D")) return false;
  const Value &wv = g.values[n.inputs[1]], &xv = g.values[n.inputs[0]], &yv = g.values[n.outputs[0]];
  const DType dt = xv.dtype;
  if (!liftable_weight(n, wv)) return false;
  const Shape xs = xv.shape, ws = wv.shape, ys = yv.shape;  // (g.values grows below: no references kept)
  op_helpers::RewriteNodes rw{g, n.name, {}};
  Node c = n;  // group, auto_pad (a 1-row axis of kernel 1 pads nothing) as they are
  c.name = g.unique_name(n.name + "/2d");
  c.inputs[0] = viewed_as(g, rw, n.inputs[0], {xs[0], xs[1], 1, xs[2]}, dt);
  c.inputs[1] = viewed_as(g, rw, n.inputs[1], {ws[0], ws[1], 1, ws[2]}, dt);
  auto two_d = [&](const char* name, int64_t unit) {
    if (!n.has_attr(name)) return;
    const std::vector<int64_t> v = n.attr_ints(name);
    c.attrs[name] = v.size() == 2 ? std::vector<int64_t>{unit, v[0], unit, v[1]}
                    : v.size() == 1 ? std::vector<int64_t>{unit, v[0]}
                                    : v;  // a malformed list: the 2-D shape rule names it
  };
  two_d("kernel_shape", 1), two_d("strides", 1), two_d("dilations", 1), two_d("pads", 0);
  const int y4 = g.add_value(g.unique_name(n.name + ":2d"), dt, {ys[0], ys[1], 1, ys[2]}, true);
  c.outputs = {y4};
  rw.nodes.push_back(c);
  rw.op("Reshape", {y4, rw.ints(ys)}, {}, n.outputs[0], 14);
  out.insert(out.end(), rw.nodes.begin(), rw.nodes.end());
  return true;
}

// A 3-D Conv as a 2-D one (video and volumetric models: r3d, 3-D U-Nets): for each output
// depth d', the kd input depth slices its taps read, d' * sd + k * dd (zero padded), are stacked
// as kd times the channels ([N * D', C * kd, H, W]: channel c * kd + k, so the weight
// [M, C/group, kd, kh, kw] is already [M, C/group * kd, kh, kw]), one 2-D Conv over them, and
// the output's depth moved back behind its channels. The stack costs kd copies of the input;
// the Conv is a contraction (a direct loop per output ran [1, 64, 8, 28, 28] k3 at 1.4 GMAC/s
// on the cpu backend).
bool decompose_conv3d(Graph& g, const Node& n, std::vector<Node>& out) {
  if (!static_float_conv(g, n, "Conv", 5, "FUSOR_CONV3D_AS_2D")) return false;
  const Value &wv = g.values[n.inputs[1]], &xv = g.values[n.inputs[0]], &yv = g.values[n.outputs[0]];
  const DType dt = xv.dtype;
  const std::string ap = n.attr_s("auto_pad", "NOTSET");
  if (ap != "NOTSET" && ap != "VALID") return false;  // SAME pads: left to the direct kernel
  if (!liftable_weight(n, wv)) return false;
  const int64_t G = n.attr_i("group", 1);
  const Shape xs = xv.shape, ws = wv.shape, ys = yv.shape;  // (g.values grows below: no references kept)
  std::vector<int64_t> st = n.attr_ints("strides", {1, 1, 1}), dl = n.attr_ints("dilations", {1, 1, 1}),
                       pd = ap == "VALID" ? std::vector<int64_t>(6, 0) : n.attr_ints("pads", std::vector<int64_t>(6, 0));
  if (st.size() != 3 || dl.size() != 3 || pd.size() != 6) return false;  // the shape rule names it
  const int64_t kd = ws[2], D2 = ys[2];
  // The stacked input: kd copies of it, bounded.
  if (static_cast<double>(shape_numel(xs)) / static_cast<double>(xs[2]) * static_cast<double>(D2 * kd) > static_cast<double>(int64_t{1} << 28))
    return false;
  op_helpers::RewriteNodes rw{g, n.name, {}};
  int x = n.inputs[0];
  if (pd[0] != 0 || pd[3] != 0) x = rw.op("Pad", {x, rw.ints({0, 0, pd[0], 0, 0, 0, 0, pd[3], 0, 0})}, {}, -1, 13);
  std::vector<int> taps;
  for (int64_t k = 0; k < kd; ++k) {
    const int64_t start = k * dl[0];
    const int s = rw.op("Slice", {x, rw.ints({start}), rw.ints({start + (D2 - 1) * st[0] + 1}), rw.ints({2}), rw.ints({st[0]})});
    // [N, C, D', H, W] -> [N, D', C, 1, H, W]: each tap's copy into the stack is one kernel
    taps.push_back(rw.op("Unsqueeze", {rw.op("Transpose", {s}, {{"perm", std::vector<int64_t>{0, 2, 1, 3, 4}}}), rw.ints({3})}));
  }
  int stack = taps.size() == 1 ? taps[0] : rw.op("Concat", taps, {{"axis", int64_t{3}}});  // [N, D', C, kd, H, W]
  const Shape x4 = {xs[0] * D2, xs[1] * kd, xs[3], xs[4]};
  stack = viewed_as(g, rw, stack, x4, dt);
  const int w = viewed_as(g, rw, n.inputs[1], {ws[0], ws[1] * kd, ws[3], ws[4]}, dt);
  Node c;
  c.name = g.unique_name(n.name + "/2d");
  c.op_type = "Conv";
  c.opset = 11;
  c.inputs = {stack, w};
  if (n.has_input(2)) c.inputs.push_back(n.inputs[2]);
  c.attrs = {{"group", G}, {"kernel_shape", std::vector<int64_t>{ws[3], ws[4]}}, {"strides", std::vector<int64_t>{st[1], st[2]}},
             {"dilations", std::vector<int64_t>{dl[1], dl[2]}}, {"pads", std::vector<int64_t>{pd[1], pd[2], pd[4], pd[5]}}};
  const int y4 = g.add_value(g.unique_name(n.name + ":2d"), dt, {ys[0] * D2, ys[1], ys[3], ys[4]}, true);
  c.outputs = {y4};
  rw.nodes.push_back(c);
  const int y5 = rw.op("Reshape", {y4, rw.ints({ys[0], D2, ys[1], ys[3], ys[4]})}, {}, -1, 14);
  rw.op("Transpose", {y5}, {{"perm", std::vector<int64_t>{0, 2, 1, 3, 4}}}, n.outputs[0]);
  out.insert(out.end(), rw.nodes.begin(), rw.nodes.end());
  return true;
}

}  // namespace fusor
