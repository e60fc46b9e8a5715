// Shared by the CUDA library-call tests (test_cuda_gemm.cpp, test_cuda_conv.cpp): building a
// case's graph in its dtype, and the caller-owned-buffer path of a compiled CUDA executable,
// which must follow new pointers between replays of a captured library call (needs a device).
#pragma once
#ifdef FUSOR_HAVE_CUDA
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "frontend/builder.h"
#include "ir/passes.h"

#include "backends/cuda/cuda_backend.h"
#include "test_util.h"

namespace fusor {

// The static graph `build` makes while `current` (the file's dtype for its input/constant
// helpers) is `dtype`, and seeded random inputs of that dtype.
inline std::pair<Graph, std::vector<Tensor>> build_typed_case(const std::function<void(GraphBuilder&)>& build, DType dtype,
                                                              DType& current, uint64_t seed) {
  GraphBuilder b;
  current = dtype;
  build(b);
  current = DType::f32;
  Graph g = b.build();
  make_static(g, {});
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < g.inputs.size(); ++i) inputs.push_back(testing::random_tensor(dtype, g.values[g.inputs[i]].shape, seed + i));
  return {std::move(g), std::move(inputs)};
}

// Copies `inputs` to device buffers and runs exe into two poisoned output buffers in turn
// (o1, o2, o1), comparing each with `want` (relative L2 <= tol); frees what it allocated.
inline void expect_run_device_matches(Executable& exe, const std::vector<Tensor>& inputs, const Tensor& want, double tol) {
  auto* cu = dynamic_cast<CudaExecutable*>(&exe);
  ASSERT_NE(cu, nullptr) << "not a CUDA executable";
  std::vector<uint64_t> ins;
  for (auto& t : inputs) {
    ins.push_back(cu->device_alloc(t.nbytes()));
    cu->copy_to_device(ins.back(), t);
  }
  const auto& od = cu->output_descs()[0];
  const uint64_t o1 = cu->device_alloc(od.nbytes), o2 = cu->device_alloc(od.nbytes);
  for (uint64_t out : {o1, o2, o1}) {
    Tensor poison(want.dtype(), od.shape);
    poison.poison();
    cu->copy_to_device(out, poison);
    cu->run_device(ins, {out});
    EXPECT_LE(relative_l2(cu->copy_from_device(out, want.dtype(), od.shape), want), tol) << "run_device";
  }
  for (auto p : ins) cu->device_free(p);
  cu->device_free(o1);
  cu->device_free(o2);
}

}  // namespace fusor
#endif
