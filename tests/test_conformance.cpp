// Conformance runs as tests: the real models in ../shared/models and the ONNX node suite,
// on ref and on the fused cpu backend. Skipped (with the reason) when ../shared is absent.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "runtime/conform.h"
#include "test_util.h"

namespace fusor {
namespace {

TEST(Conformance, SharedModelsOnRefAndCpu) {
  std::string shared = testing::shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared/models not present (set FUSOR_SHARED)";
  for (const char* m : {"mlp_block", "squeezenet1_1", "mobilenet_v3_small", "gpt2_tiny"}) {
    ConformOptions o;
    // gpt2_tiny: one output element (4.6e-5) differs from onnxruntime's fp32 result by 1.9e-7;
    // the fp64 result is 6.7e-8 from ours and 2.5e-7 from the stored one, so the default atol
    // (1e-7, below one ulp at the model's O(1) magnitudes) cannot be met by any other fp32
    // implementation. See README "Conformance".
    if (std::string(m) == "gpt2_tiny") o.atol = 1e-6;
    for (const char* b : {"ref", "cpu"}) {
      auto r = run_case(shared + "/models/" + m, b, o);
      EXPECT_EQ(r.status, CaseStatus::passed) << m << " on " << b << ": " << r.detail;
    }
  }
}

TEST(Conformance, ExampleModelShippedWithTheRepository) {
  ConformOptions o;
  o.atol = 1e-6;  // see SharedModelsOnRefAndCpu
  for (const char* b : {"ref", "cpu"}) {
    auto r = run_case(std::string(FUSOR_SOURCE_DIR) + "/examples/gpt2_tiny", b, o);
    EXPECT_EQ(r.status, CaseStatus::passed) << b << ": " << r.detail;
  }
}

// Every node-suite case: the fused cpu backend must pass every case ref passes.
TEST(Conformance, NodeSuiteCpuPassesEverythingRefPasses) {
  std::string shared = testing::shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared/onnx-tests not present (set FUSOR_SHARED)";
  ConformOptions o;
  o.backends = {"ref", "cpu"};
  auto cases = find_cases({shared + "/onnx-tests/node"});
  std::map<std::string, std::map<std::string, CaseStatus>> status;
  auto results = run_conformance(cases, o, nullptr);
  int ref_pass = 0;
  for (auto& r : results) {
    status[r.case_dir][r.backend] = r.status;
    if (r.backend == "ref" && r.status == CaseStatus::passed) ++ref_pass;
  }
  // ref fails (not skips) only the cases known to be beyond fusor's tolerance: the inverse DFT
  // stores float32 rounding noise of 1.9e-7 where the exact result is 0 (atol 1e-7). Any other
  // failure is a regression (a loader check refusing LSTM's omitted outputs once failed 21).
  const std::set<std::string> known_ref_failures = {"test_dft_inverse", "test_dft_inverse_opset19"};
  for (auto& r : results) {
    if (r.backend == "cpu" && status[r.case_dir]["ref"] == CaseStatus::passed)
      EXPECT_EQ(r.status, CaseStatus::passed) << r.case_dir << ": " << r.detail;
    if (r.backend == "ref" && r.status == CaseStatus::failed) {
      std::string name = r.case_dir;
      while (!name.empty() && name.back() == '/') name.pop_back();
      name = std::filesystem::path(name).filename().string();
      EXPECT_TRUE(known_ref_failures.count(name)) << r.case_dir << " fails on ref: " << r.detail;
    }
  }
  std::printf("node suite: ref passes %d of %zu\n", ref_pass, cases.size());
  // 1757 of 1806 on 2026-12-03; the rest are strings, image decoding, ai.onnx.ml, random ops and
  // training-mode Dropout.
  EXPECT_GE(ref_pass * 100, static_cast<int>(cases.size()) * 95) << "below 95% of the node suite on ref";
}

// The other ONNX suites (../shared/README.md: models converted from PyTorch, PyTorch operators,
// simple graphs): every case passes on ref and the fused cpu backend. They include opset-6
// models (PRelu with a per-channel slope) that the node suite does not.
TEST(Conformance, OtherOnnxSuitesPassOnRefAndCpu) {
  std::string shared = testing::shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared/onnx-tests not present (set FUSOR_SHARED)";
  ConformOptions o;
  o.backends = {"ref", "cpu"};
  auto cases = find_cases({shared + "/onnx-tests/pytorch-converted", shared + "/onnx-tests/pytorch-operator",
                           shared + "/onnx-tests/simple"});
  ASSERT_GT(cases.size(), 50u);
  for (auto& r : run_conformance(cases, o, nullptr))
    EXPECT_EQ(r.status, CaseStatus::passed) << r.case_dir << " on " << r.backend << ": " << r.detail;
}

}  // namespace
}  // namespace fusor
