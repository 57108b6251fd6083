// `reflex agent`: one per host (README, "Deployment"). Follows log files
// (rotation by rename, truncation, new files in a directory) and envelopes on
// stdin, runs the same ingest as `reflex events` (matcher, storms) and
// publishes the recognized events to the bus (Redis Streams with --redis).
// Read positions (device+inode, offset, line) reach the state file only after
// the bus accepted every event read before them, and never past the first
// line of a storm fold still open: a restart neither loses nor repeats (a
// re-published event carries the same id and the diagnoser drops it).
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent_kmsg.h"
#include "agent_spool.h"
#include "cli_common.h"
#include "commands.h"
#include "daemon.h"
#include "deploy_codec.h"
#include "reflex/artifact.h"
#include "reflex/bus.h"
#include "reflex/compiler.h"
#include "reflex/ingest.h"
#include "reflex/kmsg.h"
#include "reflex/log_format.h"
#include "reflex/topology.h"
#include "reflex/values.h"

namespace reflex::cli {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr size_t kReadChunk = 1 << 20;  // per read() of a followed file
constexpr size_t kMaxLine = 1 << 20;    // longer lines are cut (counted)
constexpr size_t kPrint = 4096;         // bytes hashed at a file's start and before a position
constexpr size_t kMaxClosed = 512;      // positions of closed files kept in the state file
constexpr size_t kMaxGhosts = 64;       // positions whose inode was reused, kept for .gz matching

// Without --redis: the bus is stdout, one JSON object a line.
class StdoutBus final : public bus::EventBus {
 public:
  bool publish_events(const std::vector<std::pair<std::string, bus::Record>>& batch,
                      std::string*) override {
    for (const auto& [shard, rec] : batch) {
      nlohmann::json j = {{"shard", shard}, {"id", rec.id}, {"event", rec.payload}};
      std::string s = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      s += '\n';
      std::fwrite(s.data(), 1, s.size(), stdout);
    }
    std::fflush(stdout);
    return true;
  }
  bool read_events(const std::string&, std::string*, size_t, std::vector<bus::Entry>*,
                   std::string*) override {
    return true;
  }
  bool list_shards(std::vector<std::string>*, std::string*) override { return true; }
  bool lease(const std::string&, const std::string&, int, bool* held, std::string*) override {
    *held = true;
    return true;
  }
  bool release(const std::string&, const std::string&, std::string*) override { return true; }
  bool publish_diagnosis(const std::string&, const std::string&, int, const std::string&,
                         const std::string&, bool* published, std::string*) override {
    *published = true;
    return true;
  }
  bool members(const std::string& owner, int, std::vector<std::string>* live,
               std::string*) override {
    *live = {owner};  // no other process shares stdout
    return true;
  }
  bool trim(const std::string&, int64_t, int64_t*, std::string*) override {
    return true;  // nothing is kept here
  }
  std::string describe() const override { return "stdout"; }
};

struct FileKey {
  uint64_t dev = 0, ino = 0;
  bool operator<(const FileKey& o) const { return dev != o.dev ? dev < o.dev : ino < o.ino; }
};

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

std::string sha(std::string_view s) {
  return sha256_hex(std::string(s));
}

int64_t mtime_ns(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

bool is_gz_name(const std::string& n) {
  return n.size() > 3 && n.compare(n.size() - 3, 3, ".gz") == 0;
}

struct Followed {
  FileKey key;
  std::string path;      // current name
  std::string evidence;  // "hosts/<host>/<name when first seen>", kept across renames
  int fd = -1;
  Position read;          // next byte to read, lines consumed
  Position safe;          // everything before it is emitted (no open fold starts earlier)
  bool rotated = false;   // renamed away from a followed path: read to EOF, then close
  bool skipping = false;  // inside a line longer than kMaxLine
  std::unique_ptr<LineParser> parser;
  std::string head_bytes;  // the first min(size, kPrint) bytes, once known
  // A compressed file (.gz): read through zlib; offsets and lines count its
  // uncompressed text, as they did in the file it was compressed from.
  bool gz = false;
  gzFile gzf = nullptr;
  std::string carry;               // decompressed, not yet consumed; starts at read.offset
  uint64_t carry_at = 0;           // stream offset of carry[0]
  std::optional<Position> target;  // a known file's position: pass the bytes before it
  std::string want_tail;           // that position's tail print ("" = not checked)
  std::string window;              // the last kPrint bytes passed on the way to target
  bool complete = false;           // the stream ended with its trailer
  bool waiting_said = false;
  std::optional<FileKey> supersedes;  // the file whose position this one continues
  std::optional<uint64_t> fed_from;   // the first line this process fed from it
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
  Position safe;          // in-process resume entries: checkpoint behind pos (open folds)
  bool gz = false;        // a compressed file
  bool done = false;      // a compressed file read to its end (skipped while size and mtime hold)
  bool was_open = false;  // loaded: the file was being followed when the state was written
  uint64_t size = 0;
  int64_t mtime = 0, seen = 0;  // mtime in ns; seen: unix seconds of the last update
  std::optional<FileKey> supersedes;
};

// The journal, read from `journalctl -f -o json` (or --journal-command): its
// lines are numbered across restarts (the count is saved with the cursor), so
// a line re-read after a restart gets the same evidence and the same id.
struct Journal {
  pid_t pid = -1;
  int fd = -1;
  std::string buf, last_cursor;
  uint64_t line = 0;
  // (line, cursor) from the safe point on, for checkpoints behind open folds;
  // bounded: past it the checkpoint just stays where it was (re-read, not lost).
  std::deque<std::pair<uint64_t, std::string>> cursors;
  Position safe;
  std::string safe_cursor;
  std::unique_ptr<LineParser> parser;
};
constexpr size_t kMaxJournalCursors = 200000;
// Positions of sources that are not files (device 0 is never a file's).
const FileKey kJournalKey{0, 0};
const FileKey kKmsgKey{0, 1};

// /dev/kmsg (or a file of its records): a record's SEQ is its position, its
// line number SEQ + 1, under the evidence name hosts/<host>/kmsg.
struct Kmsg {
  KmsgReader reader;
  std::unique_ptr<LineParser> parser;
  std::string evidence, identity;  // identity: the boot the SEQs belong to
  uint64_t next_seq = 0;           // the record expected next
  bool expect = false;             // next_seq is known (this boot's saved position)
  uint64_t safe_seq = 0;           // checkpoint: every record before it is emitted
};

std::optional<int64_t> read_boot_time(const fs::path& p) {
  std::ifstream in(p);
  std::string s;
  if (!(in >> s)) return std::nullopt;
  return parse_rfc3339(s);
}

struct Agent {
  const KnowledgeBase& kb;
  const Topology& topo;
  std::string host;
  std::optional<int> year;
  std::optional<int64_t> boot_time;
  bus::EventBus& bus;
  Metrics& metrics;
  std::string state_path;
  size_t buffer_max = 100000, batch = 500;

  Ingestor ing;
  FormatOptions fopts;  // followed files and the journal: --strict-transport as for envelopes
  FormatStats fstats;
  std::map<FileKey, Followed> files;
  std::deque<Pending> pending;
  size_t pending_events = 0;
  std::map<FileKey, Pending> committed;  // durable positions (state file)
  std::map<FileKey, Pending> resume;     // from the state file at start, and closed files
  std::vector<Pending> ghosts;           // positions whose inode now holds other content
  std::map<FileKey, Pending> closing;    // closed, position held back by an open fold
  bool state_loaded = false;             // a state file was there: not the agent's first start
  bool history_scan = false;             // the first scan of a first start (below)
  size_t history_skipped = 0;
  bool first_scan = true;
  bool state_dirty = false;
  Backoff backoff{std::chrono::milliseconds(100), std::chrono::seconds(5)};
  uint64_t published = 0;
  // Beyond the memory buffer: the on-disk spool (null: reading pauses instead).
  std::unique_ptr<Spool> spool;
  bool spool_full = false;

  Agent(const KnowledgeBase& k, const Topology& t, bus::EventBus& b, Metrics& m,
        const IngestOptions& iopts)
      : kb(k), topo(t), bus(b), metrics(m), ing(kb, topo, iopts) {
    fopts.strict_transport = iopts.strict_transport;
    ing.set_sink([this](Event&& ev) { queue_event(std::move(ev)); });
  }

  void queue_event(Event&& ev) {
    metrics.add("reflex_agent_events_total", 1, Metrics::label("signature", ev.name));
    Pending p;
    p.shard = shard_of(ev, topo);
    p.rec.id = event_id(ev, "");
    p.rec.payload = encode_event(ev);
    p.queued = Clock::now();
    pending.push_back(std::move(p));
    ++pending_events;
  }

  bool full() const { return pending_events >= buffer_max; }

  // ---- state file ----
  bool load_state(std::string* err) {
    if (state_path.empty()) return true;
    std::ifstream in(state_path);
    if (!in) return true;  // first start
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("files") || !j["files"].is_array()) {
      *err = state_path +
             ": not a reflex agent state file (give another --state; a stale one may be removed)";
      return false;
    }
    auto entry = [](const nlohmann::json& f) {
      Pending p;
      p.marker = true;
      p.key.dev = f.value("dev", uint64_t{0});
      p.key.ino = f.value("ino", uint64_t{0});
      p.pos.offset = f.value("offset", uint64_t{0});
      p.pos.line = f.value("line", uint64_t{0});
      p.safe = p.pos;
      p.path = f.value("path", "");
      p.evidence = f.value("evidence", "");
      p.cursor = f.value("cursor", "");
      p.print.head_len = f.value("head_len", uint64_t{0});
      p.print.head = f.value("head", "");
      p.print.tail = f.value("tail", "");
      p.gz = f.value("gz", false);
      p.done = f.value("done", false);
      p.was_open = f.value("open", false);
      p.size = f.value("size", uint64_t{0});
      p.mtime = f.value("mtime", int64_t{0});
      p.seen = f.value("seen", int64_t{0});
      return p;
    };
    for (const auto& f : j["files"]) {
      if (!f.is_object()) continue;
      Pending p = entry(f);
      resume[p.key] = p;
      committed[p.key] = p;
    }
    if (j.contains("ghosts") && j["ghosts"].is_array())
      for (const auto& f : j["ghosts"])
        if (f.is_object()) ghosts.push_back(entry(f));
    state_loaded = true;
    return true;
  }

  void write_state() {
    if (state_path.empty() || !state_dirty) return;
    // Bounded: the positions of the oldest closed files go first.
    if (committed.size() > kMaxClosed + files.size()) {
      std::vector<std::pair<int64_t, FileKey>> closed;
      for (const auto& [k, p] : committed)
        if (!files.count(k) && k.dev != 0) closed.emplace_back(p.seen, k);
      std::sort(closed.begin(), closed.end(),
                [](const auto& x, const auto& y) { return x.first < y.first; });
      for (size_t i = 0; i + kMaxClosed < closed.size(); ++i) committed.erase(closed[i].second);
    }
    auto entry_json = [](const Pending& p) {
      return nlohmann::json{{"dev", p.key.dev},
                            {"ino", p.key.ino},
                            {"path", p.path},
                            {"evidence", p.evidence},
                            {"offset", p.pos.offset},
                            {"line", p.pos.line},
                            {"cursor", p.cursor},
                            {"head_len", p.print.head_len},
                            {"head", p.print.head},
                            {"tail", p.print.tail},
                            {"gz", p.gz},
                            {"done", p.done},
                            {"size", p.size},
                            {"mtime", p.mtime},
                            {"seen", p.seen}};
    };
    nlohmann::json files_j = nlohmann::json::array(), ghosts_j = nlohmann::json::array();
    for (const auto& [k, p] : committed) {
      nlohmann::json e = entry_json(p);
      e["open"] = files.count(k) > 0;
      files_j.push_back(std::move(e));
    }
    for (const Pending& g : ghosts) ghosts_j.push_back(entry_json(g));
    std::string text =
        nlohmann::json{{"version", 1}, {"files", files_j}, {"ghosts", ghosts_j}}.dump(
            1, ' ', false, nlohmann::json::error_handler_t::replace) +
        "\n";
    // Write, fsync, rename: a crash leaves the old state or the new one.
    std::string tmp = state_path + ".tmp";
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    bool ok = fd >= 0 &&
              ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
              ::fsync(fd) == 0;
    if (fd >= 0) ::close(fd);
    if (!ok || ::rename(tmp.c_str(), state_path.c_str()) != 0) {
      log_limited(Level::error, "state",
                  state_path + ": cannot write state: " + std::strerror(errno));
      return;
    }
    state_dirty = false;
  }

  // ---- files ----
  void begin_parser(Followed& f) {
    f.parser = std::make_unique<LineParser>(topo, fopts, &fstats);
    FileContext ctx;
    ctx.host_dir = host;
    ctx.file = f.evidence;
    ctx.year = year;
    ctx.boot_time_us = boot_time;
    if (auto bt = read_boot_time(fs::path(f.path).parent_path() / "boot_time"))
      ctx.boot_time_us = bt;
    f.parser->begin_file(ctx);
  }

  // The first min(size, n) bytes of a plain file.
  static std::string pread_at(int fd, uint64_t at, size_t n) {
    std::string b(n, '\0');
    ssize_t got = ::pread(fd, b.data(), n, static_cast<off_t>(at));
    b.resize(got > 0 ? static_cast<size_t>(got) : 0);
    return b;
  }

  // The content print of f at pos (its tail only for plain files: a .gz is
  // recognized again by its inode and head).
  Print print_at(Followed& f, const Position& pos) {
    Print p;
    size_t hl = static_cast<size_t>(std::min<uint64_t>(pos.offset, kPrint));
    if (f.head_bytes.size() < hl && !f.gz) f.head_bytes = pread_at(f.fd, 0, kPrint);
    if (f.head_bytes.size() < hl) return p;
    p.head_len = hl;
    p.head = sha(std::string_view(f.head_bytes).substr(0, hl));
    if (!f.gz && hl > 0) {
      std::string t = pread_at(f.fd, pos.offset - hl, hl);
      if (t.size() == hl) p.tail = sha(t);
    }
    return p;
  }

  void open_file(const std::string& path, const struct stat& st) {
    FileKey key{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
    auto it = files.find(key);
    if (it != files.end()) {
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
    f.evidence = "hosts/" + host + "/" + fs::path(path).filename().string();
    if (auto r = resume.find(key); r != resume.end()) {
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
        add_ghost(p);
      } else if (static_cast<uint64_t>(st.st_size) >= p.pos.offset) {
        f.read = p.pos;
        if (!p.evidence.empty()) f.evidence = p.evidence;
        // Closed and found again in this process: its checkpoint stays
        // behind the folds its lines opened.
        if (p.safe.offset < p.pos.offset) {
          f.safe = p.safe;
          f.fed_from = p.safe.line + 1;
        }
      }
      closing.erase(key);
      resume.erase(r);
    }
    if (!f.fed_from) f.safe = f.read;
    begin_parser(f);
    log(Level::info, "following " + path + " from offset " + std::to_string(f.read.offset) +
                         " (line " + std::to_string(f.read.line) + ")");
    metrics.add("reflex_agent_files_opened_total");
    files.emplace(key, std::move(f));
  }

  void add_ghost(const Pending& p) {
    if (p.pos.offset == 0 || p.print.head_len == 0) return;
    ghosts.push_back(p);
    if (ghosts.size() > kMaxGhosts) ghosts.erase(ghosts.begin());
    state_dirty = true;
  }

  // Decompressed bytes onto f.carry, up to `want` more. A stream cut short
  // (gzip still writing it) is tried again later (gzclearerr, as zlib
  // documents for a file written concurrently); the trailer read = complete.
  enum class Pull { more, waiting, complete, corrupt };
  Pull gz_pull(Followed& f, size_t want, std::string* err) {
    size_t old = f.carry.size();
    f.carry.resize(old + want);
    int n = gzread(f.gzf, f.carry.data() + old, static_cast<unsigned>(want));
    f.carry.resize(old + static_cast<size_t>(std::max(n, 0)));
    int errnum = Z_OK;
    const char* msg = gzerror(f.gzf, &errnum);
    if (n < 0 || (errnum != Z_OK && errnum != Z_BUF_ERROR)) {
      *err = msg ? msg : "gzip error";
      return Pull::corrupt;
    }
    if (static_cast<size_t>(n) == want) return Pull::more;
    if (errnum == Z_BUF_ERROR) {
      gzclearerr(f.gzf);
      return n > 0 ? Pull::more : Pull::waiting;
    }
    return gzeof(f.gzf) ? Pull::complete : (n > 0 ? Pull::more : Pull::waiting);
  }

  // A position whose file this compressed text continues: the known file
  // with the same first bytes, read furthest (its tail is checked once the
  // stream gets there).
  std::optional<Pending> match_known(const std::string& head) {
    std::optional<Pending> best;
    auto consider = [&](const Pending& p) {
      if (p.pos.offset == 0 || p.print.head_len == 0 || p.print.head_len > head.size()) return;
      if (sha(std::string_view(head).substr(0, p.print.head_len)) != p.print.head) return;
      if (!best || p.pos.offset > best->pos.offset) best = p;
    };
    for (const auto& [k, p] : resume)
      if (!p.done) consider(p);
    for (const Pending& g : ghosts) consider(g);
    return best;
  }

  // A followed file this compressed text is a copy of, still being read
  // (gzip running beside it, or its original not yet read to the end).
  bool copy_of_open(const std::string& head) {
    for (auto& [k, o] : files) {
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

  void drop_known(const Pending& p) {
    resume.erase(p.key);
    ghosts.erase(std::remove_if(ghosts.begin(), ghosts.end(),
                                [&](const Pending& g) {
                                  return g.key.dev == p.key.dev && g.key.ino == p.key.ino &&
                                         g.pos.offset == p.pos.offset;
                                }),
                 ghosts.end());
  }

  // A compressed rotation (kern.log.1.gz) or a .gz given to --follow. Its
  // text is either the continuation of a file read before (recognized by
  // content, finished from where it was read to, under that file's evidence
  // name so re-read lines keep their ids), a copy of a file still being read
  // (left until that one is done), or text never seen: read from its start,
  // except at an agent's first start, where compressed files are history
  // before the agent (counted, not read).
  void open_gz(const std::string& path, const struct stat& st) {
    FileKey key{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
    if (auto it = files.find(key); it != files.end()) {
      it->second.path = path;
      return;
    }
    std::optional<Pending> by_inode;
    if (auto r = resume.find(key); r != resume.end()) {
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
      metrics.add("reflex_agent_gz_skipped_total", 1, Metrics::label("reason", "not_gzip"));
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
          (p.head_len == 0 ||
           sha(std::string_view(f.head_bytes).substr(0, p.head_len)) == p.head)) {
        known = by_inode;
      } else {
        add_ghost(*by_inode);
      }
      resume.erase(key);
    }
    if (!known && copy_of_open(f.head_bytes)) {
      close_f();  // its text is being read from the original
      return;
    }
    if (!known) {
      known = match_known(f.head_bytes);
      if (known) {
        drop_known(*known);
        f.supersedes = known->key;
      }
    }
    if (!known && history_scan) {
      close_f();
      metrics.add("reflex_agent_gz_skipped_total", 1, Metrics::label("reason", "history"));
      ++history_skipped;
      remember_done(key, path, st, f.head_bytes, true);
      return;
    }
    f.evidence = "hosts/" + host + "/" + fs::path(path).filename().string();
    if (known) {
      if (!known->evidence.empty()) f.evidence = known->evidence;
      if (known->pos.offset > 0) {
        f.target = known->pos;
        f.want_tail = known->print.tail;
      }
      f.safe = known->safe.offset <= known->pos.offset ? known->safe : known->pos;
      f.fed_from = f.safe.line + 1;  // lines fed by its original count as its own
      closing.erase(known->key);     // its position now moves with this file's
    }
    begin_parser(f);
    log(Level::info, path + ": compressed; " +
                         (known ? "continues " + known->evidence + " from offset " +
                                      std::to_string(known->pos.offset)
                                : std::string("new text, read from the start")));
    metrics.add("reflex_agent_files_opened_total");
    files.emplace(key, std::move(f));
  }

  // A compressed file not to read (again): its position says so, durably.
  void remember_done(const FileKey& key, const std::string& path, const struct stat& st,
                     const std::string& head, bool gz) {
    Pending p;
    p.marker = true;
    p.key = key;
    p.path = path;
    p.evidence = "hosts/" + host + "/" + fs::path(path).filename().string();
    p.gz = gz;
    p.done = true;
    p.size = static_cast<uint64_t>(st.st_size);
    p.mtime = mtime_ns(st);
    p.seen = std::time(nullptr);
    p.print.head_len = std::min<uint64_t>(head.size(), kPrint);
    p.print.head = sha(head.substr(0, p.print.head_len));
    resume[key] = p;
    pending.push_back(p);  // durable in order, after what is queued before it
  }

  // A compressed file that cannot be read further: what was read stands,
  // the rest is lost, and said so.
  void gz_error(const FileKey& key, const std::string& path, const struct stat& st, uint64_t at,
                const std::string& err) {
    metrics.add("reflex_agent_gz_errors_total");
    log(Level::error, path + ": compressed data unreadable after uncompressed offset " +
                          std::to_string(at) + " (" + err + "); the rest of this file is not read");
    remember_done(key, path, st, {}, true);
  }

  // Names in a followed directory that are not log text.
  static bool skip_name(const std::string& n) {
    return n.empty() || n[0] == '.' || n == "boot_time" || n == "timezone" ||
           (n.size() > 4 && n.compare(n.size() - 4, 4, ".tmp") == 0);
  }

  void discover(const std::vector<std::string>& follows) {
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
        for (auto& [k, f] : files)
          if (f.path == p && (k.dev != static_cast<uint64_t>(st.st_dev) ||
                              k.ino != static_cast<uint64_t>(st.st_ino)))
            f.rotated = true;
        open_file(p, st);
      }
    }
    history_scan = first_scan && !state_loaded;
    for (const auto& [p, st] : gzs) open_gz(p, st);
    if (history_scan && history_skipped > 0)
      log(Level::info, std::to_string(history_skipped) +
                           " compressed file(s) present at the agent's first start not read "
                           "(history before the agent; later rotations are read)");
    if (first_scan && state_loaded) report_unmatched();
    first_scan = history_scan = false;
  }

  // After the first scan of a restart: positions of files that were being
  // followed and are found neither by inode nor as a .gz. What was written
  // to them after the saved position, if anything, was not read: said and
  // counted, not silent.
  void report_unmatched() {
    for (auto& [k, p] : resume) {
      if (!p.was_open || p.done || k.dev == 0) continue;
      p.was_open = false;
      metrics.add("reflex_agent_lost_positions_total");
      log(Level::warn, p.path + " (followed as " + p.evidence + ", read to offset " +
                           std::to_string(p.pos.offset) +
                           ") is gone and no compressed rotation of it was found: what was "
                           "written to it after that offset, if anything, was not read");
    }
  }

  // The first line of an open fold in this file (evidence name), if any.
  // Only lines lo..hi count: a file and the one that replaced it under its
  // name share the evidence name; the lines this process fed from each tell
  // their folds apart (where those overlap, the earlier fold holds both).
  std::optional<uint64_t> first_open_line(const std::string& evidence, uint64_t lo = 0,
                                          uint64_t hi = UINT64_MAX) {
    std::optional<uint64_t> first;
    std::string prefix = evidence + ":";
    ing.with_open_storms([&](const OpenStorms& os) {
      os.for_each([&](const Event& ev) {
        if (ev.evidence.compare(0, prefix.size(), prefix) != 0) return;
        uint64_t n = std::strtoull(ev.evidence.c_str() + prefix.size(), nullptr, 10);
        if (n < lo || n > hi) return;
        if (!first || n < *first) first = n;
      });
    });
    return first;
  }

  // Reads what is new in f; true when something was read.
  bool read_file(Followed& f) {
    if (f.gz) return read_gz(f);
    struct stat st {};
    if (::fstat(f.fd, &st) == 0 && static_cast<uint64_t>(st.st_size) < f.read.offset) {
      log(Level::warn, f.path + ": truncated, reading from the start");
      metrics.add("reflex_agent_truncations_total");
      f.read = {};
      f.safe = {};
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

  // A compressed file: on to the known position first (its tail checked),
  // then line by line like a plain file; closed once its stream is complete.
  bool read_gz(Followed& f) {
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
          f.safe = f.read;
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
        f.read = f.safe = {};
        f.fed_from.reset();
        f.evidence = "hosts/" + host + "/" + fs::path(f.path).filename().string();
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
                           std::to_string(f.read.offset + f.carry.size()) +
                           ", waiting for the rest");
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

  bool gz_failed(Followed& f, const std::string& err) {
    metrics.add("reflex_agent_gz_errors_total");
    log(Level::error, f.path + ": compressed data unreadable after uncompressed offset " +
                          std::to_string(f.carry_at + f.carry.size()) + " (" + err +
                          "); the rest of this file is not read");
    f.complete = true;  // what was decompressed is still read, then the file closes
    return true;
  }

  // Lines [0, usable) of buf, which starts at f.read.offset.
  void feed_lines(Followed& f, const std::string& buf, size_t usable) {
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
        if (f.parser->parse(raw, f.read.line, &rec)) ing.feed_record(rec);
      } else {
        --f.read.line;  // the tail of a cut line is not a line of its own
        --lines;
        starts.pop_back();
      }
      pos = end + 1;
    }
    f.read.offset += usable;
    metrics.add("reflex_agent_lines_read_total", static_cast<double>(lines));
    metrics.add("reflex_agent_bytes_read_total", static_cast<double>(usable));
    // Checkpoint: up to here, unless a fold still open began earlier.
    if (!f.fed_from) f.fed_from = first_line;
    auto open = first_open_line(f.evidence, *f.fed_from, f.read.line);
    if (!open) {
      f.safe = f.read;
    } else if (*open >= first_line && *open - first_line < starts.size()) {
      f.safe = {starts[*open - first_line], *open - 1};
    }
    queue_marker(f);
  }

  void queue_marker(Followed& f) {
    Pending m;
    m.marker = true;
    m.key = f.key;
    m.pos = f.safe;
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
    pending.push_back(std::move(m));
  }

  // Folds sent by time (quiet input) or closed by another file's later line:
  // positions held back by them move up to where the files were read. Without this a kill -9 now
  // re-reads lines whose fold was already sent, folds them again with another count under the same
  // id, and the diagnoser keeps the first count.
  void advance_checkpoints() {
    for (auto& [k, f] : files)
      if (f.safe.offset != f.read.offset && !f.target && f.fed_from &&
          !first_open_line(f.evidence, *f.fed_from, f.read.line)) {
        f.safe = f.read;
        queue_marker(f);
      }
    if (kmsg.parser && kmsg.safe_seq != kmsg.next_seq && !first_open_line(kmsg.evidence)) {
      kmsg.safe_seq = kmsg.next_seq;
      queue_kmsg_marker();
    }
    if (journal.parser && journal.safe.line != journal.line &&
        !first_open_line("hosts/" + host + "/journal")) {
      journal.safe = {0, journal.line};
      journal.safe_cursor = journal.last_cursor;
      journal.cursors.clear();
      queue_journal_marker();
    }
  }

  // After finish(): every fold is out, every file is safe up to where it was read.
  void mark_all_read() {
    for (auto& [k, f] : files) {
      f.safe = f.read;
      queue_marker(f);
    }
    settle_closed(true);
    if (kmsg.parser) {
      kmsg.safe_seq = kmsg.next_seq;
      queue_kmsg_marker();
    }
    if (journal.parser) {
      journal.safe = {0, journal.line};
      journal.safe_cursor = journal.last_cursor;
      queue_journal_marker();
    }
  }

  // The file's name no longer leads to it (deleted, or renamed outside a
  // followed directory): nothing more will be appended.
  static bool gone(const Followed& f) {
    struct stat st {};
    return ::stat(f.path.c_str(), &st) != 0 || static_cast<uint64_t>(st.st_ino) != f.key.ino ||
           static_cast<uint64_t>(st.st_dev) != f.key.dev;
  }

  // ---- kmsg ----
  Kmsg kmsg;
  bool start_kmsg(const std::string& path, std::string* err) {
    if (!kmsg.reader.open(path, err)) return false;
    std::optional<int64_t> bt = boot_time ? boot_time : proc_boot_time_us();
    if (!bt) {
      *err = "no boot time for the records' timestamps (/proc/stat has no btime; give --boot-time)";
      return false;
    }
    kmsg.identity = boot_identity(kmsg.reader.device(), *bt);
    kmsg.evidence = "hosts/" + host + "/kmsg";
    kmsg.parser = std::make_unique<LineParser>(topo, fopts, &fstats);
    FileContext ctx;
    ctx.host_dir = host;
    ctx.file = kmsg.evidence;
    ctx.year = year;
    ctx.boot_time_us = bt;
    kmsg.parser->begin_file(ctx);
    if (auto r = resume.find(kKmsgKey); r != resume.end()) {
      kmsg.expect = true;  // a new boot counts from SEQ 0 again
      kmsg.next_seq = r->second.cursor == kmsg.identity ? r->second.pos.line : 0;
      if (r->second.cursor != kmsg.identity)
        log(Level::info, path + ": a new boot since the saved position (" + r->second.cursor +
                             ", now " + kmsg.identity + "): this boot's records from the first");
      resume.erase(r);
    }
    kmsg.safe_seq = kmsg.next_seq;
    log(Level::info, "reading kernel records from " + path + " (" + kmsg.identity + ", from SEQ " +
                         std::to_string(kmsg.next_seq) + ")");
    return true;
  }

  // One record: skipped when delivered before a restart; a SEQ jump is
  // records the ring overwrote before they were read (counted, said).
  void feed_kmsg(const std::string& text) {
    KmsgRecord r;
    std::string err;
    if (!parse_kmsg_record(text, &r, &err)) {
      metrics.add("reflex_agent_kmsg_bad_records_total");
      log_limited(Level::warn, "kmsg-bad", kmsg.reader.path() + ": " + err + "; skipped");
      return;
    }
    metrics.add("reflex_agent_kmsg_records_total");
    if (kmsg.expect && r.seq < kmsg.next_seq) return;
    if (kmsg.expect && r.seq > kmsg.next_seq) {
      metrics.add("reflex_agent_kmsg_gaps_total");
      metrics.add("reflex_agent_kmsg_lost_records_total",
                  static_cast<double>(r.seq - kmsg.next_seq));
      log(Level::warn, kmsg.reader.path() + ": records " + std::to_string(kmsg.next_seq) + ".." +
                           std::to_string(r.seq - 1) +
                           " were overwritten in the kernel's ring before they were read");
    }
    kmsg.expect = true;
    kmsg.next_seq = r.seq + 1;
    for (const std::string& line : kmsg_dmesg_lines(r)) {
      LogRecord rec;
      if (!kmsg.parser->parse(line, r.seq + 1, &rec)) continue;
      // Trusted as the agent read it: facility 0 only the kernel can log with.
      rec.transport = r.from_kernel() ? kTransportKernel : kTransportSyslog;
      ing.feed_record(rec);
    }
  }

  bool read_kmsg() {
    if (!kmsg.reader.is_open()) return false;
    std::vector<std::string> recs;
    uint64_t overwritten = 0;
    bool any = false;
    for (int round = 0; round < 16 && !full(); ++round) {
      kmsg.reader.read(512, &recs, &overwritten);
      if (recs.empty()) break;
      any = true;
      for (const std::string& text : recs) feed_kmsg(text);
    }
    if (overwritten > 0) {
      metrics.add("reflex_agent_kmsg_overwritten_total", static_cast<double>(overwritten));
      log_limited(Level::warn, "kmsg-epipe",
                  kmsg.reader.path() +
                      ": the kernel's ring moved past the reader (EPIPE); the SEQ gap says how "
                      "many records were lost");
    }
    if (!any) return false;
    // Checkpoint: the first record of an open fold is read again after a restart.
    auto open = first_open_line(kmsg.evidence);
    kmsg.safe_seq = open ? *open - 1 : kmsg.next_seq;
    queue_kmsg_marker();
    return true;
  }

  void queue_kmsg_marker() {
    Pending m;
    m.marker = true;
    m.key = kKmsgKey;
    m.pos = {0, kmsg.safe_seq};
    m.cursor = kmsg.identity;
    m.path = kmsg.reader.path();
    m.evidence = kmsg.evidence;
    m.seen = std::time(nullptr);
    pending.push_back(std::move(m));
  }

  // ---- journal ----
  Journal journal;
  bool start_journal(std::string cmd, std::string* err) {
    journal.parser = std::make_unique<LineParser>(topo, fopts, &fstats);
    FileContext ctx;
    ctx.host_dir = host;
    ctx.file = "hosts/" + host + "/journal";
    ctx.year = year;
    ctx.boot_time_us = boot_time;
    journal.parser->begin_file(ctx);
    if (auto r = resume.find(kJournalKey); r != resume.end()) {
      journal.line = r->second.pos.line;
      journal.safe = r->second.pos;
      journal.safe_cursor = journal.last_cursor = r->second.cursor;
      resume.erase(r);
    }
    // Cursors are journald's own text ("s=...;i=...;b=..."), never a quote.
    if (!journal.safe_cursor.empty() && journal.safe_cursor.find('\'') == std::string::npos)
      cmd += " --after-cursor='" + journal.safe_cursor + "'";
    int fds[2];
    if (::pipe(fds) != 0) {
      *err = std::string("pipe: ") + std::strerror(errno);
      return false;
    }
    pid_t pid = ::fork();
    if (pid < 0) {
      *err = std::string("fork: ") + std::strerror(errno);
      return false;
    }
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // an agent killed -9 takes journalctl with it
      ::dup2(fds[1], 1);
      ::close(fds[0]);
      ::close(fds[1]);
      ::execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(fds[1]);
    ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    ::fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    journal.pid = pid;
    journal.fd = fds[0];
    log(Level::info, "reading the journal: " + cmd);
    return true;
  }

  // The entry's "__CURSOR" value (JSON whitespace allowed; cursors need no escapes).
  static std::string cursor_of(std::string_view line) {
    const std::string_view key = "\"__CURSOR\"";
    auto at = line.find(key);
    if (at == std::string_view::npos) return "";
    size_t i = at + key.size();
    auto skip = [&] {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    };
    skip();
    if (i >= line.size() || line[i] != ':') return "";
    ++i;
    skip();
    if (i >= line.size() || line[i] != '"') return "";
    auto end = line.find('"', ++i);
    return end == std::string_view::npos ? "" : std::string(line.substr(i, end - i));
  }

  bool read_journal() {
    if (journal.fd < 0) return false;
    bool any = false;
    char chunk[1 << 16];
    for (int round = 0; round < 64 && !full(); ++round) {
      ssize_t n = ::read(journal.fd, chunk, sizeof chunk);
      if (n == 0) {
        log(Level::info, "the journal reader exited");
        ::close(journal.fd);
        journal.fd = -1;
        int st = 0;
        ::waitpid(journal.pid, &st, 0);
        journal.pid = -1;
        break;
      }
      if (n < 0) break;  // EAGAIN
      any = true;
      journal.buf.append(chunk, static_cast<size_t>(n));
      size_t start = 0;
      for (size_t nl; (nl = journal.buf.find('\n', start)) != std::string::npos; start = nl + 1) {
        std::string_view raw(journal.buf.data() + start, nl - start);
        if (raw.size() > kMaxLine) raw = raw.substr(0, kMaxLine);
        ++journal.line;
        std::string c = cursor_of(raw);
        if (!c.empty()) journal.last_cursor = c;
        journal.cursors.emplace_back(journal.line, journal.last_cursor);
        if (journal.cursors.size() > kMaxJournalCursors) journal.cursors.pop_front();
        LogRecord rec;
        if (journal.parser->parse(raw, journal.line, &rec)) ing.feed_record(rec);
        metrics.add("reflex_agent_journal_entries_total");
      }
      journal.buf.erase(0, start);
      if (journal.buf.size() > kMaxLine) journal.buf.clear();  // refuses a runaway line
    }
    if (!any) return false;
    // Checkpoint: the cursor of the last entry before the first open fold.
    std::string ev = "hosts/" + host + "/journal";
    auto open = first_open_line(ev);
    if (!open) {
      journal.safe = {0, journal.line};
      journal.safe_cursor = journal.last_cursor;
      journal.cursors.clear();
    } else {
      while (!journal.cursors.empty() && journal.cursors.front().first < *open - 1)
        journal.cursors.pop_front();
      if (!journal.cursors.empty() && journal.cursors.front().first == *open - 1) {
        journal.safe = {0, *open - 1};
        journal.safe_cursor = journal.cursors.front().second;
      }
    }
    queue_journal_marker();
    return true;
  }

  void queue_journal_marker() {
    Pending m;
    m.marker = true;
    m.key = kJournalKey;
    m.pos = journal.safe;
    m.cursor = journal.safe_cursor;
    m.evidence = "hosts/" + host + "/journal";
    pending.push_back(std::move(m));
  }

  void stop_journal() {
    if (journal.pid > 0) {
      ::kill(journal.pid, SIGTERM);
      int st = 0;
      ::waitpid(journal.pid, &st, 0);
    }
    if (journal.fd >= 0) ::close(journal.fd);
    journal.fd = -1;
    journal.pid = -1;
  }

  // Closed files whose position waited behind an open fold: once no fold
  // of theirs is open, their position moves to where they were read to.
  void settle_closed(bool all) {
    for (auto it = closing.begin(); it != closing.end();) {
      if (!all &&
          first_open_line(it->second.evidence, it->second.safe.line + 1, it->second.pos.line)) {
        ++it;
        continue;
      }
      Pending m = it->second;
      m.marker = true;
      m.safe = m.pos;
      m.seen = std::time(nullptr);
      if (auto r = resume.find(it->first); r != resume.end()) r->second.safe = m.pos;
      pending.push_back(std::move(m));
      it = closing.erase(it);
    }
  }

  bool read_files() {
    settle_closed(false);
    bool any = false;
    for (auto it = files.begin(); it != files.end();) {
      Followed& f = it->second;
      if (full()) break;
      bool got = read_file(f);
      any |= got;
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
          closing[f.key] = done;
          closing[f.key].safe = f.safe;
        }
        gzclose(f.gzf);
        ::close(f.fd);
        resume[f.key] = std::move(done);
        it = files.erase(it);
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
        if (f.safe.offset != f.read.offset) closing[f.key] = again;
        ::close(f.fd);
        resume[f.key] = std::move(again);
        // Its committed position stays until its last events are durable.
        it = files.erase(it);
        continue;
      }
      ++it;
    }
    return any;
  }

  // A position made durable; the file it continues (a .gz of it) is then
  // recognized by this one.
  void apply_marker(const Pending& m) {
    committed[m.key] = m;
    if (m.supersedes && (m.supersedes->dev != m.key.dev || m.supersedes->ino != m.key.ino))
      committed.erase(*m.supersedes);
    state_dirty = true;
  }

  void publish_failed(const std::string& err) {
    backoff.failed();
    metrics.add("reflex_agent_publish_failures_total");
    uint64_t spooled = spool ? spool->events() : 0;
    log_limited(Level::warn, "publish",
                "publish to " + bus.describe() + " failed, " + std::to_string(pending_events) +
                    " event(s) buffered in memory and " + std::to_string(spooled) +
                    " in the spool, retrying with backoff: " + err);
  }

  // The spool before memory: everything in it is older. Bounded per call so
  // reading goes on while a large spool drains; true when it is empty.
  bool drain_spool() {
    for (int round = 0; round < 64 && spool && spool->events() > 0 && backoff.ready(); ++round) {
      std::vector<SpoolRecord> recs;
      std::string err;
      if (!spool->peek(batch, &recs, &err)) {
        log_limited(Level::error, "spool", "spool: " + err);
        break;
      }
      if (recs.empty()) break;
      std::vector<std::pair<std::string, bus::Record>> out;
      out.reserve(recs.size());
      for (SpoolRecord& r : recs)
        out.emplace_back(std::move(r.shard), bus::Record{std::move(r.id), std::move(r.payload)});
      if (!bus.publish_events(out, &err)) {
        publish_failed(err);
        break;
      }
      backoff.succeeded();
      // A failed head write re-delivers these after a restart (same ids).
      if (!spool->consume(&err)) log_limited(Level::error, "spool", "spool: " + err);
      published += out.size();
      metrics.add("reflex_agent_published_events_total", static_cast<double>(out.size()));
      metrics.add("reflex_agent_drained_events_total", static_cast<double>(out.size()));
      if (spool->events() == 0)
        log(Level::info, "spool " + spool->dir() + " drained to " + bus.describe());
    }
    return !spool || spool->events() == 0;
  }

  // Moves up to `max` of the oldest events (while more than `keep` are in
  // memory) to the spool, durably; the checkpoints among them then hold, as
  // if the bus had accepted them. False when nothing could be moved.
  bool spill_chunk(size_t keep, size_t max) {
    uint64_t room = spool->room(), bytes = 0;
    std::vector<SpoolRecord> recs;
    size_t items = 0;
    for (const Pending& p : pending) {
      if (pending_events - recs.size() <= keep || recs.size() >= max) break;
      if (!p.marker) {
        SpoolRecord r{p.shard, p.rec.id, p.rec.payload};
        bytes += Spool::encoded_size(r);
        if (bytes > room) break;
        recs.push_back(std::move(r));
      }
      ++items;
    }
    if (recs.empty()) {
      if (!spool_full) {
        spool_full = true;
        metrics.add("reflex_agent_spool_full_total");
        log(Level::warn, "spool " + spool->dir() + " full (" + std::to_string(spool->bytes()) +
                             " bytes, " + std::to_string(spool->events()) +
                             " events): reading pauses until the bus takes events again");
      }
      return false;
    }
    std::string err;
    if (!spool->append(recs, &err)) {
      metrics.add("reflex_agent_spool_errors_total");
      log_limited(Level::error, "spool-write",
                  "spool " + spool->dir() + ": cannot append (" + err +
                      "); the events stay in memory, reading pauses while it is full");
      return false;
    }
    spool_full = false;
    for (size_t i = 0; i < items; ++i) {
      if (pending.front().marker)
        apply_marker(pending.front());
      else
        --pending_events;
      pending.pop_front();
    }
    metrics.add("reflex_agent_spilled_events_total", static_cast<double>(recs.size()));
    log_limited(Level::info, "spill",
                std::to_string(recs.size()) + " event(s) spilled to the spool " + spool->dir() +
                    " (now " + std::to_string(spool->events()) + " events, " +
                    std::to_string(spool->bytes()) + " bytes)");
    return true;
  }

  // Memory full (or, with all, at stop): every event in memory goes to the
  // spool, so the checkpoints queued behind them hold too (a file's comes
  // after its whole read, a journal's or kmsg's after its round) and sources
  // that cannot be read again keep their events.
  void spill(bool all) {
    if (!spool || (!all && !full())) return;
    for (int i = 0; i < 1024 && pending_events > 0; ++i)
      if (!spill_chunk(0, 4096)) break;
    apply_front_markers();
  }

  void apply_front_markers() {
    while (!pending.empty() && pending.front().marker) {
      apply_marker(pending.front());
      pending.pop_front();
    }
  }

  void spool_metrics() {
    if (!spool) return;
    for (const std::string& n : spool->notes) log(Level::warn, "spool: " + n);
    spool->notes.clear();
    metrics.set("reflex_agent_spool_events", static_cast<double>(spool->events()));
    metrics.set("reflex_agent_spool_bytes", static_cast<double>(spool->bytes()));
    metrics.set("reflex_agent_spool_damaged_total", static_cast<double>(spool->damaged_truncated),
                Metrics::label("reason", "truncated"));
    metrics.set("reflex_agent_spool_damaged_total", static_cast<double>(spool->damaged_corrupt),
                Metrics::label("reason", "corrupt"));
    metrics.set("reflex_agent_spool_damaged_bytes_total",
                static_cast<double>(spool->damaged_bytes));
  }

  // Publishes what is pending (the spool first); true when nothing waits.
  bool publish() {
    apply_front_markers();
    bool spool_empty = drain_spool();
    while (spool_empty && pending_events > 0 && backoff.ready()) {
      std::vector<std::pair<std::string, bus::Record>> out;
      size_t items = 0;
      for (const Pending& p : pending) {
        if (out.size() >= batch) break;
        ++items;
        if (!p.marker) out.emplace_back(p.shard, p.rec);
      }
      std::string err;
      if (!bus.publish_events(out, &err)) {
        publish_failed(err);
        break;
      }
      backoff.succeeded();
      for (size_t i = 0; i < items; ++i) {
        Pending& p = pending.front();
        if (p.marker) {
          apply_marker(p);
        } else {
          --pending_events;
        }
        pending.pop_front();
      }
      published += out.size();
      metrics.add("reflex_agent_published_events_total", static_cast<double>(out.size()));
      apply_front_markers();
    }
    spill(false);
    // At once: a position written late lets a restart re-read lines whose
    // storm folds may then be cut differently (same id, other count). Before
    // the gauges: what they show is durable.
    write_state();
    double lag = 0;
    for (const Pending& p : pending)
      if (!p.marker) {
        lag = std::chrono::duration<double>(Clock::now() - p.queued).count();
        break;
      }
    metrics.set("reflex_agent_publish_lag_seconds", lag);
    metrics.set("reflex_agent_buffer_events", static_cast<double>(pending_events));
    spool_metrics();
    return pending_events == 0 && (!spool || spool->events() == 0);
  }

  void refresh_stats() {
    IngestStats st = ing.stats_snapshot();
    metrics.set("reflex_agent_refused_lines_total",
                static_cast<double>(st.skipped_invalid_json + st.skipped_no_msg +
                                    fstats.skipped_invalid_json + fstats.skipped_no_msg),
                Metrics::label("reason", "not_an_envelope"));
    metrics.set("reflex_agent_refused_lines_total",
                static_cast<double>(st.truncated_long_lines + fstats.truncated_long_lines),
                Metrics::label("reason", "too_long"));
    metrics.set("reflex_agent_refused_lines_total", static_cast<double>(st.transport_mismatch),
                Metrics::label("reason", "transport"));
  }
};

void declare_agent_metrics(Metrics& metrics) {
  metrics.counter("reflex_agent_lines_read_total", "Log lines read from followed files.");
  metrics.counter("reflex_agent_bytes_read_total", "Bytes read from followed files.");
  metrics.counter("reflex_agent_envelopes_read_total", "Envelope lines read on stdin.");
  metrics.counter("reflex_agent_events_total", "Recognized events, by signature.");
  metrics.counter("reflex_agent_refused_lines_total", "Lines refused, by reason.");
  metrics.counter("reflex_agent_published_events_total", "Events the bus accepted.");
  metrics.counter("reflex_agent_publish_failures_total", "Failed publish attempts.");
  metrics.counter("reflex_agent_files_opened_total", "Log files opened.");
  metrics.counter("reflex_agent_truncations_total", "Followed files found truncated.");
  metrics.counter("reflex_agent_journal_entries_total", "Journal entries read.");
  metrics.counter("reflex_agent_buffer_full_total", "Times reading paused on a full buffer.");
  metrics.counter("reflex_agent_gz_skipped_total",
                  "Compressed files not read, by reason (history at first start, not gzip).");
  metrics.counter("reflex_agent_gz_errors_total",
                  "Compressed files unreadable part-way (the rest is not read).");
  metrics.counter("reflex_agent_lost_positions_total",
                  "Files followed before a restart found neither by inode nor compressed.");
  metrics.gauge("reflex_agent_buffer_events", "Events waiting for the bus.");
  metrics.gauge("reflex_agent_publish_lag_seconds", "Age of the oldest event waiting for the bus.");
  metrics.gauge("reflex_agent_spool_events", "Events in the on-disk spool, waiting for the bus.");
  metrics.gauge("reflex_agent_spool_bytes", "Bytes in the on-disk spool, waiting for the bus.");
  metrics.counter("reflex_agent_spilled_events_total",
                  "Events moved from the full memory buffer to the spool.");
  metrics.counter("reflex_agent_drained_events_total", "Events from the spool the bus accepted.");
  metrics.counter("reflex_agent_spool_full_total", "Times reading paused on a full spool.");
  metrics.counter("reflex_agent_spool_errors_total", "Failed appends to the spool.");
  metrics.counter("reflex_agent_spool_damaged_total",
                  "Damaged spool records skipped, by reason (truncated at a segment's end, "
                  "corrupt inside one).");
  metrics.counter("reflex_agent_spool_damaged_bytes_total", "Bytes of damaged spool records.");
  metrics.counter("reflex_agent_kmsg_records_total", "Kernel records read (--kmsg).");
  metrics.counter("reflex_agent_kmsg_bad_records_total",
                  "Records not in the kmsg format, skipped.");
  metrics.counter("reflex_agent_kmsg_gaps_total",
                  "SEQ jumps: records the kernel's ring overwrote before they were read.");
  metrics.counter("reflex_agent_kmsg_lost_records_total", "Records lost in those jumps.");
  metrics.counter("reflex_agent_kmsg_overwritten_total", "Reads of /dev/kmsg that returned EPIPE.");
}

// Redis Streams when a URL is given, else events printed on stdout; null
// (after a message) when the URL is bad.
std::unique_ptr<bus::EventBus> make_agent_bus(const std::string& redis_url, size_t maxlen) {
  if (redis_url.empty()) return std::make_unique<StdoutBus>();
  bus::Options bopts;
  bopts.maxlen = maxlen;
  std::string err;
  auto b = bus::make_redis_bus(redis_url, bopts, &err);
  if (!b) log(Level::error, "--redis: " + err);
  return b;
}

// Envelope lines on (non-blocking) stdin, fed as they complete.
struct StdinEnvelopes {
  bool open = false;
  std::string line;

  // Up to 64 chunks while the buffer has room; true when anything was read.
  bool read(Agent& a, Metrics& metrics) {
    bool any = false;
    char chunk[1 << 16];
    for (int round = 0; round < 64 && !a.full(); ++round) {
      ssize_t n = ::read(0, chunk, sizeof chunk);
      if (n == 0) {
        open = false;
        if (!line.empty()) a.ing.feed_envelope(line);
        line.clear();
        break;
      }
      if (n < 0) break;  // EAGAIN: nothing now
      any = true;
      for (ssize_t i = 0; i < n; ++i) {
        if (chunk[i] != '\n') {
          if (line.size() < kMaxLine) line.push_back(chunk[i]);
          continue;
        }
        metrics.add("reflex_agent_envelopes_read_total");
        a.ing.feed_envelope(line);
        line.clear();
      }
    }
    return any;
  }
};

// Reads and publishes until stopped (or, with once, until everything is read
// and published).
void agent_loop(Agent& a, Metrics& metrics, const std::vector<std::string>& follows, bool use_stdin,
                bool once, std::chrono::milliseconds poll_ms) {
  StdinEnvelopes in;
  in.open = use_stdin;
  if (use_stdin) ::fcntl(0, F_SETFL, ::fcntl(0, F_GETFL) | O_NONBLOCK);
  auto last_discover = Clock::now() - std::chrono::hours(1);
  bool was_full = false;
  while (!g_daemon_stop) {
    if (Clock::now() - last_discover > std::chrono::seconds(1)) {
      a.discover(follows);
      last_discover = Clock::now();
    }
    bool any = false;
    if (!a.full()) any |= a.read_files();
    if (!a.full()) any |= a.read_journal();
    if (!a.full()) any |= a.read_kmsg();
    if (in.open && !a.full()) any |= in.read(a, metrics);
    if (a.full() && !was_full) metrics.add("reflex_agent_buffer_full_total");
    was_full = a.full();
    // Quiet input: time moves storm folds along (a storm that stopped is sent).
    if (!any)
      a.ing.advance_time(std::chrono::duration_cast<std::chrono::microseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count());
    // Folds close by time and by other files' later lines, too.
    a.advance_checkpoints();
    bool drained = a.publish();
    a.refresh_stats();
    if (once && !any && !in.open && a.journal.fd < 0 && drained) {
      a.ing.finish();
      a.mark_all_read();
      if (a.pending_events == 0 && a.publish()) break;
    }
    if (!any) sleep_unless_stopped(poll_ms);
  }
}

// Stop: send the open folds, then give the bus a bounded time to take them.
void stop_agent(Agent& a) {
  a.stop_journal();
  a.ing.finish();
  a.mark_all_read();
  auto deadline = Clock::now() + std::chrono::seconds(5);
  g_daemon_stop = 0;
  while (!a.publish() && Clock::now() < deadline && !g_daemon_stop)
    sleep_unless_stopped(std::chrono::milliseconds(50));
  a.spill(true);  // what the bus did not take waits in the spool, positions past it
  a.write_state();
  a.spool_metrics();
  log(Level::info, "stopped: " + std::to_string(a.published) + " event(s) published, " +
                       std::to_string(a.spool ? a.spool->events() : 0) +
                       " in the spool (sent at restart), " + std::to_string(a.pending_events) +
                       " not published (their lines are re-read at restart)");
}

// The defaults that depend on the machine: this host's name, this year.
void agent_defaults(std::string* host, int* year) {
  if (host->empty()) {
    char h[256] = {0};
    gethostname(h, sizeof h - 1);
    *host = h;
  }
  if (*year == 0) {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    *year = tm.tm_year + 1900;
  }
}

// `reflex agent`'s command line.
struct AgentOptions {
  std::string kb_path, topo_path, host, redis_url, state_path, boot_time, poll_s = "250ms";
  std::vector<std::string> follows;
  bool use_stdin = false, once = false, strict = false, use_journal = false;
  std::string journal_cmd = "journalctl -f -o json --no-pager";
  std::string spool_dir, spool_max_s = "256M", kmsg_path;
  int year = 0;
  size_t buffer_max = 100000, maxlen = 1000000, batch = 500;
  DaemonOptions dopts;
};

void add_agent_options(CLI::App& app, AgentOptions* o) {
  add_kb_option(app, &o->kb_path);
  app.add_option("--topology", o->topo_path, "topology.json")->required();
  app.add_option("--host", o->host, "this host's name (default: the system's host name)");
  app.add_option("--follow", o->follows,
                 "a log file (followed across rename and truncation) or a directory (every "
                 "file in it, new ones too; *.gz rotations finish the file they were "
                 "compressed from); repeatable");
  app.add_flag("--stdin", o->use_stdin, "also read event envelopes (interfaces.md §4) on stdin");
  app.add_flag("--journal", o->use_journal,
               "also read the journal (journalctl -f -o json), continuing after the saved cursor");
  app.add_option("--journal-command", o->journal_cmd,
                 "the command that prints journal entries as JSON lines (default "
                 "'journalctl -f -o json --no-pager'; --after-cursor is appended)");
  app.add_option("--kmsg", o->kmsg_path,
                 "also read the kernel's records from /dev/kmsg (or PATH: a file of records in "
                 "its format), continuing after the saved SEQ; times: boot time (/proc/stat, or "
                 "--boot-time) + the record's")
      ->expected(0, 1);
  app.add_option("--redis", o->redis_url,
                 "publish to Redis Streams: redis://[user[:password]@]host[:port][/db] "
                 "(default: print the events on stdout)");
  app.add_option("--state", o->state_path, "remember read positions in this file");
  app.add_option("--year", o->year, "year for log formats without one (default: this year)");
  app.add_option("--boot-time", o->boot_time,
                 "ISO-8601 boot time for raw dmesg seconds (a boot_time file beside the log wins)");
  app.add_option("--buffer", o->buffer_max,
                 "events held in memory while the bus is unreachable; beyond it they go to the "
                 "spool, and reading pauses only when that is full too (default 100000)");
  app.add_option("--spool-dir", o->spool_dir,
                 "the on-disk spool beyond the memory buffer (default: <--state>.spool; no "
                 "spool without --state or --spool-dir)");
  app.add_option("--spool-max", o->spool_max_s,
                 "the spool's size bound, bytes with an optional K/M/G suffix (default 256M; "
                 "0: no spool)");
  app.add_option("--batch", o->batch, "events per publish round trip (default 500)");
  app.add_option("--maxlen", o->maxlen,
                 "approximate length kept per event stream (default 1000000)");
  app.add_option("--poll", o->poll_s, "how often followed files are checked (default 250ms)");
  app.add_flag("--once", o->once,
               "exit once every file is read to its end, stdin is at EOF and all is published");
  add_strict_transport_flag(app, &o->strict);
  add_daemon_options(app, &o->dopts);
}

// "256M", "1G", "4096": bytes (K/M/G are powers of 1024).
std::optional<uint64_t> parse_bytes(const std::string& s) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return std::nullopt;
  size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(s, &used);
  } catch (...) {
    return std::nullopt;
  }
  std::string unit = s.substr(used);
  int shift = unit.empty() ? 0 : unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : -1;
  if (shift < 0 || v > (UINT64_MAX >> shift)) return std::nullopt;
  return static_cast<uint64_t>(v) << shift;
}

// The spool, when there is one; false (after a message) when it cannot be used.
bool open_spool(Agent& a, const AgentOptions& o) {
  auto max = parse_bytes(o.spool_max_s);
  if (!max) {
    log(Level::error, "bad --spool-max '" + o.spool_max_s + "' (bytes, optional K/M/G suffix)");
    return false;
  }
  std::string dir = !o.spool_dir.empty()    ? o.spool_dir
                    : !o.state_path.empty() ? o.state_path + ".spool"
                                            : "";
  if (dir.empty() || *max == 0) return true;
  auto sp = std::make_unique<Spool>();
  std::string err;
  if (!sp->open(dir, *max, &err)) {
    log(Level::error, "--spool-dir: " + err);
    return false;
  }
  if (sp->events() > 0)
    log(Level::info, "spool " + dir + " holds " + std::to_string(sp->events()) +
                         " event(s) from before the restart; they are sent first");
  a.spool = std::move(sp);
  a.spool_metrics();
  return true;
}

}  // namespace

int run_agent(int argc, char** argv) {
  CLI::App app{"Follow this host's logs, recognize events, publish them for the diagnosers",
               "reflex agent"};
  AgentOptions o;
  add_agent_options(app, &o);
  if (auto rc = parse_or_exit(app, argc, argv, "reflex agent")) return *rc;

  std::string err;
  if (!init_logging("reflex-agent", o.dopts, &err)) {
    std::fprintf(stderr, "reflex agent: %s\n", err.c_str());
    return 2;
  }
  auto poll_d = parse_duration_s(o.poll_s);
  if (!poll_d || *poll_d <= 0 || o.batch == 0 || o.buffer_max == 0) {
    log(Level::error, "bad --poll, --batch or --buffer");
    return 2;
  }
  if (app.count("--kmsg") > 0 && o.kmsg_path.empty()) o.kmsg_path = "/dev/kmsg";
  if (o.follows.empty() && !o.use_stdin && !o.use_journal && o.kmsg_path.empty()) {
    log(Level::error, "nothing to read: give --follow PATH, --journal, --kmsg and/or --stdin");
    return 2;
  }
  agent_defaults(&o.host, &o.year);
  auto kb = load_kb(o.kb_path, &err, KbParts{.tests = false, .examples = false});
  if (!kb) {
    std::fprintf(stderr, "%s%s", err.c_str(), err.empty() || err.back() != '\n' ? "\n" : "");
    log(Level::error, "cannot load knowledge base " + o.kb_path);
    return 2;
  }
  TopologyError terr;
  auto topo = Topology::load_file(o.topo_path, &terr);
  if (!topo) {
    log(Level::error, terr.str());
    return 2;
  }
  std::optional<int64_t> boot;
  if (!o.boot_time.empty()) {
    boot = parse_rfc3339(o.boot_time);
    if (!boot) {
      log(Level::error, "bad --boot-time '" + o.boot_time + "' (expected ISO-8601)");
      return 2;
    }
  }
  std::unique_ptr<bus::EventBus> bus = make_agent_bus(o.redis_url, o.maxlen);
  if (!bus) return 2;
  Metrics metrics;
  declare_agent_metrics(metrics);
  MetricsServer server;
  if (!o.dopts.metrics.empty() && !server.start(o.dopts.metrics, &metrics, &err)) {
    log(Level::error, err);
    return 2;
  }

  IngestOptions iopts;
  iopts.strict_transport = o.strict;
  Agent a(*kb, *topo, *bus, metrics, iopts);
  a.host = o.host;
  a.year = o.year;
  a.boot_time = boot;
  a.state_path = o.state_path;
  a.buffer_max = o.buffer_max;
  a.batch = o.batch;
  if (!a.load_state(&err)) {
    log(Level::error, err);
    return 2;
  }
  if (!open_spool(a, o)) return 2;
  install_daemon_signals();
  log(Level::info, "agent for " + o.host + " publishing to " + bus->describe());
  if (o.use_journal && !a.start_journal(o.journal_cmd, &err)) {
    log(Level::error, "--journal: " + err);
    return 2;
  }
  if (!o.kmsg_path.empty() && !a.start_kmsg(o.kmsg_path, &err)) {
    log(Level::error, "--kmsg: " + err);
    return 2;
  }

  agent_loop(a, metrics, o.follows, o.use_stdin, o.once,
             std::chrono::milliseconds(static_cast<int>(*poll_d * 1000)));
  stop_agent(a);
  return 0;
}

}  // namespace reflex::cli
