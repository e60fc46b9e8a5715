// Ops the GPUs run as kernels of their own instead of through host fallback (TopK, GridSample,
// CumProd, ReverseSequence, Scatter reductions in their own type, OneHot; Group / Lp / BatchNormalization decomposed): on every backend present, fused and unfused, without fallback, every output bit
// for bit against ref on seeded inputs with ties, signed zeros, NaNs and out-of-range values.
// Without a GPU the generated CUDA C must still compile (NVRTC).
#include <iomanip>
#include <chrono>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "ir/passes.h"
#include "runtime/session.h"
#include "test_util.h"

#include "nvrtc_check.h"

namespace fusor {
namespace {

using testing::ints_of;

bool present(const std::string& be) {
  const auto names = backend_names();
  return std::find(names.begin(), names.end(), be) != names.end() && !make_backend(be)->devices().empty();
}

// Runs graph g on every backend present without fallback and compares every output's bytes
// with ref's (nan_any_sign: NaNs computed by arithmetic match any NaN, their sign being the
// hardware's); then, with no CUDA device, compiles each of its CUDA kernels.
void expect_backends_match_ref_bits(const std::string& name, const Graph& g, const std::vector<Tensor>& feed, bool nan_any_sign = false) {
  const Graph sg = specialize(g, feed);
  const auto want = run_on_backend("ref", sg, feed);
  for (const std::string be : {"cpu", "vulkan", "cuda"}) {
    if (!present(be)) continue;
    for (bool fusion : {true, false}) {
      CompileOptions o;
      o.fusion = fusion, o.fallback = false;
      std::vector<Tensor> got;
      try {
        got = run_on_backend(be, sg, feed, o);
      } catch (const Error& e) {
        ADD_FAILURE() << name << " on " << be << " without fallback: " << e.what();
        continue;
      }
      ASSERT_EQ(got.size(), want.size()) << name;
      for (size_t j = 0; j < want.size(); ++j) {
        ASSERT_EQ(got[j].dtype(), want[j].dtype()) << name;
        ASSERT_EQ(got[j].shape(), want[j].shape()) << name;
        Tensor w = want[j];
        if (nan_any_sign && dtype_is_float(w.dtype()))
          for (int64_t i = 0; i < w.numel(); ++i)
            if (std::isnan(got[j].get(i)) && std::isnan(w.get(i))) got[j].set(i, 0.0), w.set(i, 0.0);
        // The first element that differs, and how many do (bits, as memcmp).
        const size_t es = dtype_size(w.dtype());
        int64_t first = -1, n_diff = 0;
        for (int64_t i = 0; i < w.numel(); ++i)
          if (std::memcmp(got[j].raw() + i * es, w.raw() + i * es, es) != 0) n_diff += 1, first = first < 0 ? i : first;
        EXPECT_EQ(0, n_diff) << std::setprecision(17) << name << " output " << j << " on " << be << (fusion ? "" : " unfused") << ": " << n_diff << " of "
                             << w.numel() << " elements differ; the first, [" << first << "], got "
                             << (first < 0 ? 0.0 : got[j].get(first)) << ", ref " << (first < 0 ? 0.0 : w.get(first));
      }
    }
  }
#ifdef FUSOR_HAVE_CUDA
  if (std::find(backend_names().begin(), backend_names().end(), "cuda") != backend_names().end() && !present("cuda"))
    testing::expect_cuda_kernels_compile(sg, name, true);
#endif
}

// TopK (one thread ranks each element): every dtype class, both orders, a middle axis, k up to
// the whole axis, either output omitted, with ties, +-0, NaNs (largest) and the dtype's extremes.
TEST(GpuOpaqueOps, TopKInEveryDtype) {
  struct Case {
    DType t;
    Shape s;
    int64_t axis, k, largest;
    int outputs;  // 3: both, 1: values only, 2: indices only
  };
  const std::vector<Case> cases = {
      {DType::f32, {3, 37}, -1, 5, 1, 3},   {DType::f32, {4, 9, 3}, 1, 9, 0, 3}, {DType::f16, {2, 50}, 1, 7, 1, 2},
      {DType::bf16, {2, 33}, -1, 4, 0, 1}, {DType::f64, {3, 20}, 1, 20, 1, 3}, {DType::i32, {5, 16}, 0, 3, 1, 3},
      {DType::i64, {2, 40}, -1, 6, 0, 3},  {DType::u64, {2, 12}, -1, 4, 1, 3}, {DType::u8, {3, 30}, 1, 10, 1, 3},
      {DType::i8, {64}, 0, 64, 0, 2},      {DType::f32, {2, 0}, 1, 0, 1, 3}};
  int n_case = 0;
  for (const Case& c : cases) {
    const std::string nm = std::string("TopK ") + dtype_name(c.t) + " #" + std::to_string(n_case++);
    Tensor x(c.t, c.s);
    std::mt19937_64 rng(41 + n_case);
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t r = static_cast<int64_t>(rng() % 13);  // few distinct values: many ties
      if (dtype_is_float(c.t)) {
        x.set(i, r == 0 ? NAN : r == 1 ? 0.0 : r == 2 ? -0.0 : r == 3 ? -INFINITY : (static_cast<double>(r) - 7.0) * 1.25);
      } else if (c.t == DType::u64) {
        x.set_int(i, r == 0 ? static_cast<int64_t>(0xFFFFFFFFFFFFFFF0ULL) : r == 1 ? static_cast<int64_t>(0x8000000000000000ULL) : r * 3);
      } else if (c.t == DType::i64) {
        x.set_int(i, r == 0 ? std::numeric_limits<int64_t>::min() : r == 1 ? (int64_t{1} << 60) + 1 : r - 6);
      } else if (c.t == DType::u8) {
        x.set_int(i, r * 19);
      } else {
        x.set_int(i, r == 0 ? (c.t == DType::i8 ? -128 : std::numeric_limits<int32_t>::min()) : r - 6);
      }
    }
    GraphBuilder b("topk", 18);
    const int in = b.input("x", c.t, c.s);
    auto tk = b.op_multi("TopK", {in, b.constant("k", ints_of({1}, {c.k}))}, {{"axis", c.axis}, {"largest", c.largest}}, 2);
    if (c.outputs & 1) b.output(tk[0]);
    if (c.outputs & 2) b.output(tk[1]);
    expect_backends_match_ref_bits(nm, b.build(), {x});
  }
}

// An axis past the kernel's pairwise limit runs on the host (the GPUs say why; with fallback it
// still agrees with ref).
TEST(GpuOpaqueOps, TopKLongAxesRunOnTheHost) {
  GraphBuilder b("topk", 18);
  const int in = b.input("x", DType::f32, {1, 20000});
  b.output(b.op_multi("TopK", {in, b.constant("k", ints_of({1}, {3}))}, {}, 2)[1]);
  const std::vector<Tensor> feed{testing::random_tensor(DType::f32, {1, 20000}, 3, -5, 5)};
  const Graph g = specialize(b.build(), feed);
  const auto want = run_on_backend("ref", g, feed);
  for (const std::string be : {"vulkan", "cuda"}) {
    if (!present(be)) continue;
    CompileOptions o;
    o.fallback = false;
    const std::string msg = testing::error_of([&] { run_on_backend(be, g, feed, o); });
    EXPECT_NE(msg.find("TopK along an axis of 20000 elements"), std::string::npos) << msg;
    const auto got = run_on_backend(be, g, feed);
    for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(got[0].get_int(i), want[0].get_int(i)) << be;
  }
}

// GridSample (one thread per output, in double as ref): 1-3 spatial dims, every mode and
// padding mode, both align_corners, fp32 / fp16 / f64; grid points inside, on the edges, far
// outside (reflections over several folds), +-0 and NaN.
TEST(GpuOpaqueOps, GridSampleEveryModeAndPadding) {
  int n_case = 0;
  for (int r : {2, 1, 3})
    for (const char* mode : {"linear", "nearest", "cubic"})
      for (const char* pad : {"zeros", "border", "reflection"})
        for (int64_t align : {0, 1}) {
          if (r != 2 && std::string(mode) == "cubic") continue;  // bicubic is 2-D in the spec
          const DType t = n_case % 5 == 3 ? DType::f16 : n_case % 7 == 5 ? DType::f64 : DType::f32;
          const int opset = n_case % 2 ? 20 : 22;
          ++n_case;
          Shape xs = {2, 3}, gs = {2};
          const int64_t dims[3] = {5, 4, 3};
          for (int d = 0; d < r; ++d) xs.push_back(dims[d]);
          for (int d = 0; d < r; ++d) gs.push_back(d == 0 ? 7 : 3);
          gs.push_back(r);
          Tensor x = testing::random_tensor(t, xs, 100 + n_case, -4, 4);
          Tensor grid = testing::random_tensor(t, gs, 200 + n_case, -1.3, 1.3);
          const double special[] = {-1.0, 1.0, 0.0, -0.0, 7.25, -9.6, NAN, 31.0, 1.0 / 3.0};
          for (int64_t i = 0; i < grid.numel(); i += 4) grid.set(i, special[(i / 4) % 9]);
          GraphBuilder b("gridsample", opset);
          const int xi = b.input("x", t, xs), gi = b.input("grid", t, gs);
          b.output(b.op("GridSample", {xi, gi}, {{"mode", std::string(mode)}, {"padding_mode", std::string(pad)}, {"align_corners", align}}));
          // A NaN grid point's NaN is arithmetic: its payload is the hardware's (the H100 stored
          // fp16 0x7fff where ref has 0x7e00).
          expect_backends_match_ref_bits(std::string("GridSample ") + dtype_name(t) + " r" + std::to_string(r) + " " + mode + " " + pad +
                                             (align ? " align" : ""),
                                         b.build(), {x, grid}, true);
        }
}

// GroupNormalization (18: scale per group, 21: per channel) and LpNormalization (p 1, 2; an
// all-zero row gives 0) decompose into row kernels, BatchNormalization with statistics fed at
// run time into element-wise ops: no host fallback, within fp32 / fp16 rounding of ref's
// double results.
TEST(GpuOpaqueOps, NormalizationOpsRunWithoutFallback) {
  struct Case {
    std::string op;
    int opset;
    DType t;
    Shape s;
  };
  const std::vector<Case> cases = {{"GroupNormalization", 21, DType::f32, {2, 8, 5, 3}}, {"GroupNormalization", 18, DType::f32, {1, 6, 7}},
                                   {"GroupNormalization", 21, DType::f16, {2, 4, 9}},    {"LpNormalization", 18, DType::f32, {3, 4, 33}},
                                   {"LpNormalization", 18, DType::f16, {5, 17}},         {"LpNormalization", 18, DType::f32, {6, 2}},
                                   {"BatchNormalization", 15, DType::f32, {2, 5, 3, 4}}, {"BatchNormalization", 15, DType::f16, {3, 4}}};
  int n_case = 0;
  for (const Case& c : cases)
    for (int64_t variant : {0, 1}) {
      ++n_case;
      GraphBuilder b("norms", c.opset);
      Tensor x = testing::random_tensor(c.t, c.s, 300 + n_case, -3, 5);
      std::vector<Tensor> feed{x};
      const int xi = b.input("x", c.t, c.s);
      if (c.op == "GroupNormalization") {
        const int64_t groups = variant ? c.s[1] : 2, per = c.opset >= 21 ? c.s[1] : groups;
        feed.push_back(testing::random_tensor(c.t, {per}, 400 + n_case, -2, 2));
        feed.push_back(testing::random_tensor(c.t, {per}, 500 + n_case, -2, 2));
        const int sc = b.input("scale", c.t, {per}), bi = b.input("bias", c.t, {per});
        b.output(b.op("GroupNormalization", {xi, sc, bi}, {{"num_groups", groups}, {"epsilon", 1e-3f}}));
      } else if (c.op == "BatchNormalization") {
        std::vector<int> ins{xi};
        for (int i = 0; i < 4; ++i) {
          feed.push_back(testing::random_tensor(c.t, {c.s[1]}, 600 + 10 * n_case + i, i == 3 ? 0.1 : -2.0, 2.0));  // var > 0
          ins.push_back(variant || i == 3 ? b.input("p" + std::to_string(i), c.t, {c.s[1]}) : b.constant("p" + std::to_string(i), feed.back()));
          if (!variant && i != 3) feed.pop_back();
        }
        b.output(b.op("BatchNormalization", ins, {{"epsilon", 1e-3f}}));
      } else {
        for (int64_t j = 0; j < c.s.back(); ++j) feed[0].set(j, 0.0);  // an all-zero row along the last axis
        b.output(b.op("LpNormalization", {xi}, {{"axis", variant ? int64_t{0} : int64_t{-1}}, {"p", n_case % 2 ? int64_t{1} : int64_t{2}}}));
      }
      const std::string nm = c.op + " " + dtype_name(c.t) + " #" + std::to_string(n_case);
      const Graph sg = specialize(b.build(), feed);
      const Tensor want = run_on_backend("ref", sg, feed)[0];
      double top = 0;
      for (int64_t i = 0; i < want.numel(); ++i) top = std::max(top, std::fabs(want.get(i)));
      const double rel = c.t == DType::f16 ? 2e-3 : 2e-6;
      for (const std::string be : {"cpu", "vulkan", "cuda"}) {
        if (!present(be)) continue;
        CompileOptions o;
        o.fallback = false;
        Tensor got;
        try {
          got = run_on_backend(be, sg, feed, o)[0];
        } catch (const Error& e) {
          ADD_FAILURE() << nm << " on " << be << " without fallback: " << e.what();
          continue;
        }
        for (int64_t i = 0; i < want.numel(); ++i)
          EXPECT_LE(std::fabs(got.get(i) - want.get(i)), rel * (std::fabs(want.get(i)) + top)) << nm << " on " << be << " element " << i;
        if (c.op == "LpNormalization" && !variant)
          for (int64_t j = 0; j < c.s.back(); ++j) EXPECT_EQ(got.get(j), 0.0) << nm << " zero row on " << be;
      }
    }
}

// LpNormalization of rows whose squares leave fp32's range (3e20, 3e-23): scaled by the row's
// largest |x| first, the GPUs give ref's [0.6, 0.8] (they gave [0, 0] and [0.57, 0.76] with the
// squares summed unscaled, red-team round 28).
TEST(GpuOpaqueOps, LpNormalizationOfHugeAndTinyRows) {
  // Rows with an infinity stay unscaled: ref's [NaN, 0] (x / inf made every element NaN).
  const Tensor x = testing::tensor_of({7, 2}, {3e20, 4e20, 3e-23, 4e-23, -5e30, 1.2e31, 0, 0, 1.5, -2, INFINITY, 1, -INFINITY, -INFINITY});
  for (int64_t p : {2, 1}) {
    GraphBuilder b("lp", 18);
    b.output(b.op("LpNormalization", {b.input("x", DType::f32, {7, 2})}, {{"axis", int64_t{-1}}, {"p", p}}));
    const Graph sg = specialize(b.build(), {x});
    const Tensor want = run_on_backend("ref", sg, {x})[0];
    for (const std::string be : {"cpu", "vulkan", "cuda"}) {
      if (!present(be)) continue;
      CompileOptions o;
      o.fallback = false;
      const Tensor got = run_on_backend(be, sg, {x}, o)[0];
      for (int64_t i = 0; i < want.numel(); ++i) {
        if (std::isnan(want.get(i))) {
          EXPECT_TRUE(std::isnan(got.get(i))) << "p=" << p << " on " << be << " element " << i;
          continue;
        }
        EXPECT_NEAR(got.get(i), want.get(i), 4e-7 * std::fabs(want.get(i))) << "p=" << p << " on " << be << " element " << i;
      }
      EXPECT_EQ(got.get(11), 0.0) << "p=" << p << " on " << be << ": the finite element of [inf, 1]";
    }
  }
}

// CumProd (the CumSum kernel multiplying): every dtype class, exclusive / reverse, a constant
// and a run-time axis; each product rounded to the dtype as ref (fp16 / bf16 and fp32 runs
// that overflow to inf, NaN, -0), integers wrapping. No subnormal products (devices flush).
TEST(GpuOpaqueOps, CumProdInEveryDtype) {
  int n_case = 0;
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i32, DType::i64, DType::u8, DType::i8})
    for (int64_t excl : {0, 1})
      for (int64_t rev : {0, 1}) {
        ++n_case;
        const Shape s = {3, 40};
        Tensor x(t, s);
        std::mt19937_64 rng(77 + n_case);
        for (int64_t i = 0; i < x.numel(); ++i) {
          const int64_t r = static_cast<int64_t>(rng() % 16);
          if (dtype_is_float(t))
            x.set(i, i == 5 ? NAN : i == 9 ? -0.0 : i == 47 ? INFINITY : (r % 2 ? -1.0 : 1.0) * (1.0 + static_cast<double>(r) * 0.37));
          else
            x.set_int(i, t == DType::u8 ? r * 17 + 1 : r - 7 + (r == 7 ? 40 : 0));
        }
        const bool run_time_axis = n_case % 3 == 0;
        GraphBuilder b("cumprod", 26);
        const int xi = b.input("x", t, s);
        std::vector<Tensor> feed{x};
        int axis;
        if (run_time_axis) {
          axis = b.input("axis", DType::i64, {});
          Tensor a(DType::i64, {});
          a.set_int(0, -1);
          feed.push_back(a);
        } else {
          axis = b.constant("axis", ints_of({}, {1}));
        }
        b.output(b.op("CumProd", {xi, axis}, {{"exclusive", excl}, {"reverse", rev}}));
        expect_backends_match_ref_bits(std::string("CumProd ") + dtype_name(t) + (excl ? " exclusive" : "") + (rev ? " reverse" : "") +
                                           (run_time_axis ? " run-time axis" : ""),
                                       b.build(), feed, true);
      }
}

// ReverseSequence (a copy per output; sequence_lens read on the device): both time / batch
// layouts, lengths 0, T and between, several dtypes; a length past T fails the run naming the
// node, as on ref.
TEST(GpuOpaqueOps, ReverseSequenceBothLayouts) {
  int n_case = 0;
  for (int64_t ta : {0, 1})
    for (DType t : {DType::f32, DType::i64, DType::f16, DType::u8}) {
      ++n_case;
      const int64_t T = 6, B = 4;
      const Shape s = ta == 0 ? Shape{T, B, 3} : Shape{B, T, 3};
      Tensor x = testing::random_tensor(t, s, 900 + n_case, -50, 50);
      Tensor lens = ints_of({B}, {0, T, 3, 1}, n_case % 2 ? DType::i32 : DType::i64);
      GraphBuilder b("revseq", 18);
      const int xi = b.input("x", t, s), li = b.input("lens", lens.dtype(), {B});
      b.output(b.op("ReverseSequence", {xi, li}, {{"time_axis", ta}, {"batch_axis", 1 - ta}}));
      const Graph g = b.build();
      expect_backends_match_ref_bits(std::string("ReverseSequence ") + dtype_name(t) + " time_axis " + std::to_string(ta), g, {x, lens});
      if (n_case == 1) {
        Tensor bad = lens;
        bad.set_int(2, T + 1);
        const Graph sg = specialize(g, {x, bad});
        for (const std::string be : {"ref", "vulkan", "cuda"}) {
          if (be != "ref" && !present(be)) continue;
          CompileOptions o;
          o.fallback = false;
          const std::string msg = testing::error_of([&] { run_on_backend(be, sg, {x, bad}, o); });
          EXPECT_NE(msg.find("ReverseSequence"), std::string::npos) << be << ": " << msg;
          EXPECT_NE(msg.find("sequence_lens"), std::string::npos) << be << ": " << msg;
        }
      }
    }
}

// CumSum / CumProd with more elements than a GPU's lanes run a thread per line (one running
// sum, Emitter::cumsum_lines) instead of a thread per element summing its prefix: the same
// partial sums in the same order, so the bits of ref; along the last axis and along axis 0.
// fp32 / fp16 sums run in double, as ref's: an fp32 running sum had drifted from ref on 17,051
// of these 18,000 prefixes (rows of 6,000 values of +-4).
TEST(GpuOpaqueOps, LongCumSumsRunALineAThread) {
  int n_case = 0;
  for (const char* op : {"CumSum", "CumProd"})
    for (DType t : {DType::f32, DType::f16, DType::f64, DType::i32, DType::i64, DType::u8})
      for (int64_t axis : {1, 0})
        for (int64_t mode = 0; mode < 4; ++mode) {  // exclusive = bit 0, reverse = bit 1
          ++n_case;
          const Shape s = axis == 1 ? Shape{3, 6000} : Shape{6000, 3};
          const bool prod = std::string(op) == "CumProd";
          Tensor x(t, s);
          std::mt19937_64 rng(300 + n_case);
          for (int64_t i = 0; i < x.numel(); ++i) {
            const int64_t r = static_cast<int64_t>(rng() % 1000);
            if (dtype_is_float(t)) x.set(i, prod ? 1.0 + (static_cast<double>(r) - 500.0) * 1e-5 : (static_cast<double>(r) - 400.0) * 0.01);
            else x.set_int(i, prod ? (r % 3) + 1 : r - (t == DType::u8 ? 0 : 300));
          }
          GraphBuilder b("long_cumsum", 18);
          b.output(b.op(op, {b.input("x", t, s), b.constant("axis", ints_of({}, {axis}))},
                        {{"exclusive", mode & 1}, {"reverse", mode >> 1}}));
          expect_backends_match_ref_bits(std::string(op) + " " + dtype_name(t) + " axis " + std::to_string(axis) + " mode " +
                                             std::to_string(mode), b.build(), {x});
        }
}

// Scatter reductions combine in the data's own type on the GPUs, wrapping as ref (int16
// 32767 * 32767 is 1 wrapped: through fp32 it was inexact), with repeated indices so each output
// combines several updates in ref's order; every reduction, ScatterElements and ScatterND. Two
// shapes reach the two kernels (Emitter::scatter_plan) whatever the lanes: data [4, 20000] with
// 6 updates a column the owner kernel (a thread per output line), data [40, 1] the scan kernel
// (a thread per output element reading the updates that could reach it).
TEST(GpuOpaqueOps, ScatterReductionsInTheirOwnType) {
  int n_case = 0;
  for (bool owner : {true, false})
    for (DType t : {DType::i8, DType::u8, DType::i16, DType::i32, DType::i64, DType::u64, DType::f64, DType::f32, DType::f16})
      for (const char* red : {"add", "mul", "max", "min"})
        for (bool nd : {false, true}) {
          ++n_case;
          const bool wide = t == DType::i32 || t == DType::i64 || t == DType::u64 || t == DType::f64;
          if (!owner && t != DType::i8 && t != DType::i64 && t != DType::f64 && t != DType::f32) continue;
          const int64_t rows = owner ? 4 : 40, cols = owner ? 20000 : 1;
          const double big = t == DType::i16   ? 32767
                             : t == DType::f16 ? 2000.5
                             : t == DType::f32 ? 3e7
                             : t == DType::f64 ? 1e17
                             : wide            ? static_cast<double>((int64_t{1} << 40) + 12345)
                                               : 101;
          Tensor data(t, {rows, cols}), upd(t, {6, cols});
          std::mt19937_64 rng(4100 + n_case);
          for (int64_t i = 0; i < data.numel(); ++i) data.set_int(i, static_cast<int64_t>(rng() % 7) + 1);
          for (int64_t i = 0; i < upd.numel(); ++i) {
            const int64_t r = static_cast<int64_t>(rng() % 5);
            const double v = r == 0 ? big : r == 1 && !dtype_is_unsigned(t) ? -big : static_cast<double>(r + 2);
            if (dtype_is_float(t)) upd.set(i, v + (r > 1 ? 0.25 * static_cast<double>(r) : 0.0));  // sums that round, in ref's order
            else upd.set_int(i, static_cast<int64_t>(v));
          }
          GraphBuilder b("scatter_red", 18);
          const int di = b.input("data", t, {rows, cols}), ui = b.input("upd", t, {6, cols});
          int out;
          if (nd) {
            const int ii = b.constant("idx", ints_of({6, 1}, {0, 2, 0, 3, 0, 2}));
            out = b.op("ScatterND", {di, ii, ui}, {{"reduction", std::string(red)}});
          } else {
            Tensor idx(DType::i64, {6, cols});
            for (int64_t i = 0; i < idx.numel(); ++i) idx.set_int(i, static_cast<int64_t>(rng() % 2) * 2);  // rows 0 and 2 only
            out = b.op("ScatterElements", {di, b.constant("idx", idx), ui}, {{"reduction", std::string(red)}, {"axis", int64_t{0}}});
          }
          b.output(out);
          const std::string name = std::string(nd ? "ScatterND " : "ScatterElements ") + red + " " + dtype_name(t) +
                                   (owner ? " (owner kernel)" : " (scan kernel)");
          const Graph g = b.build();
          expect_backends_match_ref_bits(name, g, {data, upd});
#ifdef FUSOR_HAVE_CUDA
          if (n_case % 7 == 0) {  // the kernel the shape was chosen for (CUDA's 16,384 lanes)
            const Plan plan = build_plan(specialize(g, {data, upd}));
            ASSERT_EQ(plan.kernels.size(), 1u);
            EXPECT_NE(cuda_kernel_source(plan.kernels[0], plan, nullptr).find(owner ? "scatter: owner kernel" : "scatter: scan kernel"),
                      std::string::npos)
                << name;
          }
#endif
        }
}

// A scatter or prefix sum whose best kernel is still long serial work (a 1-D index_put or
// CumSum of 300,000 elements: one thread walking them all, or every thread scanning 300,000
// updates) is refused by the GPUs with a one-line reason and runs on the host with fallback,
// giving ref's values there.
TEST(GpuOpaqueOps, SerialScattersAndCumSumsRunOnTheHost) {
  const int64_t n = 300000;
  Tensor data(DType::f32, {n}), upd(DType::f32, {n}), idx(DType::i64, {n, 1});
  std::mt19937_64 rng(99);
  for (int64_t i = 0; i < n; ++i) {
    data.set(i, static_cast<double>(rng() % 100) * 0.5 + 1.0);
    upd.set(i, static_cast<double>(rng() % 100) * 0.25 - 12.0);
    idx.set_int(i, static_cast<int64_t>(rng() % static_cast<uint64_t>(n)));
  }
  for (bool cumsum : {false, true}) {
    GraphBuilder b("serial", 18);
    const int di = b.input("data", DType::f32, {n}), ui = b.input("upd", DType::f32, {n});
    b.output(cumsum ? b.op("CumSum", {b.op("Add", {di, ui}), b.constant("axis", ints_of({}, {0}))})
                    : b.op("ScatterND", {di, b.constant("idx", idx), ui}, {{"reduction", std::string("add")}}));
    const Graph sg = specialize(b.build(), {data, upd});
    const Tensor want = run_on_backend("ref", sg, {data, upd}).at(0);
    for (const std::string be : {"vulkan", "cuda"}) {
      if (!present(be)) continue;
      CompileOptions strict;
      strict.fallback = false;
      const std::string msg = testing::error_of([&] { run_on_backend(be, sg, {data, upd}, strict); });
      EXPECT_NE(msg.find("serial iterations"), std::string::npos) << be << ": " << msg;
      const Tensor got = run_on_backend(be, sg, {data, upd}).at(0);
      EXPECT_EQ(0, std::memcmp(got.raw(), want.raw(), want.nbytes())) << (cumsum ? "CumSum" : "ScatterND") << " on " << be << " with fallback";
    }
  }
}

// ArgMax over a 200,000-long row is one thread's serial loop; Hardmax and TopK rank every
// element against its row (len^2 a row): past the serial-work bound they run on the host, with
// ref's results (without fallback the GPU backends refuse them, naming the serial iterations).
TEST(GpuOpaqueOps, LongRowArgMaxHardmaxAndTopKRunOnTheHost) {
  for (const std::string op : {"ArgMax", "Hardmax", "TopK"}) {
    // Past the bound on every device (16,384 lanes on a GPU, 8 a core on lavapipe): TopK stays
    // under its 8,192-element axis limit, with rows enough for 5 rounds of 16,384 lanes.
    const Shape xs = op == "ArgMax" ? Shape{2, 200000} : op == "Hardmax" ? Shape{2, 60000} : Shape{10, 8000};
    const Tensor x = testing::random_tensor(DType::f32, xs, 41, -100.0, 100.0);
    GraphBuilder b("long_rows", 18);
    const int xi = b.input("x", DType::f32, xs);
    if (op == "TopK")
      b.output(b.op_multi("TopK", {xi, b.constant("k", ints_of({1}, {5}))}, {}, 2)[1]);
    else
      b.output(b.op(op, {xi}, {{"axis", int64_t{1}}}));
    const Graph sg = specialize(b.build(), {x});
    const Tensor want = run_on_backend("ref", sg, {x}).at(0);
    for (const std::string be : {"vulkan", "cuda"}) {
      if (!present(be)) continue;
      CompileOptions strict;
      strict.fallback = false;
      const std::string msg = testing::error_of([&] { run_on_backend(be, sg, {x}, strict); });
      EXPECT_NE(msg.find("serial iterations"), std::string::npos) << op << " on " << be << ": " << msg;
      const Tensor got = run_on_backend(be, sg, {x}).at(0);
      ASSERT_EQ(got.nbytes(), want.nbytes());
      EXPECT_EQ(0, std::memcmp(got.raw(), want.raw(), want.nbytes())) << op << " on " << be << " with fallback";
    }
  }
}

// EyeLike's k = INT64_MIN / INT64_MAX does not fit a 32-bit kernel index: the GPUs leave the node
// to the host (they failed the model with a [codegen] error, red-team round 31); all zeros.
TEST(GpuOpaqueOps, ConstantsPast32BitsRunOnTheHost) {
  for (int64_t k : {INT64_MIN, INT64_MAX, int64_t{1}}) {
    GraphBuilder b("eyelike", 18);
    b.output(b.op("EyeLike", {b.input("x", DType::f32, {3, 4})}, {{"k", k}}));
    const Tensor x = testing::random_tensor(DType::f32, {3, 4}, 5);
    const Graph sg = specialize(b.build(), {x});
    const Tensor want = run_on_backend("ref", sg, {x}).at(0);
    double sum = 0;
    for (int64_t i = 0; i < want.numel(); ++i) sum += want.get(i);
    EXPECT_EQ(sum, k == 1 ? 3.0 : 0.0);
    for (const std::string be : {"vulkan", "cuda"}) {
      if (!present(be)) continue;
      const Tensor got = run_on_backend(be, sg, {x}).at(0);
      EXPECT_EQ(0, std::memcmp(got.raw(), want.raw(), want.nbytes())) << "k " << k << " on " << be;
    }
  }
}

// A Resize whose tables pass the device's bound (lavapipe: 160 entries; its first dispatch of a
// 4x4 -> 160x160 nearest kernel took 16.5 s compiling the tables; one weight-1 tap per
// coordinate needs only its index: 320 entries) runs on the host there; a GPU runs it. Either
// way ref's values.
TEST(GpuOpaqueOps, BigResizeTablesStayOffLavapipe) {
  GraphBuilder b("resize", 18);
  const int xi = b.input("x", DType::f32, {1, 1, 4, 4});
  b.output(b.op("Resize", {xi, -1, b.constant("scales", testing::tensor_of({4}, {1, 1, 40, 40}))}, {{"mode", std::string("nearest")}}));
  const Tensor x = testing::random_tensor(DType::f32, {1, 1, 4, 4}, 8);
  const Graph sg = specialize(b.build(), {x});
  const Tensor want = run_on_backend("ref", sg, {x}).at(0);
  ASSERT_EQ(want.shape(), (Shape{1, 1, 160, 160}));
  for (const std::string be : {"vulkan", "cuda"}) {
    if (!present(be)) continue;
    const bool lavapipe = be == "vulkan" && make_backend(be)->devices()[0].name.find("llvmpipe") != std::string::npos;
    CompileOptions strict;
    strict.fallback = false;
    const std::string msg = testing::error_of([&] { run_on_backend(be, sg, {x}, strict); });
    if (lavapipe) EXPECT_NE(msg.find("Resize tables of 320 entries are past the 160"), std::string::npos) << msg;
    else EXPECT_EQ(msg, "") << be;
    const auto t0 = std::chrono::steady_clock::now();
    const Tensor got = run_on_backend(be, sg, {x}).at(0);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0) << be;
    EXPECT_EQ(0, std::memcmp(got.raw(), want.raw(), want.nbytes())) << be;
  }
}

// Resize sums its taps in double on the GPUs, in ref's order, so every backend gives ref's bits:
// in fp32 one ulp off at a tie became one integer step after a QuantizeLinear (a TFLite int8
// model's bilinear upsample, red-team round 58: 5 of 144 int8 outputs differed on vulkan).
// Linear, cubic and nearest (an index table without weights), fp32 / fp16 / fp64, and the
// quantized chain, fused and unfused.
TEST(GpuOpaqueOps, ResizeGivesRefBitsOnEveryBackend) {
  struct Case {
    DType t;
    Shape in;
    std::vector<double> scales;
    std::string mode, ctm;
  };
  const std::vector<Case> cases = {{DType::f32, {1, 2, 6, 6}, {1, 1, 2, 2}, "linear", "half_pixel"},
                                   {DType::f32, {1, 1, 5, 5}, {1, 1, 1.8, 1.4}, "cubic", "align_corners"},
                                   {DType::f16, {2, 1, 4, 6}, {1, 1, 1.5, 2}, "linear", "asymmetric"},
                                   {DType::f64, {1, 3, 5}, {1, 2, 2.2}, "linear", "pytorch_half_pixel"},
                                   {DType::f32, {1, 3, 4}, {1, 2, 1.5}, "nearest", "half_pixel"}};
  int seed = 60;
  for (const Case& c : cases) {
    GraphBuilder b("resize_bits", 18);
    const int xi = b.input("x", c.t, c.in);
    b.output(b.op("Resize", {xi, -1, b.constant("scales", testing::tensor_of({static_cast<int64_t>(c.scales.size())}, c.scales))},
                  {{"mode", c.mode}, {"coordinate_transformation_mode", c.ctm}}));
    expect_backends_match_ref_bits("Resize " + c.mode + " " + c.ctm + " " + dtype_name(c.t), b.build(),
                                   {testing::random_tensor(c.t, c.in, seed++)});
  }
  // DequantizeLinear -> bilinear 2x -> QuantizeLinear, int8 in and out (scale 0.0235, zero point -3).
  GraphBuilder b("qdq_resize", 18);
  const int q = b.input("q", DType::i8, {1, 1, 6, 6});
  Tensor zp_t(DType::i8, {});
  zp_t.set_int(0, -3);
  const int sc = b.constant("s", testing::tensor_of({}, {0.0235})), zp = b.constant("zp", zp_t);
  const int up = b.op("Resize", {b.op("DequantizeLinear", {q, sc, zp}), -1, b.constant("scales", testing::tensor_of({4}, {1, 1, 2, 2}))},
                      {{"mode", std::string("linear")}});
  b.output(b.op("QuantizeLinear", {up, sc, zp}));
  Tensor qin(DType::i8, {1, 1, 6, 6});
  std::mt19937 rng(58);
  for (int64_t i = 0; i < qin.numel(); ++i) qin.set_int(i, static_cast<int64_t>(rng() % 256) - 128);
  expect_backends_match_ref_bits("DequantizeLinear -> Resize -> QuantizeLinear int8", b.build(), {qin});
}

// float64 OneHot indices truncate in double: 2.9999999999 is class 2 and -0.9999999999 class
// 0 (-0 truncated), 3.99999999999 class 3; through fp32 they rounded to 3, -1 (the last class)
// and 4 first on Vulkan (red-team round 30).
TEST(GpuOpaqueOps, OneHotFloat64IndicesTruncateInDouble) {
  Tensor idx(DType::f64, {4});
  const std::vector<double> v = {2.9999999999, -0.9999999999, 3.99999999999, 1.0000000001};
  for (int64_t i = 0; i < 4; ++i) idx.set(i, v[static_cast<size_t>(i)]);
  GraphBuilder b("onehot_f64", 11);
  b.output(b.op("OneHot", {b.input("idx", DType::f64, {4}), b.constant("depth", ints_of({}, {5})),
                           b.constant("values", ints_of({2}, {0, 1}))}, {{"axis", int64_t{-1}}}));
  const Graph g = b.build();
  const Tensor got = run_on_backend("ref", specialize(g, {idx}), {idx}).at(0);
  const std::vector<int64_t> hot = {2, 0, 3, 1};
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t c = 0; c < 5; ++c) EXPECT_EQ(got.get_int(i * 5 + c), c == hot[static_cast<size_t>(i)] ? 1 : 0) << i << ", " << c;
  expect_backends_match_ref_bits("OneHot of float64 near-integers", g, {idx});
}

// OneHot only selects one of its two values: int64 and float64 values keep every bit on the
// GPUs (torch's one_hot exports int64 values; they were refused as "through fp32").
TEST(GpuOpaqueOps, OneHotValuesKeepTheirBits) {
  for (DType t : {DType::i64, DType::f64, DType::u64, DType::f16}) {
    Tensor values(t, {2});
    if (dtype_is_float(t)) values.set(0, -0.1), values.set(1, t == DType::f16 ? 65504.0 : 1e300);
    else values.set_int(0, t == DType::u64 ? -1 : -(int64_t{1} << 53) - 1), values.set_int(1, (int64_t{1} << 53) + 1);
    GraphBuilder b("onehot_values", 11);
    const int ii = b.input("idx", DType::i64, {6});
    b.output(b.op("OneHot", {ii, b.constant("depth", ints_of({}, {5})), b.constant("values", values)}, {{"axis", int64_t{0}}}));
    const Tensor idx = ints_of({6}, {0, 4, -1, 2, 7, -5});
    const Graph g = b.build();
    const Tensor got = run_on_backend("ref", specialize(g, {idx}), {idx}).at(0);
    ASSERT_EQ(got.shape(), (Shape{5, 6}));
    for (int64_t c = 0; c < 5; ++c)
      for (int64_t i = 0; i < 6; ++i) {
        const int64_t k = idx.get_int(i) < 0 ? idx.get_int(i) + 5 : idx.get_int(i);
        EXPECT_EQ(0, std::memcmp(reinterpret_cast<const char*>(got.raw()) + (c * 6 + i) * dtype_size(t),
                                 reinterpret_cast<const char*>(values.raw()) + (k == c ? 1 : 0) * dtype_size(t), dtype_size(t)))
            << "OneHot values " << dtype_name(t) << " at class " << c << ", index " << i;
      }
    expect_backends_match_ref_bits(std::string("OneHot values of ") + dtype_name(t), g, {idx});
  }
}

// OneHot's indices saturate to the index type instead of converting out of range: NaN and
// +-1e10 float indices and uint32 4294967295 select no class (a bare C cast made NaN class 0 on
// CUDA and uint32 max -1, the last class); 2.7 truncates to 2, -1 counts from the end.
TEST(GpuOpaqueOps, OneHotIndicesSaturate) {
  for (DType t : {DType::f32, DType::f64, DType::u32, DType::i64}) {
    const bool fl = dtype_is_float(t);
    Tensor idx(t, {5});
    const std::vector<double> fv = {NAN, 1e10, -1e10, 2.7, -1.0};
    const std::vector<int64_t> iv = {t == DType::u32 ? int64_t{4294967295} : int64_t{1} << 40, 1, 0, 2,
                                     t == DType::u32 ? int64_t{4294967294} : -1};
    for (int64_t i = 0; i < 5; ++i) fl ? idx.set(i, fv[i]) : idx.set_int(i, iv[i]);
    GraphBuilder b("onehot", 11);
    const int ii = b.input("idx", t, {5});
    b.output(b.op("OneHot", {ii, b.constant("depth", ints_of({}, {4})), b.constant("values", testing::tensor_of({2}, {0.0, 1.0}))},
                  {{"axis", int64_t{-1}}}));
    const Graph g = b.build();
    const std::vector<double> want_f = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    const std::vector<double> want_i = {0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, t == DType::i64 ? 1.0 : 0.0};
    const Tensor want = testing::tensor_of({5, 4}, fl ? want_f : want_i);
    const Tensor got = run_on_backend("ref", specialize(g, {idx}), {idx}).at(0);
    EXPECT_EQ(0, std::memcmp(got.raw(), want.raw(), want.nbytes())) << "OneHot of " << dtype_name(t) << " on ref";
    expect_backends_match_ref_bits(std::string("OneHot of ") + dtype_name(t), g, {idx});
  }
}

}  // namespace
}  // namespace fusor
