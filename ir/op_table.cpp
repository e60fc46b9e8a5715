#include "ir/op_table.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "ir/ops/attention.h"

namespace fusor {

void register_quant_ops();  // ir/ops/quant.cpp: QuantizeLinear, DequantizeLinear
void register_einsum_ops();  // ir/ops/einsum.cpp: Einsum
void register_ml_ops();     // ir/ops/ml.cpp: the ai.onnx.ml ops of numeric scikit-learn pipelines
void register_misc_ops();   // ir/ops/misc.cpp: CumProd, windows, Compress, LpNormalization, NonMaxSuppression
void register_grid_ops();   // ir/ops/grid.cpp: GridSample, AffineGrid, CenterCropPad, Col2Im
void register_recurrent_ops();  // ir/ops/recurrent.cpp: RNN, GRU, LSTM
void register_loop_ops();       // ir/ops/loop.cpp: Loop, Scan
void register_vision_ops();     // ir/ops/vision.cpp: RoiAlign, MaxUnpool
void register_signal_ops();     // ir/ops/signal.cpp: STFT, MelWeightMatrix
void register_ssm_ops();        // ir/ops/ssm.cpp: CausalConvWithState
void register_sequence_ops();   // ir/ops/sequence.cpp: the sequence ops, Optional
void register_string_ops();     // ir/ops/strings.cpp: StringNormalizer, StringConcat, StringSplit, RegexFullMatch, Tokenizer

namespace {
std::map<std::string, OpDef>& table() {
  static std::map<std::string, OpDef> t;
  return t;
}
void ensure_registered() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_elementwise_ops();
    register_nn_ops();
    register_einsum_ops();
    register_shape_ops();
    register_reduce_ops();
    register_extra_ops();
    register_select_ops();
    register_control_ops();
    register_quant_ops();
    register_attention_ops();
    register_flex_attention_ops();
    register_contrib_ops();
    register_training_ops();
    register_quant_int_ops();
    register_misc_ops();
    register_ml_ops();
    register_grid_ops();
    register_recurrent_ops();
    register_loop_ops();
    register_vision_ops();
    register_signal_ops();
    register_ssm_ops();
    register_sequence_ops();
    register_string_ops();
  });
}
}  // namespace

void register_op(OpDef def) {
  std::string name = def.name;
  table()[name] = std::move(def);
}

const OpDef* lookup_op(const std::string& op_type) {
  ensure_registered();
  auto it = table().find(op_type);
  return it == table().end() ? nullptr : &it->second;
}

const OpDef& op_or_throw(const Node& n) {
  // Ops of other domains are registered under "<domain>.<op_type>" (ai.onnx.preview.FlexAttention).
  const bool dflt = n.domain.empty() || n.domain == "ai.onnx";
  const OpDef* d = dflt ? (n.op_type.find('.') == std::string::npos ? lookup_op(n.op_type) : nullptr) : lookup_op(n.domain + "." + n.op_type);
  if (!d)
    throw Unsupported("onnx", n.label() + ": unsupported op '" + printable((n.domain.empty() ? "" : n.domain + ".") + n.op_type) + "'");
  return *d;
}

bool touches_strings(const Graph& g, const Node& n) {
  const auto is_str = [&](int v) { return v >= 0 && static_cast<size_t>(v) < g.values.size() && g.values[v].dtype == DType::string; };
  return std::any_of(n.inputs.begin(), n.inputs.end(), is_str) || std::any_of(n.outputs.begin(), n.outputs.end(), is_str);
}

void check_string_support(const Graph& g, const Node& n, const OpDef& def) {
  if (!def.strings && touches_strings(g, n)) throw Unsupported("ref", n.label() + ": string tensors are not supported by this op");
}

std::vector<std::string> registered_ops() {
  ensure_registered();
  std::vector<std::string> names;
  for (auto& [k, v] : table()) names.push_back(k);
  return names;
}

DType InferContext::dtype(int i) const {
  if (!has_input(i)) fail("input " + std::to_string(i) + " is missing");
  return g_.values[n_.inputs[i]].dtype;
}
const Shape& InferContext::shape(int i) const {
  if (!has_input(i)) fail("input " + std::to_string(i) + " is missing");
  const Value& v = g_.values[n_.inputs[i]];
  if (!v.shape_known) fail("shape of input '" + printable(v.name) + "' is unknown");
  return v.shape;
}
const Tensor* InferContext::constant(int i) const {
  if (!has_input(i)) return nullptr;
  const Value& v = g_.values[n_.inputs[i]];
  return v.constant ? &*v.constant : nullptr;
}
const Tensor& InferContext::require_constant(int i) const {
  const Tensor* t = constant(i);
  if (!t)
    throw NeedsConstant(n_.label() + ": input " + std::to_string(i) + " must be a constant (fusor compiles static shapes)",
                        has_input(i) ? g_.values[n_.inputs[i]].name : std::string());
  return *t;
}
const Tensor& InferContext::require_contents(int i) const {
  try {
    return require_constant(i);
  } catch (const NeedsConstant& e) {
    throw NeedsConstant(e.message(), e.value(), true);
  }
}
void InferContext::set_output(int i, DType t, Shape s) {
  if (i >= num_outputs() || n_.outputs[i] < 0) return;
  // Static shapes are allocated: refuse negative dims and element counts past 2^56 (an
  // overflowing product would otherwise wrap to a small or zero size).
  for (auto d : s)
    if (d < 0) fail("inferred a negative dimension in output shape " + shape_str_short(s));
  if (const std::string why = shape_bounds_problem(s); !why.empty()) fail("output shape " + shape_str_short(s) + " is out of bounds: " + why);
  Value& v = g_.values[n_.outputs[i]];
  v.dtype = t;
  v.shape = std::move(s);
  v.shape_known = true;
}
void InferContext::fail(const std::string& why) const { throw Error("shape", n_.label() + ": " + why); }

bool all_outputs_empty(const std::vector<Tensor>& out) {
  for (const Tensor& t : out)
    if (t.dtype() != DType::undefined && t.numel() > 0) return false;
  return true;
}

void call_op_fn(const std::string& label, const char* component, const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw Error(component, label + ": out of memory (a dim or attribute asks for more than the host has)");
  } catch (const std::exception& e) {
    throw Error(component, label + ": invalid input (" + printable(e.what()) + ")");
  }
}

void call_op_fn(const Node& n, const char* component, const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error&) {
    throw;
  } catch (const std::exception&) {
    call_op_fn(n.label(), component, [] { throw; });  // rethrows the caught exception, converted
  }
}

Shape broadcast_shapes(const std::vector<Shape>& shapes, const std::string& label) {
  size_t r = 0;
  for (auto& s : shapes) r = std::max(r, s.size());
  Shape out(r, 1);
  for (auto& s : shapes) {
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[r - s.size() + i];
      int64_t d = s[i];
      if (d == o || d == 1) continue;
      if (o == 1) { o = d; continue; }
      throw Error("shape", label + ": shapes cannot broadcast (" + shape_str(shapes[0]) + " vs " + shape_str(s) + ")");
    }
  }
  return out;
}

int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& label) {
  // ONNX: axis in [-r, r - 1], so a scalar has none (callers index shapes with the result).
  if (axis < -rank || axis >= rank)
    throw Error("shape", label + ": axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  Shape cs = contiguous_strides(in);
  size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) st[off + i] = in[i] == 1 ? 0 : cs[i];
  return st;
}

}  // namespace fusor
