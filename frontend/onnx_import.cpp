#include "frontend/onnx_import.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <unordered_map>

#include <google/protobuf/io/coded_stream.h>
#include <onnx/defs/schema.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "frontend/onnx_functions.h"
#include "frontend/onnx_schema_check.h"
#include "ir/output_forms.h"
#include "ir/phases.h"
#include "ir/small_dtypes.h"

namespace fusor {
namespace fs = std::filesystem;

// raw_data and external data are little-endian byte images; we copy them as-is.
static_assert(std::endian::native == std::endian::little, "fusor's ONNX import assumes a little-endian host");

namespace {

// A TypeProto as ONNX writes it in op schemas: "tensor(float)", "seq(tensor(int64))", ...
std::string type_proto_name(const onnx::TypeProto& t) {
  if (t.has_tensor_type()) {
    const DType d = dtype_from_onnx(t.tensor_type().elem_type());
    return "tensor(" + std::string(d == DType::undefined ? "?" : dtype_name(d)) + ")";
  }
  if (t.has_sequence_type()) return "seq(" + type_proto_name(t.sequence_type().elem_type()) + ")";
  if (t.has_optional_type()) return "optional(" + type_proto_name(t.optional_type().elem_type()) + ")";
  return "?";
}


Error tensor_error(const onnx::TensorProto& t, const std::string& why) {
  return Error("onnx", "tensor '" + printable(t.name()) + "': " + why);
}

// Resolves an external-data location against base_dir. Both sides go through
// weakly_canonical so "..", "." and symlinks cannot smuggle a read outside the model folder.
fs::path resolve_external_path(const onnx::TensorProto& t, const std::string& location, const std::string& base_dir) {
  auto escapes = [&] { return tensor_error(t, "external data path '" + printable(location) + "' escapes the model folder"); };
  fs::path rel(location);
  if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory()) throw escapes();
  std::error_code ec;
  fs::path base = fs::weakly_canonical(fs::absolute(base_dir.empty() ? fs::path(".") : fs::path(base_dir)), ec);
  if (ec) throw tensor_error(t, "cannot resolve model folder '" + base_dir + "': " + ec.message());
  base = base.lexically_normal();
  if (!base.has_filename() && base.has_parent_path() && base != base.root_path()) base = base.parent_path();
  fs::path full = fs::weakly_canonical(base / rel, ec);
  if (ec) throw tensor_error(t, "cannot resolve external data path '" + printable(location) + "': " + ec.message());
  auto [bi, fi] = std::mismatch(base.begin(), base.end(), full.begin(), full.end());
  if (bi != base.end() || fi == full.end()) throw escapes();
  return full;
}

// An external-data offset/length: decimal digits only. "0x10", "1e1", " 5" or "+5" are refused
// rather than read by their leading digits (which would silently misalign the weights).
int64_t parse_external_number(const onnx::TensorProto& t, const std::string& key, const std::string& text) {
  int64_t v = -1;
  const char* b = text.data();
  const char* e = b + text.size();
  const bool digits = !text.empty() && std::all_of(b, e, [](char c) { return c >= '0' && c <= '9'; });
  auto [end, ec] = std::from_chars(b, e, v);
  if (!digits || ec != std::errc() || end != e)
    throw tensor_error(t, "external data key '" + key + "' has value '" + printable(text) +
                              "', not a decimal integer in [0, 2^63)");
  return v;
}

// Validates an external-data reference for a tensor of nbytes bytes (location inside the
// model folder, file present and long enough) and returns the file and offset to read.
std::pair<fs::path, int64_t> check_external(const onnx::TensorProto& t, const std::string& base_dir, size_t nbytes) {
  std::string location;
  int64_t offset = 0, length = -1;
  std::set<std::string> seen;
  for (const auto& kv : t.external_data()) {
    // A repeated key (two locations, two offsets) is ambiguous: refuse it rather than pick one.
    if (!seen.insert(kv.key()).second)
      throw tensor_error(t, "external data has a duplicate '" + printable(kv.key()) + "' entry");
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset") offset = parse_external_number(t, "offset", kv.value());
    else if (kv.key() == "length") length = parse_external_number(t, "length", kv.value());
  }
  // The OS reads a path up to its first NUL: "data.bin\0../x" would open data.bin, not what it says.
  if (location.find('\0') != std::string::npos)
    throw tensor_error(t, "external data location '" + printable(location) + "' contains a NUL byte");
  if (location.empty()) throw tensor_error(t, "external data has no 'location'");
  if (length >= 0 && static_cast<uint64_t>(length) != nbytes)
    throw tensor_error(t, "external data length " + std::to_string(length) + " does not match the " +
                              std::to_string(nbytes) + " bytes its dtype and shape need");
  fs::path file = resolve_external_path(t, location, base_dir);
  std::error_code ec;
  if (const fs::file_status st = fs::status(file, ec); !fs::is_regular_file(st)) {
    // "not found" only when nothing is there: a folder or FIFO named by location exists.
    const std::string what = !fs::exists(st)         ? "not found"
                             : fs::is_directory(st) ? "is a directory, not a regular file"
                                                    : "is not a regular file (FIFO, socket or device)";
    throw tensor_error(t, "external data file '" + printable(file.string()) + "' " + what + " (location '" + printable(location) + "')");
  }
  uint64_t size = fs::file_size(file, ec);
  if (ec || static_cast<uint64_t>(offset) + nbytes > size)
    throw tensor_error(t, "external data file '" + printable(file.string()) + "' is too short: need " + std::to_string(nbytes) +
                              " bytes at offset " + std::to_string(offset) + ", file has " + std::to_string(size));
  return {file, offset};
}

// Size of the typed field onnx.proto assigns to dt (f16/bf16/bool/8- and 16-bit ints live in
// int32_data, u32 in uint64_data).
int typed_field_size(const onnx::TensorProto& t, DType dt, const char** field) {
  switch (dt) {
    case DType::f32: *field = "float_data"; return t.float_data_size();
    case DType::f64: *field = "double_data"; return t.double_data_size();
    case DType::i64: *field = "int64_data"; return t.int64_data_size();
    case DType::u64: case DType::u32: *field = "uint64_data"; return t.uint64_data_size();
    default: *field = "int32_data"; return t.int32_data_size();
  }
}

// Copies a repeated typed field element by element (static_cast keeps the bit patterns
// onnx.proto prescribes, e.g. f16 bits in the low half of an int32).
template <class Dst, class Field> void copy_field(Tensor& out, const Field& src) {
  Dst* d = out.data<Dst>();
  for (int i = 0; i < src.size(); ++i) d[i] = static_cast<Dst>(src[i]);
}

}  // namespace

namespace {
// dtype, shape and sizes of a TensorProto, checked.
struct ProtoLayout {
  DType dt;
  Shape shape;
  int64_t n;
  size_t nbytes;
  bool external;
};

ProtoLayout proto_layout(const onnx::TensorProto& t) {
  // data_type 0 (UNDEFINED, also what an empty or truncated file parses to) is a broken tensor,
  // not a dtype fusor lacks: a failure, so a test set with such an output is not a "skip".
  if (t.data_type() <= 0) throw tensor_error(t, "has no data type (data_type is unset or " + std::to_string(t.data_type()) + ")");
  // A number past onnx.proto's DataType enum (1..28 as of ONNX 1.23: ..., FLOAT6E3M2) is a
  // corrupt tensor, not a dtype fusor lacks (libonnx 1.12's own enum stops at BFLOAT16).
  if (t.data_type() > 28) throw tensor_error(t, "data_type " + std::to_string(t.data_type()) + " is not an ONNX data type");
  DType dt = dtype_from_onnx(t.data_type());
  if (dt == DType::undefined)  // complex64 / complex128: a dtype fusor does not support (a skip, not a failure)
    throw Unsupported("onnx", "tensor '" + printable(t.name()) + "': unsupported data type " + std::to_string(t.data_type()));
  if (t.has_segment()) throw tensor_error(t, "segmented tensors are not supported");
  // onnx.proto: one value field holds the data (the checker's rule); with two, which one counts
  // would be a guess (raw_data and float_data, external data and raw_data, ...).
  std::vector<const char*> fields;
  if (t.has_raw_data()) fields.push_back("raw_data");
  if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) fields.push_back("external data");
  const std::pair<const char*, int> typed[] = {{"float_data", t.float_data_size()},   {"int32_data", t.int32_data_size()},
                                               {"string_data", t.string_data_size()}, {"int64_data", t.int64_data_size()},
                                               {"double_data", t.double_data_size()}, {"uint64_data", t.uint64_data_size()}};
  for (const auto& [field, size] : typed)
    if (size > 0) fields.push_back(field);
  if (fields.size() > 1)
    throw tensor_error(t, std::string("holds values in both ") + fields[0] + " and " + fields[1] + " (onnx.proto allows one value field)");
  // Every size is checked before allocating, so a corrupt or hostile file fails with an Error
  // instead of an overflowing or multi-terabyte allocation.
  Shape shape(t.dims().begin(), t.dims().end());
  for (auto d : shape)
    if (d < 0) throw tensor_error(t, "negative dimension in " + shape_str_short(shape));
  if (const std::string why = shape_bounds_problem(shape); !why.empty())
    throw tensor_error(t, "shape " + shape_str_short(shape) + " is too large (" + why + ")");
  const int64_t n = shape_numel(shape);
  // nbytes: the file image (int4/int2/float4 packed, ir/small_dtypes.h), not the unpacked tensor.
  return {dt, shape, n, static_cast<size_t>(packed_bytes(dt, n)), t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL};
}
}  // namespace

Tensor tensor_from_proto(onnx::TensorProto&& t, const std::string& base_dir) {
  ProtoLayout l = proto_layout(t);
  // raw_data moves into the tensor: a model's weights are not copied once more.
  if (l.dt != DType::string && dtype_bits(l.dt) >= 8 && !l.external && t.has_raw_data() && t.raw_data().size() == l.nbytes)
    return Tensor(l.dt, std::move(l.shape), std::move(*t.mutable_raw_data()));
  return tensor_from_proto(static_cast<const onnx::TensorProto&>(t), base_dir);
}

Tensor tensor_from_proto(const onnx::TensorProto& t, const std::string& base_dir) {
  const auto [dt, shape, n, nbytes, external] = proto_layout(t);

  if (dt == DType::string) {
    if (external) throw tensor_error(t, "external data for string tensors is not supported");
    if (t.has_raw_data()) throw tensor_error(t, "string tensors cannot use raw_data (ONNX stores them in string_data)");
    if (t.string_data_size() != n)
      throw tensor_error(t, "string_data has " + std::to_string(t.string_data_size()) + " elements, shape " +
                                shape_str(shape) + " needs " + std::to_string(n));
    Tensor out(dt, shape);
    out.strings.assign(t.string_data().begin(), t.string_data().end());
    return out;
  }
  const bool packed = dtype_bits(dt) < 8;
  if (external) {
    auto [file, offset] = check_external(t, base_dir, nbytes);
    if (packed) {
      std::string image(nbytes, '\0');
      std::ifstream in(file, std::ios::binary);
      in.seekg(offset);
      in.read(image.data(), static_cast<std::streamsize>(nbytes));
      if (!in) throw tensor_error(t, "reading external data file '" + printable(file.string()) + "' failed");
      return unpack_small(dt, shape, image);
    }
    Tensor out(dt, shape);
    std::ifstream in(file, std::ios::binary);
    in.seekg(offset);
    in.read(reinterpret_cast<char*>(out.raw()), static_cast<std::streamsize>(nbytes));
    if (!in) throw tensor_error(t, "reading external data file '" + printable(file.string()) + "' failed");
    return out;
  }
  if (t.has_raw_data()) {
    if (t.raw_data().size() != nbytes)
      throw tensor_error(t, "raw_data has " + std::to_string(t.raw_data().size()) + " bytes, " + dtype_name(dt) + " " +
                                shape_str(shape) + " needs " + std::to_string(nbytes));
    if (packed) return unpack_small(dt, shape, t.raw_data());
    Tensor out(dt, shape);
    if (nbytes) std::memcpy(out.raw(), t.raw_data().data(), nbytes);
    return out;
  }
  if (n == 0) return Tensor(dt, shape);
  const char* field = "";
  // int32_data holds one element per entry, except for the packed types: one byte per entry.
  const int64_t want = packed ? static_cast<int64_t>(nbytes) : n;
  if (int have = typed_field_size(t, dt, &field); have != want)
    throw tensor_error(t, std::string(field) + " has " + std::to_string(have) + " elements, " + dtype_name(dt) + " " +
                              shape_str(shape) + " needs " + std::to_string(want));
  if (packed) {
    std::string image(nbytes, '\0');
    for (size_t i = 0; i < nbytes; ++i) image[i] = static_cast<char>(t.int32_data(static_cast<int>(i)));
    return unpack_small(dt, shape, image);
  }
  Tensor out(dt, shape);
  switch (dt) {
    case DType::f32: copy_field<float>(out, t.float_data()); break;
    case DType::f64: copy_field<double>(out, t.double_data()); break;
    case DType::i64: copy_field<int64_t>(out, t.int64_data()); break;
    case DType::u64: copy_field<uint64_t>(out, t.uint64_data()); break;
    case DType::u32: copy_field<uint32_t>(out, t.uint64_data()); break;
    case DType::i32: copy_field<int32_t>(out, t.int32_data()); break;
    case DType::i16: copy_field<int16_t>(out, t.int32_data()); break;
    case DType::i8: copy_field<int8_t>(out, t.int32_data()); break;
    case DType::u16: case DType::f16: case DType::bf16: copy_field<uint16_t>(out, t.int32_data()); break;
    case DType::u8: copy_field<uint8_t>(out, t.int32_data()); break;
    case DType::f8e4m3fn: case DType::f8e4m3fnuz: case DType::f8e5m2: case DType::f8e5m2fnuz: case DType::f8e8m0:
      copy_field<uint8_t>(out, t.int32_data());  // the encoding's bits
      break;
    case DType::boolean:
      for (int64_t i = 0; i < n; ++i) out.data<uint8_t>()[i] = t.int32_data(static_cast<int>(i)) ? 1 : 0;
      break;
    default: throw tensor_error(t, std::string("cannot read typed data of dtype ") + dtype_name(dt));
  }
  return out;
}

Tensor tensor_from_sparse_proto(const onnx::SparseTensorProto& s, const std::string& base_dir) {
  const onnx::TensorProto& vp = s.values();
  const std::string who = "sparse tensor '" + printable(vp.name()) + "'";
  Shape shape(s.dims().begin(), s.dims().end());
  for (int64_t d : shape)
    if (d < 0) throw Error("onnx", who + ": negative dimension in " + shape_str_short(shape));
  if (const std::string why = shape_bounds_problem(shape); !why.empty())
    throw Error("onnx", who + ": shape " + shape_str_short(shape) + " is too large (" + why + ")");
  Tensor values = tensor_from_proto(vp, base_dir);
  if (values.shape().size() != 1) throw Error("onnx", who + ": values must be 1-D [NNZ], got " + shape_str_short(values.shape()));
  const int64_t nnz = values.shape()[0];
  // The dense image is built on the host at load; a few bytes of file must not ask for
  // terabytes (a string element costs its std::string, not the 0 bytes tensor_bytes counts).
  const uint64_t dense = values.dtype() == DType::string ? tensor_bytes(DType::u64, shape) * (sizeof(std::string) / 8)
                                                         : tensor_bytes(values.dtype(), shape);
  if (dense > kMaxSparseDenseBytes)
    throw Error("onnx", who + ": its dense form " + shape_str_short(shape) + " " + dtype_name(values.dtype()) + " would take " +
                            std::to_string(dense) + " bytes (at most " + std::to_string(kMaxSparseDenseBytes) + " are densified)");
  // onnx.proto requires indices only where there are values: an all-zero tensor may omit them.
  if (nnz == 0 && !s.has_indices()) return Tensor(values.dtype(), shape);
  Tensor indices = tensor_from_proto(s.indices(), base_dir);
  const int64_t rank = static_cast<int64_t>(shape.size()), numel = shape_numel(shape);
  if (!dtype_is_int(indices.dtype())) throw Error("onnx", who + ": indices must be integers, got " + dtype_name(indices.dtype()));
  // onnx.proto: indices are [NNZ] (positions in the row-major dense tensor) or [NNZ, rank].
  const bool linear = indices.shape() == Shape{nnz};
  if (!linear && indices.shape() != Shape{nnz, rank})
    throw Error("onnx", who + ": indices " + shape_str_short(indices.shape()) + " are neither [" + std::to_string(nnz) + "] nor [" +
                            std::to_string(nnz) + ", " + std::to_string(rank) + "]");
  Tensor out(values.dtype(), shape);
  const size_t es = dtype_size(values.dtype());
  int64_t prev = -1;
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t pos = 0;
    if (linear) {
      pos = indices.get_int(k);
    } else {
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t i = indices.get_int(k * rank + d);
        if (i < 0 || i >= shape[static_cast<size_t>(d)])
          throw Error("onnx", who + ": index " + std::to_string(i) + " of value " + std::to_string(k) + " is outside dim " +
                                  std::to_string(d) + " of " + shape_str_short(shape));
        pos = pos * shape[static_cast<size_t>(d)] + i;
      }
    }
    if (pos < 0 || pos >= numel)
      throw Error("onnx", who + ": index " + std::to_string(pos) + " of value " + std::to_string(k) + " is outside " + shape_str_short(shape));
    // onnx.proto: "indices must appear in ascending order"; a repeat would make the value a guess.
    if (pos <= prev)
      throw Error("onnx", who + ": indices are not in strictly ascending order (value " + std::to_string(k) + " at position " +
                              std::to_string(pos) + ")");
    prev = pos;
    if (values.dtype() == DType::string) out.strings[static_cast<size_t>(pos)] = values.strings[static_cast<size_t>(k)];
    else std::memcpy(out.raw() + pos * static_cast<int64_t>(es), values.raw() + k * static_cast<int64_t>(es), es);
  }
  return out;
}

namespace {

struct Importer {
  onnx::ModelProto& model;  // initializers' raw_data is moved out
  std::string base_dir;
  std::string model_label;  // "'path'" for messages
  Graph g;
  std::unordered_map<std::string, int> ids;  // value name -> id (Graph::find_value is linear)
  std::map<std::string, int> opsets;         // domain ("" for ai.onnx) -> version
  // Subgraphs (If branches): the enclosing graph's importer, and the outer values this graph
  // reads, one per placeholder appended to g.inputs after its formal inputs.
  Importer* parent = nullptr;
  std::vector<int> captured_outer;
  // Model-local functions (shared by every graph of the model), and the calls this graph sits
  // in when it is a subgraph of an inlined node (frontend/onnx_functions.h).
  LocalFunctions* functions = nullptr;
  const CallFrame* frame = nullptr;

  static std::string norm_domain(const std::string& d) { return onnx_norm_domain(d); }

  int define(const std::string& name, int id, const std::string& who) {
    if (!ids.emplace(name, id).second)
      throw Error("onnx", who + ": value '" + printable(name) + "' is defined more than once (ONNX graphs are SSA)");
    return id;
  }

  // The value `name` as seen from this graph: its own, else (in a subgraph) an enclosing graph's,
  // captured as a new graph input (the enclosing importer captures it in turn when nested).
  int resolve(const std::string& name, const std::string& who) {
    auto it = ids.find(name);
    if (it != ids.end()) return it->second;
    if (!parent) throw Error("onnx", who + ": input '" + printable(name) + "' is not defined (not a graph input, initializer or node output)");
    const int outer = parent->resolve(name, who);
    const int id = define(name, g.add_value(name), who);
    g.inputs.push_back(id);
    captured_outer.push_back(outer);
    return id;
  }

  // Reads a ValueInfoProto's tensor type. Returns false when no type is declared (an empty
  // TypeProto, `type {}`, as torch's TorchScript exporter writes for Loop body inputs, too).
  bool read_type(const onnx::ValueInfoProto& vi, const std::string& what, DType& dt, Shape& shape, bool& known,
                 std::vector<std::string>* dim_params = nullptr) {
    if (!vi.has_type()) return false;
    if (vi.type().value_case() == onnx::TypeProto::VALUE_NOT_SET) {
      // A subgraph input is typed by its node; a model's own input needs its type (onnxruntime: "does
      // not have type information").
      if (what == "graph input") throw Error("onnx", what + " '" + printable(vi.name()) + "' has an empty type (no tensor type)");
      return false;
    }
    if (!vi.type().has_tensor_type())
      throw Error("onnx", what + " '" + printable(vi.name()) + "': only tensor types are supported (sequence/map/optional are not)");
    const auto& tt = vi.type().tensor_type();
    dt = dtype_from_onnx(tt.elem_type());
    shape.clear();
    known = tt.has_shape();
    if (tt.has_shape())
      for (const auto& d : tt.shape().dim()) {
        bool fixed = d.has_dim_value() && d.dim_value() >= 0;
        shape.push_back(fixed ? d.dim_value() : -1);
        if (dim_params) dim_params->push_back(!fixed && d.has_dim_param() ? d.dim_param() : "");
        known = known && fixed;
      }
    return true;
  }

  AttrValue convert_attr(const onnx::AttributeProto& a, const std::string& label) {
    using A = onnx::AttributeProto;
    int type = a.type();
    if (type == A::UNDEFINED) {  // very old exporters left `type` unset; infer it from the set field
      if (a.has_f()) type = A::FLOAT;
      else if (a.has_i()) type = A::INT;
      else if (a.has_s()) type = A::STRING;
      else if (a.has_t()) type = A::TENSOR;
      else if (a.has_sparse_tensor()) type = A::SPARSE_TENSOR;
      else if (a.has_g() || a.graphs_size()) type = A::GRAPH;
      else if (a.floats_size()) type = A::FLOATS;
      else if (a.ints_size()) type = A::INTS;
      else if (a.strings_size()) type = A::STRINGS;
      else throw Error("onnx", label + ": attribute '" + printable(a.name()) + "' has no type and no value");
    }
    switch (type) {
      case A::INT: return int64_t{a.i()};
      case A::FLOAT: return double{a.f()};
      case A::STRING: return a.s();
      case A::INTS: return std::vector<int64_t>(a.ints().begin(), a.ints().end());
      case A::FLOATS: return std::vector<double>(a.floats().begin(), a.floats().end());
      case A::STRINGS: return std::vector<std::string>(a.strings().begin(), a.strings().end());
      case A::TENSOR:
        try {
          return tensor_from_proto(a.t(), base_dir);
        } catch (const Error& e) {
          throw Error("onnx", label + ": attribute '" + printable(a.name()) + "': " + e.message());
        }
      case A::SPARSE_TENSOR:
        try {
          return tensor_from_sparse_proto(a.sparse_tensor(), base_dir);
        } catch (const Error& e) {
          throw Error("onnx", label + ": attribute '" + printable(a.name()) + "': " + e.message());
        }
      case A::GRAPH: return std::shared_ptr<const Graph>();  // imported once the outer values are known (body())
      case A::TYPE_PROTO: return type_proto_name(a.tp());  // Optional's `type`: descriptive only
      case A::GRAPHS:
        throw Unsupported("onnx", label + ": attribute '" + a.name() + "': lists of subgraphs are not supported");
      default:
        throw Error("onnx", label + ": attribute '" + printable(a.name()) + "' has unsupported type " +
                                A::AttributeType_Name(static_cast<A::AttributeType>(type)));
    }
  }

  // The tensor a Constant node holds (ONNX Constant-13..21: exactly one value* attribute).
  Tensor constant_value(const Node& n) {
    auto attr = [&](const char* k) { return n.attrs.count(k) != 0; };
    int given = 0;  // two (value_float and value_int) picked one silently; onnxruntime refuses
    for (const char* k : {"value", "value_float", "value_int", "value_floats", "value_ints", "value_string", "value_strings", "sparse_value"})
      given += attr(k) ? 1 : 0;
    if (given > 1) throw Error("onnx", n.label() + ": Constant has " + std::to_string(given) + " value attributes, exactly one is allowed");
    if (const Tensor* t = attr("value") ? n.attr_t("value") : nullptr) return *t;
    if (const Tensor* t = attr("sparse_value") ? n.attr_t("sparse_value") : nullptr) return *t;
    if (attr("value_float")) {
      Tensor t(DType::f32, {});
      t.set(0, n.attr_f("value_float", 0));
      return t;
    }
    if (attr("value_int")) {
      Tensor t(DType::i64, {});
      t.set_int(0, n.attr_i("value_int", 0));
      return t;
    }
    if (attr("value_floats")) {
      auto v = n.attr_floats("value_floats");
      Tensor t(DType::f32, {static_cast<int64_t>(v.size())});
      for (size_t i = 0; i < v.size(); ++i) t.set(static_cast<int64_t>(i), v[i]);
      return t;
    }
    if (attr("value_ints")) {
      auto v = n.attr_ints("value_ints");
      Tensor t(DType::i64, {static_cast<int64_t>(v.size())});
      for (size_t i = 0; i < v.size(); ++i) t.set_int(static_cast<int64_t>(i), v[i]);
      return t;
    }
    if (attr("value_string")) {
      Tensor t(DType::string, {});
      t.strings[0] = n.attr_s("value_string", "");
      return t;
    }
    if (attr("value_strings")) {
      const auto& v = std::get<std::vector<std::string>>(n.attrs.at("value_strings"));
      Tensor t(DType::string, {static_cast<int64_t>(v.size())});
      t.strings = v;
      return t;
    }
    throw Error("onnx", n.label() + ": Constant has no value attribute");
  }

  // The node against its ONNX schema, as onnxruntime does when it resolves a graph: input and
  // output counts, attribute types, required and unknown attributes. ai.onnx nodes of opsets
  // past what the linked ONNX library knows (17) are checked against the generated table of
  // newer schema versions (onnx_schema_check.h), or, for an op unchanged since, against the
  // library's latest schema; ops it does not define are left to the op table (an unsupported
  // op is a skip, not an invalid model).
  void verify_schema(const onnx::NodeProto& np, const Node& n) {
    const std::string domain = n.domain.empty() ? std::string(onnx::ONNX_DOMAIN) : n.domain;
    const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    auto r = ranges.find(domain);
    if (r == ranges.end()) return;
    const int known = r->second.second;
    if (domain == onnx::ONNX_DOMAIN && check_new_opset_schema(np, n.label(), n.opset, known)) return;
    if (n.opset > known && domain != onnx::ONNX_DOMAIN) return;  // no table for other domains
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(np.op_type(), std::min(n.opset, known), domain);
    if (!schema || schema->Deprecated()) return;
    try {
      schema->Verify(np);
    } catch (const std::exception& e) {
      std::string m = e.what();
      m = m.substr(0, m.find('\n'));  // onnx appends a multi-line context block
      throw Error("onnx", n.label() + ": invalid node (onnx schema " + printable(np.op_type()) + "-" +
                              std::to_string(schema->SinceVersion()) + (n.opset > known ? ", opset " + std::to_string(n.opset) : std::string()) +
                              "): " + printable(m));
    }
  }

  static std::string node_name(const onnx::NodeProto& np, size_t index) {
    return np.name().empty() ? np.op_type() + "_" + std::to_string(index) : np.name();
  }

  // domain_opsets: the model's, or for a node inlined from a local function, the function's.
  Node convert_node_header(const onnx::NodeProto& np, size_t index, const OpsetMap& domain_opsets) {
    Node n;
    n.op_type = np.op_type();
    n.name = node_name(np, index);
    n.domain = norm_domain(np.domain());
    auto it = domain_opsets.find(n.domain);
    n.opset = it != domain_opsets.end() ? it->second : (n.domain.empty() ? g.opset : onnx_implicit_opset(n.domain));
    n.check_types = true;
    const std::string label = n.label();
    verify_schema(np, n);
    for (const auto& a : np.attribute()) n.attrs[a.name()] = convert_attr(a, label);
    return n;
  }

  void run() {
    if (!model.has_graph()) throw Error("onnx", model_label + " is not a valid ONNX model (it has no graph)");
    const auto& gp = model.graph();
    g.name = gp.name();
    for (const auto& op : model.opset_import()) {
      const std::string d = norm_domain(op.domain());
      // As onnxruntime: a version outside the domain's known range is an invalid model.
      const auto range = onnx_opset_range(d);
      if (op.version() < range.first || op.version() > range.second)
        throw Error("onnx", model_label + ": opset_import " + (d.empty() ? "ai.onnx" : printable(d)) + " version " +
                                std::to_string(op.version()) + " is outside the supported range " + std::to_string(range.first) +
                                ".." + std::to_string(range.second));
      // A domain listed twice (skl2onnx writes ('', 17) twice; onnx.version_converter then
      // rewrites one entry): the last entry holds, as in onnxruntime.
      opsets[d] = static_cast<int>(op.version());
    }
    if (opsets.count("")) g.opset = opsets[""];
    LocalFunctions local_functions(model, opsets, model_label);
    functions = &local_functions;
    // ai.onnx must be imported (its version decides every op's semantics); another domain left
    // out gets its latest version, as onnxruntime loads such a model.
    for (const auto& np : gp.node())
      if (!opsets.count(norm_domain(np.domain())) && !local_functions.find(np)) {
        if (norm_domain(np.domain()).empty())
          throw Error("onnx", model_label + ": node '" + printable(np.name()) + "' (" + printable(np.op_type()) +
                                  ") uses domain ai.onnx, which the model's opset_import does not list");
        opsets.emplace(norm_domain(np.domain()), onnx_implicit_opset(norm_domain(np.domain())));
      }
    if (gp.node_size() == 0 && gp.output_size() == 0)
      throw Error("onnx", model_label + ": the model's graph has no nodes and no outputs");
    if (gp.output_size() == 0) throw Error("onnx", model_label + ": the model's graph has no outputs");
    for (auto& t : *model.mutable_graph()->mutable_initializer()) {
      if (t.name().empty()) throw Error("onnx", model_label + ": an initializer has no name");
      const std::string name = t.name();
      define(name, g.add_constant(name, tensor_from_proto(std::move(t), base_dir)), "initializer");
    }
    body(gp);
    functions = nullptr;  // local_functions ends here
  }

  // A graph attribute (If's then_branch / else_branch) as a Graph of its own; `outer` receives
  // the enclosing values it reads (its captured inputs, in order).
  // sub_opsets and sub_frame: those of the node holding the subgraph (a function's, when inlined).
  Graph import_subgraph(const onnx::GraphProto& gp, const std::string& who, std::vector<int>& outer, const OpsetMap& sub_opsets,
                        const CallFrame* sub_frame) {
    Importer sub{model, base_dir, model_label, {}, {}, sub_opsets, this, {}, functions, sub_frame};
    sub.g.opset = g.opset;
    for (const auto& t : gp.initializer()) {
      if (t.name().empty()) throw Error("onnx", who + ": an initializer of its subgraph has no name");
      sub.define(t.name(), sub.g.add_constant(t.name(), tensor_from_proto(t, base_dir)), "initializer");
    }
    sub.body(gp);
    outer = std::move(sub.captured_outer);
    return std::move(sub.g);
  }

  // A main-graph input that names an initializer (Graph::overridable), with its declared shape.
  void overridable_input(const onnx::ValueInfoProto& vi, int id) {
    for (const auto& o : g.overridable)
      if (o.value == id) return;  // listed twice: one entry
    const Value& v = g.values[id];
    DType dt = DType::undefined;
    Shape shape;
    bool known = false;
    if (vi.has_type() && vi.type().has_tensor_type()) read_type(vi, "graph input", dt, shape, known);
    if (dt != DType::undefined && dt != v.dtype)
      throw Error("onnx", model_label + ": graph input '" + printable(vi.name()) + "' is declared " + dtype_name(dt) +
                              ", its initializer is " + dtype_name(v.dtype));
    Graph::Overridable o;
    o.value = id;
    // A declared shape binds what may be fed (rank, fixed dims) when the default fits it;
    // one the default contradicts binds nothing (declared shapes are not binding elsewhere either).
    bool fits = vi.has_type() && vi.type().tensor_type().has_shape() && shape.size() == v.shape.size();
    for (size_t i = 0; fits && i < shape.size(); ++i) fits = shape[i] < 0 || shape[i] == v.shape[i];
    if (fits) o.shape = std::move(shape), o.shape_known = true;
    g.overridable.push_back(std::move(o));
  }

  // Inputs, nodes and outputs of gp (its initializers are already defined).
  void body(const onnx::GraphProto& gp) {
    g.name = gp.name();
    // Sparse initializers (onnx.proto SparseTensorProto) are stored dense, as onnxruntime does.
    for (const auto& sp : gp.sparse_initializer()) {
      const std::string& name = sp.values().name();
      if (name.empty()) throw Error("onnx", model_label + ": a sparse initializer has no name (its values tensor names it)");
      define(name, g.add_constant(name, tensor_from_sparse_proto(sp, base_dir)), "sparse initializer");
    }
    for (const auto& vi : gp.input()) {
      if (ids.count(vi.name()) && g.values[ids[vi.name()]].constant) {
        // IR < 4 lists every initializer as an input (it stays a constant, as in onnxruntime);
        // from IR 4 on, an initializer listed as an input is a default the caller may override.
        if (!parent && model.ir_version() >= 4) overridable_input(vi, ids[vi.name()]);
        continue;
      }
      DType dt = DType::undefined;
      Shape shape;
      bool known = false;
      std::vector<std::string> dim_params;
      // A subgraph's sequence input (a Loop-carried list, SequenceMap's element) is typed when
      // its node is expanded (ir/ops/sequence.cpp); the main graph takes tensors only.
      if (!(parent && vi.has_type() && vi.type().has_sequence_type())) read_type(vi, parent ? "subgraph input" : "graph input", dt, shape, known, &dim_params);
      // Fail here, naming the input, rather than deep in shape inference (e.g. float8/int4).
      if (dt == DType::undefined && vi.type().tensor_type().elem_type() != 0)
        throw Unsupported("onnx", "graph input '" + printable(vi.name()) + "': unsupported element type " +
                                std::to_string(vi.type().tensor_type().elem_type()));
      int id = define(vi.name(), g.add_value(vi.name(), dt, shape, known), "graph input");
      g.values[id].dim_params = std::move(dim_params);
      g.inputs.push_back(id);
    }
    g.formal_inputs = static_cast<int>(g.inputs.size());  // captured outer values are appended after these

    // Pass 1: create every node output (nodes may be listed out of order), folding Constants.
    // Calls of model-local functions are replaced by their bodies first.
    std::vector<ImportNode> items;
    items.reserve(static_cast<size_t>(gp.node_size()));
    for (int i = 0; i < gp.node_size(); ++i) {
      const size_t index = static_cast<size_t>(i);
      if (functions && functions->find(gp.node(i))) functions->expand(gp.node(i), &opsets, frame, index, node_name(gp.node(i), index), items);
      else items.push_back({&gp.node(i), &opsets, frame, index});
    }
    std::vector<Node> pending;
    std::vector<const ImportNode*> protos;
    for (const ImportNode& item : items) {
      const auto& np = *item.proto;
      Node n = convert_node_header(np, item.index, *item.opsets);
      bool is_constant = n.op_type == "Constant" && n.domain.empty();
      if (is_constant) {
        if (np.output_size() != 1 || np.output(0).empty())
          throw Error("onnx", n.label() + ": Constant must have exactly one output");
        define(np.output(0), g.add_constant(np.output(0), constant_value(n)), n.label());
        continue;
      }
      for (const auto& o : np.output())
        n.outputs.push_back(o.empty() ? -1 : define(o, g.add_value(o), n.label()));
      // Concat-1 defaulted axis to 1; from opset 4 it is required (the op table's rule).
      if (n.op_type == "Concat" && n.domain.empty() && n.opset < 4 && !n.has_attr("axis")) n.attrs["axis"] = int64_t{1};
      pending.push_back(std::move(n));
      protos.push_back(&item);
    }
    // Pass 2: resolve inputs now that every producer is known.
    for (size_t k = 0; k < pending.size(); ++k) {
      Node& n = pending[k];
      for (const auto& in : protos[k]->proto->input()) {
        if (in.empty()) {
          n.inputs.push_back(-1);
          continue;
        }
        n.inputs.push_back(resolve(in, n.label()));
      }
      // Graph attributes, in name order: each subgraph's captured outer values follow the
      // node's own inputs (ir/ops/control.cpp reads them back in the same order).
      for (auto& [name, value] : n.attrs) {
        if (!std::holds_alternative<std::shared_ptr<const Graph>>(value)) continue;
        const onnx::AttributeProto* a = nullptr;
        for (const auto& cand : protos[k]->proto->attribute())
          if (cand.name() == name) a = &cand;
        std::vector<int> outer;
        value = std::make_shared<const Graph>(
            import_subgraph(a->g(), n.label() + " attribute '" + name + "'", outer, *protos[k]->opsets, protos[k]->frame));
        n.inputs.insert(n.inputs.end(), outer.begin(), outer.end());
      }
      g.add_node(std::move(n));
    }

    for (const auto& vi : gp.output()) {
      if (!ids.count(vi.name()) && !parent) throw Error("onnx", model_label + ": graph output '" + printable(vi.name()) + "' is not defined");
      const int out = resolve(vi.name(), model_label + ": graph output");  // a subgraph may return an outer value
      Value& v = g.values[out];
      DType dt = DType::undefined;
      Shape shape;
      bool known = false;
      // A main-graph output of seq(map(...)) is a ZipMap's (ir/output_forms.h checks the producer).
      const bool sequence = vi.has_type() && vi.type().has_sequence_type() &&
                            (parent || vi.type().sequence_type().elem_type().has_map_type());
      if (!parent && sequence && (v.producer < 0 || g.nodes[v.producer].op_type != "ZipMap"))
        throw Unsupported("onnx", model_label + ": graph output '" + printable(vi.name()) +
                                      "' is a seq(map); only a ZipMap's maps are supported as graph outputs");
      if (v.producer >= 0 && !sequence && read_type(vi, parent ? "subgraph output" : "graph output", dt, shape, known)) {
        v.dtype = dt;
        v.shape = shape;
        v.shape_known = known;
      }
      if (!parent) {  // the declared dtype binds (checked after shape inference, ir/passes.cpp)
        DType declared = DType::undefined;
        if (vi.has_type() && vi.type().has_tensor_type()) declared = dtype_from_onnx(vi.type().tensor_type().elem_type());
        if (v.producer < 0 && declared != DType::undefined && v.dtype != DType::undefined && declared != v.dtype)
          throw Error("onnx", model_label + ": graph output '" + printable(vi.name()) + "' is declared " + dtype_name(declared) +
                                  ", but it is " + (v.constant ? "a constant" : "a graph input") + " of dtype " + dtype_name(v.dtype));
        if (declared != DType::undefined) g.declared_output_dtypes.push_back({out, declared});
      }
      g.outputs.push_back(out);
    }
    topo_sort(g);
  }
};

Graph import_model(const char* data, size_t size, const std::string& base_dir, const std::string& label) {
  if (size > static_cast<size_t>(INT_MAX))
    throw Error("onnx", label + " is larger than 2 GB; protobuf cannot parse it (store weights as external data)");
  onnx::ModelProto model;
  {
    PhaseScope ps("read + parse (protobuf)");
    google::protobuf::io::ArrayInputStream stream(data, static_cast<int>(size));
    google::protobuf::io::CodedInputStream coded(&stream);
    coded.SetTotalBytesLimit(INT_MAX);  // the default limit is lower in older protobufs; weights can be big
    if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
      throw Error("onnx", label + " is not a valid ONNX model (protobuf parse failed)");
  }
  PhaseScope ps("import (tensors, nodes, types)");
  Importer imp{model, base_dir, label, {}, {}, {}, nullptr, {}};
  imp.run();
  encode_string_inputs(imp.g);  // string inputs as codes, string labels and ZipMap at the outputs (ir/output_forms.h)
  encode_output_forms(imp.g);
  return std::move(imp.g);
}

}  // namespace

Graph load_onnx(const std::string& path) {
  std::error_code ec;
  // ec: why the path could not be looked at (a symlink loop, a folder without permission);
  // unset when it simply does not exist.
  if (!fs::exists(path, ec)) throw Error("onnx", "cannot open model '" + printable(path) + "': " + (ec ? ec.message() : "No such file"));
  if (fs::is_directory(path, ec)) throw Error("onnx", "cannot open model '" + printable(path) + "': it is a directory");
  // Parsed straight from a read-only mapping of the file: protobuf copies the weights once,
  // and tensor_from_proto moves them on (the file is never copied into memory first).
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw Error("onnx", "cannot open model '" + printable(path) + "': " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw Error("onnx", "cannot open model '" + printable(path) + "': " + std::strerror(errno));
  }
  fs::path parent = fs::path(path).parent_path();
  const std::string base = parent.empty() ? std::string(".") : parent.string(), label = "'" + printable(path) + "'";
  if (!S_ISREG(st.st_mode)) {  // a FIFO would block, a device (/dev/zero) never end
    ::close(fd);
    throw Error("onnx", "cannot open model '" + printable(path) + "': not a regular file (FIFO, socket or device)");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* map = size ? ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0) : nullptr;
  ::close(fd);
  if (map == MAP_FAILED) throw Error("onnx", "reading model '" + printable(path) + "' failed: " + std::strerror(errno));
  struct Unmap {
    void* p;
    size_t n;
    ~Unmap() {
      if (p) ::munmap(p, n);
    }
  } unmap{map, size};
  return import_model(static_cast<const char*>(map), size, base, label);
}

Graph load_onnx_from_bytes(const std::string& bytes, const std::string& base_dir) {
  return import_model(bytes.data(), bytes.size(), base_dir, "'<in-memory model>'");
}

}  // namespace fusor
