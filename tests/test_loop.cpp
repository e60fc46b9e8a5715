// Loop and Scan (ir/ops/loop.cpp) with bodies reading outer values: the reference (one body run
// per iteration) against values computed here, and the unrolled graph (small static trip
// counts) on cpu against the same values; a trip count past the unroll limit runs the loop on
// the host between device segments.
#include <gtest/gtest.h>

#include <limits>

#include "frontend/builder.h"
#include "ir/passes.h"
#include "runtime/session.h"
#include "test_util.h"

using fusor::testing::ints_of;

namespace fusor {
namespace {

// Scan body: (s_in [2], x_t [2], captured w [2]) -> (s_out = s_in + x_t * w, y_t = s_out * 2).
std::shared_ptr<const Graph> scan_body() {
  GraphBuilder b("scan_body", 17);
  const int s = b.input("s_in", DType::f32, {2}), x = b.input("x_t", DType::f32, {2});
  const int w = b.input("w", DType::f32, {2});  // captured outer value
  Tensor two(DType::f32, {});
  two.set(0, 2.0);
  const int so = b.op("Add", {s, b.op("Mul", {x, w})});
  b.output(so);
  b.output(b.op("Mul", {so, b.constant("two", two)}));
  Graph g = b.build();
  g.formal_inputs = 2;
  return std::make_shared<const Graph>(std::move(g));
}

// Loop body: (i, cond, y_in [3], captured w [3]) -> (cond, y_in * w + i, y_out).
std::shared_ptr<const Graph> loop_body() {
  GraphBuilder b("loop_body", 17);
  const int i = b.input("i", DType::i64, {}), c = b.input("cond", DType::boolean, {});
  const int y = b.input("y_in", DType::f32, {3}), w = b.input("w", DType::f32, {3});
  b.output(b.op("Identity", {c}));
  const int yo = b.op("Add", {b.op("Mul", {y, w}), b.op("Cast", {i}, {{"to", int64_t{1}}})});
  b.output(yo);
  b.output(b.op("Identity", {yo}));
  Graph g = b.build();
  g.formal_inputs = 3;
  return std::make_shared<const Graph>(std::move(g));
}

// Scan over x [T, 2] (reversed when dir = 1) with w read from the outer graph.
Graph scan_model(int64_t T, int64_t dir) {
  GraphBuilder b("scan", 17);
  const int s0 = b.input("s0", DType::f32, {2}), x = b.input("x", DType::f32, {T, 2}), w = b.input("w", DType::f32, {2});
  auto outs = b.op_multi("Scan", {s0, x, w},
                         {{"body", scan_body()}, {"num_scan_inputs", int64_t{1}}, {"scan_input_directions", std::vector<int64_t>{dir}}}, 2);
  b.output(outs[0]);
  b.output(outs[1]);
  return b.build();
}

Graph loop_model(int64_t M) {
  GraphBuilder b("loop", 17);
  Tensor m(DType::i64, {});
  m.set_int(0, M);
  const int y0 = b.input("y0", DType::f32, {3}), w = b.input("w", DType::f32, {3});
  auto outs = b.op_multi("Loop", {b.constant("M", m), -1, y0, w}, {{"body", loop_body()}}, 2);
  b.output(outs[0]);
  b.output(outs[1]);
  return b.build();
}

void expect_close(const Tensor& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(static_cast<size_t>(got.numel()), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got.get(static_cast<int64_t>(i)), want[i], 1e-5 * std::max(1.0, std::fabs(want[i]))) << what << " element " << i;
}

bool has_op(const Graph& g, const std::string& op) {
  for (const Node& n : g.nodes)
    if (n.op_type == op) return true;
  return false;
}

TEST(Loop, ScanReadsOuterValuesOnRefAndUnrolled) {
  for (int64_t dir : {0, 1}) {
    const int64_t T = 5;
    std::vector<Tensor> in{testing::random_tensor(DType::f32, {2}, 1), testing::random_tensor(DType::f32, {T, 2}, 2),
                           testing::random_tensor(DType::f32, {2}, 3)};
    std::vector<double> s{in[0].get(0), in[0].get(1)}, ys(static_cast<size_t>(T * 2));
    for (int64_t t = 0; t < T; ++t) {
      const int64_t pos = dir ? T - 1 - t : t;
      for (int j = 0; j < 2; ++j) {
        s[j] += in[1].get(pos * 2 + j) * in[2].get(j);
        ys[static_cast<size_t>(t * 2 + j)] = 2 * s[j];
      }
    }
    const Graph g = scan_model(T, dir);
    // The reference, directly (no unrolling): infer + reference of the Scan node itself.
    {
      Graph r = g;
      Node& n = r.nodes[0];
      std::vector<const Tensor*> ins{&in[0], &in[1], &in[2]};
      for (size_t i = 0; i < 3; ++i) {
        r.values[r.inputs[i]].shape = in[i].shape();
        r.values[r.inputs[i]].shape_known = true;
      }
      InferContext ctx(r, n);
      op_or_throw(n).infer(ctx);
      std::vector<Tensor> out;
      for (int o : n.outputs) {
        out.emplace_back(r.values[o].dtype, r.values[o].shape);
        out.back().poison();
      }
      op_or_throw(n).reference(n, ins, out);
      expect_close(out[0], s, "ref final state");
      expect_close(out[1], ys, "ref scan output");
    }
    EXPECT_FALSE(has_op(specialize(g, in), "Scan")) << "a 5-step Scan is unrolled";
    for (const char* be : {"ref", "cpu"}) {
      Session sess(g, be);
      const std::vector<Tensor> out = sess.run(in);
      expect_close(out[0], s, std::string(be) + " final state");
      expect_close(out[1], ys, std::string(be) + " scan output");
    }
  }
}

TEST(Loop, CountedLoopReadsOuterValuesRefAndUnrolled) {
  for (int64_t M : {int64_t{4}, int64_t{70}}) {  // 70 > the unroll limit: the loop stays a node
    std::vector<Tensor> in{testing::random_tensor(DType::f32, {3}, 4), testing::random_tensor(DType::f32, {3}, 5, 0.5, 1.0)};
    std::vector<double> y{in[0].get(0), in[0].get(1), in[0].get(2)}, scan;
    for (int64_t i = 0; i < M; ++i)
      for (int j = 0; j < 3; ++j) {
        y[j] = y[j] * in[1].get(j) + static_cast<double>(i);
        scan.push_back(y[j]);
      }
    const Graph g = loop_model(M);
    EXPECT_EQ(has_op(specialize(g, in), "Loop"), M > 64) << M;
    for (const char* be : {"ref", "cpu"}) {
      Session sess(g, be);
      const std::vector<Tensor> out = sess.run(in);
      expect_close(out[0], y, std::string(be) + " final value, M=" + std::to_string(M));
      expect_close(out[1], scan, std::string(be) + " scan output, M=" + std::to_string(M));
      EXPECT_EQ(out[1].shape(), (Shape{M, 3}));
    }
  }
}

// A body that slices by its iteration number (tf2onnx writes x[0 : i + 1] for tf.math.cumprod
// and crop_and_resize; red-team round 26): its shapes are known only with i bound. A small
// counted loop unrolls (each copy binds its i), a longer one runs one bound iteration at a
// time; every backend present gives sum(x[0 : i + 1]) per iteration and their total.
TEST(Loop, BodySlicesByTheIterationNumber) {
  for (int64_t M : {int64_t{3}, int64_t{70}}) {
    GraphBuilder bb("body", 17);
    const int i = bb.input("i", DType::i64, {}), c = bb.input("cond", DType::boolean, {}), acc = bb.input("acc", DType::f32, {});
    const int x = bb.input("x", DType::f32, {M + 5});  // captured outer value
    bb.output(bb.op("Identity", {c}));
    const int end = bb.op("Unsqueeze", {bb.op("Add", {i, bb.constant("one", ints_of({}, {1}))}), bb.constant("ax", ints_of({1}, {0}))});
    const int sl = bb.op("Slice", {x, bb.constant("zero", ints_of({1}, {0})), end, bb.constant("axes", ints_of({1}, {0}))});
    const int rs = bb.op("ReduceSum", {sl}, {{"keepdims", int64_t{0}}});
    bb.output(bb.op("Add", {acc, rs}));
    bb.output(bb.op("Identity", {rs}));
    Graph body = bb.build();
    body.formal_inputs = 3;
    GraphBuilder b("loop", 17);
    const int xo = b.input("x", DType::f32, {M + 5});
    Tensor m(DType::i64, {}), a0(DType::f32, {});
    m.set_int(0, M);
    auto outs = b.op_multi("Loop", {b.constant("M", m), -1, b.constant("acc0", a0), xo},
                           {{"body", std::make_shared<const Graph>(std::move(body))}}, 2);
    b.output(outs[0]);
    b.output(outs[1]);
    const Graph g = b.build();
    std::vector<Tensor> in{testing::random_tensor(DType::f32, {M + 5}, 9, 0.5, 2.0)};
    std::vector<double> scan;
    double total = 0;
    for (int64_t k = 0; k < M; ++k) {
      double s = 0;
      for (int64_t j = 0; j <= k; ++j) s += static_cast<double>(static_cast<float>(in[0].get(j)));
      scan.push_back(s), total += s;
    }
    for (const std::string& be : testing::usable_backends()) {
      const std::vector<Tensor> out = Session(g, be).run(in);
      ASSERT_EQ(out[1].shape(), (Shape{M})) << be;
      for (int64_t k = 0; k < M; ++k)
        EXPECT_NEAR(out[1].get(k), scan[static_cast<size_t>(k)], 1e-5 * scan[static_cast<size_t>(k)]) << be << " M=" << M << " iteration " << k;
      EXPECT_NEAR(out[0].get(0), total, 1e-5 * total) << be << " M=" << M;
    }
  }
}

// A Loop body binds the values it is given whatever ranks it declares, as ONNX's Loop inference
// (it drops the carried values' shapes) and onnxruntime do: a carried input declared a scalar but
// bound [4] runs, and an iteration number declared [n] is the one-element tensor onnxruntime
// binds. A Scan's state declared with another rank is an invalid body (ONNX's Scan inference
// merges the two and fails), refused in one line (red-team round 58 and its review).
TEST(Loop, BodyInputRanksFollowOnnxInference) {
  for (const bool iteration_rank1 : {false, true}) {
    GraphBuilder bb("body", 18);
    const int i = bb.input("i", DType::i64, iteration_rank1 ? Shape{-1} : Shape{});
    const int c = bb.input("cond", DType::boolean, {}), acc = bb.input("acc", DType::f32, {});
    const int seq = bb.input("seq", DType::f32, {});  // bound to [4]
    bb.output(bb.op("Identity", {c}));
    const int picked = bb.op("Gather", {seq, bb.op("Reshape", {i, bb.constant("scalar", ints_of({0}, {}))})});
    bb.output(bb.op("Add", {acc, picked}));
    bb.output(bb.op("Identity", {seq}));
    GraphBuilder b("loop", 18);
    const int x = b.input("x", DType::f32, {4});
    Tensor m(DType::i64, {}), a0(DType::f32, {});
    m.set_int(0, 4);
    auto outs = b.op_multi("Loop", {b.constant("M", m), -1, b.constant("acc0", a0), x},
                           {{"body", std::make_shared<const Graph>(bb.build())}}, 2);
    b.output(outs[0]);
    const Graph g = b.build();
    for (const std::string& be : testing::usable_backends()) {
      const std::string err = testing::error_of([&] {
        EXPECT_EQ(Session(g, be).run({testing::tensor_of({4}, {1, 2, 3, 4})})[0].get(0), 10.0) << be;
      });
      EXPECT_EQ(err, "") << be << (iteration_rank1 ? " (iteration number [n])" : "");
    }
  }
  // Scan-9 whose state the body declares [2] while the node binds a scalar.
  GraphBuilder sb("scan_body", 18);
  const int st = sb.input("state", DType::f32, {2}), el = sb.input("el", DType::f32, {});
  const int next = sb.op("Add", {st, el});
  sb.output(next);
  sb.output(sb.op("Identity", {next}));
  GraphBuilder b("scan", 18);
  const int xs = b.input("xs", DType::f32, {3});
  auto outs = b.op_multi("Scan", {b.constant("s0", Tensor(DType::f32, {})), xs},
                         {{"body", std::make_shared<const Graph>(sb.build())}, {"num_scan_inputs", int64_t{1}}}, 2);
  b.output(outs[0]);
  const std::string err = testing::error_of([&] { Session(b.build(), "ref").run({testing::tensor_of({3}, {1, 2, 3})}); });
  EXPECT_NE(err.find("body input 'state' is declared rank 1 [2], bound to []"), std::string::npos) << err;
}

// The same body under a condition computed from the iteration number (a while loop: i + 1 < 3;
// M 10 or INT64_MAX, TorchScript's bound): iteration 0's types do not make the loop counted, so
// the scan output has the 3 iterations that ran (red-team round 28: it was given M rows, or
// refused at load). A counted loop whose scan output changes shape fails naming the loop.
TEST(Loop, WhileBodySlicesByTheIterationNumber) {
  for (int64_t M : {int64_t{10}, std::numeric_limits<int64_t>::max()})
    for (bool with_scan : {true, false}) {
      GraphBuilder bb("body", 17);
      const int i = bb.input("i", DType::i64, {}), c = bb.input("cond", DType::boolean, {}), acc = bb.input("acc", DType::f32, {});
      const int x = bb.input("x", DType::f32, {5});
      (void)c;
      const int ip1 = bb.op("Add", {i, bb.constant("one", ints_of({}, {1}))});
      bb.output(bb.op("Less", {ip1, bb.constant("three", ints_of({}, {3}))}));
      const int sl = bb.op("Slice", {x, bb.constant("zero", ints_of({1}, {0})), bb.op("Unsqueeze", {ip1, bb.constant("ax", ints_of({1}, {0}))}),
                                     bb.constant("axes", ints_of({1}, {0}))});
      const int rs = bb.op("ReduceSum", {sl}, {{"keepdims", int64_t{0}}});
      bb.output(bb.op("Add", {acc, rs}));
      if (with_scan) bb.output(bb.op("Identity", {rs}));
      Graph body = bb.build();
      body.formal_inputs = 3;
      GraphBuilder b("loop", 17);
      const int xo = b.input("x", DType::f32, {5});
      Tensor m(DType::i64, {}), a0(DType::f32, {}), t(DType::boolean, {});
      m.set_int(0, M), t.set(0, 1.0);
      auto outs = b.op_multi("Loop", {b.constant("M", m), b.constant("c", t), b.constant("acc0", a0), xo},
                             {{"body", std::make_shared<const Graph>(std::move(body))}}, with_scan ? 2 : 1);
      for (int o : outs) b.output(o);
      const Graph g = b.build();
      const std::vector<Tensor> in{testing::tensor_of({5}, {1, 2, 3, 4, 5})};
      for (const std::string& be : testing::usable_backends()) {
        const std::string what = be + " M=" + std::to_string(M) + (with_scan ? " with a scan output" : "");
        std::vector<Tensor> out;
        try {
          out = Session(g, be).run(in);
        } catch (const Error& e) {
          ADD_FAILURE() << what << ": " << e.what();
          continue;
        }
        EXPECT_EQ(out[0].get(0), 10.0) << what;
        if (with_scan) {
          ASSERT_EQ(out[1].shape(), (Shape{3})) << what;
          for (int64_t k = 0; k < 3; ++k) EXPECT_EQ(out[1].get(k), static_cast<double>((k + 1) * (k + 2) / 2)) << what;
        }
      }
    }
  // Counted (unrolled) with a scan output of i + 1 elements: one line naming the loop.
  GraphBuilder bb("body", 17);
  const int i = bb.input("i", DType::i64, {}), c = bb.input("cond", DType::boolean, {});
  const int x = bb.input("x", DType::f32, {5});
  bb.output(bb.op("Identity", {c}));
  bb.output(bb.op("Slice", {x, bb.constant("zero", ints_of({1}, {0})),
                            bb.op("Unsqueeze", {bb.op("Add", {i, bb.constant("one", ints_of({}, {1}))}), bb.constant("ax", ints_of({1}, {0}))}),
                            bb.constant("axes", ints_of({1}, {0}))}));
  Graph body = bb.build();
  body.formal_inputs = 2;
  GraphBuilder b("loop", 17);
  const int xo = b.input("x", DType::f32, {5});
  Tensor m(DType::i64, {});
  m.set_int(0, 3);
  b.output(b.op("Loop", {b.constant("M", m), -1, xo}, {{"body", std::make_shared<const Graph>(std::move(body))}}));
  const std::string msg = testing::error_of([&] { Session(b.build(), "ref").run({testing::tensor_of({5}, {1, 2, 3, 4, 5})}); });
  EXPECT_NE(msg.find("Loop"), std::string::npos) << msg;
  EXPECT_NE(msg.find("scan output 0 of iteration 1"), std::string::npos) << msg;
}

}  // namespace
}  // namespace fusor
