#version 450
#define FZ_FMA_FUSED 1
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_NV_cooperative_matrix : require
float fz_inf() { return uintBitsToFloat(0x7f800000u); }
float fz_nan() { return uintBitsToFloat(0x7fc00000u); }
bool fz_nan_b(float x) { return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u; }
bool fz_inf_b(float x) { return (floatBitsToUint(x) & 0x7fffffffu) == 0x7f800000u; }
float fz_max(float a, float b) { return (fz_nan_b(a) || fz_nan_b(b)) ? fz_nan() : max(a, b); }
float fz_min(float a, float b) { return (fz_nan_b(a) || fz_nan_b(b)) ? fz_nan() : min(a, b); }
float fz_round_even(float x) { return roundEven(x); }
float fz_sign(float x) { return fz_nan_b(x) ? x : sign(x); }
float fz_isnan(float x) { return fz_nan_b(x) ? 1.0f : 0.0f; }
float fz_isinf(float x) { return fz_inf_b(x) ? 1.0f : 0.0f; }
// C fmodf, exact: |a| reduced by |b| * 2^e for e from high to low; each subtraction is exact
// (Sterbenz: the operands are within a factor of 2), so fmod(1e20, 3) is 2, not a - trunc(a/b)*b.
float fz_fmod(float a, float b) {
  if (b == 0.0f || fz_inf_b(a) || fz_nan_b(a) || fz_nan_b(b)) return fz_nan();
  float r = abs(a), m = abs(b);
  if (fz_inf_b(b) || r < m) return a;
  int er, em;
  frexp(r, er);
  frexp(m, em);
  for (int e = er - em; e >= 0; --e) {
    float t = ldexp(m, e);
    if (r >= t) r = r - t;
  }
  return a < 0.0f ? -r : r;
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
  float mx = frexp(x, ex), my = frexp(y, ey);
  precise float q = fz_div_core(mx, my);  // in (0.5, 2), correctly rounded
  int e = ex - ey;
  if (e > 128) return uintBitsToFloat(sg | 0x7f800000u);
  if (e < -151) return uintBitsToFloat(sg);
  // In two steps: 2^e itself may not be a float. Only the second step can round (subnormal).
  precise float t = ldexp(ldexp(q, e / 2), e - e / 2);
  if (t < 1.17549435e-38f) {
    // t rounded q * 2^e a second time; when q * 2^e was exactly halfway between subnormals the
    // tie went to even, but the true quotient lies on the side of q that the residual says.
    precise float d = q - ldexp(ldexp(t, -(e / 2)), -(e - e / 2));
    if (abs(d) == ldexp(ldexp(1.0f, -75), -75 - e)) {
      float r = fz_div_resid(mx, my, q);
      if (d > 0.0f && r > 0.0f) t = uintBitsToFloat(floatBitsToUint(t) + 1u);
      else if (d < 0.0f && r < 0.0f) t = uintBitsToFloat(floatBitsToUint(t) - 1u);
    }
  }
  return uintBitsToFloat(sg | floatBitsToUint(t));
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
// log(1 + x) without the cancellation of log(1.0f + x) for small x (GLSL's log is only
// accurate to 2^-21 absolute near 1): 2 atanh(x / (2 + x)) as its odd series where |s| <= 0.2.
float fz_log1p(float x) {
  if (x < -0.25f || x > 0.5f) return log(1.0f + x);
  float s = x / (2.0f + x), s2 = s * s;
  return 2.0f * s * (1.0f + s2 * (1.0f / 3.0f + s2 * (0.2f + s2 * (1.0f / 7.0f + s2 * (1.0f / 9.0f + s2 * (1.0f / 11.0f))))));
}
// exp(x) - 1 without the cancellation of exp(x) - 1.0f for small x (Elu(-1e-7) was 19% off):
// its Taylor series to x^9 / 9! where |x| <= 0.5 (remainder below 2^-27 relative), exp(x) - 1
// elsewhere (the cancellation there is at most a factor 2.6). NaN takes the series (NaN out).
float fz_expm1(float x) {
  if (abs(x) > 0.5f) return exp(x) - 1.0f;
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
    r = 1.0f - exp(r);
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
// tanh: an odd Taylor polynomial near 0 (where (e^2x-1)/(e^2x+1) cancels), else a form that
// saturates to +-1 instead of inf/inf for large |x|.
float fz_tanh(float x) {
  if (x == 0.0f) return x;  // -0 stays -0 (x + x s p below gives +0)
  float a = abs(x);
  if (a < 0.3f) {
    float s = x * x;
    return x + x * s * (-0.333333333f + s * (0.133333333f + s * (-0.0539682540f + s * (0.0218694885f - s * 0.00886323552f))));
  }
  float r = 1.0f - 2.0f / (exp(2.0f * a) + 1.0f);
  return x < 0.0f ? -r : r;
}
// Odd functions keep the sign of zero (lavapipe's atan/asinh/atanh/sinh return +0 for -0).
// GLSL lets sinh/asinh/atanh/acosh be their textbook formulas (Mesa's are), which cancel near
// 0 (sinh(1e-3) 1.7e-5 off, sinh(2^-126) = 3e-8) and overflow past |x| ~ 1.8e19 (asinh = inf):
// Taylor series below 0.25 (truncation < 1e-9 relative) and log(|x|) + ln 2 above 2^60.
float fz_atan(float x) { return x == 0.0f ? x : atan(x); }
float fz_asinh(float x) {
  float a = abs(x), s = x * x;
  if (x == 0.0f) return x;
  if (a < 0.25f) return x + x * s * (-0.16666667f + s * (0.075f + s * (-0.044642857f + s * (0.030381944f - s * 0.022372159f))));
  float r = a > 1.1529215e18f ? log(a) + 0.69314718f : asinh(a);
  return x < 0.0f ? -r : r;
}
float fz_acosh(float x) {
  if (fz_nan_b(x) || x < 1.0f) return fz_nan();
  return x > 1.1529215e18f ? log(x) + 0.69314718f : acosh(x);
}
float fz_atanh(float x) {
  float s = x * x;
  if (abs(x) < 0.25f)
    return x + x * s * (0.33333333f + s * (0.2f + s * (0.14285714f + s * (0.11111111f + s * (0.090909091f + s * 0.076923077f)))));
  return atanh(x);
}
// Past |x| = 88 exp(|x|) nears FLT_MAX while sinh / cosh stay finite up to 89.415: there
// (e/2) * e with e = exp(|x| / 2) (the textbook formulas gave inf from 88.72). `precise`: the
// NVIDIA driver reassociated the unmarked product to (e * e) / 2, inf again (cosh, H200).
float fz_sinh(float x) {
  float s = x * x, a = abs(x);
  if (a < 0.25f) return x + x * s * (0.16666667f + s * (0.0083333333f + s * (1.9841270e-4f + s * 2.7557319e-6f)));
  if (a > 88.0f && !fz_nan_b(x)) {
    precise float e = exp(0.5f * a), h = 0.5f * e, r = h * e;
    return x < 0.0f ? -r : r;
  }
  return sinh(x);
}
float fz_cosh(float x) {
  float a = abs(x);
  if (a > 88.0f && !fz_nan_b(x)) {
    precise float e = exp(0.5f * a), h = 0.5f * e, r = h * e;
    return r;
  }
  return cosh(x);
}
// C powf where GLSL's pow is undefined (C99 Annex F, as fz_powd): negative bases with integral
// exponents, +-0 and +-inf bases (-0 and -inf keep their sign for odd exponents), +-inf exponents.
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
  float r = pow(m, b);
  return a < 0.0f && bodd ? -r : r;
}
// Linear workgroup id: dispatches wider than maxComputeWorkGroupCount[0] are split over y/z.
int fz_group_id() { return int(gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z)); }
int fz_num_groups() { return int(gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_NumWorkGroups.z); }
float fz_round_f16(float x) {
  const uint u = floatBitsToUint(x), s = u & 0x80000000u;
  uint a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return x;                                 // inf, NaN
  if (a >= 0x477ff000u) return uintBitsToFloat(s | 0x7f800000u);  // |x| >= 65520: inf
  if (a < 0x38800000u)                                            // below 2^-14: multiples of 2^-24
    return uintBitsToFloat(s | floatBitsToUint(roundEven(uintBitsToFloat(a) * 16777216.0f) * 5.9604644775390625e-8f));
  a += 0xfffu + ((a >> 13) & 1u);  // 10 mantissa bits, ties to even
  return uintBitsToFloat(s | (a & 0xffffe000u));
}
#define fz_idx int
#define FZ_KERNEL_NAME fz_kernel
#define FZ_GROUP_SIZE 256
#define fz_add(a, b) ((a) + (b))
#define fz_mul(a, b) ((a) * (b))
layout(std430, set = 0, binding = 0) restrict readonly buffer B0 { float16_t d[]; } b0;
layout(std430, set = 0, binding = 1) restrict readonly buffer B1 { float16_t d[]; } b1;
layout(std430, set = 0, binding = 2) restrict buffer B2 { float16_t d[]; } b2;
layout(std430, set = 0, binding = 3) coherent buffer FzSplit { uint cnt[48]; float part[]; } fz_split;
layout(std430, set = 0, binding = 0) readonly buffer B0u8 { uvec4 d[]; } b0u8;
layout(std430, set = 0, binding = 1) readonly buffer B1u8 { uvec4 d[]; } b1u8;
#define FZ_M 64
#define FZ_N 768
#define FZ_K 3072
#define FZ_BATCH 1
#define FZ_A_SM 3072
#define FZ_A_SK 1
#define FZ_B_SK 768
#define FZ_B_SN 1
#define FZ_TILES 144
#define FZ_COOPMAT 1
#define FZ_CM_M 16
#define FZ_CM_N 8
#define FZ_CM_K 16
#define FZ_CM_WM 2
#define FZ_CM_WN 4
#define FZ_CM_RM 1
#define FZ_CM_RN 1
#define FZ_CM_BK 128
#define FZ_CM_SG 32
#define FZ_SPLIT_K 3
#define FZ_SPLIT_SLICE 1024
#define FZ_CM_VA 8
#define FZ_LOAD_AV(off) b0u8.d[((off)) / 8]
#define FZ_CM_VB 8
#define FZ_LOAD_BV(off) b1u8.d[((off)) / 8]
#define FZ_TILE_N_MAJOR 1
#define FZ_B_BYTES 2
#define FZ_LOAD_A(off) float(b0.d[(off)])
#define FZ_LOAD_B(off) float(b1.d[(off)])
#define FZ_B_ELEM(off) b1.d[(off)]
#define FZ_B_KIND 2
fz_idx fz_a_base(fz_idx batch) {
  fz_idx off = 0;
  return off;
}
fz_idx fz_b_base(fz_idx batch) {
  fz_idx off = 0;
  return off;
}
void fz_epilogue(float acc, fz_idx fz_i) {
  fz_idx c0 = fz_i;
  b2.d[c0] = float16_t(fz_round_f16(float(float16_t(fz_round_f16(acc)))));
}
#define FZ_EPILOGUE(acc, i) fz_epilogue((acc), (i))
// Cooperative-matrix GEMM template (Vulkan backend, fp16 operands, fp32 accumulation):
// C[batch, m, n] = sum_k A[batch, m, k] * B[batch, k, n], each element handed to
// FZ_EPILOGUE(acc, i) exactly as in gemm.glsl (same emitter contract, backends/codegen.h).
//
// Written against GL_NV_cooperative_matrix because Debian 12's glslang 12 knows no
// GL_KHR_cooperative_matrix; on a device with only VK_KHR_cooperative_matrix the validated NV
// module is rewritten to SPV_KHR_cooperative_matrix (backends/vulkan/vk_coopmat.cpp). The
// prelude (vk_dialect.cpp) enables GL_NV_cooperative_matrix, GL_KHR_memory_scope_semantics,
// GL_EXT_shader_explicit_arithmetic_types_float16, GL_KHR_shader_subgroup_basic and
// GL_EXT_control_flow_attributes (the matrix loops are [[unroll]]: the accumulators must stay
// in registers, never in an indexed array).
// bf16 operands (FZ_CM_BF16): glslang 12 has no bfloat16 type, so the module is written with
// fp16 matrices and coopmat_nv_to_khr retypes A's and B's components to bf16 (SPV_KHR_bfloat16).
// Their halves are only ever moved as bits (vector staging, required), never converted.
//
// Blocking (all #defines from VulkanDialect::matmul_config): one matrix-unit operation is
// FZ_CM_M x FZ_CM_N x FZ_CM_K (a shape the device lists for f16*f16+f32, subgroup scope). A
// workgroup of FZ_CM_WM x FZ_CM_WN subgroups owns a BM x BN output tile, each subgroup
// FZ_CM_RM x FZ_CM_RN accumulators; K is walked in FZ_CM_BK slices that all threads stage
// into shared memory as fp16 (FZ_LOAD_A/B return float; the operands are fp16 values, so
// float16_t(x) is exact; out-of-range elements are 0). The accumulators then go through
// shared memory (float) so every thread runs the fused epilogue on its elements, coalesced.
// The host sets local size = WM * WN * subgroup size.
// Vector staging loads (FZ_CM_VA / FZ_CM_VB = 2, 4 or 8, with FZ_LOAD_AV / FZ_LOAD_BV(off)
// returning that many packed halves as uint / uvec2 / uvec4; the dialect defines them when the
// operand's unit-stride extent, other strides and offset are multiples of the width): a thread
// stages a group of consecutive halves with one load and one shared store (the slice layouts
// below); otherwise scalar loads through the view's strides (FZ_LOAD_A / B).
// Split-K (FZ_SPLIT_K > 1, FZ_SPLIT_SLICE a multiple of FZ_CM_BK): as gemm.glsl's, work item
// w = tile * FZ_SPLIT_K + slice covers K range [slice * FZ_SPLIT_SLICE, +FZ_SPLIT_SLICE), its
// fp32 partial tile goes to the workspace fz_split.part and bumps the tile's counter
// fz_split.cnt; the last to arrive adds the partials in slice order 0, 1, ... (deterministic),
// runs FZ_EPILOGUE once and zeroes the counter for the next replay. The barriers and the
// counter's atomics are written with explicit scopes and semantics (this module uses the
// Vulkan memory model; see the comment at the split below).
layout(local_size_x_id = 0) in;
#define FZ_CM_BM (FZ_CM_WM * FZ_CM_RM * FZ_CM_M)
#define FZ_CM_BN (FZ_CM_WN * FZ_CM_RN * FZ_CM_N)
#define FZ_CM_CS (FZ_CM_BN + 4)
#ifndef FZ_SPLIT_K
#define FZ_SPLIT_K 1
#endif
#ifndef FZ_SPLIT_SLICE
#define FZ_SPLIT_SLICE FZ_K
#endif
#ifndef FZ_CM_VA
#define FZ_CM_VA 1
#endif
#ifndef FZ_CM_VB
#define FZ_CM_VB 1
#endif
#ifdef FZ_CM_BF16
#if FZ_CM_VA < 2 || FZ_CM_VB < 2
#error "bf16 operands are staged as packed bits only (FZ_CM_VA and FZ_CM_VB >= 2)"
#endif
// B's rows as a specialization constant (default FZ_CM_K): A (M x K) and B (K x N) are then
// distinct SPIR-V types even for a square shape (the only bf16 one listed is 16x16x16), so the
// KHR rewrite can give each its Use (MatrixA / MatrixB).
layout(constant_id = 64) const int FZ_CM_KB = FZ_CM_K;
#else
#define FZ_CM_KB FZ_CM_K
#endif
// A staged group in registers: one half (scalar loads), or 2 / 4 / 8 halves packed in a
// uint / uvec2 / uvec4 (one 4 / 8 / 16-byte vector load).
#if FZ_CM_VA == 8
#define FZ_CM_RA uvec4
#elif FZ_CM_VA == 4
#define FZ_CM_RA uvec2
#elif FZ_CM_VA == 2
#define FZ_CM_RA uint
#else
#define FZ_CM_RA float16_t
#endif
#if FZ_CM_VB == 8
#define FZ_CM_RB uvec4
#elif FZ_CM_VB == 4
#define FZ_CM_RB uvec2
#elif FZ_CM_VB == 2
#define FZ_CM_RB uint
#else
#define FZ_CM_RB float16_t
#endif
// Shared slices. A staged group stays whole in shared memory: the slice is laid out along the
// group's direction (the host defines FZ_CM_A_COL when A's groups run along m, FZ_CM_B_COL when
// B's run along k) in elements of the register type, so a thread stages a group with one
// 4 / 8 / 16-byte store (16-bit stores one half at a time were 8 per uvec4, with bank
// conflicts), and the matrix loads read that layout (column-major where _COL). Scalar staging
// keeps row-major float16_t slices. Offsets below are in halves ("h"); an array index is
// h / VA. Each leading dimension is padded by 8 halves (fewer bank conflicts; keeps the
// 16-byte alignment matrix loads want, and every group's start a multiple of its width).
#ifdef FZ_CM_A_COL
#define FZ_CM_ALD (FZ_CM_BM + 8)  // A slice [k][m]
#define FZ_CM_AH(m, k) ((k) * FZ_CM_ALD + (m))
#define FZ_CM_ACOLMAJOR true
#define FZ_CM_ASZ (FZ_CM_BK * FZ_CM_ALD)
#else
#define FZ_CM_ALD (FZ_CM_BK + 8)  // A slice [m][k]
#define FZ_CM_AH(m, k) ((m) * FZ_CM_ALD + (k))
#define FZ_CM_ACOLMAJOR false
#define FZ_CM_ASZ (FZ_CM_BM * FZ_CM_ALD)
#endif
#ifdef FZ_CM_B_COL
#define FZ_CM_BLD (FZ_CM_BK + 8)  // B slice [n][k]
#define FZ_CM_BH(k, n) ((n) * FZ_CM_BLD + (k))
#define FZ_CM_BCOLMAJOR true
#define FZ_CM_BSZ (FZ_CM_BN * FZ_CM_BLD)
#else
#define FZ_CM_BLD (FZ_CM_BN + 8)  // B slice [k][n]
#define FZ_CM_BH(k, n) ((k) * FZ_CM_BLD + (n))
#define FZ_CM_BCOLMAJOR false
#define FZ_CM_BSZ (FZ_CM_BK * FZ_CM_BLD)
#endif
shared FZ_CM_RA fz_cm_a[FZ_CM_ASZ / FZ_CM_VA];
shared FZ_CM_RB fz_cm_b[FZ_CM_BSZ / FZ_CM_VB];
shared float fz_cm_c[FZ_CM_BM * FZ_CM_CS];  // accumulator tile: [m * CS + n]

// Half h of a packed group (the lower address in the low bits: little-endian).
float16_t fz_cm_half(uint v, int h) { return unpackFloat2x16(v)[h & 1]; }
float16_t fz_cm_half(uvec2 v, int h) { return unpackFloat2x16(v[(h >> 1) & 1])[h & 1]; }
float16_t fz_cm_half(uvec4 v, int h) { return unpackFloat2x16(v[(h >> 1) & 3])[h & 1]; }
float16_t fz_cm_half(float16_t v, int h) { return v; }

#define FZ_CM_T (FZ_CM_WM * FZ_CM_WN * FZ_CM_SG)  // threads (the host's local size)
#define FZ_CM_GA (FZ_CM_BM * FZ_CM_BK / FZ_CM_VA)  // groups in an A slice
#define FZ_CM_GB (FZ_CM_BK * FZ_CM_BN / FZ_CM_VB)  // groups in a B slice
#define FZ_CM_LA ((FZ_CM_GA + FZ_CM_T - 1) / FZ_CM_T)
#define FZ_CM_LB ((FZ_CM_GB + FZ_CM_T - 1) / FZ_CM_T)
#define FZ_CM_PE ((FZ_CM_BM * FZ_CM_BN + FZ_CM_T - 1) / FZ_CM_T)  // tile elements per thread
// Split-K's "this work item arrived last" flag lives in row 0's padding of fz_cm_c (element
// FZ_CM_BN: no matrix store or epilogue touches the padding), not in a shared variable of its
// own: the matrix loads and stores need 16-byte aligned shared pointers (VUID-RuntimeSpirv-
// OpCooperativeMatrixLoadNV-06324), which the driver's layout of fz_cm_a / b / c keeps only
// while every shared variable is a multiple of 16 bytes. A 4-byte `shared bool` here (the
// first split-K version) can shift the matrices off 16 bytes wherever the driver places it
// first -- garbage and NaN from every matrix load and store of a split kernel only, which is
// what the H200 showed (docs/benchmarks.md, third session).
#define FZ_CM_LAST fz_cm_c[FZ_CM_BN]

#ifdef FZ_CM_EMULATE
// Test hook (FUSOR_VK_COOPMAT=emulate, vk_coopmat.h): no matrix units. Each thread keeps fp32
// sums for tile elements e = tid + i * T (row-major BM x BN) and adds the products of the
// staged fp16 slices itself; everything outside the matrix operations is the real template.
#define FZ_CM_EL ((FZ_CM_BM * FZ_CM_BN + FZ_CM_T - 1) / FZ_CM_T)
#ifdef FZ_CM_BF16  // bf16 bits: the float with those 16 high bits
uint fz_cm_bits(uint v, int h) { return (v >> (16 * (h & 1))) & 0xffffu; }
uint fz_cm_bits(uvec2 v, int h) { return fz_cm_bits(v[(h >> 1) & 1], h); }
uint fz_cm_bits(uvec4 v, int h) { return fz_cm_bits(v[(h >> 1) & 3], h); }
float fz_cm_a_half(int h) { return uintBitsToFloat(fz_cm_bits(fz_cm_a[h / FZ_CM_VA], h % FZ_CM_VA) << 16); }
float fz_cm_b_half(int h) { return uintBitsToFloat(fz_cm_bits(fz_cm_b[h / FZ_CM_VB], h % FZ_CM_VB) << 16); }
#else
float fz_cm_a_half(int h) { return float(fz_cm_half(fz_cm_a[h / FZ_CM_VA], h % FZ_CM_VA)); }
float fz_cm_b_half(int h) { return float(fz_cm_half(fz_cm_b[h / FZ_CM_VB], h % FZ_CM_VB)); }
#endif
void fz_cm_emulate_step(int tid, inout float acc[FZ_CM_EL]) {
  for (int i = 0; i < FZ_CM_EL; ++i) {
    const int e = tid + i * FZ_CM_T;
    if (e >= FZ_CM_BM * FZ_CM_BN) continue;
    const int mm = e / FZ_CM_BN, nn = e % FZ_CM_BN;
    // lavapipe ends loops after 65535 iterations per invocation in all (EL x BK per step: K =
    // 4096 reaches it with 64 threads); unrolling this loop made lavapipe's compile take
    // minutes, so the emulation keeps K below that (tests/test_vulkan_coopmat_split.cpp).
    for (int kk = 0; kk < FZ_CM_BK; ++kk)
      acc[i] += fz_cm_a_half(FZ_CM_AH(mm, kk)) * fz_cm_b_half(FZ_CM_BH(kk, nn));
  }
}
#define FZ_CM_COMPUTE fz_cm_emulate_step(tid, acc);
#else
// The matrix-unit operations (NV cooperative matrices): element offsets and strides in units
// of the shared arrays' element type.
#define FZ_CM_ACC fcoopmatNV<32, gl_ScopeSubgroup, FZ_CM_M, FZ_CM_N>
#define FZ_CM_MA fcoopmatNV<16, gl_ScopeSubgroup, FZ_CM_M, FZ_CM_K>
#define FZ_CM_MB fcoopmatNV<16, gl_ScopeSubgroup, FZ_CM_KB, FZ_CM_N>
#define FZ_CM_ZERO FZ_CM_ACC(0.0)
#define FZ_CM_STORE(m, e, s) coopMatStoreNV(m, fz_cm_c, e, s, false)
#define FZ_CM_COMPUTE                                                                                              \
  [[unroll]] for (int kk = 0; kk < FZ_CM_BK; kk += FZ_CM_K) {                                                      \
    FZ_CM_MA a[FZ_CM_RM];                                                                                          \
    FZ_CM_MB b[FZ_CM_RN];                                                                                          \
    [[unroll]] for (int i = 0; i < FZ_CM_RM; ++i)                                                                  \
      coopMatLoadNV(a[i], fz_cm_a, uint(FZ_CM_AH((wm * FZ_CM_RM + i) * FZ_CM_M, kk) / FZ_CM_VA), \
                    uint(FZ_CM_ALD / FZ_CM_VA), FZ_CM_ACOLMAJOR);                                                  \
    [[unroll]] for (int j = 0; j < FZ_CM_RN; ++j)                                                                  \
      coopMatLoadNV(b[j], fz_cm_b, uint(FZ_CM_BH(kk, (wn * FZ_CM_RN + j) * FZ_CM_N) / FZ_CM_VB), \
                    uint(FZ_CM_BLD / FZ_CM_VB), FZ_CM_BCOLMAJOR);                                                  \
    [[unroll]] for (int i = 0; i < FZ_CM_RM; ++i)                                                                  \
      [[unroll]] for (int j = 0; j < FZ_CM_RN; ++j) acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);            \
  }
#endif

// Group g of a slice: its first element. A group runs along the operand's unit-stride
// direction (A: k when FZ_A_SK == 1, else m; B: n when FZ_B_SN == 1 or FZ_B_SK != 1, else k),
// so consecutive threads read consecutive memory.
void fz_cm_a_at(int g, out int mm, out int kk) {
  const bool k_fast = FZ_A_SK == 1;
  kk = k_fast ? (g % (FZ_CM_BK / FZ_CM_VA)) * FZ_CM_VA : g / (FZ_CM_BM / FZ_CM_VA);
  mm = k_fast ? g / (FZ_CM_BK / FZ_CM_VA) : (g % (FZ_CM_BM / FZ_CM_VA)) * FZ_CM_VA;
}
void fz_cm_b_at(int g, out int kk, out int nn) {
  const bool n_fast = FZ_B_SN == 1 || FZ_B_SK != 1;
  nn = n_fast ? (g % (FZ_CM_BN / FZ_CM_VB)) * FZ_CM_VB : g / (FZ_CM_BK / FZ_CM_VB);
  kk = n_fast ? g / (FZ_CM_BN / FZ_CM_VB) : (g % (FZ_CM_BK / FZ_CM_VB)) * FZ_CM_VB;
}

// This thread's share of the K slice at k0, from memory into registers. Out-of-range elements
// are 0. With vector loads (FZ_CM_VA / VB > 1, FZ_LOAD_AV / BV from the dialect) the operand's
// extent along the group direction, its other strides and its offset are multiples of the
// group size, so a group is wholly in or out of range and its first element is aligned.
void fz_cm_fetch(fz_idx abase, fz_idx bbase, fz_idx row0, fz_idx col0, fz_idx k0, int tid, out FZ_CM_RA ra[FZ_CM_LA],
                 out FZ_CM_RB rb[FZ_CM_LB]) {
  [[unroll]] for (int r = 0; r < FZ_CM_LA; ++r) {
    const int g = tid + r * FZ_CM_T;
    int mm, kk;
    fz_cm_a_at(g, mm, kk);
    const fz_idx gm = row0 + mm, gk = k0 + kk;
    const bool live = g < FZ_CM_GA && gm < FZ_M && gk < FZ_K;
#if FZ_CM_VA > 1
    ra[r] = live ? FZ_LOAD_AV(abase + gm * FZ_A_SM + gk * FZ_A_SK) : FZ_CM_RA(0u);
#else
    ra[r] = float16_t(live ? FZ_LOAD_A(abase + gm * FZ_A_SM + gk * FZ_A_SK) : 0.0f);
#endif
  }
  [[unroll]] for (int r = 0; r < FZ_CM_LB; ++r) {
    const int g = tid + r * FZ_CM_T;
    int kk, nn;
    fz_cm_b_at(g, kk, nn);
    const fz_idx gn = col0 + nn, gk = k0 + kk;
    const bool live = g < FZ_CM_GB && gn < FZ_N && gk < FZ_K;
#if FZ_CM_VB > 1
    rb[r] = live ? FZ_LOAD_BV(bbase + gk * FZ_B_SK + gn * FZ_B_SN) : FZ_CM_RB(0u);
#else
    rb[r] = float16_t(live ? FZ_LOAD_B(bbase + gk * FZ_B_SK + gn * FZ_B_SN) : 0.0f);
#endif
  }
}

// Registers -> the shared slices (the fetch's element order), one store a group.
void fz_cm_stage(int tid, FZ_CM_RA ra[FZ_CM_LA], FZ_CM_RB rb[FZ_CM_LB]) {
  [[unroll]] for (int r = 0; r < FZ_CM_LA; ++r) {
    const int g = tid + r * FZ_CM_T;
    int mm, kk;
    fz_cm_a_at(g, mm, kk);
    if (g < FZ_CM_GA) fz_cm_a[FZ_CM_AH(mm, kk) / FZ_CM_VA] = ra[r];
  }
  [[unroll]] for (int r = 0; r < FZ_CM_LB; ++r) {
    const int g = tid + r * FZ_CM_T;
    int kk, nn;
    fz_cm_b_at(g, kk, nn);
    if (g < FZ_CM_GB) fz_cm_b[FZ_CM_BH(kk, nn) / FZ_CM_VB] = rb[r];
  }
}

void main() {
  const int tid = int(gl_LocalInvocationID.x);
  const int wm = int(gl_SubgroupID) / FZ_CM_WN, wn = int(gl_SubgroupID) % FZ_CM_WN;
  const fz_idx tiles_m = (fz_idx(FZ_M) + FZ_CM_BM - 1) / FZ_CM_BM;
  const fz_idx tiles_n = (fz_idx(FZ_N) + FZ_CM_BN - 1) / FZ_CM_BN;
  const fz_idx tiles = tiles_m * tiles_n * FZ_BATCH;
  // Grid-stride over work items w = tile * FZ_SPLIT_K + slice: the loop bound is uniform, so
  // the barriers below are too.
  for (fz_idx w = fz_idx(fz_group_id()); w < tiles * FZ_SPLIT_K; w += fz_idx(fz_num_groups())) {
    const fz_idx t = w / FZ_SPLIT_K;
    const int slice = int(w - t * FZ_SPLIT_K);
    const fz_idx batch = t / (tiles_m * tiles_n);
    const fz_idx rem = t - batch * (tiles_m * tiles_n);
#ifdef FZ_TILE_N_MAJOR  // consecutive work items share a B column strip (read once from DRAM)
    const fz_idx row0 = (rem % tiles_m) * FZ_CM_BM, col0 = (rem / tiles_m) * FZ_CM_BN;
#else
    const fz_idx row0 = (rem / tiles_n) * FZ_CM_BM, col0 = (rem % tiles_n) * FZ_CM_BN;
#endif
    const fz_idx abase = fz_a_base(batch), bbase = fz_b_base(batch);
    // This work item's K range. FZ_SPLIT_SLICE is a multiple of FZ_CM_BK, so only the last
    // slice can end inside a step, where the fetch's gk < FZ_K zero-fills as without split.
    const fz_idx kbeg = fz_idx(slice) * FZ_SPLIT_SLICE;
    const fz_idx kend = kbeg + FZ_SPLIT_SLICE < fz_idx(FZ_K) ? kbeg + FZ_SPLIT_SLICE : fz_idx(FZ_K);
#ifdef FZ_CM_EMULATE
    float acc[FZ_CM_EL];
    for (int i = 0; i < FZ_CM_EL; ++i) acc[i] = 0.0f;
#else
    FZ_CM_ACC acc[FZ_CM_RM][FZ_CM_RN];
    [[unroll]] for (int i = 0; i < FZ_CM_RM; ++i)
      [[unroll]] for (int j = 0; j < FZ_CM_RN; ++j) acc[i][j] = FZ_CM_ZERO;
#endif
    FZ_CM_RA ra[FZ_CM_LA];
    FZ_CM_RB rb[FZ_CM_LB];
    // Software pipelining: the next slice's loads are issued before this slice's matrix
    // operations, so their latency overlaps the math instead of following it.
    fz_cm_fetch(abase, bbase, row0, col0, kbeg, tid, ra, rb);
    for (fz_idx k0 = kbeg; k0 < kend; k0 += FZ_CM_BK) {
      fz_cm_stage(tid, ra, rb);
      memoryBarrierShared();
      barrier();
      if (k0 + FZ_CM_BK < kend) fz_cm_fetch(abase, bbase, row0, col0, k0 + FZ_CM_BK, tid, ra, rb);
      FZ_CM_COMPUTE
      memoryBarrierShared();
      barrier();
    }
#ifdef FZ_CM_EMULATE
    for (int i = 0; i < FZ_CM_EL; ++i) {
      const int e = tid + i * FZ_CM_T;
      if (e < FZ_CM_BM * FZ_CM_BN) fz_cm_c[(e / FZ_CM_BN) * FZ_CM_CS + e % FZ_CM_BN] = acc[i];
    }
#else
    [[unroll]] for (int i = 0; i < FZ_CM_RM; ++i)
      [[unroll]] for (int j = 0; j < FZ_CM_RN; ++j)
        FZ_CM_STORE(acc[i][j], uint(((wm * FZ_CM_RM + i) * FZ_CM_M) * FZ_CM_CS + (wn * FZ_CM_RN + j) * FZ_CM_N), uint(FZ_CM_CS));
#endif
    memoryBarrierShared();
    barrier();
#if FZ_SPLIT_K > 1
    // Split-K: this slice's fp32 partial tile to the workspace (element e of the row-major
    // BM x BN tile at fz_split.part[w * BM * BN + e], coalesced), then the tile's counter; the
    // last of its FZ_SPLIT_K work items to arrive adds the partials and runs the epilogue.
    // Memory model (this module uses the Vulkan one): fz_split is coherent (its accesses are
    // non-private, made available / visible at queue-family scope, which holds every workgroup
    // of the dispatch). The barrier makes every thread's partial stores happen-before thread
    // 0's counter increment, a release at that scope; the last arrival's increment reads the
    // value of the release sequence of all earlier increments (acquire), and the barrier after
    // it makes that happen-before every thread's partial loads.
    const fz_idx part = w * (FZ_CM_BM * FZ_CM_BN);
    for (int e = tid; e < FZ_CM_BM * FZ_CM_BN; e += FZ_CM_T)
      fz_split.part[part + e] = fz_cm_c[(e / FZ_CM_BN) * FZ_CM_CS + e % FZ_CM_BN];
    controlBarrier(gl_ScopeWorkgroup, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer | gl_StorageSemanticsShared,
                   gl_SemanticsAcquireRelease | gl_SemanticsMakeAvailable | gl_SemanticsMakeVisible);
    if (tid == 0)
      FZ_CM_LAST = atomicAdd(fz_split.cnt[t], 1u, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer,
                             gl_SemanticsAcquireRelease | gl_SemanticsMakeAvailable | gl_SemanticsMakeVisible) == uint(FZ_SPLIT_K - 1)
                       ? 1.0f
                       : 0.0f;
    controlBarrier(gl_ScopeWorkgroup, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer | gl_StorageSemanticsShared,
                   gl_SemanticsAcquireRelease | gl_SemanticsMakeAvailable | gl_SemanticsMakeVisible);
    // Uniform: every thread read the same shared flag. Nothing below is skipped that the next
    // work item needs: its first shared writes follow barriers every thread passes.
    if (FZ_CM_LAST == 0.0f) continue;
    const fz_idx first = t * FZ_SPLIT_K * (FZ_CM_BM * FZ_CM_BN);
    {
      // Slices added in order 0, 1, ... (the same order every run: deterministic), all read
      // back from the workspace, this work item's own too (the bits it stored); the sums
      // replace the thread's own elements of fz_cm_c (the epilogue below reads the same
      // elements, so no barrier). Slice-outer with the thread's elements unrolled inside: each
      // slice's loads are independent and overlap (element-outer, every element waited for
      // S - 1 dependent loads in turn).
      float fz_sum[FZ_CM_PE];
      [[unroll]] for (int r = 0; r < FZ_CM_PE; ++r) {
        const int e = tid + r * FZ_CM_T;
        fz_sum[r] = e < FZ_CM_BM * FZ_CM_BN ? fz_split.part[first + e] : 0.0f;
      }
      for (int s = 1; s < FZ_SPLIT_K; ++s) {
        const fz_idx base = first + fz_idx(s) * (FZ_CM_BM * FZ_CM_BN);
        [[unroll]] for (int r = 0; r < FZ_CM_PE; ++r) {
          const int e = tid + r * FZ_CM_T;
          if (e < FZ_CM_BM * FZ_CM_BN) {
            precise float sum = fz_sum[r] + fz_split.part[base + e];
            fz_sum[r] = sum;
          }
        }
      }
      [[unroll]] for (int r = 0; r < FZ_CM_PE; ++r) {
        const int e = tid + r * FZ_CM_T;
        if (e < FZ_CM_BM * FZ_CM_BN) fz_cm_c[(e / FZ_CM_BN) * FZ_CM_CS + e % FZ_CM_BN] = fz_sum[r];
      }
    }
#endif
    for (int e = tid; e < FZ_CM_BM * FZ_CM_BN; e += FZ_CM_T) {
      const int mm = e / FZ_CM_BN, nn = e % FZ_CM_BN;
      const fz_idx m = row0 + mm, n = col0 + nn;
      if (m >= FZ_M || n >= FZ_N) continue;
      FZ_EPILOGUE(fz_cm_c[mm * FZ_CM_CS + nn], (batch * FZ_M + m) * FZ_N + n);
    }
#if FZ_SPLIT_K > 1
    if (tid == 0) fz_split.cnt[t] = 0u;  // every slice of tile t has arrived: ready for the next replay
#endif
    memoryBarrierShared();
    barrier();
  }
}
