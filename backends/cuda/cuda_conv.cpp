// cuDNN for conv kernels: which kernels use it and how (pure, testable without a GPU), and the
// dlopen'd legacy-API calls.
#include "backends/cuda/cuda_conv.h"

#include <dlfcn.h>

#include <cstdlib>
#include <type_traits>

namespace fusor {

namespace {

// The part of cuDNN 9's legacy API used here, declared by hand: Debian ships no cuDNN headers
// and the build must not need them. Each value and signature is checked against cudnn_graph.h,
// cudnn_ops.h and cudnn_cnn.h of cuDNN 9.28 (opaque handles/descriptors are pointers, enums int).
using cudnnStatus_t = int;            // cudnn_graph.h: CUDNN_STATUS_SUCCESS = 0
constexpr cudnnStatus_t CUDNN_STATUS_SUCCESS = 0;
using cudnnDataType_t = int;          // cudnn_graph.h
constexpr cudnnDataType_t CUDNN_DATA_FLOAT = 0, CUDNN_DATA_HALF = 2, CUDNN_DATA_BFLOAT16 = 9;
constexpr int CUDNN_TENSOR_NCHW = 0;  // cudnnTensorFormat_t
constexpr int CUDNN_CROSS_CORRELATION = 1;  // cudnnConvolutionMode_t (ONNX Conv does not flip)
constexpr int CUDNN_ACTIVATION_RELU = 1, CUDNN_ACTIVATION_IDENTITY = 5;  // cudnnActivationMode_t (cudnn_graph.h)
constexpr int CUDNN_PROPAGATE_NAN = 1;                                 // cudnnNanPropagation_t
constexpr int kAlgoImplicitPrecompGemm = 1;
using cudnnMathType_t = int;          // cudnn_graph.h
constexpr cudnnMathType_t CUDNN_DEFAULT_MATH = 0, CUDNN_TENSOR_OP_MATH = 1, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION = 2,
                          CUDNN_FMA_MATH = 3;
// cudnnConvolutionFwdAlgo_t (cudnn_ops.h): 0 implicit GEMM, 1 implicit precomputed GEMM,
// 2 explicit GEMM, 3 direct, 4 FFT, 5 FFT tiling, 6 Winograd, 7 Winograd non-fused; 8 = count.
constexpr int kFwdAlgoCount = 8;
// cudnnConvolutionFwdAlgoPerf_t (cudnn_cnn.h), field for field.
struct FwdAlgoPerf {
  int algo;          // cudnnConvolutionFwdAlgo_t
  int status;        // cudnnStatus_t
  float time;
  size_t memory;
  int determinism;   // cudnnDeterminism_t
  int mathType;      // cudnnMathType_t
  int reserved[3];
};

using Handle = void*;  // cudnnHandle_t, cudnn*Descriptor_t: pointers to opaque structs

}  // namespace

struct Cudnn::Api {
  bool loaded = false;
  std::string why;
  size_t (*cudnnGetVersion)() = nullptr;
  const char* (*cudnnGetErrorString)(cudnnStatus_t) = nullptr;
  cudnnStatus_t (*cudnnCreate)(Handle*) = nullptr;
  cudnnStatus_t (*cudnnDestroy)(Handle) = nullptr;
  cudnnStatus_t (*cudnnSetStream)(Handle, CUstream) = nullptr;  // cudaStream_t == CUstream
  cudnnStatus_t (*cudnnCreateTensorDescriptor)(Handle*) = nullptr;
  cudnnStatus_t (*cudnnSetTensor4dDescriptorEx)(Handle, cudnnDataType_t, int, int, int, int, int, int, int, int) = nullptr;
  cudnnStatus_t (*cudnnDestroyTensorDescriptor)(Handle) = nullptr;
  cudnnStatus_t (*cudnnCreateFilterDescriptor)(Handle*) = nullptr;
  cudnnStatus_t (*cudnnSetFilter4dDescriptor)(Handle, cudnnDataType_t, int, int, int, int, int) = nullptr;
  cudnnStatus_t (*cudnnDestroyFilterDescriptor)(Handle) = nullptr;
  cudnnStatus_t (*cudnnCreateConvolutionDescriptor)(Handle*) = nullptr;
  cudnnStatus_t (*cudnnSetConvolution2dDescriptor)(Handle, int, int, int, int, int, int, int, cudnnDataType_t) = nullptr;
  cudnnStatus_t (*cudnnSetConvolutionGroupCount)(Handle, int) = nullptr;
  cudnnStatus_t (*cudnnSetConvolutionMathType)(Handle, cudnnMathType_t) = nullptr;
  cudnnStatus_t (*cudnnDestroyConvolutionDescriptor)(Handle) = nullptr;
  cudnnStatus_t (*cudnnGetConvolutionForwardAlgorithm_v7)(Handle, Handle, Handle, Handle, Handle, int, int*, FwdAlgoPerf*) = nullptr;
  cudnnStatus_t (*cudnnGetConvolutionForwardWorkspaceSize)(Handle, Handle, Handle, Handle, Handle, int, size_t*) = nullptr;
  cudnnStatus_t (*cudnnConvolutionForward)(Handle, const void*, Handle, const void*, Handle, const void*, Handle, int, void*, size_t,
                                           const void*, Handle, void*) = nullptr;
  cudnnStatus_t (*cudnnConvolutionBiasActivationForward)(Handle, const void*, Handle, const void*, Handle, const void*, Handle, int, void*,
                                                         size_t, const void*, Handle, const void*, Handle, const void*, Handle, Handle,
                                                         void*) = nullptr;
  cudnnStatus_t (*cudnnCreateActivationDescriptor)(Handle*) = nullptr;
  cudnnStatus_t (*cudnnSetActivationDescriptor)(Handle, int, int, double) = nullptr;
  cudnnStatus_t (*cudnnDestroyActivationDescriptor)(Handle) = nullptr;

  static const Api& get() {
    static const Api a = [] {
      Api a;
      void* h = nullptr;
      for (const char* name : {"libcudnn.so.9", "libcudnn.so"})
        if ((h = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
      if (!h) {
        a.why = "libcudnn.so.9 not found";
        return a;
      }
      auto sym = [&](auto& fn, const char* name) {
        void* p = dlsym(h, name);
        if (!p && a.why.empty()) a.why = std::string("libcudnn lacks ") + name;
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
      };
#define FZ_DNN_SYM(fn) sym(a.fn, #fn);
      FZ_DNN_SYM(cudnnGetVersion)
      FZ_DNN_SYM(cudnnGetErrorString)
      FZ_DNN_SYM(cudnnCreate)
      FZ_DNN_SYM(cudnnDestroy)
      FZ_DNN_SYM(cudnnSetStream)
      FZ_DNN_SYM(cudnnCreateTensorDescriptor)
      FZ_DNN_SYM(cudnnSetTensor4dDescriptorEx)
      FZ_DNN_SYM(cudnnDestroyTensorDescriptor)
      FZ_DNN_SYM(cudnnCreateFilterDescriptor)
      FZ_DNN_SYM(cudnnSetFilter4dDescriptor)
      FZ_DNN_SYM(cudnnDestroyFilterDescriptor)
      FZ_DNN_SYM(cudnnCreateConvolutionDescriptor)
      FZ_DNN_SYM(cudnnSetConvolution2dDescriptor)
      FZ_DNN_SYM(cudnnSetConvolutionGroupCount)
      FZ_DNN_SYM(cudnnSetConvolutionMathType)
      FZ_DNN_SYM(cudnnDestroyConvolutionDescriptor)
      FZ_DNN_SYM(cudnnGetConvolutionForwardAlgorithm_v7)
      FZ_DNN_SYM(cudnnGetConvolutionForwardWorkspaceSize)
      FZ_DNN_SYM(cudnnConvolutionForward)
      FZ_DNN_SYM(cudnnConvolutionBiasActivationForward)
      FZ_DNN_SYM(cudnnCreateActivationDescriptor)
      FZ_DNN_SYM(cudnnSetActivationDescriptor)
      FZ_DNN_SYM(cudnnDestroyActivationDescriptor)
#undef FZ_DNN_SYM
      // The legacy API this file declares is cuDNN 9's; another major may differ.
      if (a.why.empty() && a.cudnnGetVersion() / 10000 != 9)
        a.why = "libcudnn is version " + std::to_string(a.cudnnGetVersion()) + ", not 9.x";
      a.loaded = a.why.empty();
      return a;
    }();
    return a;
  }
};

namespace {

bool fits_int(int64_t v) { return v >= 0 && v < (int64_t{1} << 31); }

// The element strides of a view over [N, K, OH, OW] as cuDNN's y (all positive; size-1 dims
// given the dense stride, which cuDNN accepts and which is never used).
bool output_strides(const StridedView& v, const Shape& space, std::array<int64_t, 4>& st) {
  if (v.strides.size() != 4 || v.shape != space || v.offset < 0) return false;
  int64_t dense = 1;
  for (int i = 3; i >= 0; --i) {
    st[i] = space[i] == 1 ? dense : v.strides[i];
    if (st[i] <= 0 || !fits_int(st[i])) return false;
    dense *= space[i];
  }
  return true;
}

bool is_op(const KernelSpec& k, int e, const char* name) {
  return e >= 0 && k.expr[e].kind == ExprKind::op && k.expr[e].op && k.expr[e].op->name == name;
}

// A load of one f32 value per output channel (bias[k] broadcast over N, OH, OW), 16-byte
// aligned as cuDNN's bias operand wants; its buffer and element offset.
bool is_channel_vector_load(const KernelSpec& k, const Plan& p, int e, int& buffer, int64_t& offset) {
  if (e < 0 || k.expr[e].kind != ExprKind::load) return false;
  const Load& l = k.loads[k.expr[e].load];
  if (p.buffers[l.buffer].dtype != DType::f32 || l.view.strides.size() != 4 || l.view.shape != k.space) return false;
  for (int i : {0, 2, 3})
    if (l.view.strides[i] != 0 && k.space[i] != 1) return false;
  if (l.view.strides[1] != 1 && k.space[1] != 1) return false;
  buffer = l.buffer, offset = l.view.offset;
  return offset % 4 == 0;
}

}  // namespace

std::optional<LibraryConv> cuda_library_conv(const KernelSpec& k, const Plan& p) {
  if (!k.conv) return std::nullopt;
  const ConvDesc& d = *k.conv;
  const char* policy = std::getenv("FUSOR_CUDA_CONV");
  const std::string mode = policy ? policy : "";
  if (mode == "template") return std::nullopt;
  if (d.groups < 1 || d.c % d.groups != 0 || d.k % d.groups != 0) return std::nullopt;
  if (k.space != Shape{d.n, d.k, d.oh, d.ow}) return std::nullopt;
  for (auto& o : k.outputs)
    if (o.per_row) return std::nullopt;
  // One float dtype for x, w and every value cuDNN writes.
  const DType t = p.buffers[d.x_buffer].dtype;
  if (t != p.buffers[d.w_buffer].dtype || (t != DType::f32 && t != DType::f16 && t != DType::bf16)) return std::nullopt;
  // cuDNN writes y in the operands' dtype: an fp32 acc of fp16/bf16 operands (a Conv with bias,
  // whose sum and bias round once) would be rounded there first, so it stays on the template.
  if (k.acc_dtype() != t) return std::nullopt;
  // Whole dense buffers of the conv's shapes (the emitter's contract too).
  const int64_t cpg = d.c / d.groups;
  if (p.buffers[d.x_buffer].shape != Shape{d.n, d.c, d.h, d.w}) return std::nullopt;
  if (p.buffers[d.w_buffer].shape != Shape{d.k, cpg, d.r, d.s}) return std::nullopt;
  for (int64_t v : {d.n, d.c, d.h, d.w, d.k, d.r, d.s, d.oh, d.ow})
    if (v <= 0 || !fits_int(v)) return std::nullopt;
  for (int64_t v : {d.n * d.c * d.h * d.w, d.k * cpg * d.r * d.s, d.n * d.k * d.oh * d.ow})
    if (!fits_int(v)) return std::nullopt;
  if (d.pad_h < 0 || d.pad_w < 0 || d.stride_h < 1 || d.stride_w < 1 || d.dil_h < 1 || d.dil_w < 1) return std::nullopt;
  // cuDNN pads symmetrically; an ONNX end pad that differs is fine when the output size (hence
  // every input position read) is the same.
  auto out_size = [](int64_t in, int64_t pad, int64_t st, int64_t kern, int64_t dil) { return (in + 2 * pad - dil * (kern - 1) - 1) / st + 1; };
  if (out_size(d.h, d.pad_h, d.stride_h, d.r, d.dil_h) != d.oh || out_size(d.w, d.pad_w, d.stride_w, d.s, d.dil_w) != d.ow)
    return std::nullopt;
  const bool depthwise = d.groups > 1 && d.groups == d.c && cpg == 1;
  const int64_t macs = d.n * d.k * d.oh * d.ow * cpg * d.r * d.s;
  if (mode != "cudnn" && (depthwise || macs < (int64_t{1} << 18))) return std::nullopt;
  // fp32: the split-K template where it was faster on the H200 (docs/benchmarks.md, thirteenth
  // session, W6): layers of fewer output tiles than SMs (batch 1: resnet18 1.13 -> 0.51 ms) and
  // convs under 2^30 multiply-adds (squeezenet1_1, mobilenet_v3_small, shufflenet_v2 at batch
  // 32: 12-21% faster on the template alone); cuDNN kept the big 3x3 layers of resnet18 at
  // batch 32 (4.66 ms against 5.75 on the template).
  // fp32 only (the measurements were; cuDNN runs fp16 / bf16 on tensor cores), and never onto
  // the template's direct loop (tiny reductions, a few channels per group).
  if (mode != "cudnn" && mode != "library" && t == DType::f32 && !cuda_conv_tiles(d).direct) {
    const int64_t tiles64 = d.groups * ((d.k / d.groups + 63) / 64) * ((d.n * d.oh * d.ow + 63) / 64);
    if (tiles64 < 132 || macs < (int64_t{1} << 30)) return std::nullopt;
  }

  LibraryConv c;
  c.n = d.n, c.c = d.c, c.h = d.h, c.w = d.w, c.k = d.k, c.r = d.r, c.s = d.s, c.oh = d.oh, c.ow = d.ow;
  c.pad_h = d.pad_h, c.pad_w = d.pad_w, c.stride_h = d.stride_h, c.stride_w = d.stride_w, c.dil_h = d.dil_h, c.dil_w = d.dil_w;
  c.groups = d.groups, c.dtype = t, c.x_buffer = d.x_buffer, c.w_buffer = d.w_buffer;
  c.epilogue = LibraryConv::Epilogue::kernel;
  c.y_strides = {d.k * d.oh * d.ow, d.oh * d.ow, d.ow, 1};
  // cuDNN writes the output itself, into a buffer neither operand is, through a view with
  // positive strides, when the kernel's only output is the bare conv in the same dtype or (fp32)
  // conv + bias[k], optionally through Relu.
  // cuDNN's fused bias/ReLU (cudnnConvolutionBiasActivationForward) is opt-in: on the H200 it
  // was 2.8x slower than conv + generated epilogue on squeezenet1_1 at batch 32 (4.6 vs 1.6 ms)
  // and 1.5x on shufflenet_v2, and at most 10% faster elsewhere (docs/h200-2026-12-01).
  const char* epi = std::getenv("FUSOR_CUDA_CONV_EPILOGUE");
  const bool fuse = epi && std::string(epi) == "cudnn";
  std::array<int64_t, 4> st{};
  if (k.outputs.size() == 1 && p.buffers[k.outputs[0].buffer].dtype == t && k.outputs[0].buffer != d.x_buffer &&
      k.outputs[0].buffer != d.w_buffer && output_strides(k.outputs[0].view, k.space, st) && fits_int(k.outputs[0].view.offset)) {
    const KernelOutput& o = k.outputs[0];
    int e = o.expr;
    bool relu = false;
    if (is_op(k, e, "Relu")) relu = true, e = k.expr[e].args[0];
    if (!relu && e >= 0 && k.expr[e].kind == ExprKind::acc) {
      c.epilogue = LibraryConv::Epilogue::none;
    } else if (fuse && t == DType::f32 && is_op(k, e, "Add") && k.expr[e].args.size() == 2) {
      const int a0 = k.expr[e].args[0], a1 = k.expr[e].args[1];
      const int bias = (a0 >= 0 && k.expr[a0].kind == ExprKind::acc) ? a1 : (a1 >= 0 && k.expr[a1].kind == ExprKind::acc) ? a0 : -1;
      if (bias >= 0 && is_channel_vector_load(k, p, bias, c.bias_buffer, c.bias_offset) && c.bias_buffer != o.buffer)
        c.epilogue = relu ? LibraryConv::Epilogue::relu_bias : LibraryConv::Epilogue::bias;
      else
        c.bias_buffer = -1, c.bias_offset = 0;
    }
    if (c.epilogue != LibraryConv::Epilogue::kernel) c.out_buffer = o.buffer, c.y_offset = o.view.offset, c.y_strides = st;
  }
  return c;
}

// ---- the library ---------------------------------------------------------------------------------

namespace {

// The error text of a failed call (cudnnGetErrorString's name for the status).
template <class A>
void check_dnn(const A& a, cudnnStatus_t s, const char* call) {
  if (s != CUDNN_STATUS_SUCCESS)
    throw Error("cuda", std::string(call) + ": cuDNN status " + std::to_string(s) + " (" + a.cudnnGetErrorString(s) + ")");
}

cudnnDataType_t dnn_type(DType t) { return t == DType::f16 ? CUDNN_DATA_HALF : t == DType::bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT; }

// Implicit GEMM, precomputed implicit GEMM, explicit GEMM unless FUSOR_CUDA_CONV_ALGOS=all.
bool algo_allowed(int algo) {
  const char* all = std::getenv("FUSOR_CUDA_CONV_ALGOS");
  if (all && std::string(all) == "all") return algo >= 0 && algo < kFwdAlgoCount;
  return algo == 0 || algo == 1 || algo == 2;
}

}  // namespace

std::unique_ptr<Cudnn> Cudnn::open() {
  std::unique_ptr<Cudnn> d(new Cudnn());
  const Api& api = Api::get();
  if (!api.loaded) {
    d->why_ = api.why;
    return d;
  }
  d->api_ = &api;
  Handle h = nullptr;
  if (cudnnStatus_t s = api.cudnnCreate(&h); s != CUDNN_STATUS_SUCCESS) {
    d->why_ = "cudnnCreate: cuDNN status " + std::to_string(s) + " (" + api.cudnnGetErrorString(s) + ")";
    return d;
  }
  d->handle_ = h;
  return d;
}

Cudnn::~Cudnn() {
  if (handle_) api_->cudnnDestroy(handle_);
}

std::unique_ptr<Cudnn::Call> Cudnn::make_call(const LibraryConv& c, size_t max_workspace) const {
  if (!available()) throw Error("cuda", "cuDNN is not available: " + why_);
  const Api& a = *api_;
  std::unique_ptr<Call> call(new Call());
  call->dnn_ = this;
  call->c_ = c;
  const cudnnDataType_t t = dnn_type(c.dtype);
  auto i = [](int64_t v) { return static_cast<int>(v); };
  check_dnn(a, a.cudnnCreateTensorDescriptor(&call->xd_), "cudnnCreateTensorDescriptor");
  check_dnn(a, a.cudnnSetTensor4dDescriptorEx(call->xd_, t, i(c.n), i(c.c), i(c.h), i(c.w), i(c.c * c.h * c.w), i(c.h * c.w), i(c.w), 1),
            "cudnnSetTensor4dDescriptorEx(x)");
  check_dnn(a, a.cudnnCreateTensorDescriptor(&call->yd_), "cudnnCreateTensorDescriptor");
  check_dnn(a, a.cudnnSetTensor4dDescriptorEx(call->yd_, t, i(c.n), i(c.k), i(c.oh), i(c.ow), i(c.y_strides[0]), i(c.y_strides[1]),
                                              i(c.y_strides[2]), i(c.y_strides[3])),
            "cudnnSetTensor4dDescriptorEx(y)");
  check_dnn(a, a.cudnnCreateFilterDescriptor(&call->wd_), "cudnnCreateFilterDescriptor");
  check_dnn(a, a.cudnnSetFilter4dDescriptor(call->wd_, t, CUDNN_TENSOR_NCHW, i(c.k), i(c.c / c.groups), i(c.r), i(c.s)),
            "cudnnSetFilter4dDescriptor");
  check_dnn(a, a.cudnnCreateConvolutionDescriptor(&call->cd_), "cudnnCreateConvolutionDescriptor");
  check_dnn(a, a.cudnnSetConvolution2dDescriptor(call->cd_, i(c.pad_h), i(c.pad_w), i(c.stride_h), i(c.stride_w), i(c.dil_h), i(c.dil_w),
                                                 CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
            "cudnnSetConvolution2dDescriptor");
  check_dnn(a, a.cudnnSetConvolutionGroupCount(call->cd_, i(c.groups)), "cudnnSetConvolutionGroupCount");
  // fp32: FMA kernels only (CUDNN_DEFAULT_MATH would allow TF32 on Ampere and later).
  const bool fp32 = c.dtype == DType::f32;
  check_dnn(a, a.cudnnSetConvolutionMathType(call->cd_, fp32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH), "cudnnSetConvolutionMathType");
  if (c.fused()) {
    // bias: [1, K, 1, 1] f32; activation: ReLU (NaN propagated, as ONNX Relu) or identity.
    check_dnn(a, a.cudnnCreateTensorDescriptor(&call->bd_), "cudnnCreateTensorDescriptor");
    check_dnn(a, a.cudnnSetTensor4dDescriptorEx(call->bd_, CUDNN_DATA_FLOAT, 1, i(c.k), 1, 1, i(c.k), 1, 1, 1), "cudnnSetTensor4dDescriptorEx(bias)");
    check_dnn(a, a.cudnnCreateActivationDescriptor(&call->ad_), "cudnnCreateActivationDescriptor");
    check_dnn(a, a.cudnnSetActivationDescriptor(call->ad_, c.epilogue == LibraryConv::Epilogue::relu_bias ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY,
                                                CUDNN_PROPAGATE_NAN, 0.0),
              "cudnnSetActivationDescriptor");
  }
  FwdAlgoPerf perf[kFwdAlgoCount] = {};
  int found = 0;
  check_dnn(a, a.cudnnGetConvolutionForwardAlgorithm_v7(handle_, call->xd_, call->wd_, call->cd_, call->yd_, kFwdAlgoCount, &found, perf),
            "cudnnGetConvolutionForwardAlgorithm_v7");
  for (int j = 0; j < found; ++j) {
    const FwdAlgoPerf& r = perf[j];
    if (r.status != CUDNN_STATUS_SUCCESS || !algo_allowed(r.algo) || r.memory > max_workspace) continue;
    if (c.epilogue == LibraryConv::Epilogue::bias && r.algo != kAlgoImplicitPrecompGemm) continue;
    if (fp32 && (r.mathType == CUDNN_TENSOR_OP_MATH || r.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)) continue;
    // Half types: the math type the heuristic ranked this algorithm with (tensor ops mostly).
    if (!fp32) check_dnn(a, a.cudnnSetConvolutionMathType(call->cd_, r.mathType), "cudnnSetConvolutionMathType");
    size_t ws = 0;
    if (a.cudnnGetConvolutionForwardWorkspaceSize(handle_, call->xd_, call->wd_, call->cd_, call->yd_, r.algo, &ws) != CUDNN_STATUS_SUCCESS ||
        ws > max_workspace)
      continue;
    call->algo_ = r.algo;
    call->ws_need_ = ws;
    return call;
  }
  throw Error("cuda", "cuDNN has no allowed algorithm for this convolution (" + std::to_string(found) + " ranked)");
}

Cudnn::Call::~Call() {
  if (!dnn_ || !dnn_->api_) return;
  const Api& a = *dnn_->api_;
  if (xd_) a.cudnnDestroyTensorDescriptor(xd_);
  if (yd_) a.cudnnDestroyTensorDescriptor(yd_);
  if (wd_) a.cudnnDestroyFilterDescriptor(wd_);
  if (cd_) a.cudnnDestroyConvolutionDescriptor(cd_);
  if (bd_) a.cudnnDestroyTensorDescriptor(bd_);
  if (ad_) a.cudnnDestroyActivationDescriptor(ad_);
}

void Cudnn::Call::prepare(CUdeviceptr x, CUdeviceptr w, CUdeviceptr y, CUdeviceptr bias, CUdeviceptr workspace, size_t workspace_bytes) {
  x_ = w_ = y_ = b_ = 0;
  if (c_.fused() && !bias) throw Error("cuda", "cuDNN convolution with a bias epilogue prepared without a bias");
  if (workspace_bytes < ws_need_ || (ws_need_ > 0 && !workspace))
    throw Error("cuda", "cuDNN convolution needs " + std::to_string(ws_need_) + " bytes of workspace, got " + std::to_string(workspace_bytes));
  x_ = x, w_ = w, y_ = y, b_ = bias, ws_ = workspace, ws_bytes_ = workspace_bytes;
}

void Cudnn::Call::enqueue(CUstream stream) const {
  const Api& a = *dnn_->api_;
  if (!y_) throw Error("cuda", "cudnnConvolutionForward enqueued before a successful prepare");
  auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); };
  // alpha/beta are float for every data type whose compute type is float.
  const float alpha = 1.0f, beta = 0.0f;
  check_dnn(a, a.cudnnSetStream(dnn_->handle_, stream), "cudnnSetStream");
  if (c_.fused()) {
    // y = act(conv + 0 * z + bias) with z = y (alpha2 = 0: z is not read into the result).
    check_dnn(a, a.cudnnConvolutionBiasActivationForward(dnn_->handle_, &alpha, xd_, ptr(x_), wd_, ptr(w_), cd_, algo_, ptr(ws_), ws_bytes_, &beta,
                                                         yd_, ptr(y_), bd_, ptr(b_), ad_, yd_, ptr(y_)),
              "cudnnConvolutionBiasActivationForward");
    return;
  }
  check_dnn(a, a.cudnnConvolutionForward(dnn_->handle_, &alpha, xd_, ptr(x_), wd_, ptr(w_), cd_, algo_, ptr(ws_), ws_bytes_, &beta, yd_, ptr(y_)),
            "cudnnConvolutionForward");
}

}  // namespace fusor
