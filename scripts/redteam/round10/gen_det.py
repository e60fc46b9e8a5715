"""Detection-head ops against onnxruntime: NonMaxSuppression (center_point_box, thresholds, many
classes / batches, ties, max 0), RoiAlign (avg/max, half_pixel / output_half_pixel, sampling 0),
TopK (largest 0, sorted, ties, k = n), Gather / GatherElements / GatherND with negative indices."""
import os, sys, numpy as np, onnx
from onnx import helper as oh, numpy_helper as nh, TensorProto as TP
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib10 import save_case
rng = np.random.default_rng(7)
F = TP.FLOAT; I = TP.INT64
def vi(n, t=F, s=None): return oh.make_tensor_value_info(n, t, s)
def mk(nodes, ins, outs, inits=(), opset=19): return oh.make_model(oh.make_graph(nodes, 'g', ins, outs, list(inits)), opset_imports=[oh.make_opsetid('', opset)], ir_version=9)
def boxes(B, N, center=False, ties=False):
    xy = rng.uniform(0, 20, (B, N, 2)); wh = rng.uniform(1, 8, (B, N, 2))
    if ties: xy = np.round(xy / 4) * 4; wh = np.round(wh / 2) * 2 + 2
    b = np.concatenate([xy, wh], -1) if center else np.concatenate([xy, xy + wh], -1)
    if not center: b[:, ::3] = b[:, ::3][..., [2, 3, 0, 1]]  # some flipped corners
    return b.astype(np.float32)
k = 0
for B, C, N in ((1, 1, 10), (2, 3, 33), (3, 2, 7), (1, 4, 100)):
    for cpb in (0, 1):
        for maxo, iou, st in ((3, 0.5, None), (0, 0.5, None), (100, 0.3, 0.4), (5, 0.0, 0.2), (2, 1.0, None), (None, 0.5, None), (-1, 0.5, None)):
            for ties in (False, True):
                sc = rng.uniform(0, 1, (B, C, N)).astype(np.float32)
                if ties: sc = np.round(sc * 4) / 4
                ins = ['b', 's']; inits = []
                if maxo is not None: inits.append(nh.from_array(np.array([maxo], np.int64), 'mo')); ins.append('mo')
                else: ins.append('')
                inits.append(nh.from_array(np.array([iou], np.float32), 'iou')); ins.append('iou')
                if st is not None: inits.append(nh.from_array(np.array([st], np.float32), 'st')); ins.append('st')
                m = mk([oh.make_node('NonMaxSuppression', ins, ['y'], center_point_box=cpb)], [vi('b', F, [B, N, 4]), vi('s', F, [B, C, N])], [vi('y', I)], inits)
                save_case(f'det_nms_{B}_{C}_{N}_c{cpb}_m{maxo}_i{iou}_s{st}_t{int(ties)}', m, {'b': boxes(B, N, cpb, ties), 's': sc}); k += 1
for mode in ('avg', 'max'):
    for ctm in ('half_pixel', 'output_half_pixel'):
        for sr in (0, 1, 2):
            for ss in (1.0, 0.25, 0.5):
                for oh_, ow in ((3, 3), (2, 5)):
                    x = rng.uniform(-1, 1, (2, 3, 11, 13)).astype(np.float32)
                    rois = np.array([[0, 0, 10, 10], [2.3, 1.7, 30.1, 17.9], [-3, -2, 5, 4], [40, 40, 60, 70], [5, 5, 5.2, 5.1], [12, 3, 1, 9]], np.float32)
                    bi = np.array([0, 1, 1, 0, 1, 0], np.int64)
                    m = mk([oh.make_node('RoiAlign', ['x', 'r', 'i'], ['y'], mode=mode, coordinate_transformation_mode=ctm, sampling_ratio=sr, spatial_scale=ss, output_height=oh_, output_width=ow)],
                           [vi('x', F, [2, 3, 11, 13]), vi('r', F, [6, 4]), vi('i', I, [6])], [vi('y')])
                    save_case(f'det_roi_{mode}_{ctm}_{sr}_{ss}_{oh_}x{ow}', m, {'x': x, 'r': rois, 'i': bi}); k += 1
for largest in (0, 1):
    for srt in (0, 1):
        for kk in (1, 5, 17):
            for ties in (False, True):
                for ax in (-1, 0):
                    x = rng.uniform(-1, 1, (17, 17)).astype(np.float32)
                    if ties: x = np.round(x * 3) / 3
                    m = mk([oh.make_node('TopK', ['x', 'k'], ['v', 'i'], axis=ax, largest=largest, sorted=srt)], [vi('x', F, [17, 17])], [vi('v'), vi('i', I)],
                           [nh.from_array(np.array([kk], np.int64), 'k')])
                    save_case(f'det_topk_l{largest}_s{srt}_k{kk}_t{int(ties)}_a{ax}', m, {'x': x}); k += 1
x = rng.uniform(-1, 1, (5, 6, 7)).astype(np.float32)
for ax in (0, 1, -1):
    m = mk([oh.make_node('Gather', ['x', 'i'], ['y'], axis=ax)], [vi('x', F, [5, 6, 7]), vi('i', I, [2, 3])], [vi('y')])
    save_case(f'det_gather_neg_a{ax}', m, {'x': x, 'i': np.array([[-1, 0, -5], [2, -2, 4]], np.int64)}); k += 1
    idx = rng.integers(-x.shape[ax], x.shape[ax], (5, 6, 7)); idx = np.take(idx, np.arange(3), axis=ax)
    shp = list(idx.shape)
    m = mk([oh.make_node('GatherElements', ['x', 'i'], ['y'], axis=ax)], [vi('x', F, [5, 6, 7]), vi('i', I, shp)], [vi('y')])
    save_case(f'det_gatherel_neg_a{ax}', m, {'x': x, 'i': idx}); k += 1
for bd in (0, 1, 2):
    idx = np.stack([rng.integers(-6, 6, (5, 6, 4)), rng.integers(-7, 7, (5, 6, 4))], -1) if bd == 0 else (np.stack([rng.integers(-6, 6, (5, 4)), rng.integers(-7, 7, (5, 4))], -1) if bd == 1 else rng.integers(-7, 7, (5, 6, 3, 1)))
    if bd == 0: idx = np.stack([rng.integers(-5, 5, (4, 3)), rng.integers(-6, 6, (4, 3))], -1)
    m = mk([oh.make_node('GatherND', ['x', 'i'], ['y'], batch_dims=bd)], [vi('x', F, [5, 6, 7]), vi('i', I, list(idx.shape))], [vi('y')])
    save_case(f'det_gathernd_b{bd}', m, {'x': x, 'i': idx.astype(np.int64)}); k += 1
print(k)
