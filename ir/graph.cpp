#include "ir/graph.h"

#include <algorithm>

namespace fusor {

template <class T> static const T* attr_as(const Node& n, const std::string& k) {
  auto it = n.attrs.find(k);
  if (it == n.attrs.end()) return nullptr;
  if (auto* v = std::get_if<T>(&it->second)) return v;
  throw Error("onnx", n.label() + ": attribute '" + printable(k) + "' has the wrong type");
}

int64_t Node::attr_i(const std::string& k, int64_t d) const {
  auto it = attrs.find(k);
  if (it == attrs.end()) return d;
  // A FLOAT attribute where the op defines an INT is invalid (onnxruntime's checker rejects it);
  // truncating 6.9 to 6, or converting 1e30 (undefined behaviour), would run a different model.
  if (auto* f = std::get_if<double>(&it->second))
    throw Error("onnx", label() + ": attribute '" + printable(k) + "' must be an integer, got the float " + std::to_string(*f));
  return *attr_as<int64_t>(*this, k);
}
double Node::attr_f(const std::string& k, double d) const {
  auto it = attrs.find(k);
  if (it == attrs.end()) return onnx_float(d);
  if (auto* i = std::get_if<int64_t>(&it->second)) return static_cast<double>(*i);
  return *attr_as<double>(*this, k);
}
std::string Node::attr_s(const std::string& k, const std::string& d) const {
  auto* v = attr_as<std::string>(*this, k);
  return v ? *v : d;
}
std::vector<std::string> Node::attr_strings(const std::string& k) const {
  auto it = attrs.find(k);
  if (it == attrs.end()) return {};
  if (auto* s = std::get_if<std::string>(&it->second)) return {*s};
  if (auto* v = std::get_if<std::vector<std::string>>(&it->second)) return *v;
  throw Error("onnx", label() + ": attribute '" + printable(k) + "' must be a list of strings");
}
std::vector<int64_t> Node::attr_ints(const std::string& k, std::vector<int64_t> d) const {
  auto it = attrs.find(k);
  if (it == attrs.end()) return d;
  if (auto* i = std::get_if<int64_t>(&it->second)) return {*i};
  return *attr_as<std::vector<int64_t>>(*this, k);
}
std::vector<double> Node::attr_floats(const std::string& k, std::vector<double> d) const {
  auto it = attrs.find(k);
  if (it == attrs.end()) {
    for (double& v : d) v = onnx_float(v);
    return d;
  }
  if (auto* f = std::get_if<double>(&it->second)) return {*f};
  return *attr_as<std::vector<double>>(*this, k);
}
const Tensor* Node::attr_t(const std::string& k) const { return attr_as<Tensor>(*this, k); }
const Graph* Node::attr_g(const std::string& k) const {
  auto* g = attr_as<std::shared_ptr<const Graph>>(*this, k);
  return g ? g->get() : nullptr;
}

int Node::num_inputs() const {
  int n = static_cast<int>(inputs.size());
  while (n > 0 && inputs[n - 1] < 0) --n;
  return n;
}
std::string Node::label() const { return "node '" + printable(name) + "' (" + printable(op_type) + ")"; }

int Graph::add_value(std::string name, DType dtype, Shape shape, bool shape_known) {
  Value v;
  v.name = std::move(name);
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.shape_known = shape_known;
  values.push_back(std::move(v));
  return static_cast<int>(values.size()) - 1;
}

int Graph::add_constant(std::string name, Tensor t) {
  int id = add_value(std::move(name), t.dtype(), t.shape(), true);
  values[id].constant = std::move(t);
  return id;
}

int Graph::find_value(const std::string& name) const {
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].name == name) return static_cast<int>(i);
  return -1;
}

int Graph::add_node(Node n) {
  int id = static_cast<int>(nodes.size());
  for (int o : n.outputs)
    if (o >= 0) values[o].producer = id;
  nodes.push_back(std::move(n));
  return id;
}

void Graph::reindex_producers() {
  for (auto& v : values) v.producer = -1;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (int o : nodes[i].outputs)
      if (o >= 0) values[o].producer = static_cast<int>(i);
}

std::string Graph::unique_name(const std::string& base) { return base + "__fz" + std::to_string(name_counter_++); }

// Graph is a plain struct that C++ callers may assemble or edit (GraphBuilder::graph()); every
// pass indexes values by id without checking, so an id out of range must stop here.
void check_graph_ids(const Graph& g) {
  const auto n = static_cast<int64_t>(g.values.size());
  auto bad = [&](const std::string& where, int id) {
    throw Error("graph", where + ": value id " + std::to_string(id) + " does not exist (graph '" + printable(g.name) +
                             "' has " + std::to_string(n) + " values)");
  };
  for (const Node& node : g.nodes) {
    for (int v : node.inputs)
      if (v >= n || v < -1) bad(node.label() + " input", v);
    for (int v : node.outputs)  // -1: an omitted optional output (LSTM's Y, Attention's qk_matmul_output)
      if (v >= n || v < -1) bad(node.label() + " output", v);
    for (const auto& [k, a] : node.attrs)
      if (auto* sub = std::get_if<std::shared_ptr<const Graph>>(&a); sub && *sub) check_graph_ids(**sub);
  }
  for (int v : g.inputs)
    if (v >= n || v < 0) bad("graph input", v);
  for (int v : g.outputs)
    if (v >= n || v < 0) bad("graph output", v);
  for (const auto& [v, dtype] : g.declared_output_dtypes)
    if (v >= n || v < 0) bad("declared graph output", v);
  for (const Graph::Overridable& o : g.overridable) {
    if (o.value >= n || o.value < 0) bad("overridable initializer", o.value);
    // with_overrides (runtime/session.cpp) turns a fed one into a graph input: it must be a
    // constant that is not one already.
    if (!g.values[o.value].constant || std::find(g.inputs.begin(), g.inputs.end(), o.value) != g.inputs.end())
      throw Error("graph", "overridable initializer '" + printable(g.values[o.value].name) +
                               "' must be a constant that is not a graph input");
  }
  for (const Value& v : g.values)
    if (static_cast<int>(v.dtype) > static_cast<int>(DType::i2))
      throw Error("graph", "value '" + printable(v.name) + "' has dtype code " + std::to_string(static_cast<int>(v.dtype)) +
                               ", which is not a DType");
}

void topo_sort(Graph& g) {
  check_graph_ids(g);
  g.reindex_producers();
  std::vector<int> state(g.nodes.size(), 0), order;
  order.reserve(g.nodes.size());
  // Iterative DFS so deep chains (thousands of nodes) cannot overflow the stack.
  for (size_t root = 0; root < g.nodes.size(); ++root) {
    if (state[root]) continue;
    std::vector<std::pair<int, size_t>> stack{{static_cast<int>(root), 0}};
    state[root] = 1;
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      const Node& node = g.nodes[n];
      if (next < node.inputs.size()) {
        int v = node.inputs[next++];
        if (v < 0) continue;
        int p = g.values[v].producer;
        if (p < 0) continue;
        if (state[p] == 1) throw Error("graph", "cycle through " + g.nodes[p].label());
        if (state[p] == 0) {
          state[p] = 1;
          stack.push_back({p, 0});
        }
      } else {
        state[n] = 2;
        order.push_back(n);
        stack.pop_back();
      }
    }
  }
  std::vector<Node> sorted;
  sorted.reserve(order.size());
  for (int i : order) sorted.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(sorted);
  g.reindex_producers();
}

void refuse_string_values(const Graph& g) {
  auto check = [&](int v) {
    if (v >= 0 && static_cast<size_t>(v) < g.values.size() && g.values[v].dtype == DType::string)
      throw Unsupported("graph", "value '" + printable(g.values[v].name) +
                                     "': string tensors are not supported (no backend computes on strings)");
  };
  for (int v : g.inputs) check(v);
  for (const Node& n : g.nodes) {
    for (int v : n.inputs) check(v);
    for (int v : n.outputs) check(v);
  }
  for (int v : g.outputs) check(v);
}

}  // namespace fusor
