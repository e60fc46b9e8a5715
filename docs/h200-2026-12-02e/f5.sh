# Session 12 call 5 (final build): the ONNX node suite on ref, cuda and vulkan.
export XDG_CACHE_HOME=/tmp/fusor_cache
timeout 220 scripts/h200_run.sh $OUT/r node > $OUT/node_log.txt 2>&1; echo "node rc $?"
cat $OUT/r/node_counts.txt $OUT/r/node_summary.txt 2>/dev/null
