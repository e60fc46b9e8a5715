// Without a GPU the generated CUDA C is still checked: every kernel of a graph's plan compiles
// with NVRTC (no driver needed). Shared by the numerics and GPU-op tests.
#pragma once
#ifdef FUSOR_HAVE_CUDA
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "backends/codegen.h"
#include "backends/cuda/cuda_backend.h"
#include "ir/passes.h"

namespace fusor::testing {

// Compiles each CUDA kernel of static graph sg's plan; a compile error fails the test (name
// says which case). A kernel the CUDA emitter refuses is printed as skipped, or fails the test
// when refusal_fails (an op that must run on the GPU).
inline void expect_cuda_kernels_compile(const Graph& sg, const std::string& name, bool refusal_fails = false) {
  const Plan p = build_plan(sg);
  for (const KernelSpec& k : p.kernels) {
    std::string src;
    try {
      src = cuda_kernel_source(k, p, nullptr);
      if (!src.empty()) nvrtc_compile_check(src, kernel_identifier(k.name));
    } catch (const Unsupported& e) {
      if (refusal_fails) ADD_FAILURE() << name << " cuda: " << e.what();
      else std::printf("%s on cuda: skipped: %s\n", name.c_str(), e.what());
    } catch (const Error& e) {
      ADD_FAILURE() << name << " cuda: " << e.what() << "\n" << src;
    }
  }
}

}  // namespace fusor::testing
#endif
