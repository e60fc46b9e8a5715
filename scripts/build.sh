#!/usr/bin/env bash
# Configures and builds fusor (Release, Ninja) into ./build. Usage: scripts/build.sh [ninja targets...]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build -j"$jobs" "$@"
