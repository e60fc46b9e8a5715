# Session 38, A/B call 2: fp16 operand prologues (FUSOR_VK_HALF_PROLOGUES=all) with the
# prologued products on the tiled template instead of the cooperative-matrix one with scalar
# staging (FUSOR_VK_PROLOGUED_COOPMAT=0), as bf16's already are: correctness first (the
# prologue gtests and the fp16 half models under the variant), then `fusor bench` device
# medians, three rounds, and the cuda vs vulkan `fusor diff`.
#   bash docs/h100-2026-12-06c/ab2.sh   (after the .dev package; FUSOR_VK_PROLOGUED_COOPMAT was a
# measuring knob of that build only, removed after this call: no gain)
. scripts/h200_job.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
h200_prep
V='FUSOR_VK_HALF_PROLOGUES=all FUSOR_VK_PROLOGUED_COOPMAT=0'
export FUSOR_VK_HALF_PROLOGUES=all FUSOR_VK_PROLOGUED_COOPMAT=0
GTEST_TIMEOUT=120 h200_gtest 'MatMulPrologue*:Half*:VulkanCoopmat*:Vulkan.ModelsPass*'
unset FUSOR_VK_HALF_PROLOGUES FUSOR_VK_PROLOGUED_COOPMAT
env $V timeout 60 $fz conform .dev/half/*_fp16 .dev/half/*_bf16 --backend vulkan --rtol 5e-2 --atol 2e-2 2>&1 | tail -1
wait; tail -1 $OUT/prep.txt
b() { echo "$1 $2 ${3:-} | $(env ${3:-X=1} timeout 40 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time|rror|^notes' | head -2 | sed 's/(p10.*//;s/device time *//' | tr '\n' ' ')"; }
{
for r in 1 2 3; do
  for m in /tmp/g2/fp16 /tmp/g2/bf16; do
    b $m cuda; b $m vulkan; b $m vulkan "FUSOR_VK_HALF_PROLOGUES=all"; b $m vulkan "$V"
  done
done
} 2>&1 | tee $OUT/ab.txt
echo "diff fp16: $(env $V timeout 60 $fz diff /tmp/g2/fp16 --backend cuda --backend vulkan 2>&1 | grep -E '^(first|no )|rror' | head -1)" | tee -a $OUT/ab.txt
h200_tidy
