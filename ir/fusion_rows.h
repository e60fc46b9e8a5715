// Internal to ir/: the fusion pass's last steps. Output fusion and the dead-kernel sweep
// (ir/fusion_output.cpp); a lookup's kernel merged into its first reader, small contractions
// moved into the row kernel that is their only reader (ir/fusion_rows.cpp). Each rewrites `ks`
// (the pass's kernels in execution order) in place; the bool ones return true when some kernel
// changed, and the caller then drops the kernels left without readers.
#pragma once
#include <cstddef>
#include <vector>

#include "ir/kernel_spec.h"

namespace fusor::fusion_detail {

// Output fusion: a matmul / conv kernel whose output (an intermediate) is read only by one loop
// kernel over its space (or a permutation of it: the reader is re-expressed over the product's
// space) becomes that kernel's accumulator; the contraction's own kernel is left without
// outputs for drop_dead_kernels.
void fuse_outputs(std::vector<KernelSpec>& ks, const std::vector<Buffer>& bufs);
// Drops the non-opaque kernels whose outputs nothing reads and that store no graph output,
// until none is left; kernel_value (parallel to ks) loses the same entries.
void drop_dead_kernels(std::vector<KernelSpec>& ks, std::vector<int>& kernel_value, const std::vector<Buffer>& bufs);
// The one kernel other than ks[ci] that reads buffer b; -1 when none or several do.
int sole_reader(const std::vector<KernelSpec>& ks, size_t ci, int b);
// k takes over producer ck's work: ck's fused ops and nodes come first in k's lists.
void prepend_ops(KernelSpec& k, const KernelSpec& ck);
// Multi-output fusion of a lookup: a loop kernel with a gathered load (a stored embedding sum)
// merges into the first kernel that reads its output, over the same space through the same
// view; that kernel computes the value, stores it for the later readers and uses it itself.
bool merge_lookups_into_first_reader(std::vector<KernelSpec>& ks, const std::vector<Buffer>& bufs);
// KernelSpec::dots: a bare small matmul whose only reader is one row kernel over its space
// (kMaxPrologueMacs, kMaxInlineDotK; by default only where that row reads the operands coalesced).
bool inline_small_contractions(std::vector<KernelSpec>& ks, const std::vector<Buffer>& bufs);
// KernelSpec::row_product: a bare small matmul whose A is one row kernel's element output read
// by nothing else (kMaxRowProductK, kMaxPrologueMacs; FusionOptions::row_products).
bool fuse_row_products(std::vector<KernelSpec>& ks, const std::vector<Buffer>& bufs, const FusionOptions& o);

}  // namespace fusor::fusion_detail
