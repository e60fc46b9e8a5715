# Session 23 call 4: the GEMV unroll defaults chosen from call 3 (cuda 16; vulkan 16 for 4-byte
# B, 4 for 2-byte) against the previous ones (cuda 4, vulkan 1) on MLP b1 fp32 / fp16 / bf16, two
# rounds; the GEMV gtests with the defaults.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
(python3 docs/h200-2026-12-04b/prep.py > $OUT/prep.txt 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 60 .dev/fusor_tests --gtest_filter='CudaGemv*:VulkanGemv*:VulkanTest.Gemv*:Cuda.ModelsPass*:Vulkan.ModelsPass*' 2>&1 | grep -E '^\[ +(FAILED|SKIPPED) +\]|PASSED|FAILED' | tee $OUT/gtest.txt
wait
b() { echo "$1 $2 $3 | $(env $3 timeout 30 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time' | sed 's/(p10.*//;s/device time *//')"; }
for r in 1 2; do for m in /tmp/w/mlp1_fp32 /tmp/w/mlp1_fp16 /tmp/w/mlp1_bf16; do b $m cuda FUSOR_CUDA_GEMV_UNROLL=4; b $m cuda X=1; b $m vulkan FUSOR_VK_GEMV_UNROLL=1; b $m vulkan X=1; done; done 2>&1 | tee $OUT/bench.txt
for m in /tmp/w/mlp1_fp32 /tmp/w/mlp1_fp16 /tmp/w/mlp1_bf16; do echo "diff $m: $(timeout 60 $fz diff $m --backend cuda --backend vulkan 2>&1 | grep -E '^(first|no )' | head -1)"; done | tee -a $OUT/bench.txt
rm -f $OUT/r/*.json $OUT/r/devices.txt 2>/dev/null
