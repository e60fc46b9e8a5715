// Red-team round 46 (docs/redteam.md): torchvision detection / segmentation / video models and
// a diffusion UNet, exported by torch. What they showed: the op-by-op backends held every
// intermediate value until the run ended, and an empty Loop-body input type was misnamed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fuzz_harness.h"
#include "frontend/onnx_import.h"
#include "runtime/session.h"
#include "runtime/tensor_io.h"
#include "test_util.h"

namespace fusor {
namespace {

namespace fs = std::filesystem;

// 128 chained Neg over [1024, 1024] float32: 512 MiB of intermediates, 8 MiB live at a time.
// Under a 400 MB address-space limit `ref` ran out of host memory (it kept every value: mvit_v2_s
// needed 12 GB on ref, 0.9 GB on cpu); now each value is dropped after its last reader. The
// host-fallback runner (`SegmentedExecutable`) drops values after their last piece likewise.
TEST(Round46, OpByOpRunsHoldOnlyLiveValues) {
  if (!testing::have_cli()) GTEST_SKIP() << "fusor binary not found (FUSOR_BIN unset)";
  testing::TempDir d;
  auto m = fuzz::new_model(17);
  auto* g = m.mutable_graph();
  fuzz::set_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {1024, 1024});
  std::string v = "x";
  for (int i = 0; i < 128; ++i) {
    const std::string o = "n" + std::to_string(i);
    fuzz::add_node(g, "Neg", {v}, {o});
    v = o;
  }
  fuzz::set_type(g->add_output(), v, onnx::TensorProto::FLOAT, {1024, 1024});
  const fs::path c = d.path / "case";
  fs::create_directories(c / "test_data_set_0");
  std::ofstream(c / "model.onnx", std::ios::binary) << m.SerializeAsString();
  const Tensor x = testing::random_tensor(DType::f32, {1024, 1024}, 46, -2.0, 2.0);
  write_tensor_pb((c / "test_data_set_0" / "input_0.pb").string(), x, "x");
  write_tensor_pb((c / "test_data_set_0" / "output_0.pb").string(), x, v);  // 128 negations
  std::string out;
  const std::string bin = std::getenv("FUSOR_BIN") ? std::getenv("FUSOR_BIN") : "./fusor";
  const int rc = std::system(("sh -c 'ulimit -v 400000; " + bin + " conform " + c.string() +
                              " --backend ref --exact' > " + d / "out.txt" + " 2>&1").c_str());
  std::ifstream in(d.path / "out.txt");
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("1 passed"), std::string::npos) << out;
}

// torch's TorchScript exporter writes `type {}` (a TypeProto with no value) on Loop body inputs
// (mvit_v2_s: 96 of them); onnx.checker accepts it. fusor said "only tensor types are supported
// (sequence/map/optional are not)"; an empty type now means no declared type, as an absent one.
TEST(Round46, EmptyTypeOnALoopBodyInputMeansUndeclared) {
  auto m = fuzz::new_model(17);
  auto* g = m.mutable_graph();
  fuzz::set_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {4});
  fuzz::add_init_i64(g, "M", {}, {3});
  auto* body = fuzz::add_loop(g, "loop", "x", "y");
  body->add_input()->set_name("y_in");
  body->mutable_input(2)->mutable_type();  // present, empty
  body->mutable_input(0)->mutable_type()->Clear();
  fuzz::add_init(body, "one", {4}, {1.0f, 1.0f, 1.0f, 1.0f});
  fuzz::add_node(body, "Identity", {"cin"}, {"cout"});
  fuzz::add_node(body, "Add", {"y_in", "one"}, {"y_out"});
  fuzz::set_type(body->add_output(), "cout", onnx::TensorProto::BOOL, {});
  fuzz::set_type(body->add_output(), "y_out", onnx::TensorProto::FLOAT, {4});
  fuzz::set_type(g->add_output(), "y", onnx::TensorProto::FLOAT, {4});
  ASSERT_TRUE(body->input(2).has_type());
  Graph lg = load_onnx_from_bytes(m.SerializeAsString(), ".");
  // The model's own input needs its type (onnxruntime refuses it too): named, not a scalar.
  auto bad = m;
  bad.mutable_graph()->mutable_input(0)->mutable_type()->Clear();
  EXPECT_ERROR(load_onnx_from_bytes(bad.SerializeAsString(), "."), "graph input 'x' has an empty type");
  const Tensor x = testing::tensor_of({4}, {0.5, -1.0, 2.0, 3.25});
  for (const std::string& be : testing::usable_backends()) {
    const auto y = run_on_backend(be, specialize(lg, {x}), {x});
    ASSERT_EQ(y.size(), 1u) << be;
    for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(y[0].get(i), x.get(i) + 3.0) << be << " " << i;
  }
}

}  // namespace
}  // namespace fusor
