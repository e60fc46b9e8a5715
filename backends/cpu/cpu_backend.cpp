// Backend "cpu": interprets the fused Plan (ir/kernel_spec.h) on the host, one KernelSpec at
// a time, over one arena laid out by the memory plan. It is the executable form of the
// KernelSpec contract: what the GPU code generators must reproduce. Every expression node
// computes in its math dtype and is converted to its own dtype (ir/scalar.h), as on a GPU;
// reductions and contractions accumulate in double like the reference.
#include <utility>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "backends/backend.h"
#include "backends/cpu/cpu_backends.h"
#include "ir/host_memory.h"
#include "ir/kernel_spec.h"
#include "ir/phases.h"
#include "ir/scalar.h"

namespace fusor {
namespace {

class CpuExecutable : public Executable {
 public:
  CpuExecutable(Plan p) : p_(std::move(p)), arena_(static_cast<size_t>(p_.arena_bytes)) {}

  std::vector<Tensor> run(const std::vector<Tensor>& inputs, RunStats* stats) override {
    auto t0 = std::chrono::steady_clock::now();
    check_run_inputs(p_.graph, inputs);
    // Poison the arena so an element no kernel wrote shows up as a mismatch.
    // An all-constant or all-empty plan has an empty arena, whose data() may be null.
    if (!arena_.empty()) std::memset(arena_.data(), 0xff, arena_.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].nbytes()) std::memcpy(base(p_.input_buffers[i]), inputs[i].raw(), inputs[i].nbytes());
    }
    for (size_t i = 0; i < p_.kernels.size(); ++i) {
      const KernelSpec& k = p_.kernels[i];
      const auto tk = std::chrono::steady_clock::now();
      if (k.kind == FusionKind::opaque) run_opaque(k);
      else run_kernel(k);
      if (timings_) timings_->push_back({static_cast<int>(i), "", us_between(t0, tk), us_between(tk, std::chrono::steady_clock::now())});
    }
    std::vector<Tensor> outs;
    for (int b : p_.output_buffers) outs.push_back(read_buffer(b));
    if (stats)
      stats->host_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    return outs;
  }
  int kernel_count() const override { return static_cast<int>(p_.kernels.size()); }
  // Per-kernel host time of one run (kernels run one after another on this thread).
  std::vector<KernelTiming> profile(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs) override {
    std::vector<KernelTiming> t;
    timings_ = &t;
    try {
      auto outs = run(inputs, nullptr);
      if (outputs) *outputs = std::move(outs);
    } catch (...) {
      timings_ = nullptr;
      throw;
    }
    timings_ = nullptr;
    return t;
  }

 private:
  static double us_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double, std::micro>(b - a).count();
  }
  std::vector<KernelTiming>* timings_ = nullptr;  // set while profile() runs
  Plan p_;
  std::vector<std::byte> arena_;

  std::byte* base(int b) {
    const Buffer& buf = p_.buffers[b];
    if (buf.role == Buffer::Role::constant)
      return const_cast<std::byte*>(std::as_const(*p_.graph.values[buf.value].constant).raw());  // read-only: no copy-on-write
    return arena_.data() + buf.offset;
  }

  Tensor read_buffer(int b) {
    const Buffer& buf = p_.buffers[b];
    Tensor t(buf.dtype, buf.shape);
    if (buf.dtype == DType::string) return *p_.graph.values[buf.value].constant;
    if (t.nbytes()) std::memcpy(t.raw(), base(b), t.nbytes());
    return t;
  }
  void write_buffer(int b, const Tensor& t) {
    if (p_.buffers[b].role == Buffer::Role::constant) return;
    if (t.nbytes()) std::memcpy(base(b), t.raw(), t.nbytes());
  }

  HostScalar load(int b, int64_t off) {
    const DType t = p_.buffers[b].dtype;
    // Only reachable for positions of an empty reduction (their value is never combined).
    if (off < 0 || off >= shape_numel(p_.buffers[b].shape)) {
      HostScalar nan;
      nan.f = std::numeric_limits<double>::quiet_NaN();
      return nan;
    }
    return scalar_load(t, base(b), off);
  }
  void store(int b, int64_t off, HostScalar v) { scalar_store(p_.buffers[b].dtype, base(b), off, v); }

  static int64_t offset_of(const StridedView& v, const std::vector<int64_t>& c) {
    int64_t o = v.offset;
    for (size_t i = 0; i < c.size(); ++i) o += c[i] * v.strides[i];
    return o;
  }

  // Evaluates the DAG at position c; red holds this row's reduction values, acc the contraction
  // value. Each node computes in its math dtype and is converted to its own dtype, as the
  // generated kernels do (ir/scalar.h).
  void eval(const KernelSpec& k, const std::vector<int64_t>& c, const std::vector<HostScalar>& red, double acc,
            std::vector<HostScalar>& val, int upto) {
    static thread_local std::vector<HostScalar> args_;  // scratch (runs may be concurrent)
    static thread_local std::vector<DType> types_;
    for (int i = 0; i <= upto; ++i) {
      const ExprNode& n = k.expr[i];
      HostScalar r;
      switch (n.kind) {
        case ExprKind::constant:
          if (dtype_is_integral(n.dtype)) r.i = n.ivalue;
          else r.f = n.value;
          break;
        case ExprKind::load: r = load(k.loads[n.load].buffer, offset_of(k.loads[n.load].view, c)); break;
        case ExprKind::red_ref: r = red[n.red]; break;
        case ExprKind::acc: r.f = round_float(acc, n.dtype); break;
        case ExprKind::op: {
          // eval_scalar_typed reads one entry per node input (absent ones included).
          const size_t na = std::max(n.args.size(), n.bound.absent.size());
          args_.assign(na, HostScalar{0.0});
          types_.assign(na, DType::f64);
          for (size_t a = 0; a < n.args.size(); ++a)
            if (n.args[a] >= 0) args_[a] = val[n.args[a]], types_[a] = k.expr[n.args[a]].dtype;
          r = eval_scalar_typed(*n.op->scalar, n.bound, args_.data(), types_.data(), n.math, n.dtype);
          break;
        }
      }
      val[i] = r;
    }
  }
  // Element `off` of a quantized B (MatMulDesc::dequant_b) through the op table's load rule,
  // evaluated like any fused op (eval_scalar_typed), the value the GPU kernels print.
  double dequant_b(const MatMulDesc& d, DType tb, const void* B, int64_t off) {
    const MatMulDequant& q = *d.dequant_b;
    const int64_t p = (off / q.inner) % q.dim;
    HostScalar x[3] = {scalar_load(tb, B, off), scalar_load(p_.buffers[q.scale_buffer].dtype, base(q.scale_buffer), p),
                       HostScalar{0.0}};
    DType t[3] = {tb, p_.buffers[q.scale_buffer].dtype, DType::f64};
    if (q.zp_buffer >= 0) x[2] = scalar_load(p_.buffers[q.zp_buffer].dtype, base(q.zp_buffer), p), t[2] = p_.buffers[q.zp_buffer].dtype;
    return eval_scalar_typed(*q.op.op->load_rule, q.op.bound, x, t, q.op.math, q.op.dtype).f;
  }
  double contraction(const KernelSpec& k, const std::vector<int64_t>& c) {
    double s = 0;
    if (k.matmul) {
      const MatMulDesc& d = *k.matmul;
      size_t r = c.size();
      std::vector<int64_t> ca(c), cb(c);
      const DType ta = p_.buffers[d.a_buffer].dtype, tb = p_.buffers[d.b_buffer].dtype;
      const void *A = base(d.a_buffer), *B = base(d.b_buffer);
      ca[r - 2] = c[r - 2], ca[r - 1] = 0;
      cb[r - 2] = 0, cb[r - 1] = c[r - 1];
      int64_t oa = offset_of(d.a, ca), ob = offset_of(d.b, cb);
      int64_t sa = d.a.strides[r - 1], sb = d.b.strides[r - 2];
      if (d.dequant_b) {
        for (int64_t q = 0; q < d.k; ++q) s += scalar_load(ta, A, oa + q * sa).f * dequant_b(d, tb, B, ob + q * sb);
        return s;
      }
      if (ta == DType::f32 && tb == DType::f32) {
        // The common case read directly: the per-element dtype switch made the fused plan 20x
        // slower than ref on bert-base (132 s vs 6 s); same double sum in the same order.
        const float *a = static_cast<const float*>(A) + oa, *b = static_cast<const float*>(B) + ob;
        for (int64_t q = 0; q < d.k; ++q) s += static_cast<double>(a[q * sa]) * static_cast<double>(b[q * sb]);
        return s;
      }
      for (int64_t q = 0; q < d.k; ++q) s += scalar_load(ta, A, oa + q * sa).f * scalar_load(tb, B, ob + q * sb).f;
      return s;
    }
    const ConvDesc& d = *k.conv;
    const DType tx = p_.buffers[d.x_buffer].dtype, tw = p_.buffers[d.w_buffer].dtype;
    const void *X = base(d.x_buffer), *W = base(d.w_buffer);
    const bool f32 = tx == DType::f32 && tw == DType::f32;  // read directly, as for matmuls
    int64_t n = c[0], ko = c[1], oy = c[2], ox = c[3];
    int64_t cpg = d.c / d.groups, kpg = d.k / d.groups, g = ko / kpg;
    for (int64_t ci = 0; ci < cpg; ++ci) {
      int64_t ch = g * cpg + ci;
      for (int64_t ry = 0; ry < d.r; ++ry) {
        int64_t iy = oy * d.stride_h - d.pad_h + ry * d.dil_h;
        if (iy < 0 || iy >= d.h) continue;
        for (int64_t rx = 0; rx < d.s; ++rx) {
          int64_t ix = ox * d.stride_w - d.pad_w + rx * d.dil_w;
          if (ix < 0 || ix >= d.w) continue;
          int64_t xi = ((n * d.c + ch) * d.h + iy) * d.w + ix, wi = ((ko * cpg + ci) * d.r + ry) * d.s + rx;
          s += f32 ? static_cast<double>(static_cast<const float*>(X)[xi]) * static_cast<const float*>(W)[wi]
                   : scalar_load(tx, X, xi).f * scalar_load(tw, W, wi).f;
        }
      }
    }
    return s;
  }

  void run_kernel(const KernelSpec& k) {
    const int rank = static_cast<int>(k.space.size());
    std::vector<char> reduced(rank, 0);
    for (int a : k.reduce_axes) reduced[a] = 1;
    std::vector<int> outer, inner;
    for (int i = 0; i < rank; ++i) (reduced[i] ? inner : outer).push_back(i);
    const int64_t rows = k.rows(), len = k.row_length();
    if (rows == 0) return;
    std::vector<HostScalar> val(k.expr.size(), HostScalar{0.0}), red(k.reductions.size(), HostScalar{0.0});
    std::vector<int64_t> c(rank, 0);
    const int last = static_cast<int>(k.expr.size()) - 1;
    auto set_index = [&](const std::vector<int>& dims, int64_t idx) {
      for (int j = static_cast<int>(dims.size()) - 1; j >= 0; --j) {
        c[dims[j]] = idx % k.space[dims[j]];
        idx /= k.space[dims[j]];
      }
    };
    for (int64_t row = 0; row < rows; ++row) {
      set_index(outer, row);
      for (size_t r = 0; r < k.reductions.size(); ++r) {
        const Reduction& R = k.reductions[r];
        double a = R.combiner == Combiner::sum ? 0.0
                   : R.combiner == Combiner::prod ? 1.0
                   : R.combiner == Combiner::max ? -std::numeric_limits<double>::infinity()
                                                 : std::numeric_limits<double>::infinity();
        for (int64_t q = 0; q < len; ++q) {
          set_index(inner, q);
          eval(k, c, red, 0, val, R.body);
          double x = val[R.body].f;  // fused reductions are float dtypes (fusion.cpp)
          switch (R.combiner) {
            case Combiner::sum: a += x; break;
            case Combiner::prod: a *= x; break;
            // NaN propagates through max/min (IEEE semantics of ONNX reductions).
            case Combiner::max: a = (std::isnan(x) || std::isnan(a)) ? NAN : std::max(a, x); break;
            case Combiner::min: a = (std::isnan(x) || std::isnan(a)) ? NAN : std::min(a, x); break;
          }
        }
        red[r].f = round_float(R.mean ? a / static_cast<double>(len) : a, R.dtype);
      }
      // An empty reduction still writes its per-row outputs (the combiner's identity).
      for (int64_t q = 0; q < std::max<int64_t>(len, 1); ++q) {
        if (len == 0) {
          for (auto& o : k.outputs)
            if (o.per_row) {
              eval(k, c, red, 0, val, o.expr);
              store(o.buffer, offset_of(o.view, c), val[o.expr]);
            }
          break;
        }
        set_index(inner, q);
        double acc = (k.matmul || k.conv) ? contraction(k, c) : 0.0;
        eval(k, c, red, acc, val, last);
        for (auto& o : k.outputs) {
          if (o.per_row && q > 0) continue;
          store(o.buffer, offset_of(o.view, c), val[o.expr]);
        }
      }
    }
  }

  void run_opaque(const KernelSpec& k) {
    const Node& n = p_.graph.nodes[k.node];
    const OpDef& def = op_or_throw(n);
    if (!def.reference) throw Unsupported("cpu", n.label() + ": op has no reference implementation");
    std::vector<Tensor> in;
    std::vector<const Tensor*> inp;
    in.reserve(k.opaque_inputs.size());
    for (int b : k.opaque_inputs) in.push_back(b >= 0 ? read_buffer(b) : Tensor());
    for (size_t i = 0; i < in.size(); ++i) inp.push_back(k.opaque_inputs[i] >= 0 ? &in[i] : nullptr);
    std::vector<Tensor> out;
    for (int b : k.opaque_outputs) out.push_back(b >= 0 ? Tensor(p_.buffers[b].dtype, p_.buffers[b].shape) : Tensor());
    if (!all_outputs_empty(out)) call_op_fn(n, "cpu", [&] { def.reference(n, inp, out); });
    for (size_t i = 0; i < out.size(); ++i)
      if (k.opaque_outputs[i] >= 0) write_buffer(k.opaque_outputs[i], out[i]);
  }
};

class CpuBackend : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  std::vector<DeviceInfo> devices() const override { return {{"host CPU", "interprets the fused plan (KernelSpecs)"}}; }
  std::unique_ptr<Executable> compile(const Graph& g, const CompileOptions& o) override {
    check_host_device_index("cpu", o.device);
    FusionOptions fo;
    fo.fuse = o.fusion;
    Plan p = [&] {
      PhaseScope ps("fusion");
      return build_plan(g, fo);
    }();
    check_host_alloc(static_cast<uint64_t>(p.arena_bytes), "the cpu arena");
    return std::make_unique<CpuExecutable>(std::move(p));
  }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace fusor
