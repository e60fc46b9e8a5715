// Exact numerics on every backend (issue "each value computed in its own dtype"): integers
// wrap like numpy, int64 stays exact past 2^53, fp16 rounds half to even, fmod is exact,
// float64 is computed in double. Each case runs with its inputs as run-time graph inputs and
// again as constants (so constant folding takes the ref path), on ref, cpu (fused and
// unfused), vulkan where a device is present, and cuda (on a device; otherwise every kernel
// is compiled with NVRTC). Results are compared bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <tuple>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "ir/kernel_spec.h"
#include "ir/passes.h"
#include "ir/scalar.h"
#include "runtime/session.h"
#include "test_util.h"
#include "nvrtc_check.h"
#include "numerics_check.h"
#ifdef FUSOR_HAVE_CUDA
#include "backends/cuda/cuda_backend.h"
#include "backends/codegen.h"
#endif

namespace fusor {
namespace {

using namespace numerics_check;  // check_everywhere ..., ints_of, tensor_of, random_tensor

constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();

TEST(Numerics, Uint8WrapsAround) {
  check_everywhere("uint8 add", {ints_of({2}, {128, 255}, DType::u8), ints_of({2}, {128, 1}, DType::u8)}, binary("Add"),
                   ints_of({2}, {0, 0}, DType::u8));
  check_everywhere("uint8 sub", {ints_of({1}, {0}, DType::u8), ints_of({1}, {7}, DType::u8)}, binary("Sub"),
                   ints_of({1}, {249}, DType::u8));
  // The wrapped sum is what the Cast sees, fused or not.
  check_everywhere(
      "uint8 add then cast",
      {ints_of({1}, {200}, DType::u8), ints_of({1}, {200}, DType::u8)},
      [](GraphBuilder& b, const std::vector<int>& x) { return b.op("Cast", {b.op("Add", {x[0], x[1]})}, {{"to", int64_t{5}}}); },
      ints_of({1}, {144}, DType::i16));
  check_everywhere(
      "uint8 cast zero-extends", {ints_of({2}, {128, 255}, DType::u8)},
      [](GraphBuilder& b, const std::vector<int>& x) { return b.op("Cast", {x[0]}, {{"to", int64_t{5}}}); },
      ints_of({2}, {128, 255}, DType::i16));
  check_everywhere("int8 mul wraps", {ints_of({2}, {100, -128}, DType::i8), ints_of({2}, {3, -1}, DType::i8)}, binary("Mul"),
                   ints_of({2}, {44, -128}, DType::i8));
}

TEST(Numerics, Int32IsExactAndWraps) {
  check_everywhere("int32 mul", {ints_of({1}, {2147483647}, DType::i32), ints_of({1}, {2}, DType::i32)}, binary("Mul"),
                   ints_of({1}, {-2}, DType::i32));
  check_everywhere("int32 add", {ints_of({2}, {16777217, 123456789}, DType::i32), ints_of({2}, {16777217, 0}, DType::i32)},
                   binary("Add"), ints_of({2}, {33554434, 123456789}, DType::i32));
}

// Signed integer arithmetic wraps inside fused expressions, where a compiler may not assume it
// away: C/C++ signed overflow is undefined, so CUDA C folded x + 1 < x to false for int32 (PTX
// checked: the comparison was gone), 2x > x to x > 0 and -x < 0 to x > 0. Each case is one fused
// kernel whose comparison sees the wrapped value, as numpy and ref compute it.
TEST(Numerics, SignedWrapIsNotAssumedAway) {
  for (DType t : {DType::i32, DType::i64}) {
    const int64_t mx = t == DType::i32 ? 2147483647 : std::numeric_limits<int64_t>::max();
    const int64_t mn = t == DType::i32 ? -2147483647 - 1 : kI64Min;
    const int64_t half = t == DType::i32 ? int64_t{1} << 30 : int64_t{1} << 62;
    const Tensor x = ints_of({4}, {mx, mn, half, 5}, t);
    const Tensor one = ints_of({4}, {1, 1, 1, 1}, t);
    const std::string n = dtype_name(t);
    auto cmp = [](const char* cmp_op, auto lhs) {
      return [cmp_op, lhs](GraphBuilder& b, const std::vector<int>& v) { return b.op(cmp_op, {lhs(b, v), v[0]}); };
    };
    check_everywhere(n + " x + 1 < x", {x, one},
                     cmp("Less", [](GraphBuilder& b, const std::vector<int>& v) { return b.op("Add", {v[0], v[1]}); }),
                     ints_of({4}, {1, 0, 0, 0}, DType::boolean));
    check_everywhere(n + " x - 1 > x", {x, one},
                     cmp("Greater", [](GraphBuilder& b, const std::vector<int>& v) { return b.op("Sub", {v[0], v[1]}); }),
                     ints_of({4}, {0, 1, 0, 0}, DType::boolean));
    check_everywhere(n + " (x + 1) * 2 > x", {x, one},
                     cmp("Greater", [](GraphBuilder& b, const std::vector<int>& v) {
                       return b.op("Mul", {b.op("Add", {v[0], v[1]}), b.op("Add", {v[1], v[1]})});
                     }),
                     ints_of({4}, {0, 1, 0, 1}, DType::boolean));
    check_everywhere(n + " -x < 0", {x, one},
                     [](GraphBuilder& b, const std::vector<int>& v) {
                       return b.op("Less", {b.op("Neg", {v[0]}), b.op("Sub", {v[1], v[1]})});
                     },
                     ints_of({4}, {1, 1, 1, 1}, DType::boolean));
    check_everywhere(n + " Sum(x, 1, 1) < x", {x, one},
                     cmp("Less", [](GraphBuilder& b, const std::vector<int>& v) { return b.op("Sum", {v[0], v[1], v[1]}); }),
                     ints_of({4}, {1, 0, 0, 0}, DType::boolean));
  }
}

TEST(Numerics, Int64IsExactBeyond2To53) {
  const int64_t p53 = int64_t{1} << 53;
  check_everywhere("int64 add", {ints_of({1}, {p53 + 1}), ints_of({1}, {1})}, binary("Add"), ints_of({1}, {p53 + 2}));
  check_everywhere("int64 equal", {ints_of({2}, {p53 + 1, p53 + 2}), ints_of({2}, {p53 + 2, p53 + 2})}, binary("Equal"),
                   ints_of({2}, {0, 1}, DType::boolean));
  check_everywhere("int64 min / -1", {ints_of({2}, {kI64Min, 7}), ints_of({2}, {-1, -2})}, binary("Div"), ints_of({2}, {kI64Min, -3}));
  check_everywhere("int64 min % -1", {ints_of({2}, {kI64Min, -7}), ints_of({2}, {-1, 2})}, binary("Mod"), ints_of({2}, {0, 1}));
  check_everywhere("int64 fmod", {ints_of({2}, {kI64Min, -7}), ints_of({2}, {-1, 2})}, binary("Mod", {{"fmod", int64_t{1}}}),
                   ints_of({2}, {0, -1}));
  // Division by zero: 0 on every backend (ONNX leaves it undefined; README documents it).
  check_everywhere("int32 x / 0", {ints_of({2}, {5, -5}, DType::i32), ints_of({2}, {0, 0}, DType::i32)}, binary("Div"),
                   ints_of({2}, {0, 0}, DType::i32));
  check_everywhere("int32 x % 0", {ints_of({2}, {5, -5}, DType::i32), ints_of({2}, {0, 0}, DType::i32)}, binary("Mod"),
                   ints_of({2}, {0, 0}, DType::i32));
  check_everywhere("int64 reduce sum", {ints_of({2, 3}, {p53 + 1, 1, 1, -5, kI64Min, 1})},
                   [](GraphBuilder& b, const std::vector<int>& x) { return b.op("ReduceSum", {x[0], b.constant("axes", ints_of({1}, {1}))}, {{"keepdims", int64_t{0}}}); },
                   ints_of({2}, {p53 + 3, std::numeric_limits<int64_t>::max() - 3}));  // INT64_MIN - 4 wraps
  check_everywhere("int32 reduce max/min", {ints_of({2, 2}, {16777217, 16777216, -2147483647 - 1, 5}, DType::i32)},
                   [](GraphBuilder& b, const std::vector<int>& x) {
                     const int axes = b.constant("axes", ints_of({1}, {1}));
                     return b.op("Sub", {b.op("ReduceMax", {x[0], axes}, {{"keepdims", int64_t{0}}}),
                                         b.op("ReduceMin", {x[0], axes}, {{"keepdims", int64_t{0}}})});
                   },
                   ints_of({2}, {1, -2147483643}, DType::i32));
  // ArgMax / ArgMin compare the integers themselves (through double these tied or swapped).
  const int64_t p62 = int64_t{1} << 62;
  auto arg = [](const char* op, int64_t last) {
    return [op, last](GraphBuilder& b, const std::vector<int>& x) {
      return b.op(op, {x[0]}, {{"axis", int64_t{-1}}, {"keepdims", int64_t{0}}, {"select_last_index", last}});
    };
  };
  check_everywhere("int64 argmax", {ints_of({2, 3}, {p62 + 1, p62 + 3, p62 + 2, -p53 - 1, -p53, -p53 - 2})}, arg("ArgMax", 0),
                   ints_of({2}, {1, 1}));
  // uint64 [2^64 - 3, 2^64 - 5, 2^64 - 4, 2^64 - 1] (set as their int64 bits): the smallest is 2^64 - 5.
  check_everywhere("uint64 argmin", {ints_of({4}, {-3, -5, -4, -1}, DType::u64)}, arg("ArgMin", 1), ints_of({}, {1}));
  check_everywhere("int64 where", {ints_of({2}, {1, 0}, DType::boolean), ints_of({2}, {p53 + 1, 0}), ints_of({2}, {0, -p53 - 3})},
                   [](GraphBuilder& b, const std::vector<int>& x) { return b.op("Where", {x[0], x[1], x[2]}); },
                   ints_of({2}, {p53 + 1, -p53 - 3}));
}

// Integer contractions wrap like numpy and stay exact past 2^53 (through double they clamped at
// the type's limit: red-team round 4); 8-bit sums past fp32's 2^24 leave the GPUs' fp32 kernels.
TEST(Numerics, IntegerContractionsWrapAndStayExact) {
  const int64_t p30 = int64_t{1} << 30, p53 = int64_t{1} << 53, p62 = int64_t{1} << 62;
  check_everywhere("int32 matmul wraps", {ints_of({2, 2}, {p30, 3, -7, 2147483647}, DType::i32), ints_of({2, 2}, {4, 1, 2, -1}, DType::i32)},
                   binary("MatMul"), ints_of({2, 2}, {6, 1073741821, -30, 2147483642}, DType::i32));
  check_everywhere("int64 matmul wraps and is exact", {ints_of({2, 2}, {p62, p62, p53 + 1, 1}), ints_of({2, 1}, {1, 1})}, binary("MatMul"),
                   ints_of({2, 1}, {std::numeric_limits<int64_t>::min(), p53 + 2}));
  check_everywhere("int32 gemm wraps", {ints_of({1, 2}, {p30, p30}, DType::i32), ints_of({2, 1}, {2, 2}, DType::i32)}, binary("Gemm"),
                   ints_of({1, 1}, {0}, DType::i32));
  check_everywhere("int64 einsum transpose", {ints_of({2, 2}, {p62 + 3, p53 + 1, p62 + 4, 1})},
                   [](GraphBuilder& b, const std::vector<int>& x) { return b.op("Einsum", {x[0]}, {{"equation", std::string("ij->ji")}}); },
                   ints_of({2, 2}, {p62 + 3, p62 + 4, p53 + 1, 1}));
  check_everywhere("int8 einsum dot wraps", {ints_of({2}, {100, 100}, DType::i8), ints_of({2}, {2, 1}, DType::i8)},
                   [](GraphBuilder& b, const std::vector<int>& x) { return b.op("Einsum", {x[0], x[1]}, {{"equation", std::string("i,i->")}}); },
                   ints_of({}, {44}, DType::i8));
  // int8 [1, 4096] x [4096, 1] of 127s: 66,064,384 (past 2^24) wraps to 0 in int8.
  std::vector<int64_t> ones(4096, 127);
  check_everywhere("int8 matmul past 2^24", {ints_of({1, 4096}, ones, DType::i8), ints_of({4096, 1}, ones, DType::i8)}, binary("MatMul"),
                   ints_of({1, 1}, {0}, DType::i8));
}

// ScatterElements / ScatterND add and mul wrap in 8-bit types (the reference saturated: int8
// 100 + 100 gave 127; red-team round 4).
TEST(Numerics, ScatterReductionsWrap) {
  const Tensor data = ints_of({3}, {100, -128, 5}, DType::i8), idx = ints_of({4}, {0, 1, 0, 1}),
               upd = ints_of({4}, {100, -1, 100, -128}, DType::i8);
  auto scatter = [](const char* red) {
    return [red](GraphBuilder& b, const std::vector<int>& x) {
      return b.op("ScatterElements", {x[0], x[1], x[2]}, {{"reduction", std::string(red)}});
    };
  };
  check_everywhere("int8 scatter add", {data, idx, upd}, scatter("add"), ints_of({3}, {44, -1, 5}, DType::i8));
  check_everywhere("int8 scatter mul", {data, idx, upd}, scatter("mul"), ints_of({3}, {64, 0, 5}, DType::i8));
}

// Variadic Sum / Mean fold in fp32 step by step, as binary Adds do (the reference folded in
// double: Sum(3e38, 3e38, -3e38) gave 3e38, not inf; red-team round 4), and Mean divides with
// IEEE division (Mean(1, 1, 2) = RN(4 / 3)).
TEST(Numerics, VariadicSumAndMeanFoldInFloat32) {
  auto variadic = [](const char* op) {
    return [op](GraphBuilder& b, const std::vector<int>& x) { return b.op(op, {x[0], x[1], x[2]}); };
  };
  const float inf = std::numeric_limits<float>::infinity();
  check_everywhere("float32 sum", {tensor_of({3}, {3e38, -3e38, 1}), tensor_of({3}, {3e38, 3e38, 2}), tensor_of({3}, {-3e38, 1, 3})},
                   variadic("Sum"), tensor_of({3}, {inf, 1, 6}));
  check_everywhere("float32 mean", {tensor_of({3}, {3e38, -3e38, 1}), tensor_of({3}, {3e38, -3e38, 1}), tensor_of({3}, {3e38, 1, 2})},
                   variadic("Mean"), tensor_of({3}, {inf, -inf, static_cast<double>(4.0f / 3.0f)}));
}

// Pow with an integer base and a floating exponent: the power in float64, truncated to the
// base's type (onnxruntime, numpy); the exponent was converted to an integer first (2 ** 2.5
// gave 4; red-team round 4), then the power was taken in the exponent's type, which dropped the
// base's low bits (int64 16777217 ** 1.0f gave 16777216, 4097 ** 2.0f 16785408, int32 181 **
// fp16 2 32768; red-team round 35).
TEST(Numerics, PowOfIntegerBaseWithFloatExponent) {
  Tensor e32 = tensor_of({4}, {0.5, 2.5, 2.9999, 1.5});
  check_everywhere("int32 ** float32", {ints_of({4}, {4, 2, 7, 9}, DType::i32), e32}, binary("Pow"), ints_of({4}, {2, 5, 342, 27}, DType::i32));
  Tensor e64(DType::f64, {1});
  e64.set(0, 18.7);
  check_everywhere("int64 ** float64", {ints_of({1}, {10}), e64}, binary("Pow"), ints_of({1}, {5011872336272714752}));
  check_everywhere("int64 ** float32, exact", {ints_of({7}, {4097, 46341, 3, 16777217, 2, -1, -2}), tensor_of({7}, {2, 2, 15, 1, -1, -1, 3})},
                   binary("Pow"), ints_of({7}, {16785409, 2147488281, 14348907, 16777217, 0, -1, -8}));
  auto half = [](DType t, const std::vector<double>& v) {
    Tensor e(t, {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) e.set(static_cast<int64_t>(i), v[i]);
    return e;
  };
  check_everywhere("int32 ** float16", {ints_of({4}, {2049, 2051, 181, 3}, DType::i32), half(DType::f16, {1, 1, 2, 3})}, binary("Pow"),
                   ints_of({4}, {2049, 2051, 32761, 27}, DType::i32));
  check_everywhere("int32 ** bfloat16", {ints_of({4}, {257, 1001, 100, 7}, DType::i32), half(DType::bf16, {1, 1, 2, 3})}, binary("Pow"),
                   ints_of({4}, {257, 1001, 10000, 343}, DType::i32));
}

TEST(Numerics, FloatModIsExact) {
  Tensor a = tensor_of({3}, {1e20, 7.0, -0.0}), b = tensor_of({3}, {3.0, 0.7, 1.0});
  Tensor want(DType::f32, {3});
  want.data<float>()[0] = std::fmod(1e20f, 3.0f);  // 2
  want.data<float>()[1] = std::fmod(7.0f, 0.7f);   // 1.1920929e-7
  want.data<float>()[2] = -0.0f;
  EXPECT_EQ(want.data<float>()[0], 2.0f);
  check_everywhere("float fmod", {a, b}, binary("Mod", {{"fmod", int64_t{1}}}), want);
}

// Elu / Celu / Selu near 0: exp(x) - 1 computed in fp32 cancels (Vulkan gave Elu(-1e-7) 19% off,
// Celu(-6e-8) 49%); every backend must be within 2 ulp of the value from a double expm1.
TEST(Numerics, EluFamilyIsAccurateNearZero) {
  const std::vector<float> xs = {-6.007e-8f, -1e-7f, -1e-5f, -3e-3f, -0.02f, -0.4f, -0.6f, -3.0f, 2.0f, -1e-30f};
  struct Case {
    std::string op;
    GraphBuilder::Attrs attrs;
    std::function<double(double)> f;
  };
  const double sa = 1.67326319217681884765625, sg = 1.05070102214813232421875;  // Selu's defaults (float)
  const std::vector<Case> cases = {
      {"Elu", {{"alpha", 2.0f}}, [](double x) { return x < 0 ? 2.0 * std::expm1(x) : x; }},
      {"Celu", {{"alpha", 0.5f}}, [](double x) { return std::max(0.0, x) + std::min(0.0, 0.5 * std::expm1(x / 0.5)); }},
      {"Selu", {}, [&](double x) { return x <= 0 ? sg * (sa * std::expm1(x)) : sg * x; }},
  };
  Tensor x = tensor_of({static_cast<int64_t>(xs.size())}, std::vector<double>(xs.begin(), xs.end()));
  for (const Case& c : cases)
    for (const std::string backend : {"ref", "cpu", "vulkan", "cuda"}) {
      if (!has_device(backend)) continue;
      GraphBuilder b("elu_family", 18);
      b.output(b.op(c.op, {b.input("x", DType::f32, x.shape())}, c.attrs));
      std::vector<Tensor> out = run_on_backend(backend, specialize(b.build(), {x}), {x}, CompileOptions{});
      ASSERT_EQ(out.size(), 1u);
      for (size_t i = 0; i < xs.size(); ++i) {
        const float want = static_cast<float>(c.f(static_cast<double>(xs[i]))), got = static_cast<float>(out[0].get(static_cast<int64_t>(i)));
        const float ulp = std::nextafter(std::fabs(want), INFINITY) - std::fabs(want);
        EXPECT_LE(std::fabs(got - want), 2 * ulp) << c.op << "(" << xs[i] << ") on " << backend << ": got " << got << " want " << want;
      }
    }
}

TEST(Numerics, HalfRoundsToNearestEven) {
  // 1 + 2^-11 is halfway between fp16 1.0 and its successor: even is 1.0 (0x3c00).
  EXPECT_EQ(float_to_half_bits(1.0 + std::ldexp(1.0, -11)), 0x3c00);
  EXPECT_EQ(float_to_half_bits(1.0 + 3 * std::ldexp(1.0, -11)), 0x3c02);
  EXPECT_EQ(float_to_half_bits(65520.0), 0x7c00);  // halfway to 2^16 rounds to even: inf
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0, -25)), 0x0000);  // half the smallest subnormal: even is 0
  EXPECT_EQ(float_to_bf16_bits(1.0 + std::ldexp(1.0, -8)), 0x3f80);
  Tensor want(DType::f16, {2});
  reinterpret_cast<uint16_t*>(want.raw())[0] = 0x3c00;
  reinterpret_cast<uint16_t*>(want.raw())[1] = 0x3c02;
  Tensor x(DType::f32, {2});
  x.data<float>()[0] = 1.0f + std::ldexp(1.0f, -11);
  x.data<float>()[1] = 1.0f + 3 * std::ldexp(1.0f, -11);
  check_everywhere("fp16 tie", {x}, [](GraphBuilder& b, const std::vector<int>& v) { return b.op("Cast", {v[0]}, {{"to", int64_t{10}}}); },
                   want);
  // fp16 arithmetic rounds every op's result to fp16, fused or not: (1 + 2^-11) + 0 in fp16
  // is 1.0 + 0 = 1.0, because the input itself is already 1.0 in fp16.
  Tensor h(DType::f16, {1}), z(DType::f16, {1});
  h.set(0, 1.0 + std::ldexp(1.0, -10));
  z.set(0, std::ldexp(1.0, -11));
  Tensor sum(DType::f16, {1});
  reinterpret_cast<uint16_t*>(sum.raw())[0] = 0x3c02;  // (1 + 2^-10) + 2^-11 ties to even 1 + 2^-9
  check_everywhere("fp16 add tie", {h, z}, binary("Add"), sum);
  // Ties and edges across fp16's range (Vulkan leaves a narrowing conversion's rounding to the
  // implementation; fusor rounds in the shader): subnormal ties, the largest finite value, the
  // overflow tie, signed zero, and a value that only a directed rounding would move.
  const std::vector<double> edges = {std::ldexp(1.0, -25), 3 * std::ldexp(1.0, -25), -5 * std::ldexp(1.0, -25),
                                     std::ldexp(1.0, -14) * (1 + std::ldexp(1.0, -11)), 65519.0, 65520.0, -65520.0,
                                     -0.0, 1.0 + 7 * std::ldexp(1.0, -13), std::ldexp(1.0, -30)};
  Tensor xe(DType::f32, {static_cast<int64_t>(edges.size())}), we(DType::f16, {static_cast<int64_t>(edges.size())});
  for (size_t i = 0; i < edges.size(); ++i) {
    xe.data<float>()[i] = static_cast<float>(edges[i]);
    reinterpret_cast<uint16_t*>(we.raw())[i] = float_to_half_bits(edges[i]);
  }
  check_everywhere("fp16 edges", {xe}, [](GraphBuilder& b, const std::vector<int>& v) { return b.op("Cast", {v[0]}, {{"to", int64_t{10}}}); },
                   we);
}

// Every fp16 value's neighbourhood narrowed from float32 (the value, its ties with both
// neighbours, a quarter-step either side, and the float32 neighbours of each tie) matches the
// host's rounding bit for bit on every backend: the Vulkan kernels convert in hardware where the
// device promises round-to-nearest-even with fp16 subnormals kept (RoundingModeRTE +
// DenormPreserve 16), else round in software (fz_round_f16); overflow ties and subnormals included.
TEST(Numerics, HalfStoresOfEveryNeighbourhoodMatchTheHost) {
  std::vector<float> xs;
  for (uint32_t h = 0; h < 0x7c00u; ++h) {  // finite non-negative fp16 values; signs below
    const double v = half_bits_to_float(static_cast<uint16_t>(h));
    const double up = half_bits_to_float(static_cast<uint16_t>(h + 1)) - v;  // 2^-24 in the subnormals
    for (double f : {0.0, 0.25, 0.5, 0.75}) xs.push_back(static_cast<float>(v + f * up));
    const float tie = static_cast<float>(v + 0.5 * up);
    xs.push_back(std::nextafter(tie, 0.0f));
    xs.push_back(std::nextafter(tie, 1e30f));
  }
  const size_t n = xs.size();
  for (size_t i = 0; i < n; ++i) xs.push_back(-xs[i]);
  for (float sp : {65504.0f, 65519.99f, 65520.0f, 1e30f, std::numeric_limits<float>::infinity(), 1e-30f, 0.0f}) xs.push_back(sp), xs.push_back(-sp);
  Tensor x(DType::f32, {static_cast<int64_t>(xs.size())}), want(DType::f16, {static_cast<int64_t>(xs.size())});
  for (size_t i = 0; i < xs.size(); ++i) {
    x.data<float>()[i] = xs[i];
    reinterpret_cast<uint16_t*>(want.raw())[i] = float_to_half_bits(xs[i]);
  }
  check_everywhere("fp16 neighbourhoods", {x}, [](GraphBuilder& b, const std::vector<int>& v) { return b.op("Cast", {v[0]}, {{"to", int64_t{10}}}); },
                   want);
}

TEST(Numerics, Float64IsComputedInDouble) {
  Tensor x(DType::f64, {2});
  x.data<double>()[0] = 1.0;
  x.data<double>()[1] = 1e-10;
  Tensor want(DType::f64, {});
  want.data<double>()[0] = 1.0000000001;
  check_everywhere("float64 reduce sum", {x},
                   [](GraphBuilder& b, const std::vector<int>& v) { return b.op("ReduceSum", {v[0]}, {{"keepdims", int64_t{0}}}); },
                   want);
  // AveragePool in double feeding a reduction: (1 + 1e-10 + 3 + 5) / 2 pooled pairs, summed.
  Tensor img(DType::f64, {1, 1, 1, 4});
  for (int i = 0; i < 4; ++i) img.data<double>()[i] = std::vector<double>{1.0, 1e-10, 3.0, 5.0}[i];
  Tensor pooled(DType::f64, {});
  pooled.data<double>()[0] = (1.0 + 1e-10) / 2 + (3.0 + 5.0) / 2;
  check_everywhere("float64 average pool + reduce", {img},
                   [](GraphBuilder& b, const std::vector<int>& v) {
                     int p = b.op("AveragePool", {v[0]}, {{"kernel_shape", std::vector<int64_t>{1, 2}}, {"strides", std::vector<int64_t>{1, 2}}});
                     return b.op("ReduceSum", {p}, {{"keepdims", int64_t{0}}});
                   },
                   pooled);
  Tensor y(DType::f64, {2});
  y.data<double>()[0] = 1.0 + 1e-12;
  y.data<double>()[1] = 3.0;
  Tensor w(DType::f64, {2});
  w.data<double>()[0] = (1.0 + 1e-12) * 3.0 - 1e-12;
  w.data<double>()[1] = 9.0 - 1e-12;
  Tensor eps(DType::f64, {});
  eps.data<double>()[0] = 1e-12;
  check_everywhere("float64 chain", {y, eps},
                   [](GraphBuilder& b, const std::vector<int>& v) {
                     Tensor three(DType::f64, {});
                     three.data<double>()[0] = 3.0;
                     return b.op("Sub", {b.op("Mul", {v[0], b.constant("three", three)}), v[1]});
                   },
                   w);
}


// The model with every float32 value (inputs, weights, intermediates) turned into dtype d,
// as a framework's .half() / .bfloat16() export would give.
Graph narrowed(Graph g, DType d) {
  for (auto& v : g.values) {
    if (v.dtype != DType::f32) continue;
    v.dtype = d;
    if (v.constant) {
      Tensor t(d, v.constant->shape());
      for (int64_t i = 0; i < t.numel(); ++i) t.set(i, v.constant->get(i));
      v.constant = std::move(t);
    }
  }
  for (auto& n : g.nodes)
    if (n.op_type == "Cast" && n.attr_i("to", 0) == 1) n.attrs["to"] = int64_t{dtype_to_onnx(d)};
  for (auto& [value, dtype] : g.declared_output_dtypes)  // the exported model declares its outputs narrowed too
    if (dtype == DType::f32) dtype = d;
  return g;
}

// fp16 and bf16 versions of the shared MLP block (Gemm, Erf-GELU, residual Add,
// LayerNormalization) run on every backend and match ref within a few ulps of their dtype:
// every op computes in fp32 and rounds to the storage type (matmuls accumulate in fp32).
TEST(Numerics, HalfAndBfloat16ModelsRunEverywhere) {
  const std::string shared = testing::shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared (the shared models) is not present";
  Graph f32 = load_model(shared + "/models/mlp_block/model.onnx");
  for (DType d : {DType::f16, DType::bf16}) {
    Graph model = narrowed(f32, d);
    std::vector<Tensor> in = random_inputs(model, 7);
    for (auto& t : in) ASSERT_EQ(t.dtype(), d);
    Graph sg = specialize(model, in);
    auto ref = run_on_backend("ref", sg, in);
    // Half an fp16 ulp is 2^-11 relative; allow a few ulps of the dtype for the extra
    // roundings of a fused/decomposed evaluation order.
    const double ulp = d == DType::f16 ? std::ldexp(1.0, -10) : std::ldexp(1.0, -7);
    for (const std::string backend : {"cpu", "vulkan", "cuda"}) {
      if (!has_device(backend)) {
        std::printf("%s %s: skipped: no device\n", dtype_name(d), backend.c_str());
        continue;
      }
      auto out = run_on_backend(backend, sg, in);
      ASSERT_EQ(out.size(), ref.size());
      for (size_t k = 0; k < out.size(); ++k) {
        ASSERT_EQ(out[k].dtype(), d);
        // Poisoned-output check comes for free: a NaN fails relative_l2.
        EXPECT_LE(relative_l2(out[k], ref[k]), 4 * ulp) << dtype_name(d) << " on " << backend;
      }
    }
#ifdef FUSOR_HAVE_CUDA
    if (!has_device("cuda")) {
      Plan p = build_plan(sg);
      for (const KernelSpec& k : p.kernels) {
        std::string src = cuda_kernel_source(k, p, nullptr);
        if (src.empty()) continue;
        try {
          nvrtc_compile_check(src, kernel_identifier(k.name));
        } catch (const Error& e) {
          ADD_FAILURE() << dtype_name(d) << " cuda: " << e.what() << "\n" << src;
        }
      }
    }
#endif
  }
}


// An out-of-range index fails the run on every backend, as on ref (GPU kernels report it
// through a status word and clamp the access); in-range and negative indices still work.
TEST(Numerics, OutOfRangeIndicesFailEverywhere) {
  struct Case {
    std::string op;
    Build f;
  };
  Tensor data = tensor_of({3, 2}, {1, 2, 3, 4, 5, 6});
  const std::vector<Case> cases = {
      {"Gather", [](GraphBuilder& b, const std::vector<int>& x) { return b.op("Gather", {x[0], x[1]}, {{"axis", int64_t{0}}}); }},
      {"GatherElements",
       [](GraphBuilder& b, const std::vector<int>& x) { return b.op("GatherElements", {x[0], x[1]}, {{"axis", int64_t{0}}}); }},
      {"ScatterElements", [](GraphBuilder& b, const std::vector<int>& x) {
         return b.op("ScatterElements", {x[0], x[1], b.op("Identity", {x[0]})}, {{"axis", int64_t{0}}});
       }}};
  for (const Case& c : cases) {
    for (int64_t bad : {int64_t{3}, int64_t{-4}, int64_t{1} << 40}) {
      std::vector<Tensor> in = {data, ints_of({3, 2}, {0, 1, bad, -1, 2, 0})};
      Graph sg = specialize(make_graph(in, c.f, false), in);
      for (const std::string backend : {"ref", "cpu", "vulkan", "cuda"}) {
        if (!has_device(backend)) continue;
        try {
          run_on_backend(backend, sg, in);
          ADD_FAILURE() << c.op << " index " << bad << " on " << backend << ": no error";
        } catch (const Unsupported& e) {
          std::printf("%s on %s: skipped: %s\n", c.op.c_str(), backend.c_str(), e.what());
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << backend << ": " << e.what();
        }
      }
    }
    // The same graph with valid indices runs, and the status word does not stick.
    std::vector<Tensor> good = {data, ints_of({3, 2}, {0, 1, 2, -1, 2, 0})};
    Graph sg = specialize(make_graph(good, c.f, false), good);
    auto want = run_on_backend("ref", sg, good);
    for (const std::string backend : {"cpu", "vulkan", "cuda"}) {
      if (!has_device(backend)) continue;
      auto got = run_on_backend(backend, sg, good);
      expect_bits(got[0], want[0], c.op + " valid indices on " + backend);
    }
  }
}


// float64 transcendentals the GLSL dialect implements in double (exp, log: GLSL has none)
// stay within a few double ulps of the reference; fp32 evaluation would be off by ~1e-8.
TEST(Numerics, Float64ExpLogAreDouble) {
  Tensor x(DType::f64, {6});
  const double v[6] = {1e-12, 0.5, 3.25, 40.0, 700.0, 1.0 + 1e-13};
  for (int i = 0; i < 6; ++i) x.data<double>()[i] = v[i];
  GraphBuilder b("f64", 18);
  int in = b.input("x", DType::f64, {6});
  b.output(b.op("Log", {in}));
  b.output(b.op("Exp", {b.op("Neg", {in})}));
  Graph sg = specialize(b.build(), {x});
  auto ref = run_on_backend("ref", sg, {x});
  for (const std::string backend : {"cpu", "vulkan", "cuda"}) {
    if (!has_device(backend)) continue;
    try {
      auto got = run_on_backend(backend, sg, {x});
      for (size_t k = 0; k < got.size(); ++k)
        for (int i = 0; i < 6; ++i) {
          const double w = ref[k].data<double>()[i], g = got[k].data<double>()[i];
          // Double-precision results (fp32 would be ~1e-7 off). Mesa's lavapipe loses up to
          // 5e-14 relative in fz_expd at large |x| (the same code is exact in a host replay).
          const double tol = backend == "vulkan" ? 1e-13 : 8e-16;
          EXPECT_LE(std::fabs(g - w), tol * std::fabs(w)) << backend << " output " << k << " element " << i;
        }
    } catch (const Unsupported& e) {
      std::printf("float64 exp/log on %s: skipped: %s\n", backend.c_str(), e.what());
    }
  }
}


// Float -> integer Cast truncates toward zero and saturates to the target's range, NaN gives 0
// (ir/scalar.h). The generated kernels used a bare C/GLSL cast, undefined out of range: lavapipe
// gave INT_MIN for NaN and +inf to int32, 0 for 300.7 to int8, 255 for NaN to uint8.
TEST(Numerics, FloatToIntegerCastsSaturate) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::vector<double> special = {nan, inf, -inf, -0.0, 300.7, -300.7, 127.9, -128.5, 255.5, 65535.5, -0.7, 3e9, -3e9,
                                       2147483648.0, 4294967296.0, 9.3e18, 1.9e19, -9.3e18, 1e20, 1e30};
  const std::vector<DType> targets = {DType::i8, DType::u8, DType::i16, DType::u16, DType::i32, DType::u32, DType::i64, DType::u64};
  for (DType src : {DType::f32, DType::f16, DType::bf16, DType::f64}) {
    Tensor x = specials_then_random(src, special, 24, 31, -1000.0, 1000.0);
    const int64_t n = x.numel();
    // Each target's result widened to int64 (an exact integer Cast) and concatenated.
    Tensor want(DType::i64, {n * static_cast<int64_t>(targets.size())});
    for (size_t t = 0; t < targets.size(); ++t) {
      const int bits = static_cast<int>(dtype_size(targets[t])) * 8;
      const bool uns = dtype_is_unsigned(targets[t]);
      const double hi = std::ldexp(1.0, uns ? bits : bits - 1), lo = uns ? 0.0 : -std::ldexp(1.0, bits - 1);
      for (int64_t i = 0; i < n; ++i) {
        const double v = x.get(i);
        int64_t w;
        if (std::isnan(v)) w = 0;
        else if (v >= hi) w = uns ? (bits == 64 ? -1 : (int64_t{1} << bits) - 1) : static_cast<int64_t>(hi - 1 > 9e18 ? INT64_MAX : hi - 1);
        else if (v <= lo) w = uns ? 0 : (bits == 64 ? kI64Min : static_cast<int64_t>(lo));
        else w = uns && bits == 64 ? static_cast<int64_t>(static_cast<uint64_t>(v)) : static_cast<int64_t>(v);
        want.set_int(static_cast<int64_t>(t) * n + i, w);
      }
    }
    check_everywhere(std::string("cast from ") + dtype_name(src), {x},
                     [&](GraphBuilder& b, const std::vector<int>& v) {
                       std::vector<int> parts;
                       for (DType t : targets)
                         parts.push_back(b.op("Cast", {b.op("Cast", {v[0]}, {{"to", int64_t{dtype_to_onnx(t)}}})}, {{"to", int64_t{7}}}));
                       return b.op("Concat", parts, {{"axis", int64_t{0}}});
                     },
                     want);
  }
}

// An integer (as its magnitude m and sign) rounded once, to nearest even, to a float of p
// significant bits, as a double; inf past `max_finite` (fp16: 65504, which 65520 and up round past).
double round_int_rne(uint64_t m, bool neg, int p, double max_finite) {
  int msb = 63;
  while (msb > 0 && !((m >> msb) & 1)) --msb;
  double r;
  if (m == 0 || msb < p) r = static_cast<double>(m);
  else {
    const int shift = msb + 1 - p;
    uint64_t q = m >> shift;
    const uint64_t rem = m & ((uint64_t{1} << shift) - 1), half = uint64_t{1} << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
    r = std::ldexp(static_cast<double>(q), shift);
  }
  if (r > max_finite) r = std::numeric_limits<double>::infinity();
  return neg ? -r : r;
}

// A Cast from a double or an integer to fp16 / bf16 (and from a 64-bit integer to fp32) rounds
// once, to the nearest value of the target: red-team round 23 found the GPUs going through the
// nearest float first (f64 65519.999999 -> fp16 inf instead of 65504, int32 16842753 -> bf16 one
// step low) and ref / cpu taking 64-bit integers through the nearest double (int64 2^60 + 2^36 +
// 1 -> fp32 one ulp low). The expected values here are the integers rounded exactly.
TEST(Numerics, CastsToNarrowerFloatsRoundOnce) {
  const std::vector<int64_t> i64 = {(int64_t{1} << 60) + (int64_t{1} << 36) + 1, -((int64_t{1} << 60) + (int64_t{1} << 36) + 1),
                                    (int64_t{1} << 60) + (int64_t{1} << 52) + 1, 16842753, -16842753,
                                    (int64_t{1} << 40) + (int64_t{1} << 32) + 1, (int64_t{1} << 24) + 1, (int64_t{1} << 53) + 1,
                                    std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(), 65519, 65520, -65520,
                                    2049, 4097, 0, 1, -1, 33554435, -(int64_t{1} << 62) - 3};
  const std::vector<uint64_t> u64 = {(uint64_t{1} << 63) + (uint64_t{1} << 39) + 1, (uint64_t{1} << 63) + (uint64_t{1} << 55) + 1,
                                     std::numeric_limits<uint64_t>::max(), 2155872257u, 4294967295u, 16842753, 0, 65521};
  const std::vector<std::pair<DType, int>> targets = {{DType::f32, 24}, {DType::f16, 11}, {DType::bf16, 8}};
  auto max_of = [](DType t) { return t == DType::f16 ? 65504.0 : t == DType::bf16 ? 3.3895313892515355e38 : 3.4028234663852886e38; };
  for (DType src : {DType::i64, DType::u64, DType::i32, DType::u32}) {
    std::vector<std::pair<uint64_t, bool>> vals;  // magnitude, negative
    if (src == DType::u64 || src == DType::u32)
      for (uint64_t v : u64) {
        if (src == DType::u32 && v > 0xffffffffu) continue;
        vals.push_back({v, false});
      }
    else
      for (int64_t v : i64) {
        if (src == DType::i32 && (v > std::numeric_limits<int32_t>::max() || v < std::numeric_limits<int32_t>::min())) continue;
        vals.push_back({v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v), v < 0});
      }
    const int64_t n = static_cast<int64_t>(vals.size());
    Tensor x(src, {n});
    for (int64_t i = 0; i < n; ++i) {
      const auto [m, neg] = vals[static_cast<size_t>(i)];
      x.set_int(i, neg ? static_cast<int64_t>(uint64_t{0} - m) : static_cast<int64_t>(m));
    }
    Tensor want(DType::f64, {n * static_cast<int64_t>(targets.size())});
    for (size_t t = 0; t < targets.size(); ++t)
      for (int64_t i = 0; i < n; ++i)
        want.set(static_cast<int64_t>(t) * n + i, round_int_rne(vals[static_cast<size_t>(i)].first, vals[static_cast<size_t>(i)].second,
                                                                  targets[t].second, max_of(targets[t].first)));
    check_everywhere(std::string("cast from ") + dtype_name(src), {x},
                     [&](GraphBuilder& b, const std::vector<int>& v) {
                       std::vector<int> parts;
                       for (const auto& [t, p] : targets)
                         parts.push_back(b.op("Cast", {b.op("Cast", {v[0]}, {{"to", int64_t{dtype_to_onnx(t)}}})}, {{"to", int64_t{11}}}));
                       return b.op("Concat", parts, {{"axis", int64_t{0}}});
                     },
                     want);
  }
  // Doubles just past a tie of the 16-bit formats (their nearest float is the tie itself), and
  // doubles near fp16's largest value; ref's conversion (one rounding from the double) is the oracle.
  const std::vector<double> d = {65519.999999, -65519.999999, 65520.0, 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30),
                                 1.0 + std::ldexp(1.0, -8) + 1e-12, -(1.0 + std::ldexp(1.0, -8) + 1e-12), 1.0 + std::ldexp(1.0, -11) - std::ldexp(1.0, -40),
                                 3.0 + std::ldexp(3.0, -11) + std::ldexp(1.0, -35), 0.1, -2.5e-7, 6.1e-5 + 1e-20, 1e300, -0.0};
  Tensor xd(DType::f64, {static_cast<int64_t>(d.size())});
  for (size_t i = 0; i < d.size(); ++i) xd.set(static_cast<int64_t>(i), d[i]);
  Tensor wd(DType::f64, {2 * static_cast<int64_t>(d.size())});
  for (size_t i = 0; i < d.size(); ++i) {
    wd.set(static_cast<int64_t>(i), half_bits_to_float(float_to_half_bits(d[i])));
    wd.set(static_cast<int64_t>(d.size() + i), bf16_bits_to_float(float_to_bf16_bits(d[i])));
  }
  EXPECT_EQ(wd.get(0), 65504.0);  // the oracle itself: one rounding, not through the float 65520
  check_everywhere("cast from double", {xd},
                   [&](GraphBuilder& b, const std::vector<int>& v) {
                     std::vector<int> parts;
                     for (DType t : {DType::f16, DType::bf16})
                       parts.push_back(b.op("Cast", {b.op("Cast", {v[0]}, {{"to", int64_t{dtype_to_onnx(t)}}})}, {{"to", int64_t{11}}}));
                     return b.op("Concat", parts, {{"axis", int64_t{0}}});
                   },
                   wd);
}

// Signed zeros in fused kernels are ref's on every backend: Selu / Celu / Elu of -0 are -0
// (the GPUs' expm1 polynomial gave +0), and Max / Min of equal operands return the second, as
// ref does (GLSL max / min and CUDA fmaxf / fminf may return either zero: vulkan gave
// Min(-x, x) = -0 in both orders). Red-team round 23.
TEST(Numerics, SignedZerosMatchRefInFusedKernels) {
  for (DType t : {DType::f32, DType::f64, DType::f16}) {
    Tensor x(t, {4});
    x.set(0, -0.0), x.set(1, 0.0), x.set(2, -0.0), x.set(3, 1.5);
    const Build f = [](GraphBuilder& b, const std::vector<int>& v) {
      const int neg = b.op("Neg", {v[0]});
      std::vector<int> parts = {b.op("Selu", {v[0]}), b.op("Celu", {v[0]}), b.op("Elu", {v[0]}), b.op("Relu", {v[0]}),
                                b.op("Min", {neg, v[0]}), b.op("Min", {v[0], neg}), b.op("Max", {neg, v[0]}), b.op("Max", {v[0], neg})};
      return b.op("Concat", parts, {{"axis", int64_t{0}}});
    };
    const Graph g = make_graph({x}, f, false);
    const Tensor want = run_on_backend("ref", specialize(g, {x}), {x}, CompileOptions{})[0];
    EXPECT_TRUE(std::signbit(want.get(0))) << "ref: Selu(-0) is -0";
    EXPECT_TRUE(std::signbit(want.get(8))) << "ref: Elu(-0) is -0";
    check_everywhere(std::string("signed zeros ") + dtype_name(t), {x}, f, want);
  }
  // Reductions of -0 (the cpu row kernel added a zero compensation to every combiner's result,
  // and -0 + 0 is +0; review of this session's change).
  Tensor z(DType::f32, {2, 2});
  z.set(0, -0.0), z.set(1, -0.0), z.set(2, -1.0), z.set(3, 0.0);
  for (const char* op : {"ReduceMax", "ReduceMin", "ReduceProd"}) {
    const Build f = [op](GraphBuilder& b, const std::vector<int>& v) { return b.op(op, {v[0], b.constant("axes", ints_of({1}, {1}))}); };
    const Tensor want = run_on_backend("ref", specialize(make_graph({z}, f, false), {z}), {z}, CompileOptions{})[0];
    const bool prod = std::string(op) == "ReduceProd";  // -0 * -0 is +0: the product of [-1, 0] is -0
    EXPECT_TRUE(std::signbit(want.get(prod ? 1 : 0))) << op << " on ref";
    check_everywhere(std::string(op) + " of -0", {z}, f, want);
  }
}

// Integer ReduceL1 / ReduceSumSquare / CumSum wrap in their dtype (int8 |-128| is -128); ref
// and cpu went through double and saturated (127), the GPUs summed |x| and x * x in fp32. An
// 8/16-bit ReduceMean is the truncated exact mean (np.mean(x).astype, as the ONNX reference):
// ref wrapped the sum first (uint8 [255 x 8, 0 x 8] averaged 15), vulkan did not.
TEST(Numerics, IntegerReductionsWrapInTheirDtype) {
  for (DType t : {DType::i8, DType::u8, DType::i16}) {
    const bool uns = dtype_is_unsigned(t);
    const int64_t mx = t == DType::i8 ? 127 : t == DType::u8 ? 255 : 32767, mn = uns ? 0 : -mx - 1;
    Tensor x(t, {3, 16});
    std::mt19937_64 rng(7);
    for (int64_t i = 0; i < 48; ++i) {
      int64_t v = i < 8 ? mx : i < 16 ? mn : static_cast<int64_t>(rng() % static_cast<uint64_t>(mx - mn)) + mn;
      x.set_int(i, v == 0 ? 3 : v);
    }
    auto wrap = [&](int64_t v) { return wrap_int(v, t); };
    Tensor l1(t, {3}), sq(t, {3}), mean(t, {3}), cs(t, {3, 16});
    for (int64_t r = 0; r < 3; ++r) {
      int64_t a = 0, b = 0, m = 0;
      for (int64_t k = 0; k < 16; ++k) {
        const int64_t v = x.get_int(r * 16 + k);
        a += v < 0 ? -v : v, b += v * v, m += v;
        cs.set_int(r * 16 + k, wrap(m));
      }
      l1.set_int(r, wrap(a)), sq.set_int(r, wrap(b)), mean.set_int(r, m / 16);
    }
    const std::string nm = dtype_name(t);
    auto reduce = [](const char* op) {
      return [op](GraphBuilder& b, const std::vector<int>& v) {
        return b.op(op, {v[0], b.constant("axes", ints_of({1}, {1}))}, {{"keepdims", int64_t{0}}});
      };
    };
    check_everywhere(nm + " ReduceL1", {x}, reduce("ReduceL1"), l1);
    check_everywhere(nm + " ReduceSumSquare", {x}, reduce("ReduceSumSquare"), sq);
    check_everywhere(nm + " ReduceMean", {x}, reduce("ReduceMean"), mean);
    check_everywhere(nm + " CumSum", {x},
                     [](GraphBuilder& b, const std::vector<int>& v) { return b.op("CumSum", {v[0], b.constant("axis", ints_of({}, {1}))}); },
                     cs);
  }
}

// An 8/16-bit ReduceMean sums in the GPUs' 32-bit compute type: 70000 int16 32767s would wrap
// it (ref sums in int64), so the generated kernel refuses such a mean and the host computes it;
// 60000 still fit. Checked on the CUDA emitter (lavapipe's loop limit refuses both lengths).
TEST(Numerics, LongSixteenBitMeansLeaveTheGpuRatherThanWrap) {
#ifdef FUSOR_HAVE_CUDA
  for (const auto& [t, len, fits] : {std::tuple{DType::i16, 70000, false}, std::tuple{DType::i16, 60000, true},
                                     std::tuple{DType::u16, 70000, false}, std::tuple{DType::i8, 20000000, false},
                                     std::tuple{DType::i8, 60000, true}}) {
    GraphBuilder b("mean16", 18);
    b.output(b.op("ReduceMean", {b.input("x", t, {1, len}), b.constant("axes", ints_of({1}, {1}))}, {{"keepdims", int64_t{0}}}));
    const Graph sg = specialize(b.build(), {Tensor(t, {1, len})});
    const Plan p = build_plan(sg);
    ASSERT_EQ(p.kernels.size(), 1u);
    const std::string msg = testing::error_of([&] { (void)cuda_kernel_source(p.kernels[0], p, nullptr); });
    if (fits) EXPECT_EQ(msg, "") << dtype_name(t) << " x " << len;
    else EXPECT_NE(msg.find("sums past the 32-bit compute type"), std::string::npos) << dtype_name(t) << " x " << len << ": " << msg;
  }
  Tensor x(DType::i16, {1, 70000});
  for (int64_t i = 0; i < x.numel(); ++i) x.set_int(i, 32767 - (i % 3));
  Tensor want(DType::i16, {1});
  want.set_int(0, (32767LL * 70000 - 69999) / 70000);  // the exact sum's truncated mean: 32766
  check_everywhere("int16 ReduceMean of 70000", {x}, [](GraphBuilder& b, const std::vector<int>& v) {
    return b.op("ReduceMean", {v[0], b.constant("axes", ints_of({1}, {1}))}, {{"keepdims", int64_t{0}}});
  }, want);
#else
  GTEST_SKIP() << "built without the CUDA toolkit: the CUDA emitter is not here";
#endif
}

// int32 / int64 / uint32 CumSum on the GPUs sums in its own type, wrapping as ref does; the
// generated kernel refused them (computed through fp32), so every RoBERTa-style export's
// position ids broke the Vulkan graph (red-team round 24).
TEST(Numerics, WideIntegerCumSumRunsInItsOwnType) {
  for (DType t : {DType::i32, DType::i64, DType::u32})
    for (int64_t excl : {0, 1})
      for (int64_t rev : {0, 1}) {
        Tensor x(t, {3, 5});
        const int64_t big = t == DType::i64 ? (int64_t{1} << 60) + 12345 : t == DType::u32 ? int64_t{4000000000} : int64_t{2147483000};
        for (int64_t i = 0; i < 15; ++i) x.set_int(i, i % 5 == 1 ? big : (t == DType::u32 ? i * 7 : i * 7 - 40));
        Tensor want(t, x.shape());
        for (int64_t r = 0; r < 3; ++r) {
          int64_t acc = 0;
          for (int64_t k = 0; k < 5; ++k) {
            const int64_t j = rev ? 4 - k : k, v = x.get_int(r * 5 + j);
            if (!excl) acc = static_cast<int64_t>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(v));
            want.set_int(r * 5 + j, wrap_int(acc, t));
            if (excl) acc = static_cast<int64_t>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(v));
          }
        }
        const Build f = [excl, rev](GraphBuilder& b, const std::vector<int>& v) {
          return b.op("CumSum", {v[0], b.constant("axis", ints_of({}, {1}))}, {{"exclusive", excl}, {"reverse", rev}});
        };
        const std::string nm = std::string("CumSum ") + dtype_name(t) + (excl ? " exclusive" : "") + (rev ? " reverse" : "");
        check_everywhere(nm, {x}, f, want);
        expect_on_device(nm, {x}, f, want);
      }
}

// ScatterND / ScatterElements without a reduction only move elements: int64 data past 2^53 (and
// any dtype) keeps every bit on the GPUs, which refused them as "computed through fp32"
// (dynamo's index_put writes an int64 ScatterND; red-team round 24).
TEST(Numerics, ScattersWithoutAReductionMoveWideDataExactly) {
  for (DType t : {DType::i64, DType::u64, DType::i32, DType::f64}) {
    Tensor x(t, {4, 3}), upd(t, {2, 3}), upd_e(t, {1, 3});
    for (int64_t i = 0; i < 12; ++i) x.set_int(i, (int64_t{1} << 60) + i * 1000003);
    for (int64_t i = 0; i < 6; ++i) upd.set_int(i, -((int64_t{1} << 55) + i * 7));
    for (int64_t i = 0; i < 3; ++i) upd_e.set_int(i, (int64_t{1} << 58) + 3 * i + 1);
    if (t == DType::i32 || t == DType::f64)
      for (Tensor* v : {&x, &upd, &upd_e})
        for (int64_t i = 0; i < v->numel(); ++i) v->set(i, t == DType::f64 ? 1e300 / static_cast<double>(i + 3) : static_cast<double>(2147480000 + i));
    Tensor want_nd = x, want_el = x;
    const size_t es = dtype_size(t);
    auto put = [es](Tensor& dst, int64_t di, const Tensor& src, int64_t si) { std::memcpy(dst.raw() + di * es, src.raw() + si * es, es); };
    for (int64_t j = 0; j < 3; ++j) {  // ScatterND: rows 2 and 0 from upd; ScatterElements: row 3 from upd_e
      put(want_nd, 2 * 3 + j, upd, j);
      put(want_nd, 0 * 3 + j, upd, 3 + j);
      put(want_el, 3 * 3 + j, upd_e, j);
    }
    const std::string nm = dtype_name(t);
    const Build nd = [](GraphBuilder& b, const std::vector<int>& v) {
      return b.op("ScatterND", {v[0], b.constant("idx", ints_of({2, 1}, {2, 0})), v[1]});
    };
    const Build el = [](GraphBuilder& b, const std::vector<int>& v) {
      return b.op("ScatterElements", {v[0], b.constant("idx", ints_of({1, 3}, {3, 3, 3})), v[1]}, {{"axis", int64_t{0}}});
    };
    check_everywhere("ScatterND " + nm, {x, upd}, nd, want_nd);
    expect_on_device("ScatterND " + nm, {x, upd}, nd, want_nd);
    check_everywhere("ScatterElements " + nm, {x, upd_e}, el, want_el);
    expect_on_device("ScatterElements " + nm, {x, upd_e}, el, want_el);
  }
}

// Round is IEEE roundToIntegralTiesToEven: -0.4 and -0.0 give -0.0, 0.49999999999999994 gives
// 0. ref/cpu computed floor(v + 0.5): +0.0 for (-0.5, -0.0], and 1 for 0.49999999999999994.
TEST(Numerics, RoundKeepsTheSignOfZeroAndRoundsHalfToEven) {
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64}) {
    Tensor x = specials_then_random(t, {-0.0, 0.0, -0.4, -0.5, 0.5, -1.5, 2.5, -2.5, 0.49999997, 0.49999999999999994, 1e9 + 0.5}, 40, 5,
                                    -4.0, 4.0);
    Tensor want(t, x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) want.set(i, std::nearbyint(x.get(i)));  // default mode: ties to even
    check_everywhere(std::string("round ") + dtype_name(t), {x},
                     [](GraphBuilder& b, const std::vector<int>& v) { return b.op("Round", {v[0]}); }, want);
  }
}


// float64 fmod is exact across the whole exponent range: fmod(DBL_MAX, 2^-1022) is 0 (vulkan's
// scaling factor 2^(e - 1000) overflowed its exponent field past e = 2023).
TEST(Numerics, Float64FmodSpansTheExponentRange) {
  const double big = std::numeric_limits<double>::max(), tiny = std::numeric_limits<double>::min();
  Tensor a = specials_then_random(DType::f64, {big, -big, 1e308, 1e300, -7.5, 1e-300}, 16, 11, -100.0, 100.0);
  Tensor b = specials_then_random(DType::f64, {tiny, tiny, 3.0, 1e-300, 2.0, 3e-308}, 16, 12, 0.5, 10.0);
  Tensor want(DType::f64, a.shape());
  for (int64_t i = 0; i < a.numel(); ++i) want.set(i, std::fmod(a.get(i), b.get(i)));
  check_everywhere("float64 fmod", {a, b}, binary("Mod", {{"fmod", int64_t{1}}}), want);
}

// Odd functions keep the sign of zero: f(-0) = -0. Vulkan gave +0 for Atan, Asinh, Atanh,
// Sinh and Tanh (fp32/fp16/bf16: lavapipe's builtins, fz_tanh's polynomial) and for float64
// Sin, Sinh and Erf (shaders/f64_math.glsl).
TEST(Numerics, OddFunctionsKeepNegativeZero) {
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64}) {
    for (const char* op : {"Atan", "Asinh", "Atanh", "Sinh", "Tanh", "Sin", "Erf", "Asin", "Tan"}) {
      Tensor x = tensor_of({2}, {-0.0, 0.0}, t);
      check_everywhere(std::string(op) + " " + dtype_name(t), {x},
                       [op](GraphBuilder& b, const std::vector<int>& v) { return b.op(op, {v[0]}); }, x);
    }
  }
}

// Constants inside op expressions (HardSwish's 1/6, Gelu's sqrt(1/2) and sqrt(2/pi)) were
// written to 9 digits: exact enough for fp32 but 2e-8 off in a float64 kernel.
TEST(Numerics, Float64ExpressionConstantsAreDouble) {
  Tensor x = specials_then_random(DType::f64, {-3.5, 2.75, -0.125}, 40, 17, -4.0, 4.0);
  GraphBuilder b("f64_consts", 20);
  int in = b.input("x", DType::f64, x.shape());
  b.output(b.op("HardSwish", {in}));
  b.output(b.op("Gelu", {in}));
  b.output(b.op("Gelu", {in}, {{"approximate", std::string("tanh")}}));
  Graph sg = specialize(b.build(), {x});
  std::vector<std::vector<double>> want(3);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.get(i);
    want[0].push_back(v * std::max(0.0, std::min(1.0, v / 6.0 + 0.5)));
    want[1].push_back(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
    want[2].push_back(0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))));
  }
  for (const std::string backend : {"ref", "cpu", "vulkan", "cuda"}) {
    if (!has_device(backend)) continue;
    try {
      auto got = run_on_backend(backend, sg, {x});
      for (size_t k = 0; k < got.size(); ++k)
        for (int64_t i = 0; i < x.numel(); ++i) {
          // Away from Gelu's cancellation (x < -2: 1 + erf(x) loses digits to erf's own error),
          // a double result is within 1e-13 relative (9-digit constants were off by 1e-9..1e-8).
          if (x.get(i) < -2.0) continue;
          const double w = want[k][static_cast<size_t>(i)], g = got[k].data<double>()[i];
          EXPECT_LE(std::fabs(g - w), 1e-13 * std::fabs(w) + 1e-300) << backend << " output " << k << " x = " << x.get(i);
        }
    } catch (const Unsupported& e) {
      std::printf("float64 constants on %s: skipped: %s\n", backend.c_str(), e.what());
    }
  }
}

// sinh / cosh / asinh / atanh / acosh within 1e-6 relative of ref (fp32) near 0 and for huge |x|. GLSL
// allows their textbook formulas, which cancel near 0 and overflow early: vulkan (lavapipe) gave
// sinh(2^-126) = 3e-8, sinh(1e-3) 1.7e-5 off, asinh(1e-3) 2e-5 off, asinh(3e38) = inf,
// acosh(3e38) = inf and acosh(-3e38) = +inf (NaN).
TEST(Numerics, HyperbolicsStayAccurateNearZeroAndForHugeInputs) {
  // 88.5 .. 89.4: sinh / cosh finite while exp(|x|) overflows (vulkan gave inf; red-team round 8).
  const std::vector<double> special = {1e-3, -1e-3, 1e-20, 1.17549435e-38, 0.2, -0.24, 0.26, 3.0, 1e20, -1e20, 3e38, -3e38, 0.5, 1.0,
                                       88.5, 88.8, -89.0, 89.4, -89.41, 89.5, 100.0};
  Tensor x = specials_then_random(DType::f32, special, 40, 23, -0.3, 0.3);
  GraphBuilder b("hyperbolic", 18);
  int in = b.input("x", DType::f32, x.shape());
  const std::vector<std::string> ops = {"Sinh", "Cosh", "Asinh", "Atanh", "Acosh"};
  for (const std::string& op : ops) b.output(b.op(op, {in}));
  Graph sg = specialize(b.build(), {x});
  auto ref = run_on_backend("ref", sg, {x});
  for (const std::string backend : {"cpu", "vulkan", "cuda"}) {
    if (!has_device(backend)) continue;
    auto got = run_on_backend(backend, sg, {x});
    for (size_t k = 0; k < got.size(); ++k)
      for (int64_t i = 0; i < x.numel(); ++i) {
        const double w = ref[k].get(i), g = got[k].get(i);
        if (std::isnan(w) || std::isinf(w)) {
          EXPECT_TRUE(std::isnan(w) ? std::isnan(g) : g == w) << backend << " " << ops[k] << "(" << x.get(i) << ") = " << g << ", ref " << w;
          continue;
        }
        // 1e-6 relative, and sinh near fp32's overflow where exp's few ulp show (|sinh| > 1e37).
        EXPECT_LE(std::fabs(g - w), (std::fabs(w) > 1e37 ? 1e-5 : 1e-6) * std::fabs(w))
            << backend << " " << ops[k] << "(" << x.get(i) << ") = " << g << ", ref " << w;
      }
  }
}



// exp, log, sin, cos, tan, the inverse trigonometric and hyperbolic functions (and the helpers
// built on exp) within a few ulp of ref over the whole float range. GLSL promises (3 + 2|x|) ulp
// for exp, nothing outside [-pi, pi] for sin / cos and nothing for asin / acos: lavapipe gave
// cos(3e38) = 1, sin(-9.42) 2048 ulp off (its fma rounded twice), exp 27, sinh / cosh 85, asin /
// acos ~3,900, atan 346 and acosh(1.00024) 728 ulp off (vk_glsl_helpers.cpp has the fixes).
TEST(Numerics, TranscendentalsStayWithinAFewUlpOverTheFloatRange) {
  std::mt19937 rng(41);
  std::vector<double> trig, pos, expo;
  for (double m : {1.0, 3.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6, 1e8, 1e12, 1e20, 1e30, 3e38})
    for (int i = 0; i < 64; ++i) trig.push_back(std::uniform_real_distribution<double>(-m, m)(rng));
  for (int k = 1; k < 400; k += 3) {  // next to multiples of pi/2, where the reduction cancels
    trig.push_back(static_cast<float>(k * M_PI / 2));
    trig.push_back(-static_cast<float>(k * 1e4 * M_PI / 2));
  }
  for (double v : trig) pos.push_back(std::fabs(v) + 1e-30);
  // exp's whole range: its subnormal results (below -87.3) and its scaling past 2^127 (above 88.0),
  // sinh / cosh past 88.7, where exp(|x|) overflows and they do not.
  for (int i = 0; i < 600; ++i) expo.push_back(std::uniform_real_distribution<double>(-104.0, 89.4)(rng));
  std::vector<double> unit, above1;  // asin / acos's domain (and next to +-1); acosh's (next to 1)
  for (int i = 0; i < 400; ++i) {
    const double u = std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
    unit.push_back(i % 4 ? u : std::copysign(1.0 - std::fabs(u) * 1e-3, u));
    above1.push_back(i % 2 ? 1.0 + std::fabs(u) * 1e-3 : 1.0 + std::fabs(trig[static_cast<size_t>(i)]));
  }
  struct Case {
    const char* op;
    const std::vector<double>* x;
  };
  for (const Case& c : {Case{"Sin", &trig}, Case{"Cos", &trig}, Case{"Tan", &trig}, Case{"Log", &pos}, Case{"Exp", &expo},
                        Case{"Sinh", &expo}, Case{"Cosh", &expo}, Case{"Tanh", &trig}, Case{"Sigmoid", &expo}, Case{"Asin", &unit},
                        Case{"Acos", &unit}, Case{"Atan", &trig}, Case{"Asinh", &trig}, Case{"Acosh", &above1}, Case{"Atanh", &unit},
                        Case{"Erf", &expo}, Case{"Softplus", &expo}}) {
    Tensor x(DType::f32, {static_cast<int64_t>(c.x->size())});
    for (int64_t i = 0; i < x.numel(); ++i) x.set(i, (*c.x)[static_cast<size_t>(i)]);
    GraphBuilder b("transcendental", 18);
    b.output(b.op(c.op, {b.input("x", DType::f32, x.shape())}));
    Graph sg = specialize(b.build(), {x});
    const Tensor want = run_on_backend("ref", sg, {x})[0];
    for (const std::string backend : {"cpu", "vulkan", "cuda"}) {
      if (!has_device(backend)) continue;
      const Tensor got = run_on_backend(backend, sg, {x})[0];
      int64_t worst = 0, at = 0;
      for (int64_t i = 0; i < x.numel(); ++i) {
        // A subnormal result may be flushed where the device does (lavapipe; its note says so).
        if (std::fabs(want.get(i)) < 0x1p-126 && got.get(i) == 0.0) continue;
        const int64_t u = ulp_distance(DType::f32, got.get(i), want.get(i));
        if (u < 0 || u > worst) worst = u < 0 ? INT64_MAX : u, at = i;
      }
      // CUDA's tanf is documented to 4 ulp; ref's own rounding adds at most one.
      EXPECT_LE(worst, 5) << backend << " " << c.op << "(" << x.get(at) << ") = " << got.get(at) << ", ref " << want.get(at);
    }
  }
}

}  // namespace
}  // namespace fusor