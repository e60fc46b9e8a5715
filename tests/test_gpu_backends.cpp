// The GPU backends (vulkan, cuda) against ref: random graphs, the shared models, and the
// node suite. Each test skips, printing why, when its backend is not built or has no device.
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "backends/backend.h"
#include "random_graph.h"
#include "runtime/conform.h"
#include "runtime/session.h"
#include "test_util.h"
#ifdef FUSOR_HAVE_VULKAN
#include "backends/vulkan/vulkan_backend.h"
#endif

namespace fusor {
namespace {

// Skips the calling test unless `name` is built in and sees a device.
#define REQUIRE_DEVICE(name)                                                                         \
  do {                                                                                                \
    auto names = backend_names();                                                                     \
    if (std::find(names.begin(), names.end(), name) == names.end())                                   \
      GTEST_SKIP() << "backend '" << name << "' is not built in";                                      \
    if (make_backend(name)->devices().empty()) GTEST_SKIP() << "backend '" << name << "': no device"; \
  } while (0)

void random_graphs_on(const std::string& backend, int count) {
  int ran = 0;
  for (uint64_t seed = 1; seed <= static_cast<uint64_t>(count); ++seed) {
    auto rg = testing::random_graph(seed);
    std::vector<Tensor> in;
    for (size_t i = 0; i < rg.g.inputs.size(); ++i) {
      const Value& v = rg.g.values[rg.g.inputs[i]];
      in.push_back(testing::random_tensor(v.dtype, v.shape, seed * 131 + i));
    }
    try {
      Graph sg = specialize(rg.g, in);
      auto ref = run_on_backend("ref", sg, in);
      for (bool fusion : {true, false}) {
        CompileOptions o;
        o.fusion = fusion;
        auto got = run_on_backend(backend, sg, in, o);
        ASSERT_EQ(got.size(), ref.size());
        for (size_t k = 0; k < ref.size(); ++k)
          EXPECT_LE(relative_l2(got[k], ref[k]), rg.elementwise_only ? 1e-6 : 1e-5)
              << backend << " seed " << seed << " output " << k << (fusion ? " fused" : " unfused");
      }
      ++ran;
    } catch (const Unsupported& e) {
      std::printf("seed %llu skipped: %s\n", static_cast<unsigned long long>(seed), e.what());
    } catch (const std::exception& e) {
      ADD_FAILURE() << backend << " seed " << seed << ": " << e.what();
    }
    if (::testing::Test::HasFailure()) break;
  }
  std::printf("%s: %d random graphs matched ref\n", backend.c_str(), ran);
  EXPECT_GT(ran, count * 3 / 4);
}

void models_on(const std::string& backend) {
  std::string shared = testing::shared_dir();
  std::vector<std::string> dirs;
  if (!shared.empty())
    for (const char* m : {"mlp_block", "squeezenet1_1", "mobilenet_v3_small", "gpt2_tiny"}) dirs.push_back(shared + "/models/" + m);
  else
    dirs.push_back(std::string(FUSOR_SOURCE_DIR) + "/examples/gpt2_tiny");
  for (auto& d : dirs) {
    ConformOptions o;
    if (d.find("gpt2_tiny") != std::string::npos) o.atol = 1e-6;  // see test_conformance.cpp
    auto r = run_case(d, backend, o);
    EXPECT_EQ(r.status, CaseStatus::passed) << d << " on " << backend << ": " << r.detail;
  }
}

// Every node-suite case ref passes must pass on the backend or be skipped (an op the backend
// lacks and the host cannot take over, reported with the reason); at least min_pass cases must
// pass. With host fallback on, ops the GPU emitters lack run on the host, so vulkan passes every
// case ref passes on lavapipe (1680 of 1680 when this was written).
// message_count (Vulkan: validation messages so far) names the cases that raised messages.
void node_suite_on(const std::string& backend, int min_pass, std::function<int()> message_count = nullptr) {
  std::string shared = testing::shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared/onnx-tests not present (set FUSOR_SHARED)";
  ConformOptions o;
  o.backends = {"ref", backend};
  int seen = message_count ? message_count() : 0;
  auto results = run_conformance(find_cases({shared + "/onnx-tests/node"}), o, [&](const CaseResult& r, size_t, size_t) {
    if (!message_count) return;
    int now = message_count();
    if (now != seen) ADD_FAILURE() << r.case_dir << " on " << r.backend << ": " << now - seen << " validation messages";
    seen = now;
  });
  std::map<std::string, CaseStatus> ref;
  int passed = 0, skipped = 0;
  for (auto& r : results)
    if (r.backend == "ref") ref[r.case_dir] = r.status;
  for (auto& r : results) {
    if (r.backend != backend || ref[r.case_dir] != CaseStatus::passed) continue;
    EXPECT_NE(r.status, CaseStatus::failed) << r.case_dir << ": " << r.detail;
    passed += r.status == CaseStatus::passed;
    skipped += r.status == CaseStatus::skipped;
  }
  std::printf("%s: %d passed, %d skipped of the cases ref passes\n", backend.c_str(), passed, skipped);
  EXPECT_GE(passed, min_pass);
}

#ifdef FUSOR_HAVE_VULKAN
// Under the Khronos validation layer with synchronization validation (read at instance
// creation, so set before the first backend exists); any message fails the test.
#define VULKAN_VALIDATED(body)                                                              \
  setenv("FUSOR_VK_VALIDATION", "1", 1);                                                    \
  REQUIRE_DEVICE("vulkan");                                                                 \
  body;                                                                                     \
  EXPECT_EQ(vulkan_validation_message_count(), 0) << vulkan_validation_messages();
TEST(Vulkan, RandomGraphsMatchReference) { VULKAN_VALIDATED(random_graphs_on("vulkan", 150)) }
TEST(Vulkan, ModelsPass) { VULKAN_VALIDATED(models_on("vulkan")) }
TEST(Vulkan, NodeSuiteNoFailureWhereRefPasses) {
  VULKAN_VALIDATED(node_suite_on("vulkan", 1210, vulkan_validation_message_count))
}
#endif
TEST(Cuda, RandomGraphsMatchReference) {
  REQUIRE_DEVICE("cuda");
  random_graphs_on("cuda", 300);
}
TEST(Cuda, NodeSuiteNoFailureWhereRefPasses) {
  REQUIRE_DEVICE("cuda");
  node_suite_on("cuda", 1030);
}
TEST(Cuda, ModelsPass) {
  REQUIRE_DEVICE("cuda");
  models_on("cuda");
}

}  // namespace
}  // namespace fusor
