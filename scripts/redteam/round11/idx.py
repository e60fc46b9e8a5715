import numpy as np, onnx, subprocess, sys, os
from onnx import numpy_helper as nh
for d in sys.argv[1:]:
    m=onnx.load(f'models/{d}/model.onnx'); shp=[x.dim_value for x in m.graph.input[0].type.tensor_type.shape.dim]
    a=np.arange(np.prod(shp),dtype=np.float32).reshape(shp)
    os.makedirs(f'idx/{d}',exist_ok=True); open(f'idx/{d}/input_0.pb','wb').write(nh.from_array(a,'x').SerializeToString())
    os.makedirs(f'idx/{d}/o',exist_ok=True)
    subprocess.run(['/work/main/build/fusor','run',f'models/{d}','--backend','ref','--inputs',f'idx/{d}','--out',f'idx/{d}/o'],capture_output=True)
    t=onnx.TensorProto(); t.ParseFromString(open(f'idx/{d}/o/output_0.pb','rb').read()); f=nh.to_array(t)
    import onnxruntime as ort
    so=ort.SessionOptions(); so.graph_optimization_level=ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    z=ort.InferenceSession(f'models/{d}/model.onnx',so).run(None,{'x':a})[0]
    print(d); print(' fusor', f[0,0].tolist()); print(' ort  ', z[0,0].tolist())
