// Host memory limits for allocations a model's shapes ask for (Tensor, the cpu arena).
#pragma once

#include <cstdint>
#include <string>

namespace fusor {

// Memory this process can still take now, in bytes (0 when unknown): the kernel's MemAvailable
// (/proc/meminfo), lowered to the room left under a cgroup memory limit (v2 memory.max minus
// memory.current, v1 memory.limit_in_bytes minus memory.usage_in_bytes).
uint64_t host_available_bytes();

// Refuses a host allocation of `bytes` that cannot succeed, before it is made: more than the
// physical memory, or (from 1 GiB on, where an overcommitted allocation ends in the OOM killer
// when its pages are touched rather than in std::bad_alloc) more than host_available_bytes()
// now. Throws Error("memory", "<what> needs N bytes (X GiB), more than ...").
// Tensor(dtype, shape) calls it for its bytes.
void check_host_alloc(uint64_t bytes, const std::string& what);

}  // namespace fusor
