// --shape / --dim: binding the dynamic dims of a model's inputs (runtime/session.h InputDims).
#include <set>

#include "runtime/session.h"

namespace fusor {
namespace {

int64_t parse_dim(const std::string& text, const std::string& arg) {
  size_t used = 0;
  int64_t v = -1;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || v < 0 || v > (int64_t{1} << 40))
    throw Error("cli", "'" + printable(arg) + "': '" + printable(text) + "' is not a dimension (a whole number >= 0)");
  return v;
}

std::pair<std::string, std::string> split_eq(const std::string& arg, const char* form) {
  const size_t eq = arg.rfind('=');
  if (eq == std::string::npos || eq == 0)
    throw Error("cli", "'" + printable(arg) + "': expected " + form);
  return {arg.substr(0, eq), arg.substr(eq + 1)};
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
                               " is dynamic: give " + (param.empty() ? "" : "--dim " + printable(param) + "=N or ") + "--shape " +
                               printable(v.name) + "=" + [&] {
                                 std::string t;
                                 for (size_t j = 0; j < v.shape.size(); ++j)
                                   t += (j ? "x" : "") + (v.shape[j] >= 0 ? std::to_string(v.shape[j]) : std::string("N"));
                                 return t;
                               }());
    }
    out.push_back(s);
  }
  return out;
}

}  // namespace fusor
