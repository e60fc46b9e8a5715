// ONNX model import (libonnx's generated protobuf classes). Models are validated the way
// onnxruntime validates them when it loads a graph: opset_import versions within the supported
// range (ai.onnx 1..kMaxOpset, ai.onnx.ml 1..5, other domains >= 1, every node's domain
// listed), and each node against its ONNX schema where the linked ONNX library defines one for
// the node's opset (input/output counts, attribute types, required/unknown attributes). onnx's
// whole-model checker is not used, so models of newer opsets still load.
//
// Contract of the returned Graph:
//  - graph initializers and `Constant` nodes become constant Values (Value::constant set);
//    Constant nodes do not appear in Graph::nodes;
//  - Graph::inputs are the graph inputs that are not initializers, with their declared dtype
//    and shape (a dim_param or missing dim_value becomes -1 and shape_known=false);
//  - Graph::outputs carry the declared dtype/shape when present (shape inference overwrites);
//  - nodes keep name (synthesized "<op_type>_<index>" when empty), op_type, domain,
//    attributes (FLOAT -> double) and the opset of their domain; an omitted optional
//    input/output is -1; nodes are topologically sorted;
//  - a GRAPH attribute (If's branches, Loop/Scan bodies) becomes a std::shared_ptr<const Graph>
//    imported the same way; the values it reads from enclosing graphs are its graph inputs after
//    its formal ones (Graph::formal_inputs counts those; placeholders named like the outer
//    value), and the node's inputs after its own hold those
//    outer values, graph attributes taken in name order. Lists of graphs (GRAPHS) are Unsupported.
//  - calls of model-local functions (ModelProto.functions) are inlined: their body nodes appear
//    instead, named "<call node>/<name>", each with the opset of the function's opset_import
//    (frontend/onnx_functions.h, which lists the errors).
// Errors: fusor::Error with component "onnx" naming the file, node, value or tensor, e.g.
//   "[onnx] cannot open model 'm.onnx': No such file",
//   "[onnx] 'm.onnx' is not a valid ONNX model (protobuf parse failed)",
//   "[onnx] node 'add' (Add): input 'nope' is not defined (not a graph input, initializer or node output)".
//   "[onnx] node 'r' (Relu): invalid node (onnx schema Relu-14): Node (r) has output size 2 not in range [min=1, max=1].".
// Names are quoted through printable(), so every message is one line.
#pragma once
#include <string>

#include <onnx/onnx_pb.h>

#include "ir/graph.h"

namespace fusor {

// The newest ai.onnx opset a model may import (the newest the ONNX test suites use).
constexpr int kMaxOpset = 28;

// Loads a model file (only a regular file: a FIFO, device or directory is an error); external data files are resolved relative to the model's folder.
Graph load_onnx(const std::string& path);
// Loads a serialized ModelProto held in memory; external data is resolved relative to
// base_dir ("" means the current directory).
Graph load_onnx_from_bytes(const std::string& bytes, const std::string& base_dir);

// Converts a TensorProto to a host tensor: raw_data (little-endian), the typed fields
// (float_data, int32_data incl. the 16/8-bit and bool packing of onnx.proto, int64_data,
// double_data, uint64_data, string_data) and external data (data_location == EXTERNAL with
// keys "location", "offset", "length"). The location must be a relative path that stays
// inside base_dir after std::filesystem::weakly_canonical (symlinks are followed, so a link
// pointing out of the folder is refused too). Throws Error("onnx", "tensor 'name': ...").
Tensor tensor_from_proto(const onnx::TensorProto& t, const std::string& base_dir);
// The same, moving raw_data into the tensor instead of copying it (t's raw_data is left empty).
Tensor tensor_from_proto(onnx::TensorProto&& t, const std::string& base_dir);

// Converts a SparseTensorProto (a sparse initializer, Constant's sparse_value) to its dense
// tensor, as onnxruntime does: `values` [NNZ] (any dtype tensor_from_proto reads), `indices`
// integer [NNZ] (row-major positions) or [NNZ, rank], `dims` the dense shape; elements not
// listed are 0 ("" for strings). Throws Error("onnx", "sparse tensor 'name': ...") for an index
// outside dims, indices not strictly ascending (onnx.proto asks for ascending order; a repeat
// would make the value ambiguous), mismatched index / value shapes, or a dense form over
// kMaxSparseDenseBytes.
inline constexpr uint64_t kMaxSparseDenseBytes = uint64_t{1} << 32;
Tensor tensor_from_sparse_proto(const onnx::SparseTensorProto& s, const std::string& base_dir);

}  // namespace fusor
