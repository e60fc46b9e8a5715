// `fusor bench --phases` (README "Load-time profile"): every phase from the ONNX file to the
// first result is listed, nested phases fit inside their parent, the device opens on a thread
// during the load unless --serial-open; and PhaseLog's CPU time and added (pooled) phases.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "backends/backend.h"
#include "ir/phases.h"
#include "test_util.h"

namespace fusor {
namespace {

using testing::have_cli;
using testing::run_cli;

const std::string kModel = std::string(FUSOR_SOURCE_DIR) + "/examples/gpt2_tiny";

bool has_device(const std::string& name) {
  try {
    return !make_backend(name)->devices().empty();
  } catch (const Error&) {
    return false;
  }
}

// `fusor bench kModel --phases --json ARGS`, parsed; fails the test on a non-zero exit.
nlohmann::json bench_json(const std::string& args) {
  std::string out;
  const int rc = run_cli("bench " + kModel + " --iters 1 --warmup 0 --phases --json " + args, &out);
  EXPECT_EQ(rc, 0) << out;
  const size_t at = out.find('{');
  if (rc != 0 || at == std::string::npos) return {};
  return nlohmann::json::parse(out.substr(at));
}

std::set<std::string> names(const nlohmann::json& j) {
  std::set<std::string> s;
  for (const auto& p : j["phases"]) s.insert(p["name"].get<std::string>());
  return s;
}

bool has_prefix(const std::set<std::string>& s, const std::string& prefix) {
  for (const auto& n : s)
    if (n.rfind(prefix, 0) == 0) return true;
  return false;
}

// Each timed phase's direct children (the next deeper phases before the depth returns to its
// own) last no longer than it does; summed-over-threads phases (cpu_ms -1) are exempt.
void check_nesting(const nlohmann::json& phases) {
  for (size_t i = 0; i < phases.size(); ++i) {
    const int d = phases[i]["depth"];
    double children = 0;
    for (size_t k = i + 1; k < phases.size() && phases[k]["depth"].get<int>() > d; ++k)
      if (phases[k]["depth"].get<int>() == d + 1 && phases[k]["cpu_ms"].get<double>() >= 0) children += phases[k]["ms"].get<double>();
    EXPECT_LE(children, phases[i]["ms"].get<double>() + 0.05) << phases[i]["name"];
    EXPECT_GE(phases[i]["ms"].get<double>(), 0) << phases[i]["name"];
  }
}

TEST(BenchPhases, CpuListsEveryHostPhase) {
  if (!have_cli()) GTEST_SKIP() << "fusor binary not found (FUSOR_BIN unset)";
  nlohmann::json j = bench_json("--backend cpu");
  ASSERT_TRUE(j.contains("phases"));
  const std::set<std::string> n = names(j);
  for (const char* want : {"load", "read + parse (protobuf)", "import (tensors, nodes, types)", "shape inference", "backend compile",
                           "fusion", "decompose + passes", "fusion pass", "memory plan", "first run"})
    EXPECT_TRUE(n.count(want)) << "phase '" << want << "' missing";
  check_nesting(j["phases"]);
  EXPECT_GT(j["first_run_ms"].get<double>(), 0);
  EXPECT_GE(j["to_first_result_ms"].get<double>() + 0.05,
            j["load_ms"].get<double>() + j["compile_ms"].get<double>() + j["first_run_ms"].get<double>());
  // The protobuf parse is part of the load.
  for (const auto& p : j["phases"])
    if (p["name"] == "read + parse (protobuf)") EXPECT_LE(p["ms"].get<double>(), j["load_ms"].get<double>() + 0.05);
}

TEST(BenchPhases, TextOutputHasOneLinePerPhase) {
  if (!have_cli()) GTEST_SKIP() << "fusor binary not found (FUSOR_BIN unset)";
  std::string out;
  ASSERT_EQ(run_cli("bench " + kModel + " --backend cpu --iters 1 --warmup 0 --phases", &out), 0) << out;
  EXPECT_NE(out.find("\nphases "), std::string::npos) << out;
  EXPECT_NE(out.find("\n    read + parse (protobuf) "), std::string::npos) << out;  // nested under load
  EXPECT_NE(out.find("\n  first run "), std::string::npos) << out;
  std::string plain;
  ASSERT_EQ(run_cli("bench " + kModel + " --backend cpu --iters 1 --warmup 0", &plain), 0) << plain;
  EXPECT_EQ(plain.find("\nphases "), std::string::npos) << "phases printed without --phases";
}

#ifdef FUSOR_HAVE_VULKAN
TEST(BenchPhases, VulkanOpensTheDeviceDuringTheLoad) {
  if (!have_cli()) GTEST_SKIP() << "fusor binary not found (FUSOR_BIN unset)";
  if (!has_device("vulkan")) GTEST_SKIP() << "no Vulkan device";
  nlohmann::json j = bench_json("--backend vulkan");
  const std::set<std::string> n = names(j);
  for (const char* want : {"device open (Backend::prepare, on a thread during load)", "wait for device open", "device open", "weight upload",
                           "codegen", "compile", "record", "first run"})
    EXPECT_TRUE(n.count(want)) << "phase '" << want << "' missing";
  EXPECT_TRUE(has_prefix(n, "SPIR-V: ")) << "no SPIR-V cache/compile phase";
  EXPECT_TRUE(has_prefix(n, "vkCreateComputePipelines x")) << "no pipeline creation phase";
  check_nesting(j["phases"]);
  double opened = -1;
  for (const auto& p : j["phases"]) {
    if (p["name"] == "device open (Backend::prepare, on a thread during load)") EXPECT_GT(p["ms"].get<double>(), 0);
    // Once prepared, the compile finds the device open (a map lookup, not instance creation).
    if (p["name"] == "device open" && opened < 0) opened = p["ms"].get<double>();
  }
  EXPECT_GE(opened, 0);

  nlohmann::json s = bench_json("--backend vulkan --serial-open");
  const std::set<std::string> sn = names(s);
  EXPECT_FALSE(sn.count("device open (Backend::prepare, on a thread during load)"));
  EXPECT_TRUE(sn.count("device open"));
}
#endif

TEST(Phases, ScopesCarryProcessCpuTimeAndAddedPhasesNest) {
  PhaseLog log;
  {
    PhaseScope outer("outer");
    volatile double x = 0;
    for (int i = 0; i < 2000000; ++i) x = x + std::sqrt(static_cast<double>(i));
    log.add("summed", 0, 1234.5);
  }
  ASSERT_EQ(log.phases().size(), 2u);
  EXPECT_GE(log.phases()[0].cpu_us, 0);
  EXPECT_EQ(log.phases()[1].name, "summed");
  EXPECT_EQ(log.phases()[1].depth, 1);  // inside "outer"
  EXPECT_EQ(log.phases()[1].dur_us, 1234.5);
  EXPECT_EQ(log.phases()[1].cpu_us, -1);
  EXPECT_EQ(PhaseLog::active(), &log);
  std::thread([] { EXPECT_EQ(PhaseLog::active(), nullptr); }).join();  // thread-local
}

}  // namespace
}  // namespace fusor
