// The outputs of `fusor diff`: the reproducer folder (ONNX via libonnx's protobuf classes, as
// the importer reads them), JSON and the text report.
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "ir/small_dtypes.h"
#include "runtime/diff.h"
#include "runtime/tensor_io.h"

namespace fs = std::filesystem;

namespace fusor {

nlohmann::json json_number(double d) { return std::isfinite(d) ? nlohmann::json(d) : nlohmann::json(nullptr); }

namespace {

void to_proto(const Tensor& t, const std::string& name, onnx::TensorProto* p) {
  p->set_name(name);
  p->set_data_type(dtype_to_onnx(t.dtype()));
  for (auto d : t.shape()) p->add_dims(d);
  if (t.dtype() == DType::string)
    for (const auto& s : t.strings) p->add_string_data(s);
  else if (dtype_bits(t.dtype()) < 8)
    p->set_raw_data(pack_small(t));  // int4/int2/float4: packed (ir/small_dtypes.h)
  else
    p->set_raw_data(reinterpret_cast<const char*>(t.raw()), t.nbytes());
}

void value_info(const Value& v, onnx::ValueInfoProto* vi) {
  vi->set_name(v.name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(dtype_to_onnx(v.dtype));
  auto* sh = tt->mutable_shape();
  for (auto d : v.shape) sh->add_dim()->set_dim_value(d);
}

void to_proto(const std::string& name, const AttrValue& a, onnx::AttributeProto* p) {
  using A = onnx::AttributeProto;
  p->set_name(name);
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) p->set_type(A::INT), p->set_i(v);
        else if constexpr (std::is_same_v<T, double>) p->set_type(A::FLOAT), p->set_f(static_cast<float>(v));
        else if constexpr (std::is_same_v<T, std::string>) p->set_type(A::STRING), p->set_s(v);
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          p->set_type(A::INTS);
          for (auto x : v) p->add_ints(x);
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          p->set_type(A::FLOATS);
          for (auto x : v) p->add_floats(static_cast<float>(x));
        } else if constexpr (std::is_same_v<T, Tensor>) {
          p->set_type(A::TENSOR);
          to_proto(v, "", p->mutable_t());
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const Graph>>) {
          throw Unsupported("diff", "attribute '" + name + "' is a subgraph; extracting If/Loop/Scan nodes is not supported");
        } else {
          p->set_type(A::STRINGS);
          for (auto& x : v) p->add_strings(x);
        }
      },
      a);
}

// Nodes of the culprit: the node itself, or (fusion culprit) every node between the values
// its kernel stores and the values it reads (other kernels' stored values, constants, inputs).
std::vector<int> culprit_nodes(const DiffReport& r, std::vector<int>& outputs) {
  const Graph& g = r.graph;
  const DiffCulprit& c = *r.culprit;
  if (c.stage != "fused") {
    for (int o : g.nodes[c.value.node].outputs)
      if (o >= 0 && r.ref_values.count(o)) outputs.push_back(o);
    return {c.value.node};
  }
  std::set<int> stop;
  for (auto& d : r.fused) {
    int v = g.find_value(d.value);
    if (d.kernel == c.value.kernel) outputs.push_back(v);
    else stop.insert(v);
  }
  std::set<int> nodes;
  std::vector<int> todo(outputs);
  while (!todo.empty()) {
    int v = todo.back();
    todo.pop_back();
    int p = g.values[v].producer;
    if (p < 0 || g.values[v].constant || nodes.count(p)) continue;
    nodes.insert(p);
    for (int in : g.nodes[p].inputs)
      if (in >= 0 && !stop.count(in)) todo.push_back(in);
  }
  return {nodes.begin(), nodes.end()};  // node order is topological
}


nlohmann::json value_json(const ValueDiff& d, const DiffReport& r) {
  nlohmann::json j = {{"value", d.value},       {"node", d.node_name},        {"op_type", d.op_type},
                      {"dtype", dtype_name(d.dtype)}, {"shape", d.shape},   {"diverges", d.diverges},
                      {"max_abs", json_number(d.max_abs)}, {"max_rel", json_number(d.max_rel)}, {"max_ulp", json_number(d.max_ulp)}, {"scale_ulp", json_number(d.scale_ulp)},
                      {"mismatches", d.mismatches}, {"numel", d.numel},     {"score", json_number(d.score)},
                      {"inputs", d.inputs},      {"inputs_max_ulp", json_number(d.inputs_max_ulp)}};
  if (d.worst_index >= 0)
    j["worst"] = {{"index", d.worst_index}, {"reference", json_number(d.worst_ref)}, {"tested", json_number(d.worst_test)}};
  if (!d.note.empty()) j["note"] = d.note;
  j["stage"] = d.fused ? "fused" : "unfused";
  if (d.kernel >= 0) j["kernel"] = r.kernels[d.kernel].name;
  return j;
}

std::string multi_index(int64_t flat, const Shape& s) {
  std::string out;
  for (int i = static_cast<int>(s.size()) - 1; i >= 0; --i) {
    int64_t d = s[i] > 0 ? s[i] : 1;
    out = std::to_string(flat % d) + (out.empty() ? "" : ", ") + out;
    flat /= d;
  }
  return "[" + out + "]";
}

std::string g6(double d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", d);
  return buf;
}

}  // namespace

void check_extract_dir(const std::string& dir) {
  std::error_code ec;
  const fs::path d(dir);
  if (!fs::exists(d, ec)) return;
  if (!fs::is_directory(d, ec) || !fs::is_empty(d, ec) || ec)
    throw Error("diff", "--extract '" + printable(dir) + "' exists and is not an empty folder: give a new or empty one");
}

void extract_reproducer(const DiffReport& r, const std::string& dir) {
  if (!r.culprit) throw Error("diff", "nothing to extract: no value diverges");
  check_extract_dir(dir);
  const Graph& g = r.graph;
  std::vector<int> outs;
  std::vector<int> nodes = culprit_nodes(r, outs);
  std::set<int> produced;
  for (int n : nodes)
    for (int o : g.nodes[n].outputs)
      if (o >= 0) produced.insert(o);

  onnx::ModelProto m;
  m.set_ir_version(onnx::IR_VERSION);
  m.set_producer_name("fusor diff");
  std::map<std::string, int> opsets{{"", g.opset}};
  auto* gp = m.mutable_graph();
  gp->set_name("diff_" + g.nodes[r.culprit->value.node].name);
  std::vector<int> inputs;
  std::set<int> declared;
  for (int n : nodes) {
    const Node& node = g.nodes[n];
    std::string dom = node.domain == "ai.onnx" ? "" : node.domain;
    opsets[dom] = std::max(opsets.count(dom) ? opsets[dom] : 0, node.opset);
    auto* np = gp->add_node();
    np->set_name(node.name);
    np->set_op_type(node.op_type);
    np->set_domain(dom);
    for (int v : node.inputs) {
      np->add_input(v >= 0 ? g.values[v].name : "");
      if (v < 0 || produced.count(v) || !declared.insert(v).second) continue;
      if (g.values[v].constant) to_proto(*g.values[v].constant, g.values[v].name, gp->add_initializer());
      else inputs.push_back(v);
    }
    for (int v : node.outputs) np->add_output(v >= 0 ? g.values[v].name : "");
    for (auto& [k, a] : node.attrs) to_proto(k, a, np->add_attribute());
  }
  for (auto& [dom, ver] : opsets) {
    auto* op = m.add_opset_import();
    op->set_domain(dom);
    op->set_version(ver);
  }
  auto tensor_of = [&](int v) -> const Tensor& {
    for (size_t i = 0; i < g.inputs.size(); ++i)
      if (g.inputs[i] == v) return r.inputs.at(i);
    auto it = r.ref_values.find(v);
    if (it == r.ref_values.end()) throw Error("diff", "value '" + g.values[v].name + "' was not recorded");
    return it->second;
  };
  for (int v : inputs) value_info(g.values[v], gp->add_input());
  for (int v : outs) value_info(g.values[v], gp->add_output());

  fs::path d(dir), data = fs::path(dir) / "test_data_set_0";
  std::error_code ec;
  fs::create_directories(data, ec);
  if (ec) throw Error("io", "cannot create '" + data.string() + "': " + ec.message());
  std::string bytes;
  if (!m.SerializeToString(&bytes)) throw Error("io", "'" + (d / "model.onnx").string() + "': serialization failed");
  write_file((d / "model.onnx").string(), bytes, "io");
  for (size_t k = 0; k < inputs.size(); ++k)
    write_tensor_pb((data / ("input_" + std::to_string(k) + ".pb")).string(), tensor_of(inputs[k]),
                    g.values[inputs[k]].name);
  for (size_t k = 0; k < outs.size(); ++k)
    write_tensor_pb((data / ("output_" + std::to_string(k) + ".pb")).string(), tensor_of(outs[k]),
                    g.values[outs[k]].name);
}

nlohmann::json diff_to_json(const DiffReport& r) {
  // A tolerance left to each value's dtype is "dtype default" (ir/tensor.h default_tolerance).
  auto tol = [](double v) { return v < 0 ? nlohmann::json("dtype default") : nlohmann::json(v); };
  nlohmann::json j = {{"reference", r.reference}, {"test", r.test},       {"rtol", tol(r.rtol)},
                      {"atol", tol(r.atol)},      {"op_stage", r.op_stage}, {"fusion_stage", r.fusion_stage}};
  if (!r.fused_plan_note.empty()) j["fused_plan_note"] = r.fused_plan_note;
  if (r.culprit) {
    const DiffCulprit& c = *r.culprit;
    j["culprit"] = {{"stage", c.stage}, {"kind", c.kind}, {"value", value_json(c.value, r)},
                    {"attributes", c.attributes}, {"inputs", c.input_info}};
    if (!c.fused_check.empty()) j["culprit"]["fused_check"] = c.fused_check;
    if (c.stage == "fused")
      j["culprit"]["kernel"] = {{"name", c.kernel.name}, {"kind", c.kernel.kind}, {"ops", c.kernel.ops},
                                {"nodes", c.kernel.nodes}};
  } else {
    j["culprit"] = nullptr;
  }
  for (auto* key : {"unfused", "fused", "worst"}) j[key] = nlohmann::json::array();
  for (auto& d : r.unfused) j["unfused"].push_back(value_json(d, r));
  for (auto& d : r.fused) j["fused"].push_back(value_json(d, r));
  for (auto& d : r.worst) j["worst"].push_back(value_json(d, r));
  for (auto& [op, u] : r.worst_ulp_by_op) j["worst_ulp_by_op"][op] = json_number(u);
  for (auto& [op, u] : r.worst_scale_ulp_by_op) j["worst_scale_ulp_by_op"][op] = json_number(u);
  j["kernels"] = nlohmann::json::array();
  for (auto& k : r.kernels) j["kernels"].push_back({{"name", k.name}, {"kind", k.kind}, {"ops", k.ops}, {"nodes", k.nodes}});
  return j;
}

std::string format_diff(const DiffReport& r) {
  std::string o;
  char buf[512];
  std::snprintf(buf, sizeof buf, "reference %s (unfused)\ntested    %s%s\n", r.reference.c_str(), r.test.c_str(),
                r.op_stage && r.fusion_stage ? " (unfused, then fused)" : r.op_stage ? " (unfused)" : " (fused)");
  o += buf;
  if (r.rtol >= 0 && r.atol >= 0) {
    std::snprintf(buf, sizeof buf, "tolerance |t - r| <= %g + %g*|r| (integers exact)\n", r.atol, r.rtol);
  } else {
    // Per dtype unless given (default_tolerance): the values of each dtype its own pair.
    const Tolerance f32 = default_tolerance(DType::f32), f16 = default_tolerance(DType::f16), b16 = default_tolerance(DType::bf16);
    auto part = [&](double given, double def) { return given >= 0 ? given : def; };
    std::snprintf(buf, sizeof buf,
                  "tolerance |t - r| <= atol + rtol*|r|: fp32 / fp64 %g + %g, fp16 %g + %g, bf16 %g + %g (integers exact)\n",
                  part(r.atol, f32.atol), part(r.rtol, f32.rtol), part(r.atol, f16.atol), part(r.rtol, f16.rtol),
                  part(r.atol, b16.atol), part(r.rtol, b16.rtol));
  }
  o += buf;
  std::snprintf(buf, sizeof buf, "compared  %zu values unfused, %zu stored by %zu fused kernels\n", r.unfused.size(),
                r.fused.size(), r.kernels.size());
  o += buf;
  if (!r.fused_plan_note.empty()) o += "note      " + r.fused_plan_note + "\n";
  if (!r.culprit) {
    o += "\nno divergence: every value agrees within tolerance\n";
  } else {
    const DiffCulprit& c = *r.culprit;
    const ValueDiff& d = c.value;
    const char* what = c.kind == "op" ? "op fault: its inputs agree" : c.kind == "fusion"
                           ? "fusion fault: agrees unfused, diverges in the fused kernel"
                           : "inherited: its inputs already diverge";
    o += "\nfirst divergence (" + c.stage + "): node '" + d.node_name + "' (" + d.op_type + "), value '" + d.value +
         "'\n  verdict     " + what + "\n";
    o += "  attributes  " + (c.attributes.empty() ? std::string("(none)") : c.attributes) + "\n";
    for (size_t i = 0; i < c.input_info.size(); ++i) o += (i ? "              " : "  inputs      ") + c.input_info[i] + "\n";
    std::snprintf(buf, sizeof buf, "  output      %s %s: %lld of %lld elements beyond tolerance%s%s\n", dtype_name(d.dtype),
                  shape_str(d.shape).c_str(), static_cast<long long>(d.mismatches), static_cast<long long>(d.numel),
                  d.note.empty() ? "" : "; ", d.note.c_str());
    o += buf;
    std::snprintf(buf, sizeof buf, "  error       max abs %s, max rel %s, max %s ulp (%s ulp of the largest |r|; inputs: %s, max %s ulp)\n",
                  g6(d.max_abs).c_str(), g6(d.max_rel).c_str(), g6(d.max_ulp).c_str(), g6(d.scale_ulp).c_str(), d.inputs.c_str(),
                  g6(d.inputs_max_ulp).c_str());
    o += buf;
    if (d.worst_index >= 0)
      o += "  worst       element " + std::to_string(d.worst_index) + " " + multi_index(d.worst_index, d.shape) +
           ": reference " + g6(d.worst_ref) + ", tested " + g6(d.worst_test) + "\n";
    if (!c.fused_check.empty()) o += "  fused run   " + c.fused_check + "\n";
    if (c.stage == "fused") {
      std::string ops;
      for (size_t i = 0; i < c.kernel.ops.size(); ++i)
        ops += (i ? ", " : "") + c.kernel.ops[i] + (i < c.kernel.nodes.size() ? " '" + c.kernel.nodes[i] + "'" : "");
      o += "  kernel      " + c.kernel.name + " (" + c.kernel.kind + "), fuses " + ops + "\n";
    }
  }
  o += "\nworst values (error / tolerance):\n";
  std::snprintf(buf, sizeof buf, "  %-7s %-28s %-18s %10s %10s %12s %10s %s\n", "stage", "value", "op", "max abs", "max rel",
                "max ulp", "score", "inputs");
  o += buf;
  for (auto& d : r.worst) {
    std::string v = d.value.size() > 28 ? d.value.substr(0, 25) + "..." : d.value;
    std::snprintf(buf, sizeof buf, "  %-7s %-28s %-18s %10s %10s %12s %10s %s\n", d.fused ? "fused" : "unfused", v.c_str(),
                  d.op_type.c_str(), g6(d.max_abs).c_str(), g6(d.max_rel).c_str(), g6(d.max_ulp).c_str(),
                  g6(d.score).c_str(), d.inputs.c_str());
    o += buf;
  }
  return o;
}

}  // namespace fusor
