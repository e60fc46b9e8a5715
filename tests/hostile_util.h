// Helpers of the hostile-input tests (tests/test_hostile_*.cpp): a model loaded, specialised
// on seeded inputs and planned; which backends have a device here; one hostile input run on
// every backend present, expecting one error or ref's values.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "frontend/onnx_import.h"
#include "ir/passes.h"
#include "test_util.h"

namespace fusor::hostile {

inline Graph load_and_plan(const std::string& bytes) {
  Graph g = load_onnx_from_bytes(bytes, ".");
  auto in = random_inputs(g, 1);
  Graph sg = specialize(g, in);
  build_plan(sg);
  return sg;
}

inline bool has_device(const std::string& name) {
  auto names = backend_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) return false;
  try {
    return !make_backend(name)->devices().empty();
  } catch (const Error&) {
    return false;
  }
}

// Runs sg on every backend present; each must end in an error containing `want`.
inline void expect_error_everywhere(const Graph& sg, const std::vector<Tensor>& in, const std::string& want) {
  for (const std::string backend : {"ref", "cpu", "vulkan", "cuda"}) {
    if (!has_device(backend)) continue;
    const std::string m = testing::error_of([&] { run_on_backend(backend, sg, in); });
    EXPECT_NE(m.find(want), std::string::npos) << backend << ": '" << m << "'";
    EXPECT_EQ(m.find('\n'), std::string::npos) << backend << ": '" << m << "'";
  }
}

// Runs sg on every backend present and compares each with ref (relative tolerance rtol).
inline void expect_same_everywhere(const Graph& sg, const std::vector<Tensor>& in, double rtol = 1e-6) {
  const std::vector<Tensor> want = run_on_backend("ref", sg, in);
  for (const std::string backend : {"cpu", "vulkan", "cuda"}) {
    if (!has_device(backend)) continue;
    std::vector<Tensor> got = run_on_backend(backend, sg, in);
    ASSERT_EQ(got.size(), want.size()) << backend;
    for (size_t k = 0; k < got.size(); ++k) {
      ASSERT_EQ(got[k].shape(), want[k].shape()) << backend;
      for (int64_t i = 0; i < got[k].numel(); ++i)
        EXPECT_NEAR(got[k].get(i), want[k].get(i), rtol * (1.0 + std::abs(want[k].get(i)))) << backend << " output " << k << " at " << i;
    }
  }
}

}  // namespace fusor::hostile
