// Deterministic hostile-input sweep: for every op of the default ONNX domain that the linked
// libonnx has a schema for (newest version of each), and every op fusor registers that libonnx
// does not know (newer opsets), K seeded one-node models whose integer operands and attributes
// are extreme (INT64_MIN/MAX, +-2^62, +-2^31, -1, 0, ...), float attributes 1e30/inf/nan, mode
// strings (auto_pad, Pad/Resize modes, ...) sometimes set, int64 operands sometimes run-time inputs
// rather than initializers, and optional inputs sometimes left out. Each model goes through fuzz::run_one (import + shape
// inference + plan + reference run): it must end in results or a fusor::Error. The libFuzzer
// exploration (scripts/fuzz_explore.sh) finds such faults by luck; this sweep reaches every op.
//
// Environment: FUSOR_SWEEP_PER_OP=K (models per op, default 300); FUSOR_SWEEP_OPS=A,B (only these
// ops); FUSOR_SWEEP_RESUME=Op:i (start at model i of Op, in name order: to go on past a crash);
// FUSOR_SWEEP_DIR (where models are written, default the gtest temp dir); FUSOR_SWEEP_VERBOSE=1
// (print each model's fusor::Error and how many models of each op ran through).
// A model is written to FUSOR_SWEEP_DIR/<op>_<i>.onnx before it runs and removed when it passes,
// so a crash (sanitizer report, signal) leaves it behind; the crash message names it, and
// `build-san/fusor_fuzz FILE` reproduces it. Each op has its own generator seeded from its name,
// so model i of an op is the same whatever K, FUSOR_SWEEP_OPS or the set of other ops.
#include <gtest/gtest.h>

#include <onnx/defs/schema.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <unistd.h>

#include "fuzz_harness.h"
#include "ir/op_table.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define FUSOR_SWEEP_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define FUSOR_SWEEP_SANITIZED 1
#endif
#ifdef FUSOR_SWEEP_SANITIZED
#include <sanitizer/common_interface_defs.h>
#endif

namespace fusor {
namespace {

using onnx::TensorProto;

// What the model being run is, preformatted so a death callback or signal handler can print it
// with write(2) alone.
char g_current[1024] = "";

void print_current() {
  if (g_current[0]) {
    const ssize_t r = ::write(2, g_current, std::strlen(g_current));
    (void)r;
  }
}

#ifndef FUSOR_SWEEP_SANITIZED
void on_signal(int sig) {
  print_current();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}
#endif

// Names the model on a crash while it lives (a sanitizer's death callback, or fatal-signal
// handlers in other builds); the destructor puts back what was there before.
class CrashReporter {
 public:
  CrashReporter() {
#ifdef FUSOR_SWEEP_SANITIZED
    __sanitizer_set_death_callback(print_current);
#else
    for (int s : kSignals) old_.push_back(std::signal(s, on_signal));
#endif
  }
  ~CrashReporter() {
    g_current[0] = '\0';
#ifdef FUSOR_SWEEP_SANITIZED
    __sanitizer_set_death_callback(nullptr);
#else
    for (size_t i = 0; i < old_.size(); ++i) std::signal(kSignals[i], old_[i]);
#endif
  }

 private:
#ifndef FUSOR_SWEEP_SANITIZED
  static constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
  std::vector<void (*)(int)> old_;
#endif
};

int64_t extreme_int(std::mt19937_64& rng) {
  static const int64_t v[] = {INT64_MAX, INT64_MIN, INT64_MIN + 1, INT64_MAX - 1, int64_t{1} << 62, -(int64_t{1} << 62),
                              int64_t{1} << 32, -(int64_t{1} << 32), int64_t{1} << 31, -(int64_t{1} << 31) - 1,
                              (int64_t{1} << 31) - 1, int64_t{1} << 40, -(int64_t{1} << 40), -1, 0, 1, 2, 3, -2, 7};
  if (rng() % 10 < 6) return v[rng() % (sizeof v / sizeof v[0])];
  return static_cast<int64_t>(rng() % 9) - 4;
}

float extreme_float(std::mt19937_64& rng) {
  static const float v[] = {1e30f, -1e30f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                            0.0f, 2.5f};
  return v[rng() % (sizeof v / sizeof v[0])];
}

bool chance(std::mt19937_64& rng, double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }

// FNV-1a: a seed per op that does not depend on which other ops exist (so adding an op keeps
// every other op's models) nor on the standard library's std::hash.
uint64_t op_seed(const std::string& op) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : op) h = (h ^ c) * 1099511628211ull;
  return h ^ 20261201ull;
}

// How the inputs of one type parameter ("T", "T1", or a literal "tensor(int64)") are made; one
// choice per parameter and model keeps the model type-consistent.
struct TypeChoice {
  enum Kind { I64, I32, Bool, Float, Other } kind = Float;
  int elem = TensorProto::FLOAT;  // for Other
};

class ModelMaker {
 public:
  explicit ModelMaker(const std::string& op) : op_(op), rng_(op_seed(op)), srng_(op_seed(op) ^ 0x5eedull), irng_(op_seed(op) ^ 0x1a7eull) {}

  // The next model for an op with a libonnx schema (schema) or without one (nullptr).
  std::string next(const onnx::OpSchema* schema) {
    R_ = 1 + static_cast<int>(rng_() % 4);
    fshape_.clear();
    for (int i = 0; i < R_; ++i) fshape_.push_back(1 + static_cast<int64_t>(rng_() % 3));
    const int64_t lens[] = {1, R_, 2 * R_};
    L_ = lens[rng_() % 3];
    static const int opsets[] = {17, 18, 21};
    int opset = opsets[rng_() % 3];
    if (schema) opset = std::max(opset, schema->SinceVersion());
    model_ = fuzz::new_model(opset);
    g_ = model_.mutable_graph();
    counter_ = 0;
    choices_.clear();
    auto* n = g_->add_node();
    // fusor's ops of other domains are registered as "<domain>.<op>" (ai.onnx.preview.FlexAttention).
    const size_t dot = op_.rfind('.');
    n->set_op_type(dot == std::string::npos ? op_ : op_.substr(dot + 1));
    if (dot != std::string::npos) {
      n->set_domain(op_.substr(0, dot));
      auto* imp = model_.add_opset_import();
      imp->set_domain(op_.substr(0, dot));
      imp->set_version(1);
    }
    n->set_name(op_ + "_node");
    if (schema) from_schema(*schema, n);
    else generic(n);
    for (const auto& o : n->output())
      if (!o.empty()) g_->add_output()->set_name(o);  // no type: the inferred one is used
    return model_.SerializeAsString();
  }

 private:
  std::string fresh(const char* prefix) { return prefix + std::to_string(counter_++); }

  std::vector<int64_t> float_shape() {
    if (!chance(rng_, 0.2)) return fshape_;
    std::vector<int64_t> s(rng_() % 5);
    for (auto& d : s) d = 1 + static_cast<int64_t>(rng_() % 3);
    return s;
  }

  std::vector<int64_t> int_shape() {
    switch (rng_() % 10) {
      case 0: return {};
      case 1: return {0};
      case 2: return {R_};
      default: return {L_};
    }
  }

  static int64_t numel(const std::vector<int64_t>& s) {
    int64_t n = 1;
    for (auto d : s) n *= d;
    return n;
  }

  std::string i64_init() {
    auto name = fresh("i");
    auto shape = int_shape();
    std::vector<int64_t> v(static_cast<size_t>(numel(shape)));
    for (auto& x : v) x = extreme_int(rng_);
    fuzz::add_init_i64(g_, name, shape, v);
    return name;
  }

  std::string i32_init() {
    static const int32_t vals[] = {INT32_MAX, INT32_MIN, -1, 0, 1, 5};
    auto name = fresh("j");
    auto shape = int_shape();
    auto* t = g_->add_initializer();
    t->set_name(name);
    t->set_data_type(TensorProto::INT32);
    for (auto d : shape) t->add_dims(d);
    for (int64_t k = 0; k < numel(shape); ++k) t->add_int32_data(vals[rng_() % 6]);
    return name;
  }

  std::string graph_input(int elem, const std::vector<int64_t>& shape) {
    auto name = fresh("x");
    fuzz::set_type(g_->add_input(), name, elem, shape);
    return name;
  }

  std::string make_input(const TypeChoice& c) {
    switch (c.kind) {
      case TypeChoice::I64: {
        // Sometimes a run-time input (of the same shape) instead: values only the kernels see
        // (indices out of range), not the shape rules. Decided by its own generator, after
        // the usual draws, so every other draw of the sweep stays as it was.
        std::string name = i64_init();
        if (irng_() % 10 < 3) {
          const auto& t = g_->initializer(g_->initializer_size() - 1);
          fuzz::set_type(g_->add_input(), name, TensorProto::INT64, std::vector<int64_t>(t.dims().begin(), t.dims().end()));
          g_->mutable_initializer()->RemoveLast();
        }
        return name;
      }
      case TypeChoice::I32: return i32_init();
      case TypeChoice::Bool: return graph_input(TensorProto::BOOL, float_shape());
      case TypeChoice::Other: return graph_input(c.elem, float_shape());
      default: return graph_input(TensorProto::FLOAT, float_shape());
    }
  }

  TypeChoice choose(const onnx::OpSchema::FormalParameter& p) {
    auto it = choices_.find(p.GetTypeStr());
    if (it != choices_.end()) return it->second;
    std::set<std::string> types;
    for (const auto* t : p.GetTypes()) types.insert(*t);
    auto has = [&](const char* t) { return types.count(t) > 0; };
    TypeChoice c;
    const bool f = has("tensor(float)");
    if (has("tensor(int64)") && (!f || chance(rng_, 0.7))) {
      c.kind = TypeChoice::I64;
    } else if (has("tensor(int32)") && !f) {
      c.kind = TypeChoice::I32;
    } else if (has("tensor(bool)") && !f) {
      c.kind = TypeChoice::Bool;
    } else if (!f) {
      // Some other numeric type (quantized zero points, half-only ops); float when none fits.
      static const std::pair<const char*, int> others[] = {
          {"tensor(uint8)", TensorProto::UINT8},   {"tensor(int8)", TensorProto::INT8},
          {"tensor(float16)", TensorProto::FLOAT16}, {"tensor(double)", TensorProto::DOUBLE},
          {"tensor(int16)", TensorProto::INT16},   {"tensor(uint16)", TensorProto::UINT16},
          {"tensor(uint32)", TensorProto::UINT32}, {"tensor(uint64)", TensorProto::UINT64}};
      for (const auto& [name, elem] : others)
        if (has(name)) {
          c.kind = TypeChoice::Other;
          c.elem = elem;
          break;
        }
    }
    choices_[p.GetTypeStr()] = c;
    return c;
  }

  std::vector<int64_t> extreme_ints() {
    const int64_t lens[] = {R_, 2 * R_, L_, std::max(R_ - 2, 0)};
    std::vector<int64_t> v(static_cast<size_t>(lens[rng_() % 4]));
    for (auto& x : v) x = extreme_int(rng_);
    return v;
  }

  void set_attribute(onnx::NodeProto* n, const std::string& name, onnx::AttributeProto::AttributeType type,
                     bool required) {
    using A = onnx::AttributeProto;
    auto add = [&]() {
      auto* a = n->add_attribute();
      a->set_name(name);
      a->set_type(type);
      return a;
    };
    switch (type) {
      case A::INT:
        if (required || chance(rng_, 0.7)) add()->set_i(extreme_int(rng_));
        break;
      case A::INTS:
        if (required || chance(rng_, 0.7)) {
          auto* a = add();
          for (auto x : extreme_ints()) a->add_ints(x);
        }
        break;
      case A::FLOAT:
        if (required || chance(rng_, 0.5)) add()->set_f(extreme_float(rng_));
        break;
      case A::FLOATS:
        if (required || chance(rng_, 0.5)) {
          auto* a = add();
          for (int i = 0; i < R_; ++i) a->add_floats(extreme_float(rng_));
        }
        break;
      case A::TENSOR:
        if (required || chance(rng_, 0.5)) {
          auto* t = add()->mutable_t();
          if (chance(rng_, 0.5)) {
            t->set_data_type(TensorProto::INT64);
            t->add_dims(1);
            t->add_int64_data(extreme_int(rng_));
          } else {
            t->set_data_type(TensorProto::FLOAT);
            t->add_dims(1);
            t->add_float_data(extreme_float(rng_));
          }
        }
        break;
      case A::STRING: {
        // The modes that change shape arithmetic (auto_pad SAME_* with extreme strides, Pad's
        // reflect/wrap, Resize's modes): one of the known values half the time.
        static const std::map<std::string, std::vector<const char*>> known = {
            {"auto_pad", {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"}},
            {"mode", {"constant", "reflect", "edge", "wrap", "nearest", "linear", "cubic", "bilinear", "DCR", "CRD"}},
            {"coordinate_transformation_mode",
             {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize"}},
            {"nearest_mode", {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}},
            {"keep_aspect_ratio_policy", {"stretch", "not_larger", "not_smaller"}},
            {"padding_mode", {"zeros", "border", "reflection"}},
            {"reduction", {"none", "add", "mul", "max", "min", "mean", "sum"}},
            {"direction", {"LEFT", "RIGHT", "forward", "reverse", "bidirectional"}},
            {"equation", {"ij,jk->ik", "i,i->", "...ii->...i", "bij,bjk->bik", "ii"}},
        };
        auto it = known.find(name);
        if (it != known.end() && srng_() % 2) add()->set_s(it->second[srng_() % it->second.size()]);
        else if (required) add()->set_s("x");
        break;
      }
      default:
        break;  // graphs, sparse tensors, type protos: left out (a required one is a fusor::Error)
    }
  }

  void from_schema(const onnx::OpSchema& s, onnx::NodeProto* n) {
    using FP = onnx::OpSchema::FormalParameterOption;
    for (const auto& p : s.inputs()) {
      const TypeChoice c = choose(p);
      if (p.GetOption() == FP::Optional && chance(rng_, 0.4)) {
        n->add_input("");
        continue;
      }
      const int count = p.GetOption() == FP::Variadic ? 1 + static_cast<int>(rng_() % 3) : 1;
      for (int k = 0; k < count; ++k) n->add_input(make_input(c));
    }
    for (const auto& p : s.outputs()) {
      if (p.GetOption() == FP::Optional && chance(rng_, 0.5)) {
        n->add_output("");
        continue;
      }
      const int count = p.GetOption() == FP::Variadic ? 1 + static_cast<int>(rng_() % 3) : 1;
      for (int k = 0; k < count; ++k) n->add_output(fresh("y"));
    }
    while (n->output_size() && n->output(n->output_size() - 1).empty()) n->mutable_output()->RemoveLast();
    for (const auto& [name, a] : s.attributes()) set_attribute(n, name, a.type, a.required);
  }

  // An op libonnx has no schema for: 1..3 float inputs within the op table's input count
  // (sometimes an extreme int64 one instead) and a few common attributes with extreme values.
  void generic(onnx::NodeProto* n) {
    const OpDef* def = lookup_op(op_);
    const int lo = def ? std::max(def->min_inputs, 1) : 1, hi = def ? std::min(def->max_inputs, lo + 2) : 3;
    const int ins = lo + static_cast<int>(rng_() % (std::max(hi - lo, 0) + 1));
    for (int i = 0; i < ins; ++i)
      n->add_input(chance(rng_, 0.25) ? i64_init() : graph_input(TensorProto::FLOAT, float_shape()));
    const int outs_lo = def ? std::max(def->min_outputs, 1) : 1, outs_hi = def ? std::max(def->max_outputs, outs_lo) : 1;
    const int outs = std::min(outs_lo + static_cast<int>(rng_() % 2), outs_hi);
    for (int i = 0; i < outs; ++i) n->add_output(fresh("y"));
    static const char* ints[] = {"axis", "blocksize", "group", "num_groups", "num_heads", "k", "keepdims", "interleaved"};
    static const char* intss[] = {"axes", "perm", "kernel_shape", "pads", "strides", "dilations"};
    using A = onnx::AttributeProto;
    for (int k = static_cast<int>(rng_() % 3); k > 0; --k) {
      if (rng_() % 2) set_attribute(n, ints[rng_() % 8], A::INT, true);
      else set_attribute(n, intss[rng_() % 6], A::INTS, true);
    }
  }

  std::string op_;
  std::mt19937_64 rng_;
  std::mt19937_64 srng_;  // string attributes only, so adding them kept every other draw (and model index)
  std::mt19937_64 irng_;  // int64 operands made run-time inputs (likewise)
  int R_ = 1;
  int64_t L_ = 1;
  std::vector<int64_t> fshape_;
  onnx::ModelProto model_;
  onnx::GraphProto* g_ = nullptr;
  int counter_ = 0;
  std::map<std::string, TypeChoice> choices_;
};

std::set<std::string> env_list(const char* var) {
  std::set<std::string> out;
  const char* e = std::getenv(var);
  if (!e) return out;
  std::stringstream ss(e);
  for (std::string s; std::getline(ss, s, ',');)
    if (!s.empty()) out.insert(s);
  return out;
}

TEST(Fuzz, EveryOpWithExtremeIntegers) {
  const char* k_env = std::getenv("FUSOR_SWEEP_PER_OP");
  const int per_op = k_env ? std::atoi(k_env) : 300;  // ~30 s under ASan+UBSan on 2 cores
  const std::set<std::string> only = env_list("FUSOR_SWEEP_OPS");
  std::string resume_op;
  int resume_index = 0;
  if (const char* r = std::getenv("FUSOR_SWEEP_RESUME")) {
    std::string s = r;
    resume_op = s.substr(0, s.find(':'));
    if (s.find(':') != std::string::npos) resume_index = std::atoi(s.c_str() + s.find(':') + 1);
  }
  const char* dir_env = std::getenv("FUSOR_SWEEP_DIR");
  const std::filesystem::path dir =
      dir_env ? std::filesystem::path(dir_env) : std::filesystem::path(::testing::TempDir()) / "fusor_sweep";
  std::filesystem::create_directories(dir);

  // Newest schema of each default-domain op libonnx knows, then fusor's ops it does not know.
  std::map<std::string, const onnx::OpSchema*> ops;
  static const std::vector<onnx::OpSchema> schemas = onnx::OpSchemaRegistry::get_all_schemas();
  for (const auto& s : schemas)
    if (s.domain() == onnx::ONNX_DOMAIN) ops[s.Name()] = &s;
  const size_t with_schema = ops.size();
  for (const auto& name : registered_ops()) ops.emplace(name, nullptr);
  ASSERT_GE(with_schema, 150u) << "libonnx lists too few ONNX ops";

  CrashReporter reporter;
  const auto t0 = std::chrono::steady_clock::now();
  const bool verbose = std::getenv("FUSOR_SWEEP_VERBOSE") != nullptr;
  int run = 0, failed = 0, clean = 0;
  bool resuming = !resume_op.empty();
  for (const auto& [op, schema] : ops) {
    if (!only.empty() && !only.count(op)) continue;
    if (resuming && op < resume_op) continue;
    ModelMaker maker(op);
    int op_clean = 0;
    for (int i = 0; i < per_op; ++i) {
      const std::string bytes = maker.next(schema);  // generated even when skipped: same models on resume
      if (resuming) {
        if (op == resume_op && i < resume_index) continue;
        resuming = false;
      }
      const std::filesystem::path file = dir / (op + "_" + std::to_string(i) + ".onnx");
      std::snprintf(g_current, sizeof g_current,
                    "\n[sweep] Fuzz.EveryOpWithExtremeIntegers crashed on op %s model %d; the model is %s "
                    "(reproduce: build-san/fusor_fuzz %s; go on past it: FUSOR_SWEEP_RESUME=%s:%d)\n",
                    op.c_str(), i, file.c_str(), file.c_str(), op.c_str(), i + 1);
      {
        std::ofstream f(file, std::ios::binary);
        f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      }
      bool ok = false;
      try {
        std::string error;
        if (fuzz::run_one(bytes, true, &error)) ++clean, ++op_clean;
        else if (verbose) std::printf("%s %d: %s\n", op.c_str(), i, error.c_str());
        ok = true;
      } catch (const std::exception& e) {
        ADD_FAILURE() << "op " << op << " model " << i << ": exception other than fusor::Error ("
                      << typeid(e).name() << "): " << e.what() << "; the model is " << file;
      } catch (...) {
        ADD_FAILURE() << "op " << op << " model " << i << ": unknown exception; the model is " << file;
      }
      ++run;
      if (ok) std::filesystem::remove(file);
      else ++failed;
    }
    if (verbose) std::printf("%s: %d of %d models ran through\n", op.c_str(), op_clean, per_op);
  }
  g_current[0] = '\0';
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("sweep: %d models of %zu ops (%zu with an onnx schema) in %.1f s: %d ran through, %d ended in a "
              "fusor::Error, %d failed\n", run, ops.size(), with_schema,
              secs, clean, run - clean - failed, failed);
  if (only.empty() && resume_op.empty()) {
    EXPECT_EQ(run, static_cast<int>(ops.size()) * per_op);
    // Most models are meant to be refused, but a sweep where (nearly) all are refused no longer
    // reaches shape rules, planning and kernels: the generator or the importer has drifted.
    EXPECT_GE(clean, run / 5) << "too few models got past import";
  }
}

}  // namespace
}  // namespace fusor
