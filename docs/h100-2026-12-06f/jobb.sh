# Session 41, any card: red-team round 52's two slow models on the GPUs with this session's
# build (a k-NN Scan now batched; a 1,000-key LabelEncoder now a table lookup).
#   bash docs/h100-2026-12-06f/jobb.sh   (after scripts/package_h200.sh)
# The models (red-team round 52's reproducers, 3.6 MB, not kept): models/scan_vulkan_per_iteration,
# an opset-11 Scan over x [2000, 5] whose body is Identity(state C [300, 5]), Sub(row, C),
# ReduceSumSquare(axes [1]) (skl2onnx's k-NN); models/labelencoder_quadratic, a LabelEncoder of
# 1,000 even int64 keys to floats on 10^5 rows; each with test_data_set_0 from onnxruntime.
. scripts/h200_job.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
for m in scan_vulkan_per_iteration labelencoder_quadratic; do
  for be in cuda vulkan; do
    echo "== $m $be"
    $fz bench docs/h100-2026-12-06f/models/$m --backend $be --iters 50 --warmup 5 2>&1 | grep -E "notes|first run|device time|host time|kernels"
    $fz run docs/h100-2026-12-06f/models/$m --backend $be 2>&1 | grep -E "check|error"
  done
done
