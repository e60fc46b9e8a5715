// Red-team round 49 (docs/redteam.md): detectors through the cone path. What it showed that
// these tests hold: a linear / cubic Resize whose source coordinate is an integer plus one ulp
// of double (30 -> 42 pixels: output 10 maps to 7.000000000000001) took its taps around the
// padded coordinate 7 + eps + 1, which rounds to 8.0, and read pixel 6 on every backend.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace fusor
