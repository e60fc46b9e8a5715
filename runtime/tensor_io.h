// Tensor files: ONNX TensorProto (.pb, the ONNX backend-test format) and NumPy .npy, plus the
// loader for ONNX backend-test case folders (model.onnx + test_data_set_N/{input,output}_K.pb).
// Every failure is a fusor::Error with component "io" that names the file.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace fusor {

// Serialized onnx.TensorProto. `name` (optional) receives the tensor's name. External data is
// resolved relative to the file's folder. Writes use raw_data (string tensors: string_data).
Tensor read_tensor_pb(const std::string& path, std::string* name = nullptr);
void write_tensor_pb(const std::string& path, const Tensor& t, const std::string& name);
// A .pb file holds one protobuf message, at most 2^31 - 1 bytes (protobuf's limit): throws
// Error("io") naming `what` when a tensor of this dtype and shape could not be written as one,
// so `fusor run --out` refuses before running rather than after (write_tensor_pb checks too).
void check_pb_writable(const std::string& what, DType t, const Shape& s);

// NumPy .npy, format versions 1.0/2.0/3.0, little-endian, C order only. Supported descr:
// <f4 <f8 <f2 <i8 <i4 <i2 |i1 |u1 <u2 <u4 <u8 |b1 ('=' is accepted as little-endian).
// fortran_order True, big-endian and other dtypes throw. Writes version 1.0 (2.0 when the
// header does not fit), header padded to 64 bytes as numpy does; bf16 and strings cannot be
// written (npy has no such dtype).
Tensor read_npy(const std::string& path);
void write_npy(const std::string& path, const Tensor& t);

// Dispatches on the extension: ".pb" -> read_tensor_pb, ".npy" -> read_npy.
Tensor read_tensor(const std::string& path);

// The inputs of a folder of input_K.pb / input_K.npy files (other names are ignored), in K
// order. Throws Error("io") when there is none, when K is not a number, or when the Ks are not
// exactly 0..n-1 (a lone input_1 is not input 0). names (optional) receives each file's tensor
// name ("" for .npy and unnamed .pb files), for bind_inputs (runtime/session.h).
std::vector<Tensor> read_numbered_inputs(const std::string& dir, std::vector<std::string>* names = nullptr);

// Writes `bytes` to path as given (replacing the file) and checks the stream after close(),
// which flushes: a write error (disk full, /dev/full) shows only there. Throws
// Error(component, "cannot write '<path>'") on any failure (component: the caller's tag).
void write_file(const std::string& path, const std::string& bytes, const std::string& component);

// A model argument as a file: a folder stands for its model.onnx, anything else is returned
// as is (a path the OS cannot stat, e.g. a symlink loop, is left for the loader's one-line error).
std::string model_path(const std::string& path);

// Tensor files are read only when they are regular files (a FIFO or device is an error, never
// a hang) no larger than the host's memory.

// An expected output stored as an ONNX SequenceProto of MapProto (seq(map(int64 | string,
// float)): ai.onnx.ml ZipMap's output, as onnxruntime's runs of skl2onnx classifiers write it).
struct MapSequence {
  bool string_keys = false;
  std::vector<std::vector<std::string>> keys;  // per map, in the file's order (int64 keys as decimal text)
  std::vector<std::vector<double>> values;     // per map, the float value of each key
};

// One test_data_set_N folder: inputs/outputs ordered by K of input_K.pb / output_K.pb;
// names are the TensorProto names (may be empty). An output_K.pb holding a sequence of maps
// is read into output_maps[K] (its outputs[K] is then an undefined Tensor); use
// expected_outputs to compare with a run's outputs.
struct TestCase {
  std::string dir;
  std::vector<Tensor> inputs, outputs;
  std::vector<std::string> input_names, output_names;
  std::vector<std::optional<MapSequence>> output_maps;  // one per output
};
// Every test_data_set_* folder of model_dir, sorted by its numeric suffix (then by name).
// Returns an empty vector when there is none; throws when model_dir is not a folder, or when a
// folder's input_K/output_K files are not numbered exactly 0..n-1.
std::vector<TestCase> load_test_data_sets(const std::string& model_dir);
// A test set must hold one expected value per output of g (a missing output_K.pb would leave
// that output unchecked and the case "passed"): Error(component) naming the folder otherwise
// (component: the caller's tag, "conform" or "run").
void check_expected_outputs(const Graph& g, const TestCase& tc, const std::string& component);
// tc's expected outputs as a run of g returns them after present_outputs (ir/output_forms.h): a
// sequence of maps for a ZipMap output becomes the float32 [N, C] tensor of its values in the
// order of the output's keys. Error(component) naming the file's folder and the output when a
// sequence of maps stands for a tensor output or the reverse, or a map's keys are not the
// output's keys.
std::vector<Tensor> expected_outputs(const Graph& g, const TestCase& tc, const std::string& component);
// Writes a ZipMap output (values [N, C] float32, form: the output's Graph::OutputForm) as the
// SequenceProto of N MapProto onnxruntime's tests store (each map's values one float tensor).
void write_map_sequence_pb(const std::string& path, const Tensor& values, const Graph::OutputForm& form, const std::string& name);

}  // namespace fusor
