#!/usr/bin/env bash
# Installs fusor (library, headers, CMake package) into build/install and builds and runs
# examples/consumer against the installed tree only (find_package(fusor) -> fusor::fusor).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf build/install build/consumer
cmake --install build --prefix build/install --component dev >/dev/null
cmake -S examples/consumer -B build/consumer -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PWD/build/install" >/dev/null
ninja -C build/consumer >/dev/null
build/consumer/consumer cpu
build/install/bin/fusor --version
