// The shared kernel emitter (see codegen.h for the generated-code contract): setup, loop and
// contraction kernels; the free functions of codegen.h (row kernels: codegen_rows.cpp).
#include "backends/codegen_emitter.h"
#include "ir/kernel_rewrite.h"
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>

namespace fusor::codegen_detail {

std::string Emitter::emit() {
  std::string src = d_.prelude(h_);
  if (typed_) src += d_.typed_helpers(h_);
  src += std::string("#define fz_idx ") + (h_.index64 ? d_.int64_type : "int") + "\n";
  src += "#define FZ_KERNEL_NAME " + (d_.entry_named ? h_.name : std::string("fz_kernel")) + "\n#define FZ_GROUP_SIZE " + std::to_string(h_.group_size) + "\n";
  src += "#define fz_add(a, b) ((a) + (b))\n#define fz_mul(a, b) ((a) * (b))\n";
  std::string params = d_.function_params(h_), args = d_.function_args(h_);
  if (!params.empty()) src += "#define FZ_PARAMS " + params + "\n#define FZ_ARGS " + args + "\n";
  src += d_.declare_buffers(h_);
  if (k_.matmul || k_.conv) return src + emit_contraction();
  if (k_.kind == FusionKind::opaque) return src + emit_opaque();
  if (!k_.dots.empty() && (k_.reduce_axes.empty() || k_.kind != FusionKind::input)) fail("inline contractions outside a row kernel");
  for (size_t j = 0; j < k_.dots.size(); ++j)
    src += prologue_function("d" + std::to_string(j) + "a", k_.dots[j].mm.a_pre) +
           prologue_function("d" + std::to_string(j) + "b", k_.dots[j].mm.b_pre);
  if (k_.reduce_axes.empty()) return src + emit_loop();
  return src + emit_rows();
}

const Buffer& Emitter::buffer(int b) const {
  if (b < 0 || b >= static_cast<int>(p_.buffers.size())) fail("buffer id " + std::to_string(b) + " out of range");
  return p_.buffers[b];
}

std::string Emitter::lit(int64_t v) const {
  // A value a 32-bit index cannot hold (an attribute like LRN's size 2^62, EyeLike's k = INT64_MIN)
  // would be a compile error deep in the generated source: the kernel is refused (Unsupported),
  // so its nodes run on the host, which computes them in 64 bits.
  if (!h_.index64 && (v > INT32_MAX || v < INT32_MIN))
    throw Unsupported(d_.name, "kernel '" + k_.name + "': constant " + std::to_string(v) + " does not fit the kernel's 32-bit index type");
  std::string s = std::to_string(v) + (h_.index64 ? d_.int64_suffix : "");
  return v < 0 ? "(" + s + ")" : s;
}

std::string Emitter::store_of(int b, const std::string& off, const std::string& v) const {
  return d_.element(slot(b), off) + " = " + d_.from_float(dtype_of(b), v) + ";";
}

std::string Emitter::typed_store(int b, const std::string& off, const std::string& v) const {
  return d_.element(slot(b), off) + " = " + d_.store_value(dtype_of(b), v) + ";";
}

std::string Emitter::local(DType t) const {
  const std::string ct = d_.compute_type(t);
  return (ct == "float" || ct == "double" ? d_.value_qualifier : std::string()) + ct + " ";
}

namespace {
// The plan position of the kernel named `name`: the fusion pass names kernel i "k<i>_<kind>",
// so the number is read off the name and checked; any other name is searched for.
int kernel_position(const Plan& p, const std::string& name) {
  if (name.size() > 1 && name[0] == 'k') {
    size_t i = 0, at = 1;
    while (at < name.size() && at < 12 && std::isdigit(static_cast<unsigned char>(name[at]))) i = i * 10 + static_cast<size_t>(name[at++] - '0');
    if (at > 1 && i < p.kernels.size() && p.kernels[i].name == name) return static_cast<int>(i);
  }
  int found = 0;
  for (size_t i = 0; i < p.kernels.size(); ++i)
    if (p.kernels[i].name == name) found = static_cast<int>(i);
  return found;
}
}  // namespace

void Emitter::setup() {
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
  // The kernel's plan position names it in the status word (index_error_code), so only
  // index-checking kernels need it: the plan's own kernel by address; a Vulkan window piece or
  // narrowed copy (vk_windows.h) under its kernel's name, by that name. (Comparing every
  // kernel's name for every kernel was quadratic: 10,000 kernels spent 1.5 s here.)
  const KernelSpec* first = p_.kernels.data();
  if (std::less_equal<const KernelSpec*>()(first, &k_) && std::less<const KernelSpec*>()(&k_, first + p_.kernels.size()))
    h_.kernel_index = static_cast<int>(&k_ - first);
  else if (h_.status_slot >= 0)
    h_.kernel_index = kernel_position(p_, k_.name);
  for (auto& e : k_.expr) note_type(e.dtype), note_type(e.math);
  // A float-class Pow in double where the dialect can (Dialect::float_pow_in_double).
  if (d_.float_pow_in_double) {
    auto float_class = [](DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; };
    auto is_pow = [&](const ExprNode& e) { return e.kind == ExprKind::op && e.op && e.op->name == "Pow" && float_class(e.math); };
    for (const ExprNode& e : k_.expr) h_.float_pow = h_.float_pow || is_pow(e);
    auto prologues = [&](const MatMulDesc& m) {
      for (const auto* pre : {&m.a_pre, &m.b_pre}) h_.float_pow = h_.float_pow || (*pre && is_pow((*pre)->op));
    };
    if (k_.matmul) prologues(*k_.matmul);
    for (const InlineDot& d : k_.dots) prologues(d.mm);
    // Opaque kernels that print pow: Pow itself, LpPool's |x|^p and LRN's power (as CUDA's fz_powf).
    if (k_.kind == FusionKind::opaque && k_.node >= 0 && (node().op_type == "Pow" || node().op_type == "LpPool" || node().op_type == "LRN") &&
        !k_.opaque_inputs.empty() && k_.opaque_inputs[0] >= 0)
      h_.float_pow = h_.float_pow || float_class(dtype_of(k_.opaque_inputs[0]));
    if (h_.float_pow) note_type(DType::f64);
  }
  // GridSample computes its coordinates and sum in double with 64-bit tap indices, as ref.
  if (k_.kind == FusionKind::opaque && k_.node >= 0 && node().op_type == "GridSample") note_type(DType::f64), note_type(DType::i64);
  // Resize of float data sums in double where the dialect has doubles (Emitter::resize).
  if (k_.kind == FusionKind::opaque && k_.node >= 0 && node().op_type == "Resize" && d_.has_f64 && !k_.opaque_inputs.empty() &&
      k_.opaque_inputs[0] >= 0 && dtype_is_float(dtype_of(k_.opaque_inputs[0])))
    note_type(DType::f64);
  // CumSum sums fp32 / fp16 / bf16 in double, as ref (codegen_opaque.cpp cumsum); integer ones
  // need no doubles (a device without shaderFloat64 keeps them).
  if (k_.kind == FusionKind::opaque && k_.node >= 0 && node().op_type == "CumSum" && !k_.opaque_inputs.empty() &&
      k_.opaque_inputs[0] >= 0) {
    const DType xt = dtype_of(k_.opaque_inputs[0]);
    if (xt == DType::f32 || xt == DType::f16 || xt == DType::bf16) note_type(DType::f64);
  }
  // Views over space.
  for (auto& l : k_.loads) views_.push_back(&l.view);
  for (auto& o : k_.outputs) views_.push_back(&o.view);
  for (auto& d : k_.dots) views_.push_back(&d.a_at), views_.push_back(&d.b_at);  // dot j: 2j, 2j + 1 after the outputs
  if (k_.row_product) views_.push_back(&k_.row_product->b_at), views_.push_back(&k_.row_product->c_at);  // then B, C
  for (auto* v : views_)
    if (v->shape != k_.space || v->strides.size() != k_.space.size())
      fail("view " + shape_str(v->shape) + " does not match the kernel space " + shape_str(k_.space));
  coalesce();
  // Index width: any element count or reachable offset near 2^31 needs 64-bit math.
  int64_t reach = shape_numel(k_.space);
  for (auto* v : views_) reach = std::max(reach, view_extent(*v));
  for (int b : binds) reach = std::max(reach, shape_numel(buffer(b).shape));
  if (k_.matmul) reach = std::max({reach, view_extent(k_.matmul->a), view_extent(k_.matmul->b)});
  for (auto& d : k_.dots) reach = std::max({reach, view_extent(d.mm.a), view_extent(d.mm.b)});
  if (const auto& rp = k_.row_product) {  // the last k / n the product's loops reach
    reach = std::max(reach, view_extent(rp->b_at) + (k_.space.back() - 1) * rp->b_sk + (rp->n - 1) * rp->b_sn + 1);
    reach = std::max(reach, view_extent(rp->c_at) + (rp->n - 1) * rp->c_sn + 1);
  }
  h_.index64 = reach > kIndex32Limit;
  // Launch geometry.
  const int64_t total = shape_numel(k_.space);
  if (k_.matmul) {
    const auto& m = *k_.matmul;
    launch_.group_size = d_.matmul_threads(m.m);
    launch_.groups = 0;
    if (total > 0) matmul_macros_ = d_.matmul_config(total / (m.m * m.n), m.m, m.n, m.k, launch_.groups);
    matmul_items_ = launch_.groups;
  } else if (k_.conv) {
    launch_.group_size = d_.conv_group_size;
    launch_.groups = ceil_div(total, launch_.group_size);
    if (total > 0) conv_macros_ = d_.conv_config(*k_.conv, launch_.groups);
  } else if (k_.kind == FusionKind::opaque) {
    launch_.group_size = kDefaultGroup;
    launch_.groups = ceil_div(opaque_total(), kDefaultGroup);
  } else if (!k_.reduce_axes.empty() && (thread_rows_ = thread_rows_fit())) {
    launch_.group_size = kDefaultGroup;
    launch_.groups = ceil_div(k_.rows(), kDefaultGroup);
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
  // A contraction's K loop counts against the device's loop limit like a streamed row (lavapipe
  // would sum a prefix of K): past it the kernel is refused and its nodes run on the host.
  if ((k_.matmul || k_.conv) && total > 0)
    check_loop_budget("kernel '" + k_.name + "' (" + (k_.matmul ? "MatMul" : "Conv") + " K loop)",
                      d_.contraction_loop_trips(k_, launch_.groups));
  // A grid-stride loop adds groups * group_size (x the unroll) to an index below `reach`: 32-bit
  // indices only while that sum stays below 2^31 (CUDA's 2^20 groups step by up to 2^30).
  if (reach + launch_.groups * launch_.group_size * std::max<int64_t>(unroll_, 1) >= (int64_t{1} << 31)) h_.index64 = true;
  h_.group_size = launch_.group_size;
  choose_row_vectors();
  choose_dot_vectors();
}

// An inline dot whose B steps along K with unit stride (attention's keys read a key row per
// thread: fp32 / bf16 through their operand prologue) reads it 4 elements at a time where every
// thread's first element is 4-aligned and the dialect has 4-wide views: a quarter of the load
// instructions, each thread's own row being scattered from its neighbours'. Same terms, same
// order: the same bits as the scalar loop. By default such products stay their own kernels (the
// fusion pass inlines N-contiguous keys only: break-even on the H200, twenty-second session),
// so this runs with FUSOR_INLINE_DOT=1.
void Emitter::choose_dot_vectors() {
  dot_vec_.assign(k_.dots.size(), 0);
  for (size_t j = 0; j < k_.dots.size(); ++j) {
    const InlineDot& d = k_.dots[j];
    const size_t v = k_.loads.size() + k_.outputs.size() + 2 * j + 1;
    const int b = d.mm.b_buffer;
    if (d.b_sk != 1 || d.mm.k % 4 != 0 || d.mm.dequant_b || views_[v]->offset % 4 != 0) continue;
    bool ok = true;
    for (const CDim& g : dims_) ok = ok && g.strides[v] % 4 == 0;
    if (!ok || !d_.row_vector_ok(slot(b), dtype_of(b), views_[v]->offset)) continue;
    dot_vec_[j] = 1;
    h_.bindings[slot(b)].row_vector = true;
  }
}

void Emitter::choose_row_vectors() {
  row_vec_.assign(views_.size(), 0);
  if (thread_rows_) return;  // a thread's elements are its own row's, not a group's 4-wide slices
  const int64_t per = k_.row_registers, G = launch_.group_size;
  if (k_.reduce_axes.empty() || k_.matmul || k_.conv || k_.kind == FusionKind::opaque || per <= 0 || per % 4 != 0 ||
      k_.row_length() != per * G)
    return;
  int inner = -1;  // the innermost coalesced reduced dim
  for (size_t g = 0; g < dims_.size(); ++g)
    if (dims_[g].reduced) inner = static_cast<int>(g);
  if (inner < 0 || dims_[inner].size % 4 != 0) return;
  const size_t nl = k_.loads.size();
  for (size_t v = 0; v < nl + k_.outputs.size(); ++v) {  // not the dots' views
    const bool load = v < nl;
    if (load ? !k_.load_walks_row(static_cast<int>(v)) || k_.loads[v].gathered() : k_.outputs[v - nl].per_row) continue;
    const int b = load ? k_.loads[v].buffer : k_.outputs[v - nl].buffer;
    bool ok = dims_[inner].strides[v] == 1 && views_[v]->offset % 4 == 0;
    for (size_t g = 0; ok && g < dims_.size(); ++g) ok = static_cast<int>(g) == inner || dims_[g].strides[v] % 4 == 0;
    if (!ok || !d_.row_vector_ok(slot(b), dtype_of(b), views_[v]->offset)) continue;
    row_vec_[v] = 1;
    row_vec_any_ = true;
    h_.bindings[slot(b)].row_vector = true;
  }
}

// Rows of at most kThreadRowMax elements, at least kThreadRowMin of them: a thread per row.
// Not with the row kernels' cross-thread forms (the online softmax pair, a row product, inline
// dots), which assume a group per row.
bool Emitter::thread_rows_fit() const {
  constexpr int64_t kThreadRowMax = 16, kThreadRowMin = 1024;
  const int64_t len = k_.row_length();
  // A resident row is then whole in each thread: len values per kept load / value, within the
  // budget ir/ sized for a group per row (kernel_rewrite.h), or registers would spill.
  const int64_t kept = static_cast<int64_t>(k_.register_loads.size() + k_.register_values.size());
  if (k_.row_registers > 0 && len * kept > kRowRegisterBudget) return false;
  return len >= 1 && len <= kThreadRowMax && k_.rows() >= kThreadRowMin && !k_.row_product && k_.dots.empty() && !online_softmax();
}

int64_t Emitter::opaque_total() const {
  // Every generated opaque kernel writes its output 0; an op whose output 0 the model omits
  // (RNN / GRU / LSTM with only Y_h) has none and runs on the host, like an op without a kernel.
  // TopK runs a thread per input element (it ranks each; either output may be omitted).
  if (k_.node >= 0 && node().op_type == "TopK") return shape_numel(buffer(in_buf(0)).shape);
  if (k_.node >= 0 && is_scatter_op(node().op_type) &&
      !k_.opaque_outputs.empty() && k_.opaque_outputs[0] >= 0)
    return scatter_plan(node()).threads;  // a thread per output element, or per owned line
  if (k_.node >= 0 && (node().op_type == "CumSum" || node().op_type == "CumProd") && !k_.opaque_outputs.empty() &&
      k_.opaque_outputs[0] >= 0)
    if (const int64_t lines = cumsum_lines(node())) return lines;  // a thread per line
  if (k_.opaque_outputs.empty() || k_.opaque_outputs[0] < 0)
    throw Unsupported(d_.name, node().label() + ": op " + node().op_type + " without its output 0 has no GPU kernel");
  return shape_numel(buffer(k_.opaque_outputs[0]).shape);
}

void Emitter::coalesce() {
  const size_t nv = views_.size();
  for (size_t d = 0; d < k_.space.size(); ++d) {
    const bool red =
        std::find(k_.reduce_axes.begin(), k_.reduce_axes.end(), static_cast<int>(d)) != k_.reduce_axes.end();
    if (k_.space[d] == 1) continue;
    bool merge = !dims_.empty() && dims_.back().reduced == red;
    for (size_t v = 0; merge && v < nv; ++v) merge = dims_.back().strides[v] == views_[v]->strides[d] * k_.space[d];
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

std::string Emitter::decompose(const std::vector<int>& which, const std::string& lin, const std::string& ind) const {
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

std::string Emitter::offset(size_t v, bool have_reduced) const {
  std::string s = d_.view_offset(v, lit(views_[v]->offset), views_[v]->offset);
  for (size_t g = 0; g < dims_.size(); ++g) {
    const int64_t st = dims_[g].strides[v];
    if (st == 0 || (dims_[g].reduced && !have_reduced)) continue;
    std::string t = "c" + std::to_string(g) + sfx_ + (st == 1 ? "" : " * " + lit(st));
    s += (s.empty() ? "" : " + ") + t;
  }
  return s.empty() ? lit(0) : s;
}

std::string Emitter::load_offset(int node, bool have_reduced) const {
  const ExprNode& e = k_.expr[node];
  const Load& l = k_.loads[e.load];
  std::string s = offset(e.load, have_reduced);
  if (l.gathered()) s += " + fz_g" + std::to_string(node) + sfx_ + (l.gather_stride == 1 ? "" : " * " + lit(l.gather_stride));
  return s;
}

std::string Emitter::emit_exprs(const std::vector<int>& roots, bool have_reduced, const std::string& ind,
                                std::vector<std::string>& names, bool keep) const {
  const int n = static_cast<int>(k_.expr.size());
  if (!keep || static_cast<int>(names.size()) != n) names.assign(n, "");
  const std::vector<char> need = needed(roots, &names);
  std::string s;
  for (int i = 0; i < n; ++i) {
    if (!need[i] || !names[i].empty()) continue;
    const ExprNode& e = k_.expr[i];
    const std::string v = "v" + std::to_string(i) + sfx_;
    switch (e.kind) {
      case ExprKind::constant:
        names[i] = typed_literal(d_, e.dtype, e.value, e.ivalue);
        break;
      case ExprKind::red_ref:
        if (e.red < 0 || e.red >= static_cast<int>(k_.reductions.size())) fail("red_ref to a missing reduction");
        names[i] = "fz_r" + std::to_string(e.red);
        break;
      case ExprKind::acc:
        if (!k_.matmul && !k_.conv) fail("acc used outside a contraction kernel");
        names[i] = convert_value(d_, DType::f32, e.dtype, "acc", true);  // fp32 accumulator -> the product's dtype
        break;
      case ExprKind::dot:
        names[i] = v;
        s += emit_dot(e, v, have_reduced, ind);
        break;
      case ExprKind::load: {
        if (e.load < 0 || e.load >= static_cast<int>(k_.loads.size())) fail("load index out of range");
        names[i] = v;
        // Only inside a row pass's loop (have_reduced): fz_t is its element slot.
        const int cache = have_reduced && e.load < static_cast<int>(row_cache_.size()) ? row_cache_[e.load] : 0;
        const std::string cl = "fz_cl" + std::to_string(e.load) + "[fz_t]";
        if (cache == 2) {  // read by an earlier pass of this row: from registers
          s += ind + local(e.dtype) + v + " = " + cl + ";\n";
          break;
        }
        const int lb = k_.loads[e.load].buffer;
        if (k_.loads[e.load].gathered()) {
          // ONNX Gather's index: negative counts from the end; outside [-dim, dim) sets the
          // status word and reads a clamped row. A 64-bit index saturates before a 32-bit
          // fz_idx holds it, so 2^40 stays out of range instead of wrapping into it.
          if (e.args.size() != 1 || e.args[0] < 0 || e.args[0] >= i) fail("gathered load without its index");
          const DType it = k_.expr[e.args[0]].dtype;
          if (it != DType::i32 && it != DType::i64) fail("gathered load with a non-integer index");
          std::string iv = names[e.args[0]];
          if (it == DType::i64 && !h_.index64)
            iv = "fz_min(fz_max(" + iv + ", " + d_.int_literal(it, -2147483648LL) + "), " + d_.int_literal(it, 2147483647) + ")";
          const std::string g = "fz_g" + std::to_string(i) + sfx_;
          s += ind + "fz_idx " + g + " = " + idx(iv) + ";\n" + fix_index(g, k_.loads[e.load].gather_dim, ind);
          s += ind + local(e.dtype) + v + " = " + typed_load(lb, load_offset(i, have_reduced)) + ";\n";
        } else if (have_reduced && e.load < static_cast<int>(row_vec_.size()) && row_vec_[e.load]) {  // a group's first element loads all 4
          const std::string q = "fz_q" + std::to_string(e.load);
          s += ind + "if ((fz_t & 3) == 0) " + q + " = " + d_.row_vector_load(dtype_of(lb), row_vector_at(e.load, lb, offset(e.load, true))) + ";\n";
          s += ind + local(e.dtype) + v + " = " + d_.load_value(dtype_of(lb), q + "[fz_t & 3]") + ";\n";
        } else {
          s += ind + local(e.dtype) + v + " = " + typed_load(lb, offset(e.load, have_reduced)) + ";\n";
        }
        if (cache == 1) s += ind + cl + " = " + v + ";\n", row_cache_[e.load] = 2;
        break;
      }
      case ExprKind::op: {
        // Operands in the op's math dtype; the result converted (rounded, wrapped) to its own.
        std::vector<std::string> ops;
        for (size_t q = 0; q < e.args.size(); ++q) {
          const int a = e.args[q];
          ops.push_back(a >= 0 ? convert_value(d_, k_.expr[a].dtype, operand_dtype(e, q, k_.expr[a].dtype), names[a]) : std::string());
        }
        names[i] = v;
        const bool exact =
            e.math == e.dtype && (e.dtype == DType::f32 || e.dtype == DType::f64 || e.dtype == DType::i32 ||
                                  e.dtype == DType::u32 || e.dtype == DType::i64 || e.dtype == DType::u64);
        std::string ex = prepared_division(e, ops);
        if (ex.empty()) ex = op_expression(e, ops, d_);
        s += ind + local(e.dtype) + v + " = " + convert_value(d_, e.math, e.dtype, ex, !exact) + ";\n";
        break;
      }
    }
  }
  return s;
}

std::string Emitter::grid_loop(const std::string& var, int64_t n) const {
  const std::string g = lit(h_.group_size);
  return "for (fz_idx " + var + " = " + idx(d_.group_id) + " * " + g + " + " + idx(d_.local_id) + "; " + var + " < " +
         lit(n) + "; " + var + " += " + idx(d_.num_groups) + " * " + g + ") {\n";
}

std::string Emitter::emit_loop() {
  raw_copies_ = true;
  std::vector<int> roots;
  for (auto& o : k_.outputs) roots.push_back(o.expr);
  std::vector<std::string> names;
  std::string s = d_.kernel_begin(h_);
  if (unroll_ > 1) {
    // Copy u works on element fz_b + u * G; its index is clamped for the loads (always in
    // range) and its stores are guarded. All loads come before all stores, which is safe
    // for in-place buffers because copies touch distinct elements.
    const int64_t n = shape_numel(k_.space), g = h_.group_size;
    s += "  for (fz_idx fz_b = " + idx(d_.group_id) + " * " + lit(g * unroll_) + " + " + idx(d_.local_id) +
         "; fz_b < " + lit(n) + "; fz_b += " + idx(d_.num_groups) + " * " + lit(g * unroll_) + ") {\n";
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

std::string Emitter::emit_epilogue() const {
  if (!k_.reduce_axes.empty()) fail("a contraction kernel cannot also reduce");
  std::vector<int> roots;
  for (auto& o : k_.outputs) roots.push_back(o.expr);
  std::vector<std::string> names;
  std::string params = d_.function_params(h_), args = d_.function_args(h_);
  std::string s =
      d_.func_qualifier + "void fz_epilogue(" + (params.empty() ? "" : params + ", ") + "float acc, fz_idx fz_i) {\n";
  s += decompose(dims_where(0), "fz_i", "  ") + emit_exprs(roots, true, "  ", names);
  s += emit_stores([](const KernelOutput&) { return true; }, true, "  ", names) + "}\n";
  s += "#define FZ_EPILOGUE(acc, i) fz_epilogue(" + (args.empty() ? "" : args + ", ") + "(acc), (i))\n";
  return s;
}

std::string Emitter::batch_base(const std::string& n, const StridedView& v, size_t nb) const {
  std::string s =
      d_.func_qualifier + "fz_idx fz_" + n + "_base(fz_idx batch) {\n  fz_idx off = " + lit(v.offset) + ";\n";
  for (int i = static_cast<int>(nb) - 1; i >= 0; --i) {
    if (v.strides[i] != 0) s += "  off += (batch % " + lit(k_.space[i]) + ") * " + lit(v.strides[i]) + ";\n";
    s += "  batch = batch / " + lit(k_.space[i]) + ";\n";
  }
  return s + "  return off;\n}\n";
}

// FZ_LOAD_B's body: B's element `off`, through the fused DequantizeLinear when B is a quantized
// weight (MatMulDesc::dequant_b): the op table's load rule printed over q[off] and the scale /
// zero point element (off / inner) % dim (per tensor: 0).
std::string Emitter::load_b(const MatMulDesc& m) const {
  if (!m.dequant_b) return load_of(m.b_buffer, "(off)");
  const MatMulDequant& q = *m.dequant_b;
  if (dtype_of(m.b_buffer) != DType::i8 && dtype_of(m.b_buffer) != DType::u8)
    fail("dequantized B must be int8 or uint8, got " + std::string(dtype_name(dtype_of(m.b_buffer))));
  if (q.op.dtype != DType::f32 || dtype_of(q.scale_buffer) != DType::f32) fail("dequantized B needs a float32 scale");
  const std::string p = q.dim == 1 ? lit(0) : "(((off) / " + lit(q.inner) + ") % " + lit(q.dim) + ")";
  // Operands in the rule's math dtype (float32): int8 -> float is exact.
  const std::vector<std::string> operands = {load_of(m.b_buffer, "(off)"), load_of(q.scale_buffer, p),
                                             q.zp_buffer >= 0 ? load_of(q.zp_buffer, p) : std::string()};
  return op_expression(q.op, operands, d_);
}

// fz_pre_<n>(x): the operand prologue (MatMulDesc::a_pre / b_pre) over a loaded element x
// (float), in its math dtype and rounded to its dtype as the element-wise kernel stores it; a
// function, so the value is one `precise` local (no contraction into the product's fma).
std::string Emitter::prologue_function(const std::string& n, const std::optional<OperandPrologue>& pre) const {
  if (!pre) return "";
  const ExprNode& e = pre->op;
  std::vector<std::string> ops;
  for (size_t q = 0; q < e.args.size(); ++q) {
    const int a = e.args[q];
    if (a < 0) {
      ops.emplace_back();
      continue;
    }
    const ExprNode& in = pre->inputs.at(a);
    ops.push_back(convert_value(d_, in.dtype, operand_dtype(e, q, in.dtype),
                                in.kind == ExprKind::load ? "x" : typed_literal(d_, in.dtype, in.value, in.ivalue)));
  }
  const bool exact = e.math == e.dtype && e.dtype == DType::f32;
  std::string s = d_.func_qualifier + "float fz_pre_" + n + "(float x) {\n";
  s += "  " + local(e.math) + "r = " + convert_value(d_, e.math, e.dtype, op_expression(e, ops, d_), !exact) + ";\n";
  return s + "  return r;\n}\n";
}

std::string Emitter::with_prologue(const std::string& n, const std::optional<OperandPrologue>& pre,
                                   const std::string& load) const {
  return pre ? "fz_pre_" + n + "(" + load + ")" : load;
}

std::string Emitter::emit_contraction() const {
  std::string s;
  if (k_.matmul) {
    const MatMulDesc& m = *k_.matmul;
    if (k_.space.size() < 2 || m.a.shape.size() != k_.space.size() || m.b.shape.size() != k_.space.size())
      fail("matmul views " + shape_str(m.a.shape) + " x " + shape_str(m.b.shape) + " do not match space " +
           shape_str(k_.space));
    const size_t nb = k_.space.size() - 2;
    if (d_.matmul_template.empty()) throw Unsupported(d_.name, "kernel '" + k_.name + "': no matmul template");
    s += define("FZ_M", m.m) + define("FZ_N", m.n) + define("FZ_K", m.k);
    s += define("FZ_BATCH", shape_numel(k_.space) / std::max<int64_t>(1, m.m * m.n));
    s += define("FZ_A_SM", m.a.strides[nb]) + define("FZ_A_SK", m.a.strides[nb + 1]);
    s += define("FZ_B_SK", m.b.strides[nb]) + define("FZ_B_SN", m.b.strides[nb + 1]);
    s += define("FZ_TILES", matmul_items_) + matmul_macros_;
    s += "#define FZ_B_BYTES " + std::to_string(dtype_size(buffer(m.b_buffer).dtype)) + "\n";  // B's element size in memory
    s += prologue_function("a", m.a_pre) + prologue_function("b", m.b_pre);
    s += "#define FZ_LOAD_A(off) " + with_prologue("a", m.a_pre, load_of(m.a_buffer, "(off)")) + "\n";
    s += "#define FZ_LOAD_B(off) " + with_prologue("b", m.b_pre, load_b(m)) + "\n";
    // B's element `off` as stored (an lvalue: the CUDA vector GEMV takes its address for 4-wide
    // loads) and its float kind (1 f32, 2 f16, 3 bf16, 0 other, dequantized or with a prologue:
    // no vector loads).
    if (m.b_plain()) s += "#define FZ_B_ELEM(off) " + d_.element(slot(m.b_buffer), "(off)") + "\n";
    const DType bt = dtype_of(m.b_buffer);
    s += "#define FZ_B_KIND " + std::string(!m.b_plain() ? "0" : bt == DType::f32 ? "1" : bt == DType::f16 ? "2" : bt == DType::bf16 ? "3" : "0") + "\n";
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
  s += define("FZ_TOTAL", shape_numel(k_.space)) + conv_macros_;
  s += "#define FZ_LOAD_X(off) " + load_of(c.x_buffer, "(off)") + "\n";
  s += "#define FZ_LOAD_W(off) " + load_of(c.w_buffer, "(off)") + "\n";
  return s + emit_epilogue() + d_.conv_template;
}

}  // namespace fusor::codegen_detail

namespace fusor {

using codegen_detail::ceil_div;
using codegen_detail::Emitter;
using codegen_detail::is_ident_char;

int gemv_tree_radix() {
  const char* e = std::getenv("FUSOR_GEMV_TREE_RADIX");
  return e && std::strcmp(e, "2") == 0 ? 2 : 4;
}

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
  // 8/16-bit integers computed through float hold exact integers below 2^24: through int, they
  // wrap to the width (a float out of the narrow type's range converted straight is undefined in C).
  if (t == DType::i8 || t == DType::u8 || t == DType::i16 || t == DType::u16) return cast(storage_type(t), cast("int", v));
  return cast(storage_type(t), v);
}
std::string Dialect::to_index(DType t, const std::string& e) const { return cast("fz_idx", e); }
std::string Dialect::cast(const std::string& type, const std::string& e) const { return "((" + type + ")(" + e + "))"; }
std::string Dialect::element(int slot, const std::string& idx) const {
  return "b" + std::to_string(slot) + "[" + idx + "]";
}

std::string Dialect::group_reduce(const std::string& v, const std::string& comb, const std::string& red,
                                  int64_t group_size, const std::string&) const {
  // Tree over shared memory; the final read is followed by a barrier so the array can be reused.
  std::string s = "    " + red + "[fz_lid] = " + v + ";\n    " + barrier + "\n";
  s += "    for (int fz_w = " + std::to_string(group_size / 2) + "; fz_w > 0; fz_w >>= 1) {\n";
  s +=
      "      if (fz_lid < fz_w) " + red + "[fz_lid] = " + comb + "(" + red + "[fz_lid], " + red + "[fz_lid + fz_w]);\n";
  s += "      " + barrier + "\n    }\n";
  s += "    " + v + " = " + red + "[0];\n    " + barrier + "\n";
  return s;
}

std::string Dialect::compensated_mean(const std::string& s, const std::string& c, int64_t len, bool odd) const {
  const auto [n, nl] = mean_count(len);
  return "fz_cmean(" + s + ", " + c + ", " + fz_float_literal(n) + ", " + fz_float_literal(1.0f / n) + ", " + fz_float_literal(nl) +
         (odd ? ", true)" : ", false)");
}

std::string Dialect::pairwise_csum(const std::string& s, const std::string& c, const std::string& red,
                                   const std::string& redc, int64_t n, const std::string& ind) {
  auto q = [](int64_t i, const char* part) { return "fz_q" + std::to_string(i) + part; };
  std::string t;
  for (int64_t i = 0; i < n; ++i)
    t += ind + "float " + q(i, "s") + " = " + red + "[" + std::to_string(i) + "], " + q(i, "c") + " = " + redc + "[" +
         std::to_string(i) + "];\n";
  for (int64_t w = 1; w < n; w *= 2)
    for (int64_t i = 0; i + w < n; i += 2 * w)
      t += ind + "fz_csum2(" + q(i, "s") + ", " + q(i, "c") + ", " + q(i + w, "s") + ", " + q(i + w, "c") + ");\n";
  return t + ind + s + " = " + q(0, "s") + ";\n" + ind + c + " = " + q(0, "c") + ";\n";
}

std::string Dialect::group_reduce_csum(const std::string& s, const std::string& c, const std::string& red,
                                       const std::string& redc, int64_t group_size) const {
  std::string t = "    " + red + "[fz_lid] = " + s + ";\n    " + redc + "[fz_lid] = " + c + ";\n    " + barrier + "\n";
  t += "    for (int fz_w = " + std::to_string(group_size / 2) + "; fz_w > 0; fz_w >>= 1) {\n";
  t += "      if (fz_lid < fz_w) {\n        float fz_ts = " + red + "[fz_lid], fz_tc = " + redc + "[fz_lid];\n";
  t += "        fz_csum2(fz_ts, fz_tc, " + red + "[fz_lid + fz_w], " + redc + "[fz_lid + fz_w]);\n";
  t += "        " + red + "[fz_lid] = fz_ts;\n        " + redc + "[fz_lid] = fz_tc;\n      }\n";
  t += "      " + barrier + "\n    }\n";
  return t + "    " + s + " = " + red + "[0];\n    " + c + " = " + redc + "[0];\n    " + barrier + "\n";
}

namespace {
std::string join_values(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? (i % 16 ? ", " : ",\n  ") : "") + v[i];
  return s;
}
}  // namespace

std::string Dialect::const_array(const std::string& type, const std::string& nm,
                                 const std::vector<std::string>& values) const {
  return "static __device__ const " + type + " " + nm + "[" + std::to_string(values.size()) + "] = {" +
         join_values(values) + "};\n";
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
  if (k.has_gathered_load()) return true;
  if (k.kind != FusionKind::opaque || k.node < 0 || k.node >= static_cast<int>(p.graph.nodes.size())) return false;
  static const std::set<std::string> ops = {"Gather", "GatherElements", "GatherND"};
  const Node& n = p.graph.nodes[k.node];
  if (ops.count(n.op_type) != 0 || codegen_detail::is_scatter_op(n.op_type) || n.op_type == "ReverseSequence") return true;  // sequence_lens checked like indices
  // CumSum's / CumProd's axis computed at run time is checked on the device like an index.
  return (n.op_type == "CumSum" || n.op_type == "CumProd") && n.inputs.size() > 1 && n.inputs[1] >= 0 &&
         !p.graph.values[n.inputs[1]].constant;
}

uint32_t index_error_code(int kernel_index) { return 0x7fffffffu - static_cast<uint32_t>(std::max(kernel_index, 0)); }

std::string index_error_message(const Plan& p, uint32_t status) {
  const size_t ki = status <= 0x7fffffffu ? 0x7fffffffu - status : p.kernels.size();  // index_error_code's inverse
  std::string label = "a kernel", op;  // the opaque node's label and op, when the kernel has one
  if (ki < p.kernels.size() && p.kernels[ki].node >= 0 && p.kernels[ki].node < static_cast<int>(p.graph.nodes.size())) {
    label = p.graph.nodes[p.kernels[ki].node].label();
    op = p.graph.nodes[p.kernels[ki].node].op_type;
  }
  if (ki < p.kernels.size() && p.kernels[ki].kind != FusionKind::opaque) {  // fused Gathers: the word names the kernel
    std::vector<std::string> nodes;
    for (const Load& l : p.kernels[ki].loads)
      if (l.gathered() && std::find(nodes.begin(), nodes.end(), l.gather_node) == nodes.end()) nodes.push_back(l.gather_node);
    for (size_t i = 0; i < nodes.size(); ++i) label = (i == 0 ? "" : label + (i + 1 == nodes.size() ? " or " : ", ")) + nodes[i];
  }
  if (op == "CumSum" || op == "CumProd") return label + ": axis out of range (a run-time axis outside [-rank, rank) was found on the device)";
  if (op == "ReverseSequence") return label + ": sequence_lens out of range (a length outside [0, T] was found on the device)";
  return label + ": index out of range (an index outside [-dim, dim) was found on the device)";
}

LaunchDims launch_dims(const KernelSpec& k, const Plan& p, const Dialect& d) { return Emitter(k, p, d).launch(); }

std::string emit_kernel(const KernelSpec& k, const Plan& p, const Dialect& d) { return Emitter(k, p, d).emit(); }

}  // namespace fusor
