"""Session 42: many short rows (ReduceSum [600000, 5], LayerNormalization [200000, 8], Softmax
[300000, 6]) for the thread-per-row A/B: python3 short_rows.py OUTDIR"""
import sys
import numpy as np, onnx, os
from onnx import helper as h, TensorProto as T, numpy_helper as nh
for name, shape, ops in [("short_sum",[600000,5],"ReduceSum"),("short_ln",[200000,8],"LayerNormalization"),("short_softmax",[300000,6],"Softmax")]:
    if ops=="ReduceSum":
        nodes=[h.make_node("ReduceSum",["x","ax"],["y"],keepdims=0)]; inits=[nh.from_array(np.array([1],dtype=np.int64),"ax")]
    elif ops=="LayerNormalization":
        nodes=[h.make_node("LayerNormalization",["x","sc","b"],["y"],axis=-1)]; inits=[nh.from_array(np.ones(shape[1],np.float32),"sc"),nh.from_array(np.zeros(shape[1],np.float32),"b")]
    else:
        nodes=[h.make_node("Softmax",["x"],["y"],axis=-1)]; inits=[]
    g=h.make_graph(nodes,"g",[h.make_tensor_value_info("x",T.FLOAT,shape)],[h.make_tensor_value_info("y",T.FLOAT,None)],inits)
    m=h.make_model(g,opset_imports=[h.make_opsetid("",18)]); d=os.path.join(sys.argv[1],name); os.makedirs(d,exist_ok=True); onnx.save(m,d+"/model.onnx")
