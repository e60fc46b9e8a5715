// The cpu backend's block interpreter (backends/cpu/cpu_interp.cpp) against the
// element-at-a-time definition of a KernelSpec (ir/kernel_spec.h): one position at a time,
// each node through eval_scalar_typed, each reduction and contraction summed in order. The
// block form must give the same bits; both are also compared with ref on seeded inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "ir/kernel_spec.h"
#include "ir/passes.h"
#include "ir/scalar.h"
#include "runtime/session.h"
#include "random_graph.h"
#include "test_util.h"

namespace fusor {
namespace {

using testing::random_tensor;

// The KernelSpec execution model written out position by position (the oracle).
class ElementOracle {
 public:
  explicit ElementOracle(const Plan& p) : p_(p), arena_(static_cast<size_t>(p.arena_bytes), std::byte{0xff}) {}

  std::vector<Tensor> run(const std::vector<Tensor>& inputs) {
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].nbytes()) std::memcpy(base(p_.input_buffers[i]), inputs[i].raw(), inputs[i].nbytes());
    for (const KernelSpec& k : p_.kernels) {
      if (k.kind == FusionKind::opaque) opaque(k);
      else kernel(k);
    }
    std::vector<Tensor> outs;
    for (int b : p_.output_buffers) outs.push_back(read(b));
    return outs;
  }

 private:
  const Plan& p_;
  std::vector<std::byte> arena_;

  std::byte* base(int b) {
    const Buffer& buf = p_.buffers[b];
    if (buf.role == Buffer::Role::constant)
      return const_cast<std::byte*>(std::as_const(*p_.graph.values[buf.value].constant).raw());
    return arena_.data() + buf.offset;
  }
  Tensor read(int b) {
    const Buffer& buf = p_.buffers[b];
    if (buf.dtype == DType::string) return *p_.graph.values[buf.value].constant;
    Tensor t(buf.dtype, buf.shape);
    if (t.nbytes()) std::memcpy(t.raw(), base(b), t.nbytes());
    return t;
  }
  void opaque(const KernelSpec& k) {
    const Node& n = p_.graph.nodes[k.node];
    std::vector<Tensor> in;
    std::vector<const Tensor*> inp;
    for (int b : k.opaque_inputs) in.push_back(b >= 0 ? read(b) : Tensor());
    for (size_t i = 0; i < in.size(); ++i) inp.push_back(k.opaque_inputs[i] >= 0 ? &in[i] : nullptr);
    std::vector<Tensor> out;
    for (int b : k.opaque_outputs) out.push_back(b >= 0 ? Tensor(p_.buffers[b].dtype, p_.buffers[b].shape) : Tensor());
    if (!all_outputs_empty(out)) op_or_throw(n).reference(n, inp, out);
    for (size_t i = 0; i < out.size(); ++i) {
      const int b = k.opaque_outputs[i];
      if (b >= 0 && p_.buffers[b].role != Buffer::Role::constant && out[i].nbytes())
        std::memcpy(base(b), out[i].raw(), out[i].nbytes());
    }
  }
  static int64_t at(const StridedView& v, const std::vector<int64_t>& c) {
    int64_t o = v.offset;
    for (size_t i = 0; i < c.size(); ++i) o += c[i] * v.strides[i];
    return o;
  }
  HostScalar load(int b, int64_t off) {
    if (off < 0 || off >= shape_numel(p_.buffers[b].shape)) return HostScalar{std::numeric_limits<double>::quiet_NaN()};
    return scalar_load(p_.buffers[b].dtype, base(b), off);
  }
  void eval(const KernelSpec& k, const std::vector<int64_t>& c, const std::vector<HostScalar>& red, double acc,
            std::vector<HostScalar>& val, int upto) {
    for (int i = 0; i <= upto; ++i) {
      const ExprNode& n = k.expr[i];
      HostScalar r{0.0};
      if (n.kind == ExprKind::constant) {
        if (dtype_is_integral(n.dtype)) r.i = n.ivalue;
        else r.f = n.value;
      } else if (n.kind == ExprKind::load) {
        r = load(k.loads[n.load].buffer, at(k.loads[n.load].view, c));
      } else if (n.kind == ExprKind::red_ref) {
        r = red[n.red];
      } else if (n.kind == ExprKind::acc) {
        r.f = round_float(acc, n.dtype);
      } else if (n.kind == ExprKind::dot) {  // an inline contraction: the product's element at c
        r.f = round_float(matmul_at(k.dots.at(n.dot).mm, c), n.dtype);
      } else {
        const size_t na = std::max(n.args.size(), n.bound.absent.size());
        std::vector<HostScalar> x(na, HostScalar{0.0});
        std::vector<DType> t(na, DType::f64);
        for (size_t a = 0; a < n.args.size(); ++a)
          if (n.args[a] >= 0) x[a] = val[n.args[a]], t[a] = k.expr[n.args[a]].dtype;
        r = eval_scalar_typed(*n.op->scalar, n.bound, x.data(), t.data(), n.math, n.dtype);
      }
      val[i] = r;
    }
  }
  // The product's element at c = (batch..., m, n) (a matmul kernel's acc, an inline dot's value).
  double matmul_at(const MatMulDesc& d, const std::vector<int64_t>& c) {
    const size_t r = c.size();
    std::vector<int64_t> ca(c), cb(c);
    ca[r - 1] = 0, cb[r - 2] = 0;
    const int64_t oa = at(d.a, ca), ob = at(d.b, cb);
    EXPECT_FALSE(d.dequant_b.has_value());  // not built by these graphs
    // Operand prologues (MatMulDesc::a_pre / b_pre): the element-wise op's value of each element.
    auto operand = [&](const std::optional<OperandPrologue>& pre, int buffer, int64_t off) {
      const double x = load(buffer, off).f;
      return pre ? pre->apply(x, p_.buffers[buffer].dtype) : x;
    };
    double s = 0;
    for (int64_t q = 0; q < d.k; ++q)
      s += operand(d.a_pre, d.a_buffer, oa + q * d.a.strides[r - 1]) * operand(d.b_pre, d.b_buffer, ob + q * d.b.strides[r - 2]);
    return s;
  }
  double contraction(const KernelSpec& k, const std::vector<int64_t>& c) {
    if (k.matmul) return matmul_at(*k.matmul, c);
    double s = 0;
    const ConvDesc& d = *k.conv;
    const int64_t cpg = d.c / d.groups, g = c[1] / (d.k / d.groups);
    for (int64_t ci = 0; ci < cpg; ++ci)
      for (int64_t ry = 0; ry < d.r; ++ry) {
        const int64_t iy = c[2] * d.stride_h - d.pad_h + ry * d.dil_h;
        if (iy < 0 || iy >= d.h) continue;
        for (int64_t rx = 0; rx < d.s; ++rx) {
          const int64_t ix = c[3] * d.stride_w - d.pad_w + rx * d.dil_w;
          if (ix < 0 || ix >= d.w) continue;
          s += load(d.x_buffer, ((c[0] * d.c + g * cpg + ci) * d.h + iy) * d.w + ix).f *
               load(d.w_buffer, ((c[1] * cpg + ci) * d.r + ry) * d.s + rx).f;
        }
      }
    return s;
  }
  void kernel(const KernelSpec& k) {
    const int rank = static_cast<int>(k.space.size());
    std::vector<int> outer, inner;
    for (int i = 0; i < rank; ++i)
      (std::count(k.reduce_axes.begin(), k.reduce_axes.end(), i) ? inner : outer).push_back(i);
    const int64_t rows = k.rows(), len = k.row_length();
    std::vector<HostScalar> val(k.expr.size(), HostScalar{0.0}), red(k.reductions.size(), HostScalar{0.0});
    std::vector<int64_t> c(rank, 0);
    auto set = [&](const std::vector<int>& dims, int64_t idx) {
      for (int j = static_cast<int>(dims.size()) - 1; j >= 0; --j) c[dims[j]] = idx % k.space[dims[j]], idx /= k.space[dims[j]];
    };
    auto store = [&](const KernelOutput& o) {
      scalar_store(p_.buffers[o.buffer].dtype, base(o.buffer), at(o.view, c), val[o.expr]);
    };
    for (int64_t row = 0; row < rows; ++row) {
      set(outer, row);
      for (size_t r = 0; r < k.reductions.size(); ++r) {
        const Reduction& R = k.reductions[r];
        double a = R.combiner == Combiner::sum ? 0.0 : R.combiner == Combiner::prod ? 1.0
                   : R.combiner == Combiner::max ? -INFINITY : INFINITY;
        for (int64_t q = 0; q < len; ++q) {
          set(inner, q);
          eval(k, c, red, 0, val, R.body);
          const double x = val[R.body].f;
          if (R.combiner == Combiner::sum) a += x;
          else if (R.combiner == Combiner::prod) a *= x;
          else if (std::isnan(x) || std::isnan(a)) a = NAN;
          else a = R.combiner == Combiner::max ? std::max(a, x) : std::min(a, x);
        }
        red[r].f = round_float(R.mean ? a / static_cast<double>(len) : a, R.dtype);
      }
      if (len == 0) {
        for (auto& o : k.outputs)
          if (o.per_row) eval(k, c, red, 0, val, o.expr), store(o);
        continue;
      }
      for (int64_t q = 0; q < len; ++q) {
        set(inner, q);
        eval(k, c, red, (k.matmul || k.conv) ? contraction(k, c) : 0.0, val, static_cast<int>(k.expr.size()) - 1);
        for (auto& o : k.outputs)
          if (!(o.per_row && q > 0)) store(o);
      }
    }
  }
};

// Runs g on the cpu backend and on the oracle; outputs must match bit for bit, and ref within
// tol (tol < 0: bits only, for inputs whose relative error is not finite).
void expect_block_matches_oracle(const Graph& g, const std::vector<Tensor>& in, double tol, const std::string& what) {
  Graph sg = specialize(g, in);
  Plan plan = build_plan(sg);
  std::vector<Tensor> want = ElementOracle(plan).run(in);
  std::vector<Tensor> got = run_on_backend("cpu", sg, in);
  std::vector<Tensor> ref = run_on_backend("ref", sg, in);
  ASSERT_EQ(want.size(), got.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].nbytes(), want[i].nbytes()) << what;
    EXPECT_EQ(std::memcmp(got[i].raw(), want[i].raw(), got[i].nbytes()), 0) << what << " output " << i << " differs in bits";
    if (tol >= 0 && dtype_is_float(got[i].dtype())) EXPECT_LE(relative_l2(got[i], ref[i]), tol) << what << " output " << i << " vs ref";
  }
}

std::vector<Tensor> seeded(const Graph& g, uint64_t seed) {
  std::vector<Tensor> in;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Value& v = g.values[g.inputs[i]];
    in.push_back(random_tensor(v.dtype, v.shape, seed * 977 + i));
  }
  return in;
}

TEST(CpuInterp, MatMulTilesMatchElementAtATime) {
  // M not a multiple of the row tile, N past one column tile, transposed and broadcast B.
  for (bool trans : {false, true}) {
    GraphBuilder b("mm", 13);
    int x = b.input("x", DType::f32, {2, 13, 37});
    int w = b.input("w", DType::f32, trans ? Shape{300, 37} : Shape{37, 300});
    int wt = trans ? b.op("Transpose", {w}, {{"perm", std::vector<int64_t>{1, 0}}}) : w;
    int bias = b.input("bias", DType::f32, {300});
    b.output(b.op("Tanh", {b.op("Add", {b.op("MatMul", {x, wt}), bias})}));
    Graph g = b.build();
    std::vector<Tensor> in = seeded(g, trans ? 2 : 1);
    expect_block_matches_oracle(g, in, 1e-5, trans ? "matmul B^T" : "matmul");
    // Terms 0 and 1 cancel (1e20 - 1e20) before the small ones arrive: a sum in any other order
    // loses the small terms, so the bits check the summation order, not only the values (ref
    // sums in another order, so it is not compared here).
    float* xv = in[0].data<float>();
    float* wv = in[1].data<float>();
    for (int64_t r = 0; r < 2 * 13; ++r) xv[r * 37] = 1e20f, xv[r * 37 + 1] = -1e20f;
    for (int64_t n = 0; n < 300; ++n)
      for (int64_t k = 0; k < 2; ++k) wv[trans ? n * 37 + k : k * 300 + n] = 1.0f;
    expect_block_matches_oracle(g, in, -1, trans ? "matmul B^T, cancelling terms" : "matmul, cancelling terms");
  }
}

TEST(CpuInterp, ConvPlanesMatchElementAtATime) {
  // Channel groups of 3 (per-plane path) and 5 (weight-patch products: a 4-row tile and a
  // leftover row), padding, strides, dilations, a plane that is not a multiple of 8, a 1x1.
  struct Case {
    int64_t k, groups, kh;
    std::vector<int64_t> pads, strides, dil;
  };
  for (const Case& c : {Case{6, 2, 3, {1, 2, 2, 0}, {2, 3}, {2, 1}}, Case{10, 2, 3, {1, 2, 2, 0}, {2, 3}, {2, 1}},
                        Case{9, 1, 3, {1, 1, 1, 1}, {1, 1}, {1, 1}}, Case{16, 1, 1, {0, 0, 0, 0}, {1, 1}, {1, 1}}}) {
    for (bool inf_weight : {false, true}) {
      GraphBuilder b("conv", 13);
      int x = b.input("x", DType::f32, {2, 4, 11, 9});
      int w = b.input("w", DType::f32, {c.k, 4 / c.groups, c.kh, c.kh});
      int y = b.op("Conv", {x, w},
                   {{"group", c.groups}, {"pads", c.pads}, {"strides", c.strides}, {"dilations", c.dil}});
      b.output(b.op("Relu", {y}));
      Graph g = b.build();
      std::vector<Tensor> in = seeded(g, 3 + c.k);
      // A non-finite weight: taps outside the image must be skipped, not multiplied by 0.
      if (inf_weight) in[1].data<float>()[0] = std::numeric_limits<float>::infinity();
      const std::string what = "conv k" + std::to_string(c.k) + " g" + std::to_string(c.groups) + " r" +
                               std::to_string(c.kh) + (inf_weight ? " inf weight" : "");
      expect_block_matches_oracle(g, in, inf_weight ? -1 : 1e-5, what);  // inf: bits only
    }
  }
}

TEST(CpuInterp, ConvSumsTermsInChannelRowColumnOrder) {
  // Taps (c 0, ky 0, kx 0) and (c 0, ky 0, kx 1) are +-1e20 and cancel before the other terms
  // arrive; summed in any other order the small terms are lost, so the bits check the order.
  GraphBuilder b("conv_order", 13);
  int x = b.input("x", DType::f32, {1, 4, 7, 10});
  int w = b.input("w", DType::f32, {9, 4, 3, 3});
  b.output(b.op("Conv", {x, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  Graph g = b.build();
  std::vector<Tensor> in = seeded(g, 21);
  float* xv = in[0].data<float>();
  float* wv = in[1].data<float>();
  for (int64_t i = 0; i < 7 * 10; ++i) xv[i] = (i % 10) % 2 ? -1e20f : 1e20f;  // channel 0
  for (int64_t ko = 0; ko < 9; ++ko) wv[ko * 36] = wv[ko * 36 + 1] = 1.0f;
  expect_block_matches_oracle(g, in, -1, "conv, cancelling terms");
}

TEST(CpuInterp, ReductionsAcrossBlocksMatchElementAtATime) {
  // Softmax and LayerNorm over rows longer than one block, over a middle axis, and in f16.
  for (int64_t len : {5, 300, 1031}) {
    GraphBuilder b("red", 17);
    int x = b.input("x", DType::f32, {3, len});
    int s = b.op("Softmax", {x}, {{"axis", int64_t{-1}}});
    int sc = b.input("scale", DType::f32, {len});
    int bi = b.input("bias", DType::f32, {len});
    b.output(b.op("LayerNormalization", {s, sc, bi}, {{"axis", int64_t{-1}}}));
    b.output(b.op("ReduceMax", {x}, {{"keepdims", int64_t{0}}}));
    Graph g = b.build();
    expect_block_matches_oracle(g, seeded(g, 4 + len), 1e-4, "softmax+layernorm len " + std::to_string(len));
  }
  GraphBuilder b("mid", 13);
  int x = b.input("x", DType::f16, {4, 270, 3});
  int e = b.op("Exp", {x});
  int r = b.op("ReduceSum", {e, b.constant("axes", [] {
                             Tensor t(DType::i64, {1});
                             t.set_int(0, 1);
                             return t;
                           }())});
  b.output(b.op("Div", {e, r}));
  Graph g = b.build();
  expect_block_matches_oracle(g, seeded(g, 9), 1e-2, "f16 middle-axis reduction");
}

TEST(CpuInterp, ViewsAndIntegersMatchElementAtATime) {
  GraphBuilder b("views", 13);
  int x = b.input("x", DType::f32, {7, 5, 300});
  int t = b.op("Transpose", {x}, {{"perm", std::vector<int64_t>{2, 0, 1}}});
  int y = b.input("y", DType::f32, {300, 1, 5});
  b.output(b.op("Mul", {b.op("Sigmoid", {t}), y}));
  int i = b.input("i", DType::i32, {6, 301});
  int j = b.input("j", DType::i32, {301});
  b.output(b.op("Div", {b.op("Mul", {i, j}), j}));
  Graph g = b.build();
  expect_block_matches_oracle(g, seeded(g, 10), 1e-6, "views and int32");
}

TEST(CpuInterp, RandomGraphsMatchElementAtATime) {
  int n = 0;
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    testing::RandomGraph rg = testing::random_graph(seed);
    std::vector<Tensor> in = seeded(rg.g, seed);
    expect_block_matches_oracle(rg.g, in, 1e-5, "random graph seed " + std::to_string(seed));
    ++n;
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_EQ(n, 150);
}

}  // namespace
}  // namespace fusor
