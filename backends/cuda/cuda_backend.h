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

namespace fusor {

std::unique_ptr<Backend> make_cuda_backend();

// The CUDA C dialect: bool buffers are uint8, f16 is __half (cuda_fp16.h), other ints are their
// C types; matmul is a GEMV-like kernel for M <= 8, else a 64x64-tile shared-memory SGEMM
// with a deterministic split-K when tiles are few; conv is a direct loop (all with the
// emitter's epilogue spliced in through FZ_EPILOGUE).
const Dialect& cuda_dialect();

// (kernel identifier, CUDA source) for every kernel of the plan, in plan order. Needs no GPU.
// Throws Unsupported for a kernel the emitter cannot generate (e.g. an unsupported opaque op).
std::vector<std::pair<std::string, std::string>> cuda_generate_sources(const Plan& p);

// Compiles src with NVRTC for `arch` ("sm_90"); throws Error("cuda", "nvrtcCompileProgram: <name>:
// <log>") on failure. Needs no GPU.
void nvrtc_compile_check(const std::string& src, const std::string& name, const std::string& arch = "sm_90");

// CUBIN for src, from the disk cache ($XDG_CACHE_HOME/fusor/cuda or ~/.cache/fusor/cuda, keyed
// by a hash of source + arch + NVRTC version) or freshly compiled and stored there.
std::vector<char> nvrtc_cubin(const std::string& src, const std::string& name, const std::string& arch);

}  // namespace fusor
