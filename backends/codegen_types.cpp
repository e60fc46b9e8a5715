// Typed expression values in the shared emitter: compute types, conversions, literals in a
// math dtype, and the printing of one op-table expression (codegen.h; the rules are
// ir/scalar.h's, which ref and the cpu backend implement on the host).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "backends/codegen.h"
#include "backends/codegen_text.h"
#include "ir/scalar.h"

namespace fusor {

using codegen_text::is_ident_char;
using codegen_text::substitute;

namespace {

bool is_small_int(DType t) { return t == DType::i8 || t == DType::u8 || t == DType::i16 || t == DType::u16; }
// Values held as "float" (0/1 for bool), whatever the storage.
bool float_class(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::boolean; }

int64_t int_min_of(DType t) {
  switch (t) {
    case DType::i8: return -128;
    case DType::i16: return -32768;
    case DType::i32: return std::numeric_limits<int32_t>::min();
    case DType::i64: return std::numeric_limits<int64_t>::min();
    default: return 0;
  }
}
int64_t int_max_of(DType t) {
  switch (t) {
    case DType::i8: return 127;
    case DType::u8: return 255;
    case DType::i16: return 32767;
    case DType::u16: return 65535;
    case DType::i32: return std::numeric_limits<int32_t>::max();
    case DType::u32: return std::numeric_limits<uint32_t>::max();
    case DType::u64: return -1;  // all bits
    default: return std::numeric_limits<int64_t>::max();
  }
}

// Rewrites the fp32 literals of an op-table expression ("0.5f", fz_inf(), NaN) into literals
// of the op's math dtype, so "fz_max({0}, 0.0f)" computes in int64 or double when the op does.
std::string retype_literals(const std::string& ex, DType math, const Dialect& d) {
  if (float_class(math)) return ex;
  const bool integral = dtype_is_integral(math);
  auto special = [&](double v) -> std::string {
    if (!integral) return d.cast("double", std::isnan(v) ? "fz_nan()" : v > 0 ? "fz_inf()" : "(-fz_inf())");
    if (std::isnan(v)) return d.int_literal(math, 0);
    return d.int_literal(math, v > 0 ? int_max_of(math) : int_min_of(math));
  };
  static const struct { const char* text; double v; } kSpecial[] = {
      {"(0.0f * fz_inf())", std::numeric_limits<double>::quiet_NaN()},
      {"(-fz_inf())", -std::numeric_limits<double>::infinity()},
      {"fz_inf()", std::numeric_limits<double>::infinity()}};
  std::string out;
  for (size_t i = 0; i < ex.size();) {
    bool done = false;
    for (auto& sp : kSpecial) {
      const size_t n = std::char_traits<char>::length(sp.text);
      if (ex.compare(i, n, sp.text) == 0 && (i == 0 || !is_ident_char(ex[i - 1]))) {
        out += special(sp.v);
        i += n;
        done = true;
        break;
      }
    }
    if (done) continue;
    const bool starts_number = (std::isdigit(static_cast<unsigned char>(ex[i])) ||
                                (ex[i] == '.' && i + 1 < ex.size() && std::isdigit(static_cast<unsigned char>(ex[i + 1])))) &&
                               (i == 0 || !is_ident_char(ex[i - 1]));
    if (!starts_number) {
      out += ex[i++];
      continue;
    }
    size_t j = i;
    while (j < ex.size() && (std::isdigit(static_cast<unsigned char>(ex[j])) || ex[j] == '.')) ++j;
    if (j < ex.size() && (ex[j] == 'e' || ex[j] == 'E')) {
      ++j;
      if (j < ex.size() && (ex[j] == '+' || ex[j] == '-')) ++j;
      while (j < ex.size() && std::isdigit(static_cast<unsigned char>(ex[j]))) ++j;
    }
    size_t k = j;
    while (k < ex.size() && std::isalpha(static_cast<unsigned char>(ex[k]))) ++k;
    const std::string suffix = ex.substr(j, k - j), number = ex.substr(i, j - i);
    if (suffix == "f") {
      const double v = std::strtod(number.c_str(), nullptr);
      out += integral ? d.int_literal(math, static_cast<int64_t>(v)) : d.double_literal(v);
    } else {
      out += ex.substr(i, k - i);
    }
    i = k;
  }
  return out;
}

// A parameter value as a literal of the math dtype.
std::string param_literal(const Dialect& d, DType math, double v) {
  if (float_class(math)) return fz_float_literal(v);
  if (!dtype_is_integral(math)) return d.double_literal(v);
  if (std::isnan(v)) return d.int_literal(math, 0);
  if (std::isinf(v)) return d.int_literal(math, v > 0 ? int_max_of(math) : int_min_of(math));
  return d.int_literal(math, static_cast<int64_t>(v));
}

std::string with_suffix_point(double v, const char* fmt) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, std::fabs(v));
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

}  // namespace

std::string codegen_text::rename_intrinsics(const std::string& ex, const Dialect& d, DType math) {
  std::string out;
  for (size_t i = 0; i < ex.size();) {
    if (is_ident_char(ex[i]) && !std::isdigit(static_cast<unsigned char>(ex[i])) && (i == 0 || !is_ident_char(ex[i - 1]))) {
      size_t j = i;
      while (j < ex.size() && is_ident_char(ex[j])) ++j;
      std::string id = ex.substr(i, j - i);
      size_t k = j;
      while (k < ex.size() && ex[k] == ' ') ++k;
      out += (k < ex.size() && ex[k] == '(') ? d.typed_intrinsic(id, math) : id;
      i = j;
      continue;
    }
    // Skip over numeric literals whole so "1e5f" is not read as an identifier tail.
    if (std::isdigit(static_cast<unsigned char>(ex[i])) || (ex[i] == '.' && i + 1 < ex.size() && std::isdigit(static_cast<unsigned char>(ex[i + 1])))) {
      size_t j = i;
      while (j < ex.size() && (is_ident_char(ex[j]) || ex[j] == '.' ||
                               ((ex[j] == '+' || ex[j] == '-') && (ex[j - 1] == 'e' || ex[j - 1] == 'E'))))
        ++j;
      out += ex.substr(i, j - i);
      i = j;
      continue;
    }
    out += ex[i++];
  }
  return out;
}

std::string op_expression(const ExprNode& e, const std::vector<std::string>& operands, const Dialect& d) {
  if (!e.op || !(e.op->scalar || e.op->load_rule)) throw Error("codegen", "expression node without an element-wise op");
  const ScalarRule& r = e.op->scalar ? *e.op->scalar : *e.op->load_rule;  // load_rule: DequantizeLinear (dequant_b)
  // e.bound.expr already has variadic folding and absent operands (as literals) applied; its
  // literals and intrinsics are put in the math dtype before operands are substituted.
  const std::string typed = codegen_text::rename_intrinsics(retype_literals(e.bound.expr, e.math, d), d, e.math);
  std::string ex = substitute(
      typed,
      [&](int k) -> std::string {
        if (k >= static_cast<int>(operands.size()) || operands[k].empty())
          throw Error("codegen", "op " + e.op->name + " uses operand " + std::to_string(k) + ", which is absent");
        return operands[k];
      },
      [&](const std::string& p) -> std::string {
        for (size_t i = 0; i < r.params.size(); ++i)
          if (r.params[i].first == p)
            return param_literal(d, e.math, i < e.bound.params.size() ? e.bound.params[i] : r.params[i].second);
        throw Error("codegen", "op " + e.op->name + " expression uses unknown parameter '" + p + "'");
      });
  return "(" + ex + ")";
}

std::string convert_value(const Dialect& d, DType from, DType to, const std::string& v, bool force) {
  if (from == to && !force) return v;
  const std::string ct = d.compute_type(to);
  if (to == DType::boolean) {
    if (from == DType::boolean) return v;
    const std::string zero = dtype_is_integral(from) ? d.cast(d.compute_type(from), "0") : from == DType::f64 ? "0.0" : "0.0f";
    return "((" + v + ") != " + zero + " ? 1.0f : 0.0f)";
  }
  if (to == DType::f16 || to == DType::bf16) {
    // Round through the storage type (the same conversion a store performs). A double or an
    // integer reaches float rounded to odd first (fz_rto_f32, in both dialects' typed helpers),
    // so the one rounding to 16 bits is the value's own: through the nearest float it rounded
    // twice (f64 65519.999999 -> fp16 was inf, int32 16842753 -> bf16 one step low).
    const std::string f = float_class(from) ? v : "fz_rto_f32(" + v + ")";
    return d.round_value(to, f);
  }
  if (dtype_is_integral(to) && !dtype_is_integral(from)) {
    // Float -> integer truncates and saturates, NaN gives 0 (ir/scalar.h): a bare C/GLSL cast
    // is undefined out of range (lavapipe gave INT_MIN for inf and NaN, 0 for 300 -> int8).
    const int bits = static_cast<int>(dtype_size(to)) * 8;
    const bool uns = dtype_is_unsigned(to);
    auto lit = [&](double x) { return from == DType::f64 ? d.double_literal(x) : fz_float_literal(x); };
    const std::string hi = lit(std::ldexp(1.0, uns ? bits : bits - 1)), lo = lit(uns ? 0.0 : -std::ldexp(1.0, bits - 1));
    const int64_t imax = uns ? (bits == 64 ? -1 : (int64_t{1} << bits) - 1) : std::numeric_limits<int64_t>::max() >> (64 - bits);
    const int64_t imin = uns ? 0 : std::numeric_limits<int64_t>::min() >> (64 - bits);
    return "(fz_isnan(" + v + ") != " + lit(0.0) + " ? " + d.int_literal(to, 0) + " : (" + v + ") >= " + hi + " ? " +
           d.int_literal(to, imax) + " : (" + v + ") <= " + lo + " ? " + d.int_literal(to, imin) + " : " + d.cast(ct, v) + ")";
  }
  if (dtype_is_integral(to)) {
    const bool widen = (to == DType::i64 || to == DType::u64) && dtype_is_int(from) && !dtype_is_unsigned(from) &&
                       from != DType::i64 && from != DType::boolean;
    if (widen) return d.sign_extend64(ct, v);
    std::string x = d.cast(ct, v);
    return is_small_int(to) ? d.wrap_small(to, x) : x;
  }
  // f32 or f64 targets.
  if (d.compute_type(from) == ct) return v;
  return d.cast(ct, v);
}

std::string typed_literal(const Dialect& d, DType t, double value, int64_t ivalue) {
  if (t == DType::boolean) return ivalue != 0 ? "1.0f" : "0.0f";
  if (dtype_is_integral(t)) return d.int_literal(t, ivalue);
  if (t == DType::f64) return d.double_literal(value);
  return fz_float_literal(value);
}

// ---- Dialect defaults for typed values (CUDA-flavoured C; the GLSL dialect overrides) -------

std::string Dialect::compute_type(DType t) const {
  switch (t) {
    case DType::f64: return "double";
    case DType::i8: case DType::i16: case DType::i32: return "int";
    case DType::u8: case DType::u16: case DType::u32: return "unsigned int";
    case DType::i64: return int64_type;
    case DType::u64: return "unsigned long long";
    default: return "float";
  }
}

std::string Dialect::load_value(DType t, const std::string& e) const {
  if (float_class(t)) return to_float(t, e);
  if (t == DType::f64) return e;
  return cast(compute_type(t), e);
}

std::string Dialect::store_value(DType t, const std::string& v) const {
  if (float_class(t)) return from_float(t, v);
  if (t == DType::f64) return v;
  return cast(storage_type(t), v);
}

std::string Dialect::wrap_small(DType t, const std::string& v) const {
  switch (t) {
    case DType::i8: return cast("int", cast("signed char", v));
    case DType::i16: return cast("int", cast("short", v));
    case DType::u8: return "((" + v + ") & 0xFFu)";
    case DType::u16: return "((" + v + ") & 0xFFFFu)";
    default: return v;
  }
}

std::string Dialect::int_literal(DType t, int64_t v) const {
  std::string s;
  if (t == DType::u64) s = std::to_string(static_cast<uint64_t>(v)) + "ULL";
  else if (t == DType::i64) s = v == std::numeric_limits<int64_t>::min() ? "(-9223372036854775807LL - 1LL)" : std::to_string(v) + "LL";
  else if (dtype_is_unsigned(t)) s = std::to_string(static_cast<uint32_t>(v)) + "u";
  else s = v == std::numeric_limits<int32_t>::min() ? "(-2147483647 - 1)" : std::to_string(v);
  return cast(compute_type(t), s);
}

std::string Dialect::double_literal(double v) const {
  if (!std::isfinite(v)) return cast("double", std::isnan(v) ? "fz_nan()" : v > 0 ? "fz_inf()" : "(-fz_inf())");
  const std::string s = with_suffix_point(v, "%.17g");
  return std::signbit(v) ? "(-" + s + ")" : s;
}

std::string Dialect::typed_intrinsic(const std::string& nm, DType math) const {
  if (float_class(math)) return intrinsic(nm);
  if (dtype_is_integral(math)) return nm == "abs" ? "fz_abs" : nm;
  return nm == "abs" ? "fabs" : nm;  // C++ overloads of the math functions compute in double
}

// C++ overloads: NVRTC compiles C++, so one name serves every type.
std::string Dialect::typed_helpers(const KernelHeader&) const {
  std::string s = R"(FZ_FN double fz_max(double a, double b) { return (a != a || b != b) ? (double)fz_nan() : (a > b ? a : b); }
FZ_FN double fz_min(double a, double b) { return (a != a || b != b) ? (double)fz_nan() : (a < b ? a : b); }
FZ_FN double fz_round_even(double x) { return rint(x); }
FZ_FN double fz_sign(double x) { return x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : (x == 0.0 ? 0.0 : x)); }
FZ_FN double fz_isnan(double x) { return x != x ? 1.0 : 0.0; }
FZ_FN double fz_isinf(double x) { return fabs(x) == (double)fz_inf() ? 1.0 : 0.0; }
FZ_FN double fz_fmod(double a, double b) { return fmod(a, b); }
FZ_FN double fz_fmod_floor(double a, double b) {
  double r = fmod(a, b);
  return r != 0.0 ? (((b < 0.0) != (r < 0.0)) ? r + b : r) : copysign(0.0, b);
}
FZ_FN double fz_log1p(double x) { return log1p(x); }
FZ_FN double fz_expm1(double x) { return expm1(x); }
FZ_FN double fz_div(double a, double b) { return a / b; }
FZ_FN double fz_gelu(double x) { return x * normcdf(x); }
FZ_FN double fz_gelu_tanh(double x) {
  double z2 = 1.5957691216057308 * (x + 0.044715 * x * x * x);
  if (z2 < 0.0) { double e = exp(z2); return x * (e / (1.0 + e)); }
  return x / (1.0 + exp(-z2));
}
// x as a float rounded to odd: the float nearest x, moved toward zero where it rounded away, its
// last bit set when inexact (see convert_value).
FZ_FN float fz_rto_f32(double x) {
  float f = (float)x;
  if ((double)f == x || x != x) return f;
  unsigned int b = __float_as_uint(f);
  return __uint_as_float((fabs((double)f) > fabs(x) ? b - 1u : b) | 1u);
}
)";
  // T: the type, U: its unsigned twin (wrapping arithmetic without signed-overflow UB). Signed
  // fz_ishr is arithmetic (BitShift-28); b < 0 or >= the width gives the sign fill.
  const char* kSigned = R"(FZ_FN T fz_iadd(T a, T b) { return (T)((U)a + (U)b); }
FZ_FN T fz_isub(T a, T b) { return (T)((U)a - (U)b); }
FZ_FN T fz_imul(T a, T b) { return (T)((U)a * (U)b); }
FZ_FN T fz_ineg(T a) { return (T)((U)0 - (U)a); }
FZ_FN T fz_max(T a, T b) { return a < b ? b : a; }
FZ_FN T fz_min(T a, T b) { return b < a ? b : a; }
FZ_FN T fz_abs(T a) { return a < 0 ? (T)((U)0 - (U)a) : a; }
FZ_FN T fz_sign(T a) { return (T)((a > 0) - (a < 0)); }
FZ_FN T fz_idiv(T a, T b) { return b == 0 ? (T)0 : (b == (T)-1 ? (T)((U)0 - (U)a) : (T)(a / b)); }
FZ_FN T fz_ifmod(T a, T b) { return (b == 0 || b == (T)-1) ? (T)0 : (T)(a % b); }
FZ_FN T fz_imod(T a, T b) { T r = fz_ifmod(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? (T)(r + b) : r; }
FZ_FN T fz_ishl(T a, T b) { return (b >= 0 && b < (T)(8 * sizeof(T))) ? (T)((U)a << b) : (T)0; }
FZ_FN T fz_ishr(T a, T b) { return (b >= 0 && b < (T)(8 * sizeof(T))) ? (T)(a >> b) : (a < 0 ? (T)-1 : (T)0); }
FZ_FN T fz_ipow(T a, T b) {
  if (b < 0) return a == 1 ? (T)1 : (a == (T)-1 ? ((b & 1) ? (T)-1 : (T)1) : (T)0);
  U r = 1, x = (U)a;
  for (U e = (U)b; e != 0; e >>= 1, x = x * x) if (e & 1) r = r * x;
  return (T)r;
}
FZ_FN float fz_rto_f32(T i) {  // i as a float rounded to odd (convert_value)
  float f = (float)i;
  bool away;
  if (f >= (float)((U)1 << (8 * sizeof(T) - 1))) away = true;  // 2^(w-1): past T, so above i
  else {
    T back = (T)f;
    if (back == i) return f;
    away = i > 0 ? back > i : back < i;
  }
  unsigned int b = __float_as_uint(f);
  return __uint_as_float((away ? b - 1u : b) | 1u);
}
)";
  const char* kUnsigned = R"(FZ_FN T fz_iadd(T a, T b) { return a + b; }
FZ_FN T fz_isub(T a, T b) { return a - b; }
FZ_FN T fz_imul(T a, T b) { return a * b; }
FZ_FN T fz_ineg(T a) { return (T)0 - a; }
FZ_FN T fz_max(T a, T b) { return a < b ? b : a; }
FZ_FN T fz_min(T a, T b) { return b < a ? b : a; }
FZ_FN T fz_abs(T a) { return a; }
FZ_FN T fz_sign(T a) { return (T)(a != 0); }
FZ_FN T fz_idiv(T a, T b) { return b == 0 ? (T)0 : (T)(a / b); }
FZ_FN T fz_ifmod(T a, T b) { return b == 0 ? (T)0 : (T)(a % b); }
FZ_FN T fz_imod(T a, T b) { return fz_ifmod(a, b); }
FZ_FN T fz_ishl(T a, T b) { return b < (T)(8 * sizeof(T)) ? (T)(a << b) : (T)0; }
FZ_FN T fz_ishr(T a, T b) { return b < (T)(8 * sizeof(T)) ? (T)(a >> b) : (T)0; }
FZ_FN T fz_ipow(T a, T b) {
  T r = 1;
  for (; b != 0; b >>= 1, a = a * a) if (b & 1) r = r * a;
  return r;
}
FZ_FN float fz_rto_f32(T i) {  // i as a float rounded to odd (convert_value)
  float f = (float)i;
  bool away;
  if (f >= 2.0f * (float)((T)1 << (8 * sizeof(T) - 1))) away = true;  // 2^w: past T, so above i
  else {
    T back = (T)f;
    if (back == i) return f;
    away = back > i;
  }
  unsigned int b = __float_as_uint(f);
  return __uint_as_float((away ? b - 1u : b) | 1u);
}
)";
  auto inst = [](const char* tmpl, const std::string& t, const std::string& u) {
    std::string out;
    for (const char* c = tmpl; *c; ++c) {
      if ((*c == 'T' || *c == 'U') && !is_ident_char(c[1]) && (c == tmpl || !is_ident_char(c[-1]))) out += *c == 'T' ? t : u;
      else out += *c;
    }
    return out;
  };
  s += inst(kSigned, "int", "unsigned int") + inst(kSigned, "long long", "unsigned long long");
  s += inst(kUnsigned, "unsigned int", "") + inst(kUnsigned, "unsigned long long", "");
  return s;
}

}  // namespace fusor
