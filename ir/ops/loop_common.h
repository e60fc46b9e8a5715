// Internal to ir/ops/ (Loop and Scan): what ir/ops/loop.cpp (shape inference, reference and
// host-driven runs) and ir/ops/loop_unroll.cpp (OpDef::expand: bodies copied per iteration)
// share. Operator semantics are in loop.cpp's header comment.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace fusor::loop_detail {

// Upper bound on iterations of a loop without a trip count (cond only), so a body whose
// condition never turns false is an error rather than a hang.
constexpr int64_t kMaxIterations = int64_t{1} << 20;

// One body input as bound for an iteration (or for shape inference: value may be null).
struct Arg {
  DType dtype = DType::undefined;
  Shape shape;
  const Tensor* value = nullptr;
  // A sequence (Value::sequence, its elements in graph `outer`): bound as a sequence of
  // elements typed (and constant) like those.
  const Graph* outer = nullptr;
  const std::vector<int>* sequence = nullptr;
};
Arg arg_of(const Tensor& t);

// The node's 'body' attribute (throws Error "shape" when missing); the body's own (formal)
// inputs; the node's own inputs (all but the body's captured outer values at the end).
const Graph& body_of(const Node& n);
int formal_count(const Graph& b);
int own_inputs(const Node& n, const Graph& b);
// The body with its inputs typed (constant where a value is given), shapes inferred, folded.
Graph bind_body(const Node& n, const Graph& b, const std::vector<Arg>& args);

// Loop: own inputs (M, cond, N carried), N carried values, K scan outputs (checked against the body).
struct LoopIO {
  int own = 0, N = 0, K = 0;
};
LoopIO loop_io(const Node& n, const Graph& b);
// iteration_num and cond_in as the body declares them (a scalar, or a one-element tensor).
Tensor scalar_like(const Graph& b, int input, DType dt, int64_t v);

// Scan: N states, M scanned inputs (axes, directions normalized), K scan outputs.
struct ScanIO {
  int own = 0, first = 0, N = 0, M = 0, K = 0;  // first: index of the first state input (Scan-8: 1)
  bool batched = false;                        // Scan-8
  std::vector<int64_t> in_axes, in_dirs, out_axes, out_dirs;
};
ScanIO scan_io(const Node& n, const Graph& b, const std::vector<int>& in_ranks);
// The sequence length T all scanned inputs agree on (Scan-8: and one batch); throws past kMaxIterations.
int64_t scan_length(const Node& n, const ScanIO& io, const std::vector<const Shape*>& shapes);

// One iteration's body inputs typed from the node's inputs (per node input: dtype, shape, the
// constant or null): states as they come, a scanned input without its scanned axis (Scan-8:
// and its batch axis), captured values with their constants.
std::vector<Arg> scan_iteration_args(const ScanIO& io, const std::vector<DType>& dtypes, const std::vector<const Shape*>& shapes,
                                     const std::vector<const Tensor*>& constants);

// OpDef::expand of Scan and Loop (loop_unroll.cpp): replace node `index` of g by copies of its
// body, one per iteration, where the trip count is static and small; false leaves it alone.
bool scan_expand(Graph& g, size_t index);
bool loop_expand(Graph& g, size_t index);

}  // namespace fusor::loop_detail
