// DequantizeLinear -> MatMul fused (issue 13): a constant int8/uint8 weight read through
// DequantizeLinear as MatMul's B stays int8 in the plan (1 byte per element) and the matmul
// kernel dequantizes it as it loads B (MatMulDesc::dequant_b, ir/dequant_weight.cpp). Checked on
// seeded random weights with non-zero zero points (per tensor and per axis), odd sizes and a
// GEMV, against `ref` on cpu (fused plan), vulkan (lavapipe here) and cuda (NVRTC compile
// without a GPU; a run with one), and on the issue-13 QDQ model's plan.
#include <gtest/gtest.h>

#include <random>

#include "frontend/builder.h"
#include "ir/kernel_spec.h"
#include "ir/passes.h"
#include "runtime/session.h"
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
