// Sequence ops (ONNX operator spec: SequenceEmpty-11, SequenceConstruct-11, SequenceInsert-11,
// SequenceErase-11, SequenceAt-11, SequenceLength-11, ConcatFromSequence-11,
// SplitToSequence-11/24, SequenceMap-17) and Optional-15.
//
// fusor has no sequence values at run time. A sequence is resolved while shape inference runs
// in order (OpDef::expand): the op that makes one records its element values in
// Value::sequence and leaves no node; an op that reads one becomes tensor ops over those
// elements (SequenceAt an Identity, ConcatFromSequence a Concat, SplitToSequence a Split,
// SequenceMap its body inlined once per element), so what remains fuses and runs on every
// backend. The structure must be static: a position or a scalar split fed at run time is
// specialised on (NeedsConstant, as Reshape's shape is: runtime/session.h), and a sequence
// carried through Loop / Scan, fed as a graph input or returned as a graph output is refused
// with one line naming the value.
//
// Positions (SequenceInsert: [-n, n]; SequenceErase / SequenceAt: [-n, n - 1]) count from the
// back when negative, as the spec and its reference (onnx/reference/ops/op_sequence_*.py) do;
// one out of range is Error("shape").
#include <algorithm>

#include "ir/ops/op_helpers.h"
#include "ir/passes.h"

namespace fusor {
namespace {

using namespace op_helpers;

// Each element is a value of the graph (SplitToSequence's a Split output, SequenceMap's a copy of
// the body): a hostile dim (a [2^31, 0] tensor split along axis 0) must be an error, not a hang.
constexpr int64_t kMaxSequenceLength = int64_t{1} << 16;
constexpr int64_t kMaxMappedNodes = int64_t{1} << 16;  // SequenceMap: elements x body nodes
// ... and across the graph: a split inside a mapped body or an unrolled loop, or a map inside a
// map, multiplies past the bounds above (20,000 bodies each splitting 60,000 tensors filled the
// host's memory), so a split or a map that would grow the graph past this many values is refused.
constexpr int64_t kMaxGraphValues = int64_t{1} << 20;

void check_growth(const Graph& g, const Node& n, int64_t added) {
  if (static_cast<int64_t>(g.values.size()) + added > kMaxGraphValues)
    throw Error("shape", n.label() + ": resolving its sequence would grow the graph to more than " + std::to_string(kMaxGraphValues) +
                             " values (" + std::to_string(g.values.size()) + " now, " + std::to_string(added) + " more)");
}

const std::vector<int>& elements_of(const Graph& g, const Node& n, int i) {
  if (!n.has_input(static_cast<size_t>(i)))
    throw Error("shape", n.label() + ": input " + std::to_string(i) + " (a sequence) is missing");
  const Value& v = g.values[n.inputs[i]];
  if (!v.sequence)
    throw Error("shape", n.label() + ": input " + std::to_string(i) + " '" + printable(v.name) + "' is a tensor, not a sequence");
  return *v.sequence;
}

// Value out of node n becomes a sequence of these elements (elements' dtype dt).
void make_sequence(Graph& g, const Node& n, size_t out, std::vector<int> elements, DType dt) {
  if (out >= n.outputs.size() || n.outputs[out] < 0) return;
  Value& v = g.values[n.outputs[out]];
  v.sequence = std::move(elements);
  v.dtype = dt;
  v.shape.clear();
  v.shape_known = false;
}

// The node's integer scalar input i (a position or a split), specialised on when not constant.
int64_t scalar_input(const Graph& g, const Node& n, int i, const char* what) {
  const Value& v = g.values[n.inputs[i]];
  if (!v.constant)
    throw NeedsConstant(n.label() + ": " + what + " '" + printable(v.name) + "' must be known when the graph is specialised", v.name);
  const Tensor& t = *v.constant;
  if (!dtype_is_int(t.dtype()) || t.numel() != 1)
    throw Error("shape", n.label() + ": " + what + " must be one integer, got " + dtype_name(t.dtype()) + " " + shape_str(t.shape()));
  return t.get_int(0);
}

// Position p of a sequence of n elements, the spec's range [-n, n - 1 + extra].
size_t position(const Node& n, int64_t p, size_t size, int64_t extra) {
  const int64_t s = static_cast<int64_t>(size);
  if (p < -s || p > s - 1 + extra)
    throw Error("shape", n.label() + ": position " + std::to_string(p) + " is out of range for a sequence of " + std::to_string(size) +
                             (size == 1 ? " tensor" : " tensors"));
  return static_cast<size_t>(p < 0 ? p + s : p);
}

DType common_dtype(const Graph& g, const Node& n, const std::vector<int>& values) {
  DType dt = DType::undefined;
  for (int v : values) {
    const DType t = g.values[v].dtype;
    if (dt != DType::undefined && t != dt)
      throw Error("shape", n.label() + ": a sequence holds one dtype, got " + dtype_name(dt) + " and " + dtype_name(t));
    dt = t;
  }
  return dt;
}

// The node leaves nothing behind (its sequence output is recorded in Value::sequence).
void no_node(Graph& g, size_t index) { RewriteNodes{g, g.nodes[index].name, {}}.replace(index); }

bool empty_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  // dtype: a TensorProto.DataType (default FLOAT).
  const DType dt = dtype_from_onnx(static_cast<int>(n.attr_i("dtype", 1)));
  if (dt == DType::undefined) throw Error("shape", n.label() + ": unsupported dtype " + std::to_string(n.attr_i("dtype", 1)));
  make_sequence(g, n, 0, {}, dt);
  no_node(g, index);
  return true;
}

bool construct_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  std::vector<int> elems;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i] < 0) throw Error("shape", n.label() + ": input " + std::to_string(i) + " is missing");
    if (g.values[n.inputs[i]].sequence) throw Error("shape", n.label() + ": a sequence of sequences is not supported");
    elems.push_back(n.inputs[i]);
  }
  make_sequence(g, n, 0, elems, common_dtype(g, n, elems));
  no_node(g, index);
  return true;
}

bool insert_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  std::vector<int> elems = elements_of(g, n, 0);
  if (!n.has_input(1)) throw Error("shape", n.label() + ": input 1 (the tensor) is missing");
  const int t = n.inputs[1];
  if (g.values[t].sequence) throw Error("shape", n.label() + ": a sequence of sequences is not supported");
  const DType dt = g.values[n.inputs[0]].dtype;
  if (g.values[t].dtype != dt)
    throw Error("shape", n.label() + ": inserts a " + dtype_name(g.values[t].dtype) + " tensor into a sequence of " + dtype_name(dt));
  const size_t at = n.has_input(2) ? position(n, scalar_input(g, n, 2, "position"), elems.size(), 1) : elems.size();
  elems.insert(elems.begin() + static_cast<std::ptrdiff_t>(at), t);
  make_sequence(g, n, 0, std::move(elems), dt);
  no_node(g, index);
  return true;
}

bool erase_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  std::vector<int> elems = elements_of(g, n, 0);
  if (elems.empty()) throw Error("shape", n.label() + ": erases from an empty sequence");
  const size_t at = n.has_input(1) ? position(n, scalar_input(g, n, 1, "position"), elems.size(), 0) : elems.size() - 1;
  elems.erase(elems.begin() + static_cast<std::ptrdiff_t>(at));
  make_sequence(g, n, 0, std::move(elems), g.values[n.inputs[0]].dtype);
  no_node(g, index);
  return true;
}

bool at_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  const std::vector<int>& elems = elements_of(g, n, 0);
  if (!n.has_input(1)) throw Error("shape", n.label() + ": input 1 (position) is missing");
  const size_t at = position(n, scalar_input(g, n, 1, "position"), elems.size(), 0);
  RewriteNodes w{g, n.name, {}};
  w.op("Identity", {elems[at]}, {}, out_of(n, 0));
  w.replace(index);
  return true;
}

bool length_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  Tensor len(DType::i64, {});
  len.set_int(0, static_cast<int64_t>(elements_of(g, n, 0).size()));
  RewriteNodes w{g, n.name, {}};
  w.op("Identity", {g.add_constant(g.unique_name(n.name + "/length"), std::move(len))}, {}, out_of(n, 0));
  w.replace(index);
  return true;
}

bool concat_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  const std::vector<int> elems = elements_of(g, n, 0);
  if (elems.empty()) throw Error("shape", n.label() + ": concatenates an empty sequence");
  if (!n.has_attr("axis")) throw Error("shape", n.label() + ": attribute 'axis' is required");
  int64_t axis = n.attr_i("axis", 0);
  RewriteNodes w{g, n.name, {}};
  std::vector<int> parts = elems;
  if (n.attr_i("new_axis", 0) != 0) {
    // Stacked along a new axis: its range is one wider than the elements' rank.
    const int64_t r = static_cast<int64_t>(g.values[elems[0]].shape.size());
    if (axis < -r - 1 || axis > r)
      throw Error("shape", n.label() + ": axis " + std::to_string(axis) + " is out of range for new_axis over rank " + std::to_string(r));
    if (axis < 0) axis += r + 1;
    for (int& p : parts) p = w.op("Unsqueeze", {p, w.ints({axis})});
  }
  w.op("Concat", parts, {{"axis", axis}}, out_of(n, 0));
  w.replace(index);
  return true;
}

bool split_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  const Value& x = g.values[n.inputs[0]];
  if (x.sequence) throw Error("shape", n.label() + ": input 0 is a sequence, not a tensor");
  const DType dt = x.dtype;  // x dangles once the Split's outputs are added to g.values
  const int64_t r = static_cast<int64_t>(x.shape.size());
  int64_t axis = n.attr_i("axis", 0);
  if (axis < -r || axis >= r) throw Error("shape", n.label() + ": axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  if (axis < 0) axis += r;
  const int64_t dim = x.shape[static_cast<size_t>(axis)];
  RewriteNodes w{g, n.name, {}};
  std::vector<int> elems;
  int split_values = -1;  // a 1-D split input: Split reads it (specialised on there when fed)
  std::vector<int64_t> sizes;
  bool squeeze = false;
  const auto check_count = [&](int64_t count) {
    if (count > kMaxSequenceLength)
      throw Error("shape", n.label() + ": would make a sequence of " + std::to_string(count) + " tensors (at most " +
                               std::to_string(kMaxSequenceLength) + ")");
  };
  if (!n.has_input(1)) {
    check_count(dim);
    sizes.assign(static_cast<size_t>(dim), 1);
    squeeze = n.attr_i("keepdims", 1) == 0;
  } else {
    const Value& s = g.values[n.inputs[1]];
    if (s.sequence) throw Error("shape", n.label() + ": input 1 (split) is a sequence, not a tensor");
    if (!dtype_is_int(s.dtype)) throw Error("shape", n.label() + ": split must be int32 or int64, got " + dtype_name(s.dtype));
    if (s.shape.size() > 1) throw Error("shape", n.label() + ": split must be a scalar or 1-D, got " + shape_str(s.shape));
    if (s.shape.empty()) {
      // Chunks of `split`, the last one smaller when it does not divide the axis.
      const int64_t chunk = scalar_input(g, n, 1, "split");
      if (chunk <= 0) throw Error("shape", n.label() + ": split must be positive, got " + std::to_string(chunk));
      check_count(dim / chunk + (dim % chunk != 0));
      for (int64_t at = 0; at < dim; at += chunk) sizes.push_back(std::min(chunk, dim - at));
      // keepdims = 0 drops the axis of chunks of one, as onnxruntime does for a scalar split (the
      // spec ignores keepdims once split is given): PyTorch exports torch.unbind as
      // SplitToSequence(x, 1, keepdims = 0) and means [d1, d2], not [1, d1, d2]. Chunks longer
      // than one keep it (onnxruntime fails on them).
      squeeze = n.attr_i("keepdims", 1) == 0 && std::all_of(sizes.begin(), sizes.end(), [](int64_t z) { return z == 1; });
    } else {
      split_values = n.inputs[1];
      check_count(s.shape[0]);
      sizes.assign(static_cast<size_t>(s.shape[0]), 0);
    }
  }
  check_growth(g, n, static_cast<int64_t>(sizes.size()) * (squeeze ? 2 : 1));
  if (!sizes.empty()) {
    const int sv = split_values >= 0 ? split_values : w.ints(sizes);
    w.op("Split", {n.inputs[0], sv}, {{"axis", axis}});
    Node& split = w.nodes.back();
    for (size_t k = 1; k < sizes.size(); ++k) split.outputs.push_back(g.add_value(split.name + ":" + std::to_string(k)));
    elems = split.outputs;
    if (squeeze)
      for (int& e : elems) e = w.op("Squeeze", {e, w.ints({axis})});
  }
  make_sequence(g, n, 0, elems, dt);
  w.replace(index);
  return true;
}

// SequenceMap-17: body applied to element i of every sequence input (a tensor input is passed
// whole each time); body output k's values form output sequence k.
bool map_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  const Graph* body = n.attr_g("body");
  if (!body) throw Error("shape", n.label() + ": attribute 'body' (a graph) is missing");
  // The body has one formal input per input of the node; outer values it reads follow them.
  const size_t own = body->formal_inputs >= 0 ? static_cast<size_t>(body->formal_inputs) : body->inputs.size();
  const std::vector<int> captured = captured_inputs(n, "body", static_cast<int>(own));
  if (n.inputs.size() != own + captured.size())  // as onnxruntime: an input the body does not take is an invalid model
    throw Error("shape", n.label() + ": has " + std::to_string(n.inputs.size() - captured.size()) + " inputs, its body takes " +
                             std::to_string(own));
  const size_t count = elements_of(g, n, 0).size();
  if (static_cast<int64_t>(count) * std::max<int64_t>(1, static_cast<int64_t>(body->nodes.size())) > kMaxMappedNodes)
    throw Error("shape", n.label() + ": inlining its body for " + std::to_string(count) + " elements would make more than " +
                             std::to_string(kMaxMappedNodes) + " nodes");
  check_growth(g, n, static_cast<int64_t>(count) * static_cast<int64_t>(body->values.size()));
  for (size_t i = 1; i < own; ++i)
    if (n.inputs[i] >= 0 && g.values[n.inputs[i]].sequence && g.values[n.inputs[i]].sequence->size() != count)
      throw Error("shape", n.label() + ": its sequences differ in length (" + std::to_string(count) + " and " +
                               std::to_string(g.values[n.inputs[i]].sequence->size()) + ")");
  if (body->outputs.size() < n.outputs.size())
    throw Error("shape", n.label() + ": the body has " + std::to_string(body->outputs.size()) + " outputs, the node " +
                             std::to_string(n.outputs.size()));
  RewriteNodes w{g, n.name, {}};
  std::vector<std::vector<int>> outs(n.outputs.size());
  for (size_t e = 0; e < count; ++e) {
    std::vector<int> bound;
    for (size_t i = 0; i < own; ++i) {
      if (n.inputs[i] < 0) throw Error("shape", n.label() + ": input " + std::to_string(i) + " is missing");
      const Value& v = g.values[n.inputs[i]];
      bound.push_back(v.sequence ? (*v.sequence)[e] : n.inputs[i]);
      // As Loop's bind_body and onnxruntime: a body input declared in another dtype is an invalid model.
      const DType declared = body->values[body->inputs[i]].dtype, given = g.values[bound.back()].dtype;
      if (declared != DType::undefined && given != DType::undefined && declared != given)
        throw Error("shape", n.label() + ": body input '" + printable(body->values[body->inputs[i]].name) + "' is declared " +
                                 dtype_name(declared) + ", bound to " + dtype_name(given));
      // ... or with another rank.
      const Value &dv = body->values[body->inputs[i]], &gv = g.values[bound.back()];
      if ((!dv.shape.empty() || dv.shape_known) && gv.shape_known && dv.shape.size() != gv.shape.size())
        throw Error("shape", n.label() + ": body input '" + printable(dv.name) + "' is declared rank " + std::to_string(dv.shape.size()) +
                                 " " + shape_str(dv.shape) + ", bound to " + shape_str(gv.shape));
    }
    for (int c : captured) bound.push_back(n.inputs[static_cast<size_t>(c)]);
    RewriteNodes it{g, n.name + "/" + std::to_string(e), {}};
    const std::vector<int> res = it.inline_graph(*body, bound);
    w.nodes.insert(w.nodes.end(), it.nodes.begin(), it.nodes.end());
    for (size_t k = 0; k < outs.size(); ++k) outs[k].push_back(res[k]);
  }
  // The element dtypes are known once the inlined nodes infer; an empty map's are the body's.
  for (size_t k = 0; k < outs.size(); ++k) make_sequence(g, n, k, outs[k], g.values[body->outputs[k]].dtype);
  w.replace(index);
  return true;
}

// The outer values node m's graph attributes read: the last of its inputs (captured_inputs).
size_t captured_count(const Node& m) {
  size_t count = 0;
  for (const auto& [k, v] : m.attrs)
    if (const auto* b = std::get_if<std::shared_ptr<const Graph>>(&v); b && *b)
      count += (*b)->inputs.size() - static_cast<size_t>(std::max(0, (*b)->formal_inputs));
  return count;
}

// Optional-15: an optional holding its input is that tensor; an empty one becomes an omitted
// input of every reader (how ONNX writes an absent optional: OptionalHasElement gives false).
bool optional_expand(Graph& g, size_t index) {
  const Node n = g.nodes[index];
  const int out = out_of(n, 0);
  if (n.has_input(0)) {
    if (g.values[n.inputs[0]].sequence) throw Error("shape", n.label() + ": an optional sequence is not supported");
    RewriteNodes w{g, n.name, {}};
    w.op("Identity", {n.inputs[0]}, {}, out);
    w.replace(index);
    return true;
  }
  if (out >= 0) {
    if (std::find(g.outputs.begin(), g.outputs.end(), out) != g.outputs.end())
      throw Error("shape", n.label() + ": an empty optional as a graph output is not supported");
    for (Node& m : g.nodes) {
      // A subgraph (If branch, Loop / SequenceMap body) reads it through one of its graph
      // inputs, which an omitted input cannot stand for (OptionalHasElement there saw an
      // element, an If or Loop read value -1): refused.
      const size_t own = m.inputs.size() - std::min(m.inputs.size(), captured_count(m));
      for (size_t i = 0; i < m.inputs.size(); ++i) {
        if (m.inputs[i] != out) continue;
        if (i >= own)
          throw Error("shape", n.label() + ": an empty optional read inside a subgraph (of " + m.label() + ") is not supported");
        m.inputs[i] = -1;
      }
    }
  }
  no_node(g, index);
  return true;
}

void unexpanded_infer(InferContext& ctx) { ctx.fail("is resolved when its inputs are known (a sequence op)"); }
void unexpanded_ref(const Node& n, const Ins&, Outs&) { ref_fail(n, "runs only as the tensor ops it expands into (a sequence op)"); }

void reg(const std::string& name, int min_in, int max_in, int max_out, std::function<bool(Graph&, size_t)> expand,
         uint32_t optional_inputs = 0) {
  OpDef d = table_entry(name, min_in, max_in, unexpanded_infer, unexpanded_ref, max_out);
  d.expand = std::move(expand);
  d.optional_inputs = optional_inputs;
  d.min_outputs = 1;
  register_op(std::move(d));
}

}  // namespace

bool expand_sequence_identity(Graph& g, size_t index) {
  const Node& n = g.nodes[index];
  if (n.op_type != "Identity" || !n.domain.empty() || !n.has_input(0) || !g.values[n.inputs[0]].sequence) return false;
  const Value& in = g.values[n.inputs[0]];
  make_sequence(g, n, 0, *in.sequence, in.dtype);
  no_node(g, index);
  return true;
}

void refuse_sequence_inputs(const Graph& g, const Node& n) {
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (n.inputs[i] >= 0 && g.values[n.inputs[i]].sequence)
      throw Error("shape", n.label() + ": input " + std::to_string(i) + " '" + printable(g.values[n.inputs[i]].name) +
                               "' is a sequence, which " + n.op_type +
                               " does not take (only the sequence ops, Identity and a counted Loop small enough to unroll: at most 1,024 iterations and "
                               "4,096 nodes)");
}

void register_sequence_ops() {
  reg("SequenceEmpty", 0, 0, 1, empty_expand);
  reg("SequenceConstruct", 1, 1 << 20, 1, construct_expand);
  reg("SequenceInsert", 2, 3, 1, insert_expand);
  reg("SequenceErase", 1, 2, 1, erase_expand);
  reg("SequenceAt", 2, 2, 1, at_expand);
  reg("SequenceLength", 1, 1, 1, length_expand);
  reg("ConcatFromSequence", 1, 1, 1, concat_expand);
  reg("SplitToSequence", 1, 2, 1, split_expand);
  reg("SequenceMap", 1, 1 << 20, 1 << 20, map_expand);
  reg("Optional", 0, 1, 1, optional_expand);
}

}  // namespace fusor
