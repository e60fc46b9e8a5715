// Graph passes that turn an imported model into a static, folded graph.
#pragma once
#include <map>

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

// Removes nodes whose outputs reach no graph output, and values nothing refers to.
void eliminate_dead_code(Graph& g);

// bind_input_shapes + infer_shapes(fold) + eliminate_dead_code: the graph becomes static.
void make_static(Graph& g, const std::map<std::string, Shape>& shapes);

}  // namespace fusor
