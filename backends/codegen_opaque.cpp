// Opaque kernels of the shared emitter, part 1: dispatch, copies, views, element-wise ops,
// gathers, concatenation, pooling, reductions, arg-extrema, softmax (one thread per output).
#include "backends/codegen_emitter.h"
#include "ir/recurrent.h"

namespace fusor::codegen_detail {

const Node& Emitter::node() const {
  if (k_.node < 0 || k_.node >= static_cast<int>(p_.graph.nodes.size())) fail("opaque kernel without a node");
  return p_.graph.nodes[k_.node];
}

int Emitter::in_buf(size_t i) const {
  if (i >= k_.opaque_inputs.size() || k_.opaque_inputs[i] < 0) fail("opaque input " + std::to_string(i) + " missing");
  return k_.opaque_inputs[i];
}

std::string Emitter::copy(int a, const std::string& from, int b, const std::string& to) const {
  if (dtype_of(a) == dtype_of(b)) return d_.element(slot(b), to) + " = " + d_.element(slot(a), from) + ";";
  return store_of(b, to, load_of(a, from));
}

std::string Emitter::emit_opaque() const {
  const Node& n = node();
  const int out = k_.opaque_outputs.empty() ? -1 : k_.opaque_outputs[0];
  const std::string& t = n.op_type;
  // A recurrent op the decomposition kept (ir/recurrent.h): why it was kept is the reason to give.
  if (const std::string why = recurrent_kept_reason(p_.graph, n); !why.empty())
    throw Unsupported(d_.name, n.label() + ": not unrolled into kernels (" + why + "), and the op itself has no GPU kernel");
  // A second output only for MaxPool (Indices), Dropout (mask) and TopK (Indices).
  const bool two_outputs = t == "MaxPool" || t == "Dropout" || t == "TopK";
  for (size_t i = 1; i < k_.opaque_outputs.size(); ++i)
    if (k_.opaque_outputs[i] >= 0 && (!two_outputs || i > 1))
      throw Unsupported(d_.name, n.label() + ": op " + n.op_type + " with more than one output");
  const int out2 = k_.opaque_outputs.size() > 1 ? k_.opaque_outputs[1] : -1;
  static const std::set<std::string> copies = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"};
  if (t == "Dropout") {
    // ir/ops/nn.cpp dropout_training: a copy unless training_mode is a true constant and the
    // ratio (input 1, else the attribute, default 0.5) is non-zero; a run-time flag may be random.
    // A run-time flag is fine when the ratio is a constant 0 (then training changes nothing).
    const Tensor* flag = const_of(2);
    const bool maybe_training = n.has_input(2) && (!flag || (flag->numel() != 0 && flag->get(0) != 0.0));
    if (maybe_training) {
      const Tensor* ratio = const_of(1);
      if (n.has_input(1) && !ratio)
        throw Unsupported(d_.name, n.label() + ": training-mode Dropout with a run-time ratio is not supported");
      const double r = ratio && ratio->numel() ? ratio->get(0) : n.attr_f("ratio", 0.5);
      if (r != 0.0)
        throw Unsupported(d_.name,
                          n.label() + ": training-mode Dropout with a non-zero ratio is random; not supported");
    }
  }
  // Kernels below that carry data values through fp32 refuse dtypes fp32 cannot hold exactly
  // (float64, 32/64-bit integers) rather than narrow them (DESIGN.md numerics).
  static const std::set<std::string> through_float = {"MaxPool",
                                                      "AveragePool",
                                                      "LpPool",
                                                      "ConvTranspose",
                                                      "LRN",
                                                      "GlobalAveragePool",
                                                      "GlobalMaxPool",
                                                      "ArgMax",
                                                      "ArgMin",
                                                      "Hardmax",
                                                      "CumSum",
                                                      "ScatterElements",
                                                      "Scatter",
                                                      "ScatterND",
                                                      "MatMul",
                                                      "Softmax",
                                                      "LogSoftmax",
                                                      "Conv",
                                                      "Resize"};
  const auto* def0 = lookup_op(t);
  // float64 pools and prefix sums compute in double; integer prefix sums in their own type
  // (wrapping, as ref): RoBERTa-style position ids are an int32 / int64 CumSum.
  const bool typed_opaque = ((t == "MaxPool" || t == "AveragePool" || t == "CumSum") && dtype_of(in_buf(0)) == DType::f64) ||
                            // Resize sums in double where the dialect has doubles (Emitter::resize)
                            (t == "Resize" && d_.has_f64 && dtype_of(in_buf(0)) == DType::f64) ||
                            (t == "CumSum" && dtype_is_integral(dtype_of(in_buf(0))) && dtype_of(in_buf(0)) != DType::boolean) ||
                            t == "CumProd" ||  // typed throughout (cumsum: the dtype's own products)
                            // a Scatter without a reduction only moves elements (bit copies); integers and
                            // float64 combine in their own type (scatter_combine)
                            (is_scatter_op(t) &&
                             (n.attr_s("reduction", "none") == "none" || dtype_is_int(dtype_of(in_buf(0))) ||
                              dtype_of(in_buf(0)) == DType::f64));
  if ((through_float.count(t) && !typed_opaque) || (def0 && def0->reduce && !typed_reduce(n, *def0->reduce))) {
    auto wide = [](DType d) {
      return d == DType::f64 || d == DType::i32 || d == DType::u32 || d == DType::i64 || d == DType::u64;
    };
    const int data = k_.opaque_inputs.empty() ? -1 : k_.opaque_inputs[0];
    const bool out_is_index = t == "ArgMax" || t == "ArgMin";
    if ((data >= 0 && wide(dtype_of(data))) || (!out_is_index && wide(dtype_of(out))))
      throw Unsupported(d_.name,
                        n.label() + ": " + t + " of " + dtype_name(data >= 0 ? dtype_of(data) : dtype_of(out)) +
                            " data is computed through fp32 by the generated kernel; refused rather than narrowed");
    // 8/16-bit integer sums (MatMul and Conv products, CumSum prefixes) are exact in fp32 only
    // below 2^24: an int8 MatMul with K = 4096 came out wrong on Vulkan. Refused where the
    // largest possible sum reaches it (the host computes them exactly).
    if (data >= 0 && dtype_is_integral(dtype_of(data)) && (t == "MatMul" || t == "Conv" || t == "CumSum")) {
      const DType dt = dtype_of(data);
      const double top = dt == DType::boolean ? 1.0 : std::ldexp(1.0, 8 * static_cast<int>(dtype_size(dt)) - (dtype_is_unsigned(dt) ? 0 : 1));
      const Shape& xs = buffer(data).shape;
      double most = top * static_cast<double>(shape_numel(xs));  // CumSum: a prefix of at most every element
      if (t == "MatMul") most = top * top * static_cast<double>(xs.empty() ? 1 : xs.back());
      if (t == "Conv" && k_.opaque_inputs.size() > 1) {
        const Shape& ws = buffer(k_.opaque_inputs[1]).shape;
        most = top * top * static_cast<double>(ws.empty() || ws[0] == 0 ? 0 : shape_numel(ws) / ws[0]);
      }
      if (most >= 16777216.0)
        throw Unsupported(d_.name, n.label() + ": " + t + " of " + dtype_name(dt) + " sums up to " + std::to_string(static_cast<long long>(most)) +
                                       " in magnitude, past the 2^24 that fp32 holds exactly in the generated kernel; refused rather than rounded");
    }
  }
  std::string body;
  if (t == "Dropout" && out2 >= 0)
    body = "    " + copy(in_buf(0), "fz_o", out, "fz_o") + "\n    " + store_of(out2, "fz_o", "1.0f") + "\n";
  else if (t == "Gather")
    body = gather(n, out);
  else if (t == "Concat")
    body = concat(n, out);
  else if (t == "MaxPool" || t == "AveragePool" || t == "LpPool")
    body = pool(n, out, out2);
  else if (t == "ConvTranspose")
    body = conv_transpose(n, out);
  else if (t == "LRN")
    body = lrn(n, out);
  else if (t == "Slice")
    body = slice(n, out);
  else if (t == "GlobalAveragePool" || t == "GlobalMaxPool")
    body = global_pool(n, out);
  else if (copies.count(t))
    body = "    " + copy(in_buf(0), "fz_o", out, "fz_o") + "\n";
  else if (t == "Transpose")
    body = transpose(n, out);
  else if (t == "Expand")
    body = broadcast_copy(out);
  else if (t == "Cast" && !dtype_is_float(dtype_of(in_buf(0))) && !dtype_is_float(dtype_of(out)))
    body = int_cast(out);
  else if (auto* def = lookup_op(t); def && def->scalar)
    body = elementwise(n, *def->scalar, out);
  else if (def && def->reduce)
    body = reduce(n, *def->reduce, out);
  else if (t == "ArgMax" || t == "ArgMin")
    body = arg_extremum(n, out);
  else if (t == "Hardmax")
    body = hardmax(n, out);
  else if (t == "TopK")
    body = topk(n, out, out2);
  else if (t == "GridSample")
    body = grid_sample(n, out);
  else if (t == "ReverseSequence")
    body = reverse_sequence(n, out);
  else if (t == "CumSum" || t == "CumProd")
    body = cumsum(n, out);
  else if (t == "GatherElements")
    body = gather_elements(n, out);
  else if (t == "GatherND")
    body = gather_nd(n, out);
  else if (t == "Trilu")
    body = trilu(n, out);
  else if (t == "Pad")
    body = pad(n, out);
  else if (t == "Tile" || t == "DepthToSpace" || t == "SpaceToDepth")
    body = walk_copy(n, out);
  else if (t == "EyeLike")
    body = eye_like(n, out);
  else if (t == "OneHot")
    body = one_hot(n, out);
  else if (is_scatter_op(t))
    body = scatter(n, out);
  else if (t == "MatMul")
    body = matmul_direct(n, out);
  else if (t == "Softmax" || t == "LogSoftmax")
    body = softmax(n, out);
  else if (t == "Conv")
    body = conv_direct(n, out);
  else if (t == "Resize")
    body = resize(n, out);
  else
    throw Unsupported(
        d_.name,
        n.label() + ": op " + t +
            " has no GPU kernel (opaque ops supported: Gather, Concat, "
            "MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool, copies/views, element-wise, Reduce*, "
            "ArgMax/ArgMin, Hardmax, TopK, GridSample, ReverseSequence, CumSum, CumProd, GatherElements, GatherND, Trilu, Pad, Tile, DepthToSpace, "
            "SpaceToDepth, EyeLike, OneHot, Scatter*, MatMul, Softmax, LogSoftmax, Conv, LpPool, ConvTranspose, LRN, "
            "Slice, Resize)");
  // After the body: an op without a kernel says so first. ArgMax / ArgMin scan a row in each
  // thread, Hardmax and TopK in a thread per element (len^2 a row): past kMaxScanLaneCost serial
  // iterations a lane (TopK over a 50,257-word vocabulary), and where the host's pass over the
  // input is still shorter, the host is the faster place. Measured on an H100 (docs/benchmarks.md,
  // 2026-12-05): the host 4-6 ns an element with its copies; an ArgMax lane 40 (cuda) to 73
  // (vulkan) ns an iteration, a TopK lane 12-20: the host wins where cost * 8 (ArgMax / ArgMin)
  // or cost * 3 (TopK, Hardmax) passes the elements (TopK 10 x 8,000: 0.39 vs 0.81 ms on the
  // host; 64 x 4,096 lost there, 1.3 vs 0.93 ms). Many rows stay on the GPU (an argmax at each
  // of 1,024 positions of GPT-2 logits, a segmentation map's argmax over 150 channels).
  if (t == "ArgMax" || t == "ArgMin" || t == "Hardmax" || t == "TopK")
    if (const int64_t trips = opaque_loop_trips(n), cost = lane_cost(opaque_total(), trips), per = t == "ArgMax" || t == "ArgMin" ? 8 : 3;
        cost > max_lane_cost(kMaxScanLaneCost) && (cost > (int64_t{1} << 54) || cost * per > shape_numel(buffer(in_buf(0)).shape)))
      throw Unsupported(d_.name, n.label() + ": " + t + " would run " + std::to_string(trips) + " serial iterations in each of " +
                                     std::to_string(opaque_total()) + " threads; the host's loop is faster");
  check_loop_budget(n.label() + ": " + t, ceil_div(opaque_total(), std::max<int64_t>(1, launch_.groups) * kDefaultGroup) *
                                              (opaque_loop_trips(n) + 1));
  return globals_ + d_.kernel_begin(h_) + "  " + grid_loop("fz_o", opaque_total()) + body + "  }\n}\n";
}

int64_t Emitter::opaque_loop_trips(const Node& n) const {
  const std::string& t = n.op_type;
  if (k_.opaque_inputs.empty() || k_.opaque_outputs.empty() || k_.opaque_inputs[0] < 0 || (k_.opaque_outputs[0] < 0 && t != "TopK")) return 0;
  const Shape& xs = buffer(k_.opaque_inputs[0]).shape;
  const int64_t r = static_cast<int64_t>(xs.size());
  auto axis_len = [&](int64_t axis, bool legacy) {
    if (r == 0) return int64_t{1};
    const Around a = around(xs, normalize_axis(axis, r, n.label()));
    return legacy ? a.len * a.inner : a.len;
  };
  auto longest_axis = [&] { return xs.empty() ? int64_t{1} : *std::max_element(xs.begin(), xs.end()); };
  if (const OpDef* def = lookup_op(t); def && def->reduce) {
    const int64_t out = std::max<int64_t>(1, shape_numel(buffer(k_.opaque_outputs[0]).shape));
    return (t == "ReduceLogSumExp" ? 2 : 1) * (shape_numel(xs) / out);
  }
  if (t == "ArgMax" || t == "ArgMin") return axis_len(n.attr_i("axis", 0), false);
  if (t == "TopK") return axis_len(n.attr_i("axis", -1), false);
  if (t == "GridSample") return 1;  // unrolled: taps^r straight-line reads, no loop
  if (t == "Hardmax" || t == "Softmax" || t == "LogSoftmax")
    return 2 * axis_len(n.attr_i("axis", n.opset < 13 ? 1 : -1), n.opset < 13);
  if (t == "CumSum" || t == "CumProd") return longest_axis();  // the axis may be a run-time input
  if (t == "GlobalAveragePool" || t == "GlobalMaxPool") return xs.size() > 2 ? shape_numel(xs) / (xs[0] * xs[1]) : 1;
  if (t == "MatMul") return xs.empty() ? 1 : xs.back();
  if ((t == "Conv" || t == "ConvTranspose") && k_.opaque_inputs.size() > 1 && k_.opaque_inputs[1] >= 0) {
    const Shape& ws = buffer(k_.opaque_inputs[1]).shape;
    if (ws.size() < 2 || ws[0] == 0 || ws[1] == 0) return 0;
    // Each output loops over its group's input channels and every tap: Conv's W is
    // [M, C/group, k...], ConvTranspose's [C, M/group, k...] (C/group channels, not C * M/group).
    return t == "Conv" ? shape_numel(ws) / ws[0] : ws[0] / std::max<int64_t>(1, n.attr_i("group", 1)) * (shape_numel(ws) / (ws[0] * ws[1]));
  }
  if (t == "MaxPool" || t == "AveragePool" || t == "LpPool") {
    int64_t w = 1;
    for (int64_t v : n.attr_ints("kernel_shape")) w *= v;
    return w;
  }
  if (is_scatter_op(t)) return scatter_plan(n).trips;
  if (t == "LRN") return n.attr_i("size", 1);
  return 0;
}

void Emitter::check_loop_budget(const std::string& what, int64_t trips) const {
  if (d_.max_loop_iterations <= 0 || trips <= d_.max_loop_iterations) return;
  throw Unsupported(d_.name, what + " runs " + std::to_string(trips) + " loop iterations per thread, past the " +
                                 std::to_string(d_.max_loop_iterations) +
                                 " this device runs per invocation (llvmpipe's loop limiter would cut it short)");
}

std::string Emitter::out_coords(const Shape& os) const {
  std::string s;
  for (size_t j = 0; j < os.size(); ++j) {
    int64_t inner = 1;
    for (size_t l = j + 1; l < os.size(); ++l) inner *= os[l];
    s += "    fz_idx fz_d" + std::to_string(j) + " = (fz_o / " + lit(inner) + ") % " + lit(os[j]) + ";\n";
  }
  return s;
}

std::string Emitter::coords_offset(const std::vector<int64_t>& st) const {
  std::string s;
  for (size_t j = 0; j < st.size(); ++j)
    if (st[j] != 0) s += (s.empty() ? "" : " + ") + std::string("fz_d") + std::to_string(j) + " * " + lit(st[j]);
  return s.empty() ? lit(0) : s;
}

std::vector<int64_t> Emitter::bcast_strides(int b, const Shape& os) const {
  const Shape& in = buffer(b).shape;
  if (shape_numel(in) == 1 || in.size() > os.size()) return std::vector<int64_t>(os.size(), 0);
  return broadcast_strides(in, os);
}

std::string Emitter::resize(const Node& n, int out) const {
  const int x = in_buf(0);
  if (!dtype_is_float(dtype_of(x)))
    throw Unsupported(d_.name, n.label() + ": Resize of " + dtype_name(dtype_of(x)) + " data");
  auto constant_input = [&](size_t i) -> const Tensor* {
    if (i >= n.inputs.size() || n.inputs[i] < 0) return nullptr;
    if (const Tensor* t = const_of(i)) return t;
    throw Unsupported(d_.name, n.label() + ": Resize input " + std::to_string(i) + " must be a compile-time constant");
  };
  const bool v11 = n.opset >= 11;
  const Shape& xs = buffer(x).shape;
  const bool crop = v11 && n.attr_s("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize";
  if (shape_numel(buffer(out).shape) == 0) return "";  // nothing to write: no tables to build or declare
  const ResizeTable t = resize_table(n, xs, constant_input(v11 ? 2 : 1), v11 ? constant_input(3) : nullptr,
                                     crop ? constant_input(1) : nullptr);
  const Shape& os = buffer(out).shape;
  if (t.out != os) fail("Resize table shape " + shape_str(t.out) + " differs from output " + shape_str(os));
  if (shape_numel(os) == 0) return "";  // nothing to write (and no tables to declare)
  const Shape xst = contiguous_strides(xs);
  // ir/ops/extra.cpp resize_ref's sum, step for step: the axes whose every coordinate reads one
  // tap of weight 1 add only an offset; the others ("active") are walked tap by tap, the last
  // fastest, each term the product 1 * w_a * w_b ... of the active axes' weights times x, added
  // to -0.0 in that order. With doubles (Dialect::has_f64) in double, as ref, so the GPUs give
  // ref's bits (a QuantizeLinear after a Resize turns one ulp at a tie into one integer step,
  // red-team round 58); without, in fp32.
  const bool dbl = d_.has_f64;
  const std::string acc_t = dbl ? local(DType::f64) : local(DType::f32), w_t = dbl ? "double" : "float";
  const auto wlit = [&](double v) { return dbl ? d_.double_literal(v) : fz_float_literal(v); };
  int64_t entries = 0;
  std::string s = out_coords(os), extrapolated, open, close, weight = wlit(1.0), offset;
  for (size_t d = 0; d < xs.size(); ++d) {
    const ResizeAxis& a = t.axes[d];
    const std::string dd = std::to_string(d), c = "fz_d" + dd;
    std::vector<std::string> idx, w, ex;
    for (int64_t i : a.idx) idx.push_back(std::to_string(i));
    if (a.fixed) {
      bool same = true;
      for (int64_t k = 0; same && k < os[d]; ++k) same = a.idx[k] == k;
      if (same) {
        offset += (offset.empty() ? "" : " + ") + c + " * " + lit(xst[d]);
      } else {
        entries += static_cast<int64_t>(idx.size());
        globals_ += d_.const_array("int", "fz_ri" + dd, idx);
        offset += (offset.empty() ? "" : " + ") + d_.cast("fz_idx", "fz_ri" + dd + "[" + c + "]") + " * " + lit(xst[d]);
      }
      continue;
    }
    for (double v : a.w) {
      if (!std::isfinite(v))
        throw Unsupported(d_.name,
                          n.label() + ": Resize weights that are not finite (exclude_outside with every tap outside)");
      w.push_back(wlit(v));
    }
    entries += static_cast<int64_t>(idx.size() + w.size());
    globals_ += d_.const_array("int", "fz_ri" + dd, idx) + d_.const_array(w_t, "fz_rw" + dd, w);
    if (std::any_of(a.extrapolate.begin(), a.extrapolate.end(), [](uint8_t e) { return e != 0; })) {
      for (uint8_t e : a.extrapolate) ex.push_back(e ? "1" : "0");
      entries += static_cast<int64_t>(ex.size());
      globals_ += d_.const_array("int", "fz_rx" + dd, ex);
      extrapolated += (extrapolated.empty() ? "" : " || ") + std::string("fz_rx") + dd + "[" + c + "] != 0";
    }
    const std::string k = "fz_k" + dd, at = c + " * " + lit(a.taps) + " + " + k;
    open += "    for (int " + k + " = 0; " + k + " < " + lit(a.taps) + "; ++" + k + ") {\n";
    close += "    }\n";
    weight += " * fz_rw" + dd + "[" + at + "]";
    offset += (offset.empty() ? "" : " + ") + d_.cast("fz_idx", "fz_ri" + dd + "[" + at + "]") + " * " + lit(xst[d]);
  }
  if (entries > d_.max_table_entries)
    throw Unsupported(d_.name, n.label() + ": Resize tables of " + std::to_string(entries) + " entries are past the " +
                                   std::to_string(d_.max_table_entries) + " a generated kernel on this device holds");
  const std::string at = offset.empty() ? lit(0) : offset;
  const std::string xv = !dbl ? load_of(x, at) : dtype_of(x) == DType::f64 ? typed_load(x, at) : d_.cast("double", load_of(x, at));
  s += "    " + acc_t + "fz_acc = " + wlit(-0.0) + ";\n" + open + "    " + acc_t + "fz_w = " + weight + ";\n    fz_acc = fz_acc + fz_w * " +
       xv + ";\n" + close;
  if (!extrapolated.empty()) s += "    if (" + extrapolated + ") fz_acc = " + wlit(t.extrapolation) + ";\n";
  if (dbl) return s + "    " + typed_store(out, "fz_o", convert_value(d_, DType::f64, dtype_of(out), "fz_acc", true)) + "\n";
  return s + "    " + store_of(out, "fz_o", "fz_acc") + "\n";
}

std::string Emitter::transpose(const Node& n, int out) const {
  const int x = in_buf(0);
  const Shape& xs = buffer(x).shape;
  std::vector<int64_t> perm = n.attr_ints("perm");
  if (perm.empty())
    for (int64_t i = static_cast<int64_t>(xs.size()) - 1; i >= 0; --i) perm.push_back(i);
  const Shape cs = contiguous_strides(xs);
  std::vector<int64_t> st;
  for (auto p : perm) st.push_back(cs.at(static_cast<size_t>(p)));
  return out_coords(buffer(out).shape) + "    " + copy(x, coords_offset(st), out, "fz_o") + "\n";
}

std::string Emitter::broadcast_copy(int out) const {
  const Shape& os = buffer(out).shape;
  return out_coords(os) + "    " + copy(in_buf(0), coords_offset(bcast_strides(in_buf(0), os)), out, "fz_o") + "\n";
}

std::string Emitter::int_cast(int out) const {
  const int x = in_buf(0);
  const std::string v = d_.element(slot(x), "fz_o");
  if (dtype_of(out) == DType::boolean)
    return "    " + d_.element(slot(out), "fz_o") + " = " +
           d_.cast(d_.storage_type(DType::boolean),
                   "(" + v + ") != " + d_.cast(d_.storage_type(dtype_of(x)), "0") + " ? 1 : 0") +
           ";\n";
  return "    " + d_.element(slot(out), "fz_o") + " = " + d_.cast(d_.storage_type(dtype_of(out)), v) + ";\n";
}

std::string Emitter::elementwise(const Node& n, const ScalarRule& rule, int out) const {
  const Shape& os = buffer(out).shape;
  std::vector<DType> in_types;
  for (int b : k_.opaque_inputs) in_types.push_back(b >= 0 ? dtype_of(b) : DType::undefined);
  ExprNode e;
  e.kind = ExprKind::op;
  e.op = lookup_op(n.op_type);
  e.dtype = dtype_of(out);
  e.math = scalar_math_dtype(rule, in_types);
  e.bound = bind_scalar(rule, n, dtype_is_int(e.math));
  std::string s = out_coords(os);
  std::vector<std::string> ops;
  for (size_t i = 0; i < k_.opaque_inputs.size(); ++i) {
    if (k_.opaque_inputs[i] < 0) {
      ops.emplace_back();
      continue;
    }
    const int b = k_.opaque_inputs[i];
    const std::string x = "fz_x" + std::to_string(i);
    s += "    " + local(dtype_of(b)) + x + " = " + typed_load(b, coords_offset(bcast_strides(b, os))) + ";\n";
    ops.push_back(convert_value(d_, dtype_of(b), operand_dtype(e, i, dtype_of(b)), x));
  }
  return s + "    " + typed_store(out, "fz_o", convert_value(d_, e.math, e.dtype, op_expression(e, ops, d_), true)) +
         "\n";
}

std::string Emitter::gather(const Node& n, int out) const {
  const int data = in_buf(0), ind = in_buf(1);
  const Shape& ds = buffer(data).shape;
  const int64_t axis = normalize_axis(n.attr_i("axis", 0), static_cast<int64_t>(ds.size()), n.label());
  const DType it = dtype_of(ind);
  if (it != DType::i64 && it != DType::i32)
    throw Unsupported(d_.name, n.label() + ": Gather indices must be int32/int64");
  int64_t inner = 1;
  for (size_t i = axis + 1; i < ds.size(); ++i) inner *= ds[i];
  const int64_t count = shape_numel(buffer(ind).shape), dim = ds[axis];
  std::string s = "    fz_idx fz_in = fz_o % " + lit(inner) + ";\n";
  s += "    fz_idx fz_m = (fz_o / " + lit(inner) + ") % " + lit(count) + ";\n";
  s += "    fz_idx fz_outer = fz_o / " + lit(inner * count) + ";\n";
  s += "    fz_idx fz_k = " + index_of(ind, "fz_m") + ";\n";
  s += fix_index("fz_k", dim);
  s += "    " + copy(data, "(fz_outer * " + lit(dim) + " + fz_k) * " + lit(inner) + " + fz_in", out, "fz_o") + "\n";
  return s;
}

std::string Emitter::concat(const Node& n, int out) const {
  const Shape& os = buffer(out).shape;
  const int64_t axis = normalize_axis(n.attr_i("axis", 0), static_cast<int64_t>(os.size()), n.label());
  int64_t inner = 1;
  for (size_t i = axis + 1; i < os.size(); ++i) inner *= os[i];
  std::string s = "    fz_idx fz_in = fz_o % " + lit(inner) + ";\n";
  s += "    fz_idx fz_a = (fz_o / " + lit(inner) + ") % " + lit(os[axis]) + ";\n";
  s += "    fz_idx fz_outer = fz_o / " + lit(inner * os[axis]) + ";\n";
  int64_t start = 0;
  std::string els;
  for (size_t i = 0; i < k_.opaque_inputs.size(); ++i) {
    const int b = in_buf(i);
    const int64_t c = buffer(b).shape[axis];
    if (c == 0) continue;
    s += "    " + els + "if (fz_a < " + lit(start + c) + ") " +
         copy(b, "(fz_outer * " + lit(c) + " + fz_a - " + lit(start) + ") * " + lit(inner) + " + fz_in", out, "fz_o") +
         "\n";
    els = "else ";
    start += c;
  }
  return s;
}

std::string Emitter::pool(const Node& n, int out, int arg) const {
  const int x = in_buf(0);
  const Shape& xs = buffer(x).shape;
  const Shape& os = buffer(out).shape;
  const int nd = static_cast<int>(xs.size()) - 2;
  if (nd < 1 || nd > 3 || os.size() != xs.size())
    throw Unsupported(d_.name, n.label() + ": pooling needs 1-3 spatial dims");
  // storage_order only changes the Indices output: 1 numbers the spatial dims column-major.
  const int64_t order = n.attr_i("storage_order", 0);
  if (order != 0 && order != 1) fail(n.label() + ": storage_order must be 0 or 1");
  const bool is_max = n.op_type == "MaxPool", is_lp = n.op_type == "LpPool";
  const double lp = static_cast<double>(n.attr_i("p", 2));
  // LpPool with p > 1 sums scaled powers (below); p <= 1 (p = 1: exact sums of small integers
  // stay exact; p <= 0: pow(0, p) is 1 or inf, which the rescaling would turn into NaN) sums
  // |x|^p as it is.
  const bool lp_scaled = is_lp && lp > 1.0;
  auto kern = n.attr_ints("kernel_shape");
  auto strides = n.attr_ints("strides", std::vector<int64_t>(nd, 1));
  auto dil = n.attr_ints("dilations", std::vector<int64_t>(nd, 1));
  auto pads = n.attr_ints("pads", std::vector<int64_t>(2 * nd, 0));
  if (static_cast<int>(kern.size()) != nd || static_cast<int>(strides.size()) != nd ||
      static_cast<int>(dil.size()) != nd || static_cast<int>(pads.size()) != 2 * nd)
    fail(n.label() + ": malformed pooling attributes");
  const std::string ap = n.attr_s("auto_pad", "NOTSET");
  std::vector<int64_t> pb(nd), pe(nd);
  for (int i = 0; i < nd; ++i) {
    if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      const int64_t dk = (kern[i] - 1) * dil[i] + 1, o = (xs[2 + i] + strides[i] - 1) / strides[i];
      const int64_t total = std::max<int64_t>(0, (o - 1) * strides[i] + dk - xs[2 + i]);
      pb[i] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe[i] = total - pb[i];
    } else if (ap == "VALID") {
      pb[i] = pe[i] = 0;
    } else {
      pb[i] = pads[i];
      pe[i] = pads[nd + i];
    }
  }
  const bool include_pad = n.attr_i("count_include_pad", 0) != 0;
  // float64 data pools in double (MaxPool/AveragePool; LpPool's pow has no GLSL double).
  const bool dbl = dtype_of(x) == DType::f64;
  const std::string vt = dbl ? "double" : "float";
  int64_t in_sz = 1, out_sz = 1;
  for (int i = 0; i < nd; ++i) in_sz *= xs[2 + i], out_sz *= os[2 + i];
  std::string s = "    fz_idx fz_nc = fz_o / " + lit(out_sz) + ";\n";
  std::string cond, padcond, off;
  for (int i = 0; i < nd; ++i) {
    int64_t inner = 1;
    for (int j = i + 1; j < nd; ++j) inner *= os[2 + j];
    const std::string si = std::to_string(i);
    s += "    fz_idx fz_s" + si + " = ((fz_o / " + lit(inner) + ") % " + lit(os[2 + i]) + ") * " + lit(strides[i]) +
         " - " + lit(pb[i]) + ";\n";
  }
  s += "    " + vt + " fz_acc = " + d_.cast(vt, is_max ? "(-fz_inf())" : "0.0f") +
       ";\n    int fz_cnt = 0;\n    int fz_pad = 0;\n";
  if (lp_scaled) s += "    " + vt + " fz_lm = " + d_.cast(vt, "0.0f") + ";\n    bool fz_lnan = false;\n";
  if (arg >= 0) s += "    fz_idx fz_best = " + lit(-1) + ";\n";
  std::string ind = "    ";
  for (int i = 0; i < nd; ++i) {
    const std::string si = std::to_string(i);
    s += ind + "for (fz_idx fz_k" + si + " = " + lit(0) + "; fz_k" + si + " < " + lit(kern[i]) + "; ++fz_k" + si +
         ") {\n";
    ind += "  ";
    s += ind + "fz_idx fz_p" + si + " = fz_s" + si + " + fz_k" + si + " * " + lit(dil[i]) + ";\n";
    cond += std::string(cond.empty() ? "" : " && ") + "fz_p" + si + " >= " + lit(0) + " && fz_p" + si + " < " +
            lit(xs[2 + i]);
    padcond += std::string(padcond.empty() ? "" : " && ") + "fz_p" + si + " >= " + lit(-pb[i]) + " && fz_p" + si +
               " < " + lit(xs[2 + i] + pe[i]);
    int64_t inner = 1;
    for (int j = i + 1; j < nd; ++j) inner *= xs[2 + j];
    off += " + fz_p" + si + " * " + lit(inner);
  }
  s += ind + "if (" + cond + ") {\n";
  s += ind + "  fz_idx fz_xo = fz_nc * " + lit(in_sz) + off + ";\n";
  s += ind + "  " + vt + " fz_v = " + (dbl ? typed_load(x, "fz_xo") : load_of(x, "fz_xo")) + ";\n";
  // LpPool sums (|x| / m)^p with m the window's largest |x| so far, rescaling the sum when m grows,
  // then m * sum^(1/p): ref's double sum of |x|^p, where fp32's overflowed (p = 3 of 3e13: inf on
  // the GPUs; red-team round 62). Zeros add nothing; an equal |x| (infinities too) adds 1; a NaN
  // makes the result NaN (flagged: a NaN may not survive the driver's arithmetic).
  const auto lp_pow = [&](const std::string& base) { return rename_intrinsics("pow(" + base + ", " + fz_float_literal(lp) + ")", d_); };
  const std::string lp_step = "if (" + is_nan("fz_v") + ") fz_lnan = true; else if (!(fz_a == " + d_.cast(vt, "0.0f") + ")) { if (fz_a > fz_lm) { fz_acc = fz_acc * " + lp_pow("fz_lm / fz_a") +
                              " + " + d_.cast(vt, "1.0f") + "; fz_lm = fz_a; } else if (fz_a == fz_lm) fz_acc += " + d_.cast(vt, "1.0f") +
                              "; else fz_acc += " + lp_pow("fz_a / fz_lm") + "; }";
  if (arg >= 0 && is_max) {
    s += ind + "  if (fz_best < " + lit(0) + " || fz_v > fz_acc || ((" + is_nan("fz_v") + ") && !(" + is_nan("fz_acc") +
         "))) {\n";
    std::string col = "fz_nc * " + lit(in_sz);
    int64_t outer = 1;
    for (int i = 0; i < nd; ++i) col += " + fz_p" + std::to_string(i) + " * " + lit(outer), outer *= xs[2 + i];
    s += ind + "    fz_acc = fz_v;\n" + ind + "    fz_best = " + (order == 1 ? col : std::string("fz_xo")) + ";\n" +
         ind + "  }\n";
  } else if (lp_scaled) {
    s += ind + "  " + vt + " fz_a = " + rename_intrinsics("abs(fz_v)", d_) + ";\n" + ind + "  " + lp_step + "\n";
  } else if (is_lp) {
    s += ind + "  fz_acc = fz_acc + " + rename_intrinsics("pow(abs(fz_v), " + fz_float_literal(lp) + ")", d_) + ";\n";
  } else {
    s += ind + "  fz_acc = " + (is_max ? "fz_max(fz_acc, fz_v)" : "fz_acc + fz_v") + ";\n";
  }
  s += ind + "  fz_cnt += 1;\n";
  s += ind + "} else if (" + padcond + ") {\n" + ind + "  fz_pad += 1;\n" + ind + "}\n";
  for (int i = nd - 1; i >= 0; --i) {
    ind.resize(ind.size() - 2);
    s += ind + "}\n";
  }
  if (lp_scaled)
    s += "    fz_acc = fz_lnan ? " + d_.cast(vt, "fz_nan()") + " : fz_lm == " + d_.cast(vt, "0.0f") + " ? fz_lm : fz_lm * " +
         rename_intrinsics("pow(fz_acc, " + fz_float_literal(1.0 / lp) + ")", d_) + ";\n";
  else if (is_lp)
    s += "    fz_acc = " + rename_intrinsics("pow(fz_acc, " + fz_float_literal(1.0 / lp) + ")", d_) + ";\n";
  else if (!is_max)
    s += "    fz_acc = fz_div(fz_acc, " + d_.cast(vt, include_pad ? "fz_cnt + fz_pad" : "fz_cnt") + ");\n";
  if (arg >= 0) {
    if (!is_max) fail(n.label() + ": only MaxPool has an Indices output");
    // Stored as an integer directly (no float round trip: indices may exceed 2^24).
    s += "    " + d_.element(slot(arg), "fz_o") + " = " + d_.cast(d_.storage_type(dtype_of(arg)), "fz_best") + ";\n";
  }
  return s + "    " + (dbl ? typed_store(out, "fz_o", "fz_acc") : store_of(out, "fz_o", "fz_acc")) + "\n";
}

const Tensor* Emitter::const_of(size_t i) const {
  const Node& n = node();
  if (i >= n.inputs.size() || n.inputs[i] < 0) return nullptr;
  const Value& v = p_.graph.values[n.inputs[i]];
  return v.constant ? &*v.constant : nullptr;
}

std::vector<int64_t> Emitter::const_ints(size_t i, const std::string& what) const {
  const Tensor* t = const_of(i);
  if (!t) throw Unsupported(d_.name, node().label() + ": " + what + " must be a compile-time constant");
  std::vector<int64_t> v;
  for (int64_t j = 0; j < t->numel(); ++j) v.push_back(t->get_int(j));
  return v;
}

std::string Emitter::rule_text(const char* ex, const std::string& v) const {
  return "(" +
         rename_intrinsics(
             substitute(
                 ex, [&](int) { return v; },
                 [&](const std::string& p) -> std::string { fail("reduce rule uses parameter '" + p + "'"); }),
             d_) +
         ")";
}

std::string Emitter::coords(const std::string& nm, const std::string& lin, const Shape& s,
                            const std::string& ind) const {
  std::string r;
  for (size_t j = 0; j < s.size(); ++j) {
    int64_t inner = 1;
    for (size_t l = j + 1; l < s.size(); ++l) inner *= s[l];
    r += ind + "fz_idx fz_" + nm + std::to_string(j) + " = (" + lin + " / " + lit(inner) + ") % " + lit(s[j]) + ";\n";
  }
  return r;
}

std::string Emitter::index_of(int b, const std::string& off) const {
  const DType t = dtype_of(b);
  // Float indices (OneHot takes any numeric type) saturate to the index type's range and NaN
  // goes to its lowest value, as ref's saturating cast does: a bare (int)x is undefined in C
  // for NaN and out-of-range x, and made NaN index 0 on CUDA.
  if (t == DType::f64) {  // in double: through fp32, 2.9999999999 rounded to 3 before truncating
    const std::string v = typed_load(b, off);
    const double top = std::ldexp(1.0, h_.index64 ? 63 : 31);
    const DType it = h_.index64 ? DType::i64 : DType::i32;
    const std::string least = d_.int_literal(it, h_.index64 ? INT64_MIN : INT32_MIN), most = d_.int_literal(it, h_.index64 ? INT64_MAX : INT32_MAX);
    return "(" + v + " != " + v + " || " + v + " <= " + d_.double_literal(-top) + " ? " + idx(least) + " : (" + v +
           " >= " + d_.double_literal(top) + " ? " + idx(most) + " : " + idx(v) + "))";
  }
  if (dtype_is_float(t)) {
    const std::string v = load_of(b, off);
    const std::string lo = h_.index64 ? "(-9223372036854775808.0f)" : "(-2147483648.0f)";
    const std::string hi = h_.index64 ? "9223371487098961920.0f" : "2147483520.0f";  // the largest floats below 2^63 / 2^31
    const DType it = h_.index64 ? DType::i64 : DType::i32;
    const std::string least = d_.int_literal(it, h_.index64 ? INT64_MIN : INT32_MIN), most = d_.int_literal(it, h_.index64 ? INT64_MAX : INT32_MAX);
    return "(" + v + " != " + v + " || " + v + " <= " + lo + " ? " + idx(least) + " : (" + v + " >= " + hi + " ? " + idx(most) +
           " : " + idx(v) + "))";
  }
  // Indices wider than the index type (64-bit ones in 32-bit mode, uint32 in 32-bit mode,
  // uint64 past 2^63) saturate first, so 2^40 or 2^32 - 1 stays out of range instead of
  // truncating or wrapping to a valid (or negative, then counted from the end) index.
  const bool narrow = !h_.index64 && (t == DType::i64 || t == DType::u64 || t == DType::u32);
  if (narrow || (t == DType::u64 && h_.index64)) {
    const std::string v = d_.load_value(t, d_.element(slot(b), off));
    const int64_t top = h_.index64 ? INT64_MAX : INT32_MAX;
    if (dtype_is_unsigned(t)) return idx("fz_min(" + v + ", " + d_.int_literal(t, top) + ")");
    return idx("fz_min(fz_max(" + v + ", " + d_.int_literal(t, INT32_MIN) + "), " + d_.int_literal(t, top) + ")");
  }
  return d_.to_index(t, d_.element(slot(b), off));
}

std::string Emitter::fix_index(const std::string& v, int64_t dim, const std::string& ind) const {
  return ind + "if (" + v + " < " + lit(0) + ") " + v + " += " + lit(dim) + ";\n" + ind + "if (" + v + " < " + lit(0) +
         " || " + v + " >= " + lit(dim) + ") FZ_INDEX_ERROR;\n" + ind + v + " = " + v + " < " + lit(0) + " ? " +
         lit(0) + " : (" + v + " >= " + lit(dim) + " ? " + lit(std::max<int64_t>(dim - 1, 0)) + " : " + v + ");\n";
}

bool Emitter::typed_reduce(const Node& n, const ReduceRule& rule) const {
  const DType xt = dtype_of(in_buf(0));
  if (n.op_type == "ReduceLogSumExp") return xt == DType::f64;
  // Integers take ReduceL1's |x| and ReduceSumSquare's x * x in their own type too (the fp32
  // path below made int16 sums of squares saturate and lost int32 exactness).
  return (xt == DType::f64 || dtype_is_int(xt)) && (!rule.pre || dtype_is_int(xt)) && !rule.post;
}

int64_t Emitter::int_limit(DType t, bool max) {
  switch (t) {
    case DType::i8:
      return max ? 127 : -128;
    case DType::u8:
      return max ? 255 : 0;
    case DType::i16:
      return max ? 32767 : -32768;
    case DType::u16:
      return max ? 65535 : 0;
    case DType::i32:
      return max ? 2147483647LL : -2147483648LL;
    case DType::u32:
      return max ? 4294967295LL : 0;
    case DType::u64:
      return max ? -1 : 0;
    default:
      return max ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
}

std::string Emitter::reduce(const Node& n, const ReduceRule& rule, int out) const {
  const int x = in_buf(0);
  const Shape& xs = buffer(x).shape;
  const int64_t r = static_cast<int64_t>(xs.size());
  const int axes_opset = n.op_type == "ReduceSum" ? 13 : 18;
  std::vector<int64_t> axes =
      n.opset >= axes_opset ? (has_in(1) ? const_ints(1, "axes") : std::vector<int64_t>{}) : n.attr_ints("axes");
  if (axes.empty() && n.attr_i("noop_with_empty_axes", 0) != 0) return "    " + copy(x, "fz_o", out, "fz_o") + "\n";
  std::vector<bool> mask(static_cast<size_t>(r), axes.empty());
  for (auto a : axes) mask[normalize_axis(a, r, n.label())] = true;
  const Shape cs = contiguous_strides(xs);
  Shape kept, red;
  std::vector<int64_t> kst, rst;
  for (int64_t d = 0; d < r; ++d) (mask[d] ? red : kept).push_back(xs[d]), (mask[d] ? rst : kst).push_back(cs[d]);
  const int64_t count = shape_numel(red);
  std::string s = coords("d", "fz_o", kept);
  std::string base = lit(0);
  for (size_t j = 0; j < kept.size(); ++j) base += " + fz_d" + std::to_string(j) + " * " + lit(kst[j]);
  s += "    fz_idx fz_base = " + base + ";\n";
  const std::string loop = "    for (fz_idx fz_t = " + lit(0) + "; fz_t < " + lit(count) + "; ++fz_t) {\n";
  std::string off = "fz_base";
  for (size_t j = 0; j < red.size(); ++j) {
    int64_t inner = 1;
    for (size_t l = j + 1; l < red.size(); ++l) inner *= red[l];
    off += " + ((fz_t / " + lit(inner) + ") % " + lit(red[j]) + ") * " + lit(rst[j]);
  }
  if (typed_reduce(n, rule)) {
    // float64 and integer data: accumulate in the dtype's compute type (exact integers,
    // double for f64), as the reference does; the result converts to the output dtype.
    const DType xt = dtype_of(x);
    const std::string ct = d_.compute_type(xt), fn = combiner_fn(rule.combiner);
    const bool integral = dtype_is_integral(xt);
    if (integral && rule.mean && dtype_size(xt) < 4) {
      // An 8/16-bit mean sums exactly in the 32-bit compute type (ref sums in int64): only
      // while count x the largest magnitude stays below 2^31 (2^32 unsigned). Past it the host.
      const bool uns = dtype_is_unsigned(xt) || xt == DType::boolean;
      const double top = std::ldexp(1.0, 8 * static_cast<int>(dtype_size(xt)) - (uns ? 0 : 1));
      if (static_cast<double>(count) * top >= std::ldexp(1.0, uns ? 32 : 31))
        throw Unsupported(d_.name, n.label() + ": " + n.op_type + " of " + std::to_string(count) + " " + dtype_name(xt) +
                                       " values sums past the 32-bit compute type; refused rather than wrapped");
    }
    std::string ident;
    switch (rule.combiner) {
      case Combiner::sum:
        ident = typed_literal(d_, xt, 0.0, 0);
        break;
      case Combiner::prod:
        ident = typed_literal(d_, xt, 1.0, 1);
        break;
      case Combiner::max:
        ident = integral ? d_.int_literal(xt, int_limit(xt, false)) : d_.cast("double", "(-fz_inf())");
        break;
      case Combiner::min:
        ident = integral ? d_.int_literal(xt, int_limit(xt, true)) : d_.cast("double", "fz_inf()");
        break;
    }
    if (n.op_type == "ReduceLogSumExp") {  // float64 (typed_reduce): the fp32 branch below in double
      const std::string v = "      " + local(xt) + "fz_v = " + typed_load(x, off) + ";\n";
      s += "    " + local(xt) + "fz_m = " + d_.cast("double", "(-fz_inf())") + ";\n" + loop + v + "      fz_m = fz_max(fz_m, fz_v);\n    }\n";
      s += "    " + local(xt) + "fz_sh = fz_isinf(fz_m) != 0.0f ? " + d_.double_literal(0.0) + " : fz_m;\n";
      s += "    " + local(xt) + "fz_acc = " + d_.double_literal(0.0) + ";\n" + loop + v + "      fz_acc = fz_acc + " +
           rename_intrinsics("exp(fz_v - fz_sh)", d_, xt) + ";\n    }\n";
      return s + "    " + typed_store(out, "fz_o", convert_value(d_, xt, dtype_of(out), rename_intrinsics("log(fz_acc)", d_, xt) + " + fz_sh", true)) + "\n";
    }
    s += "    " + local(xt) + "fz_acc = " + ident + ";\n" + loop + "      " + local(xt) +
         "fz_v = " + typed_load(x, off) + ";\n";
    const char* pre_text = integral && rule.int_pre ? rule.int_pre : rule.pre;
    const std::string pre = pre_text ? "(" + rename_intrinsics(substitute(pre_text, [](int) { return std::string("fz_v"); },
                                                                      [&](const std::string& p) -> std::string {
                                                                        fail("reduce rule uses parameter '" + p + "'");
                                                                      }),
                                                           d_, xt) + ")"
                                     : "fz_v";
    // Integers add / multiply through the wrapping helpers (C/C++ signed overflow is undefined).
    const std::string ifn = rule.combiner == Combiner::sum ? "fz_iadd" : rule.combiner == Combiner::prod ? "fz_imul" : fn;
    s += "      fz_acc = " + (integral ? ifn : fn) + "(fz_acc, " + pre + ");\n    }\n";
    std::string res = "fz_acc";
    if (rule.mean)
      res = integral ? "fz_idiv(fz_acc, " + d_.int_literal(xt, count) + ")"
                     : "fz_div(fz_acc, " + d_.double_literal(static_cast<double>(count)) + ")";
    return s + "    " + typed_store(out, "fz_o", convert_value(d_, xt, dtype_of(out), res, true)) + "\n";
  }
  const std::string val = "      float fz_v = " + load_of(x, off) + ";\n";
  const bool is_bool = dtype_of(x) == DType::boolean;
  std::string ident = combiner_identity(rule.combiner);
  if (is_bool && rule.combiner == Combiner::max) ident = "0.0f";
  if (is_bool && rule.combiner == Combiner::min) ident = "1.0f";
  const std::string fn = combiner_fn(rule.combiner);
  if (n.op_type == "ReduceLogSumExp") {
    // Shifted by the max as the reference does (no overflow for large inputs).
    s += "    float fz_m = (-fz_inf());\n" + loop + val + "      fz_m = fz_max(fz_m, fz_v);\n    }\n";
    s += "    float fz_sh = fz_isinf(fz_m) != 0.0f ? 0.0f : fz_m;\n";
    s += "    float fz_acc = 0.0f, fz_accc = 0.0f;\n" + loop + val + "      fz_csum(fz_acc, fz_accc, " +
         rule_text(rule.pre, "fz_v - fz_sh") + ");\n    }\n";
    return s + "    " + store_of(out, "fz_o", rule_text(rule.post, "fz_cfin(fz_acc, fz_accc)") + " + fz_sh") + "\n";
  }
  // fp32 sums are compensated as the row kernels' (fz_csum; Emitter::compensated).
  const bool comp = rule.combiner == Combiner::sum && !plain_sums_knob();
  const std::string v = rule.pre ? rule_text(rule.pre, "fz_v") : "fz_v";
  s += "    float fz_acc = " + ident + (comp ? ", fz_accc = 0.0f" : "") + ";\n" + loop + val;
  s += comp ? "      fz_csum(fz_acc, fz_accc, " + v + ");\n    }\n" : "      fz_acc = " + fn + "(fz_acc, " + v + ");\n    }\n";
  const std::string n = fz_float_literal(static_cast<double>(count));
  // Stored as fp16 / bf16 with nothing after the sum: rounded to odd first (one rounding in all).
  const bool odd = !rule.post && (dtype_of(out) == DType::f16 || dtype_of(out) == DType::bf16);
  std::string res = comp ? (odd ? "fz_cfin_odd(fz_acc, fz_accc)" : "fz_cfin(fz_acc, fz_accc)") : "fz_acc";
  if (rule.mean) res = comp ? d_.compensated_mean("fz_acc", "fz_accc", count, odd) : "fz_div(fz_acc, " + n + ")";
  if (rule.post) res = rule_text(rule.post, res);
  return s + "    " + store_of(out, "fz_o", res) + "\n";
}

Emitter::Around Emitter::around(const Shape& s, int64_t axis) {
  Around a;
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d)
    (d < axis ? a.outer : d == axis ? a.len : a.inner) *= s[d];
  return a;
}

std::string Emitter::arg_extremum(const Node& n, int out) const {
  const int x = in_buf(0);
  const Shape& xs = buffer(x).shape;
  const int64_t axis = normalize_axis(n.attr_i("axis", 0), static_cast<int64_t>(xs.size()), n.label());
  const Around a = around(xs, axis);
  const bool last = n.attr_i("select_last_index", 0) != 0;
  const char* cmp = n.op_type == "ArgMax" ? " > " : " < ";
  std::string s = "    fz_idx fz_base = (fz_o / " + lit(a.inner) + ") * " + lit(a.len * a.inner) + " + fz_o % " +
                  lit(a.inner) + ";\n";
  s += "    float fz_best = " + load_of(x, "fz_base") + ";\n    fz_idx fz_bk = " + lit(0) + ";\n";
  s += "    for (fz_idx fz_k = " + lit(1) + "; fz_k < " + lit(a.len) + "; ++fz_k) {\n";
  s += "      float fz_c = " + load_of(x, "fz_base + fz_k * " + lit(a.inner)) + ";\n      int fz_take = 0;\n";
  s += "      if (" + is_nan("fz_best") +
       ") fz_take = " + (last ? "(" + is_nan("fz_c") + ") ? 1 : 0" : std::string("0")) + ";\n";
  s += "      else if (" + is_nan("fz_c") + ") fz_take = 1;\n";
  s += "      else if (fz_c" + std::string(cmp) + "fz_best" + (last ? " || fz_c == fz_best" : "") + ") fz_take = 1;\n";
  s += "      if (fz_take != 0) {\n        fz_best = fz_c;\n        fz_bk = fz_k;\n      }\n    }\n";
  // The index stored as an integer (through float it was exact only below 2^24).
  return s + "    " + typed_store(out, "fz_o", d_.cast(d_.compute_type(dtype_of(out)), "fz_bk")) + "\n";
}

std::string Emitter::hardmax(const Node& n, int out) const {
  const int x = in_buf(0);
  const Shape& xs = buffer(x).shape;
  const int64_t r = static_cast<int64_t>(xs.size());
  const bool legacy = n.opset < 13;
  const int64_t axis = normalize_axis(n.attr_i("axis", legacy ? 1 : -1), r, n.label());
  Around a = around(xs, axis);
  if (legacy) a.len *= a.inner, a.inner = 1;
  std::string s = "    fz_idx fz_kk = (fz_o / " + lit(a.inner) + ") % " + lit(a.len) + ";\n";
  s += "    fz_idx fz_base = (fz_o / " + lit(a.len * a.inner) + ") * " + lit(a.len * a.inner) + " + fz_o % " +
       lit(a.inner) + ";\n";
  s += "    float fz_mx = (-fz_inf());\n    fz_idx fz_arg = " + lit(0) + ";\n";
  s += "    for (fz_idx fz_k = " + lit(0) + "; fz_k < " + lit(a.len) + "; ++fz_k) {\n";
  s += "      float fz_c = " + load_of(x, "fz_base + fz_k * " + lit(a.inner)) + ";\n";
  s += "      if (fz_c > fz_mx || ((" + is_nan("fz_c") + ") && !(" + is_nan("fz_mx") +
       "))) {\n        fz_mx = fz_c;\n        fz_arg = fz_k;\n      }\n    }\n";
  return s + "    " + store_of(out, "fz_o", "(fz_kk == fz_arg ? 1.0f : 0.0f)") + "\n";
}

std::string Emitter::topk(const Node& n, int values, int indices) const {
  const int x = in_buf(0);
  const Shape& xs = buffer(x).shape;
  const int64_t axis = normalize_axis(n.attr_i("axis", -1), static_cast<int64_t>(xs.size()), n.label());
  const Around a = around(xs, axis);
  const int64_t k = buffer(values >= 0 ? values : indices).shape[static_cast<size_t>(axis)];
  if (a.len > kTopKMaxAxis)
    throw Unsupported(d_.name, n.label() + ": TopK along an axis of " + std::to_string(a.len) + " elements (the kernel ranks every pair; at most " +
                                   std::to_string(kTopKMaxAxis) + ")");
  // Every element compares with its whole axis: past 2^34 comparisons the host's sort is faster.
  if (static_cast<double>(a.len) * static_cast<double>(shape_numel(xs)) > 17179869184.0)
    throw Unsupported(d_.name, n.label() + ": TopK of " + std::to_string(shape_numel(xs)) + " elements along axes of " + std::to_string(a.len) +
                                   " (past 2^34 pairwise comparisons)");
  const bool largest = n.attr_i("largest", 1) != 0;
  const DType xt = dtype_of(x);
  // Compared exactly in the compute type (fp16 / bf16 widen to fp32 exactly, f64 and the
  // integers keep theirs); a NaN ranks above every number, two NaNs by position.
  const bool fl = dtype_is_float(xt), typed = xt == DType::f64 || !fl;
  auto ld = [&](const std::string& off) { return typed ? typed_load(x, off) : load_of(x, off); };
  const std::string ty = typed ? local(xt) : std::string("float ");
  std::string s = "    fz_idx fz_kk = (fz_o / " + lit(a.inner) + ") % " + lit(a.len) + ";\n";
  s += "    fz_idx fz_base = fz_o - fz_kk * " + lit(a.inner) + ";\n";
  s += "    " + ty + "fz_v = " + ld("fz_o") + ";\n    fz_idx fz_rank = " + lit(0) + ";\n";
  const std::string gt = largest ? " > " : " < ";
  std::string before = "(fz_c" + gt + "fz_v || (fz_c == fz_v && fz_k < fz_kk))";
  if (fl) {
    s += "    bool fz_vn = " + is_nan("fz_v") + ";\n";
    const std::string cn = "(" + is_nan("fz_c") + ")";
    before = largest ? "(" + cn + " ? (!fz_vn || fz_k < fz_kk) : (!fz_vn && " + before + "))"
                     : "(" + cn + " ? (fz_vn && fz_k < fz_kk) : (fz_vn || " + before + "))";
  }
  s += "    for (fz_idx fz_k = " + lit(0) + "; fz_k < " + lit(a.len) + "; ++fz_k) {\n";
  s += "      " + ty + "fz_c = " + ld("fz_base + fz_k * " + lit(a.inner)) + ";\n";
  s += "      if (" + before + ") fz_rank += " + lit(1) + ";\n    }\n";
  s += "    if (fz_rank < " + lit(k) + ") {\n";
  s += "      fz_idx fz_t = (fz_base / " + lit(a.len * a.inner) + ") * " + lit(k * a.inner) + " + fz_rank * " + lit(a.inner) + " + fz_base % " +
       lit(a.inner) + ";\n";
  if (values >= 0) s += "      " + copy(x, "fz_o", values, "fz_t") + "\n";
  if (indices >= 0) s += "      " + typed_store(indices, "fz_t", d_.cast(d_.compute_type(dtype_of(indices)), "fz_kk")) + "\n";
  return s + "    }\n";
}

int64_t Emitter::cumsum_lines(const Node& n) const {
  const Tensor* t = const_of(1);
  const Shape& xs = buffer(in_buf(0)).shape;
  if (!t || t->numel() != 1 || xs.empty()) return 0;
  const Around a = around(xs, normalize_axis(t->get_int(0), static_cast<int64_t>(xs.size()), n.label()));
  const int64_t numel = shape_numel(xs), lines = a.len ? numel / a.len : 0;
  return lines > 0 && lane_cost(lines, a.len) < lane_cost(numel, a.len) ? lines : 0;
}

std::string Emitter::cumsum(const Node& n, int out) const {
  const int x = in_buf(0);
  const Shape& xs = buffer(x).shape;
  const int64_t r = static_cast<int64_t>(xs.size());
  const bool excl = n.attr_i("exclusive", 0) != 0, rev = n.attr_i("reverse", 0) != 0;
  // Sums in double (float64 and, as ref sums them, fp32 / fp16 / bf16: each prefix rounded once
  // from the double sum; an fp32 running sum drifted from ref's over long rows), integers in
  // their compute type (wrapping: fz_iadd / fz_imul, no UB; wrapped to the dtype on the store).
  // CumProd (ir/ops/misc.cpp cumprod_ref) rounds each product to the dtype as ref does (an fp32
  // product of two fp16 / bf16 values is exact, so rounding it is the dtype's own multiply).
  const DType xt = dtype_of(x);
  const bool typed = xt == DType::f64 || dtype_is_integral(xt), prod = n.op_type == "CumProd", dsum = !typed && !prod;
  const DType acc_t = dsum ? DType::f64 : xt;
  const double id = prod ? 1.0 : 0.0;
  const std::string acc0 =
      typed || dsum ? local(acc_t) + "fz_acc = " + typed_literal(d_, acc_t, id, prod ? 1 : 0) : "float fz_acc = " + fz_float_literal(id);
  auto load = [&](const std::string& at) {
    return typed ? typed_load(x, at) : dsum ? d_.cast(d_.compute_type(DType::f64), load_of(x, at)) : load_of(x, at);
  };
  auto combine = [&](const std::string& v) {
    if (dtype_is_integral(xt)) return "fz_acc = " + std::string(prod ? "fz_imul" : "fz_iadd") + "(fz_acc, " + v + ");";
    if (!prod) return "fz_acc = fz_acc + " + v + ";";
    return "fz_acc = " + (typed ? "fz_acc * " + v : convert_value(d_, DType::f32, xt, "fz_acc * " + v, true)) + ";";
  };
  auto store = [&](const std::string& at) {
    if (typed) return typed_store(out, at, convert_value(d_, xt, dtype_of(out), "fz_acc", true));
    return store_of(out, at, dsum ? convert_value(d_, DType::f64, xt, "fz_acc", true) : "fz_acc");
  };
  std::string s, len, inner;
  if (const Tensor* t = const_of(1); t && t->numel() == 1) {
    // As for Scatter (Emitter::scatter): past kMaxLaneCost serial iterations a lane the host's
    // O(n) loop is the faster place (a 1-D CumSum of 300,000 is one thread's loop).
    const Around a = around(xs, normalize_axis(t->get_int(0), r, n.label()));
    const int64_t lines = cumsum_lines(n), threads = lines ? lines : shape_numel(xs);
    if (lane_cost(threads, a.len) > max_lane_cost())
      throw Unsupported(d_.name, n.label() + ": " + n.op_type + " would run " + std::to_string(a.len) + " serial iterations in each of " +
                                     std::to_string(threads) + " threads; the host's loop is O(n)");
  }
  if (const int64_t lines = cumsum_lines(n)) {
    // A thread per line (fz_o): one running sum in the reference's order, each partial sum
    // stored as it is reached (the same partial sums as the per-element form below).
    const Around a = around(xs, normalize_axis(const_of(1)->get_int(0), r, n.label()));
    (void)lines;
    s += "    fz_idx fz_base = (fz_o / " + lit(a.inner) + ") * " + lit(a.len * a.inner) + " + fz_o % " + lit(a.inner) + ";\n";
    s += "    " + acc0 + ";\n";
    s += rev ? "    for (fz_idx fz_k = " + lit(a.len - 1) + "; fz_k >= " + lit(0) + "; --fz_k) {\n"
             : "    for (fz_idx fz_k = " + lit(0) + "; fz_k < " + lit(a.len) + "; ++fz_k) {\n";
    const std::string at = "fz_base + fz_k * " + lit(a.inner);
    s += "      " + (typed || dsum ? local(acc_t) : std::string("float ")) + "fz_v = " + load(at) + ";\n";  // read before the store (in place)
    if (excl) s += "      " + store(at) + "\n      " + combine("fz_v") + "\n";
    else s += "      " + combine("fz_v") + "\n      " + store(at) + "\n";
    return s + "    }\n";
  }
  if (const Tensor* t = const_of(1)) {
    if (t->numel() != 1) fail(n.label() + ": " + n.op_type + " axis must be a scalar");
    const Around a = around(xs, normalize_axis(t->get_int(0), r, n.label()));
    len = lit(a.len), inner = lit(a.inner);
  } else {
    // Axis computed at run time: select the geometry of each possible axis.
    s += "    fz_idx fz_ax = " + index_of(in_buf(1), lit(0)) + ";\n    if (fz_ax < " + lit(0) + ") fz_ax += " + lit(r) +
         ";\n";
    // An axis outside [-r, r) fails the run as on ref (status word), instead of summing nothing.
    s += "    if (fz_ax < " + lit(0) + " || fz_ax >= " + lit(r) + ") FZ_INDEX_ERROR;\n";
    s += "    fz_idx fz_len = " + lit(1) + ";\n    fz_idx fz_inner = " + lit(1) + ";\n";
    for (int64_t d = 0; d < r; ++d) {
      const Around a = around(xs, d);
      s += "    if (fz_ax == " + lit(d) + ") {\n      fz_len = " + lit(a.len) + ";\n      fz_inner = " + lit(a.inner) +
           ";\n    }\n";
    }
    len = "fz_len", inner = "fz_inner";
  }
  // A thread per element: its prefix (or suffix, reverse) summed in the reference's order.
  s += "    fz_idx fz_kk = (fz_o / " + inner + ") % " + len + ";\n";
  s += "    fz_idx fz_base = fz_o - fz_kk * " + inner + ";\n    " + acc0 + ";\n";
  if (!rev)
    s += "    for (fz_idx fz_k = " + lit(0) + "; fz_k " + (excl ? "<" : "<=") + " fz_kk; ++fz_k)";
  else
    s += "    for (fz_idx fz_k = " + len + " - " + lit(1) + "; fz_k " + (excl ? ">" : ">=") + " fz_kk; --fz_k)";
  s += " " + combine(load("fz_base + fz_k * " + inner)) + "\n";
  return s + "    " + store("fz_o") + "\n";
}

std::string Emitter::softmax(const Node& n, int out) const {
  const int x = in_buf(0);
  const Shape& xs = buffer(x).shape;
  const bool legacy = n.opset < 13;
  const int64_t axis = normalize_axis(n.attr_i("axis", legacy ? 1 : -1), static_cast<int64_t>(xs.size()), n.label());
  Around a = around(xs, axis);
  if (legacy) a.len *= a.inner, a.inner = 1;
  std::string s = "    fz_idx fz_base = (fz_o / " + lit(a.len * a.inner) + ") * " + lit(a.len * a.inner) +
                  " + fz_o % " + lit(a.inner) + ";\n";
  const std::string loop = "    for (fz_idx fz_k = " + lit(0) + "; fz_k < " + lit(a.len) +
                           "; ++fz_k) {\n      float fz_c = " + load_of(x, "fz_base + fz_k * " + lit(a.inner)) + ";\n";
  s += "    float fz_mx = (-fz_inf());\n" + loop;
  s += "      if (fz_c > fz_mx || ((" + is_nan("fz_c") + ") && !(" + is_nan("fz_mx") + "))) fz_mx = fz_c;\n    }\n";
  s += "    float fz_sum = 0.0f;\n" + loop + "      fz_sum = fz_sum + " + rename_intrinsics("exp(fz_c - fz_mx)", d_) +
       ";\n    }\n";
  s += "    float fz_z = " + load_of(x, "fz_o") + " - fz_mx;\n";
  const std::string y = n.op_type == "Softmax" ? "fz_div(" + rename_intrinsics("exp(fz_z)", d_) + ", fz_sum)"
                                               : "fz_z - " + rename_intrinsics("log(fz_sum)", d_);
  return s + "    " + store_of(out, "fz_o", y) + "\n";
}

}  // namespace fusor::codegen_detail
