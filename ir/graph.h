// The static-shape graph: typed values, nodes with ONNX-style attributes, graph inputs/outputs.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/tensor.h"

namespace fusor {

struct Graph;

// An attribute value, as in ONNX AttributeProto (FLOAT is kept as double; GRAPH is an immutable
// subgraph shared by copies of the node, see frontend/onnx_import.h for how it reads outer values).
using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>, Tensor,
                               std::vector<std::string>, std::shared_ptr<const Graph>>;

struct Value {
  std::string name;
  DType dtype = DType::undefined;
  Shape shape;                     // static shape; dims < 0 are unknown (symbolic) until bound
  bool shape_known = false;
  std::optional<Tensor> constant;  // initializer, Constant node output or folded value
  int producer = -1;               // index of the producing node, -1 for inputs/constants
  // Graph inputs only: the ONNX dim_param of each dim ("" for a fixed or unnamed dim), so
  // `--dim batch=8` can bind every dim called "batch" (runtime/session.h InputDims).
  std::vector<std::string> dim_params;
  // A sequence value (ONNX seq(tensor)): its element values, in order, set when shape inference
  // expands the op that makes it (ir/ops/sequence.cpp); dtype is the elements' dtype. Only the
  // sequence ops and Identity read one, and each is expanded into tensor ops, so a static
  // graph's nodes never refer to a sequence.
  std::optional<std::vector<int>> sequence;
  // A node folded at load read this computed value (its shape: Shape, Size), so it was read
  // though no kernel reads it (ir/passes.h add_lookup_checks leaves such a lookup alone, as
  // onnxruntime's optimizer does).
  bool shape_read = false;
};

// v as the float32 an ONNX FLOAT attribute holds (finite values past float32's range, which no
// attribute can hold, are kept as they are).
inline double onnx_float(double v) {
  return v > 3.4028234663852886e38 || v < -3.4028234663852886e38 ? v : static_cast<double>(static_cast<float>(v));
}

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;            // "" or "ai.onnx" for the default domain
  std::vector<int> inputs;       // value ids, -1 for an omitted optional input
  std::vector<int> outputs;      // value ids, -1 for an omitted optional output
  std::map<std::string, AttrValue> attrs;
  int opset = 17;                // opset of the node's domain in its model
  // Set by the decomposition only (ir/decompose.cpp), never by the importer: a MatMul or Conv
  // of fp16/bf16 operands whose output is float32 (the fp32 sum, not rounded to the operands'
  // dtype), so that the epilogue of the Gemm/Conv it came from rounds once (one ONNX node).
  bool f32_result = false;
  // Set by the importer and the builder on the nodes the model itself wrote: infer_shapes checks
  // such a node against its ONNX schema's type constraints (ir/type_constraints.h) when it first
  // infers it, then clears the flag, so the nodes fusor's own expansions and rewrites make (and
  // copy from it) are not held to the schema.
  bool check_types = false;

  bool has_attr(const std::string& k) const { return attrs.count(k) != 0; }
  int64_t attr_i(const std::string& k, int64_t dflt) const;
  // FLOAT attributes are float32 in ONNX, and so are the schema's defaults: an absent
  // attribute reads as dflt rounded to float32 (epsilon 1e-5 is 9.99999974738e-06, as in
  // onnxruntime; it matters in float64 graphs), see onnx_float.
  double attr_f(const std::string& k, double dflt) const;
  std::string attr_s(const std::string& k, const std::string& dflt) const;
  std::vector<int64_t> attr_ints(const std::string& k, std::vector<int64_t> dflt = {}) const;
  // A STRINGS attribute (one STRING is a list of one); empty when absent. Error("onnx") naming
  // the attribute when it has another type.
  std::vector<std::string> attr_strings(const std::string& k) const;
  std::vector<double> attr_floats(const std::string& k, std::vector<double> dflt = {}) const;  // dflt as float32 too
  const Tensor* attr_t(const std::string& k) const;
  const Graph* attr_g(const std::string& k) const;  // nullptr when absent
  int num_inputs() const;          // index of last present input + 1
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] >= 0; }
  std::string label() const;       // "node 'Conv_12' (Conv)" for error messages
};

struct Graph {
  std::string name;
  std::vector<Value> values;
  std::vector<Node> nodes;         // topologically ordered after import (import sorts them)
  std::vector<int> inputs;         // runtime inputs (initializers are not listed here)
  std::vector<int> outputs;
  // Values computed only for the error their computation may raise, never returned: a lookup
  // of run-time indices whose result nothing else computes from (ir/passes.h add_lookup_checks).
  // Dead-code elimination keeps them and fusion stores them (Buffer::check) like outputs.
  std::vector<int> checks;
  int opset = 17;                  // default-domain opset
  // Subgraphs (If/Loop/Scan bodies): how many of `inputs` are the GraphProto's own formal inputs;
  // the rest are outer values it captures (frontend/onnx_import.h). -1: all are formal.
  int formal_inputs = -1;
  // Main graph, ONNX IR >= 4: initializers that graph.input also lists, in graph.input order.
  // Each is a default the caller may override (as in onnxruntime): the Value stays a constant
  // (it folds and uploads like any weight) unless a run feeds it, when specialize turns it into
  // a graph input (runtime/session.h). shape: the declared graph-input shape (-1: a free dim)
  // that a fed value must fit, when shape_known; otherwise any shape may be fed.
  struct Overridable {
    int value = -1;
    Shape shape;
    bool shape_known = false;
  };
  std::vector<Overridable> overridable;
  // Main graph: (output value, the dtype its ValueInfo declares) for each declared graph output.
  // infer_shapes refuses a graph output (still one of `outputs`) computed in another dtype, as
  // onnxruntime does; declared output shapes do not bind (onnxruntime only warns).
  std::vector<std::pair<int, DType>> declared_output_dtypes;
  // Set by runtime/session.cpp while it specialises on values computed inside the model. A value
  // that an op's expansion creates (a node of an inlined If branch) has no id in the model, so
  // it is named: infer_shapes makes a value of one of these names this constant as soon as its
  // producer is inferred, and with stop_after set it stops after the node that makes that value,
  // which becomes the graph's only output (the nodes after it are dropped).
  std::map<std::string, Tensor> known_by_name;
  std::string stop_after;
  // Main graph: how each output is handed to the caller when it stands for more than the tensor
  // computed (ir/output_forms.h): empty, or one per output. Set at load by encode_output_forms.
  struct OutputForm {
    enum class Kind { tensor, labels, zipmap };
    Kind kind = Kind::tensor;
    // labels: the output is int64 codes into `strings` (a classifier's classlabels_strings),
    //         handed out as a string tensor of the same shape (present_outputs).
    // zipmap: the output is the float [N, C] (or [C]) tensor ZipMap read; row r is the map
    //         key_j -> value[r, j] (ai.onnx.ml ZipMap, seq(map(int64 | string, float))), its keys
    //         `strings` when string_keys, else `int_keys`.
    bool string_keys = false;
    std::vector<std::string> strings;
    std::vector<int64_t> int_keys;
  };
  std::vector<OutputForm> output_forms;
  // Main graph: string graph inputs (categorical columns of scikit-learn pipelines) run as int64
  // codes into input_strings (sorted, distinct; a string in no table is -1), set at load by
  // encode_string_inputs (ir/output_forms.h). string_inputs: empty, or one flag per input.
  std::vector<std::string> input_strings;
  std::vector<char> string_inputs;

  int add_value(std::string name, DType dtype = DType::undefined, Shape shape = {}, bool shape_known = false);
  int add_constant(std::string name, Tensor t);
  int find_value(const std::string& name) const;  // -1 if absent
  // Appends a node and sets the producer of its outputs.
  int add_node(Node n);
  void reindex_producers();
  std::string unique_name(const std::string& base);

 private:
  int name_counter_ = 0;
};

// Throws Error("graph", ...) when a node's input or output (other than -1, omitted), a
// graph input or output (subgraphs included) names no value of its graph, or a value's dtype is
// not a DType. Graphs from the importer and GraphBuilder pass; hand-edited ones are checked by
// topo_sort, specialize and Session.
void check_graph_ids(const Graph& g);
// Sorts g.nodes topologically (check_graph_ids first); throws Error("graph", ...) on a cycle or
// an input with no producer.
void topo_sort(Graph& g);

// Every backend (ref, cpu, the GPUs and their host fallback) refuses a graph in which a graph
// input or output, or a node's input or output, is a string tensor, with the same line:
// Unsupported("graph", "value 'a': string tensors are not supported (...)"). Backends used to
// differ (ref ran Shape/Gather/Concat of strings, cpu refused, vulkan ran some on the host).
void refuse_string_values(const Graph& g);

}  // namespace fusor
