// Red-team round 14 (2026-12-03, docs/redteam.md): spatial ops, reductions, indexing ops.
//  - A decomposition's reduction over no axes (InstanceNormalization of [N, C]: no spatial
//    axes) was emitted in the opset-11 form, where an empty axes list means every axis: the
//    fused plan normalised over the whole tensor, ref gave B. No axes is now a reduction of each
//    element alone on every backend.
//  - Pad with a negative pad on one side of an axis and a positive one on the other (wrap,
//    reflect) padded from the uncropped axis; the negative pads now crop first, as onnxruntime.
//  - ScatterElements / ScatterND max / min dropped a NaN update (std::max keeps its first
//    operand); they propagate NaN as the Max / Min ops do.
//  - Compress with a condition longer than its axis was refused (and ignored without an axis);
//    the extra entries are ignored in both forms, as onnxruntime.
//  - Found beside the round: `fusor run model.onnx` / `fusor conform model.onnx` named from the
//    model's own folder failed with "[io] '': not a folder" (the test sets' folder was the
//    path's empty parent); it is the current folder.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "runtime/session.h"
#include "test_util.h"
#ifdef FUSOR_HAVE_CUDA
#include "backends/cuda/cuda_backend.h"
#include "ir/kernel_spec.h"
#include "ir/passes.h"
#endif

namespace fusor {
namespace {

// Runs g on every usable backend and checks each output element against want (NaN where want is NaN).
void expect_everywhere(const Graph& g, const std::vector<Tensor>& in, const std::vector<double>& want, double tol = 0) {
  for (const std::string& be : testing::usable_backends()) {
    SCOPED_TRACE(be);
    const Tensor y = Session(g, be).run(in)[0];
    ASSERT_EQ(y.numel(), static_cast<int64_t>(want.size()));
    for (int64_t i = 0; i < y.numel(); ++i) {
      if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(y.get(i))) << "element " << i << ": " << y.get(i);
      else EXPECT_NEAR(y.get(i), want[i], tol) << "element " << i;
    }
  }
}

TEST(Round14, InstanceNormalizationWithoutSpatialAxesIsTheBiasOnEveryBackend) {
  for (DType dt : {DType::f32, DType::f16}) {
    SCOPED_TRACE(dtype_name(dt));
    GraphBuilder b("in2", 17);
    const int x = b.input("x", dt, {3, 2});
    const int s = b.constant("s", testing::tensor_of({2}, {2.0, -0.5}, dt));
    const int c = b.constant("b", testing::tensor_of({2}, {1.5, 0.25}, dt));
    b.output(b.op("InstanceNormalization", {x, s, c}, {{"epsilon", 1e-5}}));
    const Graph g = b.build();
    expect_everywhere(g, {testing::tensor_of({3, 2}, {1, 2, 3, 5, -4, 0.5}, dt)}, {1.5, 0.25, 1.5, 0.25, 1.5, 0.25});
  }
  // With a spatial axis it still normalises over it: [1, 1, 2] of (1, 3) -> (-1, 1) * 2 + 0.5.
  GraphBuilder b("in3", 17);
  const int x = b.input("x", DType::f32, {1, 1, 2});
  b.output(b.op("InstanceNormalization", {x, b.constant("s", testing::tensor_of({1}, {2.0})), b.constant("b", testing::tensor_of({1}, {0.5}))},
                {{"epsilon", 0.0}}));
  expect_everywhere(b.build(), {testing::tensor_of({1, 1, 2}, {1, 3})}, {-1.5, 2.5}, 1e-6);
}

Graph pad_graph(const std::string& mode, const std::vector<int64_t>& pads) {
  GraphBuilder b("pad", 19);
  const int x = b.input("x", DType::f32, {1, 4});
  b.output(b.op("Pad", {x, b.constant("p", testing::ints_of({4}, pads))}, {{"mode", mode}}));
  return b.build();
}

TEST(Round14, PadCropsFirstThenPadsWhatIsLeft) {
  const Tensor x = testing::tensor_of({1, 4}, {1, 2, 3, 4});
  struct Case {
    const char* mode;
    std::vector<int64_t> pads;
    std::vector<double> want;
  };
  // Axis 1 of [1, 2, 3, 4]: begin pad 3 and end crop 2 read [1, 2]; begin crop 2 and end pad 3 read [3, 4].
  const std::vector<Case> cases = {
      {"wrap", {0, 3, 0, -2}, {2, 1, 2, 1, 2}},     {"reflect", {0, 1, 0, -2}, {2, 1, 2}},
      {"reflect", {0, 3, 0, -2}, {2, 1, 2, 1, 2}},  {"edge", {0, 2, 0, -1}, {1, 1, 1, 2, 3}},
      {"wrap", {0, -2, 0, 3}, {3, 4, 3, 4, 3}},     {"reflect", {0, -1, 0, 2}, {2, 3, 4, 3, 2}},
      {"edge", {0, -3, 0, 2}, {4, 4, 4}},           {"constant", {0, 2, 0, -3}, {0, 0, 1}},
      {"wrap", {0, 5, 0, 0}, {4, 1, 2, 3, 4, 1, 2, 3, 4}},  // no crop: as before
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.mode) + " pads " + std::to_string(c.pads[1]) + ", " + std::to_string(c.pads[3]));
    const Graph g = pad_graph(c.mode, c.pads);
    expect_everywhere(g, {x}, c.want);
#ifdef FUSOR_HAVE_CUDA
    const Plan p = build_plan(specialize(g, {x}));
    for (auto& [name, text] : cuda_generate_sources(p)) EXPECT_NO_THROW(nvrtc_compile_check(text, name)) << text;
#endif
  }
  // Nothing left to pad from: a one-line error.
  const std::string e = testing::error_of([&] { Session(pad_graph("wrap", {0, 2, 0, -4}), "ref").run({x}); });
  EXPECT_NE(e.find("cannot pad axis 1: it is empty after its negative pads"), std::string::npos) << e;
}

TEST(Round14, ScatterMaxMinPropagateNaNOnEveryBackend) {
  const double nan = std::nan("");
  for (const char* red : {"max", "min"}) {
    SCOPED_TRACE(red);
    // data [1, NaN, 3], updates [NaN, 2] at [0, 1]: both touched elements are NaN.
    GraphBuilder b("se", 18);
    const int d = b.input("d", DType::f32, {3});
    b.output(b.op("ScatterElements", {d, b.constant("i", testing::ints_of({2}, {0, 1})), b.constant("u", testing::tensor_of({2}, {nan, 2}))},
                  {{"reduction", std::string(red)}}));
    expect_everywhere(b.build(), {testing::tensor_of({3}, {1, nan, 3})}, {nan, nan, 3});
    GraphBuilder n("snd", 18);
    const int dn = n.input("d", DType::f32, {3});
    n.output(n.op("ScatterND", {dn, n.constant("i", testing::ints_of({2, 1}, {2, 0})), n.constant("u", testing::tensor_of({2}, {nan, 0.5}))},
                  {{"reduction", std::string(red)}}));
    const double first = std::string(red) == "max" ? 1 : 0.5;
    expect_everywhere(n.build(), {testing::tensor_of({3}, {1, 7, 3})}, {first, 7, nan});
  }
}

TEST(Round14, CompressIgnoresConditionEntriesPastTheAxis) {
  for (bool with_axis : {true, false}) {
    SCOPED_TRACE(with_axis ? "axis 0" : "flattened");
    GraphBuilder b("c", 11);
    const int x = b.input("x", DType::f32, {3});
    GraphBuilder::Attrs a;
    if (with_axis) a["axis"] = int64_t{0};
    b.output(b.op("Compress", {x, b.constant("c", testing::ints_of({5}, {1, 0, 1, 0, 1}, DType::boolean))}, a));
    expect_everywhere(b.build(), {testing::tensor_of({3}, {4, 5, 6})}, {4, 6});
  }
}

TEST(Round14, AModelNamedWithoutAFolderIsReadFromTheCurrentOne) {
  if (!std::getenv("FUSOR_BIN")) GTEST_SKIP() << "FUSOR_BIN not set (run through ctest)";
  testing::TempDir d;
  std::filesystem::copy(std::string(FUSOR_SOURCE_DIR) + "/examples/gpt2_tiny", d.path, std::filesystem::copy_options::recursive);
  for (const std::string& cmd : {"run model.onnx --backend ref", "conform model.onnx --backend ref"}) {
    SCOPED_TRACE(cmd);
    const std::string log = d / "log.txt";
    const int rc = std::system(("cd '" + d.path.string() + "' && '" + std::getenv("FUSOR_BIN") + "' " + cmd + " > '" + log + "' 2>&1").c_str());
    std::ifstream in(log);
    const std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(rc, 0) << out;
    EXPECT_EQ(out.find("not a folder"), std::string::npos) << out;
    EXPECT_NE(out.find(cmd[0] == 'r' ? "PASS" : "1 passed, 0 failed"), std::string::npos) << out;
  }
}

}  // namespace
}  // namespace fusor
