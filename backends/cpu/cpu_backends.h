// The two CPU backends: "ref" (op by op, the spec) and "cpu" (executes the fused plan).
#pragma once
#include <memory>

#include "backends/backend.h"

namespace fusor {

std::unique_ptr<Backend> make_ref_backend();
std::unique_ptr<Backend> make_cpu_backend();

// Shared by CPU executables: checks and places graph inputs into a value-indexed table
// (throws Error("run") on a dtype/shape mismatch), and resolves a value that may be a constant.
void bind_graph_inputs(const Graph& g, const std::vector<Tensor>& inputs, std::vector<Tensor>& vals);
const Tensor* value_ref(const Graph& g, const std::vector<Tensor>& vals, int v);

}  // namespace fusor
