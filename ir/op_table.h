// The op table: one entry per ONNX op (DESIGN.md "Op table, one entry per op").
//
// An entry holds the op's arity, its shape/dtype rule, its CPU reference implementation and,
// for element-wise ops, one scalar expression that every code generator prints. Fusibility is
// derived from these fields (e.g. an op with a ScalarRule is element-wise), never from lists
// kept elsewhere.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/scalar.h"

namespace fusor {

struct OpDef;

// Thrown by InferContext::require_constant: a shape-determining input (Reshape's shape,
// Reduce axes, Pad pads...) is not a compile-time constant. A caller that knows the input
// values may specialise on them and retry (runtime/session.cpp).
class NeedsConstant : public Error {
 public:
  explicit NeedsConstant(const std::string& why, std::string value = {}, bool contents = false)
      : Error("shape", why), value_(std::move(value)), contents_(contents) {}
  // Name of the value that must be constant ("" when unknown), e.g. a graph input to specialise on.
  const std::string& value() const { return value_; }
  // True when the op's output size follows the value's contents (NonZero's input, NMS's boxes:
  // InferContext::require_contents), which may be as large as the data; false for a shape
  // parameter (axes, pads, sizes), which is small.
  bool contents() const { return contents_; }

 private:
  std::string value_;
  bool contents_ = false;
};

// What a shape/dtype rule sees. Throws Error("shape", node label + reason) on a violation.
class InferContext {
 public:
  InferContext(Graph& g, Node& n) : g_(g), n_(n) {}
  Node& node() { return n_; }
  int num_inputs() const { return n_.num_inputs(); }
  bool has_input(int i) const { return n_.has_input(static_cast<size_t>(i)); }
  DType dtype(int i) const;
  const Shape& shape(int i) const;
  int rank(int i) const { return static_cast<int>(shape(i).size()); }
  const Tensor* constant(int i) const;            // nullptr when input i is not a compile-time constant
  const Tensor& require_constant(int i) const;    // throws when not constant (static shapes need it)
  const Tensor& require_contents(int i) const;    // the same, for data whose contents set the output size (NonZero)
  void set_output(int i, DType t, Shape s);
  int num_outputs() const { return static_cast<int>(n_.outputs.size()); }
  [[noreturn]] void fail(const std::string& why) const;

 private:
  Graph& g_;
  Node& n_;
};

// Runs one op-table function (a shape rule, an expansion, a reference kernel) for node n and
// turns any exception that is not a fusor::Error (std::out_of_range, std::length_error,
// std::bad_alloc from a hostile attribute or dim) into Error(component, "<node label>: ...").
// Bad input must end in one clear line, never std::terminate.
void call_op_fn(const Node& n, const char* component, const std::function<void()>& fn);
// Whether a reference call can be skipped: every output it would write is empty (absent ones
// are default Tensors and count as empty). Per-dimension tables of an empty output can still
// be huge (Pad to [2^31, 0]), so callers do not run the kernel at all.
bool all_outputs_empty(const std::vector<Tensor>& out);
// The same with the label given up front, for functions that may reallocate the node list.
void call_op_fn(const std::string& label, const char* component, const std::function<void()>& fn);

// Inputs are nullptr for omitted optional inputs; outputs arrive allocated with the inferred
// dtype and shape. Throws Error("ref", ...) for an unsupported dtype or attribute combination.
using ReferenceFn = std::function<void(const Node&, const std::vector<const Tensor*>&, std::vector<Tensor>&)>;
using InferFn = std::function<void(InferContext&)>;

// Scalar semantics of an element-wise op.
//  expr: a C-like expression printed by the code generators. "{0}", "{1}".. are the operands,
//        "{name}" an attribute parameter (see params). Functions it may use: the common math
//        intrinsics (exp log sqrt tanh erf sin cos floor ceil pow abs) and fz_* helpers that each
//        emitter's prelude defines (fz_max, fz_min with NaN propagation, fz_round_even, ...).
//        Literals are written with an 'f' suffix (valid in CUDA C and GLSL).
//  eval: the same function in double for the CPU (ref and cpu backends); int_math is true when
//        the op runs on an integer dtype (Div truncates, etc.).
struct ScalarRule {
  std::string expr;
  double (*eval)(const double* x, const double* params, bool int_math) = nullptr;
  std::vector<std::pair<std::string, double>> params;  // attribute name -> default
  bool float_only = false;  // transcendental ops: defined only on float dtypes
  // Refinements (additive; consumers should go through bind_scalar/eval_scalar, which apply them).
  const char* int_expr = nullptr;  // used instead of expr on integer dtypes (Div truncates toward zero)
  bool variadic = false;           // Sum/Max/Min/Mean: expr is binary and folds left over all operands
  bool mean = false;               // variadic only: the folded value is divided by the operand count
  bool float_exponent = false;     // Pow: an integer base with a float exponent is computed in the exponent's type
  // Shrink: an integer input is computed in float64, as the ONNX reference's numpy promotion
  // (int array + Python float) does, and truncated back, saturating (Cast's rule, where numpy's
  // astype wraps); ir/decompose.cpp makes it Cast, op, Cast for the kernels. Bool is refused.
  bool int_in_f64 = false;
  // Params that are not plain numeric attributes (Gelu's string 'approximate', Cast's 'to'):
  // writes one value per params entry. nullptr: node.attr_f(name, default).
  void (*resolve_params)(const Node& n, double* values) = nullptr;
  // Value of an omitted optional operand (Clip's min/max: +-inf, or its opset<11 attributes).
  double (*absent_operand)(const Node& n, int operand) = nullptr;
  // Type rule: the op computes in the dtype of operand math_operand (its "math dtype"; Where:
  // 1, the others 0); every other operand is converted to it first, and the result is
  // converted from it to the node's output dtype (Cast is "{0}": the conversion is the op).
  int math_operand = 0;
  // Integer semantics (math dtype an integer or bool): operands as int64 values of the math
  // dtype (u64 by its bits; uns: the math dtype is unsigned). The caller wraps the result to
  // the math dtype (two's complement). nullptr for float-only ops.
  int64_t (*ieval)(const int64_t* x, const double* params, bool uns) = nullptr;
  // Float expr is fz_div(a, {divisor}) (Div: 1): an emitter may prepare a divisor that many
  // quotients share (a constant, a row's sum) once, with the same correctly rounded result.
  int divisor = -1;
};

// The dtype operand i of a scalar op is converted to before the op: the op's math dtype, except
// Pow's integer exponent on an fp16 / bf16 base, which goes to fp32, the type the power is
// computed in, so an exponent past 2048 keeps its value and parity ((-1)^2049 is -1, as numpy
// and the ONNX reference give). ref (eval_scalar_typed) and the kernels (codegen) both use it.
inline DType scalar_operand_dtype(const ScalarRule& r, size_t i, DType operand, DType math) {
  return r.float_exponent && i == 1 && dtype_is_integral(operand) && (math == DType::f16 || math == DType::bf16) ? DType::f32
                                                                                                                 : math;
}

// One node's scalar semantics, ready to print or evaluate (defined in ir/ops/elementwise.cpp).
//  expr: "{i}" is node input i; absent optional operands are already replaced by literals
//        (non-finite ones as fz_inf()); variadic ops are folded; int_expr chosen when int_math.
//        "{name}" params are kept so an emitter may print literals or pass them as arguments.
//  params: values for rule.params, same order.  absent[i]: value of node input i when omitted.
// int_math: input 0 has an integer dtype.
struct BoundScalar {
  std::string expr;
  std::vector<double> params;
  std::vector<std::optional<double>> absent;
};
BoundScalar bind_scalar(const ScalarRule& rule, const Node& n, bool int_math);
// Evaluates one element for the CPU paths: x[i] is node input i (entries for absent inputs are
// ignored and taken from b.absent); folds variadic ops. Uses rule.eval, so semantics live once.
double eval_scalar(const ScalarRule& rule, const BoundScalar& b, const double* x, bool int_math);
// The math dtype of a node (see ScalarRule::math_operand) given its input dtypes.
DType scalar_math_dtype(const ScalarRule& rule, const std::vector<DType>& input_dtypes);
// Typed evaluation of one element (ref, the cpu backend and constant folding): x[i] is node
// input i as a value of dtype xt[i] (absent inputs are ignored and taken from b.absent);
// operands are converted to the math dtype `math`, the op runs in it (integers: ieval with
// wrap-around; floats: eval in double), and the result is converted to dtype `out`.
// b must be bound with int_math = dtype_is_int(math).
HostScalar eval_scalar_typed(const ScalarRule& rule, const BoundScalar& b, const HostScalar* x, const DType* xt, DType math,
                             DType out);

// Reduction semantics (ReduceSum, ReduceMax, ...): combiner over the reduced elements.
enum class Combiner { sum, max, min, prod };
struct ReduceRule {
  Combiner combiner = Combiner::sum;
  const char* pre = nullptr;   // element expression applied before combining, e.g. "{0}*{0}" for SumSquare
  const char* int_pre = nullptr;  // pre on integer data, where it differs (x * x wraps: fz_imul)
  bool mean = false;           // divide by the reduced count
  const char* post = nullptr;  // expression applied to the combined value, e.g. "log({0})"
  int axes_input_opset = 18;   // axes move from attribute to input 1 at this opset (ReduceSum: 13)
};

// The sorted axes a Reduce* node reduces over an input of `rank` dims (ONNX Reduce* spec:
// attribute before rule.axes_input_opset, optional input 1 from then on; empty = all axes).
// *noop is set when axes are empty and noop_with_empty_axes=1; then no axis is reduced (the
// result is empty) and the op is element-wise (ReduceL1: |x|). Throws Error("shape") on a
// repeated or out-of-range axis. Defined in ir/ops/reduce.cpp.
std::vector<int> reduce_axes(const Node& n, const Tensor* axes_input, int64_t rank, bool* noop);

// Control-flow bodies run by a backend (Loop, Scan): the op's driver (ir/ops/loop.cpp) keeps
// the iteration semantics and hands each iteration's body to a BodyRunner, which the runtime
// implements by compiling the body once per key for the session's backend and replaying it
// (runtime/host_loop.h). ir/ never sees the backend.
struct BodyCall {
  std::string node;  // the node's name
  // Equal keys mean equal specialised bodies: the node's name plus the dtypes and shapes of
  // the body's run-time inputs (a loop-carried value changing shape gives a new key).
  std::string key;
  // The body specialised to this call: static (shapes inferred, constants folded, dead code
  // removed); its graph inputs are exactly the run-time inputs, in the order passed to run().
  // Throws Error / Unsupported / NeedsConstant when the body cannot be specialised so (e.g.
  // iteration_num decides a shape): the caller then runs the iteration on the reference.
  std::function<Graph()> specialise;
};
class BodyRunner {
 public:
  virtual ~BodyRunner() = default;
  // Runs the body of `call` on `inputs` (dtypes/shapes as specialise()'s graph inputs) and
  // returns its outputs in body-output order. Throws Unsupported when this body is not to be
  // compiled (the reason is the message); the driver then runs the iteration on the reference.
  virtual std::vector<Tensor> run(const BodyCall& call, const std::vector<Tensor>& inputs) = 0;
};
// The reference of a control-flow op with its bodies run by `runner`. constant[i]: node input i
// is a compile-time constant of the graph (captured constants are folded into the body).
using HostRunFn = std::function<void(const Node&, const std::vector<const Tensor*>&, const std::vector<bool>& constant,
                                     std::vector<Tensor>&, BodyRunner& runner)>;

struct OpDef {
  std::string name;
  int min_inputs = 1, max_inputs = 1;
  // Bit k set: input k < min_inputs may still be omitted (an empty name), as ONNX marks it
  // optional (EmbedLayerNormalization's segment_ids). Every other input below min_inputs is
  // required: infer_shapes refuses an empty one before any shape rule or expansion reads it.
  uint32_t optional_inputs = 0;
  int min_outputs = 1, max_outputs = 1;
  // Output 0 may be omitted (an empty name) while later outputs are used, as ONNX marks it
  // optional (RNN / GRU / LSTM's Y); elsewhere infer_shapes refuses such a node (the checker
  // does for opsets it knows; onnxruntime: "output 0 ... has an empty string").
  bool optional_first_output = false;
  InferFn infer;
  ReferenceFn reference;
  std::optional<ScalarRule> scalar;  // set => element-wise with NumPy broadcasting
  std::optional<ReduceRule> reduce;  // set => reduction op (axes from attribute or input)
  bool is_view = false;              // Reshape/Transpose/Slice/...: output is an index map of input 0
  // True when the op computes without any run-time check that could raise once shapes are
  // static (Conv, MatMul, Concat, Resize, normalizations...); element-wise, reduction and view
  // ops count as such without it. A lookup of run-time indices (Gather, ScatterND) may raise
  // (an index out of range), so infer_shapes keeps what feeds it even when its result is empty.
  bool never_raises = false;
  // The reference computes on string tensors (Tensor::strings) where the op's ONNX type
  // constraints allow them: the data moves, Equal, Cast, the text ops (ir/ops/strings.cpp). A
  // node reading or writing a string value whose op lacks it is refused in one line ("string
  // tensors are not supported"); string nodes run on the host, between a GPU's device segments
  // (runtime/segments.h), as onnxruntime runs them on its CPU provider.
  bool strings = false;
  // Per-element semantics of an op whose parameters do not broadcast NumPy-style
  // (DequantizeLinear: scale and zero point per tensor or per axis), so it is not a loop
  // element-wise op; a contraction applies it to an operand as it loads it (MatMulDesc::dequant_b).
  // Operands are the node's inputs; emitters print it like `scalar` (op_expression).
  std::optional<ScalarRule> load_rule;
  // Optional graph rewrite infer_shapes tries before `infer`, once the node's inputs are typed:
  // returns true after replacing g.nodes[index] by other nodes (which are then inferred in its
  // place), false to keep the node. If with a constant condition inlines its branch this way.
  std::function<bool(Graph& g, size_t index)> expand;
  // Set for ops with a body run per iteration (Loop, Scan): the reference with the body run by
  // a BodyRunner, so a GPU backend can run the iterations as a host-driven loop over a body
  // compiled once and replayed (runtime/host_loop.h).
  HostRunFn run_host;
  // With run_host: the call of node n's first iteration in static graph g (key and body as the
  // driver will ask for them), so its body compiles with the plan and `explain` can count its
  // kernels. The returned call owns what it needs (it may outlive g).
  std::function<BodyCall(const Graph& g, const Node& n)> first_call;
};

// Registry. lookup() returns nullptr for an unknown op; find_or_throw names the node.
const OpDef* lookup_op(const std::string& op_type);
const OpDef& op_or_throw(const Node& n);
std::vector<std::string> registered_ops();
void register_op(OpDef def);
// Whether node n of g reads or writes a string-typed value.
bool touches_strings(const Graph& g, const Node& n);
// Error("ref") naming n when it touches strings but its op's reference does not compute on them
// (OpDef::strings); nothing otherwise.
void check_string_support(const Graph& g, const Node& n, const OpDef& def);

// Each op file contributes a registration function; op_table.cpp calls them all once.
void register_elementwise_ops();
void register_nn_ops();
void register_shape_ops();
void register_reduce_ops();
void register_extra_ops();
void register_select_ops();   // ir/ops/select.cpp: TopK
void register_control_ops();  // ir/ops/control.cpp: If

// Einsum-12's equation resolved against the operand shapes: letters are label ids 0..51, the
// dims covered by "..." are 52 + j, right-aligned across operands so they broadcast like NumPy
// batch dims; implicit mode (no "->") puts the broadcast dims first, then the labels used once,
// alphabetically. Throws Error("shape") for a malformed equation or mismatched sizes.
struct EinsumLabels {
  std::vector<std::vector<int>> in_labels;  // per operand, per dim (a label may repeat: a diagonal)
  std::vector<int> out_labels;
  std::vector<int64_t> size;                // per label id: its size (broadcast), -1 when unused
};
EinsumLabels einsum_labels(const std::string& equation, const std::vector<Shape>& shapes, const std::string& label);

// ONNX Resize (opsets 10-19+: nearest / linear / cubic, every coordinate_transformation_mode,
// antialias, exclude_outside, axes, keep_aspect_ratio_policy) as separable per-axis taps, the
// one definition the reference and the GPU emitter share: output element (c_0..c_{r-1}) is
// extrapolation when any axis marks c_d as extrapolated, else the sum over k_0..k_{r-1} of
// prod_d w_d[c_d*taps_d + k_d] * x[idx_0[..], ..., idx_{r-1}[..]].
// scales / sizes / roi are the node's constant inputs (null when absent). Throws Error("shape")
// for invalid attributes or inputs.
struct ResizeAxis {
  int64_t taps = 0;                  // taps per output coordinate
  std::vector<int64_t> idx;          // [out * taps] input indices, clamped into [0, in)
  std::vector<double> w;             // [out * taps] weights
  std::vector<uint8_t> extrapolate;  // [out] 1: this coordinate is outside the crop (tf_crop_and_resize)
  // Every coordinate reads one tap of weight 1 and none is extrapolated: the axis adds only an
  // offset (idx), no weight factor, to the sum the reference and the GPU kernels compute alike.
  bool fixed = false;
};
struct ResizeTable {
  Shape out;
  double extrapolation = 0;
  std::vector<ResizeAxis> axes;      // one per input dim
};
ResizeTable resize_table(const Node& n, const Shape& x, const Tensor* scales, const Tensor* sizes, const Tensor* roi);  // ir/ops/extra.cpp: losses, Resize

// Helpers shared by op files.
Shape broadcast_shapes(const std::vector<Shape>& shapes, const std::string& node_label);  // NumPy rules
int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& node_label);     // [-r, r) -> [0, r)
// Element offset into a (possibly lower-rank, broadcast) input for multi-index idx of out_shape.
std::vector<int64_t> broadcast_strides(const Shape& in_shape, const Shape& out_shape);

}  // namespace fusor
