"""Tiny transformers models built from config (no weights downloaded), exported by torch.onnx
(TorchScript exporter, opset 17; dynamo opset 18 where it works); fp32, and fp16 / bf16 variants
(expected = the fp32 model on the same rounded weights)."""
import os, sys, warnings, traceback
warnings.filterwarnings('ignore')
import numpy as np, torch, onnx, ml_dtypes
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib10 import save_case, ROOT, ort_run
import transformers as T
torch.manual_seed(0)
B, S = 2, 13
def ids(V, b=B, s=S): return torch.randint(1, V, (b, s))
def mask(b=B, s=S):
    m = torch.ones(b, s, dtype=torch.long); m[-1, s - 4:] = 0; return m

class Wrap(torch.nn.Module):
    def __init__(s, m, keys, outs): super().__init__(); s.m = m; s.keys = keys; s.outs = outs
    def forward(s, *a):
        r = s.m(**dict(zip(s.keys, a)), return_dict=True)
        return tuple(r[k] for k in s.outs)

def models():
    c = T.BertConfig(vocab_size=101, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, max_position_embeddings=64, type_vocab_size=2)
    yield 'hf_bert', T.BertModel(c), ['input_ids', 'attention_mask', 'token_type_ids'], (ids(101), mask(), torch.randint(0, 2, (B, S))), ['last_hidden_state', 'pooler_output']
    c = T.GPT2Config(vocab_size=101, n_embd=32, n_layer=2, n_head=4, n_positions=64)
    yield 'hf_gpt2', T.GPT2LMHeadModel(c), ['input_ids', 'attention_mask'], (ids(101), mask()), ['logits']
    c = T.T5Config(vocab_size=101, d_model=32, d_kv=8, d_ff=48, num_layers=2, num_heads=4, relative_attention_num_buckets=8, relative_attention_max_distance=16, feed_forward_proj='gated-gelu')
    yield 'hf_t5enc', T.T5EncoderModel(c), ['input_ids', 'attention_mask'], (ids(101), mask()), ['last_hidden_state']
    c = T.ViTConfig(image_size=20, patch_size=4, num_channels=3, hidden_size=24, num_hidden_layers=2, num_attention_heads=3, intermediate_size=40)
    yield 'hf_vit', T.ViTModel(c), ['pixel_values'], (torch.rand(3, 3, 20, 20),), ['last_hidden_state', 'pooler_output']
    c = T.LlamaConfig(vocab_size=101, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    yield 'hf_llama', T.LlamaForCausalLM(c), ['input_ids', 'attention_mask'], (ids(101), mask()), ['logits']
    c = T.DistilBertConfig(vocab_size=101, dim=32, n_layers=2, n_heads=4, hidden_dim=48, max_position_embeddings=64)
    yield 'hf_distilbert', T.DistilBertModel(c), ['input_ids', 'attention_mask'], (ids(101), mask()), ['last_hidden_state']
    c = T.WhisperConfig(vocab_size=101, d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4, decoder_attention_heads=4,
                        encoder_ffn_dim=48, decoder_ffn_dim=48, num_mel_bins=16, max_source_positions=16, max_target_positions=32, pad_token_id=1, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)
    yield 'hf_whisper_enc', T.WhisperModel(c).encoder, ['input_features'], (torch.rand(2, 16, 32),), ['last_hidden_state']
    c = T.Wav2Vec2Config(vocab_size=32, hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=48,
                         conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=8, num_conv_pos_embedding_groups=4, do_stable_layer_norm=False)
    yield 'hf_wav2vec2', T.Wav2Vec2Model(c), ['input_values'], (torch.rand(2, 401),), ['last_hidden_state']
    c = T.ConvNextConfig(num_channels=3, num_stages=2, hidden_sizes=[8, 16], depths=[1, 1], image_size=32)
    yield 'hf_convnext', T.ConvNextModel(c), ['pixel_values'], (torch.rand(2, 3, 32, 32),), ['last_hidden_state', 'pooler_output']
    c = T.BartConfig(vocab_size=101, d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=48, decoder_ffn_dim=48, max_position_embeddings=64)
    yield 'hf_bart', T.BartModel(c), ['input_ids', 'attention_mask', 'decoder_input_ids'], (ids(101), mask(), ids(101, B, 7)), ['last_hidden_state']

def export(tag, w, keys, args, dynamo, opset):
    d = os.path.join(ROOT, 'models', tag); os.makedirs(d, exist_ok=True); p = os.path.join(d, 'model.onnx')
    with torch.no_grad():
        if dynamo: torch.onnx.export(w, args, p, input_names=keys, dynamo=True, opset_version=opset, external_data=False)
        else: torch.onnx.export(w, args, p, input_names=keys, dynamo=False, opset_version=opset)
    return p

if __name__ == '__main__':
    only = sys.argv[1:]
    for name, m, keys, args, outs in models():
        if only and not any(name.startswith(o) for o in only): continue
        m.eval()
        try: m.config._attn_implementation = 'eager'
        except Exception: pass
        for dtype in ('fp32', 'fp16', 'bf16'):
            mm = m if dtype == 'fp32' else (m.half() if dtype == 'fp16' else m.bfloat16())
            tdt = {'fp32': torch.float32, 'fp16': torch.float16, 'bf16': torch.bfloat16}[dtype]
            a2 = tuple(a.to(tdt) if a.is_floating_point() else a for a in args)
            w = Wrap(mm, keys, outs).eval()
            for dyn, ops in ((False, 17), (True, 18)):
                if dtype != 'fp32' and dyn: continue
                tag = f'{name}_{dtype}_{"dyn" if dyn else "ts"}{ops}'
                try: p = export(tag, w, keys, a2, dyn, ops)
                except Exception as e:
                    print(tag, 'EXPORT-FAIL', (str(e).splitlines() or [type(e).__name__])[0][:150], flush=True); continue
                mp = onnx.load(p); gin = [i.name for i in mp.graph.input]
                feeds = {k: (a.numpy() if a.dtype != torch.bfloat16 else a.float().numpy()) for k, a in zip(keys, a2) if k in gin}
                if dtype == 'bf16':
                    import ml_dtypes; feeds = {k: (v.astype(ml_dtypes.bfloat16) if v.dtype == np.float32 else v) for k, v in feeds.items()}
                exp = None
                if dtype == 'bf16':
                    # torch's own bf16 run on the same inputs (onnxruntime CPU lacks bf16 kernels)
                    with torch.no_grad(): exp = [x.float().numpy().astype(ml_dtypes.bfloat16) for x in w(*a2)]
                    open(os.path.join(ROOT, 'models', tag, 'expected_from_torch_bf16'), 'w').write('torch bf16')
                elif dtype != 'fp32':
                    try: exp = ort_run(p, feeds)
                    except Exception as e:
                        # the fp32 model on the same rounded weights
                        w32 = Wrap(mm.float(), keys, outs).eval()
                        with torch.no_grad(): r = w32(*[a.float() if a.is_floating_point() else a for a in a2])
                        exp = [x.float().numpy() for x in r]
                        mm.to(tdt); open(os.path.join(ROOT, 'models', tag, 'expected_from_fp32'), 'w').write(str(e)[:300])
                save_case(tag, p, feeds, expected=exp)
                print(tag, 'saved', flush=True)
        m.float()
