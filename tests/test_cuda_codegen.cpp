// CUDA code generation and execution. Codegen tests NVRTC-compile every generated kernel of
// hand-made graphs and of the shared models (no GPU needed); execution tests compare the cuda
// backend with ref on seeded random inputs and skip when no CUDA device is usable.
#ifdef FUSOR_HAVE_CUDA
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <set>
#include <algorithm>

#include "backends/compile_pool.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_driver.h"
#include "frontend/builder.h"
#include "ir/kernel_spec.h"
#include "ir/passes.h"
#include "runtime/session.h"

namespace fusor {
namespace {

Tensor cg_random(DType t, Shape s, uint64_t seed) {
  Tensor x(t, std::move(s));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, t == DType::boolean ? (rng() & 1) : u(rng));
  return x;
}

Graph cg_static(GraphBuilder& b) {
  Graph g = b.build();
  make_static(g, {});
  return g;
}

// NVRTC-compiles every kernel; a failure reports the source so it can be read in the log.
// Matmul kernels that cuBLASLt would run are compiled both ways: the template (used when the
// library is missing) and the generated epilogue kernel. The compiles run in parallel on all
// cores, as the backend's (backends/compile_pool.h); failures are reported in kernel order.
size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size())) ++n;
  return n;
}

// Programmatic dependent launch: every kernel entry (each template variant too) starts with
// FZ_GRID_DEPENDENCY() before it touches memory, or a kernel behind a programmatic graph edge
// would read its inputs before the kernel writing them is done. Between the signature and the
// wait only local declarations may stand (no indexing, loads, stores or atomics).
void expect_waits_first(const std::string& src, const std::string& what) {
  EXPECT_EQ(count_of(src, "__global__"), count_of(src, "FZ_GRID_DEPENDENCY();")) << what << "\n" << src;
  for (size_t at = src.find("__global__"); at != std::string::npos; at = src.find("__global__", at + 1)) {
    const size_t open = src.find(") {\n", at), wait = src.find("FZ_GRID_DEPENDENCY();", at);
    ASSERT_NE(open, std::string::npos) << what;
    ASSERT_NE(wait, std::string::npos) << what;
    const std::string before = src.substr(open + 3, wait - open - 3);
    for (const char* bad : {"[", "FZ_LOAD", "FZ_EPILOGUE", "atomic", "for (", "if ("})
      EXPECT_EQ(before.find(bad), std::string::npos) << what << ": '" << bad << "' before the grid-dependency wait:\n" << before;
  }
}

void compile_all(const Plan& p, const std::string& what) {
  std::vector<std::pair<std::string, std::string>> jobs;  // (identifier, source)
  for (const KernelSpec& k : p.kernels) {
    std::optional<LibraryGemm> lib = cuda_library_gemm(k, p);
    std::optional<LibraryConv> conv = cuda_library_conv(k, p);
    std::vector<std::string> sources{cuda_kernel_source(k, p, nullptr)};
    if (lib) sources.push_back(cuda_kernel_source(k, p, &*lib));                // cuBLASLt's epilogue kernel
    if (conv) sources.push_back(cuda_kernel_source(k, p, nullptr, &*conv));     // cuDNN's epilogue kernel
    for (std::string& src : sources) {
      expect_waits_first(src, what + ": " + k.name);
      if (!src.empty()) jobs.emplace_back(kernel_identifier(k.name), std::move(src));  // "": the library's own epilogue
    }
  }
  std::vector<std::string> failures(jobs.size());
  for_each_job(jobs.size(), [&](size_t j) {
    try {
      nvrtc_compile_check(jobs[j].second, jobs[j].first);
    } catch (const Error& e) {
      failures[j] = e.what();
    }
  });
  for (size_t j = 0; j < jobs.size(); ++j)
    if (!failures[j].empty()) ADD_FAILURE() << what << ": " << failures[j] << "\n---- source ----\n" << jobs[j].second;
}

// ---- graphs shared by codegen and execution tests ------------------------------------------

struct Case {
  std::string name;
  Graph graph;
};

Graph g_loop() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {4, 5, 6});
  int y = b.input("y", DType::f32, {6});
  int z = b.input("z", DType::f32, {6, 5, 4});
  int t = b.op("Transpose", {z}, {{"perm", std::vector<int64_t>{2, 1, 0}}});
  int a = b.op("Tanh", {b.op("Add", {x, y})});
  int c = b.op("Relu", {b.op("Mul", {a, t})});
  int e = b.op("Erf", {c});
  int p = b.op("Pow", {e, b.op("Abs", {x})});
  int cond = b.op("Greater", {x, y});
  b.output(b.op("Where", {cond, p, b.op("Clip", {t})}));
  b.output(cond);
  return cg_static(b);
}

// Large enough (> 1M elements) for the unrolled loop kernel; 1023 rows leave a ragged tail.
Graph g_big_loop() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {1023, 2048});
  int y = b.input("y", DType::f32, {2048, 1023});
  int t = b.op("Transpose", {y}, {{"perm", std::vector<int64_t>{1, 0}}});
  b.output(b.op("Tanh", {b.op("Add", {x, t})}));
  return cg_static(b);
}

Graph g_softmax() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {8, 100});
  b.output(b.op("Softmax", {x}, {{"axis", int64_t{-1}}}));
  return cg_static(b);
}

Graph g_layernorm() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {4, 7, 64});
  int s = b.constant("scale", cg_random(DType::f32, {64}, 1));
  int bias = b.constant("bias", cg_random(DType::f32, {64}, 2));
  int y = b.op("LayerNormalization", {x, s, bias}, {{"axis", int64_t{-1}}, {"epsilon", 1e-5}});
  b.output(b.op("Add", {y, x}));
  return cg_static(b);
}

Graph g_reduce_mid() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {3, 50, 7});
  b.output(b.op("ReduceMean", {x}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{1}}}));
  b.output(b.op("ReduceMax", {b.op("Exp", {x})}, {{"axes", std::vector<int64_t>{0, 2}}, {"keepdims", int64_t{0}}}));
  b.graph().opset = 17;
  return cg_static(b);
}

Graph g_matmul() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {3, 70, 24});
  int w = b.constant("w", cg_random(DType::f32, {24, 90}, 3));
  int bias = b.constant("bias", cg_random(DType::f32, {90}, 4));
  int r = b.input("r", DType::f32, {3, 70, 90});
  int m = b.op("MatMul", {x, w});
  b.output(b.op("Add", {b.op("Relu", {b.op("Add", {m, bias})}), r}));
  int y = b.input("y", DType::f32, {5, 33});
  int wt = b.constant("wt", cg_random(DType::f32, {17, 33}, 5));
  b.output(b.op("Gemm", {y, wt}, {{"transB", int64_t{1}}, {"alpha", 0.5}}));  // M <= 8: skinny path
  // Few tiles and a long K: the split-K path; the weight is read through a transposed view.
  int u = b.input("u", DType::f32, {2, 96, 1030});
  int wk = b.constant("wk", cg_random(DType::f32, {80, 1030}, 10));
  int t = b.op("Transpose", {wk}, {{"perm", std::vector<int64_t>{1, 0}}});
  b.output(b.op("Sigmoid", {b.op("MatMul", {u, t})}));
  return cg_static(b);
}

Graph g_conv() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {2, 4, 11, 9});
  int w = b.constant("w", cg_random(DType::f32, {8, 4, 3, 3}, 6));
  int bias = b.constant("b", cg_random(DType::f32, {8}, 7));
  int c = b.op("Conv", {x, w, bias}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{2, 1}}});
  int wd = b.constant("wd", cg_random(DType::f32, {8, 1, 3, 3}, 8));
  int d = b.op("Conv", {b.op("Relu", {c}), wd}, {{"group", int64_t{8}}, {"dilations", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{2, 2, 2, 2}}});
  b.output(b.op("HardSwish", {d}));
  return cg_static(b);
}

// The convolutions ir/decompose_conv.cpp rewrites: ConvTranspose as a stacked Conv (k4 s2 p1,
// fp16) and as Convs per phase (k3 s2), a 1-D Conv lifted to 2-D, a 3-D one over stacked taps.
Graph g_conv_rewrites() {
  GraphBuilder b("conv_rewrites", 17);
  using I = std::vector<int64_t>;
  int x = b.input("x", DType::f32, {1, 4, 6, 5});
  int t1 = b.op("ConvTranspose", {x, b.constant("w1", cg_random(DType::f32, {4, 3, 4, 4}, 11)), b.constant("b1", cg_random(DType::f32, {3}, 12))},
                {{"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}});
  int t2 = b.op("ConvTranspose", {b.op("Relu", {t1}), b.constant("w2", cg_random(DType::f32, {3, 2, 3, 3}, 13))},
                {{"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}, {"output_padding", I{1, 1}}});
  b.output(b.op("Tanh", {t2}));
  int xh = b.input("xh", DType::f16, {1, 8, 5, 5});
  b.output(b.op("ConvTranspose", {xh, b.constant("wh", cg_random(DType::f16, {8, 4, 4, 4}, 14)), b.constant("bh", cg_random(DType::f16, {4}, 15))},
                {{"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}}));
  int a = b.input("a", DType::f32, {1, 6, 40});
  b.output(b.op("Relu", {b.op("Conv", {a, b.constant("wa", cg_random(DType::f32, {8, 6, 3}, 16)), b.constant("ba", cg_random(DType::f32, {8}, 17))},
                                {{"strides", I{2}}, {"pads", I{1, 1}}})}));
  int v = b.input("v", DType::f32, {1, 3, 4, 9, 9});
  b.output(b.op("Conv", {v, b.constant("wv", cg_random(DType::f32, {5, 3, 3, 3, 3}, 18))}, {{"pads", I{1, 1, 1, 1, 1, 1}}}));
  return cg_static(b);
}

Graph g_gather() {
  GraphBuilder b;
  int data = b.constant("emb", cg_random(DType::f32, {50, 16}, 9));
  int idx = b.input("idx", DType::i64, {2, 3});
  int pos = b.input("p", DType::f32, {2, 3, 16});
  b.output(b.op("Add", {b.op("Gather", {data, idx}, {{"axis", int64_t{0}}}), pos}));
  return cg_static(b);
}

Graph g_pools() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {2, 3, 13, 11});
  int mp = b.op("MaxPool", {x}, {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"strides", std::vector<int64_t>{2, 2}}, {"ceil_mode", int64_t{1}}});
  int ap = b.op("AveragePool", {x}, {{"kernel_shape", std::vector<int64_t>{3, 2}}, {"pads", std::vector<int64_t>{1, 0, 1, 1}}, {"count_include_pad", int64_t{1}}});
  int ap2 = b.op("AveragePool", {x}, {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  b.output(b.op("Relu", {mp}));
  b.output(ap);
  b.output(ap2);
  b.output(b.op("GlobalAveragePool", {x}));
  b.output(b.op("Concat", {x, b.op("Neg", {x})}, {{"axis", int64_t{1}}}));
  return cg_static(b);
}

std::vector<Case> cases() {
  return {{"loop", g_loop()},     {"softmax", g_softmax()}, {"layernorm", g_layernorm()}, {"reduce_mid", g_reduce_mid()},
          {"matmul", g_matmul()}, {"conv", g_conv()},       {"gather", g_gather()},       {"pools", g_pools()},
          {"big_loop", g_big_loop()}, {"conv_rewrites", g_conv_rewrites()}};
}

// Every driver entry point fusor resolves (dlsym of its versioned name) exists in the CUDA
// toolkit's stub libcuda, so a misspelt or missing symbol fails here, without a GPU, instead
// of turning the CUDA backend off on every machine ("libcuda.so.1 lacks ...").
TEST(CudaDriver, EveryEntryPointResolvesFromTheToolkitStub) {
  const std::string stub = std::string(FUSOR_CUDA_INCLUDE) + "/../lib64/stubs/libcuda.so";
  if (!std::filesystem::exists(stub)) GTEST_SKIP() << "no stub driver at " << stub;
  const CudaDriver d = CudaDriver::symbols_of(stub.c_str());
  EXPECT_TRUE(d.loaded) << d.why;
  EXPECT_TRUE(d.why.empty()) << d.why;
  EXPECT_NE(d.cuMemsetD8Async, nullptr);
  EXPECT_NE(d.cuGraphAddDependencies, nullptr);  // optional at run time; CUDA 12.3+ has it
  EXPECT_FALSE(d.initialized);                   // symbols_of never calls cuInit
  const CudaDriver none = CudaDriver::symbols_of("libfusor_no_such_driver.so");
  EXPECT_FALSE(none.loaded);
  EXPECT_NE(none.why.find("not found"), std::string::npos) << none.why;
}

TEST(CudaCodegen, CompilesHandMadeGraphs) {
  for (auto& c : cases()) {
    SCOPED_TRACE(c.name);
    for (bool fuse : {true, false}) {
      FusionOptions fo;
      fo.fuse = fuse;
      Plan p = build_plan(c.graph, fo);
      compile_all(p, c.name + (fuse ? " fused" : " unfused"));
    }
  }
}

// A hand-made row kernel with two dependent reductions, a per_row output and a 64-bit index
// space, so the emitter paths build_plan may not produce are still compiled.
TEST(CudaCodegen, CompilesHandMadeSpecs) {
  Plan p;
  auto add_buffer = [&](const std::string& n, Shape s, Buffer::Role role, int64_t off) {
    Buffer b;
    b.name = n;
    b.shape = std::move(s);
    b.role = role;
    b.offset = off;
    p.buffers.push_back(b);
    return static_cast<int>(p.buffers.size()) - 1;
  };
  const OpDef* sub = lookup_op("Sub");
  const OpDef* exp = lookup_op("Exp");
  const OpDef* div = lookup_op("Div");
  ASSERT_TRUE(sub && exp && div);
  Node dummy;
  auto op_node = [&](const OpDef* d, std::vector<int> args) {
    ExprNode e;
    e.kind = ExprKind::op;
    e.op = d;
    dummy.inputs.assign(args.size(), 0);
    e.bound = bind_scalar(*d->scalar, dummy, false);
    e.args = std::move(args);
    return e;
  };
  for (int64_t big : {int64_t{64}, int64_t{1} << 30}) {
    p.buffers.clear();
    p.kernels.clear();
    const Shape s{3, 5, big};
    int x = add_buffer("x", s, Buffer::Role::input, 0);
    int y = add_buffer("y", s, Buffer::Role::output, shape_numel(s) * 4);
    int m = add_buffer("m", {3, 5, 1}, Buffer::Role::output, shape_numel(s) * 8);
    KernelSpec k;
    k.name = "softmax_like/" + std::to_string(big);
    k.kind = FusionKind::input;
    k.space = s;
    k.reduce_axes = {2};
    k.loads = {{x, StridedView::contiguous(s)}};
    ExprNode load;
    load.kind = ExprKind::load;
    load.load = 0;
    ExprNode r0;
    r0.kind = ExprKind::red_ref;
    r0.red = 0;
    ExprNode r1 = r0;
    r1.red = 1;
    k.expr = {load, r0, op_node(sub, {0, 1}), op_node(exp, {2}), r1, op_node(div, {3, 4})};
    k.reductions = {{Combiner::max, 0, false}, {Combiner::sum, 3, false}};
    k.outputs = {{y, StridedView::contiguous(s), 5, false}, {m, {s, {5, 1, 0}, 0}, 1, true}};
    p.kernels.push_back(k);
    const std::string src = emit_kernel(k, p, cuda_dialect());
    EXPECT_EQ(src.find("fz_i64") != std::string::npos && src.find("#define fz_idx fz_i64") != std::string::npos, big > 64) << src;
    compile_all(p, k.name);
  }
}

std::filesystem::path shared_dir() {
  if (const char* s = std::getenv("FUSOR_SHARED"); s && *s) return s;
  return std::filesystem::path(FUSOR_SOURCE_DIR) / ".." / "shared";
}

TEST(CudaCodegen, CompilesEveryModelKernel) {
  const auto models = shared_dir() / "models";
  if (!std::filesystem::exists(models)) GTEST_SKIP() << "no shared models at " << models;
  int compiled = 0;
  for (const char* m : {"mlp_block", "gpt2_tiny", "squeezenet1_1", "mobilenet_v3_small"}) {
    SCOPED_TRACE(m);
    const auto path = models / m / "model.onnx";
    if (!std::filesystem::exists(path)) continue;
    Graph g = load_model(path.string());
    Graph s = specialize(g, random_inputs(g, 1));
    Plan p = build_plan(s);
    compile_all(p, m);
    compiled += static_cast<int>(p.kernels.size());
  }
  EXPECT_GT(compiled, 0);
}

// Every opaque kernel kind the ONNX node suite reaches (one case per op and dtype signature),
// and every kernel of the cases whose op decomposes (losses, Einsum).
TEST(CudaCodegen, CompilesNodeSuiteOpaqueKernels) {
  const auto node = shared_dir() / "onnx-tests" / "node";
  if (!std::filesystem::exists(node)) GTEST_SKIP() << "no node suite at " << node;
  std::vector<std::filesystem::path> dirs;
  for (auto& e : std::filesystem::directory_iterator(node)) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  std::set<std::string> seen;
  int compiled = 0;
  for (auto& d : dirs) {
    if (!std::filesystem::exists(d / "model.onnx")) continue;
    Plan p;
    try {
      Graph g = load_model((d / "model.onnx").string());
      p = build_plan(specialize(g, random_inputs(g, 1)));
    } catch (const Error&) {
      continue;  // ops or inputs the importer/ref reject are not codegen's business
    }
    // Ops that decompose into fused kernels (the losses, Einsum): every kernel of their cases.
    const std::string name = d.filename().string();
    if (name.find("nllloss") != std::string::npos || name.find("_sce_") != std::string::npos ||
        name.find("einsum") != std::string::npos) {
      for (const KernelSpec& k : p.kernels) {
        if (k.kind == FusionKind::opaque) continue;
        std::string text;
        try {
          text = cuda_kernel_source(k, p, nullptr);
        } catch (const Unsupported&) {
          continue;
        }
        if (!seen.insert(text).second) continue;  // many cases generate the same kernel
        try {
          nvrtc_compile_check(text, kernel_identifier(k.name));
          ++compiled;
        } catch (const Error& e) {
          ADD_FAILURE() << name << ": " << e.what() << "\n---- source ----\n" << text;
        }
      }
    }
    for (const KernelSpec& k : p.kernels) {
      if (k.kind != FusionKind::opaque) continue;
      std::string sig = p.graph.nodes[k.node].op_type;
      for (int b : k.opaque_inputs) sig += std::string(",") + (b >= 0 ? dtype_name(p.buffers[b].dtype) : "-");
      if (!seen.insert(sig).second) continue;
      Plan one = p;
      one.kernels = {k};
      std::vector<std::pair<std::string, std::string>> src;
      try {
        src = cuda_generate_sources(one);
      } catch (const Unsupported&) {
        continue;
      }
      for (auto& [name, text] : src) {
        try {
          nvrtc_compile_check(text, name);
          ++compiled;
          if (std::getenv("FUSOR_TEST_VERBOSE")) std::fprintf(stderr, "compiled %s\n", sig.c_str());
        } catch (const Error& e) {
          ADD_FAILURE() << d.filename() << " (" << sig << "): " << e.what() << "\n---- source ----\n" << text;
        }
      }
    }
  }
  EXPECT_GT(compiled, 0);
}

// ---- execution ---------------------------------------------------------------------------------

// Skips the calling test when no CUDA device is usable, with the backend's reason.
#define CG_REQUIRE_DEVICE()                                                                    \
  do {                                                                                         \
    auto b_ = make_backend("cuda");                                                            \
    if (b_->devices().empty()) {                                                               \
      GraphBuilder gb_;                                                                        \
      gb_.output(gb_.op("Relu", {gb_.input("x", DType::f32, {1})}));                           \
      try {                                                                                    \
        b_->compile(cg_static(gb_), {});                                                       \
      } catch (const Unsupported& e) {                                                         \
        GTEST_SKIP() << e.what();                                                              \
      }                                                                                        \
      GTEST_SKIP() << "no CUDA device";                                                        \
    }                                                                                          \
  } while (0)

std::vector<Tensor> inputs_for(const Graph& g, uint64_t seed) {
  std::vector<Tensor> in;
  for (int v : g.inputs) {
    const Value& val = g.values[v];
    if (val.dtype == DType::i64) {
      Tensor t(DType::i64, val.shape);
      std::mt19937_64 rng(seed + 17);
      for (int64_t i = 0; i < t.numel(); ++i) t.set_int(i, static_cast<int64_t>(rng() % 50) - 10);  // negatives index from the end
      in.push_back(std::move(t));
    } else {
      in.push_back(cg_random(val.dtype, val.shape, seed++));
    }
  }
  return in;
}

void expect_close(const std::vector<Tensor>& got, const std::vector<Tensor>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    CompareResult r = compare_tensors(got[i], want[i], 1e-4, 1e-5);
    EXPECT_TRUE(r.ok) << what << " output " << i << ": " << r.message;
    if (dtype_is_float(want[i].dtype())) EXPECT_LT(relative_l2(got[i], want[i]), 1e-5) << what << " output " << i;
  }
}

TEST(CudaBackend, MatchesReference) {
  CG_REQUIRE_DEVICE();
  for (auto& c : cases()) {
    SCOPED_TRACE(c.name);
    auto in = inputs_for(c.graph, 42);
    auto want = run_on_backend("ref", c.graph, in);
    for (bool replay : {true, false})
      for (bool fuse : {true, false}) {
        CompileOptions o;
        o.replay = replay;
        o.fusion = fuse;
        RunStats st;
        auto got = run_on_backend("cuda", c.graph, in, o, &st);
        expect_close(got, want, c.name + (replay ? " replay" : " eager") + (fuse ? " fused" : " unfused"));
        EXPECT_GE(st.device_us, 0.0);
      }
  }
}

// Replaying the recorded graph with new inputs must not return the previous run's results.
TEST(CudaBackend, ReplayUsesNewInputs) {
  CG_REQUIRE_DEVICE();
  for (auto& c : cases()) {
    SCOPED_TRACE(c.name);
    auto exe = make_backend("cuda")->compile(c.graph, {});
    for (uint64_t seed : {1u, 2u, 1u}) {
      auto in = inputs_for(c.graph, seed * 1000);
      expect_close(exe->run(in), run_on_backend("ref", c.graph, in), c.name + " seed " + std::to_string(seed));
    }
  }
}

TEST(CudaBackend, ModelsMatchReference) {
  CG_REQUIRE_DEVICE();
  const auto models = shared_dir() / "models";
  if (!std::filesystem::exists(models)) GTEST_SKIP() << "no shared models at " << models;
  for (const char* m : {"mlp_block", "gpt2_tiny", "squeezenet1_1", "mobilenet_v3_small"}) {
    SCOPED_TRACE(m);
    const auto path = models / m / "model.onnx";
    if (!std::filesystem::exists(path)) continue;
    Graph g = load_model(path.string());
    auto in = random_inputs(g, 7);
    Graph s = specialize(g, in);
    auto want = run_on_backend("ref", s, in);
    auto got = run_on_backend("cuda", s, in);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      CompareResult r = compare_tensors(got[i], want[i], 1e-3, 1e-4);
      EXPECT_TRUE(r.ok) << m << " output " << i << ": " << r.message;
    }
  }
}

}  // namespace
}  // namespace fusor
#endif  // FUSOR_HAVE_CUDA
