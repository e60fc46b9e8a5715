#!/usr/bin/env bash
# Quick start, step 2: install dependencies, build, and run the whole test suite: CTest, the
# Python package (pip install . + pytest) and a CMake consumer of the installed package.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
# With no GPU driver installed, Vulkan runs on Mesa's lavapipe.
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ] && ! ls /usr/share/vulkan/icd.d/nvidia* >/dev/null 2>&1; then
  export VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
fi
status=0
(cd build && ctest --output-on-failure -j"$(nproc 2>/dev/null || echo 2)" --timeout 1500) || status=1
# The Python package, built the way users build it (pip install . : scikit-build-core into
# build/py, the library's objects from the ccache of the build above), then its pytest suite.
scripts/test_python.sh || status=1
# The C++ package: installed into build/install, and examples/consumer built against it.
scripts/test_consumer.sh || status=1
# Sanitizer + fuzzing stage (clang ASan/UBSan build of the hostile-input, fuzz, cache, session
# and import suites, and a replay of the kept fuzz inputs): scripts/sanitize.sh. FUSOR_SKIP_SANITIZE=1 skips it.
if [ "${FUSOR_SKIP_SANITIZE:-0}" != 1 ]; then scripts/sanitize.sh || status=1; fi
exit $status
