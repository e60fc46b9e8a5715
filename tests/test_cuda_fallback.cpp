// Host fallback on the CUDA backend: the placement needs no GPU (Backend::unsupported runs the
// code generators only), so the breaks are found here and every device segment's kernels are
// NVRTC-compiled; with a CUDA device the partitioned run is compared with ref.
#ifdef FUSOR_HAVE_CUDA
#include <gtest/gtest.h>

#include "backends/cuda/cuda_backend.h"
#include "frontend/builder.h"
#include "ir/kernel_spec.h"
#include "ir/partition.h"
#include "ir/passes.h"
#include "runtime/segments.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

TEST(CudaFallback, BreaksFoundWithoutADeviceAndSegmentsCompile) {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {6, 6});
  int y = b.input("y", DType::f32, {6});
  int d = b.op("Einsum", {b.op("Sigmoid", {x})}, {{"equation", std::string("ii->i")}});
  b.output(b.op("Tanh", {b.op("Add", {d, y})}));
  Graph g = b.build();
  make_static(g, {});
  auto cuda = make_backend("cuda");
  auto breaks = find_graph_breaks(*cuda, g, {});
  ASSERT_EQ(breaks.size(), 1u);
  EXPECT_EQ(breaks[0].op, "Einsum");
  std::vector<bool> host;
  for (auto& n : g.nodes) host.push_back(n.op_type == "Einsum");
  auto segs = partition_graph(g, host);
  ASSERT_EQ(segs.size(), 3u);
  for (auto& s : segs) {
    if (s.host) continue;
    Plan p = build_plan(segment_graph(g, s));
    for (auto& [name, src] : cuda_generate_sources(p))
      if (!src.empty()) EXPECT_NO_THROW(nvrtc_compile_check(src, name)) << src;
  }
  if (cuda->devices().empty()) GTEST_SKIP() << "no CUDA device: placement and NVRTC checked, run skipped";
  std::vector<Tensor> in{testing::random_tensor(DType::f32, {6, 6}, 31), testing::random_tensor(DType::f32, {6}, 32)};
  auto want = run_on_backend("ref", g, in);
  auto got = run_on_backend("cuda", g, in);
  for (int64_t i = 0; i < got[0].numel(); ++i) EXPECT_NEAR(got[0].get(i), want[0].get(i), 1e-6);
}

// A zero-size MatMul (N = 0) beside a non-empty op: its kernel would write nothing, so the plan
// has none for it (ir/fusion.cpp build_plan), and every source given compiles.
TEST(CudaFallback, EmptyKernelsHaveNoSource) {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {4, 3});
  int w = b.input("w", DType::f32, {3, 0});
  b.output(b.op("Relu", {b.op("MatMul", {x, w})}));
  b.output(b.op("Tanh", {x}));
  Graph g = b.build();
  make_static(g, {});
  Plan p = build_plan(g);
  int empty = 0, compiled = 0;
  for (auto& [name, src] : cuda_generate_sources(p)) {
    if (src.empty()) {
      ++empty;
      continue;
    }
    EXPECT_NO_THROW(nvrtc_compile_check(src, name)) << src;
    ++compiled;
  }
  // The empty MatMul/Relu kernel is not in the plan at all (build_plan drops kernels whose every
  // output is empty); the Tanh kernel compiles.
  EXPECT_EQ(empty, 0);
  EXPECT_EQ(compiled, 1);
  EXPECT_EQ(p.kernels.size(), 1u);
}

}  // namespace
}  // namespace fusor
#endif
