// FlexAttention (ai.onnx.preview, ir/ops/flex_attention.cpp) imported from ONNX protos: GQA, the
// scale attribute and its default, score_mod reading an outer graph input, prob_mod with its own
// initializer, a symbolic batch dim (expanded once shapes are known), fp16 with the float32
// softmax, on every backend present against a float64 reference computed here from the inputs;
// malformed nodes are one-line errors naming the node.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backends/backend.h"
#include "onnx_test_util.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

void type(onnx::ValueInfoProto* vi, const std::string& name, int elem, const std::vector<int64_t>& dims, bool dynamic0 = false) {
  testing::onnx_value_info(vi, name, elem, dims, dynamic0);
}

onnx::GraphProto* graph_attr(onnx::NodeProto* n, const std::string& attr) { return testing::onnx_graph_attr(n, attr); }

struct Spec {
  int elem = onnx::TensorProto::FLOAT;
  int64_t B = 2, Hq = 4, Hkv = 2, L = 5, S = 7, E = 8, Ev = 6;
  bool scale = false, score_mod = false, prob_mod = false, dynamic_batch = false;
};
constexpr float kScale = 0.3f, kProbMul = 0.75f;

// Y = FlexAttention(Q, K, V) with score_mod(s) = s + bias (bias: a graph input, read as an outer
// value) and prob_mod(p) = p * 0.75 (an initializer of the graph).
onnx::ModelProto flex_model(const Spec& s) {
  onnx::ModelProto m = testing::onnx_model("flex", 8, 21);
  auto* op = m.add_opset_import();
  op->set_domain("ai.onnx.preview");
  op->set_version(1);
  auto* g = m.mutable_graph();
  type(g->add_input(), "Q", s.elem, {s.B, s.Hq, s.L, s.E}, s.dynamic_batch);
  type(g->add_input(), "K", s.elem, {s.B, s.Hkv, s.S, s.E}, s.dynamic_batch);
  type(g->add_input(), "V", s.elem, {s.B, s.Hkv, s.S, s.Ev}, s.dynamic_batch);
  if (s.score_mod) type(g->add_input(), "bias", onnx::TensorProto::FLOAT, {});
  auto* n = testing::onnx_node(g, "FlexAttention", {"Q", "K", "V"}, {"Y"});
  n->set_domain("ai.onnx.preview");
  if (s.scale) {
    auto* a = n->add_attribute();
    a->set_name("scale");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(kScale);
  }
  if (s.score_mod) {
    auto* b = graph_attr(n, "score_mod");
    type(b->add_input(), "scores", onnx::TensorProto::FLOAT, {});
    b->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
    testing::onnx_node(b, "Add", {"scores", "bias"}, {"modded"});
    type(b->add_output(), "modded", onnx::TensorProto::FLOAT, {});
    b->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  }
  if (s.prob_mod) {
    auto* b = graph_attr(n, "prob_mod");
    type(b->add_input(), "probs", onnx::TensorProto::FLOAT, {});
    b->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
    auto* c = b->add_initializer();
    c->set_name("k");
    c->set_data_type(onnx::TensorProto::FLOAT);
    c->add_float_data(kProbMul);
    testing::onnx_node(b, "Mul", {"probs", "k"}, {"scaled"});
    type(b->add_output(), "scaled", onnx::TensorProto::FLOAT, {});
    b->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  }
  type(g->add_output(), "Y", s.elem, {s.B, s.Hq, s.L, s.Ev}, s.dynamic_batch);
  return m;
}

// The spec in float64 (query head h reads kv head h / (Hq / Hkv)).
std::vector<double> expected(const Spec& s, const Tensor& q, const Tensor& k, const Tensor& v, double bias) {
  const double scale = s.scale ? kScale : 1.0 / std::sqrt(static_cast<double>(s.E));
  std::vector<double> y(static_cast<size_t>(s.B * s.Hq * s.L * s.Ev));
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t h = 0; h < s.Hq; ++h) {
      const int64_t kh = h / (s.Hq / s.Hkv);
      for (int64_t i = 0; i < s.L; ++i) {
        std::vector<double> p(static_cast<size_t>(s.S));
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < s.S; ++j) {
          double d = 0;
          for (int64_t e = 0; e < s.E; ++e)
            d += q.get(((b * s.Hq + h) * s.L + i) * s.E + e) * k.get(((b * s.Hkv + kh) * s.S + j) * s.E + e);
          p[j] = d * scale + (s.score_mod ? bias : 0.0);
          mx = std::max(mx, p[j]);
        }
        for (double& x : p) sum += (x = std::exp(x - mx));
        for (int64_t c = 0; c < s.Ev; ++c) {
          double acc = 0;
          for (int64_t j = 0; j < s.S; ++j)
            acc += p[j] / sum * (s.prob_mod ? kProbMul : 1.0) * v.get(((b * s.Hkv + kh) * s.S + j) * s.Ev + c);
          y[((b * s.Hq + h) * s.L + i) * s.Ev + c] = acc;
        }
      }
    }
  return y;
}

void check_every_backend(const Spec& s, double tol, uint64_t seed) {
  Graph g = testing::load_proto(flex_model(s));
  const DType dt = s.elem == onnx::TensorProto::FLOAT16 ? DType::f16 : DType::f32;
  Tensor q = testing::random_tensor(dt, {s.B, s.Hq, s.L, s.E}, seed), k = testing::random_tensor(dt, {s.B, s.Hkv, s.S, s.E}, seed + 1),
         v = testing::random_tensor(dt, {s.B, s.Hkv, s.S, s.Ev}, seed + 2);
  std::vector<Tensor> in{q, k, v};
  const double bias = 0.625;
  if (s.score_mod) in.push_back(testing::scalar_tensor(DType::f32, bias));
  const std::vector<double> want = expected(s, q, k, v, bias);
  for (const std::string& be : backend_names()) {
    if (be != "ref" && make_backend(be)->devices().empty()) continue;
    auto y = Session(g, be).run(in);
    ASSERT_EQ(y[0].shape(), (Shape{s.B, s.Hq, s.L, s.Ev})) << be;
    ASSERT_EQ(y[0].dtype(), dt) << be;
    for (int64_t i = 0; i < y[0].numel(); ++i) EXPECT_NEAR(y[0].get(i), want[i], tol) << be << " element " << i;
  }
}

TEST(FlexAttention, GqaScoreAndProbModsOnEveryBackend) {
  Spec s;
  s.scale = s.score_mod = s.prob_mod = true;
  check_every_backend(s, 2e-6, 11);
}

TEST(FlexAttention, DefaultScaleMultiHeadAndASymbolicBatch) {
  Spec s;
  s.Hkv = s.Hq;
  s.dynamic_batch = true;
  check_every_backend(s, 2e-6, 21);
}

// fp16 in and out, the scores softmaxed in float32 (as the spec's default softmax_precision):
// within a few fp16 ulp of the float64 value (|Y| < 1: ulp <= 2^-11).
TEST(FlexAttention, HalfInputsSoftmaxInFloat32) {
  Spec s;
  s.elem = onnx::TensorProto::FLOAT16;
  s.score_mod = true;
  check_every_backend(s, 4.0 / 2048, 31);
}

TEST(FlexAttention, MalformedNodesAreOneLineErrors) {
  const auto error_of = [](const Spec& s, const std::function<void(onnx::ModelProto&)>& edit) {
    onnx::ModelProto m = flex_model(s);
    edit(m);
    try {
      Graph g = testing::load_proto(m);
      std::vector<Tensor> in;
      for (int i : g.inputs) in.push_back(testing::random_tensor(g.values[i].dtype, g.values[i].shape, 5));
      Session(g, "ref").run(in);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  Spec s;
  s.Hkv = 3;  // 4 query heads over 3 kv heads
  std::string e = error_of(s, [](onnx::ModelProto&) {});
  EXPECT_NE(e.find("Y_node"), std::string::npos) << e;
  EXPECT_NE(e.find("not a multiple"), std::string::npos) << e;
  Spec t;
  e = error_of(t, [](onnx::ModelProto& m) { m.mutable_graph()->mutable_input(2)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::DOUBLE); });
  EXPECT_NE(e.find("share one float dtype"), std::string::npos) << e;
  Spec u;
  u.score_mod = true;
  e = error_of(u, [](onnx::ModelProto& m) {
    auto* b = m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
    type(b->add_output(), "scores", onnx::TensorProto::FLOAT, {});
  });
  EXPECT_NE(e.find("score_mod must take 1 input and return 1 output"), std::string::npos) << e;
  for (const std::string& msg : {e}) EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

}  // namespace
}  // namespace fusor
