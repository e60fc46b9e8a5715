// The type constraints of the ONNX operator schemas (ai.onnx, every opset up to 28, and
// ai.onnx.ml), checked on a model's nodes as onnxruntime does when it resolves a graph
// ("Type (tensor(bool)) of input parameter (x) of operator (Abs) ... is invalid"). The table is generated from the onnx
// package's schema registry (scripts/gen_onnx_schemas.py types -> ir/onnx_type_constraints.inc).
#pragma once

#include "ir/graph.h"

namespace fusor {

// Node n of g (ai.onnx or ai.onnx.ml domain, at its n.opset) against the schema version in
// force at that opset: each present input's dtype must be one its type parameter allows, and
// the inputs bound to one parameter (Add's A and B, Concat's variadic inputs) must share one
// dtype. Inputs of unknown dtype, sequence values and non-tensor formals are not checked; ops
// the table lacks (other domains, fusor's own) pass. Throws Error("onnx", "<node label>: ...")
// naming the input, its dtype and the types the schema allows.
void check_onnx_type_constraints(const Graph& g, const Node& n);

}  // namespace fusor
