# Session 38, A/B call: fp16 cooperative matrices at 16x16x16 through KHR (B's rows a
# specialization constant, FZ_CM_KB_SPEC, as bf16 already did) against the default 16x8x16:
# the coopmat GPU gtests and the half models' conformance with each shape, then `fusor bench`
# device medians (two rounds) of W7's models exported here, and cuda vs vulkan `fusor diff`.
#   bash docs/h100-2026-12-06c/ab1.sh   (after the .dev package)
. scripts/h200_job.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
h200_prep
for s in 16x8x16 16x16x16; do
  echo "== shape $s"
  FUSOR_VK_COOPMAT_SHAPE=$s GTEST_TIMEOUT=150 h200_gtest 'VulkanCoopmat*:Half*:Vulkan.ModelsPass*'
  grep -E "Failure|differ" -A3 $OUT/gtest.txt | head -12; mv $OUT/gtest.txt $OUT/gtest_$s.txt
  FUSOR_VK_COOPMAT_SHAPE=$s timeout 60 $fz conform .dev/half/*_fp16 --backend vulkan --rtol 1e-2 --atol 2e-3 2>&1 | tail -1
done
wait; tail -1 $OUT/prep.txt
b() { echo "$1 $2 ${3:-} | $(env ${3:-X=1} timeout 40 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time|rror|^notes' | head -2 | sed 's/(p10.*//;s/device time *//' | tr '\n' ' ')"; }
{
for r in 1 2; do
  for m in /tmp/w/mlp64_fp16 /tmp/w/mlp1_fp16 /tmp/g2/fp16 /tmp/g2/bf16; do
    b $m cuda; b $m vulkan FUSOR_VK_COOPMAT_SHAPE=16x8x16; b $m vulkan FUSOR_VK_COOPMAT_SHAPE=16x16x16
  done
done
} 2>&1 | tee $OUT/ab.txt
for m in /tmp/g2/fp16 /tmp/w/mlp64_fp16; do echo "diff $m: $(FUSOR_VK_COOPMAT_SHAPE=16x16x16 timeout 60 $fz diff $m --backend cuda --backend vulkan 2>&1 | grep -E '^(first|no )|rror' | head -1)"; done | tee -a $OUT/ab.txt
h200_tidy
