// Red-team round 11 (docs/redteam.md): old-opset semantics, each checked on every backend here.
//  - Scan-8 carries the batch on axis 0 of every state and scanned input: a state batch other
//    than the scanned one was read past its end (garbage, or SIGSEGV for big batches); now one
//    [shape] line.
//  - Resize-10 nearest: onnxruntime's rule (floor on an upsampled axis, ceiling on a downsampled
//    one); "round half down" took the wrong source on upsampled axes.
//  - Resize-11 tf_half_pixel_for_nn: an axis left at scale 1 maps to itself (the + 0.5 with ceil /
//    round_prefer_ceil shifted N and C by one).
//  - Concat-1 without `axis` concatenates on axis 1 (its default then).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "runtime/session.h"
#include "fuzz_harness.h"
#include "onnx_test_util.h"
#include "test_util.h"

namespace fusor {
namespace {

// Scan-8 body: (s_in [2], x_t [2]) -> (s_out = s_in + x_t, y_t = s_out).
std::shared_ptr<const Graph> scan8_body() {
  GraphBuilder b("scan8_body", 8);
  const int s = b.input("s_in", DType::f32, {2}), x = b.input("x_t", DType::f32, {2});
  const int so = b.op("Add", {s, x});
  b.output(so);
  b.output(b.op("Identity", {so}));
  Graph g = b.build();
  g.formal_inputs = 2;
  return std::make_shared<const Graph>(std::move(g));
}

Graph scan8_model(int64_t state_batch, int64_t scan_batch) {
  GraphBuilder b("scan8", 8);
  const int s0 = b.input("s0", DType::f32, {state_batch, 2}), x = b.input("x", DType::f32, {scan_batch, 4, 2});
  auto outs = b.op_multi("Scan", {-1, s0, x}, {{"body", scan8_body()}, {"num_scan_inputs", int64_t{1}}}, 2);
  b.output(outs[0]);
  b.output(outs[1]);
  return b.build();
}

TEST(Round11, Scan8StateAndScannedBatchesMustAgree) {
  for (const auto& [sb, xb] : std::vector<std::pair<int64_t, int64_t>>{{1000, 1}, {3, 2}, {2, 3}}) {
    const Graph g = scan8_model(sb, xb);
    const std::vector<Tensor> in = {testing::random_tensor(DType::f32, {sb, 2}, 1), testing::random_tensor(DType::f32, {xb, 4, 2}, 2)};
    for (const std::string& be : testing::usable_backends()) {
      SCOPED_TRACE(be);
      EXPECT_ERROR(Session(g, be).run(in), "different batch sizes (" + std::to_string(sb) + " and " + std::to_string(xb) + ")");
    }
  }
  // Agreeing batches still run: each batch row's running sum, on every backend as on ref.
  const Graph g = scan8_model(3, 3);
  const std::vector<Tensor> in = {testing::random_tensor(DType::f32, {3, 2}, 3), testing::random_tensor(DType::f32, {3, 4, 2}, 4)};
  const std::vector<Tensor> want = Session(g, "ref").run(in);
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t j = 0; j < 2; ++j) {
      double s = in[0].get(b * 2 + j);
      for (int64_t t = 0; t < 4; ++t) {
        s = static_cast<float>(s + in[1].get((b * 4 + t) * 2 + j));
        EXPECT_EQ(want[1].get((b * 4 + t) * 2 + j), s) << "scan output, batch " << b << " step " << t;  // out[b, t, j]
      }
      EXPECT_EQ(want[0].get(b * 2 + j), s);
    }
  for (const std::string& be : testing::usable_backends()) {
    const std::vector<Tensor> got = Session(g, be).run(in);
    for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(0, std::memcmp(got[k].raw(), want[k].raw(), want[k].nbytes())) << be << " output " << k;
  }
}

// x = 0, 1, 2 ... of shape s; the Resize of it by `scales` (opset `opset`, mode nearest, attrs).
std::vector<Tensor> run_resize(const std::string& be, int opset, const Shape& s, const std::vector<double>& scales,
                               std::map<std::string, AttrValue> attrs) {
  GraphBuilder b("resize", opset);
  const int x = b.input("x", DType::f32, s);
  Tensor sc(DType::f32, {static_cast<int64_t>(scales.size())});
  for (size_t i = 0; i < scales.size(); ++i) sc.set(static_cast<int64_t>(i), scales[i]);
  attrs["mode"] = std::string("nearest");
  const int c = b.constant("scales", sc);
  b.output(b.op("Resize", opset < 11 ? std::vector<int>{x, c} : std::vector<int>{x, -1, c}, attrs));
  Tensor in(DType::f32, s);
  for (int64_t i = 0; i < in.numel(); ++i) in.set(i, static_cast<double>(i));
  return Session(b.build(), be).run({in});
}

// The source index of each output along one axis of in_w elements, and the flat expectation.
Tensor expected_gather(const Shape& in, const Shape& out, const std::function<int64_t(int, int64_t)>& src) {
  Tensor t(DType::f32, out);
  std::vector<int64_t> c(out.size(), 0);
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t rem = i, flat = 0;
    for (int d = static_cast<int>(out.size()) - 1; d >= 0; --d) c[d] = rem % out[d], rem /= out[d];
    for (size_t d = 0; d < out.size(); ++d) flat = flat * in[d] + src(static_cast<int>(d), c[d]);
    t.set(i, static_cast<double>(flat));
  }
  return t;
}

TEST(Round11, Resize10NearestFloorsUpsampledAxesAndCeilsDownsampledOnes) {
  const Shape in = {1, 2, 5, 8};
  const std::vector<double> scales = {1.0, 1.0, 1.7, 0.6};
  const Shape out = {1, 2, 8, 4};  // floor(5 * 1.7), floor(8 * 0.6)
  const Tensor want = expected_gather(in, out, [&](int d, int64_t x) {
    const double xo = static_cast<double>(x) / static_cast<float>(scales[d]);  // asymmetric
    const int64_t i = static_cast<int64_t>(scales[d] < 1.0 ? std::ceil(xo) : std::floor(xo));
    return std::min<int64_t>(i, in[d] - 1);
  });
  for (const std::string& be : testing::usable_backends()) {
    const std::vector<Tensor> got = run_resize(be, 10, in, scales, {});
    ASSERT_EQ(got[0].shape(), out) << be;
    EXPECT_EQ(0, std::memcmp(got[0].raw(), want.raw(), want.nbytes())) << be;
  }
}

TEST(Round11, TfHalfPixelForNnLeavesUnscaledAxesInPlace) {
  const Shape in = {2, 3, 4, 4};
  const std::vector<double> scales = {1.0, 1.0, 2.0, 2.0};
  const Shape out = {2, 3, 8, 8};
  for (const char* mode : {"round_prefer_ceil", "ceil", "floor", "round_prefer_floor"}) {
    const std::string m = mode;
    const Tensor want = expected_gather(in, out, [&](int d, int64_t x) {
      if (scales[d] == 1.0) return x;
      const double xo = (static_cast<double>(x) + 0.5) / scales[d], fl = std::floor(xo), r = xo - fl;
      double i = m == "ceil" ? std::ceil(xo) : m == "floor" ? fl : m == "round_prefer_ceil" ? (r >= 0.5 ? fl + 1 : fl) : (r > 0.5 ? fl + 1 : fl);
      return std::min<int64_t>(static_cast<int64_t>(i), in[d] - 1);
    });
    for (const std::string& be : testing::usable_backends()) {
      const std::vector<Tensor> got =
          run_resize(be, 11, in, scales, {{"coordinate_transformation_mode", std::string("tf_half_pixel_for_nn")}, {"nearest_mode", m}});
      ASSERT_EQ(got[0].shape(), out) << be << " " << m;
      EXPECT_EQ(0, std::memcmp(got[0].raw(), want.raw(), want.nbytes())) << be << " " << m;
    }
  }
}

TEST(Round11, Concat1WithoutAxisConcatenatesOnAxis1) {
  auto m = fuzz::new_model(1);
  auto* g = m.mutable_graph();
  fuzz::set_type(g->add_input(), "a", onnx::TensorProto::FLOAT, {2, 2, 3});
  fuzz::set_type(g->add_input(), "b", onnx::TensorProto::FLOAT, {2, 1, 3});
  fuzz::add_node(g, "Concat", {"a", "b"}, {"y"})->set_name("concat");
  fuzz::set_type(g->add_output(), "y", onnx::TensorProto::FLOAT, {2, 3, 3});
  const Graph graph = testing::load_proto(m);
  const std::vector<Tensor> in = {testing::random_tensor(DType::f32, {2, 2, 3}, 5), testing::random_tensor(DType::f32, {2, 1, 3}, 6)};
  Tensor want(DType::f32, {2, 3, 3});
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t w = 0; w < 3; ++w) want.set((n * 3 + c) * 3 + w, c < 2 ? in[0].get((n * 2 + c) * 3 + w) : in[1].get(n * 3 + w));
  for (const std::string& be : testing::usable_backends()) {
    const std::vector<Tensor> got = Session(graph, be).run(in);
    ASSERT_EQ(got[0].shape(), want.shape()) << be;
    EXPECT_EQ(0, std::memcmp(got[0].raw(), want.raw(), want.nbytes())) << be;
  }
}

}  // namespace
}  // namespace fusor
