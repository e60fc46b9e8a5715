# Session 14 call 1: correctness of the current build on both GPUs (node suite, GPU gtests, models)
# and the Vulkan conv blocked-tile A/B (FUSOR_VK_CONV_TILE) on the W6 CNNs.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
cudnn=$(python3 -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))" 2>/dev/null); export LD_LIBRARY_PATH=$cudnn:$LD_LIBRARY_PATH
export XDG_CACHE_HOME=/tmp/fusor_cache
chmod +x .dev/fusor .dev/fusor_tests; fz=$PWD/.dev/fusor
(python3 .gl/w6exp.py  # docs/h200-2026-12-02f/w6exp.py > $OUT/export.txt 2>&1) &
(NODE_FILTER=. scripts/h200_run.sh $OUT/node node > $OUT/node_step.txt 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 280 .dev/fusor_tests --gtest_filter='Round9*:CudaConvTemplate*:CudaConv.*:Numerics*:Cuda.ModelsPass*:Vulkan.ModelsPass*:SessionCache*:Half*:VulkanConvDb*:VulkanConvSplitK*:VulkanSplitK*:VulkanBigBuffers*:VulkanCoopmat*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -8; grep -A8 ': Failure$' $OUT/gtest.txt | cut -c1-200 | head -40
$fz conform /tmp/shared/models --backend cuda --backend vulkan --atol 1e-6 2>&1 | tail -3
FUSOR_VK_CONV_TILE=auto $fz conform /tmp/shared/models --backend vulkan --atol 1e-6 2>&1 | tail -2
$fz conform .dev/half/*_fp16 --backend cuda --backend vulkan --rtol 1e-2 --atol 2e-3 2>&1 | tail -2
$fz conform .dev/half/*_bf16 --backend cuda --backend vulkan --rtol 5e-2 --atol 2e-2 2>&1 | tail -2
wait
cat $OUT/node/node_counts.txt $OUT/node/node_summary.txt 2>/dev/null; cat $OUT/node/shard_errors.txt 2>/dev/null
tail -1 $OUT/export.txt
b() { echo "$1 $2 ${3:-} $(env ${3:-X=1} $fz bench $1 --backend $2 --iters 100 2>&1 | grep -E -o 'device time *median [0-9.]* us|[0-9]+ conv kernel\(s\) on blocked register tiles \([^)]*\)' | tr '\n' ' ')"; }
{
for m in /tmp/w6/*/; do
  b $m cuda
  for t in interleaved auto 8x8 4x4b; do b $m vulkan FUSOR_VK_CONV_TILE=$t; done
done
for m in /tmp/w6/resnet18_32/ /tmp/w6/squeezenet1_1_32/; do
  for t in 4x8 8x4 auto; do b $m vulkan FUSOR_VK_CONV_TILE=$t; done
  echo "agree auto: $(FUSOR_VK_CONV_TILE=auto timeout 120 $fz diff $m --backend cuda --backend vulkan 2>&1 | tail -1)"
done
} 2>&1 | tee $OUT/conv_ab.txt
for t in interleaved auto; do
  FUSOR_VK_CONV_TILE=$t $fz bench /tmp/w6/resnet18_32 --backend vulkan --iters 20 --trace $OUT/t.json > /dev/null 2>&1
  python3 bench/trace_top.py $OUT/t.json --top 30 > $OUT/top_resnet18_32_$t.txt 2>&1; rm -f $OUT/t.json; head -12 $OUT/top_resnet18_32_$t.txt
done
rm -f $OUT/*/devices.txt $OUT/node/node.txt $OUT/node/shard_*
