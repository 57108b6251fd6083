// Incident bundle walker (interfaces.md §3): hosts/<host>/<file>, gzip and rotated
// files, boot_time and timezone, and the year for year-less formats taken from
// the bundle's own dated lines (never from the machine's clock).
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "civil_time.h"
#include "line_parser_impl.h"
#include "reflex/log_format.h"
#include "reflex/sources.h"
#include "reflex/values.h"

namespace reflex {

namespace fs = std::filesystem;
using namespace formats;

namespace {

constexpr size_t kMaxReaderLine = 16u << 20;  // the parser cuts further (max_line_bytes)
constexpr size_t kPrescanLines = 2000;        // per file, when looking for the year

bool is_special_file(const std::string& name) {
  return name == "boot_time" || name == "timezone";
}

// Sort key that puts rotated files oldest first: kern.log.2.gz, kern.log.1,
// kern.log; kern.log-20240301, kern.log-20240302, kern.log.
struct FileKey {
  std::string dir, base;
  int64_t rank = 0;
  std::string name;
  bool operator<(const FileKey& o) const {
    return std::tie(dir, base, rank, name) < std::tie(o.dir, o.base, o.rank, o.name);
  }
};

FileKey file_key(const std::string& rel) {
  FileKey k;
  size_t slash = rel.rfind('/');
  k.dir = slash == std::string::npos ? "" : rel.substr(0, slash);
  k.name = slash == std::string::npos ? rel : rel.substr(slash + 1);
  std::string n = k.name;
  if (n.size() > 3 && n.compare(n.size() - 3, 3, ".gz") == 0) n.resize(n.size() - 3);
  size_t dot = n.rfind('.');
  size_t dash = n.rfind('-');
  auto all_digits = [](const std::string& s) {
    return !s.empty() && s.size() <= 9 &&
           std::all_of(s.begin(), s.end(), [](char c) { return is_digit(c); });
  };
  if (dot != std::string::npos && dot > 0 && all_digits(n.substr(dot + 1))) {
    k.base = n.substr(0, dot);
    k.rank = -std::stoll(n.substr(dot + 1));
  } else if (dash != std::string::npos && dash > 0 && n.size() - dash - 1 == 8 &&
             all_digits(n.substr(dash + 1))) {
    k.base = n.substr(0, dash);
    k.rank = std::stoll(n.substr(dash + 1)) - 100000000;
  } else {
    k.base = n;
  }
  return k;
}

std::string read_small_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::string s;
  char buf[4096];
  in.read(buf, sizeof buf);
  s.assign(buf, size_t(in.gcount()));
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.erase(0, 1);
  return s;
}

// "+05:30", "-0800", "UTC", "Z" -> seconds east of UTC.
std::optional<int> fixed_offset(const std::string& s) {
  if (s == "UTC" || s == "Z" || s == "GMT" || s == "Etc/UTC" || s == "UTC0") return 0;
  std::string t = s;
  if (t.rfind("UTC", 0) == 0 || t.rfind("GMT", 0) == 0) t = t.substr(3);
  if (t.empty() || (t[0] != '+' && t[0] != '-')) return std::nullopt;
  Civil c;
  size_t i = 0;
  if (!zone(t, &i, &c) || i != t.size() || !c.has_zone) return std::nullopt;
  return c.zone_s;
}

// IANA zone name -> offset at `at_us` from the system tzdata. TZ is process
// global, so it is switched under a mutex and restored.
std::optional<int> iana_offset(const std::string& name, int64_t at_us) {
  if (name.empty() || name.find("..") != std::string::npos || name[0] == '/') return std::nullopt;
  std::error_code ec;
  if (!fs::is_regular_file(fs::path("/usr/share/zoneinfo") / name, ec)) return std::nullopt;
  static std::mutex mu;
  std::lock_guard lock(mu);
  const char* old = std::getenv("TZ");
  std::string saved = old ? old : "";
  setenv("TZ", name.c_str(), 1);
  tzset();
  time_t t = time_t(at_us / kUsPerSec);
  struct tm tm {};
  bool ok = localtime_r(&t, &tm) != nullptr;
  long off = tm.tm_gmtoff;
  if (old)
    setenv("TZ", saved.c_str(), 1);
  else
    unsetenv("TZ");
  tzset();
  if (!ok) return std::nullopt;
  return int(off);
}

// A thread's read buffer, kept between its files. A new 1 MiB buffer for
// each file was ~250 fresh pages faulted as the first read filled them
// (~10 us each on a VM), and with --threads glibc handed a worker's freed
// buffer back to the kernel between files: ~550 faults of a mixed run.
thread_local std::unique_ptr<char[]> t_spare_read_buffer;

// Reads a (possibly gzip-compressed) file line by line.
class LineReader {
 public:
  // first_read: the first read's size. A prescan that looks at a file's
  // first lines asks for little: each file is opened up to three times, and
  // 1 MiB first reads made the telemetry bench read 341 MB for 256 MB.
  explicit LineReader(const std::string& path, size_t first_read = kBufSize)
      : gz_(gzopen(path.c_str(), "rb")), want_(std::min(first_read, kBufSize)) {
    // zlib reads straight into our buffer for a request of twice its own.
    if (gz_)
      gzbuffer(gz_, want_ < kBufSize ? unsigned(std::max<size_t>(want_ / 2, 8192)) : 1u << 17);
  }
  ~LineReader() {
    if (gz_) gzclose(gz_);
    if (buf_ && !t_spare_read_buffer) t_spare_read_buffer = std::move(buf_);
  }
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;
  bool ok() const { return gz_ != nullptr; }
  std::string error() const {
    if (!gz_) return std::strerror(errno);
    int errnum = 0;
    const char* m = gzerror(gz_, &errnum);
    return m ? m : "read error";
  }
  // Peek at the start of the (decompressed) file for binary detection.
  bool looks_binary() {
    if (!fill()) return false;
    size_t n = std::min<size_t>(end_ - pos_, 4096), nul = 0, ctrl = 0;
    for (size_t i = 0; i < n; ++i) {
      unsigned char c = static_cast<unsigned char>(buf_.get()[pos_ + i]);
      if (c == 0)
        ++nul;
      else if (c < 0x09 || (c > 0x0d && c < 0x20))
        ++ctrl;
    }
    return n > 0 && nul > 0 && (nul + ctrl) * 10 > n;  // >10% NUL/control: not a log
  }
  // Next line without its '\n'; false at EOF. *cut when the line exceeded the cap.
  bool next(std::string_view* line, bool* cut) {
    *cut = false;
    carry_.clear();
    bool discarding = false;
    for (;;) {
      if (pos_ == end_ && !fill()) {
        if (carry_.empty() && !discarding) return false;
        *line = carry_;
        return true;
      }
      const char* start = buf_.get() + pos_;
      const void* nl = std::memchr(start, '\n', end_ - pos_);
      size_t len = nl ? static_cast<const char*>(nl) - start : end_ - pos_;
      if (nl && carry_.empty() && !discarding) {
        *line = std::string_view(start, len);
        pos_ += len + 1;
        return true;
      }
      if (!discarding) {
        size_t room = kMaxReaderLine - carry_.size();
        if (len > room) {
          carry_.append(start, room);
          discarding = true;
          *cut = true;
        } else {
          carry_.append(start, len);
        }
      }
      pos_ += len + (nl ? 1 : 0);
      if (nl) {
        *line = carry_;
        return true;
      }
    }
  }
  // Next run of whole lines, each ending in '\n', straight out of the read
  // buffer (no copy); false when the buffer holds no complete line (then
  // next() joins the line across reads) or at EOF.
  bool next_block(std::string_view* block) {
    if (pos_ == end_ && !fill()) return false;
    const char* start = buf_.get() + pos_;
    const void* nl = memrchr(start, '\n', end_ - pos_);
    if (!nl) return false;
    size_t len = static_cast<const char*>(nl) - start + 1;
    *block = std::string_view(start, len);
    pos_ += len;
    return true;
  }
  bool failed() const { return failed_; }

 private:
  bool fill() {
    if (pos_ < end_) return true;
    if (!gz_ || eof_) return false;
    // Not a vector: zero-filling 1 MiB for each reader (a file is opened up
    // to three times) was a third of a small bundle's read time.
    if (!buf_)
      buf_ = t_spare_read_buffer ? std::move(t_spare_read_buffer)
                                 : std::make_unique_for_overwrite<char[]>(kBufSize);
    int n = gzread(gz_, buf_.get(), unsigned(want_));
    want_ = kBufSize;
    int errnum = Z_OK;
    gzerror(gz_, &errnum);
    // A truncated .gz reads what it can, then reports Z_BUF_ERROR.
    if (n < 0 || (errnum != Z_OK && errnum != Z_STREAM_END)) failed_ = true;
    if (n <= 0) {
      eof_ = true;
      return false;
    }
    pos_ = 0;
    end_ = size_t(n);
    return true;
  }
  gzFile gz_;
  static constexpr size_t kBufSize = size_t(1) << 20;
  std::unique_ptr<char[]> buf_;
  size_t want_, pos_ = 0, end_ = 0;
  bool eof_ = false, failed_ = false;
  std::string carry_;
};

constexpr size_t kPrescanRead = size_t(1) << 16;  // a prescan's first read

// Wall time of the first line of a file that carries its own time (looked at
// within the first kPrescanLines lines), for the untimed lines before it.
std::optional<int64_t> lead_time(const std::string& path, const FileContext& ctx) {
  LineReader r(path, kPrescanRead);
  if (!r.ok() || r.looks_binary()) return std::nullopt;
  auto empty = Topology::empty();
  LineParserImpl p(*empty, FormatOptions{}, nullptr);
  p.begin_file(ctx);
  LogRecord rec;
  std::string_view line;
  bool cut;
  for (size_t n = 0; n < kPrescanLines && r.next(&line, &cut); ++n) {
    if (!p.parse(line, n + 1, &rec)) continue;
    if (!rec.time_inherited && rec.time.wall) {
      if (n == 0) return std::nullopt;  // the common case: nothing to lend
      return rec.time.wall;
    }
  }
  return std::nullopt;
}

struct HostDir {
  std::string name;
  fs::path path;
  std::vector<std::pair<FileKey, std::string>> files;  // key, path relative to the host dir
  std::optional<int64_t> boot_time_us;
  std::string timezone;
};

}  // namespace

uint64_t count_newlines(std::string_view text) {
  const char* p = text.data();
  size_t n = text.size();
  uint64_t total = 0;
#if defined(__SSE2__)
  // 16 bytes at a time; byte counters are folded every 255 rounds (psadbw).
  const __m128i nl = _mm_set1_epi8('\n');
  while (n >= 16) {
    size_t rounds = std::min<size_t>(n / 16, 255);
    __m128i acc = _mm_setzero_si128();
    for (size_t r = 0; r < rounds; ++r, p += 16) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(v, nl));
    }
    __m128i sums = _mm_sad_epu8(acc, _mm_setzero_si128());
    total += static_cast<uint64_t>(_mm_cvtsi128_si32(sums)) +
             static_cast<uint64_t>(_mm_cvtsi128_si32(_mm_srli_si128(sums, 8)));
    n -= rounds * 16;
  }
#endif
  for (size_t i = 0; i < n; ++i) total += p[i] == '\n';
  return total;
}

bool for_each_bundle_line(const std::string& bundle_dir,
                          const std::function<void(const BundleLine&)>& fn, FormatStats* stats,
                          std::string* error) {
  FormatStats local;
  if (!stats) stats = &local;
  BundlePlan plan;
  if (!plan_bundle(bundle_dir, &plan, stats, error)) return false;
  return read_planned_bundle(bundle_dir, &plan, fn, nullptr, nullptr, stats, error);
}

namespace {

using NoteFn = std::function<void(std::string)>;

// Every host directory under hosts/ with its files (rotated ones oldest
// first), boot_time and timezone; sorted by host name.
// 9999-12-31T23:59:59Z: an epoch boot_time past it ("inf", "1e300") is not
// an instant, and converting it to microseconds would overflow.
constexpr double kEpochSecondsMax = 253402300799.0;

std::vector<HostDir> list_hosts(const fs::path& hosts, const NoteFn& note, FormatStats* stats,
                                std::error_code& ec) {
  std::vector<HostDir> dirs;
  for (auto it = fs::directory_iterator(hosts, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    if (!it->is_directory(ec)) {
      note("hosts/" + name + " is not a host directory; skipped");
      ++stats->skipped_files;
      continue;
    }
    HostDir h;
    h.name = name;
    h.path = it->path();
    // A directory the walk may not enter would be skipped in silence, and its
    // host would look as if it had logged nothing: said instead.
    if (::access(h.path.c_str(), R_OK | X_OK) != 0) {
      note(
          "cannot read hosts/" + name + ": " + std::strerror(errno) +
          "; its logs are not in this diagnosis (the host did not go quiet: its input is missing)");
      ++stats->skipped_files;
      dirs.push_back(std::move(h));
      continue;
    }
    for (auto f = fs::recursive_directory_iterator(
             h.path, fs::directory_options::skip_permission_denied, ec);
         !ec && f != fs::recursive_directory_iterator(); f.increment(ec)) {
      if (f->path().filename().string()[0] == '.') {
        if (f->is_directory(ec)) f.disable_recursion_pending();
        continue;
      }
      const std::string shown =
          "hosts/" + name + "/" + f->path().lexically_relative(h.path).generic_string();
      if (f->is_directory(ec)) {
        if (::access(f->path().c_str(), R_OK | X_OK) != 0) {
          note("cannot read " + shown + ": " + std::strerror(errno) + "; skipped");
          ++stats->skipped_files;
          f.disable_recursion_pending();
        }
        continue;
      }
      if (!f->is_regular_file(ec)) {
        // A FIFO would block the walk, a device never end it.
        note(shown + " is not a regular file (a FIFO, socket, device or dangling link); skipped");
        ++stats->skipped_files;
        continue;
      }
      // Lexical: a symlinked file keeps its name in the bundle (not its target's).
      std::string rel = f->path().lexically_relative(h.path).generic_string();
      if (f.depth() == 0 && is_special_file(rel)) {
        std::string v = read_small_file(f->path());
        if (rel == "boot_time") {
          Civil c;
          if (size_t n = parse_iso(v, &c); n && n == v.size()) {
            h.boot_time_us = to_us(c, c.year, c.has_zone ? c.zone_s : 0);
          } else if (auto secs = parse_float(v); secs && *secs > 0 && *secs < kEpochSecondsMax) {
            h.boot_time_us = int64_t(*secs * 1e6);  // epoch seconds, as `date +%s` writes
          } else {
            note("hosts/" + name + "/boot_time is not an ISO-8601 instant ('" + v.substr(0, 64) +
                 "'); raw dmesg times of that host stay boot-relative");
          }
        } else {
          h.timezone = v;
        }
        continue;
      }
      h.files.emplace_back(file_key(rel), rel);
    }
    if (ec) {
      note("cannot list hosts/" + name + ": " + ec.message());
      ec.clear();
    }
    std::sort(h.files.begin(), h.files.end());
    dirs.push_back(std::move(h));
  }
  std::sort(dirs.begin(), dirs.end(),
            [](const HostDir& a, const HostDir& b) { return a.name < b.name; });
  return dirs;
}

// The year for year-less formats: the first line with a full date, else a
// boot_time. *from names it ("hosts/a/x.log:3").
void bundle_year(const std::vector<HostDir>& dirs, std::optional<int>* year,
                 std::optional<int64_t>* ref_us, std::string* from) {
  auto empty = Topology::empty();
  LineParserImpl p(*empty, FormatOptions{}, nullptr);
  LogRecord rec;
  for (const auto& h : dirs) {
    for (const auto& [key, rel] : h.files) {
      LineReader r((h.path / rel).string(), kPrescanRead);
      if (!r.ok() || r.looks_binary()) continue;
      FileContext ctx;
      ctx.host_dir = h.name;
      ctx.file = "hosts/" + h.name + "/" + rel;  // a bug report's header is read as such
      p.begin_file(ctx);
      std::string_view line;
      bool cut;
      for (size_t n = 0; n < kPrescanLines && r.next(&line, &cut); ++n) {
        if (p.parse(line, n + 1, &rec) && p.dated_year() && rec.time.wall && !rec.time_inherited &&
            p.dated_year() >= 2000) {
          *year = p.dated_year();
          *ref_us = rec.time.wall;
          *from = ctx.file + ":" + std::to_string(n + 1);
          return;
        }
      }
    }
  }
  for (const auto& h : dirs)
    if (h.boot_time_us) {
      *year = year_of_us(*h.boot_time_us);
      *ref_us = h.boot_time_us;
      *from = "hosts/" + h.name + "/boot_time";
      return;
    }
}

// The year a file was last written, when plausible (2000 or later): the year
// of last resort for a capture without a dated line.
std::optional<int> mtime_year(const fs::path& p) {
  std::error_code ec;
  const auto t = fs::last_write_time(p, ec);
  if (ec) return std::nullopt;
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(
                        std::chrono::file_clock::to_sys(t).time_since_epoch())
                        .count();
  if (secs < 946684800) return std::nullopt;
  return year_of_us(int64_t(secs) * kUsPerSec);
}

// The bundle-wide year and zone: `<bundle>/year` (written for --year) and
// `<bundle>/timezone` (for --timezone; the zone of hosts without their own).
struct BundleDefaults {
  std::optional<int> year;
  std::string timezone;
};

BundleDefaults bundle_defaults(const fs::path& root, const NoteFn& note) {
  BundleDefaults d;
  std::error_code ec;
  if (fs::is_regular_file(root / "year", ec)) {
    std::string v = read_small_file(root / "year");
    if (v.size() == 4 && std::all_of(v.begin(), v.end(), [](char c) { return is_digit(c); }))
      d.year = std::stoi(v);
    else
      note("the bundle's year file holds '" + v.substr(0, 16) + "', not a year; ignored");
  }
  if (fs::is_regular_file(root / "timezone", ec)) d.timezone = read_small_file(root / "timezone");
  return d;
}

// The host's timezone as a fixed offset at the bundle's dates; *why when unknown.
int host_offset(const HostDir& h, std::optional<int> year, std::optional<int64_t> ref_us,
                std::string* why) {
  if (h.timezone.empty()) return 0;
  int64_t at = ref_us.value_or(to_us(Civil{0, 1, 1, 0, 0, 0, 0, false, 0}, year.value_or(2000), 0));
  if (auto off = fixed_offset(h.timezone)) return *off;
  if (auto off2 = iana_offset(h.timezone, at)) return *off2;
  *why = "hosts/" + h.name + "/timezone names an unknown zone '" + h.timezone.substr(0, 64) +
         "'; zone-less times of that host are taken as UTC";
  return 0;
}

}  // namespace

bool plan_bundle(const std::string& bundle_dir, BundlePlan* plan, FormatStats* stats,
                 std::string* error) {
  FormatStats local;
  if (!stats) stats = &local;
  auto fail = [&](std::string m) {
    if (error) *error = std::move(m);
    return false;
  };
  NoteFn note = [&](std::string n) { add_note(stats, std::move(n)); };
  try {
    std::error_code ec;
    fs::path root(bundle_dir);
    if (!fs::exists(root, ec)) return fail(bundle_dir + ": no such bundle directory");
    if (!fs::is_directory(root, ec)) return fail(bundle_dir + ": not a directory");
    fs::path hosts = root / "hosts";
    if (!fs::is_directory(hosts, ec))
      return fail(bundle_dir + ": not an incident bundle (no hosts/ directory)");
    std::vector<HostDir> dirs = list_hosts(hosts, note, stats, ec);
    if (ec) return fail(bundle_dir + "/hosts: " + ec.message());
    const BundleDefaults given = bundle_defaults(root, note);
    SourceDeclarations sources;
    if (fs::path decl = root / "sources.json"; fs::exists(fs::symlink_status(decl, ec))) {
      std::string why;
      if (!read_source_declarations(decl.string(), &sources, &why)) return fail(why);
    }
    std::optional<int> year;
    std::optional<int64_t> ref_us;
    std::string year_from, year_note;
    if (given.year) {
      year = given.year;
      year_note = "year-less times take the year " + std::to_string(*year) + " given (--year)";
    } else {
      bundle_year(dirs, &year, &ref_us, &year_from);
      if (year)
        year_note = "year-less times take the year " + std::to_string(*year) + " from " +
                    year_from + " (the bundle's first dated line; --year sets it)";
    }
    plan->files.clear();
    for (auto& h : dirs) {
      if (h.timezone.empty()) h.timezone = given.timezone;
      std::string why;
      int tz = host_offset(h, year, ref_us, &why);
      // The note is said where the sequential walk reaches the host.
      if (!why.empty()) {
        BundleFile& f = plan->files.emplace_back();
        f.notes_before.push_back(std::move(why));
      }
      for (const auto& [key, rel] : h.files) {
        BundleFile& f = plan->files.emplace_back();
        f.ctx.host_dir = h.name;
        f.ctx.file = "hosts/" + h.name + "/" + rel;
        f.ctx.boot_time_us = h.boot_time_us;
        f.ctx.tz_offset_s = tz;
        f.ctx.year = year;
        f.ctx.year_fixed = given.year.has_value();
        f.ctx.year_note = year_note;
        f.path = (h.path / rel).string();
        sources.apply(f.ctx.file, &f.ctx);
        if (!year) {
          // No dated line anywhere: the year the file was written, said per file.
          f.ctx.year = mtime_year(f.path);
          if (f.ctx.year)
            f.ctx.year_note = "year " + std::to_string(*f.ctx.year) + " for " + f.ctx.file +
                              " from its modification time (no dated line in the input; "
                              "--year sets it)";
        }
      }
    }
    return true;
  } catch (const std::exception& e) {
    return fail(bundle_dir + ": " + e.what());
  }
}

std::optional<NamedHost> host_named_in(const std::string& path, const std::string& name) {
  LineReader r(path, kPrescanRead);
  if (!r.ok() || r.looks_binary()) return std::nullopt;
  auto empty = Topology::empty();
  LineParserImpl p(*empty, FormatOptions{}, nullptr);
  FileContext ctx;
  ctx.file = name;  // no directory: only a host field names a host
  p.begin_file(ctx);
  std::map<std::string, size_t> named;
  std::string uname_host;
  LogRecord rec;
  std::string_view line;
  bool cut;
  for (size_t n = 0; n < kPrescanLines && r.next(&line, &cut); ++n) {
    if (!p.parse(line, n + 1, &rec) || rec.host.empty()) continue;
    ++named[rec.host];
    if (uname_host.empty() && p.in_bug_report() && line.substr(0, 7) == "uname: ")
      uname_host = rec.host;
  }
  if (named.empty()) return std::nullopt;
  NamedHost h;
  h.hosts = named.size();
  if (!uname_host.empty()) {
    h.host = uname_host;
    h.how = "the bug report's uname line";
    return h;
  }
  size_t best = 0;
  for (const auto& [host, count] : named)
    if (count > best) {
      best = count;
      h.host = host;
    }
  h.how = "the lines' host field";
  return h;
}

void add_note(FormatStats* stats, std::string n) {
  if (std::find(stats->notes.begin(), stats->notes.end(), n) == stats->notes.end())
    stats->notes.push_back(std::move(n));
}

void read_bundle_file(BundleFile* f, const std::function<void(const BundleLine&)>& fn,
                      const std::function<uint64_t(const BundleBlock&)>& block_fn,
                      const std::function<bool(const FileContext*)>& want_blocks,
                      FormatStats* stats) {
  for (std::string& n : f->notes_before) add_note(stats, std::move(n));
  f->notes_before.clear();
  if (f->path.empty()) return;
  FileContext& ctx = f->ctx;
  ctx.lead_time_us = lead_time(f->path, ctx);
  LineReader r(f->path);
  if (!r.ok()) {
    add_note(stats, "cannot read " + ctx.file + ": " + r.error() + "; skipped");
    ++stats->skipped_files;
    return;
  }
  if (r.looks_binary()) {
    add_note(stats, ctx.file + " looks binary (not a text log); skipped");
    ++stats->skipped_files;
    return;
  }
  std::string_view line;
  bool cut;
  uint64_t line_no = 0;
  const bool blocks = block_fn && want_blocks;
  for (;;) {
    std::string_view block;
    if (blocks && want_blocks(&ctx) && r.next_block(&block)) {
      line_no += block_fn(BundleBlock{&ctx, block, line_no + 1});
      continue;
    }
    if (!r.next(&line, &cut)) break;
    ++line_no;
    if (cut) ++stats->truncated_long_lines;
    fn(BundleLine{&ctx, line, line_no});
  }
  if (r.failed())
    add_note(stats, "read error in " + ctx.file + " after line " + std::to_string(line_no) + ": " +
                        r.error() + " (rest of the file skipped)");
}

bool read_planned_bundle(const std::string& bundle_dir, BundlePlan* plan,
                         const std::function<void(const BundleLine&)>& fn,
                         const std::function<uint64_t(const BundleBlock&)>& block_fn,
                         const std::function<bool(const FileContext*)>& want_blocks,
                         FormatStats* stats, std::string* error) {
  FormatStats local;
  if (!stats) stats = &local;
  try {
    for (BundleFile& f : plan->files) read_bundle_file(&f, fn, block_fn, want_blocks, stats);
    return true;
  } catch (const std::exception& e) {
    if (error) *error = bundle_dir + ": " + e.what();
    return false;
  }
}

}  // namespace reflex
