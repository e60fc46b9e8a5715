// RNN / GRU / LSTM as primitives (formulas in ir/ops/recurrent.cpp): per direction, one MatMul
// projects the whole sequence ([S*B, I] x [I, G*H], plus the biases), then each step is a MatMul
// for the recurrent term and element-wise gates, which fuse into a kernel or two per step; so
// a sequence runs as a few kernels per step inside the backend's one replay. Sequence lengths
// (constant or fed at run time) become per-step masks: a row past its length keeps its state
// (Where) and writes 0 to Y, which also gives the reverse direction's per-row start. The
// unrolled graph grows with S: past kMaxSteps the op is kept (host fallback on the GPUs).
#include <string>

#include "ir/op_table.h"
#include "ir/recurrent.h"

namespace fusor {
namespace {

// S * D steps unrolled at most: the fusion pass grows faster than linearly in the unrolled graph
// (on this 2-core machine, loaded: 64 steps 0.6 s, 128 steps 3.2 s, 256 steps 10 s to plan).
constexpr int64_t kMaxSteps = 128;

class Emit {
 public:
  Emit(Graph& g, const Node& n, DType t, std::vector<Node>& out) : g_(g), n_(n), t_(t), out_(out) {}

  int op(const std::string& type, std::vector<int> in, std::map<std::string, AttrValue> attrs = {}, int out = -1) {
    Node m;
    m.name = g_.unique_name(n_.name + "/" + type);
    m.op_type = type;
    m.opset = type == "Reshape" ? 14 : 13;
    m.inputs = std::move(in);
    m.attrs = std::move(attrs);
    if (out < 0) out = g_.add_value(m.name + ":0");
    m.outputs = {out};
    out_.push_back(std::move(m));
    return out;
  }
  int scalar(double v) {
    Tensor c(t_, {});
    c.set(0, v);
    return g_.add_constant(g_.unique_name(n_.name + "/c"), std::move(c));
  }
  int ints(const std::vector<int64_t>& v) {
    Tensor c(DType::i64, {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) c.set_int(static_cast<int64_t>(i), v[i]);
    return g_.add_constant(g_.unique_name(n_.name + "/shape"), std::move(c));
  }
  int zeros(const Shape& s) { return g_.add_constant(g_.unique_name(n_.name + "/zeros"), Tensor(t_, s)); }
  int slice(int x, std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes) {
    return op("Slice", {x, ints(starts), ints(ends), ints(axes)});
  }
  int reshape(int x, const Shape& s, int out = -1) { return op("Reshape", {x, ints(s)}, {{"allowzero", int64_t{1}}}, out); }
  int transpose(int x, std::vector<int64_t> perm, int out = -1) { return op("Transpose", {x}, {{"perm", std::move(perm)}}, out); }
  int add(int a, int b) { return op("Add", {a, b}); }
  int mul(int a, int b) { return op("Mul", {a, b}); }
  // Concat of many inputs as a tree of at most 8 per node (bounded kernel fan-in).
  int concat(std::vector<int> xs, int64_t axis, int out = -1) {
    while (xs.size() > 8) {
      std::vector<int> next;
      for (size_t i = 0; i < xs.size(); i += 8)
        next.push_back(xs.size() - i == 1 ? xs[i]
                                          : op("Concat", std::vector<int>(xs.begin() + static_cast<std::ptrdiff_t>(i),
                                                                          xs.begin() + static_cast<std::ptrdiff_t>(std::min(xs.size(), i + 8))),
                                               {{"axis", axis}}));
      xs = std::move(next);
    }
    if (xs.size() == 1) return out < 0 ? xs[0] : reshape(xs[0], g_.values[out].shape, out);  // out's shape is inferred
    return op("Concat", xs, {{"axis", axis}}, out);
  }
  int activate(const RnnActivation& a, int x) {
    const std::string& f = a.name;
    if (f == "sigmoid") return op("Sigmoid", {x});
    if (f == "tanh") return op("Tanh", {x});
    if (f == "relu") return op("Relu", {x});
    if (f == "softsign") return op("Softsign", {x});
    if (f == "softplus") return op("Softplus", {x});
    if (f == "leakyrelu") return op("LeakyRelu", {x}, {{"alpha", a.alpha}});
    if (f == "thresholdedrelu") return op("ThresholdedRelu", {x}, {{"alpha", a.alpha}});
    if (f == "elu") return op("Elu", {x}, {{"alpha", a.alpha}});
    if (f == "hardsigmoid") return op("HardSigmoid", {x}, {{"alpha", a.alpha}, {"beta", a.beta}});
    if (f == "affine") return add(mul(x, scalar(a.alpha)), scalar(a.beta));
    return mul(op("Tanh", {mul(x, scalar(a.beta))}), scalar(a.alpha));  // scaledtanh
  }

 private:
  Graph& g_;
  const Node& n_;
  DType t_;
  std::vector<Node>& out_;
};

}  // namespace

std::string recurrent_kept_reason(const Graph& g, const Node& n) {
  const std::string& type = n.op_type;
  if (type != "LSTM" && type != "GRU" && type != "RNN") return "";
  if (!n.has_input(0) || !n.has_input(1) || !n.has_input(2)) return "X, W or R is missing";
  const DType t = g.values[n.inputs[0]].dtype;
  if (t != DType::f32 && t != DType::f64)  // the op runs whole (host on the GPUs)
    return std::string(dtype_name(t)) + " recurrences stay whole; float32 / float64 ones unroll";
  const Shape xs = g.values[n.inputs[0]].shape, rs = g.values[n.inputs[2]].shape;
  if (xs.size() != 3 || rs.size() != 3) return "X or R is not 3-D";
  const RnnAttrs a = rnn_attrs(n, rs[2]);
  const int64_t S = a.layout ? xs[1] : xs[0], B = a.layout ? xs[0] : xs[1];
  if (S == 0 || B == 0) return "the sequence is empty";
  if (S * a.num_dir > kMaxSteps)
    return std::to_string(S) + " steps x " + std::to_string(a.num_dir) + " direction(s) are past the " + std::to_string(kMaxSteps) +
           " steps unrolled";
  return "";
}

bool decompose_recurrent(Graph& g, const Node& n, std::vector<Node>& out) {
  const std::string& type = n.op_type;
  if (type != "LSTM" && type != "GRU" && type != "RNN") return false;
  if (!recurrent_kept_reason(g, n).empty()) return false;
  const DType t = g.values[n.inputs[0]].dtype;
  const Shape xs = g.values[n.inputs[0]].shape, rs = g.values[n.inputs[2]].shape;
  const RnnAttrs a = rnn_attrs(n, rs[2]);
  const int64_t S = a.layout ? xs[1] : xs[0], B = a.layout ? xs[0] : xs[1], I = xs[2], H = a.hidden, D = a.num_dir,
                G = a.gates, GH = G * H;
  auto in = [&](int i) { return n.has_input(static_cast<size_t>(i)) ? n.inputs[static_cast<size_t>(i)] : -1; };
  auto outv = [&](size_t k) { return k < n.outputs.size() ? n.outputs[k] : -1; };
  const bool lstm = a.kind == RnnAttrs::lstm, gru = a.kind == RnnAttrs::gru;

  std::vector<Node> nodes;
  Emit e(g, n, t, nodes);
  int x = in(0);
  if (a.layout) x = e.transpose(x, {1, 0, 2});
  const int x2 = e.reshape(x, {S * B, I});
  int seq = in(4);
  if (seq >= 0 && g.values[seq].constant) {  // all rows full length: no masks
    bool full = true;
    for (int64_t b = 0; b < B; ++b) full = full && g.values[seq].constant->get_int(b) == S;
    if (full) seq = -1;
  }
  const DType seq_t = seq >= 0 ? g.values[seq].dtype : DType::i32;
  if (seq >= 0 && g.values[seq].constant) {  // the reference's check, at compile time
    for (int64_t b = 0; b < B; ++b) {
      const int64_t l = g.values[seq].constant->get_int(b);
      if (l < 0 || l > S)
        throw Error("shape", n.label() + ": sequence_lens value " + std::to_string(l) + " is outside [0, " + std::to_string(S) + "]");
    }
  } else if (seq >= 0) {
    // Lengths fed at run time pass through two Gathers of [0, 1, .., S]: by len (fails past S)
    // and by len - (S + 1) (fails below 0), so a length outside [0, S] fails the run on every
    // backend as on ref (index-checked kernels), and a valid one comes out unchanged.
    Tensor iota(seq_t, {S + 1}), off(seq_t, {});
    for (int64_t k = 0; k <= S; ++k) iota.set_int(k, k);
    off.set_int(0, S + 1);
    const int iv = g.add_constant(g.unique_name(n.name + "/sequence_lens_range"), std::move(iota));
    const int hi = e.op("Gather", {iv, seq}), lo = e.op("Gather", {iv, e.op("Sub", {seq, g.add_constant(g.unique_name(n.name + "/c"), std::move(off))})});
    for (size_t k = nodes.size() - 3; k < nodes.size(); ++k)
      if (nodes[k].op_type == "Gather") nodes[k].name = g.unique_name(n.name + "/sequence_lens_check");
    seq = e.op("Min", {hi, lo});
  }
  const int seq_col = seq >= 0 ? e.reshape(seq, {B, 1}) : -1;
  auto clip = [&](int v) { return a.has_clip ? e.op("Clip", {v, e.scalar(-a.clip), e.scalar(a.clip)}) : v; };
  auto gate = [&](int v, int64_t k, int64_t width = 1) { return e.slice(v, {k * H}, {(k + width) * H}, {1}); };
  // State inputs [D, B, H] (layout 1: [B, D, H]) as direction d's [B, H].
  auto state_in = [&](int v, int64_t d) {
    if (v < 0) return e.zeros({B, H});
    if (a.layout) return e.reshape(e.slice(v, {d}, {d + 1}, {1}), {B, H});
    return e.reshape(e.slice(v, {d}, {d + 1}, {0}), {B, H});
  };

  std::vector<int> y_dirs, yh_dirs, yc_dirs;
  for (int64_t d = 0; d < D; ++d) {
    const bool rev = a.reverse || d == 1;
    const RnnActivation &f = a.activation(static_cast<int>(d), 0), &g2 = a.activation(static_cast<int>(d), gru || lstm ? 1 : 0),
                        &h3 = a.activation(static_cast<int>(d), lstm ? 2 : 0);
    const int w = e.reshape(e.slice(in(1), {d}, {d + 1}, {0}), {GH, I});
    const int r = e.reshape(e.slice(in(2), {d}, {d + 1}, {0}), {GH, H});
    // Input projection of the whole sequence, with every bias that is added outside the
    // recurrent product (all but GRU's Rbh under linear_before_reset, which r scales).
    int xw = e.op("MatMul", {x2, e.transpose(w, {1, 0})});
    int rbh = -1;
    if (in(3) >= 0) {
      const int wb = e.reshape(e.slice(in(3), {d, 0}, {d + 1, GH}, {0, 1}), {GH});
      int rb = e.reshape(e.slice(in(3), {d, GH}, {d + 1, 2 * GH}, {0, 1}), {GH});
      if (gru && a.linear_before_reset) {
        rbh = e.slice(rb, {2 * H}, {3 * H}, {0});
        rb = e.op("Concat", {e.slice(rb, {0}, {2 * H}, {0}), e.zeros({H})}, {{"axis", int64_t{0}}});
      }
      xw = e.add(xw, e.add(wb, rb));
    }
    xw = e.reshape(xw, {S, B, GH});
    int rt = -1, rt_zr = -1, rt_h = -1;  // transposed recurrent weights
    if (gru && !a.linear_before_reset) {
      rt_zr = e.transpose(e.slice(r, {0}, {2 * H}, {0}), {1, 0});
      rt_h = e.transpose(e.slice(r, {2 * H}, {3 * H}, {0}), {1, 0});
    } else {
      rt = e.transpose(r, {1, 0});
    }
    int pi = -1, po = -1, pf = -1;
    if (lstm && in(7) >= 0) {
      const int p = e.reshape(e.slice(in(7), {d}, {d + 1}, {0}), {3 * H});
      pi = e.slice(p, {0}, {H}, {0}), po = e.slice(p, {H}, {2 * H}, {0}), pf = e.slice(p, {2 * H}, {3 * H}, {0});
    }
    int h = state_in(in(5), d), c = lstm ? state_in(in(6), d) : -1;
    std::vector<int> ys(static_cast<size_t>(S), -1);
    for (int64_t k = 0; k < S; ++k) {
      const int64_t ts = rev ? S - 1 - k : k;
      const int xt = e.reshape(e.slice(xw, {ts}, {ts + 1}, {0}), {B, GH});
      int hn = -1, cn = -1;
      if (lstm) {
        const int pre = e.add(xt, e.op("MatMul", {h, rt}));
        const int ig = e.activate(f, clip(pi >= 0 ? e.add(gate(pre, 0), e.mul(pi, c)) : gate(pre, 0)));
        const int fg = a.input_forget ? e.op("Sub", {e.scalar(1.0), ig})
                                      : e.activate(f, clip(pf >= 0 ? e.add(gate(pre, 2), e.mul(pf, c)) : gate(pre, 2)));
        const int cc = e.activate(g2, clip(gate(pre, 3)));
        cn = e.add(e.mul(fg, c), e.mul(ig, cc));
        const int og = e.activate(f, clip(po >= 0 ? e.add(gate(pre, 1), e.mul(po, cn)) : gate(pre, 1)));
        hn = e.mul(og, e.activate(h3, cn));
      } else if (gru) {
        int z, rr, hh;
        if (a.linear_before_reset) {
          const int rec = e.op("MatMul", {h, rt});
          z = e.activate(f, clip(e.add(gate(xt, 0), gate(rec, 0))));
          rr = e.activate(f, clip(e.add(gate(xt, 1), gate(rec, 1))));
          const int rh = rbh >= 0 ? e.add(gate(rec, 2), rbh) : gate(rec, 2);
          hh = e.activate(g2, clip(e.add(gate(xt, 2), e.mul(rr, rh))));
        } else {
          const int rec = e.op("MatMul", {h, rt_zr});
          z = e.activate(f, clip(e.add(gate(xt, 0), gate(rec, 0))));
          rr = e.activate(f, clip(e.add(gate(xt, 1), gate(rec, 1))));
          hh = e.activate(g2, clip(e.add(gate(xt, 2), e.op("MatMul", {e.mul(rr, h), rt_h}))));
        }
        hn = e.add(e.mul(e.op("Sub", {e.scalar(1.0), z}), hh), e.mul(z, h));
      } else {
        hn = e.activate(f, clip(e.add(xt, e.op("MatMul", {h, rt}))));
      }
      int y = hn;
      if (seq_col >= 0) {  // rows whose length ends before step ts keep their state and write 0
        Tensor tc(seq_t, {});
        tc.set_int(0, ts);
        const int live = e.op("Less", {g.add_constant(g.unique_name(n.name + "/t"), std::move(tc)), seq_col});
        y = e.op("Where", {live, hn, e.scalar(0.0)});
        hn = e.op("Where", {live, hn, h});
        if (lstm) cn = e.op("Where", {live, cn, c});
      }
      ys[static_cast<size_t>(ts)] = e.reshape(y, {1, 1, B, H});
      h = hn;
      if (lstm) c = cn;
    }
    y_dirs.push_back(e.concat(ys, 0));
    yh_dirs.push_back(e.reshape(h, {1, B, H}));
    if (lstm) yc_dirs.push_back(e.reshape(c, {1, B, H}));
  }
  if (outv(0) >= 0) {
    if (a.layout) e.transpose(e.concat(y_dirs, 1), {2, 0, 1, 3}, outv(0));
    else e.concat(y_dirs, 1, outv(0));
  }
  auto state_out = [&](std::vector<int>& parts, int o) {
    if (o < 0) return;
    if (a.layout) e.transpose(e.concat(parts, 0), {1, 0, 2}, o);
    else e.concat(parts, 0, o);
  };
  state_out(yh_dirs, outv(1));
  if (lstm) state_out(yc_dirs, outv(2));
  for (auto& m : nodes) out.push_back(std::move(m));
  return true;
}

}  // namespace fusor
