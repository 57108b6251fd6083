// `reflex agent` (docs/deployment.md): one per host. Follows log files
// (rotation by rename, truncation, new files in a directory), the journal,
// kernel records and envelopes on stdin, runs the same ingest as `reflex
// events` and publishes the recognized events to the bus (Redis Streams, or
// stdout). Read positions (device+inode, offset, line) reach the state file
// only after the bus accepted every event read before them. A file's
// position is where it was read to, saved with the storm folds still open
// there (a restart reopens them, then reads on); the journal's and kmsg's
// stay before the first line of their oldest open fold. A restart neither
// loses nor repeats (a re-published event carries the same id and the
// diagnoser drops it). This file composes the sources (agent_files.h, agent_journal.h,
// agent_kmsg.h) with the publisher (agent_publisher.h) and runs the rounds.
#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agent_files.h"
#include "agent_hosts.h"
#include "agent_journal.h"
#include "agent_kmsg.h"
#include "agent_positions.h"
#include "agent_publisher.h"
#include "agent_reading.h"
#include "agent_types.h"
#include "deploy_codec.h"
#include "event_signing.h"
#include "reflex/artifact.h"
#include "reflex/bus.h"
#include "reflex/deploy/agent.h"
#include "reflex/deploy/daemon.h"
#include "reflex/ingest.h"

namespace reflex::deploy {

namespace agent {

namespace {

// Without --redis: the bus is stdout, one JSON object a line.
class StdoutBus final : public bus::EventBus {
 public:
  bool publish_events(const std::vector<std::pair<std::string, bus::Record>>& batch,
                      std::string*) override {
    for (const auto& [shard, rec] : batch) {
      nlohmann::json j = {{"shard", shard}, {"id", rec.id}, {"event", rec.payload}};
      if (!rec.signer.empty()) {
        j["signer"] = rec.signer;
        j["sig"] = rec.sig;
      }
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

// The agent: its sources, what they share, and the order of a round.
struct Agent {
  Agent(const KnowledgeBase& kb, const Topology& topo, bus::EventBus& b, Metrics& m,
        const IngestOptions& iopts, const std::vector<std::string>& host_roots)
      : metrics(m),
        hosts(host_roots),
        ing(kb, topo, iopts),
        rd(topo, ing, m),
        out(b, m, positions),
        files(rd, positions, out),
        journal(rd, positions, out),
        kmsg(rd, positions, out) {
    rd.fopts.strict_transport = iopts.strict_transport;
    if (!hosts.empty()) rd.host_tree = &hosts;
    ing.set_sink([this](Event&& ev) { queue_event(std::move(ev)); });
  }

  Metrics& metrics;
  HostTree hosts;
  Ingestor ing;
  Reading rd;
  Positions positions;
  Publisher out;
  FileFollower files;
  JournalSource journal;
  KmsgSource kmsg;

  bool full() const { return out.full(); }

  void queue_event(Event&& ev) {
    // A fold's first sighting re-read after a restart was published then.
    if (ev.count == 1 && rd.replaying) return;
    metrics.add("reflex_agent_events_total", 1, Metrics::label("signature", ev.name));
    Pending p;
    p.shard = shard_of(ev, rd.topo);
    if (out.host_keys) p.rec.signer = ev.host;  // signed as its host (Publisher::sign)
    // A fold's first sighting goes out at once and its closing update later
    // (IngestOptions::announce_folds): the update carries the same event with
    // a larger count, so its id names the count (a redelivery of either is
    // still recognized; the diagnoser's engine merges the update).
    p.rec.id = event_id(ev, ev.count > 1 ? "count=" + std::to_string(ev.count) : std::string());
    p.rec.payload = encode_event(ev);
    p.queued = Clock::now();
    out.add_event(std::move(p));
  }

  // Folds sent by time (quiet input) or closed by another source's later
  // line: the files' checkpoints take their folds as they are now, and the
  // journal's and kmsg's positions held back by them move up to where those
  // were read. Without this a kill -9 re-reads lines whose fold was already
  // sent, folds them again with another count under the same id, and the
  // diagnoser keeps the first count.
  void advance_checkpoints() {
    files.advance();
    kmsg.advance();
    journal.advance();
  }

  // After finish(): every fold is out, every source is safe up to where it was read.
  void mark_all_read() {
    files.mark_read();
    kmsg.mark_read();
    journal.mark_read();
  }

  void write_state() {
    positions.write([this](const FileKey& k) { return files.is_open(k); }, files.open_count());
  }

  // Publishes what is pending (the spool first); true when nothing waits.
  bool publish() {
    out.send();
    // At once: a journal or kmsg position written late lets a restart
    // re-read lines whose storm folds may then be cut differently (same id,
    // other count); a file's saved folds are then older than its lines.
    // Before the gauges: what they show is durable.
    write_state();
    return out.report();
  }

  void refresh_stats() {
    IngestStats st = ing.stats_snapshot();
    metrics.set("reflex_agent_refused_lines_total",
                static_cast<double>(st.skipped_invalid_json + st.skipped_no_msg +
                                    rd.fstats.skipped_invalid_json + rd.fstats.skipped_no_msg),
                Metrics::label("reason", "not_an_envelope"));
    metrics.set("reflex_agent_refused_lines_total",
                static_cast<double>(st.truncated_long_lines + rd.fstats.truncated_long_lines),
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
  metrics.gauge("reflex_agent_hosts_followed", "Host directories followed (--follow-hosts).");
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
std::unique_ptr<bus::EventBus> make_agent_bus(const std::string& redis_url, size_t maxlen,
                                              int min_replicas, const std::string& password) {
  if (redis_url.empty()) return std::make_unique<StdoutBus>();
  bus::Options bopts;
  bopts.password = password;
  bopts.maxlen = maxlen;
  bopts.min_replicas = min_replicas;
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

// Wakes the loop when a followed file or directory changes (inotify on the
// directories: they report their files' appends, creations, renames and
// deletions, so rotation and truncation are seen as well), instead of
// waiting a whole --poll. Unavailable (no inotify, out of watches) or off:
// the loop sleeps --poll, as it always did.
class ChangeWatch {
 public:
  enum class Woke { timeout, change, names };  // names: files created, renamed, deleted

  explicit ChangeWatch(bool on) {
    if (!on) return;
    fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd_ < 0)
      log(Level::warn, std::string("inotify unavailable (") + std::strerror(errno) +
                           "): followed files are checked every --poll");
  }
  ~ChangeWatch() {
    if (fd_ >= 0) ::close(fd_);
  }
  ChangeWatch(const ChangeWatch&) = delete;
  ChangeWatch& operator=(const ChangeWatch&) = delete;

  // Each followed directory, and each followed file's directory, once it
  // exists (again after it was replaced). Cheap to repeat: the kernel returns
  // the watch a directory already has.
  void watch(const std::vector<std::string>& follows) {
    if (fd_ < 0) return;
    constexpr uint32_t kMask = IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_CREATE | IN_MOVED_TO |
                               IN_MOVED_FROM | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF;
    for (const std::string& p : follows) {
      struct stat st {};
      std::string dir = p;
      if (::stat(p.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        dir = std::filesystem::path(p).parent_path().string();
        if (dir.empty()) dir = ".";
      }
      int wd = ::inotify_add_watch(fd_, dir.c_str(), kMask);
      if (wd < 0 && !warned_[dir]) {
        warned_[dir] = true;  // once per directory: it may not exist yet
        log(Level::info, "inotify: " + dir + ": " + std::strerror(errno) +
                             " (checked every --poll until it can be watched)");
      }
    }
  }

  // Up to d, or until a change or a stop signal.
  Woke wait(std::chrono::milliseconds d) {
    if (fd_ < 0) {
      sleep_unless_stopped(d);
      return Woke::timeout;
    }
    auto end = Clock::now() + d;
    while (!g_daemon_stop) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now());
      if (left.count() <= 0) return Woke::timeout;
      // Slices of at most 50 ms: a stop signal is seen even where poll() restarts.
      struct pollfd pfd {
        fd_, POLLIN, 0
      };
      int r = ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 50)));
      if (r > 0) return drain();
    }
    return Woke::timeout;
  }

 private:
  Woke drain() {
    Woke w = Woke::change;
    alignas(struct inotify_event) char buf[16384];
    for (;;) {
      ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n <= 0) break;
      for (ssize_t at = 0; at < n;) {
        const auto* e = reinterpret_cast<const struct inotify_event*>(buf + at);
        if (e->mask & (IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_DELETE_SELF |
                       IN_MOVE_SELF | IN_IGNORED | IN_Q_OVERFLOW))
          w = Woke::names;
        at += static_cast<ssize_t>(sizeof(struct inotify_event) + e->len);
      }
    }
    return w;
  }

  int fd_ = -1;
  std::map<std::string, bool> warned_;
};

// Reads and publishes until stopped (or, with once, until everything is read
// and published).
void agent_loop(Agent& a, Metrics& metrics, Health& health, const std::vector<std::string>& follows,
                bool use_stdin, bool once, std::chrono::milliseconds poll_ms, bool inotify) {
  ChangeWatch changes(inotify && (!follows.empty() || !a.hosts.empty()));
  std::vector<std::string> all = follows;  // with the host directories of --follow-hosts
  bool rescan = false;
  StdinEnvelopes in;
  in.open = use_stdin;
  if (use_stdin) ::fcntl(0, F_SETFL, ::fcntl(0, F_GETFL) | O_NONBLOCK);
  auto last_discover = Clock::now() - std::chrono::hours(1);
  bool was_full = false;
  while (!g_daemon_stop) {
    health.beat();
    if (rescan || Clock::now() - last_discover > std::chrono::seconds(1)) {
      if (!a.hosts.empty()) {
        all = follows;
        std::vector<std::string> dirs = a.hosts.host_dirs();
        all.insert(all.end(), dirs.begin(), dirs.end());
        changes.watch(a.hosts.roots());  // a new host directory wakes the loop
        metrics.set("reflex_agent_hosts_followed", static_cast<double>(a.hosts.hosts()));
      }
      a.files.discover(all);
      changes.watch(all);
      last_discover = Clock::now();
      rescan = false;
    }
    bool any = false;
    if (!a.full()) any |= a.files.read_files();
    if (!a.full()) any |= a.journal.read();
    if (!a.full()) any |= a.kmsg.read();
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
    a.out.probe();
    health.set_ready(a.out.bus_ok, a.out.bus_why);
    a.refresh_stats();
    if (once && !any && !in.open && !a.journal.running() && drained) {
      a.ing.finish();
      a.mark_all_read();
      if (a.out.pending_events == 0 && a.publish()) break;
    }
    if (!any) rescan = changes.wait(poll_ms) == ChangeWatch::Woke::names;
  }
}

// Stop: send the open folds, then give the bus a bounded time to take them.
void stop_agent(Agent& a) {
  a.journal.stop();
  a.ing.finish();
  a.mark_all_read();
  auto deadline = Clock::now() + std::chrono::seconds(5);
  g_daemon_stop = 0;
  while (!a.publish() && Clock::now() < deadline && !g_daemon_stop)
    sleep_unless_stopped(std::chrono::milliseconds(50));
  a.out.spill(true);  // what the bus did not take waits in the spool, positions past it
  a.write_state();
  a.out.spool_metrics();
  log(Level::info, "stopped: " + std::to_string(a.out.published) + " event(s) published, " +
                       std::to_string(a.out.spool ? a.out.spool->events() : 0) +
                       " in the spool (sent at restart), " + std::to_string(a.out.pending_events) +
                       " not published (their lines are re-read at restart)");
}

// A log server's agent keeps a descriptor per followed file (two files on
// each of 1,250 hosts are 2,500): the soft limit goes up to the hard one, as
// the Go runtime does at every start.
void raise_open_files() {
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max) return;
  rl.rlim_cur = rl.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &rl) != 0)
    log(Level::warn, std::string("cannot raise the open-files limit: ") + std::strerror(errno));
}

}  // namespace

}  // namespace agent

using agent::Agent;
using agent::agent_loop;
using agent::declare_agent_metrics;
using agent::HostKeys;
using agent::make_agent_bus;
using agent::raise_open_files;
using agent::stop_agent;

int run_agent(const AgentConfig& cfg, const KnowledgeBase& kb, const Topology& topo) {
  std::string err, password, key;
  if (!redis_password(cfg.redis_url, cfg.redis_password_file, &password, &err)) {
    log(Level::error, "--redis-password-file: " + err);
    return 2;
  }
  if (!cfg.signing_key_file.empty()) {
    auto k = read_key_file(cfg.signing_key_file, &err);
    if (!k) {
      log(Level::error, "--signing-key: " + err);
      return 2;
    }
    key = *k;
  }
  std::unique_ptr<bus::EventBus> bus =
      make_agent_bus(cfg.redis_url, cfg.maxlen, cfg.redis_min_replicas, password);
  if (!bus) return 2;
  Metrics metrics;
  declare_agent_metrics(metrics);
  metrics.standard(engine_version());
  Health health;
  MetricsServer server;
  if (!cfg.metrics.empty() && !server.start(cfg.metrics, &metrics, &health, &err)) {
    log(Level::error, err);
    return 2;
  }

  IngestOptions iopts;
  iopts.strict_transport = cfg.strict_transport;
  iopts.announce_folds = true;  // a dedup window never delays the first sighting
  Agent a(kb, topo, *bus, metrics, iopts, cfg.follow_hosts);
  a.rd.host = cfg.host;
  a.rd.sources.kernel_capture = cfg.kernel_captures;
  a.rd.sources.collector = cfg.collectors;
  a.rd.year = cfg.year;
  a.rd.boot_time = cfg.boot_time;
  a.positions.state_path = cfg.state_path;
  a.out.buffer_max = cfg.buffer_max;
  a.out.batch = cfg.batch;
  a.out.signer = cfg.host;
  a.out.signing_key = key;
  std::unique_ptr<HostKeys> host_keys;
  if (!cfg.signing_keys_dir.empty()) {
    struct stat st {};
    if (::stat(cfg.signing_keys_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      log(Level::error, "--signing-keys: " + cfg.signing_keys_dir + ": not a directory");
      return 2;
    }
    host_keys = std::make_unique<HostKeys>(cfg.signing_keys_dir);
    a.out.host_keys = host_keys.get();
  }
  if (!cfg.follow_hosts.empty()) raise_open_files();
  if (!a.positions.load(&err)) {
    log(Level::error, err);
    return 2;
  }
  if (!a.out.open_spool(cfg.spool_dir, cfg.state_path, cfg.spool_max)) return 2;
  install_daemon_signals();
  log(Level::info, "agent for " + cfg.host +
                       (cfg.follow_hosts.empty() ? "" : " and the host directories it follows") +
                       " publishing to " + bus->describe());
  if (cfg.use_journal && !a.journal.start(cfg.journal_command, &err)) {
    log(Level::error, "--journal: " + err);
    return 2;
  }
  if (!cfg.kmsg_path.empty() && !a.kmsg.start(cfg.kmsg_path, &err)) {
    log(Level::error, "--kmsg: " + err);
    return 2;
  }

  agent_loop(a, metrics, health, cfg.follows, cfg.use_stdin, cfg.once, cfg.poll, cfg.inotify);
  stop_agent(a);
  return 0;
}

}  // namespace reflex::deploy
