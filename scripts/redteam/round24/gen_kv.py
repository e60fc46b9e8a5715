# decoder step with an explicit KV cache (optimum-style): past length P (0 = first step, empty tensors)
import sys, os
sys.path.insert(0, '/tmp/rt24')
from lib import *
import transformers as T
from transformers.cache_utils import DynamicCache
IR = dict(initializer_range=0.2)
class KV(torch.nn.Module):
    def __init__(s, m, L): super().__init__(); s.m = m; s.L = L
    def forward(s, input_ids, attention_mask, *past):
        cache = DynamicCache(ddp_cache_data=[(past[2 * i], past[2 * i + 1]) for i in range(s.L)], config=s.m.config)
        r = s.m(input_ids=input_ids, attention_mask=attention_mask, past_key_values=cache, use_cache=True, return_dict=True)
        outs = [r.logits]
        for i in range(s.L):
            l = r.past_key_values.layers[i]; outs += [l.keys, l.values]
        return tuple(outs)
def make(name):
    if name.startswith('llama'):
        c = T.LlamaConfig(vocab_size=101, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64, **IR); m = T.LlamaForCausalLM(c); kvh, hd = 2, 8
    elif name.startswith('gpt2'):
        c = T.GPT2Config(vocab_size=101, n_embd=32, n_layer=2, n_head=4, n_positions=64, **IR); m = T.GPT2LMHeadModel(c); kvh, hd = 4, 8
    elif name.startswith('qwen2'):
        c = T.Qwen2Config(vocab_size=101, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=1, max_position_embeddings=64, **IR); m = T.Qwen2ForCausalLM(c); kvh, hd = 1, 8
    return m, kvh, hd
if __name__ == '__main__':
    variants = os.environ.get('VARIANTS', 'ts17,dyn18').split(',')
    for name in sys.argv[1:]:
        base, P, S = name.split('_')[0], int(name.split('_')[1][1:]), int(name.split('_')[2][1:])   # e.g. llama_p0_s5
        torch.manual_seed(1)
        m, kvh, hd = make(base); m.eval(); m.config._attn_implementation = 'eager'
        B = 2
        ids = torch.randint(3, 101, (B, S)); am = torch.ones(B, P + S, dtype=torch.long); am[1, :2] = 0
        past = []
        for i in range(2): past += [torch.randn(B, kvh, P, hd), torch.randn(B, kvh, P, hd)]
        names = ['input_ids', 'attention_mask'] + [f'past_{i // 2}_{"kv"[i % 2]}' for i in range(4)]
        for v in variants:
            dyn = v.startswith('dyn'); ops = int(v[3:] if dyn else v[2:])
            export_case(f'{name}_{v}', KV(m, 2), (ids, am, *past), names, dyn, ops)
