#!/usr/bin/env bash
# Builds and installs the fusor Python package into build/venv (pip install . through
# scikit-build-core + nanobind) and runs its tests. Run scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
py=build/venv/bin/python
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ] && ! ls /usr/share/vulkan/icd.d/nvidia* >/dev/null 2>&1; then
  export VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
fi
# The compilers of the CLI build (scikit-build-core would take CXX from Python's sysconfig,
# e.g. g++ for c++): the same compiler and flags make the library's objects ccache hits.
if [ -f build/CMakeCache.txt ]; then
  cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:FILEPATH=//p' build/CMakeCache.txt)
  cc=$(sed -n 's/^CMAKE_C_COMPILER:FILEPATH=//p' build/CMakeCache.txt)
  if [ -n "$cxx" ]; then export CXX="${CXX:-$cxx}"; fi
  if [ -n "$cc" ]; then export CC="${CC:-$cc}"; fi
fi
t0=$(date +%s)
# --no-build-isolation: the build tools setup.sh installed (no download per build).
"$py" -m pip install -q --disable-pip-version-check --no-build-isolation .
echo "[python] pip install . took $(( $(date +%s) - t0 )) s"
# From another folder, so `import fusor` is the installed package, not python/fusor.
(cd build && "../$py" -m pytest -q -rs ../python/tests "$@")
