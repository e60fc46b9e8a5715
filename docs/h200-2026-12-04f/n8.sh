# Session 24 call 8: the mended VulkanLoopBudget plan test (and its suite) on the H200.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
FUSOR_VK_VALIDATION=0 timeout 120 .dev/fusor_tests --gtest_filter='VulkanLoopBudget*:VulkanTest.Gemv*' 2>&1 | grep -E '^\[ +(OK|FAILED|SKIPPED) +\]|PASSED|FAILED|Failure' | tee $OUT/gtest.txt
