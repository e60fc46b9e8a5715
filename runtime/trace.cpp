// Trace-event JSON (runtime/trace.h). Complete events ("ph": "X") carry ts and dur; metadata
// events ("ph": "M") name the processes and threads so the viewer labels the tracks.
#include "runtime/trace.h"

#include "runtime/tensor_io.h"

namespace fusor {

namespace {
constexpr int kHostPid = 1, kDevicePid = 2;
constexpr int kPhaseTid = 1, kRunTid = 2, kKernelTid = 1;

nlohmann::json meta(const char* what, int pid, int tid, const std::string& name) {
  return {{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

nlohmann::json slice(const std::string& name, const char* cat, int pid, int tid, double ts, double dur, nlohmann::json args) {
  return {{"ph", "X"}, {"name", name}, {"cat", cat}, {"pid", pid}, {"tid", tid}, {"ts", ts}, {"dur", dur}, {"args", std::move(args)}};
}
}  // namespace

nlohmann::json make_trace(const TraceData& d) {
  nlohmann::json ev = nlohmann::json::array();
  ev.push_back(meta("process_name", kHostPid, kPhaseTid, "host"));
  ev.push_back(meta("thread_name", kHostPid, kPhaseTid, "compile"));
  ev.push_back(meta("thread_name", kHostPid, kRunTid, "runs"));
  ev.push_back(meta("process_name", kDevicePid, kKernelTid, "device " + d.backend));
  ev.push_back(meta("thread_name", kDevicePid, kKernelTid, "kernels (profiling run)"));
  // A phase that was not one scope of the compiling thread (PhaseLog::add: the device opened on
  // another thread, a step summed over a thread pool) does not nest on the compile track: each
  // gets a track of its own below it.
  int other_tid = kRunTid;
  for (const Phase& p : d.phases) {
    if (p.cpu_us >= 0) {
      ev.push_back(slice(p.name, "compile", kHostPid, kPhaseTid, p.start_us, p.dur_us, {{"depth", p.depth}}));
      continue;
    }
    ++other_tid;
    ev.push_back(meta("thread_name", kHostPid, other_tid, p.name));
    ev.push_back(slice(p.name, "compile", kHostPid, other_tid, p.start_us, p.dur_us, {{"depth", p.depth}}));
  }
  for (const HostSlice& r : d.runs) ev.push_back(slice(r.name, "run", kHostPid, kRunTid, r.start_us, r.dur_us, r.args));
  double kernel_us = 0;
  for (const KernelTiming& t : d.kernels) {
    if (!d.plan || t.kernel < 0 || t.kernel >= static_cast<int>(d.plan->kernels.size()))
      throw Error("trace", "kernel timing names kernel " + std::to_string(t.kernel) + ", the plan has " +
                               std::to_string(d.plan ? d.plan->kernels.size() : 0));
    const KernelSpec& k = d.plan->kernels[t.kernel];
    std::string ops;
    for (const std::string& o : k.fused_ops) ops += (ops.empty() ? "" : "+") + o;
    if (ops.empty()) ops = k.name;
    const int64_t rd = kernel_bytes_read(*d.plan, k), wr = kernel_bytes_written(*d.plan, k);
    // The library call of a split kernel (cuBLASLt product + generated epilogue) is timed on
    // its own; the bytes are the whole kernel's, so its GB/s is left out.
    nlohmann::json args = {{"kernel", k.name}, {"kind", fusion_kind_name(k.kind)}, {"nodes", k.fused_nodes},
                           {"bytes_read", rd}, {"bytes_written", wr}, {"bytes", rd + wr}};
    if (t.what.empty() && t.dur_us > 0) args["gb_per_s"] = static_cast<double>(rd + wr) / (t.dur_us * 1e3);
    // The contraction's problem, so per-layer times can be compared across policies.
    const auto x = [](auto... v) {
      std::string s;
      ((s += (s.empty() ? "" : "x") + std::to_string(v)), ...);
      return s;
    };
    if (k.matmul) args["matmul"] = "MxNxK " + x(k.matmul->m, k.matmul->n, k.matmul->k);
    if (k.conv) {
      const ConvDesc& c = *k.conv;
      args["conv"] = "NxCxHxW " + x(c.n, c.c, c.h, c.w) + " K " + std::to_string(c.k) + " RxS " + x(c.r, c.s) + " stride " +
                     x(c.stride_h, c.stride_w) + " groups " + std::to_string(c.groups);
    }
    if (!t.what.empty()) args["call"] = t.what;
    ev.push_back(slice(t.what.empty() ? ops : t.what + " " + ops, "kernel", kDevicePid, kKernelTid,
                       d.kernels_origin_us + t.start_us, t.dur_us, std::move(args)));
    kernel_us += t.dur_us;
  }
  nlohmann::json other = {{"model", d.model}, {"backend", d.backend}, {"kernels_timed", d.kernels.size()},
                          {"kernel_us_total", kernel_us}};
  if (d.plan) other["bytes_moved"] = d.plan->bytes_fused;
  return {{"traceEvents", std::move(ev)}, {"displayTimeUnit", "ms"}, {"otherData", std::move(other)}};
}

void write_trace(const TraceData& d, const std::string& path) {
  nlohmann::json j = make_trace(d);
  // Node names come from the model file and may not be UTF-8.
  write_file(path, j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", "trace");
}

}  // namespace fusor
