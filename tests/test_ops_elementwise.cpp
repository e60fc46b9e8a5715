// Hand-computed checks of the element-wise and reduction ops' shape rules and CPU references
// (ir/ops/elementwise.cpp, ir/ops/reduce.cpp). Each case runs one node: infer, then reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "backend_agreement.h"
#include "frontend/builder.h"
#include "ir/op_table.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor scalar(double v, DType t = DType::f32) { return testing::tensor_of({}, {v}, t); }
Tensor ints(Shape s, std::vector<double> v) { return testing::tensor_of(std::move(s), std::move(v), DType::i64); }

using testing::OpCall;
std::vector<Tensor> run(const OpCall& c) { return testing::run_op(c, 17); }
Tensor run1(const OpCall& c) { return run(c)[0]; }

void expect_values(const Tensor& t, const std::vector<double>& want, double tol = 1e-6) {
  ASSERT_EQ(static_cast<size_t>(t.numel()), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    double got = t.get(static_cast<int64_t>(i));
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got)) << "element " << i << " = " << got;
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(got, want[i]) << "element " << i;
    } else {
      EXPECT_NEAR(got, want[i], tol * std::max(1.0, std::fabs(want[i]))) << "element " << i;
    }
  }
}

// ---- element-wise ---------------------------------------------------------------------------

TEST(OpsElementwise, AddBroadcastsBothWays) {
  Tensor y = run1({"Add", {testing::tensor_of({2, 1}, {10, 20}), testing::tensor_of({3}, {1, 2, 3})}});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(y.dtype(), DType::f32);
  expect_values(y, {11, 12, 13, 21, 22, 23});
}

TEST(OpsElementwise, SubMulScalarOperand) {
  expect_values(run1({"Sub", {testing::tensor_of({3}, {5, 6, 7}), scalar(1)}}), {4, 5, 6});
  expect_values(run1({"Mul", {testing::tensor_of({2, 2}, {1, 2, 3, 4}), testing::tensor_of({2}, {10, -1})}}), {10, -2, 30, -4});
}

TEST(OpsElementwise, IncompatibleShapesThrow) {
  EXPECT_THROW(run1({"Add", {testing::tensor_of({2}, {1, 2}), testing::tensor_of({3}, {1, 2, 3})}}), Error);
  EXPECT_THROW(run1({"Add", {testing::tensor_of({2}, {1, 2}), testing::tensor_of({2}, {1, 2}, DType::i32)}}), Error);
}

TEST(OpsElementwise, DivIntegerTruncatesTowardZero) {
  Tensor y = run1({"Div", {testing::tensor_of({4}, {7, -7, 7, -7}, DType::i32), testing::tensor_of({4}, {2, 2, -2, -2}, DType::i32)}});
  EXPECT_EQ(y.dtype(), DType::i32);
  expect_values(y, {3, -3, -3, 3});
  expect_values(run1({"Div", {testing::tensor_of({2}, {7, -1}), testing::tensor_of({2}, {2, 4})}}), {3.5, -0.25});
}

TEST(OpsElementwise, ModIntegerSignRules) {
  Tensor a = testing::tensor_of({4}, {7, -7, 7, -7}, DType::i64), b = testing::tensor_of({4}, {3, 3, -3, -3}, DType::i64);
  expect_values(run1({"Mod", {a, b}}), {1, 2, -2, -1});                          // sign of divisor
  expect_values(run1({"Mod", {a, b}, {{"fmod", int64_t{1}}}}), {1, -1, 1, -1});  // sign of dividend
  expect_values(run1({"Mod", {testing::tensor_of({2}, {5.5, -5.5}), testing::tensor_of({2}, {2, 2})}, {{"fmod", int64_t{1}}}}), {1.5, -1.5});
  EXPECT_THROW(run1({"Mod", {testing::tensor_of({1}, {5.5}), testing::tensor_of({1}, {2})}}), Error);  // float needs fmod=1
}

TEST(OpsElementwise, PowFloatAndIntBase) {
  expect_values(run1({"Pow", {testing::tensor_of({3}, {2, 3, -2}), testing::tensor_of({3}, {3, 2, 3})}}), {8, 9, -8});
  Tensor y = run1({"Pow", {testing::tensor_of({3}, {1, 2, 3}, DType::i64), testing::tensor_of({3}, {4, 5, 6})}});
  EXPECT_EQ(y.dtype(), DType::i64);
  expect_values(y, {1, 32, 729});
}

TEST(OpsElementwise, NanPropagatesThroughReluMaxMin) {
  expect_values(run1({"Relu", {testing::tensor_of({4}, {-1, 0, 2, kNaN})}}), {0, 0, 2, kNaN});
  Tensor a = testing::tensor_of({3}, {1, kNaN, 3}), b = testing::tensor_of({3}, {2, 2, kNaN});
  expect_values(run1({"Max", {a, b}}), {2, kNaN, kNaN});
  expect_values(run1({"Min", {a, b}}), {1, kNaN, kNaN});
}

TEST(OpsElementwise, VariadicSumMeanMaxMin) {
  Tensor a = testing::tensor_of({2}, {1, 5}), b = testing::tensor_of({2}, {4, 2}), c = scalar(-3);
  expect_values(run1({"Sum", {a, b, c}}), {2, 4});
  expect_values(run1({"Mean", {a, b}}), {2.5, 3.5});
  expect_values(run1({"Max", {a, b, c}}), {4, 5});
  expect_values(run1({"Min", {a, b, c}}), {-3, -3});
  expect_values(run1({"Sum", {a}}), {1, 5});
  Tensor m = run1({"Max", {testing::tensor_of({2}, {3, -9}, DType::i32), testing::tensor_of({2}, {1, 7}, DType::i32)}});
  EXPECT_EQ(m.dtype(), DType::i32);
  expect_values(m, {3, 7});
}

TEST(OpsElementwise, WhereBroadcastsConditionAndValues) {
  Tensor cond = testing::tensor_of({2}, {1, 0}, DType::boolean);
  Tensor y = run1({"Where", {cond, testing::tensor_of({2, 2}, {1, 2, 3, 4}, DType::i64), ints({}, {9})}});
  EXPECT_EQ(y.dtype(), DType::i64);
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  expect_values(y, {1, 9, 3, 9});
  EXPECT_THROW(run1({"Where", {testing::tensor_of({1}, {1}), scalar(1), scalar(2)}}), Error);  // cond must be bool
}

TEST(OpsElementwise, ComparisonsGiveBoolAndNanNeverPasses) {
  Tensor a = testing::tensor_of({3}, {1, 2, kNaN}), b = testing::tensor_of({3}, {2, 2, kNaN});
  Tensor eq = run1({"Equal", {a, b}});
  EXPECT_EQ(eq.dtype(), DType::boolean);
  expect_values(eq, {0, 1, 0});
  expect_values(run1({"Less", {a, b}}), {1, 0, 0});
  expect_values(run1({"LessOrEqual", {a, b}}), {1, 1, 0});
  expect_values(run1({"Greater", {a, b}}), {0, 0, 0});
  expect_values(run1({"GreaterOrEqual", {a, b}}), {0, 1, 0});
}

TEST(OpsElementwise, LogicTruthTables) {
  Tensor p = testing::tensor_of({4}, {0, 0, 1, 1}, DType::boolean), q = testing::tensor_of({4}, {0, 1, 0, 1}, DType::boolean);
  expect_values(run1({"And", {p, q}}), {0, 0, 0, 1});
  expect_values(run1({"Or", {p, q}}), {0, 1, 1, 1});
  expect_values(run1({"Xor", {p, q}}), {0, 1, 1, 0});
  expect_values(run1({"Not", {p}}), {1, 1, 0, 0});
  EXPECT_THROW(run1({"And", {testing::tensor_of({1}, {1}), testing::tensor_of({1}, {1})}}), Error);
}

TEST(OpsElementwise, CastTruncatesBooleanizesAndWritesStrings) {
  Tensor x = testing::tensor_of({4}, {1.7, -1.7, 2.5, 0});
  Tensor i = run1({"Cast", {x}, {{"to", int64_t{6}}}});  // INT32
  EXPECT_EQ(i.dtype(), DType::i32);
  expect_values(i, {1, -1, 2, 0});
  Tensor b = run1({"Cast", {testing::tensor_of({3}, {0, 0.5, -2})}, {{"to", int64_t{9}}}});  // BOOL
  EXPECT_EQ(b.dtype(), DType::boolean);
  expect_values(b, {0, 1, 1});
  Tensor big = run1({"Cast", {ints({1}, {0})}, {{"to", int64_t{7}}}});
  EXPECT_EQ(big.dtype(), DType::i64);
  Tensor exact(DType::i64, {1});
  exact.data<int64_t>()[0] = (int64_t{1} << 62) + 1;          // not representable as a double
  Tensor e = run1({"Cast", {exact}, {{"to", int64_t{13}}}});  // UINT64
  EXPECT_EQ(e.data<uint64_t>()[0], (uint64_t{1} << 62) + 1);
  // To string: 8 significant digits, as onnxruntime (tests/test_strings.cpp has the rest).
  Tensor str = run1({"Cast", {x}, {{"to", int64_t{8}}}});  // STRING
  EXPECT_EQ(str.strings, (std::vector<std::string>{"1.7", "-1.7", "2.5", "0"}));
  Tensor like = run1({"CastLike", {x, testing::tensor_of({1, 1}, {0}, DType::i8)}});
  EXPECT_EQ(like.dtype(), DType::i8);
  EXPECT_EQ(like.shape(), (Shape{4}));
  expect_values(like, {1, -1, 2, 0});
}

TEST(OpsElementwise, Activations) {
  Tensor x = testing::tensor_of({3}, {-1, 0, 2});
  expect_values(run1({"LeakyRelu", {x}}), {-0.01, 0, 2});
  expect_values(run1({"LeakyRelu", {x}, {{"alpha", 0.5}}}), {-0.5, 0, 2});
  expect_values(run1({"Elu", {x}}), {-0.6321205588285577, 0, 2});
  expect_values(run1({"Selu", {x}}), {-1.1113307412864781, 0, 2.1014020442962646});
  expect_values(run1({"Celu", {x}}), {-0.6321205588285577, 0, 2});
  expect_values(run1({"ThresholdedRelu", {testing::tensor_of({3}, {0.5, 1, 1.5})}}), {0, 0, 1.5});
  expect_values(run1({"Sigmoid", {x}}), {0.2689414213699951, 0.5, 0.8807970779778823});
  expect_values(run1({"HardSigmoid", {testing::tensor_of({3}, {1, -3, 3})}}), {0.7, 0, 1});
  expect_values(run1({"HardSwish", {testing::tensor_of({3}, {1, -4, 4})}}), {2.0 / 3.0, 0, 4});
  expect_values(run1({"Softplus", {testing::tensor_of({3}, {0, 100, -100})}}), {0.6931471805599453, 100, 3.720075976020836e-44});
  expect_values(run1({"Softsign", {testing::tensor_of({2}, {3, -1})}}), {0.75, -0.5});
  expect_values(run1({"Mish", {testing::tensor_of({1}, {1})}}), {0.8650983882673103});
  expect_values(run1({"PRelu", {testing::tensor_of({2, 2}, {-1, 2, -3, 4}), testing::tensor_of({2}, {0.5, 9})}}), {-0.5, 2, -1.5, 4});
}

TEST(OpsElementwise, GeluBothForms) {
  Tensor x = testing::tensor_of({2}, {1, 0});
  expect_values(run1({"Gelu", {x}}), {0.8413447460685429, 0});
  expect_values(run1({"Gelu", {x}, {{"approximate", std::string("tanh")}}}), {0.8411919906082768, 0});
  EXPECT_THROW(run1({"Gelu", {x}, {{"approximate", std::string("fast")}}}), Error);
}

TEST(OpsElementwise, MathAndRounding) {
  expect_values(run1({"Round", {testing::tensor_of({7}, {0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6})}}), {0, 2, 2, -0.0, -2, 2, -3});
  expect_values(run1({"Sign", {testing::tensor_of({4}, {-3, 0, 2, kNaN})}}), {-1, 0, 1, kNaN});
  expect_values(run1({"Floor", {testing::tensor_of({2}, {-1.5, 1.5})}}), {-2, 1});
  expect_values(run1({"Ceil", {testing::tensor_of({2}, {-1.5, 1.5})}}), {-1, 2});
  expect_values(run1({"Erf", {testing::tensor_of({1}, {0.5})}}), {0.5204998778130465});
  expect_values(run1({"Exp", {testing::tensor_of({1}, {1})}}), {2.718281828459045});
  expect_values(run1({"Log", {testing::tensor_of({2}, {1, 0})}}), {0, -kInf});
  expect_values(run1({"Sqrt", {testing::tensor_of({2}, {9, -1})}}), {3, kNaN});
  expect_values(run1({"Reciprocal", {testing::tensor_of({1}, {4})}}), {0.25});
  expect_values(run1({"Tanh", {testing::tensor_of({1}, {0.5})}}), {0.46211715726000974});
  expect_values(run1({"Abs", {testing::tensor_of({2}, {-2, 3}, DType::i32)}}), {2, 3});
  expect_values(run1({"Neg", {testing::tensor_of({2}, {-2, 3})}}), {2, -3});
  expect_values(run1({"Identity", {ints({2}, {5, -6})}}), {5, -6});
  EXPECT_THROW(run1({"Exp", {ints({1}, {1})}}), Error);  // transcendental ops are float-only
}

TEST(OpsElementwise, ClipInputsAttributesAndDefaults) {
  Tensor x = testing::tensor_of({4}, {-2, 0.5, 5, kNaN});
  expect_values(run1({"Clip", {x, scalar(0), scalar(1)}, {}, 13}), {0, 0.5, 1, kNaN});
  expect_values(run1({"Clip", {x, scalar(0)}, {}, 13}), {0, 0.5, 5, kNaN});
  expect_values(run1({"Clip", {x, std::nullopt, scalar(1)}, {}, 13}), {-2, 0.5, 1, kNaN});
  expect_values(run1({"Clip", {x}, {{"min", -1.0}, {"max", 1.0}}, 6}), {-1, 0.5, 1, kNaN});
  expect_values(run1({"Clip", {testing::tensor_of({2}, {-100, 100}, DType::i8), scalar(-5, DType::i8)}, {}, 13}), {-5, 100});
}

TEST(OpsElementwise, IsNanIsInf) {
  Tensor x = testing::tensor_of({4}, {1, kNaN, kInf, -kInf});
  Tensor n = run1({"IsNaN", {x}});
  EXPECT_EQ(n.dtype(), DType::boolean);
  expect_values(n, {0, 1, 0, 0});
  expect_values(run1({"IsInf", {x}}), {0, 0, 1, 1});
  expect_values(run1({"IsInf", {x}, {{"detect_positive", int64_t{0}}}}), {0, 0, 0, 1});
}

TEST(OpsElementwise, BoundExpressions) {
  // Variadic folding, absent Clip bounds printed as literals, string params resolved.
  Node sum;
  sum.op_type = "Sum";
  sum.inputs = {0, 1, 2};
  EXPECT_EQ(bind_scalar(*lookup_op("Sum")->scalar, sum, false).expr, "(({0}) + {1}) + {2}");
  sum.op_type = "Mean";
  EXPECT_EQ(bind_scalar(*lookup_op("Mean")->scalar, sum, false).expr, "fz_div((({0}) + {1}) + {2}, 3.0f)");  // IEEE division
  Node clip;
  clip.op_type = "Clip";
  clip.opset = 13;
  clip.inputs = {0, -1, 2};
  BoundScalar b = bind_scalar(*lookup_op("Clip")->scalar, clip, false);
  EXPECT_EQ(b.expr, "fz_min(fz_max({0}, (-fz_inf())), {2})");
  double xs[3] = {-7, 123, 4};  // xs[1] is ignored: operand 1 is absent
  EXPECT_EQ(eval_scalar(*lookup_op("Clip")->scalar, b, xs, false), -7);
  Node gelu;
  gelu.op_type = "Gelu";
  gelu.inputs = {0};
  gelu.attrs["approximate"] = std::string("tanh");
  EXPECT_EQ(bind_scalar(*lookup_op("Gelu")->scalar, gelu, false).params, std::vector<double>{1.0});
  Node div;
  div.op_type = "Div";
  div.inputs = {0, 1};
  EXPECT_EQ(bind_scalar(*lookup_op("Div")->scalar, div, true).expr, "fz_idiv({0}, {1})");  // integer division truncates
  for (const std::string& op : registered_ops()) {
    const OpDef* d = lookup_op(op);
    if (d->scalar) {
      EXPECT_NE(d->scalar->eval, nullptr) << op;
    }
  }
}

// ---- reductions -----------------------------------------------------------------------------

Tensor mat23() { return testing::tensor_of({2, 3}, {1, 2, 3, 4, 5, 6}); }

TEST(OpsReduce, SumAxesInputKeepdims) {
  Tensor y = run1({"ReduceSum", {mat23(), ints({1}, {1})}, {}, 13});
  EXPECT_EQ(y.shape(), (Shape{2, 1}));
  expect_values(y, {6, 15});
  y = run1({"ReduceSum", {mat23(), ints({1}, {-2})}, {{"keepdims", int64_t{0}}}, 13});
  EXPECT_EQ(y.shape(), (Shape{3}));
  expect_values(y, {5, 7, 9});
  y = run1({"ReduceSum", {mat23()}, {}, 13});  // no axes: reduce all
  EXPECT_EQ(y.shape(), (Shape{1, 1}));
  expect_values(y, {21});
  y = run1({"ReduceSum", {mat23(), ints({0}, {})}, {{"noop_with_empty_axes", int64_t{1}}}, 13});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  expect_values(y, {1, 2, 3, 4, 5, 6});
  y = run1({"ReduceSum", {mat23()}, {{"axes", std::vector<int64_t>{0}}, {"keepdims", int64_t{0}}}, 11});
  expect_values(y, {5, 7, 9});
  EXPECT_THROW(run1({"ReduceSum", {mat23(), ints({1}, {2})}, {}, 13}), Error);  // axis out of range
  ASSERT_TRUE(lookup_op("ReduceSum")->reduce.has_value());
}

TEST(OpsReduce, MeanMaxMinProd) {
  Tensor y = run1({"ReduceMean", {mat23()}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}}, 17});
  EXPECT_EQ(y.shape(), (Shape{2}));
  expect_values(y, {2, 5});
  y = run1({"ReduceMean", {mat23(), ints({1}, {0})}, {}, 18});
  EXPECT_EQ(y.shape(), (Shape{1, 3}));
  expect_values(y, {2.5, 3.5, 4.5});
  expect_values(run1({"ReduceMax", {mat23(), ints({1}, {-1})}, {}, 18}), {3, 6});
  expect_values(run1({"ReduceMax", {testing::tensor_of({2}, {1, kNaN})}, {}, 18}), {kNaN});
  y = run1({"ReduceMin", {mat23(), ints({1}, {0})}, {{"keepdims", int64_t{0}}}, 18});
  EXPECT_EQ(y.shape(), (Shape{3}));
  expect_values(y, {1, 2, 3});
  expect_values(run1({"ReduceProd", {mat23(), ints({1}, {1})}, {}, 18}), {6, 120});
  expect_values(run1({"ReduceProd", {testing::tensor_of({0}, {})}, {}, 18}), {1});  // empty set -> identity
  expect_values(run1({"ReduceMin", {testing::tensor_of({0}, {})}, {}, 18}), {kInf});
}

TEST(OpsReduce, NormsAndLogs) {
  Tensor x = testing::tensor_of({2, 2}, {-1, 2, -3, 4});
  expect_values(run1({"ReduceL1", {x, ints({1}, {1})}, {{"keepdims", int64_t{0}}}, 18}), {3, 7});
  expect_values(run1({"ReduceL2", {x}, {}, 18}), {5.477225575051661});
  expect_values(run1({"ReduceSumSquare", {x, ints({1}, {0})}, {}, 18}), {10, 20});
  expect_values(run1({"ReduceLogSum", {testing::tensor_of({1, 2}, {1, 2}), ints({1}, {1})}, {}, 18}), {std::log(3.0)});
  expect_values(
      run1({"ReduceLogSumExp", {testing::tensor_of({2, 2}, {1, 2, 1000, 1000}), ints({1}, {1})}, {{"keepdims", int64_t{0}}}, 18}),
      {2.3132616875182226, 1000.6931471805599});
  EXPECT_STREQ(lookup_op("ReduceL2")->reduce->post, "sqrt({0})");
}

TEST(OpsReduce, ArgMaxArgMin) {
  Tensor x = testing::tensor_of({2, 3}, {1, 3, 3, 4, 0, 4});
  Tensor y = run1({"ArgMax", {x}, {{"axis", int64_t{1}}}});
  EXPECT_EQ(y.dtype(), DType::i64);
  EXPECT_EQ(y.shape(), (Shape{2, 1}));
  expect_values(y, {1, 0});
  expect_values(run1({"ArgMax", {x}, {{"axis", int64_t{1}}, {"select_last_index", int64_t{1}}}}), {2, 2});
  y = run1({"ArgMin", {x}, {{"axis", int64_t{0}}, {"keepdims", int64_t{0}}}});
  EXPECT_EQ(y.shape(), (Shape{3}));
  expect_values(y, {0, 1, 0});
}

TEST(OpsReduce, CumSumModes) {
  Tensor x = testing::tensor_of({4}, {1, 2, 3, 4});
  Tensor ax = ints({}, {0});
  expect_values(run1({"CumSum", {x, ax}}), {1, 3, 6, 10});
  expect_values(run1({"CumSum", {x, ax}, {{"exclusive", int64_t{1}}}}), {0, 1, 3, 6});
  expect_values(run1({"CumSum", {x, ax}, {{"reverse", int64_t{1}}}}), {10, 9, 7, 4});
  expect_values(run1({"CumSum", {x, ax}, {{"reverse", int64_t{1}}, {"exclusive", int64_t{1}}}}), {9, 7, 4, 0});
  expect_values(run1({"CumSum", {mat23(), ints({}, {0})}}), {1, 2, 3, 5, 7, 9});
}

TEST(OpsReduce, SoftmaxFamily) {
  Tensor y = run1({"Softmax", {testing::tensor_of({1, 3}, {1, 2, 3})}, {}, 13});
  expect_values(y, {0.09003057317038046, 0.24472847105479764, 0.6652409557748219});
  expect_values(run1({"LogSoftmax", {testing::tensor_of({1, 3}, {1, 2, 3})}, {}, 13}),
                {std::log(0.09003057317038046), std::log(0.24472847105479764), std::log(0.6652409557748219)});
  expect_values(run1({"Hardmax", {testing::tensor_of({2, 3}, {1, 3, 3, 5, 0, 1})}, {}, 13}), {0, 1, 0, 1, 0, 0});
  // Rows of a larger softmax sum to 1 (axis 0 here, so "rows" are columns).
  Tensor x(DType::f32, {5, 7});
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, std::sin(0.7 * static_cast<double>(i)) * 3);
  Tensor s = run1({"Softmax", {x}, {{"axis", int64_t{0}}}, 13});
  for (int64_t c = 0; c < 7; ++c) {
    double sum = 0;
    for (int64_t r = 0; r < 5; ++r) sum += s.get(r * 7 + c);
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
  // Opset < 13: coerced to 2-D at axis 1 ([2, 2, 2] -> [2, 4]).
  Tensor l = run1({"Softmax", {testing::tensor_of({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7})}, {}, 11});
  expect_values(l, {0.0320586, 0.08714432, 0.23688282, 0.64391426, 0.0320586, 0.08714432, 0.23688282, 0.64391426});
}

TEST(OpsReduce, LayerNormalization) {
  std::vector<Tensor> out = run({"LayerNormalization",
                                 {testing::tensor_of({2, 3}, {1, 2, 3, 4, 6, 8}), testing::tensor_of({3}, {1, 1, 2}), testing::tensor_of({3}, {0, 1, 0})},
                                 {},
                                 17,
                                 3});
  expect_values(out[0], {-1.22473569, 1, 2.44947137, -1.22474258, 1, 2.44948515});
  EXPECT_EQ(out[1].shape(), (Shape{2, 1}));
  EXPECT_EQ(out[1].dtype(), DType::f32);
  expect_values(out[1], {2, 6});
  expect_values(out[2], {1.22473569, 0.61237129});
  // Without bias, over both dims (axis 0).
  Tensor y =
      run1({"LayerNormalization", {testing::tensor_of({2, 2}, {1, 1, 3, 3}), scalar(2)}, {{"axis", int64_t{0}}, {"epsilon", 0.0}}});
  expect_values(y, {-2, -2, 2, 2});
}

TEST(OpsReduce, RmsNormalization) {
  expect_values(run1({"RMSNormalization", {testing::tensor_of({1, 2}, {3, 4}), testing::tensor_of({2}, {1, 1})}, {}, 23}), {0.8485278, 1.1313704},
                1e-6);
}

}  // namespace
}  // namespace fusor

namespace fusor {
namespace {

// Broadcasting before opset 7 (Add-6's broadcast/axis, PRelu-6's per-channel slope) on every
// backend, against values computed here: B [3] at axis 1 of A [2, 3, 2] adds B[c] to A[n, c, w].
TEST(OpsElementwise, LegacyBroadcastAlignsAtAxisOnEveryBackend) {
  const Tensor a = testing::random_tensor(DType::f32, {2, 3, 2}, 11, -2.0, 2.0);
  const Tensor b = testing::random_tensor(DType::f32, {3}, 12, 0.1, 0.9);
  for (const std::string op : {"Add", "PRelu"}) {
    GraphBuilder gb("legacy_" + op, 6);
    const int x = gb.input("a", DType::f32, {2, 3, 2});
    std::map<std::string, AttrValue> attrs;
    if (op == "Add") attrs = {{"broadcast", int64_t{1}}, {"axis", int64_t{1}}};
    gb.output(gb.op(op, {x, gb.constant("b", b)}, attrs));
    const Graph g = gb.build();
    std::vector<double> want;
    for (int64_t i = 0; i < a.numel(); ++i) {
      const double av = a.get(i), bv = b.get((i / 2) % 3);
      want.push_back(op == "Add" ? av + bv : (av < 0 ? bv * av : av));
    }
    std::vector<std::string> backends{"ref", "cpu"};
    if (testing::vulkan_available()) backends.push_back("vulkan");
    for (const std::string& be : backends) {
      Session s(g, be);
      const std::vector<Tensor> out = s.run({a});
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(out[0].shape(), (Shape{2, 3, 2})) << op << " on " << be;
      SCOPED_TRACE(op + " on " + be);
      testing::expect_values(out[0], want, 1e-6);
    }
  }
  // An axis that puts B past A's last dim is a shape error naming the node.
  GraphBuilder gb("legacy_bad", 6);
  const int x = gb.input("a", DType::f32, {2, 3, 2});
  const Tensor b2 = testing::random_tensor(DType::f32, {3, 2}, 13);
  gb.output(gb.op("Add", {x, gb.constant("b", b2)}, {{"broadcast", int64_t{1}}, {"axis", int64_t{2}}}));
  try {
    Session(gb.build(), "ref").run({a});
    ADD_FAILURE() << "B [3, 2] at axis 2 of A [2, 3, 2] was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("legacy broadcast"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Add"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fusor
