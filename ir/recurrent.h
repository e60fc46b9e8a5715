// Attributes of the ONNX recurrent ops (RNN-7/14, GRU-7/14, LSTM-7/14), resolved once and shared
// by the reference (ir/ops/recurrent.cpp) and the decomposition into primitives
// (ir/decompose_recurrent.cpp), so both read the spec the same way.
//
// Shapes (operator spec "LSTM"; G gates: RNN 1, GRU 3 (z r h), LSTM 4 (i o f c); D directions):
//   X [S, B, I] (layout 1: [B, S, I]); W [D, G*H, I]; R [D, G*H, H]; B [D, 2*G*H] (Wb then Rb);
//   sequence_lens [B] (integers, each in [0, S]); initial_h / initial_c [D, B, H] (layout 1:
//   [B, D, H]); P (LSTM) [D, 3*H] (i o f).
//   Outputs: Y [S, D, B, H] (layout 1: [B, S, D, H]), zero past each batch row's length;
//   Y_h, Y_c [D, B, H] (layout 1: [B, D, H]): the state after each row's last step.
#pragma once
#include <string>
#include <vector>

#include "ir/graph.h"

namespace fusor {

// One activation function of the recurrent ops' list (names compared case-insensitively):
// Relu, Tanh, Sigmoid, Affine (alpha*x+beta), LeakyRelu, ThresholdedRelu, ScaledTanh
// (alpha*tanh(beta*x)), HardSigmoid, Elu, Softsign, Softplus. alpha/beta come from
// activation_alpha/activation_beta, consumed in list order by the functions that take them
// (onnxruntime's rule), defaults as the ONNX operators of the same name.
struct RnnActivation {
  std::string name;  // lower case
  double alpha = 0, beta = 0;
};
double rnn_activate(const RnnActivation& a, double x);

struct RnnAttrs {
  enum Kind { rnn, gru, lstm } kind = rnn;
  int gates = 1;            // G
  int num_dir = 1;          // D
  bool reverse = false;     // direction == "reverse" (bidirectional: direction 1 runs reversed)
  int64_t hidden = 0;       // H
  int layout = 0;
  bool has_clip = false;
  double clip = 0;
  bool linear_before_reset = false;  // GRU
  bool input_forget = false;         // LSTM: f = 1 - i
  std::vector<RnnActivation> act;    // per direction, acts_per_dir() each: RNN f; GRU f g; LSTM f g h
  int acts_per_dir() const { return kind == lstm ? 3 : kind == gru ? 2 : 1; }
  const RnnActivation& activation(int dir, int k) const { return act[static_cast<size_t>(dir * acts_per_dir() + k)]; }
};

// Reads the node's attributes; hidden_from_r is R's last dim (used when hidden_size is absent).
// Throws Error("shape", node label + reason) for an unknown direction or activation, a wrong
// activation count, or a hidden_size that contradicts R.
RnnAttrs rnn_attrs(const Node& n, int64_t hidden_from_r);

// Decomposition (ir/decompose_recurrent.cpp, called by decompose()): appends to `out` the
// primitive nodes that compute n (shapes inferred) and returns true; false keeps the op (not a
// recurrent op, a dtype other than f32/f64, or more than 128 steps to unroll). New values and
// constants are added to g; n's output values are written by the last nodes.
bool decompose_recurrent(Graph& g, const Node& n, std::vector<Node>& out);
// Why decompose_recurrent keeps recurrent op n whole ("float16 recurrences stay whole; ...",
// "200 steps x 2 direction(s) are past the 128 steps unrolled"), "" when it unrolls it or n is
// no RNN / GRU / LSTM. A GPU backend names it when the kept op goes to the host. Throws
// Error("shape") as rnn_attrs does.
std::string recurrent_kept_reason(const Graph& g, const Node& n);

}  // namespace fusor
