import sys, numpy as np, onnx, os
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator
for name in sys.argv[1:]:
    d='models/'+name; m=onnx.load(d+'/model.onnx')
    inits={i.name for i in m.graph.initializer}; gin=[i.name for i in m.graph.input if i.name not in inits]
    feeds={}
    for k,n in enumerate(gin):
        t=onnx.TensorProto(); t.ParseFromString(open(f'{d}/inputs/input_{k}.pb','rb').read()); feeds[n]=nh.to_array(t)
    try: r=ReferenceEvaluator(m).run(None,feeds)
    except Exception as e: r=None; print(name,'onnxref err',str(e)[:200])
    z=np.load(d+'/expected.npz') if os.path.exists(d+'/expected.npz') else None
    for b in ('ref','cpu','vulkan'):
        o='out/'+name+'/'+b
        k=0
        while os.path.exists(f'{o}/output_{k}.pb'):
            t=onnx.TensorProto(); t.ParseFromString(open(f'{o}/output_{k}.pb','rb').read()); a=nh.to_array(t)
            if b=='ref':
                print(name,'out',k,'fusor',a.ravel()[:12], a.shape)
                if r is not None: print('   onnxref',np.asarray(r[k]).ravel()[:12], np.asarray(r[k]).shape)
                if z is not None and f'arr_{k}' in z: print('   ort    ',z[f'arr_{k}'].ravel()[:12])
            k+=1
