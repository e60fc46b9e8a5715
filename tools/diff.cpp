// `fusor diff`: where two backends (or the fused and unfused plans) part ways.
#include <cstdio>
#include <filesystem>

#include "runtime/diff.h"
#include "runtime/session.h"
#include "runtime/tensor_io.h"
#include "tools/commands.h"

namespace fs = std::filesystem;

namespace fusor {

CommandInputs choose_inputs(const Graph& g, const std::string& model, const std::string& inputs_dir, bool want_random, uint64_t seed,
                            const InputDims& dims, const std::string& component) {
  CommandInputs c;
  if (!inputs_dir.empty()) {
    std::vector<std::string> names;  // numbering checked, bound by name where the files name the inputs
    c.inputs = bind_inputs(g, read_numbered_inputs(inputs_dir, &names), names, component);
    c.source = inputs_dir;
    return c;
  }
  // The folder of the model file (a folder argument names the folder itself).
  fs::path dir = fs::path(model_path(model)).parent_path();
  auto sets = want_random ? std::vector<TestCase>{} : load_test_data_sets(dir.empty() ? std::string(".") : dir.string());
  if (!sets.empty()) {
    c.inputs = bind_inputs(g, sets[0].inputs, sets[0].input_names, component);
    c.source = sets[0].dir;
    c.set = std::move(sets[0]);
    return c;
  }
  c.inputs = random_inputs(g, seed, dims);
  c.source = "random (seed " + std::to_string(seed) + ")";
  return c;
}

int cmd_diff(const DiffArgs& a) {
  if (a.sides.size() != 2)
    throw Error("diff", "give exactly two --backend options (got " + std::to_string(a.sides.size()) +
                            "), e.g. --backend ref --backend vulkan, or --backend cpu --no-fusion --backend cpu");
  if (!a.extract.empty()) check_extract_dir(a.extract);  // before the runs, not after
  Graph g = load_model(a.model);
  CommandInputs ci = choose_inputs(g, a.model, a.inputs_dir, a.seed_given, a.seed, InputDims{}, "diff");
  const std::vector<Tensor>& inputs = ci.inputs;
  const std::string& source = ci.source;
  DiffOptions o;
  o.rtol = a.rtol;
  o.atol = a.atol;
  DiffReport r = diff_backends(g, inputs, a.sides[0], a.sides[1], o);
  std::printf("model     %s (%zu nodes)\ninputs    %s\n%s", a.model.c_str(), g.nodes.size(), source.c_str(),
              format_diff(r).c_str());
  if (!a.json.empty()) {
    auto j = diff_to_json(r);
    j["model"] = a.model;
    j["input_source"] = source;
    write_file(a.json, j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", "diff");
  }
  if (!a.extract.empty()) {
    if (!r.culprit) {
      std::printf("\nnothing extracted to %s: no value diverges\n", a.extract.c_str());
    } else {
      extract_reproducer(r, a.extract);
      const DiffSide& tested = a.sides[1].no_fusion && !a.sides[0].no_fusion ? a.sides[0] : a.sides[1];
      std::printf("\nwrote the culprit as a backend-test case to %s (reference outputs from %s);\nreproduce with: fusor conform %s --backend %s\n",
                  a.extract.c_str(), r.reference.c_str(), a.extract.c_str(), tested.backend.c_str());
    }
  }
  return r.culprit ? 1 : 0;
}

}  // namespace fusor
