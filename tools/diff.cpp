// `fusor diff`: where two backends (or the fused and unfused plans) part ways.
#include <cstdio>
#include <filesystem>

#include "runtime/diff.h"
#include "runtime/session.h"
#include "runtime/tensor_io.h"
#include "tools/commands.h"

namespace fs = std::filesystem;

namespace fusor {


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
  std::printf("model     %s (%zu nodes)\ninputs    %s\n%s", printable(a.model).c_str(), g.nodes.size(), source.c_str(),
              format_diff(r).c_str());
  if (!a.json.empty()) {
    auto j = diff_to_json(r);
    j["model"] = a.model;
    j["input_source"] = source;
    write_file(a.json, j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", "diff");
  }
  if (!a.extract.empty()) {
    if (!r.culprit) {
      std::printf("\nnothing extracted to %s: no value diverges\n", printable(a.extract).c_str());
    } else {
      extract_reproducer(r, a.extract);
      const DiffSide& tested = a.sides[1].no_fusion && !a.sides[0].no_fusion ? a.sides[0] : a.sides[1];
      std::printf("\nwrote the culprit as a backend-test case to %s (reference outputs from %s);\nreproduce with: fusor conform %s --backend %s\n",
                  printable(a.extract).c_str(), r.reference.c_str(), printable(a.extract).c_str(), tested.backend.c_str());
    }
  }
  return r.culprit ? 1 : 0;
}

}  // namespace fusor
