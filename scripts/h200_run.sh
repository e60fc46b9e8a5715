#!/usr/bin/env bash
# Runs on the NVIDIA GPU machine (see ../shared/device/README.md), from the repository root,
# after scripts/package_h200.sh made .dev/ here and both .dev and .gl travelled:
#   scripts/h200_run.sh OUTDIR [all|conform|bench|side]
# Writes logs and docs inputs under OUTDIR.
set -uo pipefail
out=${1:?usage: h200_run.sh OUTDIR [all|conform|bench|side]}
what=${2:-all}
mkdir -p "$out"
root=$(pwd)
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
export LD_LIBRARY_PATH=$root/.dev/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export XDG_CACHE_HOME=/tmp/fusor_cache
mkdir -p /tmp/shared && tar -C /tmp/shared -xJf .dev/shared.tar.xz
export FUSOR_SHARED=/tmp/shared FUSOR_BIN=$root/.dev/fusor
fz=$root/.dev/fusor
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; $fz devices; } 2>&1 | tee "$out/devices.txt"

if [ "$what" = all ] || [ "$what" = conform ]; then
  $fz conform /tmp/shared/models --backend cuda --backend vulkan --atol 1e-6 2>&1 | tee "$out/models.txt"
  $fz conform /tmp/shared/models --backend cuda --backend vulkan 2>&1 | tail -3 | tee -a "$out/models.txt"
  # Node suite, sharded over the machine's cores (each case compiles its own kernels); small
  # shards under a time limit, so one slow case costs one shard, which is then named.
  ls -d /tmp/shared/onnx-tests/node/*/ | split -n r/$((4 * $(nproc))) - /tmp/shard_
  ls /tmp/shard_* | grep -v '\.out$' | xargs -P "$(nproc)" -I{} sh -c \
    "timeout ${SHARD_TIMEOUT:-180} $fz conform \$(cat {}) --backend ref --backend cuda --backend vulkan > {}.out 2>&1 || echo 'shard {} exit' \$? >> $out/shard_errors.txt"
  cat "$out/shard_errors.txt" 2>/dev/null
  cat /tmp/shard_*.out | grep -E '^(PASS|FAIL|SKIP) ' > "$out/node.txt"
  for b in ref cuda vulkan; do
    echo "$b $(grep -c "^PASS $b " "$out/node.txt") passed, $(grep -c "^FAIL $b " "$out/node.txt") failed, $(grep -c "^SKIP $b " "$out/node.txt") skipped"
  done | tee "$out/node_counts.txt"
  # Every case ref passes must pass on cuda and vulkan.
  grep '^PASS ref' "$out/node.txt" | awk '{print $3}' | sed 's/:$//' | sort > /tmp/refpass
  for b in cuda vulkan; do
    grep "^FAIL $b " "$out/node.txt" | awk '{print $3}' | sed 's/:$//' | sort > /tmp/fail_$b
    echo "$b fails $(comm -12 /tmp/refpass /tmp/fail_$b | wc -l) cases that ref passes"
  done | tee "$out/node_summary.txt"
  FUSOR_VK_VALIDATION=0 timeout 300 $root/.dev/fusor_tests --gtest_filter='Vulkan*:Cuda*:-*NodeSuite*' > "$out/gtest_gpu.txt" 2>&1
  tail -5 "$out/gtest_gpu.txt"
  if command -v compute-sanitizer >/dev/null || [ -x /usr/local/cuda/bin/compute-sanitizer ]; then
    timeout 200 /usr/local/cuda/bin/compute-sanitizer --tool memcheck $fz run /tmp/shared/models/mobilenet_v3_small --backend cuda > "$out/sanitizer.txt" 2>&1
    tail -3 "$out/sanitizer.txt"
  fi
fi
if [ "$what" = all ] || [ "$what" = bench ]; then
  for m in mlp_block gpt2_tiny mobilenet_v3_small squeezenet1_1; do
    for b in cuda vulkan; do
      for flags in "" "--no-fusion" "--eager" "--no-fusion --eager"; do
        echo "== $m $b $flags"
        $fz bench /tmp/shared/models/$m --backend $b --iters 50 --json $flags 2>&1 | tr -d '\n '
        echo
      done
    done
  done > "$out/bench_models.txt" 2>&1
  tail -2 "$out/bench_models.txt"
fi
if [ "$what" = all ] || [ "$what" = side ]; then
  PYTHONUNBUFFERED=1 python3 bench/side_by_side.py --fusor "$fz" --out "$out" ${SIDE_ARGS:-} 2>&1 | tail -60
fi
