// Host-driven loops over replayed bodies (Loop and Scan on the GPU backends): the op's driver
// in ir/ops/loop.cpp keeps the iteration semantics (trip count, cond, scan slices and stacks)
// on the host and hands every iteration's body to a runner that compiled the body ONCE for the
// session's backend (one CUDA Graph / command buffer, or segments with graph breaks inside the
// body) and replays it with that iteration's values. The body is specialised to the run-time
// types of its inputs (loop-carried values, iteration_num, scan slices; captured constants
// fold in); a carried value that changes shape gives a new specialisation, cached per shape,
// and past kMaxBodyShapes of them the remaining iterations run on the `ref` kernels, as do
// bodies that cannot be specialised (iteration_num deciding a shape) — each with its reason in
// the executable's notes. Values move between iterations as host tensors.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"

namespace fusor {

// Distinct body specialisations compiled per node before the rest of its iterations run on ref.
constexpr int kMaxBodyShapes = 4;

// Whether node n is run as a host-driven loop over a compiled body (its op has OpDef::run_host).
bool host_driven(const Node& n);

// One line per host-driven node of static graph g as backend b would run it, without compiling:
// "Loop 'x': host-driven, body replayed on vulkan (3 kernels)" (kernels of the body's fused plan,
// build_plan of its first iteration), or why the body would run on ref instead.
std::vector<std::string> describe_host_loops(Backend& b, const Graph& g, const CompileOptions& opts);

// The executable of a host segment (static graph g) of a plan for backend b: nodes run op by op
// with the `ref` kernels, host-driven ones with their bodies compiled for b (through
// compile_with_fallback, each node's first iteration now, other shapes when first met, on a
// backend of b's name that the executable owns). Throws like Backend::compile.
std::unique_ptr<Executable> compile_host_loops(Backend& b, const Graph& g, const CompileOptions& opts);

// What the host-driven loops of an executable did since it was compiled (summed over the
// segments of a partitioned executable; all zero for one without such loops).
struct HostLoopStats {
  int64_t compiled_iterations = 0;  // iterations whose body ran as a compiled plan on the backend
  int64_t ref_iterations = 0;       // iterations run on the ref kernels (a reason is in notes())
  int bodies_compiled = 0;          // distinct body specialisations compiled
};
HostLoopStats host_loop_stats(const Executable& e);

// Internal: the executable compile_host_loops returns (segments.cpp sums over its pieces).
class HostLoopExecutable : public Executable {
 public:
  virtual HostLoopStats loop_stats() const = 0;
};

}  // namespace fusor
