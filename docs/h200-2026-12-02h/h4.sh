# Session 15 call 4: the NVRTC tiled GEMM splits K down to 16-deep slices when its tiles fill
# under a quarter of the SMs (attention scores with prologues: 12 tiles). GPU gtests, then
# GPT-2 2L (W4's export, fp32 / fp16 / bf16) with `fusor bench`, this build and the stop-34
# build alternating, and the per-kernel CUDA traces of both (bench/trace_top.py).
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export XDG_CACHE_HOME=/tmp/fusor_cache FUSOR_BIN=$PWD/.dev/fusor
xz -dkf .dev/fusor_old.xz; chmod +x .dev/fusor .dev/fusor_old .dev/fusor_tests
[ -n "${SKIP_GTEST:-}" ] || FUSOR_VK_VALIDATION=0 timeout 100 .dev/fusor_tests --gtest_filter='Round12*:MatMulPrologue*:GatherOfReshape*:Cuda.ModelsPass*:Half*:NumericsEpilogue*:CudaGemm*:CudaCodegen*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -6; grep -A8 ': Failure$' $OUT/gtest.txt | cut -c1-200 | head -30
python3 - <<'PY' 2>&1 | tail -2
import sys, os, torch
sys.path.insert(0, "bench")
from workloads import gpt2_model
for tag, dt in (("fp32", torch.float32), ("fp16", torch.float16), ("bf16", torch.bfloat16)):
    d = f"/tmp/g2/{tag}"; os.makedirs(d, exist_ok=True)
    m = gpt2_model().to("cuda").to(dt)
    ids = torch.randint(0, 50257, (1, 64), device="cuda")
    try:
        torch.onnx.export(m, (ids,), f"{d}/model.onnx", opset_version=17, dynamo=False, input_names=["input"], output_names=["output"])
    except Exception:  # as bench/side_by_side.py: the dynamo exporter where the legacy one fails
        torch.onnx.export(m, (ids,), f"{d}/model.onnx", opset_version=18, dynamo=True, input_names=["input"], output_names=["output"], external_data=False)
print("exported")
PY
for round in $(seq ${ROUNDS:-2}); do for b in fusor fusor_old; do for t in fp32 fp16 bf16; do for be in cuda vulkan; do
  echo "$round $b $t $be $(.dev/$b bench /tmp/g2/$t --backend $be --iters 300 --warmup 30 2>&1 | grep -E '^device time' | head -1)"
done; done; done; done
for b in fusor fusor_old; do for t in fp32 fp16; do
  .dev/$b bench /tmp/g2/$t --backend cuda --iters 50 --trace $OUT/trace_${b}_$t.json > /dev/null 2>&1
  echo "== $b $t cuda"; python3 bench/trace_top.py $OUT/trace_${b}_$t.json --top 12 2>&1 | head -16
done; done
rm -f $OUT/trace_*.json
