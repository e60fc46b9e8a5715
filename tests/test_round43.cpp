// Red-team round 43 (docs/redteam.md): the fusor CLI as CI jobs and shell pipelines script it —
// exit codes, machine-readable output, option parsing, the paths conform takes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "fuzz_harness.h"
#include "runtime/tensor_io.h"
#include "test_util.h"

namespace fusor {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

// A backend-test case of z = x - y over float [2, 3]: its stored output right (pass) or off by
// one everywhere (fail); without test sets when sets = false.
void write_case(const fs::path& dir, bool pass, bool sets = true) {
  fs::create_directories(dir);
  std::ofstream(dir / "model.onnx", std::ios::binary) << fuzz::sub_model_proto().SerializeAsString();
  if (!sets) return;
  const Tensor a = testing::random_tensor(DType::f32, {2, 3}, 1), b = testing::random_tensor(DType::f32, {2, 3}, 2);
  Tensor z(DType::f32, {2, 3});
  for (int64_t i = 0; i < 6; ++i) z.set(i, static_cast<float>(a.get(i) - b.get(i)) + (pass ? 0.0f : 1.0f));
  fs::create_directories(dir / "test_data_set_0");
  write_tensor_pb((dir / "test_data_set_0/input_0.pb").string(), a, "x");
  write_tensor_pb((dir / "test_data_set_0/input_1.pb").string(), b, "y");
  write_tensor_pb((dir / "test_data_set_0/output_0.pb").string(), z, "z");
}

struct Cases {
  TempDir t;
  std::string pass, fail, bare;
  Cases() {
    write_case(t / "pass", true);
    write_case(t / "fail", false);
    write_case(t / "bare", true, false);
    pass = t / "pass", fail = t / "fail", bare = t / "bare";
  }
};

bool has(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

TEST(Round43, ConformBackendTakesOneValueAndNothingCheckedIsNotAPass) {
  if (!testing::have_cli()) GTEST_SKIP() << "no fusor CLI";
  Cases c;
  std::string out;
  // Was exit 0: `--backend` took every path after it as a backend name.
  EXPECT_EQ(testing::run_cli("conform --backend cpu " + c.fail + " " + c.bare, &out), 1) << out;
  EXPECT_TRUE(has(out, "FAIL cpu")) << out;
  EXPECT_EQ(testing::run_cli("conform --backend=ref " + c.pass + " " + c.fail, &out), 1) << out;
  EXPECT_TRUE(has(out, "1 passed, 1 failed")) << out;
  // Only skips (no test sets): was exit 0, a green CI job that checked nothing.
  EXPECT_EQ(testing::run_cli("conform --backend cpu " + c.bare, &out), 1) << out;
  EXPECT_TRUE(has(out, "no case was checked (1 skipped)")) << out;
  EXPECT_EQ(testing::run_cli("conform --backend nosuch " + c.pass, &out), 2) << out;
  EXPECT_TRUE(has(out, "unknown or not built-in backend 'nosuch'")) << out;
}

TEST(Round43, ConformTakesCaseFoldersEachOnceSymlinksIncluded) {
  if (!testing::have_cli()) GTEST_SKIP() << "no fusor CLI";
  Cases c;
  std::string out;
  // Another file beside model.onnx tested model.onnx and passed.
  std::ofstream(c.t / "fail/notes.txt") << "x";
  EXPECT_EQ(testing::run_cli("conform --backend ref " + c.fail + "/notes.txt", &out), 2) << out;
  EXPECT_TRUE(has(out, "is a file, not a case")) << out;
  EXPECT_EQ(testing::run_cli("conform --backend ref " + c.fail + "/model.onnx", &out), 1) << out;
  // The same case named three ways ran three times.
  EXPECT_EQ(testing::run_cli("conform --backend ref " + c.pass + " " + c.pass + "/ " + c.pass + "/../pass", &out), 0) << out;
  EXPECT_TRUE(has(out, "1 passed, 0 failed, 0 skipped")) << out;
  // A symlinked case folder inside a tree was dropped silently (exit 0).
  fs::create_directories(c.t / "suite");
  fs::create_directory_symlink(c.t / "fail", c.t / "suite/linked");
  fs::create_directory_symlink(c.t / "suite", c.t / "suite/loop");  // walked once, no endless recursion
  EXPECT_EQ(testing::run_cli("conform --backend ref " + (c.t / "suite"), &out), 1) << out;
  EXPECT_TRUE(has(out, "0 passed, 1 failed")) << out;
}

TEST(Round43, JsonAloneOnStdoutAndOutputPathsCheckedFirst) {
  if (!testing::have_cli()) GTEST_SKIP() << "no fusor CLI";
  Cases c;
  const char* bin = std::getenv("FUSOR_BIN");
  const std::string fusor = bin ? bin : "./fusor", json = c.t / "out.json";
  for (const char* to : {"-", "/dev/stdout"}) {
    const int rc = std::system((fusor + " conform --backend ref " + c.pass + " " + c.fail + " --json " + to + " >" + json + " 2>/dev/null").c_str());
    EXPECT_EQ(WEXITSTATUS(rc), 1) << to;
    std::ifstream in(json);
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);  // was the summary lines mixed in
    ASSERT_FALSE(j.is_discarded()) << to;
    EXPECT_EQ(j["cases"].size(), 2u) << to;
    EXPECT_EQ(j["summary"]["ref"]["failed"], 1) << to;
  }
  std::string out;
  // Was: every case ran, then exit 2, hiding the result.
  EXPECT_EQ(testing::run_cli("conform --backend ref " + c.pass + " --json /nonexistent-dir/r.json", &out), 2) << out;
  EXPECT_TRUE(has(out, "the folder '/nonexistent-dir' does not exist")) << out;
  EXPECT_FALSE(has(out, "passed")) << out;
  EXPECT_EQ(testing::run_cli("bench " + c.pass + " --backend ref --iters 1 --trace " + c.pass, &out), 2) << out;
  EXPECT_TRUE(has(out, "is a folder, not a file")) << out;
  if (fs::exists("/dev/full")) {  // output that never arrived was exit 0
    const std::string err = c.t / "err.txt";
    const int rc = std::system((fusor + " explain " + c.pass + " --backend ref >/dev/full 2>" + err).c_str());
    EXPECT_EQ(WEXITSTATUS(rc), 2);
    std::ifstream in(err);
    out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    EXPECT_TRUE(has(out, "writing to stdout failed")) << out;
  }
}

TEST(Round43, OptionsTakeOneValueAndAnUnknownCommandIsNamed) {
  if (!testing::have_cli()) GTEST_SKIP() << "no fusor CLI";
  Cases c;
  std::string out;
  EXPECT_NE(testing::run_cli("nosuch", &out), 0);
  EXPECT_TRUE(has(out, "unknown command 'nosuch' (commands: run, conform")) << out;
  // --dim took the model path as a second value: "model is required".
  EXPECT_EQ(testing::run_cli("explain --dim N=3 " + c.pass + " --backend ref", &out), 2) << out;
  EXPECT_TRUE(has(out, "--dim names 'N', which is not a symbolic dim")) << out;
}

}  // namespace
}  // namespace fusor
