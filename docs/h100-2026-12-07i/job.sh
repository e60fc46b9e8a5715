# Session 49, one device call: the channel-shuffle change (ir/decompose.cpp
# rewrite_slice_of_merging_reshape, ir/fusion.cpp tree_or_unreshaped) A/B on W6's
# shufflenet_v2_x0_5 (b1, b32; 104 -> 88 kernels), old and new binaries alternating on both
# GPUs, outputs checked against torch; then the correctness of the new build.
#   bash docs/h100-2026-12-07i/job.sh   (after packaging .dev with fusor_old.xz beside fusor.xz)
. scripts/h200_job.sh
xz -dc .dev/fusor_old.xz > .dev/fusor_old && chmod +x .dev/fusor_old
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
timeout 200 python3 - <<'PY' > $OUT/export.txt 2>&1
import torch, torchvision, os, numpy as np
from onnx import numpy_helper as nh
torch.manual_seed(0)
m = torchvision.models.shufflenet_v2_x0_5().eval()
for b in (1, 32):
    d = f"/tmp/w6/shufflenet_b{b}"; os.makedirs(d + "/test_data_set_0", exist_ok=True)
    x = torch.randn(b, 3, 224, 224)
    torch.onnx.export(m, (x,), d + "/model.onnx", opset_version=17, dynamo=False, input_names=["x"], output_names=["y"])
    with torch.no_grad(): y = m(x).numpy()
    open(d + "/test_data_set_0/input_0.pb", "wb").write(nh.from_array(x.numpy(), "x").SerializeToString())
    open(d + "/test_data_set_0/output_0.pb", "wb").write(nh.from_array(y, "y").SerializeToString())
print("exported")
PY
tail -1 $OUT/export.txt
for b in 1 32; do
  m=/tmp/w6/shufflenet_b$b
  for be in cuda vulkan; do echo "b$b $be: $($fz explain $m --backend $be 2>&1 | grep -oE 'kernels [0-9]+') (new), $(.dev/fusor_old explain $m --backend $be 2>&1 | grep -oE 'kernels [0-9]+') (old)"; done
  timeout 60 $fz conform $m --backend cuda --backend vulkan 2>&1 | tail -3
done 2>&1 | tee $OUT/shuffle_check.txt
ab() { echo "$1 $2 $3 | $(timeout 60 $3 bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time|rror' | head -1 | sed 's/(p10.*//;s/device time *//')"; }
for round in 1 2 3; do
  for b in 1 32; do for be in cuda vulkan; do
    ab /tmp/w6/shufflenet_b$b $be .dev/fusor_old; ab /tmp/w6/shufflenet_b$b $be $fz
  done; done
done 2>&1 | sed "s#$fz#new#;s#.dev/fusor_old#old#" | tee $OUT/shuffle_ab.txt
h200_correctness 'Fusion.*:Vulkan.ModelsPass*:Cuda.ModelsPass*:NumericsEpilogue.*:VulkanSplitK*:VulkanConv*:CudaConv*:Round11.*:Strings.*:OpsNn.*'
