// Red-team round 44 (docs/redteam.md): models written by PyTorch's torch.export-based ONNX
// exporter (dynamo=True) that fusor refused where onnxruntime runs them.
#include <gtest/gtest.h>

#include <filesystem>

#include "fuzz_harness.h"
#include "frontend/onnx_import.h"
#include "runtime/conform.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

// embedding_bag's while loop: no trip count M, a list built per bag, cond_out from a carried
// counter. Was refused ("a counted Loop small enough to unroll"); now followed until cond_out
// folds to false (the bags' offsets baked where a slice needs them) and unrolled.
TEST(Round44, EmbeddingBagWhileLoopsMatchOnnxruntimeOnEveryBackend) {
  const std::string root = std::string(FUSOR_SOURCE_DIR) + "/tests/data/round44/";
  int cases = 0;
  for (const auto& e : std::filesystem::directory_iterator(root)) {
    if (!e.is_directory()) continue;
    ++cases;
    for (const std::string& be : testing::usable_backends()) {
      SCOPED_TRACE(e.path().filename().string() + " on " + be);
      const CaseResult r = run_case(e.path().string(), be, ConformOptions{});
      EXPECT_EQ(r.status, CaseStatus::passed) << r.detail;
    }
  }
  EXPECT_EQ(cases, 4);
}

// SkipSimplifiedLayerNormalization with its mean and inv_std_var outputs named but read by
// nothing (onnxscript's optimize_for_ort writes them): was refused ("the mean output is not
// computed by RMS normalization"); now the same as with them left out. One that is read is
// still refused by name.
TEST(Round44, UnreadOptionalNormalizationOutputsAreLeftOut) {
  auto model = [](const std::vector<std::string>& outs, bool read_mean) {
    auto m = fuzz::new_model(17);
    auto* od = m.add_opset_import();
    od->set_domain("com.microsoft");
    od->set_version(1);
    auto* g = m.mutable_graph();
    fuzz::set_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 4, 8});
    fuzz::set_type(g->add_input(), "skip", onnx::TensorProto::FLOAT, {2, 4, 8});
    fuzz::set_type(g->add_input(), "gamma", onnx::TensorProto::FLOAT, {8});
    auto* n = fuzz::add_node(g, "SkipSimplifiedLayerNormalization", {"x", "skip", "gamma"}, outs);
    n->set_domain("com.microsoft");
    fuzz::set_type(g->add_output(), "y", onnx::TensorProto::FLOAT, {2, 4, 8});
    fuzz::set_type(g->add_output(), "sum", onnx::TensorProto::FLOAT, {2, 4, 8});
    if (read_mean) {
      fuzz::add_node(g, "Identity", {outs[1]}, {"m"});
      fuzz::set_type(g->add_output(), "m", onnx::TensorProto::FLOAT, {});
    }
    return load_onnx_from_bytes(m.SerializeAsString(), ".");
  };
  const std::vector<Tensor> feeds{testing::random_tensor(DType::f32, {2, 4, 8}, 1), testing::random_tensor(DType::f32, {2, 4, 8}, 2),
                                  testing::random_tensor(DType::f32, {8}, 3)};
  const Graph plain = model({"y", "", "", "sum"}, false), named = model({"y", "val_0", "val_1", "sum"}, false);
  for (const std::string& be : testing::usable_backends()) {
    SCOPED_TRACE(be);
    const auto want = Session(plain, be).run(feeds), got = Session(named, be).run(feeds);
    ASSERT_EQ(got.size(), 2u);
    for (size_t k = 0; k < 2; ++k)
      for (int64_t i = 0; i < want[k].numel(); ++i) EXPECT_EQ(got[k].get(i), want[k].get(i)) << k << " " << i;
  }
  EXPECT_ERROR(Session(model({"y", "val_0", "val_1", "sum"}, true), "ref").run(feeds), "the mean output is not computed by RMS normalization");
}

}  // namespace
}  // namespace fusor
