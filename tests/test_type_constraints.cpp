// The ONNX schemas' type constraints on a model's nodes (ir/type_constraints.h): a node whose
// input dtype its schema does not allow is an invalid model, as onnxruntime says at load
// ("Type (tensor(bool)) of input parameter ... is invalid"); the same ops on allowed dtypes run
// and agree across backends; the nodes fusor's own rewrites make are not held to the schema.
#include <gtest/gtest.h>

#include <cstring>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "frontend/onnx_import.h"
#include "fuzz_harness.h"
#include "ir/type_constraints.h"
#include "numerics_check.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

using testing::error_of;
using testing::ints_of;
using testing::random_tensor;
using testing::tensor_of;

struct Case {
  const char* op;
  std::vector<DType> in;
  DType bad;  // the dtype of input `at` that the schema refuses
  int at;
  int opset;
  const char* want;  // in the message
};

Graph load_and_specialize(const onnx::ModelProto& m, const Tensor& x) {
  return specialize(load_onnx_from_bytes(m.SerializeAsString(), "."), {x});
}

Graph unary_graph(const char* op, const std::vector<DType>& in, int opset) {
  GraphBuilder b(std::string("types_") + op, opset);
  b.check_onnx_types();
  std::vector<int> ids;
  for (size_t k = 0; k < in.size(); ++k) ids.push_back(b.input("x" + std::to_string(k), in[k], {2, 3}));
  b.output(b.op(op, ids));
  return b.build();
}

std::vector<Tensor> feed_for(const std::vector<DType>& in, uint64_t seed) {
  std::vector<Tensor> f;
  for (DType d : in) f.push_back(random_tensor(d, {2, 3}, seed++, 1.0, 5.0));
  return f;
}

TEST(TypeConstraints, InputsOutsideTheSchemaAreInvalidModels) {
  // Each was accepted and computed before (ref, cpu and vulkan), onnxruntime refuses each.
  const std::vector<Case> cases = {
      {"Abs", {DType::boolean}, DType::boolean, 0, 17, "Abs-13 does not allow there"},
      {"Neg", {DType::u32}, DType::u32, 0, 17, "Neg-13 does not allow there"},
      {"Relu", {DType::u8}, DType::u8, 0, 17, "Relu-14 does not allow there"},
      {"Less", {DType::boolean, DType::boolean}, DType::boolean, 0, 17, "Less-13"},
      {"Mod", {DType::boolean, DType::boolean}, DType::boolean, 0, 17, "Mod-13"},
      {"ReduceMean", {DType::boolean}, DType::boolean, 0, 17, "ReduceMean-13"},
      {"ArgMax", {DType::boolean}, DType::boolean, 0, 17, "ArgMax-13"},
      {"Relu", {DType::i32}, DType::i32, 0, 13, "Relu-13 does not allow there"},  // integer Relu is opset 14's
  };
  for (const Case& c : cases) {
    const Graph g = unary_graph(c.op, c.in, c.opset);
    const std::string msg = error_of([&] { specialize(g, feed_for(c.in, 3)); });
    EXPECT_NE(msg.find(c.want), std::string::npos) << c.op << ": " << msg;
    EXPECT_NE(msg.find(std::string("input ") + std::to_string(c.at) + " ('x" + std::to_string(c.at) + "') is " + dtype_name(c.bad)),
              std::string::npos)
        << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
  // ReduceSum's axes are tensor(int64): float axes are refused, not truncated.
  GraphBuilder b("float_axes", 18);
  b.check_onnx_types();
  const int x = b.input("x", DType::f32, {2, 3});
  b.output(b.op("ReduceSum", {x, b.constant("axes", tensor_of({1}, {1.0}))}));
  EXPECT_ERROR(specialize(b.build(), {random_tensor(DType::f32, {2, 3}, 1)}), "input 1 ('axes') is float32, which ReduceSum-13 does not allow there (it takes int64)");
  // OneHot's depth is numeric, not bool.
  GraphBuilder o("bool_depth", 17);
  o.check_onnx_types();
  const int oi = o.input("i", DType::i64, {3});
  o.output(o.op("OneHot", {oi, o.constant("depth", ints_of({}, {1}, DType::boolean)), o.constant("values", tensor_of({2}, {0, 1}))}));
  EXPECT_ERROR(specialize(o.build(), {ints_of({3}, {0, 1, 0})}), "input 1 ('depth') is bool");
  // Inputs bound to one type parameter share one dtype (Where's X and Y).
  GraphBuilder w("where_mixed", 17);
  w.check_onnx_types();
  const int wc = w.input("c", DType::boolean, {2}), wx = w.input("x", DType::f32, {2}), wy = w.input("y", DType::f16, {2});
  w.output(w.op("Where", {wc, wx, wy}));
  const std::string mixed = error_of([&] { specialize(w.build(), {Tensor(DType::boolean, {2}), Tensor(DType::f32, {2}), Tensor(DType::f16, {2})}); });
  EXPECT_TRUE(mixed.find("float32") != std::string::npos && mixed.find("float16") != std::string::npos) << mixed;
}

TEST(TypeConstraints, AllowedDtypesRunAndAgree) {
  // The same ops on dtypes their schemas allow: ref computes them, cpu and vulkan agree exactly.
  const std::vector<std::pair<const char*, std::vector<DType>>> ok = {
      {"Abs", {DType::i8}},           {"Neg", {DType::i32}},          {"Relu", {DType::i16}},
      {"Less", {DType::u16, DType::u16}}, {"Mod", {DType::u8, DType::u8}}, {"ReduceMean", {DType::i32}},
      {"ArgMax", {DType::u8}},        {"Sum", {DType::f16, DType::f16, DType::f16}}};
  for (const auto& [op, in] : ok) {
    const std::vector<Tensor> feed = feed_for(in, 11);
    const std::string name = op;
    const numerics_check::Build f = [&name](GraphBuilder& b, const std::vector<int>& ids) { return b.op(name, ids); };
    const Graph g = numerics_check::make_graph(feed, f, false);
    const Tensor want = run_on_backend("ref", specialize(g, feed), feed).at(0);
    numerics_check::check_everywhere(name, feed, f, want);  // cpu, vulkan (fused and not), CUDA compiled
  }
}

// A Loop body reading an outer bfloat16 value: the importer appends it to the node's inputs, but
// it is no formal input of Loop-13 (whose V lacks bfloat16): the model is valid (onnxruntime runs
// it) and was refused (review of round 31).
TEST(TypeConstraints, OuterValuesASubgraphReadsAreNotFormalInputs) {
  auto m = fuzz::new_model(14);
  auto* g = m.mutable_graph();
  fuzz::set_type(g->add_input(), "X", onnx::TensorProto::BFLOAT16, {2});
  fuzz::add_init_i64(g, "M", {}, {2});
  fuzz::add_init(g, "s0", {2}, {0.5f, -1.0f});
  auto* body = fuzz::add_loop(g, "outer_bf16", "s0", "sf");
  fuzz::set_type(body->add_input(), "s", onnx::TensorProto::FLOAT, {2});
  fuzz::add_node(body, "Identity", {"cin"}, {"cout"});
  auto* cast = fuzz::add_node(body, "Cast", {"X"}, {"xf"});
  auto* to = cast->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::FLOAT);
  fuzz::add_node(body, "Add", {"s", "xf"}, {"s_out"});
  fuzz::set_type(body->add_output(), "cout", onnx::TensorProto::BOOL, {});
  fuzz::set_type(body->add_output(), "s_out", onnx::TensorProto::FLOAT, {2});
  fuzz::set_type(g->add_output(), "sf", onnx::TensorProto::FLOAT, {2});
  const Graph lg = load_onnx_from_bytes(m.SerializeAsString(), ".");
  Tensor x(DType::bf16, {2});
  x.set(0, 1.5);
  x.set(1, -0.25);
  const Tensor y = run_on_backend("ref", specialize(lg, {x}), {x}).at(0);
  EXPECT_EQ(y.get(0), 3.5);   // 0.5 + 2 * 1.5
  EXPECT_EQ(y.get(1), -1.5);  // -1 + 2 * -0.25
  // The Loop's own inputs are still checked: a float M is refused.
  g->mutable_initializer(0)->set_data_type(onnx::TensorProto::FLOAT);
  g->mutable_initializer(0)->clear_int64_data();
  g->mutable_initializer(0)->add_float_data(2.0f);
  EXPECT_ERROR(load_and_specialize(m, x), "input 0 ('M') is float32, which Loop-13 does not allow there");
}

TEST(TypeConstraints, VersionsAndDomainsFollowTheirOwnSchema) {
  // Loop's state values are variadic but each has its own dtype; an op of another domain and a
  // node fusor's own rewrite makes are not checked.
  Graph g;
  g.opset = 17;
  const int a = g.add_value("a", DType::boolean, {2}, true), y = g.add_value("y", DType::boolean, {2}, true);
  Node n;
  n.op_type = "Abs";
  n.inputs = {a};
  n.outputs = {y};
  n.opset = 17;
  n.domain = "com.microsoft";
  EXPECT_NO_THROW(check_onnx_type_constraints(g, n));
  n.domain = "";
  EXPECT_ERROR(check_onnx_type_constraints(g, n), "Abs-13");
  n.opset = 5;  // Abs-1: float types only, by name
  EXPECT_ERROR(check_onnx_type_constraints(g, n), "Abs-1 does not allow there (it takes float32, float16, float64)");
  // ai.onnx.ml at its own opset: Scaler takes float, double, int64, int32.
  n.op_type = "Scaler";
  n.domain = "ai.onnx.ml";
  n.opset = 3;
  EXPECT_ERROR(check_onnx_type_constraints(g, n), "is bool, which Scaler-1 does not allow there (it takes float32, int32, int64, float64)");
  g.values[static_cast<size_t>(a)].dtype = DType::i32;
  EXPECT_NO_THROW(check_onnx_type_constraints(g, n));
}

}  // namespace
}  // namespace fusor
