#include "runtime/tensor_io.h"

#include <climits>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <onnx/onnx-data_pb.h>

#include "ir/small_dtypes.h"

#include "frontend/onnx_import.h"
#include "ir/graph.h"
#include "ir/output_forms.h"
#include "runtime/disk_cache.h"

namespace fusor {
namespace fs = std::filesystem;

namespace {

// The path escaped (a file name may hold a newline or bytes that are not UTF-8).
Error io_error(const std::string& path, const std::string& why) { return Error("io", "'" + printable(path) + "': " + why); }

// Only regular files are read (a FIFO would block, /dev/zero would never end); the size is
// bounded by the host's memory before reading.
std::string read_file(const std::string& path) {
  std::string why;
  std::optional<std::string> bytes = read_regular_file(path, std::max<uint64_t>(host_memory_bytes(), 1), &why);
  if (!bytes) throw io_error(path, why == "is a directory" ? "is a directory, not a tensor file" : why);
  return std::move(*bytes);
}


// numpy descr (without the byte-order character) <-> DType.
struct NpyType {
  const char* code;
  DType dtype;
};
constexpr NpyType kNpyTypes[] = {{"f4", DType::f32}, {"f8", DType::f64}, {"f2", DType::f16}, {"i8", DType::i64},
                                 {"i4", DType::i32}, {"i2", DType::i16}, {"i1", DType::i8},  {"u1", DType::u8},
                                 {"u2", DType::u16}, {"u4", DType::u32}, {"u8", DType::u64}, {"b1", DType::boolean}};

// The header of a .npy file is a Python dict literal, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// parsed here as a grammar (strings, True/False, integers, tuples of integers), not by
// searching for substrings: a key's name inside a string value is just text.
class NpyDictParser {
 public:
  struct Value {
    enum Kind { string, boolean, tuple, list } kind = string;
    std::string s;
    bool b = false;
    std::vector<int64_t> ints;
  };
  NpyDictParser(const std::string& h, const std::string& path) : h_(h), path_(path) {}

  std::map<std::string, Value> parse() {
    std::map<std::string, Value> out;
    expect('{');
    for (;;) {
      if (peek() == '}') break;
      std::string key = parse_string();
      expect(':');
      if (!out.emplace(key, parse_value()).second) fail("key '" + key + "' appears twice");
      if (peek() == ',') {
        ++p_;
        continue;
      }
      if (peek() != '}') fail("expected ',' or '}'");
    }
    ++p_;
    while (p_ < h_.size() && std::isspace(static_cast<unsigned char>(h_[p_]))) ++p_;
    if (p_ != h_.size()) fail("text after the closing '}'");
    return out;
  }

 private:
  const std::string& h_;
  const std::string& path_;
  size_t p_ = 0;

  [[noreturn]] void fail(const std::string& why) const {
    throw io_error(path_, "malformed npy header (" + why + " at offset " + std::to_string(p_) + ")");
  }
  char peek() {
    while (p_ < h_.size() && std::isspace(static_cast<unsigned char>(h_[p_]))) ++p_;
    return p_ < h_.size() ? h_[p_] : '\0';
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++p_;
  }
  std::string parse_string() {
    const char q = peek();
    if (q != '\'' && q != '"') fail("expected a quoted string");
    std::string out;
    for (++p_; p_ < h_.size() && h_[p_] != q; ++p_) {
      if (h_[p_] == '\\') fail("escape sequences are not supported");
      out += h_[p_];
    }
    if (p_ >= h_.size()) fail("unterminated string");
    ++p_;
    return out;
  }
  Value parse_value() {
    Value v;
    const char c = peek();
    if (c == '\'' || c == '"') {
      v.s = parse_string();
      return v;
    }
    if (h_.compare(p_, 4, "True") == 0 || h_.compare(p_, 5, "False") == 0) {
      v.kind = Value::boolean;
      v.b = h_[p_] == 'T';
      p_ += v.b ? 4 : 5;
      return v;
    }
    // numpy writes a structured dtype's descr as a list of fields: a valid file, not ours (the
    // caller says which key holds it); skipped to its closing bracket.
    if (c == '[') {
      v.kind = Value::list;
      int depth = 0;
      for (; p_ < h_.size(); ++p_) {
        if (h_[p_] == '[') ++depth;
        else if (h_[p_] == ']' && --depth == 0) break;
        else if (h_[p_] == '\'' || h_[p_] == '"') {
          parse_string();
          --p_;
        }
      }
      if (p_ >= h_.size()) fail("unterminated list");
      ++p_;
      return v;
    }
    if (c != '(') fail("expected a string, True/False or a tuple");
    ++p_;
    v.kind = Value::tuple;
    while (peek() != ')') {
      if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("expected a non-negative integer dimension");
      size_t j = p_;
      while (j < h_.size() && std::isdigit(static_cast<unsigned char>(h_[j]))) ++j;
      if (j - p_ > 18) fail("dimension too large");
      v.ints.push_back(std::stoll(h_.substr(p_, j - p_)));
      p_ = j;
      if (p_ < h_.size() && h_[p_] == 'L') ++p_;  // Python 2 long suffix
      if (peek() == ',') ++p_;
      else if (peek() != ')') fail("expected ',' or ')' in the shape");
    }
    ++p_;
    return v;
  }
};

struct NpyHeader {
  DType dtype = DType::undefined;
  Shape shape;
  size_t data_offset = 0;
};

NpyHeader parse_npy_header(const std::string& bytes, const std::string& path) {
  static const char kMagic[] = "\x93NUMPY";
  if (bytes.size() < 10 || bytes.compare(0, 6, kMagic, 6) != 0) throw io_error(path, "not a .npy file (bad magic)");
  int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len, start;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw io_error(path, "truncated .npy header");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    start = 12;
  } else {
    throw io_error(path, "unsupported .npy format version " + std::to_string(major));
  }
  if (start + header_len > bytes.size()) throw io_error(path, "truncated .npy header");
  const std::string h = bytes.substr(start, header_len);
  NpyHeader out;
  out.data_offset = start + header_len;

  const auto dict = NpyDictParser(h, path).parse();
  auto get = [&](const std::string& key, NpyDictParser::Value::Kind kind, const char* what) -> const NpyDictParser::Value& {
    auto it = dict.find(key);
    if (it == dict.end()) throw io_error(path, "npy header has no '" + key + "' entry");
    if (it->second.kind != kind) throw io_error(path, "npy '" + key + "' is not " + what);
    return it->second;
  };
  if (dict.size() != 3) throw io_error(path, "npy header must have exactly the keys descr, fortran_order and shape");
  if (const auto it = dict.find("descr"); it != dict.end() && it->second.kind == NpyDictParser::Value::list)
    throw io_error(path, "unsupported npy dtype: a structured (record) dtype; give one plain numeric dtype");
  const std::string descr = get("descr", NpyDictParser::Value::string, "a simple dtype string").s;
  if (descr.size() == 3 && (descr[0] == '<' || descr[0] == '=' || descr[0] == '|')) {
    for (const auto& t : kNpyTypes)
      if (descr.compare(1, 2, t.code) == 0) out.dtype = t.dtype;
  }
  if (out.dtype == DType::undefined) {
    std::string why = !descr.empty() && descr[0] == '>' ? " (big-endian data is not supported)" : "";
    throw io_error(path, "unsupported npy dtype '" + descr + "'" + why);
  }
  if (get("fortran_order", NpyDictParser::Value::boolean, "True or False").b)
    throw io_error(path, "fortran_order=True (column-major) .npy files are not supported; save with C order");
  out.shape = get("shape", NpyDictParser::Value::tuple, "a tuple of dimensions").ints;
  if (const std::string why = shape_bounds_problem(out.shape); !why.empty()) throw io_error(path, "npy shape " + shape_str_short(out.shape) + ": " + why);
  return out;
}

std::string npy_descr(DType t, const std::string& path) {
  for (const auto& n : kNpyTypes)
    if (n.dtype == t) return std::string(dtype_size(t) == 1 ? "|" : "<") + n.code;
  throw io_error(path, std::string("dtype ") + dtype_name(t) + " has no .npy equivalent");
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() <= 12 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// input_3.pb -> 3; -1 when the name does not have the form <prefix><digits>.pb.
long long numbered(const std::string& file, const std::string& prefix) {
  if (file.rfind(prefix, 0) != 0 || file.size() <= prefix.size() + 3 || file.compare(file.size() - 3, 3, ".pb") != 0)
    return -1;
  std::string digits = file.substr(prefix.size(), file.size() - prefix.size() - 3);
  return all_digits(digits) ? std::stoll(digits) : -1;
}

// Files numbered K must be exactly 0..n-1: a lone input_1 is not input 0, and a gap or a
// duplicate index (input_1.pb next to input_01.pb) would shift every later input.
template <class T> void check_numbering(const std::vector<std::pair<long long, T>>& files, const std::string& dir,
                                        const std::string& prefix) {
  for (size_t i = 0; i < files.size(); ++i)
    if (files[i].first != static_cast<long long>(i))
      throw io_error(dir, (i > 0 && files[i].first == files[i - 1].first ? "two files for " + prefix + std::to_string(files[i].first)
                                                                          : "no " + prefix + std::to_string(i) + " file") +
                              " (files must be numbered 0.." + std::to_string(files.size() - 1) + ")");
}

}  // namespace

std::vector<Tensor> read_numbered_inputs(const std::string& dir, std::vector<std::string>* names) {
  std::error_code ec;
  // ec names why it could not be looked at (a symlink loop); a missing path is "not a folder".
  if (!fs::is_directory(dir, ec))
    throw io_error(dir, ec && ec != std::errc::no_such_file_or_directory ? ec.message() : "not a folder");
  std::vector<std::pair<long long, std::string>> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("input_", 0) != 0) continue;
    const std::string ext = e.path().extension().string();
    if (ext != ".pb" && ext != ".npy") continue;
    const std::string digits = n.substr(6, n.size() - 6 - ext.size());
    if (!all_digits(digits)) throw io_error(e.path().string(), "expected a name input_K" + ext + " with K a number");
    files.push_back({std::stoll(digits), e.path().string()});
  }
  if (ec) throw io_error(dir, "cannot list folder: " + ec.message());
  if (files.empty()) throw io_error(dir, "no input_K.pb / input_K.npy files");
  std::sort(files.begin(), files.end());
  check_numbering(files, dir, "input_");
  std::vector<Tensor> out;
  if (names) names->clear();
  for (const auto& f : files) {
    std::string name;  // a .pb's TensorProto name; .npy files have none
    const bool pb = fs::path(f.second).extension() == ".pb";
    out.push_back(pb ? read_tensor_pb(f.second, &name) : read_tensor(f.second));
    if (names) names->push_back(std::move(name));
  }
  return out;
}

Tensor read_tensor_pb(const std::string& path, std::string* name) {
  std::string bytes = read_file(path);
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) throw io_error(path, "not a valid ONNX TensorProto (protobuf parse failed)");
  std::string().swap(bytes);  // the parsed copy is the one kept: a large file is not held three times
  if (name) *name = proto.name();
  // A SequenceProto / OptionalProto (the ONNX test format for non-tensor values)
  // parses as a TensorProto whose field 3, its elements, reads as TensorProto.segment: say what
  // the file is instead of "segmented tensors are not supported" (a skip, like other types
  // fusor does not feed or check).
  if (proto.has_segment())
    throw Unsupported("io", "'" + printable(path) + "': not a TensorProto but (by its layout) an ONNX SequenceProto or OptionalProto; "
                            "fusor's inputs and outputs are tensors");
  fs::path parent = fs::path(path).parent_path();
  try {
    return tensor_from_proto(std::move(proto), parent.empty() ? std::string(".") : parent.string());
  } catch (const Unsupported& e) {
    // an unsupported dtype is a skip, not a failure
    throw Unsupported("io", "'" + printable(path) + "': " + e.message());
  } catch (const Error& e) {
    throw io_error(path, e.message());
  }
}

void check_pb_writable(const std::string& what, DType t, const Shape& s) {
  if (t == DType::string) return;  // sized by its strings; write_tensor_pb checks the message
  const double bytes = static_cast<double>(shape_numel(s)) * dtype_bits(t) / 8.0;
  if (bytes > 2147483647.0 - 4096.0)  // the name and dims share the message
    throw Error("io", what + " is " + dtype_name(t) + " " + shape_str(s) + ", " + std::to_string(static_cast<int64_t>(bytes)) +
                          " bytes: past the 2 GiB a .pb file (one protobuf message) can hold");
}

void write_tensor_pb(const std::string& path, const Tensor& t, const std::string& name) {
  check_pb_writable("'" + printable(path) + "'", t.dtype(), t.shape());
  onnx::TensorProto proto;
  proto.set_name(name);
  int onnx_type = dtype_to_onnx(t.dtype());
  if (onnx_type == 0) throw io_error(path, std::string("cannot write a tensor of dtype ") + dtype_name(t.dtype()));
  proto.set_data_type(onnx_type);
  for (auto d : t.shape()) proto.add_dims(d);
  if (t.dtype() == DType::string) {
    for (const auto& s : t.strings) proto.add_string_data(s);
  } else {
    if (dtype_bits(t.dtype()) < 8) proto.set_raw_data(pack_small(t));  // int4/int2/float4: packed (ir/small_dtypes.h)
    else proto.set_raw_data(reinterpret_cast<const char*>(t.raw()), t.nbytes());
  }
  if (proto.ByteSizeLong() > static_cast<size_t>(INT32_MAX))  // before protobuf logs its own line
    throw io_error(path, "the tensor is " + std::to_string(proto.ByteSizeLong()) + " bytes as a protobuf message, past the 2 GiB a .pb file can hold");
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) throw io_error(path, "protobuf serialization failed");
  write_file(path, bytes, "io");
}

Tensor read_npy(const std::string& path) {
  std::string bytes = read_file(path);
  NpyHeader h = parse_npy_header(bytes, path);
  // Check the size before allocating so a corrupt header cannot request an absurd allocation.
  uint64_t need = dtype_size(h.dtype);
  for (auto d : h.shape) need = d == 0 ? 0 : (need > (uint64_t{1} << 62) / d ? (uint64_t{1} << 62) : need * d);
  if (bytes.size() - h.data_offset < need)
    throw io_error(path, "truncated .npy data: " + std::to_string(bytes.size() - h.data_offset) + " bytes, " +
                             dtype_name(h.dtype) + " " + shape_str(h.shape) + " needs " + std::to_string(need));
  // The data moves into the tensor (the header cut off in place): a large file is held once.
  bytes.erase(0, h.data_offset);
  bytes.resize(need);
  Tensor t(h.dtype, h.shape, std::move(bytes));
  if (t.dtype() == DType::boolean)  // numpy bools are 0/1 bytes, but do not trust the file
    for (int64_t i = 0; i < t.numel(); ++i) t.data<uint8_t>()[i] = t.data<uint8_t>()[i] ? 1 : 0;
  return t;
}

void write_npy(const std::string& path, const Tensor& t) {
  std::string dict = "{'descr': '" + npy_descr(t.dtype(), path) + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < t.shape().size(); ++i) dict += (i ? ", " : "") + std::to_string(t.shape()[i]);
  dict += t.shape().size() == 1 ? ",), }" : "), }";
  // numpy pads the header with spaces so the data starts at a multiple of 64 bytes.
  bool v2 = dict.size() + 11 + 64 > 65535;
  size_t prefix = v2 ? 12 : 10;
  size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  size_t len = dict.size();
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i) out += static_cast<char>((len >> (8 * i)) & 0xff);
  out += dict;
  out.append(reinterpret_cast<const char*>(t.raw()), t.nbytes());
  write_file(path, out, "io");
}

Tensor read_tensor(const std::string& path) {
  auto ext = fs::path(path).extension().string();
  if (ext == ".pb") return read_tensor_pb(path);
  if (ext == ".npy") return read_npy(path);
  throw io_error(path, "unknown tensor file extension '" + ext + "' (expected .pb or .npy)");
}

namespace {

// p as a SequenceProto of MapProto (int64 or string keys, float values), or nothing when it is
// not one (a TensorProto, or another sequence: read_tensor_pb then says what it is).
std::optional<MapSequence> read_map_sequence_pb(const std::string& path) {
  const std::string bytes = read_file(path);
  // A TensorProto parses as a SequenceProto too (its data_type is elem_type: UINT16 reads as
  // MAP), but never with map_values (field 6, TensorProto's string_data, is not a map there).
  onnx::SequenceProto seq;
  if (!seq.ParseFromString(bytes) || seq.elem_type() != onnx::SequenceProto::MAP || seq.map_values_size() == 0) return std::nullopt;
  MapSequence ms;
  for (int i = 0; i < seq.map_values_size(); ++i) {
    const onnx::MapProto& m = seq.map_values(i);
    const bool sk = m.key_type() == onnx::TensorProto::STRING;
    if (!sk && m.key_type() != onnx::TensorProto::INT64)
      throw Unsupported("io", "'" + printable(path) + "': map " + std::to_string(i) + " has keys of ONNX type " +
                                  std::to_string(m.key_type()) + " (int64 or string keys are read)");
    if (i > 0 && sk != ms.string_keys) throw io_error(path, "its maps mix int64 and string keys");
    ms.string_keys = sk;
    const onnx::SequenceProto& vals = m.values();
    const int n = sk ? m.string_keys_size() : m.keys_size();
    std::vector<double> v;
    // The values: one float tensor of n elements, or n scalar tensors (both are written).
    for (int j = 0; j < vals.tensor_values_size(); ++j) {
      const Tensor t = tensor_from_proto(onnx::TensorProto(vals.tensor_values(j)), ".");
      if (!dtype_is_float(t.dtype())) throw io_error(path, "map " + std::to_string(i) + " has " + dtype_name(t.dtype()) + " values (float expected)");
      for (int64_t e = 0; e < t.numel(); ++e) v.push_back(t.get(e));
    }
    if (static_cast<int>(v.size()) != n)
      throw io_error(path, "map " + std::to_string(i) + " has " + std::to_string(n) + " keys and " + std::to_string(v.size()) + " values");
    std::vector<std::string> keys;
    for (int j = 0; j < n; ++j) keys.push_back(sk ? m.string_keys(j) : std::to_string(m.keys(j)));
    ms.keys.push_back(std::move(keys));
    ms.values.push_back(std::move(v));
  }
  return ms;
}

}  // namespace

std::vector<TestCase> load_test_data_sets(const std::string& model_dir_in) {
  // A model named without a folder ("model.onnx") lives in the current one.
  const std::string model_dir = model_dir_in.empty() ? std::string(".") : model_dir_in;
  std::error_code ec;
  // ec names why it could not be looked at (a symlink loop); a missing path is "not a folder".
  if (!fs::is_directory(model_dir, ec))
    throw io_error(model_dir, ec && ec != std::errc::no_such_file_or_directory ? ec.message() : "not a folder");
  std::vector<std::pair<long long, fs::path>> sets;
  for (const auto& e : fs::directory_iterator(model_dir, ec)) {
    std::string n = e.path().filename().string();
    if (n.rfind("test_data_set_", 0) != 0) continue;
    std::error_code dec;  // a test set that cannot be looked at (a symlink loop) is named, not skipped
    if (!e.is_directory(dec)) {
      // A dangling link is skipped as before (not a test set); one that cannot be resolved is named.
      if (dec && dec != std::errc::no_such_file_or_directory) throw io_error(e.path().string(), dec.message());
      continue;
    }
    std::string suffix = n.substr(14);
    // test_data_set_0 first (run and diff use the first): numbered sets in order, then the others by name
    sets.push_back({all_digits(suffix) ? std::stoll(suffix) : LLONG_MAX, e.path()});
  }
  if (ec) throw io_error(model_dir, "cannot list folder: " + ec.message());
  std::sort(sets.begin(), sets.end());

  std::vector<TestCase> cases;
  for (const auto& [idx, dir] : sets) {
    TestCase tc;
    tc.dir = dir.string();
    std::vector<std::pair<long long, std::string>> ins, outs;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      std::string n = e.path().filename().string();
      if (long long k = numbered(n, "input_"); k >= 0) ins.push_back({k, e.path().string()});
      else if (long long k = numbered(n, "output_"); k >= 0) outs.push_back({k, e.path().string()});
      else if ((n.rfind("input_", 0) == 0 || n.rfind("output_", 0) == 0) && e.path().extension() == ".pb")
        throw io_error(e.path().string(), "expected a name input_K.pb / output_K.pb with K a number");
    }
    if (ec) throw io_error(tc.dir, "cannot list folder: " + ec.message());
    std::sort(ins.begin(), ins.end());
    std::sort(outs.begin(), outs.end());
    check_numbering(ins, tc.dir, "input_");
    check_numbering(outs, tc.dir, "output_");
    for (const auto& [k, p] : ins) {
      tc.input_names.emplace_back();
      tc.inputs.push_back(read_tensor_pb(p, &tc.input_names.back()));
    }
    for (const auto& [k, p] : outs) {
      tc.output_names.emplace_back();
      tc.output_maps.emplace_back(read_map_sequence_pb(p));
      tc.outputs.push_back(tc.output_maps.back() ? Tensor() : read_tensor_pb(p, &tc.output_names.back()));
    }
    cases.push_back(std::move(tc));
  }
  return cases;
}

void write_file(const std::string& path, const std::string& bytes, const std::string& component) {
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();  // flushes: a write error (disk full) shows only here
  if (!out)
    throw Error(component, "cannot write '" + printable(path) + "'" + (errno ? std::string(": ") + std::strerror(errno) : ""));
}

std::string model_path(const std::string& path) {
  std::error_code ec;  // a path the OS cannot stat is left for the loader's one-line error
  if (fs::is_directory(path, ec)) return (fs::path(path) / "model.onnx").string();
  return path;
}

std::vector<Tensor> expected_outputs(const Graph& g, const TestCase& tc, const std::string& component) {
  std::vector<Tensor> out = tc.outputs;
  for (size_t k = 0; k < out.size(); ++k) {
    const Graph::OutputForm* f = k < g.output_forms.size() ? &g.output_forms[k] : nullptr;
    const bool zipmap = f && f->kind == Graph::OutputForm::Kind::zipmap;
    const bool map_file = k < tc.output_maps.size() && tc.output_maps[k].has_value();
    const std::string where = "'" + printable(tc.dir) + "' output_" + std::to_string(k) + ".pb";
    if (zipmap != map_file)
      throw Error(component, where + (map_file ? " holds a sequence of maps, but the model's output " : " holds a tensor, but the model's output ") +
                                 std::to_string(k) + " is " + (zipmap ? output_form_type(g, k) : std::string("a tensor")));
    if (!zipmap) continue;
    const MapSequence& ms = *tc.output_maps[k];
    std::vector<std::string> keys;
    if (f->string_keys) keys = f->strings;
    else
      for (int64_t i : f->int_keys) keys.push_back(std::to_string(i));
    const int64_t n = static_cast<int64_t>(ms.values.size()), c = static_cast<int64_t>(keys.size());
    Tensor t(DType::f32, {n, c});
    for (int64_t r = 0; r < n; ++r) {
      std::map<std::string, double> m;
      for (size_t j = 0; j < ms.keys[r].size(); ++j) m[ms.keys[r][j]] = ms.values[r][j];
      if (m.size() != keys.size() || ms.string_keys != f->string_keys)
        throw Error(component, where + ": map " + std::to_string(r) + " has " + std::to_string(ms.keys[r].size()) + " " +
                                   (ms.string_keys ? "string" : "int64") + " keys, the output's ZipMap " + std::to_string(c) + " " +
                                   (f->string_keys ? "string" : "int64") + " keys");
      for (int64_t j = 0; j < c; ++j) {
        auto it = m.find(keys[j]);
        if (it == m.end()) throw Error(component, where + ": map " + std::to_string(r) + " lacks the key '" + printable(keys[j]) + "'");
        t.set(r * c + j, it->second);
      }
    }
    out[k] = std::move(t);
  }
  return out;
}

void write_map_sequence_pb(const std::string& path, const Tensor& values, const Graph::OutputForm& form, const std::string& name) {
  const int64_t c = values.rank() == 2 ? values.shape()[1] : -1;
  const size_t keys = form.string_keys ? form.strings.size() : form.int_keys.size();
  if (c != static_cast<int64_t>(keys)) throw Error("io", "'" + printable(path) + "': ZipMap values " + shape_str(values.shape()) + " for " + std::to_string(keys) + " keys");
  onnx::SequenceProto seq;
  seq.set_name(name);
  seq.set_elem_type(onnx::SequenceProto::MAP);
  for (int64_t r = 0; r < values.shape()[0]; ++r) {
    onnx::MapProto* m = seq.add_map_values();
    m->set_key_type(form.string_keys ? onnx::TensorProto::STRING : onnx::TensorProto::INT64);
    for (size_t j = 0; j < keys; ++j) {
      if (form.string_keys) m->add_string_keys(form.strings[j]);
      else m->add_keys(form.int_keys[j]);
    }
    onnx::SequenceProto* v = m->mutable_values();
    v->set_elem_type(onnx::SequenceProto::TENSOR);
    onnx::TensorProto* t = v->add_tensor_values();
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(c);
    for (int64_t j = 0; j < c; ++j) t->add_float_data(static_cast<float>(values.get(r * c + j)));
  }
  std::string bytes;
  if (!seq.SerializeToString(&bytes)) throw Error("io", "'" + printable(path) + "': cannot serialize the sequence of maps");
  write_file(path, bytes, "io");
}

void check_expected_outputs(const Graph& g, const TestCase& tc, const std::string& component) {
  if (tc.outputs.size() != g.outputs.size())
    throw Error(component, "'" + printable(tc.dir) + "' has " + std::to_string(tc.outputs.size()) +
                               " output_K.pb files, the model has " + std::to_string(g.outputs.size()) +
                               " outputs (every output must have its expected value)");
}

}  // namespace fusor
