#include "runtime/tensor_io.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "frontend/onnx_import.h"

namespace fusor {
namespace fs = std::filesystem;

namespace {

Error io_error(const std::string& path, const std::string& why) { return Error("io", "'" + path + "': " + why); }

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw io_error(path, "No such file");
  if (fs::is_directory(path, ec)) throw io_error(path, "is a directory, not a tensor file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw io_error(path, std::string("cannot open: ") + std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw io_error(path, "read failed");
  return bytes;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw io_error(path, std::string("cannot open for writing: ") + std::strerror(errno));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw io_error(path, "write failed");
}

// numpy descr (without the byte-order character) <-> DType.
struct NpyType {
  const char* code;
  DType dtype;
};
constexpr NpyType kNpyTypes[] = {{"f4", DType::f32}, {"f8", DType::f64}, {"f2", DType::f16}, {"i8", DType::i64},
                                 {"i4", DType::i32}, {"i2", DType::i16}, {"i1", DType::i8},  {"u1", DType::u8},
                                 {"u2", DType::u16}, {"u4", DType::u32}, {"u8", DType::u64}, {"b1", DType::boolean}};

// Finds `'key':` (either quote style) in a numpy header dict and returns the position just
// after the colon, skipping blanks.
size_t npy_find_key(const std::string& h, const std::string& key, const std::string& path) {
  for (char q : {'\'', '"'}) {
    auto p = h.find(std::string(1, q) + key + q);
    if (p == std::string::npos) continue;
    p = h.find(':', p + key.size() + 2);
    if (p == std::string::npos) break;
    ++p;
    while (p < h.size() && std::isspace(static_cast<unsigned char>(h[p]))) ++p;
    return p;
  }
  throw io_error(path, "npy header has no '" + key + "' entry: " + h);
}

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

  size_t p = npy_find_key(h, "descr", path);
  if (p >= h.size() || (h[p] != '\'' && h[p] != '"')) throw io_error(path, "npy 'descr' is not a simple dtype string: " + h);
  size_t e = h.find(h[p], p + 1);
  if (e == std::string::npos) throw io_error(path, "malformed npy header: " + h);
  const std::string descr = h.substr(p + 1, e - p - 1);
  if (descr.size() == 3 && (descr[0] == '<' || descr[0] == '=' || descr[0] == '|')) {
    for (const auto& t : kNpyTypes)
      if (descr.compare(1, 2, t.code) == 0) out.dtype = t.dtype;
  }
  if (out.dtype == DType::undefined) {
    std::string why = !descr.empty() && descr[0] == '>' ? " (big-endian data is not supported)" : "";
    throw io_error(path, "unsupported npy dtype '" + descr + "'" + why);
  }

  p = npy_find_key(h, "fortran_order", path);
  if (h.compare(p, 4, "True") == 0)
    throw io_error(path, "fortran_order=True (column-major) .npy files are not supported; save with C order");
  if (h.compare(p, 5, "False") != 0) throw io_error(path, "malformed npy fortran_order: " + h);

  p = npy_find_key(h, "shape", path);
  if (p >= h.size() || h[p] != '(') throw io_error(path, "malformed npy shape: " + h);
  e = h.find(')', p);
  if (e == std::string::npos) throw io_error(path, "malformed npy shape: " + h);
  std::string dims = h.substr(p + 1, e - p - 1);
  for (size_t i = 0; i < dims.size();) {
    if (std::isdigit(static_cast<unsigned char>(dims[i]))) {
      size_t j = i;
      while (j < dims.size() && std::isdigit(static_cast<unsigned char>(dims[j]))) ++j;
      if (j - i > 15) throw io_error(path, "npy shape dimension is too large: " + h);
      out.shape.push_back(std::stoll(dims.substr(i, j - i)));
      i = j;
    } else if (dims[i] == ',' || dims[i] == 'L' || std::isspace(static_cast<unsigned char>(dims[i]))) {
      ++i;  // separators and Python 2 long suffixes
    } else {
      throw io_error(path, "malformed npy shape: " + h);
    }
  }
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

}  // namespace

Tensor read_tensor_pb(const std::string& path, std::string* name) {
  std::string bytes = read_file(path);
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) throw io_error(path, "not a valid ONNX TensorProto (protobuf parse failed)");
  if (name) *name = proto.name();
  fs::path parent = fs::path(path).parent_path();
  try {
    return tensor_from_proto(proto, parent.empty() ? std::string(".") : parent.string());
  } catch (const Unsupported& e) {
    throw Unsupported("io", "'" + path + "': " + e.what());  // an unsupported dtype is a skip, not a failure
  } catch (const Error& e) {
    std::string m = e.what();
    std::string prefix = "[" + e.component() + "] ";
    throw io_error(path, m.rfind(prefix, 0) == 0 ? m.substr(prefix.size()) : m);
  }
}

void write_tensor_pb(const std::string& path, const Tensor& t, const std::string& name) {
  onnx::TensorProto proto;
  proto.set_name(name);
  int onnx_type = dtype_to_onnx(t.dtype());
  if (onnx_type == 0) throw io_error(path, std::string("cannot write a tensor of dtype ") + dtype_name(t.dtype()));
  proto.set_data_type(onnx_type);
  for (auto d : t.shape()) proto.add_dims(d);
  if (t.dtype() == DType::string) {
    for (const auto& s : t.strings) proto.add_string_data(s);
  } else {
    proto.set_raw_data(reinterpret_cast<const char*>(t.raw()), t.nbytes());
  }
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) throw io_error(path, "protobuf serialization failed (tensor larger than 2 GB?)");
  write_file(path, bytes);
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
  Tensor t(h.dtype, h.shape);
  if (t.nbytes()) std::memcpy(t.raw(), bytes.data() + h.data_offset, t.nbytes());
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
  write_file(path, out);
}

Tensor read_tensor(const std::string& path) {
  auto ext = fs::path(path).extension().string();
  if (ext == ".pb") return read_tensor_pb(path);
  if (ext == ".npy") return read_npy(path);
  throw io_error(path, "unknown tensor file extension '" + ext + "' (expected .pb or .npy)");
}

std::vector<TestCase> load_test_data_sets(const std::string& model_dir) {
  std::error_code ec;
  if (!fs::is_directory(model_dir, ec)) throw io_error(model_dir, "not a folder");
  std::vector<std::pair<long long, fs::path>> sets;
  for (const auto& e : fs::directory_iterator(model_dir, ec)) {
    std::string n = e.path().filename().string();
    if (!e.is_directory() || n.rfind("test_data_set_", 0) != 0) continue;
    std::string suffix = n.substr(14);
    sets.push_back({all_digits(suffix) ? std::stoll(suffix) : -1, e.path()});
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
      if (long long k = numbered(n, "output_"); k >= 0) outs.push_back({k, e.path().string()});
    }
    if (ec) throw io_error(tc.dir, "cannot list folder: " + ec.message());
    std::sort(ins.begin(), ins.end());
    std::sort(outs.begin(), outs.end());
    for (const auto& [k, p] : ins) {
      tc.input_names.emplace_back();
      tc.inputs.push_back(read_tensor_pb(p, &tc.input_names.back()));
    }
    for (const auto& [k, p] : outs) {
      tc.output_names.emplace_back();
      tc.outputs.push_back(read_tensor_pb(p, &tc.output_names.back()));
    }
    cases.push_back(std::move(tc));
  }
  return cases;
}

}  // namespace fusor
