#include "frontend/builder.h"

#include "frontend/onnx_import.h"

namespace fusor {

GraphBuilder::GraphBuilder(std::string graph_name, int opset) : opset_(opset) {
  // The range the importer takes (frontend/onnx_import.h): ops read their semantics by opset.
  if (opset < 1 || opset > kMaxOpset)
    throw Error("builder", "opset " + std::to_string(opset) + " is outside the supported range 1.." + std::to_string(kMaxOpset));
  g_.name = std::move(graph_name);
  g_.opset = opset;
}

void GraphBuilder::check_id(int id, const std::string& what) const {
  if (id < 0 || id >= static_cast<int>(g_.values.size()))
    throw Error("builder", what + ": value id " + std::to_string(id) + " does not exist");
}

// Names must stay unique because the ONNX-facing tools (export, explain) address values by name.
int GraphBuilder::named_value(const std::string& name) {
  if (name.empty()) throw Error("builder", "values need a name");
  if (name_used(name)) throw Error("builder", "value name '" + name + "' is already used");
  return add_named(name);
}

bool GraphBuilder::name_used(const std::string& name) {
  if (names_dirty_) {  // graph() may have renamed or added values
    names_.clear();
    for (const Value& v : g_.values) names_.insert(v.name);
    names_dirty_ = false;
  }
  return names_.count(name) != 0;
}

int GraphBuilder::add_named(const std::string& name) {
  const int id = g_.add_value(name);
  names_.insert(name);
  return id;
}

int GraphBuilder::input(const std::string& name, DType dtype, Shape shape) {
  int id = named_value(name);
  Value& v = g_.values[id];
  v.dtype = dtype;
  v.shape_known = true;
  for (auto d : shape) v.shape_known = v.shape_known && d >= 0;
  v.shape = std::move(shape);
  g_.inputs.push_back(id);
  return id;
}

int GraphBuilder::constant(const std::string& name, Tensor t) {
  int id = named_value(name);
  Value& v = g_.values[id];
  v.dtype = t.dtype();
  v.shape = t.shape();
  v.shape_known = true;
  v.constant = std::move(t);
  return id;
}

int GraphBuilder::op(const std::string& op_type, const std::vector<int>& inputs, Attrs attrs) {
  return op_multi(op_type, inputs, std::move(attrs), 1)[0];
}

std::vector<int> GraphBuilder::op_multi(const std::string& op_type, const std::vector<int>& inputs, Attrs attrs,
                                        int num_outputs) {
  if (num_outputs < 1) throw Error("builder", op_type + ": a node needs at least one output");
  Node n;
  n.op_type = op_type;
  n.name = op_type + "_" + std::to_string(g_.nodes.size());
  n.opset = opset_;
  n.check_types = check_types_;
  n.attrs = std::move(attrs);
  for (int in : inputs) {
    if (in != -1) check_id(in, n.label());
    n.inputs.push_back(in);
  }
  std::vector<int> outs;
  for (int k = 0; k < num_outputs; ++k) {
    std::string name = n.name + "_out" + std::to_string(k);
    // A user value may already own the natural name; fall back to the graph's unique scheme.
    outs.push_back(add_named(name_used(name) ? g_.unique_name(name) : name));
  }
  n.outputs = outs;
  g_.add_node(std::move(n));
  return outs;
}

void GraphBuilder::output(int value) {
  check_id(value, "output");
  g_.outputs.push_back(value);
}

Graph GraphBuilder::build() {
  if (g_.outputs.empty()) throw Error("builder", "graph '" + g_.name + "' has no outputs");
  topo_sort(g_);
  Graph out = std::move(g_);
  g_ = Graph{};
  g_.opset = opset_;
  names_.clear();
  names_dirty_ = false;
  return out;
}

}  // namespace fusor
