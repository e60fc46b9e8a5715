// `fusor conform`: runs ONNX backend-test cases (model.onnx + test_data_set_*/) on backends
// and compares with the stored outputs.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace fusor {

struct ConformOptions {
  std::vector<std::string> backends{"ref"};
  double rtol = 1e-3, atol = 1e-7;  // ONNX backend-test defaults
};

enum class CaseStatus { passed, failed, skipped };

struct CaseResult {
  std::string case_dir;
  std::string backend;
  CaseStatus status = CaseStatus::passed;
  std::string detail;       // error or skip reason, or "max abs .. rel .." on pass
  double max_abs = 0, max_rel = 0;
};

// Every folder under the paths (recursively; a path may itself be a case) that holds a
// model.onnx, sorted.
std::vector<std::string> find_cases(const std::vector<std::string>& paths);

// Runs one case on one backend; never throws for bad models (that is a failed/skipped case).
CaseResult run_case(const std::string& case_dir, const std::string& backend, const ConformOptions& opts);

// Runs all cases on all backends; on_result is called after each (for printing/progress).
std::vector<CaseResult> run_conformance(const std::vector<std::string>& cases, const ConformOptions& opts,
                                        const std::function<void(const CaseResult&, size_t done, size_t total)>& on_result);

}  // namespace fusor
