#include "runtime/conform.h"
#include "ir/output_forms.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <new>
#include <set>
#include <sstream>

#include "backends/backend.h"
#include "runtime/segments.h"
#include "runtime/session.h"
#include "runtime/tensor_io.h"

namespace fs = std::filesystem;

namespace fusor {

// error_code forms throughout: an unreadable folder, a symlink loop or a name the OS refuses is
// one Error("conform") naming the path, not a std::filesystem_error.
std::vector<std::string> find_cases(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  std::set<std::string> seen;  // canonical case folders: fx/case, fx/case/ and /abs/fx/case are one case
  auto add = [&](const std::string& dir) {
    std::error_code ec;
    const fs::path c = fs::weakly_canonical(dir, ec);
    if (seen.insert(ec ? dir : c.string()).second) out.push_back(dir);
  };
  for (const auto& p : paths) {
    std::error_code ec;
    const fs::file_status st = fs::status(p, ec);
    if (ec && ec != std::errc::no_such_file_or_directory)
      throw Error("conform", "path '" + printable(p) + "': " + ec.message());
    if (!fs::exists(st)) throw Error("conform", "path '" + printable(p) + "' does not exist");
    if (fs::is_regular_file(st)) {
      // Only a case's own model.onnx names its folder: another file there would test model.onnx.
      if (fs::path(p).filename() != "model.onnx")
        throw Error("conform", "'" + printable(p) + "' is a file, not a case: conform takes backend-test folders "
                               "(model.onnx with test_data_set_*), their model.onnx, or folders of them");
      const fs::path parent = fs::path(p).parent_path();  // "model.onnx" alone: the current folder
      add(parent.empty() ? std::string(".") : parent.string());
      continue;
    }
    if (fs::exists(fs::path(p) / "model.onnx", ec)) {
      add(p);
      continue;
    }
    // Depth first. A symlinked folder counts when it is itself a case (a suite of links to
    // cases); other symlinked folders are not walked (a link to / would walk the machine). The
    // folder given must be listable; a subfolder that is not (permissions, an entry gone while
    // listing, as in /proc) is skipped.
    std::vector<fs::path> todo{p};
    for (bool top = true; !todo.empty(); top = false) {
      fs::path dir = std::move(todo.back());
      todo.pop_back();
      fs::directory_iterator it(dir, ec), end;
      if (ec && top) throw Error("conform", "cannot list '" + printable(p) + "': " + ec.message());
      for (; !ec && it != end; it.increment(ec)) {
        std::error_code fe;
        const fs::file_status ls = it->symlink_status(fe);
        if (fe) continue;
        if (fs::is_directory(ls)) todo.push_back(it->path());
        else if (fs::is_symlink(ls) && it->is_directory(fe) && fs::is_regular_file(it->path() / "model.onnx", fe))
          add(it->path().string());
        else if (it->path().filename() == "model.onnx" && it->is_regular_file(fe))
          add(it->path().parent_path().string());
      }
      ec.clear();
    }
  }
  std::sort(out.begin(), out.end());
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
      check_expected_outputs(g, tc, "conform");  // before running: a set missing an output cannot pass
      // By name where the files name the inputs: a set may feed an overridable initializer.
      const std::vector<Tensor> inputs = bind_inputs(g, tc.inputs, tc.input_names, "conform");
      Graph sg = specialize(g, inputs, nullptr, cone_runner(*impl, copts));
      auto exe = compile_with_fallback(*impl, sg, copts);
      r.host_nodes = std::max(r.host_nodes, static_cast<int>(graph_breaks(*exe).size()));
      auto outs = exe->run(fed_inputs(g, inputs));
      present_outputs(sg, outs);  // string labels; ZipMap's maps as [N, C], like the expected ones
      const std::vector<Tensor> expected = expected_outputs(g, tc, "conform");
      for (size_t k = 0; k < expected.size(); ++k) {
        auto c = compare_tensors(outs[k], expected[k], reference_check(opts.rtol, opts.atol, opts.exact));
        r.max_abs = std::max(r.max_abs, c.max_abs);
        r.max_rel = std::max(r.max_rel, c.max_rel);
        r.max_ulp = std::max(r.max_ulp, c.max_ulp);
        if (!c.ok) {
          r.status = CaseStatus::failed;
          r.detail = printable(fs::path(tc.dir).filename().string()) + " output " + std::to_string(k) + " ('" +
                     printable(g.values[g.outputs[k]].name) + "'): " + c.message;
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
  } catch (const std::bad_alloc&) {  // as `run` says it, not "std::bad_alloc"
    r.status = CaseStatus::failed;
    r.detail = "[memory] out of host memory: a tensor or buffer of this case is larger than the process can allocate";
  } catch (const std::exception& e) {
    r.status = CaseStatus::failed;
    r.detail = e.what();
  }
  return r;
}

std::vector<CaseResult> run_conformance(const std::vector<std::string>& cases, const ConformOptions& opts,
                                        const std::function<void(const CaseResult&, size_t, size_t)>& on_result) {
  // A NaN tolerance makes every comparison false in one direction and "passes" in another
  // (compare_tensors); an infinite one passes everything. Negative means the dtype default.
  for (double t : {opts.rtol, opts.atol})
    if (!std::isfinite(t)) throw Error("conform", "tolerances must be finite numbers, got " + std::to_string(t));
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
