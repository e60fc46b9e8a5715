// Host fallback (graph breaks): where ir/partition.h cuts a graph, and runtime/segments.h
// running the pieces, checked with a backend that refuses chosen ops (the fused `cpu` backend
// underneath) against `ref` on seeded random inputs. GPU backends: test_vulkan_fallback.cpp,
// test_cuda_fallback.cpp.
#include <gtest/gtest.h>

#include <set>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "ir/kernel_spec.h"
#include "ir/partition.h"
#include "ir/passes.h"
#include "runtime/segments.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

using testing::random_tensor;

// `cpu` that refuses every node whose op is in `refused`, as a GPU backend refuses an op its
// emitter lacks; counts compiles so tests can see the pieces.
class RefusingBackend : public Backend {
 public:
  explicit RefusingBackend(std::set<std::string> refused) : refused_(std::move(refused)), cpu_(make_backend("cpu")) {}
  std::string name() const override { return "refusing"; }
  std::vector<DeviceInfo> devices() const override { return {{"test", ""}}; }
  std::unique_ptr<Executable> compile(const Graph& g, const CompileOptions& opts) override {
    std::string why = unsupported(g, opts);
    if (!why.empty()) throw Unsupported("refusing", why);
    ++compiles;
    return cpu_->compile(g, opts);
  }
  std::string unsupported(const Graph& g, const CompileOptions&) override {
    for (auto& n : g.nodes)
      if (refused_.count(n.op_type)) return n.label() + ": op " + n.op_type + " is refused by this test backend";
    return "";
  }
  int compiles = 0;

 private:
  std::set<std::string> refused_;
  std::unique_ptr<Backend> cpu_;
};

// x -> Relu -> Tanh(host) -> Mul(y) -> Exp -> out0;  y -> Sigmoid -> out1;  x -> Neg(host) -> out2
Graph sandwich() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {3, 5});
  int y = b.input("y", DType::f32, {3, 5});
  int r = b.op("Relu", {x});
  int t = b.op("Tanh", {r});
  int m = b.op("Mul", {t, y});
  b.output(b.op("Exp", {m}));
  b.output(b.op("Sigmoid", {y}));
  b.output(b.op("Neg", {x}));
  Graph g = b.build();
  make_static(g, {});
  return g;
}

std::vector<bool> host_ops(const Graph& g, const std::set<std::string>& ops) {
  std::vector<bool> h;
  for (auto& n : g.nodes) h.push_back(ops.count(n.op_type) != 0);
  return h;
}

TEST(Partition, CutsAtHostNodesAndGroupsIndependentOnes) {
  Graph g = sandwich();
  auto segs = partition_graph(g, host_ops(g, {"Tanh", "Neg"}));
  // Relu and Sigmoid (device), Tanh and Neg (host), Mul and Exp (device): three pieces, not five.
  ASSERT_EQ(segs.size(), 3u);
  std::vector<std::set<std::string>> ops;
  for (auto& s : segs) {
    ops.emplace_back();
    for (int i : s.nodes) ops.back().insert(g.nodes[i].op_type);
  }
  EXPECT_FALSE(segs[0].host);
  EXPECT_TRUE(segs[1].host);
  EXPECT_FALSE(segs[2].host);
  EXPECT_EQ(ops[0], (std::set<std::string>{"Relu", "Sigmoid"}));
  EXPECT_EQ(ops[1], (std::set<std::string>{"Tanh", "Neg"}));
  EXPECT_EQ(ops[2], (std::set<std::string>{"Mul", "Exp"}));
  // The host piece reads x and Relu's output and hands Tanh's output on; Neg's is a graph output.
  auto name = [&](int v) { return g.values[v].name; };
  std::set<std::string> in1, out1;
  for (int v : segs[1].inputs) in1.insert(name(v));
  for (int v : segs[1].outputs) out1.insert(name(v));
  EXPECT_EQ(in1, (std::set<std::string>{"x", "Relu_0_out0"}));
  EXPECT_EQ(out1, (std::set<std::string>{"Tanh_1_out0", "Neg_5_out0"}));
  // The last piece reads y from the graph inputs directly.
  std::set<std::string> in2;
  for (int v : segs[2].inputs) in2.insert(name(v));
  EXPECT_EQ(in2, (std::set<std::string>{"Tanh_1_out0", "y"}));
  // A segment's graph is static and runs by itself.
  Graph sg = segment_graph(g, segs[2]);
  EXPECT_EQ(sg.inputs.size(), 2u);
  EXPECT_EQ(sg.outputs.size(), 1u);
  EXPECT_EQ(sg.nodes.size(), 2u);
}

TEST(Partition, AllOnOnePlacementIsOneSegment) {
  Graph g = sandwich();
  auto segs = partition_graph(g, std::vector<bool>(g.nodes.size(), false));
  ASSERT_EQ(segs.size(), 1u);
  EXPECT_EQ(segs[0].nodes.size(), g.nodes.size());
  EXPECT_EQ(segs[0].outputs.size(), 3u);
  EXPECT_THROW(partition_graph(g, {true}), Error);
}

TEST(HostFallback, RunsRefusedOpsOnTheHostAndMatchesRef) {
  Graph g = sandwich();
  std::vector<Tensor> in{random_tensor(DType::f32, {3, 5}, 1), random_tensor(DType::f32, {3, 5}, 2)};
  auto want = run_on_backend("ref", g, in);
  RefusingBackend b({"Tanh", "Neg"});
  auto exe = compile_with_fallback(b, g, {});
  EXPECT_EQ(b.compiles, 2);  // two device pieces; the host piece runs on ref
  auto breaks = graph_breaks(*exe);
  ASSERT_EQ(breaks.size(), 2u);
  EXPECT_EQ(breaks[0].op, "Tanh");
  EXPECT_EQ(breaks[1].op, "Neg");
  EXPECT_NE(breaks[0].reason.find("refused by this test backend"), std::string::npos);
  EXPECT_NE(exe->notes().find("2 node(s) on the host"), std::string::npos) << exe->notes();
  RunStats st;
  auto got = exe->run(in, &st);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k].shape(), want[k].shape());
    for (int64_t i = 0; i < got[k].numel(); ++i) EXPECT_NEAR(got[k].get(i), want[k].get(i), 1e-6) << k << " " << i;
  }
  EXPECT_GT(st.host_us, 0);
  // Runs again with other inputs (the pieces are replayed, not rebuilt).
  in[0] = random_tensor(DType::f32, {3, 5}, 3);
  want = run_on_backend("ref", g, in);
  got = exe->run(in);
  for (int64_t i = 0; i < got[0].numel(); ++i) EXPECT_NEAR(got[0].get(i), want[0].get(i), 1e-6);
}

TEST(HostFallback, NoFallbackRefusesAndNothingToBlameRethrows) {
  Graph g = sandwich();
  RefusingBackend b({"Tanh"});
  CompileOptions off;
  off.fallback = false;
  EXPECT_THROW(compile_with_fallback(b, g, off), Unsupported);
  // A graph the backend runs whole is compiled as is: no breaks, one compile.
  RefusingBackend all({});
  auto exe = compile_with_fallback(all, g, {});
  EXPECT_TRUE(graph_breaks(*exe).empty());
  EXPECT_EQ(all.compiles, 1);
  // find_graph_breaks lists the refused node without compiling anything.
  auto breaks = find_graph_breaks(b, g, {});
  ASSERT_EQ(breaks.size(), 1u);
  EXPECT_EQ(breaks[0].node, "Tanh_1");
  EXPECT_EQ(b.compiles, 0);
}

TEST(HostFallback, GraphOutputThatIsAnInputOrConstant) {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {4});
  int c = b.constant("c", testing::tensor_of({4}, {1, 2, 3, 4}));
  b.output(b.op("Tanh", {b.op("Add", {x, c})}));
  b.output(x);
  Graph g = b.build();
  make_static(g, {});
  RefusingBackend rb({"Tanh"});
  auto exe = compile_with_fallback(rb, g, {});
  Tensor in = random_tensor(DType::f32, {4}, 7);
  auto got = exe->run({in});
  ASSERT_EQ(got.size(), 2u);
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(got[0].get(i), std::tanh(static_cast<float>(in.get(i) + (i + 1))), 1e-6);
    EXPECT_EQ(got[1].get(i), in.get(i));
  }
}

// ConstantOfShape beyond the folding limit (2^26 elements) is decomposed into an Expand of its
// one-element value, which the GPU code generators broadcast: no graph break, nothing allocated.
TEST(HostFallback, ConstantOfShapeTooLargeToFoldIsABroadcastOnTheGpus) {
  GraphBuilder b;
  int x = b.input("x", DType::i32, {1, 1});
  Tensor value(DType::i32, {1});
  value.set(0, 7);
  int fill = b.op("ConstantOfShape", {b.constant("shape", testing::ints_of({2}, {8193, 8193}))}, {{"value", value}});
  b.output(b.op("Add", {fill, x}));
  Graph g = b.build();
  make_static(g, {});
  ASSERT_EQ(g.nodes.size(), 2u);  // too large to fold
  Graph d = g;
  decompose(d);
  for (auto& n : d.nodes) EXPECT_NE(n.op_type, "ConstantOfShape");
  for (const std::string& be : backend_names()) {
    if (be == "ref" || be == "cpu") continue;
    EXPECT_TRUE(find_graph_breaks(*make_backend(be), g, {}).empty()) << be;
  }
}

}  // namespace
}  // namespace fusor
