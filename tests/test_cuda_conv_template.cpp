// The CUDA split-K implicit-GEMM convolution template (backends/cuda/cuda_conv_template.cpp):
// its tiles and splits, which convs the default policy keeps off cuDNN, every case's kernel
// compiled with NVRTC (no GPU needed; these cannot check values), and on a GPU each case
// against ref, replayed and eager, run twice (same bits: the slices add in a fixed order) and
// through poisoned caller buffers (a split-K counter left non-zero would skip the epilogue of
// the next launch and leave the poison).
#ifdef FUSOR_HAVE_CUDA
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_conv.h"
#include "cuda_device_check.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

using Ints = std::vector<int64_t>;
DType g_dtype = DType::f32;

struct TemplateCase {
  std::string name;
  Shape x, w;
  GraphBuilder::Attrs attrs;
  bool bias_relu = false;  // + bias, Relu (the generated epilogue)
  bool residual = false;   // + a second input of the output's shape
  DType dtype = DType::f32;
};

std::vector<TemplateCase> template_cases() {
  return {
      {"resnet_layer4_b1_split", {1, 512, 7, 7}, {512, 512, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, true},
      {"resnet_layer1_b1", {1, 64, 56, 56}, {64, 64, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, false, true},
      {"stride2_odd", {1, 48, 17, 19}, {40, 48, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}}, true},
      {"asymmetric_pads", {1, 32, 15, 15}, {24, 32, 3, 3}, {{"pads", Ints{0, 1, 2, 1}}}},
      {"dilated_rect_kernel", {2, 16, 20, 18}, {33, 16, 3, 5}, {{"pads", Ints{2, 4, 2, 4}}, {"dilations", Ints{2, 2}}}},
      {"grouped", {1, 64, 14, 14}, {96, 16, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}, {"group", int64_t{4}}}, true},
      {"pointwise_few_columns", {1, 576, 1, 1}, {144, 576, 1, 1}, {}, true},
      {"pointwise_b32", {32, 24, 7, 7}, {10, 24, 1, 1}, {}},
      {"depthwise_direct", {1, 32, 9, 9}, {32, 1, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}, {"group", int64_t{32}}}},
      {"f16_split_bias", {1, 256, 7, 7}, {128, 256, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, true, false, DType::f16},
      {"bf16_residual", {1, 32, 12, 12}, {32, 32, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, false, true, DType::bf16},
  };
}

std::pair<Graph, std::vector<Tensor>> build(const TemplateCase& tc, uint64_t seed) {
  return build_typed_case(
      [&](GraphBuilder& b) {
        std::vector<int> ins{b.input("x", g_dtype, tc.x), b.constant("w", testing::random_tensor(g_dtype, tc.w, seed + 100))};
        if (tc.bias_relu) ins.push_back(b.constant("bias", testing::random_tensor(g_dtype, {tc.w[0]}, seed + 101)));
        int y = b.op("Conv", ins, tc.attrs);
        if (tc.bias_relu) y = b.op("Relu", {y});
        if (tc.residual) y = b.op("Add", {y, b.input("r", g_dtype, {tc.x[0], tc.w[0], tc.x[2], tc.x[3]})});
        b.output(y);
      },
      tc.dtype, g_dtype, seed);
}

const KernelSpec& conv_of(const Plan& p) {
  for (auto& k : p.kernels)
    if (k.conv) return k;
  throw Error("test", "no conv kernel");
}

struct Policy {
  explicit Policy(const char* v) { v ? ::setenv("FUSOR_CUDA_CONV", v, 1) : ::unsetenv("FUSOR_CUDA_CONV"); }
  ~Policy() { ::unsetenv("FUSOR_CUDA_CONV"); }
};

ConvDesc desc(int64_t n, int64_t c, int64_t hw, int64_t k, int64_t rs, int64_t groups = 1) {
  ConvDesc d;
  d.n = n, d.c = c, d.h = d.w = hw, d.k = k, d.r = d.s = rs, d.oh = d.ow = hw, d.groups = groups;
  d.pad_h = d.pad_w = rs / 2;
  return d;
}

TEST(CudaConvTemplate, TilesAndSplits) {
  // resnet18's last 3x3 layer at batch 1: 8 tiles of K = 4608, split in 18 slices of 256.
  CudaConvTiles t = cuda_conv_tiles(desc(1, 512, 7, 512, 3));
  EXPECT_FALSE(t.direct);
  EXPECT_EQ(t.bm, 64);
  EXPECT_EQ(t.bn, 64);
  EXPECT_EQ(t.tiles, 8);
  EXPECT_EQ(t.splits, 18);
  EXPECT_EQ(t.chunk, 256);
  // Many tiles: no split, whole K.
  t = cuda_conv_tiles(desc(32, 64, 56, 64, 3));
  EXPECT_EQ(t.splits, 1);
  EXPECT_EQ(t.chunk, 64 * 9);
  EXPECT_EQ(t.tiles, 1568);
  // Short K, few tiles: smaller tiles instead (16 output channels -> 16 rows).
  t = cuda_conv_tiles(desc(1, 16, 8, 16, 3));
  EXPECT_EQ(t.splits, 1);
  EXPECT_EQ(t.bm, 16);
  EXPECT_EQ(t.bn, 16);
  EXPECT_EQ(t.tiles, 4);
  // Depthwise and tiny reductions: the direct loop.
  EXPECT_TRUE(cuda_conv_tiles(desc(1, 32, 9, 32, 3, 32)).direct);
  EXPECT_TRUE(cuda_conv_tiles(desc(1, 3, 9, 8, 1)).direct);
  int64_t work = 7;
  EXPECT_EQ(cuda_conv_config(desc(1, 32, 9, 32, 3, 32), work), "#define FZ_CV_DIRECT 1\n");
  EXPECT_EQ(work, 7);
  const std::string s = cuda_conv_config(desc(1, 512, 7, 512, 3), work);
  EXPECT_EQ(work, 8 * 18);
  EXPECT_NE(s.find("#define FZ_SPLITS 18\n#define FZ_KCHUNK 256\n"), std::string::npos) << s;
}

TEST(CudaConvTemplate, DefaultPolicyKeepsFewTileLayersOffCudnn) {
  Policy dflt(nullptr);
  // fp16 keeps cuDNN (tensor cores; the policy was measured in fp32), and so do convs the
  // template would run on its direct loop (2 channels per group).
  for (DType t : {DType::f16, DType::bf16}) {
    TemplateCase tc{"half", {1, 64, 28, 28}, {128, 64, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, false, false, t};
    auto [g, inputs] = build(tc, 1);
    Plan p = build_plan(g);
    EXPECT_TRUE(cuda_library_conv(conv_of(p), p).has_value()) << dtype_name(t);
  }
  {
    TemplateCase tc{"narrow_groups", {1, 128, 28, 28}, {128, 2, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}, {"group", int64_t{64}}}};
    auto [g, inputs] = build(tc, 1);
    Plan p = build_plan(g);
    EXPECT_TRUE(cuda_conv_tiles(*conv_of(p).conv).direct);
    EXPECT_TRUE(cuda_library_conv(conv_of(p), p).has_value());
  }
  for (auto& [n, keep] : std::vector<std::pair<int64_t, bool>>{{1, true}, {8, true}, {64, false}}) {
    // 128 channels on 28 x 28: 2 x 13 tiles at batch 1 (few tiles), 2 x 98 at batch 8 (0.46
    // G multiply-adds: small), 2 x 784 and 3.7 G multiply-adds at batch 64 (cuDNN).
    TemplateCase tc{"policy", {n, 64, 28, 28}, {128, 64, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}}};
    auto [g, inputs] = build(tc, 1);
    Plan p = build_plan(g);
    EXPECT_EQ(cuda_library_conv(conv_of(p), p).has_value(), !keep) << "batch " << n;
  }
}

TEST(CudaConvTemplate, EveryCaseCompiles) {
  Policy forced("template");
  for (auto& tc : template_cases()) {
    SCOPED_TRACE(tc.name);
    auto [g, inputs] = build(tc, 2);
    Plan p = build_plan(g);
    const KernelSpec& k = conv_of(p);
    const std::string src = cuda_kernel_source(k, p, nullptr);
    const bool direct = cuda_conv_tiles(*k.conv).direct;
    EXPECT_NE(src.find(direct ? "#define FZ_CV_DIRECT 1" : "#define FZ_CV_DIRECT 0"), std::string::npos);
    EXPECT_NO_THROW(nvrtc_compile_check(src, kernel_identifier(k.name)));
  }
}

TEST(CudaConvTemplate, MatchesReferenceOnDevice) {
  if (make_backend("cuda")->devices().empty()) GTEST_SKIP() << "no CUDA device";
  Policy forced("template");
  for (auto& tc : template_cases()) {
    SCOPED_TRACE(tc.name);
    auto [g, inputs] = build(tc, 3);
    const Tensor want = run_on_backend("ref", g, inputs)[0];
    // fp32: summation order only; fp16 / bf16: plus the output's rounding.
    const double tol = tc.dtype == DType::f32 ? 1e-6 : tc.dtype == DType::f16 ? 1e-3 : 8e-3;
    for (bool replay : {true, false}) {
      CompileOptions o;
      o.replay = replay;
      auto exe = make_backend("cuda")->compile(g, o);
      EXPECT_NE(exe->notes().find("cuDNN: 0 of 1"), std::string::npos) << exe->notes();
      const Tensor first = exe->run(inputs)[0];
      ASSERT_EQ(first.dtype(), want.dtype());
      EXPECT_LE(relative_l2(first, want), tol) << (replay ? "replay" : "eager");
      // Split-K partials are added in slice order: the same bits on every run.
      const Tensor again = exe->run(inputs)[0];
      ASSERT_EQ(first.nbytes(), again.nbytes());
      EXPECT_EQ(std::memcmp(first.raw(), again.raw(), first.nbytes()), 0) << "second run differs";
      expect_run_device_matches(*exe, inputs, want, tol);
    }
  }
}

// A grid-stride loop steps by groups * group_size (x unroll): CUDA's 2^20 groups of 256 x 4
// step by 2^30, so a kernel of 1.5e9 elements (under the 32-bit element limit) must still index
// in 64 bits, as must a depthwise conv of 2e9 outputs on the direct loop; a small one stays 32-bit.
TEST(CudaConvTemplate, GridStrideStepsPickTheIndexWidth) {
  const auto source_of = [](const std::function<void(GraphBuilder&)>& make) {
    GraphBuilder b;
    make(b);
    Graph g = b.build();
    make_static(g, {});
    Plan p = build_plan(g);
    return cuda_kernel_source(p.kernels.back(), p, nullptr);
  };
  const auto relu = [&](int64_t n) { return source_of([n](GraphBuilder& b) { b.output(b.op("Relu", {b.input("x", DType::f32, {n})})); }); };
  EXPECT_NE(relu(1500000000).find("#define fz_idx fz_i64"), std::string::npos);
  EXPECT_NE(relu(1 << 20).find("#define fz_idx int"), std::string::npos);
  Policy forced("template");
  const std::string dw = source_of([](GraphBuilder& b) {
    b.output(b.op("Conv", {b.input("x", DType::f32, {1, 480, 2048, 2048}), b.constant("w", testing::random_tensor(DType::f32, {480, 1, 3, 3}, 1))},
                  {{"pads", Ints{1, 1, 1, 1}}, {"group", int64_t{480}}}));
  });
  EXPECT_NE(dw.find("#define FZ_CV_DIRECT 1"), std::string::npos);
  EXPECT_NE(dw.find("#define fz_idx fz_i64"), std::string::npos);
}

}  // namespace
}  // namespace fusor
#endif
