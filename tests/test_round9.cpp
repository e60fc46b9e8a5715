// Red-team round 9 kinds (docs/redteam.md), on ref, cpu and vulkan where a device exists:
//  - external data: offset/length must be plain decimal ("0x10", "1e1", " 4" were read by their
//    leading digits); a repeated key (two locations) is refused; a NUL inside the location is
//    refused (the OS would read the path only up to it); a folder or FIFO is named as such
//    (it was "not found");
//  - data movement (Identity, Flatten, Squeeze, Unsqueeze, Split) of the small floats is a bit
//    copy on every backend (cpu rounded float8e5m2 inf through a saturating Cast to 57344), and
//    of fp16/bf16 up to NaN payloads;
//  - BitShift-28 on signed integers: arithmetic right shift, amounts < 0 or >= the width give
//    the sign fill (unsigned only before opset 28);
//  - DequantizeLinear-23's output_dtype sets y's dtype (it was ignored: y took scale's, and an
//    MX float8e8m0 scale with output_dtype=FLOAT was refused);
//  - opset 28: SpaceToDepth's mode=CRD (was ignored: DCR numbers) and Mod with fmod=0 on floats
//    (the floor form and its special cases; was refused);
//  - GlobalLpPool and MaxRoiPool run (they were refused as unknown ops);
//  - a zero-element input whose other dims are huge ([0, 2^40, 16]) gives empty outputs on every
//    backend (vulkan failed: a stride past its 32-bit index type);
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <random>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "frontend/onnx_import.h"
#include "ir/kernel_spec.h"
#include "runtime/session.h"
#include "test_util.h"
#include "onnx_test_util.h"
#ifdef FUSOR_HAVE_CUDA
#include "backends/codegen.h"
#include "backends/cuda/cuda_backend.h"
#include "ir/kernel_spec.h"
#endif

namespace fusor {
namespace {

using testing::error_of;
using testing::ints_of;
using testing::TempDir;

using testing::usable_backends;

// ---- external data ----------------------------------------------------------------------

void type(onnx::ValueInfoProto* vi, const std::string& name, int elem, const std::vector<int64_t>& dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

// y = Add(x, w), w: 4 floats stored externally under the keys given (in order), written to
// data.bin at byte 16 (bytes 0..15 hold other floats, so a misread offset shows) and other.bin.
struct ExternalModel {
  TempDir dir;
  std::string path;
  ExternalModel(const std::vector<std::pair<std::string, std::string>>& keys) {
    onnx::ModelProto m = testing::onnx_model("round9_ext");
    auto* g = m.mutable_graph();
    type(g->add_input(), "x", onnx::TensorProto::FLOAT, {4});
    auto* w = g->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(4);
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    for (const auto& [k, v] : keys) {
      auto* e = w->add_external_data();
      e->set_key(k);
      e->set_value(v);
    }
    testing::onnx_node(g, "Add", {"x", "w"}, {"y"});
    type(g->add_output(), "y", onnx::TensorProto::FLOAT, {4});
    const float data[8] = {-7.f, -7.f, -7.f, -7.f, 1.f, 2.f, 3.f, 4.f}, other[4] = {9.f, 9.f, 9.f, 9.f};
    std::ofstream(dir / "data.bin", std::ios::binary).write(reinterpret_cast<const char*>(data), sizeof data);
    std::ofstream(dir / "other.bin", std::ios::binary).write(reinterpret_cast<const char*>(other), sizeof other);
    std::string bytes;
    EXPECT_TRUE(m.SerializeToString(&bytes));
    path = dir / "model.onnx";
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
};

TEST(Round9, ExternalDataOffsetAndLengthAreDecimalOnly) {
  {  // the well-formed model loads w from byte 16 (leading zeros are still decimal)
    ExternalModel ok({{"location", "data.bin"}, {"offset", "0016"}, {"length", "16"}});
    Graph g = load_onnx(ok.path);
    const Value& w = g.values[g.find_value("w")];
    ASSERT_TRUE(w.constant.has_value());
    for (int i = 0; i < 4; ++i) EXPECT_EQ(w.constant->get(i), 1.0 + i);
  }
  // Every non-decimal spelling is one error naming the key and the value, never its leading digits.
  for (const std::string bad : {"0x10", "1e1", "16abc", " 16", "16 ", "+16", "-16", "", "1.6e1", "16\n",
                                "\xd9\xa1\xd9\xa6", "99999999999999999999"}) {
    for (const std::string key : {"offset", "length"}) {
      SCOPED_TRACE(key + "='" + printable(bad) + "'");
      std::vector<std::pair<std::string, std::string>> keys = {{"location", "data.bin"}, {"offset", "16"}, {"length", "16"}};
      (key == "offset" ? keys[1] : keys[2]).second = bad;
      ExternalModel m(keys);
      const std::string e = error_of([&] { load_onnx(m.path); });
      EXPECT_NE(e.find("[onnx] tensor 'w': external data key '" + key + "' has value '" + printable(bad) +
                       "', not a decimal integer"),
                std::string::npos)
          << e;
      EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    }
  }
}

TEST(Round9, ExternalDataDuplicateKeysAreRefused) {
  for (const std::string key : {"location", "offset", "length", "checksum"}) {
    SCOPED_TRACE(key);
    std::vector<std::pair<std::string, std::string>> keys = {{"location", "data.bin"}, {"offset", "16"}, {"length", "16"}};
    const std::string second = key == "location" ? "other.bin" : key == "checksum" ? "abc" : "0";
    if (key == "checksum") keys.push_back({"checksum", "abc"});
    keys.push_back({key, second});
    ExternalModel m(keys);
    EXPECT_NE(error_of([&] { load_onnx(m.path); }).find("external data has a duplicate '" + key + "' entry"),
              std::string::npos);
  }
}

TEST(Round9, ExternalDataLocationWithNulIsRefused) {
  for (const std::string loc : {std::string("data.bin\0../../etc/passwd", 25), std::string("\0data.bin", 9),
                                std::string("data.bin\0", 9)}) {
    ExternalModel m({{"location", loc}, {"offset", "16"}, {"length", "16"}});
    const std::string e = error_of([&] { load_onnx(m.path); });
    EXPECT_NE(e.find("[onnx] tensor 'w': external data location '" + printable(loc) + "' contains a NUL byte"),
              std::string::npos)
        << e;
    EXPECT_NE(e.find("\\x00"), std::string::npos) << e;  // shown, not cut at the NUL
  }
}

// Every code of dtype t (256 for the 8-bit floats, 16 for float4e2m1, all 65536 for fp16/bf16),
// shaped [2, 1, n / 2].
Tensor all_codes(DType t) {
  const int64_t n = dtype_size(t) == 2 ? 65536 : t == DType::f4e2m1 ? 16 : 256;
  Tensor x(t, {2, 1, n / 2});
  for (int64_t i = 0; i < n; ++i) {
    if (dtype_size(t) == 2) x.data<uint16_t>()[i] = static_cast<uint16_t>(i);
    else x.data<uint8_t>()[i] = static_cast<uint8_t>(i);
  }
  return x;
}

TEST(Round9, SmallFloatDataMovementIsABitCopy) {
  for (DType t : {DType::f8e5m2, DType::f8e5m2fnuz, DType::f8e4m3fn, DType::f8e4m3fnuz, DType::f8e8m0, DType::f4e2m1,
                  DType::f16, DType::bf16}) {
    SCOPED_TRACE(dtype_name(t));
    const Tensor x = all_codes(t);
    const int64_t half = x.shape()[2];
    GraphBuilder b("moves", 21);
    const int in = b.input("x", t, x.shape());
    b.output(b.op("Identity", {in}));
    b.output(b.op("Flatten", {in}, {{"axis", int64_t{1}}}));
    b.output(b.op("Squeeze", {in, b.constant("sq_axes", ints_of({1}, {1}))}));
    b.output(b.op("Unsqueeze", {in, b.constant("unsq_axes", ints_of({1}, {0}))}));
    for (int o : b.op_multi("Split", {in, b.constant("split", ints_of({2}, {1, 1}))}, {{"axis", int64_t{0}}}, 2))
      b.output(o);
    const Graph g = b.build();
    for (const std::string& be : usable_backends()) {
      SCOPED_TRACE(be);
      std::vector<Tensor> out;
      try {
        out = Session(g, be).run({x});
      } catch (const Unsupported& e) {
        std::printf("[  SKIPPED ] %s on %s: %s\n", dtype_name(t), be.c_str(), e.what());
        continue;
      }
      ASSERT_EQ(out.size(), 6u);
      const std::vector<Shape> shapes = {x.shape(), {2, half}, {2, half}, {1, 2, 1, half}, {1, 1, half}, {1, 1, half}};
      for (size_t k = 0; k < out.size(); ++k) {
        ASSERT_EQ(out[k].dtype(), t) << "output " << k;
        ASSERT_EQ(out[k].shape(), shapes[k]) << "output " << k;
        // Split's parts are the two halves; every other output is x's elements unchanged. The
        // small floats are copied bit for bit; fp16/bf16 too, except that a NaN may come back
        // as another NaN (their GPU/cpu copies go through fp32, which quiets or drops payloads).
        const int64_t off = k == 5 ? out[k].numel() : 0;
        const size_t es = dtype_size(t);
        int64_t bad = 0;
        for (int64_t i = 0; i < out[k].numel(); ++i) {
          const bool nan_ok = es == 2 && std::isnan(x.get(off + i)) && std::isnan(out[k].get(i));
          if (!nan_ok && std::memcmp(out[k].data<char>() + i * es,
                                     x.data<char>() + (off + i) * es, es) != 0)
            ++bad;
        }
        EXPECT_EQ(bad, 0) << "output " << k << ": elements differ from the input's";
        if (t == DType::f8e5m2 && k == 0) {  // the red-team's case by name: inf stays inf
          EXPECT_EQ(out[k].data<uint8_t>()[0x7c], 0x7c);
          EXPECT_TRUE(std::isinf(out[k].get(0x7c)) && std::isinf(out[k].get(0xfc)));
        }
      }
    }
  }
}

// Signalling and payload NaNs of f32 / f16 / bf16 through every data-movement op: bytes kept on
// every backend (cpu quieted signalling NaNs going through double; vulkan canonicalised fp16 /
// bf16 NaNs going through fp32 registers).
TEST(Round9, DataMovementKeepsNaNPayloads) {
  for (DType t : {DType::f32, DType::f16, DType::bf16}) {
    SCOPED_TRACE(dtype_name(t));
    Tensor x(t, {2, 8});
    const std::vector<uint32_t> f32 = {0x7f800001, 0xff800001, 0x7fc00000, 0x7fa5a5a5, 0xffffffff, 0x3f800000, 0x80000000, 0x7f800000};
    const std::vector<uint16_t> f16 = {0x7c01, 0xfc01, 0x7e00, 0x7d55, 0xffff, 0x3c00, 0x8000, 0x7c00};
    const std::vector<uint16_t> bf16 = {0x7f81, 0xff81, 0x7fc0, 0x7fa5, 0xffff, 0x3f80, 0x8000, 0x7f80};
    for (int64_t i = 0; i < 16; ++i) {
      if (t == DType::f32) x.data<uint32_t>()[i] = f32[i % 8] ^ (i >= 8 ? 0x2 : 0);
      else x.data<uint16_t>()[i] = (t == DType::f16 ? f16 : bf16)[i % 8] ^ (i >= 8 ? 0x2 : 0);
    }
    GraphBuilder b("nan_moves", 21);
    const int in = b.input("x", t, x.shape());
    auto i64 = [&](const std::string& n, std::vector<int64_t> v) { return b.constant(n, ints_of({static_cast<int64_t>(v.size())}, v)); };
    b.output(b.op("Identity", {in}));
    b.output(b.op("Reshape", {in, i64("shape", {4, 4})}));
    b.output(b.op("Flatten", {in}, {{"axis", int64_t{0}}}));
    b.output(b.op("Unsqueeze", {in, i64("uaxes", {0})}));
    b.output(b.op("Transpose", {in}));
    b.output(b.op("Concat", {in, in}, {{"axis", int64_t{1}}}));
    for (int o : b.op_multi("Split", {in, i64("split", {1, 1})}, {{"axis", int64_t{0}}}, 2)) b.output(o);
    b.output(b.op("Expand", {in, i64("eshape", {2, 2, 8})}));
    b.output(b.op("Slice", {in, i64("starts", {3}), i64("ends", {7}), i64("axes", {1})}));
    b.output(b.op("Gather", {in, i64("idx", {1, 0})}, {{"axis", int64_t{0}}}));
    b.output(b.op("Tile", {in, i64("reps", {1, 2})}));
    const Graph g = b.build();
    const std::vector<Tensor> want = Session(g, "ref").run({x});
    // ref against the inputs' bytes: Identity and the first Split piece.
    EXPECT_EQ(0, std::memcmp(want[0].raw(), x.raw(), x.nbytes()));
    EXPECT_EQ(0, std::memcmp(want[6].raw(), x.raw(), x.nbytes() / 2));
    for (const std::string& be : usable_backends()) {
      if (be == "ref") continue;
      const std::vector<Tensor> got = Session(g, be).run({x});
      ASSERT_EQ(got.size(), want.size());
      for (size_t k = 0; k < got.size(); ++k) EXPECT_EQ(0, std::memcmp(got[k].raw(), want[k].raw(), want[k].nbytes())) << be << " output " << k;
    }
#ifdef FUSOR_HAVE_CUDA
    {  // the CUDA copy kernels (element-to-element stores of the storage type) must compile without a GPU too
      const Plan p = build_plan(specialize(g, {x}));
      for (const KernelSpec& k : p.kernels) {
        const std::string src = cuda_kernel_source(k, p, nullptr);
        if (!src.empty()) EXPECT_NO_THROW(nvrtc_compile_check(src, kernel_identifier(k.name))) << src;
      }
    }
#endif
  }
}

// ---- BitShift-28 on signed integers ----------------------------------------------------

// The BitShift-28 text for a signed type of `bits` bits, written out directly: arithmetic
// right shift; a shift < 0 or >= bits gives the sign fill (-1 for RIGHT of a negative, else 0).
int64_t spec_shift(int64_t x, int64_t y, bool right, int bits) {
  if (y < 0 || y >= bits) return right && x < 0 ? -1 : 0;
  if (right) return x >> y;
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  uint64_t v = (static_cast<uint64_t>(x) << y) & mask;
  if (bits < 64 && (v >> (bits - 1)) & 1) v |= ~mask;  // sign-extend the wrapped result
  return static_cast<int64_t>(v);
}

std::vector<int64_t> values(const Tensor& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get_int(i));
  return v;
}

TEST(Round9, BitShiftOpset28OnSignedIntegers) {
  // The red-team's model, imported: int8 x >> y at opset 28.
  onnx::ModelProto m = testing::onnx_model("round9_shift", 8, 28);
  auto* g = m.mutable_graph();
  type(g->add_input(), "x", onnx::TensorProto::INT8, {5});
  type(g->add_input(), "y", onnx::TensorProto::INT8, {5});
  auto* n = testing::onnx_node(g, "BitShift", {"x", "y"}, {"z"});
  auto* a = n->add_attribute();
  a->set_name("direction");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s("RIGHT");
  type(g->add_output(), "z", onnx::TensorProto::INT8, {5});
  const Graph imported = testing::load_proto(m);
  for (const std::string& be : usable_backends()) {
    const Tensor z = Session(imported, be).run({ints_of({5}, {-8, -1, 5, 100, -128}, DType::i8),
                                                ints_of({5}, {1, 9, 70, -1, 3}, DType::i8)})[0];
    EXPECT_EQ(values(z), (std::vector<int64_t>{-4, -1, 0, 0, -16})) << be;
  }
  // Before opset 28 BitShift is unsigned only (its schema's type constraint).
  m.mutable_opset_import(0)->set_version(27);
  const std::string e27 = error_of([&] {
    Session(testing::load_proto(m), "ref").run({ints_of({5}, {-8, -1, 5, 100, -128}, DType::i8), ints_of({5}, {1, 9, 70, -1, 3}, DType::i8)});
  });
  EXPECT_NE(e27.find("is int8, which BitShift-11 does not allow there (it takes uint8, uint16, uint32, uint64)"), std::string::npos) << e27;

  // Seeded random values and amounts in [-70, 80) for every signed width, LEFT and RIGHT in one
  // fused kernel (Xor of both), against the spec formula on ref and exactly on cpu/vulkan.
  for (DType t : {DType::i8, DType::i16, DType::i32, DType::i64}) {
    SCOPED_TRACE(dtype_name(t));
    const int bits = static_cast<int>(8 * dtype_size(t));
    std::mt19937_64 rng(28);
    const Shape sh = {4, 33};
    Tensor x(t, sh), y(t, sh);
    for (int64_t i = 0; i < x.numel(); ++i) {
      x.set_int(i, static_cast<int64_t>(rng()) >> (64 - bits));  // any value of the type, either sign
      y.set_int(i, static_cast<int64_t>(rng() % 150) - 70);
    }
    GraphBuilder b("shifts", 28);
    const int xi = b.input("x", t, sh), yi = b.input("y", t, sh);
    const int r = b.op("BitShift", {xi, yi}, {{"direction", std::string("RIGHT")}});
    const int l = b.op("BitShift", {xi, yi}, {{"direction", std::string("LEFT")}});
    b.output(r);
    b.output(b.op("BitwiseXor", {r, l}));
    const Graph gr = b.build();
    const std::vector<Tensor> want = Session(gr, "ref").run({x, y});
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t xv = x.get_int(i), yv = y.get_int(i);
      ASSERT_EQ(want[0].get_int(i), spec_shift(xv, yv, true, bits)) << xv << " >> " << yv;
      ASSERT_EQ(want[1].get_int(i), spec_shift(xv, yv, true, bits) ^ spec_shift(xv, yv, false, bits)) << xv << ", " << yv;
    }
    for (const std::string& be : usable_backends()) {
      if (be == "ref") continue;
      const std::vector<Tensor> got = Session(gr, be).run({x, y});
      for (size_t k = 0; k < 2; ++k) {
        ASSERT_EQ(got[k].dtype(), t);
        EXPECT_EQ(0, std::memcmp(got[k].raw(), want[k].raw(), want[k].nbytes())) << be << " output " << k;
      }
    }
#ifdef FUSOR_HAVE_CUDA
    {  // no GPU here: the generated CUDA C (signed fz_ishl/fz_ishr) must still compile
      const Plan p = build_plan(specialize(gr, {x, y}));
      for (const KernelSpec& k : p.kernels) {
        const std::string src = cuda_kernel_source(k, p, nullptr);
        if (!src.empty()) EXPECT_NO_THROW(nvrtc_compile_check(src, kernel_identifier(k.name))) << src;
      }
    }
#endif
  }
}

// ---- DequantizeLinear output_dtype ------------------------------------------------------

TEST(Round9, DequantizeLinearOutputDtype) {
  std::mt19937 rng(23);
  Tensor x(DType::i8, {3, 8}), zp(DType::i8, {3});
  for (int64_t i = 0; i < x.numel(); ++i) x.set_int(i, static_cast<int64_t>(rng() % 256) - 128);
  for (int64_t i = 0; i < 3; ++i) zp.set_int(i, static_cast<int64_t>(rng() % 9) - 4);
  const Tensor scale_f32 = testing::random_tensor(DType::f32, {3}, 5, 0.01, 0.5);
  Tensor scale_e8m0(DType::f8e8m0, {3});
  for (int64_t i = 0; i < 3; ++i) scale_e8m0.set(i, std::ldexp(1.0, static_cast<int>(i) - 1));  // 0.5, 1, 2
  auto graph = [&](const Tensor& scale, int64_t od, int opset) {
    GraphBuilder b("dq", opset);
    const int xi = b.input("x", DType::i8, x.shape());
    GraphBuilder::Attrs a = {{"axis", int64_t{0}}};
    if (od) a["output_dtype"] = od;
    b.output(b.op("DequantizeLinear", {xi, b.constant("scale", scale), b.constant("zp", zp)}, a));
    return b.build();
  };
  struct Case {
    const Tensor* scale;
    int64_t od;
    DType want;
  };
  for (const Case& c : {Case{&scale_f32, 10, DType::f16}, Case{&scale_f32, 16, DType::bf16}, Case{&scale_f32, 1, DType::f32},
                        Case{&scale_e8m0, 1, DType::f32}, Case{&scale_e8m0, 10, DType::f16}}) {
    SCOPED_TRACE(std::string(dtype_name(c.scale->dtype())) + " -> " + dtype_name(c.want));
    const Graph g = graph(*c.scale, c.od, 23);
    for (const std::string& be : usable_backends()) {
      const Tensor y = Session(g, be).run({x})[0];
      ASSERT_EQ(y.dtype(), c.want) << be;
      for (int64_t i = 0; i < x.numel(); ++i) {
        const int64_t r = i / 8;
        // ONNX's reference: float32 (x - zp) * scale, then y's dtype; within one ulp of y's dtype.
        const double want = static_cast<float>(static_cast<float>(x.get_int(i) - zp.get_int(r)) * static_cast<float>(c.scale->get(r)));
        const double ulp = c.want == DType::f16 ? 1.0 / 1024 : c.want == DType::bf16 ? 1.0 / 128 : 1.0 / 8388608;
        EXPECT_NEAR(y.get(i), want, std::fabs(want) * ulp) << be << " element " << i;
      }
    }
  }
  // Before opset 23 there is no output_dtype: y keeps scale's dtype.
  EXPECT_EQ(Session(graph(scale_f32, 10, 21), "ref").run({x})[0].dtype(), DType::f32);
  // y cannot be float8e8m0 (ONNX T3): an e8m0 scale needs output_dtype, and output_dtype must be a T3 type.
  EXPECT_NE(error_of([&] { Session(graph(scale_e8m0, 0, 23), "ref").run({x}); }).find("a float8e8m0 scale needs output_dtype"),
            std::string::npos);
  EXPECT_NE(error_of([&] { Session(graph(scale_f32, 24, 23), "ref").run({x}); }).find("output_dtype 24 is not float, float16 or bfloat16"),
            std::string::npos);
}

// ---- opset 28: SpaceToDepth mode, Mod fmod=0 on floats --------------------------------

TEST(Round9, SpaceToDepthAndDepthToSpaceModes) {
  const int64_t N = 2, C = 3, H = 4, W = 6, b = 2;
  const Tensor x = testing::random_tensor(DType::f32, {N, C, H, W}, 28);
  for (const std::string mode : {"DCR", "CRD"}) {
    SCOPED_TRACE(mode);
    GraphBuilder g("s2d", 28);
    const int xi = g.input("x", DType::f32, x.shape());
    const int y = g.op("SpaceToDepth", {xi}, {{"blocksize", b}, {"mode", mode}});
    g.output(y);
    g.output(g.op("DepthToSpace", {y}, {{"blocksize", b}, {"mode", mode}}));
    const Graph gr = g.build();
    for (const std::string& be : usable_backends()) {
      const std::vector<Tensor> out = Session(gr, be).run({x});
      ASSERT_EQ(out[0].shape(), (Shape{N, C * b * b, H / b, W / b})) << be;
      // The ONNX spec's index maps, written out: channel c*b*b + bh*b + bw (CRD) or
      // (bh*b + bw)*C + c (DCR) of y holds x[n, c, h*b + bh, w*b + bw].
      for (int64_t n = 0; n < N; ++n)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t h = 0; h < H; ++h)
            for (int64_t w = 0; w < W; ++w) {
              const int64_t bh = h % b, bw = w % b;
              const int64_t oc = mode == "CRD" ? c * b * b + bh * b + bw : (bh * b + bw) * C + c;
              const int64_t yi = ((n * C * b * b + oc) * (H / b) + h / b) * (W / b) + w / b;
              const int64_t xi2 = ((n * C + c) * H + h) * W + w;
              ASSERT_EQ(out[0].get(yi), x.get(xi2)) << be << " x[" << n << "," << c << "," << h << "," << w << "]";
            }
      // DepthToSpace of the same mode gives x back.
      EXPECT_EQ(0, std::memcmp(out[1].raw(), x.raw(), x.nbytes())) << be;
    }
  }
  GraphBuilder bad("s2d_bad", 28);
  bad.output(bad.op("SpaceToDepth", {bad.input("x", DType::f32, x.shape())}, {{"blocksize", b}, {"mode", std::string("RCD")}}));
  EXPECT_NE(error_of([&] { Session(bad.build(), "ref").run({x}); }).find("mode must be 'DCR' or 'CRD', got 'RCD'"), std::string::npos);
}

TEST(Round9, ModOpset28FloorFormOnFloats) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  // The red-team's special cases (Mod-28 text), then seeded random pairs of both signs.
  std::vector<double> a = {0, -0.0, 0, -0.0, 5, -5, inf, 3, 7.5, -7.5, nan, 4, -inf, 2.5};
  std::vector<double> bv = {3, 3, -3, -3, inf, inf, 2, 0, -2, 2, 1, nan, -inf, -inf};
  const std::vector<double> want = {0, 0, -0.0, -0.0, 5, inf, nan, nan, -0.5, 0.5, nan, nan, nan, -inf};
  std::mt19937 rng(28);
  std::uniform_real_distribution<double> u(-50, 50), v(0.25, 7);
  while (a.size() < 64) a.push_back(u(rng)), bv.push_back((rng() & 1 ? 1 : -1) * v(rng));
  const int64_t n = static_cast<int64_t>(a.size());
  for (DType t : {DType::f32, DType::f64, DType::f16}) {
    SCOPED_TRACE(dtype_name(t));
    const Tensor A = testing::tensor_of({n}, a, t), B = testing::tensor_of({n}, bv, t);
    GraphBuilder g("mod", 28);
    g.output(g.op("Mod", {g.input("a", t, {n}), g.input("b", t, {n})}, {{"fmod", int64_t{0}}}));
    const Graph gr = g.build();
    for (const std::string& be : usable_backends()) {
      Tensor y;
      try {
        y = Session(gr, be).run({A, B})[0];
      } catch (const Unsupported& e) {
        std::printf("[  SKIPPED ] Mod %s on %s: %s\n", dtype_name(t), be.c_str(), e.what());
        continue;
      }
      for (int64_t i = 0; i < n; ++i) {
        const double ai = A.get(i), bi = B.get(i), yi = y.get(i);
        if (static_cast<size_t>(i) < want.size()) {
          const double w = want[static_cast<size_t>(i)];
          if (std::isnan(w)) EXPECT_TRUE(std::isnan(yi)) << be << " " << ai << " mod " << bi;
          else EXPECT_TRUE(yi == w && std::signbit(yi) == std::signbit(w)) << be << " " << ai << " mod " << bi << " = " << yi;
          continue;
        }
        // a - floor(a / b) * b: |y| < |b|, y has b's sign (or is 0), y = a - k*b for a whole k.
        const double k = (ai - yi) / bi;
        EXPECT_LT(std::fabs(yi), std::fabs(bi)) << be << " " << ai << " mod " << bi;
        EXPECT_TRUE(yi == 0 || (yi < 0) == (bi < 0)) << be << " " << ai << " mod " << bi << " = " << yi;
        EXPECT_NEAR(k, std::round(k), t == DType::f16 ? 1e-2 : 1e-5) << be << " " << ai << " mod " << bi << " = " << yi;
      }
    }
#ifdef FUSOR_HAVE_CUDA
    {  // no GPU here: the generated CUDA C (fz_fmod_floor) must still compile
      const Plan p = build_plan(specialize(gr, {A, B}));
      for (const KernelSpec& k : p.kernels) {
        const std::string src = cuda_kernel_source(k, p, nullptr);
        if (!src.empty()) EXPECT_NO_THROW(nvrtc_compile_check(src, kernel_identifier(k.name))) << src;
      }
    }
#endif
  }
  GraphBuilder old("mod27", 27);
  old.output(old.op("Mod", {old.input("a", DType::f32, {2}), old.input("b", DType::f32, {2})}));
  EXPECT_NE(error_of([&] { Session(old.build(), "ref").run({testing::tensor_of({2}, {1, 2}), testing::tensor_of({2}, {3, 3})}); })
                .find("floating-point Mod needs fmod=1 before opset 28"),
            std::string::npos);
}

// ---- GlobalLpPool (was an unsupported op) ------------------------------------------------

TEST(Round9, GlobalLpPool) {
  const Tensor x = testing::random_tensor(DType::f32, {2, 3, 4, 5}, 11, -2.0, 2.0);
  for (int64_t p : {1, 2, 3}) {
    SCOPED_TRACE("p=" + std::to_string(p));
    GraphBuilder b("glp", 17);
    GraphBuilder::Attrs a;
    if (p != 2) a["p"] = p;  // 2 is the default
    b.output(b.op("GlobalLpPool", {b.input("x", DType::f32, x.shape())}, a));
    const Graph g = b.build();
    for (const std::string& be : usable_backends()) {
      const Tensor y = Session(g, be).run({x})[0];
      ASSERT_EQ(y.shape(), (Shape{2, 3, 1, 1})) << be;
      for (int64_t c = 0; c < 6; ++c) {
        double acc = 0;
        for (int64_t i = 0; i < 20; ++i) acc += std::pow(std::fabs(x.get(c * 20 + i)), static_cast<double>(p));
        const double want = std::pow(acc, 1.0 / static_cast<double>(p));
        EXPECT_NEAR(y.get(c), want, 1e-5 * want) << be << " channel " << c;
      }
    }
  }
}

// MaxRoiPool (also refused before): onnxruntime's RoI pooling, by hand on a 4 x 4 ramp.
TEST(Round9, MaxRoiPool) {
  std::vector<double> ramp(16);
  for (int i = 0; i < 16; ++i) ramp[static_cast<size_t>(i)] = i;  // x[h][w] = 4h + w
  const Tensor x = testing::tensor_of({1, 1, 4, 4}, ramp);
  auto run = [&](std::vector<double> rois, std::vector<int64_t> pooled, double scale, const std::string& be) {
    const int64_t r = static_cast<int64_t>(rois.size() / 5);
    GraphBuilder b("mrp", 22);
    b.output(b.op("MaxRoiPool", {b.input("x", DType::f32, x.shape()), b.input("rois", DType::f32, {r, 5})},
                  {{"pooled_shape", pooled}, {"spatial_scale", scale}}));
    return Session(b.build(), be).run({x, testing::tensor_of({r, 5}, rois)})[0];
  };
  for (const std::string& be : usable_backends()) {
    SCOPED_TRACE(be);
    // The whole image in 2 x 2 bins; a 2 x 2 box (ends inclusive) in one bin; a box past the image
    // (an empty bin: 0).
    testing::expect_values(run({0, 0, 0, 3, 3}, {2, 2}, 1.0, be), {5, 7, 13, 15});
    testing::expect_values(run({0, 1, 1, 2, 2, 0, 10, 10, 12, 12}, {1, 1}, 1.0, be), {10, 0});
    // spatial_scale 0.5: [2, 2, 6, 6] is rows / columns 1..3; 2.5 * 0.5 = 1.25 rounds to 1.
    testing::expect_values(run({0, 2, 2, 6, 6, 0, 2.5, 0, 2.5, 0}, {1, 1}, 0.5, be), {15, 1});
  }
  EXPECT_NE(error_of([&] { run({1, 0, 0, 3, 3}, {1, 1}, 1.0, "ref"); }).find("batch index 1 of roi 0 is outside [0, 1)"),
            std::string::npos);
}

// ---- empty tensors with a huge dim ------------------------------------------------------

TEST(Round9, EmptyInputWithAHugeDimGivesEmptyOutputsEverywhere) {
  const int64_t S = int64_t{1} << 40;
  GraphBuilder b("empty_huge", 18);
  const int x = b.input("x", DType::f32, {0, S, 16});
  const int z = b.input("z", DType::f32, {5});
  const int y = b.op("Softmax", {b.op("MatMul", {x, b.constant("w", testing::random_tensor(DType::f32, {16, 8}, 4))})},
                     {{"axis", int64_t{-1}}});
  b.output(y);
  b.output(b.op("ReduceMax", {y, b.constant("ax", ints_of({1}, {1}))}, {{"keepdims", int64_t{1}}}));
  b.output(b.op("Mul", {z, z}));  // a non-empty output beside them still computes
  const Graph g = b.build();
  const Tensor zv = testing::random_tensor(DType::f32, {5}, 9);
  for (const std::string& be : usable_backends()) {
    SCOPED_TRACE(be);
    const std::vector<Tensor> out = Session(g, be).run({Tensor(DType::f32, {0, S, 16}), zv});
    EXPECT_EQ(out[0].shape(), (Shape{0, S, 8}));
    EXPECT_EQ(out[1].shape(), (Shape{0, 1, 8}));
    for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(out[2].get(i), static_cast<double>(static_cast<float>(zv.get(i) * zv.get(i))));
  }
  // The plan keeps no kernel that would write nothing.
  const Plan p = build_plan(specialize(g, {Tensor(DType::f32, {0, S, 16}), zv}));
  EXPECT_EQ(p.kernels.size(), 1u);
}

// The same kind in QuantizeLinear-23: its `precision` attribute (the division's dtype) was ignored.
TEST(Round9, QuantizeLinearPrecision) {
  // 101.47 / 1 is 101.47 in float32 (rounds to 101) but 101.5 in float16 (rounds half to even: 102).
  const Tensor x = testing::tensor_of({4}, {101.47, -3.7, 0.2, 50.96}), scale = testing::tensor_of({}, {1.0});
  auto run = [&](int64_t precision, int opset) {
    GraphBuilder b("q", opset);
    GraphBuilder::Attrs a;
    if (precision) a["precision"] = precision;
    b.output(b.op("QuantizeLinear", {b.input("x", DType::f32, {4}), b.constant("s", scale), b.constant("zp", ints_of({}, {0}, DType::i8))}, a));
    return Session(b.build(), "ref").run({x})[0];
  };
  auto ints = [](const Tensor& t) {
    std::vector<int64_t> v;
    for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get_int(i));
    return v;
  };
  EXPECT_EQ(ints(run(0, 23)), (std::vector<int64_t>{101, -4, 0, 51}));
  EXPECT_EQ(ints(run(1, 23)), (std::vector<int64_t>{101, -4, 0, 51}));   // float: as without it
  EXPECT_EQ(ints(run(10, 23)), (std::vector<int64_t>{102, -4, 0, 51}));  // float16 division
  EXPECT_NE(error_of([&] { run(6, 23); }).find("precision 6 is not float, float16, bfloat16 or double"), std::string::npos);
}

}  // namespace
}  // namespace fusor
