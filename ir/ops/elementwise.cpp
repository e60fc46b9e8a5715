// Element-wise ops (ONNX semantics, NumPy broadcasting): one OpDef each, whose ScalarRule is
// the single definition of the op's math. The CPU reference below is one generic broadcast
// loop that calls ScalarRule::eval (through eval_scalar), so ref, the cpu backend and the
// printed GPU expressions cannot drift apart.
//
// Expression vocabulary (what ScalarRule::expr may contain; every emitter must provide it):
//  - operands "{0}", "{1}", ...; params "{alpha}", ... (see bind_scalar); float literals "0.5f";
//    an emitter substituting operand text must parenthesize it (or name it: "-{0}" appears);
//  - operators + - * / unary -, ?:, < <= > >= == != (a comparison used as a value is always
//    written "(a < b ? 1.0f : 0.0f)": all fused values are fp32, bools are 0.0f/1.0f);
//  - intrinsics with C99 float semantics: exp log sqrt tanh erf sin cos tan asin acos atan sinh
//    cosh asinh acosh atanh floor ceil abs, and pow(a, b), which must follow C's powf also for
//    a < 0 with an integral b (GLSL's pow is undefined there: override it);
//  - helpers each emitter's prelude defines (all float -> float):
//      fz_max(a, b), fz_min(a, b)  NaN if a or b is NaN, else the larger / smaller value
//      fz_round_even(x)            round half to even (rint); NaN and +-inf unchanged
//      fz_sign(x)                  1.0f if x > 0, -1.0f if x < 0, 0.0f for +-0, NaN for NaN
//      fz_isnan(x)                 1.0f if x is NaN, else 0.0f
//      fz_isinf(x)                 1.0f if x is +inf or -inf, else 0.0f
//      fz_fmod(a, b)               C fmodf: a - trunc(a / b) * b, sign of a; NaN when b == 0
//      fz_fmod_floor(a, b)         a - floor(a / b) * b (Mod-28 fmod=0): fz_fmod(a, b), plus b
//                                  when the signs differ; a zero result is a zero of b's sign
//      fz_log1p(x)                 log(1 + x), accurate for small x (C log1pf)
//      fz_expm1(x)                 exp(x) - 1, accurate for small x (C expm1f)
//      fz_div(a, b)                a / b correctly rounded (IEEE); every op value that divides uses
//                                  it, since Vulkan's "/" may be approximate (2.5 ulp)
//      fz_inf()                    +infinity (bind_scalar prints non-finite literals with it)
//  - integer helpers (int_expr), overloaded per integer compute type: fz_iadd, fz_isub, fz_imul,
//    fz_ineg (wrap around; C/C++ signed overflow is undefined, GLSL's wraps), fz_idiv(a, b) (truncates
//    toward zero; b == 0 gives 0; MIN / -1 gives MIN), fz_imod(a, b) (sign of the divisor),
//    fz_ifmod(a, b) (sign of the dividend; b == 0 gives 0), fz_ipow(a, b) (wraps),
//    fz_ishl(a, b) / fz_ishr(a, b) (BitShift: 0 when b >= the compute type's width; for signed
//    types ishr is arithmetic and b < 0 or >= the width gives the sign fill, -1 or 0); and the
//    operators & | ^ ~ (bitwise ops, integers only).
//
// Typing (DESIGN.md numerics): an op node computes in its math dtype (ScalarRule::math_operand's
// dtype): integers as integers with wrap-around, float64 in double, float32/16/bf16 in fp32.
// Emitters convert operands to it, print the expression with literals and fz_inf() in that
// type, and convert the result to the node's dtype (which rounds fp16/bf16, wraps small ints).
#include <algorithm>
#include <cmath>
#include <functional>
#include <cstdio>
#include <cstring>
#include <limits>

#include "ir/op_table.h"
#include "ir/ops/op_helpers.h"

namespace fusor {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kFltMax = 3.4028234663852886e38;

// NaN-propagating max/min: the double twins of fz_max/fz_min.
double nan_max(double a, double b) { return (std::isnan(a) || std::isnan(b)) ? kNaN : (a > b ? a : b); }
double nan_min(double a, double b) { return (std::isnan(a) || std::isnan(b)) ? kNaN : (a < b ? a : b); }

// Half-to-even rounding without depending on the FP environment's rounding mode.
double round_even(double v) {
  if (!std::isfinite(v) || std::fabs(v) >= 4503599627370496.0) return v;  // 2^52: already integral
  // floor(v + 0.5) would round 0.49999999999999994 up (the sum rounds to 1); v - floor(v) is exact.
  double r = std::floor(v);
  const double f = v - r;
  if (f > 0.5 || (f == 0.5 && std::fmod(r, 2.0) != 0.0)) r += 1.0;
  return std::copysign(r, v);  // -0.4 and -0.0 round to -0.0 (IEEE roundToIntegralTiesToEven, numpy)
}
// Mod-28 fmod=0 on floats, the twin of fz_fmod_floor: C fmod (exact), moved to the divisor's
// sign; a zero result takes the divisor's sign, inf and NaN operands give what fmod gives.
double fmod_floor(double a, double b) {
  const double r = std::fmod(a, b);
  if (r == 0) return std::copysign(0.0, b);
  return (b < 0) != (r < 0) ? r + b : r;
}
double sign_of(double v) { return v > 0 ? 1.0 : v < 0 ? -1.0 : v == 0 ? 0.0 : kNaN; }
// log(1 + exp(x)) in a form that does not overflow for large x (same formula as the expr).
double softplus(double v) { return nan_max(v, 0.0) + std::log1p(std::exp(-std::fabs(v))); }
// Gelu's erf form 0.5 v erfc(-v / sqrt 2) in long double: erfc's relative error grows as
// 2 t^2 times its argument's (t = v / sqrt 2), ~200 double ulps at v = -14 if the argument
// rounded to double.
double gelu_erf(double v) {
  const long double lv = v;
  return static_cast<double>(0.5L * lv * std::erfc(-lv * 0.70710678118654752440084436210484903928L));
}
// Gelu's tanh form 0.5 v (1 + tanh(z)) as v sigmoid(2z): 1 + tanh(z) cancels for z < 0.
double gelu_tanh(double v) {
  const double z2 = 1.5957691216057307118 * (v + 0.044715 * v * v * v);
  if (z2 < 0) return v * (std::exp(z2) / (1 + std::exp(z2)));
  return v / (1 + std::exp(-z2));
}

// Integer arithmetic on int64-held values of the math dtype, free of C++ UB: +, -, * wrap
// through uint64 (the caller wraps to the dtype), x / 0 and x % 0 are 0, MIN / -1 wraps to MIN.
int64_t iadd(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
int64_t isub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
int64_t imul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }
bool iless(int64_t a, int64_t b, bool uns) { return uns ? static_cast<uint64_t>(a) < static_cast<uint64_t>(b) : a < b; }
int64_t imax(int64_t a, int64_t b, bool uns) { return iless(a, b, uns) ? b : a; }
int64_t imin(int64_t a, int64_t b, bool uns) { return iless(b, a, uns) ? b : a; }
int64_t idiv(int64_t a, int64_t b, bool uns) {
  if (b == 0) return 0;
  if (uns) return static_cast<int64_t>(static_cast<uint64_t>(a) / static_cast<uint64_t>(b));
  if (b == -1) return isub(0, a);
  return a / b;
}
// fmod: C's %, sign of the dividend; otherwise Python's %, sign of the divisor.
int64_t imod(int64_t a, int64_t b, bool c_style, bool uns) {
  if (b == 0) return 0;
  if (uns) return static_cast<int64_t>(static_cast<uint64_t>(a) % static_cast<uint64_t>(b));
  if (b == -1) return 0;
  int64_t r = a % b;
  if (!c_style && r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
int64_t ipow(int64_t a, int64_t b, bool uns) {
  if (!uns && b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
  int64_t r = 1;
  for (uint64_t e = static_cast<uint64_t>(b); e != 0; e >>= 1, a = imul(a, a))
    if (e & 1) r = imul(r, a);
  return r;
}
int64_t isign(int64_t a, bool uns) { return uns ? (a != 0) : (a > 0) - (a < 0); }
// BitShift (ONNX BitShift-28 text; unsigned-only before 28). Unsigned: a shift of 64 or more
// gives 0 (numpy's rule); the caller's wrap to the dtype clears bits shifted past narrower
// widths. Signed (a sign-extended): RIGHT is arithmetic; an amount < 0 or >= the width gives
// the sign fill alone (-1 for RIGHT of a negative, else 0). Amounts in [width, 64) already
// give that through the sign extension and the wrap, so one check at 64 serves every width.
int64_t ishift(int64_t a, int64_t b, bool right, bool uns) {
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  if (ub >= 64) return right && !uns && a < 0 ? -1 : 0;  // signed b < 0 lands here too
  if (right) return uns ? static_cast<int64_t>(ua >> ub) : a >> b;
  return static_cast<int64_t>(ua << ub);
}

// ---- printing -------------------------------------------------------------------------------

// A literal valid in CUDA C and GLSL: always has a '.' or exponent, 'f' suffix, negatives in
// parentheses, infinities through fz_inf().
std::string float_literal(double v) {
  if (std::isnan(v)) return "(0.0f * fz_inf())";
  if (std::isinf(v)) return v > 0 ? "fz_inf()" : "(-fz_inf())";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", std::fabs(v));
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  s += "f";
  return v < 0 || std::signbit(v) ? "(-" + s + ")" : s;
}

// Replaces every "{k}" whose k is an operand index with operand(k); "{name}" params stay. One
// pass, so replacement text is never rescanned.
template <class F>
std::string substitute_operands(const std::string& expr, F operand) {
  std::string out;
  for (size_t i = 0; i < expr.size();) {
    size_t close = expr[i] == '{' ? expr.find('}', i) : std::string::npos;
    if (close != std::string::npos) {
      std::string key = expr.substr(i + 1, close - i - 1);
      if (!key.empty() && std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        out += operand(std::stoi(key));
        i = close + 1;
        continue;
      }
    }
    out += expr[i++];
  }
  return out;
}

int max_operand(const std::string& expr) {
  int m = -1;
  substitute_operands(expr, [&](int k) {
    m = std::max(m, k);
    return std::string();
  });
  return m;
}

bool node_has(const Node& n, int i) { return n.has_input(static_cast<size_t>(i)); }

}  // namespace

BoundScalar bind_scalar(const ScalarRule& r, const Node& n, bool int_math) {
  BoundScalar b;
  b.params.resize(r.params.size());
  if (r.resolve_params) {
    r.resolve_params(n, b.params.data());
  } else {
    for (size_t i = 0; i < r.params.size(); ++i) b.params[i] = n.attr_f(r.params[i].first, r.params[i].second);
  }
  if (r.variadic) {
    int count = n.num_inputs();
    for (int i = 0; i < count; ++i)
      if (!node_has(n, i)) throw Error("shape", n.label() + ": input " + std::to_string(i) + " is missing");
    b.absent.assign(static_cast<size_t>(count), std::nullopt);
    std::string e = "{0}";
    const std::string fold = (int_math && r.int_expr) ? r.int_expr : r.expr;
    for (int i = 1; i < count; ++i)  // left fold: f(f(x0, x1), x2) ...
      e = substitute_operands(fold, [&](int k) { return k == 0 ? "(" + e + ")" : "{" + std::to_string(i) + "}"; });
    // fz_div: a driver's "/" may be 2.5 ulp (Vulkan), the op table's division is IEEE's.
    if (r.mean && count > 1) e = "fz_div(" + e + ", " + float_literal(count) + ")";
    b.expr = e;
    return b;
  }
  const std::string base = (int_math && r.int_expr) ? r.int_expr : r.expr;
  int count = std::max(static_cast<int>(n.inputs.size()), max_operand(base) + 1);
  b.absent.assign(static_cast<size_t>(count), std::nullopt);
  for (int i = 0; i < count; ++i)
    if (!node_has(n, i)) b.absent[i] = r.absent_operand ? r.absent_operand(n, i) : kNaN;
  b.expr = substitute_operands(
      base, [&](int k) { return b.absent[k] ? float_literal(*b.absent[k]) : "{" + std::to_string(k) + "}"; });
  return b;
}

double eval_scalar(const ScalarRule& r, const BoundScalar& b, const double* x, bool int_math) {
  const size_t count = b.absent.size();
  if (r.variadic) {
    double acc = x[0];
    for (size_t i = 1; i < count; ++i) {
      const double pair[2] = {acc, x[i]};
      acc = r.eval(pair, b.params.data(), int_math);
    }
    return r.mean ? acc / static_cast<double>(count) : acc;
  }
  double small[8];
  std::vector<double> big;
  double* v = small;
  if (count > 8) {
    big.resize(count);
    v = big.data();
  }
  for (size_t i = 0; i < count; ++i) v[i] = b.absent[i] ? *b.absent[i] : x[i];
  return r.eval(v, b.params.data(), int_math);
}

DType scalar_math_dtype(const ScalarRule& r, const std::vector<DType>& in) {
  const size_t m = static_cast<size_t>(r.math_operand);
  return m < in.size() && in[m] != DType::undefined ? in[m] : (in.empty() ? DType::f32 : in[0]);
}

HostScalar eval_scalar_typed(const ScalarRule& r, const BoundScalar& b, const HostScalar* x, const DType* xt, DType math,
                             DType out) {
  const size_t count = b.absent.size();
  HostScalar res;
  if (dtype_is_integral(math) && r.float_exponent && count == 2 && !b.absent[1] && dtype_is_float(xt[1])) {
    // Pow(int, float): the power in float64 (an integral exponent's rounded to the nearest
    // integer), truncated to the base's type: the rewrite ir/decompose.cpp makes for the kernels.
    const double base = scalar_convert(x[0], xt[0], DType::f64).f;
    const double e = scalar_convert(x[1], xt[1], DType::f64).f;
    double p = std::pow(base, e);
    if (std::floor(e) == e) p = std::nearbyint(p);
    return scalar_convert(scalar_convert(HostScalar{p}, DType::f64, math), math, out);
  }
  if (dtype_is_integral(math) && r.int_in_f64 && count == 1 && !b.absent[0]) {
    const double v = scalar_convert(x[0], xt[0], DType::f64).f;
    return scalar_convert(HostScalar{eval_scalar(r, b, &v, false)}, DType::f64, out);
  }
  if (dtype_is_integral(math)) {
    if (!r.ieval) throw Error("ref", "an integer operand reached a float-only op");
    const bool uns = dtype_is_unsigned(math);
    auto operand = [&](size_t i) {
      HostScalar v;
      if (b.absent[i]) v = scalar_convert(HostScalar{*b.absent[i]}, DType::f64, math);
      else v = scalar_convert(x[i], xt[i], math);
      return v.i;
    };
    if (r.variadic) {
      int64_t acc = operand(0);
      for (size_t i = 1; i < count; ++i) {
        const int64_t pair[2] = {acc, operand(i)};
        acc = wrap_int(r.ieval(pair, b.params.data(), uns), math);
      }
      res.i = acc;
    } else {
      int64_t small[8];
      std::vector<int64_t> big;
      int64_t* v = small;
      if (count > 8) big.resize(count), v = big.data();
      for (size_t i = 0; i < count; ++i) v[i] = operand(i);
      res.i = wrap_int(r.ieval(v, b.params.data(), uns), math);
    }
    return scalar_convert(res, math, out);
  }
  // Float math: operands as values of the math dtype (scalar_operand_dtype: an int exponent of
  // Pow rounds to it, or to fp32 for an fp16 / bf16 base).
  double small[8];
  std::vector<double> big;
  double* v = small;
  if (count > 8) big.resize(count), v = big.data();
  for (size_t i = 0; i < count; ++i) {
    const DType to = scalar_operand_dtype(r, i, xt[i], math);
    v[i] = b.absent[i] ? *b.absent[i] : (xt[i] == to ? x[i].f : scalar_convert(x[i], xt[i], to).f);
  }
  if (r.variadic) {
    // Each step of the fold rounds to the type the kernels fold in (fp32, or fp64 for double),
    // as binary Adds would: Sum(3e38, 3e38, -3e38) in float32 is inf, not 3e38 (red-team round 4).
    const DType step = math == DType::f64 ? DType::f64 : DType::f32;
    double acc = v[0];
    for (size_t i = 1; i < count; ++i) {
      const double pair[2] = {acc, v[i]};
      acc = round_float(r.eval(pair, b.params.data(), false), step);
    }
    res.f = r.mean ? round_float(acc / static_cast<double>(count), step) : acc;
  } else {
    res.f = eval_scalar(r, b, v, false);
  }
  return scalar_convert(res, DType::f64, out);
}

namespace {

// ---- shape/dtype rules ----------------------------------------------------------------------

enum class Typing {
  same,       // all operands share input 0's dtype; output too
  pow,        // exponent may have another numeric dtype; output = base dtype
  where,      // cond bool; X, Y share a dtype; output = X's
  compare,    // operands share a dtype; output bool
  logic,      // bool operands; output bool
  predicate,  // one float operand; output bool (IsNaN, IsInf)
  clip,       // X plus optional scalar min/max of X's dtype; output = X's shape
  prelu,      // slope broadcasts to X; output = X's shape
  cast,       // output dtype from attribute 'to'
  castlike,   // output dtype = input 1's; its shape is ignored
  bitwise,    // integer operands (not bool) of one dtype; output too (BitwiseAnd/Or/Xor/Not)
  shift,      // integer operands of one dtype (unsigned only before opset 28); output too (BitShift)
};

void infer_elementwise(InferContext& ctx, Typing typing, bool float_only, bool numeric_only = false) {
  const Node& n = ctx.node();
  const int count = ctx.num_inputs();
  auto require_same = [&](int a, int b) {
    if (ctx.has_input(a) && ctx.has_input(b) && ctx.dtype(a) != ctx.dtype(b))
      ctx.fail(std::string("input dtypes differ (") + dtype_name(ctx.dtype(a)) + " vs " + dtype_name(ctx.dtype(b)) +
               ")");
  };
  const DType t0 = ctx.dtype(0);
  if (float_only && !dtype_is_float(t0)) ctx.fail(std::string("needs a floating-point input, got ") + dtype_name(t0));
  if (numeric_only && t0 == DType::boolean) ctx.fail("needs a numeric input, got bool");
  // The 8/4/2-bit types are storage types in ONNX: no arithmetic op types them (Add on
  // float8e4m3fn saturated 448 + 448 to 448); Cast/CastLike convert them, IsNaN/IsInf test
  // them, Identity copies them.
  if (typing != Typing::cast && typing != Typing::castlike && typing != Typing::predicate && n.op_type != "Identity")
    for (int i = 0; i < count; ++i)
      if (ctx.has_input(i) && dtype_is_small(ctx.dtype(i)))
        ctx.fail(std::string("is not defined for ") + dtype_name(ctx.dtype(i)) + " (input " + std::to_string(i) +
                 "; ONNX types no arithmetic for 8-, 4- and 2-bit types: Cast it first)");
  DType out_dtype = t0;
  Shape out_shape;
  if (typing == Typing::cast || typing == Typing::castlike || typing == Typing::clip) {
    out_shape = ctx.shape(0);
  } else {
    std::vector<Shape> shapes;
    for (int i = 0; i < count; ++i)
      if (ctx.has_input(i)) shapes.push_back(ctx.shape(i));
    out_shape = broadcast_shapes(shapes, n.label());
  }
  switch (typing) {
    case Typing::same:
    case Typing::compare:
      for (int i = 1; i < count; ++i) require_same(0, i);
      if (typing == Typing::compare) out_dtype = DType::boolean;
      break;
    case Typing::pow:
      if (!dtype_is_float(ctx.dtype(1)) && !dtype_is_int(ctx.dtype(1))) ctx.fail("exponent must be numeric");
      break;
    case Typing::where:
      if (t0 != DType::boolean) ctx.fail(std::string("condition must be bool, got ") + dtype_name(t0));
      require_same(1, 2);
      out_dtype = ctx.dtype(1);
      break;
    case Typing::logic:
      for (int i = 0; i < count; ++i)
        if (ctx.dtype(i) != DType::boolean) ctx.fail(std::string("needs bool inputs, got ") + dtype_name(ctx.dtype(i)));
      out_dtype = DType::boolean;
      break;
    case Typing::predicate:
      out_dtype = DType::boolean;
      break;
    case Typing::clip:
      for (int i = 1; i < count; ++i) {
        require_same(0, i);
        if (ctx.has_input(i) && shape_numel(ctx.shape(i)) != 1) ctx.fail("min and max must be scalars");
      }
      break;
    case Typing::prelu:
      require_same(0, 1);
      if (out_shape != ctx.shape(0))
        ctx.fail("slope " + shape_str(ctx.shape(1)) + " does not broadcast to X " + shape_str(ctx.shape(0)));
      break;
    case Typing::bitwise:
    case Typing::shift:
      for (int i = 0; i < count; ++i) {
        require_same(0, i);
        // BitShift types signed integers from opset 28 on (arithmetic right shift).
        const bool unsigned_only = typing == Typing::shift && n.opset < 28;
        if (!dtype_is_int(ctx.dtype(i)) || dtype_is_small(ctx.dtype(i)) ||
            (unsigned_only && !dtype_is_unsigned(ctx.dtype(i))))
          ctx.fail(std::string("needs ") + (unsigned_only ? "unsigned " : "") + "integer inputs" +
                   (unsigned_only ? " before opset 28" : "") + ", got " + dtype_name(ctx.dtype(i)));
      }
      break;
    case Typing::cast:
      out_dtype = dtype_from_onnx(static_cast<int>(n.attr_i("to", 0)));
      if (out_dtype == DType::undefined) ctx.fail("unsupported target type to=" + std::to_string(n.attr_i("to", 0)));
      break;
    case Typing::castlike:
      out_dtype = ctx.dtype(1);
      if (out_dtype == DType::undefined) ctx.fail("unsupported target type");
      // Recorded so CastLike shares Cast's scalar rule (its params read 'to' from the node).
      ctx.node().attrs["to"] = static_cast<int64_t>(dtype_to_onnx(out_dtype));
      break;
  }
  // Before opset 7, broadcast=1 aligned B at 'axis': legacy_broadcast_expand reshaped B so that
  // NumPy's trailing alignment is that; a B this rule still sees would be misaligned.
  if (n.opset < 7 && n.attr_i("broadcast", 0) != 0 && n.has_attr("axis") && count == 2 &&
      normalize_axis(n.attr_i("axis", 0), ctx.rank(0), n.label()) != ctx.rank(0) - ctx.rank(1))
    ctx.fail("legacy broadcast: B does not align with A at 'axis'");
  // Mod-28 defines fmod=0 for floats (the floor form); before, floats needed fmod=1.
  if (n.op_type == "Mod" && dtype_is_float(t0) && n.attr_i("fmod", 0) == 0 && n.opset < 28)
    ctx.fail("floating-point Mod needs fmod=1 before opset 28 (ONNX)");
  ctx.set_output(0, out_dtype, std::move(out_shape));
}

// ---- the generic reference loop -------------------------------------------------------------

// Strides of an input over the output space. Scalars (numel 1, any rank, e.g. Clip's bounds)
// are broadcast everywhere.
std::vector<int64_t> operand_strides(const Shape& in, const Shape& out) {
  if (shape_numel(in) == 1 || in.size() > out.size()) return std::vector<int64_t>(out.size(), 0);
  return broadcast_strides(in, out);
}

// For every output element: gather the broadcast operands, evaluate the rule in its math
// dtype, store in the output dtype. `use` says which inputs the rule reads.
void elementwise_loop(const ScalarRule& rule, const Node& n, const std::vector<const Tensor*>& in, Tensor& y,
                      const std::vector<bool>& use) {
  const Shape& os = y.shape();
  const int r = static_cast<int>(os.size());
  const int k = static_cast<int>(in.size());
  std::vector<DType> xt(k, DType::undefined);
  for (int i = 0; i < k; ++i)
    if (in[i]) xt[i] = in[i]->dtype();
  const DType math = scalar_math_dtype(rule, xt);
  const BoundScalar b = bind_scalar(rule, n, dtype_is_int(math));
  std::vector<const Tensor*> src(k, nullptr);
  bool f32_in = math == DType::f32 && !rule.variadic;  // variadic folds round per step (typed)
  for (int i = 0; i < k; ++i) {
    if (in[i] && use[i]) src[i] = in[i];
    if (src[i] && src[i]->dtype() != DType::f32) f32_in = false;
  }
  const bool all_f32 = f32_in && y.dtype() == DType::f32;
  // float32 operands compared (Greater, Equal, IsNaN ...): a bool is the value != 0, as the
  // typed store converts it (a detector's 10^7-element score mask is folded at load).
  const bool f32_to_bool = f32_in && y.dtype() == DType::boolean;
  std::vector<std::vector<int64_t>> st(k);
  for (int i = 0; i < k; ++i)
    if (src[i]) st[i] = operand_strides(src[i]->shape(), os);
  const size_t nx = std::max<size_t>(b.absent.size(), static_cast<size_t>(k)) + 1;
  std::vector<double> x(nx, 0.0);
  std::vector<HostScalar> hx(nx, HostScalar{0.0});
  xt.resize(nx, DType::f64);
  std::vector<int64_t> off(k, 0), idx(r, 0);
  const int64_t total = y.numel();
  void* ybase = y.raw();
  std::vector<const float*> f32(k, nullptr);
  for (int i = 0; i < k; ++i)
    if (src[i] && (all_f32 || f32_to_bool)) f32[i] = src[i]->data<float>();
  for (int64_t e = 0; e < total; ++e) {
    if (all_f32 || f32_to_bool) {  // the common cases without the dtype switches; same eval
      for (int i = 0; i < k; ++i)
        if (src[i]) x[i] = f32[i][off[i]];
      const double v = eval_scalar(rule, b, x.data(), false);
      if (all_f32) static_cast<float*>(ybase)[e] = static_cast<float>(v);
      else static_cast<uint8_t*>(ybase)[e] = v != 0.0 ? 1 : 0;
    } else {
      for (int i = 0; i < k; ++i)
        if (src[i]) hx[i] = scalar_load(src[i]->dtype(), src[i]->raw(), off[i]);
      scalar_store(y.dtype(), ybase, e, eval_scalar_typed(rule, b, hx.data(), xt.data(), math, y.dtype()));
    }
    for (int d = r - 1; d >= 0; --d) {  // odometer step over the output multi-index
      for (int i = 0; i < k; ++i)
        if (src[i]) off[i] += st[i][d];
      if (++idx[d] < os[d]) break;
      for (int i = 0; i < k; ++i)
        if (src[i]) off[i] -= st[i][d] * os[d];
      idx[d] = 0;
    }
  }
}

bool is_string(const Tensor* t) { return t && t->dtype() == DType::string; }

void copy_tensor(const Tensor& x, Tensor& y) {
  if (x.dtype() == DType::string) {
    y.strings = x.strings;
  } else {
    std::memcpy(y.raw(), x.raw(), x.nbytes());
  }
}

// Cast to and from string (ONNX Cast): a float is written with 8 significant digits (printf's
// %.8g, as onnxruntime writes float32 and float64 alike), NaN / INF / -INF as the spec spells
// them; integers in decimal, bool as 1 / 0. A string is read in full as a decimal
// number (strtod / strtoll: "inf", "NaN", "1e-3" too) and converted like a float64 / int64
// value would be; anything else is an Error naming the string.
void cast_strings(const Node& n, const Tensor& x, Tensor& y) {
  if (y.dtype() == DType::string) {
    if (dtype_is_small(x.dtype())) throw Error("ref", n.label() + ": Cast of " + dtype_name(x.dtype()) + " to string is not supported");
    for (int64_t i = 0; i < x.numel(); ++i) {
      std::string& o = y.strings[static_cast<size_t>(i)];
      if (dtype_is_integral(x.dtype())) {
        o = dtype_is_unsigned(x.dtype()) ? std::to_string(static_cast<uint64_t>(x.get_int(i))) : std::to_string(x.get_int(i));
        continue;
      }
      const double v = x.get(i);
      if (std::isnan(v)) o = "NaN";
      else if (std::isinf(v)) o = v > 0 ? "INF" : "-INF";
      else {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.8g", v);
        o = buf;
      }
    }
    return;
  }
  if (dtype_is_small(y.dtype())) throw Error("ref", n.label() + ": Cast of string to " + dtype_name(y.dtype()) + " is not supported");
  for (int64_t i = 0; i < x.numel(); ++i) {
    const std::string& s = x.strings[static_cast<size_t>(i)];
    const char* b = s.c_str();
    char* end = nullptr;
    HostScalar v;
    DType from;
    if (dtype_is_float(y.dtype()) || y.dtype() == DType::boolean) {
      v.f = std::strtod(b, &end), from = DType::f64;
    } else if (dtype_is_unsigned(y.dtype())) {
      v.i = static_cast<int64_t>(std::strtoull(b, &end, 10)), from = DType::u64;
    } else {
      v.i = std::strtoll(b, &end, 10), from = DType::i64;
    }
    while (end && *end && std::isspace(static_cast<unsigned char>(*end))) ++end;
    if (s.empty() || end == b || !end || *end || std::strlen(b) != s.size())
      throw Error("ref", n.label() + ": cannot read '" + printable(s) + "' as " + dtype_name(y.dtype()));
    scalar_store(y.dtype(), y.raw(), i, scalar_convert(v, from, y.dtype()));
  }
}

// Cast/CastLike: the rule is the identity; the conversion to the output dtype is the cast
// (ir/scalar.h: float -> int truncates and saturates, ints wrap, -> bool is != 0).
void cast_reference(const ScalarRule& rule, const Node& n, const std::vector<const Tensor*>& in,
                    std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  Tensor& y = out[0];
  if (x.dtype() == y.dtype()) return copy_tensor(x, y);
  if (is_string(&x) || y.dtype() == DType::string) return cast_strings(n, x, y);
  if (dtype_is_small(x.dtype()) || dtype_is_small(y.dtype())) {
    // Conversions to the small floats honour saturate (opset 19) and round_mode (opset 24,
    // float8e8m0 only); these nodes are never fused (ir/fusion.cpp), so only ref runs them.
    const bool saturate = n.attr_i("saturate", 1) != 0;
    const E8M0Round mode = e8m0_round_mode(n.attr_s("round_mode", "up"), n.label());
    for (int64_t i = 0; i < y.numel(); ++i)
      scalar_store(y.dtype(), y.raw(), i, scalar_convert_cast(scalar_load(x.dtype(), x.raw(), i), x.dtype(), y.dtype(), saturate, mode));
    return;
  }
  std::vector<bool> use(in.size(), false);
  use[0] = true;
  elementwise_loop(rule, n, in, y, use);
}

// ---- registration ---------------------------------------------------------------------------

using EvalFn = double (*)(const double*, const double*, bool);

// Defines an eval function from one expression over x[], p[] (params) and int_math.
#define FZ_EVAL(body)                                             \
  [](const double* x, const double* p, bool int_math) -> double { \
    (void)x;                                                      \
    (void)p;                                                      \
    (void)int_math;                                               \
    return (body);                                                \
  }
// The integer twin over int64-held operands (uns: unsigned math dtype).
#define FZ_IEVAL(body)                                         \
  [](const int64_t* x, const double* p, bool uns) -> int64_t { \
    (void)x;                                                   \
    (void)p;                                                   \
    (void)uns;                                                 \
    return (body);                                             \
  }
using IEvalFn = int64_t (*)(const int64_t*, const double*, bool);
ScalarRule with_int(ScalarRule r, IEvalFn f) {
  r.ieval = f;
  return r;
}

ScalarRule rule(const char* expr, EvalFn eval, std::vector<std::pair<std::string, double>> params = {},
                bool float_only = false) {
  ScalarRule r;
  r.expr = expr;
  r.eval = eval;
  r.params = std::move(params);
  r.float_only = float_only;
  return r;
}
ScalarRule unary_float(const char* expr, EvalFn eval, std::vector<std::pair<std::string, double>> params = {}) {
  return rule(expr, eval, std::move(params), true);
}

// Replaces input `slot` of node `index` by a Reshape of it to `target` and runs the node with
// opset-7 (NumPy) broadcasting; for the legacy broadcasting rules below.
void reshape_operand(Graph& g, size_t index, int slot, const Shape& target) {
  const Node n = g.nodes[index];
  Tensor shape(DType::i64, {static_cast<int64_t>(target.size())});
  for (size_t i = 0; i < target.size(); ++i) shape.set_int(static_cast<int64_t>(i), target[i]);
  const DType dtype = g.values[n.inputs[slot]].dtype;
  const int shape_id = g.add_constant(g.unique_name(n.name + "/legacy_shape"), std::move(shape));
  const int reshaped = g.add_value(g.unique_name(n.name + "/legacy_operand"), dtype);
  Node r;
  r.name = n.name + "/legacy_reshape";
  r.op_type = "Reshape";
  r.opset = 13;
  r.inputs = {n.inputs[slot], shape_id};
  r.outputs = {reshaped};
  Node m = n;
  m.opset = 7;
  m.inputs[slot] = reshaped;
  m.attrs.erase("broadcast");
  m.attrs.erase("axis");
  g.nodes[index] = std::move(m);
  g.nodes.insert(g.nodes.begin() + static_cast<std::ptrdiff_t>(index), std::move(r));
  g.reindex_producers();
}

// Broadcasting before opset 7 (ONNX Changelog, Add-1/6 etc.): with broadcast=1, B's dims align
// with A's starting at 'axis' (default: the trailing alignment, which is NumPy's); PRelu's
// rank-1 slope of X's channel count applied per channel (axis 1, as in Caffe2 and the models
// PyTorch exported then). Both become a Reshape of the operand to A's rank with trailing 1s.
bool legacy_broadcast_expand(Graph& g, size_t index) {
  const Node& n = g.nodes[index];
  if (n.opset >= 7 || n.inputs.size() != 2 || n.inputs[0] < 0 || n.inputs[1] < 0) return false;
  const Value& a = g.values[n.inputs[0]];
  const Value& b = g.values[n.inputs[1]];
  if (!a.shape_known || !b.shape_known) return false;
  const int64_t ra = static_cast<int64_t>(a.shape.size()), rb = static_cast<int64_t>(b.shape.size());
  int64_t axis = -1;
  if (n.op_type == "PRelu") {
    if (ra >= 3 && rb == 1 && b.shape[0] != 1 && b.shape[0] == a.shape[1]) axis = 1;
  } else if (n.attr_i("broadcast", 0) != 0 && n.has_attr("axis")) {
    axis = normalize_axis(n.attr_i("axis", 0), ra, n.label());
    if (axis + rb > ra) throw Error("shape", n.label() + ": legacy broadcast of rank " + std::to_string(rb) +
                                                 " at axis " + std::to_string(axis) + " exceeds A's rank " + std::to_string(ra));
  }
  if (axis < 0 || axis + rb == ra) return false;  // NumPy's trailing alignment already
  Shape target = b.shape;
  target.resize(static_cast<size_t>(ra - axis), 1);
  reshape_operand(g, index, 1, target);
  return true;
}

// check: an op's own shape rule on top of the element-wise one (SwiGLU: no broadcasting).
void add(const char* name, int min_in, int max_in, Typing typing, ScalarRule r, std::function<void(InferContext&)> check = nullptr) {
  OpDef d;
  d.name = name;
  d.min_inputs = min_in;
  d.max_inputs = max_in;
  const bool float_only = r.float_only, numeric_only = r.int_in_f64;
  const auto resolve = r.resolve_params;
  d.infer = [typing, float_only, numeric_only, resolve, check, np = r.params.size()](InferContext& ctx) {
    if (check) check(ctx);
    infer_elementwise(ctx, typing, float_only, numeric_only);
    if (resolve) {  // rejects bad string attributes (Gelu's 'approximate') at shape time
      std::vector<double> v(np);
      resolve(ctx.node(), v.data());
    }
  };
  if (typing == Typing::cast || typing == Typing::castlike) {
    d.reference = [r](const Node& n, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
      cast_reference(r, n, in, out);
    };
  } else if (std::string(name) == "Identity") {
    d.reference = [](const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
      copy_tensor(*in[0], out[0]);
    };
  } else {
    d.reference = [r](const Node& n, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
      if (is_string(in[0]) && n.op_type == "Equal") {  // Equal-19 compares strings byte for byte
        op_helpers::broadcast_pairs(*in[0], *in[1], out[0].shape(), [&](int64_t o, int64_t a, int64_t b) {
          out[0].set_int(o, in[0]->strings[static_cast<size_t>(a)] == in[1]->strings[static_cast<size_t>(b)] ? 1 : 0);
        });
        return;
      }
      if (in.size() == 3 && is_string(in[1]) && n.op_type == "Where") {  // Where-16 selects strings
        // (condition, X) broadcast pairwise into the output, then Y by the same walk.
        std::vector<size_t> from_x(static_cast<size_t>(out[0].numel()));
        op_helpers::broadcast_pairs(*in[0], *in[1], out[0].shape(), [&](int64_t o, int64_t c, int64_t x) {
          from_x[static_cast<size_t>(o)] = in[0]->get_int(c) != 0 ? static_cast<size_t>(x) + 1 : 0;
        });
        op_helpers::broadcast_pairs(*in[2], *in[2], out[0].shape(), [&](int64_t o, int64_t y, int64_t) {
          const size_t x = from_x[static_cast<size_t>(o)];
          out[0].strings[static_cast<size_t>(o)] = x ? in[1]->strings[x - 1] : in[2]->strings[static_cast<size_t>(y)];
        });
        return;
      }
      for (auto* t : in)
        if (is_string(t)) throw Unsupported("ref", n.label() + ": string tensors are not supported");
      elementwise_loop(r, n, in, out[0], std::vector<bool>(in.size(), true));
    };
  }
  // Strings, where the type constraints allow them: Identity copies them, Equal compares them,
  // Where selects them, Cast / CastLike convert (cast_reference).
  const std::string nm = name;
  d.strings = nm == "Identity" || nm == "Equal" || nm == "Where" || typing == Typing::cast || typing == Typing::castlike;
  if (max_in == 2) d.expand = legacy_broadcast_expand;
  d.scalar = std::move(r);
  register_op(std::move(d));
}

// Gelu's 'approximate' is a string: "tanh" selects the tanh form through param approximate_tanh.
void gelu_params(const Node& n, double* v) {
  const std::string a = n.attr_s("approximate", "none");
  if (a != "none" && a != "tanh") throw Error("shape", n.label() + ": unknown approximate='" + a + "'");
  v[0] = a == "tanh" ? 1.0 : 0.0;
}
// BitShift's direction is a required string: "LEFT" or "RIGHT".
void bitshift_params(const Node& n, double* v) {
  const std::string d = n.attr_s("direction", "");
  if (d != "LEFT" && d != "RIGHT") throw Error("shape", n.label() + ": direction must be \"LEFT\" or \"RIGHT\", got '" + printable(d) + "'");
  v[0] = d == "RIGHT" ? 1.0 : 0.0;
}
// Clip: omitted min/max are unbounded; before opset 11 they are attributes whose defaults are
// the float32 range (Clip-6).
double clip_absent(const Node& n, int i) {
  if (n.opset < 11) return i == 1 ? n.attr_f("min", -kFltMax) : n.attr_f("max", kFltMax);
  return i == 1 ? -kInf : kInf;
}

}  // namespace

void register_elementwise_ops() {
  // Arithmetic.
  {
    ScalarRule r = with_int(rule("{0} + {1}", FZ_EVAL(x[0] + x[1])), FZ_IEVAL(iadd(x[0], x[1])));
    r.int_expr = "fz_iadd({0}, {1})";  // wraps: C/C++ signed overflow is undefined
    add("Add", 2, 2, Typing::same, r);
  }
  {
    ScalarRule r = with_int(rule("{0} - {1}", FZ_EVAL(x[0] - x[1])), FZ_IEVAL(isub(x[0], x[1])));
    r.int_expr = "fz_isub({0}, {1})";  // wraps: C/C++ signed overflow is undefined
    add("Sub", 2, 2, Typing::same, r);
  }
  {
    ScalarRule r = with_int(rule("{0} * {1}", FZ_EVAL(x[0] * x[1])), FZ_IEVAL(imul(x[0], x[1])));
    r.int_expr = "fz_imul({0}, {1})";  // wraps: C/C++ signed overflow is undefined
    add("Mul", 2, 2, Typing::same, r);
  }
  {
    ScalarRule r = with_int(rule("fz_div({0}, {1})", FZ_EVAL(x[0] / x[1])), FZ_IEVAL(idiv(x[0], x[1], uns)));
    r.int_expr = "fz_idiv({0}, {1})";  // truncates toward zero; x / 0 = 0
    r.divisor = 1;
    add("Div", 2, 2, Typing::same, r);
  }
  {
    ScalarRule r = with_int(rule("pow({0}, {1})", FZ_EVAL(std::pow(x[0], x[1]))), FZ_IEVAL(ipow(x[0], x[1], uns)));
    r.int_expr = "fz_ipow({0}, {1})";  // integer base and exponent: exact, wrapping
    r.float_exponent = true;           // an integer base with a float exponent: eval_scalar_typed
    add("Pow", 2, 2, Typing::pow, r);
  }
  // fmod=0: sign of the divisor, as Python's % (floats from opset 28, Mod-28's special cases);
  // fmod=1: sign of the dividend.
  {
    ScalarRule r = with_int(rule("({fmod} != 0.0f ? fz_fmod({0}, {1}) : fz_fmod_floor({0}, {1}))",
                                 FZ_EVAL(p[0] != 0 ? std::fmod(x[0], x[1]) : fmod_floor(x[0], x[1])), {{"fmod", 0}}),
                            FZ_IEVAL(imod(x[0], x[1], p[0] != 0, uns)));
    r.int_expr = "({fmod} != 0.0f ? fz_ifmod({0}, {1}) : fz_imod({0}, {1}))";
    add("Mod", 2, 2, Typing::same, r);
  }
  {
    ScalarRule r = with_int(rule("(-{0})", FZ_EVAL(-x[0])), FZ_IEVAL(isub(0, x[0])));
    r.int_expr = "fz_ineg({0})";  // -MIN wraps to MIN
    add("Neg", 1, 1, Typing::same, r);
  }
  add("Abs", 1, 1, Typing::same,
      with_int(rule("abs({0})", FZ_EVAL(std::fabs(x[0]))), FZ_IEVAL(uns || x[0] >= 0 ? x[0] : isub(0, x[0]))));
  add("Sign", 1, 1, Typing::same, with_int(rule("fz_sign({0})", FZ_EVAL(sign_of(x[0]))), FZ_IEVAL(isign(x[0], uns))));
  add("Reciprocal", 1, 1, Typing::same, unary_float("fz_div(1.0f, {0})", FZ_EVAL(1.0 / x[0])));
  add("Identity", 1, 1, Typing::same, with_int(rule("{0}", FZ_EVAL(x[0])), FZ_IEVAL(x[0])));

  // Activations. Comparisons are false for NaN, so NaN flows through the "else" branches.
  add("Relu", 1, 1, Typing::same, with_int(rule("fz_max({0}, 0.0f)", FZ_EVAL(nan_max(x[0], 0.0))), FZ_IEVAL(imax(x[0], 0, uns))));
  add("LeakyRelu", 1, 1, Typing::same,
      unary_float("({0} < 0.0f ? {alpha} * {0} : {0})", FZ_EVAL(x[0] < 0 ? p[0] * x[0] : x[0]), {{"alpha", 0.01}}));
  {
    ScalarRule r = with_int(rule("({0} < 0.0f ? {1} * {0} : {0})", FZ_EVAL(x[0] < 0 ? x[1] * x[0] : x[0])),
                            FZ_IEVAL(!uns && x[0] < 0 ? imul(x[1], x[0]) : x[0]));
    r.int_expr = "({0} < 0.0f ? fz_imul({1}, {0}) : {0})";
    add("PRelu", 2, 2, Typing::prelu, r);
  }
  add("Elu", 1, 1, Typing::same,
      unary_float("({0} < 0.0f ? {alpha} * fz_expm1({0}) : {0})", FZ_EVAL(x[0] < 0 ? p[0] * std::expm1(x[0]) : x[0]),
                  {{"alpha", 1.0}}));
  add("Selu", 1, 1, Typing::same,
      unary_float("({0} <= 0.0f ? {gamma} * ({alpha} * fz_expm1({0})) : {gamma} * {0})",
                  FZ_EVAL(x[0] <= 0 ? p[1] * (p[0] * std::expm1(x[0])) : p[1] * x[0]),
                  {{"alpha", 1.67326319217681884765625}, {"gamma", 1.05070102214813232421875}}));
  add("Celu", 1, 1, Typing::same,
      unary_float("fz_max(0.0f, {0}) + fz_min(0.0f, {alpha} * fz_expm1(fz_div({0}, {alpha})))",
                  FZ_EVAL(nan_max(0.0, x[0]) + nan_min(0.0, p[0] * std::expm1(x[0] / p[0]))), {{"alpha", 1.0}}));
  add("ThresholdedRelu", 1, 1, Typing::same,
      unary_float("({0} > {alpha} ? {0} : 0.0f)", FZ_EVAL(x[0] > p[0] ? x[0] : 0.0), {{"alpha", 1.0}}));
  // exp(x) / (1 + exp(x)) below 0: 1 / (1 + exp(-x)) gave 0 past x = -88.7, where exp(-x)
  // overflows fp32 and the answer is a subnormal.
  add("Sigmoid", 1, 1, Typing::same,
      unary_float("({0} < 0.0f ? fz_div(exp({0}), 1.0f + exp({0})) : fz_div(1.0f, 1.0f + exp(-{0})))",
                  FZ_EVAL(1.0 / (1.0 + std::exp(-x[0])))));
  add("HardSigmoid", 1, 1, Typing::same,
      unary_float("fz_max(0.0f, fz_min(1.0f, {alpha} * {0} + {beta}))",
                  FZ_EVAL(nan_max(0.0, nan_min(1.0, p[0] * x[0] + p[1]))), {{"alpha", 0.2}, {"beta", 0.5}}));
  add("HardSwish", 1, 1, Typing::same,
      unary_float("{0} * fz_max(0.0f, fz_min(1.0f, {0} * 0.16666666666666667f + 0.5f))",
                  FZ_EVAL(x[0] * nan_max(0.0, nan_min(1.0, x[0] / 6.0 + 0.5)))));
  {
    // Shrink-9: x + bias below -lambd, x - bias above lambd, 0 between; every numeric type
    // (integers through float64, ScalarRule::int_in_f64).
    ScalarRule r = unary_float("({0} < -{lambd} ? {0} + {bias} : ({0} > {lambd} ? {0} - {bias} : 0.0f))",
                               FZ_EVAL(x[0] < -p[0] ? x[0] + p[1] : (x[0] > p[0] ? x[0] - p[1] : 0.0)),
                               {{"lambd", 0.5}, {"bias", 0.0}});
    r.float_only = false;
    r.int_in_f64 = true;
    add("Shrink", 1, 1, Typing::same, r);
  }
  // Softplus = log(1 + exp(x)), written max(x, 0) + log(1 + exp(-|x|)) so large x cannot overflow.
  add("Softplus", 1, 1, Typing::same,
      unary_float("(fz_max({0}, 0.0f) + fz_log1p(exp(-abs({0}))))", FZ_EVAL(softplus(x[0]))));
  add("Softsign", 1, 1, Typing::same, unary_float("fz_div({0}, 1.0f + abs({0}))", FZ_EVAL(x[0] / (1.0 + std::fabs(x[0])))));
  // Swish-24: x * sigmoid(alpha * x); SwiGLU-28: Swish(a) * b (the gate a, the value b). The
  // sigmoid split as Sigmoid's, so far below 0 the product reaches the subnormals (x / (1 +
  // exp(-alpha x)) is x / inf = -0 there); past alpha x = -80 (1 + exp = 1) as (x e) e with
  // e = exp(alpha x / 2), normal, so only the last product rounds into the subnormals.
  const std::string swish =
      "({alpha} * {0} < -80.0f ? ({0} * exp(0.5f * ({alpha} * {0}))) * exp(0.5f * ({alpha} * {0}))"
      " : {alpha} * {0} < 0.0f ? {0} * fz_div(exp({alpha} * {0}), 1.0f + exp({alpha} * {0}))"
      " : fz_div({0}, 1.0f + exp(-{alpha} * {0})))";
  add("Swish", 1, 1, Typing::same,
      unary_float(swish.c_str(), FZ_EVAL(x[0] / (1.0 + std::exp(-p[0] * x[0]))), {{"alpha", 1.0}}));
  add("SwiGLU", 2, 2, Typing::same,
      unary_float((swish + " * {1}").c_str(), FZ_EVAL(x[0] / (1.0 + std::exp(-p[0] * x[0])) * x[1]),
                  {{"alpha", 1.0}}),
      [](InferContext& ctx) {  // SwiGLU-28: A and B of one shape, no broadcasting
        if (ctx.shape(0) != ctx.shape(1))
          ctx.fail("A and B must have the same shape (SwiGLU does not broadcast), got " + shape_str(ctx.shape(0)) + " and " +
                   shape_str(ctx.shape(1)));
      });
  add("Mish", 1, 1, Typing::same,
      unary_float("{0} * tanh(fz_max({0}, 0.0f) + fz_log1p(exp(-abs({0}))))",
                  FZ_EVAL(x[0] * std::tanh(softplus(x[0])))));
  {
    // Gelu-20: erf form 0.5x(1 + erf(x / sqrt 2)) = x Phi(x) = 0.5x erfc(-x / sqrt 2), or with
    // approximate="tanh" 0.5x(1 + tanh(z)) = x sigmoid(2z), z = sqrt(2/pi)(x + 0.044715x^3).
    // Evaluated without the 1 + erf / 1 + tanh cancellation below 0 (the helpers fz_gelu,
    // fz_gelu_tanh in each dialect): Gelu(-6) is -5.9e-9, not -0.
    ScalarRule r = unary_float("({approximate_tanh} != 0.0f ? fz_gelu_tanh({0}) : fz_gelu({0}))",
                               FZ_EVAL(p[0] != 0 ? gelu_tanh(x[0]) : gelu_erf(x[0])),
                               {{"approximate_tanh", 0}});
    r.resolve_params = gelu_params;
    add("Gelu", 1, 1, Typing::same, r);
  }
  {
    ScalarRule r = with_int(rule("fz_min(fz_max({0}, {1}), {2})", FZ_EVAL(nan_min(nan_max(x[0], x[1]), x[2]))),
                            FZ_IEVAL(imin(imax(x[0], x[1], uns), x[2], uns)));
    r.absent_operand = clip_absent;
    add("Clip", 1, 3, Typing::clip, r);
  }

  // Transcendentals and rounding (float only).
  add("Tanh", 1, 1, Typing::same, unary_float("tanh({0})", FZ_EVAL(std::tanh(x[0]))));
  add("Exp", 1, 1, Typing::same, unary_float("exp({0})", FZ_EVAL(std::exp(x[0]))));
  add("Log", 1, 1, Typing::same, unary_float("log({0})", FZ_EVAL(std::log(x[0]))));
  add("Sqrt", 1, 1, Typing::same, unary_float("sqrt({0})", FZ_EVAL(std::sqrt(x[0]))));
  add("Erf", 1, 1, Typing::same, unary_float("erf({0})", FZ_EVAL(std::erf(x[0]))));
  add("Sin", 1, 1, Typing::same, unary_float("sin({0})", FZ_EVAL(std::sin(x[0]))));
  add("Cos", 1, 1, Typing::same, unary_float("cos({0})", FZ_EVAL(std::cos(x[0]))));
  add("Tan", 1, 1, Typing::same, unary_float("tan({0})", FZ_EVAL(std::tan(x[0]))));
  add("Asin", 1, 1, Typing::same, unary_float("asin({0})", FZ_EVAL(std::asin(x[0]))));
  add("Acos", 1, 1, Typing::same, unary_float("acos({0})", FZ_EVAL(std::acos(x[0]))));
  add("Atan", 1, 1, Typing::same, unary_float("atan({0})", FZ_EVAL(std::atan(x[0]))));
  add("Sinh", 1, 1, Typing::same, unary_float("sinh({0})", FZ_EVAL(std::sinh(x[0]))));
  add("Cosh", 1, 1, Typing::same, unary_float("cosh({0})", FZ_EVAL(std::cosh(x[0]))));
  add("Asinh", 1, 1, Typing::same, unary_float("asinh({0})", FZ_EVAL(std::asinh(x[0]))));
  add("Acosh", 1, 1, Typing::same, unary_float("acosh({0})", FZ_EVAL(std::acosh(x[0]))));
  add("Atanh", 1, 1, Typing::same, unary_float("atanh({0})", FZ_EVAL(std::atanh(x[0]))));
  add("Floor", 1, 1, Typing::same, unary_float("floor({0})", FZ_EVAL(std::floor(x[0]))));
  add("Ceil", 1, 1, Typing::same, unary_float("ceil({0})", FZ_EVAL(std::ceil(x[0]))));
  add("Round", 1, 1, Typing::same, unary_float("fz_round_even({0})", FZ_EVAL(round_even(x[0]))));

  // Variadic (1..N operands, folded left; Max/Min propagate NaN).
  {
    ScalarRule r = with_int(rule("{0} + {1}", FZ_EVAL(x[0] + x[1])), FZ_IEVAL(iadd(x[0], x[1])));
    r.int_expr = "fz_iadd({0}, {1})";
    r.variadic = true;
    add("Sum", 1, 1 << 16, Typing::same, r);
    r.mean = true;
    r.float_only = true;
    r.ieval = nullptr;
    add("Mean", 1, 1 << 16, Typing::same, r);
    ScalarRule mx = with_int(rule("fz_max({0}, {1})", FZ_EVAL(nan_max(x[0], x[1]))), FZ_IEVAL(imax(x[0], x[1], uns)));
    mx.variadic = true;
    add("Max", 1, 1 << 16, Typing::same, mx);
    ScalarRule mn = with_int(rule("fz_min({0}, {1})", FZ_EVAL(nan_min(x[0], x[1]))), FZ_IEVAL(imin(x[0], x[1], uns)));
    mn.variadic = true;
    add("Min", 1, 1 << 16, Typing::same, mn);
  }

  // Selection, comparison and logic (bools are 0/1 inside expressions).
  {
    ScalarRule r = with_int(rule("({0} != 0.0f ? {1} : {2})", FZ_EVAL(x[0] != 0 ? x[1] : x[2])), FZ_IEVAL(x[0] != 0 ? x[1] : x[2]));
    r.math_operand = 1;  // computes in X's dtype; the bool condition converts to it
    add("Where", 3, 3, Typing::where, r);
  }
  add("Equal", 2, 2, Typing::compare,
      with_int(rule("({0} == {1} ? 1.0f : 0.0f)", FZ_EVAL(x[0] == x[1] ? 1.0 : 0.0)), FZ_IEVAL(x[0] == x[1])));
  add("Less", 2, 2, Typing::compare,
      with_int(rule("({0} < {1} ? 1.0f : 0.0f)", FZ_EVAL(x[0] < x[1] ? 1.0 : 0.0)), FZ_IEVAL(iless(x[0], x[1], uns))));
  add("LessOrEqual", 2, 2, Typing::compare,
      with_int(rule("({0} <= {1} ? 1.0f : 0.0f)", FZ_EVAL(x[0] <= x[1] ? 1.0 : 0.0)), FZ_IEVAL(!iless(x[1], x[0], uns))));
  add("Greater", 2, 2, Typing::compare,
      with_int(rule("({0} > {1} ? 1.0f : 0.0f)", FZ_EVAL(x[0] > x[1] ? 1.0 : 0.0)), FZ_IEVAL(iless(x[1], x[0], uns))));
  add("GreaterOrEqual", 2, 2, Typing::compare,
      with_int(rule("({0} >= {1} ? 1.0f : 0.0f)", FZ_EVAL(x[0] >= x[1] ? 1.0 : 0.0)), FZ_IEVAL(!iless(x[0], x[1], uns))));
  add("Not", 1, 1, Typing::logic, with_int(rule("(1.0f - {0})", FZ_EVAL(x[0] == 0 ? 1.0 : 0.0)), FZ_IEVAL(x[0] == 0)));
  add("And", 2, 2, Typing::logic,
      with_int(rule("{0} * {1}", FZ_EVAL((x[0] != 0 && x[1] != 0) ? 1.0 : 0.0)), FZ_IEVAL(x[0] != 0 && x[1] != 0)));
  add("Or", 2, 2, Typing::logic,
      with_int(rule("fz_max({0}, {1})", FZ_EVAL((x[0] != 0 || x[1] != 0) ? 1.0 : 0.0)), FZ_IEVAL(x[0] != 0 || x[1] != 0)));
  add("Xor", 2, 2, Typing::logic,
      with_int(rule("({0} != {1} ? 1.0f : 0.0f)", FZ_EVAL(((x[0] != 0) != (x[1] != 0)) ? 1.0 : 0.0)),
               FZ_IEVAL((x[0] != 0) != (x[1] != 0))));
  add("IsNaN", 1, 1, Typing::predicate, unary_float("fz_isnan({0})", FZ_EVAL(std::isnan(x[0]) ? 1.0 : 0.0)));
  add("IsInf", 1, 1, Typing::predicate,
      unary_float("(fz_isinf({0}) * ({0} > 0.0f ? {detect_positive} : {detect_negative}))",
                  FZ_EVAL(std::isinf(x[0]) ? (x[0] > 0 ? p[0] : p[1]) : 0.0),
                  {{"detect_positive", 1}, {"detect_negative", 1}}));

  // Bitwise ops (integers only: the float expr is never printed, the typing refuses floats).
  {
    ScalarRule a = with_int(rule("{0}", FZ_EVAL(x[0])), FZ_IEVAL(x[0] & x[1]));
    a.int_expr = "({0} & {1})";
    add("BitwiseAnd", 2, 2, Typing::bitwise, a);
    ScalarRule o = with_int(rule("{0}", FZ_EVAL(x[0])), FZ_IEVAL(x[0] | x[1]));
    o.int_expr = "({0} | {1})";
    add("BitwiseOr", 2, 2, Typing::bitwise, o);
    ScalarRule x_ = with_int(rule("{0}", FZ_EVAL(x[0])), FZ_IEVAL(x[0] ^ x[1]));
    x_.int_expr = "({0} ^ {1})";
    add("BitwiseXor", 2, 2, Typing::bitwise, x_);
    ScalarRule nt = with_int(rule("{0}", FZ_EVAL(x[0])), FZ_IEVAL(~x[0]));
    nt.int_expr = "(~{0})";  // the emitters' wrap to the dtype clears the bits above it
    add("BitwiseNot", 1, 1, Typing::bitwise, nt);
    // direction: 0 LEFT, 1 RIGHT (a string attribute, resolved to a param).
    ScalarRule sh = with_int(rule("{0}", FZ_EVAL(x[0]), {{"direction", 0}}), FZ_IEVAL(ishift(x[0], x[1], p[0] != 0, uns)));
    sh.int_expr = "({direction} != 0.0f ? fz_ishr({0}, {1}) : fz_ishl({0}, {1}))";
    sh.resolve_params = bitshift_params;
    add("BitShift", 2, 2, Typing::shift, sh);
  }

  // Conversions: the identity in the source dtype; converting the result to the output dtype
  // is the cast (ir/scalar.h rules, printed by each emitter's conversion).
  {
    ScalarRule r = with_int(rule("{0}", FZ_EVAL(x[0])), FZ_IEVAL(x[0]));
    add("Cast", 1, 1, Typing::cast, r);
    add("CastLike", 2, 2, Typing::castlike, r);
  }
}

#undef FZ_EVAL
#undef FZ_IEVAL

}  // namespace fusor
