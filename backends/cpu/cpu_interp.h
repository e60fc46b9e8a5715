// The cpu backend's interpreter of one fused KernelSpec (ir/kernel_spec.h), internal to
// backends/cpu. It evaluates the expression DAG over blocks of positions (a column of values
// per node) so that per-kernel decisions (node kind, dtype, strides) are taken once per block,
// not once per element. Per element it computes exactly what the element-at-a-time definition
// does: the same scalar functions (ir/scalar.h, eval_scalar_typed) in the same order, and each
// reduction / contraction sums its terms in the same order, so results are bit-identical.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "ir/kernel_spec.h"
#include "ir/scalar.h"

namespace fusor {

// Where a plan buffer lives for one executable: base pointer (arena or constant), dtype and
// element count. Indexed by buffer id; stable for the executable's lifetime.
struct CpuBuffer {
  std::byte* base = nullptr;
  DType dtype = DType::f32;
  int64_t numel = 0;
};
using CpuBuffers = std::vector<CpuBuffer>;

// One index set of a kernel (its rows, or the reduced positions of a row) as row-major
// iteration dims: size-1 dims dropped, neighbours merged where every view allows it (same
// enumeration order). strides[v][d]: view v's stride over dim d (views: loads, then outputs).
struct IterDims {
  std::vector<int64_t> size;
  std::vector<std::vector<int64_t>> strides;
  int64_t count = 1;
};

// Per-kernel decisions taken once (at compile): iteration dims and the nodes each phase needs.
struct PreparedKernel {
  IterDims outer, inner;                   // contraction kernels: outer spans the whole space
  std::vector<std::vector<int>> red_nodes;  // per reduction: nodes its body needs (ascending)
  std::vector<int> out_nodes;               // nodes the outputs need (ascending)
  std::vector<std::vector<int>> red_views;  // per reduction: views whose offsets its body needs
  std::vector<int> out_views;               // views the outputs need (their loads, the outputs)
};
PreparedKernel prepare_cpu_kernel(const KernelSpec& k);

// Runs a non-opaque kernel. Throws what the scalar functions throw (Error).
void run_cpu_kernel(const KernelSpec& k, const PreparedKernel& pk, const CpuBuffers& bufs);

// Contractions (backends/cpu/cpu_contraction.cpp). acc receives doubles, each the sum of its
// products in ascending k (matmul) or (channel, ky, kx) (conv) order, started at 0.
//  matmul: rows [m0, m1) of the batch whose A / B element offsets are a_base / b_base
//          (view offset plus batch coordinates times strides): acc[(m - m0) * N + n].
//  conv:   output planes of image n, channels [ko0, ko1) of one group: acc[((ko - ko0) * OH + oy) * OW + ox].
void matmul_acc_rows(const MatMulDesc& d, const CpuBuffers& bufs, int64_t a_base, int64_t b_base, int64_t m0,
                     int64_t m1, double* acc);
//  dots:   cnt elements: out[j] = sum over q < d.k of A(a_off[j] + q * a_sk) * B(b_off[j] + q * b_sk),
//          the operands through d's prologues (an inline contraction, KernelSpec::dots).
void matmul_dots(const MatMulDesc& d, const CpuBuffers& bufs, const int64_t* a_off, int64_t a_sk, const int64_t* b_off,
                 int64_t b_sk, int cnt, double* out);
void conv_acc_planes(const ConvDesc& d, const CpuBuffers& bufs, int64_t n, int64_t ko0, int64_t ko1, double* acc);

}  // namespace fusor
