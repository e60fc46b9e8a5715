"""Real exports with dynamic batch / sequence axes (TorchScript exporter, dynamic_axes; dynamo with
dynamic_shapes), each saved once per input size so fusor specialises the same file at several shapes."""
import os, sys, warnings; warnings.filterwarnings('ignore')
import numpy as np, torch, onnx, shutil
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib10 import save_case, ROOT
import gen_hf, gen_torch
torch.manual_seed(1)
def sizes(): return [(1, 1), (3, 7), (2, 33), (1, 64)]
todo = []
for name, m, keys, args, outs in gen_hf.models():
    if name not in ('hf_bert', 'hf_gpt2', 'hf_llama', 'hf_t5enc', 'hf_distilbert', 'hf_bart'): continue
    todo.append((name, gen_hf.Wrap(m.eval(), keys, outs).eval(), keys, args))
todo.append(('bert10', gen_torch.Bert().eval(), ['ids', 'tt', 'mask'], None))
for name, w, keys, args in todo:
    for dyn in (False, True):
        tag = f'dyn_{name}_{"dyn" if dyn else "ts"}'
        d = f'/tmp/rt10/dyn_src/{tag}'; os.makedirs(d, exist_ok=True); p = f'{d}/model.onnx'
        def mkargs(B, S):
            a = []
            for k in keys:
                if k in ('input_ids', 'ids', 'decoder_input_ids'): a.append(torch.randint(1, 97, (B, S if k != 'decoder_input_ids' else max(1, S // 2))))
                elif k in ('attention_mask', 'mask'):
                    mm = torch.ones(B, S, dtype=torch.long); mm[-1, S // 2 + 1:] = 0 if S > 2 else 1; a.append(mm)
                elif k in ('token_type_ids', 'tt'): a.append(torch.randint(0, 2, (B, S)))
            return tuple(a)
        ex = mkargs(2, 9)
        try:
            with torch.no_grad():
                if dyn:
                    bd = torch.export.Dim('batch', min=1, max=8); sd = torch.export.Dim('seq', min=1, max=64)
                    ds = {k: ({0: bd, 1: sd} if k != 'decoder_input_ids' else {0: bd}) for k in keys}
                    torch.onnx.export(w, ex, p, input_names=keys, dynamo=True, opset_version=18, dynamic_shapes=ds, external_data=False)
                else:
                    torch.onnx.export(w, ex, p, input_names=keys, dynamo=False, opset_version=17,
                                      dynamic_axes={k: {0: 'batch', 1: 'seq' if k != 'decoder_input_ids' else 'dseq'} for k in keys})
        except Exception as e:
            print(tag, 'EXPORT-FAIL', (str(e).splitlines() or [''])[0][:150], flush=True); continue
        gin = [i.name for i in onnx.load(p).graph.input]
        for B, S in sizes():
            a = mkargs(B, S)
            feeds = {k: v.numpy() for k, v in zip(keys, a) if k in gin}
            save_case(f'{tag}_B{B}_S{S}', p, feeds); print(f'{tag}_B{B}_S{S}', 'saved', flush=True)
