// The GLSL dialect the Vulkan backend gives the shared emitter (backends/codegen.h), one
// instance per kernel because slot placement and contraction tiling are per kernel.
//
// Binding model: slot i of a kernel is descriptor binding i, a storage buffer bound at the
// buffer's byte offset in the arena (or in the constants buffer). When that offset is not a
// multiple of minStorageBufferOffsetAlignment the binding starts at the aligned-down offset
// and `element_delta[i]` elements are added to every index of the slot in the source.
//
// Storage types: f32 float, f16 float16_t, bf16 uint16_t (converted in the shader), i32 int,
// u32 uint, i64 int64_t (uvec2 halves when the device lacks shaderInt64), u64 uint64_t,
// i16/u16 int16_t/uint16_t, i8/u8 int8_t/uint8_t, bool uint8_t (0/1). 8/16-bit types need
// the device's storageBuffer8/16BitAccess; otherwise Unsupported("vulkan", ...).
//
// Contraction kernels (matmul/conv) use the hand-written templates in shaders/ (gemm.glsl,
// conv.glsl) whose tile sizes are specialization constants (ids below); choose_tiles()
// picks them per problem and the dialect's matmul_tile_* / group sizes follow, so
// launch_dims() and FZ_TILES agree with the pipeline.
#pragma once
#include <map>
#include <algorithm>
#include <string>
#include <vector>

#include "backends/codegen.h"
#include "backends/vulkan/vk_device.h"

namespace fusor::vk {

// Specialization constants of the contraction templates (shaders/gemm.glsl, conv.glsl).
struct ContractionTiles {
  int bm = 64, bn = 64, bk = 16, tm = 4, tn = 4;
  int conv_direct = 0;  // conv only: 1 = one thread per output (depthwise / tiny reductions)
  // conv only, implicit GEMM: conv.glsl FZ_CONV_DB, 1 = double-buffered padded slices (the
  // default), 0 = the previous single-buffered loop (FUSOR_VK_CONV_DB=0, for A/B runs).
  int conv_db = 1;
  // matmul only, M <= 8: gemm.glsl's GEMV paths, 1 = the first (FUSOR_VK_GEMV=old), 2 = the
  // vector GEMV (the default; split-K across workgroups with split_k / split_slice below).
  int skinny = 0;
  int skinny_cols = 16; // columns per workgroup (FZ_SK_COLS: 8..32 on path 1, 16..128 on path 2)
  int skinny_threads = 256;  // its workgroup size (FZ_SK_THREADS, a power of two)
  int skinny_unroll = 1;     // the first path's K rounds whose loads issue together (FZ_SK_UNROLL)
  // matmul only, tiled, coopmat and vector GEMV paths: split-K (gemm.glsl / gemm_coopmat.glsl FZ_SPLIT_K). split_k > 1 slices K into pieces
  // of split_slice (a multiple of bk) per output tile; partial tiles go to a workspace bound
  // after the kernel's slots (splitk_workspace_bytes) and are added in slice order.
  int split_k = 1;
  int64_t split_slice = 0;
  // tiled matmuls and implicit-GEMM convs: gemm.glsl / conv.glsl FZ_BLOCKED, 16 x 16 threads
  // with tm, tn in {4, 8} read from vec4 shared slices (the bigger register blocks; 0 = the
  // interleaved layout).
  int blocked = 0;
  // matmul only: gemm_coopmat.glsl (fp16 operands on the matrix units, vk_coopmat.h). One
  // matrix operation is cm_m x cm_n x cm_k; cm_wm x cm_wn subgroups of cm_sg invocations, each
  // with cm_rm x cm_rn accumulators; K slices of cm_bk. bm / bn are then the workgroup tile.
  int coopmat = 0;
  int cm_m = 16, cm_n = 8, cm_k = 16, cm_wm = 2, cm_wn = 2, cm_rm = 2, cm_rn = 4, cm_bk = 32, cm_sg = 32;
  int cm_bf16 = 0;     // bf16 operands (FZ_CM_BF16; the module's matrix types retyped by coopmat_nv_to_khr)
  // B's rows a specialization constant (FZ_CM_KB_SPEC): A and B distinct SPIR-V types for a
  // square shape, so the KHR rewrite can give each its Use (bf16, and fp16 on KHR devices).
  int cm_kb_spec = 0;
  int cm_emulate = 0;  // FUSOR_VK_COOPMAT=emulate test hook (vk_coopmat.h): FZ_CM_EMULATE
  // gemm_coopmat.glsl FZ_CM_DIRECT: fragments loaded from the operands' buffers, no shared
  // slices (VulkanDialect::choose_coopmat_direct; FUSOR_VK_COOPMAT_DIRECT=0 never).
  int cm_direct = 0;
  int threads() const { return coopmat ? cm_wm * cm_wn * cm_sg : skinny ? skinny_threads : (bm / tm) * (bn / tn); }
  std::string coopmat_label() const;  // "coopmat 16x8x16" (+ " direct", " emulated"; "" when not coopmat)
  // Shared memory gemm_coopmat.glsl declares for this blocking at most (fp16 A/B slices, row-
  // or column-major with the leading dimension padded by 8 halves; the fp32 accumulator tile
  // padded by 4; split-K's flag lives in that padding).
  int64_t coopmat_shared_bytes() const {
    const int64_t a = 2 * std::max<int64_t>(int64_t{bm} * (cm_bk + 8), int64_t{cm_bk} * (bm + 8));
    const int64_t b = 2 * std::max<int64_t>(int64_t{cm_bk} * (bn + 8), int64_t{bn} * (cm_bk + 8));
    return a + b + int64_t{4} * bm * (bn + 4);
  }
};
constexpr uint32_t kSpecLocalSize = 0, kSpecBM = 1, kSpecBN = 2, kSpecBK = 3, kSpecTM = 4, kSpecTN = 5, kSpecConvDirect = 6;

// b_bytes: the matmul's B element size in memory (the GEMV path reads 32 columns of 2-byte B).
// split_budget: workspace bytes split-K may use (-1: no limit); a split needing more is not taken.
// Split-K is chosen when the tile grid has fewer than 2 workgroups per compute unit
// (PhysicalDeviceInfo::compute_units, 64 when unknown) and K allows slices of >= 192 (convs 256); the
// environment knob FUSOR_VK_SPLIT_K=S (1 = off, 2..64 = S slices on every tiled matmul whose K
// has more than one BK step; unset or 0 = automatic) overrides that choice.
// Register blocks: 64 x 64 tiles with 4x4 per thread (thinner for skinny sides).
// FUSOR_VK_GEMM_TILE=8x8 takes the blocked 16 x 16-thread tiles instead (64 x 128 with 4x8
// blocks, 128 x 64 with 8x4, 128 x 128 with 8x8; blocked = 1; measured slower on the H200, so
// opt-in); FUSOR_VK_GEMM_BK=8|16|32 sets the K slice depth (vulkan_backend.h).
ContractionTiles choose_tiles(const KernelSpec& k, const PhysicalDeviceInfo& dev, int b_bytes = 4, int64_t split_budget = -1);
// gemm_coopmat.glsl's tiles take the same split-K rule (per compute unit one workgroup, K step
// cm_bk) by default (FUSOR_VK_COOPMAT_SPLIT_K=0 turns it off, =S forces S slices).
// Bytes of the split-K workspace a matmul kernel with these tiles needs (0 without split-K):
// uint32 counters (one per output tile, padded to 4) then tiles * split_k
// partial BM x BN fp32 tiles (M x skinny_cols on the vector GEMV path). The executable zeroes it once; kernels leave the counters zero.
int64_t splitk_workspace_bytes(const ContractionTiles& t, const KernelSpec& k);
// Output tiles of the kernel's template (strips on the GEMV paths), and the counter region they
// need (rounded up to a multiple of 4 words). vk_tiles.cpp.
int64_t tile_count(const ContractionTiles& t, const KernelSpec& k);
int64_t split_counters(int64_t tiles);
// Sets t.split_k / t.split_slice for a matmul or implicit-GEMM conv whose tile grid cannot fill
// about per_unit workgroups per compute unit and whose reduction is >= 512; `knob` forces it
// (see choose_tiles). A split needing more workspace than split_budget (>= 0) is not taken.
// balance (the tiled matmuls): the count that spreads tiles x S most evenly over the compute
// units instead of the smallest that fills them (vk_tiles.cpp).
void choose_split_k(ContractionTiles& t, const KernelSpec& k, const PhysicalDeviceInfo& dev, int64_t split_budget,
                    int per_unit = 2, const char* knob = "FUSOR_VK_SPLIT_K", bool balance = false);
// The gemm_coopmat.glsl blocking for `batch` M x N x K matmuls with matrix shape `s`
// (vk_coopmat.h): 2 x 4 subgroups of one accumulator each, K slices of 128 (64, 32 for short K)
// as far as shared memory allows.
ContractionTiles choose_coopmat_tiles(const CoopmatShape& s, int64_t m, int64_t n, const PhysicalDeviceInfo& dev, int64_t batch = 1,
                                      int64_t k = 32);

class VulkanDialect : public Dialect {
 public:
  // element_delta: per slot (kernel_bindings order), elements added to every index. With the
  // plan, matmuls with fp16 operands may take gemm_coopmat.glsl (vk_coopmat.h choose_coopmat,
  // which throws under FUSOR_VK_COOPMAT=force on a device without cooperative matrices).
  // split_budget: see choose_tiles. A split-K kernel (tiles().split_k > 1) declares its
  // workspace as binding kernel_bindings(k).size() (+1 after an index-check status word):
  // coherent buffer FzSplit { uint cnt[<tiles, padded to 4>]; float part[]; } fz_split.
  VulkanDialect(const PhysicalDeviceInfo& dev, const KernelSpec& k, std::vector<int64_t> element_delta,
                const Plan* plan = nullptr, int64_t split_budget = -1);
  // The workspace bytes this kernel binds (splitk_workspace_bytes of its tiles, or with the
  // counter region widened by set_split_counters).
  int64_t split_workspace_bytes() const { return split_bytes_; }
  // Counters this kernel's workspace starts with (0 without split-K).
  int64_t split_counter_count() const { return split_cnt_; }
  // Every split-K kernel of an executable shares one workspace: all must declare the same
  // counter region (the plan's largest), or one kernel's partials would land on another's
  // counters and leave them non-zero for its next dispatch. Widens this kernel's to n.
  void set_split_counters(int64_t n);

  // A read-only slot bound in banks (vk_windows.h "Banked bindings"): element i of the buffer
  // (plus `delta`) is element (i + delta) % elems of bank (i + delta) / elems; bank 0 is the
  // slot's own binding, banks 1.. are bindings first_binding, first_binding + 1, ...
  struct Bank {
    int64_t elems = 0, delta = 0;
    int count = 0, first_binding = 0;
  };
  // Slots read through banks; set before the kernel is emitted (element() and
  // declare_buffers() read them).
  void set_banks(std::map<int, Bank> banks) { banks_ = std::move(banks); }

  // Push-constant view offsets (set before the kernel is emitted): the kernel declares
  // `layout(push_constant) uniform FzPush { int o[kPushOffsets]; } fz_pc;` and reads the offset
  // of view v (v < kPushOffsets, fitting int32) as fz_pc.o[v], so element-wise kernels that
  // differ only in their views' offsets print one source and share one pipeline;
  // push_values() (after emission) is what a dispatch pushes.
  static constexpr uint32_t kPushOffsets = 32;  // 128 bytes: maxPushConstantsSize's minimum
  void set_push_offsets(bool on) { push_offsets_ = on; }
  bool push_offsets() const { return push_offsets_; }
  const std::vector<int32_t>& push_values() const { return push_values_; }
  std::string view_offset(size_t view, const std::string& literal, int64_t offset) const override;

  const ContractionTiles& tiles() const { return tiles_; }
  // Operands of this matmul gemm.glsl loads 4 at a time (FZ_A_VEC4 / FZ_B_VEC4): 0, 1 or 2.
  int vector_operands() const { return (a_vec4_slot_ >= 0 ? 1 : 0) + (b_vec4_slot_ >= 0 ? 1 : 0); }
  bool contraction() const { return contraction_; }

  std::string prelude(const KernelHeader& h) const override;
  std::string storage_type(DType t) const override;
  std::string div_prep_literal(float b) const override;  // fz_div_prep(b) folded on the host
  std::string to_float(DType t, const std::string& e) const override;
  std::string from_float(DType t, const std::string& v) const override;
  std::string round_value(DType t, const std::string& v) const override;
  std::string to_index(DType t, const std::string& e) const override;
  std::string cast(const std::string& type, const std::string& e) const override;
  std::string element(int slot, const std::string& idx) const override;
  std::string declare_buffers(const KernelHeader& h) const override;
  // fp32 / fp16 / bf16 rows 4-wide (the binding declared once more, "b<slot>r"): bindings start 16-byte
  // aligned, so offset + the slot's element delta a multiple of 4 keeps every group aligned.
  // Not for banked slots or push-constant offsets. FUSOR_VK_ROW_VEC4=0 turns it off (measuring).
  bool row_vector_ok(int slot, DType t, int64_t offset) const override;
  // fp32 rows as vec4; fp16 as f16vec4 and bf16 as u16vec4 views (16-bit storage only: the
  // registers are vec4 / uvec4, converted whole on load and store; stored elements already
  // rounded to the 16-bit value, so the narrowing conversion is exact).
  std::string row_vector_type(DType t) const override {
    return t == DType::f32 ? "vec4" : t == DType::f16 ? "f16vec4" : t == DType::bf16 ? "u16vec4" : "";
  }
  std::string row_vector_register(DType t) const override { return t == DType::bf16 ? "uvec4" : "vec4"; }
  std::string row_vector_load(DType t, const std::string& e) const override {
    return t == DType::f32 ? e : row_vector_register(t) + "(" + e + ")";
  }
  std::string row_vector_store(DType t, const std::string& q) const override {
    return t == DType::f32 ? q : row_vector_type(t) + "(" + q + ")";
  }
  std::string row_vector_store_element(DType t, const std::string& v) const override {
    return t == DType::f16 ? "fz_round_f16(" + v + ")" : t == DType::bf16 ? "fz_f32_to_bf16(" + v + ")" : store_value(t, v);
  }
  std::string row_vector_element(int slot, const std::string& idx) const override;
  std::string shared_array(const std::string& type, const std::string& nm, int64_t count) const override;
  // FZ_SKINNY for gemm.glsl (FZ_SPLIT_K / FZ_SPLIT_SLICE with split-K, FZ_BLOCKED with blocked
  // tiles, FZ_A_VEC4 / FZ_B_VEC4 with FZ_LOAD_A4 / FZ_LOAD_B4 (a vec4) for fp32, fp16 and bf16
  // operands that 4-wide loads can read: unit stride along A's K / B's N, every 4-group aligned
  // to its 16 (fp32) or 8 (fp16, bf16) bytes; FUSOR_VK_GEMM_VEC4=0 turns them off, whose
  // work items are tiles x slices); the GEMV-like path runs one workgroup per tiles().skinny_cols columns;
  // FZ_CM_* for gemm_coopmat.glsl, with FZ_SPLIT_K / FZ_SPLIT_SLICE there too and FZ_CM_VA /
  // FZ_CM_VB with FZ_LOAD_AV / FZ_LOAD_BV (2, 4 or 8 packed halves per load, as uint / uvec2 /
  // uvec4 views of the binding) for fp16 operands whose unit-stride extent, other strides and
  // offset are multiples of the width; FUSOR_VK_COOPMAT_VEC=N caps the width (1: scalar loads),
  // FUSOR_VK_GEMM_VEC4=0 turns them off too.
  std::string matmul_config(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t& work_items) const override;
  // FZ_TILE_N_MAJOR: FUSOR_VK_TILE_ORDER=n / m forces column-strip / row-strip order; unset, the
  // coopmat template walks column strips (n_major_default) and the tiled one rows.
  static std::string tile_order(bool n_major_default);
  // conv.glsl's #defines: FZ_SPLIT_K / FZ_SPLIT_SLICE with split-K, FZ_W_VEC4 / FZ_LOAD_W4 for
  // 4-wide weight loads, FZ_BLOCKED for blocked register tiles, FZ_CONV_DB 0 under
  // FUSOR_VK_CONV_DB=0 and on the direct path.
  std::string conv_config(const ConvDesc& c, int64_t& work_items) const override;
  int64_t contraction_loop_trips(const KernelSpec& k, int64_t groups) const override;
  std::string const_array(const std::string& type, const std::string& nm, const std::vector<std::string>& values) const override {
    return glsl_const_array(type, nm, values);
  }
  std::string kernel_begin(const KernelHeader& h) const override;
  std::string intrinsic(const std::string& nm) const override;
  std::string group_reduce(const std::string& v, const std::string& comb, const std::string& red,
                           int64_t group_size, const std::string& type) const override;
  std::string compensated_mean(const std::string& s, const std::string& c, int64_t len, bool odd) const override {
    const auto [n, nl] = mean_count(len);
    const std::string prep = div_prep_literal(n);
    return prep.empty() ? Dialect::compensated_mean(s, c, len, odd)
                        : "fz_cmean(" + s + ", " + c + ", " + prep + ", " + fz_float_literal(nl) + (odd ? ", true)" : ", false)");
  }
  std::string group_reduce_csum(const std::string& s, const std::string& c, const std::string& red, const std::string& redc,
                                int64_t group_size) const override;
  // Typed values in GLSL: uint / int64_t / uint64_t / double, bitfieldExtract wrapping, the
  // integer and double helper overloads; double transcendentals are Unsupported (GLSL has none).
  std::string compute_type(DType t) const override;
  std::string wrap_small(DType t, const std::string& v) const override;
  // From two 32-bit words (the value, its sign word): lavapipe compared int64_t(int x) as if it
  // were never negative (red-team round 12: Abs / Less / Relu after Cast int32 -> int64).
  std::string sign_extend64(const std::string& type, const std::string& v) const override {
    return type + "(fz_sext64(int(" + v + ")))";
  }
  std::string int_literal(DType t, int64_t v) const override;
  std::string double_literal(double v) const override;
  std::string typed_intrinsic(const std::string& nm, DType math) const override;
  std::string typed_helpers(const KernelHeader& h) const override;

 private:
  void choose_vec4(const Plan& plan, const KernelSpec& k);  // sets a_/b_vec4_slot_
  void choose_conv_vec4(const Plan& plan, const KernelSpec& k);  // conv weights as a_vec4_slot_
  void choose_coopmat_vec(const Plan& plan, const KernelSpec& k);  // sets a_/b_cm_slot_, _vec_
  void choose_coopmat_direct(const KernelSpec& k);  // sets tiles_.cm_direct (after choose_coopmat_vec)
  const PhysicalDeviceInfo& dev_;
  std::vector<int64_t> delta_;
  std::map<int, Bank> banks_;
  bool push_offsets_ = false;
  mutable std::vector<int32_t> push_values_;  // filled by view_offset() during emission
  ContractionTiles tiles_;
  bool contraction_ = false;
  int64_t split_bytes_ = 0, split_cnt_ = 0;
  // gemm.glsl vector loads (FZ_A_VEC4 / FZ_B_VEC4): the operand's slot read 4 elements at a
  // time (-1: scalar loads), its element delta and storage dtype (f32 vec4, f16 f16vec4, bf16
  // uvec2 of packed pairs). A conv's fp32 weights use the A slot (conv.glsl FZ_W_VEC4).
  int a_vec4_slot_ = -1, b_vec4_slot_ = -1;
  int64_t a_vec4_delta_ = 0, b_vec4_delta_ = 0;
  // gemm_coopmat.glsl vector staging loads (FZ_CM_VA / FZ_CM_VB): the operand's slot read as
  // packed halves (-1: scalar loads), the halves per load (2, 4, 8) and its element delta.
  int a_cm_slot_ = -1, b_cm_slot_ = -1, a_cm_vec_ = 0, b_cm_vec_ = 0;
  // gemm_coopmat.glsl FZ_CM_A_COL / FZ_CM_B_COL: the operand's vector groups run along m (A) or
  // k (B), so its shared slice is column-major.
  bool a_cm_col_ = false, b_cm_col_ = false;
  int64_t a_cm_delta_ = 0, b_cm_delta_ = 0;
  DType a_vec4_type_ = DType::f32, b_vec4_type_ = DType::f32;
  bool subgroups_ = false;  // row kernel on a device with subgroup arithmetic
  bool shuffles_ = false;   // ... and subgroupShuffleXor
};

// The hand-written template bodies from shaders/*.glsl (embedded at build time).
const std::string& gemm_template();
const std::string& gemm_coopmat_template();
const std::string& conv_template();
// shaders/f64_math.glsl (GLSL text): the float64 transcendentals every f64 kernel includes.
const std::string& f64_math_source();

}  // namespace fusor::vk
