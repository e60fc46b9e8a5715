// Vector widths of the contraction operands (VulkanDialect::choose_vec4, choose_conv_vec4,
// choose_coopmat_vec): which operand groups of 4 (fp32, fp16, bf16) or 2 / 4 / 8 halves a tiled,
// implicit-GEMM or cooperative-matrix kernel may load with one vector access. Declared in
// vk_dialect.h; split from vk_dialect.cpp along that seam.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "backends/vulkan/vk_dialect.h"

namespace fusor::vk {

void VulkanDialect::choose_vec4(const Plan& plan, const KernelSpec& k) {
  const char* env = std::getenv("FUSOR_VK_GEMM_VEC4");
  if ((env && std::strcmp(env, "0") == 0) || tiles_.bk % 4 != 0 || tiles_.bn % 4 != 0) return;
  // Bindings start at multiples of minStorageBufferOffsetAlignment: the 16-byte (fp32) or
  // 8-byte (fp16 / bf16) alignment of a 4-group then follows from the element offsets alone.
  if (dev_.min_storage_offset_alignment == 0 || dev_.min_storage_offset_alignment % 8 != 0) return;
  const bool align16 = dev_.min_storage_offset_alignment % 16 == 0;
  const MatMulDesc& m = *k.matmul;
  const size_t nb = k.space.size() - 2;
  const std::vector<int> binds = kernel_bindings(k);
  // The operand's slot and delta when every vec4 group starts at a multiple of 4 elements:
  // offset + delta, the batch strides and the outer stride all multiples of 4, unit inner stride.
  auto fits = [&](int buffer, const StridedView& v, int& slot, int64_t& delta, DType& type) {
    const DType t = plan.buffers[buffer].dtype;
    if (!(t == DType::f32 && align16) && t != DType::f16 && t != DType::bf16) return;
    if (v.strides.size() != k.space.size()) return;
    if (v.strides[nb + 1] != 1 || v.strides[nb] % 4 != 0) return;
    for (size_t i = 0; i < nb; ++i)
      if (k.space[i] > 1 && v.strides[i] % 4 != 0) return;
    const auto it = std::find(binds.begin(), binds.end(), buffer);
    if (it == binds.end()) return;
    const int s = static_cast<int>(it - binds.begin());
    const int64_t d = s < static_cast<int>(delta_.size()) ? delta_[s] : 0;
    if ((v.offset + d) % 4 != 0) return;
    slot = s, delta = d, type = t;
  };
  if (m.k % 4 == 0 && m.a_plain()) fits(m.a_buffer, m.a, a_vec4_slot_, a_vec4_delta_, a_vec4_type_);
  if (m.n % 4 == 0 && m.b_plain()) fits(m.b_buffer, m.b, b_vec4_slot_, b_vec4_delta_, b_vec4_type_);
  // One binding read as A and B (x @ x^T ...) is declared once, so both views need one type.
  if (a_vec4_slot_ >= 0 && a_vec4_slot_ == b_vec4_slot_ && a_vec4_type_ != b_vec4_type_) b_vec4_slot_ = -1;
}

void VulkanDialect::choose_conv_vec4(const Plan& plan, const KernelSpec& k) {
  // conv.glsl's weight slice [Kg, C/G x R x S] is read along kd: 4 at a time when kd and every
  // group of 4 (binding offset + delta; bindings are 16-byte aligned) are multiples of 4, so a
  // group is wholly inside or outside the K range and its vec4 aligned. fp32 weights only.
  const char* env = std::getenv("FUSOR_VK_GEMM_VEC4");
  if ((env && std::strcmp(env, "0") == 0) || tiles_.bk % 4 != 0) return;
  if (dev_.min_storage_offset_alignment == 0 || dev_.min_storage_offset_alignment % 16 != 0) return;
  const ConvDesc& c = *k.conv;
  if (c.c / std::max<int64_t>(c.groups, 1) * c.r * c.s % 4 != 0 || plan.buffers[c.w_buffer].dtype != DType::f32) return;
  const std::vector<int> binds = kernel_bindings(k);
  const auto it = std::find(binds.begin(), binds.end(), c.w_buffer);
  if (it == binds.end()) return;
  const int s = static_cast<int>(it - binds.begin());
  const int64_t d = s < static_cast<int>(delta_.size()) ? delta_[s] : 0;
  if (d % 4 != 0) return;
  a_vec4_slot_ = s, a_vec4_delta_ = d, a_vec4_type_ = DType::f32;
}

void VulkanDialect::choose_coopmat_vec(const Plan& plan, const KernelSpec& k) {
  // Unset or 1: the widest that fits; 2/4/8: at most that; 0: scalar staging loads. On by
  // default since the H200 run of the fourth session (fp16 MLP b64 72.2 -> 44.4 us with split-K).
  const char* ve = std::getenv("FUSOR_VK_COOPMAT_VEC");
  int cap = ve ? std::atoi(ve) : 1;
  if (cap == 1) cap = 8;
  if (const char* e = std::getenv("FUSOR_VK_GEMM_VEC4"); e && std::strcmp(e, "0") == 0) cap = 1;
  if (cap < 2) return;
  const MatMulDesc& m = *k.matmul;
  const size_t nb = k.space.size() - 2;
  const std::vector<int> binds = kernel_bindings(k);
  // The widest group (8, 4, 2 halves) for an fp16 operand whose groups run along `fast` (a view
  // dimension of extent `fast_n` and unit stride, tile extent `tile_fast`): that extent, the
  // other stride (where its extent is > 1), the batch strides and offset + delta all multiples
  // of the width, and bindings (minStorageBufferOffsetAlignment) aligned to its bytes, so every
  // group is wholly in or out of range and its vector element aligned. 0: scalar loads.
  auto width = [&](int buffer, const StridedView& v, size_t fast, int64_t fast_n, int tile_fast, size_t other, int64_t other_n,
                   int& slot, int64_t& delta) {
    const DType t = plan.buffers[buffer].dtype;
    if ((t != DType::f16 && t != DType::bf16) || v.strides.size() != k.space.size() || v.strides[fast] != 1) return 0;
    const auto it = std::find(binds.begin(), binds.end(), buffer);
    if (it == binds.end()) return 0;
    const int sl = static_cast<int>(it - binds.begin());
    const int64_t d = sl < static_cast<int>(delta_.size()) ? delta_[sl] : 0;
    for (int w = std::min(cap, 8); w >= 2; w /= 2) {
      bool ok = fast_n % w == 0 && tile_fast % w == 0 && (v.offset + d) % w == 0 && (other_n <= 1 || v.strides[other] % w == 0) &&
                dev_.min_storage_offset_alignment > 0 && dev_.min_storage_offset_alignment % (2 * w) == 0;
      for (size_t i = 0; i < nb && ok; ++i) ok = k.space[i] <= 1 || v.strides[i] % w == 0;
      if (ok) {
        slot = sl, delta = d;
        return w;
      }
    }
    return 0;
  };
  // The directions gemm_coopmat.glsl stages along: A's k when its K stride is 1, else m; B's n
  // when its N stride is 1 (or its K stride is not), else k.
  const StridedView &a = m.a, &b = m.b;
  // An operand prologue (or a dequantized B) is staged through its scalar loads.
  if (a.strides.size() == k.space.size() && m.a_plain()) {
    const bool a_kfast = a.strides[nb + 1] == 1;
    a_cm_vec_ = a_kfast ? width(m.a_buffer, a, nb + 1, m.k, tiles_.cm_bk, nb, m.m, a_cm_slot_, a_cm_delta_)
                        : width(m.a_buffer, a, nb, m.m, tiles_.bm, nb + 1, m.k, a_cm_slot_, a_cm_delta_);
    a_cm_col_ = !a_kfast;
  }
  if (b.strides.size() == k.space.size() && m.b_plain()) {
    const bool b_nfast = b.strides[nb + 1] == 1 || b.strides[nb] != 1;
    b_cm_vec_ = b_nfast ? width(m.b_buffer, b, nb + 1, m.n, tiles_.bn, nb, m.k, b_cm_slot_, b_cm_delta_)
                        : width(m.b_buffer, b, nb, m.k, tiles_.cm_bk, nb + 1, m.n, b_cm_slot_, b_cm_delta_);
    b_cm_col_ = !b_nfast;
  }
  // Scalar staging keeps row-major slices (gemm_coopmat.glsl).
  if (a_cm_vec_ < 2) a_cm_slot_ = -1, a_cm_vec_ = 0, a_cm_col_ = false;
  if (b_cm_vec_ < 2) b_cm_slot_ = -1, b_cm_vec_ = 0, b_cm_col_ = false;
}

void VulkanDialect::choose_coopmat_direct(const KernelSpec& k) {
  // gemm_coopmat.glsl FZ_CM_DIRECT, opt-in (FUSOR_VK_COOPMAT_DIRECT=1): both operands in 8-half
  // groups (every fragment then starts 16-byte aligned, its rows or columns a multiple of 16
  // bytes apart) and whole fragments along M, N and K (a fragment is wholly in range or out).
  // Off by default: on the H200 the driver's matrix loads from buffers made every fp16 / bf16
  // GEMM slower than staging through shared memory (64 x 768 x 3072: 36.8 vs 13.9 us; GPT-2 2L
  // fp16 265 vs 142 us; docs/benchmarks.md, twenty-fourth session). Same bits either way.
  const char* e = std::getenv("FUSOR_VK_COOPMAT_DIRECT");
  tiles_.cm_direct = 0;
  if (!(e && std::strcmp(e, "1") == 0) || !k.matmul || !tiles_.coopmat || a_cm_vec_ != 8 || b_cm_vec_ != 8) return;
  const MatMulDesc& m = *k.matmul;
  if (m.m % tiles_.cm_m != 0 || m.n % tiles_.cm_n != 0 || m.k % tiles_.cm_k != 0) return;
  tiles_.cm_direct = 1;
}

}  // namespace fusor::vk
