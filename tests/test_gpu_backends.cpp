// The GPU backends (vulkan, cuda) against ref: random graphs, the shared models, and the
// node suite. Each test skips, printing why, when its backend is not built or has no device.
#include <gtest/gtest.h>

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
#endif
TEST(Cuda, RandomGraphsMatchReference) {
  REQUIRE_DEVICE("cuda");
  random_graphs_on("cuda", 300);
}
TEST(Cuda, ModelsPass) {
  REQUIRE_DEVICE("cuda");
  models_on("cuda");
}

}  // namespace
}  // namespace fusor
