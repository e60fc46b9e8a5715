#include "runtime/session.h"

#include <map>
#include <random>
#include <set>

#include "frontend/onnx_import.h"
#include "ir/op_table.h"
#include "ir/passes.h"
#include "runtime/segments.h"

namespace fusor {

Graph load_model(const std::string& path) { return load_onnx(path); }

Graph specialize(const Graph& g, const std::vector<Tensor>& inputs) {
  if (inputs.size() != g.inputs.size())
    throw Error("run", "model has " + std::to_string(g.inputs.size()) + " inputs, got " + std::to_string(inputs.size()));
  Graph s = g;
  std::map<std::string, Shape> shapes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Value& v = s.values[s.inputs[i]];
    if (v.dtype != DType::undefined && v.dtype != inputs[i].dtype())
      throw Error("run", "input '" + v.name + "' expects " + dtype_name(v.dtype) + ", got " + dtype_name(inputs[i].dtype()));
    v.dtype = inputs[i].dtype();
    shapes[v.name] = inputs[i].shape();
  }
  try {
    make_static(s, shapes);
  } catch (const NeedsConstant&) {
    // A shape-determining input (Reshape's shape, Reduce axes, Pad pads...) fed at run time:
    // specialise on the values of the small integer inputs too, as torch.compile does for ints,
    // and on any other graph input a shape rule names (Resize's float scales).
    std::set<std::string> named;
    for (;;) {
      s = g;
      for (size_t i = 0; i < inputs.size(); ++i) {
        Value& v = s.values[s.inputs[i]];
        v.dtype = inputs[i].dtype();
        if ((dtype_is_int(v.dtype) && inputs[i].numel() <= 64) || inputs[i].numel() == 1 || named.count(v.name))
          v.constant = inputs[i];
      }
      try {
        make_static(s, shapes);
        break;
      } catch (const NeedsConstant& e) {
        bool is_input = false;
        for (int id : g.inputs) is_input = is_input || g.values[id].name == e.value();
        if (e.value().empty() || !is_input || !named.insert(e.value()).second) throw;
      }
    }
  }
  return s;
}

std::vector<Tensor> random_inputs(const Graph& g, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Tensor> out;
  for (int id : g.inputs) {
    const Value& v = g.values[id];
    Shape s = v.shape;
    for (auto& d : s)
      if (d < 0) d = 1;
    Tensor t(v.dtype == DType::undefined ? DType::f32 : v.dtype, s);
    std::uniform_real_distribution<double> uf(-1.0, 1.0);
    std::uniform_int_distribution<int> ui(0, 7);
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (dtype_is_float(t.dtype())) t.set(i, uf(rng));
      else if (t.dtype() == DType::boolean) t.set(i, ui(rng) & 1);
      else t.set(i, ui(rng));
    }
    out.push_back(std::move(t));
  }
  return out;
}

Session::Session(Graph model, std::string backend, CompileOptions opts)
    : model_(std::move(model)), backend_(std::move(backend)), opts_(opts), impl_(make_backend(backend_)) {}

namespace {
std::string shape_key(const std::vector<Tensor>& inputs) {
  std::string k;
  for (auto& t : inputs) k += std::string(dtype_name(t.dtype())) + shape_str(t.shape()) + ";";
  return k;
}
std::string value_key(const Graph& static_graph, const std::vector<Tensor>& inputs) {
  std::string k;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (static_graph.values[static_graph.inputs[i]].constant) {
      k += "#" + std::to_string(i) + "=";
      for (int64_t j = 0; j < inputs[i].numel(); ++j) k += std::to_string(inputs[i].get(j)) + ",";
    }
  return k;
}
}  // namespace

std::vector<Tensor> Session::run(const std::vector<Tensor>& inputs, RunStats* stats) {
  const std::string key = shape_key(inputs);
  auto it = cache_.find(key);
  if (it != cache_.end() && !it->second.value_keyed) return it->second.exe->run(inputs, stats);
  Graph sg = specialize(model_, inputs);
  std::string vkey = value_key(sg, inputs);
  if (vkey.empty()) {
    Entry e{false, compile_with_fallback(*impl_, sg, opts_)};
    return cache_.insert_or_assign(key, std::move(e)).first->second.exe->run(inputs, stats);
  }
  // Marks the shape key as value-dependent, then caches per value signature.
  cache_[key].value_keyed = true;
  auto vit = cache_.find(key + vkey);
  if (vit == cache_.end()) vit = cache_.emplace(key + vkey, Entry{true, compile_with_fallback(*impl_, sg, opts_)}).first;
  return vit->second.exe->run(inputs, stats);
}

std::vector<Tensor> run_on_backend(const std::string& backend, const Graph& sg, const std::vector<Tensor>& inputs,
                                   const CompileOptions& opts, RunStats* stats) {
  auto b = make_backend(backend);
  auto exe = compile_with_fallback(*b, sg, opts);
  return exe->run(inputs, stats);
}

}  // namespace fusor
