// Tree ensembles of the ONNX-ML domain: TreeEnsembleRegressor and TreeEnsembleClassifier
// (ai.onnx.ml 1 and 3, the forms skl2onnx / onnxmltools write for scikit-learn, LightGBM and
// XGBoost models) and TreeEnsemble (ai.onnx.ml 5). All are read into one forest and evaluated
// on the host (the reference; GPU backends run the node as a graph break).
//
//   X [N, F] (or the vector [F], one row) -> Y [N, n_targets]: for each row and tree, walk from
//   the root: a branch sends the row to its true child when x[feature] <mode> split holds, or
//   when x[feature] is NaN and the branch's missing_value_tracks_true is set (modes LEQ, LT,
//   GTE, GT, EQ, NEQ and, for TreeEnsemble, MEMBER of a set); the leaf reached adds its
//   (target, weight) pairs. Aggregation per target: SUM, AVERAGE (the sum / tree count), MIN,
//   MAX (a target no leaf reached is 0, base value or not, as onnxruntime 1.32); then
//   base_values (per target) are added and post_transform applied: NONE, LOGISTIC
//   1 / (1 + e^-y), SOFTMAX over the targets, SOFTMAX_ZERO (|y| <= 1e-7 counts as zero and
//   stays near it; all of them zero gives NaN), none with a single target (onnxruntime);
//   PROBIT is refused. TreeEnsembleRegressor's Y is float32; TreeEnsemble's has
//   X's dtype. Sums are kept in float64 and rounded once. TreeEnsemble's post_transform codes
//   are the spec's (1 SOFTMAX, 2 LOGISTIC); onnxruntime 1.32 reads them swapped (its own enum's
//   order), so its outputs differ from fusor's there.
//   TreeEnsembleClassifier: class_* lists instead of target_*, classlabels_int64s (strings are
//   refused) -> (labels int64 [N], scores float32 [N, classes]) as onnxruntime 1.32 computes
//   them: with more than 2 classes the label of the largest score among the classes a leaf
//   named, base values added, the scores transformed; with 2 classes its "binary" forms (one
//   class id in the weights: the positive score s gives labels[s > 0.5] when every weight is
//   >= 0, else labels[s > 0], and scores [1 - t, t] or [-s, s]), checked against onnxruntime on
//   scikit-learn's tree classifiers and random binary ensembles.
//
// Sources: the ONNX-ML operator spec and onnx/reference/ops/aionnxml (tree layout, membership
// sets: the values between NaNs, taken by the MEMBER branches in node-index order);
// onnxruntime's tree_ensemble_aggregator.h for NaN, the aggregation and the
// classifier's binary forms.
// Errors (Error "shape" / Unsupported, one line naming the node): attribute lists of unequal
// length, a child or leaf id that names nothing, a tree that loops, a feature past X's width,
// a target or class past its count, an unknown mode, aggregate_function or post_transform.
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "ir/host_memory.h"
#include "ir/ops/ml_common.h"
#include "ir/ops/op_helpers.h"

namespace fusor {
namespace {

using namespace op_helpers;

enum class Mode : uint8_t { leq, lt, gte, gt, eq, neq, member };
enum class Aggregate { average, sum, min, max };
using Post = MlPost;

struct Forest {
  struct Branch {
    int64_t feature = 0;
    Mode mode = Mode::leq;
    double split = 0;
    std::vector<double> members;
    bool missing_true = false;
    int64_t child[2] = {0, 0};  // [false, true]: >= 0 a branch, < 0 the leaf -(l + 1)
  };
  std::vector<Branch> branches;
  std::vector<std::vector<std::pair<int64_t, double>>> leaves;  // (target, weight)
  std::vector<int64_t> roots;                                   // as child codes
  int64_t targets = 1;
  Aggregate aggregate = Aggregate::sum;
  Post post = Post::none;
  std::vector<double> base;
  // TreeEnsembleClassifier: the labels, and onnxruntime's binary flags (2 labels, one class id
  // in the weights; every weight >= 0).
  std::vector<int64_t> labels;
  bool binary_case = false, all_positive = true;
};

Error bad(const Node& n, const std::string& why) { return Error("shape", n.label() + ": " + why); }

// A float list given as floats or as a tensor (name + "_as_tensor"); TreeEnsemble's are tensors.
std::vector<double> float_list(const Node& n, const std::string& k, bool tensor_only = false) {
  const std::string kt = tensor_only ? k : k + "_as_tensor";
  if (const Tensor* t = n.attr_t(kt)) {
    std::vector<double> v(static_cast<size_t>(t->numel()));
    for (int64_t i = 0; i < t->numel(); ++i) v[i] = t->get(i);
    return v;
  }
  return tensor_only ? std::vector<double>{} : n.attr_floats(k);
}

Post post_of(const Node& n, int64_t code) {
  if (code < 0 || code > 4) throw bad(n, "post_transform " + std::to_string(code) + " is not one of 0..4");
  const Post p = static_cast<Post>(code);
  if (p == Post::probit) throw Unsupported("onnx", n.label() + ": post_transform PROBIT is not supported");
  return p;
}

template <class T>
void same_length(const Node& n, const std::vector<T>& v, size_t len, const char* what) {
  if (v.size() != len) throw bad(n, std::string(what) + " has " + std::to_string(v.size()) + " entries, expected " + std::to_string(len));
}

// TreeEnsembleRegressor / TreeEnsembleClassifier (ml 1, 3): nodes named by (tree id, node id),
// modes as strings, leaves' weights in target_* (class_*) lists.
Forest regressor_forest(const Node& n, bool classifier) {
  Forest f;
  const std::vector<int64_t> tids = n.attr_ints("nodes_treeids"), nids = n.attr_ints("nodes_nodeids"), feats = n.attr_ints("nodes_featureids"),
                             tnode = n.attr_ints("nodes_truenodeids"), fnode = n.attr_ints("nodes_falsenodeids"),
                             miss = n.attr_ints("nodes_missing_value_tracks_true");
  const std::vector<std::string> modes = n.attr_strings("nodes_modes");
  const std::vector<double> splits = float_list(n, "nodes_values");
  const size_t count = tids.size();
  if (count == 0) throw bad(n, "has no nodes (nodes_treeids is empty)");
  same_length(n, nids, count, "nodes_nodeids");
  same_length(n, feats, count, "nodes_featureids");
  same_length(n, modes, count, "nodes_modes");
  same_length(n, tnode, count, "nodes_truenodeids");
  same_length(n, fnode, count, "nodes_falsenodeids");
  if (!splits.empty()) same_length(n, splits, count, "nodes_values");
  if (!miss.empty()) same_length(n, miss, count, "nodes_missing_value_tracks_true");
  std::map<std::pair<int64_t, int64_t>, size_t> at;
  std::map<int64_t, size_t> root;  // tree id -> its first node (the reference's root)
  for (size_t i = 0; i < count; ++i) {
    if (!at.emplace(std::pair{tids[i], nids[i]}, i).second)
      throw bad(n, "node " + std::to_string(nids[i]) + " of tree " + std::to_string(tids[i]) + " appears twice");
    root.emplace(tids[i], i);
  }
  std::vector<int64_t> code(count);
  static const std::map<std::string, Mode> kModes = {{"BRANCH_LEQ", Mode::leq}, {"BRANCH_LT", Mode::lt}, {"BRANCH_GTE", Mode::gte},
                                                     {"BRANCH_GT", Mode::gt},   {"BRANCH_EQ", Mode::eq}, {"BRANCH_NEQ", Mode::neq}};
  for (size_t i = 0; i < count; ++i) {
    if (modes[i] == "LEAF") {
      code[i] = -static_cast<int64_t>(f.leaves.size()) - 1;
      f.leaves.emplace_back();
      continue;
    }
    auto m = kModes.find(modes[i]);
    if (m == kModes.end()) throw bad(n, "nodes_modes entry '" + printable(modes[i]) + "' is not a BRANCH_* mode or LEAF");
    Forest::Branch b;
    b.mode = m->second;
    b.feature = feats[i];
    b.split = splits.empty() ? 0.0 : splits[i];
    b.missing_true = !miss.empty() && miss[i] != 0;
    code[i] = static_cast<int64_t>(f.branches.size());
    f.branches.push_back(b);
  }
  const auto child = [&](size_t i, int64_t id) {
    auto it = at.find({tids[i], id});
    if (it == at.end()) throw bad(n, "node " + std::to_string(nids[i]) + " of tree " + std::to_string(tids[i]) + " names child " + std::to_string(id) + ", which is not in the tree");
    return code[it->second];
  };
  for (size_t i = 0; i < count; ++i)
    if (code[i] >= 0) f.branches[code[i]].child[0] = child(i, fnode[i]), f.branches[code[i]].child[1] = child(i, tnode[i]);
  for (const auto& [tree, i] : root) f.roots.push_back(code[i]);
  const std::string pre = classifier ? "class_" : "target_";
  const std::vector<int64_t> ttid = n.attr_ints(pre + "treeids"), tnid = n.attr_ints(pre + "nodeids"), tt = n.attr_ints(pre + "ids");
  const std::vector<double> tw = float_list(n, pre + "weights");
  same_length(n, tnid, ttid.size(), (pre + "nodeids").c_str());
  same_length(n, tt, ttid.size(), (pre + "ids").c_str());
  same_length(n, tw, ttid.size(), (pre + "weights").c_str());
  if (classifier) {
    if (n.has_attr("classlabels_strings")) throw Unsupported("onnx", n.label() + ": classlabels_strings (string labels) are not supported");
    f.labels = n.attr_ints("classlabels_int64s");
    f.targets = static_cast<int64_t>(f.labels.size());
    if (f.targets < 1) throw bad(n, "classlabels_int64s names no class");
    // One class: onnxruntime's "binary" form with one score (label 1 when it is positive, else
    // 0; the score as summed). Measured with no base value and no transform only.
    if (f.targets == 1 && (n.attr_s("post_transform", "NONE") != "NONE" || !float_list(n, "base_values").empty()))
      throw Unsupported("onnx", n.label() + ": one class with a post_transform or base_values is not supported");
    f.binary_case = f.targets == 2 && !tt.empty();
    for (size_t k = 0; k < tt.size(); ++k) {
      f.binary_case = f.binary_case && tt[k] == tt[0];
      f.all_positive = f.all_positive && !(tw[k] < 0);
    }
  } else {
    f.targets = n.attr_i("n_targets", 1);
  }
  for (size_t k = 0; k < ttid.size(); ++k) {
    auto it = at.find({ttid[k], tnid[k]});
    if (it == at.end() || code[it->second] >= 0)
      throw bad(n, "target entry " + std::to_string(k) + " names node " + std::to_string(tnid[k]) + " of tree " + std::to_string(ttid[k]) + ", which is not a leaf");
    f.leaves[-code[it->second] - 1].emplace_back(tt[k], tw[k]);
  }
  static const std::map<std::string, Aggregate> kAgg = {{"AVERAGE", Aggregate::average}, {"SUM", Aggregate::sum}, {"MIN", Aggregate::min}, {"MAX", Aggregate::max}};
  const std::string agg = classifier ? "SUM" : n.attr_s("aggregate_function", "SUM");
  if (!kAgg.count(agg)) throw bad(n, "aggregate_function '" + printable(agg) + "' is not AVERAGE, SUM, MIN or MAX");
  f.aggregate = kAgg.at(agg);
  static const std::map<std::string, int64_t> kPost = {{"NONE", 0}, {"SOFTMAX", 1}, {"LOGISTIC", 2}, {"SOFTMAX_ZERO", 3}, {"PROBIT", 4}};
  const std::string post = n.attr_s("post_transform", "NONE");
  if (!kPost.count(post)) throw bad(n, "post_transform '" + printable(post) + "' is not NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO or PROBIT");
  f.post = post_of(n, kPost.at(post));
  f.base = float_list(n, "base_values");
  return f;
}

// TreeEnsemble (ml 5): branches by index, children flagged as leaves, leaves by index.
Forest ensemble_forest(const Node& n) {
  Forest f;
  const std::vector<int64_t> feats = n.attr_ints("nodes_featureids"), tnode = n.attr_ints("nodes_truenodeids"),
                             fnode = n.attr_ints("nodes_falsenodeids"), tleaf = n.attr_ints("nodes_trueleafs"),
                             fleaf = n.attr_ints("nodes_falseleafs"), miss = n.attr_ints("nodes_missing_value_tracks_true"),
                             ltarget = n.attr_ints("leaf_targetids"), roots = n.attr_ints("tree_roots");
  const std::vector<double> splits = float_list(n, "nodes_splits", true), modes = float_list(n, "nodes_modes", true),
                            weights = float_list(n, "leaf_weights", true), members = float_list(n, "membership_values", true);
  const size_t count = feats.size();
  same_length(n, splits, count, "nodes_splits");
  same_length(n, modes, count, "nodes_modes");
  same_length(n, tnode, count, "nodes_truenodeids");
  same_length(n, fnode, count, "nodes_falsenodeids");
  same_length(n, tleaf, count, "nodes_trueleafs");
  same_length(n, fleaf, count, "nodes_falseleafs");
  if (!miss.empty()) same_length(n, miss, count, "nodes_missing_value_tracks_true");
  same_length(n, weights, ltarget.size(), "leaf_weights");
  if (roots.empty()) throw bad(n, "tree_roots is empty");
  f.leaves.resize(ltarget.size());
  for (size_t l = 0; l < ltarget.size(); ++l) f.leaves[l].emplace_back(ltarget[l], weights[l]);
  const auto leaf = [&](int64_t l) {
    if (l < 0 || l >= static_cast<int64_t>(ltarget.size())) throw bad(n, "leaf " + std::to_string(l) + " is not one of the " + std::to_string(ltarget.size()) + " leaves");
    return -l - 1;
  };
  const auto branch = [&](int64_t i) {
    if (i < 0 || i >= static_cast<int64_t>(count)) throw bad(n, "node " + std::to_string(i) + " is not one of the " + std::to_string(count) + " nodes");
    return i;
  };
  f.branches.resize(count);
  for (size_t i = 0; i < count; ++i) {
    Forest::Branch& b = f.branches[i];
    const double m = modes[i];
    if (!(m >= 0 && m <= 6) || m != std::floor(m)) {
      std::ostringstream os;  // the entry as written (an integer type prints as one: 9, not 9.000000)
      os << m;
      throw bad(n, "nodes_modes entry " + os.str() + " is not one of 0..6");
    }
    b.mode = static_cast<Mode>(static_cast<int>(m));
    b.feature = feats[i];
    b.split = splits[i];
    b.missing_true = !miss.empty() && miss[i] != 0;
    b.child[1] = tleaf[i] ? leaf(tnode[i]) : branch(tnode[i]);
    b.child[0] = fleaf[i] ? leaf(fnode[i]) : branch(fnode[i]);
  }
  for (int64_t r : roots) {
    branch(r);
    // A tree that is one leaf: its root's two children are the same leaf.
    f.roots.push_back(tleaf[r] && fleaf[r] && tnode[r] == fnode[r] ? leaf(tnode[r]) : r);
  }
  // Membership sets: the values between NaNs, one set per MEMBER branch in node-index order
  // (the spec's reference and onnxruntime).
  size_t next = 0;
  for (Forest::Branch& b : f.branches) {
    if (b.mode != Mode::member) continue;
    if (next >= members.size()) throw bad(n, "membership_values has fewer sets than the MEMBER nodes");
    while (next < members.size() && !std::isnan(members[next])) b.members.push_back(members[next++]);
    ++next;  // the NaN that ends the set
  }
  f.targets = n.attr_i("n_targets", 0);
  const int64_t agg = n.attr_i("aggregate_function", 1);
  if (agg < 0 || agg > 3) throw bad(n, "aggregate_function " + std::to_string(agg) + " is not one of 0..3");
  f.aggregate = static_cast<Aggregate>(agg);
  f.post = post_of(n, n.attr_i("post_transform", 0));
  return f;
}

enum class Kind { regressor, classifier, v5 };

Forest forest_of(const Node& n, Kind kind) {
  Forest f = kind == Kind::v5 ? ensemble_forest(n) : regressor_forest(n, kind == Kind::classifier);
  if (f.targets <= 0 || f.targets > (int64_t{1} << 31)) throw bad(n, "n_targets must be in 1..2^31, got " + std::to_string(f.targets));
  for (const auto& l : f.leaves)
    for (const auto& [t, w] : l)
      if (t < 0 || t >= f.targets) throw bad(n, "leaf target " + std::to_string(t) + " is outside 0.." + std::to_string(f.targets - 1));
  // base_values: one per target or class (or one, the positive class's, with two classes).
  if (!f.base.empty() && !(kind == Kind::classifier && f.targets == 2 && f.base.size() == 1))
    same_length(n, f.base, static_cast<size_t>(f.targets), "base_values");
  // The per-row scratch (three values per target) is host memory like any tensor.
  check_host_alloc(static_cast<uint64_t>(f.targets) * 17, n.label() + ": per-target scores");
  return f;
}

bool holds(const Forest::Branch& b, double x) {
  if (std::isnan(x) && b.missing_true) return true;
  switch (b.mode) {
    case Mode::leq: return x <= b.split;
    case Mode::lt: return x < b.split;
    case Mode::gte: return x >= b.split;
    case Mode::gt: return x > b.split;
    case Mode::eq: return x == b.split;
    case Mode::neq: return x != b.split;
    case Mode::member:
      for (double m : b.members)
        if (x == m) return true;
      return false;
  }
  return false;
}

void tree_infer(InferContext& ctx, Kind kind) {
  const Node& n = ctx.node();
  const Forest f = forest_of(n, kind);
  const DType t = ctx.dtype(0);
  const bool v5 = kind == Kind::v5;
  const bool ok = t == DType::f32 || t == DType::f64 || (v5 ? t == DType::f16 : (t == DType::i32 || t == DType::i64));
  if (!ok)
    ctx.fail(std::string("X must be ") + (v5 ? "float, double or float16" : "float, double, int32 or int64") + ", got " + dtype_name(t));
  if (v5) {  // the spec types nodes_modes uint8 and the splits, weights and sets like X
    for (const char* k : {"nodes_modes", "nodes_splits", "leaf_weights", "membership_values"}) {
      const Tensor* a = n.attr_t(k);
      const DType want = std::string(k) == "nodes_modes" ? DType::u8 : t;
      if (a && a->dtype() != want) ctx.fail(std::string("attribute ") + k + " must be a " + dtype_name(want) + " tensor, got " + dtype_name(a->dtype()));
    }
  }
  const Shape& x = ctx.shape(0);
  if (x.empty() || x.size() > 2) ctx.fail("X must be [N, F] or [F], got " + shape_str(x));
  const int64_t width = x.back();
  for (const auto& b : f.branches)
    if (b.feature < 0 || (width >= 0 && b.feature >= width))
      ctx.fail("a node reads feature " + std::to_string(b.feature) + " of X's " + std::to_string(width));
  const int64_t rows = x.size() == 2 ? x[0] : 1;
  if (rows >= 0) shape_mul(n, rows, f.targets);
  if (kind == Kind::classifier) {  // (Y labels, Z scores)
    ctx.set_output(0, DType::i64, {rows});
    if (ctx.num_outputs() > 1 && n.outputs[1] >= 0) ctx.set_output(1, DType::f32, {rows, f.targets});
    return;
  }
  ctx.set_output(0, v5 ? t : DType::f32, {rows, f.targets});
}

// Per-target sums (or min / max) of the leaves one row reaches, hit[t] when some leaf names t.
void walk(const Node& n, const Forest& f, const Tensor& x, int64_t r, std::vector<double>& acc, std::vector<char>& hit) {
  const double big = std::numeric_limits<double>::max();
  const int64_t width = x.shape().back();
  std::fill(acc.begin(), acc.end(), f.aggregate == Aggregate::min ? big : f.aggregate == Aggregate::max ? -big : 0.0);
  std::fill(hit.begin(), hit.end(), 0);
  const size_t limit = f.branches.size() + 1;
  for (int64_t c : f.roots) {
    for (size_t steps = 0; c >= 0; ++steps) {
      if (steps >= limit) throw bad(n, "a tree's branches form a loop (no leaf is reached)");
      const Forest::Branch& b = f.branches[c];
      c = b.child[holds(b, x.get(r * width + b.feature)) ? 1 : 0];
    }
    for (const auto& [t, w] : f.leaves[-c - 1]) {
      hit[t] = 1;
      if (f.aggregate == Aggregate::min) acc[t] = std::min(acc[t], w);
      else if (f.aggregate == Aggregate::max) acc[t] = std::max(acc[t], w);
      else acc[t] += w;
    }
  }
  for (size_t t = 0; t < acc.size(); ++t)
    if (!hit[t]) acc[t] = 0;
}

void transform(Post post, std::vector<double>& v) { ml_transform(post, v.data(), static_cast<int64_t>(v.size())); }

// TreeEnsembleClassifier's labels and scores for one row, as onnxruntime 1.32 computes them
// (tree_ensemble_aggregator.h): more than 2 classes: base values added, the label of the
// largest score among the classes some leaf named, scores transformed; 2 classes: the "binary"
// forms, where one score s stands for the positive class and the other slot is derived from it.
int64_t classify(const Forest& f, std::vector<double>& acc, std::vector<char>& hit, double* z, bool single) {
  const size_t L = acc.size();
  if (L == 1) {  // one class (forest_of): its score, and 1 / 0 as in the two-class "binary" form
    z[0] = hit[0] ? acc[0] : 0.0;
    return single ? (static_cast<float>(z[0]) > 0 ? 1 : 0) : (z[0] > 0 ? 1 : 0);
  }
  // onnxruntime keeps the scores in X's float type (float32 but for a double X): labels are
  // decided on the scores rounded to it.
  const auto r = [single](double v) { return single ? static_cast<double>(static_cast<float>(v)) : v; };
  if (L > 2) {
    for (size_t k = 0; k < f.base.size() && k < L; ++k) acc[k] += f.base[k], hit[k] = 1;
    size_t best = 0;
    bool any = false;
    for (size_t k = 0; k < L; ++k)
      if (hit[k] && (!any || r(acc[k]) > r(acc[best]))) best = k, any = true;
    transform(f.post, acc);
    std::copy(acc.begin(), acc.end(), z);
    return f.labels[best];
  }
  size_t size = 2;
  int extra = -1;  // onnxruntime's add_second_class
  if (f.base.size() == 2) {
    if (hit[1]) {
      acc[1] = f.base[1] + acc[0];
      acc[0] = -acc[1];
    } else {
      acc[1] += f.base[1], acc[0] += f.base[0];
    }
  } else if (f.base.size() == 1) {
    acc[0] += f.base[0];
    if (!hit[1]) size = 1;
  } else if (f.base.empty()) {
    extra = 3;
    if (!hit[1]) size = 1;
  }
  const double pos = size == 2 && hit[1] ? acc[1] : (hit[0] ? acc[0] : 0.0);
  int64_t label;
  if (f.binary_case) {
    const bool positive = f.all_positive ? r(pos) > 0.5 : r(pos) > 0;
    extra = f.all_positive ? (positive ? 0 : 1) : (positive ? 2 : 3);
    label = f.labels[positive ? 1 : 0];
  } else {
    label = r(pos) > 0 ? 1 : 0;  // onnxruntime's default positive / negative labels, not classlabels
  }
  // A class no leaf named scores 0 whatever base value was added to it (onnxruntime's has_score).
  for (size_t k = 0; k < 2; ++k)
    if (!hit[k] && !(k == 1 && f.base.size() == 2 && hit[1])) acc[k] = 0;
  if (size == 2) {
    transform(f.post, acc);
    z[0] = acc[0], z[1] = acc[1];
    return label;
  }
  // One score s for the positive class: [1 - t, t] with t = logistic(s) for LOGISTIC, else s
  // (all weights >= 0), or [-s, s] (mixed weights); one value where onnxruntime writes one.
  // t in X's float type before 1 - t, as onnxruntime: three trees' 1/3 leaves sum to 1 + 3e-8 in
  // float64, and 1 - t there gave a probability of -3e-8 where onnxruntime's is 0.
  const double s = acc[0], t = r(f.post == Post::logistic ? ml_logistic(s) : s);
  if (extra == 0 || extra == 1 || ((extra == 2 || extra == 3) && f.post == Post::logistic)) z[0] = 1 - t, z[1] = t;
  else if (extra == 2 || extra == 3) z[0] = -s, z[1] = s;
  else z[0] = s, z[1] = 0;
  return label;
}

void tree_ref(const Node& n, const Ins& in, Outs& out, Kind kind) {
  const Forest f = forest_of(n, kind);
  const Tensor& x = *in[0];
  const int64_t rows = x.rank() == 2 ? x.shape()[0] : 1, T = f.targets;
  std::vector<double> acc(static_cast<size_t>(T)), z(static_cast<size_t>(T));
  std::vector<char> hit(static_cast<size_t>(T));
  for (int64_t r = 0; r < rows; ++r) {
    walk(n, f, x, r, acc, hit);
    if (kind == Kind::classifier) {
      const int64_t label = classify(f, acc, hit, z.data(), x.dtype() != DType::f64);
      out[0].set_int(r, label);
      if (has_out(out, 1))
        for (int64_t t = 0; t < T; ++t) out[1].set(r * T + t, z[t]);
      continue;
    }
    for (int64_t t = 0; t < T; ++t) {
      if (f.aggregate == Aggregate::average) acc[t] /= static_cast<double>(f.roots.size());
      if (!f.base.empty() && hit[t]) acc[t] += f.base[t];  // a target no leaf reached stays 0 (onnxruntime)
    }
    // One target: onnxruntime applies no transform but PROBIT (its "binary" scores).
    if (T > 1) transform(f.post, acc);
    for (int64_t t = 0; t < T; ++t) out[0].set(r * T + t, acc[t]);
  }
}

}  // namespace

void register_tree_ensemble_ops() {
  const std::string ml = "ai.onnx.ml.";
  for (const auto& [name, kind] : {std::pair{"TreeEnsembleRegressor", Kind::regressor}, {"TreeEnsembleClassifier", Kind::classifier},
                                   {"TreeEnsemble", Kind::v5}}) {
    const Kind k = kind;
    register_op(table_entry(
        ml + name, 1, 1, [k](InferContext& c) { tree_infer(c, k); }, [k](const Node& n, const Ins& in, Outs& out) { tree_ref(n, in, out, k); },
        k == Kind::classifier ? 2 : 1));
  }
}

}  // namespace fusor
