// Cooperative-matrix GEMMs on Vulkan (fp16 operands, backends/vulkan/vk_coopmat.h,
// shaders/gemm_coopmat.glsl).
//
// Two groups:
//   * VulkanCoopmatCompile: run on any machine (no device needed). For a described device that
//     has cooperative matrices, every fp16 matmul kernel of a few graphs is emitted with the
//     coopmat template, compiled by shaderc, validated by SPIRV-Tools (as NV SPIR-V) and
//     rewritten to SPV_KHR_cooperative_matrix; the rewrite is checked word by word. The
//     selection rules (bf16, M <= 8, FUSOR_VK_COOPMAT) are checked on the same descriptions.
//   * VulkanCoopmatGpu: fp16 matmuls on the real Vulkan device against ref. On a device with
//     cooperative matrices (the H200) they must take the coopmat path; on lavapipe they take
//     the tiled fallback and the coopmat-only test is skipped with the reason.
#include <gtest/gtest.h>

#define SPV_ENABLE_UTILITY_CODE
#include <spirv/unified1/spirv.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>

#include "backends/backend.h"
#include "backends/codegen.h"
#include "backends/vulkan/vk_compile.h"
#include "backends/vulkan/vk_coopmat.h"
#include "backends/vulkan/vk_dialect.h"
#include "backends/vulkan/vulkan_backend.h"
#include "frontend/builder.h"
#include "ir/passes.h"

#include "tests/vk_coopmat_test_util.h"

namespace fusor {
namespace {

using vk::CoopmatShape;


TEST(VulkanCoopmatCompile, EveryVariantCompilesValidatesAndRewritesToKhr) {
  setenv("FUSOR_NO_DISK_CACHE", "1", 1);
  unsetenv("FUSOR_VK_COOPMAT");
  // 16x16x16 on this KHR device: B's rows a specialization constant (FZ_CM_KB_SPEC), so A and B
  // are two types the rewrite gives MatrixA and MatrixB.
  for (const CoopmatShape& shape : {f16_shape(16, 8, 16), f16_shape(16, 8, 8), f16_shape(16, 16, 8), f16_shape(16, 16, 16)}) {
    const vk::PhysicalDeviceInfo dev = coopmat_device(false, {shape});
    for (const Problem& prob : problems()) {
      for (const auto& [name, src] : coopmat_sources(prob, dev)) {
        SCOPED_TRACE(prob.name + " " + name + " shape " + std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" +
                     std::to_string(shape.k));
        ASSERT_NE(src.find("coopMatMulAddNV"), std::string::npos);
        EXPECT_EQ(src.find("#define FZ_CM_KB_SPEC 1") != std::string::npos, shape.n == shape.k && shape.m == shape.k);
        std::vector<uint32_t> nv;
        ASSERT_NO_THROW(nv = vk::compile_glsl(dev, name, src)) << src;  // shaderc + spirv-opt + spirv-val
        std::map<uint32_t, int> before = opcode_counts(nv);
        ASSERT_GT(before[5361], 0) << "no OpCooperativeMatrixMulAddNV after optimization";
        ASSERT_EQ(before[5358], 3) << "expected three matrix types (A, B, accumulator)";
        std::vector<uint32_t> khr = vk::coopmat_nv_to_khr(nv);
        // FUSOR_COOPMAT_DUMP=DIR keeps the modules for spirv-dis / a newer spirv-val.
        if (const char* dir = std::getenv("FUSOR_COOPMAT_DUMP")) {
          const std::string base = std::string(dir) + "/" + prob.name + "_" + std::to_string(shape.m) + "x" +
                                   std::to_string(shape.n) + "x" + std::to_string(shape.k);
          std::ofstream(base + ".comp") << src;
          std::ofstream(base + ".nv.spv", std::ios::binary).write(reinterpret_cast<const char*>(nv.data()), nv.size() * 4);
          std::ofstream(base + ".khr.spv", std::ios::binary).write(reinterpret_cast<const char*>(khr.data()), khr.size() * 4);
        }
        std::map<uint32_t, int> after = opcode_counts(khr);
        for (uint32_t op : {5358u, 5359u, 5360u, 5361u, 5362u}) EXPECT_EQ(after[op], 0) << "NV opcode " << op << " left";
        EXPECT_EQ(after[4456], before[5358]);
        EXPECT_EQ(after[4457], before[5359]);
        EXPECT_EQ(after[4458], before[5360]);
        EXPECT_EQ(after[4459], before[5361]);
        EXPECT_EQ(after[4460], before[5362]);
        EXPECT_EQ(after[43], before[43] + 3) << "three new OpConstant (0, 1, 2)";
        EXPECT_EQ(khr[3], nv[3] + 3) << "bound grows by the three new ids";
        check_ids_unique(khr);
        // Capability and extension replaced; each matrix type gets a distinct Use constant.
        bool cap_khr = false, ext_khr = false;
        std::map<uint32_t, uint32_t> const_value;
        std::set<uint32_t> uses;
        // Loads are column-major only for an operand staged along m (A) or k (B) with vector
        // loads (FZ_CM_A_COL / FZ_CM_B_COL); stores always row-major.
        const bool col = src.find("#define FZ_CM_A_COL") != std::string::npos || src.find("#define FZ_CM_B_COL") != std::string::npos;
        if (prob.name == "transposed_a_and_b") {  // both operands staged along their other axis
          EXPECT_NE(src.find("#define FZ_CM_A_COL 1"), std::string::npos);
          EXPECT_NE(src.find("#define FZ_CM_B_COL 1"), std::string::npos);
        }
        if (prob.name == "transposed_b") EXPECT_NE(src.find("#define FZ_CM_B_COL 1"), std::string::npos);
        int col_loads = 0;
        for (const SpvInst& i : walk(khr)) {
          if (i.op == 17) {
            EXPECT_NE(khr[i.pos + 1], 5357u) << "CooperativeMatrixNV capability left";
            cap_khr = cap_khr || khr[i.pos + 1] == 6022;
          }
          if (i.op == 10) {
            const std::string e(reinterpret_cast<const char*>(&khr[i.pos + 1]));
            EXPECT_NE(e, "SPV_NV_cooperative_matrix");
            ext_khr = ext_khr || e == "SPV_KHR_cooperative_matrix";
          }
          if (i.op == 43 && i.n == 4) const_value[khr[i.pos + 2]] = khr[i.pos + 3];
          if (i.op == 4456) {
            ASSERT_EQ(i.n, 7u);
            ASSERT_TRUE(const_value.count(khr[i.pos + 6])) << "Use operand is not a constant declared before the type";
            uses.insert(const_value[khr[i.pos + 6]]);
          }
          if (i.op == 4457 || i.op == 4458) {
            const uint32_t layout = khr[i.pos + 4 - (i.op == 4458 ? 1 : 0)];
            ASSERT_TRUE(const_value.count(layout)) << "MemoryLayout operand is not a constant";
            if (i.op == 4458) EXPECT_EQ(const_value[layout], 0u) << "the template stores row-major";
            else EXPECT_LE(const_value[layout], 1u) << "a load's layout is RowMajorKHR or ColumnMajorKHR";
            col_loads += i.op == 4457 && const_value[layout] == 1;
          }
        }
        EXPECT_EQ(col_loads > 0, col) << "column-major loads exactly where a slice is column-major";
        EXPECT_TRUE(cap_khr);
        EXPECT_TRUE(ext_khr);
        EXPECT_EQ(uses, (std::set<uint32_t>{0, 1, 2}));
      }
    }
  }
}

// bf16 operands: the fp16 template with FZ_CM_BF16 (B's rows a specialization constant, so A
// and B stay distinct types for the square 16x16x16 bf16 shape), validated as NV, then
// rewritten to KHR with A's and B's components retyped to an OpTypeFloat 16 BFloat16KHR.
TEST(VulkanCoopmatCompile, Bf16CompilesAndRewritesToBfloat16Khr) {
  setenv("FUSOR_NO_DISK_CACHE", "1", 1);
  unsetenv("FUSOR_VK_COOPMAT");
  vk::PhysicalDeviceInfo dev = coopmat_device(true, {f16_shape(16, 8, 16)});
  dev.coopmat_khr_also = {{16, 16, 16, 1000141000u, 1000141000u, 1, 1, 3, false}};
  dev.coopmat_bf16 = true;
  for (Problem prob : {problems()[0], problems()[1], problems()[2], problems()[3], problems()[5]}) {
    prob.dtype = DType::bf16;
    prob.name += "_bf16";
    for (const auto& [name, src] : coopmat_sources(prob, dev)) {
      SCOPED_TRACE(prob.name + " " + name);
      ASSERT_NE(src.find("#define FZ_CM_BF16 1"), std::string::npos);
      std::vector<uint32_t> nv;
      ASSERT_NO_THROW(nv = vk::compile_glsl(dev, name, src)) << src;
      ASSERT_EQ(opcode_counts(nv)[5358], 3) << "A, B and the accumulator must be three types";
      const std::vector<uint32_t> khr = vk::coopmat_nv_to_khr(nv, true);
      check_ids_unique(khr);
      std::set<uint32_t> caps, bf16_types, f32_types;
      bool ext = false;
      std::map<uint32_t, uint32_t> const_value, component_of_use;
      for (const SpvInst& i : walk(khr)) {
        if (i.op == 17) caps.insert(khr[i.pos + 1]);
        if (i.op == 10) ext = ext || std::string(reinterpret_cast<const char*>(&khr[i.pos + 1])) == "SPV_KHR_bfloat16";
        if (i.op == 22 && i.n == 4 && khr[i.pos + 2] == 16 && khr[i.pos + 3] == 0) bf16_types.insert(khr[i.pos + 1]);
        if (i.op == 22 && i.n == 3 && khr[i.pos + 2] == 32) f32_types.insert(khr[i.pos + 1]);
        if (i.op == 43 && i.n == 4) const_value[khr[i.pos + 2]] = khr[i.pos + 3];
        if (i.op == 4456) component_of_use[const_value.at(khr[i.pos + 6])] = khr[i.pos + 2];
      }
      EXPECT_TRUE(caps.count(5116) && caps.count(5118) && caps.count(6022)) << "BFloat16TypeKHR, BFloat16CooperativeMatrixKHR, CooperativeMatrixKHR";
      EXPECT_TRUE(ext) << "SPV_KHR_bfloat16 not declared";
      ASSERT_EQ(bf16_types.size(), 1u);
      ASSERT_EQ(component_of_use.size(), 3u) << "MatrixA, MatrixB and the accumulator";
      EXPECT_TRUE(bf16_types.count(component_of_use[0]) && bf16_types.count(component_of_use[1])) << "A and B must be bf16";
      EXPECT_TRUE(f32_types.count(component_of_use[2])) << "the accumulator stays fp32";
    }
  }
  // Without vector staging (K = 51: no group of 2 fits) bf16 stays on the tiled template.
  const Problem odd{"odd_k_bf16", {33, 51}, {51, 70}, false, false, false, DType::bf16};
  Built b = build(odd, 3);
  Plan plan = build_plan(b.g);
  for (const KernelSpec& k : plan.kernels)
    if (k.matmul) {
      vk::VulkanDialect d(dev, k, std::vector<int64_t>(kernel_bindings(k).size(), 0), &plan);
      EXPECT_FALSE(d.tiles().coopmat) << "bf16 with scalar staging must take the tiled template";
    }
}

TEST(VulkanCoopmatCompile, NvDeviceCompilesSquareShapesAndTheRewriteRefusesThem) {
  // 16x16x16 makes A and B one NV type on an NV device (no FZ_CM_KB_SPEC there): fine for NV,
  // not expressible for KHR, so the rewrite refuses such a module.
  setenv("FUSOR_NO_DISK_CACHE", "1", 1);
  unsetenv("FUSOR_VK_COOPMAT");
  const vk::PhysicalDeviceInfo nv = coopmat_device(true, {f16_shape(16, 16, 16)});
  auto srcs = coopmat_sources(problems()[1], nv);
  ASSERT_FALSE(srcs.empty());
  std::vector<uint32_t> words = vk::compile_glsl(nv, srcs[0].first, srcs[0].second);
  try {
    vk::coopmat_nv_to_khr(words);
    ADD_FAILURE() << "rewrite of a module whose A and B share one type did not refuse";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("more than one of A, B"), std::string::npos) << e.what();
  }
  EXPECT_EQ(srcs[0].second.find("FZ_CM_KB_SPEC 1"), std::string::npos);
  unsetenv("FUSOR_VK_COOPMAT_SHAPE");  // the preference below is the default one
  // A KHR-only device may take it (its modules declare B's rows as a specialization constant:
  // EveryVariantCompilesValidatesAndRewritesToKhr); 16x8x16 stays preferred where both are listed.
  EXPECT_TRUE(vk::coopmat_shape_for(coopmat_device(false, {f16_shape(16, 16, 16)})));
  const auto both = vk::coopmat_shape_for(coopmat_device(false, {f16_shape(16, 16, 16), f16_shape(16, 8, 16)}));
  ASSERT_TRUE(both);
  EXPECT_EQ(both->n, 8u);
}

TEST(VulkanCoopmatCompile, SelectionRules) {
  unsetenv("FUSOR_VK_COOPMAT");
  const vk::PhysicalDeviceInfo dev = coopmat_device(false, {f16_shape(16, 8, 16)});
  auto chooses = [&](const Problem& prob) {
    Built b = build(prob, 9);
    Plan plan = build_plan(b.g);
    for (const KernelSpec& k : plan.kernels)
      if (k.matmul) return vk::choose_coopmat(k, plan, dev).has_value();
    ADD_FAILURE() << prob.name << ": no matmul kernel";
    return false;
  };
  EXPECT_TRUE(chooses({"f16", {32, 64}, {64, 48}}));
  EXPECT_FALSE(chooses({"bf16 stays tiled", {32, 64}, {64, 48}, false, false, false, DType::bf16}));
  EXPECT_FALSE(chooses({"f32 stays tiled", {32, 64}, {64, 48}, false, false, false, DType::f32}));
  EXPECT_FALSE(chooses({"M <= 8 stays skinny", {8, 64}, {64, 48}}));
  EXPECT_TRUE(chooses({"M = 9", {9, 64}, {64, 48}}));
  setenv("FUSOR_VK_COOPMAT", "0", 1);
  EXPECT_FALSE(chooses({"disabled", {32, 64}, {64, 48}}));
  unsetenv("FUSOR_VK_COOPMAT");
  // A device without the feature bits it needs.
  vk::PhysicalDeviceInfo no_mm = dev;
  no_mm.vulkan_memory_model = false;
  std::string why;
  EXPECT_FALSE(vk::coopmat_shape_for(no_mm, &why));
  EXPECT_NE(why.find("vulkanMemoryModel"), std::string::npos) << why;
  // The blocking fits the device and its tile sizes follow the shape.
  vk::ContractionTiles t = vk::choose_coopmat_tiles(f16_shape(16, 8, 16), 1024, 1024, dev, 1, 1024);
  EXPECT_EQ(t.bm, 32);
  EXPECT_EQ(t.bn, 32);  // 2 x 4 subgroups of one 16 x 8 accumulator
  EXPECT_EQ(t.threads(), 256);
  EXPECT_EQ(t.cm_bk, 128);
  // As gemm_coopmat.glsl declares at most: the A slice (32 x 136 row-major or 128 x 40
  // column-major halves), the B slice (128 x 40 or 32 x 136), the fp32 tile.
  EXPECT_EQ(t.coopmat_shared_bytes(), 128 * 40 * 2 + 128 * 40 * 2 + 32 * 36 * 4);
  EXPECT_LE(t.coopmat_shared_bytes(), static_cast<int64_t>(dev.max_shared_memory));
  EXPECT_EQ(vk::choose_coopmat_tiles(f16_shape(16, 8, 16), 64, 768, dev, 1, 96).cm_bk, 64);  // K < 128: 64-long slices
  EXPECT_EQ(t.coopmat_label(), "coopmat 16x8x16");
  // M within one matrix: one subgroup row; short K: 32-long slices.
  t = vk::choose_coopmat_tiles(f16_shape(16, 8, 16), 16, 512, dev, 1, 48);
  EXPECT_EQ(t.bm, 16);
  EXPECT_EQ(t.cm_bk, 32);
  EXPECT_LE(t.coopmat_shared_bytes(), static_cast<int64_t>(dev.max_shared_memory));
}

TEST(VulkanCoopmatCompile, ForceWithoutCooperativeMatricesIsAOneLineError) {
  setenv("FUSOR_VK_COOPMAT", "force", 1);
  vk::PhysicalDeviceInfo dev = coopmat_device(false, {});
  dev.coopmat_khr = dev.cooperative_matrix = false;
  dev.name = "no-coopmat";
  Built b = build({"f16", {32, 64}, {64, 48}}, 3);
  Plan plan = build_plan(b.g);
  bool threw = false;
  for (const KernelSpec& k : plan.kernels) {
    if (!k.matmul) continue;
    try {
      vk::choose_coopmat(k, plan, dev);
    } catch (const Error& e) {
      threw = true;
      const std::string m = e.what();
      EXPECT_NE(m.find("[vulkan]"), std::string::npos) << m;
      EXPECT_NE(m.find("FUSOR_VK_COOPMAT=force"), std::string::npos) << m;
      EXPECT_NE(m.find("no-coopmat"), std::string::npos) << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
  }
  EXPECT_TRUE(threw);
  unsetenv("FUSOR_VK_COOPMAT");
}

// ---- on the real device -------------------------------------------------------------------

class VulkanCoopmatGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("FUSOR_VK_COOPMAT");
    setenv("FUSOR_VK_VALIDATION", "1", 1);  // as test_vulkan.cpp: any validation message fails
    vk_ = make_backend("vulkan");
    if (vk_->devices().empty()) GTEST_SKIP() << "no Vulkan device: the loader found none";
    vulkan_validation_reset();
    dev_ = vk::Instance::get()->devices()[0];
    shape_ = vk::coopmat_shape_for(dev_, &why_);
  }
  void TearDown() override {
    unsetenv("FUSOR_VK_COOPMAT");
    if (!vk_ || vk_->devices().empty()) return;
    EXPECT_EQ(vulkan_validation_message_count(), 0) << vulkan_validation_messages();
  }

  // Runs `prob` on vulkan and ref; fp16 results within a few fp16 ulps (fp32 accumulation in
  // another order, one more rounding in between). Returns the executable's coopmat kernels.
  int run_and_compare(const Problem& prob, uint32_t seed) {
    SCOPED_TRACE(prob.name);
    Built b = build(prob, seed);
    auto ref = make_backend("ref")->compile(b.g, {});
    auto exe = vk_->compile(b.g, {});
    std::vector<Tensor> want = ref->run(b.inputs);
    std::vector<Tensor> got = exe->run(b.inputs);  // outputs are fresh (poisoned) tensors each run
    EXPECT_EQ(got.size(), want.size());
    const double ulp = std::ldexp(1.0, prob.dtype == DType::bf16 ? -7 : -10);
    for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
      EXPECT_EQ(got[i].dtype(), prob.dtype);
      EXPECT_EQ(got[i].shape(), want[i].shape());
      EXPECT_LE(relative_l2(got[i], want[i]), 4 * ulp);
      // Per element: a couple of fp16 ulps relative, plus an absolute floor for sums that cancel.
      CompareResult c = compare_tensors(got[i], want[i], 4 * ulp, 4e-3);
      EXPECT_TRUE(c.ok) << c.message;
    }
    notes_ = exe->notes();
    return vulkan_coopmat_kernel_count(*exe);
  }

  std::unique_ptr<Backend> vk_;
  vk::PhysicalDeviceInfo dev_;
  std::optional<CoopmatShape> shape_;
  std::string why_, notes_;
};

// Runs everywhere: on lavapipe it checks the tiled fallback, on the H200 the coopmat path.
TEST_F(VulkanCoopmatGpu, Fp16MatmulsMatchReference) {
  uint32_t seed = 100;
  for (const Problem& prob : problems()) {
    const int n = run_and_compare(prob, seed += 10);
    EXPECT_EQ(n, shape_ ? 1 : 0) << prob.name << " on " << dev_.name << " (" << vk::coopmat_summary(dev_) << "): " << notes_;
  }
}

// bf16 on the device's bf16 cooperative matrices where it lists them (the H200 does, through
// VK_KHR_cooperative_matrix + VK_KHR_shader_bfloat16), the tiled template elsewhere; values as
// ref's within a few bf16 ulps.
TEST_F(VulkanCoopmatGpu, Bf16MatmulsMatchReference) {
  uint32_t seed = 300;
  for (Problem prob : problems()) {
    prob.dtype = DType::bf16;
    prob.name += "_bf16";
    const int n = run_and_compare(prob, seed += 10);
    if (dev_.coopmat_bf16 && prob.name != "k_not_multiple_bf16")
      EXPECT_EQ(n, 1) << prob.name << " on " << dev_.name << ": " << notes_;
    if (!dev_.coopmat_bf16) EXPECT_EQ(n, 0) << prob.name;
  }
  if (!dev_.coopmat_bf16) std::printf("device %s lists no bf16 cooperative matrices: the tiled template ran\n", dev_.name.c_str());
}

TEST_F(VulkanCoopmatGpu, CoopmatPathInUseOnThisDevice) {
  if (!shape_) GTEST_SKIP() << "device '" << dev_.name << "' has no usable cooperative matrices: " << why_;
  std::printf("device %s: %s\n", dev_.name.c_str(), vk::coopmat_summary(dev_).c_str());
  setenv("FUSOR_VK_COOPMAT", "force", 1);
  EXPECT_EQ(run_and_compare(problems()[1], 7), 1);
  EXPECT_NE(notes_.find("cooperative matrices (coopmat "), std::string::npos) << notes_;
  std::printf("notes: %s\n", notes_.c_str());
}

TEST_F(VulkanCoopmatGpu, DisabledByEnvironmentTakesTheTiledPath) {
  setenv("FUSOR_VK_COOPMAT", "0", 1);
  EXPECT_EQ(run_and_compare(problems()[2], 11), 0);
  EXPECT_EQ(notes_.find("cooperative"), std::string::npos) << notes_;
}

TEST_F(VulkanCoopmatGpu, ForceOnThisDevice) {
  setenv("FUSOR_VK_COOPMAT", "force", 1);
  Built b = build(problems()[0], 13);
  if (shape_) {
    EXPECT_EQ(run_and_compare(problems()[0], 13), 1);
    return;
  }
  try {
    vk_->compile(b.g, {});
    ADD_FAILURE() << "FUSOR_VK_COOPMAT=force compiled on '" << dev_.name << "', which has no cooperative matrices";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("FUSOR_VK_COOPMAT=force"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace fusor
