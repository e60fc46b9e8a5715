# Session 47, correctness of this session's build (any card): string tensors on the host
# (ir/ops/strings.cpp: the text ops, Tokenizer, TfIdfVectorizer over strings, string
# LabelEncoder / Equal / Cast) between the GPUs' device segments. The node suite (its string
# cases now run on every backend), the string and output-form gtests plus the numerics ones on
# the GPU, the shared models fp32 / fp16 / bf16, and W7's GPT-2 / MLP fp16 timings as a check
# that nothing moved.
. scripts/h200_job.sh
h200_node
h200_prep
GTEST_TIMEOUT=200 FUSOR_BIN=$fz h200_gtest 'Strings.*:OutputForms.*:OpsRound5.String*:Round51.*:MlOps.*:NumericsEpilogue.*:Numerics.Half*:Numerics.Gelu*:VulkanDiv.*:Cuda.ModelsPass*:Vulkan.ModelsPass*'
h200_conform
wait; tail -1 $OUT/prep.txt; h200_node_result
for m in /tmp/g2/fp16 /tmp/w/mlp64_fp16; do h200_b $m cuda; h200_b $m vulkan; done 2>&1 | tee $OUT/w7.txt
h200_tidy
