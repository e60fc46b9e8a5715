// Bounded fuzzing from ctest (no libFuzzer needed): 20,000 mutations (or 30 s) of the seed
// models through import + shape inference + planning + the reference, within a time budget.
// Each must succeed or fail with a fusor::Error; a crash, hang or any other exception fails.
// The unbounded run is the libFuzzer target tools/fuzz/fuzz_models.cpp (README "Fuzzing").
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fuzz_harness.h"

namespace fusor {
namespace {

TEST(Fuzz, SeedModelsRunClean) {
  auto seeds = fuzz::seed_models();
  ASSERT_GE(seeds.size(), 5u);
  for (size_t i = 0; i < seeds.size(); ++i) {
    Graph g = load_onnx_from_bytes(seeds[i], ".");  // the seeds themselves are valid models
    auto in = random_inputs(g, 1);
    auto out = run_on_backend("ref", specialize(g, in), in);
    EXPECT_FALSE(out.empty()) << "seed " << i;
  }
}

// Inputs that once crashed a fuzz run (tests/fuzz_regressions/, one file per fault kind); under
// scripts/sanitize.sh they also seed the libFuzzer corpus.
TEST(Fuzz, RegressionInputsEndInResultsOrFusorErrors) {
  const std::filesystem::path dir = std::filesystem::path(FUSOR_SOURCE_DIR) / "tests" / "fuzz_regressions";
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::ifstream f(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    SCOPED_TRACE(e.path().filename().string());
    EXPECT_NO_THROW(fuzz::run_one(ss.str()));
    ++n;
  }
  EXPECT_GE(n, 1);
}

TEST(Fuzz, MutatedModelsEndInResultsOrFusorErrors) {
  // FUSOR_FUZZ_ITERS overrides the count (e.g. 100000 for a longer local run), FUSOR_FUZZ_SEED
  // the generator's seed (another run explores other mutations), and FUSOR_FUZZ_LAST=FILE keeps
  // each input there before it runs, so a crash that ends the process leaves its input behind.
  const char* env = std::getenv("FUSOR_FUZZ_ITERS");
  const char* seed_env = std::getenv("FUSOR_FUZZ_SEED");
  const char* last = std::getenv("FUSOR_FUZZ_LAST");
  const int iters = env ? std::atoi(env) : 20000;
  const auto budget = std::chrono::seconds(env ? 100000 : 30);  // slow (sanitizer) builds stop early
  const auto seeds = fuzz::seed_models();
  std::mt19937_64 rng(seed_env ? std::strtoull(seed_env, nullptr, 10) : 20261130);
  const auto t0 = std::chrono::steady_clock::now();
  int done = 0;
  for (; done < iters && std::chrono::steady_clock::now() - t0 < budget; ++done) {
    std::string m = seeds[rng() % seeds.size()];
    const int depth = 1 + static_cast<int>(rng() % 3);
    for (int d = 0; d < depth; ++d) m = fuzz::mutate(m, rng);
    if (last) std::ofstream(last, std::ios::binary | std::ios::trunc) << m;
    try {
      fuzz::run_one(m);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "iteration " << done << ": non-fusor exception " << typeid(e).name() << ": " << e.what();
      if (::testing::Test::HasFailure() && done > 0) break;
    }
  }
  std::printf("fuzz: %d mutated models in %.1f s\n", done,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  EXPECT_GE(done, std::min(iters, 500));
}

}  // namespace
}  // namespace fusor
