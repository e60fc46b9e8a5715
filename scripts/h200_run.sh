#!/usr/bin/env bash
# Runs on the NVIDIA GPU machine (see ../shared/device/README.md), from the repository root,
# after scripts/package_h200.sh made .dev/ here and both .dev and .gl travelled:
#   scripts/h200_run.sh OUTDIR [STEP...]
# Steps (default: all of them, in this order):
#   tests  GPU tests (gtest Cuda*/Vulkan*), the four models on cuda and vulkan, compute-sanitizer
#   node   the ONNX node suite on ref, cuda and vulkan (sharded over the cores)
#   bench  `fusor bench --json` on the four models: fused/unfused x replay/eager, both GPUs
#   side   bench/side_by_side.py (W1-W7, five systems; with .dev/iree.tar.xz also iree-cuda and
#          iree-vulkan on W1/W4/W6); SIDE_ARGS adds its options (e.g. --only W6)
#   compile  cold (empty kernel cache, new process) and warm-process (cache filled by the cold
#          run, new process) load + compile time of the shared models on both GPUs, then cold
#          on cuda with NVRTC batching default / 8 programs / off (compile_nvrtc_batch.txt)
#   phases  load-time profile (`fusor bench --phases`) of a whole GPT-2 2L (bench/gpt2_onnx.py,
#          211 MB) and the shared models on both GPUs: a new process with an empty kernel cache
#          (cold), then one with the cache it filled (warm), each printing one line per phase
#   gemv   bench/gemv_sweep.py (MLP b1 fp32/fp16: old vs vector GEMV on cuda and vulkan, widths, copy GB/s)
#   gemm_ab  bench/vk_gemm_ab.sh: the Vulkan tiled-GEMM knobs (FUSOR_VK_GEMM_TILE, _VEC4, _BK,
#          FUSOR_VK_SPLIT_K) on the MLP b64 fp32 / bf16 and GPT-2 (+ .dev/half's bf16/fp16 GPT-2)
#   gemm_sweep  bench/vk_gemm_sweep.sh: Vulkan GEMM tiles / split-K / coopmat grids on single GEMMs
#   profile  bench/kernel_profile.sh: per-kernel device time (fusor bench --trace) on both GPUs of
#          the MLP b64, GPT-2 (fp32 and half) and W6 resnet18 b32 / squeezenet b1
#   python python/tests with the machine's torch (CUDA zero-copy through DLPack), using the
#          extension package_h200.sh built for its interpreter (PY_HEADERS), and
#          `fusor bench --trace` on both GPUs, each trace checked as trace-event JSON
# GTEST_FILTER narrows the tests step (TESTS_TIMEOUT its seconds, default 300; SANITIZE_MODELS= skips its compute-sanitizer runs); NODE_FILTER (an extended regex on case names) the node step.
# Writes logs and docs inputs under OUTDIR.
set -uo pipefail
out=${1:?usage: h200_run.sh OUTDIR [tests|node|bench|side ...]}
shift
steps=${*:-tests node bench side}
has() { case " $steps " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
mkdir -p "$out"
root=$(pwd)
# Unpacking happens once per package: steps started side by side in one call (e.g. `node` in the
# background beside `tests`) must not rewrite binaries the other is running.
stamp=$(cat .dev/*.xz .dev/py/fusor/*.so.xz 2>/dev/null | md5sum)
if [ "$(cat /tmp/fusor_unpacked 2>/dev/null)" != "$stamp" ] || [ ! -x .dev/fusor ]; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
fi
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
export LD_LIBRARY_PATH=$root/.dev/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export XDG_CACHE_HOME=/tmp/fusor_cache
# cuDNN for fusor-cuda's convolutions (dlopen("libcudnn.so.9")): the torch venv's nvidia-cudnn
# wheel, else a copy bundled under torch/lib. Without one fusor runs every conv on its template.
cudnn_dir=$(python3 -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))" 2>/dev/null || true)
if [ -z "$cudnn_dir" ] || ! ls "$cudnn_dir"/libcudnn.so.9* > /dev/null 2>&1; then
  cudnn_dir=$(python3 -c "import torch, os; print(os.path.join(os.path.dirname(torch.__file__), 'lib'))" 2>/dev/null || true)
  ls "$cudnn_dir"/libcudnn.so.9* > /dev/null 2>&1 || cudnn_dir=
fi
if [ -n "$cudnn_dir" ]; then
  export LD_LIBRARY_PATH=$cudnn_dir:$LD_LIBRARY_PATH
  echo "cuDNN: $(ls "$cudnn_dir"/libcudnn.so.9* | head -1)"
else
  echo "cuDNN: not found (nvidia.cudnn, torch/lib): convolutions use the NVRTC template"
fi
if [ "$(cat /tmp/fusor_unpacked 2>/dev/null)" != "$stamp" ] || [ ! -x .dev/fusor ]; then
  for f in .dev/fusor.xz .dev/fusor_tests.xz .dev/py/fusor/*.so.xz; do [ -f "$f" ] && xz -dkf "$f"; done
  mkdir -p /tmp/shared && tar -C /tmp/shared -xJf .dev/shared.tar.xz
  if [ -f .dev/half.tar.xz ]; then mkdir -p .dev/half && tar -C .dev/half -xJf .dev/half.tar.xz; fi
  rm -rf /tmp/iree_bundle
  if [ -f .dev/iree.tar.xz ]; then mkdir -p /tmp/iree_bundle && tar -C /tmp/iree_bundle -xJf .dev/iree.tar.xz; fi
  echo "$stamp" > /tmp/fusor_unpacked
fi
export FUSOR_SHARED=/tmp/shared FUSOR_BIN=$root/.dev/fusor
fz=$root/.dev/fusor
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; $fz devices; } 2>&1 | tee "$out/devices.txt"

if has tests; then
  # The node suite runs below (sharded), so its gtest twins are left out here.
  FUSOR_VK_VALIDATION=0 timeout ${TESTS_TIMEOUT:-300} $root/.dev/fusor_tests --gtest_filter="${GTEST_FILTER:-Vulkan*:Cuda*:-*NodeSuite*}" > "$out/gtest_gpu.txt" 2>&1
  grep -E '^\[  (FAILED|PASSED|SKIPPED) ' "$out/gtest_gpu.txt" | sort | uniq -c | tail -12
  # Each failure's message in the step's own output: the log file may not come back.
  grep -A8 ': Failure$' "$out/gtest_gpu.txt" | cut -c1-220 | head -60
  $fz conform /tmp/shared/models --backend cuda --backend vulkan --atol 1e-6 2>&1 | tee "$out/models.txt"
  $fz conform /tmp/shared/models --backend cuda --backend vulkan 2>&1 | tail -3 | tee -a "$out/models.txt"
  # fp16 versions of the shared models against onnxruntime (bench/half_models.py; packed by
  # package_h200.sh when HALF_MODELS names their folder).
  # bf16 versions: stored outputs are the fp32 model on the same bf16 weights and inputs, so
  # the tolerance covers bf16 rounding of every intermediate (README, conformance).
  if [ -d .dev/half ]; then
    $fz conform .dev/half/*_fp16 --backend cuda --backend vulkan --rtol 1e-2 --atol 2e-3 2>&1 | tee "$out/half_models.txt" | tail -3
    $fz conform .dev/half/*_bf16 --backend cuda --backend vulkan --rtol 5e-2 --atol 2e-2 2>&1 | tee -a "$out/half_models.txt" | tail -3
  fi
  for m in ${SANITIZE_MODELS-mobilenet_v3_small mlp_block}; do
    FUSOR_CUDA_GEMM=cublaslt timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck $fz run /tmp/shared/models/$m --backend cuda \
      > "$out/sanitizer_$m.txt" 2>&1
    echo "sanitizer $m: $(tail -1 "$out/sanitizer_$m.txt")"
  done
fi

if has node; then
  # Each case compiles its own kernels: small shards under a time limit, so one slow case costs
  # one shard, which is then named.
  rm -f /tmp/shard_* "$out/shard_errors.txt"
  ls -d /tmp/shared/onnx-tests/node/*/ | grep -E "${NODE_FILTER:-.}" | split -n r/$((4 * $(nproc))) - /tmp/shard_
  ls /tmp/shard_* | xargs -P "$(nproc)" -I{} sh -c \
    "timeout ${SHARD_TIMEOUT:-180} $fz conform \$(cat {}) --backend ref --backend cuda --backend vulkan > {}.out 2>&1; r=\$?; [ \$r -gt 1 ] && echo 'shard {} exit' \$r >> $out/shard_errors.txt; true"
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
fi

if has bench; then
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

if has side; then
  # With the IREE bundle (package_h200.sh IREE_BUNDLE=...), IREE 3.13 joins W1/W4/W6 as iree-cuda, iree-vulkan.
  iree=()
  if [ -f .dev/iree.tar.xz ] && [ -f /tmp/iree_bundle/manifest.json ]; then iree=(--iree /tmp/iree_bundle); fi
  PYTHONUNBUFFERED=1 python3 bench/side_by_side.py --fusor "$fz" --out "$out" "${iree[@]}" ${SIDE_ARGS:-} 2>&1 | tail -70
fi

if has python; then
  if [ -d .dev/py/fusor ]; then
    PYTHONPATH=$root/.dev/py python3 -m pytest -q -rs python/tests 2>&1 | tail -15 | tee "$out/pytest.txt"
  else
    echo "python: no .dev/py (package with PY_HEADERS=...)" | tee "$out/pytest.txt"
  fi
  for b in cuda vulkan; do
    $fz bench /tmp/shared/models/gpt2_tiny --backend $b --iters 5 --trace "$out/trace_$b.json" > /dev/null 2>&1
    python3 - "$out/trace_$b.json" <<'PY' 2>&1 | tee -a "$out/pytest.txt"
import json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"] if isinstance(t, dict) else t
slices = [e for e in ev if e.get("ph") == "X"]
assert slices and all({"name", "ts", "dur", "pid", "tid"} <= set(e) for e in slices), "bad slices"
gpu = [e for e in slices if "GBps" in e.get("args", {}) or "bytes" in e.get("args", {})]
print(sys.argv[1], len(slices), "slices,", len(gpu), "kernel slices with bytes; total kernel us",
      round(sum(e["dur"] for e in gpu), 1), "e.g.", gpu[0]["name"][:60] if gpu else "-")
PY
  done
fi

if has compile; then
  # Each model, each backend: a new process with an empty cache (cold), then one more with the
  # cache the first filled (warm process). Times include loading the ONNX file.
  for m in /tmp/shared/models/*/; do
    for b in cuda vulkan; do
      c=$(mktemp -d)
      j1=$(XDG_CACHE_HOME=$c $fz bench "$m" --backend $b --iters 1 --warmup 0 --json 2>/dev/null | tr -d '\n ')
      j2=$(XDG_CACHE_HOME=$c $fz bench "$m" --backend $b --iters 1 --warmup 0 --json 2>/dev/null | tr -d '\n ')
      python3 - "$(basename "$m")" $b "$j1" "$j2" <<'PY'
import json, sys
m, b = sys.argv[1], sys.argv[2]
try:
    j1, j2 = json.loads(sys.argv[3]), json.loads(sys.argv[4])
    print(f"{m:22s} {b:7s} cold_ms={j1['load_ms'] + j1['compile_ms']:.0f} warm_process_ms={j2['load_ms'] + j2['compile_ms']:.0f} load_ms={j2['load_ms']:.0f} kernels={j1['kernels']}")
except Exception as e:
    print(f"{m:22s} {b:7s} failed: {e}")
PY
      rm -rf "$c"
    done
  done | tee "$out/compile.txt"
fi

if has compile; then
  # NVRTC batching A/B on cuda (backends/cuda/nvrtc_batch.h): cold compile with the default
  # (as many programs as cores), 8 programs (8 compile threads) and one program per kernel.
  for m in /tmp/shared/models/*/; do
    for v in default FUSOR_COMPILE_THREADS=8 FUSOR_NVRTC_BATCH=0; do
      c=$(mktemp -d)
      e=(XDG_CACHE_HOME=$c)
      [ $v = default ] || e+=($v)
      j=$(env "${e[@]}" $fz bench "$m" --backend cuda --iters 1 --warmup 0 --json 2>/dev/null | tr -d '\n ')
      python3 - "$(basename "$m")" $v "$j" <<'PY'
import json, sys
try:
    j = json.loads(sys.argv[3])
    print(f"{sys.argv[1]:22s} cuda {sys.argv[2]:24s} cold_ms={j['load_ms'] + j['compile_ms']:.0f} kernels={j['kernels']}")
except Exception as e:
    print(f"{sys.argv[1]:22s} cuda {sys.argv[2]:24s} failed: {e}")
PY
      rm -rf "$c"
    done
  done | tee "$out/compile_nvrtc_batch.txt"
fi

if has phases; then
  # README "Load-time profile". --iters 3: the timed runs are not the point here.
  g2=/tmp/fusor_gpt2_2l
  [ -f $g2/model.onnx ] || python3 bench/gpt2_onnx.py $g2 > /dev/null || echo "bench/gpt2_onnx.py failed (needs numpy + onnx)"
  for m in $g2 /tmp/shared/models/*/; do
    [ -f "$m/model.onnx" ] || continue
    for b in cuda vulkan; do
      c=$(mktemp -d)
      for run in cold warm; do
        echo "== $(basename "$m") $b $run (new process)"
        XDG_CACHE_HOME=$c $fz bench "$m" --backend $b --iters 3 --warmup 0 --phases 2>&1 | sed -n '/^kernels/p;/^load/,/^host time/p;/^phases/,$p'
      done
      rm -rf "$c"
    done
  done | tee "$out/phases.txt"
fi

if has gemv; then
  PYTHONUNBUFFERED=1 python3 bench/gemv_sweep.py --fusor "$fz" --out "$out/gemv" 2>&1 | tail -60
fi

if has gemm_ab; then
  bench/vk_gemm_ab.sh "$fz" "$out/gemm_ab"
fi

if has profile; then
  bench/kernel_profile.sh "$fz" "$out/profile"
  rm -f "$out"/profile/*.onnx
fi

if has gemm_sweep; then
  bench/vk_gemm_sweep.sh "$fz" "$out/gemm_sweep"
fi
