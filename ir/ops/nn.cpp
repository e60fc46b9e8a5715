// Shape rules and CPU references for the NN ops: contractions (Gemm, MatMul, Conv,
// ConvTranspose; Einsum in ir/ops/einsum.cpp), pooling, normalization, LRN and inference-mode
// Dropout.
// Semantics follow the ONNX operator spec (onnx/defs/{math,nn}/defs.cc) across opsets.
//
// The references are plain loops accumulating in double. Conv/ConvTranspose/MatMul/Gemm read
// f32 (and f64) data through typed pointers because real models run through them; every other
// dtype is widened to double first.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ir/conv_geometry.h"
#include "ir/op_table.h"
#include "ir/ops/op_helpers.h"

namespace fusor {
namespace {

using namespace op_helpers;



// Calls f with a typed pointer to t's elements: float or double as stored, anything else widened.
template <class F>
void with_real_data(const Tensor& t, F&& f) {
  if (t.dtype() == DType::f32) {
    f(t.data<float>());
  } else if (t.dtype() == DType::f64) {
    f(t.data<double>());
  } else {
    std::vector<double> v = load_doubles(t);
    f(static_cast<const double*>(v.data()));
  }
}

// Double-accumulated dot product; four partial sums keep the FP dependency chain short.
template <class A, class B>
double dot(const A* a, const B* b, int64_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t k = 0;
  for (; k + 4 <= n; k += 4) {
    s0 += double(a[k]) * double(b[k]);
    s1 += double(a[k + 1]) * double(b[k + 1]);
    s2 += double(a[k + 2]) * double(b[k + 2]);
    s3 += double(a[k + 3]) * double(b[k + 3]);
  }
  for (; k < n; ++k) s0 += double(a[k]) * double(b[k]);
  return (s0 + s1) + (s2 + s3);
}

int64_t int_dot(const int64_t* a, const int64_t* b, int64_t n) {
  int64_t s = 0;
  for (int64_t k = 0; k < n; ++k) s = wrap_mul_add(s, a[k], b[k]);
  return s;
}
void require_same_dtype(InferContext& ctx, int a, int b) {
  if (ctx.dtype(a) != ctx.dtype(b))
    ctx.fail(std::string("inputs ") + std::to_string(a) + " and " + std::to_string(b) + " differ in dtype (" +
             dtype_name(ctx.dtype(a)) + " vs " + dtype_name(ctx.dtype(b)) + ")");
}

// The output dtype of MatMul / Conv: the operands', or float32 for a decomposed fp16/bf16
// contraction whose epilogue follows in fp32 (Node::f32_result).
DType contraction_output_dtype(InferContext& ctx) {
  const DType t = ctx.dtype(0);
  if (!ctx.node().f32_result) return t;
  if (t != DType::f16 && t != DType::bf16) ctx.fail(std::string("an fp32 result needs fp16/bf16 operands, got ") + dtype_name(t));
  return DType::f32;
}

// ---------------------------------------------------------------- Gemm / MatMul

// Y = alpha * A' * B' + beta * C  (ONNX Gemm; C broadcasts unidirectionally to (M, N)).
void gemm_infer(InferContext& ctx) {
  const Node& n = ctx.node();
  require_numeric(ctx, 0);
  require_same_dtype(ctx, 0, 1);
  const Shape &a = ctx.shape(0), &b = ctx.shape(1);
  if (a.size() != 2 || b.size() != 2) ctx.fail("A and B must be 2-D, got " + shape_str(a) + " and " + shape_str(b));
  bool ta = n.attr_i("transA", 0) != 0, tb = n.attr_i("transB", 0) != 0;
  int64_t m = ta ? a[1] : a[0], k = ta ? a[0] : a[1];
  int64_t kb = tb ? b[1] : b[0], nn = tb ? b[0] : b[1];
  if (k != kb)
    ctx.fail("inner dims differ: A' is [" + std::to_string(m) + ", " + std::to_string(k) + "], B' is [" +
             std::to_string(kb) + ", " + std::to_string(nn) + "]");
  if (ctx.has_input(2)) {
    const Shape& c = ctx.shape(2);
    Shape mn{m, nn};
    if (c.size() > 2 || broadcast_shapes({c, mn}, n.label()) != mn)
      ctx.fail("C " + shape_str(c) + " does not broadcast to " + shape_str(mn));
  }
  ctx.set_output(0, ctx.dtype(0), {m, nn});
}

// beta = 0 leaves C out, as the ONNX reference (`if c is not None and beta != 0`) and
// onnxruntime do: an inf or NaN in C does not reach Y.
void gemm_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor &A = *in[0], &B = *in[1];
  const Tensor* C = opt_in(in, 2);
  Tensor& Y = out[0];
  bool ta = n.attr_i("transA", 0) != 0, tb = n.attr_i("transB", 0) != 0;
  double alpha = n.attr_f("alpha", 1.0), beta = n.attr_f("beta", 1.0);
  int64_t M = Y.shape()[0], N = Y.shape()[1], K = ta ? A.shape()[0] : A.shape()[1];
  std::vector<double> c_vals;
  std::vector<int64_t> c_st(2, 0);
  if (C) {
    c_vals = load_doubles(*C);
    c_st = broadcast_strides(C->shape(), {M, N});
  }
  if (dtype_is_integral(Y.dtype()) && alpha == std::trunc(alpha) && beta == std::trunc(beta) && std::fabs(alpha) < 9.2e18 &&
      std::fabs(beta) < 9.2e18) {
    const std::vector<int64_t> a = ints_of(A), b = ints_of(B), c = C ? ints_of(*C) : std::vector<int64_t>{};
    const int64_t ia = static_cast<int64_t>(alpha), ib = static_cast<int64_t>(beta);
    std::vector<int64_t> ap(static_cast<size_t>(K)), bp(static_cast<size_t>(K));
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        for (int64_t k = 0; k < K; ++k) ap[k] = ta ? a[k * M + i] : a[i * K + k], bp[k] = tb ? b[j * K + k] : b[k * N + j];
        int64_t v = wrap_mul_add(0, ia, int_dot(ap.data(), bp.data(), K));
        if (C) v = wrap_mul_add(v, ib, c[i * c_st[0] + j * c_st[1]]);
        store_wrapped(Y, i * N + j, v);
      }
    return;
  }
  std::vector<double> row(static_cast<size_t>(N));
  with_real_data(A, [&](auto a) {
    with_real_data(B, [&](auto b) {
      // Pack A' as (M, K) and B' transposed as (N, K) so every output is a contiguous dot.
      using SA = std::remove_const_t<std::remove_pointer_t<decltype(a)>>;
      using SB = std::remove_const_t<std::remove_pointer_t<decltype(b)>>;
      std::vector<SA> ap(static_cast<size_t>(M * K));
      std::vector<SB> bp(static_cast<size_t>(N * K));
      for (int64_t i = 0; i < M; ++i)
        for (int64_t k = 0; k < K; ++k) ap[i * K + k] = ta ? a[k * M + i] : a[i * K + k];
      for (int64_t j = 0; j < N; ++j)
        for (int64_t k = 0; k < K; ++k) bp[j * K + k] = tb ? b[j * K + k] : b[k * N + j];
      for (int64_t i = 0; i < M; ++i) {
        for (int64_t j = 0; j < N; ++j) {
          double v = alpha * dot(ap.data() + i * K, bp.data() + j * K, K);
          if (C && beta != 0.0) v += beta * c_vals[i * c_st[0] + j * c_st[1]];
          row[j] = v;
        }
        store_doubles(Y, i * N, row.data(), N);
      }
    });
  });
}

// NumPy matmul: 1-D operands get a unit dim prepended (A) or appended (B) that is then dropped;
// batch dims broadcast.
struct MatmulDims {
  Shape batch, a_batch, b_batch;
  int64_t m = 1, k = 1, n = 1;
  Shape out;
};

MatmulDims matmul_dims(Shape a, Shape b, const std::string& label) {
  auto bad = [&](const std::string& why) { return Error("shape", label + ": " + why); };
  if (a.empty() || b.empty()) throw bad("operands must have rank >= 1");
  bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  MatmulDims d;
  d.m = a[a.size() - 2];
  d.k = a.back();
  d.n = b.back();
  if (b[b.size() - 2] != d.k)
    throw bad("inner dims differ (" + std::to_string(d.k) + " vs " + std::to_string(b[b.size() - 2]) + ")");
  d.a_batch.assign(a.begin(), a.end() - 2);
  d.b_batch.assign(b.begin(), b.end() - 2);
  d.batch = broadcast_shapes({d.a_batch, d.b_batch}, label);
  d.out = d.batch;
  if (!a1) d.out.push_back(d.m);
  if (!b1) d.out.push_back(d.n);
  return d;
}

void matmul_infer(InferContext& ctx) {
  require_numeric(ctx, 0);
  require_same_dtype(ctx, 0, 1);
  ctx.set_output(0, contraction_output_dtype(ctx), matmul_dims(ctx.shape(0), ctx.shape(1), ctx.node().label()).out);
}

void matmul_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor &A = *in[0], &B = *in[1];
  Tensor& Y = out[0];
  MatmulDims d = matmul_dims(A.shape(), B.shape(), n.label());
  const int64_t M = d.m, K = d.k, N = d.n;
  // Broadcast strides in units of whole matrices.
  std::vector<int64_t> sa = broadcast_strides(d.a_batch, d.batch), sb = broadcast_strides(d.b_batch, d.batch);
  const int64_t nb = shape_numel(d.batch), rb = static_cast<int64_t>(d.batch.size());
  if (dtype_is_integral(Y.dtype())) {
    const std::vector<int64_t> a = ints_of(A), b = ints_of(B);
    std::vector<int64_t> col(static_cast<size_t>(K)), idx(static_cast<size_t>(rb), 0);
    for (int64_t bi = 0; bi < nb; ++bi) {
      int64_t oa = 0, ob = 0;
      for (int64_t r = 0; r < rb; ++r) oa += idx[r] * sa[r], ob += idx[r] * sb[r];
      for (int64_t j = 0; j < N; ++j) {
        for (int64_t k = 0; k < K; ++k) col[k] = b[(ob * K + k) * N + j];
        for (int64_t i = 0; i < M; ++i) store_wrapped(Y, (bi * M + i) * N + j, int_dot(a.data() + (oa * M + i) * K, col.data(), K));
      }
      for (int64_t r = rb - 1; r >= 0 && ++idx[r] == d.batch[r]; --r) idx[r] = 0;
    }
    return;
  }
  std::vector<double> row(static_cast<size_t>(N));
  with_real_data(A, [&](auto a) {
    with_real_data(B, [&](auto b) {
      using SB = std::remove_const_t<std::remove_pointer_t<decltype(b)>>;
      std::vector<SB> bt(static_cast<size_t>(N * K));
      int64_t packed = -1;
      std::vector<int64_t> idx(static_cast<size_t>(rb), 0);
      for (int64_t bi = 0; bi < nb; ++bi) {
        int64_t oa = 0, ob = 0;
        for (int64_t r = 0; r < rb; ++r) oa += idx[r] * sa[r], ob += idx[r] * sb[r];
        if (ob != packed) {  // B' transposed once per distinct B matrix (a broadcast B is packed once)
          const auto* bm = b + ob * K * N;
          for (int64_t j = 0; j < N; ++j)
            for (int64_t k = 0; k < K; ++k) bt[j * K + k] = bm[k * N + j];
          packed = ob;
        }
        const auto* am = a + oa * M * K;
        for (int64_t i = 0; i < M; ++i) {
          for (int64_t j = 0; j < N; ++j) row[j] = dot(am + i * K, bt.data() + j * K, K);
          store_doubles(Y, (bi * M + i) * N, row.data(), N);
        }
        for (int64_t r = rb - 1; r >= 0 && ++idx[r] == d.batch[r]; --r) idx[r] = 0;
      }
    });
  });
}

// ---------------------------------------------------------------- spatial windows

// Conv/pool geometry normalized to 3 spatial dims; real dims sit at the end (unit dims first)
// so 1-D and 2-D cases run through the same loops with the innermost dim contiguous.
struct Window {
  int nd = 0;
  int64_t in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, d[3] = {1, 1, 1};
  int64_t pb[3] = {0, 0, 0}, pe[3] = {0, 0, 0}, out[3] = {1, 1, 1};
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t k_size() const { return k[0] * k[1] * k[2]; }
};

// Bounds on window attributes (no real model comes near): kernel, stride and dilation values
// up to 2^20 so that products of three fit int64 with room; pads and output sizes up to 2^40.
constexpr int64_t kMaxWindowValue = int64_t{1} << 20;
constexpr int64_t kMaxPad = int64_t{1} << 40;

void check_nd(const Node& n, const Shape& x) {
  if (x.size() < 3 || x.size() > 5)
    throw Error("shape", n.label() + ": expects (N, C, D1[, D2[, D3]]) input, got " + shape_str(x));
}

std::vector<int64_t> spatial_attr(const Node& n, const char* name, size_t count, int64_t dflt) {
  std::vector<int64_t> v = n.attr_ints(name, std::vector<int64_t>(count, dflt));
  if (v.size() != count)
    throw Error("shape", n.label() + ": attribute '" + name + "' needs " + std::to_string(count) + " values, has " +
                             std::to_string(v.size()));
  return v;
}

// Output size per spatial dim (ONNX Conv/MaxPool/AveragePool "output_spatial_shape"). With
// ceil_mode, a last window that would start in the end padding is dropped (PyTorch rule, as
// the ONNX reference and test_maxpool_2d_ceil_output_size_reduce_by_one expect).
Window make_window(const Node& n, const Shape& x, const std::vector<int64_t>& kernel, bool ceil_mode) {
  check_nd(n, x);
  auto bad = [&](const std::string& why) { return Error("shape", n.label() + ": " + why); };
  const int nd = static_cast<int>(x.size()) - 2;
  if (static_cast<int>(kernel.size()) != nd)
    throw bad("kernel_shape has " + std::to_string(kernel.size()) + " dims, input has " + std::to_string(nd));
  auto strides = spatial_attr(n, "strides", nd, 1), dil = spatial_attr(n, "dilations", nd, 1);
  auto pads = spatial_attr(n, "pads", 2 * nd, 0);
  std::string ap = n.attr_s("auto_pad", "NOTSET");
  Window w;
  w.nd = nd;
  for (int i = 0; i < nd; ++i) {
    const int j = 3 - nd + i;
    const int64_t in = x[2 + i], k = kernel[i], s = strides[i], d = dil[i];
    if (k < 1 || s < 1 || d < 1) throw bad("kernel_shape, strides and dilations must be positive");
    // Bounded so the window arithmetic below and in the kernels (products of up to three
    // kernel, stride or dilation values; in <= 2^56 plus pads) cannot overflow; no real model comes near.
    if (k > kMaxWindowValue || s > kMaxWindowValue || d > kMaxWindowValue)
      throw bad("kernel_shape, strides or dilations larger than 2^20");
    if (pads[i] > kMaxPad || pads[i] < -kMaxPad || pads[nd + i] > kMaxPad || pads[nd + i] < -kMaxPad)
      throw bad("pads larger than 2^40");
    const int64_t dk = (k - 1) * d + 1;
    int64_t pb = 0, pe = 0, out = 0;
    if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      out = (in + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (out - 1) * s + dk - in);
      pb = ap == "SAME_UPPER" ? total / 2 : total - total / 2;  // odd padding: extra at the end for UPPER
      pe = total - pb;
    } else if (ap == "VALID") {
      out = in >= dk ? (in - dk) / s + 1 : 0;
    } else if (ap == "NOTSET" || ap.empty()) {
      pb = pads[i];
      pe = pads[nd + i];
      if (pb < 0 || pe < 0) throw bad("negative pads");
      // floor or ceil of span / s, plus 1 (the spec's formula): a window longer than the padded
      // input still gives one output under ceil_mode while span > -s (HF EfficientNet's
      // AvgPool2d(1280, ceil_mode=True) pooler on a 7x7 map; torch and onnxruntime agree).
      int64_t span = in + pb + pe - dk;
      out = span < 0 ? (ceil_mode && -span < s ? 1 : 0) : (ceil_mode ? (span + s - 1) / s : span / s) + 1;
      if (ceil_mode && out > 0 && (out - 1) * s >= in + pb) --out;
    } else {
      throw bad("unknown auto_pad '" + ap + "'");
    }
    if (out < 1) throw bad("window (extent " + std::to_string(dk) + ") larger than padded input " + shape_str(x));
    w.in[j] = in, w.k[j] = k, w.s[j] = s, w.d[j] = d, w.pb[j] = pb, w.pe[j] = pe, w.out[j] = out;
  }
  return w;
}

Shape window_out_shape(const Shape& x, int64_t channels, const Window& w) {
  Shape o{x[0], channels};
  for (int i = 3 - w.nd; i < 3; ++i) o.push_back(w.out[i]);
  return o;
}

// Range [lo, hi) of output positions o with 0 <= o*s - p + t < in (t = tap offset k*d).
void valid_range(int64_t in, int64_t out, int64_t s, int64_t p, int64_t t, int64_t& lo, int64_t& hi) {
  int64_t a = p - t;  // need o*s >= a
  lo = a <= 0 ? 0 : (a + s - 1) / s;
  int64_t b = in - 1 + p - t;  // need o*s <= b
  hi = b < 0 ? 0 : std::min(out, b / s + 1);
  if (hi < lo) hi = lo;
}

// ---------------------------------------------------------------- Conv

std::vector<int64_t> kernel_from_w(InferContext& ctx, const Shape& w) {
  std::vector<int64_t> k(w.begin() + 2, w.end());
  const Node& n = ctx.node();
  if (n.has_attr("kernel_shape") && n.attr_ints("kernel_shape") != k)
    ctx.fail("kernel_shape attribute differs from W's spatial dims " + shape_str(w));
  return k;
}

void conv_infer(InferContext& ctx) {
  require_numeric(ctx, 0);
  require_same_dtype(ctx, 0, 1);
  const Shape &x = ctx.shape(0), &w = ctx.shape(1);
  const int64_t group = ctx.node().attr_i("group", 1);
  check_nd(ctx.node(), x);
  if (w.size() != x.size()) ctx.fail("W " + shape_str(w) + " and X " + shape_str(x) + " differ in rank");
  if (group < 1 || w[0] % group != 0)
    ctx.fail("output channels " + std::to_string(w[0]) + " not divisible by group " + std::to_string(group));
  if (x[1] != shape_mul(ctx.node(), w[1], group))
    ctx.fail("X has " + std::to_string(x[1]) + " channels, W expects " + std::to_string(w[1]) + " x group " +
             std::to_string(group));
  if (ctx.has_input(2) && ctx.shape(2) != Shape{w[0]}) ctx.fail("bias must have shape [" + std::to_string(w[0]) + "]");
  Window win = make_window(ctx.node(), x, kernel_from_w(ctx, w), false);
  ctx.set_output(0, contraction_output_dtype(ctx), window_out_shape(x, w[0], win));
}

// acc[i] += w * x[i * stride] for i < n. Unrolled by 4 with restrict pointers so that -O2 (whose
// cheap vectorizer cost model skips loops needing an epilogue) still pairs the lanes.
template <class S>
inline void axpy(double* __restrict acc, const S* __restrict x, double w, int64_t n, int64_t stride) {
  int64_t i = 0;
  if (stride == 1) {
    for (; i + 4 <= n; i += 4) {
      const double x0 = x[i], x1 = x[i + 1], x2 = x[i + 2], x3 = x[i + 3];
      acc[i] += w * x0, acc[i + 1] += w * x1, acc[i + 2] += w * x2, acc[i + 3] += w * x3;
    }
  }
  for (; i < n; ++i) acc[i] += w * double(x[i * stride]);
}

// Shift-and-accumulate: for each (input channel, tap) add w * shifted input rows into a double
// plane of one output channel; every inner loop is one contiguous-output axpy over a row.
template <class SX, class SW>
void conv_core(const SX* x, const SW* w, const std::vector<double>& bias, int64_t N, int64_t C, int64_t M,
               int64_t group, const Window& win, Tensor& Y) {
  // An empty output (N or M = 0) may still have a huge plane (even one whose size overflows):
  // no scratch for it (fuzz).
  if (Y.numel() == 0) return;
  const int64_t Cg = C / group, Mg = M / group, in_sz = win.in_size(), out_sz = win.out_size(), k_sz = win.k_size();
  const int64_t OD = win.out[0], OH = win.out[1], OW = win.out[2], IH = win.in[1], IW = win.in[2];
  const bool pointwise = k_sz == 1 && win.s[0] * win.s[1] * win.s[2] == 1 &&
                         win.pb[0] + win.pb[1] + win.pb[2] + win.pe[0] + win.pe[1] + win.pe[2] == 0;
  std::vector<double> acc(static_cast<size_t>(out_sz));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      const int64_t g = m / Mg;
      std::fill(acc.begin(), acc.end(), bias.empty() ? 0.0 : bias[m]);
      for (int64_t c = 0; c < Cg; ++c) {
        const SX* xc = x + (n * C + g * Cg + c) * in_sz;
        const SW* wc = w + (m * Cg + c) * k_sz;
        if (pointwise) {
          axpy(acc.data(), xc, double(wc[0]), out_sz, 1);
          continue;
        }
        for (int64_t kd = 0; kd < win.k[0]; ++kd)
          for (int64_t kh = 0; kh < win.k[1]; ++kh)
            for (int64_t kw = 0; kw < win.k[2]; ++kw) {
              const double wv = wc[(kd * win.k[1] + kh) * win.k[2] + kw];
              int64_t lo, hi;
              valid_range(IW, OW, win.s[2], win.pb[2], kw * win.d[2], lo, hi);
              if (lo >= hi) continue;
              for (int64_t od = 0; od < OD; ++od) {
                const int64_t id = od * win.s[0] - win.pb[0] + kd * win.d[0];
                if (id < 0 || id >= win.in[0]) continue;
                for (int64_t oh = 0; oh < OH; ++oh) {
                  const int64_t ih = oh * win.s[1] - win.pb[1] + kh * win.d[1];
                  if (ih < 0 || ih >= IH) continue;
                  const int64_t base = (id * IH + ih) * IW - win.pb[2] + kw * win.d[2], sw = win.s[2];
                  axpy(acc.data() + (od * OH + oh) * OW + lo, xc + base + lo * sw, wv, hi - lo, sw);
                }
              }
            }
      }
      store_doubles(Y, (n * M + m) * out_sz, acc.data(), out_sz);
    }
}

void conv_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor &X = *in[0], &W = *in[1];
  const Tensor* B = opt_in(in, 2);
  Window win = make_window(n, X.shape(), Shape(W.shape().begin() + 2, W.shape().end()), false);
  std::vector<double> bias = B ? load_doubles(*B) : std::vector<double>{};
  with_real_data(X, [&](auto x) {
    with_real_data(W, [&](auto w) {
      conv_core(x, w, bias, X.shape()[0], X.shape()[1], W.shape()[0], n.attr_i("group", 1), win, out[0]);
    });
  });
}

// ---------------------------------------------------------------- ConvTranspose

// ConvTranspose's geometry (ir/conv_geometry.h) in the reference loops' 3-axis window.
Window convtranspose_window(const Node& n, const Shape& x, const Shape& w) {
  const ConvTransposeAxes a = convtranspose_axes(n, x, w);
  Window win;
  win.nd = a.nd;
  for (int i = 0; i < a.nd; ++i) {
    const int j = 3 - a.nd + i;
    win.in[j] = a.in[i], win.k[j] = a.k[i], win.s[j] = a.s[i], win.d[j] = a.d[i];
    win.pb[j] = a.pb[i], win.pe[j] = a.pe[i], win.out[j] = a.out[i];
  }
  return win;
}

void convtranspose_infer(InferContext& ctx) {
  require_numeric(ctx, 0);
  require_same_dtype(ctx, 0, 1);
  const Shape &x = ctx.shape(0), &w = ctx.shape(1);
  const int64_t group = ctx.node().attr_i("group", 1);
  if (w.size() < 3 || x.size() != w.size()) ctx.fail("W " + shape_str(w) + " does not match X " + shape_str(x));
  if (group < 1 || x[1] != w[0] || w[0] % group != 0)
    ctx.fail("X channels " + std::to_string(x[1]) + " must equal W[0] " + std::to_string(w[0]) +
             " and divide by group");
  kernel_from_w(ctx, w);
  const int64_t m = shape_mul(ctx.node(), w[1], group);
  if (ctx.has_input(2) && ctx.shape(2) != Shape{m}) ctx.fail("bias must have shape [" + std::to_string(m) + "]");
  ctx.set_output(0, ctx.dtype(0), window_out_shape(x, m, convtranspose_window(ctx.node(), x, w)));
}

// Scatter form: every input element adds x * w into the outputs its taps reach. The last axis
// is accumulated phase-major (ow = q * s + r kept at [r][q]), where one tap's outputs are
// contiguous, so the inner loop is a unit-stride axpy; each output still sums its terms in
// (channel, tap) order.
void convtranspose_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor &X = *in[0], &W = *in[1];
  const Tensor* B = opt_in(in, 2);
  if (out[0].numel() == 0) return;  // an empty output may still have a huge plane (fuzz)
  const Window win = convtranspose_window(n, X.shape(), W.shape());
  const int64_t N = X.shape()[0], C = X.shape()[1], G = n.attr_i("group", 1), Cg = C / G, Mg = W.shape()[1], M = Mg * G;
  const int64_t in_sz = win.in_size(), out_sz = win.out_size(), k_sz = win.k_size();
  const int64_t OW = win.out[2], SW = win.s[2], QW = (OW + SW - 1) / SW, rows = win.out[0] * win.out[1];
  std::vector<double> xv = load_doubles(X), wv = load_doubles(W), bias = B ? load_doubles(*B) : std::vector<double>{};
  std::vector<double> acc(static_cast<size_t>(rows * SW * QW)), plane(static_cast<size_t>(out_sz));
  for (int64_t b = 0; b < N; ++b)
    for (int64_t m = 0; m < M; ++m) {
      const int64_t g = m / Mg;
      std::fill(acc.begin(), acc.end(), bias.empty() ? 0.0 : bias[m]);
      for (int64_t c = 0; c < Cg; ++c) {
        const double* xc = xv.data() + (b * C + g * Cg + c) * in_sz;
        const double* wc = wv.data() + ((g * Cg + c) * Mg + m % Mg) * k_sz;
        for (int64_t kd = 0; kd < win.k[0]; ++kd)
          for (int64_t kh = 0; kh < win.k[1]; ++kh)
            for (int64_t kw = 0; kw < win.k[2]; ++kw) {
              const double wk = wc[(kd * win.k[1] + kh) * win.k[2] + kw];
              // Input positions whose tap lands inside the output, found once per tap.
              int64_t dlo, dhi, hlo, hhi, wlo, whi;
              valid_range(win.out[0], win.in[0], win.s[0], win.pb[0], kd * win.d[0], dlo, dhi);
              valid_range(win.out[1], win.in[1], win.s[1], win.pb[1], kh * win.d[1], hlo, hhi);
              valid_range(OW, win.in[2], SW, win.pb[2], kw * win.d[2], wlo, whi);
              if (whi <= wlo) continue;
              // ow = iw * s + off = (iw + qoff) * s + r.
              const int64_t off = kw * win.d[2] - win.pb[2];
              const int64_t qoff = off >= 0 ? off / SW : -((-off + SW - 1) / SW), r = off - qoff * SW;
              for (int64_t id = dlo; id < dhi; ++id) {
                const int64_t od = id * win.s[0] - win.pb[0] + kd * win.d[0];
                for (int64_t ih = hlo; ih < hhi; ++ih) {
                  const int64_t oh = ih * win.s[1] - win.pb[1] + kh * win.d[1];
                  const double* __restrict xr = xc + (id * win.in[1] + ih) * win.in[2] + wlo;
                  double* __restrict ar = acc.data() + ((od * win.out[1] + oh) * SW + r) * QW + qoff + wlo;
                  for (int64_t i = 0; i < whi - wlo; ++i) ar[i] += wk * xr[i];
                }
              }
            }
      }
      for (int64_t row = 0; row < rows; ++row)
        for (int64_t ow = 0; ow < OW; ++ow) plane[row * OW + ow] = acc[(row * SW + ow % SW) * QW + ow / SW];
      store_doubles(out[0], (b * M + m) * out_sz, plane.data(), out_sz);
    }
}

// ---------------------------------------------------------------- pooling

enum class PoolKind { max, avg, lp };

std::vector<int64_t> pool_kernel(InferContext& ctx) {
  const Node& n = ctx.node();
  if (!n.has_attr("kernel_shape")) ctx.fail("kernel_shape attribute is required");
  return n.attr_ints("kernel_shape");
}

template <PoolKind K>
void pool_infer(InferContext& ctx) {
  require_numeric(ctx, 0);
  // ONNX types AveragePool and LpPool for floats only (a truncated integer mean was returned).
  if (K != PoolKind::max && !dtype_is_float(ctx.dtype(0)))
    ctx.fail(std::string("needs a floating-point input, got ") + dtype_name(ctx.dtype(0)));
  const Node& n = ctx.node();
  const Shape& x = ctx.shape(0);
  const std::vector<int64_t> kernel = pool_kernel(ctx);
  Window w = make_window(n, x, kernel, n.attr_i("ceil_mode", 0) != 0);
  // Each output visits every tap: a window of 2^40 taps over a 1-element input would hang.
  if (w.k_size() > (int64_t{1} << 24)) ctx.fail("kernel_shape has " + std::to_string(w.k_size()) + " taps, more than 2^24");
  // As onnxruntime: a pad as large as the kernel would make windows of padding only.
  const std::vector<int64_t> pads = n.attr_ints("pads");
  for (size_t i = 0; i < pads.size() && !kernel.empty(); ++i)
    if (pads[i] >= kernel[i % kernel.size()])
      ctx.fail("pads " + std::to_string(pads[i]) + " >= kernel_shape " + std::to_string(kernel[i % kernel.size()]) +
               " (pads must be smaller than the kernel)");
  Shape o = window_out_shape(x, x[1], w);
  ctx.set_output(0, ctx.dtype(0), o);
  if (K == PoolKind::max && ctx.num_outputs() > 1) ctx.set_output(1, DType::i64, o);
}

// One pass over every output window. AveragePool with count_include_pad counts taps that fall
// inside the padded input [-pb, in+pe) but not taps past it (ceil_mode overhang), per the ONNX
// reference. MaxPool propagates NaN and records the first maximum's flat index
// (storage_order 1: spatial dims column-major).
// MaxPool compares in S (integers as integers, so int64 past 2^53 keeps its order) and, when
// exact is given, also writes each window's maximum there as an S.
template <class S>
void pool_core(const S* x, int64_t nc, const Window& w, PoolKind kind, bool include_pad, double p, bool col_major,
               double* y, int64_t* arg, S* exact = nullptr) {
  auto is_nan = [](S v) {
    if constexpr (std::is_floating_point_v<S>) return std::isnan(v);
    else return (void)v, false;
  };
  if (nc == 0) return;  // empty output; its plane size may even overflow (fuzz)
  const int64_t in_sz = w.in_size(), out_sz = w.out_size();
  for (int64_t c = 0; c < nc; ++c) {
    const S* xc = x + c * in_sz;
    for (int64_t od = 0; od < w.out[0]; ++od)
      for (int64_t oh = 0; oh < w.out[1]; ++oh)
        for (int64_t ow = 0; ow < w.out[2]; ++ow) {
          double acc = kind == PoolKind::max ? -std::numeric_limits<double>::infinity() : 0.0;
          S top{};
          int64_t count = 0, pad_count = 0, best = -1;
          const int64_t o[3] = {od, oh, ow};
          int64_t st[3];
          for (int a = 0; a < 3; ++a) st[a] = o[a] * w.s[a] - w.pb[a];
          for (int64_t kd = 0; kd < w.k[0]; ++kd) {
            const int64_t id = st[0] + kd * w.d[0];
            for (int64_t kh = 0; kh < w.k[1]; ++kh) {
              const int64_t ih = st[1] + kh * w.d[1];
              for (int64_t kw = 0; kw < w.k[2]; ++kw) {
                const int64_t iw = st[2] + kw * w.d[2];
                if (id < 0 || id >= w.in[0] || ih < 0 || ih >= w.in[1] || iw < 0 || iw >= w.in[2]) {
                  if (id >= -w.pb[0] && id < w.in[0] + w.pe[0] && ih >= -w.pb[1] && ih < w.in[1] + w.pe[1] &&
                      iw >= -w.pb[2] && iw < w.in[2] + w.pe[2])
                    ++pad_count;
                  continue;
                }
                const int64_t xi = (id * w.in[1] + ih) * w.in[2] + iw;
                const double v = xc[xi];
                ++count;
                if (kind == PoolKind::max) {
                  const S sv = xc[xi];
                  if (best < 0 || sv > top || (is_nan(sv) && !is_nan(top))) {
                    top = sv;
                    acc = v;
                    best = col_major ? id + w.in[0] * (ih + w.in[1] * iw) : xi;
                  }
                } else if (kind == PoolKind::avg) {
                  acc += v;
                } else {
                  acc += std::pow(std::fabs(v), p);
                }
              }
            }
          }
          const int64_t yi = c * out_sz + (od * w.out[1] + oh) * w.out[2] + ow;
          if (kind == PoolKind::avg) acc /= static_cast<double>(include_pad ? count + pad_count : count);
          if (kind == PoolKind::lp) acc = std::pow(acc, 1.0 / p);
          y[yi] = acc;
          if (exact) exact[yi] = top;
          if (arg) arg[yi] = best < 0 ? -1 : c * in_sz + best;
        }
  }
}

template <PoolKind K>
void pool_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor& X = *in[0];
  Window w = make_window(n, X.shape(), n.attr_ints("kernel_shape"), n.attr_i("ceil_mode", 0) != 0);
  const int64_t nc = X.shape()[0] * X.shape()[1];
  std::vector<double> y(static_cast<size_t>(out[0].numel()));
  std::vector<int64_t> arg;
  const bool want_arg = K == PoolKind::max && has_out(out, 1);
  if (want_arg) arg.resize(y.size());
  const int64_t order = n.attr_i("storage_order", 0);
  if (order != 0 && order != 1) ref_fail(n, "storage_order must be 0 or 1");
  if (K == PoolKind::max && dtype_is_int(X.dtype())) {
    // Integer MaxPool moves values: compared and copied as int64 (uint64 by ordered_int).
    std::vector<int64_t> xi(static_cast<size_t>(X.numel())), top(y.size());
    for (int64_t e = 0; e < X.numel(); ++e) xi[static_cast<size_t>(e)] = ordered_int(X, e);
    pool_core<int64_t>(xi.data(), nc, w, K, false, 2.0, order == 1, y.data(), want_arg ? arg.data() : nullptr, top.data());
    const int64_t flip = X.dtype() == DType::u64 ? INT64_MIN : 0;
    for (size_t e = 0; e < top.size(); ++e) out[0].set_int(static_cast<int64_t>(e), top[e] ^ flip);
  } else {
    with_real_data(X, [&](auto x) {
      pool_core(x, nc, w, K, n.attr_i("count_include_pad", 0) != 0, static_cast<double>(n.attr_i("p", 2)), order == 1,
                y.data(), want_arg ? arg.data() : nullptr);
    });
    store_doubles(out[0], 0, y.data(), out[0].numel());
  }
  if (want_arg) std::memcpy(out[1].raw(), arg.data(), arg.size() * sizeof(int64_t));
}

void global_pool_infer(InferContext& ctx) {
  require_numeric(ctx, 0);
  Shape s = ctx.shape(0);
  if (s.size() < 3) ctx.fail("expects (N, C, spatial...) input, got " + shape_str(s));
  std::fill(s.begin() + 2, s.end(), 1);
  ctx.set_output(0, ctx.dtype(0), s);
}

// GlobalAveragePool, GlobalMaxPool, GlobalLpPool ((sum |x|^p)^(1/p) per channel, p an int
// attribute, default 2, as LpPool).
template <PoolKind K>
void global_pool_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor& X = *in[0];
  const double p = static_cast<double>(n.attr_i("p", 2));
  const int64_t nc = X.shape()[0] * X.shape()[1], sp = nc ? X.numel() / nc : 0;
  std::vector<double> y(static_cast<size_t>(nc));
  with_real_data(X, [&](auto x) {
    for (int64_t c = 0; c < nc; ++c) {
      double acc = K == PoolKind::max ? -std::numeric_limits<double>::infinity() : 0.0;
      for (int64_t i = 0; i < sp; ++i) {
        const double v = x[c * sp + i];
        if (K == PoolKind::max)
          acc = (std::isnan(v) || v > acc) && !std::isnan(acc) ? v : acc;
        else if (K == PoolKind::lp)
          acc += std::pow(std::fabs(v), p);
        else
          acc += v;
      }
      y[c] = K == PoolKind::max ? acc : K == PoolKind::lp ? std::pow(acc, 1.0 / p) : acc / static_cast<double>(sp);
    }
  });
  store_doubles(out[0], 0, y.data(), nc);
}

// ---------------------------------------------------------------- normalization

void per_channel_check(InferContext& ctx, int first, int last) {
  const Shape& x = ctx.shape(0);
  if (x.size() < 2) ctx.fail("input must have rank >= 2 (N, C, ...), got " + shape_str(x));
  for (int i = first; i <= last; ++i)
    if (ctx.has_input(i) && shape_numel(ctx.shape(i)) != x[1])
      ctx.fail("input " + std::to_string(i) + " " + shape_str(ctx.shape(i)) + " must hold " + std::to_string(x[1]) +
               " per-channel values");
}

void batchnorm_infer(InferContext& ctx) {
  require_numeric(ctx, 0);
  per_channel_check(ctx, 1, 4);
  const Shape& x = ctx.shape(0);
  ctx.set_output(0, ctx.dtype(0), x);
  // Training-mode outputs: running mean/var (opset >= 14) or mean, var, saved mean/var (< 14).
  for (int i = 1; i < ctx.num_outputs(); ++i) ctx.set_output(i, ctx.dtype(3), {x[1]});
}

// Inference: y = (x - mean) / sqrt(var + eps) * scale + B. Training mode (training_mode=1, or
// extra outputs before opset 14) uses the batch's population mean/var and reports updated
// running statistics (momentum * running + (1 - momentum) * batch).
void batchnorm_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor& X = *in[0];
  const int64_t N = X.shape()[0], C = X.shape()[1], sp = N * C != 0 ? X.numel() / (N * C) : 0;
  const double eps = n.attr_f("epsilon", 1e-5), momentum = n.attr_f("momentum", 0.9);
  const bool training = n.attr_i("training_mode", 0) != 0 || (n.opset < 14 && has_out(out, 1));
  std::vector<double> x = load_doubles(X), scale = load_doubles(*in[1]), bias = load_doubles(*in[2]);
  std::vector<double> mean = load_doubles(*in[3]), var = load_doubles(*in[4]);
  std::vector<double> bmean(C, 0.0), bvar(C, 0.0);
  if (training) {
    for (int64_t c = 0; c < C; ++c) {
      double s = 0, q = 0;
      for (int64_t b = 0; b < N; ++b)
        for (int64_t i = 0; i < sp; ++i) s += x[(b * C + c) * sp + i];
      bmean[c] = s / double(N * sp);
      for (int64_t b = 0; b < N; ++b)
        for (int64_t i = 0; i < sp; ++i)
          q += (x[(b * C + c) * sp + i] - bmean[c]) * (x[(b * C + c) * sp + i] - bmean[c]);
      bvar[c] = q / double(N * sp);
    }
  }
  const std::vector<double>& um = training ? bmean : mean;
  const std::vector<double>& uv = training ? bvar : var;
  for (int64_t b = 0; b < N; ++b)
    for (int64_t c = 0; c < C; ++c) {
      const double k = scale[c] / std::sqrt(uv[c] + eps);
      for (int64_t i = 0; i < sp; ++i) {
        double& v = x[(b * C + c) * sp + i];
        v = (v - um[c]) * k + bias[c];
      }
    }
  store_doubles(out[0], 0, x.data(), X.numel());
  std::vector<double> rm(C), rv(C);
  for (int64_t c = 0; c < C; ++c) {
    rm[c] = mean[c] * momentum + bmean[c] * (1 - momentum);
    rv[c] = var[c] * momentum + bvar[c] * (1 - momentum);
  }
  if (has_out(out, 1)) store_doubles(out[1], 0, rm.data(), C);
  if (has_out(out, 2)) store_doubles(out[2], 0, rv.data(), C);
  if (has_out(out, 3)) store_doubles(out[3], 0, bmean.data(), C);
  if (has_out(out, 4)) store_doubles(out[4], 0, bvar.data(), C);
}

void instancenorm_infer(InferContext& ctx) {
  require_numeric(ctx, 0);
  per_channel_check(ctx, 1, 2);
  ctx.set_output(0, ctx.dtype(0), ctx.shape(0));
}

// y = scale * (x - mean) / sqrt(var + eps) + B with mean/var over the spatial dims of each (n, c).
void instancenorm_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor& X = *in[0];
  const int64_t N = X.shape()[0], C = X.shape()[1], sp = N * C != 0 ? X.numel() / (N * C) : 0;
  const double eps = n.attr_f("epsilon", 1e-5);
  std::vector<double> x = load_doubles(X), scale = load_doubles(*in[1]), bias = load_doubles(*in[2]);
  for (int64_t b = 0; b < N; ++b)
    for (int64_t c = 0; c < C; ++c) {
      double* p = x.data() + (b * C + c) * sp;
      double s = 0, q = 0;
      for (int64_t i = 0; i < sp; ++i) s += p[i];
      const double mean = s / double(sp);
      for (int64_t i = 0; i < sp; ++i) q += (p[i] - mean) * (p[i] - mean);
      const double k = scale[c] / std::sqrt(q / double(sp) + eps);
      for (int64_t i = 0; i < sp; ++i) p[i] = (p[i] - mean) * k + bias[c];
    }
  store_doubles(out[0], 0, x.data(), X.numel());
}

void same_shape_infer(InferContext& ctx) {
  require_numeric(ctx, 0);
  ctx.set_output(0, ctx.dtype(0), ctx.shape(0));
}

// LRN (AlexNet): y = x / (bias + alpha/size * sum of x^2 over channels
// [c - floor((size-1)/2), c + ceil((size-1)/2)])^beta.
void lrn_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor& X = *in[0];
  if (X.rank() < 2) ref_fail(n, "input must have rank >= 2");
  const int64_t size = n.attr_i("size", 0);
  if (size < 1) ref_fail(n, "size attribute must be positive");
  const double alpha = n.attr_f("alpha", 1e-4), beta = n.attr_f("beta", 0.75), bias = n.attr_f("bias", 1.0);
  const int64_t N = X.shape()[0], C = X.shape()[1], sp = N * C != 0 ? X.numel() / (N * C) : 0;
  const int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
  std::vector<double> x = load_doubles(X), y(x.size());
  for (int64_t b = 0; b < N; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < sp; ++i) {
        double sq = 0;
        for (int64_t cc = std::max<int64_t>(0, c - lo); cc <= std::min(C - 1, c + hi); ++cc) {
          const double v = x[(b * C + cc) * sp + i];
          sq += v * v;
        }
        const int64_t xi = (b * C + c) * sp + i;
        y[xi] = x[xi] / std::pow(bias + alpha / double(size) * sq, beta);
      }
  store_doubles(out[0], 0, y.data(), X.numel());
}

// ---------------------------------------------------------------- Dropout

// Inference form only: output = input, mask all true. Training with a non-zero ratio is random
// and has no deterministic reference.
bool dropout_training(const Node& n, const Tensor* ratio, const Tensor* training) {
  if (!training || training->numel() == 0 || training->get(0) == 0.0) return false;
  double r = ratio && ratio->numel() ? ratio->get(0) : n.attr_f("ratio", 0.5);
  return r != 0.0;
}

void dropout_infer(InferContext& ctx) {
  const Node& n = ctx.node();
  if (ctx.constant(2) && dropout_training(n, ctx.constant(1), ctx.constant(2)))
    throw Unsupported("shape", ctx.node().label() + ": training-mode Dropout with a non-zero ratio is random; not supported");
  ctx.set_output(0, ctx.dtype(0), ctx.shape(0));
  if (ctx.num_outputs() > 1) ctx.set_output(1, n.opset < 10 ? ctx.dtype(0) : DType::boolean, ctx.shape(0));
}

void dropout_ref(const Node& n, const Ins& in, Outs& out) {
  if (dropout_training(n, opt_in(in, 1), opt_in(in, 2)))
    throw Unsupported("ref", n.label() + ": training-mode Dropout with a non-zero ratio is random; not supported");
  const Tensor& X = *in[0];
  if (X.dtype() == DType::string)
    out[0].strings = X.strings;
  else
    std::memcpy(out[0].raw(), X.raw(), X.nbytes());
  if (has_out(out, 1)) out[1].fill(1.0);
}

}  // namespace

// ONNX spec: out = s*(in-1) + output_padding + (k-1)*d + 1 - pads, or pads derived from
// output_shape / auto_pad SAME (output = in * stride).
ConvTransposeAxes convtranspose_axes(const Node& n, const Shape& x, const Shape& w) {
  check_nd(n, x);
  auto bad = [&](const std::string& why) { return Error("shape", n.label() + ": " + why); };
  const int nd = static_cast<int>(x.size()) - 2;
  if (w.size() != x.size()) throw bad("W " + shape_str(w) + " and X " + shape_str(x) + " differ in rank");
  auto strides = spatial_attr(n, "strides", nd, 1), dil = spatial_attr(n, "dilations", nd, 1);
  auto pads = spatial_attr(n, "pads", 2 * nd, 0), opad = spatial_attr(n, "output_padding", nd, 0);
  std::vector<int64_t> oshape = n.attr_ints("output_shape");
  if (oshape.size() == static_cast<size_t>(nd + 2)) oshape.erase(oshape.begin(), oshape.begin() + 2);
  if (!oshape.empty() && oshape.size() != static_cast<size_t>(nd)) throw bad("output_shape has the wrong length");
  const std::string ap = n.attr_s("auto_pad", "NOTSET");
  if (ap != "NOTSET" && ap != "SAME_UPPER" && ap != "SAME_LOWER" && ap != "VALID")
    throw bad("unknown auto_pad '" + printable(ap) + "'");  // as Conv (it read as NOTSET)
  ConvTransposeAxes a;
  a.nd = nd;
  for (int i = 0; i < nd; ++i) {
    const int64_t in = x[2 + i], k = w[2 + i], s = strides[i], d = dil[i];
    if (k < 1 || s < 1 || d < 1) throw bad("kernel, strides and dilations must be positive");
    // Keeps the arithmetic below in range: s * (in - 1) <= 2^60, sums of a few 2^40 terms.
    constexpr int64_t kBig = kMaxPad;
    if (k > kMaxWindowValue || s > kMaxWindowValue || d > kMaxWindowValue)
      throw bad("kernel, strides or dilations larger than 2^20");
    if (in > kBig || opad[i] > kBig || opad[i] < -kBig || pads[i] > kBig ||
        pads[i] < -kBig || pads[nd + i] > kBig || pads[nd + i] < -kBig ||
        (!oshape.empty() && (oshape[i] > kBig || oshape[i] < 0)))
      throw bad("input size, pads or output sizes larger than 2^40");
    const int64_t full = s * (in - 1) + opad[i] + (k - 1) * d + 1;
    int64_t pb = pads[i], pe = pads[nd + i], out;
    if (!oshape.empty() || ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      out = oshape.empty() ? in * s : oshape[i];
      // Past the full size (total < 0) the extra rows are zeros at the end (onnxruntime clamps
      // the total padding at 0; spreading a negative total put one at the start).
      const int64_t total = full - out, half = total / 2;
      if (total < 0)
        pb = 0, pe = total;
      else if (ap == "SAME_UPPER")
        pb = half, pe = total - half;
      else
        pb = total - half, pe = half;
    } else if (ap == "VALID") {
      pb = pe = 0;
      out = full;
    } else {
      // Negative pads would widen the output past the full one: refused, as onnxruntime and Conv do.
      if (pb < 0 || pe < 0) throw bad("negative pads");
      out = full - pb - pe;
    }
    if (out < 1) throw bad("output size " + std::to_string(out) + " is not positive");
    a.in.push_back(in), a.k.push_back(k), a.s.push_back(s), a.d.push_back(d);
    a.pb.push_back(pb), a.pe.push_back(pe), a.out.push_back(out);
  }
  return a;
}

void register_nn_ops() {
  register_op(never_raising(table_entry("Gemm", 2, 3, gemm_infer, gemm_ref)));
  register_op(never_raising(table_entry("MatMul", 2, 2, matmul_infer, matmul_ref)));
  register_op(never_raising(table_entry("Conv", 2, 3, conv_infer, conv_ref)));
  register_op(never_raising(table_entry("ConvTranspose", 2, 3, convtranspose_infer, convtranspose_ref)));
  register_op(never_raising(table_entry("MaxPool", 1, 1, pool_infer<PoolKind::max>, pool_ref<PoolKind::max>, 2)));
  register_op(never_raising(table_entry("AveragePool", 1, 1, pool_infer<PoolKind::avg>, pool_ref<PoolKind::avg>)));
  register_op(table_entry("LpPool", 1, 1, pool_infer<PoolKind::lp>, pool_ref<PoolKind::lp>));
  register_op(never_raising(table_entry("GlobalAveragePool", 1, 1, global_pool_infer, global_pool_ref<PoolKind::avg>)));
  register_op(never_raising(table_entry("GlobalMaxPool", 1, 1, global_pool_infer, global_pool_ref<PoolKind::max>)));
  register_op(table_entry("GlobalLpPool", 1, 1, global_pool_infer, global_pool_ref<PoolKind::lp>));
  register_op(never_raising(table_entry("BatchNormalization", 5, 5, batchnorm_infer, batchnorm_ref, 5)));
  register_op(never_raising(table_entry("InstanceNormalization", 3, 3, instancenorm_infer, instancenorm_ref)));
  register_op(table_entry("LRN", 1, 1, same_shape_infer, lrn_ref));
  register_op(table_entry("Dropout", 1, 3, dropout_infer, dropout_ref, 2));
}

}  // namespace fusor
