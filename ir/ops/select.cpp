// Selection ops (ONNX semantics): TopK (its GPU kernel: codegen_opaque.cpp Emitter::topk).
//
// TopK-1/10/11 (operator spec "TopK"): the k largest (largest=1) or smallest elements along
// `axis` (default -1) and their int64 indices, in sorted order (sorted=0 leaves the order
// unspecified; we sort anyway). Equal values keep the lower index first, as the spec requires.
// k is the attribute before opset 10, input 1 (a one-element int64 tensor) from then on; it
// must be a compile-time constant, as output shapes are static (a Session specialises on it).
// NaN sorts above every number (numpy's ordering, which the ONNX reference uses).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "ir/ops/op_helpers.h"

namespace fusor {
namespace {

using namespace op_helpers;

int64_t topk_k(const Node& n, const Tensor* k_input, const std::string& label) {
  if (n.opset < 10) return n.attr_i("k", -1);
  if (!k_input) throw Error("shape", label + ": input K is required from opset 10");
  if (k_input->numel() != 1) throw Error("shape", label + ": K must hold exactly one element, got " + shape_str(k_input->shape()));
  return k_input->get_int(0);
}

void topk_infer(InferContext& ctx) {
  const Node& n = ctx.node();
  const Shape& x = ctx.shape(0);
  if (x.empty()) ctx.fail("input X must have rank >= 1");
  const int64_t axis = normalize_axis(n.attr_i("axis", -1), static_cast<int64_t>(x.size()), n.label());
  const int64_t k = topk_k(n, n.opset >= 10 ? &ctx.require_constant(1) : nullptr, n.label());
  if (k < 0 || k > x[axis]) ctx.fail("k = " + std::to_string(k) + " is outside [0, " + std::to_string(x[axis]) + "] (axis " + std::to_string(axis) + ")");
  if (ctx.dtype(0) == DType::string) ctx.fail("string tensors are not supported");
  Shape out = x;
  out[axis] = k;
  ctx.set_output(0, ctx.dtype(0), out);
  if (ctx.num_outputs() > 1) ctx.set_output(1, DType::i64, out);
}

// Orders positions of one slice: strict weak order on (value, index), exact per dtype class.
template <class Key>
void select_slice(std::vector<int64_t>& idx, const std::vector<Key>& key, int64_t k, bool largest) {
  auto before = [&](int64_t a, int64_t b) {
    const Key& x = key[a];
    const Key& y = key[b];
    if constexpr (std::is_floating_point_v<Key>) {
      const bool xn = std::isnan(x), yn = std::isnan(y);
      if (xn || yn) {
        if (xn && yn) return a < b;
        return largest ? xn : yn;  // NaN is the largest value
      }
    }
    if (x != y) return largest ? x > y : x < y;
    return a < b;
  };
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), before);
}

void topk_ref(const Node& n, const Ins& in, Outs& out) {
  const Tensor& x = *in[0];
  const int64_t rank = x.rank();
  const int64_t axis = normalize_axis(n.attr_i("axis", -1), rank, n.label());
  const int64_t k = topk_k(n, opt_in(in, 1), n.label());
  const bool largest = n.attr_i("largest", 1) != 0;
  const Shape& s = x.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= s[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner *= s[d];
  const int64_t len = s[axis];
  const size_t esize = dtype_size(x.dtype());
  const bool is_float = dtype_is_float(x.dtype());
  const bool is_u64 = x.dtype() == DType::u64;
  std::byte* values = has_out(out, 0) ? out[0].raw() : nullptr;
  std::vector<int64_t> idx(len);
  std::vector<double> fkey(is_float ? len : 0);
  std::vector<int64_t> ikey(!is_float && !is_u64 ? len : 0);
  std::vector<uint64_t> ukey(is_u64 ? len : 0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * len * inner + i;
      for (int64_t j = 0; j < len; ++j) {
        const int64_t e = base + j * inner;
        if (is_float) fkey[j] = x.get(e);
        else if (is_u64) ukey[j] = static_cast<uint64_t>(x.get_int(e));
        else ikey[j] = x.get_int(e);
      }
      std::iota(idx.begin(), idx.end(), 0);
      if (is_float) select_slice(idx, fkey, k, largest);
      else if (is_u64) select_slice(idx, ukey, k, largest);
      else select_slice(idx, ikey, k, largest);
      const int64_t obase = o * k * inner + i;
      for (int64_t j = 0; j < k; ++j) {
        const int64_t oe = obase + j * inner, ie = base + idx[j] * inner;
        // Values are copied bit for bit (exact for every dtype, NaN payloads included).
        if (values) std::memcpy(values + oe * esize, x.raw() + ie * esize, esize);
        if (has_out(out, 1)) out[1].set_int(oe, idx[j]);
      }
    }
}

}  // namespace

void register_select_ops() { register_op(table_entry("TopK", 1, 2, topk_infer, topk_ref, 2)); }

}  // namespace fusor
