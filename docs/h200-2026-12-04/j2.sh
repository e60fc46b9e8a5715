# Session 19 calls 2 and 3: the mutation fuzz of the node suite on cuda: omitted inputs and zero
# dims, 16 shards. Call 2 (and call 1's cuda part) ran every case under a 12 GiB RLIMIT_AS,
# where cuInit fails (CUDA_ERROR_OUT_OF_MEMORY): no coverage; call 3 runs without the limit.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache FUSOR_BIN=$PWD/.dev/fusor FUSOR_SHARED=/tmp/shared
n=$(nproc); mkdir -p $OUT/fz
for kind in omit zerodim; do
  for i in $(seq 0 $((n - 1))); do
    timeout ${T:-240} python3 scripts/redteam/round16/node_mutations.py $kind --backend cuda --fusor .dev/fusor --suite /tmp/shared/onnx-tests/node --out $OUT/fz --shard $i/$n > /dev/null 2>&1 &
  done
  wait
  echo "$kind cuda: $(cat $OUT/fz/${kind}_cuda_*.txt | wc -l) runs, $(cat $OUT/fz/${kind}_cuda_*.txt | grep -c '^BAD') BAD"
  cat $OUT/fz/${kind}_cuda_*.txt | grep '^BAD' | head -20
  cat $OUT/fz/${kind}_cuda_*.txt | awk '{print $3}' | sort | uniq -c
  cat $OUT/fz/${kind}_cuda_*.txt | grep -v '^BAD' | cut -d' ' -f4- | sed -E "s/node '[^']*'//; s/[0-9]+/N/g" | sort | uniq -c | sort -rn | head -8
done
rm -rf $OUT/fz
