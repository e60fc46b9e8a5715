// The GLSL helper functions every Vulkan kernel's prelude carries (VulkanDialect::prelude):
// the fz_* vocabulary of the op table, the correctly rounded division, and the fp16 / bf16
// conversions. Split from vk_dialect.cpp (past 1,000 lines) along that seam.
#include "backends/vulkan/vk_glsl_helpers.h"

namespace fusor::vk {

namespace {

// The fz_* vocabulary of ir/ops/elementwise.cpp plus GLSL's missing/undefined intrinsics.
// NaN tests look at the bits: drivers may fold isnan() away without the NaN-preserve mode.
constexpr const char* kHelpers = R"(float fz_inf() { return uintBitsToFloat(0x7f800000u); }
float fz_nan() { return uintBitsToFloat(0x7fc00000u); }
bool fz_nan_b(float x) { return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u; }
bool fz_inf_b(float x) { return (floatBitsToUint(x) & 0x7fffffffu) == 0x7f800000u; }
// A compare and a select, not max / min: those may return either zero of +0 and -0; ties give
// b, as ref (ir/ops/elementwise.cpp nan_max / nan_min).
float fz_max(float a, float b) { return (fz_nan_b(a) || fz_nan_b(b)) ? fz_nan() : (a > b ? a : b); }
float fz_min(float a, float b) { return (fz_nan_b(a) || fz_nan_b(b)) ? fz_nan() : (a < b ? a : b); }
float fz_round_even(float x) { return roundEven(x); }
float fz_sign(float x) { return fz_nan_b(x) ? x : sign(x); }
float fz_isnan(float x) { return fz_nan_b(x) ? 1.0f : 0.0f; }
float fz_isinf(float x) { return fz_inf_b(x) ? 1.0f : 0.0f; }
// frexp from the bits, for finite nonzero x: lavapipe's frexp of a subnormal gave a wrong
// mantissa (fz_div(1.4e-45, 3) was 1.96e-39).
float fz_frexp(float x, out int e) {
  uint b = floatBitsToUint(x), ex = (b >> 23) & 0xffu, m = b & 0x7fffffu;
  if (ex == 0u) {
    int p = findMSB(m);
    e = p - 148;
    return uintBitsToFloat((b & 0x80000000u) | 0x3f000000u | ((m << uint(23 - p)) & 0x7fffffu));
  }
  e = int(ex) - 126;
  return uintBitsToFloat((b & 0x807fffffu) | 0x3f000000u);
}
// C fmodf, exact, in integers: |a| = Ma 2^ea, |b| = Mb 2^eb (24-bit mantissas, subnormals
// included), and Ma 2^(ea - eb) mod Mb by shifts of at most 8 bits (r << 8 < 2^32); r 2^eb is a
// float. No float ldexp of a subnormal: NVIDIA's gave fmod(3e38, 1.4e-45) = 3e38.
uint fz_mant24(float x, out int e) {  // |x| = m 2^e, x finite nonzero
  uint b = floatBitsToUint(x), ex = (b >> 23) & 0xffu, m = b & 0x7fffffu;
  e = ex == 0u ? -149 : int(ex) - 150;
  return ex == 0u ? m : (m | 0x800000u);
}
float fz_fmod(float a, float b) {
  if (b == 0.0f || fz_inf_b(a) || fz_nan_b(a) || fz_nan_b(b)) return fz_nan();
  if (fz_inf_b(b) || abs(a) < abs(b)) return a;
  int ea, eb;
  uint ma = fz_mant24(a, ea), mb = fz_mant24(b, eb);
  uint r = ma % mb;
  for (int d = ea - eb; d > 0 && r != 0u; d -= 8) {
    int k = min(d, 8);
    r = (r << uint(k)) % mb;
  }
  uint bits = 0u;
  if (r != 0u) {
    int p = findMSB(r), ex = p + eb + 127;  // r 2^eb = 1.f 2^(p + eb)
    bits = ex >= 1 ? (uint(ex) << 23) | ((r << uint(23 - p)) & 0x7fffffu) : r << uint(eb + 149);
  }
  return uintBitsToFloat((floatBitsToUint(a) & 0x80000000u) | bits);
}
// Mod-28 fmod=0: fz_fmod moved to b's sign; a zero result is a zero of b's sign (bits: a -0.0f
// literal may fold to +0).
float fz_fmod_floor(float a, float b) {
  float r = fz_fmod(a, b);
  if (r == 0.0f) return uintBitsToFloat(floatBitsToUint(b) & 0x80000000u);
  return (b < 0.0f) != (r < 0.0f) ? r + b : r;
}
// a / b correctly rounded. Vulkan lets fp32 OpFDiv be 2.5 ulp off (NVIDIA's is), and fma
// need not be fused (an fma-residual version of this helper failed on lavapipe, whose fma
// rounds twice), so the driver's quotient is only a seed, corrected with residuals made exact by Dekker's product (no fma needed): q1 = q0 +
// r0 / y is within one ulp (faithful; r0 = x - q0 y), and then r1 = x - q1 y is exact and
// says on which side of q1's half-ulp neighbours x / y lies (an exact quotient is never a
// tie: it would need 25 significant bits). Markstein, "IA-64 and Elementary Functions" ch. 8
// (correcting a quotient by its residual); Dekker 1971 (exact products without fma).
// fz_div_core needs x, y in [2^-50, 2^50]; fz_div scales other operands to mantissas in
// [0.5, 1), and fixes the second rounding of a subnormal result with the residual's sign. Zero,
// inf and NaN operands pass through "/". FZ_DIV_PERTURB (tests only) offsets q0 by that many ulp.
float fz_div_resid_s(float x, float y, float yh, float yl, float q) {  // y = yh + yl: Dekker's split
  precise float p = q * y;
  precise float cq = 4097.0f * q, qh = cq - (cq - q), ql = q - qh;
  precise float e = ((qh * yh - p) + qh * yl + ql * yh) + ql * yl;  // q y = p + e exactly
  precise float r = (x - p) - e;  // x - p is exact (p is within a factor 2 of x)
  return r;
}
vec2 fz_dekker_split(float y) {
  precise float cy = 4097.0f * y, yh = cy - (cy - y), yl = y - yh;
  return vec2(yh, yl);
}
float fz_div_resid(float x, float y, float q) {
  vec2 s = fz_dekker_split(y);
  return fz_div_resid_s(x, y, s.x, s.y, q);
}
// The last step of fz_div_core: q within one ulp of x / y -> x / y correctly rounded.
float fz_div_pick(float x, float y, float yh, float yl, float q) {
  precise float r = fz_div_resid_s(x, y, yh, yl, q);
  // Half the gap to each neighbour, times y: 2^e(q) y 2^-24 is exact; below a power of two
  // the gap is half as wide.
  precise float h = (uintBitsToFloat(floatBitsToUint(q) & 0x7f800000u) * y) * uintBitsToFloat(0x33800000u);  // 2^-24
  precise float hl = (floatBitsToUint(q) & 0x7fffffu) == 0u ? 0.5f * h : h;
  if (r > h) q = uintBitsToFloat(floatBitsToUint(q) + 1u);
  else if (r < -hl) q = uintBitsToFloat(floatBitsToUint(q) - 1u);
  return q;
}
float fz_div_seed(float q) {
#ifdef FZ_DIV_PERTURB
  q = uintBitsToFloat(uint(int(floatBitsToUint(q)) + FZ_DIV_PERTURB));
#endif
  return q;
}
#if defined(FZ_DIV_PERTURB) && defined(FZ_DIV_RAW)
#define FZ_DIV_SEED_ONLY 1
#endif
float fz_div_core(float x, float y) {
  precise float q = fz_div_seed(x / y);
#ifdef FZ_DIV_SEED_ONLY
  return q;
#endif
  vec2 s = fz_dekker_split(y);
  q = q + fz_div_resid_s(x, y, s.x, s.y, q) / y;
  return fz_div_pick(x, y, s.x, s.y, q);
}
float fz_div(float a, float b) {
  float x = abs(a), y = abs(b);
  uint sg = (floatBitsToUint(a) ^ floatBitsToUint(b)) & 0x80000000u;  // OR-ed in: -1.0 * q could be folded
  if (x >= 8.8817842e-16f && x <= 1.12589991e15f && y >= 8.8817842e-16f && y <= 1.12589991e15f)
    return uintBitsToFloat(sg | floatBitsToUint(fz_div_core(x, y)));
  // Zeros, infinities and NaN spelled out: a driver's a / b may be a * (1 / b), and NVIDIA's
  // 1 / 3.4e38 flushes to 0, so inf / 3.4e38 would be NaN.
  if (fz_nan_b(x) || fz_nan_b(y) || (fz_inf_b(x) && fz_inf_b(y)) || (x == 0.0f && y == 0.0f)) return fz_nan();
  if (fz_inf_b(x) || y == 0.0f) return uintBitsToFloat(sg | 0x7f800000u);
  if (fz_inf_b(y) || x == 0.0f) return uintBitsToFloat(sg);
  int ex, ey;
  float mx = fz_frexp(x, ex), my = fz_frexp(y, ey);
  precise float q = fz_div_core(mx, my);  // in (0.5, 2), correctly rounded
  int e = ex - ey;
  // q 2^e from the bits: a normal result is q with its exponent moved (exact); a subnormal one
  // is rounded here from q's mantissa and the residual's sign (NVIDIA's ldexp into the subnormals
  // truncated: 1.1754942e-38 / 1.5 was one step low).
  uint qb = floatBitsToUint(q);
  int eq = int((qb >> 23) & 0xffu) - 127 + e;  // the result's exponent
  if (eq > 127) return uintBitsToFloat(sg | 0x7f800000u);
  if (eq >= -126) return uintBitsToFloat(sg | (qb & 0x7fffffu) | (uint(eq + 127) << 23));
  int sh = -126 - eq;  // q's mantissa M (24 bits) in units of 2^-149 is M 2^-sh
  if (sh >= 25) return uintBitsToFloat(sg);  // below half the smallest subnormal
  uint m = (qb & 0x7fffffu) | 0x800000u, f = m >> uint(sh), rem = m & ((1u << uint(sh)) - 1u), hf = 1u << uint(sh - 1);
  if (rem > hf) f += 1u;
  else if (rem == hf) {  // a tie of q: the exact quotient lies on the residual's side of q
    float r = fz_div_resid(mx, my, q);
    if (r > 0.0f || (r == 0.0f && (f & 1u) == 1u)) f += 1u;
  }
  return uintBitsToFloat(sg | f);  // f = 2^23 is the smallest normal: the carry is right
}
// fz_div(a, b) for a divisor that many quotients share (Dialect::div_prep_type): fz_div_prep
// makes 1 / |b| correctly rounded (with fz_div) and Dekker's split of |b| once, so each quotient
// needs no division: with r = RN(1 / y), x * r rounded is within 1.5 ulp of x / y (0.5 from the
// product's rounding, < 1 from r's), and fz_div_pick's one-ulp step makes it correctly rounded
// (checked against IEEE fp32 division on 477 M operand pairs, every x mantissa for 33 divisors).
// Operands outside fz_div_core's range go to fz_div.
vec4 fz_div_prep(float b) {
  float y = abs(b);
  vec2 s = fz_dekker_split(y);
  return vec4(b, fz_div(1.0f, y), s.x, s.y);
}
float fz_div_by(float a, vec4 p) {
  float x = abs(a), y = abs(p.x);
  if (!(x >= 8.8817842e-16f && x <= 1.12589991e15f && y >= 8.8817842e-16f && y <= 1.12589991e15f)) return fz_div(a, p.x);
  uint sg = (floatBitsToUint(a) ^ floatBitsToUint(p.x)) & 0x80000000u;
  precise float q = x * p.y;  // IEEE multiplication: no driver seed here
#if defined(FZ_FMA_FUSED) && !defined(FZ_DIV_SEED_ONLY)
  // A fused fma makes the residual exact without Dekker's split: two of Markstein's steps
  // q + (x - q y) r (with r = RN(1 / y), the second from a faithful q, is correctly rounded:
  // Markstein's theorem; one step alone matched IEEE division on 1.2 G operand pairs).
  q = fma(fma(-q, y, x), p.y, q);
  q = fma(fma(-q, y, x), p.y, q);
#elif !defined(FZ_DIV_SEED_ONLY)
  q = fz_div_pick(x, y, p.z, p.w, q);
#endif
  return uintBitsToFloat(sg | floatBitsToUint(q));
}
// sqrt(x) correctly rounded, as IEEE 754 (and ref, CUDA's sqrtf) require: Vulkan lets fp32
// sqrt be about 3 ulp off (it inherits inversesqrt's precision), so the driver's root is a seed.
// One Newton step with the exact residual r = x - s s (Dekker's product, fz_div_resid_s) makes
// it faithful, and the residual of that root says which side of its half-ulp neighbours
// sqrt(x) lies on: with s = M u (u its ulp), r is a multiple of u^2, so sqrt(x) > s + u / 2
// iff r > M u^2 = s u, and sqrt(x) < s - u / 2 iff r <= -s u (-s u / 2 below a power of two);
// a root is never a tie (a midpoint's square has more than 24 bits). Markstein ch. 9; Dekker
// 1971. fz_sqrt_core needs x in [2^-64, 2^64]; fz_sqrt scales other x by 4^k (exact, and every
// root of a float is normal). FZ_DIV_PERTURB (tests only) offsets the seed too.
float fz_sqrt_core(float x) {
  precise float s = fz_div_seed(sqrt(x));
#ifdef FZ_DIV_SEED_ONLY
  return s;
#endif
  vec2 sp = fz_dekker_split(s);
  precise float r = fz_div_resid_s(x, s, sp.x, sp.y, s);
  s = s + r / (2.0f * s);
  sp = fz_dekker_split(s);
  r = fz_div_resid_s(x, s, sp.x, sp.y, s);
  precise float t = s * (uintBitsToFloat(floatBitsToUint(s) & 0x7f800000u) * uintBitsToFloat(0x34000000u));  // s u, exact
  precise float tl = (floatBitsToUint(s) & 0x7fffffu) == 0u ? 0.5f * t : t;
  if (r > t) s = uintBitsToFloat(floatBitsToUint(s) + 1u);
  else if (r <= -tl) s = uintBitsToFloat(floatBitsToUint(s) - 1u);
  return s;
}
float fz_sqrt(float x) {
  if (x >= 5.42101086e-20f && x <= 1.84467441e19f) return fz_sqrt_core(x);
  if (fz_nan_b(x) || x < 0.0f) return fz_nan();
  if (x == 0.0f || fz_inf_b(x)) return x;  // sqrt(-0) = -0
  int e;
  float m = fz_frexp(x, e);  // x = m 2^e, m in [0.5, 1)
  if ((e & 1) != 0) m *= 2.0f, e -= 1;  // exact; m in [0.5, 2)
  return uintBitsToFloat(uint(int(floatBitsToUint(fz_sqrt_core(m))) + ((e / 2) << 23)));
}
// Compensated fp32 sums (the Sum / Mean reductions of row kernels and reductions): s is the
// running sum and c the fp32 sum of every add's exact rounding error (Knuth's TwoSum, no fma,
// no branch), so s + c is within about an ulp of the exact sum whatever the row's length, and
// a constant row's mean is that constant. Ogita, Rump & Oishi, "Accurate Sum and Dot Product"
// (SIAM J. Sci. Comput. 2005), Sum2. A non-finite value or add makes c NaN; s is then the result.
// a + b rounded, and its exact error in e (Knuth's TwoSum: any order of magnitudes).
float fz_two_sum(float a, float b, out float e) {
  precise float t = a + b, z = t - a, r = (a - (t - z)) + (b - z);
  e = r;
  return t;
}
void fz_csum(inout float s, inout float c, float v) {
  float e;
  s = fz_two_sum(s, v, e);
  precise float d = c + e;
  c = d;
}
// (s, c) += (s2, c2), symmetric in the two pairs (both lanes of a shuffle get the same bits).
void fz_csum2(inout float s, inout float c, float s2, float c2) {
  float e;
  s = fz_two_sum(s, s2, e);
  precise float d = (c + c2) + e;
  c = d;
}
float fz_cfin(float s, float c) {
  precise float r = s + c;
  return abs(c) <= 3.40282347e38f ? r : s;
}
// Round to odd before a narrower store: m, an fp32 rounding of a value v, or m's odd neighbour
// towards v, where r has the sign of v - m (0: m is v). Rounded to fp16 / bf16 to nearest even
// after that, v is rounded once (the rule of fz_rto_f32; Boldo & Melquiond 2008).
float fz_odd_toward(float m, float r) {
  uint b = floatBitsToUint(m);
  if (r == 0.0f || (b & 1u) != 0u || fz_nan_b(m) || fz_inf_b(m) || fz_nan_b(r)) return m;
  if ((b & 0x7fffffffu) == 0u) return uintBitsToFloat(r > 0.0f ? 1u : 0x80000001u);
  return uintBitsToFloat((r > 0.0f) == (m > 0.0f) ? b + 1u : b - 1u);
}
float fz_cfin_odd(float s, float c) {
  if (!(abs(c) <= 3.40282347e38f)) return s;
  float e;
  float t = fz_two_sum(s, c, e);
  return fz_odd_toward(t, e);
}
// s - q (p.x + nl), p = fz_div_prep(p.x): exact (an fma, or Dekker's product) but for q nl's
// rounding; nl is the part of a count past 2^24 that p.x, its fp32 rounding, leaves out.
float fz_cresid(float s, float q, vec4 p, float nl) {
#ifdef FZ_FMA_FUSED
  precise float r = fma(-q, p.x, s);
#else
  precise float r = fz_div_resid_s(s, p.x, p.z, p.w, q);
#endif
  precise float r2 = r - q * nl;
  return r2;
}
// The mean (s + c) / (p.x + nl): q = s / n, and the exact residual s - q n plus c corrects it,
// rounded once, so a constant row's mean is exact; odd: rounded to odd (fz_odd_toward) for an
// fp16 / bf16 result. p = fz_div_prep(n), folded on the host: no division in the kernel. s and c
// are scaled by 2^-64 or 2^64 into the range where the residual is exact (no overflow of
// Dekker's split, no underflow of its products), and the mean scaled back. The pair is first
// renormalised (|c| <= ulp(s) / 2): after cancellation s may be 0 and c large.
float fz_cmean(float s, float c, vec4 p, float nl, bool odd) {
  if (!(abs(c) <= 3.40282347e38f)) return fz_div_by(s, p);
  float e;
  s = fz_two_sum(s, c, e);
  c = e;
  precise float k = 1.0f;
  if (abs(s) > 1.2676506e30f) s = s * 5.42101086e-20f, c = c * 5.42101086e-20f, k = 1.84467441e19f;  // 2^100, 2^-64, 2^64
  else if (abs(s) < 8.67361738e-19f) s = s * 1.84467441e19f, c = c * 1.84467441e19f, k = 5.42101086e-20f;  // 2^-60
  precise float q = fz_div_by(s, p);
  precise float m = q + (fz_cresid(s, q, p, nl) + c) * p.y;
  if (odd) m = fz_odd_toward(m, fz_cresid(s, m, p, nl) + c);
  precise float mk = m * k;
  return mk;
}
// A count fz_div_by does not prepare (0, or past 2^50): the division of the rounded sum (two
// roundings; nl, inv unused).
float fz_cmean(float s, float c, float n, float inv, float nl, bool odd) {
  return fz_div(fz_cfin(s, c), n);
}
// exp, log, sin, cos and tan to within 3 ulp, where GLSL's builtins promise (3 + 2|x|) ulp for
// exp and nothing outside [-pi, pi] for sin / cos (lavapipe's cos(3e38) was 1): Cephes' expf /
// logf / sinf / cosf / tanf polynomials, a Cody-Waite ln 2 reduction with an exact first part,
// and Payne-Hanek for sin / cos / tan past pi/4 (below).
// Scales by exact powers of two (2^n products), not ldexp (undefined past the range, and
// NVIDIA's ldexp into subnormals was wrong for fmod).
float fz_pow2i(int n) { return uintBitsToFloat(uint(n + 127) << 23); }  // -126 <= n <= 127
float fz_exp(float x) {
  if (fz_nan_b(x)) return x;
  if (x >= uintBitsToFloat(0x42b17218u)) return fz_inf();  // exp overflows from 88.7228394
  if (x < -103.972084f) return 0.0f;                       // below half the smallest subnormal
  float n = roundEven(x * 1.44269504f);
  float r = fma(n, -0.693359375f, x);  // ln 2 in two parts; n * part 1 is exact
  r = fma(n, 2.12194440e-4f, r);
  float p = fma(1.9875691500e-4f, r, 1.3981999507e-3f);
  p = fma(p, r, 8.3334519073e-3f);
  p = fma(p, r, 4.1665795894e-2f);
  p = fma(p, r, 1.6666665459e-1f);
  p = fma(p, r, 5.0000001201e-1f);
  float e = fma(p, r * r, r) + 1.0f;
  int k = int(n);
  // `precise`: a driver regrouping e * (2 * 2^127) would make inf (as NVIDIA's did for cosh).
  precise float t = k > 127 ? e * 2.0f : (k < -126 ? e * fz_pow2i(k + 64) : e);
  return t * (k > 127 ? fz_pow2i(k - 1) : (k < -126 ? 5.42101086e-20f : fz_pow2i(k)));  // 2^-64: one rounding into subnormals
}
float fz_log(float x) {
  if (fz_nan_b(x) || x < 0.0f) return fz_nan();
  if (x == 0.0f) return -fz_inf();
  if (fz_inf_b(x)) return x;
  int e;
  float m = fz_frexp(x, e);  // x = m 2^e, m in [0.5, 1)
  if (m < 0.707106781f) {
    e -= 1;
    m = m + m - 1.0f;
  } else {
    m = m - 1.0f;
  }
  float z = m * m;
  float y = fma(7.0376836292e-2f, m, -1.1514610310e-1f);
  y = fma(y, m, 1.1676998740e-1f);
  y = fma(y, m, -1.2420140846e-1f);
  y = fma(y, m, 1.4249322787e-1f);
  y = fma(y, m, -1.6668057665e-1f);
  y = fma(y, m, 2.0000714765e-1f);
  y = fma(y, m, -2.4999993993e-1f);
  y = fma(y, m, 3.3333331174e-1f);
  y = y * m * z;
  float fe = float(e);
  y = fma(fe, -2.12194440e-4f, y);
  y = fma(-0.5f, z, y);
  return fma(fe, 0.693359375f, m + y);
}
// x = q pi/2 + r, |r| <= pi/4, q mod 4; x finite. Payne-Hanek in integers for every |x| > pi/4:
// exact whatever |x| and whatever the device does with fma (a one-float pi/2 reduced by fma
// was 2048 ulp off at -9.42 on lavapipe, whose fma rounded twice; the exact three-part float
// reductions lose r next to multiples of pi/2 past ~10^4): |x| = m 2^(E - 158)
// (m the 24-bit mantissa at the top of 32 bits) times 2/pi's first 192 bits, one word each, is
// a 224-bit product p whose binary point is at bit 350 - E; the 64 bits from 2 above it hold q
// and the fraction (2^-62 resolution whatever E).
float fz_rem_pio2f(float x, out int q) {
  float a = abs(x);
  if (a <= 0.785398163f) {
    q = 0;
    return x;
  }
  const uint w[6] = uint[6](0x3c439041u, 0xdb629599u, 0xf534ddc0u, 0xfc2757d1u, 0x4e441529u, 0xa2f9836eu);
  uint b = floatBitsToUint(a), m = (b << 8) | 0x80000000u, p[8];
  uint carry = 0u;
  for (int i = 0; i < 6; ++i) {
    uint hi, lo;
    umulExtended(m, w[i], hi, lo);
    uint c;
    p[i] = uaddCarry(lo, carry, c);
    carry = hi + c;
  }
  p[6] = carry;
  p[7] = 0u;  // above the product: the window of |x| < 4 reaches it
  int lo_bit = 288 - int(b >> 23), wi = lo_bit >> 5, s = lo_bit & 31;
  // Words wi .. wi + 2 by selection, not p[wi]: constant indices keep p in registers (a
  // dynamically indexed array goes to local memory on NVIDIA).
  uint flo = 0u, fhi = 0u, ftop = 0u;
  for (int i = 0; i < 8; ++i) {
    flo = i == wi ? p[i] : flo;
    fhi = i == wi + 1 ? p[i] : fhi;
    ftop = i == wi + 2 ? p[i] : ftop;
  }
  if (s != 0) {
    flo = (flo >> uint(s)) | (fhi << uint(32 - s));
    fhi = (fhi >> uint(s)) | (ftop << uint(32 - s));
  }
  uint qq = fhi >> 30;
  fhi = (fhi << 2) | (flo >> 30);
  flo <<= 2;
  float sgn = 1.0f;
  if ((fhi & 0x80000000u) != 0u) {  // fraction >= 1/2: r = (fraction - 1) pi/2, one more quadrant
    qq += 1u;
    uint c;
    flo = uaddCarry(~flo, 1u, c);
    fhi = ~fhi + c;
    sgn = -1.0f;
  }
  precise float f = float(fhi) * 2.32830644e-10f + float(flo) * 5.42101086e-20f;  // 2^-32, 2^-64
  precise float r = sgn * (f * uintBitsToFloat(0x3fc90fdbu) + f * uintBitsToFloat(0xb33bbd2eu));  // pi/2 in two parts
  if (x < 0.0f) {
    r = -r;
    qq = 0u - qq;
  }
  q = int(qq & 3u);
  return r;
}
float fz_sin_poly(float r) {
  float z = r * r;
  return fma(fma(fma(-1.9515295891e-4f, z, 8.3321608736e-3f), z, -1.6666654611e-1f) * z, r, r);
}
float fz_cos_poly(float r) {
  float z = r * r;
  return fma(fma(fma(2.443315711809948e-5f, z, -1.388731625493765e-3f), z, 4.166664568298827e-2f) * z, z, fma(-0.5f, z, 1.0f));
}
// sin(r + q pi/2)
float fz_sin_q(float r, int q) {
  float v = (q & 1) == 0 ? fz_sin_poly(r) : fz_cos_poly(r);
  return (q & 2) == 0 ? v : -v;
}
float fz_sin(float x) {
  if (x == 0.0f || fz_nan_b(x)) return x;  // -0 stays -0
  if (fz_inf_b(x)) return fz_nan();
  int q;
  float r = fz_rem_pio2f(x, q);
  return fz_sin_q(r, q);
}
float fz_cos(float x) {
  if (fz_nan_b(x) || fz_inf_b(x)) return fz_nan();
  int q;
  float r = fz_rem_pio2f(x, q);
  return fz_sin_q(r, q + 1);
}
float fz_tan(float x) {
  if (x == 0.0f || fz_nan_b(x)) return x;
  if (fz_inf_b(x)) return fz_nan();
  int q;
  float r = fz_rem_pio2f(x, q), z = r * r;
  float p = fma(9.38540185543e-3f, z, 3.11992232697e-3f);
  p = fma(p, z, 2.44301354525e-2f);
  p = fma(p, z, 5.34112807005e-2f);
  p = fma(p, z, 1.33387994085e-1f);
  p = fma(p, z, 3.33331568548e-1f);
  float t = fma(p * z, r, r);
  return (q & 1) == 0 ? t : -fz_div(1.0f, t);
}
// log(1 + x) without the cancellation of log(1.0f + x) for small x (GLSL's log is only
// accurate to 2^-21 absolute near 1): 2 atanh(x / (2 + x)) as its odd series where |s| <= 0.2.
float fz_log1p(float x) {
  if (x < -0.25f || x > 0.5f) return fz_log(1.0f + x);
  float s = fz_div(x, 2.0f + x), s2 = s * s;
  return 2.0f * s * (1.0f + s2 * (1.0f / 3.0f + s2 * (0.2f + s2 * (1.0f / 7.0f + s2 * (1.0f / 9.0f + s2 * (1.0f / 11.0f))))));
}
// exp(x) - 1 without the cancellation of exp(x) - 1.0f for small x (Elu(-1e-7) was 19% off):
// its Taylor series to x^9 / 9! where |x| <= 0.5 (remainder below 2^-27 relative), exp(x) - 1
// elsewhere (the cancellation there is at most a factor 2.6). NaN takes the series (NaN out).
float fz_expm1(float x) {
  if (abs(x) > 0.5f) return fz_exp(x) - 1.0f;
  if (x == 0.0f) return x;  // -0 stays -0 (x + x * x * p gives +0): Selu / Celu / Elu of -0, as ref
  float p = 1.0f / 362880.0f;
  p = p * x + 1.0f / 40320.0f;
  p = p * x + 1.0f / 5040.0f;
  p = p * x + 1.0f / 720.0f;
  p = p * x + 1.0f / 120.0f;
  p = p * x + 1.0f / 24.0f;
  p = p * x + 1.0f / 6.0f;
  p = p * x + 0.5f;
  return x + (x * x) * p;
}
// erff, faithfully rounded (max error < 1 ulp): N. Juffa's minimax polynomials.
float fz_erf(float a) {
  float t = abs(a), s = a * a, r;
  if (t > 0.927734375f) {
    r = fma(-1.72853470e-5f, t, 3.83197126e-4f);
    float u = fma(-3.88396438e-3f, t, 2.42546219e-2f);
    r = fma(r, s, u);
    r = fma(r, t, -1.06777877e-1f);
    r = fma(r, t, -6.34846687e-1f);
    r = fma(r, t, -1.28717512e-1f);
    r = fma(r, t, -t);
    r = 1.0f - fz_exp(r);
    return a < 0.0f ? -r : r;
  }
  r = -5.96761703e-4f;
  r = fma(r, s, 4.99119423e-3f);
  r = fma(r, s, -2.67681349e-2f);
  r = fma(r, s, 1.12819925e-1f);
  r = fma(r, s, -3.76125336e-1f);
  r = fma(r, s, 1.28379166e-1f);
  return fma(r, a, a);
}
// a b = p + e exactly (Dekker 1971; no fma, which may round twice).
float fz_two_prod(float a, float b, out float e) {
  vec2 sa = fz_dekker_split(a), sb = fz_dekker_split(b);
  precise float p = a * b;
  precise float r = ((sa.x * sb.x - p) + sa.x * sb.y + sa.y * sb.x) + sa.y * sb.y;
  e = r;
  return p;
}
// Gelu-20's erf form x Phi(x), Phi the standard normal distribution function (Hendrycks &
// Gimpel 2016). 0.5 x (1 + erf(x / sqrt 2)) cancels below 0 (Gelu(-6) was -0, Gelu(-5) 4% off:
// 1 + erf keeps none of erf's bits there). Below -0.5, Phi(x) = exp(-x^2 / 2) Q(-x) with
// Q(u) = Phi(-u) exp(u^2 / 2), smooth: t P(t - 1/2), t = 1 / (1 + u / 4), P fitted here by
// least squares in relative error over u in [0.5, 14.5] (3.3e-8 with its coefficients rounded
// to float); exp(-x^2 / 2) from the exact square x^2 = q + e (Dekker), past u = 13 as
// exp(-q / 4)^2 with the last product rounding once, so results in the subnormals stay
// accurate. Within 8 ulp of the double formula (a review's exhaustive float32 emulation of
// [-14.5, 0]; Numerics.GeluTailsFollowTheDoubleFormula against ref).
float fz_gelu(float x) {
  if (!(x < -0.5f)) return 0.5f * x * (1.0f + fz_erf(x * 0.70710678f));  // NaN too
  // |Gelu| < 1e-46 past -14.5, below half the smallest subnormal (-0 from the bits: a -0.0f
  // literal may fold to +0); Gelu(-inf) = -inf * 0 = NaN, as ref.
  if (x < -14.5f) return fz_inf_b(x) ? fz_nan() : uintBitsToFloat(0x80000000u);
  float u = -x, t = fz_div(1.0f, 1.0f + 0.25f * u), s = t - 0.5f;
  float p = -6.864679977e-03f;
  p = p * s + 2.612726204e-02f;
  p = p * s + 9.937066585e-03f;
  p = p * s - 5.192354694e-02f;
  p = p * s - 5.578330904e-02f;
  p = p * s + 6.031192839e-02f;
  p = p * s + 2.415897101e-01f;
  p = p * s + 3.730438948e-01f;
  p = p * s + 3.871373534e-01f;
  p = p * s + 3.039483130e-01f;
  p = p * s + 1.888212860e-01f;
  float e;
  precise float q = fz_two_prod(u, u, e);
  if (u < 13.0f) {
    precise float r = (x * (t * p)) * (fz_exp(-0.5f * q) * (1.0f - 0.5f * e));
    return r;
  }
  precise float e4 = fz_exp(-0.25f * q);
  precise float r = ((x * (t * p)) * (e4 * (1.0f - 0.5f * e))) * e4;
  return r;
}
// Gelu-20's tanh form 0.5 x (1 + tanh(z)) = x sigmoid(2z), z = sqrt(2 / pi) (x + 0.044715 x^3),
// with the sigmoid split as Sigmoid's: 1 + tanh(z) cancels for z < 0. Below x = -0.5, 2z is
// formed in float-float (Dekker products, TwoSum; both constants as two floats) and exp(2z)
// taken as exp(hi) (1 + lo): exp turns an error d in 2z into |2z| d relative, 158 ulp at x =
// -9.5 with 2z in plain float. Past 2z = -80 as (x h) h, h = exp(z), as fz_gelu.
float fz_gelu_tanh(float x) {
  if (x < -0.5f && x > -30.0f) {
    float e2, e3, et, es, ez;
    float p2 = fz_two_prod(x, x, e2);
    float p3 = fz_two_prod(x, p2, e3);
    precise float l3 = e3 + x * e2;  // x^3 = p3 + l3
    float t = fz_two_prod(4.471499845e-02f, p3, et);
    precise float tl = et + (4.471499845e-02f * l3 + 1.546144435e-09f * p3);
    float s = fz_two_sum(x, t, es);
    precise float sl = es + tl;
    float z = fz_two_prod(1.595769167e+00f, s, ez);
    precise float zl = ez + (1.595769167e+00f * sl - 4.534068054e-08f * s);
    if (z < -80.0f) {  // 1 + e = 1; (x h) h with h = exp(2z / 2) normal: one rounding into the subnormals
      precise float h = fz_exp(0.5f * z) * (1.0f + 0.5f * zl);
      precise float r = (x * h) * h;
      return r;
    }
    precise float e = fz_exp(z) * (1.0f + zl);
    return x * fz_div(e, 1.0f + e);
  }
  float z2 = 1.5957691216057308f * (x + 0.044715f * x * x * x);
  if (z2 < 0.0f) {
    float e = fz_exp(z2);
    return x * fz_div(e, 1.0f + e);
  }
  return fz_div(x, 1.0f + fz_exp(-z2));
}
// tanh: an odd Taylor polynomial near 0 (where (e^2x-1)/(e^2x+1) cancels), else a form that
// saturates to +-1 instead of inf/inf for large |x|.
float fz_tanh(float x) {
  if (x == 0.0f) return x;  // -0 stays -0 (x + x s p below gives +0)
  float a = abs(x);
  if (a < 0.3f) {
    float s = x * x;
    return x + x * s * (-0.333333333f + s * (0.133333333f + s * (-0.0539682540f + s * (0.0218694885f - s * 0.00886323552f))));
  }
  float r = 1.0f - fz_div(2.0f, fz_exp(2.0f * a) + 1.0f);
  return x < 0.0f ? -r : r;
}
// Odd functions keep the sign of zero (lavapipe's atan/asinh/atanh/sinh return +0 for -0).
// GLSL lets sinh/asinh/atanh/acosh be their textbook formulas (Mesa's are), which cancel near
// 0 (sinh(1e-3) 1.7e-5 off, sinh(2^-126) = 3e-8) and overflow past |x| ~ 1.8e19 (asinh = inf):
// Taylor series below 0.25 (truncation < 1e-9 relative) and log(|x|) + ln 2 above 2^60.
// atan, asin, acos: Cephes' atanf / asinf / acosf (about 2 ulp; lavapipe's builtins were 346,
// 3,811 and 3,921 ulp off, GLSL promising nothing for asin / acos).
float fz_atan(float x) {
  if (x == 0.0f || fz_nan_b(x)) return x;
  float a = abs(x), y = 0.0f;
  if (a > 2.414213562f) {  // tan(3 pi / 8)
    y = 1.570796327f;
    a = -fz_div(1.0f, a);
  } else if (a > 0.414213562f) {  // tan(pi / 8)
    y = 0.785398163f;
    a = fz_div(a - 1.0f, a + 1.0f);
  }
  float z = a * a;
  y += (((8.05374449538e-2f * z - 1.38776856032e-1f) * z + 1.99777106478e-1f) * z - 3.33329491539e-1f) * z * a + a;
  return x < 0.0f ? -y : y;
}
float fz_asin(float x) {
  float a = abs(x);
  if (fz_nan_b(x) || a > 1.0f) return fz_nan();
  if (a < 1e-4f) return x;  // -0 stays -0
  bool big = a > 0.5f;
  float z = big ? 0.5f * (1.0f - a) : a * a, r = big ? fz_sqrt(z) : a;
  r += ((((4.2163199048e-2f * z + 2.4181311049e-2f) * z + 4.5470025998e-2f) * z + 7.4953002686e-2f) * z + 1.6666752422e-1f) * z * r;
  if (big) r = 1.570796327f - (r + r);
  return x < 0.0f ? -r : r;
}
float fz_acos(float x) {
  if (fz_nan_b(x) || abs(x) > 1.0f) return fz_nan();
  if (x < -0.5f) return 3.141592654f - 2.0f * fz_asin(fz_sqrt(0.5f * (1.0f + x)));
  if (x > 0.5f) return 2.0f * fz_asin(fz_sqrt(0.5f * (1.0f - x)));
  return 1.570796327f - fz_asin(x);
}
float fz_asinh(float x) {
  float a = abs(x), s = x * x;
  if (x == 0.0f) return x;
  if (a < 0.25f) return x + x * s * (-0.16666667f + s * (0.075f + s * (-0.044642857f + s * (0.030381944f - s * 0.022372159f))));
  // log1p(a + a^2 / (1 + sqrt(1 + a^2))): GLSL's log(a + sqrt(a^2 + 1)) was 5 ulp off at 0.25.
  float r = a > 1.1529215e18f ? fz_log(a) + 0.69314718f : fz_log1p(a + fz_div(a * a, 1.0f + fz_sqrt(1.0f + a * a)));
  return x < 0.0f ? -r : r;
}
float fz_acosh(float x) {
  if (fz_nan_b(x) || x < 1.0f) return fz_nan();
  if (x > 1.1529215e18f) return fz_log(x) + 0.69314718f;
  // log(x + sqrt(x^2 - 1)) cancels next to 1 (728 ulp at 1.00024): log1p of t + sqrt(2t + t^2),
  // t = x - 1 exact there.
  float t = x - 1.0f;
  return t < 1.0f ? fz_log1p(t + fz_sqrt(2.0f * t + t * t)) : fz_log(x + fz_sqrt(x * x - 1.0f));
}
float fz_atanh(float x) {
  float s = x * x;
  if (abs(x) < 0.25f)
    return x + x * s * (0.33333333f + s * (0.2f + s * (0.14285714f + s * (0.11111111f + s * (0.090909091f + s * 0.076923077f)))));
  // log1p(2a / (1 - a)) / 2 (1 - a exact here): GLSL's log((1 + x) / (1 - x)) / 2 was 4 ulp off.
  float a = abs(x), r = a > 1.0f || fz_nan_b(x) ? fz_nan() : 0.5f * fz_log1p(fz_div(a + a, 1.0f - a));
  return x < 0.0f ? -r : r;
}
// Past |x| = 88 exp(|x|) nears FLT_MAX while sinh / cosh stay finite up to 89.415: there
// (e/2) * e with e = exp(|x| / 2) (the textbook formulas gave inf from 88.72). `precise`: the
// NVIDIA driver reassociated the unmarked product to (e * e) / 2, inf again (cosh, H200).
float fz_sinh(float x) {
  float s = x * x, a = abs(x);
  if (a < 0.25f) return x + x * s * (0.16666667f + s * (0.0083333333f + s * (1.9841270e-4f + s * 2.7557319e-6f)));
  if (a > 88.0f && !fz_nan_b(x)) {
    precise float e = fz_exp(0.5f * a), h = 0.5f * e, r = h * e;
    return x < 0.0f ? -r : r;
  }
  float e = fz_exp(a), r = 0.5f * (e - fz_div(1.0f, e));  // GLSL's sinh: its exp's (3 + 2|x|) ulp
  return x < 0.0f ? -r : r;
}
float fz_cosh(float x) {
  float a = abs(x);
  if (a > 88.0f && !fz_nan_b(x)) {
    precise float e = fz_exp(0.5f * a), h = 0.5f * e, r = h * e;
    return r;
  }
  float e = fz_exp(a);
  return 0.5f * (e + fz_div(1.0f, e));
}
// C powf where GLSL's pow is undefined (C99 Annex F, as fz_powd): negative bases with integral
// exponents, +-0 and +-inf bases (-0 and -inf keep their sign for odd exponents), +-inf exponents.
#ifdef FZ_POW_F64
double fz_powd(double x, double y);  // f64_math.glsl, included with the double helpers
#endif
float fz_pow(float a, float b) {
  if (b == 0.0f || a == 1.0f) return 1.0f;
  if (fz_nan_b(a) || fz_nan_b(b)) return fz_nan();
  float m = abs(a);
  bool bint = floor(b) == b, bodd = bint && abs(b) < 16777216.0f && mod(b, 2.0f) == 1.0f;
  if (fz_inf_b(b)) return m == 1.0f ? 1.0f : ((m > 1.0f) == (b > 0.0f) ? fz_inf() : 0.0f);
  if (m == 0.0f || fz_inf_b(m)) {
    float r = (m == 0.0f) == (b < 0.0f) ? fz_inf() : 0.0f;
    return (floatBitsToUint(a) & 0x80000000u) != 0u && bodd ? -r : r;
  }
  if (a < 0.0f && !bint) return fz_nan();
#ifdef FZ_POW_F64
  // x^2, x^3, x^4 (GELU's tanh form, variances): products in double are ref's double pow
  // (x^2 is exact there, so each rounds once); a constant exponent folds the branch away.
  double dm = double(m);
  float r = b == 2.0f ? float(dm * dm) : b == 3.0f ? float(dm * dm * dm) : b == 4.0f ? float((dm * dm) * (dm * dm))
                                                                                     : float(fz_powd(dm, double(b)));  // rounded once, as ref
#else
  float r = pow(m, b);  // the driver's exp2(b log2 m): its error grows with |b log2 m|
#endif
  return a < 0.0f && bodd ? -r : r;
}
// Linear workgroup id: dispatches wider than maxComputeWorkGroupCount[0] are split over y/z.
int fz_group_id() { return int(gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z)); }
int fz_num_groups() { return int(gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_NumWorkGroups.z); }
)";

// bf16 travels as uint16_t in storage only (16-bit locals would need int16 arithmetic).
constexpr const char* kBf16Helpers = R"(float fz_bf16_to_f32(uint h) { return uintBitsToFloat(h << 16); }
// Four bf16 packed in two little-endian words (gemm.glsl's 4-wide loads), each exact.
vec4 fz_bf16x4(uvec2 w) {
  return vec4(uintBitsToFloat(w.x << 16), uintBitsToFloat(w.x & 0xffff0000u), uintBitsToFloat(w.y << 16), uintBitsToFloat(w.y & 0xffff0000u));
}
uint fz_f32_to_bf16(float f) {
  uint u = floatBitsToUint(f);
  if (fz_nan_b(f)) return (u >> 16) | 0x40u;
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
  return u >> 16;
}
)";

// Vulkan leaves the rounding of a conversion to a narrower float implementation-defined (either
// neighbour), so float -> float16_t rounds here, to nearest even, into an fp32 value that fp16
// holds exactly; the conversion itself then cannot round.
constexpr const char* kF16Helpers = R"(float fz_round_f16(float x) {
  const uint u = floatBitsToUint(x), s = u & 0x80000000u;
  uint a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return x;                                 // inf, NaN
  if (a >= 0x477ff000u) return uintBitsToFloat(s | 0x7f800000u);  // |x| >= 65520: inf
  if (a < 0x38800000u)                                            // below 2^-14: multiples of 2^-24
    return uintBitsToFloat(s | floatBitsToUint(roundEven(uintBitsToFloat(a) * 16777216.0f) * 5.9604644775390625e-8f));
  a += 0xfffu + ((a >> 13) & 1u);  // 10 mantissa bits, ties to even
  return uintBitsToFloat(s | (a & 0xffffe000u));
}
)";

}  // namespace

const char* glsl_float_helpers() { return kHelpers; }
const char* glsl_bf16_helpers() { return kBf16Helpers; }
const char* glsl_f16_helpers() { return kF16Helpers; }

}  // namespace fusor::vk
