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
    libonnx*|libprotobuf*|libgtest*|libabsl*|libre2*) cp -L "$lib" .dev/lib/ ;;
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
# IREE_BUNDLE=DIR: the IREE peer bundle made by `bench/iree_peer.py prepare --out DIR` (vmfbs
# without weights, manifest.json, the runtime wheel stored uncompressed) travels as
# .dev/iree.tar.xz; h200_run.sh unpacks it and passes --iree to side_by_side.py.
if [ -n "${IREE_BUNDLE:-}" ]; then
  [ -f "$IREE_BUNDLE/manifest.json" ] || { echo "IREE_BUNDLE=$IREE_BUNDLE has no manifest.json" >&2; exit 1; }
  (cd "$IREE_BUNDLE" && ls manifest.json *.whl *.vmfb | tar --owner=0 --group=0 -cf - -T - | xz -9e -T2 > "$OLDPWD/.dev/iree.tar.xz")
  echo "IREE bundle: $(du -h .dev/iree.tar.xz | cut -f1)"
fi
# PY_HEADERS=DIR (DIR/python3.X/Python.h, the GPU machine's CPython headers, e.g. fetched from
# there as a tarball): the Python extension compiled here for that interpreter, with the same
# static library as the CLI, to .dev/py/fusor (h200_run.sh's `python` step runs python/tests
# there with torch on the GPU).
if [ -n "${PY_HEADERS:-}" ]; then
  pyinc=$(ls -d "$PY_HEADERS"/python3.* | head -1)
  pyver=${pyinc##*/python}
  nb=$(python3 -m nanobind --cmake_dir)/..
  obj=$(mktemp -d)
  # The library's public definitions (FUSOR_HAVE_*, ONNX_ML ...) as the CLI was compiled with
  # (the commands go through a file: grep -m1 closing a pipe would fail the script, pipefail).
  ninja -C "$bdir" -t commands fusor_cli > "$obj/commands.txt"
  defs=$(grep -m1 'tools/fusor_main.cpp' "$obj/commands.txt" | tr ' ' '\n' | grep -E '^-D')
  flags="-O2 -fPIC -std=gnu++20 -fvisibility=hidden -fno-strict-aliasing -I. -I$nb/include -I$nb/ext/robin_map/include
         -I$pyinc -I$PY_HEADERS -I/usr/local/cuda/include"
  c++ $flags -DNB_BUILD -c "$nb/src/nb_combined.cpp" -o "$obj/nb.o"
  for f in bindings bindings_tools; do eval c++ $flags $defs -c "python/$f.cpp" -o "$obj/$f.o"; done
  mkdir -p .dev/py/fusor
  cp python/fusor/*.py .dev/py/fusor/
  c++ -shared -o ".dev/py/fusor/_fusor.cpython-${pyver//./}-x86_64-linux-gnu.so" "$obj"/*.o "$bdir/libfusor.a" \
    $(tail -1 "$obj/commands.txt" | tr ' ' '\n' | grep -E '^/usr/.*\.(a|so[.0-9]*)$|^-l') -lpthread
  strip --strip-unneeded .dev/py/fusor/*.so
  xz -T2 -f .dev/py/fusor/*.so
  rm -rf "$obj"
fi
# The copy that travels is limited to 64 MiB: binaries go compressed (h200_run.sh unpacks them).
xz -T2 -f .dev/fusor .dev/fusor_tests
grep -qx '/.dev/' .git/info/exclude 2>/dev/null || echo /.dev/ >> .git/info/exclude
grep -qx '/.gl/' .git/info/exclude 2>/dev/null || echo /.gl/ >> .git/info/exclude
du -sh .dev .gl
