// The CUDA convolution template (NVRTC) and its work decomposition: an implicit GEMM with
// split-K, the CUDA counterpart of the Vulkan backend's shaders/conv.glsl, and the direct loop
// for depthwise and other tiny reductions. Declared in cuda_conv.h.
#include <algorithm>
#include <string>

#include "backends/cuda/cuda_conv.h"

namespace fusor {
namespace {

// Macros from cuda_conv_config: FZ_CV_DIRECT; FZ_CV_BM / FZ_CV_BN (16, 32 or 64: output
// channels of a group x im2col columns N*OH*OW per tile), FZ_CV_TILES (tiles over all groups),
// FZ_SPLITS / FZ_KCHUNK (split-K: work item w = tile * FZ_SPLITS + slice reduces kd in
// [slice * FZ_KCHUNK, +FZ_KCHUNK)). 256 threads as 16 x 16, each a (BM/16) x (BN/16) block of
// rows ty + 16 i, columns tx + 16 j. K slices of 16 in two shared copies: while the FMAs run on
// one, this thread's share of the next loads into registers (one barrier per slice). Each
// output accumulates with fp32 FMAs in kd order within its slice; split partials are added in
// slice order by the tile's last workgroup to arrive (same bits every run), which zeroes the
// tile's counter for the next launch.
constexpr const char* kConvTemplate = R"(
#ifndef FZ_CV_DIRECT
#define FZ_CV_DIRECT 1
#endif
#if FZ_CV_DIRECT
extern "C" __global__ void __launch_bounds__(FZ_GROUP_SIZE) FZ_KERNEL_NAME(FZ_PARAMS) {
  FZ_GRID_DEPENDENCY();
  const fz_idx cpg = FZ_CC / FZ_GROUPS, kpg = FZ_CK / FZ_GROUPS;
  for (fz_idx i = (fz_idx)blockIdx.x * FZ_GROUP_SIZE + threadIdx.x; i < FZ_TOTAL; i += (fz_idx)gridDim.x * FZ_GROUP_SIZE) {
    const fz_idx ow = i % FZ_COW, oh = (i / FZ_COW) % FZ_COH, k = (i / (FZ_COW * FZ_COH)) % FZ_CK;
    const fz_idx n = i / (FZ_COW * FZ_COH * FZ_CK), g = k / kpg;
    float acc = 0.0f;
    for (fz_idx c = 0; c < cpg; ++c) {
      const fz_idx xc = (n * FZ_CC + g * cpg + c) * FZ_CH, wc = (k * cpg + c) * FZ_CR;
      for (fz_idx r = 0; r < FZ_CR; ++r) {
        const fz_idx ih = oh * FZ_SH - FZ_PH + r * FZ_DH;
        if (ih < 0 || ih >= FZ_CH) continue;
        for (fz_idx s = 0; s < FZ_CS; ++s) {
          const fz_idx iw = ow * FZ_SW - FZ_PW + s * FZ_DW;
          if (iw < 0 || iw >= FZ_CW) continue;
          acc = fmaf(FZ_LOAD_X((xc + ih) * FZ_CW + iw), FZ_LOAD_W((wc + r) * FZ_CS + s), acc);
        }
      }
    }
    FZ_EPILOGUE(acc, i);
  }
}
#else
#if FZ_GROUP_SIZE != 256
#error "the implicit-GEMM conv template is written for 16 x 16 threads"
#endif
#define FZ_CV_BK 16
#define FZ_CV_TM (FZ_CV_BM / 16)
#define FZ_CV_TN (FZ_CV_BN / 16)
#define FZ_CV_LW (FZ_CV_BK * FZ_CV_BM / 256)
#define FZ_CV_LX (FZ_CV_BK * FZ_CV_BN / 256)
#define FZ_CV_CG ((fz_idx)FZ_CC / FZ_GROUPS)
#define FZ_CV_KG ((fz_idx)FZ_CK / FZ_GROUPS)
#define FZ_CV_RS ((fz_idx)FZ_CR * FZ_CS)
#define FZ_CV_KD (FZ_CV_CG * FZ_CV_RS)
#define FZ_CV_OHW ((fz_idx)FZ_COH * FZ_COW)
#define FZ_CV_NCOL ((fz_idx)FZ_CN * FZ_CV_OHW)
// +1: the weight slice is stored down its columns (kd fastest), which would hit one bank.
__shared__ float fz_cw[2][FZ_CV_BK][FZ_CV_BM + 1];
__shared__ float fz_cx[2][FZ_CV_BK][FZ_CV_BN];
#if FZ_SPLITS > 1
__device__ float fz_ws[FZ_CV_TILES * FZ_SPLITS * FZ_CV_BM * FZ_CV_BN];
__device__ unsigned int fz_arrive[FZ_CV_TILES] = {0};
__shared__ int fz_last;
#endif
extern "C" __global__ void __launch_bounds__(FZ_GROUP_SIZE) FZ_KERNEL_NAME(FZ_PARAMS) {
  FZ_GRID_DEPENDENCY();
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  // Staging: weight element e = tid + q * 256 is (row e / BK, kd e % BK); im2col element
  // (kd xk + q * (256 / BN), column xc): a thread's column is the same for every slice.
  const int xc = tid % FZ_CV_BN, xk = tid / FZ_CV_BN;
  const fz_idx tiles_m = (FZ_CV_KG + FZ_CV_BM - 1) / FZ_CV_BM, tiles_n = (FZ_CV_NCOL + FZ_CV_BN - 1) / FZ_CV_BN;
  for (fz_idx work = blockIdx.x; work < (fz_idx)FZ_CV_TILES * FZ_SPLITS; work += gridDim.x) {
    const fz_idx tile = work / FZ_SPLITS, g = tile / (tiles_m * tiles_n), rem = tile % (tiles_m * tiles_n);
    const int slice = (int)(work % FZ_SPLITS);
    const fz_idx row0 = (rem / tiles_n) * FZ_CV_BM, col0 = (rem % tiles_n) * FZ_CV_BN;
    const fz_idx kbeg = (fz_idx)slice * FZ_KCHUNK, kend = kbeg + FZ_KCHUNK < FZ_CV_KD ? kbeg + FZ_KCHUNK : FZ_CV_KD;
    // This thread's im2col column: image base and input origin (a column past the end gets
    // an origin that fails the bounds test for every kd).
    const fz_idx col = col0 + xc, n = col < FZ_CV_NCOL ? col / FZ_CV_OHW : 0, p = col % FZ_CV_OHW;
    const fz_idx xbase = (n * FZ_CC + g * FZ_CV_CG) * FZ_CH * FZ_CW;
    const fz_idx ih0 = col < FZ_CV_NCOL ? (p / FZ_COW) * FZ_SH - FZ_PH : -(fz_idx)FZ_CH - FZ_CR * FZ_DH - 1;
    const fz_idx iw0 = (p % FZ_COW) * FZ_SW - FZ_PW;
    float rw[FZ_CV_LW], rx[FZ_CV_LX];
    float acc[FZ_CV_TM][FZ_CV_TN];
#pragma unroll
    for (int i = 0; i < FZ_CV_TM; ++i)
#pragma unroll
      for (int j = 0; j < FZ_CV_TN; ++j) acc[i][j] = 0.0f;
#define FZ_CV_FETCH(k0)                                                                                     \
  {                                                                                                         \
    _Pragma("unroll") for (int q = 0; q < FZ_CV_LW; ++q) {                                                  \
      const int e = tid + q * 256;                                                                          \
      const fz_idx gm = row0 + e / FZ_CV_BK, kd = (k0) + e % FZ_CV_BK;                                      \
      rw[q] = (gm < FZ_CV_KG && kd < kend) ? FZ_LOAD_W((g * FZ_CV_KG + gm) * FZ_CV_KD + kd) : 0.0f;         \
    }                                                                                                       \
    _Pragma("unroll") for (int q = 0; q < FZ_CV_LX; ++q) {                                                  \
      const fz_idx kd = (k0) + xk + q * (256 / FZ_CV_BN), c = kd / FZ_CV_RS, rs = kd % FZ_CV_RS;           \
      const fz_idx ih = ih0 + (rs / FZ_CS) * FZ_DH, iw = iw0 + (rs % FZ_CS) * FZ_DW;                        \
      rx[q] = (kd < kend && ih >= 0 && ih < FZ_CH && iw >= 0 && iw < FZ_CW) ? FZ_LOAD_X(xbase + (c * FZ_CH + ih) * FZ_CW + iw) : 0.0f; \
    }                                                                                                       \
  }
#define FZ_CV_STAGE(b)                                                                                                 \
  {                                                                                                                    \
    _Pragma("unroll") for (int q = 0; q < FZ_CV_LW; ++q) fz_cw[b][(tid + q * 256) % FZ_CV_BK][(tid + q * 256) / FZ_CV_BK] = rw[q]; \
    _Pragma("unroll") for (int q = 0; q < FZ_CV_LX; ++q) fz_cx[b][xk + q * (256 / FZ_CV_BN)][xc] = rx[q];               \
  }
    FZ_CV_FETCH(kbeg);
    FZ_CV_STAGE(0);
    __syncthreads();
    int buf = 0;
    for (fz_idx k0 = kbeg; k0 < kend; k0 += FZ_CV_BK) {
      const bool more = k0 + FZ_CV_BK < kend;
      if (more) FZ_CV_FETCH(k0 + FZ_CV_BK);
#pragma unroll
      for (int kk = 0; kk < FZ_CV_BK; ++kk) {
        float a[FZ_CV_TM], b[FZ_CV_TN];
#pragma unroll
        for (int i = 0; i < FZ_CV_TM; ++i) a[i] = fz_cw[buf][kk][ty + 16 * i];
#pragma unroll
        for (int j = 0; j < FZ_CV_TN; ++j) b[j] = fz_cx[buf][kk][tx + 16 * j];
#pragma unroll
        for (int i = 0; i < FZ_CV_TM; ++i)
#pragma unroll
          for (int j = 0; j < FZ_CV_TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
      if (more) FZ_CV_STAGE(buf ^ 1);
      __syncthreads();
      buf ^= 1;
    }
#if FZ_SPLITS > 1
#pragma unroll
    for (int i = 0; i < FZ_CV_TM; ++i)
#pragma unroll
      for (int j = 0; j < FZ_CV_TN; ++j) fz_ws[work * (FZ_CV_BM * FZ_CV_BN) + (ty + 16 * i) * FZ_CV_BN + tx + 16 * j] = acc[i][j];
    __threadfence();
    __syncthreads();
    if (tid == 0) fz_last = atomicAdd(&fz_arrive[tile], 1u) == FZ_SPLITS - 1;
    __syncthreads();
    if (!fz_last) continue;  // uniform: every thread read the same shared flag
    __threadfence();
#pragma unroll
    for (int i = 0; i < FZ_CV_TM; ++i)
#pragma unroll
      for (int j = 0; j < FZ_CV_TN; ++j) {
        float s = 0.0f;
        for (int sp = 0; sp < FZ_SPLITS; ++sp)
          s += __ldcg(&fz_ws[(tile * FZ_SPLITS + sp) * (FZ_CV_BM * FZ_CV_BN) + (ty + 16 * i) * FZ_CV_BN + tx + 16 * j]);
        acc[i][j] = s;
      }
    if (tid == 0) fz_arrive[tile] = 0;
#endif
#pragma unroll
    for (int i = 0; i < FZ_CV_TM; ++i)
#pragma unroll
      for (int j = 0; j < FZ_CV_TN; ++j) {
        const fz_idx m = row0 + ty + 16 * i, c = col0 + tx + 16 * j;
        if (m < FZ_CV_KG && c < FZ_CV_NCOL) FZ_EPILOGUE(acc[i][j], ((c / FZ_CV_OHW) * FZ_CK + g * FZ_CV_KG + m) * FZ_CV_OHW + c % FZ_CV_OHW);
      }
  }
}
#endif
)";

constexpr int64_t kUnits = 132;  // SMs of the H200; the codegen sees no device (as the GEMV's split)

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

const char* cuda_conv_template() { return kConvTemplate; }

CudaConvTiles cuda_conv_tiles(const ConvDesc& c) {
  CudaConvTiles t;
  const int64_t g = std::max<int64_t>(c.groups, 1), cg = c.c / g, kg = c.k / g, kd = cg * c.r * c.s, ncol = c.n * c.oh * c.ow;
  // As conv.glsl: a GEMM tile would be mostly padding for depthwise and other tiny reductions.
  if (kd < 16 || kg < 4 || ncol <= 0) {
    t.direct = true;
    return t;
  }
  // Few output channels or columns: 16- or 32-wide on that side, not 64 rows of padding.
  t.bm = kg <= 16 ? 16 : kg <= 32 ? 32 : 64;
  t.bn = ncol <= 16 ? 16 : ncol <= 32 ? 32 : 64;
  const auto tiles = [&] { return g * cdiv(kg, t.bm) * cdiv(ncol, t.bn); };
  // Too few tiles for about 2 blocks per SM and K long enough: split K in slices of >= 256
  // (whole 16-long steps), the workspace capped at 64 MiB; else smaller tiles until ~128.
  const int64_t target = 2 * kUnits;
  if (tiles() < target && kd >= 512) {
    int64_t s = std::min<int64_t>({cdiv(target, tiles()), kd / 256, 64});
    t.chunk = cdiv(cdiv(kd, s), 16) * 16;
    s = cdiv(kd, t.chunk);
    if (s > 1 && tiles() * s * t.bm * t.bn <= (int64_t{1} << 24)) t.splits = s;
  }
  if (t.splits == 1) {
    t.chunk = kd;
    while (tiles() < 128 && (t.bm > 16 || t.bn > 16)) {
      if (t.bm >= t.bn && t.bm > 16) t.bm /= 2;
      else t.bn /= 2;
    }
  }
  t.tiles = tiles();
  return t;
}

std::string cuda_conv_config(const ConvDesc& c, int64_t& work_items) {
  const CudaConvTiles t = cuda_conv_tiles(c);
  if (t.direct) return "#define FZ_CV_DIRECT 1\n";  // work_items: one thread per output (the caller's count)
  work_items = t.tiles * t.splits;
  return "#define FZ_CV_DIRECT 0\n#define FZ_CV_BM " + std::to_string(t.bm) + "\n#define FZ_CV_BN " + std::to_string(t.bn) +
         "\n#define FZ_CV_TILES " + std::to_string(t.tiles) + "\n#define FZ_SPLITS " + std::to_string(t.splits) + "\n#define FZ_KCHUNK " +
         std::to_string(t.chunk) + "\n";
}

}  // namespace fusor
