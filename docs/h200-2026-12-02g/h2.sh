# Session 14 call 2: the final build's re-checks (the cosh fix, conv defaults), then W1, W2, W3, W5, W7 with every system (IREE on W1).
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export XDG_CACHE_HOME=/tmp/fusor_cache
chmod +x .dev/fusor .dev/fusor_tests
FUSOR_VK_VALIDATION=0 timeout 100 .dev/fusor_tests --gtest_filter='Numerics.Hyperbolic*:VulkanConvDb*:Vulkan.ModelsPass*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -4; grep -A6 ': Failure$' $OUT/gtest.txt | cut -c1-200 | head -20
SIDE_ARGS='--quick --only W1,W2,W3,W5,W7' timeout 470 scripts/h200_run.sh $OUT/side side 2>&1 | tail -60
rm -f $OUT/*/devices.txt
