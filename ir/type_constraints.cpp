#include "ir/type_constraints.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace fusor {
namespace {

struct Formal {
  int param;  // index into Schema::masks
  bool variadic, homogeneous;
};
struct Schema {
  const char* domain;  // "" (ai.onnx) or "ai.onnx.ml"
  const char* op;
  int since;
  std::vector<Formal> formals;
  std::vector<uint64_t> masks;  // TensorProto.DataType bits; bit 63: a non-tensor type
};

constexpr uint64_t kNonTensor = uint64_t{1} << 63;

using Key = std::pair<std::string, std::string>;  // domain, op

const std::map<Key, std::vector<Schema>>& by_op() {
  static const std::map<Key, std::vector<Schema>> m = [] {
    static const std::vector<Schema> table = {
#include "ir/onnx_type_constraints.inc"
    };
    std::map<Key, std::vector<Schema>> r;
    for (const Schema& s : table) r[{s.domain, s.op}].push_back(s);  // ascending since, as generated
    return r;
  }();
  return m;
}

std::string allowed_list(uint64_t mask) {
  std::string out;
  for (int bit = 0; bit < 63; ++bit) {
    if (!(mask >> bit & 1)) continue;
    const DType d = dtype_from_onnx(bit);
    if (d == DType::undefined) continue;
    out += (out.empty() ? "" : ", ") + std::string(dtype_name(d));
  }
  return out;
}

}  // namespace

void check_onnx_type_constraints(const Graph& g, const Node& n) {
  const std::string domain = n.domain == "ai.onnx" ? std::string() : n.domain;
  const auto& ops = by_op();
  auto it = ops.find({domain, n.op_type});
  if (it == ops.end()) return;
  const Schema* s = nullptr;
  for (const Schema& c : it->second)
    if (c.since <= n.opset) s = &c;
  if (!s || s->formals.empty()) return;
  const std::string schema = n.op_type + "-" + std::to_string(s->since);
  // The outer values a subgraph reads (If / Loop / Scan bodies) follow the node's own inputs
  // (frontend/onnx_import.cpp): they are no formal inputs, so the schema does not type them.
  size_t own = n.inputs.size();
  for (const auto& [name, value] : n.attrs)
    if (const auto* sg = std::get_if<std::shared_ptr<const Graph>>(&value); sg && *sg && (*sg)->formal_inputs >= 0)
      own -= std::min(own, (*sg)->inputs.size() - static_cast<size_t>((*sg)->formal_inputs));
  std::vector<int> bound(s->masks.size(), -1);  // input index first bound to each parameter
  for (size_t k = 0; k < own; ++k) {
    if (n.inputs[k] < 0) continue;
    const bool past = k >= s->formals.size();
    if (past && !s->formals.back().variadic) continue;  // a count error, reported by the op table
    const Formal& f = past ? s->formals.back() : s->formals[k];
    const Value& v = g.values[static_cast<size_t>(n.inputs[k])];
    const uint64_t mask = s->masks[static_cast<size_t>(f.param)];
    if (v.sequence || v.dtype == DType::undefined || (mask & ~kNonTensor) == 0) continue;
    const int bit = dtype_to_onnx(v.dtype);
    if (bit < 0 || bit >= 63 || !(mask >> bit & 1))
      throw Error("onnx", n.label() + ": input " + std::to_string(k) + " ('" + printable(v.name) + "') is " + dtype_name(v.dtype) +
                              ", which " + schema + " does not allow there (it takes " + allowed_list(mask) + ")");
    // Loop's / Scan's state values are variadic but not homogeneous: each has its own type.
    if (f.variadic && !f.homogeneous) continue;
    int& first = bound[static_cast<size_t>(f.param)];
    if (first < 0) {
      first = static_cast<int>(k);
      continue;
    }
    const DType d0 = g.values[static_cast<size_t>(n.inputs[static_cast<size_t>(first)])].dtype;
    if (d0 != v.dtype)
      throw Error("onnx", n.label() + ": inputs " + std::to_string(first) + " and " + std::to_string(k) + " are " + dtype_name(d0) + " and " +
                              dtype_name(v.dtype) + ", but " + schema + " binds both to one type");
  }
}

}  // namespace fusor
