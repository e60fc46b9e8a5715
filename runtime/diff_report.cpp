// The outputs of `fusor diff`: JSON and the text report.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "runtime/diff.h"
#include "runtime/tensor_io.h"

namespace fs = std::filesystem;

namespace fusor {

namespace {

nlohmann::json num(double d) { return std::isfinite(d) ? nlohmann::json(d) : nlohmann::json(nullptr); }

nlohmann::json value_json(const ValueDiff& d, const DiffReport& r) {
  nlohmann::json j = {{"value", d.value},       {"node", d.node_name},        {"op_type", d.op_type},
                      {"dtype", dtype_name(d.dtype)}, {"shape", d.shape},   {"diverges", d.diverges},
                      {"max_abs", num(d.max_abs)}, {"max_rel", num(d.max_rel)}, {"max_ulp", num(d.max_ulp)},
                      {"mismatches", d.mismatches}, {"numel", d.numel},     {"score", num(d.score)},
                      {"inputs", d.inputs},      {"inputs_max_ulp", num(d.inputs_max_ulp)}};
  if (d.worst_index >= 0)
    j["worst"] = {{"index", d.worst_index}, {"reference", num(d.worst_ref)}, {"tested", num(d.worst_test)}};
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

nlohmann::json diff_to_json(const DiffReport& r) {
  nlohmann::json j = {{"reference", r.reference}, {"test", r.test},       {"rtol", r.rtol},
                      {"atol", r.atol},           {"op_stage", r.op_stage}, {"fusion_stage", r.fusion_stage}};
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
  for (auto& [op, u] : r.worst_ulp_by_op) j["worst_ulp_by_op"][op] = num(u);
  j["kernels"] = nlohmann::json::array();
  for (auto& k : r.kernels) j["kernels"].push_back({{"name", k.name}, {"kind", k.kind}, {"ops", k.ops}, {"nodes", k.nodes}});
  return j;
}

std::string format_diff(const DiffReport& r) {
  std::string o;
  char buf[512];
  std::snprintf(buf, sizeof buf, "reference %s (unfused)\ntested    %s%s\ntolerance |t - r| <= %g + %g*|r| (integers exact)\n",
                r.reference.c_str(), r.test.c_str(),
                r.op_stage && r.fusion_stage ? " (unfused, then fused)" : r.op_stage ? " (unfused)" : " (fused)", r.atol,
                r.rtol);
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
    std::snprintf(buf, sizeof buf, "  error       max abs %s, max rel %s, max %s ulp (inputs: %s, max %s ulp)\n",
                  g6(d.max_abs).c_str(), g6(d.max_rel).c_str(), g6(d.max_ulp).c_str(), d.inputs.c_str(),
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
