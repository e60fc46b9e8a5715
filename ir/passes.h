// Graph passes that turn an imported model into a static, folded graph.
#pragma once
#include <map>
#include <vector>

#include "ir/graph.h"

namespace fusor {

// Binds concrete shapes to the graph's runtime inputs (by input name); dims left unknown in
// the model take the bound value. Throws Error("shape") when a bound shape contradicts a
// known dim or the rank differs.
void bind_input_shapes(Graph& g, const std::map<std::string, Shape>& shapes);

// Runs every node's shape/dtype rule in order. With fold=true, a node whose inputs are all
// constants is evaluated with its reference and its outputs become constants (this is what
// removes Shape/Gather/Concat/... subgraphs from exported transformer models).
// Throws Error("shape") naming the node on a violation, Error("onnx") for an unknown op.
void infer_shapes(Graph& g, bool fold = true);

// Weight dequantization (ir/dequant_weight.cpp): a DequantizeLinear of a constant int8/uint8
// matrix with a constant float32 scale (per tensor or per axis; not blocked) and a constant or
// absent zero point, read only as B of MatMul / Gemm nodes (directly or through one 2-D
// Transpose, Gemm's transB) and no graph output. infer_shapes does not fold such a node (a fold
// would store the weight as fp32); the fuser reads the int8 weight inside the matmul kernel
// (MatMulDesc::dequant_b). Returns the reading MatMul/Gemm node indices, empty when `node` is
// not such a DequantizeLinear.
std::vector<size_t> weight_dequant_matmuls(const Graph& g, size_t node);
// The operand and output dtypes of a MatMul/Conv n (two inputs, one output) that the fuser
// contracts: both operands f32, f16 or bf16 and the output of their dtype, or (n.f32_result)
// fp16/bf16 operands and a float32 output, the kernel's acc (ir/kernel_spec.h).
bool contraction_dtypes(const Graph& g, const Node& n);
// Whether a Conv with weight wv may run as a contraction (implicit GEMM, cuDNN, the 1-D / 3-D
// and ConvTranspose rewrites to them): those multiply the padding's zeros by the weights, and
// 0 * inf is NaN where the direct kernels and ref add no such term (onnxruntime skips padding
// too). False for a constant weight holding inf or NaN; a weight computed at run time is
// assumed finite, as in every contraction.
bool conv_weight_contractible(const Value& wv);
// A MatMul the fuser contracts as a kernel: contraction_dtypes, both operands of rank >= 2.
bool fusible_matmul(const Graph& g, const Node& n);
// True when node is a weight dequantization the fuser fuses: fuse is on and every reader is a
// fusible_matmul (the graph is decomposed: Gemm is a MatMul by then).
bool fused_weight_dequant(const Graph& g, size_t node, bool fuse);
// Evaluates into constants the weight dequantizations that will not be fused (build_plan calls
// it after decomposition), so the plan never runs them as host nodes.
void fold_unfused_weight_dequant(Graph& g, bool fuse);

// QLinearConv / ConvInteger / QLinearMatMul / MatMulInteger as float32 Conv / MatMul of the
// centered integers, split along K where a sum could pass 2^24 so every piece is exact, the
// pieces added in int32, then the reference's requantization in float64
// (ir/decompose_quant_int.cpp, called by decompose()); DynamicQuantizeLinear by its float32
// formula with reductions. Appends the nodes to `out` and returns
// true; false keeps the op (shapes unknown, a non-constant bias, a reduction that could pass
// int32 or that cannot be split exactly).
bool decompose_quant_int(Graph& g, const Node& n, std::vector<Node>& out);
// ConvTranspose of static shapes (f32 / f16 / bf16, every strided axis of dilation 1 with a
// kernel the stride divides) as one Conv of the flipped sub-kernels, stride times as many output
// channels, interleaved by a Transpose and cropped by a Slice (ir/decompose_conv.cpp, called by
// decompose()). Appends the nodes to `out` and returns true; false keeps the op.
bool decompose_conv_transpose(Graph& g, const Node& n, std::vector<Node>& out);
// A 1-D Conv of static shapes (f32 / f16 / bf16) as a 2-D Conv over [N, C, 1, L] between two
// Reshapes (ir/decompose_conv.cpp), so it reaches the contraction kernels.
bool decompose_conv1d(Graph& g, const Node& n, std::vector<Node>& out);
// A 3-D Conv of static shapes (f32 / f16 / bf16, not depthwise, no SAME auto_pad) as a 2-D Conv
// over its input's depth taps stacked as channels, [N * D', C * kd, H, W], between data
// movement (ir/decompose_conv.cpp).
bool decompose_conv3d(Graph& g, const Node& n, std::vector<Node>& out);

// Sequences at shape inference (ir/ops/sequence.cpp). expand_sequence_identity: node `index`
// is an Identity of a sequence value (Value::sequence): its output becomes the same sequence
// and the node is removed (true); false for any other node. refuse_sequence_inputs: throws
// Error("shape") naming n and the value when n, not expanded, reads a sequence (only the
// sequence ops' and an unrolled Loop's expansions resolve one).
bool expand_sequence_identity(Graph& g, size_t index);
void refuse_sequence_inputs(const Graph& g, const Node& n);

// Removes nodes whose outputs reach no graph output or check (Graph::checks), and values
// nothing refers to.
void eliminate_dead_code(Graph& g);

// A lookup (Gather, GatherElements, GatherND, Scatter*) whose result no kept computation
// reads -- it is empty itself (Gather of x [0, 5]), unread, or read only by empty results --
// would never check its indices, yet every out-of-range index is an error (onnxruntime raises).
// Such a Gather / GatherElements / GatherND gets a check (Graph::checks): a lookup of the same
// indices in a uint8 zero stand-in of the looked-up dims, named like the lookup so the error
// names it, or, for indices known now (the model's, or an input the Session baked), that
// lookup run at once; an unread Scatter* is kept whole. As onnxruntime: an empty GatherND and a
// lookup read only through its shape (Value::shape_read) check nothing. Static shapes.
void add_lookup_checks(Graph& g);

// bind_input_shapes + infer_shapes(fold) + add_lookup_checks (unless lookup_checks is false: a
// cone computes one value, not the model's errors) + eliminate_dead_code: the graph is static.
void make_static(Graph& g, const std::map<std::string, Shape>& shapes, bool lookup_checks = true);

}  // namespace fusor
