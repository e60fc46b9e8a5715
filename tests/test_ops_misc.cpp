// CumProd, the window ops, Compress, LpNormalization, NonMaxSuppression, Unique, TfIdfVectorizer (ir/ops/misc.cpp)
// and GridSample, AffineGrid, CenterCropPad, Col2Im (ir/ops/grid.cpp) on ref: hand-derived
// values from the ONNX spec's formulas; integers exactly.
#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"

namespace fusor {
namespace {

using testing::expect_values;
using testing::ints_of;
using testing::run_op;
using testing::tensor_of;

std::vector<int64_t> values(const Tensor& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get_int(i));
  return v;
}

TEST(OpsMisc, CumProd) {
  Tensor x = tensor_of({4}, {1, 2, 3, 4});
  Tensor axis = ints_of({}, {0});
  expect_values(run_op({"CumProd", {x, axis}}, 26)[0], {1, 2, 6, 24});
  expect_values(run_op({"CumProd", {x, axis}, {{"exclusive", int64_t{1}}}}, 26)[0], {1, 1, 2, 6});
  expect_values(run_op({"CumProd", {x, axis}, {{"reverse", int64_t{1}}}}, 26)[0], {24, 24, 12, 4});
  Tensor m = tensor_of({2, 2}, {1, 2, 3, 4});
  expect_values(run_op({"CumProd", {m, ints_of({}, {-1})}}, 26)[0], {1, 2, 3, 12});
  // int32 wraps: 65536 * 65536 = 2^32 -> 0.
  EXPECT_EQ(values(run_op({"CumProd", {ints_of({3}, {65536, 65536, 5}, DType::i32), axis}}, 26)[0]),
            (std::vector<int64_t>{65536, 0, 0}));
}

TEST(OpsMisc, Windows) {
  Tensor four = ints_of({}, {4}), five = ints_of({}, {5}), three = ints_of({}, {3});
  expect_values(run_op({"HannWindow", {four}}, 17)[0], {0, 0.5, 1, 0.5}, 1e-7);
  expect_values(run_op({"HannWindow", {five}, {{"periodic", int64_t{0}}}}, 17)[0], {0, 0.5, 1, 0.5, 0}, 1e-7);
  const double h0 = 4.0 / 46.0;
  expect_values(run_op({"HammingWindow", {three}, {{"periodic", int64_t{0}}}}, 17)[0], {h0, 1, h0}, 1e-7);
  expect_values(run_op({"BlackmanWindow", {three}, {{"periodic", int64_t{0}}}}, 17)[0], {0, 1, 0}, 1e-7);
  Tensor d = run_op({"HannWindow", {four}, {{"output_datatype", int64_t{11}}}}, 17)[0];
  EXPECT_EQ(d.dtype(), DType::f64);
}

TEST(OpsMisc, Compress) {
  Tensor x = tensor_of({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor a0 = run_op({"Compress", {x, ints_of({3}, {0, 1, 1}, DType::boolean)}, {{"axis", int64_t{0}}}}, 11)[0];
  EXPECT_EQ(a0.shape(), (Shape{2, 2}));
  expect_values(a0, {3, 4, 5, 6});
  Tensor a1 = run_op({"Compress", {x, ints_of({2}, {0, 1}, DType::boolean)}, {{"axis", int64_t{1}}}}, 11)[0];
  EXPECT_EQ(a1.shape(), (Shape{3, 1}));
  expect_values(a1, {2, 4, 6});
  Tensor flat = run_op({"Compress", {x, ints_of({4}, {1, 0, 0, 1}, DType::boolean)}}, 11)[0];  // shorter than 6
  EXPECT_EQ(flat.shape(), (Shape{2}));
  expect_values(flat, {1, 4});
}

TEST(OpsMisc, NonZero) {
  // Coordinates in row-major order, one row per dim; NaN and -0.0: NaN counts, -0.0 does not.
  Tensor x = tensor_of({2, 3}, {0, 1.5, 0, std::nan(""), -0.0, -2});
  Tensor y = run_op({"NonZero", {x}}, 13)[0];
  ASSERT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(y.dtype(), DType::i64);
  const std::vector<int64_t> want{0, 1, 1, 1, 0, 2};
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(y.get_int(i), want[i]) << i;
  Tensor b = ints_of({3}, {0, 0, 0}, DType::boolean);
  EXPECT_EQ(run_op({"NonZero", {b}}, 13)[0].shape(), (Shape{1, 0}));
}

TEST(OpsMisc, LpNormalization) {
  expect_values(run_op({"LpNormalization", {tensor_of({2, 2}, {1, 3, 3, 4})}, {{"p", int64_t{1}}}}, 1)[0], {0.25, 0.75, 3.0 / 7, 4.0 / 7});
  expect_values(run_op({"LpNormalization", {tensor_of({2, 2}, {3, 1, 4, 1})}, {{"axis", int64_t{0}}}}, 1)[0],
                {0.6, 1 / std::sqrt(2.0), 0.8, 1 / std::sqrt(2.0)});
  EXPECT_THROW(run_op({"LpNormalization", {tensor_of({2}, {1, 2})}, {{"p", int64_t{3}}}}, 1), Error);
}

TEST(OpsMisc, NonMaxSuppression) {
  // Box 1 overlaps box 0 with IoU 0.9 / 1.1 = 0.82; box 2 is far away.
  Tensor boxes = tensor_of({1, 3, 4}, {0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, 10, 1, 11});
  Tensor scores = tensor_of({1, 1, 3}, {0.9, 0.95, 0.5});
  Tensor max_out = ints_of({1}, {3}), iou = tensor_of({1}, {0.5}), sth = tensor_of({1}, {0.0});
  Tensor sel = run_op({"NonMaxSuppression", {boxes, scores, max_out, iou, sth}}, 11)[0];
  EXPECT_EQ(sel.shape(), (Shape{2, 3}));
  EXPECT_EQ(values(sel), (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
  // A higher IoU threshold keeps all three, by score; a score threshold of 0.6 drops box 2.
  EXPECT_EQ(values(run_op({"NonMaxSuppression", {boxes, scores, max_out, tensor_of({1}, {0.9}), sth}}, 11)[0]),
            (std::vector<int64_t>{0, 0, 1, 0, 0, 0, 0, 0, 2}));
  EXPECT_EQ(values(run_op({"NonMaxSuppression", {boxes, scores, max_out, tensor_of({1}, {0.9}), tensor_of({1}, {0.6})}}, 11)[0]),
            (std::vector<int64_t>{0, 0, 1, 0, 0, 0}));
  // No max_output_boxes_per_class: nothing selected.
  EXPECT_EQ(run_op({"NonMaxSuppression", {boxes, scores}}, 11)[0].numel(), 0);
}

TEST(OpsMisc, Unique) {
  Tensor x = tensor_of({6}, {2, 1, 1, 3, 4, 3});
  auto s = run_op({"Unique", {x}, {}, 11, 4}, 11);
  expect_values(s[0], {1, 2, 3, 4});
  EXPECT_EQ(values(s[1]), (std::vector<int64_t>{1, 0, 3, 4}));
  EXPECT_EQ(values(s[2]), (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(values(s[3]), (std::vector<int64_t>{2, 1, 2, 1}));
  auto u = run_op({"Unique", {x}, {{"sorted", int64_t{0}}}, 11, 4}, 11);
  expect_values(u[0], {2, 1, 3, 4});
  EXPECT_EQ(values(u[1]), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(values(u[2]), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(values(u[3]), (std::vector<int64_t>{1, 2, 2, 1}));
  // Rows along axis 0, sorted lexicographically.
  Tensor m = tensor_of({3, 2}, {1, 0, 0, 5, 1, 0});
  auto r = run_op({"Unique", {m}, {{"axis", int64_t{0}}}, 11, 4}, 11);
  EXPECT_EQ(r[0].shape(), (Shape{2, 2}));
  expect_values(r[0], {0, 5, 1, 0});
  EXPECT_EQ(values(r[3]), (std::vector<int64_t>{1, 2}));
  // Values compare in their own type: NaNs are one value after every number (np.unique),
  // -0 == +0, and int64 values past 2^53 stay apart (through double, [2, NaN, 1] was one value).
  Tensor f = tensor_of({7}, {3, -0.0, 0, NAN, NAN, 1, 3});
  auto n = run_op({"Unique", {f}, {}, 11, 4}, 11);
  ASSERT_EQ(n[0].numel(), 4);
  EXPECT_EQ(n[0].get(0), 0.0);
  EXPECT_TRUE(std::signbit(n[0].get(0))) << "the first occurrence (-0) is kept";
  EXPECT_EQ(n[0].get(1), 1.0);
  EXPECT_EQ(n[0].get(2), 3.0);
  EXPECT_TRUE(std::isnan(n[0].get(3)));
  EXPECT_EQ(values(n[3]), (std::vector<int64_t>{2, 1, 2, 2}));
  const int64_t p62 = int64_t{1} << 62, p53 = int64_t{1} << 53;
  auto i = run_op({"Unique", {ints_of({6}, {p62 + 3, p62 + 1, p62 + 3, p62 + 2, p53 + 1, p53})}, {}, 11, 4}, 11);
  EXPECT_EQ(values(i[0]), (std::vector<int64_t>{p53, p53 + 1, p62 + 1, p62 + 2, p62 + 3}));
  EXPECT_EQ(values(i[3]), (std::vector<int64_t>{1, 1, 1, 1, 2}));
}

TEST(OpsMisc, GridSample) {
  Tensor x = tensor_of({1, 1, 2, 2}, {1, 2, 3, 4});
  // (x, y) pairs: corners and the centre; with align_corners the corners hit pixel centres.
  Tensor grid = tensor_of({1, 1, 4, 2}, {-1, -1, 1, -1, 0, 0, 1, 1});
  expect_values(run_op({"GridSample", {x, grid}, {{"align_corners", int64_t{1}}}}, 16)[0], {1, 2, 2.5, 4});
  // Without align_corners the corners are pixel edges: bilinear with zero padding gives 1/4.
  expect_values(run_op({"GridSample", {x, grid}}, 16)[0], {0.25, 0.5, 2.5, 1.0});
  // Border padding clamps, so the edge reads the corner pixel.
  expect_values(run_op({"GridSample", {x, grid}, {{"padding_mode", std::string("border")}}}, 16)[0], {1, 2, 2.5, 4});
  Tensor far = tensor_of({1, 1, 2, 2}, {-3, 0, 0.2, -0.2});
  expect_values(run_op({"GridSample", {x, far}, {{"mode", std::string("nearest")}, {"align_corners", int64_t{1}}}}, 16)[0], {0, 2});
  // An X with an empty spatial dim: zeros padding reads zeros; border / reflection have nothing
  // to clamp to and are refused in one line (they read out of bounds before).
  const Tensor empty(DType::f32, {1, 1, 0, 3});
  expect_values(run_op({"GridSample", {empty, grid}}, 16)[0], {0, 0, 0, 0});
  for (const char* pad : {"border", "reflection"})
    EXPECT_ERROR(run_op({"GridSample", {empty, grid}, {{"padding_mode", std::string(pad)}}}, 16), "spatial dim 2 is empty");
}

TEST(OpsMisc, AffineGrid) {
  Tensor theta = tensor_of({1, 2, 3}, {1, 0, 0, 0, 1, 0});
  Tensor size = ints_of({4}, {1, 1, 2, 3});
  Tensor g1 = run_op({"AffineGrid", {theta, size}, {{"align_corners", int64_t{1}}}}, 20)[0];
  EXPECT_EQ(g1.shape(), (Shape{1, 2, 3, 2}));
  expect_values(g1, {-1, -1, 0, -1, 1, -1, -1, 1, 0, 1, 1, 1});
  Tensor g0 = run_op({"AffineGrid", {theta, size}}, 20)[0];
  const double t = 2.0 / 3.0;
  expect_values(g0, {-t, -0.5, 0, -0.5, t, -0.5, -t, 0.5, 0, 0.5, t, 0.5});
  // A translation moves every point.
  Tensor shift = tensor_of({1, 2, 3}, {1, 0, 0.5, 0, 2, -1});
  expect_values(run_op({"AffineGrid", {shift, size}, {{"align_corners", int64_t{1}}}}, 20)[0],
                {-0.5, -3, 0.5, -3, 1.5, -3, -0.5, 1, 0.5, 1, 1.5, 1});
}

TEST(OpsMisc, CenterCropPad) {
  Tensor x = tensor_of({5}, {1, 2, 3, 4, 5});
  expect_values(run_op({"CenterCropPad", {x, ints_of({1}, {3})}}, 18)[0], {2, 3, 4});
  expect_values(run_op({"CenterCropPad", {x, ints_of({1}, {8})}}, 18)[0], {0, 1, 2, 3, 4, 5, 0, 0});
  Tensor m = tensor_of({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor y = run_op({"CenterCropPad", {m, ints_of({1}, {1})}, {{"axes", std::vector<int64_t>{-1}}}}, 18)[0];
  EXPECT_EQ(y.shape(), (Shape{2, 1}));
  expect_values(y, {2, 5});
}

TEST(OpsMisc, Col2Im) {
  // One 2x2 block is the image itself.
  Tensor one = tensor_of({1, 4, 1}, {1, 2, 3, 4});
  expect_values(run_op({"Col2Im", {one, ints_of({2}, {2, 2}), ints_of({2}, {2, 2})}}, 18)[0], {1, 2, 3, 4});
  // Four overlapping 2x2 blocks over a 3x3 image: each pixel sums the blocks covering it.
  Tensor ones = tensor_of({1, 4, 4}, std::vector<double>(16, 1.0));
  expect_values(run_op({"Col2Im", {ones, ints_of({2}, {3, 3}), ints_of({2}, {2, 2})}}, 18)[0], {1, 2, 1, 2, 4, 2, 1, 2, 1});
  EXPECT_THROW(run_op({"Col2Im", {ones, ints_of({2}, {5, 5}), ints_of({2}, {2, 2})}}, 18), Error);
}

TEST(OpsMisc, BitCastAndReverseSequence) {
  Tensor one = run_op({"BitCast", {tensor_of({2}, {1.0, -2.0})}, {{"to", int64_t{6}}}}, 26)[0];
  EXPECT_EQ(one.dtype(), DType::i32);
  EXPECT_EQ(values(one), (std::vector<int64_t>{0x3f800000, static_cast<int32_t>(0xc0000000u)}));
  EXPECT_EQ(values(run_op({"BitCast", {ints_of({2}, {-1, 5}, DType::i8)}, {{"to", int64_t{2}}}}, 26)[0]), (std::vector<int64_t>{255, 5}));
  EXPECT_THROW(run_op({"BitCast", {tensor_of({1}, {1.0})}, {{"to", int64_t{7}}}}, 26), Error);  // 4 -> 8 bytes
  // [time 4, batch 2], x = 10 t + b; batch 0 reverses all 4 steps, batch 1 the first 2.
  Tensor x = tensor_of({4, 2}, {0, 1, 10, 11, 20, 21, 30, 31});
  expect_values(run_op({"ReverseSequence", {x, ints_of({2}, {4, 2})}}, 10)[0], {30, 11, 20, 1, 10, 21, 0, 31});
}

TEST(OpsMisc, Dft) {
  // [1, 2, 3, 4] -> [10, -2 + 2i, -2, -2 - 2i]; onesided keeps k <= 2; the inverses give it back.
  Tensor x = tensor_of({1, 4, 1}, {1, 2, 3, 4});
  const std::vector<double> full = {10, 0, -2, 2, -2, 0, -2, -2};
  expect_values(run_op({"DFT", {x}}, 17)[0], full, 1e-6);
  Tensor half = run_op({"DFT", {x}, {{"onesided", int64_t{1}}}}, 17)[0];
  EXPECT_EQ(half.shape(), (Shape{1, 3, 2}));
  expect_values(half, {10, 0, -2, 2, -2, 0}, 1e-6);
  Tensor spec = tensor_of({1, 4, 2}, full);
  expect_values(run_op({"DFT", {spec}, {{"inverse", int64_t{1}}}}, 17)[0], {1, 0, 2, 0, 3, 0, 4, 0}, 1e-6);
  Tensor back = run_op({"DFT", {half}, {{"inverse", int64_t{1}}, {"onesided", int64_t{1}}}}, 17)[0];
  EXPECT_EQ(back.shape(), (Shape{1, 4, 1}));
  expect_values(back, {1, 2, 3, 4}, 1e-6);
  // dft_length 2 truncates: [1 + 2, 1 - 2]; opset 20 takes the axis as input 2.
  expect_values(run_op({"DFT", {x, ints_of({}, {2}), ints_of({}, {1})}}, 20)[0], {3, 0, -1, 0}, 1e-6);
}

// The FFT (radix 2, and Bluestein for other lengths) against the direct sum in double, forward
// and inverse, for lengths around powers of two and primes; and a length the direct sum took
// over a minute for (65537: Bluestein) finishing at once.
TEST(OpsMisc, DftMatchesTheDirectSumAtEveryLength) {
  for (int64_t L : {1, 2, 3, 5, 7, 8, 12, 16, 17, 31, 64, 100, 127, 1000}) {
    std::vector<double> v(static_cast<size_t>(2 * L));
    for (int64_t t = 0; t < L; ++t) v[2 * t] = std::sin(0.37 * t + 1.0) + 0.1 * t, v[2 * t + 1] = std::cos(1.3 * t) - 0.2;
    Tensor x = tensor_of({1, L, 2}, v);
    for (bool inverse : {false, true}) {
      std::vector<double> want(static_cast<size_t>(2 * L));
      const double sign = inverse ? 1.0 : -1.0;
      for (int64_t k = 0; k < L; ++k) {
        double sr = 0, si = 0;
        for (int64_t t = 0; t < L; ++t) {
          const double a = sign * 2 * M_PI * static_cast<double>((k * t) % L) / static_cast<double>(L);
          sr += v[2 * t] * std::cos(a) - v[2 * t + 1] * std::sin(a);
          si += v[2 * t] * std::sin(a) + v[2 * t + 1] * std::cos(a);
        }
        want[2 * k] = inverse ? sr / L : sr, want[2 * k + 1] = inverse ? si / L : si;
      }
      SCOPED_TRACE("L = " + std::to_string(L) + (inverse ? " inverse" : ""));
      expect_values(run_op({"DFT", {x}, {{"inverse", int64_t{inverse}}}}, 17)[0], want, 1e-4);
    }
  }
  // A real impulse at t = 1 over L = 65537 (a prime): X[k] = e^(-2 pi i k / L).
  const int64_t L = 65537;
  std::vector<double> imp(static_cast<size_t>(L), 0.0);
  imp[1] = 1.0;
  Tensor y = run_op({"DFT", {tensor_of({1, L, 1}, imp)}}, 17)[0];
  for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{1000}, L / 2, L - 1}) {
    const double a = -2 * M_PI * static_cast<double>(k) / static_cast<double>(L);
    EXPECT_NEAR(y.get(2 * k), std::cos(a), 1e-5) << "k = " << k;
    EXPECT_NEAR(y.get(2 * k + 1), std::sin(a), 1e-5) << "k = " << k;
  }
}

TEST(OpsMisc, Det) {
  // det [[1, 2], [3, 4]] = -2; a permutation needing a pivot: det [[0, 1], [1, 0]] = -1; singular: 0.
  Tensor x = tensor_of({3, 2, 2}, {1, 2, 3, 4, 0, 1, 1, 0, 1, 2, 2, 4});
  Tensor d = run_op({"Det", {x}}, 11)[0];
  EXPECT_EQ(d.shape(), (Shape{3}));
  expect_values(d, {-2, -1, 0});
  expect_values(run_op({"Det", {tensor_of({3, 3}, {2, 0, 0, 0, 3, 0, 1, 1, 4})}}, 11)[0], {24});
}

TEST(OpsMisc, GroupNormalization) {
  // N=1, C=4, 2 groups of 2 channels x 1 pixel: group {1, 3} -> mean 2, var 1 -> -1, 1.
  Tensor x = tensor_of({1, 4, 1}, {1, 3, 10, 14});
  Tensor scale = tensor_of({4}, {1, 2, 3, 4}), bias = tensor_of({4}, {0, 0, 1, 1});
  const double e = 1e-5, a = 1 / std::sqrt(1 + e), b = 2 / std::sqrt(4 + e);
  expect_values(run_op({"GroupNormalization", {x, scale, bias}, {{"num_groups", int64_t{2}}}}, 21)[0], {-a, 2 * a, -3 * b + 1, 4 * b + 1});
  EXPECT_THROW(run_op({"GroupNormalization", {x, scale, bias}, {{"num_groups", int64_t{3}}}}, 21), Error);
}

TEST(OpsMisc, SwishAndShrink) {
  expect_values(run_op({"Swish", {tensor_of({2}, {1.0, -2.0})}}, 24)[0], {1 / (1 + std::exp(-1.0)), -2 / (1 + std::exp(2.0))});
  expect_values(run_op({"Swish", {tensor_of({1}, {1.0})}, {{"alpha", 2.0}}}, 24)[0], {1 / (1 + std::exp(-2.0))});
  expect_values(run_op({"Shrink", {tensor_of({5}, {-2, -1, 0, 1, 2})}, {{"lambd", 1.5}, {"bias", 1.5}}}, 9)[0], {-0.5, 0, 0, 0, 0.5});
  expect_values(run_op({"Shrink", {tensor_of({3}, {-1, 0.2, 0.6})}}, 9)[0], {-1, 0, 0.6});  // hard: lambd 0.5, bias 0
}

// TfIdfVectorizer: pool 1-grams {2, 5} (columns 0, 1) and 2-grams {(2, 5), (5, 2)} (columns 2, 3)
// over rows [2, 5, 2, 7, 5] and [5, 5, 2, 2, 7]. Adjacent (d = 1): row 0 has (2, 5) and (5, 2)
// once each, row 1 (5, 2) once. One item apart (d = 2, max_skip_count 1): row 0 adds (2, 5) at
// positions 2, 4; row 1 adds (5, 2) at 0, 2 and at 1, 3. Unigrams count once whatever the skip.
TEST(OpsMisc, TfIdfVectorizer) {
  const Tensor x = ints_of({2, 5}, {2, 5, 2, 7, 5, 5, 5, 2, 2, 7});
  const auto call = [&](const std::string& mode, int64_t skip, std::vector<double> weights) {
    testing::OpCall c{"TfIdfVectorizer", {x}};
    c.attrs = {{"mode", mode}, {"min_gram_length", int64_t{1}}, {"max_gram_length", int64_t{2}}, {"max_skip_count", skip},
               {"ngram_counts", std::vector<int64_t>{0, 2}}, {"ngram_indexes", std::vector<int64_t>{0, 1, 2, 3}},
               {"pool_int64s", std::vector<int64_t>{2, 5, 2, 5, 5, 2}}};
    if (!weights.empty()) c.attrs["weights"] = weights;
    return run_op(c, 9)[0];
  };
  // Unigrams once each: row 0 has two 2s and two 5s, row 1 two 2s and two 5s.
  expect_values(call("TF", 0, {}), {2, 2, 1, 1, 2, 2, 0, 1});
  expect_values(call("TF", 1, {}), {2, 2, 2, 1, 2, 2, 0, 3});
  expect_values(call("IDF", 1, {0.5, 2, 3, 4}), {0.5, 2, 3, 4, 0.5, 2, 0, 4});
  expect_values(call("TFIDF", 1, {0.5, 2, 3, 4}), {1, 4, 6, 4, 1, 4, 0, 12});
  // A skip count far past the row ends in time (distances are bounded by the row).
  expect_values(call("TF", int64_t{1} << 40, {}), {2, 2, 3, 1, 2, 2, 0, 4});  // d = 4: (2, 5); d = 3: (5, 2)
  // A long row with a huge skip count is refused, not walked for hours.
  const Tensor big = Tensor(DType::i64, {1, 1 << 20});
  testing::OpCall huge{"TfIdfVectorizer", {big}};
  huge.attrs = {{"mode", std::string("TF")}, {"ngram_counts", std::vector<int64_t>{0, 2}}, {"ngram_indexes", std::vector<int64_t>{0, 1, 2}},
                {"pool_int64s", std::vector<int64_t>{2, 5, 2, 5}}, {"min_gram_length", int64_t{1}}, {"max_gram_length", int64_t{2}},
                {"max_skip_count", int64_t{1} << 30}};
  EXPECT_NE(testing::error_of([&] { run_op(huge, 9); }).find("n-gram lookups, more than the 2^34"), std::string::npos);
  // Bad attributes are one-line errors naming the node.
  testing::OpCall bad{"TfIdfVectorizer", {x}};
  bad.attrs = {{"mode", std::string("TF")}, {"ngram_counts", std::vector<int64_t>{0}}, {"ngram_indexes", std::vector<int64_t>{0}},
               {"pool_int64s", std::vector<int64_t>{2, 5}}, {"min_gram_length", int64_t{2}}, {"max_gram_length", int64_t{1}}};
  const std::string e = testing::error_of([&] { run_op(bad, 9); });
  EXPECT_NE(e.find("TfIdfVectorizer_0"), std::string::npos) << e;
  EXPECT_NE(e.find("min_gram_length <= max_gram_length"), std::string::npos) << e;
  // The output has max(ngram_indexes) + 1 columns over every entry, not only the pool's n-grams
  // (onnxruntime): an extra entry 6 widens it to 7, columns 4..6 zero.
  const auto extra = [&](std::vector<int64_t> cols) {
    testing::OpCall c{"TfIdfVectorizer", {x}};
    c.attrs = {{"mode", std::string("TF")}, {"min_gram_length", int64_t{1}}, {"max_gram_length", int64_t{2}}, {"ngram_counts", std::vector<int64_t>{0, 2}},
               {"ngram_indexes", cols}, {"pool_int64s", std::vector<int64_t>{2, 5, 2, 5, 5, 2}}};
    return c;
  };
  expect_values(run_op(extra({0, 1, 2, 3, 6}), 9)[0], {2, 2, 1, 1, 0, 0, 0, 2, 2, 0, 1, 0, 0, 0});
  EXPECT_ERROR(run_op(extra({0, 1, 2, 3, -2}), 9), "ngram_indexes entry -2 is out of range");
  // A column index of 2^40 asks for terabytes: refused before anything is allocated.
  EXPECT_ERROR(run_op(extra({0, 1, 2, int64_t{1} << 40}), 9), "needs");
  // A column never counted is 0 whatever its weight (NaN x 0 is 0 in onnxruntime's output).
  const Tensor y = call("TFIDF", 1, {0.5, 2, std::nan(""), 4});
  EXPECT_TRUE(std::isnan(y.get(2)));  // row 0 counts (2, 5) twice
  EXPECT_EQ(y.get(6), 0.0);           // row 1 never does
}

}  // namespace
}  // namespace fusor
