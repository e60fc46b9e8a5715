#ifdef __cplusplus
R"FZ_GLSL(//"
#endif
// float64 transcendentals for the Vulkan backend: GLSL defines no double sin, tanh, erf, pow ...
// (only abs/floor/sqrt/fma/frexp...), so the op table's intrinsics map here for f64 math
// (vk_dialect.cpp typed_intrinsic). Needs the prelude's kDouble helpers: fz_nan_b, fz_inf_b,
// fz_pow2d, fz_expd, fz_logd (exp and log, within 2 ulp).
//
// Embedding: the first and last three lines let C++ #include this file as a raw string
// (backends/vulkan/vk_dialect.cpp strips them); GLSL skips them. Every f64 kernel includes it,
// so tests/test_vulkan_f64_math.cpp compiles and runs it on lavapipe. Constants that must be exact are given by their bits: glslang's parsing of double
// literals is not correctly rounded (polynomial coefficients tolerate that).
//
// Sources (formulas and coefficients, re-derived here, not copied code): Sun's fdlibm /
// FreeBSD msun (k_sin.c, k_cos.c, s_atan.c, e_asinh/acosh/atanh, e_sinh/cosh, e_pow special
// cases), Cody & Waite "Software Manual for the Elementary Functions" (3-part pi/2 reduction),
// W. Kahan's expm1/log1p tricks (Goldberg, "What every computer scientist should know about
// floating-point arithmetic", 1991, thm. 4), Abramowitz & Stegun 7.1.6 (erf series) and
// 7.1.14 (erfc continued fraction). Errors measured against glibc on lavapipe:
// tests/test_vulkan_f64_math.cpp prints them (README, "Numerics").

double fz_f64_nan() { return double(fz_nan()); }
double fz_f64_inf() { return double(fz_inf()); }
// a b = p + e exactly (Dekker 1971, Veltkamp's split): Vulkan's fma may round twice, so exact
// products are not left to it. |a|, |b| < 2^995 and no underflow in e.
double fz_two_prod(double a, double b, out double e) {
  precise double p = a * b;
  precise double ca = 134217729.0lf * a, ah = ca - (ca - a), al = a - ah;
  precise double cb = 134217729.0lf * b, bh = cb - (cb - b), bl = b - bh;
  precise double ee = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
  e = ee;
  return p;
}
// log(1 + f) for f in [sqrt(1/2) - 1, sqrt(2) - 1] as hi + lo: 2 atanh(s), s = f / (2 + f),
// with s's rounding error kept (s_lo) and the odd series of atanh (|s| < 0.172).
double fz_log1p_dd(double f, out double lo) {
  precise double u = 2.0lf + f, ulo = f - (u - 2.0lf);  // u + ulo = 2 + f exactly (|f| < 2)
  precise double s = f / u, pe;
  precise double p = fz_two_prod(s, u, pe);
  precise double slo = (((f - p) - pe) - s * ulo) / u;  // f - p exact: p is within a factor 2 of f
  // 2s + (2/3) s^3 + 2 s^5 (1/5 + s^2 / 7 + ...): the cubic term (up to 1% of 2s) as hi + lo too,
  // so the pair is good to ~2^-66 relative (pow multiplies its error by |y log x| <= ~745).
  precise double s2e, s2 = fz_two_prod(s, s, s2e), s3e, s3 = fz_two_prod(s2, s, s3e);
  s3e = s3e + s2e * s;
  const double c23 = packDouble2x32(uvec2(0x55555555u, 0x3fe55555u)), c23lo = packDouble2x32(uvec2(0x55555555u, 0x3c855555u));
  precise double ce, c = fz_two_prod(c23, s3, ce);  // (2/3) s^3 = c + ce + c23 s3e + c23lo s3
  precise double t = 1.0lf / 25.0lf;
  for (int i = 11; i >= 2; --i) t = t * s2 + 1.0lf / double(2 * i + 1);
  precise double hi = 2.0lf * s + c, her = (2.0lf * s - hi) + c;  // Fast2Sum: |2s| > |c|
  lo = her + (((ce + c23 * s3e + c23lo * s3) + 2.0lf * slo * (1.0lf + s2)) + 2.0lf * s3 * s2 * t);  // d/ds (2/3 s^3) = 2 s^2
  return hi;
}

// log(1 + x): near 0 the series above; elsewhere Goldberg thm. 4: log(u) * x / (u - 1) with
// u = 1 + x cancels the rounding of u.
double fz_log1pd(double x) {
  if (fz_nan_b(x) || x < -1.0lf) return fz_f64_nan();
  if (x == -1.0lf) return -fz_f64_inf();
  if (fz_inf_b(x)) return x;
  if (x > -0.29289321881345248lf && x < 0.41421356237309505lf) {
    double lo, hi = fz_log1p_dd(x, lo);
    return hi + lo;
  }
  double u = 1.0lf + x;
  return fz_logd(u) * (x / (u - 1.0lf));
}
double fz_factd(int n) { double f = 1.0lf; for (int i = 2; i <= n; ++i) f *= double(i); return f; }
// exp(x) - 1: near 0 its Taylor polynomial; elsewhere Kahan's (u - 1) * x / log(u) with
// u = exp(x): the ratio corrects u's rounding.
double fz_expm1d(double x) {
  if (fz_nan_b(x)) return x;
  if (x > 709.0lf) return fz_expd(x);
  if (x < -40.0lf) return -1.0lf;
  if (x == 0.0lf) return x;  // -0 stays -0 (x + x * x * p would give +0)
  if (abs(x) < 0.3lf) {  // Taylor to x^14 / 14!: the remainder is below 2^-60 relative
    double p = 1.0lf / 87178291200.0lf;
    for (int n = 13; n >= 2; --n) p = p * x + 1.0lf / fz_factd(n);
    return x + (x * x) * p;
  }
  double u = fz_expd(x);
  if (u == 1.0lf) return x;
  double um1 = u - 1.0lf;
  if (um1 == -1.0lf) return -1.0lf;
  return um1 * (x / fz_logd(u));
}
// fz_log_mant(x, e) (log(x) = e ln2 + log(m)) comes with fz_logd from the double helpers.
double fz_log2d(double x) {
  if (fz_nan_b(x) || x < 0.0lf) return fz_f64_nan();
  if (x == 0.0lf) return -fz_f64_inf();
  if (fz_inf_b(x)) return x;
  int e;
  double lm = fz_log_mant(x, e);
  // 1/ln 2 as hi + lo (bits): the integer part e stays exact, so log2(2^k) == k.
  const double iv_hi = packDouble2x32(uvec2(0x652b82feu, 0x3ff71547u)), iv_lo = packDouble2x32(uvec2(0xffda0d24u, 0x3c7777d0u));
  return double(e) + fma(lm, iv_hi, lm * iv_lo);
}
// 2^x = 2^k * e^(f ln 2) with k = round(x) and f = x - k exact, so large x loses nothing.
double fz_exp2d(double x) {
  if (fz_nan_b(x)) return x;
  if (x >= 1024.0lf) return fz_f64_inf();
  if (x < -1080.0lf) return 0.0lf;
  double k = roundEven(x);
  const double ln2 = packDouble2x32(uvec2(0xfefa39efu, 0x3fe62e42u)), ln2_lo = packDouble2x32(uvec2(0x3b39803fu, 0x3c7abc9eu));
  double f = x - k;
  double p = fz_expd(fma(f, ln2, f * ln2_lo));
  int ki = int(k);
  if (ki < -1000) return (p * fz_pow2d(ki + 1000)) * fz_pow2d(-1000);
  if (ki > 1000) return (p * fz_pow2d(ki - 1000)) * fz_pow2d(1000);
  return p * fz_pow2d(ki);
}

// --- hyperbolic (fdlibm e_sinh.c, e_cosh.c, s_tanh.c formulas) ---
double fz_sinhd(double x) {
  if (x == 0.0lf) return x;  // odd: -0 stays -0
  if (fz_nan_b(x) || fz_inf_b(x)) return x;
  double a = abs(x), r;
  if (a < 1.0lf) {
    double t = fz_expm1d(a);
    r = 0.5lf * (t + t / (t + 1.0lf));
  } else if (a < 709.0lf) {
    double e = fz_expd(a);
    r = 0.5lf * e - 0.5lf / e;
  } else {
    double w = fz_expd(0.5lf * a);  // e^a / 2 = (w / 2) * w without overflowing early
    r = (0.5lf * w) * w;
  }
  return x < 0.0lf ? -r : r;
}
double fz_coshd(double x) {
  if (fz_nan_b(x)) return x;
  double a = abs(x);
  if (a < 709.0lf) {
    double e = fz_expd(a);
    return 0.5lf * e + 0.5lf / e;
  }
  double w = fz_expd(0.5lf * a);
  return (0.5lf * w) * w;
}
double fz_tanhd(double x) {
  if (fz_nan_b(x)) return x;
  double a = abs(x);
  if (a > 22.0lf) return x < 0.0lf ? -1.0lf : 1.0lf;  // |tanh| rounds to 1
  if (a < 3.7252902984e-09lf) return x;                // 2^-28: tanh x = x to double precision
  double t = fz_expm1d(2.0lf * a), r = t / (t + 2.0lf);
  return x < 0.0lf ? -r : r;
}
// --- inverse hyperbolic (fdlibm s_asinh.c, e_acosh.c, e_atanh.c formulas) ---
double fz_asinhd(double x) {
  if (fz_nan_b(x) || fz_inf_b(x)) return x;
  double a = abs(x), r;
  const double ln2 = packDouble2x32(uvec2(0xfefa39efu, 0x3fe62e42u));
  if (a < 3.7252902984e-09lf) return x;
  if (a > 268435456.0lf) r = fz_logd(a) + ln2;  // 2^28: sqrt(x^2 + 1) = |x|
  else if (a > 2.0lf) r = fz_logd(2.0lf * a + 1.0lf / (sqrt(a * a + 1.0lf) + a));
  else {
    double t = a * a;
    r = fz_log1pd(a + t / (1.0lf + sqrt(1.0lf + t)));
  }
  return x < 0.0lf ? -r : r;
}
double fz_acoshd(double x) {
  if (fz_nan_b(x) || x < 1.0lf) return fz_f64_nan();
  if (fz_inf_b(x)) return x;
  const double ln2 = packDouble2x32(uvec2(0xfefa39efu, 0x3fe62e42u));
  if (x > 268435456.0lf) return fz_logd(x) + ln2;
  if (x > 2.0lf) return fz_logd(2.0lf * x - 1.0lf / (x + sqrt(x * x - 1.0lf)));
  double t = x - 1.0lf;  // exact
  return fz_log1pd(t + sqrt(2.0lf * t + t * t));
}
double fz_atanhd(double x) {
  double a = abs(x), r;
  if (fz_nan_b(x) || a > 1.0lf) return fz_f64_nan();
  if (a == 1.0lf) return x * fz_f64_inf();
  if (a < 3.7252902984e-09lf) return x;
  if (a < 0.5lf) {
    double t = a + a;
    r = 0.5lf * fz_log1pd(t + t * a / (1.0lf - a));
  } else {
    r = 0.5lf * fz_log1pd((a + a) / (1.0lf - a));
  }
  return x < 0.0lf ? -r : r;
}

// --- trigonometric ---
// sin and cos on |r| <= pi/4: fdlibm k_sin.c / k_cos.c minimax coefficients (|error| < 2^-58).
double fz_ksind(double r) {
  double z = r * r, v = z * r;
  double p = 2.75573137070700676789e-06lf + z * (-2.50507602534068634195e-08lf + z * 1.58969099521155010221e-10lf);
  p = 8.33333333332248946124e-03lf + z * (-1.98412698298579493134e-04lf + z * p);
  return r + v * (-1.66666666666666324348e-01lf + z * p);
}
double fz_kcosd(double r) {
  double z = r * r;
  double p = 2.48015872894767294178e-05lf + z * (-2.75573143513906633035e-07lf + z * (2.08757232129817482790e-09lf + z * -1.13596475577881948265e-11lf));
  p = z * (4.16666666666666019037e-02lf + z * (-1.38888888888741095749e-03lf + z * p));
  // 1 - z/2 + z^2 p without losing the low bits of 1 - z/2 (k_cos.c's w + ((1 - w) - hz)).
  double hz = 0.5lf * z, w = 1.0lf - hz;
  return w + (((1.0lf - w) - hz) + z * p);
}
// Cody-Waite: r = x - k pi/2 with pi/2 in three 33-bit parts plus a tail (fdlibm's pio2_1..3t):
// k * part is exact for |k| < 2^20, so |x| < ~1.6e6 reduces to within an ulp of r. Beyond, the
// fma steps keep a few ulp of r up to |x| ~ 2^50 except next to multiples of pi/2; for
// |x| >= 2^50 (k no longer integral-exact) the result is NaN rather than a wrong number.
double fz_rem_pio2(double x, out int q) {
  double k = roundEven(x * 0.63661977236758134308lf);
  const double p1 = packDouble2x32(uvec2(0x54400000u, 0x3ff921fbu)), p2 = packDouble2x32(uvec2(0x1a600000u, 0x3dd0b461u));
  const double p3 = packDouble2x32(uvec2(0x2e000000u, 0x3ba3198au)), p3t = packDouble2x32(uvec2(0x252049c1u, 0x397b839au));
  double r = fma(-k, p1, x);
  r = fma(-k, p2, r);
  r = fma(-k, p3, r);
  r = fma(-k, p3t, r);
  q = int(mod(k, 4.0lf));
  return r;
}
double fz_sind(double x) {
  if (x == 0.0lf) return x;  // odd: -0 stays -0
  if (fz_nan_b(x) || fz_inf_b(x) || abs(x) >= 1125899906842624.0lf) return fz_f64_nan();
  if (abs(x) < 0.78539816339744830962lf) return fz_ksind(x);
  int q;
  double r = fz_rem_pio2(x, q);
  double s = (q & 1) == 0 ? fz_ksind(r) : fz_kcosd(r);
  return q >= 2 ? -s : s;
}
double fz_cosd(double x) {
  if (fz_nan_b(x) || fz_inf_b(x) || abs(x) >= 1125899906842624.0lf) return fz_f64_nan();
  if (abs(x) < 0.78539816339744830962lf) return fz_kcosd(x);
  int q;
  double r = fz_rem_pio2(x, q);
  double c = (q & 1) == 0 ? fz_kcosd(r) : fz_ksind(r);
  return (q == 1 || q == 2) ? -c : c;
}
double fz_tand(double x) {
  if (fz_nan_b(x) || fz_inf_b(x) || abs(x) >= 1125899906842624.0lf) return fz_f64_nan();
  if (abs(x) < 3.7252902984e-09lf) return x;
  int q = 0;
  double r = abs(x) < 0.78539816339744830962lf ? x : fz_rem_pio2(x, q);
  double s = fz_ksind(r), c = fz_kcosd(r);
  return (q & 1) == 0 ? s / c : -c / s;
}
// atan: fdlibm s_atan.c reduction to |t| < 7/16 around atan(0.5), pi/4, atan(1.5), pi/2 (each
// as hi + lo) and its degree-22 odd minimax polynomial.
double fz_atand(double x) {
  if (fz_nan_b(x)) return x;
  double a = abs(x);
  const double pio2_hi = packDouble2x32(uvec2(0x54442d18u, 0x3ff921fbu)), pio2_lo = packDouble2x32(uvec2(0x33145c07u, 0x3c91a626u));
  if (a >= 7.3786976294838206464e19lf) return x < 0.0lf ? -(pio2_hi + pio2_lo) : pio2_hi + pio2_lo;  // 2^66
  if (a < 3.7252902984e-09lf) return x;
  int id = -1;
  double t = a, hi = 0.0lf, lo = 0.0lf;
  if (a >= 0.4375lf) {
    if (a < 0.6875lf) {
      id = 0, t = (2.0lf * a - 1.0lf) / (2.0lf + a);
      hi = packDouble2x32(uvec2(0x0561bb4fu, 0x3fddac67u)), lo = packDouble2x32(uvec2(0x222f65e2u, 0x3c7a2b7fu));
    } else if (a < 1.1875lf) {
      id = 1, t = (a - 1.0lf) / (a + 1.0lf);
      hi = packDouble2x32(uvec2(0x54442d18u, 0x3fe921fbu)), lo = packDouble2x32(uvec2(0x33145c07u, 0x3c81a626u));
    } else if (a < 2.4375lf) {
      id = 2, t = (a - 1.5lf) / (1.0lf + 1.5lf * a);
      hi = packDouble2x32(uvec2(0xd281f69bu, 0x3fef730bu)), lo = packDouble2x32(uvec2(0x7af0cbbdu, 0x3c700788u));
    } else {
      id = 3, t = -1.0lf / a;
      hi = pio2_hi, lo = pio2_lo;
    }
  }
  double z = t * t, w = z * z;
  double s1 = z * (3.33333333333329318027e-01lf + w * (1.42857142725034663711e-01lf + w * (9.09088713343650656196e-02lf +
              w * (6.66107313738753120669e-02lf + w * (4.97687799461593236017e-02lf + w * 1.62858201153657823623e-02lf)))));
  double s2 = w * (-1.99999999998764832476e-01lf + w * (-1.11111104054623557880e-01lf + w * (-7.69187620504482999495e-02lf +
              w * (-5.83357013379057348645e-02lf + w * -3.65315727442169155270e-02lf))));
  double r = id < 0 ? t - t * (s1 + s2) : hi - ((t * (s1 + s2) - lo) - t);
  return x < 0.0lf ? -r : r;
}
// asin x = atan(x / sqrt(1 - x^2)), acos x = 2 atan(sqrt((1 - x) / (1 + x))): (1 - |x|) and
// (1 + x) are exact where they would cancel, and atan's condition number is below 1.
double fz_asind(double x) {
  double a = abs(x);
  if (fz_nan_b(x) || a > 1.0lf) return fz_f64_nan();
  if (a < 3.7252902984e-09lf) return x;
  return fz_atand(x / sqrt((1.0lf - a) * (1.0lf + a)));
}
double fz_acosd(double x) {
  if (fz_nan_b(x) || abs(x) > 1.0lf) return fz_f64_nan();
  return 2.0lf * fz_atand(sqrt((1.0lf - x) / (1.0lf + x)));
}

// erf: |x| < 1.25 the all-positive series erf x = 2/sqrt(pi) e^(-x^2) sum 2^n x^(2n+1) / (2n+1)!!
// (A&S 7.1.6; x^2 carried as hi + lo so e^(-x^2) keeps full precision); above, 1 - erfc with
// erfc's continued fraction (A&S 7.1.14): 120 terms leave < 2^-55 of erf there.
double fz_erfd(double x) {
  if (x == 0.0lf) return x;  // odd: -0 stays -0
  if (fz_nan_b(x)) return x;
  double a = abs(x), r;
  if (a >= 6.0lf) r = 1.0lf;
  else if (a < 1.25lf) {
    double x2lo, x2 = fz_two_prod(a, a, x2lo);
    // Compensated (Fast2Sum) accumulation: ~20 roundings of the sum would cost ~3 ulp. Term n
    // carries x2^n, so x2's rounding (x2lo) would bias it by n x2lo / x2: dsum adds that back.
    precise double term = a, sum = a, comp = 0.0lf, dsum = 0.0lf;
    for (int n = 1; n < 64; ++n) {
      term = term * (2.0lf * x2) / double(2 * n + 1);
      precise double ns = sum + term;
      comp = comp + ((sum - ns) + term);
      sum = ns;
      dsum = dsum + double(n) * term;
      if (term < sum * 1e-17lf) break;
    }
    sum = sum + (x2 > 0.0lf ? comp + dsum * (x2lo / x2) : comp);
    const double two_sqrtpi = packDouble2x32(uvec2(0x50429b6du, 0x3ff20dd7u));
    double e = fz_expd(-x2);
    r = (two_sqrtpi * sum) * (e - e * x2lo);
  } else {
    double t = a;
    for (int k = 120; k > 0; --k) t = a + (0.5lf * double(k)) / t;
    const double inv_sqrtpi = packDouble2x32(uvec2(0x50429b6du, 0x3fe20dd7u));
    double x2lo, x2 = fz_two_prod(a, a, x2lo), e = fz_expd(-x2);
    r = 1.0lf - (e - e * x2lo) * inv_sqrtpi / t;
  }
  return x < 0.0lf ? -r : r;
}

// pow: C99 Annex F special cases (fdlibm e_pow.c's table), then e^(y log|x|) with log|x| as a
// double-double (the exponent's relative error is multiplied by |y log x| up to ~745).
double fz_powd(double x, double y) {
  if (y == 0.0lf || x == 1.0lf) return 1.0lf;
  if (fz_nan_b(x) || fz_nan_b(y)) return fz_f64_nan();
  double ax = abs(x);
  bool yint = floor(y) == y, yodd = yint && abs(y) < 9007199254740992.0lf && mod(y, 2.0lf) == 1.0lf;
  if (fz_inf_b(y)) {
    if (ax == 1.0lf) return 1.0lf;
    return (ax > 1.0lf) == (y > 0.0lf) ? fz_f64_inf() : 0.0lf;
  }
  if (ax == 0.0lf || fz_inf_b(ax)) {
    double r = (ax == 0.0lf) == (y < 0.0lf) ? fz_f64_inf() : 0.0lf;
    return unpackDouble2x32(x).y >= 0x80000000u && yodd ? -r : r;  // -0 and -inf keep the sign for odd y
  }
  if (x < 0.0lf && !yint) return fz_f64_nan();
  if (ax == 1.0lf) return yodd ? x : 1.0lf;  // (-1)^y: below, y * log|x| = y * 0 would split a huge y (NaN)
  // log|x| = e ln2 + log m, m in [sqrt 1/2, sqrt 2), as hi + lo.
  int e;
  double m = frexp(ax < 2.2250738585072014e-308lf ? ax * 18014398509481984.0lf : ax, e);
  if (ax < 2.2250738585072014e-308lf) e = e - 54;
  if (m < 0.70710678118654752440lf) { m = m * 2.0lf; e = e - 1; }
  double tail, b1 = fz_log1p_dd(m - 1.0lf, tail);
  const double ln2_hi = packDouble2x32(uvec2(0xfee00000u, 0x3fe62e42u)), ln2_lo = packDouble2x32(uvec2(0x35793c76u, 0x3dea39efu));
  precise double de = double(e), a1 = de * ln2_hi;  // exact: ln2_hi has 32 significant bits
  precise double lh = a1 + b1, ll = (abs(a1) >= abs(b1) ? (a1 - lh) + b1 : (b1 - lh) + a1) + (tail + de * ln2_lo);
  precise double h = lh + ll;
  ll = ll - (h - lh);
  // y (h + ll) = ph + pl; past |ph| ~ 745 the result is 0 or inf whatever pl is.
  precise double ph = y * h, pl = 0.0lf;
  if (abs(ph) < 800.0lf) {
    ph = fz_two_prod(y, h, pl);
    pl = pl + y * ll;
  }
  double r = fz_expd(ph) * (1.0lf + pl);  // fz_expd gives inf / 0 past the range
  return x < 0.0lf && yodd ? -r : r;
}
#ifdef __cplusplus
//")FZ_GLSL"
#endif
