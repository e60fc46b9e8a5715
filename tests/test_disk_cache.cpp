// Kernel caches are verified, not trusted (runtime/disk_cache.h): the shared entry format
// directly, then the Vulkan SPIR-V and pipeline caches (lavapipe) and the CUDA CUBIN cache
// (NVRTC only; no GPU needed) under every kind of damage: truncation, bit flips, two entries
// swapped, an entry replaced by a directory, a FIFO or a symlink to /dev/zero.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "ir/passes.h"
#include "runtime/disk_cache.h"
#include "runtime/session.h"
#include "runtime/tensor_io.h"
#include "fuzz_harness.h"
#include "test_util.h"
#ifdef FUSOR_HAVE_CUDA
#include "backends/cuda/cuda_backend.h"
#endif

namespace fusor {
namespace {
namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("fusor_cache_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void spit(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::vector<fs::path> entries(const fs::path& dir, const std::string& ext) {
  std::vector<fs::path> out;
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ext) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// The damage kinds every cache must survive. Applies kind to `files` (two entries at least).
enum class Damage { truncate, bitflip, swap, directory, fifo, dev_zero, garbage };
const Damage kAllDamage[] = {Damage::truncate, Damage::bitflip, Damage::swap, Damage::directory,
                             Damage::fifo, Damage::dev_zero, Damage::garbage};
const char* damage_name(Damage d) {
  switch (d) {
    case Damage::truncate: return "truncate";
    case Damage::bitflip: return "bitflip";
    case Damage::swap: return "swap";
    case Damage::directory: return "directory";
    case Damage::fifo: return "fifo";
    case Damage::dev_zero: return "symlink to /dev/zero";
    case Damage::garbage: return "garbage";
  }
  return "?";
}
void damage(Damage d, const std::vector<fs::path>& files, uint64_t seed) {
  ASSERT_GE(files.size(), 2u);
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < files.size(); ++i) {
    const fs::path& f = files[i];
    std::string bytes = slurp(f);
    if (bytes.empty()) bytes = "x";  // keep the arithmetic below defined for an empty entry
    switch (d) {
      case Damage::truncate: spit(f, bytes.substr(0, rng() % std::max<size_t>(bytes.size(), 1))); break;
      case Damage::bitflip: {
        for (int k = 0; k < 3; ++k) bytes[rng() % bytes.size()] ^= static_cast<char>(1u << (rng() % 8));
        spit(f, bytes);
        break;
      }
      case Damage::swap:
        if (i % 2 == 1) {
          std::string other = slurp(files[i - 1]);
          spit(files[i - 1], bytes);
          spit(f, other);
        }
        break;
      case Damage::directory: fs::remove(f); fs::create_directory(f); break;
      case Damage::fifo: fs::remove(f); ASSERT_EQ(::mkfifo(f.c_str(), 0644), 0); break;
      case Damage::dev_zero: fs::remove(f); fs::create_symlink("/dev/zero", f); break;
      case Damage::garbage: {
        std::string g(bytes.size(), '\0');
        for (auto& c : g) c = static_cast<char>(rng());
        spit(f, g);
        break;
      }
    }
  }
}

// ---- the entry format itself --------------------------------------------------------------

TEST(DiskCache, RoundTripAndEveryDamageIsAMiss) {
  TempDir t;
  DiskCache c(t.path.string() + "/sub/dir", ".bin");  // created on first store
  ASSERT_TRUE(c.store("key A", "payload A"));
  ASSERT_TRUE(c.store("key B", std::string("payload\0B", 9)));
  EXPECT_EQ(c.load("key A"), "payload A");
  EXPECT_EQ(c.load("key B"), std::string("payload\0B", 9));
  EXPECT_EQ(c.load("key C"), std::nullopt);
  for (Damage d : kAllDamage) {
    ASSERT_TRUE(c.store("key A", "payload A"));
    ASSERT_TRUE(c.store("key B", std::string("payload\0B", 9)));
    damage(d, {c.path_for("key A"), c.path_for("key B")}, static_cast<uint64_t>(d));
    EXPECT_EQ(c.load("key A"), std::nullopt) << damage_name(d);
    EXPECT_EQ(c.load("key B"), std::nullopt) << damage_name(d);
    // A store repairs the entry, except where a directory holds its name (then it stays a miss).
    const bool stored = c.store("key A", "payload A");
    EXPECT_EQ(stored, d != Damage::directory) << damage_name(d);
    EXPECT_EQ(c.load("key A"), stored ? std::optional<std::string>("payload A") : std::nullopt) << damage_name(d);
    std::error_code ec;
    fs::remove_all(c.path_for("key A"), ec);
    fs::remove_all(c.path_for("key B"), ec);
  }
  for (auto& e : fs::directory_iterator(t.path / "sub/dir"))
    EXPECT_EQ(e.path().filename().string().rfind(".tmp", 0), std::string::npos) << "leftover " << e.path();
}

TEST(DiskCache, EverySingleBitFlipIsDetected) {
  TempDir t;
  DiskCache c(t.path.string(), ".bin");
  ASSERT_TRUE(c.store("the key", "some payload bytes"));
  const std::string good = slurp(c.path_for("the key"));
  for (size_t i = 0; i < good.size(); ++i)
    for (int b = 0; b < 8; ++b) {
      std::string bad = good;
      bad[i] ^= static_cast<char>(1 << b);
      spit(c.path_for("the key"), bad);
      ASSERT_EQ(c.load("the key"), std::nullopt) << "byte " << i << " bit " << b;
    }
}

TEST(DiskCache, ReadsOnlyRegularFiles) {
  TempDir t;
  std::string why;
  ASSERT_EQ(::mkfifo((t.path / "fifo").c_str(), 0644), 0);
  EXPECT_EQ(read_regular_file((t.path / "fifo").string(), 1 << 20, &why), std::nullopt);  // returns, not blocks
  EXPECT_NE(why.find("not a regular file"), std::string::npos) << why;
  EXPECT_EQ(read_regular_file(t.path.string(), 1 << 20, &why), std::nullopt);
  EXPECT_EQ(why, "is a directory");
  fs::create_symlink("/dev/zero", t.path / "zero");
  EXPECT_EQ(read_regular_file((t.path / "zero").string(), 1 << 20), std::nullopt);
  spit(t.path / "big", std::string(100, 'x'));
  EXPECT_EQ(read_regular_file((t.path / "big").string(), 99), std::nullopt);
  EXPECT_EQ(read_regular_file((t.path / "big").string(), 100), std::string(100, 'x'));
}

// Several processes store different payloads under one key while another reads: a reader sees
// a miss or one writer's whole payload, never a torn or mixed entry; no temporary file is left.
TEST(DiskCache, ConcurrentWritersAcrossProcesses) {
  TempDir t;
  DiskCache c(t.path.string(), ".bin");
  std::vector<pid_t> kids;
  for (int w = 0; w < 4; ++w) {
    pid_t p = ::fork();
    ASSERT_GE(p, 0);
    if (p == 0) {
      const std::string payload(4096 + w * 1000, static_cast<char>('a' + w));
      for (int i = 0; i < 200; ++i)
        if (!c.store("shared key", payload)) ::_exit(1);
      ::_exit(0);
    }
    kids.push_back(p);
  }
  int seen = 0;
  for (int i = 0; i < 2000; ++i)
    if (auto v = c.load("shared key")) {
      ++seen;
      ASSERT_FALSE(v->empty());
      const int w = v->front() - 'a';
      ASSERT_TRUE(w >= 0 && w < 4);
      ASSERT_EQ(*v, std::string(4096 + w * 1000, v->front()));
    }
  for (pid_t p : kids) {
    int status = 0;
    ::waitpid(p, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_TRUE(c.load("shared key").has_value());
  EXPECT_EQ(entries(t.path, ".bin").size(), 1u);
  for (auto& e : fs::directory_iterator(t.path))
    EXPECT_EQ(e.path().extension(), ".bin") << "leftover temporary file " << e.path();
  (void)seen;
}

// ---- Vulkan: SPIR-V entries (in process) and the pipeline cache (through the CLI) ----------

Graph two_kernel_graph() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {8, 32});
  int w = b.constant("w", testing::random_tensor(DType::f32, {32, 16}, 3));
  int h = b.op("Tanh", {b.op("MatMul", {b.op("Sigmoid", {x}), w})});
  b.output(b.op("Softmax", {h}, {{"axis", int64_t{-1}}}));
  b.output(b.op("Exp", {b.op("Neg", {x})}));
  Graph g = b.build();
  make_static(g, {});
  return g;
}

void expect_matches_ref(Backend& be, const Graph& g, const std::string& what) {
  std::vector<Tensor> in{testing::random_tensor(DType::f32, {8, 32}, 11)};
  auto want = make_backend("ref")->compile(g, {})->run(in);
  auto got = be.compile(g, {})->run(in);
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t k = 0; k < got.size(); ++k) {
    auto c = compare_tensors(got[k], want[k], 1e-4, 1e-6);
    EXPECT_TRUE(c.ok) << what << " output " << k << ": " << c.message;
  }
}

// Round 41: every input shape of a dynamic model is a new kernel, so the folder is capped
// (FUSOR_CACHE_MAX_MB): a store past the cap removes the least recently used entries down to 90%
// of it; a load refreshes an entry's age, and another extension's entries are not counted.
TEST(DiskCache, StoresPastTheCapDropTheLeastRecentlyUsed) {
  TempDir t;
  testing::ScopedEnv env("FUSOR_CACHE_MAX_MB", "1");
  const DiskCache spv(t.path.string(), ".spv"), other(t.path.string(), ".pipelines");
  ASSERT_EQ(DiskCache::max_bytes(), uint64_t{1} << 20);
  const std::string payload(200 * 1024, 'p');
  ASSERT_TRUE(other.store("pipelines", std::string(600 * 1024, 'q')));
  auto age = [&](const std::string& key, int64_t s) {  // distinct ages without sleeping
    const timespec ts[2] = {{s, 0}, {s, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, spv.path_for(key).c_str(), ts, 0), 0);
  };
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(spv.store("k" + std::to_string(i), payload + std::to_string(i)));
    age("k" + std::to_string(i), 1000000 + i);
  }
  ASSERT_TRUE(spv.load("k0").has_value());  // k0 is now the most recently used
  for (int i = 4; i < 12; ++i) {
    ASSERT_TRUE(spv.store("k" + std::to_string(i), payload + std::to_string(i)));
    if (i < 11) age("k" + std::to_string(i), 2000000 + i);
  }
  uint64_t total = 0;
  for (auto& f : entries(t.path, ".spv")) total += fs::file_size(f);
  EXPECT_LE(total, uint64_t{1} << 20);
  EXPECT_GE(entries(t.path, ".spv").size(), 3u);
  EXPECT_TRUE(spv.load("k11").has_value()) << "the entry just stored must stay";
  EXPECT_TRUE(spv.load("k0").has_value()) << "a load refreshes an entry's age";
  EXPECT_FALSE(spv.load("k1").has_value()) << "the oldest entry must go first";
  EXPECT_TRUE(other.load("pipelines").has_value()) << "another extension's entry is not trimmed";
  // An entry past the cap alone stays (was removed by its own store), and takes the others out.
  ASSERT_TRUE(spv.store("huge", std::string(1200 * 1024, 'h')));
  EXPECT_TRUE(spv.load("huge").has_value());
  EXPECT_EQ(entries(t.path, ".spv").size(), 1u);
  // Dated in the future (a clock set back since): first out, not kept forever.
  ASSERT_TRUE(spv.store("future", payload));
  const timespec later[2] = {{::time(nullptr) + 86400 * 365, 0}, {::time(nullptr) + 86400 * 365, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, spv.path_for("future").c_str(), later, 0), 0);
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(spv.store("n" + std::to_string(i), payload + std::to_string(i)));
  EXPECT_FALSE(spv.load("future").has_value());
  EXPECT_TRUE(spv.load("n5").has_value());
}

// XDG Base Directory: a relative XDG_CACHE_HOME is ignored (~/.cache instead); a folder whose
// parents do not exist yet is created with them on the first store (round 41: the Vulkan cache
// was silently off, every process recompiling).
TEST(DiskCache, CacheFolderFollowsXdgAndIsCreatedWithItsParents) {
  TempDir t;
  testing::ScopedEnv on("FUSOR_NO_DISK_CACHE", nullptr);  // other tests in this process may set it
  {
    testing::ScopedEnv home("HOME", t.path.c_str());
    testing::ScopedEnv xdg("XDG_CACHE_HOME", "relative/cache");
    EXPECT_EQ(compile_cache_dir("vulkan"), (t.path / ".cache/fusor/vulkan").string());
  }
  const fs::path deep = t.path / "not/yet/there";
  testing::ScopedEnv xdg("XDG_CACHE_HOME", deep.c_str());
  EXPECT_EQ(compile_cache_dir("cuda"), (deep / "fusor/cuda").string());
  const DiskCache c(compile_cache_dir("vulkan"), ".spv");
  ASSERT_TRUE(c.store("key", "payload"));
  EXPECT_EQ(c.load("key").value_or(""), "payload");
  testing::ScopedEnv off("FUSOR_NO_DISK_CACHE", "1");
  EXPECT_EQ(compile_cache_dir("vulkan"), "");
}

TEST(VulkanCache, DamagedSpirvEntriesAreRecompiled) {
  std::unique_ptr<Backend> vk;
  try {
    vk = make_backend("vulkan");
  } catch (const Error& e) {
    GTEST_SKIP() << e.what();
  }
  if (vk->devices().empty()) GTEST_SKIP() << "no Vulkan device (install mesa-vulkan-drivers for lavapipe)";
  TempDir t;
  testing::ScopedEnv env("XDG_CACHE_HOME", t.path.c_str());
  const fs::path dir = t.path / "fusor/vulkan";
  Graph g = two_kernel_graph();
  expect_matches_ref(*vk, g, "cold cache");
  const std::vector<fs::path> files = entries(dir, ".spv");
  ASSERT_GE(files.size(), 2u);
  std::vector<std::string> good;
  for (auto& f : files) good.push_back(slurp(f));
  for (Damage d : kAllDamage) {
    damage(d, files, 100 + static_cast<uint64_t>(d));
    expect_matches_ref(*vk, g, damage_name(d));
    // Every entry is usable again (a directory in the way stays; nothing is read from it).
    for (size_t i = 0; i < files.size(); ++i) {
      if (d == Damage::directory) {
        EXPECT_TRUE(fs::is_directory(files[i]));
        fs::remove_all(files[i]);
        spit(files[i], good[i]);
      } else {
        EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(files[i]))) << damage_name(d) << " " << files[i];
        EXPECT_EQ(slurp(files[i]), good[i]) << damage_name(d) << ": entry was not rewritten";
      }
    }
  }
}

// The pipeline cache is read once per process, so this runs the CLI: a damaged pipeline cache
// must neither crash nor change results.
TEST(VulkanCache, DamagedPipelineCacheIsIgnored) {
  const char* bin = std::getenv("FUSOR_BIN");
  if (!bin) GTEST_SKIP() << "FUSOR_BIN is not set (run through ctest)";
  std::unique_ptr<Backend> vk;
  try {
    vk = make_backend("vulkan");
  } catch (const Error& e) {
    GTEST_SKIP() << e.what();
  }
  if (vk->devices().empty()) GTEST_SKIP() << "no Vulkan device (install mesa-vulkan-drivers for lavapipe)";
  TempDir t;
  // A small model folder with onnxruntime-style test data computed by ref, so `fusor run`
  // checks the vulkan outputs itself (PASS/FAIL).
  const fs::path model = t.path / "model";
  fs::create_directories(model / "test_data_set_0");
  const std::string bytes = fuzz::seed_models()[0];
  spit(model / "model.onnx", bytes);
  Graph g = load_onnx_from_bytes(bytes, ".");
  std::vector<Tensor> in = random_inputs(g, 5);
  std::vector<Tensor> want = run_on_backend("ref", specialize(g, in), in);
  write_tensor_pb((model / "test_data_set_0/input_0.pb").string(), in[0], "x");
  write_tensor_pb((model / "test_data_set_0/output_0.pb").string(), want[0], "y");
  auto run = [&](const std::string& backend) {
    std::string cmd = "XDG_CACHE_HOME='" + t.path.string() + "' '" + bin + "' run '" + model.string() + "' --backend " + backend +
                      " 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    const int status = ::pclose(p);
    return std::make_pair(status, out);
  };
  auto [s0, cold] = run("vulkan");
  ASSERT_EQ(s0, 0) << cold;
  const std::vector<fs::path> pipes = entries(t.path / "fusor/vulkan", ".pipelines");
  ASSERT_EQ(pipes.size(), 1u);
  const fs::path other = pipes[0].string() + ".other";
  const std::string good_pipe = slurp(pipes[0]);
  spit(other, slurp(entries(t.path / "fusor/vulkan", ".spv").at(0)));  // a foreign entry for "swap"
  for (Damage d : kAllDamage) {
    std::error_code ec;
    fs::remove_all(pipes[0], ec);
    spit(pipes[0], good_pipe);
    if (d == Damage::swap) {
      spit(pipes[0], slurp(other));
    } else {
      damage(d, {pipes[0], other}, 200 + static_cast<uint64_t>(d));
    }
    auto [s, out] = run("vulkan");
    EXPECT_EQ(s, 0) << damage_name(d) << ": " << out;
    EXPECT_NE(out.find("check   output 0 vs"), std::string::npos) << out;
    EXPECT_NE(out.find("PASS"), std::string::npos) << damage_name(d) << ": " << out;
    EXPECT_EQ(out.find("FAIL"), std::string::npos) << damage_name(d) << ": " << out;
    fs::remove_all(other, ec);
    spit(other, "not a cache entry at all");
  }
}

// ---- CUDA: the CUBIN cache (NVRTC compiles here; no GPU is needed) -------------------------

#ifdef FUSOR_HAVE_CUDA
TEST(CudaCache, DamagedCubinEntriesAreRecompiled) {
  TempDir t;
  testing::ScopedEnv env("XDG_CACHE_HOME", t.path.c_str());
  const fs::path dir = t.path / "fusor/cuda";
  const std::string a = "extern \"C\" __global__ void ka(float* x) { x[threadIdx.x] = 2.0f * x[threadIdx.x]; }\n";
  const std::string b = "extern \"C\" __global__ void kb(float* x) { x[threadIdx.x] = x[threadIdx.x] + 1.0f; }\n";
  std::vector<char> ca, cb;
  try {
    ca = nvrtc_cubin(a, "ka", "sm_90");
    cb = nvrtc_cubin(b, "kb", "sm_90");
  } catch (const Error& e) {
    GTEST_SKIP() << "NVRTC is not usable here: " << e.what();
  }
  ASSERT_FALSE(ca.empty());
  ASSERT_NE(ca, cb);
  const std::vector<fs::path> files = entries(dir, ".cubin");
  ASSERT_EQ(files.size(), 2u);
  const DiskCache cache(dir.string(), ".cubin");
  for (Damage d : kAllDamage) {
    damage(d, files, 300 + static_cast<uint64_t>(d));
    // A truncated (or otherwise bad) entry is recompiled, never handed on and never an error.
    EXPECT_EQ(nvrtc_cubin(a, "ka", "sm_90"), ca) << damage_name(d);
    EXPECT_EQ(nvrtc_cubin(b, "kb", "sm_90"), cb) << damage_name(d);
    if (d == Damage::directory) {
      for (auto& f : files) fs::remove_all(f);
      nvrtc_cubin(a, "ka", "sm_90");
      nvrtc_cubin(b, "kb", "sm_90");
    }
    // The entries hold the right CUBIN again, under their own keys.
    auto ea = cache.load(nvrtc_cache_key(a, "sm_90")), eb = cache.load(nvrtc_cache_key(b, "sm_90"));
    ASSERT_TRUE(ea && eb) << damage_name(d);
    EXPECT_EQ(std::vector<char>(ea->begin(), ea->end()), ca) << damage_name(d);
    EXPECT_EQ(std::vector<char>(eb->begin(), eb->end()), cb) << damage_name(d);
  }
}
#endif

}  // namespace
}  // namespace fusor
