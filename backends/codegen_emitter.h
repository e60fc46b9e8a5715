// The shared emitter's Emitter class (internal to backends/): one KernelSpec -> one kernel
// source. Methods live in codegen.cpp (setup, loop and contraction kernels), codegen_rows.cpp
// (row kernels, inline dots), codegen_opaque.cpp (opaque data movement, pooling, reductions) and codegen_opaque_nn.cpp
// (convolutions, gathers/scatters, padding, ...).
#pragma once
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "backends/codegen.h"
#include "backends/codegen_text.h"

namespace fusor::codegen_detail {

using codegen_text::is_ident_char;
using codegen_text::rename_intrinsics;
using codegen_text::substitute;

// Element counts and offsets above this use 64-bit indices; so does a kernel whose grid-stride
// step (groups * group_size * unroll, Emitter::Emitter) could carry an index past 2^31.
constexpr int64_t kIndex32Limit = (int64_t{1} << 31) - (int64_t{1} << 26);
constexpr int64_t kDefaultGroup = 256;
constexpr int64_t kLoopUnroll = 4;

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
// ScatterElements, its deprecated alias Scatter, and ScatterND: one kernel family (Emitter::scatter).
inline bool is_scatter_op(const std::string& t) { return t == "ScatterElements" || t == "Scatter" || t == "ScatterND"; }
inline int64_t pow2_ceil(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

// Largest element offset (+1) a view can reach; used for the 32/64-bit index decision.
inline int64_t view_extent(const StridedView& v) {
  int64_t hi = v.offset, lo = v.offset;
  for (size_t i = 0; i < v.shape.size(); ++i) {
    if (v.shape[i] == 0) return 0;
    int64_t s = v.strides[i] * (v.shape[i] - 1);
    (s > 0 ? hi : lo) += s;
  }
  return std::max(hi + 1, -lo);
}

// FUSOR_PLAIN_SUMS=1: fp32 sums without their compensation (measuring only; Emitter::compensated).
inline bool plain_sums_knob() {
  const char* e = std::getenv("FUSOR_PLAIN_SUMS");
  return e && e[0] == '1' && e[1] == 0;
}

inline const char* combiner_fn(Combiner c) {
  switch (c) {
    case Combiner::sum:
      return "fz_add";
    case Combiner::prod:
      return "fz_mul";
    case Combiner::max:
      return "fz_max";
    default:
      return "fz_min";
  }
}
inline std::string combiner_identity(Combiner c) {
  switch (c) {
    case Combiner::sum:
      return "0.0f";
    case Combiner::prod:
      return "1.0f";
    case Combiner::max:
      return "(-fz_inf())";
    default:
      return "fz_inf()";
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

  std::string emit();

 private:
  const KernelSpec& k_;
  const Plan& p_;
  const Dialect& d_;
  KernelHeader h_;
  std::map<int, int> slot_;                // buffer -> slot
  std::vector<const StridedView*> views_;  // loads, then outputs, then each dot's a_at and b_at, then a row product's b_at, c_at
  std::vector<CDim> dims_;
  LaunchDims launch_;
  int64_t matmul_items_ = 0;
  mutable std::string globals_;  // global-scope declarations an opaque kernel body needs (const tables)
  int64_t unroll_ = 1;           // loop kernels: elements per thread per iteration
  std::string sfx_;              // suffix of coordinate/value locals (one per unrolled copy)
  // Loop kernels: an output that is a load of its own dtype is stored element to element
  // (storage type, no conversion), so a copy keeps every bit: fp16 NaN payloads went through
  // fp32 registers and came back canonical. (GLSL has no 16-bit locals without the arithmetic
  // extension, so the element is read again at the store; the stores of a thread's unrolled
  // copies touch distinct elements, as emit_loop's loads-before-stores rule already assumes.)
  bool raw_copies_ = false;
  bool raw_copy(int node) const {
    if (!raw_copies_ || node < 0 || k_.expr[node].kind != ExprKind::load) return false;
    for (const KernelOutput& o : k_.outputs)
      if (o.expr == node && dtype_of(o.buffer) == dtype_of(k_.loads[k_.expr[node].load].buffer)) return true;
    return false;
  }
  std::string matmul_macros_, conv_macros_;
  bool typed_ = false;  // some value is an integer or float64: the dialect's typed helpers are emitted
  // Register-resident rows (emit_rows, KernelSpec::register_loads): per load, 0 read from
  // memory, 1 kept but not yet read in this row, 2 read (later passes take fz_cl<load>[fz_t]).
  mutable std::vector<int> row_cache_;
  // Likewise per expr node for KernelSpec::register_values: 0 not kept, 1 kept but not yet
  // computed in this row, 2 computed (later passes take fz_cv<node>[fz_t]).
  mutable std::vector<int> value_cache_;
  // Row kernels: names of the row-invariant values already computed at the row's scope by an
  // earlier pass (a later pass reuses them instead of declaring them again).
  mutable std::vector<std::string> row_names_;
  // Row kernels: per expr node, the local holding fz_div_prep of it (Dialect::div_prep_type)
  // when a row pass divides by that row-invariant value; "" otherwise.
  mutable std::vector<std::string> div_prep_;
  // Register-resident rows read / written 4 elements at a time (choose_row_vectors): per view
  // (loads, then outputs) whether it is; any set puts the 4 elements of a group in one thread
  // (element slot t of thread i is row element (i + (t / 4) * G) * 4 + t % 4).
  std::vector<char> row_vec_;
  bool row_vec_any_ = false;
  // Row kernels of many short rows (thread_rows_fit): each thread reduces whole rows by
  // itself, sequentially, with no shared memory or barrier (one group per row of 5 elements
  // left 31 of 32 threads idle: 600k rows took 4.8 s on lavapipe, 19.7 GB/s on an H100).
  bool thread_rows_ = false;
  bool thread_rows_fit() const;
  // Per inline dot: 1 when its B is read 4 elements at a time along K (choose_dot_vectors).
  std::vector<char> dot_vec_;
  void choose_dot_vectors();

  [[noreturn]] void fail(const std::string& why) const { throw Error("codegen", "kernel '" + k_.name + "': " + why); }

  const Buffer& buffer(int b) const;
  DType dtype_of(int b) const { return buffer(b).dtype; }
  int slot(int b) const { return slot_.at(b); }

  std::string lit(int64_t v) const;
  std::string idx(const std::string& e) const { return d_.cast("fz_idx", e); }
  std::string load_of(int b, const std::string& off) const {
    return d_.to_float(dtype_of(b), d_.element(slot(b), off));
  }
  std::string store_of(int b, const std::string& off, const std::string& v) const;
  // FZ_LOAD_B's body: a float value of B's element `off` (dequantized for MatMulDesc::dequant_b).
  std::string load_b(const MatMulDesc& m) const;
  // The operand prologue's function fz_pre_<n> ("" without one) and a load through it.
  std::string prologue_function(const std::string& n, const std::optional<OperandPrologue>& pre) const;
  std::string with_prologue(const std::string& n, const std::optional<OperandPrologue>& pre, const std::string& load) const;
  // Typed counterparts (expression values in Dialect::compute_type of their dtype).
  std::string typed_load(int b, const std::string& off) const {
    return d_.load_value(dtype_of(b), d_.element(slot(b), off));
  }
  std::string typed_store(int b, const std::string& off, const std::string& v) const;
  // Declaration prefix of a local of dtype t ("precise float ", "int64_t ").
  std::string local(DType t) const;

  void setup();
  // Decides row_vec_ (after setup's launch geometry): f32 views that walk the row along a
  // unit-stride innermost dim of a multiple-of-4 size, every other stride and the offset
  // multiples of 4, the dialect agreeing (row_vector_ok); only when each thread's slots come in
  // whole groups of 4 (row_registers % 4 == 0, row length = row_registers * G).
  void choose_row_vectors();
  // A vectorised view's 4-wide lvalue for the group holding element offset `off`.
  std::string row_vector_at(size_t view, int b, const std::string& off) const {
    return d_.row_vector_element(slot(b), "(" + off + ") >> 2");  // off >= 0: a shift, not a signed division
  }

  int64_t opaque_total() const;
  // Serial loop iterations one thread of opaque node n runs per output (the longest loop nest
  // its body emits: a reduction's count, the axis of ArgMax / CumSum / Softmax, a pooling
  // window, a contraction's K ...; 0 for copies and element-wise bodies).
  int64_t opaque_loop_trips(const Node& n) const;
  // Throws Unsupported when `trips` loop iterations per thread exceed the dialect's
  // max_loop_iterations (what: the loop, for the message).
  void check_loop_budget(const std::string& what, int64_t trips) const;
  std::string emit_dot(const ExprNode& e, const std::string& v, bool have_reduced, const std::string& ind) const;
  std::string emit_row_product() const;

  void coalesce();

  // Declares c<g> for the dims in `which` (outer to inner) from linear index `lin`.
  std::string decompose(const std::vector<int>& which, const std::string& lin, const std::string& ind) const;
  std::vector<int> dims_where(int mode) const {  // 0 all, 1 non-reduced, 2 reduced
    std::vector<int> r;
    for (size_t g = 0; g < dims_.size(); ++g)
      if (mode == 0 || (mode == 1) != dims_[g].reduced) r.push_back(static_cast<int>(g));
    return r;
  }

  // Element offset of view v; `have_reduced` false means reduced coordinates are 0.
  std::string offset(size_t v, bool have_reduced) const;
  // Element offset of expr node `node`, a load: its view's offset, plus for a gathered load
  // (kernel_spec.h Load) the checked index local fz_g<node> that emit_exprs declares times the
  // axis stride.
  std::string load_offset(int node, bool have_reduced) const;

  // Declares locals for every node the roots need, in topological order; names[id] is the
  // text that denotes node id afterwards (a local, a literal, a reduction result or acc).
  // keep: names already set (hoisted by the caller) are used, not re-declared.
  std::string emit_exprs(const std::vector<int>& roots, bool have_reduced, const std::string& ind,
                         std::vector<std::string>& names, bool keep = false) const;
  // e's expression through fz_div_by when e divides by a prepared divisor (a constant, or one
  // in div_prep_); "" otherwise. ops: e's operands as emit_exprs converts them.
  std::string prepared_division(const ExprNode& e, std::vector<std::string> ops) const;
  // Nodes the roots need (transitively), as a mask over k_.expr; with `named`, not below a node
  // that already has a name there (computed earlier, or kept in registers).
  std::vector<char> needed(const std::vector<int>& roots, const std::vector<std::string>* named = nullptr) const;
  // Row kernels: node i's value is the same for every element of a row (constants, reduction
  // results, loads that do not walk a reduced dim, and ops of those).
  std::vector<char> row_invariant() const;

  // Stores of the outputs selected by `pick`.
  template <class Pick>
  std::string emit_stores(Pick pick, bool have_reduced, const std::string& ind,
                          const std::vector<std::string>& names) const {
    std::string s;
    for (size_t o = 0; o < k_.outputs.size(); ++o) {
      if (!pick(k_.outputs[o])) continue;
      const size_t v = k_.loads.size() + o;
      const int b = k_.outputs[o].buffer;
      if (have_reduced && v < row_vec_.size() && row_vec_[v]) {  // the group's 4th element stores all 4
        const std::string q = "fz_so" + std::to_string(o);
        s += ind + q + "[fz_t & 3] = " + d_.row_vector_store_element(dtype_of(b), names[k_.outputs[o].expr]) + ";\n" + ind +
             "if ((fz_t & 3) == 3) " + row_vector_at(v, b, offset(v, true)) + " = " + d_.row_vector_store(dtype_of(b), q) + ";\n";
        continue;
      }
      if (raw_copy(k_.outputs[o].expr)) {
        const int load = k_.expr[k_.outputs[o].expr].load, lb = k_.loads[load].buffer;
        if (dtype_of(lb) == dtype_of(b))
          s += ind + d_.element(slot(b), offset(v, have_reduced)) + " = " +
               d_.element(slot(lb), load_offset(k_.outputs[o].expr, have_reduced)) + ";\n";
        else
          s += ind + typed_store(b, offset(v, have_reduced), names[k_.outputs[o].expr]) + "\n";
        continue;
      }
      s += ind + typed_store(b, offset(v, have_reduced), names[k_.outputs[o].expr]) + "\n";
    }
    return s;
  }

  // "for (fz_idx <var> = <start>; <var> < <n>; <var> += <step>) {"
  std::string grid_loop(const std::string& var, int64_t n) const;

  std::string emit_loop();

  // Input fusion: one group per row (grid-stride over rows), group-wide reductions in order.
  std::string emit_rows();
  // One pass over the row (a reduction's body or the element-wise outputs): row-invariant
  // nodes declared before the loop, the rest inside; `body(names)` appends the per-element
  // statements after the roots' locals.
  std::string row_pass(const std::vector<int>& roots, const std::string& loop, const std::string& loop_end,
                       std::vector<std::string>& names,
                       const std::function<std::string(const std::vector<std::string>&)>& body) const;
  // Declares fz_r<r> from the group-combined accumulator a (mean: divided by len).
  std::string finish_reduction(size_t r, const std::string& a, int64_t len) const;
  // The dtype operand i of op node e is converted to (ir/op_table.h scalar_operand_dtype).
  static DType operand_dtype(const ExprNode& e, size_t i, DType operand) {
    return e.op && e.op->scalar ? scalar_operand_dtype(*e.op->scalar, i, operand, e.math) : e.math;
  }
  // Reduction r accumulates as a compensated fp32 sum (fz_csum's pair fz_a<r>, fz_a<r>c).
  bool compensated(size_t r) const;
  // k_.online_max/online_sum are set (checked against the spec; ir/ decides them).
  bool online_softmax() const;
  // After fz_a<online_max> is declared with the max identity: declares fz_a<online_sum> and
  // fills both, row-combined, from one pass over the row (codegen_rows.cpp says how).
  std::string online_softmax_stats(const std::string& inner_loop, std::vector<std::string>& names) const;

  // ---- contractions: macros + epilogue, then the dialect's template ------------------------

  std::string define(const std::string& nm, int64_t v) const { return "#define " + nm + " " + lit(v) + "\n"; }

  std::string emit_epilogue() const;

  // fz_<n>_base(batch): element offset of one batch of a matmul operand view.
  std::string batch_base(const std::string& n, const StridedView& v, size_t nb) const;

  std::string emit_contraction() const;

  // ---- opaque ops: one thread per output element --------------------------------------------

  const Node& node() const;
  int in_buf(size_t i) const;
  // Copies element `from` of buffer a to `to` of b, converting only when the dtypes differ.
  std::string copy(int a, const std::string& from, int b, const std::string& to) const;

  std::string emit_opaque() const;

  // Declares fz_d<j> (coordinates of fz_o over shape os) and returns offset(st) builders.
  std::string out_coords(const Shape& os) const;
  std::string coords_offset(const std::vector<int64_t>& st) const;
  // Strides of a contiguous input broadcast (NumPy rules) to os; numel-1 inputs are scalars.
  std::vector<int64_t> bcast_strides(int b, const Shape& os) const;

  // Resize from the op table's per-axis taps (resize_table): a weighted sum over the tensor
  // product of each axis' taps, the tables baked into the kernel; axes the op leaves alone
  // (one tap of weight 1 at the same index) are read directly.
  std::string resize(const Node& n, int out) const;

  std::string transpose(const Node& n, int out) const;
  std::string broadcast_copy(int out) const;
  // Integer/bool -> integer/bool without a float round trip, so 64-bit values stay exact.
  std::string int_cast(int out) const;
  // An element-wise op the fuser left opaque: typed like a fused op (broadcast loads in their
  // dtypes, the op in its math dtype, the result converted to the output's dtype).
  std::string elementwise(const Node& n, const ScalarRule& rule, int out) const;

  std::string gather(const Node& n, int out) const;

  std::string concat(const Node& n, int out) const;

  // ONNX MaxPool/AveragePool with the window arithmetic of ir/ops/nn.cpp (make_window): auto_pad,
  // ceil_mode, dilations, count_include_pad counting taps inside the padded input only.
  // MaxPool's optional Indices output `arg` (storage_order 0): the flat index n*C*in + spatial
  // offset of the first maximum (a NaN wins, as pool_core), -1 when no tap is inside the input.
  std::string pool(const Node& n, int out, int arg = -1) const;

  // ---- more opaque ops (semantics: the references in ir/ops/{reduce,shape,nn}.cpp) ----------

  // Compile-time constant of node input i (nullptr when absent or computed at run time).
  const Tensor* const_of(size_t i) const;
  std::vector<int64_t> const_ints(size_t i, const std::string& what) const;
  bool has_in(size_t i) const { return i < k_.opaque_inputs.size() && k_.opaque_inputs[i] >= 0; }
  // A ReduceRule pre/post string with "{0}" -> v, intrinsics renamed by the dialect.
  std::string rule_text(const char* ex, const std::string& v) const;
  // Declares fz_<nm><j> = coordinate j of linear index `lin` over shape s.
  std::string coords(const std::string& nm, const std::string& lin, const Shape& s,
                     const std::string& ind = "    ") const;
  // Index element `off` of an integer (or float, for OneHot) index buffer b -> fz_idx.
  std::string index_of(int b, const std::string& off) const;
  // Wraps a negative index once and clamps into [0, dim) so a bad index cannot read outside.
  // Negative indices count from the end (ONNX); an index outside [-dim, dim) is reported
  // through the status word (the run then fails as on ref) and clamped so no access strays.
  std::string fix_index(const std::string& v, int64_t dim, const std::string& ind = "    ") const;
  std::string is_nan(const std::string& v) const { return "fz_isnan(" + v + ") != 0.0f"; }

  // Reductions the typed path computes exactly: plain combiners over f64 or integer data.
  bool typed_reduce(const Node& n, const ReduceRule& rule) const;
  // The largest (max = true) or smallest value of integer dtype t, as held (u64 by its bits).
  static int64_t int_limit(DType t, bool max);

  // Reduce* with the op's ReduceRule (pre, combiner, mean, post); one thread per output element.
  std::string reduce(const Node& n, const ReduceRule& rule, int out) const;

  // outer x len x inner around one axis (the references' AxisView).
  struct Around {
    int64_t outer = 1, len = 1, inner = 1;
  };
  static Around around(const Shape& s, int64_t axis);

  // First (select_last_index: last) extremum; a NaN counts as the extremum (numpy).
  std::string arg_extremum(const Node& n, int out) const;

  // Hardmax: 1 at the first maximum of the row (NaN wins), else 0; rows as in Softmax.
  std::string hardmax(const Node& n, int out) const;
  // TopK (ir/ops/select.cpp's order: NaN largest, ties by index), one thread per input
  // element: it counts the elements ranked before it along the axis and, ranked below k,
  // writes its value (bit copy) to values[rank] and its position to indices[rank]. len^2 work
  // per slice, so longer axes (kTopKMaxAxis) are refused to the host.
  std::string topk(const Node& n, int values, int indices) const;
  static constexpr int64_t kTopKMaxAxis = 8192;
  // GridSample (ir/ops/grid.cpp), one thread per output element, computed in double as ref.
  std::string grid_sample(const Node& n, int out) const;
  // ReverseSequence (ir/ops/misc.cpp), one thread per output element (a copy).
  std::string reverse_sequence(const Node& n, int out) const;

  std::string cumsum(const Node& n, int out) const;

  // Softmax / LogSoftmax the decomposition left whole (non-f32 storage): max-shifted, per element.
  std::string softmax(const Node& n, int out) const;

  // Conv the fuser left opaque (1-D/3-D, non-f32, bias computed at run time): direct, one thread
  // per output element, window geometry as ir/ops/nn.cpp make_window (no ceil_mode for Conv).
  std::string conv_direct(const Node& n, int out) const;

  // The tap loops Conv and ConvTranspose share: fz_acc starts at the bias (input 2) or 0, adds
  // x[i] * w[k] over c < cg (w's channel stride w_c_stride) and the window k, and is stored.
  // Per spatial dim i, position(i, "<i>", indent) returns the lines defining fz_p<i>, the input
  // position of tap fz_k<i> relative to fz_s<i>, and the condition that it lies inside x.
  std::string window_sum(int x, int w, int out, int64_t cg, int64_t w_c_stride,
                         const std::function<std::pair<std::string, std::string>(int, const std::string&,
                                                                                 const std::string&)>& position) const;

  // ConvTranspose in gather form: output element (b, m, o...) sums, over c in its group and the
  // taps k (in the reference's order c, k0, k1, k2), x[i] * w[k] for the input position
  // i = (o + pb - k*d) / s when that divides exactly and lies inside the input. Geometry as
  // ir/ops/nn.cpp convtranspose_window (pads, output_padding, output_shape, auto_pad).
  std::string conv_transpose(const Node& n, int out) const;

  // LRN as ir/ops/nn.cpp lrn_ref: x / (bias + alpha/size * sum of x^2 over channels
  // [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to [0, C))^beta.
  std::string lrn(const Node& n, int out) const;

  // Slice (starts/ends/axes/steps constant, or the opset < 10 attributes) as ir/ops/shape.cpp
  // slice_view: a strided copy, exact for every dtype.
  std::string slice(const Node& n, int out) const;

  std::string gather_elements(const Node& n, int out) const;

  // GatherND (batch_dims b): out = indices.shape[:-1] + data.shape[b+k:].
  std::string gather_nd(const Node& n, int out) const;

  std::string trilu(const Node& n, int out) const;

  // Pad (constant / reflect / edge / wrap; pads and axes constant; the value may be a buffer).
  std::string pad(const Node& n, int out) const;

  // Tile / DepthToSpace / SpaceToDepth: the references' strided walks.
  std::string walk_copy(const Node& n, int out) const;

  std::string eye_like(const Node& n, int out) const;

  std::string one_hot(const Node& n, int out) const;

  // ScatterElements / Scatter / ScatterND: each output element starts as data and applies, in
  // update order, every update that targets it (duplicates behave as the sequential reference).
  std::string scatter(const Node& n, int out) const;
  // A Scatter's kernel shape (codegen_opaque_nn.cpp): 'scan' is a thread per output element
  // reading the updates that could reach it (ND: every index tuple; Elements: those on its line
  // along the axis); 'owner' a thread per output line (the elements one set of non-axis
  // coordinates / one slab offset reaches), which copies its data and applies the updates aimed
  // at it in order (data + updates work). Both keep ref's order; the cheaper is chosen.
  // threads: the grid; trips: loop iterations per thread.
  struct ScatterPlan {
    bool owner = false;
    int64_t threads = 0, trips = 0, axis = 0, inner = 1;  // axis: ScatterElements'; inner: ScatterND's slab size
    int64_t cost = 0;  // lane_cost(threads, trips)
  };
  ScatterPlan scatter_plan(const Node& n) const;
  // Serial iterations a lane runs when `threads` threads of `trips` iterations each share the
  // device's lanes (Dialect::parallel_lanes). Past kMaxLaneCost a Scatter or CumSum kernel is
  // refused, past kMaxScanLaneCost an ArgMax / ArgMin, Hardmax or TopK one: a serial iteration
  // that loads costs a GPU lane tens of ns of memory latency, and the host's O(n) loop with its
  // copies wins. Measured on an H100 (docs/benchmarks.md, 2026-12-05, host loop vs GPU kernel,
  // cuda): ScatterND add over 40,000 updates 1.1 vs 4.8 ms, CumSum of 40,000 0.84 vs 1.05 ms,
  // ArgMax of 2 x 40,000 0.45 vs 1.6 ms; one ArgMax lane over 16,384 values took 0.66 ms (cuda),
  // 1.2 ms (vulkan).
  int64_t lane_cost(int64_t threads, int64_t trips) const {  // saturates at 2^62 (shapes reach 2^56 elements)
    const int64_t rounds = ceil_div(std::max<int64_t>(threads, 1), std::max<int64_t>(d_.parallel_lanes, 1));
    return trips > 0 && rounds > (int64_t{1} << 62) / trips ? int64_t{1} << 62 : rounds * trips;
  }
  static constexpr int64_t kMaxLaneCost = int64_t{1} << 15;
  static constexpr int64_t kMaxScanLaneCost = int64_t{1} << 13;
  // `bound` (kMaxLaneCost or kMaxScanLaneCost), or FUSOR_SERIAL_BOUND=N for both (measuring
  // only: the GPU kernel against the host's loop near the bound; 0 lifts it).
  static int64_t max_lane_cost(int64_t bound = kMaxLaneCost) {
    static const int64_t v = [] {  // -1: unset
      const char* e = std::getenv("FUSOR_SERIAL_BOUND");
      if (!e || !*e) return int64_t{-1};
      char* end = nullptr;
      const long long n = std::strtoll(e, &end, 10);
      return *end || n < 0 ? int64_t{-1} : n == 0 ? int64_t{1} << 62 : static_cast<int64_t>(n);
    }();
    return v < 0 ? bound : v;
  }
  // CumSum / CumProd: the number of lines along a constant axis when a thread per line (one
  // running sum, len work a line) is cheaper than a thread per element summing its own prefix
  // (len^2 / 2 a line); 0 for the per-element kernel. Same order, same partial sums.
  int64_t cumsum_lines(const Node& n) const;
  std::string scatter_combine(const Node& n, int out, const std::string& dst, int upd, const std::string& u,
                              const std::string& ind) const;

  // MatMul the fuser left opaque (1-D operands, non-f32 storage): numpy matmul semantics, one
  // thread per output element, fp32 accumulation.
  std::string matmul_direct(const Node& n, int out) const;

  std::string global_pool(const Node& n, int out) const;
};

}  // namespace fusor::codegen_detail
