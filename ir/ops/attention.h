// Attention's dimensions, shared by its shape rule and reference (ir/ops/attention.cpp) and its
// decomposition into MatMul/Softmax primitives (ir/decompose_attention.cpp).
#pragma once
#include <vector>

#include "ir/graph.h"

namespace fusor {

// ONNX Attention (opsets 23-25) sizes, from the input shapes in input order (Q, K, V,
// attn_mask, past_key, past_value, nonpad_kv_seqlen; nullptr for an absent one).
// B batch, Hq/Hkv query/key-value heads (GQA when Hq > Hkv), Sq/Skv query/new key length,
// P past length, T = P + Skv keys attended, D q/k head size, Dv v head size.
// Throws Error("shape", node label + reason) when the shapes or head attributes disagree.
struct AttentionDims {
  bool rank3 = false, nonpad = false;
  int64_t B = 0, Hq = 0, Hkv = 0, Sq = 0, Skv = 0, P = 0, T = 0, D = 0, Dv = 0;
};
AttentionDims attention_dims(const Node& n, const std::vector<const Shape*>& shapes);

// RotaryEmbedding-23 sizes: input [B, H, S, hd] or 3-D [B, S, H*hd] (num_heads attribute),
// rd rotated dims (rotary_embedding_dim, 0 = hd; even, <= hd); cos/sin caches [B, S, rd/2], or
// [max_position, rd/2] with position_ids [B, S]. Throws Error("shape") on a mismatch.
struct RotaryDims {
  bool rank3 = false;
  int64_t B = 0, S = 0, H = 0, hd = 0, rd = 0;
};
RotaryDims rotary_dims(const Node& n, const Shape& x, const Shape& cos, const Shape& sin, const Shape* pos);

// Appends Attention node n as primitives (MatMul, Softmax parts, views) to `nodes` and returns
// true, or returns false to keep the node (nonpad_kv_seqlen, non-float, unknown shapes).
// Defined in ir/decompose_attention.cpp; ir/decompose.cpp calls it.
bool decompose_attention(Graph& g, const Node& n, std::vector<Node>& nodes);
// The same for RotaryEmbedding (float32/float64; others stay whole).
bool decompose_rotary(Graph& g, const Node& n, std::vector<Node>& nodes);

void register_attention_ops();  // Attention, RotaryEmbedding
void register_flex_attention_ops();  // ir/ops/flex_attention.cpp: ai.onnx.preview.FlexAttention
void register_contrib_ops();  // ir/ops/contrib.cpp: onnxruntime's com.microsoft transformer ops
void register_training_ops();  // ir/ops/training.cpp: ai.onnx.preview.training Adagrad, Adam, Momentum
void register_quant_int_ops();  // ir/ops/quant_int.cpp: DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinear*

}  // namespace fusor
