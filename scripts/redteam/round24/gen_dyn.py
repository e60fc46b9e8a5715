# TorchScript opset-17 exports with dynamic batch / sequence axes; test sets at (2, 11), (1, 17) and (3, 5)
import sys, os
sys.path.insert(0, '/tmp/rt24')
from lib import *
import gen_hf
def mk(V, b, s):
    ids = torch.randint(3, V, (b, s)); m = torch.ones(b, s, dtype=torch.long)
    if b > 1: m[-1, s - 2:] = 0
    return ids, m
if __name__ == '__main__':
    for name in sys.argv[1:]:
        base = name
        torch.manual_seed(1); m, keys, a, outs = gen_hf.SP[base](); m.eval()
        try: m.config._attn_implementation = 'eager'
        except Exception: pass
        w = Wrap(m, keys, outs).eval()
        tag = f'{name}_ts17dyn'; d = os.path.join(ROOT, tag); os.makedirs(d, exist_ok=True); p = os.path.join(d, 'model.onnx')
        dyn = {k: {0: 'batch', 1: 'seq'} for k in keys}
        try:
            with torch.no_grad(): torch.onnx.export(w, a, p, input_names=keys, dynamo=False, opset_version=17, dynamic_axes=dyn)
        except Exception as e: print(tag, 'EXPORT-FAIL', str(e).splitlines()[0][:200]); continue
        mp = onnx.load(p)
        V = 101 if base != 'canine' else 500
        import shutil
        for k, (b, s) in enumerate(((2, 11), (1, 17), (3, 5))):
            ids, am = mk(V, b, s); feeds = {'input_ids': ids.numpy(), 'attention_mask': am.numpy()}
            feeds = {kk: v for kk, v in feeds.items() if kk in [i.name for i in mp.graph.input]}
            try: o = ort_run(p, feeds); src = 'ort'
            except Exception as e:
                with torch.no_grad(): o = [t.numpy() for t in flat(w(*[torch.from_numpy(feeds[kk]) for kk in keys]))]; src = 'torch:' + str(e)[:100]
            write_set(d, mp, feeds, o)
            os.rename(os.path.join(d, 'test_data_set_0'), os.path.join(d, f'tmp_{k}'))
            # also torch reference check
            with torch.no_grad(): t = flat(w(*[torch.from_numpy(feeds[kk]) for kk in keys]))
            print(tag, k, (b, s), src, 'ort~torch', all(np.allclose(x, y.numpy(), atol=1e-4, rtol=1e-3) for x, y in zip(o, t)))
        for k in range(3):
            shutil.rmtree(os.path.join(d, f'test_data_set_{k}'), ignore_errors=True); os.rename(os.path.join(d, f'tmp_{k}'), os.path.join(d, f'test_data_set_{k}'))
        print(f'{tag}\tsaved', flush=True)
