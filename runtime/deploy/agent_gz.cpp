// The agent's compressed files (.gz): rotations recognized by content as
// the file they were compressed from and finished from its position, copies
// of files still being read left alone, new text read whole (agent_files.h).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string_view>
#include <utility>

#include "agent_files.h"
#include "reflex/deploy/daemon.h"

namespace reflex::deploy::agent {

namespace {
namespace fs = std::filesystem;
}  // namespace

// A followed file this compressed text is a copy of, still being read
// (gzip running beside it, or its original not yet read to the end).
bool FileFollower::copy_of_open(const std::string& head) {
  for (auto& [k, o] : files_) {
    if (!o.gz && o.head_bytes.size() < kPrint) o.head_bytes = pread_at(o.fd, 0, kPrint);
    // At least a whole first line in common: two files' first bytes often
    // share a timestamp's prefix.
    size_t common = std::min(o.head_bytes.size(), head.size());
    if (common > 0 && o.head_bytes.compare(0, common, head, 0, common) == 0 &&
        head.find('\n') < common)
      return true;
  }
  return false;
}

// A compressed rotation (kern.log.1.gz) or a .gz given to --follow. Its
// text is either the continuation of a file read before (recognized by
// content, finished from where it was read to, under that file's evidence
// name so re-read lines keep their ids), a copy of a file still being read
// (left until that one is done), or text never seen: read from its start,
// except at an agent's first start, where compressed files are history
// before the agent (counted, not read).
void FileFollower::open_gz(const std::string& path, const struct stat& st) {
  FileKey key{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
  if (auto it = files_.find(key); it != files_.end()) {
    it->second.path = path;
    return;
  }
  std::optional<Pending> by_inode;
  if (auto r = positions_.resume.find(key); r != positions_.resume.end()) {
    if (r->second.done && r->second.size == static_cast<uint64_t>(st.st_size) &&
        r->second.mtime == mtime_ns(st)) {
      r->second.path = path;  // read before (renames keep the inode)
      return;
    }
    by_inode = r->second;
  }
  if (st.st_size < 2) return;  // gzip has not written its header yet
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    log_limited(Level::warn, "open:" + path, path + ": " + std::strerror(errno));
    return;
  }
  std::string magic = pread_at(fd, 0, 2);
  if (magic != "\x1f\x8b") {
    ::close(fd);
    rd_.metrics.add("reflex_agent_gz_skipped_total", 1, Metrics::label("reason", "not_gzip"));
    log_limited(Level::warn, "notgz:" + path, path + ": not gzip data, skipped");
    remember_done(key, path, st, {}, false);
    return;
  }
  Followed f;
  f.key = key;
  f.path = path;
  f.fd = fd;
  f.gz = true;
  f.gzf = gzdopen(::dup(fd), "rb");
  if (!f.gzf) {
    ::close(fd);
    return;
  }
  gzbuffer(f.gzf, 1 << 17);
  std::string err;
  Pull pr = Pull::more;
  for (int i = 0; i < 4 && f.carry.size() < kPrint && pr == Pull::more; ++i)
    pr = gz_pull(f, kPrint - f.carry.size(), &err);
  auto close_f = [&] {
    gzclose(f.gzf);
    ::close(f.fd);
  };
  if (pr == Pull::corrupt) {
    close_f();
    gz_error(key, path, st, 0, err);
    return;
  }
  if (f.carry.size() < kPrint && pr != Pull::complete) {
    close_f();  // still being written: looked at again at the next scan
    return;
  }
  f.complete = pr == Pull::complete;
  f.head_bytes = f.carry.substr(0, kPrint);
  std::optional<Pending> known;
  if (by_inode) {
    const Print& p = by_inode->print;
    if (p.head_len <= f.head_bytes.size() &&
        (p.head_len == 0 || sha(std::string_view(f.head_bytes).substr(0, p.head_len)) == p.head)) {
      known = by_inode;
    } else {
      positions_.add_ghost(*by_inode);
    }
    positions_.resume.erase(key);
  }
  if (!known && copy_of_open(f.head_bytes)) {
    close_f();  // its text is being read from the original
    return;
  }
  if (!known) {
    known = positions_.match_known(f.head_bytes);
    if (known) {
      positions_.drop_known(*known);
      f.supersedes = known->key;
    }
  }
  if (!known && history_scan_) {
    close_f();
    rd_.metrics.add("reflex_agent_gz_skipped_total", 1, Metrics::label("reason", "history"));
    ++history_skipped_;
    remember_done(key, path, st, f.head_bytes, true);
    return;
  }
  f.evidence = Reading::file_evidence(path);
  if (known) {
    if (!known->evidence.empty()) f.evidence = known->evidence;
    if (known->pos.offset > 0) {
      f.target = known->pos;
      f.want_tail = known->print.tail;
    }
  }
  begin_parser(f);
  log(Level::info, path + ": compressed; " +
                       (known ? "continues " + known->evidence + " from offset " +
                                    std::to_string(known->pos.offset)
                              : std::string("new text, read from the start")));
  rd_.metrics.add("reflex_agent_files_opened_total");
  files_.emplace(key, std::move(f));
}

// A compressed file not to read (again): its position says so, durably.
void FileFollower::remember_done(const FileKey& key, const std::string& path, const struct stat& st,
                                 const std::string& head, bool gz) {
  Pending p;
  p.marker = true;
  p.key = key;
  p.path = path;
  p.evidence = Reading::file_evidence(path);
  p.gz = gz;
  p.done = true;
  p.size = static_cast<uint64_t>(st.st_size);
  p.mtime = mtime_ns(st);
  p.seen = std::time(nullptr);
  p.print.head_len = std::min<uint64_t>(head.size(), kPrint);
  p.print.head = sha(head.substr(0, p.print.head_len));
  positions_.resume[key] = p;
  out_.add_marker(p);  // durable in order, after what is queued before it
}

// A compressed file that cannot be read further: what was read stands,
// the rest is lost, and said so.
void FileFollower::gz_error(const FileKey& key, const std::string& path, const struct stat& st,
                            uint64_t at, const std::string& err) {
  rd_.metrics.add("reflex_agent_gz_errors_total");
  log(Level::error, path + ": compressed data unreadable after uncompressed offset " +
                        std::to_string(at) + " (" + err + "); the rest of this file is not read");
  remember_done(key, path, st, {}, true);
}

// A compressed file: on to the known position first (its tail checked),
// then line by line like a plain file; closed once its stream is complete.
bool FileFollower::read_gz(Followed& f) {
  if (f.complete && f.carry.empty()) return false;
  std::string err;
  Pull pr = Pull::more;
  if (f.target) {
    for (int i = 0; i < 8; ++i) {
      if (f.carry.empty() && !f.complete) {
        pr = gz_pull(f, kReadChunk, &err);
        if (pr == Pull::complete) f.complete = true;
        if (pr == Pull::corrupt) return gz_failed(f, err);
      }
      uint64_t need = f.target->offset - f.carry_at;
      size_t take = static_cast<size_t>(std::min<uint64_t>(need, f.carry.size()));
      f.window.append(f.carry, 0, take);
      if (f.window.size() > kPrint) f.window.erase(0, f.window.size() - kPrint);
      f.carry.erase(0, take);
      f.carry_at += take;
      if (f.carry_at == f.target->offset) break;
      if (f.carry.empty() && (f.complete || pr == Pull::waiting)) break;
    }
    if (f.carry_at < f.target->offset) {
      if (f.complete) {
        // Shorter than what was read of its original: all of it was read.
        log(Level::info, f.path + ": compressed copy of text read before, nothing new");
        f.target.reset();
        f.carry.clear();
        f.read = {f.carry_at, f.read.line};
        queue_marker(f);
      }
      return pr != Pull::waiting;
    }
    size_t tl = static_cast<size_t>(std::min<uint64_t>(f.target->offset, kPrint));
    if (!f.want_tail.empty() &&
        (f.window.size() < tl ||
         sha(std::string_view(f.window).substr(f.window.size() - tl)) != f.want_tail)) {
      // Same start, other text before the position: not that file after all.
      log(Level::warn, f.path + ": its text differs from " + f.evidence +
                           " before the saved position; read as a file of its own");
      gzrewind(f.gzf);
      f.carry.clear();
      f.carry_at = 0;
      f.complete = false;
      f.target.reset();
      f.supersedes.reset();
      f.read = {};
      f.evidence = Reading::file_evidence(f.path);
      begin_parser(f);
      return true;
    }
    f.read = *f.target;
    f.target.reset();
    f.window.clear();
  }
  if (!f.complete && f.carry.size() < kReadChunk) {
    pr = gz_pull(f, kReadChunk - f.carry.size(), &err);
    if (pr == Pull::complete) f.complete = true;
    if (pr == Pull::corrupt) return gz_failed(f, err);
  }
  if (pr == Pull::waiting && !f.waiting_said) {
    f.waiting_said = true;
    log(Level::info, f.path +
                         ": compressed stream ends mid-way (still being written?); read to "
                         "offset " +
                         std::to_string(f.read.offset + f.carry.size()) + ", waiting for the rest");
  }
  if (f.carry.empty()) return false;
  size_t last_nl = f.carry.rfind('\n');
  size_t usable;
  if (last_nl != std::string::npos)
    usable = last_nl + 1;
  else if (f.complete || f.carry.size() >= kReadChunk)
    usable = f.carry.size();  // the last line without a newline, or a cut one
  else
    return false;
  feed_lines(f, f.carry, usable);
  f.carry.erase(0, usable);
  f.carry_at += usable;
  return true;
}

bool FileFollower::gz_failed(Followed& f, const std::string& err) {
  rd_.metrics.add("reflex_agent_gz_errors_total");
  log(Level::error, f.path + ": compressed data unreadable after uncompressed offset " +
                        std::to_string(f.carry_at + f.carry.size()) + " (" + err +
                        "); the rest of this file is not read");
  f.complete = true;  // what was decompressed is still read, then the file closes
  return true;
}

}  // namespace reflex::deploy::agent
