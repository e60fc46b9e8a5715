#include "runtime/session.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "frontend/onnx_import.h"
#include "ir/op_table.h"
#include "ir/output_forms.h"
#include "ir/passes.h"
#include "runtime/disk_cache.h"
#include "runtime/segments.h"

namespace fusor {

Graph load_model(const std::string& path) { return load_onnx(path); }

namespace {
// A shape parameter fed as an input is baked up to this many elements; data whose contents set
// a shape (NonZero(x) of an input) up to kMaxComputedElements, and past this many its folding
// is bounded as a computed value's is.
constexpr int64_t kMaxBakedElements = int64_t{1} << 16;
// A shape-determining value computed inside the model (NonZero's input, NMS's boxes) is
// computed (its cone run on ref, or where a ConeRun says) and baked in; larger ones are refused
// rather than keyed by their bytes.
// 2^24: a detector's score mask (RetinaNet at 256 x 256: 90,000 anchors x 91 classes) fits.
constexpr int64_t kMaxComputedElements = int64_t{1} << 24;

// A tensor's bytes for executable keys: exact (as hex) up to 4 KiB, so two values that print
// alike (1e-7 and 4e-7 with 6 decimals, -0.0 and 0.0) are different keys; past that its size
// and 128-bit content hash, so a baked 2^24-element mask keys in 40 bytes, not 128 MiB of hex.
// The hash (FNV-1a, runtime/disk_cache.h) is not collision-resistant: inputs crafted to collide
// would share an executable, as they would share a disk-cache entry.
std::string bytes_key(const Tensor& t) {
  static const char* hex = "0123456789abcdef";
  std::string k;
  if (t.dtype() == DType::string) {
    for (const auto& s : t.strings) k += std::to_string(s.size()) + ":" + s + ",";
    return k.size() > 4096 ? "s" + std::to_string(k.size()) + "#" + content_hash(k) : k;
  }
  const auto* p = reinterpret_cast<const unsigned char*>(t.raw());
  if (t.nbytes() > 4096)
    return "h" + std::to_string(t.nbytes()) + "#" + content_hash(p, t.nbytes());
  for (size_t j = 0; j < t.nbytes(); ++j) k += hex[p[j] >> 4], k += hex[p[j] & 15];
  return k;
}

void check_input_count(const Graph& g, size_t given) {
  const size_t n = g.inputs.size(), m = g.overridable.size();
  if (given >= n && given <= n + m) return;
  throw Error("run", "model has " + std::to_string(n) + " inputs" +
                         (m ? " (and " + std::to_string(m) + " overridable initializer" + (m > 1 ? "s" : "") + ", which may follow them)"
                            : std::string()) +
                         ", got " + std::to_string(given));
}

// g with the overridable initializers that `inputs` feed turned into graph inputs (after g's
// own, in order; declared shape, no constant), the others left constants; no overridables.
Graph with_overrides(const Graph& g, const std::vector<Tensor>& inputs) {
  Graph s = g;
  const size_t n = g.inputs.size();
  for (size_t j = 0; n + j < inputs.size(); ++j) {
    if (!inputs[n + j].defined()) continue;
    const Graph::Overridable& o = g.overridable[j];
    Value& v = s.values[static_cast<size_t>(o.value)];
    v.constant.reset();
    v.shape = o.shape_known ? o.shape : Shape{};
    v.shape_known = o.shape_known && std::all_of(v.shape.begin(), v.shape.end(), [](int64_t d) { return d >= 0; });
    s.inputs.push_back(o.value);
  }
  s.overridable.clear();
  return s;
}

// specialize(), also reporting which inputs' values were baked into the graph (baked[i] = 1,
// indexed like fed_inputs) and the bytes of the computed values it baked (computed_key): those
// values must join the executable's key even when folding left no trace of them.
Graph specialize_baked(const Graph& g, const std::vector<Tensor>& inputs, std::vector<char>* baked,
                       std::string* computed_key, SpecializeInfo* info = nullptr, const ConeRun* cone_run = nullptr) {
  check_graph_ids(g);
  check_input_count(g, inputs.size());
  // String inputs run as int64 codes (ir/output_forms.h): a built graph is encoded first, then the inputs.
  if (g.string_inputs.empty() && std::any_of(g.inputs.begin(), g.inputs.end(), [&](int v) { return g.values[v].dtype == DType::string; })) {
    Graph e = g;
    encode_string_inputs(e);
    encode_output_forms(e);
    return specialize_baked(e, inputs, baked, computed_key, info, cone_run);
  }
  bool coded_strings = false;  // a coded input fed as strings (a kept one stays a string)
  for (size_t i = 0; i < g.string_inputs.size() && i < inputs.size(); ++i)
    coded_strings = coded_strings || (g.string_inputs[i] && inputs[i].dtype() == DType::string);
  if (coded_strings)
    return specialize_baked(g, encode_inputs(g, inputs), baked, computed_key, info, cone_run);
  if (inputs.size() > g.inputs.size())  // overridable initializers follow: specialise the graph that takes the fed ones
    return specialize_baked(with_overrides(g, inputs), fed_inputs(g, inputs), baked, computed_key, info, cone_run);
  std::map<std::string, Shape> shapes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = g.values[g.inputs[i]];
    if (v.dtype != DType::undefined && v.dtype != inputs[i].dtype())
      throw Error("run", "input '" + printable(v.name) + "' expects " + dtype_name(v.dtype) + ", got " + dtype_name(inputs[i].dtype()));
    shapes[v.name] = inputs[i].shape();
  }
  // A shape-determining input (Reshape's shape, Reduce axes, Pad pads...) fed at run time:
  // once one is needed, specialise on the values of the small integer inputs too, as
  // torch.compile does for ints, and on any other graph input a shape rule names (Resize's
  // float scales). A shape-determining value computed inside the model is computed from these
  // inputs by a cone run (ref, or cone_run) and baked in (computed, in the order they were needed).
  // Every value a cone run computed, by name. Later cones start from them instead of
  // running the model's prefix (a detector's backbone) again, and the returned graph takes
  // them as constants too: a backend recomputing them would round differently, and a near tie
  // then orders a TopK otherwise than the ref-computed indices that select from it (SSDlite's
  // boxes came out of the wrong anchors on vulkan). Such a graph is keyed on its inputs' bytes.
  std::map<std::string, Tensor> ref_values;
  int64_t ref_elements = 0;
  bool specialising = false;
  std::set<std::string> named;
  std::vector<std::pair<int, Tensor>> computed;  // value id in g -> its value for these inputs
  const auto is_computed = [&](int id) {
    return std::any_of(computed.begin(), computed.end(), [&](const auto& c) { return c.first == id; });
  };
  // ... and values an expansion creates (an inlined If branch's), which g does not hold: by name.
  std::map<std::string, Tensor> computed_named;
  const auto bakes = [&](size_t i) {
    const DType t = inputs[i].dtype();
    return (specialising && ((dtype_is_int(t) && inputs[i].numel() <= 64) || inputs[i].numel() == 1)) ||
           named.count(g.values[g.inputs[i]].name) > 0;
  };
  auto prepare = [&] {
    Graph s = g;
    encode_output_forms(s);  // a built graph's ZipMap / string labels (the importer's are done)
    if (baked) baked->assign(inputs.size(), 0);
    for (size_t i = 0; i < inputs.size(); ++i) {
      Value& v = s.values[s.inputs[i]];
      v.dtype = inputs[i].dtype();
      if (bakes(i)) {
        v.constant = inputs[i];
        if (baked) (*baked)[i] = 1;
      }
    }
    // A computed value becomes a constant; its producer writes a fresh value instead (dead
    // unless the producer's other outputs are read).
    for (const auto& [id, t] : computed) {
      for (Node& n : s.nodes)
        for (int& o : n.outputs)
          if (o == id) o = s.add_value(s.values[id].name + "/computed");  // no unique_name: expansions name values by its counter
      Value& v = s.values[id];
      v.dtype = t.dtype(), v.shape = t.shape(), v.shape_known = true, v.constant = t;
    }
    s.reindex_producers();
    s.known_by_name = computed_named;
    s.known_by_name.insert(ref_values.begin(), ref_values.end());
    // A large baked input counts as a computed value: contractions of it do not fold on ref
    // (infer_shapes bounds folding while known_by_name is set; a graph input's name matches no
    // node output there).
    for (size_t i = 0; i < inputs.size(); ++i)
      if (bakes(i) && inputs[i].numel() > kMaxBakedElements) s.known_by_name.emplace(g.values[g.inputs[i]].name, inputs[i]);
    return s;
  };
  // Runs static cone q (on ref, or cone_run): returns value qid, keeps the others it computes
  // (up to 2^27 elements in all).
  // Only the cone's frontier is kept: values some node of the model outside the cone reads (or
  // that an expansion made, which the model does not name). A value read only inside the cone
  // is never read again once the frontier is known (a backbone's inner activations).
  std::map<std::string, int> g_ids;
  for (size_t v = 0; v < g.values.size(); ++v) g_ids.emplace(g.values[v].name, static_cast<int>(v));
  std::vector<std::vector<int>> readers(g.values.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int v : g.nodes[i].inputs)
      if (v >= 0) readers[static_cast<size_t>(v)].push_back(static_cast<int>(i));
  // What a failed make_static folded from values computed inside the model (a detector's FPN
  // upsampling over backbone features a cone computed) is kept by name like the cones' values:
  // the next attempt starts from g again and would fold it on ref again, once per
  // shape-determining value. Only what a node left unfolded reads (the folded frontier), of 2^12
  // elements or more, within its own cap (2^26 elements: the cones' 2^27 stay theirs).
  int64_t harvested = 0;
  const auto harvest = [&](const Graph& s) {
    if (ref_values.empty() && computed.empty() && computed_named.empty()) return;  // nothing folded from run-time values
    for (const Node& n : s.nodes) {
      if (std::all_of(n.outputs.begin(), n.outputs.end(), [&](int o) { return o < 0 || s.values[static_cast<size_t>(o)].constant; }))
        continue;  // folded (or dead): its inputs are read by nothing that still runs
      for (int in : n.inputs) {
        if (in < 0) continue;
        const Value& v = s.values[static_cast<size_t>(in)];
        if (!v.constant || v.constant->numel() < (int64_t{1} << 12) || ref_values.count(v.name)) continue;
        const auto at = g_ids.find(v.name);
        if (at == g_ids.end()) continue;
        const Value& orig = g.values[static_cast<size_t>(at->second)];
        if (orig.constant || std::find(g.inputs.begin(), g.inputs.end(), at->second) != g.inputs.end()) continue;
        if (is_computed(at->second)) continue;
        if (harvested + v.constant->numel() > (int64_t{1} << 26)) return;
        harvested += v.constant->numel();
        ref_values[v.name] = *v.constant;
      }
    }
  };
  const auto run_cone = [&](Graph& q, int qid) {
    std::set<std::string> in_cone;  // what the cone's nodes compute (q.values keeps every value of the model)
    for (const Node& n : q.nodes)
      for (int o : n.outputs)
        if (o >= 0) in_cone.insert(q.values[static_cast<size_t>(o)].name);
    const auto frontier = [&](const std::string& name) {
      const auto at = g_ids.find(name);
      if (at == g_ids.end()) return true;
      const int id = at->second;
      for (int r : readers[static_cast<size_t>(id)])
        for (int o : g.nodes[static_cast<size_t>(r)].outputs)
          if (o >= 0 && !in_cone.count(g.values[static_cast<size_t>(o)].name)) return true;
      return false;
    };
    std::vector<int> outs{qid};
    int64_t more = 0;
    for (const Node& n : q.nodes)
      for (int o : n.outputs)
        if (o >= 0 && o != qid && !q.values[o].constant && !ref_values.count(q.values[o].name) && frontier(q.values[o].name)) {
          outs.push_back(o);
          more += shape_numel(q.values[o].shape);
        }
    if (ref_elements + more > (int64_t{1} << 27)) outs.resize(1);
    q.outputs = outs;
    // make_static already cut q after a stop_after value; left set, the backend's own shape
    // inference would cut the outputs back to that one value (the frontier read past the end).
    q.stop_after.clear();
    // The cone's graph is the same every run while nothing computed from this run's inputs is
    // in it: then it has a key (the value, the input shapes and the input values baked in).
    std::string key;
    if (computed.empty() && computed_named.empty() && ref_values.empty()) {
      key = q.values[qid].name + "|" + (specialising ? "s" : "");
      for (size_t i = 0; i < inputs.size(); ++i)  // by name too: which inputs are fed (overridable initializers) sets the graph
        key += "|" + printable(g.values[g.inputs[i]].name) + ":" + std::string(dtype_name(inputs[i].dtype())) + shape_str(inputs[i].shape()) +
               (bakes(i) ? "=" + bytes_key(inputs[i]) : "");
    }
    std::vector<Tensor> res = cone_run ? (*cone_run)(q, inputs, key) : run_on_backend("ref", q, inputs);
    if (res.size() != outs.size()) throw Error("run", "a shape-determining value's cone returned " + std::to_string(res.size()) +
                                                          " outputs, expected " + std::to_string(outs.size()));
    for (size_t k = 1; k < outs.size(); ++k) {
      ref_elements += res[k].numel();
      ref_values[q.values[outs[k]].name] = std::move(res[k]);
    }
    return std::move(res.at(0));
  };
  // Value qid of static cone q (why: what needs it): its constant, or (within the limit) its cone run.
  const auto cone_value = [&](Graph& q, int qid, const std::string& why) {
    if (q.values[qid].constant) return *q.values[qid].constant;
    if (shape_numel(q.values[qid].shape) > kMaxComputedElements)
      throw Error("shape", "value '" + printable(q.values[qid].name) + "' sets a shape but would need " +
                               std::to_string(shape_numel(q.values[qid].shape)) + " elements computed at load (at most " +
                               std::to_string(kMaxComputedElements) + "): " + why);
    return run_cone(q, qid);
  };
  for (;;) {
    Graph s = prepare();
    std::string need, why;
    bool contents = false;
    try {
      make_static(s, shapes);
      check_output_forms(s);
      if (computed_key)
        for (const auto& [id, t] : computed) *computed_key += "@" + std::to_string(id) + "=" + bytes_key(t);
      if (computed_key)
        for (const auto& [name, t] : computed_named) *computed_key += "@'" + name + "'=" + bytes_key(t);
      if (info) info->computed = computed.size() + computed_named.size(), info->with_them = ref_values.size();
      if (computed_key && !ref_values.empty())
        for (size_t i = 0; i < inputs.size(); ++i) *computed_key += "@input" + std::to_string(i) + "=" + bytes_key(inputs[i]);
      // The graph holds the values it reads as constants: the map of every value the ref runs
      // computed (a backbone's activations) would otherwise live as long as the executable.
      s.known_by_name.clear();
      return s;
    } catch (const NeedsConstant& e) {
      need = e.value(), why = e.message(), contents = e.contents();
      harvest(s);
      // A graph input it names is baked alone first (an If's condition): baking every small
      // input as well (token ids, a short attention mask) would key the executable on their
      // values, one compile per decoding step.
      const int nid = need.empty() ? -1 : g.find_value(need);
      const bool fresh_input = nid >= 0 && !named.count(need) && std::find(g.inputs.begin(), g.inputs.end(), nid) != g.inputs.end();
      if (!specialising && !fresh_input) {
        specialising = true;
        continue;
      }
      if (need.empty()) throw;
    }
    const int id = g.find_value(need);
    bool is_input = false;
    for (int in : g.inputs) is_input = is_input || in == id;
    if (is_input) {
      if (!named.insert(need).second) throw NeedsConstant(why, need);
      // Shape parameters are small (axes, pads, scales); baking a large one would fold it at
      // load and key the executable on its bytes. Data whose contents set a shape (NonZero(x)
      // of an input; NonZero(Abs(x)) is a cone's computed value) has a computed value's cap, and
      // prepare() bounds what folds from it as from a computed value.
      const int64_t cap = contents ? kMaxComputedElements : kMaxBakedElements;
      for (size_t i = 0; i < inputs.size(); ++i)
        if (g.inputs[i] == id && inputs[i].numel() > cap)
          throw Error("shape", "input '" + printable(need) + "' sets a shape but has " + std::to_string(inputs[i].numel()) +
                                   " elements (at most " + std::to_string(cap) + " are specialised on): " + why);
      continue;
    }
    if (id < 0) {
      // Made by an expansion: specialise the model up to the node that computes it, then run
      // that prefix as a cone.
      if (computed_named.count(need)) throw NeedsConstant(why, need);
      Graph q = prepare();
      q.stop_after = need;
      make_static(q, shapes, false);
      const int qid = q.find_value(need);
      if (qid < 0 || q.outputs != std::vector<int>{qid}) throw NeedsConstant(why, need);
      computed_named[need] = cone_value(q, qid, why);
      continue;
    }
    if (is_computed(id)) throw NeedsConstant(why, need);
    // The value's inputs all inferred (nodes infer in order): run its cone.
    Graph q = prepare();
    q.outputs = {id};
    eliminate_dead_code(q);
    make_static(q, shapes, false);
    const int qid = q.find_value(need);
    computed.emplace_back(id, cone_value(q, qid < 0 ? q.outputs[0] : qid, why));
  }
}
}  // namespace

Graph specialize(const Graph& g, const std::vector<Tensor>& inputs) { return specialize_baked(g, inputs, nullptr, nullptr); }
Graph specialize(const Graph& g, const std::vector<Tensor>& inputs, SpecializeInfo* info) {
  return specialize_baked(g, inputs, nullptr, nullptr, info);
}
Graph specialize(const Graph& g, const std::vector<Tensor>& inputs, SpecializeInfo* info, const ConeRun& cone_run) {
  return specialize_baked(g, inputs, nullptr, nullptr, info, &cone_run);
}

namespace {
// Whether cones of a model on backend b run on b itself: a GPU backend on a hardware device.
bool cones_on_device(Backend& b, const CompileOptions& opts) {
  if (b.name() == "ref" || b.name() == "cpu") return false;
  const std::vector<DeviceInfo> devs = b.devices();
  return opts.device >= 0 && static_cast<size_t>(opts.device) < devs.size() && !devs[static_cast<size_t>(opts.device)].emulated;
}
// The host backend cones of b run on otherwise: ref for ref (the spec stays op by op), else cpu.
const char* cone_host_backend(Backend& b) { return b.name() == "ref" ? "ref" : "cpu"; }
}  // namespace

ConeRun cone_runner(Backend& b, const CompileOptions& opts) {
  // Decided at the first cone, not here: most models never need one (devices() enumerates them).
  auto on_device = std::make_shared<int>(-1);
  return [&b, opts, on_device](const Graph& cone, const std::vector<Tensor>& in, const std::string&) {
    if (*on_device < 0) *on_device = cones_on_device(b, opts) ? 1 : 0;
    if (*on_device) return compile_with_fallback(b, cone, opts)->run(in);
    CompileOptions host = opts;
    host.device = 0;
    return run_on_backend(cone_host_backend(b), cone, in, host);
  };
}

std::vector<Tensor> fed_inputs(const Graph& g, const std::vector<Tensor>& given) {
  check_input_count(g, given.size());
  const std::vector<Tensor> inputs = g.string_inputs.empty() ? given : encode_inputs(g, given);  // string inputs: their codes
  if (inputs.size() == g.inputs.size()) return inputs;
  std::vector<Tensor> fed(inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(g.inputs.size()));
  for (size_t k = g.inputs.size(); k < inputs.size(); ++k)
    if (inputs[k].defined()) fed.push_back(inputs[k]);
  return fed;
}

std::vector<Tensor> bind_inputs(const Graph& g, const std::vector<Tensor>& tensors, const std::vector<std::string>& names,
                                const std::string& component) {
  // Slot of each name: graph inputs, then overridable initializers.
  std::map<std::string, size_t> slot;
  for (size_t i = 0; i < g.inputs.size(); ++i) slot.emplace(g.values[g.inputs[i]].name, i);
  for (size_t j = 0; j < g.overridable.size(); ++j) slot.emplace(g.values[g.overridable[j].value].name, g.inputs.size() + j);
  bool by_name = names.size() == tensors.size() && !tensors.empty();
  std::set<std::string> seen;
  for (const auto& nm : names) by_name = by_name && slot.count(nm) && seen.insert(nm).second;
  if (!by_name) {
    // Bound by position; a tensor named after another input of the model would feed the wrong
    // one silently (names that match no input, or none at all, are the common case).
    for (size_t k = 0; k < names.size() && k < tensors.size(); ++k)
      if (const auto it = slot.find(names[k]); !names[k].empty() && it != slot.end() && it->second != k)
        throw Error(component, "tensor " + std::to_string(k) + " is named '" + printable(names[k]) + "', input " +
                                   std::to_string(it->second) + " of the model, but the tensors are bound by position (not every one names a "
                                   "distinct input): name each after its input, or none");
    return tensors;
  }
  size_t size = g.inputs.size();
  for (const auto& nm : names) size = std::max(size, slot[nm] + 1);
  std::vector<Tensor> out(size);
  for (size_t k = 0; k < tensors.size(); ++k) out[slot[names[k]]] = tensors[k];
  for (size_t i = 0; i < g.inputs.size(); ++i)
    if (!seen.count(g.values[g.inputs[i]].name))
      throw Error(component, "no tensor feeds input '" + printable(g.values[g.inputs[i]].name) +
                                 "' (the tensors are named after other inputs of the model)");
  return out;
}

namespace {
// The number of rows the smallest table an integer value indexes has (Gather indices, through
// value-preserving ops), 0 when it indexes none. Random ids must stay below it: BERT-family
// token_type_ids index a 2-row embedding, so 0..7 made `run --seed` / `bench` fail there.
int64_t gather_rows(const Graph& g, int v, int depth = 0) {
  static const std::set<std::string> kSameValues = {"Cast", "Reshape", "Unsqueeze", "Squeeze", "Flatten",
                                                     "Identity", "Expand", "Transpose"};
  int64_t rows = 0;
  auto take = [&](int64_t r) { rows = r > 0 && (rows == 0 || r < rows) ? r : rows; };
  if (depth > 16) return 0;
  for (const Node& n : g.nodes) {
    if (n.inputs.empty() || n.outputs.empty()) continue;
    if (n.op_type == "Gather" && n.inputs.size() == 2 && n.inputs[1] == v && n.inputs[0] >= 0) {
      const Value& data = g.values[n.inputs[0]];
      int64_t rank = static_cast<int64_t>(data.shape.size());
      int64_t axis = n.attr_i("axis", 0);
      if (axis < 0) axis += rank;
      if (data.shape_known && axis >= 0 && axis < rank) take(data.shape[axis]);
    } else if (kSameValues.count(n.op_type) && n.inputs[0] == v && n.outputs[0] >= 0) {
      take(gather_rows(g, n.outputs[0], depth + 1));
    }
  }
  return rows;
}
}  // namespace

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
    const bool coded = i < g.string_inputs.size() && g.string_inputs[i];  // strings the model knows, one in 8 not
    Tensor t(coded ? DType::string : v.dtype == DType::undefined ? DType::f32 : v.dtype, shapes[i]);
    if (coded) {
      for (auto& s : t.strings)
        s = g.input_strings.empty() || rng() % 8 == 0 ? std::string("unseen") : g.input_strings[rng() % g.input_strings.size()];
      out.push_back(std::move(t));
      continue;
    }
    std::uniform_real_distribution<double> uf(-1.0, 1.0);
    const int64_t rows = dtype_is_float(t.dtype()) || t.dtype() == DType::boolean ? 0 : gather_rows(g, g.inputs[i]);
    std::uniform_int_distribution<int> ui(0, rows > 0 && rows < 8 ? static_cast<int>(rows) - 1 : 7);
    for (int64_t k = 0; k < t.numel(); ++k) {
      // A string input gets short words, so the run fails (or runs) as with a test set: naming
      // the op or value no backend computes on, not the random fill (red-team round 51).
      if (t.dtype() == DType::string) {
        const int len = 1 + static_cast<int>(rng() % 4);
        t.strings[static_cast<size_t>(k)] = std::string(static_cast<size_t>(len), static_cast<char>('a' + rng() % 26));
      }
      else if (dtype_is_float(t.dtype())) t.set(k, uf(rng));
      else if (t.dtype() == DType::boolean) t.set(k, ui(rng) & 1);
      else t.set(k, ui(rng));
    }
    out.push_back(std::move(t));
  }
  return out;
}

Session::Session(Graph model, std::string backend, CompileOptions opts)
    : model_(std::move(model)), backend_(std::move(backend)), opts_(opts), impl_(make_backend(backend_)) {
  check_graph_ids(model_);
  encode_string_inputs(model_);  // a built graph's (the importer's are done): fed_inputs and
  encode_output_forms(model_);   // present_outputs read them
}

namespace {
std::string shape_key(const std::vector<Tensor>& inputs) {
  std::string k;
  for (auto& t : inputs) k += std::string(dtype_name(t.dtype())) + shape_str(t.shape()) + ";";
  return k;
}
// The exact bytes of every input the static graph baked in.
std::string value_key(const std::vector<char>& baked, const std::vector<Tensor>& inputs) {
  std::string k;
  for (size_t i = 0; i < inputs.size() && i < baked.size(); ++i)
    if (baked[i]) k += "#" + std::to_string(i) + "=" + bytes_key(inputs[i]);
  return k;
}
}  // namespace

size_t Session::cached_executables() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_.size();
}

size_t Session::compiled_executables() const { return compiled_.load(); }

size_t Session::max_executables() const {
  std::lock_guard<std::mutex> lock(mu_);
  return max_;
}

void Session::set_max_executables(size_t n) {
  if (n == 0) throw Error("run", "a Session must be allowed to keep at least 1 executable");
  std::vector<std::shared_ptr<Entry>> dropped;  // destroyed after the lock is released (below)
  std::lock_guard<std::mutex> lock(mu_);
  max_ = n;
  evict_locked(dropped);
}

void Session::erase_locked(std::map<std::string, std::shared_ptr<Entry>>::iterator it, std::vector<std::shared_ptr<Entry>>& dropped) {
  const Entry& e = *it->second;
  if (e.value_keyed) {
    --value_keyed_count_;
    auto vk = value_keyed_.find(e.shape_key);
    if (vk != value_keyed_.end() && --vk->second == 0) value_keyed_.erase(vk);
  }
  // A run still using the entry holds its own reference; the last one is released by the caller
  // after mu_ (freeing an executable waits on the device: other runs must not wait for that).
  dropped.push_back(std::move(it->second));
  cache_.erase(it);
}

void Session::evict_locked(std::vector<std::shared_ptr<Entry>>& dropped) {
  // A linear scan per eviction: the cache holds at most max_ entries and an eviction follows a
  // compile, which costs far more.
  const size_t max_by_value = std::min(max_, kMaxValueKeyedExecutables);
  while (cache_.size() > max_ || value_keyed_count_ > max_by_value) {
    const bool by_value = value_keyed_count_ > max_by_value;
    auto oldest = cache_.end();
    for (auto it = cache_.begin(); it != cache_.end(); ++it)
      if ((!by_value || it->second->value_keyed) &&
          (oldest == cache_.end() || it->second->last_use < oldest->second->last_use))
        oldest = it;
    if (oldest == cache_.end()) break;
    erase_locked(oldest, dropped);
  }
}

std::vector<Tensor> Session::run_entry(Entry& e, const Graph* sg, const std::vector<Tensor>& inputs,
                                      const std::vector<Tensor>& fed, RunStats* stats) {
  std::unique_lock<std::mutex> lock(e.m);
  if (!e.exe) {
    // First run of this signature: compile it once; threads wanting it wait on e.m. A failed
    // compile leaves exe empty, so the next run tries again and reports its own error.
    Graph local;
    if (!sg) sg = &(local = specialize(model_, inputs));
    std::lock_guard<std::mutex> compile_lock(compile_mu_);
    e.exe = compile_with_fallback(*impl_, *sg, opts_);
    ++compiled_;
  }
  if (e.exe->concurrent_runs()) lock.unlock();
  std::vector<Tensor> outs = e.exe->run(fed, stats);
  present_outputs(model_, outs);
  return outs;
}

std::vector<Tensor> Session::run(const std::vector<Tensor>& inputs, RunStats* stats) {
  // The key names which overridable initializers are fed (an unfed one keys as "undefined[]").
  const std::string key = shape_key(inputs);
  const std::vector<Tensor> fed = fed_inputs(model_, inputs);
  {
    std::unique_lock<std::mutex> lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end() && !value_keyed_.count(key)) {
      std::shared_ptr<Entry> e = it->second;
      e->last_use = ++tick_;
      lock.unlock();
      return run_entry(*e, nullptr, inputs, fed, stats);
    }
  }
  std::vector<char> baked;
  std::string computed;
  const ConeRun cones = [this](const Graph& cone, const std::vector<Tensor>& in, const std::string& k) { return run_cone(cone, in, k); };
  Graph sg = specialize_baked(model_, inputs, &baked, &computed, nullptr, &cones);
  const std::string vkey = value_key(baked, fed) + computed;
  std::shared_ptr<Entry> e;
  {
    std::vector<std::shared_ptr<Entry>> dropped;  // destroyed after the lock is released
    std::lock_guard<std::mutex> lock(mu_);
    auto& slot = cache_[key + vkey];
    if (!slot) {
      slot = std::make_shared<Entry>();
      slot->shape_key = key;
      slot->value_keyed = !vkey.empty();
      if (slot->value_keyed) ++value_keyed_[key], ++value_keyed_count_;  // this shape's executables depend on values
    }
    e = slot;
    e->last_use = ++tick_;
    evict_locked(dropped);  // never e: it is the most recently used
  }
  return run_entry(*e, &sg, inputs, fed, stats);
}

std::vector<Tensor> Session::run_cone(const Graph& cone, const std::vector<Tensor>& inputs, const std::string& key) {
  // One cone at a time: a detector's backbone holds the device's memory while it runs, and the
  // compiled cones are shared.
  std::lock_guard<std::mutex> lock(cone_mu_);
  if (cone_on_device_ < 0) cone_on_device_ = cones_on_device(*impl_, opts_) ? 1 : 0;
  if (!cone_on_device_ && !cone_host_) cone_host_ = make_backend(cone_host_backend(*impl_));
  Backend& b = cone_on_device_ ? *impl_ : *cone_host_;
  CompileOptions o = opts_;
  if (!cone_on_device_) o.device = 0;
  const auto compile = [&] {
    std::lock_guard<std::mutex> compile_lock(compile_mu_);
    return compile_with_fallback(b, cone, o);
  };
  if (key.empty()) return compile()->run(inputs);
  auto it = cones_.find(key);
  if (it == cones_.end()) {
    std::unique_ptr<Executable> exe = compile();  // before evicting: a failed compile keeps the cache
    if (cones_.size() >= kMaxCones)
      cones_.erase(std::min_element(cones_.begin(), cones_.end(),
                                    [](const auto& a, const auto& c) { return a.second.last_use < c.second.last_use; }));
    it = cones_.emplace(key, Cone{std::move(exe), 0}).first;
  }
  it->second.last_use = ++cone_tick_;
  return it->second.exe->run(inputs);
}

std::vector<Tensor> run_on_backend(const std::string& backend, const Graph& sg, const std::vector<Tensor>& inputs,
                                   const CompileOptions& opts, RunStats* stats) {
  auto b = make_backend(backend);
  auto exe = compile_with_fallback(*b, sg, opts);
  std::vector<Tensor> outs = exe->run(inputs, stats);
  present_outputs(sg, outs);
  return outs;
}

}  // namespace fusor
