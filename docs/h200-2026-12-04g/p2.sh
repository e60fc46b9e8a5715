# Session 25 call 2: torchvision's SSDlite (TorchScript export at opset 17, random weights,
# onnxruntime's outputs from the Debian machine, carried as .dev/det.tar.xz) on both GPUs: the
# data-dependent values computed on ref and baked, with every other value those ref runs computed.
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
mkdir -p /tmp/det && tar -C /tmp/det -xJf .dev/det.tar.xz
for be in ref cuda vulkan; do timeout 200 .dev/fusor conform /tmp/det/ssdlite320_mobilenet_v3_large --backend $be 2>&1 | grep -E "^(PASS|FAIL)" | cut -c1-300; done | tee $OUT/det_conform.txt
for be in cuda vulkan; do echo "$be: $(timeout 200 .dev/fusor bench /tmp/det/ssdlite320_mobilenet_v3_large --backend $be --iters 5 --warmup 1 2>&1 | grep -E '^(device time|wall|host)' | head -3 | tr '\n' ' ')"; done | tee $OUT/det_bench.txt
