# Session 24 call 7: call 6's GPU gtests again, alone (in call 6 they ran beside the node suite
# and their 150 s limit cut the summary off).
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
FUSOR_VK_VALIDATION=0 timeout 420 .dev/fusor_tests --gtest_filter="VulkanCoopmat*:Half*:Cuda.ModelsPass*:Vulkan.ModelsPass*:CudaGemv*:VulkanGemv*:VulkanTest.Gemv*:RowProduct*:InlineDot*:VulkanRowVec*:SoftmaxOnline*:VulkanLoopBudget*" 2>&1 | grep -E '^\[ +(OK|FAILED|SKIPPED) +\]|PASSED|FAILED|Failure' | tee $OUT/gtest.txt | tail -30
