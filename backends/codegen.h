// The shared kernel emitter: turns one KernelSpec of a Plan into the source of one compute
// kernel in the C subset that CUDA C and GLSL share. Each GPU backend supplies a Dialect (types,
// buffer access, thread ids, barriers, prelude, contraction templates); loops, ifs, index
// arithmetic and the printed op expressions are common. Op semantics are never redefined
// here: op nodes print the op table's ScalarRule::expr (see ir/ops/elementwise.cpp's header
// for the fz_* vocabulary a prelude must define).
//
// Generated kernel contract (both dialects):
//   * Buffers bind to slots 0..n-1 in kernel_bindings(spec) order; slot i is named "b<i>" in
//     the source (a CUDA parameter, a GLSL buffer block instance: see Dialect::declare_buffers).
//   * Expression values are typed (Dialect::compute_type of each node's dtype): loads convert
//     through Dialect::load_value, op operands and results through convert_value, stores
//     through Dialect::store_value. Opaque kernels move values through float (to_float /
//     from_float) and refuse float64 arithmetic.
//   * Index arithmetic uses the macro type `fz_idx` (32-bit `int` unless an index of the kernel
//     can reach 2^31, then the dialect's 64-bit type).
//   * The kernel is 1-D: launch_dims() gives the group (block/workgroup) size, which is baked
//     into the source, and the number of groups. Every kernel loops (grid-stride), so any
//     group count >= 1 is correct; launch_dims caps it at Dialect::max_groups.
//   * Loop kernels: one thread per element of `space` (above 1M elements, 4 elements per
//     thread per iteration, at fz_b + u * group_size, all loads before all stores; launch_dims
//     accounts for it). Row kernels (reduce_axes non-empty):
//     one group per row, a shared-memory (or subgroup) tree reduction per Reduction, then
//     per_row outputs stored by thread 0 and element outputs in a strided loop.
//   * Contraction kernels (matmul / conv): emit_kernel emits macros + an epilogue function
//     and then appends the dialect's template text (Dialect::matmul_template/conv_template),
//     which owns the entry point. The macro contract templates rely on is listed below.
//   * Opaque kernels (whole contiguous buffers, one thread per output element): Gather,
//     Concat, MaxPool/AveragePool (1-3 spatial dims; MaxPool may also store Indices),
//     GlobalAverage/MaxPool, ConvTranspose (1-3 spatial dims, gather form), LRN, Slice,
//     copies (Reshape Flatten Squeeze Unsqueeze Identity Dropout; Dropout may also store its
//     all-true mask), Transpose, Expand,
//     int->int Cast (exact), Resize (float data; its taps from resize_table baked into the
//     kernel as const tables), and any op with a ScalarRule (values through float, so integers
//     are exact up to 2^24). Other ops throw Unsupported(dialect.name, "... op X ...").
//
// Macros every kernel defines (templates may use them):
//   FZ_KERNEL_NAME  the spec's name, sanitised to an identifier; `fz_kernel` where the dialect's
//                   entry point is not named after it (GLSL: main), so kernels that differ
//                   only by name have one source and compile once
//   FZ_GROUP_SIZE   threads per group (== launch_dims().group_size)
//   fz_idx          index type
// Contraction templates additionally get:
//   FZ_EPILOGUE(acc, i)   computes and stores every output for the accumulator `acc` of the
//                         element with linear index i (row-major over spec.space)
//   matmul: FZ_M FZ_N FZ_K FZ_BATCH (product of batch dims), FZ_A_SM FZ_A_SK FZ_B_SK FZ_B_SN
//           (element strides of the [M,K] / [K,N] views), fz_a_base(batch) / fz_b_base(batch)
//           (element offset of batch `batch`, row-major over the batch dims, incl. view offset),
//           FZ_LOAD_A(off) / FZ_LOAD_B(off) (float value of element `off` of the buffer),
//           FZ_TILES (work items: Dialect::matmul_config's count; the launch has
//           min(FZ_TILES, max_groups) groups, so templates loop over work items) plus the
//           macros matmul_config returns
//   conv:   FZ_CN FZ_CC FZ_CH FZ_CW FZ_CK FZ_CR FZ_CS FZ_COH FZ_COW FZ_SH FZ_SW FZ_PH FZ_PW FZ_DH
//           FZ_DW FZ_GROUPS, FZ_LOAD_X(off) / FZ_LOAD_W(off) over contiguous NCHW / OIHW
//           buffers, FZ_TOTAL (= N*K*OH*OW)
// Templates must be written in the dialect's language and use only these names plus their own.
#pragma once
#include <cstdlib>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/kernel_spec.h"

namespace fusor {

// Distinct buffers a kernel touches, in slot order: its input buffers (ascending ids), then
// output buffers not already listed (ascending ids).
std::vector<int> kernel_bindings(const KernelSpec& k);

// True when the kernel checks indices on the device (Gather, GatherElements, GatherND,
// Scatter*, and CumSum with a run-time axis): it then takes one more binding after kernel_bindings, a uint32 status word the
// backend zeroes, and an out-of-range index sets it to index_error_code(kernel index) with
// atomicMax (the access itself is clamped, so memory stays safe). After a run the backend turns
// a non-zero word into the error `ref` raises for that node (index_error_message).
bool kernel_checks_indices(const KernelSpec& k, const Plan& p);
// The status word's value for kernel `kernel_index` (>= 0): larger for earlier kernels, so when
// several kernels of a run find a bad index, atomicMax keeps the first in plan order, the one
// whose node `ref` (which runs nodes in order) fails on first.
uint32_t index_error_code(int kernel_index);
std::string index_error_message(const Plan& p, uint32_t status);

// One slot as the dialect sees it when declaring buffers.
struct BindingInfo {
  int slot = 0;
  int buffer = -1;
  DType dtype = DType::f32;
  bool written = false;    // the kernel stores to it
  bool no_alias = false;   // no other slot of this kernel overlaps it (CUDA: __restrict__ is legal)
  bool row_vector = false; // a row kernel reads or writes it 4 elements at a time (Dialect::row_vector_ok)
};

struct KernelHeader {
  std::string name;                 // identifier (FZ_KERNEL_NAME)
  std::vector<BindingInfo> bindings;
  int64_t group_size = 256;
  bool index64 = false;
  bool uses_f64 = false;            // some value or buffer is float64 (double helpers needed)
  bool uses_i64 = false;            // some value or buffer is a 64-bit integer
  bool uses_f16 = false, uses_bf16 = false;  // some value or buffer is float16 / bfloat16
  bool float_pow = false;  // a float-class Pow computed in double (Dialect::float_pow_in_double)
  // Slot of the status word (one uint32 after the buffers) that index-checking kernels set
  // to their kernel index + 1 when an index is out of range; -1 when the kernel has none.
  int status_slot = -1;
  int kernel_index = 0;             // position of the kernel in its plan
};

// What a backend supplies. Defaults are CUDA-flavoured C where both languages agree; a GLSL
// dialect overrides the marked hooks. Every hook returns source text.
struct Dialect {
  virtual ~Dialect() = default;
  std::string name = "generic";      // component name in errors ("cuda", "vulkan")
  std::string int64_type = "long long";
  std::string int64_suffix = "LL";   // for index literals >= 2^31
  std::string func_qualifier;        // before helper functions ("__device__ __forceinline__ ")
  std::string local_id, group_id, num_groups;  // 1-D thread geometry (any integer type)
  std::string barrier;               // a group barrier that also orders shared memory
  // Put before a `for` whose trip count is a literal to have it unrolled, so a local array
  // indexed by its counter stays in registers ("#pragma unroll\n", GLSL "[[unroll]] ").
  std::string unroll;
  // Whether the entry point carries the kernel's name (CUDA: the __global__ function). False
  // (GLSL, entry `main`): FZ_KERNEL_NAME is `fz_kernel` in every kernel, so identical kernels
  // (each layer of a transformer) share one source, one compile and one cache entry.
  bool entry_named = true;
  int64_t max_groups = 65535;
  // Loop iterations one invocation may run in all (0: no limit). llvmpipe (lavapipe) ends every
  // loop once an invocation has run 65535 iterations in total (gallivm's loop limiter), so a
  // longer serial loop silently computes a prefix: such opaque / row / contraction kernels are
  // refused (Unsupported: they run on the host) rather than cut short.
  int64_t max_loop_iterations = 0;
  // Threads the device runs at once, roughly (a GPU: 16,384; lavapipe: its CPU's SIMD lanes):
  // Emitter::lane_cost divides a kernel's threads by it to weigh serial work (Scatter's two
  // kernels, CumSum's per-line form, the bound past which the host's O(n) loop is faster).
  int64_t parallel_lanes = 16384;
  // Entries of the constant tables a kernel indexes at run time (Resize's per-coordinate taps and
  // weights, Emitter::resize) before the node is left to the host. llvmpipe lowers a dynamically
  // indexed constant array to compare-and-select chains, compiled at the first dispatch in time
  // growing with the square of its length (4x4 -> 160x160 nearest, 640 entries: 16.5 s; 80: 0.7 s,
  // red-team round 31), so lavapipe takes small tables only.
  int64_t max_table_entries = int64_t{1} << 16;
  // fp32 / fp16 / bf16 Pow computed in double (then rounded once to float), as ref computes it:
  // the driver's fp32 pow is exp2(y log2 x), whose error grows with |y log2 x| (45 ulp at
  // 1e34, red-team round 27). Set by dialects that have doubles (Vulkan: shaderFloat64).
  bool float_pow_in_double = false;
  // Whether kernels may compute in double (CUDA: always; Vulkan: shaderFloat64). Resize of
  // float data then sums its taps in double as ref does, so the GPUs give ref's bits
  // (Emitter::resize); without doubles it sums in fp32, within the fp32 tolerance.
  bool has_f64 = true;
  // FUSOR_DRIVER_POW=1 (measuring only: an A/B of the double Pow's cost in one binary): the
  // driver's fp32 pow on both GPUs, as before the change.
  static bool driver_pow_knob() {
    const char* e = std::getenv("FUSOR_DRIVER_POW");
    return e && e[0] == '1' && e[1] == 0;
  }
  // Qualifier of every op result and accumulator ("precise " in GLSL): each op rounds to fp32
  // on its own, as in the reference, instead of the driver contracting a*b+c into an fma
  // (which turns x*y - x*y into the rounding error of x*y). CUDA gets the same from NVRTC's
  // --fmad=false. Templates that want fma call it explicitly.
  std::string value_qualifier;
  // A divisor that many quotients share (a constant, a row's sum), prepared once. Non-empty:
  // the prelude defines `div_prep_type fz_div_prep(float b)` and `float fz_div_by(float a,
  // div_prep_type p)`, equal to fz_div(a, b) bit for bit, and div_prep_literal(b) prints
  // fz_div_prep(b) as a literal ("" where b gains nothing). Empty: fz_div as printed. (Vulkan:
  // fz_div_by corrects x * RN(1 / y) by Dekker's exact product, or by fused-fma residuals on
  // NVIDIA, vk_dialect.cpp fused_fma.)
  std::string div_prep_type;
  virtual std::string div_prep_literal(float b) const { return (void)b, ""; }
  // Contraction templates (text appended after the macros; see above) and their tiling.
  std::string matmul_template, conv_template;
  int64_t matmul_group_size = 256, matmul_tile_m = 64, matmul_tile_n = 64, conv_group_size = 256;
  // Work decomposition of a matmul kernel: sets `work_items` (groups the template expects;
  // default batch * ceil(m / tile_m) * ceil(n / tile_n)) and returns extra #define lines.
  virtual std::string matmul_config(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t& work_items) const;
  // Extra #define lines of conv c's kernel (before the template), e.g. its tiles and split-K;
  // may set work_items (groups launched; preset to one thread per output); default none.
  virtual std::string conv_config(const ConvDesc& c, int64_t& work_items) const { return (void)c, (void)work_items, ""; }
  // Serial loop iterations one invocation of the contraction kernel k (a matmul or conv with
  // the tiles matmul_config / conv_config chose) runs in all when the launch has `groups`
  // workgroups: its grid-stride work items times each item's K loop (and the loops around it),
  // for the emitter's max_loop_iterations check. 0: not counted (no limit to meet).
  virtual int64_t contraction_loop_trips(const KernelSpec& k, int64_t groups) const { return (void)k, (void)groups, 0; }
  // Threads per group of a matmul with M rows (default matmul_group_size).
  virtual int64_t matmul_threads(int64_t m) const { return (void)m, matmul_group_size; }

  // Emitted first in every kernel (GLSL: #version and extensions go here): the fz_* helpers,
  // fz_inf()/fz_nan(), missing intrinsics. h tells which dtypes/index width the kernel uses.
  // `fz_idx` is defined right after it, so the prelude must not use fz_idx.
  virtual std::string prelude(const KernelHeader& h) const = 0;
  // Element type of a buffer of `t` (throws Unsupported for dtypes the backend cannot store).
  virtual std::string storage_type(DType t) const = 0;
  // `e` is an element lvalue of a buffer of dtype t -> float expression, and back.
  virtual std::string to_float(DType t, const std::string& e) const;
  virtual std::string from_float(DType t, const std::string& v) const;
  // Float value v rounded to 16-bit float type t in a register (a node's result of that dtype
  // read by the next node): to_float(from_float(v)) unless the dialect needs a form the driver
  // cannot fold away.
  virtual std::string round_value(DType t, const std::string& v) const { return to_float(t, from_float(t, v)); }
  // `e` is an element of an integer index buffer (Gather indices) -> fz_idx expression.
  virtual std::string to_index(DType t, const std::string& e) const;
  // Conversion of expression e to `type` ("float", "fz_idx", "int").
  virtual std::string cast(const std::string& type, const std::string& e) const;

  // ---- typed expression values (ir/kernel_spec.h "Typed values") ----
  // The type a value of dtype t is computed in: "float" for f32/f16/bf16 and bool (0/1),
  // double for f64, int / unsigned for 8-32-bit integers (small ones wrapped after every op),
  // the 64-bit integer types for i64/u64.
  virtual std::string compute_type(DType t) const;
  // Storage element e of a dtype-t buffer -> a compute_type(t) value, and back.
  virtual std::string load_value(DType t, const std::string& e) const;
  virtual std::string store_value(DType t, const std::string& v) const;
  // A compute-type value v of 8/16-bit integer dtype t wrapped to t's range (two's complement).
  virtual std::string wrap_small(DType t, const std::string& v) const;
  // A signed integer of at most 32 bits (compute type int) widened to a 64-bit type `type`: a
  // cast (sign extension) by default.
  virtual std::string sign_extend64(const std::string& type, const std::string& v) const { return cast(type, v); }
  // Literals: integer dtype t's value v (u64 by its bits) in compute_type(t), and a double.
  virtual std::string int_literal(DType t, int64_t v) const;
  virtual std::string double_literal(double v) const;
  // Intrinsic rename for an op whose math dtype is `math` (fp32-class: intrinsic(nm)). Throws
  // Unsupported when the dialect has no implementation in that type (GLSL double exp).
  virtual std::string typed_intrinsic(const std::string& nm, DType math) const;
  // Lvalue of element `idx` of slot `slot` (CUDA "b3[idx]", GLSL "b3.d[idx]").
  virtual std::string element(int slot, const std::string& idx) const;
  // The constant element offset of view `view` (loads, then outputs) of an element-wise loop
  // kernel, as printed into its index: `literal` (offset 0: "", nothing added). The Vulkan
  // backend may print a push constant instead, so kernels differing only in offsets (the pieces
  // of a wide Concat or Split) share one pipeline.
  virtual std::string view_offset(size_t view, const std::string& literal, int64_t offset) const {
    return (void)view, offset != 0 ? literal : std::string();
  }
  // Register-resident row kernels: whether slot's elements may be read / written as 4-wide
  // vectors (groups of 4 elements starting at a multiple of 4 of a view with offset `offset`
  // elements): the dialect has a 4-wide type for t and the binding's start keeps those groups
  // aligned. Then row_vector_element(slot, i) is the lvalue of vector i (elements 4i..4i+3), of
  // type row_vector_type(t), indexable with [] (declare_buffers declares the 4-wide view of
  // bindings with row_vector set). Default: none.
  virtual bool row_vector_ok(int slot, DType t, int64_t offset) const { return (void)slot, (void)t, (void)offset, false; }
  virtual std::string row_vector_type(DType t) const { return (void)t, ""; }
  // The registers a vector is moved through (loaded whole, stored whole): their type, the
  // conversions from / to the buffer's vector type, and one element's value for a store (the
  // element of store_value(t, v) in the register type). Default: the buffer's own type.
  virtual std::string row_vector_register(DType t) const { return row_vector_type(t); }
  virtual std::string row_vector_load(DType t, const std::string& e) const { return (void)t, e; }
  virtual std::string row_vector_store(DType t, const std::string& q) const { return (void)t, q; }
  virtual std::string row_vector_store_element(DType t, const std::string& v) const { return store_value(t, v); }
  virtual std::string row_vector_element(int slot, const std::string& idx) const { return (void)slot, (void)idx, ""; }
  // Global-scope declarations: GLSL buffer blocks + local size; CUDA nothing. Both define
  // FZ_INDEX_ERROR (record an out-of-range index in the status word) when h.status_slot >= 0.
  virtual std::string declare_buffers(const KernelHeader& h) const { return ""; }
  // A global-scope shared array (CUDA "__shared__ float n[c];", GLSL "shared float n[c];").
  virtual std::string shared_array(const std::string& type, const std::string& nm, int64_t count) const = 0;
  // A global-scope read-only table of `type` ("float" or "int") initialised with `values`
  // (literals). Default: "static __device__ const type nm[N] = {...};". GLSL:
  // "const type nm[N] = type[N](...);".
  virtual std::string const_array(const std::string& type, const std::string& nm, const std::vector<std::string>& values) const;
  // Opens the entry function including '{' (CUDA: extern "C" __global__ ...; GLSL: void main() {).
  virtual std::string kernel_begin(const KernelHeader& h) const = 0;
  // Buffer parameters that helper functions need to reach buffers: CUDA "float* b0, ..." and
  // "b0, ..."; GLSL "" (buffers are global). Used for fz_epilogue and by templates' FZ_PARAMS.
  virtual std::string function_params(const KernelHeader& h) const { return ""; }
  virtual std::string function_args(const KernelHeader& h) const { return ""; }
  // Renames an intrinsic used by op expressions (CUDA "exp" -> "expf", GLSL "erf" -> "fz_erf");
  // returns the name unchanged when no rename is needed.
  virtual std::string intrinsic(const std::string& nm) const { return nm; }
  // Combines `v` across the group so that every thread holds the result; `comb` is a binary
  // function-like name, `red` a shared array of group_size elements of v's type. Default: shared
  // memory tree. Must start and end with all threads converged.
  // `type` is v's type ("float" or "double"), the element type of `red`.
  virtual std::string group_reduce(const std::string& v, const std::string& comb, const std::string& red,
                                   int64_t group_size, const std::string& type = "float") const;
  // Combines a compensated fp32 sum, the pair (s, c) of fz_csum, across the group with fz_csum2
  // so that every thread holds the same pair; red and redc are shared float arrays of group_size
  // elements. Default: shared memory tree. Same convergence contract as group_reduce.
  // The mean of len values from their compensated sum (s, c): fz_cmean with the count's
  // reciprocal (and, on Vulkan, its prepared division) as literals; odd: rounded to odd, for a
  // result stored as fp16 / bf16 (one rounding in all).
  virtual std::string compensated_mean(const std::string& s, const std::string& c, int64_t len, bool odd) const;
  // The count as fz_cmean takes it: its fp32 rounding and the exact rest (len - that).
  static std::pair<float, float> mean_count(int64_t len) {
    const float n = static_cast<float>(len);
    return {n, static_cast<float>(static_cast<double>(len) - static_cast<double>(n))};
  }
  virtual std::string group_reduce_csum(const std::string& s, const std::string& c, const std::string& red,
                                        const std::string& redc, int64_t group_size) const;
  // (s, c) = the n pairs red[0..n), redc[0..n) combined by fz_csum2 as an unrolled pairwise tree
  // (log2 n dependent steps, not n): the cross-subgroup / cross-warp step of group_reduce_csum.
  static std::string pairwise_csum(const std::string& s, const std::string& c, const std::string& red,
                                   const std::string& redc, int64_t n, const std::string& ind);
  // Helper functions for integer and double values (fz_max ... fz_ipow overloads), emitted
  // after the prelude; h says which 64-bit types the kernel uses.
  virtual std::string typed_helpers(const KernelHeader& h) const;
};

struct LaunchDims {
  int64_t group_size = 256;
  int64_t groups = 1;
};

// The launch of emit_kernel's kernel for spec k (1-D).
LaunchDims launch_dims(const KernelSpec& k, const Plan& p, const Dialect& d);

// Complete source for kernel k of plan p. Throws Unsupported for an opaque op (or a dtype) the
// emitter/dialect cannot handle, Error for a malformed spec.
std::string emit_kernel(const KernelSpec& k, const Plan& p, const Dialect& d);

// Helpers also useful to dialects and templates.
std::string glsl_const_array(const std::string& type, const std::string& nm, const std::vector<std::string>& values);
std::string fz_float_literal(double v);              // "1.5f", "(-2.0f)", "fz_inf()", "fz_nan()"
std::string kernel_identifier(const std::string& name);  // sanitised C identifier (prefix "fz_")
// The first GEMV path's partial-sum tree (gemm.glsl and the CUDA template, FZ_SK_RADIX): 4 (the
// default: four K groups a round) or 2 (pairs, the earlier tree), from FUSOR_GEMV_TREE_RADIX.
int gemv_tree_radix();
// The op's expression for one ExprNode: e.bound.expr with "{i}" -> operands[i] (empty for an
// absent operand, which bound.expr never references) and "{param}" -> a literal of
// bound.params, intrinsics renamed by the dialect; parenthesised.
std::string op_expression(const ExprNode& e, const std::vector<std::string>& operands, const Dialect& d);
// Value v of dtype `from` (in compute_type(from)) converted to dtype `to` (in compute_type(to))
// by ir/scalar.h's rules: fp16/bf16 targets are rounded, small integers wrapped, bool is != 0.
// `force` converts even when from == to (an op result that still needs rounding/wrapping).
std::string convert_value(const Dialect& d, DType from, DType to, const std::string& v, bool force = false);
// A literal of dtype t for an ExprNode constant (float value or integer ivalue).
std::string typed_literal(const Dialect& d, DType t, double value, int64_t ivalue);

}  // namespace fusor
