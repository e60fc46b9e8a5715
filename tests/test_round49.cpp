// Red-team round 49 (docs/redteam.md): detectors through the cone path. What it showed that
// these tests hold: a linear / cubic Resize whose source coordinate is an integer plus one ulp
// of double (30 -> 42 pixels: output 10 maps to 7.000000000000001) took its taps around the
// padded coordinate 7 + eps + 1, which rounds to 8.0, and read pixel 6 on every backend; a Loop
// whose body's shapes need values (NonZero, a Resize to sizes read from a box: torchvision's
// paste_masks_in_image) was refused even with a constant trip count; NonZero of a large graph
// input was refused ("sets a shape but has 90000 elements") while NonZero(Abs(x)) ran; with no
// detection RetinaNet still ran its box-head convolutions for Gathers of zero anchors. Round 50
// (a review of those fixes): Resize's taps were chosen among every input position (a 65536 ->
// 131072 resample took 30 s), and pytorch_half_pixel mapped an output of length 1 to -0.5 (as
// onnx.reference) where the operator spec and onnxruntime say 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "frontend/builder.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

// x = 0, 1, ..., in - 1 on the last axis, resized to `out` by sizes (half_pixel, `mode`).
Tensor resize_ramp(const std::string& be, int64_t in, int64_t out, const std::string& mode) {
  GraphBuilder b("resize", 13);
  const int x = b.input("x", DType::f32, {1, 1, 2, in});
  const int sz = b.constant("sizes", testing::ints_of({4}, {1, 1, 2, out}));
  b.output(b.op("Resize", {x, -1, -1, sz}, {{"mode", mode}, {"coordinate_transformation_mode", std::string("half_pixel")}}));
  Tensor t(DType::f32, {1, 1, 2, in});
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, static_cast<double>(i % in));
  return Session(b.build(), be).run({t})[0];
}

TEST(Round49, ResizeAtAnIntegralSourceCoordinateReadsThatPixel) {
  for (const std::string& be : testing::usable_backends())
    for (int64_t in : {30, 7})
      for (int64_t out : {42, 22, 61, 83, 9}) {
        SCOPED_TRACE(be + " " + std::to_string(in) + " -> " + std::to_string(out));
        const Tensor lin = resize_ramp(be, in, out, "linear");
        const Tensor cub = resize_ramp(be, in, out, "cubic");
        ASSERT_EQ(lin.shape(), (Shape{1, 1, 2, out}));
        for (int64_t o = 0; o < out; ++o) {
          // The exact source coordinate ((2o + 1) in - out) / (2 out): linear interpolation of
          // the ramp gives it back (clamped at the edges).
          const int64_t num = (2 * o + 1) * in - out, den = 2 * out;
          const double xo = static_cast<double>(num) / static_cast<double>(den);
          const double want = std::clamp(xo, 0.0, static_cast<double>(in - 1));
          for (int64_t r = 0; r < 2; ++r) EXPECT_NEAR(lin.get(r * out + o), want, 2e-5) << "linear output " << o;
          // On an integral coordinate every kernel reads the pixel there alone.
          if (num % den == 0 && num >= 0) EXPECT_EQ(cub.get(o), static_cast<double>(num / den)) << "cubic output " << o;
        }
      }
}

TEST(Round50, ResizeTapsCostNoMoreThanTheOutput) {
  // One row of 65536 -> 131072 (an audio resample): linear half_pixel of a ramp is the source
  // coordinate itself (clamped), on ref within a CPU-time bound (quadratic it took 30 s).
  GraphBuilder b("wide", 13);
  const int x = b.input("x", DType::f32, {1, 65536});
  b.output(b.op("Resize", {x, -1, -1, b.constant("sizes", testing::ints_of({2}, {1, 131072}))}, {{"mode", std::string("linear")}}));
  Tensor in(DType::f32, {1, 65536});
  for (int64_t i = 0; i < in.numel(); ++i) in.set(i, static_cast<double>(i));
  const double t0 = testing::thread_cpu_seconds();
  const Tensor y = Session(b.build(), "ref").run({in})[0];
  EXPECT_LT(testing::thread_cpu_seconds() - t0, 10.0);
  ASSERT_EQ(y.shape(), (Shape{1, 131072}));
  for (int64_t o : {0, 1, 2, 4097, 65535, 131070, 131071})
    EXPECT_NEAR(y.get(o), std::clamp((static_cast<double>(o) + 0.5) / 2 - 0.5, 0.0, 65535.0), 1e-2) << o;
}

TEST(Round50, PytorchHalfPixelMapsALengthOneOutputToZero) {
  // x [1, 1, 1, n] -> [1, 1, 1, 1]: the source coordinate is 0, so every mode reads x[0] alone
  // (cubic's weights 0, 0, 1, 0); at -0.5 cubic mixed in x[1] through the clamped taps, and for
  // n = 49 the test on the fractional width (1 / 49 * 49 != 1) took the formula: pixel 24.
  for (const auto& [n, mode] : std::vector<std::pair<int64_t, std::string>>{{8, "cubic"}, {49, "nearest"}, {49, "linear"}, {49, "cubic"}}) {
    const Tensor in = testing::random_tensor(DType::f32, {1, 1, 1, n}, 501);
    for (const std::string& be : testing::usable_backends()) {
      GraphBuilder b("len1", 13);
      const int x = b.input("x", DType::f32, {1, 1, 1, n});
      b.output(b.op("Resize", {x, -1, -1, b.constant("sizes", testing::ints_of({4}, {1, 1, 1, 1}))},
                    {{"mode", mode}, {"coordinate_transformation_mode", std::string("pytorch_half_pixel")}}));
      const Tensor y = Session(b.build(), be).run({in})[0];
      EXPECT_EQ(y.get(0), in.get(0)) << be << " " << mode << " n = " << n;
    }
  }
}


// g maps x [3, 4] to (the sum of x's positive elements, the count of them per row [3, 1]):
// checked on every backend, several inputs through one Session (new shapes inside per run).
void expect_positives(const Graph& g, std::initializer_list<uint64_t> seeds) {
  for (const std::string& be : testing::usable_backends()) {
    Session s(g, be);
    for (uint64_t seed : seeds) {
      SCOPED_TRACE(be + " seed " + std::to_string(seed));
      const Tensor in = testing::random_tensor(DType::f32, {3, 4}, seed);
      const std::vector<Tensor> out = s.run({in});
      ASSERT_EQ(out.size(), 2u);
      float sum = 0;
      std::vector<double> counts(3, 0.0);
      for (int64_t r = 0; r < 3; ++r) {
        float row = 0;  // summed in row order, in float32, as ReduceSum of 4 elements
        for (int64_t k = 0; k < 4; ++k)
          if (in.get(r * 4 + k) > 0) row += static_cast<float>(in.get(r * 4 + k)), counts[r] += 1;
        sum += row;
      }
      EXPECT_NEAR(out[0].get(0), sum, 1e-5);
      ASSERT_EQ(out[1].shape(), (Shape{3, 1}));
      testing::expect_values(out[1], {counts[0], counts[1], counts[2]}, 0);
    }
  }
}

// row[row > 0] (NonZero, then GatherND), in body b.
int positives_of(GraphBuilder& b, int row) {
  const int nz = b.op("NonZero", {b.op("Greater", {row, b.constant("zero", testing::tensor_of({}, {0}))})});
  return b.op("GatherND", {row, b.op("Transpose", {nz}, {{"perm", std::vector<int64_t>{1, 0}}})});
}

// Loop body (i, cond, acc [1], captured x [3, 4]) -> (cond, acc + sum(x[i % 3][x[i % 3] > 0]),
// scan: the count of x[i % 3] > 0): NonZero inside, so each iteration's shapes follow x's values.
std::shared_ptr<const Graph> positives_body() {
  GraphBuilder b("positives_body", 17);
  const int i = b.input("i", DType::i64, {}), c = b.input("cond", DType::boolean, {}), acc = b.input("acc", DType::f32, {1});
  const int x = b.input("x", DType::f32, {3, 4});  // captured outer value
  const int row = b.op("Gather", {x, b.op("Mod", {i, b.constant("three", testing::ints_of({}, {3}))})});
  const int pos = positives_of(b, row);
  b.output(b.op("Identity", {c}));
  b.output(b.op("Add", {acc, b.op("ReduceSum", {pos}, {{"keepdims", int64_t{1}}})}));
  b.output(b.op("Cast", {b.op("Shape", {pos})}, {{"to", int64_t{1}}}));
  Graph g = b.build();
  g.formal_inputs = 3;
  return std::make_shared<const Graph>(std::move(g));
}

Graph positives_loop(int64_t trips) {
  GraphBuilder b("positives", 17);
  const int x = b.input("x", DType::f32, {3, 4});
  Tensor t(DType::boolean, {});
  t.set(0, 1.0);
  auto outs = b.op_multi("Loop", {b.constant("M", testing::ints_of({}, {trips})), b.constant("true", t), b.constant("acc0", testing::tensor_of({1}, {0})), x},
                         {{"body", positives_body()}}, 2);
  b.output(outs[0]);
  b.output(outs[1]);
  return b.build();
}

TEST(Round49, LoopWhoseBodyShapesNeedValuesRunsOnEveryBackend) {
  const Graph g = positives_loop(3);
  // Past the iterations a fold may run at load: one line saying so.
  const std::string e = testing::error_of([&] { Session(positives_loop(5000), "ref").run({testing::random_tensor(DType::f32, {3, 4}, 490)}); });
  EXPECT_NE(e.find("running it at load runs past 4096 iterations"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  expect_positives(g, {491, 492, 493});
}

// The same as a Scan over x's rows: body (acc [1], row [4]) -> (acc + sum(row[row > 0]), the
// count). Scan bodies whose shapes need values were refused as well.
std::shared_ptr<const Graph> positives_scan_body() {
  GraphBuilder b("positives_scan_body", 17);
  const int acc = b.input("acc", DType::f32, {1}), row = b.input("row", DType::f32, {4});
  const int pos = positives_of(b, row);
  b.output(b.op("Add", {acc, b.op("ReduceSum", {pos}, {{"keepdims", int64_t{1}}})}));
  b.output(b.op("Cast", {b.op("Shape", {pos})}, {{"to", int64_t{1}}}));
  return std::make_shared<const Graph>(b.build());
}

TEST(Round49, ScanWhoseBodyShapesNeedValuesRunsOnEveryBackend) {
  GraphBuilder b("positives_scan", 17);
  const int x = b.input("x", DType::f32, {3, 4});
  auto outs = b.op_multi("Scan", {b.constant("acc0", testing::tensor_of({1}, {0})), x}, {{"body", positives_scan_body()}, {"num_scan_inputs", int64_t{1}}}, 2);
  b.output(outs[0]);
  b.output(outs[1]);
  const Graph g = b.build();
  expect_positives(g, {498, 499});
}

TEST(Round49, NonZeroOfALargeInputRunsAndItsContractionsStayKernels) {
  GraphBuilder b("masked", 17);
  const int x = b.input("x", DType::f32, {1024, 512});
  const int idx = b.op("Transpose", {b.op("NonZero", {x})}, {{"perm", std::vector<int64_t>{1, 0}}});
  b.output(b.op("GatherND", {x, idx}));
  const int a = b.op("Reshape", {x, b.constant("shape", testing::ints_of({2}, {256, 2048}))});
  b.output(b.op("Einsum", {a, a}, {{"equation", std::string("ik,jk->ij")}}));
  const Graph g = b.build();
  Tensor in = testing::random_tensor(DType::f32, {1024, 512}, 494);
  std::vector<double> want;
  for (int64_t i = 0; i < in.numel(); ++i) {
    if (i % 64 != 0) in.set(i, 0.0);  // few non-zeros: the fold budget is not what stops the fold
    if (in.get(i) != 0) want.push_back(in.get(i));
  }
  const Graph s = specialize(g, {in});
  EXPECT_FALSE(s.values[s.outputs[1]].constant.has_value()) << "the product folded at load";
  double dot = 0;  // output (3, 7) of the product by hand
  for (int64_t k = 0; k < 2048; ++k) dot += in.get(3 * 2048 + k) * in.get(7 * 2048 + k);
  for (const std::string& be : testing::usable_backends()) {
    SCOPED_TRACE(be);
    const std::vector<Tensor> out = Session(g, be).run({in});
    ASSERT_EQ(out.size(), 2u);
    testing::expect_values(out[0], want, 0);
    EXPECT_NEAR(out[1].get(3 * 256 + 7), dot, 1e-4 * (1 + std::fabs(dot)));
  }
  // A shape parameter that large is still refused (Hostile.LargeInputsAreNotSpecialisedOn).
}

// boxes = Gather(Conv(x) flattened, NonZero(Sigmoid(s) > t)) as a detector's head reads its
// kept anchors: with t = 2 nothing is kept, the Gather is empty and the Conv feeding only it is
// not run (no Conv left after specialisation); with t = 0.5 it runs and agrees with ref.
TEST(Round49, HeadsFeedingOnlyEmptyGathersAreNotRun) {
  GraphBuilder b("head", 17);
  const int x = b.input("x", DType::f32, {1, 4, 8, 8}), sc = b.input("s", DType::f32, {256});
  const int t = b.input("t", DType::f32, {});
  const int conv = b.op("Conv", {x, b.constant("w", testing::random_tensor(DType::f32, {4, 4, 3, 3}, 495))}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  const int flat = b.op("Reshape", {conv, b.constant("shape", testing::ints_of({1}, {256}))});
  const int keep = b.op("NonZero", {b.op("Greater", {b.op("Sigmoid", {sc}), t})});
  b.output(b.op("Gather", {flat, b.op("Reshape", {keep, b.constant("flat", testing::ints_of({1}, {-1}))})}));
  const Graph g = b.build();
  const Tensor xv = testing::random_tensor(DType::f32, {1, 4, 8, 8}, 496), sv = testing::random_tensor(DType::f32, {256}, 497);
  const Graph none = specialize(g, {xv, sv, testing::tensor_of({}, {2.0})});
  EXPECT_FALSE(std::any_of(none.nodes.begin(), none.nodes.end(), [](const Node& n) { return n.op_type == "Conv"; }))
      << "a Conv feeding only an empty Gather is still run";
  for (double thr : {2.0, 0.5}) {
    const std::vector<Tensor> in{xv, sv, testing::tensor_of({}, {thr})};
    const Tensor want = Session(g, "ref").run(in)[0];
    if (thr == 2.0) EXPECT_EQ(want.numel(), 0);
    else EXPECT_GT(want.numel(), 50);
    for (const std::string& be : testing::usable_backends()) {
      SCOPED_TRACE(be + " threshold " + std::to_string(thr));
      const Tensor got = Session(g, be).run(in)[0];
      ASSERT_EQ(got.shape(), want.shape());
      for (int64_t i = 0; i < want.numel(); ++i) EXPECT_NEAR(got.get(i), want.get(i), 1e-5 * (1 + std::fabs(want.get(i)))) << i;
    }
  }
}

}  // namespace
}  // namespace fusor
