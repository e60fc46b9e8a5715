// If (ir/ops/control.cpp) imported from ONNX protos (frontend/onnx_import.cpp): a condition that
// depends only on shapes folds at compile time (the branch inlines, no If is left), a condition
// fed at run time picks its branch per run on every backend (GPUs through host fallback), nested
// If and branches reading outer values. Expected values are computed here from the inputs.
#include <gtest/gtest.h>

#include <cmath>

#include "backends/backend.h"
#include "frontend/onnx_import.h"
#include "runtime/session.h"
#include "test_util.h"
#include "onnx_test_util.h"

namespace fusor {
namespace {

void type(onnx::ValueInfoProto* vi, const std::string& name, int elem, const std::vector<int64_t>& dims, bool dynamic0 = false) {
  testing::onnx_value_info(vi, name, elem, dims, dynamic0);
}

onnx::NodeProto* node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
  return testing::onnx_node(g, op, std::move(in), std::move(out));
}

void int_constant(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> v, bool scalar = false) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  if (!scalar) t->add_dims(static_cast<int64_t>(v.size()));
  for (auto x : v) t->add_int64_data(x);
}

onnx::GraphProto* branch(onnx::NodeProto* n, const std::string& attr) { return testing::onnx_graph_attr(n, attr); }

onnx::ModelProto model_with_graph() { return testing::onnx_model("if_test"); }

Graph load(const onnx::ModelProto& m) { return testing::load_proto(m); }

// y = If(rows(x) > 2) then Relu(x) * 2 else -x     (x: [N, 4], N symbolic)
onnx::ModelProto shape_condition_model() {
  onnx::ModelProto m = model_with_graph();
  auto* g = m.mutable_graph();
  type(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 4}, true);
  int_constant(g, "zero", {0}, true);
  int_constant(g, "two", {2}, true);
  node(g, "Shape", {"x"}, {"shape"});
  node(g, "Gather", {"shape", "zero"}, {"rows"});
  node(g, "Greater", {"rows", "two"}, {"big"});
  auto* n = node(g, "If", {"big"}, {"y"});
  auto* then_g = branch(n, "then_branch");
  auto* c = then_g->add_initializer();
  c->set_name("k2");
  c->set_data_type(onnx::TensorProto::FLOAT);
  c->add_float_data(2.0f);
  node(then_g, "Relu", {"x"}, {"r"});
  node(then_g, "Mul", {"r", "k2"}, {"t_out"});
  type(then_g->add_output(), "t_out", onnx::TensorProto::FLOAT, {});
  then_g->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  auto* else_g = branch(n, "else_branch");
  node(else_g, "Neg", {"x"}, {"e_out"});
  type(else_g->add_output(), "e_out", onnx::TensorProto::FLOAT, {});
  else_g->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  type(g->add_output(), "y", onnx::TensorProto::FLOAT, {1, 4}, true);
  return m;
}

TEST(If, ShapeConditionFoldsAndTheBranchInlines) {
  Graph g = load(shape_condition_model());
  ASSERT_EQ(g.nodes.back().op_type, "If");
  for (int64_t rows : {3, 1}) {
    Tensor x = testing::random_tensor(DType::f32, {rows, 4}, 40 + rows);
    Graph sg = specialize(g, {x});
    for (auto& n : sg.nodes) EXPECT_NE(n.op_type, "If") << "rows " << rows << ": the constant condition must inline";
    for (const std::string& be : backend_names()) {
      if (be != "ref" && make_backend(be)->devices().empty()) continue;
      auto y = Session(g, be).run({x});
      ASSERT_EQ(y[0].shape(), (Shape{rows, 4})) << be;
      for (int64_t i = 0; i < x.numel(); ++i) {
        const double want = rows > 2 ? std::max(0.0, x.get(i)) * 2 : -x.get(i);
        EXPECT_NEAR(y[0].get(i), want, 1e-6) << be << " rows " << rows << " element " << i;
      }
    }
  }
}

// y = If(c) then (If(d) then x + w else x - w) else x * w; c and d are graph inputs (run time),
// w an outer initializer read from the inner branches (two levels of capture).
TEST(If, RunTimeConditionAndNestedIfOnEveryBackend) {
  onnx::ModelProto m = model_with_graph();
  auto* g = m.mutable_graph();
  type(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
  type(g->add_input(), "c", onnx::TensorProto::BOOL, {});
  type(g->add_input(), "d", onnx::TensorProto::BOOL, {1});
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  for (float v : {0.5f, -1.5f, 2.25f}) w->add_float_data(v);
  auto* outer = node(g, "If", {"c"}, {"y"});
  auto* then_g = branch(outer, "then_branch");
  auto* inner = node(then_g, "If", {"d"}, {"inner_y"});
  auto* it = branch(inner, "then_branch");
  node(it, "Add", {"x", "w"}, {"sum"});
  it->add_output()->set_name("sum");
  auto* ie = branch(inner, "else_branch");
  node(ie, "Sub", {"x", "w"}, {"diff"});
  ie->add_output()->set_name("diff");
  then_g->add_output()->set_name("inner_y");
  auto* else_g = branch(outer, "else_branch");
  node(else_g, "Mul", {"x", "w"}, {"prod"});
  else_g->add_output()->set_name("prod");
  g->add_output()->set_name("y");
  Graph model = load(m);
  // The outer If reads x and w (for its branches) besides its condition.
  ASSERT_EQ(model.nodes.size(), 1u);
  EXPECT_EQ(model.nodes[0].inputs.size(), 6u);  // c, else: x w, then: d x w

  Tensor x = testing::random_tensor(DType::f32, {2, 3}, 50);
  const double wv[3] = {0.5, -1.5, 2.25};
  for (const std::string& be : backend_names()) {
    if (be != "ref" && make_backend(be)->devices().empty()) continue;
    Session s(model, be);
    for (int c : {1, 0})
      for (int d : {1, 0}) {
        Tensor ct(DType::boolean, {}), dt(DType::boolean, {1});
        ct.set(0, c);
        dt.set(0, d);
        auto y = s.run({x, ct, dt});
        ASSERT_EQ(y[0].shape(), (Shape{2, 3}));
        for (int64_t i = 0; i < 6; ++i) {
          const double a = x.get(i), b = wv[i % 3];
          const double want = c ? (d ? a + b : a - b) : a * b;
          EXPECT_NEAR(y[0].get(i), static_cast<float>(want), 1e-6) << be << " c=" << c << " d=" << d << " element " << i;
        }
      }
  }
}

TEST(If, BranchesOfDifferentShapesAreSpecialisedOnTheCondition) {
  onnx::ModelProto m = model_with_graph();
  auto* g = m.mutable_graph();
  type(g->add_input(), "x", onnx::TensorProto::FLOAT, {4});
  type(g->add_input(), "c", onnx::TensorProto::BOOL, {});
  int_constant(g, "starts", {0});
  int_constant(g, "ends", {2});
  auto* n = node(g, "If", {"c"}, {"y"});
  auto* t = branch(n, "then_branch");
  node(t, "Slice", {"x", "starts", "ends"}, {"half"});
  t->add_output()->set_name("half");
  auto* e = branch(n, "else_branch");
  node(e, "Identity", {"x"}, {"all"});
  e->add_output()->set_name("all");
  g->add_output()->set_name("y");
  Graph model = load(m);
  Tensor x = testing::random_tensor(DType::f32, {4}, 60), c(DType::boolean, {});
  // Was an Error ("different shapes"); the condition is now specialised on (round 40: Optimum's
  // merged decoders), each value its own executable.
  Session s(model, "ref");
  for (bool taken : {true, false, true}) {
    c.set(0, taken ? 1 : 0);
    const Tensor y = s.run({x, c})[0];
    ASSERT_EQ(y.shape(), (Shape{taken ? 2 : 4}));
    for (int64_t i = 0; i < y.numel(); ++i) EXPECT_EQ(y.get(i), x.get(i)) << i;
  }
}

TEST(If, UndefinedOuterValueIsAnImportError) {
  onnx::ModelProto m = model_with_graph();
  auto* g = m.mutable_graph();
  type(g->add_input(), "c", onnx::TensorProto::BOOL, {});
  auto* n = node(g, "If", {"c"}, {"y"});
  auto* t = branch(n, "then_branch");
  node(t, "Neg", {"nowhere"}, {"a"});
  t->add_output()->set_name("a");
  auto* e = branch(n, "else_branch");
  node(e, "Neg", {"nowhere"}, {"b"});
  e->add_output()->set_name("b");
  g->add_output()->set_name("y");
  try {
    load(m);
    ADD_FAILURE() << "expected an import error";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("input 'nowhere' is not defined"), std::string::npos) << err.what();
  }
}

// OptionalHasElement / OptionalGetElement on plain tensors (opset 18): a given tensor has its
// element (true, the tensor itself), an omitted input is empty (false; getting it is an error).
TEST(Optional, HasAndGetElementOfTensorsOnEveryBackend) {
  onnx::ModelProto m = testing::onnx_model("optional_test", 8, 18);
  auto* g = m.mutable_graph();
  type(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
  node(g, "OptionalHasElement", {"x"}, {"has"});
  node(g, "OptionalHasElement", {""}, {"empty"});
  node(g, "OptionalGetElement", {"x"}, {"got"});
  node(g, "Neg", {"got"}, {"y"});
  for (const char* o : {"has", "empty", "y"}) g->add_output()->set_name(o);
  Graph gr = load(m);
  Tensor x = testing::random_tensor(DType::f32, {2, 3}, 7);
  for (const std::string& be : backend_names()) {
    if (be != "ref" && make_backend(be)->devices().empty()) continue;
    Session s(gr, be);
    auto out = s.run({x});
    ASSERT_EQ(out.size(), 3u) << be;
    EXPECT_EQ(out[0].dtype(), DType::boolean) << be;
    EXPECT_EQ(out[0].get_int(0), 1) << be;
    EXPECT_EQ(out[1].get_int(0), 0) << be;
    for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(out[2].get(i), -x.get(i)) << be << " element " << i;
  }
  for (const Node& n : specialize(gr, {x}).nodes) EXPECT_EQ(n.op_type.find("Optional"), std::string::npos) << "replaced at shape inference";
  onnx::ModelProto bad = testing::onnx_model("optional_bad", 8, 18);
  node(bad.mutable_graph(), "OptionalGetElement", {""}, {"z"});
  bad.mutable_graph()->add_output()->set_name("z");
  try {
    Session(load(bad), "ref").run({});
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("empty optional"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fusor
