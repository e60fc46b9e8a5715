// Shared helpers of the cooperative-matrix tests (test_vulkan_coopmat.cpp,
// test_vulkan_coopmat_split.cpp): fp16 matmul problems as graphs, described coopmat devices,
// a SPIR-V instruction walk. Header-only, internal linkage (each test file gets its own copy).
#pragma once

#include <gtest/gtest.h>

#define SPV_ENABLE_UTILITY_CODE
#include <spirv/unified1/spirv.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "backends/codegen.h"
#include "backends/vulkan/vk_coopmat.h"
#include "backends/vulkan/vk_dialect.h"
#include "frontend/builder.h"
#include "ir/passes.h"

namespace fusor {
namespace {

using vk::CoopmatShape;

Tensor random_tensor(DType t, Shape s, uint32_t seed) {
  Tensor x(t, std::move(s));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, u(rng));
  return x;
}

// An fp16 matmul problem: A [batch.., M, K] times B, B given as [.., K, N] or (transposed)
// [.., N, K] read through a Transpose view; optional bias + GELU epilogue.
struct Problem {
  std::string name;
  Shape a, b;
  bool transpose_b = false, bias_gelu = false, b_constant = false;
  DType dtype = DType::f16;
  // Odd base offsets: A is read through a Slice of a wider input (a_col_offset extra columns
  // before its K columns, so its view starts at that element and its rows are K + offset long);
  // B through a Slice that skips b_row_offset leading rows (its view starts at that row).
  int64_t a_col_offset = 0, b_row_offset = 0;
  // A read through a Transpose of a [..., K, M] input (its view is m-fast); `a` stays [..., M, K].
  bool transpose_a = false;
};

int slice_i64(GraphBuilder& b, const std::string& n, int64_t v) {
  Tensor t(DType::i64, {1});
  t.set_int(0, v);
  return b.constant(n, t);
}

struct Built {
  Graph g;
  std::vector<Tensor> inputs;
};

Built build(const Problem& p, uint32_t seed) {
  GraphBuilder b;
  Built out;
  Shape a = p.a, bs = p.b;
  a.back() += p.a_col_offset;
  bs[bs.size() - 2] += p.b_row_offset;
  std::vector<int64_t> swap_last;  // the permutation that swaps the last two axes
  for (size_t i = 0; i < a.size(); ++i) swap_last.push_back(static_cast<int64_t>(i));
  std::swap(swap_last[a.size() - 1], swap_last[a.size() - 2]);
  if (p.transpose_a) std::swap(a[a.size() - 1], a[a.size() - 2]);
  int x = b.input("a", p.dtype, a);
  out.inputs.push_back(random_tensor(p.dtype, a, seed));
  if (p.transpose_a) x = b.op("Transpose", {x}, {{"perm", swap_last}});
  if (p.a_col_offset > 0)
    x = b.op("Slice", {x, slice_i64(b, "a_st", p.a_col_offset), slice_i64(b, "a_en", a.back()), slice_i64(b, "a_ax", -1)});
  int w;
  if (p.b_constant) {
    w = b.constant("b", random_tensor(p.dtype, bs, seed + 1));
  } else {
    w = b.input("b", p.dtype, bs);
    out.inputs.push_back(random_tensor(p.dtype, bs, seed + 1));
  }
  if (p.b_row_offset > 0)
    w = b.op("Slice", {w, slice_i64(b, "b_st", p.b_row_offset), slice_i64(b, "b_en", bs[bs.size() - 2]), slice_i64(b, "b_ax", -2)});
  if (p.transpose_b) {
    std::vector<int64_t> perm;
    for (size_t i = 0; i < p.b.size(); ++i) perm.push_back(static_cast<int64_t>(i));
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    w = b.op("Transpose", {w}, {{"perm", perm}});
  }
  int y = b.op("MatMul", {x, w});
  if (p.bias_gelu) {
    const int64_t n = p.transpose_b ? p.b[p.b.size() - 2] : p.b.back();
    y = b.op("Gelu", {b.op("Add", {y, b.constant("bias", random_tensor(p.dtype, {n}, seed + 2))})});
  }
  b.output(y);
  out.g = b.build();
  make_static(out.g, {});
  return out;
}

const std::vector<Problem>& problems() {
  static const std::vector<Problem> ps = {
      {"square64", {64, 64}, {64, 64}},
      {"odd_sizes_bias_gelu", {2, 37, 96}, {96, 130}, false, true, true},
      {"batched", {3, 40, 72}, {3, 72, 24}},
      {"transposed_b", {100, 200}, {48, 200}, true},
      {"k_not_multiple", {33, 50}, {50, 70}, false, true, false},
      {"mlp_batch64", {64, 1024}, {1024, 256}, false, true, true},
      {"transposed_a_and_b", {40, 96}, {72, 96}, true, false, false, DType::f16, 0, 0, true},
  };
  return ps;
}

// A described device with cooperative matrices (nothing here needs it to exist).
vk::PhysicalDeviceInfo coopmat_device(bool nv, std::vector<CoopmatShape> shapes) {
  vk::PhysicalDeviceInfo d;
  d.name = nv ? "described NV coopmat device" : "described KHR coopmat device";
  d.api_version = VK_API_VERSION_1_3;
  d.subgroup_size = 32;
  d.max_shared_memory = 49152;
  d.max_invocations = 1024;
  for (int i = 0; i < 3; ++i) d.max_group_count[i] = 65535, d.max_group_size[i] = 1024;
  d.max_storage_buffer_range = 1u << 30;
  d.min_storage_offset_alignment = 16;
  d.shader_float16 = d.storage_16bit = d.shader_int64 = d.vulkan_memory_model = true;
  d.coopmat_nv = nv;
  d.coopmat_khr = !nv;
  d.cooperative_matrix = !nv;
  d.coopmat_shapes = std::move(shapes);
  return d;
}

CoopmatShape f16_shape(uint32_t m, uint32_t n, uint32_t k) { return {m, n, k, 0, 0, 1, 1, 3, false}; }

// Instruction walk of a SPIR-V module: (opcode, word count, position).
struct SpvInst {
  uint32_t op, n;
  size_t pos;
};
std::vector<SpvInst> walk(const std::vector<uint32_t>& w) {
  std::vector<SpvInst> out;
  for (size_t p = 5; p < w.size();) {
    const uint32_t n = w[p] >> 16;
    if (n == 0 || p + n > w.size()) {
      ADD_FAILURE() << "malformed instruction at word " << p;
      break;
    }
    out.push_back({w[p] & 0xffff, n, p});
    p += n;
  }
  return out;
}

std::map<uint32_t, int> opcode_counts(const std::vector<uint32_t>& w) {
  std::map<uint32_t, int> c;
  for (const SpvInst& i : walk(w)) ++c[i.op];
  return c;
}

// Every result id defined once and below the bound (result positions from spirv.h's table;
// the KHR cooperative-matrix opcodes, newer than that table, by hand).
void check_ids_unique(const std::vector<uint32_t>& w) {
  std::set<uint32_t> seen;
  for (const SpvInst& i : walk(w)) {
    bool has_result = false, has_type = false;
    if (i.op == 4456) has_result = true;
    else if (i.op == 4457 || i.op == 4459 || i.op == 4460) has_result = has_type = true;
    else if (i.op != 4458) SpvHasResultAndType(static_cast<SpvOp>(i.op), &has_result, &has_type);
    if (!has_result) continue;
    const uint32_t id = w[i.pos + (has_type ? 2 : 1)];
    EXPECT_LT(id, w[3]) << "op " << i.op << " id " << id << " not below the bound";
    EXPECT_TRUE(seen.insert(id).second) << "id " << id << " defined twice (op " << i.op << ")";
  }
}

// All matmul kernels of `p` on `dev`: (kernel name, GLSL), requiring each to pick coopmat.
std::vector<std::pair<std::string, std::string>> coopmat_sources(const Problem& prob, const vk::PhysicalDeviceInfo& dev) {
  Built b = build(prob, 5);
  Plan plan = build_plan(b.g);
  std::vector<std::pair<std::string, std::string>> out;
  for (const KernelSpec& k : plan.kernels) {
    if (!k.matmul) continue;
    vk::VulkanDialect d(dev, k, std::vector<int64_t>(kernel_bindings(k).size(), 0), &plan);
    EXPECT_TRUE(d.tiles().coopmat) << prob.name << " kernel " << k.name << " did not choose the coopmat template";
    out.push_back({k.name, emit_kernel(k, plan, d)});
  }
  EXPECT_FALSE(out.empty()) << prob.name << ": no matmul kernel";
  return out;
}

}  // namespace
}  // namespace fusor
