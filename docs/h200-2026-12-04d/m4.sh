# Session 22 call 4: inline dots whose keys are read along K (a key row per thread: fp32 / bf16
# through operand prologues) now load them 4 wide on Vulkan. A/B in one binary: the default
# (those products keep their kernel) against FUSOR_INLINE_DOT=1 (inline, vectorised), three
# rounds, with fusor-cuda's default; per-kernel trace; correctness of the forced variant.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
(python3 bench/export_gpt2_torch.py /tmp/g2 > $OUT/prep.txt 2>&1) &
for v in X=1 FUSOR_INLINE_DOT=1; do echo "== $v"; env $v timeout 90 $fz conform /tmp/shared/models/* --backend vulkan --atol 1e-6 2>&1 | tail -1; done 2>&1 | tee $OUT/conform.txt
wait; tail -1 $OUT/prep.txt
for m in fp32 bf16; do echo "$m: $(FUSOR_INLINE_DOT=1 timeout 60 $fz bench /tmp/g2/$m --backend vulkan --iters 5 2>&1 | grep -E '^notes' | grep -oE '[0-9]+ dispatches, [0-9]+ barriers')"; done | tee $OUT/notes.txt
b() { echo "$1 $2 $3 | $(env $3 timeout 60 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time' | sed 's/(p10.*//;s/device time *//')"; }
for r in 1 2 3; do for m in /tmp/g2/fp32 /tmp/g2/bf16 /tmp/g2/fp16; do b $m cuda X=1; b $m vulkan X=1; b $m vulkan FUSOR_INLINE_DOT=1; done; done 2>&1 | tee $OUT/ab.txt
for m in fp32 bf16; do FUSOR_INLINE_DOT=1 timeout 60 $fz bench /tmp/g2/$m --backend vulkan --trace $OUT/t.json --iters 20 > /dev/null 2>&1; echo "== $m"; python3 bench/trace_top.py $OUT/t.json --top 30 2>&1; rm -f $OUT/t.json; done > $OUT/top_inline_vulkan.txt
for m in fp32 bf16; do echo "$m $(FUSOR_INLINE_DOT=1 timeout 60 $fz diff /tmp/g2/$m --backend cuda --backend vulkan --rtol 2e-2 --atol 1e-4 2>&1 | grep -E '^(first|no )' | head -1)"; done | tee $OUT/diff.txt
FUSOR_INLINE_DOT=1 FUSOR_VK_VALIDATION=0 timeout 150 .dev/fusor_tests --gtest_filter='InlineDot*:RowProduct*:MatMulPrologue*:Vulkan.ModelsPass*' 2>&1 | grep -E '^\[ +(OK|FAILED|SKIPPED) +\]|PASSED|FAILED' > $OUT/gtest.txt; grep -cE 'OK \]' $OUT/gtest.txt; grep -E 'FAILED|PASSED' $OUT/gtest.txt | tail -4
rm -f $OUT/*/devices.txt $OUT/r/*.json 2>/dev/null
