// Internal to ir/: the fusion pass's first step (ir/fusion.cpp). Each node gets a kind: whether
// its value inlines into its readers' expressions (element-wise ops, views, lookups) or is stored
// (reductions, contractions, Concat, opaque nodes); then the values stored from the start (graph
// inputs, outputs and constants, what opaque nodes and convolutions read), with long inlined
// chains and wide fan-ins cut up front so the pass needs few restarts.
#pragma once
#include <vector>

#include "ir/graph.h"
#include "ir/kernel_spec.h"

namespace fusor::fusion_detail {

// dequant: a weight DequantizeLinear read as int8 by the matmul kernels (fused_weight_dequant).
// gather: an ONNX Gather whose output is read through a gathered load (kernel_spec.h Load):
// its data is materialized, its indices inline like any element-wise operand.
enum class Cls { elementwise, view, reduce, matmul, conv, concat, opaque, dequant, gather };

// Every numeric dtype fuses: expressions are typed (kernel_spec.h), so nothing is narrowed.
// The small dtypes (float8, int4, ...) stay opaque nodes: Cast's saturate/round_mode and the
// packed types have no printed expression, and the GPUs refuse them (host fallback runs them).
inline bool fusible_dtype(DType t) { return t != DType::string && t != DType::undefined && !dtype_is_small(t); }
// Fused reductions accumulate in fp32 (fp16/bf16 storage) or in their dtype; contractions:
// contraction_dtypes (ir/passes.h).
inline bool reduce_dtype(DType t) { return dtype_is_float(t); }

// Kinds whose values inline into their readers' expressions (the others are stored).
inline bool inlines(Cls c) { return c == Cls::elementwise || c == Cls::view || c == Cls::gather; }

struct ReduceInfo {
  std::vector<int> axes;  // sorted, normalized
  Combiner combiner = Combiner::sum;
  bool mean = false;
};

// The classification of one graph (indices are g's node and value ids).
struct Classes {
  std::vector<Cls> cls;                     // per node
  std::vector<ReduceInfo> red;              // per node: axes and combiner of a Cls::reduce
  std::vector<std::vector<int>> consumers;  // per value: the nodes reading it, each once, in order
  std::vector<char> mat;                    // per value: stored from the start
};
// Classifies g's nodes for fusion under o (o.fuse off: every value is stored).
Classes classify(const Graph& g, const FusionOptions& o);

}  // namespace fusor::fusion_detail
