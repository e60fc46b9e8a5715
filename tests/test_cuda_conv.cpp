// Conv kernels on cuDNN, checked without a GPU: the LibraryConv that cuda_library_conv gives
// (dims, pads, strides, dilations, groups, where y goes, epilogue kind, scratch size) is
// evaluated on the CPU with cudnnConvolutionForward's semantics (cross-correlation, symmetric
// zero pads, NCHW x KCRS) and compared with `ref`; the generated epilogue kernels are
// NVRTC-compiled. GPU runs of the same graphs (cuDNN against ref, replayed and eager, and
// through run_device with swapped output buffers) are in CudaConv.OnDevice.
#ifdef FUSOR_HAVE_CUDA
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_conv.h"
#include "frontend/builder.h"
#include "ir/passes.h"
#include "runtime/session.h"
#include "cuda_device_check.h"
#include "test_util.h"

namespace fusor {
namespace {

using Lookup = std::function<const Tensor&(const std::string&)>;  // a graph input or constant by name

struct ConvCase {
  std::string name;
  std::function<void(GraphBuilder&)> build;  // one output, one conv
  bool library = true;                       // cuda_library_conv picks cuDNN
  LibraryConv::Epilogue epilogue = LibraryConv::Epilogue::none;
  // Epilogue::kernel: what the epilogue kernel applies to the conv value v at linear index i.
  std::function<double(double v, int64_t i, const LibraryConv& c, const Lookup& in)> after = nullptr;
  DType dtype = DType::f32;
  const char* policy = nullptr;  // FUSOR_CUDA_CONV for this case
  std::function<void(const LibraryConv&)> check = nullptr;  // descriptor expectations
  const char* epilogue_policy = nullptr;  // FUSOR_CUDA_CONV_EPILOGUE for this case
};

DType g_dtype = DType::f32;

int in(GraphBuilder& b, const std::string& n, Shape s) { return b.input(n, g_dtype, std::move(s)); }
int cst(GraphBuilder& b, const std::string& n, Shape s, uint64_t seed) { return b.constant(n, testing::random_tensor(g_dtype, s, seed)); }
using Ints = std::vector<int64_t>;

int conv(GraphBuilder& b, int x, int w, GraphBuilder::Attrs a = {}, int bias = -1) {
  std::vector<int> ins{x, w};
  if (bias >= 0) ins.push_back(bias);
  return b.op("Conv", ins, std::move(a));
}

std::vector<ConvCase> cases() {
  using E = LibraryConv::Epilogue;
  auto relu_bias = [](double v, int64_t i, const LibraryConv& c, const Lookup& in) {
    return std::max(0.0, v + in("bias").get((i / (c.oh * c.ow)) % c.k));
  };
  return {
      {"plain_3x3", [](GraphBuilder& b) { b.output(conv(b, in(b, "x", {1, 16, 20, 20}), cst(b, "w", {32, 16, 3, 3}, 1), {{"pads", Ints{1, 1, 1, 1}}})); },
       true, E::none, nullptr, DType::f32, nullptr,
       [](const LibraryConv& c) {
         EXPECT_EQ(c.oh, 20);
         EXPECT_EQ(c.pad_h, 1);
         EXPECT_EQ(c.y_strides, (std::array<int64_t, 4>{32 * 400, 400, 20, 1}));
       }},
      {"stride2_pads",
       [](GraphBuilder& b) {
         b.output(conv(b, in(b, "x", {2, 16, 17, 17}), cst(b, "w", {32, 16, 3, 3}, 2), {{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}}));
       },
       true, E::none, nullptr, DType::f32, nullptr,
       [](const LibraryConv& c) {
         EXPECT_EQ(c.stride_h, 2);
         EXPECT_EQ(c.stride_w, 2);
         EXPECT_EQ(c.pad_w, 1);
         EXPECT_EQ(c.oh, 9);
         EXPECT_EQ(c.ow, 9);
       }},
      {"asymmetric_pads_stay_on_template",  // pads 0,0,1,1: cuDNN's symmetric form has another size
       [](GraphBuilder& b) { b.output(conv(b, in(b, "x", {1, 16, 20, 20}), cst(b, "w", {32, 16, 3, 3}, 3), {{"pads", Ints{0, 0, 1, 1}}})); },
       false},
      {"grouped",
       [](GraphBuilder& b) {
         b.output(conv(b, in(b, "x", {1, 32, 16, 16}), cst(b, "w", {64, 8, 3, 3}, 4), {{"pads", Ints{1, 1, 1, 1}}, {"group", int64_t{4}}}));
       },
       true, E::none, nullptr, DType::f32, nullptr, [](const LibraryConv& c) { EXPECT_EQ(c.groups, 4); }},
      {"depthwise_stays_on_template",
       [](GraphBuilder& b) {
         b.output(conv(b, in(b, "x", {1, 64, 32, 32}), cst(b, "w", {64, 1, 3, 3}, 5), {{"pads", Ints{1, 1, 1, 1}}, {"group", int64_t{64}}}));
       },
       false},
      {"depthwise_forced",
       [](GraphBuilder& b) {
         b.output(conv(b, in(b, "x", {1, 64, 32, 32}), cst(b, "w", {64, 1, 3, 3}, 5), {{"pads", Ints{1, 1, 1, 1}}, {"group", int64_t{64}}}));
       },
       true, E::none, nullptr, DType::f32, "cudnn", [](const LibraryConv& c) { EXPECT_EQ(c.groups, 64); }},
      {"pointwise_1x1", [](GraphBuilder& b) { b.output(conv(b, in(b, "x", {2, 64, 14, 14}), cst(b, "w", {128, 64, 1, 1}, 6))); }, true,
       E::none, nullptr, DType::f32, nullptr, [](const LibraryConv& c) { EXPECT_EQ(c.r * c.s, 1); }},
      {"dilated",
       [](GraphBuilder& b) {
         b.output(conv(b, in(b, "x", {1, 16, 24, 24}), cst(b, "w", {32, 16, 3, 3}, 7), {{"pads", Ints{2, 2, 2, 2}}, {"dilations", Ints{2, 2}}}));
       },
       true, E::none, nullptr, DType::f32, nullptr,
       [](const LibraryConv& c) {
         EXPECT_EQ(c.dil_h, 2);
         EXPECT_EQ(c.oh, 24);
       }},
      {"bias_relu",  // cudnnConvolutionBiasActivationForward
       [](GraphBuilder& b) {
         int y = conv(b, in(b, "x", {2, 16, 16, 16}), cst(b, "w", {32, 16, 3, 3}, 8), {{"pads", Ints{1, 1, 1, 1}}}, cst(b, "bias", {32}, 9));
         b.output(b.op("Relu", {y}));
       },
       true, E::relu_bias, nullptr, DType::f32, nullptr, nullptr, "cudnn"},
      {"bias_relu_generated_epilogue",
       [](GraphBuilder& b) {
         int y = conv(b, in(b, "x", {2, 16, 16, 16}), cst(b, "w", {32, 16, 3, 3}, 8), {{"pads", Ints{1, 1, 1, 1}}}, cst(b, "bias", {32}, 9));
         b.output(b.op("Relu", {y}));
       },
       true, E::kernel, relu_bias, DType::f32, nullptr, nullptr, "kernel"},
      {"bias_stride2",  // identity activation: implicit precomputed GEMM
       [](GraphBuilder& b) {
         b.output(conv(b, in(b, "x", {1, 32, 28, 28}), cst(b, "w", {64, 32, 3, 3}, 16), {{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}},
                       cst(b, "bias", {64}, 17)));
       },
       true, E::bias, nullptr, DType::f32, nullptr, nullptr, "cudnn"},
      {"tanh_epilogue",
       [](GraphBuilder& b) {
         b.output(b.op("Tanh", {conv(b, in(b, "x", {1, 16, 20, 20}), cst(b, "w", {32, 16, 3, 3}, 18), {{"pads", Ints{1, 1, 1, 1}}})}));
       },
       true, E::kernel, [](double v, int64_t, const LibraryConv&, const Lookup&) { return std::tanh(v); }},
      {"residual_add",
       [](GraphBuilder& b) {
         int y = conv(b, in(b, "x", {1, 32, 14, 14}), cst(b, "w", {32, 32, 3, 3}, 10), {{"pads", Ints{1, 1, 1, 1}}});
         b.output(b.op("Add", {y, in(b, "r", {1, 32, 14, 14})}));
       },
       true, E::kernel, [](double v, int64_t i, const LibraryConv&, const Lookup& in) { return v + in("r").get(i); }},
      {"small_stays_on_template",  // 8 * 8 * 8 * 8 * 4 * 9 multiply-adds < 2^18
       [](GraphBuilder& b) { b.output(conv(b, in(b, "x", {1, 4, 8, 8}), cst(b, "w", {8, 4, 3, 3}, 11), {{"pads", Ints{1, 1, 1, 1}}})); },
       false},
      {"f16_plain",
       [](GraphBuilder& b) { b.output(conv(b, in(b, "x", {1, 16, 20, 20}), cst(b, "w", {32, 16, 3, 3}, 12), {{"pads", Ints{1, 1, 1, 1}}})); },
       true, E::none, nullptr, DType::f16},
      {"f16_bias_relu_stays_on_template",  // cuDNN would round the sum before the bias (one node, one rounding)
       [](GraphBuilder& b) {
         int y = conv(b, in(b, "x", {2, 16, 16, 16}), cst(b, "w", {32, 16, 3, 3}, 13), {{"pads", Ints{1, 1, 1, 1}}}, cst(b, "bias", {32}, 14));
         b.output(b.op("Relu", {y}));
       },
       false, E::kernel, relu_bias, DType::f16},
      {"f16_relu",  // no bias: cuDNN's sum in the dtype is the node's value
       [](GraphBuilder& b) {
         b.output(b.op("Relu", {conv(b, in(b, "x", {2, 16, 16, 16}), cst(b, "w", {32, 16, 3, 3}, 13), {{"pads", Ints{1, 1, 1, 1}}})}));
       },
       true, E::kernel, [](double v, int64_t, const LibraryConv&, const Lookup&) { return std::max(0.0, v); }, DType::f16},
      {"bf16_stride2_residual",
       [](GraphBuilder& b) {
         int y = conv(b, in(b, "x", {1, 16, 17, 17}), cst(b, "w", {32, 16, 3, 3}, 15), {{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}});
         b.output(b.op("Add", {y, in(b, "r", {1, 32, 9, 9})}));
       },
       true, E::kernel, [](double v, int64_t i, const LibraryConv&, const Lookup& in) { return v + in("r").get(i); }, DType::bf16},
  };
}

// cuDNN's own bias + ReLU (opt-in), which writes the fire module's Concat slices itself.
struct FusedEpilogue {
  FusedEpilogue() { ::setenv("FUSOR_CUDA_CONV_EPILOGUE", "cudnn", 1), ::setenv("FUSOR_CUDA_CONV", "library", 1); }
  ~FusedEpilogue() { ::unsetenv("FUSOR_CUDA_CONV_EPILOGUE"), ::unsetenv("FUSOR_CUDA_CONV"); }
};

struct EnvGuard {  // FUSOR_CUDA_CONV and FUSOR_CUDA_CONV_EPILOGUE for one case
  // The cases check cuDNN's descriptors: unless a case names a policy, the size policy that
  // sends every non-depthwise conv of >= 2^18 multiply-adds to cuDNN ("library"; the default
  // also keeps layers of few tiles on the template, CudaConvTemplate.*).
  explicit EnvGuard(const ConvCase& tc) {
    set("FUSOR_CUDA_CONV", tc.policy ? tc.policy : "library");
    set("FUSOR_CUDA_CONV_EPILOGUE", tc.epilogue_policy);
  }
  static void set(const char* name, const char* v) {
    if (v) ::setenv(name, v, 1);
    else ::unsetenv(name);
  }
  ~EnvGuard() {
    ::unsetenv("FUSOR_CUDA_CONV");
    ::unsetenv("FUSOR_CUDA_CONV_EPILOGUE");
  }
};

std::pair<Graph, std::vector<Tensor>> build_case(const ConvCase& tc, uint64_t seed) {
  return build_typed_case(tc.build, tc.dtype, g_dtype, seed);
}

// cudnnConvolutionForward on the host (cross-correlation, symmetric zero pads), in double: y
// dense NCHW [N, K, OH, OW].
std::vector<double> emulate(const LibraryConv& c, const Tensor& x, const Tensor& w) {
  std::vector<double> y(static_cast<size_t>(c.n * c.k * c.oh * c.ow));
  const int64_t cpg = c.c / c.groups, kpg = c.k / c.groups;
  for (int64_t n = 0; n < c.n; ++n)
    for (int64_t k = 0; k < c.k; ++k)
      for (int64_t oh = 0; oh < c.oh; ++oh)
        for (int64_t ow = 0; ow < c.ow; ++ow) {
          double acc = 0;
          const int64_t g = k / kpg;
          for (int64_t ci = 0; ci < cpg; ++ci)
            for (int64_t r = 0; r < c.r; ++r)
              for (int64_t s = 0; s < c.s; ++s) {
                const int64_t ih = oh * c.stride_h - c.pad_h + r * c.dil_h, iw = ow * c.stride_w - c.pad_w + s * c.dil_w;
                if (ih < 0 || ih >= c.h || iw < 0 || iw >= c.w) continue;
                acc += x.get(((n * c.c + g * cpg + ci) * c.h + ih) * c.w + iw) * w.get(((k * cpg + ci) * c.r + r) * c.s + s);
              }
          y[static_cast<size_t>(((n * c.k + k) * c.oh + oh) * c.ow + ow)] = acc;
        }
  return y;
}

const KernelSpec* conv_kernel(const Plan& p) {
  const KernelSpec* ck = nullptr;
  for (auto& k : p.kernels)
    if (k.conv) ck = &k;
  return ck;
}

TEST(CudaConv, LibraryDescriptorMatchesReference) {
  for (auto& tc : cases()) {
    SCOPED_TRACE(tc.name);
    EnvGuard env(tc);
    auto [g, inputs] = build_case(tc, 100);
    Plan p = build_plan(g);
    const KernelSpec* ck = conv_kernel(p);
    ASSERT_NE(ck, nullptr) << "no conv kernel";
    std::optional<LibraryConv> lib = cuda_library_conv(*ck, p);
    ASSERT_EQ(lib.has_value(), tc.library);
    if (!lib) continue;
    EXPECT_EQ(static_cast<int>(lib->epilogue), static_cast<int>(tc.epilogue));
    EXPECT_EQ(lib->dtype, tc.dtype);
    const int64_t elems = lib->n * lib->k * lib->oh * lib->ow;
    EXPECT_EQ(lib->scratch_bytes(), lib->epilogue == LibraryConv::Epilogue::kernel ? elems * static_cast<int64_t>(dtype_size(tc.dtype)) : 0);
    if (tc.check) tc.check(*lib);
    std::map<std::string, const Tensor*> by_name;
    for (size_t i = 0; i < p.input_buffers.size(); ++i) by_name[p.buffers[p.input_buffers[i]].name] = &inputs[i];
    for (size_t i = 0; i < p.buffers.size(); ++i)
      if (p.buffers[i].role == Buffer::Role::constant) by_name[p.buffers[i].name] = &*p.graph.values[p.buffers[i].value].constant;
    auto buffer = [&](int b) -> const Tensor& {
      if (!by_name.count(p.buffers[b].name)) throw Error("test", "no buffer '" + p.buffers[b].name + "'");
      return *by_name.at(p.buffers[b].name);
    };
    // Epilogue operands by their name in the built graph (the plan may have renamed a folded constant).
    for (size_t i = 0; i < g.inputs.size(); ++i) by_name[g.values[g.inputs[i]].name] = &inputs[i];
    for (auto& v : g.values)
      if (v.constant && !by_name.count(v.name)) by_name[v.name] = &*v.constant;
    const Lookup lookup = [&](const std::string& n) -> const Tensor& {
      if (!by_name.count(n)) throw Error("test", "no value '" + n + "'");
      return *by_name.at(n);
    };
    std::vector<double> got = emulate(*lib, buffer(lib->x_buffer), buffer(lib->w_buffer));
    Tensor want = run_on_backend("ref", g, inputs)[0];
    ASSERT_EQ(static_cast<int64_t>(got.size()), want.numel());
    if (lib->epilogue != LibraryConv::Epilogue::kernel) {
      // The kernel's output is the graph output: cuDNN writes it densely from element 0.
      EXPECT_EQ(lib->out_buffer, p.output_buffers[0]);
      EXPECT_EQ(lib->y_offset, 0);
      EXPECT_EQ(lib->y_strides, (std::array<int64_t, 4>{lib->k * lib->oh * lib->ow, lib->oh * lib->ow, lib->ow, 1}));
      if (lib->fused()) {  // cuDNN's y = act(conv + bias[k])
        ASSERT_GE(lib->bias_buffer, 0);
        const Tensor& bias = buffer(lib->bias_buffer);
        for (int64_t i = 0; i < elems; ++i) {
          got[i] += bias.get(lib->bias_offset + (i / (lib->oh * lib->ow)) % lib->k);
          if (lib->epilogue == LibraryConv::Epilogue::relu_bias) got[i] = std::max(0.0, got[i]);
        }
      }
    } else {
      ASSERT_TRUE(tc.after);
      for (int64_t i = 0; i < elems; ++i) {
        // fp16/bf16: cuDNN stores the conv in the dtype before the epilogue reads it.
        double v = got[i];
        if (tc.dtype != DType::f32) {
          Tensor t(tc.dtype, {1});
          t.set(0, v);
          v = t.get(0);
        }
        got[i] = tc.after(v, i, *lib, lookup);
      }
    }
    // A wrong pad, stride, group or layout is off by O(1); the dtype's rounding is not.
    const double tol = tc.dtype == DType::f32 ? 1e-4 : tc.dtype == DType::f16 ? 4e-3 : 3e-2;
    double worst = 0;
    for (int64_t i = 0; i < want.numel(); ++i) worst = std::max(worst, std::fabs(got[i] - want.get(i)) / std::max(1.0, std::fabs(want.get(i))));
    EXPECT_LT(worst, tol) << "largest difference from ref";
    // The epilogue kernel exists exactly when cuDNN does not write the output itself.
    std::string src = cuda_kernel_source(*ck, p, nullptr, &*lib);
    EXPECT_EQ(src.empty(), lib->epilogue != LibraryConv::Epilogue::kernel);
    if (!src.empty()) {
      EXPECT_NE(src.find("fz_conv"), std::string::npos);
      EXPECT_NO_THROW(nvrtc_compile_check(src, kernel_identifier(ck->name)));
    }
  }
}

TEST(CudaConv, PolicyOverride) {
  ConvCase tc = cases()[0];
  auto [g, inputs] = build_case(tc, 1);
  Plan p = build_plan(g);
  const KernelSpec* ck = conv_kernel(p);
  ASSERT_NE(ck, nullptr);
  ::setenv("FUSOR_CUDA_CONV", "library", 1);
  EXPECT_TRUE(cuda_library_conv(*ck, p).has_value());
  ::unsetenv("FUSOR_CUDA_CONV");  // the default: 4 tiles of 64 x 64 is a layer for the split-K template
  EXPECT_FALSE(cuda_library_conv(*ck, p).has_value());
  ::setenv("FUSOR_CUDA_CONV", "template", 1);
  EXPECT_FALSE(cuda_library_conv(*ck, p).has_value());
  // The plan's sources follow the policy: the template kernel, or no kernel at all.
  EXPECT_NE(cuda_generate_sources(p).back().second.find("FZ_LOAD_X"), std::string::npos);
  ::setenv("FUSOR_CUDA_CONV", "library", 1);
  bool empty = false;
  for (auto& [name, src] : cuda_generate_sources(p)) empty = empty || src.empty();
  EXPECT_TRUE(empty) << "cuDNN writes the bare conv itself";
  ::unsetenv("FUSOR_CUDA_CONV");
}

// Squeezenet's fire module: two convs (bias + ReLU) written straight into the channel slices
// of their Concat. Each cuDNN call writes its slice (y_offset, y_strides) of the one output
// buffer; together they must give ref's output.
Graph concat_graph() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {2, 16, 13, 13});
  int e1 = b.op("Relu", {conv(b, x, b.constant("w1", testing::random_tensor(DType::f32, {64, 16, 1, 1}, 21)), {},
                              b.constant("b1", testing::random_tensor(DType::f32, {64}, 22)))});
  int e3 = b.op("Relu", {conv(b, x, b.constant("w3", testing::random_tensor(DType::f32, {64, 16, 3, 3}, 23)), {{"pads", Ints{1, 1, 1, 1}}},
                              b.constant("b3", testing::random_tensor(DType::f32, {64}, 24)))});
  b.output(b.op("Concat", {e1, e3}, {{"axis", int64_t{1}}}));
  Graph g = b.build();
  make_static(g, {});
  return g;
}

TEST(CudaConv, ConcatSlicesWrittenInPlace) {
  FusedEpilogue fused;
  Graph g = concat_graph();
  std::vector<Tensor> inputs{testing::random_tensor(DType::f32, {2, 16, 13, 13}, 25)};
  Plan p = build_plan(g);
  Tensor want = run_on_backend("ref", g, inputs)[0];
  std::vector<double> got(static_cast<size_t>(want.numel()), std::nan(""));
  int convs = 0;
  for (auto& k : p.kernels) {
    if (!k.conv) continue;
    ++convs;
    std::optional<LibraryConv> lib = cuda_library_conv(k, p);
    ASSERT_TRUE(lib.has_value()) << k.name;
    if (lib->epilogue == LibraryConv::Epilogue::kernel) GTEST_SKIP() << "the plan does not store the convs into the Concat's slices";
    ASSERT_EQ(lib->epilogue, LibraryConv::Epilogue::relu_bias) << k.name;
    ASSERT_EQ(lib->out_buffer, p.output_buffers[0]) << k.name;
    auto value = [&](int buf) -> const Tensor& {
      return p.buffers[buf].role == Buffer::Role::constant ? *p.graph.values[p.buffers[buf].value].constant : inputs[0];
    };
    std::vector<double> y = emulate(*lib, value(lib->x_buffer), value(lib->w_buffer));
    const Tensor& bias = value(lib->bias_buffer);
    for (int64_t n = 0; n < lib->n; ++n)
      for (int64_t c = 0; c < lib->k; ++c)
        for (int64_t h = 0; h < lib->oh; ++h)
          for (int64_t w = 0; w < lib->ow; ++w) {
            const int64_t at = lib->y_offset + n * lib->y_strides[0] + c * lib->y_strides[1] + h * lib->y_strides[2] + w * lib->y_strides[3];
            ASSERT_LT(at, want.numel());
            got[at] = std::max(0.0, y[((n * lib->k + c) * lib->oh + h) * lib->ow + w] + bias.get(lib->bias_offset + c));
          }
  }
  EXPECT_EQ(convs, 2);
  double worst = 0;
  for (int64_t i = 0; i < want.numel(); ++i) worst = std::max(worst, std::isnan(got[i]) ? 1e9 : std::fabs(got[i] - want.get(i)));
  EXPECT_LT(worst, 1e-4) << "an element no slice wrote, or a slice at the wrong place";
}

// The same graphs on a GPU, cuDNN against ref, replayed and eager, and through run_device with
// swapped output buffers (the captured cuDNN call must follow the new pointers). Where
// libcudnn.so.9 does not load, the same graphs must run on the template with the reason noted.
TEST(CudaConv, OnDevice) {
  if (make_backend("cuda")->devices().empty()) GTEST_SKIP() << "no CUDA device";
  const std::unique_ptr<Cudnn> dnn = Cudnn::open();
  const bool have = dnn->available();
  std::printf("cuDNN %s\n", have ? "loaded" : ("unavailable: " + dnn->why()).c_str());
  for (auto& tc : cases()) {
    SCOPED_TRACE(tc.name);
    EnvGuard env(tc);
    auto [g, inputs] = build_case(tc, 200);
    Tensor want = run_on_backend("ref", g, inputs)[0];
    for (bool replay : {true, false}) {
      CompileOptions o;
      o.replay = replay;
      auto exe = make_backend("cuda")->compile(g, o);
      const std::string notes = exe->notes();
      EXPECT_NE(notes.find(tc.library && have ? "cuDNN: 1 of 1" : "cuDNN: 0 of 1"), std::string::npos) << notes;
      if (tc.library && !have) EXPECT_NE(notes.find("cuDNN unavailable"), std::string::npos) << notes;
      // A fused bias epilogue that cuDNN refused is noted (the generated one ran instead).
      if (notes.find("uses the") != std::string::npos) std::printf("%s: %s\n", tc.name.c_str(), notes.c_str());
      // fp32: summation order only (GEMM-family algorithms, FMA math); fp16/bf16: plus roundings.
      const double tol = tc.dtype == DType::f32 ? 1e-6 : tc.dtype == DType::f16 ? 1e-3 : 8e-3;
      Tensor got = exe->run(inputs)[0];
      ASSERT_EQ(got.dtype(), want.dtype());
      EXPECT_LE(relative_l2(got, want), tol) << (replay ? "replay" : "eager");
      expect_run_device_matches(*exe, inputs, want, tol);
      // And back to run() on host tensors.
      EXPECT_LE(relative_l2(exe->run(inputs)[0], want), tol) << "run after run_device";
    }
  }
}

// The fire module on a GPU: both cuDNN calls write strided slices of the graph output, replayed
// and eager, also into caller buffers (run_device) that alternate.
TEST(CudaConv, ConcatSlicesOnDevice) {
  if (make_backend("cuda")->devices().empty()) GTEST_SKIP() << "no CUDA device";
  FusedEpilogue fused;
  const bool have = Cudnn::open()->available();
  Graph g = concat_graph();
  std::vector<Tensor> inputs{testing::random_tensor(DType::f32, {2, 16, 13, 13}, 26)};
  Tensor want = run_on_backend("ref", g, inputs)[0];
  for (bool replay : {true, false}) {
    CompileOptions o;
    o.replay = replay;
    auto exe = make_backend("cuda")->compile(g, o);
    EXPECT_NE(exe->notes().find(have ? "cuDNN: 2 of 2" : "cuDNN: 0 of 2"), std::string::npos) << exe->notes();
    EXPECT_LE(relative_l2(exe->run(inputs)[0], want), 1e-6) << (replay ? "replay" : "eager");
    expect_run_device_matches(*exe, inputs, want, 1e-6);
  }
}

}  // namespace
}  // namespace fusor
#endif
