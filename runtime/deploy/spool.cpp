// The agent's on-disk spool; format and guarantees in reflex/deploy/spool.h.
#include "reflex/deploy/spool.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string_view>

namespace reflex::deploy {

namespace {

namespace fs = std::filesystem;

constexpr char kMagic[] = "RSP1";
constexpr size_t kHeader = 12;
constexpr uint32_t kMaxBody = 64u << 20;  // larger is garbage (lines are cut at 1 MiB)

void put32(std::string* s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint32_t get32(std::string_view s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

uint32_t crc(std::string_view s) {
  return static_cast<uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size())));
}

std::string encode(const SpoolRecord& r) {
  std::string body;
  body.reserve(8 + r.shard.size() + r.id.size() + r.payload.size());
  put32(&body, static_cast<uint32_t>(r.shard.size()));
  body += r.shard;
  put32(&body, static_cast<uint32_t>(r.id.size()));
  body += r.id;
  body += r.payload;
  std::string out(kMagic, 4);
  put32(&out, static_cast<uint32_t>(body.size()));
  put32(&out, crc(body));
  return out + body;
}

bool decode(std::string_view body, SpoolRecord* r) {
  if (body.size() < 4) return false;
  uint32_t sl = get32(body, 0);
  if (sl > body.size() - 4) return false;
  size_t at = 4 + sl;
  if (body.size() - at < 4) return false;
  uint32_t il = get32(body, at);
  if (il > body.size() - at - 4) return false;
  if (r) {
    r->shard.assign(body.substr(4, sl));
    r->id.assign(body.substr(at + 4, il));
    r->payload.assign(body.substr(at + 4 + il));
  }
  return true;
}

// An intact record at buf[pos]: its length (header included), else 0.
size_t intact_at(std::string_view buf, size_t pos, SpoolRecord* r) {
  if (buf.size() - pos < kHeader || buf.compare(pos, 4, kMagic) != 0) return 0;
  uint32_t len = get32(buf, pos + 4);
  if (len > kMaxBody || len > buf.size() - pos - kHeader) return 0;
  std::string_view body = buf.substr(pos + kHeader, len);
  if (crc(body) != get32(buf, pos + 8) || !decode(body, r)) return 0;
  return kHeader + len;
}

enum class Scan { record, end, damaged };

// At buf[pos]: a record (*next after it), the end, or damage running to
// *next: the next intact record, or the end of buf.
Scan scan_at(std::string_view buf, size_t pos, SpoolRecord* r, size_t* next) {
  if (pos >= buf.size()) return Scan::end;
  if (size_t n = intact_at(buf, pos, r)) {
    *next = pos + n;
    return Scan::record;
  }
  size_t q = buf.find(std::string_view(kMagic, 4), pos + 1);
  while (q != std::string_view::npos && !intact_at(buf, q, nullptr))
    q = buf.find(std::string_view(kMagic, 4), q + 1);
  *next = q == std::string_view::npos ? buf.size() : q;
  return Scan::damaged;
}

bool read_all(const std::string& path, uint64_t from, std::string* out) {
  out->clear();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char chunk[1 << 16];
  off_t at = static_cast<off_t>(from);
  for (;;) {
    ssize_t n = ::pread(fd, chunk, sizeof chunk, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out->append(chunk, static_cast<size_t>(n));
    at += n;
  }
  ::close(fd);
  return true;
}

bool write_all(int fd, std::string_view s) {
  while (!s.empty()) {
    ssize_t n = ::write(fd, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    s.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Write to a temporary name, fsync, rename: a crash leaves the old file or the new.
bool replace_file(const std::string& path, std::string_view text) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  bool ok = write_all(fd, text) && ::fsync(fd) == 0;
  ::close(fd);
  return ok && ::rename(tmp.c_str(), path.c_str()) == 0;
}

void sync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

uint64_t file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

std::string sys_err(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

}  // namespace

Spool::~Spool() {
  if (append_fd_ >= 0) ::close(append_fd_);
}

uint64_t Spool::encoded_size(const SpoolRecord& r) {
  return kHeader + 8 + r.shard.size() + r.id.size() + r.payload.size();
}

std::string Spool::seg_path(uint64_t seg) const {
  char name[32];
  std::snprintf(name, sizeof name, "%012llu.spool", static_cast<unsigned long long>(seg));
  return dir_ + "/" + name;
}

bool Spool::write_head(std::string* err) {
  uint64_t seg = segs_.empty() ? 0 : segs_.front();
  std::string text = std::to_string(seg) + " " + std::to_string(head_off_) + "\n";
  if (replace_file(dir_ + "/head", text)) return true;
  *err = sys_err(dir_ + "/head");
  return false;
}

bool Spool::open(const std::string& dir, uint64_t max_bytes, std::string* err) {
  dir_ = dir;
  max_ = max_bytes;
  // Segments small enough to drop as they drain, large enough to keep the
  // file count low.
  seg_max_ = std::clamp<uint64_t>(max_bytes / 8, 64 << 10, 8 << 20);
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec || !fs::is_directory(dir_)) {
    *err = dir_ + ": cannot create the spool directory" + (ec ? ": " + ec.message() : "");
    return false;
  }
  for (const auto& de : fs::directory_iterator(dir_, ec)) {
    std::string n = de.path().filename().string();
    if (n.size() == 18 && n.compare(12, 6, ".spool") == 0 &&
        std::all_of(n.begin(), n.begin() + 12, [](char c) { return c >= '0' && c <= '9'; }))
      segs_.push_back(std::stoull(n.substr(0, 12)));
  }
  std::sort(segs_.begin(), segs_.end());
  unsigned long long hseg = 0, hoff = 0;
  if (FILE* f = std::fopen((dir_ + "/head").c_str(), "r")) {
    if (std::fscanf(f, "%llu %llu", &hseg, &hoff) != 2) hseg = hoff = 0;
    std::fclose(f);
  }
  // Segments before the head's were delivered (a crash came before their unlink).
  while (!segs_.empty() && segs_.front() < hseg) {
    ::unlink(seg_path(segs_.front()).c_str());
    segs_.erase(segs_.begin());
  }
  head_off_ = !segs_.empty() && segs_.front() == hseg ? hoff : 0;
  if (!segs_.empty() && head_off_ > file_size(seg_path(segs_.front()))) head_off_ = 0;
  std::vector<uint64_t> segs = segs_;
  for (uint64_t seg : segs)
    if (!load_segment(seg, seg == segs_.front() ? head_off_ : 0, err)) return false;
  return write_head(err);
}

// Counts a segment's undelivered records; a damaged one is rewritten with
// its intact records only (the head first moved to its start, so a crash in
// between re-delivers rather than skips).
bool Spool::load_segment(uint64_t seg, uint64_t from, std::string* err) {
  std::string path = seg_path(seg), buf;
  if (!read_all(path, 0, &buf)) {
    *err = sys_err(path);
    return false;
  }
  std::string intact;
  uint64_t n = 0, bad_before = damaged_truncated + damaged_corrupt;
  size_t pos = std::min<size_t>(from, buf.size());
  for (size_t next = 0;; pos = next) {
    Scan s = scan_at(buf, pos, nullptr, &next);
    if (s == Scan::end) break;
    if (s == Scan::record) {
      ++n;
      intact.append(buf, pos, next - pos);
      continue;
    }
    bool cut = next == buf.size();
    ++(cut ? damaged_truncated : damaged_corrupt);
    damaged_bytes += next - pos;
    notes.push_back(path + ": " + std::to_string(next - pos) + " damaged byte(s) at offset " +
                    std::to_string(pos) +
                    (cut ? " (a record cut off, e.g. by a crash mid-append)" : " (garbage)") +
                    " skipped; the intact records are kept");
  }
  events_ += n;
  if (damaged_truncated + damaged_corrupt == bad_before) {
    disk_ += buf.size();
    return true;
  }
  if (seg == segs_.front() && head_off_ > 0) {
    head_off_ = 0;
    if (!write_head(err)) return false;
  }
  if (!replace_file(path, intact)) {
    *err = sys_err(path);
    return false;
  }
  disk_ += intact.size();
  return true;
}

bool Spool::roll(std::string* err) {
  if (append_fd_ >= 0) ::close(append_fd_);
  uint64_t seg = segs_.empty() ? 1 : segs_.back() + 1;
  std::string path = seg_path(seg);
  append_fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
  if (append_fd_ < 0) {
    *err = sys_err(path);
    return false;
  }
  sync_dir(dir_);  // the new name survives a crash too
  if (segs_.empty()) head_off_ = 0;
  segs_.push_back(seg);
  append_size_ = 0;
  return true;
}

// Segment by segment (each fsynced before the next is begun): a spill
// larger than a segment still drains, and drops, in segment-sized steps.
bool Spool::append(const std::vector<SpoolRecord>& recs, std::string* err) {
  uint64_t total = 0;
  for (const SpoolRecord& r : recs) total += encoded_size(r);
  if (total > room()) {
    *err = "spool full";
    return false;
  }
  std::string out;
  size_t in_out = 0;
  auto flush = [&]() {
    if (out.empty()) return true;
    if (!write_all(append_fd_, out) || ::fsync(append_fd_) != 0) {
      *err = sys_err(seg_path(segs_.back()));
      // Nothing half-written stays behind (a later append would follow garbage).
      if (::ftruncate(append_fd_, static_cast<off_t>(append_size_)) != 0) {
        std::string ignored;
        roll(&ignored);
      }
      return false;
    }
    append_size_ += out.size();
    disk_ += out.size();
    events_ += in_out;
    out.clear();
    in_out = 0;
    return true;
  };
  for (const SpoolRecord& r : recs) {
    std::string rec = encode(r);
    bool over = append_size_ + out.size() > 0 && append_size_ + out.size() + rec.size() > seg_max_;
    if (append_fd_ < 0 || over) {
      if (!flush() || !roll(err)) return false;
    }
    out += rec;
    ++in_out;
  }
  return flush();
}

void Spool::drop_segment(uint64_t seg) {
  std::string path = seg_path(seg);
  uint64_t size = file_size(path);
  disk_ -= std::min(disk_, size);
  ::unlink(path.c_str());
  if (append_fd_ >= 0 && seg == segs_.back()) {
    ::close(append_fd_);
    append_fd_ = -1;
  }
  segs_.erase(std::find(segs_.begin(), segs_.end(), seg));
  head_off_ = 0;
  cache_valid_ = false;
}

// The oldest segment's undelivered bytes, read once (again when used up).
bool Spool::fill(std::string* err) {
  if (cache_valid_ && cache_seg_ == segs_.front() && !cache_.empty()) return true;
  if (!read_all(seg_path(segs_.front()), head_off_, &cache_)) {
    *err = sys_err(seg_path(segs_.front()));
    return false;
  }
  cache_seg_ = segs_.front();
  cache_at_ = head_off_;
  cache_valid_ = true;
  return true;
}

bool Spool::peek(size_t n, std::vector<SpoolRecord>* out, std::string* err) {
  out->clear();
  peeked_bytes_ = peeked_events_ = 0;
  for (int guard = 0; guard < 1 << 20 && !segs_.empty(); ++guard) {
    if (!fill(err)) return false;
    size_t pos = 0, next = 0;
    while (out->size() < n) {
      SpoolRecord r;
      Scan s = scan_at(cache_, pos, &r, &next);
      if (s == Scan::end) break;
      if (s == Scan::record) {
        out->push_back(std::move(r));
      } else {  // damaged after the load (the disk changed under the agent)
        ++(next == cache_.size() ? damaged_truncated : damaged_corrupt);
        damaged_bytes += next - pos;
        notes.push_back(seg_path(cache_seg_) + ": damaged record skipped while draining");
      }
      pos = next;
    }
    peeked_bytes_ = pos;
    peeked_events_ = out->size();
    if (!out->empty()) return true;
    if (pos > 0) {  // damage only: past it, then on
      if (!consume(err)) return false;
      continue;
    }
    if (append_fd_ >= 0 && segs_.front() == segs_.back()) return true;  // nothing yet
    // Used up (or damage only) and not appended to: the next segment.
    drop_segment(segs_.front());
    if (!write_head(err)) return false;
  }
  return true;
}

bool Spool::consume(std::string* err) {
  if (segs_.empty() || peeked_bytes_ == 0) return true;
  head_off_ += peeked_bytes_;
  events_ -= std::min(events_, peeked_events_);
  cache_.erase(0, peeked_bytes_);
  cache_at_ += peeked_bytes_;
  peeked_bytes_ = peeked_events_ = 0;
  bool used_up = head_off_ >= file_size(seg_path(segs_.front()));
  bool appending = append_fd_ >= 0 && segs_.front() == segs_.back();
  // The segment being appended to goes too once nothing is left anywhere.
  if (used_up && (!appending || events_ == 0)) drop_segment(segs_.front());
  return write_head(err);
}

}  // namespace reflex::deploy
