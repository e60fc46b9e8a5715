#!/usr/bin/env bash
# Quick start, step 2: install dependencies, build, and run the whole test suite (CTest).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
cd build
ctest --output-on-failure -j"$(nproc 2>/dev/null || echo 2)" --timeout 1500
