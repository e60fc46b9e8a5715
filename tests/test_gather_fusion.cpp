// Gather fused into its readers (ir/fusion.cpp Cls::gather, kernel_spec.h gathered loads): an
// embedding lookup is read row by row by the kernel that uses it (the position add and the
// LayerNormalization after it) instead of being copied by a kernel of its own first. Checked
// here: which plans take it, that every backend gives ref's bits for pure lookups (every axis,
// index rank, dtype and sign, indices computed inline, nested lookups, replays with new
// indices, an fp16 NaN payload), ref's values for the lookup + LayerNormalization pattern, that
// an index outside [-dim, dim) is the Gather node's one-line error on every backend, that the
// bytes accounting counts the rows picked, and that every generated CUDA kernel compiles
// (NVRTC, no GPU needed).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "ir/half.h"
#include "ir/kernel_spec.h"
#include "runtime/session.h"
#include "test_util.h"
#ifdef FUSOR_HAVE_CUDA
#include "backends/codegen.h"
#include "backends/cuda/cuda_backend.h"
#endif

namespace fusor {
namespace {

Plan plan_of(const Graph& g, const std::vector<Tensor>& in) { return build_plan(specialize(g, in)); }

int gathered_loads(const Plan& p) {
  int n = 0;
  for (const KernelSpec& k : p.kernels)
    for (const Load& l : k.loads) n += l.gathered();
  return n;
}
bool any_opaque_gather(const Plan& p) {
  for (const KernelSpec& k : p.kernels)
    if (k.kind == FusionKind::opaque && p.graph.nodes[k.node].op_type == "Gather") return true;
  return false;
}

void expect_cuda_sources_compile(const Plan& p) {
#ifdef FUSOR_HAVE_CUDA
  for (const KernelSpec& k : p.kernels) {
    const std::string src = cuda_kernel_source(k, p, nullptr);
    if (!src.empty()) EXPECT_NO_THROW(nvrtc_compile_check(src, kernel_identifier(k.name))) << src;
  }
#else
  (void)p;
#endif
}

// Every backend's outputs equal ref's bit for bit, for each input set (the second a replay).
void expect_refs_bits(const Graph& g, const std::vector<std::vector<Tensor>>& sets) {
  for (const std::string& be : testing::usable_backends()) {
    SCOPED_TRACE(be);
    Session s(g, be);
    for (const auto& in : sets) {
      const std::vector<Tensor> want = Session(g, "ref").run(in), got = s.run(in);
      ASSERT_EQ(got.size(), want.size());
      for (size_t o = 0; o < want.size(); ++o) {
        ASSERT_EQ(got[o].shape(), want[o].shape());
        ASSERT_EQ(got[o].dtype(), want[o].dtype());
        EXPECT_EQ(0, std::memcmp(got[o].raw(), want[o].raw(), want[o].nbytes()));
      }
    }
  }
}

// Every backend's output 0 within rtol of ref's (fp32 LayerNorms and matmuls: the sums'
// order differs), for each input set (the second a replay).
void expect_refs_values(const Graph& g, const std::vector<std::vector<Tensor>>& sets, double rtol) {
  for (const std::string& be : testing::usable_backends()) {
    SCOPED_TRACE(be);
    Session s(g, be);
    for (const auto& in : sets) {
      const Tensor want = Session(g, "ref").run(in)[0], got = s.run(in)[0];
      ASSERT_EQ(got.shape(), want.shape());
      for (int64_t i = 0; i < want.numel(); ++i) EXPECT_NEAR(got.get(i), want.get(i), rtol * (1 + std::fabs(want.get(i)))) << i;
    }
  }
}

// GPT-2's embedding: ids [1, S] -> h = wte[ids] + wpe [1, S, E] and LayerNormalization(h) over E
// (random weights from `seed`); *h_out gets h.
int embedding_layer_norm(GraphBuilder& b, int64_t V, int64_t S, int64_t E, uint64_t seed, int* h_out) {
  const int ids = b.input("ids", DType::i64, {1, S});
  const int wte = b.constant("wte", testing::random_tensor(DType::f32, {V, E}, seed));
  const int wpe = b.constant("wpe", testing::random_tensor(DType::f32, {S, E}, seed + 1));
  *h_out = b.op("Add", {b.op("Gather", {wte, ids}, {{"axis", int64_t{0}}}), wpe});
  return b.op("LayerNormalization", {*h_out, b.constant("g", testing::random_tensor(DType::f32, {E}, seed + 2)),
                                     b.constant("bias", testing::random_tensor(DType::f32, {E}, seed + 3))},
              {{"axis", int64_t{-1}}, {"epsilon", 1e-5}});
}

// Two sets of ids [1, S] over [-V, V) (negative ones included), the second a replay's.
std::vector<std::vector<Tensor>> two_id_sets(int64_t V, int64_t S, int64_t step) {
  std::vector<int64_t> v(S);
  for (int64_t i = 0; i < S; ++i) v[i] = (i * step) % V - (i % 3 == 0 ? V : 0);
  std::vector<std::vector<Tensor>> sets = {{testing::ints_of({1, S}, v)}};
  for (int64_t& x : v) x = (x + V + 77) % V;
  sets.push_back({testing::ints_of({1, S}, v)});
  return sets;
}

struct LookupCase {
  const char* name;
  DType table_t;
  Shape table;
  int64_t axis;
  DType index_t;
  Shape ids;
  bool through_add;   // indices computed inline: Add(ids, 1) (then Sub 1 from every value first)
  bool transposed;    // the lookup read through a Transpose of its output
  bool scaled;        // the lookup times a constant (an element-wise reader)
};

std::vector<int64_t> ids_for(const Shape& s, int64_t dim, uint64_t seed) {
  std::vector<int64_t> v(static_cast<size_t>(shape_numel(s)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>((i * 7 + seed * 3) % (2 * dim)) - dim;  // [-dim, dim)
  return v;
}

TEST(GatherFusion, LookupsAreReadByTheirReadersWithRefsBits) {
  const LookupCase cases[] = {
      {"rows", DType::f32, {50, 8}, 0, DType::i64, {2, 5}, false, false, true},
      {"int32 indices", DType::f32, {50, 8}, 0, DType::i32, {7}, false, false, true},
      {"scalar index", DType::f32, {50, 8}, 0, DType::i64, {}, false, false, true},
      {"axis 1 of 3", DType::f32, {3, 20, 5}, 1, DType::i64, {4, 2}, false, false, true},
      {"last axis", DType::f32, {6, 9}, -1, DType::i64, {3}, false, false, true},
      {"indices computed", DType::f32, {30, 4}, 0, DType::i64, {6}, true, false, true},
      {"transposed reader", DType::f32, {30, 16}, 0, DType::i64, {3, 5}, false, true, true},
      {"fp16 table", DType::f16, {40, 8}, 0, DType::i64, {9}, false, false, true},
      {"bf16 table", DType::bf16, {40, 8}, 0, DType::i64, {9}, false, false, true},
      {"int64 table", DType::i64, {40, 3}, 0, DType::i64, {9}, false, false, true},
      {"plain lookup", DType::f32, {40, 3}, 0, DType::i64, {2, 2}, false, false, false},
  };
  for (const LookupCase& c : cases) {
    SCOPED_TRACE(c.name);
    const int64_t r = static_cast<int64_t>(c.table.size()), axis = c.axis < 0 ? c.axis + r : c.axis, dim = c.table[axis];
    GraphBuilder b("lookup", 17);
    const int ids = b.input("ids", c.index_t, c.ids);
    const Tensor tab = dtype_is_integral(c.table_t) ? testing::ints_of(c.table, ids_for(c.table, 1000, 5), c.table_t)
                                               : testing::random_tensor(c.table_t, c.table, 11);
    int index = ids;
    if (c.through_add) index = b.op("Add", {ids, b.constant("one", testing::ints_of({}, {1}, c.index_t))});
    int y = b.op("Gather", {b.constant("table", tab), index}, {{"axis", c.axis}});
    const int64_t yr = static_cast<int64_t>(c.ids.size()) + r - 1;
    if (c.transposed) {
      std::vector<int64_t> perm;
      for (int64_t i = yr - 1; i >= 0; --i) perm.push_back(i);
      y = b.op("Transpose", {y}, {{"perm", perm}});
    }
    if (c.scaled) {
      const Tensor two = dtype_is_integral(c.table_t) ? testing::ints_of({}, {3}, c.table_t) : testing::scalar_tensor(c.table_t, 2.0);
      y = b.op("Mul", {y, b.constant("two", two)});
    }
    b.output(y);
    const Graph g = b.build();
    auto ids_in = [&](uint64_t seed) {
      std::vector<int64_t> v = ids_for(c.ids, dim, seed);
      if (c.through_add)
        for (int64_t& x : v) x = x - 1 < -dim ? x : x - 1;
      return testing::ints_of(c.ids, v, c.index_t);
    };
    const std::vector<Tensor> in1 = {ids_in(1)}, in2 = {ids_in(2)};
    const Plan p = plan_of(g, in1);
    EXPECT_FALSE(any_opaque_gather(p));
    EXPECT_EQ(p.kernels.size(), 1u);  // the lookup, its index and its reader in one kernel
    EXPECT_GE(gathered_loads(p), 1);
    expect_refs_bits(g, {in1, in2});
    expect_cuda_sources_compile(p);
  }
}

// Two lookups chained (the second's indices are the first's values) and a lookup whose table
// is computed by a kernel of the model: both fuse, ref's bits everywhere.
TEST(GatherFusion, NestedLookupsAndComputedTables) {
  GraphBuilder b("nested", 17);
  const int ids = b.input("ids", DType::i64, {3, 4});
  const int x = b.input("x", DType::f32, {12, 6});
  const Tensor perm = testing::ints_of({12}, {5, 3, 11, 0, -1, 7, 2, 9, 4, 6, 1, 8});
  const int inner = b.op("Gather", {b.constant("perm", perm), ids}, {{"axis", int64_t{0}}});
  const int table = b.op("Add", {x, x});  // a computed table: materialized, then gathered from
  b.output(b.op("Gather", {table, inner}, {{"axis", int64_t{0}}}));
  const Graph g = b.build();
  const std::vector<Tensor> in1 = {testing::ints_of({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}), testing::random_tensor(DType::f32, {12, 6}, 3)};
  const std::vector<Tensor> in2 = {testing::ints_of({3, 4}, {-1, -12, 11, 0, 3, 3, 3, 3, 7, 6, 5, 4}), testing::random_tensor(DType::f32, {12, 6}, 4)};
  const Plan p = plan_of(g, in1);
  EXPECT_FALSE(any_opaque_gather(p));
  EXPECT_EQ(gathered_loads(p), 2);
  expect_refs_bits(g, {in1, in2});
  expect_cuda_sources_compile(p);
}

// An fp16 NaN with a payload is copied bit for bit by a plain lookup (the raw-copy store), as
// by ref.
TEST(GatherFusion, HalfNaNPayloadsAreCopied) {
  Tensor tab(DType::f16, {4, 2});
  const uint16_t bits[] = {0x7c01, 0xfe12, 0x3c00, 0x8000, 0x7d55, 0x0001, 0xbc00, 0x7bff};
  std::memcpy(tab.raw(), bits, sizeof bits);
  GraphBuilder b("nan", 17);
  const int ids = b.input("ids", DType::i64, {5});
  b.output(b.op("Gather", {b.constant("table", tab), ids}, {{"axis", int64_t{0}}}));
  const Graph g = b.build();
  const Tensor in = testing::ints_of({5}, {0, 2, -4, 3, 1});
  const Tensor want = Session(g, "ref").run({in})[0];
  EXPECT_EQ(0, std::memcmp(want.raw(), bits, 4));  // row 0 as stored
  expect_refs_bits(g, {{in}});
}

// GPT-2's embedding: wte[ids] + wpe, then LayerNormalization, and the sum added again after a
// Tanh (read twice in one kernel). No kernel copies the rows first; every backend gives ref's
// values.
TEST(GatherFusion, EmbeddingThenLayerNormIsOneKernelPerReader) {
  const int64_t V = 300, S = 40, E = 64;
  GraphBuilder b("embed_ln", 17);
  int h = -1;
  const int ln = embedding_layer_norm(b, V, S, E, 21, &h);
  b.output(b.op("Add", {b.op("Tanh", {ln}), h}));
  const Graph g = b.build();
  const auto sets = two_id_sets(V, S, 37);
  const Plan p = plan_of(g, sets[0]);
  EXPECT_FALSE(any_opaque_gather(p));
  ASSERT_EQ(p.kernels.size(), 1u);  // the row kernel computes LayerNorm and the residual sum
  EXPECT_EQ(p.kernels[0].kind, FusionKind::input);
  EXPECT_EQ(p.kernels[0].outputs.size(), 1u);  // h is not stored: nothing after this kernel reads it
  // The table counts the rows picked (S x E floats per gathered load), not all V of them.
  EXPECT_LT(kernel_bytes_read(p, p.kernels[0]), V * E * 4);
  expect_refs_values(g, sets, 2e-5);
  expect_cuda_sources_compile(p);
}

// FUSOR_GATHER_FUSION=0 (A/B runs) keeps the lookup's own opaque kernel, with the same bits.
TEST(GatherFusion, TheKnobKeepsTheOpaqueKernel) {
  GraphBuilder b("knob", 17);
  const int ids = b.input("ids", DType::i64, {6});
  const int e = b.op("Gather", {b.constant("table", testing::random_tensor(DType::f32, {9, 5}, 2)), ids}, {{"axis", int64_t{0}}});
  b.output(b.op("Relu", {e}));
  const Graph g = b.build();
  const Tensor in = testing::ints_of({6}, {8, 0, -1, 4, 4, -9});
  ASSERT_FALSE(any_opaque_gather(plan_of(g, {in})));
  testing::ScopedEnv off("FUSOR_GATHER_FUSION", "0");
  const Plan p = plan_of(g, {in});
  EXPECT_TRUE(any_opaque_gather(p));
  EXPECT_EQ(gathered_loads(p), 0);
  EXPECT_EQ(p.kernels.size(), 2u);
  expect_refs_bits(g, {{in}});
}

// GPT-2's residual stream: h = wte[ids] + wpe, LayerNorm(h) -> MatMul -> + h. h is looked up
// once: the LayerNorm kernel computes it, stores it as a second output, and the residual add
// after the MatMul reads it (no second lookup, no kernel of its own); ref's values everywhere.
TEST(GatherFusion, ALookupReadByTwoKernelsIsStoredByTheFirst) {
  const int64_t V = 500, S = 48, E = 32;
  GraphBuilder b("residual", 17);
  int h = -1;
  const int ln = embedding_layer_norm(b, V, S, E, 31, &h);
  const int mm = b.op("MatMul", {ln, b.constant("w", testing::random_tensor(DType::f32, {E, E}, 35))});
  b.output(b.op("Add", {mm, h}));
  const Graph g = b.build();
  const auto sets = two_id_sets(V, S, 53);
  const Plan p = plan_of(g, sets[0]);
  EXPECT_FALSE(any_opaque_gather(p));
  EXPECT_EQ(gathered_loads(p), 1);  // one lookup, not one per reader
  ASSERT_FALSE(p.kernels.empty());
  EXPECT_EQ(p.kernels[0].kind, FusionKind::input);
  EXPECT_EQ(p.kernels[0].outputs.size(), 2u);  // LayerNorm's output and h
  expect_refs_values(g, sets, 1e-5);
  expect_cuda_sources_compile(p);
}

// Two lookups in one kernel (wte[ids] + wpe[pos]) with the second out of range: every backend
// names the second Gather (the GPUs' status word names the kernel, so their message names each
// Gather the kernel fuses, the failing one included).
TEST(GatherFusion, AnIndexErrorNamesTheFailingLookupOfSeveral) {
  GraphBuilder b("two", 17);
  const int ids = b.input("ids", DType::i64, {1, 3});
  const int pos = b.input("pos", DType::i64, {1, 3});
  const int tok = b.op("Gather", {b.constant("wte", testing::random_tensor(DType::f32, {10, 4}, 7)), ids}, {{"axis", int64_t{0}}});
  const int at = b.op("Gather", {b.constant("wpe", testing::random_tensor(DType::f32, {6, 4}, 8)), pos}, {{"axis", int64_t{0}}});
  b.output(b.op("Add", {tok, at}));
  const Graph g = b.build();
  const std::string second = g.nodes[g.values[at].producer].name;
  const std::vector<Tensor> in = {testing::ints_of({1, 3}, {1, 2, 3}), testing::ints_of({1, 3}, {0, 1, 7})};
  EXPECT_EQ(gathered_loads(plan_of(g, in)), 2);
  for (const std::string& be : testing::usable_backends()) {
    SCOPED_TRACE(be);
    EXPECT_ERROR(Session(g, be).run(in), "'" + second + "' (Gather)");
  }
}

// A Slice above a lookup would leave the indices it drops unchecked: ONNX makes every
// out-of-range index the Gather's error, so such a lookup is stored whole (as ref and
// onnxruntime check it) and the error is raised on every backend.
TEST(GatherFusion, IndicesASliceDropsAreStillChecked) {
  GraphBuilder b("sliced", 17);
  const int ids = b.input("ids", DType::i64, {3});
  const int e = b.op("Gather", {b.constant("table", testing::random_tensor(DType::f32, {10, 4}, 9)), ids}, {{"axis", int64_t{0}}});
  const int s = b.op("Slice", {e, b.constant("st", testing::ints_of({1}, {0})), b.constant("en", testing::ints_of({1}, {1}))});
  b.output(b.op("Relu", {s}));
  const Graph g = b.build();
  const std::vector<Tensor> good = {testing::ints_of({3}, {1, 9, -10})}, bad = {testing::ints_of({3}, {1, 50, 2})};
  expect_refs_bits(g, {good});
  for (const std::string& be : testing::usable_backends()) {
    SCOPED_TRACE(be);
    EXPECT_ERROR(Session(g, be).run(bad), "out of range");
  }
}

// A lookup broadcast into an empty result (another operand has a 0-length dim: a batch of 0)
// evaluates none of its positions in the reader's kernel, so it is stored whole and its indices
// are still checked: every backend raises ref's error, for an element-wise reader, a reduction
// over the empty axis (a non-empty result of zeros), a LayerNormalization after it, and the
// inner Gather of a nested pair. Red-team session 27: cpu and vulkan returned empty results.
TEST(GatherFusion, ALookupBroadcastIntoAnEmptyResultIsStillChecked) {
  for (const char* reader : {"Add", "ReduceSum", "LayerNormalization", "nested"}) {
    SCOPED_TRACE(reader);
    GraphBuilder b(std::string("empty_") + reader, 17);
    const int ids = b.input("ids", DType::i64, {3});
    const int z = b.input("z", DType::f32, {0, 3, 4});
    const int table = b.constant("table", testing::random_tensor(DType::f32, {10, 4}, 21));
    int idx = ids;
    if (std::string(reader) == "nested") idx = b.op("Gather", {b.constant("perm", testing::ints_of({12}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2})), ids}, {{"axis", int64_t{0}}});
    const int e = b.op("Gather", {table, idx}, {{"axis", int64_t{0}}});  // [3, 4]
    const int sum = b.op(std::string(reader) == "ReduceSum" ? "Mul" : "Add", {e, z});  // [0, 3, 4]
    if (std::string(reader) == "ReduceSum") b.output(b.op("ReduceSum", {sum, b.constant("axes", testing::ints_of({1}, {0}))}, {{"keepdims", int64_t{0}}}));
    else if (std::string(reader) == "LayerNormalization")
      b.output(b.op("LayerNormalization", {sum, b.constant("g", testing::random_tensor(DType::f32, {4}, 22))}, {{"axis", int64_t{-1}}}));
    else b.output(sum);
    const Graph g = b.build();
    const Tensor zt(DType::f32, {0, 3, 4});
    const std::vector<Tensor> good = {testing::ints_of({3}, {1, 9, -10}), zt}, bad = {testing::ints_of({3}, {1, 10, 2}), zt};
    if (std::string(reader) == "nested") {  // the inner lookup (perm has 12 entries) fails
      EXPECT_ERROR(Session(g, "ref").run({testing::ints_of({3}, {1, 12, 2}), zt}), "out of range");
      for (const std::string& be : testing::usable_backends()) {
        SCOPED_TRACE(be);
        EXPECT_ERROR(Session(g, be).run({testing::ints_of({3}, {1, 12, 2}), zt}), "out of range");
      }
    }
    expect_refs_bits(g, {good});
    if (std::string(reader) == "nested") continue;  // its bad ids are in range of perm (checked above)
    EXPECT_ERROR(Session(g, "ref").run(bad), "out of range");
    for (const std::string& be : testing::usable_backends()) {
      SCOPED_TRACE(be);
      EXPECT_ERROR(Session(g, be).run(bad), "out of range");
    }
  }
}

// Lookups in two kernels both out of range: the GPUs' status word keeps the first kernel in
// plan order (index_error_code), so every backend names the Gather ref fails on, the first.
TEST(GatherFusion, TheFirstFailingKernelIsNamed) {
  GraphBuilder b("two_kernels", 17);
  const int ids = b.input("ids", DType::i64, {3});
  const int first = b.op("Gather", {b.constant("t1", testing::random_tensor(DType::f32, {10, 8}, 31)), ids}, {{"axis", int64_t{0}}});
  const int h = b.op("Relu", {first});
  b.output(h);
  // A matmul between them (gathered loads stay out of contraction kernels): the second lookup
  // is read by the kernel after it.
  const int y = b.op("MatMul", {h, b.constant("w", testing::random_tensor(DType::f32, {8, 8}, 33))});
  const int second = b.op("Gather", {b.constant("t2", testing::random_tensor(DType::f32, {10, 8}, 32)), ids}, {{"axis", int64_t{0}}});
  b.output(b.op("Add", {y, second}));
  const Graph g = b.build();
  const std::vector<Tensor> good = {testing::ints_of({3}, {1, 2, 3})}, bad = {testing::ints_of({3}, {1, 10, 3})};
  const Plan p = plan_of(g, good);
  ASSERT_GE(p.kernels.size(), 2u);
  EXPECT_EQ(gathered_loads(p), 2);
  const std::string want = "'" + g.nodes[g.values[first].producer].name + "' (Gather)";
  EXPECT_ERROR(Session(g, "ref").run(bad), want);
  for (const std::string& be : testing::usable_backends()) {
    SCOPED_TRACE(be);
    EXPECT_ERROR(Session(g, be).run(bad), want);
  }
}

// 3,000 nested lookups (each Gather's indices another Gather's output) plan in linear time:
// lookups of one table are one binding, and their chains are cut like any other.
TEST(GatherFusion, LongChainsOfLookupsPlanQuickly) {
  GraphBuilder b("nested", 17);
  std::vector<int64_t> perm(64);
  for (int64_t i = 0; i < 64; ++i) perm[i] = (i * 5 + 3) % 64;
  const int table = b.constant("perm", testing::ints_of({64}, perm));
  int x = b.input("ids", DType::i64, {8});
  for (int i = 0; i < 3000; ++i) x = b.op("Gather", {table, x}, {{"axis", int64_t{0}}});
  b.output(x);
  const Graph g = b.build();
  const std::vector<Tensor> in = {testing::ints_of({8}, {0, 1, 2, 3, 60, 61, 62, -1})};
  const auto t0 = std::chrono::steady_clock::now();
  const Plan p = plan_of(g, in);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 2.0) << "planning took " << s << " s";  // 0.04 s here; quadratic was 4.4 s
  EXPECT_FALSE(any_opaque_gather(p));
  const Tensor want = Session(g, "ref").run(in)[0];
  for (const std::string& be : {std::string("cpu")}) EXPECT_EQ(0, std::memcmp(Session(g, be).run(in)[0].raw(), want.raw(), want.nbytes()));
}

// `fusor explain` says which kernel looks rows up itself (the node suite's Gather case).
TEST(GatherFusion, ExplainNamesTheLookup) {
  const std::string shared = testing::shared_dir();
  if (shared.empty()) GTEST_SKIP() << "no shared ONNX suites (../shared)";
  if (!testing::have_cli()) GTEST_SKIP() << "the fusor CLI was not built";
  const std::string model = shared + "/onnx-tests/node/test_gather_0/model.onnx";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << "no " << model;
  std::string out;
  ASSERT_EQ(testing::run_cli("explain " + model, &out), 0) << out;
  EXPECT_NE(out.find("kernel 0 looks up rows of 'data' [5, 4, 3, 2] itself"), std::string::npos) << out;
  EXPECT_EQ(out.find("opaque"), std::string::npos) << out;
}

// An index outside [-dim, dim) is the Gather node's error on every backend, one line, and the
// session still runs good indices afterwards.
TEST(GatherFusion, OutOfRangeIndicesNameTheNode) {
  GraphBuilder b("oob", 17);
  const int ids = b.input("ids", DType::i64, {4});
  const int e = b.op("Gather", {b.constant("table", testing::random_tensor(DType::f32, {10, 3}, 1)), ids}, {{"axis", int64_t{0}}});
  b.output(b.op("Relu", {e}));
  const Graph g = b.build();
  const Tensor good = testing::ints_of({4}, {0, 9, -10, 4});
  ASSERT_FALSE(any_opaque_gather(plan_of(g, {good})));
  for (const int64_t bad : {int64_t{10}, int64_t{-11}, int64_t{1} << 40, -(int64_t{1} << 40)}) {
    const Tensor in = testing::ints_of({4}, {1, 2, bad, 3});
    for (const std::string& be : testing::usable_backends()) {
      SCOPED_TRACE(be + " " + std::to_string(bad));
      Session s(g, be);
      EXPECT_ERROR(s.run({in}), "out of range");
      EXPECT_ERROR(s.run({in}), "Gather");
      const Tensor want = Session(g, "ref").run({good})[0], got = s.run({good})[0];
      EXPECT_EQ(0, std::memcmp(got.raw(), want.raw(), want.nbytes()));
    }
  }
}

}  // namespace
}  // namespace fusor
