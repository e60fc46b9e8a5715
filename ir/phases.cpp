// PhaseLog / PhaseScope (ir/phases.h). Thread-local so that concurrent sessions never mix
// their phases and an inactive scope costs no lock.
#include "ir/phases.h"

#include <ctime>

namespace fusor {

namespace {
thread_local PhaseLog* t_active = nullptr;

double process_cpu_us() {
  timespec ts{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}
}  // namespace

PhaseLog* PhaseLog::active() { return t_active; }

void PhaseLog::add(const std::string& name, double start_us, double dur_us) {
  phases_.push_back({name, start_us, dur_us, depth_, -1});
}

PhaseLog::PhaseLog() : origin_(std::chrono::steady_clock::now()), outer_(t_active) { t_active = this; }
PhaseLog::~PhaseLog() { t_active = outer_; }

double PhaseLog::now_us() const {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - origin_).count();
}

PhaseScope::PhaseScope(const char* name) : log_(t_active) {
  if (!log_) return;
  // Recorded at the start (so phases stay in start order, parents before children), closed at the end.
  index_ = log_->phases_.size();
  log_->phases_.push_back({name, log_->now_us(), 0, log_->depth_++, process_cpu_us()});
}

PhaseScope::~PhaseScope() {
  if (!log_) return;
  Phase& p = log_->phases_[index_];
  p.dur_us = log_->now_us() - p.start_us;
  p.cpu_us = process_cpu_us() - p.cpu_us;
  --log_->depth_;
}

}  // namespace fusor
