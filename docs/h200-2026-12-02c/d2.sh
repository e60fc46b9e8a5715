# Session 10 call 2: new coopmat kernel (one-store staging, two slices in flight) on the H200:
# GPU gtests, half-model conformance, A/B vs the previous binary, W2 Vulkan experiments.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
cudnn=$(python3 -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))" 2>/dev/null); export LD_LIBRARY_PATH=$cudnn:$LD_LIBRARY_PATH
export XDG_CACHE_HOME=/tmp/fusor_cache
xz -dkf .gl/fusor_old.xz; chmod +x .dev/fusor .dev/fusor_tests .gl/fusor_old
fz=$PWD/.dev/fusor; old=$PWD/.gl/fusor_old
(python3 .gl/prep3.py > $OUT/prep.txt 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 240 .dev/fusor_tests --gtest_filter='VulkanCoopmat*:VulkanSplitK*:Half*:NumericsEpilogue.*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) |tests ran' $OUT/gtest.txt | sort | uniq -c | tail -12
grep -B2 -A8 ': Failure$' $OUT/gtest.txt | cut -c1-200 | head -40
$fz conform .dev/half/*_fp16 --backend vulkan --rtol 1e-2 --atol 2e-3 2>&1 | tail -3
FUSOR_VK_COOPMAT_PREFETCH=1 $fz conform .dev/half/*_fp16 --backend vulkan --rtol 1e-2 --atol 2e-3 2>&1 | tail -2
wait
b() { echo "$1 $2 ${3:-} $(env ${3:-X=1} $2 bench $1 --backend vulkan ${4:---iters 200} 2>&1 | grep -E -o 'device time *median [0-9.]* us \(p10 [0-9.]*, p90 [0-9.]*\)|coopmat[^;]*|split-K[^;]*' | tr '\n' ' ')" | sed "s#$PWD/##"; }
for M in /tmp/w/mlp64_fp16 /tmp/w/gpt2_fp16; do
  echo "$M cuda $($fz bench $M --backend cuda --iters 200 2>&1 | grep -E -o 'device time *median [0-9.]* us')"
  for r in 1 2; do b $M $old; b $M $fz; b $M $fz FUSOR_VK_COOPMAT_PREFETCH=1; done
  for E in FUSOR_VK_COOPMAT_TILE=2,4,1,1,64 FUSOR_VK_COOPMAT_TILE=2,4,1,1,32 FUSOR_VK_COOPMAT_TILE=4,4,1,1,64 FUSOR_VK_COOPMAT_SPLIT_K=2 FUSOR_VK_COOPMAT_SPLIT_K=4 \
      FUSOR_VK_SPLIT_PER_UNIT=2 "FUSOR_VK_COOPMAT_TILE=2,4,1,1,64 FUSOR_VK_SPLIT_PER_UNIT=2" FUSOR_VK_COOPMAT_TILE=2,2,1,1,128 FUSOR_VK_COOPMAT_TILE=2,4,1,2,64 FUSOR_VK_COOPMAT_TILE=2,2,2,2,64 FUSOR_VK_TILE_ORDER=n; do
    b $M $fz "$E"; done
done 2>&1 | tee $OUT/ab.txt
echo "== W2 experiments"
python3 - <<'PY'
import sys; sys.path.insert(0, "bench")
import os, onnx
from workloads import rows_onnx
for op in ("Softmax", "LayerNormalization"):
    d = f"/tmp/w/w2s_{op}"; os.makedirs(d, exist_ok=True); onnx.save(rows_onnx(op, 4096, 4096, "w2s_" + op), d + "/model.onnx")
PY
for M in /tmp/w/w2_Softmax /tmp/w/w2s_Softmax /tmp/w/w2_LayerNormalization /tmp/w/w2s_LayerNormalization; do b $M $fz X=1 "--warmup 20 --iters 50"; done
$fz bench /tmp/w/w2_Softmax --backend vulkan --iters 20 --trace $OUT/t.json 2>&1 | grep "device time"; python3 bench/trace_top.py $OUT/t.json --top 3
(python3 -c "import torch,time; x=torch.zeros(1,device='cuda'); time.sleep(25)" &) ; sleep 8
echo "with an idle CUDA context alive:"; b /tmp/w/w2_Softmax $fz X=1 "--warmup 20 --iters 50"; b /tmp/w/w2_LayerNormalization $fz X=1 "--warmup 20 --iters 50"
rm -f $OUT/t.json
