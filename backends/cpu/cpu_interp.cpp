// Block interpreter of a fused KernelSpec (see cpu_interp.h). Positions are evaluated kBlock
// at a time: strided offsets are computed incrementally along the innermost iteration dim,
// each node's kind / dtype is dispatched once per block, and every element still goes
// through the same scalar functions as the element-at-a-time definition (bit-identical).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "backends/cpu/cpu_interp.h"

namespace fusor {
namespace {

constexpr int kBlock = 256;
// Which outputs a block stores: none (a reduction body), element outputs, per-row outputs
// (an empty reduction's row), or both (the block holding a row's first position).
enum class Stores { none, elements, per_row, all };

// Views: loads, then outputs, then each inline contraction's a_at and b_at (KernelSpec::dots),
// then a row product's b_at and c_at.
int num_views(const KernelSpec& k) {
  return static_cast<int>(k.loads.size() + k.outputs.size() + 2 * k.dots.size() + (k.row_product ? 2 : 0));
}
const StridedView& view_of(const KernelSpec& k, int v) {
  const int nl = static_cast<int>(k.loads.size()), no = static_cast<int>(k.outputs.size()), nd = static_cast<int>(k.dots.size());
  if (v < nl) return k.loads[v].view;
  if (v < nl + no) return k.outputs[v - nl].view;
  if (v >= nl + no + 2 * nd) return v == nl + no + 2 * nd ? k.row_product->b_at : k.row_product->c_at;
  const InlineDot& d = k.dots[(v - nl - no) / 2];
  return (v - nl - no) % 2 == 0 ? d.a_at : d.b_at;
}

IterDims make_dims(const KernelSpec& k, const std::vector<int>& dims) {
  const int nv = num_views(k);
  IterDims it;
  it.strides.resize(nv);
  for (int d : dims) {
    const int64_t sz = k.space[d];
    it.count *= sz;
    if (sz == 1) continue;  // its coordinate is always 0
    bool merge = !it.size.empty();
    for (int v = 0; v < nv && merge; ++v)
      merge = it.strides[v].back() == view_of(k, v).strides[d] * sz;
    if (merge) {
      it.size.back() *= sz;
      for (int v = 0; v < nv; ++v) it.strides[v].back() = view_of(k, v).strides[d];
    } else {
      it.size.push_back(sz);
      for (int v = 0; v < nv; ++v) it.strides[v].push_back(view_of(k, v).strides[d]);
    }
  }
  if (it.count == 0) it.size.assign(1, 0);
  return it;
}

// Nodes reachable from roots (ascending ids), and the views their loads read (plus extra).
void needed(const KernelSpec& k, const std::vector<int>& roots, std::vector<int>& nodes, std::vector<int>& views) {
  std::vector<char> seen(k.expr.size(), 0);
  std::vector<int> stack(roots);
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    if (i < 0 || seen[i]) continue;
    seen[i] = 1;
    for (int a : k.expr[i].args) stack.push_back(a);
  }
  for (size_t i = 0; i < k.expr.size(); ++i)
    if (seen[i]) {
      nodes.push_back(static_cast<int>(i));
      if (k.expr[i].kind == ExprKind::load) views.push_back(k.expr[i].load);
      if (k.expr[i].kind == ExprKind::dot) {
        const int v = static_cast<int>(k.loads.size() + k.outputs.size()) + 2 * k.expr[i].dot;
        views.push_back(v), views.push_back(v + 1);
      }
    }
  std::sort(views.begin(), views.end());
  views.erase(std::unique(views.begin(), views.end()), views.end());
}

// Scratch of one kernel run: a column of kBlock values per node and per-view offsets.
struct Scratch {
  std::vector<HostScalar> cols;
  std::vector<int64_t> offs;
  HostScalar* col(int node) { return cols.data() + static_cast<size_t>(node) * kBlock; }
  int64_t* off(int view) { return offs.data() + static_cast<size_t>(view) * kBlock; }
};

class Runner {
 public:
  Runner(const KernelSpec& k, const PreparedKernel& pk, const CpuBuffers& bufs) : k_(k), pk_(pk), bufs_(bufs) {
    static thread_local Scratch scratch;  // reused across kernels (runs may be concurrent)
    s_ = &scratch;
    s_->cols.resize(k.expr.size() * kBlock);
    s_->offs.resize(static_cast<size_t>(num_views(k)) * kBlock);
    for (size_t i = 0; i < k.expr.size(); ++i) {
      const ExprNode& n = k.expr[i];
      if (n.kind != ExprKind::constant) continue;
      HostScalar c;
      if (dtype_is_integral(n.dtype)) c.i = n.ivalue;
      else c.f = n.value;
      std::fill_n(s_->col(static_cast<int>(i)), kBlock, c);
    }
    red_.assign(k.reductions.size(), HostScalar{0.0});
    if (!k.reduce_axes.empty()) dot_rows_.resize(k.dots.size());
  }

  void run() {
    const int64_t rows = k_.rows(), len = k_.row_length();
    if (rows == 0) return;
    if (k_.matmul) return run_matmul();
    if (k_.conv) return run_conv();
    const int nv = num_views(k_);
    std::vector<int64_t> base(nv), c(pk_.outer.size.size(), 0);
    if (k_.reduce_axes.empty()) {
      for (int v = 0; v < nv; ++v) base[v] = view_of(k_, v).offset;
      positions(pk_.outer, base.data(), 0, rows, nullptr);
      return;
    }
    for (int64_t row = 0; row < rows; ++row) {
      for (int v = 0; v < nv; ++v) {
        base[v] = view_of(k_, v).offset;
        for (size_t d = 0; d < c.size(); ++d) base[v] += c[d] * pk_.outer.strides[v][d];
      }
      for (auto& kept : dot_rows_) kept.clear();
      for (size_t r = 0; r < k_.reductions.size(); ++r) reduce_row(r, base.data(), len);
      if (len == 0) {
        // An empty reduction still writes its per-row outputs (the combiner's identity).
        eval_block(pk_.out_nodes, pk_.out_views, pk_.inner, base.data(), 0, 1, nullptr, Stores::per_row);
      } else {
        positions(pk_.inner, base.data(), 0, len, nullptr);
        if (k_.row_product) row_product(base.data(), len);
      }
      for (int d = static_cast<int>(c.size()) - 1; d >= 0 && ++c[d] == pk_.outer.size[d]; --d) c[d] = 0;
    }
  }

 private:
  const KernelSpec& k_;
  const PreparedKernel& pk_;
  const CpuBuffers& bufs_;
  Scratch* s_ = nullptr;
  std::vector<HostScalar> red_;
  std::vector<double> prow_;  // a row product's P over the current row (rounded to its dtype)
  std::vector<int64_t> gathered_;  // a gathered load's element offsets (load_offsets)
  std::vector<std::vector<HostScalar>> dot_rows_;  // per inline dot: its values over the current row so far
  int64_t row_q0_ = -1;  // the block's first position in its row where dot_rows_ applies, else -1

  // Evaluates and stores the outputs at positions [q0, q1) of dims (acc: one per position).
  void positions(const IterDims& dims, const int64_t* base, int64_t q0, int64_t q1, const double* acc) {
    for (int64_t q = q0; q < q1; q += kBlock) {
      const int cnt = static_cast<int>(std::min<int64_t>(kBlock, q1 - q));
      eval_block(pk_.out_nodes, pk_.out_views, dims, base, q, cnt, acc ? acc + (q - q0) : nullptr,
                 q == 0 ? Stores::all : Stores::elements);
    }
  }

  // KernelSpec::row_product over the row whose P the element pass kept in prow_: each C element
  // summed in double in ascending k (as the contraction kernels), rounded to its dtype.
  void row_product(const int64_t* base, int64_t len) {
    const RowProduct& rp = *k_.row_product;
    const int vb = num_views(k_) - 2;
    const CpuBuffer &b = bufs_[rp.b_buffer], &c = bufs_[rp.c_buffer];
    for (int64_t n = 0; n < rp.n; ++n) {
      double acc = 0.0;
      for (int64_t q = 0; q < len; ++q) acc += prow_[q] * scalar_load(b.dtype, b.base, base[vb] + q * rp.b_sk + n * rp.b_sn).f;
      scalar_store(c.dtype, c.base, base[vb + 1] + n * rp.c_sn, HostScalar{round_float(acc, rp.c_dtype)});
    }
  }

  void reduce_row(size_t r, const int64_t* base, int64_t len) {
    const Reduction& R = k_.reductions[r];
    double a = R.combiner == Combiner::sum    ? 0.0
               : R.combiner == Combiner::prod ? 1.0
               : R.combiner == Combiner::max  ? -std::numeric_limits<double>::infinity()
                                              : std::numeric_limits<double>::infinity();
    double comp = 0.0;
    const HostScalar* body = s_->col(R.body);
    for (int64_t q = 0; q < len; q += kBlock) {
      const int cnt = static_cast<int>(std::min<int64_t>(kBlock, len - q));
      eval_block(pk_.red_nodes[r], pk_.red_views[r], pk_.inner, base, q, cnt, nullptr, Stores::none);
      switch (R.combiner) {  // fused reductions are float dtypes (fusion.cpp); terms in order
        case Combiner::sum:  // Neumaier-compensated for float32-class data, as ref (ir/ops/reduce.cpp)
          if (R.dtype == DType::f64) {
            for (int j = 0; j < cnt; ++j) a += body[j].f;
          } else {
            for (int j = 0; j < cnt; ++j) neumaier_add(a, comp, body[j].f);
          }
          break;
        case Combiner::prod: for (int j = 0; j < cnt; ++j) a *= body[j].f; break;
        // NaN propagates through max/min (IEEE semantics of ONNX reductions).
        case Combiner::max:
          for (int j = 0; j < cnt; ++j) {
            const double x = body[j].f;
            a = (std::isnan(x) || std::isnan(a)) ? NAN : std::max(a, x);
          }
          break;
        case Combiner::min:
          for (int j = 0; j < cnt; ++j) {
            const double x = body[j].f;
            a = (std::isnan(x) || std::isnan(a)) ? NAN : std::min(a, x);
          }
          break;
      }
    }
    if (comp != 0.0 && std::isfinite(comp)) a += comp;  // only when there is one: -0 + 0 would be +0
    red_[r].f = round_float(R.mean ? a / static_cast<double>(len) : a, R.dtype);
  }

  void run_matmul() {
    const MatMulDesc& d = *k_.matmul;
    const size_t r = k_.space.size();
    const int64_t M = d.m, N = d.n, nb = k_.rows() / std::max<int64_t>(M * N, 1);
    if (M * N == 0) return;
    const int nv = num_views(k_);
    std::vector<int64_t> base(nv), bc(r - 2, 0);
    for (int v = 0; v < nv; ++v) base[v] = view_of(k_, v).offset;
    // Rows per tile: each widened B panel serves up to 64 rows; at most ~2 MB of accumulators.
    const int64_t mt = std::max<int64_t>(4, std::min<int64_t>(64, (int64_t{1} << 18) / N) / 4 * 4);
    std::vector<double> acc(static_cast<size_t>(mt * N));
    for (int64_t b = 0; b < nb; ++b) {
      int64_t ab = d.a.offset, bb = d.b.offset;
      for (size_t i = 0; i + 2 < r; ++i) ab += bc[i] * d.a.strides[i], bb += bc[i] * d.b.strides[i];
      for (int64_t m0 = 0; m0 < M; m0 += mt) {
        const int64_t m1 = std::min(M, m0 + mt);
        matmul_acc_rows(d, bufs_, ab, bb, m0, m1, acc.data());
        positions(pk_.outer, base.data(), (b * M + m0) * N, (b * M + m1) * N, acc.data());
      }
      for (int i = static_cast<int>(r) - 3; i >= 0 && ++bc[i] == k_.space[i]; --i) bc[i] = 0;
    }
  }

  void run_conv() {
    const ConvDesc& d = *k_.conv;
    const int64_t plane = d.oh * d.ow;
    if (plane == 0) return;
    const int nv = num_views(k_);
    std::vector<int64_t> base(nv);
    for (int v = 0; v < nv; ++v) base[v] = view_of(k_, v).offset;
    // Channel blocks within one group, ~2 MB of accumulators at most.
    const int64_t kpg = d.k / d.groups;
    const int64_t kb = std::max<int64_t>(1, std::min<int64_t>(64, (int64_t{1} << 18) / plane));
    std::vector<double> acc(static_cast<size_t>(std::min(kb, kpg) * plane));
    for (int64_t n = 0; n < d.n; ++n)
      for (int64_t ko0 = 0; ko0 < d.k;) {
        const int64_t ko1 = std::min(ko0 + kb, (ko0 / kpg + 1) * kpg);
        conv_acc_planes(d, bufs_, n, ko0, ko1, acc.data());
        const int64_t p0 = (n * d.k + ko0) * plane;
        positions(pk_.outer, base.data(), p0, p0 + (ko1 - ko0) * plane, acc.data());
        ko0 = ko1;
      }
  }

  // Offsets of `views` at positions [q0, q0 + cnt) of dims.
  void offsets(const std::vector<int>& views, const IterDims& dims, const int64_t* base, int64_t q0, int cnt) {
    const int rank = static_cast<int>(dims.size.size());
    if (rank == 0 || dims.count == 0) {  // one position (an empty reduction's row: coordinates 0)
      for (int v : views) s_->off(v)[0] = base[v];
      return;
    }
    int64_t c[16];
    std::vector<int64_t> big;
    int64_t* co = c;
    if (rank > 16) big.resize(rank), co = big.data();
    for (int d = rank - 1; d >= 0; --d) {
      co[d] = q0 % dims.size[d];
      q0 /= dims.size[d];
    }
    for (int j = 0; j < cnt;) {
      const int len = static_cast<int>(std::min<int64_t>(dims.size[rank - 1] - co[rank - 1], cnt - j));
      for (int v : views) {
        const std::vector<int64_t>& st = dims.strides[v];
        int64_t cur = base[v];
        for (int d = 0; d < rank; ++d) cur += co[d] * st[d];
        const int64_t s = st[rank - 1];
        int64_t* o = s_->off(v) + j;
        for (int t = 0; t < len; ++t) o[t] = cur + t * s;
      }
      j += len;
      co[rank - 1] += len;
      for (int d = rank - 1; d > 0 && co[d] == dims.size[d]; --d) co[d] = 0, ++co[d - 1];
    }
  }

  // An inline contraction's element (KernelSpec::dots): the product summed in double in
  // ascending k, as the contraction kernels' accumulators, rounded to the node's dtype.
  // In a row kernel the passes (each reduction, then the outputs) evaluate the same positions
  // again: each row's products are computed by the first pass and kept (dot_rows_), as the GPU
  // kernels keep the row in registers.
  void dot(const ExprNode& n, HostScalar* out, int cnt) {
    if (row_q0_ >= 0) {
      std::vector<HostScalar>& kept = dot_rows_[n.dot];
      if (row_q0_ + cnt <= static_cast<int64_t>(kept.size())) {
        std::copy_n(kept.data() + row_q0_, cnt, out);
        return;
      }
      dot_values(n, out, cnt);
      if (row_q0_ == static_cast<int64_t>(kept.size())) kept.insert(kept.end(), out, out + cnt);
      return;
    }
    dot_values(n, out, cnt);
  }
  void dot_values(const ExprNode& n, HostScalar* out, int cnt) {
    const InlineDot& d = k_.dots[n.dot];
    const int v = static_cast<int>(k_.loads.size() + k_.outputs.size()) + 2 * n.dot;
    const int64_t *oa = s_->off(v), *ob = s_->off(v + 1);
    double sums[kBlock];
    matmul_dots(d.mm, bufs_, oa, d.a_sk, ob, d.b_sk, cnt, sums);
    for (int j = 0; j < cnt; ++j) out[j].f = round_float(sums[j], n.dtype);
  }

  // Element offsets of load node n at this block's positions: its view's, plus for a gathered
  // load the checked index times the axis stride (ONNX Gather: [-dim, dim), negative from the end).
  const int64_t* load_offsets(const ExprNode& n, int cnt) {
    const Load& l = k_.loads[n.load];
    const int64_t* o = s_->off(n.load);
    if (!l.gathered()) return o;
    const HostScalar* ix = s_->col(n.args.at(0));
    gathered_.resize(kBlock);
    for (int j = 0; j < cnt; ++j) {
      int64_t i = ix[j].i;
      if (i < -l.gather_dim || i >= l.gather_dim)
        throw Error("cpu", l.gather_node + ": index " + std::to_string(i) + " out of range [-" +
                               std::to_string(l.gather_dim) + ", " + std::to_string(l.gather_dim) + ")");
      if (i < 0) i += l.gather_dim;
      gathered_[j] = o[j] + i * l.gather_stride;
    }
    return gathered_.data();
  }

  void load(const ExprNode& n, HostScalar* out, int cnt) {
    const CpuBuffer& b = bufs_[k_.loads[n.load].buffer];
    const int64_t* o = load_offsets(n, cnt);
    int64_t lo = o[0], hi = o[0];
    for (int j = 1; j < cnt; ++j) lo = std::min(lo, o[j]), hi = std::max(hi, o[j]);
    if (lo < 0 || hi >= b.numel) {
      // Only reachable for positions of an empty reduction (their value is never combined).
      for (int j = 0; j < cnt; ++j) {
        if (o[j] < 0 || o[j] >= b.numel) out[j].f = std::numeric_limits<double>::quiet_NaN();
        else out[j] = scalar_load(b.dtype, b.base, o[j]);
      }
      return;
    }
    if (b.dtype == DType::f32) {
      const float* p = reinterpret_cast<const float*>(b.base);
      for (int j = 0; j < cnt; ++j) out[j].f = p[o[j]];
    } else if (b.dtype == DType::f64) {
      const double* p = reinterpret_cast<const double*>(b.base);
      for (int j = 0; j < cnt; ++j) out[j].f = p[o[j]];
    } else if (b.dtype == DType::i64) {
      const int64_t* p = reinterpret_cast<const int64_t*>(b.base);
      for (int j = 0; j < cnt; ++j) out[j].i = p[o[j]];
    } else {
      for (int j = 0; j < cnt; ++j) out[j] = scalar_load(b.dtype, b.base, o[j]);
    }
  }

  void store(const KernelOutput& ko, int view, const HostScalar* val, int cnt) {
    const CpuBuffer& b = bufs_[ko.buffer];
    const int64_t* o = s_->off(view);
    if (b.dtype == DType::f32) {
      float* p = reinterpret_cast<float*>(b.base);
      for (int j = 0; j < cnt; ++j) p[o[j]] = static_cast<float>(val[j].f);
    } else {
      for (int j = 0; j < cnt; ++j) scalar_store(b.dtype, b.base, o[j], val[j]);
    }
  }

  // An output that is a load of its own dtype (Identity, Expand, a Split piece...) copies the
  // bytes: going through a double would quiet a signalling NaN (f32 0x7f800001 -> 0x7fc00001).
  bool copy(const KernelOutput& ko, int view, int cnt) {
    const ExprNode& e = k_.expr[ko.expr];
    if (e.kind != ExprKind::load) return false;
    const CpuBuffer &src = bufs_[k_.loads[e.load].buffer], &dst = bufs_[ko.buffer];
    if (src.dtype != dst.dtype || dtype_size(dst.dtype) == 0) return false;
    const int64_t *i = load_offsets(e, cnt), *o = s_->off(view);
    for (int j = 0; j < cnt; ++j)
      if (i[j] < 0 || i[j] >= src.numel) return false;  // positions of an empty reduction: the value path
    const size_t es = dtype_size(dst.dtype);
    for (int j = 0; j < cnt; ++j) std::memcpy(dst.base + o[j] * es, src.base + i[j] * es, es);
    return true;
  }

  void op(const ExprNode& n, HostScalar* out, int cnt) {
    // eval_scalar_typed reads one entry per node input (absent ones included).
    const size_t na = std::max(n.args.size(), n.bound.absent.size());
    HostScalar xs[8];
    DType ts[8];
    const HostScalar* cs[8];
    std::vector<HostScalar> xb;
    std::vector<DType> tb;
    std::vector<const HostScalar*> cb;
    HostScalar* x = xs;
    DType* t = ts;
    const HostScalar** c = cs;
    if (na > 8) xb.resize(na), tb.resize(na), cb.resize(na), x = xb.data(), t = tb.data(), c = cb.data();
    for (size_t a = 0; a < na; ++a) {
      const bool has = a < n.args.size() && n.args[a] >= 0;
      x[a] = HostScalar{0.0};
      t[a] = has ? k_.expr[n.args[a]].dtype : DType::f64;
      c[a] = has ? s_->col(n.args[a]) : nullptr;
    }
    const ScalarRule& rule = *n.op->scalar;
    // Float math with every operand present and already of the math dtype: eval_scalar_typed
    // reduces to rule.eval and one conversion of the result, called here directly.
    bool direct = !dtype_is_integral(n.math) && !rule.variadic && n.args.size() == n.bound.absent.size();
    for (size_t a = 0; a < na && direct; ++a) direct = c[a] && !n.bound.absent[a] && t[a] == n.math;
    if (direct) {
      double v[8];
      if (na <= 8) {
        const double* params = n.bound.params.data();
        for (int j = 0; j < cnt; ++j) {
          for (size_t a = 0; a < na; ++a) v[a] = c[a][j].f;
          const double r = rule.eval(v, params, false);
          if (n.dtype == DType::f32) out[j].f = static_cast<double>(static_cast<float>(r));
          else out[j] = scalar_convert(HostScalar{r}, DType::f64, n.dtype);
        }
        return;
      }
    }
    for (int j = 0; j < cnt; ++j) {
      for (size_t a = 0; a < na; ++a)
        if (c[a]) x[a] = c[a][j];
      out[j] = eval_scalar_typed(rule, n.bound, x, t, n.math, n.dtype);
    }
  }

  // Evaluates `nodes` at positions [q0, q0 + cnt) of dims, then stores the outputs `which`
  // selects. Without reduce axes every position is its own row: per-row outputs store at each.
  void eval_block(const std::vector<int>& nodes, const std::vector<int>& views, const IterDims& dims,
                  const int64_t* base, int64_t q0, int cnt, const double* acc, Stores which) {
    offsets(views, dims, base, q0, cnt);
    row_q0_ = !dot_rows_.empty() && which != Stores::per_row ? q0 : -1;
    for (int i : nodes) {
      const ExprNode& n = k_.expr[i];
      HostScalar* out = s_->col(i);
      switch (n.kind) {
        case ExprKind::constant: break;  // filled once
        case ExprKind::load: load(n, out, cnt); break;
        case ExprKind::red_ref: std::fill_n(out, cnt, red_[n.red]); break;
        case ExprKind::acc:  // 0 outside contraction kernels
          for (int j = 0; j < cnt; ++j) out[j].f = round_float(acc ? acc[j] : 0.0, n.dtype);
          break;
        case ExprKind::op: op(n, out, cnt); break;
        case ExprKind::dot: dot(n, out, cnt); break;
      }
    }
    if (which == Stores::none) return;
    if (k_.row_product && which != Stores::per_row) {
      const RowProduct& rp = *k_.row_product;
      if (prow_.size() < static_cast<size_t>(q0 + cnt)) prow_.resize(static_cast<size_t>(q0 + cnt));
      const HostScalar* pv = s_->col(rp.p);
      for (int j = 0; j < cnt; ++j) prow_[q0 + j] = round_float(scalar_convert(pv[j], k_.expr[rp.p].dtype, DType::f64).f, rp.p_dtype);
    }
    const int nl = static_cast<int>(k_.loads.size());
    const bool rowwise = !k_.reduce_axes.empty();
    for (size_t o = 0; o < k_.outputs.size(); ++o) {
      const KernelOutput& ko = k_.outputs[o];
      const bool per_row = ko.per_row && rowwise;
      if (per_row ? which == Stores::elements : which == Stores::per_row) continue;
      if (copy(ko, nl + static_cast<int>(o), per_row ? 1 : cnt)) continue;
      store(ko, nl + static_cast<int>(o), s_->col(ko.expr), per_row ? 1 : cnt);
    }
  }
};

}  // namespace

PreparedKernel prepare_cpu_kernel(const KernelSpec& k) {
  // The tiled contractions walk the whole space as rows; ir/ never adds reductions to them.
  if ((k.matmul || k.conv) && !k.reduce_axes.empty())
    throw Error("cpu", k.name + ": a contraction kernel with reduce axes is not supported");
  PreparedKernel pk;
  std::vector<int> outer, inner;
  for (int i = 0; i < static_cast<int>(k.space.size()); ++i)
    (std::find(k.reduce_axes.begin(), k.reduce_axes.end(), i) != k.reduce_axes.end() ? inner : outer).push_back(i);
  pk.outer = make_dims(k, outer);
  pk.inner = make_dims(k, inner);
  for (const Reduction& r : k.reductions) {
    pk.red_nodes.emplace_back();
    pk.red_views.emplace_back();
    needed(k, {r.body}, pk.red_nodes.back(), pk.red_views.back());
  }
  std::vector<int> roots;
  for (auto& o : k.outputs) roots.push_back(o.expr);
  if (k.row_product) roots.push_back(k.row_product->p);
  needed(k, roots, pk.out_nodes, pk.out_views);
  const int nl = static_cast<int>(k.loads.size());
  for (size_t o = 0; o < k.outputs.size(); ++o) pk.out_views.push_back(nl + static_cast<int>(o));
  return pk;
}

void run_cpu_kernel(const KernelSpec& k, const PreparedKernel& pk, const CpuBuffers& bufs) {
  Runner(k, pk, bufs).run();
}

}  // namespace fusor
