import numpy as np, onnx, os
from onnx import helper as H, TensorProto as T, numpy_helper as nh
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_lib
rs=np.random.RandomState(5)
def case(name, nodes, feeds, outs, inits=(), opset=18, ot=None):
    case_lib.case('/tmp/sv5', name, nodes, feeds, outs, inits, opset, ot)
N=H.make_node
def sp(shape, big):
    x=(rs.randn(*shape)*3).astype(np.float32); f=x.reshape(-1)
    for i,v in enumerate([np.inf,-np.inf,np.nan,-0.0,big,-big,6e-8,-6e-8,1e-5,300.0]): f[i*7]=v
    return x
for tt,npd,big,nm in [(T.FLOAT16,np.float16,65504.0,"f16"),(T.BFLOAT16,np.float32,3.3e38,"bf16")]:
    x=sp((4,64),big); xx=x.astype(npd) if npd==np.float16 else x
    for op in ["Exp","Log","Sin","Cos","Tanh","Sigmoid","Erf","Sqrt","Reciprocal","Relu","Softplus","Neg","Abs","Floor","Round"]:
        case(f"{nm}_{op}",[N(op,["x"],["y"])],{"x":(xx,tt)},["y"],ot=[tt])
    case(f"{nm}_gelu",[N("Gelu",["x"],["y"])],{"x":(xx,tt)},["y"],ot=[tt],opset=20)
    case(f"{nm}_softmax",[N("Softmax",["x"],["y"],axis=-1)],{"x":(xx,tt)},["y"],ot=[tt])
    case(f"{nm}_ln",[N("LayerNormalization",["x","s","b"],["y"],axis=-1)],{"x":(xx,tt),"s":(np.ones(64,npd),tt),"b":(np.zeros(64,npd),tt)},["y"],ot=[tt])
    case(f"{nm}_rsum",[N("ReduceSum",["x","ax"],["y"])],{"x":(xx,tt)},["y"],[("ax",np.array([1],np.int64))],ot=[tt])
    case(f"{nm}_rmean",[N("ReduceMean",["x","ax"],["y"])],{"x":(xx,tt)},["y"],[("ax",np.array([1],np.int64))],ot=[tt])
    case(f"{nm}_rmax",[N("ReduceMax",["x","ax"],["y"])],{"x":(xx,tt)},["y"],[("ax",np.array([1],np.int64))],ot=[tt])
    case(f"{nm}_add_mul",[N("Add",["x","x"],["a"]),N("Mul",["a","x"],["y"])],{"x":(xx,tt)},["y"],ot=[tt])
    case(f"{nm}_div",[N("Div",["x","d"],["y"])],{"x":(xx,tt),"d":((rs.randn(4,64)*1e-3).astype(npd),tt)},["y"],ot=[tt])
    case(f"{nm}_matmul",[N("MatMul",["x","w"],["y"])],{"x":(xx,tt),"w":((rs.randn(64,16)).astype(npd),tt)},["y"],ot=[tt])
    case(f"{nm}_cast32",[N("Cast",["x"],["y"],to=T.FLOAT)],{"x":(xx,tt)},["y"],ot=[T.FLOAT])
    f32=sp((4,64),1e6)
    case(f"{nm}_castfrom32",[N("Cast",["x"],["y"],to=tt)],{"x":(f32,T.FLOAT)},["y"],ot=[tt])
    case(f"{nm}_cumsum",[N("CumSum",["x","ax"],["y"])],{"x":(xx,tt)},["y"],[("ax",np.array(1,np.int64))],ot=[tt])
    case(f"{nm}_pow",[N("Pow",["x","e"],["y"])],{"x":(xx,tt),"e":(np.full((4,64),2.5).astype(npd),tt)},["y"],ot=[tt])
