// Parallel kernel compilation shared by the GPU backends (NVRTC on CUDA; shaderc + SPIRV-Tools +
// pipeline creation on Vulkan): independent jobs, one result slot each, run on a small pool of
// std::threads that the calling thread joins.
//
// Contract:
//   compile_threads(): how many threads compile at once: FUSOR_COMPILE_THREADS when set to a
//     positive integer (1 = one after another, the old behaviour, for measurements), else
//     std::thread::hardware_concurrency() (all cores; at least 1).
//   for_each_job(n, job): calls job(i) exactly once for every i in [0, n), on up to
//     min(n, compile_threads()) threads (the caller is one of them), and returns when all are
//     done. Every job runs even when another fails; then the exception of the failing job with
//     the lowest index is rethrown, so the error a model reports does not depend on timing
//     (the first failing kernel in plan order). job must be safe to call concurrently for
//     different i (each writes only its own slot).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>
#include <vector>

namespace fusor {

inline int compile_threads() {
  if (const char* s = std::getenv("FUSOR_COMPILE_THREADS"); s && *s) {
    char* end = nullptr;
    const long v = std::strtol(s, &end, 10);
    if (end && *end == '\0' && v > 0) return static_cast<int>(std::min<long>(v, 256));
  }
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

template <class Job> void for_each_job(size_t n, Job&& job) {
  if (n == 0) return;
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        job(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const size_t nthreads = std::min<size_t>(n, static_cast<size_t>(compile_threads()));
  std::vector<std::thread> pool;
  pool.reserve(nthreads > 0 ? nthreads - 1 : 0);
  try {
    for (size_t t = 1; t < nthreads; ++t) pool.emplace_back(worker);
  } catch (...) {
    // No thread could be started (resource limits): the threads that did start and this one
    // still finish every job.
  }
  worker();
  for (auto& t : pool) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace fusor
