// Model-local functions (ModelProto.functions, ONNX IR >= 8: what torch.onnx's dynamo exporter
// and onnxscript emit) inlined at import, so every pass and backend sees plain nodes.
//
// libonnx 1.12's FunctionExpandHelper (onnx/defs/function.h) is not used: it predates default
// attributes (FunctionProto.attribute_proto, IR 9) and overloads (IR 10), expands one level,
// leaves names inside subgraph attributes as they are, and its nodes lose the function's
// opset_import. Those two newer fields are read from the protobuf's unknown fields (the 1.12
// classes do not declare them): FunctionProto field 11 (attribute_proto) and 13 (overload),
// NodeProto field 8 (overload).
//
// Semantics (those of onnx.inliner and onnxruntime's function inlining):
//  - a node calls function F when its (domain, op_type, overload) equal F's (domain, name,
//    overload); "ai.onnx" is the default domain "";
//  - F's formal inputs bind to the call's inputs (a missing trailing input or "" is an omitted
//    optional input, so body nodes see it omitted); F's formal outputs bind to the call's
//    outputs (a missing or "" one gets a fresh name and nothing reads it); a formal output that
//    is a formal input becomes an Identity node;
//  - every other value and node name of F's body, inside its subgraph attributes too, gets a
//    fresh name "<call node name>/<name>" (a "_k" suffix where that is taken), unique in the
//    model, so neither the graph nor two calls of one function clash;
//  - an attribute with ref_attr_name R takes the call's attribute R, else F's default for R
//    (attribute_proto), else it is left out (the op's own default applies);
//  - body nodes keep F's opset_import (a domain F does not list falls back to the model's);
//  - calls in the body expand in turn (subgraph bodies when they are imported, with the chain
//    of calls they sit in, so a cycle through an If branch is found as well).
// Errors: fusor::Error("onnx", ...), one line naming the function as 'domain.Name':
//   two definitions of one (domain, name, overload); a function without a name; an input or
//   output declared twice; an output no body node produces; a body node reading a value that
//   is neither a function input nor a body node's output; an opset_import out of range or listed
//   twice; a call with more inputs or outputs than F declares; a call leaving out an attribute
//   (no default either) that a body node's op schema requires; a cycle ("... calls itself
//   (local.F -> local.G -> local.F)"); calls nested deeper than kMaxFunctionDepth; inlining that
//   would make more than kMaxInlinedNodes nodes (an exponential fan-out of small functions).
#pragma once
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <onnx/onnx_pb.h>

namespace fusor {

using OpsetMap = std::map<std::string, int>;  // domain ("" for ai.onnx) -> version

constexpr int kMaxFunctionDepth = 256;
// The opset versions an opset_import may give a domain, as onnxruntime accepts them: ai.onnx up
// to kMaxOpset (onnx_import.h), ai.onnx.ml 1..5, other domains at least 1.
std::pair<int64_t, int64_t> onnx_opset_range(const std::string& domain);
// The version a node of a domain other than ai.onnx gets when no opset_import lists its domain:
// the domain's latest (ai.onnx.ml 5, com.microsoft and the others 1), as onnxruntime fills in a
// missing import (onnx.save of an onnxruntime-transformed model can drop it).
int onnx_implicit_opset(const std::string& domain);
// "ai.onnx" is the default domain "".
inline std::string onnx_norm_domain(const std::string& d) { return d == "ai.onnx" ? std::string() : d; }

constexpr size_t kMaxInlinedNodes = size_t{1} << 20;

struct LocalFunction {
  const onnx::FunctionProto* proto = nullptr;
  std::string label;  // "domain.Name", ":overload" appended when it has one
  OpsetMap opsets;    // its opset_import over the model's
  std::map<std::string, onnx::AttributeProto> defaults;  // attribute_proto, by name
};

// The chain of calls an inlined node came from (innermost first); nullptr outside functions.
struct CallFrame {
  const LocalFunction* fn;
  const CallFrame* up;
};

// One node for the importer: a graph's own node or one made by inlining. proto, opsets and
// frame stay valid as long as the LocalFunctions that made them.
struct ImportNode {
  const onnx::NodeProto* proto;
  const OpsetMap* opsets;   // the opsets its domain is versioned by
  const CallFrame* frame;   // calls it sits in; its subgraphs are imported within them
  size_t index;             // position in its graph, for a synthesized name (unnamed nodes only)
};

class LocalFunctions {
 public:
  // Reads and checks model.functions (see the errors above); model_opsets is the model's
  // opset_import, model_label "'path'" for messages.
  LocalFunctions(const onnx::ModelProto& model, const OpsetMap& model_opsets, const std::string& model_label);

  // The function np calls, nullptr when it calls none.
  const LocalFunction* find(const onnx::NodeProto& np) const;
  // Appends np to out or, when it calls a local function, that function's body bound to this
  // call, recursively. name: np's name as the importer labels it (synthesized when empty).
  void expand(const onnx::NodeProto& np, const OpsetMap* opsets, const CallFrame* frame, size_t index,
              const std::string& name, std::vector<ImportNode>& out);

 private:
  std::string fresh(std::unordered_set<std::string>& used, const std::string& base);
  // The nodes f's body (or node n) becomes with every call in it inlined, subgraphs included,
  // saturating past kMaxInlinedNodes: a fan-out is refused before it is built. A function
  // met again while it is being counted adds nothing (expand() reports the cycle).
  size_t inlined_size(const LocalFunction& f, int depth);
  size_t inlined_size(const onnx::NodeProto& n, int depth);
  std::vector<onnx::NodeProto> instantiate(const onnx::NodeProto& call, const std::string& call_name, const LocalFunction& f);

  std::string model_label_;
  std::map<std::tuple<std::string, std::string, std::string>, LocalFunction> by_key_;  // (domain, name, overload)
  std::unordered_set<std::string> used_values_, used_nodes_;  // every name in the model, and each one made
  std::unordered_map<std::string, size_t> next_suffix_;       // base -> next "_k" to try (no quadratic search)
  std::unordered_map<const LocalFunction*, size_t> sizes_;  // inlined_size memo (kCounting while counted)
  std::deque<onnx::NodeProto> nodes_;  // inlined nodes (stable addresses)
  std::deque<CallFrame> frames_;
};

}  // namespace fusor
