"""The benchmark workloads of docs/benchmarks.md as ONNX graphs and torch modules, shared by
bench/side_by_side.py (which runs them on the GPU machine), bench/gemv_sweep.py and
bench/iree_peer.py (which compiles the same ONNX graphs for IREE on a machine without torch).

The ONNX builders need only numpy and onnx; the torch modules import torch when called.
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

W1_N = 1 << 26            # W1: elements of the input vector (256 MiB of fp32)
W1_KS = (1, 4, 8, 16)     # W1: chain lengths of a full run (--quick: 1 and 8)
W1_KS_QUICK = (1, 8)


def chain_onnx(n, k, name):
    """W1: k element-wise steps cycling x*1.0001, x+0.5, tanh(x), relu(x)-0.25 on x: float[n] -> y."""
    nodes, inits = [], []
    cur = "x"
    def const(nm, v):
        inits.append(numpy_helper.from_array(np.array(v, dtype=np.float32), nm))
        return nm
    c_mul, c_add, c_sub = const("c_mul", 1.0001), const("c_add", 0.5), const("c_sub", 0.25)
    for i in range(k):
        out = f"t{i}" if i < k - 1 else "y"
        step = i % 4
        if step == 0: nodes.append(helper.make_node("Mul", [cur, c_mul], [out]))
        elif step == 1: nodes.append(helper.make_node("Add", [cur, c_add], [out]))
        elif step == 2: nodes.append(helper.make_node("Tanh", [cur], [out]))
        else:
            nodes.append(helper.make_node("Relu", [cur], [f"r{i}"]))
            nodes.append(helper.make_node("Sub", [f"r{i}", c_sub], [out]))
        cur = out
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def chain_torch(k):
    """W1 in torch: the same chain as chain_onnx(n, k, ...)."""
    import torch
    def f(x):
        for i in range(k):
            s = i % 4
            x = x * 1.0001 if s == 0 else x + 0.5 if s == 1 else torch.tanh(x) if s == 2 else torch.relu(x) - 0.25
        return x
    return f


def rows_onnx(op, rows, cols, name):
    """W2: Softmax or LayerNormalization (gamma 1, beta 0) over the last axis of x: float[rows, cols]."""
    inits, ins = [], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, cols])]
    if op == "Softmax":
        nodes = [helper.make_node("Softmax", ["x"], ["y"], axis=-1)]
    else:
        inits += [numpy_helper.from_array(np.ones(cols, np.float32), "g"), numpy_helper.from_array(np.zeros(cols, np.float32), "b")]
        nodes = [helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1, epsilon=1e-5)]
    g = helper.make_graph(nodes, name, ins, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, cols])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def tiny_chain_onnx(N, name):
    """W3: N dependent tiny kernels (1024 floats); run unfused so each op is one launch."""
    nodes = []
    cur = "x"
    for i in range(N):
        out = f"t{i}" if i < N - 1 else "y"
        nodes.append(helper.make_node("Tanh" if i % 2 else "Relu", [cur], [out]))
        cur = out
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1024])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1024])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def mlp_model():
    """W4: the MLP block 1024 -> 4096 -> 1024 (GELU, residual, LayerNorm) with torch's default
    random init (draws from torch's CPU generator), as an eval-mode torch module on the CPU."""
    import torch

    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = torch.nn.Linear(1024, 4096), torch.nn.Linear(4096, 1024)
            self.ln = torch.nn.LayerNorm(1024)

        def forward(self, x):
            return self.ln(x + self.fc2(torch.nn.functional.gelu(self.fc1(x))))

    return MLP().eval()


def gpt2_model():
    """W4: a 2-layer GPT-2 (768 wide, 12 heads, vocabulary 50257, random init) taking input_ids
    int64[1, seq] and returning the last hidden state float[1, seq, 768] (eval, CPU)."""
    import torch
    from transformers import GPT2Config, GPT2Model
    cfg = GPT2Config(n_layer=2, n_embd=768, n_head=12, n_positions=128, vocab_size=50257, attn_pdrop=0, resid_pdrop=0, embd_pdrop=0)
    m = GPT2Model(cfg).eval()
    class Wrap(torch.nn.Module):
        def __init__(self, m): super().__init__(); self.m = m
        def forward(self, ids): return self.m(input_ids=ids, use_cache=False).last_hidden_state
    return Wrap(m).eval()
