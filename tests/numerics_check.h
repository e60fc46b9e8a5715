// Helpers shared by the exact-numerics tests (tests/test_numerics*.cpp): run a one-output graph
// on every backend (graph inputs and constants; fused and unfused) and compare bit for bit.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "ir/passes.h"
#include "runtime/session.h"
#include "test_util.h"
#include "nvrtc_check.h"

namespace fusor::numerics_check {

using testing::ints_of;
using testing::random_tensor;
using testing::tensor_of;

inline bool has_device(const std::string& name) {
  auto names = backend_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) return false;
  return !make_backend(name)->devices().empty();
}

inline std::string bits_str(const Tensor& t) {
  std::string s;
  for (int64_t i = 0; i < t.numel() && i < 8; ++i) {
    if (dtype_is_integral(t.dtype())) s += std::to_string(t.get_int(i)) + " ";
    else {
      char b[64];
      std::snprintf(b, sizeof b, "%.17g ", t.get(i));
      s += b;
    }
  }
  return s;
}

// NaNs of any sign and payload are equal (the sign of inf - inf is the hardware's); the rest
// compares bit for bit.
inline void expect_bits(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  Tensor g = got, w = want;
  if (dtype_is_float(want.dtype()))
    for (int64_t i = 0; i < w.numel(); ++i)
      if (std::isnan(g.get(i)) && std::isnan(w.get(i))) g.set(i, 0.0), w.set(i, 0.0);
  EXPECT_EQ(0, std::memcmp(g.raw(), w.raw(), w.nbytes())) << what << ": got " << bits_str(got) << " want " << bits_str(want);
}

// A one-output graph built by f over its inputs (graph inputs or constants).
using Build = std::function<int(GraphBuilder&, const std::vector<int>&)>;

inline Graph make_graph(const std::vector<Tensor>& in, const Build& f, bool as_constants) {
  GraphBuilder b("numerics", 18);
  std::vector<int> ids;
  for (size_t i = 0; i < in.size(); ++i)
    ids.push_back(as_constants ? b.constant("c" + std::to_string(i), in[i]) : b.input("x" + std::to_string(i), in[i].dtype(), in[i].shape()));
  b.output(f(b, ids));
  return b.build();
}

// Runs the case everywhere it can and compares every result with `want` bit for bit. A backend
// in `skip` (backend -> reason) is skipped with its reason printed.
inline void check_everywhere(const std::string& name, const std::vector<Tensor>& in, const Build& f, const Tensor& want,
                      const std::map<std::string, std::string>& skip = {}) {
  for (bool as_constants : {false, true}) {
    Graph model = make_graph(in, f, as_constants);
    const std::vector<Tensor> feed = as_constants ? std::vector<Tensor>{} : in;
    const std::string mode = as_constants ? " (constants)" : " (inputs)";
    Graph sg = specialize(model, feed);
    for (const std::string backend : {"ref", "cpu", "vulkan", "cuda"}) {
      if (!has_device(backend)) continue;
      if (auto it = skip.find(backend); it != skip.end()) {
        std::printf("%s%s on %s: skipped: %s\n", name.c_str(), mode.c_str(), backend.c_str(), it->second.c_str());
        continue;
      }
      for (bool fusion : {true, false}) {
        if (backend == "ref" && !fusion) continue;
        CompileOptions o;
        o.fusion = fusion;
        try {
          auto out = run_on_backend(backend, sg, feed, o);
          ASSERT_EQ(out.size(), 1u);
          expect_bits(out[0], want, name + mode + " on " + backend + (fusion ? "" : " unfused"));
        } catch (const Unsupported& e) {
          std::printf("%s%s on %s: skipped: %s\n", name.c_str(), mode.c_str(), backend.c_str(), e.what());
        }
      }
    }
#ifdef FUSOR_HAVE_CUDA
    if (!has_device("cuda")) testing::expect_cuda_kernels_compile(sg, name + mode);  // no GPU: the CUDA C must still compile
#endif
  }
}

// The GPUs run the case themselves (no host fallback), fused and unfused, with `want`'s bits.
inline void expect_on_device(const std::string& name, const std::vector<Tensor>& in, const Build& f, const Tensor& want) {
  const Graph sg = specialize(make_graph(in, f, false), in);
  for (const std::string backend : {"vulkan", "cuda"}) {
    if (!has_device(backend)) continue;
    for (bool fusion : {true, false}) {
      CompileOptions o;
      o.fusion = fusion, o.fallback = false;
      try {
        expect_bits(run_on_backend(backend, sg, in, o).at(0), want, name + " on " + backend + " without fallback");
      } catch (const Error& e) {
        ADD_FAILURE() << name << " on " << backend << (fusion ? "" : " unfused") << " without fallback: " << e.what();
      }
    }
  }
}

inline Build binary(const std::string& op, GraphBuilder::Attrs attrs = {}) {
  return [op, attrs](GraphBuilder& b, const std::vector<int>& x) { return b.op(op, {x[0], x[1]}, attrs); };
}



// Seeded random non-zero values in [lo, hi) of dtype t, after the given special values.
inline Tensor specials_then_random(DType t, const std::vector<double>& special, int n_random, uint64_t seed, double lo, double hi) {
  Tensor r = random_tensor(t, {n_random}, seed, lo, hi);
  Tensor x(t, {static_cast<int64_t>(special.size()) + n_random});
  for (size_t i = 0; i < special.size(); ++i) x.set(static_cast<int64_t>(i), special[i]);
  for (int64_t i = 0; i < n_random; ++i) x.set(static_cast<int64_t>(special.size()) + i, r.get(i) == 0 ? 0.25 : r.get(i));
  return x;
}

}  // namespace fusor::numerics_check
