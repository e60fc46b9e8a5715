// Red-team round 16 (docs/redteam.md): error messages stay one line of valid UTF-8 whatever
// bytes a model's strings hold (an attribute string with 0xff, NUL and a newline reached the
// terminal raw and cut at the NUL), and required inputs left empty are one-line errors; a
// recurrent op whose Y output is omitted falls back to the host on the GPUs (its f16 form
// failed there with "opaque kernel without output 0").
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fuzz_harness.h"
#include "onnx_test_util.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

namespace fs = std::filesystem;

// True when s is well-formed UTF-8 (RFC 3629), checked here independently of one_line.
bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size() || (n == 2 && c < 0xc2)) return false;
    uint32_t cp = n == 1 ? c : c & (0x7f >> n);
    for (size_t k = 1; k < n; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = cp << 6 | (d & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n;
  }
  return true;
}

TEST(Round16, OneLineEscapesControlBytesAndBrokenUtf8AndKeepsUtf8) {
  const std::string raw = std::string("a\xff") + '\0' + "b\nc\xe2\x82\xac\xc3(\xed\xa0\x80\xf4\x90\x80\x80";
  const std::string s = one_line(raw);
  EXPECT_EQ(s, "a\\xff\\x00b\\nc\xe2\x82\xac\\xc3(\\xed\\xa0\\x80\\xf4\\x90\\x80\\x80");
  EXPECT_TRUE(valid_utf8(s));
  // Every fusor::Error message goes through it, so a model's bytes cannot break the line.
  const Error e("shape", "unknown auto_pad '" + raw + "'");
  EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  EXPECT_TRUE(valid_utf8(e.what()));
  EXPECT_NE(std::string(e.what()).find("\\x00b\\nc"), std::string::npos) << e.what();
}

TEST(Round16, AttributeStringBytesReachTheCliEscaped) {
  if (!testing::have_cli()) GTEST_SKIP() << "the fusor CLI is not built";
  testing::TempDir t;
  auto m = fuzz::new_model(17);
  auto* g = m.mutable_graph();
  fuzz::set_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 1, 4, 4});
  auto* n = fuzz::add_node(g, "AveragePool", {"x"}, {"y"});
  fuzz::add_ints(n, "kernel_shape", {2, 2});
  auto* a = n->add_attribute();
  a->set_name("auto_pad");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(std::string("\xff") + '\0' + "\njunk");
  fuzz::set_type(g->add_output(), "y", onnx::TensorProto::FLOAT, {});
  const std::string path = t / "model.onnx";
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  std::string out;
  EXPECT_EQ(testing::run_cli("run " + path + " --backend ref", &out), 2) << out;
  EXPECT_TRUE(valid_utf8(out)) << out;
  EXPECT_NE(out.find("unknown auto_pad '\\xff\\x00\\njunk'\n"), std::string::npos) << out;
  // The error is one whole line among run's own (model, backend, inputs).
  const size_t at = out.find("fusor: error: ");
  ASSERT_NE(at, std::string::npos) << out;
  EXPECT_EQ(out.substr(at, out.find('\n', at) - at),
            "fusor: error: [shape] node 'AveragePool_1' (AveragePool): unknown auto_pad '\\xff\\x00\\njunk'");
}

// GRU / LSTM with only Y_h (Y omitted) where the op runs whole: float16 (not unrolled) and a
// float32 sequence past the unrolling bound (130 steps). Every backend matches ref.
TEST(Round16, RecurrentOpsWithoutYRunOnEveryBackend) {
  const int64_t B = 2, I = 3, H = 4;
  for (const auto& [op, gates] : {std::pair{"GRU", 3}, {"LSTM", 4}})
    for (const auto& [dt, S] : {std::pair{DType::f16, int64_t{3}}, {DType::f32, int64_t{130}}}) {
      testing::OneNode n{op, "", {{"x", testing::random_tensor(dt, {S, B, I}, 71, -1, 1)},
                                  {"w", testing::random_tensor(dt, {1, gates * H, I}, 72, -0.5, 0.5)},
                                  {"r", testing::random_tensor(dt, {1, gates * H, H}, 73, -0.5, 0.5)}}};
      n.outputs = {"", "y_h"};
      n.domain_version = 14;
      n.opset = 14;
      n.attrs = [H](onnx::NodeProto* p) { testing::attr_i(p, "hidden_size", H); };
      const Graph g = n.graph();
      const Tensor want = Session(g, "ref").run(n.feeds())[0];
      ASSERT_EQ(want.shape(), (Shape{1, B, H}));
      for (const std::string& be : testing::usable_backends()) {
        SCOPED_TRACE(std::string(op) + " " + dtype_name(dt) + " on " + be);
        const Tensor y = Session(g, be).run(n.feeds())[0];
        ASSERT_EQ(y.shape(), want.shape());
        for (int64_t i = 0; i < y.numel(); ++i) EXPECT_NEAR(y.get(i), want.get(i), dt == DType::f16 ? 2e-3 : 1e-5) << "element " << i;
      }
    }
}

}  // namespace
}  // namespace fusor
