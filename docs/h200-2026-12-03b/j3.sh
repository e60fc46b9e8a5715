# Session 17 call 3: fp16 / bf16 operand prologues on Vulkan (FusionOptions::half_operand_prologues,
# FUSOR_VK_HALF_PROLOGUES=0 the A/B knob) and the single-reader rule counted through views (a
# dynamo export's QKV Gemm -> Reshape -> Split lost its fp32 prologues): W4's GPT-2 2L exported
# here, fp32 / fp16 / bf16 on both GPUs, prologues on and off in the same call, two rounds; then
# the node suite and GPU gtests on this build. (The session-start binary could not travel: the
# checkout was rebuilt on a new machine; docs/benchmarks.md's earlier GPT-2 rows are the before.)
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache FUSOR_BIN=$PWD/.dev/fusor FUSOR_SHARED=/tmp/shared
python3 bench/export_gpt2_torch.py /tmp/g2 2>&1 | tail -1
python3 -c "import onnx; m=onnx.load('/tmp/g2/fp32/model.onnx', load_external_data=False); print('export ops:', sorted({n.op_type for n in m.graph.node})[:12], 'opset', m.opset_import[0].version)"
for m in fp32 fp16 bf16; do for b in cuda vulkan; do echo "$m $b kernels: $(.dev/fusor explain /tmp/g2/$m --backend $b 2>&1 | grep -o 'kernels [0-9]*')  prologues off: $(FUSOR_VK_HALF_PROLOGUES=0 .dev/fusor explain /tmp/g2/$m --backend $b 2>&1 | grep -o 'kernels [0-9]*')"; done; done
b() { echo "$1 $2 $3 $4 | $(env $4 $3 bench /tmp/g2/$1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time' | sed 's/(p10.*//;s/device time *//')"; }
for r in 1 2; do for m in fp32 fp16 bf16; do
  b $m cuda .dev/fusor X=1
  b $m vulkan .dev/fusor X=1; b $m vulkan .dev/fusor FUSOR_VK_HALF_PROLOGUES=0
done; done
(scripts/h200_run.sh $OUT/node node > $OUT/node_step.txt 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 200 .dev/fusor_tests --gtest_filter='MatMulPrologue*:Half*:ContribOps*:InlineDot*:Cuda.ModelsPass*:Vulkan.ModelsPass*:VulkanCoopmat*:NumericsEpilogue*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -8; grep -A8 ': Failure$' $OUT/gtest.txt | cut -c1-200 | head -30
wait
cat $OUT/node/node_counts.txt $OUT/node/node_summary.txt 2>/dev/null; cat $OUT/node/shard_errors.txt 2>/dev/null
rm -f $OUT/*/devices.txt $OUT/node/node.txt $OUT/node/shard_*
