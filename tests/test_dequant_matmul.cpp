// DequantizeLinear -> MatMul fused (issue 13): a constant int8/uint8 weight read through
// DequantizeLinear as MatMul's B stays int8 in the plan (1 byte per element) and the matmul
// kernel dequantizes it as it loads B (MatMulDesc::dequant_b, ir/dequant_weight.cpp). Checked on
// seeded random weights with non-zero zero points (per tensor and per axis), odd sizes and a
// GEMV, against `ref` on cpu (fused plan), vulkan (lavapipe here) and cuda (NVRTC compile
// without a GPU; a run with one), and on the issue-13 QDQ model's plan.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>

#include "frontend/builder.h"
#include "ir/kernel_spec.h"
#include "ir/passes.h"
#include "runtime/session.h"
#include "backend_agreement.h"
#include "test_util.h"
#ifdef FUSOR_HAVE_CUDA
#include "backends/cuda/cuda_backend.h"
#endif

namespace fusor {
namespace {

struct DqCase {
  int64_t m, k, n;
  DType qt;           // i8 or u8
  bool per_axis;
  bool gemm_trans_b;  // Gemm(x, DQ(w[N, K]), transB=1) with the scale on axis 0, else MatMul(x, DQ(w[K, N]))
  bool epilogue;      // + bias, Relu (output fusion after the dequantized product)
  int64_t batch = 0;  // > 0: x is [batch, M, K] (the weight broadcast over the batch)
};

Shape x_shape(const DqCase& c) { return c.batch ? Shape{c.batch, c.m, c.k} : Shape{c.m, c.k}; }

std::string case_name(const DqCase& c) {
  return std::to_string(c.m) + "x" + std::to_string(c.k) + "x" + std::to_string(c.n) + (c.qt == DType::i8 ? " int8" : " uint8") +
         (c.per_axis ? " per-axis" : " per-tensor") + (c.gemm_trans_b ? " gemm-transB" : "") + (c.epilogue ? " +bias+relu" : "") +
         (c.batch ? " batch " + std::to_string(c.batch) : "");
}

// x [M, K] input; the weight's quantized values, scales and zero points seeded random (zero
// points non-zero and different per channel).
Graph dq_graph(const DqCase& c, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int64_t lo = c.qt == DType::i8 ? -128 : 0, hi = c.qt == DType::i8 ? 127 : 255;
  const Shape ws = c.gemm_trans_b ? Shape{c.n, c.k} : Shape{c.k, c.n};
  Tensor q(c.qt, ws);
  for (int64_t i = 0; i < q.numel(); ++i) q.set_int(i, lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1)));
  const int64_t channels = c.per_axis ? c.n : 1;
  const Shape ps = c.per_axis ? Shape{c.n} : Shape{};
  Tensor scale(DType::f32, ps), zp(c.qt, ps);
  std::uniform_real_distribution<double> u(0.002, 0.05);
  for (int64_t i = 0; i < channels; ++i) {
    scale.set(i, u(rng));
    zp.set_int(i, (c.qt == DType::i8 ? -20 : 100) + static_cast<int64_t>(rng() % 37) + 1);  // never 0
  }
  GraphBuilder b("dq_matmul", 13);
  int x = b.input("x", DType::f32, x_shape(c));
  int w = b.op("DequantizeLinear", {b.constant("w_q", q), b.constant("w_scale", scale), b.constant("w_zp", zp)},
               {{"axis", int64_t{c.gemm_trans_b ? 0 : 1}}});
  int y = c.gemm_trans_b ? b.op("Gemm", {x, w}, {{"transB", int64_t{1}}}) : b.op("MatMul", {x, w});
  if (c.epilogue) {
    y = b.op("Add", {y, b.constant("bias", testing::random_tensor(DType::f32, {c.n}, seed + 5))});
    y = b.op("Relu", {y});
  }
  b.output(y);
  Graph g = b.build();
  make_static(g, {});
  return g;
}

std::vector<DqCase> cases() {
  std::vector<DqCase> out;
  for (DType qt : {DType::i8, DType::u8})
    for (bool axis : {true, false}) {
      out.push_back({3, 37, 19, qt, axis, false, false});
      out.push_back({1, 37, 19, qt, axis, false, false});  // GEMV (the skinny / M <= 8 paths)
    }
  out.push_back({67, 70, 45, DType::i8, true, false, true});  // several tiles, fused epilogue
  out.push_back({5, 33, 17, DType::i8, true, true, false});   // Gemm transB: B read through a transposed view
  out.push_back({1, 64, 33, DType::u8, false, true, true});
  out.push_back({6, 21, 13, DType::i8, true, false, false, 3});  // batched A, one weight
  return out;
}

// The plan's matmul kernels that read an int8/uint8 B through dequant_b.
std::vector<const KernelSpec*> dequant_kernels(const Plan& p) {
  std::vector<const KernelSpec*> ks;
  for (const KernelSpec& k : p.kernels)
    if (k.matmul && k.matmul->dequant_b) ks.push_back(&k);
  return ks;
}

void expect_int8_weight_plan(const Plan& p, const std::string& what) {
  auto ks = dequant_kernels(p);
  ASSERT_EQ(ks.size(), 1u) << what;
  const KernelSpec& k = *ks[0];
  const Buffer& w = p.buffers[k.matmul->b_buffer];
  EXPECT_TRUE(w.dtype == DType::i8 || w.dtype == DType::u8) << what;
  EXPECT_EQ(w.role, Buffer::Role::constant) << what;
  EXPECT_EQ(w.nbytes(), shape_numel(w.shape)) << what << ": the weight must be stored 1 byte per element";
  EXPECT_NE(std::find(k.fused_ops.begin(), k.fused_ops.end(), "DequantizeLinear"), k.fused_ops.end()) << what;
  for (const KernelSpec& o : p.kernels) {
    EXPECT_FALSE(o.kind == FusionKind::opaque && p.graph.nodes[o.node].op_type == "DequantizeLinear") << what << ": a DequantizeLinear kernel";
    EXPECT_FALSE(o.kind == FusionKind::opaque && p.graph.nodes[o.node].op_type == "Transpose") << what;
  }
  // No fp32 copy of the weight anywhere in the plan.
  for (const Buffer& b : p.buffers) EXPECT_FALSE(b.dtype == DType::f32 && b.shape == w.shape && b.role == Buffer::Role::constant) << what;
}

void expect_matches(const std::vector<Tensor>& got, const std::vector<Tensor>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    // fp32 accumulation against ref's double (DESIGN.md: contractions <= 1e-5 rel).
    const CompareResult r = compare_tensors(got[i], want[i], 1e-4, 1e-5);
    EXPECT_TRUE(r.ok) << what << ": " << r.message;
    EXPECT_LT(relative_l2(got[i], want[i]), 1e-5) << what;
  }
}

bool have_device(const std::string& be) {
  try {
    return !make_backend(be)->devices().empty();
  } catch (const Error&) {
    return false;
  }
}

TEST(DequantMatMul, PlanKeepsTheWeightInt8) {
  for (const DqCase& c : cases()) {
    const Graph g = dq_graph(c, 11);
    // The weight's DequantizeLinear survives folding (a fold would make it an fp32 constant).
    int dq = 0;
    for (const Node& n : g.nodes) dq += n.op_type == "DequantizeLinear";
    EXPECT_EQ(dq, 1) << case_name(c);
    expect_int8_weight_plan(build_plan(g), case_name(c));
    // Unfused (the op-by-op baseline): folded, no dequant kernel, no host node.
    FusionOptions off;
    off.fuse = false;
    const Plan u = build_plan(g, off);
    EXPECT_TRUE(dequant_kernels(u).empty()) << case_name(c);
    for (const KernelSpec& k : u.kernels) EXPECT_NE(k.kind, FusionKind::opaque) << case_name(c);
  }
}

TEST(DequantMatMul, RandomWeightsMatchReference) {
  std::vector<std::string> bes{"cpu"};
  if (have_device("vulkan")) bes.push_back("vulkan");
  else std::cerr << "[ SKIP part ] vulkan: no device\n";
  if (have_device("cuda")) bes.push_back("cuda");
  for (const DqCase& c : cases()) {
    const Graph g = dq_graph(c, 7 + c.k);
    const std::vector<Tensor> in = {testing::random_tensor(DType::f32, x_shape(c), 100 + c.n, -2.0, 2.0)};
    const std::vector<Tensor> want = make_backend("ref")->compile(g, {})->run(in);
    for (const std::string& be : bes)
      for (bool fuse : {true, false}) {
        CompileOptions o;
        o.fusion = fuse;
        // Backends poison their outputs / arena before a run (backend.h), so a missed element fails.
        auto exe = make_backend(be)->compile(g, o);
        expect_matches(exe->run(in), want, case_name(c) + " on " + be + (fuse ? "" : " unfused"));
        // Replay with other inputs: the int8 weight and its scales stay bound.
        const std::vector<Tensor> in2 = {testing::random_tensor(DType::f32, x_shape(c), 200 + c.n)};
        expect_matches(exe->run(in2), make_backend("ref")->compile(g, {})->run(in2), case_name(c) + " on " + be + " second run");
      }
  }
}

// A MatMul whose A is constant too folds completely (the deferred DequantizeLinear is folded
// first), as before the fusion existed.
TEST(DequantMatMul, ConstantProductStillFolds) {
  GraphBuilder b("dq_const", 13);
  int x = b.input("x", DType::f32, {2, 3});
  int w = b.op("DequantizeLinear", {b.constant("q", testing::ints_of({3, 3}, {1, -2, 3, 4, -5, 6, 7, 8, -9}, DType::i8)),
                                    b.constant("s", testing::tensor_of({}, {0.5})), b.constant("z", testing::ints_of({}, {2}, DType::i8))});
  int c = b.op("MatMul", {b.constant("a", testing::tensor_of({2, 3}, {1, 2, 3, -1, 0.5, 2})), w});
  b.output(b.op("Add", {x, c}));
  Graph g = b.build();
  make_static(g, {});
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Add");
  // (q - 2) * 0.5 = [[-0.5, -2, 0.5], [1, -3.5, 2], [2.5, 3, -5.5]]; row 0 of a: 1, 2, 3.
  const Tensor& folded = *g.values[g.nodes[0].inputs[1]].constant;
  testing::expect_values(folded, {1 * -0.5 + 2 * 1 + 3 * 2.5, 1 * -2 + 2 * -3.5 + 3 * 3, 1 * 0.5 + 2 * 2 + 3 * -5.5,
                                  -1 * -0.5 + 0.5 * 1 + 2 * 2.5, -1 * -2 + 0.5 * -3.5 + 2 * 3, -1 * 0.5 + 0.5 * 2 + 2 * -5.5});
}

// The issue-13 QDQ model (per-channel int8 MatMul weight, tests/data/make_issue13.py): its
// MatMul reads the 216 x 10 weight as int8 (its outputs against onnxruntime's are checked on
// every backend by Issue13Models).
TEST(DequantMatMul, Issue13QdqModelPlan) {
  const std::string dir = std::string(FUSOR_SOURCE_DIR) + "/tests/data/qdq_int8_matmul_conv";
  const Graph m = load_model(dir + "/model.onnx");
  const Graph g = specialize(m, random_inputs(m, 3));
  const Plan p = build_plan(g);
  auto ks = dequant_kernels(p);
  ASSERT_EQ(ks.size(), 1u);
  const Buffer& w = p.buffers[ks[0]->matmul->b_buffer];
  EXPECT_EQ(w.name, "wm_q");
  EXPECT_EQ(w.dtype, DType::i8);
  EXPECT_EQ(w.shape, (Shape{216, 10}));
  EXPECT_EQ(w.nbytes(), 216 * 10);
  EXPECT_EQ(ks[0]->matmul->dequant_b->dim, 10);  // per-axis along N
  for (const KernelSpec& k : p.kernels)
    if (k.kind == FusionKind::opaque)
      for (int b : k.opaque_inputs) EXPECT_NE(b, ks[0]->matmul->b_buffer) << "a host/opaque node reads the int8 weight";
  if (testing::have_cli()) {
    std::string out;
    ASSERT_EQ(testing::run_cli("explain " + dir + "/model.onnx", &out), 0) << out;
    EXPECT_NE(out.find("DequantizeLinear+MatMul"), std::string::npos) << out;
    EXPECT_NE(out.find("reads B as int8 'wm_q' [216, 10]"), std::string::npos) << out;
  }
}


// ---- Hostile and edge-case weights (review): every case either matches ref on cpu and vulkan
// or is refused everywhere with a one-line fusor::Error. ----

struct DqSpec {
  std::string name;
  Shape w{6, 5};             // quantized weight's shape
  DType qt = DType::i8;
  Shape scale{5};            // scale's shape
  DType st = DType::f32;     // scale's dtype (f16: the dequantized weight is f16)
  std::optional<Shape> zp = Shape{5};
  DType zt = DType::i8;
  int64_t axis = 1;
  Shape x{3, 6};             // activation
  std::string consumer = "MatMul";  // MatMul | Gemm
  std::vector<std::pair<std::string, int64_t>> gemm_ints;  // transA / transB
  double alpha = 1.0, beta = 1.0;
  bool gemm_c = false;
  int extra = 0;  // 1: a second MatMul reads the weight; 2: and it is a graph output too; 3: and an Add reads it
  int opset = 13;
  int64_t block_size = 0;
  bool expect_error = false;
  int fused = -1;  // 1: the plan must read the weight as int8, 0: it must fold it, -1: either
};

Tensor seeded_q(DType t, const Shape& s, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Tensor q(t, s);
  const int64_t lo = t == DType::u8 ? 0 : -128;
  for (int64_t i = 0; i < q.numel(); ++i) q.set_int(i, lo + static_cast<int64_t>(rng() % 256));
  return q;
}

Graph dq_spec_graph(const DqSpec& c, std::vector<Tensor>* in) {
  GraphBuilder b("dq_hostile", c.opset);
  const DType xt = c.st;
  const int x = b.input("x", xt, c.x);
  in->push_back(testing::random_tensor(xt, c.x, 41, -1.5, 1.5));
  Tensor scale(c.st, c.scale);
  std::mt19937_64 rng(5);
  for (int64_t i = 0; i < scale.numel(); ++i) scale.set(i, 0.01 + 0.04 * static_cast<double>(rng() % 1000) / 1000.0);
  std::vector<int> dq_in{b.constant("w_q", seeded_q(c.qt, c.w, 3)), b.constant("w_scale", scale)};
  if (c.zp) {
    Tensor z(c.zt, *c.zp);
    for (int64_t i = 0; i < z.numel(); ++i) z.set_int(i, (c.zt == DType::u8 ? 120 : -7) + static_cast<int64_t>(i % 5) + 1);
    dq_in.push_back(b.constant("w_zp", z));
  }
  std::map<std::string, AttrValue> da{{"axis", c.axis}};
  if (c.block_size) da["block_size"] = c.block_size;
  const int w = b.op("DequantizeLinear", dq_in, da);
  int y;
  if (c.consumer == "Gemm") {
    std::map<std::string, AttrValue> ga{{"alpha", c.alpha}, {"beta", c.beta}};
    for (auto& [k, v] : c.gemm_ints) ga[k] = v;
    std::vector<int> gi{x, w};
    const bool tb = ga.count("transB") && std::get<int64_t>(ga["transB"]) != 0;
    if (c.gemm_c) gi.push_back(b.constant("c", testing::random_tensor(xt, {1, c.w[tb ? 0 : 1]}, 43)));
    y = b.op("Gemm", gi, ga);
  } else {
    y = b.op("MatMul", {x, w});
  }
  b.output(y);
  if (c.extra >= 1) {
    const int x2 = b.input("x2", xt, c.x);
    in->push_back(testing::random_tensor(xt, c.x, 42, -1.5, 1.5));
    b.output(b.op("MatMul", {x2, w}));
  }
  if (c.extra >= 2) b.output(w);
  if (c.extra >= 3) b.output(b.op("Add", {w, w}));
  return b.build();
}

std::vector<DqSpec> hostile_specs() {
  std::vector<DqSpec> v;
  auto add = [&](DqSpec s) { v.push_back(std::move(s)); };
  add({.name = "per-axis baseline", .fused = 1});
  add({.name = "scale one too long", .scale = {6}, .zp = Shape{6}, .expect_error = true});
  add({.name = "scale of rank 2", .scale = {1, 5}, .zp = Shape{1, 5}, .expect_error = true});
  add({.name = "zero point shorter than scale", .zp = Shape{4}, .expect_error = true});
  add({.name = "zero point uint8 for int8 x", .zt = DType::u8, .expect_error = true});
  add({.name = "axis 2 of a rank-2 weight", .axis = 2, .expect_error = true});
  add({.name = "axis -3 of a rank-2 weight", .axis = -3, .expect_error = true});
  add({.name = "axis -1 (N)", .axis = -1, .fused = 1});
  add({.name = "axis 0 (K, scale along the reduction)", .scale = {6}, .zp = Shape{6}, .axis = 0, .fused = 1});
  add({.name = "axis -2 (K)", .scale = {6}, .zp = Shape{6}, .axis = -2, .fused = 1});
  add({.name = "no zero point, per axis", .zp = std::nullopt, .fused = 1});
  add({.name = "uint8 per tensor", .qt = DType::u8, .scale = {}, .zp = Shape{}, .zt = DType::u8, .fused = 1});
  add({.name = "scale [1] zero point []", .scale = {1}, .zp = Shape{}, .fused = 1});
  add({.name = "fp16 scale and activations", .st = DType::f16, .fused = 0});
  add({.name = "rank-1 weight (matrix-vector)", .w = {6}, .scale = {}, .zp = Shape{}, .axis = 0, .fused = 0});
  add({.name = "rank-3 weight (batched B)", .w = {2, 6, 5}, .scale = {5}, .zp = Shape{5}, .axis = 2, .x = {2, 3, 6}, .fused = 0});
  add({.name = "rank-1 activation", .x = {6}, .fused = 0});
  add({.name = "K = 0", .w = {0, 5}, .x = {3, 0}});
  add({.name = "N = 0 per tensor", .w = {6, 0}, .scale = {}, .zp = Shape{}});
  add({.name = "M = 0", .x = {0, 6}});
  add({.name = "N = 0, scale along K", .w = {6, 0}, .scale = {6}, .zp = Shape{6}, .axis = 0});
  add({.name = "K = 0, scale along K", .w = {0, 5}, .scale = {0}, .zp = Shape{0}, .axis = 0, .x = {3, 0}});
  add({.name = "K = 1 scale along K", .w = {1, 5}, .scale = {1}, .zp = Shape{1}, .axis = 0, .x = {3, 1}});
  add({.name = "shared by two MatMuls", .extra = 1, .fused = 1});
  add({.name = "shared by two MatMuls and a graph output", .extra = 2, .fused = 0});
  add({.name = "shared by two MatMuls, an output and an Add", .extra = 3, .fused = 0});
  add({.name = "blocked (opset 21)", .scale = {3, 5}, .zp = Shape{3, 5}, .axis = 0, .opset = 21, .block_size = 2, .fused = 0});
  add({.name = "Gemm transB per axis on N", .w = {5, 6}, .axis = 0, .consumer = "Gemm", .gemm_ints = {{"transB", 1}}, .fused = 1});
  add({.name = "Gemm transB per axis on K", .w = {5, 6}, .scale = {6}, .zp = Shape{6}, .axis = 1, .consumer = "Gemm", .gemm_ints = {{"transB", 1}}, .fused = 1});
  add({.name = "Gemm transA transB alpha beta C", .w = {5, 6}, .axis = 0, .x = {6, 3}, .consumer = "Gemm",
       .gemm_ints = {{"transA", 1}, {"transB", 1}}, .alpha = 0.5, .beta = 2.0, .gemm_c = true, .fused = 1});
  add({.name = "Gemm alpha beta C", .consumer = "Gemm", .alpha = -1.25, .beta = 0.75, .gemm_c = true, .fused = 1});
  add({.name = "Gemm transA", .x = {6, 3}, .consumer = "Gemm", .gemm_ints = {{"transA", 1}}, .fused = 1});
  return v;
}

TEST(DequantMatMul, HostileWeightsMatchRefOrFailCleanly) {
  for (const DqSpec& c : hostile_specs()) {
    std::vector<Tensor> in;
    const Graph g = dq_spec_graph(c, &in);
    const std::string err = testing::expect_backends_agree(g, in, c.name, c.st == DType::f16 ? 5e-3 : 1e-4);
    EXPECT_EQ(!err.empty(), c.expect_error) << c.name << ": " << err;
    if (c.fused < 0) continue;
    Graph sg = g;
    make_static(sg, {});
    EXPECT_EQ(dequant_kernels(build_plan(sg)).empty(), c.fused == 0) << c.name << ": int8 weight read by the matmul kernel";
  }
}

#ifdef FUSOR_HAVE_CUDA
// No GPU needed: the generated kernels of every case compile with NVRTC, read B as signed /
// unsigned char and print the op table's DequantizeLinear expression; cuBLASLt never takes them.
TEST(DequantMatMul, CudaKernelsCompile) {
  for (const DqCase& c : cases()) {
    const Plan p = build_plan(dq_graph(c, 5));
    auto ks = dequant_kernels(p);
    ASSERT_EQ(ks.size(), 1u) << case_name(c);
    EXPECT_FALSE(cuda_library_gemm(*ks[0], p).has_value()) << case_name(c);
    const std::string src = cuda_kernel_source(*ks[0], p, nullptr);
    EXPECT_NE(src.find(c.qt == DType::i8 ? "signed char" : "unsigned char"), std::string::npos) << src;
    EXPECT_NE(src.find("#define FZ_LOAD_B(off) ((((float)("), std::string::npos) << src;
    try {
      nvrtc_compile_check(src, kernel_identifier(ks[0]->name));
    } catch (const Error& e) {
      ADD_FAILURE() << case_name(c) << ": " << e.what() << "\n" << src;
    }
  }
}

TEST(DequantMatMul, CudaDeviceMatchesReference) {
  if (!have_device("cuda")) GTEST_SKIP() << "no CUDA device (the kernels are NVRTC-compiled by CudaKernelsCompile)";
  for (const DqCase& c : cases()) {
    const Graph g = dq_graph(c, 9);
    const std::vector<Tensor> in = {testing::random_tensor(DType::f32, x_shape(c), 300 + c.k)};
    expect_matches(make_backend("cuda")->compile(g, {})->run(in), make_backend("ref")->compile(g, {})->run(in), case_name(c) + " on cuda");
  }
}
#endif

}  // namespace
}  // namespace fusor
