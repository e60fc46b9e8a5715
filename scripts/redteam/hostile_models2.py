# Hostile ONNX models for the red-team round (docs/redteam.md): python3 THIS_FILE [OUT_DIR];
# each model is OUT_DIR/<set>/<name>/model.onnx (+ test_data_set_0 where its values matter).
# Needs the onnx and numpy packages; run them with scripts/redteam/run_all.sh.
import os, sys, numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
OUT = os.path.join(sys.argv[1] if len(sys.argv) > 1 else "/tmp/fusor_redteam", "models2")
os.makedirs(OUT, exist_ok=True)
I64MAX, I64MIN = 2**63-1, -2**63
F = T.FLOAT
def vi(name, et, shape): return h.make_tensor_value_info(name, et, shape)
def c(name, arr): return nh.from_array(np.asarray(arr), name)
def n(op, i, o, **kw): return h.make_node(op, i, o, name=op.lower()+"_node", **kw)
def mk(nodes, inputs, outputs, inits=(), opset=18, ir=8, domains=()):
    g = h.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)] + [h.make_opsetid(d, 1) for d in domains])
    m.ir_version = ir
    return m
def save(name, m, data=None, bytes_=None):
    d = os.path.join(OUT, name); os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "model.onnx"), "wb").write(bytes_ if bytes_ is not None else m.SerializeToString())
    if data is not None:
        td = os.path.join(d, "test_data_set_0"); os.makedirs(td, exist_ok=True)
        for i, (nm, a) in enumerate(data):
            if isinstance(a, bytes): open(os.path.join(td, f"input_{i}.pb"), "wb").write(a); continue
            open(os.path.join(td, f"input_{i}.pb"), "wb").write(nh.from_array(np.asarray(a), nm).SerializeToString())
    return d

x23 = vi("x", F, [2, 3]); y = vi("y", F, None)
save("cycle2", mk([n("Relu", ["b"], ["a"]), h.make_node("Neg", ["a"], ["b"], name="neg")], [x23], [vi("a", F, None)]))
save("self_loop", mk([n("Add", ["x", "a"], ["a"])], [x23], [vi("a", F, None)]))
save("dup_output_names", mk([n("Relu", ["x"], ["y"]), h.make_node("Neg", ["x"], ["y"], name="neg")], [x23], [y]))
save("output_never_produced", mk([n("Relu", ["x"], ["t"])], [x23], [y]))
save("output_is_input", mk([], [x23], [vi("x", F, None)]))
save("output_is_initializer", mk([], [], [vi("w", F, None)], [c("w", np.ones(3, np.float32))]))
save("empty_graph", mk([], [], []))
save("no_outputs", mk([n("Relu", ["x"], ["t"])], [x23], []))
save("input_shadowed_by_init", mk([n("Relu", ["x"], ["y"])], [x23], [y], [c("x", np.full((2, 3), -1, np.float32))], ir=3))
save("input_shadowed_by_init_wrongshape", mk([n("Relu", ["x"], ["y"])], [x23], [y], [c("x", np.full((5,), -1, np.float32))], ir=3))
save("dup_inputs", mk([n("Relu", ["x"], ["y"])], [x23, x23], [y]))
save("dup_initializers", mk([n("Add", ["x", "w"], ["y"])], [x23], [y], [c("w", np.ones(3, np.float32)), c("w", np.ones(5, np.float32))]))
save("node_input_empty_name_required", mk([n("Add", ["x", ""], ["y"])], [x23], [y]))
save("unknown_domain", mk([h.make_node("Relu", ["x"], ["y"], domain="com.evil", name="evil")], [x23], [y], domains=["com.evil"]))
save("unknown_op", mk([h.make_node("FooBar", ["x"], ["y"], name="fb")], [x23], [y]))
save("opset1", mk([n("Relu", ["x"], ["y"])], [x23], [y], opset=1))
save("opset99", mk([n("Relu", ["x"], ["y"])], [x23], [y], opset=99))
save("ir_version_0", mk([n("Relu", ["x"], ["y"])], [x23], [y], ir=0))
save("ir_version_99", mk([n("Relu", ["x"], ["y"])], [x23], [y], ir=99))
save("input_no_type", mk([n("Relu", ["x"], ["y"])], [h.make_value_info("x", onnx.TypeProto())], [y]))
save("input_seq_type", mk([n("Relu", ["x"], ["y"])], [h.make_tensor_sequence_value_info("x", F, [2])], [y]))
save("input_string", mk([n("Identity", ["x"], ["y"])], [vi("x", T.STRING, [2])], [vi("y", T.STRING, None)]))
save("input_undefined_dtype", mk([n("Relu", ["x"], ["y"])], [vi("x", T.UNDEFINED, [2])], [y]))
save("input_dtype_99", mk([n("Relu", ["x"], ["y"])], [vi("x", 99, [2])], [y]))
save("input_float8", mk([n("Identity", ["x"], ["y"])], [vi("x", T.FLOAT8E4M3FN, [2])], [vi("y", T.FLOAT8E4M3FN, None)]))
save("input_int4_add", mk([n("Add", ["x", "x"], ["y"])], [vi("x", T.INT4, [3])], [vi("y", T.INT4, None)]))
save("input_complex", mk([n("Identity", ["x"], ["y"])], [vi("x", T.COMPLEX64, [2])], [vi("y", T.COMPLEX64, None)]))
# initializers
st = h.make_tensor("w", T.STRING, [2], [b"a", b"b"])
save("string_initializer", mk([n("Identity", ["w"], ["y"])], [], [vi("y", T.STRING, None)], [st]))
save("string_initializer_unused", mk([n("Relu", ["x"], ["y"])], [x23], [y], [st]))
bad = onnx.TensorProto(); bad.name = "w"; bad.data_type = F; bad.dims.extend([2, 3]); bad.raw_data = b"\0" * 7
save("raw_data_wrong_size", mk([n("Add", ["x", "w"], ["y"])], [x23], [y], [bad]))
bad2 = onnx.TensorProto(); bad2.name = "w"; bad2.data_type = F; bad2.dims.extend([2, 3]); bad2.float_data.extend([1, 2])
save("float_data_wrong_size", mk([n("Add", ["x", "w"], ["y"])], [x23], [y], [bad2]))
bad3 = onnx.TensorProto(); bad3.name = "w"; bad3.data_type = F; bad3.dims.extend([2**40, 2**40])
save("init_huge_dims_no_data", mk([n("Add", ["x", "w"], ["y"])], [x23], [y], [bad3]))
bad4 = onnx.TensorProto(); bad4.name = "w"; bad4.data_type = F; bad4.dims.extend([-1, 3]); bad4.raw_data = b"\0" * 12
save("init_negative_dim", mk([n("Add", ["x", "w"], ["y"])], [x23], [y], [bad4]))
bad5 = onnx.TensorProto(); bad5.name = "w"; bad5.data_type = 99; bad5.dims.extend([3]); bad5.raw_data = b"\0" * 12
save("init_dtype_99", mk([n("Add", ["x", "w"], ["y"])], [x23], [y], [bad5]))
bad6 = onnx.TensorProto(); bad6.name = "w"; bad6.data_type = T.INT4; bad6.dims.extend([3]); bad6.raw_data = b"\x21"
save("init_int4_short", mk([n("Cast", ["w"], ["y"], to=1)], [], [y], [bad6], opset=21))
bad7 = onnx.TensorProto(); bad7.name = "w"; bad7.data_type = T.FLOAT8E5M2; bad7.dims.extend([3]); bad7.raw_data = b"\x7c\xfc\x7f"
save("init_float8_specials", mk([n("Cast", ["w"], ["y"], to=1)], [], [y], [bad7], opset=21))
bad8 = onnx.TensorProto(); bad8.name = "w"; bad8.data_type = T.INT64; bad8.dims.extend([3]); bad8.int32_data.extend([1,2,3])
save("init_int64_in_int32_data", mk([n("Add", ["x", "w"], ["y"])], [vi("x", T.INT64, [3])], [vi("y", T.INT64, None)], [bad8]))
bad9 = onnx.TensorProto(); bad9.name = "w"; bad9.data_type = T.BOOL; bad9.dims.extend([3]); bad9.raw_data = b"\x05\x00\xff"
save("init_bool_nonbinary", mk([n("Not", ["w"], ["y"])], [], [vi("y", T.BOOL, None)], [bad9]))
# sparse initializer
sp = h.make_sparse_tensor(h.make_tensor("w", F, [2], [5.0, 6.0]), h.make_tensor("wi", T.INT64, [2], [0, 99]), [2, 3])
m = mk([n("Add", ["x", "w"], ["y"])], [x23], [y]); m.graph.sparse_initializer.extend([sp]); save("sparse_initializer_oor", m)
sp = h.make_sparse_tensor(h.make_tensor("w", F, [2], [5.0, 6.0]), h.make_tensor("wi", T.INT64, [2], [0, 4]), [2, 3])
m = mk([n("Add", ["x", "w"], ["y"])], [x23], [y]); m.graph.sparse_initializer.extend([sp]); save("sparse_initializer_ok", m)
# Constant node hostile
save("constant_no_value", mk([n("Constant", [], ["y"])], [], [y]))
save("constant_two_values", mk([n("Constant", [], ["y"], value_float=1.0, value_int=3)], [], [y]))
save("constant_sparse", mk([n("Constant", [], ["y"], sparse_value=h.make_sparse_tensor(h.make_tensor("v", F, [1], [5.0]), h.make_tensor("vi", T.INT64, [1], [7]), [3]))], [], [y]))
save("constant_string", mk([n("Constant", [], ["y"], value_string="hi")], [], [vi("y", T.STRING, None)]))
# truncated / garbage protobuf
good = mk([n("Add", ["x", "w"], ["y"])], [x23], [y], [c("w", np.ones((2, 3), np.float32))]).SerializeToString()
for k in [1, 5, 17, len(good)//2, len(good)-3]:
    save(f"truncated_{k}", None, bytes_=good[:k])
save("garbage", None, bytes_=os.urandom(4096))
save("empty_file", None, bytes_=b"")
# deep chain of 100k nodes
N = 100000
if os.path.exists(OUT + '/chain_100k_add'): N = 0
nodes = [h.make_node("Relu" if i % 2 else "Neg", [f"t{i}" if i else "x"], [f"t{i+1}" if i < N-1 else "y"], name=f"n{i}") for i in range(N)]
0 or N and save("chain_100k", mk(nodes, [x23], [y]))
nodes = [h.make_node("Add", [f"t{i}" if i else "x", "x"], [f"t{i+1}" if i < N-1 else "y"], name=f"n{i}") for i in range(N)]
0 or N and save("chain_100k_add", mk(nodes, [x23], [y]))
# deep nested If 2000 levels
def nested_if(depth):
    leaf = h.make_graph([n("Relu", ["x"], ["r"])], "leaf", [], [vi("r", F, None)])
    g = leaf
    for d in range(depth):
        node = h.make_node("If", ["c"], [f"r"], then_branch=g, else_branch=leaf, name=f"if{d}")
        g = h.make_graph([node], f"g{d}", [], [vi("r", F, None)])
    return g
g = nested_if(20)
m = mk(list(g.node), [x23, vi("c", T.BOOL, [])], [vi("r", F, None)]); save("nested_if_20", m, data=[("x", np.ones((2,3), np.float32)), ("c", np.array(True))])
# external data
def ext(name, location, offset=None, length=None, write=None, extra_files=()):
    t = onnx.TensorProto(); t.name = "w"; t.data_type = F; t.dims.extend([2, 3]); t.data_location = onnx.TensorProto.EXTERNAL
    e = t.external_data.add(); e.key = "location"; e.value = location
    if offset is not None: e = t.external_data.add(); e.key = "offset"; e.value = str(offset)
    if length is not None: e = t.external_data.add(); e.key = "length"; e.value = str(length)
    d = save(name, mk([n("Add", ["x", "w"], ["y"])], [x23], [y], [t]))
    if write: open(os.path.join(d, write), "wb").write(np.arange(6, dtype=np.float32).tobytes())
    return d
open(os.path.join(os.path.dirname(OUT), "outside.bin"), "wb").write(np.arange(6, dtype=np.float32).tobytes())
ext("ext_dotdot", "../../outside.bin")
ext("ext_absolute", os.path.join(os.path.dirname(OUT), "outside.bin"))
ext("ext_abs_etc", "/etc/passwd")
d = ext("ext_symlink", "link.bin")
try: os.symlink(os.path.join(os.path.dirname(OUT), "outside.bin"), os.path.join(d, "link.bin"))
except FileExistsError: pass
ext("ext_offset_beyond", "w.bin", offset=100, length=24, write="w.bin")
ext("ext_len_beyond", "w.bin", offset=0, length=2**40, write="w.bin")
ext("ext_offset_neg", "w.bin", offset=-8, length=24, write="w.bin")
ext("ext_offset_overflow", "w.bin", offset=2**63-8, length=24, write="w.bin")
ext("ext_len_short", "w.bin", offset=0, length=8, write="w.bin")
ext("ext_offset_text", "w.bin", offset="12abc", write="w.bin")
ext("ext_missing", "nothere.bin")
ext("ext_empty_location", "")
ext("ext_dir", ".")
ext("ext_devzero", "/dev/zero")
ext("ext_ok", "w.bin", write="w.bin")
# control flow
body_ok = h.make_graph([h.make_node("Identity", ["cin"], ["cout"], name="id"), h.make_node("Add", ["v", "one"], ["vout"], name="inc")], "body",
    [vi("i", T.INT64, []), vi("cin", T.BOOL, []), vi("v", F, [1])], [vi("cout", T.BOOL, []), vi("vout", F, [1])], [c("one", np.ones(1, np.float32))])
save("loop_trip_2p62", mk([n("Loop", ["M", "cond", "v0"], ["vf"], body=body_ok)], [vi("M", T.INT64, []), vi("cond", T.BOOL, [])], [vi("vf", F, None)], [c("v0", np.zeros(1, np.float32))]),
     data=[("M", np.array(2**62, np.int64)), ("cond", np.array(True))])
save("loop_trip_const_2p62", mk([n("Loop", ["M", "cond", "v0"], ["vf"], body=body_ok)], [], [vi("vf", F, None)], [c("v0", np.zeros(1, np.float32)), c("M", np.array(2**62, np.int64)), c("cond", np.array(True))]))
body_scan = h.make_graph([h.make_node("Identity", ["cin"], ["cout"], name="id"), h.make_node("Add", ["v", "one"], ["vout"], name="inc"), h.make_node("Identity", ["v"], ["s"], name="sc")], "body",
    [vi("i", T.INT64, []), vi("cin", T.BOOL, []), vi("v", F, [1])], [vi("cout", T.BOOL, []), vi("vout", F, [1]), vi("s", F, [1])], [c("one", np.ones(1, np.float32))])
save("loop_scan_out_2p40", mk([n("Loop", ["M", "cond", "v0"], ["vf", "sf"], body=body_scan)], [vi("M", T.INT64, []), vi("cond", T.BOOL, [])], [vi("vf", F, None), vi("sf", F, None)], [c("v0", np.zeros(1, np.float32))]),
     data=[("M", np.array(2**40, np.int64)), ("cond", np.array(True))])
save("loop_no_trip_cond_forever", mk([n("Loop", ["", "cond", "v0"], ["vf"], body=body_ok)], [vi("cond", T.BOOL, [])], [vi("vf", F, None)], [c("v0", np.zeros(1, np.float32))]),
     data=[("cond", np.array(True))])
body_bad = h.make_graph([h.make_node("Add", ["v", "one"], ["vout"], name="inc")], "body",
    [vi("i", T.INT64, []), vi("cin", T.BOOL, []), vi("v", F, [1])], [vi("vout", F, [1])], [c("one", np.ones(1, np.float32))])
save("loop_body_missing_cond_out", mk([n("Loop", ["M", "", "v0"], ["vf"], body=body_bad)], [], [vi("vf", F, None)], [c("v0", np.zeros(1, np.float32)), c("M", np.array(3, np.int64))]))
body_bad2 = h.make_graph([h.make_node("Identity", ["cin"], ["cout"], name="id")], "body",
    [vi("i", T.INT64, []), vi("cin", T.BOOL, [])], [vi("cout", T.BOOL, [])])
save("loop_body_fewer_inputs", mk([n("Loop", ["M", "", "v0"], ["vf"], body=body_bad2)], [], [vi("vf", F, None)], [c("v0", np.zeros(1, np.float32)), c("M", np.array(3, np.int64))]))
body_grow = h.make_graph([h.make_node("Identity", ["cin"], ["cout"], name="id"), h.make_node("Concat", ["v", "v"], ["vout"], axis=0, name="cat")], "body",
    [vi("i", T.INT64, []), vi("cin", T.BOOL, []), vi("v", F, None)], [vi("cout", T.BOOL, []), vi("vout", F, None)])
save("loop_doubling_100", mk([n("Loop", ["M", "", "v0"], ["vf"], body=body_grow)], [], [vi("vf", F, None)], [c("v0", np.zeros(1, np.float32)), c("M", np.array(100, np.int64))]))
save("loop_doubling_runtime", mk([n("Loop", ["M", "", "v0"], ["vf"], body=body_grow)], [vi("M", T.INT64, [])], [vi("vf", F, None)], [c("v0", np.zeros(1, np.float32))]), data=[("M", np.array(100, np.int64))])
then_g = h.make_graph([n("Relu", ["x"], ["r"])], "t", [], [vi("r", F, None)])
else_g = h.make_graph([n("Relu", ["x"], ["r"]), h.make_node("Neg", ["x"], ["r2"], name="ng")], "e", [], [vi("r", F, None), vi("r2", F, None)])
save("if_branch_count_mismatch", mk([n("If", ["c"], ["o"], then_branch=then_g, else_branch=else_g)], [x23, vi("c", T.BOOL, [])], [vi("o", F, None)]), data=[("x", np.ones((2,3), np.float32)), ("c", np.array(False))])
else_g2 = h.make_graph([h.make_node("Cast", ["x"], ["r"], to=7, name="cst")], "e", [], [vi("r", T.INT64, None)])
save("if_branch_dtype_mismatch", mk([n("If", ["c"], ["o"], then_branch=then_g, else_branch=else_g2)], [x23, vi("c", T.BOOL, [])], [vi("o", F, None)]), data=[("x", np.ones((2,3), np.float32)), ("c", np.array(False))])
save("if_cond_not_scalar", mk([n("If", ["c"], ["o"], then_branch=then_g, else_branch=then_g)], [x23, vi("c", T.BOOL, [3])], [vi("o", F, None)]), data=[("x", np.ones((2,3), np.float32)), ("c", np.array([False, True, True]))])
save("if_cond_empty", mk([n("If", ["c"], ["o"], then_branch=then_g, else_branch=then_g)], [x23, vi("c", T.BOOL, [0])], [vi("o", F, None)]), data=[("x", np.ones((2,3), np.float32)), ("c", np.zeros((0,), bool))])
save("if_cond_float", mk([n("If", ["c"], ["o"], then_branch=then_g, else_branch=then_g)], [x23, vi("c", F, [])], [vi("o", F, None)]), data=[("x", np.ones((2,3), np.float32)), ("c", np.array(np.nan, np.float32))])
save("if_no_branches", mk([n("If", ["c"], ["o"])], [x23, vi("c", T.BOOL, [])], [vi("o", F, None)]), data=[("x", np.ones((2,3), np.float32)), ("c", np.array(True))])
sbody = h.make_graph([n("Add", ["s", "e"], ["so"]), h.make_node("Identity", ["so"], ["sc"], name="idd")], "sb", [vi("s", F, [3]), vi("e", F, [3])], [vi("so", F, [3]), vi("sc", F, [3])])
save("scan_axis_oor", mk([n("Scan", ["s0", "xs"], ["sf", "ys"], body=sbody, num_scan_inputs=1, scan_input_axes=[5])], [vi("xs", F, [4, 3])], [vi("sf", F, None), vi("ys", F, None)], [c("s0", np.zeros(3, np.float32))]))
save("scan_num_inputs_wrong", mk([n("Scan", ["s0", "xs"], ["sf", "ys"], body=sbody, num_scan_inputs=5)], [vi("xs", F, [4, 3])], [vi("sf", F, None), vi("ys", F, None)], [c("s0", np.zeros(3, np.float32))]))
save("scan_num_inputs_neg", mk([n("Scan", ["s0", "xs"], ["sf", "ys"], body=sbody, num_scan_inputs=-1)], [vi("xs", F, [4, 3])], [vi("sf", F, None), vi("ys", F, None)], [c("s0", np.zeros(3, np.float32))]))
save("scan_state_shape_mismatch", mk([n("Scan", ["s0", "xs"], ["sf", "ys"], body=sbody, num_scan_inputs=1)], [vi("xs", F, [4, 5])], [vi("sf", F, None), vi("ys", F, None)], [c("s0", np.zeros(3, np.float32))]))
save("scan_output_axis_oor", mk([n("Scan", ["s0", "xs"], ["sf", "ys"], body=sbody, num_scan_inputs=1, scan_output_axes=[9])], [vi("xs", F, [4, 3])], [vi("sf", F, None), vi("ys", F, None)], [c("s0", np.zeros(3, np.float32))]))
# recursion via function? model local functions calling themselves
f = h.make_function("local", "Rec", ["a"], ["b"], [h.make_node("Rec", ["a"], ["b"], domain="local", name="rec")], [h.make_opsetid("", 18), h.make_opsetid("local", 1)])
m = mk([h.make_node("Rec", ["x"], ["y"], domain="local", name="top")], [x23], [y], domains=["local"]); m.functions.extend([f]); save("function_self_recursive", m)
f2 = h.make_function("local", "Twice", ["a"], ["b"], [n("Relu", ["a"], ["t"]), h.make_node("Neg", ["t"], ["b"], name="ng")], [h.make_opsetid("", 18)])
m = mk([h.make_node("Twice", ["x"], ["y"], domain="local", name="top")], [x23], [y], domains=["local"]); m.functions.extend([f2]); save("function_ok", m)
f3 = h.make_function("local", "Bad", ["a"], ["b"], [n("Relu", ["zz"], ["b"])], [h.make_opsetid("", 18)])
m = mk([h.make_node("Bad", ["x"], ["y"], domain="local", name="top")], [x23], [y], domains=["local"]); m.functions.extend([f3]); save("function_undefined_input", m)
# inputs: wrong test data
relu = mk([n("Relu", ["x"], ["y"])], [x23], [y])
save("data_wrong_dtype", relu, data=[("x", np.ones((2, 3), np.int64))])
save("data_wrong_rank", relu, data=[("x", np.ones((6,), np.float32))])
save("data_wrong_shape", relu, data=[("x", np.ones((3, 2), np.float32))])
save("data_too_many", relu, data=[("x", np.ones((2, 3), np.float32)), ("z", np.ones((2, 3), np.float32))])
save("data_nan_inf", relu, data=[("x", np.array([[np.nan, np.inf, -np.inf], [0, -0.0, 1e-45]], np.float32))])
tb = onnx.TensorProto(); tb.name = "x"; tb.data_type = F; tb.dims.extend([2, 3]); tb.raw_data = b"\0" * 5
save("data_raw_wrong_size", relu, data=[("x", tb.SerializeToString())])
tb = onnx.TensorProto(); tb.name = "x"; tb.data_type = F; tb.dims.extend([2**40, 2**40])
save("data_huge_dims", relu, data=[("x", tb.SerializeToString())])
save("data_garbage", relu, data=[("x", os.urandom(100))])
dyn = mk([n("Relu", ["x"], ["y"])], [vi("x", F, ["N", 3])], [y])
save("dynamic_relu", dyn)
save("data_dyn_huge", dyn, data=[("x", np.ones((0, 3), np.float32))])
