# dynamo exports with dynamic_shapes; test sets at several sizes (text: batch/seq, vision: H/W)
import sys, os, shutil
sys.path.insert(0, '/tmp/rt24')
from lib import *
import gen_hf
from torch.export import Dim
TEXT = {'gemma2', 'starcoder2', 'gpt_neox', 'mpt', 'persimmon', 'roformer', 'esm', 'big_bird', 'granite', 'olmo'}
if __name__ == '__main__':
    for name in sys.argv[1:]:
        torch.manual_seed(1); m, keys, a, outs = gen_hf.SP[name](); m.eval()
        try: m.config._attn_implementation = 'eager'
        except Exception: pass
        w = Wrap(m, keys, outs).eval()
        tag = f'{name}_dyn18d'; d = os.path.join(ROOT, tag); os.makedirs(d, exist_ok=True); p = os.path.join(d, 'model.onnx')
        if name in TEXT:
            B, S = Dim('batch', min=1, max=8), Dim('seq', min=2, max=40)
            ds = (tuple({0: B, 1: S} for k in keys),)
            def sets():
                for b, s in ((2, 11), (1, 17), (3, 5)):
                    ids = torch.randint(3, 101, (b, s)); am = torch.ones(b, s, dtype=torch.long)
                    if b > 1: am[-1, s - 2:] = 0
                    yield (ids, am)
        else:
            H, W = Dim('h', min=16, max=128), Dim('w', min=16, max=128)
            ds = (({2: 8 * Dim("hh", min=2, max=16), 3: 8 * Dim("ww", min=2, max=16)},),)
            def sets():
                for h_, w_ in ((32, 32), (48, 40), (64, 24)):
                    yield (torch.randn(1, 3, h_, w_),)
        try:
            with torch.no_grad(): torch.onnx.export(w, a, p, input_names=keys, dynamo=True, opset_version=18, dynamic_shapes=ds, external_data=False)
        except Exception as e: print(tag, 'EXPORT-FAIL', str(e).splitlines()[0][:200]); continue
        mp = onnx.load(p); gin = [i.name for i in mp.graph.input]
        for k, args in enumerate(sets()):
            feeds = {kk: v.numpy() for kk, v in zip(keys, args) if kk in gin}
            with torch.no_grad(): t = [x.numpy() for x in flat(w(*args))]
            try: o = ort_run(p, feeds); src = 'ort ~torch=' + str(all(np.allclose(x, y, atol=1e-4, rtol=1e-3) for x, y in zip(o, t)))
            except Exception as e: o = t; src = 'torch (ort: ' + str(e)[:120] + ')'
            write_set(d, mp, feeds, o); shutil.rmtree(os.path.join(d, f'test_data_set_{k}x'), ignore_errors=True)
            os.rename(os.path.join(d, 'test_data_set_0'), os.path.join(d, f'test_data_set_{k}x'))
            print(tag, k, [v.shape for v in feeds.values()], src, flush=True)
        for k in range(3):
            shutil.rmtree(os.path.join(d, f'test_data_set_{k}'), ignore_errors=True); os.rename(os.path.join(d, f'test_data_set_{k}x'), os.path.join(d, f'test_data_set_{k}'))
        print(f'{tag}\tsaved', flush=True)
