// The CUDA backend (DESIGN.md: the reference GPU path). Kernels come from the shared emitter
// (backends/codegen.h) with the CUDA dialect below, are compiled with NVRTC to a CUBIN for the
// device's arch and cached on disk; the driver is loaded at run time with dlopen, so a binary
// built with this backend starts (and reports "no CUDA device") on machines without one.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/backend.h"
#include "backends/codegen.h"
#include "backends/cuda/cuda_conv.h"
#include "backends/cuda/cuda_gemm.h"

namespace fusor {

std::unique_ptr<Backend> make_cuda_backend();

// What make_backend("cuda")->compile(...) returns: an Executable that can also run on
// caller-owned device memory. Get it with a dynamic_cast (never null for the cuda backend):
//   auto exe = make_backend("cuda")->compile(g, opts);
//   auto* cu = dynamic_cast<CudaExecutable*>(exe.get());
// Device pointers are CUdeviceptr values carried as uint64_t (this header does not include
// cuda.h). An executable lives in the primary context of CompileOptions::device; pointers
// passed to it must be device memory of that context (cuMemAlloc, cudaMalloc on that device,
// or device_alloc below). Not thread-safe: one call at a time per executable.
class CudaExecutable : public Executable {
 public:
  // One graph input or output as run_device expects it: a dense row-major buffer of `nbytes`
  // bytes (bool is one byte per element, f16 two).
  struct BufferDesc {
    std::string name;
    DType dtype = DType::f32;
    Shape shape;
    int64_t nbytes = 0;
  };
  virtual const std::vector<BufferDesc>& input_descs() const = 0;   // graph-input order
  virtual const std::vector<BufferDesc>& output_descs() const = 0;  // graph-output order

  // Runs the program reading graph input i from inputs[i] and writing graph output i to
  // outputs[i] directly (no staging through the executable's arena); returns when every
  // output is written (the executable's stream is synchronised). Contract:
  //   * inputs[i] / outputs[i] hold input_descs()[i] / output_descs()[i] (nbytes each; a
  //     pointer may be 0 only for a 0-byte buffer); inputs are only read, never written;
  //   * an output buffer must not overlap any other input or output buffer (inputs may
  //     overlap each other); the caller's writes to the inputs must be complete (e.g. its
  //     stream synchronised) before the call.
  // Kernels take every buffer as its own pointer parameter. Replay mode: the kernel nodes of
  // the instantiated CUDA graph whose input/output pointers differ from the previous run
  // (run_device or run) are updated with cuGraphExecKernelNodeSetParams before the launch;
  // nodes whose pointers are unchanged are not touched, so alternating between buffer sets
  // never replays a stale pointer and repeating one set costs no update. Eager mode launches
  // with the new pointers. An output that no kernel writes (it is a graph input or a
  // constant, or the same value appears as two outputs) is copied there with
  // cuMemcpyDtoDAsync. run() (host tensors) keeps working before and after: it rebinds the
  // arena's input/output slots the same way. Throws Error("run") for bad arguments,
  // Error("cuda") for a device failure.
  // The replay graph is one chain; an edge between two generated kernels is programmatic
  // (programmatic dependent launch, CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC) on sm_90+ with a
  // CUDA 12.3+ driver, so the next kernel is launched as the previous one's blocks retire and
  // waits in its first statement (griddepcontrol.wait) for that kernel's writes: H100 MLP b1
  // 15.6 vs 16.4 us, mobilenet_v3_small 246 vs 269 us (docs/benchmarks.md, thirty-fourth
  // session). Edges to and from cuBLASLt / cuDNN calls stay full dependencies. notes() counts
  // the programmatic edges; FUSOR_CUDA_PDL=0 (read when the executable is built) turns them off.
  virtual void run_device(const std::vector<uint64_t>& inputs, const std::vector<uint64_t>& outputs,
                          RunStats* stats = nullptr) = 0;
  // Kernel nodes re-parameterised so far (always 0 in eager mode); for tests and profiling.
  virtual int64_t node_updates() const = 0;

  // Helpers (tests, examples) in this executable's context, synchronous on its stream.
  // device_alloc(0) returns 0; device_free(0) does nothing. copy_from_device reads
  // numel(shape) * size(dtype) bytes into a new tensor. Throw Error("cuda") on failure.
  virtual uint64_t device_alloc(size_t bytes) = 0;
  virtual void device_free(uint64_t ptr) = 0;
  virtual void copy_to_device(uint64_t dst, const Tensor& src) = 0;
  virtual Tensor copy_from_device(uint64_t src, DType dtype, const Shape& shape) = 0;
};

// The CUDA C dialect: bool buffers are uint8, f16 is __half (cuda_fp16.h), other ints are their
// C types; matmul is a GEMV-like kernel for M <= 8, else a 64x64-tile shared-memory SGEMM
// with a deterministic split-K when tiles are few. GEMV knobs (read when a kernel is generated):
// FUSOR_CUDA_GEMV=old|new (old, the default: the first kernel; new: the vector GEMV, slower on
// the H200 at fp32 (docs/gemv.md), 4 columns a thread read with one
// 16-byte fp32 / 8-byte fp16 or bf16 load where B's N has unit stride and the 4-group is
// aligned, K split over blocks through the split-K workspace and counters when the column strips
// give fewer than 528 blocks; old: 1024 threads on 16 columns, scalar loads),
// FUSOR_CUDA_GEMV_SPLIT=S (new: 0/unset automatic, 1 off, 2..64 forced), FUSOR_CUDA_GEMV_COLS
// (new: 16..128, default 64; old: 16|32|64, default 16), FUSOR_CUDA_GEMV_THREADS (new: 64..1024,
// default 256); conv is a direct loop (all with the
// emitter's epilogue spliced in through FZ_EPILOGUE).
const Dialect& cuda_dialect();

// The CUDA source of kernel k as the backend runs it. library == conv == nullptr: the kernel
// itself (matmul kernels through the SGEMM template, conv kernels through the direct template).
// library = cuda_library_gemm(k, p): the epilogue kernel that follows the cuBLASLt call, taking
// one extra last parameter (const float*, the product), or "" when cuBLASLt's own epilogue
// writes the output (no kernel). conv = cuda_library_conv(k, p): likewise after the cuDNN
// call, the extra parameter being the conv output in the operands' dtype (const float*,
// const __half* or const unsigned short* for bf16), or "" when cuDNN writes the output itself.
// Needs no GPU; throws Unsupported for a kernel the emitter cannot generate (e.g. an
// unsupported opaque op).
std::string cuda_kernel_source(const KernelSpec& k, const Plan& p, const LibraryGemm* library, const LibraryConv* conv = nullptr);
LaunchDims cuda_launch_dims(const KernelSpec& k, const Plan& p, const LibraryGemm* library, const LibraryConv* conv = nullptr);

// (kernel identifier, cuda_kernel_source) for every kernel of the plan, in plan order, with
// cuBLASLt where cuda_library_gemm chooses it and cuDNN where cuda_library_conv does (so a
// source may be ""; so is a kernel with an empty iteration space, which launches nothing).
// Needs no GPU.
std::vector<std::pair<std::string, std::string>> cuda_generate_sources(const Plan& p);

// Compiles src with NVRTC for `arch` ("sm_90"); throws Error("cuda", "nvrtcCompileProgram: <name>:
// <log>") on failure. Needs no GPU.
void nvrtc_compile_check(const std::string& src, const std::string& name, const std::string& arch = "sm_90");

// CUBIN for src, from the disk cache ($XDG_CACHE_HOME/fusor/cuda or ~/.cache/fusor/cuda, entry
// keyed by source + arch + NVRTC version, verified on read as runtime/disk_cache.h describes)
// or freshly compiled with NVRTC and stored there. use_cache=false skips the read (the caller
// saw the driver refuse a cached CUBIN) but still stores the fresh one. Needs no GPU.
std::vector<char> nvrtc_cubin(const std::string& src, const std::string& name, const std::string& arch,
                              bool use_cache = true);
// The disk-cache key of src for arch (the text an entry must store; see runtime/disk_cache.h).
std::string nvrtc_cache_key(const std::string& src, const std::string& arch);

}  // namespace fusor
