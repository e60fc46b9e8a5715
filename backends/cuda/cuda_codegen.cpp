// CUDA dialect of the shared emitter, its contraction templates, and NVRTC compilation with
// an on-disk CUBIN cache. Nothing here needs a GPU or the driver.
#include <nvrtc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_conv.h"
#include "runtime/disk_cache.h"

#ifndef FUSOR_CUDA_INCLUDE
#define FUSOR_CUDA_INCLUDE "/usr/local/cuda/include"
#endif

namespace fusor {
namespace {

// The fz_* vocabulary of ir/ops/elementwise.cpp in CUDA C. NaN tests use x != x (NVRTC does
// not enable fast-math, so the comparison is kept).
constexpr const char* kCudaHelpers = R"(typedef long long fz_i64;
#define FZ_FN static __device__ __forceinline__
// Programmatic dependent launch (sm_90+; CUDA Programming Guide, "Programmatic Dependent
// Launch"): every kernel starts with FZ_GRID_DEPENDENCY(), which waits until the kernels it
// depends on have completed and their writes are visible. Behind a programmatic graph edge the
// kernel is launched as the one before it retires (its blocks' exits are the trigger), not after
// its completion is processed; elsewhere, and on older GPUs, the wait is a no-op. No explicit
// early trigger (griddepcontrol.launch_dependents): with it, MLP b1 took 20.2 us against 15.7
// and squeezenet1_1 266 against 236 on an H100 (docs/benchmarks.md, thirty-fourth session),
// likely because dependents launched early land on the few SMs their predecessor freed first. The asm operand lists keep a space
// between their colons: a double colon not after a name keeps a source out of NVRTC batches.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define FZ_GRID_DEPENDENCY() asm volatile("griddepcontrol.wait;" : : : "memory")
#else
#define FZ_GRID_DEPENDENCY()
#endif
FZ_FN float fz_inf() { return __int_as_float(0x7f800000); }
FZ_FN float fz_nan() { return __int_as_float(0x7fffffff); }
// A compare and a select: fmaxf / fminf may return either zero of +0 and -0; ties give b, as
// ref (ir/ops/elementwise.cpp nan_max / nan_min).
FZ_FN float fz_max(float a, float b) { return (a != a || b != b) ? fz_nan() : (a > b ? a : b); }
FZ_FN float fz_min(float a, float b) { return (a != a || b != b) ? fz_nan() : (a < b ? a : b); }
FZ_FN float fz_round_even(float x) { return rintf(x); }
FZ_FN float fz_sign(float x) { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : (x == 0.0f ? 0.0f : x)); }
FZ_FN float fz_isnan(float x) { return x != x ? 1.0f : 0.0f; }
FZ_FN float fz_isinf(float x) { return fabsf(x) == fz_inf() ? 1.0f : 0.0f; }
FZ_FN float fz_fmod(float a, float b) { return fmodf(a, b); }
FZ_FN float fz_fmod_floor(float a, float b) {
  float r = fmodf(a, b);
  return r != 0.0f ? (((b < 0.0f) != (r < 0.0f)) ? r + b : r) : copysignf(0.0f, b);
}
FZ_FN float fz_log1p(float x) { return log1pf(x); }
FZ_FN float fz_expm1(float x) { return expm1f(x); }
FZ_FN float fz_div(float a, float b) { return a / b; }  // IEEE: NVRTC's default --prec-div=true
// Gelu-20: x Phi(x) through CUDA's normcdff (no 1 + erf cancellation below 0); below -12.5,
// where Phi(x) nears the subnormals (x * normcdff(x) was 16 ulp off past -13), normcdf in
// double, rounded once (only there: fp64 is slow on most GPUs, and this may be a GEMM
// epilogue). The tanh form as x sigmoid(2z), split as Sigmoid's (ir/ops/elementwise.cpp).
FZ_FN float fz_gelu(float x) { return x < -12.5f ? (float)((double)x * normcdf((double)x)) : x * normcdff(x); }
// Below -0.5 2z in double (exp turns an error d in 2z into |2z| d relative: 158 ulp at -9.5 in
// float); only there, fp64 being slow on most GPUs.
FZ_FN float fz_gelu_tanh(float x) {
  if (x < -0.5f) {
    double d = (double)x, z2 = 1.5957691216057308 * (d + 0.044715 * d * d * d), e = exp(z2);
    return (float)(d * (e / (1.0 + e)));
  }
  float z2 = 1.5957691216057308f * (x + 0.044715f * x * x * x);
  if (z2 < 0.0f) { float e = expf(z2); return x * (e / (1.0f + e)); }
  return x / (1.0f + expf(-z2));
}
// Pow in double, rounded once to float, as ref computes it (powf is within 4 ulp, not rounded
// once; C99 Annex F's special cases are the same in double).
FZ_FN float fz_powf(float a, float b) {
  double x = (double)a;  // x^2, x^3, x^4 as products (each rounds once in double, as pow)
  if (b == 2.0f) return (float)(x * x);
  if (b == 3.0f) return (float)(x * x * x);
  if (b == 4.0f) return (float)((x * x) * (x * x));
  return (float)pow(x, (double)b);
}
// Compensated fp32 sums (Sum / Mean reductions): s + c is within about an ulp of the exact sum;
// c sums every add's exact rounding error (Knuth's TwoSum). Ogita, Rump & Oishi 2005 (Sum2).
// A non-finite value or add makes c NaN; s is then the result. Same code as the GLSL helpers.
// a + b rounded, and its exact error in e (Knuth's TwoSum).
FZ_FN float fz_two_sum(float a, float b, float& e) {
  float t = __fadd_rn(a, b), z = __fsub_rn(t, a);
  e = __fadd_rn(__fsub_rn(a, __fsub_rn(t, z)), __fsub_rn(b, z));
  return t;
}
FZ_FN void fz_csum(float& s, float& c, float v) {
  float e;
  s = fz_two_sum(s, v, e);
  c = __fadd_rn(c, e);
}
// (s, c) += (s2, c2), symmetric in the two pairs (both lanes of a shuffle get the same bits).
FZ_FN void fz_csum2(float& s, float& c, float s2, float c2) {
  float e;
  s = fz_two_sum(s, s2, e);
  c = __fadd_rn(__fadd_rn(c, c2), e);
}
FZ_FN float fz_cfin(float s, float c) { return fabsf(c) <= 3.40282347e38f ? __fadd_rn(s, c) : s; }
// Round to odd before a narrower store (the GLSL helper's comment): m or its odd neighbour
// towards v, r having the sign of v - m.
FZ_FN float fz_odd_toward(float m, float r) {
  unsigned int b = __float_as_uint(m);
  if (r == 0.0f || (b & 1u) != 0u || m != m || fabsf(m) == fz_inf() || r != r) return m;
  if ((b & 0x7fffffffu) == 0u) return __uint_as_float(r > 0.0f ? 1u : 0x80000001u);
  return __uint_as_float((r > 0.0f) == (m > 0.0f) ? b + 1u : b - 1u);
}
FZ_FN float fz_cfin_odd(float s, float c) {
  if (!(fabsf(c) <= 3.40282347e38f)) return s;
  float e, t = fz_two_sum(s, c, e);
  return fz_odd_toward(t, e);
}
// (s + c) / (n + nl) with inv = RN(1 / n) (nl: the count's part past n, its fp32 rounding): q =
// s inv, one Markstein step makes it faithful, and the exact residual (fmas) plus c corrects
// it, rounded once; odd: rounded to odd for an fp16 / bf16 result. The pair renormalised, then
// scaled by 2^-64 / 2^64 into the range where the residual is exact, the mean scaled back.
// Markstein, "IA-64 and Elementary Functions" ch. 8.
FZ_FN float fz_cmean(float s, float c, float n, float inv, float nl, bool odd) {
  if (!(fabsf(c) <= 3.40282347e38f)) return s / n;
  {  // renormalised first (|c| <= ulp(s) / 2): after cancellation s may be 0 and c large
    float e;
    s = fz_two_sum(s, c, e);
    c = e;
  }
  float k = 1.0f;
  if (fabsf(s) > 1.2676506e30f) s = __fmul_rn(s, 5.42101086e-20f), c = __fmul_rn(c, 5.42101086e-20f), k = 1.84467441e19f;
  else if (fabsf(s) < 8.67361738e-19f) s = __fmul_rn(s, 1.84467441e19f), c = __fmul_rn(c, 1.84467441e19f), k = 5.42101086e-20f;
  float q = __fmul_rn(s, inv);
  q = fmaf(fmaf(-q, n, s), inv, q);
  float m = fmaf(__fadd_rn(fmaf(-q, nl, fmaf(-q, n, s)), c), inv, q);
  if (odd) m = fz_odd_toward(m, __fadd_rn(fmaf(-m, nl, fmaf(-m, n, s)), c));
  return __fmul_rn(m, k);
}
// bfloat16 is stored as its bits (unsigned short): the top half of a float32, rounded to
// nearest even (NaN stays a quiet NaN).
FZ_FN float fz_bf16_to_f32(unsigned int h) { return __uint_as_float(h << 16); }
FZ_FN unsigned short fz_f32_to_bf16(float f) {
  unsigned int u = __float_as_uint(f);
  if (f != f) return (unsigned short)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (unsigned short)(u >> 16);
}
)";

// Matmul, three shapes of work (chosen by CudaDialect::matmul_config):
//  * FZ_SKINNY 2 (M <= 8, the default): the vector GEMV, described at its #elif below.
//  * FZ_SKINNY 1 (M <= 8 under FUSOR_CUDA_GEMV=old, the first GEMV-like kernel): a block of 1024 threads owns 16 columns of one batch; its
//    64 groups of 16 threads stride over K (k = kg, kg+64, ...) so B rows are read in whole
//    32-byte sectors with many loads in flight; partial sums meet in shared memory, are added
//    by a fixed tree and group 0 runs the epilogue (the shape gemm.glsl measured fastest).
//  * tiled SGEMM: 64x64 output tile per block of 256 threads, K in steps of 16 through shared
//    memory, 4x4 outputs per thread (rows ty+16i, cols tx+16j so shared reads do not conflict).
//    With few tiles, K is split over FZ_SPLITS blocks: each writes its partial tile to a
//    module-global workspace and the last to arrive (atomic counter, reset for the next
//    launch) sums the partials in split order, so results stay deterministic, then runs the
//    epilogue. Operands are read through their strided views with bounds checks.
constexpr const char* kMatmulTemplate = R"(
#if FZ_SKINNY == 1
#ifndef FZ_SK_COLS
#define FZ_SK_COLS 16  // fp16 too: 32 measured no faster on the H200 (7.2 vs 7.1 us, 12.5 vs 8.6)
#endif
#define FZ_SK_KG (FZ_GROUP_SIZE / FZ_SK_COLS)
#ifndef FZ_SK_UNROLL
#define FZ_SK_UNROLL 4
#endif
#ifndef FZ_SK_RADIX
#define FZ_SK_RADIX 2
#endif
__shared__ float fz_part[FZ_SK_KG][FZ_M][FZ_SK_COLS + 1];
extern "C" __global__ void __launch_bounds__(FZ_GROUP_SIZE) FZ_KERNEL_NAME(FZ_PARAMS) {
  const int lane = threadIdx.x % FZ_SK_COLS, kg = threadIdx.x / FZ_SK_COLS;
  const fz_idx tiles_n = (FZ_N + FZ_SK_COLS - 1) / FZ_SK_COLS;
  FZ_GRID_DEPENDENCY();
  // FZ_TILES (matmul_config) counts the FZ_SK_COLS-wide tiles; the loop strides over them.
  for (fz_idx tile = blockIdx.x; tile < (fz_idx)FZ_BATCH * tiles_n; tile += gridDim.x) {
    const fz_idx batch = tile / tiles_n, n = (tile % tiles_n) * FZ_SK_COLS + lane;
    const fz_idx abase = fz_a_base(batch), bbase = fz_b_base(batch);
    float acc[FZ_M];
#pragma unroll
    for (int m = 0; m < FZ_M; ++m) acc[m] = 0.0f;
    if (n < FZ_N) {
      // FZ_SK_UNROLL rounds of the K loop at a time: their B loads are issued together, then the
      // FMAs run in the same ascending k (same bits as one round at a time).
      for (fz_idx k0 = kg; k0 < FZ_K; k0 += FZ_SK_KG * FZ_SK_UNROLL) {
        float bu[FZ_SK_UNROLL];
#pragma unroll
        for (int u = 0; u < FZ_SK_UNROLL; ++u) {
          const fz_idx k = k0 + u * FZ_SK_KG;
          bu[u] = k < FZ_K ? FZ_LOAD_B(bbase + k * FZ_B_SK + n * FZ_B_SN) : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < FZ_SK_UNROLL; ++u) {
          const fz_idx k = k0 + u * FZ_SK_KG;
          if (k < FZ_K) {
#pragma unroll
            for (int m = 0; m < FZ_M; ++m) acc[m] = fmaf(FZ_LOAD_A(abase + m * FZ_A_SM + k * FZ_A_SK), bu[u], acc[m]);
          }
        }
      }
    }
#pragma unroll
    for (int m = 0; m < FZ_M; ++m) fz_part[kg][m][lane] = acc[m];
    __syncthreads();
    // FZ_SK_RADIX 4: four groups' partials a round, a pair in a last round when FZ_SK_KG is no
    // power of 4; 2: pairs. Fixed orders (gemm.glsl's GEMV has the same trees).
    int s = FZ_SK_KG;
    for (; FZ_SK_RADIX == 4 && s >= 4;) {
      s /= 4;
      if (kg < s)
        for (int m = 0; m < FZ_M; ++m)
          fz_part[kg][m][lane] = (fz_part[kg][m][lane] + fz_part[kg + s][m][lane]) + (fz_part[kg + 2 * s][m][lane] + fz_part[kg + 3 * s][m][lane]);
      __syncthreads();
    }
    for (s /= 2; s > 0; s /= 2) {
      if (kg < s)
        for (int m = 0; m < FZ_M; ++m) fz_part[kg][m][lane] += fz_part[kg + s][m][lane];
      __syncthreads();
    }
    if (kg == 0 && n < FZ_N)
      for (int m = 0; m < FZ_M; ++m) FZ_EPILOGUE(fz_part[0][m][lane], (batch * FZ_M + m) * FZ_N + n);
    __syncthreads();
  }
}
#elif FZ_SKINNY == 2
// Vector GEMV (FUSOR_CUDA_GEMV=new, the default for M <= 8): work item w = tile * FZ_SPLITS +
// slice; a tile is FZ_SK_COLS columns of one batch, a slice FZ_KCHUNK rows of K. Lane l owns
// columns 4l .. 4l+3 and reads them with one 16-byte (fp32) or 8-byte (fp16 / bf16) load per
// k where B's N has unit stride, its row stride is a multiple of 4 and the batch's first
// element is aligned (checked on the pointer, once per work item); 4 scalar loads otherwise.
// FZ_GROUP_SIZE / (FZ_SK_COLS / 4) groups of lanes stride over the slice's K; partial sums
// meet in shared memory and are added by a fixed tree. With FZ_SPLITS > 1 the slices' sums go
// through the tiled path's workspace and arrival counters (fz_ws / fz_arrive): the last block
// to arrive adds them in slice order (deterministic), runs the epilogue, resets the counter.
#define FZ_GV_LANES (FZ_SK_COLS / 4)
#define FZ_GV_KG (FZ_GROUP_SIZE / FZ_GV_LANES)
#define FZ_GV_MC ((int)FZ_M * FZ_SK_COLS)
#if defined(FZ_B_ELEM) && FZ_B_SN == 1 && (FZ_B_SK % 4) == 0 && FZ_B_KIND >= 1 && FZ_B_KIND <= 3
#define FZ_GV_VEC 1
FZ_FN float4 fz_gv_load4(const void* p) {
#if FZ_B_KIND == 1
  return *(const float4*)p;
#else
  const uint2 u = *(const uint2*)p;
#if FZ_B_KIND == 2
  return make_float4(__half2float(__ushort_as_half((unsigned short)(u.x & 0xffffu))), __half2float(__ushort_as_half((unsigned short)(u.x >> 16))),
                     __half2float(__ushort_as_half((unsigned short)(u.y & 0xffffu))), __half2float(__ushort_as_half((unsigned short)(u.y >> 16))));
#else
  return make_float4(__uint_as_float(u.x << 16), __uint_as_float(u.x & 0xffff0000u), __uint_as_float(u.y << 16), __uint_as_float(u.y & 0xffff0000u));
#endif
#endif
}
#else
#define FZ_GV_VEC 0
#endif
__shared__ float4 fz_part[FZ_GV_KG * FZ_M * FZ_GV_LANES];
#if FZ_SPLITS > 1
__device__ float fz_ws[FZ_TILES_MN * FZ_SPLITS * FZ_GV_MC];
__device__ unsigned int fz_arrive[FZ_TILES_MN] = {0};
__shared__ int fz_last;
#endif
// Output i of the tile (row i / COLS, column i % COLS): component i % 4 of lane (i % COLS) / 4.
#define FZ_GV_OWN(i) (((const float*)&fz_part[((i) / FZ_SK_COLS) * FZ_GV_LANES])[(i) % FZ_SK_COLS])
extern "C" __global__ void __launch_bounds__(FZ_GROUP_SIZE) FZ_KERNEL_NAME(FZ_PARAMS) {
  FZ_GRID_DEPENDENCY();
  const int tid = threadIdx.x, lane = tid % FZ_GV_LANES, kg = tid / FZ_GV_LANES;
  const fz_idx tiles_n = (FZ_N + FZ_SK_COLS - 1) / FZ_SK_COLS;
  for (fz_idx w = blockIdx.x; w < (fz_idx)FZ_BATCH * tiles_n * FZ_SPLITS; w += gridDim.x) {
    const fz_idx t = w / FZ_SPLITS;
    const int slice = (int)(w % FZ_SPLITS);
    const fz_idx batch = t / tiles_n, col0 = (t % tiles_n) * FZ_SK_COLS, n = col0 + lane * 4;
    const fz_idx abase = fz_a_base(batch), bbase = fz_b_base(batch);
    const fz_idx kbeg = (fz_idx)slice * FZ_KCHUNK, kend = kbeg + FZ_KCHUNK < FZ_K ? kbeg + FZ_KCHUNK : FZ_K;
    float4 acc[FZ_M];
#pragma unroll
    for (int m = 0; m < FZ_M; ++m) acc[m] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#if FZ_GV_VEC
    if (n + 3 < FZ_N && (unsigned long long)&FZ_B_ELEM(bbase) % (4 * FZ_B_BYTES) == 0) {
#pragma unroll 4
      for (fz_idx k = kbeg + kg; k < kend; k += FZ_GV_KG) {
        const float4 b = fz_gv_load4(&FZ_B_ELEM(bbase + k * FZ_B_SK + n));
#pragma unroll
        for (int m = 0; m < FZ_M; ++m) {
          const float a = FZ_LOAD_A(abase + m * FZ_A_SM + k * FZ_A_SK);
          acc[m].x = fmaf(a, b.x, acc[m].x), acc[m].y = fmaf(a, b.y, acc[m].y);
          acc[m].z = fmaf(a, b.z, acc[m].z), acc[m].w = fmaf(a, b.w, acc[m].w);
        }
      }
    } else
#endif
    if (n < FZ_N) {
#pragma unroll 2
      for (fz_idx k = kbeg + kg; k < kend; k += FZ_GV_KG) {
        const fz_idx off = bbase + k * FZ_B_SK + n * FZ_B_SN;
        // (the buffers are b<slot>: these names stay clear of them)
        const float fz_x = FZ_LOAD_B(off), fz_y = n + 1 < FZ_N ? FZ_LOAD_B(off + FZ_B_SN) : 0.0f;
        const float fz_z = n + 2 < FZ_N ? FZ_LOAD_B(off + 2 * FZ_B_SN) : 0.0f, fz_w = n + 3 < FZ_N ? FZ_LOAD_B(off + 3 * FZ_B_SN) : 0.0f;
#pragma unroll
        for (int m = 0; m < FZ_M; ++m) {
          const float a = FZ_LOAD_A(abase + m * FZ_A_SM + k * FZ_A_SK);
          acc[m].x = fmaf(a, fz_x, acc[m].x), acc[m].y = fmaf(a, fz_y, acc[m].y);
          acc[m].z = fmaf(a, fz_z, acc[m].z), acc[m].w = fmaf(a, fz_w, acc[m].w);
        }
      }
    }
#pragma unroll
    for (int m = 0; m < FZ_M; ++m) fz_part[(kg * FZ_M + m) * FZ_GV_LANES + lane] = acc[m];
    __syncthreads();
    for (int s = FZ_GV_KG / 2; s > 0; s /= 2) {
      if (kg < s)
        for (int m = 0; m < FZ_M; ++m) {
          float4& d = fz_part[(kg * FZ_M + m) * FZ_GV_LANES + lane];
          const float4 o = fz_part[((kg + s) * FZ_M + m) * FZ_GV_LANES + lane];
          d.x += o.x, d.y += o.y, d.z += o.z, d.w += o.w;
        }
      __syncthreads();
    }
#if FZ_SPLITS > 1
    for (int i = tid; i < FZ_GV_MC; i += FZ_GROUP_SIZE) fz_ws[w * FZ_GV_MC + i] = FZ_GV_OWN(i);
    __threadfence();
    __syncthreads();
    if (tid == 0) fz_last = atomicAdd(&fz_arrive[t], 1u) == FZ_SPLITS - 1;
    __syncthreads();
    if (fz_last) {  // uniform: every thread read the same shared flag
      __threadfence();
      const fz_idx first = t * FZ_SPLITS * FZ_GV_MC;
      for (int i = tid; i < FZ_GV_MC; i += FZ_GROUP_SIZE) {
        const fz_idx col = col0 + i % FZ_SK_COLS;
        // Slice order; this block's own slice from shared memory (the bits it stored).
        float sum = slice == 0 ? FZ_GV_OWN(i) : __ldcg(&fz_ws[first + i]);
        for (int sp = 1; sp < FZ_SPLITS; ++sp) sum += sp == slice ? FZ_GV_OWN(i) : __ldcg(&fz_ws[first + sp * FZ_GV_MC + i]);
        if (col < FZ_N) FZ_EPILOGUE(sum, (batch * FZ_M + i / FZ_SK_COLS) * FZ_N + col);
      }
      if (tid == 0) fz_arrive[t] = 0;
    }
#else
    for (int i = tid; i < FZ_GV_MC; i += FZ_GROUP_SIZE) {
      const fz_idx col = col0 + i % FZ_SK_COLS;
      if (col < FZ_N) FZ_EPILOGUE(FZ_GV_OWN(i), (batch * FZ_M + i / FZ_SK_COLS) * FZ_N + col);
    }
#endif
    __syncthreads();
  }
}
#else
__shared__ float fz_as[16][65];
__shared__ float fz_bs[16][65];
#if FZ_SPLITS > 1
__device__ float fz_ws[FZ_TILES_MN * FZ_SPLITS * 4096];
__device__ unsigned int fz_arrive[FZ_TILES_MN] = {0};
__shared__ int fz_last;
#endif
extern "C" __global__ void __launch_bounds__(FZ_GROUP_SIZE) FZ_KERNEL_NAME(FZ_PARAMS) {
  FZ_GRID_DEPENDENCY();
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const fz_idx tiles_m = (FZ_M + 63) / 64, tiles_n = (FZ_N + 63) / 64;
  for (fz_idx work = blockIdx.x; work < FZ_TILES; work += gridDim.x) {
    const fz_idx tile = work / FZ_SPLITS, split = work % FZ_SPLITS;
    const fz_idx batch = tile / (tiles_m * tiles_n), rem = tile % (tiles_m * tiles_n);
    const fz_idx m0 = (rem / tiles_n) * 64, n0 = (rem % tiles_n) * 64;
    const fz_idx abase = fz_a_base(batch), bbase = fz_b_base(batch);
    const fz_idx kbeg = split * FZ_KCHUNK, kend = kbeg + FZ_KCHUNK < FZ_K ? kbeg + FZ_KCHUNK : FZ_K;
    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;
    for (fz_idx k0 = kbeg; k0 < kend; k0 += 16) {
      // Consecutive threads read consecutive addresses: along k, or along m for an operand
      // whose m stride is 1 and k stride is not (a transposed view); likewise for B below.
      for (int e = tid; e < 1024; e += 256) {
#if FZ_A_SM == 1 && FZ_A_SK != 1
        const int mm = e % 64, kk = e / 64;
#else
        const int mm = e / 16, kk = e % 16;
#endif
        const fz_idx gm = m0 + mm, gk = k0 + kk;
        fz_as[kk][mm] = (gm < FZ_M && gk < kend) ? FZ_LOAD_A(abase + gm * FZ_A_SM + gk * FZ_A_SK) : 0.0f;
      }
      for (int e = tid; e < 1024; e += 256) {
#if FZ_B_SK == 1 && FZ_B_SN != 1
        const int kk = e % 16, nn = e / 16;
#else
        const int kk = e / 64, nn = e % 64;
#endif
        const fz_idx gk = k0 + kk, gn = n0 + nn;
        fz_bs[kk][nn] = (gk < kend && gn < FZ_N) ? FZ_LOAD_B(bbase + gk * FZ_B_SK + gn * FZ_B_SN) : 0.0f;
      }
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < 16; ++kk) {
        float a[4], b[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) a[i] = fz_as[kk][ty + 16 * i];
#pragma unroll
        for (int j = 0; j < 4; ++j) b[j] = fz_bs[kk][tx + 16 * j];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
          for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
      __syncthreads();
    }
#if FZ_SPLITS > 1
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) fz_ws[work * 4096 + (ty + 16 * i) * 64 + tx + 16 * j] = acc[i][j];
    __threadfence();
    __syncthreads();
    if (tid == 0) fz_last = atomicAdd(&fz_arrive[tile], 1u) == FZ_SPLITS - 1;
    __syncthreads();
    if (!fz_last) continue;
    __threadfence();
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        float s = 0.0f;
        for (int sp = 0; sp < FZ_SPLITS; ++sp) s += __ldcg(&fz_ws[(tile * FZ_SPLITS + sp) * 4096 + (ty + 16 * i) * 64 + tx + 16 * j]);
        acc[i][j] = s;
      }
    if (tid == 0) fz_arrive[tile] = 0;
#endif
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const fz_idx gm = m0 + ty + 16 * i, gn = n0 + tx + 16 * j;
        if (gm < FZ_M && gn < FZ_N) FZ_EPILOGUE(acc[i][j], (batch * FZ_M + gm) * FZ_N + gn);
      }
  }
}
#endif
)";

// Epilogue of a matmul that cuBLASLt computed (LibraryGemm::Epilogue::kernel): the product,
// row-major over the kernel's space, arrives in fz_gemm; one thread per element.
constexpr const char* kLibraryEpilogueTemplate = R"(
extern "C" __global__ void __launch_bounds__(FZ_GROUP_SIZE) FZ_KERNEL_NAME(FZ_PARAMS, const float* __restrict__ fz_gemm) {
  FZ_GRID_DEPENDENCY();
  const fz_idx total = (fz_idx)FZ_BATCH * FZ_M * FZ_N;
  for (fz_idx i = (fz_idx)blockIdx.x * FZ_GROUP_SIZE + threadIdx.x; i < total; i += (fz_idx)gridDim.x * FZ_GROUP_SIZE)
    FZ_EPILOGUE(fz_gemm[i], i);
}
)";

// Epilogue of a conv that cuDNN computed (LibraryConv::Epilogue::kernel): the conv output, dense
// NCHW in the operands' dtype (FZ_CONV_T, read through FZ_CONV_F), arrives in fz_conv; one
// thread per element, the same linear index as the template's.
constexpr const char* kLibraryConvEpilogueTemplate = R"(
extern "C" __global__ void __launch_bounds__(FZ_GROUP_SIZE) FZ_KERNEL_NAME(FZ_PARAMS, const FZ_CONV_T* __restrict__ fz_conv) {
  FZ_GRID_DEPENDENCY();
  for (fz_idx i = (fz_idx)blockIdx.x * FZ_GROUP_SIZE + threadIdx.x; i < FZ_TOTAL; i += (fz_idx)gridDim.x * FZ_GROUP_SIZE)
    FZ_EPILOGUE(FZ_CONV_F(fz_conv[i]), i);
}
)";

// A power of two in [lo, hi] from the environment, else dflt.
int64_t env_pow2(const char* nm, int64_t lo, int64_t hi, int64_t dflt) {
  const char* e = std::getenv(nm);
  const int64_t v = e ? std::atoll(e) : 0;
  return v >= lo && v <= hi && (v & (v - 1)) == 0 ? v : dflt;
}
// FUSOR_CUDA_GEMV=new: the vector GEMV kernel (FZ_SKINNY 2); unset or "old": the first one
// (FZ_SKINNY 1), faster on the H200 at fp32 (MLP b1 14.9 vs 16.1 us; fp16 15.8 vs 14.5;
// docs/gemv.md).
bool gemv_new() {
  const char* e = std::getenv("FUSOR_CUDA_GEMV");
  return e && std::string(e) == "new";
}
// The vector GEMV's columns per block and block size for M rows: 64 x 256 unless the knobs say
// otherwise, the block halved while its partial sums (4 * M * cols * K groups bytes) would pass
// the 48 KiB of static shared memory.
std::pair<int64_t, int64_t> gemv_shape(int64_t m) {
  const int64_t cols = env_pow2("FUSOR_CUDA_GEMV_COLS", 16, 128, 64);
  int64_t threads = env_pow2("FUSOR_CUDA_GEMV_THREADS", 64, 1024, 256);
  while (threads > cols / 4 && 4 * std::max<int64_t>(m, 1) * cols * (threads / (cols / 4)) > 48 * 1024) threads /= 2;
  return {cols, threads};
}

struct CudaDialect : Dialect {
  CudaDialect() {
    name = "cuda";
    int64_type = "fz_i64";
    int64_suffix = "LL";
    func_qualifier = "static __device__ __forceinline__ ";
    local_id = "threadIdx.x";
    group_id = "blockIdx.x";
    num_groups = "gridDim.x";
    barrier = "__syncthreads();";
    unroll = "#pragma unroll\n";
    max_groups = 1 << 20;  // grid-stride loops make any count correct; this bounds launch size
    matmul_template = kMatmulTemplate;
    conv_template = cuda_conv_template();
  }
  std::string prelude(const KernelHeader& h) const override {
    return std::string(h.uses_f16 ? "#include <cuda_fp16.h>\n" : "") + kCudaHelpers;
  }
  std::string storage_type(DType t) const override {
    switch (t) {
      case DType::f32: return "float";
      case DType::f64: return "double";
      case DType::f16: return "__half";
      case DType::bf16: return "unsigned short";
      case DType::i8: return "signed char";
      case DType::u8: return "unsigned char";
      case DType::boolean: return "unsigned char";
      case DType::i16: return "short";
      case DType::u16: return "unsigned short";
      case DType::i32: return "int";
      case DType::u32: return "unsigned int";
      case DType::i64: return "long long";
      case DType::u64: return "unsigned long long";
      default: throw Unsupported("cuda", std::string("dtype ") + dtype_name(t) + " in a generated kernel");
    }
  }
  std::string to_float(DType t, const std::string& e) const override {
    if (t == DType::f16) return "__half2float(" + e + ")";
    if (t == DType::bf16) return "fz_bf16_to_f32(" + e + ")";
    return Dialect::to_float(t, e);
  }
  std::string from_float(DType t, const std::string& v) const override {
    if (t == DType::f16) return "__float2half_rn(" + v + ")";
    if (t == DType::bf16) return "fz_f32_to_bf16(" + v + ")";
    return Dialect::from_float(t, v);
  }
  std::string conv_config(const ConvDesc& c, int64_t& work_items) const override { return cuda_conv_config(c, work_items); }
  int64_t matmul_threads(int64_t m) const override {
    return m > 8 ? matmul_group_size : gemv_new() ? gemv_shape(m).second : 1024;
  }
  // Skinny for M <= 8 (the vector GEMV unless FUSOR_CUDA_GEMV=old); otherwise K is split while
  // the tiles alone would leave most of the ~132 SMs idle and each split keeps >= 128 of K
  // (>= 16 when the tiles fill under a quarter of them; workspace capped at 64 MiB).
  std::string matmul_config(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t& work) const override {
    auto cdiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
    if (m <= 8 && gemv_new()) {
      // 64 columns a block (16 lanes of 4); K split over blocks while the strips give fewer
      // than 528 (4 per SM of the H200: the codegen sees no device), each slice keeping >= 8
      // rounds of the K groups. FUSOR_CUDA_GEMV_COLS (16 .. 128) and FUSOR_CUDA_GEMV_SPLIT=S
      // (1 = off, 2 .. 64 forced) override.
      const auto [cols, threads] = gemv_shape(m);
      const int64_t kg = threads / (cols / 4);
      const int64_t tiles = batch * cdiv(n, cols), min_slice = 8 * kg;
      const char* e = std::getenv("FUSOR_CUDA_GEMV_SPLIT");
      const int64_t forced = e ? std::atoi(e) : 0;
      int64_t splits = 1;
      if (forced >= 1) splits = std::min<int64_t>(forced, 64);
      else if (tiles < 528 && k >= 2 * min_slice) splits = std::min<int64_t>({cdiv(528, tiles), k / min_slice, 64});
      const int64_t chunk = std::max<int64_t>(1, cdiv(cdiv(k, splits), kg) * kg);
      splits = std::max<int64_t>(1, cdiv(k, chunk));
      work = tiles * splits;
      return "#define FZ_SKINNY 2\n#define FZ_SK_COLS " + std::to_string(cols) + "\n#define FZ_SPLITS " + std::to_string(splits) +
             "\n#define FZ_TILES_MN " + std::to_string(tiles) + "\n#define FZ_KCHUNK " + std::to_string(chunk) + "\n";
    }
    if (m <= 8) {
      // 16 columns per block (the template's default); FUSOR_CUDA_GEMV_COLS=8|16|32|64 overrides.
      const char* e = std::getenv("FUSOR_CUDA_GEMV_COLS");
      const int knob = e ? std::atoi(e) : 0;
      const int cols = knob == 8 || knob == 16 || knob == 32 || knob == 64 ? knob : 16;
      work = batch * cdiv(n, cols);
      // FUSOR_CUDA_GEMV_UNROLL=1|2|4|8|16: rounds of the K loop whose loads issue together.
      // 16 on the H200 (MLP b1, two rounds): fp32 14.7 / 14.9 us against 15.9 / 16.3 with the
      // previous 4, fp16 15.1 / 15.5 against 16.9 / 17.1 (docs/benchmarks.md, twenty-third session).
      const int64_t unroll = env_pow2("FUSOR_CUDA_GEMV_UNROLL", 1, 16, 16);
      return "#define FZ_SKINNY 1\n#define FZ_SK_COLS " + std::to_string(cols) + "\n#define FZ_SK_UNROLL " + std::to_string(unroll) +
             "\n#define FZ_SK_RADIX " + std::to_string(gemv_tree_radix()) + "\n";
    }
    const int64_t tiles = batch * cdiv(m, 64) * cdiv(n, 64);
    int64_t splits = 1;
    // So few tiles that most SMs idle (attention's 12 heads x 64 x 64 scores, K = 64): K is split
    // down to one 16-deep slice per block, else slices keep >= 128 of K.
    const int64_t min_slice = tiles * 4 <= 132 ? 16 : 128;
    while (tiles * splits * 2 <= 256 && k / (splits * 2) >= min_slice && tiles * splits * 2 * 4096 <= (int64_t{1} << 24)) splits *= 2;
    const int64_t chunk = std::max<int64_t>(16, cdiv(cdiv(k, splits), 16) * 16);
    splits = std::max<int64_t>(1, cdiv(k, chunk));
    work = tiles * splits;
    return "#define FZ_SKINNY 0\n#define FZ_SPLITS " + std::to_string(splits) + "\n#define FZ_TILES_MN " + std::to_string(tiles) +
           "\n#define FZ_KCHUNK " + std::to_string(chunk) + "\n";
  }
  std::string shared_array(const std::string& type, const std::string& nm, int64_t count) const override {
    return "__shared__ " + type + " " + nm + "[" + std::to_string(count) + "];\n";
  }
  std::string params(const KernelHeader& h, bool restrict_ok) const {
    std::string s;
    for (auto& b : h.bindings) {
      s += std::string(s.empty() ? "" : ", ") + (b.written ? "" : "const ") + storage_type(b.dtype) + "* " +
           (restrict_ok && b.no_alias ? "__restrict__ " : "") + "b" + std::to_string(b.slot);
    }
    if (h.status_slot >= 0) s += std::string(s.empty() ? "" : ", ") + "unsigned int* fz_status";
    return s;
  }
  std::string declare_buffers(const KernelHeader& h) const override {
    if (h.status_slot < 0) return "";
    return "#define FZ_INDEX_ERROR atomicMax(fz_status, " + std::to_string(index_error_code(h.kernel_index)) + "u)\n";
  }
  std::string kernel_begin(const KernelHeader& h) const override {
    return "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(h.group_size) + ") " + h.name + "(" +
           params(h, true) + ") {\n  FZ_GRID_DEPENDENCY();\n";
  }
  std::string function_params(const KernelHeader& h) const override { return params(h, true); }
  std::string function_args(const KernelHeader& h) const override {
    std::string s;
    for (auto& b : h.bindings) s += std::string(s.empty() ? "" : ", ") + "b" + std::to_string(b.slot);
    if (h.status_slot >= 0) s += std::string(s.empty() ? "" : ", ") + "fz_status";
    return s;
  }
  // C's float functions by name, so no expression is evaluated in double by overload choice.
  std::string intrinsic(const std::string& nm) const override {
    static const std::map<std::string, std::string> f = {
        {"exp", "expf"},   {"log", "logf"},     {"sqrt", "sqrtf"},   {"tanh", "tanhf"},   {"erf", "erff"},
        {"sin", "sinf"},   {"cos", "cosf"},     {"tan", "tanf"},     {"asin", "asinf"},   {"acos", "acosf"},
        {"atan", "atanf"}, {"sinh", "sinhf"},   {"cosh", "coshf"},   {"asinh", "asinhf"}, {"acosh", "acoshf"},
        {"atanh", "atanhf"}, {"floor", "floorf"}, {"ceil", "ceilf"}, {"abs", "fabsf"},    {"pow", "fz_powf"},
        {"trunc", "truncf"}, {"round", "roundf"}, {"exp2", "exp2f"}, {"log2", "log2f"},   {"min", "fminf"},
        {"max", "fmaxf"},  {"atan2", "atan2f"}, {"log1p", "log1pf"}, {"expm1", "expm1f"}};
    if (nm == "pow" && driver_pow_knob()) return "powf";  // measuring only (Dialect::driver_pow_knob)
    auto it = f.find(nm);
    return it == f.end() ? nm : it->second;
  }
  // Warp shuffles, then one shared slot per warp combined in a fixed order so every thread
  // gets the same (deterministic) value.
  std::string group_reduce(const std::string& v, const std::string& comb, const std::string& red, int64_t g,
                           const std::string& type) const override {
    if (g % 32 != 0) return Dialect::group_reduce(v, comb, red, g, type);
    std::string s = "    for (int fz_o = 16; fz_o > 0; fz_o >>= 1) " + v + " = " + comb + "(" + v + ", __shfl_xor_sync(0xffffffffu, " + v + ", fz_o));\n";
    if (g == 32) return s;
    s += "    if ((fz_lid & 31) == 0) " + red + "[fz_lid >> 5] = " + v + ";\n    __syncthreads();\n";
    s += "    " + v + " = " + red + "[0];\n";
    s += "    for (int fz_w = 1; fz_w < " + std::to_string(g / 32) + "; ++fz_w) " + v + " = " + comb + "(" + v + ", " + red + "[fz_w]);\n";
    return s + "    __syncthreads();\n";
  }
  std::string group_reduce_csum(const std::string& s, const std::string& c, const std::string& red, const std::string& redc,
                                int64_t g) const override {
    if (g % 32 != 0) return Dialect::group_reduce_csum(s, c, red, redc, g);
    std::string t = "    for (int fz_o = 16; fz_o > 0; fz_o >>= 1) fz_csum2(" + s + ", " + c + ", __shfl_xor_sync(0xffffffffu, " + s +
                    ", fz_o), __shfl_xor_sync(0xffffffffu, " + c + ", fz_o));\n";
    if (g == 32) return t;
    t += "    if ((fz_lid & 31) == 0) " + red + "[fz_lid >> 5] = " + s + ", " + redc + "[fz_lid >> 5] = " + c + ";\n    __syncthreads();\n";
    t += "    {\n" + pairwise_csum(s, c, red, redc, g / 32, "      ") + "    }\n";
    return t + "    __syncthreads();\n";
  }
};

// The CUDA dialect for matmul kernels that run on cuBLASLt: the contraction template is only
// the epilogue, one thread per output element.
struct CudaLibraryEpilogueDialect : CudaDialect {
  CudaLibraryEpilogueDialect() { matmul_template = kLibraryEpilogueTemplate; }
  int64_t matmul_threads(int64_t) const override { return matmul_group_size; }
  std::string matmul_config(int64_t batch, int64_t m, int64_t n, int64_t, int64_t& work) const override {
    work = (batch * m * n + matmul_group_size - 1) / matmul_group_size;
    return "";
  }
};

const Dialect& library_epilogue_dialect() {
  static const CudaLibraryEpilogueDialect d;
  return d;
}

// The CUDA dialect for conv kernels that run on cuDNN: the conv template is only the epilogue,
// reading cuDNN's output of dtype t.
struct CudaLibraryConvEpilogueDialect : CudaDialect {
  explicit CudaLibraryConvEpilogueDialect(DType t) {
    conv_template = "#define FZ_CONV_T " + storage_type(t) + "\n#define FZ_CONV_F(v) " + to_float(t, "(v)") + "\n" +
                    kLibraryConvEpilogueTemplate;
  }
  // One thread per output element, as the template above expects.
  std::string conv_config(const ConvDesc&, int64_t&) const override { return ""; }
};

const Dialect& library_conv_epilogue_dialect(DType t) {
  static const CudaLibraryConvEpilogueDialect f32(DType::f32), f16(DType::f16), bf16(DType::bf16);
  return t == DType::f16 ? f16 : t == DType::bf16 ? bf16 : f32;
}

void nvrtc_check(nvrtcResult r, const char* call, const std::string& name) {
  if (r != NVRTC_SUCCESS) throw Error("cuda", std::string(call) + ": " + nvrtcGetErrorString(r) + " (kernel " + name + ")");
}

// Compiles to a CUBIN; the program is destroyed on every path.
std::vector<char> compile_cubin(const std::string& src, const std::string& name, const std::string& arch) {
  nvrtcProgram prog = nullptr;
  nvrtc_check(nvrtcCreateProgram(&prog, src.c_str(), (name + ".cu").c_str(), 0, nullptr, nullptr), "nvrtcCreateProgram", name);
  struct Guard {
    nvrtcProgram* p;
    ~Guard() { nvrtcDestroyProgram(p); }
  } guard{&prog};
  const std::string arch_opt = "--gpu-architecture=" + arch, inc = std::string("--include-path=") + FUSOR_CUDA_INCLUDE;
  // --fmad=false: each op of a fused expression rounds like the reference (codegen.h,
  // Dialect::value_qualifier); the templates' explicit fmaf calls stay fused.
  const char* opts[] = {arch_opt.c_str(), inc.c_str(), "--std=c++17", "--fmad=false"};
  nvrtcResult r = nvrtcCompileProgram(prog, 4, opts);
  if (r != NVRTC_SUCCESS) {
    size_t n = 0;
    nvrtcGetProgramLogSize(prog, &n);
    std::string log(n, '\0');
    if (n) nvrtcGetProgramLog(prog, log.data());
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    throw Error("cuda", std::string("nvrtcCompileProgram: ") + nvrtcGetErrorString(r) + ": kernel " + name + ":\n" + log);
  }
  size_t n = 0;
  nvrtc_check(nvrtcGetCUBINSize(prog, &n), "nvrtcGetCUBINSize", name);
  std::vector<char> cubin(n);
  nvrtc_check(nvrtcGetCUBIN(prog, cubin.data()), "nvrtcGetCUBIN", name);
  return cubin;
}


}  // namespace

const Dialect& cuda_dialect() {
  static const CudaDialect d;
  return d;
}

std::string cuda_kernel_source(const KernelSpec& k, const Plan& p, const LibraryGemm* library, const LibraryConv* conv) {
  if (conv) return conv->epilogue == LibraryConv::Epilogue::kernel ? emit_kernel(k, p, library_conv_epilogue_dialect(conv->dtype)) : "";
  if (!library) return emit_kernel(k, p, cuda_dialect());
  if (library->epilogue != LibraryGemm::Epilogue::kernel) return "";
  return emit_kernel(k, p, library_epilogue_dialect());
}

LaunchDims cuda_launch_dims(const KernelSpec& k, const Plan& p, const LibraryGemm* library, const LibraryConv* conv) {
  if (conv) return launch_dims(k, p, library_conv_epilogue_dialect(conv->dtype));
  return launch_dims(k, p, library ? library_epilogue_dialect() : cuda_dialect());
}

std::vector<std::pair<std::string, std::string>> cuda_generate_sources(const Plan& p) {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& k : p.kernels) {
    std::optional<LibraryGemm> lib = cuda_library_gemm(k, p);
    std::optional<LibraryConv> conv = cuda_library_conv(k, p);
    const LibraryGemm* l = lib ? &*lib : nullptr;
    const LibraryConv* c = conv ? &*conv : nullptr;
    // An empty iteration space (a zero-size dim) launches nothing, as in the backend: no source.
    const bool empty = cuda_launch_dims(k, p, l, c).groups == 0;
    out.emplace_back(kernel_identifier(k.name), empty ? std::string() : cuda_kernel_source(k, p, l, c));
  }
  return out;
}

void nvrtc_compile_check(const std::string& src, const std::string& name, const std::string& arch) {
  compile_cubin(src, name, arch);
}

std::string nvrtc_cache_key(const std::string& src, const std::string& arch) {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return src + "\n" + arch + "\nnvrtc " + std::to_string(major) + "." + std::to_string(minor) + " fmad=false";
}

std::vector<char> nvrtc_cubin(const std::string& src, const std::string& name, const std::string& arch, bool use_cache) {
  // A verified entry (runtime/disk_cache.h): a truncated, flipped, swapped or foreign file is
  // a miss and is recompiled and overwritten, never handed to the driver.
  const DiskCache cache(compile_cache_dir("cuda"), ".cubin");
  const std::string key = nvrtc_cache_key(src, arch);
  if (use_cache)
    if (std::optional<std::string> hit = cache.load(key); hit && !hit->empty()) return std::vector<char>(hit->begin(), hit->end());
  std::vector<char> cubin = compile_cubin(src, name, arch);
  cache.store(key, std::string(cubin.begin(), cubin.end()));
  return cubin;
}

}  // namespace fusor
