// libFuzzer target over ONNX import + shape inference + planning + the reference backend
// (the harness in tests/fuzz_harness.h, shared with the bounded ctest run). Built by
// scripts/sanitize.sh with clang -fsanitize=fuzzer,address,undefined; see README "Fuzzing".
// A fusor::Error is the expected outcome for a bad model; any other exception aborts, which
// libFuzzer reports as a crash together with the input that caused it.
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>

#include "tests/fuzz_harness.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

// FUSOR_FUZZ_WRITE_SEEDS=DIR writes the hand-made seed models into DIR (the initial corpus).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("FUSOR_FUZZ_WRITE_SEEDS")) {
    auto seeds = fusor::fuzz::seed_models();
    for (size_t i = 0; i < seeds.size(); ++i)
      std::ofstream(std::string(dir) + "/seed_" + std::to_string(i) + ".onnx", std::ios::binary) << seeds[i];
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fusor::fuzz::run_one(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}

// Half the mutations are structural (dims, attributes, op types, wiring, opsets on the parsed
// model), half libFuzzer's byte-level ones.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::mt19937_64 rng(seed);
  if (rng() % 2) return LLVMFuzzerMutate(data, size, max_size);
  std::string m = fusor::fuzz::mutate(std::string(reinterpret_cast<const char*>(data), size), rng);
  if (m.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::copy(m.begin(), m.end(), data);
  return m.size();
}
