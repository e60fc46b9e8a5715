# Session 13 call 1: the CUDA split-K implicit-GEMM conv template. GPU gtests, node suite, cold
# compile of the CNNs (new default vs library policy), then W6 side by side (torch eager /
# compile / reduce-overhead, fusor default vs library vs template).
export XDG_CACHE_HOME=/tmp/fusor_cache
GTEST_FILTER='CudaConvTemplate*:CudaConv*:Cuda.ModelsPass*:NumericsEpilogue*:Half*' TESTS_TIMEOUT=150 SANITIZE_MODELS= timeout 240 scripts/h200_run.sh $OUT/tests tests > $OUT/tests_step.txt 2>&1
tail -32 $OUT/tests_step.txt | cut -c1-220
timeout 150 scripts/h200_run.sh $OUT/node node > $OUT/node_step.txt 2>&1; tail -6 $OUT/node_step.txt
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
cudnn=$(python3 -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))" 2>/dev/null); export LD_LIBRARY_PATH=$cudnn:$LD_LIBRARY_PATH
for m in mobilenet_v3_small squeezenet1_1; do for pol in auto library; do
  c=$(mktemp -d); echo "cold $m cuda FUSOR_CUDA_CONV=$pol $(XDG_CACHE_HOME=$c FUSOR_CUDA_CONV=$pol .dev/fusor bench /tmp/shared/models/$m --backend cuda --iters 1 --warmup 0 2>&1 | grep -E '^(load|compile) ' | tr -s ' ' | tr '\n' ' ')"; rm -rf $c
done; done | tee $OUT/compile_ab.txt
SIDE_ARGS='--quick --only W6' timeout 300 scripts/h200_run.sh $OUT/side side > $OUT/side_step.txt 2>&1
grep -E "^W6" $OUT/side/side_by_side.log 2>/dev/null | grep -vE "torch-(eager|compile) " | cut -c1-150 || tail -40 $OUT/side_step.txt
rm -f $OUT/node/node.txt $OUT/*/devices.txt; xz -9 $OUT/tests/gtest_gpu.txt 2>/dev/null; true
