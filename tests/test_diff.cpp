// `fusor diff`: faults injected through a test-only backend (registered here, never in the
// library or CLI) are found and named, for an op fault and for a fusion-only fault, and the
// extracted reproducer fails under conform on the faulty backend while passing on the others.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "runtime/conform.h"
#include "runtime/diff.h"
#include "runtime/session.h"
#include "tests/test_util.h"

namespace fs = std::filesystem;

namespace fusor {
namespace {

using testing::random_tensor;

constexpr int64_t kFaultElement = 3;
constexpr double kFaultDelta = 0.25;

// Wraps "cpu": the graph it compiles gets `node`'s first output perturbed (element 3 += 0.25)
// by an extra Add, so every consumer sees the wrong value. fused_only: only fused plans are
// perturbed (a fusion fault); unfused plans compile untouched.
class FaultBackend : public Backend {
 public:
  FaultBackend(std::string node, bool fused_only) : node_(std::move(node)), fused_only_(fused_only) {}
  std::string name() const override { return "faulty"; }
  std::vector<DeviceInfo> devices() const override { return {{"host CPU", "cpu with an injected fault"}}; }
  std::unique_ptr<Executable> compile(const Graph& g, const CompileOptions& opts) override {
    auto inner = make_backend("cpu");
    if (fused_only_ && !opts.fusion) return inner->compile(g, opts);
    Graph x = g;
    for (size_t i = 0; i < x.nodes.size(); ++i) {
      if (x.nodes[i].name != node_) continue;
      const int v = x.nodes[i].outputs[0];
      const Value orig = x.values[v];
      const int pre = x.add_value(orig.name + "__unperturbed", orig.dtype, orig.shape, true);
      Tensor delta(orig.dtype, orig.shape);
      delta.set(kFaultElement, kFaultDelta);
      const int c = x.add_constant(orig.name + "__fault", delta);
      x.nodes[i].outputs[0] = pre;
      Node add;
      add.name = node_ + "__fault";
      add.op_type = "Add";
      add.opset = x.nodes[i].opset;
      add.inputs = {pre, c};
      add.outputs = {v};
      x.nodes.insert(x.nodes.begin() + static_cast<long>(i) + 1, add);
      x.reindex_producers();
      break;
    }
    return inner->compile(x, opts);
  }

 private:
  std::string node_;
  bool fused_only_;
};

// x[4,8] -> Mul(x, s) -> Tanh -> MatMul(w) -> Add(b) -> Relu -> Sigmoid. Fused: Mul+Tanh form
// one loop kernel (Tanh's result is stored for the MatMul), MatMul+Add+Relu+Sigmoid another.
Graph test_graph() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {4, 8});
  int s = b.constant("s", random_tensor(DType::f32, {8}, 11, 0.5, 1.5));
  int w = b.constant("w", random_tensor(DType::f32, {8, 6}, 12));
  int bias = b.constant("bias", random_tensor(DType::f32, {6}, 13));
  int m = b.op("Mul", {x, s});
  int t = b.op("Tanh", {m});
  int mm = b.op("MatMul", {t, w});
  int a = b.op("Add", {mm, bias});
  int r = b.op("Relu", {a});
  b.output(b.op("Sigmoid", {r}));
  return b.build();
}

std::string node_named(const Graph& g, const std::string& op) {
  for (auto& n : g.nodes)
    if (n.op_type == op) return n.name;
  return "";
}

class Diff : public ::testing::Test {
 protected:
  void SetUp() override {
    g_ = test_graph();
    inputs_ = {random_tensor(DType::f32, {4, 8}, 7)};
    register_backend("faulty_op", [n = node_named(g_, "Tanh")] { return std::make_unique<FaultBackend>(n, false); });
    register_backend("faulty_fusion", [n = node_named(g_, "Mul")] { return std::make_unique<FaultBackend>(n, true); });
    dir_ = fs::temp_directory_path() / ("fusor_diff_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override {
    register_backend("faulty_op", nullptr);
    register_backend("faulty_fusion", nullptr);
    fs::remove_all(dir_);
  }
  Graph g_;
  std::vector<Tensor> inputs_;
  fs::path dir_;
};

TEST_F(Diff, CompareValuesReportsUlpAndWorstElement) {
  Tensor r = testing::tensor_of({2, 2}, {1.0, -2.0, 0.5, 4.0});
  Tensor t = r;
  t.data<float>()[2] = std::nextafter(0.5f, 1.0f);  // 1 ulp: within tolerance
  auto same = compare_values(r, t, 1e-3, 1e-7);
  EXPECT_FALSE(same.diverges);
  EXPECT_EQ(same.max_ulp, 1);
  t.data<float>()[1] = -2.5f;
  auto d = compare_values(r, t, 1e-3, 1e-7);
  EXPECT_TRUE(d.diverges);
  EXPECT_EQ(d.worst_index, 1);
  EXPECT_EQ(d.worst_ref, -2.0);
  EXPECT_EQ(d.worst_test, -2.5);
  EXPECT_DOUBLE_EQ(d.max_abs, 0.5);
  EXPECT_EQ(d.max_ulp, 1 << 21);  // -2 -> -2.5: 0.5 / 2^-22 in [2, 4)
  EXPECT_EQ(d.scale_ulp, 1 << 20);  // 0.5 / ulp(4) = 0.5 / 2^-21
  EXPECT_EQ(d.mismatches, 1);
  // Integers compare exactly; NaN must meet NaN.
  auto ints = compare_values(testing::ints_of({2}, {5, 7}), testing::ints_of({2}, {5, 8}), 1, 1);
  EXPECT_TRUE(ints.diverges);
  EXPECT_EQ(ints.worst_index, 1);
  Tensor nr = testing::tensor_of({2}, {NAN, 1.0}), nt = testing::tensor_of({2}, {NAN, 1.0});
  EXPECT_FALSE(compare_values(nr, nt, 0, 0).diverges);
  nt.set(1, NAN);
  EXPECT_TRUE(compare_values(nr, nt, 0, 0).diverges);
}

// Negative tolerances are each value's dtype default (conform's): a bf16 value one ulp off
// (2^-8 relative) agrees, four at 1.5 do not; an fp32 value 2^-7 off diverges.
TEST_F(Diff, DefaultTolerancesFollowTheDtype) {
  Tensor r(DType::bf16, {2}), t(DType::bf16, {2});
  r.set(0, 1.5), r.set(1, -3.0);
  t.set(0, 1.5 + 1.0 / 128), t.set(1, -3.0);  // bf16 spacing at 1.5 is 2^-7: one ulp
  const ValueDiff one = compare_values(r, t, -1, -1);
  EXPECT_EQ(one.max_ulp, 1);
  EXPECT_FALSE(one.diverges);
  t.set(0, 1.5 + 4.0 / 128);
  EXPECT_TRUE(compare_values(r, t, -1, -1).diverges);
  Tensor r32 = testing::tensor_of({1}, {1.5}), t32 = testing::tensor_of({1}, {1.5 + 1.0 / 128});
  EXPECT_TRUE(compare_values(r32, t32, -1, -1).diverges);
  EXPECT_FALSE(compare_values(r, r, -1, -1).diverges);
}

// The small floats (one byte per element) are read as bytes: equal tensors are 0 ulp apart
// (their bits were read as 16-bit words, past the end of the data: max ulp changed run to run),
// adjacent values 1, across zero by sign and magnitude.
TEST_F(Diff, SmallFloatsCountUlpsInTheirOwnEncoding) {
  for (DType d : {DType::f8e4m3fn, DType::f8e5m2, DType::f8e4m3fnuz, DType::f4e2m1}) {
    SCOPED_TRACE(dtype_name(d));
    Tensor r(d, {3}), t(d, {3});
    for (int64_t i = 0; i < 3; ++i) r.set(i, 1.0 + i), t.set(i, 1.0 + i);
    const ValueDiff same = compare_values(r, t, -1, -1);
    EXPECT_EQ(same.max_ulp, 0);
    EXPECT_FALSE(same.diverges);
    t.set(2, -3.0);  // 3 -> -3: twice 3's distance from zero
    EXPECT_EQ(compare_values(r, t, 0, 0).max_ulp, 2.0 * (d == DType::f4e2m1 ? 5 : d == DType::f8e5m2 ? 66 : d == DType::f8e4m3fnuz ? 76 : 68));
  }
}

// A node the backend refuses (vulkan has no int32 ArgMax) runs on the host, as in run and
// conform: diff compares instead of stopping (red-team round 8).
TEST(DiffFallback, GraphBreaksRunOnTheHost) {
  if (make_backend("vulkan")->devices().empty()) GTEST_SKIP() << "no Vulkan device";
  GraphBuilder b;
  int x = b.input("x", DType::i32, {4, 9});
  b.output(b.op("ArgMax", {b.op("Abs", {x})}, {{"axis", int64_t{1}}}));
  Graph g = b.build();
  const std::vector<Tensor> in = {testing::random_tensor(DType::i32, {4, 9}, 5, -50, 50)};
  DiffReport r = diff_backends(g, in, {"ref"}, {"vulkan"});
  EXPECT_FALSE(r.culprit) << "ref and vulkan (ArgMax on the host) should agree";
}

// --extract writes a whole case into a new or empty folder only: stale input_K / test sets
// beside the new files made the printed `fusor conform DIR` fail (red-team round 8).
TEST(DiffExtract, RefusesAFolderThatIsNotEmpty) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("fusor_extract_" + std::to_string(::getpid()));
  fs::remove_all(root);
  EXPECT_NO_THROW(check_extract_dir((root / "new").string()));
  fs::create_directories(root / "empty");
  EXPECT_NO_THROW(check_extract_dir((root / "empty").string()));
  fs::create_directories(root / "used" / "test_data_set_1");
  EXPECT_THROW(check_extract_dir((root / "used").string()), Error);
  std::ofstream(root / "file") << "x";
  EXPECT_THROW(check_extract_dir((root / "file").string()), Error);
  fs::remove_all(root);
}

TEST_F(Diff, HealthyBackendsAgree) {
  auto r = diff_backends(g_, inputs_, {"ref"}, {"cpu"});
  EXPECT_FALSE(r.culprit) << format_diff(r);
  EXPECT_TRUE(r.op_stage && r.fusion_stage);
  EXPECT_EQ(r.unfused.size(), 6u);  // every node's output
  EXPECT_FALSE(r.fused.empty());
  EXPECT_LT(r.kernels.size(), r.unfused.size());  // the fused plan really fuses
  for (auto& d : r.unfused) EXPECT_EQ(d.mismatches, 0) << d.value;
}

TEST_F(Diff, NamesThePerturbedOp) {
  auto r = diff_backends(g_, inputs_, {"ref"}, {"faulty_op"});
  ASSERT_TRUE(r.culprit) << format_diff(r);
  const DiffCulprit& c = *r.culprit;
  EXPECT_EQ(c.stage, "unfused");
  EXPECT_EQ(c.kind, "op");
  EXPECT_EQ(c.value.op_type, "Tanh");
  EXPECT_EQ(c.value.node_name, node_named(g_, "Tanh"));
  EXPECT_EQ(c.value.inputs, "agree");
  EXPECT_EQ(c.value.mismatches, 1);
  EXPECT_EQ(c.value.worst_index, kFaultElement);
  EXPECT_NEAR(c.value.worst_test - c.value.worst_ref, kFaultDelta, 1e-6);
  EXPECT_EQ(c.fused_check, "diverges");
  ASSERT_EQ(c.input_info.size(), 1u);
  EXPECT_NE(c.input_info[0].find("float32 [4, 8]"), std::string::npos);
  // Downstream values diverge too, but as inherited faults.
  bool after = false;
  for (auto& d : r.unfused) {
    if (after && d.diverges) EXPECT_EQ(d.inputs, "inherited") << d.value;
    after = after || d.value == c.value.value;
  }
  ASSERT_FALSE(r.worst.empty());
  EXPECT_TRUE(r.worst[0].diverges);
  std::string text = format_diff(r);
  EXPECT_NE(text.find("op fault"), std::string::npos) << text;
  EXPECT_NE(text.find(c.value.node_name), std::string::npos) << text;
  auto j = diff_to_json(r);
  EXPECT_EQ(j["culprit"]["value"]["node"], c.value.node_name);
  EXPECT_EQ(j["culprit"]["kind"], "op");
  EXPECT_EQ(j["unfused"].size(), r.unfused.size());
}

TEST_F(Diff, NamesTheFusedKernelOfAFusionOnlyFault) {
  // Fused vs unfused, as `fusor diff --backend cpu --no-fusion --backend faulty_fusion`.
  auto r = diff_backends(g_, inputs_, {"cpu", true}, {"faulty_fusion"});
  EXPECT_FALSE(r.op_stage);
  ASSERT_TRUE(r.culprit) << format_diff(r);
  const DiffCulprit& c = *r.culprit;
  EXPECT_EQ(c.stage, "fused");
  EXPECT_EQ(c.kind, "fusion");
  EXPECT_EQ(c.value.op_type, "Tanh");  // the value the kernel stores
  EXPECT_EQ(c.value.worst_index, kFaultElement);
  auto has = [&](const std::string& op) {
    return std::find(c.kernel.ops.begin(), c.kernel.ops.end(), op) != c.kernel.ops.end();
  };
  EXPECT_TRUE(has("Mul") && has("Tanh")) << c.kernel.name;
  EXPECT_FALSE(has("MatMul")) << c.kernel.name;
  EXPECT_NE(format_diff(r).find("fusion fault"), std::string::npos);

  // Across backends: the op stage sees nothing, the fusion stage names the kernel.
  auto r2 = diff_backends(g_, inputs_, {"ref"}, {"faulty_fusion"});
  ASSERT_TRUE(r2.culprit) << format_diff(r2);
  EXPECT_TRUE(r2.op_stage);
  for (auto& d : r2.unfused) EXPECT_FALSE(d.diverges) << d.value;
  EXPECT_EQ(r2.culprit->kind, "fusion");
  EXPECT_EQ(r2.culprit->kernel.name, c.kernel.name);
  // The op fault, seen fused vs unfused on the faulty backend itself, is not a fusion fault.
  auto r3 = diff_backends(g_, inputs_, {"faulty_op", true}, {"faulty_op"});
  EXPECT_FALSE(r3.culprit) << format_diff(r3);
}

TEST_F(Diff, ExtractedOpReproducerFailsUnderConform) {
  auto r = diff_backends(g_, inputs_, {"ref"}, {"faulty_op"});
  ASSERT_TRUE(r.culprit);
  extract_reproducer(r, dir_.string());
  Graph one = load_model((dir_ / "model.onnx").string());
  ASSERT_EQ(one.nodes.size(), 1u);
  EXPECT_EQ(one.nodes[0].op_type, "Tanh");
  EXPECT_EQ(one.nodes[0].name, r.culprit->value.node_name);
  ConformOptions o;
  auto bad = run_case(dir_.string(), "faulty_op", o);
  EXPECT_EQ(bad.status, CaseStatus::failed) << bad.detail;
  EXPECT_NEAR(bad.max_abs, kFaultDelta, 1e-6);
  for (const char* b : {"ref", "cpu"}) {
    auto good = run_case(dir_.string(), b, o);
    EXPECT_EQ(good.status, CaseStatus::passed) << b << ": " << good.detail;
  }
  // conform --bisect on the reproducer names the node again.
  std::string line = bisect_case(dir_.string(), "faulty_op", o.rtol, o.atol);
  EXPECT_NE(line.find("'" + r.culprit->value.node_name + "' (Tanh)"), std::string::npos) << line;
  EXPECT_NE(line.find("op fault"), std::string::npos) << line;
}

TEST_F(Diff, ExtractedFusionReproducerFailsUnderConform) {
  auto r = diff_backends(g_, inputs_, {"cpu", true}, {"faulty_fusion"});
  ASSERT_TRUE(r.culprit);
  extract_reproducer(r, dir_.string());
  Graph sub = load_model((dir_ / "model.onnx").string());
  ASSERT_EQ(sub.nodes.size(), 2u);  // the kernel's Mul and Tanh
  EXPECT_EQ(sub.nodes[0].op_type, "Mul");
  EXPECT_EQ(sub.nodes[1].op_type, "Tanh");
  ConformOptions o;
  auto bad = run_case(dir_.string(), "faulty_fusion", o);
  EXPECT_EQ(bad.status, CaseStatus::failed) << bad.detail;
  for (const char* b : {"ref", "cpu"}) {
    auto good = run_case(dir_.string(), b, o);
    EXPECT_EQ(good.status, CaseStatus::passed) << b << ": " << good.detail;
  }
  std::string line = bisect_case(dir_.string(), "faulty_fusion", o.rtol, o.atol);
  EXPECT_NE(line.find("fusion fault"), std::string::npos) << line;
}

TEST_F(Diff, ErrorsAreOneLine) {
  EXPECT_THROW(diff_backends(g_, inputs_, {"ref"}, {"no_such_backend"}), Error);
  auto r = diff_backends(g_, inputs_, {"ref"}, {"cpu"});
  try {
    extract_reproducer(r, dir_.string());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[diff]"), std::string::npos);
  }
}

// The CLI on a real model: ref vs cpu and fused vs unfused agree; --json holds the report.
TEST_F(Diff, CliOnSharedModel) {
  std::string shared = testing::shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared/models not found (set FUSOR_SHARED)";
  const char* bin = std::getenv("FUSOR_BIN");
  std::string fusor = bin ? bin : "./fusor";
  if (!fs::exists(fusor)) GTEST_SKIP() << "fusor binary not found (FUSOR_BIN unset)";
  fs::create_directories(dir_);
  std::string json = (dir_ / "d.json").string();
  std::string model = shared + "/models/mlp_block";
  for (std::string sides : {"--backend ref --backend cpu", "--backend cpu --no-fusion --backend cpu"}) {
    std::string cmd = fusor + " diff " + model + " " + sides + " --json " + json + " > " + (dir_ / "out.txt").string();
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::ifstream f(json);
    auto j = nlohmann::json::parse(f);
    EXPECT_TRUE(j["culprit"].is_null());
    EXPECT_GT(j["fused"].size(), 0u);
    EXPECT_EQ(j["op_stage"], sides.find("no-fusion") == std::string::npos);
  }
  std::string cmd = fusor + " diff " + model + " --backend ref > /dev/null 2>&1";
  EXPECT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 2);  // one backend is a usage error
}

}  // namespace
}  // namespace fusor
