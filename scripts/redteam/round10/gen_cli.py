"""CLI robustness: test_data_set protobufs in odd but valid encodings and malformed ones."""
import os, sys, shutil, numpy as np, onnx
from onnx import helper as oh, numpy_helper as nh, TensorProto as TP
R = '/tmp/rt10/cli'
shutil.rmtree(R, ignore_errors=True); os.makedirs(R)
def mk(name, elem, shape, op='Neg', n_in=1):
    d = os.path.join(R, name); os.makedirs(os.path.join(d, 'test_data_set_0'))
    ins = [oh.make_tensor_value_info(f'x{i}', elem, shape) for i in range(n_in)]
    nodes = [oh.make_node(op, [f'x{i}' for i in range(n_in)], ['y'])]
    g = oh.make_graph(nodes, 'g', ins, [oh.make_tensor_value_info('y', elem, None)])
    onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid('', 18)], ir_version=9), os.path.join(d, 'model.onnx'))
    return os.path.join(d, 'test_data_set_0')
def w(ts, fn, t):
    with open(os.path.join(ts, fn), 'wb') as f: f.write(t if isinstance(t, bytes) else t.SerializeToString())
x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
good = nh.from_array(x, 'x0'); out = nh.from_array(-x, 'y')
# 1. valid encodings: float_data instead of raw_data
ts = mk('enc_float_data', TP.FLOAT, [2, 3]); t = oh.make_tensor('x0', TP.FLOAT, [2, 3], x.ravel().tolist()); w(ts, 'input_0.pb', t); w(ts, 'output_0.pb', out)
# fp16 through int32_data bit patterns (the spec's encoding)
h = x.astype(np.float16)
ts = mk('enc_fp16_int32data', TP.FLOAT16, [2, 3]); t = TP.TensorProto() if False else onnx.TensorProto(); t.name = 'x0'; t.data_type = TP.FLOAT16; t.dims.extend([2, 3]); t.int32_data.extend(h.view(np.uint16).astype(np.int32).ravel().tolist()); w(ts, 'input_0.pb', t)
o = onnx.TensorProto(); o.name = 'y'; o.data_type = TP.FLOAT16; o.dims.extend([2, 3]); o.int32_data.extend((-h).view(np.uint16).astype(np.int32).ravel().tolist()); w(ts, 'output_0.pb', o)
# bf16 through int32_data
import ml_dtypes
b = x.astype(ml_dtypes.bfloat16)
ts = mk('enc_bf16_int32data', TP.BFLOAT16, [2, 3]); t = onnx.TensorProto(); t.name = 'x0'; t.data_type = TP.BFLOAT16; t.dims.extend([2, 3]); t.int32_data.extend(b.view(np.uint16).astype(np.int32).ravel().tolist()); w(ts, 'input_0.pb', t)
o = onnx.TensorProto(); o.name = 'y'; o.data_type = TP.BFLOAT16; o.dims.extend([2, 3]); o.int32_data.extend((-b).view(np.uint16).astype(np.int32).ravel().tolist()); w(ts, 'output_0.pb', o)
# bool in int32_data with value 2 / -1
ts = mk('enc_bool_int32data_2', TP.BOOL, [4], op='Not'); t = onnx.TensorProto(); t.name = 'x0'; t.data_type = TP.BOOL; t.dims.extend([4]); t.int32_data.extend([0, 1, 2, -1]); w(ts, 'input_0.pb', t)
# uint8/int8 via int32_data out of range (300, -200)
ts = mk('enc_uint8_int32data_300', TP.UINT8, [3], op='Identity'); t = onnx.TensorProto(); t.name = 'x0'; t.data_type = TP.UINT8; t.dims.extend([3]); t.int32_data.extend([1, 300, -200]); w(ts, 'input_0.pb', t)
# uint64 via uint64_data, uint32 via uint64_data
ts = mk('enc_uint32_uint64data', TP.UINT32, [2], op='Identity'); t = onnx.TensorProto(); t.name = 'x0'; t.data_type = TP.UINT32; t.dims.extend([2]); t.uint64_data.extend([5, 2**32 + 7]); w(ts, 'input_0.pb', t)
# double via double_data
ts = mk('enc_double', TP.DOUBLE, [2, 3]); t = oh.make_tensor('x0', TP.DOUBLE, [2, 3], x.astype(np.float64).ravel().tolist()); w(ts, 'input_0.pb', t); w(ts, 'output_0.pb', nh.from_array(-x.astype(np.float64), 'y'))
# float_data count mismatch (5 for 6), too many (7)
for n in (5, 7, 0):
    ts = mk(f'bad_float_data_{n}', TP.FLOAT, [2, 3]); t = onnx.TensorProto(); t.name = 'x0'; t.data_type = TP.FLOAT; t.dims.extend([2, 3]); t.float_data.extend(list(range(n))); w(ts, 'input_0.pb', t)
# raw_data 1 byte too long / short; both raw_data and float_data
for delta in (1, -1, 4, -4):
    ts = mk(f'bad_raw_{delta}', TP.FLOAT, [2, 3]); t = onnx.TensorProto(); t.name = 'x0'; t.data_type = TP.FLOAT; t.dims.extend([2, 3]); t.raw_data = x.tobytes() + b'\0' * delta if delta > 0 else x.tobytes()[:delta]; w(ts, 'input_0.pb', t)
ts = mk('bad_raw_and_float', TP.FLOAT, [2, 3]); t = nh.from_array(x, 'x0'); t.float_data.extend([9] * 6); w(ts, 'input_0.pb', t)
# external data in an input .pb
for loc in ('/etc/passwd', 'data.bin', '../../../etc/hostname'):
    ts = mk(f'bad_ext_{len(loc)}', TP.FLOAT, [2, 3]); t = onnx.TensorProto(); t.name = 'x0'; t.data_type = TP.FLOAT; t.dims.extend([2, 3]); t.data_location = TP.EXTERNAL
    e = t.external_data.add(); e.key = 'location'; e.value = loc; w(ts, 'input_0.pb', t)
    open(os.path.join(ts, 'data.bin'), 'wb').write(x.tobytes())
# segment field
ts = mk('bad_segment', TP.FLOAT, [2, 3]); t = nh.from_array(x, 'x0'); t.segment.begin = 0; t.segment.end = 3; w(ts, 'input_0.pb', t)
# string dtype input
ts = mk('bad_string', TP.FLOAT, [2, 3]); t = oh.make_tensor('x0', TP.STRING, [2], [b'a', b'b']); w(ts, 'input_0.pb', t)
# name mismatch: the input .pb names another input / the output
ts = mk('name_other', TP.FLOAT, [2, 3], op='Sub', n_in=2); w(ts, 'input_0.pb', nh.from_array(x, 'x1')); w(ts, 'input_1.pb', nh.from_array(2 * x, 'x0')); w(ts, 'output_0.pb', nh.from_array(x - 2 * x, 'y'))
ts = mk('name_unknown', TP.FLOAT, [2, 3]); w(ts, 'input_0.pb', nh.from_array(x, 'nosuch')); w(ts, 'output_0.pb', out)
ts = mk('name_empty', TP.FLOAT, [2, 3]); w(ts, 'input_0.pb', nh.from_array(x, '')); w(ts, 'output_0.pb', out)
# dims negative / huge with no data / rank 0 for rank 2
for nm, dims in (('neg', [-2, -3]), ('huge', [2**40, 2**40]), ('zero', [0, 3]), ('r0', [])):
    ts = mk(f'bad_dims_{nm}', TP.FLOAT, [2, 3]); t = onnx.TensorProto(); t.name = 'x0'; t.data_type = TP.FLOAT; t.dims.extend(dims); t.raw_data = x.tobytes(); w(ts, 'input_0.pb', t)
# the wrong dtype codes: 0, 99, 16 (bf16 into f32)
for code in (0, 99, 16, 8):
    ts = mk(f'bad_dtype_{code}', TP.FLOAT, [2, 3]); t = onnx.TensorProto(); t.name = 'x0'; t.data_type = code; t.dims.extend([2, 3]); t.raw_data = x.tobytes()[:12] if code == 16 else x.tobytes(); w(ts, 'input_0.pb', t)
# output_0.pb malformed / truncated / wrong dtype / a sequence proto
for nm, data in (('trunc', out.SerializeToString()[:7]), ('garbage', b'\xff' * 40), ('empty', b''), ('dtype', nh.from_array(-x.astype(np.float64), 'y').SerializeToString()),
                 ('shape', nh.from_array(-x.T.copy(), 'y').SerializeToString()), ('seq', onnx.helper.make_sequence('y', onnx.SequenceProto.TENSOR, [out]).SerializeToString())):
    ts = mk(f'bad_out_{nm}', TP.FLOAT, [2, 3]); w(ts, 'input_0.pb', good); w(ts, 'output_0.pb', data)
# input as a SequenceProto / an optional proto
ts = mk('bad_in_seq', TP.FLOAT, [2, 3]); w(ts, 'input_0.pb', onnx.helper.make_sequence('x0', onnx.SequenceProto.TENSOR, [good]).SerializeToString()); w(ts, 'output_0.pb', out)
# a very deep nesting protobuf (recursion) as input: TensorProto has no recursion; use a ModelProto bytes as input
ts = mk('bad_in_modelproto', TP.FLOAT, [2, 3]); w(ts, 'input_0.pb', open(os.path.join(R, 'enc_float_data', 'model.onnx'), 'rb').read())
# input with a 2^31-long varint length prefix (lying length)
ts = mk('bad_in_liarlen', TP.FLOAT, [2, 3]); w(ts, 'input_0.pb', b'\x4a\xff\xff\xff\xff\x07' + x.tobytes())  # field 9 (raw_data), length 2^31-1
# dynamic model for --shape / --dim tests
d = os.path.join(R, 'dyn'); os.makedirs(d)
g = oh.make_graph([oh.make_node('ReduceSum', ['x'], ['y'], keepdims=0), oh.make_node('Shape', ['x'], ['s'])], 'g',
                  [oh.make_tensor_value_info('x', TP.FLOAT, ['N', 'M'])], [oh.make_tensor_value_info('y', TP.FLOAT, None), oh.make_tensor_value_info('s', TP.INT64, None)])
onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid('', 18)], ir_version=9), os.path.join(d, 'model.onnx'))
print('ok')
