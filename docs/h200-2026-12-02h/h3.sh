# Session 15 call 3: after call 2 (prologues made fusor-cuda slower on GPT-2): the NVRTC tiled
# GEMM reads transposed operands along their unit stride, fp16 prologues take the tiled path on
# Vulkan. GPU gtests of the changed areas, then the W4/W7 A/B against the stop-34 build again.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export XDG_CACHE_HOME=/tmp/fusor_cache FUSOR_BIN=$PWD/.dev/fusor
xz -dkf .dev/fusor_old.xz; chmod +x .dev/fusor .dev/fusor_old .dev/fusor_tests; fz=$PWD/.dev/fusor
FUSOR_VK_VALIDATION=0 timeout 150 .dev/fusor_tests --gtest_filter='MatMulPrologue*:GatherOfReshape*:Cuda.ModelsPass*:Vulkan.ModelsPass*:Half*:NumericsEpilogue*:VulkanCoopmat*:CudaGemm*:CudaCodegen*:VulkanGemm*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -6; grep -A8 ': Failure$' $OUT/gtest.txt | cut -c1-200 | head -30
$fz conform .dev/half/*_fp16 --backend cuda --backend vulkan --rtol 1e-2 --atol 2e-3 2>&1 | tail -1
$fz conform .dev/half/*_bf16 --backend cuda --backend vulkan --rtol 5e-2 --atol 2e-2 2>&1 | tail -1
for b in fusor fusor_old; do
  echo "== $b"; PYTHONUNBUFFERED=1 timeout 170 python3 bench/side_by_side.py --fusor $PWD/.dev/$b --out $OUT/ab_$b --quick --only W4,W7 --systems fusor-cuda,fusor-vulkan > /dev/null 2>&1
  grep -E "^W[47].*(GPT|MLP batch 64).*fusor-(cuda|vulkan) +ms" $OUT/ab_$b/side_by_side.log
done
