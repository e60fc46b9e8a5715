// A seeded random-graph generator: chains and DAGs of element-wise, broadcast, view,
// reduction and matmul ops with random shapes (size-1 and odd sizes included).
#pragma once
#include <algorithm>
#include <random>

#include "frontend/builder.h"
#include "ir/op_table.h"
#include "test_util.h"

namespace fusor::testing {

// Builds a random DAG of element-wise, broadcast, view, reduction and matmul ops.
struct RandomGraph {
  Graph g;
  bool elementwise_only = true;
};

inline RandomGraph random_graph(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  const int64_t dims[] = {1, 2, 3, 5, 7, 8, 13, 16};
  int rank = 1 + pick(3);
  Shape shape;
  for (int i = 0; i < rank; ++i) shape.push_back(dims[pick(8)]);
  GraphBuilder b("random", 13);
  RandomGraph rg;
  struct V {
    int id;
    Shape s;
  };
  std::vector<V> pool{{b.input("x0", DType::f32, shape), shape}};
  int n_inputs = 1;
  const char* unary[] = {"Tanh", "Relu", "Sigmoid", "Abs", "Neg", "Softsign", "Erf", "HardSwish"};
  const char* binary[] = {"Add", "Mul", "Sub", "Max", "Min"};
  int steps = 3 + pick(10);
  int cidx = 0;
  auto ints = [&](std::vector<int64_t> v) {
    Tensor t(DType::i64, {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) t.set_int(i, v[i]);
    return b.constant("k" + std::to_string(cidx++), t);
  };
  for (int s = 0; s < steps; ++s) {
    V a = pool[pick(static_cast<int>(pool.size()))];
    int kind = pick(10);
    if (kind < 3) {
      pool.push_back({b.op(unary[pick(8)], {a.id}), a.s});
    } else if (kind < 6) {
      // Broadcast partner: same shape, some dims 1, or a lower rank; sometimes an existing value.
      Shape ps = a.s;
      for (auto& d : ps)
        if (pick(3) == 0) d = 1;
      if (!ps.empty() && pick(4) == 0) ps.erase(ps.begin());
      V partner{-1, ps};
      for (auto& q : pool)
        if (q.s == a.s && pick(2) == 0) partner = q;
      if (partner.id < 0) partner.id = b.input("x" + std::to_string(n_inputs++), DType::f32, ps);
      Shape out = broadcast_shapes({a.s, partner.s}, "random");
      pool.push_back({b.op(binary[pick(5)], pick(2) ? std::vector<int>{a.id, partner.id} : std::vector<int>{partner.id, a.id}), out});
    } else if (kind == 6 && a.s.size() >= 2) {
      std::vector<int64_t> perm(a.s.size());
      for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
      std::shuffle(perm.begin(), perm.end(), rng);
      Shape o;
      for (auto p : perm) o.push_back(a.s[p]);
      pool.push_back({b.op("Transpose", {a.id}, {{"perm", perm}}), o});
    } else if (kind == 7 && !a.s.empty()) {
      int ax = pick(static_cast<int>(a.s.size()));
      int64_t d = a.s[ax];
      if (pick(2)) {  // slice with a step, maybe reversed
        int64_t step = pick(2) ? 1 : (pick(2) ? 2 : -1);
        int64_t start = step > 0 ? pick(static_cast<int>(d)) : d - 1;
        int64_t end = step > 0 ? d : -d - 1;
        int64_t count = step > 0 ? (end - start + step - 1) / step : (start - (end + d) + (-step) - 1) / (-step);
        Shape o = a.s;
        o[ax] = count;
        if (count <= 0) continue;
        pool.push_back({b.op("Slice", {a.id, ints({start}), ints({end}), ints({ax}), ints({step})}), o});
      } else {  // reshape: flatten everything
        Shape o{shape_numel(a.s)};
        pool.push_back({b.op("Reshape", {a.id, ints({-1})}), o});
      }
    } else if (kind == 8 && !a.s.empty()) {
      rg.elementwise_only = false;
      int ax = pick(static_cast<int>(a.s.size()));
      const char* r[] = {"ReduceSum", "ReduceMean", "ReduceMax"};
      int red = b.op(r[pick(3)], {a.id}, {{"keepdims", int64_t{1}}});
      b.graph().nodes.back().inputs.push_back(ints({ax}));
      b.graph().nodes.back().opset = 13;
      if (std::string(b.graph().nodes.back().op_type) != "ReduceSum") {
        b.graph().nodes.back().inputs.pop_back();
        b.graph().nodes.back().attrs["axes"] = std::vector<int64_t>{ax};
      }
      pool.push_back({b.op("Sub", {a.id, red}), a.s});  // the usual "x - reduce(x)" consumer
    } else if (kind == 9 && a.s.size() >= 2) {
      rg.elementwise_only = false;
      int64_t n = dims[pick(8)];
      const int ci = cidx++;
      int w = b.constant("w" + std::to_string(ci), random_tensor(DType::f32, {a.s.back(), n}, seed + ci));
      Shape o = a.s;
      o.back() = n;
      pool.push_back({b.op("MatMul", {a.id, w}), o});
    }
  }
  // Outputs: the last value, plus sometimes an intermediate.
  b.output(pool.back().id);
  if (pool.size() > 2 && pick(2)) b.output(pool[1 + pick(static_cast<int>(pool.size()) - 2)].id);
  rg.g = b.build();
  return rg;
}


}  // namespace fusor::testing
