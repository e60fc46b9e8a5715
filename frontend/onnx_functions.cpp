#include "frontend/onnx_functions.h"

#include <algorithm>
#include <functional>

#include <google/protobuf/unknown_field_set.h>
#include <onnx/defs/schema.h>

#include "frontend/onnx_import.h"
#include "ir/tensor.h"

namespace fusor {

std::pair<int64_t, int64_t> onnx_opset_range(const std::string& domain) {
  if (domain.empty()) return {1, kMaxOpset};
  if (domain == "ai.onnx.ml") return {1, 5};
  return {1, 1000};
}

int onnx_implicit_opset(const std::string& domain) { return domain == "ai.onnx.ml" ? 5 : 1; }

namespace {

// Length-delimited unknown fields `number` of m: the IR 9/10 fields libonnx 1.12's classes lack.
template <class M> std::vector<std::string> unknown_bytes(const M& m, int number) {
  std::vector<std::string> r;
  const auto& u = m.unknown_fields();
  for (int i = 0; i < u.field_count(); ++i)
    if (u.field(i).number() == number && u.field(i).type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      r.push_back(u.field(i).length_delimited());
  return r;
}

std::string node_overload(const onnx::NodeProto& n) {
  auto v = unknown_bytes(n, 8);  // NodeProto.overload (IR 10)
  return v.empty() ? std::string() : v.back();
}

std::string node_label(const std::string& name, const std::string& op) {
  return "node '" + printable(name) + "' (" + printable(op) + ")";
}

void collect_names(const onnx::GraphProto& g, std::unordered_set<std::string>& values, std::unordered_set<std::string>& nodes) {
  for (const auto& vi : g.input()) values.insert(vi.name());
  for (const auto& vi : g.output()) values.insert(vi.name());
  for (const auto& t : g.initializer()) values.insert(t.name());
  for (const auto& n : g.node()) {
    nodes.insert(n.name());
    values.insert(n.input().begin(), n.input().end());
    values.insert(n.output().begin(), n.output().end());
    for (const auto& a : n.attribute()) {
      if (a.has_g()) collect_names(a.g(), values, nodes);
      for (const auto& sg : a.graphs()) collect_names(sg, values, nodes);
    }
  }
}

// Whether the op schema of n (at the version its domain has in opsets) requires attribute attr.
bool schema_requires(const onnx::NodeProto& n, const OpsetMap& opsets, const std::string& attr) {
  const std::string d = onnx_norm_domain(n.domain());
  auto it = opsets.find(d);
  if (it == opsets.end()) return false;
  const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(n.op_type(), it->second, d.empty() ? std::string(onnx::ONNX_DOMAIN) : d);
  if (!s) return false;
  auto a = s->attributes().find(attr);
  return a != s->attributes().end() && a->second.required;
}

// One call being bound: the renaming of the body's values and the call's attributes.
struct Binding {
  const LocalFunction& f;
  const onnx::NodeProto& call;
  const std::string& call_name;
  std::unordered_map<std::string, std::string> names;  // body name -> graph name
  std::map<std::string, const onnx::AttributeProto*> given;
  std::function<std::string(const std::string&)> fresh;

  std::string rename(const std::string& n) {
    if (n.empty()) return n;  // an omitted optional input or output stays omitted
    auto it = names.find(n);
    if (it != names.end()) return it->second;
    return names[n] = fresh(call_name + "/" + n);
  }

  // Replaces n's attribute references and renames the values of its subgraphs.
  void bind(onnx::NodeProto& n) {
    for (int i = 0; i < n.attribute_size();) {
      onnx::AttributeProto& a = *n.mutable_attribute(i);
      if (!a.ref_attr_name().empty()) {
        const std::string ref = a.ref_attr_name();
        const onnx::AttributeProto* src = nullptr;
        if (auto g = given.find(ref); g != given.end()) src = g->second;
        else if (auto d = f.defaults.find(ref); d != f.defaults.end()) src = &d->second;
        if (src) {
          const std::string name = a.name();
          a = *src;  // the caller's value (its subgraph, if any, is the caller's: not renamed)
          a.set_name(name);
          a.clear_ref_attr_name();
          ++i;
          continue;
        }
        if (schema_requires(n, f.opsets, a.name()))
          throw Error("onnx", node_label(call_name, call.op_type()) + " calls function '" + printable(f.label) + "' without attribute '" +
                                  printable(ref) + "' (it has no default), which the function's " + node_label(n.name(), n.op_type()) +
                                  " requires as '" + printable(a.name()) + "'");
        n.mutable_attribute()->DeleteSubrange(i, 1);  // left out: the op's default applies (as onnx.inliner)
        continue;
      }
      if (a.has_g()) bind_graph(*a.mutable_g());
      for (auto& sg : *a.mutable_graphs()) bind_graph(sg);
      ++i;
    }
  }

  // A subgraph of a body node: every name it uses or defines is renamed the same way (its own
  // names get fresh ones, so its scoping is kept), attribute references bound.
  void bind_graph(onnx::GraphProto& g) {
    for (auto& vi : *g.mutable_input()) vi.set_name(rename(vi.name()));
    for (auto& vi : *g.mutable_output()) vi.set_name(rename(vi.name()));
    for (auto& vi : *g.mutable_value_info()) vi.set_name(rename(vi.name()));
    for (auto& t : *g.mutable_initializer()) t.set_name(rename(t.name()));
    for (auto& n : *g.mutable_node()) {
      for (auto& s : *n.mutable_input()) s = rename(s);
      for (auto& s : *n.mutable_output()) s = rename(s);
      bind(n);
    }
  }
};

}  // namespace

LocalFunctions::LocalFunctions(const onnx::ModelProto& model, const OpsetMap& model_opsets, const std::string& model_label)
    : model_label_(model_label) {
  for (const auto& fp : model.functions()) {
    LocalFunction f;
    f.proto = &fp;
    const std::string domain = onnx_norm_domain(fp.domain());
    const auto overloads = unknown_bytes(fp, 13);  // FunctionProto.overload (IR 10)
    const std::string overload = overloads.empty() ? std::string() : overloads.back();
    f.label = (domain.empty() ? std::string() : domain + ".") + fp.name() + (overload.empty() ? std::string() : ":" + overload);
    const std::string who = model_label + ": model-local function '" + printable(f.label) + "'";
    if (fp.name().empty()) throw Error("onnx", model_label + ": a model-local function has no name");
    f.opsets = model_opsets;
    std::map<std::string, int> own;
    for (const auto& op : fp.opset_import()) {
      const std::string d = onnx_norm_domain(op.domain());
      const auto range = onnx_opset_range(d);
      if (op.version() < range.first || op.version() > range.second)
        throw Error("onnx", who + ": opset_import " + (d.empty() ? "ai.onnx" : printable(d)) + " version " + std::to_string(op.version()) +
                                " is outside the supported range " + std::to_string(range.first) + ".." + std::to_string(range.second));
      f.opsets[d] = static_cast<int>(op.version());  // listed twice: the last entry holds (onnxruntime)
    }
    for (const std::string& bytes : unknown_bytes(fp, 11)) {  // attribute_proto (IR 9): attributes with defaults
      onnx::AttributeProto a;
      if (!a.ParseFromString(bytes) || a.name().empty()) throw Error("onnx", who + ": a default attribute (attribute_proto) is malformed or unnamed");
      if (!f.defaults.emplace(a.name(), a).second) throw Error("onnx", who + ": default attribute '" + printable(a.name()) + "' is given twice");
    }
    // The body's own names: inputs, and what its top-level nodes produce.
    std::unordered_set<std::string> inputs, produced;
    for (const auto& in : fp.input())
      if (in.empty() || !inputs.insert(in).second) throw Error("onnx", who + ": input '" + printable(in) + "' is empty or declared twice");
    for (const auto& n : fp.node())
      for (const auto& o : n.output())
        if (!o.empty()) produced.insert(o);
    std::unordered_set<std::string> outputs;
    for (const auto& o : fp.output()) {
      if (o.empty() || !outputs.insert(o).second) throw Error("onnx", who + ": output '" + printable(o) + "' is empty or declared twice");
      if (!produced.count(o) && !inputs.count(o))
        throw Error("onnx", who + ": output '" + printable(o) + "' is not produced by any node of its body");
    }
    for (const auto& n : fp.node())
      for (const auto& in : n.input())
        if (!in.empty() && !inputs.count(in) && !produced.count(in))
          throw Error("onnx", who + ": " + node_label(n.name(), n.op_type()) + " reads '" + printable(in) +
                                  "', which is neither an input of the function nor an output of one of its nodes");
    auto key = std::make_tuple(domain, fp.name(), overload);
    if (by_key_.count(key)) throw Error("onnx", who + " is defined more than once");
    by_key_.emplace(std::move(key), std::move(f));
  }
  if (by_key_.empty()) return;
  // Every domain a body node uses is versioned by the function's or the model's opset_import
  // (calls of local functions excepted: they are expanded, not looked up).
  for (const auto& [key, f] : by_key_)
    for (const auto& n : f.proto->node()) {
      const std::string d = onnx_norm_domain(n.domain());
      if (!f.opsets.count(d) && !find(n))
        throw Error("onnx", model_label + ": model-local function '" + printable(f.label) + "': " + node_label(n.name(), n.op_type()) +
                                " uses domain " + (d.empty() ? "ai.onnx" : printable(d)) + ", which neither its nor the model's opset_import lists");
    }
  collect_names(model.graph(), used_values_, used_nodes_);
}

const LocalFunction* LocalFunctions::find(const onnx::NodeProto& np) const {
  if (by_key_.empty()) return nullptr;
  auto it = by_key_.find(std::make_tuple(onnx_norm_domain(np.domain()), np.op_type(), node_overload(np)));
  return it == by_key_.end() ? nullptr : &it->second;
}

std::string LocalFunctions::fresh(std::unordered_set<std::string>& used, const std::string& base) {
  if (used.insert(base).second) return base;
  for (size_t& k = next_suffix_[base];;) {
    std::string s = base + "_" + std::to_string(++k);
    if (used.insert(s).second) return s;
  }
}

namespace {
constexpr size_t kCounting = ~size_t{0};
}

size_t LocalFunctions::inlined_size(const onnx::NodeProto& n, int depth) {
  if (const LocalFunction* f = find(n)) return inlined_size(*f, depth + 1);
  size_t s = 1;
  auto add_graph = [&](const onnx::GraphProto& g) {
    for (const auto& sn : g.node()) s = std::min(s + inlined_size(sn, depth), kMaxInlinedNodes + 1);
  };
  for (const auto& a : n.attribute()) {
    if (a.has_g()) add_graph(a.g());
    for (const auto& g : a.graphs()) add_graph(g);
  }
  return s;
}

size_t LocalFunctions::inlined_size(const LocalFunction& f, int depth) {
  auto [it, fresh_entry] = sizes_.emplace(&f, kCounting);
  if (!fresh_entry) return it->second == kCounting ? 0 : it->second;
  if (depth > kMaxFunctionDepth)
    throw Error("onnx", model_label_ + ": model-local function calls nest deeper than " + std::to_string(kMaxFunctionDepth) +
                            " (at function '" + printable(f.label) + "')");
  size_t s = f.proto->output_size();  // room for pass-through Identity nodes
  for (const auto& n : f.proto->node()) s = std::min(s + inlined_size(n, depth), kMaxInlinedNodes + 1);
  sizes_[&f] = s;  // (the emplace iterator may have moved)
  return s;
}

std::vector<onnx::NodeProto> LocalFunctions::instantiate(const onnx::NodeProto& call, const std::string& call_name, const LocalFunction& f) {
  const onnx::FunctionProto& fp = *f.proto;
  const std::string who = node_label(call_name, call.op_type()) + " calls function '" + printable(f.label) + "'";
  if (call.input_size() > fp.input_size())
    throw Error("onnx", who + " with " + std::to_string(call.input_size()) + " inputs; it declares " + std::to_string(fp.input_size()));
  if (call.output_size() > fp.output_size())
    throw Error("onnx", who + " with " + std::to_string(call.output_size()) + " outputs; it declares " + std::to_string(fp.output_size()));
  Binding b{f, call, call_name, {}, {}, [this](const std::string& base) { return fresh(used_values_, base); }};
  for (const auto& a : call.attribute()) b.given[a.name()] = &a;
  for (int i = 0; i < fp.input_size(); ++i) b.names[fp.input(i)] = i < call.input_size() ? call.input(i) : std::string();
  std::vector<std::pair<std::string, std::string>> passthrough;  // formal output that is a formal input -> call output
  for (int k = 0; k < fp.output_size(); ++k) {
    const std::string& o = fp.output(k);
    const std::string actual = k < call.output_size() ? call.output(k) : std::string();
    if (b.names.count(o)) {
      if (!actual.empty()) passthrough.emplace_back(o, actual);
      continue;
    }
    b.names[o] = actual.empty() ? fresh(used_values_, call_name + "/" + o) : actual;
  }
  std::vector<onnx::NodeProto> out;
  out.reserve(static_cast<size_t>(fp.node_size()) + passthrough.size());
  for (const auto& bn : fp.node()) {
    onnx::NodeProto n = bn;
    n.set_name(fresh(used_nodes_, call_name + "/" + (bn.name().empty() ? bn.op_type() : bn.name())));
    for (auto& s : *n.mutable_input()) s = b.rename(s);
    for (auto& s : *n.mutable_output()) s = b.rename(s);
    b.bind(n);
    out.push_back(std::move(n));
  }
  for (const auto& [from, to] : passthrough) {
    onnx::NodeProto id;
    id.set_op_type("Identity");
    id.set_name(fresh(used_nodes_, call_name + "/Identity"));
    id.add_input(b.rename(from));
    id.add_output(to);
    out.push_back(std::move(id));
  }
  return out;
}

void LocalFunctions::expand(const onnx::NodeProto& np, const OpsetMap* opsets, const CallFrame* frame, size_t index,
                            const std::string& name, std::vector<ImportNode>& out) {
  const LocalFunction* f = find(np);
  if (!f) {
    out.push_back({&np, opsets, frame, index});
    return;
  }
  int depth = 0;
  for (const CallFrame* c = frame; c; c = c->up, ++depth) {
    if (c->fn != f) continue;
    std::vector<std::string> chain{f->label};  // outermost first, from the first call of f
    for (const CallFrame* d = frame; d != c; d = d->up) chain.push_back(d->fn->label);
    chain.push_back(f->label);
    std::reverse(chain.begin() + 1, chain.end() - 1);
    std::string path;
    for (const auto& l : chain) path += (path.empty() ? "" : " -> ") + printable(l);
    throw Error("onnx", model_label_ + ": model-local function '" + printable(f->label) + "' calls itself (" + path +
                            "); recursive functions cannot be inlined");
  }
  if (depth >= kMaxFunctionDepth)
    throw Error("onnx", model_label_ + ": " + node_label(name, np.op_type()) + ": model-local function calls nest deeper than " +
                            std::to_string(kMaxFunctionDepth));
  if (nodes_.size() + inlined_size(*f, depth) > kMaxInlinedNodes)
    throw Error("onnx", model_label_ + ": inlining model-local functions makes more than " + std::to_string(kMaxInlinedNodes) +
                            " nodes (at " + node_label(name, np.op_type()) + ")");
  frames_.push_back({f, frame});
  const CallFrame* inner = &frames_.back();
  std::vector<onnx::NodeProto> body = instantiate(np, name, *f);
  for (auto& n : body) {
    nodes_.push_back(std::move(n));
    const onnx::NodeProto& added = nodes_.back();
    expand(added, &f->opsets, inner, 0, added.name(), out);
  }
}

}  // namespace fusor
