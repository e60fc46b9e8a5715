// Shared helpers for fusor tests.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <time.h>

#include <filesystem>
#include <sys/wait.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "backends/backend.h"
#include "ir/graph.h"
#include "ir/op_table.h"

namespace fusor::testing {

// ../shared (models and ONNX suites) or the FUSOR_SHARED override; empty when absent.
inline std::string shared_dir() {
  const char* env = std::getenv("FUSOR_SHARED");
  std::string d = env ? env : std::string(FUSOR_SOURCE_DIR) + "/../shared";
  return std::filesystem::exists(d + "/models") ? d : std::string();
}

// Seeded uniform values in [lo, hi), never all zero.
// A tensor of shape s holding v (row-major; numel must equal v.size()), and the same for
// integer values stored exactly.
inline Tensor tensor_of(Shape s, const std::vector<double>& v, DType t = DType::f32) {
  Tensor x(t, std::move(s));
  EXPECT_EQ(static_cast<size_t>(x.numel()), v.size());
  for (size_t i = 0; i < v.size(); ++i) x.set(static_cast<int64_t>(i), v[i]);
  return x;
}
// A string tensor of shape s holding v (row-major).
inline Tensor strings_of(Shape s, std::vector<std::string> v) {
  Tensor t(DType::string, std::move(s));
  EXPECT_EQ(t.strings.size(), v.size());
  t.strings = std::move(v);
  return t;
}

// Every element of an integer or bool tensor as int64 (for EXPECT_EQ against a vector).
inline std::vector<int64_t> int_values(const Tensor& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get_int(i));
  return v;
}

inline Tensor ints_of(Shape s, const std::vector<int64_t>& v, DType t = DType::i64) {
  Tensor x(t, std::move(s));
  EXPECT_EQ(static_cast<size_t>(x.numel()), v.size());
  for (size_t i = 0; i < v.size(); ++i) x.set_int(static_cast<int64_t>(i), v[i]);
  return x;
}

inline Tensor random_tensor(DType t, const Shape& s, uint64_t seed, double lo = -1.0, double hi = 1.0) {
  Tensor x(t, s);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, u(rng));
  return x;
}

// One node run through its op-table entry: every input becomes a graph constant (so shape
// inputs satisfy require_constant); std::nullopt is an omitted optional input. Outputs are
// poisoned before the reference runs, so an element it forgets shows up.
struct OpCall {
  std::string op;
  std::vector<std::optional<Tensor>> inputs;
  std::map<std::string, AttrValue> attrs = {};
  int opset = 0;  // 0: run_op's default_opset
  int outputs = 1;
};

inline std::vector<Tensor> run_op(const OpCall& c, int default_opset = 17) {
  const OpDef* def = lookup_op(c.op);
  if (!def) throw Error("test", "no op " + c.op);
  Graph g;
  Node n;
  n.name = c.op + "_0";
  n.op_type = c.op;
  n.opset = c.opset ? c.opset : default_opset;
  n.attrs = c.attrs;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    n.inputs.push_back(c.inputs[i] ? g.add_constant("in" + std::to_string(i), *c.inputs[i]) : -1);
  for (int i = 0; i < c.outputs; ++i) n.outputs.push_back(g.add_value("out" + std::to_string(i)));
  Node& node = g.nodes[g.add_node(n)];
  InferContext ctx(g, node);
  def->infer(ctx);
  std::vector<const Tensor*> in;
  for (int v : node.inputs) in.push_back(v >= 0 ? &*g.values[v].constant : nullptr);
  std::vector<Tensor> out;
  for (int v : node.outputs) {
    out.emplace_back(g.values[v].dtype, g.values[v].shape);
    out.back().poison();
  }
  def->reference(node, in, out);
  return out;
}

// Element-wise closeness to hand-computed values (relative for |want| > 1).
// One fp16 unit in the last place at value v (subnormal spacing 2^-24 below 2^-14).
inline double f16_ulp(double v) { return std::ldexp(1.0, std::max(std::ilogb(std::max(std::fabs(v), 0x1p-14)), -14) - 10); }

inline void expect_values(const Tensor& t, const std::vector<double>& want, double tol = 1e-6) {
  ASSERT_EQ(static_cast<size_t>(t.numel()), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(t.get(static_cast<int64_t>(i)), want[i], tol * std::max(1.0, std::fabs(want[i]))) << "element " << i;
}

// A fresh folder under the system temp dir, removed with everything in it at scope exit.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    path = std::filesystem::temp_directory_path() /
           ("fusor_test_" + std::to_string(std::random_device{}()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

// A rank-0 tensor of dtype t holding v (a graph constant such as attention's scale).
inline Tensor scalar_tensor(DType t, double v) {
  Tensor c(t, {});
  c.set(0, v);
  return c;
}

// Sets (value) or unsets (nullptr) an environment variable for one scope.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(std::string n, const char* value) : name(std::move(n)) {
    if (const char* o = std::getenv(name.c_str())) old = o;
    if (value) ::setenv(name.c_str(), value, 1);
    else ::unsetenv(name.c_str());
  }
  ~ScopedEnv() {
    if (old) ::setenv(name.c_str(), old->c_str(), 1);
    else ::unsetenv(name.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
};

// The backends a test can run here: ref, cpu, and each GPU backend that sees a device (vulkan
// on lavapipe in CI; cuda where there is an NVIDIA GPU, else its kernels are checked by NVRTC
// compiles).
inline std::vector<std::string> usable_backends() {
  std::vector<std::string> out;
  for (const std::string& be : backend_names())
    if (be == "ref" || be == "cpu" || ((be == "vulkan" || be == "cuda") && !make_backend(be)->devices().empty())) out.push_back(be);
  return out;
}

// CPU seconds this thread has used (complexity bounds in tests: a loaded machine does not
// make them flaky as wall time would).
inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// True when the fusor CLI can be run (FUSOR_BIN, set by ctest, or ./fusor).
inline bool have_cli() { return std::getenv("FUSOR_BIN") || std::filesystem::exists("./fusor"); }

// Runs `fusor ARGS`, stdout and stderr into *out; returns the exit status.
inline int run_cli(const std::string& args, std::string* out) {
  const char* bin = std::getenv("FUSOR_BIN");
  TempDir d;
  const std::string path = d / "out.txt";
  int rc = std::system(((bin ? bin : "./fusor") + (" " + args) + " >" + path + " 2>&1").c_str());
  std::ifstream in(path);
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
}

// The message of the fusor::Error f() throws ("" when it throws nothing; "not a fusor::Error:
// ..." for any other exception), for EXPECT_ERROR.
template <class F> std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not a fusor::Error: ") + e.what();
  }
  return "";
}

}  // namespace fusor::testing

// stmt throws one fusor::Error line containing substr (a silent pass, another exception type or
// a multi-line message fails).
#define EXPECT_ERROR(stmt, substr)                                                       \
  do {                                                                                   \
    const std::string m_ = ::fusor::testing::error_of([&] { stmt; });                    \
    EXPECT_NE(m_.find(substr), std::string::npos) << "message: '" << m_ << "'";         \
    EXPECT_EQ(m_.find("not a fusor::Error"), std::string::npos) << m_;                   \
    EXPECT_EQ(m_.find('\n'), std::string::npos) << "multi-line message: '" << m_ << "'"; \
  } while (0)
