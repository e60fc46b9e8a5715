import numpy as np, onnx, os
from onnx import helper as H, TensorProto as T, numpy_helper as nh
rs=np.random.RandomState(0)
mags=[1,3,10,100,1e3,1e4,1e5,1e6,1e8,1e12,1e20,1e30,3e38]
x=np.concatenate([rs.uniform(-m,m,2000) for m in mags]).astype(np.float32)
for op in ["Sin","Cos","Tan","Exp","Log","Tanh","Sigmoid","Erf","Atan","Sinh","Cosh","Asinh","Softplus","Sqrt","Reciprocal"]:
    xx = np.abs(x) if op in ("Log","Sqrt") else (x/1e36 if op in ("Exp","Sinh","Cosh") else x)
    if op in ("Exp","Sinh","Cosh"): xx=np.concatenate([rs.uniform(-m,m,2000) for m in [1,10,50,88,100]]).astype(np.float32)
    g=H.make_graph([H.make_node(op,["x"],["y"])],"g",[H.make_tensor_value_info("x",T.FLOAT,[xx.size])],[H.make_tensor_value_info("y",T.FLOAT,None)])
    m=H.make_model(g,opset_imports=[H.make_opsetid("",17)]); m.ir_version=8
    d=f"/tmp/trig/{op}"; os.makedirs(d+"/in",exist_ok=True); onnx.save(m,d+"/model.onnx")
    np.save(d+"/in/input_0.npy", xx.astype(np.float32))
