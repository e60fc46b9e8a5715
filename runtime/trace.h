// Profile traces (`fusor bench MODEL --trace FILE.json`): Chrome's trace-event JSON ("JSON
// Object Format" of the Trace Event Format), which Perfetto (ui.perfetto.dev) and
// chrome://tracing open. Two processes: "host" (the compile phases: load, shape inference,
// fusion, codegen, compile, record, on one track, plus one track per phase added with
// PhaseLog::add, e.g. the device opened during the load; then the timed runs) and
// "device <backend>" (one slice per kernel of a profiling run, named by its fused ops, with
// bytes moved and GB/s as args).
// Timestamps are microseconds from the start of the command.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/backend.h"
#include "ir/kernel_spec.h"
#include "ir/phases.h"

namespace fusor {

struct HostSlice {  // a host-side interval that is not a compile phase (e.g. one timed run)
  std::string name;
  double start_us = 0, dur_us = 0;
  nlohmann::json args = nlohmann::json::object();
};

struct TraceData {
  std::string model, backend;
  std::vector<Phase> phases;        // compile phases (ir/phases.h), host clock
  std::vector<HostSlice> runs;      // timed runs, host clock
  const Plan* plan = nullptr;       // the plan the kernels index (build_plan with the run's options)
  std::vector<KernelTiming> kernels;
  double kernels_origin_us = 0;     // host time the profiling run started (device slices start here)
};

// The trace as JSON ({"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}).
// Kernel slices: name = fused ops joined with '+' (prefixed by the library call, e.g.
// "cublasLt MatMul+Add"), args = kernel, kind, nodes, bytes_read, bytes_written, bytes, gb_per_s.
// Throws Error("trace") when a timing names a kernel the plan does not have.
nlohmann::json make_trace(const TraceData& d);

// Writes make_trace(d) to path; Error("trace") when the file cannot be written.
void write_trace(const TraceData& d, const std::string& path);

}  // namespace fusor
