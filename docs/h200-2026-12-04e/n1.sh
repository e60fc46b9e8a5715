# Session 23 call 1: W2 Softmax [16384, 4096] on Vulkan, the generated kernel against hand-edited
# variants of it (FUSOR_VK_SOURCE_DIR): v0 the generated source, v1 its per-thread max as a tree,
# v2 vec4 registers, v3 both, v4 vec4 indices only, v5 v3 + the next row's loads issued early.
# Each: fusor bench (two rounds), the driver's register count, cuda-vs-vulkan diff.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
python3 -c "
import sys, os; sys.path.insert(0, 'bench')
from workloads import rows_onnx
import onnx
for op in ('Softmax', 'LayerNormalization'):
    os.makedirs('/tmp/w/w2_' + op, exist_ok=True); onnx.save(rows_onnx(op, 16384, 4096, 'w2'), '/tmp/w/w2_' + op + '/model.onnx')
" > $OUT/prep.txt 2>&1
M=/tmp/w/w2_Softmax
mkdir -p /tmp/dump && FUSOR_NO_DISK_CACHE=1 FUSOR_VK_DUMP_DIR=/tmp/dump $fz bench $M --backend vulkan --iters 3 > /dev/null 2>&1
name=$(ls /tmp/dump | head -1); echo "generated: $name"; cp /tmp/dump/$name $OUT/generated_h200.comp
for v in v0 v1 v2 v3 v4 v5; do mkdir -p /tmp/src/$v; cp docs/h200-2026-12-04e/variants/$v.comp /tmp/src/$v/$name; done
b() { echo "$1 $2 ${3:-} | $(env ${3:-X=1} timeout 60 $fz bench $1 --backend $2 --iters 200 --warmup 20 2>&1 | grep -E '^device time' | sed 's/(p10.*//;s/device time *//')"; }
{
for r in 1 2; do
  b $M cuda; b $M vulkan
  for v in v0 v1 v2 v3 v4 v5; do b $M vulkan FUSOR_VK_SOURCE_DIR=/tmp/src/$v; done
done
b /tmp/w/w2_LayerNormalization vulkan; b /tmp/w/w2_LayerNormalization cuda
for v in - v0 v1 v2 v3 v4 v5; do
  e=X=1; [ $v != - ] && e=FUSOR_VK_SOURCE_DIR=/tmp/src/$v
  echo "$v stats: $(env $e FUSOR_NO_DISK_CACHE=1 FUSOR_VK_PIPELINE_STATS=1 timeout 60 $fz bench $M --backend vulkan --iters 3 2>&1 | grep -o 'Register Count=[0-9]*' | head -1)"
  echo "$v diff: $(env $e timeout 120 $fz diff $M --backend cuda --backend vulkan --rtol 1e-5 --atol 0 2>&1 | grep -E 'agree|differ|error' | head -2 | tr '\n' ' ')"
done
} 2>&1 | tee $OUT/ab.txt
