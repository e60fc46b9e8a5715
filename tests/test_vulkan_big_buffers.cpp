// Values larger than maxStorageBufferRange (128 MiB on lavapipe) on the Vulkan backend: a
// kernel over one runs as several dispatches over windows of it (backends/vulkan/vk_windows.h).
// Real sizes (a weight above 128 MiB, an element-wise op over a 144 MiB tensor) run against
// ref; the other cases lower the limit with FUSOR_VK_MAX_STORAGE_RANGE so that every split
// (rows, batches, M, N, transposed views, a [K, N] weight uploaded transposed) is exercised
// with small tensors, under the validation layer. Inputs are seeded random, never zeros; the
// arena starts poisoned (NaN), so an element no piece writes fails the comparison.
#include <gtest/gtest.h>

#include "vulkan_fixture.h"

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>

#include "backends/backend.h"
#include "backends/vulkan/vulkan_backend.h"
#include "frontend/builder.h"
#include "ir/kernel_spec.h"
#include "ir/passes.h"
#include "runtime/segments.h"

namespace fusor {
namespace {

// Uniform in [-1, 1) (never an all-zero tensor), written straight into the buffer: these
// tensors have up to 38M elements.
Tensor random_f32(Shape s, uint32_t seed) {
  Tensor x(DType::f32, std::move(s));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  float* p = reinterpret_cast<float*>(x.raw());
  for (int64_t i = 0; i < x.numel(); ++i) p[i] = u(rng);
  return x;
}

// Largest |got - want| relative to the largest |want| (outputs are O(1)..O(100) sums).
double max_rel_error(const Tensor& got, const Tensor& want) {
  double err = 0, scale = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double w = want.get(i), g = got.get(i);
    if (std::isnan(g)) return INFINITY;  // an unwritten (poisoned) element
    err = std::max(err, std::fabs(g - w));
    scale = std::max(scale, std::fabs(w));
  }
  return err / std::max(scale, 1e-30);
}

// Sets FUSOR_VK_MAX_STORAGE_RANGE for one scope (the executable reads it when compiled).
struct LimitOverride {
  explicit LimitOverride(uint64_t bytes) { setenv("FUSOR_VK_MAX_STORAGE_RANGE", std::to_string(bytes).c_str(), 1); }
  ~LimitOverride() { unsetenv("FUSOR_VK_MAX_STORAGE_RANGE"); }
};

class VulkanBigBuffers : public testing::ValidatedVulkanTest {
 protected:
  void SetUp() override {
    ValidatedVulkanTest::SetUp();
    if (IsSkipped()) return;
    const std::string d = vk_->devices()[0].details;
    const size_t at = d.find("storage_range=");
    if (at != std::string::npos) device_range_ = std::stoull(d.substr(at + 14));
  }

  // Runs g on vulkan and ref, compares every output; returns the vulkan dispatch count minus
  // the plan's kernel count (the extra dispatches windowing added).
  int64_t check(const Graph& g, const std::vector<Tensor>& inputs, double tol = 1e-5) {
    auto exe = vk_->compile(g, {});
    std::vector<Tensor> got = exe->run(inputs);
    std::vector<Tensor> want = make_backend("ref")->compile(g, {})->run(inputs);
    EXPECT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
      EXPECT_EQ(got[i].shape(), want[i].shape()) << "output " << i;
      if (got[i].shape() != want[i].shape()) continue;
      EXPECT_LE(max_rel_error(got[i], want[i]), tol) << "output " << i;
    }
    return exe->kernel_count() - static_cast<int64_t>(build_plan(g).kernels.size());
  }

  uint64_t device_range_ = 0;  // maxStorageBufferRange of device 0 (0: unknown)
};

Graph finish(GraphBuilder& b) {
  Graph g = b.build();
  make_static(g, {});
  return g;
}


// An FC layer as exported by PyTorch (Gemm, transB=1, bias) + ReLU: its weight [6144, 6144]
// fp32 is 144 MiB. Batch 2 keeps it GEMV-shaped (fast on 2 CPU cores).
TEST_F(VulkanBigBuffers, GemmWeightAbove128MiB) {
  const int64_t n = 6144, k = 6144;
  GraphBuilder b;
  int x = b.input("x", DType::f32, {2, k});
  int w = b.constant("w", random_f32({n, k}, 1));
  int bias = b.constant("bias", random_f32({n}, 2));
  b.output(b.op("Relu", {b.op("Gemm", {x, w, bias}, {{"transB", int64_t{1}}})}));
  const Graph g = finish(b);
  const int64_t extra = check(g, {random_f32({2, k}, 3)});
  if (device_range_ && device_range_ < n * k * 4) EXPECT_GE(extra, 1) << "the weight exceeds the limit but was not split";
  // The transposed weight is folded once: the plan keeps one copy of it, not two.
  const Plan p = build_plan(g);
  int64_t const_bytes = 0;
  for (const Value& v : p.graph.values)
    if (v.constant) const_bytes += v.constant->nbytes();
  EXPECT_LT(const_bytes, n * k * 4 * 3 / 2) << "the plan holds the weight twice";
}

// MatMul with a [K, N] row-major constant (an ONNX MatMul initializer) of 144 MiB: no N-window
// of that layout is narrower than the whole, so it is uploaded transposed and split along N.
TEST_F(VulkanBigBuffers, MatMulRowMajorWeightAbove128MiB) {
  const int64_t k = 4608, n = 8192;
  GraphBuilder b;
  int x = b.input("x", DType::f32, {3, k});
  int w = b.constant("w", random_f32({k, n}, 4));
  b.output(b.op("MatMul", {x, w}));
  const Graph g = finish(b);
  const int64_t extra = check(g, {random_f32({3, k}, 5)});
  if (device_range_ && device_range_ < k * n * 4) EXPECT_GE(extra, 1) << "the weight exceeds the limit but was not split";
}

// Element-wise work over a 144 MiB input and output (both in the arena).
TEST_F(VulkanBigBuffers, ElementwiseOverTensorAbove128MiB) {
  const int64_t len = 36 * 1024 * 1024 + 37;  // not a multiple of any piece size
  GraphBuilder b;
  int x = b.input("x", DType::f32, {len});
  int y = b.input("y", DType::f32, {1});
  b.output(b.op("Add", {b.op("Mul", {b.op("Tanh", {x}), y}), x}));
  const Graph g = finish(b);
  Tensor scale(DType::f32, {1});
  scale.set(0, 0.75);
  const int64_t extra = check(g, {random_f32({len}, 6), scale}, 1e-6);
  if (device_range_ && device_range_ < len * 4) EXPECT_GE(extra, 1) << "the tensor exceeds the limit but was not split";
}

// Small tensors under a 16 KiB limit: every kind of kernel that can be split.
TEST_F(VulkanBigBuffers, SplitsEveryKernelKindUnderLoweredLimit) {
  LimitOverride limit(16 * 1024);
  {  // element-wise with a broadcast row and a transposed operand
    GraphBuilder b;
    int x = b.input("x", DType::f32, {96, 80});
    int r = b.input("r", DType::f32, {80});
    int t = b.input("t", DType::f32, {80, 96});
    int tt = b.op("Transpose", {t}, {{"perm", std::vector<int64_t>{1, 0}}});
    b.output(b.op("Sigmoid", {b.op("Add", {b.op("Mul", {x, r}), tt})}));
    const Graph g = finish(b);
    EXPECT_GE(check(g, {random_f32({96, 80}, 10), random_f32({80}, 11), random_f32({80, 96}, 12)}, 1e-6), 1);
  }
  {  // row kernels (softmax over rows of 300) split along rows
    GraphBuilder b;
    int x = b.input("x", DType::f32, {4, 64, 300});
    b.output(b.op("Softmax", {x}, {{"axis", int64_t{-1}}}));
    const Graph g = finish(b);
    EXPECT_GE(check(g, {random_f32({4, 64, 300}, 13)}), 1);
  }
  {  // batched MatMul: run-time [K, N] weights (12 KiB per batch) split along batch, a 17.5 KiB
     // activation per batch along M
    GraphBuilder b;
    int a = b.input("a", DType::f32, {3, 70, 64});
    int w = b.input("w", DType::f32, {3, 64, 48});
    b.output(b.op("Relu", {b.op("MatMul", {a, w})}));
    const Graph g = finish(b);
    EXPECT_GE(check(g, {random_f32({3, 70, 64}, 14), random_f32({3, 64, 48}, 15)}), 1);
  }
  {  // Gemm, transB=1 weight [200, 96] (75 KiB) + bias at batch 4 (GEMV-shaped) and batch 40
    for (int64_t m : {4, 40}) {
      GraphBuilder b;
      int x = b.input("x", DType::f32, {m, 96});
      int w = b.constant("w", random_f32({200, 96}, 16));
      int bias = b.constant("bias", random_f32({200}, 17));
      b.output(b.op("Gemm", {x, w, bias}, {{"transB", int64_t{1}}}));
      const Graph g = finish(b);
      EXPECT_GE(check(g, {random_f32({m, 96}, 18)}), 1) << "m = " << m;
    }
  }
  {  // MatMul with a [K, N] row-major constant (uploaded transposed, then split along N)
    GraphBuilder b;
    int x = b.input("x", DType::f32, {2, 128});
    int w = b.constant("w", random_f32({128, 160}, 19));
    b.output(b.op("MatMul", {x, w}));
    const Graph g = finish(b);
    EXPECT_GE(check(g, {random_f32({2, 128}, 20)}), 1);
  }
}

// A kernel with a fused Gather (a gathered load) splits into windows like any loop kernel: its
// output (3000 x 4 fp32, 48 KB) is wider than a 16 KiB limit, its table fits whole. The pieces
// give ref's values, and an index outside the table is still the Gather's error from a piece
// (the status word names the kernel, not the piece).
TEST_F(VulkanBigBuffers, KernelsWithAFusedGatherSplitIntoWindows) {
  LimitOverride limit(16 * 1024);
  GraphBuilder b;
  const int x = b.input("x", DType::f32, {3000, 4});
  const int idx = b.input("idx", DType::i64, {1});
  b.output(b.op("Add", {x, b.op("Gather", {b.constant("table", random_f32({10, 4}, 41)), idx}, {{"axis", int64_t{0}}})}));
  const Graph g = finish(b);
  const Plan p = build_plan(g);
  ASSERT_EQ(p.kernels.size(), 1u);  // the lookup is read by the Add's kernel
  Tensor ids(DType::i64, {1});
  ids.set_int(0, -3);
  EXPECT_GE(check(g, {random_f32({3000, 4}, 42), ids}, 0.0), 1) << "the output exceeds the limit but was not split";
  ids.set_int(0, 10);
  try {
    vk_->compile(g, {})->run({random_f32({3000, 4}, 42), ids});
    ADD_FAILURE() << "an index outside the table ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(Gather): index out of range"), std::string::npos) << e.what();
  }
}

// Kernels that cannot be split but only read a too-wide buffer bind it in banks (vk_windows.h):
// an opaque Gather over a 25 KiB table (an embedding lookup, indices spread over every bank),
// and a Gather along axis 1 of a wide run-time input, under a 16 KiB limit, match
// ref bit for bit (a copy is exact). Validation layer on: each bank is its own descriptor.
TEST_F(VulkanBigBuffers, UnsplittableKernelsReadWideBuffersInBanks) {
  LimitOverride limit(16 * 1024);
  auto exact = [&](const Graph& g, const std::vector<Tensor>& inputs) {
    std::vector<Tensor> got = vk_->compile(g, {})->run(inputs);
    std::vector<Tensor> want = make_backend("ref")->compile(g, {})->run(inputs);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].shape(), want[i].shape());
      ASSERT_GT(want[i].numel(), 0);
      for (int64_t e = 0; e < want[i].numel(); ++e) ASSERT_EQ(got[i].get(e), want[i].get(e)) << "output " << i << " element " << e;
    }
  };
  {  // table of 100 x 64 fp32 (25.6 KB: two banks), indices in both
    GraphBuilder b;
    int table = b.constant("table", random_f32({100, 64}, 31));
    int idx = b.input("idx", DType::i64, {3, 5});
    b.output(b.op("Gather", {table, idx}, {{"axis", int64_t{0}}}));
    Tensor ids(DType::i64, {3, 5});
    for (int64_t i = 0; i < 15; ++i) ids.set_int(i, (i * 37 + 11) % 100 - (i % 4 == 0 ? 100 : 0));  // some negative
    exact(finish(b), {ids});
  }
  {  // a run-time [8, 1500] input (48 KB: three banks, the last partial) gathered along axis 1
    GraphBuilder b;
    int x = b.input("x", DType::f32, {8, 1500});
    Tensor ids(DType::i64, {4});
    for (int64_t i = 0; i < 4; ++i) ids.set_int(i, 1499 - i * 433);
    b.output(b.op("Gather", {x, b.constant("idx", ids)}, {{"axis", int64_t{1}}}));
    exact(finish(b), {random_f32({8, 1500}, 32)});
  }
}

// One-byte elements and two banked slots in one kernel: GatherElements over int8 data [3000]
// with int64 indices [400] (3.2 KB) under a 1 KiB limit (3 + 4 banks, after the status word).
TEST_F(VulkanBigBuffers, OneByteElementsAndTwoBankedSlots) {
  LimitOverride limit(1024);
  GraphBuilder b;
  int data = b.input("data", DType::i8, {3000});
  int idx = b.input("idx", DType::i64, {400});
  b.output(b.op("GatherElements", {data, idx}, {{"axis", int64_t{0}}}));
  const Graph g = finish(b);
  Tensor d(DType::i8, {3000}), ids(DType::i64, {400});
  for (int64_t i = 0; i < 3000; ++i) d.set_int(i, static_cast<int64_t>((i * 7919) % 255) - 127);
  for (int64_t i = 0; i < 400; ++i) ids.set_int(i, (i * 2654435761LL) % 3000 - (i % 3 == 0 ? 3000 : 0));
  std::vector<Tensor> got = vk_->compile(g, {})->run({d, ids});
  std::vector<Tensor> want = make_backend("ref")->compile(g, {})->run({d, ids});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].shape(), want[0].shape());
  for (int64_t e = 0; e < 400; ++e) ASSERT_EQ(got[0].get(e), want[0].get(e)) << "element " << e;
}

// A node with no Vulkan kernel whose buffers are also wider than the limit goes to the host
// (compile_with_fallback), as without the limit: the size error must not hide the Unsupported.
TEST_F(VulkanBigBuffers, SizeLimitDoesNotHideAnOpForTheHost) {
  LimitOverride limit(256);  // the trace's input would need 57 banks: more bindings than lavapipe's 32
  GraphBuilder b;
  int x = b.input("x", DType::f32, {60, 60});  // 14.4 KB; Einsum's trace has no GPU kernel
  b.output(b.op("Relu", {b.op("Einsum", {b.op("Neg", {x})}, {{"equation", std::string("ii->")}})}));
  const Graph g = finish(b);
  const std::vector<Tensor> inputs{random_f32({60, 60}, 41)};
  CompileOptions opts;
  opts.fallback = true;
  auto exe = compile_with_fallback(*vk_, g, opts);
  ASSERT_EQ(graph_breaks(*exe).size(), 1u);
  EXPECT_EQ(graph_breaks(*exe)[0].op, "Einsum");
  std::vector<Tensor> got = exe->run(inputs);
  std::vector<Tensor> want = make_backend("ref")->compile(g, {})->run(inputs);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].shape(), want[0].shape());
  ASSERT_GT(want[0].numel(), 0);
  for (int64_t e = 0; e < want[0].numel(); ++e) ASSERT_EQ(got[0].get(e), want[0].get(e)) << "element " << e;
}

// A too-wide buffer that such a kernel writes gives one clear error naming the limit, not a
// crash; so does a run-time [K, N] weight wider than the limit per batch (no N-window of that
// layout is narrower than the whole).
TEST_F(VulkanBigBuffers, UnsplittableKernelNamesTheLimit) {
  LimitOverride limit(16 * 1024);
  auto expect_limit_error = [&](const Graph& g, const std::string& what) {
    try {
      vk_->compile(g, {});
      ADD_FAILURE() << what << ": expected an error naming maxStorageBufferRange";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_EQ(m.rfind("[vulkan] kernel '", 0), 0u) << m;
      EXPECT_NE(m.find("maxStorageBufferRange (16384 bytes)"), std::string::npos) << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
  };
  {  // the Gather's output (200 x 64 fp32, 51 KB) is wider than the limit
    GraphBuilder b;
    int table = b.input("table", DType::f32, {10, 64});
    Tensor idx(DType::i64, {200});
    for (int64_t i = 0; i < 200; ++i) idx.set_int(i, i % 10);
    b.output(b.op("Gather", {table, b.constant("idx", idx)}, {{"axis", int64_t{0}}}));
    const Graph g = finish(b);
    // The opaque Gather kernel (FUSOR_GATHER_FUSION=0) cannot be split: the error. Fused (the
    // default) it is a loop kernel with a gathered load, which splits and runs.
    setenv("FUSOR_GATHER_FUSION", "0", 1);
    expect_limit_error(g, "Gather");
    unsetenv("FUSOR_GATHER_FUSION");
    EXPECT_GE(check(g, {random_f32({10, 64}, 43)}, 0.0), 1);
  }
  {
    GraphBuilder b;
    int a = b.input("a", DType::f32, {2, 64});
    int w = b.input("w", DType::f32, {64, 90});
    b.output(b.op("MatMul", {a, w}));
    expect_limit_error(finish(b), "MatMul");
  }
}

}  // namespace
}  // namespace fusor

namespace fusor {
namespace {

// Red-team round 9 (F12): x [0, 2^40, 16] holds no element, but the MatMul kernel's index math
// held 2^40, which no 32-bit index fits, so vulkan refused ("constant 1099511627776 does not
// fit") a run ref and cpu answer with empty outputs. Kernels whose every output is empty now get
// no source and no dispatch; a non-empty output beside them still runs and is right.
TEST_F(VulkanBigBuffers, EmptyInputWithAHugeDimNeedsNoKernel) {
  for (int64_t big : {int64_t{1} << 40, int64_t{1} << 33, int64_t{5}}) {
    GraphBuilder b("empty_huge", 17);
    const int x = b.input("x", DType::f32, {0, big, 16});
    const int z = b.input("z", DType::f32, {3, 4});
    const int y = b.op("Softmax", {b.op("MatMul", {x, b.constant("w", random_f32({16, 8}, 3))})}, {{"axis", int64_t{-1}}});
    b.output(y);
    b.output(b.op("ReduceMax", {y}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{1}}}));
    b.output(b.op("Relu", {z}));
    const Graph g = finish(b);
    const std::vector<Tensor> in{Tensor(DType::f32, {0, big, 16}), random_f32({3, 4}, 4)};
    auto exe = vk_->compile(g, {});
    const std::vector<Tensor> got = exe->run(in);
    const std::vector<Tensor> want = make_backend("ref")->compile(g, {})->run(in);
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0].shape(), (Shape{0, big, 8}));
    EXPECT_EQ(got[1].shape(), (Shape{0, 1, 8}));
    for (size_t i = 0; i < 3; ++i) {
      ASSERT_EQ(got[i].shape(), want[i].shape()) << "output " << i;
      EXPECT_EQ(max_rel_error(got[i], want[i]), 0) << "output " << i;
    }
    EXPECT_EQ(exe->kernel_count(), 1) << "only the Relu writes anything (big = " << big << ")";
  }
}

}  // namespace
}  // namespace fusor

namespace fusor {
namespace {

// Every kernel binds only the window of each buffer it touches (vk_windows.h narrowed): the
// kernels writing a fused Concat's parts bind disjoint ranges, so the recorder puts no barrier
// between them (squeezenet1_1's fire modules: 30 -> 22 barriers), and the synchronization
// validation layer (this fixture) sees no hazard between them either. The values against ref,
// and the same plan with whole bindings (FUSOR_VK_NARROW_BINDINGS=0) for the barrier count.
TEST_F(VulkanBigBuffers, ConcatWritersBindDisjointWindowsWithoutBarriers) {
  GraphBuilder b;
  // Parts of 128 floats: 512 bytes, a multiple of every allowed minStorageBufferOffsetAlignment,
  // so no part's binding starts inside its neighbour's.
  const int x = b.input("x", DType::f32, {1, 128});
  std::vector<int> parts;
  for (int i = 0; i < 6; ++i) {
    const int c = b.constant("c" + std::to_string(i), random_f32({1, 128}, 60 + i));
    parts.push_back(b.op(i % 2 ? "Mul" : "Add", {b.op("Tanh", {x}), c}));
  }
  b.output(b.op("Relu", {b.op("Concat", parts, {{"axis", int64_t{0}}})}));
  const Graph g = finish(b);
  const std::vector<Tensor> in{random_f32({1, 128}, 59)};
  const std::vector<Tensor> want = make_backend("ref")->compile(g, {})->run(in);
  for (const char* narrow : {"1", "0"}) {
    SCOPED_TRACE(std::string("FUSOR_VK_NARROW_BINDINGS=") + narrow);
    setenv("FUSOR_VK_NARROW_BINDINGS", narrow, 1);
    auto exe = vk_->compile(g, {});
    unsetenv("FUSOR_VK_NARROW_BINDINGS");
    const std::vector<Tensor> got = exe->run(in);
    EXPECT_LE(max_rel_error(got[0], want[0]), 1e-6);
    const std::string notes = exe->notes();
    const size_t at = notes.find(" dispatches, ");
    ASSERT_NE(at, std::string::npos) << notes;
    const int dispatches = std::stoi(notes.substr(notes.rfind(' ', at - 1) + 1));
    const int barriers = std::stoi(notes.substr(at + 13));
    // The six writers, then whatever reads their whole output after one barrier.
    ASSERT_GE(dispatches, 6) << notes;
    if (std::string(narrow) == "1") EXPECT_EQ(barriers, dispatches - 6) << notes;
    else EXPECT_GE(barriers, dispatches - 1) << notes;
  }
}

}  // namespace
}  // namespace fusor
