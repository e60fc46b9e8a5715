// The Vulkan/SPIR-V backend's public surface (DESIGN.md "Vulkan / SPIR-V"): the factory that
// backends/registry.cpp calls, plus hooks tests use to assert a clean validation run.
//
// Environment:
//   FUSOR_VK_VALIDATION=1   create the instance with VK_LAYER_KHRONOS_validation and
//                           synchronization validation; every error/warning message is counted
//                           (read before the backend is created: set it first).
//   VK_DRIVER_FILES=...     standard loader variable; CI points it at lavapipe.
//   FUSOR_NO_DISK_CACHE=1   do not read or write $XDG_CACHE_HOME/fusor/vulkan.
//   FUSOR_VK_COOPMAT=0|force  fp16 matmuls on cooperative matrices: never / or a one-line error
//                           when the device has none (default: where the device has them).
//   FUSOR_VK_SPLIT_K=S      split-K for tiled matmuls (gemm.glsl) and implicit-GEMM convs
//                           (conv.glsl, K = C/G x R x S): unset/0 automatic (convs: tile grid
//                           smaller than 2 workgroups per compute unit; matmuls: about one per
//                           unit, balanced; K >= 512), 1 off, 2..64 force S slices.
//                           Cooperative-matrix matmuls ignore it (FUSOR_VK_COOPMAT_SPLIT_K).
//   FUSOR_VK_SPLIT_RULE=fill  the automatic split count of tiled matmuls as before 2026-12-01:
//                           tiles x S rounded up to fill the compute units (default: the S that
//                           spreads them most evenly, vk_tiles.cpp choose_split_k).
//   FUSOR_VK_SPLIT_MIN_SLICE=N, FUSOR_VK_SPLIT_PER_UNIT=U  the automatic split-K rule's
//                           constants for sweeps: K slices of at least N (default 256), U
//                           workgroups per compute unit aimed at (default 1 for tiled and
//                           cooperative-matrix matmuls, 2 for convs).
//   FUSOR_VK_PIPELINE_STATS=1  print the driver's statistics of every pipeline on stderr
//                           (VK_KHR_pipeline_executable_properties where offered: registers,
//                           binary size, shared memory); pipelines are created with
//                           CAPTURE_STATISTICS. A diagnostic (docs/benchmarks.md, seventh session).
//   FUSOR_VK_COOPMAT_SPLIT_K=S  split-K for cooperative-matrix matmuls (gemm_coopmat.glsl):
//                           unset/1 the automatic rule (tile grid smaller than 1 workgroup per
//                           compute unit, K >= 512), 0 off, 2..64 force S slices.
//   FUSOR_VK_COOPMAT_VEC=N  vector staging loads of gemm_coopmat.glsl's fp16 operands: unset/1
//                           the widest that fits (8 halves, else 4, 2), 2/4/8 at most that many
//                           halves per load (packed in uint / uvec2 / uvec4); 0 scalar loads.
//   FUSOR_VK_COOPMAT_DIRECT=1  gemm_coopmat.glsl FZ_CM_DIRECT: each subgroup loads its matrix
//                           fragments from the buffers (no shared slices, no K-loop barriers)
//                           where both operands are 8-half groups and M, N, K whole fragments.
//                           Same bits; off by default (2-2.6x slower on the H200).
//   FUSOR_VK_CONV_SHRINK=0  implicit-GEMM convs without split-K keep 64 x 64 tiles (default:
//                           halved down to 16 x 16 until about 128 workgroups, like matmuls).
//   FUSOR_VK_CONV_DB=0      implicit-GEMM convs on conv.glsl's previous K loop (one shared copy,
//                           two barriers a step, scalar weight loads) instead of the double-
//                           buffered, bank-padded one. For A/B runs of the conv kernels.
//   FUSOR_VK_CONV_TILE=M    register blocks of the implicit-GEMM convs (conv.glsl FZ_BLOCKED):
//                           auto (default: 8x8 / 8x4 / 4x4 blocked tiles for reductions
//                           C/G x R x S >= 1024 whose tiles are full and give every compute unit
//                           one; interleaved 4x4 otherwise), interleaved (never blocked), or
//                           4x4b / 4x8 / 8x4 / 8x8 (that block on every conv with at least half
//                           a tile of output channels and a whole tile of columns).
//   FUSOR_VK_GEMM_VEC4=0    scalar operand loads only, in both GEMM templates and conv.glsl's
//                           weights (default: convs with C/G x R x S % 4 == 0 load them 4-wide; tiled
//                           matmuls load 4-wide fp32 / fp16 / bf16 operands with unit stride along
//                           A's K or B's N and aligned 4-groups: vec4, f16vec4, uvec2 of packed
//                           bf16); it also overrides FUSOR_VK_COOPMAT_VEC.
//   FUSOR_VK_GEMM_TILE=4x4|8x8  register blocks of tiled matmuls (fp32, and fp16 / bf16 off the
//                           cooperative matrices): 4x4 the interleaved 64 x 64 tiles (thinner for
//                           skinny sides); 8x8 the blocked tiles of 16 x 16 threads (64 x 128 with
//                           4x8 blocks, 128 x 64 with 8x4, 128 x 128 with 8x8; vec4 shared reads).
//                           4x4b: 64 x 64 tiles with 4x4 blocks in the blocked layout (vec4
//                           shared reads, K slices of 32) on every tiled matmul. Unset: 4x4b
//                           where the tiles stay 64 x 64, interleaved 4x4 where they shrink.
//   FUSOR_VK_GEMM_BK=8|16|32  K slice depth of tiled matmuls (default 16; 8 for 128 x 128 tiles).
//   FUSOR_VK_GEMM_TILES=BM,BN,TM,TN  interleaved tiles of that size and register block for every
//                           tiled matmul (powers of two, 32 .. max invocations threads), split-K
//                           chosen for them; for tile sweeps (bench/vk_gemm_sweep.sh).
//   FUSOR_VK_GEMM_PREFETCH=1|2  K slices in flight in tiled matmuls: 2 (default) a second
//                           register set, slice s + 2 is fetched while s + 1 waits; 1 the one-slice
//                           loop. Same results bit for bit; 2 was 4-5% faster on the H200's
//                           DRAM-bound M = 64 layers (GPT-2 2L, MLP b64).
//   FUSOR_VK_GEMM_LITERAL=1  the tiled matmuls' tile sizes as literals in the GLSL rather than
//                           specialization constants (spirv-opt then unrolls the register loops).
//   FUSOR_VK_GEMV=old|new   matmuls with M <= 8: old (default) the first GEMV path; new the vector GEMV (gemm.glsl
//                           FZ_SKINNY 2: 4 columns a thread, B read as vec4 / f16vec4 / packed
//                           bf16 where its N has unit stride and 4-groups are aligned, K split
//                           over workgroups through the split-K workspace when the column strips
//                           give fewer than 4 workgroups per compute unit; slower on the H200);
//                           old (FZ_SKINNY 1: scalar loads, no split across workgroups).
//   FUSOR_VK_GEMV_SPLIT=S   vector GEMV only: unset/0 automatic, 1 off, 2..64 force S K slices.
//   FUSOR_VK_GEMV_COLS=C    columns a workgroup owns: new path 16..128 (default 64), old 8..32
//                           (default 16); powers of two.
//   FUSOR_VK_GEMV_THREADS=T workgroup size (power of two, 64..1024): new default 256, old 1024;
//                           halved where shared memory or the invocation limit is short.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "backends/backend.h"

namespace fusor {

std::unique_ptr<Backend> make_vulkan_backend();
// The Vulkan backend's fusion options (Backend::fusion_options): bf16 contraction operands
// take element-wise prologues (its half products stage operands themselves; fp16 ones not,
// measured slower on cooperative matrices); FUSOR_VK_HALF_PROLOGUES=0 | f16 | bf16 | all
// picks the dtypes that do (A/B runs).
FusionOptions vulkan_fusion_options(const CompileOptions& opts);

// Validation-layer messages (severity warning or error) seen by any Vulkan instance this
// process created with FUSOR_VK_VALIDATION=1, since start or the last reset.
int vulkan_validation_message_count();
std::string vulkan_validation_messages();  // the first ones, one per line (for test failures)
void vulkan_validation_reset();
// True when the last instance created asked for validation and the layer was present.
bool vulkan_validation_active();
// True when the loader can see VK_LAYER_KHRONOS_validation (scripts/setup.sh installs it;
// GPU machines often lack it).
bool vulkan_validation_layer_installed();

class Executable;
// Vulkan-specific facts about a compiled executable (nullopt-free: -1 when `e` is not a
// Vulkan executable). Barrier count is what the recorded command buffer contains.
int vulkan_barrier_count(const Executable& e);
// Device time of the last run's dispatches alone (RunStats::device_us also counts the staging
// copies of inputs/outputs), in microseconds; -1 when unknown.
double vulkan_last_kernel_us(const Executable& e);
// Kernels of `e` that run on cooperative matrices (fp16 matmuls, FUSOR_VK_COOPMAT); -1 when `e`
// is not a Vulkan executable. Executable::notes() names the matrix shape.
int vulkan_coopmat_kernel_count(const Executable& e);
// Matmul kernels of `e` that split K over several workgroups (gemm.glsl split-K chosen by
// vk_dialect.h choose_tiles or forced with FUSOR_VK_SPLIT_K; gemm_coopmat.glsl's only under
// FUSOR_VK_COOPMAT_SPLIT_K); -1 when `e` is not a Vulkan
// executable. Executable::notes() names the largest slice count.
int vulkan_split_k_kernel_count(const Executable& e);
// Conv kernels of `e` on conv.glsl's implicit GEMM with the double-buffered K loop (true, the
// default) or the previous one (false, FUSOR_VK_CONV_DB=0); the direct path counts in
// neither. -1 when `e` is not a Vulkan executable. Executable::notes() names both counts and
// how many double-buffered ones load their weights 4-wide (conv.glsl FZ_W_VEC4).
int vulkan_conv_gemm_kernel_count(const Executable& e, bool double_buffered);
// Matmul kernels of `e` on gemm.glsl's blocked register tiles (4x8 / 8x4 / 8x8 per thread,
// vk_dialect.h choose_tiles or FUSOR_VK_GEMM_TILE=8x8); -1 when `e` is not a Vulkan
// executable. Executable::notes() names the tile and block shapes.
int vulkan_blocked_kernel_count(const Executable& e);
// Pipelines `e` built (one shaderc compile or disk-cache hit and one vkCreateComputePipelines
// each): kernels with the same source, specialization and bindings, such as each layer of a
// transformer, share one, so this is at most the kernel count; -1 when `e` is not a Vulkan
// executable.
int vulkan_pipeline_count(const Executable& e);
// Vulkan objects alive in this process that executables own: VkDeviceMemory allocations and
// VkPipelines. Destroying a Session (or an executable the Session's cache evicts) returns both
// to what they were before it compiled them; tests bound a Session's memory with them.
struct VulkanLiveObjects {
  int64_t memory = 0, pipelines = 0;
};
VulkanLiveObjects vulkan_live_objects();

}  // namespace fusor
