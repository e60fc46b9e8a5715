// The shared kernel emitter (see codegen.h for the generated-code contract).
#include "backends/codegen.h"
#include "backends/codegen_text.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

namespace fusor {

using codegen_text::is_ident_char;
using codegen_text::rename_intrinsics;
using codegen_text::substitute;

namespace {

// Grid-stride loops add group_size * groups to an index that is < numel; keeping numel this
// far below 2^31 leaves room for that step without overflow in 32-bit mode.
constexpr int64_t kIndex32Limit = (int64_t{1} << 31) - (int64_t{1} << 26);
constexpr int64_t kDefaultGroup = 256;
constexpr int64_t kLoopUnroll = 4;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t pow2_ceil(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}
// Threads per group of a row kernel: enough for the row, a multiple of 32 (one warp/subgroup).
int64_t row_group_size(int64_t row_length) { return std::clamp<int64_t>(pow2_ceil(row_length), 32, 256); }

// Largest element offset (+1) a view can reach; used for the 32/64-bit index decision.
int64_t view_extent(const StridedView& v) {
  int64_t hi = v.offset, lo = v.offset;
  for (size_t i = 0; i < v.shape.size(); ++i) {
    if (v.shape[i] == 0) return 0;
    int64_t s = v.strides[i] * (v.shape[i] - 1);
    (s > 0 ? hi : lo) += s;
  }
  return std::max(hi + 1, -lo);
}

const char* combiner_fn(Combiner c) {
  switch (c) {
    case Combiner::sum: return "fz_add";
    case Combiner::prod: return "fz_mul";
    case Combiner::max: return "fz_max";
    default: return "fz_min";
  }
}
std::string combiner_identity(Combiner c) {
  switch (c) {
    case Combiner::sum: return "0.0f";
    case Combiner::prod: return "1.0f";
    case Combiner::max: return "(-fz_inf())";
    default: return "fz_inf()";
  }
}

// A dim of the coalesced iteration space: adjacent dims of `space` merged when every view
// walks them as one (stride[outer] == stride[inner] * size[inner]); size-1 dims dropped.
struct CDim {
  int64_t size = 1;
  bool reduced = false;
  std::vector<int64_t> strides;  // per view (loads, then outputs)
};

class Emitter {
 public:
  Emitter(const KernelSpec& k, const Plan& p, const Dialect& d) : k_(k), p_(p), d_(d) { setup(); }

  LaunchDims launch() const { return launch_; }

  std::string emit() {
    std::string src = d_.prelude(h_);
    if (typed_) src += d_.typed_helpers(h_);
    src += std::string("#define fz_idx ") + (h_.index64 ? d_.int64_type : "int") + "\n";
    src += "#define FZ_KERNEL_NAME " + h_.name + "\n#define FZ_GROUP_SIZE " + std::to_string(h_.group_size) + "\n";
    src += "#define fz_add(a, b) ((a) + (b))\n#define fz_mul(a, b) ((a) * (b))\n";
    std::string params = d_.function_params(h_), args = d_.function_args(h_);
    if (!params.empty()) src += "#define FZ_PARAMS " + params + "\n#define FZ_ARGS " + args + "\n";
    src += d_.declare_buffers(h_);
    if (k_.matmul || k_.conv) return src + emit_contraction();
    if (k_.kind == FusionKind::opaque) return src + emit_opaque();
    if (k_.reduce_axes.empty()) return src + emit_loop();
    return src + emit_rows();
  }

 private:
  const KernelSpec& k_;
  const Plan& p_;
  const Dialect& d_;
  KernelHeader h_;
  std::map<int, int> slot_;           // buffer -> slot
  std::vector<const StridedView*> views_;  // loads, then outputs
  std::vector<CDim> dims_;
  LaunchDims launch_;
  int64_t matmul_items_ = 0;
  mutable std::string globals_;  // global-scope declarations an opaque kernel body needs (const tables)
  int64_t unroll_ = 1;      // loop kernels: elements per thread per iteration
  std::string sfx_;         // suffix of coordinate/value locals (one per unrolled copy)
  std::string matmul_macros_;
  bool typed_ = false;      // some value is an integer or float64: the dialect's typed helpers are emitted

  [[noreturn]] void fail(const std::string& why) const { throw Error("codegen", "kernel '" + k_.name + "': " + why); }

  const Buffer& buffer(int b) const {
    if (b < 0 || b >= static_cast<int>(p_.buffers.size())) fail("buffer id " + std::to_string(b) + " out of range");
    return p_.buffers[b];
  }
  DType dtype_of(int b) const { return buffer(b).dtype; }
  int slot(int b) const { return slot_.at(b); }

  std::string lit(int64_t v) const {
    std::string s = std::to_string(v) + (h_.index64 ? d_.int64_suffix : "");
    return v < 0 ? "(" + s + ")" : s;
  }
  std::string idx(const std::string& e) const { return d_.cast("fz_idx", e); }
  std::string load_of(int b, const std::string& off) const { return d_.to_float(dtype_of(b), d_.element(slot(b), off)); }
  std::string store_of(int b, const std::string& off, const std::string& v) const {
    return d_.element(slot(b), off) + " = " + d_.from_float(dtype_of(b), v) + ";";
  }
  // Typed counterparts (expression values in Dialect::compute_type of their dtype).
  std::string typed_load(int b, const std::string& off) const { return d_.load_value(dtype_of(b), d_.element(slot(b), off)); }
  std::string typed_store(int b, const std::string& off, const std::string& v) const {
    return d_.element(slot(b), off) + " = " + d_.store_value(dtype_of(b), v) + ";";
  }
  // Declaration prefix of a local of dtype t ("precise float ", "int64_t ").
  std::string local(DType t) const {
    const std::string ct = d_.compute_type(t);
    return (ct == "float" || ct == "double" ? d_.value_qualifier : std::string()) + ct + " ";
  }

  void setup() {
    // Bindings, aliasing and the header.
    std::vector<int> binds = kernel_bindings(k_);
    std::set<int> written;
    for (int b : k_.output_buffers()) written.insert(b);
    h_.name = kernel_identifier(k_.name);
    for (size_t i = 0; i < binds.size(); ++i) {
      const Buffer& b = buffer(binds[i]);
      d_.storage_type(b.dtype);  // throws Unsupported early for dtypes the dialect cannot store
      BindingInfo bi;
      bi.slot = static_cast<int>(i);
      bi.buffer = binds[i];
      bi.dtype = b.dtype;
      bi.written = written.count(binds[i]) != 0;
      bi.no_alias = true;
      for (int o : binds) {
        if (o == binds[i]) continue;
        const Buffer& c = buffer(o);
        // Constants live in their own allocations; arena buffers may share bytes (in-place reuse).
        if (b.offset >= 0 && c.offset >= 0 && b.offset < c.offset + c.nbytes() && c.offset < b.offset + b.nbytes())
          bi.no_alias = false;
      }
      slot_[binds[i]] = bi.slot;
      h_.bindings.push_back(bi);
    }
    // Value types: which 64-bit types and typed helpers the kernel needs.
    auto note_type = [&](DType t) {
      h_.uses_f64 = h_.uses_f64 || t == DType::f64;
      h_.uses_i64 = h_.uses_i64 || t == DType::i64 || t == DType::u64;
      h_.uses_f16 = h_.uses_f16 || t == DType::f16;
      h_.uses_bf16 = h_.uses_bf16 || t == DType::bf16;
      typed_ = typed_ || t == DType::f64 || dtype_is_int(t);
    };
    for (auto& b : h_.bindings) note_type(b.dtype);
    if (kernel_checks_indices(k_, p_)) h_.status_slot = static_cast<int>(h_.bindings.size());
    for (size_t i = 0; i < p_.kernels.size(); ++i)
      if (&p_.kernels[i] == &k_) h_.kernel_index = static_cast<int>(i);
    for (auto& e : k_.expr) note_type(e.dtype), note_type(e.math);
    // Views over space.
    for (auto& l : k_.loads) views_.push_back(&l.view);
    for (auto& o : k_.outputs) views_.push_back(&o.view);
    for (auto* v : views_)
      if (v->shape != k_.space || v->strides.size() != k_.space.size())
        fail("view " + shape_str(v->shape) + " does not match the kernel space " + shape_str(k_.space));
    coalesce();
    // Index width: any element count or reachable offset near 2^31 needs 64-bit math.
    int64_t reach = shape_numel(k_.space);
    for (auto* v : views_) reach = std::max(reach, view_extent(*v));
    for (int b : binds) reach = std::max(reach, shape_numel(buffer(b).shape));
    if (k_.matmul) reach = std::max({reach, view_extent(k_.matmul->a), view_extent(k_.matmul->b)});
    h_.index64 = reach > kIndex32Limit;
    // Launch geometry.
    const int64_t total = shape_numel(k_.space);
    if (k_.matmul) {
      const auto& m = *k_.matmul;
      launch_.group_size = d_.matmul_group_size;
      launch_.groups = 0;
      if (total > 0) matmul_macros_ = d_.matmul_config(total / (m.m * m.n), m.m, m.n, m.k, launch_.groups);
      matmul_items_ = launch_.groups;
    } else if (k_.conv) {
      launch_.group_size = d_.conv_group_size;
      launch_.groups = ceil_div(total, launch_.group_size);
    } else if (k_.kind == FusionKind::opaque) {
      launch_.group_size = kDefaultGroup;
      launch_.groups = ceil_div(opaque_total(), kDefaultGroup);
    } else if (!k_.reduce_axes.empty()) {
      launch_.group_size = row_group_size(k_.row_length());
      launch_.groups = k_.rows();  // empty rows still write their identity
    } else {
      // Large loop kernels handle kLoopUnroll elements per thread so each thread issues that
      // many independent loads before its stores (memory-level parallelism).
      launch_.group_size = kDefaultGroup;
      unroll_ = total >= kDefaultGroup * kLoopUnroll * 1024 ? kLoopUnroll : 1;
      launch_.groups = ceil_div(total, kDefaultGroup * unroll_);
    }
    launch_.groups = std::min(launch_.groups, d_.max_groups);
    h_.group_size = launch_.group_size;
  }

  int64_t opaque_total() const {
    if (k_.opaque_outputs.empty() || k_.opaque_outputs[0] < 0) fail("opaque kernel without output 0");
    return shape_numel(buffer(k_.opaque_outputs[0]).shape);
  }

  void coalesce() {
    const size_t nv = views_.size();
    for (size_t d = 0; d < k_.space.size(); ++d) {
      const bool red = std::find(k_.reduce_axes.begin(), k_.reduce_axes.end(), static_cast<int>(d)) != k_.reduce_axes.end();
      if (k_.space[d] == 1) continue;
      bool merge = !dims_.empty() && dims_.back().reduced == red;
      for (size_t v = 0; merge && v < nv; ++v)
        merge = dims_.back().strides[v] == views_[v]->strides[d] * k_.space[d];
      if (merge) {
        dims_.back().size *= k_.space[d];
        for (size_t v = 0; v < nv; ++v) dims_.back().strides[v] = views_[v]->strides[d];
      } else {
        CDim c;
        c.size = k_.space[d];
        c.reduced = red;
        for (size_t v = 0; v < nv; ++v) c.strides.push_back(views_[v]->strides[d]);
        dims_.push_back(std::move(c));
      }
    }
  }

  // Declares c<g> for the dims in `which` (outer to inner) from linear index `lin`.
  std::string decompose(const std::vector<int>& which, const std::string& lin, const std::string& ind) const {
    std::string s;
    for (size_t j = 0; j < which.size(); ++j) {
      int64_t inner = 1;
      for (size_t l = j + 1; l < which.size(); ++l) inner *= dims_[which[l]].size;
      std::string e = inner == 1 ? lin : "(" + lin + " / " + lit(inner) + ")";
      if (j != 0) e = "(" + e + " % " + lit(dims_[which[j]].size) + ")";
      s += ind + "fz_idx c" + std::to_string(which[j]) + sfx_ + " = " + e + ";\n";
    }
    return s;
  }
  std::vector<int> dims_where(int mode) const {  // 0 all, 1 non-reduced, 2 reduced
    std::vector<int> r;
    for (size_t g = 0; g < dims_.size(); ++g)
      if (mode == 0 || (mode == 1) != dims_[g].reduced) r.push_back(static_cast<int>(g));
    return r;
  }

  // Element offset of view v; `have_reduced` false means reduced coordinates are 0.
  std::string offset(size_t v, bool have_reduced) const {
    std::string s = views_[v]->offset != 0 ? lit(views_[v]->offset) : "";
    for (size_t g = 0; g < dims_.size(); ++g) {
      const int64_t st = dims_[g].strides[v];
      if (st == 0 || (dims_[g].reduced && !have_reduced)) continue;
      std::string t = "c" + std::to_string(g) + sfx_ + (st == 1 ? "" : " * " + lit(st));
      s += (s.empty() ? "" : " + ") + t;
    }
    return s.empty() ? lit(0) : s;
  }

  // Declares locals for every node the roots need, in topological order; names[id] is the
  // text that denotes node id afterwards (a local, a literal, a reduction result or acc).
  std::string emit_exprs(const std::vector<int>& roots, bool have_reduced, const std::string& ind,
                         std::vector<std::string>& names) const {
    const int n = static_cast<int>(k_.expr.size());
    std::vector<char> need(n, 0);
    for (int r : roots) {
      if (r < 0 || r >= n) fail("expression root " + std::to_string(r) + " out of range");
      need[r] = 1;
    }
    for (int i = n - 1; i >= 0; --i)
      if (need[i] && k_.expr[i].kind == ExprKind::op)
        for (int a : k_.expr[i].args) {
          if (a < 0) continue;  // absent optional operand: bound.expr holds its literal
          if (a >= i) fail("expression node " + std::to_string(i) + " has operand " + std::to_string(a));
          need[a] = 1;
        }
    names.assign(n, "");
    std::string s;
    for (int i = 0; i < n; ++i) {
      if (!need[i]) continue;
      const ExprNode& e = k_.expr[i];
      const std::string v = "v" + std::to_string(i) + sfx_;
      switch (e.kind) {
        case ExprKind::constant: names[i] = typed_literal(d_, e.dtype, e.value, e.ivalue); break;
        case ExprKind::red_ref:
          if (e.red < 0 || e.red >= static_cast<int>(k_.reductions.size())) fail("red_ref to a missing reduction");
          names[i] = "fz_r" + std::to_string(e.red);
          break;
        case ExprKind::acc:
          if (!k_.matmul && !k_.conv) fail("acc used outside a contraction kernel");
          names[i] = convert_value(d_, DType::f32, e.dtype, "acc", true);  // fp32 accumulator -> the product's dtype
          break;
        case ExprKind::load: {
          if (e.load < 0 || e.load >= static_cast<int>(k_.loads.size())) fail("load index out of range");
          names[i] = v;
          s += ind + local(e.dtype) + v + " = " + typed_load(k_.loads[e.load].buffer, offset(e.load, have_reduced)) + ";\n";
          break;
        }
        case ExprKind::op: {
          // Operands in the op's math dtype; the result converted (rounded, wrapped) to its own.
          std::vector<std::string> ops;
          for (int a : e.args) ops.push_back(a >= 0 ? convert_value(d_, k_.expr[a].dtype, e.math, names[a]) : std::string());
          names[i] = v;
          const bool exact = e.math == e.dtype && (e.dtype == DType::f32 || e.dtype == DType::f64 || e.dtype == DType::i32 ||
                                                   e.dtype == DType::u32 || e.dtype == DType::i64 || e.dtype == DType::u64);
          s += ind + local(e.dtype) + v + " = " + convert_value(d_, e.math, e.dtype, op_expression(e, ops, d_), !exact) + ";\n";
          break;
        }
      }
    }
    return s;
  }

  // Stores of the outputs selected by `pick`.
  template <class Pick>
  std::string emit_stores(Pick pick, bool have_reduced, const std::string& ind, const std::vector<std::string>& names) const {
    std::string s;
    for (size_t o = 0; o < k_.outputs.size(); ++o)
      if (pick(k_.outputs[o]))
        s += ind + typed_store(k_.outputs[o].buffer, offset(k_.loads.size() + o, have_reduced), names[k_.outputs[o].expr]) + "\n";
    return s;
  }

  // "for (fz_idx <var> = <start>; <var> < <n>; <var> += <step>) {"
  std::string grid_loop(const std::string& var, int64_t n) const {
    const std::string g = lit(h_.group_size);
    return "for (fz_idx " + var + " = " + idx(d_.group_id) + " * " + g + " + " + idx(d_.local_id) + "; " + var + " < " +
           lit(n) + "; " + var + " += " + idx(d_.num_groups) + " * " + g + ") {\n";
  }

  std::string emit_loop() {
    std::vector<int> roots;
    for (auto& o : k_.outputs) roots.push_back(o.expr);
    std::vector<std::string> names;
    std::string s = d_.kernel_begin(h_);
    if (unroll_ > 1) {
      // Copy u works on element fz_b + u * G; its index is clamped for the loads (always in
      // range) and its stores are guarded. All loads come before all stores, which is safe
      // for in-place buffers because copies touch distinct elements.
      const int64_t n = shape_numel(k_.space), g = h_.group_size;
      s += "  for (fz_idx fz_b = " + idx(d_.group_id) + " * " + lit(g * unroll_) + " + " + idx(d_.local_id) + "; fz_b < " + lit(n) +
           "; fz_b += " + idx(d_.num_groups) + " * " + lit(g * unroll_) + ") {\n";
      std::vector<std::vector<std::string>> all(unroll_);
      for (int64_t u = 0; u < unroll_; ++u) {
        sfx_ = "_" + std::to_string(u);
        s += "    fz_idx fz_i" + sfx_ + " = fz_b + " + lit(u * g) + ";\n";
        s += "    fz_idx fz_j" + sfx_ + " = fz_i" + sfx_ + " < " + lit(n) + " ? fz_i" + sfx_ + " : " + lit(n - 1) + ";\n";
        s += decompose(dims_where(0), "fz_j" + sfx_, "    ") + emit_exprs(roots, true, "    ", all[u]);
      }
      for (int64_t u = 0; u < unroll_; ++u) {
        sfx_ = "_" + std::to_string(u);
        s += "    if (fz_i" + sfx_ + " < " + lit(n) + ") {\n";
        s += emit_stores([](const KernelOutput&) { return true; }, true, "      ", all[u]) + "    }\n";
      }
      sfx_.clear();
      return s + "  }\n}\n";
    }
    s += "  " + grid_loop("fz_i", shape_numel(k_.space));
    s += decompose(dims_where(0), "fz_i", "    ");
    s += emit_exprs(roots, true, "    ", names);
    s += emit_stores([](const KernelOutput&) { return true; }, true, "    ", names);
    return s + "  }\n}\n";
  }

  // Input fusion: one group per row (grid-stride over rows), group-wide reductions in order.
  std::string emit_rows() {
    const int64_t G = h_.group_size, len = k_.row_length();
    // Accumulators: fp32 for fp32/fp16/bf16 reductions, double for float64 (fusion.cpp fuses
    // only float reductions); one shared scratch array per accumulator type.
    bool any_f32 = false, any_f64 = false;
    for (auto& red : k_.reductions) (red.dtype == DType::f64 ? any_f64 : any_f32) = true;
    std::string s = (any_f32 || !any_f64 ? d_.shared_array("float", "fz_red", G) : "") +
                    (any_f64 ? d_.shared_array("double", "fz_redd", G) : "") + d_.kernel_begin(h_);
    s += "  int fz_lid = " + d_.cast("int", d_.local_id) + ";\n";
    s += "  for (fz_idx fz_row = " + idx(d_.group_id) + "; fz_row < " + lit(k_.rows()) + "; fz_row += " +
         idx(d_.num_groups) + ") {\n";
    s += decompose(dims_where(1), "fz_row", "    ");
    const std::string inner_loop = "    for (fz_idx fz_j = " + idx("fz_lid") + "; fz_j < " + lit(len) + "; fz_j += " + lit(G) + ") {\n";
    std::vector<std::string> names;
    for (size_t r = 0; r < k_.reductions.size(); ++r) {
      const Reduction& red = k_.reductions[r];
      const bool dbl = red.dtype == DType::f64;
      const DType acc_t = dbl ? DType::f64 : DType::f32;
      const std::string a = "fz_a" + std::to_string(r), fn = combiner_fn(red.combiner), type = dbl ? "double" : "float";
      const std::string ident = dbl ? d_.cast("double", combiner_identity(red.combiner)) : combiner_identity(red.combiner);
      s += "    " + local(acc_t) + a + " = " + ident + ";\n" + inner_loop;
      s += decompose(dims_where(2), "fz_j", "      ");
      s += emit_exprs({red.body}, true, "      ", names);
      s += "      " + a + " = " + fn + "(" + a + ", " + convert_value(d_, k_.expr[red.body].dtype, acc_t, names[red.body]) + ");\n    }\n";
      s += d_.group_reduce(a, fn, dbl ? "fz_redd" : "fz_red", G, type);
      const std::string mean = red.mean ? " / " + (dbl ? d_.double_literal(static_cast<double>(len)) : fz_float_literal(static_cast<double>(len))) : "";
      s += "    " + d_.compute_type(red.dtype) + " fz_r" + std::to_string(r) + " = " +
           convert_value(d_, acc_t, red.dtype, "(" + a + mean + ")", red.dtype != acc_t) + ";\n";
    }
    std::vector<int> row_roots, elem_roots;
    for (auto& o : k_.outputs) (o.per_row ? row_roots : elem_roots).push_back(o.expr);
    if (!row_roots.empty()) {
      s += "    if (fz_lid == 0) {\n" + emit_exprs(row_roots, false, "      ", names);
      s += emit_stores([](const KernelOutput& o) { return o.per_row; }, false, "      ", names) + "    }\n";
    }
    if (!elem_roots.empty()) {
      s += inner_loop + decompose(dims_where(2), "fz_j", "      ") + emit_exprs(elem_roots, true, "      ", names);
      s += emit_stores([](const KernelOutput& o) { return !o.per_row; }, true, "      ", names) + "    }\n";
    }
    return s + "  }\n}\n";
  }

  // ---- contractions: macros + epilogue, then the dialect's template ------------------------

  std::string define(const std::string& nm, int64_t v) const { return "#define " + nm + " " + lit(v) + "\n"; }

  std::string emit_epilogue() const {
    if (!k_.reduce_axes.empty()) fail("a contraction kernel cannot also reduce");
    std::vector<int> roots;
    for (auto& o : k_.outputs) roots.push_back(o.expr);
    std::vector<std::string> names;
    std::string params = d_.function_params(h_), args = d_.function_args(h_);
    std::string s = d_.func_qualifier + "void fz_epilogue(" + (params.empty() ? "" : params + ", ") + "float acc, fz_idx fz_i) {\n";
    s += decompose(dims_where(0), "fz_i", "  ") + emit_exprs(roots, true, "  ", names);
    s += emit_stores([](const KernelOutput&) { return true; }, true, "  ", names) + "}\n";
    s += "#define FZ_EPILOGUE(acc, i) fz_epilogue(" + (args.empty() ? "" : args + ", ") + "(acc), (i))\n";
    return s;
  }

  // fz_<n>_base(batch): element offset of one batch of a matmul operand view.
  std::string batch_base(const std::string& n, const StridedView& v, size_t nb) const {
    std::string s = d_.func_qualifier + "fz_idx fz_" + n + "_base(fz_idx batch) {\n  fz_idx off = " + lit(v.offset) + ";\n";
    for (int i = static_cast<int>(nb) - 1; i >= 0; --i) {
      if (v.strides[i] != 0) s += "  off += (batch % " + lit(k_.space[i]) + ") * " + lit(v.strides[i]) + ";\n";
      s += "  batch = batch / " + lit(k_.space[i]) + ";\n";
    }
    return s + "  return off;\n}\n";
  }

  std::string emit_contraction() const {
    std::string s;
    if (k_.matmul) {
      const MatMulDesc& m = *k_.matmul;
      if (k_.space.size() < 2 || m.a.shape.size() != k_.space.size() || m.b.shape.size() != k_.space.size())
        fail("matmul views " + shape_str(m.a.shape) + " x " + shape_str(m.b.shape) + " do not match space " + shape_str(k_.space));
      const size_t nb = k_.space.size() - 2;
      if (d_.matmul_template.empty()) throw Unsupported(d_.name, "kernel '" + k_.name + "': no matmul template");
      s += define("FZ_M", m.m) + define("FZ_N", m.n) + define("FZ_K", m.k);
      s += define("FZ_BATCH", shape_numel(k_.space) / std::max<int64_t>(1, m.m * m.n));
      s += define("FZ_A_SM", m.a.strides[nb]) + define("FZ_A_SK", m.a.strides[nb + 1]);
      s += define("FZ_B_SK", m.b.strides[nb]) + define("FZ_B_SN", m.b.strides[nb + 1]);
      s += define("FZ_TILES", matmul_items_) + matmul_macros_;
      s += "#define FZ_LOAD_A(off) " + load_of(m.a_buffer, "(off)") + "\n";
      s += "#define FZ_LOAD_B(off) " + load_of(m.b_buffer, "(off)") + "\n";
      s += batch_base("a", m.a, nb) + batch_base("b", m.b, nb);
      return s + emit_epilogue() + d_.matmul_template;
    }
    const ConvDesc& c = *k_.conv;
    if (d_.conv_template.empty()) throw Unsupported(d_.name, "kernel '" + k_.name + "': no conv template");
    if (k_.space != Shape{c.n, c.k, c.oh, c.ow}) fail("conv space " + shape_str(k_.space) + " is not [N, K, OH, OW]");
    s += define("FZ_CN", c.n) + define("FZ_CC", c.c) + define("FZ_CH", c.h) + define("FZ_CW", c.w) + define("FZ_CK", c.k);
    s += define("FZ_CR", c.r) + define("FZ_CS", c.s) + define("FZ_COH", c.oh) + define("FZ_COW", c.ow);
    s += define("FZ_SH", c.stride_h) + define("FZ_SW", c.stride_w) + define("FZ_PH", c.pad_h) + define("FZ_PW", c.pad_w);
    s += define("FZ_DH", c.dil_h) + define("FZ_DW", c.dil_w) + define("FZ_GROUPS", c.groups);
    s += define("FZ_TOTAL", shape_numel(k_.space));
    s += "#define FZ_LOAD_X(off) " + load_of(c.x_buffer, "(off)") + "\n";
    s += "#define FZ_LOAD_W(off) " + load_of(c.w_buffer, "(off)") + "\n";
    return s + emit_epilogue() + d_.conv_template;
  }

  // ---- opaque ops: one thread per output element --------------------------------------------

  const Node& node() const {
    if (k_.node < 0 || k_.node >= static_cast<int>(p_.graph.nodes.size())) fail("opaque kernel without a node");
    return p_.graph.nodes[k_.node];
  }
  int in_buf(size_t i) const {
    if (i >= k_.opaque_inputs.size() || k_.opaque_inputs[i] < 0) fail("opaque input " + std::to_string(i) + " missing");
    return k_.opaque_inputs[i];
  }
  // Copies element `from` of buffer a to `to` of b, converting only when the dtypes differ.
  std::string copy(int a, const std::string& from, int b, const std::string& to) const {
    if (dtype_of(a) == dtype_of(b)) return d_.element(slot(b), to) + " = " + d_.element(slot(a), from) + ";";
    return store_of(b, to, load_of(a, from));
  }

  std::string emit_opaque() const {
    const Node& n = node();
    const int out = k_.opaque_outputs[0];
    const std::string& t = n.op_type;
    // A second output only for MaxPool (Indices) and Dropout (mask); nothing has more.
    const bool two_outputs = t == "MaxPool" || t == "Dropout";
    for (size_t i = 1; i < k_.opaque_outputs.size(); ++i)
      if (k_.opaque_outputs[i] >= 0 && (!two_outputs || i > 1))
        throw Unsupported(d_.name, n.label() + ": op " + n.op_type + " with more than one output");
    const int out2 = k_.opaque_outputs.size() > 1 ? k_.opaque_outputs[1] : -1;
    static const std::set<std::string> copies = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"};
    if (t == "Dropout") {
      // ir/ops/nn.cpp dropout_training: a copy unless training_mode is a true constant and the
      // ratio (input 1, else the attribute, default 0.5) is non-zero; a run-time flag may be random.
      // A run-time flag is fine when the ratio is a constant 0 (then training changes nothing).
      const Tensor* flag = const_of(2);
      const bool maybe_training = n.has_input(2) && (!flag || (flag->numel() != 0 && flag->get(0) != 0.0));
      if (maybe_training) {
        const Tensor* ratio = const_of(1);
        if (n.has_input(1) && !ratio) throw Unsupported(d_.name, n.label() + ": training-mode Dropout with a run-time ratio is not supported");
        const double r = ratio && ratio->numel() ? ratio->get(0) : n.attr_f("ratio", 0.5);
        if (r != 0.0) throw Unsupported(d_.name, n.label() + ": training-mode Dropout with a non-zero ratio is random; not supported");
      }
    }
    // Kernels below that carry data values through fp32 refuse dtypes fp32 cannot hold exactly
    // (float64, 32/64-bit integers) rather than narrow them (DESIGN.md numerics).
    static const std::set<std::string> through_float = {
        "MaxPool", "AveragePool", "LpPool", "ConvTranspose", "LRN", "GlobalAveragePool", "GlobalMaxPool", "ArgMax",
        "ArgMin", "Hardmax", "CumSum", "OneHot", "ScatterElements", "Scatter", "ScatterND", "MatMul", "Softmax",
        "LogSoftmax", "Conv", "Resize"};
    const auto* def0 = lookup_op(t);
    const bool typed_pool = (t == "MaxPool" || t == "AveragePool") && dtype_of(in_buf(0)) == DType::f64;
    if ((through_float.count(t) && !typed_pool) || (def0 && def0->reduce && !typed_reduce(n, *def0->reduce))) {
      auto wide = [](DType d) { return d == DType::f64 || d == DType::i32 || d == DType::u32 || d == DType::i64 || d == DType::u64; };
      const int data = t == "OneHot" ? (k_.opaque_inputs.size() > 2 ? k_.opaque_inputs[2] : -1) : k_.opaque_inputs.empty() ? -1 : k_.opaque_inputs[0];
      const bool out_is_index = t == "ArgMax" || t == "ArgMin";
      if ((data >= 0 && wide(dtype_of(data))) || (!out_is_index && wide(dtype_of(out))))
        throw Unsupported(d_.name, n.label() + ": " + t + " of " + dtype_name(data >= 0 ? dtype_of(data) : dtype_of(out)) +
                                       " data is computed through fp32 by the generated kernel; refused rather than narrowed");
    }
    std::string body;
    if (t == "Dropout" && out2 >= 0) body = "    " + copy(in_buf(0), "fz_o", out, "fz_o") + "\n    " + store_of(out2, "fz_o", "1.0f") + "\n";
    else if (t == "Gather") body = gather(n, out);
    else if (t == "Concat") body = concat(n, out);
    else if (t == "MaxPool" || t == "AveragePool" || t == "LpPool") body = pool(n, out, out2);
    else if (t == "ConvTranspose") body = conv_transpose(n, out);
    else if (t == "LRN") body = lrn(n, out);
    else if (t == "Slice") body = slice(n, out);
    else if (t == "GlobalAveragePool" || t == "GlobalMaxPool") body = global_pool(n, out);
    else if (copies.count(t)) body = "    " + copy(in_buf(0), "fz_o", out, "fz_o") + "\n";
    else if (t == "Transpose") body = transpose(n, out);
    else if (t == "Expand") body = broadcast_copy(out);
    else if (t == "Cast" && !dtype_is_float(dtype_of(in_buf(0))) && !dtype_is_float(dtype_of(out))) body = int_cast(out);
    else if (auto* def = lookup_op(t); def && def->scalar) body = elementwise(n, *def->scalar, out);
    else if (def && def->reduce) body = reduce(n, *def->reduce, out);
    else if (t == "ArgMax" || t == "ArgMin") body = arg_extremum(n, out);
    else if (t == "Hardmax") body = hardmax(n, out);
    else if (t == "CumSum") body = cumsum(n, out);
    else if (t == "GatherElements") body = gather_elements(n, out);
    else if (t == "GatherND") body = gather_nd(n, out);
    else if (t == "Trilu") body = trilu(n, out);
    else if (t == "Pad") body = pad(n, out);
    else if (t == "Tile" || t == "DepthToSpace" || t == "SpaceToDepth") body = walk_copy(n, out);
    else if (t == "EyeLike") body = eye_like(n, out);
    else if (t == "OneHot") body = one_hot(n, out);
    else if (t == "ScatterElements" || t == "Scatter" || t == "ScatterND") body = scatter(n, out);
    else if (t == "MatMul") body = matmul_direct(n, out);
    else if (t == "Softmax" || t == "LogSoftmax") body = softmax(n, out);
    else if (t == "Conv") body = conv_direct(n, out);
    else if (t == "Resize") body = resize(n, out);
    else throw Unsupported(d_.name, n.label() + ": op " + t + " has no GPU kernel (opaque ops supported: Gather, Concat, "
                           "MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool, copies/views, element-wise, Reduce*, "
                           "ArgMax/ArgMin, Hardmax, CumSum, GatherElements, GatherND, Trilu, Pad, Tile, DepthToSpace, "
                           "SpaceToDepth, EyeLike, OneHot, Scatter*, MatMul, Softmax, LogSoftmax, Conv, LpPool, ConvTranspose, LRN, "
                           "Slice, Resize)");
    return globals_ + d_.kernel_begin(h_) + "  " + grid_loop("fz_o", opaque_total()) + body + "  }\n}\n";
  }

  // Declares fz_d<j> (coordinates of fz_o over shape os) and returns offset(st) builders.
  std::string out_coords(const Shape& os) const {
    std::string s;
    for (size_t j = 0; j < os.size(); ++j) {
      int64_t inner = 1;
      for (size_t l = j + 1; l < os.size(); ++l) inner *= os[l];
      s += "    fz_idx fz_d" + std::to_string(j) + " = (fz_o / " + lit(inner) + ") % " + lit(os[j]) + ";\n";
    }
    return s;
  }
  std::string coords_offset(const std::vector<int64_t>& st) const {
    std::string s;
    for (size_t j = 0; j < st.size(); ++j)
      if (st[j] != 0) s += (s.empty() ? "" : " + ") + std::string("fz_d") + std::to_string(j) + " * " + lit(st[j]);
    return s.empty() ? lit(0) : s;
  }
  // Strides of a contiguous input broadcast (NumPy rules) to os; numel-1 inputs are scalars.
  std::vector<int64_t> bcast_strides(int b, const Shape& os) const {
    const Shape& in = buffer(b).shape;
    if (shape_numel(in) == 1 || in.size() > os.size()) return std::vector<int64_t>(os.size(), 0);
    return broadcast_strides(in, os);
  }

  // Resize from the op table's per-axis taps (resize_table): a weighted sum over the tensor
  // product of each axis' taps, the tables baked into the kernel; axes the op leaves alone
  // (one tap of weight 1 at the same index) are read directly.
  std::string resize(const Node& n, int out) const {
    const int x = in_buf(0);
    if (!dtype_is_float(dtype_of(x))) throw Unsupported(d_.name, n.label() + ": Resize of " + dtype_name(dtype_of(x)) + " data");
    auto constant_input = [&](size_t i) -> const Tensor* {
      if (i >= n.inputs.size() || n.inputs[i] < 0) return nullptr;
      if (const Tensor* t = const_of(i)) return t;
      throw Unsupported(d_.name, n.label() + ": Resize input " + std::to_string(i) + " must be a compile-time constant");
    };
    const bool v11 = n.opset >= 11;
    const Shape& xs = buffer(x).shape;
    const bool crop = v11 && n.attr_s("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize";
    const ResizeTable t = resize_table(n, xs, constant_input(v11 ? 2 : 1), v11 ? constant_input(3) : nullptr, crop ? constant_input(1) : nullptr);
    const Shape& os = buffer(out).shape;
    if (t.out != os) fail("Resize table shape " + shape_str(t.out) + " differs from output " + shape_str(os));
    if (shape_numel(os) == 0) return "";  // nothing to write (and no tables to declare)
    const Shape xst = contiguous_strides(xs);
    int64_t entries = 0;
    std::string s = out_coords(os), extrapolated, open, close, weight = "1.0f", offset;
    for (size_t d = 0; d < xs.size(); ++d) {
      const ResizeAxis& a = t.axes[d];
      bool identity = os[d] == xs[d];
      for (int64_t c = 0; identity && c < os[d]; ++c) {
        identity = !a.extrapolate[c];
        for (int64_t k = 0; identity && k < a.taps; ++k) {
          const double w = a.w[c * a.taps + k];
          identity = w == 0.0 || (w == 1.0 && a.idx[c * a.taps + k] == c);
        }
      }
      const std::string dd = std::to_string(d), c = "fz_d" + dd;
      if (identity) {
        offset += (offset.empty() ? "" : " + ") + c + " * " + lit(xst[d]);
        continue;
      }
      std::vector<std::string> idx, w, ex;
      for (int64_t i : a.idx) idx.push_back(std::to_string(i));
      for (double v : a.w) {
        if (!std::isfinite(v)) throw Unsupported(d_.name, n.label() + ": Resize weights that are not finite (exclude_outside with every tap outside)");
        w.push_back(fz_float_literal(v));
      }
      entries += static_cast<int64_t>(idx.size() + w.size());
      globals_ += d_.const_array("int", "fz_ri" + dd, idx) + d_.const_array("float", "fz_rw" + dd, w);
      if (std::any_of(a.extrapolate.begin(), a.extrapolate.end(), [](uint8_t e) { return e != 0; })) {
        for (uint8_t e : a.extrapolate) ex.push_back(e ? "1" : "0");
        entries += static_cast<int64_t>(ex.size());
        globals_ += d_.const_array("int", "fz_rx" + dd, ex);
        extrapolated += (extrapolated.empty() ? "" : " || ") + std::string("fz_rx") + dd + "[" + c + "] != 0";
      }
      const std::string k = "fz_k" + dd, at = c + " * " + lit(a.taps) + " + " + k;
      open += "    for (int " + k + " = 0; " + k + " < " + lit(a.taps) + "; ++" + k + ") {\n";
      close += "    }\n";
      weight += " * fz_rw" + dd + "[" + at + "]";
      offset += (offset.empty() ? "" : " + ") + d_.cast("fz_idx", "fz_ri" + dd + "[" + at + "]") + " * " + lit(xst[d]);
    }
    if (entries > (int64_t{1} << 16)) throw Unsupported(d_.name, n.label() + ": Resize tables of " + std::to_string(entries) + " entries are too large for a generated kernel");
    s += "    float fz_acc = 0.0f;\n" + open + "    fz_acc += " + weight + " * " + load_of(x, offset.empty() ? lit(0) : offset) + ";\n" + close;
    if (!extrapolated.empty()) s += "    if (" + extrapolated + ") fz_acc = " + fz_float_literal(t.extrapolation) + ";\n";
    return s + "    " + store_of(out, "fz_o", "fz_acc") + "\n";
  }

  std::string transpose(const Node& n, int out) const {
    const int x = in_buf(0);
    const Shape& xs = buffer(x).shape;
    std::vector<int64_t> perm = n.attr_ints("perm");
    if (perm.empty())
      for (int64_t i = static_cast<int64_t>(xs.size()) - 1; i >= 0; --i) perm.push_back(i);
    const Shape cs = contiguous_strides(xs);
    std::vector<int64_t> st;
    for (auto p : perm) st.push_back(cs.at(static_cast<size_t>(p)));
    return out_coords(buffer(out).shape) + "    " + copy(x, coords_offset(st), out, "fz_o") + "\n";
  }
  std::string broadcast_copy(int out) const {
    const Shape& os = buffer(out).shape;
    return out_coords(os) + "    " + copy(in_buf(0), coords_offset(bcast_strides(in_buf(0), os)), out, "fz_o") + "\n";
  }
  // Integer/bool -> integer/bool without a float round trip, so 64-bit values stay exact.
  std::string int_cast(int out) const {
    const int x = in_buf(0);
    const std::string v = d_.element(slot(x), "fz_o");
    if (dtype_of(out) == DType::boolean)
      return "    " + d_.element(slot(out), "fz_o") + " = " + d_.cast(d_.storage_type(DType::boolean), "(" + v + ") != " + d_.cast(d_.storage_type(dtype_of(x)), "0") + " ? 1 : 0") + ";\n";
    return "    " + d_.element(slot(out), "fz_o") + " = " + d_.cast(d_.storage_type(dtype_of(out)), v) + ";\n";
  }
  // An element-wise op the fuser left opaque: typed like a fused op (broadcast loads in their
  // dtypes, the op in its math dtype, the result converted to the output's dtype).
  std::string elementwise(const Node& n, const ScalarRule& rule, int out) const {
    const Shape& os = buffer(out).shape;
    std::vector<DType> in_types;
    for (int b : k_.opaque_inputs) in_types.push_back(b >= 0 ? dtype_of(b) : DType::undefined);
    ExprNode e;
    e.kind = ExprKind::op;
    e.op = lookup_op(n.op_type);
    e.dtype = dtype_of(out);
    e.math = scalar_math_dtype(rule, in_types);
    e.bound = bind_scalar(rule, n, dtype_is_int(e.math));
    std::string s = out_coords(os);
    std::vector<std::string> ops;
    for (size_t i = 0; i < k_.opaque_inputs.size(); ++i) {
      if (k_.opaque_inputs[i] < 0) {
        ops.emplace_back();
        continue;
      }
      const int b = k_.opaque_inputs[i];
      const std::string x = "fz_x" + std::to_string(i);
      s += "    " + local(dtype_of(b)) + x + " = " + typed_load(b, coords_offset(bcast_strides(b, os))) + ";\n";
      ops.push_back(convert_value(d_, dtype_of(b), e.math, x));
    }
    return s + "    " + typed_store(out, "fz_o", convert_value(d_, e.math, e.dtype, op_expression(e, ops, d_), true)) + "\n";
  }

  std::string gather(const Node& n, int out) const {
    const int data = in_buf(0), ind = in_buf(1);
    const Shape& ds = buffer(data).shape;
    const int64_t axis = normalize_axis(n.attr_i("axis", 0), static_cast<int64_t>(ds.size()), n.label());
    const DType it = dtype_of(ind);
    if (it != DType::i64 && it != DType::i32) throw Unsupported(d_.name, n.label() + ": Gather indices must be int32/int64");
    int64_t inner = 1;
    for (size_t i = axis + 1; i < ds.size(); ++i) inner *= ds[i];
    const int64_t count = shape_numel(buffer(ind).shape), dim = ds[axis];
    std::string s = "    fz_idx fz_in = fz_o % " + lit(inner) + ";\n";
    s += "    fz_idx fz_m = (fz_o / " + lit(inner) + ") % " + lit(count) + ";\n";
    s += "    fz_idx fz_outer = fz_o / " + lit(inner * count) + ";\n";
    s += "    fz_idx fz_k = " + index_of(ind, "fz_m") + ";\n";
    s += fix_index("fz_k", dim);
    s += "    " + copy(data, "(fz_outer * " + lit(dim) + " + fz_k) * " + lit(inner) + " + fz_in", out, "fz_o") + "\n";
    return s;
  }

  std::string concat(const Node& n, int out) const {
    const Shape& os = buffer(out).shape;
    const int64_t axis = normalize_axis(n.attr_i("axis", 0), static_cast<int64_t>(os.size()), n.label());
    int64_t inner = 1;
    for (size_t i = axis + 1; i < os.size(); ++i) inner *= os[i];
    std::string s = "    fz_idx fz_in = fz_o % " + lit(inner) + ";\n";
    s += "    fz_idx fz_a = (fz_o / " + lit(inner) + ") % " + lit(os[axis]) + ";\n";
    s += "    fz_idx fz_outer = fz_o / " + lit(inner * os[axis]) + ";\n";
    int64_t start = 0;
    std::string els;
    for (size_t i = 0; i < k_.opaque_inputs.size(); ++i) {
      const int b = in_buf(i);
      const int64_t c = buffer(b).shape[axis];
      if (c == 0) continue;
      s += "    " + els + "if (fz_a < " + lit(start + c) + ") " +
           copy(b, "(fz_outer * " + lit(c) + " + fz_a - " + lit(start) + ") * " + lit(inner) + " + fz_in", out, "fz_o") + "\n";
      els = "else ";
      start += c;
    }
    return s;
  }

  // ONNX MaxPool/AveragePool with the window arithmetic of ir/ops/nn.cpp (make_window): auto_pad,
  // ceil_mode, dilations, count_include_pad counting taps inside the padded input only.
  // MaxPool's optional Indices output `arg` (storage_order 0): the flat index n*C*in + spatial
  // offset of the first maximum (a NaN wins, as pool_core), -1 when no tap is inside the input.
  std::string pool(const Node& n, int out, int arg = -1) const {
    const int x = in_buf(0);
    const Shape& xs = buffer(x).shape;
    const Shape& os = buffer(out).shape;
    const int nd = static_cast<int>(xs.size()) - 2;
    if (nd < 1 || nd > 3 || os.size() != xs.size()) throw Unsupported(d_.name, n.label() + ": pooling needs 1-3 spatial dims");
    // storage_order only changes the Indices output: 1 numbers the spatial dims column-major.
    const int64_t order = n.attr_i("storage_order", 0);
    if (order != 0 && order != 1) fail(n.label() + ": storage_order must be 0 or 1");
    const bool is_max = n.op_type == "MaxPool", is_lp = n.op_type == "LpPool";
    const double lp = static_cast<double>(n.attr_i("p", 2));
    auto kern = n.attr_ints("kernel_shape");
    auto strides = n.attr_ints("strides", std::vector<int64_t>(nd, 1));
    auto dil = n.attr_ints("dilations", std::vector<int64_t>(nd, 1));
    auto pads = n.attr_ints("pads", std::vector<int64_t>(2 * nd, 0));
    if (static_cast<int>(kern.size()) != nd || static_cast<int>(strides.size()) != nd || static_cast<int>(dil.size()) != nd ||
        static_cast<int>(pads.size()) != 2 * nd)
      fail(n.label() + ": malformed pooling attributes");
    const std::string ap = n.attr_s("auto_pad", "NOTSET");
    std::vector<int64_t> pb(nd), pe(nd);
    for (int i = 0; i < nd; ++i) {
      if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
        const int64_t dk = (kern[i] - 1) * dil[i] + 1, o = (xs[2 + i] + strides[i] - 1) / strides[i];
        const int64_t total = std::max<int64_t>(0, (o - 1) * strides[i] + dk - xs[2 + i]);
        pb[i] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
        pe[i] = total - pb[i];
      } else if (ap == "VALID") {
        pb[i] = pe[i] = 0;
      } else {
        pb[i] = pads[i];
        pe[i] = pads[nd + i];
      }
    }
    const bool include_pad = n.attr_i("count_include_pad", 0) != 0;
    // float64 data pools in double (MaxPool/AveragePool; LpPool's pow has no GLSL double).
    const bool dbl = dtype_of(x) == DType::f64;
    const std::string vt = dbl ? "double" : "float";
    int64_t in_sz = 1, out_sz = 1;
    for (int i = 0; i < nd; ++i) in_sz *= xs[2 + i], out_sz *= os[2 + i];
    std::string s = "    fz_idx fz_nc = fz_o / " + lit(out_sz) + ";\n";
    std::string cond, padcond, off;
    for (int i = 0; i < nd; ++i) {
      int64_t inner = 1;
      for (int j = i + 1; j < nd; ++j) inner *= os[2 + j];
      const std::string si = std::to_string(i);
      s += "    fz_idx fz_s" + si + " = ((fz_o / " + lit(inner) + ") % " + lit(os[2 + i]) + ") * " + lit(strides[i]) + " - " + lit(pb[i]) + ";\n";
    }
    s += "    " + vt + " fz_acc = " + d_.cast(vt, is_max ? "(-fz_inf())" : "0.0f") + ";\n    int fz_cnt = 0;\n    int fz_pad = 0;\n";
    if (arg >= 0) s += "    fz_idx fz_best = " + lit(-1) + ";\n";
    std::string ind = "    ";
    for (int i = 0; i < nd; ++i) {
      const std::string si = std::to_string(i);
      s += ind + "for (fz_idx fz_k" + si + " = " + lit(0) + "; fz_k" + si + " < " + lit(kern[i]) + "; ++fz_k" + si + ") {\n";
      ind += "  ";
      s += ind + "fz_idx fz_p" + si + " = fz_s" + si + " + fz_k" + si + " * " + lit(dil[i]) + ";\n";
      cond += std::string(cond.empty() ? "" : " && ") + "fz_p" + si + " >= " + lit(0) + " && fz_p" + si + " < " + lit(xs[2 + i]);
      padcond += std::string(padcond.empty() ? "" : " && ") + "fz_p" + si + " >= " + lit(-pb[i]) + " && fz_p" + si + " < " + lit(xs[2 + i] + pe[i]);
      int64_t inner = 1;
      for (int j = i + 1; j < nd; ++j) inner *= xs[2 + j];
      off += " + fz_p" + si + " * " + lit(inner);
    }
    s += ind + "if (" + cond + ") {\n";
    s += ind + "  fz_idx fz_xo = fz_nc * " + lit(in_sz) + off + ";\n";
    s += ind + "  " + vt + " fz_v = " + (dbl ? typed_load(x, "fz_xo") : load_of(x, "fz_xo")) + ";\n";
    const std::string lp_term = rename_intrinsics("pow(abs(fz_v), " + fz_float_literal(lp) + ")", d_);
    if (arg >= 0 && is_max) {
      s += ind + "  if (fz_best < " + lit(0) + " || fz_v > fz_acc || ((" + is_nan("fz_v") + ") && !(" + is_nan("fz_acc") + "))) {\n";
      std::string col = "fz_nc * " + lit(in_sz);
      int64_t outer = 1;
      for (int i = 0; i < nd; ++i) col += " + fz_p" + std::to_string(i) + " * " + lit(outer), outer *= xs[2 + i];
      s += ind + "    fz_acc = fz_v;\n" + ind + "    fz_best = " + (order == 1 ? col : std::string("fz_xo")) + ";\n" + ind + "  }\n";
    } else {
      s += ind + "  fz_acc = " + (is_max ? "fz_max(fz_acc, fz_v)" : is_lp ? "fz_acc + " + lp_term : "fz_acc + fz_v") + ";\n";
    }
    s += ind + "  fz_cnt += 1;\n";
    s += ind + "} else if (" + padcond + ") {\n" + ind + "  fz_pad += 1;\n" + ind + "}\n";
    for (int i = nd - 1; i >= 0; --i) {
      ind.resize(ind.size() - 2);
      s += ind + "}\n";
    }
    if (is_lp) s += "    fz_acc = " + rename_intrinsics("pow(fz_acc, " + fz_float_literal(1.0 / lp) + ")", d_) + ";\n";
    else if (!is_max) s += "    fz_acc = fz_acc / " + d_.cast(vt, include_pad ? "fz_cnt + fz_pad" : "fz_cnt") + ";\n";
    if (arg >= 0) {
      if (!is_max) fail(n.label() + ": only MaxPool has an Indices output");
      // Stored as an integer directly (no float round trip: indices may exceed 2^24).
      s += "    " + d_.element(slot(arg), "fz_o") + " = " + d_.cast(d_.storage_type(dtype_of(arg)), "fz_best") + ";\n";
    }
    return s + "    " + (dbl ? typed_store(out, "fz_o", "fz_acc") : store_of(out, "fz_o", "fz_acc")) + "\n";
  }

  // ---- more opaque ops (semantics: the references in ir/ops/{reduce,shape,nn}.cpp) ----------

  // Compile-time constant of node input i (nullptr when absent or computed at run time).
  const Tensor* const_of(size_t i) const {
    const Node& n = node();
    if (i >= n.inputs.size() || n.inputs[i] < 0) return nullptr;
    const Value& v = p_.graph.values[n.inputs[i]];
    return v.constant ? &*v.constant : nullptr;
  }
  std::vector<int64_t> const_ints(size_t i, const std::string& what) const {
    const Tensor* t = const_of(i);
    if (!t) throw Unsupported(d_.name, node().label() + ": " + what + " must be a compile-time constant");
    std::vector<int64_t> v;
    for (int64_t j = 0; j < t->numel(); ++j) v.push_back(t->get_int(j));
    return v;
  }
  bool has_in(size_t i) const { return i < k_.opaque_inputs.size() && k_.opaque_inputs[i] >= 0; }
  // A ReduceRule pre/post string with "{0}" -> v, intrinsics renamed by the dialect.
  std::string rule_text(const char* ex, const std::string& v) const {
    return "(" + rename_intrinsics(substitute(ex, [&](int) { return v; }, [&](const std::string& p) -> std::string {
                                     fail("reduce rule uses parameter '" + p + "'");
                                   }), d_) + ")";
  }
  // Declares fz_<nm><j> = coordinate j of linear index `lin` over shape s.
  std::string coords(const std::string& nm, const std::string& lin, const Shape& s, const std::string& ind = "    ") const {
    std::string r;
    for (size_t j = 0; j < s.size(); ++j) {
      int64_t inner = 1;
      for (size_t l = j + 1; l < s.size(); ++l) inner *= s[l];
      r += ind + "fz_idx fz_" + nm + std::to_string(j) + " = (" + lin + " / " + lit(inner) + ") % " + lit(s[j]) + ";\n";
    }
    return r;
  }
  // Index element `off` of an integer (or float, for OneHot) index buffer b -> fz_idx.
  std::string index_of(int b, const std::string& off) const {
    const DType t = dtype_of(b);
    if (dtype_is_float(t)) return idx(load_of(b, off));
    // 64-bit indices in 32-bit index mode saturate first, so 2^40 stays out of range instead
    // of truncating to a valid index.
    if ((t == DType::i64 || t == DType::u64) && !h_.index64) {
      const std::string v = d_.load_value(t, d_.element(slot(b), off)), ct = d_.compute_type(t);
      const std::string lo = d_.int_literal(t, t == DType::u64 ? 0 : -2147483648LL), hi = d_.int_literal(t, 2147483647);
      return idx("fz_min(fz_max(" + v + ", " + lo + "), " + hi + ")");
    }
    return d_.to_index(t, d_.element(slot(b), off));
  }
  // Wraps a negative index once and clamps into [0, dim) so a bad index cannot read outside.
  // Negative indices count from the end (ONNX); an index outside [-dim, dim) is reported
  // through the status word (the run then fails as on ref) and clamped so no access strays.
  std::string fix_index(const std::string& v, int64_t dim, const std::string& ind = "    ") const {
    return ind + "if (" + v + " < " + lit(0) + ") " + v + " += " + lit(dim) + ";\n" + ind + "if (" + v + " < " + lit(0) + " || " +
           v + " >= " + lit(dim) + ") FZ_INDEX_ERROR;\n" + ind + v + " = " + v + " < " + lit(0) + " ? " + lit(0) + " : (" + v +
           " >= " + lit(dim) + " ? " + lit(std::max<int64_t>(dim - 1, 0)) + " : " + v + ");\n";
  }
  std::string is_nan(const std::string& v) const { return "fz_isnan(" + v + ") != 0.0f"; }

  // Reductions the typed path computes exactly: plain combiners over f64 or integer data.
  bool typed_reduce(const Node& n, const ReduceRule& rule) const {
    const DType xt = dtype_of(in_buf(0));
    return (xt == DType::f64 || dtype_is_int(xt)) && !rule.pre && !rule.post && n.op_type != "ReduceLogSumExp";
  }
  // The largest (max = true) or smallest value of integer dtype t, as held (u64 by its bits).
  static int64_t int_limit(DType t, bool max) {
    switch (t) {
      case DType::i8: return max ? 127 : -128;
      case DType::u8: return max ? 255 : 0;
      case DType::i16: return max ? 32767 : -32768;
      case DType::u16: return max ? 65535 : 0;
      case DType::i32: return max ? 2147483647LL : -2147483648LL;
      case DType::u32: return max ? 4294967295LL : 0;
      case DType::u64: return max ? -1 : 0;
      default: return max ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
    }
  }

  // Reduce* with the op's ReduceRule (pre, combiner, mean, post); one thread per output element.
  std::string reduce(const Node& n, const ReduceRule& rule, int out) const {
    const int x = in_buf(0);
    const Shape& xs = buffer(x).shape;
    const int64_t r = static_cast<int64_t>(xs.size());
    const int axes_opset = n.op_type == "ReduceSum" ? 13 : 18;
    std::vector<int64_t> axes = n.opset >= axes_opset ? (has_in(1) ? const_ints(1, "axes") : std::vector<int64_t>{})
                                                      : n.attr_ints("axes");
    if (axes.empty() && n.attr_i("noop_with_empty_axes", 0) != 0) return "    " + copy(x, "fz_o", out, "fz_o") + "\n";
    std::vector<bool> mask(static_cast<size_t>(r), axes.empty());
    for (auto a : axes) mask[normalize_axis(a, r, n.label())] = true;
    const Shape cs = contiguous_strides(xs);
    Shape kept, red;
    std::vector<int64_t> kst, rst;
    for (int64_t d = 0; d < r; ++d) (mask[d] ? red : kept).push_back(xs[d]), (mask[d] ? rst : kst).push_back(cs[d]);
    const int64_t count = shape_numel(red);
    std::string s = coords("d", "fz_o", kept);
    std::string base = lit(0);
    for (size_t j = 0; j < kept.size(); ++j) base += " + fz_d" + std::to_string(j) + " * " + lit(kst[j]);
    s += "    fz_idx fz_base = " + base + ";\n";
    const std::string loop = "    for (fz_idx fz_t = " + lit(0) + "; fz_t < " + lit(count) + "; ++fz_t) {\n";
    std::string off = "fz_base";
    for (size_t j = 0; j < red.size(); ++j) {
      int64_t inner = 1;
      for (size_t l = j + 1; l < red.size(); ++l) inner *= red[l];
      off += " + ((fz_t / " + lit(inner) + ") % " + lit(red[j]) + ") * " + lit(rst[j]);
    }
    if (typed_reduce(n, rule)) {
      // float64 and integer data: accumulate in the dtype's compute type (exact integers,
      // double for f64), as the reference does; the result converts to the output dtype.
      const DType xt = dtype_of(x);
      const std::string ct = d_.compute_type(xt), fn = combiner_fn(rule.combiner);
      const bool integral = dtype_is_integral(xt);
      std::string ident;
      switch (rule.combiner) {
        case Combiner::sum: ident = typed_literal(d_, xt, 0.0, 0); break;
        case Combiner::prod: ident = typed_literal(d_, xt, 1.0, 1); break;
        case Combiner::max: ident = integral ? d_.int_literal(xt, int_limit(xt, false)) : d_.cast("double", "(-fz_inf())"); break;
        case Combiner::min: ident = integral ? d_.int_literal(xt, int_limit(xt, true)) : d_.cast("double", "fz_inf()"); break;
      }
      s += "    " + local(xt) + "fz_acc = " + ident + ";\n" + loop + "      " + local(xt) + "fz_v = " + typed_load(x, off) + ";\n";
      s += "      fz_acc = " + fn + "(fz_acc, fz_v);\n    }\n";
      std::string res = "fz_acc";
      if (rule.mean)
        res = integral ? "fz_idiv(fz_acc, " + d_.int_literal(xt, count) + ")" : "(fz_acc / " + d_.double_literal(static_cast<double>(count)) + ")";
      return s + "    " + typed_store(out, "fz_o", convert_value(d_, xt, dtype_of(out), res, true)) + "\n";
    }
    const std::string val = "      float fz_v = " + load_of(x, off) + ";\n";
    const bool is_bool = dtype_of(x) == DType::boolean;
    std::string ident = combiner_identity(rule.combiner);
    if (is_bool && rule.combiner == Combiner::max) ident = "0.0f";
    if (is_bool && rule.combiner == Combiner::min) ident = "1.0f";
    const std::string fn = combiner_fn(rule.combiner);
    if (n.op_type == "ReduceLogSumExp") {
      // Shifted by the max as the reference does (no overflow for large inputs).
      s += "    float fz_m = (-fz_inf());\n" + loop + val + "      fz_m = fz_max(fz_m, fz_v);\n    }\n";
      s += "    float fz_sh = fz_isinf(fz_m) != 0.0f ? 0.0f : fz_m;\n";
      s += "    float fz_acc = 0.0f;\n" + loop + val + "      fz_acc = fz_acc + " + rule_text(rule.pre, "fz_v - fz_sh") + ";\n    }\n";
      return s + "    " + store_of(out, "fz_o", rule_text(rule.post, "fz_acc") + " + fz_sh") + "\n";
    }
    s += "    float fz_acc = " + ident + ";\n" + loop + val;
    s += "      fz_acc = " + fn + "(fz_acc, " + (rule.pre ? rule_text(rule.pre, "fz_v") : "fz_v") + ");\n    }\n";
    std::string res = "fz_acc";
    if (rule.mean) res = "(fz_acc / " + fz_float_literal(static_cast<double>(count)) + ")";
    if (rule.post) res = rule_text(rule.post, res);
    return s + "    " + store_of(out, "fz_o", res) + "\n";
  }

  // outer x len x inner around one axis (the references' AxisView).
  struct Around {
    int64_t outer = 1, len = 1, inner = 1;
  };
  static Around around(const Shape& s, int64_t axis) {
    Around a;
    for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d)
      (d < axis ? a.outer : d == axis ? a.len : a.inner) *= s[d];
    return a;
  }

  // First (select_last_index: last) extremum; a NaN counts as the extremum (numpy).
  std::string arg_extremum(const Node& n, int out) const {
    const int x = in_buf(0);
    const Shape& xs = buffer(x).shape;
    const int64_t axis = normalize_axis(n.attr_i("axis", 0), static_cast<int64_t>(xs.size()), n.label());
    const Around a = around(xs, axis);
    const bool last = n.attr_i("select_last_index", 0) != 0;
    const char* cmp = n.op_type == "ArgMax" ? " > " : " < ";
    std::string s = "    fz_idx fz_base = (fz_o / " + lit(a.inner) + ") * " + lit(a.len * a.inner) + " + fz_o % " + lit(a.inner) + ";\n";
    s += "    float fz_best = " + load_of(x, "fz_base") + ";\n    fz_idx fz_bk = " + lit(0) + ";\n";
    s += "    for (fz_idx fz_k = " + lit(1) + "; fz_k < " + lit(a.len) + "; ++fz_k) {\n";
    s += "      float fz_c = " + load_of(x, "fz_base + fz_k * " + lit(a.inner)) + ";\n      int fz_take = 0;\n";
    s += "      if (" + is_nan("fz_best") + ") fz_take = " + (last ? "(" + is_nan("fz_c") + ") ? 1 : 0" : std::string("0")) + ";\n";
    s += "      else if (" + is_nan("fz_c") + ") fz_take = 1;\n";
    s += "      else if (fz_c" + std::string(cmp) + "fz_best" + (last ? " || fz_c == fz_best" : "") + ") fz_take = 1;\n";
    s += "      if (fz_take != 0) {\n        fz_best = fz_c;\n        fz_bk = fz_k;\n      }\n    }\n";
    return s + "    " + store_of(out, "fz_o", d_.cast("float", "fz_bk")) + "\n";
  }

  // Hardmax: 1 at the first maximum of the row (NaN wins), else 0; rows as in Softmax.
  std::string hardmax(const Node& n, int out) const {
    const int x = in_buf(0);
    const Shape& xs = buffer(x).shape;
    const int64_t r = static_cast<int64_t>(xs.size());
    const bool legacy = n.opset < 13;
    const int64_t axis = normalize_axis(n.attr_i("axis", legacy ? 1 : -1), r, n.label());
    Around a = around(xs, axis);
    if (legacy) a.len *= a.inner, a.inner = 1;
    std::string s = "    fz_idx fz_kk = (fz_o / " + lit(a.inner) + ") % " + lit(a.len) + ";\n";
    s += "    fz_idx fz_base = (fz_o / " + lit(a.len * a.inner) + ") * " + lit(a.len * a.inner) + " + fz_o % " + lit(a.inner) + ";\n";
    s += "    float fz_mx = (-fz_inf());\n    fz_idx fz_arg = " + lit(0) + ";\n";
    s += "    for (fz_idx fz_k = " + lit(0) + "; fz_k < " + lit(a.len) + "; ++fz_k) {\n";
    s += "      float fz_c = " + load_of(x, "fz_base + fz_k * " + lit(a.inner)) + ";\n";
    s += "      if (fz_c > fz_mx || ((" + is_nan("fz_c") + ") && !(" + is_nan("fz_mx") + "))) {\n        fz_mx = fz_c;\n        fz_arg = fz_k;\n      }\n    }\n";
    return s + "    " + store_of(out, "fz_o", "(fz_kk == fz_arg ? 1.0f : 0.0f)") + "\n";
  }

  std::string cumsum(const Node& n, int out) const {
    const int x = in_buf(0);
    const Shape& xs = buffer(x).shape;
    const int64_t r = static_cast<int64_t>(xs.size());
    const bool excl = n.attr_i("exclusive", 0) != 0, rev = n.attr_i("reverse", 0) != 0;
    std::string s, len, inner;
    if (const Tensor* t = const_of(1)) {
      if (t->numel() != 1) fail(n.label() + ": CumSum axis must be a scalar");
      const Around a = around(xs, normalize_axis(t->get_int(0), r, n.label()));
      len = lit(a.len), inner = lit(a.inner);
    } else {
      // Axis computed at run time: select the geometry of each possible axis.
      s += "    fz_idx fz_ax = " + index_of(in_buf(1), lit(0)) + ";\n    if (fz_ax < " + lit(0) + ") fz_ax += " + lit(r) + ";\n";
      s += "    fz_idx fz_len = " + lit(1) + ";\n    fz_idx fz_inner = " + lit(1) + ";\n";
      for (int64_t d = 0; d < r; ++d) {
        const Around a = around(xs, d);
        s += "    if (fz_ax == " + lit(d) + ") {\n      fz_len = " + lit(a.len) + ";\n      fz_inner = " + lit(a.inner) + ";\n    }\n";
      }
      len = "fz_len", inner = "fz_inner";
    }
    s += "    fz_idx fz_kk = (fz_o / " + inner + ") % " + len + ";\n";
    s += "    fz_idx fz_base = fz_o - fz_kk * " + inner + ";\n    float fz_acc = 0.0f;\n";
    // Summed in the reference's order (from the start, or from the end when reverse).
    if (!rev) s += "    for (fz_idx fz_k = " + lit(0) + "; fz_k " + (excl ? "<" : "<=") + " fz_kk; ++fz_k)";
    else s += "    for (fz_idx fz_k = " + len + " - " + lit(1) + "; fz_k " + (excl ? ">" : ">=") + " fz_kk; --fz_k)";
    s += " fz_acc = fz_acc + " + load_of(x, "fz_base + fz_k * " + inner) + ";\n";
    return s + "    " + store_of(out, "fz_o", "fz_acc") + "\n";
  }

  // Softmax / LogSoftmax the decomposition left whole (non-f32 storage): max-shifted, per element.
  std::string softmax(const Node& n, int out) const {
    const int x = in_buf(0);
    const Shape& xs = buffer(x).shape;
    const bool legacy = n.opset < 13;
    const int64_t axis = normalize_axis(n.attr_i("axis", legacy ? 1 : -1), static_cast<int64_t>(xs.size()), n.label());
    Around a = around(xs, axis);
    if (legacy) a.len *= a.inner, a.inner = 1;
    std::string s = "    fz_idx fz_base = (fz_o / " + lit(a.len * a.inner) + ") * " + lit(a.len * a.inner) + " + fz_o % " + lit(a.inner) + ";\n";
    const std::string loop = "    for (fz_idx fz_k = " + lit(0) + "; fz_k < " + lit(a.len) + "; ++fz_k) {\n      float fz_c = " +
                             load_of(x, "fz_base + fz_k * " + lit(a.inner)) + ";\n";
    s += "    float fz_mx = (-fz_inf());\n" + loop;
    s += "      if (fz_c > fz_mx || ((" + is_nan("fz_c") + ") && !(" + is_nan("fz_mx") + "))) fz_mx = fz_c;\n    }\n";
    s += "    float fz_sum = 0.0f;\n" + loop + "      fz_sum = fz_sum + " + rename_intrinsics("exp(fz_c - fz_mx)", d_) + ";\n    }\n";
    s += "    float fz_z = " + load_of(x, "fz_o") + " - fz_mx;\n";
    const std::string y = n.op_type == "Softmax" ? rename_intrinsics("exp(fz_z)", d_) + " / fz_sum" : "fz_z - " + rename_intrinsics("log(fz_sum)", d_);
    return s + "    " + store_of(out, "fz_o", y) + "\n";
  }

  // Conv the fuser left opaque (1-D/3-D, non-f32, bias computed at run time): direct, one thread
  // per output element, window geometry as ir/ops/nn.cpp make_window (no ceil_mode for Conv).
  std::string conv_direct(const Node& n, int out) const {
    const int x = in_buf(0), w = in_buf(1);
    const Shape& xs = buffer(x).shape;
    const Shape& ws = buffer(w).shape;
    const Shape& os = buffer(out).shape;
    const int nd = static_cast<int>(xs.size()) - 2;
    if (nd < 1 || nd > 3 || ws.size() != xs.size()) throw Unsupported(d_.name, n.label() + ": Conv needs 1-3 spatial dims");
    const int64_t group = n.attr_i("group", 1), C = xs[1], M = ws[0], Cg = C / group, Mg = M / group;
    auto strides = n.attr_ints("strides", std::vector<int64_t>(nd, 1));
    auto dil = n.attr_ints("dilations", std::vector<int64_t>(nd, 1));
    auto pads = n.attr_ints("pads", std::vector<int64_t>(2 * nd, 0));
    const std::string ap = n.attr_s("auto_pad", "NOTSET");
    std::vector<int64_t> pb(nd, 0);
    for (int i = 0; i < nd; ++i) {
      const int64_t k = ws[2 + i];
      if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
        const int64_t dk = (k - 1) * dil[i] + 1, o = (xs[2 + i] + strides[i] - 1) / strides[i];
        const int64_t total = std::max<int64_t>(0, (o - 1) * strides[i] + dk - xs[2 + i]);
        pb[i] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
      } else if (ap != "VALID") {
        pb[i] = pads[i];
      }
    }
    int64_t in_sz = 1, out_sz = 1, k_sz = 1;
    for (int i = 0; i < nd; ++i) in_sz *= xs[2 + i], out_sz *= os[2 + i], k_sz *= ws[2 + i];
    std::string s = "    fz_idx fz_m = (fz_o / " + lit(out_sz) + ") % " + lit(M) + ";\n";
    s += "    fz_idx fz_n = fz_o / " + lit(out_sz * M) + ";\n";
    s += "    fz_idx fz_xb = (fz_n * " + lit(C) + " + (fz_m / " + lit(Mg) + ") * " + lit(Cg) + ") * " + lit(in_sz) + ";\n";
    s += "    fz_idx fz_wb = fz_m * " + lit(Cg * k_sz) + ";\n";
    for (int i = 0; i < nd; ++i) {
      int64_t inner = 1;
      for (int j = i + 1; j < nd; ++j) inner *= os[2 + j];
      s += "    fz_idx fz_s" + std::to_string(i) + " = ((fz_o / " + lit(inner) + ") % " + lit(os[2 + i]) + ") * " + lit(strides[i]) + " - " + lit(pb[i]) + ";\n";
    }
    return s + window_sum(x, w, out, Cg, k_sz, [&](int i, const std::string& si, const std::string& ind) {
             return std::make_pair(ind + "fz_idx fz_p" + si + " = fz_s" + si + " + fz_k" + si + " * " + lit(dil[i]) + ";\n",
                                   "fz_p" + si + " >= " + lit(0) + " && fz_p" + si + " < " + lit(xs[2 + i]));
           });
  }

  // The tap loops Conv and ConvTranspose share: fz_acc starts at the bias (input 2) or 0, adds
  // x[i] * w[k] over c < cg (w's channel stride w_c_stride) and the window k, and is stored.
  // Per spatial dim i, position(i, "<i>", indent) returns the lines defining fz_p<i>, the input
  // position of tap fz_k<i> relative to fz_s<i>, and the condition that it lies inside x.
  std::string window_sum(int x, int w, int out, int64_t cg, int64_t w_c_stride,
                         const std::function<std::pair<std::string, std::string>(int, const std::string&, const std::string&)>& position) const {
    const Shape& xs = buffer(x).shape;
    const Shape& ws = buffer(w).shape;
    const int nd = static_cast<int>(xs.size()) - 2;
    int64_t in_sz = 1;
    for (int i = 0; i < nd; ++i) in_sz *= xs[2 + i];
    std::string s = "    float fz_acc = " + std::string(has_in(2) ? load_of(in_buf(2), "fz_m") : "0.0f") + ";\n";
    s += "    for (fz_idx fz_c = " + lit(0) + "; fz_c < " + lit(cg) + "; ++fz_c) {\n";
    std::string ind = "      ", cond, xoff = "fz_xb + fz_c * " + lit(in_sz), woff = "fz_wb + fz_c * " + lit(w_c_stride);
    for (int i = 0; i < nd; ++i) {
      const std::string si = std::to_string(i);
      s += ind + "for (fz_idx fz_k" + si + " = " + lit(0) + "; fz_k" + si + " < " + lit(ws[2 + i]) + "; ++fz_k" + si + ") {\n";
      ind += "  ";
      auto [lines, inside] = position(i, si, ind);
      s += lines;
      cond += std::string(cond.empty() ? "" : " && ") + inside;
      int64_t xi = 1, wi = 1;
      for (int j = i + 1; j < nd; ++j) xi *= xs[2 + j], wi *= ws[2 + j];
      xoff += " + fz_p" + si + " * " + lit(xi);
      woff += " + fz_k" + si + " * " + lit(wi);
    }
    s += ind + "if (" + cond + ") fz_acc = fz_acc + " + load_of(x, xoff) + " * " + load_of(w, woff) + ";\n";
    for (int i = nd - 1; i >= 0; --i) {
      ind.resize(ind.size() - 2);
      s += ind + "}\n";
    }
    return s + "    }\n    " + store_of(out, "fz_o", "fz_acc") + "\n";
  }

  // ConvTranspose in gather form: output element (b, m, o...) sums, over c in its group and the
  // taps k (in the reference's order c, k0, k1, k2), x[i] * w[k] for the input position
  // i = (o + pb - k*d) / s when that divides exactly and lies inside the input. Geometry as
  // ir/ops/nn.cpp convtranspose_window (pads, output_padding, output_shape, auto_pad).
  std::string conv_transpose(const Node& n, int out) const {
    const int x = in_buf(0), w = in_buf(1);
    const Shape& xs = buffer(x).shape;
    const Shape& ws = buffer(w).shape;
    const Shape& os = buffer(out).shape;
    const int nd = static_cast<int>(xs.size()) - 2;
    if (nd < 1 || nd > 3 || ws.size() != xs.size() || os.size() != xs.size())
      throw Unsupported(d_.name, n.label() + ": ConvTranspose needs 1-3 spatial dims");
    for (int b : k_.opaque_inputs)
      if (b >= 0 && dtype_of(b) == DType::f64) throw Unsupported(d_.name, n.label() + ": float64 arithmetic is not generated (fp32 only)");
    const int64_t G = n.attr_i("group", 1), C = xs[1], Cg = C / G, Mg = ws[1], M = Mg * G;
    auto strides = n.attr_ints("strides", std::vector<int64_t>(nd, 1));
    auto dil = n.attr_ints("dilations", std::vector<int64_t>(nd, 1));
    auto pads = n.attr_ints("pads", std::vector<int64_t>(2 * nd, 0));
    auto opad = n.attr_ints("output_padding", std::vector<int64_t>(nd, 0));
    std::vector<int64_t> oshape = n.attr_ints("output_shape");
    if (oshape.size() == static_cast<size_t>(nd + 2)) oshape.erase(oshape.begin(), oshape.begin() + 2);
    if (static_cast<int>(strides.size()) != nd || static_cast<int>(dil.size()) != nd || static_cast<int>(pads.size()) != 2 * nd ||
        static_cast<int>(opad.size()) != nd || (!oshape.empty() && static_cast<int>(oshape.size()) != nd) || os[1] != M)
      fail(n.label() + ": malformed ConvTranspose attributes");
    const std::string ap = n.attr_s("auto_pad", "NOTSET");
    std::vector<int64_t> pb(nd);
    for (int i = 0; i < nd; ++i) {
      const int64_t in = xs[2 + i], k = ws[2 + i], st = strides[i], d = dil[i];
      const int64_t full = st * (in - 1) + opad[i] + (k - 1) * d + 1;
      pb[i] = pads[i];
      if (!oshape.empty() || ap == "SAME_UPPER" || ap == "SAME_LOWER") {
        const int64_t o = oshape.empty() ? in * st : oshape[i];
        const int64_t total = full - o, half = total >= 0 ? total / 2 : -((-total + 1) / 2);
        pb[i] = ap == "SAME_UPPER" ? half : total - half;
      } else if (ap == "VALID") {
        pb[i] = 0;
      }
    }
    int64_t in_sz = 1, out_sz = 1, k_sz = 1;
    for (int i = 0; i < nd; ++i) in_sz *= xs[2 + i], out_sz *= os[2 + i], k_sz *= ws[2 + i];
    std::string s = "    fz_idx fz_m = (fz_o / " + lit(out_sz) + ") % " + lit(M) + ";\n";
    s += "    fz_idx fz_n = fz_o / " + lit(out_sz * M) + ";\n";
    s += "    fz_idx fz_g = fz_m / " + lit(Mg) + ";\n";
    s += "    fz_idx fz_xb = (fz_n * " + lit(C) + " + fz_g * " + lit(Cg) + ") * " + lit(in_sz) + ";\n";
    s += "    fz_idx fz_wb = (fz_g * " + lit(Cg) + " * " + lit(Mg) + " + fz_m % " + lit(Mg) + ") * " + lit(k_sz) + ";\n";
    for (int i = 0; i < nd; ++i) {
      int64_t inner = 1;
      for (int j = i + 1; j < nd; ++j) inner *= os[2 + j];
      s += "    fz_idx fz_s" + std::to_string(i) + " = ((fz_o / " + lit(inner) + ") % " + lit(os[2 + i]) + ") + " + lit(pb[i]) + ";\n";
    }
    return s + window_sum(x, w, out, Cg, Mg * k_sz, [&](int i, const std::string& si, const std::string& ind) {
             // t = o + pb - k*d; checked non-negative before '%' and '/' (GLSL leaves negatives undefined).
             std::string lines = ind + "fz_idx fz_t" + si + " = fz_s" + si + " - fz_k" + si + " * " + lit(dil[i]) + ";\n";
             lines += ind + "fz_idx fz_p" + si + " = fz_t" + si + " >= " + lit(0) + " ? fz_t" + si + " / " + lit(strides[i]) + " : " + lit(-1) + ";\n";
             return std::make_pair(lines, "fz_t" + si + " >= " + lit(0) + " && fz_t" + si + " % " + lit(strides[i]) + " == " + lit(0) +
                                              " && fz_p" + si + " < " + lit(xs[2 + i]));
           });
  }

  // LRN as ir/ops/nn.cpp lrn_ref: x / (bias + alpha/size * sum of x^2 over channels
  // [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to [0, C))^beta.
  std::string lrn(const Node& n, int out) const {
    const int x = in_buf(0);
    const Shape& xs = buffer(x).shape;
    if (xs.size() < 2) fail(n.label() + ": LRN input must have rank >= 2");
    if (dtype_of(x) == DType::f64) throw Unsupported(d_.name, n.label() + ": float64 arithmetic is not generated (fp32 only)");
    const int64_t size = n.attr_i("size", 0);
    if (size < 1) fail(n.label() + ": LRN size must be positive");
    const double alpha = n.attr_f("alpha", 1e-4), beta = n.attr_f("beta", 0.75), bias = n.attr_f("bias", 1.0);
    const int64_t C = xs[1], sp = xs[0] * C != 0 ? shape_numel(xs) / (xs[0] * C) : 0;
    const int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
    std::string s = "    fz_idx fz_c = (fz_o / " + lit(sp) + ") % " + lit(C) + ";\n";
    s += "    fz_idx fz_base = fz_o - fz_c * " + lit(sp) + ";\n";
    s += "    fz_idx fz_lo = fz_c - " + lit(lo) + " < " + lit(0) + " ? " + lit(0) + " : fz_c - " + lit(lo) + ";\n";
    s += "    fz_idx fz_hi = fz_c + " + lit(hi) + " > " + lit(C - 1) + " ? " + lit(C - 1) + " : fz_c + " + lit(hi) + ";\n";
    s += "    float fz_sq = 0.0f;\n";
    s += "    for (fz_idx fz_k = fz_lo; fz_k <= fz_hi; ++fz_k) {\n";
    s += "      float fz_v = " + load_of(x, "fz_base + fz_k * " + lit(sp)) + ";\n      fz_sq = fz_sq + fz_v * fz_v;\n    }\n";
    const std::string den = rename_intrinsics("pow(" + fz_float_literal(bias) + " + " + fz_float_literal(alpha / static_cast<double>(size)) +
                                              " * fz_sq, " + fz_float_literal(beta) + ")", d_);
    return s + "    " + store_of(out, "fz_o", load_of(x, "fz_o") + " / " + den) + "\n";
  }

  // Slice (starts/ends/axes/steps constant, or the opset < 10 attributes) as ir/ops/shape.cpp
  // slice_view: a strided copy, exact for every dtype.
  std::string slice(const Node& n, int out) const {
    const int x = in_buf(0);
    const Shape& xs = buffer(x).shape;
    const int64_t r = static_cast<int64_t>(xs.size());
    std::vector<int64_t> starts, ends, axes, steps;
    if (n.has_attr("starts")) {
      starts = n.attr_ints("starts"), ends = n.attr_ints("ends"), axes = n.attr_ints("axes");
    } else {
      starts = const_ints(1, "starts"), ends = const_ints(2, "ends");
      if (n.has_input(3)) axes = const_ints(3, "axes");
      if (n.has_input(4)) steps = const_ints(4, "steps");
    }
    if (axes.empty())
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
      fail(n.label() + ": Slice starts/ends/axes/steps differ in length");
    const Shape cs = contiguous_strides(xs);
    std::vector<int64_t> st(cs.begin(), cs.end());
    int64_t offset = 0;
    for (size_t i = 0; i < starts.size(); ++i) {
      const int64_t a = normalize_axis(axes[i], r, n.label()), dim = xs[a], step = steps[i];
      if (step == 0) fail(n.label() + ": Slice step 0");
      int64_t b = starts[i], e = ends[i], count;
      if (b < 0) b += dim;
      if (e < 0) e += dim;
      if (step > 0) {
        b = std::clamp<int64_t>(b, 0, dim), e = std::clamp<int64_t>(e, 0, dim);
        count = e > b ? (e - b + step - 1) / step : 0;
      } else {
        b = std::clamp<int64_t>(b, 0, dim - 1), e = std::clamp<int64_t>(e, -1, dim - 1);
        count = b > e ? (b - e + (-step) - 1) / (-step) : 0;
      }
      if (count > 0) offset += b * cs[a];
      st[a] = step * cs[a];
    }
    const Shape& os = buffer(out).shape;
    if (os.size() != xs.size()) fail(n.label() + ": Slice output rank differs from the input's");
    return out_coords(os) + "    " + copy(x, lit(offset) + " + " + coords_offset(st), out, "fz_o") + "\n";
  }

  std::string gather_elements(const Node& n, int out) const {
    const int data = in_buf(0), ind = in_buf(1);
    const Shape& ds = buffer(data).shape;
    const Shape& is = buffer(ind).shape;
    const int64_t axis = normalize_axis(n.attr_i("axis", 0), static_cast<int64_t>(ds.size()), n.label());
    const Shape cs = contiguous_strides(ds);
    std::string s = coords("d", "fz_o", is);
    s += "    fz_idx fz_k = " + index_of(ind, "fz_o") + ";\n" + fix_index("fz_k", ds[axis]);
    std::string off = "fz_k * " + lit(cs[axis]);
    for (size_t j = 0; j < ds.size(); ++j)
      if (static_cast<int64_t>(j) != axis) off += " + fz_d" + std::to_string(j) + " * " + lit(cs[j]);
    return s + "    " + copy(data, off, out, "fz_o") + "\n";
  }

  // GatherND (batch_dims b): out = indices.shape[:-1] + data.shape[b+k:].
  std::string gather_nd(const Node& n, int out) const {
    const int data = in_buf(0), ind = in_buf(1);
    const Shape& xd = buffer(data).shape;
    const Shape& is = buffer(ind).shape;
    const int64_t b = n.attr_i("batch_dims", 0), k = is.back();
    const Shape xs = contiguous_strides(xd);
    int64_t batches = 1, inner = 1;
    for (int64_t d = 0; d < b; ++d) batches *= xd[d];
    for (size_t d = static_cast<size_t>(b + k); d < xd.size(); ++d) inner *= xd[d];
    const int64_t tuples = batches ? shape_numel(is) / k / batches : 0, batch_size = b ? xs[b - 1] : shape_numel(xd);
    std::string s = "    fz_idx fz_t = fz_o / " + lit(inner) + ";\n";
    s += "    fz_idx fz_off = (fz_t / " + lit(std::max<int64_t>(tuples, 1)) + ") * " + lit(batch_size) + " + fz_o % " + lit(inner) + ";\n";
    for (int64_t j = 0; j < k; ++j) {
      s += "    {\n      fz_idx fz_k = " + index_of(ind, "fz_t * " + lit(k) + " + " + lit(j)) + ";\n" + fix_index("fz_k", xd[b + j], "      ");
      s += "      fz_off += fz_k * " + lit(xs[b + j]) + ";\n    }\n";
    }
    return s + "    " + copy(data, "fz_off", out, "fz_o") + "\n";
  }

  std::string trilu(const Node& n, int out) const {
    const int x = in_buf(0);
    const Shape& xs = buffer(x).shape;
    const int64_t R = xs[xs.size() - 2], C = xs.back();
    const bool upper = n.attr_i("upper", 1) != 0;
    std::string s = "    fz_idx fz_k = " + (has_in(1) && shape_numel(buffer(in_buf(1)).shape) > 0 ? index_of(in_buf(1), lit(0)) : lit(0)) + ";\n";
    s += "    fz_idx fz_dj = fz_o % " + lit(C) + " - (fz_o / " + lit(C) + ") % " + lit(R) + ";\n";
    s += "    if (fz_dj " + std::string(upper ? ">=" : "<=") + " fz_k) " + copy(x, "fz_o", out, "fz_o") + "\n";
    return s + "    else " + store_of(out, "fz_o", "0.0f") + "\n";
  }

  // Pad (constant / reflect / edge / wrap; pads and axes constant; the value may be a buffer).
  std::string pad(const Node& n, int out) const {
    const int x = in_buf(0);
    const Shape& xs = buffer(x).shape;
    const Shape& os = buffer(out).shape;
    const int64_t r = static_cast<int64_t>(xs.size());
    std::vector<int64_t> pads = has_in(1) ? const_ints(1, "pads") : n.attr_ints(n.has_attr("pads") ? "pads" : "paddings");
    std::vector<int64_t> axes;
    if (has_in(3)) axes = const_ints(3, "axes");
    else for (int64_t i = 0; i < r; ++i) axes.push_back(i);
    if (pads.size() != 2 * axes.size()) fail(n.label() + ": pads do not match axes");
    std::vector<int64_t> begin(static_cast<size_t>(r), 0);
    for (size_t i = 0; i < axes.size(); ++i) begin[normalize_axis(axes[i], r, n.label())] = pads[i];
    const std::string mode = n.attr_s("mode", "constant");
    const Shape cs = contiguous_strides(xs);
    std::string s = coords("d", "fz_o", os) + "    fz_idx fz_s = " + lit(0) + ";\n    int fz_pad = 0;\n";
    for (int64_t d = 0; d < r; ++d) {
      const int64_t dim = xs[d];
      const std::string c = "fz_c" + std::to_string(d);
      s += "    fz_idx " + c + " = fz_d" + std::to_string(d) + " - " + lit(begin[d]) + ";\n";
      s += "    if (" + c + " < " + lit(0) + " || " + c + " >= " + lit(dim) + ") {\n";
      // Non-negative before '%' (negative operands are undefined in GLSL): add whole periods.
      auto wrap = [&](int64_t period) {
        const int64_t k = (std::max<int64_t>(begin[d], 0) + period - 1) / period + 1;
        return "      " + c + " = (" + c + " + " + lit(k * period) + ") % " + lit(period) + ";\n";
      };
      if (mode == "constant") s += "      fz_pad = 1;\n";
      else if (mode == "edge") s += "      " + c + " = " + c + " < " + lit(0) + " ? " + lit(0) + " : " + lit(dim - 1) + ";\n";
      else if (mode == "wrap") s += wrap(dim);
      else if (mode == "reflect") {
        if (dim == 1) s += "      " + c + " = " + lit(0) + ";\n";
        else s += wrap(2 * (dim - 1)) + "      if (" + c + " >= " + lit(dim) + ") " + c + " = " + lit(2 * (dim - 1)) + " - " + c + ";\n";
      } else throw Unsupported(d_.name, n.label() + ": Pad mode '" + mode + "'");
      s += "    }\n    fz_s += " + c + " * " + lit(cs[d]) + ";\n";
    }
    std::string value;
    if (has_in(2) && shape_numel(buffer(in_buf(2)).shape) > 0) value = copy(in_buf(2), lit(0), out, "fz_o");
    else value = store_of(out, "fz_o", fz_float_literal(n.attr_f("value", 0.0)));
    return s + "    if (fz_pad != 0) " + value + "\n    else " + copy(x, "fz_s", out, "fz_o") + "\n";
  }

  // Tile / DepthToSpace / SpaceToDepth: the references' strided walks.
  std::string walk_copy(const Node& n, int out) const {
    const int x = in_buf(0);
    const Shape& xs = buffer(x).shape;
    const Shape cs = contiguous_strides(xs);
    Shape walk;
    std::vector<int64_t> st;
    if (n.op_type == "Tile") {
      const Shape& os = buffer(out).shape;
      for (size_t i = 0; i < xs.size(); ++i) {
        walk.push_back(xs[i] ? os[i] / xs[i] : 0), st.push_back(0);
        walk.push_back(xs[i]), st.push_back(cs[i]);
      }
    } else {
      const int64_t b = n.attr_i("blocksize", 1);
      Shape view;
      std::vector<int64_t> perm;
      if (n.op_type == "DepthToSpace") {
        const bool crd = n.attr_s("mode", "DCR") == "CRD";
        const int64_t c = xs[1] / (b * b);
        view = crd ? Shape{xs[0], c, b, b, xs[2], xs[3]} : Shape{xs[0], b, b, c, xs[2], xs[3]};
        perm = crd ? std::vector<int64_t>{0, 1, 4, 2, 5, 3} : std::vector<int64_t>{0, 3, 4, 1, 5, 2};
      } else {
        view = Shape{xs[0], xs[1], xs[2] / b, b, xs[3] / b, b};
        perm = {0, 3, 5, 1, 2, 4};
      }
      const Shape vs = contiguous_strides(view);
      for (auto p : perm) walk.push_back(view[p]), st.push_back(vs[p]);
    }
    return out_coords(walk) + "    " + copy(x, coords_offset(st), out, "fz_o") + "\n";
  }

  std::string eye_like(const Node& n, int out) const {
    const int64_t C = buffer(out).shape[1], k = n.attr_i("k", 0);
    return "    " + store_of(out, "fz_o", "(fz_o % " + lit(C) + " - fz_o / " + lit(C) + " == " + lit(k) + " ? 1.0f : 0.0f)") + "\n";
  }

  std::string one_hot(const Node& n, int out) const {
    const int ind = in_buf(0), values = in_buf(2);
    const Shape& os = buffer(out).shape;
    const int64_t axis = normalize_axis(n.attr_i("axis", -1), static_cast<int64_t>(os.size()), n.label()), depth = os[axis];
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(axis) + 1; d < os.size(); ++d) inner *= os[d];
    std::string s = "    fz_idx fz_v = (fz_o / " + lit(inner) + ") % " + lit(depth) + ";\n";
    s += "    fz_idx fz_i = (fz_o / " + lit(inner * depth) + ") * " + lit(inner) + " + fz_o % " + lit(inner) + ";\n";
    s += "    fz_idx fz_k = " + index_of(ind, "fz_i") + ";\n    if (fz_k < " + lit(0) + ") fz_k += " + lit(depth) + ";\n";
    return s + "    if (fz_k == fz_v) " + copy(values, lit(1), out, "fz_o") + "\n    else " + copy(values, lit(0), out, "fz_o") + "\n";
  }

  // ScatterElements / Scatter / ScatterND: each output element starts as data and applies, in
  // update order, every update that targets it (duplicates behave as the sequential reference).
  std::string scatter(const Node& n, int out) const {
    const int data = in_buf(0), ind = in_buf(1), upd = in_buf(2);
    const Shape& xs = buffer(data).shape;
    const Shape& is = buffer(ind).shape;
    const Shape cs = contiguous_strides(xs);
    const std::string red = n.attr_s("reduction", "none");
    std::string s, count, inner_s = lit(1);
    int64_t updates = 0, inner = 1;
    std::string target;
    if (n.op_type == "ScatterND") {
      const int64_t k = is.back(), tuples = shape_numel(is) / std::max<int64_t>(k, 1);
      inner = k < static_cast<int64_t>(xs.size()) ? cs[k - 1] : 1;
      updates = tuples * inner;
      target = "      fz_idx fz_t = fz_u / " + lit(inner) + ";\n      fz_idx fz_dst = fz_u % " + lit(inner) + ";\n";
      for (int64_t j = 0; j < k; ++j) {
        target += "      {\n        fz_idx fz_k = " + index_of(ind, "fz_t * " + lit(k) + " + " + lit(j)) + ";\n" + fix_index("fz_k", xs[j], "        ");
        target += "        fz_dst += fz_k * " + lit(cs[j]) + ";\n      }\n";
      }
    } else {
      const int64_t axis = normalize_axis(n.attr_i("axis", 0), static_cast<int64_t>(xs.size()), n.label());
      updates = shape_numel(is);
      target = coords("u", "fz_u", is, "      ");
      target += "      fz_idx fz_k = " + index_of(ind, "fz_u") + ";\n" + fix_index("fz_k", xs[axis], "      ");
      target += "      fz_idx fz_dst = fz_k * " + lit(cs[axis]);
      for (size_t j = 0; j < is.size(); ++j)
        if (static_cast<int64_t>(j) != axis) target += " + fz_u" + std::to_string(j) + " * " + lit(cs[j]);
      target += ";\n";
    }
    s += "    " + copy(data, "fz_o", out, "fz_o") + "\n";
    s += "    for (fz_idx fz_u = " + lit(0) + "; fz_u < " + lit(updates) + "; ++fz_u) {\n" + target;
    if (red == "none") {
      s += "      if (fz_dst == fz_o) " + copy(upd, "fz_u", out, "fz_o") + "\n    }\n";
      return s;
    }
    // Reductions combine through float (exact for integers up to 2^24), as std::max/min do.
    const std::string a = load_of(out, "fz_o"), b = "fz_b";
    std::string comb = red == "add" ? "fz_a + fz_b" : red == "mul" ? "fz_a * fz_b" : red == "max" ? "(fz_a < fz_b ? fz_b : fz_a)"
                     : red == "min" ? "(fz_b < fz_a ? fz_b : fz_a)" : "";
    if (comb.empty()) throw Unsupported(d_.name, n.label() + ": reduction '" + red + "'");
    s += "      if (fz_dst == fz_o) {\n        float fz_a = " + a + ";\n        float fz_b = " + load_of(upd, "fz_u") + ";\n";
    s += "        " + store_of(out, "fz_o", comb) + "\n      }\n    }\n";
    return s;
  }

  // MatMul the fuser left opaque (1-D operands, non-f32 storage): numpy matmul semantics, one
  // thread per output element, fp32 accumulation.
  std::string matmul_direct(const Node& n, int out) const {
    const int a = in_buf(0), b = in_buf(1);
    Shape as = buffer(a).shape, bs = buffer(b).shape;
    if (as.empty() || bs.empty()) fail(n.label() + ": MatMul of a scalar");
    if (as.size() == 1) as.insert(as.begin(), 1);
    if (bs.size() == 1) bs.push_back(1);
    const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
    Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
    const size_t nb = std::max(ab.size(), bb.size());
    Shape batch(nb, 1);
    for (size_t i = 0; i < nb; ++i) {
      const int64_t x = i + ab.size() >= nb ? ab[i + ab.size() - nb] : 1, y = i + bb.size() >= nb ? bb[i + bb.size() - nb] : 1;
      batch[i] = std::max(x, y);
    }
    Shape full = batch;
    full.push_back(M), full.push_back(N);
    // Batch strides of each operand (0 where it broadcasts).
    auto bstr = [&](const Shape& sh, int64_t mat) {
      std::vector<int64_t> st(nb, 0);
      int64_t acc = mat;
      for (int64_t i = static_cast<int64_t>(sh.size()) - 1; i >= 0; --i) {
        const size_t o = nb - sh.size() + static_cast<size_t>(i);
        st[o] = sh[i] == 1 ? 0 : acc;
        acc *= sh[i];
      }
      return st;
    };
    std::vector<int64_t> sa = bstr(ab, M * K), sb = bstr(bb, K * N);
    std::string s = coords("d", "fz_o", full), oa = lit(0), ob = lit(0);
    for (size_t i = 0; i < nb; ++i) {
      if (sa[i]) oa += " + fz_d" + std::to_string(i) + " * " + lit(sa[i]);
      if (sb[i]) ob += " + fz_d" + std::to_string(i) + " * " + lit(sb[i]);
    }
    s += "    fz_idx fz_a0 = " + oa + " + fz_d" + std::to_string(nb) + " * " + lit(K) + ";\n";
    s += "    fz_idx fz_b0 = " + ob + " + fz_d" + std::to_string(nb + 1) + ";\n    float fz_acc = 0.0f;\n";
    s += "    for (fz_idx fz_k = " + lit(0) + "; fz_k < " + lit(K) + "; ++fz_k)\n";
    s += "      fz_acc = fz_acc + " + load_of(a, "fz_a0 + fz_k") + " * " + load_of(b, "fz_b0 + fz_k * " + lit(N)) + ";\n";
    return s + "    " + store_of(out, "fz_o", "fz_acc") + "\n";
  }

  std::string global_pool(const Node& n, int out) const {
    const int x = in_buf(0);
    const Shape& xs = buffer(x).shape;
    if (xs.size() < 3) fail(n.label() + ": global pooling needs [N, C, spatial...]");
    int64_t sp = 1;
    for (size_t i = 2; i < xs.size(); ++i) sp *= xs[i];
    const bool is_max = n.op_type == "GlobalMaxPool";
    std::string s = "    float fz_acc = " + std::string(is_max ? "(-fz_inf())" : "0.0f") + ";\n";
    s += "    for (fz_idx fz_t = " + lit(0) + "; fz_t < " + lit(sp) + "; ++fz_t) {\n";
    s += "      float fz_v = " + load_of(x, "fz_o * " + lit(sp) + " + fz_t") + ";\n";
    s += std::string("      fz_acc = ") + (is_max ? "fz_max(fz_acc, fz_v)" : "fz_acc + fz_v") + ";\n    }\n";
    if (!is_max) s += "    fz_acc = fz_acc / " + fz_float_literal(static_cast<double>(sp)) + ";\n";
    return s + "    " + store_of(out, "fz_o", "fz_acc") + "\n";
  }
};

}  // namespace

std::string fz_float_literal(double v) {
  if (std::isnan(v)) return "fz_nan()";
  if (std::isinf(v)) return v > 0 ? "fz_inf()" : "(-fz_inf())";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", std::fabs(v));
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  s += "f";
  return std::signbit(v) ? "(-" + s + ")" : s;
}

std::string kernel_identifier(const std::string& name) {
  std::string s = "fz_";
  for (char c : name) s += is_ident_char(c) ? c : '_';
  return s;
}

std::vector<int> kernel_bindings(const KernelSpec& k) {
  std::vector<int> b = k.input_buffers();
  for (int o : k.output_buffers())
    if (std::find(b.begin(), b.end(), o) == b.end()) b.push_back(o);
  return b;
}

// ---- Dialect defaults ------------------------------------------------------------------------

std::string Dialect::to_float(DType t, const std::string& e) const {
  if (t == DType::boolean) return "(" + e + " != " + cast(storage_type(t), "0") + " ? 1.0f : 0.0f)";
  if (t == DType::f32) return e;
  return cast("float", e);
}
std::string Dialect::from_float(DType t, const std::string& v) const {
  if (t == DType::boolean) return cast(storage_type(t), "(" + v + ") != 0.0f ? 1 : 0");
  if (t == DType::f32) return v;
  return cast(storage_type(t), v);
}
std::string Dialect::to_index(DType t, const std::string& e) const { return cast("fz_idx", e); }
std::string Dialect::cast(const std::string& type, const std::string& e) const { return "((" + type + ")(" + e + "))"; }
std::string Dialect::element(int slot, const std::string& idx) const { return "b" + std::to_string(slot) + "[" + idx + "]"; }

std::string Dialect::group_reduce(const std::string& v, const std::string& comb, const std::string& red, int64_t group_size,
                                  const std::string&) const {
  // Tree over shared memory; the final read is followed by a barrier so the array can be reused.
  std::string s = "    " + red + "[fz_lid] = " + v + ";\n    " + barrier + "\n";
  s += "    for (int fz_w = " + std::to_string(group_size / 2) + "; fz_w > 0; fz_w >>= 1) {\n";
  s += "      if (fz_lid < fz_w) " + red + "[fz_lid] = " + comb + "(" + red + "[fz_lid], " + red + "[fz_lid + fz_w]);\n";
  s += "      " + barrier + "\n    }\n";
  s += "    " + v + " = " + red + "[0];\n    " + barrier + "\n";
  return s;
}

namespace {
std::string join_values(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? (i % 16 ? ", " : ",\n  ") : "") + v[i];
  return s;
}
}  // namespace

std::string Dialect::const_array(const std::string& type, const std::string& nm, const std::vector<std::string>& values) const {
  return "static __device__ const " + type + " " + nm + "[" + std::to_string(values.size()) + "] = {" + join_values(values) + "};\n";
}

std::string glsl_const_array(const std::string& type, const std::string& nm, const std::vector<std::string>& values) {
  const std::string n = std::to_string(values.size());
  return "const " + type + " " + nm + "[" + n + "] = " + type + "[" + n + "](" + join_values(values) + ");\n";
}

std::string Dialect::matmul_config(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t& work_items) const {
  work_items = batch * ceil_div(m, matmul_tile_m) * ceil_div(n, matmul_tile_n);
  return "";
}

bool kernel_checks_indices(const KernelSpec& k, const Plan& p) {
  if (k.kind != FusionKind::opaque || k.node < 0 || k.node >= static_cast<int>(p.graph.nodes.size())) return false;
  static const std::set<std::string> ops = {"Gather", "GatherElements", "GatherND", "ScatterElements", "Scatter", "ScatterND"};
  return ops.count(p.graph.nodes[k.node].op_type) != 0;
}

std::string index_error_message(const Plan& p, uint32_t status) {
  const size_t ki = status - 1;
  std::string label = "a kernel";
  if (ki < p.kernels.size() && p.kernels[ki].node >= 0 && p.kernels[ki].node < static_cast<int>(p.graph.nodes.size()))
    label = p.graph.nodes[p.kernels[ki].node].label();
  return label + ": index out of range (an index outside [-dim, dim) was found on the device)";
}

LaunchDims launch_dims(const KernelSpec& k, const Plan& p, const Dialect& d) { return Emitter(k, p, d).launch(); }

std::string emit_kernel(const KernelSpec& k, const Plan& p, const Dialect& d) { return Emitter(k, p, d).emit(); }

}  // namespace fusor
