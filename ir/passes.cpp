#include "ir/passes.h"

#include <algorithm>
#include <limits>

#include "ir/op_table.h"
#include "ir/type_constraints.h"

namespace fusor {

void bind_input_shapes(Graph& g, const std::map<std::string, Shape>& shapes) {
  for (int id : g.inputs) {
    Value& v = g.values[id];
    auto it = shapes.find(v.name);
    if (it == shapes.end()) {
      if (!v.shape_known) {
        // Unbound symbolic dims default to 1 (batch 1), the common export convention.
        for (auto& d : v.shape)
          if (d < 0) d = 1;
        v.shape_known = true;
      }
      if (const std::string why = shape_bounds_problem(v.shape); !why.empty())
        throw Error("shape", "input '" + printable(v.name) + "' has shape " + shape_str_short(v.shape) + ": " + why);
      continue;
    }
    const Shape& s = it->second;
    // The same bound shape inference puts on every value: no negative dims, at most 2^56
    // elements (so byte counts cannot overflow either).
    for (auto d : s)
      if (d < 0) throw Error("shape", "input '" + printable(v.name) + "' has a negative dimension: " + shape_str_short(s));
    if (const std::string why = shape_bounds_problem(s); !why.empty())
      throw Error("shape", "input '" + printable(v.name) + "' has shape " + shape_str_short(s) + ": " + why);
    if (!v.shape.empty() || v.shape_known) {
      if (v.shape.size() != s.size())
        throw Error("shape", "input '" + printable(v.name) + "' has rank " + std::to_string(v.shape.size()) + " in the model, got " +
                                 shape_str(s));
      for (size_t i = 0; i < s.size(); ++i)
        if (v.shape[i] >= 0 && v.shape[i] != s[i])
          throw Error("shape", "input '" + printable(v.name) + "' expects shape " + shape_str(v.shape) + ", got " + shape_str(s));
    }
    v.shape = s;
    v.shape_known = true;
  }
}

// Folding evaluates the reference on constant inputs; skip results this large so a graph
// does not balloon (they stay runtime nodes), and stop folding big results once a graph has
// folded its budget, so a hostile chain of huge constant ops costs a bounded time at load
// (what is not folded runs as kernels). The budget is twice the constant elements the model
// brought (folding weights - Transpose, Cast, DequantizeLinear - is work the file paid for),
// at least kMinFoldBudget: a 300-byte model whose Range or Expand makes 10^7 elements folds
// none of them (`ref` evaluates ~3 M elements/s per op). Shape-sized results always fold.
static constexpr int64_t kMaxFoldElements = int64_t{1} << 26;
static constexpr int64_t kMinFoldBudget = int64_t{1} << 20;
static constexpr int64_t kAlwaysFoldElements = int64_t{1} << 16;

// While specialising on values computed inside the model (Graph::known_by_name set), contractions
// whose folding would cost more than this many multiply-adds stay runtime nodes: `ref` does ~1e9
// a second, and a value that sets a shape is computed anyway when it is needed (runtime/
// session.cpp runs its cone where the model runs). A detector's heads over backbone features
// known at specialisation were folded on ref. A model's own constant contractions (a LoRA merge
// of two weights) still fold once at load.
static constexpr int64_t kMaxFoldMacs = int64_t{1} << 26;

// Multiply-adds of folding contraction n (Conv / ConvTranspose / MatMul / Gemm and their
// integer and quantized forms) producing out_elems elements; 0 for other ops.
static int64_t fold_macs(const Graph& g, const Node& n, int64_t out_elems) {
  const auto shape_of = [&](size_t k) -> const Shape* {
    return k < n.inputs.size() && n.inputs[k] >= 0 ? &g.values[static_cast<size_t>(n.inputs[k])].shape : nullptr;
  };
  const auto per_output = [&](size_t w, bool transposed) -> int64_t {  // weight elements per output channel
    const Shape* ws = shape_of(w);
    const Shape* xs = shape_of(0);
    if (!ws || ws->empty() || (*ws)[0] <= 0) return 0;
    const int64_t per = shape_numel(*ws) / (*ws)[0];
    if (!transposed) return per;
    // ConvTranspose: every input element meets per weights; as macs per output, in / out times.
    return xs && out_elems > 0 ? static_cast<int64_t>(static_cast<double>(shape_numel(*xs)) * per / out_elems) : 0;
  };
  const auto inner = [&](size_t a, bool trans) -> int64_t {
    const Shape* as = shape_of(a);
    if (!as || as->empty()) return 0;
    return trans && as->size() >= 2 ? (*as)[as->size() - 2] : as->back();
  };
  if (n.op_type == "Einsum") {  // every combination of the equation's labels is one multiply-add
    std::vector<Shape> shapes;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (!shape_of(i)) return 0;
      shapes.push_back(*shape_of(i));
    }
    EinsumLabels l;
    try {
      l = einsum_labels(n.attr_s("equation", ""), shapes, n.label());
    } catch (const Error&) {
      return 0;  // a malformed equation is reported by the fold itself
    }
    int64_t macs = 1;
    for (int64_t s : l.size)
      if (s >= 0) macs = s > 0 && macs > std::numeric_limits<int64_t>::max() / s ? std::numeric_limits<int64_t>::max() : macs * s;
    return macs;
  }
  int64_t k = 0;
  if (n.op_type == "Conv" || n.op_type == "ConvInteger") k = per_output(1, false);
  else if (n.op_type == "QLinearConv") k = per_output(3, false);
  else if (n.op_type == "ConvTranspose") k = per_output(1, true);
  else if (n.op_type == "MatMul" || n.op_type == "MatMulInteger" || n.op_type == "QLinearMatMul") k = inner(0, false);
  else if (n.op_type == "Gemm") k = inner(0, n.attr_i("transA", 0) != 0);
  return k > 0 && out_elems > 0 && k > std::numeric_limits<int64_t>::max() / out_elems ? std::numeric_limits<int64_t>::max() : k * out_elems;
}

// Whether node n computes without any run-time check that could raise: OpDef::never_raises,
// element-wise ops, reductions, views (their parameters are static by now), a lookup of no
// indices. Another lookup (Gather, ScatterND...) may raise: an index out of range.
static bool cannot_raise(const Graph& g, const OpDef& def, const Node& n) {
  if ((n.op_type == "Gather" || n.op_type == "GatherElements" || n.op_type == "GatherND") && n.has_input(1)) {
    const Value& idx = g.values[static_cast<size_t>(n.inputs[1])];
    if (idx.constant && idx.constant->numel() == 0) return true;  // looks nothing up
  }
  return def.never_raises || def.scalar.has_value() || def.reduce.has_value() || def.is_view;
}

// Whether n has an output and every one it has is a tensor of known dtype with no elements.
static bool outputs_empty(const Graph& g, const Node& n) {
  bool any = false;
  for (int o : n.outputs) {
    if (o < 0) continue;
    const Value& v = g.values[static_cast<size_t>(o)];
    if (v.dtype == DType::undefined || v.sequence || v.constant || shape_numel(v.shape) != 0) return false;
    any = true;
  }
  return any;
}

// Evaluates node n (all inputs constant) with its reference; its outputs become constants.
static void fold_node(Graph& g, Node& n) {
  std::vector<const Tensor*> in;
  for (int i : n.inputs) in.push_back(i >= 0 ? &*g.values[i].constant : nullptr);
  std::vector<Tensor> out;
  for (int o : n.outputs) out.push_back(o >= 0 ? Tensor(g.values[o].dtype, g.values[o].shape) : Tensor());
  if (!all_outputs_empty(out)) call_op_fn(n, "ref", [&] { op_or_throw(n).reference(n, in, out); });
  for (size_t k = 0; k < n.outputs.size(); ++k)
    if (n.outputs[k] >= 0) g.values[n.outputs[k]].constant = std::move(out[k]);
}

void infer_shapes(Graph& g, bool fold) {
  bool expanded = false;
  std::map<int, size_t> deferred;  // value -> its unfolded weight DequantizeLinear node
  int64_t folded = 0, brought = 0;
  for (const Value& v : g.values)
    if (v.constant) brought += v.constant->numel();
  const int64_t fold_budget = std::clamp(2 * brought, kMinFoldBudget, kMaxFoldElements);
  int stop_value = -1;  // Graph::stop_after, once its producer is inferred
  std::vector<char> may_raise(g.values.size(), 0);  // per value: may its computation raise at run time
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (stop_value >= 0) {
      g.nodes.resize(i);
      g.outputs = {stop_value};
      break;
    }
    const OpDef& def = op_or_throw(g.nodes[i]);
    int ni = g.nodes[i].num_inputs();
    if (ni < def.min_inputs || ni > def.max_inputs)
      throw Error("onnx", g.nodes[i].label() + ": expects " + std::to_string(def.min_inputs) + ".." +
                              std::to_string(def.max_inputs) + " inputs, got " + std::to_string(ni));
    for (int k = 0; k < def.min_inputs; ++k)
      if (!g.nodes[i].has_input(k) && !(k < 32 && (def.optional_inputs >> k & 1u)))
        throw Error("onnx", g.nodes[i].label() + ": input " + std::to_string(k) + " is required, got an empty name");
    // The schema's type constraints: before an expansion replaces the node, otherwise after the
    // op's own inference (whose messages are more specific where it has them).
    auto check_types = [&g](Node& n) {
      if (!n.check_types) return;
      n.check_types = false;
      check_onnx_type_constraints(g, n);
    };
    if (def.expand) check_types(g.nodes[i]);
    bool expanded_here = false;
    call_op_fn(g.nodes[i].label(), "shape", [&] { expanded_here = expand_sequence_identity(g, i); });
    if (!expanded_here && def.expand) call_op_fn(g.nodes[i].label(), "shape", [&] { expanded_here = def.expand(g, i); });
    if (!expanded_here) refuse_sequence_inputs(g, g.nodes[i]);
    if (expanded_here) {  // the replacement nodes are inferred from index i on
      expanded = true;
      --i;
      continue;
    }
    Node& n = g.nodes[i];
    // More outputs than the op defines (Relu with two) is an invalid model, not zeros.
    if (static_cast<int>(n.outputs.size()) > def.max_outputs)
      throw Error("onnx", n.label() + ": has " + std::to_string(n.outputs.size()) + " outputs, the op defines at most " +
                              std::to_string(def.max_outputs));
    // A used output after an omitted output 0: ops whose output 0 is required write it.
    if (!n.outputs.empty() && n.outputs[0] < 0 && !def.optional_first_output &&
        std::any_of(n.outputs.begin() + 1, n.outputs.end(), [](int o) { return o >= 0; }))
      throw Error("onnx", n.label() + ": output 0 is required, got an empty name");
    InferContext ctx(g, n);
    call_op_fn(n, "shape", [&] { def.infer(ctx); });
    check_types(n);
    int outputs_known = 0, outputs_used = 0;  // outputs that known_by_name made constants, of the used ones
    if (!g.known_by_name.empty() || !g.stop_after.empty())
      for (int& o : n.outputs) {
        if (o < 0) continue;
        ++outputs_used;
        if (g.values[o].name == g.stop_after) stop_value = o;
        const auto known = g.known_by_name.find(g.values[o].name);
        if (known == g.known_by_name.end()) continue;
        const Value& v = g.values[o];
        if (known->second.dtype() != v.dtype || known->second.shape() != v.shape)
          throw Error("shape", n.label() + ": output '" + printable(v.name) + "' is " + dtype_name(v.dtype) + " " + shape_str(v.shape) +
                                   ", its computed value " + dtype_name(known->second.dtype()) + " " + shape_str(known->second.shape()));
        // The producer writes a fresh (dead) value; the named one is the computed constant.
        const int named = o;
        // (No unique_name: its counter would rename every value expansions make after this one.)
        o = g.add_value(g.values[named].name + "/computed", g.values[named].dtype, g.values[named].shape, true);
        g.values[named].constant = known->second;
        g.values[named].producer = -1;
        ++outputs_known;
      }
    // Whether an output can raise at run time (an index out of range, here or upstream).
    bool raises = !cannot_raise(g, def, n);
    for (int v : n.inputs)  // (a constant was computed at load: nothing of it runs)
      raises = raises || (v >= 0 && !g.values[static_cast<size_t>(v)].constant && static_cast<size_t>(v) < may_raise.size() && may_raise[static_cast<size_t>(v)]);
    if (may_raise.size() < g.values.size()) may_raise.resize(g.values.size(), 0);
    for (int o : n.outputs)
      if (o >= 0) may_raise[static_cast<size_t>(o)] = raises;
    // Every output already known: folding would compute only the dead fresh values.
    if (!fold || !def.reference || (outputs_used > 0 && outputs_known == outputs_used)) continue;
    // A string node whose op does not compute on strings is left for the backend to refuse by name.
    if (!def.strings && touches_strings(g, n)) continue;
    // Every output empty: nothing to compute, whatever the inputs (RetinaNet with no detection
    // ran its 27 box-head convolutions for Gathers of zero anchors); what fed only it is dead.
    // Unless something it reads may raise: ONNX makes an index out of range an error even
    // where the result is empty (GatherFusion.ALookupBroadcastIntoAnEmptyResultIsStillChecked).
    if (!raises && outputs_empty(g, n)) {
      for (int o : n.outputs)
        if (o >= 0) g.values[o].constant = Tensor(g.values[o].dtype, g.values[o].shape);
      continue;
    }
    // Shape and Size depend only on the (static) input shape, not its values.
    if ((n.op_type == "Shape" || n.op_type == "Size") && n.outputs.size() == 1 && n.outputs[0] >= 0) {
      const Shape& s = g.values[n.inputs[0]].shape;
      int64_t r = static_cast<int64_t>(s.size());
      Tensor t(DType::i64, g.values[n.outputs[0]].shape);
      if (n.op_type == "Size") {
        t.set_int(0, shape_numel(s));
      } else {
        int64_t start = n.attr_i("start", 0), end = n.attr_i("end", r);
        if (start < 0) start += r;
        if (end < 0) end += r;
        start = std::clamp<int64_t>(start, 0, r);
        end = std::clamp<int64_t>(end, 0, r);
        for (int64_t i = start; i < end; ++i) t.set_int(i - start, s[i]);
      }
      g.values[n.outputs[0]].constant = std::move(t);
      continue;
    }
    // A weight dequantization stays a node (weight_dequant_matmuls), unless a reader folds
    // after all (a MatMul of two constants): then it is evaluated first, below.
    if (!weight_dequant_matmuls(g, i).empty()) {
      deferred[n.outputs[0]] = i;
      continue;
    }
    // Only the product itself resolves a deferral (Gemm's Transpose of the weight stays a view).
    const bool product = n.op_type == "MatMul" || n.op_type == "Gemm";
    bool all_const = true;
    for (int i : n.inputs)
      if (i >= 0 && !g.values[i].constant && !(product && deferred.count(i))) all_const = false;
    if (!all_const) continue;
    int64_t out_elems = 0;
    for (int o : n.outputs)
      if (o >= 0) out_elems += shape_numel(g.values[o].shape);
    if (out_elems > kMaxFoldElements || (out_elems > kAlwaysFoldElements && folded + out_elems > fold_budget)) continue;
    if (!g.known_by_name.empty() && fold_macs(g, n, out_elems) > kMaxFoldMacs) continue;  // (before its deferred weights fold)
    for (int v : n.inputs)
      if (v >= 0 && !g.values[v].constant) fold_node(g, g.nodes[deferred[v]]);
    folded += out_elems;
    fold_node(g, n);
  }
  if (stop_value >= 0) g.outputs = {stop_value};
  // As onnxruntime ("Type (tensor(float)) of output arg (y) ... does not match expected type"):
  // a graph output computed in another dtype than the model declares is an invalid model.
  for (const auto& [id, want] : g.declared_output_dtypes) {
    const Value& v = g.values[static_cast<size_t>(id)];
    if (v.dtype == DType::undefined || v.dtype == want || std::find(g.outputs.begin(), g.outputs.end(), id) == g.outputs.end())
      continue;
    std::string by = "but it is computed as";
    for (const Node& n : g.nodes)
      if (std::find(n.outputs.begin(), n.outputs.end(), id) != n.outputs.end()) by = "but " + n.label() + " computes";
    throw Error("onnx", "graph output '" + printable(v.name) + "' is declared " + dtype_name(want) + ", " + by + " " + dtype_name(v.dtype));
  }
  if (fold) {
    // Nodes whose outputs all became constants are no longer needed.
    std::vector<Node> kept;
    for (auto& n : g.nodes) {
      bool all_const = true;
      for (int o : n.outputs)
        if (o >= 0 && !g.values[o].constant) all_const = false;
      if (!all_const) kept.push_back(std::move(n));
      else  // folded from what it reads of a computed value: its shape (Shape, Size)
        for (int v : n.inputs)
          if (v >= 0 && !g.values[static_cast<size_t>(v)].constant) g.values[static_cast<size_t>(v)].shape_read = true;
    }
    g.nodes = std::move(kept);
    g.reindex_producers();
  } else if (expanded) {
    g.reindex_producers();
  }
}

void eliminate_dead_code(Graph& g) {
  std::vector<char> live(g.values.size(), 0);
  for (int o : g.outputs) live[o] = 1;
  for (int o : g.checks) live[o] = 1;
  std::vector<char> keep(g.nodes.size(), 0);
  for (int i = static_cast<int>(g.nodes.size()) - 1; i >= 0; --i) {
    const Node& n = g.nodes[i];
    bool used = false;
    for (int o : n.outputs)
      if (o >= 0 && live[o]) used = true;
    if (!used) continue;
    keep[i] = 1;
    for (int in : n.inputs)
      if (in >= 0) live[in] = 1;
  }
  std::vector<Node> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (keep[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
  // Drop constant payloads nothing refers to (value ids stay stable).
  for (size_t v = 0; v < g.values.size(); ++v)
    if (!live[v] && g.values[v].constant && g.values[v].producer < 0) g.values[v].constant.reset();
  g.reindex_producers();
}

namespace {
bool looks_up_indices(const Node& n) {
  return n.op_type == "Gather" || n.op_type == "GatherElements" || n.op_type == "GatherND" || n.op_type == "ScatterND" ||
         n.op_type == "ScatterElements" || n.op_type == "Scatter";
}
constexpr int64_t kMaxCheckStandIn = int64_t{1} << 24;  // elements of a zero-filled stand-in
}  // namespace

void add_lookup_checks(Graph& g) {
  // kept[v]: some computation whose non-empty result is returned (or checked) reads v.
  std::vector<char> kept(g.values.size(), 0), computes(g.nodes.size(), 0);
  for (int o : g.outputs) kept[static_cast<size_t>(o)] = 1;
  for (int o : g.checks) kept[static_cast<size_t>(o)] = 1;
  for (int i = static_cast<int>(g.nodes.size()) - 1; i >= 0; --i) {
    const Node& n = g.nodes[static_cast<size_t>(i)];
    for (int o : n.outputs)
      if (o >= 0 && kept[static_cast<size_t>(o)] && !g.values[static_cast<size_t>(o)].constant &&
          (g.values[static_cast<size_t>(o)].sequence || shape_numel(g.values[static_cast<size_t>(o)].shape) != 0))
        computes[static_cast<size_t>(i)] = 1;
    if (!computes[static_cast<size_t>(i)]) continue;
    for (int in : n.inputs)
      if (in >= 0) kept[static_cast<size_t>(in)] = 1;
  }
  std::vector<std::pair<size_t, std::vector<Node>>> inserts;  // after node index: the stand-in's nodes
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node n = g.nodes[i];
    if (computes[i] || !looks_up_indices(n) || !n.has_input(1) || n.outputs.empty() || n.outputs[0] < 0) continue;
    // Copies: adding the stand-in's values below may move g.values.
    const Value idx = g.values[static_cast<size_t>(n.inputs[1])];
    const Value& out = g.values[static_cast<size_t>(n.outputs[0])];
    const Shape data_shape = g.values[static_cast<size_t>(n.inputs[0])].shape;
    // Read only through its shape (Shape / Size folded): onnxruntime's optimizer folds those
    // and never runs the lookup either.
    if (out.constant || out.sequence || out.shape_read || idx.sequence || !idx.shape_known || shape_numel(idx.shape) <= 0) continue;
    const bool empty = shape_numel(out.shape) == 0;
    if (n.op_type.rfind("Scatter", 0) == 0) {  // run whole: it writes every element it copies anyway
      if (!empty && !idx.constant) g.checks.push_back(n.outputs[0]);
      continue;
    }
    // onnxruntime returns an empty GatherND without reading its indices (a Gather checks them).
    if (n.op_type == "GatherND" && empty) continue;
    Shape dims;  // the looked-up dims; a stand-in of them (uint8 zeros) is read at the same indices
    int rows = n.inputs[1];
    std::vector<Node> add;
    const auto node = [&](const std::string& name, const std::string& op, std::vector<int> ins, Shape shape, DType dt,
                          std::map<std::string, AttrValue> attrs) {
      Node c;
      c.name = name, c.op_type = op, c.opset = n.opset, c.inputs = std::move(ins), c.attrs = std::move(attrs);
      c.outputs = {g.add_value(g.unique_name(n.name + "/index_check"), dt, std::move(shape), true)};
      add.push_back(c);
      return c.outputs[0];
    };
    const int64_t r = static_cast<int64_t>(data_shape.size());
    if (n.op_type == "Gather" || n.op_type == "GatherElements") {
      int64_t axis = n.attr_i("axis", 0);
      if (axis < 0) axis += r;
      if (axis < 0 || axis >= r) continue;
      dims = {data_shape[static_cast<size_t>(axis)]};
    } else {  // GatherND: each index row [..., k] looks up dims b .. b + k - 1
      const int64_t b = n.attr_i("batch_dims", 0), k = idx.shape.empty() ? 0 : idx.shape.back();
      if (k <= 0 || b < 0 || b + k > r) continue;
      dims.assign(data_shape.begin() + b, data_shape.begin() + b + k);
      Tensor to(DType::i64, {2});
      to.set(0, -1.0), to.set(1, static_cast<double>(k));
      const int to_id = g.add_constant(g.unique_name(n.name + "/index_check_rows"), to);
      rows = node(g.values[static_cast<size_t>(to_id)].name, "Reshape", {n.inputs[1], to_id}, {shape_numel(idx.shape) / k, k}, DType::i64, {});
    }
    if (shape_numel(dims) > kMaxCheckStandIn || shape_numel(dims) < 0) continue;
    const int zeros = g.add_constant(g.unique_name(n.name + "/index_check_data"), Tensor(DType::u8, dims));
    const Shape rows_shape = g.values[static_cast<size_t>(rows)].shape;
    const int check = n.op_type == "GatherND" ? node(n.name, "GatherND", {zeros, rows}, {rows_shape[0]}, DType::u8, {})
                                               : node(n.name, "Gather", {zeros, rows}, rows_shape, DType::u8, {{"axis", int64_t{0}}});
    if (idx.constant) {  // known indices (the model's, or an input the Session baked): checked now
      for (Node& c : add) fold_node(g, c);
      continue;
    }
    g.checks.push_back(check);
    inserts.emplace_back(i, std::move(add));
  }
  for (auto it = inserts.rbegin(); it != inserts.rend(); ++it)
    g.nodes.insert(g.nodes.begin() + static_cast<std::ptrdiff_t>(it->first + 1), it->second.begin(), it->second.end());
  if (!inserts.empty()) g.reindex_producers();
}

void make_static(Graph& g, const std::map<std::string, Shape>& shapes, bool lookup_checks) {
  bind_input_shapes(g, shapes);
  infer_shapes(g, true);
  for (int o : g.outputs)
    if (g.values[o].sequence)
      throw Error("onnx", "graph output '" + printable(g.values[o].name) + "' is a sequence; fusor returns tensors only");
  if (lookup_checks) add_lookup_checks(g);
  eliminate_dead_code(g);
}

}  // namespace fusor
