// Convolution kernels through cuDNN (issue 12, "convolution on both backends"). The fusion pass
// decides what a conv kernel computes (KernelSpec::conv, ir/kernel_spec.h); this only decides
// how the CUDA backend runs it: the NVRTC template (backends/cuda/cuda_conv_template.cpp) or
// one cudnnConvolutionForward (legacy API), followed by a generated epilogue kernel unless the
// kernel's only output is the bare convolution.
//
// Layout: x is the whole dense NCHW buffer, w the whole dense OIHW buffer ([K, C/groups, R, S]),
// y the conv output NCHW [N, K, OH, OW]; all three of one dtype (f32, f16 or bf16; cuDNN's
// legacy API has no mixed half-in / float-out configuration) with CUDNN_DATA_FLOAT compute.
// fp32 convolutions use CUDNN_FMA_MATH (never TF32), fp16/bf16 allow tensor-op math. y is the
// output itself, through a view with any positive strides (e.g. a channel slice of a Concat),
// when the kernel's only output is the bare conv in its dtype (Epilogue::none) or, fp32 only,
// conv + bias[k] or Relu(conv + bias[k]) (Epilogue::bias / relu_bias: one
// cudnnConvolutionBiasActivationForward, NaN propagated as ONNX Relu does); otherwise a dense
// scratch in the operand dtype that the generated epilogue reads as acc (Epilogue::kernel).
// For fp16/bf16 cuDNN rounds the fp32 sum to the dtype there, so it runs only convs whose acc
// has that dtype (a Conv without bias); a Conv with bias has an fp32 acc (ir/kernel_spec.h: the
// sum plus bias rounds once, as the one ONNX node does), which no legacy cuDNN configuration
// returns for fp16/bf16 operands, so those convs run on the NVRTC template.
//
// Algorithms: the implicit / precomputed-implicit / explicit GEMM family only (their fp32
// error is that of a dot product in another order); FFT, Winograd and direct need
// FUSOR_CUDA_CONV_ALGOS=all. cuDNN is loaded with dlopen("libcudnn.so.9", then "libcudnn.so"),
// so a binary built here starts where it is missing; the backend then uses the template.
#pragma once
#include <cuda.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "ir/kernel_spec.h"

namespace fusor {

struct LibraryConv {
  int64_t n = 0, c = 0, h = 0, w = 0;   // x: [N, C, H, W]
  int64_t k = 0, r = 0, s = 0;          // w: [K, C / groups, R, S]
  int64_t oh = 0, ow = 0;               // y: [N, K, OH, OW]
  int64_t pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, groups = 1;
  DType dtype = DType::f32;             // x, w and y
  int x_buffer = -1, w_buffer = -1;
  // none / bias / relu_bias: cuDNN writes output buffer `out_buffer` (from element y_offset,
  // element strides y_strides over [N, K, OH, OW]), adding bias[k] (f32 buffer bias_buffer
  // from element bias_offset) and applying max(., 0) as named. kernel: cuDNN writes a dense
  // scratch of scratch_bytes() and the generated epilogue kernel (cuda_kernel_source with
  // conv = this) stores the outputs. bias / relu_bias only with FUSOR_CUDA_CONV_EPILOGUE=cudnn
  // (cuDNN's fused call measured slower on the H200; the default is the generated epilogue).
  enum class Epilogue { none, bias, relu_bias, kernel } epilogue = Epilogue::kernel;
  int out_buffer = -1;
  int bias_buffer = -1;
  int64_t bias_offset = 0;
  int64_t y_offset = 0;
  std::array<int64_t, 4> y_strides{};
  int64_t scratch_bytes() const { return epilogue == Epilogue::kernel ? output_bytes() : 0; }
  int64_t output_bytes() const { return n * k * oh * ow * static_cast<int64_t>(dtype_size(dtype)); }
  bool fused() const { return epilogue == Epilogue::bias || epilogue == Epilogue::relu_bias; }
};

// How kernel k of p runs on cuDNN, or nullopt when it stays on the template: not a conv, x / w
// not whole dense buffers of the conv's shape, operands not all f32, f16 or bf16 of one dtype,
// an acc of another dtype than the operands' (KernelSpec::acc_dtype: fp16/bf16 with bias),
// sizes past cuDNN's 32-bit int arguments, pads whose symmetric form gives another output
// size, depthwise convolutions (groups == C == K: the direct template already reads each input
// element a few times only), fewer than 2^18 multiply-adds, or (the default policy, fp32 convs
// the template runs as an implicit GEMM) fewer than 132 output tiles of 64 x 64 (a batch-1
// layer: the template's split-K fills the GPU where cuDNN's legacy algorithms leave it idle)
// or fewer than 2^30 multiply-adds (measured faster on the template, docs/benchmarks.md).
// Each split-K template kernel holds its partial sums in a static __device__ workspace of
// its module (tiles x splits x 16 KiB at most, < 8.7 MB). FUSOR_CUDA_CONV
// overrides the policy: "template" never uses cuDNN, "cudnn" uses it for every expressible
// conv, "library" for every one of at least 2^18 multiply-adds that is not depthwise (the
// policy before the split-K template). Needs no GPU.
std::optional<LibraryConv> cuda_library_conv(const KernelSpec& k, const Plan& p);

// The NVRTC convolution template (cuda_conv_template.cpp): an implicit GEMM, Out_g[K/G,
// N*OH*OW] = W_g[K/G, C/G*R*S] x im2col(X)_g with the im2col matrix gathered while staging
// (never stored), fp32 FMA accumulation, split-K for few tiles; or a direct loop (one thread
// per output) for depthwise and other tiny reductions (C/G*R*S < 16 or K/G < 4).
struct CudaConvTiles {
  bool direct = false;
  int64_t bm = 64, bn = 64;  // output channels of a group x columns of N*OH*OW per tile (16, 32, 64)
  int64_t tiles = 0;         // over all groups
  int64_t splits = 1, chunk = 0;  // split-K: slices of `chunk` (a multiple of 16) of C/G*R*S
};
CudaConvTiles cuda_conv_tiles(const ConvDesc& c);
// The template's #define lines for conv c; sets work_items (blocks the template loops over)
// unless the direct loop is chosen (one thread per output: the caller's count stays).
std::string cuda_conv_config(const ConvDesc& c, int64_t& work_items);
const char* cuda_conv_template();

// The loaded cuDNN and one handle in the current CUDA context. available() is false (with
// why()) when the library or a symbol is missing or cudnnCreate failed; never throws.
class Cudnn {
 public:
  static std::unique_ptr<Cudnn> open();
  ~Cudnn();
  bool available() const { return handle_ != nullptr; }
  const std::string& why() const { return why_; }

  // One prepared cudnnConvolutionForward.
  class Call {
   public:
    ~Call();
    // Workspace the chosen algorithm needs (bytes).
    size_t workspace_bytes() const { return ws_need_; }
    // Remembers the device pointers (x, w, y, bias: 0 unless the epilogue uses it) and the
    // workspace (at least workspace_bytes()). Throws Error("cuda") when it is too small.
    void prepare(CUdeviceptr x, CUdeviceptr w, CUdeviceptr y, CUdeviceptr bias, CUdeviceptr workspace, size_t workspace_bytes);
    // Enqueues the convolution on `stream` (capturable). Throws Error("cuda").
    void enqueue(CUstream stream) const;

   private:
    friend class Cudnn;
    const Cudnn* dnn_ = nullptr;
    LibraryConv c_;
    void *xd_ = nullptr, *wd_ = nullptr, *yd_ = nullptr, *cd_ = nullptr, *bd_ = nullptr, *ad_ = nullptr;
    int algo_ = 0;
    size_t ws_need_ = 0, ws_bytes_ = 0;
    CUdeviceptr x_ = 0, w_ = 0, y_ = 0, b_ = 0, ws_ = 0;
  };
  // Descriptors for c and an algorithm (cudnnGetConvolutionForwardAlgorithm_v7, the first
  // allowed one whose workspace is at most max_workspace bytes; Epilogue::bias needs implicit
  // precomputed GEMM, the only one cuDNN fuses an identity activation with). Throws Error("cuda") when
  // cuDNN rejects the problem or has no allowed algorithm for it.
  std::unique_ptr<Call> make_call(const LibraryConv& c, size_t max_workspace) const;

 private:
  struct Api;
  Cudnn() = default;
  const Api* api_ = nullptr;
  void* handle_ = nullptr;
  std::string why_;
};

}  // namespace fusor
