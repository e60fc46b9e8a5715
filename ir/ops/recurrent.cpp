// Recurrent ops (ONNX semantics): RNN, GRU, LSTM (opsets 7 and 14; shapes in ir/recurrent.h).
//
// Per step t and direction (operator spec; "." element-wise, f/g/h the activations, every
// pre-activation sum clipped to [-clip, clip] when clip is set):
//   RNN:  H = f(X W^T + Wb + H' R^T + Rb)
//   GRU:  z = f(X Wz^T + Wbz + H' Rz^T + Rbz), r = f(.. r ..),
//         h = g(X Wh^T + Wbh + (r . H') Rh^T + Rbh)       linear_before_reset = 0
//         h = g(X Wh^T + Wbh + r . (H' Rh^T + Rbh))       linear_before_reset = 1
//         H = (1 - z) . h + z . H'
//   LSTM: i = f(X Wi^T + Wbi + H' Ri^T + Rbi + Pi . C'), f = f(.. f .. + Pf . C') (1 - i with
//         input_forget), c = g(.. c ..), C = f . C' + i . c, o = f(.. o .. + Po . C), H = o . h(C)
// A batch row with sequence length L runs steps 0..L-1 (reverse: L-1 down to 0); Y is 0 past L.
// The reference computes in double and stores in X's dtype.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <tuple>

#include "ir/ops/op_helpers.h"
#include "ir/recurrent.h"

namespace fusor {

namespace {
using namespace op_helpers;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Whether an activation takes alpha / beta, and their defaults: the spec's, those of the ONNX
// operator of the same name (onnxruntime 1.32 uses 0 for Affine, ScaledTanh and ThresholdedRelu).
struct ActInfo {
  const char* name;
  int uses;  // 0 none, 1 alpha, 2 alpha and beta
  double alpha, beta;
};
constexpr ActInfo kActs[] = {
    {"relu", 0, 0, 0},        {"tanh", 0, 0, 0},           {"sigmoid", 0, 0, 0},       {"affine", 2, 1.0, 0.0},
    {"leakyrelu", 1, 0.01, 0}, {"thresholdedrelu", 1, 1.0, 0}, {"scaledtanh", 2, 1.0, 1.0}, {"hardsigmoid", 2, 0.2, 0.5},
    {"elu", 1, 1.0, 0},       {"softsign", 0, 0, 0},       {"softplus", 0, 0, 0},
};
}  // namespace

double rnn_activate(const RnnActivation& a, double x) {
  const std::string& f = a.name;
  if (f == "sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (f == "tanh") return std::tanh(x);
  if (f == "relu") return x > 0 ? x : 0.0;
  if (f == "affine") return a.alpha * x + a.beta;
  if (f == "leakyrelu") return x >= 0 ? x : a.alpha * x;
  if (f == "thresholdedrelu") return x > a.alpha ? x : 0.0;
  if (f == "scaledtanh") return a.alpha * std::tanh(a.beta * x);
  if (f == "hardsigmoid") return std::max(0.0, std::min(1.0, a.alpha * x + a.beta));
  if (f == "elu") return x >= 0 ? x : a.alpha * (std::exp(x) - 1.0);
  if (f == "softsign") return x / (1.0 + std::fabs(x));
  if (f == "softplus") return std::log1p(std::exp(-std::fabs(x))) + std::max(x, 0.0);
  return x;  // unreachable: rnn_attrs validates names
}

RnnAttrs rnn_attrs(const Node& n, int64_t hidden_from_r) {
  RnnAttrs a;
  const std::string& t = n.op_type;
  a.kind = t == "LSTM" ? RnnAttrs::lstm : t == "GRU" ? RnnAttrs::gru : RnnAttrs::rnn;
  a.gates = a.kind == RnnAttrs::lstm ? 4 : a.kind == RnnAttrs::gru ? 3 : 1;
  auto fail = [&](const std::string& why) -> void { throw Error("shape", n.label() + ": " + why); };
  const std::string dir = n.attr_s("direction", "forward");
  if (dir == "bidirectional") a.num_dir = 2;
  else if (dir == "reverse") a.reverse = true;
  else if (dir != "forward") fail("direction '" + printable(dir) + "' is not forward, reverse or bidirectional");
  a.hidden = n.attr_i("hidden_size", hidden_from_r);
  if (a.hidden != hidden_from_r)
    fail("hidden_size " + std::to_string(a.hidden) + " does not match R's last dim " + std::to_string(hidden_from_r));
  a.layout = static_cast<int>(n.attr_i("layout", 0));
  if (a.layout != 0 && a.layout != 1) fail("layout must be 0 or 1, got " + std::to_string(a.layout));
  if (n.has_attr("clip")) {
    a.has_clip = true;
    a.clip = n.attr_f("clip", 0);
    if (!(a.clip > 0)) fail("clip must be positive");
  }
  a.linear_before_reset = a.kind == RnnAttrs::gru && n.attr_i("linear_before_reset", 0) != 0;
  a.input_forget = a.kind == RnnAttrs::lstm && n.attr_i("input_forget", 0) != 0;

  std::vector<std::string> names;
  if (auto it = n.attrs.find("activations"); it != n.attrs.end()) {
    if (const auto* v = std::get_if<std::vector<std::string>>(&it->second)) names = *v;
    else if (const auto* s = std::get_if<std::string>(&it->second)) names = {*s};
    else fail("attribute 'activations' must be a list of strings");
  }
  const int per = a.acts_per_dir();
  if (names.empty()) {
    const std::vector<std::string> dflt = a.kind == RnnAttrs::lstm  ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                          : a.kind == RnnAttrs::gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                                    : std::vector<std::string>{"Tanh"};
    for (int d = 0; d < a.num_dir; ++d) names.insert(names.end(), dflt.begin(), dflt.end());
  } else if (static_cast<int>(names.size()) == per && a.num_dir == 2) {
    const std::vector<std::string> one = names;  // one set given: both directions use it
    names.insert(names.end(), one.begin(), one.end());
  }
  if (static_cast<int>(names.size()) != per * a.num_dir)
    fail("expects " + std::to_string(per * a.num_dir) + " activations, got " + std::to_string(names.size()));
  const std::vector<double> alphas = n.attr_floats("activation_alpha"), betas = n.attr_floats("activation_beta");
  size_t ai = 0, bi = 0;
  for (const std::string& nm : names) {
    RnnActivation act;
    act.name = lower(nm);
    const ActInfo* info = nullptr;
    for (const ActInfo& k : kActs)
      if (act.name == k.name) info = &k;
    if (!info) fail("activation '" + printable(nm) + "' is not supported");
    act.alpha = onnx_float(info->alpha), act.beta = onnx_float(info->beta);  // defaults of FLOAT attributes are float32
    if (info->uses >= 1 && ai < alphas.size()) act.alpha = alphas[ai++];
    if (info->uses >= 2 && bi < betas.size()) act.beta = betas[bi++];
    a.act.push_back(std::move(act));
  }
  return a;
}

namespace {

// Input indices of the recurrent ops.
enum { kX, kW, kR, kB, kSeqLens, kInitH, kInitC, kP };

void rnn_infer(InferContext& ctx) {
  const Node& n = ctx.node();
  if (ctx.rank(kX) != 3) ctx.fail("X must have rank 3, got " + shape_str(ctx.shape(kX)));
  if (ctx.rank(kR) != 3) ctx.fail("R must have rank 3, got " + shape_str(ctx.shape(kR)));
  if (!dtype_is_float(ctx.dtype(kX))) ctx.fail(std::string("X must be a float tensor, got ") + dtype_name(ctx.dtype(kX)));
  const RnnAttrs a = rnn_attrs(n, ctx.shape(kR)[2]);
  const Shape& x = ctx.shape(kX);
  const int64_t S = a.layout ? x[1] : x[0], B = a.layout ? x[0] : x[1], I = x[2], H = a.hidden, D = a.num_dir,
                GH = a.gates * H;
  auto expect = [&](int i, const char* what, const Shape& want) {
    if (!ctx.has_input(i)) return;
    if (ctx.shape(i) != want) ctx.fail(std::string(what) + " must have shape " + shape_str(want) + ", got " + shape_str(ctx.shape(i)));
    if (i != kSeqLens && ctx.dtype(i) != ctx.dtype(kX)) ctx.fail(std::string(what) + " must have X's dtype");
  };
  expect(kW, "W", {D, GH, I});
  expect(kR, "R", {D, GH, H});
  expect(kB, "B", {D, 2 * GH});
  expect(kSeqLens, "sequence_lens", {B});
  if (ctx.has_input(kSeqLens) && !dtype_is_int(ctx.dtype(kSeqLens))) ctx.fail("sequence_lens must be an integer tensor");
  const Shape state = a.layout ? Shape{B, D, H} : Shape{D, B, H};
  expect(kInitH, "initial_h", state);
  if (a.kind == RnnAttrs::lstm) {
    expect(kInitC, "initial_c", state);
    expect(kP, "P", {D, 3 * H});
  } else if (ctx.num_inputs() > kInitC) {
    ctx.fail("has more than 6 inputs");
  }
  const int max_out = a.kind == RnnAttrs::lstm ? 3 : 2;
  if (ctx.num_outputs() > max_out) ctx.fail("has more than " + std::to_string(max_out) + " outputs");
  const DType t = ctx.dtype(kX);
  ctx.set_output(0, t, a.layout ? Shape{B, S, D, H} : Shape{S, D, B, H});
  for (int k = 1; k < ctx.num_outputs(); ++k) ctx.set_output(k, t, state);
}

void rnn_ref(const Node& n, const Ins& in, Outs& out) {
  const RnnAttrs a = rnn_attrs(n, in[kR]->shape()[2]);
  const Shape& xs = in[kX]->shape();
  const int64_t S = a.layout ? xs[1] : xs[0], B = a.layout ? xs[0] : xs[1], I = xs[2], H = a.hidden, D = a.num_dir,
                G = a.gates, GH = G * H;
  const std::vector<double> X = load_doubles(*in[kX]), W = load_doubles(*in[kW]), R = load_doubles(*in[kR]);
  auto opt = [&](int i, int64_t size) {
    const Tensor* t = opt_in(in, static_cast<size_t>(i));
    return t ? load_doubles(*t) : std::vector<double>(static_cast<size_t>(size), 0.0);
  };
  const std::vector<double> Bias = opt(kB, D * 2 * GH), h0 = opt(kInitH, D * B * H), c0 = opt(kInitC, D * B * H),
                            P = a.kind == RnnAttrs::lstm ? opt(kP, D * 3 * H) : std::vector<double>();
  std::vector<int64_t> len(static_cast<size_t>(B), S);
  if (const Tensor* sl = opt_in(in, kSeqLens)) {
    len = ints_of(*sl);
    for (int64_t l : len)
      if (l < 0 || l > S) ref_fail(n, "sequence_lens value " + std::to_string(l) + " is outside [0, " + std::to_string(S) + "]");
  }
  // Element offsets under the layout.
  auto x_at = [&](int64_t t, int64_t b) { return ((a.layout ? b * S + t : t * B + b)) * I; };
  auto state_at = [&](int64_t d, int64_t b) { return (a.layout ? b * D + d : d * B + b) * H; };
  auto y_at = [&](int64_t t, int64_t d, int64_t b) { return (a.layout ? (b * S + t) * D + d : (t * D + d) * B + b) * H; };
  std::vector<double> Y(static_cast<size_t>(S * D * B * H), 0.0), Yh(static_cast<size_t>(D * B * H)),
      Yc(static_cast<size_t>(D * B * H));
  std::vector<double> pre(static_cast<size_t>(GH)), rec(static_cast<size_t>(GH)), h(static_cast<size_t>(H)),
      c(static_cast<size_t>(H)), hn(static_cast<size_t>(H)), zr(static_cast<size_t>(2 * H));
  auto clip = [&](double v) { return a.has_clip ? std::max(-a.clip, std::min(a.clip, v)) : v; };
  for (int64_t d = 0; d < D; ++d) {
    const bool rev = a.reverse || d == 1;
    const double *w = W.data() + static_cast<size_t>(d * GH * I), *r = R.data() + static_cast<size_t>(d * GH * H),
                 *wb = Bias.data() + static_cast<size_t>(d * 2 * GH), *rb = wb + GH;
    const double* p = a.kind == RnnAttrs::lstm ? P.data() + static_cast<size_t>(d * 3 * H) : nullptr;
    const RnnActivation &f = a.activation(static_cast<int>(d), 0), &g = a.activation(static_cast<int>(d), a.kind == RnnAttrs::rnn ? 0 : 1),
                        &hf = a.activation(static_cast<int>(d), a.kind == RnnAttrs::lstm ? 2 : 0);
    for (int64_t b = 0; b < B; ++b) {
      std::copy_n(h0.data() + static_cast<size_t>(state_at(d, b)), H, h.begin());
      std::copy_n(c0.data() + static_cast<size_t>(state_at(d, b)), H, c.begin());
      const int64_t L = len[static_cast<size_t>(b)];
      for (int64_t k = 0; k < L; ++k) {
        const int64_t t = rev ? L - 1 - k : k;
        const double* xt = X.data() + static_cast<size_t>(x_at(t, b));
        for (int64_t j = 0; j < GH; ++j) {
          double s = wb[j], q = rb[j];
          for (int64_t i = 0; i < I; ++i) s += w[j * I + i] * xt[i];
          for (int64_t i = 0; i < H; ++i) q += r[j * H + i] * h[i];
          pre[j] = s;
          rec[j] = q;
        }
        if (a.kind == RnnAttrs::rnn) {
          for (int64_t j = 0; j < H; ++j) hn[j] = rnn_activate(f, clip(pre[j] + rec[j]));
        } else if (a.kind == RnnAttrs::gru) {
          // The h gate's recurrent term without linear_before_reset is (r . H') Rh^T + Rbh.
          for (int64_t j = 0; j < H; ++j) {
            zr[j] = rnn_activate(f, clip(pre[j] + rec[j]));
            zr[H + j] = rnn_activate(f, clip(pre[H + j] + rec[H + j]));
          }
          for (int64_t j = 0; j < H; ++j) {
            double hr;
            if (a.linear_before_reset) {
              hr = zr[H + j] * rec[2 * H + j];
            } else {
              hr = rb[2 * H + j];
              for (int64_t i = 0; i < H; ++i) hr += r[(2 * H + j) * H + i] * zr[H + i] * h[i];
            }
            const double hh = rnn_activate(g, clip(pre[2 * H + j] + hr));
            hn[j] = (1.0 - zr[j]) * hh + zr[j] * h[j];
          }
        } else {
          for (int64_t j = 0; j < H; ++j) {
            const double ig = rnn_activate(f, clip(pre[j] + rec[j] + p[j] * c[j]));
            const double fg = a.input_forget ? 1.0 - ig : rnn_activate(f, clip(pre[2 * H + j] + rec[2 * H + j] + p[2 * H + j] * c[j]));
            const double cc = rnn_activate(g, clip(pre[3 * H + j] + rec[3 * H + j]));
            c[j] = fg * c[j] + ig * cc;
            const double og = rnn_activate(f, clip(pre[H + j] + rec[H + j] + p[H + j] * c[j]));
            hn[j] = og * rnn_activate(hf, c[j]);
          }
        }
        h = hn;
        std::copy_n(h.begin(), H, &Y[static_cast<size_t>(y_at(t, d, b))]);
      }
      std::copy_n(h.begin(), H, &Yh[static_cast<size_t>(state_at(d, b))]);
      std::copy_n(c.begin(), H, &Yc[static_cast<size_t>(state_at(d, b))]);
    }
  }
  if (has_out(out, 0)) store_doubles(out[0], Y);
  if (has_out(out, 1)) store_doubles(out[1], Yh);
  if (has_out(out, 2)) store_doubles(out[2], Yc);
}

}  // namespace

void register_recurrent_ops() {
  for (auto [name, max_in, max_out] : {std::tuple{"RNN", 6, 2}, std::tuple{"GRU", 6, 2}, std::tuple{"LSTM", 8, 3}}) {
    OpDef d = table_entry(name, 3, max_in, rnn_infer, rnn_ref, max_out);
    d.optional_first_output = true;  // Y: a model may use only Y_h / Y_c
    register_op(std::move(d));
  }
}

}  // namespace fusor
