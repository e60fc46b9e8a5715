// Control flow (ONNX semantics): If, and the optional-type ops on plain tensors.
//
// OptionalHasElement-15/18: true when its input is given (fusor has no optional or sequence
// values: a given input is a tensor, which always has an element), false when it is omitted.
// OptionalGetElement-15/18: its tensor input itself; an omitted input is an empty optional,
// Error("shape"). Both are replaced at shape inference (a constant, an Identity), so no kernel
// or host step remains.
//
// If-1/11/13/16/19/21 (operator spec "If"): input 0 `cond` is a one-element bool tensor; the
// attributes then_branch / else_branch are graphs without formal inputs whose outputs become
// the node's outputs. A branch reads values of enclosing graphs through its graph inputs: the
// importer appends the outer values to the node's inputs, graph attributes in name order
// (else_branch's, then then_branch's; see frontend/onnx_import.h).
//
// A condition that is a compile-time constant (it often depends only on shapes) inlines the
// chosen branch into the graph (OpDef::expand), so its nodes fold, fuse and run on any backend.
// Otherwise, when both branches infer the same dtypes and shapes, the reference runs the chosen
// branch op by op; when their shapes differ or one cannot run with the shapes at hand (Optimum's
// merged decoders), the condition is specialised on: a NeedsConstant names it, the session
// computes it from the inputs and keys the executable on it, and the If inlines.
#include <algorithm>
#include <exception>

#include "ir/ops/op_helpers.h"
#include "ir/passes.h"

namespace fusor {
namespace {

using namespace op_helpers;

const Graph& branch(const Node& n, const std::string& name) {
  const Graph* b = n.attr_g(name);
  if (!b) throw Error("shape", n.label() + ": attribute '" + name + "' (a graph) is missing");
  return *b;
}

bool condition(const Node& n, const Tensor& c) {
  if (c.numel() != 1) throw Error("shape", n.label() + ": cond must hold exactly one element, got " + shape_str(c.shape()));
  return c.get(0) != 0.0;
}

// The branch with its inputs typed like the outer values (and constant where they are), shapes
// inferred and constants folded.
Graph bound_branch(const Node& n, const Graph& b, const std::vector<int>& idx, const std::vector<DType>& dt,
                   const std::vector<const Shape*>& shape, const std::vector<const Tensor*>& value) {
  Graph s = b;
  for (size_t i = 0; i < idx.size(); ++i) {
    Value& v = s.values[s.inputs[i]];
    v.dtype = dt[idx[i]];
    v.shape = *shape[idx[i]];
    v.shape_known = true;
    if (value[idx[i]]) v.constant = *value[idx[i]];
  }
  op_helpers::infer_subgraph(s, n, "branch");
  return s;
}

void if_infer(InferContext& ctx) {
  const Node& n = ctx.node();
  if (ctx.rank(0) > 1 || shape_numel(ctx.shape(0)) != 1) ctx.fail("cond must hold exactly one element");
  std::vector<DType> dt(n.inputs.size());
  std::vector<const Shape*> shape(n.inputs.size());
  std::vector<const Tensor*> value(n.inputs.size());
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    dt[i] = ctx.dtype(i);
    shape[i] = &ctx.shape(i);
    value[i] = ctx.constant(i);
  }
  // Both branches are bound; one that cannot be (its shape depends on a value inside it, a
  // NonZero: a NeedsConstant; or it cannot run with these shapes at all: Optimum's merged
  // decoder reads a placeholder past of length 1 in the branch it does not take) is fine once
  // the branch is known: the condition must then be known when the graph is specialised
  // (runtime/session.cpp resolves the value named here from the inputs) and if_expand inlines
  // the branch it picks. A fault both branches share is the model's, reported as it is.
  std::vector<Graph> bs;
  std::vector<std::pair<const char*, std::exception_ptr>> failed;
  bool needs_value = false;
  std::string why;
  for (const char* name : {"then_branch", "else_branch"}) {
    const Graph& b = branch(n, name);
    const std::vector<int> idx = captured_inputs(n, name, 1);
    try {
      bs.push_back(bound_branch(n, b, idx, dt, shape, value));
    } catch (const Unsupported&) {
      throw;
    } catch (const Error& e) {
      if (value[0]) throw;
      needs_value = needs_value || dynamic_cast<const NeedsConstant*>(&e) != nullptr;
      if (failed.empty()) why = e.message();
      failed.emplace_back(name, std::current_exception());
      continue;
    }
    // As onnxruntime: each branch returns exactly the node's outputs (an extra one was dropped
    // silently on one branch while the other had none).
    if (static_cast<int>(bs.back().outputs.size()) != ctx.num_outputs())
      ctx.fail(std::string(name) + " returns " + std::to_string(bs.back().outputs.size()) + " outputs, the node has " +
               std::to_string(ctx.num_outputs()));
  }
  if (!failed.empty()) {
    if (failed.size() == 2 && !needs_value) std::rethrow_exception(failed[0].second);
    try {
      ctx.require_constant(0);
    } catch (const NeedsConstant& c) {
      throw NeedsConstant(n.label() + ": its condition must be known when the graph is specialised, as " + failed[0].first +
                              (needs_value ? " needs a constant: " : " fails for these shapes: ") + why,
                          c.value());
    }
    std::rethrow_exception(failed[0].second);
  }
  for (int k = 0; k < ctx.num_outputs(); ++k) {
    std::vector<std::pair<DType, Shape>> out;
    for (const Graph& s : bs) {
      if (k >= static_cast<int>(s.outputs.size())) ctx.fail("a branch has fewer outputs than the node");
      const Value& v = s.values[s.outputs[k]];
      // A sequence is resolved into tensors while the graph is specialised: only the branch a
      // constant condition picks can return one (if_expand); here it read as a scalar tensor.
      if (v.sequence) ctx.fail("output " + std::to_string(k) + " is a sequence, which only an If with a constant condition can return");
      out.push_back({v.dtype, v.shape});
    }
    if (out[0].first != out[1].first) ctx.fail("branches produce output " + std::to_string(k) + " in different dtypes");
    if (out[0].second != out[1].second) {
      // Static shapes need the branch known: the condition is specialised on (Optimum's merged
      // decoder: use_cache_branch picks a past-and-present or a first-step shape).
      const std::string why = "the branches produce output " + std::to_string(k) + " in different shapes (" + shape_str(out[0].second) +
                              " vs " + shape_str(out[1].second) + ")";
      try {
        ctx.require_constant(0);
      } catch (const NeedsConstant& c) {
        throw NeedsConstant(n.label() + ": its condition must be known when the graph is specialised, as " + why, c.value(), c.contents());
      }
      throw Error("shape", n.label() + ": " + why);
    }
    ctx.set_output(k, out[0].first, out[0].second);
  }
}

void if_ref(const Node& n, const Ins& in, Outs& out) {
  const char* name = condition(n, *in[0]) ? "then_branch" : "else_branch";
  std::vector<DType> dt(in.size());
  std::vector<const Shape*> shape(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (!in[i]) continue;
    dt[i] = in[i]->dtype();
    shape[i] = &in[i]->shape();
  }
  // Every outer value is bound as a constant: the branch folds as far as it can, the rest runs
  // op by op through the table's references.
  Graph s = bound_branch(n, branch(n, name), captured_inputs(n, name, 1), dt, shape, in);
  const std::vector<Tensor> vals = run_subgraph_nodes(s);
  auto at = [&](int v) -> const Tensor* { return s.values[v].constant ? &*s.values[v].constant : &vals[v]; };
  for (size_t k = 0; k < out.size(); ++k) {
    if (!has_out(out, k)) continue;
    const Tensor& r = *at(s.outputs.at(k));
    if (r.shape() != out[k].shape() || r.dtype() != out[k].dtype())
      ref_fail(n, "branch output " + std::to_string(k) + " is " + dtype_name(r.dtype()) + " " + shape_str(r.shape()) +
                      ", inferred " + dtype_name(out[k].dtype()) + " " + shape_str(out[k].shape()));
    out[k] = r;
  }
}

// A constant condition: the chosen branch's nodes replace the If (values renamed under the
// node's name), its outputs copied into the node's outputs by Identity nodes.
bool if_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  if (!n.has_input(0) || !g.values[n.inputs[0]].constant) return false;
  const char* name = condition(n, *g.values[n.inputs[0]].constant) ? "then_branch" : "else_branch";
  const Graph& b = branch(n, name);
  std::vector<int> bound;
  for (int i : captured_inputs(n, name, 1)) bound.push_back(n.inputs[i]);
  RewriteNodes w{g, n.name, {}};
  const std::vector<int> outs = w.inline_graph(b, bound);
  if (b.outputs.size() < n.outputs.size()) throw Error("shape", n.label() + ": " + name + " has fewer outputs than the node");
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    if (n.outputs[k] < 0) continue;
    Node c;
    c.name = n.name + "/output" + std::to_string(k);
    c.op_type = "Identity";
    c.opset = n.opset;
    c.inputs = {outs[k]};
    c.outputs = {n.outputs[k]};
    w.nodes.push_back(std::move(c));
  }
  w.replace(index);
  return true;
}

void has_element_infer(InferContext& ctx) { ctx.set_output(0, DType::boolean, {}); }
void has_element_ref(const Node& n, const Ins& in, Outs& out) { out[0].set_int(0, n.has_input(0) && opt_in(in, 0) ? 1 : 0); }
bool has_element_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  Tensor t(DType::boolean, {});
  t.set_int(0, n.has_input(0) ? 1 : 0);
  RewriteNodes w{g, n.name, {}};
  w.op("Identity", {g.add_constant(g.unique_name(n.name + "/has_element"), std::move(t))}, {}, n.outputs.empty() ? -1 : n.outputs[0]);
  w.replace(index);
  return true;
}

void get_element_check(const Node& n) {
  if (!n.has_input(0)) throw Error("shape", n.label() + ": its input is an empty optional (omitted), which has no element to get");
}
void get_element_infer(InferContext& ctx) {
  get_element_check(ctx.node());
  ctx.set_output(0, ctx.dtype(0), ctx.shape(0));
}
void get_element_ref(const Node& n, const Ins& in, Outs& out) {
  get_element_check(n);
  out[0] = *in[0];
}
bool get_element_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  get_element_check(n);
  RewriteNodes w{g, n.name, {}};
  w.op("Identity", {n.inputs[0]}, {}, n.outputs.empty() ? -1 : n.outputs[0]);
  w.replace(index);
  return true;
}

}  // namespace

void register_control_ops() {
  OpDef d = table_entry("If", 1, 1 << 20, if_infer, if_ref, 1 << 20);
  d.expand = if_expand;
  d.strings = true;  // branch outputs are copied by value; the branches' nodes are checked
  d.optional_first_output = true;  // variadic outputs: an unused one may be omitted
  register_op(std::move(d));
  OpDef h = table_entry("OptionalHasElement", 0, 1, has_element_infer, has_element_ref);
  h.expand = has_element_expand;
  h.strings = true;  // reads no element
  register_op(std::move(h));
  OpDef e = table_entry("OptionalGetElement", 0, 1, get_element_infer, get_element_ref);
  e.expand = get_element_expand;
  e.strings = true;  // a copy by value
  register_op(std::move(e));
}

std::vector<int> op_helpers::captured_inputs(const Node& n, const std::string& name, int own_inputs) {
  int at = own_inputs;
  for (auto& [k, v] : n.attrs) {
    const auto* g = std::get_if<std::shared_ptr<const Graph>>(&v);
    if (!g || !*g) continue;
    const Graph& b = **g;
    const int count = static_cast<int>(b.inputs.size()) - (b.formal_inputs < 0 ? 0 : b.formal_inputs);
    if (k == name) {
      if (count < 0 || at + count > static_cast<int>(n.inputs.size()))
        throw Error("shape", n.label() + ": graph '" + name + "' reads " + std::to_string(count) + " outer values, the node has too few inputs");
      std::vector<int> idx(count);
      for (int i = 0; i < count; ++i) idx[i] = at + i;
      return idx;
    }
    at += count;
  }
  return {};
}

std::vector<Tensor> op_helpers::run_subgraph_nodes(const Graph& s) {
  std::vector<Tensor> vals(s.values.size());
  auto at = [&](int v) -> const Tensor* { return s.values[v].constant ? &*s.values[v].constant : &vals[v]; };
  for (const Node& m : s.nodes) {
    std::vector<const Tensor*> mi;
    for (int v : m.inputs) mi.push_back(v >= 0 ? at(v) : nullptr);
    std::vector<Tensor> mo;
    for (int o : m.outputs) mo.push_back(o >= 0 ? Tensor(s.values[o].dtype, s.values[o].shape) : Tensor());
    const OpDef& def = op_or_throw(m);
    check_string_support(s, m, def);  // as the ref backend checks each node
    def.reference(m, mi, mo);
    for (size_t k = 0; k < m.outputs.size(); ++k)
      if (m.outputs[k] >= 0) vals[m.outputs[k]] = std::move(mo[k]);
  }
  return vals;
}

void op_helpers::infer_subgraph(Graph& s, const Node& n, const char* part) {
  try {
    infer_shapes(s, true);
  } catch (const NeedsConstant& e) {
    // Still a NeedsConstant (the Session may specialise on the value), naming where it is.
    throw NeedsConstant(n.label() + ": in its " + part + ": " + e.message(), e.value(), e.contents());
  } catch (const Unsupported&) {
    throw;
  } catch (const Error& e) {
    throw Error("shape", n.label() + ": in its " + part + ": " + e.what());
  }
}

}  // namespace fusor
