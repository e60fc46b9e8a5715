// ONNX schema checks for nodes of opsets newer than the linked libonnx's checker knows
// (libonnx 1.12: ai.onnx up to 17). The table (onnx_schemas_new.inc) is generated from the onnx
// Python package by scripts/gen_onnx_schemas.py and holds every ai.onnx schema version after 17.
#pragma once
#include <string>

namespace onnx {
class NodeProto;
}

namespace fusor {

// Checks node np (label "node 'x' (Op)") of ai.onnx at `opset` against the generated table, as
// onnx's OpSchema::Verify does: input and output counts, attribute names (an attribute the op
// version does not define is an error), attribute types, required attributes; and refuses an op
// used at an opset before it first appears (Gelu at 19). Returns true when it checked the node,
// false when the caller should verify it with libonnx's schema at min(opset, checker_max) (the
// op has not changed since). Throws Error("onnx", label + ": invalid node (onnx schema Op-N,
// opset M): ...") on a violation.
bool check_new_opset_schema(const onnx::NodeProto& np, const std::string& label, int opset, int checker_max);

}  // namespace fusor
