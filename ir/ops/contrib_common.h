// Helpers shared by the expansions of onnxruntime's contrib operators (ir/ops/contrib.cpp: the
// float transformer ops; ir/ops/contrib_quant.cpp: the quantized ones). Internal to ir/ops.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "ir/ops/op_helpers.h"

namespace fusor::contrib {

using namespace op_helpers;

// Every input's shape is known (no -1 dims): an expansion waits for that.
bool all_known(const Graph& g, const Node& n);
int in_of(const Node& n, size_t k);   // input k, or -1 when absent / omitted
// Input i must be float, float16, bfloat16 or double (Error("shape") naming `what`).
void need_float(const Graph& g, const Node& n, int i, const char* what);
// The node's epsilon attribute (default dflt): a finite number >= 0, else Error("shape").
double epsilon_of(const Node& n, double dflt);
// Value v (when >= 0) must be the 1-D [H] parameter `what` (Error("shape")).
void need_hidden(const Graph& g, const Node& n, int v, const char* what, int64_t H);
// A new scalar constant of dtype t and value v, named after the node.
int scalar(Graph& g, const Node& n, DType t, double v);
// Shape rule while the node is not yet expanded (unknown dims): every output like input i.
InferFn like_input(int i);
// Registers an op that shape inference replaces by standard ops (OpDef::expand); optional_inputs
// is OpDef's bit mask of inputs that may be omitted in the middle.
void register_expanded(const std::string& name, int min_in, int max_in, int max_out, InferFn infer,
                       std::function<bool(Graph&, size_t)> expand, uint32_t optional_inputs = 0);
// The Attention node n (at index, in com.microsoft Attention's input layout) replaced by its
// standard ops; `project`, when given, makes the QKV projection (input @ weights + bias)
// instead of the float MatMul (QAttention's integer one). false while shapes are unknown.
bool attention_expand_as(Graph& g, size_t index, const Node& n, const std::function<int(RewriteNodes&)>& project);
// The operands and dims of attend() (ir/ops/contrib.cpp): q [B, N, S, h], k [B, N, T, h],
// v [B, N, T, hv]; mask (int32: [B] key counts, [2B] ends and starts (Attention's layout only),
// [B, T] or [B, S, T] 0 / 1) and attention_bias ([B or 1, N or 1, S, T]) -1 when absent; the
// result [B, S, N * hv] is written to value out.
struct AttendValues {
  int q = -1, k = -1, v = -1, mask = -1, attention_bias = -1, out = -1;
};
struct AttendDims {
  int64_t B = 0, S = 0, T = 0, P = 0, N = 0, h = 0, hv = 0;
};
void attend(RewriteNodes& w, const Node& n, const AttendValues& a, const AttendDims& d, DType t, bool attention_layout);
// fp16 / bf16 values an op combines before normalizing or activating are summed in float32 and
// rounded once at the output, as onnxruntime does: is_half(t), v cast to float32 (v itself when
// float32 or absent), v cast to t (into `out` when given).
bool is_half(DType t);
int as_f32(RewriteNodes& w, int v);
int cast_to(RewriteNodes& w, int v, DType t, int out = -1);
// The quantized ops' registrations (ir/ops/contrib_quant.cpp), GroupQueryAttention's
// (ir/ops/contrib_gqa.cpp) and the diffusion ops' (ir/ops/contrib_diffusion.cpp), called by
// register_contrib_ops.
void register_contrib_quant_ops();
void register_contrib_gqa_ops();
void register_contrib_diffusion_ops();

}  // namespace fusor::contrib
