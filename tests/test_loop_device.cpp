// Host-driven loops (runtime/host_loop.h): a Loop or Scan that is not unrolled runs on the GPU
// backends as a host loop over a body compiled once for the backend and replayed per
// iteration. Checked here on cpu and vulkan (lavapipe) against ref and values computed here,
// that the vulkan body really ran as a compiled plan (counters and notes), and for CUDA that
// every body kernel compiles with NVRTC (the run itself needs a GPU).
#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <optional>

#include "frontend/builder.h"
#include "ir/kernel_spec.h"
#include "ir/op_table.h"
#include "ir/passes.h"
#include "runtime/host_loop.h"
#include "runtime/segments.h"
#include "runtime/session.h"
#include "backend_agreement.h"
#include "test_util.h"
#ifdef FUSOR_HAVE_CUDA
#include "backends/cuda/cuda_backend.h"
#endif

namespace fusor {
namespace {

Tensor scalar_i64(int64_t v) {
  Tensor t(DType::i64, {});
  t.set_int(0, v);
  return t;
}

// Counted loop, trip count M a run-time input: body (i, cond, y [3], captured w [3]) ->
// (cond, y * w + i, scan y_out). M > 64 is never unrolled.
Graph counted_loop_model() {
  GraphBuilder bb("body", 17);
  const int i = bb.input("i", DType::i64, {}), c = bb.input("cond", DType::boolean, {});
  const int y = bb.input("y_in", DType::f32, {3}), w = bb.input("w", DType::f32, {3});
  bb.output(bb.op("Identity", {c}));
  const int yo = bb.op("Add", {bb.op("Mul", {y, w}), bb.op("Cast", {i}, {{"to", int64_t{1}}})});
  bb.output(yo);
  bb.output(bb.op("Neg", {yo}));
  Graph body = bb.build();
  body.formal_inputs = 3;
  GraphBuilder b("counted_loop", 17);
  const int M = b.input("M", DType::i64, {}), y0 = b.input("y0", DType::f32, {3}), wo = b.input("w", DType::f32, {3});
  auto outs = b.op_multi("Loop", {M, -1, y0, wo}, {{"body", std::make_shared<const Graph>(std::move(body))}}, 2);
  b.output(outs[0]);
  b.output(outs[1]);
  return b.build();
}

// Loop whose cond turns false data-dependently, M a run-time input that is never reached:
// body (i, cond, y [4], n i64, captured d [4], captured limit f32) ->
// (ReduceSum(y_out) < limit, y_out = y + |d|, n + 1).
Graph while_loop_model() {
  GraphBuilder bb("body", 17);
  bb.input("i", DType::i64, {});
  bb.input("cond", DType::boolean, {});
  const int y = bb.input("y_in", DType::f32, {4}), n = bb.input("n_in", DType::i64, {});
  const int d = bb.input("d", DType::f32, {4}), limit = bb.input("limit", DType::f32, {});
  const int yo = bb.op("Add", {y, bb.op("Abs", {d})});
  bb.output(bb.op("Less", {bb.op("ReduceSum", {yo}, {{"keepdims", int64_t{0}}}), limit}));
  bb.output(yo);
  bb.output(bb.op("Add", {n, bb.constant("one", scalar_i64(1))}));
  Graph body = bb.build();
  body.formal_inputs = 4;
  GraphBuilder b("while_loop", 17);
  const int M = b.input("M", DType::i64, {}), y0 = b.input("y0", DType::f32, {4}), d0 = b.input("d", DType::f32, {4});
  const int lim = b.input("limit", DType::f32, {});
  Tensor t(DType::boolean, {});
  t.set(0, 1);
  auto outs = b.op_multi("Loop", {M, b.constant("cond0", t), y0, b.constant("n0", scalar_i64(0)), d0, lim},
                         {{"body", std::make_shared<const Graph>(std::move(body))}}, 2);
  b.output(outs[0]);
  b.output(outs[1]);
  return b.build();
}

// Scan over T = 80 steps (> the unroll limit): body (s [2], x_t [2], captured w [2]) ->
// (s + x_t * w, scan (s + x_t * w) * 2).
Graph long_scan_model(int64_t T) {
  GraphBuilder bb("scan_body", 17);
  const int s = bb.input("s_in", DType::f32, {2}), x = bb.input("x_t", DType::f32, {2}), w = bb.input("w", DType::f32, {2});
  Tensor two(DType::f32, {});
  two.set(0, 2.0);
  const int so = bb.op("Add", {s, bb.op("Mul", {x, w})});
  bb.output(so);
  bb.output(bb.op("Mul", {so, bb.constant("two", two)}));
  Graph body = bb.build();
  body.formal_inputs = 2;
  GraphBuilder b("long_scan", 17);
  const int s0 = b.input("s0", DType::f32, {2}), xs = b.input("x", DType::f32, {T, 2}), wo = b.input("w", DType::f32, {2});
  auto outs = b.op_multi("Scan", {s0, xs, wo}, {{"body", std::make_shared<const Graph>(std::move(body))}, {"num_scan_inputs", int64_t{1}}}, 2);
  b.output(outs[0]);
  b.output(outs[1]);
  return b.build();
}

void expect_same(const std::vector<Tensor>& got, const std::vector<Tensor>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(got[k].dtype(), want[k].dtype()) << what << " output " << k;
    ASSERT_EQ(got[k].shape(), want[k].shape()) << what << " output " << k;
    for (int64_t e = 0; e < want[k].numel(); ++e) {
      if (dtype_is_int(want[k].dtype())) EXPECT_EQ(got[k].get_int(e), want[k].get_int(e)) << what << " output " << k << " element " << e;
      else EXPECT_NEAR(got[k].get(e), want[k].get(e), 1e-5 * std::max(1.0, std::fabs(want[k].get(e))))
          << what << " output " << k << " element " << e;
    }
  }
}

bool has_vulkan() {
  try {
    return !make_backend("vulkan")->devices().empty();
  } catch (const Error&) {
    return false;
  }
}

struct Case {
  std::string name;
  Graph g;
  std::vector<Tensor> in;
  std::vector<Tensor> want;  // computed here
  int64_t iterations = 0;
};

std::vector<Case> cases() {
  std::vector<Case> cs;
  {  // counted, M = 100 at run time
    Case c{"counted loop M=100", counted_loop_model(), {}, {}, 100};
    c.in = {scalar_i64(100), testing::random_tensor(DType::f32, {3}, 11), testing::random_tensor(DType::f32, {3}, 12, 0.5, 0.9)};
    std::vector<double> y{c.in[1].get(0), c.in[1].get(1), c.in[1].get(2)};
    Tensor scan(DType::f32, {100, 3}), fin(DType::f32, {3});
    for (int64_t i = 0; i < 100; ++i)
      for (int j = 0; j < 3; ++j) {
        y[j] = static_cast<float>(static_cast<float>(y[j] * c.in[2].get(j)) + static_cast<float>(i));
        scan.set(i * 3 + j, -y[j]);
      }
    for (int j = 0; j < 3; ++j) fin.set(j, y[j]);
    c.want = {fin, scan};
    cs.push_back(std::move(c));
  }
  {  // cond turns false after a data-dependent number of iterations (M = 1000 never reached)
    Case c{"while loop", while_loop_model(), {}, {}, 0};
    Tensor lim(DType::f32, {});
    lim.set(0, 37.5);
    c.in = {scalar_i64(1000), testing::random_tensor(DType::f32, {4}, 21), testing::random_tensor(DType::f32, {4}, 22, 0.3, 1.0), lim};
    std::vector<float> y(4);
    for (int j = 0; j < 4; ++j) y[j] = static_cast<float>(c.in[1].get(j));
    int64_t n = 0;
    for (bool go = true; go && n < 1000;) {
      float sum = 0;
      for (int j = 0; j < 4; ++j) y[j] += std::fabs(static_cast<float>(c.in[2].get(j))), sum += y[j];
      ++n;
      go = sum < 37.5f;
    }
    Tensor fin(DType::f32, {4});
    for (int j = 0; j < 4; ++j) fin.set(j, y[j]);
    c.want = {fin, scalar_i64(n)};
    c.iterations = n;
    cs.push_back(std::move(c));
  }
  {  // Scan of 80 steps
    const int64_t T = 80;
    Case c{"scan T=80", long_scan_model(T), {}, {}, T};
    c.in = {testing::random_tensor(DType::f32, {2}, 31), testing::random_tensor(DType::f32, {T, 2}, 32), testing::random_tensor(DType::f32, {2}, 33)};
    Tensor fin(DType::f32, {2}), ys(DType::f32, {T, 2});
    std::vector<float> s{static_cast<float>(c.in[0].get(0)), static_cast<float>(c.in[0].get(1))};
    for (int64_t t = 0; t < T; ++t)
      for (int j = 0; j < 2; ++j) {
        s[j] += static_cast<float>(c.in[1].get(t * 2 + j)) * static_cast<float>(c.in[2].get(j));
        ys.set(t * 2 + j, 2 * s[j]);
      }
    for (int j = 0; j < 2; ++j) fin.set(j, s[j]);
    c.want = {fin, ys};
    cs.push_back(std::move(c));
  }
  return cs;
}

bool has_op(const Graph& g, const std::string& op) {
  for (const Node& n : g.nodes)
    if (n.op_type == op) return true;
  return false;
}

TEST(LoopDevice, RefAndCpuMatchValuesComputedHere) {
  for (Case& c : cases()) {
    const Graph sg = specialize(c.g, c.in);
    EXPECT_TRUE(has_op(sg, "Loop") || has_op(sg, "Scan")) << c.name << ": stays a loop (not unrolled)";
    for (const char* be : {"ref", "cpu"}) {
      Session s(c.g, be);
      expect_same(s.run(c.in), c.want, c.name + " on " + be);
    }
  }
}

// The driver (ir/ops/loop.cpp) with runners standing in for a backend: one that runs each
// specialised body on ref (the driver must ask for one body per shape and pass exactly its
// run-time inputs), and one that refuses every body (the driver must run the iterations on the
// reference instead). Both must give the values computed here.
class RefRunner : public BodyRunner {
 public:
  explicit RefRunner(bool refuse) : refuse_(refuse) {}
  std::vector<Tensor> run(const BodyCall& call, const std::vector<Tensor>& inputs) override {
    ++calls;
    if (refuse_) throw Unsupported("test", "refused");
    auto it = exes_.find(call.key);
    if (it == exes_.end()) it = exes_.emplace(call.key, ref_->compile(call.specialise(), {})).first;
    return it->second->run(inputs);
  }
  int64_t calls = 0;
  size_t bodies() const { return exes_.size(); }

 private:
  bool refuse_;
  std::unique_ptr<Backend> ref_ = make_backend("ref");
  std::map<std::string, std::unique_ptr<Executable>> exes_;
};

TEST(LoopDevice, DriverRunsBodiesThroughARunnerOrFallsBack) {
  for (Case& c : cases()) {
    const Graph sg = specialize(c.g, c.in);
    for (bool refuse : {false, true}) {
      const Node* loop = nullptr;
      for (const Node& n : sg.nodes)
        if (host_driven(n)) loop = &n;
      ASSERT_NE(loop, nullptr) << c.name;
      std::vector<const Tensor*> in;
      std::vector<bool> constant;
      for (int v : loop->inputs) {
        constant.push_back(v >= 0 && sg.values[v].constant.has_value());
        if (v < 0) in.push_back(nullptr);
        else if (sg.values[v].constant) in.push_back(&*sg.values[v].constant);
        else {
          size_t k = 0;
          while (sg.inputs[k] != v) ++k;
          in.push_back(&c.in[k]);
        }
      }
      std::vector<Tensor> out;
      for (int o : loop->outputs) {
        out.emplace_back(sg.values[o].dtype, sg.values[o].shape);
        out.back().poison();
      }
      RefRunner r(refuse);
      op_or_throw(*loop).run_host(*loop, in, constant, out, r);
      EXPECT_EQ(r.calls, c.iterations) << c.name;
      if (!refuse) EXPECT_EQ(r.bodies(), 1u) << c.name << ": one specialisation for all iterations";
      expect_same(out, c.want, c.name + (refuse ? " (runner refuses)" : " (ref runner)"));
    }
  }
}

TEST(LoopDevice, VulkanRunsTheBodyAsACompiledPlan) {
  if (!has_vulkan()) GTEST_SKIP() << "no Vulkan device (set VK_DRIVER_FILES to lavapipe)";
  for (Case& c : cases()) {
    const Graph sg = specialize(c.g, c.in);
    auto vk = make_backend("vulkan");
    CompileOptions opts;
    auto exe = compile_with_fallback(*vk, sg, opts);
    for (int rep = 0; rep < 2; ++rep) {  // a second run replays the cached body
      expect_same(exe->run(c.in), c.want, c.name + " on vulkan, run " + std::to_string(rep));
      const HostLoopStats st = host_loop_stats(*exe);
      EXPECT_EQ(st.compiled_iterations, c.iterations * (rep + 1)) << c.name << ": every iteration ran the compiled body";
      EXPECT_EQ(st.ref_iterations, 0) << c.name << ": " << exe->notes();
      EXPECT_EQ(st.bodies_compiled, 1) << c.name << ": one body specialisation";
    }
    EXPECT_NE(exe->notes().find("host-driven, body replayed on vulkan ("), std::string::npos) << exe->notes();
    const auto breaks = graph_breaks(*exe);
    ASSERT_EQ(breaks.size(), 1u) << c.name;
    EXPECT_NE(breaks[0].reason.find("host-driven loop"), std::string::npos) << breaks[0].reason;
    const auto lines = describe_host_loops(*vk, sg, opts);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find("body replayed on vulkan ("), std::string::npos) << lines[0];
    // And through a Session, against ref.
    Session s(c.g, "vulkan"), r(c.g, "ref");
    expect_same(s.run(c.in), r.run(c.in), c.name + " vulkan session vs ref");
  }
}

TEST(LoopDevice, RunTimeTripCountChangesWithoutRecompiling) {
  if (!has_vulkan()) GTEST_SKIP() << "no Vulkan device (set VK_DRIVER_FILES to lavapipe)";
  Graph g = while_loop_model();  // M is not baked: no output shape depends on it
  Session s(g, "vulkan"), r(g, "ref");
  std::vector<Tensor> in = cases()[1].in;
  for (int64_t M : {3, 7, 1000}) {
    in[0] = scalar_i64(M);
    expect_same(s.run(in), r.run(in), "while loop M=" + std::to_string(M));
  }
  EXPECT_EQ(s.cached_executables(), 1u);
}


// ---- Hostile and edge-case loops (review): each model either matches ref on cpu and vulkan
// or is refused everywhere with a one-line fusor::Error. ----

using GraphPtr = std::shared_ptr<const Graph>;

// Body (i, cond, y [3], captured w [3]) -> (cond_out, y * w + i, scan -y); cond_out = cond
// (or, with stop_at >= 0, i < stop_at: the loop stops after stop_at + 1 iterations, and
// without a scan output, which static shapes would need the trip count for).
GraphPtr counted_body(int64_t stop_at = -1, bool subtract = false) {
  GraphBuilder bb("body", 17);
  const int i = bb.input("i", DType::i64, {}), c = bb.input("cond", DType::boolean, {});
  const int y = bb.input("y_in", DType::f32, {3}), w = bb.input("w", DType::f32, {3});
  bb.output(stop_at < 0 ? bb.op("Identity", {c}) : bb.op("Less", {i, bb.constant("stop", scalar_i64(stop_at))}));
  const int yo = bb.op(subtract ? "Sub" : "Add", {bb.op("Mul", {y, w}), bb.op("Cast", {i}, {{"to", int64_t{1}}})});
  bb.output(yo);
  if (stop_at < 0) bb.output(bb.op("Neg", {yo}));
  Graph body = bb.build();
  body.formal_inputs = 3;
  return std::make_shared<const Graph>(std::move(body));
}

// Loop(M, cond, y0, captured w) with M and cond run-time inputs of the given shapes (absent
// when the shape is null).
Graph loop_model(const std::optional<Shape>& m_shape, const std::optional<Shape>& cond_shape, int64_t stop_at = -1) {
  GraphBuilder b("loop", 17);
  const int M = m_shape ? b.input("M", DType::i64, *m_shape) : -1;
  const int c = cond_shape ? b.input("c", DType::boolean, *cond_shape) : -1;
  const int y0 = b.input("y0", DType::f32, {3}), w = b.input("w", DType::f32, {3});
  auto outs = b.op_multi("Loop", {M, c, y0, w}, {{"body", counted_body(stop_at)}}, stop_at < 0 ? 2 : 1);
  for (int o : outs) b.output(o);
  return b.build();
}

std::vector<Tensor> loop_inputs(const std::vector<Tensor>& head) {
  std::vector<Tensor> in = head;
  in.push_back(testing::random_tensor(DType::f32, {3}, 51));
  in.push_back(testing::random_tensor(DType::f32, {3}, 52, 0.5, 0.9));
  return in;
}

Tensor bool_of(bool v, Shape s = {}) {
  Tensor t(DType::boolean, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, v ? 1 : 0);
  return t;
}

// Two Loops over the same inputs with different bodies (y * w + i and y * w - i) that carry
// the same node name, as ONNX allows: each must run its own body.
Graph same_named_loops_model() {
  GraphBuilder b("same_named", 17);
  const int M = b.input("M", DType::i64, {}), y0 = b.input("y0", DType::f32, {3}), w = b.input("w", DType::f32, {3});
  b.output(b.op_multi("Loop", {M, -1, y0, w}, {{"body", counted_body()}}, 2)[0]);
  b.output(b.op_multi("Loop", {M, -1, y0, w}, {{"body", counted_body(-1, true)}}, 2)[1]);
  Graph g = b.build();
  for (Node& n : g.nodes) n.name = "L";
  return g;
}

// Outer Loop (M run-time) whose body runs an inner Loop of N (captured outer input) iterations
// over the carried y, then adds i: a nest the unroller leaves alone.
Graph nested_loop_model() {
  GraphBuilder ob("outer_body", 17);
  const int i = ob.input("i", DType::i64, {}), c = ob.input("cond", DType::boolean, {});
  const int y = ob.input("y_in", DType::f32, {3});
  const int N = ob.input("N", DType::i64, {}), w = ob.input("w", DType::f32, {3});
  auto inner = ob.op_multi("Loop", {N, -1, y, w}, {{"body", counted_body()}}, 2);
  ob.output(ob.op("Identity", {c}));
  const int yo = ob.op("Add", {inner[0], ob.op("Cast", {i}, {{"to", int64_t{1}}})});
  ob.output(yo);
  ob.output(ob.op("ReduceSum", {inner[1]}, {{"keepdims", int64_t{0}}}));
  Graph body = ob.build();
  body.formal_inputs = 3;
  GraphBuilder b("nested", 17);
  const int M = b.input("M", DType::i64, {}), Nn = b.input("N", DType::i64, {});
  const int y0 = b.input("y0", DType::f32, {3}), wo = b.input("w", DType::f32, {3});
  auto outs = b.op_multi("Loop", {M, -1, y0, Nn, wo}, {{"body", std::make_shared<const Graph>(std::move(body))}}, 2);
  b.output(outs[0]);
  b.output(outs[1]);
  return b.build();
}

// Scan over x [2, T] along axis 1, input and output reversed, output stacked along axis 1.
Graph reversed_scan_model(int64_t T) {
  GraphBuilder bb("scan_body", 17);
  const int s = bb.input("s_in", DType::f32, {2}), x = bb.input("x_t", DType::f32, {2}), w = bb.input("w", DType::f32, {2});
  const int so = bb.op("Add", {bb.op("Mul", {s, w}), x});
  bb.output(so);
  bb.output(bb.op("Sin", {so}));
  Graph body = bb.build();
  body.formal_inputs = 2;
  GraphBuilder b("reversed_scan", 17);
  const int s0 = b.input("s0", DType::f32, {2}), xs = b.input("x", DType::f32, {2, T}), wo = b.input("w", DType::f32, {2});
  auto outs = b.op_multi("Scan", {s0, xs, wo},
                         {{"body", std::make_shared<const Graph>(std::move(body))},
                          {"num_scan_inputs", int64_t{1}},
                          {"scan_input_directions", std::vector<int64_t>{1}},
                          {"scan_input_axes", std::vector<int64_t>{-1}},
                          {"scan_output_directions", std::vector<int64_t>{1}},
                          {"scan_output_axes", std::vector<int64_t>{1}}},
                         2);
  b.output(outs[0]);
  b.output(outs[1]);
  return b.build();
}

// If(p) then Loop(M, y0, w) (the loop inside the branch) else Neg(y0). Branch inputs are the
// captured outer values: else_branch's (y0), then then_branch's (M, y0, w).
Graph loop_in_if_model() {
  GraphBuilder tb("then", 17);
  const int M = tb.input("M", DType::i64, {}), y0 = tb.input("y0", DType::f32, {3}), w = tb.input("w", DType::f32, {3});
  tb.output(tb.op_multi("Loop", {M, -1, y0, w}, {{"body", counted_body()}}, 2)[0]);
  Graph then_g = tb.build();
  then_g.formal_inputs = 0;
  GraphBuilder eb("else", 17);
  eb.output(eb.op("Neg", {eb.input("y0", DType::f32, {3})}));
  Graph else_g = eb.build();
  else_g.formal_inputs = 0;
  GraphBuilder b("loop_in_if", 17);
  const int p = b.input("p", DType::boolean, {}), Mo = b.input("M", DType::i64, {});
  const int yo = b.input("y0", DType::f32, {3}), wo = b.input("w", DType::f32, {3});
  b.output(b.op("If", {p, yo, Mo, yo, wo},
                {{"then_branch", std::make_shared<const Graph>(std::move(then_g))}, {"else_branch", std::make_shared<const Graph>(std::move(else_g))}}));
  return b.build();
}

TEST(LoopDevice, HostileLoopsMatchRefOrFailCleanly) {
  const int64_t big = std::numeric_limits<int64_t>::max();
  struct L {
    std::string name;
    Graph g;
    std::vector<Tensor> in;
    bool error = false;
  };
  std::vector<L> ls;
  for (int64_t M : {int64_t{0}, int64_t{-3}, int64_t{1}, int64_t{70}})
    ls.push_back({"counted M=" + std::to_string(M), loop_model(Shape{}, std::nullopt), loop_inputs({scalar_i64(M)})});
  ls.push_back({"M=INT64_MAX, cond false after 5", loop_model(Shape{}, std::nullopt, 4), loop_inputs({scalar_i64(big)})});
  ls.push_back({"M absent, cond false after 70", loop_model(std::nullopt, std::nullopt, 69), loop_inputs({})});
  ls.push_back({"M absent, cond input true, stops after 3", loop_model(std::nullopt, Shape{}, 2), loop_inputs({bool_of(true)})});
  ls.push_back({"cond input false", loop_model(Shape{}, Shape{}, 1000), loop_inputs({scalar_i64(80), bool_of(false)})});
  ls.push_back({"cond input [1] true", loop_model(Shape{}, Shape{1}, 1000), loop_inputs({scalar_i64(80), bool_of(true, {1})})});
  // Scan outputs need the trip count: a Session specialises on the cond input.
  ls.push_back({"scan outputs, run-time cond", loop_model(Shape{}, Shape{}), loop_inputs({scalar_i64(80), bool_of(true)})});
  ls.push_back({"M of shape [2]", loop_model(Shape{2}, std::nullopt), loop_inputs({testing::ints_of({2}, {3, 4})}), true});
  ls.push_back({"cond of shape [2]", loop_model(Shape{}, Shape{2}, 1000), loop_inputs({scalar_i64(80), bool_of(true, {2})}), true});
  {
    std::vector<Tensor> in = loop_inputs({scalar_i64(70), scalar_i64(3)});
    ls.push_back({"nested Loop in Loop", nested_loop_model(), in});
    in[1] = scalar_i64(0);
    ls.push_back({"nested, inner M=0", nested_loop_model(), in});
  }
  ls.push_back({"reversed Scan T=80 axis 1", reversed_scan_model(80),
                {testing::random_tensor(DType::f32, {2}, 61), testing::random_tensor(DType::f32, {2, 80}, 62),
                 testing::random_tensor(DType::f32, {2}, 63, 0.5, 0.9)}});
  ls.push_back({"reversed Scan T=0", reversed_scan_model(0),
                {testing::random_tensor(DType::f32, {2}, 61), Tensor(DType::f32, {2, 0}), testing::random_tensor(DType::f32, {2}, 63)}});
  ls.push_back({"two Loops of one name", same_named_loops_model(), loop_inputs({scalar_i64(70)})});
  for (bool p : {true, false})
    ls.push_back({std::string("Loop inside If, ") + (p ? "then" : "else"), loop_in_if_model(),
                  {bool_of(p), scalar_i64(75), testing::random_tensor(DType::f32, {3}, 71), testing::random_tensor(DType::f32, {3}, 72, 0.5, 0.9)}});
  for (L& l : ls) {
    const std::string err = testing::expect_backends_agree(l.g, l.in, l.name);
    EXPECT_EQ(!err.empty(), l.error) << l.name << ": " << err;
  }
}

#ifdef FUSOR_HAVE_CUDA
TEST(LoopDevice, CudaBodyKernelsCompileWithNvrtc) {
  auto cuda = make_backend("cuda");
  for (Case& c : cases()) {
    const Graph sg = specialize(c.g, c.in);
    const auto breaks = find_graph_breaks(*cuda, sg, {});
    ASSERT_EQ(breaks.size(), 1u) << c.name;
    EXPECT_NE(breaks[0].reason.find("host-driven loop"), std::string::npos) << breaks[0].reason;
    for (const Node& n : sg.nodes) {
      if (!host_driven(n)) continue;
      const Graph body = op_or_throw(n).first_call(sg, n).specialise();
      EXPECT_TRUE(find_graph_breaks(*cuda, body, {}).empty()) << c.name << ": the body runs whole on cuda";
      const Plan p = build_plan(body);
      EXPECT_GT(p.kernels.size(), 0u) << c.name;
      for (auto& [name, src] : cuda_generate_sources(p))
        if (!src.empty()) EXPECT_NO_THROW(nvrtc_compile_check(src, name)) << src;
    }
  }
  if (cuda->devices().empty()) GTEST_SKIP() << "no CUDA device: body kernels NVRTC-compiled, runs skipped";
  for (Case& c : cases()) {
    auto exe = compile_with_fallback(*cuda, specialize(c.g, c.in), {});
    expect_same(exe->run(c.in), c.want, c.name + " on cuda");
    EXPECT_EQ(host_loop_stats(*exe).compiled_iterations, c.iterations) << exe->notes();
    EXPECT_EQ(host_loop_stats(*exe).ref_iterations, 0) << exe->notes();
  }
}
#endif

}  // namespace
}  // namespace fusor
