#include "runtime/diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <filesystem>
#include <set>

#include "backends/backend.h"
#include "ir/kernel_spec.h"
#include "ir/partition.h"
#include "runtime/segments.h"
#include "runtime/session.h"
#include "runtime/tensor_io.h"

namespace fusor {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Monotonic integer key of a float's bit pattern: adjacent floats differ by 1, +0 == -0.
int64_t ordered_key(uint64_t bits, int width) {
  const uint64_t sign = uint64_t{1} << (width - 1);
  int64_t mag = static_cast<int64_t>(bits & (sign - 1));
  return (bits & sign) ? -mag : mag;
}

uint64_t float_bits(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::f32: { uint32_t u; std::memcpy(&u, t.data<float>() + i, 4); return u; }
    case DType::f64: { uint64_t u; std::memcpy(&u, t.data<double>() + i, 8); return u; }
    case DType::f16: case DType::bf16: return t.data<uint16_t>()[i];
    default: return t.data<uint8_t>()[i];  // the small floats: one byte per element in memory
  }
}

// Bits of the sign-magnitude encoding (the sign is its top bit); float8e8m0 has no sign, so its
// byte is all magnitude (width 9 puts the sign outside it).
int float_width(DType d) {
  switch (d) {
    case DType::f32: return 32;
    case DType::f64: return 64;
    case DType::f16: case DType::bf16: return 16;
    case DType::f4e2m1: return 4;
    case DType::f8e8m0: return 9;
    default: return 8;  // float8 e4m3fn / e4m3fnuz / e5m2 / e5m2fnuz
  }
}

// Spacing of the dtype's values at magnitude m (m > 0 and finite): 2^(max(e, emin) - mantissa
// bits) for the binary formats below float32.
double ulp_at(DType d, double m) {
  if (d == DType::f64) return std::nextafter(m, kInf) - m;
  if (d == DType::f32) return static_cast<double>(std::nextafter(static_cast<float>(m), INFINITY)) - static_cast<float>(m);
  int mantissa = 10, emin = -14;  // f16
  switch (d) {
    case DType::bf16: mantissa = 7, emin = -126; break;
    case DType::f8e4m3fn: mantissa = 3, emin = -6; break;
    case DType::f8e4m3fnuz: mantissa = 3, emin = -7; break;
    case DType::f8e5m2: mantissa = 2, emin = -14; break;
    case DType::f8e5m2fnuz: mantissa = 2, emin = -15; break;
    case DType::f4e2m1: mantissa = 1, emin = 0; break;
    case DType::f8e8m0: mantissa = 0, emin = -127; break;
    default: break;
  }
  return std::ldexp(1.0, std::max(std::ilogb(m), emin) - mantissa);
}

std::string side_label(const DiffSide& s) { return s.backend + (s.no_fusion ? " --no-fusion" : ""); }

// Compiles and runs g on one side; every failure names the backend.
std::vector<Tensor> run_side(const DiffSide& s, const Graph& g, const std::vector<Tensor>& inputs, bool fusion) {
  CompileOptions o;
  o.fusion = fusion;
  o.device = s.device;
  const std::string what = s.backend + (fusion ? " (fused)" : " (unfused)");
  try {
    // As run and conform: nodes the backend refuses run on the host (graph breaks).
    auto b = make_backend(s.backend);
    auto exe = compile_with_fallback(*b, g, o);
    return exe->run(inputs);
  } catch (const Unsupported& e) {
    throw Unsupported("diff", what + ": " + e.what());
  } catch (const std::exception& e) {
    throw Error("diff", what + ": " + e.what());
  }
}

bool comparable(const Value& v) {
  return !v.constant && v.dtype != DType::undefined && v.dtype != DType::string;
}

// g with `values` appended to its outputs (those not outputs already). Returns, per value id,
// the output index that holds it.
Graph expose(const Graph& g, const std::vector<int>& values, std::map<int, size_t>& where) {
  Graph x = g;
  for (size_t k = 0; k < x.outputs.size(); ++k) where.emplace(x.outputs[k], k);
  for (int v : values)
    if (!where.count(v)) {
      where.emplace(v, x.outputs.size());
      x.outputs.push_back(v);
    }
  return x;
}

std::string attr_str(const AttrValue& a) {
  char buf[64];
  auto num = [&](double d) {
    std::snprintf(buf, sizeof buf, "%g", d);
    return std::string(buf);
  };
  return std::visit(
      [&](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) return std::to_string(v);
        else if constexpr (std::is_same_v<T, double>) return num(v);
        else if constexpr (std::is_same_v<T, std::string>) return "'" + v + "'";
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          std::string s;
          for (auto x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
          return "[" + s + "]";
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          std::string s;
          for (auto x : v) s += (s.empty() ? "" : ", ") + num(x);
          return "[" + s + "]";
        } else if constexpr (std::is_same_v<T, Tensor>) {
          return std::string("tensor ") + dtype_name(v.dtype()) + " " + shape_str(v.shape());
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const Graph>>) {
          return std::string("subgraph (") + std::to_string(v ? v->nodes.size() : 0) + " nodes)";
        } else {
          std::string s;
          for (auto& x : v) s += (s.empty() ? "'" : ", '") + x + "'";
          return "[" + s + "]";
        }
      },
      a);
}

void fill_value_fields(ValueDiff& d, const Graph& g, int v) {
  d.value = g.values[v].name;
  d.node = g.values[v].producer;
  if (d.node >= 0) {
    d.node_name = g.nodes[d.node].name;
    d.op_type = g.nodes[d.node].op_type;
  }
}

// Sets d.inputs / d.inputs_max_ulp from the comparisons of the given input values (ids; -1 for
// a buffer that is no graph value, e.g. one made by decomposition). Graph inputs and constants
// are the same on both sides, so they agree.
void judge_inputs(ValueDiff& d, const Graph& g, const std::vector<int>& input_values,
                  const std::map<int, const ValueDiff*>& seen) {
  bool unknown = false, inherited = false;
  for (int v : input_values) {
    if (v >= 0 && (g.values[v].constant || g.values[v].producer < 0)) continue;
    auto it = v >= 0 ? seen.find(v) : seen.end();
    if (it == seen.end()) {
      unknown = true;
      continue;
    }
    inherited = inherited || it->second->diverges;
    d.inputs_max_ulp = std::max(d.inputs_max_ulp, it->second->max_ulp);
  }
  d.inputs = inherited ? "inherited" : unknown ? "unknown" : "agree";
}

}  // namespace

ValueDiff compare_values(const Tensor& r, const Tensor& t, double rtol, double atol) {
  ValueDiff d;
  d.dtype = r.dtype();
  d.shape = r.shape();
  d.numel = r.numel();
  if (r.dtype() != t.dtype() || r.shape() != t.shape()) {
    d.diverges = true;
    d.score = kInf;
    d.note = std::string(r.dtype() != t.dtype() ? "dtype" : "shape") + " differs: reference " +
             dtype_name(r.dtype()) + " " + shape_str(r.shape()) + ", tested " + dtype_name(t.dtype()) + " " +
             shape_str(t.shape());
    return d;
  }
  if (r.dtype() == DType::string) {
    for (int64_t i = 0; i < r.numel() && i < static_cast<int64_t>(std::min(r.strings.size(), t.strings.size())); ++i)
      if (r.strings[i] != t.strings[i]) {
        if (!d.mismatches++) d.worst_index = i;
        d.score = kInf;
      }
    d.diverges = d.mismatches > 0;
    return d;
  }
  const bool is_float = dtype_is_float(r.dtype());
  const int width = float_width(r.dtype());
  // Negative: the dtype's default, as conform judges outputs (a bf16 value's 1-ulp rounding,
  // 2^-8 relative, was a divergence under the fp32 rtol 1e-3).
  if (rtol < 0) rtol = default_tolerance(r.dtype()).rtol;
  if (atol < 0) atol = default_tolerance(r.dtype()).atol;
  double best = -1, best_diff = -1, scale = 0;
  for (int64_t i = 0; i < r.numel(); ++i) {
    double a = r.get(i), b = t.get(i), score = 0, ulp = 0, diff = 0;
    if (is_float) {
      const bool na = std::isnan(a), nb = std::isnan(b);
      if (na || nb) {
        score = ulp = (na && nb) ? 0 : kInf;
      } else if (std::isinf(a) || std::isinf(b)) {
        score = ulp = a == b ? 0 : kInf;
        diff = a == b ? 0 : kInf;
      } else {
        diff = std::fabs(a - b);
        scale = std::max(scale, std::fabs(a));
        const double tol = atol + rtol * std::fabs(a);
        score = diff == 0 ? 0 : tol > 0 ? diff / tol : kInf;
        // int64 keys: their difference fits in a double exactly enough for reporting.
        ulp = std::fabs(static_cast<double>(ordered_key(float_bits(r, i), width)) -
                        static_cast<double>(ordered_key(float_bits(t, i), width)));
      }
    } else {  // integers and bool compare exactly
      const int64_t ia = r.get_int(i), ib = t.get_int(i);
      diff = ulp = std::fabs(static_cast<double>(ia) - static_cast<double>(ib));
      score = ia == ib ? 0 : kInf;
    }
    d.max_abs = std::max(d.max_abs, diff);
    if (diff > 0 && std::isfinite(diff)) d.max_rel = std::max(d.max_rel, a != 0 ? diff / std::fabs(a) : kInf);
    d.max_ulp = std::max(d.max_ulp, ulp);
    d.score = std::max(d.score, score);
    if (score > 1) ++d.mismatches;
    // The worst element: furthest beyond tolerance; among equal scores, the largest abs error.
    if (d.worst_index < 0 || score > best || (score == best && diff > best_diff)) {
      best = score;
      best_diff = diff;
      d.worst_index = i;
      d.worst_ref = a;
      d.worst_test = b;
    }
  }
  if (is_float) d.scale_ulp = scale > 0 ? d.max_abs / ulp_at(r.dtype(), scale) : d.max_abs > 0 ? kInf : 0;
  d.diverges = d.mismatches > 0;
  return d;
}

DiffReport diff_backends(const Graph& model, const std::vector<Tensor>& inputs, const DiffSide& reference,
                         const DiffSide& test, const DiffOptions& opts) {
  DiffReport r;
  r.rtol = opts.rtol;  // negative: each value's dtype default (compare_values)
  r.atol = opts.atol;
  // Exactly one side marked no_fusion: it is the unfused reference, the other runs fused.
  DiffSide ref = reference, tst = test;
  if (!ref.no_fusion && tst.no_fusion) std::swap(ref, tst);
  r.reference = side_label(ref);
  r.test = side_label(tst);
  r.op_stage = ref.no_fusion == tst.no_fusion;
  r.fusion_stage = !tst.no_fusion;
  r.graph = specialize(model, inputs);
  r.inputs = fed_inputs(model, inputs);  // as the executables take them (string inputs: their codes)
  const Graph& g = r.graph;

  // Every value a node computes, in node (topological) order.
  std::vector<int> all;
  for (const Node& n : g.nodes)
    for (int o : n.outputs)
      if (o >= 0 && comparable(g.values[o])) all.push_back(o);
  std::map<int, size_t> where;
  Graph gx = expose(g, all, where);
  auto ref_out = run_side(ref, gx, r.inputs, false);
  for (int v : all) r.ref_values[v] = ref_out[where.at(v)];

  std::map<int, const ValueDiff*> seen_unfused;
  if (r.op_stage) {
    auto test_out = run_side(tst, gx, r.inputs, false);
    r.unfused.reserve(all.size());
    for (int v : all) {
      ValueDiff d = compare_values(ref_out[where.at(v)], test_out[where.at(v)], r.rtol, r.atol);
      fill_value_fields(d, g, v);
      judge_inputs(d, g, g.nodes[d.node].inputs, seen_unfused);
      r.unfused.push_back(std::move(d));
      seen_unfused[v] = &r.unfused.back();
    }
  }

  std::map<int, const ValueDiff*> seen_fused;
  if (r.fusion_stage) {
    // The values the fused plan stores anyway; exposing only those keeps its kernels.
    Plan p0 = build_plan(without_string_nodes(g));  // string nodes run on the host
    std::vector<int> stored;
    for (const KernelSpec& k : p0.kernels)
      for (int b : k.output_buffers()) {
        int v = g.find_value(p0.buffers[b].name);
        if (v >= 0 && g.values[v].producer >= 0 && comparable(g.values[v])) stored.push_back(v);
      }
    std::map<int, size_t> fwhere;
    Graph gm = expose(g, stored, fwhere);
    Plan p1 = build_plan(without_string_nodes(gm));
    if (p1.kernels.size() != p0.kernels.size())
      r.fused_plan_note = "exposing the stored values changed the fused plan (" + std::to_string(p0.kernels.size()) +
                          " -> " + std::to_string(p1.kernels.size()) + " kernels)";
    std::map<std::string, int> kernel_of;  // stored value name -> kernel index
    std::vector<std::vector<std::string>> kernel_inputs(p1.kernels.size());
    for (size_t ki = 0; ki < p1.kernels.size(); ++ki) {
      const KernelSpec& k = p1.kernels[ki];
      r.kernels.push_back({k.name, fusion_kind_name(k.kind), k.fused_ops, k.fused_nodes});
      for (int b : k.output_buffers()) kernel_of.emplace(p1.buffers[b].name, static_cast<int>(ki));
      for (int b : k.input_buffers()) kernel_inputs[ki].push_back(p1.buffers[b].name);
    }
    auto test_out = run_side(tst, gm, r.inputs, true);
    std::vector<std::pair<std::pair<int, int>, int>> order;  // ((kernel, node), value)
    for (auto& [v, idx] : fwhere) {
      if (!r.ref_values.count(v)) continue;  // a graph output that is a constant or an input
      auto it = kernel_of.find(g.values[v].name);
      order.push_back({{it == kernel_of.end() ? -1 : it->second, g.values[v].producer}, v});
    }
    std::sort(order.begin(), order.end());
    r.fused.reserve(order.size());
    for (auto& [key, v] : order) {
      ValueDiff d = compare_values(r.ref_values.at(v), test_out[fwhere.at(v)], r.rtol, r.atol);
      fill_value_fields(d, g, v);
      d.kernel = key.first;
      d.fused = true;
      std::vector<int> ins;
      if (d.kernel >= 0)
        for (auto& name : kernel_inputs[d.kernel]) ins.push_back(g.find_value(name));
      judge_inputs(d, g, ins, seen_fused);
      r.fused.push_back(std::move(d));
      seen_fused[v] = &r.fused.back();
    }
  }

  // The culprit: the first unfused divergence, else the first fused one.
  auto first = [](const std::vector<ValueDiff>& vs) -> const ValueDiff* {
    for (auto& d : vs)
      if (d.diverges) return &d;
    return nullptr;
  };
  const ValueDiff* c = first(r.unfused);
  DiffCulprit cu;
  if (c) {
    cu.stage = "unfused";
    cu.kind = c->inputs == "inherited" ? "inherited" : "op";
    if (r.fusion_stage) {
      auto it = seen_fused.find(g.find_value(c->value));
      cu.fused_check = it == seen_fused.end() ? "not materialized" : it->second->diverges ? "diverges" : "agrees";
    }
  } else if ((c = first(r.fused))) {
    cu.stage = "fused";
    cu.kind = c->inputs == "inherited" ? "inherited" : "fusion";
    if (c->kernel >= 0) cu.kernel = r.kernels[c->kernel];
  }
  if (c) {
    cu.value = *c;
    const Node& n = g.nodes[c->node];
    for (auto& [k, a] : n.attrs) cu.attributes += (cu.attributes.empty() ? "" : ", ") + k + "=" + attr_str(a);
    for (int v : n.inputs)
      if (v >= 0)
        cu.input_info.push_back(g.values[v].name + " " + dtype_name(g.values[v].dtype) + " " +
                                shape_str(g.values[v].shape) + (g.values[v].constant ? " (constant)" : ""));
    r.culprit = cu;
  }

  for (auto* stage : {&r.unfused, &r.fused})
    for (auto& d : *stage) {
      r.worst.push_back(d);
      if (dtype_is_float(d.dtype) && stage == (r.op_stage ? &r.unfused : &r.fused))
      {
        r.worst_ulp_by_op[d.op_type] = std::max(r.worst_ulp_by_op[d.op_type], d.max_ulp);
        r.worst_scale_ulp_by_op[d.op_type] = std::max(r.worst_scale_ulp_by_op[d.op_type], d.scale_ulp);
      }
    }
  std::stable_sort(r.worst.begin(), r.worst.end(), [](const ValueDiff& a, const ValueDiff& b) {
    return a.score != b.score ? a.score > b.score : a.max_ulp > b.max_ulp;
  });
  if (r.worst.size() > opts.worst) r.worst.resize(opts.worst);
  return r;
}

std::string bisect_case(const std::string& case_dir, const std::string& backend, double rtol, double atol) {
  if (backend == "ref") return "culprit: none searched (the reference backend itself fails; nothing to bisect against)";
  try {
    Graph g = load_model((std::filesystem::path(case_dir) / "model.onnx").string());
    auto sets = load_test_data_sets(case_dir);
    if (sets.empty()) return "culprit: none searched (no test_data_set_*)";
    DiffOptions o;
    o.rtol = rtol;
    o.atol = atol;
    DiffReport r = diff_backends(g, bind_inputs(g, sets[0].inputs, sets[0].input_names, "diff"), {"ref"}, {backend}, o);
    if (!r.culprit) return "culprit: none (every value agrees with ref within tolerance; the stored outputs differ from ref too?)";
    const DiffCulprit& c = *r.culprit;
    const ValueDiff& d = c.value;
    char buf[256];
    std::snprintf(buf, sizeof buf, ", max abs %.3g, %.6g ulp, worst element %lld: ref %.6g, %s %.6g", d.max_abs,
                  d.max_ulp, static_cast<long long>(d.worst_index), d.worst_ref, backend.c_str(), d.worst_test);
    std::string s = "culprit: node '" + d.node_name + "' (" + d.op_type + "), value '" + d.value + "', " + c.kind +
                    " fault (" + c.stage + ")" + buf;
    if (c.stage == "fused") s += ", kernel " + c.kernel.name;
    else if (!c.fused_check.empty()) s += ", fused run " + c.fused_check;
    return s;
  } catch (const std::exception& e) {
    return std::string("culprit: search failed: ") + e.what();
  }
}

}  // namespace fusor
