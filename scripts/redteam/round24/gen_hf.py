import sys, os
sys.path.insert(0, '/tmp/rt24')
from lib import *
import transformers as T
torch.manual_seed(0)
B, S = 2, 11
def ids(V, b=B, s=S): return torch.randint(3, V, (b, s))
def mask(b=B, s=S):
    m = torch.ones(b, s, dtype=torch.long); m[-1, s - 3:] = 0; return m
def img(c=3, h=32, w=32, b=1): return torch.randn(b, c, h, w)
IR = dict(initializer_range=0.2)
def lm(cfgcls, modcls, extra=None, outs=('logits',), **kw):
    def f():
        c = cfgcls(**kw)
        for k, v in (extra or {}).items(): setattr(c, k, v)
        m = modcls(c)
        return m, ['input_ids', 'attention_mask'], (ids(kw.get('vocab_size', 101)), mask()), list(outs)
    return f
SP = {}
SP['gpt_neox'] = lm(T.GPTNeoXConfig, T.GPTNeoXForCausalLM, vocab_size=101, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, rotary_pct=0.5, max_position_embeddings=64, **IR)
SP['gemma2'] = lm(T.Gemma2Config, T.Gemma2ForCausalLM, vocab_size=101, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=8, max_position_embeddings=64, sliding_window=4, attn_logit_softcapping=50.0, final_logit_softcapping=30.0, **IR)
SP['mixtral'] = lm(T.MixtralConfig, T.MixtralForCausalLM, vocab_size=101, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2, max_position_embeddings=64, **IR)
SP['stablelm'] = lm(T.StableLmConfig, T.StableLmForCausalLM, vocab_size=101, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, partial_rotary_factor=0.25, qk_layernorm=True, max_position_embeddings=64, **IR)
SP['starcoder2'] = lm(T.Starcoder2Config, T.Starcoder2ForCausalLM, vocab_size=101, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64, sliding_window=4, **IR)
SP['olmo'] = lm(T.OlmoConfig, T.OlmoForCausalLM, vocab_size=101, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=64, clip_qkv=0.5, **IR)
SP['cohere'] = lm(T.CohereConfig, T.CohereForCausalLM, vocab_size=101, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64, use_qk_norm=False, **IR)
SP['persimmon'] = lm(T.PersimmonConfig, T.PersimmonForCausalLM, vocab_size=101, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=64, qk_layernorm=True, partial_rotary_factor=0.5, **IR)
SP['mpt'] = lm(T.MptConfig, T.MptForCausalLM, vocab_size=101, d_model=32, n_heads=4, n_layers=2, expansion_ratio=2, max_seq_len=64, **IR)
SP['ctrl'] = lm(T.CTRLConfig, T.CTRLLMHeadModel, vocab_size=101, n_embd=32, n_layer=2, n_head=4, dff=48, n_positions=64, **IR)
SP['granite'] = lm(T.GraniteConfig, T.GraniteForCausalLM, vocab_size=101, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64, embedding_multiplier=2.0, logits_scaling=4.0, residual_multiplier=0.5, attention_multiplier=0.3, **IR)
SP['nemotron'] = lm(T.NemotronConfig, T.NemotronForCausalLM, vocab_size=101, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64, partial_rotary_factor=0.5, **IR)
SP['qwen2_moe'] = lm(T.Qwen2MoeConfig, T.Qwen2MoeForCausalLM, vocab_size=101, hidden_size=32, intermediate_size=48, moe_intermediate_size=16, shared_expert_intermediate_size=24, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, num_experts=4, num_experts_per_tok=2, max_position_embeddings=64, **IR)
SP['xlnet'] = lambda: (T.XLNetModel(T.XLNetConfig(vocab_size=101, d_model=32, n_layer=2, n_head=4, d_inner=48, **IR)), ['input_ids', 'attention_mask'], (ids(101), mask()), ['last_hidden_state'])
SP['funnel'] = lambda: (T.FunnelBaseModel(T.FunnelConfig(vocab_size=101, block_sizes=[1, 1], d_model=32, n_head=4, d_head=8, d_inner=48, **IR)), ['input_ids', 'attention_mask'], (ids(101, s=12), mask(s=12)), ['last_hidden_state'])
SP['fnet'] = lambda: (T.FNetModel(T.FNetConfig(vocab_size=101, hidden_size=32, num_hidden_layers=2, intermediate_size=48, max_position_embeddings=64, use_tpu_fourier_optimizations=False, **IR)), ['input_ids'], (ids(101),), ['last_hidden_state'])
SP['squeezebert'] = lambda: (T.SqueezeBertModel(T.SqueezeBertConfig(vocab_size=101, hidden_size=32, embedding_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, q_groups=2, k_groups=2, v_groups=2, post_attention_groups=2, intermediate_groups=4, output_groups=4, max_position_embeddings=64, **IR)), ['input_ids', 'attention_mask'], (ids(101), mask()), ['last_hidden_state'])
SP['longformer'] = lambda: (T.LongformerModel(T.LongformerConfig(vocab_size=101, hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=48, attention_window=[4], max_position_embeddings=80, **IR)), ['input_ids', 'attention_mask'], (ids(101, s=16), mask(s=16)), ['last_hidden_state'])
SP['canine'] = lambda: (T.CanineModel(T.CanineConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, downsampling_rate=2, num_hash_functions=2, num_hash_buckets=64, local_transformer_stride=4, max_position_embeddings=64, **IR)), ['input_ids', 'attention_mask'], (torch.randint(32, 500, (B, 16)), mask(s=16)), ['last_hidden_state'])
SP['esm'] = lambda: (T.EsmModel(T.EsmConfig(vocab_size=33, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, position_embedding_type='rotary', max_position_embeddings=64, pad_token_id=1, mask_token_id=32, token_dropout=True, **IR)), ['input_ids', 'attention_mask'], (torch.randint(4, 31, (B, S)), mask()), ['last_hidden_state'])
SP['roformer'] = lambda: (T.RoFormerModel(T.RoFormerConfig(vocab_size=101, hidden_size=32, embedding_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, max_position_embeddings=64, **IR)), ['input_ids', 'attention_mask'], (ids(101), mask()), ['last_hidden_state'])
SP['layoutlm'] = lambda: (T.LayoutLMModel(T.LayoutLMConfig(vocab_size=101, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, max_position_embeddings=64, max_2d_position_embeddings=128, **IR)), ['input_ids', 'bbox', 'attention_mask'], (ids(101), torch.sort(torch.randint(0, 127, (B, S, 4)), -1).values[..., [0, 1, 2, 3]], mask()), ['last_hidden_state'])
SP['big_bird'] = lambda: (T.BigBirdModel(T.BigBirdConfig(vocab_size=101, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, max_position_embeddings=64, attention_type='original_full', **IR)), ['input_ids', 'attention_mask'], (ids(101), mask()), ['last_hidden_state'])
SP['nystromformer'] = lambda: (T.NystromformerModel(T.NystromformerConfig(vocab_size=101, hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=48, max_position_embeddings=80, num_landmarks=4, segment_means_seq_len=16, conv_kernel_size=3, **IR)), ['input_ids', 'attention_mask'], (ids(101, s=16), torch.ones(B, 16, dtype=torch.long)), ['last_hidden_state'])
SP['perceiver'] = lambda: (T.PerceiverModel(T.PerceiverConfig(num_latents=8, d_latents=32, d_model=32, num_blocks=1, num_self_attends_per_block=2, num_self_attention_heads=4, num_cross_attention_heads=4, qk_channels=None, v_channels=None, **IR)), ['inputs'], (torch.randn(B, 10, 32),), ['last_hidden_state'])
# seq2seq / speech
def marian():
    c = T.MarianConfig(vocab_size=101, d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=48, decoder_ffn_dim=48, max_position_embeddings=64, pad_token_id=0, decoder_start_token_id=0, **IR)
    return T.MarianMTModel(c), ['input_ids', 'attention_mask', 'decoder_input_ids'], (ids(101), mask(), ids(101, s=5)), ['logits']
SP['marian'] = marian
def pegasus():
    c = T.PegasusConfig(vocab_size=101, d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=48, decoder_ffn_dim=48, max_position_embeddings=64, **IR)
    return T.PegasusForConditionalGeneration(c), ['input_ids', 'attention_mask', 'decoder_input_ids'], (ids(101), mask(), ids(101, s=5)), ['logits']
SP['pegasus'] = pegasus
def m2m100():
    c = T.M2M100Config(vocab_size=101, d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=48, decoder_ffn_dim=48, max_position_embeddings=64, **IR)
    return T.M2M100ForConditionalGeneration(c), ['input_ids', 'attention_mask', 'decoder_input_ids'], (ids(101), mask(), ids(101, s=5)), ['logits']
SP['m2m100'] = m2m100
def whisper_full():
    c = T.WhisperConfig(vocab_size=101, d_model=32, encoder_layers=1, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=48, decoder_ffn_dim=48, num_mel_bins=16, max_source_positions=16, max_target_positions=32, pad_token_id=1, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1, **IR)
    return T.WhisperForConditionalGeneration(c), ['input_features', 'decoder_input_ids'], (torch.randn(1, 16, 32), torch.randint(3, 101, (1, 6))), ['logits']
SP['whisper_full'] = whisper_full
def speech2text():
    c = T.Speech2TextConfig(vocab_size=101, d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=48, decoder_ffn_dim=48, input_feat_per_channel=16, conv_channels=32, conv_kernel_sizes=(5, 5), max_source_positions=64, max_target_positions=32, **IR)
    return T.Speech2TextForConditionalGeneration(c), ['input_features', 'attention_mask', 'decoder_input_ids'], (torch.randn(1, 40, 16), torch.ones(1, 40, dtype=torch.long), torch.randint(3, 101, (1, 6))), ['logits']
SP['speech2text'] = speech2text
def wavlm():
    c = T.WavLMConfig(vocab_size=32, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=8, num_conv_pos_embedding_groups=4, num_buckets=16, max_bucket_distance=40, **IR)
    return T.WavLMModel(c), ['input_values'], (torch.randn(1, 401),), ['last_hidden_state']
SP['wavlm'] = wavlm
def data2vec_audio():
    c = T.Data2VecAudioConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=5, num_conv_pos_embedding_groups=4, conv_pos_kernel_size=5, num_conv_pos_embeddings_layers=2, **IR)
    return T.Data2VecAudioModel(c), ['input_values'], (torch.randn(1, 401),), ['last_hidden_state']
SP['data2vec_audio'] = data2vec_audio
def sew():
    c = T.SEWConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=8, num_conv_pos_embedding_groups=4, squeeze_factor=2, **IR)
    return T.SEWModel(c), ['input_values'], (torch.randn(1, 401),), ['last_hidden_state']
SP['sew'] = sew
# vision
def vis(cls, cfgcls, outs=('last_hidden_state',), x=None, **kw):
    return lambda: (cls(cfgcls(**kw)), ['pixel_values'], (x if x is not None else img(),), list(outs))
SP['clip_vision'] = vis(T.CLIPVisionModel, T.CLIPVisionConfig, outs=('last_hidden_state', 'pooler_output'), image_size=32, patch_size=8, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, **IR)
SP['siglip_vision'] = vis(T.SiglipVisionModel, T.SiglipVisionConfig, outs=('last_hidden_state', 'pooler_output'), image_size=32, patch_size=8, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4)
SP['dinov2'] = vis(T.Dinov2Model, T.Dinov2Config, outs=('last_hidden_state', 'pooler_output'), image_size=28, patch_size=7, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, mlp_ratio=2, layerscale_value=0.5, x=img(h=35, w=42), **IR)
SP['levit'] = vis(T.LevitModel, T.LevitConfig, outs=('last_hidden_state', 'pooler_output'), image_size=64, hidden_sizes=[32, 48, 64], num_attention_heads=[2, 3, 4], depths=[1, 1, 1], key_dim=[8, 8, 8], x=img(h=64, w=64))
SP['poolformer'] = vis(T.PoolFormerModel, T.PoolFormerConfig, image_size=32, hidden_sizes=[16, 32, 48, 64], depths=[1, 1, 1, 1])
SP['regnet_hf'] = vis(T.RegNetModel, T.RegNetConfig, outs=('last_hidden_state', 'pooler_output'), embedding_size=16, hidden_sizes=[16, 32, 48, 64], depths=[1, 1, 1, 1], groups_width=8, layer_type='y')
SP['convnextv2'] = vis(T.ConvNextV2Model, T.ConvNextV2Config, outs=('last_hidden_state', 'pooler_output'), num_stages=2, hidden_sizes=[8, 16], depths=[1, 1])
SP['cvt'] = vis(T.CvtModel, T.CvtConfig, num_heads=[1, 2, 3], embed_dim=[16, 32, 48], depth=[1, 1, 1], mlp_ratio=[2.0, 2.0, 2.0])
SP['pvt_v2'] = vis(T.PvtV2Model, T.PvtV2Config, hidden_sizes=[16, 32, 48, 64], depths=[1, 1, 1, 1], num_attention_heads=[1, 2, 3, 4], sr_ratios=[4, 2, 1, 1], linear_attention=False)
SP['pvt'] = vis(T.PvtModel, T.PvtConfig, image_size=32, hidden_sizes=[16, 32, 48, 64], depths=[1, 1, 1, 1], num_attention_heads=[1, 2, 3, 4], sequence_reduction_ratios=[4, 2, 1, 1])
SP['focalnet'] = vis(T.FocalNetModel, T.FocalNetConfig, outs=('last_hidden_state', 'pooler_output'), image_size=32, patch_size=4, embed_dim=16, depths=[1, 1], focal_levels=[2, 2], focal_windows=[3, 3], use_layerscale=True, use_post_layernorm_in_modulation=True)
SP['swinv2'] = vis(T.Swinv2Model, T.Swinv2Config, outs=('last_hidden_state', 'pooler_output'), image_size=32, patch_size=2, embed_dim=16, depths=[1, 1], num_heads=[2, 4], window_size=4)
SP['bit'] = vis(T.BitModel, T.BitConfig, outs=('last_hidden_state', 'pooler_output'), embedding_size=16, hidden_sizes=[16, 32, 48, 64], depths=[1, 1, 1, 1], layer_type='preactivation', global_padding='SAME')
SP['mobilenet_v1_hf'] = vis(T.MobileNetV1Model, T.MobileNetV1Config, outs=('last_hidden_state', 'pooler_output'), depth_multiplier=0.25, image_size=32, tf_padding=True, x=img(h=33, w=37))
SP['mobilevitv2'] = vis(T.MobileViTV2Model, T.MobileViTV2Config, outs=('last_hidden_state', 'pooler_output'), image_size=64, width_multiplier=0.5, x=img(h=64, w=64))
SP['efficientformer'] = vis(T.EfficientFormerModel, T.EfficientFormerConfig, image_size=64, depths=[1, 1, 1, 2], hidden_sizes=[16, 32, 48, 64], num_meta3d_blocks=1, x=img(h=64, w=64)) if hasattr(T, 'EfficientFormerModel') else None
SP['swiftformer'] = vis(T.SwiftFormerModel, T.SwiftFormerConfig, image_size=64, depths=[1, 1, 1, 1], embed_dims=[16, 32, 48, 64], x=img(h=64, w=64)) if hasattr(T, 'SwiftFormerModel') else None
SP['glpn'] = vis(T.GLPNForDepthEstimation, T.GLPNConfig, outs=('predicted_depth',), hidden_sizes=[16, 32, 48, 64], depths=[1, 1, 1, 1], num_attention_heads=[1, 2, 3, 4], decoder_hidden_size=16)
SP['dpt'] = vis(T.DPTForDepthEstimation, T.DPTConfig, outs=('predicted_depth',), image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=4, num_attention_heads=4, intermediate_size=48, neck_hidden_sizes=[8, 16, 24, 32], fusion_hidden_size=16, backbone_out_indices=[0, 1, 2, 3], head_in_index=-1)
SP['yolos'] = vis(T.YolosForObjectDetection, T.YolosConfig, outs=('logits', 'pred_boxes'), image_size=[32, 32], patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, num_detection_tokens=5, num_labels=7, x=img(h=32, w=40))
SP['vitmae'] = lambda: (T.ViTMAEModel(T.ViTMAEConfig(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, mask_ratio=0.5, **IR)), ['pixel_values', 'noise'], (img(), torch.rand(1, 16)), ['last_hidden_state', 'ids_restore'])
SP['hiera'] = vis(T.HieraModel, T.HieraConfig, outs=('last_hidden_state', 'pooler_output'), image_size=[64, 64], patch_size=[7, 7], patch_stride=[4, 4], patch_padding=[3, 3], embed_dim=16, num_heads=[1, 2], depths=[1, 1], query_stride=[2, 2], masked_unit_size=[4, 4], masked_unit_attention=[True, False], x=img(h=64, w=64)) if hasattr(T, 'HieraModel') else None
SP['detr'] = lambda: (T.DetrForObjectDetection(T.DetrConfig(use_timm_backbone=False, use_pretrained_backbone=False, backbone_config=T.ResNetConfig(embedding_size=16, hidden_sizes=[16, 32, 48, 64], depths=[1, 1, 1, 1], out_features=['stage4']), d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=48, decoder_ffn_dim=48, num_queries=5, num_labels=7)), ['pixel_values'], (img(h=64, w=64),), ['logits', 'pred_boxes'])
SP['timesformer'] = lambda: (T.TimesformerModel(T.TimesformerConfig(image_size=16, patch_size=8, num_frames=2, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, **IR)), ['pixel_values'], (torch.randn(1, 2, 3, 16, 16),), ['last_hidden_state'])
SP['videomae'] = lambda: (T.VideoMAEModel(T.VideoMAEConfig(image_size=16, patch_size=8, num_frames=4, tubelet_size=2, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, **IR)), ['pixel_values'], (torch.randn(1, 4, 3, 16, 16),), ['last_hidden_state'])
SP['recurrent_gemma'] = lm(T.RecurrentGemmaConfig, T.RecurrentGemmaForCausalLM, vocab_size=101, hidden_size=32, intermediate_size=48, num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=1, lru_width=32, attention_window_size=8, conv1d_width=4, **IR) if hasattr(T, 'RecurrentGemmaConfig') else None
SP['mamba'] = lambda: (T.MambaForCausalLM(T.MambaConfig(vocab_size=101, hidden_size=32, state_size=8, num_hidden_layers=2, expand=2, conv_kernel=4, **IR)), ['input_ids'], (ids(101),), ['logits'])
SP['rwkv'] = lambda: (T.RwkvForCausalLM(T.RwkvConfig(vocab_size=101, hidden_size=32, num_hidden_layers=2, attention_hidden_size=32, intermediate_size=48, context_length=64, **IR)), ['input_ids'], (ids(101),), ['logits']) if hasattr(T, 'RwkvConfig') else None

SP['mixtral_eager'] = lm(T.MixtralConfig, T.MixtralForCausalLM, vocab_size=101, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2, max_position_embeddings=64, experts_implementation='eager', **IR)
SP['mixtral_bmm'] = lm(T.MixtralConfig, T.MixtralForCausalLM, vocab_size=101, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2, max_position_embeddings=64, experts_implementation='batched_mm', **IR)
SP['qwen2moe_eager'] = lm(T.Qwen2MoeConfig, T.Qwen2MoeForCausalLM, vocab_size=101, hidden_size=32, intermediate_size=48, moe_intermediate_size=16, shared_expert_intermediate_size=24, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, num_experts=4, num_experts_per_tok=2, max_position_embeddings=64, experts_implementation='eager', **IR)
SP['gemma3_text'] = lm(T.Gemma3TextConfig, T.Gemma3ForCausalLM, vocab_size=101, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=8, max_position_embeddings=64, sliding_window=4, **IR) if hasattr(T, 'Gemma3TextConfig') else None
SP['phimoe'] = lm(T.PhimoeConfig, T.PhimoeForCausalLM, vocab_size=101, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2, max_position_embeddings=64, experts_implementation='eager', **IR) if hasattr(T, 'PhimoeConfig') else None
SP['deepseek_v2'] = lm(T.DeepseekV2Config, T.DeepseekV2ForCausalLM, vocab_size=101, hidden_size=32, intermediate_size=48, moe_intermediate_size=16, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4, n_routed_experts=4, num_experts_per_tok=2, n_shared_experts=1, first_k_dense_replace=1, kv_lora_rank=16, q_lora_rank=None, qk_rope_head_dim=4, v_head_dim=8, qk_nope_head_dim=4, max_position_embeddings=64, experts_implementation='eager', **IR) if hasattr(T, 'DeepseekV2Config') else None

if __name__ == '__main__':
    args = sys.argv[1:]
    variants = os.environ.get('VARIANTS', 'ts17,dyn18').split(',')
    for name in args:
        f = SP.get(name)
        if f is None: print(name, 'NO-SPEC'); continue
        torch.manual_seed(1)
        try: m, keys, a, outs = f()
        except Exception as e:
            print(f'{name}\tBUILD-FAIL\t{str(e).splitlines()[0][:200] if str(e) else type(e).__name__}', flush=True); continue
        m.eval()
        if not os.environ.get('SDPA'):
            try: m.config._attn_implementation = 'eager'
            except Exception: pass
        else:
            try: m.config._attn_implementation = 'sdpa'
            except Exception: pass
        w = Wrap(m, keys, outs).eval()
        for v in variants:
            half = 'bf16' if v.endswith('b') else v.endswith('h')
            dyn = v.startswith('dyn'); ops = int(v.rstrip('hb')[3:] if dyn else v.rstrip('hb')[2:])
            import copy
            export_case(f'{name}_{v}' + ('s' if os.environ.get('SDPA') else ''), copy.deepcopy(w) if half else w, a, keys, dyn, ops, half=half)
