// Shared helpers for fusor tests.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include "ir/graph.h"

namespace fusor::testing {

// ../shared (models and ONNX suites) or the FUSOR_SHARED override; empty when absent.
inline std::string shared_dir() {
  const char* env = std::getenv("FUSOR_SHARED");
  std::string d = env ? env : std::string(FUSOR_SOURCE_DIR) + "/../shared";
  return std::filesystem::exists(d + "/models") ? d : std::string();
}

// Seeded uniform values in [lo, hi), never all zero.
inline Tensor random_tensor(DType t, const Shape& s, uint64_t seed, double lo = -1.0, double hi = 1.0) {
  Tensor x(t, s);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, u(rng));
  return x;
}

}  // namespace fusor::testing
