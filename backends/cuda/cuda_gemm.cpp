// cuBLASLt for matmul kernels: which kernels use it and how (pure, testable without a GPU),
// and the dlopen'd library calls.
#include "backends/cuda/cuda_gemm.h"

#include <cublasLt.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

namespace fusor {

namespace {

// Element offset of batch `b` (row-major over the first nb dims of `space`) in view v.
int64_t batch_offset(const StridedView& v, const Shape& space, size_t nb, int64_t b) {
  int64_t off = v.offset;
  for (int i = static_cast<int>(nb) - 1; i >= 0; --i) {
    off += (b % space[i]) * v.strides[i];
    b /= space[i];
  }
  return off;
}

// Batch offsets of v as offset + b * stride for one stride, or false.
bool batch_progression(const StridedView& v, const Shape& space, size_t nb, int64_t batch, int64_t& offset, int64_t& stride) {
  offset = batch_offset(v, space, nb, 0);
  stride = batch > 1 ? batch_offset(v, space, nb, 1) - offset : 0;
  if (stride < 0) return false;
  for (int64_t b = 2; b < batch; ++b)
    if (batch_offset(v, space, nb, b) != offset + b * stride) return false;
  return true;
}

// A row-major [R, C] view with strides (sr, sc) as the column-major operand whose op is the
// [C, R] matrix: stored C x R (trans = false) when sc == 1, R x C (trans = true) when sr == 1.
bool as_operand(int64_t r, int64_t c, int64_t sr, int64_t sc, LibraryGemm::Operand& o) {
  if (sc == 1 || c == 1) {
    o.trans = false, o.rows = c, o.cols = r, o.ld = r == 1 ? c : sr;
  } else if (sr == 1 || r == 1) {
    o.trans = true, o.rows = r, o.cols = c, o.ld = c == 1 ? r : sc;
  } else {
    return false;
  }
  return o.ld >= o.rows && o.ld >= 1;
}

bool is_op(const KernelSpec& k, int e, const char* name) {
  return e >= 0 && k.expr[e].kind == ExprKind::op && k.expr[e].op && k.expr[e].op->name == name;
}

// A load broadcasting one f32 vector along the last dim (bias[n]); its element offset.
bool is_row_vector_load(const KernelSpec& k, const Plan& p, int e, int64_t& offset, int& buffer) {
  if (e < 0 || k.expr[e].kind != ExprKind::load) return false;
  const Load& l = k.loads[k.expr[e].load];
  if (p.buffers[l.buffer].dtype != DType::f32) return false;
  const size_t r = l.view.strides.size();
  for (size_t i = 0; i + 1 < r; ++i)
    if (l.view.strides[i] != 0 && l.view.shape[i] != 1) return false;
  if (l.view.strides[r - 1] != 1 && l.view.shape[r - 1] != 1) return false;
  offset = l.view.offset, buffer = l.buffer;
  return offset % 4 == 0;  // 16-byte aligned bias, as cuBLASLt's vector epilogues expect
}

}  // namespace

std::optional<LibraryGemm> cuda_library_gemm(const KernelSpec& k, const Plan& p) {
  if (!k.matmul) return std::nullopt;
  const MatMulDesc& mm = *k.matmul;
  // An int8 B (dequant_b) or an operand prologue is read by the generated kernel's loads.
  if (!mm.a_plain() || !mm.b_plain()) return std::nullopt;
  const char* policy = std::getenv("FUSOR_CUDA_GEMM");
  const std::string mode = policy ? policy : "";
  if (mode == "template") return std::nullopt;
  if (k.space.size() < 2 || mm.a.shape.size() != k.space.size() || mm.b.shape.size() != k.space.size()) return std::nullopt;
  // fp32, fp16 or bf16 operands of one dtype; fp32 accumulation either way (CUBLAS_COMPUTE_32F).
  const DType ab = p.buffers[mm.a_buffer].dtype;
  if (ab != p.buffers[mm.b_buffer].dtype || (ab != DType::f32 && ab != DType::f16 && ab != DType::bf16)) return std::nullopt;
  for (auto& o : k.outputs)
    if (o.per_row) return std::nullopt;
  LibraryGemm g;
  g.operand_dtype = ab;
  g.m = mm.m, g.n = mm.n, g.k = mm.k;
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) return std::nullopt;
  g.batch = shape_numel(k.space) / (g.m * g.n);
  if (mode != "cublaslt" && (g.m <= 8 || g.batch * g.m * g.n * g.k < (int64_t{1} << 18))) return std::nullopt;
  // cuBLASLt's sizes, strides and batch count are 32-bit in places.
  if (g.batch > (int64_t{1} << 30) || g.m > (int64_t{1} << 30) || g.n > (int64_t{1} << 30) || g.k > (int64_t{1} << 30))
    return std::nullopt;
  const size_t nb = k.space.size() - 2;
  // x = our B: the [K, N] view as an operand whose op is [N, K]; y = our A ([M, K] -> op [K, M]).
  if (!as_operand(g.k, g.n, mm.b.strides[nb], mm.b.strides[nb + 1], g.x)) return std::nullopt;
  if (!as_operand(g.m, g.k, mm.a.strides[nb], mm.a.strides[nb + 1], g.y)) return std::nullopt;
  if (!batch_progression(mm.b, k.space, nb, g.batch, g.x.offset, g.x.batch_stride)) return std::nullopt;
  if (!batch_progression(mm.a, k.space, nb, g.batch, g.y.offset, g.y.batch_stride)) return std::nullopt;
  g.x.buffer = mm.b_buffer, g.y.buffer = mm.a_buffer;

  // cuBLASLt writes the output itself when the kernel stores acc, acc + bias[n] or
  // Relu(acc + bias[n]) into one buffer that no operand aliases, through a view whose rows are
  // unit-stride and whose batches are one arithmetic progression (dense, or permuted such as
  // attention's [b, s, h, d]).
  g.epilogue = LibraryGemm::Epilogue::kernel;
  g.d_offset = 0, g.d_ld = g.n, g.d_batch_stride = g.m * g.n;
  int64_t d_offset = 0, d_batch = 0;
  const bool d_ok = k.outputs.size() == 1 && k.outputs[0].view.shape == k.space &&
                    (k.outputs[0].view.strides[nb + 1] == 1 || g.n == 1) &&
                    (g.m == 1 || k.outputs[0].view.strides[nb] >= g.n) &&
                    batch_progression(k.outputs[0].view, k.space, nb, g.batch, d_offset, d_batch) &&
                    (g.batch == 1 || d_batch >= 1);
  // acc: the operands' dtype, or f32 for fp16/bf16 operands (a Gemm's fp32 epilogue follows).
  const DType acc = k.acc_dtype();
  if (acc != ab && acc != DType::f32) return std::nullopt;
  if (d_ok && p.buffers[k.outputs[0].buffer].dtype == acc) {
    const KernelOutput& o = k.outputs[0];
    const bool aliased = o.buffer == mm.a_buffer || o.buffer == mm.b_buffer;
    int e = o.expr;
    bool relu = false;
    if (is_op(k, e, "Relu")) relu = true, e = k.expr[e].args[0];
    if (!aliased && e >= 0 && k.expr[e].kind == ExprKind::acc && !relu) {
      g.epilogue = LibraryGemm::Epilogue::none;
    } else if (!aliased && ab == DType::f32 && is_op(k, e, "Add") && k.expr[e].args.size() == 2) {
      // fp32 operands only. An fp16/bf16 acc is the product rounded to its dtype (a MatMul and
      // a separate ONNX Add: two roundings), which cuBLASLt's epilogue (one rounding of
      // acc + bias) is not; an fp32 acc of fp16/bf16 operands (one Gemm node) ends in a Cast
      // to its dtype, which the generated epilogue applies to D in fp32.
      const int a0 = k.expr[e].args[0], a1 = k.expr[e].args[1];
      const int bias = (a0 >= 0 && k.expr[a0].kind == ExprKind::acc) ? a1 : (a1 >= 0 && k.expr[a1].kind == ExprKind::acc) ? a0 : -1;
      if (bias >= 0 && is_row_vector_load(k, p, bias, g.bias_offset, g.bias_buffer) && g.bias_buffer != o.buffer)
        g.epilogue = relu ? LibraryGemm::Epilogue::relu_bias : LibraryGemm::Epilogue::bias;
    }
    if (g.epilogue != LibraryGemm::Epilogue::kernel) {
      g.out_dtype = acc;
      g.out_buffer = o.buffer;
      g.d_offset = d_offset, g.d_ld = g.m == 1 ? g.n : o.view.strides[nb], g.d_batch_stride = d_batch;
    }
  }
  return g;
}

// ---- the library ---------------------------------------------------------------------------------

struct CublasLt::Api {
  bool loaded = false;
  std::string why;
#define FZ_LT_FN(fn) decltype(&::fn) fn = nullptr;
  FZ_LT_FN(cublasLtCreate)
  FZ_LT_FN(cublasLtDestroy)
  FZ_LT_FN(cublasLtMatmulDescCreate)
  FZ_LT_FN(cublasLtMatmulDescDestroy)
  FZ_LT_FN(cublasLtMatmulDescSetAttribute)
  FZ_LT_FN(cublasLtMatrixLayoutCreate)
  FZ_LT_FN(cublasLtMatrixLayoutDestroy)
  FZ_LT_FN(cublasLtMatrixLayoutSetAttribute)
  FZ_LT_FN(cublasLtMatmulPreferenceCreate)
  FZ_LT_FN(cublasLtMatmulPreferenceDestroy)
  FZ_LT_FN(cublasLtMatmulPreferenceSetAttribute)
  FZ_LT_FN(cublasLtMatmulAlgoGetHeuristic)
  FZ_LT_FN(cublasLtMatmul)
  FZ_LT_FN(cublasLtMatmulAlgoConfigGetAttribute)  // optional: FUSOR_CUDA_LT_TRACE only
#undef FZ_LT_FN

  static const Api& get() {
    static const Api a = [] {
      Api a;
      const std::string major = std::to_string(CUBLAS_VER_MAJOR);
      void* h = nullptr;
      for (std::string name : {"libcublasLt.so." + major, std::string("/usr/local/cuda/lib64/libcublasLt.so.") + major})
        if ((h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
      if (!h) {
        a.why = "libcublasLt.so." + major + " not found";
        return a;
      }
      auto sym = [&](auto& fn, const char* name) {
        void* p = dlsym(h, name);
        if (!p && a.why.empty()) a.why = std::string("libcublasLt lacks ") + name;
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
      };
#define FZ_LT_SYM(fn) sym(a.fn, #fn);
      FZ_LT_SYM(cublasLtCreate)
      FZ_LT_SYM(cublasLtDestroy)
      FZ_LT_SYM(cublasLtMatmulDescCreate)
      FZ_LT_SYM(cublasLtMatmulDescDestroy)
      FZ_LT_SYM(cublasLtMatmulDescSetAttribute)
      FZ_LT_SYM(cublasLtMatrixLayoutCreate)
      FZ_LT_SYM(cublasLtMatrixLayoutDestroy)
      FZ_LT_SYM(cublasLtMatrixLayoutSetAttribute)
      FZ_LT_SYM(cublasLtMatmulPreferenceCreate)
      FZ_LT_SYM(cublasLtMatmulPreferenceDestroy)
      FZ_LT_SYM(cublasLtMatmulPreferenceSetAttribute)
      FZ_LT_SYM(cublasLtMatmulAlgoGetHeuristic)
      FZ_LT_SYM(cublasLtMatmul)
#undef FZ_LT_SYM
      a.loaded = a.why.empty();
      a.cublasLtMatmulAlgoConfigGetAttribute = reinterpret_cast<decltype(a.cublasLtMatmulAlgoConfigGetAttribute)>(
          dlsym(h, "cublasLtMatmulAlgoConfigGetAttribute"));
      return a;
    }();
    return a;
  }
};

namespace {
// FUSOR_CUDA_LT_TRACE=1: the algorithm cuBLASLt's heuristic chose, one stderr line per matmul
// (tile and stage ids as cublasLt.h numbers them), to compare tilings with the Vulkan template's.
void trace_algo(decltype(&::cublasLtMatmulAlgoConfigGetAttribute) get_attr, const cublasLtMatmulHeuristicResult_t& r) {
  static const bool on = [] {
    const char* e = std::getenv("FUSOR_CUDA_LT_TRACE");
    return e && std::strcmp(e, "1") == 0;
  }();
  if (!on || !get_attr) return;
  const auto get = [&](cublasLtMatmulAlgoConfigAttributes_t what) {
    uint32_t v = 0;  // every attribute read here is 32 bits or narrower (zero-extended)
    size_t written = 0;
    get_attr(&r.algo, what, &v, sizeof v, &written);
    return v;
  };
  std::fprintf(stderr, "cublasLt algo id %u tile %u stages %u split-k %u reduction %u swizzle %u waves %.2f\n",
               get(CUBLASLT_ALGO_CONFIG_ID), get(CUBLASLT_ALGO_CONFIG_TILE_ID), get(CUBLASLT_ALGO_CONFIG_STAGES_ID),
               get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM), get(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME),
               get(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING), static_cast<double>(r.wavesCount));
}

void check_lt(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS) throw Error("cuda", std::string(call) + ": cuBLAS status " + std::to_string(static_cast<int>(s)));
}

// Largest power of two (<= 256) dividing the byte address.
uint32_t alignment(CUdeviceptr p) {
  uint32_t a = 256;
  while (a > 1 && p % a != 0) a /= 2;
  return a;
}

}  // namespace

void CublasLt::preload() { Api::get(); }

std::unique_ptr<CublasLt> CublasLt::open() {
  std::unique_ptr<CublasLt> lt(new CublasLt());
  const Api& api = Api::get();
  if (!api.loaded) {
    lt->why_ = api.why;
    return lt;
  }
  lt->api_ = &api;
  cublasLtHandle_t h = nullptr;
  if (cublasStatus_t s = api.cublasLtCreate(&h); s != CUBLAS_STATUS_SUCCESS) {
    lt->why_ = "cublasLtCreate: cuBLAS status " + std::to_string(static_cast<int>(s));
    return lt;
  }
  lt->handle_ = h;
  return lt;
}

CublasLt::~CublasLt() {
  if (handle_) api_->cublasLtDestroy(static_cast<cublasLtHandle_t>(handle_));
}

std::unique_ptr<CublasLt::Call> CublasLt::make_call(const LibraryGemm& g) const {
  if (!available()) throw Error("cuda", "cuBLASLt is not available: " + why_);
  std::unique_ptr<Call> c(new Call());
  c->lt_ = this;
  c->g_ = g;
  const Api& a = *api_;
  cublasLtMatmulDesc_t desc = nullptr;
  check_lt(a.cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  c->desc_ = desc;
  const cublasOperation_t ta = g.x.trans ? CUBLAS_OP_T : CUBLAS_OP_N, tb = g.y.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  check_lt(a.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "cublasLtMatmulDescSetAttribute");
  check_lt(a.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "cublasLtMatmulDescSetAttribute");
  cublasLtEpilogue_t epi = g.epilogue == LibraryGemm::Epilogue::bias        ? CUBLASLT_EPILOGUE_BIAS
                           : g.epilogue == LibraryGemm::Epilogue::relu_bias ? CUBLASLT_EPILOGUE_RELU_BIAS
                                                                            : CUBLASLT_EPILOGUE_DEFAULT;
  check_lt(a.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi), "cublasLtMatmulDescSetAttribute");
  auto cuda_type = [](DType t) { return t == DType::f16 ? CUDA_R_16F : t == DType::bf16 ? CUDA_R_16BF : CUDA_R_32F; };
  auto layout = [&](void*& out, DType t, uint64_t rows, uint64_t cols, int64_t ld, int64_t batch_stride) {
    cublasLtMatrixLayout_t l = nullptr;
    check_lt(a.cublasLtMatrixLayoutCreate(&l, cuda_type(t), rows, cols, ld), "cublasLtMatrixLayoutCreate");
    out = l;
    if (g.batch > 1) {
      const int32_t count = static_cast<int32_t>(g.batch);
      check_lt(a.cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count), "cublasLtMatrixLayoutSetAttribute");
      check_lt(a.cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &batch_stride, sizeof batch_stride),
               "cublasLtMatrixLayoutSetAttribute");
    }
  };
  layout(c->lx_, g.operand_dtype, g.x.rows, g.x.cols, g.x.ld, g.x.batch_stride);
  layout(c->ly_, g.operand_dtype, g.y.rows, g.y.cols, g.y.ld, g.y.batch_stride);
  layout(c->ld_, g.out_dtype, g.n, g.m, g.d_ld, g.d_batch_stride);
  return c;
}

CublasLt::Call::~Call() {
  if (!lt_ || !lt_->api_) return;
  const Api& a = *lt_->api_;
  for (void* l : {lx_, ly_, ld_})
    if (l) a.cublasLtMatrixLayoutDestroy(static_cast<cublasLtMatrixLayout_t>(l));
  if (desc_) a.cublasLtMatmulDescDestroy(static_cast<cublasLtMatmulDesc_t>(desc_));
}

void CublasLt::Call::prepare(CUdeviceptr x, CUdeviceptr y, CUdeviceptr d, CUdeviceptr bias, CUdeviceptr workspace,
                             size_t workspace_bytes) {
  const Api& a = *lt_->api_;
  auto desc = static_cast<cublasLtMatmulDesc_t>(desc_);
  x_ = y_ = d_ = 0;  // not runnable until the algorithm below is chosen
  if (g_.epilogue == LibraryGemm::Epilogue::bias || g_.epilogue == LibraryGemm::Epilogue::relu_bias) {
    const void* bp = reinterpret_cast<const void*>(static_cast<uintptr_t>(bias));
    check_lt(a.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bp, sizeof bp), "cublasLtMatmulDescSetAttribute");
  }
  cublasLtMatmulPreference_t pref = nullptr;
  check_lt(a.cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  struct Guard {
    const Api& a;
    cublasLtMatmulPreference_t p;
    ~Guard() { a.cublasLtMatmulPreferenceDestroy(p); }
  } guard{a, pref};
  const uint64_t ws = workspace_bytes;
  check_lt(a.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
           "cublasLtMatmulPreferenceSetAttribute");
  const uint32_t al[4] = {alignment(x), alignment(y), alignment(d), alignment(d)};
  const cublasLtMatmulPreferenceAttributes_t which[4] = {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                                         CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  for (int i = 0; i < 4; ++i)
    check_lt(a.cublasLtMatmulPreferenceSetAttribute(pref, which[i], &al[i], sizeof al[i]), "cublasLtMatmulPreferenceSetAttribute");
  if (g_.out_dtype != DType::f32) {
    // Split-K reduced "in place" or in the output type adds fp16/bf16-rounded partial sums: the
    // product would round more than once. Only unsplit or fp32-reduced algorithms are allowed.
    const uint32_t mask = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    check_lt(a.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask, sizeof mask),
             "cublasLtMatmulPreferenceSetAttribute");
  }
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  check_lt(a.cublasLtMatmulAlgoGetHeuristic(static_cast<cublasLtHandle_t>(lt_->handle_), desc, static_cast<cublasLtMatrixLayout_t>(lx_),
                                            static_cast<cublasLtMatrixLayout_t>(ly_), static_cast<cublasLtMatrixLayout_t>(ld_),
                                            static_cast<cublasLtMatrixLayout_t>(ld_), pref, 1, &result, &found),
           "cublasLtMatmulAlgoGetHeuristic");
  if (found < 1) throw Error("cuda", "cuBLASLt has no algorithm for this matmul");
  static_assert(sizeof(cublasLtMatmulAlgo_t) <= sizeof(algo_), "cublasLtMatmulAlgo_t grew");
  std::memcpy(algo_, &result.algo, sizeof(cublasLtMatmulAlgo_t));
  trace_algo(a.cublasLtMatmulAlgoConfigGetAttribute, result);
  x_ = x, y_ = y, d_ = d, ws_ = workspace, ws_bytes_ = workspace_bytes;
}

void CublasLt::Call::enqueue(CUstream stream) const {
  const Api& a = *lt_->api_;
  if (!d_) throw Error("cuda", "cublasLtMatmul enqueued before a successful prepare");
  auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); };
  cublasLtMatmulAlgo_t algo;
  std::memcpy(&algo, algo_, sizeof algo);
  const auto D = static_cast<cublasLtMatrixLayout_t>(ld_);
  check_lt(a.cublasLtMatmul(static_cast<cublasLtHandle_t>(lt_->handle_), static_cast<cublasLtMatmulDesc_t>(desc_), &alpha_, ptr(x_),
                            static_cast<cublasLtMatrixLayout_t>(lx_), ptr(y_), static_cast<cublasLtMatrixLayout_t>(ly_), &beta_, ptr(d_), D,
                            ptr(d_), D, &algo, ptr(ws_), ws_bytes_, reinterpret_cast<cudaStream_t>(stream)),
           "cublasLtMatmul");
}

}  // namespace fusor
