# Session 51, call 2: the final build's GPU correctness after the review mends (LpPool's kernel,
# the normalizations): their gtests, the shared models, the node suite's pool / norm / einsum cases.
#   bash docs/h100-2026-12-08/check.sh   (after the .dev package; carry .dev .gl)
. scripts/h200_job.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
GTEST_TIMEOUT=200 FUSOR_BIN=$fz h200_gtest 'Round62.*:OpsNn.*:Fusion.*:SoftmaxOnline.*:*Pool*:*Norm*:*Attention*:Round9.*'
for be in cuda vulkan; do echo "== $be models: $(timeout 60 $fz conform /tmp/shared/models/* --backend $be --atol 1e-6 2>&1 | tail -1)"
  echo "== $be node cases: $(timeout 120 $fz conform $(ls -d /tmp/shared/onnx-tests/node/*{lppool,batchnorm,instancenorm,group_norm,mvn,einsum,layer_norm,globallp}* 2>/dev/null) --backend ref --backend $be 2>&1 | tail -1)"
done | tee $OUT/conform2.txt
