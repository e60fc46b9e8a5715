// The fusion pass's classification (ir/fusion_classify.h).
#include "ir/fusion_classify.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "ir/op_table.h"
#include "ir/passes.h"

namespace fusor::fusion_detail {
namespace {

class Classifier {
 public:
  Classifier(const Graph& g, const FusionOptions& o) : g_(g), o_(o) {}

  Classes run() {
    classify();
    init_materialized();
    if (o_.fuse) cut_long_chains();
    return Classes{std::move(cls_), std::move(red_), std::move(consumers_), std::move(mat_)};
  }

 private:
  const Graph& g_;
  const FusionOptions& o_;
  std::vector<Cls> cls_;
  std::vector<ReduceInfo> red_;
  std::vector<std::vector<int>> consumers_;
  std::vector<char> mat_;

  bool io_fusible(const Node& n, bool data_only) const {
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (data_only && i > 0) break;
      if (n.inputs[i] >= 0 && !fusible_dtype(g_.values[n.inputs[i]].dtype)) return false;
    }
    for (int o : n.outputs)
      if (o >= 0 && !fusible_dtype(g_.values[o].dtype)) return false;
    return true;
  }

  void classify() {
    cls_.assign(g_.nodes.size(), Cls::opaque);
    red_.assign(g_.nodes.size(), {});
    consumers_.assign(g_.values.size(), {});
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      for (int v : n.inputs)
        if (v >= 0 && (consumers_[v].empty() || consumers_[v].back() != static_cast<int>(i))) consumers_[v].push_back(i);
      const OpDef* def = lookup_op(n.op_type);
      const std::string& t = n.op_type;
      if (!def || n.outputs.size() != 1 || n.outputs[0] < 0) continue;
      const Value& out = g_.values[n.outputs[0]];
      if (def->scalar && io_fusible(n, false)) {
        cls_[i] = Cls::elementwise;
      } else if (def->is_view && io_fusible(n, true)) {
        cls_[i] = Cls::view;
      } else if (def->reduce && reduce_dtype(out.dtype) && g_.values[n.inputs[0]].dtype == out.dtype &&
                 reduce_info(n, *def->reduce, red_[i])) {
        cls_[i] = Cls::reduce;
      } else if (fusible_matmul(g_, n)) {
        cls_[i] = Cls::matmul;
      } else if (t == "Conv" && n.num_inputs() == 2 && out.shape.size() == 4 && contraction_dtypes(g_, n) &&
                 conv_weight_contractible(g_.values[n.inputs[1]])) {
        cls_[i] = Cls::conv;
      } else if (t == "Concat" && io_fusible(n, false)) {
        cls_[i] = Cls::concat;
      } else if (fusible_gather(n)) {
        cls_[i] = Cls::gather;
      }
    }
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (fused_weight_dequant(g_, i, o_.fuse)) cls_[i] = Cls::dequant;
  }

  // Gather(data, indices) read element by element by its consumers (a gathered load): fused
  // unless the data is a one-element constant (an immediate, not a buffer), either side is
  // empty, or the indices are not int32 / int64 (ONNX Gather takes only those).
  bool fusible_gather(const Node& n) const {
    const char* env = std::getenv("FUSOR_GATHER_FUSION");
    const bool wanted = env && (std::string(env) == "0" || std::string(env) == "1") ? std::string(env) == "1" : o_.gather_loads;
    if (!o_.fuse || !wanted || n.op_type != "Gather" || n.num_inputs() != 2 || !n.has_input(0) || !n.has_input(1)) return false;
    const Value &data = g_.values[n.inputs[0]], &ind = g_.values[n.inputs[1]], &out = g_.values[n.outputs[0]];
    if (!io_fusible(n, false) || (ind.dtype != DType::i32 && ind.dtype != DType::i64) || data.shape.empty()) return false;
    if (data.constant && data.constant->numel() == 1) return false;
    const int64_t axis = n.attr_i("axis", 0), r = static_cast<int64_t>(data.shape.size());
    if (axis < -r || axis >= r) return false;  // the shape pass reports it
    return data.shape[axis < 0 ? axis + r : axis] > 0 && shape_numel(out.shape) > 0 && shape_numel(data.shape) > 0;
  }

  // A Reduce* node the fuser can absorb: the op table's ReduceRule with a plain combiner
  // (sum/max/min, optionally mean) and constant axes. Others (L1, L2, LogSum, Prod...) are
  // decomposed before fusion or stay opaque.
  bool reduce_info(const Node& n, const ReduceRule& rule, ReduceInfo& r) const {
    if (rule.pre || rule.post || rule.combiner == Combiner::prod) return false;
    const Value& x = g_.values[n.inputs[0]];
    const Tensor* axes_input = nullptr;
    if (n.has_input(1)) {
      if (!g_.values[n.inputs[1]].constant) return false;
      axes_input = &*g_.values[n.inputs[1]].constant;
    }
    bool noop = false;
    r.axes = reduce_axes(n, axes_input, static_cast<int64_t>(x.shape.size()), &noop);
    if (noop || r.axes.empty()) return false;
    r.combiner = rule.combiner;
    r.mean = rule.mean;
    return true;
  }

  int producer(int v) const { return g_.values[v].producer; }

  void init_materialized() {
    mat_.assign(g_.values.size(), 0);
    for (int v : g_.inputs) mat_[v] = 1;
    for (int v : g_.outputs) mat_[v] = 1;
    for (int v : g_.checks) mat_[v] = 1;
    for (size_t v = 0; v < g_.values.size(); ++v)
      if (g_.values[v].constant) mat_[v] = 1;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      Cls c = cls_[i];
      if (!o_.fuse || !inlines(c))
        for (int o : n.outputs)
          if (o >= 0) mat_[o] = 1;
      // Opaque nodes and convolutions read whole contiguous buffers.
      if (c == Cls::opaque || c == Cls::conv)
        for (int v : n.inputs)
          if (v >= 0) mat_[v] = 1;
      if (c == Cls::gather) mat_[n.inputs[0]] = 1;  // a gathered load reads a buffer
    }
  }

  // Materializes every (kMaxOpsPerKernel/2)-th value along inlined chains up front, so long
  // chains need no restarts of the pass (each restart rebuilds every kernel). Likewise for
  // fan-in: each inlined value tracks the distinct buffers its tree loads, and where a node
  // would exceed kMaxLoadsPerKernel its largest inlined operand is materialized here. Without
  // this a Sum of n inputs (a chain of n Adds) restarted the pass every ~11 inputs: O(n^2).
  void cut_long_chains() {
    std::vector<int> depth(g_.values.size(), 0);
    std::vector<std::vector<int>> loads(g_.values.size());  // sorted distinct loaded values of v's tree
    auto inlined = [&](int u) {
      const int p = producer(u);
      return p >= 0 && !mat_[u] && inlines(cls_[p]);
    };
    auto loads_of = [&](int u, std::vector<int>& out) {
      if (inlined(u)) return out.insert(out.end(), loads[u].begin(), loads[u].end()), void();
      const Value& val = g_.values[u];
      if (!(val.constant && val.constant->numel() == 1 && fusible_dtype(val.dtype))) out.push_back(u);  // else an immediate
    };
    std::vector<int> set;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (!inlines(cls_[i]) || n.outputs[0] < 0 || mat_[n.outputs[0]]) continue;
      // A view inlines only its data input; its shape/perm operands are not loads.
      const size_t operands = cls_[i] == Cls::view ? std::min<size_t>(1, n.inputs.size()) : n.inputs.size();
      for (;;) {
        set.clear();
        for (size_t k = 0; k < operands; ++k)
          if (n.inputs[k] >= 0) loads_of(n.inputs[k], set);
        std::sort(set.begin(), set.end());
        set.erase(std::unique(set.begin(), set.end()), set.end());
        if (static_cast<int>(set.size()) <= kMaxLoadsPerKernel) break;
        int widest = -1;
        for (size_t k = 0; k < operands; ++k) {
          const int v = n.inputs[k];
          if (v >= 0 && inlined(v) && !loads[v].empty() && (widest < 0 || loads[v].size() > loads[widest].size())) widest = v;
        }
        if (widest < 0) break;  // only materialized operands (a Mean of 20 inputs): the kernel stays as it is
        mat_[widest] = 1;
      }
      int d = 0;
      for (int v : n.inputs)
        if (v >= 0 && !mat_[v]) d = std::max(d, depth[v]);
      bool inlined_in = false;
      for (int v : n.inputs) inlined_in = inlined_in || (v >= 0 && inlined(v));
      if (cls_[i] == Cls::gather && !inlined_in) {
        // A lookup of stored indices counts as the one stored value it was before it fused
        // (depth 0, one load): counted through its table and indices, the estimates moved
        // BERT's cuts into its LayerNorms (each split in two; 24 us slower on the H200's Vulkan).
        // A kernel that ends up over the load limit is still cut by element_kernel. Lookups of
        // computed indices (nested Gathers) count on, so their chains are cut here too.
        depth[n.outputs[0]] = 0;
        loads[n.outputs[0]] = {n.outputs[0]};
      } else if (d + 1 >= kMaxOpsPerKernel / 2) {
        mat_[n.outputs[0]] = 1;
      } else {
        depth[n.outputs[0]] = d + 1;
        loads[n.outputs[0]] = set;
      }
    }
  }
};

}  // namespace

Classes classify(const Graph& g, const FusionOptions& o) { return Classifier(g, o).run(); }

}  // namespace fusor::fusion_detail
