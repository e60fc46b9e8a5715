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
    EXPECT_ERROR(s.run({x, y, testing::ints_of({}, {2})}), "position 2 is out of range for a sequence of 2");
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
  EXPECT_ERROR(Session(testing::load_proto(loop_model(1025)), "ref").run({big}), "'empty' is a sequence, which Loop does not take");
}

// A Loop carrying a list whose cond_out reads the list (its length) or the iteration number: the
// first iteration folding cond_out to true proves nothing about the others, so the loop is
// followed iteration by iteration and stops where onnxruntime does (it ran all 10 trips). One
// whose cond_out reads run-time element values cannot unroll: a clear error. TorchScript's
// `for p in parts` (SequenceAt(parts, i) in the body) unrolls too.
onnx::ModelProto list_loop_model(const std::string& stop) {
  onnx::ModelProto m = testing::onnx_model("sequence_while", 8, 17);
  auto* g = m.mutable_graph();
  input(g, "X", kF32, {2, 4});
  int_constant(g, "trips", 10);
  attr_i(node(g, "SplitToSequence", {"X"}, {"parts"}), "axis", 0);
  node(g, "SequenceConstruct", {"X"}, {"start"});
  auto* loop = node(g, "Loop", {"trips", "", "start"}, {"list"});
  auto* body = testing::onnx_graph_attr(loop, "body");
  testing::onnx_value_info(body->add_input(), "i", onnx::TensorProto::INT64, {});
  testing::onnx_value_info(body->add_input(), "cond", onnx::TensorProto::BOOL, {});
  auto* seq_in = body->add_input();
  seq_in->set_name("acc");
  seq_in->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(kF32);
  int_constant(body, "last_at", -1);
  int_constant(body, "four", 4);
  int_constant(body, "two", 2);
  auto* one = body->add_initializer();
  one->set_name("one");
  one->set_data_type(kF32);
  one->add_float_data(1.0f);
  if (stop == "for_each") {  // acc_out = acc + [-parts[i]]: X, -row 0, -row 1, ... (parts has 2)
    node(body, "SequenceAt", {"parts", "i"}, {"part"});
    node(body, "Neg", {"part"}, {"next"});
  } else {  // acc_out = acc + [acc[-1] + 1]
    node(body, "SequenceAt", {"acc", "last_at"}, {"last"});
    node(body, "Add", {"last", "one"}, {"next"});
  }
  node(body, "SequenceInsert", {"acc", "next"}, {"acc_out"});
  if (stop == "length") {
    node(body, "SequenceLength", {"acc_out"}, {"len"});
    node(body, "Less", {"len", "four"}, {"cond_out"});
  } else if (stop == "iteration") {
    node(body, "Less", {"i", "two"}, {"cond_out"});
  } else if (stop == "value") {
    node(body, "ReduceMax", {"next"}, {"top"});
    node(body, "Less", {"top", "one"}, {"cond_out"});
  } else {
    node(body, "Identity", {"cond"}, {"cond_out"});
  }
  body->add_output()->set_name("cond_out");
  auto* seq_out = body->add_output();
  seq_out->set_name("acc_out");
  seq_out->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(kF32);
  attr_i(node(g, "ConcatFromSequence", {"list"}, {"cat"}), "axis", 0);
  g->add_output()->set_name("cat");
  return m;
}

TEST(Sequence, LoopWhoseConditionReadsTheListStopsWhereItTurnsFalse) {
  const Tensor x = testing::random_tensor(DType::f32, {2, 4}, 61);
  for (const std::string stop : {"length", "iteration"}) {
    const Graph g = testing::load_proto(list_loop_model(stop));
    expect_no_sequence_op(g, {x});
    for (const std::string& be : testing::usable_backends()) {
      SCOPED_TRACE(stop + " on " + be);
      auto out = Session(g, be).run({x});
      ASSERT_EQ(out[0].shape(), (Shape{8, 4})) << "X, X + 1, X + 2, X + 3: three iterations ran";
      for (int64_t i = 0; i < out[0].numel(); ++i) {
        float want = static_cast<float>(x.get(i % 8));
        for (int64_t k = 0; k < i / 8; ++k) want += 1.0f;  // element k is ((X + 1) + 1) ..., in float32
        EXPECT_EQ(out[0].get(i), static_cast<double>(want)) << i;
      }
    }
  }
  {
    const Graph g = testing::load_proto(list_loop_model("for_each"));
    // 10 trips over a list of 2 parts: the third reads parts[2], which does not exist.
    EXPECT_ERROR(Session(g, "ref").run({x}), "position 2 is out of range for a sequence of 2");
  }
  EXPECT_ERROR(Session(testing::load_proto(list_loop_model("value")), "ref").run({x}), "'start' is a sequence, which Loop does not take");
}

// TorchScript's `[f(p) for p in x.unbind(0)]`: Loop(SequenceLength(parts)) whose body reads
// SequenceAt(parts, i), over SplitToSequence(x, 1, keepdims = 0), which onnxruntime (and the
// exporter) read as dropping the axis; a scalar split of 2 keeps it (the spec ignores keepdims).
TEST(Sequence, TorchScriptUnbindComprehensionUnrolls) {
  onnx::ModelProto m = testing::onnx_model("unbind_comprehension", 8, 17);
  auto* g = m.mutable_graph();
  input(g, "X", kF32, {3, 4});
  int_constant(g, "one", 1);
  int_constant(g, "two", 2);
  auto* yes = g->add_initializer();
  yes->set_name("yes");
  yes->set_data_type(onnx::TensorProto::BOOL);
  yes->add_int32_data(1);
  auto* split = node(g, "SplitToSequence", {"X", "one"}, {"rows"});
  attr_i(split, "axis", 0);
  attr_i(split, "keepdims", 0);
  auto* pairs = node(g, "SplitToSequence", {"X", "two"}, {"pairs"});
  attr_i(pairs, "axis", 0);
  attr_i(pairs, "keepdims", 0);
  node(g, "SequenceLength", {"rows"}, {"n"});
  node(g, "SequenceEmpty", {}, {"empty"});
  auto* loop = node(g, "Loop", {"n", "yes", "empty"}, {"list"});
  auto* body = testing::onnx_graph_attr(loop, "body");
  testing::onnx_value_info(body->add_input(), "i", onnx::TensorProto::INT64, {});
  testing::onnx_value_info(body->add_input(), "cond", onnx::TensorProto::BOOL, {});
  auto* seq_in = body->add_input();
  seq_in->set_name("acc");
  seq_in->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(kF32);
  node(body, "SequenceAt", {"rows", "i"}, {"row"});
  node(body, "Neg", {"row"}, {"neg"});
  node(body, "SequenceInsert", {"acc", "neg"}, {"acc_out"});
  node(body, "Identity", {"cond"}, {"cond_out"});
  body->add_output()->set_name("cond_out");
  body->add_output()->set_name("acc_out");
  auto* st = node(g, "ConcatFromSequence", {"list"}, {"stack"});
  attr_i(st, "axis", 1);
  attr_i(st, "new_axis", 1);
  node(g, "SequenceAt", {"pairs", "one"}, {"second"});  // rows 2..3 of 3: [1, 4], the axis kept
  for (const char* o : {"stack", "second"}) g->add_output()->set_name(o);
  const Graph gr = testing::load_proto(m);
  const Tensor x = testing::random_tensor(DType::f32, {3, 4}, 71);
  expect_no_sequence_op(gr, {x});
  for (const std::string& be : testing::usable_backends()) {
    SCOPED_TRACE(be);
    auto out = Session(gr, be).run({x});
    ASSERT_EQ(out[0].shape(), (Shape{4, 3})) << "elements [4] stacked on axis 1";
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < 4; ++c) EXPECT_EQ(out[0].get(c * 3 + r), -x.get(r * 4 + c)) << r << "," << c;
    ASSERT_EQ(out[1].shape(), (Shape{1, 4}));
    for (int64_t c = 0; c < 4; ++c) EXPECT_EQ(out[1].get(c), x.get(8 + c));
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
      {"an empty optional read inside an If branch (it crashed, or saw an element)",
       [](onnx::GraphProto* g) {
         auto* empty = node(g, "Optional", {}, {"none"});
         auto* a = empty->add_attribute();
         a->set_name("type");
         a->set_type(onnx::AttributeProto::TYPE_PROTO);
         a->mutable_tp()->mutable_tensor_type()->set_elem_type(kF32);
         auto* t = g->add_initializer();
         t->set_name("yes");
         t->set_data_type(onnx::TensorProto::BOOL);
         t->add_int32_data(1);
         auto* n = node(g, "If", {"yes"}, {"out"});
         for (const char* branch : {"then_branch", "else_branch"}) {
           auto* b = testing::onnx_graph_attr(n, branch);
           node(b, "OptionalHasElement", {"none"}, {"has"});
           b->add_output()->set_name("has");
         }
       },
       "an empty optional read inside a subgraph (of node 'out_node' (If)) is not supported"},
      {"an If on a run-time condition returning a sequence",
       [](onnx::GraphProto* g) {
         attr_i(node(g, "ReduceSum", {"X"}, {"sum"}), "keepdims", 0);
         int_constant(g, "zero", 0);
         attr_i(node(g, "Cast", {"zero"}, {"zf"}), "to", kF32);
         node(g, "Greater", {"sum", "zf"}, {"c"});
         auto* n = node(g, "If", {"c"}, {"s"});
         for (const char* branch : {"then_branch", "else_branch"}) {
           auto* b = testing::onnx_graph_attr(n, branch);
           node(b, "SequenceConstruct", {"X"}, {"list"});
           b->add_output()->set_name("list");
         }
         node(g, "SequenceLength", {"s"}, {"out"});
       },
       "output 0 is a sequence, which only an If with a constant condition can return"},
      {"a SequenceMap with an input its body does not take",
       [](onnx::GraphProto* g) {
         node(g, "SequenceConstruct", {"X"}, {"s"});
         auto* map = node(g, "SequenceMap", {"s", "X"}, {"mapped"});
         auto* body = testing::onnx_graph_attr(map, "body");
         testing::onnx_value_info(body->add_input(), "el", kF32, {2, 3});
         node(body, "Neg", {"el"}, {"neg"});
         body->add_output()->set_name("neg");
         node(g, "SequenceLength", {"mapped"}, {"out"});
       },
       "has 2 inputs, its body takes 1"},
      {"a SequenceMap body input declared in another dtype",
       [](onnx::GraphProto* g) {
         node(g, "SequenceConstruct", {"X"}, {"s"});
         auto* map = node(g, "SequenceMap", {"s"}, {"mapped"});
         auto* body = testing::onnx_graph_attr(map, "body");
         testing::onnx_value_info(body->add_input(), "el", onnx::TensorProto::INT64, {2, 3});
         node(body, "Neg", {"el"}, {"neg"});
         body->add_output()->set_name("neg");
         node(g, "SequenceLength", {"mapped"}, {"out"});
       },
       "body input 'el' is declared int64, bound to float32"},
      {"a SequenceMap body input declared with another rank (a Loop's alike: tf2onnx's --tflite GRU, red-team round 58)",
       [](onnx::GraphProto* g) {
         node(g, "SequenceConstruct", {"X"}, {"s"});
         auto* map = node(g, "SequenceMap", {"s"}, {"mapped"});
         auto* body = testing::onnx_graph_attr(map, "body");
         testing::onnx_value_info(body->add_input(), "el", kF32, {6});
         node(body, "Neg", {"el"}, {"neg"});
         body->add_output()->set_name("neg");
         node(g, "SequenceLength", {"mapped"}, {"out"});
       },
       "body input 'el' is declared rank 1 [6], bound to [2, 3]"},
      {"maps of splits multiplying past the graph's bound (20,000 x 60,000 tensors filled the memory)",
       [](onnx::GraphProto* g) {
         auto* t = g->add_initializer();
         t->set_name("cube_shape");
         t->set_data_type(onnx::TensorProto::INT64);
         t->add_dims(3);
         for (int64_t d : {int64_t{20000}, int64_t{60000}, int64_t{0}}) t->add_int64_data(d);
         node(g, "ConstantOfShape", {"cube_shape"}, {"cube"});
         node(g, "SplitToSequence", {"cube"}, {"slabs"});
         auto* map = node(g, "SequenceMap", {"slabs"}, {"counts"});
         auto* body = testing::onnx_graph_attr(map, "body");
         testing::onnx_value_info(body->add_input(), "slab", kF32, {1, 60000, 0});
         attr_i(node(body, "SplitToSequence", {"slab"}, {"cols"}), "axis", 1);
         node(body, "SequenceLength", {"cols"}, {"n"});
         body->add_output()->set_name("n");
         node(g, "SequenceLength", {"counts"}, {"out"});
       },
       "would grow the graph to more than 1048576 values"},
      {"mixed dtypes",
       [](onnx::GraphProto* g) {
         int_constant(g, "i", 1);
         node(g, "SequenceConstruct", {"X", "i"}, {"s"});
         node(g, "SequenceLength", {"s"}, {"out"});
       },
       "inputs 0 and 1 are float32 and int64, but SequenceConstruct-11 binds both to one type"},
  };
  for (const Case& c : cases) {
    onnx::ModelProto m = testing::onnx_model("sequence_misuse", 8, 17);
    auto* g = m.mutable_graph();
    input(g, "X", kF32, {2, 3});
    c.build(g);
    g->add_output()->set_name("out");
    SCOPED_TRACE(c.what);
    EXPECT_ERROR(Session(testing::load_proto(m), "ref").run({testing::random_tensor(DType::f32, {2, 3}, 5)}), c.message);
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
