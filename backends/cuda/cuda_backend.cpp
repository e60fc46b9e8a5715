// Backend "cuda": compile = build_plan + emit + NVRTC per kernel, one device arena, constants
// uploaded once, the launch sequence captured once into a CUDA Graph; run = HtoD inputs, one
// graph launch (or eager launches), DtoH outputs.
#include <dlfcn.h>

#include <chrono>
#include <cstring>
#include <type_traits>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_driver.h"

namespace fusor {

// ---- driver ------------------------------------------------------------------------------------

const CudaDriver& CudaDriver::get() {
  static const CudaDriver d = [] {
    CudaDriver d;
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      d.why = "libcuda.so.1 not found";
      return d;
    }
    // Symbol names are the versioned ones cuda.h maps the plain names to.
    auto sym = [&](auto& fn, const char* name, const char* fallback = nullptr) {
      void* p = dlsym(h, name);
      if (!p && fallback) p = dlsym(h, fallback);
      if (!p && d.why.empty()) d.why = std::string("libcuda.so.1 lacks ") + name;
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
    sym(d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    sym(d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    sym(d.cuCtxSetCurrent, "cuCtxSetCurrent");
    sym(d.cuModuleLoadData, "cuModuleLoadData");
    sym(d.cuModuleUnload, "cuModuleUnload");
    sym(d.cuModuleGetFunction, "cuModuleGetFunction");
    sym(d.cuLaunchKernel, "cuLaunchKernel");
    sym(d.cuMemAlloc, "cuMemAlloc_v2");
    sym(d.cuMemFree, "cuMemFree_v2");
    sym(d.cuMemsetD8, "cuMemsetD8_v2");
    sym(d.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
    sym(d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
    sym(d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
    sym(d.cuStreamCreate, "cuStreamCreate");
    sym(d.cuStreamDestroy, "cuStreamDestroy_v2");
    sym(d.cuStreamSynchronize, "cuStreamSynchronize");
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
    d.loaded = true;
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

class CudaExecutable : public Executable {
 public:
  CudaExecutable(const Graph& g, const CompileOptions& opts) : drv(driver_or_throw()), replay_(opts.replay) {
    FusionOptions fo;
    fo.fuse = opts.fusion;
    plan_ = build_plan(g, fo);
    // Generate every source before touching the device so Unsupported costs nothing.
    auto sources = cuda_generate_sources(plan_);
    int count = 0;
    FZ_CU(cuDeviceGetCount, &count);
    if (opts.device < 0 || opts.device >= count)
      throw Error("cuda", "device " + std::to_string(opts.device) + " does not exist (" + std::to_string(count) + " found)");
    FZ_CU(cuDeviceGet, &dev_, opts.device);
    FZ_CU(cuDevicePrimaryCtxRetain, &ctx_, dev_);
    try {
      setup(sources);
    } catch (...) {
      release();
      throw;
    }
  }
  ~CudaExecutable() override { release(); }

  int kernel_count() const override { return static_cast<int>(launches_.size()); }

  std::vector<Tensor> run(const std::vector<Tensor>& inputs, RunStats* stats) override {
    auto t0 = std::chrono::steady_clock::now();
    FZ_CU(cuCtxSetCurrent, ctx_);
    const Graph& g = plan_.graph;
    if (inputs.size() != g.inputs.size())
      throw Error("run", "expected " + std::to_string(g.inputs.size()) + " inputs, got " + std::to_string(inputs.size()));
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Buffer& b = plan_.buffers[plan_.input_buffers[i]];
      if (inputs[i].dtype() != b.dtype || inputs[i].shape() != b.shape)
        throw Error("run", "input '" + b.name + "' expects " + dtype_name(b.dtype) + " " + shape_str(b.shape) + ", got " +
                               dtype_name(inputs[i].dtype()) + " " + shape_str(inputs[i].shape()));
      if (inputs[i].nbytes()) FZ_CU(cuMemcpyHtoDAsync, addr(plan_.input_buffers[i]), inputs[i].raw(), inputs[i].nbytes(), stream_);
    }
    FZ_CU(cuEventRecord, ev_start_, stream_);
    if (replay_ && exec_) FZ_CU(cuGraphLaunch, exec_, stream_);
    else launch_all();
    FZ_CU(cuEventRecord, ev_stop_, stream_);
    std::vector<Tensor> outs;
    for (int ob : plan_.output_buffers) {
      const Buffer& b = plan_.buffers[ob];
      outs.emplace_back(b.dtype, b.shape);
      if (outs.back().nbytes()) FZ_CU(cuMemcpyDtoHAsync, outs.back().raw(), addr(ob), outs.back().nbytes(), stream_);
    }
    FZ_CU(cuStreamSynchronize, stream_);
    if (stats) {
      float ms = 0;
      FZ_CU(cuEventElapsedTime, &ms, ev_start_, ev_stop_);
      stats->device_us = ms * 1000.0;
      stats->host_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    }
    return outs;
  }

 private:
  struct Launch {
    CUfunction fn = nullptr;
    LaunchDims dims;
    std::vector<CUdeviceptr> args;
    std::vector<void*> argp;  // points into args (stable: args is never resized after setup)
  };

  const CudaDriver& drv;
  bool replay_;
  Plan plan_;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  CUstream stream_ = nullptr;
  CUevent ev_start_ = nullptr, ev_stop_ = nullptr;
  CUdeviceptr arena_ = 0;
  std::vector<CUdeviceptr> constants_;  // per buffer; 0 for non-constants
  std::vector<CUmodule> modules_;
  std::vector<Launch> launches_;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;

  CUdeviceptr addr(int b) const {
    const Buffer& buf = plan_.buffers[b];
    if (buf.role == Buffer::Role::constant) return constants_[b];
    return arena_ + static_cast<CUdeviceptr>(buf.offset < 0 ? 0 : buf.offset);
  }

  void setup(const std::vector<std::pair<std::string, std::string>>& sources) {
    FZ_CU(cuCtxSetCurrent, ctx_);
    FZ_CU(cuStreamCreate, &stream_, CU_STREAM_NON_BLOCKING);
    FZ_CU(cuEventCreate, &ev_start_, CU_EVENT_DEFAULT);
    FZ_CU(cuEventCreate, &ev_stop_, CU_EVENT_DEFAULT);
    if (plan_.arena_bytes > 0) {
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
    const std::string arch = device_arch(drv, dev_);
    for (size_t i = 0; i < plan_.kernels.size(); ++i) {
      const KernelSpec& k = plan_.kernels[i];
      Launch l;
      l.dims = launch_dims(k, plan_, cuda_dialect());
      if (l.dims.groups == 0) continue;  // empty iteration space
      std::vector<char> cubin = nvrtc_cubin(sources[i].second, sources[i].first, arch);
      CUmodule m = nullptr;
      FZ_CU(cuModuleLoadData, &m, cubin.data());
      modules_.push_back(m);
      FZ_CU(cuModuleGetFunction, &l.fn, m, sources[i].first.c_str());
      for (int b : kernel_bindings(k)) l.args.push_back(addr(b));
      launches_.push_back(std::move(l));
    }
    for (auto& l : launches_)
      for (auto& a : l.args) l.argp.push_back(&a);
    if (replay_ && !launches_.empty()) {
      // Pointers never change between runs, so the sequence is recorded once and replayed.
      FZ_CU(cuStreamBeginCapture, stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
      try {
        launch_all();
      } catch (...) {
        CUgraph g = nullptr;
        drv.cuStreamEndCapture(stream_, &g);
        if (g) drv.cuGraphDestroy(g);
        throw;
      }
      FZ_CU(cuStreamEndCapture, stream_, &graph_);
      FZ_CU(cuGraphInstantiate, &exec_, graph_, 0);
    }
  }

  void launch_all() {
    for (auto& l : launches_)
      FZ_CU(cuLaunchKernel, l.fn, static_cast<unsigned>(l.dims.groups), 1, 1, static_cast<unsigned>(l.dims.group_size), 1, 1,
                           0, stream_, l.argp.data(), nullptr);
  }

  // Best effort: destruction must not throw, and a failed call here has nobody to report to.
  void release() {
    if (!ctx_) return;
    drv.cuCtxSetCurrent(ctx_);
    if (stream_) drv.cuStreamSynchronize(stream_);
    if (exec_) drv.cuGraphExecDestroy(exec_);
    if (graph_) drv.cuGraphDestroy(graph_);
    for (auto m : modules_) drv.cuModuleUnload(m);
    for (auto c : constants_)
      if (c) drv.cuMemFree(c);
    if (arena_) drv.cuMemFree(arena_);
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
                               std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10)});
    }
    return out;
  }
  std::unique_ptr<Executable> compile(const Graph& g, const CompileOptions& opts) override {
    return std::make_unique<CudaExecutable>(g, opts);
  }
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend() { return std::make_unique<CudaBackend>(); }

}  // namespace fusor
