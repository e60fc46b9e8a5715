// Small helpers shared by the op files (ir/ops/*.cpp): optional inputs/outputs of a reference
// call, reference errors, and element access as double / int64.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "ir/op_table.h"
#include "ir/scalar.h"

namespace fusor::op_helpers {

using Ins = std::vector<const Tensor*>;
using Outs = std::vector<Tensor>;

inline const Tensor* opt_in(const Ins& in, size_t i) { return i < in.size() ? in[i] : nullptr; }
inline int out_of(const Node& n, size_t k) { return k < n.outputs.size() ? n.outputs[k] : -1; }  // output k, or -1 when absent
// Output k when some node or the graph's outputs read it, else -1: exporters name optional
// outputs nothing reads (onnxscript's ORT fusions write SkipSimplifiedLayerNormalization's mean
// and inv_std_var), which a decomposition that cannot compute them may then leave out.
inline int read_out_of(const Graph& g, const Node& n, size_t k) {
  const int v = out_of(n, k);
  if (v < 0) return -1;
  for (int o : g.outputs)
    if (o == v) return v;
  for (const Node& m : g.nodes)
    for (int i : m.inputs)
      if (i == v) return v;
  return -1;
}
inline bool has_out(const Outs& o, size_t i) { return i < o.size() && o[i].defined(); }

// Copies count elements from src[s..] to dst[d..] (strings by value, everything else as bytes).
inline void copy_elems(const Tensor& src, int64_t s, Tensor& dst, int64_t d, int64_t count) {
  if (count <= 0) return;
  if (src.dtype() == DType::string) {
    std::copy_n(src.strings.begin() + s, count, dst.strings.begin() + d);
    return;
  }
  const size_t es = dtype_size(src.dtype());
  std::memcpy(dst.raw() + d * es, src.raw() + s * es, static_cast<size_t>(count) * es);
}
[[noreturn]] inline void ref_fail(const Node& n, const std::string& why) { throw Error("ref", n.label() + ": " + why); }

// All elements as double (f32 read directly, other dtypes through Tensor::get).
inline std::vector<double> load_doubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  if (t.dtype() == DType::f32) {
    const float* p = t.data<float>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = p[i];
  } else {
    for (size_t i = 0; i < v.size(); ++i) v[i] = t.get(static_cast<int64_t>(i));
  }
  return v;
}

// Writes n doubles into t starting at element off (f32 without the per-element dtype switch).
inline void store_doubles(Tensor& t, int64_t off, const double* v, int64_t n) {
  if (t.dtype() == DType::f32) {
    float* p = t.data<float>() + off;
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(v[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) t.set(off + i, v[i]);
  }
}
inline void store_doubles(Tensor& t, const std::vector<double>& v) {
  store_doubles(t, 0, v.data(), static_cast<int64_t>(v.size()));
}

// Shape arithmetic on values a model supplies (pads, split sizes, repeats, block sizes, window
// attributes): a result int64 cannot hold is Error("shape") naming the node, never signed-overflow UB.
inline int64_t shape_add(const Node& n, int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    throw Error("shape", n.label() + ": " + std::to_string(a) + " + " + std::to_string(b) + " overflows int64");
  return r;
}
inline int64_t shape_mul(const Node& n, int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw Error("shape", n.label() + ": " + std::to_string(a) + " * " + std::to_string(b) + " overflows int64");
  return r;
}

// A double as int64 without UB (a cast of a value past int64 is undefined): truncates toward
// zero, saturates at the int64 limits, NaN gives nan_value.
inline int64_t saturate_int64(double v, int64_t nan_value = 0) {
  if (std::isnan(v)) return nan_value;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(v);
}

// Element e of an integer tensor as an int64 that orders like the value: uint64 has its sign bit
// flipped (2^64 - 1 above 0), every other integer dtype fits int64 as it is.
inline int64_t ordered_int(const Tensor& t, int64_t e) {
  const int64_t v = t.get_int(e);
  return t.dtype() == DType::u64 ? v ^ INT64_MIN : v;
}

// All elements as int64 (exact for integer dtypes).
inline std::vector<int64_t> ints_of(const Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = t.get_int(static_cast<int64_t>(i));
  return v;
}

// One table entry; a helper rather than designated initializers, which -Wextra flags for the
// optional members left out.
inline OpDef table_entry(std::string name, int min_in, int max_in, InferFn infer, ReferenceFn ref, int max_out = 1) {
  OpDef d;
  d.name = std::move(name);
  d.min_inputs = min_in, d.max_inputs = max_in, d.min_outputs = 1, d.max_outputs = max_out;
  d.infer = std::move(infer);
  d.reference = std::move(ref);
  return d;
}

// Calls f(out index, a index, b index) over the NumPy broadcast of a and b into out's shape.
template <class F>
inline void broadcast_pairs(const Tensor& a, const Tensor& b, const Shape& out, F f) {
  const std::vector<int64_t> sa = broadcast_strides(a.shape(), out), sb = broadcast_strides(b.shape(), out);
  const int r = static_cast<int>(out.size());
  std::vector<int64_t> idx(static_cast<size_t>(r), 0);
  int64_t ia = 0, ib = 0;
  const int64_t n = shape_numel(out);
  for (int64_t o = 0; o < n; ++o) {
    f(o, ia, ib);
    for (int d = r - 1; d >= 0; --d) {
      ia += sa[d], ib += sb[d];
      if (++idx[d] < out[d]) break;
      ia -= sa[d] * out[d], ib -= sb[d] * out[d];
      idx[d] = 0;
    }
  }
}

// def marked OpDef::never_raises (no run-time check of its inputs' values can fail).
inline OpDef never_raising(OpDef d) {
  d.never_raises = true;
  return d;
}

// Nodes an op's `expand` (OpDef::expand) writes in place of node `index` of g: op() appends a
// node (opset 21 unless given) and returns its output value (a fresh one, or `out`); ints() a
// constant int64 vector; replace() swaps them in for the node and re-indexes producers.
struct RewriteNodes {
  Graph& g;
  std::string base;  // the replaced node's name: every new name starts with it
  std::vector<Node> nodes;
  int op(const std::string& type, std::vector<int> ins, std::map<std::string, AttrValue> attrs = {}, int out = -1,
         int opset = 21) {
    Node m;
    m.name = g.unique_name(base + "/" + type);
    m.op_type = type;
    m.opset = opset;
    m.inputs = std::move(ins);
    m.attrs = std::move(attrs);
    m.outputs = {out >= 0 ? out : g.add_value(m.name + ":0")};
    nodes.push_back(m);
    return m.outputs[0];
  }
  int ints(const std::vector<int64_t>& v) {
    Tensor t(DType::i64, {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) t.set_int(static_cast<int64_t>(i), v[i]);
    return g.add_constant(g.unique_name(base + "/ints"), std::move(t));
  }
  // Appends subgraph b's nodes (an If branch, FlexAttention's score_mod), its inputs bound in
  // order to the values in `inputs` (formal ones, then the captured outer values); every other
  // value of b becomes a fresh value (a constant stays one) named "<base>/<name>", its nodes
  // "<base>/<node name>". Returns the values of b's outputs.
  std::vector<int> inline_graph(const Graph& b, const std::vector<int>& inputs) {
    std::vector<int> id(b.values.size(), -1);
    for (size_t i = 0; i < inputs.size() && i < b.inputs.size(); ++i) id[b.inputs[i]] = inputs[i];
    for (size_t v = 0; v < b.values.size(); ++v) {
      if (id[v] >= 0) continue;
      const Value& bv = b.values[v];
      const std::string nm = g.unique_name(base + "/" + bv.name);
      id[v] = bv.constant ? g.add_constant(nm, *bv.constant) : g.add_value(nm, bv.dtype, bv.shape, bv.shape_known);
    }
    for (const Node& m : b.nodes) {
      Node c = m;
      c.name = base + "/" + m.name;
      for (int& v : c.inputs) v = v >= 0 ? id[v] : -1;
      for (int& v : c.outputs) v = v >= 0 ? id[v] : -1;
      nodes.push_back(std::move(c));
    }
    std::vector<int> outs;
    for (int o : b.outputs) outs.push_back(id[o]);
    return outs;
  }
  void replace(size_t index) {
    g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(index));
    g.nodes.insert(g.nodes.begin() + static_cast<std::ptrdiff_t>(index), nodes.begin(), nodes.end());
    g.reindex_producers();
  }
};

// Indices into n.inputs of the outer values graph attribute `name` captures, in its input order:
// after the node's own_inputs, each graph attribute's captured values in attribute-name order
// (frontend/onnx_import.h). Throws Error("shape") when the node has too few inputs.
std::vector<int> captured_inputs(const Node& n, const std::string& name, int own_inputs);

// Shape inference (with folding) of a subgraph of node n (an If branch, a Loop/Scan body)
// whose inputs are already bound; NeedsConstant and Unsupported pass through, other errors
// are re-thrown naming n and `part` ("branch", "body"). Defined in ir/ops/control.cpp.
void infer_subgraph(Graph& s, const Node& n, const char* part);
// Runs the nodes a bound subgraph s kept after folding (If branches, Loop / Scan bodies) op by
// op with their references, string support checked as the ref backend checks it; returns the
// values they computed (indexed like s.values; constants stay in s.values[v].constant).
std::vector<Tensor> run_subgraph_nodes(const Graph& s);

// Integer contractions (MatMul / Gemm / Einsum of int and uint types) are computed in integers:
// products and sums wrap modulo 2^64 (uint64 arithmetic: no signed-overflow UB), then wrap to
// the output type, as numpy and onnxruntime do. Through double they clamped at the type's limit
// and lost int64 exactness past 2^53 (red-team round 4).
inline int64_t wrap_mul_add(int64_t acc, int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
// Stores v into element i of an integer tensor, wrapped to its width (set_int truncates).
inline void store_wrapped(Tensor& t, int64_t i, int64_t v) { t.set_int(i, wrap_int(v, t.dtype())); }
// Shape-rule check: input i is a float or integer tensor.
inline void require_numeric(InferContext& ctx, int i) {
  DType t = ctx.dtype(i);
  if (!dtype_is_float(t) && !dtype_is_int(t))
    ctx.fail(std::string("input ") + std::to_string(i) + " must be numeric, got " + dtype_name(t));
}

}  // namespace fusor::op_helpers
