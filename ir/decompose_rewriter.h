// The rewriter the decomposition passes emit primitive nodes with (ir/decompose.cpp and the
// families split from it: ir/decompose_norm.cpp). Internal to ir/; not part of the library's API.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace fusor::decomp {

class Rewriter {
 public:
  explicit Rewriter(Graph& g) : g_(g) {}

  int constant(const std::string& base, Tensor t) { return g_.add_constant(g_.unique_name(base), std::move(t)); }
  // A scalar constant in the float dtype being decomposed (f32, or f64/f16/bf16 for nodes of
  // those dtypes: see rewrite()).
  int scalar(double v) {
    Tensor t(float_dtype, {});
    t.set(0, v);
    return constant("c", std::move(t));
  }
  int ints(const std::vector<int64_t>& v) {
    Tensor t(DType::i64, {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) t.set_int(i, v[i]);
    return constant("shape", std::move(t));
  }
  // The node op() would emit, not emitted (for a rewrite to try first).
  Node make(const std::string& type, std::vector<int> inputs, std::map<std::string, AttrValue> attrs = {}, int out = -1,
            int opset = 13) {
    Node n;
    n.name = g_.unique_name(origin_ + "/" + type);
    n.op_type = type;
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    n.opset = opset;
    if (out < 0) out = g_.add_value(n.name + ":0");
    n.outputs = {out};
    return n;
  }
  // Emits op(inputs) and returns its output value (or writes into `out` when given).
  int op(const std::string& type, std::vector<int> inputs, std::map<std::string, AttrValue> attrs = {}, int out = -1,
         int opset = 13) {
    nodes_.push_back(make(type, std::move(inputs), std::move(attrs), out, opset));
    return nodes_.back().outputs[0];
  }
  // Reduce* over `axes` in its opset-11 form (axes as an attribute), keepdims=1. No axes of a
  // tensor with dims: a reduction of each element alone (InstanceNormalization of [N, C] has no
  // spatial axes), which the opset-11 form would read as every axis (red-team round 14): Sum /
  // Mean / Max / Min are the element, the others (L1, L2, SumSquare, ...) the opset-18 form
  // with noop_with_empty_axes, which applies their element-wise part.
  int reduce(const std::string& type, int x, std::vector<int64_t> axes, int out = -1, bool keep = true) {
    if (axes.empty() && !value(x).shape.empty()) {
      if (type == "ReduceSum" || type == "ReduceMean" || type == "ReduceMax" || type == "ReduceMin") return op("Identity", {x}, {}, out);
      return op(type, {x, ints({})}, {{"keepdims", int64_t{keep ? 1 : 0}}, {"noop_with_empty_axes", int64_t{1}}}, out, 18);
    }
    return op(type, {x}, {{"axes", axes}, {"keepdims", int64_t{keep ? 1 : 0}}}, out, 11);
  }
  void keep(Node n) { nodes_.push_back(std::move(n)); }
  Node& last() { return nodes_.back(); }
  const std::vector<Node>& emitted() const { return nodes_; }
  void set_origin(const std::string& s) { origin_ = s; }
  std::vector<Node> take() { return std::move(nodes_); }
  DType float_dtype = DType::f32;
  const Value& value(int v) const { return g_.values[v]; }

 private:
  Graph& g_;
  std::vector<Node> nodes_;
  std::string origin_;
};

inline std::vector<int64_t> axes_from(int64_t axis, int64_t rank) {
  std::vector<int64_t> a;
  for (int64_t i = axis; i < rank; ++i) a.push_back(i);
  return a;
}

// The divisor that scales |x| (a: the Abs of the values) into [0, 1] over `axes` before their
// squares or powers are summed in fp32: the largest |x|, or 1 where that is 0 or infinite
// (LpNormalization, GlobalLpPool; ref's double sums need no scaling). ir/decompose_norm.cpp.
int largest_or_one(Rewriter& rw, int a, const std::vector<int64_t>& axes);

// The normalizations (LayerNormalization, RMSNormalization, BatchNormalization in both modes,
// InstanceNormalization, GroupNormalization, LpNormalization) as primitives; ir/decompose_norm.cpp.
// False: n is not one of them in a form decomposed here (the op stays).
bool rewrite_normalization(Graph& g, const Node& n, Rewriter& rw);

}  // namespace fusor::decomp
