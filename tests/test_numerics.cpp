// Exact numerics on every backend (issue "each value computed in its own dtype"): integers
// wrap like numpy, int64 stays exact past 2^53, fp16 rounds half to even, fmod is exact,
// float64 is computed in double. Each case runs with its inputs as run-time graph inputs and
// again as constants (so constant folding takes the ref path), on ref, cpu (fused and
// unfused), vulkan where a device is present, and cuda (on a device; otherwise every kernel
// is compiled with NVRTC). Results are compared bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <limits>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "ir/kernel_spec.h"
#include "ir/passes.h"
#include "ir/scalar.h"
#include "runtime/session.h"
#include "test_util.h"
#ifdef FUSOR_HAVE_CUDA
#include "backends/cuda/cuda_backend.h"
#include "backends/codegen.h"
#endif

namespace fusor {
namespace {

using testing::ints_of;
using testing::tensor_of;

bool has_device(const std::string& name) {
  auto names = backend_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) return false;
  return !make_backend(name)->devices().empty();
}

std::string bits_str(const Tensor& t) {
  std::string s;
  for (int64_t i = 0; i < t.numel() && i < 8; ++i) {
    if (dtype_is_integral(t.dtype())) s += std::to_string(t.get_int(i)) + " ";
    else {
      char b[64];
      std::snprintf(b, sizeof b, "%.17g ", t.get(i));
      s += b;
    }
  }
  return s;
}

void expect_bits(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  EXPECT_EQ(0, std::memcmp(got.raw(), want.raw(), want.nbytes())) << what << ": got " << bits_str(got) << " want " << bits_str(want);
}

// A one-output graph built by f over its inputs (graph inputs or constants).
using Build = std::function<int(GraphBuilder&, const std::vector<int>&)>;

Graph make_graph(const std::vector<Tensor>& in, const Build& f, bool as_constants) {
  GraphBuilder b("numerics", 18);
  std::vector<int> ids;
  for (size_t i = 0; i < in.size(); ++i)
    ids.push_back(as_constants ? b.constant("c" + std::to_string(i), in[i]) : b.input("x" + std::to_string(i), in[i].dtype(), in[i].shape()));
  b.output(f(b, ids));
  return b.build();
}

// Runs the case everywhere it can and compares every result with `want` bit for bit.
void check_everywhere(const std::string& name, const std::vector<Tensor>& in, const Build& f, const Tensor& want) {
  for (bool as_constants : {false, true}) {
    Graph model = make_graph(in, f, as_constants);
    const std::vector<Tensor> feed = as_constants ? std::vector<Tensor>{} : in;
    const std::string mode = as_constants ? " (constants)" : " (inputs)";
    Graph sg = specialize(model, feed);
    for (const std::string backend : {"ref", "cpu", "vulkan", "cuda"}) {
      if (!has_device(backend)) continue;
      for (bool fusion : {true, false}) {
        if (backend == "ref" && !fusion) continue;
        CompileOptions o;
        o.fusion = fusion;
        try {
          auto out = run_on_backend(backend, sg, feed, o);
          ASSERT_EQ(out.size(), 1u);
          expect_bits(out[0], want, name + mode + " on " + backend + (fusion ? "" : " unfused"));
        } catch (const Unsupported& e) {
          std::printf("%s%s on %s: skipped: %s\n", name.c_str(), mode.c_str(), backend.c_str(), e.what());
        }
      }
    }
#ifdef FUSOR_HAVE_CUDA
    if (!has_device("cuda")) {  // no GPU: the generated CUDA C must still compile
      Plan p = build_plan(sg);
      for (const KernelSpec& k : p.kernels) {
        std::string src;
        try {
          src = cuda_kernel_source(k, p, nullptr);
          if (!src.empty()) nvrtc_compile_check(src, kernel_identifier(k.name));
        } catch (const Unsupported& e) {
          std::printf("%s%s on cuda: skipped: %s\n", name.c_str(), mode.c_str(), e.what());
        } catch (const Error& e) {
          ADD_FAILURE() << name << mode << " cuda: " << e.what() << "\n" << src;
        }
      }
    }
#endif
  }
}

Build binary(const std::string& op, GraphBuilder::Attrs attrs = {}) {
  return [op, attrs](GraphBuilder& b, const std::vector<int>& x) { return b.op(op, {x[0], x[1]}, attrs); };
}

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
  check_everywhere("int64 where", {ints_of({2}, {1, 0}, DType::boolean), ints_of({2}, {p53 + 1, 0}), ints_of({2}, {0, -p53 - 3})},
                   [](GraphBuilder& b, const std::vector<int>& x) { return b.op("Where", {x[0], x[1], x[2]}); },
                   ints_of({2}, {p53 + 1, -p53 - 3}));
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

}  // namespace
}  // namespace fusor
