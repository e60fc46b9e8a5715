// Batched NVRTC compilation (nvrtc_batch.h): grouping, the wrapped batch text, and the
// compile with its kernel-by-kernel error path.
#include "backends/cuda/nvrtc_batch.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <exception>
#include <limits>
#include <map>
#include <set>

#include "backends/compile_pool.h"
#include "backends/cuda/cuda_backend.h"

namespace fusor {
namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string ident_at(const std::string& s, size_t i) {
  size_t j = i;
  while (j < s.size() && ident_char(s[j])) ++j;
  return s.substr(i, j - i);
}

// One source taken apart for wrapping: its top-level #include lines, the rest, and the names
// of the macros it defines.
struct Piece {
  bool ok = true;
  std::vector<std::string> includes;
  std::string body;
  std::vector<std::string> macros;
};

Piece split_piece(const std::string& src) {
  Piece p;
  int depth = 0;
  bool defined = false, continued = false;
  size_t pos = 0;
  while (pos < src.size()) {
    size_t end = src.find('\n', pos);
    if (end == std::string::npos) end = src.size();
    const std::string line = src.substr(pos, end - pos);
    pos = end + 1;
    const bool continues = !line.empty() && line.back() == '\\';
    const size_t h = line.find_first_not_of(" \t");
    if (!continued && h != std::string::npos && line[h] == '#') {
      const size_t w = line.find_first_not_of(" \t", h + 1);
      const std::string word = w == std::string::npos ? "" : ident_at(line, w);
      if (word == "if" || word == "ifdef" || word == "ifndef") {
        ++depth;
      } else if (word == "endif") {
        --depth;
      } else if (word == "define") {
        defined = true;
        const size_t n = line.find_first_not_of(" \t", w + word.size());
        if (n != std::string::npos) p.macros.push_back(ident_at(line, n));
      } else if (word == "include") {
        // Hoisting an include out of a conditional, or above a #define that may configure
        // it, could change what it declares: such a source compiles alone.
        if (depth > 0 || defined) p.ok = false;
        p.includes.push_back(line.substr(h));
        continued = continues;
        continue;
      }
    }
    continued = continues;
    p.body += line;
    p.body += '\n';
  }
  // A `::name` qualified from the global namespace would miss a name that now lives in
  // fz_pN (`a::b` and `T<x>::b` are fine).
  for (size_t i = src.find("::"); i != std::string::npos; i = src.find("::", i + 2)) {
    size_t k = i;
    while (k > 0 && (src[k - 1] == ' ' || src[k - 1] == '\t')) --k;
    if (k == 0 || !(ident_char(src[k - 1]) || src[k - 1] == '>')) {
      p.ok = false;
      break;
    }
  }
  return p;
}

std::string batch_label(const std::vector<std::string>& names, const std::vector<size_t>& batch) {
  if (batch.size() == 1) return names[batch[0]];
  return names[batch[0]] + "+" + std::to_string(batch.size() - 1);
}

// The units of one group: one program, or on any failure one per kernel; *failed is the
// kernel being compiled when an exception leaves (the first in plan order that fails alone).
std::vector<NvrtcUnit> compile_group(const std::vector<std::string>& names, const std::vector<std::string>& sources,
                                     const std::vector<size_t>& batch, const std::string& arch, size_t* failed) {
  *failed = batch.front();
  NvrtcUnit u{batch, nvrtc_batch_source(sources, batch), batch_label(names, batch), {}};
  if (batch.size() == 1) {
    u.cubin = nvrtc_cubin(u.source, u.label, arch);
    return {std::move(u)};
  }
  try {
    u.cubin = nvrtc_cubin(u.source, u.label, arch);
    return {std::move(u)};
  } catch (const std::exception&) {
    // Find the kernel to blame (its own program's message), or fall back if none fails.
  }
  std::vector<NvrtcUnit> solo;
  for (size_t i : batch) {
    *failed = i;
    NvrtcUnit one{{i}, sources[i], names[i], {}};
    one.cubin = nvrtc_cubin(one.source, one.label, arch);
    solo.push_back(std::move(one));
  }
  return solo;
}

}  // namespace

int nvrtc_batch_limit() {
  const char* s = std::getenv("FUSOR_NVRTC_BATCH");
  if (!s || !*s) return 0;
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (!end || *end != '\0' || v < 0) return 0;
  return static_cast<int>(std::clamp<long>(v, 1, std::numeric_limits<int>::max()));
}

bool nvrtc_batchable(const std::string& src) { return split_piece(src).ok; }

std::vector<std::vector<size_t>> nvrtc_batch_plan(const std::vector<std::string>& names,
                                                  const std::vector<std::string>& sources, int threads, int limit) {
  std::map<std::string, int> uses;
  for (size_t i = 0; i < sources.size(); ++i)
    if (!sources[i].empty()) ++uses[names[i]];
  std::vector<std::vector<size_t>> groups;
  std::vector<size_t> pool;  // batchable kernels
  for (size_t i = 0; i < sources.size(); ++i) {
    if (sources[i].empty()) continue;
    if (limit == 1 || uses[names[i]] > 1 || !nvrtc_batchable(sources[i]))
      groups.push_back({i});
    else
      pool.push_back(i);
  }
  if (!pool.empty()) {
    size_t nb = std::min(pool.size(), static_cast<size_t>(std::max(1, threads)));
    if (limit > 1) nb = std::max(nb, (pool.size() + limit - 1) / static_cast<size_t>(limit));
    const size_t cap = limit > 1 ? static_cast<size_t>(limit) : pool.size();
    // Longest first onto the lightest group that has room (ties: the lower group).
    std::vector<size_t> order = pool;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return sources[a].size() > sources[b].size(); });
    std::vector<std::vector<size_t>> batch(nb);
    std::vector<size_t> load(nb, 0);
    for (size_t i : order) {
      size_t best = nb;
      for (size_t g = 0; g < nb; ++g)
        if (batch[g].size() < cap && (best == nb || load[g] < load[best])) best = g;
      batch[best].push_back(i);
      load[best] += sources[i].size();
    }
    for (auto& b : batch) {
      std::sort(b.begin(), b.end());
      if (!b.empty()) groups.push_back(std::move(b));
    }
  }
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  return groups;
}

std::string nvrtc_batch_source(const std::vector<std::string>& sources, const std::vector<size_t>& batch) {
  if (batch.size() == 1) return sources[batch[0]];
  std::vector<Piece> pieces;
  std::vector<std::string> includes;
  std::set<std::string> seen;
  for (size_t i : batch) {
    pieces.push_back(split_piece(sources[i]));
    for (auto& inc : pieces.back().includes)
      if (seen.insert(inc).second) includes.push_back(inc);
  }
  std::string out =
      "// fusor: " + std::to_string(batch.size()) + " kernels in one NVRTC program (backends/cuda/nvrtc_batch.h)\n";
  for (auto& inc : includes) out += inc + "\n";
  for (size_t n = 0; n < pieces.size(); ++n) {
    const std::string ns = "fz_p" + std::to_string(n);
    out += "namespace " + ns + " {\n" + pieces[n].body + "}  // namespace " + ns + "\n";
    std::set<std::string> undone;
    for (auto& m : pieces[n].macros)
      if (undone.insert(m).second) out += "#undef " + m + "\n";
  }
  return out;
}

std::vector<NvrtcUnit> nvrtc_compile_batched(const std::vector<std::string>& names,
                                             const std::vector<std::string>& sources, const std::string& arch,
                                             const std::vector<std::vector<size_t>>& plan) {
  std::vector<std::vector<NvrtcUnit>> done(plan.size());
  std::vector<std::exception_ptr> errors(plan.size());
  std::vector<size_t> failed(plan.size(), 0);
  // Every group runs; the failure of the lowest kernel index is reported, so the error does
  // not depend on how kernels were grouped or on timing.
  for_each_job(plan.size(), [&](size_t g) {
    try {
      done[g] = compile_group(names, sources, plan[g], arch, &failed[g]);
    } catch (...) {
      errors[g] = std::current_exception();
    }
  });
  size_t worst = plan.size();
  for (size_t g = 0; g < plan.size(); ++g)
    if (errors[g] && (worst == plan.size() || failed[g] < failed[worst])) worst = g;
  if (worst < plan.size()) std::rethrow_exception(errors[worst]);
  std::vector<NvrtcUnit> units;
  for (auto& d : done)
    for (auto& u : d) units.push_back(std::move(u));
  std::sort(units.begin(), units.end(),
            [](const NvrtcUnit& a, const NvrtcUnit& b) { return a.kernels.front() < b.kernels.front(); });
  return units;
}

std::vector<NvrtcUnit> nvrtc_compile_batched(const std::vector<std::string>& names,
                                             const std::vector<std::string>& sources, const std::string& arch) {
  return nvrtc_compile_batched(names, sources, arch,
                               nvrtc_batch_plan(names, sources, compile_threads(), nvrtc_batch_limit()));
}

void nvrtc_recompile(NvrtcUnit& u, const std::string& arch) {
  u.cubin = nvrtc_cubin(u.source, u.label, arch, /*use_cache=*/false);
}

}  // namespace fusor
