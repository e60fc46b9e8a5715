#include "ir/tensor.h"
#include "ir/host_memory.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>

#include "ir/half.h"
#include "ir/small_dtypes.h"

namespace fusor {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32: case DType::i32: case DType::u32: return 4;
    case DType::f16: case DType::bf16: case DType::i16: case DType::u16: return 2;
    case DType::f64: case DType::i64: case DType::u64: return 8;
    case DType::i8: case DType::u8: case DType::boolean: return 1;
    default: return dtype_is_small(t) ? 1 : 0;
  }
}

int dtype_bits(DType t) {
  switch (t) {
    case DType::u4: case DType::i4: case DType::f4e2m1: return 4;
    case DType::u2: case DType::i2: return 2;
    default: return static_cast<int>(8 * dtype_size(t));
  }
}

bool dtype_is_small(DType t) { return t >= DType::f8e4m3fn && t <= DType::i2; }

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "float32"; case DType::f16: return "float16"; case DType::bf16: return "bfloat16";
    case DType::f64: return "float64"; case DType::i8: return "int8"; case DType::i16: return "int16";
    case DType::i32: return "int32"; case DType::i64: return "int64"; case DType::u8: return "uint8";
    case DType::u16: return "uint16"; case DType::u32: return "uint32"; case DType::u64: return "uint64";
    case DType::boolean: return "bool"; case DType::string: return "string";
    case DType::f8e4m3fn: return "float8e4m3fn"; case DType::f8e4m3fnuz: return "float8e4m3fnuz";
    case DType::f8e5m2: return "float8e5m2"; case DType::f8e5m2fnuz: return "float8e5m2fnuz";
    case DType::u4: return "uint4"; case DType::i4: return "int4"; case DType::f4e2m1: return "float4e2m1";
    case DType::f8e8m0: return "float8e8m0"; case DType::u2: return "uint2"; case DType::i2: return "int2";
    default: return "undefined";
  }
}

bool dtype_is_float(DType t) {
  return t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::f64 || dtype_is_small_float(t);
}
bool dtype_is_int(DType t) {
  switch (t) {
    case DType::i8: case DType::i16: case DType::i32: case DType::i64:
    case DType::u8: case DType::u16: case DType::u32: case DType::u64:
    case DType::u4: case DType::i4: case DType::u2: case DType::i2: return true;
    default: return false;
  }
}

// TensorProto.DataType numbering (onnx.proto; 17-26 as in ONNX 1.18+, newer than the installed libonnx).
DType dtype_from_onnx(int t) {
  switch (t) {
    case 1: return DType::f32; case 2: return DType::u8; case 3: return DType::i8; case 4: return DType::u16;
    case 5: return DType::i16; case 6: return DType::i32; case 7: return DType::i64; case 8: return DType::string;
    case 9: return DType::boolean; case 10: return DType::f16; case 11: return DType::f64; case 12: return DType::u32;
    case 13: return DType::u64; case 16: return DType::bf16; case 17: return DType::f8e4m3fn;
    case 18: return DType::f8e4m3fnuz; case 19: return DType::f8e5m2; case 20: return DType::f8e5m2fnuz;
    case 21: return DType::u4; case 22: return DType::i4; case 23: return DType::f4e2m1; case 24: return DType::f8e8m0;
    case 25: return DType::u2; case 26: return DType::i2; default: return DType::undefined;
  }
}
int dtype_to_onnx(DType t) {
  switch (t) {
    case DType::f32: return 1; case DType::u8: return 2; case DType::i8: return 3; case DType::u16: return 4;
    case DType::i16: return 5; case DType::i32: return 6; case DType::i64: return 7; case DType::string: return 8;
    case DType::boolean: return 9; case DType::f16: return 10; case DType::f64: return 11; case DType::u32: return 12;
    case DType::u64: return 13; case DType::bf16: return 16; case DType::f8e4m3fn: return 17;
    case DType::f8e4m3fnuz: return 18; case DType::f8e5m2: return 19; case DType::f8e5m2fnuz: return 20;
    case DType::u4: return 21; case DType::i4: return 22; case DType::f4e2m1: return 23; case DType::f8e8m0: return 24;
    case DType::u2: return 25; case DType::i2: return 26; default: return 0;
  }
}

namespace {

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlongs, no surrogates,
// at most U+10FFFF), 0 when the byte there does not start one.
size_t utf8_length(const std::string& s, size_t i) {
  const auto at = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  const unsigned c = at(0);
  const auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xbf) { return at(k) >= lo && at(k) <= hi; };
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c == 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef) return cont(1) && cont(2) ? 3 : 0;
  if (c == 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;
  if (c == 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xf1 && c <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c == 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

// one_line's escaping, stopping (with "...") once `limit` characters are written.
std::string escaped(const std::string& s, size_t limit) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (out.size() >= limit) return out + "...";
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) out += std::string("\\x") + hex[c >> 4] + hex[c & 15];
    else if (c < 0x80) out += static_cast<char>(c);
    else if (const size_t n = utf8_length(s, i)) {
      out.append(s, i, n);
      i += n;
      continue;
    } else {
      out += std::string("\\x") + hex[c >> 4] + hex[c & 15];
    }
    ++i;
  }
  return out;
}

}  // namespace

std::string one_line(const std::string& s) { return escaped(s, std::string::npos); }

std::string printable(const std::string& s) { return escaped(s, 200); }

int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s)
    if (__builtin_mul_overflow(n, d, &n))
      throw Error("shape", "shape " + shape_str(s) + " has more elements than int64 can count");
  return n;
}
std::string shape_bounds_problem(const Shape& s) {
  if (s.size() > kMaxRank) return "rank " + std::to_string(s.size()) + " is over " + std::to_string(kMaxRank);
  int64_t n = 1;
  for (auto d : s) {
    if (d < 0) return "a negative dimension";
    if (d != 0 && (n > kMaxShapeElements / d || (n *= d) > kMaxShapeElements)) return "more than 2^56 elements";
  }
  return {};
}
bool shape_in_bounds(const Shape& s) { return shape_bounds_problem(s).empty(); }
uint64_t tensor_bytes(DType t, const Shape& s) {
  const int64_t n = shape_numel(s);
  uint64_t bytes = 0;
  if (n < 0 || __builtin_mul_overflow(static_cast<uint64_t>(n), static_cast<uint64_t>(dtype_size(t)), &bytes) ||
      bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    throw Error("shape", std::string("a ") + dtype_name(t) + " tensor of shape " + shape_str(s) + " has more bytes than int64 can count");
  return bytes;
}
uint64_t host_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}
namespace {
// The first unsigned number in a file (0 when absent or unreadable); "max" reads as 0.
uint64_t read_u64(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return 0;
  unsigned long long v = 0;
  if (std::fscanf(f, "%llu", &v) != 1) v = 0;
  std::fclose(f);
  return static_cast<uint64_t>(v);
}
// Room left under this process's cgroup memory limit (0: no limit found).
uint64_t cgroup_room() {
  FILE* f = std::fopen("/proc/self/cgroup", "r");
  if (!f) return 0;
  std::string v1, v2;
  char line[1024];
  while (std::fgets(line, sizeof line, f)) {
    std::string l(line);
    if (!l.empty() && l.back() == '\n') l.pop_back();
    if (l.rfind("0::", 0) == 0) v2 = l.substr(3);
    const size_t m = l.find(":memory:");
    if (m != std::string::npos) v1 = l.substr(m + 8);
  }
  std::fclose(f);
  // A container usually sees its own cgroup as the root of the hierarchy: try both.
  auto room = [](const std::string& limit_file, const std::string& usage_file) -> uint64_t {
    const uint64_t limit = read_u64(limit_file), used = read_u64(usage_file);
    if (limit == 0 || limit >= (uint64_t{1} << 62)) return 0;  // "max" or the v1 "no limit" value
    return limit > used ? limit - used : 1;
  };
  uint64_t best = 0;
  auto take = [&](uint64_t r) {
    if (r != 0 && (best == 0 || r < best)) best = r;
  };
  for (const std::string& dir : {std::string("/sys/fs/cgroup") + v2, std::string("/sys/fs/cgroup")})
    take(room(dir + "/memory.max", dir + "/memory.current"));
  for (const std::string& dir : {"/sys/fs/cgroup/memory" + v1, std::string("/sys/fs/cgroup/memory")})
    take(room(dir + "/memory.limit_in_bytes", dir + "/memory.usage_in_bytes"));
  return best;
}
}  // namespace

uint64_t host_available_bytes() {
  uint64_t avail = 0;
  if (FILE* f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    unsigned long long kb = 0;
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
        avail = static_cast<uint64_t>(kb) * 1024;
        break;
      }
    std::fclose(f);
  }
  const uint64_t room = cgroup_room();
  if (room != 0 && (avail == 0 || room < avail)) avail = room;
  return avail;
}

void check_host_alloc(uint64_t bytes, const std::string& what) {
  static const uint64_t host = host_memory_bytes();
  check_fits(bytes, host, what, "this host's memory");
  // Reading /proc costs microseconds: only for allocations where it matters.
  if (bytes >= (uint64_t{1} << 30)) check_fits(bytes, host_available_bytes(), what, "the memory this host has available now");
}

std::string bytes_str(uint64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " (%.3g GiB)", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return std::to_string(bytes) + " bytes" + buf;
}
void check_fits(uint64_t bytes, uint64_t limit, const std::string& what, const std::string& where) {
  if (limit != 0 && bytes > limit) throw Error("memory", what + " needs " + bytes_str(bytes) + ", more than " + where + " (" + bytes_str(limit) + ")");
}
std::string shape_str(const Shape& s) {
  std::ostringstream o;
  o << "[";
  for (size_t i = 0; i < s.size(); ++i) o << (i ? ", " : "") << s[i];
  o << "]";
  return o.str();
}
std::string shape_str_short(const Shape& s) {
  if (s.size() <= 16) return shape_str(s);
  Shape head(s.begin(), s.begin() + 8);
  std::string h = shape_str(head);
  h.pop_back();
  return h + ", ..., " + std::to_string(s[s.size() - 2]) + ", " + std::to_string(s.back()) + "] (rank " + std::to_string(s.size()) + ")";
}
Shape contiguous_strides(const Shape& s) {
  Shape st(s.size(), 1);
  for (int i = static_cast<int>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  for (auto d : shape_)
    if (d < 0) throw Error("tensor", "negative dimension in shape " + shape_str(shape_));
  if (dtype_ == DType::string) {
    check_host_alloc(tensor_bytes(DType::u64, shape_), "a string tensor of shape " + shape_str(shape_));
    strings.resize(static_cast<size_t>(numel()));
    return;
  }
  if (dtype_size(dtype_) == 0) throw Error("tensor", std::string("cannot allocate a tensor of dtype ") + dtype_name(dtype_));
  const uint64_t bytes = tensor_bytes(dtype_, shape_);
  check_host_alloc(bytes, std::string("a ") + dtype_name(dtype_) + " tensor of shape " + shape_str(shape_));
  bytes_ = std::make_shared<std::string>(static_cast<size_t>(bytes), '\0');
}

Tensor::Tensor(DType dtype, Shape shape, std::string&& bytes) : dtype_(dtype), shape_(std::move(shape)) {
  for (auto d : shape_)
    if (d < 0) throw Error("tensor", "negative dimension in shape " + shape_str(shape_));
  if (dtype_ == DType::string || dtype_size(dtype_) == 0)
    throw Error("tensor", std::string("cannot adopt bytes for a tensor of dtype ") + dtype_name(dtype_));
  if (bytes.size() != static_cast<size_t>(numel()) * dtype_size(dtype_))
    throw Error("tensor", std::to_string(bytes.size()) + " bytes for a " + dtype_name(dtype_) + " tensor of shape " + shape_str(shape_));
  bytes_ = std::make_shared<std::string>(std::move(bytes));
}

std::byte* Tensor::mutable_bytes() {
  if (!bytes_) return nullptr;
  if (bytes_.use_count() > 1) bytes_ = std::make_shared<std::string>(*bytes_);
  else std::atomic_thread_fence(std::memory_order_acquire);  // after another owner's last read
  return reinterpret_cast<std::byte*>(bytes_->data());
}

double Tensor::get(int64_t i) const {
  switch (dtype_) {
    case DType::f32: return data<float>()[i];
    case DType::f64: return data<double>()[i];
    case DType::f16: return f16_to_f32(data<uint16_t>()[i]);
    case DType::bf16: return bf16_to_f32(data<uint16_t>()[i]);
    case DType::i8: return data<int8_t>()[i];
    case DType::i16: return data<int16_t>()[i];
    case DType::i32: return data<int32_t>()[i];
    case DType::i64: return static_cast<double>(data<int64_t>()[i]);
    case DType::u8: return data<uint8_t>()[i];
    case DType::u16: return data<uint16_t>()[i];
    case DType::u32: return data<uint32_t>()[i];
    case DType::u64: return static_cast<double>(data<uint64_t>()[i]);
    case DType::boolean: return data<uint8_t>()[i] ? 1.0 : 0.0;
    case DType::i4: case DType::i2: return data<int8_t>()[i];
    case DType::u4: case DType::u2: return data<uint8_t>()[i];
    default:
      if (dtype_is_small_float(dtype_)) return small_float_decode(data<uint8_t>()[i], dtype_);
      throw Error("tensor", std::string("cannot read elements of dtype ") + dtype_name(dtype_));
  }
}

template <class T> static T to_int(double v) {
  if (std::isnan(v)) return 0;
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
  return static_cast<T>(v);
}

void Tensor::set(int64_t i, double v) {
  switch (dtype_) {
    case DType::f32: data<float>()[i] = static_cast<float>(v); break;
    case DType::f64: data<double>()[i] = v; break;
    // One rounding, double -> half (ir/half.h); through float it would round twice.
    case DType::f16: data<uint16_t>()[i] = f64_to_f16_rne(v); break;
    case DType::bf16: data<uint16_t>()[i] = f64_to_bf16_rne(v); break;
    case DType::i8: data<int8_t>()[i] = to_int<int8_t>(v); break;
    case DType::i16: data<int16_t>()[i] = to_int<int16_t>(v); break;
    case DType::i32: data<int32_t>()[i] = to_int<int32_t>(v); break;
    case DType::i64: data<int64_t>()[i] = to_int<int64_t>(v); break;
    case DType::u8: data<uint8_t>()[i] = to_int<uint8_t>(v); break;
    case DType::u16: data<uint16_t>()[i] = to_int<uint16_t>(v); break;
    case DType::u32: data<uint32_t>()[i] = to_int<uint32_t>(v); break;
    case DType::u64: data<uint64_t>()[i] = to_int<uint64_t>(v); break;
    case DType::boolean: data<uint8_t>()[i] = v != 0.0 ? 1 : 0; break;
    case DType::i4: case DType::i2: case DType::u4: case DType::u2: {
      int64_t lo, hi;  // saturating, as for the wider integers
      small_int_range(dtype_, &lo, &hi);
      const double c = std::isnan(v) ? 0.0 : std::min(static_cast<double>(hi), std::max(static_cast<double>(lo), v));
      data<uint8_t>()[i] = static_cast<uint8_t>(static_cast<int8_t>(c));
      break;
    }
    default:
      if (dtype_is_small_float(dtype_)) {
        data<uint8_t>()[i] = small_float_encode(v, dtype_);  // RNE, saturating (Cast's default)
        break;
      }
      throw Error("tensor", std::string("cannot write elements of dtype ") + dtype_name(dtype_));
  }
}

int64_t Tensor::get_int(int64_t i) const {
  switch (dtype_) {
    case DType::i64: return data<int64_t>()[i];
    case DType::u64: return static_cast<int64_t>(data<uint64_t>()[i]);
    case DType::i32: return data<int32_t>()[i];
    default: {
      // Floats read as integers (axes, sizes given as float tensors): a value outside int64
      // (or NaN) has no integer meaning, and converting it would be undefined behaviour.
      const double v = get(i);
      if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
        throw Error("tensor", "element " + std::to_string(i) + " (" + std::to_string(v) + ") of a " + dtype_name(dtype_) +
                                  " tensor is not an integer in int64 range");
      return static_cast<int64_t>(v);
    }
  }
}
void Tensor::set_int(int64_t i, int64_t v) {
  switch (dtype_) {
    case DType::i64: data<int64_t>()[i] = v; break;
    case DType::u64: data<uint64_t>()[i] = static_cast<uint64_t>(v); break;
    case DType::i32: data<int32_t>()[i] = static_cast<int32_t>(v); break;
    default: set(i, static_cast<double>(v));
  }
}

void Tensor::reshape(Shape s) {
  if (shape_numel(s) != numel())
    throw Error("tensor", "cannot reshape " + shape_str(shape_) + " to " + shape_str(s));
  shape_ = std::move(s);
}
void Tensor::fill(double v) {
  for (int64_t i = 0; i < numel(); ++i) set(i, v);
}
void Tensor::poison() {
  if (dtype_is_float(dtype_) && !dtype_is_small(dtype_)) {
    fill(std::numeric_limits<double>::quiet_NaN());
  } else if (nbytes() > 0) {
    std::memset(raw(), 0x5a, nbytes());
  }
}

Tolerance default_tolerance(DType t) {
  switch (t) {
    case DType::f16: return {1e-3, 1e-5};
    case DType::bf16: return {1.6e-2, 1e-5};
    case DType::f32: case DType::f64: return {1e-3, 1e-7};
    default: return {0, 0};
  }
}

namespace {

// The element's bits and the dtype's sign bit, for ulp distances and --exact.
uint64_t float_bits(DType t, double v, uint64_t* sign) {
  switch (t) {
    case DType::f16: *sign = 0x8000; return f64_to_f16_rne(v);
    case DType::bf16: *sign = 0x8000; return f64_to_bf16_rne(v);
    case DType::f32: *sign = 0x80000000u; { float f = static_cast<float>(v); uint32_t u; std::memcpy(&u, &f, 4); return u; }
    default: *sign = uint64_t{1} << 63; { uint64_t u; std::memcpy(&u, &v, 8); return u; }
  }
}

uint64_t raw_element(const Tensor& t, int64_t i) {
  switch (dtype_size(t.dtype())) {
    case 1: return t.data<uint8_t>()[i];
    case 2: return t.data<uint16_t>()[i];
    case 4: return t.data<uint32_t>()[i];
    default: return t.data<uint64_t>()[i];
  }
}

std::string element_str(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::u64) return std::to_string(t.data<uint64_t>()[i]);
  if (dtype_is_int(t.dtype())) return std::to_string(t.get_int(i));
  if (t.dtype() == DType::boolean) return t.get(i) != 0 ? "true" : "false";
  std::ostringstream o;
  o.precision(std::numeric_limits<double>::max_digits10);
  o << t.get(i);
  if (dtype_is_small(t.dtype())) o << " (0x" << std::hex << static_cast<unsigned>(t.data<uint8_t>()[i]) << ")";
  return o.str();
}

}  // namespace

int64_t ulp_distance(DType t, double a, double b) {
  if (!dtype_is_float(t) || dtype_is_small(t) || std::isnan(a) || std::isnan(b)) return -1;
  uint64_t sign;
  // Sign-magnitude bits -> a signed line on which adjacent values are 1 apart.
  auto ordinal = [&](double v) {
    uint64_t u = float_bits(t, v, &sign);
    return (u & sign) ? -static_cast<__int128>(u & ~sign) : static_cast<__int128>(u);
  };
  __int128 d = ordinal(a) - ordinal(b);
  if (d < 0) d = -d;
  return d > std::numeric_limits<int64_t>::max() ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(d);
}

CompareResult compare_tensors(const Tensor& a, const Tensor& b, const CompareOptions& opts) {
  CompareResult r;
  if (a.dtype() != b.dtype()) {
    r.ok = false;
    r.message = std::string("dtype ") + dtype_name(a.dtype()) + " != expected " + dtype_name(b.dtype());
    return r;
  }
  if (a.shape() != b.shape()) {
    r.ok = false;
    r.message = "shape " + shape_str(a.shape()) + " != expected " + shape_str(b.shape());
    return r;
  }
  if (a.dtype() == DType::string) {
    r.ok = a.strings == b.strings;
    if (!r.ok) r.message = "string values differ";
    return r;
  }
  const DType t = b.dtype();
  // The small dtypes compare bit for bit, like integers (a NaN matches any NaN encoding).
  const bool is_float = dtype_is_float(t) && !dtype_is_small(t);
  const bool small_float = dtype_is_small(t) && dtype_is_float(t);
  const Tolerance def = default_tolerance(t);
  const double rtol = opts.rtol < 0 ? def.rtol : opts.rtol;
  double atol = opts.atol < 0 ? def.atol : opts.atol;
  double scale = 0;  // the largest finite |expected|, when the output-scale allowance is on
  if (opts.scale_eps > 0 && !opts.exact && (t == DType::f32 || t == DType::f64)) {
    for (int64_t i = 0; i < b.numel(); ++i)
      if (double y = std::fabs(b.get(i)); std::isfinite(y)) scale = std::max(scale, y);
    atol += opts.scale_eps * std::ldexp(1.0, t == DType::f32 ? -23 : -52) * scale;
  }
  int64_t first_bad = -1;
  for (int64_t i = 0; i < a.numel(); ++i) {
    bool bad;
    if (!is_float) {
      // Integers and bools: exact (bool as truth values, whatever byte a kernel wrote).
      bad = t == DType::boolean ? (raw_element(a, i) != 0) != (raw_element(b, i) != 0) : raw_element(a, i) != raw_element(b, i);
      if (bad && small_float && std::isnan(a.get(i)) && std::isnan(b.get(i))) bad = false;
      if (bad) {
        const double d = std::fabs(a.get(i) - b.get(i));
        if (std::isfinite(d)) r.max_abs = std::max(r.max_abs, d);
        else r.max_abs = r.max_rel = std::numeric_limits<double>::infinity();
      }
    } else {
      double x = a.get(i), y = b.get(i);
      if (std::isnan(y) || std::isnan(x)) {
        bad = std::isnan(x) != std::isnan(y);
        // A NaN where a number is expected (or the reverse) is infinitely far, not 0 away.
        if (bad) r.max_abs = r.max_rel = std::numeric_limits<double>::infinity();
      } else {
        if (!std::isinf(x) && !std::isinf(y)) {
          double d = std::fabs(x - y);
          r.max_abs = std::max(r.max_abs, d);
          if (y != 0) r.max_rel = std::max(r.max_rel, d / std::fabs(y));
        }
        r.max_ulp = std::max(r.max_ulp, ulp_distance(t, x, y));
        if (opts.exact) {
          bad = raw_element(a, i) != raw_element(b, i);
          if (bad && x != y && (std::isinf(x) || std::isinf(y))) r.max_abs = r.max_rel = std::numeric_limits<double>::infinity();
        } else if (std::isinf(y) || std::isinf(x)) {
          bad = x != y;
          if (bad) r.max_abs = r.max_rel = std::numeric_limits<double>::infinity();
        }
        else
          bad = std::fabs(x - y) > atol + rtol * std::fabs(y);
      }
    }
    if (bad) {
      ++r.mismatches;
      if (first_bad < 0) first_bad = i;
    }
  }
  if (r.mismatches) {
    r.ok = false;
    std::ostringstream o;
    o << r.mismatches << " of " << a.numel() << " elements differ";
    if (!is_float) o << " (" << dtype_name(t) << (small_float ? ": compared bit for bit)" : ": compared exactly)");
    else if (opts.exact) o << " (--exact: compared bit for bit)";
    else if (scale > 0)
      o << " (" << dtype_name(t) << " rtol " << rtol << " atol " << atol << " incl. " << opts.scale_eps
        << " eps of max |expected| " << scale << ")";
    else o << " (" << dtype_name(t) << " rtol " << rtol << " atol " << atol << ")";
    o << "; first at " << first_bad << ": got " << element_str(a, first_bad) << ", expected " << element_str(b, first_bad);
    if (is_float) {
      int64_t u = ulp_distance(t, a.get(first_bad), b.get(first_bad));
      if (u >= 0) o << " (" << u << " ulp)";
      if (opts.exact && u == 0) o << " (bits 0x" << std::hex << raw_element(a, first_bad) << " vs 0x" << raw_element(b, first_bad) << std::dec << ")";
      o << "; max " << r.max_ulp << " ulp";
    }
    r.message = o.str();
  }
  return r;
}

double relative_l2(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return std::numeric_limits<double>::infinity();
  double num = 0, den = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.get(i), y = b.get(i);
    if (std::isnan(x) && std::isnan(y)) continue;
    if (std::isinf(x) && x == y) continue;
    num += (x - y) * (x - y);
    den += y * y;
  }
  if (std::isnan(num)) return std::numeric_limits<double>::infinity();
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
}

}  // namespace fusor
