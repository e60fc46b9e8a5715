// The inputs the CLI's commands run a model on, and the files they will write (tools/commands.h).
#include <unistd.h>

#include <filesystem>

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
    c.source = printable(inputs_dir);  // printed: a newline in a name must not split the line
    return c;
  }
  // The folder of the model file (a folder argument names the folder itself).
  fs::path dir = fs::path(model_path(model)).parent_path();
  auto sets = want_random ? std::vector<TestCase>{} : load_test_data_sets(dir.empty() ? std::string(".") : dir.string());
  if (!sets.empty()) {
    c.inputs = bind_inputs(g, sets[0].inputs, sets[0].input_names, component);
    c.source = printable(sets[0].dir);
    c.set = std::move(sets[0]);
    return c;
  }
  c.inputs = random_inputs(g, seed, dims);
  c.source = "random (seed " + std::to_string(seed) + ")";
  return c;
}

void check_output_file(const std::string& path, const std::string& option) {
  std::error_code ec;
  const std::string what = option + " '" + printable(path) + "'";
  if (fs::is_directory(path, ec)) throw Error("io", what + " is a folder, not a file");
  if (fs::is_symlink(fs::symlink_status(path, ec)) && !fs::exists(path, ec))
    throw Error("io", what + " is a symlink to nothing");
  if (fs::exists(path, ec)) {
    if (::access(path.c_str(), W_OK) != 0) throw Error("io", what + " is not writable");
    return;
  }
  const fs::path parent = fs::path(path).parent_path();
  const std::string dir = parent.empty() ? std::string(".") : parent.string();
  if (!fs::is_directory(dir, ec)) throw Error("io", what + ": the folder '" + printable(dir) + "' does not exist");
  if (::access(dir.c_str(), W_OK) != 0) throw Error("io", what + ": the folder '" + printable(dir) + "' is not writable");
}

}  // namespace fusor
