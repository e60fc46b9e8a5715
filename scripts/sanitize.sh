#!/usr/bin/env bash
# Sanitizer and fuzzing stage (run by scripts/test.sh; also usable alone):
#  1. builds the core library, the unit tests and the libFuzzer target with clang and
#     -fsanitize=address,undefined into build-san/ (CPU backends only: the GPU drivers are not
#     instrumented, and lavapipe under ASan is too slow for CI);
#  2. runs the unit tests that exercise hostile input under ASan/UBSan (the subset below);
#  3. replays through the libFuzzer target, under the sanitizers, every input kept in the repo:
#     tests/fuzz_regressions/ (one input per fault kind found so far), tests/fuzz_corpus/ (the
#     coverage-minimised corpus of the exploration runs), the hand-made seed graphs and
#     examples/gpt2_tiny. This step is deterministic: CI fails on a change, never on luck.
#     (Until stop 20 CI ran a 60,000-input libFuzzer exploration from a fixed seed; its path
#     differed between machines even with ASLR off, so every CI run was a different lottery.)
# Exploring for new faults is scripts/fuzz_explore.sh (long local runs with fresh seeds); each
# fault it finds is fixed, and its input added to tests/fuzz_regressions/, before a change lands.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build_san.sh fusor_tests fusor_fuzz
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The suites that feed fusor hostile models, files and cache states, plus core op and fusion tests.
build-san/fusor_tests --gtest_brief=1 \
  --gtest_filter='Hostile.*:HostileCli.*:Fuzz.*:DiskCache.*:SessionThreads/*:SessionKey.*:TensorIo.*:OnnxImport.*:FusionLimits.*:Session.*:Sequence.*:DataDependent.*'
rm -rf build-san/ci-corpus && mkdir -p build-san/ci-corpus
cp examples/gpt2_tiny/model.onnx build-san/ci-corpus/gpt2_tiny.onnx 2>/dev/null || true
cp tests/fuzz_regressions/*.onnx build-san/ci-corpus/
for d in tests/data/sequence/*/; do cp "$d/model.onnx" "build-san/ci-corpus/sequence_$(basename "$d").onnx"; done
cp tests/fuzz_corpus/* build-san/ci-corpus/ 2>/dev/null || true
FUSOR_FUZZ_WRITE_SEEDS=build-san/ci-corpus build-san/fusor_fuzz -runs=0 build-san/ci-corpus >/dev/null 2>&1 || true
fuzz_rc=0
rm -f build-san/crash-* build-san/oom-* build-san/timeout-*
# -runs=0: run each corpus input once, no mutation.
build-san/fusor_fuzz -runs=0 -timeout=30 -rss_limit_mb=4096 -max_len=262144 -artifact_prefix=build-san/ \
  build-san/ci-corpus >build-san/fuzz.log 2>&1 || fuzz_rc=$?
if [ "$fuzz_rc" != 0 ]; then
  # Printed last, as CI shows the end of the log: the input (base64), then the head of the
  # report, which names the fault (the stack's top frames).
  for f in build-san/crash-* build-san/oom-* build-san/timeout-*; do
    [ -f "$f" ] && echo "fuzz input $f (base64): $(head -c 3000 "$f" | base64 -w0)"
  done
  tail -n 6 build-san/fuzz.log
  first=$(grep -n -m1 -E "ERROR:|runtime error|terminate called|deadly signal|out-of-memory|timeout" build-san/fuzz.log | cut -d: -f1)
  sed -n "$(( ${first:-1} > 5 ? ${first:-1} - 5 : 1 )),+40p" build-san/fuzz.log
  exit "$fuzz_rc"
fi
echo "fuzz replay: $(ls build-san/ci-corpus | wc -l) inputs ran clean under ASan/UBSan"
