import numpy as np, onnx
from onnx import numpy_helper as nh
def ld(p):
    t=onnx.TensorProto(); t.ParseFromString(open(p,'rb').read()); return nh.to_array(t)
x=ld('models/rs11_tf_half_pixel_for_nn_nearest_ceil_sz0/inputs/input_0.pb')
f=ld('out/rs11_tf_half_pixel_for_nn_nearest_ceil_sz0/ref/output_0.pb')
import math
def idx(n_out,n_in,scale):
    return [min(max(math.ceil((j+0.5)/scale),0),n_in-1) for j in range(n_out)]
ri=idx(9,6,1.5); ci=idx(6,8,0.75); print(ri,ci)
y=x[:,:,ri][:,:,:,ci]
z=np.load('models/rs11_tf_half_pixel_for_nn_nearest_ceil_sz0/expected.npz')['arr_0']
print('fusor==np',np.allclose(f,y),'ort==np',np.allclose(z,y))
# tf crop and resize sizes
d='rs11_tf_crop_and_resize_nearest_round_prefer_floor_sz1'
x=ld(f'models/{d}/inputs/input_0.pb'); f=ld(f'out/{d}/ref/output_0.pb'); z=np.load(f'models/{d}/expected.npz')['arr_0']
bad=np.argwhere(~np.isclose(f,z)); print(bad[:10]); print(f.shape)
