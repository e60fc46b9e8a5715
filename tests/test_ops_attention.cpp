// Attention, RotaryEmbedding, Swish and SwiGLU (ir/ops/attention.cpp, ir/ops/elementwise.cpp)
// against values computed by hand and against a spec-derived reference written here (the ONNX
// Attention formula over explicit 4-D arrays), on seeded random non-zero inputs; the same graphs
// on the fused `cpu` backend (Attention decomposed into MatMul/Softmax kernels,
// ir/decompose_attention.cpp) and on every GPU backend present.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "ir/kernel_spec.h"
#include "ir/passes.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

using testing::expect_values;
using testing::ints_of;
using testing::random_tensor;
using testing::run_op;
using testing::tensor_of;

constexpr double kInf = std::numeric_limits<double>::infinity();

// ------------------------------------------------------------ spec-derived reference

struct Spec {
  int64_t B = 2, Hq = 4, Hkv = 2, Sq = 3, Skv = 5, P = 0, D = 4, Dv = 6;
  bool rank3 = false, causal = false, softcap = false, scale = false;
  int mask_rank = 0;           // 0: no mask
  bool bool_mask = false, short_mask = false;
  int64_t left = -1, right = -1, mode = -1;  // mode -1: no qk output
  bool nonpad = false;
};

struct Case {
  std::vector<std::optional<Tensor>> in;
  std::map<std::string, AttrValue> attrs;
  int outputs = 1;
};

Case make_case(const Spec& s, uint64_t seed) {
  Case c;
  auto shape = [&](int64_t H, int64_t S, int64_t E) { return s.rank3 ? Shape{s.B, S, H * E} : Shape{s.B, H, S, E}; };
  c.in.push_back(random_tensor(DType::f32, shape(s.Hq, s.Sq, s.D), seed, -2, 2));
  c.in.push_back(random_tensor(DType::f32, shape(s.Hkv, s.Skv, s.D), seed + 1, -2, 2));
  c.in.push_back(random_tensor(DType::f32, shape(s.Hkv, s.Skv, s.Dv), seed + 2, -2, 2));
  const int64_t T = s.P + s.Skv, mt = s.short_mask ? T - 2 : T;
  if (s.mask_rank) {
    Shape ms = s.mask_rank == 4 ? Shape{s.B, s.Hq, s.Sq, mt} : s.mask_rank == 3 ? Shape{s.Hq, s.Sq, mt} : s.mask_rank == 2 ? Shape{s.Sq, mt} : Shape{mt};
    Tensor m = random_tensor(DType::f32, ms, seed + 3, -1, 1);
    if (s.bool_mask) {
      Tensor bm(DType::boolean, ms);
      for (int64_t i = 0; i < m.numel(); ++i) bm.set_int(i, m.get(i) > -0.6 ? 1 : 0);
      m = bm;
    }
    c.in.push_back(m);
  } else {
    c.in.push_back(std::nullopt);
  }
  if (s.P) {
    c.in.push_back(random_tensor(DType::f32, {s.B, s.Hkv, s.P, s.D}, seed + 4, -2, 2));
    c.in.push_back(random_tensor(DType::f32, {s.B, s.Hkv, s.P, s.Dv}, seed + 5, -2, 2));
  } else {
    c.in.push_back(std::nullopt), c.in.push_back(std::nullopt);
  }
  if (s.nonpad) {
    std::vector<int64_t> len;
    for (int64_t b = 0; b < s.B; ++b) len.push_back(T - b);
    c.in.push_back(ints_of({s.B}, len));
  }
  if (s.rank3) c.attrs["q_num_heads"] = s.Hq, c.attrs["kv_num_heads"] = s.Hkv;
  if (s.causal) c.attrs["is_causal"] = int64_t{1};
  if (s.softcap) c.attrs["softcap"] = 1.5;
  if (s.scale) c.attrs["scale"] = 0.3;
  if (s.left >= 0) c.attrs["left_window_size"] = s.left;
  if (s.right >= 0) c.attrs["right_window_size"] = s.right;
  c.outputs = s.mode >= 0 ? 4 : s.P ? 3 : 1;
  if (s.mode >= 0) c.attrs["qk_matmul_output_mode"] = s.mode;
  return c;
}

// Y, present_key, present_value, qk_matmul_output from the ONNX formula, in double.
std::vector<std::vector<double>> spec_attention(const Spec& s, const Case& c) {
  const int64_t T = s.P + s.Skv, g = s.Hq / s.Hkv;
  auto at = [&](const Tensor& t, int64_t H, int64_t S, int64_t E, int64_t b, int64_t h, int64_t i, int64_t e) {
    return t.get(s.rank3 ? ((b * S + i) * H + h) * E + e : ((b * H + h) * S + i) * E + e);
  };
  auto kv = [&](int which, int64_t b, int64_t h, int64_t j, int64_t e) {  // present_key (0) / value (1)
    const int64_t E = which ? s.Dv : s.D;
    if (j < s.P) return c.in[4 + which]->get(((b * s.Hkv + h) * s.P + j) * E + e);
    return at(*c.in[1 + which], s.Hkv, s.Skv, E, b, h, j - s.P, e);
  };
  const double scale = s.scale ? 0.3 : 1.0 / std::sqrt(double(s.D));
  std::vector<std::vector<double>> r(4);
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t h = 0; h < s.Hkv; ++h)
      for (int64_t j = 0; j < T; ++j) {
        for (int64_t e = 0; e < s.D; ++e) r[1].push_back(kv(0, b, h, j, e));
      }
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t h = 0; h < s.Hkv; ++h)
      for (int64_t j = 0; j < T; ++j)
        for (int64_t e = 0; e < s.Dv; ++e) r[2].push_back(kv(1, b, h, j, e));
  std::vector<double> y(static_cast<size_t>(s.B * s.Hq * s.Sq * s.Dv));
  const Tensor* m = c.in[3] ? &*c.in[3] : nullptr;
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t h = 0; h < s.Hq; ++h)
      for (int64_t i = 0; i < s.Sq; ++i) {
        std::vector<double> logit(T), bias(T, 0.0), p(T);
        const int64_t len = s.nonpad ? T - b : T, off = s.P ? s.P : s.nonpad ? len - s.Sq : 0;
        for (int64_t j = 0; j < T; ++j) {
          double acc = 0;
          for (int64_t e = 0; e < s.D; ++e) acc += at(*c.in[0], s.Hq, s.Sq, s.D, b, h, i, e) * kv(0, b, h / g, j, e);
          acc *= scale;
          if (s.softcap) acc = 1.5 * std::tanh(acc / 1.5);
          logit[j] = acc;
          if (m) {
            const Shape& ms = m->shape();
            const int64_t mt = ms.back();
            if (j >= mt) {
              bias[j] = -kInf;
            } else {
              int64_t idx = j;
              if (ms.size() >= 2) idx += i * mt;
              if (ms.size() >= 3) idx += h * s.Sq * mt;
              if (ms.size() == 4) idx += b * s.Hq * s.Sq * mt;
              bias[j] = s.bool_mask ? (m->get_int(idx) ? 0.0 : -kInf) : m->get(idx);
            }
          }
          const int64_t pos = i + off;
          if (s.causal && j > pos) bias[j] = -kInf;
          if (s.left >= 0 && j < pos - s.left) bias[j] = -kInf;
          if (s.right >= 0 && j > pos + s.right) bias[j] = -kInf;
          if (j >= len) bias[j] = -kInf;
        }
        double mx = -kInf, bmax = -kInf, sum = 0;
        for (int64_t j = 0; j < T; ++j) mx = std::max(mx, logit[j] + bias[j]), bmax = std::max(bmax, bias[j]);
        for (int64_t j = 0; j < T; ++j) sum += p[j] = bmax == -kInf ? 0.0 : std::exp(logit[j] + bias[j] - mx);
        for (int64_t j = 0; j < T; ++j) {
          if (sum > 0) p[j] /= sum;
          r[3].push_back(s.mode == 3 ? p[j] : s.mode == 2 ? logit[j] + bias[j] : logit[j]);
        }
        for (int64_t e = 0; e < s.Dv; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < T; ++j) acc += p[j] * kv(1, b, h / g, j, e);
          y[s.rank3 ? ((b * s.Sq + i) * s.Hq + h) * s.Dv + e : ((b * s.Hq + h) * s.Sq + i) * s.Dv + e] = acc;
        }
      }
  r[0] = y;
  return r;
}

void expect_close(const Tensor& t, const std::vector<double>& want, double tol, const std::string& what) {
  ASSERT_EQ(static_cast<size_t>(t.numel()), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = t.get(static_cast<int64_t>(i));
    if (std::isinf(want[i])) {
      EXPECT_EQ(g, want[i]) << what << " element " << i;
    } else {
      EXPECT_NEAR(g, want[i], tol * std::max(1.0, std::fabs(want[i]))) << what << " element " << i;
    }
  }
}

Graph attention_graph(const Case& c, int opset) {
  GraphBuilder b("attention", opset);
  std::vector<int> ins;
  for (size_t i = 0; i < c.in.size(); ++i)
    ins.push_back(c.in[i] ? b.input("in" + std::to_string(i), c.in[i]->dtype(), c.in[i]->shape()) : -1);
  for (int v : b.op_multi("Attention", ins, c.attrs, c.outputs)) b.output(v);
  return b.build();
}

std::vector<Tensor> present_inputs(const Case& c) {
  std::vector<Tensor> v;
  for (auto& t : c.in)
    if (t) v.push_back(*t);
  return v;
}

// The reference kernel, then the graph on every other backend present, against the spec.
void check_spec(const Spec& s, uint64_t seed, int opset = 24) {
  const Case c = make_case(s, seed);
  const auto want = spec_attention(s, c);
  auto got = run_op({"Attention", c.in, c.attrs, opset, c.outputs});
  for (int o = 0; o < c.outputs; ++o) expect_close(got[o], want[o], 1e-6, "ref output " + std::to_string(o));
  const Graph g = attention_graph(c, opset);
  for (const std::string& be : backend_names()) {
    if (be == "ref" || make_backend(be)->devices().empty()) continue;
    auto out = Session(g, be).run(present_inputs(c));
    ASSERT_EQ(out.size(), static_cast<size_t>(c.outputs));
    for (int o = 0; o < c.outputs; ++o) expect_close(out[o], want[o], 2e-5, be + " output " + std::to_string(o));
  }
}

// ------------------------------------------------------------ Attention

TEST(Attention, OneQueryTwoKeysByHand) {
  // logits = q.k / sqrt(2) = [1/sqrt2, 0]; Y = (2 e^{1/sqrt2} + 4) / (e^{1/sqrt2} + 1).
  auto out = run_op({"Attention", {tensor_of({1, 1, 1, 2}, {1, 0}), tensor_of({1, 1, 2, 2}, {1, 0, 0, 1}), tensor_of({1, 1, 2, 1}, {2, 4})}, {}, 23});
  const double e = std::exp(1 / std::sqrt(2.0));
  expect_values(out[0], {(2 * e + 4) / (e + 1)});
  // A bool mask hiding key 0 leaves V[1]; one hiding both keys gives 0, not NaN.
  auto masked = run_op({"Attention", {tensor_of({1, 1, 1, 2}, {1, 0}), tensor_of({1, 1, 2, 2}, {1, 0, 0, 1}), tensor_of({1, 1, 2, 1}, {2, 4}),
                                      ints_of({2}, {0, 1}, DType::boolean)}, {}, 23});
  expect_values(masked[0], {4});
  auto dead = run_op({"Attention", {tensor_of({1, 1, 1, 2}, {1, 0}), tensor_of({1, 1, 2, 2}, {1, 0, 0, 1}), tensor_of({1, 1, 2, 1}, {2, 4}),
                                    ints_of({2}, {0, 0}, DType::boolean)}, {}, 23});
  expect_values(dead[0], {0});
}

TEST(Attention, FourDimensionalPlainAndScaled) {
  check_spec(Spec{}, 11);
  Spec s;
  s.scale = true, s.Hkv = 4;
  check_spec(s, 12);
}

TEST(Attention, ThreeDimensionalGqaWithPastCausalAndFloatMask) {
  Spec s;
  s.rank3 = true, s.P = 3, s.causal = true, s.mask_rank = 2;
  check_spec(s, 21);
}

TEST(Attention, BoolMaskRanksShortMasksAndSoftcap) {
  for (int rank = 1; rank <= 4; ++rank) {
    Spec s;
    s.mask_rank = rank, s.bool_mask = rank % 2 == 0, s.short_mask = rank >= 3, s.softcap = true;
    SCOPED_TRACE("mask rank " + std::to_string(rank));
    check_spec(s, 30 + static_cast<uint64_t>(rank));
  }
}

TEST(Attention, QkMatmulOutputModes) {
  for (int mode = 0; mode <= 3; ++mode) {
    Spec s;
    s.mode = mode, s.P = 2, s.mask_rank = 4, s.softcap = mode == 1;
    SCOPED_TRACE("mode " + std::to_string(mode));
    check_spec(s, 40 + static_cast<uint64_t>(mode));
  }
}

TEST(Attention, SlidingWindowAndNonpadKvSeqlen) {
  Spec w;
  w.left = 1, w.right = 0, w.P = 2, w.causal = true;
  check_spec(w, 51, 25);
  Spec bi;
  bi.left = 2, bi.right = 1, bi.Sq = 5;
  check_spec(bi, 52, 25);
  Spec np;  // keys past len[b] are padding; causal offsets are len[b] - Sq
  np.nonpad = true, np.causal = true, np.Sq = 2;
  check_spec(np, 53, 24);
}

TEST(Attention, CausalRowsWithNoKeyAreZero) {
  // nonpad_kv_seqlen shorter than the queries: the causal offset len[b] - Sq is negative. Batch
  // 0 (len 1, offset -2): queries 0 and 1 see no key, query 2 sees key 0; batch 1 (len 0): none.
  Spec s;
  s.nonpad = true, s.causal = true, s.B = 2, s.Sq = 3, s.Skv = 1, s.Hkv = 4;
  check_spec(s, 61, 24);
}

TEST(Attention, DecomposesIntoPrimitives) {
  Spec s;
  s.rank3 = true, s.P = 2, s.causal = true, s.mask_rank = 3, s.bool_mask = true, s.softcap = true;
  Graph g = attention_graph(make_case(s, 71), 24);
  infer_shapes(g, true);
  decompose(g);
  int matmuls = 0;
  for (auto& n : g.nodes) {
    EXPECT_NE(n.op_type, "Attention");
    matmuls += n.op_type == "MatMul";
  }
  EXPECT_EQ(matmuls, 2);
}

TEST(Attention, BadShapesAreShapeErrors) {
  Tensor q = random_tensor(DType::f32, {1, 3, 2, 4}, 1), k = random_tensor(DType::f32, {1, 2, 2, 4}, 2);
  EXPECT_THROW(run_op({"Attention", {q, k, k}, {}, 23}), Error);  // 3 q heads over 2 kv heads
  Tensor q3 = random_tensor(DType::f32, {1, 2, 8}, 3);
  EXPECT_THROW(run_op({"Attention", {q3, q3, q3}, {}, 23}), Error);  // 3-D without head counts
  Tensor k5 = random_tensor(DType::f32, {1, 3, 2, 5}, 4);
  EXPECT_THROW(run_op({"Attention", {q, k5, k5}, {}, 23}), Error);  // head sizes differ
}

// ------------------------------------------------------------ RotaryEmbedding

TEST(RotaryEmbedding, HalvesAndInterleavedByHand) {
  // One head of size 4, one position; cos = [c0, c1], sin = [s0, s1].
  const double c0 = 0.6, s0 = 0.8, c1 = 0.0, s1 = 1.0;
  Tensor x = tensor_of({1, 1, 1, 4}, {1, 2, 3, 4});
  Tensor cs = tensor_of({1, 1, 2}, {c0, c1}), sn = tensor_of({1, 1, 2}, {s0, s1});
  // Halves: pairs (x0, x2) and (x1, x3).
  auto h = run_op({"RotaryEmbedding", {x, cs, sn}, {}, 23});
  expect_values(h[0], {c0 * 1 - s0 * 3, c1 * 2 - s1 * 4, s0 * 1 + c0 * 3, s1 * 2 + c1 * 4});
  // Interleaved: pairs (x0, x1) and (x2, x3).
  auto il = run_op({"RotaryEmbedding", {x, cs, sn}, {{"interleaved", int64_t{1}}}, 23});
  expect_values(il[0], {c0 * 1 - s0 * 2, s0 * 1 + c0 * 2, c1 * 3 - s1 * 4, s1 * 3 + c1 * 4});
}

TEST(RotaryEmbedding, PositionIdsPartialDimAndThreeDimensional) {
  // 3-D [B=1, S=2, 2 heads x 4], rotary dim 2: only (x0, x1) of each head turn; position ids
  // pick cache rows 2 and 0.
  Tensor x = tensor_of({1, 2, 8}, {1, 2, 3, 4, 5, 6, 7, 8, /**/ -1, -2, -3, -4, -5, -6, -7, -8});
  Tensor cs = tensor_of({3, 1}, {0.5, 0.1, -1}), sn = tensor_of({3, 1}, {0.2, 0.3, 0.0});
  auto out = run_op({"RotaryEmbedding", {x, cs, sn, ints_of({1, 2}, {2, 0})}, {{"num_heads", int64_t{2}}, {"rotary_embedding_dim", int64_t{2}}}, 23});
  // Position 2: cos -1, sin 0 negates the pair; position 0: cos 0.5, sin 0.2.
  expect_values(out[0], {-1, -2, 3, 4, -5, -6, 7, 8,  //
                         0.5 * -1 - 0.2 * -2, 0.2 * -1 + 0.5 * -2, -3, -4, 0.5 * -5 - 0.2 * -6, 0.2 * -5 + 0.5 * -6, -7, -8});
  EXPECT_THROW(run_op({"RotaryEmbedding", {x, cs, sn, ints_of({1, 2}, {3, 0})}, {{"num_heads", int64_t{2}}, {"rotary_embedding_dim", int64_t{2}}}, 23}), Error);
  EXPECT_THROW(run_op({"RotaryEmbedding", {x, cs, sn}, {}, 23}), Error);  // 3-D without num_heads
}

// Decomposed on the fused backends (Slices, Gather, Mul/Sub/Add, Concat): 4-D interleaved
// with position ids, and 3-D halves rotating 6 of 8 dims with per-batch caches.
TEST(RotaryEmbedding, DecomposedOnEveryBackendMatchesRef) {
  for (int variant = 0; variant < 2; ++variant) {
    SCOPED_TRACE("variant " + std::to_string(variant));
    GraphBuilder b("rope", 23);
    const bool four = variant == 0;
    const Shape xs = four ? Shape{2, 3, 5, 8} : Shape{2, 5, 24}, cs = four ? Shape{7, 4} : Shape{2, 5, 3};
    int x = b.input("x", DType::f32, xs);
    int c = b.input("cos", DType::f32, cs), s = b.input("sin", DType::f32, cs);
    std::vector<int> ins{x, c, s};
    if (four) ins.push_back(b.input("pos", DType::i64, {2, 5}));
    GraphBuilder::Attrs attrs;
    if (four) attrs["interleaved"] = int64_t{1};
    else attrs["num_heads"] = int64_t{3}, attrs["rotary_embedding_dim"] = int64_t{6};
    b.output(b.op("RotaryEmbedding", ins, attrs));
    Graph g = b.build();
    std::vector<Tensor> in{random_tensor(DType::f32, xs, 1), random_tensor(DType::f32, cs, 2), random_tensor(DType::f32, cs, 3)};
    if (four) in.push_back(ints_of({2, 5}, {0, 1, 2, 3, 4, 6, 5, 4, 3, 2}));
    Graph d = g;
    infer_shapes(d, true);
    decompose(d);
    for (auto& n : d.nodes) EXPECT_NE(n.op_type, "RotaryEmbedding");
    auto want = Session(g, "ref").run(in);
    for (const std::string& be : backend_names()) {
      if (be == "ref" || make_backend(be)->devices().empty()) continue;
      auto got = Session(g, be).run(in);
      for (int64_t i = 0; i < want[0].numel(); ++i) EXPECT_NEAR(got[0].get(i), want[0].get(i), 1e-6) << be << " " << i;
    }
  }
}

// fp16 / bf16 rotate in float32 and round once (decomposed, so they run on the GPUs instead of
// the host): the products of two half values are exact in float32, so the result is ref's
// (the rotation in double, rounded once) bar a double rounding of the one sum, which these
// seeded values never meet: compared bit for bit.
TEST(RotaryEmbedding, HalfTypesDecomposeAndRoundOnce) {
  for (DType t : {DType::f16, DType::bf16}) {
    SCOPED_TRACE(dtype_name(t));
    GraphBuilder b("rope16", 23);
    const Shape xs{2, 4, 6, 16}, cs{9, 8};
    int x = b.input("x", t, xs), c = b.input("cos", t, cs), s = b.input("sin", t, cs), p = b.input("pos", DType::i64, {2, 6});
    b.output(b.op("RotaryEmbedding", {x, c, s, p}, {}));
    Graph g = b.build();
    Graph d = g;
    infer_shapes(d, true);
    decompose(d);
    for (auto& n : d.nodes) EXPECT_NE(n.op_type, "RotaryEmbedding");
    std::vector<Tensor> in{random_tensor(t, xs, 11), random_tensor(t, cs, 12), random_tensor(t, cs, 13),
                           ints_of({2, 6}, {0, 1, 2, 3, 4, 5, 8, 7, 6, 5, 4, 3})};
    auto want = Session(g, "ref").run(in);
    for (const std::string& be : backend_names()) {
      if (be == "ref" || make_backend(be)->devices().empty()) continue;
      auto got = Session(g, be).run(in);
      ASSERT_EQ(got[0].dtype(), t);
      int64_t off = 0;
      for (int64_t i = 0; i < want[0].numel(); ++i) off += got[0].get(i) != want[0].get(i);
      EXPECT_EQ(off, 0) << be;
    }
  }
}

// ------------------------------------------------------------ Swish / SwiGLU

TEST(Swish, SwishAndSwiGluByHand) {
  auto sw = run_op({"Swish", {tensor_of({3}, {1, -2, 0.5})}, {{"alpha", 2.0}}, 24});
  auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
  expect_values(sw[0], {1 * sig(2), -2 * sig(-4), 0.5 * sig(1)});
  auto gl = run_op({"SwiGLU", {tensor_of({2}, {1, -1}), tensor_of({2}, {3, 0.5})}, {}, 28});
  expect_values(gl[0], {1 * sig(1) * 3, -1 * sig(-1) * 0.5});
}

// TensorScatter-24: update rows written into the cache at write_indices[b] (+ s), modulo the
// cache length in circular mode; a linear write past the end is an error naming the node.
TEST(TensorScatter, LinearAndCircularWritesByHand) {
  const Tensor cache = tensor_of({2, 4, 1}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor update = tensor_of({2, 2, 1}, {-1, -2, -3, -4});
  const Tensor idx = ints_of({2}, {1, 3});
  Tensor lin = run_op({"TensorScatter", {cache, update, ints_of({2}, {1, 2})}}, 24)[0];
  expect_values(lin, {1, -1, -2, 4, 5, 6, -3, -4});
  Tensor circ = run_op({"TensorScatter", {cache, update, idx}, {{"mode", std::string("circular")}}}, 24)[0];
  expect_values(circ, {1, -1, -2, 4, -4, 6, 7, -3});  // batch 1: positions 3, then 0
  Tensor none = run_op({"TensorScatter", {cache, update}}, 24)[0];  // write_indices absent: 0
  expect_values(none, {-1, -2, 3, 4, -3, -4, 7, 8});
  EXPECT_THROW(run_op({"TensorScatter", {cache, update, idx}}, 24), Error);  // 3 + 2 > 4 in linear mode
}

// LinearAttention-27 with one head of size 1, by hand: linear rule S_t = S_{t-1} + k_t v_t,
// y_t = q_t S_t; gated_delta with decay d and beta b: S' = e^d S, S = S' + k b (v - S' k).
TEST(LinearAttention, OneHeadByHand) {
  const Tensor q = tensor_of({1, 2, 1}, {2, 3}), k = tensor_of({1, 2, 1}, {0.5, -1}), v = tensor_of({1, 2, 1}, {4, 1});
  const std::map<std::string, AttrValue> heads{{"q_num_heads", int64_t{1}}, {"kv_num_heads", int64_t{1}}, {"scale", 1.0}};
  auto lin = heads;
  lin["update_rule"] = std::string("linear");
  std::vector<Tensor> r = run_op({"LinearAttention", {q, k, v}, lin, 0, 2}, 27);
  expect_values(r[0], {2 * 2.0, 3 * (2.0 - 1.0)});  // S1 = 2, S2 = 2 - 1
  expect_values(r[1], {1.0});
  const Tensor d = tensor_of({1, 2, 1}, {std::log(0.5), 0.0}), b = tensor_of({1, 2, 1}, {0.5, 2});
  r = run_op({"LinearAttention", {q, k, v, std::nullopt, d, b}, heads, 0, 2}, 27);
  // t1: S' = 0, S = 0.5 * 0.5 * (4 - 0) = 1, y = 2; t2: S' = 1, S = 1 + (-1) * 2 * (1 - (-1)) = -3, y = -9.
  expect_values(r[0], {2.0, -9.0});
  expect_values(r[1], {-3.0});
}

}  // namespace
}  // namespace fusor
