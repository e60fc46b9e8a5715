// `fusor conform`: runs ONNX backend-test cases (model.onnx + test_data_set_*/) on backends
// and compares with the stored outputs.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fusor {

struct ConformOptions {
  std::vector<std::string> backends{"ref"};
  // Tolerances for float outputs; negative: the expected output's dtype default
  // (default_tolerance in ir/tensor.h: float32/64 rtol 1e-3 atol 1e-7, the ONNX backend-test
  // ones; float16 1e-3/1e-5; bfloat16 1.6e-2/1e-5). Integers and bools are always exact.
  double rtol = -1, atol = -1;
  bool exact = false;  // floats bit for bit (sign of zero counts; NaN matches any NaN)
  bool fallback = true;  // ops a GPU backend lacks run on the host (runtime/segments.h)
};

enum class CaseStatus { passed, failed, skipped };

struct CaseResult {
  std::string case_dir;
  std::string backend;
  CaseStatus status = CaseStatus::passed;
  std::string detail;       // error or skip reason, or "max abs .. rel .." on pass (+ host-fallback nodes)
  int host_nodes = 0;       // nodes the backend left to the host (graph breaks), 0 when it ran whole
  double max_abs = 0, max_rel = 0;
  int64_t max_ulp = 0;
};

// The numerics note of the backend's device `device` (DeviceInfo::numerics_note) prefixed with
// the device's name, "" when it has none or there is no such device; never throws.
std::string numerics_note(const std::string& backend, int device = 0);

// Every folder under the paths (recursively; symlinked folders count when they are cases, and are
// not walked otherwise; a path may itself
// be a case, or a case's model.onnx) that holds a model.onnx, sorted, each case once however it
// was named. Throws Error for a missing path, an unlistable folder given, or a file other than
// model.onnx.
std::vector<std::string> find_cases(const std::vector<std::string>& paths);

// Runs one case on one backend; never throws for bad models (that is a failed/skipped case).
CaseResult run_case(const std::string& case_dir, const std::string& backend, const ConformOptions& opts);

// Runs all cases on all backends; on_result is called after each (for printing/progress).
// A failure on a backend with a numerics note carries the note in its detail.
std::vector<CaseResult> run_conformance(const std::vector<std::string>& cases, const ConformOptions& opts,
                                        const std::function<void(const CaseResult&, size_t done, size_t total)>& on_result);

}  // namespace fusor
