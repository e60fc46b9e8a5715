import numpy as np, onnx, os
from onnx import helper as H, TensorProto as T, numpy_helper as nh
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_lib
inf=np.inf; nan=np.nan
rs=np.random.RandomState(2)
def special(shape):
    x = rs.randn(*shape).astype(np.float32); f=x.reshape(-1)
    for i,v in enumerate([inf,-inf,nan,-0.0,0.0,1e-40,-1e-40,3e38,-3e38,65504,1e-8]):
        if i*5 < f.size: f[i*5]=v
    return x
def case(name, nodes, feeds, outs, inits=(), opset=18, otypes=None):
    case_lib.case('/tmp/sv3', name, nodes, feeds, outs, inits, opset, otypes)
N=H.make_node
x=special((4,32))
case("ln_special",[N("LayerNormalization",["x","s","b"],["y"],axis=-1)],{"x":x},["y"],[("s",np.ones(32,np.float32)),("b",np.zeros(32,np.float32))])
case("softmax_nanrow",[N("Softmax",["x"],["y"],axis=-1)],{"x":x},["y"])
case("rms",[N("RMSNormalization",["x","s"],["y"],axis=-1)],{"x":x},["y"],[("s",np.ones(32,np.float32))],opset=23)
xi=special((2,8,4,4))
case("groupnorm",[N("GroupNormalization",["x","s","b"],["y"],num_groups=4)],{"x":xi},["y"],[("s",np.ones(8,np.float32)),("b",np.zeros(8,np.float32))],opset=21)
case("bn_var0_eps0",[N("BatchNormalization",["x","s","b","m","v"],["y"],epsilon=0.0)],{"x":xi},["y"],[("s",np.ones(8,np.float32)),("b",np.zeros(8,np.float32)),("m",np.zeros(8,np.float32)),("v",np.zeros(8,np.float32))])
case("clip_nanbounds",[N("Clip",["x","lo","hi"],["y"])],{"x":x},["y"],[("lo",np.array(nan,np.float32)),("hi",np.array(1,np.float32))])
case("pow_special",[N("Pow",["x","e"],["y"])],{"x":x},["y"],[("e",np.array([0.5,-1,2,3,-0.0,inf,-inf,nan]*4,np.float32))])
case("mod_fmod",[N("Mod",["x","d"],["y"],fmod=1)],{"x":x},["y"],[("d",np.array([0.0,-0.0,inf,1.5,-2.0,1e-40,3e38,nan]*4,np.float32))])
case("div_special",[N("Div",["x","d"],["y"])],{"x":x},["y"],[("d",np.array([0.0,-0.0,inf,1.5,-2.0,1e-40,3e38,nan]*4,np.float32))])
case("cumsum_rev_excl",[N("CumSum",["x","ax"],["y"],exclusive=1,reverse=1)],{"x":x},["y"],[("ax",np.array(1,np.int64))])
case("reducemean_inf",[N("ReduceMean",["x","ax"],["y"],keepdims=0)],{"x":x},["y"],[("ax",np.array([1],np.int64))])
case("fused_chain",[N("Mul",["x","x"],["a"]),N("Sub",["a","x"],["b"]),N("Exp",["b"],["c"]),N("ReduceSum",["c","ax"],["y"])],{"x":x},["y"],[("ax",np.array([1],np.int64))])
case("gelu_chain",[N("Gelu",["x"],["a"]),N("Mul",["a","s"],["y"])],{"x":x},["y"],[("s",np.full(32,2,np.float32))],opset=20)
case("attn_allmasked",[N("Attention",["q","k","v","m"],["y"])],{"q":rs.randn(1,2,4,8).astype(np.float32)},["y"],
     [("k",rs.randn(1,2,4,8).astype(np.float32)),("v",rs.randn(1,2,4,8).astype(np.float32)),("m",np.array([[0,-inf,-inf,-inf],[-inf]*4,[0,0,-inf,-inf],[0,0,0,0]],np.float32))],opset=23)
case("sdpa_decomp",[N("MatMul",["q","kt"],["s"]),N("Add",["s","m"],["sm"]),N("Softmax",["sm"],["p"],axis=-1),N("MatMul",["p","v"],["y"])],{"q":rs.randn(2,4,8).astype(np.float32)},["y"],
     [("kt",rs.randn(2,8,4).astype(np.float32)),("v",rs.randn(2,4,8).astype(np.float32)),("m",np.array([[0,-inf,-inf,-inf],[-inf]*4,[0,0,-inf,-inf],[0,0,0,0]],np.float32))])
case("logsoftmax_inf",[N("LogSoftmax",["x"],["y"],axis=-1)],{"x":x},["y"])
case("reducelse",[N("ReduceLogSumExp",["x","ax"],["y"])],{"x":x},["y"],[("ax",np.array([1],np.int64))])
case("argmax_nan",[N("ArgMax",["x"],["y"],axis=1,select_last_index=1)],{"x":x},["y"],otypes=[T.INT64])
case("topk_special",[N("TopK",["x","k"],["v","i"],axis=1,largest=0)],{"x":x},["v","i"],[("k",np.array([7],np.int64))],otypes=[T.FLOAT,T.INT64])
case("maxpool_nan",[N("MaxPool",["x"],["y"],kernel_shape=[3,3],strides=[1,1],pads=[1,1,1,1])],{"x":xi},["y"])
case("lppool",[N("LpPool",["x"],["y"],kernel_shape=[2,2],p=3)],{"x":xi},["y"])
case("instnorm_const",[N("InstanceNormalization",["x","s","b"],["y"])],{"x":np.ones((1,2,3,3),np.float32)},["y"],[("s",np.ones(2,np.float32)),("b",np.zeros(2,np.float32))])
case("hardmax_nan",[N("Hardmax",["x"],["y"],axis=-1)],{"x":x},["y"])
case("cast_f16_chain",[N("Cast",["x"],["h"],to=T.FLOAT16),N("Add",["h","h"],["s"]),N("Cast",["s"],["y"],to=T.FLOAT)],{"x":x},["y"])
case("cast_bf16_chain",[N("Cast",["x"],["h"],to=T.BFLOAT16),N("Mul",["h","h"],["s"]),N("Cast",["s"],["y"],to=T.FLOAT)],{"x":x},["y"])
case("sum_variadic",[N("Sum",["x","x","x"],["y"])],{"x":x},["y"])
case("mean_variadic",[N("Mean",["x","x","x"],["y"])],{"x":x},["y"])
case("min_variadic",[N("Min",["x","x"],["y"])],{"x":x},["y"])
case("erf_special",[N("Erf",["x"],["y"])],{"x":x},["y"])
case("softsign",[N("Softsign",["x"],["y"])],{"x":x},["y"])
case("round_special",[N("Round",["x"],["y"])],{"x":x},["y"])
case("matmul_nan",[N("MatMul",["x","w"],["y"])],{"x":x},["y"],[("w",rs.randn(32,16).astype(np.float32))])
case("gemm_tb_c",[N("Gemm",["x","w","c"],["y"],transB=1,alpha=0.5,beta=2.0)],{"x":x},["y"],[("w",rs.randn(16,32).astype(np.float32)),("c",special((16,)))])
