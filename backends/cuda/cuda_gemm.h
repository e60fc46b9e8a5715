// Matmul kernels through cuBLASLt (DESIGN.md: "big GEMMs through cuBLASLt, with fused epilogues
// where it has them"). The fusion pass decides what a kernel computes; this only decides how
// the CUDA backend runs a matmul kernel: the NVRTC SGEMM template (backends/cuda/cuda_codegen.cpp)
// or one cublasLtMatmul, followed by a generated epilogue kernel when cuBLASLt's own epilogues
// (bias, ReLU + bias) do not express the kernel's outputs.
//
// Layout: the plan's row-major C[b, M, N] = A[b, M, K] * B[b, K, N] is computed as the
// column-major product C^T = B^T * A^T, so cuBLASLt's operand "A" is our B and its "B" is our A;
// D is column-major [N, M] with leading dimension N, i.e. row-major C. Operands fp32, fp16
// (CUDA_R_16F) or bf16 (CUDA_R_16BF), both of one dtype; always CUBLAS_COMPUTE_32F (fp32
// accumulation, no TF32), alpha = 1, beta = 0. D is the output's dtype when cuBLASLt writes the
// output, which it then does only when that is the acc's dtype (KernelSpec::acc_dtype: the
// operands' dtype, the fp32 sum rounded to nearest even as the spec rounds the product, or f32
// for the fp32 result of a decomposed fp16/bf16 Gemm, 16F/16BF operands with a 32F D). Else D
// is an fp32 scratch that the generated epilogue reads as the fp32 accumulator, exactly as the
// template's acc, and rounds once more only where acc has the operands' dtype.
//
// cuBLASLt is loaded with dlopen("libcublasLt.so.<major>") like the driver, so a binary built
// with CUDA still starts where it is missing; the backend then uses the template.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "ir/kernel_spec.h"

namespace fusor {

struct LibraryGemm {
  // One cuBLASLt operand: `buffer` read from element `offset`, stored column-major as rows x cols
  // with leading dimension ld (elements), transposed by the op when `trans`; consecutive batches
  // `batch_stride` elements apart (0 = the same matrix for every batch).
  struct Operand {
    int buffer = -1;
    int64_t offset = 0;
    bool trans = false;
    int64_t rows = 0, cols = 0, ld = 0, batch_stride = 0;
  };
  int64_t batch = 1, m = 0, n = 0, k = 0;  // the plan's sizes (C is [batch, M, N])
  DType operand_dtype = DType::f32;         // x and y: f32, f16 or bf16
  DType out_dtype = DType::f32;             // D: the output's dtype, or f32 (Epilogue::kernel's scratch)
  Operand x;  // cuBLASLt "A": our B, op(x) is N x K
  Operand y;  // cuBLASLt "B": our A, op(y) is K x M
  // none / bias / relu_bias: cuBLASLt writes the kernel's only output (`out_buffer`, of the
  // acc's dtype) itself, adding bias[n] (f32 buffer `bias_buffer` from element `bias_offset`;
  // fp32 kernels only) and applying max(., 0) as named. kernel: D goes to a scratch buffer that the generated
  // epilogue kernel (cuda_kernel_source with library = true) reads.
  enum class Epilogue { none, bias, relu_bias, kernel } epilogue = Epilogue::kernel;
  int bias_buffer = -1;
  int64_t bias_offset = 0;
  int out_buffer = -1;
  // Where D goes (elements): row m of batch b starts at d_offset + b * d_batch_stride + m * d_ld.
  // The scratch of Epilogue::kernel is dense (0, m * n, n); a direct output may be a permuted
  // view, e.g. attention's product stored as [b, s, h, d].
  int64_t d_offset = 0, d_ld = 0, d_batch_stride = 0;
  int64_t scratch_elements() const { return epilogue == Epilogue::kernel ? batch * m * n : 0; }
};

// How kernel k of p runs on cuBLASLt, or nullopt when it stays on the template: not a matmul,
// operands that are not both f32, f16 or bf16, operand views cuBLASLt cannot express (no unit stride in either
// matrix dim, batch offsets that are not one arithmetic progression), M <= 8 (the template's
// GEMV-like kernel is better there), or fewer than 2^18 multiply-adds. The environment
// variable FUSOR_CUDA_GEMM overrides the size policy: "template" never uses cuBLASLt,
// "cublaslt" uses it for every expressible matmul. Needs no GPU.
std::optional<LibraryGemm> cuda_library_gemm(const KernelSpec& k, const Plan& p);

// The loaded cuBLASLt and one handle, in the current CUDA context. available() is false (with
// why()) when the library or a symbol is missing or cublasLtCreate failed; never throws.
class CublasLt {
 public:
  static std::unique_ptr<CublasLt> open();
  // Loads libcublasLt (dlopen, once per process; a large library) without making a handle, so
  // open() later skips that cost. Needs no context; never throws.
  static void preload();
  ~CublasLt();
  bool available() const { return handle_ != nullptr; }
  const std::string& why() const { return why_; }

  // One prepared cublasLtMatmul.
  class Call {
   public:
    ~Call();
    // Chooses an algorithm for these device pointers (their alignment matters) and remembers
    // them; bias may be 0 unless the epilogue uses it. Throws Error("cuda") when cuBLASLt
    // rejects the problem or has no algorithm for it.
    void prepare(CUdeviceptr x, CUdeviceptr y, CUdeviceptr d, CUdeviceptr bias, CUdeviceptr workspace, size_t workspace_bytes);
    // Enqueues the prepared call on `stream` (capturable). Throws Error("cuda").
    void enqueue(CUstream stream) const;

   private:
    friend class CublasLt;
    const CublasLt* lt_ = nullptr;
    LibraryGemm g_;
    void *desc_ = nullptr, *lx_ = nullptr, *ly_ = nullptr, *ld_ = nullptr;
    unsigned char algo_[64] = {};  // cublasLtMatmulAlgo_t (opaque, 64 bytes)
    CUdeviceptr x_ = 0, y_ = 0, d_ = 0, ws_ = 0;
    size_t ws_bytes_ = 0;
    float alpha_ = 1.0f, beta_ = 0.0f;
  };
  // Descriptors for g; throws Error("cuda") on failure.
  std::unique_ptr<Call> make_call(const LibraryGemm& g) const;

 private:
  struct Api;
  CublasLt() = default;
  const Api* api_ = nullptr;
  void* handle_ = nullptr;
  std::string why_;
};

}  // namespace fusor
