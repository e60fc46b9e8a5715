# Sourced by the H200 job scripts under docs/h200-*/ (run through the device tool from the
# repository root, after scripts/package_h200.sh): unpacks .dev (scripts/h200_run.sh's setup
# step), sets the Vulkan driver, library path and kernel-cache folder, and defines
#   fz             the packaged fusor CLI
#   h200_node      the ONNX node suite on ref / cuda / vulkan in the background (-> $OUT/node)
#   h200_prep      the timed models exported there in the background (GPT-2 2L fp32 / fp16 / bf16
#                  to /tmp/g2, the MLP block to /tmp/w; extra python scripts as arguments)
#   h200_gtest F   the GPU gtests matching filter F (-> $OUT/gtest.txt, its last lines and failures printed)
#   h200_b M B [V=X]  one `fusor bench` device median of model M on backend B (with V=X set)
#   h200_conform   the shared models and .dev/half's fp16 / bf16 versions on both GPUs (-> $OUT/conform.txt)
#   h200_node_result  after `wait`: the node suite's counts (-> $OUT/node_result.txt)
#   h200_tidy      drops the bulky logs from $OUT
#   h200_correctness F  a session's correctness call: the node suite, the GPU gtests matching F,
#                  the shared models cold then warm (-> conform_cold.txt, conform.txt), then tidies
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
h200_node() { (SHARD_TIMEOUT=150 timeout 330 scripts/h200_run.sh $OUT/node node > $OUT/node_step.txt 2>&1) & }
h200_prep() {
  (timeout 200 python3 bench/export_gpt2_torch.py /tmp/g2 > $OUT/prep.txt 2>&1
   timeout 150 python3 docs/h200-2026-12-04b/prep.py >> $OUT/prep.txt 2>&1
   for p in "$@"; do timeout 150 python3 "$p" >> $OUT/prep.txt 2>&1; done) &
}
h200_gtest() {
  FUSOR_VK_VALIDATION=0 timeout ${GTEST_TIMEOUT:-300} .dev/fusor_tests --gtest_filter="$1" 2>&1 | grep -E '^\[ +(OK|FAILED|SKIPPED) +\]|PASSED|FAILED|Failure|differ' > $OUT/gtest.txt
  tail -4 $OUT/gtest.txt
  grep -E "FAILED|Failure|differ" -A3 $OUT/gtest.txt | cut -c1-300 | head -30
}
# One `fusor bench` device median: h200_b MODEL BACKEND [VAR=VALUE] -> "MODEL BACKEND VAR | median ..."
h200_b() { echo "$1 $2 ${3:-} | $(env ${3:-X=1} timeout 40 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time|rror' | head -1 | sed 's/(p10.*//;s/device time *//')"; }
h200_conform() {
  for be in cuda vulkan; do echo "== $be"; timeout 60 $fz conform /tmp/shared/models/* --backend $be --atol 1e-6 2>&1 | tail -1
    timeout 60 $fz conform .dev/half/*_fp16 --backend $be --rtol 1e-2 --atol 2e-3 2>&1 | tail -1
    timeout 60 $fz conform .dev/half/*_bf16 --backend $be --rtol 5e-2 --atol 2e-2 2>&1 | tail -1; done 2>&1 | tee $OUT/conform.txt
}
h200_node_result() { cat $OUT/node/node_counts.txt $OUT/node/node_summary.txt 2>/dev/null | head -20 | tee $OUT/node_result.txt; cat $OUT/node/shard_errors.txt 2>/dev/null | head; }
h200_tidy() { rm -f $OUT/*/devices.txt $OUT/node/node.txt $OUT/node/shard_* $OUT/r/*.json 2>/dev/null; }
h200_correctness() {
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
  local t0=$(date +%s)
  rm -rf /tmp/fusor_cache
  h200_node
  GTEST_TIMEOUT=240 FUSOR_BIN=$fz h200_gtest "$1"
  grep -E "differ|Failure" -A3 $OUT/gtest.txt | cut -c1-300 | head -30
  h200_conform; mv $OUT/conform.txt $OUT/conform_cold.txt; h200_conform
  wait
  h200_node_result
  echo "correctness took $(( $(date +%s) - t0 )) s"
  h200_tidy
}
