// The model fuzzing harness shared by the bounded property test run from ctest
// (tests/test_fuzz_models.cpp) and the libFuzzer target (tools/fuzz/fuzz_models.cpp):
// seed models, mutations, and one "import + shape inference + plan + reference run" of a
// serialized model. Bad input must end in a fusor::Error; anything else (another exception,
// a sanitizer report, a crash, a hang) is a bug.
#pragma once
#include <climits>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "backends/backend.h"
#include "frontend/onnx_import.h"
#include "ir/kernel_spec.h"
#include "runtime/session.h"

namespace fusor::fuzz {

inline void set_type(onnx::ValueInfoProto* vi, const std::string& name, int elem, const std::vector<int64_t>& dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  for (auto d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

inline onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& in,
                                 const std::vector<std::string>& out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + std::to_string(g->node_size()));
  for (auto& s : in) n->add_input(s);
  for (auto& s : out) n->add_output(s);
  return n;
}

inline void add_ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}
inline void add_int(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

inline void add_init(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims,
                     const std::vector<float>& v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) t->add_dims(d);
  for (float x : v) t->add_float_data(x);
}
inline void add_init_i64(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims,
                         const std::vector<int64_t>& v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (auto d : dims) t->add_dims(d);
  for (int64_t x : v) t->add_int64_data(x);
}

inline onnx::ModelProto new_model(int opset = 17) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  m.mutable_graph()->set_name("fuzz");
  return m;
}

// z = x - y over float [2, 3]: a model whose two inputs give different results when swapped
// (binding tests), and whose stored outputs are easy to get right or wrong (CLI tests).
inline onnx::ModelProto sub_model_proto() {
  auto m = new_model(17);
  auto* g = m.mutable_graph();
  set_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
  set_type(g->add_input(), "y", onnx::TensorProto::FLOAT, {2, 3});
  add_node(g, "Sub", {"x", "y"}, {"z"});
  set_type(g->add_output(), "z", onnx::TensorProto::FLOAT, {2, 3});
  return m;
}

// A Loop node `name` (M, no cond, v0) -> vf whose body takes i (int64) and cin (bool); the
// caller adds the carried value's input, the body's nodes and its outputs.
inline onnx::GraphProto* add_loop(onnx::GraphProto* g, const std::string& name, const std::string& v0 = "v0",
                                  const std::string& vf = "vf") {
  auto* loop = add_node(g, "Loop", {"M", "", v0}, {vf});
  loop->set_name(name);
  auto* a = loop->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  auto* body = a->mutable_g();
  body->set_name("body");
  set_type(body->add_input(), "i", onnx::TensorProto::INT64, {});
  set_type(body->add_input(), "cin", onnx::TensorProto::BOOL, {});
  return body;
}

// Small hand-made graphs covering the importer's and planner's main paths: element-wise
// chains, broadcasting, reductions, MatMul/Gemm, views (Reshape/Transpose/Slice), Concat,
// Conv/pooling, Range and shape-computing subgraphs, a Sum fan-in.
inline std::vector<std::string> seed_models() {
  std::vector<onnx::ModelProto> ms;
  constexpr int F = onnx::TensorProto::FLOAT;
  {
    auto m = new_model();
    auto* g = m.mutable_graph();
    set_type(g->add_input(), "x", F, {2, 3, 4});
    add_init(g, "b", {4}, {0.5, -1, 2, 0.25});
    add_node(g, "Add", {"x", "b"}, {"a"});
    add_node(g, "Relu", {"a"}, {"r"});
    add_node(g, "Softmax", {"r"}, {"s"});
    add_ints(add_node(g, "ReduceMean", {"s"}, {"y"}), "axes", {1});
    set_type(g->add_output(), "y", F, {});
    ms.push_back(m);
  }
  {
    auto m = new_model();
    auto* g = m.mutable_graph();
    set_type(g->add_input(), "x", F, {4, 6});
    add_init(g, "w", {6, 3}, std::vector<float>(18, 0.5f));
    add_init_i64(g, "shape", {2}, {2, -1});
    add_node(g, "MatMul", {"x", "w"}, {"mm"});
    add_node(g, "Tanh", {"mm"}, {"t"});
    add_node(g, "Reshape", {"t", "shape"}, {"rs"});
    add_ints(add_node(g, "Transpose", {"rs"}, {"y"}), "perm", {1, 0});
    set_type(g->add_output(), "y", F, {});
    ms.push_back(m);
  }
  {
    auto m = new_model();
    auto* g = m.mutable_graph();
    set_type(g->add_input(), "x", F, {1, 2, 6, 6});
    add_init(g, "w", {3, 2, 3, 3}, std::vector<float>(54, 0.1f));
    auto* c = add_node(g, "Conv", {"x", "w"}, {"c"});
    add_ints(c, "pads", {1, 1, 1, 1});
    auto* p = add_node(g, "MaxPool", {"c"}, {"p"});
    add_ints(p, "kernel_shape", {2, 2});
    add_ints(p, "strides", {2, 2});
    add_node(g, "Sigmoid", {"p"}, {"y"});
    set_type(g->add_output(), "y", F, {});
    ms.push_back(m);
  }
  {
    auto m = new_model();
    auto* g = m.mutable_graph();
    set_type(g->add_input(), "x", F, {3, 5});
    add_init_i64(g, "starts", {2}, {0, 1});
    add_init_i64(g, "ends", {2}, {2, INT64_MAX});
    add_init_i64(g, "axes", {2}, {0, 1});
    add_init_i64(g, "steps", {2}, {1, 2});
    add_node(g, "Slice", {"x", "starts", "ends", "axes", "steps"}, {"sl"});
    add_node(g, "Shape", {"sl"}, {"sh"});
    add_node(g, "ConstantOfShape", {"sh"}, {"z"});
    add_node(g, "Add", {"sl", "z"}, {"a"});
    add_int(add_node(g, "Concat", {"a", "sl"}, {"y"}), "axis", 0);
    set_type(g->add_output(), "y", F, {});
    ms.push_back(m);
  }
  {
    auto m = new_model();
    auto* g = m.mutable_graph();
    set_type(g->add_input(), "x", F, {5});
    add_init_i64(g, "s", {}, {0});
    add_init_i64(g, "l", {}, {5});
    add_init_i64(g, "d", {}, {1});
    add_node(g, "Range", {"s", "l", "d"}, {"r"});
    add_int(add_node(g, "Cast", {"r"}, {"rf"}), "to", 1);
    std::vector<std::string> ins;
    for (int i = 0; i < 6; ++i) ins.push_back(i % 2 ? "x" : "rf");
    add_node(g, "Sum", ins, {"sum"});
    add_node(g, "Mul", {"sum", "sum"}, {"y"});
    set_type(g->add_output(), "y", F, {});
    ms.push_back(m);
  }
  {  // model-local functions (frontend/onnx_functions.h): a nested call, attribute references, a default
    auto m = new_model();
    auto* op = m.add_opset_import();
    op->set_domain("local");
    op->set_version(1);
    auto* g = m.mutable_graph();
    set_type(g->add_input(), "x", F, {2, 3});
    add_init(g, "b", {3}, {0.5, -1, 2});
    auto* blk = add_node(g, "Blk", {"x", "b"}, {"t"});
    blk->set_domain("local");
    auto* slope = blk->add_attribute();
    slope->set_name("slope");
    slope->set_type(onnx::AttributeProto::FLOAT);
    slope->set_f(0.2f);
    add_node(g, "Act", {"t"}, {"y"})->set_domain("local");
    set_type(g->add_output(), "y", F, {});
    auto function = [&](const std::string& name, std::vector<std::string> in, const std::string& ref_from) {
      auto* f = m.add_functions();
      f->set_domain("local");
      f->set_name(name);
      for (auto& i : in) f->add_input(i);
      f->add_output("Y");
      for (const char* d : {"", "local"}) {
        auto* o = f->add_opset_import();
        o->set_domain(d);
        o->set_version(d[0] ? 1 : 17);
      }
      onnx::GraphProto body;  // nodes built with add_node, then moved into the function
      if (in.size() == 2) add_node(&body, "Add", {"X", "B"}, {"T"});
      auto* n = add_node(&body, in.size() == 2 ? "Act" : "LeakyRelu", {in.size() == 2 ? "T" : "X"}, {"Y"});
      if (in.size() == 2) n->set_domain("local");
      auto* a = n->add_attribute();
      a->set_name("alpha");
      a->set_ref_attr_name(ref_from);
      a->set_type(onnx::AttributeProto::FLOAT);
      for (auto& bn : body.node()) *f->add_node() = bn;
      return f;
    };
    function("Blk", {"X", "B"}, "slope")->add_attribute("slope");
    onnx::AttributeProto dflt;  // attribute_proto (IR 9): unknown field 11 to libonnx 1.12
    dflt.set_name("alpha");
    dflt.set_type(onnx::AttributeProto::FLOAT);
    dflt.set_f(0.5f);
    function("Act", {"X"}, "alpha")->mutable_unknown_fields()->AddLengthDelimited(11, dflt.SerializeAsString());
    ms.push_back(m);
  }
  std::vector<std::string> out;
  for (auto& m : ms) out.push_back(m.SerializeAsString());
  return out;
}

// Extreme and ordinary integers a mutation substitutes.
inline int64_t interesting_int(std::mt19937_64& rng) {
  static const int64_t v[] = {0, 1, -1, 2, 3, 7, 64, -2, 1 << 20, int64_t{1} << 31, int64_t{1} << 62, (int64_t{1} << 62) + 1,
                              INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, -(int64_t{1} << 40)};
  return v[rng() % (sizeof v / sizeof v[0])];
}

// One structured mutation of a parsed model (dims, attributes, op types, wiring, opsets), or a
// byte-level one (flip, truncate, splice) of its serialization.
inline std::string mutate(const std::string& bytes, std::mt19937_64& rng) {
  onnx::ModelProto m;
  if (rng() % 4 == 0 || !m.ParseFromString(bytes)) {
    std::string b = bytes;
    if (b.empty()) return b;
    switch (rng() % 4) {
      case 0: for (int k = 0; k < 4; ++k) b[rng() % b.size()] ^= static_cast<char>(1u << (rng() % 8)); break;
      case 1: b.resize(rng() % b.size()); break;
      case 2: b[rng() % b.size()] = static_cast<char>(rng()); break;
      default: b.insert(rng() % b.size(), b.substr(rng() % b.size(), 1 + rng() % 16)); break;
    }
    return b;
  }
  static const char* ops[] = {"Relu", "Add", "Mul", "Reshape", "Transpose", "Slice", "Range", "Expand", "Concat",
                              "Gather", "ReduceSum", "MatMul", "Softmax", "Cast", "Where", "Pad", "Tile", "Sum",
                              "MaxPool", "Conv", "DepthToSpace", "Split", "Unsqueeze", "Squeeze", "Flatten", "Clip"};
  auto* g = m.mutable_graph();
  const int rounds = 1 + static_cast<int>(rng() % 3);
  for (int r = 0; r < rounds; ++r) {
    switch (rng() % 10) {
      case 0:
        if (g->input_size()) {
          auto* sh = g->mutable_input(static_cast<int>(rng() % g->input_size()))->mutable_type()->mutable_tensor_type()->mutable_shape();
          if (sh->dim_size()) sh->mutable_dim(static_cast<int>(rng() % sh->dim_size()))->set_dim_value(interesting_int(rng));
        }
        break;
      case 1:
        if (g->node_size()) g->mutable_node(static_cast<int>(rng() % g->node_size()))->set_op_type(ops[rng() % (sizeof ops / sizeof ops[0])]);
        break;
      case 2:
        for (auto& n : *g->mutable_node())
          for (auto& a : *n.mutable_attribute()) {
            if (rng() % 3) continue;
            if (a.type() == onnx::AttributeProto::INT) a.set_i(interesting_int(rng));
            if (a.type() == onnx::AttributeProto::INTS && a.ints_size()) a.set_ints(static_cast<int>(rng() % a.ints_size()), interesting_int(rng));
          }
        break;
      case 3:
        for (auto& t : *g->mutable_initializer()) {
          if (rng() % 2) continue;
          for (int i = 0; i < t.int64_data_size(); ++i) t.set_int64_data(i, interesting_int(rng));
          for (int i = 0; i < t.float_data_size(); ++i)
            if (rng() % 3 == 0) t.set_float_data(i, static_cast<float>(interesting_int(rng)));
        }
        break;
      case 4:
        if (g->node_size() > 1) {
          auto* n = g->mutable_node(static_cast<int>(rng() % g->node_size()));
          const auto& other = g->node(static_cast<int>(rng() % g->node_size()));
          if (n->input_size() && other.output_size()) n->set_input(static_cast<int>(rng() % n->input_size()), other.output(0));
        }
        break;
      case 5:
        if (g->node_size()) {
          auto* n = g->mutable_node(static_cast<int>(rng() % g->node_size()));
          if (rng() % 2) n->add_output(n->name() + "_extra");
          else n->add_input(g->input_size() ? g->input(0).name() : "");
        }
        break;
      case 6:
        if (m.opset_import_size()) m.mutable_opset_import(0)->set_version(static_cast<int64_t>(rng() % 32) - 2);
        break;
      case 7:
        if (g->node_size()) {
          auto* a = g->mutable_node(static_cast<int>(rng() % g->node_size()))->add_attribute();
          static const char* names[] = {"axis", "axes", "perm", "to", "blocksize", "keepdims", "pads", "kernel_shape", "split"};
          a->set_name(names[rng() % 9]);
          if (rng() % 2) a->set_type(onnx::AttributeProto::INT), a->set_i(interesting_int(rng));
          else a->set_type(onnx::AttributeProto::FLOAT), a->set_f(6.9f);
        }
        break;
      case 9:  // a model-local function's body: calls (incl. itself), wiring, outputs, a twin
        if (m.functions_size()) {
          auto* f = m.mutable_functions(static_cast<int>(rng() % m.functions_size()));
          auto* n = f->node_size() ? f->mutable_node(static_cast<int>(rng() % f->node_size())) : nullptr;
          switch (rng() % 5) {
            case 0:
              if (n) n->set_op_type(m.functions(static_cast<int>(rng() % m.functions_size())).name()), n->set_domain("local");
              break;
            case 1:
              if (n && n->input_size()) n->set_input(static_cast<int>(rng() % n->input_size()), rng() % 2 ? "Y" : (rng() % 2 ? "" : "nope"));
              break;
            case 2:
              if (rng() % 2) f->add_output("Q");
              else f->add_input("Extra");
              break;
            case 3:
              if (n)
                for (auto& a : *n->mutable_attribute()) a.set_ref_attr_name(rng() % 2 ? "missing" : "");
              break;
            default:
              *m.add_functions() = *f;
              break;
          }
        }
        break;
      default:
        if (g->node_size() > 1) g->mutable_node()->SwapElements(0, static_cast<int>(rng() % g->node_size()));
        break;
    }
  }
  return m.SerializeAsString();
}

// Import, specialise on seeded inputs, plan (fused and not) and run the reference when the
// model is small. Returns true when it ran through (or was too big to run), false on a
// fusor::Error (its message in *error when given); anything else escapes.
inline bool run_one(const std::string& bytes, bool run_reference = true, std::string* error = nullptr) {
  try {
    Graph g = load_onnx_from_bytes(bytes, ".");
    // Inputs past a million elements are not worth a fuzz iteration (and are refused by the
    // memory checks long before they could be allocated on a real run); under ASan `ref`
    // takes seconds per op at that size, which would read as a hang.
    constexpr int64_t kMaxElements = int64_t{1} << 20;
    for (int v : g.inputs) {
      int64_t n = 1;
      for (int64_t d : g.values[v].shape)
        if (d > 0 && (n = d > kMaxElements / n ? 2 * kMaxElements : n * d) > kMaxElements) return true;
    }
    std::vector<Tensor> inputs = random_inputs(g, 1);
    Graph sg = specialize(g, inputs);
    int64_t total = 0;
    for (auto& v : sg.values) total += v.shape_known ? std::min<int64_t>(shape_numel(v.shape), int64_t{1} << 40) : 0;
    if (total > kMaxElements) return true;
    build_plan(sg, {true});
    build_plan(sg, {false});
    if (run_reference) run_on_backend("ref", sg, inputs);
    return true;
  } catch (const Error& e) {
    // the expected outcome for a bad model
    if (error) *error = e.what();
    return false;
  }
}

}  // namespace fusor::fuzz
