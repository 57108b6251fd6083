// What the agent's parts share: where a source was read to (a position and
// the print that recognizes its content), the queue entries between reading
// and the bus, and the bounds on both.
#pragma once

#include <sys/stat.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reflex/artifact.h"
#include "reflex/bus.h"
#include "reflex/event.h"

namespace reflex::deploy::agent {

using Clock = std::chrono::steady_clock;

constexpr size_t kReadChunk = 1 << 20;  // per read() of a followed file
constexpr size_t kMaxLine = 1 << 20;    // longer lines are cut (counted)
constexpr size_t kPrint = 4096;         // bytes hashed at a file's start and before a position
constexpr size_t kMaxClosed = 512;      // positions of closed files kept in the state file
constexpr size_t kMaxGhosts = 64;       // positions whose inode was reused, kept for .gz matching
constexpr size_t kMaxFolds = 100000;    // open folds kept in the state file
constexpr uint64_t kMaxFoldLines = 50000000;  // lines fed to reopen saved folds at a restart

struct FileKey {
  uint64_t dev = 0, ino = 0;
  bool operator<(const FileKey& o) const { return dev != o.dev ? dev < o.dev : ino < o.ino; }
};

// Positions of sources that are not files (device 0 is never a file's).
inline const FileKey kJournalKey{0, 0};
inline const FileKey kKmsgKey{0, 1};

struct Position {
  uint64_t offset = 0, line = 0;
};

// What identifies a file's content whatever its inode: a hash of its first
// bytes and one of the bytes just before a saved position. A compressed
// rotation (kern.log.1.gz) is recognized by them as the file it was, and
// finished from where that file was read to; a reused inode is told apart.
struct Print {
  uint64_t head_len = 0;  // min(position, kPrint)
  std::string head;       // sha256 of the first head_len bytes
  std::string tail;  // sha256 of the min(position, kPrint) bytes before the position; "" = none
};

// A published record, or a checkpoint that becomes durable once every record
// queued before it is accepted.
struct Pending {
  bool marker = false;
  std::string shard;
  bus::Record rec;
  FileKey key;
  Position pos;
  std::string path, evidence;
  std::string cursor;  // the journal's (key {0, 0}): where to continue after a restart
  Clock::time_point queued;
  // Files: what recognizes the file's content at pos, and what it was.
  Print print;
  // Files: the line read when this checkpoint was queued (= pos.line). A
  // state written before open folds were saved (below) has pos behind them
  // and re-reads up to here without announcing their first sightings again.
  uint64_t sent_line = 0;
  // Files' checkpoints: the storm folds of file lines open when it was
  // queued (null: leaves the saved ones as they are). A file's position is
  // where it was read to, so a restart reads no line twice; it opens these
  // folds again first (FileFolds::reopen), and they close with the
  // first line and count they would have had without the restart.
  std::shared_ptr<const std::vector<Event>> folds;
  bool folds_only = false;  // no position: the folds changed without a file read (time)
  bool gz = false;          // a compressed file
  bool done = false;        // a compressed file read to its end (skipped while size and mtime hold)
  bool was_open = false;    // loaded: the file was being followed when the state was written
  uint64_t size = 0;
  int64_t mtime = 0, seen = 0;  // mtime in ns; seen: unix seconds of the last update
  std::optional<FileKey> supersedes;
};

inline std::string sha(std::string_view s) {
  return sha256_hex(std::string(s));
}

inline int64_t mtime_ns(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

}  // namespace reflex::deploy::agent
