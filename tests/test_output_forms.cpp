// String labels and ZipMap at a model's outputs (ir/output_forms.h): scikit-learn classifiers as
// skl2onnx exports them by default (tests/data/make_skl2onnx_zipmap.py) against onnxruntime
// 1.32's stored outputs on every backend, the values a Session hands back (string tensors, the
// maps' [N, C] values and keys), the sequence-of-maps file written and read back, and what stays
// refused in one line (maps or strings read by other ops, keys that do not match); and string
// inputs as codes (tests/data/make_skl2onnx_strings.py: categorical columns, CategoryMapper).
#include <gtest/gtest.h>

#include <filesystem>

#include "ir/output_forms.h"
#include "onnx_test_util.h"
#include "runtime/conform.h"
#include "runtime/session.h"
#include "runtime/tensor_io.h"
#include "test_util.h"

namespace fusor {
namespace {

namespace fs = std::filesystem;
using Form = Graph::OutputForm;

std::string case_dir(const std::string& name) { return std::string(FUSOR_SOURCE_DIR) + "/tests/data/skl2onnx/" + name; }

TEST(OutputForms, Skl2onnxDefaultClassifiersMatchOnnxruntimeOnEveryBackend) {
  for (const char* m : {"zm_logreg3", "zm_logreg3_str", "zm_rfc2_str", "zm_gbc3_str", "zm_svc3_str", "zm_dtc2"})
    for (const std::string& be : testing::usable_backends()) {
      const CaseResult r = run_case(case_dir(m), be, ConformOptions{});
      EXPECT_EQ(r.status, CaseStatus::passed) << m << " on " << be << ": " << r.detail;
    }
}

TEST(OutputForms, SessionHandsBackStringLabelsAndTheMapsValues) {
  const Graph g = load_model(case_dir("zm_logreg3_str") + "/model.onnx");
  ASSERT_EQ(g.output_forms.size(), 2u);
  EXPECT_EQ(g.output_forms[0].kind, Form::Kind::labels);
  EXPECT_EQ(g.output_forms[0].strings, (std::vector<std::string>{"cat", "dog", "emu"}));
  EXPECT_EQ(g.output_forms[1].kind, Form::Kind::zipmap);
  EXPECT_TRUE(g.output_forms[1].string_keys);
  EXPECT_EQ(output_form_type(g, 0), "string");
  EXPECT_EQ(output_form_type(g, 1), "seq(map(string, float))");
  const TestCase tc = load_test_data_sets(case_dir("zm_logreg3_str")).at(0);
  ASSERT_TRUE(tc.output_maps.at(1).has_value());
  const std::vector<Tensor> want = expected_outputs(g, tc, "test");
  ASSERT_EQ(want[0].dtype(), DType::string);
  for (const std::string& be : testing::usable_backends()) {
    SCOPED_TRACE(be);
    const std::vector<Tensor> out = Session(g, be).run(tc.inputs);
    ASSERT_EQ(out[0].dtype(), DType::string);
    EXPECT_EQ(out[0].shape(), (Shape{9}));
    EXPECT_EQ(out[0].strings, want[0].strings);
    ASSERT_EQ(out[1].dtype(), DType::f32);
    EXPECT_EQ(out[1].shape(), (Shape{9, 3}));
    for (int64_t i = 0; i < 27; ++i) EXPECT_NEAR(out[1].get(i), want[1].get(i), 1e-6) << i;
    // Each row is a probability distribution over the three keys.
    for (int64_t r = 0; r < 9; ++r) EXPECT_NEAR(out[1].get(3 * r) + out[1].get(3 * r + 1) + out[1].get(3 * r + 2), 1.0, 1e-5);
  }
  // int64 keys: the classes' own values (10 and 11), labels stay int64.
  const Graph d = load_model(case_dir("zm_dtc2") + "/model.onnx");
  ASSERT_EQ(d.output_forms.size(), 2u);
  EXPECT_EQ(d.output_forms[0].kind, Form::Kind::tensor);
  EXPECT_EQ(d.output_forms[1].int_keys, (std::vector<int64_t>{10, 11}));
  EXPECT_EQ(output_form_type(d, 1), "seq(map(int64, float))");
}

// What `fusor run --out` writes for a ZipMap output reads back as the same values and keys.
TEST(OutputForms, SequenceOfMapsFileRoundTrips) {
  const Graph g = load_model(case_dir("zm_logreg3") + "/model.onnx");
  const TestCase tc = load_test_data_sets(case_dir("zm_logreg3")).at(0);
  const std::vector<Tensor> out = Session(g, "ref").run(tc.inputs);
  const testing::TempDir tmp;
  const fs::path dir = tmp.path / "m";
  fs::create_directories(dir / "test_data_set_0");
  fs::copy_file(case_dir("zm_logreg3") + "/model.onnx", dir / "model.onnx");
  write_tensor_pb((dir / "test_data_set_0/input_0.pb").string(), tc.inputs[0], "X");
  write_tensor_pb((dir / "test_data_set_0/output_0.pb").string(), out[0], "output_label");
  write_map_sequence_pb((dir / "test_data_set_0/output_1.pb").string(), out[1], g.output_forms[1], "output_probability");
  const TestCase back = load_test_data_sets(dir.string()).at(0);
  ASSERT_TRUE(back.output_maps.at(1).has_value());
  EXPECT_EQ(back.output_maps[1]->keys.at(0), (std::vector<std::string>{"0", "1", "2"}));
  const std::vector<Tensor> read = expected_outputs(g, back, "test");
  ASSERT_EQ(read[1].shape(), out[1].shape());
  for (int64_t i = 0; i < out[1].numel(); ++i) EXPECT_EQ(read[1].get(i), out[1].get(i)) << i;
  EXPECT_EQ(run_case(dir.string(), "ref", ConformOptions{}).status, CaseStatus::passed);
  // Keys that are not the model's: a failure naming the key, not a pass or a crash.
  Form other = g.output_forms[1];
  other.int_keys = {0, 1, 5};
  write_map_sequence_pb((dir / "test_data_set_0/output_1.pb").string(), out[1], other, "output_probability");
  const CaseResult r = run_case(dir.string(), "ref", ConformOptions{});
  EXPECT_EQ(r.status, CaseStatus::failed);
  EXPECT_NE(r.detail.find("lacks the key '2'"), std::string::npos) << r.detail;
  // A tensor where the model returns maps.
  write_tensor_pb((dir / "test_data_set_0/output_1.pb").string(), out[1], "output_probability");
  const CaseResult t = run_case(dir.string(), "ref", ConformOptions{});
  EXPECT_EQ(t.status, CaseStatus::failed);
  EXPECT_NE(t.detail.find("holds a tensor, but the model's output 1 is seq(map(int64, float))"), std::string::npos) << t.detail;
}

// A classifier over x [2, 2] with string labels, its label read by `reader` (an op on the label
// output, "" for none) and its scores through a ZipMap (zipmap_reader: an op reading the maps;
// "dead": the maps are neither read nor a graph output).
onnx::ModelProto classifier(const std::string& reader, const std::string& zipmap_reader = "") {
  onnx::ModelProto m = testing::onnx_model("clf");
  auto* ml = m.add_opset_import();
  ml->set_domain("ai.onnx.ml");
  ml->set_version(3);
  auto* g = m.mutable_graph();
  testing::onnx_value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 2});
  auto* c = testing::onnx_node(g, "LinearClassifier", {"x"}, {"label", "scores"});
  c->set_domain("ai.onnx.ml");
  testing::attr_strings(c, "classlabels_strings", {"a", "b"});
  testing::attr_floats(c, "coefficients", {1, -1, -1, 1});
  testing::attr_floats(c, "intercepts", {0, 0});
  auto* z = testing::onnx_node(g, "ZipMap", {"scores"}, {"maps"});
  z->set_domain("ai.onnx.ml");
  testing::attr_strings(z, "classlabels_strings", {"a", "b"});
  std::string label_out = "label";
  if (!reader.empty()) {
    auto* r = testing::onnx_node(g, reader, {"label", "label"}, {"read"});
    if (reader == "Concat") testing::attr_i(r, "axis", 0);
    label_out = "read";
  }
  g->add_output()->set_name(label_out);
  if (zipmap_reader == "dead") {
  } else if (!zipmap_reader.empty()) {
    testing::onnx_node(g, zipmap_reader, {"maps"}, {"after"});
    g->add_output()->set_name("after");
  } else {
    g->add_output()->set_name("maps");
  }
  return m;
}

TEST(OutputForms, LabelsThroughDataMovesPassAndOtherReadersAreRefusedInOneLine) {
  const Tensor x = testing::tensor_of({2, 2}, {2, 1, -1, 3});
  // Concat of the labels with themselves: a data move, the strings follow.
  const std::vector<Tensor> out = Session(testing::load_proto(classifier("Concat")), "ref").run({x});
  ASSERT_EQ(out[0].dtype(), DType::string);
  EXPECT_EQ(out[0].strings, (std::vector<std::string>{"a", "b", "a", "b"}));
  // Equal of strings: no backend computes on strings.
  std::string e = testing::error_of([&] { Session(testing::load_proto(classifier("Equal")), "ref").run({x}); });
  EXPECT_NE(e.find("reads 'label', string labels"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  // A node reading ZipMap's maps.
  e = testing::error_of([&] { testing::load_proto(classifier("", "Identity")); });
  EXPECT_NE(e.find("maps are supported only"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

// A ZipMap whose maps nothing reads and no output returns (a CatBoost classifier with its map
// output pruned) is dead code, dropped as onnxruntime drops it; the labels still run
// (red-team round 58: refused, "its seq(map) output must be a graph output").
TEST(OutputForms, AnUnreadZipMapIsDeadCode) {
  const Tensor x = testing::tensor_of({2, 2}, {2, 1, -1, 3});
  const Graph g = testing::load_proto(classifier("", "dead"));
  for (const std::string& be : testing::usable_backends()) {
    const std::vector<Tensor> out = Session(g, be).run({x});
    ASSERT_EQ(out.size(), 1u) << be;
    EXPECT_EQ(out[0].strings, (std::vector<std::string>{"a", "b"})) << be;
  }
}

TEST(OutputForms, StringInputPipelinesMatchOnnxruntimeOnEveryBackend) {
  for (const char* m : {"st_coltrans", "st_ordinal_rf", "st_catmap"})
    for (const std::string& be : testing::usable_backends()) {
      ConformOptions o;
      o.fallback = std::string(m) == "st_ordinal_rf" || be == "ref" || be == "cpu";  // the encoders are standard ops
      const CaseResult r = run_case(case_dir(m), be, o);
      EXPECT_EQ(r.status, CaseStatus::passed) << m << " on " << be << ": " << r.detail;
    }
}

using testing::strings_of;

// CategoryMapper over a string input: known strings map to their ints, any other string (the
// empty one too) to the default; int64 codes are taken as they are; a float is refused.
TEST(OutputForms, StringInputsRunAsCodes) {
  const Graph g = load_model(case_dir("st_catmap") + "/model.onnx");
  ASSERT_EQ(g.string_inputs, (std::vector<char>{1}));
  EXPECT_EQ(g.input_strings, (std::vector<std::string>{"one", "three", "two"}));
  const Tensor s = strings_of({2, 3}, {"two", "one", "", "three", "One", "two"});
  for (const std::string& be : testing::usable_backends()) {
    SCOPED_TRACE(be);
    Session sess(g, be);
    const Tensor y = sess.run({s})[0];
    EXPECT_EQ(y.dtype(), DType::i64);
    testing::expect_values(y, {2, 1, -7, 3, -7, 2}, 0);
    testing::expect_values(sess.run({testing::tensor_of({2, 3}, {0, -1, 2, 1, 1, 0}, DType::i64)})[0], {1, -7, 2, 3, 3, 1}, 0);
  }
  EXPECT_ERROR(Session(g, "ref").run({testing::tensor_of({2, 3}, {0, 1, 0, 1, 0, 1})}), "input 's' expects string, got float32");
  EXPECT_ERROR(Session(g, "ref").run({testing::tensor_of({2, 3}, {0, 1, 0, 1, 0, 3}, DType::i64)}), "string code 3 is outside [-1, 3)");
  // Random inputs are strings the model knows (and a few it does not).
  const std::vector<Tensor> r = random_inputs(g, 1);
  ASSERT_EQ(r[0].dtype(), DType::string);
  EXPECT_EQ(Session(g, "cpu").run(r)[0].shape(), (Shape{2, 3}));
}

// Every CLI command takes a model with string inputs and forms: run (printing and --out), diff,
// bench, explain, conform.
TEST(OutputForms, EveryCommandTakesStringInputsAndForms) {
  if (!testing::have_cli()) GTEST_SKIP() << "the fusor CLI is not built here (FUSOR_BIN)";
  const std::string m = case_dir("st_ordinal_rf");
  const testing::TempDir tmp;
  std::string out;
  ASSERT_EQ(testing::run_cli("run " + m + " --backend cpu --out " + (tmp / "o"), &out), 0) << out;
  EXPECT_NE(out.find("output  output_label string [5]: ['hit'"), std::string::npos) << out;
  EXPECT_NE(out.find("seq(map(string, float)) of 5 maps"), std::string::npos) << out;
  EXPECT_NE(out.find("check   output 1 vs"), std::string::npos) << out;
  const TestCase written = [&] {
    fs::create_directories(tmp.path / "w" / "test_data_set_0");
    fs::copy_file(tmp / "o/output_1.pb", tmp.path / "w/test_data_set_0/output_1.pb");
    fs::copy_file(tmp / "o/output_0.pb", tmp.path / "w/test_data_set_0/output_0.pb");
    fs::copy_file(m + "/test_data_set_0/input_0.pb", tmp.path / "w/test_data_set_0/input_0.pb");
    return load_test_data_sets((tmp.path / "w").string()).at(0);
  }();
  ASSERT_TRUE(written.output_maps.at(1).has_value());
  EXPECT_EQ(written.outputs.at(0).dtype(), DType::string);
  EXPECT_EQ(testing::run_cli("diff " + m + " --backend ref --backend cpu", &out), 0) << out;
  EXPECT_EQ(testing::run_cli("bench " + m + " --backend cpu --iters 2", &out), 0) << out;
  EXPECT_EQ(testing::run_cli("explain " + m, &out), 0) << out;
  EXPECT_EQ(testing::run_cli("conform " + m + " " + case_dir("st_coltrans") + " --backend ref --backend cpu", &out), 0) << out;
}

// A string input read by anything but the categorical encoders keeps its strings: those nodes
// run on the host (ir/ops/strings.cpp), so Equal compares the strings and Identity returns them.
TEST(OutputForms, StringInputsReadByOtherOpsRunOnTheHost) {
  for (const std::string& op : {"Equal", "Identity"}) {
    onnx::ModelProto m = testing::onnx_model("s", 9, 19);  // Equal takes strings from opset 19
    auto* g = m.mutable_graph();
    testing::onnx_value_info(g->add_input(), "s", onnx::TensorProto::STRING, {2});
    if (op == "Equal") {
      onnx::TensorProto* c = g->add_initializer();
      c->set_name("c"), c->set_data_type(onnx::TensorProto::STRING), c->add_dims(2);
      c->add_string_data("ab"), c->add_string_data("x");
    }
    testing::onnx_node(g, op, op == "Equal" ? std::vector<std::string>{"s", "c"} : std::vector<std::string>{"s"}, {"y"});
    g->add_output()->set_name("y");
    const Graph model = testing::load_proto(m);
    Tensor in(DType::string, {2});
    in.strings = {"ab", ""};
    for (const std::string& be : testing::usable_backends()) {
      SCOPED_TRACE(op + " on " + be);
      const Tensor y = Session(model, be).run({in})[0];
      if (op == "Equal") {
        ASSERT_EQ(y.dtype(), DType::boolean);
        EXPECT_EQ(y.get_int(0), 1);
        EXPECT_EQ(y.get_int(1), 0);
      } else {
        EXPECT_EQ(y.strings, in.strings);
      }
    }
  }
}

}  // namespace
}  // namespace fusor
