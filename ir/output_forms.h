// String labels and ZipMap at a model's outputs (what scikit-learn classifiers exported by
// skl2onnx return by default: a label tensor, of strings when the classes are strings, and the
// probabilities as ONNX seq(map(key, float)), ai.onnx.ml ZipMap).
//
// No backend computes on strings or maps, so they are kept at the boundary: at load,
// encode_output_forms rewrites a classifier's classlabels_strings into the codes 0 .. C-1
// (its label output becomes int64 codes into the strings) and a ZipMap into an Identity of its
// float input, and records in Graph::output_forms how each graph output stands for the value
// the model declares. The codes may pass through data-movement ops (Identity, Reshape, Flatten,
// Squeeze, Unsqueeze, Transpose, Slice, Gather, Expand, Tile, Concat of one table) to a graph
// output; anything else reading them, a ZipMap whose output is not a graph output, or one read
// by another node, is refused with one line (Unsupported("graph")). Every backend then runs the
// model as tensors; present_outputs turns the label codes into string tensors, and the callers
// that hand maps out (the Python API's list of dicts, `fusor conform` against a SequenceProto of
// MapProto, `fusor run`'s printout) read the zipmap form.
#pragma once
#include <vector>

#include "ir/graph.h"

namespace fusor {

// String graph inputs (what skl2onnx pipelines with categorical columns take) are kept at the
// boundary the same way: encode_string_inputs gives every string input one int64 code per
// string, its index in the sorted union of the strings the model compares them with (-1 for
// any other string), and rewrites the encoders reading them to integer ones over the codes:
// OneHotEncoder's cats_strings, LabelEncoder's keys_strings (numeric values) and CategoryMapper
// (strings to int64: a LabelEncoder). The codes may pass through the data moves above and
// ArrayFeatureExtractor. A string input with any other reader (a text op, Equal, a string-valued
// LabelEncoder), returned as an output, or sharing a reader with such an input stays a string
// (its string_inputs flag 0): its nodes run on the host (OpDef::strings, runtime/segments.h).
// encode_inputs turns the fed strings of the coded inputs into codes (specialize and fed_inputs
// call it).
void encode_string_inputs(Graph& g);
// inputs with each string input's strings replaced by their int64 codes (the rest as given); a
// string input fed int64 is taken as codes already (indices into input_strings, -1 for a string
// in none). Error("run") when a string input is fed another dtype or a code outside [-1, n).
std::vector<Tensor> encode_inputs(const Graph& g, const std::vector<Tensor>& inputs);

// Rewrites g (the main graph) as above and sets g.output_forms (left empty when every output
// is a plain tensor). Idempotent: a graph already rewritten is left as it is.
void encode_output_forms(Graph& g);

// After shape inference (a static graph): each zipmap output is float32 of rank 1 or 2 whose
// last dim equals the key count, as ZipMap requires (onnxruntime fails the run otherwise).
// Error("shape") naming the output.
void check_output_forms(const Graph& g);

// outs (one per g.outputs, as a backend returned them) as the model declares them: each labels
// output's int64 codes become a string tensor of the same shape. Error("run") on a code outside
// the table (none can come from a classifier's own rewrite). zipmap outputs stay float tensors,
// [N, C] (a ZipMap of a [C] input is one map: [1, C]).
void present_outputs(const Graph& g, std::vector<Tensor>& outs);

// Type text of output i for messages and listings: "seq(map(int64, float))",
// "seq(map(string, float))", "string", or "" for a plain tensor output.
std::string output_form_type(const Graph& g, size_t i);

}  // namespace fusor
