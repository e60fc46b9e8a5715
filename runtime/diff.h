// `fusor diff`: run one model on two backends (or fused vs unfused on one), compare every
// intermediate value in topological order and name the first op (or fused kernel) whose
// result diverges beyond tolerance. Backends are reached only through make_backend/compile.
//
// How the search runs (reference side R, tested side T):
//  * op stage (unfused): the static graph with every node output exposed as a graph output is
//    compiled with fusion off on R and on T, so each value is one op's result; values are
//    compared in node order.
//  * fusion stage: T runs the fused plan with the values that plan materializes anyway exposed
//    as outputs (so its kernels stay the same); each is compared with R's unfused value, in
//    kernel execution order, and attributed to the kernel that stores it.
// Which stages run: neither side no_fusion -> both (the op stage names an op fault; the fusion
// stage tells whether the culprit also diverges fused, or names a fusion-only fault); exactly
// one side no_fusion -> that side is the reference and only the fusion stage runs (fused vs
// unfused, usually the same backend); both no_fusion -> only the op stage.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/graph.h"

namespace fusor {

struct DiffSide {
  std::string backend;     // a make_backend name
  bool no_fusion = false;  // this side runs only the unfused plan (see above)
  int device = 0;
};

struct DiffOptions {
  // A float element diverges when |t - r| > atol + rtol * |r| (NaN must meet NaN, infinities
  // must match); integer and bool elements must be equal. Negative: the value's dtype default
  // (default_tolerance in ir/tensor.h, as `fusor conform`: fp32 / fp64 1e-3 / 1e-7, fp16 1e-3 /
  // 1e-5, bf16 1.6e-2 / 1e-5).
  double rtol = -1, atol = -1;
  size_t worst = 10;  // rows of DiffReport::worst
};

// Comparison of one value between the reference (r) and the tested side (t).
struct ValueDiff {
  std::string value;              // graph value name
  int node = -1;                  // producing node in DiffReport::graph
  std::string node_name, op_type;
  DType dtype = DType::undefined;
  Shape shape;
  bool diverges = false;
  std::string note;               // "" or why the comparison is special ("shape differs", ...)
  double max_abs = 0, max_rel = 0;
  double max_ulp = 0;             // largest distance in units in the last place of the dtype
                                  // (f32/f16/bf16/f64); integers: the largest |t - r|
  double scale_ulp = 0;           // max_abs in ULPs of the tensor's largest |r| (floats): the
                                  // error against the tensor's scale; max_ulp explodes where a
                                  // result cancels to near zero
  int64_t mismatches = 0, numel = 0;
  int64_t worst_index = -1;       // flat row-major index of the element furthest beyond
  double worst_ref = 0, worst_test = 0;  // tolerance, with both values (-1: none compared)
  double score = 0;               // max over elements of |t - r| / (atol + rtol*|r|); > 1 diverges,
                                  // +inf for a NaN/inf/integer mismatch
  // "agree": every input agreed (an op or kernel fault; graph inputs and constants always do);
  // "inherited": an input already diverged; "unknown": some input could not be compared (a
  // buffer made by decomposition, or a value not stored by the fused plan).
  std::string inputs;
  double inputs_max_ulp = 0;      // largest ULP distance among the compared inputs
  bool fused = false;             // compared in the fusion stage
  int kernel = -1;                // fusion stage: index into DiffReport::kernels (-1: not attributed)
};

// A fused kernel of the tested side's plan (fusion stage only).
struct DiffKernel {
  std::string name, kind;
  std::vector<std::string> ops, nodes;  // primitive ops fused into it, and their node names
};

struct DiffCulprit {
  std::string stage;  // "unfused" or "fused"
  std::string kind;   // "op" (diverges unfused, inputs agree), "fusion" (only the fused plan
                      // diverges), "inherited" (its inputs already diverged: should not happen
                      // for a first divergence, kept for honesty when inputs were not compared)
  ValueDiff value;
  std::string attributes;               // "axis=1, keepdims=0"
  std::vector<std::string> input_info;  // "x float32 [2, 3]" per present input
  // Op stage culprit: how the same value compares in the fused run ("diverges", "agrees" or
  // "not materialized"; "" when the fusion stage did not run).
  std::string fused_check;
  DiffKernel kernel;                    // fusion culprit: the kernel, its fused ops
};

struct DiffReport {
  std::string reference, test;  // "ref", "cpu --no-fusion", ...
  double rtol = -1, atol = -1;  // as DiffOptions: negative is each value's dtype default
  bool op_stage = false, fusion_stage = false;
  std::vector<ValueDiff> unfused, fused;  // every compared value, in comparison order
  std::vector<DiffKernel> kernels;        // the tested side's fused plan (fusion stage)
  std::optional<DiffCulprit> culprit;
  std::vector<ValueDiff> worst;           // the opts.worst largest scores of both stages
  std::map<std::string, double> worst_ulp_by_op;  // op type -> largest max_ulp (float values)
  std::map<std::string, double> worst_scale_ulp_by_op;  // op type -> largest scale_ulp
  std::string fused_plan_note;            // when exposing values changed the fused plan

  // For extract_reproducer: the static graph the search ran on, its inputs and the reference
  // side's value of every compared value (by value id).
  Graph graph;
  std::vector<Tensor> inputs;
  std::map<int, Tensor> ref_values;
};

// Runs the search. model may have symbolic dims (specialised to `inputs`). Throws Error
// ("diff") when a side fails to compile or run (the message names the backend), Unsupported
// when a backend does not support an op of the model.
DiffReport diff_backends(const Graph& model, const std::vector<Tensor>& inputs, const DiffSide& reference,
                         const DiffSide& test, const DiffOptions& opts = {});

// Compares two tensors element by element (see DiffOptions); fills the numeric fields of a
// ValueDiff (value/node fields are left empty).
ValueDiff compare_values(const Tensor& ref, const Tensor& test, double rtol, double atol);

// Writes the culprit as an ONNX backend-test case: dir/model.onnx holding the culprit node (op
// culprit) or the nodes of the fused kernel (fusion culprit), with every non-constant input a
// graph input, and dir/test_data_set_0/input_K.pb, output_K.pb holding the actual inputs and
// the reference side's outputs. `fusor conform dir --backend <test>` then reproduces the
// disagreement. Throws Error("diff") when there is no culprit or a value was not recorded,
// Error("io") when a file cannot be written.
void extract_reproducer(const DiffReport& r, const std::string& dir);
// Throws Error("diff", ...) when dir exists and is not an empty folder: an extracted case is
// written whole into a new or empty folder, never mixed with files already there.
void check_extract_dir(const std::string& dir);

// A score as JSON: the number when finite, else null (JSON has no inf / NaN); diff and conform
// records both write scores this way.
nlohmann::json json_number(double d);

// Everything in the report (tensors excepted) as JSON; +-inf/NaN scores become null.
nlohmann::json diff_to_json(const DiffReport& r);

// `conform --bisect`: one line naming the culprit of a failing backend-test case (a search
// against "ref" on the case's first test_data_set_*). Never throws: a failed search is
// reported in the line.
std::string bisect_case(const std::string& case_dir, const std::string& backend, double rtol, double atol);

// Human-readable report: the culprit block, then the table of the worst values.
std::string format_diff(const DiffReport& r);

}  // namespace fusor
