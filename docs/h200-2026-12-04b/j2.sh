# Session 20 call 2: the fp32 tiled GEMM's tile shapes and split-K constants on W4's GPT-2 2L
# (all M = 64) and the MLP b64, whole-model bench and per-kernel traces (shapes in brackets), to
# find per-shape rules; then the new default (fp16 operands without prologues on Vulkan) checked.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
[ -d /tmp/g2/fp32 ] || (python3 bench/export_gpt2_torch.py /tmp/g2 > $OUT/prep.txt 2>&1; python3 docs/h200-2026-12-04b/prep.py >> $OUT/prep.txt 2>&1)
b() { echo "$1 $2 $3 | $(env $3 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time' | sed 's/(p10.*//;s/device time *//')"; }
cfgs="X=1 FUSOR_VK_GEMM_TILES=64,64,4,4 FUSOR_VK_GEMM_TILES=32,64,2,4 FUSOR_VK_GEMM_TILES=32,64,2,2 FUSOR_VK_GEMM_TILES=64,64,2,4 FUSOR_VK_GEMM_TILES=64,64,2,2 FUSOR_VK_GEMM_TILES=32,32,2,2 FUSOR_VK_GEMM_TILES=32,32,1,2 FUSOR_VK_GEMM_TILES=64,32,2,2 FUSOR_VK_SPLIT_MIN_SLICE=96 FUSOR_VK_SPLIT_MIN_SLICE=128 FUSOR_VK_GEMM_BK=16 FUSOR_VK_SPLIT_PER_UNIT=2 FUSOR_VK_SPLIT_K=1"
b /tmp/g2/fp32 cuda X=1; b /tmp/w/mlp64_fp32 cuda X=1
for c in $cfgs; do
  b /tmp/g2/fp32 vulkan $c; b /tmp/w/mlp64_fp32 vulkan $c
  env $c $fz bench /tmp/g2/fp32 --backend vulkan --trace /tmp/t.json --iters 20 > /dev/null 2>&1
  python3 bench/trace_top.py /tmp/t.json --top 30 2>&1 | grep -E 'MxNxK' | sed -E 's/^(k[0-9]+)_[^ ]* +[a-z]+ +([0-9.]+).*\[MxNxK ([0-9x]+)\].*/\1 \3 \2/' | sort -k2,2 -k1,1 | awk -v c="$c" '{printf "  %s %s %s %s\n", c, $1, $2, $3}'
done 2>&1 | tee $OUT/sweep.txt
# The default change: fp16 GPT-2 / MLP with and without fp16 prologues, and correctness.
for r in 1 2; do for m in /tmp/g2/fp16 /tmp/g2/bf16; do b $m cuda X=1; b $m vulkan X=1; b $m vulkan FUSOR_VK_HALF_PROLOGUES=all; done; done 2>&1 | tee $OUT/half.txt
$fz conform .dev/half/*_fp16 --backend vulkan --backend cuda --rtol 1e-2 --atol 2e-3 2>&1 | tail -1
$fz conform .dev/half/*_bf16 --backend vulkan --backend cuda --rtol 5e-2 --atol 2e-2 2>&1 | tail -1
FUSOR_VK_VALIDATION=0 timeout 120 .dev/fusor_tests --gtest_filter='MatMulPrologue*:Half*:VulkanCoopmatGpu*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -8; grep -A8 ': Failure$' $OUT/gtest.txt | cut -c1-200 | head -30
