// The fusion pass: forms loop, input and output fusions over the decomposed graph.
// Which nodes inline and which values are stored from the start: ir/fusion_classify.cpp.
//
// Method: every value is either materialized (gets a buffer) or inlined into each consumer's
// kernel as an expression tree whose leaves are loads of materialized buffers through strided
// views. Views (Transpose/Slice/Expand/Reshape/broadcast) only rewrite those leaf views. When
// something cannot be expressed (a reshape of a non-mergeable view, a tree over the size limit,
// a contraction operand that is not a plain view), the offending value is materialized and
// the pass restarts; each restart materializes one more value, so it terminates.
// After kernels exist: reductions loaded by a kernel over their own input space are absorbed
// into it (input fusion), and a contraction whose only reader is one element-wise kernel over
// its output space becomes that kernel's prologue (output fusion, ir/fusion_output.cpp). Small
// contractions read only by a row kernel then move into it (ir/fusion_rows.cpp).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <string>

#include "ir/fusion_classify.h"
#include "ir/fusion_rows.h"
#include "ir/kernel_rewrite.h"
#include "ir/kernel_spec.h"
#include "ir/passes.h"
#include "ir/slice_view.h"
#include "ir/view.h"

namespace fusor {
namespace {

using fusion_detail::Cls;
using fusion_detail::fusible_dtype;
using fusion_detail::inlines;
using fusion_detail::ReduceInfo;

struct TNode {
  ExprKind kind = ExprKind::constant;
  DType dtype = DType::f32;
  DType math = DType::f32;  // op: math dtype
  int value = -1;  // load: graph value id
  StridedView view;
  double c = 0;
  int64_t ic = 0;  // integral constant
  const OpDef* op = nullptr;
  BoundScalar bound;
  std::vector<int> args;      // op: operands; gathered load: {index}
  int64_t gstride = 0, gdim = 0;  // gathered load (Load::gather_stride / gather_dim)
  std::string gnode;          // gathered load: the Gather node's label
};
struct Tree {
  std::vector<TNode> n;
  int root = -1;
  std::set<int> nodes;  // graph nodes inlined
  bool looks_up() const {  // holds a gathered load
    for (const TNode& x : n)
      if (x.kind == ExprKind::load && !x.args.empty()) return true;
    return false;
  }
};

struct NeedMaterialize {
  int value;
};
struct NeedMaterializeAll {  // build_kernels: independent failures of one sweep
  std::vector<int> values;
};

class Fuser {
 public:
  Fuser(const Graph& g, const FusionOptions& o) : g_(g), o_(o) {}

  Plan run() {
    fusion_detail::Classes c = fusion_detail::classify(g_, o_);
    cls_ = std::move(c.cls), red_ = std::move(c.red), consumers_ = std::move(c.consumers), mat_ = std::move(c.mat);
    for (int pass = 0;; ++pass) {
      for (int attempt = 0;; ++attempt) {
        try {
          ++sweeps_;
          decide_recompute();
          build_kernels();
          break;
        } catch (const NeedMaterialize& m) {
          materialize(m.value, attempt);
        } catch (const NeedMaterializeAll& m) {
          for (int v : m.values) materialize(v, attempt);
        }
      }
      if (!o_.fuse) break;
      absorb_reductions();
      fusion_detail::fuse_outputs(kernels_, buffers_);
      if (pass > 0 || !store_narrow_epilogues()) break;
    }
    const auto drop_dead_kernels = [&] { fusion_detail::drop_dead_kernels(kernels_, kernel_value_, buffers_); };
    drop_dead_kernels();
    if (o_.fuse && fusion_detail::merge_lookups_into_first_reader(kernels_, buffers_)) drop_dead_kernels();
    if (o_.fuse && fusion_detail::inline_small_contractions(kernels_, buffers_)) drop_dead_kernels();
    if (o_.fuse && fusion_detail::fuse_row_products(kernels_, buffers_, o_)) drop_dead_kernels();
    return finish();
  }

 private:
  const Graph& g_;
  FusionOptions o_;
  std::vector<Cls> cls_;
  std::vector<ReduceInfo> red_;
  std::vector<char> mat_;
  std::vector<std::vector<int>> consumers_;
  std::vector<KernelSpec> kernels_;
  std::vector<int> kernel_value_;  // value each kernel materializes (-1 for opaque multi-output)
  std::map<int, int> buffer_of_;   // graph value -> buffer id
  std::vector<Buffer> buffers_;

  int producer(int v) const { return g_.values[v].producer; }
  bool is_source(int v) const { return producer(v) < 0; }  // graph input or constant

  // Consumers through non-materialized views (a view feeding two kernels inlines its producer twice).
  int effective_consumers(int v) const {
    int count = 0;
    for (int c : consumers_[v]) {
      const Node& n = g_.nodes[c];
      if (cls_[c] == Cls::view && !mat_[n.outputs[0]]) count += std::max(1, effective_consumers(n.outputs[0]));
      else ++count;
    }
    return count;
  }

  void decide_recompute() {
    if (!o_.fuse) return;
    // First the cost rule, with lookups inlined as they come (their trees count as the stored
    // Gather output they replace, so these decisions are the ones made before lookups fused);
    // then the lookup rule below.
    for (int pass = 0; pass < 2; ++pass)
      for (const Node& n : g_.nodes) {
        int v = n.outputs.empty() ? -1 : n.outputs[0];
        if (v < 0 || mat_[v] || (cls_[producer(v)] != Cls::elementwise && cls_[producer(v)] != Cls::gather)) continue;
        if (effective_consumers(v) <= 1) continue;
        Tree t = build_inner(v);
        int ops = 0;
        for (auto& x : t.n) ops += x.kind == ExprKind::op;
        // A lookup read by several kernels is stored once (by its first reader, fusion_rows.cpp
        // merge_lookups_into_first_reader), not looked up again by each: every lookup is a
        // dependent load (index, then row), which cost GPT-2's residual kernels more on the H200
        // than the launch it saved (docs/benchmarks.md, twenty-sixth session).
        if (pass == 0 ? ops > kRecomputeMaxOps && cls_[producer(v)] == Cls::elementwise : t.looks_up()) mat_[v] = 1;
      }
  }

  // ---- expression trees ---------------------------------------------------------------
  static int append(Tree& dst, const Tree& src) {
    int base = static_cast<int>(dst.n.size());
    for (TNode x : src.n) {
      for (auto& a : x.args)
        if (a >= 0) a += base;
      dst.n.push_back(std::move(x));
    }
    dst.nodes.insert(src.nodes.begin(), src.nodes.end());
    return src.root + base;
  }

  template <class F> static void map_views(Tree& t, F f) {
    for (auto& x : t.n)
      if (x.kind == ExprKind::load) x.view = f(x.view);
  }

  Tree leaf(int v) const {
    Tree t;
    TNode x;
    const Value& val = g_.values[v];
    x.dtype = val.dtype;
    if (val.constant && val.constant->numel() == 1 && fusible_dtype(val.dtype)) {
      x.kind = ExprKind::constant;
      if (dtype_is_integral(val.dtype)) x.ic = val.constant->get_int(0);
      else x.c = val.constant->get(0);
      x.view = StridedView::contiguous(val.shape);  // shape kept for broadcasting
    } else {
      x.kind = ExprKind::load;
      x.value = v;
      x.view = StridedView::contiguous(val.shape);
    }
    t.n.push_back(x);
    t.root = 0;
    return t;
  }

  Tree build(int v) { return mat_[v] ? leaf(v) : build_inner(v); }

  void materialize(int v, int attempt) {
    if (mat_[v] || attempt > static_cast<int>(g_.values.size()))
      throw Error("fusion", "internal: cannot materialize value '" + g_.values[v].name + "'");
    mat_[v] = 1;
  }

  // Graph nodes whose trees the current kernel's build visited (build_kernels' independence test).
  std::vector<int> visited_;
  int sweeps_ = 0;  // Plan::fusion_sweeps

  // Inlining depth of the current build; a chain deeper than this is cut (materialized) so
  // recursion stays bounded however long the model's chains are.
  int depth_ = 0;
  static constexpr int kMaxInlineDepth = 4 * kMaxOpsPerKernel;

  // Tree t of value v, read over `read`: where that is fewer positions than v has (a Slice
  // above a lookup, a broadcast into an empty result), the indices at the others would go
  // unchecked. ONNX makes every out-of-range index the Gather's error, so a v that looks rows
  // up is stored whole instead (its own kernel reads every index).
  void every_index_read(const Tree& t, int v, const Shape& read) const {
    if (shape_numel(read) < shape_numel(g_.values[v].shape) && t.looks_up()) throw NeedMaterialize{v};
  }

  // Tree computing v over v's shape, inlining non-materialized producers.
  Tree build_inner(int v) {
    int p = producer(v);
    if (p < 0) return leaf(v);
    visited_.push_back(p);
    if (depth_ > kMaxInlineDepth) throw NeedMaterialize{v};
    struct DepthGuard {
      int& d;
      explicit DepthGuard(int& x) : d(x) { ++d; }
      ~DepthGuard() { --d; }
    } guard(depth_);
    const Node& n = g_.nodes[p];
    const Shape& shape = g_.values[v].shape;
    Tree t;
    if (cls_[p] == Cls::elementwise) {
      TNode op;
      op.kind = ExprKind::op;
      op.op = lookup_op(n.op_type);
      op.dtype = g_.values[v].dtype;
      std::vector<DType> in_types;
      for (int x : n.inputs) in_types.push_back(x >= 0 ? g_.values[x].dtype : DType::undefined);
      op.math = scalar_math_dtype(*op.op->scalar, in_types);
      op.bound = bind_scalar(*op.op->scalar, n, dtype_is_int(op.math));
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        // Inputs the expression never reads (CastLike's dtype donor) are not operands.
        if (n.inputs[i] < 0 || op.bound.expr.find("{" + std::to_string(i) + "}") == std::string::npos) {
          op.args.push_back(-1);
          continue;
        }
        Tree a = build(n.inputs[i]);
        every_index_read(a, n.inputs[i], shape);  // a broadcast into an empty result reads none
        map_views(a, [&](const StridedView& s) { return view_broadcast(s, shape); });
        op.args.push_back(append(t, a));
      }
      t.n.push_back(op);
      t.root = static_cast<int>(t.n.size()) - 1;
      t.nodes.insert(p);
      if (static_cast<int>(t.n.size()) > 4 * kMaxOpsPerKernel) throw NeedMaterialize{cut_point(t, v)};
      return t;
    }
    if (cls_[p] == Cls::view) {
      int in = n.inputs[0];
      t = build(in);
      t.nodes.insert(p);
      every_index_read(t, in, shape);  // a Slice reads fewer positions than its input has
      bool failed = false;
      map_views(t, [&](const StridedView& s) {
        auto r = apply_view_node(g_, n, s, shape);
        if (!r) failed = true;
        return r ? *r : s;
      });
      if (failed) throw NeedMaterialize{in};
      return t;
    }
    if (cls_[p] == Cls::gather) return gathered(p, shape);
    return leaf(v);  // materialized kinds never reach here
  }

  // Gather(data, indices) over its output shape: a gathered load of the (materialized) data
  // whose index is the indices' tree, both over the output's positions: out[pre, j, post] =
  // data[pre, indices[j], post] (ONNX Gather), so views applied above move both alike.
  Tree gathered(int p, const Shape& shape) {
    visited_.push_back(p);
    const Node& n = g_.nodes[p];
    const Value& data = g_.values[n.inputs[0]];
    const int64_t r = static_cast<int64_t>(data.shape.size());
    const int64_t axis = normalize_axis(n.attr_i("axis", 0), r, n.label());
    const size_t ri = g_.values[n.inputs[1]].shape.size();
    Tree t = build(n.inputs[1]);
    map_views(t, [&](const StridedView& s) {
      StridedView o;
      o.shape = shape;
      o.offset = s.offset;
      o.strides.assign(static_cast<size_t>(axis), 0);
      o.strides.insert(o.strides.end(), s.strides.begin(), s.strides.end());
      o.strides.resize(shape.size(), 0);
      return o;
    });
    const StridedView d = StridedView::contiguous(data.shape);
    TNode x;
    x.kind = ExprKind::load;
    x.dtype = data.dtype;
    x.value = n.inputs[0];
    x.view.shape = shape;
    x.view.strides.assign(d.strides.begin(), d.strides.begin() + axis);
    x.view.strides.insert(x.view.strides.end(), ri, 0);
    x.view.strides.insert(x.view.strides.end(), d.strides.begin() + axis + 1, d.strides.end());
    x.gstride = d.strides[axis];
    x.gdim = data.shape[axis];
    x.gnode = n.label();
    x.args = {t.root};
    t.n.push_back(std::move(x));
    t.root = static_cast<int>(t.n.size()) - 1;
    t.nodes.insert(p);
    return t;
  }

  // The inlined value whose own tree is largest while still within the op limit: cutting
  // there splits an over-long chain into kernels of about kMaxOpsPerKernel ops each.
  int cut_point(const Tree& t, int root) {
    int best = -1;
    size_t best_size = 0;
    for (int node : t.nodes) {
      int v = g_.nodes[node].outputs[0];
      if (v == root || mat_[v] || cls_[node] != Cls::elementwise) continue;
      size_t size;
      try {
        size = build_inner(v).n.size();
      } catch (const NeedMaterialize&) {
        continue;
      }
      if (size <= static_cast<size_t>(kMaxOpsPerKernel) && size > best_size) best = v, best_size = size;
    }
    return best >= 0 ? best : largest_input(g_.nodes[producer(root)]);
  }

  int largest_input(const Node& n) const {
    int best = -1;
    int64_t best_n = -1;
    for (int v : n.inputs)
      if (v >= 0 && !mat_[v] && shape_numel(g_.values[v].shape) > best_n) best = v, best_n = shape_numel(g_.values[v].shape);
    return best >= 0 ? best : n.outputs[0];
  }

  // ---- kernels -------------------------------------------------------------------------
  // Converts a tree into the kernel's hash-consed DAG; returns the root's expr id.
  int emit(KernelSpec& k, const Tree& t, std::map<std::string, int>& memo, int i) {
    const TNode& x = t.n[i];
    ExprNode e;
    e.kind = x.kind;
    e.dtype = x.dtype;
    e.math = x.math;
    std::string key = std::to_string(static_cast<int>(x.dtype)) + ":";  // equal text in two dtypes is two values
    if (x.kind == ExprKind::constant) {
      e.value = x.c;
      e.ivalue = x.ic;
      uint64_t bits;
      std::memcpy(&bits, &x.c, 8);
      key += "c" + std::to_string(bits) + "|" + std::to_string(x.ic);
    } else if (x.kind == ExprKind::load && !x.args.empty()) {
      // A gathered load: its own Load entry per index node (kernel_spec.h).
      const int ix = emit(k, t, memo, x.args[0]);
      const int b = buffer_for(x.value);
      key += "g" + std::to_string(b) + "|" + std::to_string(x.view.offset) + "|" + std::to_string(ix);
      for (int64_t st : x.view.strides) key += "," + std::to_string(st);
      if (auto it = memo.find(key); it != memo.end()) return it->second;
      k.loads.push_back({b, x.view, x.gstride, x.gdim, x.gnode});
      e.load = static_cast<int>(k.loads.size()) - 1;
      e.args = {ix};
    } else if (x.kind == ExprKind::load) {
      int b = buffer_for(x.value);
      int li = -1;
      for (size_t j = 0; j < k.loads.size(); ++j)
        if (k.loads[j].buffer == b && !k.loads[j].gathered() && k.loads[j].view.strides == x.view.strides &&
            k.loads[j].view.offset == x.view.offset && k.loads[j].view.shape == x.view.shape)
          li = static_cast<int>(j);
      if (li < 0) {
        k.loads.push_back({b, x.view, 0, 0, {}});
        li = static_cast<int>(k.loads.size()) - 1;
      }
      e.load = li;
      key += "l" + std::to_string(li);
    } else {
      e.op = x.op;
      e.bound = x.bound;
      key += "o" + x.op->name + "|" + std::to_string(static_cast<int>(x.math)) + "|" + e.bound.expr;
      for (double p : e.bound.params) key += "|" + std::to_string(p);
      for (int a : x.args) {
        int id = a >= 0 ? emit(k, t, memo, a) : -1;
        e.args.push_back(id);
        key += "," + std::to_string(id);
      }
    }
    auto it = memo.find(key);
    if (it != memo.end()) return it->second;
    k.expr.push_back(std::move(e));
    int id = static_cast<int>(k.expr.size()) - 1;
    memo[key] = id;
    return id;
  }

  int buffer_for(int v) {
    auto it = buffer_of_.find(v);
    if (it != buffer_of_.end()) return it->second;
    const Value& val = g_.values[v];
    if (val.dtype == DType::string) throw Unsupported("fusion", "value '" + val.name + "': string tensors are not supported");
    Buffer b;
    b.name = val.name;
    b.dtype = val.dtype;
    b.shape = val.shape;
    b.value = v;
    b.role = val.constant ? Buffer::Role::constant : Buffer::Role::intermediate;
    if (std::find(g_.inputs.begin(), g_.inputs.end(), v) != g_.inputs.end()) b.role = Buffer::Role::input;
    if (std::find(g_.outputs.begin(), g_.outputs.end(), v) != g_.outputs.end() && !val.constant &&
        b.role != Buffer::Role::input)
      b.role = Buffer::Role::output;
    b.check = std::find(g_.checks.begin(), g_.checks.end(), v) != g_.checks.end();  // few: lookups nothing reads
    buffers_.push_back(b);
    buffer_of_[v] = static_cast<int>(buffers_.size()) - 1;
    return buffer_of_[v];
  }

  void note_nodes(KernelSpec& k, const std::set<int>& nodes) {
    for (int i : nodes) {
      if (std::find(k.fused_nodes.begin(), k.fused_nodes.end(), g_.nodes[i].name) != k.fused_nodes.end()) continue;
      k.fused_nodes.push_back(g_.nodes[i].name);
      k.fused_ops.push_back(g_.nodes[i].op_type);
    }
  }

  void add_kernel(KernelSpec k, int value) {
    k.name = "k" + std::to_string(kernels_.size()) + "_" + fusion_kind_name(k.kind);
    for (size_t i = 0; i < k.fused_ops.size() && i < 3; ++i) k.name += "_" + k.fused_ops[i];
    kernels_.push_back(std::move(k));
    kernel_value_.push_back(value);
  }

  void element_kernel(int v, const Tree& t, const StridedView& store, const Shape& space) {
    KernelSpec k;
    k.kind = FusionKind::loop;
    k.space = space;
    std::map<std::string, int> memo;
    int root = emit(k, t, memo, t.root);
    k.outputs.push_back({buffer_for(v), store, root, false});
    note_nodes(k, t.nodes);
    // Lookups of one table are one binding however many of them there are (nested Gathers).
    int loads = 0;
    for (size_t j = 0; j < k.loads.size(); ++j) {
      bool again = false;
      for (size_t q = 0; q < j && k.loads[j].gathered() && !again; ++q) again = k.loads[q].buffer == k.loads[j].buffer;
      loads += !again;
    }
    if (static_cast<int>(k.expr.size()) > kMaxOpsPerKernel || loads > kMaxLoadsPerKernel) {
      // Over a limit: materialize an inlined value and retry. When everything the root reads is
      // already materialized (e.g. a Mean of 20 inputs) the kernel stays as it is.
      int cut = cut_point(t, v);
      if (cut >= 0 && !mat_[cut]) throw NeedMaterialize{cut};
    }
    add_kernel(std::move(k), v);
  }

  // The tree of u over `space` (u's shape), stored through `store`. Where u is a Reshape /
  // Flatten whose input's tree has no strided view of the new shape (dims merged across a
  // permutation: a channel shuffle, attention heads merged after a Transpose), the kernel runs
  // over the reshape's input shape instead and stores through `store` reshaped to it (a
  // store view only ever splits or merges dims of the buffer's own layout), so the permuted
  // value needs no kernel of its own. `inner`: u is the materialized value itself (build_inner).
  Tree tree_or_unreshaped(int u, StridedView& store, Shape& space, bool inner = false) {
    const int p = producer(u);
    const bool reshape = p >= 0 && cls_[p] == Cls::view &&
                         (g_.nodes[p].op_type == "Reshape" || g_.nodes[p].op_type == "Flatten");
    try {
      return inner ? build_inner(u) : build(u);
    } catch (const NeedMaterialize& m) {
      const int in = reshape ? g_.nodes[p].inputs[0] : -1;
      if (m.value != in || mat_[in]) throw;
      const Shape& ins = g_.values[in].shape;
      std::optional<StridedView> st = view_reshape(store, ins);
      if (!st || shape_numel(ins) != shape_numel(space)) throw;
      Tree t = build(in);  // its own failures propagate as usual
      t.nodes.insert(p);
      store = *st, space = ins;
      return t;
    }
  }

  // The materialized value and view a contraction operand reads (a single load through views),
  // or NeedMaterialize. With `pre`, an operand that is one
  // element-wise op over a single load and scalar constants becomes that prologue (its graph
  // nodes added to `nodes`) instead of a value to materialize.
  std::pair<int, StridedView> operand_value_view(int v, std::optional<OperandPrologue>* pre = nullptr,
                                                 std::set<int>* nodes = nullptr) {
    if (mat_[v]) return {v, StridedView::contiguous(g_.values[v].shape)};
    Tree t = build(v);
    if (pre && !(t.n.size() == 1 && t.n[0].kind == ExprKind::load))
      if (auto p = prologue_of(t)) {
        *pre = std::move(p->first);
        nodes->insert(t.nodes.begin(), t.nodes.end());
        return p->second;
      }
    if (t.n.size() != 1 || t.n[0].kind != ExprKind::load) {
      // Materialize below any views, so the views stay free and the kernel that computes the
      // value keeps its natural space (e.g. LayerNorm output before a Reshape into a GEMM).
      int u = v;
      while (!mat_[u] && producer(u) >= 0 && cls_[producer(u)] == Cls::view) u = g_.nodes[producer(u)].inputs[0];
      throw NeedMaterialize{mat_[u] ? v : u};
    }
    return {t.n[0].value, t.n[0].view};
  }

  // t as a contraction operand prologue (MatMulDesc::a_pre / b_pre): its root is one float
  // element-wise op of one dtype (in and math; fp16 / bf16 math runs in float32) whose operands
  // are one load of a value of that dtype (not a fused weight dequantization) and scalar
  // constants of that dtype.
  // Returns the prologue and the loaded value and view.
  std::optional<std::pair<OperandPrologue, std::pair<int, StridedView>>> prologue_of(const Tree& t) const {
    // fp16 / bf16 only where the backend asks (FusionOptions::f16/bf16_operand_prologues): on the
    // H200 a prologued half operand cost fusor-cuda's cuBLASLt path 4-5 us on GPT-2 2L while
    // Vulkan gained (docs/benchmarks.md, fifteenth session).
    const TNode& r = t.n[t.root];
    const bool half = r.math == r.dtype && ((r.dtype == DType::f16 && o_.f16_operand_prologues) ||
                                            (r.dtype == DType::bf16 && o_.bf16_operand_prologues));
    if (r.kind != ExprKind::op || !r.op || !r.op->scalar || !((r.math == DType::f32 && r.dtype == DType::f32) || half)) return std::nullopt;
    OperandPrologue p;
    p.op.kind = ExprKind::op;
    p.op.dtype = r.dtype, p.op.math = r.math, p.op.op = r.op, p.op.bound = r.bound;
    int value = -1;
    StridedView view;
    size_t used = 1;
    for (int a : r.args) {
      if (a < 0) {
        p.op.args.push_back(-1);
        continue;
      }
      const TNode& x = t.n[a];
      ExprNode in;
      in.dtype = x.dtype;
      if (x.kind == ExprKind::load) {
        if (!x.args.empty()) return std::nullopt;  // a gathered load: not one view of a buffer
        const int xp = producer(x.value);
        // The operand keeps its buffer's dtype (backends choose GEMM paths by it): no Cast.
        if (value >= 0 || x.dtype != r.dtype || (xp >= 0 && cls_[xp] == Cls::dequant)) return std::nullopt;
        // A contraction's output read only here: output fusion makes the op that contraction's
        // epilogue (no kernel either way), keeping this product's library GEMM and vector loads.
        // Read through views that fan out (a fused QKV projection's Reshape before its Split),
        // it is read more than once, and the prologue saves the slice's copy kernel.
        if (xp >= 0 && (cls_[xp] == Cls::matmul || cls_[xp] == Cls::conv) && effective_consumers(x.value) == 1) return std::nullopt;
        in.kind = ExprKind::load;
        value = x.value, view = x.view;
      } else if (x.kind == ExprKind::constant) {
        // The operand's dtype (kernel_spec.h): a constant of another dtype (Pow's int64 exponent)
        // would need types the kernel header does not declare.
        if (x.dtype != r.dtype) return std::nullopt;
        in.kind = ExprKind::constant;
        in.value = x.c, in.ivalue = x.ic;
      } else {
        return std::nullopt;
      }
      ++used;
      p.op.args.push_back(static_cast<int>(p.inputs.size()));
      p.inputs.push_back(in);
    }
    if (value < 0 || used != t.n.size()) return std::nullopt;  // one op over leaves only
    return std::make_pair(std::move(p), std::make_pair(value, view));
  }

  // A matmul / conv kernel of node p storing its accumulator as value v (epilogues come later).
  void add_contraction(KernelSpec k, int v, size_t p, const std::set<int>& prologue_nodes = {}) {
    ExprNode acc;
    acc.kind = ExprKind::acc;
    acc.dtype = g_.values[v].dtype;
    k.expr.push_back(acc);
    k.outputs.push_back({buffer_for(v), StridedView::contiguous(g_.values[v].shape), 0, false});
    note_nodes(k, {static_cast<int>(p)});
    note_nodes(k, prologue_nodes);
    add_kernel(std::move(k), v);
  }

  // The kernels of graph node p (none for a value that is inlined into its readers).
  void node_kernels(size_t p) {
    const Node& n = g_.nodes[p];
    Cls c = cls_[p];
    if (c == Cls::dequant) return;  // read by its matmuls (dequant_b), no kernel of its own
    if (c == Cls::opaque) {
      KernelSpec k;
      k.kind = FusionKind::opaque;
      k.node = static_cast<int>(p);
      for (int v : n.inputs) k.opaque_inputs.push_back(v >= 0 ? buffer_for(v) : -1);
      for (int v : n.outputs) k.opaque_outputs.push_back(v >= 0 ? buffer_for(v) : -1);
      note_nodes(k, {static_cast<int>(p)});
      add_kernel(std::move(k), n.outputs.empty() ? -1 : n.outputs[0]);
      return;
    }
    int v = n.outputs[0];
    const Shape& shape = g_.values[v].shape;
    if (c == Cls::concat) {
      int64_t axis = normalize_axis(n.attr_i("axis", 0), static_cast<int64_t>(shape.size()), n.label());
      int64_t start = 0;
      for (int in : n.inputs) {
        if (in < 0) continue;
        const Shape& is = g_.values[in].shape;
        if (shape_numel(is) > 0) {
          StridedView store = view_slice(StridedView::contiguous(shape), static_cast<int>(axis), start, 1, is[axis]);
          Shape space = is;
          Tree t = tree_or_unreshaped(in, store, space);
          t.nodes.insert(static_cast<int>(p));
          element_kernel(v, t, store, space);
        }
        start += is[axis];
      }
      if (shape_numel(shape) == 0) buffer_for(v);
      return;
    }
    if (!mat_[v]) return;
    if (c == Cls::view) {
      StridedView store = StridedView::contiguous(shape);
      Shape space = shape;
      Tree t = tree_or_unreshaped(v, store, space, true);
      element_kernel(v, t, store, space);
    } else if (c == Cls::elementwise || c == Cls::gather) {
      element_kernel(v, build_inner(v), StridedView::contiguous(shape), shape);
    } else if (c == Cls::reduce) {
      const ReduceInfo& r = red_[p];
      int x = n.inputs[0];
      KernelSpec k;
      k.kind = FusionKind::input;
      k.space = g_.values[x].shape;
      k.reduce_axes = r.axes;
      Tree t = build(x);
      std::map<std::string, int> memo;
      int body = emit(k, t, memo, t.root);
      k.reductions.push_back({r.combiner, body, r.mean, v, g_.values[v].dtype});
      ExprNode ref;
      ref.kind = ExprKind::red_ref;
      ref.dtype = g_.values[v].dtype;
      ref.red = 0;
      k.expr.push_back(ref);
      k.outputs.push_back({buffer_for(v), row_view(k.space, r.axes), static_cast<int>(k.expr.size()) - 1, true});
      note_nodes(k, t.nodes);
      note_nodes(k, {static_cast<int>(p)});
      add_kernel(std::move(k), v);
    } else if (c == Cls::matmul) {
      KernelSpec k;
      k.kind = FusionKind::output;
      k.space = shape;
      size_t r = shape.size();
      MatMulDesc d;
      d.m = shape[r - 2];
      d.n = shape[r - 1];
      // Small contractions take an element-wise operand prologue (kMaxPrologueMacs).
      const Shape& ash = g_.values[n.inputs[0]].shape;
      const bool small = shape_numel(shape) <= kMaxPrologueMacs / std::max<int64_t>(1, ash.empty() ? 1 : ash.back());  // no overflow
      std::set<int> pre_nodes;
      auto [au, av] = operand_value_view(n.inputs[0], small ? &d.a_pre : nullptr, &pre_nodes);
      const int ab = buffer_for(au);
      auto [bu, bv] = operand_value_view(n.inputs[1], small ? &d.b_pre : nullptr, &pre_nodes);
      int bb = -1;
      const int bp = producer(bu);
      if (bp >= 0 && cls_[bp] == Cls::dequant) {
        // B reads the quantized weight itself (1 byte per element) through the same view.
        const Node& dq = g_.nodes[bp];
        bb = buffer_for(dq.inputs[0]);
        d.dequant_b = weight_dequant_desc(g_, dq, buffer_for(dq.inputs[1]), dq.has_input(2) ? buffer_for(dq.inputs[2]) : -1);
        note_nodes(k, {bp});
      } else {
        bb = buffer_for(bu);
      }
      d.k = av.shape.back();
      Shape as(shape.begin(), shape.end() - 2), bs = as;
      as.push_back(d.m), as.push_back(d.k);
      bs.push_back(d.k), bs.push_back(d.n);
      d.a_buffer = ab, d.b_buffer = bb;
      d.a = view_broadcast(av, as);
      d.b = view_broadcast(bv, bs);
      k.matmul = d;
      add_contraction(std::move(k), v, p, pre_nodes);
    } else if (c == Cls::conv) {
      KernelSpec k;
      k.kind = FusionKind::output;
      k.space = shape;
      k.conv = conv_desc(n, shape);
      add_contraction(std::move(k), v, p);
    }
    }

  void build_kernels() {
    kernels_.clear();
    kernel_value_.clear();
    buffer_of_.clear();
    buffers_.clear();
    for (int v : g_.inputs) buffer_for(v);
    // Each node's kernels; a kernel that needs a value materialized (NeedMaterialize) does not
    // end the sweep: failures whose trees share no graph node with an earlier failure's are
    // independent (marking one value changes only the trees it is inlined into), so they are
    // all marked before the one rebuild. One rebuild per failure was quadratic in model size
    // (a 48-layer GPT-2's fusion pass: 3.5 s).
    std::vector<char> claimed(g_.nodes.size(), 0);
    std::vector<char> seen(g_.nodes.size(), 0);  // the cone walk's
    std::vector<int> needed, seen_list;
    for (size_t p = 0; p < g_.nodes.size(); ++p) {
      visited_.clear();
      try {
        node_kernels(p);
      } catch (const NeedMaterialize& m) {
        // The whole inlined input cone of the node, not only what the build reached before it
        // threw (a matmul failing on A never built B's tree).
        visited_.push_back(static_cast<int>(p));
        if (producer(m.value) >= 0) visited_.push_back(producer(m.value));
        for (std::vector<int> todo(g_.nodes[p].inputs.begin(), g_.nodes[p].inputs.end()); !todo.empty();) {
          const int u = todo.back();
          todo.pop_back();
          const int q = u >= 0 && !mat_[u] ? producer(u) : -1;
          if (q < 0 || !inlines(cls_[q]) || seen[q]) continue;
          seen[q] = 1;
          seen_list.push_back(q);
          visited_.push_back(q);
          todo.insert(todo.end(), g_.nodes[q].inputs.begin(), g_.nodes[q].inputs.end());
        }
        for (int q : seen_list) seen[q] = 0;
        seen_list.clear();
        bool independent = true;
        for (int q : visited_) independent = independent && !claimed[q];
        if (!independent) continue;  // decided again after the rebuild
        for (int q : visited_) claimed[q] = 1;
        needed.push_back(m.value);
      }
    }
    if (!needed.empty()) throw NeedMaterializeAll{needed};
    // Graph outputs that are inputs or constants need no kernel but still need a buffer.
    for (int v : g_.outputs) buffer_for(v);
    // A fused weight dequantization has no kernel: nothing may read its fp32 value.
    for (auto& [v, b] : buffer_of_)
      if (producer(v) >= 0 && cls_[producer(v)] == Cls::dequant)
        throw Error("fusion", "internal: " + g_.nodes[producer(v)].label() + " is fused into its matmuls but its output is read");
  }

  ConvDesc conv_desc(const Node& n, const Shape& out) {
    ConvDesc d;
    const Value& x = g_.values[n.inputs[0]];
    const Value& w = g_.values[n.inputs[1]];
    d.x_buffer = buffer_for(n.inputs[0]);
    d.w_buffer = buffer_for(n.inputs[1]);
    d.n = x.shape[0], d.c = x.shape[1], d.h = x.shape[2], d.w = x.shape[3];
    d.k = w.shape[0], d.r = w.shape[2], d.s = w.shape[3];
    d.oh = out[2], d.ow = out[3];
    auto strides = n.attr_ints("strides", {1, 1}), dil = n.attr_ints("dilations", {1, 1});
    auto pads = n.attr_ints("pads", {0, 0, 0, 0});
    d.stride_h = strides[0], d.stride_w = strides[1], d.dil_h = dil[0], d.dil_w = dil[1];
    d.groups = n.attr_i("group", 1);
    std::string ap = n.attr_s("auto_pad", "NOTSET");
    if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      auto begin = [&](int64_t in, int64_t o, int64_t st, int64_t k, int64_t dl) {
        int64_t total = std::max<int64_t>(0, (o - 1) * st + (k - 1) * dl + 1 - in);
        return ap == "SAME_UPPER" ? total / 2 : total - total / 2;
      };
      d.pad_h = begin(d.h, d.oh, d.stride_h, d.r, d.dil_h);
      d.pad_w = begin(d.w, d.ow, d.stride_w, d.s, d.dil_w);
    } else if (ap != "VALID") {
      d.pad_h = pads[0], d.pad_w = pads[1];
    }
    return d;
  }

  // ---- input fusion: absorb reductions loaded over their own input space ----------------
  int value_of_buffer(int b) const { return buffers_[b].value; }

  // Index of the first non-opaque kernel that materializes value v (or -1), from kernel_of_
  // (absorb_reductions fills it: the kernel list keeps its order and values meanwhile).
  std::unordered_map<int, int> kernel_of_;
  int kernel_of(int v) const {
    auto it = kernel_of_.find(v);
    return it == kernel_of_.end() ? -1 : it->second;
  }

  bool is_graph_output(int v) const { return std::find(g_.outputs.begin(), g_.outputs.end(), v) != g_.outputs.end(); }

  // Tries to absorb every load in k that reads a reduction computed over k's space.
  void absorb_into(KernelSpec& k) {
    if (k.matmul || k.conv || k.kind == FusionKind::opaque) return;
    bool changed = true;
    std::set<int> absorbed;  // each reduction value once: termination does not rest on absorb() removing every read
    while (changed) {
      changed = false;
      for (size_t li = 0; li < k.loads.size() && !changed; ++li) {
        if (k.loads[li].gathered()) continue;  // its rows are picked at run time
        int v = value_of_buffer(k.loads[li].buffer);
        int p = v >= 0 ? producer(v) : -1;
        if (p < 0 || cls_[p] != Cls::reduce || is_graph_output(v) || absorbed.count(v)) continue;
        const ReduceInfo& r = red_[p];
        const Value& x = g_.values[g_.nodes[p].inputs[0]];
        if (x.shape != k.space) continue;
        if (!k.reduce_axes.empty() && k.reduce_axes != r.axes) continue;
        if (k.loads[li].view.strides != row_view(k.space, r.axes).strides || k.loads[li].view.offset != 0) continue;
        int src = kernel_of(v);
        if (src < 0) continue;
        const KernelSpec& rk = kernels_[src];
        if (rk.reduce_axes != r.axes || rk.space != k.space) continue;
        // A GPU runs one workgroup per row: few, long rows would serialize the consumer's
        // element-wise work, so such reductions keep their own kernel.
        if (rk.rows() < kMinRowsToAbsorb && rk.row_length() > kMaxRowToAbsorbFew) continue;
        // The merged kernel must stay within the descriptor budget.
        size_t extra = 0;
        for (auto& l : rk.loads) {
          bool have = false;
          for (auto& m : k.loads) have = have || m.buffer == l.buffer;
          extra += !have;
        }
        if (k.input_buffers().size() + extra > static_cast<size_t>(kMaxLoadsPerKernel)) continue;
        absorbed.insert(v);
        absorb_reduction(k, rk, static_cast<int>(li));
        changed = true;
      }
    }
  }

  void absorb_reductions() {
    kernel_of_.clear();
    for (size_t i = 0; i < kernels_.size(); ++i)
      if (kernels_[i].kind != FusionKind::opaque) kernel_of_.emplace(kernel_value_[i], static_cast<int>(i));
    for (auto& k : kernels_) absorb_into(k);
  }

  // A contraction with an fp32 acc whose readers output fusion could not take (a reduction,
  // several kernels) stores the wide sum; the narrow value its epilogue chain ends in (a Gemm's
  // or Conv's Cast to fp16/bf16) is marked stored instead, so the rebuilt plan's contraction
  // kernel writes that and its readers read it. True when some value was marked.
  bool store_narrow_epilogues() {
    bool marked = false;
    for (const KernelSpec& k : kernels_) {
      if (!(k.matmul || k.conv) || k.outputs.size() != 1 || k.expr.size() != 1 || k.acc_dtype() != DType::f32) continue;
      const int u = value_of_buffer(k.outputs[0].buffer);
      if (u < 0 || buffers_[k.outputs[0].buffer].role != Buffer::Role::intermediate) continue;
      for (int w = u; consumers_[w].size() == 1 && cls_[consumers_[w][0]] == Cls::elementwise;) {
        w = g_.nodes[consumers_[w][0]].outputs[0];
        if (mat_[w] || g_.values[w].shape != g_.values[u].shape) break;
        if (dtype_size(g_.values[w].dtype) < dtype_size(g_.values[u].dtype)) {
          mat_[w] = 1;
          marked = true;
          break;
        }
      }
    }
    return marked;
  }

  Plan finish() {
    Plan p;
    p.fusion_sweeps = sweeps_;
    p.graph = g_;
    // Renumber buffers to those still referenced.
    std::set<int> used;
    for (auto& k : kernels_) {
      for (int b : k.input_buffers()) used.insert(b);
      for (int b : k.output_buffers()) used.insert(b);
    }
    for (int v : g_.inputs) used.insert(buffer_for(v));
    for (int v : g_.outputs) used.insert(buffer_for(v));
    std::vector<int> remap(buffers_.size(), -1);
    for (int b : used) {
      remap[b] = static_cast<int>(p.buffers.size());
      p.buffers.push_back(buffers_[b]);
    }
    auto rb = [&](int& b) {
      if (b >= 0) b = remap[b];
    };
    for (auto& k : kernels_) {
      for (auto& l : k.loads) rb(l.buffer);
      for (auto& o : k.outputs) rb(o.buffer);
      if (k.matmul) rb(k.matmul->a_buffer), rb(k.matmul->b_buffer);
      if (k.matmul && k.matmul->dequant_b) rb(k.matmul->dequant_b->scale_buffer), rb(k.matmul->dequant_b->zp_buffer);
      if (k.conv) rb(k.conv->x_buffer), rb(k.conv->w_buffer);
      for (auto& d : k.dots) rb(d.mm.a_buffer), rb(d.mm.b_buffer);
      if (k.row_product) rb(k.row_product->b_buffer), rb(k.row_product->c_buffer);
      for (auto& b : k.opaque_inputs) rb(b);
      for (auto& b : k.opaque_outputs) rb(b);
    }
    // Names from the final kind and ops (absorption and output fusion change both); the
    // reductions are final here, so the row-register and online-softmax decisions are taken now.
    for (size_t i = 0; i < kernels_.size(); ++i) {
      auto& k = kernels_[i];
      mark_row_registers(k);
      mark_online_softmax(k);
      k.name = "k" + std::to_string(i) + "_" + fusion_kind_name(k.kind);
      for (size_t j = 0; j < k.fused_ops.size() && j < 3; ++j) k.name += "_" + k.fused_ops[j];
    }
    p.kernels = std::move(kernels_);
    for (int v : g_.inputs) p.input_buffers.push_back(remap[buffer_for(v)]);
    for (int v : g_.outputs) p.output_buffers.push_back(remap[buffer_for(v)]);
    return p;
  }
};

}  // namespace

Plan fuse_kernels(const Graph& g, const FusionOptions& opts) { return Fuser(g, opts).run(); }

}  // namespace fusor
