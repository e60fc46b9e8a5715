// PhaseLog / PhaseScope (ir/phases.h). Thread-local so that concurrent sessions never mix
// their phases and an inactive scope costs no lock.
#include "ir/phases.h"

namespace fusor {

namespace {
thread_local PhaseLog* t_active = nullptr;
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
  log_->phases_.push_back({name, log_->now_us(), 0, log_->depth_++});
}

PhaseScope::~PhaseScope() {
  if (!log_) return;
  Phase& p = log_->phases_[index_];
  p.dur_us = log_->now_us() - p.start_us;
  --log_->depth_;
}

}  // namespace fusor
