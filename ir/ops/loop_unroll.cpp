// Loop and Scan unrolled (OpDef::expand): split from ir/ops/loop.cpp along that seam; the
// operators' semantics are in loop.cpp's header comment.
#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>

#include "ir/ops/loop_common.h"
#include "ir/ops/op_helpers.h"
#include "ir/passes.h"

namespace fusor::loop_detail {

using namespace op_helpers;

// ---- Unrolling (OpDef::expand) ----
//
// A Scan (opset >= 9) or a counted Loop (constant M, cond absent or constant true, a body whose
// cond_out folds to true; a loop carrying a sequence is followed iteration by iteration and may
// stop where cond_out folds to false: sequence_loop_trips; without M, such a loop must stop so
// within kMaxUnrollSequenceIterations) with a small static trip count is
// replaced by copies of its body, one per iteration, so the iterations fold, fuse and run on any
// backend like other nodes: scanned inputs become Slice + Squeeze, scan outputs Unsqueeze +
// Concat, iteration_num a constant.

constexpr int64_t kMaxUnrollIterations = 64;
// A loop that carries a sequence (a list built in a loop) has no other way to run: it unrolls
// up to this many iterations (and kMaxUnrolledNodes nodes), else refuse_sequence_inputs names it.
constexpr int64_t kMaxUnrollSequenceIterations = 1024;
constexpr int64_t kMaxUnrolledNodes = 4096;

class Unroller {
 public:
  Unroller(Graph& g, const Node& n) : g_(g), n_(n) {}
  int op(const std::string& type, std::vector<int> in, int out = -1, std::map<std::string, AttrValue> attrs = {}) {
    Node m;
    m.name = g_.unique_name(n_.name + "/" + type);
    m.op_type = type;
    m.opset = 13;
    m.inputs = std::move(in);
    m.attrs = std::move(attrs);
    if (out < 0) out = g_.add_value(m.name + ":0");
    m.outputs = {out};
    nodes_.push_back(std::move(m));
    return out;
  }
  int ints(std::vector<int64_t> v) {
    Tensor t(DType::i64, {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) t.set_int(static_cast<int64_t>(i), v[i]);
    return g_.add_constant(g_.unique_name(n_.name + "/axes"), std::move(t));
  }
  int constant(Tensor t) { return g_.add_constant(g_.unique_name(n_.name + "/c"), std::move(t)); }
  // A node made elsewhere (its outputs already values of g), appended as is.
  void add(Node m) { nodes_.push_back(std::move(m)); }
  int last_output() const { return nodes_.back().outputs[0]; }
  // One copy of body b with its inputs bound to `bind`; returns its outputs' ids.
  std::vector<int> body(const Graph& b, const std::vector<int>& bind, int iteration) {
    const std::string prefix = n_.name + "/" + std::to_string(iteration) + "/";
    std::vector<int> id(b.values.size(), -1);
    for (size_t i = 0; i < b.inputs.size(); ++i) id[b.inputs[i]] = bind[i];
    for (size_t v = 0; v < b.values.size(); ++v) {
      if (id[v] >= 0) continue;
      const Value& bv = b.values[v];
      const std::string nm = g_.unique_name(prefix + bv.name);
      id[v] = bv.constant ? g_.add_constant(nm, *bv.constant) : g_.add_value(nm);
    }
    for (const Node& m : b.nodes) {
      Node c = m;
      c.name = prefix + m.name;
      for (int& v : c.inputs) v = v >= 0 ? id[v] : -1;
      for (int& v : c.outputs) v = v >= 0 ? id[v] : -1;
      nodes_.push_back(std::move(c));
    }
    std::vector<int> out;
    for (int o : b.outputs) out.push_back(id[o]);
    return out;
  }
  void commit(size_t index) {
    g_.nodes.erase(g_.nodes.begin() + static_cast<std::ptrdiff_t>(index));
    g_.nodes.insert(g_.nodes.begin() + static_cast<std::ptrdiff_t>(index), nodes_.begin(), nodes_.end());
    g_.reindex_producers();
  }

 private:
  Graph& g_;
  const Node& n_;
  std::vector<Node> nodes_;
};

bool inputs_typed(const Graph& g, const Node& n) {
  for (int v : n.inputs)
    if (v >= 0 && !g.values[v].sequence && (g.values[v].dtype == DType::undefined || !g.values[v].shape_known)) return false;
  return true;
}

// One iteration's body inputs typed from Scan node n's inputs in g as they are now (pointers
// into g.values: taken again after anything adds values to g).
std::vector<Arg> iteration_args(const Graph& g, const Node& n, const ScanIO& io) {
  std::vector<DType> dtypes;
  std::vector<const Shape*> shapes;
  std::vector<const Tensor*> constants;
  for (int v : n.inputs) {
    const Value* x = v >= 0 ? &g.values[static_cast<size_t>(v)] : nullptr;
    dtypes.push_back(x ? x->dtype : DType::undefined);
    shapes.push_back(x ? &x->shape : nullptr);
    constants.push_back(x && x->constant ? &*x->constant : nullptr);
  }
  return scan_iteration_args(io, dtypes, shapes, constants);
}

// A Scan whose states pass through unchanged (skl2onnx's k-NN and cdist carry their constant
// operand as a state) and whose body is element-wise ops and reductions runs as one batched
// computation: the scanned axis becomes a leading batch dim (vmap), so T iterations are one
// kernel or two rather than T copies or T host-driven steps (2,000 rows took 6.8 s on lavapipe
// step by step; red-team round 52). Batching rules: a batched operand of lower rank than an
// element-wise op's result is unsqueezed after the batch dim (NumPy broadcasting aligns the
// rest from the right); a reduction's axes shift by one. False (nothing changed) otherwise.
bool scan_vectorize(Graph& g, size_t index, const Node& n, const Graph& b, const ScanIO& io, int64_t T, const std::vector<Arg>& args) {
  if (io.batched || T <= 0) return false;
  Graph s;
  try {
    s = bind_body(n, b, args);
  } catch (const Error&) {
    return false;
  }
  if (s.outputs.size() != static_cast<size_t>(io.N + io.K) || s.inputs.size() != args.size()) return false;
  std::map<int, int> producer_of;
  for (size_t i = 0; i < s.nodes.size(); ++i)
    for (int o : s.nodes[i].outputs)
      if (o >= 0) producer_of[o] = static_cast<int>(i);
  for (int k = 0; k < io.N; ++k) {  // each state passes through (directly or by Identity)
    const int o = s.outputs[static_cast<size_t>(k)], in = s.inputs[static_cast<size_t>(k)];
    const auto p = producer_of.find(o);
    if (o != in && !(p != producer_of.end() && s.nodes[static_cast<size_t>(p->second)].op_type == "Identity" &&
                     s.nodes[static_cast<size_t>(p->second)].inputs.size() == 1 && s.nodes[static_cast<size_t>(p->second)].inputs[0] == in))
      return false;
  }
  for (const Node& m : s.nodes) {
    const OpDef* d = lookup_op(m.op_type);
    if (!d || (!d->scalar && !d->reduce) || !m.domain.empty() || m.outputs.size() != 1 || m.outputs[0] < 0) return false;
    if (d->reduce && m.has_input(1) && !s.values[static_cast<size_t>(m.inputs[1])].constant) return false;
    for (int v : m.inputs)
      if (v >= 0 && (s.values[static_cast<size_t>(v)].sequence || !s.values[static_cast<size_t>(v)].shape_known)) return false;
  }
  Unroller u(g, n);
  struct Mapped {
    int id = -1;
    bool batched = false;
  };
  std::map<int, Mapped> at;  // body value -> outer value (batched: [T] + its body shape)
  const auto body_rank = [&](int v) { return static_cast<int64_t>(s.values[static_cast<size_t>(v)].shape.size()); };
  for (int k = 0; k < io.N; ++k) at[s.inputs[static_cast<size_t>(k)]] = {n.inputs[static_cast<size_t>(k)], false};
  for (int j = 0; j < io.M; ++j) {  // x with its scanned axis first (and reversed for a reverse scan)
    int x = n.inputs[static_cast<size_t>(io.N + j)];
    const int64_t axis = io.in_axes[static_cast<size_t>(j)], r = static_cast<int64_t>(g.values[static_cast<size_t>(x)].shape.size());
    if (axis != 0) {
      std::vector<int64_t> perm{axis};
      for (int64_t a = 0; a < r; ++a)
        if (a != axis) perm.push_back(a);
      x = u.op("Transpose", {x}, -1, {{"perm", perm}});
    }
    if (io.in_dirs[static_cast<size_t>(j)])
      x = u.op("Slice", {x, u.ints({-1}), u.ints({std::numeric_limits<int64_t>::min()}), u.ints({0}), u.ints({-1})});
    at[s.inputs[static_cast<size_t>(io.N + j)]] = {x, true};
  }
  for (size_t i = static_cast<size_t>(io.N + io.M); i < s.inputs.size(); ++i)
    at[s.inputs[i]] = {n.inputs[static_cast<size_t>(io.own) + i - static_cast<size_t>(io.N + io.M)], false};
  const auto value = [&](int v) -> Mapped {
    if (const auto it = at.find(v); it != at.end()) return it->second;
    const Value& bv = s.values[static_cast<size_t>(v)];
    if (!bv.constant) throw Error("shape", "unbound body value");  // (not reached: nodes are in order)
    return at[v] = Mapped{u.constant(*bv.constant), false};
  };
  try {
    for (const Node& m : s.nodes) {
      const OpDef* d = lookup_op(m.op_type);
      const int64_t r = body_rank(m.outputs[0]);
      Node c = m;
      c.name = g.unique_name(n.name + "/" + m.name);
      bool batched = false;
      for (size_t i = 0; i < c.inputs.size(); ++i) {
        if (c.inputs[i] < 0) continue;
        const Mapped in = value(c.inputs[i]);
        int id = in.id;
        if (in.batched && d->scalar && body_rank(c.inputs[i]) < r) {  // align the batch dim with the result's
          std::vector<int64_t> axes;
          for (int64_t a = 1; a <= r - body_rank(c.inputs[i]); ++a) axes.push_back(a);
          id = u.op("Unsqueeze", {id, u.ints(axes)});
        }
        batched = batched || in.batched;
        c.inputs[i] = id;
      }
      if (batched && d->reduce) {
        bool noop = false;
        const std::vector<int> axes = reduce_axes(m, m.has_input(1) ? &*s.values[static_cast<size_t>(m.inputs[1])].constant : nullptr,
                                                  body_rank(m.inputs[0]), &noop);
        std::vector<int64_t> shifted;
        for (int a : axes) shifted.push_back(a + 1);
        if (noop || shifted.empty()) {
          at[m.outputs[0]] = {value(m.inputs[0]).id, true};
          continue;
        }
        c.attrs.erase("noop_with_empty_axes");
        if (m.opset >= d->reduce->axes_input_opset) {
          c.inputs.resize(2);
          c.inputs[1] = u.ints(shifted);
        } else {
          c.attrs["axes"] = shifted;
        }
      }
      c.outputs = {g.add_value(c.name + ":0")};
      u.add(std::move(c));
      at[m.outputs[0]] = {u.last_output(), batched};
    }
  } catch (const Error&) {
    return false;  // (nothing committed: the outer graph holds only unused values)
  }
  for (int k = 0; k < io.N && k < static_cast<int>(n.outputs.size()); ++k)
    if (n.outputs[static_cast<size_t>(k)] >= 0) u.op("Identity", {n.inputs[static_cast<size_t>(k)]}, n.outputs[static_cast<size_t>(k)]);
  for (int k = 0; k < io.K; ++k) {
    const size_t o = static_cast<size_t>(io.N + k);
    if (o >= n.outputs.size() || n.outputs[o] < 0) continue;
    const int bo = s.outputs[o];
    Mapped y = value(bo);
    if (!y.batched) {  // the same every iteration: repeated T times
      Shape want{T};
      for (int64_t dim : s.values[static_cast<size_t>(bo)].shape) want.push_back(dim);
      y = {u.op("Expand", {u.op("Unsqueeze", {y.id, u.ints({0})}), u.ints(want)}), true};
    }
    const int64_t axis = io.out_axes[static_cast<size_t>(k)] < 0 ? io.out_axes[static_cast<size_t>(k)] + body_rank(bo) + 1 : io.out_axes[static_cast<size_t>(k)];
    int id = y.id;
    if (io.out_dirs[static_cast<size_t>(k)])
      id = u.op("Slice", {id, u.ints({-1}), u.ints({std::numeric_limits<int64_t>::min()}), u.ints({0}), u.ints({-1})});
    if (axis != 0) {
      std::vector<int64_t> perm;
      for (int64_t a = 1; a <= axis; ++a) perm.push_back(a);
      perm.push_back(0);
      for (int64_t a = axis + 1; a <= body_rank(bo); ++a) perm.push_back(a);
      id = u.op("Transpose", {id}, -1, {{"perm", perm}});
    }
    u.op("Identity", {id}, n.outputs[o]);
  }
  u.commit(index);
  return true;
}

bool scan_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  if (n.opset < 9 || !inputs_typed(g, n)) return false;
  const Graph& b = body_of(n);
  std::vector<int> ranks;
  std::vector<const Shape*> shapes;
  for (int v : n.inputs) {
    ranks.push_back(v >= 0 ? static_cast<int>(g.values[v].shape.size()) : 0);
    shapes.push_back(v >= 0 ? &g.values[v].shape : nullptr);
  }
  ScanIO io;
  int64_t T = 0;
  try {
    io = scan_io(n, b, ranks);
    T = scan_length(n, io, shapes);
  } catch (const Error&) {
    return false;  // infer reports it
  }
  try {
    if (scan_vectorize(g, index, n, b, io, T, iteration_args(g, n, io))) return true;
  } catch (const Error&) {
  }
  if (T <= 0 || T > kMaxUnrollIterations || T * static_cast<int64_t>(b.nodes.size()) > kMaxUnrolledNodes) return false;
  // Unrolled iterations are typed one by one from what they compute, so a state whose shape
  // follows the data (a NonZero inside) would change silently where ONNX Scan keeps it: each
  // iteration is bound first -- scanned slices by type, small states (counters used as Slice
  // bounds) with the values the iteration before computed -- and unrolled only when every one
  // binds and keeps every state's type (else scan_infer types it and scan_run checks each).
  {
    constexpr int64_t kValuedState = 64;  // elements: a state bound with its value
    try {
      std::vector<Arg> args = iteration_args(g, n, io);
      std::vector<std::optional<Tensor>> held(static_cast<size_t>(io.N));  // this iteration's state values
      for (int k = 0; k < io.N; ++k) {
        const int v = n.inputs[static_cast<size_t>(io.first + k)];
        const Tensor* c = v >= 0 && g.values[static_cast<size_t>(v)].constant ? &*g.values[static_cast<size_t>(v)].constant : nullptr;
        if (c && c->numel() <= kValuedState) held[static_cast<size_t>(k)] = *c;
      }
      for (int64_t t = 0; t < T; ++t) {
        bool valued = false;
        for (int k = 0; k < io.N; ++k) {
          const auto& h = held[static_cast<size_t>(k)];
          args[static_cast<size_t>(k)].value = h ? &*h : nullptr;
          valued = valued || h.has_value();
        }
        const Graph s = bind_body(n, b, args);
        std::vector<std::optional<Tensor>> next(static_cast<size_t>(io.N));
        for (int k = 0; k < io.N; ++k) {
          const Value& v = s.values[static_cast<size_t>(s.outputs[static_cast<size_t>(k)])];
          if (v.dtype != args[static_cast<size_t>(k)].dtype || v.shape != args[static_cast<size_t>(k)].shape) return false;
          if (v.constant && v.constant->numel() <= kValuedState) next[static_cast<size_t>(k)] = *v.constant;
        }
        held = std::move(next);
        if (!valued && std::none_of(held.begin(), held.end(), [](const auto& h) { return h.has_value(); })) break;  // the same every time
      }
    } catch (const Error&) {
      return false;  // infer types it (or reports it)
    }
  }
  Unroller u(g, n);
  std::vector<int> states(n.inputs.begin(), n.inputs.begin() + io.N);
  std::vector<std::vector<int>> scans(static_cast<size_t>(io.K), std::vector<int>(static_cast<size_t>(T), -1));
  for (int64_t t = 0; t < T; ++t) {
    std::vector<int> bind = states;
    for (int j = 0; j < io.M; ++j) {
      const int64_t pos = io.in_dirs[j] ? T - 1 - t : t, axis = io.in_axes[j];
      const int x = n.inputs[static_cast<size_t>(io.N + j)];
      bind.push_back(u.op("Squeeze", {u.op("Slice", {x, u.ints({pos}), u.ints({pos + 1}), u.ints({axis})}), u.ints({axis})}));
    }
    bind.insert(bind.end(), n.inputs.begin() + io.own, n.inputs.end());
    const std::vector<int> out = u.body(b, bind, static_cast<int>(t));
    for (int k = 0; k < io.N; ++k) states[k] = out[k];
    for (int k = 0; k < io.K; ++k)
      scans[k][static_cast<size_t>(io.out_dirs[k] ? T - 1 - t : t)] = u.op("Unsqueeze", {out[io.N + k], u.ints({io.out_axes[k]})});
  }
  for (int k = 0; k < io.N && k < static_cast<int>(n.outputs.size()); ++k)
    if (n.outputs[k] >= 0) u.op("Identity", {states[k]}, n.outputs[k]);
  for (int k = 0; k < io.K; ++k) {
    const size_t o = static_cast<size_t>(io.N + k);
    if (o >= n.outputs.size() || n.outputs[o] < 0) continue;
    if (T == 1) u.op("Identity", scans[k], n.outputs[o]);
    else u.op("Concat", scans[k], n.outputs[o], {{"axis", io.out_axes[k]}});
  }
  u.commit(index);
  return true;
}

// Whether body b's cond_out reads (through its nodes) a carried sequence of loop n.
bool cond_reads_carried_sequence(const Graph& g, const Node& n, const Graph& b, const LoopIO& io) {
  std::vector<int> producer(b.values.size(), -1);
  for (size_t i = 0; i < b.nodes.size(); ++i)
    for (int o : b.nodes[i].outputs)
      if (o >= 0) producer[static_cast<size_t>(o)] = static_cast<int>(i);
  std::vector<char> seen(b.values.size(), 0);
  std::vector<int> stack{b.outputs.empty() ? -1 : b.outputs[0]};
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    if (v < 0 || seen[static_cast<size_t>(v)]) continue;
    seen[static_cast<size_t>(v)] = 1;
    if (producer[static_cast<size_t>(v)] >= 0)
      for (int in : b.nodes[static_cast<size_t>(producer[static_cast<size_t>(v)])].inputs) stack.push_back(in);
  }
  for (int k = 2; k < io.own && k < static_cast<int>(b.inputs.size()); ++k)
    if (n.inputs[static_cast<size_t>(k)] >= 0 && g.values[n.inputs[static_cast<size_t>(k)]].sequence && seen[b.inputs[static_cast<size_t>(k)]])
      return true;
  return false;
}

// Sequence elements bound in all while following a loop iteration by iteration (each iteration
// binds every element of the sequences it carries and reads): bounds the time a long list takes.
constexpr int64_t kMaxFollowedElements = int64_t{1} << 22;

// A loop carrying a sequence whose cond_out reads it, or whose body folds only with its iteration
// number known (SequenceAt(list, i)): the list's length and elements (constants among them)
// change from one iteration to the next, so cond_out folding to true in the first iteration
// proves nothing about the others (a `while len(xs) < 4` loop ran its whole trip count). Each
// iteration is bound as it will run once unrolled: its number a constant, the sequences the
// iteration before returned (elements typed, and constant, as they folded there), carried tensors
// by type only. trips: M, or fewer where an iteration's cond_out folds to false. False (the loop
// is not unrolled) where one before the last does not fold, a carried value changes its type, or
// the lists are too long to follow; an error in the body passes through.
bool sequence_loop_trips(const Graph& g, const Node& n, const Graph& b, const LoopIO& io, int64_t M, bool must_stop,
                         int64_t& trips) {
  const Tensor cond_true = scalar_like(b, 1, DType::boolean, 1);
  const auto arg = [](const Graph& in, int id, bool with_value) {
    const Value& v = in.values[static_cast<size_t>(id)];
    return Arg{v.dtype, v.shape, with_value && v.constant ? &*v.constant : nullptr, &in, v.sequence ? &*v.sequence : nullptr};
  };
  // A small carried tensor that folds (a counter from 0) is bound with its value, so a cond_out
  // computed from it folds: the exporter's `while i + 1 < num_bags` (torch's embedding_bag).
  const auto small = [](const Graph& in, int id) {
    const Value& v = in.values[static_cast<size_t>(id)];
    return v.constant && v.constant->numel() <= 64;
  };
  std::vector<Arg> carried, captured;
  for (int i = 2; i < io.own; ++i)
    carried.push_back(arg(g, n.inputs[static_cast<size_t>(i)], small(g, n.inputs[static_cast<size_t>(i)])));
  for (size_t i = static_cast<size_t>(io.own); i < n.inputs.size(); ++i) captured.push_back(arg(g, n.inputs[i], true));
  Graph prev;  // the iteration before (its sequences' elements live in it)
  int64_t followed = 0;
  for (int64_t i = 0; i < M; ++i) {
    for (const Arg& a : carried) followed += a.sequence ? static_cast<int64_t>(a.sequence->size()) : 0;
    for (const Arg& a : captured) followed += a.sequence ? static_cast<int64_t>(a.sequence->size()) : 0;
    if (followed > kMaxFollowedElements) return false;
    const Tensor it = scalar_like(b, 0, DType::i64, i);
    std::vector<Arg> args{arg_of(it), arg_of(cond_true)};
    args.insert(args.end(), carried.begin(), carried.end());
    args.insert(args.end(), captured.begin(), captured.end());
    Graph s;
    try {  // an error in the body (an erase from an empty list) is the model's: it passes through
      s = bind_body(n, b, args);
    } catch (const NeedsConstant&) {
      // A while loop has no other way to run: a shape that needs an input's values (a bag's
      // offsets) is the session's to fix by baking that input.
      if (must_stop) throw;
      return false;
    }
    for (int k = 0; k < io.N; ++k) {  // a loop-carried value must keep its type
      const Value& o = s.values[static_cast<size_t>(s.outputs[1 + k])];
      if (o.shape != carried[k].shape || o.dtype != carried[k].dtype || o.sequence.has_value() != (carried[k].sequence != nullptr))
        return false;
    }
    const Value& c = s.values[static_cast<size_t>(s.outputs[0])];
    if (i + 1 < M || must_stop) {  // the last iteration's cond_out stops nothing (with a count M)
      if (!c.constant || c.constant->numel() != 1) return false;
      if (c.constant->get(0) == 0.0) {
        trips = i + 1;
        return true;
      }
    }
    prev = std::move(s);
    for (int k = 0; k < io.N; ++k) carried[k] = arg(prev, prev.outputs[1 + k], small(prev, prev.outputs[1 + k]));
  }
  if (must_stop) return false;  // no count, and still running after M iterations: left to refuse
  trips = M;
  return true;
}

// Loops nested in a body that runs_with is typing: each check types the body, unrolling the
// loops inside (and checking them), and the copies are typed again, so a nest of d loops cost
// 2^d checks (20 nested single-trip loops: 17 s). Past this depth of checks a nested loop is
// typed as a Loop (its infer) instead of unrolled inside the check.
// A check that fails where the cap left a loop inside it un-unrolled is run again without the
// cap (its answer may need that loop's values folded): the full cost only where it matters.
constexpr int kMaxNestedUnrollChecks = 4;
thread_local int unroll_check_depth = 0;
thread_local bool unroll_cap_hit = false, unroll_uncapped = false;

bool loop_expand(Graph& g, size_t index) {
  if (!unroll_uncapped && unroll_check_depth >= kMaxNestedUnrollChecks) {
    unroll_cap_hit = true;
    return false;
  }
  const Node n = g.nodes[index];
  // Without a trip count M (a while loop) only a loop carrying a sequence is unrolled, followed
  // until its cond_out folds to false (sequence_loop_trips).
  const bool counted = n.has_input(0);
  if (counted && !g.values[n.inputs[0]].constant) return false;
  if (!inputs_typed(g, n)) return false;
  if (counted && g.values[n.inputs[0]].constant->numel() != 1) return false;  // infer reports it
  if (n.has_input(1) && (!g.values[n.inputs[1]].constant || g.values[n.inputs[1]].constant->numel() != 1 ||
                         g.values[n.inputs[1]].constant->get(0) == 0.0))
    return false;
  for (size_t i = 2; i < n.inputs.size(); ++i)
    if (n.inputs[i] < 0) return false;  // an omitted value (an empty optional): infer reports it
  const Graph& b = body_of(n);
  LoopIO io;
  try {
    io = loop_io(n, b);
  } catch (const Error&) {
    return false;
  }
  bool carries_sequence = false, all_constant = true;
  for (int v : n.inputs) {
    carries_sequence = carries_sequence || (v >= 0 && g.values[v].sequence);
    all_constant = all_constant && (v < 0 || g.values[v].constant);
  }
  if (!counted && !carries_sequence) return false;
  const int64_t max_iterations = carries_sequence ? kMaxUnrollSequenceIterations : kMaxUnrollIterations;
  const int64_t M = counted ? g.values[n.inputs[0]].constant->get_int(0) : max_iterations;
  if (M <= 0 || M > max_iterations || (counted && M * static_cast<int64_t>(b.nodes.size()) > kMaxUnrolledNodes)) return false;
  Unroller u(g, n);
  const Tensor cond_true = scalar_like(b, 1, DType::boolean, 1);
  // cond_out must fold to true when cond_in is true (then every iteration runs), with the
  // iteration number (unless `iteration` >= 0 binds it) and the carried values typed only.
  std::vector<std::pair<DType, Shape>> scan_types;  // iteration 0's scan outputs (runs_with(i >= 0) records)
  const auto check_with = [&](int64_t iteration) {
    const Tensor it = scalar_like(b, 0, DType::i64, iteration);
    std::vector<Arg> args{Arg{DType::i64, it.shape(), iteration >= 0 ? &it : nullptr}, arg_of(cond_true)};
    for (size_t i = 2; i < n.inputs.size(); ++i) {
      const Value& v = g.values[n.inputs[i]];
      args.push_back(Arg{v.dtype, v.shape, static_cast<int>(i) >= io.own && v.constant ? &*v.constant : nullptr, &g,
                         v.sequence ? &*v.sequence : nullptr});
    }
    struct CheckDepth {
      CheckDepth() { ++unroll_check_depth; }
      ~CheckDepth() { --unroll_check_depth; }
    } check_depth;
    try {
      const Graph s = bind_body(n, b, args);
      const Value& c = s.values[s.outputs[0]];
      if (!c.constant || c.constant->get(0) == 0.0) return false;
      if (iteration >= 0)
        for (int k = 0; k < io.K; ++k) {
          const Value& v = s.values[s.outputs[1 + io.N + k]];
          if (iteration == 0) scan_types.emplace_back(v.dtype, v.shape);
          else if (scan_types[static_cast<size_t>(k)] != std::make_pair(v.dtype, v.shape)) return false;
        }
      for (int k = 0; k < io.N; ++k)  // a loop-carried value must keep its type (Concat-grown ones are left to the loop)
        if (s.values[s.outputs[1 + k]].shape != args[2 + k].shape || s.values[s.outputs[1 + k]].dtype != args[2 + k].dtype ||
            s.values[s.outputs[1 + k]].sequence.has_value() != (args[2 + k].sequence != nullptr))
          return false;
    } catch (const Error&) {
      return false;
    }
    return true;
  };
  const auto runs_with = [&](int64_t iteration) {
    struct Flags {  // restored however the check ends
      bool hit = unroll_cap_hit, uncapped = unroll_uncapped;
      ~Flags() { unroll_cap_hit = hit || unroll_cap_hit, unroll_uncapped = uncapped; }
    } flags;
    unroll_cap_hit = false;
    if (check_with(iteration)) return true;
    if (!unroll_cap_hit || unroll_uncapped) return false;
    unroll_uncapped = true;
    if (iteration == 0) scan_types.clear();  // recorded again by the uncapped check
    return check_with(iteration);
  };
  // A body whose shapes need its iteration number (tf2onnx slices by it: x[0 : i + 1] in
  // tf.math.cumprod, crop_and_resize) cannot be typed with it unknown: each iteration is checked
  // with its number bound instead (its copy below binds the same constant).
  const auto every_iteration_runs = [&]() {
    if (runs_with(-1)) return true;
    // Every input known (a captured image baked in by a Session) and the types need each
    // iteration's values: loop_infer folds the loop by running it once, where checking and then
    // copying each iteration would fold it twice, and again per specialisation attempt
    // (red-team round 50: 45 s for 16 iterations of a NonZero over 2^22 elements).
    if (all_constant && !carries_sequence) return false;
    for (int64_t i = 0; i < M; ++i)
      if (!runs_with(i)) return false;  // also when a scan output differs from iteration 0's: the loop reports it
    return true;
  };
  int64_t trips = M;
  if (!carries_sequence) {
    if (!every_iteration_runs()) return false;
  } else if (!counted || cond_reads_carried_sequence(g, n, b, io) || !every_iteration_runs()) {
    // Followed iteration by iteration: a while loop, a cond_out that reads the list (its length
    // changes), or a body that needs its iteration number to fold (SequenceAt(list, i):
    // TorchScript's `for p in parts`).
    if (!sequence_loop_trips(g, n, b, io, M, !counted, trips)) return false;
    if (trips * static_cast<int64_t>(b.nodes.size()) > kMaxUnrolledNodes) return false;
  }
  std::vector<int> vars(n.inputs.begin() + 2, n.inputs.begin() + io.own);
  std::vector<std::vector<int>> scans(static_cast<size_t>(io.K));
  const int cond_c = u.constant(cond_true);
  for (int64_t i = 0; i < trips; ++i) {
    std::vector<int> bind{u.constant(scalar_like(b, 0, DType::i64, i)), cond_c};
    bind.insert(bind.end(), vars.begin(), vars.end());
    bind.insert(bind.end(), n.inputs.begin() + io.own, n.inputs.end());
    const std::vector<int> out = u.body(b, bind, static_cast<int>(i));
    for (int k = 0; k < io.N; ++k) vars[k] = out[1 + k];
    for (int k = 0; k < io.K; ++k) scans[k].push_back(u.op("Unsqueeze", {out[1 + io.N + k], u.ints({0})}));
  }
  for (int k = 0; k < io.N && k < static_cast<int>(n.outputs.size()); ++k)
    if (n.outputs[k] >= 0) u.op("Identity", {vars[k]}, n.outputs[k]);
  for (int k = 0; k < io.K; ++k) {
    const size_t o = static_cast<size_t>(io.N + k);
    if (o >= n.outputs.size() || n.outputs[o] < 0) continue;
    if (trips == 1) u.op("Identity", scans[k], n.outputs[o]);
    else u.op("Concat", scans[k], n.outputs[o], {{"axis", int64_t{0}}});
  }
  u.commit(index);
  return true;
}

}  // namespace fusor::loop_detail
