import numpy as np, onnx, os
from onnx import helper as H, TensorProto as T, numpy_helper as nh
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_lib
rs=np.random.RandomState(3)
def case(name, nodes, feeds, outs, inits=(), opset=18, ot=None):
    case_lib.case('/tmp/sv4', name, nodes, feeds, outs, inits, opset, ot)
N=H.make_node
for dt,tt in [(np.int8,T.INT8),(np.int16,T.INT16),(np.int32,T.INT32),(np.int64,T.INT64),(np.uint8,T.UINT8),(np.uint16,T.UINT16),(np.uint32,T.UINT32),(np.uint64,T.UINT64)]:
    info=np.iinfo(dt); nm=np.dtype(dt).name
    a=np.array([info.min,info.max,0,1,-1 if info.min<0 else 2,7,-7 if info.min<0 else 9,info.min+1,5,3,100 % (info.max+1) if info.max<100 else 100,info.max-1],dtype=dt)
    b=np.array([-1 if info.min<0 else 1,0,0,3,2,0,2,-1 if info.min<0 else 7,-3 if info.min<0 else 4,info.max,info.min if info.min<0 else 1,1],dtype=dt)
    for op,kw in [("Div",{}),("Mod",{}),("Mod",{"fmod":1}),("Mul",{}),("Add",{}),("Sub",{}),("Max",{}),("Min",{})]:
        case(f"{op}{kw.get('fmod','')}_{nm}",[N(op,["a","b"],["y"],**kw)],{"a":a,"b":b},["y"],ot=[tt])
    for op in ["Abs","Neg","Sign"]:
        if info.min==0 and op=="Neg": continue
        case(f"{op}_{nm}",[N(op,["a"],["y"])],{"a":a},["y"],ot=[tt])
    case(f"ReduceProd_{nm}",[N("ReduceProd",["a"],["y"],keepdims=0)],{"a":a},["y"],ot=[tt])
    case(f"ReduceSum_{nm}",[N("ReduceSum",["a"],["y"],keepdims=0)],{"a":a},["y"],ot=[tt])
    case(f"CumSum_{nm}",[N("CumSum",["a","ax"],["y"])],{"a":a},["y"],[("ax",np.array(0,np.int64))],ot=[tt])
    case(f"Cast2f_{nm}",[N("Cast",["a"],["y"],to=T.FLOAT)],{"a":a},["y"],ot=[T.FLOAT])
    case(f"Cast2f16_{nm}",[N("Cast",["a"],["y"],to=T.FLOAT16)],{"a":a},["y"],ot=[T.FLOAT16])
    if nm.startswith("u"):
        s=np.array([0,1,7,8,31,32,63,64,3,2,1,0],dtype=dt)
        case(f"ShiftL_{nm}",[N("BitShift",["a","s"],["y"],direction="LEFT")],{"a":a,"s":s},["y"],ot=[tt])
        case(f"ShiftR_{nm}",[N("BitShift",["a","s"],["y"],direction="RIGHT")],{"a":a,"s":s},["y"],ot=[tt])
    case(f"MatMul_{nm}",[N("MatMul",["a2","b2"],["y"])],{"a2":a.reshape(3,4),"b2":b.reshape(4,3)},["y"],ot=[tt])
    case(f"ArgMax_{nm}",[N("ArgMax",["a"],["y"])],{"a":a},["y"],ot=[T.INT64])
    case(f"Pow_{nm}",[N("Pow",["a","b"],["y"])],{"a":a,"b":np.abs(b.astype(np.int64)).astype(dt) % 5},["y"],ot=[tt])
fx=np.array([np.nan,np.inf,-np.inf,3e9,-3e9,1e20,-1e20,255.5,-0.5,127.9,-128.9,65535.9],np.float32)
for dt,tt in [(np.int8,T.INT8),(np.int32,T.INT32),(np.int64,T.INT64),(np.uint8,T.UINT8),(np.uint32,T.UINT32),(np.uint64,T.UINT64)]:
    case(f"CastF2_{np.dtype(dt).name}",[N("Cast",["x"],["y"],to=tt)],{"x":fx},["y"],ot=[tt])
