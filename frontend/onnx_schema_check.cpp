#include "frontend/onnx_schema_check.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace fusor {
namespace {

struct SchemaAttr {
  const char* name;
  int type;  // AttributeProto.AttributeType
  bool required;
};
struct NewSchema {
  const char* op;
  int since, first;
  bool deprecated;
  int min_in, max_in, min_out, max_out;
  std::vector<SchemaAttr> attrs;
};

const std::vector<NewSchema>& table() {
  static const std::vector<NewSchema> t = {
#include "frontend/onnx_schemas_new.inc"
  };
  return t;
}

const char* type_name(int t) {
  static const char* names[] = {"UNDEFINED", "FLOAT",   "INT",           "STRING",         "TENSOR",     "GRAPH",      "FLOATS",    "INTS",
                                "STRINGS",   "TENSORS", "GRAPHS",        "SPARSE_TENSOR",  "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS"};
  return t >= 0 && t < 15 ? names[t] : "?";
}

}  // namespace

bool check_new_opset_schema(const onnx::NodeProto& np, const std::string& label, int opset, int checker_max) {
  static const std::map<std::string, std::vector<const NewSchema*>> by_op = [] {
    std::map<std::string, std::vector<const NewSchema*>> m;
    for (const NewSchema& s : table()) m[s.op].push_back(&s);  // ascending since, as generated
    return m;
  }();
  auto it = by_op.find(np.op_type());
  if (it == by_op.end()) return false;
  const std::string op = printable(np.op_type());
  const int first = it->second.front()->first;
  if (opset < first)
    throw Error("onnx", label + ": invalid node: " + op + " is not defined at opset " + std::to_string(opset) + " (it first appears in opset " +
                            std::to_string(first) + ")");
  if (opset <= checker_max) return false;
  const NewSchema* s = nullptr;
  for (const NewSchema* c : it->second)
    if (c->since <= opset) s = c;
  if (!s) return false;  // unchanged since an opset the checker knows
  if (s->deprecated) return true;
  auto bad = [&](const std::string& why) {
    return Error("onnx", label + ": invalid node (onnx schema " + op + "-" + std::to_string(s->since) + ", opset " + std::to_string(opset) + "): " + why);
  };
  if (np.input_size() < s->min_in || np.input_size() > s->max_in)
    throw bad(std::to_string(np.input_size()) + " inputs, the op takes " + std::to_string(s->min_in) + ".." + std::to_string(s->max_in));
  if (np.output_size() < s->min_out || np.output_size() > s->max_out)
    throw bad(std::to_string(np.output_size()) + " outputs, the op has " + std::to_string(s->min_out) + ".." + std::to_string(s->max_out));
  for (const auto& a : np.attribute()) {
    const SchemaAttr* def = nullptr;
    for (const SchemaAttr& d : s->attrs)
      if (a.name() == d.name) def = &d;
    if (!def) throw bad("attribute '" + printable(a.name()) + "' is not defined for " + op + "-" + std::to_string(s->since));
    if (!a.ref_attr_name().empty() || a.type() == onnx::AttributeProto::UNDEFINED) continue;
    if (static_cast<int>(a.type()) != def->type)
      throw bad("attribute '" + printable(a.name()) + "' must be " + type_name(def->type) + ", got " + type_name(static_cast<int>(a.type())));
  }
  for (const SchemaAttr& d : s->attrs) {
    if (!d.required) continue;
    bool found = false;
    for (const auto& a : np.attribute()) found = found || a.name() == d.name;
    if (!found) throw bad("required attribute '" + std::string(d.name) + "' is missing");
  }
  return true;
}

}  // namespace fusor
