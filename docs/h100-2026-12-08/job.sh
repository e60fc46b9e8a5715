# Session 51, call 1: GPT-2 2L's plans and where Vulkan loses (fp32 and fp16), then the fp32 tiling
# sweep the fiftieth session prepared (docs/h100-2026-12-07j/sweep.sh).
#   bash docs/h100-2026-12-08/job.sh   (after the .dev package; carry .dev .gl)
. scripts/h200_job.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
# This build's correctness on the GPU first (the normalization / LpPool / BatchNormalization
# changes): their gtests and the shared models on both GPUs (gtest.txt, conform.txt).
(timeout 200 python3 bench/export_gpt2_torch.py /tmp/g2 > $OUT/prep.txt 2>&1) &
GTEST_TIMEOUT=150 FUSOR_BIN=$fz h200_gtest 'Round62.*:OpsNn.*:Fusion.*:SoftmaxOnline.*:ThreadRows.*:Round61*:*Norm*'
for be in cuda vulkan; do echo "== $be $(timeout 60 $fz conform /tmp/shared/models/* --backend $be --atol 1e-6 2>&1 | tail -1)"; done | tee $OUT/conform.txt
wait; tail -1 $OUT/prep.txt
# The normalizations' corrected deviation (ir/decompose_norm.cpp centered: one more row mean per
# LayerNormalization) against the previous binary, alternating, two rounds (ab.txt).
xz -dc .dev/fusor_old.xz > .dev/fusor_old && chmod +x .dev/fusor_old
ab() { echo "$1 $2 $3 | $(timeout 60 $3 bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time|rror' | head -1 | sed 's/(p10.*//;s/device time *//')"; }
for r in 1 2; do for t in fp32 fp16; do for be in cuda vulkan; do ab /tmp/g2/$t $be .dev/fusor_old; ab /tmp/g2/$t $be $fz; done; done; done 2>&1 | sed "s#$fz#new#;s#.dev/fusor_old#old#" | tee $OUT/ab.txt
for t in fp32 fp16; do timeout 60 $fz explain /tmp/g2/$t --backend vulkan > $OUT/explain_$t.txt 2>&1; done
# What the dependency barriers cost now (wrong results; timing only), with the per-kernel traces.
for t in fp32 fp16; do for be in cuda vulkan; do echo "== gpt2 $t $be"
  timeout 60 $fz bench /tmp/g2/$t --backend $be --iters 100 --trace $OUT/t.json 2>&1 | grep -E "^(device time|notes)"
  python3 bench/trace_top.py $OUT/t.json --top 40; done
  echo "[no barriers] $(FUSOR_VK_UNSAFE_NO_BARRIERS=1 timeout 40 $fz bench /tmp/g2/$t --backend vulkan --iters 300 --warmup 30 2>&1 | grep -E '^device time')"
done 2>&1 | tee $OUT/profile.txt
rm -f $OUT/t.json
# W6 shufflenet_v2_x0_5 batch 1 (issue 12's one W6 line over 1.5x): where Vulkan's time goes, and conv knobs.
timeout 200 python3 - <<'PY' > $OUT/export.txt 2>&1
import torch, torchvision, os
from onnx import numpy_helper as nh
torch.manual_seed(0)
m = torchvision.models.shufflenet_v2_x0_5().eval()
d = "/tmp/w6/shufflenet_b1"; os.makedirs(d + "/test_data_set_0", exist_ok=True)
x = torch.randn(1, 3, 224, 224)
torch.onnx.export(m, (x,), d + "/model.onnx", opset_version=17, dynamo=False, input_names=["x"], output_names=["y"])
with torch.no_grad(): y = m(x).numpy()
open(d + "/test_data_set_0/input_0.pb", "wb").write(nh.from_array(x.numpy(), "x").SerializeToString())
open(d + "/test_data_set_0/output_0.pb", "wb").write(nh.from_array(y, "y").SerializeToString())
print("exported")
PY
S=/tmp/w6/shufflenet_b1
timeout 60 $fz explain $S --backend vulkan > $OUT/explain_shuffle.txt 2>&1
for be in cuda vulkan; do echo "== shufflenet b1 $be"
  timeout 60 $fz bench $S --backend $be --iters 100 --trace $OUT/t.json 2>&1 | grep -E "^(device time|notes)"
  python3 bench/trace_top.py $OUT/t.json --top 100; done 2>&1 | tee $OUT/profile_shuffle.txt
rm -f $OUT/t.json
echo "[no barriers] $(FUSOR_VK_UNSAFE_NO_BARRIERS=1 timeout 40 $fz bench $S --backend vulkan --iters 300 --warmup 30 2>&1 | grep -E '^device time')" | tee -a $OUT/profile_shuffle.txt
sc=(X=1 FUSOR_VK_CONV_TILE=interleaved FUSOR_VK_CONV_SHRINK=0 FUSOR_VK_CONV_DB=0 FUSOR_VK_SPLIT_PER_UNIT=2 FUSOR_VK_SPLIT_MIN_SLICE=128
  FUSOR_VK_ROW_VEC4=0 FUSOR_VK_NARROW_BINDINGS=0 FUSOR_VK_HOLD_CUDA_CONTEXT=0)
for r in 1 2; do h200_b $S cuda; for c in "${sc[@]}"; do h200_b $S vulkan "$c"; done; done 2>&1 | tee $OUT/sweep_shuffle.txt
bash docs/h100-2026-12-07j/sweep.sh
