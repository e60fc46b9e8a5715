# Session 22 call 1: row products (the Softmax row kernel computes softmax @ v) A/B in one
# binary on W4's GPT-2 2L (fp32 / fp16 / bf16) and the MLP block, two rounds: FUSOR_ROW_PRODUCT=0
# (the previous plan), the default (row products), and row products with inline scores
# (FUSOR_INLINE_DOT=1: the whole attention block one kernel); then correctness.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
(python3 bench/export_gpt2_torch.py /tmp/g2 > $OUT/prep.txt 2>&1; python3 docs/h200-2026-12-04b/prep.py >> $OUT/prep.txt 2>&1) &
for be in cuda vulkan; do for v in FUSOR_ROW_PRODUCT=0 X=1 FUSOR_INLINE_DOT=1; do echo "== $be $v"; env $v timeout 90 $fz conform /tmp/shared/models/* --backend $be --atol 1e-6 2>&1 | tail -1; env $v timeout 90 $fz conform .dev/half/*_fp16 --backend $be --rtol 1e-2 --atol 2e-3 2>&1 | tail -1; env $v timeout 90 $fz conform .dev/half/*_bf16 --backend $be --rtol 5e-2 --atol 2e-2 2>&1 | tail -1; done; done 2>&1 | tee $OUT/conform.txt
wait; tail -2 $OUT/prep.txt
for m in fp32 fp16; do for v in FUSOR_ROW_PRODUCT=0 X=1 FUSOR_INLINE_DOT=1; do echo "$m $v: $(env $v timeout 60 $fz bench /tmp/g2/$m --backend vulkan --iters 5 2>&1 | grep -E '^notes' | cut -c1-200)"; done; done | tee $OUT/notes.txt
b() { echo "$1 $2 $3 | $(env $3 timeout 60 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time' | sed 's/(p10.*//;s/device time *//')"; }
for r in 1 2; do
  for m in /tmp/g2/fp32 /tmp/g2/fp16 /tmp/g2/bf16; do
    for be in cuda vulkan; do b $m $be FUSOR_ROW_PRODUCT=0; b $m $be X=1; b $m $be FUSOR_INLINE_DOT=1; done
  done
done 2>&1 | tee $OUT/ab.txt
for m in /tmp/w/mlp64_fp32 /tmp/w/mlp64_fp16 /tmp/w/mlp1_fp32; do b $m cuda X=1; b $m vulkan X=1; done 2>&1 | tee -a $OUT/ab.txt
for m in fp32 fp16; do for v in X=1 FUSOR_INLINE_DOT=1; do env $v timeout 60 $fz bench /tmp/g2/$m --backend vulkan --trace $OUT/t.json --iters 20 > /dev/null 2>&1; python3 bench/trace_top.py $OUT/t.json --top 30 > $OUT/top_gpt2_${m}_vulkan_${v%%=*}.txt 2>&1; rm -f $OUT/t.json; done; done
for m in /tmp/g2/fp32 /tmp/g2/fp16; do echo "$m $(timeout 60 $fz diff $m --backend cuda --backend vulkan 2>&1 | grep -E '^(first|no divergence|verdict)' | head -2 | tr '\n' ' ')"; done | tee $OUT/diff.txt
timeout 200 .dev/fusor_tests --gtest_filter='InlineDot*:RowProduct*:Cuda.ModelsPass*:Vulkan.ModelsPass*:Half*:SoftmaxOnline*' 2>&1 | grep -E '^\[ +(OK|FAILED|SKIPPED) +\]|PASSED|FAILED' | tee $OUT/gtest.txt | tail -5
rm -f $OUT/*/devices.txt
