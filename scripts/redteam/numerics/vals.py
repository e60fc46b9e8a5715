import sys, math, numpy as np
import os; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import *
rng = np.random.default_rng(1234)
FD = {'f16': np.float16, 'bf16': BF16, 'f32': np.float32, 'f64': np.float64}
ID = {'i8': np.int8, 'u8': np.uint8, 'i16': np.int16, 'u16': np.uint16, 'i32': np.int32, 'u32': np.uint32, 'i64': np.int64, 'u64': np.uint64}
def fspecials(dt):
    dt = np.dtype(dt)
    mx = {np.dtype(np.float16): 65504., np.dtype(BF16): 3.3895313892515355e38, np.dtype(np.float32): 3.4028234663852886e38, np.dtype(np.float64): 1.7976931348623157e308}[dt]
    tiny = {np.dtype(np.float16): 2.**-24, np.dtype(BF16): 2.**-133, np.dtype(np.float32): 2.**-149, np.dtype(np.float64): 5e-324}[dt]
    mn = {np.dtype(np.float16): 2.**-14, np.dtype(BF16): 2.**-126, np.dtype(np.float32): 2.**-126, np.dtype(np.float64): 2.**-1022}[dt]
    v = [np.nan, np.inf, -np.inf, -0.0, 0.0, mx, -mx, mn, tiny, -tiny, 3*tiny, mn/2, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.5, -1.5, 0.1, 1e-3, 100.0, -100.0, 11.0, 88.0, -88.0, 20.0, -20.0]
    return np.array(v, dtype=np.float64).astype(dt)
def frand(dt, n, lo=-4, hi=4):
    x = rng.uniform(lo, hi, n)
    x[x == 0] = 0.25
    return x.astype(dt)
def fvec(dt, n=64):
    return np.concatenate([fspecials(dt), frand(dt, n)])

