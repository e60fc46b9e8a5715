// Red-team round 40 (docs/redteam.md): Hugging Face Optimum's merged decoders. Their If on
// use_cache_branch picks a branch whose outputs differ in shape from the other's (past and
// present vs the first step), or whose other branch cannot run at all with the shapes fed (a
// placeholder past of length 1): the condition is specialised on, so both steps run.
#include <gtest/gtest.h>

#include "fuzz_harness.h"
#include "frontend/onnx_import.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

// y = If(cond, then: Concat(past, x) or Add(past, x) (add_then), else: Mul(x, x) or Add(past, x)
// (add_else)).
Graph merged_like(bool add_then, bool add_else = false) {
  auto m = fuzz::new_model(17);
  auto* g = m.mutable_graph();
  fuzz::set_type(g->add_input(), "cond", onnx::TensorProto::BOOL, {});
  for (const char* name : {"past", "x"}) {
    auto* vi = g->add_input();
    vi->set_name(name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(1);
    vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param(std::string(name) + "_len");
  }
  auto* n = fuzz::add_node(g, "If", {"cond"}, {"y"});
  const auto branch = [&](const char* attr, const char* op, std::vector<std::string> in) {
    auto* a = n->add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* b = a->mutable_g();
    b->set_name(attr);
    auto* node = fuzz::add_node(b, op, in, {std::string(attr) + "_y"});
    if (std::string(op) == "Concat") fuzz::add_int(node, "axis", 1);
    b->add_output()->set_name(std::string(attr) + "_y");
  };
  branch("then_branch", add_then ? "Add" : "Concat", {"past", "x"});
  branch("else_branch", add_else ? "Add" : "Mul", add_else ? std::vector<std::string>{"past", "x"} : std::vector<std::string>{"x", "x"});
  g->add_output()->set_name("y");
  return load_onnx_from_bytes(m.SerializeAsString(), ".");
}

Tensor flag(bool v) {
  Tensor t(DType::boolean, {});
  t.set_int(0, v ? 1 : 0);
  return t;
}

TEST(Round40, AnIfWhoseBranchesDifferInShapeIsSpecialisedOnItsCondition) {
  // Was "branches produce output 0 in different shapes ([1, 5] vs [1, 2]) and the condition is
  // only known at run time".
  Session s(merged_like(false), "cpu");
  const Tensor past = testing::random_tensor(DType::f32, {1, 3}, 1), x = testing::random_tensor(DType::f32, {1, 2}, 2);
  for (bool cache : {true, false, true}) {  // one session, both steps in turn: each its own executable
    const Tensor y = s.run({flag(cache), past, x})[0];
    if (cache) {
      ASSERT_EQ(y.shape(), (Shape{1, 5}));
      for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(y.get(i), i < 3 ? past.get(i) : x.get(i - 3)) << i;
    } else {
      ASSERT_EQ(y.shape(), (Shape{1, 2}));
      for (int64_t i = 0; i < 2; ++i) EXPECT_EQ(y.get(i), static_cast<float>(x.get(i) * x.get(i))) << i;
    }
  }
}

TEST(Round40, DecodingStepsWithNewTokenValuesReuseTheExecutableOfTheirBranch) {
  // Baking the condition first baked every small input too (a [1, 1] token, a short mask), so
  // each decoding step keyed a new executable on its values: one compile per token.
  Session s(merged_like(false), "cpu");
  const Tensor past = testing::random_tensor(DType::f32, {1, 3}, 6);
  for (uint64_t step = 0; step < 5; ++step) {
    const Tensor x = testing::random_tensor(DType::f32, {1, 1}, 10 + step);
    const Tensor y = s.run({flag(true), past, x})[0];
    ASSERT_EQ(y.shape(), (Shape{1, 4}));
    EXPECT_EQ(y.get(3), x.get(0)) << step;
  }
  EXPECT_EQ(s.compiled_executables(), 1u);
}

TEST(Round40, AnIfWhoseBranchesBothFailReportsTheModelsFault) {
  // A fault both branches share is the model's: reported as it is, not as a condition to
  // specialise on.
  Session s(merged_like(true, true), "ref");
  const Tensor past = testing::random_tensor(DType::f32, {1, 3}, 7), x = testing::random_tensor(DType::f32, {1, 2}, 8);
  for (bool c : {true, false}) {
    const std::string m = testing::error_of([&] { s.run({flag(c), past, x}); });
    EXPECT_NE(m.find("Add"), std::string::npos) << m;
    EXPECT_EQ(m.find("condition must be known"), std::string::npos) << m;
  }
}

TEST(Round40, AnIfBranchThatCannotRunWithTheseShapesIsFineWhenTheOtherIsTaken) {
  // Optimum's first step feeds a placeholder past whose length does not fit the cache branch:
  // was "Add: shapes cannot broadcast" from the branch not taken.
  Session s(merged_like(true), "ref");
  const Tensor past = testing::random_tensor(DType::f32, {1, 3}, 3), x = testing::random_tensor(DType::f32, {1, 2}, 4);
  const Tensor y = s.run({flag(false), past, x})[0];
  ASSERT_EQ(y.shape(), (Shape{1, 2}));
  for (int64_t i = 0; i < 2; ++i) EXPECT_EQ(y.get(i), static_cast<float>(x.get(i) * x.get(i))) << i;
  // Taking the branch that cannot run is the error it is, naming the op.
  EXPECT_ERROR(s.run({flag(true), past, x}), "Add");
  const Tensor past2 = testing::random_tensor(DType::f32, {1, 2}, 5);
  const Tensor z = s.run({flag(true), past2, x})[0];
  for (int64_t i = 0; i < 2; ++i) EXPECT_EQ(z.get(i), static_cast<float>(past2.get(i) + x.get(i))) << i;
}

}  // namespace
}  // namespace fusor
