#!/usr/bin/env bash
# Sanitizer and fuzzing stage (run by scripts/test.sh; also usable alone):
#  1. builds the core library, the unit tests and the libFuzzer target with clang and
#     -fsanitize=address,undefined into build-san/ (CPU backends only: the GPU drivers are not
#     instrumented, and lavapipe under ASan is too slow for CI);
#  2. runs the unit tests that exercise hostile input under ASan/UBSan (the subset below);
#  3. fuzzes import + shape inference + planning + ref for FUSOR_FUZZ_SECONDS (default 120),
#     seeded with the hand-made graphs and examples/gpt2_tiny; a crash fails the script and
#     leaves the input as build-san/crash-*.
# A long local run: FUSOR_FUZZ_SECONDS=36000 scripts/sanitize.sh (or build-san/fusor_fuzz
# -max_total_time=36000 build-san/corpus after one run).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${FUSOR_FUZZ_SECONDS:-120}
CC=clang CXX=clang++ cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DFUSOR_VULKAN=OFF -DFUSOR_CUDA=OFF -DFUSOR_FUZZ=ON \
  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -fsanitize=fuzzer-no-link" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
ninja -C build-san fusor_tests fusor_fuzz
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The suites that feed fusor hostile models, files and cache states, plus core op and fusion tests.
build-san/fusor_tests --gtest_brief=1 \
  --gtest_filter='Hostile.*:Fuzz.*:DiskCache.*:SessionThreads/*:SessionKey.*:TensorIo.*:OnnxImport.*:FusionLimits.*:Session.*'
mkdir -p build-san/corpus
cp examples/gpt2_tiny/model.onnx build-san/corpus/gpt2_tiny.onnx 2>/dev/null || true
FUSOR_FUZZ_WRITE_SEEDS=build-san/corpus build-san/fusor_fuzz -runs=0 build-san/corpus >/dev/null 2>&1
build-san/fusor_fuzz -max_total_time="$secs" -timeout=30 -rss_limit_mb=4096 -max_len=262144 \
  -artifact_prefix=build-san/ -print_final_stats=1 build-san/corpus 2>&1 | tail -n 25
