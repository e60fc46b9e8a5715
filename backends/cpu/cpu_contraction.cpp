// Contractions of the cpu backend (cpu_interp.h): a tile of accumulators at a time, so that an
// operand element is read once per tile instead of once per output element. Every
// accumulator still sums its own products in double, starting at 0, in ascending k (matmul) or
// (channel, ky, kx) (conv) order: the same value as a dot product per element.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/cpu_interp.h"

namespace fusor {
namespace {

// Element `off` of a quantized B (MatMulDesc::dequant_b) through the op table's load rule,
// evaluated like any fused op (eval_scalar_typed), the value the GPU kernels print.
double dequant_b(const MatMulDesc& d, const CpuBuffers& bufs, int64_t off) {
  const MatMulDequant& q = *d.dequant_b;
  const CpuBuffer &b = bufs[d.b_buffer], &sc = bufs[q.scale_buffer];
  const int64_t p = (off / q.inner) % q.dim;
  HostScalar x[3] = {scalar_load(b.dtype, b.base, off), scalar_load(sc.dtype, sc.base, p), HostScalar{0.0}};
  DType t[3] = {b.dtype, sc.dtype, DType::f64};
  if (q.zp_buffer >= 0) {
    const CpuBuffer& zp = bufs[q.zp_buffer];
    x[2] = scalar_load(zp.dtype, zp.base, p), t[2] = zp.dtype;
  }
  return eval_scalar_typed(*q.op.op->load_rule, q.op.bound, x, t, q.op.math, q.op.dtype).f;
}

// Operand elements through their prologues (MatMulDesc::a_pre / b_pre) or B's dequantization.
double a_elem(const MatMulDesc& d, const CpuBuffer& A, int64_t off) {
  const double x = scalar_load(A.dtype, A.base, off).f;
  return d.a_pre ? d.a_pre->apply(x, A.dtype) : x;
}
double b_elem(const MatMulDesc& d, const CpuBuffers& bufs, int64_t off) {
  if (d.dequant_b) return dequant_b(d, bufs, off);
  const CpuBuffer& B = bufs[d.b_buffer];
  const double x = scalar_load(B.dtype, B.base, off).f;
  return d.b_pre ? d.b_pre->apply(x, B.dtype) : x;
}

// A kMr x kNr tile of accumulators held in registers over the whole K loop: out[i][j] =
// sum over q ascending of a[i][q] * panel[q][j], started at 0 (lane-wise IEEE double adds, so
// the same value as one scalar sum per element; the products of two floats are exact).
constexpr int64_t kMr = 4, kNr = 8;
typedef double v4d __attribute__((vector_size(32), aligned(8)));

__attribute__((target_clones("avx2", "default"))) void micro_tile(const float* a, int64_t sam, int64_t sak,
                                                                  const double* panel, int64_t K, double* out,
                                                                  int64_t ldo) {
  v4d c[kMr][2] = {};
  for (int64_t q = 0; q < K; ++q) {
    v4d b0, b1;
    __builtin_memcpy(&b0, panel + q * kNr, sizeof b0);
    __builtin_memcpy(&b1, panel + q * kNr + 4, sizeof b1);
    for (int64_t i = 0; i < kMr; ++i) {
      const double av = a[i * sam + q * sak];
      const v4d ab = {av, av, av, av};
      c[i][0] += ab * b0;
      c[i][1] += ab * b1;
    }
  }
  for (int64_t i = 0; i < kMr; ++i) {
    __builtin_memcpy(out + i * ldo, &c[i][0], sizeof c[i][0]);
    __builtin_memcpy(out + i * ldo + 4, &c[i][1], sizeof c[i][1]);
  }
}

// out[i * ldo + j] for rows i < rows, columns j < nt (nt <= kNr) of one panel: A rows by
// micro tiles, partial tiles through a scratch tile, leftover rows one sum per element.
void panel_product(const float* a, int64_t sam, int64_t sak, int64_t rows, const double* panel, int64_t K, int64_t nt,
                   double* out, int64_t ldo) {
  int64_t i = 0;
  for (; i + kMr <= rows; i += kMr) {
    if (nt == kNr) {
      micro_tile(a + i * sam, sam, sak, panel, K, out + i * ldo, ldo);
    } else {
      double t[kMr * kNr];
      micro_tile(a + i * sam, sam, sak, panel, K, t, kNr);
      for (int64_t r = 0; r < kMr; ++r) std::copy(t + r * kNr, t + r * kNr + nt, out + (i + r) * ldo);
    }
  }
  for (; i < rows; ++i)
    for (int64_t j = 0; j < nt; ++j) {
      double s = 0;
      for (int64_t q = 0; q < K; ++q) s += static_cast<double>(a[i * sam + q * sak]) * panel[q * kNr + j];
      out[i * ldo + j] = s;
    }
}

}  // namespace

void matmul_dots(const MatMulDesc& d, const CpuBuffers& bufs, const int64_t* a_off, int64_t a_sk, const int64_t* b_off,
                 int64_t b_sk, int cnt, double* out) {
  const CpuBuffer &A = bufs[d.a_buffer], &B = bufs[d.b_buffer];
  int j = 0;
  if (d.a_plain() && d.b_plain() && A.dtype == DType::f32 && B.dtype == DType::f32) {
    // Four elements at a time: four independent sums in flight, each still in ascending q.
    const float *a = reinterpret_cast<const float*>(A.base), *b = reinterpret_cast<const float*>(B.base);
    for (; j + 4 <= cnt; j += 4) {
      const float *a0 = a + a_off[j], *a1 = a + a_off[j + 1], *a2 = a + a_off[j + 2], *a3 = a + a_off[j + 3];
      const float *b0 = b + b_off[j], *b1 = b + b_off[j + 1], *b2 = b + b_off[j + 2], *b3 = b + b_off[j + 3];
      double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (int64_t q = 0; q < d.k; ++q) {
        const int64_t ia = q * a_sk, ib = q * b_sk;
        s0 += static_cast<double>(a0[ia]) * b0[ib];
        s1 += static_cast<double>(a1[ia]) * b1[ib];
        s2 += static_cast<double>(a2[ia]) * b2[ib];
        s3 += static_cast<double>(a3[ia]) * b3[ib];
      }
      out[j] = s0, out[j + 1] = s1, out[j + 2] = s2, out[j + 3] = s3;
    }
  }
  for (; j < cnt; ++j) {
    double s = 0;
    for (int64_t q = 0; q < d.k; ++q) s += a_elem(d, A, a_off[j] + q * a_sk) * b_elem(d, bufs, b_off[j] + q * b_sk);
    out[j] = s;
  }
}

void matmul_acc_rows(const MatMulDesc& d, const CpuBuffers& bufs, int64_t a_base, int64_t b_base, int64_t m0,
                     int64_t m1, double* acc) {
  const size_t r = d.a.strides.size();
  const int64_t N = d.n, K = d.k;
  const int64_t sam = d.a.strides[r - 2], sak = d.a.strides[r - 1];
  const int64_t sbk = d.b.strides[r - 2], sbn = d.b.strides[r - 1];
  const CpuBuffer &A = bufs[d.a_buffer], &B = bufs[d.b_buffer];
  if (d.a_plain() && d.b_plain() && A.dtype == DType::f32 && B.dtype == DType::f32) {
    const float* a = reinterpret_cast<const float*>(A.base) + a_base;
    const float* b = reinterpret_cast<const float*>(B.base) + b_base;
    // Panels of kNr columns of B, widened to double once and reused by every row tile.
    std::vector<double> panel(static_cast<size_t>(K * kNr));
    for (int64_t n0 = 0; n0 < N; n0 += kNr) {
      const int64_t nt = std::min(kNr, N - n0);
      for (int64_t q = 0; q < K; ++q)
        for (int64_t j = 0; j < kNr; ++j) panel[q * kNr + j] = j < nt ? static_cast<double>(b[q * sbk + (n0 + j) * sbn]) : 0.0;
      panel_product(a + m0 * sam, sam, sak, m1 - m0, panel.data(), K, nt, acc + n0, N);
    }
    return;
  }
  for (int64_t m = m0; m < m1; ++m)
    for (int64_t n = 0; n < N; ++n) {
      const int64_t oa = a_base + m * sam, ob = b_base + n * sbn;
      double s = 0;
      if (!d.a_plain() || !d.b_plain()) {
        for (int64_t q = 0; q < K; ++q) s += a_elem(d, A, oa + q * sak) * b_elem(d, bufs, ob + q * sbk);
      } else {
        for (int64_t q = 0; q < K; ++q)
          s += scalar_load(A.dtype, A.base, oa + q * sak).f * scalar_load(B.dtype, B.base, ob + q * sbk).f;
      }
      acc[(m - m0) * N + n] = s;
    }
}

namespace {

// One output plane, term by term in (channel, ky, kx) order, skipping taps outside the image.
void conv_plane(const ConvDesc& d, const CpuBuffers& bufs, int64_t n, int64_t ko, double* acc) {
  const CpuBuffer &X = bufs[d.x_buffer], &W = bufs[d.w_buffer];
  const int64_t cpg = d.c / d.groups, kpg = d.k / d.groups, g = ko / kpg;
  std::fill(acc, acc + d.oh * d.ow, 0.0);
  const bool f32 = X.dtype == DType::f32 && W.dtype == DType::f32;  // read directly
  const float* xf = reinterpret_cast<const float*>(X.base);
  const float* wf = reinterpret_cast<const float*>(W.base);
  // Valid output columns [lo, hi) per kernel column rx (0 <= ix < w).
  std::vector<int64_t> lo(d.s), hi(d.s);
  for (int64_t rx = 0; rx < d.s; ++rx) {
    lo[rx] = d.ow, hi[rx] = 0;
    for (int64_t ox = 0; ox < d.ow; ++ox) {
      const int64_t ix = ox * d.stride_w - d.pad_w + rx * d.dil_w;
      if (ix >= 0 && ix < d.w) lo[rx] = std::min(lo[rx], ox), hi[rx] = ox + 1;
    }
  }
  for (int64_t ci = 0; ci < cpg; ++ci) {
    const int64_t ch = g * cpg + ci;
    for (int64_t ry = 0; ry < d.r; ++ry)
      for (int64_t rx = 0; rx < d.s; ++rx) {
        const int64_t wi = ((ko * cpg + ci) * d.r + ry) * d.s + rx;
        const double wv = f32 ? static_cast<double>(wf[wi]) : 0.0;
        for (int64_t oy = 0; oy < d.oh; ++oy) {
          const int64_t iy = oy * d.stride_h - d.pad_h + ry * d.dil_h;
          if (iy < 0 || iy >= d.h) continue;
          const int64_t row = ((n * d.c + ch) * d.h + iy) * d.w - d.pad_w + rx * d.dil_w;
          double* out = acc + oy * d.ow;
          if (f32) {
            if (d.stride_w == 1) {
              // Indexed from xf, not xf + row: row alone may point before the buffer (padding).
              for (int64_t ox = lo[rx]; ox < hi[rx]; ++ox) out[ox] += static_cast<double>(xf[row + ox]) * wv;
            } else {
              for (int64_t ox = lo[rx]; ox < hi[rx]; ++ox) out[ox] += static_cast<double>(xf[row + ox * d.stride_w]) * wv;
            }
          } else {
            for (int64_t ox = lo[rx]; ox < hi[rx]; ++ox)
              out[ox] += scalar_load(X.dtype, X.base, row + ox * d.stride_w).f * scalar_load(W.dtype, W.base, wi).f;
          }
        }
      }
  }
}

// Output channels [ko0, ko1) of one group as a product of their weight rows with the image
// patches (columns: output positions; rows: (channel, ky, kx), the terms' order). A tap outside
// the image enters as 0.0: with finite weights its product is ±0, which leaves a sum that
// starts at +0 unchanged (it is never -0), so the value equals the skipping definition.
bool conv_as_product(const ConvDesc& d, const CpuBuffers& bufs, int64_t n, int64_t ko0, int64_t ko1, double* acc) {
  const CpuBuffer &X = bufs[d.x_buffer], &W = bufs[d.w_buffer];
  if (X.dtype != DType::f32 || W.dtype != DType::f32 || ko1 - ko0 < kMr) return false;
  const int64_t cpg = d.c / d.groups, g = ko0 / (d.k / d.groups), kq = cpg * d.r * d.s, plane = d.oh * d.ow;
  const float* w = reinterpret_cast<const float*>(W.base) + ko0 * kq;
  for (int64_t i = 0; i < (ko1 - ko0) * kq; ++i)
    if (!std::isfinite(w[i])) return false;
  const float* x = reinterpret_cast<const float*>(X.base) + (n * d.c + g * cpg) * d.h * d.w;
  std::vector<double> panel(static_cast<size_t>(kq * kNr));
  int64_t iy0[kNr], ix0[kNr];
  for (int64_t p0 = 0; p0 < plane; p0 += kNr) {
    const int64_t nt = std::min(kNr, plane - p0);
    for (int64_t j = 0; j < kNr; ++j) {
      const int64_t p = p0 + std::min(j, nt - 1);
      iy0[j] = (p / d.ow) * d.stride_h - d.pad_h, ix0[j] = (p % d.ow) * d.stride_w - d.pad_w;
    }
    double* col = panel.data();
    for (int64_t ci = 0; ci < cpg; ++ci)
      for (int64_t ry = 0; ry < d.r; ++ry)
        for (int64_t rx = 0; rx < d.s; ++rx, col += kNr)
          for (int64_t j = 0; j < kNr; ++j) {
            const int64_t iy = iy0[j] + ry * d.dil_h, ix = ix0[j] + rx * d.dil_w;
            col[j] = (iy >= 0 && iy < d.h && ix >= 0 && ix < d.w) ? static_cast<double>(x[(ci * d.h + iy) * d.w + ix]) : 0.0;
          }
    panel_product(w, kq, 1, ko1 - ko0, panel.data(), kq, nt, acc + p0, plane);
  }
  return true;
}

}  // namespace

void conv_acc_planes(const ConvDesc& d, const CpuBuffers& bufs, int64_t n, int64_t ko0, int64_t ko1, double* acc) {
  if (conv_as_product(d, bufs, n, ko0, ko1, acc)) return;
  for (int64_t ko = ko0; ko < ko1; ++ko) conv_plane(d, bufs, n, ko, acc + (ko - ko0) * d.oh * d.ow);
}

}  // namespace fusor
