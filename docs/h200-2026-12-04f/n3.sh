# Session 24 call 3: cooperative-matrix GEMMs with direct fragments (gemm_coopmat.glsl
# FZ_CM_DIRECT: matrix loads from the buffers, no shared slices or K-loop barriers) against the
# shared slices (FUSOR_VK_COOPMAT_DIRECT=0): the coopmat GPU gtests (direct vs staged bit for
# bit), fp16 / bf16 models, fusor bench device medians (two rounds), a few tile shapes.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
(timeout 200 python3 bench/export_gpt2_torch.py /tmp/g2 > $OUT/prep.txt 2>&1; timeout 150 python3 docs/h200-2026-12-04b/prep.py >> $OUT/prep.txt 2>&1) &
mkdir -p /tmp/g/g16; python3 bench/fp16_gemm_model.py --dtype fp16 --plain /tmp/g/g16/model.onnx 64 3072 768 >> $OUT/prep.txt 2>&1
FUSOR_VK_VALIDATION=0 timeout 150 .dev/fusor_tests --gtest_filter='VulkanCoopmat*:Half*:Vulkan.ModelsPass*' 2>&1 | grep -E '^\[ +(FAILED|SKIPPED) +\]|PASSED|FAILED|Failure|direct|Which is' | head -40 | tee $OUT/gtest.txt
for d in 1 0; do echo "== direct=$d $(FUSOR_VK_COOPMAT_DIRECT=$d timeout 90 $fz conform /tmp/shared/models/* .dev/half/* --backend vulkan 2>&1 | tail -1)"; done | tee $OUT/conform.txt
wait; tail -1 $OUT/prep.txt
b() { echo "$1 $2 ${3:-} | $(env ${3:-X=1} timeout 40 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time|rror|^notes' | head -2 | sed 's/(p10.*//;s/device time *//' | tr '\n' ' ')"; }
{
for r in 1 2; do
  for m in /tmp/g/g16 /tmp/w/mlp64_fp16 /tmp/w/mlp64_bf16 /tmp/g2/fp16 /tmp/g2/bf16; do
    b $m cuda; b $m vulkan FUSOR_VK_COOPMAT_DIRECT=0; b $m vulkan FUSOR_VK_COOPMAT_DIRECT=1
  done
done
for t in 2,4,1,1,64 2,4,2,1 2,2,1,2 1,4,2,1; do
  for m in /tmp/g/g16 /tmp/w/mlp64_fp16 /tmp/g2/fp16; do b $m vulkan FUSOR_VK_COOPMAT_TILE=$t; done
done
} 2>&1 | tee $OUT/ab.txt
for m in /tmp/g2/fp16 /tmp/w/mlp64_fp16 /tmp/w/mlp64_bf16; do echo "diff $m: $(timeout 60 $fz diff $m --backend cuda --backend vulkan 2>&1 | grep -E '^(first|no )|rror' | head -1)"; done | tee -a $OUT/ab.txt
rm -f $OUT/r/*.json $OUT/r/devices.txt 2>/dev/null
