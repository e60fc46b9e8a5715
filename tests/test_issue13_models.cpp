// The issue-13 acceptance models, built with onnx's helpers and checked against onnxruntime's
// stored outputs (tests/data/make_issue13.py): an If folded from a shape, an If on a run-time
// value (nested), a TopK top-5 classifier head, per-channel int8 weights through
// DequantizeLinear into Conv and MatMul, and the same as QLinearConv/QLinearMatMul. Each runs
// as `fusor conform` runs it, on ref, cpu and every GPU backend present (with host fallback
// where a GPU lacks a node); integers compare exactly, floats at conform's defaults.
#include <gtest/gtest.h>

#include "backends/backend.h"
#include "runtime/conform.h"

namespace fusor {
namespace {

std::vector<std::string> backends() {
  std::vector<std::string> out{"ref", "cpu"};
  for (const char* gpu : {"vulkan", "cuda"}) {
    try {
      if (!make_backend(gpu)->devices().empty()) out.push_back(gpu);
    } catch (const Error&) {
      std::cerr << "[ SKIP part ] " << gpu << ": no device\n";
    }
  }
  return out;
}

class Issue13Models : public ::testing::TestWithParam<const char*> {};

TEST_P(Issue13Models, MatchOnnxruntimeOnEveryBackend) {
  const std::string dir = std::string(FUSOR_SOURCE_DIR) + "/tests/data/" + GetParam();
  for (const std::string& be : backends()) {
    const CaseResult r = run_case(dir, be, ConformOptions{});
    EXPECT_EQ(r.status, CaseStatus::passed) << GetParam() << " on " << be << ": " << r.detail;
  }
}

INSTANTIATE_TEST_SUITE_P(Data, Issue13Models,
                         ::testing::Values("if_shape_cond", "if_value_cond", "topk_top5_head", "qdq_int8_matmul_conv",
                                           "qlinear_matmul_conv", "lstm_bidirectional", "gru_sequence_lens"));

}  // namespace
}  // namespace fusor
