// Memory plan: every non-constant buffer gets an offset in one arena. Lifetimes come from the
// kernel order; freed ranges are reused first-fit, and a loop kernel may write its output in
// place over an input that dies in that kernel when both have the same view.
#include <algorithm>
#include <limits>
#include <map>

#include "ir/kernel_spec.h"

namespace fusor {
namespace {

constexpr int64_t kAlign = 256;  // covers minStorageBufferOffsetAlignment and CUDA's 256-byte alignment
int64_t align_up(int64_t x) {
  if (x > std::numeric_limits<int64_t>::max() - kAlign) throw Error("memory", "a buffer of " + std::to_string(x) + " bytes is too large");
  return (x + kAlign - 1) / kAlign * kAlign;
}

struct Range {
  int64_t off, size;
};

class Arena {
 public:
  int64_t alloc(int64_t size) {
    size = std::max<int64_t>(align_up(size), kAlign);
    for (size_t i = 0; i < free_.size(); ++i) {
      if (free_[i].size < size) continue;
      int64_t off = free_[i].off;
      free_[i].off += size;
      free_[i].size -= size;
      if (free_[i].size == 0) free_.erase(free_.begin() + i);
      return off;
    }
    int64_t off = top_;
    // Grow from a free block that ends at the top.
    if (!free_.empty() && free_.back().off + free_.back().size == top_) {
      off = free_.back().off;
      free_.pop_back();
    }
    if (off > std::numeric_limits<int64_t>::max() - size)
      throw Error("memory", "the plan's buffers need more than 2^63 bytes");
    top_ = off + size;
    return off;
  }
  void release(int64_t off, int64_t size) {
    size = std::max<int64_t>(align_up(size), kAlign);
    free_.push_back({off, size});
    std::sort(free_.begin(), free_.end(), [](const Range& a, const Range& b) { return a.off < b.off; });
    std::vector<Range> merged;
    for (auto& r : free_) {
      if (!merged.empty() && merged.back().off + merged.back().size == r.off) merged.back().size += r.size;
      else merged.push_back(r);
    }
    free_ = merged;
  }
  int64_t top() const { return top_; }

 private:
  std::vector<Range> free_;
  int64_t top_ = 0;
};

}  // namespace

void plan_memory(Plan& p) {
  const int nk = static_cast<int>(p.kernels.size());
  std::vector<int> first(p.buffers.size(), nk), last(p.buffers.size(), -1);
  for (int k = 0; k < nk; ++k) {
    for (int b : p.kernels[k].output_buffers()) first[b] = std::min(first[b], k), last[b] = std::max(last[b], k);
    for (int b : p.kernels[k].input_buffers()) first[b] = std::min(first[b], k), last[b] = std::max(last[b], k);
  }
  for (size_t b = 0; b < p.buffers.size(); ++b) {
    auto role = p.buffers[b].role;
    if (role == Buffer::Role::input) first[b] = -1;                       // written by the host before kernel 0
    if (role == Buffer::Role::output || role == Buffer::Role::input) last[b] = nk;  // read back after the last kernel
  }
  p.naive_bytes = 0;
  for (auto& b : p.buffers)
    if (b.role != Buffer::Role::constant && __builtin_add_overflow(p.naive_bytes, align_up(b.nbytes()), &p.naive_bytes))
      p.naive_bytes = std::numeric_limits<int64_t>::max();  // a report only; the arena check below errors

  Arena arena;
  auto place = [&](int b) { p.buffers[b].offset = arena.alloc(p.buffers[b].nbytes()); };
  for (size_t b = 0; b < p.buffers.size(); ++b)
    if (p.buffers[b].role == Buffer::Role::input) place(static_cast<int>(b));
  for (int k = 0; k < nk; ++k) {
    const KernelSpec& ks = p.kernels[k];
    for (int b : ks.output_buffers()) {
      if (first[b] != k || p.buffers[b].role == Buffer::Role::constant || p.buffers[b].offset >= 0) continue;
      // In place: a loop kernel's single contiguous output over an input read with the same
      // view that dies here (each element is read before it is overwritten, by the same thread).
      // Same element size and the whole donor read: equal byte counts alone let a Cast of half
      // a float16 buffer to float32 write element i over the halves the threads after it read.
      int donor = -1;
      const auto same_layout = [&](int d) {
        return dtype_size(p.buffers[d].dtype) == dtype_size(p.buffers[b].dtype) && shape_numel(p.buffers[d].shape) == shape_numel(ks.space) &&
               shape_numel(p.buffers[b].shape) == shape_numel(ks.space);
      };
      if (ks.kind == FusionKind::loop && ks.outputs.size() == 1 && ks.outputs[0].view.is_contiguous())
        for (auto& l : ks.loads)
          if (last[l.buffer] == k && p.buffers[l.buffer].role == Buffer::Role::intermediate && !l.gathered() &&
              l.view.is_contiguous() && l.view.shape == ks.space && same_layout(l.buffer))
            donor = l.buffer;
      for (auto& l : ks.loads)
        if (l.buffer == donor && (l.gathered() || !(l.view.is_contiguous() && l.view.shape == ks.space))) donor = -1;
      if (donor >= 0) {
        p.buffers[b].offset = p.buffers[donor].offset;
        last[donor] = -2;  // handed over: never released separately
      } else {
        place(b);
      }
    }
    for (int b : ks.input_buffers())
      if (last[b] == k && p.buffers[b].role == Buffer::Role::intermediate && p.buffers[b].offset >= 0)
        arena.release(p.buffers[b].offset, p.buffers[b].nbytes());
    for (int b : ks.output_buffers())
      if (last[b] == k && p.buffers[b].role == Buffer::Role::intermediate && p.buffers[b].offset >= 0)
        arena.release(p.buffers[b].offset, p.buffers[b].nbytes());
  }
  for (auto& b : p.buffers)
    if (b.role != Buffer::Role::constant && b.offset < 0) b.offset = arena.alloc(b.nbytes());
  p.arena_bytes = arena.top();
}

}  // namespace fusor
