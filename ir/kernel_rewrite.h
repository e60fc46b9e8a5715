// KernelSpec-level rewrites the fusion pass (ir/fusion.cpp) applies after kernels exist; they
// need no graph or Fuser state, only the kernel. Internal to ir/.
#pragma once
#include <optional>
#include <vector>

#include "ir/kernel_spec.h"

namespace fusor {

// The view over `space` (a reduction's input space) of a per-row output: strides 0 on the
// reduced `axes` and on size-1 dims, row-major over the kept dims.
StridedView row_view(const Shape& space, const std::vector<int>& axes);

// Re-sorts k's reductions so each comes after those its body reads, then its expression DAG so
// every operand precedes its user; drops unreferenced nodes and loads.
void topo_order(KernelSpec& k);

// Input fusion's merge: copies reduction kernel rk's loads, expressions and reductions into k
// (sharing loads and reductions k already has) and replaces k's load li, which reads rk's
// output over k's space, with a red_ref to it; k becomes an input fusion over rk's axes.
void absorb_reduction(KernelSpec& k, const KernelSpec& rk, int li);

// Sets k.online_max / k.online_sum (kernel_spec.h) when k's reductions contain the softmax pair:
// a Max r0 (no mean, float dtype) over node x and a later Sum (no mean, same dtype) whose body is
// Exp(Sub(x, red_ref r0)), the Sub and Exp in r0's dtype (Softmax and LogSoftmax decompose to
// it, ir/decompose.cpp emit_softmax; fused pre-ops are inside x). Clears them otherwise. Call it
// after the last rewrite of k's reductions (topo_order renumbers them). FUSOR_ONLINE_SOFTMAX=0
// leaves every kernel unmarked (the two-pass statistics), to measure one against the other.
// Leaves k unmarked when its rows are register-resident (k.row_registers > 0): such a row is
// read from memory once whichever way its statistics are taken, so the exact two-pass form is used.
void mark_online_softmax(KernelSpec& k);

// Sets k.row_registers / k.register_loads (kernel_spec.h) for a row kernel whose loads read by
// more than one pass (a reduction's body, the element-wise outputs) that walk the row fit in
// kRowRegisterBudget values per thread; clears them otherwise. Also sets k.register_values (the
// row-walking values a later pass would compute again) where loads and values together fit.
// FUSOR_ROW_REGISTERS=0 leaves every kernel streaming (to measure one against the other).
constexpr int64_t kRowRegisterBudget = 32;
void mark_row_registers(KernelSpec& k);

// When every load of buffer b in k reads it as a pure axis permutation of `space` (contiguous,
// offset 0: a Transpose of a contraction's output), for each dim j of `space` the dim of
// k.space that walks it (-1 for size-1 dims); nullopt otherwise. Used by output fusion.
std::optional<std::vector<int>> permuted_reader(const KernelSpec& k, int b, const Shape& space);

// v (a view over a reader's space) as a view over `space`, reader dim inv[j] walking dim j.
StridedView over_space(const StridedView& v, const std::vector<int>& inv, const Shape& space);

}  // namespace fusor
