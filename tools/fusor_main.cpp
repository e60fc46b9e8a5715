// The fusor CLI: run, conform, explain, bench, devices. Every command is a thin layer over
// the library; errors print one line and exit non-zero.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iostream>
#include <charconv>
#include <limits>
#include <map>
#include <new>
#include <thread>

#include <nlohmann/json.hpp>

#include "backends/backend.h"
#include "ir/output_forms.h"
#include "runtime/conform.h"
#include "runtime/diff.h"
#include "runtime/segments.h"
#include "runtime/session.h"
#include "runtime/tensor_io.h"
#include "tools/commands.h"

namespace fs = std::filesystem;
using namespace fusor;

namespace {

std::string summarize(const Tensor& t) {
  char buf[256];
  if (t.dtype() == DType::string) {
    std::string first;
    for (int64_t i = 0; i < std::min<int64_t>(t.numel(), 4); ++i) first += (i ? ", '" : "'") + printable(t.strings[i]) + "'";
    return "[" + first + (t.numel() > 4 ? ", ...]" : "]");
  }
  if (t.numel() == 0) return "empty";
  double mn = INFINITY, mx = -INFINITY, sum = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = t.get(i);
    mn = std::min(mn, v), mx = std::max(mx, v), sum += v;
  }
  std::string first;
  for (int64_t i = 0; i < std::min<int64_t>(t.numel(), 4); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.6g", i ? ", " : "", t.get(i));
    first += buf;
  }
  std::snprintf(buf, sizeof buf, "min %.6g max %.6g mean %.6g  [%s%s]", mn, mx, sum / t.numel(), first.c_str(),
                t.numel() > 4 ? ", ..." : "");
  return buf;
}

int cmd_run(const std::string& model, std::string backend, const std::string& inputs_dir, uint64_t seed, bool seed_given,
            const InputDims& dims, const std::string& out_dir, int device, const CompareOptions& check, bool no_fallback) {
  std::string mp = model_path(model);
  if (backend.empty()) backend = best_backend();
  CompileOptions opts;
  opts.device = device;
  opts.fallback = !no_fallback;
  // The device opens while the file loads (Backend::prepare; compile waits for it below). A bad
  // backend name is reported after the model loads, so a missing file is still the first error.
  std::unique_ptr<Backend> b;
  std::exception_ptr bad_backend;
  try {
    b = make_backend(backend);
  } catch (const Error&) {
    bad_backend = std::current_exception();
  }
  std::jthread opener;
  if (b) opener = std::jthread([&] { b->prepare(opts); });
  Graph g = load_model(mp);
  if (bad_backend) std::rethrow_exception(bad_backend);
  // --seed, --shape or --dim ask for random inputs even next to a test_data_set_0.
  CommandInputs ci = choose_inputs(g, model, inputs_dir, seed_given || !dims.shapes.empty() || !dims.dims.empty(), seed, dims, "run");
  const std::vector<Tensor>& inputs = ci.inputs;
  const std::string& source = ci.source;
  std::vector<Tensor> expected;
  // A set of inputs only is a source of inputs (nothing to check); with outputs, all of them.
  if (ci.set && !ci.set->outputs.empty()) {
    check_expected_outputs(g, *ci.set, "run");
    expected = expected_outputs(g, *ci.set, "run");
  }
  std::printf("model   %s (%zu nodes, opset %d)\nbackend %s\ninputs  %s\n", printable(mp).c_str(), g.nodes.size(), g.opset,
              backend.c_str(), source.c_str());
  auto t0 = std::chrono::steady_clock::now();
  // A shape a value computed inside the model sets (a detector's NMS): its cone runs where the
  // model will (cone_runner), once the device is open.
  Graph sg = specialize(g, inputs, nullptr, cone_runner_after_open(opener, *b, opts));
  if (!out_dir.empty()) {  // an output --out cannot write fails now, not after the run
    std::error_code ec;
    fs::create_directories(out_dir, ec);
    if (ec || !fs::is_directory(out_dir)) throw Error("io", "cannot create the output folder '" + printable(out_dir) + "'" + (ec ? ": " + ec.message() : ""));
    if (::access(out_dir.c_str(), W_OK) != 0) throw Error("io", "--out '" + printable(out_dir) + "' is not writable");
    for (int o : sg.outputs)
      check_pb_writable("output '" + printable(sg.values[o].name) + "' (--out)", sg.values[o].dtype, sg.values[o].shape);
  }
  if (opener.joinable()) opener.join();
  auto exe = compile_with_fallback(*b, sg, opts);
  auto t1 = std::chrono::steady_clock::now();
  for (const GraphBreak& gb : graph_breaks(*exe)) std::printf("break   %s\n", describe(gb).c_str());
  RunStats st;
  auto outs = exe->run(fed_inputs(g, inputs), &st);
  auto t2 = std::chrono::steady_clock::now();
  present_outputs(sg, outs);
  for (size_t k = 0; k < outs.size(); ++k) {
    const std::string form = output_form_type(sg, k);
    if (!form.empty() && outs[k].dtype() != DType::string)  // ZipMap: N maps, shown as their [N, C] values
      std::printf("output  %s %s of %lld maps, values %s %s: %s\n", printable(sg.values[sg.outputs[k]].name).c_str(), form.c_str(),
                  static_cast<long long>(outs[k].shape()[0]), dtype_name(outs[k].dtype()), shape_str(outs[k].shape()).c_str(),
                  summarize(outs[k]).c_str());
    else
      std::printf("output  %s %s %s: %s\n", printable(sg.values[sg.outputs[k]].name).c_str(), dtype_name(outs[k].dtype()),
                  shape_str(outs[k].shape()).c_str(), summarize(outs[k]).c_str());
  }
  std::printf("time    compile %.1f ms, run %.3f ms (%d kernels)\n",
              std::chrono::duration<double, std::milli>(t1 - t0).count(),
              std::chrono::duration<double, std::milli>(t2 - t1).count(), exe->kernel_count());
  if (!out_dir.empty()) {  // the folder was made before the run
    for (size_t k = 0; k < outs.size(); ++k) {
      const std::string file = (fs::path(out_dir) / ("output_" + std::to_string(k) + ".pb")).string();
      if (k < sg.output_forms.size() && sg.output_forms[k].kind == Graph::OutputForm::Kind::zipmap)
        write_map_sequence_pb(file, outs[k], sg.output_forms[k], sg.values[sg.outputs[k]].name);
      else
        write_tensor_pb(file, outs[k], sg.values[sg.outputs[k]].name);
    }
    std::printf("wrote   %zu outputs to %s\n", outs.size(), printable(out_dir).c_str());
  }
  if (expected.empty()) return 0;
  std::string note = numerics_note(backend, device);
  if (!note.empty()) std::printf("note    %s %s\n", backend.c_str(), note.c_str());
  bool ok = true;
  for (size_t k = 0; k < expected.size() && k < outs.size(); ++k) {
    auto c = compare_tensors(outs[k], expected[k], reference_check(check.rtol, check.atol, check.exact));
    std::printf("check   output %zu vs %s: %s (max abs %.3g, max rel %.3g, max %lld ulp)%s%s\n", k, source.c_str(),
                c.ok ? "PASS" : "FAIL", c.max_abs, c.max_rel, static_cast<long long>(c.max_ulp), c.ok ? "" : ": ",
                c.message.c_str());
    ok = ok && c.ok;
  }
  return ok ? 0 : 1;
}

int cmd_conform(const std::vector<std::string>& paths, std::vector<std::string> backends, const CompareOptions& check,
                bool verbose, const std::string& json_path, bool no_fallback, bool bisect) {
  // --json - (or /dev/stdout) puts the JSON alone on stdout, for `| jq`; the lines a person
  // reads go to stderr then.
  const bool json_stdout = json_path == "-" || json_path == "/dev/stdout";
  FILE* human = json_stdout ? stderr : stdout;
  if (!json_stdout && !json_path.empty()) check_output_file(json_path, "--json");
  // Backends named are checked before any case runs: a typo is an error (exit 2); one with no
  // device here is said once (a run that compared nothing exits 1 below). Each runs once.
  std::vector<std::string> named;
  for (const auto& b : backends)
    if (std::find(named.begin(), named.end(), b) == named.end()) named.push_back(b);
  backends = named;
  for (const auto& b : backends)
    if (make_backend(b)->devices().empty())
      std::fprintf(stderr, "fusor: conform: backend '%s' sees no device on this machine\n", b.c_str());
  ConformOptions o;
  o.fallback = !no_fallback;
  if (!backends.empty()) o.backends = backends;
  o.rtol = check.rtol;
  o.atol = check.atol;
  o.exact = check.exact;
  auto cases = find_cases(paths);
  if (cases.empty()) throw Error("conform", "no model.onnx found under the given paths");
  // Said once up front (and again on each failure): what a device cannot compute exactly.
  for (const auto& b : o.backends) {
    std::string note = numerics_note(b);
    if (!note.empty()) std::fprintf(human, "note: %s %s\n", b.c_str(), note.c_str());
  }
  std::map<std::string, std::array<int, 3>> per_backend;
  const bool tty = isatty(fileno(human));
  auto results = run_conformance(cases, o, [&](const CaseResult& r, size_t done, size_t total) {
    const char* s = r.status == CaseStatus::passed ? "PASS" : r.status == CaseStatus::failed ? "FAIL" : "SKIP";
    per_backend[r.backend][static_cast<int>(r.status)]++;
    if (tty) std::fprintf(human, "\r\033[K");
    if (verbose || r.status != CaseStatus::passed || !tty)
      std::fprintf(human, "%s %-7s %s: %s\n", s, r.backend.c_str(), printable(r.case_dir).c_str(), r.detail.c_str());
    if (bisect && r.status == CaseStatus::failed)
      std::fprintf(human, "     %-7s %s\n", "", bisect_case(r.case_dir, r.backend, o.rtol, o.atol).c_str());
    if (tty) std::fprintf(human, "[%zu/%zu] %s", done, total, printable(r.case_dir).c_str());
    else if (total >= 50 && done % 100 == 0) std::fprintf(stderr, "progress: %zu/%zu cases\n", done, total);
    std::fflush(human);
  });
  if (tty) std::fprintf(human, "\r\033[K");
  int p = 0, f = 0, s = 0;
  for (auto& [b, c] : per_backend) {
    std::fprintf(human, "%-7s %d passed, %d failed, %d skipped\n", b.c_str(), c[0], c[1], c[2]);
    p += c[0], f += c[1], s += c[2];
  }
  std::fprintf(human, "%d passed, %d failed, %d skipped\n", p, f, s);
  if (!json_path.empty()) {
    // One record per (case, backend) plus the per-backend totals, for CI dashboards.
    auto tol = [](double v) { return v < 0 ? nlohmann::json("dtype default") : nlohmann::json(v); };
    nlohmann::json j = {{"rtol", tol(o.rtol)}, {"atol", tol(o.atol)}, {"exact", o.exact}, {"backends", o.backends},
                        {"cases", nlohmann::json::array()}};
    for (auto& [b, c] : per_backend) j["summary"][b] = {{"passed", c[0]}, {"failed", c[1]}, {"skipped", c[2]}};
    for (auto& r : results) {
      const char* st = r.status == CaseStatus::passed ? "passed" : r.status == CaseStatus::failed ? "failed" : "skipped";
      j["cases"].push_back({{"case", r.case_dir}, {"backend", r.backend}, {"status", st}, {"detail", r.detail},
                            {"max_abs", json_number(r.max_abs)}, {"max_rel", json_number(r.max_rel)}, {"max_ulp", r.max_ulp}, {"host_nodes", r.host_nodes}});
    }
    // Details quote model text, which may not be UTF-8.
    const std::string text = j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (json_stdout) std::fwrite(text.data(), 1, text.size(), stdout);
    else write_file(json_path, text, "conform");
  }
  // Nothing compared (every case skipped: unsupported, no test sets) is not a pass.
  if (f == 0 && p == 0) {
    std::fprintf(stderr, "fusor: conform: no case was checked (%d skipped)\n", s);
    return 1;
  }
  return f ? 1 : 0;
}

int cmd_devices() {
  for (auto& name : backend_names()) {
    try {
      auto b = make_backend(name);
      auto devs = b->devices();
      if (devs.empty()) std::printf("%-7s (no device)\n", name.c_str());
      for (size_t i = 0; i < devs.size(); ++i) {
        std::printf("%-7s [%zu] %s: %s\n", name.c_str(), i, devs[i].name.c_str(), devs[i].details.c_str());
        if (!devs[i].numerics_note.empty()) std::printf("%-7s     note: %s\n", "", devs[i].numerics_note.c_str());
      }
    } catch (const std::exception& e) {
      std::printf("%-7s unavailable: %s\n", name.c_str(), e.what());
    }
  }
  return 0;
}

}  // namespace

// Option values out of their domain are refused at parse time (exit 105 with the option named)
// rather than read as something else: a negative tolerance meant "dtype default" and NaN one
// passed every case, --iters 0 printed a median of -1 us, --device -1 on cpu ran on the host.
const CLI::Validator kTolerance(
    [](std::string& v) -> std::string {
      double d = 0;
      try {
        size_t used = 0;
        d = std::stod(v, &used);
        if (used != v.size()) return "'" + v + "' is not a number";
      } catch (const std::exception&) {
        return "'" + v + "' is not a number";
      }
      return std::isfinite(d) && d >= 0 ? "" : "a tolerance must be finite and >= 0, got " + v;
    },
    "TOLERANCE >= 0");
// --seed is a uint64: CLI11 read "-1" as 2^64-1 and saturated 10^23 to it.
const CLI::Validator kSeed(
    [](std::string& v) -> std::string {
      uint64_t x = 0;
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
      if (v.empty() || ec != std::errc() || end != v.data() + v.size())
        return "a seed must be an integer in [0, 2^64), got '" + v + "'";
      return "";
    },
    "SEED");
// A vector option taking one value per use, repeated to give more: by default CLI11 lets a
// vector option take every word after it (`--backend cpu case1 case2` read the cases as
// backends, `--dim N=3 MODEL` the model path).
CLI::Option* repeatable(CLI::Option* o) {
  return o->expected(1)->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

const CLI::Validator kNotEmpty([](std::string& v) -> std::string { return v.empty() ? "an empty value is not allowed" : ""; },
                               "NOT EMPTY");

int main(int argc, char** argv) {
  CLI::App app{"fusor: an operator-fusion runtime for ONNX models (CUDA, Vulkan/SPIR-V, CPU)"};
  app.set_version_flag("--version", std::string("fusor ") + FUSOR_VERSION);
  app.require_subcommand(1);

  std::string model, backend, inputs_dir, out_dir;
  uint64_t seed = 0;
  int device = 0;
  auto* run = app.add_subcommand("run", "run a model and print its outputs (checks them against test_data_set_* when present)");
  run->add_option("model", model, "model.onnx or its folder")->required();
  run->add_option("--backend", backend, "ref, cpu, vulkan or cuda (default: the best present)")->check(kNotEmpty);
  auto* run_inputs = run->add_option("--inputs", inputs_dir, "folder of input_K.pb / input_K.npy files")->check(kNotEmpty);
  auto* run_seed = run->add_option("--seed", seed, "use seeded random inputs (even where a test_data_set_0 sits next to the model)")->check(kSeed);
  run_inputs->excludes(run_seed);
  DimOptions run_dims, explain_dims, bench_dims;
  // Files given with --inputs fix every shape: --shape / --dim beside them would be ignored, so
  // CLI11 refuses the pair in one line.
  auto add_dim_options = [](CLI::App* c, DimOptions& d, CLI::Option* inputs) {
    inputs->excludes(repeatable(c->add_option("--shape", d.shapes, "shape of an input with dynamic dims, NAME=1x3x224x224 (repeatable)")));
    inputs->excludes(repeatable(c->add_option("--dim", d.dims, "value of a named (dim_param) dynamic dim, NAME=VALUE, for every input using it (repeatable)")));
  };
  add_dim_options(run, run_dims, run_inputs);
  run->add_option("--out", out_dir, "write outputs as output_K.pb here")->check(kNotEmpty);
  run->add_option("--device", device, "device index")->check(CLI::Range(0, std::numeric_limits<int>::max()));
  CompareOptions run_check;
  run->add_option("--rtol", run_check.rtol, "relative tolerance of the output check for floats (default per dtype: see README)")->check(kTolerance);
  run->add_option("--atol", run_check.atol, "absolute tolerance of the output check for floats (default per dtype)")->check(kTolerance);
  run->add_flag("--exact", run_check.exact, "compare float outputs bit for bit (sign of zero, NaN positions)");
  bool run_no_fallback = false;
  run->add_flag("--no-fallback", run_no_fallback, "refuse a model with ops the backend lacks instead of running them on the host");

  std::vector<std::string> paths, backends;
  CompareOptions conform_check;
  bool verbose = false;
  std::string conform_json;
  auto* conform = app.add_subcommand("conform", "run ONNX backend-test cases and compare with stored outputs");
  conform->add_option("paths", paths, "case folders or folders of cases")->required();
  repeatable(conform->add_option("--backend", backends, "backend to run (repeatable)")->check(kNotEmpty));
  conform->add_option("--rtol", conform_check.rtol, "relative tolerance for floats (default per dtype: f32/f64 1e-3, f16 1e-3, bf16 1.6e-2)")->check(kTolerance);
  conform->add_option("--atol", conform_check.atol, "absolute tolerance for floats (default per dtype: f32/f64 1e-7, f16/bf16 1e-5)")->check(kTolerance);
  conform->add_flag("--exact", conform_check.exact, "compare float outputs bit for bit (sign of zero, NaN positions)");
  conform->add_flag("-v,--verbose", verbose, "print passing cases too");
  conform->add_option("--json", conform_json, "also write every result and the totals to this JSON file ('-': to stdout, the summary to stderr)")->check(kNotEmpty);
  bool conform_no_fallback = false;
  conform->add_flag("--no-fallback", conform_no_fallback, "skip cases with ops the backend lacks instead of running them on the host");
  bool bisect = false;
  conform->add_flag("--bisect", bisect, "on each failing case, name the first op where the backend parts from ref");

  DiffArgs df;
  int diff_no_fusion = 0;
  std::vector<std::string> diff_backends_list;
  auto* diff = app.add_subcommand("diff", "run a model on two backends and name the first op where they part ways");
  diff->add_option("model", df.model, "model.onnx or its folder")->required();
  auto* diff_backend_opt = repeatable(diff->add_option("--backend", diff_backends_list, "backend (twice: reference, then tested)"));
  auto* diff_nf_opt = diff->add_flag("--no-fusion", diff_no_fusion,
                                     "the --backend just before runs only the unfused plan (fused vs unfused)");
  auto* diff_inputs = diff->add_option("--inputs", df.inputs_dir, "folder of input_K.pb / input_K.npy files")->check(kNotEmpty);
  auto* diff_seed = diff->add_option("--seed", df.seed, "seed for random inputs (default: test_data_set_0 next to the model, else seed 0)")->check(kSeed);
  diff_inputs->excludes(diff_seed);
  diff->add_option("--rtol", df.rtol, "relative tolerance for floats (default per dtype, as conform: f32/f64 1e-3, f16 1e-3, bf16 1.6e-2)")->check(kTolerance);
  diff->add_option("--atol", df.atol, "absolute tolerance for floats (default per dtype: f32/f64 1e-7, f16/bf16 1e-5)")->check(kTolerance);
  diff->add_option("--json", df.json, "also write the whole report to this JSON file")->check(kNotEmpty);
  diff->add_option("--extract", df.extract, "write the culprit as a backend-test case (model.onnx + test_data_set_0) here")->check(kNotEmpty);

  auto* devices = app.add_subcommand("devices", "list backends built in and the devices each sees");

  ExplainArgs ex;
  auto* explain = app.add_subcommand("explain", "show the fused kernels, bytes moved and the memory plan");
  explain->add_option("model", ex.model, "model.onnx or its folder")->required();
  explain->add_option("--dot", ex.dot, "write a Graphviz file (and .svg when dot is installed)")->check(kNotEmpty);
  explain->add_flag("--no-fusion", ex.no_fusion, "show the unfused plan");
  explain->add_option("--source", ex.source, "print each kernel's generated source (cuda)")->check(CLI::IsMember({"cuda"}));
  explain->add_option("--backend", ex.backend, "list the graph breaks (nodes run on the host) of this backend (default: the best present)")->check(kNotEmpty);
  add_dim_options(explain, explain_dims,
                  explain->add_option("--inputs", ex.inputs_dir, "folder of input_K.pb / input_K.npy files (default: test_data_set_0 next to the model, else random)")
                      ->check(kNotEmpty));
  explain->add_flag("--no-fallback", ex.no_fallback, "fail when the backend would need the host for some node");

  BenchArgs bn;
  auto* bench = app.add_subcommand("bench", "time a model on a backend");
  bench->add_option("model", bn.model, "model.onnx or its folder")->required();
  bench->add_option("--backend", bn.backend, "backend (default: the best present)")->check(kNotEmpty);
  auto* bench_inputs = bench->add_option("--inputs", bn.inputs_dir, "folder of input_K.pb / input_K.npy files (default: test_data_set_0 next to the model, else random)")
                           ->check(kNotEmpty);
  bench->add_option("--iters", bn.iters, "timed iterations")->check(CLI::Range(1, std::numeric_limits<int>::max()));
  bench->add_option("--warmup", bn.warmup, "warm-up iterations")->check(CLI::Range(0, std::numeric_limits<int>::max()));
  bench->add_flag("--no-fusion", bn.no_fusion, "one kernel per primitive op");
  bench->add_flag("--eager", bn.eager, "no graph replay / re-record the command buffer every run");
  bench->add_flag("--json", bn.json, "machine-readable output");
  bench->add_option("--device", bn.device, "device index")->check(CLI::Range(0, std::numeric_limits<int>::max()));
  bench->add_flag("--phases", bn.phases,
                  "print where the time from ONNX file to first result goes: one line per phase (wall and CPU ms)");
  bench->add_flag("--serial-open", bn.serial_open, "open the device after loading the model, not during (for measuring)");
  bench->add_option("--trace", bn.trace, "write a Chrome/Perfetto trace (JSON): compile phases and one slice per kernel")->check(kNotEmpty);
  add_dim_options(bench, bench_dims, bench_inputs);
  bench->add_flag("--no-fallback", bn.no_fallback, "refuse a model with ops the backend lacks instead of running them on the host");

  // CLI11 says only "A subcommand is required" for a misspelt one.
  std::string names;
  bool known = false;
  for (const CLI::App* c : app.get_subcommands({})) {
    names += (names.empty() ? "" : ", ") + c->get_name();
    known = known || (argc > 1 && c->get_name() == argv[1]);
  }
  if (argc > 1 && argv[1][0] != '-' && !known) {
    std::fprintf(stderr, "fusor: error: unknown command '%s' (commands: %s)\n", printable(argv[1]).c_str(), names.c_str());
    return static_cast<int>(CLI::ExitCodes::ExtrasError);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  auto dispatch = [&]() -> int {
  try {

    if (*run)
      return cmd_run(model, backend, inputs_dir, seed, run_seed->count() > 0, run_dims.parse(), out_dir, device, run_check,
                     run_no_fallback);
    if (*conform) return cmd_conform(paths, backends, conform_check, verbose, conform_json, conform_no_fallback, bisect);
    if (*diff) {
      // --no-fusion marks the --backend given just before it, so the order on the line matters.
      size_t next = 0;
      for (CLI::Option* opt : diff->parse_order()) {
        if (opt == diff_backend_opt) df.sides.push_back({diff_backends_list.at(next++)});
        else if (opt == diff_nf_opt) {
          if (df.sides.empty()) throw Error("diff", "--no-fusion must follow the --backend it applies to");
          df.sides.back().no_fusion = true;
        }
      }
      (void)diff_no_fusion;
      df.seed_given = diff_seed->count() > 0;
      df.model = model_path(df.model);
      if (!df.json.empty()) check_output_file(df.json, "--json");
      return cmd_diff(df);
    }
    if (*devices) return cmd_devices();
    if (*explain) {
      ex.model = model_path(ex.model);
      ex.dims = explain_dims.parse();
      if (ex.backend.empty()) ex.backend = best_backend();
      return cmd_explain(ex);
    }
    if (*bench) {
      bn.model = model_path(bn.model);
      bn.dims = bench_dims.parse();
      if (bn.backend.empty()) bn.backend = best_backend();
      if (!bn.trace.empty()) check_output_file(bn.trace, "--trace");
      return cmd_bench(bn);
    }
  } catch (const std::filesystem::filesystem_error& e) {
    // The path and the system's reason, tagged like fusor's own I/O errors (the library's
    // text is "filesystem error: status: ..." with the paths in brackets).
    if (e.path1().empty()) {
      std::fprintf(stderr, "fusor: error: [io] %s\n", printable(e.what()).c_str());
      return 2;
    }
    std::string path = printable(e.path1().string());
    std::fprintf(stderr, "fusor: error: [io] '%s': %s\n", path.c_str(), e.code().message().c_str());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "fusor: error: [memory] out of host memory: a tensor or buffer of this model (or of its "
                         "--shape / --dim) is larger than the process can allocate\n");
    return 2;
  } catch (const std::exception& e) {
    // One line of UTF-8 always: fusor::Error already is; a library's message (a shader
    // compiler's log) is folded here.
    std::fprintf(stderr, "fusor: error: %s\n", fusor::one_line(e.what()).c_str());
    return 2;
  }
  return 0;
  };
  const int rc = dispatch();
  // Output that never arrived (a full disk, a closed pipe with SIGPIPE ignored) is an error, not
  // a silent exit 0.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "fusor: error: [io] writing to stdout failed: %s\n", std::strerror(errno));
    return 2;
  }
  return rc;
}
