// Host fallback (graph breaks): a static graph that a GPU backend cannot run whole is cut where
// the backend lacks an op or dtype; the device runs each maximal supported piece as its own
// executable (one replayed CUDA Graph / command buffer) and the host runs the rest with the
// `ref` kernels in between, values crossing a cut as host tensors (ir/partition.h decides the
// cuts). The runtime only moves tensors: op semantics stay in the op table.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"

namespace fusor {

// One node the backend cannot run, and why (the backend's Unsupported message).
struct GraphBreak {
  std::string node;    // ONNX node name
  std::string op;      // op type
  std::string reason;
};

// Nodes of static graph g that backend b cannot run (asks b.unsupported() per node; nothing is
// compiled). Empty for the host backends (ref, cpu) and when every node is supported.
std::vector<GraphBreak> find_graph_breaks(Backend& b, const Graph& g, const CompileOptions& opts);

// b.compile(g, opts) when that succeeds. When it throws Unsupported and opts.fallback is set,
// the graph is partitioned by find_graph_breaks and the pieces compiled (device pieces on b,
// host pieces on ref; a device piece b still refuses as a whole runs on the host too). Throws
// the original Unsupported when no node is to blame (e.g. "no CUDA device") or fallback is off.
std::unique_ptr<Executable> compile_with_fallback(Backend& b, const Graph& g, const CompileOptions& opts);

// The breaks of an executable compile_with_fallback partitioned: the refused nodes in graph
// order, then the nodes of any device piece the backend refused as a whole (empty for an
// executable that runs whole on its backend).
std::vector<GraphBreak> graph_breaks(const Executable& e);

// One line describing a break: "node 'x' (TopK) on the host: <reason>".
std::string describe(const GraphBreak& b);

}  // namespace fusor
