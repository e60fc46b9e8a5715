import numpy as np, onnx
from onnx import numpy_helper as nh
def ld(p):
    t=onnx.TensorProto(); t.ParseFromString(open(p,'rb').read()); return nh.to_array(t)
def init(d):
    m=onnx.load(f'models/{d}/model.onnx'); return {i.name:nh.to_array(i) for i in m.graph.initializer}, m
for d in ['gemm6_00_3x5','gemm6_11_3x5','gemm6_00_5','gemm6_11_3x1']:
    I,m=init(d); a=ld(f'models/{d}/inputs/input_0.pb'); at={x.name:x for x in m.graph.node[0].attribute}
    A=a.T if at['transA'].i else a; B=I['b'].T if at['transB'].i else I['b']
    y=0.7*A@B+1.3*I['c']; f=ld(f'out/{d}/ref/output_0.pb'); z=np.load(f'models/{d}/expected.npz')['arr_0']
    print(d,'fusor==np',np.allclose(f,y,1e-4,1e-5),'onnxref==np',np.allclose(z,y,1e-4,1e-5))
# avgpool1: exclude pad
import torch
d='avgpool1_(3,3)_(2,2)_(1,1,1,1)_0_0'; x=ld(f'models/{d}/inputs/input_0.pb'); f=ld(f'out/{d}/ref/output_0.pb'); z=np.load(f'models/{d}/expected.npz')['arr_0']
y=torch.nn.functional.avg_pool2d(torch.tensor(x),3,2,1,count_include_pad=False).numpy()
print(d,'fusor==np',np.allclose(f,y,1e-4,1e-5),'onnxref==np',np.allclose(z,y,1e-4,1e-5))
# lrn even size 4: window c-1..c+2 (floor((4-1)/2)=1 before, ceil=2 after)
d='lrn1_even'; x=ld(f'models/{d}/inputs/input_0.pb'); f=ld(f'out/{d}/ref/output_0.pb'); z=np.load(f'models/{d}/expected.npz')['arr_0']
C=6; sq=np.zeros_like(x)
for c in range(C):
    lo=max(0,c-1); hi=min(C-1,c+2); sq[:,c]=(x[:,lo:hi+1]**2).sum(1)
y=x/(2.0+1e-2/4*sq)**0.5
print(d,'fusor==np',np.allclose(f,y,1e-4,1e-5),'onnxref==np',np.allclose(z,y,1e-4,1e-5))
sq=np.zeros_like(x)
for c in range(C):
    lo=max(0,c-2); hi=min(C-1,c+1); sq[:,c]=(x[:,lo:hi+1]**2).sum(1)
y2=x/(2.0+1e-2/4*sq)**0.5; print(' fusor==alt(2 before,1 after)',np.allclose(f,y2,1e-4,1e-5))
for d,ax in (('add6_bcast_axis',1),('mul6_bcast_axis',1)):
    a=ld(f'models/{d}/inputs/input_0.pb'); b=ld(f'models/{d}/inputs/input_1.pb'); f=ld(f'out/{d}/ref/output_0.pb')
    bb=b.reshape(b.shape+(1,)*(4-ax-b.ndim)); y=a+bb if 'add' in d else a*bb
    print(d,np.allclose(f,y))
d='sub6_bcast_axis0'; I,m=init(d); a=ld(f'models/{d}/inputs/input_0.pb'); f=ld(f'out/{d}/ref/output_0.pb'); print(d,np.allclose(f,a-I['b'][:,None,None]))
d='split1_input'; x=ld(f'models/{d}/inputs/input_0.pb'); f=ld(f'out/{d}/ref/output_1.pb'); print(d,np.allclose(f,x[:,3:]))
