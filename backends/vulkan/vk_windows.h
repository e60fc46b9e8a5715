// Values larger than the device's maxStorageBufferRange (128 MiB on lavapipe and many
// non-NVIDIA GPUs): a storage-buffer descriptor cannot cover them, so a kernel that touches
// one is split into pieces (several dispatches), each binding only the window of every buffer
// that its part of the iteration space touches.
//
// How a kernel is split: its space is cut into equal boxes along non-reduced axes (a matmul's
// space is [batch..., M, N]: a too-large weight is split along N, a too-large activation along
// M), the number of pieces per axis doubling on the axis that shrinks the largest window most,
// until every window fits. Each piece is the kernel over its box with every view rebased to
// its buffer's window (element `first` of the buffer is index 0 of the binding), so equal
// boxes generate identical sources and share one pipeline. Contractions read their weight
// through the view: a [K, N] row-major weight has no N-window smaller than itself, so the
// backend uploads such a constant transposed (vk_executable.cpp, once, instead of the
// original) before splitting.
//
// Banked bindings: a kernel that cannot be split but reads its buffers element by element
// through the dialect (opaque kernels over whole buffers: Gather, Concat, pooling...;
// index-checking kernels) binds a too-wide buffer it only reads in banks, consecutive
// descriptors of at most maxStorageBufferRange over the same memory, and reads element i from
// bank i / (bank size) (vk_dialect.h VulkanDialect::Bank): an embedding table larger than the
// limit is gathered from, not refused.
//
// Convolutions, a too-wide buffer such a kernel writes, and windows that stay too large even
// at one element per axis throw Error("vulkan") naming the kernel, the buffer, its size and
// the limit.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/kernel_spec.h"

namespace fusor::vk {

// Elements [first, first + count) of a plan buffer that one binding covers.
struct Window {
  int64_t first = 0, count = 0;
};

// One dispatch of a split kernel.
struct KernelPiece {
  KernelSpec spec;             // the kernel over its box, views rebased to the windows (same name)
  std::vector<Window> windows; // per slot, in kernel_bindings(spec) order
};

// Bytes a descriptor over `w` of buffer `b` spans (alignment slack included), as the backend
// would bind it.
using WindowBytes = std::function<uint64_t(int buffer, const Window& w)>;

// Pieces of kernel k (of plan p) whose every binding spans at most max_range bytes, or an empty
// vector when the whole kernel already fits (bind whole buffers, as always). Throws Error as
// described above; `device` names the device in messages.
std::vector<KernelPiece> split_into_windows(const KernelSpec& k, const Plan& p, uint64_t max_range,
                                            const WindowBytes& bytes, const std::string& device);

// Kernel k over its whole space with every binding narrowed to the window of its buffer that k
// touches, views rebased as a piece's (above). Writers of disjoint parts of one buffer (the
// inputs of a fused Concat) then bind disjoint ranges, so the recorder's hazard test puts no
// barrier between them, and equal kernels at different offsets print one source (one
// pipeline). Each window starts at align(buffer, first) <= first, the element the binding can
// start at (minStorageBufferOffsetAlignment), so the offset left inside it stays in the views,
// which the dialect may push as constants, instead of an alignment slack printed into the
// source. std::nullopt where every window is the whole buffer already, or where k reads a
// quantized weight (its scales are indexed from offsets into the whole weight).
using AlignFirst = std::function<int64_t(int buffer, int64_t first)>;
std::optional<KernelPiece> narrowed(const KernelSpec& k, const Plan& p, const AlignFirst& align);

// Whether kernel k may bind its too-wide read-only buffers in banks (see above).
bool bankable(const KernelSpec& k, const Plan& p);

// The elements of buffer b that kernel k touches, as one window (views, matmul operands; whole
// buffer for conv/opaque accesses). count == 0 when k does not touch b.
Window touched_window(const KernelSpec& k, const Plan& p, int b);

}  // namespace fusor::vk
