// Register-resident row kernels read and write fp32 rows 4 elements at a time on Vulkan
// (Dialect::row_vector_ok, codegen.cpp choose_row_vectors): each thread owns groups of 4
// consecutive row elements, loaded and stored as vec4 through a second, 4-wide declaration of
// the binding. A view qualifies only when every group is contiguous and 16-byte aligned; the
// others keep scalar accesses in the same kernel. Checked here: which views the source makes
// 4-wide, and the values against `ref` (seeded random inputs, poisoned outputs are replaced by
// the run), with the vector path on and off (FUSOR_VK_ROW_VEC4=0).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "backends/backend.h"
#include "backends/codegen.h"
#include "backends/vulkan/vk_device.h"
#include "backends/vulkan/vk_dialect.h"
#include "frontend/builder.h"
#include "ir/kernel_spec.h"
#include "ir/passes.h"
#include "test_util.h"

namespace fusor {
namespace {
using testing::ints_of;
using testing::random_tensor;

class VulkanRowVec : public ::testing::Test {
 protected:
  void SetUp() override {
    vk_ = make_backend("vulkan");
    if (vk_->devices().empty()) GTEST_SKIP() << "no Vulkan device (install mesa-vulkan-drivers for lavapipe)";
    info_ = vk::Instance::get()->devices()[0];
    if (info_.min_storage_offset_alignment == 0 || info_.min_storage_offset_alignment % 16 != 0)
      GTEST_SKIP() << "device '" << info_.name << "' binds storage buffers at " << info_.min_storage_offset_alignment
                   << "-byte offsets: no 4-wide rows";
  }
  // The row kernel's source (the plan's only kernel with a reduction).
  std::string row_source(const Graph& g) {
    Plan p = build_plan(g);
    for (const KernelSpec& k : p.kernels)
      if (!k.reduce_axes.empty()) {
        vk::VulkanDialect d(info_, k, std::vector<int64_t>(kernel_bindings(k).size(), 0), &p);
        return emit_kernel(k, p, d);
      }
    ADD_FAILURE() << "no row kernel in the plan";
    return "";
  }
  // Runs g on vulkan (vector rows on, then off) and on ref; every output within `rtol`.
  void check_values(const Graph& g, const std::vector<Tensor>& in, double rtol, double atol = 1e-7) {
    auto want = make_backend("ref")->compile(g, {})->run(in);
    for (const char* off : {"", "0"}) {
      if (*off) setenv("FUSOR_VK_ROW_VEC4", off, 1);
      auto got = vk_->compile(g, {})->run(in);
      unsetenv("FUSOR_VK_ROW_VEC4");
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        CompareResult c = compare_tensors(got[i], want[i], rtol, atol);
        EXPECT_TRUE(c.ok) << "output " << i << (*off ? " (vector rows off)" : " (vector rows on)") << ": " << c.message;
      }
    }
  }
  std::unique_ptr<Backend> vk_;
  vk::PhysicalDeviceInfo info_;
};

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// Softmax over rows of 2048: input and output both 4-wide, values as ref's.
TEST_F(VulkanRowVec, SoftmaxReadsAndWritesFourWide) {
  GraphBuilder gb;
  int x = gb.input("x", DType::f32, {37, 2048});
  gb.output(gb.op("Softmax", {x}, {{"axis", int64_t{-1}}}));
  Graph g = gb.build();
  make_static(g, {});
  const std::string src = row_source(g);
  EXPECT_GT(count(src, "b0r.d["), 0) << src;
  EXPECT_GT(count(src, "b1r.d["), 0) << src;
  EXPECT_NE(src.find("(fz_t & 3) == 3"), std::string::npos) << "the group's last element stores the vector";
  check_values(g, {random_tensor(DType::f32, {37, 2048}, 11, -4.0, 4.0)}, 2e-6);
}

// LayerNormalization with scale and bias: the row input, the per-column scale / bias (stride 0
// across rows) and the output all qualify. (Rows of 1024: 4 elements a thread of 256; the
// atol covers x - mean cancelling in fp32 against ref's double.)
TEST_F(VulkanRowVec, LayerNormScaleAndBiasFourWide) {
  GraphBuilder gb;
  int x = gb.input("x", DType::f32, {3, 9, 1024});
  int s = gb.input("s", DType::f32, {1024}), b = gb.input("b", DType::f32, {1024});
  gb.output(gb.op("LayerNormalization", {x, s, b}, {{"axis", int64_t{-1}}, {"epsilon", 1e-5}}));
  Graph g = gb.build();
  make_static(g, {});
  const std::string src = row_source(g);
  EXPECT_NE(src.find("vec4 fz_q"), std::string::npos) << src;
  EXPECT_GT(count(src, "r.d["), 2) << "x, scale, bias and the output should be 4-wide\n" << src;
  check_values(g, {random_tensor(DType::f32, {3, 9, 1024}, 12, -3.0, 3.0), random_tensor(DType::f32, {1024}, 13, 0.5, 1.5),
                   random_tensor(DType::f32, {1024}, 14)},
               1e-5, 2e-5);
}

// fp16 and bf16 rows: f16vec4 / u16vec4 views moved through vec4 / uvec4 registers, each stored
// element already rounded to its 16-bit value. The vector path must give the same bits as the
// scalar one (FUSOR_VK_ROW_VEC4=0), and both ref's values within the type's rounding.
TEST_F(VulkanRowVec, HalfRowsFourWideSameBitsAsScalar) {
  for (DType t : {DType::f16, DType::bf16}) {
    SCOPED_TRACE(dtype_name(t));
    GraphBuilder gb;
    int x = gb.input("x", t, {6, 1024}), r = gb.input("r", t, {6, 1024});
    int s = gb.input("s", t, {1024}), b = gb.input("b", t, {1024});
    int sum = gb.op("Add", {x, r});
    gb.output(gb.op("LayerNormalization", {sum, s, b}, {{"axis", int64_t{-1}}, {"epsilon", 1e-5}}));
    gb.output(gb.op("Softmax", {x}, {{"axis", int64_t{-1}}}));
    Graph g = gb.build();
    make_static(g, {});
    const std::string src = row_source(g);
    EXPECT_NE(src.find(t == DType::f16 ? "f16vec4 d[]" : "u16vec4 d[]"), std::string::npos) << src;
    EXPECT_GT(count(src, "r.d["), 2) << src;
    const std::vector<Tensor> in = {random_tensor(t, {6, 1024}, 21, -3.0, 3.0), random_tensor(t, {6, 1024}, 22, -1.0, 1.0),
                                    random_tensor(t, {1024}, 23, 0.5, 1.5), random_tensor(t, {1024}, 24)};
    auto on = vk_->compile(g, {})->run(in);
    setenv("FUSOR_VK_ROW_VEC4", "0", 1);
    auto off = vk_->compile(g, {})->run(in);
    unsetenv("FUSOR_VK_ROW_VEC4");
    auto want = make_backend("ref")->compile(g, {})->run(in);
    ASSERT_EQ(on.size(), 2u);
    for (size_t i = 0; i < on.size(); ++i) {
      ASSERT_EQ(on[i].nbytes(), off[i].nbytes());
      EXPECT_EQ(0, std::memcmp(on[i].raw(), off[i].raw(), on[i].nbytes())) << "output " << i << ": vector and scalar rows differ";
      // One rounding of the 16-bit result (fp16 2^-11, bf16 2^-8 relative) plus the fp32 math.
      CompareResult c = compare_tensors(on[i], want[i], t == DType::f16 ? 2e-3 : 1.6e-2, t == DType::f16 ? 2e-3 : 1.6e-2);
      EXPECT_TRUE(c.ok) << "output " << i << ": " << c.message;
    }
  }
}

// A row read at an odd offset (Slice starts at column 1 of 2049-wide rows: neither the offset
// nor the row stride is a multiple of 4) stays scalar; the output, contiguous, is still 4-wide.
TEST_F(VulkanRowVec, MisalignedViewStaysScalar) {
  GraphBuilder gb;
  int x = gb.input("x", DType::f32, {5, 2049});
  auto i64 = [&](const char* nm, std::vector<int64_t> v) { return gb.constant(nm, ints_of({static_cast<int64_t>(v.size())}, v)); };
  int sl = gb.op("Slice", {x, i64("st", {1}), i64("en", {2049}), i64("ax", {1})});
  gb.output(gb.op("Softmax", {sl}, {{"axis", int64_t{-1}}}));
  Graph g = gb.build();
  make_static(g, {});
  const std::string src = row_source(g);
  if (src.find("b1r.d[") == std::string::npos) GTEST_SKIP() << "the Slice did not fuse as a view into the row kernel";
  EXPECT_EQ(src.find("b0r.d["), std::string::npos) << "a misaligned row must not be read 4-wide\n" << src;
  check_values(g, {random_tensor(DType::f32, {5, 2049}, 15, -4.0, 4.0)}, 2e-6);
}

// A windowed piece's binding may start before its first element (the slot's element delta, a
// multiple of 4 on a device binding at 64-byte offsets): the vector index adds delta / 4, as
// the scalar view adds the delta; a delta of 2 leaves the slot scalar.
TEST_F(VulkanRowVec, ElementDeltaShiftsTheVectorIndex) {
  GraphBuilder gb;
  int x = gb.input("x", DType::f32, {8, 1024});
  gb.output(gb.op("Softmax", {x}, {{"axis", int64_t{-1}}}));
  Graph g = gb.build();
  make_static(g, {});
  Plan p = build_plan(g);
  vk::PhysicalDeviceInfo dev = info_;
  dev.min_storage_offset_alignment = 64;
  for (const KernelSpec& k : p.kernels) {
    if (k.reduce_axes.empty()) continue;
    vk::VulkanDialect d4(dev, k, {4, 0}, &p);
    const std::string s4 = emit_kernel(k, p, d4);
    EXPECT_NE(s4.find(") >> 2 + 1]"), std::string::npos) << "b0r should be indexed with + 1\n" << s4;
    vk::VulkanDialect d2(dev, k, {2, 0}, &p);
    const std::string s2 = emit_kernel(k, p, d2);
    EXPECT_EQ(s2.find("b0r.d["), std::string::npos) << "a delta of 2 cannot keep groups aligned\n" << s2;
    EXPECT_NE(s2.find("b1r.d["), std::string::npos) << "the output, delta 0, is still 4-wide";
  }
}

// Max / min over a resident row take up to four partial accumulators (codegen.cpp): rows of
// 2048 (8 elements a thread: 4 partials), 1000 (4, the last one past the row for some
// threads), 768 (3: 2 partials) and 200 (1: the plain chain).
// The maxima must be exact, so x - max(x) and x - min(x) are compared bit for bit with ref,
// with NaN, +-inf and +-0 planted in some rows and the extreme in every position class.
TEST_F(VulkanRowVec, MaxMinPartialsAreExact) {
  for (int64_t len : {2048, 1000, 768, 200}) {
    SCOPED_TRACE("row of " + std::to_string(len));
    GraphBuilder gb;
    int x = gb.input("x", DType::f32, {12, len});
    int mx = gb.op("ReduceMax", {x}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{1}}});
    int mn = gb.op("ReduceMin", {x}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{1}}});
    gb.output(gb.op("Sub", {x, mx}));
    gb.output(gb.op("Sub", {x, mn}));
    Graph g = gb.build();
    make_static(g, {});
    Tensor in = random_tensor(DType::f32, {12, len}, 31, -4.0, 4.0);
    float* v = reinterpret_cast<float*>(in.raw());
    for (int64_t r = 0; r < 12; ++r) v[r * len + (r * 37) % len] = 9.0f + static_cast<float>(r);  // the max, anywhere
    v[1 * len + len - 1] = -9.5f;                                        // a min at the row's end
    v[2 * len + 3] = std::numeric_limits<float>::quiet_NaN();            // NaN wins both
    v[3 * len + 5] = std::numeric_limits<float>::infinity();
    v[4 * len + 6] = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < len; ++j) v[5 * len + j] = (j % 2) ? 0.0f : -0.0f;  // only zeros
    Plan p = build_plan(g);
    std::string src;
    for (const KernelSpec& k : p.kernels)
      if (!k.reduce_axes.empty()) {
        vk::VulkanDialect d(info_, k, std::vector<int64_t>(kernel_bindings(k).size(), 0), &p);
        src += emit_kernel(k, p, d);
      }
    if (len == 200) EXPECT_EQ(src.find("p[fz_t & "), std::string::npos) << src;
    else EXPECT_NE(src.find(len == 768 ? "p[fz_t & 1]" : "p[fz_t & 3]"), std::string::npos) << src;
    auto want = make_backend("ref")->compile(g, {})->run({in});
    auto got = vk_->compile(g, {})->run({in});
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      CompareOptions exact;
      exact.exact = false, exact.rtol = 0, exact.atol = 0;  // +-0 of an all-zero row: either sign
      CompareResult c = compare_tensors(got[i], want[i], exact);
      EXPECT_TRUE(c.ok) << "output " << i << ": " << c.message;
    }
  }
}

// Rows too short for whole groups of 4 per thread keep the element-per-thread layout.
TEST_F(VulkanRowVec, ShortRowsKeepTheScalarLayout) {
  GraphBuilder gb;
  int x = gb.input("x", DType::f32, {64, 6});
  gb.output(gb.op("Softmax", {x}, {{"axis", int64_t{-1}}}));
  Graph g = gb.build();
  make_static(g, {});
  const std::string src = row_source(g);
  EXPECT_EQ(src.find("r.d["), std::string::npos) << src;
  check_values(g, {random_tensor(DType::f32, {64, 6}, 16, -4.0, 4.0)}, 2e-6);
}

}  // namespace
}  // namespace fusor
