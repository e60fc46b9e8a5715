# Session 23 call 5: a mean's division by its constant count through the prepared divisor
# (fz_div_by, codegen.cpp finish_reduction) on the H200: VulkanDiv gtests (fused-fma division),
# the shared models, GPT-2 2L fp32 / fp16 and MLP b64 fp32 with cuda and vulkan, three rounds.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
(python3 bench/export_gpt2_torch.py /tmp/g2 > $OUT/prep.txt 2>&1; python3 docs/h200-2026-12-04b/prep.py >> $OUT/prep.txt 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 60 .dev/fusor_tests --gtest_filter='VulkanDiv*:VulkanRowVec*:Cuda.ModelsPass*:Vulkan.ModelsPass*' 2>&1 | grep -E '^\[ +(FAILED|SKIPPED) +\]|PASSED|FAILED' | tee $OUT/gtest.txt
for be in cuda vulkan; do echo "== $be $(timeout 60 $fz conform /tmp/shared/models/* --backend $be --atol 1e-6 2>&1 | tail -1)"; done | tee $OUT/conform.txt
wait; tail -1 $OUT/prep.txt
b() { echo "$1 $2 | $(timeout 30 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time' | sed 's/(p10.*//;s/device time *//')"; }
for r in 1 2 3; do for m in /tmp/g2/fp32 /tmp/g2/fp16 /tmp/w/mlp64_fp32; do b $m cuda; b $m vulkan; done; done 2>&1 | tee $OUT/bench.txt
echo "diff: $(timeout 60 $fz diff /tmp/g2/fp32 --backend cuda --backend vulkan --rtol 1e-3 --atol 1e-5 2>&1 | grep -E '^(first|no )' | head -1)" | tee -a $OUT/bench.txt
rm -f $OUT/r/*.json $OUT/r/devices.txt 2>/dev/null
