// The shared kernel emitter's row kernels (input fusion: reductions over the innermost axes,
// one group per row, register-resident rows, the online softmax pair, row products) and inline
// dots (KernelSpec::dots, also read by loop kernels). Split from codegen.cpp along that seam;
// the generated-code contract is codegen.h's.
#include "backends/codegen_emitter.h"
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace fusor::codegen_detail {

std::string Emitter::emit_rows() {
  const int64_t G = h_.group_size, len = k_.row_length();
  const bool tr = thread_rows_;  // a thread per row (thread_rows_fit): no group reductions
  // Accumulators: fp32 for fp32/fp16/bf16 reductions, double for float64 (fusion.cpp fuses
  // only float reductions); one shared scratch array per accumulator type.
  bool any_f32 = false, any_f64 = false, any_comp = false;
  for (size_t r = 0; r < k_.reductions.size(); ++r)
    (k_.reductions[r].dtype == DType::f64 ? any_f64 : any_f32) = true, any_comp = any_comp || compensated(r);
  std::string s = tr ? "" : (any_f32 || !any_f64 ? d_.shared_array("float", "fz_red", G) : "") +
                                (any_f64 ? d_.shared_array("double", "fz_redd", G) : "") + (any_comp ? d_.shared_array("float", "fz_redc", G) : "");
  if (k_.row_product) s += d_.shared_array("float", "fz_prow", len) + d_.shared_array("float", "fz_ppart", G);
  s += d_.kernel_begin(h_);
  s += "  int fz_lid = " + d_.cast("int", d_.local_id) + ";\n";
  if (tr)
    s += "  for (fz_idx fz_row = " + idx(d_.group_id) + " * " + lit(G) + " + " + idx("fz_lid") + "; fz_row < " + lit(k_.rows()) +
         "; fz_row += " + idx(d_.num_groups) + " * " + lit(G) + ") {\n";
  else
    s += "  for (fz_idx fz_row = " + idx(d_.group_id) + "; fz_row < " + lit(k_.rows()) + "; fz_row += " + idx(d_.num_groups) + ") {\n";
  s += decompose(dims_where(1), "fz_row", "    ");
  std::vector<int> row_roots, elem_roots;
  for (auto& o : k_.outputs) (o.per_row ? row_roots : elem_roots).push_back(o.expr);
  if (k_.row_product) elem_roots.push_back(k_.row_product->p);
  // Register-resident rows: ir/ decided which loads (KernelSpec::register_loads).
  const bool resident = k_.row_registers > 0;
  const int64_t per_thread = tr && resident ? len : k_.row_registers;  // a thread holds its whole row
  // Streamed rows loop over the row once per reduction and once for the outputs (resident
  // rows are unrolled: no iterations).
  if (!resident)
    check_loop_budget("kernel '" + k_.name + "'", ceil_div(k_.rows(), std::max<int64_t>(1, launch_.groups) * (tr ? G : 1)) *
                                                      static_cast<int64_t>(k_.reductions.size() + 1) * (tr ? len : ceil_div(len, G)));
  if (resident && !tr && (per_thread * G < len || (per_thread - 1) * G >= len)) fail("row_registers does not fit the row");
  for (auto& d : k_.dots)  // each pass may compute a row's products again (at most)
    check_loop_budget("kernel '" + k_.name + "' (inline MatMul)", ceil_div(k_.rows(), std::max<int64_t>(1, launch_.groups)) *
                                                                      static_cast<int64_t>(k_.reductions.size() + 1) *
                                                                      ceil_div(len, G) * d.mm.k);
  row_cache_.assign(k_.loads.size(), 0);
  value_cache_.assign(k_.expr.size(), 0);
  row_names_.assign(k_.expr.size(), "");
  div_prep_.assign(k_.expr.size(), "");
  for (int l : k_.register_loads) {
    if (l < 0 || l >= static_cast<int>(k_.loads.size())) fail("register load out of range");
    row_cache_[l] = 1;
  }
  for (int v : k_.register_values) {
    if (!resident || v < 0 || v >= static_cast<int>(k_.expr.size()) ||
        (k_.expr[v].kind != ExprKind::op && k_.expr[v].kind != ExprKind::dot))
      fail("register value " + std::to_string(v) + " is not an op of a register-resident row");
    value_cache_[v] = 1;
  }
  std::string loop, loop_end = "    }\n";
  if (resident) {
    for (size_t l = 0; l < row_cache_.size(); ++l)
      if (row_cache_[l])
        s += "    " + d_.compute_type(dtype_of(k_.loads[l].buffer)) + " fz_cl" + std::to_string(l) + "[" +
             std::to_string(per_thread) + "];\n";
    for (size_t v = 0; v < value_cache_.size(); ++v)
      if (value_cache_[v])
        s += "    " + d_.compute_type(k_.expr[v].dtype) + " fz_cv" + std::to_string(v) + "[" + std::to_string(per_thread) +
             "];\n";
    const std::string& u = d_.unroll;
    for (size_t v = 0; v < row_vec_.size(); ++v)
      if (row_vec_[v]) {
        const bool load = v < k_.loads.size();
        const int b = load ? k_.loads[v].buffer : k_.outputs[v - k_.loads.size()].buffer;
        s += "    " + d_.row_vector_register(dtype_of(b)) + (load ? " fz_q" : " fz_so") +
             std::to_string(load ? v : v - k_.loads.size()) + ";\n";
      }
    loop = "    " + u + (!u.empty() && u.back() == '\n' ? "    " : "") + "for (int fz_t = 0; fz_t < " + std::to_string(per_thread) + "; ++fz_t) {\n" +
           (tr ? "      fz_idx fz_j = " + idx("fz_t") + ";\n" : row_vec_any_ ? "      fz_idx fz_j = (" + idx("fz_lid") + " + " + idx("fz_t >> 2") + " * " + lit(G) + ") * " + lit(4) +
                               " + " + idx("fz_t & 3") + ";\n"
                         : "      fz_idx fz_j = " + idx("fz_lid") + " + " + idx("fz_t") + " * " + lit(G) + ";\n");
    if (!tr && len % G != 0) loop += "    if (fz_j < " + lit(len) + ") {\n", loop_end += "    }\n";
  } else if (tr) {
    loop = "    for (fz_idx fz_j = " + idx("0") + "; fz_j < " + lit(len) + "; ++fz_j) {\n";
  } else {
    loop = "    for (fz_idx fz_j = " + idx("fz_lid") + "; fz_j < " + lit(len) + "; fz_j += " + lit(G) + ") {\n";
  }
  std::vector<std::string> names;
  const bool online = online_softmax();
  if (online && resident) fail("a register-resident row kernel cannot also take the online softmax pair");
  for (size_t r = 0; r < k_.reductions.size(); ++r) {
    const Reduction& red = k_.reductions[r];
    const bool dbl = red.dtype == DType::f64;
    const DType acc_t = dbl ? DType::f64 : DType::f32;
    const std::string a = "fz_a" + std::to_string(r), fn = combiner_fn(red.combiner), type = dbl ? "double" : "float";
    const std::string ident =
        dbl ? d_.cast("double", combiner_identity(red.combiner)) : combiner_identity(red.combiner);
    if (online && static_cast<int>(r) == k_.online_sum) {
      s += finish_reduction(r, "fz_a" + std::to_string(r), len);  // computed with online_max
      continue;
    }
    s += "    " + local(acc_t) + a + " = " + ident + ";\n";
    const bool comp = compensated(r);
    if (comp) s += "    " + local(acc_t) + a + "c = 0.0f;\n";
    if (online && static_cast<int>(r) == k_.online_max) {
      s += online_softmax_stats(loop, names);
      s += finish_reduction(r, a, len);
      continue;
    }
    // Max / min of a resident row: four independent partials (the unrolled index picks one), so
    // the thread's chain of NaN-checked compares is per_thread / 4 long, not per_thread. Exact:
    // max and min give the same value in any order (only the sign of a zero extreme may differ,
    // as it already could: GLSL / CUDA max(+0, -0) may return either). H200 Vulkan, W2 Softmax:
    // 152.2 -> 141.1 us.
    // FUSOR_ROW_MAX_PARTIALS=1 keeps the single chain (measuring).
    const char* pe = std::getenv("FUSOR_ROW_MAX_PARTIALS");
    const int most = pe && std::strcmp(pe, "1") == 0 ? 1 : 4;
    int parts = 1;
    if (resident && (red.combiner == Combiner::max || red.combiner == Combiner::min))
      while (parts < most && parts * 2 <= per_thread) parts *= 2;
    const std::string slot = parts > 1 ? a + "p[fz_t & " + std::to_string(parts - 1) + "]" : a;
    if (parts > 1) {
      s += "    " + local(acc_t) + a + "p[" + std::to_string(parts) + "];\n";
      for (int p = 0; p < parts; ++p) s += "    " + a + "p[" + std::to_string(p) + "] = " + ident + ";\n";
    }
    s += row_pass({red.body}, loop, loop_end, names, [&](const std::vector<std::string>& nm) {
      const std::string v = convert_value(d_, k_.expr[red.body].dtype, acc_t, nm[red.body]);
      return comp ? "      fz_csum(" + a + ", " + a + "c, " + v + ");\n" : "      " + slot + " = " + fn + "(" + slot + ", " + v + ");\n";
    });
    for (int w = 1; w < parts; w *= 2)  // a pairwise tree over the partials
      for (int p = 0; p + w < parts; p += 2 * w)
        s += "    " + a + "p[" + std::to_string(p) + "] = " + fn + "(" + a + "p[" + std::to_string(p) + "], " + a + "p[" +
             std::to_string(p + w) + "]);\n";
    if (parts > 1) s += "    " + a + " = " + fn + "(" + a + ", " + a + "p[0]);\n";
    if (!tr)  // a thread per row: its accumulator is the row's
      s += comp ? d_.group_reduce_csum(a, a + "c", "fz_red", "fz_redc", G) : d_.group_reduce(a, fn, dbl ? "fz_redd" : "fz_red", G, type);
    s += finish_reduction(r, a, len);
  }
  if (!row_roots.empty()) {
    s += std::string(tr ? "    {\n" : "    if (fz_lid == 0) {\n") + emit_exprs(row_roots, false, "      ", names);
    s += emit_stores([](const KernelOutput& o) { return o.per_row; }, false, "      ", names) + "    }\n";
  }
  if (!elem_roots.empty())
    s += row_pass(elem_roots, loop, loop_end, names, [&](const std::vector<std::string>& nm) {
      std::string st = emit_stores([](const KernelOutput& o) { return !o.per_row; }, true, "      ", nm);
      if (const auto& rp = k_.row_product)  // P as its store would have rounded it, kept for the product
        st += "      fz_prow[fz_j] = " +
              convert_value(d_, rp->p_dtype, DType::f32, convert_value(d_, k_.expr[rp->p].dtype, rp->p_dtype, nm[rp->p], true)) + ";\n";
      return st;
    });
  if (k_.row_product) s += emit_row_product();
  row_cache_.clear();
  value_cache_.clear();
  row_names_.clear();
  div_prep_.clear();
  return s + "  }\n}\n";
}

std::string Emitter::row_pass(const std::vector<int>& roots, const std::string& loop, const std::string& loop_end,
                              std::vector<std::string>& names,
                              const std::function<std::string(const std::vector<std::string>&)>& body) const {
  const std::vector<char> need = needed(roots), inv = row_invariant();
  std::vector<int> hoist;
  for (size_t i = 0; i < need.size(); ++i)
    if (need[i] && inv[i] && (k_.expr[i].kind == ExprKind::op || k_.expr[i].kind == ExprKind::load || k_.expr[i].kind == ExprKind::dot))
      hoist.push_back(static_cast<int>(i));
  // Divisors shared by the row (a Softmax's sum) are prepared once per row (Dialect::div_prep_type).
  std::vector<int> divisors;
  if (!d_.div_prep_type.empty())
    for (size_t i = 0; i < need.size(); ++i) {
      const ExprNode& e = k_.expr[i];
      const int dv = e.kind == ExprKind::op && e.op && e.op->scalar ? e.op->scalar->divisor : -1;
      if (!need[i] || inv[i] || dv < 0 || dv >= static_cast<int>(e.args.size()) || e.math != DType::f32) continue;
      const int a = e.args[dv];
      if (a < 0 || !inv[a] || k_.expr[a].kind == ExprKind::constant || !div_prep_[a].empty()) continue;
      if (std::find(divisors.begin(), divisors.end(), a) == divisors.end()) divisors.push_back(a), hoist.push_back(a);
    }
  if (row_names_.size() != k_.expr.size()) row_names_.assign(k_.expr.size(), "");
  names = row_names_;
  std::string s = emit_exprs(hoist, false, "    ", names, true);
  row_names_ = names;
  for (int a : divisors) {
    div_prep_[a] = "fz_dp" + std::to_string(a);
    s += "    " + d_.div_prep_type + " " + div_prep_[a] + " = fz_div_prep(" +
         convert_value(d_, k_.expr[a].dtype, DType::f32, names[a]) + ");\n";
  }
  // Values an earlier pass kept (KernelSpec::register_values) come from registers; the ones
  // first computed here are kept for the later passes.
  for (size_t v = 0; v < value_cache_.size(); ++v)
    if (value_cache_[v] == 2) names[v] = "fz_cv" + std::to_string(v) + "[fz_t]";
  s += loop + decompose(dims_where(2), "fz_j", "      ");
  s += emit_exprs(roots, true, "      ", names, true);
  for (size_t v = 0; v < value_cache_.size(); ++v)
    if (value_cache_[v] == 1 && !names[v].empty())
      s += "      fz_cv" + std::to_string(v) + "[fz_t] = " + names[v] + ";\n", value_cache_[v] = 2;
  return s + body(names) + loop_end;
}

std::string Emitter::prepared_division(const ExprNode& e, std::vector<std::string> ops) const {
  const int dv = e.op && e.op->scalar ? e.op->scalar->divisor : -1;
  if (dv < 0 || d_.div_prep_type.empty() || e.math != DType::f32 || dv >= static_cast<int>(e.args.size()) ||
      e.args[dv] < 0 || dv >= static_cast<int>(ops.size()))
    return "";
  const size_t at = e.bound.expr.find("fz_div(");
  if (at == std::string::npos || e.bound.expr.find("fz_div(", at + 1) != std::string::npos) return "";
  const int a = e.args[dv];
  const ExprNode& b = k_.expr[a];
  std::string prep;
  const bool fl = b.dtype == DType::f32 || b.dtype == DType::f16 || b.dtype == DType::bf16 || b.dtype == DType::f64;
  if (b.kind == ExprKind::constant && fl) prep = d_.div_prep_literal(static_cast<float>(b.value));
  else if (a < static_cast<int>(div_prep_.size())) prep = div_prep_[a];
  if (prep.empty()) return "";
  ExprNode by = e;
  by.bound.expr.replace(at, 7, "fz_div_by(");
  ops[dv] = prep;
  return op_expression(by, ops, d_);
}

std::vector<char> Emitter::needed(const std::vector<int>& roots, const std::vector<std::string>* named) const {
  const int n = static_cast<int>(k_.expr.size());
  std::vector<char> need(n, 0);
  for (int r : roots) {
    if (r < 0 || r >= n) fail("expression root " + std::to_string(r) + " out of range");
    need[r] = 1;
  }
  for (int i = n - 1; i >= 0; --i)
    // named: already computed; a gathered load reads its index node
    if (need[i] && (k_.expr[i].kind == ExprKind::op || k_.expr[i].kind == ExprKind::load) && !(named && !(*named)[i].empty()))
      for (int a : k_.expr[i].args) {
        if (a < 0) continue;  // absent optional operand: bound.expr holds its literal
        if (a >= i) fail("expression node " + std::to_string(i) + " has operand " + std::to_string(a));
        need[a] = 1;
      }
  return need;
}

std::vector<char> Emitter::row_invariant() const {
  std::vector<char> inv(k_.expr.size(), 0);
  for (size_t i = 0; i < k_.expr.size(); ++i) {
    const ExprNode& e = k_.expr[i];
    switch (e.kind) {
      case ExprKind::constant:
      case ExprKind::red_ref:
        inv[i] = 1;
        break;
      case ExprKind::acc:
        break;
      case ExprKind::dot:
        if (e.dot < 0 || e.dot >= static_cast<int>(k_.dots.size())) fail("dot index out of range");
        inv[i] = !k_.dot_walks_row(e.dot);
        break;
      case ExprKind::load:
        if (e.load < 0 || e.load >= static_cast<int>(k_.loads.size())) fail("load index out of range");
        inv[i] = !k_.load_walks_row(e.load);
        break;
      case ExprKind::op:
        inv[i] = 1;
        for (int a : e.args) inv[i] = inv[i] && (a < 0 || inv[a]);
        break;
    }
  }
  return inv;
}

std::string Emitter::finish_reduction(size_t r, const std::string& a, int64_t len) const {
  const Reduction& red = k_.reductions[r];
  const bool dbl = red.dtype == DType::f64;
  const DType acc_t = dbl ? DType::f64 : DType::f32;
  if (compensated(r)) {  // fz_csum's pair (a, a + "c")
    // An fp16 / bf16 result: the fp32 value rounded to odd, so the store rounds once.
    const bool odd = red.dtype != acc_t;
    const std::string v = red.mean ? d_.compensated_mean(a, a + "c", len, odd) : (odd ? "fz_cfin_odd(" : "fz_cfin(") + a + ", " + a + "c)";
    return "    " + d_.compute_type(red.dtype) + " fz_r" + std::to_string(r) + " = " +
           convert_value(d_, acc_t, red.dtype, v, red.dtype != acc_t) + ";\n";
  }
  std::string val = red.mean ? "fz_div(" + a + ", " + (dbl ? d_.double_literal(static_cast<double>(len))
                                                           : fz_float_literal(static_cast<double>(len))) + ")"
                             : "(" + a + ")";
  return "    " + d_.compute_type(red.dtype) + " fz_r" + std::to_string(r) + " = " +
         convert_value(d_, acc_t, red.dtype, val, red.dtype != acc_t) + ";\n";
}

// fp32 Sum / Mean reductions accumulate compensated (fz_csum: about an ulp from the exact sum,
// as ref's double sums; a constant row's mean exact). Not the online softmax's rescaled sum,
// and float64 accumulators are already double. FUSOR_PLAIN_SUMS=1 sums plainly (measuring only).
bool Emitter::compensated(size_t r) const {
  if (plain_sums_knob()) return false;
  const Reduction& red = k_.reductions[r];
  return red.dtype != DType::f64 && red.combiner == Combiner::sum && !(online_softmax() && static_cast<int>(r) == k_.online_sum);
}

bool Emitter::online_softmax() const {
  const int n = static_cast<int>(k_.reductions.size());
  if (k_.online_max < 0 && k_.online_sum < 0) return false;
  // The flag is ir/'s decision; only re-check that it still fits the spec (an index out of
  // range or a pair that is not Max/Sum would be a bug in a later rewrite).
  if (k_.online_max < 0 || k_.online_sum <= k_.online_max || k_.online_sum >= n ||
      k_.reductions[k_.online_max].combiner != Combiner::max || k_.reductions[k_.online_sum].combiner != Combiner::sum ||
      k_.expr[k_.reductions[k_.online_sum].body].kind != ExprKind::op)
    fail("online softmax reductions " + std::to_string(k_.online_max) + "/" + std::to_string(k_.online_sum) +
         " do not name a Max/Sum pair");
  return true;
}

// One read of the row for both statistics (Milakov & Gimelshein 2018): each thread keeps its
// running max m and s = sum exp(v - m), rescaling s when m grows (one exp per element,
// branch-free); the group then takes the max of the m's, rescales each thread's s to it and
// sums. Specials as the two-pass kernel: a NaN makes both NaN, a +inf makes s NaN
// (exp(inf - inf)), a -inf element adds nothing unless the whole row is -inf, when s is NaN
// (exp(-inf - -inf)).
std::string Emitter::online_softmax_stats(const std::string& inner_loop, std::vector<std::string>& names) const {
  const Reduction& mx = k_.reductions[k_.online_max];
  const ExprNode& ex = k_.expr[k_.reductions[k_.online_sum].body];  // Exp: printed from the op table
  const bool dbl = mx.dtype == DType::f64;
  const DType acc_t = dbl ? DType::f64 : DType::f32;
  const std::string m = "fz_a" + std::to_string(k_.online_max), sum = "fz_a" + std::to_string(k_.online_sum);
  const std::string type = dbl ? "double" : "float", red = dbl ? "fz_redd" : "fz_red";
  auto num = [&](double v) { return dbl ? d_.double_literal(v) : fz_float_literal(v); };
  auto special = [&](const std::string& f) { return dbl ? d_.cast("double", f) : f; };
  auto exp_of = [&](const std::string& x) { return op_expression(ex, {x}, d_); };
  const std::string inf = special("fz_inf()"), nan = special("fz_nan()");
  const int64_t len = k_.row_length();
  std::string s = "    " + local(acc_t) + sum + " = " + num(0.0) + ";\n" + inner_loop;
  s += decompose(dims_where(2), "fz_j", "      ");
  s += emit_exprs({mx.body}, true, "      ", names);
  s += "      " + local(acc_t) + "fz_v = " + convert_value(d_, k_.expr[mx.body].dtype, acc_t, names[mx.body]) + ";\n";
  // Branch-free, one exp per element: exp(-|v - m|) is the new term (v <= m) or the rescale
  // of the old sum (v > m); selects, not branches, so a warp never runs both sides.
  s += "      " + local(acc_t) + "fz_d = fz_v - " + m + ";\n";
  s += "      bool fz_up = fz_d > " + num(0.0) + ";\n";
  s += "      " + local(acc_t) + "fz_e = " + exp_of("fz_up ? -fz_d : fz_d") + ";\n";
  s += "      " + sum + " = fz_v == -" + inf + " ? " + sum + " : (fz_up ? " + sum + " * fz_e + (fz_v < " + inf + " ? " +
       num(1.0) + " : " + nan + ") : " + sum + " + fz_e);\n";
  s += "      " + m + " = fz_up ? fz_v : fz_max(" + m + ", fz_v);\n    }\n";
  s += "    " + local(acc_t) + "fz_mt = " + m + ";\n";
  s += d_.group_reduce(m, "fz_max", red, h_.group_size, type);
  s += "    " + sum + " = " + sum + " * (fz_mt == " + m + " ? " + num(1.0) + " : " + exp_of("fz_mt - " + m) + ");\n";
  s += d_.group_reduce(sum, "fz_add", red, h_.group_size, type);
  if (len > 0) s += "    if (" + m + " == -" + inf + ") " + sum + " = " + nan + ";\n";
  return s;
}

// The row product (KernelSpec::row_product) after the element pass has put the row's P in
// fz_prow: C(row, n) = sum over k ascending of P(k) * B(k, n) in fp32. Threads take columns n
// (coalesced B reads); where the group has at least twice N threads, `parts` groups of N
// threads each sum every parts-th k and thread n adds the parts in order (deterministic).
std::string Emitter::emit_row_product() const {
  const RowProduct& rp = *k_.row_product;
  const int64_t G = h_.group_size, K = k_.row_length(), N = rp.n;
  const int64_t parts = G >= 2 * N ? std::min<int64_t>(G / N, K) : 1;
  const size_t vb = k_.loads.size() + k_.outputs.size() + 2 * k_.dots.size(), vc = vb + 1;
  check_loop_budget("kernel '" + k_.name + "' (row MatMul)", ceil_div(k_.rows(), std::max<int64_t>(1, launch_.groups)) *
                                                               (ceil_div(N, std::max<int64_t>(1, G / parts)) * ceil_div(K, parts) + parts));
  const DType ct = dtype_of(rp.c_buffer);
  const std::string bload = load_of(rp.b_buffer, "fz_pb + fz_k * " + lit(rp.b_sk) + " + fz_n * " + lit(rp.b_sn));
  // fz_ps += P(k) * B(k, n) over k = start + i * step, i < trips, ascending: unrolled (whole
  // up to 64 terms, else 8 at a time) so every B load is issued before the adds wait on it (a
  // rolled loop waits one cache latency per term).
  auto sum_over = [&](const std::string& start, int64_t step, int64_t trips, bool tail, const std::string& ind) {
    const int64_t u = trips <= 64 ? trips : 8;
    const bool partial = trips % u != 0;
    std::string t = ind + "for (int fz_c = 0; fz_c < " + std::to_string(trips) + "; fz_c += " + std::to_string(u) + ") {\n";
    t += ind + "  " + d_.unroll + (!d_.unroll.empty() && d_.unroll.back() == '\n' ? ind + "  " : "") + "for (int fz_u = 0; fz_u < " +
         std::to_string(u) + "; ++fz_u) {\n";
    t += ind + "    fz_idx fz_k = " + start + " + " + idx("fz_c + fz_u") + " * " + lit(step) + ";\n";
    const std::string guard = std::string(partial ? "fz_c + fz_u < " + std::to_string(trips) : "") +
                              (partial && tail ? " && " : "") + (tail ? "fz_k < " + lit(K) : "");
    t += ind + "    " + (guard.empty() ? "" : "if (" + guard + ") ") + "fz_ps = fz_ps + fz_prow[fz_k] * " + bload + ";\n";
    return t + ind + "  }\n" + ind + "}\n";
  };
  auto store = [&](const std::string& v) {
    return typed_store(rp.c_buffer, "fz_pc + fz_n * " + lit(rp.c_sn),
                       convert_value(d_, rp.c_dtype, ct, convert_value(d_, DType::f32, rp.c_dtype, v, true)));
  };
  std::string s = "    " + d_.barrier + "\n    {\n";
  s += "      fz_idx fz_pb = " + offset(vb, false) + ", fz_pc = " + offset(vc, false) + ";\n";
  if (parts == 1) {
    s += "      for (fz_idx fz_n = " + idx("fz_lid") + "; fz_n < " + lit(N) + "; fz_n += " + lit(G) + ") {\n";
    s += "        " + local(DType::f32) + "fz_ps = 0.0f;\n";
    s += sum_over(lit(0), 1, K, false, "        ");
    s += "        " + store("fz_ps") + "\n      }\n";
  } else {
    s += "      if (fz_lid < " + std::to_string(parts * N) + ") {\n";
    s += "        fz_idx fz_n = " + idx("fz_lid % " + std::to_string(N)) + ";\n";
    s += "        " + local(DType::f32) + "fz_ps = 0.0f;\n";
    s += "        fz_idx fz_k0 = " + idx("fz_lid / " + std::to_string(N)) + ";\n";
    s += sum_over("fz_k0", parts, ceil_div(K, parts), K % parts != 0, "        ");
    s += "        fz_ppart[fz_lid] = fz_ps;\n      }\n      " + d_.barrier + "\n";
    s += "      if (fz_lid < " + std::to_string(N) + ") {\n        fz_idx fz_n = " + idx("fz_lid") + ";\n";
    s += "        " + local(DType::f32) + "fz_ps = fz_ppart[fz_lid];\n";
    s += "        for (int fz_q = 1; fz_q < " + std::to_string(parts) + "; ++fz_q) fz_ps = fz_ps + fz_ppart[fz_q * " + std::to_string(N) + " + fz_lid];\n";
    s += "        " + store("fz_ps") + "\n      }\n";
  }
  return s + "    }\n    " + d_.barrier + "\n";
}

// A dot node (KernelSpec::dots): the product's element at this position, summed in fp32 in
// ascending k from the operands as the matmul kernel reads them (prologues included), then
// rounded to the node's dtype as the matmul's store would. The sum is a `precise` local.
std::string Emitter::emit_dot(const ExprNode& e, const std::string& v, bool have_reduced, const std::string& ind) const {
  if (e.dot < 0 || e.dot >= static_cast<int>(k_.dots.size())) fail("dot index out of range");
  const InlineDot& d = k_.dots[e.dot];
  const size_t va = k_.loads.size() + k_.outputs.size() + 2 * static_cast<size_t>(e.dot);
  const std::string j = std::to_string(e.dot), a = v + "a", b = v + "b", q = v + "k", acc = v + "s";
  const std::string la = with_prologue("d" + j + "a", d.mm.a_pre, load_of(d.mm.a_buffer, a + " + " + q + " * " + lit(d.a_sk)));
  const std::string lb = with_prologue("d" + j + "b", d.mm.b_pre, load_of(d.mm.b_buffer, b + " + " + q + " * " + lit(d.b_sk)));
  std::string s = ind + local(DType::f32) + acc + " = 0.0f;\n";
  s += ind + "{\n" + ind + "  fz_idx " + a + " = " + offset(va, have_reduced) + ", " + b + " = " + offset(va + 1, have_reduced) + ";\n";
  // Unrolled up to 64 terms: every operand load issued before the first add waits (the loop
  // was bound by one load latency per term on the H200).
  const std::string u = d.mm.k <= 64 ? d_.unroll : std::string();
  const std::string uind = !u.empty() && u.back() == '\n' ? ind + "  " : "";
  if (e.dot < static_cast<int>(dot_vec_.size()) && dot_vec_[e.dot]) {  // B 4 at a time (choose_dot_vectors)
    const DType bt = dtype_of(d.mm.b_buffer);
    const std::string r = v + "r";
    s += ind + "  " + u + uind + "for (fz_idx " + q + " = " + lit(0) + "; " + q + " < " + lit(d.mm.k) + "; " + q + " += " + lit(4) + ") {\n";
    s += ind + "    " + d_.row_vector_register(bt) + " " + r + " = " +
         d_.row_vector_load(bt, row_vector_at(k_.loads.size() + k_.outputs.size() + 2 * e.dot + 1, d.mm.b_buffer, b + " + " + q)) + ";\n";
    for (int i = 0; i < 4; ++i) {
      const std::string qi = "(" + q + " + " + lit(i) + ")";
      const std::string ai = with_prologue("d" + j + "a", d.mm.a_pre, load_of(d.mm.a_buffer, a + " + " + qi + " * " + lit(d.a_sk)));
      const std::string bi = with_prologue("d" + j + "b", d.mm.b_pre, d_.load_value(bt, r + "[" + std::to_string(i) + "]"));
      s += ind + "    " + acc + " = " + acc + " + " + ai + " * " + bi + ";\n";
    }
    s += ind + "  }\n" + ind + "}\n";
  } else {
    s += ind + "  " + u + uind + "for (fz_idx " + q + " = " + lit(0) + "; " + q + " < " + lit(d.mm.k) + "; ++" + q + ") " + acc + " = " + acc + " + " + la +
         " * " + lb + ";\n" + ind + "}\n";
  }
  return s + ind + local(e.dtype) + v + " = " + convert_value(d_, DType::f32, e.dtype, acc, true) + ";\n";
}

}  // namespace fusor::codegen_detail
