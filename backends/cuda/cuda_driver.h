// The CUDA driver API, loaded with dlopen("libcuda.so.1") so that the binary starts without a
// driver. Types come from cuda.h; every entry point is resolved by its versioned symbol name
// (the one cuda.h's macros map to, e.g. cuMemAlloc -> cuMemAlloc_v2).
#pragma once
#include <cuda.h>

#include <array>
#include <cstdint>
#include <string>

namespace fusor {

struct CudaDriver {
  bool loaded = false;
  std::string why;  // when !loaded: "libcuda.so.1 not found" or the missing symbol

#define FZ_CU_FN(fn) decltype(&::fn) fn = nullptr;
  FZ_CU_FN(cuInit)
  FZ_CU_FN(cuDriverGetVersion)
  FZ_CU_FN(cuGetErrorName)
  FZ_CU_FN(cuDeviceGetCount)
  FZ_CU_FN(cuDeviceGet)
  FZ_CU_FN(cuDeviceGetName)
  FZ_CU_FN(cuDeviceGetAttribute)
  FZ_CU_FN(cuDeviceTotalMem)
  FZ_CU_FN(cuDeviceGetUuid)
  FZ_CU_FN(cuDevicePrimaryCtxRetain)
  FZ_CU_FN(cuDevicePrimaryCtxRelease)
  FZ_CU_FN(cuCtxSetCurrent)
  FZ_CU_FN(cuCtxSynchronize)
  FZ_CU_FN(cuModuleLoadData)
  FZ_CU_FN(cuModuleUnload)
  FZ_CU_FN(cuModuleGetFunction)
  FZ_CU_FN(cuLaunchKernel)
  FZ_CU_FN(cuMemAlloc)
  FZ_CU_FN(cuMemFree)
  FZ_CU_FN(cuMemsetD8)
  FZ_CU_FN(cuMemcpyHtoD)
  FZ_CU_FN(cuMemcpyHtoDAsync)
  FZ_CU_FN(cuMemcpyDtoHAsync)
  FZ_CU_FN(cuMemcpyDtoDAsync)
  FZ_CU_FN(cuStreamCreate)
  FZ_CU_FN(cuStreamDestroy)
  FZ_CU_FN(cuStreamSynchronize)
  FZ_CU_FN(cuGraphCreate)
  FZ_CU_FN(cuGraphAddKernelNode)
  FZ_CU_FN(cuGraphExecKernelNodeSetParams)
  FZ_CU_FN(cuGraphAddChildGraphNode)
  FZ_CU_FN(cuGraphExecChildGraphNodeSetParams)
  FZ_CU_FN(cuStreamBeginCapture)
  FZ_CU_FN(cuStreamEndCapture)
  FZ_CU_FN(cuGraphInstantiate)
  FZ_CU_FN(cuGraphLaunch)
  FZ_CU_FN(cuGraphDestroy)
  FZ_CU_FN(cuGraphExecDestroy)
  FZ_CU_FN(cuEventCreate)
  FZ_CU_FN(cuEventRecord)
  FZ_CU_FN(cuEventSynchronize)
  FZ_CU_FN(cuEventElapsedTime)
  FZ_CU_FN(cuEventDestroy)
  FZ_CU_FN(cuMemsetD8Async)
#undef FZ_CU_FN
  // Optional (CUDA 12.3+ drivers; null otherwise): cuGraphAddDependencies_v2, edges with data,
  // for the programmatic (PDL) edges between kernel nodes of the replay graph. Spelled out:
  // before CUDA 13 the header's plain name is the v1 entry point without edge data.
  CUresult (*cuGraphAddDependencies)(CUgraph, const CUgraphNode*, const CUgraphNode*, const CUgraphEdgeData*, size_t) = nullptr;

  // The process-wide instance; loads (and cuInit's) once. Never throws.
  static const CudaDriver& get();
  // Every entry point resolved from `library` (dlopen), without cuInit: loaded, or why names
  // the library or the first missing symbol. get() uses it on libcuda.so.1; tests on the CUDA
  // toolkit's stub (lib64/stubs/libcuda.so), so a misspelt symbol fails without a GPU.
  static CudaDriver symbols_of(const char* library);
  // Throws Error("cuda", "<call>: CUDA_ERROR_...") when r != CUDA_SUCCESS.
  void check(CUresult r, const char* call) const;
  // Whether cuInit succeeded (a driver without a GPU loads but has no device); `init_error`
  // holds "cuInit: CUDA_ERROR_NO_DEVICE" otherwise.
  bool initialized = false;
  std::string init_error;
};

// Retains (for the rest of the process, never released) the primary context of the CUDA device
// whose UUID is `uuid` -- a Vulkan device's deviceUUID -- so that the NVIDIA driver keeps that
// GPU in its compute performance state while fusor's Vulkan backend runs on it: on the H200,
// memory-bound Vulkan kernels ran 4-5x slower without any CUDA context on the GPU (W2 Softmax
// 914 vs 180 us, LayerNorm 540 vs 138 us; docs/benchmarks.md, tenth session). Once per UUID per
// process; returns whether a context is held. Never throws: no driver, no device with that UUID,
// a compute mode other than the default (exclusive-process: one context slot) or a failed
// retain returns false. The context costs device memory (the driver's reservation per context).
bool hold_cuda_primary_context(const std::array<uint8_t, 16>& uuid) noexcept;

}  // namespace fusor
