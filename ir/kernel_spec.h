// KernelSpec and Plan: the backend-neutral output of the fusion pass (DESIGN.md "The few
// abstractions", items 2-4). Nothing here is specific to CUDA, Vulkan or the CPU.
//
// Execution model every backend implements (the cpu backend is the executable spec):
//   * A kernel iterates over `space` (row-major multi-index c). Dims listed in reduce_axes
//     are reduced; the others enumerate "rows" (row-major over the non-reduced dims).
//   * For each row: each reduction k in order computes combine over all reduced positions of
//     expr[body] (the body may use RedRef j < k), then applies finalize (mean: divide by the
//     reduced element count). Then each output is stored: per_row outputs once per row
//     (expr may use RedRef and loads whose strides are 0 on reduced dims), element outputs at
//     every position of the row.
//   * Without reduce_axes every position is its own row: a plain loop kernel.
//   * A contraction kernel (matmul/conv set) computes acc at each position of `space` (the
//     contraction's output shape) and the outputs' expressions may use Acc.
//   * An opaque kernel runs one graph node (`node`) whole; its inputs/outputs are whole
//     contiguous buffers. Backends support the opaque ops they choose and throw Unsupported
//     otherwise.
// Typed values (DESIGN.md numerics): every ExprNode carries its dtype. A load has its buffer's
// dtype, an op node its graph value's dtype, and computes in its math dtype (the dtype of
// ScalarRule::math_operand's operand: integers exact with wrap-around, float64 in double,
// fp32/fp16/bf16 in fp32), the result converted to the node's dtype (fp16/bf16 rounded to
// nearest even, small integers wrapped); ir/scalar.h states the conversion rules. Reductions
// accumulate in their dtype's compute type (fp32 for fp16/bf16); a contraction's acc has its
// output dtype (fp32 accumulation): its operands' dtype, the fp32 sum rounded to it, or float32
// for fp16/bf16 operands (a Gemm's or Conv's fp32 epilogue, Node::f32_result: the operands are
// read as stored, only the result is wide); stores convert to the buffer dtype.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/op_table.h"

namespace fusor {

// A strided view of a buffer: element (c_0..c_{r-1}) lives at offset + sum c_i*strides[i]
// (in elements of the buffer's dtype). Stride 0 = broadcast.
struct StridedView {
  Shape shape;
  std::vector<int64_t> strides;
  int64_t offset = 0;
  static StridedView contiguous(const Shape& s);
  bool is_contiguous() const;  // row-major dense with offset 0 (size-1 dims ignored)
};

enum class ExprKind { load, constant, op, red_ref, acc, dot };

struct ExprNode {
  ExprKind kind = ExprKind::constant;
  DType dtype = DType::f32;    // the value's dtype (see above)
  int load = -1;               // load: index into KernelSpec::loads
  double value = 0;            // constant of a float dtype
  int64_t ivalue = 0;          // constant of an integer or bool dtype (exact; u64 by its bits)
  const OpDef* op = nullptr;   // op: its ScalarRule is printed/evaluated
  BoundScalar bound;           // op: bind_scalar(*op->scalar, node, dtype_is_int(math)): print bound.expr with
                               //     "{i}" -> args[i] and "{param}" -> bound.params (op->scalar->params order);
                               //     evaluate with eval_scalar_typed
  DType math = DType::f32;     // op: its math dtype (scalar_math_dtype of the node's input dtypes)
  std::vector<int> args;       // op: operand node ids (always smaller than this node's id); -1 = absent
  int red = -1;                // red_ref: index into KernelSpec::reductions
  int dot = -1;                // dot: index into KernelSpec::dots
};

// A read of a buffer through a view whose shape is the kernel's space.
// A gathered load (ONNX Gather fused into its reader, ir/fusion.cpp): the expr node of kind
// load that reads it has args = {i}, node i an int32 / int64 index evaluated at the same
// position, and element c lives at view.offset(c) + k * gather_stride, where k = i + gather_dim
// for i < 0, else i (ONNX Gather: indices in [-dim, dim)). An index outside that range is the
// node's error: the cpu backend throws Error naming gather_node; the GPUs set the kernel's
// status word (kernel_checks_indices) and read element k clamped into range. Every gathered
// load has exactly one such node (loads are not shared between index expressions).
struct Load {
  int buffer = -1;
  StridedView view;
  int64_t gather_stride = 0, gather_dim = 0;  // gathered: the indexed axis's stride and length
  std::string gather_node;                    // gathered: the Gather node's label (errors)
  bool gathered() const { return gather_dim > 0; }
};

struct Reduction {
  Combiner combiner = Combiner::sum;
  int body = -1;        // expr node evaluated at every reduced position
  bool mean = false;    // finalize: divide by the number of reduced elements
  int value = -1;       // graph value this reduction computes (for dedupe and explain)
  DType dtype = DType::f32;  // dtype of the reduced value (the body's dtype)
};

struct KernelOutput {
  int buffer = -1;
  StridedView view;     // store view over `space` (strides 0 on reduced dims for per_row outputs)
  int expr = -1;
  bool per_row = false;
};

// C[b..., m, n] = sum_k A[b..., m, k] * B[b..., k, n]; a/b views have shape [batch..., M, K]
// and [batch..., K, N] where the batch dims equal space's leading dims (stride 0 = broadcast).
// Optional prologue on B (DequantizeLinear -> MatMul fused, ir/dequant_weight.cpp): b_buffer
// holds a quantized weight (int8 / uint8, read as 1 byte per element) and the product reads
// b = DequantizeLinear(q, scale, zero_point) element by element, the op table's load_rule
// (`op`, ONNX DequantizeLinear: (q - zero_point) * scale in scale's dtype). Element `off` of
// b_buffer uses scale / zero point element (off / inner) % dim (per tensor: dim = 1), i.e. the
// parameter layout is the weight buffer's own, independent of the view.
struct MatMulDequant {
  int scale_buffer = -1, zp_buffer = -1;  // zp_buffer -1: zero point 0
  int64_t inner = 1, dim = 1;
  ExprNode op;  // kind op: op = DequantizeLinear, bound from its load_rule; operands (q, scale, zp)
};

// Optional element-wise prologue on an operand (ir/fusion.cpp forms it): the operand's element
// is op(x, constants) where x is the element read through the operand's view, e.g. attention's
// q * 0.3535 and k * 0.3535 (Mul of a Transpose/Slice view by a scalar constant) fused into the
// Q @ K^T kernel instead of a copy kernel before it. One op of the op table (op.op->scalar), in
// float32 math over an operand and constants of one float dtype (fp16 / bf16 only with
// FusionOptions::f16_operand_prologues / bf16_operand_prologues), rounded to that dtype: exactly the value the
// element-wise kernel would have stored; backends
// read such an operand with scalar loads (no library GEMM, no vector loads). op.args index `inputs`: kind load is x (the
// loaded element, of the operand buffer's dtype), kind constant a scalar constant.
struct OperandPrologue {
  ExprNode op;
  std::vector<ExprNode> inputs;
  // The prologue over x (a value of dtype xt), as the cpu backend evaluates it
  // (eval_scalar_typed: the element-wise kernel's value, bit for bit).
  double apply(double x, DType xt) const;
};

struct MatMulDesc {
  int a_buffer = -1, b_buffer = -1;
  StridedView a, b;
  int64_t m = 0, n = 0, k = 0;
  std::optional<MatMulDequant> dequant_b;
  std::optional<OperandPrologue> a_pre, b_pre;
  // The operand is its buffer's elements as stored (no dequantization, no prologue): library
  // GEMMs and vector loads may read it.
  bool a_plain() const { return !a_pre; }
  bool b_plain() const { return !b_pre && !dequant_b; }
};

// An inline contraction (ir/fusion.cpp inline_small_contractions): a small matmul whose only
// reader is one row kernel over the matmul's own output space is not materialized; the reader's
// expression nodes of kind `dot` compute its element where they need it. At position
// c = (batch..., m, n) of the reader's space the node's value is
//   sum over q = 0, 1, ..., K-1 of A(a_at(c) + q * a_sk) * B(b_at(c) + q * b_sk)
// with A and B read as `mm` reads them (its prologues applied), accumulated in fp32 (the cpu
// backend: in double, as its contraction kernels) and rounded to the node's dtype: the value the
// matmul kernel would have stored. a_at / b_at are views over the reader's space (strides 0 on n
// / m); mm keeps the matmul's own views ([batch..., M, K], [batch..., K, N]).
struct InlineDot {
  MatMulDesc mm;
  StridedView a_at, b_at;
  int64_t a_sk = 0, b_sk = 0;
};

// A row product (ir/fusion_rows.cpp fuse_row_products): a row kernel whose one reduced axis is the
// last (length K) also computes the matmul that was the only reader of one of its element
// outputs, P, which is then never stored (attention's Softmax(scores) @ V: the probabilities
// stay in the kernel). For the row at (batch..., m) and every n in [0, N):
//   C(c_at(row) + n * c_sn) = sum over k = 0, 1, ..., K-1 of P(row, k) * B(b_at(row) + k * b_sk + n * b_sn)
// where P(row, k) is expr `p` at position (batch..., m, k) converted to p_dtype (the value the
// store would have written), B is read as stored, the sum is fp32 in a fixed order (the GPU
// emitter: ascending k, or where a group has threads to spare, `parts` interleaved partial sums
// in ascending k added in order: deterministic, as split-K; the cpu backend: double in ascending
// k, as its contraction kernels) and is converted to c_dtype (the matmul's acc,
// which the matmul kernel stored unchanged) and stored as buffer c_buffer's dtype. b_at / c_at
// are views over the row kernel's space with stride 0 on the reduced axis (and on m for B).
struct RowProduct {
  int p = -1;                 // expr node: P's value
  DType p_dtype = DType::f32; // P's buffer dtype (the rounding the store applied)
  int b_buffer = -1, c_buffer = -1;
  StridedView b_at, c_at;
  int64_t b_sk = 0, b_sn = 0, c_sn = 0, n = 0;
  DType c_dtype = DType::f32; // the product's value dtype (fp32 sum rounded to it)
};

// ONNX Conv (2-D, NCHW, OIHW weights, contiguous buffers): out [N, K, OH, OW].
struct ConvDesc {
  int x_buffer = -1, w_buffer = -1;
  int64_t n = 0, c = 0, h = 0, w = 0, k = 0, r = 0, s = 0, oh = 0, ow = 0;
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1, groups = 1;
};

// Threads per group of a row kernel (input fusion): enough for the row, a multiple of 32 (one
// warp/subgroup), at most 256.
inline int64_t row_group_size(int64_t row_length) {
  int64_t p = 1;
  while (p < row_length && p < 256) p <<= 1;
  return p < 32 ? 32 : p;
}

enum class FusionKind { loop, input, output, opaque };
const char* fusion_kind_name(FusionKind k);

struct KernelSpec {
  std::string name;                 // unique, stable ("k3_loop_Add_Tanh")
  FusionKind kind = FusionKind::loop;
  Shape space;
  std::vector<int> reduce_axes;     // sorted dims of space that are reduced (input fusion)
  std::vector<Load> loads;
  std::vector<ExprNode> expr;       // topologically ordered DAG, hash-consed (no duplicates)
  std::vector<Reduction> reductions;
  // Online softmax statistics (set by mark_online_softmax, ir/kernel_rewrite.h, the one place
  // that decides it): reductions[online_max] is a Max over x and reductions[online_sum] (a later
  // one) the Sum of Exp(x - red_ref(online_max)) over the same expression node x, so a backend
  // may compute both in one read of the row with the recurrence of Milakov & Gimelshein 2018
  // ("Online normalizer calculation for softmax"); the results must equal the two-pass ones,
  // specials included (a row of only -inf gives sum NaN, as exp(-inf - -inf)). -1: absent.
  // A backend may ignore it (the cpu backend evaluates the reductions in order).
  int online_max = -1, online_sum = -1;
  // Register-resident rows (set by mark_row_registers, ir/kernel_rewrite.h): each thread of a
  // row group (row_group_size(row_length()) threads) keeps row_registers elements of every load
  // in register_loads (the loads more than one pass over the row reads), so each row is read
  // from memory once. 0: rows stream from memory in every pass.
  int64_t row_registers = 0;
  std::vector<int> register_loads;  // indices into loads
  // Row-walking op values (indices into expr) that a later pass would compute again: kept in
  // row_registers registers per thread from the pass that first computes them (Softmax's
  // exp(x - max) between its Sum and its output), so later passes neither recompute them nor
  // need their operands. Only with row_registers > 0; bit-identical to recomputing.
  std::vector<int> register_values;
  std::vector<KernelOutput> outputs;
  std::optional<MatMulDesc> matmul; // kind == output (or a bare contraction)
  std::optional<ConvDesc> conv;
  std::vector<InlineDot> dots;      // row kernels: inline contractions (ExprKind::dot nodes)
  std::optional<RowProduct> row_product;  // row kernels: a trailing contraction over the row
  int node = -1;                    // opaque: index into Plan::graph.nodes
  std::vector<int> opaque_inputs, opaque_outputs;  // opaque: buffers in node input/output order (-1 omitted)
  std::vector<std::string> fused_ops;  // "Add", "Tanh", ... (ONNX node names in fused_nodes)
  std::vector<std::string> fused_nodes;

  int64_t rows() const;             // product of non-reduced dims of space
  int64_t row_length() const;       // product of reduced dims (1 when none)
  // Load l's element changes along the row (its view steps on some reduced dim of size > 1);
  // false: one value per row.
  // A gathered load counts as walking (its index may).
  bool load_walks_row(int l) const;
  bool has_gathered_load() const;
  bool dot_walks_row(int d) const;  // likewise for dots[d] (either operand's view)
  // The dtype of a contraction's acc nodes (all alike: the contraction's output value's), f32
  // when no node reads acc.
  DType acc_dtype() const;
  std::vector<int> input_buffers() const;   // distinct buffers read (loads, contraction, opaque)
  std::vector<int> output_buffers() const;
  bool reads(int buffer) const;   // buffer is among input_buffers() (without building the list)
  bool writes(int buffer) const;  // buffer is among output_buffers()
};

struct Buffer {
  std::string name;       // the graph value it holds
  DType dtype = DType::f32;
  Shape shape;
  int value = -1;         // graph value id
  enum class Role { input, output, constant, intermediate } role = Role::intermediate;
  int64_t offset = -1;    // arena byte offset (inputs/outputs/intermediates); -1 for constants
  // Graph::checks: an intermediate written only for the index errors its kernel may raise; its
  // kernel stays though nothing reads it.
  bool check = false;
  int64_t nbytes() const { return shape_numel(shape) * static_cast<int64_t>(dtype_size(dtype)); }
};

struct Plan {
  Graph graph;                      // the decomposed, static graph the kernels refer to
  std::vector<Buffer> buffers;
  std::vector<KernelSpec> kernels;  // execution order
  std::vector<int> input_buffers;   // per graph input
  std::vector<int> output_buffers;  // per graph output
  int64_t arena_bytes = 0;          // peak: size of the one arena
  int64_t naive_bytes = 0;          // sum of all non-constant buffers (no reuse)
  int original_nodes = 0;           // ONNX nodes before decomposition
  // Bytes moved by the fused plan (each kernel reads its inputs and writes its outputs once)
  // and by an op-by-op execution of the same graph.
  int64_t bytes_fused = 0, bytes_unfused = 0;
  // Kernel-building sweeps of the fusion pass: one, plus one after each round of values it had
  // to store that its first estimates inlined (independent ones are found in the same sweep).
  int fusion_sweeps = 0;
};

// Bytes one kernel reads (each distinct input buffer once) and writes (per-row outputs once
// per row); Plan::bytes_fused is their sum over the plan.
int64_t kernel_bytes_read(const Plan& p, const KernelSpec& k);
int64_t kernel_bytes_written(const Plan& p, const KernelSpec& k);

// Named limits of the fusion pass.
inline constexpr int kMaxOpsPerKernel = 64;      // expression nodes in one kernel
inline constexpr int kMaxLoadsPerKernel = 12;    // distinct buffer reads (descriptor budget)
inline constexpr int kRecomputeMaxOps = 8;       // a multi-consumer value this cheap is recomputed
inline constexpr int64_t kMinRowsToAbsorb = 32;   // input fusion needs this many rows...
inline constexpr int64_t kMaxRowToAbsorbFew = 4096;  // ...unless each row is at most this long
// A contraction of at most this many multiply-adds (batch x M x N x K) takes an element-wise
// operand prologue (MatMulDesc::a_pre / b_pre): one dependent dispatch less where launch and
// barrier latency dominate (attention's scaled Q @ K^T at short sequences). Bigger ones keep
// the operand's own kernel, so they keep library GEMMs and vector loads.
inline constexpr int64_t kMaxPrologueMacs = int64_t{1} << 24;
// A contraction of at most kMaxPrologueMacs multiply-adds whose K is at most this, read only
// by one row kernel over its output (attention's Q @ K^T before the Softmax), is computed
// inline in that kernel (KernelSpec::dots): one kernel and one dependent dispatch less.
inline constexpr int64_t kMaxInlineDotK = 256;
// A row product (KernelSpec::row_product) keeps the row's K values of P in the group's shared
// memory (fp32) and reads B once per row: at most this K, at most this N (one workgroup
// computes a row's N outputs), at least kMinRowsToAbsorb rows, and at most kMaxPrologueMacs
// multiply-adds (rows x K x N), so B's re-reads per row stay in cache.
inline constexpr int64_t kMaxRowProductK = 2048, kMaxRowProductN = 256;

// What a backend's kernels can take, so the one fusion pass (ir/fusion.cpp) decides for it
// (Backend::fusion_options gives each backend's).
struct FusionOptions {
  bool fuse = true;   // false: one kernel per primitive op (the unfused baseline)
  // fp16 / bf16 contraction operands may take element-wise prologues (MatMulDesc::a_pre /
  // b_pre): for a backend whose half-precision products stage their operands themselves
  // (Vulkan: cooperative matrices or the tiled template), not one that hands them to a library
  // (cuBLASLt on CUDA, where a prologue would cost the library path; docs/benchmarks.md,
  // fifteenth and seventeenth sessions). fp32 operands take them either way.
  // Per dtype: fp16 and bf16 operands each (a backend may stage one type faster than the other).
  bool f16_operand_prologues = false, bf16_operand_prologues = false;
  // A small matmul that only reads one row kernel's element output along the row (attention's
  // Softmax(scores) @ V) is computed by that row kernel (KernelSpec::row_product): one kernel and
  // one dependent launch less. FUSOR_ROW_PRODUCT=0 / 1 overrides for A/B runs.
  bool row_products = true;
  // Gather reads fused into the kernels that use them (kernel_spec.h gathered loads): an
  // embedding lookup is not copied by a kernel of its own first. FUSOR_GATHER_FUSION=0 / 1
  // overrides for A/B runs.
  bool gather_loads = true;
};

// Decomposes composite ops into primitives (LayerNormalization, Softmax, Gemm, BatchNorm, ...),
// then forms kernels and the memory plan. g must be static (make_static). Throws Error.
Plan build_plan(const Graph& g, const FusionOptions& opts = {});

// Decomposition alone (exposed for tests): rewrites composite ops in place into primitive
// ONNX ops and re-folds constants; the result still runs on `ref`.
void decompose(Graph& g);

// The dequant_b descriptor for DequantizeLinear node dq (a fused_weight_dequant) whose scale and
// zero point live in the given buffers (ir/dequant_weight.cpp).
MatMulDequant weight_dequant_desc(const Graph& g, const Node& dq, int scale_buffer, int zp_buffer);

// The fusion pass alone (ir/fusion.cpp) over a decomposed static graph: kernels and buffers,
// before build_plan's clean-up, byte counts and memory plan (ir/build_plan.cpp).
Plan fuse_kernels(const Graph& g, const FusionOptions& opts);

// Assigns arena offsets from liveness over the kernel order (first-fit, in-place where a
// loop kernel's output has the same view as an input that dies there).
void plan_memory(Plan& p);

}  // namespace fusor
