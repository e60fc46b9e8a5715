// Splitting kernels whose buffers exceed maxStorageBufferRange into windowed pieces.
#include "backends/vulkan/vk_windows.h"

#include <algorithm>
#include <limits>

#include "backends/codegen.h"

namespace fusor::vk {

namespace {

// More dispatches than this for one kernel means the split is not helping (e.g. a weight whose
// every N-column spans the whole buffer); refuse instead of recording thousands.
constexpr int64_t kMaxPieces = 4096;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct Box {
  std::vector<int64_t> lo, len;  // per space axis
};

// Extends [mn, mx] by the elements of view v over per-axis ranges [lo, lo + len).
void add_view(const StridedView& v, const std::vector<int64_t>& lo, const std::vector<int64_t>& len, int64_t& mn,
              int64_t& mx) {
  int64_t a = v.offset, b = v.offset;
  for (size_t i = 0; i < v.strides.size(); ++i) {
    if (len[i] <= 0) return;  // empty: touches nothing
    const int64_t s = v.strides[i], first = lo[i] * s, last = (lo[i] + len[i] - 1) * s;
    a += std::min(first, last);
    b += std::max(first, last);
  }
  mn = std::min(mn, a);
  mx = std::max(mx, b);
}

// Every access of buffer b by k restricted to box: the window spanning them.
Window touched(const KernelSpec& k, const Plan& p, int b, const Box& box) {
  int64_t mn = std::numeric_limits<int64_t>::max(), mx = std::numeric_limits<int64_t>::min();
  for (const Load& l : k.loads)
    if (l.buffer == b && !l.gathered()) add_view(l.view, box.lo, box.len, mn, mx);
  for (const KernelOutput& o : k.outputs)
    if (o.buffer == b) add_view(o.view, box.lo, box.len, mn, mx);
  if (k.matmul) {
    const MatMulDesc& m = *k.matmul;
    const size_t nb = k.space.size() - 2;
    if (m.a_buffer == b) {
      std::vector<int64_t> lo(box.lo.begin(), box.lo.begin() + nb), len(box.len.begin(), box.len.begin() + nb);
      lo.insert(lo.end(), {box.lo[nb], 0});
      len.insert(len.end(), {box.len[nb], m.k});
      add_view(m.a, lo, len, mn, mx);
    }
    if (m.b_buffer == b) {
      std::vector<int64_t> lo(box.lo.begin(), box.lo.begin() + nb), len(box.len.begin(), box.len.begin() + nb);
      lo.insert(lo.end(), {0, box.lo[nb + 1]});
      len.insert(len.end(), {m.k, box.len[nb + 1]});
      add_view(m.b, lo, len, mn, mx);
    }
  }
  auto whole = [&](int x) {
    if (x != b) return;
    const int64_t n = shape_numel(p.buffers.at(b).shape);
    if (n > 0) mn = std::min<int64_t>(mn, 0), mx = std::max(mx, n - 1);
  };
  if (k.conv) whole(k.conv->x_buffer), whole(k.conv->w_buffer);
  if (k.matmul && k.matmul->dequant_b) whole(k.matmul->dequant_b->scale_buffer), whole(k.matmul->dequant_b->zp_buffer);
  for (const InlineDot& d : k.dots) whole(d.mm.a_buffer), whole(d.mm.b_buffer);
  if (k.row_product) whole(k.row_product->b_buffer), whole(k.row_product->c_buffer);
  for (int x : k.opaque_inputs) whole(x);
  for (const Load& l : k.loads)  // any row of the indexed axis, chosen at run time
    if (l.gathered()) whole(l.buffer);
  for (int x : k.opaque_outputs) whole(x);
  if (mx < mn) return {0, 0};
  return {mn, mx - mn + 1};
}

Box full_box(const KernelSpec& k) {
  Box b;
  b.lo.assign(k.space.size(), 0);
  b.len = k.space;
  return b;
}

// The boxes of a split with `parts[d]` equal pieces along axis d, row-major.
std::vector<Box> boxes_of(const Shape& space, const std::vector<int64_t>& parts) {
  std::vector<int64_t> chunk(space.size()), count(space.size());
  int64_t total = 1;
  for (size_t d = 0; d < space.size(); ++d) {
    chunk[d] = std::max<int64_t>(1, ceil_div(space[d], parts[d]));
    count[d] = std::max<int64_t>(1, ceil_div(space[d], chunk[d]));
    total *= count[d];
  }
  std::vector<Box> out;
  out.reserve(static_cast<size_t>(total));
  for (int64_t i = 0; i < total; ++i) {
    Box b;
    b.lo.resize(space.size());
    b.len.resize(space.size());
    int64_t r = i;
    for (int d = static_cast<int>(space.size()) - 1; d >= 0; --d) {
      const int64_t c = r % count[d];
      r /= count[d];
      b.lo[d] = c * chunk[d];
      b.len[d] = std::min(chunk[d], space[d] - b.lo[d]);
    }
    out.push_back(std::move(b));
  }
  return out;
}

// How far a split is from fitting: the widest binding over all boxes (with its buffer), then
// the sum over bindings of each one's widest window (so a step that shrinks one operand while
// another, read across the cut, stays as wide still counts as progress: transposed views).
struct Score {
  uint64_t worst = 0, total = 0;
  int buffer = -1;
  bool operator<(const Score& o) const { return worst != o.worst ? worst < o.worst : total < o.total; }
};

Score score_of(const KernelSpec& k, const Plan& p, const std::vector<int>& binds, const std::vector<Box>& boxes,
               const WindowBytes& bytes) {
  Score s;
  for (int b : binds) {
    uint64_t widest = 0;
    for (const Box& box : boxes) {
      const Window win = touched(k, p, b, box);
      if (win.count > 0) widest = std::max(widest, bytes(b, win));
    }
    s.total += widest;
    if (widest > s.worst) s.worst = widest, s.buffer = b;
  }
  return s;
}

void rebase(StridedView& v, const Box& box, int64_t first) {
  for (size_t d = 0; d < v.strides.size(); ++d) v.offset += box.lo[d] * v.strides[d];
  v.offset -= first;
  v.shape = box.len;
}

// Whether every view of k runs over its space (rank and shape; a matmul's operands of its
// rank): the windows rebase only such kernels. A malformed spec is the emitter's to report.
bool views_over_space(const KernelSpec& k) {
  const size_t rank = k.space.size();
  bool ok = !k.matmul || (rank >= 2 && k.matmul->a.strides.size() == rank && k.matmul->b.strides.size() == rank &&
                          k.matmul->a.shape.size() == rank && k.matmul->b.shape.size() == rank);
  for (const Load& l : k.loads) ok = ok && l.view.strides.size() == rank && l.view.shape == k.space;
  for (const KernelOutput& o : k.outputs) ok = ok && o.view.strides.size() == rank && o.view.shape == k.space;
  return ok;
}

KernelPiece make_piece(const KernelSpec& k, const Plan& p, const std::vector<int>& binds, const Box& box,
                       const AlignFirst& align = nullptr) {
  KernelPiece piece;
  piece.spec = k;
  KernelSpec& s = piece.spec;
  std::vector<int64_t> first(p.buffers.size(), 0);
  for (int b : binds) {
    Window w = touched(k, p, b, box);
    if (w.count == 0) w = {0, 1};  // bound but not touched by this piece: any valid window
    if (align) {
      const int64_t f = align(b, w.first);
      w.count += w.first - f;
      w.first = f;
    }
    first[b] = w.first;
    piece.windows.push_back(w);
  }
  s.space = box.len;
  for (Load& l : s.loads) rebase(l.view, box, first[l.buffer]);
  for (KernelOutput& o : s.outputs) rebase(o.view, box, first[o.buffer]);
  if (s.matmul) {
    MatMulDesc& m = *s.matmul;
    const size_t nb = k.space.size() - 2;
    for (size_t i = 0; i < nb; ++i) {
      m.a.offset += box.lo[i] * m.a.strides[i];
      m.b.offset += box.lo[i] * m.b.strides[i];
      m.a.shape[i] = m.b.shape[i] = box.len[i];
    }
    m.a.offset += box.lo[nb] * m.a.strides[nb] - first[m.a_buffer];
    m.b.offset += box.lo[nb + 1] * m.b.strides[nb + 1] - first[m.b_buffer];
    m.a.shape[nb] = m.m = box.len[nb];
    m.b.shape[nb + 1] = m.n = box.len[nb + 1];
  }
  return piece;
}

}  // namespace

Window touched_window(const KernelSpec& k, const Plan& p, int b) { return touched(k, p, b, full_box(k)); }

std::optional<KernelPiece> narrowed(const KernelSpec& k, const Plan& p, const AlignFirst& align) {
  if (k.matmul && k.matmul->dequant_b) return std::nullopt;
  if (!views_over_space(k)) return std::nullopt;
  const std::vector<int> binds = kernel_bindings(k);
  bool narrower = false;
  for (int b : binds) {
    const Window w = touched(k, p, b, full_box(k));
    narrower = narrower || (w.count > 0 && (w.first != 0 || w.count < shape_numel(p.buffers.at(b).shape)));
  }
  if (!narrower) return std::nullopt;
  return make_piece(k, p, binds, full_box(k), align);
}

bool bankable(const KernelSpec& k, const Plan& p) {
  return !k.matmul && !k.conv && (k.kind == FusionKind::opaque || kernel_checks_indices(k, p));
}

std::vector<KernelPiece> split_into_windows(const KernelSpec& k, const Plan& p, uint64_t max_range,
                                            const WindowBytes& bytes, const std::string& device) {
  const std::vector<int> binds = kernel_bindings(k);
  auto too_large = [&](int b, uint64_t n, const std::string& why) {
    const Buffer& buf = p.buffers.at(b);
    return Error("vulkan", "kernel '" + k.name + "': buffer '" + buf.name + "' (" + std::to_string(buf.nbytes()) +
                               " bytes; a binding of " + std::to_string(n) + ") exceeds maxStorageBufferRange (" +
                               std::to_string(max_range) + " bytes) of device '" + device + "', and " + why);
  };
  if (!views_over_space(k)) return {};
  // Fast path (nearly every kernel): whole buffers fit.
  bool fits = true;
  for (int b : binds) fits = fits && bytes(b, Window{0, std::max<int64_t>(shape_numel(p.buffers.at(b).shape), 1)}) <= max_range;
  if (fits) return {};

  // Axes a piece may cut: non-reduced axes of loop, row and matmul kernels. Opaque kernels and
  // convolutions address whole buffers; index-checking kernels report their plan position.
  std::vector<int> axes;
  // A quantized B (dequant_b) indexes its scales by offsets into the whole weight buffer.
  // An inline contraction (KernelSpec::dots) and a row product walk their operands along K (and
  // N) from whole-buffer offsets.
  // A fused Gather's kernel splits like any loop or row kernel (its table is bound whole in
  // every piece, its status word names the kernel), unless the table itself is too wide: then
  // it is read in banks below.
  bool tables_fit = true;
  for (const Load& l : k.loads)
    if (l.gathered())
      tables_fit = tables_fit && bytes(l.buffer, Window{0, std::max<int64_t>(shape_numel(p.buffers.at(l.buffer).shape), 1)}) <= max_range;
  const bool checks = k.kind == FusionKind::opaque ? kernel_checks_indices(k, p) : !tables_fit;
  const bool splittable = k.kind != FusionKind::opaque && !k.conv && !checks &&
                          !(k.matmul && k.matmul->dequant_b) && k.dots.empty() && !k.row_product;
  if (splittable)
    for (int d = 0; d < static_cast<int>(k.space.size()); ++d)
      if (k.space[d] > 1 && std::find(k.reduce_axes.begin(), k.reduce_axes.end(), d) == k.reduce_axes.end())
        axes.push_back(d);

  // Not splittable but bankable: the caller binds the too-wide buffers in banks, unless the
  // kernel writes one of them.
  if (!splittable && bankable(k, p)) {
    const std::vector<int> outs = k.output_buffers();
    for (int b : binds) {
      const uint64_t n = bytes(b, Window{0, std::max<int64_t>(shape_numel(p.buffers.at(b).shape), 1)});
      if (n > max_range && std::find(outs.begin(), outs.end(), b) != outs.end())
        throw too_large(b, n, "a kernel that cannot be split into windows writes it");
    }
    return {};
  }
  std::vector<int64_t> parts(k.space.size(), 1);
  Score worst = score_of(k, p, binds, {full_box(k)}, bytes);
  while (worst.worst > max_range) {
    if (axes.empty()) {
      const char* what = k.kind == FusionKind::opaque ? "an opaque kernel (one whole node) cannot be split into windows"
                         : k.conv                     ? "a convolution kernel cannot be split into windows"
                         : checks                      ? "an index-checking kernel cannot be split into windows"
                                                       : "no axis of the kernel can be split to make it fit";
      throw too_large(worst.buffer, worst.worst, what);
    }
    int best_axis = -1;
    Score best = worst;
    int64_t pieces = 1;
    for (int64_t x : parts) pieces *= x;
    for (int d : axes) {
      if (parts[d] >= k.space[d] || pieces * 2 > kMaxPieces) continue;
      std::vector<int64_t> trial = parts;
      trial[d] = std::min(k.space[d], parts[d] * 2);
      const Score s = score_of(k, p, binds, boxes_of(k.space, trial), bytes);
      if (s < best) best = s, best_axis = d;  // ties keep the outer axis
    }
    if (best_axis < 0)
      throw too_large(worst.buffer, worst.worst,
                      "splitting the kernel into at most " + std::to_string(kMaxPieces) +
                          " dispatches along its output axes does not make every binding fit (e.g. a weight read along "
                          "its slow axis)");
    parts[best_axis] = std::min(k.space[best_axis], parts[best_axis] * 2);
    worst = best;
  }
  std::vector<KernelPiece> out;
  for (const Box& box : boxes_of(k.space, parts)) out.push_back(make_piece(k, p, binds, box));
  return out;
}

}  // namespace fusor::vk
