// The integer quantized contractions (QLinearConv, ConvInteger, QLinearMatMul, MatMulInteger)
// and DynamicQuantizeLinear
// as float32 contractions that stay exact, so quantized models in the QOperator format fuse and
// run on the GPUs instead of the host (ir/passes.h decompose_quant_int).
//
// Why exact: x - x_zp and w - w_zp are integers of at most 9 bits, so every product is an
// integer below 2^16 and a float32 sum of them is exact while the sum of their magnitudes stays
// below 2^24, whatever the order (split-K, cuBLASLt / cuDNN's FMA paths: no TF32, no Winograd).
// With a constant weight that bound is known per output channel / column; a reduction that could
// pass it is split along K (input channels / the inner dim) into pieces that cannot, each piece
// converted to int32 and the pieces added in int32 with the int32 bias. Then, as the reference
// (ir/ops/quant_int.cpp): QLinear* multiply by the scale factor formed in the scales' dtype
// ((a_scale * b_scale) / y_scale), add y_zp in float64, round half to even, saturate.
// Where the total could pass 2^31 (the reference wraps) or a group of a grouped conv could pass
// 2^24, the node is left whole (it runs on the host as before).
#include <algorithm>
#include <cmath>

#include "ir/ops/op_helpers.h"
#include "ir/passes.h"
#include "ir/small_dtypes.h"

namespace fusor {
namespace {

using namespace op_helpers;

constexpr double kExactF32 = 16777216.0;   // 2^24
constexpr double kInt32 = 2147483647.0;

bool int8ish(DType t) { return t == DType::u8 || t == DType::i8; }

// Largest |q - zp| over q of dtype t and the zero points in zp (per tensor or per channel);
// 255 when zp is not a constant (its values are unknown).
double centered_max(const Graph& g, DType t, int zp) {
  double lo, hi;
  quant_int_range(t, &lo, &hi);
  if (zp < 0) return std::max(std::fabs(lo), std::fabs(hi));
  const Value& z = g.values[zp];
  if (!z.constant) return 255.0;
  double m = 0;
  for (int64_t i = 0; i < z.constant->numel(); ++i) {
    const double v = static_cast<double>(z.constant->get_int(i));
    m = std::max({m, std::fabs(lo - v), std::fabs(hi - v)});
  }
  return m;
}

// |w - w_zp| for a constant weight w ([rows, ...]: row r's zero point zp[r] when per row), or
// nullopt-like empty when w or zp is not constant.
std::vector<double> centered_abs(const Graph& g, int w, int zp, int64_t per, int64_t stride) {
  const Value& wv = g.values[w];
  if (!wv.constant || (zp >= 0 && !g.values[zp].constant)) return {};
  const Tensor& t = *wv.constant;
  std::vector<double> a(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t z = 0;
    if (zp >= 0) {
      const Tensor& zt = *g.values[zp].constant;
      z = zt.numel() == 1 ? zt.get_int(0) : zt.get_int((i / stride) % per);
    }
    a[static_cast<size_t>(i)] = std::fabs(static_cast<double>(t.get_int(i) - z));
  }
  return a;
}

// The rewrite's nodes (op_helpers.h RewriteNodes: Graph, name base, the emitted nodes) and the
// few helpers these decompositions use on it.
struct Emit : RewriteNodes {
  Emit(Graph& graph, const std::string& name, std::vector<Node>& sink) : RewriteNodes{graph, name, {}}, out(sink) {}
  ~Emit() { out.insert(out.end(), nodes.begin(), nodes.end()); }
  Emit(const Emit&) = delete;
  Emit& operator=(const Emit&) = delete;
  std::vector<Node>& out;
  int scalar(DType t, double v) {
    Tensor c(t, {});
    c.set(0, v);
    return g.add_constant(g.unique_name(base + "/c"), std::move(c));
  }
  int cast(int v, DType t) { return op("Cast", {v}, {{"to", int64_t{dtype_to_onnx(t)}}}); }
  int slice(int v, int64_t a, int64_t b, int64_t axis) { return op("Slice", {v, ints({a}), ints({b}), ints({axis})}); }
};

// Consecutive pieces [a, b) of a reduction over `n` slabs whose bounds are slab[i] (the largest
// sum of |terms| a slab adds to one output): the longest runs whose sum stays below 2^24.
// Empty when one slab alone may pass it.
std::vector<std::pair<int64_t, int64_t>> exact_pieces(const std::vector<double>& slab) {
  std::vector<std::pair<int64_t, int64_t>> p;
  double run = 0;
  int64_t start = 0;
  for (int64_t i = 0; i < static_cast<int64_t>(slab.size()); ++i) {
    if (slab[i] >= kExactF32) return {};
    if (run + slab[i] >= kExactF32) p.push_back({start, i}), start = i, run = 0;
    run += slab[i];
  }
  p.push_back({start, static_cast<int64_t>(slab.size())});
  return p;
}

// The requantization of the int32 accumulator acc as the reference does it (quant_int.cpp
// requantize): round_half_even(acc * factor + y_zp) in float64, saturated, NaN -> 0.
void requantize(Emit& e, int acc, int factor, int yzp, DType yt, int out) {
  int v = e.op("Mul", {e.cast(acc, DType::f64), e.cast(factor, DType::f64)});
  if (yzp >= 0) v = e.op("Add", {v, e.cast(yzp, DType::f64)});
  v = e.op("Round", {v}, {}, -1, 11);
  double lo, hi;
  quant_int_range(yt, &lo, &hi);
  const int c = e.op("Clip", {v, e.scalar(DType::f64, lo), e.scalar(DType::f64, hi)});
  const int z = e.op("Where", {e.op("IsNaN", {v}), e.scalar(DType::f64, 0.0), c});
  e.op("Cast", {z}, {{"to", int64_t{dtype_to_onnx(yt)}}}, out);
}

bool conv_kind(Graph& g, const Node& n, std::vector<Node>& out) {
  const bool qlinear = n.op_type == "QLinearConv";
  const int x = n.inputs[0], w = n.inputs[qlinear ? 3 : 1];
  const auto in = [&](size_t k) { return n.has_input(k) ? n.inputs[k] : -1; };
  const int xzp = in(2), wzp = in(qlinear ? 5 : 3), bias = qlinear ? in(8) : -1;
  // Copies: emitting below adds values (g.values may move).
  const Shape xsh = g.values[x].shape, wsh = g.values[w].shape;
  const DType xt = g.values[x].dtype, wt = g.values[w].dtype;
  if (!int8ish(xt) || !int8ish(wt) || xsh.size() < 3 || wsh.size() != xsh.size()) return false;
  if (xzp >= 0 && shape_numel(g.values[xzp].shape) != 1) return false;
  const int64_t M = wsh[0], Cg = wsh[1], G = n.attr_i("group", 1);
  if (M <= 0 || Cg <= 0 || G <= 0 || xsh[1] != Cg * G) return false;
  if (wzp >= 0 && shape_numel(g.values[wzp].shape) != 1 && shape_numel(g.values[wzp].shape) != M) return false;
  int64_t ks = 1;
  for (size_t d = 2; d < wsh.size(); ++d) ks *= wsh[d];
  const double X = centered_max(g, xt, xzp);
  // Per input channel of a group: the most one output channel gathers from it.
  std::vector<double> slab(static_cast<size_t>(Cg), 0.0);
  const std::vector<double> wa = centered_abs(g, w, wzp, M, Cg * ks);
  double total = 0;
  for (int64_t o = 0; o < M; ++o) {
    double row = 0;
    for (int64_t c = 0; c < Cg; ++c) {
      double s = 0;
      for (int64_t k = 0; k < ks; ++k) s += wa.empty() ? 255.0 : wa[static_cast<size_t>((o * Cg + c) * ks + k)];
      slab[static_cast<size_t>(c)] = std::max(slab[static_cast<size_t>(c)], X * s);
      row += X * s;
    }
    total = std::max(total, row);
  }
  double bmax = 0;
  if (bias >= 0) {
    const Value& bv = g.values[bias];  // read before anything is emitted
    if (bv.dtype != DType::i32 || !bv.constant || bv.shape != Shape{M}) return false;
    for (int64_t i = 0; i < bv.constant->numel(); ++i) bmax = std::max(bmax, std::fabs(static_cast<double>(bv.constant->get_int(i))));
  }
  if (total + bmax > kInt32) return false;  // the reference's int32 accumulator could wrap
  std::vector<std::pair<int64_t, int64_t>> pieces{{0, Cg}};
  if (total >= kExactF32) {
    if (G != 1) return false;
    pieces = exact_pieces(slab);
    if (pieces.empty()) return false;
  }
  Emit e{g, n.name, out};
  Shape pshape(wsh.size(), 1);  // [M, 1, ...]: a per-output-channel parameter of w
  pshape[0] = M;
  const int xf = e.cast(x, DType::f32);
  const int xc = xzp >= 0 ? e.op("Sub", {xf, e.cast(xzp, DType::f32)}) : xf;
  const int wf = e.cast(w, DType::f32);
  const int wc = wzp >= 0 ? e.op("Sub", {wf, e.op("Reshape", {e.cast(wzp, DType::f32), e.ints(shape_numel(g.values[wzp].shape) == 1 ? Shape{} : pshape)})}) : wf;
  std::map<std::string, AttrValue> attrs;
  for (const char* k : {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"})
    if (auto it = n.attrs.find(k); it != n.attrs.end()) attrs[k] = it->second;
  int acc = -1;
  for (const auto& [a, b] : pieces) {
    const bool whole = a == 0 && b == Cg;
    const int y = e.op("Conv", {whole ? xc : e.slice(xc, a, b, 1), whole ? wc : e.slice(wc, a, b, 1)}, attrs, -1, 11);
    const int yi = e.cast(y, DType::i32);
    acc = acc < 0 ? yi : e.op("Add", {acc, yi});
  }
  if (bias >= 0) {
    Shape bs(xsh.size(), 1);
    bs[1] = M;
    acc = e.op("Add", {acc, e.op("Reshape", {bias, e.ints(bs)})});
  }
  if (!qlinear) {
    e.op("Identity", {acc}, {}, n.outputs[0]);
    return true;
  }
  Shape fs(xsh.size(), 1);
  fs[1] = M;
  const int ws = shape_numel(g.values[n.inputs[4]].shape) == 1 ? n.inputs[4] : e.op("Reshape", {n.inputs[4], e.ints(fs)});
  const int factor = e.op("Div", {e.op("Mul", {n.inputs[1], ws}), n.inputs[6]});
  requantize(e, acc, factor, in(7), g.values[n.outputs[0]].dtype, n.outputs[0]);
  return true;
}

bool matmul_kind(Graph& g, const Node& n, std::vector<Node>& out) {
  const bool qlinear = n.op_type == "QLinearMatMul";
  const auto in = [&](size_t k) { return n.has_input(k) ? n.inputs[k] : -1; };
  const int a = n.inputs[0], b = n.inputs[qlinear ? 3 : 1], azp = in(2), bzp = in(qlinear ? 5 : 3);
  const Shape as = g.values[a].shape;  // a copy: emitting below adds values (g.values may move)
  const Value& av = g.values[a];
  const Value& bv = g.values[b];
  if (!int8ish(av.dtype) || !int8ish(bv.dtype) || av.shape.size() < 2 || bv.shape.size() != 2) return false;
  const int64_t M = av.shape[av.shape.size() - 2], K = av.shape.back(), N = bv.shape[1];
  if (bv.shape[0] != K || K <= 0 || M <= 0 || N <= 0) return false;  // empty products: the reference's own loop
  // Per-row a parameters ([M]) and per-column b parameters ([N]) broadcast as [M, 1] and [N].
  if (azp >= 0 && shape_numel(g.values[azp].shape) != 1 && shape_numel(g.values[azp].shape) != M) return false;
  if (bzp >= 0 && shape_numel(g.values[bzp].shape) != 1 && shape_numel(g.values[bzp].shape) != N) return false;
  const double X = centered_max(g, av.dtype, azp);
  const std::vector<double> ba = centered_abs(g, b, bzp, N, 1);
  std::vector<double> slab(static_cast<size_t>(K), 0.0);
  std::vector<double> col(static_cast<size_t>(N), 0.0);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j) {
      const double t = X * (ba.empty() ? 255.0 : ba[static_cast<size_t>(k * N + j)]);
      slab[static_cast<size_t>(k)] = std::max(slab[static_cast<size_t>(k)], t);
      col[static_cast<size_t>(j)] += t;
    }
  const double total = *std::max_element(col.begin(), col.end());
  if (total > kInt32) return false;
  std::vector<std::pair<int64_t, int64_t>> pieces{{0, K}};
  if (total >= kExactF32) {
    pieces = exact_pieces(slab);
    if (pieces.empty()) return false;
  }
  Emit e{g, n.name, out};
  const auto rows = [&](int v) { return shape_numel(g.values[v].shape) == 1 ? v : e.op("Reshape", {v, e.ints({M, 1})}); };
  const auto cols = [&](int v) { return shape_numel(g.values[v].shape) == 1 ? v : e.op("Reshape", {v, e.ints({N})}); };
  const int af = e.cast(a, DType::f32), bf = e.cast(b, DType::f32);
  const int ac = azp >= 0 ? e.op("Sub", {af, e.cast(rows(azp), DType::f32)}) : af;
  const int bc = bzp >= 0 ? e.op("Sub", {bf, e.cast(cols(bzp), DType::f32)}) : bf;
  const int64_t last = static_cast<int64_t>(as.size()) - 1;
  int acc = -1;
  for (const auto& [p, q] : pieces) {
    const bool whole = p == 0 && q == K;
    const int y = e.op("MatMul", {whole ? ac : e.slice(ac, p, q, last), whole ? bc : e.slice(bc, p, q, 0)});
    const int yi = e.cast(y, DType::i32);
    acc = acc < 0 ? yi : e.op("Add", {acc, yi});
  }
  if (!qlinear) {
    e.op("Identity", {acc}, {}, n.outputs[0]);
    return true;
  }
  const int factor = e.op("Div", {e.op("Mul", {rows(n.inputs[1]), cols(n.inputs[4])}), n.inputs[6]});
  requantize(e, acc, factor, in(7), g.values[n.outputs[0]].dtype, n.outputs[0]);
  return true;
}

// DynamicQuantizeLinear (x float32 -> uint8 y, scale, zero point) by its formula in float32, as
// the reference (quant_int.cpp dql_ref): NaN elements count as 0 for the range (the reference's
// max / min skip them, starting from 0) and quantize to 0.
bool dynamic_quantize(Graph& g, const Node& n, std::vector<Node>& out) {
  if (g.values[n.inputs[0]].dtype != DType::f32 || g.values[n.inputs[0]].shape.empty()) return false;
  const int64_t r = static_cast<int64_t>(g.values[n.inputs[0]].shape.size());
  Emit e{g, n.name, out};
  const int zero = e.scalar(DType::f32, 0.0);
  const int x0 = e.op("Where", {e.op("IsNaN", {n.inputs[0]}), zero, n.inputs[0]});
  std::vector<int64_t> all;
  for (int64_t d = 0; d < r; ++d) all.push_back(d);
  const auto reduce = [&](const char* op) { return e.op(op, {x0}, {{"axes", all}, {"keepdims", int64_t{0}}}, -1, 11); };
  const int mx = e.op("Max", {reduce("ReduceMax"), zero}), mn = e.op("Min", {reduce("ReduceMin"), zero});
  const int range = e.op("Where", {e.op("Equal", {mx, mn}), e.scalar(DType::f32, 1.0), e.op("Sub", {mx, mn})});
  const int scale = e.op("Div", {range, e.scalar(DType::f32, 255.0)}, {}, n.outputs.size() > 1 && n.outputs[1] >= 0 ? n.outputs[1] : -1);
  const int zpf = e.op("Round", {e.op("Clip", {e.op("Sub", {zero, e.op("Div", {mn, scale})}), zero, e.scalar(DType::f32, 255.0)})}, {}, -1, 11);
  if (n.outputs.size() > 2 && n.outputs[2] >= 0) e.op("Cast", {zpf}, {{"to", int64_t{dtype_to_onnx(DType::u8)}}}, n.outputs[2]);
  const int v = e.op("Add", {e.op("Round", {e.op("Div", {n.inputs[0], scale})}, {}, -1, 11), zpf});
  const int c = e.op("Where", {e.op("IsNaN", {v}), zero, e.op("Clip", {v, zero, e.scalar(DType::f32, 255.0)})});
  e.op("Cast", {c}, {{"to", int64_t{dtype_to_onnx(DType::u8)}}}, n.outputs[0]);
  return true;
}

}  // namespace

bool decompose_quant_int(Graph& g, const Node& n, std::vector<Node>& out) {
  if (n.op_type == "DynamicQuantizeLinear" && (n.domain.empty() || n.domain == "ai.onnx") && !n.outputs.empty() && n.outputs[0] >= 0 &&
      n.has_input(0) && g.values[n.inputs[0]].shape_known) {
    std::vector<Node> made;
    if (!dynamic_quantize(g, n, made)) return false;
    out.insert(out.end(), made.begin(), made.end());
    return true;
  }
  const bool conv = n.op_type == "QLinearConv" || n.op_type == "ConvInteger";
  const bool mm = n.op_type == "QLinearMatMul" || n.op_type == "MatMulInteger";
  if ((!conv && !mm) || !(n.domain.empty() || n.domain == "ai.onnx") || n.outputs.size() != 1 || n.outputs[0] < 0) return false;
  for (int v : n.inputs)
    if (v >= 0 && !g.values[v].shape_known) return false;
  if (n.op_type == "QLinearMatMul" || n.op_type == "QLinearConv") {
    const DType st = g.values[n.inputs[1]].dtype;  // the scales' dtype, the factor's
    if (!dtype_is_float(st)) return false;
    if (!n.has_input(7) || shape_numel(g.values[n.inputs[6]].shape) != 1 || shape_numel(g.values[n.inputs[7]].shape) != 1) return false;
    if (shape_numel(g.values[n.inputs[1]].shape) != 1 && n.op_type == "QLinearConv") return false;
  }
  std::vector<Node> made;
  const bool ok = conv ? conv_kind(g, n, made) : matmul_kind(g, n, made);
  if (ok) out.insert(out.end(), made.begin(), made.end());
  return ok;
}

}  // namespace fusor
