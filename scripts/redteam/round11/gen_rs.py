"""Resize-11 odd forms: roi given but ignored, resizing N/C, tf_half_pixel_for_nn ceil on 3-D."""
import os, sys, numpy as np
from onnx import helper as oh, numpy_helper as nh, TensorProto as TP
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib11 import save_case
exec(''.join(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'gen_old.py')).readlines()[:18]))
x = R(2, 3, 4, 5)
roi = np.array([0.1, 0.2, 0.3, 0.4, 0.9, 0.8, 0.7, 0.6], np.float32)
for ctm in ('half_pixel', 'asymmetric', 'align_corners'):
    save_case(f'rsx_roi_ignored_{ctm}', mk([oh.make_node('Resize', ['x', 'roi', 's'], ['y'], mode='linear', coordinate_transformation_mode=ctm)], [vi('x', F, x.shape)], [vi('y')], [c('roi', roi), c('s', np.array([1, 1, 2, 1.5], np.float32))], opset=11), {'x': x})
for mode in ('nearest', 'linear'):
    save_case(f'rsx_channels_{mode}', mk([oh.make_node('Resize', ['x', 'roi', 's', 'sz'], ['y'], mode=mode)], [vi('x', F, x.shape)], [vi('y')], [c('roi', np.array([], np.float32)), c('s', np.array([], np.float32)), c('sz', np.array([3, 5, 4, 5], np.int64))], opset=11), {'x': x})
for nm in ('ceil', 'round_prefer_ceil', 'round_prefer_floor', 'floor'):
    save_case(f'rsx_tfnn_{nm}_3d', mk([oh.make_node('Resize', ['x', 'roi', 's'], ['y'], mode='nearest', coordinate_transformation_mode='tf_half_pixel_for_nn', nearest_mode=nm)], [vi('x', F, [2, 3, 4])], [vi('y')], [c('roi', np.array([], np.float32)), c('s', np.array([1, 1, 1.5], np.float32))], opset=11), {'x': R(2, 3, 4)})
    save_case(f'rsx_halfpixel_{nm}_scale1', mk([oh.make_node('Resize', ['x', 'roi', 's'], ['y'], mode='nearest', coordinate_transformation_mode='pytorch_half_pixel', nearest_mode=nm)], [vi('x', F, [2, 3, 4])], [vi('y')], [c('roi', np.array([], np.float32)), c('s', np.array([1, 1, 0.5], np.float32))], opset=11), {'x': R(2, 3, 4)})
