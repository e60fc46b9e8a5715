# Session 15 call 1: the session-14 verification debt (red-team rounds 10/11, the float64 division)
# and this session's attention-block fusion (operand prologues, Gather of Reshape) on both GPUs:
# node suite, GPU gtests of the changed areas, the shared models and their fp16 / bf16 versions.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
cudnn=$(python3 -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))" 2>/dev/null); export LD_LIBRARY_PATH=$cudnn:$LD_LIBRARY_PATH
export XDG_CACHE_HOME=/tmp/fusor_cache FUSOR_BIN=$PWD/.dev/fusor
chmod +x .dev/fusor .dev/fusor_tests; fz=$PWD/.dev/fusor
(scripts/h200_run.sh $OUT/node node > $OUT/node_step.txt 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 240 .dev/fusor_tests --gtest_filter='Round11*:Round10*:Round9*:VulkanF64Math*:MatMulPrologue*:GatherOfReshape*:Cuda.ModelsPass*:Vulkan.ModelsPass*:Half*:NumericsEpilogue*:CpuInterp*:VulkanCoopmat*:CudaGemm*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -8; grep -A8 ': Failure$' $OUT/gtest.txt | cut -c1-200 | head -40
$fz conform /tmp/shared/models --backend cuda --backend vulkan --atol 1e-6 2>&1 | tail -2
$fz conform .dev/half/*_fp16 --backend cuda --backend vulkan --rtol 1e-2 --atol 2e-3 2>&1 | tail -1
$fz conform .dev/half/*_bf16 --backend cuda --backend vulkan --rtol 5e-2 --atol 2e-2 2>&1 | tail -1
for b in cuda vulkan; do $fz bench /tmp/shared/models/gpt2_tiny --backend $b --iters 20 2>&1 | grep -i "kernels\|dispatch\|cuBLASLt" | head -3; done
wait
cat $OUT/node/node_counts.txt $OUT/node/node_summary.txt 2>/dev/null; cat $OUT/node/shard_errors.txt 2>/dev/null
rm -f $OUT/*/devices.txt $OUT/node/node.txt $OUT/node/shard_*
