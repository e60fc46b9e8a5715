// Shapes that depend on values computed inside the model (boolean-mask indexing, as PyTorch
// exports x[x > t]: NonZero of a comparison, then GatherND): the Session computes the
// shape-determining value on ref for each run's inputs, bakes it in and keys the executable on
// its bytes, so every backend runs such a model instead of refusing it.
#include <gtest/gtest.h>

#include <cstring>

#include "backend_agreement.h"
#include "frontend/builder.h"
#include "runtime/session.h"
#include "onnx_test_util.h"
#include "test_util.h"

namespace fusor {
namespace {

// y = x[x > 0] * 2 for x [6]: NonZero(Greater(x, 0)) -> Transpose -> GatherND -> Mul.
Graph masked_model() {
  GraphBuilder b("masked", 17);
  const int x = b.input("x", DType::f32, {6});
  Tensor zero(DType::f32, {}), two(DType::f32, {});
  zero.set(0, 0.0), two.set(0, 2.0);
  const int idx = b.op("Transpose", {b.op("NonZero", {b.op("Greater", {x, b.constant("zero", zero)})})},
                       {{"perm", std::vector<int64_t>{1, 0}}});
  b.output(b.op("Mul", {b.op("GatherND", {x, idx}), b.constant("two", two)}));
  return b.build();
}

TEST(DataDependent, MaskIndexingRunsOnEveryBackendWithNewShapesPerRun) {
  const Graph g = masked_model();
  std::vector<std::string> backends{"ref", "cpu"};
  if (testing::vulkan_available()) backends.push_back("vulkan");
  for (const std::string& be : backends) {
    Session s(g, be);
    for (uint64_t seed : {1u, 2u, 3u, 1u}) {
      const Tensor x = testing::random_tensor(DType::f32, {6}, seed, -1.0, 1.0);
      std::vector<double> want;
      for (int64_t i = 0; i < 6; ++i)
        if (x.get(i) > 0) want.push_back(2 * x.get(i));
      const std::vector<Tensor> out = s.run({x});
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(out[0].shape(), (Shape{static_cast<int64_t>(want.size())})) << be << " seed " << seed;
      SCOPED_TRACE(be + " seed " + std::to_string(seed));
      testing::expect_values(out[0], want, 0);
    }
  }
}

// Detector post-processing: NonMaxSuppression of boxes and scores computed at run time (its
// output count depends on them). Boxes 0 and 1 overlap (IoU 0.9), box 2 is apart: the kept
// boxes are the better of 0 and 1, then 2, in descending score.
TEST(DataDependent, NmsOfComputedScoresOnEveryBackend) {
  GraphBuilder b("nms", 17);
  const int raw = b.input("scores", DType::f32, {1, 1, 3});
  const Tensor boxes = testing::tensor_of({1, 3, 4}, {0, 0, 1, 1, 0, 0.05, 1, 1.05, 0, 2, 1, 3});
  Tensor iou(DType::f32, {1});
  iou.set(0, 0.5);
  b.output(b.op("NonMaxSuppression", {b.constant("boxes", boxes), b.op("Sigmoid", {raw}),
                                      b.constant("max", testing::ints_of({1}, {3})), b.constant("iou", iou)}));
  const Graph g = b.build();
  std::vector<std::string> backends{"ref", "cpu"};
  if (testing::vulkan_available()) backends.push_back("vulkan");
  for (const std::string& be : backends) {
    Session s(g, be);
    for (const std::vector<double>& sc : {std::vector<double>{0.3, 0.9, -1.0}, std::vector<double>{2.0, 0.1, 3.0}}) {
      const std::vector<Tensor> out = s.run({testing::tensor_of({1, 1, 3}, sc)});
      ASSERT_EQ(out.size(), 1u);
      const int64_t best01 = sc[0] >= sc[1] ? 0 : 1;
      std::vector<int64_t> order = sc[2] > sc[best01] ? std::vector<int64_t>{2, best01} : std::vector<int64_t>{best01, 2};
      ASSERT_EQ(out[0].shape(), (Shape{2, 3})) << be;
      for (int64_t r = 0; r < 2; ++r) {
        EXPECT_EQ(out[0].get_int(r * 3), 0) << be;
        EXPECT_EQ(out[0].get_int(r * 3 + 1), 0) << be;
        EXPECT_EQ(out[0].get_int(r * 3 + 2), order[r]) << be << " row " << r;
      }
    }
  }
}

// Loop body (i, cond, acc [1], captured limit) -> (i + 1 < limit, acc + 1, scan: 2 i).
std::shared_ptr<const Graph> counting_body() {
  GraphBuilder b("count_body", 17);
  const int i = b.input("i", DType::i64, {}), c = b.input("cond", DType::boolean, {}), acc = b.input("acc", DType::f32, {1});
  const int limit = b.input("limit", DType::i64, {});  // captured outer value
  (void)c;
  Tensor one(DType::i64, {}), onef(DType::f32, {}), two(DType::f32, {});
  one.set_int(0, 1), onef.set(0, 1.0), two.set(0, 2.0);
  b.output(b.op("Less", {b.op("Add", {i, b.constant("one", one)}), limit}));
  b.output(b.op("Add", {acc, b.constant("onef", onef)}));
  b.output(b.op("Mul", {b.op("Cast", {i}, {{"to", int64_t{1}}}), b.constant("two", two)}));
  Graph g = b.build();
  g.formal_inputs = 3;
  return std::make_shared<const Graph>(std::move(g));
}

// A Loop with a scan output whose condition turns false at a run-time limit (sum of the input):
// the Session computes the loop's inputs on ref, the loop runs at load, and its outputs'
// lengths follow each run's input.
TEST(DataDependent, LoopWithScanOutputAndRunTimeStop) {
  GraphBuilder b("count", 17);
  const int x = b.input("x", DType::f32, {2});
  const int limit = b.op("Cast", {b.op("ReduceSum", {x}, {{"keepdims", int64_t{0}}})}, {{"to", int64_t{7}}});
  Tensor t(DType::boolean, {}), acc0(DType::f32, {1});
  t.set(0, 1.0), acc0.set(0, 0.0);
  auto outs = b.op_multi("Loop", {-1, b.constant("true", t), b.constant("acc0", acc0), limit}, {{"body", counting_body()}}, 2);
  b.output(outs[0]);
  b.output(outs[1]);
  const Graph g = b.build();
  std::vector<std::string> backends{"ref", "cpu"};
  if (testing::vulkan_available()) backends.push_back("vulkan");
  for (const std::string& be : backends) {
    Session s(g, be);
    for (double total : {3.0, 5.0, 1.0}) {
      const std::vector<Tensor> out = s.run({testing::tensor_of({2}, {total - 1.0, 1.0})});
      ASSERT_EQ(out.size(), 2u);
      const int64_t n = static_cast<int64_t>(total);
      SCOPED_TRACE(be + " limit " + std::to_string(n));
      testing::expect_values(out[0], {static_cast<double>(n)}, 0);
      ASSERT_EQ(out[1].shape(), (Shape{n}));
      for (int64_t k = 0; k < n; ++k) EXPECT_EQ(out[1].get(k), 2.0 * static_cast<double>(k));
    }
  }
}

// torchvision's detectors: `if boxes.numel() == 0` (a condition on a shape, constant once the
// shapes are) around NonMaxSuppression of computed boxes. The If inlines its branch, so the NMS's
// inputs are values the inlining made, which the model itself does not hold: the Session names
// them, specialises the model up to their producer and computes them on ref. Here: y = x[x > 0]
// inside the taken branch (NonZero of a computed mask), -x in the other.
TEST(DataDependent, ComputedValuesInsideAnInlinedBranch) {
  onnx::ModelProto m = testing::onnx_model("if_mask", 8, 17);
  auto* g = m.mutable_graph();
  testing::onnx_value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {1}, true);
  auto* zero = g->add_initializer();
  zero->set_name("zero");
  zero->set_data_type(onnx::TensorProto::INT64);
  zero->add_int64_data(0);
  testing::onnx_node(g, "Size", {"x"}, {"n"});
  testing::onnx_node(g, "Greater", {"n", "zero"}, {"nonempty"});
  auto* iff = testing::onnx_node(g, "If", {"nonempty"}, {"y"});
  auto* then_g = testing::onnx_graph_attr(iff, "then_branch");
  auto* fzero = then_g->add_initializer();
  fzero->set_name("fzero");
  fzero->set_data_type(onnx::TensorProto::FLOAT);
  fzero->add_float_data(0.0f);
  testing::onnx_node(then_g, "Relu", {"x"}, {"r"});  // computed, then compared: a mask no graph input decides
  testing::onnx_node(then_g, "Greater", {"r", "fzero"}, {"mask"});
  testing::onnx_node(then_g, "NonZero", {"mask"}, {"idx"});
  testing::attr_ints(testing::onnx_node(then_g, "Transpose", {"idx"}, {"idx_t"}), "perm", {1, 0});
  testing::onnx_node(then_g, "GatherND", {"x", "idx_t"}, {"t_out"});
  then_g->add_output()->set_name("t_out");
  auto* else_g = testing::onnx_graph_attr(iff, "else_branch");
  testing::onnx_node(else_g, "Neg", {"x"}, {"e_out"});
  else_g->add_output()->set_name("e_out");
  g->add_output()->set_name("y");
  const Graph gr = testing::load_proto(m);
  for (const std::string& be : testing::usable_backends()) {
    Session s(gr, be);
    for (uint64_t seed : {4u, 5u, 4u}) {
      const Tensor x = testing::random_tensor(DType::f32, {7}, seed, -1.0, 1.0);
      std::vector<double> want;
      for (int64_t i = 0; i < 7; ++i)
        if (x.get(i) > 0) want.push_back(x.get(i));
      SCOPED_TRACE(be + " seed " + std::to_string(seed));
      const std::vector<Tensor> out = s.run({x});
      ASSERT_EQ(out[0].shape(), (Shape{static_cast<int64_t>(want.size())}));
      testing::expect_values(out[0], want, 0);
    }
  }
}

// The values a ref run computed for a shape-determining value (here the MatMul + Relu before
// the mask) are constants of the specialised graph too, so the backend's rows are ref's rows, the
// ones the mask was taken from. The graph is keyed on the inputs' bytes: two inputs with the same
// mask (every row positive) but other values must not share an executable.
TEST(DataDependent, RefComputedPrefixIsBakedAndKeyedOnTheInputs) {
  GraphBuilder b("masked_matmul", 17);
  const int x = b.input("x", DType::f32, {4, 3});
  Tensor zero(DType::f32, {});
  zero.set(0, 0.0);
  const Tensor w = testing::random_tensor(DType::f32, {3, 5}, 9, 0.1, 1.0);  // positive: x > 0 gives y > 0
  const int y = b.op("Relu", {b.op("MatMul", {x, b.constant("w", w)})});
  const int idx = b.op("Transpose", {b.op("NonZero", {b.op("Greater", {y, b.constant("zero", zero)})})}, {{"perm", std::vector<int64_t>{1, 0}}});
  b.output(b.op("GatherND", {y, idx}));
  const Graph g = b.build();
  const Tensor x1 = testing::random_tensor(DType::f32, {4, 3}, 1, 0.1, 1.0), x2 = testing::random_tensor(DType::f32, {4, 3}, 2, 0.1, 1.0);
  SpecializeInfo info;
  for (const Node& n : specialize(g, {x1}, &info).nodes) EXPECT_NE(n.op_type, "MatMul") << "the prefix ref computed is a constant";
  EXPECT_EQ(info.computed, 1u) << "the mask";
  EXPECT_EQ(info.with_them, 1u) << "the Relu's value, which GatherND reads (the MatMul's is read only inside the cone)";
  SpecializeInfo mask_only;  // x[x > 0]: the mask is the only value its ref run computes
  specialize(masked_model(), {testing::random_tensor(DType::f32, {6}, 3)}, &mask_only);
  EXPECT_EQ(mask_only.computed, 1u);
  EXPECT_EQ(mask_only.with_them, 0u);
  for (const std::string& be : testing::usable_backends()) {
    SCOPED_TRACE(be);
    // The cones run on the host (ref, the cpu plan: the same values as ref) for ref, cpu and an
    // emulated device; on a GPU on the device itself, whose MatMul rounds its own way.
    const bool host_cones = be == "ref" || be == "cpu" || make_backend(be)->devices().at(0).emulated;
    Session s(g, be);
    std::vector<Tensor> got;
    for (const Tensor* xi : {&x1, &x2, &x1}) {
      const Tensor want = run_on_backend("ref", specialize(g, {*xi}), {*xi}).at(0);
      got.push_back(s.run({*xi}).at(0));
      ASSERT_EQ(got.back().shape(), (Shape{20}));
      for (int64_t i = 0; i < 20; ++i) {
        double dot = 0;
        for (int64_t k = 0; k < 3; ++k) dot += xi->get(i / 5 * 3 + k) * w.get(k * 5 + i % 5);
        EXPECT_NEAR(got.back().get(i), dot, 1e-5) << i;
        if (host_cones) EXPECT_EQ(got.back().get(i), want.get(i)) << i;
      }
    }
    EXPECT_EQ(0, std::memcmp(got[0].raw(), got[2].raw(), got[0].nbytes())) << "x1 again: the same bytes";
  }
}

// The specialised graph reads the ref-computed values as constants; it does not carry the map of
// every value those runs computed (known_by_name): an executable that kept it held a backbone's
// activations for as long as the Session kept it (3.6 GB for 16 executables of a 4-conv model).
TEST(DataDependent, SpecialisedGraphDropsTheMapOfRefComputedValues) {
  GraphBuilder b("masked_matmul", 17);
  const int x = b.input("x", DType::f32, {4, 3});
  Tensor zero(DType::f32, {});
  zero.set(0, 0.0);
  const int y = b.op("Relu", {b.op("MatMul", {x, b.constant("w", testing::random_tensor(DType::f32, {3, 5}, 9, 0.1, 1.0))})});
  b.output(b.op("NonZero", {b.op("Greater", {y, b.constant("zero", zero)})}));
  b.output(b.op("Neg", {y}));  // y is read outside the mask's cone: kept from the ref run
  const Graph g = b.build();
  SpecializeInfo info;
  const Graph s = specialize(g, {testing::random_tensor(DType::f32, {4, 3}, 1, 0.1, 1.0)}, &info);
  EXPECT_EQ(info.with_them, 1u);
  EXPECT_TRUE(s.known_by_name.empty());
  EXPECT_TRUE(s.stop_after.empty());
}

// A NonZero inside the branch of an If whose condition is computed at run time: the condition is
// computed on ref too and the branch it picks inlined (it was refused on every backend, ref too,
// with "node 'NonZero' (NonZero): input 0 must be a constant").
TEST(DataDependent, MaskInsideABranchOfARunTimeCondition) {
  onnx::ModelProto m = testing::onnx_model("rt_if_mask", 8, 17);
  auto* g = m.mutable_graph();
  testing::onnx_value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {6}, true);
  auto* zero = g->add_initializer();
  zero->set_name("zero");
  zero->set_data_type(onnx::TensorProto::FLOAT);
  zero->add_float_data(0.0f);
  testing::onnx_node(g, "ReduceSum", {"x"}, {"sum"});  // [1]: a one-element condition
  testing::onnx_node(g, "Greater", {"sum", "zero"}, {"positive"});
  auto* iff = testing::onnx_node(g, "If", {"positive"}, {"y"});
  auto* then_g = testing::onnx_graph_attr(iff, "then_branch");
  testing::onnx_node(then_g, "Greater", {"x", "zero"}, {"mask"});
  testing::onnx_node(then_g, "NonZero", {"mask"}, {"idx"});
  testing::attr_ints(testing::onnx_node(then_g, "Transpose", {"idx"}, {"idx_t"}), "perm", {1, 0});
  testing::onnx_node(then_g, "GatherND", {"x", "idx_t"}, {"picked"});
  testing::onnx_node(then_g, "ReduceSum", {"picked"}, {"t_out"});
  then_g->add_output()->set_name("t_out");
  auto* else_g = testing::onnx_graph_attr(iff, "else_branch");
  testing::onnx_node(else_g, "ReduceSum", {"x"}, {"e_out"});
  else_g->add_output()->set_name("e_out");
  g->add_output()->set_name("y");
  const Graph gr = testing::load_proto(m);
  for (const std::string& be : testing::usable_backends()) {
    Session s(gr, be);
    for (double sign : {1.0, -1.0, 1.0}) {
      Tensor x(DType::f32, {6});
      const double v[6] = {1, -2, 3, 0.5, -1, 2};
      double pos = 0, all = 0;
      for (int64_t i = 0; i < 6; ++i) {
        x.set(i, sign * v[i]);
        all += sign * v[i];
        if (sign * v[i] > 0) pos += sign * v[i];
      }
      SCOPED_TRACE(be + " sign " + std::to_string(sign));
      const std::vector<Tensor> out = s.run({x});
      ASSERT_EQ(out.at(0).numel(), 1);
      EXPECT_NEAR(out[0].get(0), all > 0 ? pos : all, 1e-6);
    }
  }
}

// A value computed from an input too large to key executables on is one error naming it.
TEST(DataDependent, HugeComputedShapeValuesAreRefused) {
  GraphBuilder b("huge_mask", 17);
  const int x = b.input("x", DType::f32, {(1 << 24) + 64});
  Tensor zero(DType::f32, {});
  zero.set(0, 0.0);
  b.output(b.op("NonZero", {b.op("Greater", {x, b.constant("zero", zero)})}));
  try {
    Session(b.build(), "ref").run({Tensor(DType::f32, {(1 << 24) + 64})});
    ADD_FAILURE() << "ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sets a shape"), std::string::npos) << e.what();
  }
}

// A backend that runs like cpu but reports one device, hardware or emulated, and counts what it
// compiles: whether a shape-determining value's cone runs on the Session's backend.
class ConeProbe : public Backend {
 public:
  ConeProbe(bool emulated, int* compiles, int* cone_compiles) : emulated_(emulated), compiles_(compiles), cones_(cone_compiles) {}
  std::string name() const override { return emulated_ ? "cone_probe_emulated" : "cone_probe_device"; }
  std::vector<DeviceInfo> devices() const override { return {{"probe", "", "", emulated_}}; }
  std::unique_ptr<Executable> compile(const Graph& g, const CompileOptions& opts) override {
    ++*compiles_;
    for (const Node& n : g.nodes) *cones_ += n.op_type == "MatMul";
    return make_backend("cpu")->compile(g, opts);
  }

 private:
  bool emulated_;
  int *compiles_, *cones_;
};

// (ConeProbe counts only the graphs it compiles; MatMul-bearing ones are the cones.)
// The prefix before a data-dependent shape (a detector's backbone before NMS) runs where the
// model does: on a hardware device's backend, compiled once per input signature and kept by the
// Session (the rest is compiled per computed value, as before); on an emulated device (lavapipe)
// on the cpu backend. The values are the ref-specialised run's either way.
TEST(DataDependent, ConesRunOnTheSessionsDeviceAndAreCompiledOnce) {
  GraphBuilder b("masked_matmul", 17);
  const int x = b.input("x", DType::f32, {4, 3});
  Tensor zero(DType::f32, {});
  zero.set(0, 0.0);
  const int y = b.op("Relu", {b.op("MatMul", {x, b.constant("w", testing::random_tensor(DType::f32, {3, 5}, 9, -1.0, 1.0))})});
  const int idx = b.op("Transpose", {b.op("NonZero", {b.op("Greater", {y, b.constant("zero", zero)})})}, {{"perm", std::vector<int64_t>{1, 0}}});
  b.output(b.op("GatherND", {y, idx}));
  const Graph g = b.build();
  for (const bool emulated : {false, true}) {
    SCOPED_TRACE(emulated ? "emulated" : "device");
    int compiles = 0, cones = 0;
    const std::string name = ConeProbe(emulated, &compiles, &cones).name();
    register_backend(name, [emulated, &compiles, &cones] { return std::make_unique<ConeProbe>(emulated, &compiles, &cones); });
    {
      Session s(g, name);
      int seed = 0;
      for (const int expect_compiles : {2, 3, 3, 4}) {  // x1, x2, x1 again (both cached), x3
        const Tensor xi = testing::random_tensor(DType::f32, {4, 3}, seed == 2 ? 1 : seed + 1, -1.0, 1.0);
        ++seed;
        const Tensor want = run_on_backend("ref", specialize(g, {xi}), {xi}).at(0);
        const Tensor got = s.run({xi}).at(0);
        ASSERT_EQ(got.shape(), want.shape());
        EXPECT_GT(got.numel(), 0) << "some of the 20 products are positive";
        for (int64_t i = 0; i < want.numel(); ++i) EXPECT_NEAR(got.get(i), want.get(i), 1e-6 * (1 + std::fabs(want.get(i)))) << i;
        // The device compiles the cone (the graph with the MatMul) once; the emulated one never.
        EXPECT_EQ(compiles, emulated ? expect_compiles - 1 : expect_compiles) << "run " << seed;
        EXPECT_EQ(cones, emulated ? 0 : 1) << "run " << seed;
      }
    }
    register_backend(name, nullptr);
  }
}

// Two overridable initializers of one shape, W0 and W1, with y = x[x * W0 - W1 > 0]: a run
// feeding only W0 and one feeding only W1 have cones of the same input shapes but different
// graphs (the fed one is an input, the other its default). The kept cone must not serve both
// (red-team round 49 and the review: its key named dtypes and shapes, not the inputs).
TEST(DataDependent, ConeKeysTellApartWhichOverridableInitializersAreFed) {
  onnx::ModelProto m = testing::onnx_model("override_cone", 8, 17);
  auto* gp = m.mutable_graph();
  const auto init = [&](const std::string& name, float v, int64_t n) {
    auto* t = gp->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    if (n > 0) t->add_dims(n);
    for (int64_t i = 0; i < std::max<int64_t>(n, 1); ++i) t->add_float_data(v);
  };
  init("W0", 1.0f, 8), init("W1", 0.0f, 8), init("z", 0.0f, 0);
  for (const char* in : {"x", "W0", "W1"}) testing::onnx_value_info(gp->add_input(), in, onnx::TensorProto::FLOAT, {8}, true);
  testing::onnx_node(gp, "Mul", {"x", "W0"}, {"a"});
  testing::onnx_node(gp, "Sub", {"a", "W1"}, {"b"});
  testing::onnx_node(gp, "Greater", {"b", "z"}, {"m"});
  testing::onnx_node(gp, "NonZero", {"m"}, {"nz"});
  testing::onnx_node(gp, "Reshape", {"nz", "minus_one"}, {"i"});
  auto* shape = gp->add_initializer();
  shape->set_name("minus_one");
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(1);
  shape->add_int64_data(-1);
  testing::onnx_node(gp, "Gather", {"x", "i"}, {"y"});
  gp->add_output()->set_name("y");
  const Graph g = testing::load_proto(m);
  ASSERT_EQ(g.inputs.size(), 1u);
  ASSERT_EQ(g.overridable.size(), 2u);
  const Tensor x = testing::tensor_of({8}, {-0.9, -0.6, -0.3, -0.1, 0.1, 0.4, 0.7, 0.9});
  const Tensor minus = testing::tensor_of({8}, std::vector<double>(8, -1.0)), half = testing::tensor_of({8}, std::vector<double>(8, 0.5));
  int compiles = 0, cones = 0;
  register_backend("cone_probe_device", [&] { return std::make_unique<ConeProbe>(false, &compiles, &cones); });
  {
    Session s(g, "cone_probe_device");
    for (int round = 0; round < 2; ++round) {
      const Tensor a = s.run({x, minus, Tensor()}).at(0);  // x[-x > 0]: the four negatives
      ASSERT_EQ(a.shape(), (Shape{4})) << round;
      for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(a.get(i), x.get(i)) << round;
      const Tensor b = s.run({x, Tensor(), half}).at(0);  // x[x - 0.5 > 0]: 0.7, 0.9
      ASSERT_EQ(b.shape(), (Shape{2})) << round;
      EXPECT_EQ(b.get(0), x.get(6));
      EXPECT_EQ(b.get(1), x.get(7));
    }
  }
  register_backend("cone_probe_device", nullptr);
}

}  // namespace
}  // namespace fusor
