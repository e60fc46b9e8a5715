# Session 19 call 5: odd sizes on the H200 (scripts/redteam/round16/node_mutations.py redim:
# input 0's last dim and every equal input dim 7, then 33), `fusor diff` of cuda and of
# vulkan against ref (rtol 1e-3); beyond 64 ulp of the largest |reference| is BAD. 8 shards
# per backend, T seconds each.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache FUSOR_BIN=$PWD/.dev/fusor FUSOR_SHARED=/tmp/shared
n=$(nproc); mkdir -p $OUT/fz
for b in cuda vulkan; do
  for i in $(seq 0 $((n / 2 - 1))); do
    timeout ${T:-240} python3 scripts/redteam/round16/node_mutations.py redim --backend $b --fusor .dev/fusor --suite /tmp/shared/onnx-tests/node --out $OUT/fz --shard $i/$((n / 2)) > /dev/null 2>&1 &
  done
done
wait
for b in cuda vulkan; do
  echo "redim $b: $(cat $OUT/fz/redim_${b}_*.txt | wc -l) runs, $(cat $OUT/fz/redim_${b}_*.txt | grep -c ' rc=0') agree, $(cat $OUT/fz/redim_${b}_*.txt | grep -c '^BAD') BAD"
  cat $OUT/fz/redim_${b}_*.txt | grep '^BAD' | head -20
done
for d in $OUT/fz/bad/*/; do for b in cuda vulkan; do echo "$(basename $d) $b: $(.dev/fusor diff $d/model.onnx --backend ref --backend $b --seed 1 2>&1 | grep -E '^  (error|worst) ' | tr -s ' ' | tr '\n' ' ')"; done; done | head -40
rm -rf $OUT/fz/work_*
