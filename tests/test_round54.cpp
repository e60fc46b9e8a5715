// Red-team round 54 (performance cliffs, docs/redteam.md), mended in session 42: a nearest (or
// scale-1) Resize axis kept the zero-weight neighbour taps, so an inf or NaN next to a picked
// pixel made it NaN, and the host Resize walked 2^rank taps per element (16 for a 4-D nearest
// upsample: 1.2 s for YOLO's [1, 256, 80, 80] x2 where onnxruntime takes 18 ms); a MatMul of
// many tiny matrices ran a contraction workgroup per 3 x 3 matrix (38 s on lavapipe).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "frontend/builder.h"
#include "ir/op_table.h"
#include "ir/passes.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

Graph resize_graph(const std::string& mode, const Shape& in, const std::vector<double>& scales) {
  GraphBuilder b("resize", 19);
  const int x = b.input("x", DType::f32, in);
  b.output(b.op("Resize", {x, -1, b.constant("scales", testing::tensor_of({static_cast<int64_t>(scales.size())}, scales))},
                {{"mode", mode}}));
  return b.build();
}

TEST(Round54, NearestResizePicksOnePixelWhateverItsNeighbours) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  // x2 along the last axis (half_pixel, round_prefer_floor): out[j] = in[j / 2], as onnxruntime.
  const Tensor x = testing::tensor_of({1, 1, 2, 3}, {1, inf, 3, -0.0, nan, -inf});
  for (const std::string& be : testing::usable_backends()) {
    SCOPED_TRACE(be);
    const Tensor y = Session(resize_graph("nearest", {1, 1, 2, 3}, {1, 1, 1, 2}), be).run({x})[0];
    ASSERT_EQ(y.shape(), (Shape{1, 1, 2, 6}));
    const std::vector<double> want{1, 1, inf, inf, 3, 3, -0.0, -0.0, nan, nan, -inf, -inf};
    for (int64_t i = 0; i < y.numel(); ++i) {
      if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(y.get(i))) << i;
      else EXPECT_EQ(y.get(i), want[i]) << i;
    }
    if (be == "ref" || be == "cpu") EXPECT_TRUE(std::signbit(y.get(6))) << "a lone tap copies -0.0";
    // A 1x1 map upsampled (linear): every tap reads the one pixel, so an inf stays inf.
    const Tensor one = Session(resize_graph("linear", {1, 1, 1, 1}, {1, 1, 3, 3}), be).run({testing::tensor_of({1, 1, 1, 1}, {inf})})[0];
    ASSERT_EQ(one.numel(), 9);
    for (int64_t i = 0; i < 9; ++i) EXPECT_EQ(one.get(i), inf) << i;
  }
}

// The table: nearest axes and axes of scale 1 keep one tap per coordinate; an interpolated
// linear axis keeps its two.
TEST(Round54, ResizeTablesKeepOneTapWhereOnePixelIsRead) {
  const Graph g = resize_graph("linear", {1, 3, 4, 5}, {1, 1, 2, 2});
  const ResizeTable lin = resize_table(g.nodes[0], {1, 3, 4, 5}, &*g.values[g.nodes[0].inputs[2]].constant, nullptr, nullptr);
  ASSERT_EQ(lin.axes.size(), 4u);
  EXPECT_EQ(lin.axes[0].taps, 1);
  EXPECT_EQ(lin.axes[1].taps, 1);
  EXPECT_EQ(lin.axes[2].taps, 2);
  EXPECT_EQ(lin.axes[3].taps, 2);
  const Graph n = resize_graph("nearest", {1, 3, 4, 5}, {1, 1, 2, 0.5});
  const ResizeTable near = resize_table(n.nodes[0], {1, 3, 4, 5}, &*n.values[n.nodes[0].inputs[2]].constant, nullptr, nullptr);
  for (const ResizeAxis& a : near.axes) EXPECT_EQ(a.taps, 1);
}

// [..., M, K] x [..., K, N], at least 1,024 matrices of M x N <= 16, K <= 16: a product reduced over K
// (no contraction kernel), each output within an ulp of the exact sum plus one per term (the
// products round to fp32 before the sum), on every backend; batch dims broadcast; fp16.
TEST(Round54, ManyTinyMatricesMultiplyAsAReduction) {
  struct Case {
    Shape a, b;
    DType t;
  };
  for (const Case& c : {Case{{2048, 3, 3}, {2048, 3, 2}, DType::f32}, Case{{512, 1, 4, 5}, {1, 4, 5, 3}, DType::f32},
                        Case{{1500, 2, 16}, {1500, 16, 8}, DType::f16}}) {
    SCOPED_TRACE(shape_str(c.a) + " x " + shape_str(c.b) + " " + dtype_name(c.t));
    GraphBuilder b("bmm", 17);
    b.output(b.op("MatMul", {b.input("a", c.t, c.a), b.input("b", c.t, c.b)}));
    Graph g = b.build();
    make_static(g, {});
    const Plan p = build_plan(g);
    for (const KernelSpec& k : p.kernels) EXPECT_FALSE(k.matmul.has_value()) << k.name;
    const Tensor x = testing::random_tensor(c.t, c.a, 41, -2, 2), y = testing::random_tensor(c.t, c.b, 42, -2, 2);
    // The exact product in double; both shapes padded to rank 4, a size-1 batch dim broadcast
    // (index i % 1 = 0).
    Shape pa = c.a, pb = c.b;
    while (pa.size() < 4) pa.insert(pa.begin(), 1);
    while (pb.size() < 4) pb.insert(pb.begin(), 1);
    const int64_t M = pa[2], K = pa[3], N = pb[3];
    std::vector<double> want, mag;
    for (int64_t i0 = 0; i0 < std::max(pa[0], pb[0]); ++i0)
      for (int64_t i1 = 0; i1 < std::max(pa[1], pb[1]); ++i1) {
        const int64_t oa = ((i0 % pa[0]) * pa[1] + i1 % pa[1]) * M * K, ob = ((i0 % pb[0]) * pb[1] + i1 % pb[1]) * K * N;
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = 0; n < N; ++n) {
            double s = 0, h = 0;
            for (int64_t k = 0; k < K; ++k) {
              const double v = x.get(oa + m * K + k) * y.get(ob + k * N + n);
              s += v, h += std::fabs(v);
            }
            want.push_back(s), mag.push_back(h);
          }
      }
    const double ulp = c.t == DType::f16 ? 1.0 / 1024 : 1.2e-7;
    for (const std::string& be : testing::usable_backends()) {
      const Tensor got = Session(g, be).run({x, y})[0];
      ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size())) << be;
      for (int64_t i = 0; i < got.numel(); ++i)
        ASSERT_NEAR(got.get(i), want[i], ulp * (std::fabs(want[i]) + mag[i]) + 1e-30) << be << " element " << i;
    }
  }
}

}  // namespace
}  // namespace fusor
