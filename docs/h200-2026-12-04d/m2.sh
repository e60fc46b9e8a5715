# Session 22 call 2: the build with inline dots by default where the row reads coalesced and the
# row product's sums unrolled. A/B in one binary, two rounds: the previous plan
# (FUSOR_ROW_PRODUCT=0,FUSOR_INLINE_DOT=0), row products alone (FUSOR_INLINE_DOT=0), the default;
# per-kernel traces; then correctness (node suite, gtests, models, half models).
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
(python3 bench/export_gpt2_torch.py /tmp/g2 > $OUT/prep.txt 2>&1; python3 docs/h200-2026-12-04b/prep.py >> $OUT/prep.txt 2>&1) &
for be in cuda vulkan; do echo "== $be"; timeout 90 $fz conform /tmp/shared/models/* --backend $be --atol 1e-6 2>&1 | tail -1; timeout 90 $fz conform .dev/half/*_fp16 --backend $be --rtol 1e-2 --atol 2e-3 2>&1 | tail -1; timeout 90 $fz conform .dev/half/*_bf16 --backend $be --rtol 5e-2 --atol 2e-2 2>&1 | tail -1; done 2>&1 | tee $OUT/conform.txt
wait; tail -1 $OUT/prep.txt
V="FUSOR_ROW_PRODUCT=0,FUSOR_INLINE_DOT=0 FUSOR_INLINE_DOT=0 X=1"
for m in fp32 fp16 bf16; do for v in $V; do echo "$m $v: $(env $(echo $v | tr ',' ' ') timeout 60 $fz bench /tmp/g2/$m --backend vulkan --iters 5 2>&1 | grep -E '^notes' | grep -oE '[0-9]+ dispatches, [0-9]+ barriers')"; done; done | tee $OUT/notes.txt
b() { echo "$1 $2 $3 | $(env $(echo $3 | tr ',' ' ') timeout 60 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time' | sed 's/(p10.*//;s/device time *//')"; }
for r in 1 2; do for m in /tmp/g2/fp32 /tmp/g2/fp16 /tmp/g2/bf16; do for be in cuda vulkan; do for v in $V; do b $m $be $v; done; done; done; done 2>&1 | tee $OUT/ab.txt
for m in fp32 fp16; do timeout 60 $fz bench /tmp/g2/$m --backend vulkan --trace $OUT/t.json --iters 20 > /dev/null 2>&1; python3 bench/trace_top.py $OUT/t.json --top 30 > $OUT/top_gpt2_${m}_vulkan.txt 2>&1; rm -f $OUT/t.json; done
for m in /tmp/g2/fp32 /tmp/g2/fp16 /tmp/g2/bf16; do echo "$m $(timeout 60 $fz run $m --backend cuda 2>&1 | tail -1 | cut -c1-80) | $(timeout 60 $fz diff $m --backend cuda --backend vulkan --rtol 2e-2 --atol 2e-3 2>&1 | grep -E '^(first|no )' | head -1)"; done | tee $OUT/diff.txt
(SHARD_TIMEOUT=150 scripts/h200_run.sh $OUT/node node > $OUT/node_step.txt 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 200 .dev/fusor_tests --gtest_filter='InlineDot*:RowProduct*:Cuda.ModelsPass*:Vulkan.ModelsPass*:Half*:SoftmaxOnline*:MatMulPrologue*:ContribOps.MultiHead*:ContribOps.GroupQuery*' 2>&1 | grep -E '^\[ +(OK|FAILED|SKIPPED) +\]|PASSED|FAILED' > $OUT/gtest.txt; grep -cE 'OK \]' $OUT/gtest.txt; grep -E 'FAILED|PASSED' $OUT/gtest.txt | tail -4
wait
cat $OUT/node/node_counts.txt $OUT/node/node_summary.txt 2>/dev/null | head -20; cat $OUT/node/shard_errors.txt 2>/dev/null | head
rm -f $OUT/*/devices.txt $OUT/node/node.txt $OUT/node/shard_* 2>/dev/null
