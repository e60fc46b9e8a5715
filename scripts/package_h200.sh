#!/usr/bin/env bash
# Builds fusor here (Debian 12) and packages what the GPU machine needs into .dev/ (git-ignored):
# the stripped binaries, the non-system shared libraries they need, the Vulkan loader
# packages (.gl/), the four shared models and the ONNX node suite (compressed).
# Then, on the GPU machine, from the repository root: scripts/h200_run.sh OUTDIR
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${FUSOR_SHARED:-../shared}
# FUSOR_PACKAGE_BUILD=build reuses another Release build folder (saves a rebuild).
bdir=${FUSOR_PACKAGE_BUILD:-build-rel}
cmake -S . -B "$bdir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$bdir" fusor_cli fusor_tests
rm -rf .dev && mkdir -p .dev/lib
cp "$bdir"/fusor "$bdir"/fusor_tests .dev/
strip .dev/fusor .dev/fusor_tests
# Libraries from Debian that an Ubuntu GPU machine may lack (CUDA and libc come from there).
for lib in $(ldd "$bdir"/fusor "$bdir"/fusor_tests | awk '/=> \//{print $3}' | sort -u); do
  case "$(basename "$lib")" in
    libonnx*|libprotobuf*|libgtest*|libabsl*) cp -L "$lib" .dev/lib/ ;;
  esac
done
if [ ! -d .gl ]; then
  mkdir -p .gl /tmp/amd64/partial
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  apt-get $o update >/dev/null
  (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
fi
if [ -d "$shared/models" ]; then
  tar -C "$shared" -cJf .dev/shared.tar.xz models onnx-tests/node
fi
# HALF_MODELS=DIR: backend-test folders made by bench/half_models.py travel as .dev/half.tar.xz
# (unpacked to .dev/half by h200_run.sh).
if [ -n "${HALF_MODELS:-}" ]; then tar -C "$HALF_MODELS" -cJf .dev/half.tar.xz .; fi
grep -qx '/.dev/' .git/info/exclude 2>/dev/null || echo /.dev/ >> .git/info/exclude
grep -qx '/.gl/' .git/info/exclude 2>/dev/null || echo /.gl/ >> .git/info/exclude
du -sh .dev .gl
