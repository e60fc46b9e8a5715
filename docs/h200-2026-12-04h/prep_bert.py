# Session 26: a 2-layer BERT-base-shaped encoder (hidden 768, 12 heads, vocab 30522, batch 1 x
# sequence 128, random weights) exported with the TorchScript exporter at opset 17 to
# /tmp/bert2/model.onnx: three embedding lookups (word, position, token type) before its first
# LayerNorm. Needs torch and transformers (the H200 machine).
import os, torch
from transformers import BertConfig, BertModel
cfg = BertConfig(hidden_size=768, num_hidden_layers=2, num_attention_heads=12, intermediate_size=3072, vocab_size=30522)
class Wrap(torch.nn.Module):  # keyword arguments: BertModel.forward's positional order changed across versions
    def __init__(self, m):
        super().__init__()
        self.m = m
    def forward(self, input_ids, attention_mask, token_type_ids):
        o = self.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
        return o.last_hidden_state, o.pooler_output
m = Wrap(BertModel(cfg).eval()).cuda()
ids = torch.randint(0, 30522, (1, 128), device="cuda")
tt = torch.zeros_like(ids)
os.makedirs("/tmp/bert2", exist_ok=True)
torch.onnx.export(m, (ids, torch.ones_like(ids), tt), "/tmp/bert2/model.onnx", opset_version=17, dynamo=False,
                  input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["last_hidden_state", "pooler"])
print("bert exported")
