// `reflex watch [--kb KB] --topology FILE [--db FILE [--commit-interval DUR]]
//  [--settle DUR] [--skew DUR]`
// Streaming (interfaces.md §4, §7): event envelopes on stdin, one diagnosis per line
// (JSONL) on stdout for every incident revision. EOF and SIGTERM alike:
// diagnose every open incident, print, exit 0. SIGHUP reloads the topology and
// the knowledge base; a failed reload keeps the old ones and says why.
// --db: group commit (include/reflex/store.h) — every event and open storm
// reaches the file within --commit-interval of its arrival, so a kill -9
// loses at most that much.
// --redis URL: a diagnoser of the deployment instead (run_watch_redis below
// parses its options; reflex/deploy/diagnoser.h runs it).
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include "cli_common.h"
#include "commands.h"
#include "daemon_options.h"
#include "reflex/compiler.h"
#include "reflex/deploy/daemon.h"
#include "reflex/deploy/diagnoser.h"
#include "reflex/engine.h"
#include "reflex/store.h"
#include "reflex/topology.h"
#include "reflex/values.h"

namespace reflex::cli {

namespace {

volatile sig_atomic_t g_stop = 0;
volatile sig_atomic_t g_reload = 0;

void on_signal(int sig) {
  if (sig == SIGHUP)
    g_reload = 1;
  else
    g_stop = 1;
}

void say(const std::string& msg) {
  std::fprintf(stderr, "reflex watch: %s\n", msg.c_str());
}

constexpr size_t kMaxLine = 8u << 20;  // longer envelope lines are dropped (counted)

struct Loaded {
  std::shared_ptr<const KnowledgeBase> kb;
  std::shared_ptr<const Topology> topo;
};

// Loads both or neither; *err says why.
std::optional<Loaded> load(const std::string& kb_path, const std::string& topo_path,
                           std::string* err) {
  auto kbv = load_kb(kb_path, err, KbParts{.tests = false, .examples = false});
  if (!kbv) return std::nullopt;
  if (!validate_kb_for_engine(*kbv, err)) return std::nullopt;
  TopologyError terr;
  auto t = Topology::load_file(topo_path, &terr);
  if (!t) {
    *err = terr.str();
    return std::nullopt;
  }
  Loaded l;
  l.kb = std::make_shared<const KnowledgeBase>(std::move(*kbv));
  l.topo = std::move(t);
  return l;
}

void install_watch_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: poll() returns on a signal
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
}

// Envelopes on stdin into the engine, diagnoses out as JSONL, events and
// diagnoses into the store when there is one.
class StdinWatch {
 public:
  StdinWatch(Engine& eng, SqliteStore* store, std::string kb_path, std::string topo_path)
      : eng_(eng), store_(store), kb_path_(std::move(kb_path)), topo_path_(std::move(topo_path)) {
    eng_.set_callback([this](const Diagnosis& d) { on_diagnosis(d); });
    if (store_)
      eng_.set_event_tap([this](const Event& ev) {
        std::string e2;
        if (!store_->append(ev, &e2)) db_error(e2);
      });
  }

  // Until end of input or a stop signal; then the open folds are flushed and
  // everything committed.
  void run() {
    char chunk[1 << 16];
    while (!g_stop) {
      if (g_reload) reload();
      int pr = poll_stdin();
      if (pr < 0) {
        if (errno == EINTR) continue;
        say(std::string("poll: ") + std::strerror(errno));
        break;
      }
      if (pr == 0) {
        eng_.tick();
        sync_store(false);
        check_bad(false);
        continue;
      }
      ssize_t n = ::read(0, chunk, sizeof chunk);
      if (n < 0) {
        if (errno == EINTR) continue;
        say(std::string("read: ") + std::strerror(errno));
        break;
      }
      if (n == 0) break;  // end of input
      feed(chunk, static_cast<size_t>(n));
      sync_store(false);
      check_bad(false);
    }
    if (!buf_.empty() && !discarding_) eng_.feed_envelope(buf_);
    eng_.flush();
    check_bad(true);
    sync_store(true);  // after flush() no storm is open: this writer's `storms` rows go
  }

 private:
  // A failing database (disk full, locked) is retried at every sync: say so
  // at most every 10 s, not at every chunk.
  void db_error(const std::string& e) {
    auto now = std::chrono::steady_clock::now();
    if (now - last_db_error_ < std::chrono::seconds(10)) return;
    last_db_error_ = now;
    say("--db: " + e);
  }

  // Commits when due (or now): under the engine's lock, so that the events the
  // tap staged and the storms still open are of the same instant. Never called
  // from the tap (the lock is held there).
  void sync_store(bool now) {
    if (!store_) return;
    eng_.with_open_storms([&](const OpenStorms& os) {
      std::string e2;
      if (!(now ? store_->commit(&e2, &os) : store_->sync(&e2, &os))) db_error(e2);
    });
  }

  void on_diagnosis(const Diagnosis& d) {
    std::string line = diagnosis_to_json(d, -1);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fflush(stdout);
    if (!store_) return;
    StoredDiagnosis sd;
    sd.incident = d.incident;
    sd.revision = d.revision;
    sd.created = std::chrono::duration_cast<std::chrono::microseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
    sd.json = diagnosis_to_json(d, -1);
    std::string e2;
    if (!store_->put_diagnosis(sd, &e2)) db_error(e2);
    sync_store(false);  // a staged diagnosis is due at once
  }

  // Rate-limited warning about skipped envelope lines (the counters are ingest's).
  void check_bad(bool force) {
    auto st = eng_.stats().ingest;
    uint64_t bad = st.skipped_invalid_json + st.skipped_no_msg + too_long_;
    auto now = std::chrono::steady_clock::now();
    if (bad > warned_bad_ && (force || now - last_warn_ > std::chrono::seconds(10))) {
      say("skipped " + std::to_string(bad - warned_bad_) +
          " bad envelope line(s) (not JSON, no msg, or too long); " + std::to_string(bad) +
          " in total");
      warned_bad_ = bad;
      last_warn_ = now;
    }
  }

  // SIGHUP: both files again, or the old ones kept.
  void reload() {
    g_reload = 0;
    std::string rerr;
    auto fresh = load(kb_path_, topo_path_, &rerr);
    if (!fresh) {
      say("reload failed, keeping the old knowledge base and topology: " + rerr);
    } else if (!eng_.reload(fresh->kb, fresh->topo, &rerr)) {
      say("reload failed, keeping the old knowledge base and topology: " + rerr);
    } else {
      say("reloaded " + kb_path_ + " and " + topo_path_);
    }
  }

  // Waits for stdin, at most until the store's next commit is due.
  int poll_stdin() {
    struct pollfd pfd {
      0, POLLIN, 0
    };
    int timeout_ms = 1000;
    if (store_)
      if (auto due = store_->due_in())
        // 10 ms floor: a commit that keeps failing is not retried in a busy loop.
        timeout_ms = std::clamp(static_cast<int>(std::ceil(*due * 1000)), 10, timeout_ms);
    return ::poll(&pfd, 1, timeout_ms);
  }

  // Complete lines go to the engine; a line longer than kMaxLine is dropped
  // (counted) up to its end.
  void feed(const char* chunk, size_t n) {
    size_t start = 0;
    for (size_t i = 0; i < n; ++i) {
      if (chunk[i] != '\n') continue;
      if (!discarding_) {
        buf_.append(chunk + start, i - start);
        eng_.feed_envelope(buf_);
      }
      discarding_ = false;
      buf_.clear();
      start = i + 1;
    }
    if (!discarding_) buf_.append(chunk + start, n - start);
    if (buf_.size() > kMaxLine) {
      ++too_long_;
      buf_.clear();
      discarding_ = true;
    }
  }

  Engine& eng_;
  SqliteStore* store_;
  const std::string kb_path_, topo_path_;
  std::chrono::steady_clock::time_point last_db_error_ =
      std::chrono::steady_clock::now() - std::chrono::hours(1);
  uint64_t warned_bad_ = 0, too_long_ = 0;
  std::chrono::steady_clock::time_point last_warn_ =
      std::chrono::steady_clock::now() - std::chrono::hours(1);
  std::string buf_;
  bool discarding_ = false;
};

// `reflex watch --redis URL`: a diagnoser of the deployment. The options are
// parsed and the knowledge base and topology loaded here; owning shards and
// diagnosing them is the deployment library's (reflex/deploy/diagnoser.h).
int run_watch_redis(int argc, char** argv) {
  using deploy::Level;
  using deploy::log;
  CLI::App app{"Diagnose the shards of a Redis Streams deployment, publish diagnoses",
               "reflex watch"};
  std::string kb_path, topo_path, redis_url, settle, skew, owner,
      lease_ttl = "6s", alert_url, resend = "60s", alert_ttl = "30m", retention = "24h";
  bool strict = false;
  size_t read_batch = 2000;
  size_t max_events = EngineOptions{}.max_events;
  deploy::DaemonOptions dopts;
  add_kb_option(app, &kb_path);
  app.add_option("--topology", topo_path, "topology.json")->required();
  app.add_option("--redis", redis_url,
                 "redis://[user[:password]@]host[:port][/db] or "
                 "redis+sentinel://[user[:password]@]host[:port][,...]/NAME")
      ->required();
  std::string password_file, verify_key;
  add_redis_password_option(app, &password_file);
  app.add_option("--verify-key", verify_key,
                 "the cluster's master key (`reflex key new`): only entries signed by the host "
                 "they speak for are taken; the rest are refused and counted");
  app.add_option("--settle", settle, "late-evidence window after a symptom (default 60s)");
  app.add_option("--skew", skew, "tolerance between two different clocks (default 2s)");
  app.add_option("--owner", owner, "this diagnoser's name in leases (default host-pid)");
  app.add_option("--lease-ttl", lease_ttl, "shard lease lifetime; renewed at a third (default 6s)");
  app.add_option("--alertmanager", alert_url,
                 "send root causes to Alertmanager at http://HOST:PORT");
  app.add_option("--alert-resend", resend, "re-send active alerts this often (default 60s)");
  app.add_option("--alert-ttl", alert_ttl,
                 "resolve an incident's alerts after this long without a new answer (default 30m)");
  app.add_option("--read-batch", read_batch, "stream entries per read (default 2000)");
  app.add_option("--max-events", max_events,
                 "events each shard's engine holds; beyond it the oldest half that no open "
                 "incident needs is dropped (default 4000000; ~0.4 KiB an event)");
  app.add_option("--retention", retention,
                 "drop stream entries older than this from the owned shards (XTRIM MINID ~; "
                 "at least 1m; default 24h, 0s = none, the agents' --maxlen only)");
  add_strict_transport_flag(app, &strict);
  add_daemon_options(app, &dopts);
  if (auto rc = parse_or_exit(app, argc, argv, "reflex watch")) return *rc;
  std::string err;
  if (!deploy::init_logging("reflex-watch", dopts, &err)) {
    std::fprintf(stderr, "reflex watch: %s\n", err.c_str());
    return 2;
  }
  EngineOptions opts;
  opts.ingest.strict_transport = strict;
  opts.ingest.announce_folds = true;  // the agents announce folds: merge their updates
  double ttl_s = 0, resend_s = 0, alert_ttl_s = 0, retention_s = 0;
  for (auto [text, out, name] : {std::tuple{&settle, &opts.settle_s, "--settle"},
                                 std::tuple{&skew, &opts.clock_skew_s, "--skew"},
                                 std::tuple{&lease_ttl, &ttl_s, "--lease-ttl"},
                                 std::tuple{&resend, &resend_s, "--alert-resend"},
                                 std::tuple{&alert_ttl, &alert_ttl_s, "--alert-ttl"},
                                 std::tuple{&retention, &retention_s, "--retention"}}) {
    if (text->empty()) continue;
    auto d = parse_duration_s(*text);
    if (!d || *d < 0) {
      log(Level::error, std::string("bad ") + name + " '" + *text + "' (expected e.g. 500ms, 30s)");
      return 2;
    }
    *out = *d;
  }
  if (retention_s > 0 && retention_s < 60) {
    log(Level::error, "--retention below 1m would drop events an open incident still needs");
    return 2;
  }
  if (ttl_s < 0.3 || read_batch == 0 || max_events < 1000) {
    log(Level::error,
        "--lease-ttl must be at least 300ms, --read-batch positive and --max-events at least 1000");
    return 2;
  }
  opts.max_events = max_events;
  if (owner.empty()) owner = deploy::default_owner_name();

  if (!resolve_kb(&kb_path, "reflex watch")) return 2;
  auto kbv = load_kb(kb_path, &err, KbParts{.tests = false, .examples = false});
  if (!kbv || !validate_kb_for_engine(*kbv, &err)) {
    std::fprintf(stderr, "%s%s", err.c_str(), err.empty() || err.back() != '\n' ? "\n" : "");
    log(Level::error, "cannot start: bad --kb");
    return 2;
  }
  auto kb = std::make_shared<const KnowledgeBase>(std::move(*kbv));
  TopologyError terr;
  std::shared_ptr<const Topology> topo = Topology::load_file(topo_path, &terr);
  if (!topo) {
    log(Level::error, terr.str());
    return 2;
  }
  deploy::DiagnoserConfig dc;
  dc.redis_url = redis_url;
  dc.redis_password_file = password_file;
  dc.verify_key_file = verify_key;
  dc.owner = owner;
  dc.engine = opts;
  dc.ttl_ms = static_cast<int>(ttl_s * 1000);
  dc.read_batch = read_batch;
  dc.retention_ms = static_cast<int64_t>(retention_s * 1000);
  dc.alertmanager = alert_url;
  dc.alert_resend_s = resend_s;
  dc.alert_ttl_s = alert_ttl_s;
  dc.metrics = dopts.metrics;
  return deploy::run_diagnoser(dc, kb, topo);
}

}  // namespace

int run_watch(int argc, char** argv) {
  // --redis: a diagnoser of the deployment (run_watch_redis); stdin mode below is unchanged.
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--redis") == 0 || std::strncmp(argv[i], "--redis=", 8) == 0)
      return run_watch_redis(argc, argv);
  CLI::App app{"Read event envelopes on stdin, print diagnoses as JSONL", "reflex watch"};
  std::string kb_path, topo_path, db_path, settle, skew, commit_interval;
  bool strict = false;
  size_t max_events = EngineOptions{}.max_events;
  add_kb_option(app, &kb_path);
  app.add_option("--topology", topo_path, "topology.json")->required();
  app.add_option("--max-events", max_events,
                 "events the engine holds; beyond it the oldest half that no open incident "
                 "needs is dropped (default 4000000; ~0.4 KiB an event)");
  app.add_option("--db", db_path, "store events and diagnoses in this SQLite database");
  app.add_option("--commit-interval", commit_interval,
                 "--db: commit at least this often while input arrives (default 1s)");
  app.add_option("--settle", settle, "late-evidence window after a symptom (default 60s)");
  app.add_option("--skew", skew, "tolerance between two different clocks (default 2s)");
  add_strict_transport_flag(app, &strict);
  std::string redis_help;  // listed for --help only: --redis is dispatched above
  app.add_option("--redis", redis_help,
                 "diagnose the shards of a Redis Streams deployment instead of stdin "
                 "(see 'reflex watch --redis URL --help')");
  if (auto rc = parse_or_exit(app, argc, argv, "reflex watch")) return *rc;
  EngineOptions opts;
  opts.ingest.strict_transport = strict;
  // A dedup window never delays a first sighting; a --db store keeps folds
  // its own way (open storms committed as they run), so it keeps them whole.
  opts.ingest.announce_folds = db_path.empty();
  if (max_events < 1000) {
    say("--max-events must be at least 1000");
    return 2;
  }
  opts.max_events = max_events;
  StoreOptions sopts;
  // The caller commits (sync_store below), under the engine's lock with its open storms.
  sopts.commit_in_append = false;
  for (auto [text, out, name] :
       {std::tuple{&settle, &opts.settle_s, "--settle"},
        std::tuple{&skew, &opts.clock_skew_s, "--skew"},
        std::tuple{&commit_interval, &sopts.commit_interval_s, "--commit-interval"}}) {
    if (text->empty()) continue;
    auto d = parse_duration_s(*text);
    if (!d || *d < 0) {
      say(std::string("bad ") + name + " '" + *text + "' (expected e.g. 500ms, 30s, 10m)");
      return 2;
    }
    *out = *d;
  }

  if (!resolve_kb(&kb_path, "reflex watch")) return 2;
  std::string err;
  auto loaded = load(kb_path, topo_path, &err);
  if (!loaded) {
    std::fprintf(stderr, "%s%s", err.c_str(), err.empty() || err.back() != '\n' ? "\n" : "");
    say("cannot start: bad --kb or --topology");
    return 2;
  }
  for (const std::string& n : loaded->topo->notes()) say("note: topology: " + n);

  std::unique_ptr<SqliteStore> store;
  if (!db_path.empty()) {
    store = SqliteStore::open(db_path, &err, sopts);
    if (!store) {
      say(db_path + ": " + err);
      return 2;
    }
  }

  Engine eng(loaded->kb, loaded->topo, opts);
  StdinWatch watch(eng, store.get(), kb_path, topo_path);
  install_watch_signals();
  watch.run();
  return 0;
}

}  // namespace reflex::cli
