// Red-team round 54 (performance cliffs, docs/redteam.md), mended in session 42: a nearest (or
// scale-1) Resize axis kept the zero-weight neighbour taps, so an inf or NaN next to a picked
// pixel made it NaN, and the host Resize walked 2^rank taps per element (16 for a 4-D nearest
// upsample: 1.2 s for YOLO's [1, 256, 80, 80] x2 where onnxruntime takes 18 ms).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "frontend/builder.h"
#include "ir/op_table.h"
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

}  // namespace
}  // namespace fusor
