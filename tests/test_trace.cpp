// Profile traces: Executable::profile (per-kernel timings, same outputs as run) and the JSON of
// `fusor bench --trace`, validated against the Trace Event Format (the rules chrome://tracing
// and Perfetto apply to the JSON Object Format) on cpu and on vulkan (lavapipe).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "backends/backend.h"
#include "ir/kernel_spec.h"
#include "ir/phases.h"
#include "runtime/session.h"
#include "runtime/trace.h"

namespace fs = std::filesystem;
using namespace fusor;

namespace {

const std::string kModel = std::string(FUSOR_SOURCE_DIR) + "/examples/gpt2_tiny/model.onnx";

// "" when j is a valid trace-event JSON object as fusor writes it, else what is wrong:
// traceEvents is an array of events; every event has a string ph and name and integer
// pid/tid; complete events ("X") have numeric ts >= 0 and dur >= 0 and an object args;
// metadata events ("M") name a process or thread in args.name; the complete events of one
// (pid, tid) nest properly (a viewer draws them as one stack per thread).
std::string trace_format_error(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("traceEvents") || !j["traceEvents"].is_array()) return "no traceEvents array";
  if (j.contains("displayTimeUnit") && j["displayTimeUnit"] != "ms" && j["displayTimeUnit"] != "ns")
    return "displayTimeUnit must be ms or ns";
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<double, double>>> threads;
  for (const auto& e : j["traceEvents"]) {
    if (!e.is_object()) return "an event is not an object";
    if (!e.contains("ph") || !e["ph"].is_string()) return "event without ph: " + e.dump();
    if (!e.contains("name") || !e["name"].is_string()) return "event without name: " + e.dump();
    if (!e.contains("pid") || !e["pid"].is_number_integer() || !e.contains("tid") || !e["tid"].is_number_integer())
      return "event without integer pid/tid: " + e.dump();
    const std::string ph = e["ph"];
    if (ph == "X") {
      if (!e.contains("ts") || !e["ts"].is_number() || e["ts"].get<double>() < 0) return "X event without ts >= 0: " + e.dump();
      if (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0) return "X event without dur >= 0: " + e.dump();
      if (e.contains("args") && !e["args"].is_object()) return "args is not an object: " + e.dump();
      threads[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}].push_back({e["ts"].get<double>(), e["dur"].get<double>()});
    } else if (ph == "M") {
      if (e["name"] != "process_name" && e["name"] != "thread_name") return "unknown metadata event: " + e.dump();
      if (!e.contains("args") || !e["args"].contains("name") || !e["args"]["name"].is_string())
        return "metadata without args.name: " + e.dump();
    } else {
      return "unexpected phase type '" + ph + "'";
    }
  }
  const double eps = 1e-3;  // us: rounding of ts + dur
  for (auto& [key, v] : threads) {
    std::sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.first != b.first ? a.first < b.first : a.second > b.second; });
    std::vector<double> stack;  // end times of the open slices
    for (auto& [ts, dur] : v) {
      while (!stack.empty() && stack.back() <= ts + eps) stack.pop_back();
      if (!stack.empty() && ts + dur > stack.back() + eps)
        return "slices overlap without nesting on pid " + std::to_string(key.first) + " tid " + std::to_string(key.second) +
               " at ts " + std::to_string(ts);
      stack.push_back(ts + dur);
    }
  }
  return "";
}

int run_cli(const std::string& args) {
  const char* bin = std::getenv("FUSOR_BIN");
  std::string cmd = std::string(bin ? bin : "./fusor") + " " + args + " >/dev/null";
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
}

bool have_cli() { return std::getenv("FUSOR_BIN") || fs::exists("./fusor"); }

bool backend_has_device(const std::string& name) {
  try {
    return !make_backend(name)->devices().empty();
  } catch (const Error&) {
    return false;
  }
}

// Profiles the model on a backend, checks timings against the plan and the outputs against
// run(), and returns the plan for further checks.
void check_profile(const std::string& backend) {
  Graph g = load_model(kModel);
  auto inputs = random_inputs(g, 7);
  Graph sg = specialize(g, inputs);
  auto exe = make_backend(backend)->compile(sg, {});
  Plan plan = build_plan(sg, {});
  std::vector<Tensor> profiled;
  profiled.push_back(Tensor(DType::f32, {1}));
  profiled[0].poison();
  std::vector<KernelTiming> t = exe->profile(inputs, &profiled);
  std::vector<Tensor> want = exe->run(inputs);
  ASSERT_EQ(profiled.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    auto c = compare_tensors(profiled[k], want[k], 0, 0);  // same kernels, same order: bit-identical
    EXPECT_TRUE(c.ok) << backend << " output " << k << ": " << c.message;
  }
  // One entry per launch; cuda times a cuBLASLt or cuDNN call (what = "cublasLt" / "cudnn")
  // apart from the epilogue kernel that follows it, so a launch may have two entries there.
  if (backend != "cuda") ASSERT_EQ(static_cast<int>(t.size()), exe->kernel_count()) << backend;
  ASSERT_GT(t.size(), 10u);
  std::set<int> seen;
  double total = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    ASSERT_GE(t[i].kernel, 0);
    ASSERT_LT(t[i].kernel, static_cast<int>(plan.kernels.size()));
    EXPECT_GE(t[i].start_us, 0);
    EXPECT_GE(t[i].dur_us, 0);
    if (i > 0) {
      EXPECT_GE(t[i].kernel, t[i - 1].kernel) << "launch order is plan order";
      if (t[i].kernel == t[i - 1].kernel) EXPECT_TRUE((t[i - 1].what == "cublasLt" || t[i - 1].what == "cudnn") && t[i].what.empty()) << i;
      EXPECT_GE(t[i].start_us + 1e-3, t[i - 1].start_us + t[i - 1].dur_us) << "kernel " << i << " starts before the previous ends";
    }
    seen.insert(t[i].kernel);
    total += t[i].dur_us;
  }
  for (auto& x : t) EXPECT_TRUE(x.what.empty() || (backend == "cuda" && (x.what == "cublasLt" || x.what == "cudnn"))) << x.what;
  EXPECT_EQ(static_cast<int>(seen.size()), exe->kernel_count());
  EXPECT_GT(total, 0) << backend << ": no kernel took any time";
}

// Runs `fusor bench --trace` and checks the JSON: format, one slice per timed kernel named by
// its fused ops with the plan's bytes, the compile phases, and the timed runs.
void check_cli_trace(const std::string& backend, const std::vector<std::string>& phases) {
  fs::path dir = fs::temp_directory_path() / ("fusor_trace_" + backend + "_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string file = (dir / "trace.json").string();
  ASSERT_EQ(run_cli("bench " + kModel + " --backend " + backend + " --iters 3 --warmup 1 --trace " + file), 0);
  std::ifstream f(file);
  ASSERT_TRUE(f.good()) << file;
  nlohmann::json j = nlohmann::json::parse(f);
  fs::remove_all(dir);
  EXPECT_EQ(trace_format_error(j), "");

  Graph g = load_model(kModel);
  Graph sg = specialize(g, random_inputs(g, 0));
  Plan plan = build_plan(sg, {});
  std::map<std::string, const KernelSpec*> by_name;
  for (auto& k : plan.kernels) by_name[k.name] = &k;
  std::multiset<std::string> phase_names;
  int kernels = 0, runs = 0, calls = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (e["cat"] == "compile") phase_names.insert(e["name"].get<std::string>());
    if (e["cat"] == "run") ++runs;
    if (e["cat"] != "kernel") continue;
    ++kernels;
    calls += e["args"].contains("call") ? 1 : 0;
    const std::string kname = e["args"]["kernel"];
    ASSERT_TRUE(by_name.count(kname)) << kname;
    const KernelSpec& k = *by_name[kname];
    std::string ops;
    for (auto& o : k.fused_ops) ops += (ops.empty() ? "" : "+") + o;
    if (e["args"].contains("call")) ops = e["args"]["call"].get<std::string>() + " " + ops;  // cuBLASLt
    EXPECT_EQ(e["name"], ops);
    const int64_t bytes = kernel_bytes_read(plan, k) + kernel_bytes_written(plan, k);
    EXPECT_EQ(e["args"]["bytes"].get<int64_t>(), bytes) << kname;
    const double dur = e["dur"];
    if (dur > 0 && !e["args"].contains("call")) EXPECT_NEAR(e["args"]["gb_per_s"].get<double>(), bytes / (dur * 1e3), 1e-9 * bytes) << kname;
  }
  EXPECT_GT(kernels, 10);
  EXPECT_LE(kernels - calls, static_cast<int>(plan.kernels.size()));
  EXPECT_EQ(j["otherData"]["kernels_timed"].get<int>(), kernels);
  EXPECT_EQ(runs, 3);
  for (const std::string& p : phases) EXPECT_GE(phase_names.count(p), 1u) << "phase '" << p << "' missing";
}

}  // namespace

TEST(Trace, FormatCheckerRejectsBadTraces) {
  // The checker itself: a trace that breaks each rule is caught (so a passing check means something).
  auto ok = nlohmann::json::parse(R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":10,"args":{}},
                                                      {"ph":"X","name":"b","pid":1,"tid":1,"ts":2,"dur":3}]})");
  EXPECT_EQ(trace_format_error(ok), "");
  auto overlap = ok;
  overlap["traceEvents"][1]["dur"] = 20;
  EXPECT_NE(trace_format_error(overlap), "");
  auto neg = ok;
  neg["traceEvents"][0]["dur"] = -1;
  EXPECT_NE(trace_format_error(neg), "");
  auto noname = ok;
  noname["traceEvents"][0].erase("name");
  EXPECT_NE(trace_format_error(noname), "");
  EXPECT_NE(trace_format_error(nlohmann::json::array()), "");
}

TEST(Trace, PhasesNestAndOnlyRecordWhileALogIsActive) {
  { PhaseScope ignored("nobody listens"); }
  PhaseLog log;
  {
    PhaseScope outer("outer");
    PhaseScope inner("inner");
  }
  ASSERT_EQ(log.phases().size(), 2u);
  EXPECT_EQ(log.phases()[0].name, "outer");
  EXPECT_EQ(log.phases()[0].depth, 0);
  EXPECT_EQ(log.phases()[1].depth, 1);
  EXPECT_LE(log.phases()[0].start_us, log.phases()[1].start_us);
  EXPECT_GE(log.phases()[0].start_us + log.phases()[0].dur_us, log.phases()[1].start_us + log.phases()[1].dur_us);
}

TEST(Trace, MakeTraceRejectsATimingOutsideThePlan) {
  Plan empty;
  TraceData d;
  d.plan = &empty;
  d.kernels.push_back({3, "", 0, 1});
  EXPECT_THROW(make_trace(d), Error);
}

TEST(Trace, CpuProfileTimesEveryKernelWithRunsOutputs) { check_profile("cpu"); }

TEST(Trace, RefHasNoKernelTimingsButTheSameOutputs) {
  Graph g = load_model(kModel);
  auto inputs = random_inputs(g, 3);
  auto exe = make_backend("ref")->compile(specialize(g, inputs), {});
  std::vector<Tensor> out;
  EXPECT_TRUE(exe->profile(inputs, &out).empty());
  auto want = exe->run(inputs);
  ASSERT_EQ(out.size(), want.size());
  EXPECT_TRUE(compare_tensors(out[0], want[0], 0, 0).ok);
}

TEST(Trace, CpuBenchTraceIsAValidTraceEventFile) {
  if (!have_cli()) GTEST_SKIP() << "fusor binary not found (FUSOR_BIN unset)";
  check_cli_trace("cpu", {"load", "shape inference", "backend compile", "fusion"});
}

#ifdef FUSOR_HAVE_VULKAN
TEST(Trace, VulkanProfileTimesEveryDispatchWithRunsOutputs) {
  if (!backend_has_device("vulkan")) GTEST_SKIP() << "no Vulkan device";
  check_profile("vulkan");
}

TEST(Trace, VulkanBenchTraceIsAValidTraceEventFile) {
  if (!have_cli()) GTEST_SKIP() << "fusor binary not found (FUSOR_BIN unset)";
  if (!backend_has_device("vulkan")) GTEST_SKIP() << "no Vulkan device";
  check_cli_trace("vulkan", {"load", "shape inference", "backend compile", "fusion", "codegen", "compile", "record"});
}
#endif

#ifdef FUSOR_HAVE_CUDA
// Compiled everywhere; runs where a CUDA device is (the H200 run).
TEST(Trace, CudaProfileTimesEveryLaunchWithRunsOutputs) {
  if (!backend_has_device("cuda")) GTEST_SKIP() << "no CUDA device";
  check_profile("cuda");
}

TEST(Trace, CudaBenchTraceIsAValidTraceEventFile) {
  if (!have_cli()) GTEST_SKIP() << "fusor binary not found (FUSOR_BIN unset)";
  if (!backend_has_device("cuda")) GTEST_SKIP() << "no CUDA device";
  check_cli_trace("cuda", {"load", "shape inference", "backend compile", "fusion", "codegen", "compile", "record"});
}
#endif
