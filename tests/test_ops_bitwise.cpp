// BitwiseAnd/Or/Xor/Not and BitShift (element-wise ScalarRules, fused on cpu and the GPUs):
// hand-checked values per dtype on ref, then a fused chain on seeded random inputs compared
// exactly between ref, cpu and vulkan (where present).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "runtime/session.h"
#include "test_util.h"
#ifdef FUSOR_HAVE_CUDA
#include "backends/codegen.h"
#include "backends/cuda/cuda_backend.h"
#include "ir/kernel_spec.h"
#endif

namespace fusor {
namespace {

using testing::ints_of;
using testing::OpCall;
using testing::run_op;

std::vector<int64_t> values(const Tensor& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get_int(i));
  return v;
}

TEST(OpsBitwise, AndOrXorNotPerDtype) {
  Tensor a = ints_of({4}, {0xF0, 0x3C, 0xFF, 0}, DType::u8), b = ints_of({4}, {0x3C, 0x0F, 0x01, 0}, DType::u8);
  EXPECT_EQ(values(run_op({"BitwiseAnd", {a, b}}, 18)[0]), (std::vector<int64_t>{0x30, 0x0C, 0x01, 0}));
  EXPECT_EQ(values(run_op({"BitwiseOr", {a, b}}, 18)[0]), (std::vector<int64_t>{0xFC, 0x3F, 0xFF, 0}));
  EXPECT_EQ(values(run_op({"BitwiseXor", {a, b}}, 18)[0]), (std::vector<int64_t>{0xCC, 0x33, 0xFE, 0}));
  EXPECT_EQ(values(run_op({"BitwiseNot", {a}}, 18)[0]), (std::vector<int64_t>{0x0F, 0xC3, 0x00, 0xFF}));
  Tensor s = ints_of({3}, {5, -1, -128}, DType::i8);
  EXPECT_EQ(values(run_op({"BitwiseNot", {s}}, 18)[0]), (std::vector<int64_t>{-6, 0, 127}));
  Tensor big = ints_of({2}, {int64_t{-1}, int64_t{1} << 62}, DType::i64);
  Tensor mask = ints_of({2}, {int64_t{0x0F0F}, int64_t{3} << 61}, DType::i64);
  EXPECT_EQ(values(run_op({"BitwiseAnd", {big, mask}}, 18)[0]), (std::vector<int64_t>{0x0F0F, int64_t{1} << 62}));
  // Broadcasting like any element-wise op.
  Tensor row = ints_of({1, 2}, {0x1, 0x2}, DType::i32), col = ints_of({2, 1}, {0x10, 0x20}, DType::i32);
  Tensor y = run_op({"BitwiseOr", {row, col}}, 18)[0];
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(values(y), (std::vector<int64_t>{0x11, 0x12, 0x21, 0x22}));
}

TEST(OpsBitwise, BitShiftWidthsAndDirections) {
  auto shift = [](DType t, std::vector<int64_t> x, std::vector<int64_t> s, const char* dir) {
    const Shape sh = {static_cast<int64_t>(x.size())};
    return values(run_op({"BitShift", {ints_of(sh, x, t), ints_of(sh, s, t)}, {{"direction", std::string(dir)}}}, 11)[0]);
  };
  EXPECT_EQ(shift(DType::u8, {1, 1, 3, 0x80}, {7, 8, 1, 40}, "LEFT"), (std::vector<int64_t>{128, 0, 6, 0}));
  EXPECT_EQ(shift(DType::u8, {0x80, 0xFF, 16}, {7, 8, 2}, "RIGHT"), (std::vector<int64_t>{1, 0, 4}));
  EXPECT_EQ(shift(DType::u32, {1, 1, 0xFFFFFFFF}, {31, 32, 4}, "LEFT"), (std::vector<int64_t>{0x80000000LL, 0, 0xFFFFFFF0LL}));
  // uint64 values held by their bits: 1 << 63 is the top bit.
  EXPECT_EQ(shift(DType::u64, {1, 1, 5}, {63, 64, 1}, "LEFT"), (std::vector<int64_t>{std::numeric_limits<int64_t>::min(), 0, 10}));
  EXPECT_THROW(run_op({"BitShift", {ints_of({1}, {1}, DType::i32), ints_of({1}, {1}, DType::i32)}, {{"direction", std::string("LEFT")}}}, 11),
               Error);
  EXPECT_THROW(run_op({"BitShift", {ints_of({1}, {1}, DType::u8), ints_of({1}, {1}, DType::u8)}, {{"direction", std::string("UP")}}}, 11),
               Error);
  EXPECT_THROW(run_op({"BitwiseAnd", {testing::tensor_of({1}, {1.0}), testing::tensor_of({1}, {1.0})}}, 18), Error);
}

bool has_device(const std::string& name) {
  auto names = backend_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) return false;
  return !make_backend(name)->devices().empty();
}

// ((a ^ b) & ~c) | (a << s) >> 1 over seeded random uint8/uint32 inputs: one fused kernel on cpu
// and vulkan, compared with ref exactly (the wrap of ~ and << to the dtype included).
TEST(OpsBitwise, FusedChainMatchesRefExactly) {
  for (DType t : {DType::u8, DType::u16, DType::u32, DType::u64}) {
    SCOPED_TRACE(dtype_name(t));
    std::mt19937_64 rng(7);
    const Shape sh = {3, 17};
    std::vector<Tensor> in;
    const uint64_t mask = t == DType::u64 ? ~uint64_t{0} : (uint64_t{1} << (8 * dtype_size(t))) - 1;
    for (int k = 0; k < 4; ++k) {
      Tensor x(t, sh);
      // Shift amounts 0..79: past every width too (those give 0).
      for (int64_t i = 0; i < x.numel(); ++i) x.set_int(i, static_cast<int64_t>(k == 3 ? rng() % 80 : (rng() | 1) & mask));
      in.push_back(x);
    }
    GraphBuilder b("bits", 18);
    std::vector<int> ids;
    for (int k = 0; k < 4; ++k) ids.push_back(b.input("x" + std::to_string(k), t, sh));
    const int x = b.op("BitwiseAnd", {b.op("BitwiseXor", {ids[0], ids[1]}), b.op("BitwiseNot", {ids[2]})});
    const int l = b.op("BitShift", {ids[0], ids[3]}, {{"direction", std::string("LEFT")}});
    const int r = b.op("BitShift", {l, b.constant("one", ints_of({}, {1}, t))}, {{"direction", std::string("RIGHT")}});
    b.output(b.op("BitwiseOr", {x, r}));
    Graph g = b.build();
    const Tensor want = Session(g, "ref").run(in)[0];
    // Spot-check ref against the C++ operators on element 0.
    {
      const uint64_t m = t == DType::u64 ? ~uint64_t{0} : (uint64_t{1} << (8 * dtype_size(t))) - 1;
      const uint64_t a0 = static_cast<uint64_t>(in[0].get_int(0)) & m, b0 = static_cast<uint64_t>(in[1].get_int(0)) & m;
      const uint64_t c0 = static_cast<uint64_t>(in[2].get_int(0)) & m, s0 = static_cast<uint64_t>(in[3].get_int(0));
      const uint64_t shl = s0 >= 8 * dtype_size(t) ? 0 : (a0 << s0) & m;
      EXPECT_EQ(static_cast<uint64_t>(want.get_int(0)) & m, (((a0 ^ b0) & (~c0 & m)) | (shl >> 1)) & m);
    }
    for (const std::string backend : {"cpu", "vulkan", "cuda"}) {
      if ((backend == "vulkan" || backend == "cuda") && !has_device(backend)) continue;
      const Tensor got = Session(g, backend).run(in)[0];
      ASSERT_EQ(got.dtype(), t);
      EXPECT_EQ(0, std::memcmp(got.raw(), want.raw(), want.nbytes())) << backend;
    }
#ifdef FUSOR_HAVE_CUDA
    if (!has_device("cuda")) {  // no GPU: the generated CUDA C (fz_ishl/fz_ishr, & | ^ ~) must still compile
      const Plan p = build_plan(specialize(g, in));
      for (const KernelSpec& k : p.kernels) {
        const std::string src = cuda_kernel_source(k, p, nullptr);
        if (!src.empty()) EXPECT_NO_THROW(nvrtc_compile_check(src, kernel_identifier(k.name))) << src;
      }
    }
#endif
  }
}

}  // namespace
}  // namespace fusor
