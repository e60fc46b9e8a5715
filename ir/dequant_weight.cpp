// DequantizeLinear -> MatMul fusion, the graph side (ir/passes.h "Weight dequantization"): which
// DequantizeLinear nodes stay unfolded so a matmul kernel can read their int8 weight as int8,
// the fold of those the fuser will not take, and the MatMulDequant descriptor the fuser attaches.
#include <algorithm>

#include "ir/kernel_spec.h"
#include "ir/passes.h"

namespace fusor {
namespace {

bool is_graph_output(const Graph& g, int v) { return std::find(g.outputs.begin(), g.outputs.end(), v) != g.outputs.end(); }

// Nodes reading value v (each once).
std::vector<size_t> readers_of(const Graph& g, int v) {
  std::vector<size_t> r;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (std::find(g.nodes[i].inputs.begin(), g.nodes[i].inputs.end(), v) != g.nodes[i].inputs.end()) r.push_back(i);
  return r;
}

// Reads v only as B: MatMul input 1, Gemm input 1 (any transB).
bool reads_as_b(const Node& n, int v) {
  if (n.op_type != "MatMul" && n.op_type != "Gemm") return false;
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (n.inputs[i] == v && i != 1) return false;
  return n.inputs.size() > 1 && n.inputs[1] == v;
}

bool is_transpose_2d(const Node& n) {
  if (n.op_type != "Transpose" || n.outputs.size() != 1 || n.outputs[0] < 0) return false;
  const auto perm = n.attr_ints("perm", {1, 0});
  return perm == std::vector<int64_t>{1, 0};
}

}  // namespace

std::vector<size_t> weight_dequant_matmuls(const Graph& g, size_t node) {
  if (node >= g.nodes.size()) return {};
  const Node& n = g.nodes[node];
  if (n.op_type != "DequantizeLinear" || n.outputs.size() != 1 || n.outputs[0] < 0 || n.num_inputs() < 2) return {};
  const int out = n.outputs[0];
  if (is_graph_output(g, out)) return {};
  const Value& x = g.values[n.inputs[0]];
  const Value& scale = g.values[n.inputs[1]];
  if (!x.constant || (x.dtype != DType::i8 && x.dtype != DType::u8) || x.shape.size() != 2) return {};
  if (!scale.constant || scale.dtype != DType::f32 || scale.shape.size() > 1) return {};
  if (n.has_input(2) && (!g.values[n.inputs[2]].constant || g.values[n.inputs[2]].dtype != x.dtype)) return {};
  if (n.opset >= 21 && n.attr_i("block_size", 0) != 0) return {};  // blocked: stays a node (folded)
  if (g.values[out].dtype != DType::f32) return {};
  std::vector<size_t> mm;
  for (size_t r : readers_of(g, out)) {
    const Node& c = g.nodes[r];
    if (reads_as_b(c, out)) {
      mm.push_back(r);
      continue;
    }
    // Gemm's transB after decomposition: a Transpose whose every reader takes it as B.
    if (!is_transpose_2d(c) || is_graph_output(g, c.outputs[0])) return {};
    const auto via = readers_of(g, c.outputs[0]);
    if (via.empty()) return {};
    for (size_t t : via) {
      if (!reads_as_b(g.nodes[t], c.outputs[0])) return {};
      mm.push_back(t);
    }
  }
  return mm;
}

bool contraction_dtypes(const Graph& g, const Node& n) {
  const DType t = g.values[n.inputs[0]].dtype, out = g.values[n.outputs[0]].dtype;
  if (g.values[n.inputs[1]].dtype != t) return false;
  if (n.f32_result) return (t == DType::f16 || t == DType::bf16) && out == DType::f32;
  return (t == DType::f32 || t == DType::f16 || t == DType::bf16) && out == t;
}

bool fusible_matmul(const Graph& g, const Node& n) {
  if (n.op_type != "MatMul" || n.outputs.size() != 1 || n.outputs[0] < 0 || !n.has_input(0) || !n.has_input(1)) return false;
  const Value &a = g.values[n.inputs[0]], &b = g.values[n.inputs[1]];
  return a.shape.size() >= 2 && b.shape.size() >= 2 && contraction_dtypes(g, n);
}

bool fused_weight_dequant(const Graph& g, size_t node, bool fuse) {
  const auto mm = weight_dequant_matmuls(g, node);
  if (!fuse || mm.empty()) return false;
  for (size_t i : mm)
    if (!fusible_matmul(g, g.nodes[i])) return false;  // a Gemm left undecomposed, 1-D A, ...
  return true;
}

void fold_unfused_weight_dequant(Graph& g, bool fuse) {
  bool folded = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    if (weight_dequant_matmuls(g, i).empty() || fused_weight_dequant(g, i, fuse)) continue;
    // The same evaluation infer_shapes' constant folding would have done.
    std::vector<const Tensor*> in;
    for (int v : n.inputs) in.push_back(v >= 0 ? &*g.values[v].constant : nullptr);
    const Value& o = g.values[n.outputs[0]];
    std::vector<Tensor> out;
    out.emplace_back(o.dtype, o.shape);
    op_or_throw(n).reference(n, in, out);
    g.values[n.outputs[0]].constant = std::move(out[0]);
    folded = true;
  }
  if (!folded) return;
  std::vector<Node> kept;
  for (auto& n : g.nodes)
    if (n.outputs.empty() || n.outputs[0] < 0 || !g.values[n.outputs[0]].constant) kept.push_back(std::move(n));
  g.nodes = std::move(kept);
  g.reindex_producers();
  infer_shapes(g, true);  // what read the weight (Gemm's Transpose) folds now, as it did before
  eliminate_dead_code(g);
}

MatMulDequant weight_dequant_desc(const Graph& g, const Node& dq, int scale_buffer, int zp_buffer) {
  MatMulDequant d;
  d.scale_buffer = scale_buffer;
  d.zp_buffer = dq.has_input(2) ? zp_buffer : -1;
  const Shape& x = g.values[dq.inputs[0]].shape;
  const Shape& s = g.values[dq.inputs[1]].shape;
  if (!(shape_numel(s) == 1 && s.size() <= 1)) {  // per axis (quant.cpp's quant_layout)
    const int64_t axis = normalize_axis(dq.attr_i("axis", 1), static_cast<int64_t>(x.size()), dq.label());
    d.dim = x[axis];
    for (size_t i = static_cast<size_t>(axis) + 1; i < x.size(); ++i) d.inner *= x[i];
  }
  const OpDef& def = op_or_throw(dq);
  if (!def.load_rule) throw Error("fusion", dq.label() + ": the op table has no load rule for it");
  d.op.kind = ExprKind::op;
  d.op.op = &def;
  d.op.math = g.values[dq.inputs[1]].dtype;
  d.op.dtype = g.values[dq.outputs[0]].dtype;
  d.op.bound = bind_scalar(*def.load_rule, dq, false);
  return d;
}

}  // namespace fusor
