// Tile and split-K choice of the Vulkan contraction templates (gemm.glsl, gemm_coopmat.glsl,
// conv.glsl): choose_tiles, choose_coopmat_tiles, choose_split_k and the workspace they size.
// Declared in vk_dialect.h; split from vk_dialect.cpp along that seam.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "backends/vulkan/vk_coopmat.h"
#include "backends/vulkan/vk_dialect.h"

namespace fusor::vk {

std::string ContractionTiles::coopmat_label() const {
  if (!coopmat) return "";
  return "coopmat " + std::to_string(cm_m) + "x" + std::to_string(cm_n) + "x" + std::to_string(cm_k) + (cm_bf16 ? " bf16" : "") +
         (cm_direct ? " direct" : "") + (cm_emulate ? " emulated" : "");
}

ContractionTiles choose_coopmat_tiles(const CoopmatShape& s, int64_t m, int64_t n, const PhysicalDeviceInfo& dev, int64_t batch,
                                      int64_t k) {
  ContractionTiles t;
  t.coopmat = 1;
  t.cm_m = static_cast<int>(s.m), t.cm_n = static_cast<int>(s.n), t.cm_k = static_cast<int>(s.k);
  t.cm_sg = static_cast<int>(dev.subgroup_size);
  // 2 x 4 subgroups of one accumulator each (a 32 x 32 tile for 16x8x16, 256 threads), K in
  // slices (below), the next slice fetched while this one multiplies. Measured on the H200 (fp16,
  // M = 64 and 512, K and N from 768 to 4096, bench/fp16_gemm_model.py): the fastest or within
  // 25% of it on every shape, 1.5-4x faster than 2 x 2 subgroups of 2 x 4 accumulators, and
  // 128-256 element slices spill registers. One subgroup row when M fits in one matrix.
  // Subgroup columns for a 32-wide tile: 4 of 16x8 (above), 2 of 16x16 (the H200's only bf16
  // shape: bf16 MLP b64 51.5 -> 36.6 us, GPT-2 2L 168.4 -> 144.0 us against 4 x 16 = 64 wide;
  // docs/benchmarks.md, eleventh session).
  t.cm_rm = 1, t.cm_rn = 1, t.cm_wm = m <= t.cm_m ? 1 : 2, t.cm_wn = std::max(1, 32 / std::max(1, t.cm_n));
  while (t.threads() > static_cast<int>(dev.max_invocations) && t.cm_wn > 1) t.cm_wn /= 2;
  // K slices of 128 where K allows (ninth session, H200, fusor bench --iters 200: W7 fp16 MLP
  // b64 46.7 -> 43.9 us, GPT-2 2L fp16 178.8 -> 169.0 us; 256 was slower, 55.8 / 208.1).
  t.cm_bk = std::max(k >= 128 ? 128 : k >= 64 ? 64 : 32, t.cm_k);
  (void)batch;
  // FUSOR_VK_COOPMAT_TILE=WM,WN,RM,RN[,BK] overrides (bench sweeps).
  if (const char* e = std::getenv("FUSOR_VK_COOPMAT_TILE")) {
    int v[5] = {0, 0, 0, 0, 0};
    const int got = std::sscanf(e, "%d,%d,%d,%d,%d", &v[0], &v[1], &v[2], &v[3], &v[4]);
    if (got >= 4 && v[0] > 0 && v[1] > 0 && v[2] > 0 && v[3] > 0 && v[0] * v[1] * t.cm_sg <= static_cast<int>(dev.max_invocations))
      t.cm_wm = v[0], t.cm_wn = v[1], t.cm_rm = v[2], t.cm_rn = v[3];
    if (got == 5 && v[4] >= t.cm_k && v[4] % std::max(8, t.cm_k) == 0 && v[4] <= 512) t.cm_bk = v[4];
  }
  t.bm = t.cm_wm * t.cm_rm * t.cm_m, t.bn = t.cm_wn * t.cm_rn * t.cm_n, t.bk = t.cm_bk, t.tm = t.tn = 1;
  // Halved only while the half stays a multiple of 8 and of the matrix K (16-byte aligned rows,
  // whole matrix steps).
  while (t.cm_bk > std::max(32, t.cm_k) && (t.cm_bk / 2) % std::max(8, t.cm_k) == 0 &&
         t.coopmat_shared_bytes() > static_cast<int64_t>(dev.max_shared_memory))
    t.bk = t.cm_bk /= 2;
  return t;
}

namespace {
int64_t matmul_batch(const KernelSpec& k) { return shape_numel(k.space) / std::max<int64_t>(1, k.matmul->m * k.matmul->n); }
// Partial-sum elements one tile writes: BM x BN, M x skinny_cols on the vector GEMV path.
int64_t tile_elements(const ContractionTiles& t, const KernelSpec& k) {
  return k.matmul && t.skinny ? k.matmul->m * t.skinny_cols : int64_t{t.bm} * t.bn;
}
// The reduction length a split-K slices: K of a matmul, C/G x R x S of a conv.
int64_t reduction_length(const KernelSpec& k) {
  if (k.conv) return k.conv->c / std::max<int64_t>(k.conv->groups, 1) * k.conv->r * k.conv->s;
  return k.matmul ? k.matmul->k : 0;
}
}  // namespace

int64_t split_counters(int64_t tiles) { return (tiles + 3) / 4 * 4; }
// Output tiles of a matmul, or of a conv's implicit GEMM (conv.glsl: per group, Kg x N*OH*OW);
// skinny_cols-wide strips of one batch on the matmul GEMV paths.
int64_t tile_count(const ContractionTiles& t, const KernelSpec& k) {
  if (k.conv) {
    const ConvDesc& c = *k.conv;
    const int64_t g = std::max<int64_t>(c.groups, 1);
    return g * ((c.k / g + t.bm - 1) / t.bm) * ((c.n * c.oh * c.ow + t.bn - 1) / t.bn);
  }
  if (t.skinny) return matmul_batch(k) * ((k.matmul->n + t.skinny_cols - 1) / t.skinny_cols);
  return matmul_batch(k) * ((k.matmul->m + t.bm - 1) / t.bm) * ((k.matmul->n + t.bn - 1) / t.bn);
}

int64_t splitk_workspace_bytes(const ContractionTiles& t, const KernelSpec& k) {
  // The first GEMV path (skinny 1) never splits; the vector one (skinny 2) may.
  if (!(k.matmul || (k.conv && !t.conv_direct)) || t.split_k <= 1) return 0;
  const int64_t tiles = tile_count(t, k);
  return 4 * split_counters(tiles) + int64_t{4} * tiles * t.split_k * tile_elements(t, k);
}

namespace {
// A power of two in [lo, hi] from the environment, else dflt.
int env_pow2(const char* nm, int lo, int hi, int dflt) {
  const char* e = std::getenv(nm);
  const int v = e ? std::atoi(e) : 0;
  return v >= lo && v <= hi && (v & (v - 1)) == 0 ? v : dflt;
}

// gemm.glsl double-buffers its A and B slices (rows padded by up to 4 floats): thinner K
// slices where that does not fit.
void fit_shared(ContractionTiles& t, const PhysicalDeviceInfo& dev) {
  while (t.bk > 4 && int64_t{8} * t.bk * (t.bm + t.bn + 8) + 64 > static_cast<int64_t>(dev.max_shared_memory)) t.bk /= 2;
}
}  // namespace

// Too few tiles to fill the GPU with K long enough: split-K, S slices of K (>= 192 each for a
// matmul, 256 for a conv, whose K is C/G x R x S) per tile so that tiles x S reaches about 2 workgroups per compute unit, keeping the tile (and its
// arithmetic intensity) whole. The partials cost 4 * S * M * N bytes of traffic. Slices are
// whole t.bk steps. FUSOR_VK_SPLIT_K overrides (vk_dialect.h). gemm_coopmat.glsl's tiles use the
// same rule with per_unit = 1 and their own knob (FUSOR_VK_COOPMAT_SPLIT_K, where forced >= 2
// forces that many slices and 1 means "by the rule"; the caller skips the call when it is off).
void choose_split_k(ContractionTiles& t, const KernelSpec& k, const PhysicalDeviceInfo& dev, int64_t split_budget,
                    int per_unit, const char* knob, bool balance) {
  t.split_k = 1, t.split_slice = 0;
  if (k.matmul ? k.matmul->m <= 0 || k.matmul->n <= 0 : !k.conv || t.conv_direct) return;
  if (t.skinny || reduction_length(k) <= 0 || shape_numel(k.space) <= 0) return;
  // FUSOR_VK_SPLIT_MIN_SLICE / FUSOR_VK_SPLIT_PER_UNIT: sweep knobs for the two constants.
  const auto knob_or = [](const char* name, int64_t fallback) {
    const char* v = std::getenv(name);
    return v && std::atoi(v) > 0 ? int64_t{std::atoi(v)} : fallback;
  };
  // Matmul slices of >= 192: on the H200 GPT-2 2L fp32 went 235.4 -> 230.4 us against 256 (its
  // 64 x 768 x 768 layers, 12 tiles, split 4 ways instead of 3), with the MLP block (fp32 batch
  // 64 and 1, fp16 batch 64) and fp16 GPT-2 unchanged (docs/benchmarks.md, sixteenth session);
  // 128 was no better, 64 slower. Convolutions keep 256 (not measured with less).
  const int64_t kMinSlice = knob_or("FUSOR_VK_SPLIT_MIN_SLICE", k.matmul ? 192 : 256);
  per_unit = static_cast<int>(knob_or("FUSOR_VK_SPLIT_PER_UNIT", per_unit));
  const int64_t kk = reduction_length(k), target = per_unit * (dev.compute_units ? int64_t{dev.compute_units} : 64);
  const int64_t groups = tile_count(t, k);
  int64_t s = 1;
  const char* e = std::getenv(knob);
  const int forced = e ? std::atoi(e) : 0;
  if (forced >= 2 || (forced == 1 && std::strcmp(knob, "FUSOR_VK_SPLIT_K") == 0)) s = std::min(forced, 64);
  else if (groups < target && kk >= 2 * kMinSlice) {
    const int64_t most = std::min<int64_t>(kk / kMinSlice, 64);
    s = std::min<int64_t>((target + groups - 1) / groups, most);
    // balance: spread the work over the units rather than fill them. The busiest unit runs
    // ceil(groups * s / target) slices of K / s each; take the s that minimises that (the
    // smaller on a tie: fewer partial tiles to add). H200, fp32 64 x 4096 x 1024 (16 tiles,
    // 132 units): 8 slices 55.9 us, 9 (the fill) 71.7; 64 x 1024 x 4096: 2 slices 40.8, 3 45.9.
    // FUSOR_VK_SPLIT_RULE=fill: the rounded-up fill.
    const char* rule = std::getenv("FUSOR_VK_SPLIT_RULE");
    if (balance && !(rule && std::strcmp(rule, "fill") == 0)) {
      const auto load = [&](int64_t c) { return static_cast<double>((groups * c + target - 1) / target) / static_cast<double>(c); };
      for (int64_t c = s = 1; c <= most; ++c)
        if (load(c) < load(s) - 1e-12) s = c;
    }
  }
  if (s <= 1) return;
  // Whole BK steps per slice; the count that covers K with them (never an empty slice).
  t.split_slice = ((kk + s - 1) / s + t.bk - 1) / t.bk * t.bk;
  t.split_k = static_cast<int>((kk + t.split_slice - 1) / t.split_slice);
  if (t.split_k <= 1 || (split_budget >= 0 && splitk_workspace_bytes(t, k) > split_budget)) t.split_k = 1, t.split_slice = 0;
}

namespace {
// Too few tiles to fill the GPU and no split-K (short K): halve the larger tile side, and its
// register block with it so the group keeps its size, until there are about 128 workgroups
// or the tiles are 16 x 16.
void shrink_tiles(ContractionTiles& t, const KernelSpec& k) {
  if (t.split_k > 1 || shape_numel(k.space) <= 0 || (k.matmul && (k.matmul->m <= 0 || k.matmul->n <= 0))) return;
  while (tile_count(t, k) < 128 && (t.bm > 16 || t.bn > 16)) {
    if (t.bm >= t.bn && t.bm > 16) t.bm /= 2, t.tm = std::max(1, t.tm / 2);
    else t.bn /= 2, t.tn = std::max(1, t.tn / 2);
  }
}

// The vector GEMV path (skinny 2): K split over workgroups while the column strips alone give
// fewer than 4 workgroups per compute unit, each slice keeping >= 8 rounds of the K groups
// (whole rounds: slices are multiples of the group count). FUSOR_VK_GEMV_SPLIT=S (1 = off,
// 2..64) forces S slices. A split needing more workspace than split_budget is not taken.
void choose_gemv_split(ContractionTiles& t, const KernelSpec& k, const PhysicalDeviceInfo& dev, int64_t split_budget) {
  t.split_k = 1, t.split_slice = 0;
  const int64_t kk = k.matmul->k, kg = t.skinny_threads / (t.skinny_cols / 4);
  if (kk <= 0 || k.matmul->n <= 0) return;
  const int64_t target = 4 * (dev.compute_units ? int64_t{dev.compute_units} : 64), tiles = tile_count(t, k), min_slice = 8 * kg;
  const char* e = std::getenv("FUSOR_VK_GEMV_SPLIT");
  const int forced = e ? std::atoi(e) : 0;
  int64_t s = 1;
  if (forced >= 1) s = std::min(forced, 64);
  else if (tiles < target && kk >= 2 * min_slice) s = std::min<int64_t>({(target + tiles - 1) / tiles, kk / min_slice, 64});
  if (s <= 1) return;
  t.split_slice = ((kk + s - 1) / s + kg - 1) / kg * kg;
  t.split_k = static_cast<int>((kk + t.split_slice - 1) / t.split_slice);
  if (t.split_k <= 1 || (split_budget >= 0 && splitk_workspace_bytes(t, k) > split_budget)) t.split_k = 1, t.split_slice = 0;
}

// Devices with a small invocation limit (the Vulkan minimum is 128) get 8x8 register blocks.
ContractionTiles fit_invocations(ContractionTiles t, const PhysicalDeviceInfo& dev) {
  while (t.threads() > static_cast<int>(dev.max_invocations) && (t.tm < t.bm || t.tn < t.bn)) {
    if (t.tm < t.bm) t.tm *= 2;
    if (t.threads() > static_cast<int>(dev.max_invocations) && t.tn < t.bn) t.tn *= 2;
  }
  return t;
}
// Blocked register tiles for a conv's implicit GEMM (conv.glsl FZ_BLOCKED: 16 x 16 threads, TM and
// TN in {4, 8}, vec4 reads of the shared slices), m = output channels per group, n = N x OH x OW.
// FUSOR_VK_CONV_TILE: "auto" (the default): the biggest of 8x8, 8x4, 4x4 whose tile is filled on
// both sides and whose grid still gives every compute unit a tile, for reductions (C/G x R x S)
// of at least 1024; else the interleaved tiles. H200 (docs/benchmarks.md, fourteenth session,
// per-kernel traces of ResNet-18 at batch 32): 3x3 layers of 128 channels on 28 x 28 under 380
// us with 8x8 against 415 interleaved, 256 on 14 x 14 384 (8x4) vs 460, 512 on 7 x 7 486 (4x4)
// vs 530; short reductions (every squeezenet / mobilenet / shufflenet conv, 1x1 and stem layers)
// and tiles half padding (64 channels on 128 rows) ran slower blocked, so they keep the
// interleaved tiles. "interleaved" turns it off; "4x4b" / "4x8" / "8x4" / "8x8" force that block
// on every implicit-GEMM conv with at least half a tile of output channels and a whole tile of
// columns (A/B runs). Returns true
// when t is set.
bool choose_conv_blocked(ContractionTiles& t, int64_t m, int64_t n, const KernelSpec& k, const PhysicalDeviceInfo& dev,
                         int64_t split_budget) {
  const char* e = std::getenv("FUSOR_VK_CONV_TILE");
  const std::string mode = e ? e : "auto";
  if (mode == "interleaved" || dev.max_invocations < 256) return false;
  const bool automatic = mode == "auto";
  std::vector<std::pair<int, int>> blocks;
  if (automatic) blocks = {{8, 8}, {8, 4}, {4, 4}};
  else if (mode == "4x4b") blocks = {{4, 4}};
  else if (mode == "8x8") blocks = {{8, 8}};
  else if (mode == "4x8") blocks = {{4, 8}};
  else if (mode == "8x4") blocks = {{8, 4}};
  else return false;
  if (automatic && reduction_length(k) < 1024) return false;
  for (const auto& [tm, tn] : blocks) {
    ContractionTiles b = t;
    b.blocked = 1, b.tm = tm, b.tn = tn, b.bm = 16 * tm, b.bn = 16 * tn;
    if (m < (automatic ? b.bm : b.bm / 2) || n < b.bn) continue;
    fit_shared(b, dev);
    // A device that does not say how many compute units it has counts as 64, as split-K does.
    if (automatic && tile_count(b, k) < (dev.compute_units ? int64_t{dev.compute_units} : 64)) continue;
    choose_split_k(b, k, dev, split_budget);
    t = b;
    return true;
  }
  return false;
}
}  // namespace

// The blocked 64 x 64 tiles b of a matmul whose K is too short to split them over half the
// compute units (tiles x slices below units / 2) give way to 32 x 32 interleaved tiles (2x2
// blocks, 256 threads) where those, split by the same rule, make a bigger grid: on the H200
// GPT-2's 64 x 768 x 768 projections took 15.0 us on them against 17.5 (12 tiles x 4 slices of
// 192; docs/benchmarks.md, twentieth session), while every shape whose grid the split fills lost
// on them. Decided without the workspace budget (as the blocked choice), then kept only if the
// budget allows the same split (the executable compiles each kernel again with the workspace
// the plan needs as the budget: the choice must not change). b: the blocked tiles chosen without
// the budget. FUSOR_VK_GEMM_SMALL_GRID=0 (or a forced FUSOR_VK_SPLIT_K) keeps the blocked tiles.
std::optional<ContractionTiles> small_grid_tiles(const ContractionTiles& t, const ContractionTiles& b, const KernelSpec& k,
                                                const PhysicalDeviceInfo& dev, int64_t split_budget, int b_bytes) {
  const char* e = std::getenv("FUSOR_VK_GEMM_SMALL_GRID");
  const int64_t units = dev.compute_units ? int64_t{dev.compute_units} : 64;
  // fp32 operands only (measured there); a forced split (FUSOR_VK_SPLIT_K, A/B runs) keeps the
  // tiles it was asked for.
  if ((e && std::strcmp(e, "0") == 0) || std::getenv("FUSOR_VK_SPLIT_K") || !k.matmul || b_bytes != 4 ||
      dev.max_invocations < 256 || tile_count(b, k) * b.split_k * 2 >= units)
    return std::nullopt;
  ContractionTiles s = t;
  s.blocked = 0, s.bm = s.bn = 32, s.tm = s.tn = 2;
  fit_shared(s, dev);
  choose_split_k(s, k, dev, -1);
  if (tile_count(s, k) * s.split_k <= tile_count(b, k) * b.split_k) return std::nullopt;
  const int free_split = s.split_k;
  choose_split_k(s, k, dev, split_budget);
  if (s.split_k != free_split) return std::nullopt;
  return s;
}

ContractionTiles choose_tiles(const KernelSpec& k, const PhysicalDeviceInfo& dev, int b_bytes, int64_t split_budget) {
  ContractionTiles t;
  int64_t m = 0, n = 0;
  if (k.matmul) {
    m = k.matmul->m, n = k.matmul->n;
  } else if (k.conv) {
    const ConvDesc& c = *k.conv;
    const int64_t cg = c.c / std::max<int64_t>(c.groups, 1), kg = c.k / std::max<int64_t>(c.groups, 1);
    // Depthwise and tiny reductions: a tile would be mostly padding, so one thread per output.
    if (cg * c.r * c.s < 16 || kg < 4) t.conv_direct = 1;
    m = kg, n = c.n * c.oh * c.ow;
  }
  // M <= 8 matmuls (GEMV-like: batch-1 linear layers) take gemm.glsl's skinny path: groups of
  // threads splitting K over a few columns.
  if (k.matmul && m <= 8 && dev.max_invocations >= 64) {
    t.skinny = 1, t.bm = 16, t.tm = 1, t.bn = 64, t.tn = 4;
    // The vector GEMV path (gemm.glsl FZ_SKINNY 2) with FUSOR_VK_GEMV=new: 64 columns per
    // workgroup (16 lanes of 4: a 256-byte fp32 row piece per K group), 256 threads, K split
    // over workgroups to fill the device. FUSOR_VK_GEMV_COLS (16 .. 128) and
    // FUSOR_VK_GEMV_THREADS (64 .. 1024) override here too. Opt-in: on the H200 it was slower
    // than the first path (MLP b1 fp32 27.6 vs 19.5 us, fp16 26.9 vs 19.6; docs/gemv.md).
    const char* path = std::getenv("FUSOR_VK_GEMV");
    if (path && std::strcmp(path, "new") == 0) {
      t.skinny = 2;
      t.skinny_cols = env_pow2("FUSOR_VK_GEMV_COLS", 16, 128, 64);
      t.skinny_threads = env_pow2("FUSOR_VK_GEMV_THREADS", 64, 1024, 256);
      const auto fits = [&] {
        const int64_t shared = int64_t{4} * std::max<int64_t>(m, 1) * t.skinny_cols * (t.skinny_threads / (t.skinny_cols / 4)) + 16;
        return t.skinny_threads <= static_cast<int>(dev.max_invocations) && shared <= static_cast<int64_t>(dev.max_shared_memory);
      };
      while (t.skinny_threads > t.skinny_cols / 4 && !fits()) t.skinny_threads /= 2;
      choose_gemv_split(t, k, dev, split_budget);
      return t;
    }
    // A GEMV is bound by how many loads are in flight: 16 columns (two 32-byte sectors) per
    // workgroup and the biggest workgroup the device and its shared memory allow, so even a
    // 1024-wide layer is 64 groups of 1024 threads. Measured on the H200 (bench/gemv_sweep.py,
    // MLP batch 1): 16 x 1024 19.6 us, 8 x 1024 24.3, 32 x 256 (the old shape) 46.4.
    // FUSOR_VK_GEMV_COLS (8, 16, 32) and FUSOR_VK_GEMV_THREADS (64 .. 1024) override.
    // 16 columns for 2-byte B too: 32 (64 bytes of a row per group) measured no faster on the
    // H200 at 1 x 1024 x 4096 fp16 (7.9 vs 8.5 us) and slower at 1 x 4096 x 1024 (13.5 vs 9.7).
    t.skinny_cols = env_pow2("FUSOR_VK_GEMV_COLS", 8, 32, 16);
    t.skinny_threads = env_pow2("FUSOR_VK_GEMV_THREADS", 64, 1024, 1024);
    // FUSOR_VK_GEMV_UNROLL=1|2|4|8|16: K rounds whose B loads a thread issues together. On
    // the H200 (MLP b1, two rounds) one row of 4-byte B is fastest with 16 (19.4 / 19.1 us
    // against 19.8 / 19.8 one at a time), of 2-byte B with 4 (fp16 20.6 / 20.6 against 21.7 /
    // 21.7; 16: 25.8). With 4 or 8 rows (one 4096 -> 1024 layer) one round at a time is the
    // fastest (M = 4: fp32 24.4 us against 26.4 with 16, fp16 25.0 against 26.8 with 4).
    t.skinny_unroll = env_pow2("FUSOR_VK_GEMV_UNROLL", 1, 16, m > 1 ? 1 : b_bytes >= 4 ? 16 : 4);
    const auto fits = [&] {
      const int64_t shared = int64_t{4} * (t.skinny_threads / t.skinny_cols) * std::max<int64_t>(m, 1) * (t.skinny_cols + 1);
      return t.skinny_threads <= static_cast<int>(dev.max_invocations) && shared <= static_cast<int64_t>(dev.max_shared_memory);
    };
    while (t.skinny_threads > 2 * t.skinny_cols && !fits()) t.skinny_threads /= 2;
    return t;
  }
  // Skinny problems (GEMV-like, few channels) get 16-wide tiles on that side so a group does
  // not compute 63 rows of padding; the thread count stays (bm/tm)*(bn/tn) = 256.
  if (m <= 16 && n > 16) t.bm = 16, t.tm = 1;
  else if (n <= 16 && m > 16) t.bn = 16, t.tn = 1;
  else if (m <= 32 && n > 32) t.bm = 32, t.tm = 2;
  if (!k.matmul) {
    // A conv's implicit GEMM splits K like a matmul (conv.glsl FZ_SPLIT_K): a batch-1 3x3
    // layer with 512 channels on 7 x 7 is 8 tiles of K = 4608.
    // Without a split, its tiles shrink like a matmul's (FUSOR_VK_CONV_SHRINK=0: not).
    if (k.conv && !t.conv_direct) {
      // FUSOR_VK_CONV_DB=0: the previous single-buffered K loop, its tiles as before; the
      // double-buffered one needs gemm.glsl's shared memory (thinner K slices where it does not fit).
      const char* db = std::getenv("FUSOR_VK_CONV_DB");
      t.conv_db = db && std::strcmp(db, "0") == 0 ? 0 : 1;
      if (t.conv_db && choose_conv_blocked(t, m, n, k, dev, split_budget)) return t;
      if (t.conv_db) fit_shared(t, dev);
      choose_split_k(t, k, dev, split_budget);
      const char* e = std::getenv("FUSOR_VK_CONV_SHRINK");
      if (!(e && std::strcmp(e, "0") == 0)) shrink_tiles(t, k);
    }
    return fit_invocations(t, dev);
  }
  // FUSOR_VK_GEMM_BK (8, 16, 32) overrides the K slice depth of the tiled path, for A/B runs.
  const int bk_env = env_pow2("FUSOR_VK_GEMM_BK", 8, 32, 0);
  if (bk_env) t.bk = bk_env;
  // Blocked register tiles (gemm.glsl FZ_BLOCKED): 16 x 16 threads with 4x8, 8x4 or 8x8
  // blocks on 64 x 128, 128 x 64 or 128 x 128 tiles, read from shared memory as vec4. Taken
  // when both sides fill a 64-wide tile and one a 128-wide one (M = 64 is every GPT-2 / MLP
  // batch-64 layer), and when the grid is then full (split-K or >= 128 tiles); the rest keeps
  // the 4x4 blocks. FUSOR_VK_GEMM_TILE=4x4 | 8x8 forces one family (8x8 on every tiled matmul:
  // 64-wide sides at least). Measured on the H200 (docs/benchmarks.md, third and sixth
  // sessions), the 8x4 / 4x8 / 8x8 blocks were slower on every shape tried (MLP b64 fp32 175 vs
  // 116 us), so they are opt-in; the automatic choice is 4x4 blocks (below).
  const char* te = std::getenv("FUSOR_VK_GEMM_TILE");
  const int family = te && std::strcmp(te, "8x8") == 0 ? 8 : 4;
  // 64 x 64 tiles with 4x4 blocks in the blocked layout: two vec4 shared reads per 16 FMAs
  // instead of eight scalar ones, K slices of 32, split like the interleaved tiles. H200
  // (docs/benchmarks.md, sixth session): MLP b64 fp32 95.7 -> 81.1 us, GPT-2 2L 369.8 -> 331.9.
  const auto blocked4 = [&](ContractionTiles b, int64_t budget) {
    b.blocked = 1, b.bm = b.bn = 64, b.tm = b.tn = 4;
    b.bk = bk_env ? bk_env : 32;
    fit_shared(b, dev);
    choose_split_k(b, k, dev, budget, 1, "FUSOR_VK_SPLIT_K", true);
    return b;
  };
  // FUSOR_VK_GEMM_TILE=4x4b forces them on every tiled matmul; =4x4 keeps the interleaved ones.
  if (te && std::strcmp(te, "4x4b") == 0 && dev.max_invocations >= 256) return blocked4(t, split_budget);
  if (family == 8 && dev.max_invocations >= 256) {
    ContractionTiles b = t;
    b.blocked = 1;
    b.bm = m >= 128 ? 128 : 64, b.bn = n >= 128 ? 128 : 64;
    b.tm = b.bm / 16, b.tn = b.bn / 16;
    b.bk = bk_env ? bk_env : b.bm == 128 && b.bn == 128 ? 8 : 16;
    fit_shared(b, dev);
    choose_split_k(b, k, dev, split_budget);
    const bool shape_fits = m >= 64 && n >= 64 && (m >= 128 || n >= 128);
    if (family == 8 || (shape_fits && (b.split_k > 1 || tile_count(b, k) >= 128))) return b;
  }
  // FUSOR_VK_GEMM_TILES=BM,BN,TM,TN (interleaved register blocks; powers of two, BM/TM x BN/TN
  // threads within the device's limit) replaces the choice above, for tile sweeps
  // (bench/vk_gemm_sweep.sh); split-K is still chosen for the given tile, without shrinking.
  if (const char* e = std::getenv("FUSOR_VK_GEMM_TILES")) {
    int v[4] = {0, 0, 0, 0};
    const auto pow2 = [](int x) { return x > 0 && (x & (x - 1)) == 0; };
    if (std::sscanf(e, "%d,%d,%d,%d", &v[0], &v[1], &v[2], &v[3]) == 4 && pow2(v[0]) && pow2(v[1]) && pow2(v[2]) &&
        pow2(v[3]) && v[2] <= v[0] && v[3] <= v[1] && v[0] <= 256 && v[1] <= 256 && v[2] * v[3] <= 64 &&
        (v[0] / v[2]) * (v[1] / v[3]) <= static_cast<int>(dev.max_invocations) && (v[0] / v[2]) * (v[1] / v[3]) >= 32) {
      t.bm = v[0], t.bn = v[1], t.tm = v[2], t.tn = v[3];
      fit_shared(t, dev);
      choose_split_k(t, k, dev, split_budget);
      return t;
    }
  }
  // Tiles that keep their 64 x 64 size (a full grid, or split-K) take the blocked layout; the
  // shrunk ones (small matmuls) stay interleaved, which measured faster there (GPT-2 tiny).
  // Decided without the workspace budget: the executable compiles each kernel again with the
  // budget its first choice needed, and the interleaved split (BK 16) can need more than the
  // blocked one (BK 32), which would flip the choice and drop the split.
  if (!(te && std::strcmp(te, "4x4") == 0) && dev.max_invocations >= 256) {
    ContractionTiles probe = t;
    fit_shared(probe, dev);
    choose_split_k(probe, k, dev, -1, 1, "FUSOR_VK_SPLIT_K", true);
    shrink_tiles(probe, k);
    probe = fit_invocations(probe, dev);
    if (probe.bm == 64 && probe.bn == 64 && probe.tm == 4 && probe.tn == 4) {
      if (const auto small = small_grid_tiles(t, blocked4(t, -1), k, dev, split_budget, b_bytes)) return *small;
      ContractionTiles b = blocked4(t, split_budget);
      if ((b.split_k > 1) == (probe.split_k > 1)) return b;  // else the budget refused its split
    }
  }
  fit_shared(t, dev);
  // About one workgroup per compute unit, balanced: on the H200 (bench/vk_gemm_sweep.sh, fp32
  // 64 x 4096 x 1024, 16 tiles) 8 slices took 56 us against 77 for 16 and 72 for 9; the MLP
  // batch 64 went 120.6 -> 96.1 us with the balanced count (docs/benchmarks.md, sixth session).
  choose_split_k(t, k, dev, split_budget, 1, "FUSOR_VK_SPLIT_K", true);
  shrink_tiles(t, k);
  return fit_invocations(t, dev);
}

}  // namespace fusor::vk
