// Identical kernels compile once on Vulkan. A transformer's layers give kernels that differ only
// by their name (and the buffers they bind); the GLSL no longer carries the name (the entry
// point is main), so each distinct kernel is one shaderc compile, one disk-cache entry and one
// vkCreateComputePipelines. GPT-2 2L had 21 pipelines for 21 kernels before (16 after); on the
// H200 each cold pipeline cost about 5 s of driver compile. The results must still match the
// reference, every layer with its own weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "backends/backend.h"
#include "backends/vulkan/vulkan_backend.h"
#include "frontend/builder.h"
#include "ir/kernel_spec.h"
#include "ir/passes.h"
#include "test_util.h"
#include "vulkan_fixture.h"

namespace fusor {
namespace {

using testing::random_tensor;

class VulkanCompileDedup : public testing::ValidatedVulkanTest {};

TEST_F(VulkanCompileDedup, RepeatedLayersShareOnePipelinePerDistinctKernel) {
  setenv("FUSOR_NO_DISK_CACHE", "1", 1);  // every pipeline really compiles
  // Each layer its own kernels: a row product would give the next layer's MatMul to this
  // layer's Softmax kernel (the last layer's Softmax then stands alone).
  testing::ScopedEnv own_kernels("FUSOR_ROW_PRODUCT", "0");
  constexpr int kLayers = 3;
  // kWidth > kMaxInlineDotK: each MatMul stays its own kernel even with FUSOR_INLINE_DOT=1 (a
  // shorter K would then be computed inside the Softmax's row kernel).
  constexpr int64_t kRows = 40, kWidth = 288;
  GraphBuilder b;
  int h = b.input("x", DType::f32, {kRows, kWidth});
  for (int l = 0; l < kLayers; ++l) {
    const uint32_t seed = 100 + 10 * static_cast<uint32_t>(l);
    // MatMul + bias + Relu (an output fusion), then Softmax over the row (an input fusion).
    const int w = b.constant("w" + std::to_string(l), random_tensor(DType::f32, {kWidth, kWidth}, seed));
    const int bias = b.constant("b" + std::to_string(l), random_tensor(DType::f32, {kWidth}, seed + 1));
    h = b.op("Relu", {b.op("Add", {b.op("MatMul", {h, w}), bias})});
    h = b.op("Softmax", {h}, {{"axis", int64_t{-1}}});
  }
  b.output(h);
  Graph g = b.build();
  make_static(g, {});
  const std::vector<Tensor> in = {random_tensor(DType::f32, {kRows, kWidth}, 7)};

  auto exe = vk_->compile(g, {});
  unsetenv("FUSOR_NO_DISK_CACHE");
  const int kernels = exe->kernel_count(), pipelines = vulkan_pipeline_count(*exe);
  ASSERT_EQ(kernels % kLayers, 0) << exe->notes();
  // Each layer's kernels are the first layer's: one pipeline per kernel of one layer.
  EXPECT_EQ(pipelines, kernels / kLayers) << kernels << " kernels";
  EXPECT_GE(pipelines, 2);  // the matmul and the softmax stay distinct kernels

  const std::vector<Tensor> got = exe->run(in), want = make_backend("ref")->compile(g, {})->run(in);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].shape(), want[0].shape());
  // Contractions and row reductions: DESIGN.md's 1e-5 relative in fp32.
  const CompareResult c = compare_tensors(got[0], want[0], 1e-5, 1e-6);
  EXPECT_TRUE(c.ok) << c.message;
}

// A Concat of many inputs is one copy kernel per piece, and a Split one per output: kernels that
// differ only in their offsets. They read the offsets as push constants and share one pipeline
// (before: one shaderc compile and one pipeline per piece, 30,000 pieces past a minute on
// lavapipe). Pieces along axis 1 are strided, some with a fused Relu / Neg producer; every
// output must be the reference's, bit for bit (copies and sign flips are exact).
TEST_F(VulkanCompileDedup, ConcatAndSplitPiecesShareOnePipeline) {
  constexpr int kPieces = 40;
  GraphBuilder b;
  std::vector<int> parts;
  std::vector<Tensor> in;
  for (int i = 0; i < kPieces; ++i) {
    const int x = b.input("x" + std::to_string(i), DType::f32, {2, 3});
    in.push_back(random_tensor(DType::f32, {2, 3}, 300 + static_cast<uint64_t>(i)));
    parts.push_back(i % 4 == 3 ? b.op("Relu", {x}) : x);
  }
  const int cat = b.op("Concat", parts, {{"axis", int64_t{1}}});  // [2, 120]
  b.output(cat);
  const int y = b.input("y", DType::f32, {2, 3 * kPieces});
  in.push_back(random_tensor(DType::f32, {2, 3 * kPieces}, 299));
  std::vector<int64_t> sizes(kPieces, 3);
  const int split_sizes = b.constant("sizes", testing::ints_of({kPieces}, sizes));
  for (int s : b.op_multi("Split", {y, split_sizes}, {{"axis", int64_t{1}}}, kPieces)) b.output(b.op("Neg", {s}));
  Graph g = b.build();
  make_static(g, {});

  auto exe = vk_->compile(g, {});
  const int kernels = exe->kernel_count(), pipelines = vulkan_pipeline_count(*exe);
  EXPECT_GE(kernels, 2 * kPieces) << exe->notes();
  // Concat copies, Concat Relu pieces, Split Neg pieces: a few shapes of code, not one per piece.
  EXPECT_LE(pipelines, 4) << kernels << " kernels";

  const std::vector<Tensor> got = exe->run(in), want = make_backend("ref")->compile(g, {})->run(in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(got[k].shape(), want[k].shape()) << "output " << k;
    EXPECT_EQ(0, std::memcmp(got[k].raw(), want[k].raw(), want[k].nbytes())) << "output " << k;
  }
}

// The pieces' offsets pushed as constants while their buffers are wider than
// maxStorageBufferRange (lowered here): each piece binds a window of the Split input / Concat
// output, and its pushed offsets must be the windowed piece's, not the whole kernel's.
TEST_F(VulkanCompileDedup, SharedPiecesOverWindowedBuffers) {
  constexpr int kPieces = 24;
  constexpr int64_t kPiece = 2048;  // 8 KiB of fp32 per piece, a 4 KiB storage range: each piece splits
  setenv("FUSOR_VK_MAX_STORAGE_RANGE", "4096", 1);
  GraphBuilder b;
  const int y = b.input("y", DType::f32, {kPieces * kPiece});
  std::vector<Tensor> in = {random_tensor(DType::f32, {kPieces * kPiece}, 501)};
  const int split_sizes = b.constant("sizes", testing::ints_of({kPieces}, std::vector<int64_t>(kPieces, kPiece)));
  std::vector<int> negs;
  for (int s : b.op_multi("Split", {y, split_sizes}, {{"axis", int64_t{0}}}, kPieces)) negs.push_back(b.op("Neg", {s}));
  std::reverse(negs.begin(), negs.end());
  b.output(b.op("Concat", negs, {{"axis", int64_t{0}}}));
  Graph g = b.build();
  make_static(g, {});
  auto exe = vk_->compile(g, {});
  unsetenv("FUSOR_VK_MAX_STORAGE_RANGE");
  // Windowing added dispatches, and the pieces still share a few pipelines.
  EXPECT_GT(exe->kernel_count(), static_cast<int>(build_plan(g).kernels.size())) << exe->notes();
  EXPECT_LE(vulkan_pipeline_count(*exe), 4) << exe->kernel_count() << " kernels";
  const std::vector<Tensor> got = exe->run(in), want = make_backend("ref")->compile(g, {})->run(in);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].shape(), want[0].shape());
  EXPECT_EQ(0, std::memcmp(got[0].raw(), want[0].raw(), want[0].nbytes())) << exe->notes();
}

// Pieces with more views than the 32 pushed offsets (maxPushConstantsSize's 128-byte minimum):
// each Split piece summed with 35 other inputs (one kernel of 37 views per piece); views past
// the 32nd keep literal offsets, the rest are pushed. Sums of the same inputs in the same order
// match ref within fp32 rounding.
TEST_F(VulkanCompileDedup, SharedPiecesWithMoreViewsThanPushedOffsets) {
  constexpr int kPieces = 10, kOthers = 35;
  GraphBuilder b;
  std::vector<Tensor> in;
  const int y = b.input("y", DType::f32, {2, 4 * kPieces});
  in.push_back(random_tensor(DType::f32, {2, 4 * kPieces}, 700));
  std::vector<int> others;
  for (int j = 0; j < kOthers; ++j) {
    others.push_back(b.input("o" + std::to_string(j), DType::f32, {2, 4}));
    in.push_back(random_tensor(DType::f32, {2, 4}, 701 + static_cast<uint64_t>(j)));
  }
  const int split_sizes = b.constant("sizes", testing::ints_of({kPieces}, std::vector<int64_t>(kPieces, 4)));
  for (int s : b.op_multi("Split", {y, split_sizes}, {{"axis", int64_t{1}}}, kPieces)) {
    std::vector<int> terms = {s};
    terms.insert(terms.end(), others.begin(), others.end());
    b.output(b.op("Sum", terms));
  }
  Graph g = b.build();
  make_static(g, {});
  auto exe = vk_->compile(g, {});
  EXPECT_LT(vulkan_pipeline_count(*exe), kPieces) << exe->kernel_count() << " kernels";
  const std::vector<Tensor> got = exe->run(in), want = make_backend("ref")->compile(g, {})->run(in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    const CompareResult c = compare_tensors(got[k], want[k], 1e-5, 1e-6);
    EXPECT_TRUE(c.ok) << "output " << k << ": " << c.message;
  }
}

}  // namespace
}  // namespace fusor
