// Commands of the fusor CLI implemented in their own files (tools/*.cpp is linked into the CLI).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/diff.h"
#include "runtime/session.h"
#include "runtime/tensor_io.h"

namespace fusor {

// The inputs a command runs a model on (run, diff, explain, bench): the numbered files of
// inputs_dir (bound by name where the files name them); else, unless random ones are asked for
// (want_random: --seed, --shape, --dim), the first test_data_set_* next to the model (a model
// whose shapes follow an input's values, TopK's k, needs its real values); else seeded random
// inputs shaped by dims. component names the command in errors.
struct CommandInputs {
  std::vector<Tensor> inputs;
  std::string source;           // where they came from, as printed
  std::optional<TestCase> set;  // the test set used (its expected outputs), if any
};
CommandInputs choose_inputs(const Graph& g, const std::string& model, const std::string& inputs_dir, bool want_random, uint64_t seed,
                            const InputDims& dims, const std::string& component);

// cone_runner(b, opts) for a command that opens b's device on the thread `opener` while the
// model loads (Backend::prepare): the first cone waits for that open.
inline ConeRun cone_runner_after_open(std::jthread& opener, Backend& b, const CompileOptions& opts) {
  ConeRun run = cone_runner(b, opts);
  return [&opener, run](const Graph& cone, const std::vector<Tensor>& in, const std::string& key) {
    if (opener.joinable()) opener.join();
    return run(cone, in, key);
  };
}

// Throws Error("io") when a file an option will write (conform / diff --json, bench --trace)
// could not be written: its folder is missing or not writable, or the path is a folder. Checked
// before the work, so a long run does not end in an error that hides its result.
void check_output_file(const std::string& path, const std::string& option);

struct ExplainArgs {
  std::string model, dot, source;  // source: "cuda" prints the generated CUDA C
  std::string inputs_dir;          // --inputs (else test_data_set_0 next to the model, else random)
  std::string backend;             // whose graph breaks (nodes left to the host) are listed
  bool no_fusion = false, no_fallback = false;
  InputDims dims;  // --shape / --dim
};
int cmd_explain(const ExplainArgs& a);

struct BenchArgs {
  std::string model, backend;
  std::string trace;  // --trace FILE: write a Chrome/Perfetto trace-event JSON (runtime/trace.h)
  int iters = 50, warmup = 5, device = 0;
  bool no_fusion = false, eager = false, json = false, no_fallback = false;
  bool phases = false;       // --phases: print (or, with --json, add) the load/compile phase profile
  bool serial_open = false;  // --serial-open: open the device after loading, not on a thread during it
  InputDims dims;  // --shape / --dim
  std::string inputs_dir;  // --inputs (else test_data_set_0 next to the model, else random)
};
int cmd_bench(const BenchArgs& a);

struct DiffArgs {
  std::string model, inputs_dir, json, extract;
  std::vector<DiffSide> sides;  // in command-line order; the first is the reference
  uint64_t seed = 0;
  bool seed_given = false;
  double rtol = -1, atol = -1;  // negative: each value's dtype default (runtime/diff.h)
};
// Exit status 0 when nothing diverges, 1 when a culprit is named.
int cmd_diff(const DiffArgs& a);

// Adds --shape NAME=D0xD1x... and --dim NAME=VALUE (both repeatable) to a subcommand; their
// strings go to the vectors, parsed with parse_input_dims after CLI parsing.
struct DimOptions {
  std::vector<std::string> shapes, dims;
  InputDims parse() const { return parse_input_dims(shapes, dims); }
};

// "cuda" when a CUDA device is usable, else "vulkan" when a Vulkan device is, else "cpu".
std::string best_backend();

}  // namespace fusor
