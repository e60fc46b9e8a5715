// The sequence ops and Optional (ir/ops/sequence.cpp), imported from ONNX protos: each is
// resolved at shape inference into tensor ops, so the model runs on every backend and its
// static graph holds no sequence op. Expected values are computed here from the inputs.
#include <gtest/gtest.h>

#include "backends/backend.h"
#include "runtime/conform.h"
#include "frontend/onnx_import.h"
#include "runtime/session.h"
#include "test_util.h"
#include "onnx_test_util.h"

namespace fusor {
namespace {

using testing::attr_i;

onnx::NodeProto* node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
  return testing::onnx_node(g, op, std::move(in), std::move(out));
}
void input(onnx::GraphProto* g, const std::string& name, int elem, const std::vector<int64_t>& dims) {
  testing::onnx_value_info(g->add_input(), name, elem, dims);
}
void int_constant(onnx::GraphProto* g, const std::string& name, int64_t v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_int64_data(v);
}
constexpr int kF32 = onnx::TensorProto::FLOAT;

// x[i0, i1, i2] of a contiguous [d0, d1, d2] tensor.
double at3(const Tensor& x, int64_t i0, int64_t i1, int64_t i2) { return x.get((i0 * x.shape()[1] + i1) * x.shape()[2] + i2); }

void expect_no_sequence_op(const Graph& g, const std::vector<Tensor>& in) {
  for (const Node& n : specialize(g, in).nodes) {
    EXPECT_EQ(n.op_type.find("Sequence"), std::string::npos) << n.label() << " left in the static graph";
    EXPECT_NE(n.op_type, "SplitToSequence");
    EXPECT_NE(n.op_type, "ConcatFromSequence");
  }
}

// X [2,3,4], Y [1,3,4], Z [3,3,4]:
//   s = Insert(Insert(Insert(Empty, X), Y), Z, -1)    -> [X, Z, Y] (-1 inserts before the last)
//   a = At(s, 1) * 2 = 2 Z;  len = Length(s) = 3;  cat = ConcatFromSequence(s, axis 0) = [X; Z; Y]
//   e = At(Identity(Erase(s, 0)), -1) = Y
//   halves = SplitToSequence(X, split = 3, axis = 2): [2,3,3], [2,3,1] -> last = At(halves, 1)
//   stack = ConcatFromSequence(SplitToSequence(X, axis 1, keepdims 0), axis -1, new_axis 1)
//           = X with its axes 1 and 2 swapped: stack[i, k, j] = X[i, j, k]
onnx::ModelProto ops_model() {
  onnx::ModelProto m = testing::onnx_model("sequence_ops", 8, 17);
  auto* g = m.mutable_graph();
  input(g, "X", kF32, {2, 3, 4});
  input(g, "Y", kF32, {1, 3, 4});
  input(g, "Z", kF32, {3, 3, 4});
  int_constant(g, "minus1", -1);
  int_constant(g, "one", 1);
  int_constant(g, "zero", 0);
  int_constant(g, "three", 3);
  auto* two = g->add_initializer();
  two->set_name("two");
  two->set_data_type(kF32);
  two->add_float_data(2.0f);
  node(g, "SequenceEmpty", {}, {"s0"});
  node(g, "SequenceInsert", {"s0", "X"}, {"s1"});
  node(g, "SequenceInsert", {"s1", "Y"}, {"s2"});
  node(g, "SequenceInsert", {"s2", "Z", "minus1"}, {"s"});
  node(g, "SequenceAt", {"s", "one"}, {"a0"});
  node(g, "Mul", {"a0", "two"}, {"a"});
  node(g, "SequenceLength", {"s"}, {"len"});
  attr_i(node(g, "ConcatFromSequence", {"s"}, {"cat"}), "axis", 0);
  node(g, "SequenceErase", {"s", "zero"}, {"e0"});
  node(g, "Identity", {"e0"}, {"e1"});
  node(g, "SequenceAt", {"e1", "minus1"}, {"e"});
  attr_i(node(g, "SplitToSequence", {"X", "three"}, {"halves"}), "axis", 2);
  node(g, "SequenceAt", {"halves", "one"}, {"last"});
  auto* rows = node(g, "SplitToSequence", {"X"}, {"rows"});
  attr_i(rows, "axis", 1);
  attr_i(rows, "keepdims", 0);
  auto* st = node(g, "ConcatFromSequence", {"rows"}, {"stack"});
  attr_i(st, "axis", -1);
  attr_i(st, "new_axis", 1);
  for (const char* o : {"a", "len", "cat", "e", "last", "stack"}) g->add_output()->set_name(o);
  return m;
}

TEST(Sequence, OpsResolveAndMatchOnEveryBackend) {
  const Graph g = testing::load_proto(ops_model());
  const Tensor x = testing::random_tensor(DType::f32, {2, 3, 4}, 11);
  const Tensor y = testing::random_tensor(DType::f32, {1, 3, 4}, 12);
  const Tensor z = testing::random_tensor(DType::f32, {3, 3, 4}, 13);
  expect_no_sequence_op(g, {x, y, z});
  for (const std::string& be : testing::usable_backends()) {
    SCOPED_TRACE(be);
    auto out = Session(g, be).run({x, y, z});
    ASSERT_EQ(out.size(), 6u);
    ASSERT_EQ(out[0].shape(), (Shape{3, 3, 4}));
    for (int64_t i = 0; i < z.numel(); ++i) EXPECT_EQ(out[0].get(i), 2 * z.get(i)) << "a " << i;
    ASSERT_EQ(out[1].dtype(), DType::i64);
    EXPECT_EQ(out[1].shape(), Shape{});
    EXPECT_EQ(out[1].get_int(0), 3);
    ASSERT_EQ(out[2].shape(), (Shape{6, 3, 4}));
    const int64_t block = 12;
    for (int64_t i = 0; i < out[2].numel(); ++i) {
      const int64_t r = i / block;  // rows 0-1 X, 2-4 Z, 5 Y
      const double want = r < 2 ? x.get(i) : r < 5 ? z.get(i - 2 * block) : y.get(i - 5 * block);
      EXPECT_EQ(out[2].get(i), want) << "cat " << i;
    }
    ASSERT_EQ(out[3].shape(), (Shape{1, 3, 4}));
    for (int64_t i = 0; i < y.numel(); ++i) EXPECT_EQ(out[3].get(i), y.get(i)) << "e " << i;
    ASSERT_EQ(out[4].shape(), (Shape{2, 3, 1}));
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(out[4].get(i * 3 + j), at3(x, i, j, 3)) << "last " << i << "," << j;
    ASSERT_EQ(out[5].shape(), (Shape{2, 4, 3}));
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t k = 0; k < 4; ++k)
        for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(out[5].get((i * 4 + k) * 3 + j), at3(x, i, j, k)) << "stack " << i << k << j;
  }
}

// A position fed at run time is specialised on (one executable per value), negative ones
// counting from the back; one past the end is a clear error.
TEST(Sequence, RuntimePositionIsSpecialisedOn) {
  onnx::ModelProto m = testing::onnx_model("sequence_at_runtime", 8, 17);
  auto* g = m.mutable_graph();
  input(g, "X", kF32, {2, 3});
  input(g, "Y", kF32, {2, 3});
  input(g, "pos", onnx::TensorProto::INT64, {});
  node(g, "SequenceConstruct", {"X", "Y"}, {"s"});
  node(g, "SequenceAt", {"s", "pos"}, {"t"});
  node(g, "Neg", {"t"}, {"out"});
  g->add_output()->set_name("out");
  const Graph gr = testing::load_proto(m);
  const Tensor x = testing::random_tensor(DType::f32, {2, 3}, 21), y = testing::random_tensor(DType::f32, {2, 3}, 22);
  for (const std::string& be : testing::usable_backends()) {
    SCOPED_TRACE(be);
    Session s(gr, be);
    for (int64_t p : {0, 1, -1, -2}) {
      auto out = s.run({x, y, testing::ints_of({}, {p})});
      const Tensor& want = (p == 0 || p == -2) ? x : y;
      for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(out[0].get(i), -want.get(i)) << "pos " << p << " element " << i;
    }
    try {
      s.run({x, y, testing::ints_of({}, {2})});
      ADD_FAILURE() << "expected an error for position 2";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("position 2 is out of range for a sequence of 2"), std::string::npos) << e.what();
    }
  }
}

// SequenceMap-17: the body runs once per element (elements of different shapes), a tensor
// input passed whole to each, an outer value read through capture; two output sequences.
TEST(Sequence, MapInlinesTheBodyPerElement) {
  onnx::ModelProto m = testing::onnx_model("sequence_map", 8, 17);
  auto* g = m.mutable_graph();
  input(g, "X", kF32, {2, 3});
  input(g, "Y", kF32, {4, 3});
  input(g, "b", kF32, {3});
  input(g, "k", kF32, {1});
  node(g, "SequenceConstruct", {"X", "Y"}, {"s"});
  auto* map = node(g, "SequenceMap", {"s", "b"}, {"plus", "scaled"});
  auto* body = testing::onnx_graph_attr(map, "body");
  testing::onnx_value_info(body->add_input(), "el", kF32, {});
  body->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  testing::onnx_value_info(body->add_input(), "bias", kF32, {3});
  node(body, "Add", {"el", "bias"}, {"sum"});
  node(body, "Mul", {"el", "k"}, {"prod"});  // k: an outer value
  for (const char* o : {"sum", "prod"}) body->add_output()->set_name(o);
  attr_i(node(g, "ConcatFromSequence", {"plus"}, {"p"}), "axis", 0);
  attr_i(node(g, "ConcatFromSequence", {"scaled"}, {"q"}), "axis", 0);
  for (const char* o : {"p", "q"}) g->add_output()->set_name(o);
  const Graph gr = testing::load_proto(m);
  const Tensor x = testing::random_tensor(DType::f32, {2, 3}, 31), y = testing::random_tensor(DType::f32, {4, 3}, 32);
  const Tensor b = testing::random_tensor(DType::f32, {3}, 33), k = testing::random_tensor(DType::f32, {1}, 34);
  expect_no_sequence_op(gr, {x, y, b, k});
  for (const std::string& be : testing::usable_backends()) {
    SCOPED_TRACE(be);
    auto out = Session(gr, be).run({x, y, b, k});
    ASSERT_EQ(out[0].shape(), (Shape{6, 3}));
    ASSERT_EQ(out[1].shape(), (Shape{6, 3}));
    for (int64_t i = 0; i < 18; ++i) {
      const double e = i < 6 ? x.get(i) : y.get(i - 6);
      EXPECT_EQ(out[0].get(i), static_cast<double>(static_cast<float>(e + b.get(i % 3)))) << "sum " << i;
      EXPECT_EQ(out[1].get(i), static_cast<double>(static_cast<float>(e * k.get(0)))) << "prod " << i;
    }
  }
}

// A list built in a counted Loop (TorchScript's `for i in range(n): out.append(...)`): the loop
// unrolls and its carried sequence resolves; a trip count fed at run time is specialised on.
// With a trip count past the unroll limit (1,024 for a loop carrying a sequence), the carried
// sequence is a clear error.
onnx::ModelProto loop_model(int64_t fixed_trips) {
  onnx::ModelProto m = testing::onnx_model("sequence_loop", 8, 17);
  auto* g = m.mutable_graph();
  testing::onnx_value_info(g->add_input(), "X", kF32, {fixed_trips > 0 ? fixed_trips : 1, 4}, fixed_trips <= 0);
  int_constant(g, "zero", 0);
  auto* t = g->add_initializer();
  t->set_name("yes");
  t->set_data_type(onnx::TensorProto::BOOL);
  t->add_int32_data(1);
  node(g, "Shape", {"X"}, {"shape"});
  node(g, "Gather", {"shape", "zero"}, {"rows"});
  node(g, "SequenceEmpty", {}, {"empty"});
  auto* loop = node(g, "Loop", {"rows", "yes", "empty"}, {"list"});
  auto* body = testing::onnx_graph_attr(loop, "body");
  testing::onnx_value_info(body->add_input(), "i", onnx::TensorProto::INT64, {});
  testing::onnx_value_info(body->add_input(), "cond", onnx::TensorProto::BOOL, {});
  auto* seq_in = body->add_input();
  seq_in->set_name("acc");
  seq_in->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(kF32);
  auto* two = body->add_initializer();
  two->set_name("two");
  two->set_data_type(kF32);
  two->add_float_data(2.0f);
  attr_i(node(body, "Gather", {"X", "i"}, {"row"}), "axis", 0);
  node(body, "Mul", {"row", "two"}, {"twice"});
  node(body, "SequenceInsert", {"acc", "twice"}, {"acc_out"});
  node(body, "Identity", {"cond"}, {"cond_out"});
  body->add_output()->set_name("cond_out");
  auto* seq_out = body->add_output();
  seq_out->set_name("acc_out");
  seq_out->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(kF32);
  auto* st = node(g, "ConcatFromSequence", {"list"}, {"stack"});
  attr_i(st, "axis", 0);
  attr_i(st, "new_axis", 1);
  node(g, "SequenceLength", {"list"}, {"len"});
  for (const char* o : {"stack", "len"}) g->add_output()->set_name(o);
  return m;
}

TEST(Sequence, CountedLoopBuildingAListUnrolls) {
  const Graph g = testing::load_proto(loop_model(0));
  for (int64_t rows : {3, 5}) {
    const Tensor x = testing::random_tensor(DType::f32, {rows, 4}, 50 + rows);
    expect_no_sequence_op(g, {x});
    for (const Node& n : specialize(g, {x}).nodes) EXPECT_NE(n.op_type, "Loop") << "the counted loop unrolls";
    for (const std::string& be : testing::usable_backends()) {
      SCOPED_TRACE(be + " rows " + std::to_string(rows));
      auto out = Session(g, be).run({x});
      ASSERT_EQ(out[0].shape(), (Shape{rows, 4}));
      for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(out[0].get(i), 2 * x.get(i)) << i;
      EXPECT_EQ(out[1].get_int(0), rows);
    }
  }
  const Tensor big = testing::random_tensor(DType::f32, {1025, 4}, 7);
  try {
    Session(testing::load_proto(loop_model(1025)), "ref").run({big});
    ADD_FAILURE() << "expected an error past the unroll limit";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'empty' is a sequence, which Loop does not take"), std::string::npos) << e.what();
  }
}

// Optional-15: holding a tensor it is that tensor; empty, its readers see an omitted input.
TEST(Sequence, OptionalOfATensorAndEmpty) {
  onnx::ModelProto m = testing::onnx_model("optional_op", 8, 18);
  auto* g = m.mutable_graph();
  input(g, "X", kF32, {3});
  node(g, "Optional", {"X"}, {"ox"});
  auto* empty = node(g, "Optional", {}, {"none"});
  auto* a = empty->add_attribute();
  a->set_name("type");
  a->set_type(onnx::AttributeProto::TYPE_PROTO);
  a->mutable_tp()->mutable_tensor_type()->set_elem_type(kF32);
  node(g, "OptionalHasElement", {"ox"}, {"has"});
  node(g, "OptionalHasElement", {"none"}, {"has_none"});
  node(g, "OptionalGetElement", {"ox"}, {"got"});
  node(g, "Abs", {"got"}, {"y"});
  for (const char* o : {"has", "has_none", "y"}) g->add_output()->set_name(o);
  const Graph gr = testing::load_proto(m);
  const Tensor x = testing::random_tensor(DType::f32, {3}, 41);
  for (const std::string& be : testing::usable_backends()) {
    SCOPED_TRACE(be);
    auto out = Session(gr, be).run({x});
    EXPECT_EQ(out[0].get_int(0), 1);
    EXPECT_EQ(out[1].get_int(0), 0);
    for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(out[2].get(i), std::abs(x.get(i)));
  }
}

// Misuse ends in one line naming what is wrong.
TEST(Sequence, MisuseIsAClearError) {
  struct Case {
    const char* what;
    std::function<void(onnx::GraphProto*)> build;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"a sequence fed to Relu",
       [](onnx::GraphProto* g) {
         node(g, "SequenceConstruct", {"X"}, {"s"});
         node(g, "Relu", {"s"}, {"out"});
       },
       "input 0 's' is a sequence, which Relu does not take"},
      {"a sequence as the graph output",
       [](onnx::GraphProto* g) { node(g, "SequenceConstruct", {"X", "X"}, {"out"}); },
       "graph output 'out' is a sequence"},
      {"a position past the end",
       [](onnx::GraphProto* g) {
         int_constant(g, "five", 5);
         node(g, "SequenceConstruct", {"X"}, {"s"});
         node(g, "SequenceAt", {"s", "five"}, {"out"});
       },
       "position 5 is out of range for a sequence of 1 tensor"},
      {"erasing from an empty sequence",
       [](onnx::GraphProto* g) {
         node(g, "SequenceEmpty", {}, {"s"});
         node(g, "SequenceErase", {"s"}, {"e"});
         node(g, "SequenceLength", {"e"}, {"out"});
       },
       "erases from an empty sequence"},
      {"a split of 0",
       [](onnx::GraphProto* g) {
         int_constant(g, "nil", 0);
         node(g, "SplitToSequence", {"X", "nil"}, {"s"});
         node(g, "SequenceLength", {"s"}, {"out"});
       },
       "split must be positive, got 0"},
      {"a split along a dim of 2^31 (a tensor with no elements)",
       [](onnx::GraphProto* g) {
         auto* t = g->add_initializer();
         t->set_name("huge_shape");
         t->set_data_type(onnx::TensorProto::INT64);
         t->add_dims(2);
         t->add_int64_data(int64_t{1} << 31);
         t->add_int64_data(0);
         node(g, "ConstantOfShape", {"huge_shape"}, {"empty"});
         node(g, "SplitToSequence", {"empty"}, {"s"});
         node(g, "SequenceLength", {"s"}, {"out"});
       },
       "would make a sequence of 2147483648 tensors (at most 65536)"},
      {"a tensor where a sequence goes",
       [](onnx::GraphProto* g) { node(g, "SequenceLength", {"X"}, {"out"}); },
       "input 0 'X' is a tensor, not a sequence"},
      {"mixed dtypes",
       [](onnx::GraphProto* g) {
         int_constant(g, "i", 1);
         node(g, "SequenceConstruct", {"X", "i"}, {"s"});
         node(g, "SequenceLength", {"s"}, {"out"});
       },
       "a sequence holds one dtype, got float32 and int64"},
  };
  for (const Case& c : cases) {
    onnx::ModelProto m = testing::onnx_model("sequence_misuse", 8, 17);
    auto* g = m.mutable_graph();
    input(g, "X", kF32, {2, 3});
    c.build(g);
    g->add_output()->set_name("out");
    try {
      Session(testing::load_proto(m), "ref").run({testing::random_tensor(DType::f32, {2, 3}, 5)});
      ADD_FAILURE() << c.what << ": expected an error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << c.what << ": " << e.what();
    }
  }
}

// The ONNX repository's test_sequence_model1-8 and a TorchScript list-building export
// (tests/data/sequence, with their stored outputs) pass on every backend, GPUs without host steps.
TEST(Sequence, StoredModelsPassOnEveryBackend) {
  const std::string root = std::string(FUSOR_SOURCE_DIR) + "/tests/data/sequence/";
  std::vector<std::string> cases{"torchscript_list_loop"};
  for (int i = 1; i <= 8; ++i) cases.push_back("test_sequence_model" + std::to_string(i));
  for (const std::string& c : cases)
    for (const std::string& be : testing::usable_backends()) {
      ConformOptions opts;
      opts.fallback = be == "ref" || be == "cpu";
      const CaseResult r = run_case(root + c, be, opts);
      EXPECT_EQ(r.status, CaseStatus::passed) << c << " on " << be << ": " << r.detail;
      EXPECT_EQ(r.host_nodes, 0) << c << " on " << be;
    }
}

}  // namespace
}  // namespace fusor
