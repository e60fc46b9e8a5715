// fusor.backends / devices / conform / explain: the CLI's commands as data (lists and dicts).
#include <filesystem>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "backends/backend.h"
#include "ir/kernel_spec.h"
#include "runtime/conform.h"
#include "runtime/session.h"
#include "runtime/tensor_io.h"

namespace nb = nanobind;
using namespace fusor;

namespace {

const char* status_name(CaseStatus s) {
  return s == CaseStatus::passed ? "passed" : s == CaseStatus::failed ? "failed" : "skipped";
}

}  // namespace

nb::object to_numpy(Tensor&& t, const std::string& what);  // bindings.cpp

void bind_tools(nb::module_& m) {
  m.def(
      "read_tensor",
      [](const nb::bytes& path_bytes) {  // os.fsencode(path): any name Linux allows
        const std::string path(path_bytes.c_str(), path_bytes.size());
        Tensor t;
        {
          nb::gil_scoped_release release;
          t = read_tensor(path);
        }
        return to_numpy(std::move(t), "'" + printable(path) + "'");
      },
      nb::arg("path"), "Reads an ONNX TensorProto (.pb) or NumPy .npy file into a NumPy array.");

  m.def("backends", &backend_names, "Backends built into this fusor: ref, cpu, vulkan, cuda.");

  m.def(
      "devices",
      [] {
        struct Row {
          std::string backend, name, details, error;
          int index;
        };
        std::vector<Row> rows;
        {
          nb::gil_scoped_release release;
          for (auto& b : backend_names()) {
            try {
              auto devs = make_backend(b)->devices();
              for (size_t i = 0; i < devs.size(); ++i) rows.push_back({b, devs[i].name, devs[i].details, "", static_cast<int>(i)});
            } catch (const std::exception& e) {
              rows.push_back({b, "", "", e.what(), -1});
            }
          }
        }
        nb::list l;
        for (auto& r : rows) {
          if (r.index < 0) continue;  // a backend that cannot start lists no device
          nb::dict d;
          d["backend"] = r.backend;
          d["index"] = r.index;
          d["name"] = r.name;
          d["details"] = r.details;
          l.append(d);
        }
        return l;
      },
      "Every device of every backend: [{'backend', 'index', 'name', 'details'}].");

  m.def(
      "conform",
      [](const std::vector<nb::bytes>& path_bytes, const std::vector<std::string>& backends, double rtol, double atol) {
        std::vector<std::string> paths;
        for (const auto& b : path_bytes) paths.emplace_back(b.c_str(), b.size());
        std::vector<CaseResult> results;
        {
          nb::gil_scoped_release release;
          ConformOptions o;
          if (!backends.empty()) o.backends = backends;
          o.rtol = rtol;
          o.atol = atol;
          auto cases = find_cases(paths);
          if (cases.empty()) throw Error("conform", "no model.onnx found under the given paths");
          results = run_conformance(cases, o, [](const CaseResult&, size_t, size_t) {});
        }
        nb::list l;
        for (auto& r : results) {
          nb::dict d;
          d["case"] = r.case_dir;
          d["backend"] = r.backend;
          d["status"] = status_name(r.status);
          d["detail"] = r.detail;
          d["max_abs"] = r.max_abs;
          d["max_rel"] = r.max_rel;
          l.append(d);
        }
        return l;
      },
      nb::arg("paths"), nb::arg("backends") = std::vector<std::string>{"ref"}, nb::arg("rtol") = -1.0,
      nb::arg("atol") = -1.0);

  m.def(
      "explain",
      [](const nb::bytes& path_bytes, bool fusion) {
        const std::string path(path_bytes.c_str(), path_bytes.size());
        Plan p;
        {
          nb::gil_scoped_release release;
          Graph g = load_model(model_path(path));
          // As `fusor explain`: test_data_set_0 next to the model, else seeded random inputs,
          // which cannot fix a shape read from an input's values (a Reshape target, TopK's k):
          // such an error says so instead of naming only the made-up value.
          const std::filesystem::path set0 = std::filesystem::path(model_path(path)).parent_path() / "test_data_set_0";
          std::error_code ec;
          Graph sg;
          if (std::filesystem::is_directory(set0, ec)) {  // its inputs only: the outputs are not needed here
            std::vector<std::string> names;
            const std::vector<Tensor> ins = read_numbered_inputs(set0.string(), &names);
            sg = specialize(g, bind_inputs(g, ins, names, "explain"));
          } else {
            try {
              sg = specialize(g, random_inputs(g, 0));
            } catch (const Unsupported&) {
              throw;
            } catch (const Error& e) {
              throw Error(e.component(), e.message() +
                                             " (with random inputs, seed 0: a shape that depends on an input's values needs real "
                                             "ones, e.g. a test_data_set_0 next to the model)");
            }
          }
          FusionOptions fo;
          fo.fuse = fusion;
          p = build_plan(sg, fo);
        }
        nb::list kernels;
        for (size_t i = 0; i < p.kernels.size(); ++i) {
          const KernelSpec& k = p.kernels[i];
          nb::dict d;
          d["index"] = static_cast<int>(i);
          d["name"] = k.name;
          d["kind"] = fusion_kind_name(k.kind);
          d["ops"] = k.fused_ops;
          d["nodes"] = k.fused_nodes;
          d["inputs"] = static_cast<int>(k.input_buffers().size());
          d["bytes_read"] = kernel_bytes_read(p, k);
          d["bytes_written"] = kernel_bytes_written(p, k);
          kernels.append(d);
        }
        nb::dict r;
        r["kernels"] = kernels;
        r["onnx_nodes"] = p.original_nodes;
        r["primitive_nodes"] = p.graph.nodes.size();
        r["bytes_fused"] = p.bytes_fused;
        r["bytes_unfused"] = p.bytes_unfused;
        r["arena_bytes"] = p.arena_bytes;
        r["naive_bytes"] = p.naive_bytes;
        return r;
      },
      nb::arg("path"), nb::arg("fusion") = true);
}
