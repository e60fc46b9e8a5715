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

namespace {
constexpr int64_t kMaxBakedElements = int64_t{1} << 16;

// specialize(), also reporting which inputs' values were baked into the graph (baked[i] = 1):
// those values must join the executable's key even when folding left no trace of the input.
Graph specialize_baked(const Graph& g, const std::vector<Tensor>& inputs, std::vector<char>* baked) {
  if (inputs.size() != g.inputs.size())
    throw Error("run", "model has " + std::to_string(g.inputs.size()) + " inputs, got " + std::to_string(inputs.size()));
  Graph s = g;
  std::map<std::string, Shape> shapes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Value& v = s.values[s.inputs[i]];
    if (v.dtype != DType::undefined && v.dtype != inputs[i].dtype())
      throw Error("run", "input '" + printable(v.name) + "' expects " + dtype_name(v.dtype) + ", got " + dtype_name(inputs[i].dtype()));
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
      if (baked) baked->assign(inputs.size(), 0);
      for (size_t i = 0; i < inputs.size(); ++i) {
        Value& v = s.values[s.inputs[i]];
        v.dtype = inputs[i].dtype();
        if ((dtype_is_int(v.dtype) && inputs[i].numel() <= 64) || inputs[i].numel() == 1 || named.count(v.name)) {
          v.constant = inputs[i];
          if (baked) (*baked)[i] = 1;
        }
      }
      try {
        make_static(s, shapes);
        break;
      } catch (const NeedsConstant& e) {
        bool is_input = false;
        for (int id : g.inputs) is_input = is_input || g.values[id].name == e.value();
        if (e.value().empty() || !is_input || !named.insert(e.value()).second) throw;
        // Shape-determining values are small (axes, pads, scales, NMS boxes); baking a large
        // input would fold it at load, the work of a run, and key the executable on its bytes.
        for (size_t i = 0; i < inputs.size(); ++i)
          if (g.values[g.inputs[i]].name == e.value() && inputs[i].numel() > kMaxBakedElements)
            throw Error("shape", "input '" + printable(e.value()) + "' sets a shape but has " +
                                     std::to_string(inputs[i].numel()) + " elements (at most " +
                                     std::to_string(kMaxBakedElements) + " are specialised on): " +
                                     std::string(e.what()).substr(e.component().size() + 3));
      }
    }
  }
  return s;
}
}  // namespace

Graph specialize(const Graph& g, const std::vector<Tensor>& inputs) { return specialize_baked(g, inputs, nullptr); }

std::vector<Tensor> random_inputs(const Graph& g, uint64_t seed) {
  InputDims d;
  d.unknown_to_one = true;
  return random_inputs(g, seed, d);
}

std::vector<Tensor> random_inputs(const Graph& g, uint64_t seed, const InputDims& d) {
  const std::vector<Shape> shapes = resolve_input_shapes(g, d);
  std::mt19937_64 rng(seed);
  std::vector<Tensor> out;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Value& v = g.values[g.inputs[i]];
    Tensor t(v.dtype == DType::undefined ? DType::f32 : v.dtype, shapes[i]);
    std::uniform_real_distribution<double> uf(-1.0, 1.0);
    std::uniform_int_distribution<int> ui(0, 7);
    for (int64_t k = 0; k < t.numel(); ++k) {
      if (dtype_is_float(t.dtype())) t.set(k, uf(rng));
      else if (t.dtype() == DType::boolean) t.set(k, ui(rng) & 1);
      else t.set(k, ui(rng));
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
// The exact bytes (as hex) of every input the static graph baked in: two values that print
// alike (1e-7 and 4e-7 with 6 decimals, -0.0 and 0.0) are different keys.
std::string value_key(const std::vector<char>& baked, const std::vector<Tensor>& inputs) {
  static const char* hex = "0123456789abcdef";
  std::string k;
  for (size_t i = 0; i < inputs.size() && i < baked.size(); ++i)
    if (baked[i]) {
      k += "#" + std::to_string(i) + "=";
      const Tensor& t = inputs[i];
      if (t.dtype() == DType::string) {
        for (const auto& s : t.strings) k += std::to_string(s.size()) + ":" + s + ",";
        continue;
      }
      const auto* p = reinterpret_cast<const unsigned char*>(t.raw());
      for (size_t j = 0; j < t.nbytes(); ++j) k += hex[p[j] >> 4], k += hex[p[j] & 15];
    }
  return k;
}
}  // namespace

size_t Session::cached_executables() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_.size();
}

std::vector<Tensor> Session::run_entry(Entry& e, const Graph* sg, const std::vector<Tensor>& inputs, RunStats* stats) {
  std::unique_lock<std::mutex> lock(e.m);
  if (!e.exe) {
    // First run of this signature: compile it once; threads wanting it wait on e.m. A failed
    // compile leaves exe empty, so the next run tries again and reports its own error.
    Graph local;
    if (!sg) sg = &(local = specialize(model_, inputs));
    std::lock_guard<std::mutex> compile_lock(compile_mu_);
    e.exe = compile_with_fallback(*impl_, *sg, opts_);
  }
  if (e.exe->concurrent_runs()) lock.unlock();
  return e.exe->run(inputs, stats);
}

std::vector<Tensor> Session::run(const std::vector<Tensor>& inputs, RunStats* stats) {
  const std::string key = shape_key(inputs);
  {
    std::unique_lock<std::mutex> lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end() && !value_keyed_.count(key)) {
      std::shared_ptr<Entry> e = it->second;
      lock.unlock();
      return run_entry(*e, nullptr, inputs, stats);
    }
  }
  std::vector<char> baked;
  Graph sg = specialize_baked(model_, inputs, &baked);
  const std::string vkey = value_key(baked, inputs);
  std::shared_ptr<Entry> e;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!vkey.empty()) value_keyed_.insert(key);  // this shape's executables depend on values
    auto& slot = cache_[key + vkey];
    if (!slot) slot = std::make_shared<Entry>();
    e = slot;
  }
  return run_entry(*e, &sg, inputs, stats);
}

std::vector<Tensor> run_on_backend(const std::string& backend, const Graph& sg, const std::vector<Tensor>& inputs,
                                   const CompileOptions& opts, RunStats* stats) {
  auto b = make_backend(backend);
  auto exe = compile_with_fallback(*b, sg, opts);
  return exe->run(inputs, stats);
}

}  // namespace fusor
