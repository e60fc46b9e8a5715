// CudaExecutable::run_device: a program runs on caller-owned device buffers, and between
// replays the instantiated CUDA graph is re-pointed, never replayed with stale pointers. The
// execution test swaps input and output buffer sets between runs (replay and eager) and checks
// every result against ref, that the output set not named in a run stays untouched and that
// inputs are never written; it skips without a CUDA device. The codegen test (no GPU needed)
// NVRTC-compiles every kernel of the test graph.
#ifdef FUSOR_HAVE_CUDA
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "backends/cuda/cuda_backend.h"
#include "frontend/builder.h"
#include "ir/kernel_spec.h"
#include "ir/passes.h"
#include "runtime/session.h"

namespace fusor {
namespace {

Tensor db_random(DType t, const Shape& s, uint64_t seed) {
  Tensor x(t, s);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, u(rng));
  return x;
}

// Add+Tanh (loop kernel, its result also a graph output that the matmul reads back), MatMul
// with a Relu(+bias)+residual epilogue, a graph input passed through as an output and a
// constant output (both written by no kernel: the DtoD path).
Graph db_graph() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {70, 48});
  int y = b.input("y", DType::f32, {48});
  int r = b.input("r", DType::f32, {70, 40});
  int w = b.constant("w", db_random(DType::f32, {48, 40}, 11));
  int bias = b.constant("bias", db_random(DType::f32, {40}, 12));
  int a = b.op("Tanh", {b.op("Add", {x, y})});
  b.output(a);
  b.output(b.op("Add", {b.op("Relu", {b.op("Add", {b.op("MatMul", {a, w}), bias})}), r}));
  b.output(x);
  b.output(b.constant("c", db_random(DType::f32, {5}, 13)));
  Graph g = b.build();
  make_static(g, {});
  return g;
}

std::vector<Tensor> db_inputs(const Graph& g, uint64_t seed) {
  std::vector<Tensor> in;
  for (int v : g.inputs) in.push_back(db_random(g.values[v].dtype, g.values[v].shape, seed++));
  return in;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

TEST(CudaDeviceBuffers, NvrtcCompilesTestGraphKernels) {
  Graph g = db_graph();
  for (bool fuse : {true, false}) {
    FusionOptions fo;
    fo.fuse = fuse;
    Plan p = build_plan(g, fo);
    auto sources = cuda_generate_sources(p);
    ASSERT_EQ(sources.size(), p.kernels.size());
    EXPECT_FALSE(sources.empty());
    for (auto& [name, src] : sources) {
      if (src.empty()) continue;  // a matmul whose output cuBLASLt writes: no kernel
      try {
        nvrtc_compile_check(src, name);
      } catch (const Error& e) {
        ADD_FAILURE() << (fuse ? "fused " : "unfused ") << e.what() << "\n---- source ----\n" << src;
      }
    }
  }
}

// Frees every allocation on scope exit (declared after the executable, so it runs first).
struct DeviceAllocs {
  CudaExecutable* cu = nullptr;
  std::vector<uint64_t> ptrs;
  uint64_t alloc(size_t n) {
    ptrs.push_back(cu->device_alloc(n));
    return ptrs.back();
  }
  ~DeviceAllocs() {
    for (auto p : ptrs) {
      try {
        cu->device_free(p);
      } catch (const Error&) {
      }
    }
  }
};

TEST(CudaDeviceBuffers, SwappedBuffersBetweenReplays) {
  Graph g = db_graph();
  std::unique_ptr<Executable> probe;
  try {
    probe = make_backend("cuda")->compile(g, {});
  } catch (const Unsupported& e) {
    GTEST_SKIP() << e.what();  // "[cuda] no CUDA device: <why>"
  }
  probe.reset();

  const auto in_a = db_inputs(g, 100), in_b = db_inputs(g, 200);
  const auto want_a = run_on_backend("ref", g, in_a), want_b = run_on_backend("ref", g, in_b);

  for (bool replay : {true, false})
    for (bool fuse : {true, false}) {
      const std::string mode = std::string(replay ? "replay" : "eager") + (fuse ? " fused" : " unfused");
      SCOPED_TRACE(mode);
      CompileOptions o;
      o.replay = replay;
      o.fusion = fuse;
      std::unique_ptr<Executable> exe = make_backend("cuda")->compile(g, o);
      auto* cu = dynamic_cast<CudaExecutable*>(exe.get());
      ASSERT_NE(cu, nullptr) << "the cuda backend must return a CudaExecutable";
      const auto& ind = cu->input_descs();
      const auto& outd = cu->output_descs();
      ASSERT_EQ(ind.size(), 3u);
      ASSERT_EQ(outd.size(), 4u);
      for (size_t i = 0; i < ind.size(); ++i) {
        EXPECT_EQ(ind[i].shape, in_a[i].shape());
        EXPECT_EQ(ind[i].nbytes, static_cast<int64_t>(in_a[i].nbytes()));
      }

      DeviceAllocs mem{cu, {}};
      // Two input sets (A, B) and two output sets (X, Y).
      std::vector<uint64_t> dev_a, dev_b, out_x, out_y;
      for (size_t i = 0; i < ind.size(); ++i) {
        dev_a.push_back(mem.alloc(ind[i].nbytes));
        dev_b.push_back(mem.alloc(ind[i].nbytes));
        cu->copy_to_device(dev_a[i], in_a[i]);
        cu->copy_to_device(dev_b[i], in_b[i]);
      }
      std::vector<Tensor> poison;
      for (auto& d : outd) {
        out_x.push_back(mem.alloc(d.nbytes));
        out_y.push_back(mem.alloc(d.nbytes));
        poison.emplace_back(d.dtype, d.shape);
        poison.back().poison();
      }

      // Poisons both output sets, runs, then checks: the named outputs match ref on the named
      // inputs; every output buffer not named still holds the poison (nothing was written
      // through a stale pointer); the inputs are unchanged. Returns the node updates it cost.
      auto step = [&](const std::vector<uint64_t>& in, const std::vector<Tensor>& host_in, const std::vector<uint64_t>& out,
                      const std::string& what) -> int64_t {
        SCOPED_TRACE(what);
        for (size_t i = 0; i < outd.size(); ++i) {
          cu->copy_to_device(out_x[i], poison[i]);
          cu->copy_to_device(out_y[i], poison[i]);
        }
        const int64_t before = cu->node_updates();
        cu->run_device(in, out);
        const int64_t updates = cu->node_updates() - before;
        const auto want = run_on_backend("ref", g, host_in);
        for (size_t i = 0; i < outd.size(); ++i) {
          Tensor got = cu->copy_from_device(out[i], outd[i].dtype, outd[i].shape);
          CompareResult r = compare_tensors(got, want[i], 1e-4, 1e-5);
          EXPECT_TRUE(r.ok) << what << " output " << i << " (" << outd[i].name << "): " << r.message;
          EXPECT_LT(relative_l2(got, want[i]), 1e-5) << what << " output " << i;
          const uint64_t other = out[i] == out_x[i] ? out_y[i] : out_x[i];
          EXPECT_TRUE(same_bytes(cu->copy_from_device(other, outd[i].dtype, outd[i].shape), poison[i]))
              << what << ": output " << i << " buffer not named in this run was written";
        }
        for (size_t i = 0; i < ind.size(); ++i)
          EXPECT_TRUE(same_bytes(cu->copy_from_device(in[i], ind[i].dtype, ind[i].shape), host_in[i]))
              << what << ": input " << i << " was modified";
        if (!replay) EXPECT_EQ(updates, 0);
        EXPECT_LE(updates, exe->kernel_count());
        return updates;
      };

      for (int round = 0; round < 3; ++round) {
        const std::string rd = " (round " + std::to_string(round) + ")";
        const int64_t u0 = step(dev_a, in_a, out_x, "A->X" + rd);
        if (replay && round == 0) EXPECT_GT(u0, 0) << "the first run_device must re-point the graph from the arena";
        step(dev_b, in_b, out_y, "B->Y" + rd);
        step(dev_a, in_a, out_y, "A->Y" + rd);
        const int64_t u1 = step(dev_b, in_b, out_x, "B->X" + rd);
        if (replay) EXPECT_GT(u1, 0);
        // Same pointers again: nothing to update, and the result is still right.
        EXPECT_EQ(step(dev_b, in_b, out_x, "B->X again" + rd), 0);
        // Per-slot mix of both sets, so only some nodes move.
        step({dev_a[0], dev_b[1], dev_a[2]}, {in_a[0], in_b[1], in_a[2]}, {out_x[0], out_y[1], out_x[2], out_y[3]}, "mixed" + rd);
        // Host-tensor run() in between re-binds the arena and still returns B's results.
        auto got = exe->run(in_b);
        ASSERT_EQ(got.size(), want_b.size());
        for (size_t i = 0; i < got.size(); ++i) {
          CompareResult r = compare_tensors(got[i], want_b[i], 1e-4, 1e-5);
          EXPECT_TRUE(r.ok) << "run() after run_device" << rd << " output " << i << ": " << r.message;
        }
      }
      // Host results of A once more, after all the re-pointing.
      auto got = exe->run(in_a);
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_TRUE(compare_tensors(got[i], want_a[i], 1e-4, 1e-5).ok) << "final run() output " << i;

      // Misuse is reported, not run: wrong counts, a null pointer, an output over an input.
      EXPECT_THROW(cu->run_device({dev_a[0]}, out_x), Error);
      EXPECT_THROW(cu->run_device({dev_a[0], 0, dev_a[2]}, out_x), Error);
      EXPECT_THROW(cu->run_device(dev_a, {out_x[0], out_x[1], dev_a[0], out_x[3]}), Error);
    }
}

}  // namespace
}  // namespace fusor
#endif  // FUSOR_HAVE_CUDA
