# Session 39, call 1 (any card). On an H200: W1, W2, W3, W5 of the side-by-side with the IREE
# bundle (W4, W6 next, on the same lease) for issue 12. On another card: the data-dependent
# prefix A/B: torchvision detectors (scripts/zoo/export_detectors.py, onnxruntime's outputs as
# the test set) run by the session's first build (.dev/fusor: cones on ref) and this build
# (.dev/fusor_new: cones on the model's device), wall time of `fusor run` and its check; then
# W7's fp16 GPT-2 Vulkan kernels dumped with their pipeline statistics.
#   bash docs/h100-2026-12-06d/jobd.sh   (after the .dev package; .dev/fusor_new.xz beside it)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $gpu"
if echo "$gpu" | grep -q H200; then
  scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
  SIDE_ARGS='--quick --only W1,W2,W3,W5' timeout 500 scripts/h200_run.sh $OUT/side side 2>&1 | tail -40
  rm -f $OUT/*/devices.txt; exit 0
fi
. scripts/h200_job.sh
h200_prep
xz -dkf .dev/fusor_new.xz && chmod +x .dev/fusor_new
python3 -c "import onnxruntime" 2>/dev/null || pip install -q onnxruntime > /dev/null 2>&1
python3 -c "import torchvision, onnxruntime; print('torchvision', torchvision.__version__, 'ort', onnxruntime.__version__)"
for m in fasterrcnn_mobilenet_v3_large_320_fpn retinanet_resnet50_fpn ssdlite320_mobilenet_v3_large; do
  timeout 150 python3 scripts/zoo/export_detectors.py $m 2>&1 | grep -v Warning | tail -2
done > $OUT/export.txt 2>&1
cat $OUT/export.txt | cut -c1-200
for m in fasterrcnn_mobilenet_v3_large_320_fpn retinanet_resnet50_fpn ssdlite320_mobilenet_v3_large; do
  for be in cuda vulkan; do for bin in fusor_new fusor; do
    t0=$(date +%s%N)
    r=$(timeout 100 .dev/$bin run /tmp/det/$m --backend $be 2>&1 | grep -E "^time|^check|rror" | tr '\n' ' ' | cut -c1-300)
    echo "$m $be $bin wall $(( ($(date +%s%N) - t0) / 1000000 )) ms | $r"
  done; done
done 2>&1 | tee $OUT/det_ab.txt
# W7's fp16 GPT-2 kernels as this card's Vulkan driver gets them (sources, register counts).
wait; tail -1 $OUT/prep.txt
mkdir -p $OUT/vksrc
FUSOR_VK_DUMP_DIR=$OUT/vksrc FUSOR_VK_PIPELINE_STATS=1 timeout 60 $fz bench /tmp/g2/fp16 --backend vulkan --iters 100 > $OUT/g2_bench.txt 2> $OUT/g2_pstats.txt
grep -E "^device time|^notes" $OUT/g2_bench.txt; tar -C $OUT -cJf $OUT/vksrc.tar.xz vksrc && rm -rf $OUT/vksrc
h200_tidy
