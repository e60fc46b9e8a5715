# (The FUSOR_VK_PREFETCH and FUSOR_VK_COOPMAT_PREFETCH code this measured was removed after the call: docs/benchmarks.md.)
# Session 20 call 1: L2 prefetch of weights (FUSOR_VK_PREFETCH=1/2), the cooperative-matrix GEMM
# with two K slices in flight (FUSOR_VK_COOPMAT_PREFETCH=2) and fp16 prologues off
# (FUSOR_VK_HALF_PROLOGUES=bf16), A/B in one binary on W4's GPT-2 2L and MLP (fp32 / fp16 / bf16),
# two rounds; then correctness of the knobs (conform, coopmat gtests).
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
(python3 bench/export_gpt2_torch.py /tmp/g2 > $OUT/prep.txt 2>&1; python3 docs/h200-2026-12-04b/prep.py >> $OUT/prep.txt 2>&1)
tail -3 $OUT/prep.txt
for m in /tmp/g2/fp32 /tmp/g2/fp16 /tmp/w/mlp1_fp32; do echo "$m: $(FUSOR_VK_PREFETCH=1 $fz bench $m --backend vulkan --iters 5 2>&1 | grep -E '^notes' | cut -c1-300)"; done
b() { echo "$1 $2 $3 | $(env $3 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time' | sed 's/(p10.*//;s/device time *//')"; }
for r in 1 2; do
  for m in /tmp/g2/fp32 /tmp/w/mlp64_fp32 /tmp/w/mlp1_fp32; do
    b $m cuda X=1; b $m vulkan X=1; b $m vulkan FUSOR_VK_PREFETCH=1; b $m vulkan FUSOR_VK_PREFETCH=2
  done
  for m in /tmp/g2/fp16 /tmp/g2/bf16 /tmp/w/mlp64_fp16 /tmp/w/mlp1_fp16 /tmp/w/mlp64_bf16; do
    b $m cuda X=1; b $m vulkan X=1; b $m vulkan FUSOR_VK_PREFETCH=1; b $m vulkan FUSOR_VK_COOPMAT_PREFETCH=2
    b $m vulkan "FUSOR_VK_PREFETCH=1 FUSOR_VK_COOPMAT_PREFETCH=2"
  done
  for m in /tmp/g2/fp16 /tmp/g2/bf16; do b $m vulkan FUSOR_VK_HALF_PROLOGUES=bf16; b $m vulkan "FUSOR_VK_HALF_PROLOGUES=bf16 FUSOR_VK_PREFETCH=1 FUSOR_VK_COOPMAT_PREFETCH=2"; done
done 2>&1 | tee $OUT/ab.txt
# Per-kernel traces of today's default (where the time goes now).
for m in fp32 fp16; do $fz bench /tmp/g2/$m --backend vulkan --trace $OUT/trace_$m.json --iters 20 > /dev/null 2>&1; python3 bench/trace_top.py $OUT/trace_$m.json > $OUT/top_gpt2_${m}_vulkan.txt 2>&1; rm -f $OUT/trace_$m.json; done
# Correctness with the knobs on.
for k in "FUSOR_VK_PREFETCH=1" "FUSOR_VK_COOPMAT_PREFETCH=2" "FUSOR_VK_PREFETCH=2 FUSOR_VK_COOPMAT_PREFETCH=2"; do
  echo "== $k"; env $k $fz conform /tmp/shared/models/* --backend vulkan --atol 1e-6 2>&1 | tail -1
  env $k $fz conform .dev/half/*_fp16 --backend vulkan --rtol 1e-2 --atol 2e-3 2>&1 | tail -1
  env $k $fz conform .dev/half/*_bf16 --backend vulkan --rtol 5e-2 --atol 2e-2 2>&1 | tail -1
done 2>&1 | tee $OUT/conform.txt
FUSOR_VK_COOPMAT_PREFETCH=2 FUSOR_VK_VALIDATION=0 timeout 120 .dev/fusor_tests --gtest_filter='VulkanCoopmatGpu*:Vulkan.ModelsPass*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -8; grep -A8 ': Failure$' $OUT/gtest.txt | cut -c1-200 | head -30
