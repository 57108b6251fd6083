// The agent's plain log files: opening, following across rename and
// truncation, lines to the ingest, checkpoints behind open folds (agent_files.h).
#include "agent_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <utility>

#include "reflex/deploy/daemon.h"
#include "reflex/time.h"

namespace reflex::deploy::agent {

namespace {

namespace fs = std::filesystem;

bool is_gz_name(const std::string& n) {
  return n.size() > 3 && n.compare(n.size() - 3, 3, ".gz") == 0;
}

std::optional<int64_t> read_boot_time(const fs::path& p) {
  std::ifstream in(p);
  std::string s;
  if (!(in >> s)) return std::nullopt;
  return parse_rfc3339(s);
}

// Names in a followed directory that are not log text.
bool skip_name(const std::string& n) {
  return n.empty() || n[0] == '.' || n == "boot_time" || n == "timezone" ||
         (n.size() > 4 && n.compare(n.size() - 4, 4, ".tmp") == 0);
}

// The file's name no longer leads to it (deleted, or renamed outside a
// followed directory): nothing more will be appended.
bool gone(const Followed& f) {
  struct stat st {};
  return ::stat(f.path.c_str(), &st) != 0 || static_cast<uint64_t>(st.st_ino) != f.key.ino ||
         static_cast<uint64_t>(st.st_dev) != f.key.dev;
}

}  // namespace

void FileFollower::begin_parser(Followed& f) {
  auto bt = read_boot_time(fs::path(f.path).parent_path() / "boot_time");
  f.parser = rd_.parser(f.evidence, bt ? bt : rd_.boot_time);
}

void FileFollower::open_file(const std::string& path, const struct stat& st) {
  FileKey key{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
  auto it = files_.find(key);
  if (it != files_.end()) {
    it->second.path = path;  // renamed (rotation): same file, keeps its offset
    return;
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    log_limited(Level::warn, "open:" + path, path + ": " + std::strerror(errno));
    return;
  }
  Followed f;
  f.key = key;
  f.path = path;
  f.fd = fd;
  f.evidence = Reading::file_evidence(path);
  if (auto r = positions_.resume.find(key); r != positions_.resume.end()) {
    const Pending& p = r->second;
    bool same = true;  // the inode may have been reused by another file since
    if (p.print.head_len > 0) {
      std::string head = pread_at(fd, 0, static_cast<size_t>(p.print.head_len));
      same = head.size() == p.print.head_len && sha(head) == p.print.head;
    }
    if (!same) {
      log(Level::warn, path + ": inode " + std::to_string(key.ino) +
                           " now holds another file than the saved position's; reading it "
                           "from the start (the old position is kept for its .gz)");
      positions_.add_ghost(p);
    } else if (static_cast<uint64_t>(st.st_size) >= p.pos.offset) {
      f.read = p.pos;
      f.sent_line = p.sent_line;
      if (!p.evidence.empty()) f.evidence = p.evidence;
      // Closed and found again in this process: its checkpoint stays
      // behind the folds its lines opened.
      if (p.safe.offset < p.pos.offset) {
        f.safe = p.safe;
        f.fed_from = p.safe.line + 1;
      }
    }
    closing_.erase(key);
    positions_.resume.erase(r);
  }
  if (!f.fed_from) f.safe = f.read;
  begin_parser(f);
  log(Level::info, "following " + path + " from offset " + std::to_string(f.read.offset) +
                       " (line " + std::to_string(f.read.line) + ")");
  rd_.metrics.add("reflex_agent_files_opened_total");
  files_.emplace(key, std::move(f));
}

void FileFollower::discover(const std::vector<std::string>& follows) {
  // Plain files first: a .gz copy of one of them is then recognized as such.
  std::vector<std::pair<std::string, struct stat>> gzs;
  for (const std::string& p : follows) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) continue;  // not there yet
    if (S_ISDIR(st.st_mode)) {
      std::error_code ec;
      for (const auto& de : fs::directory_iterator(p, ec)) {
        std::string name = de.path().filename().string();
        if (skip_name(name)) continue;
        struct stat fst {};
        if (::stat(de.path().c_str(), &fst) != 0 || !S_ISREG(fst.st_mode)) continue;
        if (is_gz_name(name))
          gzs.emplace_back(de.path().string(), fst);
        else
          open_file(de.path().string(), fst);
      }
    } else if (S_ISREG(st.st_mode)) {
      if (is_gz_name(p)) {
        gzs.emplace_back(p, st);
        continue;
      }
      // A followed path now naming another file: the old one was renamed away.
      for (auto& [k, f] : files_)
        if (f.path == p && (k.dev != static_cast<uint64_t>(st.st_dev) ||
                            k.ino != static_cast<uint64_t>(st.st_ino)))
          f.rotated = true;
      open_file(p, st);
    }
  }
  history_scan_ = first_scan_ && !positions_.loaded;
  for (const auto& [p, st] : gzs) open_gz(p, st);
  if (history_scan_ && history_skipped_ > 0)
    log(Level::info, std::to_string(history_skipped_) +
                         " compressed file(s) present at the agent's first start not read "
                         "(history before the agent; later rotations are read)");
  if (first_scan_ && positions_.loaded) report_unmatched();
  first_scan_ = history_scan_ = false;
}

// After the first scan of a restart: positions of files that were being
// followed and are found neither by inode nor as a .gz. What was written
// to them after the saved position, if anything, was not read: said and
// counted, not silent.
void FileFollower::report_unmatched() {
  for (auto& [k, p] : positions_.resume) {
    if (!p.was_open || p.done || k.dev == 0) continue;
    p.was_open = false;
    rd_.metrics.add("reflex_agent_lost_positions_total");
    log(Level::warn, p.path + " (followed as " + p.evidence + ", read to offset " +
                         std::to_string(p.pos.offset) +
                         ") is gone and no compressed rotation of it was found: what was "
                         "written to it after that offset, if anything, was not read");
  }
}

// Reads what is new in f; true when something was read.
bool FileFollower::read_file(Followed& f) {
  if (f.gz) return read_gz(f);
  struct stat st {};
  if (::fstat(f.fd, &st) == 0 && static_cast<uint64_t>(st.st_size) < f.read.offset) {
    log(Level::warn, f.path + ": truncated, reading from the start");
    rd_.metrics.add("reflex_agent_truncations_total");
    f.read = {};
    f.safe = {};
    f.sent_line = 0;  // new lines under old numbers
    f.head_bytes.clear();
    f.fed_from.reset();
  }
  std::string buf(kReadChunk, '\0');
  ssize_t n = ::pread(f.fd, buf.data(), buf.size(), static_cast<off_t>(f.read.offset));
  if (n <= 0) return false;
  buf.resize(static_cast<size_t>(n));
  size_t last_nl = buf.rfind('\n');
  size_t usable;
  if (last_nl == std::string::npos) {
    if (buf.size() < kReadChunk) return false;  // a line still being written
    usable = buf.size();  // one line longer than the chunk: cut here, skip the rest
  } else {
    usable = last_nl + 1;
  }
  feed_lines(f, buf, usable);
  return true;
}

// Lines [0, usable) of buf, which starts at f.read.offset.
void FileFollower::feed_lines(Followed& f, const std::string& buf, size_t usable) {
  if (f.head_bytes.size() < kPrint && f.head_bytes.size() == f.read.offset)
    f.head_bytes.append(buf, 0, std::min(usable, kPrint - f.head_bytes.size()));
  std::vector<uint64_t> starts;  // offset of each line of this batch
  uint64_t first_line = f.read.line + 1;
  size_t pos = 0;
  uint64_t lines = 0;
  while (pos < usable) {
    size_t nl = buf.find('\n', pos);
    size_t end = nl == std::string::npos || nl >= usable ? usable : nl;
    std::string_view raw(buf.data() + pos, end - pos);
    starts.push_back(f.read.offset + pos);
    bool was_skipping = f.skipping;
    f.skipping = nl == std::string::npos || nl >= usable;  // cut: the rest is skipped
    ++f.read.line;
    ++lines;
    if (!was_skipping) {
      if (raw.size() > kMaxLine) raw = raw.substr(0, kMaxLine);
      if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
      LogRecord rec;
      rd_.replaying = f.read.line <= f.sent_line;
      if (f.parser->parse(raw, f.read.line, &rec)) rd_.ing.feed_record(rec);
      rd_.replaying = false;
    } else {
      --f.read.line;  // the tail of a cut line is not a line of its own
      --lines;
      starts.pop_back();
    }
    pos = end + 1;
  }
  f.read.offset += usable;
  rd_.metrics.add("reflex_agent_lines_read_total", static_cast<double>(lines));
  rd_.metrics.add("reflex_agent_bytes_read_total", static_cast<double>(usable));
  // Checkpoint: up to here, unless a fold still open began earlier.
  if (!f.fed_from) f.fed_from = first_line;
  auto open = rd_.first_open_line(f.evidence, *f.fed_from, f.read.line);
  if (!open) {
    f.safe = f.read;
  } else if (*open >= first_line && *open - first_line < starts.size()) {
    f.safe = {starts[*open - first_line], *open - 1};
  }
  queue_marker(f);
}

void FileFollower::queue_marker(Followed& f) {
  Pending m;
  m.marker = true;
  m.key = f.key;
  m.pos = f.safe;
  m.sent_line = f.read.line;
  m.path = f.path;
  m.evidence = f.evidence;
  m.print = print_at(f, f.safe);
  m.gz = f.gz;
  m.seen = std::time(nullptr);
  m.supersedes = f.supersedes;
  if (f.gz && f.complete && f.carry.empty() && f.safe.offset == f.read.offset) {
    struct stat st {};
    if (::fstat(f.fd, &st) == 0) {
      m.done = true;
      m.size = static_cast<uint64_t>(st.st_size);
      m.mtime = mtime_ns(st);
    }
  }
  out_.add_marker(std::move(m));
}

void FileFollower::advance() {
  for (auto& [k, f] : files_)
    if (f.safe.offset != f.read.offset && !f.target && f.fed_from &&
        !rd_.first_open_line(f.evidence, *f.fed_from, f.read.line)) {
      f.safe = f.read;
      queue_marker(f);
    }
}

void FileFollower::mark_read() {
  for (auto& [k, f] : files_) {
    f.safe = f.read;
    queue_marker(f);
  }
  settle_closed(true);
}

// Closed files whose position waited behind an open fold: once no fold
// of theirs is open, their position moves to where they were read to.
void FileFollower::settle_closed(bool all) {
  for (auto it = closing_.begin(); it != closing_.end();) {
    if (!all &&
        rd_.first_open_line(it->second.evidence, it->second.safe.line + 1, it->second.pos.line)) {
      ++it;
      continue;
    }
    Pending m = it->second;
    m.marker = true;
    m.safe = m.pos;
    m.seen = std::time(nullptr);
    if (auto r = positions_.resume.find(it->first); r != positions_.resume.end())
      r->second.safe = m.pos;
    out_.add_marker(std::move(m));
    it = closing_.erase(it);
  }
}

bool FileFollower::read_files() {
  settle_closed(false);
  bool any = false;
  // Least recently written first, and none newer while an older one has
  // more than a chunk left: a rotated file is finished before the file that
  // replaced it, in every round and after a restart alike, so a storm fold
  // spanning the rotation begins with the same line each time (a fold's
  // first sighting is published at once; another first line would count
  // the fold again). The file being written (the newest) is never held back.
  std::vector<std::pair<int64_t, FileKey>> order;
  order.reserve(files_.size());
  for (const auto& [k, f] : files_) {
    struct stat st {};
    order.emplace_back(::fstat(f.fd, &st) == 0 ? mtime_ns(st) : 0, k);
  }
  std::sort(order.begin(), order.end());
  bool older_unfinished = false;
  for (const auto& [mtime, key] : order) {
    auto it = files_.find(key);
    if (it == files_.end()) continue;
    Followed& f = it->second;
    if (out_.full() || older_unfinished) break;
    bool got = read_file(f);
    any |= got;
    struct stat now {};
    if (got && !f.gz && ::fstat(f.fd, &now) == 0 &&
        static_cast<uint64_t>(now.st_size) > f.read.offset + kReadChunk / 2)
      older_unfinished = true;
    if (!got && f.gz && f.complete && f.carry.empty()) {
      log(Level::info, f.path + ": compressed file read to its end, closing");
      struct stat st {};
      Pending done;
      done.key = f.key;
      done.pos = done.safe = f.read;
      done.path = f.path;
      done.evidence = f.evidence;
      done.gz = done.done = true;
      if (::fstat(f.fd, &st) == 0) {
        done.size = static_cast<uint64_t>(st.st_size);
        done.mtime = mtime_ns(st);
      }
      done.print = print_at(f, f.read);
      if (f.safe.offset != f.read.offset) {
        closing_[f.key] = done;
        closing_[f.key].safe = f.safe;
      }
      gzclose(f.gzf);
      ::close(f.fd);
      positions_.resume[f.key] = std::move(done);
      files_.erase(it);
      continue;
    }
    if (!got && !f.gz && (f.rotated || gone(f))) {
      log(Level::info, f.path + ": rotated away or deleted and read to the end, closing");
      // Found again under another name (a rename seen before the next
      // directory scan), or compressed (kern.log.1.gz): it continues where
      // it was read to, not from 0.
      Pending again;
      again.key = f.key;
      again.pos = f.read;
      again.safe = f.safe;
      again.print = print_at(f, f.read);
      again.path = f.path;
      again.evidence = f.evidence;
      if (f.safe.offset != f.read.offset) closing_[f.key] = again;
      ::close(f.fd);
      positions_.resume[f.key] = std::move(again);
      // Its committed position stays until its last events are durable.
      files_.erase(it);
      continue;
    }
  }
  return any;
}

}  // namespace reflex::deploy::agent
