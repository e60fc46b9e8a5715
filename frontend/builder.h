// A small builder for writing graphs in C++ (tests, benchmarks, examples):
//
//   GraphBuilder b;
//   int x = b.input("x", DType::f32, {2, 3});
//   int w = b.constant("w", weights);
//   int y = b.op("Add", {x, w});
//   int z = b.op("Gemm", {y, w2}, {{"transB", int64_t{1}}});
//   b.output(z);
//   Graph g = b.build();
//
// Values are Graph value ids (int); -1 in an input list is an omitted optional input. Node
// names are "<op_type>_<index>", op outputs "<node name>_out<k>". Output dtypes/shapes are
// left for shape inference. Errors (unknown value id, duplicate name) are Error("builder").
#pragma once
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"

namespace fusor {

class GraphBuilder {
 public:
  using Attrs = std::map<std::string, AttrValue>;

  // opset is stored in Graph::opset and every Node::opset; Error("builder") outside 1..kMaxOpset.
  explicit GraphBuilder(std::string graph_name = "graph", int opset = 17);

  int input(const std::string& name, DType dtype, Shape shape);
  int constant(const std::string& name, Tensor t);
  // Adds a node with one output; returns that output's id.
  int op(const std::string& op_type, const std::vector<int>& inputs, Attrs attrs = {});
  // Adds a node with num_outputs outputs; returns their ids in order.
  std::vector<int> op_multi(const std::string& op_type, const std::vector<int>& inputs, Attrs attrs, int num_outputs);
  void output(int value);

  // Off by default: a built graph may use any dtype the op table computes, beyond the ONNX
  // schemas' type constraints (int8 reductions and MatMul, bfloat16 Conv before opset 22,
  // float64 Celu). On, each node added afterwards is checked as an imported node is
  // (ir/type_constraints.h: Error("onnx") from shape inference).
  void check_onnx_types(bool on = true) { check_types_ = on; }

  // For tweaks the builder does not cover (domains, names); the builder re-reads the value names
  // at its next call (edits through a reference kept past later builder calls are not seen:
  // call graph() again for them).
  Graph& graph() {
    names_dirty_ = true;
    return g_;
  }
  // Topologically sorts and hands the graph over; the builder is empty afterwards.
  Graph build();

 private:
  void check_id(int id, const std::string& what) const;
  int named_value(const std::string& name);
  bool name_used(const std::string& name);  // a value of g_ is called `name`
  int add_named(const std::string& name);   // g_.add_value, indexed

  Graph g_;
  // Every value name of g_ (Graph::find_value is a linear scan: building a graph of n values
  // by it was quadratic, 32,000 nodes 7 s).
  std::unordered_set<std::string> names_;
  bool names_dirty_ = false;
  int opset_;
  bool check_types_ = false;
};

}  // namespace fusor
