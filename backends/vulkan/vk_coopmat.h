// Cooperative matrices (the GPU's matrix units) for fp16 GEMMs on Vulkan: device query, the
// choice of a matrix shape per matmul kernel, and the NV -> KHR SPIR-V rewrite.
//
// Why NV SPIR-V: Debian 12's glslang 12 / SPIRV-Tools 2023.1 / Vulkan headers 1.3.239 know
// GL_NV_cooperative_matrix but not GL_KHR_cooperative_matrix. shaders/gemm_coopmat.glsl is
// written against NV, compiled and validated as usual; a device that lists
// VK_KHR_cooperative_matrix (with shapes) runs it after coopmat_nv_to_khr(), one with only
// VK_NV_cooperative_matrix (or FUSOR_VK_COOPMAT_API=nv, measuring) runs the NV module as is.
// KHR first: the H200 ran the same fp16 kernels faster as KHR modules (docs/benchmarks.md). The KHR structs are missing from the 1.3.239 headers and
// are declared in vk_coopmat.cpp (values from the Vulkan registry: sType 1000506000/1/2).
//
// Environment: FUSOR_VK_COOPMAT=0 never uses cooperative matrices; =force makes a matmul
// kernel that would qualify (f16 A and B, M > 8) fail with a one-line Error when the device
// cannot run it (instead of silently taking the tiled path); unset or anything else: auto.
// =emulate is a test hook (tests/test_vulkan_coopmat_split.cpp): on a device WITHOUT
// cooperative matrices (lavapipe) qualifying matmuls still take gemm_coopmat.glsl, with the
// matrix-unit operations replaced by per-thread fp32 dot products over the same shared slices
// (FZ_CM_EMULATE, a 16x8x16 "shape"), so everything else in the template -- staging and vector
// loads, split-K hand-off, epilogue -- runs on a CPU device. The device must be opened with the
// variable set (it then enables vulkanMemoryModel).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/vulkan/vk_device.h"
#include "ir/kernel_spec.h"

namespace fusor::vk {

// Fills info.coopmat_nv / coopmat_khr / vulkan_memory_model / coopmat_shapes for one physical
// device (extension list, feature structs, vkGetPhysicalDeviceCooperativeMatrixProperties*
// through vkGetInstanceProcAddr). Never throws: a failed query leaves the device without them.
void query_cooperative_matrix(VkInstance instance, PhysicalDeviceInfo& info);
// Whether `pd` offers the device extension `name` (false when enumeration fails).
bool has_extension(VkPhysicalDevice pd, const char* name);

// "coopmat=nv:16x8x16 f16*f16+f32,16x8x8 f16*f16+f32 ..." for `fusor devices` (subgroup-scope
// shapes; "coopmat=none" when the device has none).
std::string coopmat_summary(const PhysicalDeviceInfo& info);

// Device creation: the extension to enable (nullptr: none) and the feature struct to chain.
// The struct lives in `storage` (at least 32 bytes, 8-aligned) and its pNext is set to `next`;
// returns the struct's address to chain, or `next` when nothing is enabled.
const char* coopmat_extension(const PhysicalDeviceInfo& info);
void* chain_coopmat_features(const PhysicalDeviceInfo& info, void* storage, void* next);
// With info.coopmat_bf16: appends VK_KHR_shader_bfloat16 (and VK_KHR_cooperative_matrix where
// NV's is the one enabled) to `extensions` and chains their feature structs, built in
// `storage` (at least 128 bytes, 8-aligned) ahead of `next`; returns the chain's head.
void* chain_bf16_coopmat_features(const PhysicalDeviceInfo& info, void* storage, void* next, std::vector<const char*>& extensions);
// The bf16*bf16+f32 subgroup shape bf16 matmuls use (info.coopmat_bf16), the narrowest N.
std::optional<CoopmatShape> coopmat_bf16_shape(const PhysicalDeviceInfo& info);

// Whether device `info` can run gemm_coopmat.glsl at all (feature bits, fp16 arithmetic,
// 16-bit storage, Vulkan memory model, subgroup size) and an f16*f16+f32 subgroup shape the
// SPIR-V can express: on KHR-only devices A (M x K) and B (K x N) must differ as types, so
// M == N == K shapes are skipped. Prefers 16x8x16. nullopt with `why` set otherwise.
std::optional<CoopmatShape> coopmat_shape_for(const PhysicalDeviceInfo& info, std::string* why = nullptr);

// The shape to use for matmul kernel `k` of plan `p` on `info`, or nullopt for the tiled path:
// both operand buffers f16, M > 8 (the GEMV-like path stays), FUSOR_VK_COOPMAT not "0", and
// coopmat_shape_for() has one; or both bf16 with coopmat_bf16_shape() (the fp16 template,
// its matrix types retyped by coopmat_nv_to_khr(..., true)). Throws Error("vulkan", "kernel '<name>': FUSOR_VK_COOPMAT=force but ...")
// under =force when the kernel qualifies but the device cannot run it.
std::optional<CoopmatShape> choose_coopmat(const KernelSpec& k, const Plan& p, const PhysicalDeviceInfo& info);
// FUSOR_VK_COOPMAT=emulate on a device without cooperative matrices that has the Vulkan memory
// model, fp16 arithmetic and 16-bit storage (choose_coopmat then returns 16x8x16).
bool coopmat_emulated(const PhysicalDeviceInfo& info);

// Rewrites a module using SPV_NV_cooperative_matrix into SPV_KHR_cooperative_matrix:
// capability 5357 -> 6022, the extension name, OpTypeCooperativeMatrixNV (5358) ->
// OpTypeCooperativeMatrixKHR (4456) with a Use operand (MatrixA 0 / MatrixB 1 / Accumulator 2,
// derived from how OpCooperativeMatrixMulAddNV uses each type), Load/Store NV (5359/5360) ->
// KHR (4457/4458) with a MemoryLayout constant (RowMajor 0 / ColumnMajor 1) in place of the
// column-major bool, MulAdd (5361 -> 4459) and Length (5362 -> 4460). New 32-bit integer
// constants get fresh ids (the header's bound grows) and are placed right before the first
// matrix type. Throws Error("vulkan", "coopmat_nv_to_khr: ...") on a module it cannot rewrite
// (a type used as both A and B, a non-constant layout, malformed words).
// bf16: the A and B matrix types take a new OpTypeFloat 16 with the BFloat16KHR encoding as
// their component (SPV_KHR_bfloat16: capabilities BFloat16TypeKHR 5116 and
// BFloat16CooperativeMatrixKHR 5118, its extension); the module's halves are bf16 bits.
std::vector<uint32_t> coopmat_nv_to_khr(const std::vector<uint32_t>& nv, bool bf16 = false);

}  // namespace fusor::vk
