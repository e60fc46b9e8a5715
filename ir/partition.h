// Graph partitioning for host fallback (graph breaks), as onnxruntime's execution providers:
// a static graph whose nodes are each placed on the device or on the host is cut into maximal
// single-placement segments, run in order with the values crossing a cut passed between them.
// Placement is decided by the caller (runtime/segments.h asks the backend per node); this file
// only decides where the cuts go and builds each segment's own graph.
#pragma once
#include <string>
#include <vector>

#include "ir/graph.h"

namespace fusor {

struct Segment {
  bool host = false;            // true: runs on the host (ref kernels); false: on the device
  std::vector<int> nodes;       // indices into the partitioned graph's nodes, in run order
  std::vector<int> inputs;      // value ids read from outside the segment (non-constant), ascending
  std::vector<int> outputs;     // value ids produced here and read by a later segment or a graph output
};

// Cuts g (static, topologically sorted) into segments. on_host[i] places node i. Nodes are
// scheduled in a topological order that keeps running in the current placement while any of
// its nodes is ready, so independent host and device nodes do not interleave and the number
// of cuts stays small. Every node lands in exactly one segment; segments alternate placement.
// Throws Error("partition") when on_host.size() != g.nodes.size().
std::vector<Segment> partition_graph(const Graph& g, const std::vector<bool>& on_host);

// The graph segment s runs: s.nodes with their attributes, s.inputs as graph inputs (same
// names, dtypes and shapes), s.outputs as graph outputs, and the constants its nodes read.
// The result is static and topologically sorted (ready for Backend::compile).
Graph segment_graph(const Graph& g, const Segment& s);

// g without the nodes that read or write strings (they run on the host: OpDef::strings,
// runtime/segments.cpp): the other nodes as one graph, with the values they read from string
// nodes (or string-free graph inputs) as its inputs and what they produce for string nodes or
// the graph's outputs as its outputs. g itself when it holds no string value. What a tool that
// plans a whole model (explain, bench, diff) plans for a text model.
Graph without_string_nodes(const Graph& g);
// Whether any value of g (input, output, constant or intermediate) is a string tensor.
bool holds_strings(const Graph& g);

// A graph of node n alone (inputs that are not constants become graph inputs), for asking a
// backend whether it can run that node.
Graph single_node_graph(const Graph& g, int n);

}  // namespace fusor
