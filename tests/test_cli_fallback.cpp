// The CLI's host-fallback surface on a node-suite case whose diagonal Einsum no GPU emitter
// generates: `explain --backend` lists the break (cuda needs no device for that), `run` prints it
// and passes, `--no-fallback` refuses with one line. Skips without the fusor binary or ../shared.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "backends/backend.h"
#include "test_util.h"

namespace fusor {
namespace {

struct Out {
  int status = -1;
  std::string text;  // stdout and stderr together
};

Out cli(const std::string& args) {
  const char* bin = std::getenv("FUSOR_BIN");
  std::string cmd = std::string(bin ? bin : "./fusor") + " " + args + " 2>&1";
  Out o;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return o;
  std::array<char, 4096> buf;
  for (size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) o.text.append(buf.data(), n);
  int rc = pclose(p);
  o.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
  return o;
}

TEST(CliFallback, ExplainRunAndNoFallback) {
  if (!std::getenv("FUSOR_BIN") && !std::filesystem::exists("./fusor")) GTEST_SKIP() << "fusor binary not found (FUSOR_BIN unset)";
  const std::string shared = testing::shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared/onnx-tests not present (set FUSOR_SHARED)";
  const std::string c = shared + "/onnx-tests/node/test_einsum_batch_diagonal";
  auto names = backend_names();
  auto built = [&](const char* n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  int checked = 0;
  if (built("cuda")) {
    Out e = cli("explain " + c + " --backend cuda");
    EXPECT_EQ(e.status, 0) << e.text;
    EXPECT_NE(e.text.find("graph breaks on cuda: 1 node(s)"), std::string::npos) << e.text;
    EXPECT_NE(e.text.find("(Einsum) on the host"), std::string::npos) << e.text;
    Out r = cli("explain " + c + " --backend cuda --no-fallback");
    EXPECT_EQ(r.status, 2) << r.text;
    EXPECT_NE(r.text.find("cannot run node"), std::string::npos) << r.text;
    ++checked;
  }
  if (built("vulkan") && !make_backend("vulkan")->devices().empty()) {
    Out run = cli("run " + c + " --backend vulkan");
    EXPECT_EQ(run.status, 0) << run.text;
    EXPECT_NE(run.text.find("break   node"), std::string::npos) << run.text;
    EXPECT_NE(run.text.find("PASS"), std::string::npos) << run.text;
    Out refused = cli("run " + c + " --backend vulkan --no-fallback");
    EXPECT_EQ(refused.status, 2) << refused.text;
    EXPECT_NE(refused.text.find("Einsum"), std::string::npos) << refused.text;
    ++checked;
  }
  if (!checked) GTEST_SKIP() << "neither cuda nor a Vulkan device is available";
}

}  // namespace
}  // namespace fusor
