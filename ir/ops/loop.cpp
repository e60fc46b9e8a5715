// Control flow (ONNX semantics): Loop and Scan.
//
// Loop-1/11/13/16/19/21 (operator spec "Loop"): inputs M (optional int64 trip count), cond
// (optional bool), then N loop-carried values; the body takes (iteration_num, cond_in, N values)
// and returns (cond_out, N values, K scan outputs); the node returns the N final values and the
// K scan outputs stacked along a new axis 0. It runs while (M absent or i < M) and cond.
// Scan-9/11/16/19/21 ("Scan"): N state inputs, then num_scan_inputs (M) scanned inputs, sliced
// along scan_input_axes (reversed where scan_input_directions is 1); the body takes (N states,
// M slices) and returns (N states, K slices), stacked along scan_output_axes in the order of
// scan_output_directions. Scan-8 has a leading optional sequence_lens, a batch axis 0 and the
// scan axis 1 (all rows must run the full length).
//
// Bodies read outer values through their captured inputs (frontend/onnx_import.h: after the
// node's own inputs). The reference runs the body once per iteration: every input bound as a
// constant, shape inference folds it, and nodes too large to fold run op by op.
// Output shapes are static: Scan's from the scanned axis; Loop's scan outputs need a trip count
// known at compile time (M constant and cond_out provably true), or every input constant (the
// loop then folds like any constant subgraph: up to kMaxFoldIterations iterations run, whatever
// M is, since under a run-time condition M is only a bound, INT64_MAX in TorchScript). A loop
// known to run zero times (M <= 0, cond false) never analyses its body as if it ran.
// Unrolling (OpDef::expand) lives in ir/ops/loop_unroll.cpp.
#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>

#include "ir/ops/loop_common.h"
#include "ir/ops/op_helpers.h"
#include "ir/passes.h"

namespace fusor {
namespace loop_detail {

using namespace op_helpers;

// A loop whose inputs are all constant runs at compile time (it folds) only up to this many
// iterations, so a hostile trip count cannot stall compilation.
constexpr int64_t kMaxFoldIterations = 4096;
// ... and while the values it carries and scans hold at most this many elements together (a
// carried value that doubles each iteration would otherwise fill the host's memory at load).
constexpr int64_t kMaxFoldElements = int64_t{1} << 26;
// Thrown by loop_run at load when a fold passes those bounds; loop_infer then leaves the loop
// to run time where it can (why: which bound).
struct FoldTooBig {
  std::string why;
};

const Graph& body_of(const Node& n) {
  const Graph* b = n.attr_g("body");
  if (!b) throw Error("shape", n.label() + ": attribute 'body' (a graph) is missing");
  return *b;
}

int formal_count(const Graph& b) { return b.formal_inputs < 0 ? static_cast<int>(b.inputs.size()) : b.formal_inputs; }

// The node's own inputs: all of n.inputs but the body's captured outer values at the end.
int own_inputs(const Node& n, const Graph& b) {
  const int captured = static_cast<int>(b.inputs.size()) - formal_count(b);
  const int own = static_cast<int>(n.inputs.size()) - captured;
  if (own < 0) throw Error("shape", n.label() + ": its body reads " + std::to_string(captured) + " outer values, the node has too few inputs");
  return own;
}


Arg arg_of(const Tensor& t) { return Arg{t.dtype(), t.shape(), &t}; }

// The body with its inputs typed (constant where a value is given), shapes inferred, folded.
Graph bind_body(const Node& n, const Graph& b, const std::vector<Arg>& args) {
  if (args.size() != b.inputs.size())
    throw Error("shape", n.label() + ": its body takes " + std::to_string(b.inputs.size()) + " inputs, the node binds " +
                             std::to_string(args.size()));
  Graph s = b;
  for (size_t i = 0; i < args.size(); ++i) {
    Value& v = s.values[s.inputs[i]];
    if (v.dtype != DType::undefined && args[i].dtype != DType::undefined && v.dtype != args[i].dtype)
      throw Error("shape", n.label() + ": body input '" + printable(v.name) + "' is declared " + dtype_name(v.dtype) +
                               ", bound to " + dtype_name(args[i].dtype));
    if (args[i].sequence) {
      std::vector<int> elems;
      for (int e : *args[i].sequence) {
        const Value& ev = args[i].outer->values[e];
        const int id = s.add_value(s.unique_name(ev.name), ev.dtype, ev.shape, true);
        s.values[id].constant = ev.constant;
        elems.push_back(id);
      }
      Value& sv = s.values[s.inputs[i]];
      sv.dtype = args[i].dtype;
      sv.sequence = std::move(elems);
      continue;
    }
    // A Scan body input declared with a rank its bound value contradicts is an invalid body
    // (ONNX's Scan inference merges the two and fails), refused in one line as for a graph
    // input. A Loop's are not compared: its inference drops the carried values' shapes and
    // onnxruntime runs such bodies with the values it binds (review of round 58's change).
    if (n.op_type != "Loop" && (!v.shape.empty() || v.shape_known) && v.shape.size() != args[i].shape.size())
      throw Error("shape", n.label() + ": body input '" + printable(v.name) + "' is declared rank " + std::to_string(v.shape.size()) +
                               " " + shape_str(v.shape) + ", bound to " + shape_str(args[i].shape));
    v.dtype = args[i].dtype;
    v.shape = args[i].shape;
    v.shape_known = true;
    if (args[i].value) v.constant = *args[i].value;
  }
  op_helpers::infer_subgraph(s, n, "body");
  return s;
}

// Runs a body bound with every input constant; returns its outputs.
std::vector<Tensor> run_body(const Node& n, const Graph& b, const std::vector<Arg>& args) {
  Graph s = bind_body(n, b, args);
  const std::vector<Tensor> vals = op_helpers::run_subgraph_nodes(s);  // what folding left (results too large to fold)
  auto at = [&](int v) -> const Tensor& { return s.values[v].constant ? *s.values[v].constant : vals[v]; };
  std::vector<Tensor> out;
  for (int o : s.outputs) {
    if (!at(o).defined()) ref_fail(n, "body output '" + printable(s.values[o].name) + "' was not computed");
    out.push_back(at(o));
  }
  return out;
}

// ---- Bodies run by a BodyRunner (a backend's compiled body, runtime/host_loop.h) ----

// The body with args that carry a value bound as constants (they fold) and the others as its
// graph inputs, in order: static, ready to compile.
Graph specialise_body(const Node& n, const Graph& b, const std::vector<Arg>& args) {
  Graph s = bind_body(n, b, args);
  std::vector<int> ins;
  for (size_t i = 0; i < args.size(); ++i)
    if (!args[i].value) ins.push_back(s.inputs[i]);
  s.inputs = std::move(ins);
  s.formal_inputs = -1;
  add_lookup_checks(s);  // a body is a static graph a backend runs: its unread lookups check too
  eliminate_dead_code(s);
  return s;
}

// BodyCall::key for a body bound as in specialise_body: the node and its run-time inputs' types.
std::string call_key(const Node& n, const std::vector<Arg>& args) {
  std::string key = n.name;
  for (const Arg& a : args)
    if (!a.value) key += std::string("|") + dtype_name(a.dtype) + shape_str(a.shape);
  return key;
}

// The call for a body whose args are bound as in specialise_body; owns copies of what it reads.
BodyCall body_call(const Node& n, const std::vector<Arg>& args) {
  BodyCall call;
  call.node = n.name;
  call.key = call_key(n, args);
  std::vector<Tensor> consts;
  for (const Arg& a : args)
    if (a.value) consts.push_back(*a.value);
  call.specialise = [n, args, consts = std::move(consts)]() {
    std::vector<Arg> owned = args;
    size_t c = 0;
    for (Arg& a : owned)
      if (a.value) a.value = &consts[c++];
    return specialise_body(n, body_of(n), owned);
  };
  return call;
}

// ---- The iteration budget of a loop nest ----
// Each loop alone may run kMaxIterations, but loops nested in loop bodies multiply (2^20 x 2^20
// would run for days): the body runs of a nest are counted, and past kMaxNestIterations it
// fails. Where the trip counts look certain (every enclosing Loop runs all its M: no cond, or
// one passed through unchanged; Scans run their length) a nest whose product passes
// kMaxNestEstimate fails before it runs. That estimate assumes the inner loop runs, with this
// trip count, on every outer iteration; the margin of 4 over the counted budget keeps nests it
// overrates (a triangular nest is overrated at most 2x) from being refused early. Per thread: a
// nest's bodies run on the thread of its outermost loop. Loops unrolled at load
// (loop_unroll.cpp, <= 64 iterations) count as separate nests.
constexpr int64_t kMaxNestIterations = int64_t{1} << 22;
constexpr int64_t kMaxNestEstimate = kMaxNestIterations * 4;
struct NestState {
  int depth = 0;
  int64_t bodies = 0;   // body runs of the current nest so far
  int64_t certain = 1;  // product of the enclosing loops' certain trip counts
};
thread_local NestState nest_state;

class NestScope {
 public:
  // trips: the iterations this loop will certainly run, or -1 where only its run decides.
  NestScope(const Node& n, int64_t trips) : saved_(nest_state.certain) {
    const int64_t outer = nest_state.depth == 0 ? 1 : nest_state.certain;
    if (nest_state.depth > 0 && trips > 0 && outer > kMaxNestEstimate / trips)
      ref_fail(n, "runs " + std::to_string(trips) + " iterations inside loops that run " + std::to_string(outer) +
                      " times: far past the " + std::to_string(kMaxNestIterations) + " body runs a loop nest may make");
    if (nest_state.depth++ == 0) nest_state.bodies = 0;
    nest_state.certain = trips > 0 ? outer * trips : outer;
  }
  ~NestScope() {
    --nest_state.depth;
    nest_state.certain = saved_;
  }
  NestScope(const NestScope&) = delete;
  NestScope& operator=(const NestScope&) = delete;
  // One body run of loop n; fails once a nest has made kMaxNestIterations of them.
  static void count(const Node& n) {
    if (++nest_state.bodies > kMaxNestIterations && nest_state.depth > 1)
      ref_fail(n, "its loop nest ran past " + std::to_string(kMaxNestIterations) + " body runs in all");
  }

 private:
  int64_t saved_;
};

// Whether body b's cond_out is its cond_in unchanged (directly, through Identity) or a constant
// true: then the Loop runs all M iterations whenever it starts with cond true.
bool cond_passes_through(const Graph& b) {
  if (b.inputs.size() < 2 || b.outputs.empty()) return false;
  const int out = b.outputs[0], in = b.inputs[1];
  if (out == in) return true;
  const Value& v = b.values[static_cast<size_t>(out)];
  if (v.constant && v.constant->numel() == 1) return v.constant->get(0) != 0.0;
  for (const Node& m : b.nodes)
    if (m.op_type == "Identity" && m.outputs.size() == 1 && m.outputs[0] == out) return m.inputs.size() == 1 && m.inputs[0] == in;
  return false;
}

// One iteration: through the runner where given (args with keep[i] set stay constants in the
// compiled body, the others are its run-time inputs), else, or when the runner refuses, on the
// reference with every input constant.
std::vector<Tensor> run_iteration(const Node& n, const Graph& b, const std::vector<Arg>& args, const std::vector<bool>& keep,
                                  BodyRunner* runner) {
  NestScope::count(n);
  if (!runner) return run_body(n, b, args);
  std::vector<Arg> spec = args;
  std::vector<Tensor> rt;
  for (size_t i = 0; i < args.size(); ++i)
    if (!keep[i]) {
      spec[i].value = nullptr;
      rt.push_back(*args[i].value);
    }
  BodyCall call;
  call.node = n.name;
  call.key = call_key(n, spec);
  call.specialise = [&]() { return specialise_body(n, b, spec); };
  try {
    return runner->run(call, rt);
  } catch (const Unsupported&) {
    return run_body(n, b, args);  // the runner recorded why
  }
}

// Which body inputs stay constants in a compiled body: the captured outer values that are
// compile-time constants of the graph (input k >= own of the node), plus `extra`.
std::vector<bool> kept_constants(const Node& n, const Graph& b, int own, const std::vector<bool>* constant, const std::vector<int>& extra) {
  std::vector<bool> keep(b.inputs.size(), false);
  const int formal = formal_count(b);
  for (int k = own; k < static_cast<int>(n.inputs.size()); ++k)
    if (constant && k < static_cast<int>(constant->size()) && (*constant)[k]) keep[static_cast<size_t>(formal + k - own)] = true;
  for (int e : extra) keep[static_cast<size_t>(e)] = true;
  return keep;
}

// Slicing along one axis, in elements (copy_elems: strings by value, the rest as bytes).
struct AxisSplit {
  int64_t outer = 1, len = 1, inner = 1;
};
AxisSplit split_at(const Shape& s, int64_t axis) {
  AxisSplit a;
  for (int64_t d = 0; d < axis; ++d) a.outer *= s[d];
  a.len = s[axis];
  for (size_t d = static_cast<size_t>(axis) + 1; d < s.size(); ++d) a.inner *= s[d];
  return a;
}
// t[..., i, ...] along axis, the axis removed.
Tensor take(const Tensor& t, int64_t axis, int64_t i) {
  Shape s = t.shape();
  const AxisSplit a = split_at(s, axis);
  s.erase(s.begin() + axis);
  Tensor r(t.dtype(), s);
  for (int64_t o = 0; o < a.outer; ++o) copy_elems(t, (o * a.len + i) * a.inner, r, o * a.inner, a.inner);
  return r;
}
// dst[..., i, ...] = src (src lacks the axis).
void put(Tensor& dst, int64_t axis, int64_t i, const Tensor& src) {
  const AxisSplit a = split_at(dst.shape(), axis);
  for (int64_t o = 0; o < a.outer; ++o) copy_elems(src, o * a.inner, dst, (o * a.len + i) * a.inner, a.inner);
}
Shape with_axis(Shape s, int64_t axis, int64_t len) {
  s.insert(s.begin() + axis, len);
  return s;
}

void check_slice(const Node& n, const Tensor& got, DType dt, const Shape& want, const std::string& what) {
  if (got.dtype() != dt || got.shape() != want)
    ref_fail(n, what + " is " + dtype_name(got.dtype()) + " " + shape_str(got.shape()) + ", inferred " + dtype_name(dt) + " " +
                    shape_str(want));
}

// ---- Loop ----

LoopIO loop_io(const Node& n, const Graph& b) {
  LoopIO io;
  io.own = own_inputs(n, b);
  io.N = io.own - 2;
  if (io.N < 0) throw Error("shape", n.label() + ": needs inputs M and cond (either may be empty)");
  if (formal_count(b) != 2 + io.N)
    throw Error("shape", n.label() + ": its body takes " + std::to_string(formal_count(b)) + " inputs, expected 2 + " + std::to_string(io.N));
  io.K = static_cast<int>(b.outputs.size()) - 1 - io.N;
  if (io.K < 0) throw Error("shape", n.label() + ": its body returns fewer than 1 + " + std::to_string(io.N) + " outputs");
  if (static_cast<int>(n.outputs.size()) > io.N + io.K)
    throw Error("shape", n.label() + ": has more outputs than its body's " + std::to_string(io.N) + " values and " + std::to_string(io.K) +
                             " scan outputs");
  return io;
}

// iteration_num and cond_in as the body declares them: a one-element tensor where it declares
// rank 1 ([1], or a symbolic dim, as onnxruntime binds it), else a scalar.
Tensor scalar_like(const Graph& b, int input, DType dt, int64_t v) {
  const Value& d = b.values[b.inputs[static_cast<size_t>(input)]];
  Shape s = d.shape.size() == 1 && (d.shape[0] == 1 || d.shape[0] < 0) ? Shape{1} : Shape{};
  Tensor t(dt, s);
  t.set_int(0, v);
  return t;
}

// The K scan outputs of a loop that runs zero iterations: empty stacks (axis 0 of length 0) of
// what its body would return in the first iteration, which never runs. The body is bound with
// types only (carried: their types; captured: constants where known); when its shapes need
// values (a nested Loop whose trip count is the iteration number), with the first iteration's
// values (iteration_num 0, cond true, the initial carried values where known); else the types
// the body declares for them (unknown dims 0, as an unknown rank is 0); where it declares no
// dtype, need_values (if given) may throw NeedsConstant first, so a Session specialises on the
// inputs and the first iteration binds with values. A NeedsConstant for a captured outer value
// propagates too.
std::vector<std::pair<DType, Shape>> zero_trip_scans(const Node& n, const Graph& b, const LoopIO& io, const std::vector<Arg>& carried,
                                                     const std::vector<Arg>& captured,
                                                     const std::function<void()>& need_values = {}) {
  const Tensor it = scalar_like(b, 0, DType::i64, 0), c = scalar_like(b, 1, DType::boolean, 1);
  auto bound = [&](bool first_values) {
    std::vector<Arg> args{Arg{DType::i64, it.shape(), first_values ? &it : nullptr}, arg_of(c)};
    for (const Arg& a : carried) args.push_back(first_values ? a : Arg{a.dtype, a.shape, nullptr});
    args.insert(args.end(), captured.begin(), captured.end());
    return bind_body(n, b, args);
  };
  std::vector<std::pair<DType, Shape>> res;
  bool needs_values = false;  // the body's shapes need values it was not given
  auto read = [&](const Graph& s) {
    for (int k = 0; k < io.K; ++k) {
      const Value& v = s.values[s.outputs[static_cast<size_t>(1 + io.N + k)]];
      Shape sh = v.shape;
      for (auto& d : sh) d = std::max<int64_t>(d, 0);
      res.push_back({v.dtype == DType::undefined ? DType::f32 : v.dtype, with_axis(sh, 0, 0)});
    }
    return res;
  };
  for (const bool first_values : {false, true}) {
    try {
      return read(bound(first_values));
    } catch (const NeedsConstant& e) {
      needs_values = true;
      const int id = b.find_value(e.value());
      for (size_t k = static_cast<size_t>(formal_count(b)); k < b.inputs.size(); ++k)
        if (id >= 0 && b.inputs[k] == id) throw;  // an outer value: specialise on it
    } catch (const Unsupported&) {
      throw;  // an op no backend runs: say so, as for a loop that runs
    } catch (const Error&) {
    }
  }
  // The first iteration could not be bound with all its values (a carried value known only at
  // run time, a NonZero of a captured input): specialise on the inputs (need_values) rather than
  // fall back to the declared types, which the run -- binding with the values -- would then
  // contradict (a scan output declared [?] that the run makes [0, 1, 36]).
  const bool all_known = std::all_of(carried.begin(), carried.end(), [](const Arg& a) { return a.value != nullptr; });
  for (int k = 0; k < io.K; ++k)
    if (need_values && (needs_values || !all_known || b.values[b.outputs[static_cast<size_t>(1 + io.N + k)]].dtype == DType::undefined))
      need_values();
  return read(b);
}

// Runs the loop; returns N final values then K stacked scan outputs.
// runner: runs each iteration's body (null: the reference); constant: which node inputs are
// compile-time constants (captured ones stay constants in the compiled body).
std::vector<Tensor> loop_run(const Node& n, const std::vector<const Tensor*>& in, BodyRunner* runner = nullptr,
                             const std::vector<bool>* constant = nullptr, bool folding = false) {
  const Graph& b = body_of(n);
  const LoopIO io = loop_io(n, b);
  // cond_in is true whenever the body runs, so a compiled body keeps it constant (it folds).
  const std::vector<bool> keep = kept_constants(n, b, io.own, constant, {1});
  for (int i = 0; i < 2; ++i)
    if (in[i] && in[i]->numel() != 1) ref_fail(n, std::string(i ? "cond" : "M") + " must hold exactly one element, got " + shape_str(in[i]->shape()));
  const int64_t M = in[0] ? in[0]->get_int(0) : std::numeric_limits<int64_t>::max();
  bool cond = in[1] ? in[1]->get(0) != 0.0 : true;
  std::vector<Tensor> vars;
  for (int k = 0; k < io.N; ++k) {
    if (!in[2 + k]) ref_fail(n, "loop-carried input " + std::to_string(k) + " is missing");
    vars.push_back(*in[2 + k]);
  }
  std::vector<std::vector<Tensor>> scans(static_cast<size_t>(io.K));
  // Before the probe below: loops it folds while binding the body belong to this nest.
  NestScope scope(n, cond && M <= kMaxIterations && cond_passes_through(b) ? M : -1);
  if (cond && M > kMaxIterations) {  // M absent counts as unbounded
    // A trip count past the bound whose condition cannot turn false (cond_out folds to true
    // when cond_in is true) would run 2^20 iterations before failing (minutes on a GPU's host
    // loop): fail now. A condition computed from values still runs until it turns false.
    Tensor it = scalar_like(b, 0, DType::i64, 0), c = scalar_like(b, 1, DType::boolean, 1);
    std::vector<Arg> args{Arg{DType::i64, it.shape(), nullptr}, arg_of(c)};
    for (const Tensor& v : vars) args.push_back(Arg{v.dtype(), v.shape(), nullptr});
    for (size_t k = static_cast<size_t>(io.own); k < in.size(); ++k) args.push_back(arg_of(*in[k]));
    Graph typed_body;
    bool typed = true;
    try {
      typed_body = bind_body(n, b, args);
    } catch (const Unsupported&) {
      throw;
    } catch (const Error&) {  // a body typed only with its iteration number bound: nothing to prove here
      typed = false;
    }
    const Value* cond_out = typed ? &typed_body.values[typed_body.outputs[0]] : nullptr;
    if (cond_out && cond_out->constant && cond_out->constant->numel() == 1 && cond_out->constant->get(0) != 0.0)
      ref_fail(n, (in[0] ? "trip count " + std::to_string(M) + " is past" : std::string("it has no trip count, past")) +
                      " the " + std::to_string(kMaxIterations) + " iterations a loop may run, and its condition stays true");
  }
  int64_t i = 0, scanned_elements = 0;
  for (; i < M && cond; ++i) {
    if (i >= kMaxIterations) ref_fail(n, "ran " + std::to_string(kMaxIterations) + " iterations without its condition turning false");
    if (folding) {
      if (i >= kMaxFoldIterations) throw FoldTooBig{"runs past " + std::to_string(kMaxFoldIterations) + " iterations"};
      int64_t held = scanned_elements;  // kept as a running count: a sum over every slice per step was quadratic
      for (const Tensor& v : vars) held += v.numel();
      if (held > kMaxFoldElements) throw FoldTooBig{"carries and scans past 2^26 elements"};
    }
    Tensor it = scalar_like(b, 0, DType::i64, i), c = scalar_like(b, 1, DType::boolean, cond ? 1 : 0);
    std::vector<Arg> args{arg_of(it), arg_of(c)};
    for (const Tensor& v : vars) args.push_back(arg_of(v));
    for (size_t k = static_cast<size_t>(io.own); k < in.size(); ++k) args.push_back(arg_of(*in[k]));
    std::vector<Tensor> out = run_iteration(n, b, args, keep, runner);
    if (out[0].numel() != 1) ref_fail(n, "its body's cond_out must hold exactly one element, got " + shape_str(out[0].shape()));
    cond = out[0].get(0) != 0.0;
    for (int k = 0; k < io.N; ++k) vars[k] = std::move(out[1 + k]);
    for (int k = 0; k < io.K; ++k) {
      scanned_elements += out[1 + io.N + k].numel();
      scans[k].push_back(std::move(out[1 + io.N + k]));
    }
  }
  // Zero iterations: each scan output is an empty stack of what the first iteration would return.
  std::vector<std::pair<DType, Shape>> empty;
  if (i == 0 && io.K > 0) {
    std::vector<Arg> carried, captured;
    for (const Tensor& v : vars) carried.push_back(arg_of(v));
    for (size_t k = static_cast<size_t>(io.own); k < in.size(); ++k) captured.push_back(arg_of(*in[k]));
    empty = zero_trip_scans(n, b, io, carried, captured);
  }
  std::vector<Tensor> res = std::move(vars);
  for (int k = 0; k < io.K; ++k) {
    const auto& sk = scans[k];
    if (sk.empty()) {
      res.push_back(Tensor(empty[static_cast<size_t>(k)].first, empty[static_cast<size_t>(k)].second));
      continue;
    }
    Tensor t(sk[0].dtype(), with_axis(sk[0].shape(), 0, static_cast<int64_t>(sk.size())));
    for (size_t j = 0; j < sk.size(); ++j) {
      check_slice(n, sk[j], sk[0].dtype(), sk[0].shape(), "scan output " + std::to_string(k) + " of iteration " + std::to_string(j));
      put(t, 0, static_cast<int64_t>(j), sk[j]);
    }
    res.push_back(std::move(t));
  }
  return res;
}

// Output shapes only the iterations decide (scan outputs under a run-time condition, a
// carried value that changes shape): every input must be known, so the loop runs at load and
// folds. Throws NeedsConstant naming the first unknown input; a Session then specialises on it
// (a small graph input) or computes it on ref (a value computed inside the model).
void require_all_inputs(InferContext& ctx) {
  for (int i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i)) ctx.require_contents(i);  // data: a captured image may be large
}

void loop_infer(InferContext& ctx) {
  const Node& n = ctx.node();
  const Graph& b = body_of(n);
  const LoopIO io = loop_io(n, b);
  for (int i = 0; i < 2; ++i)
    if (ctx.has_input(i) && shape_numel(ctx.shape(i)) != 1) ctx.fail(std::string(i ? "cond" : "M") + " must hold exactly one element");
  bool all_const = true;
  for (int i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i) && !ctx.constant(i)) all_const = false;
  std::string gave_up;  // why a fold at load stopped (then the loop runs when executed, if it can)
  // Runs it now (every input constant): the shapes are whatever the iterations produce (it
  // folds next). False when the run passes the bounds on work at load (gave_up says which).
  auto fold = [&] {
    std::vector<const Tensor*> in;
    for (int i = 0; i < static_cast<int>(n.inputs.size()); ++i) in.push_back(ctx.has_input(i) ? ctx.constant(i) : nullptr);
    try {
      const std::vector<Tensor> out = loop_run(n, in, nullptr, nullptr, true);
      for (int k = 0; k < ctx.num_outputs(); ++k) ctx.set_output(k, out[k].dtype(), out[k].shape());
      return true;
    } catch (const FoldTooBig& e) {
      gave_up = e.why;
      return false;
    }
  };
  // A trip count M past the fold bound: shapes from one bound body run instead (below) and the
  // loop runs when executed; it folds only when the shapes need its iterations (a condition
  // known only at run time with scan outputs or a carried value changing shape: M is then only
  // an upper bound, INT64_MAX in TorchScript's while loops, and the condition decides).
  const bool big_m = ctx.has_input(0) && ctx.constant(0) && ctx.constant(0)->numel() == 1 &&
                     ctx.constant(0)->get_int(0) > kMaxFoldIterations;
  if (all_const && !big_m && fold()) return;
  // Zero iterations (M <= 0 or cond false, known now): the body never runs, so it is not
  // analysed as if it did (a nested Loop whose trip count is the iteration number cannot be).
  const bool zero_trips = (ctx.has_input(0) && ctx.constant(0) && ctx.constant(0)->numel() == 1 && ctx.constant(0)->get_int(0) <= 0) ||
                          (ctx.has_input(1) && ctx.constant(1) && ctx.constant(1)->numel() == 1 && ctx.constant(1)->get(0) == 0.0);
  if (zero_trips) {
    std::vector<Arg> carried, captured;
    for (int k = 0; k < io.N; ++k) {
      if (!ctx.has_input(2 + k)) ctx.fail("input " + std::to_string(2 + k) + " is missing");
      carried.push_back(Arg{ctx.dtype(2 + k), ctx.shape(2 + k), ctx.constant(2 + k)});
      ctx.set_output(k, ctx.dtype(2 + k), ctx.shape(2 + k));
    }
    for (int i = io.own; i < static_cast<int>(n.inputs.size()); ++i) captured.push_back(Arg{ctx.dtype(i), ctx.shape(i), ctx.constant(i)});
    const auto scans = zero_trip_scans(n, b, io, carried, captured, [&] { require_all_inputs(ctx); });
    for (int k = 0; k < io.K; ++k) ctx.set_output(io.N + k, scans[static_cast<size_t>(k)].first, scans[static_cast<size_t>(k)].second);
    return;
  }
  // Shapes only the iterations decide: the inputs must be known so the loop folds (a big M
  // tries the fold here), and a fold that was stopped is one error saying so.
  auto require_all = [&] {
    if (all_const && big_m && gave_up.empty() && fold()) return true;
    if (!gave_up.empty())
      ctx.fail("its shapes are only known by running it, and running it at load " + gave_up + " (the bound on work at load)");
    require_all_inputs(ctx);
    return false;
  };
  if (io.K > 0) {  // scan outputs need the trip count: a Session specialises on these inputs
    if (ctx.has_input(0)) ctx.require_constant(0);
    if (ctx.has_input(1)) ctx.require_constant(1);
  }
  // cond_in bound to a constant true: if cond_out then folds to true, the loop runs exactly M
  // times (by induction over the iterations).
  const bool cond0 = !ctx.has_input(1) || (ctx.constant(1) && ctx.constant(1)->get(0) != 0.0);
  Tensor it = scalar_like(b, 0, DType::i64, 0), c = scalar_like(b, 1, DType::boolean, 1);
  const Tensor first = it;  // iteration 0, bound below when the body needs its number (outlives args)
  std::vector<Arg> args{Arg{DType::i64, it.shape(), nullptr}, Arg{DType::boolean, c.shape(), cond0 ? &c : nullptr}};
  for (int i = 2; i < static_cast<int>(n.inputs.size()); ++i) {
    if (!ctx.has_input(i)) ctx.fail("input " + std::to_string(i) + " is missing");
    args.push_back(Arg{ctx.dtype(i), ctx.shape(i), i >= io.own ? ctx.constant(i) : nullptr});  // captured: constant where known
  }
  Graph s;
  bool first_only = false;  // typed from iteration 0 (its cond_out proves nothing about the others)
  try {
    s = bind_body(n, b, args);
  } catch (const Unsupported&) {
    throw;
  } catch (const Error&) {  // a body whose shapes need the iteration's values: a big-M loop folds if it can
    if (all_const && big_m && gave_up.empty() && fold()) return;
    // ... else the types come from its first iteration (tf2onnx slices by the iteration number
    // inside while loops: x[0 : i + 1]); the loop runs one bound iteration at a time, and a
    // carried value or scan output whose shape then changes fails the run naming the loop.
    args[0] = Arg{DType::i64, first.shape(), &first};
    try {
      s = bind_body(n, b, args);
      first_only = true;
    } catch (const Error& e) {
      // Its shapes need values its inputs carry (a Resize to a size read from a box, a NonZero:
      // torchvision's paste_masks_in_image): with every input known the loop folds, so a
      // Session specialises on them (a cone computes them) instead of refusing the model; a
      // fold stopped by the bounds on work at load says so. Otherwise the first error, as before.
      if (dynamic_cast<const NeedsConstant*>(&e) && require_all()) return;
      args[0] = Arg{DType::i64, it.shape(), nullptr};
      bind_body(n, b, args);  // the first error, as before
      throw;
    }
  }
  for (int k = 0; k < io.N; ++k) {
    const Value& v = s.values[s.outputs[1 + k]];
    if (v.dtype != ctx.dtype(2 + k) || v.shape != ctx.shape(2 + k)) {
      if (require_all()) return;
      throw Error("shape", n.label() + ": loop-carried value " + std::to_string(k) + " changes from " + shape_str(ctx.shape(2 + k)) +
                               " to " + shape_str(v.shape) + " and the trip count is only known at run time");
    }
    ctx.set_output(k, v.dtype, v.shape);
  }
  if (io.K == 0) return;
  const Value& cond_out = s.values[s.outputs[0]];
  const bool counted = !first_only && cond0 && cond_out.constant && cond_out.constant->get(0) != 0.0;
  if (!counted) {
    if (require_all()) return;
    throw Error("shape", n.label() + ": has scan outputs and a condition known only at run time (static shapes need the trip count)");
  }
  const int64_t trips = ctx.has_input(0) ? std::max<int64_t>(ctx.require_constant(0).get_int(0), 0) : -1;
  if (trips < 0) throw Error("shape", n.label() + ": has scan outputs and no trip count M");
  const int64_t iterations = ctx.has_input(1) && ctx.constant(1)->get(0) == 0.0 ? 0 : trips;
  // Exactly M iterations: past the bound the run would fail after the scan outputs ([M, ...],
  // gigabytes for M = 10^9) were allocated; fail now, as the run would.
  if (iterations > kMaxIterations)
    ctx.fail("trip count " + std::to_string(iterations) + " is past the " + std::to_string(kMaxIterations) +
             " iterations a loop may run, and its condition stays true");
  for (int k = 0; k < io.K; ++k) {
    const Value& v = s.values[s.outputs[1 + io.N + k]];
    ctx.set_output(io.N + k, v.dtype, with_axis(v.shape, 0, iterations));
  }
}

void loop_ref(const Node& n, const Ins& in, Outs& out) {
  std::vector<Tensor> r = loop_run(n, in);
  for (size_t k = 0; k < out.size(); ++k) {
    if (!has_out(out, k)) continue;
    check_slice(n, r[k], out[k].dtype(), out[k].shape(), "output " + std::to_string(k));
    out[k] = std::move(r[k]);
  }
}

// ---- Scan ----


ScanIO scan_io(const Node& n, const Graph& b, const std::vector<int>& in_ranks) {
  ScanIO io;
  io.own = own_inputs(n, b);
  io.batched = n.opset < 9;
  io.first = io.batched ? 1 : 0;
  io.M = static_cast<int>(n.attr_i("num_scan_inputs", -1));
  io.N = io.own - io.first - io.M;
  if (io.M < 1 || io.N < 0) throw Error("shape", n.label() + ": num_scan_inputs " + std::to_string(io.M) + " does not fit its " + std::to_string(io.own) + " inputs");
  if (formal_count(b) != io.N + io.M)
    throw Error("shape", n.label() + ": its body takes " + std::to_string(formal_count(b)) + " inputs, expected " + std::to_string(io.N + io.M));
  io.K = static_cast<int>(b.outputs.size()) - io.N;
  if (io.K < 0 || static_cast<int>(n.outputs.size()) > io.N + io.K)
    throw Error("shape", n.label() + ": its body returns " + std::to_string(b.outputs.size()) + " outputs for " + std::to_string(io.N) + " states");
  auto list = [&](const char* name, int count) {
    std::vector<int64_t> v = n.attr_ints(name);
    if (v.empty()) v.assign(static_cast<size_t>(count), 0);
    if (static_cast<int>(v.size()) != count)
      throw Error("shape", n.label() + ": attribute '" + name + "' has " + std::to_string(v.size()) + " entries, expected " + std::to_string(count));
    return v;
  };
  io.in_dirs = list(io.batched ? "directions" : "scan_input_directions", io.M);
  io.in_axes = io.batched ? std::vector<int64_t>(static_cast<size_t>(io.M), 1) : list("scan_input_axes", io.M);
  io.out_dirs = io.batched ? std::vector<int64_t>(static_cast<size_t>(io.K), 0) : list("scan_output_directions", io.K);
  io.out_axes = io.batched ? std::vector<int64_t>(static_cast<size_t>(io.K), 1) : list("scan_output_axes", io.K);
  for (int j = 0; j < io.M; ++j) {
    const int r = in_ranks[static_cast<size_t>(io.first + io.N + j)];
    io.in_axes[j] = normalize_axis(io.in_axes[j], r, n.label());
    if (io.batched && r < 2) throw Error("shape", n.label() + ": scan input " + std::to_string(j) + " needs a batch and a sequence axis");
  }
  return io;
}

// The sequence length T (all scanned inputs must agree) and, for Scan-8, the batch size.
int64_t scan_length(const Node& n, const ScanIO& io, const std::vector<const Shape*>& shapes) {
  int64_t T = -1;
  for (int j = 0; j < io.M; ++j) {
    const Shape& s = *shapes[static_cast<size_t>(io.first + io.N + j)];
    const int64_t len = s[static_cast<size_t>(io.in_axes[j])];
    if (T >= 0 && len != T)
      throw Error("shape", n.label() + ": scan inputs have different lengths (" + std::to_string(T) + " and " + std::to_string(len) + ")");
    T = len;
  }
  // Scan-8: every state and scanned input (and sequence_lens) carries the same batch on axis 0;
  // a state batch past the scanned one was read past its end (red-team round 11).
  if (io.batched) {
    int64_t B = -1;
    int at = -1;
    for (int i = 0; i < io.first + io.N + io.M; ++i) {
      if (i < io.first && (i >= static_cast<int>(shapes.size()) || !shapes[static_cast<size_t>(i)])) continue;  // no sequence_lens
      const Shape& s = *shapes[static_cast<size_t>(i)];
      if (s.empty())
        throw Error("shape", n.label() + ": input " + std::to_string(i) + " is a scalar; Scan-8 inputs carry the batch on axis 0");
      if (B >= 0 && s[0] != B)
        throw Error("shape", n.label() + ": inputs " + std::to_string(at) + " and " + std::to_string(i) + " have different batch sizes (" +
                                 std::to_string(B) + " and " + std::to_string(s[0]) + ") on Scan-8's axis 0");
      if (B < 0) B = s[0], at = i;
    }
  }
  // As Loop's trip cap: an empty scanned input of length 2^56 would otherwise run the body 2^56 times.
  if (T > kMaxIterations) throw Error("shape", n.label() + ": scan length " + std::to_string(T) + " is past 2^20 iterations");
  return T;
}

Shape drop_axis(Shape s, int64_t axis) {
  s.erase(s.begin() + axis);
  return s;
}

void scan_infer(InferContext& ctx) {
  const Node& n = ctx.node();
  const Graph& b = body_of(n);
  std::vector<int> ranks;
  std::vector<const Shape*> shapes;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    ranks.push_back(ctx.has_input(static_cast<int>(i)) ? ctx.rank(static_cast<int>(i)) : 0);
    shapes.push_back(ctx.has_input(static_cast<int>(i)) ? &ctx.shape(static_cast<int>(i)) : nullptr);
  }
  ScanIO io = scan_io(n, b, ranks);
  for (int i = io.first; i < static_cast<int>(n.inputs.size()); ++i)
    if (!ctx.has_input(i)) ctx.fail("input " + std::to_string(i) + " is missing");
  const int64_t T = scan_length(n, io, shapes);
  const int64_t batch = io.batched ? ctx.shape(io.first)[0] : 0;
  std::vector<DType> dtypes;
  std::vector<const Tensor*> constants;
  for (int i = 0; i < static_cast<int>(n.inputs.size()); ++i) {
    dtypes.push_back(ctx.has_input(i) ? ctx.dtype(i) : DType::undefined);
    constants.push_back(ctx.has_input(i) ? ctx.constant(i) : nullptr);
  }
  std::vector<Arg> args = scan_iteration_args(io, dtypes, shapes, constants);
  Graph s;
  std::vector<Tensor> first;  // the first iteration's scanned slices (outlive args)
  try {
    s = bind_body(n, b, args);
  } catch (const NeedsConstant&) {
    // Its shapes need values (a NonZero inside), as Loop's: with every input known it is typed
    // from its first iteration and folds (scan_ref checks each iteration's slices against that).
    if (T == 0 && !io.batched) {
      // No iteration runs: the states pass through and the scan outputs have no rows, typed as
      // the body declares them (a dim it leaves unknown is 0, as onnxruntime makes it).
      for (int k = 0; k < io.N; ++k) ctx.set_output(k, ctx.dtype(io.first + k), ctx.shape(io.first + k));
      // An output the body leaves untyped: typed by a body bound to zeros (its dtype is all
      // that is read; the rows are none).
      std::vector<Tensor> zeros;
      zeros.reserve(args.size());
      Graph z;
      bool zero_tried = false, zero_bound = false;
      for (int k = 0; k < io.K; ++k) {
        const Value* v = &b.values[static_cast<size_t>(b.outputs[static_cast<size_t>(io.N + k)])];
        if (v->dtype == DType::undefined && !zero_tried) {
          zero_tried = true;
          std::vector<Arg> za = args;
          for (int j = 0; j < io.N + io.M; ++j) {
            Arg& a = za[static_cast<size_t>(j)];
            if (!a.value && shape_numel(a.shape) <= (int64_t{1} << 16)) zeros.emplace_back(a.dtype, a.shape), a.value = &zeros.back();
          }
          try {
            z = bind_body(n, b, za);
            zero_bound = true;
          } catch (const Error&) {
          }
        }
        if (v->dtype == DType::undefined && zero_bound) v = &z.values[static_cast<size_t>(z.outputs[static_cast<size_t>(io.N + k)])];
        if (v->dtype == DType::undefined)
          ctx.fail("scan output " + std::to_string(k) + " of zero iterations: its body neither declares nor computes its type");
        Shape sh = v->shape;
        for (auto& d : sh) d = std::max<int64_t>(d, 0);
        const int64_t r = static_cast<int64_t>(sh.size()) + 1;
        ctx.set_output(io.N + k, v->dtype, with_axis(sh, normalize_axis(io.out_axes[k], r, n.label()), 0));
      }
      return;
    }
    if (io.batched) throw;  // (no first iteration to type it from: asking for the inputs would not help)
    require_all_inputs(ctx);
    for (int k = 0; k < io.N; ++k) args[static_cast<size_t>(k)].value = ctx.constant(io.first + k);
    first.reserve(static_cast<size_t>(io.M));
    for (int j = 0; j < io.M; ++j)
      first.push_back(take(*ctx.constant(io.first + io.N + j), io.in_axes[j], io.in_dirs[j] ? T - 1 : 0));
    for (int j = 0; j < io.M; ++j) args[static_cast<size_t>(io.N + j)] = arg_of(first[static_cast<size_t>(j)]);
    s = bind_body(n, b, args);
  }
  for (int k = 0; k < io.N; ++k) {
    const Value& v = s.values[s.outputs[k]];
    if (v.dtype != args[k].dtype || v.shape != args[k].shape)
      ctx.fail("state " + std::to_string(k) + " changes from " + shape_str(args[k].shape) + " to " + shape_str(v.shape) + " in its body");
    ctx.set_output(k, v.dtype, ctx.shape(io.first + k));
  }
  for (int k = 0; k < io.K; ++k) {
    const Value& v = s.values[s.outputs[io.N + k]];
    const int64_t r = static_cast<int64_t>(v.shape.size()) + 1;
    if (io.batched) {
      ctx.set_output(io.N + k, v.dtype, with_axis(with_axis(v.shape, 0, T), 0, batch));
    } else {
      io.out_axes[k] = normalize_axis(io.out_axes[k], r, n.label());
      ctx.set_output(io.N + k, v.dtype, with_axis(v.shape, io.out_axes[k], T));
    }
  }
}

std::vector<Arg> scan_iteration_args(const ScanIO& io, const std::vector<DType>& dtypes, const std::vector<const Shape*>& shapes,
                                     const std::vector<const Tensor*>& constants) {
  for (size_t i = static_cast<size_t>(io.first); i < shapes.size(); ++i)
    if (!shapes[i]) throw Error("shape", "Scan input " + std::to_string(i) + " is missing");
  std::vector<Arg> args;
  for (int i = io.first; i < io.own; ++i) {
    Shape s = *shapes[static_cast<size_t>(i)];
    if (io.batched) s = drop_axis(s, 0);
    if (i >= io.first + io.N) s = drop_axis(s, io.in_axes[i - io.first - io.N] - (io.batched ? 1 : 0));
    args.push_back(Arg{dtypes[static_cast<size_t>(i)], s, nullptr});
  }
  for (size_t i = static_cast<size_t>(io.own); i < shapes.size(); ++i) args.push_back(Arg{dtypes[i], *shapes[i], constants[i]});
  return args;
}

void scan_run(const Node& n, const Ins& in, Outs& out, BodyRunner* runner, const std::vector<bool>* constant) {
  const Graph& b = body_of(n);
  std::vector<int> ranks;
  std::vector<const Shape*> shapes;
  for (const Tensor* t : in) {
    ranks.push_back(t ? t->rank() : 0);
    shapes.push_back(t ? &t->shape() : nullptr);
  }
  ScanIO io = scan_io(n, b, ranks);
  const int64_t T = scan_length(n, io, shapes);
  const std::vector<bool> keep = kept_constants(n, b, io.own, constant, {});
  const int64_t batches = io.batched ? in[static_cast<size_t>(io.first)]->shape()[0] : 1;
  if (io.batched && in[0]) {
    for (int64_t l : ints_of(*in[0]))
      if (l != T) throw Unsupported("ref", n.label() + ": sequence_lens shorter than the scanned axis (" + std::to_string(l) + " < " + std::to_string(T) + ") is not supported");
  }
  for (int k = 0; k < io.K; ++k)
    if (has_out(out, static_cast<size_t>(io.N + k)))
      io.out_axes[k] = io.batched ? 1 : normalize_axis(io.out_axes[k], out[io.N + k].rank(), n.label());
  // Scan-8's batch multiplies the scanned length: both bounded together, as one loop.
  if (T > 0 && batches > kMaxIterations / T)
    ref_fail(n, "batch " + std::to_string(batches) + " x scan length " + std::to_string(T) + " is past the " +
                    std::to_string(kMaxIterations) + " iterations a loop may run");
  NestScope scope(n, batches * T);
  for (int64_t bi = 0; bi < batches; ++bi) {
    std::vector<Tensor> states;
    for (int k = 0; k < io.N; ++k) {
      const Tensor& s0 = *in[static_cast<size_t>(io.first + k)];
      states.push_back(io.batched ? take(s0, 0, bi) : s0);
    }
    std::vector<Tensor> scanned;  // Scan-8: this batch row of each scanned input
    for (int j = 0; j < io.M; ++j) {
      const Tensor& x = *in[static_cast<size_t>(io.first + io.N + j)];
      scanned.push_back(io.batched ? take(x, 0, bi) : x);
    }
    // Scan-8: this batch row of each scan output, written back once after its T steps (a
    // take / put of the whole row per step made the copies quadratic in T).
    std::vector<Tensor> rows(static_cast<size_t>(io.K));
    if (io.batched)
      for (int k = 0; k < io.K; ++k)
        if (has_out(out, static_cast<size_t>(io.N + k))) rows[static_cast<size_t>(k)] = take(out[static_cast<size_t>(io.N + k)], 0, bi);
    for (int64_t t = 0; t < T; ++t) {
      std::vector<Tensor> slices;
      for (int j = 0; j < io.M; ++j)
        slices.push_back(take(scanned[j], io.in_axes[j] - (io.batched ? 1 : 0), io.in_dirs[j] ? T - 1 - t : t));
      std::vector<Arg> args;
      for (const Tensor& s : states) args.push_back(arg_of(s));
      for (const Tensor& s : slices) args.push_back(arg_of(s));
      for (size_t k = static_cast<size_t>(io.own); k < in.size(); ++k) args.push_back(arg_of(*in[k]));
      std::vector<Tensor> r = run_iteration(n, b, args, keep, runner);
      // A state keeps its type and shape across iterations (ONNX Scan), even one nothing reads.
      for (int k = 0; k < io.N; ++k) {
        check_slice(n, r[k], states[k].dtype(), states[k].shape(), "state " + std::to_string(k) + " at iteration " + std::to_string(t));
        states[k] = std::move(r[k]);
      }
      for (int k = 0; k < io.K; ++k) {
        const size_t o = static_cast<size_t>(io.N + k);
        if (!has_out(out, o)) continue;
        const int64_t pos = io.out_dirs[k] ? T - 1 - t : t;
        Shape want = out[o].shape();
        if (io.batched) {
          want.erase(want.begin(), want.begin() + 2);
        } else {
          want = drop_axis(want, io.out_axes[k]);
        }
        check_slice(n, r[o], out[o].dtype(), want, "scan output " + std::to_string(k));
        if (io.batched) {  // out[b, t, ...]
          put(rows[static_cast<size_t>(k)], 0, pos, r[o]);
        } else {
          put(out[o], io.out_axes[k], pos, r[o]);
        }
      }
    }
    if (io.batched)
      for (int k = 0; k < io.K; ++k)
        if (has_out(out, static_cast<size_t>(io.N + k))) put(out[static_cast<size_t>(io.N + k)], 0, bi, rows[static_cast<size_t>(k)]);
    for (int k = 0; k < io.N; ++k) {
      if (!has_out(out, static_cast<size_t>(k))) continue;
      check_slice(n, states[k], out[k].dtype(), io.batched ? drop_axis(out[k].shape(), 0) : out[k].shape(), "final state " + std::to_string(k));
      if (io.batched) put(out[k], 0, bi, states[k]);
      else out[k] = states[k];
    }
  }
}

void scan_ref(const Node& n, const Ins& in, Outs& out) { scan_run(n, in, out, nullptr, nullptr); }

// ---- Host-driven runs (OpDef::run_host, first_call) ----

void loop_host(const Node& n, const Ins& in, const std::vector<bool>& constant, Outs& out, BodyRunner& runner) {
  std::vector<Tensor> r = loop_run(n, in, &runner, &constant);
  for (size_t k = 0; k < out.size(); ++k) {
    if (!has_out(out, k)) continue;
    check_slice(n, r[k], out[k].dtype(), out[k].shape(), "output " + std::to_string(k));
    out[k] = std::move(r[k]);
  }
}

void scan_host(const Node& n, const Ins& in, const std::vector<bool>& constant, Outs& out, BodyRunner& runner) {
  scan_run(n, in, out, &runner, &constant);
}

// Captured outer values as the first iteration binds them: constants of g stay constants.
void captured_args(const Graph& g, const Node& n, int own, std::vector<Arg>& args) {
  for (size_t k = static_cast<size_t>(own); k < n.inputs.size(); ++k) {
    const Value& v = g.values[n.inputs[k]];
    args.push_back(Arg{v.dtype, v.shape, v.constant ? &*v.constant : nullptr});
  }
}

BodyCall loop_first_call(const Graph& g, const Node& n) {
  const Graph& b = body_of(n);
  const LoopIO io = loop_io(n, b);
  const Tensor c = scalar_like(b, 1, DType::boolean, 1);
  std::vector<Arg> args{Arg{DType::i64, scalar_like(b, 0, DType::i64, 0).shape(), nullptr}, arg_of(c)};
  for (int k = 0; k < io.N; ++k) {
    const Value& v = g.values[n.inputs[static_cast<size_t>(2 + k)]];
    args.push_back(Arg{v.dtype, v.shape, nullptr});
  }
  captured_args(g, n, io.own, args);
  return body_call(n, args);
}

BodyCall scan_first_call(const Graph& g, const Node& n) {
  const Graph& b = body_of(n);
  std::vector<int> ranks;
  for (int v : n.inputs) ranks.push_back(v >= 0 ? static_cast<int>(g.values[v].shape.size()) : 0);
  const ScanIO io = scan_io(n, b, ranks);
  std::vector<Arg> args;
  for (int i = io.first; i < io.own; ++i) {
    const Value& v = g.values[n.inputs[static_cast<size_t>(i)]];
    Shape s = v.shape;
    if (io.batched) s = drop_axis(s, 0);
    if (i >= io.first + io.N) s = drop_axis(s, io.in_axes[i - io.first - io.N] - (io.batched ? 1 : 0));
    args.push_back(Arg{v.dtype, s, nullptr});
  }
  captured_args(g, n, io.own, args);
  return body_call(n, args);
}

}  // namespace loop_detail

using namespace loop_detail;

void register_loop_ops() {
  OpDef loop = table_entry("Loop", 0, 1 << 20, loop_infer, loop_ref, 1 << 20);
  loop.expand = loop_expand;
  loop.run_host = loop_host;
  loop.first_call = loop_first_call;
  loop.strings = true;  // carried values and stacked scan outputs move strings (put); body nodes are checked
  loop.optional_first_output = true;  // variadic outputs: an unused one may be omitted
  register_op(std::move(loop));
  OpDef scan = table_entry("Scan", 1, 1 << 20, scan_infer, scan_ref, 1 << 20);
  scan.strings = true;
  scan.optional_first_output = true;
  scan.expand = scan_expand;
  scan.optional_inputs = 1u;  // Scan-8's sequence_lens
  scan.run_host = scan_host;
  scan.first_call = scan_first_call;
  register_op(std::move(scan));
}

}  // namespace fusor
