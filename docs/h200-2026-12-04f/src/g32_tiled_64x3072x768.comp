#version 450
#define FZ_FMA_FUSED 1
#extension GL_EXT_control_flow_attributes : require
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
#define fz_idx int
#define FZ_KERNEL_NAME fz_kernel
#define FZ_GROUP_SIZE 256
#define fz_add(a, b) ((a) + (b))
#define fz_mul(a, b) ((a) * (b))
layout(std430, set = 0, binding = 0) restrict readonly buffer B0 { float d[]; } b0;
layout(std430, set = 0, binding = 1) restrict readonly buffer B1 { float d[]; } b1;
layout(std430, set = 0, binding = 2) restrict buffer B2 { float d[]; } b2;
layout(std430, set = 0, binding = 3) coherent buffer FzSplit { uint cnt[12]; float part[]; } fz_split;
layout(std430, set = 0, binding = 0) readonly buffer B0v { vec4 d[]; } b0v;
layout(std430, set = 0, binding = 1) readonly buffer B1v { vec4 d[]; } b1v;
#define FZ_M 64
#define FZ_N 768
#define FZ_K 3072
#define FZ_BATCH 1
#define FZ_A_SM 3072
#define FZ_A_SK 1
#define FZ_B_SK 768
#define FZ_B_SN 1
#define FZ_TILES 132
#define FZ_SKINNY 0
#define FZ_SPLIT_K 11
#define FZ_SPLIT_SLICE 288
#define FZ_BLOCKED 1
#define FZ_PREFETCH 2
#define FZ_A_VEC4 1
#define FZ_LOAD_A4(off) b0v.d[((off)) / 4]
#define FZ_B_VEC4 1
#define FZ_LOAD_B4(off) b1v.d[((off)) / 4]
#define FZ_B_BYTES 4
#define FZ_LOAD_A(off) b0.d[(off)]
#define FZ_LOAD_B(off) b1.d[(off)]
#define FZ_B_ELEM(off) b1.d[(off)]
#define FZ_B_KIND 1
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
  b2.d[c0] = acc;
}
#define FZ_EPILOGUE(acc, i) fz_epilogue((acc), (i))
// Tiled GEMM template (Vulkan backend): C[batch, m, n] = sum_k A[batch, m, k] * B[batch, k, n],
// each element handed to FZ_EPILOGUE (bias, activation, residual ... fused by the emitter).
//
// Embedding: the first and last three lines let C++ #include this file as a raw string
// (backends/vulkan/vk_dialect.cpp strips them); GLSL skips them. gemm.comp checks it with glslc.
// Contract (backends/codegen.h, "Contraction templates"): the emitter defines fz_idx, FZ_M,
// FZ_N, FZ_K, FZ_BATCH, FZ_A_SM, FZ_A_SK, FZ_B_SK, FZ_B_SN, FZ_LOAD_A/B(off), fz_a_base/
// fz_b_base(batch), FZ_EPILOGUE(acc, i); the Vulkan prelude defines fz_group_id()/fz_num_groups().
// Strided A/B views (transposes, broadcast batches) are read through the strides, so no
// transpose kernel ever runs.
//
// Blocking: a workgroup owns a BM x BN output tile and walks K in BK slices staged in shared
// memory; each thread accumulates TM x TN outputs in registers, its rows/columns interleaved
// with stride BM/TM, BN/TN so that neighbouring threads store neighbouring columns (coalesced
// epilogue) and read neighbouring shared-memory words. Tile sizes are specialization
// constants chosen by the host (vk_dialect.cpp choose_tiles); local size = (BM/TM)*(BN/TN).
// Double buffering: the shared slices come in two copies; while the FMAs run on slice k from
// one copy, the thread's share of slice k+1 is already loading from global memory into
// registers and is stored into the other copy afterwards, so each K step has one barrier and
// the load latency hides behind the arithmetic.
// Split-K (FZ_SPLIT_K > 1, the Vulkan dialect defines it when the tile grid cannot fill the
// device): work item w = tile * FZ_SPLIT_K + slice covers K range [slice * FZ_SPLIT_SLICE,
// +FZ_SPLIT_SLICE) (a multiple of BK). Each workgroup stores its fp32 partial tile in the
// workspace fz_split.part and bumps the tile's counter fz_split.cnt; the last to arrive adds
// the FZ_SPLIT_K partials in slice order 0, 1, ... (the same order every run, so results are
// deterministic), runs FZ_EPILOGUE once on the sum and zeroes the counter for the next replay.
// Vector loads (FZ_A_VEC4 / FZ_B_VEC4, the Vulkan dialect defines them with FZ_LOAD_A4/B4(off),
// which return a vec4, when an operand's unit-stride direction is A's K / B's N and every
// group of 4 starts aligned: fp32 as one vec4, fp16 as one f16vec4, bf16 as one uvec2 of packed
// bf16, each converted exactly): a thread stages 4 consecutive elements with one load;
// otherwise scalar loads through the view's strides.
// Shared slices: each k row is padded (FZ_AP = BM + pad floats) so that staging stores walking
// down a column (A read along K, B transposed) spread over the banks instead of hitting one.
// Blocked register tiles (FZ_BLOCKED, the dialect defines it for the bigger blocks: TM, TN in
// {4, 8}, 16 x 16 threads): thread (tx, ty) owns rows ty * 4 + {0..3} (+ BM / 2 when TM = 8)
// and the same groups of 4 columns, read from shared memory as vec4 (the slices are vec4
// arrays, rows padded by 4 floats to stay 16-byte aligned): per k step TM/4 + TN/4 vector
// reads feed TM * TN FMAs, against TM + TN scalar reads in the interleaved layout.
// The register-block loops are [[unroll]] (GL_EXT_control_flow_attributes, in every Vulkan
// prelude): their trip counts are specialization constants, and fz_acc stays in registers only
// when every index into it is constant after unrolling.
// FZ_SKINNY (the emitter's matmul_config defines it for M <= 8): 1 the first GEMV-like path,
// 2 the vector GEMV path (split K across workgroups, 4 columns per thread), both at the end of
// this file.
// FZ_TILE_LITERALS (the dialect defines it with FUSOR_VK_GEMM_LITERAL=1): the tile sizes are
// literals (FZ_TILE_BM ...) instead of specialization constants, so spirv-opt can fully unroll
// the [[unroll]] loops before the driver sees them (an A/B for the big register blocks, which
// ran 3-30x slower than 4x4 on the H200 with the sizes as specialization constants).
layout(local_size_x_id = 0) in;
#ifdef FZ_TILE_LITERALS
const int FZ_BM = FZ_TILE_BM;
const int FZ_BN = FZ_TILE_BN;
const int FZ_BK = FZ_TILE_BK;
const int FZ_TM = FZ_TILE_TM;
const int FZ_TN = FZ_TILE_TN;
#else
layout(constant_id = 1) const int FZ_BM = 64;
layout(constant_id = 2) const int FZ_BN = 64;
layout(constant_id = 3) const int FZ_BK = 16;
layout(constant_id = 4) const int FZ_TM = 4;
layout(constant_id = 5) const int FZ_TN = 4;
#endif

#if FZ_SKINNY == 0
#ifndef FZ_SPLIT_K
#define FZ_SPLIT_K 1
#endif
#ifndef FZ_SPLIT_SLICE
#define FZ_SPLIT_SLICE FZ_K
#endif
const int FZ_THREADS = (FZ_BM / FZ_TM) * (FZ_BN / FZ_TN);
const int FZ_LA = (FZ_BK * FZ_BM + FZ_THREADS - 1) / FZ_THREADS;  // A elements a thread stages per slice
const int FZ_LB = (FZ_BK * FZ_BN + FZ_THREADS - 1) / FZ_THREADS;
#ifndef FZ_A_VEC4
#define FZ_A_VEC4 0
#endif
#ifndef FZ_B_VEC4
#define FZ_B_VEC4 0
#endif
const int FZ_LA4 = (FZ_BK / 4 * FZ_BM + FZ_THREADS - 1) / FZ_THREADS;  // vec4 groups per thread
const int FZ_LB4 = (FZ_BK * (FZ_BN / 4) + FZ_THREADS - 1) / FZ_THREADS;
#ifndef FZ_BLOCKED
#define FZ_BLOCKED 0
#endif
// Two A slices, k-major: element (p, k, m) at p * BK * AP + k * AP + m; B likewise with BP.
#if FZ_BLOCKED
const int FZ_AP = FZ_BM + 4, FZ_BP = FZ_BN + 4;  // multiples of 4: vec4 rows stay aligned
shared vec4 fz_as[2 * FZ_BK * FZ_AP / 4];
shared vec4 fz_bs[2 * FZ_BK * FZ_BP / 4];
#define FZ_AS_SET(i, v) fz_as[(i) >> 2][(i) & 3] = (v)  // one 32-bit store (a component access chain)
#define FZ_BS_SET(i, v) fz_bs[(i) >> 2][(i) & 3] = (v)
const int FZ_GM = FZ_TM / 4, FZ_GN = FZ_TN / 4;  // groups of 4 rows / columns per thread
// Row / column of register i / j inside the tile.
#define FZ_ROW(i) (((i) >> 2) * (FZ_BM / FZ_GM) + ty * 4 + ((i) & 3))
#define FZ_COL(j) (((j) >> 2) * (FZ_BN / FZ_GN) + tx * 4 + ((j) & 3))
#else
const int FZ_AP = FZ_BM + 2, FZ_BP = FZ_BN + 2;  // +2: a column of 16 k rows covers 32 banks
shared float fz_as[2 * FZ_BK * FZ_AP];
shared float fz_bs[2 * FZ_BK * FZ_BP];
#define FZ_AS_SET(i, v) fz_as[i] = (v)
#define FZ_BS_SET(i, v) fz_bs[i] = (v)
#define FZ_ROW(i) (ty + (i) * (FZ_BM / FZ_TM))
#define FZ_COL(j) (tx + (j) * (FZ_BN / FZ_TN))
#endif
#if FZ_SPLIT_K > 1
shared bool fz_split_last;
#endif

void main() {
  const int threads = FZ_THREADS;
  const int tid = int(gl_LocalInvocationID.x);
  const int tx = tid % (FZ_BN / FZ_TN), ty = tid / (FZ_BN / FZ_TN);
  const fz_idx tiles_m = (fz_idx(FZ_M) + FZ_BM - 1) / FZ_BM;
  const fz_idx tiles_n = (fz_idx(FZ_N) + FZ_BN - 1) / FZ_BN;
  const fz_idx tiles = tiles_m * tiles_n * FZ_BATCH;
  // Consecutive threads walk the operand's unit-stride direction when staging.
  const bool k_fast = FZ_A_SK == 1;
  const bool n_fast = FZ_B_SN == 1 || FZ_B_SK != 1;
#if FZ_A_VEC4
  vec4 ra[FZ_LA4];
#else
  float ra[FZ_LA];
#endif
#if FZ_B_VEC4
  vec4 rb[FZ_LB4];
#else
  float rb[FZ_LB];
#endif
#ifndef FZ_PREFETCH
#define FZ_PREFETCH 1
#endif
#if FZ_PREFETCH == 2  // the second register set
#if FZ_A_VEC4
  vec4 ra2[FZ_LA4];
#else
  float ra2[FZ_LA];
#endif
#if FZ_B_VEC4
  vec4 rb2[FZ_LB4];
#else
  float rb2[FZ_LB];
#endif
#endif
  // Grid-stride over work items: the loop bound is uniform, so the barriers below are too.
  for (fz_idx w = fz_idx(fz_group_id()); w < tiles * FZ_SPLIT_K; w += fz_idx(fz_num_groups())) {
    const fz_idx t = w / FZ_SPLIT_K;
    const int slice = int(w - t * FZ_SPLIT_K);
    const fz_idx batch = t / (tiles_m * tiles_n);
    const fz_idx rem = t - batch * (tiles_m * tiles_n);
#ifdef FZ_TILE_N_MAJOR  // consecutive work items share a B column strip (read once from DRAM)
    const fz_idx row0 = (rem % tiles_m) * FZ_BM, col0 = (rem / tiles_m) * FZ_BN;
#else
    const fz_idx row0 = (rem / tiles_n) * FZ_BM, col0 = (rem % tiles_n) * FZ_BN;
#endif
    const fz_idx abase = fz_a_base(batch), bbase = fz_b_base(batch);
    const fz_idx kbeg = fz_idx(slice) * FZ_SPLIT_SLICE;
    const fz_idx kend = kbeg + FZ_SPLIT_SLICE < fz_idx(FZ_K) ? kbeg + FZ_SPLIT_SLICE : fz_idx(FZ_K);
    float fz_acc[FZ_TM * FZ_TN];
    [[unroll]] for (int i = 0; i < FZ_TM * FZ_TN; ++i) fz_acc[i] = 0.0f;
    // Global -> registers (this thread's elements e = tid + r * threads of slice k0) and
    // registers -> shared copy p. Out-of-range elements (edges, K tail) are zeros.
#if FZ_A_VEC4  // 4 consecutive k per load: K % 4 == 0, so a group is all in range or all out
#define FZ_FETCH_A(k0, RA)                                                                                   \
    [[unroll]] for (int r = 0; r < FZ_LA4; ++r) {                                                                     \
      const int e = tid + r * threads;                                                                     \
      const int kk = (e % (FZ_BK / 4)) * 4, mm = e / (FZ_BK / 4);                                          \
      const fz_idx gm = row0 + mm, gk = (k0) + kk;                                                         \
      RA[r] = (e < FZ_BK / 4 * FZ_BM && gm < FZ_M && gk < FZ_K) ? FZ_LOAD_A4(abase + gm * FZ_A_SM + gk) : vec4(0.0f); \
    }
#define FZ_STAGE_A(p, RA)                                                                                  \
    [[unroll]] for (int r = 0; r < FZ_LA4; ++r) {                                                                     \
      const int e = tid + r * threads;                                                                     \
      const int kk = (e % (FZ_BK / 4)) * 4, mm = e / (FZ_BK / 4);                                          \
      if (e < FZ_BK / 4 * FZ_BM)                                                                           \
        [[unroll]] for (int c = 0; c < 4; ++c) FZ_AS_SET((p) * FZ_BK * FZ_AP + (kk + c) * FZ_AP + mm, RA[r][c]);       \
    }
#else
#define FZ_FETCH_A(k0, RA)                                                                                   \
    [[unroll]] for (int r = 0; r < FZ_LA; ++r) {                                                                      \
      const int e = tid + r * threads;                                                                     \
      const int kk = k_fast ? e % FZ_BK : e / FZ_BM, mm = k_fast ? e / FZ_BK : e % FZ_BM;                  \
      const fz_idx gm = row0 + mm, gk = (k0) + kk;                                                         \
      RA[r] = (e < FZ_BK * FZ_BM && gm < FZ_M && gk < FZ_K) ? FZ_LOAD_A(abase + gm * FZ_A_SM + gk * FZ_A_SK) : 0.0f; \
    }
#define FZ_STAGE_A(p, RA)                                                                                  \
    [[unroll]] for (int r = 0; r < FZ_LA; ++r) {                                                                      \
      const int e = tid + r * threads;                                                                     \
      const int kk = k_fast ? e % FZ_BK : e / FZ_BM, mm = k_fast ? e / FZ_BK : e % FZ_BM;                  \
      if (e < FZ_BK * FZ_BM) FZ_AS_SET((p) * FZ_BK * FZ_AP + kk * FZ_AP + mm, RA[r]);                       \
    }
#endif
#if FZ_B_VEC4  // 4 consecutive n per load: N % 4 == 0
#if FZ_BLOCKED  // nn and BP are multiples of 4: the group is one aligned vec4 of the slice
#define FZ_STORE_B4(i, v) fz_bs[(i) >> 2] = (v)
#else
#define FZ_STORE_B4(i, v) [[unroll]] for (int c = 0; c < 4; ++c) fz_bs[(i) + c] = (v)[c]
#endif
#define FZ_FETCH_B(k0, RB)                                                                                 \
    [[unroll]] for (int r = 0; r < FZ_LB4; ++r) {                                                                     \
      const int e = tid + r * threads;                                                                     \
      const int nn = (e % (FZ_BN / 4)) * 4, kk = e / (FZ_BN / 4);                                          \
      const fz_idx gn = col0 + nn, gk = (k0) + kk;                                                         \
      RB[r] = (e < FZ_BK * (FZ_BN / 4) && gn < FZ_N && gk < FZ_K) ? FZ_LOAD_B4(bbase + gk * FZ_B_SK + gn) : vec4(0.0f); \
    }
#define FZ_STAGE_B(p, RB)                                                                                  \
    [[unroll]] for (int r = 0; r < FZ_LB4; ++r) {                                                                     \
      const int e = tid + r * threads;                                                                     \
      const int nn = (e % (FZ_BN / 4)) * 4, kk = e / (FZ_BN / 4);                                          \
      if (e < FZ_BK * (FZ_BN / 4)) FZ_STORE_B4((p) * FZ_BK * FZ_BP + kk * FZ_BP + nn, RB[r]);              \
    }
#else
#define FZ_FETCH_B(k0, RB)                                                                                 \
    [[unroll]] for (int r = 0; r < FZ_LB; ++r) {                                                                      \
      const int e = tid + r * threads;                                                                     \
      const int nn = n_fast ? e % FZ_BN : e / FZ_BK, kk = n_fast ? e / FZ_BN : e % FZ_BK;                  \
      const fz_idx gn = col0 + nn, gk = (k0) + kk;                                                         \
      RB[r] = (e < FZ_BK * FZ_BN && gn < FZ_N && gk < FZ_K) ? FZ_LOAD_B(bbase + gk * FZ_B_SK + gn * FZ_B_SN) : 0.0f; \
    }
#define FZ_STAGE_B(p, RB)                                                                                  \
    [[unroll]] for (int r = 0; r < FZ_LB; ++r) {                                                                      \
      const int e = tid + r * threads;                                                                     \
      const int nn = n_fast ? e % FZ_BN : e / FZ_BK, kk = n_fast ? e / FZ_BN : e % FZ_BK;                  \
      if (e < FZ_BK * FZ_BN) FZ_BS_SET((p) * FZ_BK * FZ_BP + kk * FZ_BP + nn, RB[r]);                       \
    }
#endif
#define FZ_FETCH(k0, RA, RB) FZ_FETCH_A(k0, RA) FZ_FETCH_B(k0, RB)
#define FZ_STAGE(p, RA, RB) FZ_STAGE_A(p, RA) FZ_STAGE_B(p, RB)
    // One K slice (BK deep) of the tile from shared copy p into the accumulators.
#if FZ_BLOCKED
#define FZ_COMPUTE(p)                                                                                      \
    {                                                                                                      \
      const int as0 = (p) * FZ_BK * FZ_AP, bs0 = (p) * FZ_BK * FZ_BP;                                      \
      [[unroll]] for (int kk = 0; kk < FZ_BK; ++kk) {                                                      \
        vec4 a[FZ_GM], b[FZ_GN];                                                                           \
        [[unroll]] for (int g = 0; g < FZ_GM; ++g) a[g] = fz_as[(as0 + kk * FZ_AP + g * (FZ_BM / FZ_GM) + ty * 4) >> 2]; \
        [[unroll]] for (int g = 0; g < FZ_GN; ++g) b[g] = fz_bs[(bs0 + kk * FZ_BP + g * (FZ_BN / FZ_GN) + tx * 4) >> 2]; \
        [[unroll]] for (int i = 0; i < FZ_TM; ++i)                                                         \
          [[unroll]] for (int j = 0; j < FZ_TN; ++j) fz_acc[i * FZ_TN + j] = fma(a[i >> 2][i & 3], b[j >> 2][j & 3], fz_acc[i * FZ_TN + j]); \
      }                                                                                                    \
    }
#else
#define FZ_COMPUTE(p)                                                                                      \
    {                                                                                                      \
      const int as0 = (p) * FZ_BK * FZ_AP, bs0 = (p) * FZ_BK * FZ_BP;                                      \
      [[unroll]] for (int kk = 0; kk < FZ_BK; ++kk) {                                                      \
        float a[FZ_TM], b[FZ_TN];                                                                          \
        [[unroll]] for (int i = 0; i < FZ_TM; ++i) a[i] = fz_as[as0 + kk * FZ_AP + FZ_ROW(i)];             \
        [[unroll]] for (int j = 0; j < FZ_TN; ++j) b[j] = fz_bs[bs0 + kk * FZ_BP + FZ_COL(j)];             \
        [[unroll]] for (int i = 0; i < FZ_TM; ++i)                                                         \
          [[unroll]] for (int j = 0; j < FZ_TN; ++j) fz_acc[i * FZ_TN + j] = fma(a[i], b[j], fz_acc[i * FZ_TN + j]); \
      }                                                                                                    \
    }
#endif
#if FZ_PREFETCH == 2
    // Two K slices in flight (the default; FUSOR_VK_GEMM_PREFETCH=1 for one): slice s + 2 is fetched into one
    // register set while slice s + 1 waits in the other, so a fetch has two steps of FMAs to
    // arrive in, not one (the tiles of GPT-2's M = 64 layers run one workgroup per SM and wait
    // on DRAM otherwise). Steps go in pairs so each set's index is a constant; the slices are
    // added in the same order as below, so results are the same bits.
    FZ_FETCH(kbeg, ra, rb)
    FZ_STAGE(0, ra, rb)
    if (kbeg + FZ_BK < kend) {
      FZ_FETCH(kbeg + FZ_BK, ra2, rb2)
    }
    memoryBarrierShared();
    barrier();
    for (fz_idx k0 = kbeg; k0 < kend; k0 += 2 * FZ_BK) {
      // Even step: shared 0 holds slice k0, set 2 slice k0 + BK; set 1 (ra/rb) is free.
      if (k0 + 2 * FZ_BK < kend) {
        FZ_FETCH(k0 + 2 * FZ_BK, ra, rb)
      }
      FZ_COMPUTE(0)
      if (k0 + FZ_BK < kend) {
        FZ_STAGE(1, ra2, rb2)
      }
      memoryBarrierShared();
      barrier();
      if (k0 + FZ_BK < kend) {  // uniform
        // Odd step: shared 1 holds slice k0 + BK, set 1 slice k0 + 2 BK; set 2 is free.
        if (k0 + 3 * FZ_BK < kend) {
          FZ_FETCH(k0 + 3 * FZ_BK, ra2, rb2)
        }
        FZ_COMPUTE(1)
        if (k0 + 2 * FZ_BK < kend) {
          FZ_STAGE(0, ra, rb)
        }
        memoryBarrierShared();
        barrier();
      }
    }
#else
    FZ_FETCH(kbeg, ra, rb)
    FZ_STAGE(0, ra, rb)
    memoryBarrierShared();
    barrier();
    int p = 0;
    for (fz_idx k0 = kbeg; k0 < kend; k0 += FZ_BK) {
      const bool more = k0 + FZ_BK < kend;  // uniform
      if (more) {
        FZ_FETCH(k0 + FZ_BK, ra, rb)
      }
      FZ_COMPUTE(p)
      // The other copy was last read before the previous step's barrier.
      if (more) {
        FZ_STAGE(1 - p, ra, rb)
      }
      memoryBarrierShared();
      barrier();
      p = 1 - p;
    }
#endif
#undef FZ_COMPUTE
#undef FZ_FETCH
#undef FZ_STAGE
#undef FZ_FETCH_A
#undef FZ_FETCH_B
#undef FZ_STAGE_A
#undef FZ_STAGE_B
#if FZ_SPLIT_K > 1
    {
      // Partial tile out (thread-interleaved: coalesced), then elect the last arrival.
      const fz_idx part = w * (FZ_BM * FZ_BN);
      [[unroll]] for (int i = 0; i < FZ_TM * FZ_TN; ++i) fz_split.part[part + i * threads + tid] = fz_acc[i];
      memoryBarrierBuffer();
      barrier();
      if (tid == 0) fz_split_last = atomicAdd(fz_split.cnt[t], 1u) == uint(FZ_SPLIT_K - 1);
      memoryBarrierShared();
      barrier();
      if (!fz_split_last) continue;  // uniform: every thread read the same shared flag
      memoryBarrierBuffer();
      const fz_idx first = t * FZ_SPLIT_K * (FZ_BM * FZ_BN);
      // Slices added in order 0, 1, ... (the same order every run), all read back from the
      // workspace, this group's own too (the bits it stored). Slice-outer, the register block
      // inside: each slice's TM * TN loads are independent and overlap. Element-outer had
      // S - 1 dependent loads per accumulator, (S - 1) * TM * TN round trips to L2 in a row,
      // which made big register blocks with many slices 2-3x slower on the H200.
      [[unroll]] for (int i = 0; i < FZ_TM * FZ_TN; ++i) fz_acc[i] = fz_split.part[first + i * threads + tid];
      for (int s = 1; s < FZ_SPLIT_K; ++s) {
        const fz_idx base = first + fz_idx(s) * (FZ_BM * FZ_BN) + tid;
        [[unroll]] for (int i = 0; i < FZ_TM * FZ_TN; ++i) {
          precise float sum = fz_acc[i] + fz_split.part[base + i * threads];
          fz_acc[i] = sum;
        }
      }
      if (tid == 0) fz_split.cnt[t] = 0u;  // ready for the next replay
    }
#endif
    // No `continue` here: spirv-opt's unroller leaves a loop with one unrolled, and an fz_acc
    // index that is not constant sends the whole accumulator array to local memory.
    [[unroll]] for (int i = 0; i < FZ_TM; ++i) {
      const fz_idx m = row0 + FZ_ROW(i);
      [[unroll]] for (int j = 0; j < FZ_TN; ++j) {
        const fz_idx n = col0 + FZ_COL(j);
        if (m < FZ_M && n < FZ_N) FZ_EPILOGUE(fz_acc[i * FZ_TN + j], (batch * FZ_M + m) * FZ_N + n);
      }
    }
  }
}
#elif FZ_SKINNY == 1
// GEMV-like (M <= 8): a workgroup of FZ_SK_THREADS owns FZ_SK_COLS columns of one batch; its
// FZ_SK_THREADS / FZ_SK_COLS groups of threads stride over K (k = kg, kg + KG, ...) so B's rows
// are read in whole 32-byte sectors while N / FZ_SK_COLS big workgroups keep enough loads in
// flight to run at the memory's speed. The partial sums meet in shared memory and are added
// by a fixed tree (same order every run); group 0 runs the epilogue.
#define FZ_SK_KG (FZ_SK_THREADS / FZ_SK_COLS)
#define FZ_SK_M int(FZ_M)  // FZ_M is an int64 literal in 64-bit index mode
#ifndef FZ_SK_UNROLL
#define FZ_SK_UNROLL 1
#endif
shared float fz_part[FZ_SK_KG * FZ_SK_M * (FZ_SK_COLS + 1)];
void main() {
  const int tid = int(gl_LocalInvocationID.x), lane = tid % FZ_SK_COLS, kg = tid / FZ_SK_COLS;
  const fz_idx tiles_n = (fz_idx(FZ_N) + FZ_SK_COLS - 1) / FZ_SK_COLS;
  const fz_idx tiles = tiles_n * FZ_BATCH;
  for (fz_idx t = fz_idx(fz_group_id()); t < tiles; t += fz_idx(fz_num_groups())) {
    const fz_idx batch = t / tiles_n, n = (t % tiles_n) * FZ_SK_COLS + lane;
    const fz_idx abase = fz_a_base(batch), bbase = fz_b_base(batch);
    float acc[FZ_SK_M];
    for (int m = 0; m < FZ_SK_M; ++m) acc[m] = 0.0f;
    if (n < FZ_N) {
      // FZ_SK_UNROLL rounds of the K loop at a time: their B loads are issued together (more
      // loads in flight per thread), then the FMAs run in the same ascending k (same bits).
      for (fz_idx k0 = fz_idx(kg); k0 < FZ_K; k0 += FZ_SK_KG * FZ_SK_UNROLL) {
        float bu[FZ_SK_UNROLL];
        [[unroll]] for (int u = 0; u < FZ_SK_UNROLL; ++u) {
          const fz_idx k = k0 + fz_idx(u * FZ_SK_KG);
          bu[u] = 0.0f;
          if (k < FZ_K) bu[u] = FZ_LOAD_B(bbase + k * FZ_B_SK + n * FZ_B_SN);  // an if: no load past K
        }
        [[unroll]] for (int u = 0; u < FZ_SK_UNROLL; ++u) {
          const fz_idx k = k0 + fz_idx(u * FZ_SK_KG);
          if (k < FZ_K)
            for (int m = 0; m < FZ_SK_M; ++m) acc[m] = fma(FZ_LOAD_A(abase + m * FZ_A_SM + k * FZ_A_SK), bu[u], acc[m]);
        }
      }
    }
    for (int m = 0; m < FZ_SK_M; ++m) fz_part[(kg * FZ_SK_M + m) * (FZ_SK_COLS + 1) + lane] = acc[m];
    memoryBarrierShared();
    barrier();
    for (int s = FZ_SK_KG / 2; s > 0; s /= 2) {
      if (kg < s)
        for (int m = 0; m < FZ_SK_M; ++m)
          fz_part[(kg * FZ_SK_M + m) * (FZ_SK_COLS + 1) + lane] += fz_part[((kg + s) * FZ_SK_M + m) * (FZ_SK_COLS + 1) + lane];
      memoryBarrierShared();
      barrier();
    }
    if (kg == 0 && n < FZ_N)
      for (int m = 0; m < FZ_SK_M; ++m) FZ_EPILOGUE(fz_part[m * (FZ_SK_COLS + 1) + lane], (batch * FZ_M + m) * FZ_N + n);
    memoryBarrierShared();
    barrier();
  }
}
#else
// Vector GEMV (FZ_SKINNY 2, M <= 8; FUSOR_VK_GEMV=new, the default): work item w = tile *
// FZ_SPLIT_K + slice; a tile is FZ_SK_COLS columns of one batch, a slice FZ_SPLIT_SLICE rows of
// K. Lane l of a workgroup owns columns 4l .. 4l+3 of its tile and reads them as one vec4 per
// k (FZ_B_VEC4: B's N has unit stride and every 4-group is aligned; otherwise 4 scalar loads),
// so each load moves 16 bytes of fp32 (8 of fp16 / bf16); FZ_SK_THREADS / (FZ_SK_COLS / 4)
// groups of lanes stride over the slice's K. Partial sums meet in shared memory and are added
// by a fixed tree. With FZ_SPLIT_K > 1 (few tiles: a 1024-wide layer alone would leave most of
// the GPU idle) the slices' sums go through the tiled path's split-K workspace fz_split and
// the last workgroup to arrive adds them in slice order 0, 1, ... (deterministic), runs the
// epilogue and zeroes the tile's counter for the next replay.
#ifndef FZ_SPLIT_K
#define FZ_SPLIT_K 1
#endif
#ifndef FZ_SPLIT_SLICE
#define FZ_SPLIT_SLICE FZ_K
#endif
#ifndef FZ_B_VEC4
#define FZ_B_VEC4 0
#endif
#define FZ_GV_LANES (FZ_SK_COLS / 4)
#define FZ_GV_KG (FZ_SK_THREADS / FZ_GV_LANES)
#define FZ_SK_M int(FZ_M)  // FZ_M is an int64 literal in 64-bit index mode
#define FZ_GV_MC (FZ_SK_M * FZ_SK_COLS)  // outputs of one tile
shared vec4 fz_part[FZ_GV_KG * FZ_SK_M * FZ_GV_LANES];
#if FZ_SPLIT_K > 1
shared bool fz_split_last;
#endif
void main() {
  const int tid = int(gl_LocalInvocationID.x), lane = tid % FZ_GV_LANES, kg = tid / FZ_GV_LANES;
  const fz_idx tiles_n = (fz_idx(FZ_N) + FZ_SK_COLS - 1) / FZ_SK_COLS;
  const fz_idx tiles = tiles_n * FZ_BATCH;
  for (fz_idx w = fz_idx(fz_group_id()); w < tiles * FZ_SPLIT_K; w += fz_idx(fz_num_groups())) {
    const fz_idx t = w / FZ_SPLIT_K;
    const int slice = int(w - t * FZ_SPLIT_K);
    const fz_idx batch = t / tiles_n, col0 = (t % tiles_n) * FZ_SK_COLS, n = col0 + lane * 4;
    const fz_idx abase = fz_a_base(batch), bbase = fz_b_base(batch);
    const fz_idx kbeg = fz_idx(slice) * FZ_SPLIT_SLICE;
    const fz_idx kend = kbeg + FZ_SPLIT_SLICE < fz_idx(FZ_K) ? kbeg + FZ_SPLIT_SLICE : fz_idx(FZ_K);
    vec4 acc[FZ_SK_M];
    [[unroll]] for (int m = 0; m < FZ_SK_M; ++m) acc[m] = vec4(0.0f);
    if (n < FZ_N) {
      for (fz_idx k = kbeg + kg; k < kend; k += FZ_GV_KG) {
        const fz_idx off = bbase + k * FZ_B_SK + n * FZ_B_SN;
#if FZ_B_VEC4  // N % 4 == 0: the whole 4-group is in range
        const vec4 b = FZ_LOAD_B4(off);
#else
        vec4 b;
        [[unroll]] for (int c = 0; c < 4; ++c) b[c] = n + c < FZ_N ? FZ_LOAD_B(off + c * FZ_B_SN) : 0.0f;
#endif
        [[unroll]] for (int m = 0; m < FZ_SK_M; ++m) acc[m] = fma(vec4(FZ_LOAD_A(abase + m * FZ_A_SM + k * FZ_A_SK)), b, acc[m]);
      }
    }
    [[unroll]] for (int m = 0; m < FZ_SK_M; ++m) fz_part[(kg * FZ_SK_M + m) * FZ_GV_LANES + lane] = acc[m];
    memoryBarrierShared();
    barrier();
    for (int s = FZ_GV_KG / 2; s > 0; s /= 2) {
      if (kg < s)
        for (int m = 0; m < FZ_SK_M; ++m) fz_part[(kg * FZ_SK_M + m) * FZ_GV_LANES + lane] += fz_part[((kg + s) * FZ_SK_M + m) * FZ_GV_LANES + lane];
      memoryBarrierShared();
      barrier();
    }
    // Output i of the tile (row i / COLS, column i % COLS) is component j % 4 of group 0's lane
    // j / 4: every thread of the group takes outputs, so stores are coalesced.
#define FZ_GV_OWN(i) fz_part[((i) / FZ_SK_COLS) * FZ_GV_LANES + ((i) % FZ_SK_COLS) / 4][(i) % 4]
#if FZ_SPLIT_K > 1
    const fz_idx part = w * FZ_GV_MC;
    for (int i = tid; i < FZ_GV_MC; i += FZ_SK_THREADS) fz_split.part[part + i] = FZ_GV_OWN(i);
    memoryBarrierBuffer();
    barrier();
    if (tid == 0) fz_split_last = atomicAdd(fz_split.cnt[t], 1u) == uint(FZ_SPLIT_K - 1);
    memoryBarrierShared();
    barrier();
    if (fz_split_last) {  // uniform: every thread read the same shared flag
      memoryBarrierBuffer();
      const fz_idx first = t * FZ_SPLIT_K * FZ_GV_MC;
      for (int i = tid; i < FZ_GV_MC; i += FZ_SK_THREADS) {
        const fz_idx col = col0 + i % FZ_SK_COLS;
        // Slice order, all read back from the workspace (this group's own slice too: the bits
        // it stored). Unrolled with no select between shared and workspace, so the S loads are
        // independent and overlap; only the adds wait on each other.
        precise float sum = fz_split.part[first + i];
        [[unroll]] for (int s = 1; s < FZ_SPLIT_K; ++s) sum = sum + fz_split.part[first + fz_idx(s) * FZ_GV_MC + i];
        if (col < FZ_N) FZ_EPILOGUE(sum, (batch * FZ_M + i / FZ_SK_COLS) * FZ_N + col);
      }
      if (tid == 0) fz_split.cnt[t] = 0u;  // ready for the next replay
    }
#else
    for (int i = tid; i < FZ_GV_MC; i += FZ_SK_THREADS) {
      const fz_idx col = col0 + i % FZ_SK_COLS;
      if (col < FZ_N) FZ_EPILOGUE(FZ_GV_OWN(i), (batch * FZ_M + i / FZ_SK_COLS) * FZ_N + col);
    }
#endif
#undef FZ_GV_OWN
    memoryBarrierShared();
    barrier();
  }
}
#endif
