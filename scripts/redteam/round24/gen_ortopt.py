# usage: gen_ortopt.py SRC_TAG MODE [model_type]   MODE: ext | all | tf (onnxruntime.transformers optimizer)
import sys, os, shutil
sys.path.insert(0, '/tmp/rt24')
from lib import *
import onnxruntime as ort
src, mode = sys.argv[1], sys.argv[2]
sd = os.path.join(ROOT, src); dd = os.path.join(ROOT, f'{src}_ort{mode}')
os.makedirs(dd, exist_ok=True)
p = os.path.join(dd, 'model.onnx')
if mode in ('ext', 'all', 'basic'):
    so = ort.SessionOptions()
    so.graph_optimization_level = {'basic': ort.GraphOptimizationLevel.ORT_ENABLE_BASIC, 'ext': ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED, 'all': ort.GraphOptimizationLevel.ORT_ENABLE_ALL}[mode]
    so.optimized_model_filepath = p
    ort.InferenceSession(os.path.join(sd, 'model.onnx'), so, providers=['CPUExecutionProvider'])
else:
    from onnxruntime.transformers import optimizer
    mt = sys.argv[3]
    m = optimizer.optimize_model(os.path.join(sd, 'model.onnx'), model_type=mt, num_heads=int(sys.argv[4]) if len(sys.argv) > 4 else 0, hidden_size=int(sys.argv[5]) if len(sys.argv) > 5 else 0, opt_level=0 if mode == 'tf' else 1)
    if mode == 'tf16': m.convert_float_to_float16(keep_io_types=True)
    m.save_model_to_file(p)
shutil.rmtree(os.path.join(dd, 'test_data_set_0'), ignore_errors=True)
shutil.copytree(os.path.join(sd, 'test_data_set_0'), os.path.join(dd, 'test_data_set_0'))
mm = onnx.load(p)
ops = sorted({(n.domain + '.' if n.domain else '') + n.op_type for n in mm.graph.node})
print(f'{src}_ort{mode}\tsaved\t{len(mm.graph.node)} nodes\t{" ".join(ops)}', flush=True)
