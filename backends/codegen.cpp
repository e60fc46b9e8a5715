// The shared kernel emitter (see codegen.h for the generated-code contract).
#include "backends/codegen.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace fusor {

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

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Substitutes "{k}" operands (via operand(k)) and "{name}" params (via param(name)) in one
// pass so replacement text is never rescanned.
template <class F, class G> std::string substitute(const std::string& ex, F operand, G param) {
  std::string out;
  for (size_t i = 0; i < ex.size();) {
    size_t close = ex[i] == '{' ? ex.find('}', i) : std::string::npos;
    if (close != std::string::npos) {
      std::string key = ex.substr(i + 1, close - i - 1);
      if (!key.empty() && std::all_of(key.begin(), key.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        out += operand(std::stoi(key));
      else
        out += param(key);
      i = close + 1;
      continue;
    }
    out += ex[i++];
  }
  return out;
}

// Renames identifiers that are called (followed by '(') through the dialect.
std::string rename_intrinsics(const std::string& ex, const Dialect& d) {
  std::string out;
  for (size_t i = 0; i < ex.size();) {
    if (is_ident_char(ex[i]) && !std::isdigit(static_cast<unsigned char>(ex[i])) && (i == 0 || !is_ident_char(ex[i - 1]))) {
      size_t j = i;
      while (j < ex.size() && is_ident_char(ex[j])) ++j;
      std::string id = ex.substr(i, j - i);
      size_t k = j;
      while (k < ex.size() && ex[k] == ' ') ++k;
      out += (k < ex.size() && ex[k] == '(') ? d.intrinsic(id) : id;
      i = j;
      continue;
    }
    // Skip over numeric literals whole so "1e5f" is not read as an identifier tail.
    if (std::isdigit(static_cast<unsigned char>(ex[i])) || (ex[i] == '.' && i + 1 < ex.size() && std::isdigit(static_cast<unsigned char>(ex[i + 1])))) {
      size_t j = i;
      while (j < ex.size() && (is_ident_char(ex[j]) || ex[j] == '.' ||
                               ((ex[j] == '+' || ex[j] == '-') && (ex[j - 1] == 'e' || ex[j - 1] == 'E'))))
        ++j;
      out += ex.substr(i, j - i);
      i = j;
      continue;
    }
    out += ex[i++];
  }
  return out;
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
  int64_t unroll_ = 1;      // loop kernels: elements per thread per iteration
  std::string sfx_;         // suffix of coordinate/value locals (one per unrolled copy)
  std::string matmul_macros_;

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
        case ExprKind::constant: names[i] = fz_float_literal(e.value); break;
        case ExprKind::red_ref:
          if (e.red < 0 || e.red >= static_cast<int>(k_.reductions.size())) fail("red_ref to a missing reduction");
          names[i] = "fz_r" + std::to_string(e.red);
          break;
        case ExprKind::acc:
          if (!k_.matmul && !k_.conv) fail("acc used outside a contraction kernel");
          names[i] = "acc";
          break;
        case ExprKind::load: {
          if (e.load < 0 || e.load >= static_cast<int>(k_.loads.size())) fail("load index out of range");
          names[i] = v;
          s += ind + "float " + v + " = " + load_of(k_.loads[e.load].buffer, offset(e.load, have_reduced)) + ";\n";
          break;
        }
        case ExprKind::op: {
          std::vector<std::string> ops;
          for (int a : e.args) ops.push_back(a >= 0 ? names[a] : std::string());
          names[i] = v;
          s += ind + "float " + v + " = " + op_expression(e, ops, d_) + ";\n";
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
        s += ind + store_of(k_.outputs[o].buffer, offset(k_.loads.size() + o, have_reduced), names[k_.outputs[o].expr]) + "\n";
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
    std::string s = d_.shared_array("float", "fz_red", G) + d_.kernel_begin(h_);
    s += "  int fz_lid = " + d_.cast("int", d_.local_id) + ";\n";
    s += "  for (fz_idx fz_row = " + idx(d_.group_id) + "; fz_row < " + lit(k_.rows()) + "; fz_row += " +
         idx(d_.num_groups) + ") {\n";
    s += decompose(dims_where(1), "fz_row", "    ");
    const std::string inner_loop = "    for (fz_idx fz_j = " + idx("fz_lid") + "; fz_j < " + lit(len) + "; fz_j += " + lit(G) + ") {\n";
    std::vector<std::string> names;
    for (size_t r = 0; r < k_.reductions.size(); ++r) {
      const Reduction& red = k_.reductions[r];
      const std::string a = "fz_a" + std::to_string(r), fn = combiner_fn(red.combiner);
      s += "    float " + a + " = " + combiner_identity(red.combiner) + ";\n" + inner_loop;
      s += decompose(dims_where(2), "fz_j", "      ");
      s += emit_exprs({red.body}, true, "      ", names);
      s += "      " + a + " = " + fn + "(" + a + ", " + names[red.body] + ");\n    }\n";
      s += d_.group_reduce(a, fn, "fz_red", G);
      s += "    float fz_r" + std::to_string(r) + " = " + a + (red.mean ? " / " + fz_float_literal(static_cast<double>(len)) : "") + ";\n";
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
    for (size_t i = 1; i < k_.opaque_outputs.size(); ++i)
      if (k_.opaque_outputs[i] >= 0) throw Unsupported(d_.name, n.label() + ": op " + n.op_type + " with more than one output");
    static const std::set<std::string> copies = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"};
    const std::string& t = n.op_type;
    std::string body;
    if (t == "Gather") body = gather(n, out);
    else if (t == "Concat") body = concat(n, out);
    else if (t == "MaxPool" || t == "AveragePool") body = pool(n, out);
    else if (t == "GlobalAveragePool" || t == "GlobalMaxPool") body = global_pool(n, out);
    else if (copies.count(t)) body = "    " + copy(in_buf(0), "fz_o", out, "fz_o") + "\n";
    else if (t == "Transpose") body = transpose(n, out);
    else if (t == "Expand") body = broadcast_copy(out);
    else if (t == "Cast" && !dtype_is_float(dtype_of(in_buf(0))) && !dtype_is_float(dtype_of(out))) body = int_cast(out);
    else if (auto* def = lookup_op(t); def && def->scalar) body = elementwise(n, *def->scalar, out);
    else throw Unsupported(d_.name, n.label() + ": op " + t + " has no GPU kernel (opaque ops supported: Gather, Concat, "
                           "MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool, copies/views, element-wise)");
    return d_.kernel_begin(h_) + "  " + grid_loop("fz_o", opaque_total()) + body + "  }\n}\n";
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
  // An element-wise op the fuser left opaque (non-f32 dtypes): broadcast loads converted to
  // float, the op's bound expression, a converting store (integers exact up to 2^24).
  std::string elementwise(const Node& n, const ScalarRule& rule, int out) const {
    const Shape& os = buffer(out).shape;
    const bool int_math = dtype_is_int(dtype_of(in_buf(0)));
    ExprNode e;
    e.kind = ExprKind::op;
    e.op = lookup_op(n.op_type);
    e.bound = bind_scalar(rule, n, int_math);
    std::string s = out_coords(os);
    std::vector<std::string> ops;
    for (size_t i = 0; i < k_.opaque_inputs.size(); ++i) {
      if (k_.opaque_inputs[i] < 0) {
        ops.emplace_back();
        continue;
      }
      const int b = k_.opaque_inputs[i];
      s += "    float fz_x" + std::to_string(i) + " = " + load_of(b, coords_offset(bcast_strides(b, os))) + ";\n";
      ops.push_back("fz_x" + std::to_string(i));
    }
    return s + "    " + store_of(out, "fz_o", op_expression(e, ops, d_)) + "\n";
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
    s += "    fz_idx fz_k = " + d_.to_index(it, d_.element(slot(ind), "fz_m")) + ";\n";
    // Negative indices count from the end (ONNX); out-of-range ones are clamped so a bad index
    // cannot read outside the buffer.
    s += "    if (fz_k < " + lit(0) + ") fz_k += " + lit(dim) + ";\n";
    s += "    fz_k = fz_k < " + lit(0) + " ? " + lit(0) + " : (fz_k >= " + lit(dim) + " ? " + lit(dim - 1) + " : fz_k);\n";
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
  std::string pool(const Node& n, int out) const {
    const int x = in_buf(0);
    const Shape& xs = buffer(x).shape;
    const Shape& os = buffer(out).shape;
    const int nd = static_cast<int>(xs.size()) - 2;
    if (nd < 1 || nd > 3 || os.size() != xs.size()) throw Unsupported(d_.name, n.label() + ": pooling needs 1-3 spatial dims");
    if (n.attr_i("storage_order", 0) != 0) throw Unsupported(d_.name, n.label() + ": storage_order=1");
    const bool is_max = n.op_type == "MaxPool";
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
    s += "    float fz_acc = " + std::string(is_max ? "(-fz_inf())" : "0.0f") + ";\n    int fz_cnt = 0;\n    int fz_pad = 0;\n";
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
    s += ind + "  float fz_v = " + load_of(x, "fz_nc * " + lit(in_sz) + off) + ";\n";
    s += ind + "  fz_acc = " + (is_max ? "fz_max(fz_acc, fz_v)" : "fz_acc + fz_v") + ";\n" + ind + "  fz_cnt += 1;\n";
    s += ind + "} else if (" + padcond + ") {\n" + ind + "  fz_pad += 1;\n" + ind + "}\n";
    for (int i = nd - 1; i >= 0; --i) {
      ind.resize(ind.size() - 2);
      s += ind + "}\n";
    }
    if (!is_max) s += "    fz_acc = fz_acc / " + d_.cast("float", include_pad ? "fz_cnt + fz_pad" : "fz_cnt") + ";\n";
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

std::string op_expression(const ExprNode& e, const std::vector<std::string>& operands, const Dialect& d) {
  if (!e.op || !e.op->scalar) throw Error("codegen", "expression node without an element-wise op");
  const ScalarRule& r = *e.op->scalar;
  // e.bound.expr already has variadic folding and absent operands (as literals) applied.
  std::string ex = substitute(
      e.bound.expr,
      [&](int k) -> std::string {
        if (k >= static_cast<int>(operands.size()) || operands[k].empty())
          throw Error("codegen", "op " + e.op->name + " uses operand " + std::to_string(k) + ", which is absent");
        return operands[k];
      },
      [&](const std::string& p) -> std::string {
        for (size_t i = 0; i < r.params.size(); ++i)
          if (r.params[i].first == p) return fz_float_literal(i < e.bound.params.size() ? e.bound.params[i] : r.params[i].second);
        throw Error("codegen", "op " + e.op->name + " expression uses unknown parameter '" + p + "'");
      });
  return "(" + rename_intrinsics(ex, d) + ")";
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

std::string Dialect::group_reduce(const std::string& v, const std::string& comb, const std::string& red, int64_t group_size) const {
  // Tree over shared memory; the final read is followed by a barrier so the array can be reused.
  std::string s = "    " + red + "[fz_lid] = " + v + ";\n    " + barrier + "\n";
  s += "    for (int fz_w = " + std::to_string(group_size / 2) + "; fz_w > 0; fz_w >>= 1) {\n";
  s += "      if (fz_lid < fz_w) " + red + "[fz_lid] = " + comb + "(" + red + "[fz_lid], " + red + "[fz_lid + fz_w]);\n";
  s += "      " + barrier + "\n    }\n";
  s += "    " + v + " = " + red + "[0];\n    " + barrier + "\n";
  return s;
}

std::string Dialect::matmul_config(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t& work_items) const {
  work_items = batch * ceil_div(m, matmul_tile_m) * ceil_div(n, matmul_tile_n);
  return "";
}

LaunchDims launch_dims(const KernelSpec& k, const Plan& p, const Dialect& d) { return Emitter(k, p, d).launch(); }

std::string emit_kernel(const KernelSpec& k, const Plan& p, const Dialect& d) { return Emitter(k, p, d).emit(); }

}  // namespace fusor
