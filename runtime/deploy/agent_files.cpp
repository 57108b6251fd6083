// The agent's plain log files: opening, following across rename and
// truncation, lines to the ingest, checkpoints with the open folds, and
// those folds opened again at a restart (agent_files.h).
#include "agent_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
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
    }
    positions_.resume.erase(r);
  }
  begin_parser(f);
  log(Level::info, "following " + path + " from offset " + std::to_string(f.read.offset) +
                       " (line " + std::to_string(f.read.line) + ")");
  rd_.metrics.add("reflex_agent_files_opened_total");
  files_.emplace(key, std::move(f));
}

void FileFollower::discover(const std::vector<std::string>& follows) {
  if (first_scan_ && positions_.loaded) folds_.reopen();
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
  check_gone_ = true;
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
  bool sized = ::fstat(f.fd, &st) == 0;
  if (sized && static_cast<uint64_t>(st.st_size) < f.read.offset) {
    log(Level::warn, f.path + ": truncated, reading from the start");
    rd_.metrics.add("reflex_agent_truncations_total");
    f.read = {};
    f.sent_line = 0;  // new lines under old numbers
    f.head_bytes.clear();
  }
  // Nothing new: no read, no buffer (a log server's agent checks thousands
  // of files a round, most of them unchanged).
  if (sized && static_cast<uint64_t>(st.st_size) == f.read.offset) return false;
  size_t want = sized ? static_cast<size_t>(std::min<uint64_t>(
                            static_cast<uint64_t>(st.st_size) - f.read.offset, kReadChunk))
                      : kReadChunk;
  std::string buf(want, '\0');
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
  size_t pos = 0;
  uint64_t lines = 0;
  while (pos < usable) {
    size_t nl = buf.find('\n', pos);
    size_t end = nl == std::string::npos || nl >= usable ? usable : nl;
    std::string_view raw(buf.data() + pos, end - pos);
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
    }
    pos = end + 1;
  }
  f.read.offset += usable;
  rd_.metrics.add("reflex_agent_lines_read_total", static_cast<double>(lines));
  rd_.metrics.add("reflex_agent_bytes_read_total", static_cast<double>(usable));
  queue_marker(f);  // up to here, with the folds still open
}

void FileFollower::queue_marker(Followed& f) {
  Pending m;
  m.marker = true;
  m.key = f.key;
  m.pos = f.read;
  m.sent_line = f.read.line;
  m.path = f.path;
  m.evidence = f.evidence;
  m.print = print_at(f, f.read);
  m.gz = f.gz;
  m.seen = std::time(nullptr);
  m.supersedes = f.supersedes;
  m.folds = folds_.take([this] { return open_evidence(); });
  if (f.gz && f.complete && f.carry.empty()) {
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
  folds_.queue([this] { return open_evidence(); });
}

void FileFollower::mark_read() {
  for (auto& [k, f] : files_) queue_marker(f);
  folds_.queue([this] { return open_evidence(); });
}

std::set<std::string> FileFollower::open_evidence() const {
  std::set<std::string> out;
  for (const auto& [k, f] : files_) out.insert(f.evidence);
  return out;
}

// Folds of file lines open now: those whose evidence names an open file, or
// a file closed or reopened while a fold of its lines is open. The same
// snapshot while the storms did not change.
std::shared_ptr<const std::vector<Event>> FileFolds::now(const OpenEvidence& open_files) {
  uint64_t gen = 0;
  rd_.ing.with_open_storms([&](const OpenStorms& os) { gen = os.generation(); });
  if (now_ && gen == generation_) return now_;
  std::set<std::string> sources = sources_, seen, open = open_files();
  sources.insert(open.begin(), open.end());
  auto out = std::make_shared<std::vector<Event>>();
  size_t over = 0;
  rd_.ing.with_open_storms([&](const OpenStorms& os) {
    generation_ = os.generation();
    os.for_each([&](const Event& ev) {
      size_t colon = ev.evidence.rfind(':');
      if (colon == std::string::npos) return;
      auto it = sources.find(ev.evidence.substr(0, colon));
      if (it == sources.end()) return;
      seen.insert(*it);
      if (out->size() < kMaxFolds)
        out->push_back(ev);
      else
        ++over;
    });
  });
  if (over > 0)
    log_limited(Level::warn, "folds",
                std::to_string(over) + " open storm fold(s) over " + std::to_string(kMaxFolds) +
                    " not saved: after a restart they count only the lines read from then on");
  sources_ = std::move(seen);
  now_ = out;
  return out;
}

std::shared_ptr<const std::vector<Event>> FileFolds::take(const OpenEvidence& open) {
  return last_ = now(open);
}

namespace {
bool same_folds(const std::vector<Event>& a, const std::vector<Event>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].count != b[i].count || a[i].evidence != b[i].evidence || a[i].name != b[i].name ||
        a[i].device != b[i].device || a[i].first != b[i].first || a[i].last != b[i].last)
      return false;
  return true;
}
}  // namespace

void FileFolds::queue(const OpenEvidence& open) {
  auto folds = now(open);
  if (last_ && (folds == last_ || same_folds(*folds, *last_))) return;
  Pending m;
  m.marker = true;
  m.folds_only = true;
  m.folds = last_ = std::move(folds);
  m.seen = std::time(nullptr);
  out_.add_marker(std::move(m));
}

// A restart: the folds open at the last durable checkpoint are opened
// again before a line is read, each by its first line fed `count` times
// (the last one at the fold's last time), announcing nothing (replaying,
// their first sightings went out before), so each closes with the first
// line, count and span it would have had without the restart. Re-reading
// from before the first line of the oldest open fold instead re-read lines
// of other folds already sent too: folded again from another first line,
// they were another event, counted twice.
void FileFolds::reopen() {
  std::shared_ptr<const std::vector<Event>> folds = positions_.folds;
  if (!folds || folds->empty()) return;
  uint64_t budget = kMaxFoldLines;
  size_t cut = 0;
  rd_.replaying = true;
  for (const Event& ev : *folds) {  // in the order their first lines were read
    uint64_t n = std::min<uint64_t>(ev.count, budget);
    budget -= n;
    if (n < ev.count) ++cut;
    if (n > 0) reopen_fold(ev, n);
  }
  rd_.replaying = false;
  // Said when a fold did not open again as saved (its line no longer
  // matches as it did: another knowledge base). A multi-line message is
  // completed by the next line read, so it is not checked here.
  std::map<std::string, uint64_t> now;
  auto id = [](const Event& ev) { return ev.evidence + '\x1f' + ev.name + '\x1f' + ev.device; };
  rd_.ing.with_open_storms(
      [&](const OpenStorms& os) { os.for_each([&](const Event& ev) { now[id(ev)] = ev.count; }); });
  size_t differ = 0;
  for (const Event& ev : *folds) {
    auto it = now.find(id(ev));
    if (ev.line.find('\n') == std::string::npos && (it == now.end() || it->second != ev.count))
      ++differ;
  }
  log(Level::info,
      "reopened " + std::to_string(folds->size()) + " storm fold(s) open at the last checkpoint");
  if (cut + differ > 0)
    log(Level::warn, std::to_string(cut + differ) +
                         " saved storm fold(s) did not open again as saved (over " +
                         std::to_string(kMaxFoldLines) +
                         " lines, or the knowledge base changed): their counts may differ from "
                         "an uninterrupted run");
}

// One saved fold: its first message (lines joined by '\n') fed n times
// under its evidence, with the saved times (the event's identity).
void FileFolds::reopen_fold(const Event& ev, uint64_t n) {
  size_t colon = ev.evidence.rfind(':');
  std::string evidence = ev.evidence.substr(0, colon);
  uint64_t line_no = std::strtoull(ev.evidence.c_str() + colon + 1, nullptr, 10);
  sources_.insert(evidence);
  auto bt = read_boot_time(fs::path(evidence).parent_path() / "boot_time");
  std::unique_ptr<LineParser> parser = rd_.parser(evidence, bt ? bt : rd_.boot_time);
  std::vector<std::string_view> lines;
  for (size_t at = 0;;) {
    size_t nl = ev.line.find('\n', at);
    lines.emplace_back(std::string_view(ev.line).substr(at, nl - at));
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  for (uint64_t i = 0; i < n; ++i)
    for (size_t k = 0; k < lines.size(); ++k) {
      LogRecord rec;
      if (!parser->parse(lines[k], line_no + k, &rec)) continue;
      if (k == 0) {
        rec.time = ev.time;
        if (ev.time.wall && i + 1 == n && n > 1 && ev.last) rec.time.wall = *ev.last;
        if (ev.time.wall && i + 2 == n && n > 2 && ev.first) rec.time.wall = *ev.first;
      }
      rd_.ing.feed_record(rec);
    }
}

bool FileFollower::read_files() {
  bool any = false;
  // Least recently written first, and none newer while an older one has
  // more than a chunk left: a rotated file is finished before the file that
  // replaced it, in every round and after a restart alike, so a storm fold
  // spanning the rotation begins with the same line each time (a fold's
  // first sighting is published at once; another first line would count
  // the fold again). The file being written (the newest) is never held back.
  // A plain file with nothing new is passed over (a log server's agent
  // follows thousands, most idle in a round); whether its name still leads
  // to it is checked after a directory scan only (each second, or when
  // inotify reports a name change), not by a path lookup per file per round.
  std::vector<std::pair<int64_t, FileKey>> order;
  order.reserve(files_.size());
  for (const auto& [k, f] : files_) {
    struct stat st {};
    bool sized = ::fstat(f.fd, &st) == 0;
    if (sized && !f.gz && !f.rotated && !check_gone_ &&
        static_cast<uint64_t>(st.st_size) == f.read.offset)
      continue;
    order.emplace_back(sized ? mtime_ns(st) : 0, k);
  }
  bool check_gone = check_gone_;
  check_gone_ = false;
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
      done.pos = f.read;
      done.path = f.path;
      done.evidence = f.evidence;
      done.gz = done.done = true;
      if (::fstat(f.fd, &st) == 0) {
        done.size = static_cast<uint64_t>(st.st_size);
        done.mtime = mtime_ns(st);
      }
      done.print = print_at(f, f.read);
      gzclose(f.gzf);
      ::close(f.fd);
      positions_.resume[f.key] = std::move(done);
      files_.erase(it);
      continue;
    }
    if (!got && !f.gz && (f.rotated || (check_gone && gone(f)))) {
      log(Level::info, f.path + ": rotated away or deleted and read to the end, closing");
      // Found again under another name (a rename seen before the next
      // directory scan), or compressed (kern.log.1.gz): it continues where
      // it was read to, not from 0.
      Pending again;
      again.key = f.key;
      again.pos = f.read;
      again.print = print_at(f, f.read);
      again.path = f.path;
      again.evidence = f.evidence;
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
