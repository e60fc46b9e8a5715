// The backend interface (DESIGN.md "Backend interface"): compile a static graph into an
// executable once, then run it many times with bound inputs.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/kernel_spec.h"

namespace fusor {

struct CompileOptions {
  bool fusion = true;    // false: one kernel per primitive op (the unfused baseline)
  bool replay = true;    // false: eager launches / re-record the command buffer every run
  int device = 0;        // device index for GPU backends
  // true: nodes the backend cannot run go to the host (ref kernels) between device segments
  // (runtime/segments.h); false: such a graph is refused with Unsupported.
  bool fallback = true;
};

// Per-run timing a backend can report (microseconds). device_us < 0 when not measured.
struct RunStats {
  double host_us = 0;
  double device_us = -1;
};

// One kernel's time in a profiling run (Executable::profile), microseconds.
struct KernelTiming {
  int kernel = -1;      // index into Plan::kernels of build_plan(g, {opts.fusion}) (the plan it runs)
  std::string what;     // "" for the kernel itself; the library call otherwise (e.g. "cublasLt")
  double start_us = 0;  // from the start of the profiled run, on the timing clock
  double dur_us = 0;
};

class Executable {
 public:
  virtual ~Executable() = default;
  // inputs in graph-input order (already the right dtype/shape); returns outputs in
  // graph-output order. Throws Error on a device failure.
  virtual std::vector<Tensor> run(const std::vector<Tensor>& inputs, RunStats* stats = nullptr) = 0;
  virtual int kernel_count() const = 0;  // kernels/dispatches launched per run
  // One line on how the backend runs the plan beyond its generated kernels (e.g. "cuBLASLt:
  // 4 of 4 matmuls"), or "" when there is nothing to say.
  virtual std::string notes() const { return ""; }
  // Runs once like run() (same outputs) with a timestamp around every kernel, for profiling
  // (slower than run(): GPU backends use a separately recorded timing replay). Returns one
  // entry per kernel launch in launch order; empty when the backend cannot time kernels (ref).
  virtual std::vector<KernelTiming> profile(const std::vector<Tensor>& inputs,
                                            std::vector<Tensor>* outputs = nullptr) {
    if (outputs) *outputs = run(inputs);
    return {};
  }
  // Capability: run() may be called from several threads at once on this executable (it keeps
  // no per-run state in the executable). When false, callers serialize runs (Session does).
  virtual bool concurrent_runs() const { return false; }
};

struct DeviceInfo {
  std::string name;
  std::string details;  // limits, one line
  // What the device's float arithmetic does not preserve, one line (e.g. "fp32 denormals are
  // flushed to zero"), "" when it keeps denormals, signed zeros, infinities and NaNs of every
  // float width it computes in. Conformance prints it so such failures are not silent.
  std::string numerics_note;
  // The device is a CPU implementation of the API (Mesa's lavapipe): work the host backends can
  // do (a data-dependent shape's cone, runtime/session.h cone_runner) runs faster there.
  bool emulated = false;
};

// The fusion options every backend starts from: opts.fusion, nothing backend-specific.
inline FusionOptions default_fusion_options(const CompileOptions& opts) {
  FusionOptions fo;
  fo.fuse = opts.fusion;
  return fo;
}

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual std::vector<DeviceInfo> devices() const = 0;  // empty when none is usable
  // g is static (see make_static). Throws Unsupported or Error.
  virtual std::unique_ptr<Executable> compile(const Graph& g, const CompileOptions& opts) = 0;
  // Why compile(g, opts) would throw Unsupported for an op or dtype (the message), or "" when
  // the backend can generate every kernel of g. Runs only the code generators: no memory, no
  // kernel compilation, no device work (a GPU backend may query its device's features). The
  // host-fallback partitioner asks it per node. Default: "" (the backend runs every op it has).
  virtual std::string unsupported(const Graph& g, const CompileOptions& opts) { return ""; }
  // The fusion pass's options for this backend's plans (compile, unsupported, and the tools
  // that show a plan: explain, bench). Default: opts.fusion, nothing backend-specific.
  virtual FusionOptions fusion_options(const CompileOptions& opts) const { return default_fusion_options(opts); }
  // Opens device opts.device and loads what every compile needs (driver, context, library
  // handles) ahead of compile(), so a caller can overlap it with loading the model: call it on
  // another thread while the ONNX file is parsed, then compile() on this backend finds it done.
  // Safe to call from any thread, concurrently with nothing else on this backend object (join
  // before compile), any number of times. Never throws: a failure (no device) is left for
  // compile() to report. Default: nothing to open (ref, cpu).
  virtual void prepare(const CompileOptions& opts) noexcept {}
};

// The check every Executable::run does first: count, dtype and shape of the inputs against
// the graph's inputs. Throws Error("run") naming the input.
void check_run_inputs(const Graph& g, const std::vector<Tensor>& inputs);

// ref and cpu have one device, the host: any CompileOptions::device but 0 is Error(backend,
// "device index N out of range (1 device: the host)") instead of being ignored.
void check_host_device_index(const std::string& backend, int device);

// Backends built into this binary, by name: "ref", "cpu", "vulkan", "cuda".
std::vector<std::string> backend_names();
// Throws Error("backend") for an unknown name or one not built in.
std::unique_ptr<Backend> make_backend(const std::string& name);

// Makes make_backend(name) return factory() (an extra backend, e.g. a fault-injecting one in
// tests). Not listed by backend_names(); a built-in name cannot be replaced (Error("backend")).
// Thread-safe; an empty factory removes the registration.
void register_backend(const std::string& name, std::function<std::unique_ptr<Backend>()> factory);

}  // namespace fusor
