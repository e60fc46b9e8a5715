// Batched NVRTC compilation (backends/cuda/nvrtc_batch.h), no GPU needed: the CUDA sources of
// real plans (shared models, fp16/bf16 graphs) compile batched with every kernel present in the
// CUBIN and its machine code equal to the lone compile's; a broken kernel is named whatever the
// grouping; batches that only break together fall back to one program per kernel; the disk
// cache is hit by a warm call. DISABLED_ColdCompileTime is the measurement harness.
#ifdef FUSOR_HAVE_CUDA
#include <elf.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "backends/compile_pool.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/nvrtc_batch.h"
#include "frontend/builder.h"
#include "ir/passes.h"
#include "runtime/disk_cache.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {
namespace fs = std::filesystem;
using testing::error_of;
using testing::ScopedEnv;
using testing::TempDir;

// Sections of an ELF64 CUBIN by name (".text.<kernel>" holds a kernel's machine code,
// ".nv.shared.<kernel>" its static shared memory, as a size), its symbol names and each
// function's register count (EIATTR_REGCOUNT records of ".nv.info": format 4, attribute 0x2f,
// payload u32 symbol index, u32 count); empty on anything malformed.
struct Section {
  std::string bytes;
  uint64_t size = 0;
};
struct Elf {
  std::map<std::string, Section> sections;
  std::set<std::string> symbols;
  std::map<std::string, uint32_t> registers;
  std::map<uint64_t, std::string> bank4;  // constant bank 4 slot (byte offset) -> global it addresses
};
Elf read_elf(const std::vector<char>& b) {
  Elf e;
  if (b.size() < sizeof(Elf64_Ehdr) || std::memcmp(b.data(), ELFMAG, SELFMAG) != 0 || b[EI_CLASS] != ELFCLASS64)
    return e;
  Elf64_Ehdr h;
  std::memcpy(&h, b.data(), sizeof h);
  if (h.e_shoff + uint64_t{h.e_shnum} * sizeof(Elf64_Shdr) > b.size() || h.e_shstrndx >= h.e_shnum) return e;
  std::vector<Elf64_Shdr> sh(h.e_shnum);
  std::memcpy(sh.data(), b.data() + h.e_shoff, sh.size() * sizeof(Elf64_Shdr));
  auto bytes = [&](const Elf64_Shdr& s) {
    if (s.sh_type == SHT_NOBITS || s.sh_offset + s.sh_size > b.size()) return std::string();
    return std::string(b.data() + s.sh_offset, s.sh_size);
  };
  const std::string names = bytes(sh[h.e_shstrndx]);
  std::vector<std::string> by_index;
  for (auto& s : sh) {
    if (s.sh_name < names.size()) e.sections[names.c_str() + s.sh_name] = {bytes(s), s.sh_size};
    if (s.sh_type != SHT_SYMTAB || s.sh_link >= sh.size()) continue;
    const std::string syms = bytes(s), str = bytes(sh[s.sh_link]);
    for (size_t o = 0; o + sizeof(Elf64_Sym) <= syms.size(); o += sizeof(Elf64_Sym)) {
      Elf64_Sym y;
      std::memcpy(&y, syms.data() + o, sizeof y);
      by_index.push_back(y.st_name && y.st_name < str.size() ? str.c_str() + y.st_name : "");
      if (!by_index.back().empty()) e.symbols.insert(by_index.back());
    }
  }
  // Module globals are addressed through constant bank 4, whose slots the relocations fill.
  const std::string rel = e.sections.count(".rela.nv.constant4") ? e.sections.at(".rela.nv.constant4").bytes : "";
  for (size_t o = 0; o + sizeof(Elf64_Rela) <= rel.size(); o += sizeof(Elf64_Rela)) {
    Elf64_Rela x;
    std::memcpy(&x, rel.data() + o, sizeof x);
    if (ELF64_R_SYM(x.r_info) < by_index.size()) e.bank4[x.r_offset] = by_index[ELF64_R_SYM(x.r_info)];
  }
  const std::string info = e.sections.count(".nv.info") ? e.sections.at(".nv.info").bytes : "";
  for (size_t o = 0; o + 4 <= info.size();) {
    const uint8_t fmt = static_cast<uint8_t>(info[o]), attr = static_cast<uint8_t>(info[o + 1]);
    uint16_t len = 0;
    std::memcpy(&len, info.data() + o + 2, 2);
    if (fmt == 4 && attr == 0x2f && len == 8 && o + 12 <= info.size()) {
      uint32_t sym = 0, count = 0;
      std::memcpy(&sym, info.data() + o + 4, 4);
      std::memcpy(&count, info.data() + o + 8, 4);
      if (sym < by_index.size()) e.registers[by_index[sym]] = count;
    }
    o += 4 + (fmt == 4 ? len : 0);
  }
  return e;
}

// "" when kernel k's machine code in `batched` (where it is piece N of the program) is the
// lone compile's, instruction for instruction, except where it reads the address of one of its
// own module globals (e.g. the split-K workspace) from constant bank 4: that slot moves when
// several kernels' globals share the module, so the instruction may differ only in its
// constant offset (bits 40-53 of the low word, in 4-byte units; bank in bits 54-58), and the
// two slots must address the same global: `X` alone, `fz_pN::X` (mangled) batched.
std::string code_difference(const Elf& alone, const Elf& batched, const std::string& k, size_t piece) {
  const std::string sec = ".text." + k;
  if (!alone.sections.count(sec) || !batched.sections.count(sec)) return "no " + sec;
  const std::string& a = alone.sections.at(sec).bytes;
  const std::string& b = batched.sections.at(sec).bytes;
  if (a.size() != b.size() || a.size() % 16)
    return "sizes " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
  const std::string ns = "fz_p" + std::to_string(piece);
  for (size_t o = 0; o < a.size(); o += 16) {
    uint64_t lo[2], hi[2];
    std::memcpy(&lo[0], a.data() + o, 8), std::memcpy(&hi[0], a.data() + o + 8, 8);
    std::memcpy(&lo[1], b.data() + o, 8), std::memcpy(&hi[1], b.data() + o + 8, 8);
    if (lo[0] == lo[1] && hi[0] == hi[1]) continue;
    const uint64_t field = uint64_t{0x3fff} << 40;
    const std::string at = "instruction at " + std::to_string(o);
    if (hi[0] != hi[1] || (lo[0] & ~field) != (lo[1] & ~field) || ((lo[0] >> 54) & 0x1f) != 4) return at + " differs";
    auto slot = [](uint64_t w) { return ((w >> 40) & 0x3fff) * 4; };
    auto ga = alone.bank4.find(slot(lo[0])), gb = batched.bank4.find(slot(lo[1]));
    if (ga == alone.bank4.end() || gb == batched.bank4.end()) return at + ": constant bank 4 slot without a global";
    const std::string want =
        "_ZN" + std::to_string(ns.size()) + ns + std::to_string(ga->second.size()) + ga->second + "E";
    if (gb->second != want) return at + ": reads " + gb->second + " where alone it reads " + ga->second;
  }
  return "";
}

struct Sources {
  std::vector<std::string> names, sources;
};
// nonempty: without the kernels cuBLASLt / cuDNN run entirely ("" sources).
Sources sources_of(const Plan& p, bool nonempty = false) {
  Sources s;
  for (auto& [n, src] : cuda_generate_sources(p))
    if (!nonempty || !src.empty()) s.names.push_back(n), s.sources.push_back(src);
  return s;
}

fs::path shared_dir() {
  if (const char* s = std::getenv("FUSOR_SHARED"); s && *s) return s;
  return fs::path(FUSOR_SOURCE_DIR) / ".." / "shared";
}
Sources model_sources(const std::string& m) {
  const fs::path path = shared_dir() / "models" / m / "model.onnx";
  if (!fs::exists(path)) return {};
  Graph g = load_model(path.string());
  return sources_of(build_plan(specialize(g, random_inputs(g, 1))));
}

// Row, loop, GEMV, tiled/split-K GEMM (or its library epilogue), conv and pooling kernels in
// dtype t (fp16/bf16: storage types with the conversions of every generator).
Sources typed_sources(DType t, bool nonempty = true) {
  // sm @ w2 stays a GEMV kernel (the split-K checks below count it), not the Softmax's row product.
  ScopedEnv own_kernel("FUSOR_ROW_PRODUCT", "0");
  GraphBuilder b;
  // K = 512 > kMaxInlineDotK: x @ w stays a GEMV kernel even with FUSOR_INLINE_DOT=1.
  int x = b.input("x", t, {4, 512});
  int w = b.constant("w", testing::random_tensor(t, {512, 96}, 3));
  int w2 = b.constant("w2", testing::random_tensor(t, {96, 64}, 4));
  int h = b.op("Tanh", {b.op("MatMul", {x, w})});
  int sm = b.op("Softmax", {b.op("Mul", {h, h})}, {{"axis", int64_t{1}}});
  b.output(b.op("MatMul", {sm, w2}));
  int big = b.input("big", t, {128, 512});
  int wb = b.constant("wb", testing::random_tensor(t, {512, 128}, 5));
  b.output(b.op("Relu", {b.op("MatMul", {big, wb})}));
  int img = b.input("img", t, {1, 8, 12, 12});
  int wc = b.constant("wc", testing::random_tensor(t, {16, 8, 3, 3}, 6));
  int c = b.op("Conv", {img, wc}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  b.output(b.op("MaxPool", {b.op("Sigmoid", {c})},
                {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}}));
  b.output(b.op("ReduceMean", {img}, {{"axes", std::vector<int64_t>{2, 3}}}));
  Graph g = b.build();
  make_static(g, {});
  return sources_of(build_plan(g), nonempty);
}

// Every non-empty source in exactly one unit, its name a symbol of that unit's CUBIN, and its
// .text identical to the kernel compiled alone (same options, so the same machine code).
void expect_batched_like_alone(const Sources& s, const std::string& what, int threads) {
  SCOPED_TRACE(what);
  const auto plan = nvrtc_batch_plan(s.names, s.sources, threads, 0);
  size_t kernels = 0, widest = 0;
  for (size_t i = 0; i < s.sources.size(); ++i) kernels += !s.sources[i].empty();
  for (auto& g : plan) widest = std::max(widest, g.size());
  EXPECT_GT(widest, 1u) << "nothing batched";
  const std::vector<NvrtcUnit> units = nvrtc_compile_batched(s.names, s.sources, "sm_90", plan);
  std::vector<int> covered(s.sources.size(), 0);
  for (const NvrtcUnit& u : units) {
    const Elf e = read_elf(u.cubin);
    for (size_t k : u.kernels) {
      ++covered[k];
      EXPECT_TRUE(e.symbols.count(s.names[k])) << s.names[k] << " is not in its CUBIN";
      if (u.kernels.size() < 2) continue;
      const Elf alone = read_elf(nvrtc_cubin(s.sources[k], s.names[k], "sm_90"));
      // Machine code, then its resource records (registers, barriers, parameter layout),
      // static shared memory and parameter bank where the lone CUBIN has them.
      const std::string text = ".text." + s.names[k];
      ASSERT_TRUE(alone.sections.count(text) && e.sections.count(text)) << text;
      const size_t piece = std::find(u.kernels.begin(), u.kernels.end(), k) - u.kernels.begin();
      EXPECT_EQ(code_difference(alone, e, s.names[k], piece), "") << s.names[k] << ": machine code differs batched";
      ASSERT_TRUE(alone.registers.count(s.names[k])) << s.names[k] << ": no register count";
      EXPECT_EQ(e.registers.at(s.names[k]), alone.registers.at(s.names[k])) << s.names[k] << ": registers";
      EXPECT_GT(alone.registers.at(s.names[k]), 0u) << s.names[k];
      for (const char* sec : {".nv.shared.", ".nv.constant0."}) {
        const std::string n = sec + s.names[k];
        ASSERT_EQ(e.sections.count(n), alone.sections.count(n)) << n;
        if (alone.sections.count(n)) EXPECT_EQ(e.sections.at(n).size, alone.sections.at(n).size) << n;
      }
    }
  }
  size_t total = 0;
  for (size_t i = 0; i < s.sources.size(); ++i) {
    EXPECT_EQ(covered[i], s.sources[i].empty() ? 0 : 1) << s.names[i];
    total += covered[i];
  }
  EXPECT_EQ(total, kernels);
}

// NVRTC compiles here but the disk cache would make the "alone" compiles free and hide
// nothing; each test uses a fresh cache folder.
TEST(CudaNvrtcBatch, ModelKernelsCompileBatched) {
  TempDir t;
  ScopedEnv env("XDG_CACHE_HOME", t.path.string().c_str());
  int models = 0;
  for (const char* m : {"mlp_block", "gpt2_tiny", "squeezenet1_1"}) {
    Sources s = model_sources(m);
    if (s.sources.empty()) continue;
    ++models;
    expect_batched_like_alone(s, m, 2);
  }
  if (models == 0) GTEST_SKIP() << "no shared models under " << shared_dir();
}

TEST(CudaNvrtcBatch, HalfKernelsCompileBatched) {
  TempDir t;
  ScopedEnv env("XDG_CACHE_HOME", t.path.string().c_str());
  for (DType d : {DType::f16, DType::bf16}) {
    // bf16 with both GEMVs split over K: two kernels' workspaces and counters in one module.
    ScopedEnv gemv("FUSOR_CUDA_GEMV", d == DType::bf16 ? "new" : nullptr);
    ScopedEnv split("FUSOR_CUDA_GEMV_SPLIT", d == DType::bf16 ? "4" : nullptr);
    Sources s = typed_sources(d);
    ASSERT_GE(s.sources.size(), 5u);
    if (d == DType::bf16)
      ASSERT_GE(std::count_if(s.sources.begin(), s.sources.end(),
                              [](const std::string& t) {
                                const size_t at = t.find("#define FZ_SPLITS ");
                                return at != std::string::npos && std::atoi(t.c_str() + at + 18) > 1;
                              }),
                2);
    expect_batched_like_alone(s, dtype_name(d), 1);
  }
}

// Grouping: FUSOR_NVRTC_BATCH's cap, unbatchable and same-named kernels alone, determinism.
TEST(CudaNvrtcBatch, Plan) {
  Sources s = typed_sources(DType::f16);
  const size_t n = s.sources.size();
  auto count = [](const std::vector<std::vector<size_t>>& p) {
    size_t c = 0;
    for (auto& g : p) c += g.size();
    return c;
  };
  for (int threads : {1, 2, 3, 16}) {
    auto p = nvrtc_batch_plan(s.names, s.sources, threads, 0);
    EXPECT_EQ(p.size(), std::min<size_t>(n, threads));
    EXPECT_EQ(count(p), n);
    EXPECT_EQ(p, nvrtc_batch_plan(s.names, s.sources, threads, 0));
    for (size_t g = 1; g < p.size(); ++g) EXPECT_LT(p[g - 1].front(), p[g].front());
  }
  EXPECT_EQ(nvrtc_batch_plan(s.names, s.sources, 2, 1).size(), n);  // FUSOR_NVRTC_BATCH=0/1
  for (auto& g : nvrtc_batch_plan(s.names, s.sources, 1, 2)) EXPECT_LE(g.size(), 2u);
  {
    ScopedEnv e("FUSOR_NVRTC_BATCH", "0");
    EXPECT_EQ(nvrtc_batch_limit(), 1);
  }
  {
    ScopedEnv e("FUSOR_NVRTC_BATCH", "8");
    EXPECT_EQ(nvrtc_batch_limit(), 8);
  }
  {
    ScopedEnv e("FUSOR_NVRTC_BATCH", nullptr);
    EXPECT_EQ(nvrtc_batch_limit(), 0);
  }
  // A global `::` name, an #include under #if, a name two kernels share: each alone.
  Sources odd = s;
  odd.sources[0] = "extern \"C\" __global__ void k0(float* x) { x[0] = ::fabsf(x[0]); }\n";
  odd.sources[1] = "#define A 1\n#include <cuda_fp16.h>\n" + s.sources[1];
  odd.names[3] = odd.names[2];
  EXPECT_FALSE(nvrtc_batchable(odd.sources[0]));
  EXPECT_FALSE(nvrtc_batchable(odd.sources[1]));
  EXPECT_TRUE(
      nvrtc_batchable("extern \"C\" __global__ void k(float* x) { x[0] = std::numeric_limits<float>::max(); }"));
  for (auto& g : nvrtc_batch_plan(odd.names, odd.sources, 1, 0))
    for (size_t k : {0, 1, 2, 3})
      if (std::count(g.begin(), g.end(), k)) EXPECT_EQ(g.size(), 1u) << "kernel " << k;
  // The batch text undefines what each piece defined and keeps one copy of each include.
  std::vector<size_t> all(n);
  for (size_t i = 0; i < n; ++i) all[i] = i;
  const std::string text = nvrtc_batch_source(s.sources, all);
  size_t includes = 0;
  for (size_t at = text.find("#include <cuda_fp16.h>"); at != std::string::npos;
       at = text.find("#include <cuda_fp16.h>", at + 1))
    ++includes;
  EXPECT_EQ(includes, 1u);
  EXPECT_LT(text.find("#include <cuda_fp16.h>"), text.find("namespace fz_p0"));
  EXPECT_NE(text.find("}  // namespace fz_p" + std::to_string(n - 1) + "\n#undef FZ_FN\n"), std::string::npos);
  EXPECT_EQ(nvrtc_batch_source(s.sources, {2}), s.sources[2]);
}

// A broken kernel in a batch: the error is the one its own program gives, for the first broken
// kernel in plan order, whatever the grouping; batches that fail only together fall back.
TEST(CudaNvrtcBatch, BrokenKernelIsNamed) {
  ScopedEnv nocache("FUSOR_NO_DISK_CACHE", "1");
  Sources s = typed_sources(DType::f32);
  ASSERT_GE(s.sources.size(), 5u);
  Sources bad = s;
  for (size_t k : {size_t{2}, size_t{4}}) bad.sources[k] += "fz_no_such_type_" + std::to_string(k) + " fz_broken;\n";
  const std::string want = error_of([&] { nvrtc_cubin(bad.sources[2], bad.names[2], "sm_90"); });
  ASSERT_NE(want.find("kernel " + bad.names[2]), std::string::npos) << want;
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE(threads);
    const auto plan = nvrtc_batch_plan(bad.names, bad.sources, threads, 0);
    EXPECT_EQ(error_of([&] { nvrtc_compile_batched(bad.names, bad.sources, "sm_90", plan); }), want);
  }
  // The group holding the later broken kernel comes first: still kernel 2's error.
  std::vector<std::vector<size_t>> mixed = {{0, 4}, {1, 2, 3}};
  for (size_t k = 5; k < bad.sources.size(); ++k) mixed.push_back({k});
  EXPECT_EQ(error_of([&] { nvrtc_compile_batched(bad.names, bad.sources, "sm_90", mixed); }), want);
  // Two kernels that each compile alone but define the same extern "C" symbol: the batch
  // fails, every kernel compiles alone, so the result is one unit per kernel, not an error.
  Sources clash = s;
  for (size_t k : {size_t{0}, size_t{1}})
    clash.sources[k] = "extern \"C\" __device__ int fz_clash = 1;\n" + clash.sources[k];
  const auto plan = nvrtc_batch_plan(clash.names, clash.sources, 1, 0);
  ASSERT_EQ(plan.size(), 1u);
  std::vector<NvrtcUnit> units;
  ASSERT_EQ(error_of([&] { units = nvrtc_compile_batched(clash.names, clash.sources, "sm_90", plan); }), "");
  EXPECT_EQ(units.size(), clash.sources.size());
  for (size_t i = 0; i < units.size(); ++i) {
    EXPECT_EQ(units[i].kernels, std::vector<size_t>{i});
    EXPECT_TRUE(read_elf(units[i].cubin).symbols.count(clash.names[i]));
  }
}

// One entry per program keyed by its text; a warm call reads it (a planted payload comes back),
// nvrtc_recompile skips the read and stores the real CUBIN over it.
TEST(CudaNvrtcBatch, DiskCacheHit) {
  TempDir t;
  ScopedEnv env("XDG_CACHE_HOME", t.path.string().c_str());
  ScopedEnv on("FUSOR_NO_DISK_CACHE", nullptr);
  Sources s = typed_sources(DType::f32);
  const auto plan = nvrtc_batch_plan(s.names, s.sources, 2, 0);
  ASSERT_EQ(plan.size(), 2u);
  const std::vector<NvrtcUnit> cold = nvrtc_compile_batched(s.names, s.sources, "sm_90", plan);
  ASSERT_EQ(cold.size(), 2u);
  const fs::path dir = t.path / "fusor" / "cuda";
  size_t files = 0;
  for (auto& e : fs::directory_iterator(dir)) files += e.path().extension() == ".cubin";
  EXPECT_EQ(files, 2u);
  const DiskCache cache(dir.string(), ".cubin");
  for (auto& u : cold) {
    auto hit = cache.load(nvrtc_cache_key(u.source, "sm_90"));
    ASSERT_TRUE(hit);
    EXPECT_EQ(std::vector<char>(hit->begin(), hit->end()), u.cubin);
  }
  ASSERT_TRUE(cache.store(nvrtc_cache_key(cold[0].source, "sm_90"), "planted"));
  std::vector<NvrtcUnit> warm = nvrtc_compile_batched(s.names, s.sources, "sm_90", plan);
  ASSERT_EQ(warm.size(), 2u);
  EXPECT_EQ(std::string(warm[0].cubin.begin(), warm[0].cubin.end()), "planted");
  EXPECT_EQ(warm[1].cubin, cold[1].cubin);
  nvrtc_recompile(warm[0], "sm_90");
  EXPECT_EQ(warm[0].cubin, cold[0].cubin);
  auto fixed = cache.load(nvrtc_cache_key(cold[0].source, "sm_90"));
  ASSERT_TRUE(fixed);
  EXPECT_EQ(std::vector<char>(fixed->begin(), fixed->end()), cold[0].cubin);
  // FUSOR_NVRTC_BATCH=0: one program per kernel, each its own source (the pre-batching cache
  // entries), one more entry per kernel.
  ScopedEnv off("FUSOR_NVRTC_BATCH", "0");
  const std::vector<NvrtcUnit> alone = nvrtc_compile_batched(s.names, s.sources, "sm_90");
  ASSERT_EQ(alone.size(), s.sources.size());
  for (size_t i = 0; i < alone.size(); ++i) {
    EXPECT_EQ(alone[i].kernels, std::vector<size_t>{i});
    EXPECT_EQ(alone[i].source, s.sources[i]);
    EXPECT_TRUE(read_elf(alone[i].cubin).symbols.count(s.names[i]));
  }
  files = 0;
  for (auto& e : fs::directory_iterator(dir)) files += e.path().extension() == ".cubin";
  EXPECT_EQ(files, 2u + s.sources.size());
}

// Measurement (run with --gtest_also_run_disabled_tests): cold NVRTC wall time of a model's
// kernels (best of FUSOR_NVRTC_TIMING_REPS, default 3) and the process CPU time of that run,
// one program per kernel (FUSOR_NVRTC_BATCH=0), the automatic plan, then 2x and 4x as many
// programs (capped groups), on FUSOR_COMPILE_THREADS threads, no disk cache.
TEST(CudaNvrtcBatch, DISABLED_ColdCompileTime) {
  ScopedEnv nocache("FUSOR_NO_DISK_CACHE", "1");
  const char* r = std::getenv("FUSOR_NVRTC_TIMING_REPS");
  const int reps = r ? std::max(1, std::atoi(r)) : 3;
  auto cpu = [] {
    rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  };
  for (const char* m : {"mobilenet_v3_small", "squeezenet1_1"}) {
    Sources s = model_sources(m);
    if (s.sources.empty()) continue;
    size_t kernels = 0;
    for (auto& src : s.sources) kernels += !src.empty();
    const int threads = compile_threads();
    for (int limit : {1, 0, static_cast<int>((kernels + 2 * threads - 1) / (2 * threads)),
                      static_cast<int>((kernels + 4 * threads - 1) / (4 * threads))}) {
      const auto plan = nvrtc_batch_plan(s.names, s.sources, threads, limit);
      double best = 1e30, best_cpu = 0;
      for (int i = 0; i < reps; ++i) {
        const double c0 = cpu();
        const auto t0 = std::chrono::steady_clock::now();
        nvrtc_compile_batched(s.names, s.sources, "sm_90", plan);
        const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (sec < best) best = sec, best_cpu = cpu() - c0;
      }
      std::printf("%s: %zu kernels, %zu programs on %d threads: %.3f s wall (best of %d), %.3f s CPU\n", m, kernels,
                  plan.size(), threads, best, reps, best_cpu);
    }
  }
}

}  // namespace
}  // namespace fusor
#endif
