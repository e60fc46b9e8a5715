#include "runtime/conform.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "backends/backend.h"
#include "runtime/segments.h"
#include "runtime/session.h"
#include "runtime/tensor_io.h"

namespace fs = std::filesystem;

namespace fusor {

std::vector<std::string> find_cases(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    if (!fs::exists(p)) throw Error("conform", "path '" + p + "' does not exist");
    if (fs::is_regular_file(p)) {
      out.push_back(fs::path(p).parent_path().string());
      continue;
    }
    if (fs::exists(fs::path(p) / "model.onnx")) {
      out.push_back(p);
      continue;
    }
    for (auto& e : fs::recursive_directory_iterator(p))
      if (e.is_regular_file() && e.path().filename() == "model.onnx") out.push_back(e.path().parent_path().string());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string numerics_note(const std::string& backend, int device) {
  try {
    auto devs = make_backend(backend)->devices();
    if (device < 0 || static_cast<size_t>(device) >= devs.size() || devs[device].numerics_note.empty()) return "";
    return "device '" + devs[device].name + "' " + devs[device].numerics_note;
  } catch (const std::exception&) {
    return "";  // the case runs report why the backend is unusable
  }
}

CaseResult run_case(const std::string& dir, const std::string& backend, const ConformOptions& opts) {
  CaseResult r;
  r.case_dir = dir;
  r.backend = backend;
  try {
    Graph g = load_model((fs::path(dir) / "model.onnx").string());
    auto sets = load_test_data_sets(dir);
    if (sets.empty()) {
      r.status = CaseStatus::skipped;
      r.detail = "no test_data_set_* folder";
      return r;
    }
    auto impl = make_backend(backend);
    CompileOptions copts;
    copts.fallback = opts.fallback;
    for (auto& tc : sets) {
      Graph sg = specialize(g, tc.inputs);
      auto exe = compile_with_fallback(*impl, sg, copts);
      r.host_nodes = std::max(r.host_nodes, static_cast<int>(graph_breaks(*exe).size()));
      auto outs = exe->run(tc.inputs);
      if (outs.size() < tc.outputs.size())
        throw Error("conform", "backend returned " + std::to_string(outs.size()) + " outputs, expected " +
                                   std::to_string(tc.outputs.size()));
      for (size_t k = 0; k < tc.outputs.size(); ++k) {
        auto c = compare_tensors(outs[k], tc.outputs[k], reference_check(opts.rtol, opts.atol, opts.exact));
        r.max_abs = std::max(r.max_abs, c.max_abs);
        r.max_rel = std::max(r.max_rel, c.max_rel);
        r.max_ulp = std::max(r.max_ulp, c.max_ulp);
        if (!c.ok) {
          r.status = CaseStatus::failed;
          r.detail = fs::path(tc.dir).filename().string() + " output " + std::to_string(k) + " ('" +
                     g.values[g.outputs[k]].name + "'): " + c.message;
          return r;
        }
      }
    }
    std::ostringstream o;
    o << "max abs " << r.max_abs << ", max rel " << r.max_rel << ", max " << r.max_ulp << " ulp";
    if (r.host_nodes) o << " (" << r.host_nodes << " node(s) on the host)";
    r.detail = o.str();
  } catch (const Unsupported& e) {
    r.status = CaseStatus::skipped;
    r.detail = e.what();
  } catch (const std::exception& e) {
    r.status = CaseStatus::failed;
    r.detail = e.what();
  }
  return r;
}

std::vector<CaseResult> run_conformance(const std::vector<std::string>& cases, const ConformOptions& opts,
                                        const std::function<void(const CaseResult&, size_t, size_t)>& on_result) {
  std::vector<CaseResult> all;
  size_t total = cases.size() * opts.backends.size(), done = 0;
  std::map<std::string, std::string> notes;
  for (const auto& b : opts.backends) notes[b] = numerics_note(b);
  for (const auto& c : cases)
    for (const auto& b : opts.backends) {
      all.push_back(run_case(c, b, opts));
      if (all.back().status == CaseStatus::failed && !notes[b].empty()) all.back().detail += " (note: " + notes[b] + ")";
      if (on_result) on_result(all.back(), ++done, total);
    }
  return all;
}

}  // namespace fusor
