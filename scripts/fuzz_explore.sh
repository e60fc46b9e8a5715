#!/usr/bin/env bash
# Long local fuzzing for new faults (not part of CI, whose fuzz step only replays kept inputs):
#   scripts/fuzz_explore.sh [SECONDS=3600] [SEED=random] [JOBS=1]
# Builds build-san/ like scripts/sanitize.sh, then runs the libFuzzer target from a corpus
# that persists in build-san/corpus (seeded with tests/fuzz_corpus/ and tests/fuzz_regressions/).
# On a fault: the input is build-san/crash-*; reproduce with `build-san/fusor_fuzz FILE`, fix
# the fault's whole kind, copy the input to tests/fuzz_regressions/ (Fuzz.RegressionInputs and
# CI replay it). Refresh the kept corpus after a long clean run:
#   build-san/fusor_fuzz -merge=1 tests/fuzz_corpus build-san/corpus
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-3600}
seed=${2:-$RANDOM}
jobs=${3:-1}
scripts/build_san.sh fusor_fuzz
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
mkdir -p build-san/corpus
cp -n tests/fuzz_regressions/*.onnx tests/fuzz_corpus/* build-san/corpus/ 2>/dev/null || true
cp -n examples/gpt2_tiny/model.onnx build-san/corpus/gpt2_tiny.onnx 2>/dev/null || true
FUSOR_FUZZ_WRITE_SEEDS=build-san/corpus build-san/fusor_fuzz -runs=0 build-san/corpus >/dev/null 2>&1 || true
echo "fuzzing for ${secs}s, seed $seed, $jobs job(s); log build-san/explore-$seed.log"
build-san/fusor_fuzz -seed="$seed" -max_total_time="$secs" -timeout=30 -rss_limit_mb=4096 -max_len=262144 \
  -jobs="$jobs" -workers="$jobs" -artifact_prefix=build-san/ -print_final_stats=1 build-san/corpus \
  >"build-san/explore-$seed.log" 2>&1 || { grep -m1 -A25 -E "ERROR:|runtime error|deadly signal" "build-san/explore-$seed.log"; ls build-san/crash-* build-san/timeout-* build-san/oom-* 2>/dev/null; exit 1; }
tail -n 5 "build-san/explore-$seed.log"
