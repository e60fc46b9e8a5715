#include "ir/partition.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "ir/op_table.h"

namespace fusor {

std::vector<Segment> partition_graph(const Graph& g, const std::vector<bool>& on_host) {
  const int n = static_cast<int>(g.nodes.size());
  if (static_cast<int>(on_host.size()) != n)
    throw Error("partition", "placement has " + std::to_string(on_host.size()) + " entries for " + std::to_string(n) + " nodes");
  // Producer of each value among g.nodes (g.values[].producer may be stale after passes).
  std::vector<int> producer(g.values.size(), -1);
  for (int i = 0; i < n; ++i)
    for (int o : g.nodes[i].outputs)
      if (o >= 0) producer[o] = i;
  std::vector<std::vector<int>> users(n);
  std::vector<int> waiting(n, 0);
  for (int i = 0; i < n; ++i) {
    std::set<int> preds;
    for (int v : g.nodes[i].inputs)
      if (v >= 0 && !g.values[v].constant && producer[v] >= 0) preds.insert(producer[v]);
    waiting[i] = static_cast<int>(preds.size());
    for (int p : preds) users[p].push_back(i);
  }
  // Kahn's algorithm with one ready set per placement: stay in the current placement while it
  // has ready nodes (lowest index first, so an all-device graph keeps its order).
  std::set<int> ready[2];
  for (int i = 0; i < n; ++i)
    if (waiting[i] == 0) ready[on_host[i]].insert(i);
  std::vector<Segment> segs;
  int scheduled = 0;
  int cur = -1;
  while (scheduled < n) {
    if (cur < 0 || ready[cur].empty()) {
      if (ready[0].empty() && ready[1].empty()) throw Error("partition", "graph '" + g.name + "' has a cycle");
      if (cur < 0) cur = ready[1].empty() ? 0 : ready[0].empty() ? 1 : (*ready[1].begin() < *ready[0].begin());
      else cur = 1 - cur;
      segs.push_back(Segment{cur == 1, {}, {}, {}});
    }
    int i = *ready[cur].begin();
    ready[cur].erase(ready[cur].begin());
    segs.back().nodes.push_back(i);
    ++scheduled;
    for (int u : users[i])
      if (--waiting[u] == 0) ready[on_host[u]].insert(u);
  }
  // Values crossing a cut: read by a segment that does not produce them, or graph outputs.
  std::vector<int> seg_of(n, -1);
  for (size_t s = 0; s < segs.size(); ++s)
    for (int i : segs[s].nodes) seg_of[i] = static_cast<int>(s);
  std::vector<std::set<int>> ins(segs.size()), outs(segs.size());
  for (int i = 0; i < n; ++i)
    for (int v : g.nodes[i].inputs) {
      if (v < 0 || g.values[v].constant) continue;
      const int p = producer[v];
      if (p >= 0 && seg_of[p] == seg_of[i]) continue;
      ins[seg_of[i]].insert(v);
      if (p >= 0) outs[seg_of[p]].insert(v);
    }
  for (int v : g.outputs)
    if (v >= 0 && producer[v] >= 0 && !g.values[v].constant) outs[seg_of[producer[v]]].insert(v);
  for (size_t s = 0; s < segs.size(); ++s) {
    segs[s].inputs.assign(ins[s].begin(), ins[s].end());
    segs[s].outputs.assign(outs[s].begin(), outs[s].end());
  }
  return segs;
}

namespace {

// Copies the nodes (by index) of g into a new graph; `inputs` become its graph inputs and
// `outputs` its graph outputs; constants the nodes read are copied along.
Graph subgraph(const Graph& g, const std::vector<int>& nodes, const std::vector<int>& inputs, const std::vector<int>& outputs) {
  Graph s;
  s.name = g.name;
  s.opset = g.opset;
  std::unordered_map<int, int> id;
  auto value = [&](int v) {
    if (v < 0) return -1;
    auto it = id.find(v);
    if (it != id.end()) return it->second;
    Value copy = g.values[v];
    copy.producer = -1;
    s.values.push_back(std::move(copy));
    const int nv = static_cast<int>(s.values.size()) - 1;
    id[v] = nv;
    return nv;
  };
  for (int v : inputs) s.inputs.push_back(value(v));
  for (int i : nodes) {
    Node node = g.nodes[i];
    for (int& v : node.inputs) v = value(v);
    for (int& v : node.outputs) v = value(v);
    s.add_node(std::move(node));
  }
  for (int v : outputs) s.outputs.push_back(value(v));
  for (int v : g.checks)  // a check made by one of these nodes stays one
    if (const auto it = id.find(v); it != id.end() && s.values[static_cast<size_t>(it->second)].producer >= 0) s.checks.push_back(it->second);
  return s;
}

}  // namespace

Graph segment_graph(const Graph& g, const Segment& seg) { return subgraph(g, seg.nodes, seg.inputs, seg.outputs); }

bool holds_strings(const Graph& g) {
  return std::any_of(g.values.begin(), g.values.end(), [](const Value& v) { return v.dtype == DType::string; });
}

Graph without_string_nodes(const Graph& g) {
  if (!holds_strings(g)) return g;
  std::vector<bool> host(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) host[i] = touches_strings(g, g.nodes[i]);
  Segment s;
  std::set<int> made, ins, outs;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!host[i])
      for (int v : g.nodes[i].outputs)
        if (v >= 0) made.insert(v);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (int v : g.nodes[i].inputs) {
      if (v < 0 || g.values[v].constant) continue;
      if (!host[i] && !made.count(v)) ins.insert(v);
      if (host[i] && made.count(v)) outs.insert(v);
    }
    if (!host[i]) s.nodes.push_back(static_cast<int>(i));
  }
  for (int v : g.outputs)
    if (made.count(v)) outs.insert(v);
  s.inputs.assign(ins.begin(), ins.end());
  s.outputs.assign(outs.begin(), outs.end());
  return segment_graph(g, s);
}

Graph single_node_graph(const Graph& g, int n) {
  const Node& node = g.nodes.at(n);
  std::vector<int> ins, outs;
  std::set<int> seen;
  for (int v : node.inputs)
    if (v >= 0 && !g.values[v].constant && seen.insert(v).second) ins.push_back(v);
  for (int v : node.outputs)
    if (v >= 0) outs.push_back(v);
  return subgraph(g, {n}, ins, outs);
}

}  // namespace fusor
