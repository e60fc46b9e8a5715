// Hostile-input check shared by the feature tests: a model runs on ref, cpu and vulkan (when a
// device exists) through a Session; either every backend gives ref's values (ints exact,
// floats within rtol) or ref and every backend refuse it with a one-line fusor::Error. Any
// other exception, a multi-line message, or a backend that disagrees with ref is a failure.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "runtime/session.h"

namespace fusor::testing {

inline bool vulkan_available() {
  try {
    return !make_backend("vulkan")->devices().empty();
  } catch (const Error&) {
    return false;
  }
}

struct BackendResult {
  std::vector<Tensor> out;
  std::string error;  // fusor::Error message; "" when it ran
};

inline BackendResult run_on(const Graph& g, const std::string& be, const std::vector<Tensor>& in, const std::string& what) {
  BackendResult r;
  try {
    Session s(g, be);
    r.out = s.run(in);
  } catch (const Error& e) {
    r.error = e.what();
    if (r.error.empty()) r.error = "(empty fusor::Error)";
    EXPECT_EQ(r.error.find('\n'), std::string::npos) << what << " on " << be << ": multi-line error '" << r.error << "'";
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << " on " << be << ": not a fusor::Error: " << e.what();
    r.error = "foreign";
  }
  return r;
}

// Returns ref's error message ("" when ref ran) so a caller can also check what it names.
inline std::string expect_backends_agree(const Graph& g, const std::vector<Tensor>& in, const std::string& what, double rtol = 1e-4) {
  const BackendResult want = run_on(g, "ref", in, what);
  std::vector<std::string> bes{"cpu"};
  if (vulkan_available()) bes.push_back("vulkan");
  for (const std::string& be : bes) {
    const BackendResult got = run_on(g, be, in, what);
    if (!want.error.empty()) {
      EXPECT_FALSE(got.error.empty()) << what << " on " << be << ": ran although ref refused: " << want.error;
      continue;
    }
    if (!got.error.empty()) {
      ADD_FAILURE() << what << " on " << be << ": refused although ref ran: " << got.error;
      continue;
    }
    if (got.out.size() != want.out.size()) {
      ADD_FAILURE() << what << " on " << be << ": " << got.out.size() << " outputs, ref has " << want.out.size();
      continue;
    }
    for (size_t k = 0; k < want.out.size(); ++k) {
      const Tensor &a = got.out[k], &w = want.out[k];
      EXPECT_EQ(a.dtype(), w.dtype()) << what << " on " << be << " output " << k;
      if (a.shape() != w.shape() || a.dtype() != w.dtype()) {
        ADD_FAILURE() << what << " on " << be << " output " << k << ": shape " << shape_str(a.shape()) << " vs ref " << shape_str(w.shape());
        continue;
      }
      for (int64_t e = 0; e < w.numel(); ++e) {
        if (dtype_is_int(w.dtype()) || w.dtype() == DType::boolean) {
          EXPECT_EQ(a.get_int(e), w.get_int(e)) << what << " on " << be << " output " << k << " element " << e;
        } else {
          const double x = a.get(e), y = w.get(e);
          const bool ok = (std::isnan(x) && std::isnan(y)) || x == y || std::fabs(x - y) <= rtol * std::max(1.0, std::fabs(y));
          EXPECT_TRUE(ok) << what << " on " << be << " output " << k << " element " << e << ": " << x << " vs ref " << y;
          if (!ok) break;
        }
      }
    }
  }
  return want.error;
}

}  // namespace fusor::testing
