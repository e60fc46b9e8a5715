// Host-side phase timing for profile traces (`fusor bench --trace`): code marks a phase with a
// PhaseScope; the marks are kept only while a PhaseLog is active on the same thread, so the
// scopes cost one thread-local read when nobody is listening. Phases nest (depth).
#pragma once
#include <chrono>
#include <string>
#include <vector>

namespace fusor {

struct Phase {
  std::string name;     // "load", "shape inference", "fusion", "codegen", "compile", "record", ...
  double start_us = 0;  // from the PhaseLog's creation (steady clock)
  double dur_us = 0;
  int depth = 0;        // 0 = outermost
  // CPU time of the whole process (every thread: compile pools, driver threads) over the
  // phase, microseconds; below dur_us the phase waited (driver, disk, a loaded machine), above
  // it ran on several cores. -1 for a phase added with PhaseLog::add.
  double cpu_us = 0;
};

// Collects the phases of this thread while alive (the innermost live log collects; logs
// nest). Not copyable; use from the thread that created it.
class PhaseLog {
 public:
  PhaseLog();
  ~PhaseLog();
  PhaseLog(const PhaseLog&) = delete;
  PhaseLog& operator=(const PhaseLog&) = delete;
  const std::vector<Phase>& phases() const { return phases_; }
  double now_us() const;  // microseconds since this log was created
  // Records a phase that was not one scope of this thread, e.g. the summed time of one step
  // done by a pool of threads ("pipeline creation (sum over threads)"), at the current depth.
  void add(const std::string& name, double start_us, double dur_us);
  // The log this thread's PhaseScopes record into (nullptr: none).
  static PhaseLog* active();

 private:
  friend class PhaseScope;
  std::chrono::steady_clock::time_point origin_;
  std::vector<Phase> phases_;
  int depth_ = 0;
  PhaseLog* outer_ = nullptr;
};

// Times the enclosing scope as one phase of the thread's active PhaseLog (none: no-op). The
// phase is recorded when the scope ends, also when it ends by an exception.
class PhaseScope {
 public:
  explicit PhaseScope(const char* name);
  ~PhaseScope();
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  PhaseLog* log_;
  size_t index_ = 0;
};

}  // namespace fusor
