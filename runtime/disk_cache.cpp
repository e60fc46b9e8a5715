#include "runtime/disk_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <vector>

namespace fusor {

namespace {

struct Hash128 {
  uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
  void add(const unsigned char* p, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      a = (a ^ p[i]) * 0x100000001b3ull;
      b = (b ^ p[i]) * 0x00000100000001b3ull + 0x9e3779b97f4a7c15ull;
    }
  }
  void add(const std::string& s) { add(reinterpret_cast<const unsigned char*>(s.data()), s.size()); }
  void add_u64(uint64_t v) {
    std::string s(8, '\0');
    for (int i = 0; i < 8; ++i) s[i] = static_cast<char>(v >> (8 * i));
    add(s);
  }
};

constexpr char kMagic[8] = {'F', 'Z', 'C', 'A', 'C', 'H', 'E', '1'};
constexpr size_t kHeader = 8 + 4 * 8;

void put_u64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s += static_cast<char>(v >> (8 * i));
}
uint64_t get_u64(const std::string& s, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(s[at + i])) << (8 * i);
  return v;
}

// The checksum covers the lengths too, so a payload/key boundary cannot shift undetected.
Hash128 entry_checksum(const std::string& key, const char* payload, size_t n) {
  Hash128 h;
  h.add_u64(key.size());
  h.add_u64(n);
  h.add(key);
  h.add(std::string(payload, n));
  return h;
}

bool mkdir_p(const std::string& dir) {
  std::string path;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    path = dir.substr(0, pos);
    if (path.empty()) continue;
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  struct stat st {};
  return ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The entries of one extension in dir (regular files, names not starting with '.'), with their
// sizes and modification times; temporary files a killed writer left over an hour ago are
// removed on the way.
struct Entry {
  std::string path;
  uint64_t bytes;
  int64_t mtime_ns;
};
std::vector<Entry> list_entries(const std::string& dir, const std::string& ext, uint64_t* total) {
  std::vector<Entry> out;
  *total = 0;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  const time_t now = ::time(nullptr);
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    const std::string path = dir + "/" + name;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (name.rfind(".tmp-", 0) == 0) {
      if (now - st.st_mtime > 3600) ::unlink(path.c_str());
      continue;
    }
    if (name[0] == '.' || name.size() <= ext.size() || name.compare(name.size() - ext.size(), ext.size(), ext) != 0) continue;
    // A time in the future (a clock set back since) would keep an entry forever: oldest instead.
    const int64_t t = st.st_mtim.tv_sec > now ? 0 : int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
    out.push_back({path, static_cast<uint64_t>(st.st_size), t});
    *total += static_cast<uint64_t>(st.st_size);
  }
  ::closedir(d);
  return out;
}

// Per (dir, ext): this process's estimate of the entries' total size, from one listing plus
// what it stored since; the folder is listed again (and trimmed) only when the estimate passes
// the cap, so a compile of many kernels does not list the folder once per kernel.
std::mutex g_usage_mu;
std::map<std::string, uint64_t> g_usage;

void account_and_trim(const std::string& dir, const std::string& ext, const std::string& stored, uint64_t added) {
  const uint64_t cap = DiskCache::max_bytes();
  if (cap == 0) return;  // no cap
  std::lock_guard<std::mutex> lock(g_usage_mu);
  const std::string key = dir + "\n" + ext;
  auto it = g_usage.find(key);
  uint64_t total = 0;
  if (it == g_usage.end()) {
    list_entries(dir, ext, &total);
    it = g_usage.emplace(key, total).first;
  } else {
    it->second += added;
  }
  if (it->second <= cap) return;
  std::vector<Entry> entries = list_entries(dir, ext, &total);
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.mtime_ns < b.mtime_ns; });
  for (const Entry& e : entries) {
    if (total <= cap / 10 * 9) break;
    if (e.path == stored) continue;  // the entry just written stays, even one past the cap alone
    // Gone already (another process trimming the same folder) counts as removed: else both
    // would go on deleting past the target.
    if (::unlink(e.path.c_str()) == 0 || errno == ENOENT) total -= std::min(total, e.bytes);
  }
  it->second = total;
}

}  // namespace

std::string content_hash(const std::string& data) { return content_hash(data.data(), data.size()); }

std::string content_hash(const void* data, size_t n) {
  Hash128 h;
  h.add(static_cast<const unsigned char*>(data), n);
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint64_t lane : {h.a, h.b})
    for (int i = 0; i < 8; ++i) {
      const unsigned byte = static_cast<unsigned>(lane >> (8 * i)) & 0xff;
      s += d[byte >> 4], s += d[byte & 15];
    }
  return s;
}

std::optional<std::string> read_regular_file(const std::string& path, uint64_t max_bytes, std::string* why) {
  auto fail = [&](const std::string& w) -> std::optional<std::string> {
    if (why) *why = w;
    return std::nullopt;
  };
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return fail(std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail(std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return fail("is a directory");
  if (!S_ISREG(st.st_mode)) return fail("not a regular file (FIFO, socket or device)");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes) return fail("larger than " + std::to_string(max_bytes) + " bytes");
  std::string bytes(static_cast<size_t>(size), '\0');
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(std::string("read failed: ") + std::strerror(errno));
    if (n == 0) break;  // shrank while reading: return what is there (cache entries then fail their checks)
    got += static_cast<size_t>(n);
  }
  bytes.resize(got);
  return bytes;
}

std::string compile_cache_dir(const std::string& backend) {
  if (const char* off = std::getenv("FUSOR_NO_DISK_CACHE"); off && *off && std::string(off) != "0") return "";
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && x[0] == '/') return std::string(x) + "/fusor/" + backend;
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/fusor/" + backend;
  return "";
}

uint64_t DiskCache::max_bytes() {
  if (const char* v = std::getenv("FUSOR_CACHE_MAX_MB"); v && *v) {
    char* end = nullptr;
    const unsigned long long mb = std::strtoull(v, &end, 10);
    if (end && *end == '\0' && v[0] != '-' && mb < (uint64_t{1} << 40)) return static_cast<uint64_t>(mb) << 20;
  }
  return uint64_t{1024} << 20;
}

std::string DiskCache::path_for(const std::string& key) const { return dir_ + "/" + content_hash(key) + ext_; }

std::optional<std::string> DiskCache::load(const std::string& key) const {
  if (dir_.empty()) return std::nullopt;
  std::optional<std::string> f = read_regular_file(path_for(key), kMaxEntryBytes);
  if (!f || f->size() < kHeader || std::memcmp(f->data(), kMagic, 8) != 0) return std::nullopt;
  const uint64_t klen = get_u64(*f, 8), plen = get_u64(*f, 16);
  // Exact size: a truncated or padded entry is rejected before anything is compared.
  if (klen != key.size() || plen > f->size() || f->size() - kHeader - klen != plen) return std::nullopt;
  if (f->compare(kHeader, klen, key) != 0) return std::nullopt;  // another key's entry
  const char* payload = f->data() + kHeader + klen;
  const Hash128 h = entry_checksum(key, payload, static_cast<size_t>(plen));
  if (h.a != get_u64(*f, 24) || h.b != get_u64(*f, 32)) return std::nullopt;
  ::utimensat(AT_FDCWD, path_for(key).c_str(), nullptr, 0);  // recently used: trimmed last
  return std::string(payload, static_cast<size_t>(plen));
}

bool DiskCache::store(const std::string& key, const std::string& payload) const {
  if (dir_.empty() || !mkdir_p(dir_)) return false;
  std::string entry(kMagic, 8);
  put_u64(entry, key.size());
  put_u64(entry, payload.size());
  const Hash128 h = entry_checksum(key, payload.data(), payload.size());
  put_u64(entry, h.a);
  put_u64(entry, h.b);
  entry += key;
  entry += payload;
  // mkstemp: a name no other thread or process can be using (O_EXCL), unlike a pid- or
  // rand()-derived one.
  std::string tmp = dir_ + "/.tmp-XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) return false;
  size_t put = 0;
  bool ok = true;
  while (ok && put < entry.size()) {
    const ssize_t n = ::write(fd, entry.data() + put, entry.size() - put);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) put += static_cast<size_t>(n);
  }
  ok = ::fchmod(fd, 0644) == 0 && ok;
  ok = ::close(fd) == 0 && ok;
  // rename is atomic: readers see the old entry or the whole new one. It fails when the entry's
  // name is taken by a directory; the temporary file is removed either way.
  if (ok) ok = std::rename(tmp.c_str(), path_for(key).c_str()) == 0;
  if (!ok) ::unlink(tmp.c_str());
  if (ok) account_and_trim(dir_, ext_, path_for(key), entry.size());
  return ok;
}

}  // namespace fusor
