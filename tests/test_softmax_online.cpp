// Online softmax (issue 12 item 6): ir/ marks the Max / Sum-of-exp pair of a row kernel
// (KernelSpec::online_max / online_sum, ir/kernel_rewrite.h mark_online_softmax) and the shared
// emitter computes both statistics in one read of the row. These tests check
//   * which kernels are marked (Softmax, LogSoftmax, fused pre/post-ops, axis not last) and
//     which are not (LayerNorm, a sum of exp(x) without the shift, a shift by another value);
//   * that the emitted source reads the row twice (statistics + output) instead of three times;
//   * values against ref on the cpu backend (which interprets the specs) and on Vulkan
//     (lavapipe): row lengths 1..16385, -inf / all -inf / NaN / +inf / 1e30 rows, fp16, bf16, f64;
//   * that every generated CUDA kernel of those graphs compiles with NVRTC, and every GLSL kernel
//     with shaderc + spirv-val for devices with and without subgroup arithmetic.
// Backends poison their outputs before a run (backend.h), so an unwritten element fails.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "backend_agreement.h"
#include "test_util.h"
#include "backends/backend.h"
#include "backends/codegen.h"
#include "frontend/builder.h"
#include "ir/kernel_rewrite.h"
#include "ir/kernel_spec.h"
#include "ir/passes.h"
#ifdef FUSOR_HAVE_CUDA
#include "backends/cuda/cuda_backend.h"
#endif
#ifdef FUSOR_HAVE_VULKAN
#include "backends/vulkan/vk_compile.h"
#include "backends/vulkan/vk_dialect.h"
#include "vk_described_device.h"
#endif

namespace fusor {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Graph finish(GraphBuilder& b) {
  Graph g = b.build();
  make_static(g, {});
  return g;
}

// Row r of a [rows, len] input (rows >= 8): random in [-4, 4] except the special rows 1-7.
Tensor rows_input(DType t, int64_t rows, int64_t len, uint64_t seed) {
  Tensor x(t, {rows, len});
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-4.0, 4.0);
  // fp16 cannot hold 1e30: its "large magnitude" is near its largest finite value.
  const double big = t == DType::f16 ? 3e4 : 1e30;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < len; ++j) {
      double v = u(rng);
      switch (r) {
        case 1: v = (j % 3 == 1) ? -kInf : v; break;                          // some -inf
        case 2: v = -kInf; break;                                             // all -inf
        case 3: v = (j == len / 2) ? kNaN : v; break;                         // one NaN
        case 4: v = (j == len - 1) ? kInf : v; break;                         // one +inf
        case 5: v = (j % 2 ? big : -big) * (0.5 + 0.5 * std::fabs(v) / 4); break;  // large magnitudes
        case 6: v = static_cast<double>(j) * 0.01; break;                     // max grows at every element
        case 7: v = (j < len / 2) ? -kInf : v; break;                         // -inf first, then finite
        default: break;
      }
      x.set(r * len + j, v);
    }
  return x;
}

// Softmax (or LogSoftmax) of x[rows, len] over the last axis.
Graph softmax_graph(DType t, int64_t rows, int64_t len, bool log) {
  GraphBuilder b;
  int x = b.input("x", t, {rows, len});
  b.output(b.op(log ? "LogSoftmax" : "Softmax", {x}, {{"axis", int64_t{-1}}}));
  return finish(b);
}

// Pre-op (x * scale + shift, broadcast over rows) fused before, a post-op after.
Graph fused_graph(int64_t rows, int64_t len, bool log) {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {rows, len});
  int scale = b.constant("scale", testing::random_tensor(DType::f32, {len}, 11, 0.5, 2.0));
  int shift = b.input("shift", DType::f32, {rows, 1});
  int pre = b.op("Add", {b.op("Mul", {x, scale}), shift});
  int y = b.op(log ? "LogSoftmax" : "Softmax", {pre}, {{"axis", int64_t{-1}}});
  b.output(log ? b.op("Mul", {y, b.constant("half", testing::tensor_of({}, {0.5}))}) : b.op("Sqrt", {y}));
  return finish(b);
}

// Softmax over axis 1 of [a, len, c]: the reduced axis is not the innermost one.
Graph middle_axis_graph(int64_t a, int64_t len, int64_t c, bool log) {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {a, len, c});
  b.output(b.op(log ? "LogSoftmax" : "Softmax", {x}, {{"axis", int64_t{1}}}));
  return finish(b);
}

int marked_kernels(const Plan& p) {
  int n = 0;
  for (const KernelSpec& k : p.kernels)
    if (k.online_max >= 0) {
      EXPECT_GT(k.online_sum, k.online_max) << k.name;
      EXPECT_EQ(k.reductions[k.online_max].combiner, Combiner::max) << k.name;
      EXPECT_EQ(k.reductions[k.online_sum].combiner, Combiner::sum) << k.name;
      ++n;
    }
  return n;
}

// ---- what ir/ marks -------------------------------------------------------------------------

TEST(SoftmaxOnline, SoftmaxAndLogSoftmaxAreMarked) {
  for (bool log : {false, true}) {
    SCOPED_TRACE(log ? "LogSoftmax" : "Softmax");
    // Rows longer than the register budget stream from memory: those take the online pair.
    for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64})
      EXPECT_EQ(marked_kernels(build_plan(softmax_graph(t, 40, 10000, log))), 1) << dtype_name(t);
    EXPECT_EQ(marked_kernels(build_plan(fused_graph(40, 9000, log))), 1);
    EXPECT_EQ(marked_kernels(build_plan(middle_axis_graph(6, 9000, 9, log))), 1);
    // Unfused plans have no row kernel holding both reductions.
    FusionOptions unfused;
    unfused.fuse = false;
    EXPECT_EQ(marked_kernels(build_plan(softmax_graph(DType::f32, 40, 1000, log), unfused)), 0);
  }
}

TEST(SoftmaxOnline, OtherRowKernelsAreNotMarked) {
  {
    GraphBuilder b;  // LayerNorm: mean and variance, no max
    int x = b.input("x", DType::f32, {40, 64});
    int s = b.constant("s", testing::random_tensor(DType::f32, {64}, 1));
    int c = b.constant("c", testing::random_tensor(DType::f32, {64}, 2));
    b.output(b.op("LayerNormalization", {x, s, c}, {{"axis", int64_t{-1}}, {"epsilon", 1e-5}}));
    Plan p = build_plan(finish(b));
    ASSERT_EQ(p.kernels.size(), 1u);
    EXPECT_EQ(p.kernels[0].reductions.size(), 2u);
    EXPECT_EQ(marked_kernels(p), 0);
  }
  const std::vector<int64_t> last{1};
  {
    GraphBuilder b;  // x / max(x) * sum(exp(x)): both reductions, but the sum is not shifted by the max
    int x = b.input("x", DType::f32, {40, 64});
    int m = b.op("ReduceMax", {x}, {{"axes", last}, {"keepdims", int64_t{1}}});
    int s = b.op("ReduceSum", {b.op("Exp", {x}), b.constant("ax", testing::ints_of({1}, {1}))}, {{"keepdims", int64_t{1}}});
    b.output(b.op("Mul", {b.op("Div", {x, m}), s}));
    Plan p = build_plan(finish(b));
    EXPECT_EQ(marked_kernels(p), 0);
  }
  {
    GraphBuilder b;  // sum(exp(y - max(x))): shifted by the max of another value
    int x = b.input("x", DType::f32, {40, 64});
    int y = b.input("y", DType::f32, {40, 64});
    int m = b.op("ReduceMax", {x}, {{"axes", last}, {"keepdims", int64_t{1}}});
    int e = b.op("Exp", {b.op("Sub", {y, m})});
    int s = b.op("ReduceSum", {e, b.constant("ax", testing::ints_of({1}, {1}))}, {{"keepdims", int64_t{1}}});
    b.output(b.op("Div", {e, s}));
    Plan p = build_plan(finish(b));
    EXPECT_EQ(marked_kernels(p), 0);
  }
}

// `fusor explain` says how each row kernel reads its rows.
TEST(SoftmaxOnline, ExplainNamesTheOnlineKernel) {
  const std::string shared = testing::shared_dir();
  if (shared.empty()) GTEST_SKIP() << "no shared ONNX suites (../shared)";
  if (!testing::have_cli()) GTEST_SKIP() << "the fusor CLI was not built";
  for (const char* c : {"test_softmax_axis_1", "test_logsoftmax_axis_1"}) {
    const std::string model = shared + "/onnx-tests/node/" + c + "/model.onnx";
    if (!std::filesystem::exists(model)) GTEST_SKIP() << "no " << model;
    std::string out;
    ASSERT_EQ(testing::run_cli("explain " + model, &out), 0) << out;
    // Their rows (length 4) are register-resident: explain says so (long rows say "online softmax").
    EXPECT_NE(out.find("kernel 0 keeps its rows in registers (1 per thread): one read of each row"), std::string::npos) << out;
  }
}

// ---- the emitted source ---------------------------------------------------------------------

// A minimal dialect: enough for the shared emitter to print a row kernel.
struct TextDialect : Dialect {
  TextDialect() {
    name = "text";
    local_id = "tid";
    group_id = "gid";
    num_groups = "ngroups";
    barrier = "sync();";
  }
  std::string prelude(const KernelHeader&) const override { return ""; }
  std::string storage_type(DType t) const override { return t == DType::f64 ? "double" : "float"; }
  std::string shared_array(const std::string& type, const std::string& nm, int64_t count) const override {
    return "shared " + type + " " + nm + "[" + std::to_string(count) + "];\n";
  }
  std::string kernel_begin(const KernelHeader& h) const override { return "void " + h.name + "() {\n"; }
};

int count_of(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// The row loops of a row kernel ("for (fz_idx fz_j = ...)"): one per statistics pass plus the
// output pass. Two with the online pair; three when the flag is cleared (the two-pass form).
TEST(SoftmaxOnline, EmittedKernelReadsTheRowOnceForStatistics) {
  TextDialect d;
  for (bool log : {false, true})
    for (DType t : {DType::f32, DType::f16, DType::f64}) {
      SCOPED_TRACE(std::string(log ? "LogSoftmax " : "Softmax ") + dtype_name(t));
      Plan p = build_plan(softmax_graph(t, 40, 10000, log));  // streamed: longer than the register budget
      ASSERT_EQ(p.kernels.size(), 1u);
      ASSERT_GE(p.kernels[0].online_max, 0);
      const std::string online = emit_kernel(p.kernels[0], p, d);
      EXPECT_EQ(count_of(online, "for (fz_idx fz_j"), 2) << online;
      // exp: one per element in the update (exp(-|v - m|), branch-free), the group rescale,
      // and Softmax's output pass; counted in the kernel's body (the typed helpers before it
      // call exp too).
      const size_t begin = online.find("() {");  // TextDialect::kernel_begin: the only parameterless function
      ASSERT_NE(begin, std::string::npos) << online;
      const std::string body = online.substr(begin);
      EXPECT_EQ(count_of(body, "exp("), log ? 2 : 3) << online;
      KernelSpec two_pass = p.kernels[0];
      two_pass.online_max = two_pass.online_sum = -1;
      const std::string plain = emit_kernel(two_pass, p, d);
      EXPECT_EQ(count_of(plain, "for (fz_idx fz_j"), 3) << plain;
    }
  Plan p = build_plan(fused_graph(40, 9000, false));
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(count_of(emit_kernel(p.kernels[0], p, d), "for (fz_idx fz_j"), 2);
  // A flag that does not fit the spec is a codegen error, not a wrong kernel.
  KernelSpec bad = p.kernels[0];
  std::swap(bad.online_max, bad.online_sum);
  EXPECT_THROW(emit_kernel(bad, p, d), Error);
}

int resident_kernels(const Plan& p) {
  int n = 0;
  for (const KernelSpec& k : p.kernels) n += k.row_registers > 0;
  return n;
}

// Rows that fit the register budget are read from memory once: the first pass keeps each
// thread's elements in fz_cl<load>[], the later passes read them there; row-invariant values
// (LayerNorm's 1 / sqrt(var + eps)) are computed once per row, before the element loop.
TEST(RowRegisters, ResidentRowsAreReadOnceAndInvariantsHoisted) {
  TextDialect d;
  for (bool log : {false, true})
    for (int64_t len : {int64_t{7}, int64_t{1000}, int64_t{4096}, int64_t{8192}}) {
      SCOPED_TRACE((log ? "LogSoftmax len " : "Softmax len ") + std::to_string(len));
      Plan p = build_plan(softmax_graph(DType::f32, 40, len, log));
      ASSERT_EQ(p.kernels.size(), 1u);
      const KernelSpec& k = p.kernels[0];
      const int64_t per_thread = (len + row_group_size(len) - 1) / row_group_size(len);
      EXPECT_EQ(k.row_registers, per_thread);
      ASSERT_EQ(k.register_loads.size(), 1u);
      EXPECT_EQ(k.online_max, -1) << "a resident row takes the exact two-pass statistics";
      const std::string src = emit_kernel(k, p, d);
      EXPECT_EQ(count_of(src, "b0["), 1) << src;  // the input is read by one statement
      EXPECT_EQ(count_of(src, "fz_cl0[fz_t] = "), 1) << src;
      EXPECT_EQ(count_of(src, "for (int fz_t = 0; fz_t < " + std::to_string(per_thread)), 3) << src;
      EXPECT_EQ(count_of(src, "if (fz_j < "), len % row_group_size(len) ? 3 : 0) << src;
      // Softmax's exp(x - max) (LogSoftmax's x - max) is kept from the Sum's pass for the output
      // pass where loads and values fit the budget (16 + 16 at len 4096), computed again past it
      // (32 + 32 at len 8192).
      const bool kept = per_thread * 2 <= kRowRegisterBudget;
      EXPECT_EQ(k.register_values.size(), kept ? 1u : 0u);
      EXPECT_EQ(count_of(src, "exp("), kept || log ? 1 : 2) << src;
      EXPECT_EQ(count_of(src, "fz_cv"), kept ? 3 : 0) << src;  // declared, stored, read
    }
  // Past the budget (32 per thread) rows stream: no register array.
  Plan big = build_plan(softmax_graph(DType::f32, 40, 8193, false));
  EXPECT_EQ(big.kernels[0].row_registers, 0);
  EXPECT_EQ(count_of(emit_kernel(big.kernels[0], big, d), "fz_cl"), 0);

  GraphBuilder b;  // LayerNorm: the row's scale 1 / sqrt(var + eps) is hoisted out of the loop
  int x = b.input("x", DType::f32, {40, 1000});
  int s = b.constant("s", testing::random_tensor(DType::f32, {1000}, 1));
  int c = b.constant("c", testing::random_tensor(DType::f32, {1000}, 2));
  b.output(b.op("LayerNormalization", {x, s, c}, {{"axis", int64_t{-1}}, {"epsilon", 1e-5}}));
  Plan p = build_plan(finish(b));
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].row_registers, 4);
  const std::string src = emit_kernel(p.kernels[0], p, d);
  const size_t last_loop = src.rfind("for (int fz_t"), sqrt_at = src.find("sqrt(");
  ASSERT_NE(sqrt_at, std::string::npos) << src;
  EXPECT_LT(sqrt_at, last_loop) << src;
  EXPECT_EQ(count_of(src, "sqrt("), 1) << src;
}

// Absorbing a reduction kernel appends its expression nodes; topo_order hash-conses them again,
// so a Softmax's Exp(x - max) is one node shared by its sum and its output (KernelSpec::expr is
// a DAG without duplicates), and the kernel's code stays valid when a pass reuses a row value.
TEST(RowRegisters, AbsorbedExpressionsAreHashConsed) {
  TextDialect d;
  for (bool log : {false, true})
    for (int64_t len : {int64_t{1}, int64_t{1000}, int64_t{20000}}) {
      SCOPED_TRACE((log ? "LogSoftmax len " : "Softmax len ") + std::to_string(len));
      Plan p = build_plan(softmax_graph(DType::f32, 40, len, log));
      ASSERT_EQ(p.kernels.size(), 1u);
      const KernelSpec& k = p.kernels[0];
      std::set<std::string> keys;
      int subs = 0, exps = 0;
      for (const ExprNode& e : k.expr) {
        if (e.kind != ExprKind::op) continue;
        std::string key = e.op->name + "|" + e.bound.expr;
        for (int a : e.args) key += "," + std::to_string(a);
        EXPECT_TRUE(keys.insert(key).second) << "duplicate node " << key;
        subs += e.op->name == "Sub";
        exps += e.op->name == "Exp";
      }
      EXPECT_EQ(subs, log ? 2 : 1);  // x - max (and, for LogSoftmax, minus log(sum))
      EXPECT_EQ(exps, 1);
      EXPECT_NO_THROW(emit_kernel(k, p, d));
    }
}

// ---- values against ref ---------------------------------------------------------------------

// Element-wise: NaN where ref has NaN, equal infinities, else |got - want| <= rtol*|want| + atol.
void expect_close(const Tensor& got, const Tensor& want, double rtol, double atol, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  int bad = 0;
  for (int64_t i = 0; i < want.numel() && bad < 5; ++i) {
    const double x = got.get(i), y = want.get(i);
    const bool ok = (std::isnan(x) && std::isnan(y)) || x == y ||
                    (std::isfinite(x) && std::isfinite(y) && std::fabs(x - y) <= rtol * std::fabs(y) + atol);
    if (!ok) ++bad;
    EXPECT_TRUE(ok) << what << " element " << i << ": " << x << " vs ref " << y;
  }
}

// fp16/bf16 outputs are rounded from fp32 math: a few ulp of their own.
double rtol_of(DType t) {
  switch (t) {
    case DType::f16: return 4.0 / 1024;
    case DType::bf16: return 4.0 / 128;
    case DType::f64: return 1e-12;
    default: return 2e-5;
  }
}

// Runs g on ref, cpu and (when a device exists) vulkan, compiled directly (no host fallback).
void check_backends(const Graph& g, const std::vector<Tensor>& in, double rtol, double atol, const std::string& what) {
  const std::vector<Tensor> want = make_backend("ref")->compile(g, {})->run(in);
  std::vector<std::string> backends{"cpu"};
  if (testing::vulkan_available()) backends.push_back("vulkan");
  for (const std::string& be : backends) {
    std::vector<Tensor> got;
    try {
      got = make_backend(be)->compile(g, {})->run(in);
    } catch (const Error& e) {
      ADD_FAILURE() << what << " on " << be << ": " << e.what();
      continue;
    }
    ASSERT_EQ(got.size(), want.size());
    for (size_t o = 0; o < want.size(); ++o) expect_close(got[o], want[o], rtol, atol, what + " on " + be);
  }
}

// LogSoftmax of a dominant element is -log(s) with s = 1 + tiny: its absolute error is an ulp of
// s (1.2e-7 in fp32) whichever way s is summed, so it gets an absolute tolerance of that size.
double atol_of(bool log) { return log ? 5e-7 : 1e-7; }

TEST(SoftmaxOnline, RowsMatchReference) {
  for (int64_t len : {1, 7, 1000, 4096, 16385})
    for (bool log : {false, true}) {
      const std::string what = std::string(log ? "LogSoftmax" : "Softmax") + " len " + std::to_string(len);
      SCOPED_TRACE(what);
      // 40 rows: enough that even 16385-long rows fuse into one kernel (kMinRowsToAbsorb).
      const Graph g = softmax_graph(DType::f32, 40, len, log);
      // A length-1 axis reduces nothing (the plan has no reduction): values only.
      // Rows up to 8192 are register-resident (two-pass statistics from registers), longer
      // ones stream with the online pair.
      if (len > 1) ASSERT_EQ(marked_kernels(build_plan(g)) + resident_kernels(build_plan(g)), 1);
      check_backends(g, {rows_input(DType::f32, 40, len, 100 + len)}, 2e-5, atol_of(log), what);
    }
}

TEST(SoftmaxOnline, StorageDtypesMatchReference) {
  for (DType t : {DType::f16, DType::bf16, DType::f64})
    for (int64_t len : {7, 1000, 4096})
      for (bool log : {false, true}) {
        const std::string what = std::string(log ? "LogSoftmax " : "Softmax ") + dtype_name(t) + " len " + std::to_string(len);
        SCOPED_TRACE(what);
        const Graph g = softmax_graph(t, 40, len, log);
        ASSERT_EQ(marked_kernels(build_plan(g)) + resident_kernels(build_plan(g)), 1);
        check_backends(g, {rows_input(t, 40, len, 200 + len)}, rtol_of(t), t == DType::f64 ? 1e-15 : 1e-6, what);
      }
}

TEST(SoftmaxOnline, FusedAndMiddleAxisMatchReference) {
  for (bool log : {false, true}) {
    const std::string what = log ? "LogSoftmax" : "Softmax";
    SCOPED_TRACE(what);
    const Graph f = fused_graph(40, 300, log);
    ASSERT_EQ(build_plan(f).kernels.size(), 1u) << "pre-op, softmax and post-op should be one kernel";
    ASSERT_EQ(resident_kernels(build_plan(f)), 1);
    check_backends(f, {rows_input(DType::f32, 40, 300, 7), testing::random_tensor(DType::f32, {40, 1}, 8)}, 2e-5, atol_of(log),
                   what + " fused");
    const Graph m = middle_axis_graph(6, 37, 9, log);
    ASSERT_EQ(resident_kernels(build_plan(m)), 1);
    check_backends(m, {testing::random_tensor(DType::f32, {6, 37, 9}, 9, -30, 30)}, 2e-5, atol_of(log), what + " axis 1");
  }
}

// Many short rows (at most 16 elements, at least 1,024 rows) run a thread per row: no group
// reduction (shared scratch, barriers) in the source, and ref's values on every backend, special
// rows (-inf, NaN, +inf, 1e30) included; 17-element rows and 1,000 rows keep a group per row.
TEST(ThreadRows, ManyShortRowsTakeAThreadEachAndMatchReference) {
  TextDialect d;
  const auto layer_norm = [](DType t, int64_t rows, int64_t len) {
    GraphBuilder b;
    int x = b.input("x", t, {rows, len});
    int s = b.constant("s", testing::random_tensor(t, {len}, 3, 0.5, 2.0));
    int c = b.constant("c", testing::random_tensor(t, {len}, 4));
    b.output(b.op("LayerNormalization", {x, s, c}, {{"axis", int64_t{-1}}, {"epsilon", 1e-5}}));
    return finish(b);
  };
  const auto reduce = [](const char* op, int64_t rows, int64_t len) {
    GraphBuilder b("graph", 18);
    int x = b.input("x", DType::f32, {rows, len});
    b.output(b.op(op, {x, b.constant("axes", testing::ints_of({1}, {1}))}, {{"keepdims", int64_t{0}}}));
    return finish(b);
  };
  for (int64_t len : {int64_t{2}, int64_t{5}, int64_t{16}, int64_t{17}})
    for (int64_t rows : {int64_t{1000}, int64_t{3000}}) {
      const bool thread = len <= 16 && rows >= 1024;
      const std::string at = " [" + std::to_string(rows) + ", " + std::to_string(len) + "]";
      const Graph sm = softmax_graph(DType::f32, rows, len, false);
      const Plan p = build_plan(sm);
      ASSERT_EQ(p.kernels.size(), 1u);
      const std::string src = emit_kernel(p.kernels[0], p, d);
      if (thread) EXPECT_EQ(count_of(src, "fz_red"), 0) << at << src;
      else EXPECT_GT(count_of(src, "fz_red"), 0) << at << src;
      if (!thread && rows == 1000) continue;  // the group-per-row kernels have their own tests
      check_backends(sm, {rows_input(DType::f32, rows, len, 300 + len)}, 2e-5, atol_of(false), "Softmax" + at);
      check_backends(softmax_graph(DType::f32, rows, len, true), {rows_input(DType::f32, rows, len, 310 + len)}, 2e-5, atol_of(true),
                     "LogSoftmax" + at);
      check_backends(softmax_graph(DType::f16, rows, len, false), {rows_input(DType::f16, rows, len, 320 + len)}, rtol_of(DType::f16), 1e-6,
                     "Softmax f16" + at);
      // x - mean carries x's rounding (2.4e-7 at |x| ~ 3), divided by sqrt(var + eps) >= 3.2e-3.
      check_backends(layer_norm(DType::f32, rows, len), {testing::random_tensor(DType::f32, {rows, len}, 330 + len, -3, 3)}, 2e-5, 1e-4,
                     "LayerNormalization" + at);
      check_backends(layer_norm(DType::bf16, rows, len), {testing::random_tensor(DType::bf16, {rows, len}, 340 + len, -3, 3)},
                     rtol_of(DType::bf16), 1e-2, "LayerNormalization bf16" + at);
      for (const char* op : {"ReduceSum", "ReduceMax", "ReduceMean"})
        check_backends(reduce(op, rows, len), {rows_input(DType::f32, rows, len, 350 + len)}, 2e-5, 1e-7, std::string(op) + at);
      // Not the 1e30 row: ref squares in float64, the GPUs in float32 (inf, as onnxruntime).
      check_backends(reduce("ReduceL2", rows, len), {testing::random_tensor(DType::f32, {rows, len}, 360 + len, -4, 4)}, 2e-5, 1e-7, "ReduceL2" + at);
    }
  // The 1,024-row boundary; a whole resident row per thread stays within the register budget
  // (kRowRegisterBudget), else the kernel keeps a group per row.
  const auto source = [&](const Graph& g) {
    const Plan p = build_plan(g);
    EXPECT_EQ(p.kernels.size(), 1u);
    return emit_kernel(p.kernels[0], p, d);
  };
  EXPECT_GT(count_of(source(softmax_graph(DType::f32, 1023, 5, false)), "fz_red"), 0);
  EXPECT_EQ(count_of(source(softmax_graph(DType::f32, 1024, 5, false)), "fz_red"), 0);
  // LayerNorm(x1 * x2 + x3) * x1: x1, v and v - mean kept per element (3 x 16 past the budget).
  const auto kept3 = [](int64_t rows, int64_t len) {
    GraphBuilder b;
    int x1 = b.input("x1", DType::f32, {rows, len}), x2 = b.input("x2", DType::f32, {rows, len}), x3 = b.input("x3", DType::f32, {rows, len});
    int v = b.op("Add", {b.op("Mul", {x1, x2}), x3});
    int s = b.constant("s", testing::random_tensor(DType::f32, {len}, 5, 0.5, 2.0)), c = b.constant("c", testing::random_tensor(DType::f32, {len}, 6));
    b.output(b.op("Mul", {b.op("LayerNormalization", {v, s, c}, {{"axis", int64_t{-1}}, {"epsilon", 1e-5}}), x1}));
    return finish(b);
  };
  for (int64_t len : {int64_t{8}, int64_t{16}}) {
    const Graph g3 = kept3(3000, len);
    const KernelSpec k3 = build_plan(g3).kernels[0];
    const int64_t kept = static_cast<int64_t>(k3.register_loads.size() + k3.register_values.size());
    EXPECT_EQ(kept, 3) << k3.register_loads.size() << " loads, " << k3.register_values.size() << " values";
    EXPECT_EQ(count_of(source(g3), "fz_red") == 0, len * kept <= kRowRegisterBudget) << "len " << len;
    check_backends(g3,
                   {testing::random_tensor(DType::f32, {3000, len}, 380 + len, -2, 2), testing::random_tensor(DType::f32, {3000, len}, 390 + len),
                    testing::random_tensor(DType::f32, {3000, len}, 400 + len)},
                   2e-5, 1e-4, "LayerNorm(x1 x2 + x3) x1 len " + std::to_string(len));
  }
  for (int64_t len : {int64_t{8}, int64_t{16}}) {
    const Graph f = fused_graph(3000, len, false);
    const KernelSpec k = build_plan(f).kernels[0];
    ASSERT_GT(k.row_registers, 0);
    const bool fits = len * static_cast<int64_t>(k.register_loads.size() + k.register_values.size()) <= kRowRegisterBudget;
    EXPECT_EQ(count_of(source(f), "fz_red") == 0, fits) << "len " << len;
    check_backends(f, {rows_input(DType::f32, 3000, len, 370 + len), testing::random_tensor(DType::f32, {3000, 1}, 8)}, 2e-5, 1e-7,
                   "fused Softmax len " + std::to_string(len));
  }
}

// A pre-op DAG that reuses each value twice (y = y + y, 20 times): recognising the pair compares
// the max's body with the sum's copy of it once per node pair, not once per path (2^20).
TEST(SoftmaxOnline, SharedPreOpDagIsMarkedQuickly) {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {40, 9000});  // streamed rows (register-resident ones are not marked)
  int y = x;
  for (int i = 0; i < 20; ++i) y = b.op("Add", {y, y});
  b.output(b.op("Softmax", {b.op("Mul", {y, b.constant("s", testing::tensor_of({}, {1.0 / (1 << 22)}))})},
                {{"axis", int64_t{-1}}}));
  const Graph g = finish(b);
  const Plan p = build_plan(g);
  EXPECT_EQ(marked_kernels(p), 1);
  check_backends(g, {testing::random_tensor(DType::f32, {40, 9000}, 12, -4, 4)}, 2e-5, 1e-7, "shared pre-op DAG");
}

// The row statistic itself as a graph output: sum(exp(x - max(x))) is then a per-row store of
// the online pair, so its specials show (an all -inf row gives NaN, as exp(-inf - -inf)).
TEST(SoftmaxOnline, SumOfShiftedExpAsOutputMatchesReference) {
  for (int64_t len : {7, 1000, 9000}) {  // register-resident rows, then streamed (online) ones
    GraphBuilder b;
    int x = b.input("x", DType::f32, {40, len});
    int m = b.op("ReduceMax", {x}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{1}}});
    int e = b.op("Exp", {b.op("Sub", {x, m})});
    b.output(b.op("ReduceSum", {e, b.constant("ax", testing::ints_of({1}, {1}))}, {{"keepdims", int64_t{0}}}));
    const Graph g = finish(b);
    const Plan p = build_plan(g);
    ASSERT_EQ(marked_kernels(p), len > 8192 ? 1 : 0);
    ASSERT_EQ(resident_kernels(p), len > 8192 ? 0 : 1);
    const Tensor in = rows_input(DType::f32, 40, len, 300 + len);
    const Tensor want = make_backend("ref")->compile(g, {})->run({in})[0];
    EXPECT_TRUE(std::isnan(want.get(2)) && std::isnan(want.get(3)) && std::isnan(want.get(4)))
        << "ref: the all -inf, NaN and +inf rows sum to NaN";
    check_backends(g, {in}, 2e-5, 0, "sum of shifted exp, len " + std::to_string(len));
  }
}

// ---- every generated kernel compiles -------------------------------------------------------

std::vector<std::pair<std::string, Graph>> compile_cases() {
  std::vector<std::pair<std::string, Graph>> c;
  for (bool log : {false, true}) {
    const std::string n = log ? "logsoftmax" : "softmax";
    for (int64_t len : {1, 7, 1000, 16385}) c.push_back({n + "_" + std::to_string(len), softmax_graph(DType::f32, 40, len, log)});
    for (DType t : {DType::f16, DType::bf16, DType::f64})
      c.push_back({n + "_" + dtype_name(t), softmax_graph(t, 40, 1000, log)});
    c.push_back({n + "_fused", fused_graph(40, 300, log)});
    c.push_back({n + "_axis1", middle_axis_graph(6, 37, 9, log)});
    for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64})  // a thread per row (ThreadRows.*)
      c.push_back({n + "_thread_rows_" + dtype_name(t), softmax_graph(t, 3000, 5, log)});
  }
  return c;
}

#ifdef FUSOR_HAVE_CUDA
TEST(SoftmaxOnlineCudaCodegen, EveryKernelCompilesWithNvrtc) {
  for (auto& [name, g] : compile_cases()) {
    SCOPED_TRACE(name);
    Plan p = build_plan(g);
    const bool length_one = name.size() > 2 && name.compare(name.size() - 2, 2, "_1") == 0;  // nothing to reduce
    if (!length_one) ASSERT_EQ(marked_kernels(p) + resident_kernels(p), 1);
    for (const KernelSpec& k : p.kernels) {
      const std::string src = cuda_kernel_source(k, p, nullptr);
      if (k.online_max >= 0) EXPECT_EQ(count_of(src, "for (fz_idx fz_j"), 2) << src;
      EXPECT_NO_THROW(nvrtc_compile_check(src, kernel_identifier(k.name))) << src;
    }
  }
}
#endif

#ifdef FUSOR_HAVE_VULKAN
// A described device (no Vulkan needed): with and without subgroup arithmetic, fp16 and fp64.
vk::PhysicalDeviceInfo described_device(bool subgroups) {
  return testing::described_vk_device(subgroups, subgroups ? "described device with subgroups" : "described device without subgroups");
}

TEST(SoftmaxOnlineVulkanCodegen, EveryKernelCompilesAndValidates) {
  setenv("FUSOR_NO_DISK_CACHE", "1", 1);
  for (bool subgroups : {true, false}) {
    const vk::PhysicalDeviceInfo dev = described_device(subgroups);
    int online_kernels = 0;
    for (auto& [name, g] : compile_cases()) {
      SCOPED_TRACE(name + (subgroups ? " subgroups" : " shared memory"));
      Plan p = build_plan(g);
      for (const KernelSpec& k : p.kernels) {
        vk::VulkanDialect d(dev, k, std::vector<int64_t>(kernel_bindings(k).size(), 0), &p);
        std::string src;
        try {
          src = emit_kernel(k, p, d);
        } catch (const Unsupported& e) {
          continue;  // e.g. a dtype the dialect refuses: the backend then falls back, not this test's subject
        }
        if (k.online_max >= 0) EXPECT_EQ(count_of(src, "for (fz_idx fz_j"), 2) << src;
        online_kernels += k.online_max >= 0 || k.row_registers > 0;
        EXPECT_NO_THROW(vk::compile_glsl(dev, kernel_identifier(k.name), src)) << src;
      }
    }
    // Every case but the two length-1 ones has one online kernel: none was refused.
    EXPECT_EQ(online_kernels, static_cast<int>(compile_cases().size()) - 2);
  }
}
#endif

}  // namespace
}  // namespace fusor
