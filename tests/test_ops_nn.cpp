// Hand-computed checks of the NN and shape ops' shape rules and CPU references
// (ir/ops/nn.cpp, ir/ops/shape.cpp). Each case runs one node: infer, then reference; outputs
// are poisoned first so an element the reference forgets fails.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>

#include "frontend/builder.h"
#include "ir/op_table.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

Tensor nn_iota(Shape s, DType t = DType::f32) {
  Tensor x(t, std::move(s));
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, static_cast<double>(i));
  return x;
}

using NnCall = testing::OpCall;
std::vector<Tensor> run_nn_op(const NnCall& c) { return testing::run_op(c, 17); }
Tensor run_nn_op1(const NnCall& c) { return run_nn_op(c)[0]; }
void expect_nn_values(const Tensor& t, const std::vector<double>& want, double tol = 1e-6) {
  testing::expect_values(t, want, tol);
}

using Ints = std::vector<int64_t>;

// ---- Gemm / MatMul ---------------------------------------------------------------------------

TEST(OpsNn, GemmTransposesScalesAndBroadcastsC) {
  // A stored (K, M), B stored (N, K): A' = [[1,3,5],[2,4,6]], B' = [[1,0],[0,1],[1,2]].
  // A'B' = [[6,13],[8,16]]; alpha 2, beta 0.5 with C = [1, -1] broadcast over rows.
  Tensor y = run_nn_op1(
      {"Gemm",
       {testing::tensor_of({3, 2}, {1, 2, 3, 4, 5, 6}), testing::tensor_of({2, 3}, {1, 0, 1, 0, 1, 2}), testing::tensor_of({2}, {1, -1})},
       {{"transA", int64_t{1}}, {"transB", int64_t{1}}, {"alpha", 2.0}, {"beta", 0.5}}});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  expect_nn_values(y, {12.5, 25.5, 16.5, 31.5});
}

TEST(OpsNn, GemmColumnBiasAndNoBias) {
  Tensor a = testing::tensor_of({2, 3}, {1, 2, 3, 4, 5, 6}), b = testing::tensor_of({3, 2}, {1, 2, 3, 4, 5, 6});
  expect_nn_values(run_nn_op1({"Gemm", {a, b, testing::tensor_of({2, 1}, {1, 2})}}), {23, 29, 51, 66});
  expect_nn_values(run_nn_op1({"Gemm", {a, b}}), {22, 28, 49, 64});
  EXPECT_THROW(run_nn_op1({"Gemm", {a, a}}), Error);  // inner dims 3 vs 2
}

TEST(OpsNn, MatMulBatchBroadcast) {
  // A: (2,1,2,2) = {I, 2I}; B: (3,2,2) with B_k = [[k,1],[0,k]]; Y[i][k] = (i+1) * B_k.
  Tensor a = testing::tensor_of({2, 1, 2, 2}, {1, 0, 0, 1, 2, 0, 0, 2});
  Tensor b = testing::tensor_of({3, 2, 2}, {0, 1, 0, 0, 1, 1, 0, 1, 2, 1, 0, 2});
  Tensor y = run_nn_op1({"MatMul", {a, b}});
  ASSERT_EQ(y.shape(), (Shape{2, 3, 2, 2}));
  std::vector<double> want;
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 3; ++k)
      for (double v : {double(k), 1.0, 0.0, double(k)}) want.push_back((i + 1) * v);
  expect_nn_values(y, want);
}

TEST(OpsNn, MatMulOneDimensionalOperands) {
  Tensor dot = run_nn_op1({"MatMul", {testing::tensor_of({3}, {1, 2, 3}), testing::tensor_of({3}, {4, 5, 6})}});
  EXPECT_EQ(dot.shape(), Shape{});
  expect_nn_values(dot, {32});
  // (3) @ (2,3,2): the vector is a row, dropped from the result -> (2,2).
  Tensor vb =
      run_nn_op1({"MatMul", {testing::tensor_of({3}, {1, 2, 3}), testing::tensor_of({2, 3, 2}, {1, 2, 3, 4, 5, 6, 1, 0, 0, 1, 1, 1})}});
  EXPECT_EQ(vb.shape(), (Shape{2, 2}));
  expect_nn_values(vb, {22, 28, 4, 5});
  Tensor mv = run_nn_op1({"MatMul", {testing::tensor_of({2, 3}, {1, 2, 3, 4, 5, 6}), testing::tensor_of({3}, {1, 0, -1})}});
  EXPECT_EQ(mv.shape(), Shape{2});
  expect_nn_values(mv, {-2, -2});
}

// ---- Conv ------------------------------------------------------------------------------------

TEST(OpsNn, ConvPadsAndStrides) {
  // 4x4 ramp, 3x3 ones, pad 1, stride 2: window sums at (0,0),(0,2),(2,0),(2,2) centres.
  Tensor y = run_nn_op1({"Conv",
                         {nn_iota({1, 1, 4, 4}), testing::tensor_of({1, 1, 3, 3}, std::vector<double>(9, 1.0))},
                         {{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}}});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  expect_nn_values(y, {10, 24, 51, 90});
}

TEST(OpsNn, ConvDilations) {
  // 2x2 ones dilated by 2: x[i,j] + x[i,j+2] + x[i+2,j] + x[i+2,j+2].
  Tensor y =
      run_nn_op1({"Conv", {nn_iota({1, 1, 4, 4}), testing::tensor_of({1, 1, 2, 2}, {1, 1, 1, 1})}, {{"dilations", Ints{2, 2}}}});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  expect_nn_values(y, {20, 24, 36, 40});
}

TEST(OpsNn, ConvDepthwiseWithBias) {
  // group = channels: ch0 kernel [[1,0],[0,-1]] on 1..9 gives x[i,j] - x[i+1,j+1] = -4, bias 0.5;
  // ch1 kernel of ones on all-ones gives 4, bias -1.
  std::vector<double> x{1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  Tensor y = run_nn_op1(
      {"Conv",
       {testing::tensor_of({1, 2, 3, 3}, x), testing::tensor_of({2, 1, 2, 2}, {1, 0, 0, -1, 1, 1, 1, 1}), testing::tensor_of({2}, {0.5, -1})},
       {{"group", int64_t{2}}}});
  EXPECT_EQ(y.shape(), (Shape{1, 2, 2, 2}));
  expect_nn_values(y, {-3.5, -3.5, -3.5, -3.5, 3, 3, 3, 3});
}

TEST(OpsNn, Conv1dAndAutoPadSame) {
  Tensor y = run_nn_op1(
      {"Conv", {testing::tensor_of({1, 1, 5}, {1, 2, 3, 4, 5}), testing::tensor_of({1, 1, 3}, {1, 1, 1})}, {{"pads", Ints{1, 1}}}});
  expect_nn_values(y, {3, 6, 9, 12, 9});
  // SAME_UPPER, stride 2 on 5: out 3, total pad 2 -> 1 each side; same sums as explicit pads.
  Tensor s = run_nn_op1({"Conv",
                         {nn_iota({1, 1, 5, 5}), testing::tensor_of({1, 1, 3, 3}, std::vector<double>(9, 1.0))},
                         {{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2, 2}}}});
  Tensor e = run_nn_op1({"Conv",
                         {nn_iota({1, 1, 5, 5}), testing::tensor_of({1, 1, 3, 3}, std::vector<double>(9, 1.0))},
                         {{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}}});
  EXPECT_EQ(s.shape(), (Shape{1, 1, 3, 3}));
  expect_nn_values(s, std::vector<double>(e.data<float>(), e.data<float>() + 9));
  expect_nn_values(s, {12, 27, 24, 63, 108, 81, 72, 117, 84});
}

// The fast reference against the textbook formula on random data: groups, asymmetric pads,
// strides, dilations, batch > 1.
TEST(OpsNn, ConvMatchesNaiveLoop) {
  const int64_t N = 2, C = 4, H = 7, W = 6, M = 6, G = 2, KH = 3, KW = 2;
  const Ints pads{1, 0, 2, 1}, strides{2, 1}, dil{1, 2};
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  Tensor x(DType::f32, {N, C, H, W}), w(DType::f32, {M, C / G, KH, KW}), b(DType::f32, {M});
  for (Tensor* t : {&x, &w, &b})
    for (int64_t i = 0; i < t->numel(); ++i) t->set(i, u(rng));
  Tensor y = run_nn_op1({"Conv", {x, w, b}, {{"group", G}, {"pads", pads}, {"strides", strides}, {"dilations", dil}}});
  const int64_t OH = (H + pads[0] + pads[2] - ((KH - 1) * dil[0] + 1)) / strides[0] + 1;
  const int64_t OW = (W + pads[1] + pads[3] - ((KW - 1) * dil[1] + 1)) / strides[1] + 1;
  ASSERT_EQ(y.shape(), (Shape{N, M, OH, OW}));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double s = b.get(m);
          const int64_t g = m / (M / G);
          for (int64_t c = 0; c < C / G; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                int64_t ih = oh * strides[0] - pads[0] + kh * dil[0], iw = ow * strides[1] - pads[1] + kw * dil[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                s += x.get(((n * C + g * (C / G) + c) * H + ih) * W + iw) *
                     w.get(((m * (C / G) + c) * KH + kh) * KW + kw);
              }
          EXPECT_NEAR(y.get(((n * M + m) * OH + oh) * OW + ow), s, 1e-5);
        }
}

TEST(OpsNn, ConvTransposeStrides) {
  Tensor x = testing::tensor_of({1, 1, 2}, {1, 2}), w = testing::tensor_of({1, 1, 2}, {1, 1});
  expect_nn_values(run_nn_op1({"ConvTranspose", {x, w}}), {1, 3, 2});
  Tensor y = run_nn_op1({"ConvTranspose", {x, w}, {{"strides", Ints{2}}}});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 4}));
  expect_nn_values(y, {1, 1, 2, 2});
}

// ---- pooling and normalization ---------------------------------------------------------------

TEST(OpsNn, MaxPoolCeilMode) {
  Tensor x = nn_iota({1, 1, 4, 4});
  NnCall c{"MaxPool", {x}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}}};
  expect_nn_values(run_nn_op1(c), {10});
  c.attrs["ceil_mode"] = int64_t{1};  // the partial windows on the right/bottom are kept
  Tensor y = run_nn_op1(c);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  expect_nn_values(y, {10, 11, 14, 15});
  // ceil_mode must not create a window that starts in the end padding: 3x3, k2 s2 pad 1 -> 2x2.
  Tensor z = run_nn_op1(
      {"MaxPool",
       {nn_iota({1, 1, 3, 3})},
       {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"ceil_mode", int64_t{1}}}});
  EXPECT_EQ(z.shape(), (Shape{1, 1, 2, 2}));
  expect_nn_values(z, {0, 2, 6, 8});
}

// A window longer than the padded input: ceil_mode still gives one output while the span is
// above -stride (the spec's ceil((in + pads - k) / s) + 1; HF EfficientNet's pooler is
// AvgPool2d(1280, ceil_mode=True) on a 7x7 map), the mean / max of the clipped window as torch
// and onnxruntime; floor mode has none (refused, as torch refuses it). Every backend.
TEST(OpsNn, CeilModeWindowLongerThanTheInput) {
  const Tensor x = testing::tensor_of({1, 2, 2, 2}, {1, 2, 3, 4, -5, 6, -7, 8});
  for (const char* op : {"AveragePool", "MaxPool"})
    for (int64_t cip : {0, 1}) {
      SCOPED_TRACE(std::string(op) + " count_include_pad " + std::to_string(cip));
      GraphBuilder b("pool", 17);
      const int in = b.input("x", DType::f32, {1, 2, 2, 2});
      std::map<std::string, AttrValue> attrs{{"kernel_shape", Ints{4, 4}}, {"strides", Ints{4, 4}}, {"ceil_mode", int64_t{1}}};
      if (std::string(op) == "AveragePool") attrs["count_include_pad"] = cip;
      b.output(b.op(op, {in}, attrs));
      const Graph g = b.build();
      for (const std::string& be : testing::usable_backends()) {
        const std::vector<Tensor> got = Session(g, be).run({x});
        ASSERT_EQ(got[0].shape(), (Shape{1, 2, 1, 1})) << be;
        expect_nn_values(got[0], std::string(op) == "MaxPool" ? std::vector<double>{4, 8} : std::vector<double>{2.5, 0.5});
      }
      attrs["ceil_mode"] = int64_t{0};
      GraphBuilder f("pool_floor", 17);
      const int fin = f.input("x", DType::f32, {1, 2, 2, 2});
      f.output(f.op(op, {fin}, attrs));
      EXPECT_ERROR(Session(f.build(), "ref").run({x}), "larger than padded input");
    }
  // k3 s2 on 2x2 with ceil: span -1 > -2, one window over the whole map.
  expect_nn_values(run_nn_op1({"MaxPool", {x}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}}}), {4, 8});
}

TEST(OpsNn, MaxPoolPadsAndIndices) {
  // The ramp's values equal their flat indices, so Indices must equal Y.
  auto outs = run_nn_op({"MaxPool",
                         {nn_iota({1, 1, 4, 4})},
                         {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}},
                         17,
                         2});
  EXPECT_EQ(outs[0].shape(), (Shape{1, 1, 3, 3}));
  expect_nn_values(outs[0], {0, 2, 3, 8, 10, 11, 12, 14, 15});
  EXPECT_EQ(outs[1].dtype(), DType::i64);
  for (int64_t i = 0; i < 9; ++i) EXPECT_EQ(outs[1].get_int(i), static_cast<int64_t>(outs[0].get(i)));
}

TEST(OpsNn, AveragePoolCountIncludePad) {
  Tensor x = testing::tensor_of({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  NnCall c{"AveragePool", {x}, {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}}};
  expect_nn_values(run_nn_op1(c), {3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7});
  c.attrs["count_include_pad"] = int64_t{1};
  expect_nn_values(run_nn_op1(c), {12. / 9, 21. / 9, 16. / 9, 27. / 9, 5, 33. / 9, 24. / 9, 39. / 9, 28. / 9});
}

TEST(OpsNn, GlobalPools) {
  Tensor x = testing::tensor_of({1, 2, 2, 1}, {1, 3, -2, -6});
  Tensor a = run_nn_op1({"GlobalAveragePool", {x}});
  EXPECT_EQ(a.shape(), (Shape{1, 2, 1, 1}));
  expect_nn_values(a, {2, -4});
  expect_nn_values(run_nn_op1({"GlobalMaxPool", {x}}), {3, -2});
}

TEST(OpsNn, BatchAndInstanceNormalization) {
  // ch0: (x - 1) / 2; ch1: (x - 3) * 2 + 1.
  Tensor y = run_nn_op1({"BatchNormalization",
                         {testing::tensor_of({1, 2, 1, 2}, {1, 2, 3, 4}), testing::tensor_of({2}, {1, 2}), testing::tensor_of({2}, {0, 1}),
                          testing::tensor_of({2}, {1, 3}), testing::tensor_of({2}, {4, 1})},
                         {{"epsilon", 0.0}}});
  expect_nn_values(y, {0, 0.5, 1, 3});
  Tensor z = run_nn_op1({"InstanceNormalization",
                         {testing::tensor_of({1, 1, 2}, {1, 3}), testing::tensor_of({1}, {2}), testing::tensor_of({1}, {1})},
                         {{"epsilon", 0.0}}});
  expect_nn_values(z, {-1, 3});
}

TEST(OpsNn, DropoutInferenceIsIdentityWithTrueMask) {
  auto outs = run_nn_op({"Dropout", {testing::tensor_of({3}, {1, -2, 3})}, {}, 13, 2});
  expect_nn_values(outs[0], {1, -2, 3});
  EXPECT_EQ(outs[1].dtype(), DType::boolean);
  expect_nn_values(outs[1], {1, 1, 1});
}

TEST(OpsNn, EinsumMatmulAndTrace) {
  Tensor a = testing::tensor_of({2, 2}, {1, 2, 3, 4}), b = testing::tensor_of({2, 2}, {5, 6, 7, 8});
  expect_nn_values(run_nn_op1({"Einsum", {a, b}, {{"equation", std::string("ij,jk->ik")}}}), {19, 22, 43, 50});
  Tensor t = run_nn_op1({"Einsum", {a}, {{"equation", std::string("ii")}}});
  EXPECT_EQ(t.shape(), Shape{});
  expect_nn_values(t, {5});
}

// ---- shape ops -------------------------------------------------------------------------------

TEST(OpsShape, ViewOpsAreFlagged) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Expand", "Slice"})
    EXPECT_TRUE(lookup_op(op)->is_view) << op;
  for (const char* op : {"Concat", "Gather", "Pad", "Tile"}) EXPECT_FALSE(lookup_op(op)->is_view) << op;
}

TEST(OpsShape, ReshapeZeroAndMinusOne) {
  // int64 values above 2^53 must survive (raw copies, not doubles).
  const int64_t big = (int64_t{1} << 60) + 1;
  std::vector<int64_t> v(24);
  for (int64_t i = 0; i < 24; ++i) v[i] = big + i;
  Tensor x = testing::ints_of({2, 3, 4}, v);
  Tensor y = run_nn_op1({"Reshape", {x, testing::ints_of({2}, {0, -1})}});
  EXPECT_EQ(y.shape(), (Shape{2, 12}));
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(y.get_int(i), big + i);
  EXPECT_EQ(run_nn_op1({"Reshape", {x, testing::ints_of({3}, {-1, 0, 2})}}).shape(), (Shape{4, 3, 2}));
  Tensor empty(DType::f32, {0, 3});
  EXPECT_EQ(run_nn_op1({"Reshape", {empty, testing::ints_of({2}, {3, 0})}, {{"allowzero", int64_t{1}}}}).shape(), (Shape{3, 0}));
  EXPECT_THROW(run_nn_op1({"Reshape", {x, testing::ints_of({2}, {-1, -1})}}), Error);
  EXPECT_THROW(run_nn_op1({"Reshape", {x, testing::ints_of({2}, {5, -1})}}), Error);
}

TEST(OpsShape, FlattenSqueezeUnsqueeze) {
  Tensor x = nn_iota({2, 1, 3});
  EXPECT_EQ(run_nn_op1({"Flatten", {x}, {{"axis", int64_t{0}}}}).shape(), (Shape{1, 6}));
  EXPECT_EQ(run_nn_op1({"Flatten", {x}, {{"axis", int64_t{-1}}}}).shape(), (Shape{2, 3}));
  EXPECT_EQ(run_nn_op1({"Squeeze", {x}}).shape(), (Shape{2, 3}));
  EXPECT_EQ(run_nn_op1({"Squeeze", {x, testing::ints_of({1}, {-2})}}).shape(), (Shape{2, 3}));
  EXPECT_EQ(run_nn_op1({"Squeeze", {x}, {{"axes", Ints{1}}}, 11}).shape(), (Shape{2, 3}));
  EXPECT_THROW(run_nn_op1({"Squeeze", {x, testing::ints_of({1}, {0})}}), Error);
  EXPECT_EQ(run_nn_op1({"Unsqueeze", {x, testing::ints_of({2}, {0, -1})}}).shape(), (Shape{1, 2, 1, 3, 1}));
  EXPECT_EQ(run_nn_op1({"Unsqueeze", {x}, {{"axes", Ints{1}}}, 11}).shape(), (Shape{2, 1, 1, 3}));
}

TEST(OpsShape, Transpose) {
  Tensor y = run_nn_op1({"Transpose", {testing::tensor_of({2, 3}, {1, 2, 3, 4, 5, 6})}});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  expect_nn_values(y, {1, 4, 2, 5, 3, 6});
  Tensor z = run_nn_op1({"Transpose", {nn_iota({2, 3, 4})}, {{"perm", Ints{1, 2, 0}}}});
  ASSERT_EQ(z.shape(), (Shape{3, 4, 2}));
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t k = 0; k < 2; ++k) EXPECT_EQ(z.get((i * 4 + j) * 2 + k), (k * 3 + i) * 4 + j);
}

TEST(OpsShape, SliceNegativeStepsAndClamping) {
  Tensor x = nn_iota({10});
  const int64_t lo = std::numeric_limits<int64_t>::min();
  expect_nn_values(run_nn_op1({"Slice", {x, testing::ints_of({1}, {-1}), testing::ints_of({1}, {lo}), std::nullopt, testing::ints_of({1}, {-3})}}),
                   {9, 6, 3, 0});
  expect_nn_values(
      run_nn_op1({"Slice", {x, testing::ints_of({1}, {20}), testing::ints_of({1}, {-20}), testing::ints_of({1}, {0}), testing::ints_of({1}, {-1})}}),
      {9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
  // 2-D: rows 2,1 and columns 3,1 of a 3x4 ramp.
  Tensor y = run_nn_op1(
      {"Slice",
       {nn_iota({3, 4}), testing::ints_of({2}, {2, 3}), testing::ints_of({2}, {0, -5}), testing::ints_of({2}, {0, 1}), testing::ints_of({2}, {-1, -2})}});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  expect_nn_values(y, {11, 9, 7, 5});
  // Opset 1 form (attributes), end clamped to the dim, empty result when start >= end.
  expect_nn_values(run_nn_op1({"Slice", {x}, {{"starts", Ints{7}}, {"ends", Ints{100}}}, 9}), {7, 8, 9});
  EXPECT_EQ(run_nn_op1({"Slice", {x, testing::ints_of({1}, {5}), testing::ints_of({1}, {2})}}).shape(), Shape{0});
}

TEST(OpsShape, SplitUneven) {
  Tensor x = testing::tensor_of({5}, {1, 2, 3, 4, 5});
  auto a = run_nn_op({"Split", {x}, {{"num_outputs", int64_t{2}}}, 18, 2});
  expect_nn_values(a[0], {1, 2, 3});
  expect_nn_values(a[1], {4, 5});
  auto b = run_nn_op({"Split", {x, testing::ints_of({2}, {2, 3})}, {}, 13, 2});
  expect_nn_values(b[0], {1, 2});
  expect_nn_values(b[1], {3, 4, 5});
  auto c = run_nn_op({"Split", {x}, {{"split", Ints{1, 4}}}, 11, 2});
  expect_nn_values(c[0], {1});
  expect_nn_values(c[1], {2, 3, 4, 5});
  auto d = run_nn_op({"Split", {nn_iota({2, 4})}, {{"axis", int64_t{1}}}, 13, 2});
  expect_nn_values(d[0], {0, 1, 4, 5});
  expect_nn_values(d[1], {2, 3, 6, 7});
  EXPECT_THROW(run_nn_op({"Split", {x, testing::ints_of({2}, {2, 2})}, {}, 13, 2}), Error);
}

TEST(OpsShape, GatherNegativeIndices) {
  Tensor x = testing::tensor_of({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor y = run_nn_op1({"Gather", {x, testing::ints_of({2}, {-1, 0})}});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  expect_nn_values(y, {5, 6, 1, 2});
  Tensor z = run_nn_op1({"Gather", {x, testing::ints_of({1}, {-1}, DType::i32)}, {{"axis", int64_t{1}}}});
  EXPECT_EQ(z.shape(), (Shape{3, 1}));
  expect_nn_values(z, {2, 4, 6});
  Tensor s = run_nn_op1({"Gather", {x, testing::ints_of({}, {1})}});
  EXPECT_EQ(s.shape(), Shape{2});
  expect_nn_values(s, {3, 4});
  EXPECT_THROW(run_nn_op1({"Gather", {x, testing::ints_of({1}, {3})}}), Error);
}

TEST(OpsShape, GatherAndScatterElements) {
  Tensor x = testing::tensor_of({2, 2}, {1, 2, 3, 4});
  expect_nn_values(run_nn_op1({"GatherElements", {x, testing::ints_of({2, 2}, {0, 0, 1, 0})}, {{"axis", int64_t{1}}}}),
                   {1, 1, 4, 3});
  Tensor y = run_nn_op1({"ScatterElements",
                         {x, testing::ints_of({1, 2}, {1, -1}), testing::tensor_of({1, 2}, {10, 20})},
                         {{"reduction", std::string("add")}}});
  expect_nn_values(y, {1, 2, 13, 24});
}

TEST(OpsShape, PadModes) {
  Tensor x = testing::tensor_of({4}, {1, 2, 3, 4});
  auto pad = [&](const std::string& mode) {
    return run_nn_op1({"Pad", {x, testing::ints_of({2}, {2, 3}), testing::tensor_of({}, {9})}, {{"mode", mode}}});
  };
  expect_nn_values(pad("constant"), {9, 9, 1, 2, 3, 4, 9, 9, 9});
  expect_nn_values(pad("reflect"), {3, 2, 1, 2, 3, 4, 3, 2, 1});
  expect_nn_values(pad("edge"), {1, 1, 1, 2, 3, 4, 4, 4, 4});
  Tensor e = run_nn_op1(
      {"Pad", {testing::tensor_of({2, 2}, {1, 2, 3, 4}), testing::ints_of({4}, {1, 1, 1, 1})}, {{"mode", std::string("edge")}}});
  EXPECT_EQ(e.shape(), (Shape{4, 4}));
  expect_nn_values(e, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  // Negative pads crop; opset 2 takes pads/value as attributes; opset 18 axes input.
  expect_nn_values(run_nn_op1({"Pad", {x, testing::ints_of({2}, {-1, 1})}}), {2, 3, 4, 0});
  expect_nn_values(run_nn_op1({"Pad", {x}, {{"pads", Ints{1, 0}}, {"value", 7.0}}, 2}), {7, 1, 2, 3, 4});
  Tensor r = run_nn_op1(
      {"Pad", {testing::tensor_of({2, 2}, {1, 2, 3, 4}), testing::ints_of({2}, {1, 0}), std::nullopt, testing::ints_of({1}, {-1})}, {}, 18});
  expect_nn_values(r, {0, 1, 2, 0, 3, 4});
}

TEST(OpsShape, ConcatTileExpand) {
  Tensor a = testing::tensor_of({2, 1}, {1, 2}), b = testing::tensor_of({2, 2}, {3, 4, 5, 6});
  Tensor c = run_nn_op1({"Concat", {a, b}, {{"axis", int64_t{-1}}}});
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  expect_nn_values(c, {1, 3, 4, 2, 5, 6});
  EXPECT_THROW(run_nn_op1({"Concat", {a, b}, {{"axis", int64_t{0}}}}), Error);

  Tensor m = testing::tensor_of({2, 2}, {1, 2, 3, 4});
  expect_nn_values(run_nn_op1({"Tile", {m, testing::ints_of({2}, {2, 1})}}), {1, 2, 3, 4, 1, 2, 3, 4});
  expect_nn_values(run_nn_op1({"Tile", {m, testing::ints_of({2}, {1, 2})}}), {1, 2, 1, 2, 3, 4, 3, 4});

  Tensor e = run_nn_op1({"Expand", {testing::tensor_of({3, 1}, {1, 2, 3}), testing::ints_of({3}, {2, 1, 4})}});
  ASSERT_EQ(e.shape(), (Shape{2, 3, 4}));
  for (int64_t i = 0; i < e.numel(); ++i) EXPECT_EQ(e.get(i), (i / 4) % 3 + 1);
  EXPECT_EQ(run_nn_op1({"Expand", {nn_iota({3, 4}), testing::ints_of({1}, {1})}}).shape(), (Shape{3, 4}));  // bidirectional
}

TEST(OpsShape, RangeAndGenerators) {
  Tensor r = run_nn_op1({"Range", {testing::ints_of({}, {1}), testing::ints_of({}, {10}), testing::ints_of({}, {3})}});
  EXPECT_EQ(r.dtype(), DType::i64);
  expect_nn_values(r, {1, 4, 7});
  expect_nn_values(
      run_nn_op1(
          {"Range", {testing::ints_of({}, {10}, DType::i32), testing::ints_of({}, {4}, DType::i32), testing::ints_of({}, {-2}, DType::i32)}}),
      {10, 8, 6});
  expect_nn_values(run_nn_op1({"Range", {testing::tensor_of({}, {0.5}), testing::tensor_of({}, {2}), testing::tensor_of({}, {0.5})}}),
                   {0.5, 1, 1.5});
  EXPECT_EQ(run_nn_op1({"Range", {testing::ints_of({}, {5}), testing::ints_of({}, {1}), testing::ints_of({}, {1})}}).shape(), Shape{0});

  Tensor c = run_nn_op1({"ConstantOfShape", {testing::ints_of({2}, {2, 3})}});
  EXPECT_EQ(c.dtype(), DType::f32);
  expect_nn_values(c, std::vector<double>(6, 0.0));
  Tensor seven = testing::ints_of({1}, {7});
  Tensor c7 = run_nn_op1({"ConstantOfShape", {testing::ints_of({1}, {3})}, {{"value", seven}}});
  EXPECT_EQ(c7.dtype(), DType::i64);
  expect_nn_values(c7, {7, 7, 7});

  expect_nn_values(run_nn_op1({"EyeLike", {nn_iota({2, 3})}, {{"k", int64_t{1}}}}), {0, 1, 0, 0, 0, 1});
  expect_nn_values(run_nn_op1({"Shape", {nn_iota({2, 3, 4})}, {{"start", int64_t{-2}}}}), {3, 4});
  expect_nn_values(run_nn_op1({"OneHot", {testing::ints_of({2}, {1, -1}), testing::ints_of({}, {3}), testing::tensor_of({2}, {0, 5})}}),
                   {0, 5, 0, 0, 0, 5});
}

TEST(OpsShape, Trilu) {
  Tensor x = testing::tensor_of({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expect_nn_values(run_nn_op1({"Trilu", {x}}), {1, 2, 3, 0, 5, 6, 0, 0, 9});
  expect_nn_values(run_nn_op1({"Trilu", {x, testing::ints_of({}, {1})}}), {0, 2, 3, 0, 0, 6, 0, 0, 0});
  expect_nn_values(run_nn_op1({"Trilu", {x, testing::ints_of({}, {-1})}, {{"upper", int64_t{0}}}}), {0, 0, 0, 4, 0, 0, 7, 8, 0});
}

TEST(OpsShape, DepthToSpaceAndBack) {
  Tensor x = nn_iota({1, 8, 1, 1});
  Tensor dcr = run_nn_op1({"DepthToSpace", {x}, {{"blocksize", int64_t{2}}}});
  EXPECT_EQ(dcr.shape(), (Shape{1, 2, 2, 2}));
  expect_nn_values(dcr, {0, 2, 4, 6, 1, 3, 5, 7});
  expect_nn_values(run_nn_op1({"DepthToSpace", {x}, {{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}}}),
                   {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor back = run_nn_op1({"SpaceToDepth", {dcr}, {{"blocksize", int64_t{2}}}});
  EXPECT_EQ(back.shape(), (Shape{1, 8, 1, 1}));
  expect_nn_values(back, {0, 1, 2, 3, 4, 5, 6, 7});
}

// DeformConv with zero offsets and no mask is a Conv (same strides, pads, dilations, groups);
// an offset of exactly +1 row samples the next row, i.e. the Conv of X shifted up by one.
TEST(OpsNn, DeformConvWithZeroOffsetsIsConv) {
  const Tensor x = testing::random_tensor(DType::f32, {2, 4, 7, 6}, 41);
  const Tensor w = testing::random_tensor(DType::f32, {6, 2, 3, 2}, 42);
  const Tensor b = testing::random_tensor(DType::f32, {6}, 43);
  const std::map<std::string, AttrValue> attrs{{"strides", Ints{2, 1}}, {"pads", Ints{1, 0, 1, 1}},
                                               {"dilations", Ints{1, 2}}, {"group", int64_t{2}}};
  const Tensor conv = testing::run_op({"Conv", {x, w, b}, attrs})[0];
  const Shape& o = conv.shape();
  std::map<std::string, AttrValue> dattrs = attrs;
  dattrs["offset_group"] = int64_t{2};
  const Tensor off(DType::f32, {2, 2 * 3 * 2 * 2, o[2], o[3]});
  Tensor zero_off = off;
  for (int64_t i = 0; i < zero_off.numel(); ++i) zero_off.set(i, 0.0);
  const Tensor deform = testing::run_op({"DeformConv", {x, w, zero_off, b}, dattrs}, 19)[0];
  ASSERT_EQ(deform.shape(), o);
  for (int64_t i = 0; i < o[0] * o[1] * o[2] * o[3]; ++i) EXPECT_NEAR(deform.get(i), conv.get(i), 1e-5) << i;
  // Every h offset +1 and a mask of 0.5, no padding: half the Conv of X shifted up by one row
  // (rows sampled past the bottom are 0).
  std::map<std::string, AttrValue> np = attrs, dnp = dattrs;
  np.erase("pads"), dnp.erase("pads");
  Tensor zb = b;
  for (int64_t i = 0; i < 6; ++i) zb.set(i, 0.0);
  Tensor xs = x;
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 4; ++c)
      for (int64_t h = 0; h < 7; ++h)
        for (int64_t ww = 0; ww < 6; ++ww) xs.set(((n * 4 + c) * 7 + h) * 6 + ww, h + 1 < 7 ? x.get(((n * 4 + c) * 7 + h + 1) * 6 + ww) : 0.0);
  const Tensor shifted = testing::run_op({"Conv", {xs, w, zb}, np})[0];
  const Shape& so = shifted.shape();
  Tensor up(DType::f32, {2, 2 * 3 * 2 * 2, so[2], so[3]}), half(DType::f32, {2, 2 * 3 * 2, so[2], so[3]});
  for (int64_t i = 0; i < up.numel(); ++i) up.set(i, ((i / (so[2] * so[3])) % 2 == 0) ? 1.0 : 0.0);
  for (int64_t i = 0; i < half.numel(); ++i) half.set(i, 0.5);
  const Tensor moved = testing::run_op({"DeformConv", {x, w, up, zb, half}, dnp}, 19)[0];
  ASSERT_EQ(moved.shape(), so);
  for (int64_t i = 0; i < shifted.numel(); ++i) EXPECT_NEAR(moved.get(i), 0.5 * shifted.get(i), 1e-5) << i;
}

// Training-mode BatchNormalization (the batch's statistics; NFNet's weight standardisation) is
// primitives that fuse: no host node on a GPU, and every output (Y, running mean / var, opset 9's
// saved mean / var) within the reduction tolerance of ref's double formula on every backend
// (red-team round 59: 24 host nodes per NFNet call on vulkan).
TEST(OpsNn, TrainingBatchNormRunsAsKernelsOnEveryBackend) {
  for (const int opset : {9, 15}) {
    GraphBuilder b("bn_train", opset);
    const int x = b.input("x", DType::f32, {3, 4, 5, 6});
    const auto channel = [&](const std::string& name, uint64_t seed, double lo, double hi) {
      return b.constant(name, testing::random_tensor(DType::f32, {4}, seed, lo, hi));
    };
    GraphBuilder::Attrs attrs = {{"epsilon", 1e-3}, {"momentum", 0.8}};
    if (opset >= 14) attrs["training_mode"] = int64_t{1};
    const auto outs = b.op_multi("BatchNormalization",
                                 {x, channel("scale", 2, 0.5, 2.0), channel("bias", 3, -1.0, 1.0), channel("mean", 4, -1.0, 1.0),
                                  channel("var", 5, 0.5, 2.0)},
                                 attrs, opset >= 14 ? 3 : 5);
    for (int o : outs) b.output(o);
    const Graph g = b.build();
    const Tensor in = testing::random_tensor(DType::f32, {3, 4, 5, 6}, 6, -2.0, 3.0);
    const std::vector<Tensor> want = Session(g, "ref").run({in});
    for (const std::string& be : testing::usable_backends()) {
      if (be == "ref") continue;
      SCOPED_TRACE(be + " opset " + std::to_string(opset));
      CompileOptions strict;
      strict.fallback = false;  // a host node would be an error here
      const std::vector<Tensor> got = run_on_backend(be, specialize(g, {in}), {in}, strict);
      ASSERT_EQ(got.size(), want.size());
      for (size_t k = 0; k < want.size(); ++k)
        for (int64_t i = 0; i < want[k].numel(); ++i)
          EXPECT_NEAR(got[k].get(i), want[k].get(i), 1e-5 * (1 + std::fabs(want[k].get(i)))) << "output " << k << " [" << i << "]";
    }
  }
}

// Data far from zero against their spread (100 + 0.01 r: the mean over the spread ~1e4): the
// fp32 mean's rounding dominated x - mean, so the fused normalizations were 3.8e-4 off ref's
// double statistics (14x fp32's tolerance) while ref was right; the deviation is now corrected by
// its own mean (ir/decompose_norm.cpp centered; red-team round 61). Every normalization that
// subtracts a mean but LayerNormalization (which keeps its ONNX function body for speed: README
// "Numerics"), on every backend, against ref.
TEST(OpsNn, NormalizationsOfDataFarFromZeroMatchRef) {
  struct Case {
    std::string op;
    int opset;
    Shape shape;
    GraphBuilder::Attrs attrs;
    int params;  // per-channel inputs after x (scale, bias[, mean, var])
  };
  const std::vector<Case> cases = {
      {"InstanceNormalization", 17, {2, 3, 4, 4}, {}, 2},
      {"GroupNormalization", 21, {2, 4, 4, 4}, {{"num_groups", int64_t{2}}}, 2},
      {"BatchNormalization", 15, {2, 3, 4, 4}, {{"training_mode", int64_t{1}}}, 4},
  };
  for (const Case& c : cases) {
    GraphBuilder b("far_" + c.op, c.opset);
    const int x = b.input("x", DType::f32, c.shape);
    const int64_t ch = c.shape[1];
    std::vector<int> ins{x};
    for (int i = 0; i < c.params; ++i)
      ins.push_back(b.constant("p" + std::to_string(i), testing::random_tensor(DType::f32, {ch}, 10 + i, i == 3 ? 0.5 : -1.0, 2.0)));
    b.output(b.op(c.op, ins, c.attrs));
    const Graph g = b.build();
    const Tensor in = testing::random_tensor(DType::f32, c.shape, 7, 99.99, 100.01);
    const Tensor want = Session(g, "ref").run({in})[0];
    for (const std::string& be : testing::usable_backends()) {
      if (be == "ref") continue;
      SCOPED_TRACE(be + " " + c.op);
      CompileOptions strict;
      strict.fallback = false;
      const Tensor got = run_on_backend(be, specialize(g, {in}), {in}, strict)[0];
      int bad = 0;
      for (int64_t i = 0; i < want.numel(); ++i) bad += std::fabs(got.get(i) - want.get(i)) > 2e-6 * (1 + std::fabs(want.get(i)));
      EXPECT_EQ(bad, 0) << "of " << want.numel() << "; first element got " << got.get(0) << ", ref " << want.get(0);
    }
  }
}

}  // namespace
}  // namespace fusor
