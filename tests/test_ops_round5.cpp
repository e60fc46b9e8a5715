// Red-team round 5 regressions (docs/redteam.md "Red-team round 5"): GridSample cubic padding,
// MaxUnpool output_shape, DFT axis 0, 64-bit integers moved exactly, float32 attribute defaults,
// integer Resize rounding. Expected values come from onnxruntime 1.32 (CPU) where noted, else
// from the ONNX spec's formulas; integers are compared exactly.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <cmath>
#include <complex>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "frontend/onnx_import.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

using testing::error_of;
using testing::expect_values;
using testing::int_values;
using testing::ints_of;
using testing::run_op;
using testing::tensor_of;


bool has_device(const std::string& name) {
  auto names = backend_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) return false;
  return !make_backend(name)->devices().empty();
}
std::vector<std::string> backends() {
  std::vector<std::string> b = {"ref", "cpu"};
  if (has_device("vulkan")) b.push_back("vulkan");
  return b;
}


// Cubic GridSample pads each of its 4x4 taps and keeps the unclamped coordinate for the
// weights (onnxruntime, torch); border used to clamp the coordinate first. Grid points out to
// +-1.7, a seeded 4x5 image; values from onnxruntime 1.32 (opset 16 'bicubic' = 20 'cubic').
TEST(OpsRound5, GridSampleCubicPadsEachTap) {
  Tensor x = tensor_of({1, 1, 4, 5}, {-1.40579, -2.97308, 0.254915, 2.26134, 4.40814, 1.32912, -0.657942, -1.35434, 3.24624, 5.90435,
                                      1.81831, -2.69999, -1.8748, 5.80006, 1.60865, -4.1964, 0.748911, -2.48968, -0.887864, -0.464017});
  Tensor g = tensor_of({1, 2, 3, 2}, {0.189027, -0.777065, 1.29081, -1.48167, 0.609217, 1.2583, -0.927117, 1.34452, 1.26546, -1.63704,
                                      0.705485, -1.69592});
  struct Case {
    const char* pad;
    int64_t align;
    std::vector<double> want;
  };
  const std::vector<Case> cases = {
      {"border", 0, {1.354784, 4.408141, -0.5220117, -4.744969, 4.408139, 4.016125}},
      {"border", 1, {0.7703109, 4.508004, -1.342819, -3.973901, 4.594051, 3.335046}},
      {"reflection", 0, {1.356497, 4.94955, -0.4613941, -3.733061, 5.644468, 5.532297}},
      {"reflection", 1, {0.8958907, 4.623315, 1.120751, -1.525727, 5.145059, 5.040029}},
      {"zeros", 0, {1.298193, 0.04488301, 0.006831697, 0.3258141, 0.0112141, -0.03498999}},
      {"zeros", 1, {0.9031551, 0.4741727, -1.115907, -2.341304, 0.07678992, -0.1102304}},
  };
  for (const Case& c : cases)
    for (int opset : {16, 20}) {
      SCOPED_TRACE(std::string(c.pad) + " align_corners " + std::to_string(c.align) + " opset " + std::to_string(opset));
      const std::map<std::string, AttrValue> attrs = {{"mode", std::string(opset == 16 ? "bicubic" : "cubic")},
                                                      {"padding_mode", std::string(c.pad)},
                                                      {"align_corners", c.align}};
      expect_values(run_op({"GridSample", {x, g}, attrs}, opset)[0], c.want, 1e-5);  // onnxruntime computes in float
    }
}

// MaxUnpool with output_shape follows the ONNX reference (the node suite's
// test_maxunpool_export_with_output_shape): the indices address the default unpooled [4, 4],
// which sits at the origin of the 5 x 5 output; an index past the unpooled shape is a one-line
// error naming it, as the reference refuses it (onnxruntime would index the 5 x 5 tensor).
TEST(OpsRound5, MaxUnpoolOutputShapeFollowsTheOnnxReference) {
  Tensor x = tensor_of({1, 1, 2, 2}, {10, 20, 30, 40});
  const std::map<std::string, AttrValue> attrs = {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}};
  Tensor y = run_op({"MaxUnpool", {x, ints_of({1, 1, 2, 2}, {5, 7, 13, 15}), ints_of({4}, {1, 1, 5, 5})}, attrs}, 11)[0];
  ASSERT_EQ(y.shape(), (Shape{1, 1, 5, 5}));
  std::vector<double> want(25, 0.0);
  want[1 * 5 + 1] = 10, want[1 * 5 + 3] = 20, want[3 * 5 + 1] = 30, want[3 * 5 + 3] = 40;  // [4, 4] offsets 5, 7, 13, 15
  expect_values(y, want, 0);
  Tensor i = ints_of({1, 1, 2, 2}, {6, 8, 16, 18});
  EXPECT_NE(error_of([&] { run_op({"MaxUnpool", {x, i, ints_of({4}, {1, 1, 5, 5})}, attrs}, 11); }).find("index 16 is outside the unpooled [1, 1, 4, 4]"),
            std::string::npos);
}

// DFT-17's axis attribute and DFT-20's axis input may be 0 (the spec's [0, r - 2]).
TEST(OpsRound5, DftAlongAxisZero) {
  Tensor x = testing::random_tensor(DType::f32, {4, 3, 2}, 51, -2, 2);
  std::vector<double> want(24);
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t k = 0; k < 4; ++k) {
      std::complex<double> acc = 0;
      for (int64_t t = 0; t < 4; ++t)
        acc += std::complex<double>(x.get((t * 3 + c) * 2), x.get((t * 3 + c) * 2 + 1)) * std::polar(1.0, -2 * M_PI * double(k * t) / 4);
      want[(k * 3 + c) * 2] = acc.real(), want[(k * 3 + c) * 2 + 1] = acc.imag();
    }
  expect_values(run_op({"DFT", {x, std::nullopt, ints_of({}, {0})}}, 20)[0], want, 1e-5);
  expect_values(run_op({"DFT", {x}, {{"axis", int64_t{0}}}}, 17)[0], want, 1e-5);
  expect_values(run_op({"DFT", {x, std::nullopt, ints_of({}, {-3})}}, 20)[0], want, 1e-5);
  EXPECT_NE(error_of([&] { run_op({"DFT", {x, std::nullopt, ints_of({}, {2})}}, 20); }).find("not a signal axis"), std::string::npos);
}

// Data movement of 64-bit integers is exact: Resize nearest (and Upsample, rewritten to it),
// Col2Im, MaxPool and MaxUnpool went through double (2^60 + 1 came back as 2^60).
TEST(OpsRound5, SixtyFourBitIntegersMoveExactly) {
  const int64_t p60 = int64_t{1} << 60;
  for (DType t : {DType::i64, DType::u64}) {
    SCOPED_TRACE(dtype_name(t));
    const int64_t base = t == DType::u64 ? static_cast<int64_t>(0x9000000000000000ULL) : p60;  // 2^63 + 2^60 as uint64
    Tensor x = ints_of({1, 1, 1, 2}, {base + 1, base + 3}, t);
    Tensor y = run_op({"Resize", {x, std::nullopt, tensor_of({4}, {1, 1, 1, 2})}, {{"mode", std::string("nearest")}}}, 13)[0];
    EXPECT_EQ(int_values(y), (std::vector<int64_t>{base + 1, base + 1, base + 3, base + 3}));
    // MaxPool compares as integers: base + 3 > base + 1 although both are 2^60 in double.
    Tensor m = ints_of({1, 1, 4}, {base + 1, base + 3, base + 7, base + 5}, t);
    std::vector<Tensor> mp = run_op({"MaxPool", {m}, {{"kernel_shape", std::vector<int64_t>{2}}, {"strides", std::vector<int64_t>{2}}}, 0, 2}, 12);
    EXPECT_EQ(int_values(mp[0]), (std::vector<int64_t>{base + 3, base + 7}));
    EXPECT_EQ(int_values(mp[1]), (std::vector<int64_t>{1, 2}));
    Tensor u = run_op({"MaxUnpool", {mp[0], mp[1]}, {{"kernel_shape", std::vector<int64_t>{2}}, {"strides", std::vector<int64_t>{2}}}}, 11)[0];
    EXPECT_EQ(int_values(u), (std::vector<int64_t>{0, base + 3, base + 7, 0}));
  }
  // Col2Im sums as integers: blocks of 2 with stride 1 over 3 pixels overlap in the middle.
  Tensor cols = ints_of({1, 2, 2}, {p60 + 1, p60 + 7, p60 + 3, p60 + 7});
  Tensor img = run_op({"Col2Im", {cols, ints_of({2}, {1, 3}), ints_of({2}, {1, 2})}}, 18)[0];
  EXPECT_EQ(int_values(img), (std::vector<int64_t>{p60 + 1, 2 * p60 + 10, p60 + 7}));
  // Upsample-9 (rewritten to Resize at load) on every backend.
  GraphBuilder b("up", 9);
  const int in = b.input("x", DType::i64, {1, 1, 1, 2});
  b.output(b.op("Upsample", {in, b.constant("s", tensor_of({4}, {1, 1, 1, 2}))}));
  Graph g = b.build();
  for (const std::string& be : backends()) {
    SCOPED_TRACE(be);
    Session s(g, be);
    EXPECT_EQ(int_values(s.run({ints_of({1, 1, 1, 2}, {p60 + 1, p60 + 3})})[0]), (std::vector<int64_t>{p60 + 1, p60 + 1, p60 + 3, p60 + 3}));
  }
}

// Integer linear Resize rounds its double value to nearest: the exact 99 came out 98.9999 -> 98.
TEST(OpsRound5, IntegerResizeRoundsToNearest) {
  Tensor x = ints_of({1, 1, 1, 4}, {121, 97, 109, 109}, DType::u8);
  Tensor y = run_op({"Resize", {x, std::nullopt, tensor_of({4}, {1, 1, 1, 1.5})}, {{"mode", std::string("linear")}}}, 13)[0];
  EXPECT_EQ(int_values(y), (std::vector<int64_t>{121, 109, 99, 107, 109, 109}));  // onnxruntime
}

// Defaults of FLOAT attributes are float32 (the schema's type): float32(0.2), float32(1e-5).
TEST(OpsRound5, FloatAttributeDefaultsAreFloat32) {
  Tensor x = tensor_of({3}, {1, -0.3, 2}, DType::f64);
  Tensor hs = run_op({"HardSigmoid", {x}}, 6)[0];
  for (int64_t i = 0; i < 3; ++i)
    EXPECT_EQ(hs.get(i), std::max(0.0, std::min(1.0, double(0.2f) * x.get(i) + 0.5))) << i;
  // LayerNormalization f64 rows with variance ~1e-14: the default epsilon shows in the 8th digit.
  Tensor r = tensor_of({1, 4}, {1e-7, 1.5e-7, 0.5e-7, 2.5e-7}, DType::f64);
  Tensor sc = tensor_of({4}, {1, 1, 1, 1}, DType::f64);
  Tensor dflt = run_op({"LayerNormalization", {r, sc}}, 17)[0];
  Tensor f32eps = run_op({"LayerNormalization", {r, sc}, {{"epsilon", double(1e-5f)}}}, 17)[0];
  Tensor dec = run_op({"LayerNormalization", {r, sc}, {{"epsilon", 1e-5}}}, 17)[0];
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(dflt.get(i), f32eps.get(i)) << i;
  EXPECT_NE(dflt.get(0), dec.get(0));
  Tensor in = run_op({"InstanceNormalization", {tensor_of({1, 1, 4}, {1e-7, 1.5e-7, 0.5e-7, 2.5e-7}, DType::f64), tensor_of({1}, {1}, DType::f64),
                                               tensor_of({1}, {0}, DType::f64)}}, 6)[0];
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(in.get(i), f32eps.get(i)) << i;
}

// Nodes the ONNX spec makes invalid are refused with one line naming the node.
TEST(OpsRound5, InvalidNodesAreRefused) {
  auto expect_refused = [](const testing::OpCall& c, int opset, const std::string& what) {
    const std::string e = error_of([&] { run_op(c, opset); });
    EXPECT_NE(e.find(what), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  };
  Tensor x = tensor_of({3, 2}, {0, 1, 2, 3, 4, 5});
  expect_refused({"AveragePool", {ints_of({1, 1, 4}, {1, 2, 3, 4})}, {{"kernel_shape", std::vector<int64_t>{2}}}}, 13,
                 "needs a floating-point input, got int64");
  expect_refused({"CumSum", {x, tensor_of({}, {0})}}, 14, "axis must be int32 or int64, got float32");
  expect_refused({"Trilu", {x, ints_of({2}, {0, 1})}}, 14, "k must be a scalar");
  expect_refused({"DepthToSpace", {tensor_of({1, 4, 1, 2}, {0, 1, 2, 3, 4, 5, 6, 7})}, {{"blocksize", int64_t{2}}, {"mode", std::string("XYZ")}}}, 13,
                 "mode must be 'DCR' or 'CRD', got 'XYZ'");
  Tensor img = tensor_of({1, 1, 2, 2}, {1, 2, 3, 4}), grid = tensor_of({1, 1, 1, 2}, {0, 0});
  expect_refused({"GridSample", {img, grid}, {{"mode", std::string("bilinear")}}}, 20, "unknown mode 'bilinear' at opset 20");
  expect_refused({"GridSample", {img, grid}, {{"mode", std::string("linear")}}}, 16, "unknown mode 'linear' at opset 16");
  expect_refused({"Split", {x}, {}, 0, 2}, 18, "needs the split input or the num_outputs attribute");
  expect_refused({"Split", {x, ints_of({2}, {1, 2})}, {{"num_outputs", int64_t{2}}}, 0, 2}, 18, "not both");
  Tensor f8(DType::f8e4m3fn, {2});
  f8.set(0, 448), f8.set(1, 1);
  expect_refused({"Add", {f8, f8}}, 21, "is not defined for float8e4m3fn");
  // Still valid: Split-18 with num_outputs, Split-13 with neither, Cast of float8.
  EXPECT_EQ(run_op({"Split", {x}, {{"num_outputs", int64_t{2}}}, 0, 2}, 18)[1].shape(), (Shape{1, 2}));
  EXPECT_EQ(run_op({"Split", {x}, {}, 0, 3}, 13)[2].shape(), (Shape{1, 2}));
  expect_values(run_op({"Cast", {f8}, {{"to", int64_t{1}}}}, 21)[0], {448, 1}, 0);
}

// Every backend runs Shape and Gather of strings alike (ref ran them, cpu refused both, vulkan
// ran Gather on its host fallback): string nodes run on the host (OpDef::strings), Shape folds.
TEST(OpsRound5, StringTensorsRunAlikeOnEveryBackend) {
  for (const char* op : {"Shape", "Gather"}) {
    GraphBuilder b("strings", 17);
    const int in = b.input("a", DType::string, {3});
    b.output(std::string(op) == "Shape" ? b.op("Shape", {in}) : b.op("Gather", {in, b.constant("i", ints_of({2}, {2, 0}))}));
    Graph g = b.build();
    for (const std::string& be : backends()) {
      SCOPED_TRACE(std::string(op) + " on " + be);
      Session s(g, be);
      Tensor a(DType::string, {3});
      a.strings = {"x", "y", "z"};
      const Tensor y = s.run({a})[0];
      if (std::string(op) == "Shape") {
        EXPECT_EQ(int_values(y), (std::vector<int64_t>{3}));
      } else {
        EXPECT_EQ(y.strings, (std::vector<std::string>{"z", "x"}));
      }
    }
  }
}

// ReduceL2/ReduceSumSquare/ReduceL1/ReduceLogSum at opset 18 read their axes from input 1 on
// every backend: the cpu/vulkan decomposition used to honour a stale 'axes' attribute that the
// reference ignored (shape [2] vs []). (The importer now refuses that attribute; this is the
// builder's path, which has no schema check.)
TEST(OpsRound5, ReduceAxesAreReadAlikeOnEveryBackend) {
  Tensor x = tensor_of({3, 2}, {1, 2, 3, 4, 5, 6});
  for (const char* op : {"ReduceL2", "ReduceSumSquare", "ReduceL1", "ReduceLogSum"}) {
    GraphBuilder b("reduce", 18);
    const int in = b.input("x", DType::f32, {3, 2});
    b.output(b.op(op, {in}, {{"axes", std::vector<int64_t>{0}}, {"keepdims", int64_t{0}}}));
    Graph g = b.build();
    std::vector<Tensor> outs;
    for (const std::string& be : backends()) {
      SCOPED_TRACE(std::string(op) + " on " + be);
      Session s(g, be);
      outs.push_back(s.run({x})[0]);
      EXPECT_EQ(outs.back().shape(), Shape{});
      EXPECT_NEAR(outs.back().get(0), outs.front().get(0), 1e-5 * std::fabs(outs.front().get(0)));
    }
  }
}

// Nodes of opsets past libonnx 1.12's checker (17) are checked against the generated schema
// table: ReduceSum-18 with the removed 'axes' attribute ran and reduced every axis.
TEST(OnnxRound5, NewerOpsetsAreCheckedAgainstTheirSchema) {
  auto model = [](int opset, const std::string& op, const std::vector<std::string>& inputs, int outputs,
                  const std::vector<std::pair<std::string, std::vector<int64_t>>>& ints) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    auto* os = m.add_opset_import();
    os->set_domain("");
    os->set_version(opset);
    auto* g = m.mutable_graph();
    g->set_name("g");
    for (size_t k = 0; k < inputs.size(); ++k) {
      const std::string& name = inputs[k];
      if (std::find(inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(k), name) != inputs.begin() + static_cast<std::ptrdiff_t>(k)) continue;
      auto* vi = g->add_input();
      vi->set_name(name);
      auto* tt = vi->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(name == "axes" ? onnx::TensorProto::INT64 : onnx::TensorProto::FLOAT);
      tt->mutable_shape()->add_dim()->set_dim_value(name == "axes" ? 1 : 3);
      if (name != "axes") tt->mutable_shape()->add_dim()->set_dim_value(2);
    }
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(op + "_0");
    for (const std::string& name : inputs) n->add_input(name);
    for (int i = 0; i < outputs; ++i) {
      n->add_output("y" + std::to_string(i));
      g->add_output()->set_name("y" + std::to_string(i));
    }
    for (const auto& [name, v] : ints) {
      auto* a = n->add_attribute();
      a->set_name(name);
      if (v.size() == 1 && name != "axes") {
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(v[0]);
      } else {
        a->set_type(onnx::AttributeProto::INTS);
        for (int64_t x : v) a->add_ints(x);
      }
    }
    return m.SerializeAsString();
  };
  auto load_error = [](const std::string& bytes) { return error_of([&] { load_onnx_from_bytes(bytes, "."); }); };
  std::string e = load_error(model(18, "ReduceSum", {"x"}, 1, {{"axes", {0}}}));
  EXPECT_NE(e.find("node 'ReduceSum_0' (ReduceSum): invalid node (onnx schema ReduceSum-13, opset 18)"), std::string::npos) << e;
  EXPECT_NE(e.find("axes"), std::string::npos) << e;
  e = load_error(model(18, "ReduceL2", {"x"}, 1, {{"axes", {0}}}));
  EXPECT_NE(e.find("invalid node (onnx schema ReduceL2-18, opset 18): attribute 'axes' is not defined for ReduceL2-18"), std::string::npos) << e;
  e = load_error(model(21, "ReduceMean", {"x"}, 1, {{"axes", {0}}}));
  EXPECT_NE(e.find("attribute 'axes' is not defined for ReduceMean-18"), std::string::npos) << e;
  e = load_error(model(18, "Split", {"x"}, 2, {{"split", {1, 2}}}));
  EXPECT_NE(e.find("attribute 'split' is not defined for Split-18"), std::string::npos) << e;
  e = load_error(model(19, "Gelu", {"x"}, 1, {}));
  EXPECT_NE(e.find("Gelu is not defined at opset 19 (it first appears in opset 20)"), std::string::npos) << e;
  e = load_error(model(21, "Relu", {"x", "x"}, 1, {}));
  EXPECT_NE(e.find("invalid node (onnx schema Relu-14, opset 21)"), std::string::npos) << e;
  e = load_error(model(20, "ReduceMax", {"x"}, 1, {{"keepdims", {1}}, {"bogus", {1}}}));
  EXPECT_NE(e.find("attribute 'bogus' is not defined for ReduceMax-20"), std::string::npos) << e;
  // Valid newer-opset nodes still load.
  EXPECT_EQ(load_error(model(18, "ReduceL2", {"x", "axes"}, 1, {{"keepdims", {0}}})), "");  // no error
  EXPECT_EQ(load_error(model(21, "Split", {"x"}, 2, {{"num_outputs", {2}}})), "");  // no error
  EXPECT_EQ(load_error(model(21, "ReduceSum", {"x", "axes"}, 1, {})), "");  // no error
  EXPECT_EQ(load_error(model(20, "Gelu", {"x"}, 1, {})), "");  // no error
}

}  // namespace
}  // namespace fusor
