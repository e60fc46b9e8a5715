// Convolutions the decomposition rewrites (ir/decompose_conv.cpp). ConvTranspose as a Conv of
// flipped sub-kernels: the fused plans
// (cpu, vulkan, cuda) match the reference's direct scatter on seeded random inputs across
// strides (the stride dividing the kernel: one stacked Conv; not dividing it: a Conv per
// phase), dilations, groups, pads, output_padding, output_shape, auto_pad, bias, fp16, and
// weights as constants or inputs; infinities land where the reference puts them (no zero tap
// multiplies one). A 1-D Conv as a 2-D one, and a 3-D Conv as a 2-D one over its stacked depth
// taps: every attribute form matches the reference, and the plan contracts it (the bias and an
// activation in its epilogue) unless it is depthwise or (3-D) SAME-padded.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "frontend/builder.h"
#include "ir/passes.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

struct ConvCase {
  std::string name;
  Shape x, w;
  GraphBuilder::Attrs attrs;
  bool bias = true;
  DType t = DType::f32;
  bool const_weight = true;
  // Whether the rewrite applies: a ConvTranspose leaves no ConvTranspose kernel, a 1-D / 3-D
  // Conv becomes a conv contraction kernel.
  bool rewritten = true;
};

Graph ct_graph(const ConvCase& c, const Tensor& w, const Tensor& b, bool as_abs_inputs = false) {
  GraphBuilder g("convtranspose", 17);
  const int x = g.input("x", c.t, c.x);
  std::vector<int> ins = {x, c.const_weight && !as_abs_inputs ? g.constant("w", w) : g.input("w", c.t, c.w)};
  if (c.bias) ins.push_back(c.const_weight && !as_abs_inputs ? g.constant("b", b) : g.input("b", c.t, b.shape()));
  g.output(g.op("ConvTranspose", ins, c.attrs));
  return g.build();
}

Tensor abs_of(const Tensor& t) {
  Tensor a(t.dtype(), t.shape());
  for (int64_t i = 0; i < t.numel(); ++i) a.set(i, std::fabs(t.get(i)));
  return a;
}

Plan plan_of(const Graph& g) {
  Graph s = g;
  make_static(s, {});
  return build_plan(s);
}

// Runs g (inputs x, then w and b where they are graph inputs) on every backend against ref:
// each output within 4 ulp of the sum of its terms' magnitudes, which abs_graph (g with |x|,
// |w|, |b| all fed as inputs) computes on ref. Returns the sum of |outputs| seen.
double expect_backends_match_ref(const Graph& g, const Graph& abs_graph, const Tensor& x, const Tensor& w, const Tensor& b,
                                 bool const_weight, bool bias, DType t) {
  std::vector<Tensor> ins = {x};
  if (!const_weight) {
    ins.push_back(w);
    if (bias) ins.push_back(b);
  }
  const Tensor want = Session(g, "ref").run(ins)[0];
  std::vector<Tensor> abs_ins = {abs_of(x), abs_of(w)};
  if (bias) abs_ins.push_back(abs_of(b));
  const Tensor mag = Session(abs_graph, "ref").run(abs_ins)[0];
  const double ulp = t == DType::f16 ? 1.0 / 1024 : 1.2e-7;
  double nonzero = 0;
  for (const std::string& be : testing::usable_backends()) {
    if (be == "ref") continue;
    const Tensor got = Session(g, be).run(ins)[0];
    EXPECT_EQ(got.shape(), want.shape()) << be;
    if (got.shape() != want.shape()) continue;
    for (int64_t i = 0; i < got.numel(); ++i) {
      EXPECT_NEAR(got.get(i), want.get(i), 4 * ulp * mag.get(i) + 1e-30) << be << " element " << i;
      if (std::fabs(got.get(i) - want.get(i)) > 4 * ulp * mag.get(i) + 1e-30) break;  // one report per backend
      nonzero += std::fabs(got.get(i));
    }
  }
  return nonzero;
}

std::vector<ConvCase> cases() {
  using I = std::vector<int64_t>;
  return {
      {"1d k16 s8 (a vocoder's upsampler)", {1, 6, 9}, {6, 5, 16}, {{"strides", I{8}}, {"pads", I{4, 4}}}},
      {"2d k4 s2 p1 (DCGAN, pix2pix)", {2, 5, 6, 7}, {5, 3, 4, 4}, {{"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}}},
      {"2d k2 s2 (U-Net, Mask R-CNN)", {1, 8, 5, 4}, {8, 4, 2, 2}, {{"strides", I{2, 2}}}, false},
      {"2d k3 s2 p1 op1 (per-phase Convs)", {1, 4, 5, 6}, {4, 3, 3, 3},
       {{"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}, {"output_padding", I{1, 1}}}},
      {"2d k3 s1 dilation 2, pads", {1, 3, 7, 6}, {3, 2, 3, 3}, {{"dilations", I{2, 2}}, {"pads", I{1, 3, 0, 2}}}},
      {"2d k5 s1 pads past the span (cropped)", {1, 2, 6, 6}, {2, 3, 5, 5}, {{"pads", I{5, 3, 0, 4}}}},
      {"2d groups 2, k4 s2", {1, 6, 4, 5}, {6, 2, 4, 4}, {{"strides", I{2, 2}}, {"group", int64_t{2}}}},
      {"2d depthwise k4 s2 p1", {1, 4, 5, 5}, {4, 1, 4, 4}, {{"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}, {"group", int64_t{4}}}},
      {"2d mixed strides 3 and 1, k6 x k3", {1, 3, 4, 5}, {3, 2, 6, 3}, {{"strides", I{3, 1}}, {"pads", I{2, 1, 1, 0}}}},
      {"2d output_shape past the full size", {1, 2, 3, 3}, {2, 2, 4, 4}, {{"strides", I{2, 2}}, {"output_shape", I{10, 11}}}},
      {"2d auto_pad SAME_UPPER k3 s2", {1, 2, 4, 5}, {2, 3, 3, 3}, {{"strides", I{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}},
      {"2d auto_pad SAME_LOWER k4 s2", {1, 2, 4, 5}, {2, 3, 4, 4}, {{"strides", I{2, 2}}, {"auto_pad", std::string("SAME_LOWER")}}},
      {"3d k2 s2", {1, 3, 3, 2, 4}, {3, 2, 2, 2, 2}, {{"strides", I{2, 2, 2}}}},
      {"3d k3 s(1,2,2) p1 op(0,1,1)", {1, 2, 3, 3, 4}, {2, 2, 3, 3, 3},
       {{"strides", I{1, 2, 2}}, {"pads", I{1, 1, 1, 1, 1, 1}}, {"output_padding", I{0, 1, 1}}}},
      {"2d fp16 k4 s2 p1", {1, 8, 5, 6}, {8, 4, 4, 4}, {{"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}}, true, DType::f16},
      {"2d fp16 k3 s2 (per phase)", {1, 4, 5, 5}, {4, 4, 3, 3}, {{"strides", I{2, 2}}}, true, DType::f16},
      {"2d weight as an input", {1, 3, 4, 4}, {3, 2, 4, 4}, {{"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}}, true, DType::f32, false},
      {"2d k3 s2 p1, groups 2, weight as an input", {1, 4, 4, 5}, {4, 3, 3, 3},
       {{"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}, {"group", int64_t{2}}}, true, DType::f32, false},
      {"3d k3 s2 dilation-2 stride-1 axis, weight as an input", {1, 2, 4, 3, 4}, {2, 2, 3, 3, 2},
       {{"strides", I{2, 1, 2}}, {"dilations", I{1, 2, 1}}}, true, DType::f32, false},
      {"1d k1 s2: a phase without taps keeps the direct kernel", {1, 2, 5}, {2, 3, 1}, {{"strides", I{2}}}, true, DType::f32, true,
       false},
      {"2d stride 2 dilation 2 keeps the direct kernel", {1, 2, 4, 4}, {2, 2, 2, 2}, {{"strides", I{2, 2}}, {"dilations", I{2, 2}}},
       true, DType::f32, true, false},
  };
}

TEST(ConvTranspose, FusedPlansMatchTheReferenceOnEveryBackend) {
  int seed = 100;
  for (const ConvCase& c : cases()) {
    SCOPED_TRACE(c.name);
    const Tensor x = testing::random_tensor(c.t, c.x, ++seed, -2, 2), w = testing::random_tensor(c.t, c.w, ++seed, -1, 1);
    const Tensor b = testing::random_tensor(c.t, {c.w[1] * (c.attrs.count("group") ? std::get<int64_t>(c.attrs.at("group")) : 1)},
                                            ++seed, -1, 1);
    const Graph g = ct_graph(c, w, b);
    bool direct = false;
    for (const KernelSpec& k : plan_of(g).kernels)
      for (const std::string& op : k.fused_ops) direct = direct || op == "ConvTranspose";
    EXPECT_EQ(direct, !c.rewritten);
    const double nonzero = expect_backends_match_ref(g, ct_graph(c, w, b, true), x, w, b, c.const_weight, c.bias, c.t);
    EXPECT_TRUE(testing::usable_backends().size() < 2 || nonzero > 0);
  }
}

// output_shape past the full size: the extra rows are zeros at the end, in every auto_pad mode,
// as onnxruntime 1.32 places them (it clamps the total padding at 0); inside the full size the
// odd row of padding goes to the start, but for SAME_UPPER to the end (the spec). Values from
// onnxruntime on x = 1..4 (1..2 for k1 s3), w all ones.
TEST(ConvTranspose, OutputShapePlacesRowsAsOnnxruntime) {
  using I = std::vector<int64_t>;
  struct Case {
    std::string auto_pad;
    int64_t k, s, out;
    std::vector<double> want;
  };
  const std::vector<Case> cases = {
      {"NOTSET", 1, 3, 6, {1, 0, 0, 2, 0, 0}},
      {"NOTSET", 3, 2, 10, {1, 1, 3, 2, 5, 3, 7, 4, 4, 0}},
      {"SAME_UPPER", 3, 2, 10, {1, 1, 3, 2, 5, 3, 7, 4, 4, 0}},
      {"SAME_LOWER", 3, 2, 10, {1, 1, 3, 2, 5, 3, 7, 4, 4, 0}},
      {"NOTSET", 3, 2, 6, {3, 2, 5, 3, 7, 4}},
      {"SAME_UPPER", 3, 2, 6, {1, 3, 2, 5, 3, 7}},
      {"SAME_LOWER", 3, 2, 6, {3, 2, 5, 3, 7, 4}},
      {"NOTSET", 3, 2, 8, {1, 3, 2, 5, 3, 7, 4, 4}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.auto_pad + " k" + std::to_string(c.k) + " s" + std::to_string(c.s) + " -> " + std::to_string(c.out));
    const int64_t n = c.k == 1 ? 2 : 4;
    GraphBuilder g("ct", 17);
    const int x = g.input("x", DType::f32, {1, 1, n});
    Tensor w(DType::f32, {1, 1, c.k});
    w.fill(1);
    GraphBuilder::Attrs a = {{"strides", I{c.s}}, {"output_shape", I{c.out}}};
    if (c.auto_pad != "NOTSET") a["auto_pad"] = c.auto_pad;
    g.output(g.op("ConvTranspose", {x, g.constant("w", w)}, a));
    const Graph m = g.build();
    Tensor xv(DType::f32, {1, 1, n});
    for (int64_t i = 0; i < n; ++i) xv.set(i, static_cast<double>(i + 1));
    for (const std::string& be : testing::usable_backends()) {
      SCOPED_TRACE(be);
      const Tensor y = Session(m, be).run({xv})[0];
      ASSERT_EQ(y.shape(), (Shape{1, 1, c.out}));
      testing::expect_values(y, c.want, 0);
    }
  }
}

// An inf input reaches the outputs its taps reach and no others, as in the reference: the
// decomposition multiplies no zero taps (k3 s2: phases of 2 and 1 taps run as separate Convs).
TEST(ConvTranspose, InfinitiesReachOnlyTheOutputsTheirTapsReach) {
  using I = std::vector<int64_t>;
  const double inf = std::numeric_limits<double>::infinity();
  for (const ConvCase& c : {ConvCase{"k3 s2", {1, 1, 4, 4}, {1, 1, 3, 3}, {{"strides", I{2, 2}}}, false},
                          ConvCase{"k4 s2 p1", {1, 1, 4, 4}, {1, 2, 4, 4}, {{"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}}, false}}) {
    SCOPED_TRACE(c.name);
    Tensor x = testing::random_tensor(c.t, c.x, 7, 0.5, 1), w = testing::random_tensor(c.t, c.w, 8, 0.5, 1);
    x.set(5, inf);  // row 1, column 1
    const Graph g = ct_graph(c, w, Tensor());
    const Tensor want = Session(g, "ref").run({x})[0];
    int64_t infs = 0;
    for (int64_t i = 0; i < want.numel(); ++i) infs += std::isinf(want.get(i));
    ASSERT_GT(infs, 0);
    ASSERT_LT(infs, want.numel());
    for (const std::string& be : testing::usable_backends()) {
      const Tensor got = Session(g, be).run({x})[0];
      for (int64_t i = 0; i < got.numel(); ++i) {
        EXPECT_EQ(std::isinf(got.get(i)), std::isinf(want.get(i))) << be << " element " << i;
        EXPECT_FALSE(std::isnan(got.get(i))) << be << " element " << i;
      }
    }
  }
}


TEST(ConvLift, OneAndThreeDimensionalConvsMatchTheReferenceOnEveryBackend) {
  using I = std::vector<int64_t>;
  const std::vector<ConvCase> cases = {
      {"k3 s2 (wav2vec2)", {1, 6, 41}, {8, 6, 3}, {{"strides", I{2}}}, false},
      {"k10 s5, one input channel", {2, 1, 60}, {5, 1, 10}, {{"strides", I{5}}, {"kernel_shape", I{10}}}},
      {"k7 dilation 3, pads", {1, 4, 30}, {4, 4, 7}, {{"dilations", I{3}}, {"pads", I{9, 9}}}},
      {"k3 s2 p1 asymmetric pads", {1, 5, 20}, {6, 5, 3}, {{"strides", I{2}}, {"pads", I{0, 2}}}},
      {"SAME_UPPER s2", {1, 3, 17}, {4, 3, 4}, {{"strides", I{2}}, {"auto_pad", std::string("SAME_UPPER")}}},
      {"SAME_LOWER", {1, 3, 16}, {4, 3, 4}, {{"auto_pad", std::string("SAME_LOWER")}}},
      {"VALID", {1, 3, 16}, {4, 3, 5}, {{"auto_pad", std::string("VALID")}}},
      {"groups 4 (wav2vec2's positional conv)", {1, 8, 25}, {8, 2, 6}, {{"group", int64_t{4}}, {"pads", I{3, 3}}}},
      {"fp16", {1, 8, 33}, {6, 8, 3}, {{"pads", I{1, 1}}}, true, DType::f16},
      {"weight as an input", {1, 4, 19}, {5, 4, 3}, {{"strides", I{2}}}, true, DType::f32, false, false},
      {"depthwise stays direct", {1, 6, 30}, {6, 1, 5}, {{"group", int64_t{6}}, {"pads", I{2, 2}}}, true, DType::f32, true,
       false},
      // 3-D: the depth taps stacked as channels of one 2-D Conv
      {"3-D k3 p1 (r3d)", {1, 4, 5, 6, 7}, {6, 4, 3, 3, 3}, {{"pads", I{1, 1, 1, 1, 1, 1}}}},
      {"3-D stem k(3,7,7) s(1,2,2) p(1,3,3), batch 2", {2, 3, 4, 11, 12}, {5, 3, 3, 7, 7},
       {{"strides", I{1, 2, 2}}, {"pads", I{1, 3, 3, 1, 3, 3}}}},
      {"3-D temporal k(3,1,1) s(2,1,1), asymmetric depth pads", {1, 4, 9, 5, 5}, {4, 4, 3, 1, 1},
       {{"strides", I{2, 1, 1}}, {"pads", I{0, 0, 0, 2, 0, 0}}}, false},
      {"3-D k(1,3,3) dilation (1,2,2)", {1, 3, 3, 9, 9}, {4, 3, 1, 3, 3}, {{"dilations", I{1, 2, 2}}}},
      {"3-D depth dilation 2, stride 2, groups 2", {1, 4, 10, 5, 6}, {6, 2, 3, 2, 2},
       {{"dilations", I{2, 1, 1}}, {"strides", I{2, 1, 1}}, {"group", int64_t{2}}, {"pads", I{2, 0, 1, 1, 0, 0}}}},
      {"3-D VALID", {1, 3, 5, 6, 6}, {4, 3, 2, 3, 3}, {{"auto_pad", std::string("VALID")}}},
      {"3-D fp16", {1, 4, 4, 5, 5}, {4, 4, 3, 3, 3}, {{"pads", I{1, 1, 1, 1, 1, 1}}}, true, DType::f16},
      {"3-D SAME_UPPER stays direct", {1, 3, 4, 5, 5}, {4, 3, 3, 3, 3}, {{"auto_pad", std::string("SAME_UPPER")}}, true,
       DType::f32, true, false},
  };
  int seed = 300;
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(c.name);
    const Tensor x = testing::random_tensor(c.t, c.x, ++seed, -2, 2), w = testing::random_tensor(c.t, c.w, ++seed, -1, 1);
    const Tensor b = testing::random_tensor(c.t, {c.w[0]}, ++seed, -1, 1);
    auto graph = [&](bool abs_inputs) {
      GraphBuilder g("conv1d", 17);
      std::vector<int> ins = {g.input("x", c.t, c.x),
                              c.const_weight && !abs_inputs ? g.constant("w", w) : g.input("w", c.t, c.w)};
      if (c.bias) ins.push_back(c.const_weight && !abs_inputs ? g.constant("b", b) : g.input("b", c.t, b.shape()));
      g.output(g.op("Relu", {g.op("Conv", ins, c.attrs)}));
      return g.build();
    };
    const Graph g = graph(false);
    bool conv = false;
    for (const KernelSpec& k : plan_of(g).kernels) conv = conv || k.conv.has_value();
    EXPECT_EQ(conv, c.rewritten);
    expect_backends_match_ref(g, graph(true), x, w, b, c.const_weight, c.bias, c.t);
  }
}

// A constant weight holding inf or NaN keeps the direct kernels (ConvTranspose, 1-D and 2-D
// Conv, with or without bias): the contraction kernels (implicit GEMM, cuDNN) multiply the
// padding's zeros by the weights (0 * inf = NaN) where the reference adds no such term. Pads cropping most of the full output away keep the direct
// ConvTranspose too (the Conv would compute all of it).
TEST(ConvTranspose, NonFiniteWeightsAndHugeCropsKeepTheDirectKernel) {
  using I = std::vector<int64_t>;
  const double inf = std::numeric_limits<double>::infinity();
  auto direct_ops = [](const Graph& g) {
    int64_t direct = 0;
    for (const KernelSpec& k : plan_of(g).kernels)
      for (const std::string& op : k.fused_ops) direct += op == "ConvTranspose" || (op == "Conv" && !k.conv);
    return direct;
  };
  struct Case {
    std::string name, op;
    Shape x, w;
    GraphBuilder::Attrs attrs;
    bool inf_weight;
    bool bias = false;
  };
  for (const Case& c : {Case{"ConvTranspose k3 s1, an inf weight", "ConvTranspose", {1, 4, 4, 4}, {4, 4, 3, 3}, {}, true},
                        Case{"ConvTranspose k4 s2 p1, an inf weight", "ConvTranspose", {1, 4, 4, 4}, {4, 4, 4, 4},
                             {{"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}}, true},
                        Case{"Conv 1-D k3 p1, an inf weight", "Conv", {1, 16, 12}, {16, 16, 3}, {{"pads", I{1, 1}}}, true},
                        Case{"Conv 2-D k3 p1, an inf weight", "Conv", {1, 16, 12, 12}, {32, 16, 3, 3}, {{"pads", I{1, 1, 1, 1}}}, true},
                        Case{"Conv 2-D k3 s2 p1 + bias, an inf weight", "Conv", {1, 16, 12, 12}, {32, 16, 3, 3},
                             {{"pads", I{1, 1, 1, 1}}, {"strides", I{2, 2}}}, true, true},
                        Case{"ConvTranspose s16, pads cropping all but 4 x 4", "ConvTranspose", {1, 1, 16, 16}, {1, 1, 16, 16},
                             {{"strides", I{16, 16}}, {"pads", I{126, 126, 126, 126}}}, false}}) {
    SCOPED_TRACE(c.name);
    Tensor w = testing::random_tensor(DType::f32, c.w, 21, 0.5, 1);
    if (c.inf_weight) w.set(0, inf);
    GraphBuilder b("direct", 17);
    std::vector<int> ins{b.input("x", DType::f32, c.x), b.constant("w", w)};
    if (c.bias) ins.push_back(b.constant("b", testing::random_tensor(DType::f32, {c.w[0]}, 23, -1, 1)));
    b.output(b.op(c.op, ins, c.attrs));
    const Graph g = b.build();
    EXPECT_EQ(direct_ops(g), 1);
    const Tensor x = testing::random_tensor(DType::f32, c.x, 22, 0.5, 1);
    const Tensor want = Session(g, "ref").run({x})[0];
    for (const std::string& be : testing::usable_backends()) {
      const Tensor got = Session(g, be).run({x})[0];
      ASSERT_EQ(got.shape(), want.shape()) << be;
      for (int64_t i = 0; i < got.numel(); ++i) {
        if (std::isinf(want.get(i))) {
          EXPECT_EQ(got.get(i), want.get(i)) << be << " element " << i;
        } else {
          ASSERT_FALSE(std::isnan(got.get(i))) << be << " element " << i;
          EXPECT_NEAR(got.get(i), want.get(i), 1e-5 * std::fabs(want.get(i)) + 1e-6) << be << " element " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace fusor
