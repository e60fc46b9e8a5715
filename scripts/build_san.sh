#!/usr/bin/env bash
# Configures and builds build-san/ (clang, ASan + UBSan, libFuzzer instrumentation, CPU backends
# only) for scripts/sanitize.sh and scripts/fuzz_explore.sh: scripts/build_san.sh TARGET...
set -euo pipefail
cd "$(dirname "$0")/.."
CC=clang CXX=clang++ cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DFUSOR_VULKAN=OFF -DFUSOR_CUDA=OFF -DFUSOR_FUZZ=ON \
  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -fsanitize=fuzzer-no-link" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
ninja -C build-san "$@"
