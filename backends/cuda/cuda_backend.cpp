// Backend "cuda": compile = build_plan + emit + NVRTC per kernel, one device arena, constants
// uploaded once, the launch sequence built once into a CUDA Graph (a chain of kernel nodes);
// run = HtoD inputs, one graph launch (or eager launches), DtoH outputs; run_device = the
// same launch on caller buffers after re-pointing the kernel nodes whose buffers moved.
#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <type_traits>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_driver.h"
#include "backends/cuda/nvrtc_batch.h"
#include "ir/phases.h"

namespace fusor {

// ---- driver ------------------------------------------------------------------------------------

CudaDriver CudaDriver::symbols_of(const char* library) {
  CudaDriver d;
  void* h = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    d.why = std::string(library) + " not found";
    return d;
  }
  // Symbol names are the versioned ones cuda.h maps the plain names to.
  auto sym = [&](auto& fn, const char* name, const char* fallback = nullptr) {
    void* p = dlsym(h, name);
    if (!p && fallback) p = dlsym(h, fallback);
    if (!p && d.why.empty()) d.why = std::string(library) + " lacks " + name;
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
  sym(d.cuInit, "cuInit");
  sym(d.cuDriverGetVersion, "cuDriverGetVersion");
  sym(d.cuGetErrorName, "cuGetErrorName");
  sym(d.cuDeviceGetCount, "cuDeviceGetCount");
  sym(d.cuDeviceGet, "cuDeviceGet");
  sym(d.cuDeviceGetName, "cuDeviceGetName");
  sym(d.cuDeviceGetAttribute, "cuDeviceGetAttribute");
  sym(d.cuDeviceTotalMem, "cuDeviceTotalMem_v2");
  sym(d.cuDeviceGetUuid, "cuDeviceGetUuid_v2", "cuDeviceGetUuid");
  sym(d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  sym(d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  sym(d.cuCtxSetCurrent, "cuCtxSetCurrent");
  sym(d.cuCtxSynchronize, "cuCtxSynchronize");
  sym(d.cuModuleLoadData, "cuModuleLoadData");
  sym(d.cuModuleUnload, "cuModuleUnload");
  sym(d.cuModuleGetFunction, "cuModuleGetFunction");
  sym(d.cuLaunchKernel, "cuLaunchKernel");
  sym(d.cuMemAlloc, "cuMemAlloc_v2");
  sym(d.cuMemFree, "cuMemFree_v2");
  sym(d.cuMemsetD8, "cuMemsetD8_v2");
  sym(d.cuMemsetD8Async, "cuMemsetD8Async");
  sym(d.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  sym(d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  sym(d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
  sym(d.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
  sym(d.cuStreamCreate, "cuStreamCreate");
  sym(d.cuStreamDestroy, "cuStreamDestroy_v2");
  sym(d.cuStreamSynchronize, "cuStreamSynchronize");
  sym(d.cuGraphCreate, "cuGraphCreate");
  // _v2 takes CUDA_KERNEL_NODE_PARAMS_v2 (CUDA 12+); the v1 struct is its prefix, so older
  // drivers' unversioned entry points read the same fields.
  sym(d.cuGraphAddKernelNode, "cuGraphAddKernelNode_v2", "cuGraphAddKernelNode");
  sym(d.cuGraphExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams_v2", "cuGraphExecKernelNodeSetParams");
  sym(d.cuGraphAddChildGraphNode, "cuGraphAddChildGraphNode");
  sym(d.cuGraphExecChildGraphNodeSetParams, "cuGraphExecChildGraphNodeSetParams");
  sym(d.cuStreamBeginCapture, "cuStreamBeginCapture_v2");
  sym(d.cuStreamEndCapture, "cuStreamEndCapture");
  sym(d.cuGraphInstantiate, "cuGraphInstantiateWithFlags");
  sym(d.cuGraphLaunch, "cuGraphLaunch");
  sym(d.cuGraphDestroy, "cuGraphDestroy");
  sym(d.cuGraphExecDestroy, "cuGraphExecDestroy");
  sym(d.cuEventCreate, "cuEventCreate");
  sym(d.cuEventRecord, "cuEventRecord");
  sym(d.cuEventSynchronize, "cuEventSynchronize");
  sym(d.cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime");
  sym(d.cuEventDestroy, "cuEventDestroy_v2");
  if (!d.why.empty()) return d;  // the handle stays open: it is process-wide anyway
  d.cuGraphAddDependencies = reinterpret_cast<decltype(d.cuGraphAddDependencies)>(dlsym(h, "cuGraphAddDependencies_v2"));
  d.loaded = true;
  return d;
}

const CudaDriver& CudaDriver::get() {
  static const CudaDriver d = [] {
    CudaDriver d = symbols_of("libcuda.so.1");
    if (!d.loaded) return d;
    CUresult r = d.cuInit(0);
    if (r == CUDA_SUCCESS) {
      d.initialized = true;
    } else {
      const char* n = nullptr;
      d.cuGetErrorName(r, &n);
      d.init_error = std::string("cuInit: ") + (n ? n : "CUDA error " + std::to_string(static_cast<int>(r)));
    }
    return d;
  }();
  return d;
}

bool hold_cuda_primary_context(const std::array<uint8_t, 16>& uuid) noexcept {
  try {
    static std::mutex mu;
    static std::map<std::array<uint8_t, 16>, bool> held;  // per UUID: whether a context is held
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = held.find(uuid); it != held.end()) return it->second;
    bool ok = false;
    const CudaDriver& d = CudaDriver::get();
    int count = 0;
    if (d.initialized && d.cuDeviceGetCount(&count) == CUDA_SUCCESS)
      for (int i = 0; i < count && !ok; ++i) {
        CUdevice dev;
        CUuuid id;
        CUcontext ctx;
        if (d.cuDeviceGet(&dev, i) != CUDA_SUCCESS || d.cuDeviceGetUuid(&id, dev) != CUDA_SUCCESS) continue;
        if (std::memcmp(id.bytes, uuid.data(), uuid.size()) != 0) continue;
        // Only where contexts are shared: an exclusive-process GPU's one slot stays free.
        int mode = -1;
        if (d.cuDeviceGetAttribute(&mode, CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, dev) != CUDA_SUCCESS || mode != CU_COMPUTEMODE_DEFAULT) break;
        ok = d.cuDevicePrimaryCtxRetain(&ctx, dev) == CUDA_SUCCESS;
      }
    held[uuid] = ok;
    return ok;
  } catch (...) {
    return false;
  }
}

void CudaDriver::check(CUresult r, const char* call) const {
  if (r == CUDA_SUCCESS) return;
  const char* n = nullptr;
  if (cuGetErrorName) cuGetErrorName(r, &n);
  throw Error("cuda", std::string(call) + ": " + (n ? n : "CUDA error " + std::to_string(static_cast<int>(r))));
}

namespace {

// Checks a driver call and names it in the error: FZ_CU(cuMemAlloc, &p, n).
#define FZ_CU(fn, ...) drv.check(drv.fn(__VA_ARGS__), #fn)

const CudaDriver& driver_or_throw() {
  const CudaDriver& d = CudaDriver::get();
  if (!d.loaded) throw Unsupported("cuda", "no CUDA device: " + d.why);
  if (!d.initialized) throw Unsupported("cuda", "no CUDA device: " + d.init_error);
  return d;
}

std::string device_arch(const CudaDriver& drv, CUdevice dev) {
  int major = 0, minor = 0;
  FZ_CU(cuDeviceGetAttribute, &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  FZ_CU(cuDeviceGetAttribute, &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

class CudaExecutableImpl final : public CudaExecutable {
 public:
  CudaExecutableImpl(const Graph& g, const CompileOptions& opts) : drv(driver_or_throw()), replay_(opts.replay) {
    const FusionOptions fo = default_fusion_options(opts);  // CudaBackend::fusion_options
    {
      PhaseScope ps("fusion");
      plan_ = build_plan(g, fo);
    }
    auto desc = [&](int b) {
      const Buffer& buf = plan_.buffers[b];
      return BufferDesc{buf.name, buf.dtype, buf.shape, buf.nbytes()};
    };
    for (int b : plan_.input_buffers) input_descs_.push_back(desc(b));
    for (int b : plan_.output_buffers) output_descs_.push_back(desc(b));
    // Generate every source before touching the device so Unsupported costs nothing.
    {
      PhaseScope ps("codegen");
      cuda_generate_sources(plan_);
    }
    {
      // Creates the primary context unless something (CudaBackend::prepare) already holds it.
      PhaseScope ps("device open");
      int count = 0;
      FZ_CU(cuDeviceGetCount, &count);
      if (opts.device < 0 || opts.device >= count)
        throw Error("cuda", "device " + std::to_string(opts.device) + " does not exist (" + std::to_string(count) + " found)");
      FZ_CU(cuDeviceGet, &dev_, opts.device);
      FZ_CU(cuDevicePrimaryCtxRetain, &ctx_, dev_);
      int major = 0;
      FZ_CU(cuDeviceGetAttribute, &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev_);
      const char* e = std::getenv("FUSOR_CUDA_PDL");
      pdl_ = major >= 9 && drv.cuGraphAddDependencies && !(e && std::string(e) == "0");
    }
    try {
      PhaseScope ps("compile");
      setup();
    } catch (...) {
      release();
      throw;
    }
  }
  ~CudaExecutableImpl() override { release(); }

  int kernel_count() const override { return static_cast<int>(launches_.size()); }
  std::string notes() const override {
    int lib = 0, epi = 0, mm = 0;
    for (auto& k : plan_.kernels) mm += k.matmul ? 1 : 0;
    for (auto& l : launches_)
      if (l.gemm) ++lib, epi += l.fn ? 1 : 0;
    std::string s;
    if (mm > 0)
      s = "cuBLASLt: " + std::to_string(lib) + " of " + std::to_string(mm) + " matmuls (" + std::to_string(lib - epi) +
          " with its own epilogue, " + std::to_string(epi) + " with a generated one)";
    if (std::string c = conv_notes(); !c.empty()) s += (s.empty() ? "" : "; ") + c;
    if (programmatic_edges_ > 0)
      s += (s.empty() ? "" : "; ") + std::string("programmatic dependent launch: ") + std::to_string(programmatic_edges_) +
           " kernel-to-kernel edges";
    return lib_note_.empty() ? s : s.empty() ? lib_note_ : s + "; " + lib_note_;
  }
  const std::vector<BufferDesc>& input_descs() const override { return input_descs_; }
  const std::vector<BufferDesc>& output_descs() const override { return output_descs_; }
  int64_t node_updates() const override { return node_updates_; }

  // A timing replay: the launches made eagerly on the stream with an event after each kernel
  // and each cuBLASLt call (a graph launch has no per-node events), then the outputs copied
  // back as run() does.
  std::vector<KernelTiming> profile(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs) override {
    FZ_CU(cuCtxSetCurrent, ctx_);
    check_run_inputs(plan_.graph, inputs);
    bind(home_);
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].nbytes()) FZ_CU(cuMemcpyHtoDAsync, addr(plan_.input_buffers[i]), inputs[i].raw(), inputs[i].nbytes(), stream_);
    struct Mark {
      int kernel;
      const char* what;
    };
    std::vector<Mark> marks;
    std::vector<CUevent> ev;
    auto event = [&] {
      CUevent e = nullptr;
      FZ_CU(cuEventCreate, &e, CU_EVENT_DEFAULT);
      ev.push_back(e);
      FZ_CU(cuEventRecord, e, stream_);
    };
    std::vector<Tensor> outs;
    std::vector<KernelTiming> out;
    try {
      reset_status();
      event();
      for (auto& l : launches_) {
        if (l.gemm || l.conv) {
          enqueue_library(l);
          event();
          marks.push_back({l.kernel, l.gemm ? "cublasLt" : "cudnn"});
        }
        if (l.fn) {
          FZ_CU(cuLaunchKernel, l.fn, static_cast<unsigned>(l.dims.groups), 1, 1, static_cast<unsigned>(l.dims.group_size), 1,
                1, 0, stream_, l.argp.data(), nullptr);
          event();
          marks.push_back({l.kernel, ""});
        }
      }
      for (int ob : plan_.output_buffers) {
        const Buffer& b = plan_.buffers[ob];
        outs.emplace_back(b.dtype, b.shape);
        if (outs.back().nbytes()) FZ_CU(cuMemcpyDtoHAsync, outs.back().raw(), addr(ob), outs.back().nbytes(), stream_);
      }
      FZ_CU(cuStreamSynchronize, stream_);
      check_status();  // an out-of-range index fails the profiling run as it fails run()
      for (size_t i = 0; i < marks.size(); ++i) {
        float start_ms = 0, dur_ms = 0;
        FZ_CU(cuEventElapsedTime, &start_ms, ev[0], ev[i]);
        FZ_CU(cuEventElapsedTime, &dur_ms, ev[i], ev[i + 1]);
        out.push_back({marks[i].kernel, marks[i].what, start_ms * 1000.0, dur_ms * 1000.0});
      }
    } catch (...) {
      for (CUevent e : ev) drv.cuEventDestroy(e);
      throw;
    }
    for (CUevent e : ev) drv.cuEventDestroy(e);
    if (outputs) *outputs = std::move(outs);
    return out;
  }

  std::vector<Tensor> run(const std::vector<Tensor>& inputs, RunStats* stats) override {
    auto t0 = std::chrono::steady_clock::now();
    FZ_CU(cuCtxSetCurrent, ctx_);
    check_run_inputs(plan_.graph, inputs);
    bind(home_);  // a previous run_device may have pointed the kernels at caller buffers
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].nbytes()) FZ_CU(cuMemcpyHtoDAsync, addr(plan_.input_buffers[i]), inputs[i].raw(), inputs[i].nbytes(), stream_);
    reset_status();
    FZ_CU(cuEventRecord, ev_start_, stream_);
    launch_program();
    FZ_CU(cuEventRecord, ev_stop_, stream_);
    std::vector<Tensor> outs;
    for (int ob : plan_.output_buffers) {
      const Buffer& b = plan_.buffers[ob];
      outs.emplace_back(b.dtype, b.shape);
      if (outs.back().nbytes()) FZ_CU(cuMemcpyDtoHAsync, outs.back().raw(), addr(ob), outs.back().nbytes(), stream_);
    }
    FZ_CU(cuStreamSynchronize, stream_);
    check_status();
    if (stats) fill_stats(*stats, t0);
    return outs;
  }

  void run_device(const std::vector<uint64_t>& inputs, const std::vector<uint64_t>& outputs, RunStats* stats) override {
    auto t0 = std::chrono::steady_clock::now();
    check_device_args(inputs, outputs);
    FZ_CU(cuCtxSetCurrent, ctx_);
    // Where every buffer lives for this run: inputs at the caller's pointers; each output a
    // kernel writes at its (first) caller pointer; everything else where setup put it.
    // 0-byte buffers keep their arena address (nothing dereferences it), so a null caller
    // pointer for them never forces a node update.
    bound_ = home_;
    std::vector<char> claimed(plan_.buffers.size(), 0);
    for (size_t i = 0; i < inputs.size(); ++i) {
      const int b = plan_.input_buffers[i];
      if (plan_.buffers[b].nbytes() > 0) bound_[b] = inputs[i];
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      const int b = plan_.output_buffers[i];
      const Buffer& buf = plan_.buffers[b];
      if (buf.nbytes() == 0 || buf.role == Buffer::Role::input || buf.role == Buffer::Role::constant || claimed[b]) continue;
      claimed[b] = 1;
      bound_[b] = outputs[i];
    }
    bind(bound_);
    reset_status();
    FZ_CU(cuEventRecord, ev_start_, stream_);
    launch_program();
    FZ_CU(cuEventRecord, ev_stop_, stream_);
    // Outputs no kernel wrote at the caller's pointer: graph inputs, constants, repeats.
    for (size_t i = 0; i < outputs.size(); ++i) {
      const int b = plan_.output_buffers[i];
      const int64_t n = plan_.buffers[b].nbytes();
      if (n > 0 && bound_[b] != outputs[i]) FZ_CU(cuMemcpyDtoDAsync, outputs[i], bound_[b], static_cast<size_t>(n), stream_);
    }
    FZ_CU(cuStreamSynchronize, stream_);
    check_status();
    if (stats) fill_stats(*stats, t0);
  }

  uint64_t device_alloc(size_t bytes) override {
    if (bytes == 0) return 0;
    FZ_CU(cuCtxSetCurrent, ctx_);
    CUdeviceptr p = 0;
    FZ_CU(cuMemAlloc, &p, bytes);
    return p;
  }
  void device_free(uint64_t ptr) override {
    if (!ptr) return;
    FZ_CU(cuCtxSetCurrent, ctx_);
    FZ_CU(cuMemFree, static_cast<CUdeviceptr>(ptr));
  }
  // On the executable's stream (not a legacy-stream copy, which a non-blocking stream would
  // not wait for), then synchronised.
  void copy_to_device(uint64_t dst, const Tensor& src) override {
    if (src.dtype() == DType::string) throw Error("cuda", "copy_to_device: string tensors have no device layout");
    if (!src.nbytes()) return;
    FZ_CU(cuCtxSetCurrent, ctx_);
    FZ_CU(cuMemcpyHtoDAsync, static_cast<CUdeviceptr>(dst), src.raw(), src.nbytes(), stream_);
    FZ_CU(cuStreamSynchronize, stream_);
  }
  Tensor copy_from_device(uint64_t src, DType dtype, const Shape& shape) override {
    Tensor t(dtype, shape);
    if (!t.nbytes()) return t;
    FZ_CU(cuCtxSetCurrent, ctx_);
    FZ_CU(cuMemcpyDtoHAsync, t.raw(), static_cast<CUdeviceptr>(src), t.nbytes(), stream_);
    FZ_CU(cuStreamSynchronize, stream_);
    return t;
  }

 private:
  // The index-check status word (codegen.h kernel_checks_indices): zeroed before a run, read
  // after it; non-zero fails the run with the error ref gives for that node.
  void reset_status() {
    // On stream_: a legacy-stream memset is not ordered before the non-blocking stream's kernels.
    if (status_) FZ_CU(cuMemsetD8Async, status_, 0, 4, stream_);
  }
  void check_status() {
    if (!status_) return;
    uint32_t v = 0;
    FZ_CU(cuMemcpyDtoHAsync, &v, status_, 4, stream_);
    FZ_CU(cuStreamSynchronize, stream_);
    if (v != 0) throw Error("cuda", index_error_message(plan_, v));
  }
  CUdeviceptr status_ = 0;

  struct Launch {
    CUfunction fn = nullptr;        // null for a matmul whose output cuBLASLt writes itself
    std::optional<LibraryGemm> lib; // set: a cublasLtMatmul runs first (then fn, if any, is its epilogue)
    std::unique_ptr<CublasLt::Call> gemm;
    std::array<CUdeviceptr, 4> gemm_ptrs{};  // x, y, d, bias the call was prepared for
    CUgraphNode gemm_node = nullptr;         // replay: the captured library call (cuBLASLt or cuDNN) as a child-graph node
    std::optional<LibraryConv> conv_lib;     // set: a cudnnConvolutionForward runs first (then fn, if any, is its epilogue)
    std::unique_ptr<Cudnn::Call> conv;
    std::array<CUdeviceptr, 4> conv_ptrs{};  // x, w, y, bias the call was prepared for
    LaunchDims dims;
    std::vector<CUdeviceptr> args;  // one pointer per binding slot (kernel_bindings order)
    std::vector<void*> argp;        // points into args (stable: args is never resized after setup)
    std::vector<std::pair<int, int>> movable;  // (slot, buffer) of graph input/output buffers
    CUgraphNode node = nullptr;     // replay: this launch's node in graph_
    int kernel = -1;                // index into plan_.kernels
  };

  const CudaDriver& drv;
  bool replay_;
  // Programmatic dependent launch between consecutive kernel nodes of the replay graph: sm_90+
  // and a driver with cuGraphAddDependencies_v2; FUSOR_CUDA_PDL=0 turns it off (A/Bs).
  bool pdl_ = false;
  int programmatic_edges_ = 0;
  Plan plan_;
  std::vector<BufferDesc> input_descs_, output_descs_;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  CUstream stream_ = nullptr;
  CUevent ev_start_ = nullptr, ev_stop_ = nullptr;
  CUdeviceptr arena_ = 0;
  std::vector<CUdeviceptr> constants_;  // per buffer; 0 for non-constants
  std::vector<CUdeviceptr> home_;       // per buffer: addr(b), what run() binds
  std::vector<CUdeviceptr> bound_;      // per buffer: scratch for run_device
  std::vector<CUmodule> modules_;
  std::vector<Launch> launches_;
  std::unique_ptr<CublasLt> lt_;       // loaded when a kernel may use cuBLASLt
  CUdeviceptr gemm_scratch_ = 0;        // product (cuBLASLt) or conv output (cuDNN) that an epilogue kernel reads
  CUdeviceptr gemm_workspace_ = 0;      // cuBLASLt's fixed workspace (graph capture needs one)
  static constexpr size_t kGemmWorkspaceBytes = size_t{32} << 20;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
  int64_t node_updates_ = 0;
  std::string lib_note_;  // why a matmul did not get cuBLASLt (empty when all did)
  std::unique_ptr<Cudnn> dnn_;          // loaded when a kernel may use cuDNN
  CUdeviceptr conv_workspace_ = 0;      // cuDNN's workspace (the largest any chosen algorithm needs)
  size_t conv_workspace_bytes_ = 0;
  std::string conv_note_;               // why a conv did not get cuDNN (empty when all did)
  static constexpr size_t kConvWorkspaceMax = size_t{64} << 20;

  CUdeviceptr addr(int b) const {
    const Buffer& buf = plan_.buffers[b];
    if (buf.role == Buffer::Role::constant) return constants_[b];
    return arena_ + static_cast<CUdeviceptr>(buf.offset < 0 ? 0 : buf.offset);
  }

  void fill_stats(RunStats& st, std::chrono::steady_clock::time_point t0) const {
    float ms = 0;
    FZ_CU(cuEventElapsedTime, &ms, ev_start_, ev_stop_);
    st.device_us = ms * 1000.0;
    st.host_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  }

  // Counts, null pointers, and overlaps that would break the kernels' no-alias assumption
  // (a kernel's output slot is __restrict__ where the arena plan keeps it apart) or make an
  // input be written.
  void check_device_args(const std::vector<uint64_t>& inputs, const std::vector<uint64_t>& outputs) const {
    if (inputs.size() != plan_.input_buffers.size() || outputs.size() != plan_.output_buffers.size())
      throw Error("run", "run_device: expected " + std::to_string(plan_.input_buffers.size()) + " inputs and " +
                             std::to_string(plan_.output_buffers.size()) + " outputs, got " + std::to_string(inputs.size()) +
                             " and " + std::to_string(outputs.size()));
    struct Range {
      uint64_t p;
      int64_t n;
      bool out;
      const std::string* name;
    };
    std::vector<Range> r;
    for (size_t i = 0; i < inputs.size(); ++i) r.push_back({inputs[i], input_descs_[i].nbytes, false, &input_descs_[i].name});
    for (size_t i = 0; i < outputs.size(); ++i) r.push_back({outputs[i], output_descs_[i].nbytes, true, &output_descs_[i].name});
    for (auto& a : r)
      if (a.n > 0 && a.p == 0)
        throw Error("run", std::string("run_device: null pointer for ") + (a.out ? "output '" : "input '") + *a.name + "'");
    for (size_t i = 0; i < r.size(); ++i)
      for (size_t j = i + 1; j < r.size(); ++j) {
        const Range &a = r[i], &b = r[j];
        if ((!a.out && !b.out) || a.n == 0 || b.n == 0) continue;
        if (a.p < b.p + static_cast<uint64_t>(b.n) && b.p < a.p + static_cast<uint64_t>(a.n))
          throw Error("run", std::string("run_device: ") + (a.out ? "output '" : "input '") + *a.name + "' overlaps " +
                                 (b.out ? "output '" : "input '") + *b.name + "'");
      }
  }

  CUDA_KERNEL_NODE_PARAMS node_params(Launch& l) const {
    CUDA_KERNEL_NODE_PARAMS p{};  // kern/ctx (v2) stay null: func is set
    p.func = l.fn;
    p.gridDimX = static_cast<unsigned>(l.dims.groups);
    p.gridDimY = p.gridDimZ = 1;
    p.blockDimX = static_cast<unsigned>(l.dims.group_size);
    p.blockDimY = p.blockDimZ = 1;
    p.sharedMemBytes = 0;
    p.kernelParams = l.argp.data();
    p.extra = nullptr;
    return p;
  }

  // Points every launch at ptr (per buffer). Only graph input/output slots can move; a launch
  // whose slots already hold these pointers is left alone, one that changed gets its graph
  // node re-parameterised (the exec copies the argument values, affecting later launches only).
  void bind(const std::vector<CUdeviceptr>& ptr) {
    bool rebuild = false;
    for (auto& l : launches_) {
      const bool gemm_moved = l.gemm && gemm_pointers(l, ptr) != l.gemm_ptrs;
      const bool conv_moved = l.conv && conv_pointers(l, ptr) != l.conv_ptrs;
      if (gemm_moved || conv_moved) {
        // On failure the recorded pointers stay cleared, so the next bind retries.
        if (gemm_moved) prepare_gemm(l, ptr);
        else prepare_conv(l, ptr);
        if (exec_ && !rebuild) {
          // Same call, new pointers: re-capture it and swap the child graph in place. New
          // pointers with another alignment may get another cuBLASLt algorithm whose graph has
          // another shape; then the whole graph is rebuilt below.
          CUgraph child = capture_gemm(l);
          CUresult r = drv.cuGraphExecChildGraphNodeSetParams(exec_, l.gemm_node, child);
          drv.cuGraphDestroy(child);
          if (r == CUDA_SUCCESS) ++node_updates_;
          else rebuild = true;
        }
      }
      if (!l.fn) continue;
      bool changed = false;
      for (auto [slot, b] : l.movable)
        if (l.args[slot] != ptr[b]) {
          l.args[slot] = ptr[b];
          changed = true;
        }
      if (changed && exec_ && !rebuild) {
        CUDA_KERNEL_NODE_PARAMS p = node_params(l);
        FZ_CU(cuGraphExecKernelNodeSetParams, exec_, l.node, &p);
        ++node_updates_;
      }
    }
    if (rebuild) build_graph();
  }

  void launch_program() {
    if (replay_ && exec_) FZ_CU(cuGraphLaunch, exec_, stream_);
    else launch_all();
  }

  // The cuBLASLt operand pointers of launch l when buffers live at ptr.
  std::array<CUdeviceptr, 4> gemm_pointers(const Launch& l, const std::vector<CUdeviceptr>& ptr) const {
    const LibraryGemm& g = *l.lib;
    auto at = [&](int b, int64_t off) {
      return b < 0 ? CUdeviceptr{0} : ptr[b] + static_cast<CUdeviceptr>(off * static_cast<int64_t>(dtype_size(plan_.buffers[b].dtype)));
    };
    return {at(g.x.buffer, g.x.offset), at(g.y.buffer, g.y.offset),
            g.epilogue == LibraryGemm::Epilogue::kernel ? gemm_scratch_ : at(g.out_buffer, g.d_offset), at(g.bias_buffer, g.bias_offset)};
  }

  // Only a call that was prepared records its pointers.
  void prepare_gemm(Launch& l, const std::vector<CUdeviceptr>& ptr) {
    const std::array<CUdeviceptr, 4> p = gemm_pointers(l, ptr);
    l.gemm_ptrs = {};
    l.gemm->prepare(p[0], p[1], p[2], p[3], gemm_workspace_, kGemmWorkspaceBytes);
    l.gemm_ptrs = p;
  }

  // The cuDNN pointers (x, w, y, bias) of launch l when buffers live at ptr.
  std::array<CUdeviceptr, 4> conv_pointers(const Launch& l, const std::vector<CUdeviceptr>& ptr) const {
    const LibraryConv& c = *l.conv_lib;
    const CUdeviceptr y = c.epilogue == LibraryConv::Epilogue::kernel
                              ? gemm_scratch_
                              : ptr[c.out_buffer] + static_cast<CUdeviceptr>(c.y_offset * static_cast<int64_t>(dtype_size(c.dtype)));
    const CUdeviceptr bias = c.fused() ? ptr[c.bias_buffer] + static_cast<CUdeviceptr>(c.bias_offset * 4) : 0;
    return {ptr[c.x_buffer], ptr[c.w_buffer], y, bias};
  }
  void prepare_conv(Launch& l, const std::vector<CUdeviceptr>& ptr) {
    const std::array<CUdeviceptr, 4> p = conv_pointers(l, ptr);
    l.conv_ptrs = {};
    l.conv->prepare(p[0], p[1], p[2], p[3], conv_workspace_, conv_workspace_bytes_);
    l.conv_ptrs = p;
  }
  // Prepares l's cuDNN call at the arena's pointers, runs it once eagerly (cuDNN loads its
  // kernels lazily on first use, which must not happen inside a capture) and once under a
  // trial capture (a call that cannot be captured fails here, not in build_graph). A fused bias epilogue
  // that cuDNN refuses becomes the generated one; any other failure puts the conv back on the
  // template. The reason goes into the notes.
  void setup_conv(Launch& l, const KernelSpec& k) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      try {
        if (attempt == 1) {
          l.conv_lib->epilogue = LibraryConv::Epilogue::kernel;
          l.conv_lib->bias_buffer = l.conv_lib->out_buffer = -1;
          l.conv = dnn_->make_call(*l.conv_lib, conv_workspace_bytes_);
        }
        prepare_conv(l, home_);
        l.conv->enqueue(stream_);
        FZ_CU(cuStreamSynchronize, stream_);
        drv.cuGraphDestroy(capture_gemm(l));
        return;
      } catch (const Error& e) {
        conv_note_ = std::string(e.what()) + ": kernel " + k.name;
        if (attempt == 0 && l.conv_lib->fused()) {
          conv_note_ += " uses the generated epilogue";
          continue;
        }
        conv_note_ += " uses the NVRTC template";
        l.conv_lib.reset();
        l.conv.reset();
        return;
      }
    }
  }
  void enqueue_library(const Launch& l) {
    if (l.gemm) l.gemm->enqueue(stream_);
    if (l.conv) l.conv->enqueue(stream_);
  }
  // "cuDNN: X of Y convolutions (...)" when the plan has convolutions.
  std::string conv_notes() const {
    int convs = 0, lib = 0, epi = 0, wide = 0;
    for (auto& k : plan_.kernels) {
      convs += k.conv ? 1 : 0;
      wide += k.conv && k.acc_dtype() != plan_.buffers[k.conv->x_buffer].dtype ? 1 : 0;  // cuda_library_conv refuses these
    }
    for (auto& l : launches_)
      if (l.conv) ++lib, epi += l.fn ? 1 : 0;
    if (convs == 0) return "";
    std::string s = "cuDNN: " + std::to_string(lib) + " of " + std::to_string(convs) + " convolutions (" + std::to_string(lib - epi) +
                    " writing the output, bias and ReLU fused where they apply; " + std::to_string(epi) + " with a generated epilogue)";
    if (wide > 0)
      s += "; " + std::to_string(wide) + " fp16/bf16 with bias on the NVRTC template (their fp32 sum and bias round once; cuDNN returns the sum rounded)";
    return conv_note_.empty() ? s : s + "; " + conv_note_;
  }

  // Loads cuDNN when some kernel may use it and makes each call (choosing its algorithm);
  // where the library or a call is unavailable the kernel keeps the template (libs reset).
  // Allocates the workspace the chosen algorithms need.
  void make_conv_calls(std::vector<std::optional<LibraryConv>>& libs, std::vector<std::unique_ptr<Cudnn::Call>>& calls) {
    calls.resize(libs.size());
    if (std::none_of(libs.begin(), libs.end(), [](auto& c) { return c.has_value(); })) return;
    dnn_ = Cudnn::open();
    if (!dnn_->available()) {
      // E.g. no libcudnn.so.9 on the library path: the direct template runs every conv.
      conv_note_ = "cuDNN unavailable (" + dnn_->why() + "): convolutions use the NVRTC template";
      dnn_.reset();
      for (auto& c : libs) c.reset();
      return;
    }
    for (size_t i = 0; i < libs.size(); ++i) {
      if (!libs[i]) continue;
      for (int attempt = 0; attempt < 2 && libs[i] && !calls[i]; ++attempt) {
        try {
          calls[i] = dnn_->make_call(*libs[i], kConvWorkspaceMax);
          conv_workspace_bytes_ = std::max(conv_workspace_bytes_, calls[i]->workspace_bytes());
        } catch (const Error& e) {
          // No algorithm for the fused bias epilogue: try the plain conv + generated epilogue.
          conv_note_ = std::string(e.what()) + ": kernel " + plan_.kernels[i].name;
          if (libs[i]->fused()) {
            conv_note_ += " uses the generated epilogue";
            libs[i]->epilogue = LibraryConv::Epilogue::kernel;
            libs[i]->bias_buffer = libs[i]->out_buffer = -1;
          } else {
            conv_note_ += " uses the NVRTC template";
            libs[i].reset();
          }
        }
      }
    }
    if (conv_workspace_bytes_ > 0) FZ_CU(cuMemAlloc, &conv_workspace_, conv_workspace_bytes_);
  }

  // The library call of l, captured from the (idle) stream into a graph the caller owns.
  CUgraph capture_gemm(const Launch& l) {
    FZ_CU(cuStreamBeginCapture, stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    CUgraph g = nullptr;
    try {
      enqueue_library(l);
    } catch (...) {
      drv.cuStreamEndCapture(stream_, &g);
      if (g) drv.cuGraphDestroy(g);
      throw;
    }
    FZ_CU(cuStreamEndCapture, stream_, &g);
    return g;
  }

  void setup() {
    std::optional<PhaseScope> phase(std::in_place, "weight upload");
    FZ_CU(cuCtxSetCurrent, ctx_);
    FZ_CU(cuStreamCreate, &stream_, CU_STREAM_NON_BLOCKING);
    FZ_CU(cuEventCreate, &ev_start_, CU_EVENT_DEFAULT);
    FZ_CU(cuEventCreate, &ev_stop_, CU_EVENT_DEFAULT);
    if (plan_.arena_bytes > 0) {
      size_t total = 0;
      FZ_CU(cuDeviceTotalMem, &total, dev_);
      check_fits(static_cast<uint64_t>(plan_.arena_bytes), total, "the plan's arena", "the device's memory");
      FZ_CU(cuMemAlloc, &arena_, static_cast<size_t>(plan_.arena_bytes));
      // NaN-poison (0xFF bytes) so an element no kernel writes shows up in comparisons.
      FZ_CU(cuMemsetD8, arena_, 0xFF, static_cast<size_t>(plan_.arena_bytes));
    }
    constants_.assign(plan_.buffers.size(), 0);
    for (size_t b = 0; b < plan_.buffers.size(); ++b) {
      const Buffer& buf = plan_.buffers[b];
      if (buf.role != Buffer::Role::constant) continue;
      const Value& v = plan_.graph.values[buf.value];
      if (!v.constant) throw Error("cuda", "constant buffer '" + buf.name + "' has no value");
      const Tensor& t = *v.constant;
      if (t.dtype() == DType::string) throw Unsupported("cuda", "string constant '" + buf.name + "'");
      FZ_CU(cuMemAlloc, &constants_[b], std::max<size_t>(t.nbytes(), 4));
      if (t.nbytes()) FZ_CU(cuMemcpyHtoD, constants_[b], t.raw(), t.nbytes());
    }
    // The memset and pageable uploads above are legacy-stream work that the non-blocking
    // stream does not wait for.
    FZ_CU(cuCtxSynchronize);
    home_.resize(plan_.buffers.size());
    for (size_t b = 0; b < plan_.buffers.size(); ++b) home_[b] = addr(static_cast<int>(b));
    std::vector<char> movable(plan_.buffers.size(), 0);
    for (int b : plan_.input_buffers) movable[b] = 1;
    for (int b : plan_.output_buffers) movable[b] = 1;
    phase.emplace("libraries (cuBLASLt, cuDNN when a conv may use it)");
    const std::string arch = device_arch(drv, dev_);
    // cuBLASLt for the matmul kernels cuda_library_gemm picks, when the library loads; one
    // scratch for products (kernels run one after another) and one fixed workspace.
    // cuDNN likewise for conv kernels (cuda_library_conv); the scratch is shared.
    std::vector<std::optional<LibraryGemm>> libs(plan_.kernels.size());
    std::vector<std::optional<LibraryConv>> convs(plan_.kernels.size());
    std::vector<std::unique_ptr<Cudnn::Call>> conv_calls;
    for (size_t i = 0; i < plan_.kernels.size(); ++i) {
      libs[i] = cuda_library_gemm(plan_.kernels[i], plan_);
      convs[i] = cuda_library_conv(plan_.kernels[i], plan_);
    }
    make_conv_calls(convs, conv_calls);
    int64_t scratch = 0;  // bytes
    for (size_t i = 0; i < plan_.kernels.size(); ++i) {
      if (convs[i]) scratch = std::max(scratch, convs[i]->fused() ? convs[i]->output_bytes() : convs[i]->scratch_bytes());  // fused: in case it falls back
      if (libs[i]) scratch = std::max(scratch, libs[i]->scratch_elements() * 4);
    }
    if (std::any_of(libs.begin(), libs.end(), [](auto& g) { return g.has_value(); })) {
      lt_ = CublasLt::open();
      if (lt_->available()) {
        FZ_CU(cuMemAlloc, &gemm_workspace_, kGemmWorkspaceBytes);
      } else {
        lib_note_ = "cuBLASLt unavailable (" + lt_->why() + "): matmuls use the NVRTC template";
        lt_.reset();
        for (auto& g : libs) g.reset();
      }
    }
    if (scratch > 0 && (lt_ || dnn_)) FZ_CU(cuMemAlloc, &gemm_scratch_, static_cast<size_t>(scratch));
    // Phase 1 (serial, cheap): launch geometry and source of every kernel, in plan order.
    phase.emplace("launch setup + sources");
    std::vector<std::string> names, sources;
    for (size_t i = 0; i < plan_.kernels.size(); ++i) {
      const KernelSpec& k = plan_.kernels[i];
      Launch l;
      l.kernel = static_cast<int>(i);
      if (libs[i]) {
        l.lib = libs[i];
        try {
          l.gemm = lt_->make_call(*l.lib);
          prepare_gemm(l, home_);
        } catch (const Error& e) {  // e.g. no algorithm for this shape: the template runs it
          lib_note_ = std::string(e.what()) + ": kernel " + k.name + " uses the NVRTC template";
          l.lib.reset();
          l.gemm.reset();
        }
      }
      if (convs[i]) {
        l.conv_lib = convs[i];
        l.conv = std::move(conv_calls[i]);
        setup_conv(l, k);
      }
      const LibraryGemm* lib = l.lib ? &*l.lib : nullptr;
      const LibraryConv* conv = l.conv_lib ? &*l.conv_lib : nullptr;
      l.dims = cuda_launch_dims(k, plan_, lib, conv);
      if (l.dims.groups == 0) continue;  // empty iteration space
      names.push_back(kernel_identifier(k.name));
      sources.push_back(cuda_kernel_source(k, plan_, lib, conv));
      launches_.push_back(std::move(l));
    }
    // Phase 2 (parallel): NVRTC (or the disk cache), several kernels per program
    // (nvrtc_batch.h); the first failing kernel in plan order is the one reported.
    phase.emplace("CUBINs: disk cache or NVRTC");
    std::vector<NvrtcUnit> units = nvrtc_compile_batched(names, sources, arch);
    phase.emplace("cuModuleLoadData + arguments");
    // Phase 3 (serial): one module per program, then arguments in plan order.
    std::vector<CUmodule> module_of(sources.size(), nullptr);
    for (NvrtcUnit& u : units) {
      CUmodule m = nullptr;
      // A cached CUBIN passed its checksum, but if the driver still refuses it (e.g. written
      // by another toolkit build), recompile once rather than fail.
      if (drv.cuModuleLoadData(&m, u.cubin.data()) != CUDA_SUCCESS) {
        nvrtc_recompile(u, arch);
        FZ_CU(cuModuleLoadData, &m, u.cubin.data());
      }
      modules_.push_back(m);
      for (size_t j : u.kernels) module_of[j] = m;
    }
    for (size_t j = 0; j < launches_.size(); ++j) {
      Launch& l = launches_[j];
      const KernelSpec& k = plan_.kernels[l.kernel];
      const bool lib = l.lib || l.conv_lib;
      if (sources[j].empty()) continue;
      FZ_CU(cuModuleGetFunction, &l.fn, module_of[j], names[j].c_str());
      for (int b : kernel_bindings(k)) {
        if (movable[b]) l.movable.emplace_back(static_cast<int>(l.args.size()), b);
        l.args.push_back(home_[b]);
      }
      if (lib) l.args.push_back(gemm_scratch_);  // the epilogue's extra last parameter (product or conv output)
      if (kernel_checks_indices(k, plan_)) {       // the status word after the buffers
        if (!status_) FZ_CU(cuMemAlloc, &status_, 4);
        l.args.push_back(status_);
      }
    }
    for (auto& l : launches_)
      for (auto& a : l.args) l.argp.push_back(&a);
    phase.reset();
    if (replay_ && !launches_.empty()) {
      PhaseScope ps("record");
      build_graph();
    }
  }

  // Recorded once as a chain of kernel nodes (what capturing the one stream would give), built
  // explicitly so each launch keeps its node handle for later pointer updates. cuBLASLt calls
  // are captured from the stream into child-graph nodes. Replaces any previous graph.
  void build_graph() {
    if (exec_) drv.cuGraphExecDestroy(exec_), exec_ = nullptr;
    if (graph_) drv.cuGraphDestroy(graph_), graph_ = nullptr;
    FZ_CU(cuGraphCreate, &graph_, 0);
    CUgraphNode prev = nullptr;
    bool prev_kernel = false;  // prev is one of our kernel nodes (not a library call's child graph)
    programmatic_edges_ = 0;
    for (auto& l : launches_) {
      if (l.gemm || l.conv) {
        CUgraph child = capture_gemm(l);
        CUresult r = drv.cuGraphAddChildGraphNode(&l.gemm_node, graph_, prev ? &prev : nullptr, prev ? 1 : 0, child);
        drv.cuGraphDestroy(child);  // the node holds a copy
        drv.check(r, "cuGraphAddChildGraphNode");
        prev = l.gemm_node, prev_kernel = false;
      }
      if (!l.fn) continue;
      CUDA_KERNEL_NODE_PARAMS p = node_params(l);
      if (prev_kernel && pdl_) {
        // Programmatic edge: this kernel may be launched once every block of prev has exited
        // (prev never triggers early); its FZ_GRID_DEPENDENCY() (griddepcontrol.wait) then holds
        // it until prev has completed and its writes are visible.
        FZ_CU(cuGraphAddKernelNode, &l.node, graph_, nullptr, 0, &p);
        CUgraphEdgeData e{};
        e.from_port = CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC;
        e.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
        if (drv.cuGraphAddDependencies(graph_, &prev, &l.node, &e, 1) != CUDA_SUCCESS) return rebuild_without_pdl();
        ++programmatic_edges_;
      } else {
        FZ_CU(cuGraphAddKernelNode, &l.node, graph_, prev ? &prev : nullptr, prev ? 1 : 0, &p);
      }
      prev = l.node, prev_kernel = true;
    }
    if (programmatic_edges_ > 0 && drv.cuGraphInstantiate(&exec_, graph_, 0) != CUDA_SUCCESS) return rebuild_without_pdl();
    if (!exec_) FZ_CU(cuGraphInstantiate, &exec_, graph_, 0);
  }
  // A driver or device configuration that refuses programmatic edges (they need CUDA 12.3+ and
  // sm_90; MIG and virtualised GPUs may differ) gets the plain chain rather than an error.
  void rebuild_without_pdl() {
    pdl_ = false;
    exec_ = nullptr;
    build_graph();
  }

  void launch_all() {
    for (auto& l : launches_) {
      enqueue_library(l);
      if (l.fn)
        FZ_CU(cuLaunchKernel, l.fn, static_cast<unsigned>(l.dims.groups), 1, 1, static_cast<unsigned>(l.dims.group_size), 1, 1,
                             0, stream_, l.argp.data(), nullptr);
    }
  }

  // Best effort: destruction must not throw, and a failed call here has nobody to report to.
  void release() {
    if (!ctx_) return;
    drv.cuCtxSetCurrent(ctx_);
    if (stream_) drv.cuStreamSynchronize(stream_);
    if (exec_) drv.cuGraphExecDestroy(exec_);
    if (graph_) drv.cuGraphDestroy(graph_);
    launches_.clear();  // cuBLASLt / cuDNN calls before their library handles
    lt_.reset();
    dnn_.reset();
    if (conv_workspace_) drv.cuMemFree(conv_workspace_);
    if (gemm_scratch_) drv.cuMemFree(gemm_scratch_);
    if (gemm_workspace_) drv.cuMemFree(gemm_workspace_);
    for (auto m : modules_) drv.cuModuleUnload(m);
    for (auto c : constants_)
      if (c) drv.cuMemFree(c);
    if (arena_) drv.cuMemFree(arena_);
    if (status_) drv.cuMemFree(status_);
    if (ev_start_) drv.cuEventDestroy(ev_start_);
    if (ev_stop_) drv.cuEventDestroy(ev_stop_);
    if (stream_) drv.cuStreamDestroy(stream_);
    drv.cuDevicePrimaryCtxRelease(dev_);
    ctx_ = nullptr;
  }
};

class CudaBackend : public Backend {
 public:
  std::string name() const override { return "cuda"; }
  std::vector<DeviceInfo> devices() const override {
    const CudaDriver& drv = CudaDriver::get();
    std::vector<DeviceInfo> out;
    if (!drv.loaded || !drv.initialized) return out;
    int count = 0, version = 0;
    if (drv.cuDeviceGetCount(&count) != CUDA_SUCCESS) return out;
    drv.cuDriverGetVersion(&version);
    for (int i = 0; i < count; ++i) {
      CUdevice dev = 0;
      char name[256] = {0};
      int sms = 0;
      size_t mem = 0;
      if (drv.cuDeviceGet(&dev, i) != CUDA_SUCCESS) continue;
      drv.cuDeviceGetName(name, sizeof name - 1, dev);
      drv.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
      drv.cuDeviceTotalMem(&mem, dev);
      std::string arch;
      try {
        arch = device_arch(drv, dev);
      } catch (const Error&) {
        arch = "sm_?";
      }
      out.push_back({name, arch + ", " + std::to_string(sms) + " SMs, " + std::to_string(mem >> 20) + " MiB, driver " +
                               std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10),
                     ""});  // CUDA keeps denormals, signed zeros, infinities and NaNs (no fast-math)
    }
    return out;
  }
  std::unique_ptr<Executable> compile(const Graph& g, const CompileOptions& opts) override {
    {
      PhaseScope ps("driver (dlopen libcuda, cuInit)");  // once per process
      CudaDriver::get();
    }
    return std::make_unique<CudaExecutableImpl>(g, opts);
  }
  // cuInit, the device's primary context (held until this backend is destroyed, so the
  // executables compile() makes retain it instead of creating it) and libcublasLt loaded.
  // cuDNN is not loaded here: only a plan with a convolution on it needs it.
  void prepare(const CompileOptions& opts) noexcept override {
    const CudaDriver& drv = CudaDriver::get();
    if (!drv.loaded || !drv.initialized || prepared_ctx_) return;
    int count = 0;
    CUdevice dev = 0;
    if (drv.cuDeviceGetCount(&count) != CUDA_SUCCESS || opts.device < 0 || opts.device >= count) return;
    if (drv.cuDeviceGet(&dev, opts.device) != CUDA_SUCCESS) return;
    CUcontext ctx = nullptr;
    if (drv.cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS) return;
    prepared_ctx_ = ctx, prepared_dev_ = dev;
    CublasLt::preload();
  }
  ~CudaBackend() override {
    if (prepared_ctx_) CudaDriver::get().cuDevicePrimaryCtxRelease(prepared_dev_);
  }
  // The constructor's first steps (plan + every source) without the device, so host fallback
  // can place nodes on a machine with no GPU too.
  std::string unsupported(const Graph& g, const CompileOptions& opts) override {
    try {
      cuda_generate_sources(build_plan(g, fusion_options(opts)));
    } catch (const Unsupported& e) {
      return e.what();
    }
    return "";
  }

 private:
  CUcontext prepared_ctx_ = nullptr;
  CUdevice prepared_dev_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend() { return std::make_unique<CudaBackend>(); }

}  // namespace fusor
