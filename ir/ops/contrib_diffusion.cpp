// onnxruntime's diffusion contrib ops (domain com.microsoft), as its transformer optimizer writes
// them into Stable Diffusion UNets / VAEs (onnxruntime/core/graph/contrib_ops/diffusion_defs.cc),
// expanded at shape inference into standard ops like the other contrib ops (ir/ops/contrib.cpp):
//
//   GroupNorm(X, gamma, beta) groups, epsilon=1e-5, activation (0: none, 1: SiLU), channels_last=1
//     X [N, H, W, C] (channels_last) or [N, C, H, W]; gamma, beta [C]. Each (n, group of
//     C / groups channels) normalized over its channels and positions:
//     y = gamma * (x - mean) / sqrt(var + epsilon) + beta, then y * sigmoid(y) when activation is 1.
//   SkipGroupNorm(X, gamma, beta, skip, bias?) -> Y, S?: s = X + skip + bias (skip [N, H, W, C],
//     [N, 1, 1, C] or [N, C]; bias [C]), S = s, Y = GroupNorm(s) (channels_last only, as
//     onnxruntime).
//   BiasSplitGelu(X, bias) -> Y: X [N, S, D] + bias [D], split in halves a | b on the last axis,
//     Y = a * Gelu(b) (erf form), [N, S, D / 2].
//   NhwcConv(X, W, B?) Conv's attributes: a 2-D Conv with X [N, H, W, C], W [M, kH, kW, C / group]
//     and Y [N, OH, OW, M] (the weight transposed as its fusion_nhwc_conv writes it).
// fp16 / bf16 compute in float32 and round once at each output, as onnxruntime's kernels do;
// gamma and beta may be float32 with fp16 X (type M). Errors: Error("shape") naming the node.
#include "ir/ops/contrib_common.h"
#include "ir/ops/op_helpers.h"

namespace fusor {
namespace contrib {
namespace {

int64_t group_count(const Node& n, int64_t C) {
  const int64_t G = n.attr_i("groups", 0);
  if (G <= 0 || C % G != 0)
    throw Error("shape", n.label() + ": groups (" + std::to_string(G) + ") must be positive and divide the " + std::to_string(C) +
                             " channels");
  const int64_t act = n.attr_i("activation", 0);
  if (act != 0 && act != 1) throw Error("shape", n.label() + ": activation must be 0 (none) or 1 (SiLU), got " + std::to_string(act));
  return G;
}

// GroupNorm of s (float32 or X's dtype t when t is float32), [N, H, W, C] or [N, C, H, W] by
// channels_last, written to value out in dtype t.
void group_norm(RewriteNodes& w, const Node& n, int s, const Shape& xs, DType t, bool channels_last, int out) {
  const int64_t C = channels_last ? xs.back() : xs[1];
  const int64_t G = group_count(n, C);
  const bool half = is_half(t);
  const DType ct = half ? DType::f32 : t;
  const int gamma = half || w.g.values[n.inputs[1]].dtype != ct ? cast_to(w, n.inputs[1], ct) : n.inputs[1];
  const int beta = half || w.g.values[n.inputs[2]].dtype != ct ? cast_to(w, n.inputs[2], ct) : n.inputs[2];
  // [N, spatial..., G, C / G] (channels last) or [N, G, C / G * spatial], statistics over all but N and G.
  int64_t spatial = 1;
  for (size_t i = 1; i + 1 < xs.size(); ++i) spatial *= channels_last ? xs[i] : xs[i + 1];
  const std::vector<int64_t> grouped = channels_last ? std::vector<int64_t>{xs[0], spatial, G, C / G} : std::vector<int64_t>{xs[0], G, C / G * spatial};
  const std::vector<int64_t> axes = channels_last ? std::vector<int64_t>{1, 3} : std::vector<int64_t>{2};
  const int x = w.op("Reshape", {s, w.ints(grouped)}, {}, -1, 14);
  const int mean = w.op("ReduceMean", {x, w.ints(axes)}, {}, -1, 18);
  const int d = w.op("Sub", {x, mean});
  const int var = w.op("ReduceMean", {w.op("Mul", {d, d}), w.ints(axes)}, {}, -1, 18);
  const int norm = w.op("Div", {d, w.op("Sqrt", {w.op("Add", {var, scalar(w.g, n, ct, epsilon_of(n, 1e-5))})})});
  std::vector<int64_t> cs{C};  // gamma / beta along the channel axis
  if (!channels_last)
    for (size_t i = 2; i < xs.size(); ++i) cs.push_back(1);
  const auto per_channel = [&](int v) { return channels_last ? v : w.op("Reshape", {v, w.ints(cs)}, {}, -1, 14); };
  const bool silu = n.attr_i("activation", 0) == 1;
  const int y = w.op("Add", {w.op("Mul", {w.op("Reshape", {norm, w.ints(xs)}, {}, -1, 14), per_channel(gamma)}), per_channel(beta)}, {},
                     half || silu ? -1 : out);
  const int a = silu ? w.op("Mul", {y, w.op("Sigmoid", {y})}, {}, half ? -1 : out) : y;
  if (half) cast_to(w, a, t, out);
}

void check_rank4(const Graph& g, const Node& n) {
  need_float(g, n, 0, "X");
  need_float(g, n, 1, "gamma");
  need_float(g, n, 2, "beta");
  if (g.values[n.inputs[0]].shape.size() != 4)
    throw Error("shape", n.label() + ": X must be 4-D, got " + shape_str(g.values[n.inputs[0]].shape));
}

bool group_norm_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  if (!all_known(g, n)) return false;
  check_rank4(g, n);
  const Shape xs = g.values[n.inputs[0]].shape;
  const bool last = n.attr_i("channels_last", 1) != 0;
  const int64_t C = last ? xs[3] : xs[1];
  need_hidden(g, n, n.inputs[1], "gamma", C);
  need_hidden(g, n, n.inputs[2], "beta", C);
  RewriteNodes w{g, n.name, {}};
  const DType t = g.values[n.inputs[0]].dtype;
  group_norm(w, n, is_half(t) ? as_f32(w, n.inputs[0]) : n.inputs[0], xs, t, last, out_of(n, 0));
  w.replace(index);
  return true;
}

bool skip_group_norm_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  if (!all_known(g, n)) return false;
  check_rank4(g, n);
  need_float(g, n, 3, "skip");
  if (n.attr_i("channels_last", 1) == 0) throw Unsupported("shape", n.label() + ": channels_last = 0 (onnxruntime supports NHWC only)");
  const Shape xs = g.values[n.inputs[0]].shape, ss = g.values[n.inputs[3]].shape;
  const int64_t N = xs[0], C = xs[3];
  need_hidden(g, n, n.inputs[1], "gamma", C);
  need_hidden(g, n, n.inputs[2], "beta", C);
  need_hidden(g, n, in_of(n, 4), "bias", C);
  const bool full = ss == xs, pooled = ss == Shape{N, 1, 1, C}, flat = ss == Shape{N, C};
  if (!full && !pooled && !flat)
    throw Error("shape", n.label() + ": skip must be " + shape_str(xs) + ", [" + std::to_string(N) + ", 1, 1, " + std::to_string(C) + "] or [" +
                             std::to_string(N) + ", " + std::to_string(C) + "], got " + shape_str(ss));
  RewriteNodes w{g, n.name, {}};
  const DType t = g.values[n.inputs[0]].dtype;
  const bool half = is_half(t);
  int skip = half ? as_f32(w, n.inputs[3]) : n.inputs[3];
  if (flat) skip = w.op("Reshape", {skip, w.ints({N, 1, 1, C})}, {}, -1, 14);
  int s = w.op("Add", {half ? as_f32(w, n.inputs[0]) : n.inputs[0], skip});
  if (in_of(n, 4) >= 0) s = w.op("Add", {s, half ? as_f32(w, n.inputs[4]) : n.inputs[4]});
  if (out_of(n, 1) >= 0) {
    if (half) cast_to(w, s, t, out_of(n, 1));
    else w.op("Identity", {s}, {}, out_of(n, 1));
  }
  group_norm(w, n, s, xs, t, true, out_of(n, 0));
  w.replace(index);
  return true;
}

bool bias_split_gelu_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  if (!all_known(g, n)) return false;
  need_float(g, n, 0, "X");
  need_float(g, n, 1, "bias");
  const Shape xs = g.values[n.inputs[0]].shape;
  if (xs.size() != 3 || xs[2] % 2 != 0)
    throw Error("shape", n.label() + ": X must be [N, S, D] with D even, got " + shape_str(xs));
  need_hidden(g, n, n.inputs[1], "bias", xs[2]);
  RewriteNodes w{g, n.name, {}};
  const DType t = g.values[n.inputs[0]].dtype;
  const bool half = is_half(t);
  const int x = w.op("Add", {half ? as_f32(w, n.inputs[0]) : n.inputs[0], half ? as_f32(w, n.inputs[1]) : n.inputs[1]});
  const int64_t h = xs[2] / 2;
  const auto part = [&](int64_t from) { return w.op("Slice", {x, w.ints({from}), w.ints({from + h}), w.ints({2})}); };
  const int y = w.op("Mul", {part(0), w.op("Gelu", {part(h)}, {{"approximate", std::string("none")}}, -1, 20)}, {}, half ? -1 : out_of(n, 0));
  if (half) cast_to(w, y, t, out_of(n, 0));
  w.replace(index);
  return true;
}

// [N, S, D / 2] once X is known; like X until then.
void bias_split_gelu_infer(InferContext& ctx) {
  Shape s = ctx.shape(0);
  if (s.size() == 3 && s[2] >= 0) s[2] /= 2;
  ctx.set_output(0, ctx.dtype(0), s);
}

bool nhwc_conv_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  if (!all_known(g, n)) return false;
  need_float(g, n, 0, "X");
  need_float(g, n, 1, "W");
  for (int i : {0, 1})
    if (g.values[n.inputs[i]].shape.size() != 4)
      throw Error("shape", n.label() + ": " + (i ? "W" : "X") + " must be 4-D (2-D convolution, NHWC), got " +
                               shape_str(g.values[n.inputs[i]].shape));
  RewriteNodes w{g, n.name, {}};
  const std::vector<int64_t> to_nchw{0, 3, 1, 2};
  std::vector<int> ins{w.op("Transpose", {n.inputs[0]}, {{"perm", to_nchw}}), w.op("Transpose", {n.inputs[1]}, {{"perm", to_nchw}})};
  if (in_of(n, 2) >= 0) ins.push_back(n.inputs[2]);
  const int y = w.op("Conv", ins, n.attrs, -1, 11);
  w.op("Transpose", {y}, {{"perm", std::vector<int64_t>{0, 2, 3, 1}}}, out_of(n, 0));
  w.replace(index);
  return true;
}

// Before expansion: [N, ?, ?, M] (M from W), the spatial dims unknown.
void nhwc_conv_infer(InferContext& ctx) {
  const Shape &x = ctx.shape(0), &wt = ctx.shape(1);
  if (x.size() != 4 || wt.size() != 4) ctx.fail("X and W must be 4-D (2-D convolution, NHWC)");
  ctx.set_output(0, ctx.dtype(0), {x[0], -1, -1, wt[0]});
}

}  // namespace

void register_contrib_diffusion_ops() {
  const std::string ms = "com.microsoft.";
  register_expanded(ms + "GroupNorm", 3, 3, 1, like_input(0), group_norm_expand);
  register_expanded(ms + "SkipGroupNorm", 4, 5, 2, like_input(0), skip_group_norm_expand);
  register_expanded(ms + "BiasSplitGelu", 2, 2, 1, bias_split_gelu_infer, bias_split_gelu_expand);
  register_expanded(ms + "NhwcConv", 2, 3, 1, nhwc_conv_infer, nhwc_conv_expand);
}

}  // namespace contrib
}  // namespace fusor
