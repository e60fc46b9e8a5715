// Model-local functions (ModelProto.functions) inlined at import (frontend/onnx_functions.cpp).
// Each model calling functions runs on ref, cpu and vulkan (where a device exists) and must give
// what the same model with the functions inlined by hand gives on ref, on seeded random inputs.
// Models are built with libonnx's protobuf classes; the IR 9/10 fields those 1.12 classes lack
// (FunctionProto.attribute_proto = 11, .overload = 13, NodeProto.overload = 8) are written as
// unknown fields, which is how a newer exporter's bytes parse here.
#include <onnx/defs/attr_proto_util.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "backends/backend.h"
#include "frontend/onnx_import.h"
#include "runtime/session.h"
#include "test_util.h"
#include "onnx_test_util.h"

namespace fusor {
namespace {

using NP = onnx::NodeProto;
using AP = onnx::AttributeProto;

NP node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out, const std::string& domain = "",
        const std::string& name = "") {
  NP n;
  n.set_op_type(op);
  n.set_domain(domain);
  n.set_name(name);
  for (auto& i : in) n.add_input(i);
  for (auto& o : out) n.add_output(o);
  return n;
}
// libonnx's builders (onnx/defs/attr_proto_util.h), typed by the value.
AP attr_f(const std::string& name, float v) { return onnx::MakeAttribute(name, v); }
AP attr_i(const std::string& name, int64_t v) { return onnx::MakeAttribute(name, v); }
AP attr_ints(const std::string& name, std::vector<int64_t> v) { return onnx::MakeAttribute(name, v); }
AP attr_ref(const std::string& name, const std::string& ref, AP::AttributeType t) {
  AP a;
  a.set_name(name);
  a.set_ref_attr_name(ref);
  a.set_type(t);
  return a;
}
NP with(NP n, std::vector<AP> attrs) {
  for (auto& a : attrs) *n.add_attribute() = a;
  return n;
}
NP with_overload(NP n, const std::string& o) {
  n.mutable_unknown_fields()->AddLengthDelimited(8, o);
  return n;
}
onnx::GraphProto* graph_attr(NP& n, const std::string& name) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(AP::GRAPH);
  a->mutable_g()->set_name(name);
  return a->mutable_g();
}
void add_nodes(onnx::GraphProto* g, std::vector<NP> nodes) {
  for (auto& n : nodes) *g->add_node() = n;
}
void typed(onnx::ValueInfoProto* vi, const std::string& name, int elem, const Shape& dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* s = tt->mutable_shape();
  for (auto d : dims) s->add_dim()->set_dim_value(d);
}

// defaults: attribute_proto entries (attributes with default values).
// The default domain at `opset` and the test functions' "local" domain at 1 (a ModelProto or a
// FunctionProto).
template <class Proto> void add_opsets(Proto& p, int opset) {
  auto* op = p.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  op = p.add_opset_import();
  op->set_domain("local");
  op->set_version(1);
}

onnx::FunctionProto function(const std::string& name, std::vector<std::string> in, std::vector<std::string> out, std::vector<NP> nodes,
                             std::vector<std::string> attrs = {}, std::vector<AP> defaults = {}, int opset = 17) {
  onnx::FunctionProto f;
  f.set_domain("local");
  f.set_name(name);
  for (auto& i : in) f.add_input(i);
  for (auto& o : out) f.add_output(o);
  for (auto& n : nodes) *f.add_node() = n;
  for (auto& a : attrs) f.add_attribute(a);
  for (auto& d : defaults) f.mutable_unknown_fields()->AddLengthDelimited(11, d.SerializeAsString());
  add_opsets(f, opset);
  return f;
}

struct In {
  std::string name;
  int elem;
  Shape shape;
};
const int F32 = onnx::TensorProto::FLOAT, BOOL = onnx::TensorProto::BOOL;

onnx::ModelProto model(std::vector<NP> nodes, std::vector<In> inputs, std::vector<std::string> outputs,
                       std::vector<onnx::FunctionProto> fns = {}, int opset = 17) {
  onnx::ModelProto m;
  m.set_ir_version(10);
  add_opsets(m, opset);
  auto* g = m.mutable_graph();
  g->set_name("functions_test");
  for (auto& i : inputs) typed(g->add_input(), i.name, i.elem, i.shape);
  add_nodes(g, std::move(nodes));
  for (auto& o : outputs) g->add_output()->set_name(o);
  for (auto& f : fns) *m.add_functions() = f;
  return m;
}

Graph load(const onnx::ModelProto& m) { return testing::load_proto(m); }

std::vector<std::string> test_backends() {
  std::vector<std::string> r;
  for (const std::string& be : backend_names()) {
    if (be != "ref" && make_backend(be)->devices().empty()) {
      std::printf("[ skip     ] backend %s: no device on this machine\n", be.c_str());
      continue;
    }
    r.push_back(be);
  }
  return r;
}

// with_fns gives on every backend what `inlined` (the functions expanded by hand) gives on ref.
void expect_as_inlined(const onnx::ModelProto& with_fns, const onnx::ModelProto& inlined, const std::vector<std::vector<Tensor>>& runs) {
  Graph a = load(with_fns), b = load(inlined);
  for (const Node& n : a.nodes) EXPECT_NE(n.domain, "local") << n.label() << " was not inlined";
  Session want_s(b, "ref");
  for (const std::string& be : test_backends()) {
    Session s(a, be);
    for (size_t r = 0; r < runs.size(); ++r) {
      const auto want = want_s.run(runs[r]);
      const auto got = s.run(runs[r]);
      ASSERT_EQ(got.size(), want.size()) << be;
      for (size_t k = 0; k < want.size(); ++k) {
        ASSERT_EQ(got[k].dtype(), want[k].dtype()) << be << " output " << k;
        ASSERT_EQ(got[k].shape(), want[k].shape()) << be << " output " << k;
        for (int64_t e = 0; e < want[k].numel(); ++e)
          EXPECT_NEAR(got[k].get(e), want[k].get(e), 1e-5 * std::max(1.0, std::fabs(want[k].get(e))))
              << be << " run " << r << " output " << k << " element " << e;
      }
    }
  }
}

Tensor rnd(Shape s, uint64_t seed) { return testing::random_tensor(DType::f32, s, seed, -2.0, 2.0); }
Tensor boolean(bool v) {
  Tensor t(DType::boolean, {});
  t.set(0, v);
  return t;
}

onnx::FunctionProto add_mul() {  // Z = (X + Y) * X
  return function("AddMul", {"X", "Y"}, {"Z"}, {node("Add", {"X", "Y"}, {"S"}), node("Mul", {"S", "X"}, {"Z"})});
}

// Two calls of one function under the same node name, next to a graph value named like the
// first call's inner value ("same/S"): every name stays distinct.
TEST(LocalFunctions, CallsInlineWithFreshNames) {
  auto m = model({node("AddMul", {"a", "b"}, {"c1"}, "local", "same"), node("AddMul", {"c1", "a"}, {"c2"}, "local", "same"),
                  node("Relu", {"a"}, {"same/S"})},
                 {{"a", F32, {2, 3}}, {"b", F32, {2, 3}}}, {"c2", "same/S"}, {add_mul()});
  auto hand = model({node("Add", {"a", "b"}, {"s1"}), node("Mul", {"s1", "a"}, {"c1"}), node("Add", {"c1", "a"}, {"s2"}),
                     node("Mul", {"s2", "c1"}, {"c2"}), node("Relu", {"a"}, {"same/S"})},
                    {{"a", F32, {2, 3}}, {"b", F32, {2, 3}}}, {"c2", "same/S"});
  Graph g = load(m);
  EXPECT_EQ(g.nodes.size(), 5u);
  expect_as_inlined(m, hand, {{rnd({2, 3}, 1), rnd({2, 3}, 2)}});
}

// Act(X; alpha = 0.5) = LeakyRelu(X, alpha); Block(X, B; scale, slope = 0.1) = Act((X + B) * scale; alpha = slope):
// attribute references into a Constant and through a nested call, defaults where the call gives none.
TEST(LocalFunctions, NestedCallsAttributeReferencesAndDefaults) {
  auto act = function("Act", {"X"}, {"Y"}, {with(node("LeakyRelu", {"X"}, {"Y"}), {attr_ref("alpha", "alpha", AP::FLOAT)})}, {}, {attr_f("alpha", 0.5f)});
  auto block = function("Block", {"X", "B"}, {"Y"},
                        {node("Add", {"X", "B"}, {"T"}), with(node("Constant", {}, {"C"}), {attr_ref("value_float", "scale", AP::FLOAT)}),
                         node("Mul", {"T", "C"}, {"U"}), with(node("Act", {"U"}, {"Y"}, "local"), {attr_ref("alpha", "slope", AP::FLOAT)})},
                        {"scale"}, {attr_f("slope", 0.1f)});
  auto m = model({with(node("Block", {"a", "b"}, {"y1"}, "local"), {attr_f("scale", 1.5f)}),
                  with(node("Block", {"a", "b"}, {"y2"}, "local"), {attr_f("scale", -2.0f), attr_f("slope", 0.3f)}),
                  node("Act", {"a"}, {"y3"}, "local"), with(node("Act", {"b"}, {"y4"}, "local"), {attr_f("alpha", 0.05f)})},
                 {{"a", F32, {3, 4}}, {"b", F32, {3, 4}}}, {"y1", "y2", "y3", "y4"}, {block, act});
  auto hand = model({node("Add", {"a", "b"}, {"t"}), with(node("Constant", {}, {"k1"}), {attr_f("value_float", 1.5f)}),
                     with(node("Constant", {}, {"k2"}), {attr_f("value_float", -2.0f)}), node("Mul", {"t", "k1"}, {"u1"}),
                     node("Mul", {"t", "k2"}, {"u2"}), with(node("LeakyRelu", {"u1"}, {"y1"}), {attr_f("alpha", 0.1f)}),
                     with(node("LeakyRelu", {"u2"}, {"y2"}), {attr_f("alpha", 0.3f)}),
                     with(node("LeakyRelu", {"a"}, {"y3"}), {attr_f("alpha", 0.5f)}),
                     with(node("LeakyRelu", {"b"}, {"y4"}), {attr_f("alpha", 0.05f)})},
                    {{"a", F32, {3, 4}}, {"b", F32, {3, 4}}}, {"y1", "y2", "y3", "y4"});
  expect_as_inlined(m, hand, {{rnd({3, 4}, 3), rnd({3, 4}, 4)}});
}

// ClipNeg(X, Lo, Hi) = (Clip(X, Lo, Hi), -Clip(...)) called with an empty and a missing optional
// input and fewer outputs than declared; Pass(X) = (X, Relu(X)) returns an input as an output.
TEST(LocalFunctions, OptionalInputsUnusedOutputsAndPassThrough) {
  auto clip = function("ClipNeg", {"X", "Lo", "Hi"}, {"Y", "Z"}, {node("Clip", {"X", "Lo", "Hi"}, {"Y"}), node("Neg", {"Y"}, {"Z"})});
  auto pass = function("Pass", {"X"}, {"X", "Y"}, {node("Relu", {"X"}, {"Y"})});
  const std::vector<In> ins{{"a", F32, {2, 5}}, {"lo", F32, {}}, {"hi", F32, {}}};
  auto m = model({node("ClipNeg", {"a", "", "hi"}, {"y1"}, "local"), node("ClipNeg", {"a", "lo"}, {"", "z2"}, "local"),
                  node("Pass", {"a"}, {"p1", "p2"}, "local")},
                 ins, {"y1", "z2", "p1", "p2"}, {clip, pass});
  auto hand = model({node("Clip", {"a", "", "hi"}, {"y1"}), node("Clip", {"a", "lo"}, {"c2"}), node("Neg", {"c2"}, {"z2"}),
                     node("Identity", {"a"}, {"p1"}), node("Relu", {"a"}, {"p2"})},
                    ins, {"y1", "z2", "p1", "p2"});
  expect_as_inlined(m, hand, {{rnd({2, 5}, 5), testing::tensor_of({}, {-0.75}), testing::tensor_of({}, {0.5})}});
}

// The function imports ai.onnx 11 (ReduceSum's axes an attribute) in a model of opset 17 (axes an input).
TEST(LocalFunctions, BodyNodesUseTheFunctionsOpset) {
  auto rowsum = function("RowSum", {"X"}, {"Y"}, {with(node("ReduceSum", {"X"}, {"Y"}), {attr_ints("axes", {1}), attr_i("keepdims", 0)})}, {}, {}, 11);
  auto m = model({node("RowSum", {"a"}, {"y"}, "local")}, {{"a", F32, {3, 7}}}, {"y"}, {rowsum});
  auto hand = model({with(node("Constant", {}, {"axes"}), {attr_ints("value_ints", {1})}),
                     with(node("ReduceSum", {"a", "axes"}, {"y"}), {attr_i("keepdims", 0)})},
                    {{"a", F32, {3, 7}}}, {"y"});
  Graph g = load(m);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].opset, 11);
  expect_as_inlined(m, hand, {{rnd({3, 7}, 6)}});
}

// Gate(X, C; alpha = 0.25) = If(C) then Act(X; alpha) else -X: a function whose If branches read
// its input and call another function with a referenced attribute; an If of the graph whose
// branch calls a function; a Loop and a Scan whose bodies do.
TEST(LocalFunctions, InsideSubgraphsAndSubgraphsInsideFunctions) {
  auto act = function("Act", {"X"}, {"Y"}, {with(node("LeakyRelu", {"X"}, {"Y"}), {attr_ref("alpha", "alpha", AP::FLOAT)})}, {}, {attr_f("alpha", 0.5f)});
  NP gate_if = node("If", {"C"}, {"Y"});
  add_nodes(graph_attr(gate_if, "then_branch"), {with(node("Act", {"X"}, {"Y1"}, "local"), {attr_ref("alpha", "alpha", AP::FLOAT)})});
  gate_if.mutable_attribute(0)->mutable_g()->add_output()->set_name("Y1");
  add_nodes(graph_attr(gate_if, "else_branch"), {node("Neg", {"X"}, {"Y2"})});
  gate_if.mutable_attribute(1)->mutable_g()->add_output()->set_name("Y2");
  auto gate = function("Gate", {"X", "C"}, {"Y"}, {gate_if}, {}, {attr_f("alpha", 0.25f)});

  // The graph's own If and Loop, built twice: calling AddMul, or with its body written out.
  auto build = [&](bool inlined) {
    auto addmul = [&](const std::string& x, const std::string& y, const std::string& z, const std::string& s) -> std::vector<NP> {
      if (!inlined) return {node("AddMul", {x, y}, {z}, "local")};
      return {node("Add", {x, y}, {s}), node("Mul", {s, x}, {z})};
    };
    std::vector<NP> nodes;
    if (inlined) {
      NP i = node("If", {"c"}, {"y"});
      add_nodes(graph_attr(i, "then_branch"), {with(node("LeakyRelu", {"a"}, {"t1"}), {attr_f("alpha", 0.125f)})});
      i.mutable_attribute(0)->mutable_g()->add_output()->set_name("t1");
      add_nodes(graph_attr(i, "else_branch"), {node("Neg", {"a"}, {"t2"})});
      i.mutable_attribute(1)->mutable_g()->add_output()->set_name("t2");
      nodes.push_back(i);
    } else {
      nodes.push_back(with(node("Gate", {"a", "c"}, {"y"}, "local"), {attr_f("alpha", 0.125f)}));
    }
    NP i = node("If", {"c"}, {"z"});
    add_nodes(graph_attr(i, "then_branch"), addmul("a", "b", "zt", "zs"));
    i.mutable_attribute(0)->mutable_g()->add_output()->set_name("zt");
    add_nodes(graph_attr(i, "else_branch"), {node("Sub", {"a", "b"}, {"ze"})});
    i.mutable_attribute(1)->mutable_g()->add_output()->set_name("ze");
    nodes.push_back(i);
    // Loop 3 times: acc = AddMul(acc, b) * 0.5.
    nodes.push_back(with(node("Constant", {}, {"trips"}), {attr_i("value_int", 3)}));
    NP loop = node("Loop", {"trips", "", "a"}, {"w"});
    auto* body = graph_attr(loop, "body");
    typed(body->add_input(), "it", onnx::TensorProto::INT64, {});
    typed(body->add_input(), "cond", BOOL, {});
    typed(body->add_input(), "acc", F32, {2, 3});
    auto inner = addmul("acc", "b", "m", "ms");
    inner.push_back(with(node("Constant", {}, {"half"}), {attr_f("value_float", 0.5f)}));
    inner.push_back(node("Mul", {"m", "half"}, {"acc_out"}));
    inner.push_back(node("Identity", {"cond"}, {"cond_out"}));
    add_nodes(body, inner);
    body->add_output()->set_name("cond_out");
    body->add_output()->set_name("acc_out");
    nodes.push_back(loop);
    // Scan over a's rows: s[i] = Act(a[i]) (alpha: Act's default 0.5).
    NP scan = with(node("Scan", {"a"}, {"s"}), {attr_i("num_scan_inputs", 1)});
    auto* sb = graph_attr(scan, "body");
    typed(sb->add_input(), "row", F32, {3});
    add_nodes(sb, {inlined ? with(node("LeakyRelu", {"row"}, {"row_out"}), {attr_f("alpha", 0.5f)}) : node("Act", {"row"}, {"row_out"}, "local")});
    sb->add_output()->set_name("row_out");
    nodes.push_back(scan);
    return model(nodes, {{"a", F32, {2, 3}}, {"b", F32, {2, 3}}, {"c", BOOL, {}}}, {"y", "z", "w", "s"},
                 inlined ? std::vector<onnx::FunctionProto>{} : std::vector<onnx::FunctionProto>{gate, act, add_mul()});
  };
  const Tensor a = rnd({2, 3}, 7), b = rnd({2, 3}, 8);
  expect_as_inlined(build(false), build(true), {{a, b, boolean(true)}, {a, b, boolean(false)}});
}

// Two functions of one name told apart by their overload (IR 10).
TEST(LocalFunctions, OverloadsAreDistinctFunctions) {
  auto f1 = function("F", {"X"}, {"Y"}, {node("Relu", {"X"}, {"Y"})});
  auto f2 = function("F", {"X"}, {"Y"}, {node("Neg", {"X"}, {"Y"})});
  f1.mutable_unknown_fields()->AddLengthDelimited(13, "relu");
  f2.mutable_unknown_fields()->AddLengthDelimited(13, "neg");
  auto m = model({with_overload(node("F", {"a"}, {"y1"}, "local"), "neg"), with_overload(node("F", {"a"}, {"y2"}, "local"), "relu")},
                 {{"a", F32, {4}}}, {"y1", "y2"}, {f1, f2});
  auto hand = model({node("Neg", {"a"}, {"y1"}), node("Relu", {"a"}, {"y2"})}, {{"a", F32, {4}}}, {"y1", "y2"});
  expect_as_inlined(m, hand, {{rnd({4}, 9)}});
  f2.mutable_unknown_fields()->Clear();
  f2.mutable_unknown_fields()->AddLengthDelimited(13, "relu");
  EXPECT_ERROR(load(model({node("Relu", {"a"}, {"y"})}, {{"a", F32, {4}}}, {"y"}, {f1, f2})), "'local.F:relu' is defined more than once");
}

TEST(LocalFunctions, MalformedFunctionsAndCallsAreOneLineErrors) {
  const std::vector<In> in{{"a", F32, {2}}};
  auto call = [&](std::vector<onnx::FunctionProto> fns, NP n = node("F", {"a"}, {"y"}, "local")) { return load(model({n}, in, {"y"}, fns)); };
  auto relu = function("F", {"X"}, {"Y"}, {node("Relu", {"X"}, {"Y"})});

  EXPECT_ERROR(call({function("F", {"X"}, {"Y"}, {node("F", {"X"}, {"Y"}, "local")})}), "'local.F' calls itself (local.F -> local.F)");
  EXPECT_ERROR(call({function("F", {"X"}, {"Y"}, {node("G", {"X"}, {"Y"}, "local")}), function("G", {"X"}, {"Y"}, {node("F", {"X"}, {"Y"}, "local")})}),
               "calls itself (local.F -> local.G -> local.F)");
  {  // through an If branch in the body: found when the branch is imported
    NP i = node("If", {"C"}, {"Y"});
    add_nodes(graph_attr(i, "then_branch"), {node("F", {"X", "C"}, {"T"}, "local")});
    i.mutable_attribute(0)->mutable_g()->add_output()->set_name("T");
    add_nodes(graph_attr(i, "else_branch"), {node("Neg", {"X"}, {"E"})});
    i.mutable_attribute(1)->mutable_g()->add_output()->set_name("E");
    auto m = model({node("F", {"a", "c"}, {"y"}, "local")}, {{"a", F32, {2}}, {"c", BOOL, {}}}, {"y"}, {function("F", {"X", "C"}, {"Y"}, {i})});
    EXPECT_ERROR(load(m), "calls itself (local.F -> local.F)");
  }
  EXPECT_ERROR(call({function("F", {"X"}, {"Y", "Q"}, {node("Relu", {"X"}, {"Y"})})}), "'local.F': output 'Q' is not produced by any node of its body");
  EXPECT_ERROR(call({relu, relu}), "'local.F' is defined more than once");
  EXPECT_ERROR(call({relu}, node("F", {"a", "a", "a"}, {"y"}, "local")), "calls function 'local.F' with 3 inputs; it declares 1");
  EXPECT_ERROR(call({relu}, node("F", {"a"}, {"y", "y2"}, "local")), "with 2 outputs; it declares 1");
  EXPECT_ERROR(call({function("F", {"X"}, {"Y"}, {with(node("Cast", {"X"}, {"Y"}), {attr_ref("to", "dtype", AP::INT)})}, {"dtype"})}),
               "without attribute 'dtype' (it has no default)");
  EXPECT_ERROR(call({function("F", {"X"}, {"Y"}, {node("Add", {"X", "W"}, {"Y"})})}), "reads 'W', which is neither an input of the function");
  EXPECT_ERROR(call({function("F", {"X", "X"}, {"Y"}, {node("Relu", {"X"}, {"Y"})})}), "input 'X' is empty or declared twice");
  EXPECT_ERROR(call({function("F", {"X"}, {"Y"}, {node("Relu", {"X"}, {"Y"})}, {}, {}, 99)}), "opset_import ai.onnx version 99 is outside");
  {
    auto f = function("F", {"X"}, {"Y"}, {node("Relu", {"X"}, {"Y"}, "nowhere")});
    EXPECT_ERROR(call({f}), "uses domain nowhere, which neither its nor the model's opset_import lists");
  }
  {  // 300 functions, each calling the next
    std::vector<onnx::FunctionProto> chain;
    for (int k = 0; k < 300; ++k)
      chain.push_back(function("F" + std::to_string(k), {"X"}, {"Y"}, {node(k == 299 ? "Relu" : "F" + std::to_string(k + 1), {"X"}, {"Y"}, k == 299 ? "" : "local")}));
    EXPECT_ERROR(call(chain, node("F0", {"a"}, {"y"}, "local")), "model-local function calls nest deeper than 256");
  }
  {  // each of 24 functions calls the next twice: 2^24 nodes, refused at the bound, quickly
    std::vector<onnx::FunctionProto> fan;
    for (int k = 0; k < 24; ++k) {
      const std::string next = "F" + std::to_string(k + 1);
      fan.push_back(k == 23 ? function("F23", {"X"}, {"Y"}, {node("Relu", {"X"}, {"Y"})})
                            : function("F" + std::to_string(k), {"X"}, {"Y"}, {node(next, {"X"}, {"T"}, "local"), node(next, {"T"}, {"Y"}, "local")}));
    }
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_ERROR(call(fan, node("F0", {"a"}, {"y"}, "local")), "inlining model-local functions makes more than 1048576 nodes");
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 20.0);
  }
}

}  // namespace
}  // namespace fusor
