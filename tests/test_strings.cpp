// String tensors computed on the host (ir/ops/strings.cpp, OpDef::strings): the text ops
// (StringNormalizer, StringConcat, StringSplit, RegexFullMatch), Equal / Cast / LabelEncoder
// over strings and the data moves of strings, on every backend, with the numeric rest of a
// model on the device (runtime/segments.h). Expected values follow the ONNX operator spec
// (Python's str.split for StringSplit, RE2 full matches); strings and integers compare exactly.
#include <gtest/gtest.h>

#include <cmath>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "runtime/conform.h"
#include "runtime/segments.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

using testing::error_of;
using testing::strings_of;
using testing::usable_backends;

TEST(Strings, TextOpsFollowTheSpecOnEveryBackend) {
  GraphBuilder b("text", 20);
  const int x = b.input("x", DType::string, {5});
  const int w = b.input("w", DType::f32, {5});
  const int norm = b.op("StringNormalizer", {x}, {{"case_change_action", std::string("LOWER")}});
  b.output(norm);
  b.output(b.op("StringConcat", {norm, b.constant("bang", strings_of({}, {"!"}))}));
  const int hit = b.op("RegexFullMatch", {x}, {{"pattern", std::string(R"([A-Za-z]+@\w+\.com)")}});
  b.output(hit);
  b.output(b.op("Equal", {x, b.constant("key", strings_of({1}, {"a@b@c"}))}));
  b.output(b.op("Where", {hit, x, b.constant("no", strings_of({1}, {"-"}))}));
  // A numeric tail the device computes from the host's bools.
  b.output(b.op("Mul", {b.op("Cast", {hit}, {{"to", int64_t{1}}}), w}));
  const Graph g = b.build();
  const Tensor in = strings_of({5}, {"The", "Cat@Home.com", "a", "a@b@c", "  Sat  "});
  const Tensor ws = testing::tensor_of({5}, {1.5, 2.5, 3.5, 4.5, 5.5});
  for (const std::string& be : usable_backends()) {
    SCOPED_TRACE(be);
    auto exe = compile_with_fallback(*make_backend(be), specialize(g, {in, ws}), {});
    const std::vector<Tensor> o = exe->run({in, ws});
    ASSERT_EQ(o.size(), 6u);
    EXPECT_EQ(o[0].strings, (std::vector<std::string>{"the", "cat@home.com", "a", "a@b@c", "  sat  "}));
    EXPECT_EQ(o[1].strings, (std::vector<std::string>{"the!", "cat@home.com!", "a!", "a@b@c!", "  sat  !"}));
    EXPECT_EQ(testing::int_values(o[2]), (std::vector<int64_t>{0, 1, 0, 0, 0}));
    EXPECT_EQ(testing::int_values(o[3]), (std::vector<int64_t>{0, 0, 0, 1, 0}));
    EXPECT_EQ(o[4].strings, (std::vector<std::string>{"-", "Cat@Home.com", "-", "-", "-"}));
    for (int i = 0; i < 5; ++i) EXPECT_EQ(o[5].get(i), i == 1 ? 2.5 : 0.0) << i;
    // The string nodes ran on the host, the Cast and Mul on the backend's plan.
    if (be != "ref") EXPECT_EQ(graph_breaks(*exe).size(), 5u);
  }
}

// Stopwords compare case-insensitively unless is_case_sensitive; every string a stopword gives
// one empty string ([1, 1] for a [1, C] input). The count follows the strings: specialised.
TEST(Strings, StringNormalizerStopwords) {
  for (const bool sensitive : {false, true}) {
    GraphBuilder b("stop", 20);
    b.output(b.op("StringNormalizer", {b.input("x", DType::string, {1, 4})},
                  {{"case_change_action", std::string("UPPER")}, {"is_case_sensitive", int64_t{sensitive}},
                   {"stopwords", std::vector<std::string>{"the", "A"}}}));
    const Graph g = b.build();
    for (const std::string& be : usable_backends()) {
      SCOPED_TRACE(be + (sensitive ? " sensitive" : " insensitive"));
      Session sess(g, be);
      const Tensor y = sess.run({strings_of({1, 4}, {"The", "cat", "a", "A"})})[0];
      const std::vector<std::string> want = sensitive ? std::vector<std::string>{"THE", "CAT", "A"} : std::vector<std::string>{"CAT"};
      EXPECT_EQ(y.strings, want);
      EXPECT_EQ(y.shape(), (Shape{1, static_cast<int64_t>(y.strings.size())}));
      const Tensor none = sess.run({strings_of({1, 4}, {"the", "the", "A", sensitive ? "A" : "a"})})[0];
      EXPECT_EQ(none.shape(), (Shape{1, 1}));
      EXPECT_EQ(none.strings, (std::vector<std::string>{""}));
    }
  }
}

// Non-ASCII letters change case as onnxruntime 1.32 changes them (its outputs for these words
// under locale C.UTF-8, recorded): Unicode's simple one-to-one mapping (U+00DF and the fi
// ligature keep theirs, U+0130 lowers to 'i', fullwidth letters map), stopwords compared in
// lower case whatever the script; bytes that are not UTF-8 pass through unchanged.
TEST(Strings, StringNormalizerMapsNonAsciiLettersAsOnnxruntime) {
  const std::vector<std::string> words = {"Ärger", "straße", "ÉCOLE", "Ωμέγα", "İstanbul", "ǅemal", "ﬁne", "ＡＢＣ", "déjà", "ı", "\xff\xc3" "Ab"};
  const std::vector<std::string> upper = {"ÄRGER", "STRAßE", "ÉCOLE", "ΩΜΈΓΑ", "İSTANBUL", "ǄEMAL", "ﬁNE", "ＡＢＣ", "DÉJÀ", "I", "\xff\xc3" "AB"};
  const std::vector<std::string> lower = {"ärger", "straße", "école", "ωμέγα", "istanbul", "ǆemal", "ﬁne", "ａｂｃ", "déjà", "ı", "\xff\xc3" "ab"};
  const int64_t n = static_cast<int64_t>(words.size());
  for (const std::string action : {"UPPER", "LOWER"}) {
    for (const bool stop : {false, true}) {
      GraphBuilder b("unicode", 17);
      GraphBuilder::Attrs attrs = {{"case_change_action", action}};
      if (stop) attrs["stopwords"] = std::vector<std::string>{"ärger", "ΩΜΈΓΑ"};
      b.output(b.op("StringNormalizer", {b.input("x", DType::string, {n})}, attrs));
      const Graph g = b.build();
      std::vector<std::string> want = action == "UPPER" ? upper : lower;
      if (stop) want.erase(want.begin() + 3), want.erase(want.begin());
      for (const std::string& be : usable_backends()) {
        SCOPED_TRACE(be + " " + action + (stop ? " stopwords" : ""));
        Session sess(g, be);
        EXPECT_EQ(sess.run({strings_of({n}, words)})[0].strings, want);
      }
    }
  }
}

// Text models against onnxruntime 1.32's stored outputs (tests/data/make_skl2onnx_text.py):
// skl2onnx's CountVectorizer / TfidfVectorizer pipelines (StringNormalizer, Tokenizer with a
// token expression, TfIdfVectorizer over pool_strings, then the numeric classifier on the
// device), the Tokenizer's modes (separators split in turn, RE2's longest match, "." as
// characters), a string-to-string LabelEncoder, and a ColumnTransformer whose categorical column
// runs as codes while its text column stays strings.
TEST(Strings, TextModelsMatchOnnxruntimeOnEveryBackend) {
  for (const char* m : {"tx_count_logreg", "tx_tfidf_bigrams", "tx_tok_seps", "tx_tok_chars", "tx_norm_label", "tx_tok_longest",
                        "tx_tok_order", "tx_tok_dot", "tx_mixed_coltrans"})
    for (const std::string& be : usable_backends()) {
      const CaseResult r = run_case(std::string(FUSOR_SOURCE_DIR) + "/tests/data/skl2onnx/" + m, be, ConformOptions{});
      EXPECT_EQ(r.status, CaseStatus::passed) << m << " on " << be << ": " << r.detail;
    }
}

// Python's str.split without a delimiter: runs of whitespace, nothing from the ends; the
// substring count (the last dim) follows the data, so one Session sees two shapes.
TEST(Strings, SplitOnWhitespaceFollowsTheDataAcrossRuns) {
  GraphBuilder b("split", 20);
  const int x = b.input("x", DType::string, {2});
  const std::vector<int> s = b.op_multi("StringSplit", {x}, {}, 2);
  b.output(s[0]);
  b.output(s[1]);
  const Graph g = b.build();
  for (const std::string& be : usable_backends()) {
    SCOPED_TRACE(be);
    Session sess(g, be);
    std::vector<Tensor> o = sess.run({strings_of({2}, {"  hello   world ! ", ""})});
    EXPECT_EQ(o[0].shape(), (Shape{2, 3}));
    EXPECT_EQ(o[0].strings, (std::vector<std::string>{"hello", "world", "!", "", "", ""}));
    EXPECT_EQ(testing::int_values(o[1]), (std::vector<int64_t>{3, 0}));
    o = sess.run({strings_of({2}, {"one", "two"})});
    EXPECT_EQ(o[0].shape(), (Shape{2, 1}));
    EXPECT_EQ(o[0].strings, (std::vector<std::string>{"one", "two"}));
  }
  // maxsplit: the rest keeps its inner and trailing whitespace ("  a b  c  ".split(None, 1)).
  GraphBuilder m("split1", 20);
  const std::vector<int> s1 = m.op_multi("StringSplit", {m.input("x", DType::string, {1})}, {{"maxsplit", int64_t{1}}}, 2);
  m.output(s1[0]);
  const Graph g1 = m.build();
  for (const std::string& be : usable_backends())
    EXPECT_EQ(Session(g1, be).run({strings_of({1}, {"  a b  c  \x1f"})})[0].strings, (std::vector<std::string>{"a", "b  c  \x1f"})) << be;
}

// A text feature into a numeric model: the LabelEncoder (strings to floats) runs on the host,
// the arithmetic after it on the device; the break is named.
TEST(Strings, StringNodesRunOnTheHostBeforeTheDeviceSegment) {
  GraphBuilder b("encode", 17);
  const int x = b.input("x", DType::string, {4});
  const int w = b.input("w", DType::f32, {4});
  const int lower = b.op("StringNormalizer", {x}, {{"case_change_action", std::string("LOWER")}});
  const int code = b.op("LabelEncoder", {lower}, {{"keys_strings", std::vector<std::string>{"red", "green", "blue"}},
                                                  {"values_floats", std::vector<double>{1.5, 2.5, 4.0}},
                                                  {"default_float", -1.0}});
  b.output(b.op("Mul", {b.op("Add", {code, w}), w}));
  Graph g = b.build();
  for (Node& n : g.nodes)
    if (n.op_type == "LabelEncoder") n.domain = "ai.onnx.ml", n.opset = 2;
  const Tensor xs = strings_of({4}, {"Blue", "RED", "violet", "green"});
  const Tensor ws = testing::tensor_of({4}, {0.5, -2, 3, 0.25});
  const double want[4] = {(4.0 + 0.5) * 0.5, (1.5 - 2) * -2, (-1.0 + 3) * 3, (2.5 + 0.25) * 0.25};
  for (const std::string& be : usable_backends()) {
    SCOPED_TRACE(be);
    const Graph sg = specialize(g, {xs, ws});
    auto exe = compile_with_fallback(*make_backend(be), sg, {});
    Tensor out = exe->run({xs, ws})[0];
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out.get(i), want[i]) << i;
    if (be == "ref") continue;
    const std::vector<GraphBreak> br = graph_breaks(*exe);
    ASSERT_EQ(br.size(), 2u);
    EXPECT_EQ(br[0].op, "StringNormalizer");
    EXPECT_EQ(br[1].op, "LabelEncoder");
    EXPECT_NE(describe(br[1]).find("strings are computed on the host"), std::string::npos) << describe(br[1]);
  }
}

// LabelEncoder's other string forms: int64 to strings and strings to strings (ml opset 2),
// with the default where no key matches.
TEST(Strings, LabelEncoderMapsToStrings) {
  for (const bool from_strings : {false, true}) {
    SCOPED_TRACE(from_strings ? "strings to strings" : "int64 to strings");
    GraphBuilder b("labels", 17);
    const int x = b.input("x", from_strings ? DType::string : DType::i64, {3});
    GraphBuilder::Attrs a{{"values_strings", std::vector<std::string>{"low", "high"}}, {"default_string", std::string("none")}};
    if (from_strings) a["keys_strings"] = std::vector<std::string>{"0", "1"};
    else a["keys_int64s"] = std::vector<int64_t>{0, 1};
    b.output(b.op("LabelEncoder", {x}, a));
    Graph g = b.build();
    g.nodes[0].domain = "ai.onnx.ml", g.nodes[0].opset = 2;
    const Tensor in = from_strings ? strings_of({3}, {"1", "7", "0"}) : testing::ints_of({3}, {1, 7, 0});
    for (const std::string& be : usable_backends()) {
      SCOPED_TRACE(be);
      EXPECT_EQ(Session(g, be).run({in})[0].strings, (std::vector<std::string>{"high", "none", "low"}));
    }
  }
}

// ml opset 1's LabelEncoder (classes_strings): strings to their index, int64 to the class at
// that index, the defaults elsewhere; a repeated class takes its last index. Expected values are
// onnxruntime 1.32's outputs for the same models.
TEST(Strings, LabelEncoderOpset1MapsClassesBothWays) {
  for (const bool from_strings : {true, false}) {
    SCOPED_TRACE(from_strings ? "strings to int64" : "int64 to strings");
    GraphBuilder b("labels", 13);
    GraphBuilder::Attrs a{{"classes_strings", std::vector<std::string>{"a", "b", "a", "c"}}};
    if (from_strings) a["default_int64"] = int64_t{42};
    b.output(b.op("LabelEncoder", {b.input("x", from_strings ? DType::string : DType::i64, {5})}, a));
    Graph g = b.build();
    g.nodes[0].domain = "ai.onnx.ml", g.nodes[0].opset = 1;
    const Tensor in = from_strings ? strings_of({5}, {"c", "a", "zz", "b", ""}) : testing::ints_of({5}, {3, 0, 7, -1, 2});
    for (const std::string& be : usable_backends()) {
      SCOPED_TRACE(be);
      const Tensor y = Session(g, be).run({in})[0];
      if (from_strings) EXPECT_EQ(testing::int_values(y), (std::vector<int64_t>{3, 2, 42, 1, 42}));
      else EXPECT_EQ(y.strings, (std::vector<std::string>{"c", "a", "_Unused", "_Unused", "a"}));
    }
  }
}

// A default_string beside numeric keys and values is unused (onnxruntime ignores it too).
TEST(Strings, LabelEncoderIgnoresAnUnusedDefaultString) {
  GraphBuilder b("labels", 17);
  b.output(b.op("LabelEncoder", {b.input("x", DType::i64, {2})},
                {{"keys_int64s", std::vector<int64_t>{1, 2}}, {"values_int64s", std::vector<int64_t>{10, 20}},
                 {"default_int64", int64_t{-5}}, {"default_string", std::string("unused")}}));
  Graph g = b.build();
  g.nodes[0].domain = "ai.onnx.ml", g.nodes[0].opset = 2;
  for (const std::string& be : usable_backends())
    EXPECT_EQ(testing::int_values(Session(g, be).run({testing::ints_of({2}, {1, 7})})[0]), (std::vector<int64_t>{10, -5})) << be;
}

// Cast to string writes 8 significant digits (%.8g, as onnxruntime) and NaN / INF / -INF;
// Cast from string reads the decimal back.
TEST(Strings, CastToAndFromStringRoundTrips) {
  GraphBuilder b("cast", 21);
  const int x = b.input("x", DType::f32, {5});
  const int s = b.op("Cast", {x}, {{"to", int64_t{8}}});
  b.output(s);
  b.output(b.op("Cast", {s}, {{"to", int64_t{1}}}));
  b.output(b.op("Cast", {b.op("Cast", {x}, {{"to", int64_t{7}}})}, {{"to", int64_t{8}}}));
  const Graph g = b.build();
  const Tensor in = testing::tensor_of({5}, {std::nan(""), -INFINITY, 0.1, -2.5, 3e38});
  for (const std::string& be : usable_backends()) {
    SCOPED_TRACE(be);
    const std::vector<Tensor> o = Session(g, be).run({in});
    EXPECT_EQ(o[0].strings, (std::vector<std::string>{"NaN", "-INF", "0.1", "-2.5", "3e+38"}));
    EXPECT_TRUE(std::isnan(o[1].get(0)));
    for (int i = 1; i < 5; ++i) EXPECT_EQ(o[1].get(i), in.get(i)) << i;
    EXPECT_EQ(o[2].strings[3], "-2");
  }
  GraphBuilder c("bad", 21);
  c.output(c.op("Cast", {c.input("s", DType::string, {1})}, {{"to", int64_t{1}}}));
  const std::string e = error_of([&] { Session(c.build(), "ref").run({strings_of({1}, {"1.5x"})}); });
  EXPECT_NE(e.find("cannot read '1.5x' as float32"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

// The index ops move strings like any element (their references copy by value); a scatter
// reduction other than 'none' is not defined on strings and says so.
TEST(Strings, IndexOpsMoveStrings) {
  GraphBuilder b("moves", 18);
  const int x = b.input("x", DType::string, {2, 2});
  b.output(b.op("GatherElements", {x, b.constant("i", testing::ints_of({2, 2}, {1, 0, 0, 0}))}, {{"axis", int64_t{1}}}));
  b.output(b.op("GatherND", {x, b.constant("j", testing::ints_of({2, 2}, {1, 1, 0, 1}))}));
  b.output(b.op("ScatterElements", {x, b.constant("k", testing::ints_of({1, 1}, {1})), b.constant("u", strings_of({1, 1}, {"new"}))},
                {{"axis", int64_t{0}}}));
  b.output(b.op("ScatterND", {x, b.constant("m", testing::ints_of({1, 1}, {0})), b.constant("v", strings_of({1, 2}, {"p", "q"}))}));
  const Graph g = b.build();
  const Tensor in = strings_of({2, 2}, {"a", "b", "c", "d"});
  for (const std::string& be : usable_backends()) {
    SCOPED_TRACE(be);
    const std::vector<Tensor> o = Session(g, be).run({in});
    EXPECT_EQ(o[0].strings, (std::vector<std::string>{"b", "a", "c", "c"}));
    EXPECT_EQ(o[1].strings, (std::vector<std::string>{"d", "b"}));
    EXPECT_EQ(o[2].strings, (std::vector<std::string>{"a", "b", "new", "d"}));
    EXPECT_EQ(o[3].strings, (std::vector<std::string>{"p", "q", "c", "d"}));
  }
  GraphBuilder r("reduce", 18);
  r.output(r.op("ScatterElements", {r.input("x", DType::string, {2}), r.constant("k", testing::ints_of({1}, {1})),
                                    r.constant("u", strings_of({1}, {"z"}))},
                {{"reduction", std::string("add")}}));
  const std::string e = error_of([&] { Session(r.build(), "ref").run({strings_of({2}, {"a", "b"})}); });
  EXPECT_NE(e.find("reduction 'add' of strings is not defined"), std::string::npos) << e;
  EXPECT_NE(e.find("ScatterElements"), std::string::npos) << e;  // names the node
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

// Compress and ReverseSequence move strings too (onnxruntime 1.32's outputs for the same models).
TEST(Strings, CompressAndReverseSequenceMoveStrings) {
  GraphBuilder b("moves2", 13);
  const int x = b.input("x", DType::string, {3, 2});
  const auto bools = [](std::vector<int> v) {
    Tensor t(DType::boolean, {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) t.set_int(static_cast<int64_t>(i), v[i]);
    return t;
  };
  b.output(b.op("Compress", {x, b.constant("c", bools({1, 0}))}, {{"axis", int64_t{1}}}));
  b.output(b.op("Compress", {x, b.constant("c2", bools({0, 1, 1, 0, 0, 1}))}));
  b.output(b.op("ReverseSequence", {x, b.constant("l", testing::ints_of({2}, {3, 2}))}, {{"time_axis", int64_t{0}}, {"batch_axis", int64_t{1}}}));
  const Graph g = b.build();
  const Tensor in = strings_of({3, 2}, {"a", "b", "c", "d", "e", "f"});
  for (const std::string& be : usable_backends()) {
    SCOPED_TRACE(be);
    const std::vector<Tensor> o = Session(g, be).run({in});
    EXPECT_EQ(o[0].strings, (std::vector<std::string>{"a", "c", "e"}));
    EXPECT_EQ(o[1].strings, (std::vector<std::string>{"b", "c", "f"}));
    EXPECT_EQ(o[2].strings, (std::vector<std::string>{"e", "d", "c", "b", "a", "f"}));
  }
}

// Scan and Loop bodies that split or tokenize their string slices, a 70-step reversed Scan
// carrying a string state and stacking string outputs along axis 1, and an If whose branches
// return strings (red-team round 56: the slices were moved as bytes, so every body saw empty
// strings; ref refused them). onnxruntime's outputs, tests/data/make_strings_control.py.
TEST(Strings, ControlFlowCarriesStrings) {
  for (const char* m : {"scan_split_count", "scan_tokenizer_size", "scan_string_state_reversed", "loop_split_rows", "if_strings_true",
                        "if_strings_false"})
    for (const std::string& be : usable_backends()) {
      const CaseResult r = run_case(std::string(FUSOR_SOURCE_DIR) + "/tests/data/strings_control/" + m, be, ConformOptions{});
      EXPECT_EQ(r.status, CaseStatus::passed) << m << " on " << be << ": " << r.detail;
    }
}

// An omitted output 0 with a later output used is refused by name (it crashed StringSplit);
// an empty Tokenizer input gives [N, 0] or [0], as onnxruntime's kernel gives it.
TEST(Strings, OmittedFirstOutputAndEmptyTokenizerInput) {
  GraphBuilder b("split", 20);
  const std::vector<int> o = b.op_multi("StringSplit", {b.input("x", DType::string, {2})}, {}, 2);
  b.output(o[1]);
  Graph g = b.build();
  g.nodes[0].outputs[0] = -1;
  for (const std::string& be : usable_backends()) {
    const std::string e = error_of([&] { Session(g, be).run({strings_of({2}, {"a b", "c"})}); });
    EXPECT_NE(e.find("output 0 is required, got an empty name"), std::string::npos) << be << ": " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  // Variadic outputs (Split's pieces, If / Loop / Scan's values) may leave an unused one out.
  GraphBuilder v("split", 18);
  const std::vector<int> pieces = v.op_multi("Split", {v.input("x", DType::string, {4})}, {{"num_outputs", int64_t{2}}}, 2);
  v.output(pieces[1]);
  Graph vg = v.build();
  vg.nodes[0].outputs[0] = -1;
  for (const std::string& be : usable_backends())
    EXPECT_EQ(Session(vg, be).run({strings_of({4}, {"a", "b", "c", "d"})})[0].strings, (std::vector<std::string>{"c", "d"})) << be;
  for (const auto& [s, want] : {std::pair{Shape{2, 0}, Shape{2, 0}}, std::pair{Shape{0}, Shape{0}}, std::pair{Shape{0, 3}, Shape{0, 0}}}) {
    GraphBuilder t("tok", 20);
    t.output(t.op("Tokenizer", {t.input("x", DType::string, s)}, {{"mark", int64_t{0}}, {"mincharnum", int64_t{1}},
                                                                   {"pad_value", std::string("#")}, {"separators", std::vector<std::string>{" "}}}));
    Graph tg = t.build();
    tg.nodes[0].domain = "com.microsoft", tg.nodes[0].opset = 1;
    for (const std::string& be : usable_backends())
      EXPECT_EQ(Session(tg, be).run({Tensor(DType::string, s)})[0].shape(), want) << be << " " << shape_str(s);
  }
}

// Bad attributes and shapes are one-line errors naming the node, at load.
TEST(Strings, BadAttributesAreOneLineErrors) {
  const auto err = [](const std::string& op, GraphBuilder::Attrs a, Shape s) {
    GraphBuilder b("bad", 20);
    b.output(b.op(op, {b.input("x", DType::string, s)}, std::move(a)));
    Graph g = b.build();
    if (op == "Tokenizer") g.nodes[0].domain = "com.microsoft", g.nodes[0].opset = 1;
    return error_of([&] {
      Tensor in(DType::string, s);
      Session(g, "cpu").run({in});
    });
  };
  const std::string e1 = err("RegexFullMatch", {{"pattern", std::string("(a")}}, {2});
  EXPECT_NE(e1.find("is not a valid RE2 expression"), std::string::npos) << e1;
  const std::string e2 = err("StringNormalizer", {{"case_change_action", std::string("TITLE")}}, {2});
  EXPECT_NE(e2.find("case_change_action 'TITLE' is not NONE, LOWER or UPPER"), std::string::npos) << e2;
  const std::string e3 = err("StringNormalizer", {}, {2, 2});
  EXPECT_NE(e3.find("X must be [C] or [1, C]"), std::string::npos) << e3;
  const std::string e4 = err("Tokenizer", {{"mincharnum", int64_t{0}}, {"tokenexp", std::string("a")}}, {2});
  EXPECT_NE(e4.find("mincharnum 0 must be at least 1"), std::string::npos) << e4;
  for (const std::string* e : {&e1, &e2, &e3, &e4}) EXPECT_EQ(e->find('\n'), std::string::npos) << *e;
  // An op that does not compute on strings refuses them by name, on the host too.
  GraphBuilder b("neg", 20);
  b.output(b.op("Neg", {b.input("x", DType::string, {1})}));
  Graph g = b.build();
  g.nodes[0].check_types = false;  // past the schema's type check, as a hostile model might get
  const std::string e5 = error_of([&] { Session(g, "ref").run({strings_of({1}, {"a"})}); });
  EXPECT_NE(e5.find("string"), std::string::npos) << e5;
}

}  // namespace
}  // namespace fusor
