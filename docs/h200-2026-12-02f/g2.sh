# Session 13 call 2: per-layer CUDA conv times, split-K template vs cuDNN (library policy), on the W6 CNNs at batch 1 and 32.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
cudnn=$(python3 -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))" 2>/dev/null); export LD_LIBRARY_PATH=$cudnn:$LD_LIBRARY_PATH
export XDG_CACHE_HOME=/tmp/fusor_cache
chmod +x .dev/fusor; fz=$PWD/.dev/fusor
python3 .gl/w6exp.py > $OUT/export.txt 2>&1; tail -2 $OUT/export.txt
for m in /tmp/w6/*/; do n=$(basename $m)
  for pol in auto template library; do
    echo "$n cuda $pol $(FUSOR_CUDA_CONV=$pol $fz bench $m --backend cuda --iters 100 2>&1 | grep -E -o 'device time *median [0-9.]* us')"
    FUSOR_CUDA_CONV=$pol $fz bench $m --backend cuda --iters 20 --trace $OUT/t_${n}_$pol.json > /dev/null 2>&1
    python3 bench/trace_top.py $OUT/t_${n}_$pol.json --top 200 > $OUT/top_${n}_$pol.txt 2>&1; rm -f $OUT/t_${n}_$pol.json
  done
  echo "$n vulkan $($fz bench $m --backend vulkan --iters 100 2>&1 | grep -E -o 'device time *median [0-9.]* us')"
done 2>&1 | tee $OUT/w6_policy.txt
SIDE_ARGS='--quick --only W6 --w6-models shufflenet_v2_x0_5' timeout 150 scripts/h200_run.sh $OUT/side side > $OUT/side_step.txt 2>&1
grep -E "^W6" $OUT/side/side_by_side.log 2>/dev/null | grep -vE ":" | cut -c1-150
rm -f $OUT/*/devices.txt
