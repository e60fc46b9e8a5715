// RNN / GRU / LSTM (ir/ops/recurrent.cpp, decomposed by ir/decompose_recurrent.cpp):
//  - two models built with onnx's helpers, onnxruntime's outputs stored next to them
//    (tests/data/make_recurrent.py): a bidirectional LSTM with peepholes and initial states, a
//    bidirectional GRU (linear_before_reset) with run-time sequence_lens; run as `fusor conform`
//    runs them, on ref, cpu and vulkan, and on the GPU with no host fallback (fully decomposed);
//  - the decomposition against the reference over the attribute space (directions, layout,
//    clip, activations with alpha/beta, peepholes, input_forget, sequence_lens constant and
//    fed at run time, absent biases/states), on seeded random inputs, cpu and vulkan; a
//    sequence past the unroll limit keeps the op (the host runs it between GPU segments).
#include <gtest/gtest.h>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "ir/kernel_spec.h"
#include "runtime/conform.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

bool has_vulkan() {
#ifdef FUSOR_HAVE_VULKAN
  static const bool ok = [] {
    try {
      return !make_backend("vulkan")->devices().empty();
    } catch (const Error&) {
      return false;
    }
  }();
  return ok;
#else
  return false;
#endif
}

std::vector<std::string> backends() {
  std::vector<std::string> b{"ref", "cpu"};
  if (has_vulkan()) b.push_back("vulkan");
  return b;
}

TEST(Recurrent, StoredOnnxruntimeModelsPassOnEveryBackend) {
  if (!has_vulkan()) std::cerr << "[ SKIP part ] no Vulkan device: vulkan not run\n";
  for (const char* name : {"lstm_bidirectional", "gru_sequence_lens"}) {
    const std::string dir = std::string(FUSOR_SOURCE_DIR) + "/tests/data/" + name;
    for (const std::string& be : backends()) {
      ConformOptions opts;
      opts.fallback = be == "ref" || be == "cpu";  // the GPU must run the decomposed op whole
      const CaseResult r = run_case(dir, be, opts);
      EXPECT_EQ(r.status, CaseStatus::passed) << name << " on " << be << ": " << r.detail;
      EXPECT_EQ(r.host_nodes, 0) << name << " on " << be;
    }
  }
}

struct Config {
  std::string op = "LSTM";
  std::string direction = "forward";
  int layout = 0;
  int64_t S = 4, B = 3, I = 5, H = 4;
  double clip = 0;
  std::vector<std::string> acts;
  std::vector<double> alpha, beta;
  bool bias = true, init = true, peep = false, lbr = false, input_forget = false;
  enum { none, constant, runtime } seq = none;
};

// Builds the one-node model (X and, when runtime, sequence_lens as inputs; the rest constant).
Graph model(const Config& c, std::vector<Tensor>& inputs) {
  const int64_t D = c.direction == "bidirectional" ? 2 : 1, G = c.op == "LSTM" ? 4 : c.op == "GRU" ? 3 : 1;
  GraphBuilder b("rnn", 14);
  uint64_t seed = 100;
  auto rnd = [&](Shape s) { return testing::random_tensor(DType::f32, s, seed++, -0.7, 0.7); };
  const Shape xs = c.layout ? Shape{c.B, c.S, c.I} : Shape{c.S, c.B, c.I};
  const Shape st = c.layout ? Shape{c.B, D, c.H} : Shape{D, c.B, c.H};
  inputs.push_back(testing::random_tensor(DType::f32, xs, 7, -1.5, 1.5));
  std::vector<int> in{b.input("X", DType::f32, xs), b.constant("W", rnd({D, G * c.H, c.I})), b.constant("R", rnd({D, G * c.H, c.H}))};
  in.push_back(c.bias ? b.constant("B", rnd({D, 2 * G * c.H})) : -1);
  Tensor lens(DType::i32, {c.B});
  for (int64_t i = 0; i < c.B; ++i) lens.set_int(i, std::max<int64_t>(0, c.S - 1 - i));  // S-1, S-2, ... (0 included)
  if (c.seq == Config::runtime) {
    in.push_back(b.input("sequence_lens", DType::i32, {c.B}));
    inputs.push_back(lens);
  } else {
    in.push_back(c.seq == Config::constant ? b.constant("sequence_lens", lens) : -1);
  }
  in.push_back(c.init ? b.constant("initial_h", rnd(st)) : -1);
  if (c.op == "LSTM") {
    in.push_back(c.init ? b.constant("initial_c", rnd(st)) : -1);
    in.push_back(c.peep ? b.constant("P", rnd({D, 3 * c.H})) : -1);
  }
  while (!in.empty() && in.back() < 0) in.pop_back();
  GraphBuilder::Attrs a{{"direction", c.direction}, {"hidden_size", c.H}, {"layout", int64_t{c.layout}}};
  if (c.clip > 0) a["clip"] = c.clip;
  if (!c.acts.empty()) a["activations"] = c.acts;
  if (!c.alpha.empty()) a["activation_alpha"] = c.alpha;
  if (!c.beta.empty()) a["activation_beta"] = c.beta;
  if (c.lbr) a["linear_before_reset"] = int64_t{1};
  if (c.input_forget) a["input_forget"] = int64_t{1};
  const int outs = c.op == "LSTM" ? 3 : 2;
  for (int v : b.op_multi(c.op, in, a, outs)) b.output(v);
  return b.build();
}

void check(const Config& c) {
  std::vector<Tensor> in;
  const Graph g = model(c, in);
  Session ref(g, "ref");
  const std::vector<Tensor> want = ref.run(in);
  {  // the GPU plan holds no recurrent op: it was unrolled into primitives
    Graph d = specialize(g, in);
    decompose(d);
    for (const Node& n : d.nodes) EXPECT_NE(n.op_type, c.op) << "not decomposed";
  }
  for (const std::string& be : backends()) {
    if (be == "ref") continue;
    CompileOptions opts;
    opts.fallback = false;
    Session s(g, be, opts);
    const std::vector<Tensor> got = s.run(in);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) {
      const CompareResult r = compare_tensors(got[k], want[k], 1e-4, 1e-5);
      EXPECT_TRUE(r.ok) << c.op << " " << c.direction << " output " << k << " on " << be << ": " << r.message;
    }
  }
}

TEST(Recurrent, LstmDecompositionMatchesReference) {
  Config c;
  check(c);
  c.direction = "bidirectional", c.peep = true, c.seq = Config::constant;
  check(c);
  c.direction = "reverse", c.layout = 1, c.seq = Config::runtime, c.clip = 0.9;
  check(c);
  c = Config{};
  c.direction = "bidirectional", c.input_forget = true, c.bias = false, c.init = false;
  c.acts = {"HardSigmoid", "LeakyRelu", "ScaledTanh", "Sigmoid", "Affine", "Elu"};
  c.alpha = {0.3, 0.05, 0.9, 0.7, 1.1}, c.beta = {0.4, 1.2, 0.2};
  check(c);
}

TEST(Recurrent, GruDecompositionMatchesReference) {
  Config c;
  c.op = "GRU";
  check(c);
  c.lbr = true, c.direction = "bidirectional", c.seq = Config::runtime;
  check(c);
  c.lbr = false, c.direction = "reverse", c.layout = 1, c.seq = Config::constant, c.clip = 0.5, c.init = false;
  check(c);
  c = Config{};
  c.op = "GRU", c.acts = {"Softsign", "ThresholdedRelu"}, c.alpha = {0.1}, c.bias = false;
  check(c);
}

TEST(Recurrent, RnnDecompositionMatchesReference) {
  Config c;
  c.op = "RNN";
  check(c);
  c.direction = "bidirectional", c.acts = {"Relu", "Softplus"}, c.seq = Config::runtime, c.layout = 1;
  check(c);
  c.direction = "reverse", c.acts = {"Tanh"}, c.clip = 0.3, c.seq = Config::constant, c.S = 1;
  check(c);
}

TEST(Recurrent, LongSequenceKeepsTheOpAndRunsOnTheHost) {
  Config c;
  c.direction = "bidirectional", c.S = 70, c.seq = Config::runtime;  // 140 steps > the unroll limit
  std::vector<Tensor> in;
  const Graph g = model(c, in);
  Graph d = specialize(g, in);
  decompose(d);
  bool kept = false;
  for (const Node& n : d.nodes) kept = kept || n.op_type == "LSTM";
  EXPECT_TRUE(kept) << "140 steps are not unrolled";
  const std::vector<Tensor> want = Session(g, "ref").run(in);
  for (const std::string& be : backends()) {
    if (be == "ref") continue;
    const std::vector<Tensor> got = Session(g, be).run(in);  // vulkan: the LSTM node on the host
    for (size_t k = 0; k < got.size(); ++k) {
      const CompareResult r = compare_tensors(got[k], want[k], 1e-5, 1e-6);
      EXPECT_TRUE(r.ok) << "output " << k << " on " << be << ": " << r.message;
    }
  }
}

TEST(Recurrent, BadAttributesAreOneLineErrors) {
  Config c;
  c.acts = {"Sigmoid", "Nope", "Tanh"};
  std::vector<Tensor> in;
  try {
    Session s(model(c, in), "ref");
    s.run(in);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("activation 'Nope' is not supported"), std::string::npos) << e.what();
  }
  c = Config{};
  c.direction = "sideways";
  in.clear();
  try {
    Session s(model(c, in), "cpu");
    s.run(in);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("direction 'sideways'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fusor
