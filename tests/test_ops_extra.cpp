// Hand-computed checks of the ops in ir/ops/extra.cpp (NegativeLogLikelihoodLoss,
// SoftmaxCrossEntropyLoss, Resize). Each case runs one node: infer, then reference; outputs are
// poisoned first so an element the reference forgets fails.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>

#include "backend_agreement.h"
#include "frontend/builder.h"
#include "ir/op_table.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {


using ExCall = testing::OpCall;
std::vector<Tensor> run_ex_op(const ExCall& c) { return testing::run_op(c, 19); }
Tensor run_ex_op1(const ExCall& c) { return run_ex_op(c)[0]; }
void expect_ex_values(const Tensor& t, const std::vector<double>& want, double tol = 1e-6) {
  testing::expect_values(t, want, tol);
}

// ---- NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss ---------------------------------------

TEST(OpsExtra, NllLossReductionsWeightAndIgnoreIndex) {
  // input (N=3, C=3) of log-probabilities; targets 0, 2, 1.
  Tensor x = testing::tensor_of({3, 3}, {-1, -2, -3, -4, -5, -6, -7, -8, -9});
  Tensor t = testing::ints_of({3}, {0, 2, 1});
  Tensor none = run_ex_op1({"NegativeLogLikelihoodLoss", {x, t}, {{"reduction", std::string("none")}}, 13});
  EXPECT_EQ(none.shape(), (Shape{3}));
  expect_ex_values(none, {1, 6, 8});
  Tensor sum = run_ex_op1({"NegativeLogLikelihoodLoss", {x, t}, {{"reduction", std::string("sum")}}, 13});
  EXPECT_EQ(sum.shape(), (Shape{}));
  expect_ex_values(sum, {15});
  expect_ex_values(run_ex_op1({"NegativeLogLikelihoodLoss", {x, t}, {}, 13}), {5});  // default 'mean'
  // weight (1, 2, 3): losses 1*1, 6*3, 8*2 = 35 over weight sum 6.
  Tensor w = testing::tensor_of({3}, {1, 2, 3});
  expect_ex_values(run_ex_op1({"NegativeLogLikelihoodLoss", {x, t, w}, {}, 13}), {35.0 / 6.0});
  // ignore_index 2 drops the second sample: (1*1 + 8*2) / (1 + 2).
  expect_ex_values(run_ex_op1({"NegativeLogLikelihoodLoss", {x, t, w}, {{"ignore_index", int64_t{2}}}, 13}), {17.0 / 3.0});
  // Without weight, ignore_index divides by the count of kept samples: (1 + 8) / 2.
  expect_ex_values(run_ex_op1({"NegativeLogLikelihoodLoss", {x, t}, {{"ignore_index", int64_t{2}}}, 13}), {4.5});
  // An out-of-range target that is not ignored is an error.
  EXPECT_THROW(run_ex_op1({"NegativeLogLikelihoodLoss", {x, testing::ints_of({3}, {0, 3, 1})}, {}, 13}), Error);
}

TEST(OpsExtra, NllLossSpatial) {
  // input (N=1, C=2, d=2): loss[d] = -x[target[d]][d].
  Tensor x = testing::tensor_of({1, 2, 2}, {-1, -2, -3, -4});
  Tensor none = run_ex_op1(
      {"NegativeLogLikelihoodLoss", {x, testing::ints_of({1, 2}, {1, 0})}, {{"reduction", std::string("none")}}, 13});
  EXPECT_EQ(none.shape(), (Shape{1, 2}));
  expect_ex_values(none, {3, 2});
}

TEST(OpsExtra, SoftmaxCrossEntropyWithLogProb) {
  // Row 0 scores (0, 0): log_prob = -log 2 each. Row 1 scores (0, log 3): log_prob = (-log 4, log 3 - log 4).
  Tensor x = testing::tensor_of({2, 2}, {0, 0, 0, std::log(3.0)});
  Tensor t = testing::ints_of({2}, {0, 1});
  auto out = run_ex_op({"SoftmaxCrossEntropyLoss", {x, t}, {{"reduction", std::string("none")}}, 13, 2});
  expect_ex_values(out[0], {std::log(2.0), std::log(4.0) - std::log(3.0)});
  EXPECT_EQ(out[1].shape(), (Shape{2, 2}));
  expect_ex_values(out[1], {-std::log(2.0), -std::log(2.0), -std::log(4.0), std::log(3.0) - std::log(4.0)});
  expect_ex_values(run_ex_op1({"SoftmaxCrossEntropyLoss", {x, t}, {}, 13}),
                   {(std::log(2.0) + std::log(4.0) - std::log(3.0)) / 2});
}

// ---- Resize ------------------------------------------------------------------------------------

TEST(OpsExtra, ResizeNearestAndLinearUpsample) {
  Tensor x = testing::tensor_of({2}, {1, 2});
  Tensor scales = testing::tensor_of({1}, {2});
  // Opset 10: asymmetric coordinates, nearest rounding half down (onnxruntime): x_in = x / 2.
  expect_ex_values(run_ex_op1({"Resize", {x, scales}, {}, 10}), {1, 1, 2, 2});
  // Downsampling [1, 2, 3, 4] by 0.6: x_in = 0, 1.67 -> [1, 3] (flooring gave [1, 2]).
  expect_ex_values(run_ex_op1({"Resize", {testing::tensor_of({4}, {1, 2, 3, 4}), testing::tensor_of({1}, {0.6})}, {}, 10}), {1, 3});
  // float32 scales: coordinates in float32 (onnxruntime, the ONNX reference). half_pixel_symmetric
  // 0.7x of 5 pixels maps output 1 to exactly 2.0 there (in double 2.0000000365: ceil took 3).
  expect_ex_values(run_ex_op1({"Resize",
                               {testing::tensor_of({5}, {1, 2, 3, 4, 5}), std::nullopt, testing::tensor_of({1}, {0.7})},
                               {{"coordinate_transformation_mode", std::string("half_pixel_symmetric")}, {"nearest_mode", std::string("ceil")}},
                               19}),
                   {2, 3, 5});
  // 2.5x of 5 pixels to 12: output 8 maps to 3.0 as onnxruntime computes it (offset in float32,
  // the rest in double, rounded once); all in float32 it was 3.0000002 and ceil took pixel 4.
  expect_ex_values(run_ex_op1({"Resize",
                               {testing::tensor_of({5}, {0, 1, 2, 3, 4}), std::nullopt, testing::tensor_of({1}, {2.5})},
                               {{"coordinate_transformation_mode", std::string("half_pixel_symmetric")}, {"nearest_mode", std::string("ceil")}},
                               19}),
                   {0, 1, 1, 1, 2, 2, 3, 3, 3, 4, 4, 4});
  // half_pixel linear: x_in = (x + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25 (edges clamp).
  Tensor y = run_ex_op1({"Resize", {x, std::nullopt, scales}, {{"mode", std::string("linear")}}});
  EXPECT_EQ(y.shape(), (Shape{4}));
  expect_ex_values(y, {1, 1.25, 1.75, 2});
  // align_corners linear to 3 outputs: x_in = x * (2 - 1) / (3 - 1).
  expect_ex_values(run_ex_op1({"Resize",
                               {x, std::nullopt, std::nullopt, testing::ints_of({1}, {3})},
                               {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("align_corners")}}}),
                   {1, 1.5, 2});
}

TEST(OpsExtra, ResizeKeepAspectRatioWithAxes) {
  // (2, 4) to sizes (1, 3) not_larger: scale = min(1/2, 3/4) = 0.5, output (1, 2).
  // half_pixel nearest: rows x_in = 0.5 -> 0 (round_prefer_floor); cols 0.5 -> 0, 2.5 -> 2.
  Tensor x = testing::tensor_of({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor y = run_ex_op1({"Resize",
                         {x, std::nullopt, std::nullopt, testing::ints_of({2}, {3, 1})},
                         {{"axes", std::vector<int64_t>{1, 0}}, {"keep_aspect_ratio_policy", std::string("not_larger")}}});
  EXPECT_EQ(y.shape(), (Shape{1, 2}));
  expect_ex_values(y, {0, 2});
}

// An empty axis resized to size 0 stays empty (paddle2onnx and torch write sizes as
// Concat(Shape(x)[:2], [H, W]), so a batch of 0 asks for 0 -> 0), keep_aspect_ratio taking its
// ratio from the other axes; only a non-zero size for an empty axis is refused (red-team round 58).
TEST(OpsExtra, ResizeKeepsAnEmptyAxisEmpty) {
  const Tensor x(DType::f32, {0, 2, 3, 3});
  // Ratios 1, 2, 2 over the non-empty axes: not_larger keeps 1, not_smaller takes 2.
  const std::vector<std::pair<std::string, Shape>> policies = {
      {"stretch", {0, 2, 6, 6}}, {"not_larger", {0, 2, 3, 3}}, {"not_smaller", {0, 4, 6, 6}}};
  for (const auto& [policy, want] : policies) {
    const Tensor y = run_ex_op1({"Resize",
                                 {x, std::nullopt, std::nullopt, testing::ints_of({4}, {0, 2, 6, 6})},
                                 {{"mode", std::string("linear")}, {"keep_aspect_ratio_policy", policy}},
                                 18});
    EXPECT_EQ(y.shape(), want) << policy;
  }
  const std::string err = testing::error_of([&] {
    run_ex_op1({"Resize", {x, std::nullopt, std::nullopt, testing::ints_of({4}, {1, 2, 6, 6})}, {}, 18});
  });
  EXPECT_NE(err.find("cannot resize an empty dimension to size 1"), std::string::npos) << err;
}

TEST(OpsExtra, ResizeCropAndResizeExtrapolates) {
  // roi (0.5, 1.5) over 4 elements, 3 outputs: x_in = x * 1 * 3 / 2 + 1.5 = 1.5, 3, 4.5 (outside).
  Tensor x = testing::tensor_of({4}, {0, 1, 2, 3});
  Tensor y = run_ex_op1({"Resize",
                         {x, testing::tensor_of({2}, {0.5, 1.5}), std::nullopt, testing::ints_of({1}, {3})},
                         {{"mode", std::string("linear")},
                          {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                          {"extrapolation_value", 9.0}}});
  expect_ex_values(y, {1.5, 3, 9});
}

// A float32 roi's crop coordinates are formed in float32, as onnxruntime and the ONNX
// reference form them: roi (0.1, 0.2, 0.85, 0.7) puts column 4 on 3.5 and row 0 on 1.0
// exactly, where double put them a hair below and round_prefer_ceil / ceil took the pixel
// below (red-team round 58). Expected values: onnxruntime 1.32 (arange(24) as [1, 1, 4, 6]).
TEST(OpsExtra, CropAndResizeFormsFloat32RoiCoordinatesInFloat32) {
  Tensor x(DType::f32, {1, 1, 4, 6});
  for (int64_t i = 0; i < 24; ++i) x.set(i, static_cast<double>(i));
  const Tensor roi = testing::tensor_of({4}, {0.1, 0.2, 0.85, 0.7});
  const std::vector<std::pair<std::string, std::vector<double>>> modes = {
      {"round_prefer_ceil", {1, 2, 2, 3, 4, 7, 8, 8, 9, 10, 7, 8, 8, 9, 10, 7, 8, 8, 9, 10, 13, 14, 14, 15, 16, 13, 14, 14, 15, 16, 19, 20, 20, 21, 22}},
      {"ceil", {7, 8, 9, 9, 10, 7, 8, 9, 9, 10, 13, 14, 15, 15, 16, 13, 14, 15, 15, 16, 13, 14, 15, 15, 16, 19, 20, 21, 21, 22, 19, 20, 21, 21, 22}}};
  for (const auto& [mode, want] : modes) {
    const Tensor y = run_ex_op1({"Resize",
                                 {x, roi, std::nullopt, testing::ints_of({2}, {7, 5})},
                                 {{"axes", std::vector<int64_t>{2, 3}},
                                  {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                                  {"extrapolation_value", -9.0},
                                  {"mode", std::string("nearest")},
                                  {"nearest_mode", mode}},
                                 18});
    SCOPED_TRACE(mode);
    expect_ex_values(y, want);
  }
}

// tf_crop_and_resize with `sizes` and a roi computed at run time (tf2onnx's crop_and_resize
// crops each box inside a Loop): the shape needs no roi, so it runs (on ref, and through host
// fallback on a GPU, whose taps need it constant) with the values a constant roi gives.
TEST(OpsExtra, CropAndResizeTakesARunTimeRoiWithSizes) {
  const Tensor x = testing::random_tensor(DType::f32, {1, 1, 5, 6}, 31, -3.0, 3.0);
  const Tensor roi = testing::tensor_of({8}, {0, 0, 0.1, 0.25, 1, 1, 0.8, 0.9});
  const Tensor sizes = testing::ints_of({4}, {1, 1, 3, 4});
  const std::map<std::string, AttrValue> attrs{{"mode", std::string("linear")},
                                               {"coordinate_transformation_mode", std::string("tf_crop_and_resize")}};
  GraphBuilder c("crop_const", 13);
  c.output(c.op("Resize", {c.input("x", DType::f32, {1, 1, 5, 6}), c.constant("roi", roi), -1, c.constant("sizes", sizes)}, attrs));
  const Tensor want = Session(c.build(), "ref").run({x})[0];
  GraphBuilder r("crop_run_time", 13);
  const int xi = r.input("x", DType::f32, {1, 1, 5, 6}), ri = r.input("roi_in", DType::f32, {8});
  r.output(r.op("Resize", {xi, r.op("Identity", {ri}), -1, r.constant("sizes", sizes)}, attrs));
  const Graph g = r.build();
  for (const std::string& be : testing::usable_backends()) {
    const Tensor got = Session(g, be).run({x, roi})[0];
    ASSERT_EQ(got.shape(), (Shape{1, 1, 3, 4})) << be;
    for (int64_t i = 0; i < want.numel(); ++i) EXPECT_EQ(got.get(i), want.get(i)) << be << " element " << i;
  }
}

TEST(OpsExtra, ResizeRejectsBadArguments) {
  Tensor x = testing::tensor_of({2}, {1, 2});
  // Both scales and sizes, neither, and an unknown mode.
  EXPECT_THROW(run_ex_op1({"Resize", {x, std::nullopt, testing::tensor_of({1}, {2}), testing::ints_of({1}, {4})}}), Error);
  EXPECT_THROW(run_ex_op1({"Resize", {x}}), Error);
  EXPECT_THROW(run_ex_op1({"Resize", {x, std::nullopt, testing::tensor_of({1}, {2})}, {{"mode", std::string("area")}}}), Error);
}

// Upsample (deprecated; opset 7: scales attribute, opset 9: scales input) runs as Resize-10 on
// every backend: nearest x2 repeats each element (asymmetric coordinates, floor), linear x2
// interpolates towards the next element and repeats the last (values computed here).
TEST(OpsExtra, UpsampleRunsAsResize10OnEveryBackend) {
  const Tensor x = testing::random_tensor(DType::f32, {1, 2, 2, 3}, 21, -3.0, 3.0);
  for (int opset : {7, 9}) {
    for (const std::string mode : {"nearest", "linear"}) {
      GraphBuilder gb("upsample", opset);
      const int in = gb.input("x", DType::f32, {1, 2, 2, 3});
      std::map<std::string, AttrValue> attrs{{"mode", mode}};
      std::vector<int> ins{in};
      if (opset < 9) attrs["scales"] = std::vector<double>{1, 1, 2, 2};
      else ins.push_back(gb.constant("scales", testing::tensor_of({4}, {1, 1, 2, 2})));
      gb.output(gb.op("Upsample", ins, attrs));
      const Graph g = gb.build();
      std::vector<double> want;
      auto at = [&](int64_t c, int64_t h, int64_t w) { return x.get((c * 2 + h) * 3 + w); };
      auto lin = [&](int64_t c, int64_t i, int64_t j) {  // source coordinate i/2, j/2, clamped
        const double sh = i / 2.0, sw = j / 2.0;
        const int64_t h0 = static_cast<int64_t>(sh), w0 = static_cast<int64_t>(sw);
        const int64_t h1 = std::min<int64_t>(h0 + 1, 1), w1 = std::min<int64_t>(w0 + 1, 2);
        const double fh = sh - h0, fw = sw - w0;
        return (1 - fh) * ((1 - fw) * at(c, h0, w0) + fw * at(c, h0, w1)) + fh * ((1 - fw) * at(c, h1, w0) + fw * at(c, h1, w1));
      };
      for (int64_t c = 0; c < 2; ++c)
        for (int64_t i = 0; i < 4; ++i)
          for (int64_t j = 0; j < 6; ++j) want.push_back(mode == "nearest" ? at(c, i / 2, j / 2) : lin(c, i, j));
      std::vector<std::string> backends{"ref", "cpu"};
      if (testing::vulkan_available()) backends.push_back("vulkan");
      for (const std::string& be : backends) {
        SCOPED_TRACE("Upsample-" + std::to_string(opset) + " " + mode + " on " + be);
        const std::vector<Tensor> out = Session(g, be).run({x});
        ASSERT_EQ(out.size(), 1u);
        EXPECT_EQ(out[0].shape(), (Shape{1, 2, 4, 6}));
        testing::expect_values(out[0], want, 1e-5);
      }
    }
  }
}

// MeanVarianceNormalization (default axes [0, 2, 3]) on every backend against the formula
// computed here in double: (x - mean_c) / (sqrt(mean_c(x^2) - mean_c^2) + 1e-9).
TEST(OpsExtra, MeanVarianceNormalizationOnEveryBackend) {
  const Tensor x = testing::random_tensor(DType::f32, {2, 3, 2, 2}, 31, -2.0, 5.0);
  GraphBuilder gb("mvn", 13);
  gb.output(gb.op("MeanVarianceNormalization", {gb.input("x", DType::f32, {2, 3, 2, 2})}));
  const Graph g = gb.build();
  std::vector<double> want(static_cast<size_t>(x.numel()));
  for (int64_t c = 0; c < 3; ++c) {
    double s = 0, s2 = 0;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t k = 0; k < 4; ++k) {
        const double v = x.get((b * 3 + c) * 4 + k);
        s += v, s2 += v * v;
      }
    const double m = s / 8, sd = std::sqrt(s2 / 8 - m * m) + 1e-9;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t k = 0; k < 4; ++k) want[(b * 3 + c) * 4 + k] = (x.get((b * 3 + c) * 4 + k) - m) / sd;
  }
  std::vector<std::string> backends{"ref", "cpu"};
  if (testing::vulkan_available()) backends.push_back("vulkan");
  for (const std::string& be : backends) {
    SCOPED_TRACE(be);
    const std::vector<Tensor> out = Session(g, be).run({x});
    ASSERT_EQ(out.size(), 1u);
    testing::expect_values(out[0], want, 1e-5);
  }
}

}  // namespace
}  // namespace fusor
