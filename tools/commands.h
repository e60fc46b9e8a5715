// Commands of the fusor CLI implemented in their own files (tools/*.cpp is linked into the CLI).
#pragma once
#include <string>

namespace fusor {

struct ExplainArgs {
  std::string model, dot, source;  // source: "cuda" prints the generated CUDA C
  std::string backend;             // whose graph breaks (nodes left to the host) are listed
  bool no_fusion = false, no_fallback = false;
};
int cmd_explain(const ExplainArgs& a);

struct BenchArgs {
  std::string model, backend;
  std::string trace;  // --trace FILE: write a Chrome/Perfetto trace-event JSON (runtime/trace.h)
  int iters = 50, warmup = 5, device = 0;
  bool no_fusion = false, eager = false, json = false, no_fallback = false;
};
int cmd_bench(const BenchArgs& a);

// "cuda" when a CUDA device is usable, else "vulkan" when a Vulkan device is, else "cpu".
std::string best_backend();

}  // namespace fusor
