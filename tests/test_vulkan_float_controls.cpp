// Vulkan float controls (issue 10 item 5): kernels ask for DenormPreserve and
// SignedZeroInfNanPreserve wherever the device supports them, so -0.0, inf, NaN and denormals
// come out as on ref and cpu; `fusor devices` and conformance say what a device cannot keep.
// Runs under the validation layer like test_vulkan.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <string>

#include "backends/backend.h"
#include "backends/vulkan/vk_compile.h"
#include "backends/vulkan/vk_device.h"
#include "backends/vulkan/vulkan_backend.h"
#include "frontend/builder.h"
#include "ir/passes.h"
#include "runtime/conform.h"
#include "test_util.h"

namespace fusor {
namespace {

using testing::tensor_of;

Tensor f32_bits(Shape s, const std::vector<uint32_t>& bits) {
  Tensor t(DType::f32, std::move(s));
  for (size_t i = 0; i < bits.size(); ++i) t.data<uint32_t>()[i] = bits[i];
  return t;
}

// Whether the clause of `note` that starts with `clause` lists `width`.
bool note_lists(const std::string& note, const std::string& clause, const std::string& width) {
  size_t at = note.find(clause);
  if (at == std::string::npos) return false;
  std::string list = note.substr(at + clause.size(), note.find(" (", at) - at - clause.size());
  return list.find(width) != std::string::npos;
}

class VulkanFloatControls : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("FUSOR_VK_VALIDATION", "1", 1);
    vk_ = make_backend("vulkan");
    if (vk_->devices().empty()) GTEST_SKIP() << "no Vulkan device (install mesa-vulkan-drivers for lavapipe)";
    vulkan_validation_reset();
    info_ = vk::Instance::get()->devices()[0];
  }
  void TearDown() override {
    if (!vk_ || vk_->devices().empty()) return;
    EXPECT_EQ(vulkan_validation_message_count(), 0) << vulkan_validation_messages();
  }
  // Runs g on ref, cpu and vulkan; returns the outputs by backend.
  std::map<std::string, std::vector<Tensor>> run_all(const Graph& g, const std::vector<Tensor>& in) {
    std::map<std::string, std::vector<Tensor>> out;
    for (const char* b : {"ref", "cpu", "vulkan"}) out[b] = make_backend(b)->compile(g, {})->run(in);
    return out;
  }
  std::unique_ptr<Backend> vk_;
  vk::PhysicalDeviceInfo info_;
};

TEST_F(VulkanFloatControls, DevicesSayWhatTheyPreserve) {
  auto devs = vk_->devices();
  EXPECT_NE(devs[0].details.find("preserves="), std::string::npos) << devs[0].details;
  // The note names exactly the fp32 properties the device lacks.
  const std::string& note = devs[0].numerics_note;
  EXPECT_EQ(note_lists(note, "denormals to zero in ", "fp32"), !info_.denorm_preserve[1]) << note;
  EXPECT_EQ(note_lists(note, "inf and NaN in ", "fp32"), !info_.signed_zero_inf_nan_preserve[1]) << note;
  EXPECT_EQ(numerics_note("ref"), "");
  if (!note.empty()) EXPECT_NE(numerics_note("vulkan").find(note), std::string::npos);
  std::printf("%s: %s\n  note: %s\n", devs[0].name.c_str(), devs[0].details.c_str(), note.empty() ? "(none)" : note.c_str());
}

// The execution modes are in the module the driver gets, exactly for the supported widths.
TEST_F(VulkanFloatControls, ModulesCarryTheExecutionModes) {
  auto ctx = vk::Context::get(0);
  std::string src =
      "#version 450\nlayout(local_size_x = 1) in;\nlayout(std430, binding = 0) buffer B { float x[]; };\n"
      "void main() { x[0] = x[0] + 0.0; x[1] = x[1] * 0.0; }\n";
  std::vector<uint32_t> words = vk::compile_glsl(*ctx, "float_controls_probe", src);
  int modes[2][3] = {};
  int fadd = 0, fmul = 0;
  for (size_t pos = 5; pos < words.size(); pos += words[pos] >> 16) {
    const uint32_t op = words[pos] & 0xffff;
    if (op == 16 && (words[pos + 2] == 4459 || words[pos + 2] == 4461)) {
      const uint32_t w = words[pos + 3];
      modes[words[pos + 2] == 4461][w == 16 ? 0 : w == 32 ? 1 : 2]++;
    }
    fadd += op == 129;  // OpFAdd
    fmul += op == 133;  // OpFMul
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(modes[0][i], info_.denorm_preserve[i] ? 1 : 0) << "DenormPreserve width index " << i;
    EXPECT_EQ(modes[1][i], info_.signed_zero_inf_nan_preserve[i] ? 1 : 0) << "SignedZeroInfNanPreserve width index " << i;
  }
  // With signed zeros preserved the optimizer may not fold x + 0.0 -> x or x * 0.0 -> 0.0.
  if (info_.signed_zero_inf_nan_preserve[1]) {
    EXPECT_EQ(fadd, 1);
    EXPECT_EQ(fmul, 1);
  }
  // add_float_controls itself: idempotent, and declares the extension below SPIR-V 1.4.
  const bool all[3] = {true, true, true};
  std::vector<uint32_t> twice = vk::add_float_controls(vk::add_float_controls(words, all, all), all, all);
  EXPECT_EQ(twice, vk::add_float_controls(words, all, all));
  std::vector<uint32_t> old = words;
  old[1] = 0x00010300;
  std::vector<uint32_t> patched = vk::add_float_controls(old, all, all);
  EXPECT_NE(std::string(reinterpret_cast<const char*>(patched.data()), patched.size() * 4).find("SPV_KHR_float_controls"),
            std::string::npos);
  EXPECT_THROW(vk::add_float_controls({1, 2, 3}, all, all), Error);
}

// `precise` survives the SPIR-V optimizer: every float add / sub / mul of a TwoSum in an
// [[unroll]] loop carries NoContraction after it (spirv-opt's loop-unroll dropped it on its
// copies, and the NVIDIA driver then reassociated the compensated LayerNorm mean of 768 values).
TEST_F(VulkanFloatControls, PreciseArithmeticKeepsNoContractionThroughTheOptimizer) {
  auto ctx = vk::Context::get(0);
  const testing::ScopedEnv default_unroll("FUSOR_VK_SPIRV_UNROLL", nullptr), optimized("FUSOR_VK_SPIRV_OPT", nullptr);
  const std::string head =
      "#version 450\n#extension GL_EXT_control_flow_attributes : require\nlayout(local_size_x = 1) in;\n"
      "layout(std430, binding = 0) buffer B { float x[]; };\nlayout(std430, binding = 1) buffer C { float y[]; };\n"
      "float two_sum(float a, float b, out float e) {\n  precise float t = a + b, z = t - a, r = (a - (t - z)) + (b - z);\n"
      "  e = r;\n  return t;\n}\n";
  const std::string inline_sum =
      "    precise float v = x[t], u = s + v, z = u - s, e = (s - (u - z)) + (v - z);\n    s = u;\n    c = c + e;\n";
  const std::string called_sum = "    float e;\n    s = two_sum(s, x[t], e);\n    c = c + e;\n";
  auto kernel = [&](const std::string& loop, const std::string& body, const std::string& prec) {
    return head + "void main() {\n  " + prec + "float s = 0.0, c = 0.0;\n  " + loop + " for (int t = 0; t < 3; ++t) {\n" + body +
           "  }\n  precise float w = y[1] * 3.0 + 1.0;\n  x[3] = s + c;\n  y[0] = w;\n}\n";
  };
  const std::vector<uint32_t> words = vk::compile_glsl(*ctx, "no_contraction_probe", kernel("[[unroll]]", inline_sum, "precise "));
  std::set<uint32_t> no_contraction;
  std::vector<uint32_t> arith;
  for (size_t pos = 5; pos < words.size(); pos += words[pos] >> 16) {
    const uint32_t op = words[pos] & 0xffff;
    if (op == 71 && words[pos + 2] == 42) no_contraction.insert(words[pos + 1]);  // OpDecorate NoContraction
    if (op == 129 || op == 131 || op == 133) arith.push_back(words[pos + 2]);  // OpFAdd, OpFSub, OpFMul: result id
  }
  ASSERT_GE(arith.size(), 7u) << "the TwoSum (6 operations) and the add of its error should be there";
  for (uint32_t id : arith) EXPECT_TRUE(no_contraction.count(id)) << "float operation %" << id << " lost NoContraction";
  // The analysis that keeps loop-unroll off such modules, on unoptimized ones: precise arithmetic
  // in an [[unroll]] loop, written there or in a function it calls, and not in a plain loop or
  // only after an unrolled loop of plain arithmetic (GEMM-like: loop-unroll stays on; the
  // precise value is read from and stored to another buffer: glslang makes every store to a
  // buffer a precise value reads precise, and so what feeds them).
  const testing::ScopedEnv unoptimized("FUSOR_VK_SPIRV_OPT", "0");
  auto unopt = [&](const std::string& src) { return vk::compile_glsl(*ctx, "no_contraction_probe", src); };
  EXPECT_TRUE(vk::precise_in_unrolled_loop(unopt(kernel("[[unroll]]", inline_sum, "precise "))));
  EXPECT_TRUE(vk::precise_in_unrolled_loop(unopt(kernel("[[unroll]]", called_sum, ""))));
  EXPECT_TRUE(vk::precise_in_unrolled_loop(unopt(kernel("[[unroll]]", "    for (int u = 0; u < 2; ++u) {\n" + called_sum + "    }\n", ""))));
  EXPECT_FALSE(vk::precise_in_unrolled_loop(unopt(kernel("", inline_sum, "precise "))));
  EXPECT_FALSE(vk::precise_in_unrolled_loop(unopt(kernel("[[unroll]]", "    s = s + x[t] * x[t + 1];\n", ""))));
}


// x = [-0.0, inf, -3] (a graph input) with the literal 0.0 folded into the kernel:
// x + 0.0 = [+0.0, inf, -3], x * 0.0 = [-0.0, NaN, -0.0], bit for bit on every backend.
TEST_F(VulkanFloatControls, SignedZeroInfNanWithLiteralConstants) {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {3});
  int z = b.input("z", DType::f32, {3});  // the same zeros at run time: nothing to fold
  int zero = b.constant("zero", tensor_of({}, {0.0}));
  b.output(b.op("Add", {x, zero}));
  b.output(b.op("Mul", {x, zero}));
  b.output(b.op("Add", {x, z}));
  b.output(b.op("Mul", {x, z}));
  Graph g = b.build();
  make_static(g, {});
  Tensor in = tensor_of({3}, {-0.0, INFINITY, -3}), zeros = tensor_of({3}, {0.0, 0.0, 0.0});
  const Tensor want_add = f32_bits({3}, {0x00000000u, 0x7f800000u, 0xc0400000u});
  const Tensor want_mul = tensor_of({3}, {-0.0, NAN, -0.0});
  std::string lavapipe_defect;
  for (auto& [be, out] : run_all(g, {in, zeros})) {
    for (int k = 0; k < 4; ++k) {
      CompareResult c = compare_tensors(out[k], k % 2 ? want_mul : want_add, CompareOptions{-1, -1, true});
      // llvmpipe folds literal zeros whatever the module asks (its numerics note says so); the
      // run-time zeros below still check that the modes reach it.
      if (!c.ok && be == "vulkan" && k < 2 && info_.name.rfind("llvmpipe", 0) == 0) {
        EXPECT_NE(vk_->devices()[0].numerics_note.find("folds literal 0.0"), std::string::npos);
        lavapipe_defect += std::string(k ? " x * 0.0: " : " x + 0.0: ") + c.message;
        continue;
      }
      EXPECT_TRUE(c.ok) << be << (k % 2 ? " x * " : " x + ") << (k < 2 ? "literal 0.0: " : "run-time 0.0: ") << c.message;
    }
  }
  if (!lavapipe_defect.empty() && !HasFailure())
    GTEST_SKIP() << "literal-zero cases on '" << info_.name
                 << "': Mesa's llvmpipe folds x + 0.0 and x * 0.0 despite SignedZeroInfNanPreserve (the run-time "
                    "zero cases passed; NVIDIA runs them):"
                 << lavapipe_defect;
}

// ReduceSum of 1000 copies of the smallest fp32 denormal is 1000 * 2^-149: bits 0x000003e8.
TEST_F(VulkanFloatControls, DenormalSumIsExact) {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {1000});
  b.output(b.op("ReduceSum", {x}, {{"keepdims", int64_t{0}}}));
  Graph g = b.build();
  make_static(g, {});
  Tensor in(DType::f32, {1000});
  for (int i = 0; i < 1000; ++i) in.data<uint32_t>()[i] = 1;
  for (auto& [be, out] : run_all(g, {in})) {
    const uint32_t got = out[0].data<uint32_t>()[0];
    if (be == "vulkan" && !info_.denorm_preserve[1]) {
      // The device does not promise to keep fp32 denormals: conformance must say so.
      EXPECT_TRUE(note_lists(vk_->devices()[0].numerics_note, "denormals to zero in ", "fp32"));
      if (got != 0x3e8u) GTEST_SKIP() << "device '" << info_.name << "' cannot preserve fp32 denormals "
                                      << "(shaderDenormPreserveFloat32 is false) and flushed them: got bits 0x"
                                      << std::hex << got;
    }
    EXPECT_EQ(got, 0x3e8u) << be << ": got " << out[0].get(0);
  }
}

// Which devices retain their GPU's CUDA context when opened (vk_device.h holds_cuda_context):
// NVIDIA only, GeForce boards not by default, the environment forcing either way.
TEST(VulkanCudaContextHold, NvidiaDatacenterPartsOnlyUnlessForced) {
  const char* saved = std::getenv("FUSOR_VK_HOLD_CUDA_CONTEXT");
  const std::string keep = saved ? saved : "";
  unsetenv("FUSOR_VK_HOLD_CUDA_CONTEXT");
  vk::PhysicalDeviceInfo h200, geforce, lvp;
  h200.vendor_id = geforce.vendor_id = 0x10DE, lvp.vendor_id = 0x10005;
  h200.name = "NVIDIA H200", geforce.name = "NVIDIA GeForce RTX 4090", lvp.name = "llvmpipe (LLVM 15.0.6, 256 bits)";
  EXPECT_TRUE(vk::holds_cuda_context(h200));
  EXPECT_FALSE(vk::holds_cuda_context(geforce));
  EXPECT_FALSE(vk::holds_cuda_context(lvp));
  setenv("FUSOR_VK_HOLD_CUDA_CONTEXT", "0", 1);
  EXPECT_FALSE(vk::holds_cuda_context(h200));
  setenv("FUSOR_VK_HOLD_CUDA_CONTEXT", "1", 1);
  EXPECT_TRUE(vk::holds_cuda_context(geforce));
  EXPECT_FALSE(vk::holds_cuda_context(lvp)) << "never for another vendor";
  if (saved) setenv("FUSOR_VK_HOLD_CUDA_CONTEXT", keep.c_str(), 1);
  else unsetenv("FUSOR_VK_HOLD_CUDA_CONTEXT");
}

}  // namespace
}  // namespace fusor
