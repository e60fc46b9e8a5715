// Session-level helpers: load a model, specialise it to concrete input shapes, make inputs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "ir/graph.h"

namespace fusor {

// Loads an ONNX model (Error("onnx") on a bad file; see frontend/onnx_import.h).
Graph load_model(const std::string& path);

// Copy of g made static for these inputs (their shapes bind the graph inputs): shape
// inference, constant folding, DCE. Throws Error("run") when the count or a dtype differs,
// Error("shape") when a shape contradicts the model.
Graph specialize(const Graph& g, const std::vector<Tensor>& inputs);

// Seeded random inputs for g's declared inputs (unknown dims become 1). Floats are uniform
// in [-1, 1) (never all zero); integers in [0, 8) so they are valid indices; bools random.
std::vector<Tensor> random_inputs(const Graph& g, uint64_t seed);

// Compile + run once on a backend. stats may be null.
std::vector<Tensor> run_on_backend(const std::string& backend, const Graph& static_graph,
                                   const std::vector<Tensor>& inputs, const CompileOptions& opts = {},
                                   RunStats* stats = nullptr);

}  // namespace fusor
