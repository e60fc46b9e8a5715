// `fusor bench`: times a model on a backend (median and spread of device and host time).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include <nlohmann/json.hpp>

#include "backends/backend.h"
#include "ir/kernel_spec.h"
#include "ir/partition.h"
#include "runtime/segments.h"
#include "runtime/session.h"
#include "runtime/trace.h"
#include "tools/commands.h"

namespace fusor {

namespace {
struct Summary {
  double median = 0, p10 = 0, p90 = 0;
};
Summary summarize(std::vector<double> v) {
  Summary s;
  if (v.empty() || v[0] < 0) return {-1, -1, -1};
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[static_cast<size_t>(q * (v.size() - 1))]; };
  s.median = at(0.5), s.p10 = at(0.1), s.p90 = at(0.9);
  return s;
}

// --phases: one line per phase, indented by nesting, wall ms and the process's CPU ms over it
// (CPU below wall: the phase waited on the driver, the disk or a loaded machine; above: it ran
// on several threads). Phases summed over a thread pool have no CPU column.
void print_phases(const std::vector<Phase>& phases, double to_ready_ms, double first_run_ms) {
  std::printf("phases            wall ms   cpu ms  (new process: %.1f ms to a ready executable, first run %.1f ms)\n",
              to_ready_ms, first_run_ms);
  for (const Phase& p : phases) {
    std::string name = std::string(2 * p.depth, ' ') + p.name;
    if (p.cpu_us < 0) std::printf("  %-58s %9.1f        -\n", name.c_str(), p.dur_us / 1e3);
    else std::printf("  %-58s %9.1f %8.1f\n", name.c_str(), p.dur_us / 1e3, p.cpu_us / 1e3);
  }
}
}  // namespace

int cmd_bench(const BenchArgs& a) {
  PhaseLog log;  // host phases for --trace and --phases (the backends mark theirs: ir/phases.h)
  CompileOptions o;
  o.fusion = !a.no_fusion;
  o.replay = !a.eager;
  o.device = a.device;
  o.fallback = !a.no_fallback;
  auto b = make_backend(a.backend);
  // The device opens (driver, context, libraries: Backend::prepare) on another thread while
  // the file loads; compile() below first waits for it. Its phase is added to the log after.
  const auto t_start = std::chrono::steady_clock::now();
  double open_start_us = log.now_us(), open_us = -1;
  std::jthread opener;
  if (!a.serial_open)
    opener = std::jthread([&] {
      const auto t = std::chrono::steady_clock::now();
      b->prepare(o);
      open_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count();
    });
  // load_ms: ONNX file -> static graph (parse, shape inference, folding, and for shapes set by
  // values computed inside the model their cones, run on the device once it is open); with
  // compile_ms it is the whole "model to ready executable" time.
  auto tl = std::chrono::steady_clock::now();
  Graph g = [&] {
    PhaseScope ps("load");
    return load_model(a.model);
  }();
  const auto chosen = choose_inputs(g, a.model, a.inputs_dir, !a.dims.shapes.empty() || !a.dims.dims.empty(), 0, a.dims, "bench").inputs;
  SpecializeInfo spec;
  Graph sg = [&] {
    PhaseScope ps("shape inference");
    return specialize(g, chosen, &spec, cone_runner_after_open(opener, *b, o));
  }();
  const std::vector<Tensor> inputs = fed_inputs(g, chosen);  // as the executable takes them (string inputs: codes)
  double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - tl).count();
  auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<Executable> exe;
  if (opener.joinable()) {
    PhaseScope wait("wait for device open");
    opener.join();
  }
  if (!a.serial_open) log.add("device open (Backend::prepare, on a thread during load)", open_start_us, open_us);
  {
    PhaseScope ps("backend compile");
    exe = compile_with_fallback(*b, sg, o);
  }
  double compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  double first_run_ms = 0;
  {
    PhaseScope ps("first run");
    const auto t = std::chrono::steady_clock::now();
    exe->run(inputs);
    first_run_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
  }
  const double ready_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_start).count();
  // Again, now that the on-disk kernel cache (CUBINs / SPIR-V + pipeline cache) holds this model.
  t0 = std::chrono::steady_clock::now();
  {
    PhaseScope ps("backend compile (disk cache warm)");
    compile_with_fallback(*b, sg, o);
  }
  double warm_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const std::vector<Phase> phases = log.phases();  // before the extra build_plan below
  Plan plan = build_plan(without_string_nodes(sg), b->fusion_options(o));
  for (int i = 0; i < a.warmup; ++i) exe->run(inputs);
  std::vector<double> host, dev;
  TraceData trace;
  for (int i = 0; i < a.iters; ++i) {
    RunStats st;
    const double start = log.now_us();
    exe->run(inputs, &st);
    trace.runs.push_back({"run " + std::to_string(i), start, log.now_us() - start, {{"device_us", st.device_us}}});
    host.push_back(st.host_us);
    dev.push_back(st.device_us);
  }
  if (!a.trace.empty()) {
    // One more run with a timestamp around every kernel (a separate timing replay on the GPUs).
    trace.model = a.model;
    trace.backend = a.backend;
    trace.plan = &plan;
    trace.kernels_origin_us = log.now_us();
    trace.kernels = exe->profile(inputs);
    trace.phases = phases;
    write_trace(trace, a.trace);
  }
  Summary h = summarize(host), d = summarize(dev);
  // Peak device memory of the plan: the one arena plus the constants (weights) uploaded once.
  int64_t constant_bytes = 0;
  for (auto& buf : plan.buffers)
    if (buf.role == Buffer::Role::constant) constant_bytes += buf.nbytes();
  double bytes = static_cast<double>(plan.bytes_fused);
  double gbps = d.median > 0 ? bytes / (d.median * 1e3) : -1;
  if (a.json) {
    nlohmann::json j = {{"model", a.model},        {"backend", a.backend},
                        {"fusion", o.fusion},      {"replay", o.replay},
                        {"iters", a.iters},        {"kernels", exe->kernel_count()},
                        {"host_us", {{"median", h.median}, {"p10", h.p10}, {"p90", h.p90}}},
                        {"device_us", {{"median", d.median}, {"p10", d.p10}, {"p90", d.p90}}},
                        {"bytes_moved", plan.bytes_fused}, {"bytes_unfused", plan.bytes_unfused},
                        {"gb_per_s", gbps},        {"load_ms", load_ms},
                        {"compile_ms", compile_ms}, {"compile_warm_ms", warm_ms},
                        {"first_run_ms", first_run_ms}, {"to_first_result_ms", ready_ms},
                        {"arena_bytes", plan.arena_bytes}, {"device_bytes", plan.arena_bytes + constant_bytes},
                        {"notes", exe->notes()}, {"graph_breaks", nlohmann::json::array()},
                        {"host_computed_values", spec.computed}, {"host_computed_with_them", spec.with_them}};
    for (const GraphBreak& gb : graph_breaks(*exe))
      j["graph_breaks"].push_back({{"node", gb.node}, {"op", gb.op}, {"reason", gb.reason}});
    if (a.phases) {
      j["phases"] = nlohmann::json::array();
      for (const Phase& p : phases)
        j["phases"].push_back({{"name", p.name}, {"depth", p.depth}, {"ms", p.dur_us / 1e3}, {"cpu_ms", p.cpu_us < 0 ? -1 : p.cpu_us / 1e3}});
    }
    // Model paths and node names need not be UTF-8: replaced, not an exception after the run.
    std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  std::printf("model %s on %s (fusion %s, %s)\n", printable(a.model).c_str(), a.backend.c_str(), o.fusion ? "on" : "off",
              o.replay ? "replay" : "eager");
  std::printf("kernels per run   %d\n", exe->kernel_count());
  if (!exe->notes().empty()) std::printf("notes             %s\n", exe->notes().c_str());
  for (const GraphBreak& gb : graph_breaks(*exe)) std::printf("graph break       %s\n", describe(gb).c_str());
  if (spec.computed)
    std::printf("host-computed     %zu data-dependent values (and %zu values they needed) ran on ref inside load; the device\n"
                "                  runs what follows them, for these input values only: a new input pays the load again\n",
                spec.computed, spec.with_them);
  std::printf("load              %.1f ms (ONNX to static graph)\n", load_ms);
  std::printf("compile           %.1f ms first, %.1f ms with the disk cache warm\n", compile_ms, warm_ms);
  std::printf("first run         %.1f ms (%.1f ms from the start to the first result)\n", first_run_ms, ready_ms);
  std::printf("host time         median %.1f us (p10 %.1f, p90 %.1f)\n", h.median, h.p10, h.p90);
  if (d.median >= 0) std::printf("device time       median %.1f us (p10 %.1f, p90 %.1f), %.1f GB/s\n", d.median, d.p10, d.p90, gbps);
  else std::printf("device time       not measured on this backend\n");
  std::printf("bytes moved       %lld (unfused plan would move %lld)\n", static_cast<long long>(plan.bytes_fused),
              static_cast<long long>(plan.bytes_unfused));
  std::printf("device memory     %lld bytes (arena %lld + constants %lld)\n",
              static_cast<long long>(plan.arena_bytes + constant_bytes), static_cast<long long>(plan.arena_bytes),
              static_cast<long long>(constant_bytes));
  if (a.phases) print_phases(phases, load_ms + compile_ms, first_run_ms);
  if (!a.trace.empty())
    std::printf("trace             %s (%zu kernels timed; open in ui.perfetto.dev or chrome://tracing)\n", printable(a.trace).c_str(),
                trace.kernels.size());
  return 0;
}

}  // namespace fusor
