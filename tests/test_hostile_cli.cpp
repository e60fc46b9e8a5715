// Second red-team round (docs/redteam.md): the surfaces around `run` — conformance test sets
// that leave outputs unchecked or hold broken tensors, paths the OS cannot stat, device indices
// the host backends ignored, and the CLI's option values (tolerances, iteration counts, empty
// paths) of conform, diff, bench and explain.
#include <chrono>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "fuzz_harness.h"
#include "runtime/conform.h"
#include "runtime/session.h"
#include "runtime/tensor_io.h"
#include "test_util.h"

namespace fusor {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

// A Relu case folder: model.onnx plus test_data_set_0 with seeded random input and its expected
// output (both computed here, not hard-coded).
void write_relu_case(const std::string& dir) {
  fs::create_directories(fs::path(dir) / "test_data_set_0");
  auto m = fuzz::new_model(17);
  auto* g = m.mutable_graph();
  fuzz::set_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
  fuzz::add_node(g, "Relu", {"x"}, {"y"})->set_name("relu");
  fuzz::set_type(g->add_output(), "y", onnx::TensorProto::FLOAT, {2, 3});
  std::ofstream(fs::path(dir) / "model.onnx", std::ios::binary) << m.SerializeAsString();
  Tensor x(DType::f32, {2, 3}), y(DType::f32, {2, 3});
  x = random_inputs(load_model((fs::path(dir) / "model.onnx").string()), 7)[0];
  for (int64_t i = 0; i < x.numel(); ++i) y.set(i, std::max(0.0, x.get(i)));
  write_tensor_pb((fs::path(dir) / "test_data_set_0" / "input_0.pb").string(), x, "x");
  write_tensor_pb((fs::path(dir) / "test_data_set_0" / "output_0.pb").string(), y, "y");
}

TEST(HostileCli, TestSetsMustHoldEveryOutput) {
  TempDir t;
  const std::string dir = t / "relu";
  write_relu_case(dir);
  ConformOptions o;
  o.backends = {"ref"};
  CaseResult good = run_case(dir, "ref", o);
  EXPECT_EQ(good.status, CaseStatus::passed) << good.detail;

  // No output_0.pb: before, the case "passed" with nothing compared.
  fs::remove(fs::path(dir) / "test_data_set_0" / "output_0.pb");
  CaseResult r = run_case(dir, "cpu", o);
  EXPECT_EQ(r.status, CaseStatus::failed);
  EXPECT_NE(r.detail.find("has 0 output_K.pb files, the model has 1 outputs"), std::string::npos) << r.detail;

  // An empty (0-byte) output_0.pb parses to a tensor of data_type 0: before "skipped" (as an
  // unsupported dtype, exit 0), now a failure naming the file.
  std::ofstream(fs::path(dir) / "test_data_set_0" / "output_0.pb", std::ios::binary).flush();
  r = run_case(dir, "ref", o);
  EXPECT_EQ(r.status, CaseStatus::failed);
  EXPECT_NE(r.detail.find("has no data type"), std::string::npos) << r.detail;
  EXPECT_ERROR(read_tensor(t / "relu/test_data_set_0/output_0.pb"), "has no data type");
}

TEST(HostileCli, NonFiniteTolerancesAreRefused) {
  TempDir t;
  write_relu_case(t / "relu");
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity()}) {
    ConformOptions o;
    o.backends = {"ref"};
    o.rtol = bad;
    EXPECT_ERROR(run_conformance({t / "relu"}, o, nullptr), "tolerances must be finite");
  }
}

TEST(HostileCli, UnstatablePathsAreOneLineErrors) {
  TempDir t;
  // A symlink loop: std::filesystem threw filesystem_error (not a fusor::Error) from find_cases.
  fs::create_symlink(t / "loop_b", t / "loop_a");
  fs::create_symlink(t / "loop_a", t / "loop_b");
  EXPECT_ERROR(find_cases({t / "loop_a"}), "[conform] path '");
  EXPECT_ERROR(find_cases({t / "missing"}), "does not exist");
  EXPECT_ERROR(read_numbered_inputs(t / "missing"), "not a folder");
}

TEST(HostileCli, HostBackendsHaveOneDevice) {
  TempDir t;
  write_relu_case(t / "relu");
  Graph g = load_model(t / "relu/model.onnx");
  auto in = random_inputs(g, 3);
  for (const char* b : {"ref", "cpu"}) {
    for (int dev : {-1, 1, 1 << 30}) {
      CompileOptions o;
      o.device = dev;
      EXPECT_ERROR(Session(g, b, o).run(in), "[" + std::string(b) + "] device index " + std::to_string(dev) + " out of range");
    }
    CompileOptions o;
    auto out = Session(g, b, o).run(in);
    for (int64_t i = 0; i < out[0].numel(); ++i) EXPECT_EQ(out[0].get(i), std::max(0.0, in[0].get(i)));
  }
}

// Graph is a public struct that GraphBuilder::graph() hands out for edits: a node input, node
// output or graph output naming no value indexed past the value table (segfault) in topo_sort,
// specialize and Session. Now one [graph] line; GraphBuilder also refuses opsets the importer does.
TEST(HostileCli, HandEditedGraphsAreCheckedAtTheApiBoundary) {
  auto relu = [](const std::function<void(GraphBuilder&, int)>& edit) {
    GraphBuilder b;
    int x = b.input("x", DType::f32, {2});
    int y = b.op("Add", {x, x});
    b.output(b.op("Relu", {y}));
    edit(b, y);
    return b;
  };
  EXPECT_ERROR(relu([](GraphBuilder& b, int) { b.graph().nodes[0].inputs[1] = 12345; }).build(),
               "[graph] node 'Add_0' (Add) input: value id 12345 does not exist");
  EXPECT_ERROR(relu([](GraphBuilder& b, int) { b.graph().nodes[1].outputs[0] = -7; }).build(), "output: value id -7");
  EXPECT_ERROR(relu([](GraphBuilder& b, int) { b.graph().outputs.push_back(999); }).build(), "graph output: value id 999");
  EXPECT_ERROR(relu([](GraphBuilder& b, int) { b.graph().values[0].dtype = static_cast<DType>(200); }).build(),
               "dtype code 200, which is not a DType");
  EXPECT_ERROR(relu([](GraphBuilder& b, int y) { b.graph().nodes[0].inputs[1] = y; }).build(), "[graph] cycle through");
  // A graph edited after build() is checked by Session and specialize too.
  Graph g = relu([](GraphBuilder&, int) {}).build();
  Tensor x(DType::f32, {2});
  x.set(0, -1.5), x.set(1, 0.75);
  EXPECT_EQ(Session(g, "cpu").run({x})[0].get(1), 1.5);  // relu(x + x)
  g.nodes[1].inputs[0] = 77;
  EXPECT_ERROR(Session(g, "cpu"), "value id 77 does not exist");
  EXPECT_ERROR(specialize(g, {x}), "value id 77 does not exist");
  for (int opset : {0, -3, 999}) EXPECT_ERROR(GraphBuilder("g", opset), "outside the supported range");
  // -1 marks an omitted optional output (as the importer writes for LSTM's Y or Dropout's mask):
  // not an id to refuse.
  GraphBuilder d;
  int dx = d.input("x", DType::f32, {2});
  d.output(d.op("Dropout", {dx}));
  d.graph().nodes[0].outputs.push_back(-1);
  Graph dg = d.build();
  EXPECT_EQ(Session(dg, "cpu").run({x})[0].get(0), -1.5);
}

// The CLI: option values outside their domain exit 105 naming the option; file problems are one
// "fusor: error:" line. Needs the fusor binary (FUSOR_BIN, as ctest sets it).
TEST(HostileCli, OptionValuesOutOfRangeAreRefused) {
  if (!testing::have_cli()) GTEST_SKIP() << "fusor binary not found (FUSOR_BIN unset)";
  TempDir t;
  const std::string dir = t / "relu";
  write_relu_case(dir);
  std::string out;
  struct Case {
    std::string args, want;
    int rc;
  };
  const Case cases[] = {
      {"bench " + dir + " --backend cpu --iters 0", "--iters: Value 0 not in range", 105},
      {"bench " + dir + " --backend cpu --iters -1", "--iters: Value -1 not in range", 105},
      {"bench " + dir + " --backend cpu --warmup -3 --iters 1", "--warmup: Value -3 not in range", 105},
      {"bench " + dir + " --backend cpu --device -1 --iters 1", "--device: Value -1 not in range", 105},
      {"bench " + dir + " --backend cpu --device 2 --iters 1", "[cpu] device index 2 out of range", 2},
      {"bench " + dir + " --backend '' --iters 1", "--backend: an empty value is not allowed", 105},
      {"bench " + dir + " --backend cpu --iters 1 --trace ''", "--trace: an empty value is not allowed", 105},
      {"conform " + dir + " --backend ref --rtol nan", "a tolerance must be finite and >= 0, got nan", 105},
      {"conform " + dir + " --backend ref --atol -1", "a tolerance must be finite and >= 0, got -1", 105},
      {"conform " + dir + " --backend ref --rtol 1e-3x", "'1e-3x' is not a number", 105},
      {"diff " + dir + " --backend ref --backend cpu --rtol inf", "a tolerance must be finite", 105},
      {"explain " + dir + " --backend cpu --dot ''", "--dot: an empty value is not allowed", 105},
      {"run " + dir + " --backend ref --device 1", "[ref] device index 1 out of range", 2},
      {"diff " + dir + " --backend ref --backend cpu --inputs " + t / "missing", "[io] '", 2},
      {"run " + dir + " --backend ref --out " + dir + "/model.onnx/sub", "cannot create the output folder", 2},
      // uint64 seeds: "-1" was read as 2^64-1, 10^23 saturated to it.
      {"run " + dir + " --backend ref --seed -1", "a seed must be an integer in [0, 2^64), got '-1'", 105},
      {"diff " + dir + " --backend ref --backend cpu --seed 99999999999999999999999", "a seed must be an integer", 105},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(testing::run_cli(c.args, &out), c.rc) << c.args << "\n" << out;
    EXPECT_NE(out.find(c.want), std::string::npos) << c.args << "\n" << out;
    EXPECT_EQ(out.find("filesystem error"), std::string::npos) << out;
  }
  // Reports written to a full disk: the error surfaced only when the stream flushed at exit, so
  // conform --json (a small file, all in the buffer) exited 0 with nothing written.
  if (fs::exists("/dev/full")) {
    EXPECT_EQ(testing::run_cli("conform " + dir + " --backend ref --json /dev/full", &out), 2) << out;
    EXPECT_NE(out.find("[conform] cannot write '/dev/full'"), std::string::npos) << out;
    EXPECT_EQ(testing::run_cli("diff " + dir + " --backend ref --backend cpu --json /dev/full", &out), 2) << out;
    EXPECT_NE(out.find("[diff] cannot write '/dev/full'"), std::string::npos) << out;
    EXPECT_EQ(testing::run_cli("explain " + dir + " --backend cpu --dot /dev/full", &out), 2) << out;
    EXPECT_NE(out.find("[explain] cannot write '/dev/full'"), std::string::npos) << out;
    EXPECT_EQ(testing::run_cli("bench " + dir + " --backend cpu --iters 1 --trace /dev/full", &out), 2) << out;
    EXPECT_NE(out.find("[trace] cannot write '/dev/full'"), std::string::npos) << out;
  }
  // diff --inputs checks the numbering as run --inputs does (before: input_0 + input_5 were read
  // as two inputs in a row; a gap shifted every later input).
  fs::create_directories(t / "ins");
  fs::copy_file(t / "relu/test_data_set_0/input_0.pb", t / "ins/input_0.pb");
  fs::copy_file(t / "relu/test_data_set_0/input_0.pb", t / "ins/input_5.pb");
  EXPECT_EQ(testing::run_cli("diff " + dir + " --backend ref --backend cpu --inputs " + t / "ins", &out), 2) << out;
  EXPECT_NE(out.find("no input_1 file"), std::string::npos) << out;
  // run: a set with more (or, for several outputs, fewer) expected outputs than the model was
  // checked only on the first min(n, m); a set of inputs alone still just feeds the run.
  fs::copy_file(t / "relu/test_data_set_0/output_0.pb", t / "relu/test_data_set_0/output_1.pb");
  EXPECT_EQ(testing::run_cli("run " + dir + " --backend ref", &out), 2) << out;
  EXPECT_NE(out.find("has 2 output_K.pb files, the model has 1 outputs"), std::string::npos) << out;
  EXPECT_NE(out.find("[run] '"), std::string::npos) << out;  // the command's tag, not [conform]
  fs::remove(t / "relu/test_data_set_0/output_1.pb");
  fs::remove(t / "relu/test_data_set_0/output_0.pb");
  EXPECT_EQ(testing::run_cli("run " + dir + " --backend ref", &out), 0) << out;
  // conform on the set without its output: a failure, not a pass.
  EXPECT_EQ(testing::run_cli("conform " + dir + " --backend ref", &out), 1) << out;
  EXPECT_NE(out.find("has 0 output_K.pb files"), std::string::npos) << out;
  EXPECT_NE(out.find("[conform] '"), std::string::npos) << out;
}

// explain --dot quoted model names into DOT labels as they were: a node named
// `r", image="/etc/passwd` closed its label and gave the node an attribute of the model's choice.
TEST(HostileCli, DotLabelsEscapeModelNames) {
  if (!testing::have_cli()) GTEST_SKIP() << "fusor binary not found (FUSOR_BIN unset)";
  TempDir t;
  auto m = fuzz::new_model(17);
  auto* g = m.mutable_graph();
  const std::string evil_value = "x\\\"\nq";  // x \ " newline q
  fuzz::set_type(g->add_input(), evil_value, onnx::TensorProto::FLOAT, {2, 3});
  fuzz::add_node(g, "Relu", {evil_value}, {"y"})->set_name("r\", image=\"/etc/passwd");
  fuzz::set_type(g->add_output(), "y", onnx::TensorProto::FLOAT, {2, 3});
  fs::create_directories(t / "m");
  std::ofstream(t / "m/model.onnx", std::ios::binary) << m.SerializeAsString();
  std::string out;
  ASSERT_EQ(testing::run_cli("explain " + t / "m" + " --backend cpu --dot " + t / "plan.dot", &out), 0) << out;
  std::ifstream in(t / "plan.dot");
  const std::string dot((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(dot.find("image=\"/etc/passwd\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("r\\\", image=\\\"/etc/passwd"), std::string::npos) << dot;
  EXPECT_NE(dot.find("x\\\\\\\"\\\\nq"), std::string::npos) << dot;  // x\\\"\\nq: both escaped, newline as text
  // Graphviz (when installed) parses the file: explain then reports the SVG it rendered.
  if (std::system("command -v dot >/dev/null 2>&1") == 0) EXPECT_NE(out.find(".svg"), std::string::npos) << out;
}

// An output past the 2 GiB a .pb file holds: `run --out` refuses before running, in one line
// (it ran the model, 19 s and 6 GB here, then printed libprotobuf's log line and a second one).
TEST(HostileCli, OutputsTooBigForAPbFileAreRefusedBeforeTheRun) {
  if (!testing::have_cli()) GTEST_SKIP() << "fusor binary not found (FUSOR_BIN unset)";
  TempDir t;
  auto m = fuzz::new_model(17);
  auto* g = m.mutable_graph();
  auto* shape = g->add_initializer();
  shape->set_name("shape");
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(1);
  shape->add_int64_data(int64_t{1} << 29);  // 2^29 float32: 2 GiB
  fuzz::add_node(g, "ConstantOfShape", {"shape"}, {"y"});
  fuzz::set_type(g->add_output(), "y", onnx::TensorProto::FLOAT, {int64_t{1} << 29});
  fs::create_directories(t / "m");
  std::ofstream(t / "m/model.onnx", std::ios::binary) << m.SerializeAsString();
  std::string out;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_NE(testing::run_cli("run " + t / "m" + " --backend ref --out " + t / "o", &out), 0);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  EXPECT_NE(out.find("fusor: error: [io] output 'y' (--out) is float32 [536870912], 2147483648 bytes: past the 2 GiB a .pb file"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("libprotobuf"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(t / "o/output_0.pb"));
}

}  // namespace
}  // namespace fusor
