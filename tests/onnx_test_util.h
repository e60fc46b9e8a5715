// Helpers for tests that build ONNX protobufs directly (control flow, local functions, the
// red-team round 7 models).
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "frontend/onnx_import.h"
#include "ir/graph.h"

namespace fusor::testing {

// An empty model (default domain at `opset`) whose graph is named `name`.
inline onnx::ModelProto onnx_model(const std::string& name, int ir = 8, int opset = 17) {
  onnx::ModelProto m;
  m.set_ir_version(ir);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  m.mutable_graph()->set_name(name);
  return m;
}

// A node of g named after its first output ("<out>_node").
inline onnx::NodeProto* onnx_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& in,
                                  const std::vector<std::string>& out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(out.at(0) + "_node");
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return n;
}

// A value_info of `elem` (TensorProto type) with the given dims; dim 0 symbolic ("N") with dynamic0.
inline void onnx_value_info(onnx::ValueInfoProto* vi, const std::string& name, int elem, const std::vector<int64_t>& dims,
                            bool dynamic0 = false) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* s = tt->mutable_shape();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i == 0 && dynamic0) s->add_dim()->set_dim_param("N");
    else s->add_dim()->set_dim_value(dims[i]);
  }
}

// A GRAPH attribute `attr` of n, its graph named after it (If's branches, FlexAttention's mods).
inline onnx::GraphProto* onnx_graph_attr(onnx::NodeProto* n, const std::string& attr) {
  auto* a = n->add_attribute();
  a->set_name(attr);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(attr);
  return a->mutable_g();
}

// m serialized and imported as a model file would be.
inline Graph load_proto(const onnx::ModelProto& m) {
  std::string bytes;
  EXPECT_TRUE(m.SerializeToString(&bytes));
  return load_onnx_from_bytes(bytes, "");
}

}  // namespace fusor::testing
