// Batched NVRTC compilation for the CUDA backend: several kernel sources share one NVRTC
// program, and the programs compile in parallel (backends/compile_pool.h). NVRTC's fixed cost
// per program (tens to hundreds of ms, front end + headers) dominates a model's cold compile
// when each of its ~70 kernels is its own program, and per-program compiles stop scaling past
// ~4 threads; a few larger programs on all threads are faster (issue 12: mobilenet_v3_small
// 1.40 s as 73 programs on 4 threads of the H200, 0.95 s as 4 programs).
//
// How a batch is built (nvrtc_batch_source): each kernel source (cuda_kernel_source) is
// self-contained: its `#include` lines first, then helpers, `#define`s and one `extern "C"`
// kernel. The batch hoists the include lines (deduplicated, first-seen order) to the top,
// wraps the rest of each source in its own `namespace fz_pN { ... }` (extern "C" kernels keep
// their plain names; helpers, typedefs and module globals such as the split-K workspace become
// per-kernel) and then `#undef`s every macro the source `#define`d, so the next source starts
// from the same preprocessor state as when compiled alone. Compile options are unchanged, so
// each kernel's machine code is the same as in its own program (tests/test_cuda_nvrtc_batch.cpp
// compares the .text sections).
//
// A source that cannot be wrapped safely (nvrtc_batchable: a `::`-qualified global name, an
// #include inside #if or after a #define, or a kernel name another kernel of the plan also
// uses) is compiled alone, as is every kernel when FUSOR_NVRTC_BATCH is 0 or 1. A batch that
// fails to compile for any reason is recompiled kernel by kernel in plan order: the first
// kernel that fails alone is the error reported (exactly the message its own program gives:
// "nvrtcCompileProgram: <status>: kernel <name>:\n<log>"); if every kernel compiles alone, the
// batch silently falls back to one program (and module) per kernel.
//
// Needs no GPU or driver; throws Error("cuda") as nvrtc_cubin does.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace fusor {

// FUSOR_NVRTC_BATCH: unset or empty = automatic; 0 or 1 = one program per kernel (the
// pre-batching behaviour, for A/B measurements); N >= 2 = at most N kernels per program.
// Returns 0 for automatic (no cap), else the cap (1 for "0" or "1"). A malformed value reads
// as automatic.
int nvrtc_batch_limit();

// True when src can share a program with other sources (see above). src is one
// cuda_kernel_source.
bool nvrtc_batchable(const std::string& src);

// Which kernels compile together: indices into `sources` (empty sources are skipped: no kernel),
// each inner list in plan (index) order, the lists ordered by their first index. Batchable
// sources are split into min(count, threads) groups (more when `limit` caps the group size,
// limit 1 = every kernel alone), balanced by source length (longest first onto the lightest
// group, ties to the lower group); unbatchable ones are groups of one. Deterministic for given
// inputs. names[i] is kernel i's extern "C" name (kernel_identifier); a name used by two
// kernels keeps both out of batches.
std::vector<std::vector<size_t>> nvrtc_batch_plan(const std::vector<std::string>& names,
                                                  const std::vector<std::string>& sources, int threads, int limit);

// The program text for `batch` (indices into sources): sources[batch[0]] itself when the
// batch has one kernel (so its disk-cache entry is the one a lone compile uses), else the
// wrapped concatenation described above.
std::string nvrtc_batch_source(const std::vector<std::string>& sources, const std::vector<size_t>& batch);

// One compiled program: the kernels (indices into sources, plan order) whose functions its
// CUBIN holds, under their names.
struct NvrtcUnit {
  std::vector<size_t> kernels;
  std::string source;  // the program text (nvrtc_batch_source of `kernels`)
  std::string label;   // names the program in NVRTC errors: the kernel's name, or "<first>+<N-1>" (the first kernel and how many more)
  std::vector<char> cubin;
};

// Compiles every non-empty source: nvrtc_batch_plan(names, sources, compile_threads(),
// nvrtc_batch_limit()), each program through nvrtc_cubin (disk cache keyed by its text + arch
// + NVRTC version), programs in parallel. Returns units covering each non-empty source exactly
// once, ordered by first kernel. On failure throws the error of the first kernel in plan
// order that fails to compile alone (see above), whatever the timing.
std::vector<NvrtcUnit> nvrtc_compile_batched(const std::vector<std::string>& names,
                                             const std::vector<std::string>& sources, const std::string& arch);
// The same with an explicit plan (tests, measurements).
std::vector<NvrtcUnit> nvrtc_compile_batched(const std::vector<std::string>& names,
                                             const std::vector<std::string>& sources, const std::string& arch,
                                             const std::vector<std::vector<size_t>>& plan);

// u.cubin freshly compiled from u.source, skipping the disk-cache read (the driver refused the
// cached CUBIN); the new CUBIN is stored over the entry.
void nvrtc_recompile(NvrtcUnit& u, const std::string& arch);

}  // namespace fusor
