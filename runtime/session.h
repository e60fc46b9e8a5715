// Session-level helpers: load a model, specialise it to concrete input shapes, make inputs.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "ir/graph.h"

namespace fusor {

// Loads an ONNX model (Error("onnx") on a bad file; see frontend/onnx_import.h).
Graph load_model(const std::string& path);

// Copy of g made static for these inputs (their shapes bind the graph inputs): shape
// inference, constant folding, DCE. Throws Error("run") when the count or a dtype differs,
// Error("shape") when a shape contradicts the model.
//
// Overridable initializers (Graph::overridable, ONNX IR >= 4): `inputs` holds one tensor per
// graph input, in order, optionally followed by one per overridable initializer, in order; an
// empty Tensor() there, or leaving the trailing ones out, keeps the initializer (a constant
// that folds). A fed one becomes a graph input of the static graph, after g's inputs, so the
// executable compiled from it takes fed_inputs(g, inputs).
Graph specialize(const Graph& g, const std::vector<Tensor>& inputs);
// What specialize did beyond shapes: computed = values that set a shape (data-dependent: a
// NonZero's mask, NMS's boxes) computed from these inputs (on ref, or where a ConeRun says);
// with_them = the other values those cone runs computed (and what a failed attempt folded from
// them, kept for the next attempt). All are constants of the graph, which therefore holds only what
// follows them, and holds for these input values only.
struct SpecializeInfo {
  size_t computed = 0, with_them = 0;
};
Graph specialize(const Graph& g, const std::vector<Tensor>& inputs, SpecializeInfo* info);

// Where specialize runs the cones of shape-determining values computed inside the model (a
// detector's backbone before its NonMaxSuppression): cone_run(cone, inputs, key) compiles and
// runs the static graph `cone` on the model's inputs and returns its outputs in order. `key`
// names the cone when it depends only on the input shapes and the input values baked into it
// (the first cone of a run, whose graph is the same every run with those inputs): a runner may
// keep the compiled cone under it; "" when the cone also holds values computed from this run's
// inputs. Every value a cone computes becomes a constant of the specialised graph, so the
// backend that runs the rest selects from the cone's values, whichever backend computed them.
using ConeRun = std::function<std::vector<Tensor>(const Graph& cone, const std::vector<Tensor>& inputs, const std::string& key)>;
// specialize(g, inputs, info) with its cones run by cone_run (the other overloads run them on ref).
Graph specialize(const Graph& g, const std::vector<Tensor>& inputs, SpecializeInfo* info, const ConeRun& cone_run);
// The cone runner for a model compiled on backend b with opts: b itself (same device and driver
// context) when it is a GPU backend whose device opts.device is hardware (the prefix runs on the
// device, as torch.compile and onnxruntime run the ops before a graph break); the cpu backend's
// fused plan when that device is emulated on the CPU (lavapipe: a host plan is several times
// faster there) or b is cpu; ref when b is ref. No cache: every call compiles (Session keeps
// compiled cones).
ConeRun cone_runner(Backend& b, const CompileOptions& opts);
// inputs as an executable compiled from specialize(g, inputs) takes them: the overridable
// initializers left unfed dropped. Error("run") when the count does not fit g.
std::vector<Tensor> fed_inputs(const Graph& g, const std::vector<Tensor>& inputs);
// Tensors read from files (a test set's input_K.pb, `run --inputs`), with their TensorProto
// names ("" when unnamed), as specialize's inputs: by name when every tensor names a different
// graph input or overridable initializer of g (then each graph input must be among them), else
// by position. Error(component) naming a graph input no tensor feeds, or a tensor bound by
// position that is named after a different input.
std::vector<Tensor> bind_inputs(const Graph& g, const std::vector<Tensor>& tensors, const std::vector<std::string>& names,
                                const std::string& component);

// Seeded random inputs for g's declared inputs (unknown dims become 1). Floats are uniform
// in [-1, 1) (never all zero); integers in [0, 8) so they are valid indices, and below the row
// count of the smallest table an input indexes through Gather (a 2-row token-type embedding
// gets 0 and 1); bools random; strings short lowercase words.
std::vector<Tensor> random_inputs(const Graph& g, uint64_t seed);

// How the dynamic dims of a model's inputs are bound (the CLI's --shape and --dim, as
// onnxruntime's perf test's -f and IREE's --input take them):
//   shapes: input name -> whole shape (its rank and fixed dims must match the model);
//   dims:   ONNX dim_param name -> value, for every input dim with that name;
//   unknown_to_one: a dim left unbound becomes 1 (else resolve_input_shapes throws).
struct InputDims {
  std::map<std::string, Shape> shapes;
  std::map<std::string, int64_t> dims;
  bool unknown_to_one = false;
};
// Parses "NAME=1x3x224x224" (--shape; "NAME=" for a scalar) and "NAME=VALUE" (--dim) into
// InputDims; Error("cli") naming the malformed argument.
InputDims parse_input_dims(const std::vector<std::string>& shapes, const std::vector<std::string>& dims);
// The concrete shape of each of g's inputs under d. Error("run") for a name in d that is not an
// input / dim of g, a shape that contradicts the model, or (unknown_to_one off) an unbound dim,
// naming the input, the dim's index and its dim_param.
std::vector<Shape> resolve_input_shapes(const Graph& g, const InputDims& d);
// random_inputs with the shapes above.
std::vector<Tensor> random_inputs(const Graph& g, uint64_t seed, const InputDims& d);

// An inference session (as in onnxruntime's InferenceSession): one model on one backend,
// compiled lazily per input signature and cached in memory. The signature is the inputs'
// dtypes and shapes; when a shape depends on an input's values (a Reshape shape fed at run
// time, Resize's float scales), those inputs' exact bytes join the key. GPU kernels are also
// cached on disk by the backends, so a new Session compiles warm. run() throws like
// specialize/compile/run. Ops the backend lacks run on the host between device segments
// unless opts.fallback is off (runtime/segments.h).
//
// Memory: the in-memory cache is bounded (least recently used out): at most
// max_executables() executables (default kDefaultMaxExecutables), of which at most
// kMaxValueKeyedExecutables are keyed on input values (data-dependent shapes: NonZero of a
// computed mask compiles one per distinct mask, so an unbounded cache grew on every run). A
// signature evicted and seen again is compiled again (warm from the disk kernel cache). The
// Session's destructor frees every executable (device memory, pipelines, command buffers).
//
// Shapes set by values computed inside the model (specialize): their cones run on this backend's
// device when it is hardware (else cpu / ref: cone_runner); a cone that depends only on the input
// shapes and baked input values (the first of a run: a detector's backbone) is compiled once and
// kept, at most kMaxCones of them beside the executables (holding device memory; not counted by
// cached_executables / compiled_executables); later cones compile per run. Cone runs are
// serialized per Session.
//
// Thread safety: run() may be called from any number of threads at once. Each signature is
// compiled exactly once while cached (other threads asking for it wait for that compile);
// compiles are serialized per Session. Runs of one executable are serialized unless its backend
// runs them concurrently (Executable::concurrent_runs(): `ref`), since the cpu arena, the Vulkan
// command buffer and the CUDA graph are one per executable; runs of different signatures
// proceed in parallel. An executable evicted while a run uses it is freed when that run ends.
class Session {
 public:
  static constexpr size_t kDefaultMaxExecutables = 64;
  static constexpr size_t kMaxValueKeyedExecutables = 16;

  Session(Graph model, std::string backend, CompileOptions opts = {});
  // inputs: as specialize takes them (overridable initializers may follow the graph inputs).
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, RunStats* stats = nullptr);
  // Executables held now (at most max_executables()).
  size_t cached_executables() const;
  // Executables compiled since the Session was made (a cache hit compiles none; an evicted
  // signature seen again compiles again).
  size_t compiled_executables() const;
  // Bounds the cache to n >= 1 executables (value-keyed ones to min(n,
  // kMaxValueKeyedExecutables)); evicts the least recently used ones now if more are held.
  // Error("run") for n = 0.
  void set_max_executables(size_t n);
  size_t max_executables() const;
  const std::string& backend() const { return backend_; }

 private:
  struct Entry {
    std::mutex m;  // held while compiling, and while running when runs must be serialized
    std::unique_ptr<Executable> exe;
    std::string shape_key;  // the signature without input values
    bool value_keyed = false;
    uint64_t last_use = 0;  // Session::tick_ at the last lookup (LRU order)
  };
  std::vector<Tensor> run_entry(Entry& e, const Graph* static_graph, const std::vector<Tensor>& inputs,
                                const std::vector<Tensor>& fed, RunStats* stats);
  // With mu_ held: drops least recently used entries until the bounds hold.
  void evict_locked(std::vector<std::shared_ptr<Entry>>& dropped);
  void erase_locked(std::map<std::string, std::shared_ptr<Entry>>::iterator it, std::vector<std::shared_ptr<Entry>>& dropped);

  // Runs a cone for specialize (ConeRun): on impl_ (a hardware GPU) or cone_host_ (cpu / ref:
  // cone_runner's choice), keeping up to kMaxCones compiled cones by key (least recently used out).
  std::vector<Tensor> run_cone(const Graph& cone, const std::vector<Tensor>& inputs, const std::string& key);
  static constexpr size_t kMaxCones = 4;
  struct Cone {
    std::unique_ptr<Executable> exe;
    uint64_t last_use = 0;
  };

  Graph model_;
  std::string backend_;
  CompileOptions opts_;
  std::unique_ptr<Backend> impl_;
  mutable std::mutex mu_;                             // guards cache_, value_keyed_, tick_, max_
  std::mutex compile_mu_;                             // one compile at a time on impl_
  std::map<std::string, std::shared_ptr<Entry>> cache_;
  std::map<std::string, size_t> value_keyed_;  // shape key -> cached entries that bake input values in
  uint64_t tick_ = 0;
  size_t max_ = kDefaultMaxExecutables;
  size_t value_keyed_count_ = 0;
  std::atomic<size_t> compiled_{0};
  std::mutex cone_mu_;  // guards the members below and serializes cone runs (taken before compile_mu_)
  std::unique_ptr<Backend> cone_host_;  // cpu / ref when cones do not run on impl_ (made on first use)
  int cone_on_device_ = -1;  // -1 not decided yet, 1 cones run on impl_, 0 on cone_host_
  std::map<std::string, Cone> cones_;
  uint64_t cone_tick_ = 0;
};

// Compile (with host fallback unless opts.fallback is off: runtime/segments.h) + run once on a
// backend. stats may be null.
std::vector<Tensor> run_on_backend(const std::string& backend, const Graph& static_graph,
                                   const std::vector<Tensor>& inputs, const CompileOptions& opts = {},
                                   RunStats* stats = nullptr);

}  // namespace fusor
