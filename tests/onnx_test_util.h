// Helpers for tests that build ONNX protobufs directly (control flow, local functions, the
// red-team round 7 models).
#pragma once
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "frontend/onnx_import.h"
#include "ir/graph.h"
#include "ir/tensor.h"

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

// One node of `op` (domain com.microsoft unless `domain` says otherwise) over graph inputs of
// the given tensors' dtypes and shapes ("" names an omitted input), outputs out_names.
struct OneNode {
  std::string op, domain = "com.microsoft";
  std::vector<std::pair<std::string, Tensor>> inputs;
  std::vector<std::string> outputs{"y"};
  std::function<void(onnx::NodeProto*)> attrs = [](onnx::NodeProto*) {};
  int domain_version = 1, opset = 17;
  bool import_domain = true;  // false: the model's opset_import leaves domain out
  Graph graph() const {
    onnx::ModelProto m = onnx_model("contrib", 8, opset);
    if (!domain.empty() && import_domain) {
      auto* imp = m.add_opset_import();
      imp->set_domain(domain);
      imp->set_version(domain_version);
    }
    auto* g = m.mutable_graph();
    std::vector<std::string> names;
    for (const auto& [name, t] : inputs) {
      names.push_back(name);
      if (name.empty()) continue;
      auto* vi = g->add_input();
      vi->set_name(name);
      auto* tt = vi->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(dtype_to_onnx(t.dtype()));
      for (int64_t d : t.shape()) tt->mutable_shape()->add_dim()->set_dim_value(d);
    }
    auto* n = onnx_node(g, op, names, outputs);
    n->set_domain(domain);
    attrs(n);
    for (const std::string& o : outputs)
      if (!o.empty()) g->add_output()->set_name(o);
    return load_proto(m);
  }
  std::vector<Tensor> feeds() const {
    std::vector<Tensor> f;
    for (const auto& [name, t] : inputs)
      if (!name.empty()) f.push_back(t);
    return f;
  }
};

inline void attr_f(onnx::NodeProto* n, const std::string& k, float v) {
  auto* a = n->add_attribute();
  a->set_name(k);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
inline void attr_i(onnx::NodeProto* n, const std::string& k, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(k);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

inline void attr_floats(onnx::NodeProto* n, const std::string& k, const std::vector<double>& v) {
  auto* a = n->add_attribute();
  a->set_name(k);
  a->set_type(onnx::AttributeProto::FLOATS);
  for (double x : v) a->add_floats(static_cast<float>(x));
}
inline void attr_ints(onnx::NodeProto* n, const std::string& k, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(k);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
inline void attr_s(onnx::NodeProto* n, const std::string& k, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(k);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}
inline void attr_strings(onnx::NodeProto* n, const std::string& k, const std::vector<std::string>& v) {
  auto* a = n->add_attribute();
  a->set_name(k);
  a->set_type(onnx::AttributeProto::STRINGS);
  for (const auto& x : v) a->add_strings(x);
}
// A TENSOR attribute: a 1-D tensor of ONNX type `elem` (FLOAT, DOUBLE, INT64, or an int32_data
// type: INT32, UINT8 ...) with values v.
inline void attr_tensor(onnx::NodeProto* n, const std::string& k, int elem, const std::vector<double>& v) {
  auto* a = n->add_attribute();
  a->set_name(k);
  a->set_type(onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_name(k);
  t->set_data_type(elem);
  t->add_dims(static_cast<int64_t>(v.size()));
  for (double x : v) {
    if (elem == onnx::TensorProto::DOUBLE) t->add_double_data(x);
    else if (elem == onnx::TensorProto::FLOAT) t->add_float_data(static_cast<float>(x));
    else if (elem == onnx::TensorProto::INT64) t->add_int64_data(static_cast<int64_t>(x));
    else t->add_int32_data(static_cast<int32_t>(x));
  }
}

}  // namespace fusor::testing
