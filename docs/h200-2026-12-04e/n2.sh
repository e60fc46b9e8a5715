# Session 23 call 2: max / min partials in resident rows (codegen.cpp; FUSOR_ROW_MAX_PARTIALS=1
# the single chain) on W2 Softmax and the W4 / W7 models, GPU gtests of row kernels, W2 from the
# side-by-side (copy in the same run). Every command under its own timeout.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
(python3 bench/export_gpt2_torch.py /tmp/g2 > $OUT/prep.txt 2>&1; python3 docs/h200-2026-12-04b/prep.py >> $OUT/prep.txt 2>&1) &
python3 -c "
import sys, os; sys.path.insert(0, 'bench')
from workloads import rows_onnx
import onnx
for op in ('Softmax', 'LayerNormalization'):
    os.makedirs('/tmp/w/w2_' + op, exist_ok=True); onnx.save(rows_onnx(op, 16384, 4096, 'w2'), '/tmp/w/w2_' + op + '/model.onnx')
" >> $OUT/prep.txt 2>&1
FUSOR_VK_VALIDATION=0 timeout 150 .dev/fusor_tests --gtest_filter='VulkanRowVec*:SoftmaxOnline*:Cuda.ModelsPass*:Vulkan.ModelsPass*:Half*:InlineDot*:RowProduct*:VulkanDiv*' 2>&1 | grep -E '^\[ +(OK|FAILED|SKIPPED) +\]|PASSED|FAILED' > $OUT/gtest.txt; grep -cE 'OK \]' $OUT/gtest.txt; grep -E 'FAILED|PASSED' $OUT/gtest.txt | tail -4
b() { echo "$1 $2 $3 | $(env $3 timeout 40 $fz bench $1 --backend $2 --iters ${4:-300} --warmup 30 2>&1 | grep -E '^device time' | sed 's/(p10.*//;s/device time *//')"; }
{ for r in 1 2; do b /tmp/w/w2_Softmax cuda X=1 100; b /tmp/w/w2_Softmax vulkan FUSOR_ROW_MAX_PARTIALS=1 100; b /tmp/w/w2_Softmax vulkan X=1 100; done
  b /tmp/w/w2_LayerNormalization vulkan X=1 100
  echo "w2 diff: $(timeout 60 $fz diff /tmp/w/w2_Softmax --backend cuda --backend vulkan --rtol 1e-5 --atol 0 2>&1 | grep -E '^(first|no )' | head -1)"; } 2>&1 | tee $OUT/w2.txt
wait; tail -1 $OUT/prep.txt
for r in 1 2; do for m in /tmp/g2/fp32 /tmp/g2/fp16 /tmp/g2/bf16 /tmp/w/mlp64_fp32 /tmp/w/mlp64_fp16 /tmp/w/mlp64_bf16 /tmp/w/mlp1_fp32; do b $m cuda X=1; b $m vulkan X=1; done; done 2>&1 | tee $OUT/bench.txt
SIDE_ARGS='--quick --only W2' timeout 240 scripts/h200_run.sh $OUT/side side > $OUT/side_log.txt 2>&1; grep -E "W2|copy" $OUT/side_log.txt | tail -12
rm -f $OUT/*/devices.txt $OUT/r/*.json 2>/dev/null
