// Red-team round 39 (docs/redteam.md): ops of ONNX opsets 23-28 against the spec text. The
// stored cases (tests/data/make_round39.py: the spec's results in numpy, onnxruntime's where it
// has the kernel) run on every usable backend, bit for bit.
#include <gtest/gtest.h>

#include <filesystem>

#include "onnx_test_util.h"
#include "runtime/conform.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

using testing::OneNode;

// QuantizeLinear-25 of float16 / bfloat16 by a scale of that type divides in it (was float32:
// 65 for 64.5's neighbours), float32 before opset 23 (onnxruntime); RMSNormalization-23 of a
// float16 X with a float32 scale gives float32 (was float16); BitCast-26 between int4 / uint4
// and int2 / uint2 (was refused); Cast-25 to float8e8m0 without saturation gives NaN below 2^-127
// (was 2^-127).
TEST(Round39, NewestOpsetCasesMatchTheSpecOnEveryBackend) {
  const std::string root = std::string(FUSOR_SOURCE_DIR) + "/tests/data/round39/";
  int cases = 0;
  for (const auto& e : std::filesystem::directory_iterator(root)) {
    ++cases;
    for (const std::string& be : testing::usable_backends()) {
      SCOPED_TRACE(e.path().filename().string() + " on " + be);
      ConformOptions o;
      o.exact = true;
      const CaseResult r = run_case(e.path().string(), be, o);
      EXPECT_EQ(r.status, CaseStatus::passed) << r.detail;
    }
  }
  EXPECT_EQ(cases, 8);
}

// SwiGLU-28: "A and B must have the same shape; no broadcasting" (was broadcast silently).
TEST(Round39, SwigluRefusesOperandsOfDifferentShapes) {
  const Tensor a = testing::random_tensor(DType::f32, {2, 3}, 1), b = testing::random_tensor(DType::f32, {3}, 2);
  OneNode n{"SwiGLU", "", {{"a", a}, {"b", b}}};
  n.opset = 28;
  EXPECT_ERROR(Session(n.graph(), "ref").run(n.feeds()), "A and B must have the same shape (SwiGLU does not broadcast), got [2, 3] and [3]");
  OneNode same{"SwiGLU", "", {{"a", a}, {"b", testing::random_tensor(DType::f32, {2, 3}, 3)}}};
  same.opset = 28;
  const Tensor y = Session(same.graph(), "ref").run(same.feeds())[0];
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.get(i);
    EXPECT_NEAR(y.get(i), x / (1 + std::exp(-x)) * same.inputs[1].second.get(i), 1e-6) << i;
  }
}

}  // namespace
}  // namespace fusor
