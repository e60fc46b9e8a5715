// On-disk compile caches that are verified, not trusted (DESIGN.md "Compile cache"), shared by
// the Vulkan (SPIR-V, pipeline cache) and CUDA (CUBIN) backends, plus the one way fusor reads
// a file it did not write itself: only if it is a regular file.
//
// Entry format (little-endian): "FZCACHE1" | u64 key length | u64 payload length |
// u64 checksum lo | u64 checksum hi | key bytes | payload bytes. The checksum is a 128-bit
// hash over (key, payload). An entry is used only when its magic, its whole stored key, its
// exact size and its checksum all match; anything else (truncated, bit-flipped, another key's
// entry renamed or copied over this one, a foreign file, a directory, a FIFO, a device) reads
// as a miss, so the caller recompiles and overwrites it. Nothing here throws.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace fusor {

// 128-bit content hash as 32 hex digits (two independent FNV-1a 64 lanes): stable across runs
// and builds, unlike std::hash. Not cryptographic; it detects damage, not attacks.
std::string content_hash(const std::string& data);
std::string content_hash(const void* data, size_t n);  // the same over n bytes at data

// The whole file at `path` when it is a regular file (symlinks followed) of at most max_bytes;
// std::nullopt otherwise (missing, directory, FIFO/socket/device, larger, unreadable). Opens
// with O_NONBLOCK and checks the opened descriptor, so a FIFO never blocks and a file swapped
// between the check and the open is still refused. *why (optional) gets a short reason.
std::optional<std::string> read_regular_file(const std::string& path, uint64_t max_bytes, std::string* why = nullptr);

// The compile cache folder of one backend ("vulkan", "cuda"): $XDG_CACHE_HOME/fusor/<backend>, or
// ~/.cache/fusor/<backend> when XDG_CACHE_HOME is unset or relative (the XDG Base Directory spec:
// a relative value is invalid and ignored); "" (no disk cache) without either, or when
// FUSOR_NO_DISK_CACHE is set to anything but 0. Not created here: DiskCache::store makes it
// with its parents.
std::string compile_cache_dir(const std::string& backend);

class DiskCache {
 public:
  // dir: the cache folder (created with its parents on first store; "" disables the cache).
  // ext: file extension of entries, e.g. ".spv".
  DiskCache(std::string dir, std::string ext) : dir_(std::move(dir)), ext_(std::move(ext)) {}
  bool enabled() const { return !dir_.empty(); }
  // <dir>/<content_hash(key)><ext>: where the entry for key lives.
  std::string path_for(const std::string& key) const;
  // The payload stored for exactly this key, or std::nullopt (miss, or an entry that fails any
  // check above: the caller recompiles and stores over it).
  std::optional<std::string> load(const std::string& key) const;
  // Writes the entry to a unique temporary file in dir (mkstemp) and renames it over the entry,
  // so concurrent writers in any number of processes never interleave and readers see the old
  // entry or the whole new one. Returns false (and leaves no temporary file) on any failure:
  // the cache is an optimisation and a read-only home only costs recompiles.
  bool store(const std::string& key, const std::string& payload) const;

  // Entries larger than this are never read (a cached CUBIN or pipeline cache is far smaller).
  static constexpr uint64_t kMaxEntryBytes = uint64_t{1} << 30;

  // The folder's entries of this extension are kept under max_bytes() in all (as Mesa's shader
  // cache and CUDA's CUDA_CACHE_MAXSIZE cap theirs): a store that takes them past it removes the
  // least recently used (oldest modification time; a load refreshes it) until they fill at most
  // 90% of it (the entry just stored stays). Every distinct input shape of a dynamic model is a
  // new kernel, so an uncapped cache grows without end. FUSOR_CACHE_MAX_MB (MiB, default 1024;
  // 0: no cap; a value that is not a whole number: the default) sets it; entries dated in the
  // future go first.
  static uint64_t max_bytes();

 private:
  std::string dir_, ext_;
};

}  // namespace fusor
