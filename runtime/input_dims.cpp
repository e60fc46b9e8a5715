// --shape / --dim: binding the dynamic dims of a model's inputs (runtime/session.h InputDims).
#include <algorithm>
#include <set>

#include "runtime/session.h"

namespace fusor {
namespace {

// The largest dimension --shape / --dim take: products of a few such dims stay in int64.
constexpr int64_t kMaxDim = int64_t{1} << 40;

int64_t parse_dim(const std::string& text, const std::string& arg) {
  // Digits only: stoll alone also took " 5" and "+5".
  const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits) throw Error("cli", "'" + printable(arg) + "': '" + printable(text) + "' is not a dimension (a whole number >= 0)");
  const size_t first = std::min(text.find_first_not_of('0'), text.size() - 1);  // leading zeros do not make it big
  if (text.size() - first > 13 || std::stoll(text.substr(first)) > kMaxDim)
    throw Error("cli", "'" + printable(arg) + "': dimension " + printable(text) + " is larger than fusor's limit of 2^40 (" +
                           std::to_string(kMaxDim) + ")");
  return std::stoll(text.substr(first));
}

std::pair<std::string, std::string> split_eq(const std::string& arg, const char* form) {
  const size_t eq = arg.rfind('=');
  if (eq == std::string::npos || eq == 0)
    throw Error("cli", "'" + printable(arg) + "': expected " + form);
  return {arg.substr(0, eq), arg.substr(eq + 1)};
}

// "2x3x16" (--shape's form; "" for a scalar).
std::string shape_text(const Shape& s) {
  std::string t;
  for (size_t j = 0; j < s.size(); ++j) t += (j ? "x" : "") + std::to_string(s[j]);
  return t;
}

// --shape's form for input v, e.g. "?x4x16" ("?" for a dim nothing binds: "N" read as the dim
// called N in models that have one), with the dims --dim binds filled in.
std::string shape_hint(const Value& v, const InputDims& d) {
  std::string t;
  for (size_t j = 0; j < v.shape.size(); ++j) {
    const std::string param = j < v.dim_params.size() ? v.dim_params[j] : "";
    auto bound = param.empty() ? d.dims.end() : d.dims.find(param);
    t += j ? "x" : "";
    t += v.shape[j] >= 0 ? std::to_string(v.shape[j]) : bound != d.dims.end() ? std::to_string(bound->second) : "?";
  }
  return t;
}

// " (given: --dim S=4)": the dims the caller did bind, so the message shows what was read.
std::string bound_note(const InputDims& d) {
  std::string t;
  for (const auto& [name, v] : d.dims) t += (t.empty() ? "" : ", ") + std::string("--dim ") + printable(name) + "=" + std::to_string(v);
  return t.empty() ? t : " (given: " + t + ")";
}

}  // namespace

InputDims parse_input_dims(const std::vector<std::string>& shapes, const std::vector<std::string>& dims) {
  InputDims d;
  for (const std::string& a : shapes) {
    auto [name, text] = split_eq(a, "NAME=D0xD1x... (e.g. x=1x3x224x224)");
    Shape s;
    size_t start = 0;
    while (!text.empty() && start <= text.size()) {
      const size_t x = text.find('x', start);
      s.push_back(parse_dim(text.substr(start, x == std::string::npos ? std::string::npos : x - start), a));
      if (x == std::string::npos) break;
      start = x + 1;
    }
    if (!d.shapes.emplace(name, s).second) throw Error("cli", "--shape given twice for input '" + printable(name) + "'");
  }
  for (const std::string& a : dims) {
    auto [name, text] = split_eq(a, "NAME=VALUE (e.g. batch=8)");
    if (!d.dims.emplace(name, parse_dim(text, a)).second) throw Error("cli", "--dim given twice for '" + printable(name) + "'");
  }
  return d;
}

std::vector<Shape> resolve_input_shapes(const Graph& g, const InputDims& d) {
  std::set<std::string> input_names, dim_names;
  for (int id : g.inputs) {
    input_names.insert(g.values[id].name);
    for (const std::string& p : g.values[id].dim_params)
      if (!p.empty()) dim_names.insert(p);
  }
  // A misspelt name would otherwise be ignored and the dim silently bound to something else.
  for (const auto& [name, s] : d.shapes)
    if (!input_names.count(name)) throw Error("run", "--shape names '" + printable(name) + "', which is not an input of the model");
  for (const auto& [name, v] : d.dims)
    if (!dim_names.count(name)) throw Error("run", "--dim names '" + printable(name) + "', which is not a symbolic dim of any model input");
  // A --shape whose dim contradicts a --dim of that dim's name: neither may be silently dropped.
  for (int id : g.inputs) {
    const Value& v = g.values[id];
    auto given = d.shapes.find(v.name);
    if (given == d.shapes.end()) continue;
    for (size_t k = 0; k < v.dim_params.size() && k < given->second.size(); ++k) {
      auto bound = v.dim_params[k].empty() ? d.dims.end() : d.dims.find(v.dim_params[k]);
      if (bound != d.dims.end() && bound->second != given->second[k])
        throw Error("run", "--dim " + printable(bound->first) + "=" + std::to_string(bound->second) + " contradicts --shape " +
                               printable(v.name) + "=" + shape_text(given->second) + ", whose dim " + std::to_string(k) + " ('" +
                               printable(bound->first) + "') is " + std::to_string(given->second[k]));
    }
  }
  std::vector<Shape> out;
  for (int id : g.inputs) {
    const Value& v = g.values[id];
    const std::string in = "input '" + printable(v.name) + "'";
    auto given = d.shapes.find(v.name);
    if (given != d.shapes.end()) {
      const Shape& s = given->second;
      if (v.shape_known || !v.shape.empty()) {
        if (s.size() != v.shape.size())
          throw Error("run", "--shape " + in + " has rank " + std::to_string(s.size()) + ", the model says " + shape_str(v.shape));
        for (size_t k = 0; k < s.size(); ++k)
          if (v.shape[k] >= 0 && v.shape[k] != s[k])
            throw Error("run", "--shape " + in + " dim " + std::to_string(k) + " is " + std::to_string(s[k]) +
                                   ", the model fixes it to " + std::to_string(v.shape[k]));
      }
      out.push_back(s);
      continue;
    }
    Shape s = v.shape;
    for (size_t k = 0; k < s.size(); ++k) {
      if (s[k] >= 0) continue;
      const std::string param = k < v.dim_params.size() ? v.dim_params[k] : "";
      auto bound = param.empty() ? d.dims.end() : d.dims.find(param);
      if (bound != d.dims.end()) s[k] = bound->second;
      else if (d.unknown_to_one) s[k] = 1;
      else
        throw Error("run", in + " dim " + std::to_string(k) + (param.empty() ? " (unnamed)" : " ('" + printable(param) + "')") +
                               " is dynamic: give " + (param.empty() ? "" : "--dim " + printable(param) + "=VALUE or ") +
                               "--shape " + printable(v.name) + "=" + shape_hint(v, d) + bound_note(d));
    }
    out.push_back(s);
  }
  return out;
}

}  // namespace fusor
